#!/usr/bin/env bats
# ONNX FlexAttention (ai.onnx.preview opset 1, src/onnx/onnx_ops_flexattn.c):
# the scores and probabilities built from ftrun ops, the score_mod and
# prob_mod graphs imported between them. A model that breaks the operator's
# rules (a modifier graph of another arity or output shape, Q/K/V shapes that
# do not agree) is refused with exit status 3 and a message naming the node,
# the op and what is wrong. Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# flex_model NAME KIND: fa.onnx with node 'fa' of Q [2,4,3,8], K [2,2,5,KE],
# V [2,2,5,4] (KE 8, or 6 for KIND kdim). KIND alibi: score_mod adds
# -(q_idx - k_idx) * 0.25 * (h + 1) built with Shape, Range and Reshape from
# the scores; mod2in: a score_mod of two inputs; probshape: a prob_mod whose
# output sums the last axis away; heads3: K and V with 3 heads; unsup: a
# score_mod holding an op ftrun does not map (a custom domain's).
flex_model() {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
kind = sys.argv[2]
vi = lambda n, s=None: h.make_tensor_value_info(n, TP.FLOAT, s)
ints = lambda n, v: nh.from_array(np.array(v, np.int64), n)
hk, ke = (3 if kind == "heads3" else 2), (6 if kind == "kdim" else 8)
nodes = [h.make_node("Shape", ["s"], ["shp"]),
         h.make_node("Gather", ["shp", "i1"], ["H"], axis=0), h.make_node("Gather", ["shp", "i2"], ["L"], axis=0),
         h.make_node("Gather", ["shp", "i3"], ["S"], axis=0),
         h.make_node("Range", ["zero", "H", "one"], ["hr"]), h.make_node("Reshape", ["hr", "hs"], ["hi"]),
         h.make_node("Range", ["zero", "L", "one"], ["qr"]), h.make_node("Reshape", ["qr", "qs"], ["qi"]),
         h.make_node("Range", ["zero", "S", "one"], ["kr"]), h.make_node("Reshape", ["kr", "ks"], ["ki"]),
         h.make_node("Sub", ["qi", "ki"], ["rel"]), h.make_node("Add", ["hi", "one"], ["h1"]),
         h.make_node("Mul", ["rel", "h1"], ["relh"]), h.make_node("Cast", ["relh"], ["relf"], to=TP.FLOAT),
         h.make_node("Mul", ["relf", "slope"], ["bias"]), h.make_node("Sub", ["s", "bias"], ["s_out"])]
inits = [ints("i1", 1), ints("i2", 2), ints("i3", 3), ints("zero", 0), ints("one", 1), ints("hs", [1, -1, 1, 1]),
         ints("qs", [1, 1, -1, 1]), ints("ks", [1, 1, 1, -1]), nh.from_array(np.array(0.25, np.float32), "slope")]
ins = [vi("s")] + ([vi("extra")] if kind == "mod2in" else [])
if kind == "unsup":
    nodes = [h.make_node("Noise", ["s"], ["noise"], domain="com.example"), h.make_node("Add", ["s", "noise"], ["s_out"])]
    inits = []
attrs = {"score_mod": h.make_graph(nodes, "alibi", ins, [vi("s_out")], inits)}
if kind == "probshape":
    attrs = {"prob_mod": h.make_graph([h.make_node("ReduceSum", ["p", "ax"], ["p_out"], keepdims=1)], "sum",
                                      [vi("p")], [vi("p_out")], [ints("ax", [3])])}
fa = h.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], name="fa", domain="ai.onnx.preview", **attrs)
g = h.make_graph([fa], "flex", [vi("Q", [2, 4, 3, 8]), vi("K", [2, hk, 5, ke]), vi("V", [2, hk, 5, 4])],
                 [vi("Y", [2, 4, 3, 4])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 26), h.make_opsetid("ai.onnx.preview", 1),
                                   h.make_opsetid("com.example", 1)])
m.ir_version = 10
onnx.save(m, sys.argv[1] + "/fa.onnx")
rng = np.random.default_rng(3)
for n, s in (("Q", (2, 4, 3, 8)), ("K", (2, hk, 5, ke)), ("V", (2, hk, 5, 4))):
    np.save(sys.argv[1] + "/" + n + ".npy", rng.standard_normal(s).astype(np.float32))' "$T" "$1"
}

run_flex() {
    run --separate-stderr "$FTRUN" run "$T/fa.onnx" -i Q="$T/Q.npy" -i K="$T/K.npy" -i V="$T/V.npy" -o "$T/out" -q
}

@test "ONNX FlexAttention: GQA with an ALiBi-like score_mod built from the scores' shape gives NumPy's values" {
    flex_model alibi
    run_flex
    [ "$status" -eq 0 ]
    py '
t = sys.argv[1]
q, k, v = (np.load(t + "/" + n + ".npy").astype(np.float64) for n in "QKV")
k, v = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
s = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
hh, qi, ki = np.arange(4)[:, None, None], np.arange(3)[:, None], np.arange(5)[None, :]
s = s - (qi - ki) * (hh + 1) * 0.25
p = np.exp(s - s.max(-1, keepdims=True))
y = (p / p.sum(-1, keepdims=True)) @ v
got = np.load(t + "/out/Y.npy")
assert got.dtype == np.float32 and got.shape == (2, 4, 3, 4)
assert np.allclose(got, y, rtol=1e-5, atol=1e-5), abs(got - y).max()' "$T"
}

@test "ONNX FlexAttention: two nodes whose score_mod graphs use the same names each read their own initializer" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
t = sys.argv[1]
vi = lambda n, s=None: h.make_tensor_value_info(n, TP.FLOAT, s)
b1, b2 = np.zeros((1, 1, 3, 5), np.float32), np.zeros((1, 1, 3, 5), np.float32)
b1[..., 0], b2[..., 4] = 3, 3
mod = lambda b: h.make_graph([h.make_node("Add", ["s", "bias"], ["s_out"])], "m", [vi("s")], [vi("s_out")],
                             [nh.from_array(b, "bias")])
nodes = [h.make_node("FlexAttention", ["Q", "K", "V"], ["Y" + i], name="fa" + i, domain="ai.onnx.preview",
                     score_mod=mod(b)) for i, b in (("1", b1), ("2", b2))]
g = h.make_graph(nodes, "two", [vi("Q", [1, 2, 3, 4]), vi("K", [1, 2, 5, 4]), vi("V", [1, 2, 5, 4])],
                 [vi("Y1"), vi("Y2")])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 26), h.make_opsetid("ai.onnx.preview", 1),
                                   h.make_opsetid("com.example", 1)])
m.ir_version = 10
onnx.save(m, t + "/two.onnx")
rng = np.random.default_rng(1)
q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)))
for n, a in (("Q", q), ("K", k), ("V", v)):
    np.save(t + "/" + n + ".npy", a)
for i, b in (("1", b1), ("2", b2)):
    s = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / 2 + b
    p = np.exp(s - s.max(-1, keepdims=True))
    np.save(t + "/e" + i + ".npy", (p / p.sum(-1, keepdims=True)) @ v)' "$T"
    run "$FTRUN" run "$T/two.onnx" -i Q="$T/Q.npy" -i K="$T/K.npy" -i V="$T/V.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
for i in "12":
    got, want = np.load(sys.argv[1] + "/out/Y" + i + ".npy"), np.load(sys.argv[1] + "/e" + i + ".npy")
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), (i, abs(got - want).max())' "$T"
}

@test "ONNX FlexAttention: a score_mod graph of two inputs is refused (exit 3), naming node, op and attribute" {
    flex_model mod2in
    run_flex
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'fa' (FlexAttention): attribute score_mod: its graph has 2 inputs and 1 output; FlexAttention gives it one input (the scores [B, Hq, L, S])"* ]]
    [ ! -e "$T/out" ]
}

@test "ONNX FlexAttention: a prob_mod whose output has another shape is refused (exit 3), saying both shapes" {
    flex_model probshape
    run_flex
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'fa' (FlexAttention): attribute prob_mod: its output 'p_out' is f32 [2,4,3,1]; it must be f32 [2,4,3,5], as the probabilities it takes"* ]]
    [ ! -e "$T/out" ]
}

@test "ONNX FlexAttention: Q, K and V shapes that do not agree are refused (exit 3), saying which dims" {
    flex_model kdim
    run_flex
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'fa' (FlexAttention): Q [2,4,3,8], K [2,2,5,6] and V [2,2,5,4] do not agree: Q and K have different head sizes (dim 3)"* ]]
    flex_model heads3
    run_flex
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'fa' (FlexAttention): Q [2,4,3,8], K [2,3,5,8] and V [2,3,5,4] do not agree: Q's number of heads (dim 1) is not a multiple of K's and V's"* ]]
    [ ! -e "$T/out" ]
}

@test "ONNX FlexAttention: an op ftrun does not map inside score_mod makes the model unsupported (exit 3)" {
    flex_model unsup
    run_flex
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"Noise"* ]]
    [ ! -e "$T/out" ]
}

@test "ONNX FlexAttention: ops --onnx lists it as mapped" {
    run "$FTRUN" ops --onnx
    [ "$status" -eq 0 ]
    [[ "$output" == *"ai.onnx.preview.FlexAttention"*"score_mod and prob_mod"* ]]
}
