"""f16 and bf16 through the ops that compute in f32 (man/ftrun-graph.5, NUMERICS: "f16 and bf16 arithmetic is done in f32 and
each result rounded to nearest even"; sums and matrix products accumulate in at least f32).

Oracle: the exact result in float64 from the 16-bit input values, rounded once to the
16-bit type (bf16 travels as an f32 .npy holding bf16 values).  ftrun rounds an f32
result once, so the two may differ by one unit in the last place of the 16-bit type when
the f32 result and the float64 one straddle a rounding boundary: the tolerance is one
16-bit ulp relative (f16: 2^-10, bf16: 2^-7) plus, for sums, the f32 accumulation error
(far below that ulp).  The long reductions check that accumulation does not drift: a sum
of 200,000 f16 values accumulated in f16 would be off by far more than one ulp."""
import math

import numpy as np

from harness import Case, Tol, rng_for

F32_EPS = float(np.finfo(np.float32).eps)
F16_EPS = float(np.finfo(np.float16).eps)


def bf16_round(v):
    """float64 -> nearest-even bf16 value, as float32 (NaN kept)."""
    f = np.asarray(v, dtype=np.float64).astype(np.float32)
    b = f.view(np.uint32).astype(np.int64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    out = (r & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), np.float32("nan"), out).astype(np.float32)


def store(dt, v):
    v = np.asarray(v, dtype=np.float64)
    return v.astype(np.float16) if dt == "f16" else bf16_round(v)


def tol(dt, scale=1.0, terms=1):
    # one 16-bit ulp relative; f32 accumulation error relative to the sum of |terms|
    if dt == "f16":
        return Tol(r=1.0 + 1e-3, a=(4 * math.sqrt(terms) + 2) * F32_EPS / F16_EPS, scale=scale)
    return Tol(r=2.0 ** -7 / F32_EPS * 1.001, a=(4 * math.sqrt(terms) + 2), scale=scale)


def inp(dt, rng, shape, lo=-3.0, hi=3.0):
    return store(dt, rng.uniform(lo, hi, size=shape))


def erf(v):
    return np.vectorize(math.erf)(v)


UNARY = {
    "exp": np.exp, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "sqrt": np.sqrt,
    "relu": lambda x: np.maximum(x, 0), "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "log": np.log, "silu": lambda x: x / (1 + np.exp(-x)), "thresholded_relu": lambda x: np.where(x > 1.0, x, 0.0),
    "swish": lambda x: x / (1 + np.exp(-x)), "shrink": lambda x: np.where(np.abs(x) > 0.5, x, 0.0),
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
}


def cases():
    out = []
    for dt in ("f16", "bf16"):
        decl = dt
        for op, fn in UNARY.items():
            name = "%s %s 64x256" % (op, dt)
            rng = rng_for(name)
            lo = 0.01 if op in ("sqrt", "log") else -4.0
            x = inp(dt, rng, (64, 256), lo, 4.0)
            with np.errstate(invalid="ignore", divide="ignore"):  # asin(2) is NaN, atanh(1) inf
                y = store(dt, fn(x.astype(np.float64)))
            out.append(Case(name, op, [("x", x, decl)], expect={"y": y},
                            tol=tol(dt, scale=np.abs(y).astype(np.float64) * 0 + 1e-30)))
        for op, fn in {"add": np.add, "mul": np.multiply, "div": np.divide, "sub": np.subtract}.items():
            name = "%s %s broadcast [32,1,64]&[16,1]" % (op, dt)
            rng = rng_for(name)
            a, b = inp(dt, rng, (32, 1, 64)), inp(dt, rng, (16, 1), 0.5, 3.0)
            y = store(dt, fn(a.astype(np.float64), b.astype(np.float64)))
            out.append(Case(name, op, [("a", a, decl), ("b", b, decl)], expect={"y": y}, tol=tol(dt, 1e-30)))
        # long reductions: accumulation must not drift
        for n in (200000,):
            name = "reduce_sum %s %d values" % (dt, n)
            rng = rng_for(name)
            x = inp(dt, rng, (n,), 0.0, 0.6)  # sum ~60000: below f16's max 65504
            s = np.sum(x.astype(np.float64))
            out.append(Case(name, "reduce_sum", [("x", x, decl)], attrs={"keepdims": 0},
                            expect={"y": store(dt, s)}, tol=tol(dt, scale=s, terms=n)))
            name = "reduce_mean %s %d values" % (dt, n)
            m = np.mean(x.astype(np.float64))
            out.append(Case(name, "reduce_mean", [("x", x, decl)], attrs={"keepdims": 0},
                            expect={"y": store(dt, m)}, tol=tol(dt, scale=m, terms=n)))
        name = "reduce_sum %s rows 256x4096 axis 1" % dt
        rng = rng_for(name)
        x = inp(dt, rng, (256, 4096), -1.0, 1.0)
        x64 = x.astype(np.float64)
        out.append(Case(name, "reduce_sum", [("x", x, decl)], attrs={"axes": [1]},
                        expect={"y": store(dt, x64.sum(axis=1, keepdims=True))},
                        tol=tol(dt, scale=np.abs(x64).sum(axis=1, keepdims=True), terms=4096)))
        name = "matmul %s [128,512]x[512,64]" % dt
        rng = rng_for(name)
        a, b = inp(dt, rng, (128, 512), -1, 1), inp(dt, rng, (512, 64), -1, 1)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        out.append(Case(name, "matmul", [("a", a, decl), ("b", b, decl)], expect={"y": store(dt, a64 @ b64)},
                        tol=tol(dt, scale=np.abs(a64) @ np.abs(b64), terms=512)))
        name = "softmax %s 32x1000" % dt
        rng = rng_for(name)
        x = inp(dt, rng, (32, 1000), -8, 8)
        x64 = x.astype(np.float64)
        e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
        y = e / e.sum(axis=-1, keepdims=True)
        out.append(Case(name, "softmax", [("x", x, decl)], expect={"y": store(dt, y)}, tol=tol(dt, scale=y, terms=64)))
        name = "layer_norm %s 16x768 scale bias" % dt
        rng = rng_for(name)
        x, sc, bi = inp(dt, rng, (16, 768)), inp(dt, rng, (768,), 0.5, 1.5), inp(dt, rng, (768,), -0.5, 0.5)
        x64 = x.astype(np.float64)
        mu = x64.mean(axis=-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(axis=-1, keepdims=True)
        y = (x64 - mu) / np.sqrt(var + 1e-5) * sc.astype(np.float64) + bi.astype(np.float64)
        out.append(Case(name, "layer_norm", [("x", x, decl), ("scale", sc, decl), ("bias", bi, decl)],
                        expect={"y": store(dt, y)}, tol=tol(dt, scale=np.abs(y) + 4, terms=768)))
        name = "cumsum %s 8x3000 axis 1" % dt
        rng = rng_for(name)
        x = inp(dt, rng, (8, 3000), 0, 1)
        x64 = x.astype(np.float64)
        c = np.cumsum(x64, axis=1)
        out.append(Case(name, "cumsum", [("x", x, decl)], attrs={"axis": 1}, expect={"y": store(dt, c)},
                        tol=tol(dt, scale=c, terms=3000)))
    return out
