#!/usr/bin/env bats
# Shapes known only at run time: the data-dependent ops (non_zero, compress,
# unique, non_max_suppression), what reads their outputs, and how results,
# comparisons, refusals and `info` treat them. Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# The stand-in device of device.bats (tests/device/): its kernels are the
# CPU's, with FAKE_PERTURB_OP to make one op diverge.
setup_file() { fake_device_build; }

# x -> (x > 0) -> non_zero -> transpose; compress of the flattened x by the
# same mask; unique of that with its counts; the unique values squared.
graph() {
    cat > "$T/dyn.json" <<'JSON'
{"ftrun": 1, "name": "dyn",
 "tensors": {"x": {"dtype": "f32", "shape": [3, 4]}, "zero": {"dtype": "f32", "shape": [], "data": [0]}},
 "inputs": ["x"], "outputs": ["idxT", "sel", "u", "cnt", "y"],
 "nodes": [
  {"name": "pos", "op": "greater", "inputs": ["x", "zero"], "outputs": ["m"]},
  {"name": "nz", "op": "non_zero", "inputs": ["m"], "outputs": ["idx"]},
  {"name": "t", "op": "transpose", "inputs": ["idx"], "outputs": ["idxT"], "attrs": {"perm": [1, 0]}},
  {"name": "flat", "op": "reshape", "inputs": ["x"], "outputs": ["xf"], "attrs": {"shape": [-1]}},
  {"name": "mf", "op": "reshape", "inputs": ["m"], "outputs": ["mflat"], "attrs": {"shape": [-1]}},
  {"name": "cmp", "op": "compress", "inputs": ["xf", "mflat"], "outputs": ["sel"]},
  {"name": "uq", "op": "unique", "inputs": ["sel"], "outputs": ["u", "first", "inv", "cnt"]},
  {"name": "sq", "op": "mul", "inputs": ["u", "u"], "outputs": ["y"]}]}
JSON
}

check_outputs() { # $1: the -i file, $2: the output folder
    py '
x = np.load(sys.argv[1]); o = sys.argv[2]
m = x > 0
u, c = np.unique(x.reshape(-1)[m.reshape(-1)], return_counts=True)
want = {"idxT": np.array(np.nonzero(m)).T, "sel": x.reshape(-1)[m.reshape(-1)], "u": u, "cnt": c, "y": u * u}
for k, w in want.items():
    g = np.load(o + "/" + k + ".npy")
    assert g.shape == w.shape and (g == w).all(), (k, g, w)' "$1" "$2"
}

@test "dynamic: results have the shapes the run gave, equal to NumPy's, run after run" {
    graph
    py 'np.save(sys.argv[1], np.array([[1, -2, 3, 3], [0, 5, -1, 1], [3, 2, 2, -7]], np.float32))' "$T/x.npy"
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -o "$T/out" -n 5 -q
    [ "$status" -eq 0 ]
    check_outputs "$T/x.npy" "$T/out"
}

@test "dynamic: every output empty (no element passes) is written with a zero-length dim" {
    graph
    py 'np.save(sys.argv[1], -np.ones((3, 4), np.float32))' "$T/neg.npy"
    run "$FTRUN" run "$T/dyn.json" -i x="$T/neg.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    check_outputs "$T/neg.npy" "$T/out"
}

@test "dynamic: --expect compares with the run's shape; another shape is a mismatch (exit 1) that says both" {
    graph
    py 'np.save(sys.argv[1], np.array([[1, -2, 3, 3], [0, 5, -1, 1], [3, 2, 2, -7]], np.float32))' "$T/x.npy"
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -o "$T/ref" -q
    [ "$status" -eq 0 ]
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -o "$T/o2" --expect "$T/ref" -q
    [ "$status" -eq 0 ]
    py 'np.save(sys.argv[1] + "/u.npy", np.array([1, 2, 3], np.float32))' "$T/ref"
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -o "$T/o3" --expect "$T/ref"
    [ "$status" -eq 1 ]
    [[ "$output" == *"output 'u'"*"the run gave shape [4], expected [3]"* ]]
}

@test "dynamic: an expected array of another rank is refused before the run (exit 3)" {
    graph
    py 'np.save(sys.argv[1], np.ones((3, 4), np.float32))' "$T/x.npy"
    mkdir -p "$T/ref"
    py 'np.save(sys.argv[1], np.zeros((2, 2), np.int64))' "$T/ref/idxT.npy" # the rank of idxT: accepted
    for k in sel u cnt y; do py 'np.save(sys.argv[1], np.zeros((2, 2), np.float32))' "$T/ref/$k.npy"; done
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -o "$T/o" --expect "$T/ref"
    [ "$status" -eq 3 ]
    [[ "$output" == *"--expect: output 'sel'"* ]]
    [ ! -e "$T/o" ]
}

@test "dynamic: a compress condition true past the end of the axis is exit 3 naming node, op and position" {
    cat > "$T/c.json" <<'JSON'
{"ftrun": 1, "name": "c",
 "tensors": {"x": {"dtype": "f32", "shape": [2, 3]}, "cond": {"dtype": "bool", "shape": [4]}},
 "inputs": ["x", "cond"], "outputs": ["y"],
 "nodes": [{"name": "cmp", "op": "compress", "inputs": ["x", "cond"], "outputs": ["y"], "attrs": {"axis": 1}}]}
JSON
    py 'np.save(sys.argv[1], np.ones((2, 3), np.float32)); np.save(sys.argv[2], np.array([1, 0, 1, 1], bool))' \
        "$T/x.npy" "$T/cond.npy"
    run "$FTRUN" run "$T/c.json" -i x="$T/x.npy" -i cond="$T/cond.npy" -o "$T/o"
    [ "$status" -eq 3 ]
    [[ "$output" == *"node 'cmp' (compress)"*"position 3, past the end of the axis (3)"* ]]
    [ ! -e "$T/o" ]
    # false past the end: those slices are dropped, as NumPy's compress does
    py 'np.save(sys.argv[1], np.array([1, 0, 1, 0], bool))' "$T/cond.npy"
    run "$FTRUN" run "$T/c.json" -i x="$T/x.npy" -i cond="$T/cond.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'g = np.load(sys.argv[1]); assert g.shape == (2, 2) and (g == 1).all(), g' "$T/o/y.npy"
}

@test "dynamic: --check and --check-nodes on a device follow the run's shapes and name a diverging dynamic node" {
    graph
    py 'np.save(sys.argv[1], np.array([[1, -2, 3, 3], [0, 5, -1, 1], [3, 2, 2, -7]], np.float32))' "$T/x.npy"
    fake run --separate-stderr "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -d cuda -o "$T/o" --check --check-nodes
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"check-nodes: all 8 nodes on cuda:0 match the cpu reference given the same inputs"* ]]
    check_outputs "$T/x.npy" "$T/o"
    FAKE_PERTURB_OP=mul fake run --separate-stderr "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -d cuda -o "$T/o2" \
        --check-nodes
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"first divergence at node 'sq' (mul) output 'y' on cuda:0 against cpu: 1 of 4 values"* ]]
}

@test "dynamic: --cuda-graph refuses a graph with run-time shapes (exit 2) naming the data-dependent node" {
    graph
    py 'np.save(sys.argv[1], np.ones((3, 4), np.float32))' "$T/x.npy"
    fake run --separate-stderr "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" -d cuda -o "$T/o" --cuda-graph
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--cuda-graph does not take a graph whose shapes are known only at run time (node 'nz' (non_zero)"* ]]
    [ ! -e "$T/o" ]
}

@test "dynamic: info and --dry-run name the run-time shapes and the nodes they follow" {
    graph
    run "$FTRUN" info "$T/dyn.json"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time shapes: 8 tensors, after 'nz' (non_zero), 'cmp' (compress), 'uq' (unique)"* ]]
    [[ "$output" == *"non_zero (dynamic)"* && "$output" == *"mul (dynamic)"* ]]
    [[ "$output" != *"greater (dynamic)"* ]]
    py 'np.save(sys.argv[1], np.ones((3, 4), np.float32))' "$T/x.npy"
    run "$FTRUN" run "$T/dyn.json" -i x="$T/x.npy" --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time shapes: 8 tensors"* ]]
}

@test "dynamic: ONNX NonZero -> Transpose -> GatherND runs; a Shape of NonZero's output gives its run-time shape" {
    py '
import onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
         helper.make_node("GatherND", ["x", "idx"], ["vals"])]
y = helper.make_tensor_value_info("vals", TensorProto.FLOAT, ["n"])
onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 13)]),
          sys.argv[1])
nodes.append(helper.make_node("Shape", ["nz"], ["s"]))
s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y, s]), opset_imports=[helper.make_opsetid("", 13)]),
          sys.argv[2])
np.save(sys.argv[3], np.array([[0, 1.5, 0, 2], [3, 0, 0, 0], [0, 0, -1, 0]], np.float32))' "$T/nz.onnx" "$T/shape.onnx" "$T/x.npy"
    run "$FTRUN" run "$T/nz.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.load(sys.argv[1]); g = np.load(sys.argv[2]); w = x[np.nonzero(x)]
assert g.shape == w.shape and (g == w).all(), (g, w)' "$T/x.npy" "$T/o/vals.npy"
    run "$FTRUN" run "$T/shape.onnx" -i x="$T/x.npy" -o "$T/o2" -q
    [ "$status" -eq 0 ]
    py 'x = np.load(sys.argv[1]); g = np.load(sys.argv[2]); w = np.array(np.array(np.nonzero(x)).shape)
assert g.shape == w.shape and (g == w).all(), (g, w)' "$T/x.npy" "$T/o2/s.npy"
}
