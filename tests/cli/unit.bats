#!/usr/bin/env bats
# The numbers themselves: the run statistics of timing.json and the summary
# line given known times (NumPy recomputes them), and the memory plan of
# multi-node graphs checked tensor by tensor (tests/unit/unit.c, linked
# against the objects of the ftrun under test).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    local b
    b=$(cd "$(dirname "$FTRUN")" && pwd)
    local objs=()
    # the objects of today's sources only (a build folder may keep those of removed files)
    while IFS= read -r o; do
        [ -f "$ROOT/${o#"$b"/}" ] && objs+=("${o%.c}.o")
    done < <(cd "$b" && find src -name '*.o' ! -path '*/cli/main.o' ! -path '*/cuda/*' | sed 's/\.o$/.c/' | sort | sed "s|^|$b/|")
    local san=()
    [ -n "${FTRUN_SANITIZED:-}" ] && san=(-fsanitize=address,undefined)
    cc -std=gnu11 -O1 -g "${san[@]}" -I"$ROOT/src" -I"$b/gen" -rdynamic -o "$BATS_FILE_TMPDIR/unit" "$TESTS_DIR/unit/unit.c" \
        "${objs[@]}" "$b/gen/onnx.pb-c.o" \
        -lcjson -lprotobuf-c -ldnnl -lopenblas -lfftw3f_omp -lfftw3_omp -lfftw3f -lfftw3 -lz -lm -ldl -fopenmp \
        -ljpeg -lpng16 -lwebp -ltiff -lopenjp2 -lstb
}

UNIT() { "$BATS_FILE_TMPDIR/unit" "$@"; }

# Compares `unit stats` on the given times with NumPy (percentiles by linear
# interpolation between closest ranks, numpy.percentile's default).
stats_match_numpy() {
    run UNIT stats "$@"
    status_is 0
    py '
got = dict(l.split() for l in sys.argv[1].splitlines())
v = np.array([float(x) for x in sys.argv[2:]])
want = {"min": v.min(), "median": np.percentile(v, 50), "mean": v.mean(),
        "p90": np.percentile(v, 90), "p99": np.percentile(v, 99), "max": v.max()}
for k, w in want.items():
    assert abs(float(got[k]) - w) <= 1e-12 * max(1.0, abs(w)), (k, got[k], w)
' "$output" "$@"
}

@test "statistics: known times, percentiles as numpy.percentile computes them" {
    stats_match_numpy 5 1 4 2 3
    stats_match_numpy 10 20
    stats_match_numpy 7
    stats_match_numpy 0.5 0.25 8 1 1 1 2 3 100 0.125 9
    # 300 times (more than the sorting buffer on the stack holds)
    stats_match_numpy $(py 'rng = np.random.default_rng(1); print(" ".join("%.6f" % x for x in rng.exponential(1.0, 300)))')
}

@test "statistics: p90 of 1..10 is 9.1 and p99 of 1..100 is 99.01 (not the value at q*n)" {
    run UNIT stats 1 2 3 4 5 6 7 8 9 10
    py 'd = dict(l.split() for l in sys.argv[1].splitlines()); assert abs(float(d["p90"]) - 9.1) < 1e-12, d' "$output"
    run UNIT stats $(seq 1 100)
    py 'd = dict(l.split() for l in sys.argv[1].splitlines()); assert abs(float(d["p99"]) - 99.01) < 1e-12, d' "$output"
}

@test "statistics: timing.json and the summary line agree with each other on a real run" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" -n 120 -o "$T/o"
    status_is 0
    py '
import re
t = json.load(open(sys.argv[1]))["run_ms"]
line = [l for l in sys.argv[2].splitlines() if l.startswith("ftrun: small:")][0]
m = re.search(r"min ([0-9.]+), median ([0-9.]+), mean ([0-9.]+), p90 ([0-9.]+), p99 ([0-9.]+) ms", line)
assert m, line
for k, v in zip(("min", "median", "mean", "p90", "p99"), m.groups()):
    assert abs(t[k] - float(v)) <= 0.0005 + 1e-9, (k, t[k], v)
assert t["min"] <= t["median"] <= t["p90"] <= t["p99"] <= t["max"]
' "$T/o/timing.json" "$stderr"
}

@test "memory plan: the example graphs and the test graphs never share bytes between live tensors (but a reshape-like node's hand-over)" {
    run UNIT plan "$GRAPHS"/mlp.json "$GRAPHS"/transformer_block.json "$GRAPHS"/stats.json "$DATA"/small.json
    status_is 0
    [ "$(printf '%s\n' "$output" | grep -c ': ok ')" -eq 4 ]
}

# A chain where every node reads its input in an order other than it writes
# its output (transpose, matmul, reversed cumsum, softmax over a column): an
# output placed over its own input, or over a tensor still to be read, gives
# wrong values on the CPU.
hazard_graph() {
    graph hz.json <<'JSON'
{"ftrun": 1, "name": "hazards",
 "tensors": {"x": {"dtype": "f32", "shape": [64, 64], "init": {"uniform": {"low": -1, "high": 1}, "seed": 7}},
             "w": {"dtype": "f32", "shape": [64, 64], "init": {"uniform": {"low": -1, "high": 1}, "seed": 8}}},
 "outputs": ["y", "z"],
 "nodes": [
   {"name": "t1", "op": "transpose", "inputs": ["x"], "outputs": ["a"], "attrs": {"perm": [1, 0]}},
   {"name": "m1", "op": "matmul", "inputs": ["a", "a"], "outputs": ["b"]},
   {"name": "t2", "op": "transpose", "inputs": ["b"], "outputs": ["c"], "attrs": {"perm": [1, 0]}},
   {"name": "c1", "op": "cumsum", "inputs": ["c"], "outputs": ["d"], "attrs": {"axis": 1, "reverse": 1}},
   {"name": "s1", "op": "softmax", "inputs": ["d"], "outputs": ["e"], "attrs": {"axis": 0}},
   {"name": "m2", "op": "matmul", "inputs": ["e", "w"], "outputs": ["f"]},
   {"name": "t3", "op": "transpose", "inputs": ["f"], "outputs": ["g"], "attrs": {"perm": [1, 0]}},
   {"name": "a1", "op": "add", "inputs": ["g", "c"], "outputs": ["y"]},
   {"name": "m3", "op": "matmul", "inputs": ["g", "e"], "outputs": ["z"]}
 ]}
JSON
}

@test "memory plan: a multi-node graph with in-place hazards is planned safely and computes NumPy's values on the cpu" {
    hazard_graph
    run UNIT plan "$T/hz.json"
    status_is 0
    run --separate-stderr "$FTRUN" "$T/hz.json" -d cpu -n 1 -o "$T/o" --threads 1
    status_is 0
    "$FTRUN" unpack "$T/hz.json" -o "$T/u" -q
    py '
d, u = sys.argv[1], sys.argv[2]
x = np.load(u + "/x.npy").astype(np.float64); w = np.load(u + "/w.npy").astype(np.float64)
a = x.T; b = a @ a; c = b.T
dd = np.flip(np.cumsum(np.flip(c, 1), 1), 1)
e = np.exp(dd - dd.max(0)); e = e / e.sum(0)
f = e @ w; g = f.T
y = g + c; z = g @ e
for name, want in (("y", y), ("z", z)):
    got = np.load(d + "/" + name + ".npy")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
' "$T/o" "$T/u"
}

# --- the default thread count (src/runtime/threads.c) ----------------------------

@test "idle cores: busy processes beside it take cores off the default thread count, at least 1 is left" {
    local pids=() k
    for k in 1 2; do sh -c 'while :; do :; done' & pids+=($!); done
    sleep 0.2
    run UNIT idle 64
    local r64=$status o64=$output
    run UNIT idle 2
    local r2=$status o2=$output
    run UNIT idle 1
    local r1=$status o1=$output
    kill "${pids[@]}"
    [ "$r64" -eq 0 ] && [ "$r2" -eq 0 ] && [ "$r1" -eq 0 ]
    # the two busy processes are always ready to run; any other load only lowers the count
    (( o64 >= 1 && o64 <= 62 )) || { echo "idle 64 beside 2 busy processes: $o64"; return 1; }
    [ "$o2" -eq 1 ] || { echo "idle 2 beside 2 busy processes: $o2"; return 1; }
    [ "$o1" -eq 1 ] || { echo "idle 1: $o1"; return 1; }
}

@test "idle cores: the caller's own busy threads are not load" {
    # 64 spinning threads of its own: counted as load they would leave at most 4032 of 4096
    run UNIT idle 4096 64
    status_is 0
    (( output > 4032 && output <= 4096 )) || { echo "idle 4096 with 64 own busy threads: $output"; return 1; }
}
