#!/usr/bin/env bats
# ONNX If on a condition known only at run time (src/onnx/onnx_if.c): both
# branches become nodes guarded by the condition (ft_node.guard), the executor
# skips the branch not taken, and if_select gives the taken value. A model
# converted without -i keeps the If for run time; so does a condition
# computed from a data-dependent op. Models from tests/cli/onnx_if_models.py;
# expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    fake_device_build
    "$PYTHON" "$TESTS_DIR/cli/onnx_if_models.py" "$BATS_FILE_TMPDIR"
}

M=${BATS_FILE_TMPDIR:-}

# runs ARGS...: `ftrun run ARGS` three times (-n 3) succeeds
runs() {
    run "$FTRUN" run "$@" -q -n 3
    [ "$status" -eq 0 ]
}

# conv NAME: the model converted to a binary graph with nothing given at load
conv() {
    run "$FTRUN" convert "$M/$1.onnx" -o "$T/$1.ftg"
    [ "$status" -eq 0 ]
}

@test "onnx If: a run-time condition (sum(x) > 0) with outer-scope values gives NumPy's values both ways, -n 3" {
    conv basic
    for x in x xneg; do
        runs "$T/basic.ftg" -i x="$M/$x.npy" -o "$T/o_$x"
    done
    py '
m, t = sys.argv[1], sys.argv[2]
w = np.array([0.5, -1.0, 2.0, 1.5], np.float32)
seen = set()
for n in ("x", "xneg"):
    x = np.load(f"{m}/{n}.npy")
    seen.add(bool(x.sum() > 0))
    y = np.maximum(x * w, 0) if x.sum() > 0 else np.abs(x) - np.float32(1)
    got = np.load(f"{t}/o_{n}/z.npy")
    assert np.allclose(got, y + x, rtol=1e-6, atol=1e-6), (n, got, y + x)
assert seen == {True, False}' "$M" "$T"
}

@test "onnx If: the graph keeps its guards through convert to JSON and back, and runs the same" {
    run "$FTRUN" convert "$M/basic.onnx" -o "$T/basic.json"
    [ "$status" -eq 0 ]
    py '
d = json.load(open(sys.argv[1]))
g = {n["name"]: n.get("guard") for n in d["nodes"]}
assert g["Mul_0"] == "c" and g["Relu_1"] == "c", g
assert g["Abs_0"] == g["Sub_1"] != None and g["Abs_0"] != "c", g
assert sum(v is not None for v in g.values()) == 4, g' "$T/basic.json"
    run "$FTRUN" run "$T/basic.json" -i x="$M/xneg.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py '
x = np.load(sys.argv[1])
assert np.allclose(np.load(sys.argv[2]), np.abs(x) - 1 + x, rtol=1e-6, atol=1e-6)' "$M/xneg.npy" "$T/o/z.npy"
}

@test "onnx If: a condition computed at load from -i values still folds the If (no guards)" {
    run "$FTRUN" info "$M/basic.onnx" -i x="$M/x.npy"
    [ "$status" -eq 0 ]
    [[ "$output" == *"If 1)"* ]]
    [[ "$output" != *"guarded"* ]]
}

@test "onnx If: the branch not taken is skipped: its out-of-range Gather does not fail; taken, it fails (exit 3)" {
    conv fail
    runs "$T/fail.ftg" -i c="$M/f.npy" -i x="$M/x.npy" -i idx="$M/idx.npy" -o "$T/of"
    py 'x = np.load(sys.argv[1]); assert np.allclose(np.load(sys.argv[2]), x.sum(0, keepdims=True), rtol=1e-6, atol=1e-6)' \
        "$M/x.npy" "$T/of/y.npy"
    run --separate-stderr "$FTRUN" run "$T/fail.ftg" -i c="$M/t.npy" -i x="$M/x.npy" -i idx="$M/idx.npy" -o "$T/ot"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'Gather_0' (gather): index 7 at position [0] of indices 'idx' is out of range"* ]]
    [ ! -e "$T/ot" ]
    run "$FTRUN" run "$T/fail.ftg" -i c="$M/t.npy" -i x="$M/x.npy" -i idx="$M/idx1.npy" -o "$T/ot1" -q
    [ "$status" -eq 0 ]
    py 'x = np.load(sys.argv[1]); assert np.array_equal(np.load(sys.argv[2]), x[[1]])' "$M/x.npy" "$T/ot1/y.npy"
}

@test "onnx If: an If nested in a branch on a condition computed there, all four ways, -n 3" {
    conv nested
    for a in t f; do
        for x in xpos xneg; do
            runs "$T/nested.ftg" -i a="$M/$a.npy" -i x="$M/$x.npy" -o "$T/o_$a$x"
        done
    done
    py '
m, t = sys.argv[1], sys.argv[2]
for a in "tf":
    for n in ("xpos", "xneg"):
        x = np.load(f"{m}/{n}.npy")
        y = (x * 2 if x.max() > 1 else x + 3) if a == "t" else np.tanh(x)
        got = np.load(f"{t}/o_{a}{n}/y.npy")
        assert np.allclose(got, y, rtol=1e-6, atol=1e-6), (a, n, got, y)
assert np.load(f"{m}/xpos.npy").max() > 1 and np.load(f"{m}/xneg.npy").max() <= 1' "$M" "$T"
}

# initruns NAME TAG NAME=FILE...: NAME converted (its If kept for run time) and run with those -i values
# into $T/r_NAME_TAG, and NAME.onnx run with them (the If folded at load) into $T/f_NAME_TAG
initruns() {
    local name=$1 tag=$2 v
    local -a ins=()
    shift 2
    for v in "$@"; do
        ins+=(-i "$v")
    done
    conv "$name"
    runs "$T/$name.ftg" "${ins[@]}" -o "$T/r_${name}_$tag"
    runs "$M/$name.onnx" "${ins[@]}" -o "$T/f_${name}_$tag"
}

@test "onnx If: branches with initializers of one name and other values each read their own" {
    for c in t f; do
        initruns initsame $c c="$M/$c.npy" x="$M/x2.npy"
    done
    run "$FTRUN" info "$T/initsame.ftg"
    [[ "$output" == *"guarded nodes: 2"* ]]
    py '
t, x = sys.argv[1], np.load(sys.argv[2])
for r in "rf":
    assert np.array_equal(np.load(f"{t}/{r}_initsame_t/y.npy"), x + np.float32(1)), r
    assert np.array_equal(np.load(f"{t}/{r}_initsame_f/y.npy"), x + np.float32(100)), r' "$T" "$M/x2.npy"
}

@test "onnx If: a branch initializer shadows the outer value of its name in the branch only, read before or after" {
    for c in t f; do
        initruns initshadow $c c="$M/$c.npy" x="$M/x2.npy"
    done
    py '
t, x = sys.argv[1], np.load(sys.argv[2])
k, m = np.float32(5), np.float32(3)
for r in "rf":
    assert np.array_equal(np.load(f"{t}/{r}_initshadow_t/z.npy"), (x * k + np.float32(1)) * np.float32(2) + m), r
    assert np.array_equal(np.load(f"{t}/{r}_initshadow_f/z.npy"), x * k - k + m), r' "$T" "$M/x2.npy"
}

@test "onnx If: in nested Ifs each initializer is seen in its own branch and the outer one again after it" {
    for a in t f; do
        for b in t f; do
            initruns initnested $a$b a="$M/$a.npy" b="$M/$b.npy" x="$M/x2.npy"
        done
    done
    py '
t, x = sys.argv[1], np.load(sys.argv[2])
for a in "tf":
    for b in "tf":
        inner = x + np.float32(10 if b == "t" else 20)
        z = (inner * np.float32(10) if a == "t" else x - np.float32(1)) + np.float32(1)
        for r in "rf":
            got = np.load(f"{t}/{r}_initnested_{a}{b}/z.npy")
            assert np.array_equal(got, z), (r, a, b, got, z)' "$T" "$M/x2.npy"
}

@test "onnx If: branches of different shapes give a run-time shape, and what follows it" {
    conv dyn
    run "$FTRUN" info "$T/dyn.ftg"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time shapes:"*"(if_select)"* ]]
    for c in t f; do
        runs "$T/dyn.ftg" -i c="$M/$c.npy" -i x="$M/x.npy" -o "$T/o_$c"
    done
    py '
m, t = sys.argv[1], sys.argv[2]
x = np.load(f"{m}/x.npy")
for c, y in (("t", x[:2]), ("f", 1 / (1 + np.exp(-x)))):
    gy, gz = np.load(f"{t}/o_{c}/y.npy"), np.load(f"{t}/o_{c}/z.npy")
    assert gy.shape == y.shape and np.allclose(gy, y, rtol=1e-6, atol=1e-6), (c, gy.shape)
    assert np.allclose(gz, y.sum(0), rtol=1e-5, atol=1e-6), (c, gz)' "$M" "$T"
}

@test "onnx If: an expensive branch with an If inside runs only when taken, -n 3" {
    conv heavy
    for c in t f; do
        runs "$T/heavy.ftg" -i c="$M/$c.npy" -i x="$M/x64.npy" -o "$T/o_$c"
    done
    py '
import onnx
from onnx import numpy_helper as nh
m, t = sys.argv[1], sys.argv[2]
W = {i.name: nh.to_array(i) for i in onnx.load(f"{m}/heavy.onnx").graph.initializer}["W"].astype(np.float64)
x = np.load(f"{m}/x64.npy").astype(np.float64)
h2 = np.tanh(x @ W) @ W
yt = np.maximum(h2, 0) if h2.sum() > 0 else -h2
assert np.allclose(np.load(f"{t}/o_t/y.npy"), yt, rtol=1e-4, atol=1e-4)
assert np.array_equal(np.load(f"{t}/o_f/y.npy"), -np.load(f"{m}/x64.npy"))' "$M" "$T"
}

@test "onnx If: a condition from a NonZero is decided at run time even with -i" {
    for x in xs x; do
        runs "$M/nzif.onnx" -i x="$M/$x.npy" -o "$T/o_$x"
    done
    py '
m, t = sys.argv[1], sys.argv[2]
seen = set()
for n in ("xs", "x"):
    x = np.load(f"{m}/{n}.npy")
    s = np.array(np.nonzero(x)).sum()
    seen.add(bool(s > 10))
    assert np.array_equal(np.load(f"{t}/o_{n}/y.npy"), x * 2 if s > 10 else x - 2), n
assert seen == {True, False}' "$M" "$T"
    run "$FTRUN" info "$M/nzif.onnx" -i x="$M/x.npy"
    [ "$status" -eq 0 ]
    [[ "$output" == *"guarded nodes: 2"*"'Mul_0' if 'c'; 'Sub_0' if 'If_3/else_guard'"* ]]
}

@test "onnx If: a size test on a NonZero result's dim fixed at load folds (branches of other ranks); on its count, not" {
    for mdl in nzsq nzdim0; do
        for x in xs x; do
            runs "$M/$mdl.onnx" -i x="$M/$x.npy" -o "$T/${mdl}_$x"
        done
    done
    py '
import itertools
# nzsq: shape(e)[-1] == 1 holds, e squeezed; nzdim0: -e when the count is 1, else e
cols = {n: np.nonzero(np.load(f"{sys.argv[1]}/{n}.npy") > 0)[1].astype(np.float32) + np.float32(0.25) for n in ("xs", "x")}
assert sorted(e.size == 1 for e in cols.values()) == [False, True]
for (n, e), mdl in itertools.product(cols.items(), ("nzsq", "nzdim0")):
    want = e if mdl == "nzsq" else -e[:, None] if e.size == 1 else e[:, None]
    y = np.load(f"{sys.argv[2]}/{mdl}_{n}/y.npy")
    assert y.shape == want.shape and np.array_equal(y, want), (mdl, n, y, want)' "$M" "$T"
    run "$FTRUN" info "$M/nzsq.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"folded at load time ("*"If 1)"* ]]
    [[ "$output" != *"guarded nodes"* ]]
    run "$FTRUN" info "$M/nzdim0.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"guarded nodes: 1"*"'Neg_0' if 'c'"* ]]
}

@test "onnx If: info and --dry-run name the guarded nodes and their guards" {
    conv basic
    run "$FTRUN" info "$T/basic.ftg"
    [ "$status" -eq 0 ]
    [[ "$output" == *"guarded nodes: 4, each run only when its guard is true"*"'Mul_0', 'Relu_1' if 'c'; 'Abs_0', 'Sub_1' if 'If_2/else_guard'"* ]]
    [[ "$output" == *"relu (guarded)"* ]]
    run --separate-stderr "$FTRUN" run "$T/basic.ftg" -i x="$M/x.npy" --dry-run
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"guarded nodes: 4, run only when their guard is true: 'Mul_0', 'Relu_1' if 'c'"* ]]
}

@test "onnx If: on a device the guard is read back; --check-nodes compares what ran; --cuda-graph refuses (exit 2)" {
    conv nested
    for a in t f; do
        fake run --separate-stderr "$FTRUN" run "$T/nested.ftg" -i a="$M/$a.npy" -i x="$M/xpos.npy" -d cuda -o "$T/o_$a" \
            --check --check-nodes
        [ "$status" -eq 0 ]
        [[ "$stderr" == *"check-nodes: all 11 nodes on cuda:0 match the cpu reference"* ]]
    done
    py '
x = np.load(sys.argv[1])
assert np.allclose(np.load(sys.argv[2]), x * 2, rtol=1e-6) and np.allclose(np.load(sys.argv[3]), np.tanh(x), rtol=1e-6)' \
        "$M/xpos.npy" "$T/o_t/y.npy" "$T/o_f/y.npy"
    fake run --separate-stderr "$FTRUN" run "$T/nested.ftg" -i a="$M/t.npy" -i x="$M/xpos.npy" -d cuda -o "$T/og" --cuda-graph
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--cuda-graph does not take a graph with nodes that run on a condition known only at run time (6 guarded nodes, the first 'ReduceMax_0' (reduce_max), guard 'a')"* ]]
    [ ! -e "$T/og" ]
}

# guard.json: y = c ? relu(x @ w + b) : e (all 7); the add and relu guarded by c
guard_graph() {
    cat > "$T/guard.json" <<'JSON'
{"ftrun": 1, "name": "guard",
 "tensors": {"c": {"dtype": "bool", "shape": []}, "x": {"dtype": "f32", "shape": [2, 3]},
             "w": {"dtype": "f32", "shape": [3, 4], "init": {"arange": {"start": 0, "step": 0.25}}},
             "b": {"dtype": "f32", "shape": [4], "data": [1, -2, 3, -40]},
             "e": {"dtype": "f32", "shape": [2, 4], "init": {"fill": 7}}},
 "inputs": ["c", "x"], "outputs": ["y"],
 "nodes": [{"name": "mm", "op": "matmul", "inputs": ["x", "w"], "outputs": ["h"]},
           {"name": "bias", "op": "add", "inputs": ["h", "b"], "outputs": ["hb"], "guard": "c"},
           {"name": "act", "op": "relu", "inputs": ["hb"], "outputs": ["r"], "guard": "c"},
           {"name": "pick", "op": "if_select", "inputs": ["c", "r", "e"], "outputs": ["y"]}]}
JSON
}

@test "guard in a JSON graph: the guarded nodes run on their condition; nothing is fused across the guard" {
    guard_graph
    py 'np.save(sys.argv[1], np.arange(6, dtype=np.float32).reshape(2, 3) - 2)' "$T/x.npy"
    for c in t f; do
        run "$FTRUN" run "$T/guard.json" -i c="$M/$c.npy" -i x="$T/x.npy" -o "$T/o_$c" -q
        [ "$status" -eq 0 ]
    done
    py '
t = sys.argv[1]
x = np.load(f"{t}/x.npy"); w = (np.arange(12, dtype=np.float32) * 0.25).reshape(3, 4)
h = x @ w
assert np.allclose(np.load(f"{t}/o_t/y.npy"), np.maximum(h + np.array([1, -2, 3, -40], np.float32), 0), rtol=1e-6)
assert np.array_equal(np.load(f"{t}/o_f/y.npy"), np.full((2, 4), 7, np.float32))' "$T"
    run "$FTRUN" info "$T/guard.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"matmul_epi 0"* ]]
    # the same graph without guards fuses the add and the relu into the matmul (2 rewrites)
    py '
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    n.pop("guard", None)
json.dump(d, open(sys.argv[2], "w"))' "$T/guard.json" "$T/plain.json"
    run "$FTRUN" info "$T/plain.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"matmul_epi 2,"* ]]
}

# refused SED MESSAGE: guard.json edited by SED is refused by info (exit 3) with MESSAGE
refused() {
    sed "$1" "$T/guard.json" > "$T/bad.json"
    run --separate-stderr "$FTRUN" info "$T/bad.json"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"$2"* ]]
}

@test "guard in a JSON graph: a guard that is not one bool value, or names no tensor, is refused (exit 3)" {
    guard_graph
    refused '0,/"guard": "c"/s//"guard": "x"/' "node 'bias' (add): its guard 'x' must be one bool value, got f32 [2,3]"
    refused '0,/"guard": "c"/s//"guard": "nothing"/' "'nothing'"
    refused '0,/"guard": "c"/s//"guard": 3/' "node 'bias' (add): \"guard\" must be the name of a bool tensor, got a number"
}

@test "if_select refuses branches of different dtypes (exit 3); different dims give a run-time shape, different ranks a run-time rank" {
    guard_graph
    refused 's/"inputs": \["c", "r", "e"\]/"inputs": ["c", "r", "c"]/' \
        "node 'pick' (if_select): the branches give f32 [2,4] ('r') and bool [] ('c'); ftrun needs the same dtype"
    sed 's/"inputs": \["c", "r", "e"\]/"inputs": ["c", "r", "b"]/' "$T/guard.json" > "$T/ranks.json"
    py 'np.save(sys.argv[1], np.arange(6, dtype=np.float32).reshape(2, 3) - 2)' "$T/x.npy"
    for c in f t f; do
        run "$FTRUN" run "$T/ranks.json" -i c="$M/$c.npy" -i x="$T/x.npy" -o "$T/r_$c" -q -n 2
        [ "$status" -eq 0 ]
    done
    py '
t = sys.argv[1]
x = np.load(f"{t}/x.npy"); w = (np.arange(12, dtype=np.float32) * 0.25).reshape(3, 4); b = np.array([1, -2, 3, -40], np.float32)
g = np.load(f"{t}/r_t/y.npy")
assert g.shape == (2, 4) and np.allclose(g, np.maximum(x @ w + b, 0), rtol=1e-6), g
assert np.array_equal(np.load(f"{t}/r_f/y.npy"), b)' "$T"
    sed 's/"inputs": \["c", "r", "e"\]/"inputs": ["c", "r", "x"]/' "$T/guard.json" > "$T/dims.json"
    py 'np.save(sys.argv[1], np.arange(6, dtype=np.float32).reshape(2, 3))' "$T/x.npy"
    run "$FTRUN" run "$T/dims.json" -i c="$M/f.npy" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'g = np.load(sys.argv[1]); assert g.shape == (2, 3) and np.array_equal(g, np.load(sys.argv[2]))' "$T/o/y.npy" "$T/x.npy"
}

@test "onnx If: torch.jit.script If on an input flag, branches of ranks 2 and 1 and ops after it, gives PyTorch's values both ways" {
    conv tflag
    for g in "$T/tflag.ftg" "$M/tflag.onnx"; do
        for f in 0 1 0; do
            fl=$([ $f = 1 ] && echo t || echo f)
            rm -rf "$T/o"
            run --separate-stderr "$FTRUN" run "$g" -i x="$M/x54.npy" -i flag="$M/$fl.npy" -o "$T/o" -q -n 2
            [ "$status" -eq 0 ]
            py '
o, m, f = sys.argv[1:4]
for k in "zs":
    g, w = np.load(f"{o}/{k}.npy"), np.load(f"{m}/tflag.want{f}.{k}.npy")
    assert g.shape == w.shape and g.dtype == w.dtype and np.allclose(g, w, rtol=1e-5, atol=1e-6), (k, g, w)' "$T/o" "$M" $f
        done
    done
    run "$FTRUN" info "$T/tflag.ftg"
    [[ "$output" == *"run-time shapes:"*"(if_select)"* ]]
}

@test "onnx If: branches of different ranks on a device (the fake backend) with --check-nodes" {
    for f in t f; do
        rm -rf "$T/o"
        fake run --separate-stderr "$FTRUN" run "$M/tflag.onnx" -i x="$M/x54.npy" -i flag="$M/$f.npy" -o "$T/o" -q -d cuda --check --check-nodes
        [ "$status" -eq 0 ]
        py 'w = np.load(sys.argv[2]); g = np.load(sys.argv[1]); assert g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-6)' \
            "$T/o/z.npy" "$M/tflag.want$([ $f = t ] && echo 1 || echo 0).z.npy"
    done
}

@test "onnx If: a voice-activity-detector shape (torch.jit.script: If on the sample rate between convs of other output lengths, an LSTM after) gives PyTorch's values" {
    conv vad
    for sr in 16000 8000 16000; do
        rm -rf "$T/o"
        run --separate-stderr "$FTRUN" run "$T/vad.ftg" -i x="$M/vad.x.npy" -i sr="$M/sr$sr.npy" -i h="$M/vad.h.npy" \
            -i c="$M/vad.c.npy" -o "$T/o" -q -n 2
        [ "$status" -eq 0 ]
        py '
o, m, sr = sys.argv[1:4]
for k in ("p", "hn", "cn"):
    g, w = np.load(f"{o}/{k}.npy"), np.load(f"{m}/vad.want{sr}.{k}.npy")
    assert g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-6), (k, g, w)' "$T/o" "$M" $sr
    done
}
