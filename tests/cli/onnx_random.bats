#!/usr/bin/env bats
# ONNX's random sampling ops: RandomUniform and RandomNormal (constants made at
# load), RandomUniformLike, RandomNormalLike, Bernoulli and Multinomial, against
# tests/numeric/philox.py, an independent NumPy implementation of the documented
# generator; the same seed gives the same values on every run and thread count.

bats_require_minimum_version 1.5.0
load helpers

@test "ONNX RandomUniform, RandomNormal, RandomUniformLike, Bernoulli and Multinomial follow the Philox rule" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP
nodes = [h.make_node("RandomUniform", [], ["u"], shape=[40, 25], low=-1.0, high=2.0, seed=3.0),
         h.make_node("RandomNormal", [], ["n"], shape=[1000], mean=1.5, scale=0.5, seed=-4.0, dtype=TP.DOUBLE),
         h.make_node("RandomUniformLike", ["x"], ["ul"], seed=3.0, low=-1.0, high=2.0),
         h.make_node("Bernoulli", ["p"], ["b"], seed=11.0, dtype=TP.INT64),
         h.make_node("Multinomial", ["lg"], ["m"], seed=2.0, sample_size=600, dtype=TP.INT64)]
g = h.make_graph(nodes, "r", [h.make_tensor_value_info("x", TP.FLOAT, [40, 25]), h.make_tensor_value_info("p", TP.FLOAT, [2000]),
                             h.make_tensor_value_info("lg", TP.FLOAT, [2, 3])],
                 [h.make_tensor_value_info(v, TP.UNDEFINED, None) for v in ("u", "n", "ul", "b", "m")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 15)]), sys.argv[1] + "/r.onnx")
np.save(sys.argv[1] + "/x.npy", np.zeros((40, 25), np.float32))
np.save(sys.argv[1] + "/p.npy", np.linspace(0, 1, 2000).astype(np.float32))
np.save(sys.argv[1] + "/lg.npy", np.log(np.array([[0.2, 0.3, 0.5], [0.7, 0.0, 0.3]], np.float32)))' "$T"
    for th in 1 2; do
        run --separate-stderr "$FTRUN" run "$T/r.onnx" -i x="$T/x.npy" -i p="$T/p.npy" -i lg="$T/lg.npy" -o "$T/o$th" -q --threads $th
        [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    done
    py '
sys.path.insert(0, sys.argv[2] + "/numeric")
import philox
t = sys.argv[1]
o = {k: np.load("%s/o1/%s.npy" % (t, k)) for k in ("u", "n", "ul", "b", "m")}
for k in o:
    assert (np.load("%s/o2/%s.npy" % (t, k)) == o[k]).all(), k  # any thread count, the same values
u1, _ = philox.uniform_pairs(1000, 3)
want_u = (-1.0 + 3.0 * u1).astype(np.float32).reshape(40, 25)
assert o["u"].dtype == np.float32 and (o["u"] == want_u).all() and (o["ul"] == want_u).all()
a, b = philox.uniform_pairs(1000, (-4) % (1 << 64))
want_n = 1.5 + 0.5 * np.sqrt(-2 * np.log(1 - a)) * np.cos(2 * np.pi * b)
assert o["n"].dtype == np.float64 and np.allclose(o["n"], want_n, rtol=1e-14, atol=1e-14)
assert abs(o["n"].mean() - 1.5) < 6 * 0.5 / np.sqrt(1000) and abs(o["n"].std() / 0.5 - 1) < 0.15
p = np.linspace(0, 1, 2000).astype(np.float32).astype(np.float64)
u1, _ = philox.uniform_pairs(2000, 11)
assert o["b"].dtype == np.int64 and (o["b"] == (u1 < p)).all() and abs(o["b"].mean() - 0.5) < 0.05
m = o["m"]
assert m.dtype == np.int64 and m.shape == (2, 600) and not (m[1] == 1).any()
f = np.bincount(m[0], minlength=3) / 600
assert (np.abs(f - [0.2, 0.3, 0.5]) < 6 * np.sqrt(0.25 / 600)).all(), f' "$T" "$TESTS_DIR"
}
