#!/usr/bin/env bats
# Fault injection (tests/fault/README.md): every allocation and I/O call that
# ftrun makes while it runs is made to fail in turn, and each failure must end
# in a clear error with the contract's status (4, or 3 for reading an input),
# never a crash, a hang, a leak or a partial result file.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    local root src
    root=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
    src=$root/tests/fault/faultinject.c
    SHIM=${FAULT_SHIM:-$root/build/fault/libfaultinject.so}
    if [ ! -f "$SHIM" ] || [ "$src" -nt "$SHIM" ]; then
        SHIM=$BATS_FILE_TMPDIR/libfaultinject.so
        ${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -Wl,-soname,libfaultinject.so -o "$SHIM" "$src" -ldl
    fi
    export SHIM
}

# ftf ARGS...: ftrun with the shim preloaded (FAULT_* from the environment).
ftf() {
    # ASan wants to come first; the shim passes every call on to it
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 FAULT_PROG=${FTRUN##*/} LD_PRELOAD=$SHIM \
        timeout -k 5 20 "$FTRUN" "$@"
}

# count CLASS ARGS...: how many calls of CLASS the command makes.
count() {
    local cls=$1
    shift
    FAULT_CLASS=$cls FAULT_COUNT=1 FAULT_LOG=$T/count.log ftf "$@" >/dev/null 2>&1
    sed -n 's/^faultinject: [a-z]* calls: //p' "$T/count.log" | tail -1
    rm -f "$T/count.log"
}

@test "fault: the shim counts calls after main and fails exactly the one asked for" {
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
    grep -qw avx2 /proc/cpuinfo || export OPENBLAS_CORETYPE=Prescott
    na=$(count alloc "$DATA/small.json" --threads 1 -q -o "$T/a")
    ni=$(count io "$DATA/small.json" --threads 1 -q -o "$T/a")
    [ "$na" -gt 20 ]
    [ "$ni" -gt 5 ]
    # past the last call: nothing fails
    FAULT_AT=$((na + 1)) run ftf "$DATA/small.json" --threads 1 -q -o "$T/b"
    status_is 0
    dir_has_exactly "$T/b" r.npy s.npy timing.json
    # the first I/O call fails, and says so
    FAULT_CLASS=io FAULT_AT=1 FAULT_VERBOSE=1 run ftf "$DATA/small.json" --threads 1 -q -o "$T/c"
    has "faultinject: call 1 ("
    # other programs run untouched (FAULT_PROG)
    FAULT_CLASS=io FAULT_AT=1 FAULT_PROG=ftrun LD_PRELOAD=$SHIM run cat "$DATA/small.json"
    status_is 0
    has '"ftrun": 1'
}

@test "fault: sweep: every allocation and I/O call of run, run --format npz, run of a .ftg, info, pack, unpack, compare" {
    # leaks: at every point under ASan (make test-asan), else sampled with valgrind below
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_GRAPH=small FAULT_LEAK=$leak FAULT_WORK="$T/sweep" \
        "$TESTS_DIR/fault/sweep.sh" run run-npz run-ftg info pack unpack compare
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#)' | head -40
        return 1
    fi
    has "# no problems"
    # every case reached its calls
    [ "$(printf '%s\n' "$output" | grep -Ec '^# [a-z-]+ +(alloc|io) +[1-9][0-9]* calls')" -eq 14 ]
}

@test "fault: sweep: every allocation and I/O call of loading and running an ONNX model (external data, .pb input)" {
    "$FTRUN" --help | grep -qi onnx || skip "this ftrun reads no ONNX (no mention in --help)"
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_GRAPH=small FAULT_LEAK=$leak FAULT_WORK="$T/sweep" \
        "$TESTS_DIR/fault/sweep.sh" run-onnx
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#|sweep)' | head -40
        return 1
    fi
    has "# no problems"
    [ "$(printf '%s\n' "$output" | grep -Ec '^# run-onnx +(alloc|io) +[1-9][0-9]* calls')" -eq 2 ]
}

@test "fault: sweep: every allocation and I/O call of a model reading strings (.npy of unicode) and decoding a PNG" {
    "$PYTHON" -c 'import PIL' 2>/dev/null || { echo "python3-pil is missing (make deps)" >&2; return 1; }
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_LEAK=$leak FAULT_WORK="$T/sweep" "$TESTS_DIR/fault/sweep.sh" run-text
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#|sweep)' | head -40
        return 1
    fi
    has "# no problems"
    [ "$(printf '%s\n' "$output" | grep -Ec '^# run-text +(alloc|io) +[1-9][0-9]* calls')" -eq 2 ]
}

@test "fault: sweep: every allocation and I/O call of a run with shapes known only at run time (--check-nodes, three runs)" {
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_LEAK=$leak FAULT_WORK="$T/sweep" "$TESTS_DIR/fault/sweep.sh" run-dyn
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#|sweep)' | head -40
        return 1
    fi
    has "# no problems"
    [ "$(printf '%s\n' "$output" | grep -Ec '^# run-dyn +(alloc|io) +[1-9][0-9]* calls')" -eq 2 ]
}

@test "fault: sweep: every allocation and I/O call of an ONNX run-time loop whose carried value grows (imported twice), two runs" {
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_LEAK=$leak FAULT_WORK="$T/sweep" "$TESTS_DIR/fault/sweep.sh" run-loop
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#|sweep)' | head -40
        return 1
    fi
    has "# no problems"
    [ "$(printf '%s\n' "$output" | grep -Ec '^# run-loop +(alloc|io) +[1-9][0-9]* calls')" -eq 2 ]
}

@test "fault: sweep under valgrind: no leak or memory error when a call fails (a sample of the points)" {
    if [ -n "${FTRUN_SANITIZED:-}" ]; then
        skip "the sanitized binary is swept with ASan leak checks at every point"
    fi
    command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
    run env FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_GRAPH=small FAULT_LEAK=valgrind FAULT_STEP=67 FAULT_STEP_IO=13 \
        FAULT_LEAK_STEP=1 FAULT_WORK="$T/sweep" "$TESTS_DIR/fault/sweep.sh" run run-npz run-ftg info pack unpack compare
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#)' | head -40
        return 1
    fi
    has "# no problems"
}

@test "fault: ftrun's start (re-executing itself for faster BLAS kernels) tolerates failures" {
    # without OPENBLAS_CORETYPE, ftrun may execute itself once on CPUs OpenBLAS
    # does not recognise, and does for GOMP_SPINCOUNT at 2 threads; the count
    # goes on across that exec
    unset OPENBLAS_CORETYPE
    for n in 1 2 3 4 5 6; do
        FAULT_AT=$n run ftf "$DATA/small.json" --threads 2 -q -o "$T/o$n"
        if [ "$status" -eq 0 ]; then
            dir_has_exactly "$T/o$n" r.npy s.npy timing.json
        else
            status_is 4
            is_error
        fi
    done
}

@test "fault: running out of memory while parsing a graph is exit 4, never a JSON syntax error" {
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
    grep -qw avx2 /proc/cpuinfo || export OPENBLAS_CORETYPE=Prescott
    total=$(count alloc info "$DATA/small.json")
    oom=0
    for ((n = 1; n <= total; n++)); do
        FAULT_AT=$n run ftf info "$DATA/small.json"
        lacks "syntax error" "changed while"
        if [ "$status" -ne 0 ]; then
            status_is 4
            is_error
            [[ "$output" == *"out of memory parsing"* ]] && oom=$((oom + 1))
        fi
    done
    [ "$oom" -ge 5 ]
}

@test "fault: a full disk on standard output fails info and compare with exit 4 and a message" {
    [ -w /dev/full ] || skip "no /dev/full"
    run bash -c '"$0" info "$1" > /dev/full' "$FTRUN" "$DATA/small.json"
    status_is 4
    has "ftrun: error: cannot write to standard output: No space left on device"
    "$FTRUN" "$DATA/small.json" -q -o "$T/a"
    run bash -c '"$0" compare "$1" "$1" > /dev/full' "$FTRUN" "$T/a"
    status_is 4
    has "ftrun: error: cannot write to standard output: No space left on device"
}

@test "fault: zlib running out of memory while inflating (.ftg blob, .npz member) is exit 4, not a corrupt file" {
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
    grep -qw avx2 /proc/cpuinfo || export OPENBLAS_CORETYPE=Prescott
    graph ones.json >/dev/null <<'JSON'
{"ftrun": 1,
 "tensors": {"w": {"dtype": "f32", "shape": [64], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["y"],
 "nodes": [{"name": "act", "op": "relu", "inputs": ["w"], "outputs": ["y"]}]}
JSON
    "$FTRUN" pack "$T/ones.json" -o "$T/ones.ftg" --compress -q
    "$FTRUN" "$T/ones.json" -q -o "$T/gold" --format npz
    # the first allocation zlib makes: inflateInit's state
    FAULT_ONLY=libz.so FAULT_AT=1 run ftf "$T/ones.ftg" -q -o "$T/a"
    status_is 4
    is_error
    has "tensor 'w'" "out of memory"
    [ ! -e "$T/a" ] || dir_has_exactly "$T/a"
    FAULT_ONLY=libz.so FAULT_AT=1 run ftf "$T/ones.json" -q -o "$T/b" --expect "$T/gold/outputs.npz"
    status_is 4
    is_error
    has "member y.npy" "out of memory"
    [ ! -e "$T/b" ] || dir_has_exactly "$T/b"
}

@test "fault: sweep: every allocation of a run whose convs keep oneDNN's layouts between them, with a blocked copy of the input, blocked and blocked-add forms (every other call)" {
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    # one conv form at a time (the timed pick may choose another form in
    # another process, and a tolerated failure must give the very same
    # bytes): blocked, then blocked-add (the residual conv's binary add)
    for impl in blocked blocked-add; do
        run env FTRUN_CONV_IMPL=$impl FTRUN="$FTRUN" FAULT_SHIM="$SHIM" FAULT_CLASSES=alloc FAULT_STEP=2 FAULT_LEAK=$leak \
            FAULT_WORK="$T/sweep-$impl" "$TESTS_DIR/fault/sweep.sh" run-convs run-convs-res
        if [ "$status" -ne 0 ]; then
            echo "FTRUN_CONV_IMPL=$impl"
            printf '%s\n' "$output" | grep -E '^(FAIL|#|sweep)' | head -40
            return 1
        fi
        has "# no problems"
        [ "$(printf '%s\n' "$output" | grep -Ec '^# run-convs +alloc +[1-9][0-9]* calls')" -eq 1 ]
        [ "$(printf '%s\n' "$output" | grep -Ec '^# run-convs-res +alloc +[1-9][0-9]* calls')" -eq 1 ]
    done
}
