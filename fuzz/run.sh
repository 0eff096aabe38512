#!/bin/bash
# Runs the libFuzzer harnesses built by `make fuzz-build` (see fuzz/README.md).
#   fuzz/run.sh [HARNESS...]            fuzz each for FUZZ_SECONDS (default 60), one after another
#   fuzz/run.sh --regress [HARNESS...]  run every file of fuzz/regress/H and fuzz/corpus/H once
# Harnesses: json ftg npy npz onnx pb image run (default: all). FUZZ_BUILD: where the binaries are
# (default build/fuzz). Each run works in FUZZ_BUILD/work/H: corpus/ (a copy of
# the seeds plus what the fuzzer adds; the committed corpora are never written)
# and artifacts/ (crash-*, leak-*, timeout-*, oom-* inputs). Exits 1 if any
# harness found something.
set -u
shopt -s nullglob
cd "$(dirname "$0")/.."
FUZZ_BUILD=${FUZZ_BUILD:-build/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
regress=0
if [ "${1:-}" = --regress ]; then
    regress=1
    shift
fi
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(json ftg npy npz onnx pb image run)

max_len() {
    case $1 in
        json | ftg | onnx | run) echo 16384 ;;
        npy | pb) echo 4096 ;;
        image) echo 8192 ;;
        npz) echo 8192 ;;
        *) echo 4096 ;;
    esac
}

# The committed inputs of harness H: its regressions and seeds; fuzz_run, which
# reads every graph format, also takes the graph harnesses' regressions.
inputs() {
    local extra=()
    [ "$1" = run ] && extra=(fuzz/regress/json/* fuzz/regress/ftg/* fuzz/regress/onnx/*)
    local f
    for f in fuzz/regress/"$1"/* "${extra[@]}" fuzz/corpus/"$1"/*; do
        echo "$f"
    done
}

# One thread per harness: the fuzzer gains nothing from OpenMP and the
# machine may be shared.
export OMP_NUM_THREADS=1
failed=()
for h in "${names[@]}"; do
    bin=$FUZZ_BUILD/fuzz_$h
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin is missing (run make fuzz-build)" >&2
        exit 2
    fi
    if [ $regress = 1 ]; then
        mapfile -t files < <(inputs "$h")
        if [ ${#files[@]} -eq 0 ]; then continue; fi
        echo "fuzz: $h: replaying ${#files[@]} files"
        if ! "$bin" -timeout=10 "${files[@]}" >"$FUZZ_BUILD/regress-$h.log" 2>&1; then
            tail -40 "$FUZZ_BUILD/regress-$h.log" >&2
            failed+=("$h")
        fi
        continue
    fi
    work=$FUZZ_BUILD/work/$h
    mkdir -p "$work/corpus" "$work/artifacts"
    inputs "$h" | while read -r f; do
        cp -n "$f" "$work/corpus/"
    done
    dict=()
    case $h in json | ftg | run) dict=(-dict=fuzz/json.dict) ;; esac
    echo "fuzz: $h for ${FUZZ_SECONDS}s (log in $work/log)"
    "$bin" "$work/corpus" "${dict[@]}" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 -entropic_scale_per_exec_time=1 \
        -max_len="$(max_len "$h")" -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$work/log" | tail -1)
    echo "fuzz: $h: exit $rc, ${execs:-?} executions, ${cov:-no coverage line}"
    if [ $rc -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|Test unit written' "$work/log" | head -5 >&2
        failed+=("$h")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in: ${failed[*]} (inputs in $FUZZ_BUILD/work/*/artifacts/)" >&2
    exit 1
fi
