#!/usr/bin/env bats
# `ftrun show FILE...` and `ftrun run --print`: arrays printed as NumPy's str()
# prints them (NumPy is the oracle), after a header with dtype, shape, min,
# max and mean.

bats_require_minimum_version 1.5.0
load helpers

# Saves a set of arrays as NAME.npy in $T/arr and, for each, NumPy's own
# str() in NAME.ref (and the statistics in NAME.stats).
make_arrays() {
    mkdir -p "$T/arr"
    py '
import os
d = sys.argv[1]
rng = np.random.default_rng(3)
arrs = {
    "int3d": np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    "i64big": np.arange(2000).reshape(10, 10, 20),
    "f64sci": np.arange(3000, dtype=np.float64).reshape(3, 1000) / 7,
    "f32short": np.array([1e-7, 2.5, 3e5], np.float32),
    "f32fixed": np.array([[0.1, 0.25, 2.0], [1.5, -3.125, 10]], np.float32),
    "f32wrap": rng.random((6, 10)).astype(np.float32),
    "f16": np.array([0.5, 1.25, -2.0, 3.14159], np.float16),
    "u8": np.arange(0, 250, 10, dtype=np.uint8).reshape(5, 5),
    "boolv": np.array([True, False, True]),
    "specials": np.array([1.5, np.nan, -np.inf], np.float32),
    "scalar": np.array(4.5, np.float64),
    "long1d": np.arange(1500, dtype=np.int16),
}
for k, a in arrs.items():
    np.save(os.path.join(d, k + ".npy"), a)
    open(os.path.join(d, k + ".ref"), "w").write(str(a) + "\n")
    f = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    open(os.path.join(d, k + ".stats"), "w").write("%r %r %r\n" % (float(f.min()), float(f.max()), float(f.astype(np.float64).mean())))
' "$T/arr"
}

@test "show: values laid out exactly as NumPy prints them (alignment, wrapping, summaries, specials)" {
    make_arrays
    for ref in "$T"/arr/*.ref; do
        name=$(basename "$ref" .ref)
        run --separate-stderr "$FTRUN" show "$T/arr/$name.npy"
        status_is 0
        printf '%s\n' "$output" | tail -n +2 > "$T/got"
        diff "$T/got" "$ref" || { echo "differs from NumPy: $name"; return 1; }
    done
}

@test "show: the header gives dtype, shape, and min, max, mean as NumPy computes them" {
    make_arrays
    for name in int3d f64sci f32wrap u8 specials i64big; do
        run --separate-stderr "$FTRUN" show "$T/arr/$name.npy"
        status_is 0
        head=$(printf '%s\n' "$output" | head -1)
        py '
import re
head, npy, stats = sys.argv[1:]
a = np.load(npy)
m = re.match(r"^(\S+): (\w+) \[([0-9,]*)\], min (\S+), max (\S+), mean (\S+?)(,|$)", head)
assert m, head
assert m.group(1) == npy, head
names = {"int32": "i32", "int64": "i64", "float64": "f64", "float32": "f32", "uint8": "u8"}
assert m.group(2) == names[str(a.dtype)], (head, a.dtype)
assert tuple(int(x) for x in m.group(3).split(",") if x) == a.shape, head
want = [float(x) for x in open(stats).read().split()]
for got, w in zip(map(float, m.group(4, 5, 6)), want):
    assert abs(got - w) <= 1e-5 * abs(w) + 1e-12, (head, want)
if np.isnan(a).any() if a.dtype.kind == "f" else False:
    assert "1 NaN" in head and "1 infinite" in head, head
' "$head" "$T/arr/$name.npy" "$T/arr/$name.stats"
    done
}

@test "show: each member of an .npz, and every array file of a result folder" {
    py 'np.savez(sys.argv[1], b=np.arange(3, dtype=np.int32), a=np.ones((2, 2), np.float32))' "$T/z.npz"
    run --separate-stderr "$FTRUN" show "$T/z.npz"
    status_is 0
    [[ "$output" == *"$T/z.npz (member b.npy): i32 [3], min 0, max 2, mean 1"$'\n'"[0 1 2]"* ]]
    [[ "$output" == *"$T/z.npz (member a.npy): f32 [2,2], min 1, max 1, mean 1"$'\n'"[[1. 1.]"$'\n'" [1. 1.]]"* ]]
    "$FTRUN" "$DATA/small.json" -q -o "$T/o"
    run --separate-stderr "$FTRUN" show "$T/o"
    status_is 0
    [[ "$output" == *"$T/o/r.npy: f32 [2,3]"*"$T/o/s.npy: f32 [2,3]"* ]]
}

@test "show: a missing or malformed file is exit 3 naming it; no file is a usage error" {
    run --separate-stderr "$FTRUN" show "$T/none.npy"
    status_is 3
    [[ "$stderr" == *"none.npy"* ]]
    echo junk > "$T/junk.npy"
    run --separate-stderr "$FTRUN" show "$T/junk.npy"
    status_is 3
    [[ "$stderr" == *"junk.npy"* ]]
    run --separate-stderr "$FTRUN" show
    status_is 2
}

@test "--print: every output on standard output, as NumPy prints the saved result" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" -n 1 -o "$T/o" --print
    status_is 0
    printf '%s\n' "$output" > "$T/printed"
    py '
text = open(sys.argv[1]).read()
want = ""
for name in ("s", "r"):
    a = np.load(sys.argv[2] + "/" + name + ".npy")
    want += "%s: f32 [2,3], min %.6g, max %.6g, mean %.6g\n%s\n" % (name, a.min(), a.max(), a.mean(), str(a))
assert text == want, (text, want)
' "$T/printed" "$T/o"
    [[ "$stderr" == *"results in"* ]]
}

@test "--print applies to run only" {
    run "$FTRUN" info "$DATA/small.json" --print
    status_is 2
}

@test "show reads ONNX TensorProto .pb files, alone and in a folder, as NumPy prints them" {
    mkdir "$T/set"
    py 'from onnx import numpy_helper
a = np.array([[1.5, -2.0, 3.25]], np.float32)
open(sys.argv[1], "wb").write(numpy_helper.from_array(a, "a").SerializeToString())' "$T/set/input_0.pb"
    run "$FTRUN" show "$T/set/input_0.pb"
    status_is 0
    has "f32 [1,3], min -2, max 3.25, mean 0.916667"
    want=$(py 'print(str(np.array([[1.5, -2.0, 3.25]], np.float32)))')
    has "$want"
    run "$FTRUN" show "$T/set"
    status_is 0
    has "input_0.pb: f32 [1,3]"
}
