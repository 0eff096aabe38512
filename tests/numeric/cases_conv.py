"""Numeric cases of conv and conv_transpose (ONNX Conv / ConvTranspose, channels first,
1-D, 2-D and 3-D), plus the inference errors.

Oracle: PyTorch (torch.nn.functional.conv1d/2d/3d and conv_transpose1d/2d/3d) in
float64 from the exact inputs.  The pads and output sizes are computed here from the
ONNX rules, independently of ftrun:
  conv:  NOTSET: pads as given (all begins, then all ends), applied with F.pad first
         (so asymmetric pads are exact); SAME_UPPER/SAME_LOWER: out = ceil(in / stride),
         total = max(0, (out-1) stride + (k-1) dilation + 1 - in), the odd element at
         the end (UPPER) or the begin (LOWER); VALID: no pads.
  conv_transpose: the full result F (conv_transpose without padding, length
         stride (in-1) + (k-1) dilation + 1) is followed by output_padding zeros and
         cropped: y[o] = F[o + pad_begin] (0 beyond F).  The output size is
         stride (in-1) + output_padding + (k-1) dilation + 1 - pads (NOTSET),
         in * stride (SAME_*) or output_shape; with SAME_* or output_shape the total
         padding is that full size minus the output size, split with the odd element
         at the end for SAME_UPPER and at the begin otherwise; a negative total
         (an output_shape beyond the full result) pads the end only.
Tolerance (as matmul's): |got - exp| <= 2 eps |exp| + (4 sqrt(K) + 4) eps S, where K
is the number of products summed into one output (C/group * kernel positions) and S
the same convolution of |x| and |w| plus |bias|.  f16 / bf16 (computed by the backend
in f32): inputs are generated representable, the oracle is computed in float64 from
them and rounded to the 16-bit type (bf16 travels as an f32 .npy); the tolerance is
one ulp of the 16-bit type (relative) plus the f32 bound above."""
import math

import numpy as np

from harness import NP, Case, Tol, rng_for

EPS32 = float(np.finfo(np.float32).eps)
EPS16 = 2.0 ** -10
BF16_R = 2.0 ** -7 / EPS32  # one bf16 ulp (relative) in f32 eps
F16_TINY = 2.0 ** -24

_torch = None


def torch_mod():
    """PyTorch, imported on first use (the other modules' cases do not pay for it)."""
    global _torch
    if _torch is None:
        import torch
        torch.set_num_threads(1)
        _torch = torch
    return _torch


def f64(x):
    return np.asarray(x, dtype=np.float64)


def sq(k):
    return math.sqrt(max(k, 1))


def shp(s):
    return "x".join(map(str, s)) or "[]"


def bf16_round(v):
    """float64 -> nearest-even bf16 value (8 significant bits), as float32."""
    m, e = np.frexp(f64(v))
    return np.ldexp(np.rint(np.ldexp(m, 8)), e - 8).astype(np.float32)


def rep(x, dt):
    """The values as written to the .npy, exactly representable in dt."""
    if dt == "bf16":
        return bf16_round(x)
    if dt == "f16":
        return f64(x).astype(np.float16)
    return f64(x).astype(NP[dt])


def tol(dt, k, scale):
    s = (4 * sq(k) + 4) * f64(scale)
    if dt == "f16":
        return Tol(r=1 + 2 * EPS32 / EPS16, a=1, scale=s * EPS32 / EPS16 + F16_TINY / EPS16)
    if dt == "bf16":
        return Tol(r=BF16_R + 2, a=1, scale=s)
    return Tol(r=2, a=1, scale=s)


def ins(x, w, b, dt):
    decl = "bf16" if dt == "bf16" else None
    out = [("x", x, decl) if decl else ("x", x), ("w", w, decl) if decl else ("w", w)]
    if b is not None:
        out.append(("b", b, decl) if decl else ("b", b))
    return out


# ---------------------------------------------------------------- ONNX geometry

def conv_geom(xs, ks, strides, pads, dil, auto_pad):
    """(pad begins, pad ends, output sizes) of conv along the spatial dims."""
    r = len(ks)
    s, d = strides or [1] * r, dil or [1] * r
    pb, pe, out = [], [], []
    for j in range(r):
        n, ek = xs[j], (ks[j] - 1) * d[j] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // s[j])
            tot = max(0, (o - 1) * s[j] + ek - n)
            b = tot // 2 if auto_pad == "SAME_UPPER" else tot - tot // 2
            e = tot - b
        else:
            b, e = (pads[j], pads[r + j]) if pads and auto_pad == "NOTSET" else (0, 0)
            o = (n + b + e - ek) // s[j] + 1
        pb.append(b)
        pe.append(e)
        out.append(o)
    return pb, pe, out


def convt_geom(xs, ks, strides, pads, dil, auto_pad, out_pad, out_shape):
    """(pad begins, output sizes) of conv_transpose along the spatial dims."""
    r = len(ks)
    s, d, op = strides or [1] * r, dil or [1] * r, out_pad or [0] * r
    pb, out = [], []
    for j in range(r):
        full = s[j] * (xs[j] - 1) + op[j] + (ks[j] - 1) * d[j] + 1
        if out_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = out_shape[j] if out_shape else xs[j] * s[j]
            tot = full - o
            b = 0 if tot <= 0 else (tot // 2 if auto_pad == "SAME_UPPER" else tot - tot // 2)
        elif auto_pad == "VALID":
            b, o = 0, full
        else:
            b = pads[j] if pads else 0
            o = full - b - (pads[r + j] if pads else 0)
        pb.append(b)
        out.append(o)
    return pb, out


# ---------------------------------------------------------------- oracles

def conv_ref(x, w, b, strides, pads, dil, group, auto_pad):
    """float64 result, tolerance scale S and terms per output K."""
    torch = torch_mod()
    F = torch.nn.functional
    r = x.ndim - 2
    pb, pe, out = conv_geom(x.shape[2:], w.shape[2:], strides, pads, dil, auto_pad)
    X, W = torch.from_numpy(f64(x)), torch.from_numpy(f64(w))
    k = w.shape[1] * int(np.prod(w.shape[2:]))
    M = w.shape[0]
    if x.shape[1] == 0 or M == 0:  # no input or output channel: the bias alone (PyTorch refuses these)
        y = np.zeros((x.shape[0], M) + tuple(out))
        S = np.zeros_like(y)
    else:
        padarg = []
        for j in reversed(range(r)):
            padarg += [pb[j], pe[j]]
        fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[r]
        kw = {"stride": strides or 1, "dilation": dil or 1, "groups": group}
        y = fn(F.pad(X, padarg), W, None, **kw).numpy()
        S = fn(F.pad(X.abs(), padarg), W.abs(), None, **kw).numpy()
    assert list(y.shape[2:]) == out, (y.shape, out)
    if b is not None:
        bb = f64(b).reshape((1, M) + (1,) * r)
        y, S = y + bb, S + np.abs(bb)
    return y, S, k


def convt_ref(x, w, b, strides, pads, dil, group, auto_pad, out_pad, out_shape):
    torch = torch_mod()
    F = torch.nn.functional
    r = x.ndim - 2
    pb, out = convt_geom(x.shape[2:], w.shape[2:], strides, pads, dil, auto_pad, out_pad, out_shape)
    X, W = torch.from_numpy(f64(x)), torch.from_numpy(f64(w))
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[r]
    kw = {"stride": strides or 1, "dilation": dil or 1, "groups": group}
    M = w.shape[1] * group
    if x.shape[1] == 0:  # no input channel: the bias alone (PyTorch refuses this)
        fs = [s * (n - 1) + (k - 1) * d + 1 for n, k, s, d in
              zip(x.shape[2:], w.shape[2:], strides or [1] * r, dil or [1] * r)]
        full = fullS = np.zeros((x.shape[0], M) + tuple(fs))
    else:
        full = fn(X, W, None, **kw).numpy()
        fullS = fn(X.abs(), W.abs(), None, **kw).numpy()
    y = np.zeros((x.shape[0], M) + tuple(out))
    S = np.zeros_like(y)
    dst, src = [slice(None), slice(None)], [slice(None), slice(None)]
    for j in range(r):
        lo, hi = max(0, -pb[j]), min(out[j], full.shape[2 + j] - pb[j])
        hi = max(hi, lo)
        dst.append(slice(lo, hi))
        src.append(slice(lo + pb[j], hi + pb[j]))
    y[tuple(dst)] = full[tuple(src)]
    S[tuple(dst)] = fullS[tuple(src)]
    if b is not None:
        bb = f64(b).reshape((1, M) + (1,) * r)
        y, S = y + bb, S + np.abs(bb)
    k = x.shape[1] // group * int(np.prod(w.shape[2:]))
    return y, S, k


# ---------------------------------------------------------------- case builders

def _attrs(strides, pads, dil, group, auto_pad, out_pad=None, out_shape=None):
    a = {}
    if strides:
        a["strides"] = list(strides)
    if pads:
        a["pads"] = list(pads)
    if dil:
        a["dilations"] = list(dil)
    if group != 1:
        a["group"] = group
    if auto_pad != "NOTSET":
        a["auto_pad"] = auto_pad
    if out_pad:
        a["output_padding"] = list(out_pad)
    if out_shape:
        a["output_shape"] = list(out_shape)
    return a


def _describe(a):
    return " ".join("%s=%s" % (k, v if not isinstance(v, list) else ",".join(map(str, v))) for k, v in a.items())


def activation_ref(y, S, act, lo, hi):
    """conv's fused activation (attribute "activation") on the float64 result y, in
    NumPy; the tolerance scale S grows by the activation's slope bound (1.1 for silu,
    1.5 for hard_swish) and is kept where the activation only clamps."""
    if act == "relu":
        return np.where(y < 0, 0.0, y), S
    if act == "clip":
        return np.minimum(np.maximum(y, lo), hi), S
    if act == "silu":
        return y / (1.0 + np.exp(-y)), 1.1 * S + np.abs(y) * EPS32
    if act == "hard_swish":
        return y * np.clip(y + 3.0, 0.0, 6.0) / 6.0, 1.5 * S * (1.0 + np.abs(y) / 3.0)
    return y, S


def conv_case(xs, ws, dt="f32", bias=True, strides=None, pads=None, dil=None, group=1, auto_pad="NOTSET",
              label="", args=(), extra=None, act=None, act_lo=None, act_hi=None, res=False, nan=False):
    """res: the fused residual sum (input 3, "s", shaped as the output), added
    before the activation; nan: x[0, 0, 1, ...] is NaN (relu and clip pass NaN)."""
    a = _attrs(strides, pads, dil, group, auto_pad)
    a.update(extra or {})
    if act:
        a["activation"] = act
        if act_lo is not None:
            a["activation_min"] = act_lo
        if act_hi is not None:
            a["activation_max"] = act_hi
    name = " ".join(p for p in ("conv%dd %s x=%s w=%s" % (len(xs) - 2, dt, shp(xs), shp(ws)),
                                "bias" if bias else "", "sum" if res else "", _describe(a), label.strip()) if p)

    def build():
        rng = rng_for(name)
        x = rep(rng.standard_normal(xs), dt)
        if nan:
            x[(0, 0) + (1,) * (len(xs) - 2)] = np.nan
        w = rep(rng.standard_normal(ws) / sq(int(np.prod(ws[1:]))), dt)
        b = rep(rng.standard_normal(ws[0]), dt) if bias else None
        y, S, k = conv_ref(x, w, b, strides, pads, dil, group, auto_pad)
        inputs = ins(x, w, b, dt)
        if res:
            r = rep(rng.standard_normal(y.shape), dt)
            y, S = y + f64(r), S + np.abs(f64(r))
            inputs += ([] if b is not None else [None]) + [("s", r, "bf16") if dt == "bf16" else ("s", r)]
        y, S = activation_ref(y, S, act, -np.inf if act_lo is None else act_lo, np.inf if act_hi is None else act_hi)
        return {"inputs": inputs, "expect": {"y": rep(y, dt)}, "tol": tol(dt, k, S)}
    return Case(name, "conv", attrs=a, build=build, args=list(args))


def convt_case(xs, ws, dt="f32", bias=True, strides=None, pads=None, dil=None, group=1, auto_pad="NOTSET",
               out_pad=None, out_shape=None, label="", args=(), extra=None):
    a = _attrs(strides, pads, dil, group, auto_pad, out_pad, out_shape)
    a.update(extra or {})
    name = " ".join(p for p in ("conv_transpose%dd %s x=%s w=%s" % (len(xs) - 2, dt, shp(xs), shp(ws)),
                                "bias" if bias else "", _describe(a), label.strip()) if p)

    def build():
        rng = rng_for(name)
        x = rep(rng.standard_normal(xs), dt)
        w = rep(rng.standard_normal(ws) / sq(int(np.prod(ws[1:]))), dt)
        b = rep(rng.standard_normal(ws[1] * group), dt) if bias else None
        y, S, k = convt_ref(x, w, b, strides, pads, dil, group, auto_pad, out_pad, out_shape)
        return {"inputs": ins(x, w, b, dt), "expect": {"y": rep(y, dt)}, "tol": tol(dt, k, S)}
    return Case(name, "conv_transpose", attrs=a, build=build, args=list(args))


# ---------------------------------------------------------------- conv

def conv_cases():
    c = []
    # 1-D
    c.append(conv_case((2, 3, 10), (4, 3, 3)))
    c.append(conv_case((2, 3, 17), (4, 3, 3), bias=False, strides=[2], pads=[1, 2], dil=[2]))
    c.append(conv_case((1, 4, 9), (6, 2, 2), group=2, pads=[0, 3]))
    c.append(conv_case((3, 6, 12), (6, 1, 5), group=6, strides=[3], pads=[2, 1]))
    c.append(conv_case((2, 3, 10), (4, 3, 3), dt="f64", strides=[2], pads=[2, 0], dil=[3]))
    # leading padding longer than a whole tile of output positions (ONNX's
    # test_Conv1d_groups with pads [P, 0]): im2col once zeroed past its tile.
    # A thread count above 1 cuts these few tasks into several tiles each.
    for p in (122, 124, 127, 200, 1000):
        for t in ("1", "2", "3"):
            c.append(conv_case((2, 4, 6), (4, 2, 3), group=2, pads=[p, 0],
                               label=" leading padding past a tile --threads " + t, args=["--threads", t]))
    # 2-D
    c.append(conv_case((2, 3, 8, 9), (5, 3, 3, 3), pads=[1, 1, 1, 1]))
    c.append(conv_case((2, 3, 8, 9), (5, 3, 3, 3), bias=False))
    c.append(conv_case((2, 3, 11, 10), (4, 3, 3, 2), strides=[2, 1], dil=[1, 2], pads=[0, 2, 1, 0]))
    c.append(conv_case((1, 2, 13, 14), (3, 2, 5, 2), strides=[3, 3], pads=[2, 0, 0, 1]))
    c.append(conv_case((2, 6, 7, 7), (9, 2, 3, 3), group=3, pads=[1, 0, 0, 1]))
    c.append(conv_case((2, 8, 10, 10), (8, 1, 3, 3), group=8, strides=[2, 2], pads=[1, 1, 1, 1], label=" depthwise"))
    c.append(conv_case((2, 4, 9, 8), (8, 1, 3, 3), group=4, dil=[2, 2], pads=[2, 1, 2, 1],
                       label=" depthwise x2 multiplier"))
    c.append(conv_case((1, 5, 9, 8), (5, 1, 4, 3), bias=False, group=5, strides=[2, 3], pads=[3, 0, 0, 2],
                       label=" depthwise"))
    c.append(conv_case((2, 16, 7, 9), (24, 16, 1, 1), label=" pointwise"))
    c.append(conv_case((2, 16, 7, 9), (24, 16, 1, 1), strides=[2, 2], label=" strided 1x1"))
    c.append(conv_case((2, 16, 7, 9), (24, 16, 1, 1), pads=[1, 0, 0, 1], label=" padded 1x1"))
    c.append(conv_case((2, 1, 12, 12), (8, 1, 3, 3), pads=[1, 1, 1, 1], label=" one input channel"))
    c.append(conv_case((1, 2, 4, 4), (3, 2, 5, 5), pads=[2, 2, 2, 2], label=" kernel larger than input"))
    c.append(conv_case((1, 2, 6, 6), (3, 2, 3, 3), dil=[4, 4], pads=[4, 4, 4, 4], label=" taps mostly in padding"))
    # most taps read padding at most positions: conv.c's tap-by-tap form (sparse_fits)
    c.append(conv_case((2, 5, 6, 7), (4, 5, 3, 3), dil=[5, 5], pads=[5, 5, 5, 5], res=True, act="relu",
                       label=" taps mostly in padding, sum, relu"))
    c.append(conv_case((1, 3, 9, 9), (4, 3, 3, 3), strides=[2, 2], dil=[4, 4], pads=[4, 3, 4, 5],
                       label=" taps mostly in padding, strided"))
    c.append(conv_case((2, 3, 8), (5, 3, 3), dt="f64", dil=[7], pads=[7, 7], label=" taps mostly in padding"))
    c.append(conv_case((1, 2, 4, 4, 4), (3, 2, 3, 3, 3), dil=[3, 3, 3], pads=[3, 3, 3, 3, 3, 3], bias=False,
                       label=" taps mostly in padding"))
    c.append(conv_case((1, 2, 5, 5), (3, 2, 2, 2), strides=[7, 7], pads=[1, 1, 1, 1], label=" stride past input"))
    c.append(conv_case((2, 3, 8, 9), (5, 3, 3, 3), dt="f64", pads=[1, 2, 0, 1], strides=[1, 2]))
    c.append(conv_case((2, 6, 7, 7), (9, 2, 3, 3), dt="f64", group=3, dil=[2, 1]))
    c.append(conv_case((2, 8, 10, 10), (8, 1, 3, 3), dt="f64", group=8, pads=[1, 1, 1, 1], label=" depthwise"))
    # 3-D
    c.append(conv_case((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), pads=[1, 1, 1, 1, 1, 1]))
    c.append(conv_case((2, 4, 7, 6, 5), (6, 2, 3, 2, 3), group=2, strides=[2, 1, 2], pads=[1, 0, 2, 0, 1, 1],
                       dil=[1, 2, 1]))
    c.append(conv_case((1, 3, 6, 6, 6), (3, 1, 3, 3, 3), group=3, strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1],
                       label=" depthwise"))
    c.append(conv_case((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), dt="f64", bias=False, pads=[0, 1, 2, 2, 1, 0]))
    # auto_pad
    for ap in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        c.append(conv_case((2, 3, 9, 10), (4, 3, 4, 3), strides=[2, 3], auto_pad=ap))
        c.append(conv_case((1, 2, 11), (3, 2, 4), dil=[2], auto_pad=ap))
        c.append(conv_case((1, 2, 6, 5, 7), (2, 2, 2, 3, 4), strides=[1, 2, 2], auto_pad=ap))
    c.append(conv_case((2, 4, 9, 10), (4, 1, 4, 3), group=4, strides=[2, 3], auto_pad="SAME_LOWER", label=" depthwise"))
    # empty lists count as absent; defaults spelled out change nothing
    c.append(conv_case((1, 2, 7, 6), (3, 2, 3, 3), auto_pad="SAME_UPPER", extra={"pads": [], "strides": []},
                       label=" empty pads and strides lists"))
    c.append(conv_case((1, 2, 7, 6), (3, 2, 3, 3), extra={"pads": [0, 0, 0, 0], "strides": [1, 1],
                                                          "dilations": [1, 1], "group": 1, "auto_pad": "NOTSET"},
                       label=" defaults given"))
    # 16-bit floats through the f32 kernel
    for dt in ("f16", "bf16"):
        c.append(conv_case((2, 4, 9, 9), (6, 4, 3, 3), dt=dt, pads=[1, 1, 1, 1]))
        c.append(conv_case((2, 6, 8, 8), (6, 1, 3, 3), dt=dt, group=6, strides=[2, 2], label=" depthwise"))
        c.append(conv_case((1, 3, 12), (4, 3, 5), dt=dt, auto_pad="SAME_UPPER"))
        c.append(conv_case((1, 2, 4, 5, 6), (3, 2, 3, 3, 3), dt=dt, pads=[1, 0, 1, 0, 1, 0]))
    # empty batch, no input channel, no output channel
    c.append(conv_case((0, 3, 8, 8), (4, 3, 3, 3), label=" empty batch"))
    c.append(conv_case((0, 4, 8, 8), (4, 1, 3, 3), group=4, label=" empty batch"))
    c.append(conv_case((2, 0, 5, 5), (3, 0, 3, 3), label=" no input channel"))
    c.append(conv_case((2, 3, 5, 5), (0, 3, 3, 3), bias=False, label=" no output channel"))
    # realistic sizes
    c.append(conv_case((2, 32, 28, 28), (64, 32, 3, 3), pads=[1, 1, 1, 1]))
    c.append(conv_case((1, 64, 56, 56), (64, 64, 3, 3), pads=[1, 1, 1, 1], label=" (benchmark shape)"))
    c.append(conv_case((1, 64, 56, 56), (64, 64, 3, 3), pads=[1, 1, 1, 1], label=" (benchmark shape) --threads 3",
                       args=["--threads", "3"]))
    c.append(conv_case((4, 32, 28, 28), (64, 32, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1], label=" --threads 3",
                       args=["--threads", "3"]))
    c.append(conv_case((2, 3, 64, 64), (16, 3, 7, 7), strides=[2, 2], pads=[3, 3, 3, 3], label=" stem"))
    c.append(conv_case((2, 64, 28, 28), (64, 1, 3, 3), group=64, pads=[1, 1, 1, 1], label=" depthwise --threads 3",
                       args=["--threads", "3"]))
    c.append(conv_case((1, 512, 7, 7), (512, 512, 3, 3), pads=[1, 1, 1, 1], label=" deep --threads 2",
                       args=["--threads", "2"]))
    c.append(conv_case((2, 64, 28, 28), (128, 64, 1, 1), dt="f64", label=" pointwise --threads 3",
                       args=["--threads", "3"]))
    c.append(conv_case((2, 8, 12, 12, 12), (16, 8, 3, 3, 3), pads=[1, 1, 1, 1, 1, 1], label=" --threads 2",
                       args=["--threads", "2"]))
    # the depthwise row kernels (f32, 2-D, square 3/5/7 kernel, stride 1 or 2): rows
    # wider than a vector with a remainder, pads on one side, inputs narrower than
    # the kernel, a multiplier, auto_pad
    c.append(conv_case((2, 3, 19, 37), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1], label=" depthwise row"))
    c.append(conv_case((1, 4, 20, 35), (4, 1, 3, 3), group=4, strides=[2, 2], pads=[0, 1, 1, 0],
                       label=" depthwise row"))
    c.append(conv_case((1, 4, 23, 41), (4, 1, 5, 5), group=4, pads=[2, 2, 2, 2], label=" depthwise row"))
    c.append(conv_case((2, 3, 22, 40), (3, 1, 5, 5), group=3, strides=[2, 2], pads=[1, 2, 2, 1],
                       label=" depthwise row"))
    c.append(conv_case((1, 2, 17, 33), (2, 1, 7, 7), group=2, pads=[3, 3, 3, 3], label=" depthwise row"))
    c.append(conv_case((1, 2, 18, 34), (2, 1, 7, 7), bias=False, group=2, strides=[2, 2], pads=[3, 2, 3, 2],
                       label=" depthwise row"))
    c.append(conv_case((1, 3, 3, 2), (3, 1, 5, 5), group=3, pads=[2, 2, 2, 2], label=" depthwise row narrower than kernel"))
    c.append(conv_case((1, 3, 9, 21), (6, 1, 3, 3), group=3, strides=[2, 2], pads=[1, 1, 1, 1],
                       label=" depthwise row x2 multiplier"))
    c.append(conv_case((1, 4, 15, 30), (4, 1, 5, 5), group=4, strides=[2, 2], auto_pad="SAME_UPPER",
                       label=" depthwise row"))
    c.append(conv_case((1, 96, 28, 28), (96, 1, 3, 3), group=96, pads=[1, 1, 1, 1],
                       label=" depthwise row --threads 2", args=["--threads", "2"]))
    # output rows of 48 and more: the row kernel with checked edge columns
    c.append(conv_case((1, 3, 10, 61), (3, 1, 3, 3), group=3, pads=[1, 1, 1, 1], label=" depthwise wide row"))
    c.append(conv_case((1, 2, 9, 101), (2, 1, 5, 5), group=2, strides=[2, 2], pads=[2, 1, 1, 2],
                       label=" depthwise wide row"))
    c.append(conv_case((1, 2, 8, 64), (2, 1, 7, 7), group=2, pads=[3, 0, 3, 0], label=" depthwise wide row"))
    c.append(conv_case((1, 8, 12, 56), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1], act="relu",
                       label=" depthwise wide row --threads 2", args=["--threads", "2"]))
    # fused activations (attribute "activation", as the optimizer writes them): on
    # the depthwise, im2col, pointwise and general paths
    for act, lo, hi in (("relu", None, None), ("clip", 0.0, 6.0), ("silu", None, None), ("hard_swish", None, None)):
        c.append(conv_case((2, 8, 13, 21), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1], act=act, act_lo=lo,
                           act_hi=hi, label=" depthwise"))
        c.append(conv_case((2, 6, 11, 9), (10, 6, 3, 3), strides=[2, 1], pads=[1, 1, 1, 1], act=act, act_lo=lo,
                           act_hi=hi))
        c.append(conv_case((1, 16, 10, 12), (24, 16, 1, 1), act=act, act_lo=lo, act_hi=hi, label=" pointwise"))
    c.append(conv_case((2, 6, 11, 9), (10, 6, 3, 3), dt="f64", pads=[1, 1, 1, 1], act="silu"))
    c.append(conv_case((1, 4, 9, 8), (8, 1, 3, 3), dt="f64", group=4, act="clip", act_lo=-0.5, act_hi=0.25,
                       label=" depthwise x2 multiplier"))
    c.append(conv_case((1, 4, 9), (6, 2, 3), group=2, act="clip", act_lo=-0.25, label=" no upper bound"))
    c.append(conv_case((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), pads=[1, 1, 1, 1, 1, 1], act="relu"))
    c.append(conv_case((1, 32, 14, 14), (64, 32, 3, 3), pads=[1, 1, 1, 1], act="relu", label=" --threads 2",
                       args=["--threads", "2"]))
    c.append(conv_case((1, 3, 6, 6), (4, 3, 3, 3), dt="f16", act="hard_swish"))
    # the fused residual sum (input 3, as the optimizer's conv_add pass writes it),
    # before the activation: im2col, pointwise, depthwise, 1-D / 3-D, other dtypes
    c.append(conv_case((2, 16, 14, 14), (16, 16, 3, 3), pads=[1, 1, 1, 1], act="relu", res=True))
    c.append(conv_case((1, 32, 7, 7), (32, 32, 3, 3), pads=[1, 1, 1, 1], res=True, label=" --threads 2",
                       args=["--threads", "2"]))
    c.append(conv_case((1, 24, 10, 12), (24, 24, 1, 1), bias=False, res=True, act="clip", act_lo=0.0, act_hi=6.0,
                       label=" pointwise"))
    c.append(conv_case((2, 8, 13, 21), (8, 1, 3, 3), group=8, pads=[1, 1, 1, 1], act="silu", res=True,
                       label=" depthwise"))
    c.append(conv_case((2, 8, 9), (8, 1, 5), group=8, pads=[2, 2], res=True, label=" depthwise 1-D"))
    c.append(conv_case((1, 4, 11, 9), (6, 2, 3, 3), group=2, strides=[2, 2], dil=[1, 2], pads=[1, 0, 2, 1],
                       act="hard_swish", res=True, label=" grouped"))
    c.append(conv_case((1, 3, 15), (5, 3, 4), strides=[2], pads=[3, 1], act="relu", res=True))
    c.append(conv_case((1, 2, 5, 6, 7), (3, 2, 3, 3, 3), pads=[1, 1, 1, 1, 1, 1], res=True, act="relu"))
    c.append(conv_case((1, 3, 6, 6), (4, 3, 3, 3), dt="f16", res=True, act="relu"))
    c.append(conv_case((1, 3, 6, 6), (4, 3, 3, 3), dt="bf16", res=True))
    c.append(conv_case((2, 6, 11, 9), (10, 6, 3, 3), dt="f64", pads=[1, 1, 1, 1], res=True, act="relu"))
    c.append(conv_case((1, 4, 6, 6), (4, 4, 3, 3), bias=False, res=True, auto_pad="SAME_UPPER", strides=[2, 2],
                       act="relu", label=" auto_pad"))
    # NaN passes the fused relu and clip (oneDNN's post-ops would drop it)
    for act, lo, hi in (("relu", None, None), ("clip", 0.0, 6.0)):
        c.append(conv_case((1, 16, 8, 8), (16, 16, 3, 3), pads=[1, 1, 1, 1], act=act, act_lo=lo, act_hi=hi, nan=True,
                           label=" NaN input"))
        c.append(conv_case((1, 16, 8, 8), (16, 1, 3, 3), group=16, pads=[1, 1, 1, 1], act=act, act_lo=lo,
                           act_hi=hi, res=True, nan=True, label=" NaN input depthwise"))
    return c


# ---------------------------------------------------------------- conv_transpose

def convt_cases():
    c = []
    # 1-D
    c.append(convt_case((2, 3, 7), (3, 4, 3)))
    c.append(convt_case((2, 3, 7), (3, 4, 3), bias=False, strides=[2], out_pad=[1], pads=[1, 0], dil=[2]))
    c.append(convt_case((1, 4, 6), (4, 2, 4), group=2, strides=[3], pads=[0, 2]))
    c.append(convt_case((2, 5, 9), (5, 1, 3), group=5, strides=[2], pads=[1, 1], out_pad=[1], label=" depthwise"))
    c.append(convt_case((2, 3, 7), (3, 4, 3), dt="f64", strides=[3], out_pad=[2], pads=[2, 1]))
    # 2-D
    c.append(convt_case((2, 3, 5, 6), (3, 4, 3, 3)))
    c.append(convt_case((2, 3, 5, 6), (3, 4, 3, 3), bias=False, strides=[2, 2], pads=[1, 1, 1, 1], out_pad=[1, 1]))
    c.append(convt_case((2, 4, 5, 5), (4, 3, 3, 2), group=2, strides=[2, 3], dil=[2, 1], pads=[0, 1, 2, 0]))
    c.append(convt_case((2, 6, 5, 5), (6, 1, 4, 4), group=6, strides=[2, 2], pads=[1, 1, 1, 1], label=" depthwise"))
    c.append(convt_case((1, 4, 5, 4), (4, 2, 3, 3), group=4, strides=[2, 1], dil=[1, 2],
                        label=" depthwise x2 multiplier"))
    c.append(convt_case((2, 3, 4, 4), (3, 2, 2, 2), strides=[3, 3], label=" stride past kernel"))
    c.append(convt_case((1, 1, 5, 5), (1, 3, 3, 3), strides=[2, 2], label=" one input channel"))
    c.append(convt_case((2, 16, 6, 7), (16, 8, 1, 1), label=" pointwise"))
    c.append(convt_case((2, 3, 5, 6), (3, 4, 3, 3), dt="f64", strides=[2, 1], pads=[0, 1, 1, 2], out_pad=[1, 0]))
    c.append(convt_case((2, 4, 5, 5), (4, 3, 3, 2), dt="f64", group=2, strides=[2, 2]))
    # output_shape: pads recomputed (odd totals: extra at the begin for NOTSET/SAME_LOWER,
    # at the end for SAME_UPPER); a shape beyond the full result pads the end
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_shape=[8, 10]))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_shape=[8, 10], auto_pad="SAME_UPPER"))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_shape=[6, 9], auto_pad="SAME_LOWER"))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_shape=[7, 9], pads=[5, 5, 5, 5],
                        label=" (pads ignored)"))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_shape=[11, 12], label=" beyond full"))
    c.append(convt_case((2, 2, 6), (2, 3, 4), strides=[2], out_shape=[11], out_pad=[1]))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], pads=[1, 0, 0, 1],
                        extra={"output_shape": [], "output_padding": []}, label=" empty output_shape list"))
    c.append(convt_case((1, 2, 3, 4, 3), (2, 2, 3, 3, 2), strides=[2, 2, 2], out_shape=[6, 8, 5]))
    # auto_pad
    for ap in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        c.append(convt_case((2, 3, 5, 6), (3, 2, 4, 3), strides=[2, 3], auto_pad=ap))
        c.append(convt_case((1, 2, 7), (2, 3, 3), strides=[2], dil=[2], auto_pad=ap))
        c.append(convt_case((1, 2, 3, 4, 5), (2, 2, 2, 3, 3), strides=[2, 1, 2], auto_pad=ap))
    c.append(convt_case((1, 2, 7), (2, 3, 1), strides=[2], auto_pad="SAME_UPPER", label=" kernel under stride"))
    c.append(convt_case((1, 4, 5, 6), (4, 1, 3, 3), group=4, strides=[2, 2], auto_pad="SAME_LOWER", label=" depthwise"))
    c.append(convt_case((1, 2, 4, 5), (2, 3, 3, 3), strides=[2, 2], out_pad=[1, 1], auto_pad="VALID"))
    # 3-D
    c.append(convt_case((1, 3, 4, 5, 3), (3, 2, 3, 3, 3), strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1],
                        out_pad=[1, 0, 1]))
    c.append(convt_case((2, 4, 3, 4, 3), (4, 2, 2, 3, 2), group=2, strides=[1, 2, 2], dil=[2, 1, 1],
                        pads=[0, 1, 0, 1, 0, 2]))
    c.append(convt_case((1, 3, 4, 4, 4), (3, 1, 3, 3, 3), group=3, strides=[2, 2, 2], label=" depthwise"))
    c.append(convt_case((1, 3, 4, 5, 3), (3, 2, 3, 3, 3), dt="f64", strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1]))
    # 16-bit floats
    for dt in ("f16", "bf16"):
        c.append(convt_case((2, 4, 5, 5), (4, 3, 3, 3), dt=dt, strides=[2, 2], pads=[1, 1, 1, 1], out_pad=[1, 1]))
        c.append(convt_case((1, 4, 5, 5), (4, 1, 3, 3), dt=dt, group=4, strides=[2, 2], label=" depthwise"))
        c.append(convt_case((1, 3, 8), (3, 2, 4), dt=dt, strides=[2], out_shape=[15]))
        c.append(convt_case((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), dt=dt, strides=[2, 2, 2]))
    # empty batch, no input channel
    c.append(convt_case((0, 3, 5, 5), (3, 4, 3, 3), strides=[2, 2], label=" empty batch"))
    c.append(convt_case((0, 4, 5, 5), (4, 1, 3, 3), group=4, label=" empty batch"))
    c.append(convt_case((2, 0, 4, 4), (0, 3, 3, 3), label=" no input channel"))
    # realistic sizes
    c.append(convt_case((2, 64, 14, 14), (64, 32, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1], label=" (DCGAN up)"))
    c.append(convt_case((2, 64, 14, 14), (64, 32, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1],
                        label=" (DCGAN up) --threads 3", args=["--threads", "3"]))
    c.append(convt_case((1, 128, 8, 8), (128, 64, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1], out_pad=[1, 1],
                        label=" --threads 2", args=["--threads", "2"]))
    c.append(convt_case((2, 32, 28, 28), (32, 1, 3, 3), group=32, strides=[2, 2], pads=[1, 1, 1, 1],
                        out_pad=[1, 1], label=" depthwise --threads 3", args=["--threads", "3"]))
    c.append(convt_case((1, 16, 6, 6, 6), (16, 8, 2, 2, 2), dt="f64", strides=[2, 2, 2], label=" --threads 3",
                        args=["--threads", "3"]))
    c.append(convt_case((2, 32, 9, 9), (32, 24, 3, 3), group=4, strides=[2, 2], label=" grouped --threads 3",
                        args=["--threads", "3"]))
    return c


# ---------------------------------------------------------------- errors

def error_cases():
    c = []
    f = np.float32

    def z(*s, dt=f):
        return np.zeros(s, dtype=dt)

    specs = [
        ("conv", "input of rank 2", z(2, 3), z(4, 3, 3), None, {}, [r"rank 3, 4 or 5", r"\[2,3\]"]),
        ("conv", "input of rank 6", z(1, 1, 2, 2, 2, 2), z(1, 1, 1, 1, 1, 1), None, {}, [r"rank 3, 4 or 5"]),
        ("conv", "weight rank differs", z(1, 3, 8, 8), z(4, 3, 3), None, {}, [r"weight 'w' \[4,3,3\] has rank 3",
                                                                               r"rank 4"]),
        ("conv", "weight dtype differs", z(1, 3, 8, 8), z(4, 3, 3, 3, dt=np.float64), None, {},
         [r"weight 'w' has dtype f64", r"f32"]),
        ("conv", "channels not divisible by group", z(1, 5, 8, 8), z(4, 1, 3, 3), None, {"group": 2},
         [r"C=5", r"group=2"]),
        ("conv", "weight channels per group wrong", z(1, 6, 8, 8), z(4, 6, 3, 3), None, {"group": 2},
         [r"C/group = 3", r"\[4,6,3,3\]"]),
        ("conv", "output channels not divisible by group", z(1, 6, 8, 8), z(5, 3, 3, 3), None, {"group": 2},
         [r"M=5", r"group=2"]),
        ("conv", "group 0", z(1, 6, 8, 8), z(4, 6, 3, 3), None, {"group": 0}, [r"'group' = 0"]),
        ("conv", "kernel of size 0", z(1, 3, 8, 8), z(4, 3, 0, 3), None, {}, [r"kernel size 0", r"dim 0"]),
        ("conv", "bias of wrong length", z(1, 3, 8, 8), z(4, 3, 3, 3), z(3), {}, [r"bias 'b' \[3\]", r"\[4\]"]),
        ("conv", "sum of wrong shape", z(1, 3, 8, 8), z(4, 3, 3, 3), (z(4), z(1, 4, 6, 5)), {},
         [r"sum 's' \(f32 \[1,4,6,5\]\) must have the output's dtype and shape \(f32 \[1,4,6,6\]\)"]),
        ("conv", "bias of wrong dtype", z(1, 3, 8, 8), z(4, 3, 3, 3), z(4, dt=np.float64), {},
         [r"bias 'b' has dtype f64"]),
        ("conv", "strides of wrong length", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"strides": [1, 1, 1]},
         [r"'strides' has 3 values", r"needs 2"]),
        ("conv", "stride 0", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"strides": [1, 0]},
         [r"'strides': value 0 at position 1"]),
        ("conv", "dilation 0", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"dilations": [0, 1]},
         [r"'dilations': value 0 at position 0"]),
        ("conv", "negative pad", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"pads": [0, 0, -1, 0]},
         [r"'pads': value -1 at position 2"]),
        ("conv", "pads of wrong length", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"pads": [1, 1]},
         [r"'pads' has 2 values", r"needs 4 \(all begins, then all ends\)"]),
        ("conv", "unknown auto_pad", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"auto_pad": "SAME"},
         [r"'auto_pad' = 'SAME'", r"SAME_UPPER"]),
        ("conv", "pads with auto_pad", z(1, 3, 8, 8), z(4, 3, 3, 3), None,
         {"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]}, [r"'pads' and 'auto_pad' = 'SAME_UPPER'"]),
        ("conv", "kernel larger than input", z(1, 3, 4, 8), z(4, 3, 5, 3), None, {},
         [r"output size along spatial dim 0 would be 0", r"size 4"]),
        ("conv", "dilated kernel larger than input", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"dilations": [1, 5]},
         [r"spatial dim 1 would be -?\d", r"spans 11"]),
        ("conv", "huge dilation", z(1, 3, 8, 8), z(4, 3, 3, 3), None, {"dilations": [1, 2 ** 50]},
         [r"'dilations': value 1125899906842624 at position 1 is out of range"]),
        ("conv_transpose", "weight channels differ from input", z(1, 3, 5, 5), z(4, 2, 3, 3), None, {},
         [r"4 input channels \(dim 0\)", r"C=3", r"\[C, M/group, kernel...\]"]),
        ("conv_transpose", "channels not divisible by group", z(1, 3, 5, 5), z(3, 2, 3, 3), None, {"group": 2},
         [r"C=3", r"group=2"]),
        ("conv_transpose", "output_padding of wrong length", z(1, 3, 5, 5), z(3, 2, 3, 3), None,
         {"output_padding": [1]}, [r"'output_padding' has 1 value ", r"needs 2"]),
        ("conv_transpose", "negative output_padding", z(1, 3, 5, 5), z(3, 2, 3, 3), None,
         {"output_padding": [0, -1]}, [r"'output_padding': value -1"]),
        ("conv_transpose", "output_shape of wrong length", z(1, 3, 5, 5), z(3, 2, 3, 3), None,
         {"output_shape": [1, 3, 10, 10]}, [r"'output_shape' has 4 values", r"needs 2"]),
        ("conv_transpose", "output_shape 0", z(1, 3, 5, 5), z(3, 2, 3, 3), None, {"output_shape": [10, 0]},
         [r"'output_shape': value 0 at position 1"]),
        ("conv_transpose", "pads eat the output", z(1, 3, 2, 5), z(3, 2, 1, 3), None, {"pads": [1, 0, 1, 0]},
         [r"output size along spatial dim 0 would be 0"]),
        ("conv_transpose", "bias of wrong length", z(1, 4, 5, 5), z(4, 3, 3, 3), z(3), {"group": 2},
         [r"bias 'b' \[3\] must have shape \[6\]"]),
        ("conv_transpose", "weight rank differs", z(1, 3, 5), z(3, 2, 3, 3), None, {},
         [r"weight 'w' \[3,2,3,3\] has rank 4", r"C, M/group"]),
    ]
    for op, label, x, w, b, attrs, res in specs:
        sm = None
        if isinstance(b, tuple):
            b, sm = b
        inputs = [("x", x), ("w", w)] + ([("b", b)] if b is not None else []) + ([("s", sm)] if sm is not None else [])
        c.append(Case("%s invalid: %s: exit 3" % (op, label), op, inputs=inputs, attrs=attrs, exit_code=3,
                      node_name="filter", stderr_re=[r"node 'filter' \(%s\)" % op] + res))
    return c


def cases():
    return conv_cases() + convt_cases() + error_cases()
