"""ONNX Loops whose iterations are known only at run time, for
tests/cli/onnx_rtloop.bats; the expected values from NumPy and PyTorch.

python3 onnx_rtloop_models.py DIR writes into DIR, each model with its
cases CASE (inputs CASE.in.NAME.npy, expected CASE.want.NAME.npy):

  trips.onnx   y = y * 0.5 + x * k for k < trips (an input), the body's
               condition k + 1 < lim (lim an outer-scope input); scan output ys
  cond.onnx    no trip count; while sum(y) < limit (limit outer-scope): y = y * 2 + 1,
               the first condition computed from the input; scan outputs ys and ks (k * 10)
  both.onnx    trip count and condition at run time, two carried values swapped
               each iteration (a, b) -> (b + 1, a), scan output of a + b
  forever.onnx no trip count, the condition passed through: never ends (the limit)
  reshape.onnx a carried value that the body makes into another shape at run time
  swapgrow.onnx two carried values swapped each iteration, one grown by the iteration number
  known.onnx   trip count 3 from a constant: unrolled at load
  dynbody.onnx a node of run-time shape in the body (Compress), its sum a scan output
  held.onnx    an intermediate made before the loop and read last in its body
  ifbody.onnx  an If on the carried value inside the body (y * -0.5 when sum(y) > 0, else y + 3)
  nested.onnx  a run-time loop (m iterations of z + 1) inside another's body (n iterations)
  inif.onnx    a run-time loop inside a run-time If's branch
  nested2.onnx an inner loop of k + 1 iterations (k: the outer iteration number) with a scan
               output, z = z * 0.5 + j; the outer body sums the inner scan (its scan output)
  twhile.onnx  torch.jit.script while loop, exported by torch.onnx.export (opset 15):
               y = y * 1.5 + 0.25 and s += sum(y) while s < 4 * sum(|x|), the ys stacked
  tfor.onnx    torch.jit.script for loop over range(n), n an input (0 allowed)
  tgrow.onnx   torch.jit.script for loop that grows its carried value (torch.cat) each iteration
  tdec.onnx    torch.jit.script greedy decoder: embedding + positions, causal attention of run-time
               length, next token by argmax appended to the tokens until n tokens or token 0
  scandyn.onnx a Scan over the rows of x that sum above 0 (Compress: a length known only
               at run time), state s += row; scan inputs forward and reversed, scan
               outputs 2 * s (axis 0) and row - reversed row (reversed, on axis 1)
  scanlong.onnx a Scan of 5000 positions known at load (more than ftrun unrolls):
               a running sum
"""
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as TP

d = sys.argv[1]
F, B, I = TP.FLOAT, TP.BOOL, TP.INT64
vi = h.make_tensor_value_info
f32 = np.float32


def const(name, dt, v):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", dt, [], [v]))


def save(nodes, name, ins, outs, opset=13):
    g = h.make_graph(nodes, name, ins, outs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, f"{d}/{name}.onnx")


def case(model, tag, inputs, wants):
    for k, v in inputs.items():
        np.save(f"{d}/{model}.{tag}.in.{k}.npy", v)
    for k, v in wants.items():
        np.save(f"{d}/{model}.{tag}.want.{k}.npy", v)


rng = np.random.default_rng(11)

# trips: run-time trip count, body condition from the iteration number and an outer-scope input
body = h.make_graph(
    [const("half", F, 0.5), const("one", I, 1),
     h.make_node("Cast", ["k"], ["kf"], to=F),
     h.make_node("Mul", ["y_in", "half"], ["yh"]), h.make_node("Mul", ["x", "kf"], ["xk"]),
     h.make_node("Add", ["yh", "xk"], ["y_out"]),
     h.make_node("Add", ["k", "one"], ["k1"]), h.make_node("Less", ["k1", "lim"], ["cond_out"]),
     h.make_node("Identity", ["y_out"], ["scan_out"])],
    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2, 3])],
    [vi("cond_out", B, []), vi("y_out", F, [2, 3]), vi("scan_out", F, [2, 3])])
save([h.make_node("Loop", ["trips", "", "y0"], ["y", "ys"], body=body)], "trips",
     [vi("trips", I, []), vi("lim", I, []), vi("x", F, [2, 3]), vi("y0", F, [2, 3])],
     [vi("y", F, [2, 3]), vi("ys", F, [None, 2, 3])])
x, y0 = rng.standard_normal((2, 3)).astype(f32), rng.standard_normal((2, 3)).astype(f32)
for trips, lim in ((0, 9), (1, 9), (5, 9), (7, 3)):
    y, ys = y0.copy(), []
    for k in range(trips):
        y = (y * f32(0.5) + x * f32(k)).astype(f32)
        ys.append(y)
        if not k + 1 < lim:
            break
    case("trips", f"t{trips}_{lim}", {"trips": np.array(trips, np.int64), "lim": np.array(lim, np.int64), "x": x, "y0": y0},
         {"y": y, "ys": np.stack(ys) if ys else np.zeros((0, 2, 3), f32)})

# cond: no trip count, a condition computed from the data; outer-scope limit
body = h.make_graph(
    [const("two", F, 2.0), const("onef", F, 1.0), const("ten", I, 10),
     h.make_node("Mul", ["y_in", "two"], ["y2"]), h.make_node("Add", ["y2", "onef"], ["y_out"]),
     h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0), h.make_node("Less", ["s", "limit"], ["cond_out"]),
     h.make_node("Mul", ["k", "ten"], ["k10"])],
    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [4])],
    [vi("cond_out", B, []), vi("y_out", F, [4]), vi("y_out", F, [4]), vi("k10", I, [])])
save([h.make_node("ReduceSum", ["x"], ["s0"], keepdims=0), h.make_node("Less", ["s0", "limit"], ["c0"]),
      h.make_node("Loop", ["", "c0", "x"], ["y", "ys", "ks"], body=body)], "cond",
     [vi("x", F, [4]), vi("limit", F, [])], [vi("y", F, [4]), vi("ys", F, [None, 4]), vi("ks", I, [None])])
for tag, x, limit in (("zero", np.array([5, 6, 7, 8], f32), 10.0), ("some", np.array([0.5, -0.25, 1.0, 0.125], f32), 300.0),
                      ("more", np.array([0.01, 0.02, 0.0, -0.03], f32), 5000.0)):
    y, ys, ks, k = x.copy(), [], [], 0
    while y.sum(dtype=f32) < f32(limit) if k else x.sum(dtype=f32) < f32(limit):
        y = (y * f32(2) + f32(1)).astype(f32)
        ys.append(y)
        ks.append(10 * k)
        k += 1
        if not y.sum(dtype=f32) < f32(limit):
            break
    case("cond", tag, {"x": x, "limit": np.array(limit, f32)},
         {"y": y, "ys": np.stack(ys) if ys else np.zeros((0, 4), f32), "ks": np.array(ks, np.int64)})

# both: trip count and condition at run time; (a, b) -> (b + 1, a) swaps the carried values
body = h.make_graph(
    [const("onef", F, 1.0), h.make_node("Add", ["b_in", "onef"], ["a_out"]), h.make_node("Identity", ["a_in"], ["b_out"]),
     h.make_node("Add", ["a_in", "b_in"], ["ab"]), h.make_node("ReduceMax", ["a_out"], ["m"], keepdims=0),
     h.make_node("Less", ["m", "stop"], ["cond_out"])],
    "body", [vi("k", I, []), vi("cond_in", B, []), vi("a_in", F, [3]), vi("b_in", F, [3])],
    [vi("cond_out", B, []), vi("a_out", F, [3]), vi("b_out", F, [3]), vi("ab", F, [3])])
save([h.make_node("Loop", ["n", "c", "a0", "b0"], ["a", "b", "abs"], body=body)], "both",
     [vi("n", I, []), vi("c", B, []), vi("a0", F, [3]), vi("b0", F, [3]), vi("stop", F, [])],
     [vi("a", F, [3]), vi("b", F, [3]), vi("abs", F, [None, 3])])
a0, b0 = np.array([0.0, 1.0, 2.0], f32), np.array([10.0, -1.0, 0.5], f32)
for tag, n, c, stop in (("n4", 4, True, 100.0), ("stop", 50, True, 13.0), ("off", 5, False, 100.0)):
    a, b, ab, k = a0.copy(), b0.copy(), [], 0
    go = c
    while go and k < n:
        ab.append(a + b)
        a, b = (b + f32(1)).astype(f32), a
        k += 1
        go = a.max() < f32(stop)
    case("both", tag, {"n": np.array(n, np.int64), "c": np.array(c), "a0": a0, "b0": b0, "stop": np.array(stop, f32)},
         {"a": a, "b": b, "abs": np.stack(ab) if ab else np.zeros((0, 3), f32)})

# forever: no trip count, the condition passed through: only the iteration limit ends it
body = h.make_graph([const("onef", F, 1.0), h.make_node("Add", ["y_in", "onef"], ["y_out"]),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2])],
                    [vi("cond_out", B, []), vi("y_out", F, [2])])
save([h.make_node("Loop", ["", "c", "y0"], ["y"], body=body)], "forever", [vi("c", B, []), vi("y0", F, [2])],
     [vi("y", F, [2])])
case("forever", "go", {"c": np.array(True), "y0": np.zeros(2, f32)}, {})
case("forever", "stop", {"c": np.array(False), "y0": np.array([1, 2], f32)}, {"y": np.array([1, 2], f32)})

# reshape: the carried value's shape changes at run time (Compress keeps the positive entries)
body = h.make_graph([const("zf", F, 0.0), h.make_node("Greater", ["y_in", "zf"], ["pos"]),
                     h.make_node("Compress", ["y_in", "pos"], ["y_out"], axis=0),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [3])],
                    [vi("cond_out", B, []), vi("y_out", F, [None])])
save([h.make_node("Loop", ["n", "", "y0"], ["y"], body=body)], "reshape", [vi("n", I, []), vi("y0", F, [3])],
     [vi("y", F, [None])])
case("reshape", "same", {"n": np.array(3, np.int64), "y0": np.array([1, 2, 3], f32)}, {"y": np.array([1, 2, 3], f32)})
case("reshape", "shrinks", {"n": np.array(3, np.int64), "y0": np.array([1, -2, 3], f32)}, {"y": np.array([1, 3], f32)})

# swapgrow: two carried values of changing shapes swapped each iteration, one grown: (a, b) -> (b, [a..., k])
body = h.make_graph([h.make_node("Cast", ["k"], ["kf"], to=F), h.make_node("Unsqueeze", ["kf", "zero_ax"], ["k1"]),
                     h.make_node("Concat", ["a_in", "k1"], ["b_out"], axis=0), h.make_node("Identity", ["b_in"], ["a_out"]),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("a_in", F, [None]), vi("b_in", F, [None])],
                    [vi("cond_out", B, []), vi("a_out", F, [None]), vi("b_out", F, [None])])
save([h.make_node("Constant", [], ["zero_ax"], value=h.make_tensor("za", I, [1], [0])),
      h.make_node("Loop", ["n", "", "a0", "b0"], ["a", "b"], body=body)], "swapgrow",
     [vi("n", I, []), vi("a0", F, [2]), vi("b0", F, [3])], [vi("a", F, [None]), vi("b", F, [None])])
for n in (0, 1, 5):
    a, b = np.array([0.5, 1.5], f32), np.array([-1, -2, -3], f32)
    a0, b0 = a.copy(), b.copy()
    for k in range(n):
        a, b = b, np.concatenate([a, np.array([k], f32)])
    case("swapgrow", f"n{n}", {"n": np.array(n, np.int64), "a0": a0, "b0": b0}, {"a": a, "b": b})

# known: trip count from a constant: unrolled at load, as before
body = h.make_graph([const("onef", F, 1.0), h.make_node("Add", ["y_in", "onef"], ["y_out"]),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2])],
                    [vi("cond_out", B, []), vi("y_out", F, [2])])
save([const("three", I, 3), h.make_node("Loop", ["three", "", "y0"], ["y"], body=body)], "known", [vi("y0", F, [2])],
     [vi("y", F, [2])])
case("known", "k", {"y0": np.array([1, 2], f32)}, {"y": np.array([4, 5], f32)})

# ifbody: an If on a condition computed from the carried value, inside the body (its guard read anew each iteration)
then_g = h.make_graph([h.make_node("Mul", ["y_in", "mhalf"], ["ty"])], "then", [], [vi("ty", F, [2])])
else_g = h.make_graph([h.make_node("Add", ["y_in", "threef"], ["ey"])], "else", [], [vi("ey", F, [2])])
body = h.make_graph([const("zf", F, 0.0), const("threef", F, 3.0), const("mhalf", F, -0.5),
                     h.make_node("ReduceSum", ["y_in"], ["s"], keepdims=0), h.make_node("Greater", ["s", "zf"], ["c"]),
                     h.make_node("If", ["c"], ["y_out"], then_branch=then_g, else_branch=else_g),
                     h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2])],
                    [vi("cond_out", B, []), vi("y_out", F, [2]), vi("y_out", F, [2])])
save([h.make_node("Loop", ["n", "", "y0"], ["y", "ys"], body=body)], "ifbody", [vi("n", I, []), vi("y0", F, [2])],
     [vi("y", F, [2]), vi("ys", F, [None, 2])])
y, ys = np.array([-3.0, 1.5], f32), []
y0, taken = y.copy(), set()
for k in range(6):
    taken.add(bool(y.sum(dtype=f32) > 0))
    y = (y * f32(-0.5) if y.sum(dtype=f32) > 0 else y + f32(3)).astype(f32)
    ys.append(y)
assert taken == {True, False}
case("ifbody", "n6", {"n": np.array(6, np.int64), "y0": y0}, {"y": y, "ys": np.stack(ys)})

# held: w = x * 3 made before the loop, read last in the body; the body's own intermediates
# after that read must not take w's bytes (the next iteration reads w again)
body = h.make_graph([const("twof", F, 2.0), const("onef", F, 1.0), h.make_node("Add", ["y_in", "w"], ["y_out"]),
                     h.make_node("Mul", ["y_out", "twof"], ["t"]), h.make_node("Add", ["t", "onef"], ["u"]),
                     h.make_node("Neg", ["u"], ["v"]), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [64])],
                    [vi("cond_out", B, []), vi("y_out", F, [64]), vi("v", F, [64])])
save([const("threef", F, 3.0), h.make_node("Mul", ["x", "threef"], ["w"]),
      h.make_node("Loop", ["n", "", "x"], ["y", "vs"], body=body)], "held",
     [vi("n", I, []), vi("x", F, [64])], [vi("y", F, [64]), vi("vs", F, [None, 64])])
x = rng.standard_normal(64).astype(f32)
y, vs, w = x.copy(), [], (x * f32(3)).astype(f32)
for k in range(4):
    y = (y + w).astype(f32)
    vs.append(-(y * f32(2) + f32(1)).astype(f32))
case("held", "n4", {"n": np.array(4, np.int64), "x": x}, {"y": y, "vs": np.stack(vs)})

# dynbody: a node of run-time shape in the body (Compress keeps y's positive entries, fewer at each
# iteration): its shape is inferred again at every iteration; the scan output stacks their sum
body = h.make_graph([const("zf", F, 0.0), const("onef", F, 1.0), h.make_node("Greater", ["y_in", "zf"], ["pos"]),
                     h.make_node("Compress", ["y_in", "pos"], ["kept"], axis=0),
                     h.make_node("ReduceSum", ["kept"], ["s"], keepdims=0),
                     h.make_node("Sub", ["y_in", "onef"], ["y_out"]), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [5])],
                    [vi("cond_out", B, []), vi("y_out", F, [5]), vi("s", F, [])])
save([h.make_node("Loop", ["n", "", "y0"], ["y", "ss"], body=body)], "dynbody", [vi("n", I, []), vi("y0", F, [5])],
     [vi("y", F, [5]), vi("ss", F, [None])])
y = np.array([0.5, 3.0, -1.0, 2.25, 4.5], f32)
y0, ss = y.copy(), []
for k in range(5):
    ss.append(y[y > 0].sum(dtype=f32))
    y = (y - f32(1)).astype(f32)
case("dynbody", "n5", {"n": np.array(5, np.int64), "y0": y0}, {"y": y, "ss": np.array(ss, f32)})

# nested: a run-time loop in the body of another, and one in a branch of a run-time If: refused (unsupported)
inner = h.make_graph([const("onef", F, 1.0), h.make_node("Add", ["z_in", "onef"], ["z_out"]),
                      h.make_node("Identity", ["ci"], ["co"])],
                     "inner", [vi("j", I, []), vi("ci", B, []), vi("z_in", F, [2])], [vi("co", B, []), vi("z_out", F, [2])])
body = h.make_graph([h.make_node("Loop", ["m", "", "y_in"], ["y_out"], body=inner), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2])], [vi("cond_out", B, []), vi("y_out", F, [2])])
save([h.make_node("Loop", ["n", "", "y0"], ["y"], body=body)], "nested", [vi("n", I, []), vi("m", I, []), vi("y0", F, [2])],
     [vi("y", F, [2])])
then_g = h.make_graph([h.make_node("Loop", ["m", "", "y0"], ["ty"], body=inner)], "then", [], [vi("ty", F, [2])])
else_g = h.make_graph([h.make_node("Identity", ["y0"], ["ey"])], "else", [], [vi("ey", F, [2])])
save([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "inif",
     [vi("c", B, []), vi("m", I, []), vi("y0", F, [2])], [vi("y", F, [2])])
y0 = np.array([0.5, -1.0], f32)
for n, m in ((3, 4), (3, 0), (0, 2)):
    case("nested", f"n{n}m{m}", {"n": np.array(n, np.int64), "m": np.array(m, np.int64), "y0": y0},
         {"y": (y0 + f32(n * m)).astype(f32)})
for c in (True, False):
    case("inif", "t" if c else "f", {"c": np.array(c), "m": np.array(4, np.int64), "y0": y0},
         {"y": (y0 + f32(4)).astype(f32) if c else y0})

# nested2: the inner loop's trip count is the outer iteration number + 1; its scan output summed by the outer body
inner = h.make_graph([const("halff", F, 0.5), h.make_node("Cast", ["j"], ["jf"], to=F),
                      h.make_node("Mul", ["z_in", "halff"], ["zh"]), h.make_node("Add", ["zh", "jf"], ["z_out"]),
                      h.make_node("Identity", ["z_out"], ["zs_out"]), h.make_node("Identity", ["ci"], ["co"])],
                     "inner", [vi("j", I, []), vi("ci", B, []), vi("z_in", F, [2])],
                     [vi("co", B, []), vi("z_out", F, [2]), vi("zs_out", F, [2])])
body = h.make_graph([const("one", I, 1), h.make_node("Add", ["k", "one"], ["k1"]),
                     h.make_node("Loop", ["k1", "", "y_in"], ["y_out", "zs"], body=inner),
                     h.make_node("ReduceSum", ["zs"], ["s"], keepdims=0), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [2])],
                    [vi("cond_out", B, []), vi("y_out", F, [2]), vi("s", F, [])])
save([h.make_node("Loop", ["n", "", "y0"], ["y", "ss"], body=body)], "nested2", [vi("n", I, []), vi("y0", F, [2])],
     [vi("y", F, [2]), vi("ss", F, [None])])
for n in (0, 1, 4):
    y, ss = y0.copy(), []
    for k in range(n):
        zs = []
        for j in range(k + 1):
            y = (y * f32(0.5) + f32(j)).astype(f32)
            zs.append(y)
        ss.append(np.stack(zs).sum(dtype=f32))
    case("nested2", f"n{n}", {"n": np.array(n, np.int64), "y0": y0}, {"y": y, "ss": np.array(ss, f32)})

# scandyn: a Scan whose length is the count of x's rows summing above 0 (Compress), two scan inputs (the
# second reversed), two scan outputs (the second reversed and on axis 1)
body = h.make_graph([const("twof", F, 2.0), h.make_node("Add", ["s_in", "r"], ["s_out"]),
                     h.make_node("Mul", ["s_out", "twof"], ["o1"]), h.make_node("Sub", ["r", "q"], ["o2"])],
                    "body", [vi("s_in", F, [3]), vi("r", F, [3]), vi("q", F, [3])],
                    [vi("s_out", F, [3]), vi("o1", F, [3]), vi("o2", F, [3])])
save([const("zf", F, 0.0), h.make_node("Constant", [], ["one_axis"], value=h.make_tensor("ax_v", I, [1], [1])),
      h.make_node("ReduceSum", ["x", "one_axis"], ["rs"], keepdims=0),
      h.make_node("Greater", ["rs", "zf"], ["mask"]), h.make_node("Compress", ["x", "mask"], ["kept"], axis=0),
      h.make_node("Scan", ["s0", "kept", "kept"], ["s", "o1s", "o2s"], body=body, num_scan_inputs=2,
                  scan_input_directions=[0, 1], scan_output_directions=[0, 1], scan_output_axes=[0, 1])],
     "scandyn", [vi("x", F, [6, 3]), vi("s0", F, [3])], [vi("s", F, [3]), vi("o1s", F, [None, 3]), vi("o2s", F, [3, None])])
for tag, rows in (("m0", 0), ("m1", 1), ("m4", 4)):
    x = rng.standard_normal((6, 3)).astype(f32)
    x = np.where((np.arange(6) < rows)[:, None], np.abs(x) + f32(0.1), -np.abs(x) - f32(0.1)).astype(f32)
    x = x[rng.permutation(6)]
    s0 = rng.standard_normal(3).astype(f32)
    kept = x[x.sum(axis=1, dtype=f32) > 0]
    assert len(kept) == rows
    s, o1, o2 = s0.copy(), [], []
    for i in range(rows):
        s = (s + kept[i]).astype(f32)
        o1.append(s * f32(2))
        o2.append(kept[i] - kept[rows - 1 - i])
    case("scandyn", tag, {"x": x, "s0": s0},
         {"s": s, "o1s": np.stack(o1) if rows else np.zeros((0, 3), f32),
          "o2s": np.stack(o2[::-1], axis=1) if rows else np.zeros((3, 0), f32)})

# scanlong: 5000 positions known at load, more than ftrun unrolls: a running sum over [5000, 2]
body = h.make_graph([h.make_node("Add", ["a_in", "v"], ["a_out"]), h.make_node("Identity", ["a_out"], ["o"])],
                    "body", [vi("a_in", F, [2]), vi("v", F, [2])], [vi("a_out", F, [2]), vi("o", F, [2])])
save([h.make_node("Scan", ["a0", "x"], ["a", "run"], body=body, num_scan_inputs=1)], "scanlong",
     [vi("a0", F, [2]), vi("x", F, [5000, 2])], [vi("a", F, [2]), vi("run", F, [5000, 2])])
x = rng.standard_normal((5000, 2)).astype(f32)
a0 = np.zeros(2, f32)
run_ = np.empty_like(x)
acc = a0.copy()
for i in range(5000):
    acc = (acc + x[i]).astype(f32)
    run_[i] = acc
case("scanlong", "l", {"a0": a0, "x": x}, {"a": acc, "run": run_})

# torch.jit.script loops, exported with torch.onnx.export; PyTorch's outputs are the reference
import torch
from typing import List


@torch.jit.script
def grow(x, thr):
    y = x
    s = torch.zeros(1)
    steps: List[torch.Tensor] = []
    while bool(s.sum() < thr):
        y = y * 1.5 + 0.25
        s = s + y.sum()
        steps.append(y)
    return y, s, torch.stack(steps)


class TWhile(torch.nn.Module):
    def forward(self, x):
        return grow(x, x.abs().sum() * 4.0)


class TFor(torch.nn.Module):
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = torch.tanh(y * 0.9 + float(i) * 0.1)
        return y


with torch.no_grad():
    torch.onnx.export(TWhile(), (torch.ones(3),), f"{d}/twhile.onnx", opset_version=15, input_names=["x"],
                      output_names=["y", "s", "ys"])
    for tag, xv in (("a", [0.5, -1.0, 2.0]), ("b", [0.1, 0.1, -0.05]), ("c", [-1.0, 0.0, 0.0])):
        xt = torch.tensor(xv, dtype=torch.float32)
        y, s, ys = TWhile()(xt)
        case("twhile", tag, {"x": xt.numpy()}, {"y": y.numpy(), "s": s.numpy(), "ys": ys.numpy()})
    torch.onnx.export(torch.jit.script(TFor()), (torch.ones(2, 3), torch.tensor(2)), f"{d}/tfor.onnx", opset_version=15,
                      input_names=["x", "n"], output_names=["y"])
    xt = torch.from_numpy(rng.standard_normal((2, 3)).astype(f32))
    for n in (0, 1, 6):
        case("tfor", f"n{n}", {"x": xt.numpy(), "n": np.array(n, np.int64)},
             {"y": TFor()(xt, torch.tensor(n)).numpy()})


class TGrow(torch.nn.Module):
    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = torch.cat([y, y[:, -1:] * 0.5 + float(i)], dim=1)
        return y


class TDec(torch.nn.Module):
    def __init__(self, v=20, dm=32):
        super().__init__()
        self.emb = torch.nn.Embedding(v, dm)
        self.pos = torch.nn.Parameter(torch.randn(64, dm) * 0.1)
        self.q, self.k, self.v = torch.nn.Linear(dm, dm), torch.nn.Linear(dm, dm), torch.nn.Linear(dm, dm)
        self.ff = torch.nn.Linear(dm, v)

    def step(self, tokens):
        n = tokens.size(1)
        h = self.emb(tokens) + self.pos[:n]
        mask = torch.triu(torch.ones(n, n), diagonal=1) > 0
        sc = (self.q(h) @ self.k(h).transpose(1, 2) / 5.65).masked_fill(mask, float("-inf"))
        return self.ff(torch.softmax(sc, -1) @ self.v(h) + h)

    def forward(self, tokens, n):
        i = 0
        going = True
        while i < int(n) and going:
            nxt = self.step(tokens)[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], dim=1)
            going = not bool((nxt == 0).all())
            i += 1
        return tokens


torch.manual_seed(3)
with torch.no_grad():
    torch.onnx.export(torch.jit.script(TGrow()), (torch.ones(2, 3), torch.tensor(2)), f"{d}/tgrow.onnx", opset_version=15,
                      input_names=["x", "n"], output_names=["y"], dynamic_axes={"x": {1: "w"}})
    xt = torch.from_numpy(rng.standard_normal((2, 3)).astype(f32))
    for n in (0, 1, 5):
        case("tgrow", f"n{n}", {"x": xt.numpy(), "n": np.array(n, np.int64)}, {"y": TGrow()(xt, torch.tensor(n)).numpy()})
    dec = torch.jit.script(TDec().eval())
    t0 = torch.tensor([[1, 5, 7]])
    torch.onnx.export(dec, (t0, torch.tensor(4)), f"{d}/tdec.onnx", opset_version=15, input_names=["tokens", "n"],
                      output_names=["out"], dynamic_axes={"tokens": {1: "length"}})
    for n in (0, 1, 6, 30):
        case("tdec", f"n{n}", {"tokens": t0.numpy(), "n": np.array(n, np.int64)}, {"out": dec(t0, torch.tensor(n)).numpy()})
