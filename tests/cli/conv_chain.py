#!/usr/bin/env python3
"""Graphs of several convolutions in a row, for tests/cli/conv_chain.bats.

    conv_chain.py KIND DIR [--nan | --inf]

writes DIR/KIND.onnx (input x, output y, sometimes z), DIR/x.npy and
DIR/want/y.npy (and DIR/want/z.npy): PyTorch's value of y (z) in float64, the
independent oracle. --nan puts a NaN into x (the CPU backend then runs its
own loops for the relu / clip convs that read it, see src/cpu/conv_dnnl.c);
--inf an infinity (-inf), which the products make NaN of.

Kinds (channel counts multiples of 16 unless said; all f32, opset 13):
  mbv2    conv3x3+clip, depthwise3x3+clip, conv1x1, residual add, conv1x1+relu
  c24     the same with 24 and 40 channels (not a multiple of 16)
  se      conv1x1+silu, depthwise+silu, squeeze-excitation (global average
          pool, two 1x1 convs, sigmoid, mul), conv1x1 projection; batch 2
  se_max  the same with a global max pool
  pool    conv3x3 stride 2 + relu, max pool 3x3/2, conv3x3, residual add, relu
  d1      a 1-D chain; d3 a 3-D chain
  mixed   a conv whose output is also a graph output (z), one read by a sigmoid
  grouped strides, dilations and groups of 2 between plain convs
  overflow a finite input whose products pass FLT_MAX: inf, then NaN (inf - inf)
          through a relu conv
  res     conv3x3+relu, conv3x3, residual add of the graph's input x, relu,
          max pool 2x2 (the graph's output): x is read by two convs
  pool_out conv3x3+relu, conv1x1 (48 channels), max pool 3x3/2 with padding
          (the graph's output)
  res_wide res on 48 channels of 9 x 38 (batch 1): rows of more than 16
          positions, a pool output of 19 columns (16 and 3) and 4 rows (the
          input's last row left out)
  res_dw   res with depthwise convs (oneDNN's nChw16c and the like, not
          channels-last) on 32 channels of 7 x 21
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper as h, numpy_helper as nh

kind, out = sys.argv[1], sys.argv[2]
nan = "--nan" in sys.argv[3:]
inf = "--inf" in sys.argv[3:]
rng = np.random.default_rng(11)
inits, nodes, outputs = [], [], ["y"]
W = {}  # name -> float64 tensor (the oracle's copy)


def param(name, shape, scale):
    v = (rng.standard_normal(shape) * scale).astype(np.float32)
    inits.append(nh.from_array(v, name))
    W[name] = torch.from_numpy(v.astype(np.float64))
    return name


counter = [0]


def conv(x, cin, cout, k, act=None, stride=1, pad=None, group=1, dil=1, bias=True, rank=2):
    """Adds Conv (+ activation) reading tensor x; returns (onnx name, torch fn)."""
    counter[0] += 1
    i = counter[0]
    pad = (k // 2) * dil if pad is None else pad
    w = param("w%d" % i, (cout, cin // group) + (k,) * rank, 1.0 / np.sqrt(cin // group * k ** rank))
    ins = [x, w] + ([param("b%d" % i, (cout,), 0.1)] if bias else [])
    y = "c%d" % i
    nodes.append(h.make_node("Conv", ins, [y], kernel_shape=[k] * rank, strides=[stride] * rank,
                             pads=[pad] * (2 * rank), group=group, dilations=[dil] * rank))
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]

    def run(t, w=w, b=ins[2] if bias else None):
        return fn(t, W[w], W[b] if b else None, stride=stride, padding=pad, dilation=dil, groups=group)
    return activation(y, run, act)


def activation(y, run, act):
    if act is None:
        return y, run
    z = y + "_" + act
    if act == "relu":
        nodes.append(h.make_node("Relu", [y], [z]))
        return z, lambda t: torch.relu(run(t))
    if act == "clip":
        nodes.append(h.make_node("Clip", [y, "lo", "hi"], [z]))
        return z, lambda t: torch.clamp(run(t), 0.0, 6.0)
    if act == "silu":
        nodes.extend([h.make_node("Sigmoid", [y], [z + "_s"]), h.make_node("Mul", [y, z + "_s"], [z])])
        return z, lambda t: F.silu(run(t))
    raise ValueError(act)


inits += [nh.from_array(np.float32(0), "lo"), nh.from_array(np.float32(6), "hi")]
if kind in ("mbv2", "c24"):
    c0, c1 = (16, 32) if kind == "mbv2" else (24, 40)
    shape = (1, c0, 10, 10)
    a, fa = conv("x", c0, c1, 3, "clip")
    b, fb = conv(a, c1, c1, 3, "clip", group=c1)
    c, fc = conv(b, c1, c0, 1)
    nodes.append(h.make_node("Add", [c, "x"], ["r"]))
    d, fd = conv("r", c0, c1, 1, "relu")
    nodes.append(h.make_node("Identity", [d], ["y"]))

    def oracle(x):
        r = fc(fb(fa(x))) + x
        return fd(r)
elif kind in ("se", "se_max"):
    shape = (2, 32, 9, 9)
    a, fa = conv("x", 32, 32, 1, "silu")
    b, fb = conv(a, 32, 32, 3, "silu", group=32)
    pool = "GlobalMaxPool" if kind == "se_max" else "GlobalAveragePool"
    nodes.append(h.make_node(pool, [b], ["gap"]))
    s1, fs1 = conv("gap", 32, 8, 1, "silu")
    s2, fs2 = conv(s1, 8, 32, 1)
    nodes += [h.make_node("Sigmoid", [s2], ["gate"]), h.make_node("Mul", [b, "gate"], ["m"])]
    p, fp = conv("m", 32, 16, 1)
    nodes.append(h.make_node("Identity", [p], ["y"]))

    def oracle(x):
        bb = fb(fa(x))
        g = bb.amax(dim=(2, 3), keepdim=True) if kind == "se_max" else bb.mean(dim=(2, 3), keepdim=True)
        if kind == "se_max":  # ftrun's max, as NumPy's, is NaN where a NaN is among the values
            g = torch.where(torch.isnan(bb).any(dim=3, keepdim=True).any(dim=2, keepdim=True), float("nan"), g)
        gate = torch.sigmoid(fs2(fs1(g)))
        return fp(bb * gate)
elif kind == "pool":
    shape = (1, 16, 17, 17)
    a, fa = conv("x", 16, 32, 3, "relu", stride=2)
    nodes.append(h.make_node("MaxPool", [a], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    b, fb = conv("mp", 32, 32, 3)
    nodes += [h.make_node("Add", [b, "mp"], ["r"]), h.make_node("Relu", ["r"], ["y"])]

    def oracle(x):
        mp = F.max_pool2d(fa(x), 3, 2, 1)
        return torch.relu(fb(mp) + mp)
elif kind in ("d1", "d3"):
    rank = 1 if kind == "d1" else 3
    shape = (2, 16, 19) if rank == 1 else (1, 16, 4, 6, 5)
    a, fa = conv("x", 16, 32, 3, "relu", rank=rank)
    b, fb = conv(a, 32, 32, 3, "clip", group=32, rank=rank)
    c, fc = conv(b, 32, 16, 1, rank=rank)
    nodes.append(h.make_node("Add", [c, "x"], ["y"]))

    def oracle(x):
        return fc(fb(fa(x))) + x
elif kind == "mixed":
    shape = (1, 16, 8, 8)
    a, fa = conv("x", 16, 32, 3, "relu")
    b, fb = conv(a, 32, 32, 1)
    nodes.append(h.make_node("Identity", [b], ["z"]))
    c, fc = conv(b, 32, 32, 3, "relu")
    nodes.append(h.make_node("Sigmoid", [c], ["sg"]))
    d, fd = conv("sg", 32, 16, 1)
    nodes.append(h.make_node("Identity", [d], ["y"]))
    outputs.append("z")

    def oracle(x):
        return fd(torch.sigmoid(fc(fb(fa(x)))))

    def oracle_z(x):
        return fb(fa(x))
elif kind == "grouped":
    shape = (2, 32, 13, 11)
    a, fa = conv("x", 32, 32, 3, "relu", stride=2, group=2)
    b, fb = conv(a, 32, 48, 3, dil=2, group=2)
    c, fc = conv(b, 48, 32, 1, "relu", bias=False)
    nodes.append(h.make_node("Identity", [c], ["y"]))

    def oracle(x):
        return fc(fb(fa(x)))
elif kind == "overflow":  # finite input, a product past FLT_MAX: inf, then inf - inf = NaN through a relu
    shape = (1, 1, 6, 6)
    counter[0] += 1
    w1 = np.full((16, 1, 1, 1), 1e20, np.float32)
    inits.append(nh.from_array(w1, "w1"))
    nodes += [h.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[1, 1]), h.make_node("Relu", ["c1"], ["r1"])]
    b, fb = conv("r1", 16, 16, 3, "relu")
    nodes.append(h.make_node("Identity", [b], ["y"]))

    def oracle(x):
        with np.errstate(over="ignore"):
            c1 = torch.from_numpy(F.conv2d(x, torch.from_numpy(w1.astype(np.float64))).numpy().astype(np.float32))
        return fb(c1.double())
elif kind in ("res", "res_wide", "res_dw"):
    c0 = 48 if kind == "res_wide" else 32
    shape = {"res": (2, 32, 12, 12), "res_wide": (1, 48, 9, 38), "res_dw": (2, 32, 7, 21)}[kind]
    g = c0 if kind == "res_dw" else 1
    a, fa = conv("x", c0, c0, 3, "relu", group=g)
    b, fb = conv(a, c0, c0, 3, group=g)
    nodes += [h.make_node("Add", [b, "x"], ["r"]), h.make_node("Relu", ["r"], ["rr"]),
              h.make_node("MaxPool", ["rr"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]

    def oracle(x):
        return F.max_pool2d(torch.relu(fb(fa(x)) + x), 2, 2)
elif kind == "pool_out":
    shape = (1, 24, 15, 15)
    a, fa = conv("x", 24, 48, 3, "relu")
    b, fb = conv(a, 48, 48, 1)
    nodes.append(h.make_node("MaxPool", [b], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))

    def oracle(x):
        return F.max_pool2d(fb(fa(x)), 3, 2, 1)
else:
    sys.exit("conv_chain.py: unknown kind " + kind)

x = rng.standard_normal(shape).astype(np.float32)
if kind == "overflow":  # one pixel makes products of 1e40
    x = np.abs(x)
    x[0, 0, 2, 3] = 1e20
if nan:
    x.reshape(-1)[x.size // 3] = np.nan
if inf:
    x.reshape(-1)[x.size // 3 + 5] = -np.inf
xt = torch.from_numpy(x.astype(np.float64))
want = oracle(xt).numpy()
want_z = oracle_z(xt).numpy() if "z" in outputs else None
graph = h.make_graph(nodes, kind, [h.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                     [h.make_tensor_value_info(o, TensorProto.FLOAT, want.shape if o == "y" else want_z.shape) for o in outputs], inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, "%s/%s.onnx" % (out, kind))
np.save("%s/x.npy" % out, x)
os.makedirs(out + "/want", exist_ok=True)
np.save("%s/want/y.npy" % out, want.astype(np.float32))
if "z" in outputs:
    np.save("%s/want/z.npy" % out, want_z.astype(np.float32))
