"""Numeric cases of max_pool, average_pool, global_average_pool, global_max_pool and
resize (ONNX MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool / Resize,
channels first), plus the inference errors. lp_pool is in cases_image.py.

Pooling oracle: a NumPy implementation of the ONNX window rules written here.  Output
size per spatial axis (eff = (k-1) dilation + 1):
  NOTSET/VALID (VALID: no pads): floor or, with ceil_mode, ceil((in + pb + pe - eff) /
         stride) + 1, minus one when ceil_mode lets the last window start in the right
         padding ((out-1) stride >= in + pb);
  SAME_UPPER/SAME_LOWER: out = ceil(in / stride), total = max(0, (out-1) stride + eff -
         in) split with the odd element at the end (UPPER) or the begin (LOWER).
Window o covers o*stride - pb + j*dilation (j < k).  max_pool: maximum over the cells
inside the input (NaN propagates; a window of padding only gives -inf or the int
minimum); average_pool: their mean, the divisor also counting the cells inside the
padded input (not the ceil_mode overhang) with count_include_pad=1.  Cross-checked
against PyTorch (F.max_pool/avg_pool 1d/2d/3d, F.pad with -inf/0 first for asymmetric
pads) wherever PyTorch has the same semantics, and against the worked examples of the
ONNX operator documentation.

Resize oracle: a NumPy port of the ONNX reference implementation
(onnx/reference/ops/op_resize.py): per axis, the source coordinate of every output
coordinate (with scales the transform uses the scale, with sizes output/input; the
"output width" of align_corners, pytorch_half_pixel and half_pixel_symmetric is
scale * input), the reference's coefficients (nearest modes, linear, cubic with
cubic_coeff_a and exclude_outside) and its edge-padded neighbour choice, giving an interpolation matrix per axis that is applied
along every axis in float64.  Cross-checked against F.interpolate where PyTorch
matches (linear + align_corners, linear + half_pixel / pytorch_half_pixel =
align_corners=False, nearest + asymmetric/floor = 'nearest', nearest + half_pixel /
round_prefer_ceil = 'nearest-exact', cubic + half_pixel / align_corners = 'bicubic')
and against the ONNX documentation examples.

Tolerances: max_pool, global_max_pool and nearest resize are exact.  average_pool,
global_average_pool and linear resize: |got - exp| <= 2 eps |exp| + a eps S with S the
same pooling / interpolation of |x| and a = 4 sqrt(K) + 4 (K the cells summed).
f16 / bf16 (computed by the backend in f32): the oracle is computed in float64 from the
16-bit-rounded inputs and rounded to the 16-bit type (bf16 travels as an f32 .npy);
one 16-bit ulp relative (bf16 expressed in f32 eps) plus the same absolute term."""
import math
import threading

import numpy as np

from harness import EXACT, NP, Case, Tol, rng_for

EPS32 = float(np.finfo(np.float32).eps)
BF16_R = 2.0 ** -7 / EPS32  # one bf16 ulp (relative) in f32 eps

_torch = None
_torch_lock = threading.Lock()


def torch_mod():
    """PyTorch, imported on first use (the other modules' cases do not pay for it)."""
    global _torch
    with _torch_lock:
        if _torch is None:
            import torch
            torch.set_num_threads(1)
            _torch = torch
    return _torch


def f64(x):
    return np.asarray(x, dtype=np.float64)


def shp(s):
    return "x".join(map(str, s)) or "[]"


def bf16_round(x):
    """float32 array rounded to bfloat16 (nearest even), kept as float32."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    r = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32("nan"), r).astype(np.float32)


def make_input(rng, dt, shape):
    """(array to write, its exact values as the graph sees them)."""
    if dt in ("i8", "u8"):
        info = np.iinfo(NP[dt])
        x = rng.integers(info.min, info.max, shape, dtype=NP[dt], endpoint=True)
        return x, x
    if dt == "bf16":
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        return x, bf16_round(x)
    x = (rng.standard_normal(shape) * 2).astype(NP[dt])
    return x, x


def to_out(v, dt):
    """float64 oracle -> the output array ftrun writes for dtype dt."""
    with np.errstate(all="ignore"):
        if dt == "bf16":
            return bf16_round(v.astype(np.float32))
        if dt == "f16":
            return v.astype(np.float32).astype(np.float16)
        return v.astype(NP[dt])


def sum_tol(dt, k, scale):
    """2 eps relative + (4 sqrt(K) + 4) eps S; 16-bit types add one ulp of their own."""
    a = 4 * math.sqrt(max(k, 1)) + 4
    if dt == "bf16":
        return Tol(r=2 * BF16_R, a=a, scale=scale)
    return Tol(r=2, a=a, scale=scale)


# ---------------------------------------------------------------- pooling geometry

def pool_geometry(in_sp, k, s, d, pads, ceil_mode, auto_pad):
    """ONNX output sizes and (begin, end) pads per spatial axis."""
    sp = len(in_sp)
    out, pb, pe = [], [], []
    for i in range(sp):
        n, eff = in_sp[i], (k[i] - 1) * d[i] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // s[i])
            total = max(0, (o - 1) * s[i] + eff - n)
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            e = total - b
        else:
            b, e = (pads[i], pads[sp + i]) if (auto_pad == "NOTSET" and pads) else (0, 0)
            span = n + b + e - eff
            o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
            if ceil_mode and (o - 1) * s[i] >= n + b:
                o -= 1
        out.append(o)
        pb.append(b)
        pe.append(e)
    return out, pb, pe


def pool_ref(x, kind, k, s, d, pb, pe, out, cip=0):
    """float64 (or int64 for int max) result and, for average, the pooled |x|."""
    sp = len(k)
    is_int = x.dtype.kind in "iu"
    X = x.astype(np.int64) if is_int else f64(x)
    if kind == "max":
        fill = np.iinfo(x.dtype).min if is_int else -np.inf
    else:
        fill = 0.0
    Xp = np.pad(X, [(0, 0), (0, 0)] + [(0, 1)] * sp, constant_values=fill)
    idx, cnt = [], None
    for i in range(sp):
        n = x.shape[2 + i]
        pos = np.arange(out[i])[:, None] * s[i] - pb[i] + np.arange(k[i])[None, :] * d[i]
        inside = (pos >= 0) & (pos < n)
        padded = (pos >= -pb[i]) & (pos < n + pe[i])
        shape = [1] * (2 * sp)
        shape[2 * i], shape[2 * i + 1] = out[i], k[i]
        idx.append(np.where(inside, pos, n).reshape(shape))
        c = (padded if cip else inside).sum(axis=1).astype(np.float64)
        cshape = [1] * sp
        cshape[i] = out[i]
        cnt = c.reshape(cshape) if cnt is None else cnt * c.reshape(cshape)
    W = Xp[(slice(None), slice(None)) + tuple(idx)]
    kax = tuple(3 + 2 * i for i in range(sp))
    if kind == "max":
        return W.max(axis=kax), None
    with np.errstate(all="ignore"):
        return W.sum(axis=kax) / cnt, np.abs(W).sum(axis=kax) / cnt


def torch_pool(x, kind, k, s, d, pads, pb, pe, ceil_mode, cip):
    """PyTorch's result (float64) where it has ONNX's semantics, else None."""
    sp = len(k)
    symmetric = pb == pe
    if kind == "avg" and any(v != 1 for v in d):
        return None
    if ceil_mode and not (symmetric and all(pb[i] <= k[i] // 2 for i in range(sp))):
        return None  # F.pad would move where the ONNX "start in the right padding" rule applies
    torch = torch_mod()
    F = torch.nn.functional
    X = torch.from_numpy(f64(x))
    fn = {("max", 1): F.max_pool1d, ("max", 2): F.max_pool2d, ("max", 3): F.max_pool3d,
          ("avg", 1): F.avg_pool1d, ("avg", 2): F.avg_pool2d, ("avg", 3): F.avg_pool3d}[(kind, sp)]
    if symmetric and all(pb[i] <= k[i] // 2 for i in range(sp)):
        pad = list(pb)
    else:
        if kind == "avg" and not cip and any(pb + pe):
            return None  # padded cells must stay out of the divisor
        tp = []
        for i in reversed(range(sp)):
            tp += [pb[i], pe[i]]
        X = F.pad(X, tp, value=-math.inf if kind == "max" else 0.0)
        pad = [0] * sp
    if kind == "max":
        y = fn(X, list(k), stride=list(s), padding=pad, dilation=list(d), ceil_mode=bool(ceil_mode))
    else:
        y = fn(X, list(k), stride=list(s), padding=pad, ceil_mode=bool(ceil_mode), count_include_pad=bool(cip))
    return y.numpy()


def check_torch(ref, tr, kind):
    if tr is None:
        return
    if ref.shape != tr.shape:
        raise AssertionError("oracle shape %s disagrees with PyTorch's %s" % (ref.shape, tr.shape))
    ok = np.array_equal(ref, tr, equal_nan=True) if kind == "max" else np.allclose(ref, tr, rtol=1e-12, atol=1e-12,
                                                                                 equal_nan=True)
    if not ok:
        raise AssertionError("oracle disagrees with PyTorch (max diff %g)" % np.nanmax(np.abs(ref - tr)))


def pool_case(op, dt, shape, k, s=None, d=None, pads=None, ceil_mode=0, auto_pad="NOTSET", cip=None, label="",
              input_fn=None, args=(), torch_check=True):
    kind = "max" if op == "max_pool" else "avg"
    sp = len(k)
    attrs = {"kernel_shape": list(k)}
    if s is not None:
        attrs["strides"] = list(s)
    if d is not None:
        attrs["dilations"] = list(d)
    if pads is not None:
        attrs["pads"] = list(pads)
    if ceil_mode:
        attrs["ceil_mode"] = ceil_mode
    if auto_pad != "NOTSET":
        attrs["auto_pad"] = auto_pad
    if cip is not None:
        attrs["count_include_pad"] = cip
    desc = " ".join("%s=%s" % (a, v) for a, v in attrs.items())
    name = "%s %s %s %s%s%s" % (op, dt, shp(shape), desc, " " + label if label else "",
                                 " --threads 3" if "--threads" in args else "")

    def build():
        rng = rng_for(name)
        x, xv = input_fn(rng) if input_fn else make_input(rng, dt, shape)
        ss, dd = s or [1] * sp, d or [1] * sp
        out, pb, pe = pool_geometry(shape[2:], k, ss, dd, pads, ceil_mode, auto_pad)
        ref, absref = pool_ref(np.asarray(xv), kind, k, ss, dd, pb, pe, out, cip or 0)
        if torch_check and dt not in ("f16", "bf16") and np.asarray(xv).size:
            # SAME_* ignores ceil_mode: PyTorch gets the explicit pads without it
            tceil = ceil_mode if auto_pad in ("NOTSET", "VALID") else 0
            check_torch(ref, torch_pool(np.asarray(xv), kind, k, ss, dd, pads, pb, pe, tceil, cip or 0), kind)
        if kind == "max":
            y = ref.astype(NP[dt]) if dt in ("i8", "u8") else to_out(ref, dt)
            return {"inputs": [("x", x, dt)], "expect": {"y": y}, "tol": EXACT}
        kvol = int(np.prod(k))
        return {"inputs": [("x", x, dt)], "expect": {"y": to_out(ref, dt)},
                "tol": sum_tol(dt, kvol, np.nan_to_num(absref, nan=1.0))}
    return Case(name, op, attrs=attrs, build=build, args=args)


def const_case(name, op, x, attrs, y, tol=EXACT):
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    return Case(name, op, inputs=[("x", x)], attrs=attrs, expect={"y": y}, tol=tol)


def pool_cases():
    c = []
    M, A = "max_pool", "average_pool"
    # realistic sizes: the ResNet stem pool, a 3x3 same-size average
    c.append(pool_case(M, "f32", (8, 64, 56, 56), [3, 3], [2, 2], pads=[1, 1, 1, 1]))
    c.append(pool_case(M, "f32", (8, 64, 56, 56), [3, 3], [2, 2], pads=[1, 1, 1, 1], args=["--threads", "3"]))
    c.append(pool_case(A, "f32", (8, 64, 28, 28), [3, 3], [1, 1], pads=[1, 1, 1, 1], cip=0))
    c.append(pool_case(A, "f32", (8, 64, 28, 28), [3, 3], [1, 1], pads=[1, 1, 1, 1], cip=1, args=["--threads", "3"]))
    # special values through the 2-D kernels: NaN wins a max window, +-inf stay, inf - inf in a sum is NaN
    for dt in ("f32", "f64"):
        def specials(rng, dt=dt):
            x = (rng.standard_normal((2, 3, 11, 12)) * 2).astype(NP[dt])
            flat = x.reshape(-1)
            pos = rng.choice(flat.size, 40, replace=False)
            flat[pos[:12]] = np.nan
            flat[pos[12:24]] = np.inf
            flat[pos[24:36]] = -np.inf
            flat[pos[36:]] = np.array([1e38, -1e38, 1e-40, -1e-45], dtype=NP[dt])
            return x, x
        for op in (M, A):
            for k, st, pads in (([3, 3], [2, 2], [1, 1, 1, 1]), ([2, 2], [1, 1], [0, 1, 1, 0]), ([3, 3], [1, 1], None)):
                c.append(pool_case(op, dt, (2, 3, 11, 12), k, st, pads=pads, cip=0 if op == A else None,
                                   label="NaN, inf, huge and subnormal", input_fn=specials, torch_check=False))
    c.append(pool_case(A, "f32", (4, 256, 14, 14), [2, 2], [2, 2]))
    # max_pool f32 rows of more than 8 past a multiple of 16 outputs: the horizontal pass
    # runs 16-wide past the row end into padding (src/cpu/pool.c, OWV); special values
    # placed in the last outputs' windows
    def wide_specials(rng):
        x = (rng.standard_normal((2, 3, 9, 58)) * 2).astype(np.float32)
        x[0, 0, 0, 57], x[0, 1, 3, 50], x[1, 2, 8, 56] = np.nan, np.inf, -np.inf
        x[1, 0, :, 48:] = -np.inf
        return x, x
    for k, st, pads in (([2, 2], [2, 2], None), ([3, 3], [1, 1], [1, 1, 1, 1]), ([3, 3], [2, 2], [0, 1, 0, 1])):
        c.append(pool_case(M, "f32", (2, 3, 9, 58), k, st, pads=pads, label="NaN, inf in the row tails",
                           input_fn=wide_specials, torch_check=False))
    c.append(pool_case(M, "f32", (8, 64, 56, 56), [2, 2], [2, 2], args=["--threads", "3"]))
    c.append(pool_case(M, "f32", (2, 16, 16, 32, 32), [2, 2, 2], [2, 2, 2]))

    for op in (M, A):
        cips = (None,) if op == M else (0, 1)
        for cip in cips:
            # 1-D, 2-D, 3-D with symmetric pads, ceil_mode (PyTorch checks)
            c.append(pool_case(op, "f32", (2, 3, 20), [3], [1], pads=[1, 1], cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 23), [4], [3], pads=[2, 2], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (1, 3, 8, 8), [2, 2], [2, 2], cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 10, 9), [3, 3], [2, 2], pads=[1, 1, 1, 1], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 11, 10), [3, 2], [2, 3], pads=[1, 0, 1, 0], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 6, 7, 8), [2, 2, 2], [2, 2, 2], cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 7, 6, 5), [3, 3, 3], [2, 2, 2], pads=[1] * 6, ceil_mode=1, cip=cip))
            # asymmetric pads (PyTorch through F.pad where the semantics allow)
            c.append(pool_case(op, "f32", (2, 3, 9, 10), [3, 3], [2, 2], pads=[0, 1, 2, 0], cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 9, 10), [3, 3], [2, 2], pads=[1, 0, 2, 1], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (2, 2, 13), [3], [1], pads=[2, 0], cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 5, 6, 7), [2, 2, 2], [2, 2, 2], pads=[1, 0, 0, 0, 1, 1], ceil_mode=1,
                               cip=cip))
            # dilation, alone and with ceil_mode
            c.append(pool_case(op, "f32", (2, 3, 20), [3], [2], d=[2], pads=[1, 1], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (2, 3, 12, 13), [3, 3], [1, 2], d=[2, 3], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 11, 10), [3, 2], [2, 2], d=[2, 2], pads=[2, 1, 1, 1], ceil_mode=1,
                               cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 9, 8, 7), [3, 3, 3], [2, 2, 2], d=[1, 2, 1], pads=[1] * 6,
                               ceil_mode=1, cip=cip))
            # every auto_pad
            for ap in ("SAME_UPPER", "SAME_LOWER"):
                c.append(pool_case(op, "f32", (1, 2, 7, 9), [3, 3], [2, 2], auto_pad=ap, cip=cip))
                c.append(pool_case(op, "f32", (1, 2, 8, 9), [2, 4], [3, 2], auto_pad=ap, cip=cip))
                c.append(pool_case(op, "f32", (1, 2, 10, 11), [3, 2], [2, 1], d=[2, 3], auto_pad=ap, cip=cip))
                c.append(pool_case(op, "f32", (2, 3, 14), [4], [3], auto_pad=ap, ceil_mode=1, cip=cip))
                c.append(pool_case(op, "f32", (1, 2, 5, 6, 7), [2, 3, 2], [2, 2, 3], auto_pad=ap, cip=cip))
                c.append(pool_case(op, "f32", (1, 2, 9), [1], [4], auto_pad=ap, cip=cip))  # negative total -> 0
            c.append(pool_case(op, "f32", (1, 2, 7, 9), [3, 3], [2, 2], auto_pad="VALID", cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 7, 10), [3, 3], [2, 2], auto_pad="VALID", ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f32", (1, 2, 7, 10), [3, 3], [2, 2], pads=[0, 0, 0, 0], auto_pad="VALID",
                               cip=cip, label="zero pads"))
            c.append(pool_case(op, "f32", (2, 3, 4, 5, 6), [2, 2, 3], [1, 2, 2], auto_pad="VALID", cip=cip))
            # window wider than the input, covered by the pads
            c.append(pool_case(op, "f32", (1, 2, 3), [5], [1], pads=[1, 1], cip=cip))
            # dtypes
            c.append(pool_case(op, "f64", (2, 3, 10, 9), [3, 3], [2, 2], pads=[1, 1, 1, 1], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f64", (1, 2, 6, 7, 5), [3, 2, 2], [2, 1, 2], pads=[1, 0, 1, 1, 1, 0], cip=cip))
            c.append(pool_case(op, "f16", (2, 3, 12, 11), [3, 3], [2, 2], pads=[1, 1, 1, 1], cip=cip))
            c.append(pool_case(op, "bf16", (2, 3, 12, 11), [2, 3], [2, 2], pads=[0, 1, 1, 1], ceil_mode=1, cip=cip))
            c.append(pool_case(op, "f16", (1, 2, 30), [5], [2], d=[2], auto_pad="SAME_LOWER", cip=cip))
            # empty batch
            c.append(pool_case(op, "f32", (0, 3, 8, 8), [2, 2], [2, 2], cip=cip))
            # a dilated window that covers only padding: -inf / 0 over 0 = NaN (PyTorch: -inf)
            c.append(pool_case(op, "f32", (1, 2, 2), [2], [1], d=[3], pads=[1, 1], cip=cip, label="all-padding window",
                               torch_check=(op == M)))

    # ceil_mode: the last window may not start in the right padding
    c.append(pool_case(M, "f32", (1, 1, 2, 2), [1, 1], [2, 2], ceil_mode=1, label="reduce by one"))
    c.append(pool_case(M, "f32", (1, 1, 4), [2], [2], pads=[0, 1], ceil_mode=1, label="window in right pad dropped"))
    c.append(pool_case(A, "f32", (1, 1, 4), [2], [2], pads=[0, 1], ceil_mode=1, cip=1,
                       label="window in right pad dropped"))

    # max_pool ints: full range; all-negative input checks that padding is not 0
    for dt in ("i8", "u8"):
        c.append(pool_case(M, dt, (2, 3, 9, 9), [3, 3], [2, 2], pads=[1, 1, 1, 1]))
        c.append(pool_case(M, dt, (2, 3, 10, 11), [2, 3], [2, 2], pads=[0, 1, 1, 0], ceil_mode=1, d=[2, 1]))
        c.append(pool_case(M, dt, (1, 2, 5, 6, 7), [2, 2, 2], [2, 2, 2], auto_pad="SAME_UPPER"))
        c.append(pool_case(M, dt, (2, 2, 17), [4], [3], auto_pad="SAME_LOWER"))
        c.append(pool_case(M, dt, (4, 32, 28, 28), [3, 3], [2, 2], pads=[1, 1, 1, 1]))
        c.append(pool_case(M, dt, (1, 2, 2), [2], [1], d=[3], pads=[1, 1], label="all-padding window",
                           torch_check=False))

    def negative_i8(rng):
        x = rng.integers(-128, -1, (1, 2, 5, 5), dtype=np.int8, endpoint=True)
        return x, x
    c.append(pool_case(M, "i8", (1, 2, 5, 5), [3, 3], [2, 2], pads=[1, 1, 1, 1], label="all negative",
                       input_fn=negative_i8))

    def with_nan(rng):
        x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
        x[0, 1, 2, 3] = np.nan
        x[1, 2, 7, 7] = np.nan
        x[1, 0, 0, 0] = np.inf
        x[0, 0, 4, 4] = -np.inf
        return x, x
    c.append(pool_case(M, "f32", (2, 3, 8, 8), [3, 3], [2, 2], pads=[1, 1, 1, 1], label="NaN and inf",
                       input_fn=with_nan))
    c.append(pool_case(A, "f32", (2, 3, 8, 8), [3, 3], [2, 2], pads=[1, 1, 1, 1], label="NaN and inf",
                       input_fn=with_nan))

    # worked examples of the ONNX operator documentation
    x16 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    x25 = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    c.append(const_case("max_pool onnx example 2d_ceil", M, x16, {"kernel_shape": [3, 3], "strides": [2, 2],
                                                                  "ceil_mode": 1}, [[[[11, 12], [15, 16]]]]))
    c.append(const_case("max_pool onnx example 2d_dilations", M, x16, {"kernel_shape": [2, 2], "dilations": [2, 2]},
                        [[[[11, 12], [15, 16]]]]))
    c.append(const_case("max_pool onnx example 2d_precomputed_same_upper", M, x25,
                        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
                        [[[[7, 9, 10], [17, 19, 20], [22, 24, 25]]]]))
    c.append(const_case("max_pool onnx example 2d_ceil_output_size_reduce_by_one", M, [[[[1, 2], [3, 4]]]],
                        {"kernel_shape": [1, 1], "strides": [2, 2], "ceil_mode": 1}, [[[[1]]]]))
    c.append(const_case("average_pool onnx example 2d_ceil", A, x16, {"kernel_shape": [3, 3], "strides": [2, 2],
                                                                      "ceil_mode": 1}, [[[[6, 7.5], [12, 13.5]]]]))
    c.append(const_case("average_pool onnx example 2d_precomputed_same_upper", A, x25,
                        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
                        [[[[4, 5.5, 7], [11.5, 13, 14.5], [19, 20.5, 22]]]], tol=Tol(r=2)))
    return c


# ---------------------------------------------------------------- global pools

def global_case(op, dt, shape, label="", input_fn=None):
    name = "%s %s %s%s" % (op, dt, shp(shape), " " + label if label else "")

    def build():
        rng = rng_for(name)
        x, xv = input_fn(rng) if input_fn else make_input(rng, dt, shape)
        X = f64(xv)
        ax = tuple(range(2, X.ndim))
        k = int(np.prod(X.shape[2:]))
        if op == "global_max_pool":
            y = X.max(axis=ax, keepdims=True) if X.size else np.zeros(X.shape[:2] + (1,) * len(ax))
            return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)}, "tol": EXACT}
        with np.errstate(all="ignore"):
            y = X.mean(axis=ax, keepdims=True) if X.size else np.zeros(X.shape[:2] + (1,) * len(ax))
            sc = np.abs(X).mean(axis=ax, keepdims=True) if X.size else 1.0
        return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)},
                "tol": sum_tol(dt, k, np.nan_to_num(sc, nan=1.0))}
    return Case(name, op, build=build)


def global_cases():
    c = []

    def with_nan(rng):
        x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
        x[0, 1, 2, 3] = np.nan
        x[1, 2, 0, 0] = np.inf
        x[1, 1, 4, 4] = -np.inf
        return x, x
    for op in ("global_average_pool", "global_max_pool"):
        for dt, shape in (("f32", (8, 512, 7, 7)), ("f32", (2, 64, 56, 56)), ("f32", (1, 2, 300, 300)),
                          ("f32", (3, 4, 100)), ("f32", (2, 3, 4, 5, 6)), ("f32", (1, 2, 3, 2, 3, 2)),
                          ("f64", (2, 5, 9, 7)), ("f64", (2, 3, 1000)), ("f16", (2, 8, 6, 6)),
                          ("bf16", (2, 8, 6, 6)), ("f32", (0, 3, 4, 4)), ("f32", (2, 0, 4, 4)),
                          ("f32", (1, 1, 1, 1))):
            c.append(global_case(op, dt, shape))
        c.append(global_case(op, "f32", (2, 3, 5, 5), label="NaN and inf", input_fn=with_nan))
    # the f32 mean sums blocks of 64 as a pairwise tree of 8-lane vectors, a tail
    # of 8-lane pairs, then single elements (src/cpu/pool.c): plane sizes that end
    # in each part, NaN/inf in a block and in the tail, a large mean
    def nan_in_block(rng):
        x = rng.standard_normal((2, 3, 11, 13)).astype(np.float32)
        x[0, 0, 2, 5] = np.nan
        x[0, 2, 10, 12] = np.nan
        x[1, 1, 3, 3] = np.inf
        x[1, 2, 10, 10] = -np.inf
        x[1, 0, 0, 0] = np.inf
        x[1, 0, 9, 0] = -np.inf
        return x, x

    def big_mean(rng):
        x = (1000 + rng.standard_normal((2, 4, 17, 19))).astype(np.float32)
        return x, x
    c.append(global_case("global_average_pool", "f32", (2, 3, 11, 13), label="NaN and inf in blocks and tail",
                         input_fn=nan_in_block))
    c.append(global_case("global_average_pool", "f32", (2, 4, 17, 19), label="mean 1000", input_fn=big_mean))
    for shape in ((1, 3, 8, 8), (2, 5, 1, 63), (1, 2, 65), (3, 7, 129), (1, 4, 7, 7), (1, 3, 3, 5), (2, 2, 1, 200),
                  (1, 5, 9, 9), (1, 3, 12345)):
        c.append(global_case("global_average_pool", "f32", shape))
    for shape in ((1, 2, 7, 7), (1, 2, 11, 13), (1, 1, 1, 57)):
        c.append(Case("global_average_pool f32 constant %s plane" % shp(shape), "global_average_pool",
                      inputs=[("x", np.full(shape, 0.1, np.float32))],
                      expect={"y": np.full(shape[:2] + (1,) * (len(shape) - 2), 0.1, np.float32)}, tol=Tol(r=2)))
    # the mean of a constant plane of 90000 is the constant (summation must not drift)
    c.append(Case("global_average_pool f32 constant 300x300 plane", "global_average_pool",
                  inputs=[("x", np.full((1, 2, 300, 300), 0.1, np.float32))],
                  expect={"y": np.full((1, 2, 1, 1), 0.1, np.float32)}, tol=Tol(r=2)))
    return c


# ---------------------------------------------------------------- resize

def _src_coord(ct, x, scale, n, out, roi=None):
    """The reference's x_ori (same operations, same order, in double)."""
    ow = scale * n
    if ct == "tf_crop_and_resize":
        if ow == 1:
            xo = (roi[1] - roi[0]) * (n - 1) / 2
        else:
            xo = x * (roi[1] - roi[0]) * (n - 1) / (ow - 1)
        return xo + roi[0] * (n - 1)
    if ct == "align_corners":
        return 0.0 if ow == 1 else x * (n - 1) / (ow - 1)
    if ct == "asymmetric":
        return x / scale
    if ct == "pytorch_half_pixel":
        return -0.5 if ow == 1 else (x + 0.5) / scale - 0.5
    if ct == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if ct == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if ct == "half_pixel_symmetric":
        adjustment = out / ow
        center = n / 2
        offset = center * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    raise ValueError(ct)


def cubic_coeffs(ratio, A):
    """The reference's _cubic_coeffs (Keys, coefficient A) of the 4 neighbours."""
    return [((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A,
            ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
            ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1,
            ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) * ((1 - ratio) + 1) - 4 * A]


def aa_coeffs(ratio, scale, mode, a):
    """Antialiased taps (ONNX Resize, antialias=1): the linear or cubic filter
    stretched by max(1, 1/scale), sampled at the cells around x and normalized
    to sum 1; ratio in (0, 1] is x's distance from the cell on its left."""
    s = min(scale, 1.0)
    half = -math.floor(-(2 if mode == "cubic" else 1) / s)  # cells each side of x
    dist = (np.arange(1 - half, 1 + half) - ratio) * s

    def kern(t):
        t = abs(t)
        if mode != "cubic":
            return max(0.0, 1 - t)
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a if t < 2 else 0.0
    w = np.array([kern(t) for t in dist])
    return w / w.sum()


def resize_matrix(n, out, scale, mode, ct, nm, cubic_a=-0.75, exclude=0, roi=None, outside=None, aa=0):
    """Interpolation matrix [out, n] of one axis, the reference's coefficients and its
    edge-padded neighbour choice ported one to one; outside[x] is set where
    tf_crop_and_resize gives the extrapolation value instead."""
    M = np.zeros((out, n))
    for x in range(out):
        xo = float(_src_coord(ct, float(x), scale, n, out, roi))
        if ct == "tf_crop_and_resize" and (xo < 0 or xo > n - 1):
            outside[x] = True
            continue
        xi = math.floor(xo)
        ratio = 1 if xo.is_integer() else xo - xi
        if aa:
            coeffs = aa_coeffs(ratio, scale, mode, cubic_a)
            k = len(coeffs)
            pad = -(-k // 2)
            # edge-pad by ceil(k/2), the k cells nearest to x (ties: lower)
            idx = np.array(sorted(sorted(range(n + 2 * pad), key=lambda i: (abs(xo + pad - i), i))[:k])) - pad
            if exclude:
                coeffs[(idx < 0) | (idx >= n)] = 0
                coeffs /= coeffs.sum()
            for cf, i in zip(coeffs, idx):
                M[x, min(max(i, 0), n - 1)] += float(cf)
            continue
        if mode == "cubic":
            coeffs = np.array(cubic_coeffs(ratio, cubic_a))
            # _get_neighbor: edge-pad by 2, the 4 cells nearest to x (ties: lower)
            xp = xo + 2
            idx = np.array(sorted(sorted(range(n + 4), key=lambda i: (abs(xp - i), i))[:4])) - 2
            if exclude:
                coeffs[(idx < 0) | (idx >= n)] = 0
                coeffs /= coeffs.sum()
            for cf, i in zip(coeffs, idx):
                M[x, min(max(i, 0), n - 1)] += float(cf)
            continue
        if mode == "nearest":
            if ratio == 1:
                coeffs = [0, 1]
            elif nm == "round_prefer_floor":
                coeffs = [ratio <= 0.5, ratio > 0.5]
            elif nm == "round_prefer_ceil":
                coeffs = [ratio < 0.5, ratio >= 0.5]
            elif nm == "floor":
                coeffs = [1, 0]
            else:
                coeffs = [0, 1]
        else:
            coeffs = [1 - ratio, ratio]
        # _get_neighbor: edge-pad by ceil(2/2) = 1, the 2 cells nearest to x (ties: lower)
        xp = xo + 1
        idx = sorted(sorted(range(n + 2), key=lambda i: (abs(xp - i), i))[:2])
        for cf, i in zip(coeffs, idx):
            M[x, min(max(i - 1, 0), n - 1)] += float(cf)
    return M


def resize_ref(x, out_shape, scales, mode, ct, nm, cubic_a=-0.75, exclude=0, roi=None, ext=0.0, aa=0):
    y, ya = f64(x), np.abs(f64(x))
    mask = np.zeros(out_shape, bool)
    for d in range(x.ndim):
        n = x.shape[d]
        scale = scales[d] if scales is not None else out_shape[d] / n
        outside = np.zeros(out_shape[d], bool)
        M = resize_matrix(n, out_shape[d], scale, mode, ct, nm, cubic_a, exclude,
                          None if roi is None else (roi[d], roi[x.ndim + d]), outside, aa)
        shape = [1] * x.ndim
        shape[d] = out_shape[d]
        mask |= outside.reshape(shape)
        y = np.moveaxis(np.tensordot(M, y, axes=([1], [d])), 0, d)
        ya = np.moveaxis(np.tensordot(np.abs(M), ya, axes=([1], [d])), 0, d)
    return np.where(mask, ext, y), np.where(mask, abs(ext), ya)


def torch_resize(x, out_shape, scales, mode, ct, nm):
    """F.interpolate's result where it has the same semantics (N and C unchanged), else None."""
    r = x.ndim
    if r < 3 or r > 5 or list(out_shape[:2]) != list(x.shape[:2]):
        return None
    if scales is not None and (scales[0] != 1 or scales[1] != 1):
        return None
    torch = torch_mod()
    F = torch.nn.functional
    X = torch.from_numpy(f64(x))
    kw = {"scale_factor": list(scales[2:]), "recompute_scale_factor": False} if scales is not None else \
        {"size": list(out_shape[2:])}
    if mode == "linear" and ct in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        if ct == "align_corners" and scales is not None:
            return None  # PyTorch uses the integer size there, the reference scale * input
        if ct == "half_pixel" and any(o == 1 for o in out_shape[2:]):
            return None  # PyTorch maps a single output to 0 (that is pytorch_half_pixel)
        tm = {3: "linear", 4: "bilinear", 5: "trilinear"}[r]
        return F.interpolate(X, mode=tm, align_corners=(ct == "align_corners"), **kw).numpy()
    if mode == "cubic" and r == 4 and ct in ("align_corners", "half_pixel"):
        if ct == "align_corners" and scales is not None:
            return None
        return F.interpolate(X, mode="bicubic", align_corners=(ct == "align_corners"), **kw).numpy()
    if mode == "nearest" and ct == "asymmetric" and nm == "floor":
        return F.interpolate(X, mode="nearest", **kw).numpy()
    if mode == "nearest" and ct == "half_pixel" and nm == "round_prefer_ceil":
        return F.interpolate(X, mode="nearest-exact", **kw).numpy()
    return None


def resize_case(dt, shape, mode="nearest", ct=None, nm=None, sizes=None, scales=None, label="", torch_check=False,
                args=(), input_fn=None, cubic_a=None, exclude=None, roi=None, ext=None, aa=None):
    attrs = {}
    if sizes is not None:
        attrs["sizes"] = list(sizes)
    if scales is not None:
        attrs["scales"] = list(scales)
    attrs["mode"] = mode
    if ct is not None:
        attrs["coordinate_transformation_mode"] = ct
    if nm is not None:
        attrs["nearest_mode"] = nm
    if cubic_a is not None:
        attrs["cubic_coeff_a"] = cubic_a
    if exclude is not None:
        attrs["exclude_outside"] = exclude
    if roi is not None:
        attrs["roi"] = list(roi)
    if ext is not None:
        attrs["extrapolation_value"] = ext
    if aa is not None:
        attrs["antialias"] = aa
    desc = " ".join("%s=%s" % (a, v) for a, v in attrs.items())
    name = "resize %s %s %s%s%s" % (dt, shp(shape), desc, " " + label if label else "",
                                    " --threads 3" if "--threads" in args else "")

    def build():
        rng = rng_for(name)
        x, xv = input_fn(rng) if input_fn else make_input(rng, dt, shape)
        out = list(sizes) if sizes is not None else [int(math.floor(n * s)) for n, s in zip(shape, scales)]
        y, ya = resize_ref(np.asarray(xv), out, scales, mode, ct or "half_pixel", nm or "round_prefer_floor",
                           -0.75 if cubic_a is None else cubic_a, exclude or 0, roi, ext or 0.0, aa or 0)
        if torch_check:
            t = torch_resize(np.asarray(xv), out, scales, mode, ct or "half_pixel", nm or "round_prefer_floor")
            if t is None:
                raise AssertionError("no PyTorch cross-check for this combination")
            if t.shape != y.shape or not np.allclose(y, t, rtol=1e-12, atol=1e-12):
                raise AssertionError("oracle disagrees with PyTorch")
        if mode == "nearest":
            return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)}, "tol": EXACT}
        taps = 4 if mode == "cubic" else 2
        if aa:  # the widest axis's filter
            taps = max(-2 * math.floor(-taps / 2 / min(o / n, 1)) for o, n in zip(out, shape) if n > 0)
        return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)}, "tol": sum_tol(dt, taps ** len(shape), ya)}
    return Case(name, "resize", attrs=attrs, build=build, args=args)


CTS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")
NMS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_cases():
    c = []
    # nearest: every coordinate transform with every rounding, from sizes (up on one axis,
    # down on the other), from scales with fractional output widths, and with exact ties
    for ct in CTS:
        for nm in NMS:
            c.append(resize_case("f32", (1, 2, 5, 7), "nearest", ct, nm, sizes=[1, 2, 8, 4]))
            c.append(resize_case("f32", (2, 3, 5, 10), "nearest", ct, nm, scales=[1, 1, 1.7, 0.6]))
            c.append(resize_case("f32", (1, 1, 6, 8), "nearest", ct, nm, scales=[1, 1, 0.5, 1.5], label="ties"))
    # linear: every coordinate transform, up, down, fractional scales
    for ct in CTS:
        tc = ct in ("align_corners", "half_pixel", "pytorch_half_pixel")
        c.append(resize_case("f32", (2, 3, 4, 5), "linear", ct, sizes=[2, 3, 7, 9], torch_check=tc))
        c.append(resize_case("f32", (2, 3, 8, 7), "linear", ct, sizes=[2, 3, 3, 2], torch_check=tc))
        c.append(resize_case("f32", (2, 3, 5, 10), "linear", ct, scales=[1, 1, 1.7, 0.6],
                             torch_check=ct in ("half_pixel", "pytorch_half_pixel")))
        c.append(resize_case("f32", (1, 2, 10), "linear", ct, sizes=[1, 2, 25], torch_check=tc))
        c.append(resize_case("f32", (1, 2, 4, 5, 6), "linear", ct, sizes=[1, 2, 7, 3, 9], torch_check=tc))
        c.append(resize_case("f64", (2, 2, 6, 5), "linear", ct, sizes=[2, 2, 4, 11], torch_check=tc))
        # an axis resized to 1 (pytorch_half_pixel maps it to the first cell)
        # (PyTorch maps a single output to the centre, pytorch_half_pixel to the first cell)
        c.append(resize_case("f32", (1, 1, 5, 6), "linear", ct, sizes=[1, 1, 1, 3],
                             torch_check=ct == "align_corners"))
        c.append(resize_case("f32", (1, 1, 5, 6), "nearest", ct, sizes=[1, 1, 1, 3]))
        # N-linear over every axis, N and C included
        c.append(resize_case("f32", (2, 4, 6, 6), "linear", ct, scales=[2, 0.5, 1.5, 1]))
        c.append(resize_case("f32", (2, 3, 4, 5, 6), "linear", ct, sizes=[3, 5, 3, 7, 4]))
        c.append(resize_case("f32", (10,), "linear", ct, sizes=[23]))
        c.append(resize_case("f64", (3, 7), "nearest", ct, "round_prefer_ceil", sizes=[5, 4]))
    # PyTorch's own modes where they match
    c.append(resize_case("f32", (1, 2, 5, 6), "nearest", "asymmetric", "floor", scales=[1, 1, 3, 2], torch_check=True))
    c.append(resize_case("f32", (1, 2, 8, 6), "nearest", "asymmetric", "floor", sizes=[1, 2, 4, 3], torch_check=True))
    c.append(resize_case("f32", (1, 2, 5, 6), "nearest", "half_pixel", "round_prefer_ceil", scales=[1, 1, 2, 3],
                         torch_check=True))
    c.append(resize_case("f32", (1, 2, 8, 6), "nearest", "half_pixel", "round_prefer_ceil", sizes=[1, 2, 4, 3],
                         torch_check=True))
    c.append(resize_case("f32", (1, 2, 4, 6, 8), "nearest", "asymmetric", "floor", scales=[1, 1, 2, 2, 0.5],
                         torch_check=True))
    # antialias (linear, cubic): downsampling widens the filter, upsampling keeps it;
    # every coordinate transform, exclude_outside, sizes and scales, f64 and f16
    for ct in CTS:
        for mode in ("linear", "cubic"):
            c.append(resize_case("f32", (1, 2, 9, 11), mode, ct, scales=[1, 1, 0.6, 0.3], aa=1))
            c.append(resize_case("f32", (1, 1, 7, 10), mode, ct, sizes=[1, 1, 3, 12], aa=1))
    for mode in ("linear", "cubic"):
        c.append(resize_case("f32", (2, 3, 16, 16), mode, "half_pixel", sizes=[2, 3, 5, 7], aa=1, exclude=1))
        c.append(resize_case("f64", (1, 2, 12, 9), mode, "half_pixel", scales=[1, 1, 0.25, 0.5], aa=1))
        c.append(resize_case("f16", (1, 2, 12, 9), mode, "asymmetric", scales=[1, 0.5, 0.4, 1], aa=1))
        c.append(resize_case("f32", (2, 8, 64, 64), mode, "half_pixel", sizes=[2, 8, 20, 24], aa=1,
                             args=["--threads", "3"]))
    c.append(resize_case("f32", (1, 1, 7, 10), "linear", "tf_crop_and_resize", sizes=[1, 1, 3, 4], aa=1,
                         roi=[0, 0, 0.2, -0.3, 1, 1, 0.7, 1.2], ext=2.5))
    # realistic sizes
    c.append(resize_case("f32", (2, 64, 56, 56), "linear", "half_pixel", scales=[1, 1, 2, 2], torch_check=True))
    c.append(resize_case("f32", (2, 64, 56, 56), "linear", "half_pixel", scales=[1, 1, 2, 2], torch_check=True,
                         args=["--threads", "3"]))
    c.append(resize_case("f32", (4, 32, 64, 64), "nearest", "asymmetric", "floor", scales=[1, 1, 2, 2],
                         torch_check=True))
    c.append(resize_case("f32", (1, 3, 224, 224), "linear", "align_corners", sizes=[1, 3, 100, 150], torch_check=True))
    # dtypes
    for dt in ("f16", "bf16"):
        c.append(resize_case(dt, (2, 3, 6, 7), "linear", "half_pixel", sizes=[2, 3, 11, 4]))
        c.append(resize_case(dt, (2, 3, 6, 7), "linear", "align_corners", scales=[1, 1, 2, 0.5]))
        c.append(resize_case(dt, (2, 3, 6, 7), "nearest", "asymmetric", "round_prefer_floor", sizes=[2, 3, 11, 4]))
    c.append(resize_case("f64", (2, 3, 6, 7), "nearest", "half_pixel", scales=[1, 1, 1.5, 0.75]))
    # empty results and the identity
    c.append(resize_case("f32", (0, 3, 4, 4), "linear", scales=[1, 1, 2, 2]))
    c.append(resize_case("f32", (1, 3, 4, 4), "linear", sizes=[1, 3, 0, 5]))
    c.append(resize_case("f32", (1, 3, 4, 4), "linear", scales=[1, 1, 0.2, 1]))

    def build_ident():
        x = rng_for("resize identity").standard_normal((2, 3, 5, 6)).astype(np.float32)
        return {"inputs": [("x", x)], "expect": {"y": x}}
    c.append(Case("resize f32 2x3x5x6 linear to the same size is exact", "resize",
                  attrs={"sizes": [2, 3, 5, 6], "mode": "linear"}, build=build_ident))

    # cubic: every coordinate transform, up and down, coefficient and exclude_outside
    for ct in CTS + ("tf_half_pixel_for_nn",):
        tc = ct in ("align_corners", "half_pixel")
        c.append(resize_case("f32", (2, 3, 4, 5), "cubic", ct, sizes=[2, 3, 9, 8], torch_check=tc))
        c.append(resize_case("f32", (2, 3, 9, 8), "cubic", ct, sizes=[2, 3, 4, 3], torch_check=tc))
        c.append(resize_case("f32", (1, 2, 5, 10), "cubic", ct, scales=[1, 1, 1.7, 0.6],
                             torch_check=ct == "half_pixel"))
        c.append(resize_case("f32", (1, 2, 6, 5), "cubic", ct, scales=[1, 1, 2, 0.8], cubic_a=-0.5, exclude=1))
        c.append(resize_case("f32", (1, 2, 3, 4, 5), "cubic", ct, sizes=[1, 2, 5, 3, 7]))
    c.append(resize_case("f32", (7,), "cubic", sizes=[15], exclude=1))
    c.append(resize_case("f32", (2, 4, 6, 6), "cubic", scales=[2, 0.5, 1.5, 1]))
    c.append(resize_case("f32", (1, 1, 5, 6), "cubic", "pytorch_half_pixel", sizes=[1, 1, 1, 3]))
    c.append(resize_case("f32", (2, 64, 56, 56), "cubic", "half_pixel", scales=[1, 1, 2, 2], torch_check=True,
                         args=["--threads", "3"]))
    c.append(resize_case("f64", (2, 3, 6, 7), "cubic", "align_corners", sizes=[2, 3, 11, 4], torch_check=True))
    c.append(resize_case("f16", (2, 3, 6, 7), "cubic", "half_pixel", sizes=[2, 3, 11, 4]))
    c.append(resize_case("bf16", (2, 3, 6, 7), "cubic", "asymmetric", scales=[1, 1, 2, 0.5], exclude=1))
    c.append(resize_case("f32", (0, 3, 4, 4), "cubic", scales=[1, 1, 2, 2]))
    # tf_crop_and_resize: a region of interest, outside it the extrapolation value
    for mode in ("nearest", "linear", "cubic"):
        c.append(resize_case("f32", (1, 2, 6, 7), mode, "tf_crop_and_resize", sizes=[1, 2, 5, 9],
                             roi=[0, 0, 0.2, 0.1, 1, 1, 0.8, 0.7]))
        c.append(resize_case("f32", (1, 2, 6, 7), mode, "tf_crop_and_resize", scales=[1, 1, 1.5, 0.8],
                             roi=[0, 0, -0.3, 0.4, 1, 1, 1.2, 1.3], ext=-7.5))
        c.append(resize_case("f64", (2, 5, 4), mode, "tf_crop_and_resize", sizes=[2, 1, 6],
                             roi=[0, 0.5, 0.25, 1, 0.5, 0.75], ext=3.0))
    c.append(resize_case("bf16", (1, 2, 6, 7), "linear", "tf_crop_and_resize", sizes=[1, 2, 5, 9],
                         roi=[0, 0, 0.2, -0.15, 1, 1, 0.8, 1.1], ext=1.5))
    # tf_half_pixel_for_nn (ONNX opset 11-12) with nearest
    for nm in NMS:
        c.append(resize_case("f32", (1, 2, 5, 7), "nearest", "tf_half_pixel_for_nn", nm, sizes=[1, 2, 8, 4]))

    # worked examples of the ONNX operator documentation (float32 values there)
    x22 = [[[[1, 2], [3, 4]]]]
    x24 = [[[[1, 2, 3, 4], [5, 6, 7, 8]]]]
    doc = Tol(r=16)
    c.append(const_case("resize onnx example upsample_scales_nearest", "resize", x22,
                        {"scales": [1, 1, 2, 3], "mode": "nearest"},
                        [[[[1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [3, 3, 3, 4, 4, 4]]]]))
    c.append(const_case("resize onnx example downsample_scales_nearest", "resize", x24,
                        {"scales": [1, 1, 0.6, 0.6], "mode": "nearest"}, [[[[1, 3]]]]))
    c.append(const_case("resize onnx example downsample_scales_linear", "resize", x24,
                        {"scales": [1, 1, 0.6, 0.6], "mode": "linear"}, [[[[2.6666665, 4.3333331]]]], tol=doc))
    c.append(const_case("resize onnx example upsample_scales_linear_align_corners", "resize", x22,
                        {"scales": [1, 1, 2, 2], "mode": "linear", "coordinate_transformation_mode": "align_corners"},
                        [[[[1, 4 / 3, 5 / 3, 2], [5 / 3, 2, 7 / 3, 8 / 3], [7 / 3, 8 / 3, 3, 10 / 3],
                           [3, 10 / 3, 11 / 3, 4]]]], tol=doc))
    c.append(const_case("resize onnx example downsample_scales_linear_half_pixel_symmetric", "resize",
                        [[[[1, 2, 3, 4]]]], {"scales": [1, 1, 1, 0.6], "mode": "linear",
                                             "coordinate_transformation_mode": "half_pixel_symmetric"},
                        [[[[1.6666666, 3.3333333]]]], tol=doc))
    c.append(const_case("resize onnx example upsample_scales_linear_half_pixel_symmetric", "resize", x22,
                        {"scales": [1.0, 1.0, 2.3, 2.94], "mode": "linear",
                         "coordinate_transformation_mode": "half_pixel_symmetric"},
                        [[[[1, 1.15986395, 1.5, 1.84013605, 2], [1.56521738, 1.72508133, 2.06521738, 2.40535343,
                                                                  2.56521738],
                           [2.43478262, 2.59464657, 2.93478262, 3.27491867, 3.43478262],
                           [3, 3.15986395, 3.5, 3.84013605, 4]]]], tol=doc))
    return c


# ---------------------------------------------------------------- inference errors

def error_cases():
    c = []
    x4 = np.zeros((1, 2, 6, 6), np.float32)
    bad = [
        ("max_pool", x4[0, 0], {"kernel_shape": [2]}, r"needs rank 3, 4 or 5"),
        ("max_pool", x4, {"kernel_shape": [3]}, r"attribute 'kernel_shape' \[3\] has 1 values; expected 2"),
        ("max_pool", x4, {"kernel_shape": [0, 2]}, r"'kernel_shape' \[0,2\]: value 0 at position 0 must be at least 1"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "strides": [1, 0]}, r"'strides' \[1,0\]: value 0 at position 1"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "dilations": [1, 1, 1]}, r"'dilations' \[1,1,1\] has 3 values"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "pads": [1, 1, 1]}, r"'pads' \[1,1,1\] has 3 values; expected 4"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "pads": [0, -1, 0, 0]}, r"value -1 at position 1 must be at least 0"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "auto_pad": "SAME"},
         r"auto_pad': unknown value 'SAME' \(expected NOTSET, SAME_UPPER, SAME_LOWER or VALID\)"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]},
         r"'pads' \[1,1,1,1\] cannot be combined with auto_pad 'SAME_UPPER'"),
        ("max_pool", x4, {"kernel_shape": [2, 2], "ceil_mode": 2}, r"'ceil_mode' is 2; expected 0 or 1"),
        ("max_pool", x4, {"kernel_shape": [7, 2]}, r"spatial axis 0 the window .*7 cells.* padded input \(size 6"),
        ("max_pool", x4, {"kernel_shape": [4, 2], "dilations": [2, 1], "pads": [0, 0, 0, 0]}, r"7 cells"),
        ("max_pool", np.zeros((1, 2, 0, 6), np.float32), {"kernel_shape": [1, 2]}, r"empty spatial axis 2"),
        ("max_pool", x4.astype(np.int32), {"kernel_shape": [2, 2]}, r"i32"),
        ("average_pool", x4, {"kernel_shape": [2, 2], "count_include_pad": 2},
         r"'count_include_pad' is 2; expected 0 or 1"),
        ("average_pool", x4.astype(np.int8), {"kernel_shape": [2, 2]}, r"i8"),
        ("average_pool", np.zeros((1, 1, 2, 2, 2, 2), np.float32), {"kernel_shape": [1, 1, 1, 1]},
         r"needs rank 3, 4 or 5"),
        ("global_average_pool", x4[0, 0], {}, r"needs rank 3 or more"),
        ("global_max_pool", np.zeros((1, 2, 3, 0), np.float32), {}, r"empty spatial axis 3"),
        ("resize", x4, {"sizes": [1, 2, 3, 3], "scales": [1, 1, 2, 2]}, r"'sizes' \[1,2,3,3\] and 'scales' .* are both"),
        ("resize", x4, {"mode": "linear"}, r"give exactly one of the attributes 'sizes'"),
        ("resize", x4, {"sizes": [3, 3]}, r"'sizes' \[3,3\] has 2 values; expected 4"),
        ("resize", x4, {"scales": [2.0, 2.0]}, r"'scales' \[2,2\] has 2 values; expected 4"),
        ("resize", x4, {"sizes": [1, 2, -1, 3]}, r"size -1 of axis 2 is negative"),
        ("resize", x4, {"scales": [1, 1, 0, 2]}, r"scale 0 of axis 2 must be positive"),
        ("resize", x4, {"scales": [1, 1, -2, 2]}, r"scale -2 of axis 2 must be positive"),
        ("resize", np.zeros((1, 0, 3), np.float32), {"sizes": [1, 2, 3]}, r"axis 1 .* is empty and cannot be resized"),
        ("resize", x4, {"scales": [1, 1, 2, 2], "mode": "bicubic"},
         r"attribute 'mode': unknown value 'bicubic' \(expected nearest, linear or cubic\)"),
        ("resize", x4, {"scales": [1, 1, 2, 2], "coordinate_transformation_mode": "tf_crop_and_resize"},
         r"'tf_crop_and_resize' needs attribute 'roi' with 8 values"),
        ("resize", x4, {"scales": [1, 1, 2, 2], "coordinate_transformation_mode": "tf_crop_and_resize",
                        "roi": [0, 0, 1, 1]}, r"needs attribute 'roi' with 8 values .*; got \[0,0,1,1\]"),
        ("resize", x4, {"scales": [1, 1, 2, 2], "coordinate_transformation_mode": "crop"},
         r"unknown value 'crop' \(expected half_pixel, half_pixel_symmetric, pytorch_half_pixel, "
         r"align_corners, asymmetric, tf_half_pixel_for_nn or tf_crop_and_resize\)"),
        ("resize", x4, {"scales": [1, 1, 2, 2], "nearest_mode": "round"},
         r"unknown value 'round' \(expected round_prefer_floor, round_prefer_ceil, floor or ceil\)"),
        ("resize", np.zeros((), np.float32), {"sizes": []}, r"scalar|sizes"),
        ("resize", x4.astype(np.int32), {"scales": [1, 1, 2, 2]}, r"i32"),
    ]
    for k, (op, x, attrs, pat) in enumerate(bad):
        label = "%s invalid %d: %s" % (op, k, " ".join("%s=%s" % kv for kv in attrs.items()) or "rank %d" % x.ndim)
        c.append(Case(label + ": exit 3", op, inputs=[("x", x)], attrs=attrs, exit_code=3, node_name="pool",
                      stderr_re=[r"node 'pool' \(%s\)" % op, pat]))
    return c


def cases():
    return pool_cases() + global_cases() + resize_cases() + error_cases()
