"""ONNX models with an If on a run-time condition, for tests/cli/onnx_if.bats.

python3 onnx_if_models.py DIR writes into DIR: basic.onnx (cond = sum(x) > 0,
outer-scope values in both branches), fail.onnx (the then branch gathers an
index given as input), nested.onnx (an If computed inside a branch), dyn.onnx
(branches of different shapes), heavy.onnx (a matmul chain and an If in the
taken branch), nzif.onnx (the condition from a NonZero, so not known at load
even with -i), nzsq.onnx and nzdim0.onnx (a size test on a NonZero's
result: of a dim fixed at load, folded, and of the count, at run time), initsame.onnx, initshadow.onnx and initnested.onnx (branch
initializers of one name with other values), tflag.onnx (torch.jit.script:
an If on an input flag, branches of ranks 2 and 1, ops after it; PyTorch's
outputs tflag.want{0,1}.{y,z}.npy), vad.onnx (torch.jit.script, shaped like a
voice-activity detector: an If on the sample rate picks one of two strided
convs, whose output lengths differ, and an LSTM runs over the result;
PyTorch's outputs vad.want{16000,8000}.{p,hn,cn}.npy), and the input files.
"""
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
d = sys.argv[1]
F, B, I = TP.FLOAT, TP.BOOL, TP.INT64
vi = h.make_tensor_value_info
def save(nodes, name, ins, outs, inits=(), opset=13):
    g = h.make_graph(nodes, name, ins, outs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, f"{d}/{name}.onnx")
w = nh.from_array(np.array([0.5, -1.0, 2.0, 1.5], np.float32), "w")
b = nh.from_array(np.array([1.0], np.float32), "b")
zero = nh.from_array(np.array(0.0, np.float32), "zero")
# basic: cond = sum(x) > 0; then relu(x * w) (outer w), else abs(x) - b
then_g = h.make_graph([h.make_node("Mul", ["x", "w"], ["t1"]), h.make_node("Relu", ["t1"], ["ty"])], "then", [], [vi("ty", F, [3, 4])])
else_g = h.make_graph([h.make_node("Abs", ["x"], ["e1"]), h.make_node("Sub", ["e1", "b"], ["ey"])], "else", [], [vi("ey", F, [3, 4])])
save([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0), h.make_node("Greater", ["s", "zero"], ["c"]),
      h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
      h.make_node("Add", ["y", "x"], ["z"])],
     "basic", [vi("x", F, [3, 4])], [vi("z", F, [3, 4])], [w, b, zero])
# fail: the then branch gathers row idx of x (out of range when idx >= 3); else the column sums
then_g = h.make_graph([h.make_node("Gather", ["x", "idx"], ["ty"], axis=0)], "then", [], [vi("ty", F, [1, 4])])
ax0 = nh.from_array(np.array([0], np.int64), "ax0")
else_g = h.make_graph([h.make_node("ReduceSum", ["x", "ax0"], ["ey"], keepdims=1)], "else", [], [vi("ey", F, [1, 4])])
save([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
     "fail", [vi("c", B, []), vi("x", F, [3, 4]), vi("idx", I, [1])], [vi("y", F, [1, 4])], [ax0])
# nested: outer on bool a; then: c2 = max(x) > 1 computed in the branch, inner If: x*2 | x+3; else tanh(x)
two = nh.from_array(np.array(2.0, np.float32), "two"); three = nh.from_array(np.array(3.0, np.float32), "three")
one = nh.from_array(np.array(1.0, np.float32), "one")
in_then = h.make_graph([h.make_node("Mul", ["x", "two"], ["it"])], "it", [], [vi("it", F, [3, 4])])
in_else = h.make_graph([h.make_node("Add", ["x", "three"], ["ie"])], "ie", [], [vi("ie", F, [3, 4])])
then_g = h.make_graph([h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0), h.make_node("Greater", ["mx", "one"], ["c2"]),
                       h.make_node("If", ["c2"], ["ty"], then_branch=in_then, else_branch=in_else)], "then", [], [vi("ty", F, [3, 4])])
else_g = h.make_graph([h.make_node("Tanh", ["x"], ["ey"])], "else", [], [vi("ey", F, [3, 4])])
save([h.make_node("If", ["a"], ["y"], then_branch=then_g, else_branch=else_g)],
     "nested", [vi("a", B, []), vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [two, three, one])
# dyn: then keeps the first 2 rows, else all 3: the output's shape is decided at run time; z its column sums
st = nh.from_array(np.array([0], np.int64), "st"); en = nh.from_array(np.array([2], np.int64), "en")
ax = nh.from_array(np.array([0], np.int64), "ax")
then_g = h.make_graph([h.make_node("Slice", ["x", "st", "en", "ax"], ["ty"])], "then", [], [vi("ty", F, [2, 4])])
else_g = h.make_graph([h.make_node("Sigmoid", ["x"], ["ey"])], "else", [], [vi("ey", F, [3, 4])])
save([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
      h.make_node("ReduceSum", ["y", "ax"], ["z"], keepdims=0)],
     "dyn", [vi("c", B, []), vi("x", F, [3, 4])], [vi("y", F, [None, 4]), vi("z", F, [4])], [st, en, ax])
# heavy: then runs a 64x64 matmul chain (with an If inside on sum(h) > 0), else a cheap neg
W = nh.from_array((np.random.default_rng(3).standard_normal((64, 64)) / 8).astype(np.float32), "W")
in_then = h.make_graph([h.make_node("Relu", ["h2"], ["r"])], "r", [], [vi("r", F, [8, 64])])
in_else = h.make_graph([h.make_node("Neg", ["h2"], ["r2"])], "r2", [], [vi("r2", F, [8, 64])])
then_g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["h1"]), h.make_node("Tanh", ["h1"], ["h1t"]),
                       h.make_node("MatMul", ["h1t", "W"], ["h2"]),
                       h.make_node("ReduceSum", ["h2"], ["hs"], keepdims=0), h.make_node("Greater", ["hs", "zero"], ["c3"]),
                       h.make_node("If", ["c3"], ["ty"], then_branch=in_then, else_branch=in_else)], "then", [], [vi("ty", F, [8, 64])])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["ey"])], "else", [], [vi("ey", F, [8, 64])])
save([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
     "heavy", [vi("c", B, []), vi("x", F, [8, 64])], [vi("y", F, [8, 64])], [W, zero])
# nzif: cond = the sum of NonZero's indices > 10; known only at run time even with -i
ten = nh.from_array(np.array(10, np.int64), "ten")
then_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["ty"])], "then", [], [vi("ty", F, [3, 4])])
else_g = h.make_graph([h.make_node("Sub", ["x", "two"], ["ey"])], "else", [], [vi("ey", F, [3, 4])])
save([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("ReduceSum", ["nz"], ["s"], keepdims=0),
      h.make_node("Greater", ["s", "ten"], ["c"]), h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
     "nzif", [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [ten, two])
# nzsq: torchvision's squeeze guarded by a size test. e = float(NonZero(x > 0)^T[:, [1]]) + w1 (through an
# unsqueeze and a squeeze of axis 0), [K, 1] with K
# known at run time; c = shape(e)[-1] == 1 and shape(NonZero^T, start=1)[0] == 2 test dims fixed at load, so the
# If folds and its branches may differ in rank: then squeeze(e, 1) [K], else e [K, 1]
ci = lambda name, v: nh.from_array(np.array(v, np.int64), name)
w1 = nh.from_array(np.array([0.25], np.float32), "w1")
sq_then = h.make_graph([h.make_node("Squeeze", ["e", "ax1"], ["ty"])], "then", [], [vi("ty", F, [None])])
sq_else = h.make_graph([h.make_node("Identity", ["e"], ["ey"])], "else", [], [vi("ey", F, [None, 1])])
nz_e = [h.make_node("Greater", ["x", "zero"], ["p"]), h.make_node("NonZero", ["p"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]), h.make_node("Gather", ["t", "ax1"], ["col"], axis=1),
        h.make_node("Unsqueeze", ["col", "ax0"], ["cu"]), h.make_node("Squeeze", ["cu", "ax0"], ["cs"]),
        h.make_node("Cast", ["cs"], ["cf"], to=F), h.make_node("Add", ["cf", "w1"], ["e"]),
        h.make_node("Shape", ["e"], ["se"])]
save(nz_e + [h.make_node("Gather", ["se", "m1"], ["d1"]), h.make_node("Equal", ["d1", "i1"], ["c1"]),
             h.make_node("Shape", ["t"], ["st1"], start=1), h.make_node("Gather", ["st1", "i0"], ["d2"]),
             h.make_node("Equal", ["d2", "i2"], ["c2"]), h.make_node("And", ["c1", "c2"], ["c"]),
             h.make_node("If", ["c"], ["y"], then_branch=sq_then, else_branch=sq_else)],
     "nzsq", [vi("x", F, [3, 4])], [vi("y", F, [None])],
     [zero, w1, ci("ax0", [0]), ci("ax1", [1]), ci("m1", -1), ci("i0", 0), ci("i1", 1), ci("i2", 2)], opset=15)
# nzdim0: the same e, but c = shape(e)[0] == 1 tests the count K, known only at run time: not folded
# (the stand-in is not the count); then -e, else e
d0_then = h.make_graph([h.make_node("Neg", ["e"], ["ty"])], "then", [], [vi("ty", F, [None, 1])])
d0_else = h.make_graph([h.make_node("Identity", ["e"], ["ey"])], "else", [], [vi("ey", F, [None, 1])])
save(nz_e + [h.make_node("Gather", ["se", "i0"], ["d0"]), h.make_node("Equal", ["d0", "i1"], ["c"]),
             h.make_node("If", ["c"], ["y"], then_branch=d0_then, else_branch=d0_else)],
     "nzdim0", [vi("x", F, [3, 4])], [vi("y", F, [None, 1])], [zero, w1, ci("ax0", [0]), ci("ax1", [1]), ci("i0", 0), ci("i1", 1)])
# initsame: both branches y = x + k, each with its own initializer k ([1, 1] and [100, 100])
def arr(name, v): return nh.from_array(np.array(v, np.float32), name)
then_g = h.make_graph([h.make_node("Add", ["x", "k"], ["ty"])], "then", [], [vi("ty", F, [2])], [arr("k", [1, 1])])
else_g = h.make_graph([h.make_node("Add", ["x", "k"], ["ey"])], "else", [], [vi("ey", F, [2])], [arr("k", [100, 100])])
save([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
     "initsame", [vi("c", B, []), vi("x", F, [2])], [vi("y", F, [2])])
# initshadow: outer k = 5 (read before the If) and m = 3 (read only after it); the then branch has its own
# k = 1 and m = 2: (x*k + k) * m; the else branch reads the outer k: x*k - k; then z = y + m
then_g = h.make_graph([h.make_node("Add", ["a", "k"], ["t1"]), h.make_node("Mul", ["t1", "m"], ["ty"])], "then", [],
                      [vi("ty", F, [2])], [arr("k", [1, 1]), arr("m", [2, 2])])
else_g = h.make_graph([h.make_node("Sub", ["a", "k"], ["ey"])], "else", [], [vi("ey", F, [2])])
save([h.make_node("Mul", ["x", "k"], ["a"]), h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
      h.make_node("Add", ["y", "m"], ["z"])], "initshadow", [vi("c", B, []), vi("x", F, [2])], [vi("z", F, [2])],
     [arr("k", [5, 5]), arr("m", [3, 3])])
# initnested: outer k = 1; the then branch's own k = 10 and in it an If on b: then x + k (the branch's k),
# else x + k with its own k = 20; the branch multiplies that by k (10 again); the outer else x - k; z = y + k
in_then = h.make_graph([h.make_node("Add", ["x", "k"], ["iy"])], "it", [], [vi("iy", F, [2])])
in_else = h.make_graph([h.make_node("Add", ["x", "k"], ["iey"])], "ie", [], [vi("iey", F, [2])], [arr("k", [20, 20])])
then_g = h.make_graph([h.make_node("If", ["b"], ["i"], then_branch=in_then, else_branch=in_else),
                       h.make_node("Mul", ["i", "k"], ["ty"])], "then", [], [vi("ty", F, [2])], [arr("k", [10, 10])])
else_g = h.make_graph([h.make_node("Sub", ["x", "k"], ["ey"])], "else", [], [vi("ey", F, [2])])
save([h.make_node("If", ["a"], ["y"], then_branch=then_g, else_branch=else_g), h.make_node("Add", ["y", "k"], ["z"])],
     "initnested", [vi("a", B, []), vi("b", B, []), vi("x", F, [2])], [vi("z", F, [2])], [arr("k", [1, 1])])
np.save(f"{d}/x2.npy", np.array([0.5, -2.0], np.float32))
xs = np.zeros((3, 4), np.float32)
xs[0, 1] = 1.5
np.save(f"{d}/xs.npy", xs)
rng = np.random.default_rng(11)
np.save(f"{d}/x.npy", rng.standard_normal((3, 4)).astype(np.float32))
np.save(f"{d}/xneg.npy", -np.abs(rng.standard_normal((3, 4))).astype(np.float32))
np.save(f"{d}/xpos.npy", np.abs(rng.standard_normal((3, 4))).astype(np.float32) + 0.1)
np.save(f"{d}/x64.npy", rng.standard_normal((8, 64)).astype(np.float32))
np.save(f"{d}/t.npy", np.array(True)); np.save(f"{d}/f.npy", np.array(False))
np.save(f"{d}/idx.npy", np.array([7], np.int64)); np.save(f"{d}/idx1.npy", np.array([1], np.int64))

# tflag: torch.jit.script, an If on an input flag; the then branch gives [5, 8], the else branch [3];
# y * 2 + 1 and its sum follow the If. PyTorch's outputs are the reference.
import torch


class TFlag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(4, 8)
        self.l2 = torch.nn.Linear(4, 3)

    def forward(self, x, flag):
        if bool(flag):
            y = torch.relu(self.l1(x))
        else:
            y = self.l2(x).sum(0)
        z = y * 2.0 + 1.0
        return z, z.sum()


torch.manual_seed(5)
with torch.no_grad():
    m = torch.jit.script(TFlag())
    torch.onnx.export(m, (torch.ones(5, 4), torch.tensor(True)), f"{d}/tflag.onnx", opset_version=15,
                      input_names=["x", "flag"], output_names=["z", "s"])
    xt = torch.from_numpy(rng.standard_normal((5, 4)).astype(np.float32))
    np.save(f"{d}/x54.npy", xt.numpy())
    for f in (0, 1):
        z, s = m(xt, torch.tensor(bool(f)))
        np.save(f"{d}/tflag.want{f}.z.npy", z.numpy())
        np.save(f"{d}/tflag.want{f}.s.npy", s.numpy())


# vad: an If on the sample rate (an input) between two strided convs of different output lengths
# (63 or 127 steps), an LSTM over the steps with its state given, a linear and sigmoid on the last step
class Vad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c16 = torch.nn.Conv1d(1, 32, 16, stride=8)
        self.c8 = torch.nn.Conv1d(1, 32, 8, stride=4)
        self.lstm = torch.nn.LSTM(32, 64, batch_first=True)
        self.out = torch.nn.Linear(64, 1)

    def forward(self, x, sr, h, c):
        if bool(sr == 16000):
            f = torch.relu(self.c16(x.unsqueeze(1)))
        else:
            f = torch.relu(self.c8(x.unsqueeze(1)))
        o, (h2, c2) = self.lstm(f.transpose(1, 2), (h, c))
        return torch.sigmoid(self.out(o[:, -1])), h2, c2


with torch.no_grad():
    m = torch.jit.script(Vad())
    z = torch.zeros(1, 1, 64)
    torch.onnx.export(m, (torch.ones(1, 512), torch.tensor(16000), z, z), f"{d}/vad.onnx", opset_version=16,
                      input_names=["x", "sr", "h", "c"], output_names=["p", "hn", "cn"])
    ins = {"x": rng.standard_normal((1, 512)), "h": rng.standard_normal((1, 1, 64)), "c": rng.standard_normal((1, 1, 64))}
    ins = {k: torch.from_numpy(v.astype(np.float32)) for k, v in ins.items()}
    for k, v in ins.items():
        np.save(f"{d}/vad.{k}.npy", v.numpy())
    for sr in (16000, 8000):
        np.save(f"{d}/sr{sr}.npy", np.array(sr, np.int64))
        for k, v in zip(("p", "hn", "cn"), m(ins["x"], torch.tensor(sr), ins["h"], ins["c"])):
            np.save(f"{d}/vad.want{sr}.{k}.npy", v.numpy())
