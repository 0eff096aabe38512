#!/usr/bin/env bats
# ONNX sequences and optionals known at load time: the importer resolves
# SequenceConstruct/Empty/Insert/Erase/At/Length, SplitToSequence,
# ConcatFromSequence and Optional/OptionalHasElement/OptionalGetElement into
# plain tensors (src/onnx/onnx_seq.c); a sequence or optional graph input or
# output is its tensors (src/onnx/onnx_seq_io.c: NAME.0 ... NAME.{n-1} and
# NAME.len); SequenceMap and a Loop carrying a sequence are unrolled at load
# (src/onnx/onnx_loop.c); a sequence passed to another op is refused (exit
# status 3).
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

# A model with a sequence input S of [2,3] floats and a tensor t: out = S with t
# inserted at the front, same = S, n = len(S).
seq_io_model() {
    py '
import onnx
from onnx import helper as h, TensorProto as TP
seq = lambda n: h.make_tensor_sequence_value_info(n, TP.FLOAT, [2, 3])
zero = h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", TP.INT64, [], [0]))
nodes = [zero, h.make_node("SequenceInsert", ["S", "t", "zero"], ["out"]), h.make_node("Identity", ["S"], ["same"]),
         h.make_node("SequenceLength", ["S"], ["n"])]
g = h.make_graph(nodes, "seqio", [seq("S"), h.make_tensor_value_info("t", TP.FLOAT, [2, 3])],
                 [seq("out"), seq("same"), h.make_tensor_value_info("n", TP.INT64, [])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1])' "$T/seqio.onnx"
}

@test "ONNX: a sequence input from -i S=FILE.npz (0.npy ... N-1.npy) and sequence outputs as NAME.k and NAME.len" {
    seq_io_model
    py '
rng = np.random.default_rng(5)
S = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
np.savez(sys.argv[1] + "/S3.npz", **{"2": S[2], "0": S[0], "1": S[1]})   # members in any order
np.savez(sys.argv[1] + "/S0.npz")                                          # an empty sequence
np.save(sys.argv[1] + "/t.npy", rng.standard_normal((2, 3)).astype(np.float32))' "$T"
    run "$FTRUN" run "$T/seqio.onnx" -i S="$T/S3.npz" -i t="$T/t.npy" -o "$T/o3" -q
    [ "$status" -eq 0 ]
    run "$FTRUN" run "$T/seqio.onnx" -i S="$T/S0.npz" -i t="$T/t.npy" -o "$T/o0" -q --format npz
    [ "$status" -eq 0 ]
    py '
import os
d = sys.argv[1]
z = np.load(d + "/S3.npz")
S, t = [z[str(k)] for k in range(3)], np.load(d + "/t.npy")
o = lambda n: np.load(d + "/o3/" + n + ".npy")
want = [t] + S
for k, w in enumerate(want):
    assert np.array_equal(o("out.%d" % k), w), k
assert o("out.len").dtype == np.int64 and o("out.len") == 4
for k in range(3):
    assert np.array_equal(o("same.%d" % k), S[k])
assert o("same.len") == 3 and o("n") == 3
assert not os.path.exists(d + "/o3/out.4.npy") and not os.path.exists(d + "/o3/same.3.npy")
z0 = np.load(d + "/o0/outputs.npz")
assert sorted(z0.files) == ["n", "out.0", "out.len", "same.len"], z0.files
assert np.array_equal(z0["out.0"], t) and z0["out.len"] == 1 and z0["same.len"] == 0 and z0["n"] == 0' "$T"
}

@test "ONNX: a sequence input given in the wrong layout is an error (exit status 3), nothing written" {
    seq_io_model
    py '
a = np.ones((2, 3), np.float32)
np.save(sys.argv[1] + "/a.npy", a)
np.savez(sys.argv[1] + "/keys.npz", x=a, y=a)
np.savez(sys.argv[1] + "/gap.npz", **{"0": a, "2": a})
np.savez(sys.argv[1] + "/dtype.npz", **{"0": a.astype(np.float64)})' "$T"
    run --separate-stderr "$FTRUN" run "$T/seqio.onnx" -i S="$T/a.npy" -i t="$T/a.npy" -o "$T/o1" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "input 'S' is a sequence; ftrun fixes its length at load: give it with -i S=FILE.npz holding 0.npy ... N-1.npy" ]]
    [ ! -e "$T/o1" ]
    run --separate-stderr "$FTRUN" run "$T/seqio.onnx" -i S="$T/keys.npz" -i t="$T/a.npy" -o "$T/o2" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "no member S.npy (members: x, y); a sequence input takes members 0.npy ... N-1.npy" ]]
    run --separate-stderr "$FTRUN" run "$T/seqio.onnx" -i S="$T/gap.npz" -i t="$T/a.npy" -o "$T/o3" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "no member S.npy (members: 0, 2); a sequence input takes members 0.npy ... N-1.npy" ]]
    run --separate-stderr "$FTRUN" run "$T/seqio.onnx" -i S="$T/dtype.npz" -i t="$T/a.npy" -o "$T/o4" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "input 'S': tensor 0 (" && "$stderr" =~ "has dtype f64; the model declares f32" ]]
    # a sequence for a tensor input
    run --separate-stderr "$FTRUN" run "$T/seqio.onnx" -i S="$T/gap.npz" -i t="$T/gap.npz" -o "$T/o5" -q
    [ "$status" -eq 3 ]
    [ ! -e "$T/o2" ] && [ ! -e "$T/o3" ] && [ ! -e "$T/o4" ] && [ ! -e "$T/o5" ]
}

@test "ONNX: ftrun test reads SequenceProto inputs and outputs; a malformed one fails the case" {
    seq_io_model
    mkdir -p "$T/case/test_data_set_0"
    cp "$T/seqio.onnx" "$T/case/model.onnx"
    py '
import onnx
from onnx import numpy_helper as nh
d = sys.argv[1] + "/case/test_data_set_0/"
rng = np.random.default_rng(7)
S = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]
t = rng.standard_normal((2, 3)).astype(np.float32)
w = lambda name, p: open(d + name, "wb").write(p.SerializeToString())
w("input_0.pb", nh.from_list(S, "S"))
w("input_1.pb", nh.from_array(t, "t"))
w("output_0.pb", nh.from_list([t] + S, "out"))
w("output_1.pb", nh.from_list(S, "same"))
w("output_2.pb", nh.from_array(np.array(2, np.int64), "n"))' "$T"
    run "$FTRUN" test "$T/case"
    [ "$status" -eq 0 ]
    [[ "$output" =~ "1 passed, 0 failed" ]]
    # an expected sequence one tensor longer fails
    py '
from onnx import numpy_helper as nh
d = sys.argv[1] + "/case/test_data_set_0/"
S = [np.zeros((2, 3), np.float32)] * 3
open(d + "output_1.pb", "wb").write(nh.from_list(S, "same").SerializeToString())' "$T"
    run "$FTRUN" test "$T/case"
    [ "$status" -ne 0 ]
    [[ "$output" =~ "output 'same' is a sequence of 2 tensors;" && "$output" =~ "holds 3" ]]
    # a truncated SequenceProto input
    head -c 7 "$T/case/test_data_set_0/input_0.pb" > "$T/trunc.pb"
    mv "$T/trunc.pb" "$T/case/test_data_set_0/input_0.pb"
    run "$FTRUN" test "$T/case"
    [ "$status" -ne 0 ]
    [[ "$output" =~ "not an ONNX SequenceProto file (the protobuf is malformed or truncated)" || "$output" =~ "tensor 0" ]]
}

@test "ONNX: SequenceMap (a sequence and a tensor input, two outputs) unrolls to NumPy's values" {
    inputs
    py '
import onnx
from onnx import helper as h, TensorProto as TP
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
body = h.make_graph([h.make_node("Mul", ["a", "b"], ["p"]), h.make_node("Neg", ["a"], ["q"])], "b",
                    [f("a", [2, 3, 4]), f("b", [2, 3, 4])], [f("p", [2, 3, 4]), f("q", [2, 3, 4])])
g = h.make_graph([h.make_node("Add", ["x", "y"], ["xy"]),
                  h.make_node("SequenceConstruct", ["x", "xy", "y"], ["s"]),
                  h.make_node("SequenceMap", ["s", "y"], ["m", "n"], body=body),
                  h.make_node("ConcatFromSequence", ["m"], ["cat"], axis=0)], "map",
                 [f("x", [2, 3, 4]), f("y", [2, 3, 4])],
                 [f("cat", [6, 3, 4]), h.make_tensor_sequence_value_info("n", TP.FLOAT, [2, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/seq_map.onnx")
# two sequences of different lengths
g = h.make_graph([h.make_node("SequenceConstruct", ["x", "y"], ["s"]),
                  h.make_node("SequenceConstruct", ["y"], ["t"]),
                  h.make_node("SequenceMap", ["s", "t"], ["m", "n"], body=body),
                  h.make_node("ConcatFromSequence", ["m"], ["cat"], axis=0)], "map",
                 [f("x", [2, 3, 4]), f("y", [2, 3, 4])], [f("cat", [4, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/seq_map_bad.onnx")' "$T"
    run "$FTRUN" run "$T/seq_map.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
d = sys.argv[1]
x, y = np.load(d + "/x.npy"), np.load(d + "/y.npy")
assert np.allclose(np.load(d + "/out/cat.npy"), np.concatenate([x * y, (x + y) * y, y * y], 0), atol=1e-6)
for k, w in enumerate([-x, -(x + y), -y]):
    assert np.array_equal(np.load(d + "/out/n.%d.npy" % k), w), k
assert np.load(d + "/out/n.len.npy") == 3' "$T"
    run --separate-stderr "$FTRUN" run "$T/seq_map_bad.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/o2" -q
    [ "$status" -ne 0 ]
    [[ "$stderr" =~ "SequenceMap" && "$stderr" =~ "input 1 is a sequence of 1 tensors, input 0 one of 2" ]]
    [ ! -e "$T/o2" ]
}

@test "ONNX: a Loop carrying a sequence unrolls to NumPy's values; a sequence passed to Scan is refused (exit 3)" {
    inputs
    py '
import onnx
from onnx import helper as h, TensorProto as TP
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
i64 = lambda name, v: h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", TP.INT64, [], [v]))
body = h.make_graph([h.make_node("Identity", ["c"], ["c2"]),
                     h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
                     h.make_node("Mul", ["x", "fi"], ["xi"]),
                     h.make_node("SequenceInsert", ["sin", "xi"], ["sout"])], "b",
                    [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
                     h.make_tensor_sequence_value_info("sin", TP.FLOAT, None)],
                    [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_sequence_value_info("sout", TP.FLOAT, None)])
g = h.make_graph([i64("three", 3), h.make_node("SequenceConstruct", ["y"], ["s0"]),
                  h.make_node("Loop", ["three", "", "s0"], ["s"], body=body),
                  h.make_node("ConcatFromSequence", ["s"], ["y_out"], axis=0)], "loop",
                 [f("x", [2, 3, 4]), f("y", [2, 3, 4])], [f("y_out", [8, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/loop_seq.onnx")
sb = h.make_graph([h.make_node("Identity", ["a"], ["b"])], "sb", [f("a", [3, 4])], [f("b", [3, 4])])
g = h.make_graph([h.make_node("SequenceConstruct", ["x"], ["s"]),
                  h.make_node("Scan", ["s"], ["y_out"], body=sb, num_scan_inputs=1)], "scan",
                 [f("x", [2, 3, 4])], [f("y_out", [2, 3, 4])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), sys.argv[1] + "/scan_seq.onnx")' "$T"
    run "$FTRUN" run "$T/loop_seq.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
d = sys.argv[1]
x, y = np.load(d + "/x.npy"), np.load(d + "/y.npy")
assert np.allclose(np.load(d + "/out/y_out.npy"), np.concatenate([y, 0 * x, x, 2 * x], 0), atol=1e-6)' "$T"
    run --separate-stderr "$FTRUN" run "$T/scan_seq.onnx" -i x="$T/x.npy" -o "$T/o3" -q
    [ "$status" -eq 3 ]
    [[ "$stderr" =~ "Scan" && "$stderr" =~ "is a sequence" ]]
    [ ! -e "$T/o3" ]
}
