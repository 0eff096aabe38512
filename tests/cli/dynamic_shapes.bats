#!/usr/bin/env bats
# Shape arithmetic at run time: an ONNX Shape or Size of a tensor whose shape
# is known only at run time (after NonZero) is itself a value known then, and
# the ops whose output shapes it gives (Range, Reshape, Expand, TopK's k,
# ConstantOfShape, Slice's ends) read it at every run and are inferred again
# with it (man/ftrun.1, RUN-TIME SHAPES). Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# rt.onnx: x [6] -> NonZero(x > 0) [1, n] -> Shape -> Gather(1) = n, then
# Range(0, n, 1), Reshape(nz, [n, 1]) (allowzero), Expand(7, [n, 2]),
# TopK(x, min(n, 3)), ConstantOfShape([n]) of 5, Slice(x, 0, n), Size(nz).
# bad.onnx: Reshape(nz, [n, 2]), which holds only when n is 0.
models() {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
consts = [C("zero", np.float32(0)), C("one", np.array(1, np.int64)), C("z64", np.array(0, np.int64)),
          C("ax0", np.array([0], np.int64)), C("c1", np.array([1], np.int64)), C("c2", np.array([2], np.int64)),
          C("c3", np.array([3], np.int64)), C("seven", np.float32(7))]
head = [h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]),
        h.make_node("Shape", ["nz"], ["nzs"]), h.make_node("Gather", ["nzs", "one"], ["n"], axis=0),
        h.make_node("Unsqueeze", ["n", "ax0"], ["n1"])]
nodes = consts + head + [
    h.make_node("Range", ["z64", "n", "one"], ["r"]),
    h.make_node("Concat", ["n1", "c1"], ["shp"], axis=0),
    h.make_node("Reshape", ["nz", "shp"], ["col"], allowzero=1),
    h.make_node("Concat", ["n1", "c2"], ["shp2"], axis=0),
    h.make_node("Expand", ["seven", "shp2"], ["ex"]),
    h.make_node("Min", ["n1", "c3"], ["k"]),
    h.make_node("TopK", ["x", "k"], ["tv", "ti"]),
    h.make_node("ConstantOfShape", ["n1"], ["cs"], value=nh.from_array(np.array([5], np.int64))),
    h.make_node("Slice", ["x", "ax0", "n1"], ["sl"]),
    h.make_node("Size", ["nz"], ["sz"])]
outs = [("r", TP.INT64, ["n"]), ("col", TP.INT64, ["n", 1]), ("ex", TP.FLOAT, ["n", 2]), ("tv", TP.FLOAT, ["k"]),
        ("ti", TP.INT64, ["k"]), ("cs", TP.INT64, ["n"]), ("sl", TP.FLOAT, ["n"]), ("sz", TP.INT64, [])]
x = [h.make_tensor_value_info("x", TP.FLOAT, [6])]
def save(nodes, outs, path):
    g = h.make_graph(nodes, "rtshape", x, [h.make_tensor_value_info(*o) for o in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
save(nodes, outs, sys.argv[1] + "/rt.onnx")
save(consts + head + [h.make_node("Concat", ["n1", "c2"], ["shp2"], axis=0),
                      h.make_node("Reshape", ["nz", "shp2"], ["y"])],
     [("y", TP.INT64, ["n", 2])], sys.argv[1] + "/bad.onnx")
for name, v in {"x3": [1, -2, 3, 0, 5, -1], "x0": [-1] * 6, "x1": [0, 0, 0, 0, 2, 0], "x6": [6, 2, 4, 1, 5, 3]}.items():
    np.save(sys.argv[1] + "/" + name + ".npy", np.array(v, np.float32))' "$T"
}

check() { # $1: the -i file, $2: the output folder
    py '
x = np.load(sys.argv[1]); o = sys.argv[2]
nz = np.array(np.nonzero(x > 0)); n = nz.shape[1]; k = min(n, 3)
order = np.argsort(-x, kind="stable")[:k]
want = {"r": np.arange(n), "col": nz.reshape(n, 1), "ex": np.full((n, 2), 7, np.float32), "tv": x[order],
        "ti": order, "cs": np.full(n, 5), "sl": x[:n], "sz": np.array(nz.size)}
for name, w in want.items():
    g = np.load(o + "/" + name + ".npy")
    assert g.shape == w.shape and g.dtype == w.dtype and (g == w).all(), (name, g, w)
import json
tj = json.load(open(o + "/timing.json"))["outputs"]  # the shapes the runs gave, and which are known only then
for name, w in want.items():
    assert tj[name]["shape"] == list(w.shape), (name, tj[name], w.shape)
assert all(tj[k]["dynamic"] for k in ("r", "col", "ex", "cs", "sl")), tj' "$1" "$2"
}

@test "dynamic shapes: Shape of a NonZero feeds Range, Reshape, Expand, TopK, ConstantOfShape, Slice, Size (counts 3, 0, 1, 6)" {
    models
    for x in x3 x0 x1 x6; do
        run "$FTRUN" run "$T/rt.onnx" -i x="$T/$x.npy" -o "$T/out_$x" -n 3 -q
        [ "$status" -eq 0 ]
        check "$T/$x.npy" "$T/out_$x"
    done
}

@test "dynamic shapes: info marks the shape-giving nodes dynamic; nothing is refused" {
    models
    run "$FTRUN" info "$T/rt.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"shape (dynamic)"* ]]
    [[ "$output" == *"range (dynamic)"* ]]
    [[ "$output" == *"reshape (dynamic)"* ]]
    [[ "$output" == *"topk (dynamic)"* ]]
    [[ "$output" == *"size (dynamic)"* ]]
}

@test "dynamic shapes: a run-time reshape whose element count does not match is exit 3 naming node and shapes" {
    models
    run "$FTRUN" run "$T/bad.onnx" -i x="$T/x3.npy" -o "$T/bad" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"at run time"* ]]
    [[ "$output" == *"'Reshape_"*"(reshape)"* ]]
    [[ "$output" == *"[1,3]"*"[3,2]"* ]]
    [ ! -e "$T/bad/y.npy" ]
}

@test "dynamic shapes: a JSON reshape whose shape input is computed from the data is inferred at every run" {
    cat > "$T/g.json" <<'JSON'
{"ftrun": 1, "name": "rs",
 "tensors": {"x": {"dtype": "f32", "shape": [2, 6]}, "s": {"dtype": "i64", "shape": [2]}},
 "inputs": ["x", "s"], "outputs": ["y", "t"],
 "nodes": [
  {"name": "c", "op": "identity", "inputs": ["s"], "outputs": ["s2"]},
  {"name": "r", "op": "reshape", "inputs": ["x", "s2"], "outputs": ["y"]},
  {"name": "t", "op": "tile", "inputs": ["y", "s2"], "outputs": ["t"]}]}
JSON
    py 'np.save(sys.argv[1] + "/x.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
np.save(sys.argv[1] + "/s.npy", np.array([3, 4]))' "$T"
    run "$FTRUN" run "$T/g.json" -i x="$T/x.npy" -i s="$T/s.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.arange(12, dtype=np.float32).reshape(3, 4)
assert (np.load(sys.argv[1] + "/y.npy") == x).all()
assert (np.load(sys.argv[1] + "/t.npy") == np.tile(x, (3, 4))).all()' "$T/o"
}

# pr.onnx: n as in rt.onnx, then Pad(d, [0, n, 0, 1], 2.5) (constant) and
# Pad(d, [0, 0, n, 0]) (edge) of d [2, 3]; OneHot([0, 2, 1, -1], n + 1) with
# depth i64 and OneHot(..., float(n) + 2) with depth f32 (cast by the
# importer); Resize(r [1, 1, 2, 3], sizes [1, 1, n, n + 1]) nearest,
# half_pixel, round_prefer_floor.
pad_models() {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
nodes = [C("zero", np.float32(0)), C("one", np.array(1, np.int64)), C("ax0", np.array([0], np.int64)),
         C("z1", np.array([0], np.int64)), C("o1", np.array([1], np.int64)), C("pv", np.float32(2.5)),
         C("two", np.float32(2)), C("idx", np.array([0, 2, 1, -1], np.int64)),
         C("ohv", np.array([0, 1], np.float32)), C("ones2", np.array([1, 1], np.int64)),
         h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]),
         h.make_node("Shape", ["nz"], ["nzs"]), h.make_node("Gather", ["nzs", "one"], ["n"], axis=0),
         h.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
         h.make_node("Concat", ["z1", "n1", "z1", "o1"], ["pads"], axis=0),
         h.make_node("Pad", ["d", "pads", "pv"], ["pc"], mode="constant"),
         h.make_node("Concat", ["z1", "z1", "n1", "z1"], ["pads2"], axis=0),
         h.make_node("Pad", ["d", "pads2"], ["pe"], mode="edge"),
         h.make_node("Add", ["n", "one"], ["depth"]),
         h.make_node("OneHot", ["idx", "depth", "ohv"], ["oh"], axis=-1),
         h.make_node("Cast", ["n"], ["nf"], to=TP.FLOAT), h.make_node("Add", ["nf", "two"], ["depthf"]),
         h.make_node("OneHot", ["idx", "depthf", "ohv"], ["ohf"], axis=0),
         h.make_node("Add", ["n1", "o1"], ["n1p"]),
         h.make_node("Concat", ["ones2", "n1", "n1p"], ["sizes"], axis=0),
         h.make_node("Resize", ["r", "", "", "sizes"], ["rs"], mode="nearest")]
ins = [h.make_tensor_value_info("x", TP.FLOAT, [6]), h.make_tensor_value_info("d", TP.FLOAT, [2, 3]),
       h.make_tensor_value_info("r", TP.FLOAT, [1, 1, 2, 3])]
outs = [("pc", TP.FLOAT, [2, "a"]), ("pe", TP.FLOAT, ["b", 3]), ("oh", TP.FLOAT, [4, "c"]),
        ("ohf", TP.FLOAT, ["e", 4]), ("rs", TP.FLOAT, [1, 1, "f", "g"])]
g = h.make_graph(nodes, "rtpad", ins, [h.make_tensor_value_info(*o) for o in outs])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/pr.onnx")
for name, v in {"x3": [1, -2, 3, 0, 5, -1], "x0": [-1] * 6, "x1": [0, 0, 0, 0, 2, 0], "x6": [6, 2, 4, 1, 5, 3]}.items():
    np.save(sys.argv[1] + "/" + name + ".npy", np.array(v, np.float32))
np.save(sys.argv[1] + "/d.npy", np.arange(6, dtype=np.float32).reshape(2, 3) + 1)
np.save(sys.argv[1] + "/r.npy", np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3) * 10)' "$T"
}

# The expectations from NumPy: np.pad, comparisons with np.arange, and
# nearest resizing written out (half_pixel: x = (i + 0.5) / scale - 0.5,
# rounded half down, clamped to the axis).
pad_check() {
    py '
x = np.load(sys.argv[1]); o = sys.argv[2]; T = sys.argv[3]
d = np.load(T + "/d.npy"); r = np.load(T + "/r.npy")
n = int((x > 0).sum())
idx = np.array([0, 2, 1, -1])
def one_hot(depth, axis):
    k = np.where(idx < 0, idx + depth, idx)  # outside [0, depth): a row of off values
    oh = (k[:, None] == np.arange(depth)[None, :]).astype(np.float32)
    return oh if axis == -1 else oh.T
def nearest(size, insize):
    if size == 0:
        return np.zeros(0, np.int64)
    xo = (np.arange(size) + 0.5) * insize / size - 0.5
    return np.clip(np.ceil(xo - 0.5), 0, insize - 1).astype(np.int64)
rs = r[:, :, nearest(n, 2)][:, :, :, nearest(n + 1, 3)]
want = {"pc": np.pad(d, ((0, 0), (n, 1)), constant_values=2.5), "pe": np.pad(d, ((0, n), (0, 0)), mode="edge"),
        "oh": one_hot(n + 1, -1), "ohf": one_hot(n + 2, 0), "rs": rs}
for name, w in want.items():
    g = np.load(o + "/" + name + ".npy")
    assert g.shape == w.shape and g.dtype == w.dtype and (g == w).all(), (name, g, w)' "$1" "$2" "$T"
}

@test "dynamic shapes: Pad's pads, OneHot's depth (i64 and f32) and Resize's sizes computed from data (counts 3, 0, 1, 6)" {
    pad_models
    for x in x3 x0 x1 x6; do
        run "$FTRUN" run "$T/pr.onnx" -i x="$T/$x.npy" -i d="$T/d.npy" -i r="$T/r.npy" -o "$T/out_$x" -n 2 -q
        [ "$status" -eq 0 ]
        pad_check "$T/$x.npy" "$T/out_$x"
    done
    run "$FTRUN" info "$T/pr.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"pad (dynamic)"* ]]
    [[ "$output" == *"one_hot (dynamic)"* ]]
    [[ "$output" == *"resize (dynamic)"* ]]
}

@test "dynamic shapes: a JSON pad whose pads input is computed is inferred at every run; pads reflect cannot take is exit 3 at run time" {
    cat > "$T/g.json" <<'JSON'
{"ftrun": 1, "name": "pd",
 "tensors": {"x": {"dtype": "f32", "shape": [2, 3]}, "p": {"dtype": "i64", "shape": [4]}},
 "inputs": ["x", "p"], "outputs": ["y"],
 "nodes": [
  {"name": "c", "op": "identity", "inputs": ["p"], "outputs": ["p2"]},
  {"name": "pad", "op": "pad", "inputs": ["x", "p2"], "outputs": ["y"], "attrs": {"mode": "reflect"}}]}
JSON
    py 'np.save(sys.argv[1] + "/x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(sys.argv[1] + "/p.npy", np.array([1, 1, 0, -1]))
np.save(sys.argv[1] + "/bad.npy", np.array([0, 3, 0, 0]))' "$T"
    run "$FTRUN" run "$T/g.json" -i x="$T/x.npy" -i p="$T/p.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.arange(6, dtype=np.float32).reshape(2, 3)
w = np.pad(x[:, :2], ((1, 0), (1, 0)), mode="reflect")
g = np.load(sys.argv[1] + "/y.npy")
assert g.shape == w.shape and (g == w).all(), (g, w)' "$T/o"
    run "$FTRUN" run "$T/g.json" -i x="$T/x.npy" -i p="$T/bad.npy" -o "$T/bad" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"at run time"* ]]
    [[ "$output" == *"'pad' (pad)"* ]]
    [[ "$output" == *"pads (input 1) [0,3,0,0]: mode 'reflect'"* ]]
    [ ! -e "$T/bad/y.npy" ]
}

# sa.onnx: c = Compress(x, x > 0) (stand-in [6]), n = Size(c), s =
# Slice(Concat(x, x), 0, n) (stand-in [12]): y = c + s and z = Concat of
# [n, 1] views of both on axis 1, whose stand-ins do not broadcast (concat)
# at load but whose run-time shapes agree. bad2.onnx: Compress(x,
# x > 0) + Compress(x, x < 0), which agree only when the counts do.
@test "dynamic shapes: stand-in shapes that do not broadcast or concat at load are checked at run time (exit 3 only when the run's do not)" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
head = [C("zero", np.float32(0)), C("ax0", np.array([0], np.int64)), h.make_node("Greater", ["x", "zero"], ["m"]),
        h.make_node("Compress", ["x", "m"], ["c"], axis=0)]
nodes = head + [h.make_node("Size", ["c"], ["n"]), h.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
                h.make_node("Concat", ["x", "x"], ["xx"], axis=0), h.make_node("Slice", ["xx", "ax0", "n1"], ["s"]),
                h.make_node("Add", ["c", "s"], ["y"]), C("ax1", np.array([1], np.int64)),
                h.make_node("Unsqueeze", ["c", "ax1"], ["c2"]), h.make_node("Unsqueeze", ["s", "ax1"], ["s2"]),
                h.make_node("Concat", ["c2", "s2"], ["z"], axis=1)]
bad = head + [h.make_node("Less", ["x", "zero"], ["m2"]), h.make_node("Compress", ["x", "m2"], ["c2"], axis=0),
              h.make_node("Add", ["c", "c2"], ["y"])]
for name, ns, outs in (("sa", nodes, ["y", "z"]), ("bad2", bad, ["y"])):
    g = h.make_graph(ns, name, [h.make_tensor_value_info("x", TP.FLOAT, [6])],
                     [h.make_tensor_value_info(o, TP.FLOAT, ["n"] if o == "y" else ["n", 2]) for o in outs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1] + "/" + name + ".onnx")
np.save(sys.argv[1] + "/x.npy", np.array([1, -2, 3, 0, 5, -1], np.float32))
np.save(sys.argv[1] + "/xe.npy", np.array([1, -2, 3, -4, 5, -1], np.float32))' "$T"
    run "$FTRUN" run "$T/sa.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.array([1, -2, 3, 0, 5, -1], np.float32); c = x[x > 0]
s = np.concatenate([x, x])[:c.size]
for name, w in (("y", c + s), ("z", np.stack([c, s], 1))):
    g = np.load(sys.argv[1] + "/" + name + ".npy")
    assert g.shape == w.shape and (g == w).all(), (name, g, w)' "$T/o"
    run "$FTRUN" run "$T/bad2.onnx" -i x="$T/xe.npy" -o "$T/e" -q
    [ "$status" -eq 0 ]
    run "$FTRUN" run "$T/bad2.onnx" -i x="$T/x.npy" -o "$T/b" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"at run time"* ]]
    [[ "$output" == *"[3]"*"[2]"*"do not broadcast"* ]]
    [ ! -e "$T/b/y.npy" ]
}

# nms.onnx: the boxes kept from a flat list (Compress of b [24] by keep),
# reshaped at run time to [1, n, 4] (stand-in [24, 1, 1]) and [n, 4]
# (stand-in [24, 1]); the first n scores as [1, 1, n]: NonMaxSuppression of
# them (IoU 0.5), and the widths x2 - x0 from Split [1, 1, 1, 1] on axis 1.
@test "dynamic shapes: NonMaxSuppression and Split of stand-ins whose box axis is not 4 at load run with the run's shapes" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
nodes = [C("four", np.int64(4)), C("c1", np.array([1], np.int64)), C("c4", np.array([4], np.int64)),
         C("z1", np.array([0], np.int64)), C("ax0", np.array([0], np.int64)), C("mx", np.array([10], np.int64)),
         C("iou", np.array([0.5], np.float32)),
         h.make_node("Compress", ["b", "keep"], ["bf"], axis=0), h.make_node("Size", ["bf"], ["nb"]),
         h.make_node("Div", ["nb", "four"], ["k"]), h.make_node("Unsqueeze", ["k", "ax0"], ["k1"]),
         h.make_node("Concat", ["c1", "k1", "c4"], ["s3"], axis=0), h.make_node("Reshape", ["bf", "s3"], ["boxes"]),
         h.make_node("Slice", ["s", "z1", "k1"], ["sk"]), h.make_node("Concat", ["c1", "c1", "k1"], ["t3"], axis=0),
         h.make_node("Reshape", ["sk", "t3"], ["scores"]),
         h.make_node("NonMaxSuppression", ["boxes", "scores", "mx", "iou"], ["sel"]),
         h.make_node("Concat", ["k1", "c4"], ["s2"], axis=0), h.make_node("Reshape", ["bf", "s2"], ["b2"]),
         h.make_node("Split", ["b2", "ones4"], ["p0", "p1", "p2", "p3"], axis=1),
         h.make_node("Sub", ["p3", "p1"], ["w"])]
nodes.insert(0, C("ones4", np.array([1, 1, 1, 1], np.int64)))
ins = [h.make_tensor_value_info("b", TP.FLOAT, [24]), h.make_tensor_value_info("keep", TP.BOOL, [24]),
       h.make_tensor_value_info("s", TP.FLOAT, [6])]
outs = [h.make_tensor_value_info("sel", TP.INT64, ["m", 3]), h.make_tensor_value_info("w", TP.FLOAT, ["n", 1])]
g = h.make_graph(nodes, "nms", ins, outs)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/nms.onnx")
b = np.array([[0, 0, 10, 10], [9, 9, 19, 19], [1, 1, 11, 11], [50, 50, 60, 70], [0, 0, 10, 9], [30, 30, 31, 35]],
             np.float32)
np.save(sys.argv[1] + "/b.npy", b.ravel())
np.save(sys.argv[1] + "/keep.npy", np.repeat(np.array([1, 1, 1, 0, 1, 1], bool), 4))
np.save(sys.argv[1] + "/s.npy", np.array([0.9, 0.8, 0.85, 0.3, 0.95, 0.1], np.float32))' "$T"
    run "$FTRUN" run "$T/nms.onnx" -i b="$T/b.npy" -i keep="$T/keep.npy" -i s="$T/s.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py '
T = sys.argv[1]
b = np.load(T + "/b.npy").reshape(-1, 4)[np.load(T + "/keep.npy")[::4]]
s = np.load(T + "/s.npy")[:len(b)]
def iou(p, q):  # ONNX boxes [y1, x1, y2, x2]
    ih = min(p[2], q[2]) - max(p[0], q[0]); iw = min(p[3], q[3]) - max(p[1], q[1])
    if ih <= 0 or iw <= 0: return 0.0
    inter = ih * iw; a = (p[2] - p[0]) * (p[3] - p[1]); c = (q[2] - q[0]) * (q[3] - q[1])
    return inter / (a + c - inter)
kept = []
for i in sorted(range(len(b)), key=lambda i: -s[i]):
    if all(iou(b[j], b[i]) <= 0.5 for j in kept):
        kept.append(i)
want = np.array([[0, 0, i] for i in kept], np.int64)
sel = np.load(T + "/o/sel.npy")
assert sel.shape == want.shape and (sel == want).all(), (sel, want)
w = np.load(T + "/o/w.npy")
assert w.shape == (len(b), 1) and (w[:, 0] == b[:, 3] - b[:, 1]).all(), w' "$T"
}

# sp.onnx: n as in rt.onnx; Split(d [8], sizes [n, 8 - n]) computed at run time.
@test "dynamic shapes: Split's sizes computed from data (counts 3, 0, 1, 6)" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
nodes = [C("zero", np.float32(0)), C("one", np.array(1, np.int64)), C("ax0", np.array([0], np.int64)),
         C("c8", np.array([8], np.int64)),
         h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]),
         h.make_node("Shape", ["nz"], ["nzs"]), h.make_node("Gather", ["nzs", "one"], ["n"], axis=0),
         h.make_node("Unsqueeze", ["n", "ax0"], ["n1"]), h.make_node("Sub", ["c8", "n1"], ["rest"]),
         h.make_node("Concat", ["n1", "rest"], ["sizes"], axis=0),
         h.make_node("Split", ["d", "sizes"], ["a", "b"], axis=0)]
g = h.make_graph(nodes, "sp", [h.make_tensor_value_info("x", TP.FLOAT, [6]), h.make_tensor_value_info("d", TP.FLOAT, [8])],
                 [h.make_tensor_value_info("a", TP.FLOAT, ["n"]), h.make_tensor_value_info("b", TP.FLOAT, ["r"])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/sp.onnx")
for name, v in {"x3": [1, -2, 3, 0, 5, -1], "x0": [-1] * 6, "x1": [0, 0, 0, 0, 2, 0], "x6": [6, 2, 4, 1, 5, 3]}.items():
    np.save(sys.argv[1] + "/" + name + ".npy", np.array(v, np.float32))
np.save(sys.argv[1] + "/d.npy", np.arange(8, dtype=np.float32) * 1.5)' "$T"
    run "$FTRUN" info "$T/sp.onnx"
    [[ "$output" == *"split (dynamic)"* ]]
    for x in x3 x0 x1 x6; do
        run "$FTRUN" run "$T/sp.onnx" -i x="$T/$x.npy" -i d="$T/d.npy" -o "$T/out_$x" -n 2 -q
        [ "$status" -eq 0 ]
        py 'x = np.load(sys.argv[1]); o = sys.argv[2]; n = int((x > 0).sum())
a, b = np.split(np.arange(8, dtype=np.float32) * 1.5, [n])
for name, w in (("a", a), ("b", b)):
    g = np.load(o + "/" + name + ".npy")
    assert g.shape == w.shape and (g == w).all(), (name, g, w)' "$T/$x.npy" "$T/out_$x"
    done
}

# Resize's scales and tf_crop_and_resize's roi, Pad's value and (opset 19)
# axes computed from data (counts 3, 0, 1, 6): nearest, linear and cubic
# under several coordinate modes, growing and shrinking by factors that are
# not integers; opsets 10, 13 and 19 (models and NumPy oracle:
# dynamic_params.py).
@test "dynamic shapes: Resize's scales and roi, Pad's value and axes computed from data match NumPy (counts 3, 0, 1, 6)" {
    "$PYTHON" "$TESTS_DIR/cli/dynamic_params.py" models "$T"
    for x in x3 x0 x1 x6; do
        run "$FTRUN" run "$T/p13.onnx" -i x="$T/$x.npy" -i r="$T/r.npy" -i d="$T/d.npy" -i di="$T/di.npy" \
            -o "$T/out_$x" -n 2 -q
        [ "$status" -eq 0 ]
        run "$FTRUN" run "$T/p10.onnx" -i x="$T/$x.npy" -i r="$T/r.npy" -o "$T/out_$x" -n 2 -q
        [ "$status" -eq 0 ]
        run "$FTRUN" run "$T/p19.onnx" -i x="$T/$x.npy" -i r="$T/r.npy" -i d="$T/d.npy" -o "$T/out_$x" -n 2 -q
        [ "$status" -eq 0 ]
        "$PYTHON" "$TESTS_DIR/cli/dynamic_params.py" check "$T" "$x" "$T/out_$x"
    done
    run "$FTRUN" info "$T/p19.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"pad (dynamic)"* ]]
    [[ "$output" == *"resize (dynamic)"* ]]
}

@test "dynamic shapes: constant scales, value and axes, or given with -i, stay attributes (the node is not dynamic)" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
nodes = [C("sc", np.array([1, 1, 1.5, 0.5], np.float32)), C("pads", np.array([1, 0, 0, 1], np.int64)),
         C("pv", np.float32(3)), h.make_node("Resize", ["r", "", "sc"], ["y"], mode="linear"),
         h.make_node("Pad", ["d", "pads", "pv"], ["p"])]
g = h.make_graph(nodes, "c", [h.make_tensor_value_info("r", TP.FLOAT, [1, 1, 4, 6]),
                              h.make_tensor_value_info("d", TP.FLOAT, [2, 3])],
                 [h.make_tensor_value_info("y", TP.FLOAT, [1, 1, 6, 3]), h.make_tensor_value_info("p", TP.FLOAT, [3, 4])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1] + "/c.onnx")' "$T"
    run "$FTRUN" info "$T/c.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" != *"(dynamic)"* ]]
    [[ "$output" == *"f32[1,1,6,3]"* ]]
    # graph inputs given with -i are values known at load: the same attributes
    py '
import onnx
from onnx import helper as h, TensorProto as TP
V = h.make_tensor_value_info
nodes = [h.make_node("Resize", ["r", "", "sc"], ["y"], mode="cubic", coordinate_transformation_mode="align_corners"),
         h.make_node("Pad", ["d", "pads", "pv"], ["p"])]
g = h.make_graph(nodes, "gi", [V("r", TP.FLOAT, [1, 1, 4, 6]), V("sc", TP.FLOAT, [4]), V("d", TP.FLOAT, [2, 3]),
                               V("pads", TP.INT64, [4]), V("pv", TP.FLOAT, [])],
                 [V("y", TP.FLOAT, [1, 1, "h", "w"]), V("p", TP.FLOAT, ["a", "b"])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/gi.onnx")
np.save(sys.argv[1] + "/r.npy", np.random.default_rng(3).uniform(-1, 1, (1, 1, 4, 6)).astype(np.float32))
np.save(sys.argv[1] + "/sc.npy", np.array([1, 1, 1.7, 0.6], np.float32))
np.save(sys.argv[1] + "/d.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(sys.argv[1] + "/pads.npy", np.array([0, 2, 1, 0]))
np.save(sys.argv[1] + "/pv.npy", np.float32(-3))' "$T"
    run "$FTRUN" run "$T/gi.onnx" -i r="$T/r.npy" -i sc="$T/sc.npy" -i d="$T/d.npy" -i pads="$T/pads.npy" \
        -i pv="$T/pv.npy" -o "$T/gi" -q
    [ "$status" -eq 0 ]
    "$PYTHON" -c "import sys; sys.path.insert(0, sys.argv[1] + '/numeric')
import numpy as np
from cases_pool import resize_ref
T = sys.argv[2]
r = np.load(T + '/r.npy'); sc = [float(v) for v in np.load(T + '/sc.npy')]
w = resize_ref(r, [1, 1, 6, 3], sc, 'cubic', 'align_corners', 'round_prefer_floor')[0]
g = np.load(T + '/gi/y.npy')
assert g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-5), (g, w)
w = np.pad(np.load(T + '/d.npy'), ((0, 1), (2, 0)), constant_values=-3)
g = np.load(T + '/gi/p.npy')
assert g.shape == w.shape and (g == w).all(), (g, w)" "$TESTS_DIR" "$T"
}

# The run-time values ftrun refuses, each exit 3 naming the node, the op and
# the values: a negative, NaN or huge scale; repeated or out-of-range axes.
@test "dynamic shapes: run-time scales and axes that are invalid are exit 3 at run time naming node, op and values" {
    cat > "$T/rs.json" <<'JSON'
{"ftrun": 1, "name": "rs",
 "tensors": {"x": {"dtype": "f32", "shape": [1, 1, 2, 3]}, "s": {"dtype": "f32", "shape": [4]}},
 "inputs": ["x", "s"], "outputs": ["y"],
 "nodes": [
  {"name": "c", "op": "identity", "inputs": ["s"], "outputs": ["s2"]},
  {"name": "rs", "op": "resize", "inputs": ["x", "", "s2"], "outputs": ["y"], "attrs": {"mode": "linear"}}]}
JSON
    cat > "$T/pd.json" <<'JSON'
{"ftrun": 1, "name": "pd",
 "tensors": {"x": {"dtype": "f32", "shape": [2, 3]}, "a": {"dtype": "i64", "shape": [2]},
             "v": {"dtype": "f32", "shape": []}},
 "inputs": ["x", "a", "v"], "outputs": ["y"],
 "nodes": [
  {"name": "c", "op": "identity", "inputs": ["a"], "outputs": ["a2"]},
  {"name": "cv", "op": "identity", "inputs": ["v"], "outputs": ["v2"]},
  {"name": "pd", "op": "pad", "inputs": ["x", "", "v2", "a2"], "outputs": ["y"], "attrs": {"pads": [1, 0, 2, 1]}}]}
JSON
    py 'T = sys.argv[1]
np.save(T + "/x.npy", np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
np.save(T + "/xp.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(T + "/v.npy", np.float32(-4))
for name, v in {"ok": [1, 1, 1.5, 2.5], "neg": [1, 1, -2, 2], "nan": [1, 1, np.nan, 1], "zero": [1, 1, 0, 1],
                "big": [1, 1, 1e30, 1]}.items():
    np.save(T + "/s_" + name + ".npy", np.array(v, np.float32))
for name, v in {"ok": [1, 0], "neg": [-1, -2], "rep": [0, -2], "out": [0, 2]}.items():
    np.save(T + "/a_" + name + ".npy", np.array(v, np.int64))' "$T"
    run "$FTRUN" run "$T/rs.json" -i x="$T/x.npy" -i s="$T/s_ok.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    "$PYTHON" -c "import sys; sys.path.insert(0, sys.argv[1] + '/numeric')
import numpy as np
from cases_pool import resize_ref
x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
w = resize_ref(x, [1, 1, 3, 7], [1, 1, 1.5, 2.5], 'linear', 'half_pixel', 'round_prefer_floor')[0]
g = np.load(sys.argv[2] + '/y.npy')
assert g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-6), (g, w)" "$TESTS_DIR" "$T/o"
    for bad in neg nan zero big; do
        run "$FTRUN" run "$T/rs.json" -i x="$T/x.npy" -i s="$T/s_$bad.npy" -o "$T/b_$bad" -q
        [ "$status" -eq 3 ]
        [[ "$output" == *"at run time"* ]]
        [[ "$output" == *"'rs' (resize)"* ]]
        [[ "$output" == *"scales (input 2) ["* ]]
        [ ! -e "$T/b_$bad/y.npy" ]
    done
    run "$FTRUN" run "$T/rs.json" -i x="$T/x.npy" -i s="$T/s_neg.npy" -o "$T/b" -q
    [[ "$output" == *"[1,1,-2,2]: scale -2 of axis 2 must be positive and finite"* ]]
    run "$FTRUN" run "$T/rs.json" -i x="$T/x.npy" -i s="$T/s_big.npy" -o "$T/b" -q
    [[ "$output" == *"too large"* ]]
    for a in ok neg; do
        run "$FTRUN" run "$T/pd.json" -i x="$T/xp.npy" -i a="$T/a_$a.npy" -i v="$T/v.npy" -o "$T/p_$a" -q
        [ "$status" -eq 0 ]
        py 'x = np.arange(6, dtype=np.float32).reshape(2, 3)
w = np.pad(x, ((0, 1), (1, 2)), constant_values=-4)
g = np.load(sys.argv[1] + "/y.npy")
assert g.shape == w.shape and (g == w).all(), (g, w)' "$T/p_$a"
    done
    run "$FTRUN" run "$T/pd.json" -i x="$T/xp.npy" -i a="$T/a_rep.npy" -i v="$T/v.npy" -o "$T/p_rep" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"'pd' (pad)"* ]]
    [[ "$output" == *"[0,-2] names axis 0 more than once"* ]]
    run "$FTRUN" run "$T/pd.json" -i x="$T/xp.npy" -i a="$T/a_out.npy" -i v="$T/v.npy" -o "$T/p_out" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"'pd' (pad)"* ]]
    [[ "$output" == *"axis 2 is out of range"* ]]
}

# gm.onnx: a = ConstantOfShape([n, 4]) of 1.5, n the count of x > 0 (stand-in
# [1, 1]): Gemm(a, W [4, 5], bias) and MatMul(a, W); bad: [n, 3] against W.
# se.onnx: ScatterElements (add) into ConstantOfShape([n, 4]) of 0.5 (stand-in
# [1, 1]) of the kept x broadcast to [n, 4] (stand-in [6, 4]) at row 0
@test "dynamic shapes: gemm, matmul and scatter_elements of stand-ins that disagree at load are checked at run time" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
c = lambda n, v, dt=np.int64: nh.from_array(np.array(v, dt), n)
W = np.arange(20, dtype=np.float32).reshape(4, 5) / 10
for name, inner in (("gm", 4), ("gmbad", 3)):
    nodes = [h.make_node("Greater", ["x", "zero"], ["p"]), h.make_node("NonZero", ["p"], ["nz"]),
             h.make_node("Shape", ["nz"], ["s"]), h.make_node("Slice", ["s", "b1", "e2"], ["k"]),
             h.make_node("Concat", ["k", "inner"], ["shp"], axis=0),
             h.make_node("ConstantOfShape", ["shp"], ["a"], value=nh.from_array(np.array([1.5], np.float32))),
             h.make_node("Gemm", ["a", "W", "bias"], ["y"]), h.make_node("MatMul", ["a", "W"], ["z"])]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", TP.FLOAT, [3, 4])],
                     [h.make_tensor_value_info(o, TP.FLOAT, [None, 5]) for o in "yz"],
                     [c("zero", 0.0, np.float32), c("b1", [1]), c("e2", [2]), c("inner", [inner]), nh.from_array(W, "W"),
                      c("bias", [1, 2, 3, 4, 5], np.float32)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1] + "/" + name + ".onnx")
np.save(sys.argv[1] + "/x.npy", np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32))
nodes = [h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("Compress", ["x", "m"], ["cx"], axis=0),
         h.make_node("Unsqueeze", ["cx", "b1"], ["u"]), h.make_node("Expand", ["u", "s14"], ["upd"]),
         h.make_node("Mul", ["upd", "zero"], ["z"]), h.make_node("Cast", ["z"], ["idx"], to=TP.INT64),
         h.make_node("Shape", ["cx"], ["sc"]), h.make_node("Concat", ["sc", "inner"], ["shp"], axis=0),
         h.make_node("ConstantOfShape", ["shp"], ["data"], value=nh.from_array(np.array([0.5], np.float32))),
         h.make_node("ScatterElements", ["data", "idx", "upd"], ["y"], axis=0, reduction="add")]
g = h.make_graph(nodes, "se", [h.make_tensor_value_info("x", TP.FLOAT, [6])], [h.make_tensor_value_info("y", TP.FLOAT, [None, 4])],
                 [c("zero", 0.0, np.float32), c("b1", [1]), c("s14", [1, 4]), c("inner", [4])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 16)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/se.onnx")
np.save(sys.argv[1] + "/x6.npy", np.array([1, -2, 3, 0, 5, -1], np.float32))' "$T"
    run "$FTRUN" run "$T/gm.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.load(sys.argv[1] + "/x.npy"); W = np.arange(20, dtype=np.float32).reshape(4, 5) / 10
a = np.full(((x > 0).sum(), 4), 1.5, np.float32)
for name, w in (("y", a @ W + np.arange(1, 6, dtype=np.float32)), ("z", a @ W)):
    g = np.load(sys.argv[1] + "/o/" + name + ".npy")
    assert g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-6), (name, g, w)' "$T"
    run "$FTRUN" run "$T/gmbad.onnx" -i x="$T/x.npy" -o "$T/b" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"at run time"*"inner dimensions do not agree"* ]]
    run "$FTRUN" run "$T/se.onnx" -i x="$T/x6.npy" -o "$T/s" -q
    [ "$status" -eq 0 ]
    py 'x = np.load(sys.argv[1] + "/x6.npy"); kept = x[x > 0]
want = np.full((kept.size, 4), 0.5, np.float32)
np.add.at(want, (np.zeros((kept.size, 4), np.int64), np.tile(np.arange(4), (kept.size, 1))), np.repeat(kept[:, None], 4, 1))
g = np.load(sys.argv[1] + "/s/y.npy")
assert g.shape == want.shape and (g == want).all(), (g, want)' "$T"
}
