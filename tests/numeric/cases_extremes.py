"""Geometry extremes of the windowed ops: conv, conv_transpose, conv_integer,
qlinear_conv, deform_conv, the pools (max, average, lp), resize, grid_sample,
roi_align, col2im, lrn, space_to_depth / depth_to_space and stft, over the corners
their own case files leave out: pads larger than the input (output positions, whole
tiles of them, that see only padding), pads on one side only, strides and dilations
larger than the kernel and the input, kernels as large as the padded input, 1x1 and
1xN inputs, 1-D / 2-D / 3-D, groups 1, 2 and depthwise, batch 1 and odd batches, with
and without bias, f32 and f64.  Where ONNX gives a geometry no output (an output size
below 1, a window larger than the padded input, attributes out of range) the case
expects ftrun to refuse the node (exit 3, naming it).

The oracles are the ones of the ops' own case files, reused here, never ftrun's
output: PyTorch 1.13 (conv1d/2d/3d and conv_transpose1d/2d/3d in float64 with the
ONNX pads applied by F.pad, torchvision's deform_conv2d and roi_align, F.fold,
F.grid_sample, F.interpolate where it has ONNX's semantics) and NumPy written from
the ONNX rules (the pooling windows, the ONNX reference's resize, RoiAlign max,
N-D Col2Im, LRN, SpaceToDepth, the integer convolutions in int64).  The rules that
matter at these extremes:
  conv: out = floor((in + pad_begin + pad_end - span) / stride) + 1 with span =
      (k - 1) dilation + 1; an output position whose every tap lies in the padding
      is the bias alone (plus the fused sum).  The conv cases are named "convNd "
      so that tests/run.sh runs them again in each CPU form (FTRUN_CONV_IMPL); the
      depthwise 2-D f32 ones with square 3/5/7 kernels at stride 1 or 2 reach the row
      kernels of src/cpu/conv.c (dw_small below 48 output columns, dw_plane from 48).
  conv_transpose: out = stride (in - 1) + output_padding + span - pads; output_padding
      may exceed the stride (ONNX asks for less; ftrun-graph(5) documents that the
      extra cells at the end hold the bias alone, as the oracle's zero continuation
      of the full result gives).
  strides, dilations and pads near ftrun's limits (2^40 for the convs, 2^31 for the
      pools): the PyTorch oracles pad the input first, which cannot be done there, so
      direct_conv computes conv and conv_transpose from their definition, one output
      and kernel position at a time in Python integers (checked against the PyTorch
      oracles on small geometries before use), col2im_direct likewise Col2Im; the
      pooling oracle of cases_pool only does index arithmetic on the windows and
      serves as it is.
  conv_integer / qlinear_conv: the padding holds the zero point (ONNX's reference
      subtracts the zero points, then pads with 0), so a position of padding only is
      the bias, requantized; SAME_* pads are made explicit by the ONNX rule for the
      int64 oracle of cases_quant, which takes explicit pads.
  conv -> max_pool chains: the conv's output stays in oneDNN's blocked layout and
      max_pool reads it there (src/cpu/blocked.c); the max of perturbed values moves
      by at most the largest perturbation in its window, so the conv's tolerance
      scale is carried through the same max.
  pools: windows of padding only are allowed (ONNX puts no bound on pads): max gives
      -inf (the integer minimum for i8 / u8), average NaN with count_include_pad=0
      and 0 with count_include_pad=1, lp 0 (ftrun-graph(5)); ceil_mode drops a last
      window that would start in the right padding.
  resize: the ONNX reference's source coordinates; on an axis of 1 cell every
      coordinate reads that cell (edge padding), whatever the transformation.
Tolerances are the reused builders' own (see their modules)."""
import math

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

import cases_geom as geom
import cases_image as image
from cases_conv import conv_case, conv_ref, convt_case, convt_ref, f64, rep, sq, tol as conv_tol
from cases_linalg import deform_case
from cases_loss import stft_ref
from cases_pool import pool_case, pool_geometry, pool_ref, resize_case, shp
from cases_quant import conv_int_ref, qlconv_ref, rand_int
from harness import NP, Case, Tol, rng_for

X = "geometry extreme"  # every name carries it: none may repeat a name of another module


# ---------------------------------------------------------------- huge attributes

def direct_conv(x, w, b, strides, pads, dil, group, transpose=False):
    """conv (or conv_transpose) by its definition, one output position and kernel
    position at a time with Python integers: for attributes near ftrun's limits
    (strides, pads, dilations of 2^31 to 2^40), where padding the input first, as
    conv_ref and convt_ref do, cannot be done.  conv: y[o] = b + sum x[o s + k d - pb]
    w[k]; conv_transpose: y[o] = b + sum over the i with i s + k d - pb = o.  Returns
    the float64 result, the same sum of |terms| and the terms per output."""
    r = x.ndim - 2
    X, W = f64(x), f64(w)
    N, C = X.shape[:2]
    ks = W.shape[2:]
    Cg = C // group
    M = W.shape[1] * group if transpose else W.shape[0]
    Mg = M // group
    out = []
    for j in range(r):
        span = (ks[j] - 1) * dil[j] + 1
        n = X.shape[2 + j]
        out.append(strides[j] * (n - 1) + span - pads[j] - pads[r + j] if transpose
                   else (n + pads[j] + pads[r + j] - span) // strides[j] + 1)
    y = np.zeros((N, M) + tuple(out))
    S = np.zeros_like(y)
    for o in np.ndindex(*out):
        for k in np.ndindex(*ks):
            idx = []
            for j in range(r):
                if transpose:
                    v = o[j] + pads[j] - k[j] * dil[j]
                    i = v // strides[j] if v >= 0 and v % strides[j] == 0 else -1
                else:
                    i = o[j] * strides[j] + k[j] * dil[j] - pads[j]
                if not 0 <= i < X.shape[2 + j]:
                    break
                idx.append(i)
            else:
                for g in range(group):
                    xv = X[(slice(None), slice(g * Cg, (g + 1) * Cg)) + tuple(idx)]  # [N, Cg]
                    if transpose:
                        wv = W[(slice(g * Cg, (g + 1) * Cg), slice(None)) + k]  # [Cg, Mg]
                    else:
                        wv = W[(slice(g * Mg, (g + 1) * Mg), slice(None)) + k].T  # [Cg, Mg]
                    sl = (slice(None), slice(g * Mg, (g + 1) * Mg)) + o
                    y[sl] += xv @ wv
                    S[sl] += np.abs(xv) @ np.abs(wv)
    if b is not None:
        bb = f64(b).reshape((1, M) + (1,) * r)
        y, S = y + bb, S + np.abs(bb)
    return y, S, Cg * int(np.prod(ks))


def direct_self_check():
    """The direct oracle agrees with the padded PyTorch ones on small geometries."""
    rng = np.random.default_rng(5)
    for xs, ws, st, pads, dil, group in (((2, 4, 5, 4), (6, 2, 3, 2), [2, 1], [3, 0, 1, 4], [1, 2], 2),
                                         ((1, 3, 4), (3, 1, 2), [3], [0, 5], [4], 3)):
        x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
        want, _, _ = conv_ref(x, w, b, st, pads, dil, group, "NOTSET")
        if not np.allclose(direct_conv(x, w, b, st, pads, dil, group)[0], want, rtol=1e-12, atol=1e-12):
            raise AssertionError("direct conv oracle disagrees with PyTorch")
        wt = rng.standard_normal((xs[1], 2) + ws[2:])
        bt = rng.standard_normal(2 * group)
        want, _, _ = convt_ref(x, wt, bt, st, [min(v, 1) for v in pads], dil, group, "NOTSET", None, None)
        got = direct_conv(x, wt, bt, st, [min(v, 1) for v in pads], dil, group, transpose=True)[0]
        if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            raise AssertionError("direct conv_transpose oracle disagrees with PyTorch")


def huge_case(op, xs, ws, dt="f32", bias=True, strides=None, pads=None, dil=None, group=1, label=""):
    """A conv / conv_transpose case whose oracle is direct_conv."""
    r = len(xs) - 2
    st, dl = strides or [1] * r, dil or [1] * r
    pp = pads or [0] * 2 * r
    a = {"strides": st, "pads": pp, "dilations": dl}
    if group != 1:
        a["group"] = group
    pre = "conv%dd" % r if op == "conv" else "conv_transpose%dd" % r
    name = "%s %s x=%s w=%s%s %s %s: %s" % (pre, dt, shp(xs), shp(ws), " bias" if bias else "",
                                           " ".join("%s=%s" % (k, ",".join(map(str, v)) if isinstance(v, list) else v)
                                                    for k, v in a.items()), X, label)

    def build():
        direct_self_check()
        rng = rng_for(name)
        x = rep(rng.standard_normal(xs), dt)
        w = rep(rng.standard_normal(ws) / sq(int(np.prod(ws[1:]))), dt)
        M = ws[1] * group if op == "conv_transpose" else ws[0]
        b = rep(rng.standard_normal(M), dt) if bias else None
        y, S, k = direct_conv(x, w, b, st, pp, dl, group, transpose=op == "conv_transpose")
        return {"inputs": [("x", x), ("w", w)] + ([("b", b)] if bias else []), "expect": {"y": rep(y, dt)},
                "tol": conv_tol(dt, k, S)}
    return Case(name, op, attrs=a, build=build)


def huge_cases():
    c = []
    T40, T39, T38 = 2 ** 40, 2 ** 39, 2 ** 38
    for dt in ("f32", "f64"):
        c.append(huge_case("conv", (1, 2, 3), (2, 2, 2), dt, strides=[T40], pads=[T40, 0],
                           label="stride and pads 2^40"))
        c.append(huge_case("conv", (1, 2, 2), (3, 2, 2), dt, dil=[T39], pads=[T39, 0], label="dilation 2^39"))
    c.append(huge_case("conv", (1, 1, 2, 2), (1, 1, 2, 2), strides=[T40, 1], dil=[1, T38], pads=[T40, T38, 0, 0],
                       label="stride 2^40, dilation 2^38"))
    c.append(huge_case("conv", (1, 2, 2, 2), (2, 1, 1, 1), group=2, strides=[T40, T40], pads=[T40 - 1, 0, 0, T40],
                       label="depthwise, strides 2^40"))
    c.append(huge_case("conv", (1, 2, 4, 3), (2, 1, 3, 3), group=2, strides=[T40, 2], pads=[T40 - 1, 1, 0, 1],
                       bias=False, label="depthwise 3x3, stride 2^40"))
    c.append(huge_case("conv", (3, 2, 1, 2, 1), (2, 2, 1, 2, 1), strides=[1, T40, 1], pads=[0, T40 - 1, 0, 0, 1, 0],
                       label="3-D stride 2^40"))
    c.append(huge_case("conv_transpose", (1, 1, 2), (1, 2, 1), strides=[T40], pads=[T40 - 1, 0],
                       label="stride 2^40"))
    c.append(huge_case("conv_transpose", (1, 2, 2), (2, 1, 2), "f64", dil=[T39], pads=[T39, 0], group=2,
                       label="dilation 2^39"))
    c.append(huge_case("conv_transpose", (2, 1, 2, 2), (1, 1, 1, 2), strides=[T40, 3], pads=[T40 - 1, 0, 0, 1],
                       label="stride 2^40"))
    # pools: strides, dilations and pads of 2^31 (the oracle's windows are index arithmetic)
    T31 = 2 ** 31
    for op, cips in (("max_pool", (None,)), ("average_pool", (0, 1))):
        for cip in cips:
            c.append(pool_case(op, "f32", (1, 2, 3), [2], [T31], pads=[T31, 0], cip=cip, torch_check=False,
                               label=X + ": stride and pads 2^31"))
            c.append(pool_case(op, "f64", (1, 2, 2), [2], [1], d=[T31], pads=[T31, 0], cip=cip, torch_check=False,
                               label=X + ": dilation 2^31"))
            c.append(pool_case(op, "f32", (1, 1, 2, 3), [1, 2], [1, T31], pads=[0, T31, 1, 0], ceil_mode=1, cip=cip,
                               torch_check=False, label=X + ": stride 2^31, ceil_mode"))
    c.append(image.lp_case("f32", (1, 2, 2), [2], [1], d=[T31], pads=[T31, 0], label=X + ": dilation 2^31"))
    return c


# ---------------------------------------------------------------- conv

def conv_cases():
    c = []

    def cv(xs, ws, label, **kw):
        c.append(conv_case(xs, ws, label=X + ": " + label, **kw))

    # the 1-D grouped conv of ONNX's test_Conv1d_groups with leading pads past whole
    # tiles of output positions, trailing pads, both; thread counts change the tiles
    for p in (122, 124, 127, 128, 200, 1000):
        cv((2, 4, 6), (4, 2, 3), "leading pads", group=2, pads=[p, 0])
    for p in (124, 1000):
        cv((2, 4, 6), (4, 2, 3), "leading pads", dt="f64", group=2, pads=[p, 0])
        cv((2, 4, 6), (4, 2, 3), "trailing pads", group=2, pads=[0, p])
    cv((2, 4, 6), (4, 2, 3), "both pads", group=2, pads=[128, 128], bias=False)
    for t in ("2", "3", "4"):
        cv((2, 4, 6), (4, 2, 3), "leading pads --threads " + t, group=2, pads=[124, 0], args=["--threads", t])
        cv((1, 2, 5), (3, 2, 2), "trailing pads --threads " + t, pads=[0, 300], args=["--threads", t])
    # 1-D: groups 1 / depthwise / multiplier, odd batch, no bias
    cv((3, 5, 7), (2, 5, 4), "pads past the input, odd batch", pads=[150, 3])
    cv((1, 3, 5), (3, 1, 3), "depthwise leading pads", group=3, pads=[130, 0])
    cv((1, 2, 4), (4, 1, 2), "depthwise x2 trailing pads", group=2, pads=[0, 200], bias=False)
    cv((1, 1, 1), (1, 1, 1), "one element, pads 300", pads=[300, 300])
    # strides and dilations beyond the kernel and the input
    cv((1, 3, 5), (2, 3, 2), "stride past the input", strides=[7], pads=[1, 1])
    cv((1, 3, 5), (2, 3, 2), "stride 100, leading pads 200", strides=[100], pads=[200, 0])
    cv((1, 2, 4), (3, 2, 3), "dilation past the input", dil=[5], pads=[5, 5])
    cv((1, 2, 3), (2, 2, 3), "dilation 50, pads 100", dil=[50], pads=[100, 100], dt="f64")
    cv((2, 4, 5), (4, 2, 3), "grouped dilation and stride past the input", group=2, dil=[4], strides=[6],
       pads=[4, 6])
    # kernels as large as the padded input; a 1x1 kernel over pads only
    cv((1, 2, 5), (3, 2, 9), "kernel = padded input", pads=[2, 2])
    cv((1, 2, 5), (3, 2, 9), "kernel = padded input, stride 3", pads=[2, 2], strides=[3], dt="f64")
    cv((1, 4, 3), (5, 4, 1), "1-tap kernel, pads past the input", pads=[200, 100])
    # kernels wider than conv.c's table of 64 tap ranges (computed on the fly past it)
    cv((1, 2, 10), (3, 2, 80), "kernel of 80 = padded input", pads=[35, 35])
    cv((2, 2, 10), (2, 1, 100), "depthwise kernel of 100", group=2, pads=[60, 50], dt="f64")
    cv((1, 2, 3, 5), (2, 2, 2, 70), "kernel of 70 columns", pads=[0, 33, 1, 33], strides=[1, 3])
    # auto_pad with a kernel larger than the input or a stride past it
    cv((1, 2, 3), (2, 2, 2), "stride past the input", strides=[5], auto_pad="SAME_UPPER")
    cv((1, 2, 2), (2, 2, 7), "kernel larger than the input", auto_pad="SAME_LOWER")
    cv((1, 2, 2), (2, 2, 6), "kernel larger than the input", auto_pad="SAME_UPPER", dil=[3])
    # fused residual sum and activation over positions of padding only
    cv((1, 4, 6), (4, 2, 3), "leading pads", group=2, pads=[124, 0], res=True, act="relu")

    # 2-D
    cv((1, 2, 3, 4), (3, 2, 3, 3), "pads past the input", pads=[124, 0, 0, 124])
    cv((1, 2, 3, 4), (3, 2, 3, 3), "pads past the input", pads=[0, 130, 130, 0], dt="f64", bias=False)
    cv((2, 4, 3, 3), (4, 2, 3, 3), "grouped leading pads", group=2, pads=[130, 0, 0, 0])
    cv((1, 2, 2, 2), (2, 2, 2, 2), "rows of padding only", pads=[200, 0, 0, 0])
    cv((1, 2, 2, 2), (2, 2, 2, 2), "columns of padding only", pads=[0, 0, 0, 200])
    cv((1, 3, 4, 5), (2, 3, 2, 2), "strides past the input", strides=[9, 11], pads=[3, 4, 5, 6])
    cv((1, 2, 3, 3), (2, 2, 2, 2), "dilations past the input", dil=[4, 5], pads=[2, 3, 2, 3])
    cv((2, 3, 3, 4), (4, 3, 5, 6), "kernel = padded input", pads=[1, 1, 1, 1])
    cv((1, 3, 3, 4), (4, 3, 5, 6), "kernel = padded input", pads=[2, 0, 0, 2], dt="f64")
    cv((3, 4, 2, 3), (6, 2, 2, 3), "grouped, odd batch", group=2, pads=[4, 0, 0, 5], strides=[3, 1])
    cv((1, 2, 2, 3), (2, 2, 5, 7), "kernel larger than the input", auto_pad="SAME_UPPER", strides=[1, 2])
    cv((1, 2, 2, 3), (2, 2, 5, 7), "kernel larger than the input", auto_pad="SAME_LOWER", strides=[2, 1],
       dt="f64")
    cv((1, 6, 1, 1), (4, 6, 1, 1), "1x1 over pads only", pads=[3, 0, 0, 4])
    # depthwise row kernels (f32, square 3 / 5 / 7, stride 1 / 2): pads >= K, tiny
    # inputs, pads on one side; narrow rows (dw_small) and rows of 48+ (dw_plane)
    for K, S, xs, pads in ((3, 1, (1, 2, 1, 1), [3, 3, 3, 3]), (3, 2, (1, 3, 2, 2), [4, 4, 4, 4]),
                           (5, 1, (1, 2, 2, 1), [5, 6, 7, 5]), (5, 2, (1, 2, 1, 3), [6, 5, 5, 6]),
                           (7, 1, (1, 2, 3, 2), [7, 7, 7, 7]), (7, 2, (1, 2, 1, 1), [8, 9, 9, 8]),
                           (3, 1, (1, 2, 2, 3), [1, 50, 1, 50]), (5, 2, (1, 2, 1, 2), [5, 60, 5, 60]),
                           (7, 1, (1, 2, 2, 2), [7, 30, 7, 30]), (7, 2, (1, 3, 3, 1), [0, 100, 7, 0]),
                           (3, 2, (1, 2, 4, 5), [9, 0, 0, 0]), (5, 1, (1, 2, 3, 4), [1, 0, 1, 9]),
                           (3, 1, (1, 2, 3, 1), [0, 60, 0, 0]), (5, 2, (2, 3, 2, 2), [0, 0, 6, 120])):
        C = xs[1]
        cv(xs, (C, 1, K, K), "depthwise row K=%d S=%d" % (K, S), group=C, strides=[S, S], pads=pads)
    cv((1, 2, 1, 2), (4, 1, 3, 3), "depthwise row x2 multiplier", group=2, pads=[3, 3, 3, 3])
    cv((1, 2, 1, 2), (2, 1, 3, 3), "depthwise row", group=2, pads=[3, 3, 3, 3], res=True, act="clip", act_lo=-0.5,
       act_hi=0.5)
    cv((1, 2, 2, 2), (2, 1, 3, 3), "depthwise dilated", group=2, dil=[4, 4], pads=[4, 4, 4, 4])
    cv((1, 2, 2, 2), (2, 1, 5, 5), "depthwise", group=2, pads=[6, 6, 6, 6], dt="f64")
    cv((1, 2, 1, 1), (2, 1, 3, 3), "depthwise row", group=2, strides=[2, 2], pads=[3, 3, 3, 3], bias=False)

    # 3-D
    cv((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), "leading pads", pads=[130, 0, 0, 0, 0, 0])
    cv((1, 2, 1, 1, 1), (3, 2, 3, 3, 3), "pads past the input", pads=[3, 3, 3, 3, 3, 3])
    cv((1, 3, 2, 2, 2), (3, 1, 2, 2, 2), "depthwise, pads on one side", group=3, strides=[3, 1, 2],
       pads=[2, 0, 3, 0, 2, 4])
    cv((3, 4, 2, 2, 3), (2, 2, 1, 2, 3), "grouped, odd batch", group=2, dil=[1, 3, 2], pads=[0, 2, 1, 4, 0, 3])
    cv((1, 2, 2, 2, 2), (2, 2, 4, 4, 4), "kernel = padded input", pads=[1] * 6)
    cv((1, 2, 2, 2, 2), (2, 2, 2, 2, 2), "strides past the input", strides=[5, 6, 7], pads=[2, 3, 4, 2, 3, 4],
       dt="f64")
    cv((2, 2, 1, 2, 1), (2, 2, 3, 1, 2), "kernel larger than the input", auto_pad="SAME_UPPER", bias=False)
    return c


def chain_case(xs, ws, cattrs, k, s, pads, d=None, ceil_mode=0, dw=False, label=""):
    """conv (f32, 16 output channels) -> max_pool [-> depthwise 1x1 conv]: under
    FTRUN_CONV_IMPL auto and blocked the conv's output stays in oneDNN's blocked
    layout and max_pool reads it there (src/cpu/blocked.c), writing its output
    plain (the graph's output) or, before a conv, blocked.  Oracle: conv_ref, the
    pooling windows of cases_pool, conv_ref again; the tolerance is the conv's with
    S carried through the max (the max of perturbed values moves at most by the
    largest perturbation in the window) and, after the 1x1 conv, scaled by |w2|."""
    sp = len(k)
    pa = {"kernel_shape": list(k), "strides": list(s), "pads": list(pads)}
    if d:
        pa["dilations"] = list(d)
    if ceil_mode:
        pa["ceil_mode"] = 1
    name = "conv2d f32 x=%s w=%s %s then max_pool %s%s %s: %s" % (
        shp(xs), shp(ws), " ".join("%s=%s" % kv for kv in sorted(cattrs.items())),
        " ".join("%s=%s" % kv for kv in pa.items()), " then depthwise 1x1 conv" if dw else "", X, label)
    M = ws[0]
    nodes = [{"name": "c1", "op": "conv", "inputs": ["x", "w", "b"], "outputs": ["h"], "attrs": cattrs},
             {"name": "mp", "op": "max_pool", "inputs": ["h"], "outputs": ["p" if dw else "y"], "attrs": pa}]
    if dw:
        nodes.append({"name": "c2", "op": "conv", "inputs": ["p", "w2", "b2"], "outputs": ["y"],
                      "attrs": {"group": M}})

    def build():
        rng = rng_for(name)
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) / sq(int(np.prod(ws[1:])))).astype(np.float32)
        b = rng.standard_normal(M).astype(np.float32)
        h, S, kk = conv_ref(x, w, b, cattrs.get("strides"), cattrs.get("pads"), None, 1, "NOTSET")
        out, pb, _ = pool_geometry(h.shape[2:], k, s, d or [1] * sp, pads, ceil_mode, "NOTSET")
        y, _ = pool_ref(h, "max", k, s, d or [1] * sp, pb, pads[sp:], out)
        sc, _ = pool_ref(S + np.abs(h), "max", k, s, d or [1] * sp, pb, pads[sp:], out)
        sc = np.where(np.isfinite(sc), sc, 0.0)
        ins = [("x", x), ("w", w), ("b", b)]
        if dw:
            w2 = rng.uniform(0.5, 1.5, (M, 1, 1, 1)).astype(np.float32)
            b2 = rng.standard_normal(M).astype(np.float32)
            y, S2, _ = conv_ref(y, w2, b2, None, None, None, M, "NOTSET")
            sc = np.where(np.isfinite(S2), S2, 0.0) + f64(w2).reshape(1, M, 1, 1) * sc
            ins += [("w2", w2), ("b2", b2)]
        return {"inputs": ins, "expect": {"y": y.astype(np.float32)}, "tol": conv_tol("f32", kk, sc)}
    return Case(name, nodes=nodes, outputs=["y"], build=build)


def chain_cases():
    c = []
    cat = {"pads": [1, 1, 1, 1]}
    for dw in (False, True):
        c.append(chain_case((1, 3, 3, 4), (16, 3, 3, 3), cat, [2, 2], [1, 1], [3, 0, 0, 3], dw=dw,
                            label="windows of padding only"))
        c.append(chain_case((2, 3, 3, 4), (16, 3, 3, 3), cat, [3, 3], [4, 4], [5, 5, 5, 5], d=[2, 2], dw=dw,
                            label="strides and dilations past the input"))
        c.append(chain_case((1, 3, 2, 2), (16, 3, 3, 3), cat, [2, 3], [5, 3], [0, 2, 1, 2], ceil_mode=1, dw=dw,
                            label="ceil_mode, strides past the input"))
    c.append(chain_case((1, 3, 3, 3), (32, 3, 3, 3), cat, [5, 5], [1, 1], [1, 1, 1, 1],
                        label="kernel = padded input"))
    return c


def convt_cases():
    c = []

    def ct(xs, ws, label, **kw):
        c.append(convt_case(xs, ws, label=X + ": " + label, **kw))

    # pads that leave one output, pads larger than the input, output_padding past the stride
    ct((1, 2, 3), (2, 3, 5), "pads leave one output", pads=[3, 3])
    ct((2, 4, 6), (4, 2, 3), "grouped, pads past the input", group=2, strides=[40], pads=[120, 0])
    ct((2, 4, 6), (4, 2, 3), "grouped, trailing pads past the input", group=2, strides=[40], pads=[0, 127], dt="f64")
    ct((1, 2, 2), (2, 3, 2), "output_padding past the stride", strides=[2], out_pad=[5])
    ct((1, 2, 2), (2, 3, 2), "output_padding past the stride", strides=[1], out_pad=[3], dt="f64", bias=False)
    ct((1, 3, 2), (3, 1, 3), "depthwise output_padding past the stride", group=3, strides=[2], out_pad=[4],
       pads=[1, 0])
    ct((1, 2, 3), (2, 2, 2), "stride past the kernel and the input", strides=[9], pads=[2, 3])
    ct((1, 2, 3), (2, 2, 2), "dilation past the input", dil=[6], pads=[1, 4])
    ct((3, 2, 1), (2, 2, 4), "one input position, odd batch", strides=[3], out_pad=[2])
    ct((1, 2, 3), (2, 2, 70), "kernel of 70, pads 30", pads=[30, 30])
    ct((1, 2, 4), (2, 1, 65), "depthwise kernel of 65", group=2, strides=[2], pads=[0, 64], dt="f64")
    # output_shape far beyond the full result, or cutting it to 1
    ct((1, 2, 2), (2, 3, 2), "output_shape far beyond", strides=[2], out_shape=[40])
    ct((1, 2, 5), (2, 3, 3), "output_shape 1", strides=[2], out_shape=[1])
    ct((1, 2, 5), (2, 3, 3), "output_shape 1", strides=[2], out_shape=[1], auto_pad="SAME_UPPER", dt="f64")
    ct((1, 2, 2, 3), (2, 3, 3, 2), "output_shape 1x1", strides=[2, 3], out_shape=[1, 1])
    ct((1, 2, 2, 3), (2, 3, 3, 2), "output_shape far beyond", strides=[1, 2], out_shape=[30, 3], out_pad=[0, 1])
    # 2-D / 3-D
    ct((1, 2, 2, 2), (2, 2, 3, 3), "pads eat all but one", strides=[2, 2], pads=[2, 2, 2, 2])
    ct((1, 4, 3, 2), (4, 1, 3, 3), "depthwise, strides past the input", group=4, strides=[5, 7], pads=[0, 4, 3, 0],
       out_pad=[6, 1])
    ct((2, 4, 2, 2), (4, 3, 2, 2), "grouped, dilations past the input", group=2, dil=[5, 3], pads=[1, 0, 0, 2])
    ct((3, 2, 1, 1), (2, 3, 2, 3), "1x1 input, odd batch", strides=[4, 4], out_pad=[3, 2], bias=False)
    ct((1, 2, 1, 2, 1), (2, 2, 2, 3, 2), "3-D, strides and output_padding past the input", strides=[3, 2, 4],
       out_pad=[2, 1, 5], pads=[1, 0, 0, 0, 2, 1])
    ct((1, 3, 2, 1, 2), (3, 1, 2, 2, 2), "3-D depthwise, output_shape beyond", group=3, strides=[2, 2, 2],
       out_shape=[9, 5, 7], dt="f64")
    ct((1, 2, 2, 2), (2, 2, 3, 3), "kernel larger than the input", auto_pad="SAME_LOWER", strides=[3, 1])
    return c


def int_conv_cases():
    """conv_integer and qlinear_conv over the conv extremes (exact, int64 oracle)."""
    c = []
    geoms = [((2, 4, 6), (4, 2, 3), {"group": 2, "pads": [124, 0]}),
             ((1, 3, 5), (2, 3, 2), {"pads": [0, 130], "strides": [7]}),
             ((1, 2, 3), (2, 2, 3), {"dilations": [5], "pads": [6, 6]}),
             ((1, 2, 2, 3), (3, 2, 3, 3), {"pads": [4, 0, 0, 5]}),
             ((1, 2, 2, 2), (3, 2, 4, 4), {"pads": [1, 1, 1, 1]}),
             ((3, 3, 1, 2), (3, 1, 3, 3), {"group": 3, "pads": [3, 3, 3, 3], "strides": [2, 2]}),
             ((1, 2, 1, 2, 1), (2, 2, 2, 2, 2), {"pads": [2, 0, 1, 0, 2, 3], "strides": [3, 1, 2]}),
             ((1, 2, 2, 3), (2, 2, 2, 2), {"auto_pad": "SAME_UPPER", "strides": [5, 4]})]
    for k, (xs, ws, attrs) in enumerate(geoms):
        for xd, wd in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8))[k % 2:k % 2 + 2]:
            tag = "%sx%s x=%s w=%s %s" % (np.dtype(xd).name, np.dtype(wd).name, shp(xs), shp(ws),
                                          " ".join("%s=%s" % kv for kv in sorted(attrs.items())))
            name = "conv_integer %s zero points %s" % (tag, X)

            def build(xd=xd, wd=wd, xs=xs, ws=ws, attrs=attrs, name=name):
                rng = rng_for(name)
                x, w = rand_int(rng, xd, xs), rand_int(rng, wd, ws)
                xz, wz = rand_int(rng, xd, []), rand_int(rng, wd, [ws[0]])
                return {"inputs": [("x", x), ("w", w), ("xz", xz), ("wz", wz)],
                        "expect": {"y": conv_int_ref(x, w, xz, wz, _explicit(attrs, xs, ws))}}
            c.append(Case(name, "conv_integer", attrs=attrs, build=build))
            name = "qlinear_conv %s f32 scales, bias %s" % (tag, X)

            def qbuild(xd=xd, wd=wd, xs=xs, ws=ws, attrs=attrs, name=name):
                rng = rng_for(name)
                M = ws[0]
                ins = [("x", rand_int(rng, xd, xs)), ("xs", np.array(rng.uniform(0.005, 0.05), np.float32)),
                       ("xz", rand_int(rng, xd, [])), ("w", rand_int(rng, wd, ws)),
                       ("ws", rng.uniform(0.005, 0.05, M).astype(np.float32)), ("wz", rand_int(rng, wd, [M])),
                       ("ys", np.array(rng.uniform(0.2, 2.0), np.float32)), ("yz", rand_int(rng, xd, [])),
                       ("b", rng.integers(-5000, 5000, M).astype(np.int32))]
                vals = [v for _, v in ins]
                return {"inputs": ins, "expect": {"y": qlconv_ref(*vals[:8], _explicit(attrs, xs, ws), vals[8])}}
            c.append(Case(name, "qlinear_conv", attrs=attrs, build=qbuild))
    return c


def _explicit(attrs, xs, ws):
    """attrs with SAME_* turned into the explicit pads of the ONNX rule (the int64
    oracle of cases_quant takes explicit pads only)."""
    if attrs.get("auto_pad") not in ("SAME_UPPER", "SAME_LOWER"):
        return attrs
    r = len(xs) - 2
    s, d = attrs.get("strides", [1] * r), attrs.get("dilations", [1] * r)
    pb, pe = [], []
    for j in range(r):
        o = -(-xs[2 + j] // s[j])
        tot = max(0, (o - 1) * s[j] + (ws[2 + j] - 1) * d[j] + 1 - xs[2 + j])
        b = tot // 2 if attrs["auto_pad"] == "SAME_UPPER" else tot - tot // 2
        pb.append(b)
        pe.append(tot - b)
    out = {k: v for k, v in attrs.items() if k != "auto_pad"}
    out["pads"] = pb + pe
    return out


def deform_cases():
    c = []
    for dt in ("f32", "f64"):
        c.append(deform_case((1, 2, 2, 2), (2, 2, 3, 3), dt, pads=[4, 4, 4, 4], label=X + ": pads past the input"))
        c.append(deform_case((1, 2, 3, 2), (3, 2, 2, 2), dt, pads=[0, 5, 6, 0], bias=False, spread=3.0,
                             label=X + ": pads on one side"))
    c.append(deform_case((1, 2, 3, 3), (2, 2, 2, 2), pads=[2, 2, 2, 2], strides=[5, 5], label=X + ": strides past"))
    c.append(deform_case((1, 2, 3, 3), (2, 2, 2, 2), pads=[3, 2, 3, 2], dil=[4, 5], mask=False,
                         label=X + ": dilations past the input"))
    c.append(deform_case((3, 2, 2, 3), (4, 2, 4, 5), pads=[1, 1, 1, 1], label=X + ": kernel = padded input, odd batch"))
    c.append(deform_case((1, 3, 1, 1), (3, 1, 3, 3), group=3, og=3, pads=[2, 2, 2, 2],
                         label=X + ": depthwise 1x1 input"))
    c.append(deform_case((1, 2, 2, 2), (2, 2, 1, 1), pads=[3, 0, 0, 3], spread=4.0, label=X + ": 1x1 kernel, pads"))
    return c


# ---------------------------------------------------------------- pools

def pool_cases():
    c = []
    M, A = "max_pool", "average_pool"
    for op, cips in ((M, (None,)), (A, (0, 1))):
        for cip in cips:
            def p(dt, xs, k, s=None, **kw):
                label = X + (": " + kw.pop("label") if "label" in kw else "")
                c.append(pool_case(op, dt, xs, k, s, cip=cip, label=label, **kw))
            # pads >= kernel: windows of padding only (documented values)
            p("f32", (1, 2, 3), [2], [1], pads=[5, 5])
            p("f64", (1, 2, 3), [2], [3], pads=[7, 4], ceil_mode=1)
            p("f32", (2, 1, 2, 2), [2, 2], [1, 1], pads=[50, 0, 0, 50])
            p("f32", (1, 2, 1, 2, 1), [2, 1, 2], [2, 1, 3], pads=[4, 3, 0, 0, 5, 6])
            # strides and dilations past the input, kernel = padded input
            p("f32", (1, 2, 5, 5), [2, 2], [7, 9], pads=[1, 1, 1, 1])
            p("f32", (1, 2, 3), [2], [1], d=[5], pads=[3, 3])
            p("f64", (1, 2, 3, 4), [5, 6], [1, 1], pads=[1, 1, 1, 1], label="kernel = padded input")
            p("f32", (1, 2, 2, 1, 3), [3, 2, 4], [4, 4, 4], d=[1, 3, 1], pads=[1, 2, 0, 0, 2, 1], ceil_mode=1)
            # ceil_mode with strides past the input, last window partly or wholly in the pads
            p("f32", (1, 2, 5), [2], [4], ceil_mode=1)
            p("f32", (1, 1, 4), [3], [5], pads=[0, 2], ceil_mode=1, label="last window in the pads dropped")
            p("f32", (2, 3, 1, 1), [3, 3], [2, 2], pads=[2, 2, 2, 2], ceil_mode=1, label="1x1 input")
            # SAME_* with a kernel larger than the input, a stride past it
            for ap in ("SAME_UPPER", "SAME_LOWER"):
                p("f32", (1, 2, 2, 3), [5, 4], [1, 2], auto_pad=ap)
                p("f32", (1, 2, 3), [2], [7], auto_pad=ap, d=[4])
            # the 2-D f32/f64 fast path: a row of 4096 padded cells, 4000 pads on the left
            p("f32", (1, 1, 2, 2), [1, 2], [1, 1], pads=[0, 4000, 0, 0], torch_check=False)
            p("f64", (1, 1, 2, 1), [1, 1], [1, 1], pads=[0, 4095, 0, 0], torch_check=False)
            p("f32", (1, 1, 3, 1), [2, 1], [1, 1], pads=[1, 4085, 1, 0], torch_check=False,
              label="tail of 10 past 16")
    for dt in ("i8", "u8"):
        c.append(pool_case(M, dt, (1, 2, 2, 3), [2, 2], [1, 1], pads=[3, 0, 0, 4], label=X, torch_check=False))
        c.append(pool_case(M, dt, (1, 2, 3), [2], [5], d=[3], pads=[4, 6], ceil_mode=1, label=X, torch_check=False))
    for dt in ("f16", "bf16"):
        c.append(pool_case(A, dt, (1, 2, 2, 2), [3, 3], [2, 2], pads=[4, 4, 4, 4], cip=1, label=X))
        c.append(pool_case(M, dt, (1, 2, 2, 2), [3, 3], [2, 2], pads=[4, 4, 4, 4], label=X))
    # lp_pool
    lp = image.lp_case
    c.append(lp("f32", (1, 2, 3), [2], [1], pads=[5, 5], label=X))
    c.append(lp("f64", (1, 2, 2, 2), [2, 2], [3, 1], pads=[4, 0, 0, 4], p=3, label=X))
    c.append(lp("f32", (1, 2, 3), [2], [2], d=[5], pads=[3, 4], p=1, ceil_mode=1, label=X))
    c.append(lp("f32", (1, 2, 3, 4), [5, 6], [1, 1], pads=[1, 1, 1, 1], label=X + ": kernel = padded input"))
    c.append(lp("f32", (1, 2, 1, 1, 2), [2, 2, 2], [2, 2, 2], pads=[1, 2, 3, 3, 2, 1], label=X))
    c.append(lp("f32", (1, 2, 2, 3), [5, 4], [1, 2], auto_pad="SAME_UPPER", label=X))
    return c


# ---------------------------------------------------------------- resize

CTS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
       "tf_half_pixel_for_nn")
NMS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_cases():
    c = []

    def rs(*a, **kw):
        c.append(resize_case(*a, label=X + (": " + kw.pop("label") if "label" in kw else ""), **kw))

    # 1x1 and 1xN inputs through every mode and coordinate transformation
    for ct in CTS:
        for k, nm in enumerate(NMS):
            rs("f32", (1, 1, 1, 1), "nearest", ct, nm, sizes=[1, 1, 3, 4] if k % 2 else [1, 1, 2, 5])
            rs("f32", (1, 2, 1, 5), "nearest", ct, nm, scales=[1, 1, 3.0, 0.5] if k % 2 else [1, 1, 2.5, 1.7])
        for mode in ("linear", "cubic"):
            rs("f32", (1, 1, 1, 1), mode, ct, sizes=[1, 1, 3, 4])
            rs("f32", (1, 2, 1, 5), mode, ct, sizes=[1, 2, 4, 3])
            rs("f64", (1, 1, 1, 6), mode, ct, scales=[1, 1, 2.5, 0.4])
            rs("f32", (2, 1, 5, 1), mode, ct, sizes=[2, 1, 1, 7])
        rs("f32", (1, 2, 1, 4), "cubic", ct, sizes=[1, 2, 3, 9], exclude=1, cubic_a=-0.5)
        rs("f32", (7,), "linear", ct, sizes=[1])
        rs("f32", (1,), "cubic", ct, sizes=[5])
    # tf_crop_and_resize on a 1-cell axis and far outside the roi
    for mode in ("nearest", "linear", "cubic"):
        rs("f32", (1, 1, 1, 4), mode, "tf_crop_and_resize", sizes=[1, 1, 3, 5], roi=[0, 0, -2, -0.5, 1, 1, 3, 1.5],
           ext=-2.5)
    # rank 8, every axis resized from 1 or 2 cells (2^7 corners of the outer axes)
    rs("f32", (2, 1, 2, 1, 2, 1, 2, 3), "linear", "half_pixel", sizes=[3, 2, 3, 2, 3, 2, 3, 2], label="rank 8")
    rs("f64", (2, 1, 2, 1, 2, 1, 2, 3), "linear", "align_corners", scales=[1.5, 3, 2, 2.5, 0.5, 2, 1, 1.4],
       label="rank 8")
    rs("f32", (1, 2, 1, 2, 1, 2, 1, 2), "nearest", "asymmetric", "ceil", sizes=[2, 3, 2, 3, 2, 1, 3, 4],
       label="rank 8")
    rs("f32", (1, 2, 1, 2, 2), "cubic", "half_pixel", sizes=[2, 3, 3, 1, 4], exclude=1, label="rank 5")
    # scale extremes: to a single cell, huge upscaling, a scale whose output rounds to 0
    rs("f32", (1, 1, 7, 9), "linear", "half_pixel", scales=[1, 1, 0.15, 0.12], label="down to one cell")
    rs("f32", (1, 1, 7, 9), "cubic", "align_corners", scales=[1, 1, 0.15, 0.12], label="down to one cell")
    rs("f32", (1, 1, 2, 2), "linear", "align_corners", sizes=[1, 1, 75, 100], torch_check=True)
    rs("f32", (1, 1, 2, 2), "nearest", "asymmetric", "floor", scales=[1, 1, 37.5, 50], torch_check=True)
    rs("f64", (1, 1, 2, 3), "cubic", "half_pixel", scales=[1, 1, 40, 0.5])
    rs("f32", (1, 2, 3, 3), "nearest", "half_pixel", "round_prefer_ceil", scales=[1, 1, 1e-3, 100],
       label="output rounds to 0")
    rs("f32", (1, 2, 3, 3), "linear", "half_pixel", scales=[1, 1, 1e-9, 1], label="output rounds to 0")
    return c


# ---------------------------------------------------------------- grid_sample, roi_align, col2im, lrn, s2d, stft

def grid_cases():
    c = []
    g = image.grid_case
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                lo, hi = (-1.0, 1.0) if mode == "bicubic" and pad != "zeros" else (-4.0, 4.0)
                c.append(g("f32", (1, 2, 1, 1), (3, 4), mode, pad, ac, lo, hi, label=X + ": 1x1 input"))
                c.append(g("f32", (1, 2, 1, 5), (2, 3), mode, pad, ac, lo, hi, label=X + ": 1xN input"))
        if mode != "bicubic":
            c.append(g("f64", (2, 1, 1, 1, 3), (2, 1, 2), mode, "reflection", 0, -3.0, 3.0,
                       label=X + ": 3-D 1x1xN input"))
    # bicubic outside the input on a 1xN input: the ONNX reference's clamp / reflection
    for pad in ("border", "reflection"):
        case = image.grid_onnx_case("f32", (1, 2, 1, 5), (3, 4), "bicubic", pad, 0, -3.0, 3.0)
        case.name += " " + X
        c.append(case)
    return c


def roi_cases():
    c = []
    # (x shape, rois, batch indices, oh, ow, sampling_ratio, spatial_scale, half_pixel, mode, label)
    far = [[-10, -10, 20, 20], [2, 2, 2, 2], [50, 50, 60, 60], [-30, -5, -20, 0.5], [0.2, 0.1, 0.3, 0.4]]
    specs = [((1, 2, 1, 1), far, [0] * 5, 2, 3, 2, 1.0, True, "avg", "1x1 image"),
             ((1, 2, 1, 1), far, [0] * 5, 3, 2, 0, 1.0, False, "avg", "1x1 image"),
             ((2, 1, 2, 3), far, [1, 0, 1, 0, 1], 7, 7, 1, 1.0, True, "avg", "7x7 from 2x3"),
             ((2, 1, 2, 3), far, [1, 0, 1, 0, 1], 1, 1, 0, 0.25, False, "avg", "1x1 output"),
             ((1, 2, 1, 4), far, [0] * 5, 2, 2, 3, 100.0, True, "avg", "1xN image, scale 100"),
             ((1, 2, 1, 1), far, [0] * 5, 2, 3, 2, 1.0, True, "max", "1x1 image"),
             ((2, 1, 2, 3), far, [1, 0, 1, 0, 1], 3, 3, 0, 1.0, False, "max", "2x3 image"),
             ((1, 2, 3, 1), far, [0] * 5, 1, 2, 4, 0.5, True, "max", "Nx1 image")]
    for dt in ("f32", "f64"):
        for xs, rois, bidx, oh, ow, ratio, scale, hp, mode, label in specs:
            name = "roi_align %s %s %s %s rois=%d out=%dx%d ratio=%d scale=%g %s: %s" % (
                dt, mode, "half_pixel" if hp else "output_half_pixel", shp(xs), len(rois), oh, ow, ratio, scale, X,
                label)

            def build(dt=dt, xs=xs, rois=rois, bidx=bidx, oh=oh, ow=ow, ratio=ratio, scale=scale, hp=hp, mode=mode,
                      name=name):
                x = geom.smooth(rng_for(name), dt, xs)
                r = np.array(rois, NP[dt]).reshape(-1, 4)
                b = np.array(bidx, np.int64)
                if mode == "avg":
                    boxes = torch.cat([torch.from_numpy(b.astype(np.float64))[:, None],
                                       torch.from_numpy(r.astype(np.float64))], 1)
                    ref = torchvision.ops.roi_align(torch.from_numpy(x.astype(np.float64)), boxes, (oh, ow), scale,
                                                    ratio, aligned=hp).numpy()
                else:
                    ref = geom.roi_align_max(x, r, b, oh, ow, ratio, scale, hp)
                return {"inputs": [("x", x), ("rois", r), ("batch_indices", b)], "expect": {"y": ref.astype(NP[dt])},
                        "tol": Tol(r=16, a=64, scale=2.0)}
            c.append(Case(name, "roi_align", attrs={"mode": mode, "output_height": oh, "output_width": ow,
                                                    "sampling_ratio": ratio, "spatial_scale": scale,
                                                    "coordinate_transformation_mode":
                                                        "half_pixel" if hp else "output_half_pixel"}, build=build))
    return c


def col2im_cases():
    c = []
    # (N, C, image, block, dilations, pads, strides, torch oracle)
    specs = [(1, 2, [2, 2], [2, 2], [1, 1], [3, 3, 3, 3], [1, 1], True),
             (2, 1, [1, 1], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], True),
             (1, 2, [3, 4], [1, 2], [1, 1], [0, 1, 0, 2], [5, 7], False),
             (1, 2, [3], [2], [4], [2, 2], [1], False),
             (3, 1, [1, 2, 1], [2, 2, 2], [1, 1, 1], [1, 0, 1, 0, 1, 0], [1, 1, 1], False),
             (1, 1, [2, 3], [2, 2], [3, 4], [2, 0, 0, 4], [2, 3], False),
             (1, 3, [1, 5], [1, 3], [1, 2], [4, 0, 4, 0], [3, 1], False)]
    for vi, (n, ch, img, blk, dil, pads, st, use_torch) in enumerate(specs):
        r = len(img)
        nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
        k, L = int(np.prod(blk)), int(np.prod(nb))
        dt = ("f32", "f64")[vi % 2]
        name = "col2im %s N=%d C=%d image=%s block=%s dil=%s pads=%s strides=%s %s" % (dt, n, ch, img, blk, dil, pads,
                                                                                    st, X)

        def build(dt=dt, n=n, ch=ch, img=img, blk=blk, dil=dil, pads=pads, st=st, k=k, L=L, use_torch=use_torch,
                  name=name):
            x = geom.smooth(rng_for(name), dt, (n, ch * k, L))
            ref = geom.col2im(x, img, blk, dil, pads, st)
            if use_torch:
                t = F.fold(torch.from_numpy(x.astype(np.float64)), img, blk, dilation=dil, padding=pads[:len(img)],
                           stride=st).numpy()
                if not np.allclose(t, ref, rtol=1e-12, atol=1e-12):
                    raise AssertionError("col2im oracle disagrees with F.fold")
            return {"inputs": [("x", x)], "expect": {"y": ref.astype(NP[dt])}, "tol": Tol(r=4, a=4 * k + 2, scale=2.0)}
        c.append(Case(name, "col2im", attrs={"image_shape": img, "block_shape": blk, "dilations": dil, "pads": pads,
                                             "strides": st}, build=build))
    return c


def col2im_direct(x, img, blk, dil, pads, st):
    """ONNX Col2Im by its definition, one image position and block position at a
    time in Python integers: for pads, strides and dilations of 2^31, where the
    padded image of geom.col2im cannot be allocated.  y[p] = sum over the block
    positions q of x[q, l] with p + pad_begin - q dilation = l stride, 0 <= l < nb."""
    r = len(img)
    nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
    X = f64(x).reshape((x.shape[0], x.shape[1] // int(np.prod(blk))) + tuple(blk) + tuple(nb))
    y = np.zeros(X.shape[:2] + tuple(img))
    for pos in np.ndindex(*img):
        for q in np.ndindex(*blk):
            ls = []
            for i in range(r):
                v = pos[i] + pads[i] - q[i] * dil[i]
                if v < 0 or v % st[i] or v // st[i] >= nb[i]:
                    break
                ls.append(v // st[i])
            else:
                y[(slice(None), slice(None)) + pos] += X[(slice(None), slice(None)) + q + tuple(ls)]
    return y


def col2im_huge_cases():
    c = []
    T31 = 2 ** 31
    specs = [(1, 2, [3], [2], [T31], [T31, 0], [1]), (2, 1, [2, 3], [1, 2], [1, 1], [T31, 0, T31, 1], [T31, 1]),
             (1, 1, [2, 2], [2, 1], [T31, 1], [T31 - 1, 1, 2, T31], [1, T31])]
    for vi, (n, ch, img, blk, dil, pads, st) in enumerate(specs):
        r = len(img)
        nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
        k, L = int(np.prod(blk)), int(np.prod(nb))
        dt = ("f32", "f64")[vi % 2]
        name = "col2im %s N=%d C=%d image=%s block=%s dil=%s pads=%s strides=%s %s: attributes of 2^31" % (
            dt, n, ch, img, blk, dil, pads, st, X)

        def build(dt=dt, n=n, ch=ch, img=img, blk=blk, dil=dil, pads=pads, st=st, k=k, L=L, name=name):
            t = np.arange(72.0).reshape(2, 4, 9)
            if not np.allclose(col2im_direct(t, [3, 4], [2, 2], [1, 2], [1, 0, 0, 1], [1, 1]),
                               geom.col2im(t, [3, 4], [2, 2], [1, 2], [1, 0, 0, 1], [1, 1])):
                raise AssertionError("direct col2im oracle disagrees with geom.col2im")
            x = geom.smooth(rng_for(name), dt, (n, ch * k, L))
            return {"inputs": [("x", x)], "expect": {"y": col2im_direct(x, img, blk, dil, pads, st).astype(NP[dt])},
                    "tol": Tol(r=4, a=4 * k + 2, scale=2.0)}
        c.append(Case(name, "col2im", attrs={"image_shape": img, "block_shape": blk, "dilations": dil, "pads": pads,
                                             "strides": st}, build=build))
    return c


def misc_cases():
    c = []
    # lrn: windows far wider than the channels, one channel, the largest size
    for dt, xs, size, alpha in (("f32", (2, 3, 2), 1001, 0.5), ("f64", (1, 1, 3, 2), 4, 0.3),
                                ("f32", (2, 2, 1, 1), 2 ** 31, 1e6), ("f32", (1, 5), 2, 0.2)):
        case = image.lrn_case(dt, xs, size, alpha=alpha)
        case.name += " " + X
        c.append(case)
    # space_to_depth / depth_to_space: the block as large as the image, blocksize 1
    for xs, b in (((2, 3, 4, 4), 4), ((1, 2, 1, 1), 1), ((1, 1, 7, 7), 7), ((3, 2, 2, 6), 2)):
        for dt in ("f32", "u8"):
            name = "space_to_depth %s %s blocksize=%d %s" % (dt, shp(xs), b, X)

            def build(dt=dt, xs=xs, b=b, name=name):
                x = image.moved_input(name, dt)(xs)
                return {"inputs": [("x", x, dt)], "expect": {"y": np.ascontiguousarray(image.s2d_ref(x, b))}}
            c.append(Case(name, "space_to_depth", attrs={"blocksize": b}, build=build))
    for xs, b, mode in (((1, 25, 1, 1), 5, "DCR"), ((2, 49, 1, 2), 7, "CRD"), ((1, 3, 1, 1), 1, "DCR")):
        name = "depth_to_space f32 %s blocksize=%d mode=%s %s" % (shp(xs), b, mode, X)

        def dbuild(xs=xs, b=b, mode=mode, name=name):
            x = image.moved_input(name, "f32")(xs)
            return {"inputs": [("x", x)], "expect": {"y": np.ascontiguousarray(image.d2s_ref(x, b, mode))}}
        c.append(Case(name, "depth_to_space", attrs={"blocksize": b, "mode": mode}, build=dbuild))
    # stft: one frame as long as the signal, a step past the signal, frames of 1
    for n, L, step in ((13, 13, 1), (5, 9, 1000), (1, 6, 2), (3, 9, 5)):
        name = "stft f32 real n %d L %d step %d %s" % (n, L, step, X)
        rng = rng_for(name)
        sig = rng.uniform(-1, 1, size=(2, L, 1)).astype(np.float32)
        want, scale = stft_ref(sig.astype(np.float64), step, n, None, 0)
        c.append(Case(name, "stft", [("signal", sig)], {"frame_step": step, "frame_length": n, "onesided": 0},
                      expect={"y": want.astype(np.float32)},
                      tol=Tol(a=8 * math.log2(max(n, 2)) + 8, scale=scale)))
    return c


# ---------------------------------------------------------------- refusals

def error_cases():
    c = []
    f = np.float32

    def z(*s, dt=f):
        return np.zeros(s, dtype=dt)

    # (op, label, inputs, attrs, stderr patterns)
    specs = [
        ("conv", "huge dilation leaves no output", [z(1, 2, 5), z(2, 2, 3)], {"dilations": [2 ** 39], "pads": [3, 3]},
         [r"output size along spatial dim 0 would be -?\d+", r"spans 1099511627777"]),
        ("conv", "pads past 2^40", [z(1, 2, 5), z(2, 2, 3)], {"pads": [2 ** 40 + 1, 0]},
         [r"'pads': value 1099511627777 at position 0 is out of range"]),
        ("conv", "pads of 2^40 make the output too large", [z(1, 1, 1), z(1, 1, 1)], {"pads": [2 ** 40, 2 ** 40]},
         [r"result shape \[1,1,2199023255553\] is too large"]),
        ("conv", "stride past 2^40", [z(1, 1, 4, 4), z(1, 1, 2, 2)], {"strides": [1, 2 ** 41]},
         [r"'strides': value 2199023255552 at position 1 is out of range"]),
        ("conv", "kernel past the padded input by one", [z(1, 2, 3, 3), z(2, 2, 3, 6)], {"pads": [0, 1, 0, 1]},
         [r"output size along spatial dim 1 would be 0", r"pads 1\+1"]),
        ("conv", "3-D kernel past the padded input", [z(1, 1, 2, 2, 2), z(1, 1, 2, 2, 5)], {"pads": [0, 0, 1, 0, 0, 1]},
         [r"output size along spatial dim 2 would be 0"]),
        ("conv_transpose", "pads past the full result", [z(1, 2, 3), z(2, 2, 3)], {"pads": [1000, 0]},
         [r"output size along spatial dim 0 would be -995"]),
        ("conv_transpose", "pads eat a 2-D output exactly", [z(1, 2, 2, 2), z(2, 2, 3, 3)],
         {"strides": [2, 2], "pads": [2, 2, 2, 3]}, [r"output size along spatial dim 1 would be 0"]),
        ("conv_transpose", "output_shape too large", [z(1, 2, 3), z(2, 2, 3)], {"output_shape": [2 ** 40]},
         [r"result shape \[1,2,1099511627776\] is too large"]),
        ("conv_transpose", "output_padding past 2^40", [z(1, 2, 3), z(2, 2, 3)], {"output_padding": [2 ** 40 + 1]},
         [r"'output_padding': value 1099511627777 at position 0 is out of range"]),
        ("deform_conv", "kernel past the padded input", [z(1, 2, 2, 2), z(2, 2, 3, 3), z(1, 18, 1, 1)],
         {"pads": [0, 0, 0, 0]}, [r"output size along spatial dim 0 would be 0"]),
        ("max_pool", "pads past 2^31", [z(1, 1, 4)], {"kernel_shape": [2], "pads": [2 ** 31 + 1, 0]},
         [r"value 2147483649 at position 0 is too large \(at most 2147483648\)"]),
        ("average_pool", "dilated window past the padded input", [z(1, 1, 4, 4)],
         {"kernel_shape": [2, 2], "dilations": [1, 2 ** 31], "pads": [0, 5, 0, 5]},
         [r"spatial axis 1 the window .*2147483649 cells.* padded input \(size 4 \+ pads 5 and 5 = 14\)"]),
        ("lp_pool", "window past the padded input", [z(1, 1, 2, 3)], {"kernel_shape": [2, 6], "pads": [0, 1, 0, 1]},
         [r"spatial axis 1 the window .*6 cells.* padded input \(size 3 \+ pads 1 and 1 = 5\)"]),
        ("max_pool", "ceil_mode cannot save a window past the input", [z(1, 1, 3)], {"kernel_shape": [4],
                                                                               "ceil_mode": 1},
         [r"the window .*4 cells.* padded input \(size 3"]),
        ("resize", "scale past the size limit", [z(1, 1, 2, 2)], {"scales": [1, 1, 1e30, 1]},
         [r"axis 2 of size 2 scaled by 1e\+30 gives 2e\+30, too large"]),
        ("resize", "sizes past the size limit", [z(1, 1, 2, 2)], {"sizes": [1, 1, 2 ** 40, 2 ** 20]},
         [r"output shape \[1,1,1099511627776,1048576\] has too many elements"]),
        ("resize", "sizes past the byte limit", [z(1, 1, 2, 2)], {"sizes": [1, 1, 2 ** 30, 2 ** 10]},
         [r"\[1,1,1073741824,1024\]", r"too large|too many"]),
        ("col2im", "pads past the image: blocks miscounted", [z(1, 4, 4)],
         {"image_shape": [2, 2], "block_shape": [2, 2], "pads": [3, 3, 3, 3]}, [r"expected \[N, C\*4, 49\]"]),
        ("col2im", "block past the padded image", [z(1, 9, 1)],
         {"image_shape": [1, 1], "block_shape": [3, 3], "pads": [1, 1, 0, 1]}, [r"block spans 3"]),
        ("lrn", "size past 2^31", [z(1, 3, 2)], {"size": 2 ** 31 + 1}, [r"'size' is 2147483649; expected 1 to"]),
        ("depth_to_space", "blocksize 2^31 on 8 channels", [z(1, 8, 1, 1)], {"blocksize": 2 ** 31},
         [r"channels 8 are not a multiple of blocksize\^2 = 4611686018427387904"]),
        ("space_to_depth", "blocksize past the image", [z(1, 2, 2, 2)], {"blocksize": 4},
         [r"spatial sizes 2 x 2 are not multiples of blocksize 4"]),
        ("stft", "frame past the signal", [z(1, 4, 1)], {"frame_step": 1, "frame_length": 5}, [r"frame length 5"]),
    ]
    for op, label, inputs, attrs, res in specs:
        ins = [("x%d" % i, a) for i, a in enumerate(inputs)]
        c.append(Case("%s invalid %s: %s: exit 3" % (op, X, label), op, inputs=ins, attrs=attrs, exit_code=3,
                      node_name="edge", stderr_re=[r"node 'edge' \(%s\)" % op] + res))
    return c


def cases():
    return (conv_cases() + chain_cases() + convt_cases() + huge_cases() + int_conv_cases() + deform_cases() +
            pool_cases() + resize_cases() + grid_cases() + roi_cases() + col2im_cases() + col2im_huge_cases() +
            misc_cases() + error_cases())
