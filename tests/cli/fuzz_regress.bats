#!/usr/bin/env bats
# The fuzzing inputs kept in the tree (fuzz/regress/H: inputs that once crashed a
# harness; fuzz/corpus/H: the seeds) run through ftrun itself: graphs with
# `ftrun info`, arrays with `ftrun compare F F`; each must end in exit 0 or
# exit 3 with an "ftrun: error:" line, never a crash or a sanitizer report.
# The graphs that fuzz_run executes (fuzz/corpus/run and every graph
# harness's regressions) also run once on the CPU with random inputs: exit 0,
# or 3 or 4 (ftrun(1), EXIT STATUS) with an "ftrun: error:" line.

bats_require_minimum_version 1.5.0
load helpers

# The spin ftrun sets for itself when it is unset, by starting again
# (src/cli/blas_tune.c): one start per file instead of two.
export GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-100000}

# check_files H CMD...: runs CMD FILE (CMD with FILE twice for compare) on every
# file of fuzz/regress/H and fuzz/corpus/H.
check_files() {
    local h=$1
    shift
    check_list "$h" "0 3" "$@" -- "$ROOT"/fuzz/regress/"$h"/* "$ROOT"/fuzz/corpus/"$h"/*
}

# check_list NAME "CODES" CMD... -- FILE...: runs CMD FILE on every file; each
# must exit 0, or with one of CODES and an "ftrun: error:" line.
check_list() {
    local h=$1 codes=$2 f n=0 bad=0 cmd=()
    shift 2
    while [ "$1" != -- ]; do
        cmd+=("$1")
        shift
    done
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if [ "${cmd[0]}" = compare ]; then
            run timeout 60 "$FTRUN" compare "$f" "$f"
        else
            run timeout 60 "$FTRUN" "${cmd[@]}" "$f"
        fi
        if [ "$status" -ge 128 ] || [ "$status" -eq 124 ]; then
            echo "$f: killed or timed out (exit $status)" >&2
            bad=$((bad + 1))
        elif [ "$status" -ne 0 ] && [[ " $codes " != *" $status "* ]]; then
            echo "$f: exit $status, expected one of $codes" >&2
            bad=$((bad + 1))
        elif [ "$status" -ne 0 ] && [[ "$output" != *"ftrun: error:"* ]]; then
            echo "$f: exit $status without an 'ftrun: error:' line" >&2
            bad=$((bad + 1))
        elif [[ "$output" == *AddressSanitizer* || "$output" == *"runtime error:"* || "$output" == *LeakSanitizer* ]]; then
            echo "$f: sanitizer report" >&2
            bad=$((bad + 1))
        fi
        if [ "$bad" -gt 0 ] && [ "$status" -ne 0 ]; then
            printf '%s\n' "$output" | head -20 >&2
        fi
    done
    echo "# $h: $n files, $bad failed" >&3
    [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

@test "fuzz inputs (json): ftrun info exits 0 or 3, never crashes" {
    check_files json info
}

@test "fuzz inputs (ftg): ftrun info exits 0 or 3, never crashes" {
    check_files ftg info
}

@test "fuzz inputs (npy): ftrun compare F F exits 0 or 3, never crashes" {
    check_files npy compare
}

@test "fuzz inputs (npz): ftrun compare F F exits 0 or 3, never crashes" {
    check_files npz compare
}

@test "fuzz inputs (onnx): ftrun info exits 0 or 3, never crashes" {
    check_files onnx info
}

@test "fuzz inputs (pb): ftrun compare F F exits 0 or 3, never crashes" {
    check_files pb compare
}

@test "fuzz inputs (run): ftrun run on the cpu exits 0, 3 or 4, never crashes" {
    # A graph may ask for more memory than there is: under the sanitizers
    # that is ftrun's "out of memory" (exit 4), not an abort.
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
    check_list run "0 3 4" run -q --device cpu --random-inputs -n 1 -w 0 --threads 1 -o "$T/out" -- \
        "$ROOT"/fuzz/regress/{run,json,ftg,onnx}/* "$ROOT"/fuzz/corpus/run/*
}
