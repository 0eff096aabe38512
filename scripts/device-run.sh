#!/bin/bash
# The CUDA checks of ftrun on a GPU machine, run from the unpacked device
# bundle (scripts/device-bundle.sh puts this file there as run.sh):
#
#   ftrun-device/run.sh LOGDIR [STEP...]
#
# Steps (default: all but bench-full and sanitize-full, in this order):
#   env        the machine: GPU, driver, toolkit, Python, where ftrun's libraries come from
#   numeric    tests/numeric on cuda:0 against NumPy, batched: one `ftrun test -d cuda -j N` over
#              a test folder per case (FTNUM_MODE=run: the old process per case)
#   parity     tests/cuda/parity.py: every op x dtype x shape, cuda:0 against the cpu backend,
#              batched: one `ftrun test -d cuda:0 -j N` over a test folder per case
#              (FTPARITY_MODE=run: the old process per case)
#   parity-sample  the first parity case of every op
#   onnx       ONNX's backend test data with -d cuda:0 (tests/onnx/testdata.py; progress on stderr)
#   check      --check and --check-nodes on every example and bench graph; --cuda-graph
#              gives the same outputs as without it
#   sanitize   compute-sanitizer memcheck (leak check) and racecheck on the first parity
#              case of every op family (sanitize-full: every parity case)
#   bench      bench/cuda.py --quick (bench-full: the full run); RESULTS-cuda.md into LOGDIR
# Each step writes LOGDIR/STEP.log and one line to LOGDIR/summary.txt and to stdout;
# STEP_TIMEOUT (seconds, default 540) bounds each step, STEP_TIMEOUT_<step> one step
# (e.g. STEP_TIMEOUT_parity=200). Environment passed on:
# FTPARITY_ONLY, FTPARITY_BIG, FTPARITY_MODE, FTNUM_ONLY, FTNUM_MODE, FTNUM_JOBS, FTNUM_TEST_JOBS,
# FTPARITY_JOBS, FTPARITY_TEST_JOBS, FTRUN_TEST_JOBS; BENCH_ARGS (more options of
# bench/cuda.py, e.g. "--only bandwidth"). Exit status 1 when a step failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:?usage: run.sh LOGDIR [STEP...]}
shift
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
[ $# -gt 0 ] || set -- env numeric parity onnx check sanitize bench
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export logs FTRUN=$here/build/ftrun PYTHON=${PYTHON:-python3} PYTHONUNBUFFERED=1
export ONNX_TESTDATA=$here/onnx-testdata
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDA_HOME PATH=$PATH:$CUDA_HOME/bin
# A case of run mode (numeric and parity: the cases they cannot batch) is a process
# that spends most of its time starting CUDA: one per core. `ftrun test` (the batch
# modes, onnx) runs its cases in worker processes that start CUDA once each: 8
# workers (8 CUDA contexts) keep the GPU busy while each loads its next case.
jobs=$(nproc); [ "$jobs" -lt 2 ] && jobs=2; [ "$jobs" -gt 16 ] && jobs=16
export FTNUM_JOBS=${FTNUM_JOBS:-$jobs} FTPARITY_JOBS=${FTPARITY_JOBS:-$jobs}
export FTNUM_TEST_JOBS=${FTNUM_TEST_JOBS:-8} FTPARITY_TEST_JOBS=${FTPARITY_TEST_JOBS:-8} FTRUN_TEST_JOBS=${FTRUN_TEST_JOBS:-8}
cd "$here"
status=0

step_env() {
    nvidia-smi || true
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
    uname -a; nproc; free -g | head -2
    "$CUDA_HOME/bin/nvcc" --version | tail -2
    "$PYTHON" -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))' || true
    command -v compute-sanitizer || ls "$CUDA_HOME/bin/compute-sanitizer" || true
    ldd "$FTRUN"; ldd build/libftrun-cuda.so
    "$FTRUN" --version && "$FTRUN" devices && "$FTRUN" devices | grep -q '^cuda:0' || return 1
    # Start-up cost of one process (what every test case pays), alone and 8 at once.
    local g=/tmp/ftrun-startup.json i t0
    now() { date +%s%N; }
    secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
    echo '{"ftrun":1,"tensors":{"x":{"dtype":"f32","shape":[4],"data":[1,-2,3,-4]}},"outputs":["y"],"nodes":[{"name":"r","op":"relu","inputs":["x"],"outputs":["y"]}]}' > $g
    for dev in cpu cuda:0; do
        for i in 1 2 3; do
            t0=$(now)
            "$FTRUN" run $g -d $dev -n 1 -q --format none -o /tmp/ftrun-startup-out || return 1
            echo "one-node graph on $dev, whole process: $(secs "$t0") s"
        done
    done
    t0=$(now)
    for i in 1 2 3 4 5 6 7 8; do "$FTRUN" run $g -d cuda:0 -n 1 -q --format none -o /tmp/ftrun-startup-$i & done; wait
    echo "8 such processes at once on cuda:0: $(secs "$t0") s"
}

tap_summary() { # LOG: "N passed, N failed"; fails when a case failed or none ran
    local ok bad
    ok=$(grep -c '^ok ' "$1"); bad=$(grep -c '^not ok ' "$1")
    echo "$ok passed, $bad failed"
    [ "$bad" -eq 0 ] && [ "$ok" -gt 0 ]
}

step_numeric() {
    FTNUM_ARGS="-d cuda" FTNUM_TAG="cuda: " "$PYTHON" tests/numeric/test_ops.py
}

step_parity() {
    "$PYTHON" tests/cuda/parity.py
}

step_onnx() {
    FTRUN_TEST_DEVICE=cuda:0 "$PYTHON" tests/onnx/testdata.py
}

step_check() {
    local g tmp fails=0 n=0
    tmp=$(mktemp -d)
    for g in graphs/*.json bench/graphs/*.json; do
        n=$((n + 1))
        if "$FTRUN" run "$g" -d cuda:0 --random-inputs --check -n 3 -q -o "$tmp/c"; then echo "ok $n - $g --check"
        else echo "not ok $n - $g --check (exit $?)"; fails=1; fi
        n=$((n + 1))
        if "$FTRUN" run "$g" -d cuda:0 --random-inputs --check --check-nodes -n 1 -q -o "$tmp/n"; then echo "ok $n - $g --check-nodes"
        else echo "not ok $n - $g --check-nodes (exit $?)"; fails=1; fi
        n=$((n + 1))
        rm -rf "$tmp/a" "$tmp/b"
        if "$FTRUN" run "$g" -d cuda:0 --random-inputs -n 5 -q -o "$tmp/a" &&
           "$FTRUN" run "$g" -d cuda:0 --random-inputs --cuda-graph -n 5 -q -o "$tmp/b" &&
           "$FTRUN" compare "$tmp/a" "$tmp/b" --rtol 0 --atol 0; then echo "ok $n - $g --cuda-graph outputs equal"
        else echo "not ok $n - $g --cuda-graph outputs differ (exit $?)"; fails=1; fi
    done
    rm -rf "$tmp"
    return $fails
}

sample_regex() { # DEPTH: the first parity case of every FAMILY (1) or FAMILY/OP (2)
    "$PYTHON" tests/cuda/parity.py --list | "$PYTHON" -c '
import re, sys
depth, seen = int(sys.argv[1]), {}
for line in sys.stdin:
    name = line.strip()
    key = "/".join(name.split("/")[:depth])
    if name and key not in seen:
        seen[key] = name
print("^(" + "|".join(re.escape(n) for n in seen.values()) + ")$")' "$1"
}

step_parity_sample() {
    FTPARITY_ONLY=${FTPARITY_ONLY:-$(sample_regex 2)} "$PYTHON" tests/cuda/parity.py
}

step_sanitize() { # $1: full or sample
    local san=${CUDA_HOME}/bin/compute-sanitizer only=${FTPARITY_ONLY:-} tool extra rc=0
    command -v compute-sanitizer > /dev/null && san=$(command -v compute-sanitizer)
    [ -z "$only" ] && [ "$1" = sample ] && only=$(sample_regex 1)
    for tool in memcheck racecheck; do
        echo "# compute-sanitizer --tool $tool"
        extra=; [ $tool = memcheck ] && extra="--leak-check full"
        # run mode: a report (exit 97) is the failure of the one case in that process
        FTPARITY_MODE=run FTPARITY_ONLY=$only FTPARITY_WRAP="$san --tool $tool --error-exitcode 97 $extra" \
            "$PYTHON" tests/cuda/parity.py || rc=1
    done
    return $rc
}

step_bench() { # $1: quick or full
    local q=--quick; [ "$1" = full ] && q=
    "$PYTHON" bench/cuda.py $q ${BENCH_ARGS:-} && cp bench/RESULTS-cuda.md "$logs/RESULTS-cuda.md"
}

for step in "$@"; do
    case $step in
        env|numeric|parity|onnx|check) fn="step_$step"; arg= ;;
        parity-sample) fn=step_parity_sample; arg= ;;
        sanitize) fn=step_sanitize; arg=sample ;;
        sanitize-full) fn=step_sanitize; arg=full ;;
        bench) fn=step_bench; arg=quick ;;
        bench-full) fn=step_bench; arg=full ;;
        *) echo "run.sh: unknown step '$step'" >&2; exit 2 ;;
    esac
    t0=$(date +%s)
    export -f "$fn" sample_regex
    lim=STEP_TIMEOUT_${step//-/_}; lim=${!lim:-${STEP_TIMEOUT:-540}}
    timeout -k 10 "$lim" bash -c "$fn $arg" > "$logs/$step.log" 2>&1
    rc=$?
    t=$(( $(date +%s) - t0 ))
    counts=$(tap_summary "$logs/$step.log")
    [ "$step" = env ] && counts="-"
    line="$step: exit $rc in ${t}s; $counts"
    [ $rc -eq 124 ] && line="$line (stopped at STEP_TIMEOUT)"
    echo "$line" | tee -a "$logs/summary.txt"
    [ $rc -eq 0 ] || status=1
done
exit $status
