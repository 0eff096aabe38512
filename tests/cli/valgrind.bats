#!/usr/bin/env bats
# Memory errors and definite leaks under valgrind: every example graph, and the
# error paths (which free what they had loaded before returning).

bats_require_minimum_version 1.5.0
load helpers

VG_STATUS=99

# oneDNN (cpu/blas.c's f32 products) runs its SSE4.1 kernels here: valgrind
# emulates the AVX masked loads (vmaskmovps) of its AVX2 JIT kernels as
# full-width reads and reports reads past oneDNN's own buffers, and below the
# stack pointer, that the hardware never makes; the SSE4.1 kernels have no
# masked loads, so memcheck still sees every byte oneDNN reads, with no
# suppression needed.
vg() {
    DNNL_MAX_CPU_ISA=SSE41 valgrind -q --suppressions="$TESTS_DIR/cli/valgrind.supp" --trace-children=yes --leak-check=full --error-exitcode=$VG_STATUS --errors-for-leak-kinds=definite "$@"
}

# feed_args GRAPH: writes a random .npy for every graph input without a value source
# and prints one "--input=NAME=FILE" per line.
feed_args() {
    py '
g = json.load(open(sys.argv[1]))
names = {"f16": "float16", "bf16": "float32", "f32": "float32", "f64": "float64", "i8": "int8",
         "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "bool": "bool",
         "float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8",
         "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool_": "bool"}
rng = np.random.default_rng(0)
for name in g.get("inputs", []):
    t = g["tensors"][name]
    if any(k in t for k in ("data", "file", "init")):
        continue
    dt = np.dtype(names[t["dtype"]])
    shape = tuple(t["shape"])
    if dt.kind == "f":
        v = rng.standard_normal(shape).astype(dt)
    elif dt.kind == "b":
        v = rng.integers(0, 2, shape).astype(dt)
    else:
        v = rng.integers(0, 3, shape).astype(dt)
    path = sys.argv[2] + "/in_" + "".join(c if c.isalnum() else "_" for c in name) + ".npy"
    np.save(path, v)
    print("--input=%s=%s" % (name, path))' "$1" "$T"
}

# vg_graph GRAPH: runs the graph under valgrind with one thread and one iteration.
vg_graph() {
    local g=$1 args
    [ -f "$g" ] || { echo "missing example graph $g"; return 1; }
    mapfile -t args < <(feed_args "$g")
    run vg "$FTRUN" "$g" --threads 1 -w 0 -n 1 -q -o "$T/out-$(basename "$g" .json)" "${args[@]}"
    if [ "$status" -ne 0 ]; then
        echo "$g: exit $status"
        printf '%s\n' "$output"
        return 1
    fi
}

setup() {
    if ! command -v valgrind >/dev/null 2>&1; then
        skip "valgrind is not installed"
    fi
    if [ -n "${FTRUN_SANITIZED:-}" ]; then
        skip "the binary is built with sanitizers, which valgrind cannot run"
    fi
    [ -x "$FTRUN" ] || { echo "ftrun binary not found at $FTRUN" >&2; return 1; }
    T=$BATS_TEST_TMPDIR
    cd "$T" || return 1
}

@test "valgrind: graphs/mlp.json" {
    vg_graph "$GRAPHS/mlp.json"
    [ -f "$T/out-mlp/timing.json" ]
}

@test "valgrind: graphs/transformer_block.json" {
    vg_graph "$GRAPHS/transformer_block.json"
}

@test "valgrind: graphs/stats.json" {
    vg_graph "$GRAPHS/stats.json"
}

@test "valgrind: every other graphs/*.json (including the one fed by --input)" {
    n=0 fed=0
    for g in "$GRAPHS"/*.json; do
        case $(basename "$g") in
            # run by the tests above
            mlp.json | transformer_block.json | stats.json) ;;
            *) vg_graph "$g" ;;
        esac
        [ -n "$(feed_args "$g")" ] && fed=$((fed + 1))
        n=$((n + 1))
    done
    [ "$n" -ge 4 ]
    # at least one example graph takes its input from --input
    [ "$fed" -ge 1 ]
}

@test "valgrind: info, ops and devices" {
    run vg "$FTRUN" info "$GRAPHS/mlp.json"
    status_is 0
    run vg "$FTRUN" ops
    status_is 0
    run vg "$FTRUN" devices
    status_is 0
}

@test "valgrind: the test fixtures, with inputs, expectations and --format none" {
    npy "$T/x.npy" 'np.ones((2, 3), np.float32)'
    run vg "$FTRUN" "$DATA/input.json" --threads 1 -q -i x="$T/x.npy" -o "$T/a"
    status_is 0
    for g in small random specials oddname f64; do
        run vg "$FTRUN" "$DATA/$g.json" --threads 1 -q -o "$T/b-$g" -n 2 -w 1
        status_is 0
    done
    run vg "$FTRUN" "$DATA/small.json" --threads 1 -q --format none --dry-run
    status_is 0
}

@test "valgrind: convs through oneDNN (plain, blocked), ftrun's loops and the timed pick, with fused sums" {
    # oneDNN's JIT code (its AVX-512 kernels here) runs clean under valgrind:
    # no suppression is needed
    graph conv.json >/dev/null <<'EOF2'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": [1, 8, 10, 10], "init": {"normal": {"mean": 0, "std": 1}, "seed": 1}},
             "w1": {"dtype": "f32", "shape": [8, 8, 3, 3], "init": {"uniform": {"low": -0.1, "high": 0.1}, "seed": 2}},
             "b1": {"dtype": "f32", "shape": [8], "init": {"fill": 0.5}},
             "w2": {"dtype": "f32", "shape": [8, 1, 3, 3], "init": {"uniform": {"low": -0.3, "high": 0.3}, "seed": 3}},
             "w3": {"dtype": "f32", "shape": [8, 4, 1, 1], "init": {"uniform": {"low": -0.3, "high": 0.3}, "seed": 4}}},
 "inputs": [], "outputs": ["y3"],
 "nodes": [{"name": "c1", "op": "conv", "inputs": ["x", "w1", "b1", "x"], "outputs": ["y1"],
            "attrs": {"pads": [1, 1, 1, 1], "activation": "relu"}},
           {"name": "dw", "op": "conv", "inputs": ["y1", "w2"], "outputs": ["y2"],
            "attrs": {"group": 8, "strides": [2, 2], "auto_pad": "SAME_UPPER", "activation": "silu"}},
           {"name": "pw", "op": "conv", "inputs": ["y2", "w3", "", "y2"], "outputs": ["y3"],
            "attrs": {"group": 2, "activation": "clip", "activation_min": 0, "activation_max": 6}}]}
EOF2
    for impl in auto native plain blocked blocked-add; do
        FTRUN_CONV_IMPL=$impl run vg "$FTRUN" "$T/conv.json" --threads 1 -w 0 -n 2 -q -o "$T/o_$impl"
        if [ "$status" -ne 0 ]; then
            echo "FTRUN_CONV_IMPL=$impl: exit $status"
            printf '%s\n' "$output"
            return 1
        fi
    done
    py 'import sys
a = [np.load(sys.argv[1] + "/o_%s/y3.npy" % i) for i in ("auto", "native", "plain", "blocked", "blocked-add")]
assert all(np.allclose(a[0], b, rtol=1e-5, atol=1e-6) for b in a[1:])' "$T"
}

@test "valgrind: f32 products through oneDNN's matmul primitive, its 1x1 convolution (a packed constant freed) and the BLAS" {
    # matmul_dnnl.c: a constant b packed once (two runs), a bias with relu as
    # post-ops, a gemm with b transposed, a computed b read in place
    graph mmd.json >/dev/null <<'EOF2'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": [80, 64], "init": {"normal": {"mean": 0, "std": 1}, "seed": 1}},
             "w1": {"dtype": "f32", "shape": [64, 96], "init": {"uniform": {"low": -0.2, "high": 0.2}, "seed": 2}},
             "b1": {"dtype": "f32", "shape": [96], "init": {"fill": 0.1}},
             "w2": {"dtype": "f32", "shape": [48, 96], "init": {"uniform": {"low": -0.2, "high": 0.2}, "seed": 3}},
             "c2": {"dtype": "f32", "shape": [48], "init": {"fill": -0.1}},
             "a3": {"dtype": "f32", "shape": [100, 80], "init": {"normal": {"mean": 0, "std": 1}, "seed": 4}}},
 "inputs": [], "outputs": ["y3"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["x", "w1", "b1"], "outputs": ["y1"],
            "attrs": {"activation": "relu"}},
           {"name": "fc2", "op": "gemm", "inputs": ["y1", "w2", "c2"], "outputs": ["y2"],
            "attrs": {"trans_b": 1, "activation": "gelu"}},
           {"name": "fc3", "op": "matmul", "inputs": ["a3", "y2"], "outputs": ["y3"]}]}
EOF2
    for impl in blas dnnl conv; do
        FTRUN_MATMUL_IMPL=$impl run vg "$FTRUN" "$T/mmd.json" --threads 1 -w 0 -n 2 -q -o "$T/o_$impl"
        if [ "$status" -ne 0 ]; then
            echo "FTRUN_MATMUL_IMPL=$impl: exit $status"
            printf '%s\n' "$output"
            return 1
        fi
    done
    py 'import sys
a, b, c = (np.load(sys.argv[1] + "/o_%s/y3.npy" % i) for i in ("blas", "dnnl", "conv"))
assert a.shape == (100, 48) and np.allclose(a, b, rtol=1e-4, atol=1e-4) and np.allclose(a, c, rtol=1e-4, atol=1e-4)' "$T"
}

@test "valgrind: error paths exit with their code and leak nothing" {
    # graph errors (3)
    run vg "$FTRUN" "$T/missing.json"
    status_is 3
    printf '{"ftrun": 1,\n "name": @\n}\n' > "$T/syntax.json"
    run vg "$FTRUN" "$T/syntax.json"
    status_is 3
    graph mm.json >/dev/null <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
             "b": {"dtype": "f32", "shape": [4, 5], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]},
           {"name": "typo", "op": "softmx", "inputs": ["c"], "outputs": ["d"]}]}
EOF
    run vg "$FTRUN" "$T/mm.json"
    status_is 3
    run vg "$FTRUN" "$DATA/input.json" --threads 1
    status_is 3
    npy "$T/x64.npy" 'np.ones((2, 3))'
    run vg "$FTRUN" "$DATA/input.json" --threads 1 -i x="$T/x64.npy"
    status_is 3
    # a data error found while running (3)
    run vg "$FTRUN" "$DATA/intdiv.json" --threads 1 -o "$T/o"
    status_is 3
    # a mismatch (1)
    npy "$T/y.npy" 'np.array([-1, -2, -4], np.int64)'
    run vg "$FTRUN" "$DATA/oddname.json" --threads 1 --expect "$T/y.npy" -o "$T/o"
    status_is 1
    # usage (2) and an unwritable output dir (4)
    run vg "$FTRUN" "$DATA/small.json" -n 0
    status_is 2
    echo plain > "$T/file"
    run vg "$FTRUN" "$DATA/small.json" --threads 1 -o "$T/file/out"
    status_is 4
}
