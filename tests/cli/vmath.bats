#!/usr/bin/env bats
# Accuracy of the f32 vector math of src/cpu/vmath.h (exp, sigmoid, silu,
# tanh, exp_nonpos) against glibc's double-precision functions, on every vector path the
# CPU has (AVX-512, AVX2+FMA, baseline): tests/unit/vmath_ulp.c sweeps every
# 257th f32 bit pattern (both signs, infinities and NaNs) plus the edges of
# overflow, underflow and saturation.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    local san=()
    [ -n "${FTRUN_SANITIZED:-}" ] && san=(-fsanitize=address,undefined)
    cc -std=gnu11 -O2 -g -fopenmp "${san[@]}" -Wall -Wextra -Werror -I"$ROOT/src" -o "$BATS_FILE_TMPDIR/vmath_ulp" \
        "$TESTS_DIR/unit/vmath_ulp.c" -lm
    "$BATS_FILE_TMPDIR/vmath_ulp" 257 > "$BATS_FILE_TMPDIR/out.txt"
}

# max_ulp FN: the largest error of FN over the paths swept
max_ulp() {
    awk -v f="$1" '$1 == f && $3 == "max_ulp" { if ($4 > m) m = $4 } END { print m + 0 }' "$BATS_FILE_TMPDIR/out.txt"
}

within() { # within FN BOUND
    local u
    u=$(max_ulp "$1")
    echo "$1: max $u ulp (bound $2)"
    awk -v u="$u" -v b="$2" 'BEGIN { exit !(u <= b) }'
}

@test "vmath: every path swept, special values (inf, NaN, overflow, underflow, saturation, -0) as libm" {
    cat "$BATS_FILE_TMPDIR/out.txt"
    run grep -c "max_ulp" "$BATS_FILE_TMPDIR/out.txt"
    [ "$output" -ge 4 ]
    run grep "special WRONG" "$BATS_FILE_TMPDIR/out.txt"
    [ "$status" -eq 1 ]
}

@test "vmath: exp within 1.5 ulp" { within exp 1.5; }
@test "vmath: sigmoid within 3 ulp" { within sigmoid 3; }
@test "vmath: silu within 3.5 ulp" { within silu 3.5; }
@test "vmath: tanh within 2 ulp" { within tanh 2; }
@test "vmath: exp_nonpos (softmax's e^(x - max)) within 1.5 ulp" { within exp_nonpos 1.5; }
