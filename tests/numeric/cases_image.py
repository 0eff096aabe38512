"""Numeric cases of depth_to_space, space_to_depth, lrn, lp_pool and grid_sample (ONNX
DepthToSpace, SpaceToDepth, LRN, LpPool, GridSample), plus their inference errors.

Oracles, all in float64 from the exact input values:
  depth_to_space / space_to_depth: the reshape-transpose-reshape of the ONNX operator
      documentation written in NumPy (exact, every dtype); CRD cross-checked against
      torch.nn.functional.pixel_shuffle, and space_to_depth against the inverse of DCR.
  lrn: NumPy, window c - floor((size-1)/2) .. c + ceil((size-1)/2) cut to the channels;
      cross-checked against F.local_response_norm for odd sizes (PyTorch centres even
      windows the other way).
  lp_pool: NumPy, (sum over the window cells inside the input of |x|^p)^(1/p) with the
      window geometry of tests/numeric/cases_pool.py (pool_geometry); cross-checked
      against F.lp_pool1d/2d for p = 2 without padding (PyTorch's lp_pool has no pads
      and raises x, not |x|, to the power).
  grid_sample: F.grid_sample in float64 (bilinear, nearest, bicubic; zeros, border,
      reflection; align_corners), which shares ONNX's semantics except for bicubic with
      border/reflection padding at coordinates outside the input (ONNX clamps or
      reflects the coordinate first, PyTorch every tap), so those cases keep their grids
      inside [-1, 1]; outside, a port of the ONNX reference implementation
      (grid_sample_onnx, itself checked against PyTorch inside the input) is the oracle.

Tolerances: as the pools (cases_pool.sum_tol): 2 eps relative plus (4 sqrt(K) + 4) eps
times the same computation over |x| (K the cells summed); lrn adds 8 eps relative for
the pow; 16-bit dtypes are computed in f32 and rounded once (one ulp of their own)."""
import math

import numpy as np

from cases_elementwise import random_of
from cases_pool import BF16_R, bf16_round, f64, make_input, pool_geometry, shp, sum_tol, to_out, torch_mod
from harness import EXACT, NP, Case, Tol, rng_for

# ---------------------------------------------------------------- depth_to_space, space_to_depth


def d2s_ref(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def s2d_ref(x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def moved_input(name, dt):
    """Random values of dt (bf16: f32 values rounded to bf16, declared bf16)."""
    rng = rng_for(name)
    if dt == "bf16":
        return lambda s: bf16_round(random_of(rng, "f32", s))
    return lambda s: random_of(rng, dt, s)


def depth_space_cases():
    c = []
    # the reference itself, against PyTorch and against each other
    torch = torch_mod()
    x = np.arange(2 * 18 * 3 * 4, dtype=np.float64).reshape(2, 18, 3, 4)
    ps = torch.nn.functional.pixel_shuffle(torch.from_numpy(x), 3).numpy()
    if not np.array_equal(ps, d2s_ref(x, 3, "CRD")):
        raise AssertionError("depth_to_space CRD oracle disagrees with pixel_shuffle")
    if not np.array_equal(d2s_ref(s2d_ref(x, 1), 1, "DCR"), x) or \
            not np.array_equal(s2d_ref(d2s_ref(x, 3, "DCR"), 3), x):
        raise AssertionError("space_to_depth oracle is not the inverse of depth_to_space DCR")
    dts = ("f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "bool")
    shapes = [((2, 8, 3, 5), 2), ((1, 18, 4, 4), 3), ((3, 4, 1, 1), 2), ((1, 1, 2, 3), 1), ((0, 4, 2, 2), 2),
              ((1, 0, 2, 2), 2), ((2, 64, 28, 28), 4)]
    for k, (s, b) in enumerate(shapes):
        for mode in ("DCR", "CRD"):
            for dt in (dts if k == 0 else (dts[(k + len(mode)) % len(dts)],)):
                name = "depth_to_space %s %s blocksize=%d mode=%s" % (dt, shp(s), b, mode)

                def build(dt=dt, s=s, b=b, mode=mode, name=name):
                    x = moved_input(name, dt)(s)
                    return {"inputs": [("x", x, dt)], "expect": {"y": np.ascontiguousarray(d2s_ref(x, b, mode))}}
                c.append(Case(name, "depth_to_space", attrs={"blocksize": b, "mode": mode}, build=build))
    for k, (s, b) in enumerate([((2, 3, 4, 6), 2), ((1, 2, 9, 6), 3), ((2, 5, 3, 3), 1), ((0, 2, 4, 4), 2),
                                ((1, 3, 0, 4), 2), ((2, 16, 56, 56), 4)]):
        for dt in (dts if k == 0 else (dts[k % len(dts)],)):
            name = "space_to_depth %s %s blocksize=%d" % (dt, shp(s), b)

            def build(dt=dt, s=s, b=b, name=name):
                x = moved_input(name, dt)(s)
                return {"inputs": [("x", x, dt)], "expect": {"y": np.ascontiguousarray(s2d_ref(x, b))}}
            c.append(Case(name, "space_to_depth", attrs={"blocksize": b}, build=build))
    return c


# ---------------------------------------------------------------- lrn


def lrn_ref(x, size, alpha, beta, bias):
    X = f64(x)
    C = X.shape[1]
    sq = np.zeros_like(X)
    asq = np.zeros_like(X)
    before, after = (size - 1) // 2, size // 2
    for ch in range(C):
        lo, hi = max(0, ch - before), min(C - 1, ch + after)
        sq[:, ch] = (X[:, lo:hi + 1] ** 2).sum(axis=1)
    den = (bias + alpha / size * sq) ** beta
    return X / den, np.abs(X) / den


def lrn_case(dt, shape, size, alpha=None, beta=None, bias=None, torch_check=False):
    attrs = {"size": size}
    for k, v in (("alpha", alpha), ("beta", beta), ("bias", bias)):
        if v is not None:
            attrs[k] = v
    a, bt, bs = alpha if alpha is not None else 1e-4, beta if beta is not None else 0.75, \
        bias if bias is not None else 1.0
    name = "lrn %s %s %s" % (dt, shp(shape), " ".join("%s=%s" % kv for kv in attrs.items()))

    def build():
        x, xv = make_input(rng_for(name), dt, shape)
        y, sc = lrn_ref(xv, size, a, bt, bs)
        if torch_check and dt in ("f32", "f64") and np.asarray(xv).size:
            torch = torch_mod()
            t = torch.nn.functional.local_response_norm(torch.from_numpy(f64(xv)), size, a, bt, bs).numpy()
            if not np.allclose(t, y, rtol=1e-12, atol=1e-12):
                raise AssertionError("lrn oracle disagrees with PyTorch")
        tol = sum_tol(dt, size, sc)
        tol.r += 8 if dt != "bf16" else 0
        return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)}, "tol": tol}
    return Case(name, "lrn", attrs=attrs, build=build)


def lrn_cases():
    c = [lrn_case("f32", (2, 16, 5, 6), 5, torch_check=True),
         lrn_case("f32", (2, 7, 9), 3, alpha=0.5, beta=0.6, bias=2.0, torch_check=True),
         lrn_case("f32", (1, 6, 3, 4, 5), 1, alpha=0.1, torch_check=True),
         lrn_case("f32", (2, 5, 4, 4), 4, alpha=0.2, beta=1.0),  # even size: window c-1 .. c+2
         lrn_case("f32", (1, 3, 4), 11, alpha=0.3),  # window wider than the channels
         lrn_case("f32", (4, 8), 3, alpha=0.05),  # rank 2 (PyTorch needs rank 3)
         lrn_case("f32", (8, 96, 27, 27), 5, alpha=1e-4, beta=0.75, bias=2.0, torch_check=True),  # AlexNet
         lrn_case("f64", (2, 9, 5, 5), 5, alpha=0.01, torch_check=True),
         lrn_case("f16", (2, 8, 4, 4), 3, alpha=0.1),
         lrn_case("bf16", (2, 8, 4, 4), 5, alpha=0.1),
         lrn_case("f32", (0, 4, 3, 3), 3),
         lrn_case("f32", (2, 0, 3, 3), 3)]
    return c


# ---------------------------------------------------------------- lp_pool


def lp_ref(x, p, k, s, d, pb, out):
    """(sum |x|^p over the window cells inside the input)^(1/p), float64."""
    sp = len(k)
    X = np.abs(f64(x)) ** p
    Xp = np.pad(X, [(0, 0), (0, 0)] + [(0, 1)] * sp)
    idx = []
    for i in range(sp):
        n = x.shape[2 + i]
        pos = np.arange(out[i])[:, None] * s[i] - pb[i] + np.arange(k[i])[None, :] * d[i]
        shape = [1] * (2 * sp)
        shape[2 * i], shape[2 * i + 1] = out[i], k[i]
        idx.append(np.where((pos >= 0) & (pos < n), pos, n).reshape(shape))
    W = Xp[(slice(None), slice(None)) + tuple(idx)]
    return W.sum(axis=tuple(3 + 2 * i for i in range(sp))) ** (1.0 / p)


def lp_case(dt, shape, k, s=None, d=None, pads=None, p=None, ceil_mode=0, auto_pad="NOTSET", torch_check=False,
            label="", input_fn=None):
    sp = len(k)
    attrs = {"kernel_shape": list(k)}
    for key, v in (("strides", s), ("dilations", d), ("pads", pads), ("p", p)):
        if v is not None:
            attrs[key] = v
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if auto_pad != "NOTSET":
        attrs["auto_pad"] = auto_pad
    name = "lp_pool %s %s %s%s" % (dt, shp(shape), " ".join("%s=%s" % kv for kv in attrs.items()),
                                   " " + label if label else "")
    pw = p if p is not None else 2

    def build():
        rng = rng_for(name)
        x, xv = input_fn(rng) if input_fn else make_input(rng, dt, shape)
        ss, dd = s or [1] * sp, d or [1] * sp
        out, pb, pe = pool_geometry(shape[2:], k, ss, dd, pads, ceil_mode, auto_pad)
        y = lp_ref(xv, pw, k, ss, dd, pb, out)
        if torch_check:
            torch = torch_mod()
            fn = {1: torch.nn.functional.lp_pool1d, 2: torch.nn.functional.lp_pool2d}[sp]
            t = fn(torch.from_numpy(f64(xv)), float(pw), k if sp > 1 else k[0], stride=ss if sp > 1 else ss[0],
                   ceil_mode=bool(ceil_mode)).numpy()
            if t.shape != y.shape or not np.allclose(t, y, rtol=1e-10, atol=1e-12):
                raise AssertionError("lp_pool oracle disagrees with PyTorch")
        kvol = int(np.prod(k))
        # the sum of |x|^p is exact to 2 eps per term; the root divides the relative error by p
        return {"inputs": [("x", x, dt)], "expect": {"y": to_out(y, dt)},
                "tol": sum_tol(dt, kvol, np.abs(y) * (pw + 1))}
    return Case(name, "lp_pool", attrs=attrs, build=build)


def lp_cases():
    c = [lp_case("f32", (2, 3, 8, 9), [2, 2], [2, 2], torch_check=True),
         # PyTorch scales a partial ceil_mode window by the whole kernel size: no cross-check
         lp_case("f32", (2, 3, 10, 11), [3, 3], [2, 2], ceil_mode=1),
         lp_case("f32", (2, 3, 20), [3], [2], torch_check=True),
         lp_case("f32", (2, 3, 9, 10), [3, 3], [2, 2], pads=[1, 0, 2, 1], p=1),
         lp_case("f32", (2, 3, 9, 10), [3, 2], [1, 2], pads=[1, 1, 1, 1], p=3),
         lp_case("f32", (1, 2, 12, 13), [3, 3], [1, 2], d=[2, 3], ceil_mode=1),
         lp_case("f32", (1, 2, 7, 9), [3, 3], [2, 2], auto_pad="SAME_UPPER"),
         lp_case("f32", (1, 2, 8, 9), [2, 4], [3, 2], auto_pad="SAME_LOWER", p=4),
         lp_case("f32", (1, 2, 7, 10), [3, 3], [2, 2], auto_pad="VALID", ceil_mode=1),
         lp_case("f32", (1, 2, 5, 6, 7), [2, 2, 2], [2, 2, 2], pads=[1, 0, 0, 0, 1, 1], ceil_mode=1),
         lp_case("f32", (4, 64, 28, 28), [3, 3], [2, 2], pads=[1, 1, 1, 1]),
         lp_case("f64", (2, 3, 10, 9), [3, 3], [2, 2], pads=[1, 1, 1, 1], p=3),
         lp_case("f16", (2, 3, 12, 11), [3, 3], [2, 2], pads=[1, 1, 1, 1]),
         lp_case("bf16", (2, 3, 12, 11), [2, 3], [2, 2], p=1),
         lp_case("f32", (0, 3, 8, 8), [2, 2], [2, 2]),
         lp_case("f32", (1, 2, 2), [2], [1], d=[3], pads=[1, 1], label="all-padding window")]

    def positive(rng):
        x = np.abs(rng.standard_normal((2, 3, 9, 8))).astype(np.float32)
        return x, x
    c.append(lp_case("f32", (2, 3, 9, 8), [3, 2], [2, 2], p=3, torch_check=True, input_fn=positive))
    x = np.array([[[[1, -2, 3], [-4, 5, -6], [7, -8, 9]]]], np.float32)
    c.append(Case("lp_pool f32 p=2 2x2 worked example", "lp_pool", inputs=[("x", x)],
                  attrs={"kernel_shape": [2, 2]},
                  expect={"y": np.sqrt(np.array([[[[1 + 4 + 16 + 25, 4 + 9 + 25 + 36],
                                                   [16 + 25 + 49 + 64, 25 + 36 + 64 + 81]]]], np.float32))},
                  tol=Tol(r=2)))
    return c


# ---------------------------------------------------------------- grid_sample


def _gs_reflect(x, lo, hi):
    """onnx/reference/ops/op_grid_sample.py _gs_reflect."""
    rng = hi - lo
    if x < lo:
        dx = lo - x
        n = int(dx / rng)
        r = dx - n * rng
        return lo + r if n % 2 == 0 else hi - r
    if x > hi:
        dx = x - hi
        n = int(dx / rng)
        r = dx - n * rng
        return hi - r if n % 2 == 0 else lo + r
    return x


def _gs_cubic(t, A=-0.75):
    t = abs(t)
    return [((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
            ((A + 2) * t - (A + 3)) * t * t + 1,
            ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
            ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A]


def grid_sample_onnx(x, grid, mode, padding, ac):
    """The ONNX reference's GridSample for 4-D x, in float64, one output at a time: the
    coordinate rounded (nearest), then clamped or reflected when outside the borders,
    then every cell read clamped, reflected or zero."""
    N, C, H, W = x.shape
    dims = (H, W)
    lo = [0.0 if ac else -0.5] * 2
    hi = [d - 1.0 if ac else d - 0.5 for d in dims]
    y = np.zeros((N, C) + grid.shape[1:3])

    def pixel(plane, idx):
        for k in range(2):
            i = idx[k]
            if padding == "zeros":
                if i < 0 or i >= dims[k]:
                    return 0.0
            elif padding == "border":
                idx[k] = min(max(i, 0), dims[k] - 1)
            else:
                idx[k] = int(_gs_reflect(i, lo[k], hi[k]))
        return plane[idx[0], idx[1]]

    for n in range(N):
        for oh in range(grid.shape[1]):
            for ow in range(grid.shape[2]):
                g = grid[n, oh, ow][::-1]
                v = [(g[k] + 1) / 2 * (dims[k] - 1) if ac else ((g[k] + 1) * dims[k] - 1) / 2 for k in range(2)]
                if mode == "nearest":
                    v = [float(np.rint(t)) for t in v]
                for k in range(2):
                    if v[k] < lo[k] or v[k] > hi[k]:
                        if padding == "border":
                            v[k] = min(max(v[k], 0), dims[k] - 1)
                        elif padding == "reflection":
                            v[k] = _gs_reflect(v[k], lo[k], hi[k])
                if mode == "nearest":
                    taps = [[(int(t), 1.0)] for t in v]
                elif mode == "bilinear":
                    taps = [[(math.floor(t), 1 - (t - math.floor(t))), (math.floor(t) + 1, t - math.floor(t))] for t in v]
                else:
                    taps = [list(zip(range(math.floor(t) - 1, math.floor(t) + 3), _gs_cubic(t - math.floor(t))))
                            for t in v]
                for c in range(C):
                    y[n, c, oh, ow] = sum(wa * wb * pixel(x[n, c], [ia, ib]) for ia, wa in taps[0] for ib, wb in taps[1])
    return y


def grid_onnx_case(dt, xs, os, mode, padding, ac, lo=-1.7, hi=1.7):
    """Cases where PyTorch differs (bicubic with border or reflection, coordinates outside):
    the oracle is the port of the ONNX reference above, itself checked against PyTorch on
    coordinates inside."""
    name = "grid_sample %s %s->%s mode=%s padding_mode=%s align_corners=%d onnx reference" % (
        dt, shp(xs), shp(os), mode, padding, ac)

    def build():
        rng = rng_for(name)
        x, xv = make_input(rng, dt, xs)
        g = rng.uniform(lo, hi, (xs[0],) + tuple(os) + (2,)).astype(NP[dt])
        inside = rng.uniform(-1, 1, g.shape)
        torch = torch_mod()
        t = torch.nn.functional.grid_sample(torch.from_numpy(f64(xv)), torch.from_numpy(inside), mode=mode,
                                            padding_mode=padding, align_corners=bool(ac)).numpy()
        if not np.allclose(t, grid_sample_onnx(f64(xv), inside, mode, padding, ac), rtol=1e-12, atol=1e-12):
            raise AssertionError("the ONNX GridSample port disagrees with PyTorch inside the input")
        y = grid_sample_onnx(f64(xv), f64(g), mode, padding, ac)
        sc = np.abs(y) + 2.25 * np.abs(f64(xv)).max()
        return {"inputs": [("x", x, dt), ("grid", g, dt)], "expect": {"y": to_out(y, dt)},
                "tol": sum_tol(dt, 16, sc)}
    return Case(name, "grid_sample", attrs={"mode": mode, "padding_mode": padding, "align_corners": ac},
                build=build)


def grid_case(dt, xs, os, mode="bilinear", padding="zeros", ac=0, lo=-1.2, hi=1.2, label="", onnx_mode=None):
    r = len(xs) - 2
    attrs = {"mode": onnx_mode or mode, "padding_mode": padding, "align_corners": ac}
    name = "grid_sample %s %s->%s mode=%s padding_mode=%s align_corners=%d%s" % (
        dt, shp(xs), shp(os), attrs["mode"], padding, ac, " " + label if label else "")

    def build():
        rng = rng_for(name)
        x, xv = make_input(rng, dt, xs)
        gshape = (xs[0],) + tuple(os) + (r,)
        g = rng.uniform(lo, hi, gshape)
        if dt == "bf16":
            g = g.astype(np.float32)
            gv = bf16_round(g)
        else:
            g = g.astype(NP[dt])
            gv = g
        torch = torch_mod()
        F = torch.nn.functional
        X, G = torch.from_numpy(f64(xv)), torch.from_numpy(f64(gv))
        y = F.grid_sample(X, G, mode=mode, padding_mode=padding, align_corners=bool(ac)).numpy() \
            if X.numel() and G.numel() else np.zeros(tuple(xs[:2]) + tuple(os))
        ya = F.grid_sample(X.abs(), G, mode=mode, padding_mode=padding, align_corners=bool(ac)).numpy() \
            if X.numel() and G.numel() else y
        if mode == "bicubic":  # |weights| sum to at most 1.5 per axis
            ya = np.abs(y) + 2.25 * np.abs(X).max().item() if X.numel() else y
        cells = {"nearest": 1, "bilinear": 2 ** r, "bicubic": 4 ** r}[mode]
        return {"inputs": [("x", x, dt), ("grid", g, dt)], "expect": {"y": to_out(y, dt)},
                "tol": sum_tol(dt, cells, ya)}
    return Case(name, "grid_sample", attrs=attrs, build=build)


def grid_cases():
    c = []
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                inside = mode == "bicubic" and padding != "zeros"
                lo, hi = (-1.0, 1.0) if inside else (-1.3, 1.3)
                c.append(grid_case("f32", (2, 3, 5, 6), (4, 7), mode, padding, ac, lo, hi))
                if mode != "bicubic":
                    c.append(grid_case("f32", (1, 2, 4, 5, 3), (3, 2, 4), mode, padding, ac, lo, hi))
    # far outside the input: reflection repeats, border clamps, zeros reads nothing
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            c.append(grid_case("f32", (1, 2, 4, 5), (6, 6), mode, padding, 0, -5.0, 5.0, label="far"))
    c.append(grid_case("f32", (1, 2, 4, 5), (6, 6), "bicubic", "zeros", 1, -3.0, 3.0, label="far"))
    # bicubic with border and reflection outside the input: the ONNX reference's rule
    for padding in ("border", "reflection"):
        for ac in (0, 1):
            c.append(grid_onnx_case("f32", (1, 2, 4, 5), (5, 6), "bicubic", padding, ac))
    c.append(grid_onnx_case("f64", (2, 1, 3, 4), (3, 3), "bicubic", "reflection", 0, -4.0, 4.0))
    c.append(grid_onnx_case("f32", (1, 2, 4, 5), (5, 6), "nearest", "reflection", 0, -3.0, 3.0))
    c.append(grid_onnx_case("f32", (1, 2, 4, 5), (5, 6), "bilinear", "reflection", 1, -3.0, 3.0))
    # the ONNX opset 20 names of the modes
    c.append(grid_case("f32", (1, 2, 4, 5), (3, 3), "bilinear", onnx_mode="linear"))
    c.append(grid_case("f32", (1, 2, 4, 5), (3, 3), "bicubic", onnx_mode="cubic"))
    # a single cell, dtypes, empty, realistic
    c.append(grid_case("f32", (1, 1, 1, 1), (2, 3), "bilinear", "reflection", 1))
    c.append(grid_case("f32", (1, 1, 1, 1), (2, 3), "bilinear", "border", 0))
    c.append(grid_case("f64", (2, 3, 5, 6), (4, 7), "bicubic", "zeros", 0))
    c.append(grid_case("f64", (1, 2, 3, 4, 5), (2, 3, 4), "bilinear", "reflection", 0))
    c.append(grid_case("f16", (2, 3, 5, 6), (4, 7), "bilinear", "zeros", 0))
    c.append(grid_case("bf16", (2, 3, 5, 6), (4, 7), "nearest", "border", 1))
    c.append(grid_case("f32", (0, 3, 5, 6), (4, 7)))
    c.append(grid_case("f32", (2, 3, 5, 6), (0, 7)))
    c.append(grid_case("f32", (4, 32, 64, 64), (48, 80), "bilinear", "zeros", 0))
    # a NaN coordinate gives NaN (the reference has no value for it)
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    g = np.array([[[[0.0, 0.0], [np.nan, 0.0], [-1.0, -1.0]]]], np.float32)
    c.append(Case("grid_sample f32 NaN coordinate gives NaN", "grid_sample", inputs=[("x", x), ("grid", g)],
                  attrs={"align_corners": 1}, expect={"y": np.array([[[[2.5, np.nan, 0.0]]]], np.float32)},
                  tol=Tol(r=2)))
    return c


# ---------------------------------------------------------------- inference errors


def error_cases():
    c = []
    x4 = np.zeros((1, 8, 4, 6), np.float32)
    g4 = np.zeros((1, 3, 3, 2), np.float32)
    bad = [
        ("depth_to_space", [x4], {"blocksize": 0}, r"'blocksize' is 0; expected 1 to 2\^31"),
        ("depth_to_space", [x4], {"blocksize": 2, "mode": "XYZ"}, r"'mode': unknown value 'XYZ' \(expected DCR or CRD\)"),
        ("depth_to_space", [x4], {"blocksize": 3}, r"channels 8 are not a multiple of blocksize\^2 = 9"),
        ("depth_to_space", [x4[0]], {"blocksize": 2}, r"needs rank 4"),
        ("depth_to_space", [x4], {}, r"blocksize"),
        ("space_to_depth", [x4], {"blocksize": 4}, r"spatial sizes 4 x 6 are not multiples of blocksize 4"),
        ("space_to_depth", [x4], {"blocksize": -1}, r"'blocksize' is -1"),
        ("lrn", [x4], {"size": 0}, r"'size' is 0; expected 1"),
        ("lrn", [x4], {}, r"size"),
        ("lrn", [np.zeros(3, np.float32)], {"size": 3}, r"needs rank 2 or more"),
        ("lrn", [x4.astype(np.int32)], {"size": 3}, r"i32"),
        ("lp_pool", [x4], {"kernel_shape": [2, 2], "p": 0}, r"'p' is 0; expected 1 to 1024"),
        ("lp_pool", [x4], {"kernel_shape": [3]}, r"'kernel_shape' \[3\] has 1 values; expected 2"),
        ("lp_pool", [x4], {"kernel_shape": [2, 2], "auto_pad": "SAME"}, r"auto_pad': unknown value 'SAME'"),
        ("grid_sample", [x4, g4], {"mode": "area"},
         r"'mode': unknown value 'area' \(expected nearest, bilinear, bicubic, linear or cubic\)"),
        ("grid_sample", [x4, g4], {"padding_mode": "wrap"},
         r"'padding_mode': unknown value 'wrap' \(expected zeros, border or reflection\)"),
        ("grid_sample", [x4, g4], {"align_corners": 2}, r"'align_corners' must be 0 or 1 \(got 2\)"),
        ("grid_sample", [x4, np.zeros((1, 3, 3, 3), np.float32)], {}, r"grid 'x1' has shape \[1,3,3,3\]"),
        ("grid_sample", [x4, np.zeros((2, 3, 3, 2), np.float32)], {}, r"must be \[1, O1, O2, 2\]"),
        ("grid_sample", [x4, g4.astype(np.float64)], {}, r"grid 'x1' has dtype f64"),
        ("grid_sample", [np.zeros((1, 1, 1, 1, 1, 1), np.float32), np.zeros((1, 1, 1, 1, 1, 4), np.float32)], {},
         r"needs rank 3, 4 or 5"),
        ("grid_sample", [np.zeros((1, 2, 0, 3), np.float32), g4], {}, r"empty spatial axis 2"),
        ("resize", [x4], {"scales": [1, 1, 2, 2], "mode": "cubic", "exclude_outside": 2},
         r"'exclude_outside' is 2; expected 0 or 1"),
    ]
    for k, (op, xs, attrs, pat) in enumerate(bad):
        label = "%s invalid %d: %s" % (op, k, " ".join("%s=%s" % kv for kv in attrs.items()) or "no attributes")
        c.append(Case(label + ": exit 3", op, inputs=[("x%d" % i, x) for i, x in enumerate(xs)], attrs=attrs,
                      exit_code=3, node_name="img", stderr_re=[r"node 'img' \(%s\)" % op, pat]))
    return c


def cases():
    return depth_space_cases() + lrn_cases() + lp_cases() + grid_cases() + error_cases()
