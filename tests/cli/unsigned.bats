#!/usr/bin/env bats
# u16, u32 and u64 through the ONNX importer: constants above INT64_MAX are not
# folded into wrong values at load time (the folder computes in int64), and
# TensorProto values in raw_data and in the typed fields read alike.
# Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

@test "ONNX: Greater, Div and Cast of u64 constants above 2^63 give NumPy's values" {
    py '
import onnx
from onnx import helper, TensorProto, numpy_helper
a = np.array([2**63 + 1, 5, 2**64 - 1], dtype=np.uint64)
b = np.array([1, 2**63, 3], dtype=np.uint64)
nodes = [helper.make_node("Constant", [], ["ca"], value=numpy_helper.from_array(a, "a")),
         helper.make_node("Constant", [], ["cb"], value=numpy_helper.from_array(b, "b")),
         helper.make_node("Greater", ["ca", "cb"], ["g"]), helper.make_node("Div", ["ca", "cb"], ["d"]),
         helper.make_node("Mod", ["ca", "cb"], ["m"]), helper.make_node("Max", ["ca", "cb"], ["x"]),
         helper.make_node("Cast", ["ca"], ["f"], to=TensorProto.DOUBLE)]
outs = [helper.make_tensor_value_info(n, t, [3]) for n, t in
        (("g", TensorProto.BOOL), ("d", TensorProto.UINT64), ("m", TensorProto.UINT64), ("x", TensorProto.UINT64),
         ("f", TensorProto.DOUBLE))]
m = helper.make_model(helper.make_graph(nodes, "t", [], outs), opset_imports=[helper.make_opsetid("", 17)])
onnx.save(m, sys.argv[1])' "$T/u64.onnx"
    run "$FTRUN" run "$T/u64.onnx" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
a = np.array([2**63 + 1, 5, 2**64 - 1], dtype=np.uint64)
b = np.array([1, 2**63, 3], dtype=np.uint64)
for name, want in (("g", a > b), ("d", a // b), ("m", a % b), ("x", np.maximum(a, b)), ("f", a.astype(np.float64))):
    got = np.load(sys.argv[1] + "/" + name + ".npy")
    assert got.dtype == want.dtype and (got == want).all(), (name, got, want)' "$T/out"
}

@test "TensorProto: u16 in int32_data, u32 and u64 in uint64_data read as from raw_data" {
    py '
import onnx
from onnx import helper, TensorProto
vals = {"u16": (TensorProto.UINT16, [0, 65535, 32768]), "u32": (TensorProto.UINT32, [0, 4294967295, 2147483648]),
        "u64": (TensorProto.UINT64, [0, 18446744073709551615, 9223372036854775808])}
for name, (t, v) in vals.items():
    for raw in (0, 1):
        if raw:
            data = np.array(v, dtype={"u16": np.uint16, "u32": np.uint32, "u64": np.uint64}[name]).tobytes()
            tp = helper.make_tensor(name, t, [3], data, raw=True)
        else:
            tp = helper.make_tensor(name, t, [3], v)
        open("%s/%s_%d.pb" % (sys.argv[1], name, raw), "wb").write(tp.SerializeToString())' "$T"
    for dt in u16 u32 u64; do
        for raw in 0 1; do
            run "$FTRUN" show "$T/${dt}_$raw.pb"
            [ "$status" -eq 0 ]
            echo "$output" | grep -q "$dt \[3\]"
        done
    done
    run "$FTRUN" show "$T/u64_0.pb"
    echo "$output" | grep -q "18446744073709551615"
}
