#!/usr/bin/env bats
# The memory plan as `ftrun info`, --dry-run and timing.json report it.

bats_require_minimum_version 1.5.0
load helpers

# plan_numbers: parses the last `run`'s output into PEAK, UNPLANNED and WEIGHTS
# ("planned peak: N bytes", "unplanned: M bytes", "weights: W", on one line or several).
plan_numbers() {
    local flat
    flat=$(printf '%s\n' "$output" | tr '\n' ' ')
    [[ "$flat" =~ planned\ peak:\ +([0-9]+)\ bytes ]] || { echo "no planned peak in: $output" >&2; return 1; }
    PEAK=${BASH_REMATCH[1]}
    [[ "$flat" =~ unplanned:\ +([0-9]+)\ bytes ]] || { echo "no unplanned in: $output" >&2; return 1; }
    UNPLANNED=${BASH_REMATCH[1]}
    [[ "$flat" =~ weights:\ +([0-9]+) ]] || { echo "no weights in: $output" >&2; return 1; }
    WEIGHTS=${BASH_REMATCH[1]}
}

# A chain of 6 elementwise ops over 256 KiB tensors: at most two intermediates are
# alive at once, so a plan needs far less than the sum of all tensors.
chain_graph() {
    graph chain.json <<'EOF'
{"ftrun": 1, "name": "chain",
 "tensors": {"a": {"dtype": "f32", "shape": [256, 256], "init": {"fill": 0.5}}},
 "inputs": [], "outputs": ["out"],
 "nodes": [
   {"name": "n1", "op": "neg", "inputs": ["a"], "outputs": ["t1"]},
   {"name": "n2", "op": "exp", "inputs": ["t1"], "outputs": ["t2"]},
   {"name": "n3", "op": "neg", "inputs": ["t2"], "outputs": ["t3"]},
   {"name": "n4", "op": "exp", "inputs": ["t3"], "outputs": ["t4"]},
   {"name": "n5", "op": "neg", "inputs": ["t4"], "outputs": ["t5"]},
   {"name": "n6", "op": "exp", "inputs": ["t5"], "outputs": ["out"]}
 ]}
EOF
}

@test "info graphs/mlp.json: planned peak is smaller than the unplanned sum" {
    [ -f "$GRAPHS/mlp.json" ]
    # -O0: the graph as written (optimized, each layer is one matmul node and
    # no intermediate is left to share memory with)
    run --separate-stderr "$FTRUN" info -O0 "$GRAPHS/mlp.json"
    status_is 0
    plan_numbers
    echo "peak=$PEAK unplanned=$UNPLANNED weights=$WEIGHTS"
    [ "$PEAK" -gt 0 ]
    [ "$PEAK" -lt "$UNPLANNED" ]
    [ "$WEIGHTS" -gt 0 ]
    [ "$WEIGHTS" -lt "$UNPLANNED" ]
}

@test "info on every example graph: exit 0 and planned peak <= unplanned" {
    n=0
    for g in "$GRAPHS"/*.json; do
        run --separate-stderr "$FTRUN" info "$g"
        [ "$status" -eq 0 ] || { echo "info $g: exit $status: $stderr"; return 1; }
        plan_numbers
        [ "$PEAK" -le "$UNPLANNED" ] || { echo "$g: peak $PEAK > unplanned $UNPLANNED"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -ge 4 ]
}

@test "info: unplanned is the sum of all tensors, weights the sum of constants (small.json)" {
    run --separate-stderr "$FTRUN" info "$DATA/small.json"
    status_is 0
    plan_numbers
    # a 2x3 f32 (24) + b 3 f32 (12) + s 2x3 f32 (24) + r 2x3 f32 (24) = 84,
    # each buffer possibly rounded up to a 64-byte alignment (4 x 64 = 256)
    [ "$UNPLANNED" -ge 84 ] && [ "$UNPLANNED" -le 256 ]
    [ "$WEIGHTS" -eq 36 ]
    [ "$PEAK" -le "$UNPLANNED" ]
}

@test "info: a chain of ops reuses memory (peak well below the sum)" {
    g=$(chain_graph)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    plan_numbers
    t=$((256 * 256 * 4))
    [ "$UNPLANNED" -eq $((7 * t)) ]
    [ "$WEIGHTS" -eq "$t" ]
    # weights + output + two live intermediates, plus alignment slack
    [ "$PEAK" -le $((4 * t + 4096)) ]
    [ "$PEAK" -lt "$UNPLANNED" ]
}

@test "info -O0: reshape-like nodes that are their input's last reader take its block (no copy, no second block)" {
    g=$(graph views.json <<'EOF'
{"ftrun": 1, "name": "views",
 "tensors": {"a": {"dtype": "f32", "shape": [256, 256], "init": {"fill": 0.5}}},
 "inputs": [], "outputs": ["out"],
 "nodes": [
   {"name": "n1", "op": "neg", "inputs": ["a"], "outputs": ["t1"]},
   {"name": "r1", "op": "reshape", "inputs": ["t1"], "outputs": ["t2"], "attrs": {"shape": [1, 65536]}},
   {"name": "r2", "op": "squeeze", "inputs": ["t2"], "outputs": ["t3"], "attrs": {"axes": [0]}},
   {"name": "r3", "op": "unsqueeze", "inputs": ["t3"], "outputs": ["t4"], "attrs": {"axes": [1]}},
   {"name": "r4", "op": "flatten", "inputs": ["t4"], "outputs": ["t5"], "attrs": {"axis": 0}},
   {"name": "r5", "op": "identity", "inputs": ["t5"], "outputs": ["t6"]},
   {"name": "n2", "op": "exp", "inputs": ["t6"], "outputs": ["out"]}
 ]}
EOF
)
    run --separate-stderr "$FTRUN" info -O0 "$g"
    status_is 0
    plan_numbers
    t=$((256 * 256 * 4))
    # weights + output + one intermediate block that t1 .. t6 pass along
    [ "$PEAK" -eq $((3 * t)) ]
    run --separate-stderr "$FTRUN" run -O0 "$g" -o "$BATS_TEST_TMPDIR/o" -q
    status_is 0
    # exp(-0.5) = 0.6065306597126334
    run /usr/bin/python3 -c "import numpy as np, sys; y = np.load(sys.argv[1]); print(y.shape, abs(y - 0.6065306597126334).max() < 1e-7)" "$BATS_TEST_TMPDIR/o/out.npy"
    [ "$output" = "(1, 65536) True" ]
}

@test "info: node table gives FLOPs and bytes per node (matmul 2*M*N*K)" {
    run --separate-stderr "$FTRUN" info "$DATA/input.json"
    status_is 0
    # proj: [2,3] x [3,2] -> 2*2*2*3 = 24 FLOPs
    echo "$output" | grep -E "proj.*matmul.*\b24\b"
}

@test "info: FLOPs of lstm, det and qlinear_matmul follow man/ftrun.1's formulas" {
    g=$(graph flops.json <<'EOF'
{"ftrun": 1, "tensors": {
 "x": {"dtype": "f32", "shape": [5, 3, 4]},
 "w": {"dtype": "f32", "shape": [2, 24, 4], "init": {"fill": 0.1}},
 "r": {"dtype": "f32", "shape": [2, 24, 6], "init": {"fill": 0.1}},
 "m": {"dtype": "f64", "shape": [7, 5, 5]},
 "a": {"dtype": "u8", "shape": [8, 16]}, "b": {"dtype": "u8", "shape": [16, 4], "init": {"fill": 1}},
 "s": {"dtype": "f32", "shape": [], "init": {"fill": 0.5}}, "z": {"dtype": "u8", "shape": [], "init": {"fill": 1}}},
 "inputs": ["x", "m", "a"], "outputs": ["y", "d", "q"],
 "nodes": [{"name": "rec", "op": "lstm", "inputs": ["x", "w", "r"], "outputs": ["y"], "attrs": {"direction": "bidirectional"}},
           {"name": "lu", "op": "det", "inputs": ["m"], "outputs": ["d"]},
           {"name": "qmm", "op": "qlinear_matmul", "inputs": ["a", "s", "z", "b", "s", "z", "s", "z"], "outputs": ["q"]}]}
EOF
)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    # lstm T=5 B=3 I=4 H=6, D=2 directions of 4 gates: 2 T B (D 4H) (I + H) + 8 T B (D 4H)
    echo "$output" | grep -E "rec +lstm .* $((2 * 15 * 48 * 10 + 8 * 15 * 48)) "
    # det of 7 matrices 5x5: 7 (2 M^3 / 3 + M), the division rounded down
    echo "$output" | grep -E "lu +det .* $((7 * (2 * 125 / 3 + 5))) "
    # qlinear_matmul [8,16] x [16,4]: 2 M N K + 4 M N
    echo "$output" | grep -E "qmm +qlinear_matmul .* $((2 * 8 * 4 * 16 + 4 * 8 * 4)) "
}

@test "info on an invalid graph: exit 3 like run" {
    g=$(graph bad.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
                        "b": {"dtype": "f32", "shape": [4, 5], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" info "$g"
    status_is 3
    has "ftrun: error:" "node 'fc1' (matmul)" "[2,3]" "[4,5]"
}

@test "info does not need input values" {
    run --separate-stderr "$FTRUN" info "$DATA/input.json"
    status_is 0
    [[ "$stderr" != *"has no value"* ]]
    echo "$output" | grep -E "proj.*matmul"
}

@test "timing.json memory agrees with info" {
    g=$(chain_graph)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    plan_numbers
    run "$FTRUN" "$g" -o "$T/o" --format none
    status_is 0
    [ "$(jget "$T/o/timing.json" 'd["memory"]["planned_peak_bytes"]')" -eq "$PEAK" ]
    [ "$(jget "$T/o/timing.json" 'd["memory"]["unplanned_bytes"]')" -eq "$UNPLANNED" ]
    [ "$(jget "$T/o/timing.json" 'd["memory"]["weights_bytes"]')" -eq "$WEIGHTS" ]
}

@test "--dry-run reports the node count and the planned arena bytes of info" {
    g=$(chain_graph)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    plan_numbers
    run --separate-stderr "$FTRUN" "$g" --dry-run -o "$T/o"
    status_is 0
    [[ "$stderr" == *"6 nodes"* ]]
    [[ "$stderr" == *"$PEAK"* ]]
    [ ! -e "$T/o" ]
}

@test "the chain graph computes exp(-exp(-exp(-0.5)))" {
    g=$(chain_graph)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 0
    py '
o = np.load(sys.argv[1])
v = np.exp(-np.exp(-np.exp(np.float32(-0.5))))
assert o.shape == (256, 256) and np.allclose(o, v, rtol=1e-6), (o[0, 0], v)' "$T/o/out.npy"
}

# Three products with constant weights: w1 read by fc1 alone (packed, then
# freed), w2 read by fc2 and fc3 (kept), w4 also a graph output (kept); a
# relu over a NaN in x must stay NaN (ftrun's relu passes it).
packed_graph() {
    npy w1.npy 'np.random.default_rng(1).standard_normal((64, 96)).astype(np.float32)'
    npy b1.npy 'np.random.default_rng(2).standard_normal(96).astype(np.float32)'
    npy w2.npy 'np.random.default_rng(3).standard_normal((96, 96)).astype(np.float32) / 8'
    npy w4.npy 'np.random.default_rng(4).standard_normal((96, 32)).astype(np.float32) / 8'
    py 'x = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32); x[3, 5] = np.nan; np.save("x.npy", x)'
    graph packed.json <<'EOF2'
{"ftrun": 1, "name": "packed",
 "tensors": {"x": {"dtype": "f32", "shape": [128, 64]},
             "w1": {"dtype": "f32", "shape": [64, 96], "file": "w1.npy"},
             "b1": {"dtype": "f32", "shape": [96], "file": "b1.npy"},
             "w2": {"dtype": "f32", "shape": [96, 96], "file": "w2.npy"},
             "w4": {"dtype": "f32", "shape": [96, 32], "file": "w4.npy"}},
 "inputs": ["x"], "outputs": ["y", "w4"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["x", "w1", "b1"], "outputs": ["h1"], "attrs": {"activation": "relu"}},
           {"name": "fc2", "op": "matmul", "inputs": ["h1", "w2"], "outputs": ["h2"]},
           {"name": "fc3", "op": "matmul", "inputs": ["h2", "w2"], "outputs": ["h3"]},
           {"name": "fc4", "op": "matmul", "inputs": ["h3", "w4"], "outputs": ["y"]}]}
EOF2
}

# the NumPy result of packed_graph's y (float64), compared with ftrun's in $1
packed_check() {
    py 'ld = lambda f: np.load(f).astype(np.float64)
x, w1, b1, w2, w4 = (ld(f + ".npy") for f in ("x", "w1", "b1", "w2", "w4"))
s = x @ w1 + b1
h1 = np.where(np.isnan(s), s, np.maximum(s, 0))
want = h1 @ w2 @ w2 @ w4
got = np.load(sys.argv[1] + "/y.npy")
assert np.isnan(got[3]).all() and not np.isnan(np.delete(got, 3, 0)).any(), "the NaN row"
ok = ~np.isnan(want)
err = np.abs(got[ok] - want[ok]).max() / np.abs(want[ok]).max()
assert err < 1e-5, err
assert np.array_equal(np.load(sys.argv[1] + "/w4.npy"), np.load("w4.npy"))' "$1"
}

@test "run: a constant whose one reader packed it (the 1x1 convolution form of matmul) is freed; shared ones and outputs are kept; the results hold over several runs" {
    packed_graph
    FTRUN_MATMUL_IMPL=conv run "$FTRUN" "$T/packed.json" -i x=x.npy -w 2 -n 3 -v -o "$T/o"
    status_is 0
    has "1 constant (0.0 MB) freed after the kernels packed them into copies of their own"
    packed_check "$T/o"
    # as a binary graph, whose values are read in place from the file's mapping
    run "$FTRUN" pack "$T/packed.json" -o "$T/packed.ftg"
    status_is 0
    FTRUN_MATMUL_IMPL=conv run "$FTRUN" "$T/packed.ftg" -i x=x.npy -w 1 -n 2 -v -o "$T/b"
    status_is 0
    has "1 constant (0.0 MB) freed"
    packed_check "$T/b"
}

@test "run: nothing is freed for --check (its reference run reads the graph after the run), nor on the BLAS path" {
    packed_graph
    FTRUN_MATMUL_IMPL=conv run "$FTRUN" "$T/packed.json" -i x=x.npy -w 1 -n 2 -v --check -o "$T/o"
    status_is 0
    lacks "freed after"
    has "match the cpu reference"
    packed_check "$T/o"
    FTRUN_MATMUL_IMPL=blas run "$FTRUN" "$T/packed.json" -i x=x.npy -w 1 -n 2 -v -o "$T/p"
    status_is 0
    lacks "freed after"
    packed_check "$T/p"
}
