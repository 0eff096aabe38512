#!/usr/bin/env bats
# ONNX sequences and optionals known at load time: the importer resolves
# SequenceConstruct/Empty/Insert/Erase/At/Length, SplitToSequence,
# ConcatFromSequence and Optional/OptionalHasElement/OptionalGetElement into
# plain tensors (src/onnx/onnx_seq.c); a sequence graph output, or a sequence
# passed to another op, is refused as unsupported (exit status 3).
# Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# The inputs both models read.
inputs() {
    py '
rng = np.random.default_rng(3)
np.save(sys.argv[1] + "/x.npy", rng.standard_normal((2, 3, 4)).astype(np.float32))
np.save(sys.argv[1] + "/y.npy", rng.standard_normal((2, 3, 4)).astype(np.float32))' "$T"
}

@test "ONNX: SequenceConstruct, Insert, Erase, At, Length and ConcatFromSequence give NumPy's values" {
    inputs
    py '
import onnx
from onnx import helper as h, TensorProto as TP
i64 = lambda name, v: h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", TP.INT64, [], [v]))
nodes = [i64("one", 1), i64("minus3", -3), i64("minus1", -1),
         h.make_node("Add", ["x", "y"], ["xy"]),
         h.make_node("SequenceConstruct", ["x", "y"], ["s1"]),                # [x, y]
         h.make_node("SequenceInsert", ["s1", "xy", "one"], ["s2"]),          # [x, x+y, y]
         h.make_node("SequenceInsert", ["s2", "x"], ["s3"]),                  # [x, x+y, y, x]
         h.make_node("SequenceErase", ["s3", "minus3"], ["s4"]),             # [x, y, x]
         h.make_node("SequenceErase", ["s4"], ["s5"]),                       # [x, y]
         h.make_node("SequenceEmpty", [], ["e"], dtype=TP.FLOAT),
         h.make_node("SequenceInsert", ["e", "y"], ["s6"]),                  # [y]
         h.make_node("SequenceAt", ["s2", "one"], ["at"]),
         h.make_node("SequenceAt", ["s4", "minus1"], ["last"]),
         h.make_node("SequenceLength", ["s3"], ["len3"]),
         h.make_node("SequenceLength", ["e"], ["len0"]),
         h.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=1),
         h.make_node("ConcatFromSequence", ["s5"], ["stack"], axis=-1, new_axis=1),
         h.make_node("ConcatFromSequence", ["s6"], ["one_elem"], axis=0)]
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
outs = [f("at", [2, 3, 4]), f("last", [2, 3, 4]), h.make_tensor_value_info("len3", TP.INT64, []),
        h.make_tensor_value_info("len0", TP.INT64, []), f("cat", [2, 9, 4]), f("stack", [2, 3, 4, 2]),
        f("one_elem", [2, 3, 4])]
g = h.make_graph(nodes, "seq", [f("x", [2, 3, 4]), f("y", [2, 3, 4])], outs)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1])' "$T/seq.onnx"
    run "$FTRUN" run "$T/seq.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
d = sys.argv[1]
x, y = np.load(d + "/x.npy"), np.load(d + "/y.npy")
want = {"at": x + y, "last": x, "len3": np.int64(4), "len0": np.int64(0),
        "cat": np.concatenate([x, x + y, y], 1), "stack": np.stack([x, y], -1), "one_elem": y}
for name, w in want.items():
    got = np.load(d + "/out/" + name + ".npy")
    assert got.dtype == np.asarray(w).dtype and got.shape == np.shape(w), (name, got.dtype, got.shape)
    assert np.allclose(got, w, atol=1e-6), name' "$T"
    # nothing of the sequences is left at run time: only the add and the concats run
    run "$FTRUN" info "$T/seq.onnx" -i x="$T/x.npy" -i y="$T/y.npy"
    [ "$status" -eq 0 ]
    [[ "$output" =~ SequenceInsert\ 3 ]]
}

@test "ONNX: SplitToSequence (pieces of 1 without keepdims, a scalar split, a list of sizes) and optionals" {
    inputs
    py '
import onnx
from onnx import helper as h, TensorProto as TP
c = lambda name, dims, v: h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", TP.INT64, dims, v))
nodes = [c("two", [], [2]), c("sizes", [2], [1, 2]), c("last", [], [-1]), c("zero", [], [0]), c("one", [], [1]),
         h.make_node("SplitToSequence", ["x"], ["p"], axis=2, keepdims=0),        # 4 of [2, 3]
         h.make_node("SequenceAt", ["p", "last"], ["p_last"]),
         h.make_node("ConcatFromSequence", ["p"], ["p_stack"], axis=0, new_axis=1),
         h.make_node("SplitToSequence", ["x", "two"], ["q"], axis=1),              # [2, 2, 4], [2, 1, 4]
         h.make_node("SequenceLength", ["q"], ["q_len"]),
         h.make_node("SequenceAt", ["q", "one"], ["q_1"]),
         h.make_node("SplitToSequence", ["x", "sizes"], ["r"], axis=-2),           # [2, 1, 4], [2, 2, 4]
         h.make_node("SequenceAt", ["r", "zero"], ["r_0"]),
         h.make_node("ConcatFromSequence", ["r"], ["r_cat"], axis=1),
         h.make_node("Optional", ["y"], ["o"]),
         h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(TP.FLOAT, [])),
         h.make_node("OptionalHasElement", ["o"], ["has"]),
         h.make_node("OptionalHasElement", ["none"], ["has_none"]),
         h.make_node("OptionalGetElement", ["o"], ["got"]),
         h.make_node("Neg", ["got"], ["neg"])]
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
outs = [f("p_last", [2, 3]), f("p_stack", [4, 2, 3]), h.make_tensor_value_info("q_len", TP.INT64, []),
        f("q_1", [2, 1, 4]), f("r_0", [2, 1, 4]), f("r_cat", [2, 3, 4]),
        h.make_tensor_value_info("has", TP.BOOL, []), h.make_tensor_value_info("has_none", TP.BOOL, []),
        f("neg", [2, 3, 4])]
g = h.make_graph(nodes, "split", [f("x", [2, 3, 4]), f("y", [2, 3, 4])], outs)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), sys.argv[1])' "$T/split.onnx"
    run "$FTRUN" run "$T/split.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
d = sys.argv[1]
x, y = np.load(d + "/x.npy"), np.load(d + "/y.npy")
want = {"p_last": x[:, :, 3], "p_stack": np.moveaxis(x, 2, 0), "q_len": np.int64(2), "q_1": x[:, 2:],
        "r_0": x[:, :1], "r_cat": x, "has": np.bool_(True), "has_none": np.bool_(False), "neg": -y}
for name, w in want.items():
    got = np.load(d + "/out/" + name + ".npy")
    assert got.dtype == np.asarray(w).dtype and got.shape == np.shape(w), (name, got.dtype, got.shape)
    assert (got == w).all(), name' "$T"
}

@test "ONNX: a sequence graph output, or a sequence passed to another op, is refused (exit status 3)" {
    inputs
    py '
import onnx
from onnx import helper as h, TensorProto as TP, ValueInfoProto
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
g = h.make_graph([h.make_node("SequenceConstruct", ["x", "x"], ["s"])], "out", [f("x", [2, 3, 4])],
                 [h.make_tensor_sequence_value_info("s", TP.FLOAT, [2, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/seq_out.onnx")
untyped = ValueInfoProto()
untyped.name = "s"
g = h.make_graph([h.make_node("SequenceConstruct", ["x", "x"], ["s"])], "out", [f("x", [2, 3, 4])], [untyped])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/seq_out_untyped.onnx")
g = h.make_graph([h.make_node("SequenceConstruct", ["x"], ["s"]), h.make_node("Identity", ["s"], ["y"])], "id",
                 [f("x", [2, 3, 4])], [f("y", [2, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/seq_identity.onnx")' "$T"
    run --separate-stderr "$FTRUN" run "$T/seq_out.onnx" -i x="$T/x.npy" -o "$T/o1" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "does not support" ]]
    [[ "$stderr" =~ "output 's' is a sequence, map or optional value (graph outputs must be tensors)" ]]
    [ ! -e "$T/o1" ]
    run --separate-stderr "$FTRUN" run "$T/seq_out_untyped.onnx" -i x="$T/x.npy" -o "$T/o2" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "output 's' is a sequence or optional value (graph outputs must be tensors" ]]
    run --separate-stderr "$FTRUN" run "$T/seq_identity.onnx" -i x="$T/x.npy" -o "$T/o3" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "(Identity, opset 17): input 0 ('s') is a sequence" ]]
}
