#!/bin/bash
# The two modes of a suite give the same verdicts, on the cpu:
#   batch_same.sh [parity]   tests/cuda/parity.py with the device replaced by the
#                            cpu (FTPARITY_DEVICE=cpu): batch mode (one `ftrun test`
#                            over test folders) and run mode (`ftrun run --check`
#                            per case); FTPARITY_ONLY narrows it
#   batch_same.sh numeric    tests/numeric/test_ops.py on the cpu (FTNUM_ARGS, default
#                            "-d cpu"): batch mode (one `ftrun test --save-outputs`,
#                            the harness's checks on the saved outputs) and run mode
#                            (`ftrun run` per case); FTNUM_ONLY narrows it
# Runs the suite once in each mode, compares the "ok"/"not ok" line of every case
# and the exit statuses. Prints TAP, and each mode's time and time per case.
#   FTRUN, PYTHON    as for tests/run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
case ${1:-parity} in
    parity) suite="parity suite" script=$here/parity.py mode_var=FTPARITY_MODE; export FTPARITY_DEVICE=cpu ;;
    numeric) suite="numeric tier" script=$here/../numeric/test_ops.py mode_var=FTNUM_MODE
             export FTNUM_ARGS=${FTNUM_ARGS:--d cpu} ;;
    *) echo "usage: batch_same.sh [parity|numeric]" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in batch run; do
    start=$(date +%s.%N)
    env "$mode_var=$mode" "$PYTHON" "$script" > "$tmp/$mode.tap"
    echo "$?" > "$tmp/$mode.rc"
    end=$(date +%s.%N)
    n=$(grep -Ec '^(not )?ok ' "$tmp/$mode.tap")
    awk -v m="$mode" -v n="$n" -v s="$start" -v e="$end" \
        'BEGIN { printf "# %s mode: %d cases in %.1f s (%.1f ms a case)\n", m, n, e - s, n ? 1e3 * (e - s) / n : 0 }'
    grep '^# batch' "$tmp/$mode.tap" | sed 's/^/# /'
    sed -nE 's/^(ok|not ok) [0-9]+ - (.*)$/\1 \2/p' "$tmp/$mode.tap" > "$tmp/$mode.verdicts"
done
# parity: "# ... (batch mode, N cases batched; ...", numeric: "# batch mode: N cases batched ..."
batched=$(sed -nE 's/^# .* \(batch mode, ([0-9]+) cases batched.*/\1/p; s/^# batch mode: ([0-9]+) cases batched.*/\1/p' "$tmp/batch.tap")
n=$(wc -l < "$tmp/run.verdicts")
if [ "$n" -eq 0 ]; then
    echo "not ok 1 - $suite on the cpu: no case ran"; sed 's/^/# /' "$tmp/run.tap" | tail -5; exit 1
elif [ "${batched:-0}" -eq 0 ]; then
    echo "not ok 1 - $suite on the cpu: batch mode batched no case"; tail -5 "$tmp/batch.tap" | sed 's/^/# /'; exit 1
elif ! diff "$tmp/run.verdicts" "$tmp/batch.verdicts" > "$tmp/diff"; then
    echo "not ok 1 - $suite on the cpu: batch and run modes differ on $(grep -c '^<' "$tmp/diff") of $n cases"
    sed 's/^/# /' "$tmp/diff" | head -40
    exit 1
elif [ "$(cat "$tmp/run.rc")" != "$(cat "$tmp/batch.rc")" ]; then
    echo "not ok 1 - $suite on the cpu: exit status $(cat "$tmp/run.rc") in run mode, $(cat "$tmp/batch.rc") in batch mode"; exit 1
fi
echo "ok 1 - $suite on the cpu: batch mode ($batched cases batched) and run mode agree on all $n verdicts ($(grep -c '^not ok' "$tmp/run.verdicts") not ok)"
