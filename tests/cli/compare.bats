#!/usr/bin/env bats
# `ftrun compare A B [--rtol R --atol A]`: .npy files, .npz files and result
# folders; B holds the expected values. Exit 0 when all match, 1 when values
# are out of tolerance, 3 for unreadable or mismatched operands. The report
# line is the one --expect prints.

bats_require_minimum_version 1.5.0
load helpers

@test "identical .npy files: exit 0, one 'match' line per tensor on stdout, a summary on stderr" {
    npy "$T/a.npy" 'np.arange(12, dtype=np.float32).reshape(3, 4)'
    cp "$T/a.npy" "$T/b.npy"
    run --separate-stderr "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 0
    [ "$output" = "'a' vs 'b' f32 [3,4]: 12 values match (rtol=0.0001, atol=0.00011: 1e-05 x max |expected| 11): max abs error 0, max rel error 0" ]
    [ "$stderr" = "ftrun: compare: 1 tensor matches" ]
    run --separate-stderr "$FTRUN" compare "$T/a.npy" "$T/b.npy" -q
    status_is 0
    [ -z "$stderr" ]
}

@test "values out of tolerance: exit 1 with count, max abs and rel error, first offending index, got and expected" {
    npy "$T/x.npy" 'np.array([[1, 2, 3], [4, 5, 6]], np.float32)'
    mkdir "$T/ref"
    npy "$T/ref/x.npy" 'np.array([[1, 2.5, 3], [4, 5, 8]], np.float32)'
    run --separate-stderr "$FTRUN" compare "$T/x.npy" "$T/ref/x.npy"
    status_is 1
    [ "$output" = "'x' f32 [2,3]: 2 of 6 values out of tolerance (rtol=0.0001, atol=8e-05: 1e-05 x max |expected| 8): max abs error 2, max rel error 0.25; first at [0,1] (got 2, expected 2.5); worst at [1,2] (got 6, expected 8)" ]
    [ "$stderr" = "ftrun: compare: 1 of 1 tensor out of tolerance" ]
}

@test "--rtol and --atol replace the per-dtype defaults; B is the reference of rtol" {
    npy "$T/a.npy" 'np.array([100, 10], np.float64)'
    npy "$T/b.npy" 'np.array([110, 10], np.float64)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy" --rtol 0.1
    status_is 0
    # |100 - 110| <= 0.09 * 110 is false, <= 0.1 * 110 true; swapped, B = 100: 10 <= 0.095 * 100 false
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy" --rtol 0.09
    status_is 1
    run "$FTRUN" compare "$T/b.npy" "$T/a.npy" --rtol=0.095
    status_is 1
    run "$FTRUN" compare "$T/b.npy" "$T/a.npy" --atol 10 --rtol 0
    status_is 0
    has "rtol=0, atol=10"
}

@test "default tolerances follow the dtype: f64 tight, f32 1e-4, integers and bool exact" {
    npy "$T/a.npy" 'np.array([1.0], np.float64)'
    npy "$T/b.npy" 'np.array([1.0 + 1e-6], np.float64)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 1
    has "rtol=1e-09, atol=1e-12"
    npy "$T/a.npy" 'np.array([1.0], np.float32)'
    npy "$T/b.npy" 'np.array([1.0 + 1e-6], np.float32)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 0
    npy "$T/a.npy" 'np.array([5, -7], np.int64)'
    npy "$T/b.npy" 'np.array([5, -6], np.int64)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 1
    has "1 of 2 values" "first at [1] (got -7, expected -6)" "rtol=0, atol=0"
    npy "$T/a.npy" 'np.array([True, False])'
    npy "$T/b.npy" 'np.array([True, True])'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 1
    has "bool [2]" "first at [1] (got 0, expected 1)"
}

@test "NaN matches NaN, an infinity only itself" {
    npy "$T/a.npy" 'np.array([np.nan, np.inf, -np.inf, 1], np.float32)'
    npy "$T/b.npy" 'np.array([np.nan, np.inf, -np.inf, 1], np.float32)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy"
    status_is 0
    npy "$T/b.npy" 'np.array([np.nan, -np.inf, -np.inf, np.nan], np.float32)'
    run "$FTRUN" compare "$T/a.npy" "$T/b.npy" --atol 1e30
    status_is 1
    has "2 of 4 values" "first at [1] (got inf, expected -inf)"
}

@test "result folders, .npz files and mixes of them compare by tensor name" {
    "$FTRUN" "$DATA/small.json" -q -o "$T/npy"
    "$FTRUN" "$DATA/small.json" -q -o "$T/npz" --format npz
    py 'r = np.load(sys.argv[1]); r[1, 1] = 4.75; np.savez_compressed(sys.argv[2], s=np.load(sys.argv[3]), r=r)' \
        "$T/npy/r.npy" "$T/gold.npz" "$T/npy/s.npy"
    run --separate-stderr "$FTRUN" compare "$T/npy" "$T/npz"
    status_is 0
    [ "$(echo "$output" | wc -l)" -eq 2 ]
    [[ "$output" == *"'r' f32 [2,3]: 6 values match"*"'s' f32 [2,3]: 6 values match"* ]]
    [ "$stderr" = "ftrun: compare: 2 tensors match" ]
    run "$FTRUN" compare "$T/npz/outputs.npz" "$T/npy"
    status_is 0
    run --separate-stderr "$FTRUN" compare "$T/npy" "$T/gold.npz"
    status_is 1
    has "'r' f32 [2,3]: 1 of 6 values out of tolerance" "'s' f32 [2,3]: 6 values match"
    [ "$stderr" = "ftrun: compare: 1 of 2 tensors out of tolerance" ]
    # a single array on each side is compared whatever the names
    run "$FTRUN" compare "$T/npy/s.npy" "$T/npz"
    status_is 3
    run "$FTRUN" compare "$T/npy/r.npy" "$T/npy/r.npy"
    status_is 0
}

@test "mismatched operands: dtype, shape, a tensor on one side only: exit 3, named on stderr; the rest is still compared" {
    mkdir "$T/a" "$T/b"
    npy "$T/a/same.npy" 'np.ones(3, np.float32)'
    npy "$T/b/same.npy" 'np.ones(3, np.float32)'
    npy "$T/a/dt.npy" 'np.ones(3, np.float32)'
    npy "$T/b/dt.npy" 'np.ones(3, np.float64)'
    npy "$T/a/sh.npy" 'np.ones((2, 3), np.float32)'
    npy "$T/b/sh.npy" 'np.ones((3, 2), np.float32)'
    npy "$T/a/only_a.npy" 'np.ones(1, np.int8)'
    npy "$T/b/only_b.npy" 'np.ones(1, np.int8)'
    run --separate-stderr "$FTRUN" compare "$T/a" "$T/b"
    status_is 3
    [ "$output" = "'same' f32 [3]: 3 values match (rtol=0.0001, atol=1e-05): max abs error 0, max rel error 0" ]
    [[ "$stderr" == *"ftrun: error: compare: 'dt': f32 [3] in $T/a/dt.npy but f64 [3] in $T/b/dt.npy"* ]]
    [[ "$stderr" == *"ftrun: error: compare: 'sh': f32 [2,3] in $T/a/sh.npy but f32 [3,2] in $T/b/sh.npy"* ]]
    [[ "$stderr" == *"'only_a' is in $T/a/only_a.npy but not in $T/b"* ]]
    [[ "$stderr" == *"'only_b' is in $T/b/only_b.npy but not in $T/a"* ]]
}

@test "unreadable operands: missing, not .npy, empty folder, a name twice in a folder: exit 3 naming them" {
    npy "$T/a.npy" 'np.ones(3, np.float32)'
    run "$FTRUN" compare "$T/a.npy" "$T/missing.npy"
    status_is 3
    is_error
    has "$T/missing.npy" "cannot open"
    echo "not numpy" > "$T/text.npy"
    run "$FTRUN" compare "$T/text.npy" "$T/a.npy"
    status_is 3
    has "$T/text.npy" "not a .npy file"
    mkdir "$T/empty"
    run "$FTRUN" compare "$T/empty" "$T/a.npy"
    status_is 3
    has "$T/empty" "no .npy, .npz or .pb"
    mkdir "$T/dup"
    npy "$T/dup/y.npy" 'np.ones(3, np.float32)'
    py 'np.savez(sys.argv[1], y=np.ones(3, np.float32))' "$T/dup/outputs.npz"
    run "$FTRUN" compare "$T/dup" "$T/dup"
    status_is 3
    has "'y' is found twice" "$T/dup/y.npy" "outputs.npz"
}

@test "compare usage: two operands, only --rtol/--atol/-q/-v; bad values are usage errors" {
    npy "$T/a.npy" 'np.ones(3, np.float32)'
    run "$FTRUN" compare "$T/a.npy"
    status_is 2
    has "'compare' needs two operands" "Try 'ftrun --help'."
    run "$FTRUN" compare "$T/a.npy" "$T/a.npy" "$T/a.npy"
    status_is 2
    has "unexpected argument"
    run "$FTRUN" compare "$T/a.npy" "$T/a.npy" --rtol x
    status_is 2
    has "--rtol" "'x'"
    run "$FTRUN" compare "$T/a.npy" "$T/a.npy" --atol -1
    status_is 2
    run "$FTRUN" compare "$T/a.npy" "$T/a.npy" -o "$T/o"
    status_is 2
    has "--output-dir" "'compare'"
    run "$FTRUN" compare "$T/a.npy" "$T/a.npy" --threads 2
    status_is 2
    run "$FTRUN" compare -v "$T/a.npy" "$T/a.npy"
    status_is 0
}

@test "--expect and compare print the same report for the same comparison" {
    mkdir "$T/gold"
    "$FTRUN" "$DATA/small.json" -q -o "$T/gold"
    py 'r = np.load(sys.argv[1]); r[0, 2] = 1; r[1, 1] = 4.75; np.save(sys.argv[1], r)' "$T/gold/r.npy"
    run --separate-stderr "$FTRUN" "$DATA/small.json" --expect "$T/gold" -q -o "$T/o"
    status_is 1
    exp_line=${stderr#"ftrun: expect: output 'r': "}
    [ "$exp_line" != "$stderr" ]
    run --separate-stderr "$FTRUN" compare "$T/o/r.npy" "$T/gold/r.npy"
    status_is 1
    [ "$output" = "'r' f32 [2,3]: $exp_line" ]
    [[ "$exp_line" == "2 of 6 values out of tolerance"*"first at [0,2] (got 2, expected 1); worst at [0,2]"* ]] ||
        [[ "$exp_line" == "2 of 6 values out of tolerance"*"first at [0,2] (got 2, expected 1)" ]]
}

@test "ONNX TensorProto files (.pb) compare with .npy files, alone and in folders" {
    npy "$T/a.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3)'
    py 'from onnx import numpy_helper; open(sys.argv[1], "wb").write(numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "a").SerializeToString())' "$T/a.pb"
    run "$FTRUN" compare "$T/a.pb" "$T/a.npy"
    status_is 0
    has "6 values match"
    py 'from onnx import numpy_helper; open(sys.argv[1], "wb").write(numpy_helper.from_array(np.array([[0, 1, 2], [3, 4, 6]], np.float32), "a").SerializeToString())' "$T/b.pb"
    run "$FTRUN" compare "$T/b.pb" "$T/a.npy"
    status_is 1
    has "1 of 6 values out of tolerance"
    mkdir "$T/d1" "$T/d2"
    cp "$T/a.pb" "$T/d1/a.pb"
    cp "$T/a.npy" "$T/d2/a.npy"
    run "$FTRUN" compare "$T/d1" "$T/d2"
    status_is 0
}
