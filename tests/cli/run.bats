#!/usr/bin/env bats
# `ftrun run`: result files, timing.json, --expect, --format, -i, --dry-run,
# --threads, --seed, -w/-n.  Expected values are computed by NumPy here.

bats_require_minimum_version 1.5.0
load helpers

# Golden values of data/small.json: s = a + b, r = relu(s).
small_goldens() {
    mkdir -p "$1"
    py '
a = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
b = np.array([0.5, 0.25, -1], np.float32)
s = a + b
np.save(sys.argv[1] + "/s.npy", s)
np.save(sys.argv[1] + "/r.npy", np.maximum(s, 0))' "$1"
}

# --- result files ---------------------------------------------------------------------

@test "results: one .npy per output with NumPy's values, dtype and shape" {
    run "$FTRUN" "$DATA/small.json" -o "$T/o"
    status_is 0
    small_goldens "$T/gold"
    py '
for name in ("s", "r"):
    got = np.load(sys.argv[1] + "/" + name + ".npy")
    want = np.load(sys.argv[2] + "/" + name + ".npy")
    assert got.dtype == np.float32, (name, got.dtype)
    assert got.shape == (2, 3), (name, got.shape)
    assert np.array_equal(got, want), (name, got, want)' "$T/o" "$T/gold"
    dir_has_exactly "$T/o" s.npy r.npy timing.json
}

@test "results: .npy files are NumPy format 1.0, little-endian, C order" {
    run "$FTRUN" "$DATA/small.json" -o "$T/o"
    status_is 0
    py '
raw = open(sys.argv[1], "rb").read()
assert raw[:6] == b"\x93NUMPY", raw[:8]
assert raw[6:8] == b"\x01\x00", raw[6:8]
hlen = int.from_bytes(raw[8:10], "little")
assert (10 + hlen) % 64 == 0, hlen
header = raw[10:10 + hlen].decode("latin1")
assert "\x27descr\x27: \x27<f4\x27" in header, header
assert "\x27fortran_order\x27: False" in header, header
assert "(2, 3)" in header, header' "$T/o/s.npy"
}

@test "results: output names are sanitised ('out/y:1' -> out_y_1.npy), ints kept" {
    run "$FTRUN" "$DATA/oddname.json" -o "$T/o"
    status_is 0
    dir_has_exactly "$T/o" out_y_1.npy timing.json
    py '
y = np.load(sys.argv[1])
assert y.dtype == np.int64, y.dtype
assert y.tolist() == [-1, -2, -3], y' "$T/o/out_y_1.npy"
}

@test "results: -o DIR is created with its parents" {
    run "$FTRUN" "$DATA/small.json" -o "$T/a/b/c"
    status_is 0
    [ -f "$T/a/b/c/s.npy" ]
    [ -f "$T/a/b/c/timing.json" ]
}

@test "results: a second run into the same dir replaces the files" {
    npy "$T/x1.npy" 'np.full(4, 1.0)'
    npy "$T/x2.npy" 'np.full(4, 7.0)'
    run "$FTRUN" "$DATA/input_default.json" -i x="$T/x1.npy" -o "$T/o"
    status_is 0
    run "$FTRUN" "$DATA/input_default.json" -i x="$T/x2.npy" -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).tolist() == [14.0] * 4' "$T/o/y.npy"
    dir_has_exactly "$T/o" y.npy timing.json
}

@test "results: nan, inf and -inf in data survive to the output" {
    run "$FTRUN" "$DATA/specials.json" -o "$T/o"
    status_is 0
    py '
w = np.load(sys.argv[1])
assert np.isnan(w[0]) and w[1] == 1.5 and w[2] == np.inf and w[3] == -np.inf and w[4] == -2, w' "$T/o/w.npy"
}

# --- timing.json ----------------------------------------------------------------------

@test "timing.json: version, graph, device, memory and run_ms keys" {
    run "$FTRUN" "$DATA/small.json" -o "$T/o"
    status_is 0
    py '
d = json.load(open(sys.argv[1]))
assert d["ftrun_version"] == "0.1.0", d
assert d["graph"]["name"] == "small", d["graph"]
assert d["graph"]["file"].endswith("small.json"), d["graph"]
assert d["graph"]["nodes"] == 2, d["graph"]
assert d["device"]["name"] == "cpu", d["device"]
assert d["warmup"] == 0 and d["iterations"] == 1, (d["warmup"], d["iterations"])
for k in ("load_ms", "plan_ms"):
    assert isinstance(d[k], (int, float)) and d[k] >= 0, (k, d[k])
rm = d["run_ms"]
for k in ("min", "median", "mean", "p90", "p99", "max"):
    assert isinstance(rm[k], (int, float)) and rm[k] >= 0, (k, rm)
m = d["memory"]
for k in ("planned_peak_bytes", "unplanned_bytes", "weights_bytes"):
    assert isinstance(m[k], int) and m[k] >= 0, (k, m)
# weights: a is 2x3 f32, b is 3 f32
assert m["weights_bytes"] == 36, m
assert "nodes" not in d or isinstance(d["nodes"], list)' "$T/o/timing.json"
}

@test "timing.json: peak_rss_bytes grows with the data the run holds" {
    [ -r /proc/self/status ] || skip "no /proc/self/status on this system"
    # x: 16 Mi f32 values (64 MiB) of ones, read into memory; relu writes 64 MiB more
    py '
import numpy as np, sys
np.save(sys.argv[1], np.ones((16, 1024, 1024), np.float32))' "$T/x.npy"
    cat > "$T/g.json" <<'EOF'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [16, 1024, 1024]}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"name": "act", "op": "relu", "inputs": ["x"], "outputs": ["y"]}]}
EOF
    run "$FTRUN" "$T/g.json" -i x="$T/x.npy" -o "$T/big" --format none
    status_is 0
    run "$FTRUN" "$DATA/small.json" -o "$T/small" --format none
    status_is 0
    py '
import json, sys
big = json.load(open(sys.argv[1]))["memory"]["peak_rss_bytes"]
small = json.load(open(sys.argv[2]))["memory"]["peak_rss_bytes"]
MiB = 1 << 20
assert isinstance(big, int) and isinstance(small, int), (big, small)
assert small > 0, small
assert big >= 128 * MiB, big        # the input and the output are resident
assert big - small >= 120 * MiB, (big, small)' "$T/big/timing.json" "$T/small/timing.json"
}

@test "timing.json: -w 2 -n 7 are recorded and run_ms is ordered" {
    run "$FTRUN" "$DATA/big.json" -w 2 -n 7 -o "$T/o" --format none
    status_is 0
    py '
d = json.load(open(sys.argv[1]))
assert d["warmup"] == 2 and d["iterations"] == 7, (d["warmup"], d["iterations"])
r = d["run_ms"]
assert r["min"] <= r["median"] <= r["max"], r
assert r["min"] <= r["mean"] <= r["max"], r
assert r["min"] <= r["p90"] <= r["p99"] <= r["max"], r
assert r["median"] <= r["p90"], r
assert r["max"] > 0, r' "$T/o/timing.json"
}

@test "timing.json: --warmup and --iterations long forms" {
    run "$FTRUN" "$DATA/small.json" --warmup=3 --iterations 4 -o "$T/o"
    status_is 0
    [ "$(jget "$T/o/timing.json" 'd["warmup"], d["iterations"]')" = "3 4" ]
}

@test "timing.json: -n 1 has min = median = max" {
    run "$FTRUN" "$DATA/small.json" -n 1 -o "$T/o"
    status_is 0
    py '
r = json.load(open(sys.argv[1]))["run_ms"]
assert r["min"] == r["median"] == r["mean"] == r["max"], r' "$T/o/timing.json"
}

# --- --format ---------------------------------------------------------------------------

@test "--format none writes timing.json and no .npy" {
    run "$FTRUN" "$DATA/small.json" --format none -o "$T/o"
    status_is 0
    dir_has_exactly "$T/o" timing.json
    run "$FTRUN" "$DATA/small.json" --format=none -o "$T/o2"
    status_is 0
    dir_has_exactly "$T/o2" timing.json
}

@test "--format npy is the default" {
    run "$FTRUN" "$DATA/small.json" --format npy -o "$T/a"
    status_is 0
    run "$FTRUN" "$DATA/small.json" -o "$T/b"
    status_is 0
    dir_has_exactly "$T/a" s.npy r.npy timing.json
    cmp "$T/a/s.npy" "$T/b/s.npy"
    cmp "$T/a/r.npy" "$T/b/r.npy"
}

# --- -i / --input -----------------------------------------------------------------------

@test "-i NAME=FILE feeds an input: y = x @ w as NumPy computes it" {
    npy "$T/x.npy" 'np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)'
    run "$FTRUN" "$DATA/input.json" -i x="$T/x.npy" -o "$T/o"
    status_is 0
    py '
x = np.load(sys.argv[1])
w = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
y = np.load(sys.argv[2])
assert y.dtype == np.float32 and y.shape == (2, 2), (y.dtype, y.shape)
assert np.allclose(y, x @ w, rtol=1e-5, atol=1e-6), (y, x @ w)' "$T/x.npy" "$T/o/y.npy"
}

@test "--input NAME=FILE and --input=NAME=FILE are the same as -i" {
    npy "$T/x.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3)'
    run "$FTRUN" "$DATA/input.json" --input x="$T/x.npy" -o "$T/a"
    status_is 0
    run "$FTRUN" "$DATA/input.json" --input="x=$T/x.npy" -o "$T/b"
    status_is 0
    py '
y = np.load(sys.argv[1])
assert y.tolist() == [[13, 16], [40, 52]], y' "$T/a/y.npy"
    cmp "$T/a/y.npy" "$T/b/y.npy"
}

@test "-i overrides an input's own value source; without -i the graph's value is used" {
    run "$FTRUN" "$DATA/input_default.json" -o "$T/a"
    status_is 0
    py 'assert np.load(sys.argv[1]).tolist() == [3.0] * 4' "$T/a/y.npy"
    npy "$T/x.npy" 'np.array([1, -2, 0.25, 10], np.float64)'
    run "$FTRUN" "$DATA/input_default.json" -i x="$T/x.npy" -o "$T/b"
    status_is 0
    py 'assert np.load(sys.argv[1]).tolist() == [2.0, -4.0, 0.5, 20.0]' "$T/b/y.npy"
}

@test "-i accepts a Fortran-order .npy (same result as C order)" {
    npy "$T/c.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3)'
    npy "$T/f.npy" 'np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))'
    py 'assert "True" in open(sys.argv[1], "rb").read(128).decode("latin1")' "$T/f.npy"
    run "$FTRUN" "$DATA/input.json" -i x="$T/c.npy" -o "$T/a"
    status_is 0
    run "$FTRUN" "$DATA/input.json" -i x="$T/f.npy" -o "$T/b"
    status_is 0
    cmp "$T/a/y.npy" "$T/b/y.npy"
}

@test "-i given twice for the same input: the last one wins (or a usage error, never silent mix)" {
    npy "$T/x1.npy" 'np.full(4, 1.0)'
    npy "$T/x2.npy" 'np.full(4, 5.0)'
    run "$FTRUN" "$DATA/input_default.json" -i x="$T/x1.npy" -i x="$T/x2.npy" -o "$T/o"
    if [ "$status" -eq 0 ]; then
        py 'assert np.load(sys.argv[1]).tolist() == [10.0] * 4' "$T/o/y.npy"
    else
        status_is 2
        has "'x'"
    fi
}

# --- --dry-run --------------------------------------------------------------------------

@test "--dry-run: exit 0, summary on stderr, writes no file and no dir" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" --dry-run -o "$T/o"
    status_is 0
    [ ! -e "$T/o" ]
    [ ! -e "$T/ftrun-out" ]
    [ -z "$output" ]
    [[ "$stderr" == *small* ]]
    [[ "$stderr" == *2\ node* ]]
    [[ "$stderr" =~ [0-9]+\ bytes ]]
}

@test "--dry-run leaves an existing output dir untouched" {
    mkdir "$T/o"
    echo keep > "$T/o/marker.txt"
    run "$FTRUN" "$DATA/small.json" --dry-run -o "$T/o"
    status_is 0
    has "small" "2 nodes"
    dir_has_exactly "$T/o" marker.txt
}

@test "--dry-run on an invalid graph: exit 3 with the error" {
    g=$(graph mm.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
             "b": {"dtype": "f32", "shape": [4, 5], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g" --dry-run -o "$T/o"
    status_is 3
    has "node 'fc1' (matmul)"
    [ ! -e "$T/o" ]
}

@test "--dry-run does not run: a data error found only while running is not reported" {
    run "$FTRUN" "$DATA/intdiv.json" --dry-run -o "$T/o"
    status_is 0
    has "intdiv" "2 nodes"
    lacks "error"
    [ ! -e "$T/o" ]
}

# --- --threads --------------------------------------------------------------------------

@test "--threads 1 and --threads 2 give the same results within tolerance" {
    run "$FTRUN" "$DATA/big.json" --threads 1 -o "$T/t1"
    status_is 0
    run "$FTRUN" "$DATA/big.json" --threads 2 -o "$T/t2"
    status_is 0
    run "$FTRUN" "$DATA/big.json" --threads=2 -n 3 -o "$T/t2b"
    status_is 0
    py '
d1, d2, d3 = sys.argv[1:4]
for name, shape in (("p", (384, 512)), ("t", (384, 512)), ("m", (512,))):
    a = np.load(d1 + "/" + name + ".npy")
    for d in (d2, d3):
        b = np.load(d + "/" + name + ".npy")
        assert a.shape == b.shape == shape, (name, a.shape, b.shape)
        assert np.isfinite(a).all(), name
        assert np.allclose(a, b, rtol=1e-5, atol=1e-6), (name, np.abs(a - b).max())
# internal consistency: softmax rows sum to 1, m is the mean of t over axis 0
p = np.load(d1 + "/p.npy"); t = np.load(d1 + "/t.npy"); m = np.load(d1 + "/m.npy")
assert np.allclose(p.sum(axis=1), 1, atol=1e-5)
assert np.allclose(m, t.mean(axis=0), rtol=1e-5, atol=1e-6)' "$T/t1" "$T/t2" "$T/t2b"
}

# --- --seed -------------------------------------------------------------------------------

@test "random init follows the documented Philox generator (graph seeds)" {
    run "$FTRUN" "$DATA/random.json" -o "$T/o"
    status_is 0
    "$PYTHON" "$TESTS_DIR/cli/philox.py" uniform 3 20 -1 1 float32 "$T/u.npy"
    "$PYTHON" "$TESTS_DIR/cli/philox.py" normal 11 6 0.5 2 float64 "$T/g.npy"
    py '
u = np.load(sys.argv[1]); g = np.load(sys.argv[2])
ru = np.load(sys.argv[3]).reshape(4, 5); rg = np.load(sys.argv[4])
assert u.dtype == np.float32 and u.shape == (4, 5), (u.dtype, u.shape)
assert np.array_equal(u, ru), (u, ru)
assert g.dtype == np.float64 and np.allclose(g, rg, rtol=1e-14, atol=1e-14), (g, rg)' \
        "$T/o/ucopy.npy" "$T/o/gcopy.npy" "$T/u.npy" "$T/g.npy"
}

@test "--seed N replaces the seed of every uniform/normal init (Philox with seed N)" {
    run "$FTRUN" "$DATA/random.json" --seed 5 -o "$T/o"
    status_is 0
    "$PYTHON" "$TESTS_DIR/cli/philox.py" uniform 5 20 -1 1 float32 "$T/u.npy"
    "$PYTHON" "$TESTS_DIR/cli/philox.py" normal 5 6 0.5 2 float64 "$T/g.npy"
    py '
u = np.load(sys.argv[1]); g = np.load(sys.argv[2])
assert np.array_equal(u, np.load(sys.argv[3]).reshape(4, 5))
assert np.allclose(g, np.load(sys.argv[4]), rtol=1e-14, atol=1e-14)' \
        "$T/o/ucopy.npy" "$T/o/gcopy.npy" "$T/u.npy" "$T/g.npy"
}

@test "--seed: a different seed changes the values, the same seed gives the same values" {
    run "$FTRUN" "$DATA/random.json" -o "$T/default"
    status_is 0
    run "$FTRUN" "$DATA/random.json" --seed 1234 -o "$T/s1"
    status_is 0
    run "$FTRUN" "$DATA/random.json" --seed=1234 -o "$T/s2"
    status_is 0
    run "$FTRUN" "$DATA/random.json" --seed 1235 -o "$T/s3"
    status_is 0
    for f in ucopy gcopy fcopy kcopy; do cmp "$T/s1/$f.npy" "$T/s2/$f.npy"; done
    py '
d0, d1, d3 = sys.argv[1:4]
for name in ("ucopy", "gcopy"):
    a, b, c = (np.load(d + "/" + name + ".npy") for d in (d0, d1, d3))
    assert not np.array_equal(a, b), name
    assert not np.array_equal(b, c), name
u = np.load(d1 + "/ucopy.npy")
assert (u >= -1).all() and (u < 1).all(), u
# fill and arange do not depend on the seed
for d in (d0, d1, d3):
    assert np.load(d + "/fcopy.npy").tolist() == [2.5] * 3
    k = np.load(d + "/kcopy.npy")
    assert k.dtype == np.int32 and k.tolist() == [2, 5, 8, 11], k' "$T/default" "$T/s1" "$T/s3"
}

@test "--seed accepts the largest value 2^63-1" {
    run "$FTRUN" "$DATA/random.json" --seed 9223372036854775807 -o "$T/o"
    status_is 0
    run "$FTRUN" "$DATA/random.json" --seed 9223372036854775808 -o "$T/o2"
    status_is 2
}

@test "repeated runs with the default seed are identical bit for bit" {
    run "$FTRUN" "$DATA/random.json" -o "$T/a"
    status_is 0
    run "$FTRUN" "$DATA/random.json" -o "$T/b" -n 3
    status_is 0
    for f in ucopy gcopy fcopy kcopy; do cmp "$T/a/$f.npy" "$T/b/$f.npy"; done
}

# --- --expect -------------------------------------------------------------------------------

@test "--expect DIR passes (exit 0) with NumPy goldens, says so on stderr" {
    small_goldens "$T/gold"
    run --separate-stderr "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o"
    status_is 0
    [[ "$stderr" == *"ftrun: expect: 2 outputs match"*gold* ]]
    [ -f "$T/o/s.npy" ] && [ -f "$T/o/r.npy" ]
}

@test "--expect FILE passes for a single-output graph" {
    npy "$T/x.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3) / 7'
    py '
x = np.load(sys.argv[1])
w = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
np.save(sys.argv[2], (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))' "$T/x.npy" "$T/y.npy"
    run "$FTRUN" "$DATA/input.json" -i x="$T/x.npy" --expect "$T/y.npy" -o "$T/o"
    status_is 0
    has "ftrun: expect: 1 output"
}

@test "--expect DIR fails (exit 1) naming the output, count, max error, position, got and expected" {
    small_goldens "$T/gold"
    # r = [[1.5, 0, 2], [0, 5.25, 0]]: make the golden at [1,1] 4.75
    py 'r = np.load(sys.argv[1]); r[1, 1] = 4.75; np.save(sys.argv[1], r)' "$T/gold/r.npy"
    run --separate-stderr "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o"
    status_is 1
    [[ "$stderr" == *"ftrun: expect: output 'r': 1 of 6 values out of tolerance"* ]]
    # the f32 defaults: atol 1e-5 scaled by the largest |expected| (4.75)
    [[ "$stderr" == *"(rtol=0.0001, atol=4.75e-05: 1e-05 x max |expected| 4.75)"* ]]
    [[ "$stderr" == *"max abs error 0.5"*"at [1,1] (got 5.25, expected 4.75)"* ]]
    # the matching output is not reported
    [[ "$stderr" != *"output 's'"* ]]
    # results are still written
    [ -f "$T/o/s.npy" ] && [ -f "$T/o/r.npy" ] && [ -f "$T/o/timing.json" ]
}

@test "--expect reports every failing output" {
    small_goldens "$T/gold"
    py 'a = np.load(sys.argv[1]); a[0, 0] += 1; np.save(sys.argv[1], a)' "$T/gold/s.npy"
    py 'a = np.load(sys.argv[1]); a[:] = 100; np.save(sys.argv[1], a)' "$T/gold/r.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o"
    status_is 1
    has "output 's': 1 of 6 values" "output 'r': 6 of 6 values"
}

@test "--expect FILE fails (exit 1) for an integer output off by one (ints are exact)" {
    npy "$T/y.npy" 'np.array([-1, -2, -4], np.int64)'
    run "$FTRUN" "$DATA/oddname.json" --expect "$T/y.npy" -o "$T/o"
    status_is 1
    has "output 'out/y:1'" "1 of 3" "at [2]" "got -3" "expected -4"
}

@test "--expect DIR looks for the sanitised output name" {
    mkdir "$T/gold"
    npy "$T/gold/out_y_1.npy" 'np.array([-1, -2, -3], np.int64)'
    run "$FTRUN" "$DATA/oddname.json" --expect "$T/gold" -o "$T/o"
    status_is 0
    has "ftrun: expect: 1 output"
    npy "$T/gold/out_y_1.npy" 'np.array([-1, -2, 3], np.int64)'
    run "$FTRUN" "$DATA/oddname.json" --expect "$T/gold" -o "$T/o"
    status_is 1
    has "output 'out/y:1'"
}

@test "--atol loosening makes a failing expectation pass" {
    small_goldens "$T/gold"
    py 'r = np.load(sys.argv[1]); r[1, 1] = 4.75; np.save(sys.argv[1], r)' "$T/gold/r.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o" --atol 0.4
    status_is 1
    has "atol=0.4"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o" --atol 0.6
    status_is 0
}

@test "--rtol loosening makes a failing expectation pass" {
    small_goldens "$T/gold"
    py 'r = np.load(sys.argv[1]); r[1, 1] = 4.75; np.save(sys.argv[1], r)' "$T/gold/r.npy"
    # 0.5 <= atol + 0.12 * 4.75 = 0.57 + atol
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o" --rtol=0.12
    status_is 0
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o" --rtol 0.1 --atol 0
    status_is 1
}

@test "--expect default f32 tolerance: rtol 1e-4 atol 1e-5" {
    # small.json's s[1,1] = 5.25: a relative error of 5e-5 passes, 1e-3 fails
    small_goldens "$T/ok"
    py 'a = np.load(sys.argv[1]); a[1, 1] = np.float32(5.25 * (1 + 5e-5)); np.save(sys.argv[1], a)' "$T/ok/s.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/ok" -o "$T/o"
    status_is 0
    small_goldens "$T/bad"
    py 'a = np.load(sys.argv[1]); a[1, 1] = np.float32(5.25 * (1 + 1e-3)); np.save(sys.argv[1], a)' "$T/bad/s.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/bad" -o "$T/o"
    status_is 1
    has "output 's'"
}

@test "--expect default f64 tolerance: rtol 1e-9 atol 1e-12" {
    npy "$T/ok.npy" 'np.array([[1000 * (1 + 5e-10), -250.5], [3.25, 0.001]])'
    run "$FTRUN" "$DATA/f64.json" --expect "$T/ok.npy" -o "$T/o"
    status_is 0
    npy "$T/bad.npy" 'np.array([[1000 * (1 + 1e-8), -250.5], [3.25, 0.001]])'
    run "$FTRUN" "$DATA/f64.json" --expect "$T/bad.npy" -o "$T/o"
    status_is 1
    has "output 'w'" "at [0,0]"
}

@test "--expect: NaN matches NaN and each inf only itself" {
    npy "$T/same.npy" 'np.array([np.nan, 1.5, np.inf, -np.inf, -2], np.float32)'
    run "$FTRUN" "$DATA/specials.json" --expect "$T/same.npy" -o "$T/o"
    status_is 0
    npy "$T/flip.npy" 'np.array([np.nan, 1.5, -np.inf, -np.inf, -2], np.float32)'
    run "$FTRUN" "$DATA/specials.json" --expect "$T/flip.npy" -o "$T/o" --atol 1e30
    status_is 1
    has "output 'w'" "1 of 5"
    npy "$T/nan.npy" 'np.array([0, 1.5, np.inf, -np.inf, -2], np.float32)'
    run "$FTRUN" "$DATA/specials.json" --expect "$T/nan.npy" -o "$T/o" --atol 1e30
    status_is 1
    has "output 'w'" "1 of 5"
}

@test "--expect DIR with a missing golden file: exit 3 naming output and file" {
    small_goldens "$T/gold"
    rm "$T/gold/r.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o"
    status_is 3
    is_error
    has "'r'" "gold/r.npy"
}

@test "--expect golden with another dtype: exit 3 naming output, file and dtypes" {
    npy "$T/y.npy" 'np.array([-1, -2, -3], np.int32)'
    run "$FTRUN" "$DATA/oddname.json" --expect "$T/y.npy" -o "$T/o"
    status_is 3
    is_error
    has "out/y:1" "y.npy"
    [[ "$output" == *i64* || "$output" == *int64* ]]
    [[ "$output" == *i32* || "$output" == *int32* ]]
}

@test "--expect golden with another shape: exit 3 naming output, file and shapes" {
    small_goldens "$T/gold"
    py 'np.save(sys.argv[1], np.load(sys.argv[1]).reshape(3, 2))' "$T/gold/s.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o"
    status_is 3
    is_error
    has "'s'" "s.npy" "[2,3]" "[3,2]"
}

@test "--expect FILE with a graph of two outputs is refused" {
    small_goldens "$T/gold"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold/s.npy" -o "$T/o"
    # a usage problem or an input problem, never a silent pass or a comparison result
    [ "$status" -eq 2 ] || [ "$status" -eq 3 ]
    is_error
    has "s.npy"
}

@test "--expect with a missing path: exit 3 naming it" {
    run "$FTRUN" "$DATA/small.json" --expect "$T/nothing-here" -o "$T/o"
    status_is 3
    is_error
    has "$T/nothing-here"
}

@test "-q with a passing --expect prints nothing; a failing one still prints the mismatch" {
    small_goldens "$T/gold"
    run --separate-stderr "$FTRUN" "$DATA/small.json" -q --expect "$T/gold" -o "$T/o"
    status_is 0
    [ -z "$stderr" ]
    py 'r = np.load(sys.argv[1]); r[1, 1] = 4.75; np.save(sys.argv[1], r)' "$T/gold/r.npy"
    run --separate-stderr "$FTRUN" "$DATA/small.json" -q --expect "$T/gold" -o "$T/o"
    status_is 1
    [[ "$stderr" == *"output 'r'"* ]]
}
