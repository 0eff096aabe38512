#!/bin/bash
# The parity suite's two modes give the same verdicts: runs tests/cuda/parity.py
# with the device replaced by the cpu (FTPARITY_DEVICE=cpu), once in batch mode
# (one `ftrun test` over test folders) and once in run mode (`ftrun run --check`
# per case), and compares the "ok"/"not ok" line of every case. Prints TAP.
#   FTRUN, PYTHON    as for tests/run.sh
#   FTPARITY_ONLY    the cases to compare (default: every case)
# Also prints each mode's time and time per case.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in batch run; do
    start=$(date +%s.%N)
    FTPARITY_DEVICE=cpu FTPARITY_MODE=$mode "$PYTHON" "$here"/parity.py > "$tmp/$mode.tap"
    echo "$?" > "$tmp/$mode.rc"
    end=$(date +%s.%N)
    n=$(grep -Ec '^(not )?ok ' "$tmp/$mode.tap")
    awk -v m="$mode" -v n="$n" -v s="$start" -v e="$end" \
        'BEGIN { printf "# %s mode: %d cases in %.1f s (%.1f ms a case)\n", m, n, e - s, n ? 1e3 * (e - s) / n : 0 }'
    grep '^# batch' "$tmp/$mode.tap" | sed 's/^/# /'
    sed -nE 's/^(ok|not ok) [0-9]+ - (.*)$/\1 \2/p' "$tmp/$mode.tap" > "$tmp/$mode.verdicts"
done
batched=$(sed -nE 's/^# .* \(batch mode, ([0-9]+) cases batched.*/\1/p' "$tmp/batch.tap")
n=$(wc -l < "$tmp/run.verdicts")
if [ "$n" -eq 0 ]; then
    echo "not ok 1 - parity suite on the cpu: no case ran"; sed 's/^/# /' "$tmp/run.tap" | tail -5; exit 1
elif [ "${batched:-0}" -eq 0 ]; then
    echo "not ok 1 - parity suite on the cpu: batch mode batched no case"; tail -5 "$tmp/batch.tap" | sed 's/^/# /'; exit 1
elif ! diff "$tmp/run.verdicts" "$tmp/batch.verdicts" > "$tmp/diff"; then
    echo "not ok 1 - parity suite on the cpu: batch and run modes differ on $(grep -c '^<' "$tmp/diff") of $n cases"
    sed 's/^/# /' "$tmp/diff" | head -40
    exit 1
elif [ "$(cat "$tmp/run.rc")" != "$(cat "$tmp/batch.rc")" ]; then
    echo "not ok 1 - parity suite on the cpu: exit status $(cat "$tmp/run.rc") in run mode, $(cat "$tmp/batch.rc") in batch mode"; exit 1
fi
echo "ok 1 - parity suite on the cpu: batch mode ($batched cases batched) and run mode agree on all $n verdicts ($(grep -c '^not ok' "$tmp/run.verdicts") not ok)"
