#!/usr/bin/env bats
# The fuzzing inputs kept in the tree (fuzz/regress/H: inputs that once crashed a
# harness; fuzz/corpus/H: the seeds) run through ftrun itself: graphs with
# `ftrun info`, arrays with `ftrun compare F F`. Each must end in exit 0 or
# exit 3 with an "ftrun: error:" line, never a crash or a sanitizer report.

bats_require_minimum_version 1.5.0
load helpers

# check_files H CMD...: runs CMD FILE (CMD with FILE twice for compare) on every
# file of fuzz/regress/H and fuzz/corpus/H.
check_files() {
    local h=$1 f n=0 bad=0
    shift
    local files=("$ROOT"/fuzz/regress/"$h"/* "$ROOT"/fuzz/corpus/"$h"/*)
    for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if [ "$1" = compare ]; then
            run timeout 60 "$FTRUN" compare "$f" "$f"
        else
            run timeout 60 "$FTRUN" "$@" "$f"
        fi
        if [ "$status" -ge 128 ] || [ "$status" -eq 124 ]; then
            echo "$f: killed or timed out (exit $status)" >&2
            bad=$((bad + 1))
        elif [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
            echo "$f: exit $status, expected 0 or 3" >&2
            bad=$((bad + 1))
        elif [ "$status" -eq 3 ] && [[ "$output" != *"ftrun: error:"* ]]; then
            echo "$f: exit 3 without an 'ftrun: error:' line" >&2
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
