#!/usr/bin/env bats
# ONNX Loop and Scan unrolled at load time (src/onnx/onnx_loop.c): a loop
# whose iterations are known then (trip count and conditions from constants
# and -i values; a scan's length) becomes one copy of its body per
# iteration; a Loop that needs its data to know when it ends runs at run
# time (tests/cli/onnx_rtloop.bats). Expectations from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# loop.onnx: y_k+1 = y_k * 0.5 + x * k for k < trip_count (an input), with a
# body condition (k + 1 < 3 from constants) that stops it after 3 iterations
# at most; the scan output stacks each y_k+1.
loop_model() {
    py '
import onnx
from onnx import helper as h, TensorProto as TP
def c(name, dt, v):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", dt, [], [v]))
body = h.make_graph(
    [c("half", TP.FLOAT, 0.5), c("one", TP.INT64, 1), c("three", TP.INT64, 3),
     h.make_node("Cast", ["k"], ["kf"], to=TP.FLOAT),
     h.make_node("Mul", ["y_in", "half"], ["yh"]), h.make_node("Mul", ["x", "kf"], ["xk"]),
     h.make_node("Add", ["yh", "xk"], ["y_out"]),
     h.make_node("Add", ["k", "one"], ["k1"]), h.make_node("Less", ["k1", "three"], ["cond_out"]),
     h.make_node("Identity", ["y_out"], ["scan_out"])],
    "body",
    [h.make_tensor_value_info("k", TP.INT64, []), h.make_tensor_value_info("cond_in", TP.BOOL, []),
     h.make_tensor_value_info("y_in", TP.FLOAT, [2, 3])],
    [h.make_tensor_value_info("cond_out", TP.BOOL, []), h.make_tensor_value_info("y_out", TP.FLOAT, [2, 3]),
     h.make_tensor_value_info("scan_out", TP.FLOAT, [2, 3])])
loop = h.make_node("Loop", ["trips", "", "y0"], ["y", "ys"], body=body)
g = h.make_graph([loop], "loop",
    [h.make_tensor_value_info("trips", TP.INT64, []), h.make_tensor_value_info("x", TP.FLOAT, [2, 3]),
     h.make_tensor_value_info("y0", TP.FLOAT, [2, 3])],
    [h.make_tensor_value_info("y", TP.FLOAT, [2, 3]), h.make_tensor_value_info("ys", TP.FLOAT, [None, 2, 3])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1] + "/loop.onnx")
rng = np.random.default_rng(5)
np.save(sys.argv[1] + "/x.npy", rng.standard_normal((2, 3)).astype(np.float32))
np.save(sys.argv[1] + "/y0.npy", rng.standard_normal((2, 3)).astype(np.float32))' "$T"
}

# check_loop TRIPS DIR: the outputs in DIR are NumPy's for that trip count
check_loop() {
    py '
trips, d, t = int(sys.argv[1]), sys.argv[2], sys.argv[3]
x, y = np.load(t + "/x.npy"), np.load(t + "/y0.npy")
ys = []
for k in range(trips):
    y = (y * np.float32(0.5) + x * np.float32(k)).astype(np.float32)
    ys.append(y)
    if not k + 1 < 3:
        break
gy, gys = np.load(d + "/y.npy"), np.load(d + "/ys.npy")
assert np.allclose(gy, y, rtol=1e-6, atol=1e-6), (gy, y)
assert gys.shape == (len(ys), 2, 3) and np.allclose(gys, np.stack(ys), rtol=1e-6, atol=1e-6), gys.shape' "$1" "$2" "$T"
}

@test "ONNX Loop: a trip count given with -i and a body condition from constants unroll to NumPy's values" {
    loop_model
    for trips in 2 5; do
        py 'np.save(sys.argv[1], np.array(int(sys.argv[2]), np.int64))' "$T/trips.npy" "$trips"
        run "$FTRUN" run "$T/loop.onnx" -i trips="$T/trips.npy" -i x="$T/x.npy" -i y0="$T/y0.npy" -o "$T/o$trips" -q
        [ "$status" -eq 0 ]
        check_loop "$trips" "$T/o$trips"
    done
}

@test "ONNX Loop: a trip count not known at load makes a run-time loop (loop_begin .. loop_end; tests/cli/onnx_rtloop.bats)" {
    loop_model
    run --separate-stderr "$FTRUN" info "$T/loop.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time loops: 1"*"'Loop_0' (6 body nodes, 1 carried value, 1 scan output)"* ]]
}

@test "ONNX Loop: more iterations than ftrun unrolls is refused as unsupported (exit 3)" {
    loop_model
    # the body's condition ends it after 3 iterations, but only a trip count within the limit is unrolled
    py 'np.save(sys.argv[1], np.array(100000, np.int64))' "$T/trips.npy"
    run --separate-stderr "$FTRUN" run "$T/loop.onnx" -i trips="$T/trips.npy" -i x="$T/x.npy" -i y0="$T/y0.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    check_loop 100000 "$T/o"
    py '
import onnx
m = onnx.load(sys.argv[1])
body = m.graph.node[0].attribute[0].g
for nd in body.node:  # the condition always true: the trip count decides
    if nd.op_type == "Less":
        nd.op_type, nd.input[:] = "Identity", ["cond_in"]
onnx.save(m, sys.argv[2])' "$T/loop.onnx" "$T/long.onnx"
    run --separate-stderr "$FTRUN" run "$T/long.onnx" -i trips="$T/trips.npy" -i x="$T/x.npy" -i y0="$T/y0.npy" -o "$T/o2"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"it runs more than 4096 iterations, the most ftrun unrolls"* ]]
    [ ! -e "$T/o2" ]
}

@test "ONNX Scan: a running sum, forward and reversed, scan outputs on axis 1, gives NumPy's values" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP
body = h.make_graph([h.make_node("Add", ["s_in", "xi"], ["s_out"]), h.make_node("Mul", ["s_out", "xi"], ["o"])], "body",
    [h.make_tensor_value_info("s_in", TP.FLOAT, [3]), h.make_tensor_value_info("xi", TP.FLOAT, [3])],
    [h.make_tensor_value_info("s_out", TP.FLOAT, [3]), h.make_tensor_value_info("o", TP.FLOAT, [3])])
scan = h.make_node("Scan", ["s0", "x"], ["s", "os"], body=body, num_scan_inputs=1, scan_input_axes=[1],
                   scan_input_directions=[1], scan_output_axes=[1])
g = h.make_graph([scan], "scan", [h.make_tensor_value_info("s0", TP.FLOAT, [3]), h.make_tensor_value_info("x", TP.FLOAT, [3, 5])],
    [h.make_tensor_value_info("s", TP.FLOAT, [3]), h.make_tensor_value_info("os", TP.FLOAT, [3, 5])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), sys.argv[1] + "/scan.onnx")
rng = np.random.default_rng(7)
np.save(sys.argv[1] + "/s0.npy", rng.standard_normal(3).astype(np.float32))
np.save(sys.argv[1] + "/x.npy", rng.standard_normal((3, 5)).astype(np.float32))' "$T"
    run "$FTRUN" run "$T/scan.onnx" -i s0="$T/s0.npy" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py '
t = sys.argv[1]
s, x = np.load(t + "/s0.npy"), np.load(t + "/x.npy")
outs = []
for i in reversed(range(5)):  # scan_input_directions=[1]: the last position first
    s = s + x[:, i]
    outs.append(s * x[:, i])
want = np.stack(outs, axis=1)  # in the order produced
gs, go = np.load(t + "/o/s.npy"), np.load(t + "/o/os.npy")
assert np.allclose(gs, s, rtol=1e-6, atol=1e-6), (gs, s)
assert go.shape == want.shape and np.allclose(go, want, rtol=1e-6, atol=1e-6), (go, want)' "$T"
}

@test "ONNX Loop and Scan: a body initializer shadows the outer value of its name in the body only, read before or after" {
    # outer k = 5 (read before the loop) and m = 3 (read only after it); the body's own k = 1 and m = 2
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
vi = h.make_tensor_value_info
def arr(name, v):
    return nh.from_array(np.array(v, np.float32), name)
def save(nodes, name, ins, inits):
    g = h.make_graph(nodes, name, ins, [vi("z", TP.FLOAT, [2])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, f"{sys.argv[1]}/{name}.onnx")
own = [arr("k", [1, 1]), arr("m", [2, 2])]
outer = [arr("k", [5, 5]), arr("m", [3, 3])]
body = h.make_graph([h.make_node("Add", ["y_in", "k"], ["t1"]), h.make_node("Mul", ["t1", "m"], ["y_out"]),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                    [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("y_in", TP.FLOAT, [2])],
                    [vi("cond_out", TP.BOOL, []), vi("y_out", TP.FLOAT, [2])], own)
save([h.make_node("Mul", ["x", "k"], ["a"]), h.make_node("Loop", ["n", "", "a"], ["y"], body=body),
      h.make_node("Add", ["y", "m"], ["z"])], "loopinit", [vi("x", TP.FLOAT, [2])],
     outer + [nh.from_array(np.array(2, np.int64), "n")])
body = h.make_graph([h.make_node("Add", ["s_in", "r"], ["t0"]), h.make_node("Add", ["t0", "k"], ["t1"]),
                     h.make_node("Mul", ["t1", "m"], ["s_out"])], "body",
                    [vi("s_in", TP.FLOAT, [2]), vi("r", TP.FLOAT, [2])], [vi("s_out", TP.FLOAT, [2])], own)
save([h.make_node("Mul", ["x", "k"], ["a"]), h.make_node("Scan", ["a", "xs"], ["s"], body=body, num_scan_inputs=1),
      h.make_node("Add", ["s", "m"], ["z"])], "scaninit", [vi("x", TP.FLOAT, [2]), vi("xs", TP.FLOAT, [3, 2])], outer)
np.save(sys.argv[1] + "/x2.npy", np.array([0.5, -2.0], np.float32))
np.save(sys.argv[1] + "/xs.npy", np.arange(6, dtype=np.float32).reshape(3, 2) - 2)' "$T"
    run "$FTRUN" run "$T/loopinit.onnx" -i x="$T/x2.npy" -o "$T/ol" -q
    [ "$status" -eq 0 ]
    run "$FTRUN" run "$T/scaninit.onnx" -i x="$T/x2.npy" -i xs="$T/xs.npy" -o "$T/os" -q
    [ "$status" -eq 0 ]
    py '
t = sys.argv[1]
x, xs = np.load(t + "/x2.npy"), np.load(t + "/xs.npy")
k, m, own_k, own_m = np.float32(5), np.float32(3), np.float32(1), np.float32(2)
y = s = x * k
for _ in range(2):
    y = (y + own_k) * own_m
for r in xs:
    s = (s + r + own_k) * own_m
gl, gs = np.load(t + "/ol/z.npy"), np.load(t + "/os/z.npy")
assert np.array_equal(gl, y + m), (gl, y + m)
assert np.array_equal(gs, s + m), (gs, s + m)' "$T"
}

@test "ONNX Scan at opset 8: a batch of 2 running sums, one direction reversed, gives NumPy's values; short sequence_lens refused" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP
body = h.make_graph([h.make_node("Add", ["s_in", "a"], ["s_out"]), h.make_node("Mul", ["s_out", "b"], ["o"])], "body",
    [h.make_tensor_value_info(v, TP.FLOAT, [3]) for v in ("s_in", "a", "b")],
    [h.make_tensor_value_info("s_out", TP.FLOAT, [3]), h.make_tensor_value_info("o", TP.FLOAT, [3])])
for name, lens in (("scan8", None), ("short", [4, 3])):
    ins = ["" if lens is None else "lens", "s0", "x", "y"]
    scan = h.make_node("Scan", ins, ["s", "os"], body=body, num_scan_inputs=2, directions=[0, 1])
    init = [] if lens is None else [h.make_tensor("lens", TP.INT32, [2], lens)]
    g = h.make_graph([scan], name, [h.make_tensor_value_info("s0", TP.FLOAT, [2, 3]),
        h.make_tensor_value_info("x", TP.FLOAT, [2, 4, 3]), h.make_tensor_value_info("y", TP.FLOAT, [2, 4, 3])],
        [h.make_tensor_value_info("s", TP.FLOAT, [2, 3]), h.make_tensor_value_info("os", TP.FLOAT, [2, 4, 3])], init)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 8)]), sys.argv[1] + "/" + name + ".onnx")
rng = np.random.default_rng(8)
for v, s in (("s0", (2, 3)), ("x", (2, 4, 3)), ("y", (2, 4, 3))):
    np.save(sys.argv[1] + "/" + v + ".npy", rng.standard_normal(s).astype(np.float32))' "$T"
    run "$FTRUN" run "$T/scan8.onnx" -i s0="$T/s0.npy" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py '
t = sys.argv[1]
s0, x, y = np.load(t + "/s0.npy"), np.load(t + "/x.npy"), np.load(t + "/y.npy")
ws, wo = [], []
for b in range(2):
    s, outs = s0[b], []
    for i in range(4):
        s = s + x[b, i]
        outs.append(s * y[b, 3 - i])  # directions=[0, 1]: y from its last position
    ws.append(s)
    wo.append(np.stack(outs))
gs, go = np.load(t + "/o/s.npy"), np.load(t + "/o/os.npy")
assert gs.shape == (2, 3) and np.allclose(gs, np.stack(ws), rtol=1e-6, atol=1e-6), (gs, ws)
assert go.shape == (2, 4, 3) and np.allclose(go, np.stack(wo), rtol=1e-6, atol=1e-6), (go, wo)' "$T"
    run --separate-stderr "$FTRUN" run "$T/short.onnx" -i s0="$T/s0.npy" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/o2"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"sequence_lens[1] = 3 is shorter than the 4 positions given"* ]]
    [ ! -e "$T/o2" ]
}

# long.onnx: a Loop of at most 100000 trips whose condition its carried value
# gives (v + 1 < N): N copies of its body, each condition computed at load
# from the one before; y adds x at every iteration.
@test "ONNX Loop: 4000 iterations whose condition the carried values give unroll in linear time (values computed once, names found once)" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
N = 4000
C = lambda name, a: h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))
body = h.make_graph([C("one", np.int64(1)), C("lim", np.int64(N)), h.make_node("Add", ["v", "one"], ["v2"]),
                     h.make_node("Less", ["v2", "lim"], ["c2"]), h.make_node("Add", ["acc", "x"], ["acc2"])], "body",
                    [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
                     h.make_tensor_value_info("v", TP.INT64, []), h.make_tensor_value_info("acc", TP.FLOAT, [2])],
                    [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_value_info("v2", TP.INT64, []),
                     h.make_tensor_value_info("acc2", TP.FLOAT, [2])])
g = h.make_graph([C("M", np.int64(100000)), C("t", np.bool_(True)), C("v0", np.int64(0)),
                  h.make_node("Loop", ["M", "t", "v0", "x"], ["vN", "y"], body=body)], "long",
                 [h.make_tensor_value_info("x", TP.FLOAT, [2])],
                 [h.make_tensor_value_info("vN", TP.INT64, []), h.make_tensor_value_info("y", TP.FLOAT, [2])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1] + "/long.onnx")
np.save(sys.argv[1] + "/x.npy", np.array([1, 2], np.float32))' "$T"
    # quadratic, this took 13 s of CPU on a 2-core machine; linear, 0.1 s
    run timeout 10 "$FTRUN" run "$T/long.onnx" -i x="$T/x.npy" -o "$T/o" -q -n 1
    [ "$status" -eq 0 ]
    py 'x = np.array([1, 2], np.float32); y = x.copy()
for _ in range(4000):
    y = y + x
assert np.load(sys.argv[1] + "/vN.npy") == 4000
g = np.load(sys.argv[1] + "/y.npy")
assert (g == y).all(), (g, y)' "$T/o"
}
