"""Numeric cases of the elementwise ops: one-input ops, cast, broadcasting ops, where.
Expectations are computed here with NumPy (in float64 from the exact inputs, then
rounded to the output dtype), never from ftrun's output."""
import math

import numpy as np

from harness import ALL, BASIC, EXACT, FLOATS, INTS, MATH, NP, NUMS, SINTS, Case, Tol, rng_for

ERF = np.vectorize(math.erf, otypes=[np.float64])
NAN, INF = float("nan"), float("inf")
SELU_A, SELU_G = 1.6732632, 1.0507010


def f64(x):
    return np.asarray(x, dtype=np.float64)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0.0, x)  # exact formulation in double, no overflow


# name -> (oracle on float64, tolerance, attrs, extra special values, input scale)
# Special values always include NaN, +-0 and a few halves; "infs" lists the infinities
# whose result is unambiguous for the op (e.g. silu(-inf) = -inf * 0 has no IEEE value).
def _unary_table():
    P, N = [INF], [-INF]
    t = {
        "relu": (lambda x: np.maximum(x, 0.0), EXACT, None, P + N, 3),
        "sigmoid": (sigmoid, MATH, None, P + N + [-90.0, -100.0, -110.0, 90.0, 1e-40, -1e-40], 6),
        "tanh": (np.tanh, MATH, None, P + N + [10.0, -10.0, 50.0, 0.625, -0.625, 0.62499994, 1e-40, -1e-40, 1e-30], 3),
        "exp": (np.exp, MATH, None, P + N + [80.0, -80.0, 88.72, 88.73, 100.0, -88.0, -95.0, -103.0, -104.0, -110.0,
                                            1e-40, -1e-40], 5),
        "log": (np.log, MATH, None, P + N + [1e-30, 1e30, -1.0], 0),
        "sqrt": (np.sqrt, BASIC, None, P + N + [1e-30, 1e30, -1.0], 0),
        "rsqrt": (lambda x: 1.0 / np.sqrt(x), Tol(r=4), None, P + N + [1e-30, 1e30, -1.0], 0),
        "reciprocal": (lambda x: 1.0 / x, BASIC, None, P + N + [1e-30, -1e30], 3),
        "sin": (np.sin, Tol(r=8, a=2, r64=1e-12, a64=1e-15), None, P + N + [1e4, -3e4, 3.14159265], 10),
        "cos": (np.cos, Tol(r=8, a=2, r64=1e-12, a64=1e-15), None, P + N + [1e4, -3e4, 1.57079633], 10),
        "erf": (ERF, MATH, None, P + N + [1e-8, -6.0], 2),
        "floor": (np.floor, EXACT, None, P + N + [2.5, -2.5, 1e10, -0.2], 5),
        "ceil": (np.ceil, EXACT, None, P + N + [2.5, -2.5, 1e10, -0.2], 5),
        "round": (np.round, EXACT, None, P + N + [2.5, -2.5, 3.5, -3.5, 0.49999997, 1e10 + 0.5, 4503599627370497.0], 5),
        "softplus": (softplus, Tol(r=8, a=2, r64=1e-12, a64=1e-16), None, P + N, 5),
        "softsign": (lambda x: x / (1.0 + np.abs(x)), Tol(r=3), None, [], 5),
        "silu": (lambda x: x * sigmoid(x), MATH, None, P + [-50.0, -95.0, -105.0, -130.0, 100.0, 1e-40, -1e-40], 5),
        "mish": (lambda x: x * np.tanh(softplus(x)), "absx", None, P, 5),
        "hard_swish": (lambda x: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0), "absx", None, P + [3.0, -3.0], 5),
        "leaky_relu": (lambda x: np.where(x >= 0, x, 0.01 * x), BASIC, None, P + N, 3),
        "leaky_relu alpha=0.2": (lambda x: np.where(x >= 0, x, 0.2 * x), BASIC, {"alpha": 0.2}, P + N, 3),
        "elu": (lambda x: np.where(x > 0, x, np.expm1(x)), Tol(r=8, a=4, r64=1e-12, a64=1e-15), None, P + N + [-1e-5], 3),
        "elu alpha=0.5": (lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), Tol(r=8, a=4, r64=1e-12, a64=1e-15), {"alpha": 0.5}, P + N, 3),
        "celu": (lambda x: np.maximum(x, 0) + np.minimum(0, np.expm1(x)), Tol(r=8, a=4, r64=1e-12, a64=1e-15), None, P + N, 3),
        "celu alpha=2": (lambda x: np.maximum(x, 0) + np.minimum(0, 2.0 * np.expm1(x / 2.0)),
                         Tol(r=8, a=8, r64=1e-12, a64=1e-15), {"alpha": 2.0}, P + N, 3),
        "selu": (lambda x: SELU_G * np.where(x > 0, x, SELU_A * np.expm1(x)), Tol(r=8, a=8, r64=1e-12, a64=1e-15), None, P + N, 3),
        "hard_sigmoid": (lambda x: np.clip(0.2 * x + 0.5, 0, 1), Tol(r=2, a=2), None, P + N + [-2.5, 2.5], 4),
        "hard_sigmoid alpha=0.25 beta=0.4": (lambda x: np.clip(0.25 * x + 0.4, 0, 1), Tol(r=2, a=2),
                                             {"alpha": 0.25, "beta": 0.4}, P + N, 4),
        "thresholded_relu": (lambda x: np.where(x > 1.0, x, 0.0), EXACT, None, P + N + [1.0, 1.0000001, -1.0], 3),
        "thresholded_relu alpha=-0.5": (lambda x: np.where(x > -0.5, x, 0.0), EXACT, {"alpha": -0.5},
                                        P + N + [-0.5, -0.49999997], 3),
        "shrink": (lambda x: np.where(x < -0.5, x, np.where(x > 0.5, x, 0.0)), EXACT, None, P + N + [0.5, -0.5], 3),
        "shrink bias=0.25 lambd=1.5": (lambda x: np.where(x < -1.5, x + 0.25, np.where(x > 1.5, x - 0.25, 0.0)),
                                       BASIC, {"bias": 0.25, "lambd": 1.5}, P + N + [1.5, -1.5, 1.5000001], 3),
        "swish": (lambda x: x * sigmoid(x), MATH, None, P + [-50.0, -95.0, -130.0, 100.0, 1e-40], 5),
        "swish alpha=0.5": (lambda x: x * sigmoid(0.5 * x), MATH, {"alpha": 0.5}, P, 5),
        # domain edges: asin/acos/atanh beyond [-1, 1] and acosh below 1 give NaN, atanh(+-1) = +-inf
        "tan": (np.tan, MATH, None, [1.5707964, -1.5707964, 1e4], 3),
        "asin": (np.arcsin, MATH, None, [1.0, -1.0, 1.0000001, -1.0000001] + P + N, 1),
        "acos": (np.arccos, MATH, None, [1.0, -1.0, 1.0000001, -1.0000001] + P + N, 1),
        "atan": (np.arctan, MATH, None, P + N + [1e30, -1e-30], 5),
        "sinh": (np.sinh, MATH, None, P + N + [89.0, -89.0, 1e-8], 4),
        "cosh": (np.cosh, MATH, None, P + N + [89.0, -89.0, 1e-8], 4),
        "asinh": (np.arcsinh, MATH, None, P + N + [1e30, -1e30, 1e-8], 5),
        "acosh": (np.arccosh, MATH, None, P + N + [1.0, 0.99999994, 1e30], 0),
        "atanh": (np.arctanh, MATH, None, [1.0, -1.0, 1.0000001, -0.99999994, 1e-8] + P + N, 1),
        "gelu": (lambda x: 0.5 * x * (1.0 + ERF(x / math.sqrt(2.0))), "absx", None, P, 4),
        "gelu approximate=tanh": (lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
                                  "absx", {"approximate": "tanh"}, P + [-10.0, -20.0, 10.0, -1e-40], 4),
        "clip": (lambda x: np.clip(x, -1.5, 2.25), EXACT, {"min": -1.5, "max": 2.25}, P + N + [-1.5, 2.25], 3),
        "clip min only": (lambda x: np.maximum(x, -0.5), EXACT, {"min": -0.5}, P + N, 3),
        "clip default": (lambda x: x, EXACT, None, P + N, 3),
        "is_nan": (np.isnan, EXACT, None, P + N, 3),
        "is_inf": (np.isinf, EXACT, None, P + N, 3),
        "neg": (np.negative, EXACT, None, P + N, 3),
        "abs": (np.abs, EXACT, None, P + N, 3),
        "sign": (np.sign, EXACT, None, P + N, 3),
        "identity": (lambda x: x, EXACT, None, P + N, 3),
    }
    return t


UNARY = _unary_table()
# Outputs whose absolute error legitimately scales with |x| (x * (1 + f(x)) with f -> -1).
ABSX = lambda x: Tol(r=8, a=8, scale=np.abs(x) + 1e-30, r64=1e-12, a64=1e-15)


def _float_input(rng, shape, dt, scale, specials):
    if scale == 0:  # positive-dominant inputs (log, sqrt)
        x = np.exp(rng.uniform(-8, 8, shape))
    else:
        x = rng.standard_normal(shape) * scale
    flat = x.reshape(-1)
    if flat.size > 64:
        sp = [NAN, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5] + list(specials)
        flat[:len(sp)] = sp
    with np.errstate(over="ignore"):
        return x.astype(dt)


def unary_cases():
    cases = []
    for label, (fn, tol, attrs, specials, scale) in UNARY.items():
        op = label.split()[0]
        for dt, shape, kind in (("f32", (256, 1024), ""), ("f64", (33, 65), ""), ("f32", (), " scalar"),
                                ("f64", (0, 5), " empty")):
            name = "%s %s %s%s" % (label, dt, "x".join(map(str, shape)) or "[]", kind)

            def build(fn=fn, tol=tol, dt=dt, shape=shape, specials=specials, scale=scale, name=name, op=op):
                rng = rng_for(name)
                x = _float_input(rng, shape, NP[dt], scale, specials)
                if op in ("round", "floor", "ceil") and x.size > 64:
                    # many exact halves and integers to exercise the ties
                    x.reshape(-1)[64:2064 if x.size > 2064 else x.size] = (
                        np.arange(-1000, 1000)[:max(0, min(2000, x.size - 64))] / 2.0)
                with np.errstate(all="ignore"):
                    y = fn(f64(x))
                    y = np.asarray(y).astype(np.bool_ if op in ("is_nan", "is_inf") else NP[dt])
                t = ABSX(f64(x)) if tol == "absx" else tol
                return {"inputs": [("x", x)], "expect": {"y": y}, "tol": t}
            cases.append(Case(name, op, attrs=attrs, build=build))
    # large arguments: softplus(x) ~ x must not overflow through exp(x); exp over/underflows
    for op, dt, lo, hi in (("softplus", "f32", -100.0, 100.0), ("softplus", "f64", -800.0, 800.0),
                           ("exp", "f32", -110.0, 95.0), ("exp", "f64", -760.0, 720.0),
                           ("tanh", "f32", -50.0, 50.0), ("sigmoid", "f64", -700.0, 700.0)):
        name = "%s %s large arguments [%g,%g]" % (op, dt, lo, hi)
        fn, tol = UNARY[op][0], UNARY[op][1]

        def build(fn=fn, tol=tol, dt=dt, lo=lo, hi=hi, name=name):
            x = rng_for(name).uniform(lo, hi, 4000).astype(NP[dt])
            with np.errstate(all="ignore"):
                y = fn(f64(x)).astype(NP[dt])
            return {"inputs": [("x", x)], "expect": {"y": y}, "tol": tol}
        cases.append(Case(name, op, build=build))
    # integer variants of the signed-int ops and of clip, identity of every dtype
    for dt in SINTS:
        for op, fn in (("neg", np.negative), ("abs", np.abs), ("sign", np.sign)):
            name = "%s %s 37x41 with min/max" % (op, dt)

            def build(dt=dt, fn=fn, name=name):
                info = np.iinfo(NP[dt])
                x = rng_for(name).integers(info.min, info.max, (37, 41), dtype=NP[dt], endpoint=True)
                x.reshape(-1)[:4] = [info.min, info.max, 0, -1]
                with np.errstate(all="ignore"):
                    return {"inputs": [("x", x)], "expect": {"y": fn(x)}}
            cases.append(Case(name, op, build=build))
    for dt in INTS:
        for lo, hi in ((-3.5, 100.7), (-1000.0, 1000.0), (2.0, 2.0)):
            name = "clip %s min=%g max=%g" % (dt, lo, hi)

            def build(dt=dt, lo=lo, hi=hi, name=name):
                info = np.iinfo(NP[dt])
                x = rng_for(name).integers(info.min, info.max, (300,), dtype=NP[dt], endpoint=True)
                b0 = min(max(math.ceil(lo), info.min), info.max)
                b1 = min(max(math.floor(hi), info.min), info.max)
                y = np.minimum(np.maximum(x.astype(np.int64), b0), b1).astype(NP[dt])
                return {"inputs": [("x", x)], "expect": {"y": y}}
            cases.append(Case(name, "clip", attrs={"min": lo, "max": hi}, build=build))
    for dt in ALL:
        for shape in ((64, 129), (), (3, 0)):
            name = "identity %s %s" % (dt, "x".join(map(str, shape)) or "[]")

            def build(dt=dt, shape=shape, name=name):
                x = random_of(rng_for(name), dt, shape)
                return {"inputs": [("x", x)], "expect": {"y": x.copy()}}
            cases.append(Case(name, "identity", build=build))
    for shape in ((17, 33), (), (0,)):
        name = "not bool %s" % ("x".join(map(str, shape)) or "[]")

        def build(shape=shape, name=name):
            x = rng_for(name).integers(0, 2, shape).astype(bool)
            return {"inputs": [("x", x)], "expect": {"y": ~x}}
        cases.append(Case(name, "not", build=build))
    return cases


def random_of(rng, dt, shape, full_range=True):
    """Random values of a dtype; ints over their whole range, floats with NaN/inf."""
    d = NP[dt]
    if d == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True) if full_range else \
            rng.integers(max(info.min, -50), min(info.max, 50), shape, dtype=d, endpoint=True)
    x = (rng.standard_normal(shape) * 10).astype(d)
    flat = x.reshape(-1)
    sp = [NAN, INF, -INF, -0.0][:flat.size]
    flat[:len(sp)] = sp
    return x


# ---------------------------------------------------------------- cast

def float_to_int(x, dt):
    """Decisions: truncate toward zero; NaN -> 0; +-inf and out of range saturate."""
    info = np.iinfo(dt)
    x = f64(x)
    t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=2.0 ** 64, neginf=-2.0 ** 64))
    hi, lo = t >= float(info.max), t <= float(info.min)
    out = np.zeros(x.shape, dtype=dt)
    mid = ~hi & ~lo
    out[hi], out[lo] = info.max, info.min
    out[mid] = t[mid].astype(dt)
    return out


def cast_expect(x, dst):
    d = NP[dst]
    if d == np.bool_:
        return x != 0  # NaN != 0 is True
    if x.dtype.kind == "f" and d.kind in "iu":
        return float_to_int(x, d)
    with np.errstate(all="ignore"):
        return x.astype(d)  # int->int wraps, anything->float rounds to nearest even


def cast_input(rng, src, shape=(40, 25)):
    d = NP[src]
    if d.kind == "f":
        v = np.concatenate([
                            [NAN, INF, -INF, 0.0, -0.0, 0.5, -0.5, 0.9999, -0.9999, 127.9, 128.0, -128.5,
                             -129.0, 255.5, 256.0, -1.0, 32767.5, 32768.0, -32769.0, 65504.0, 65520.0,
                             2147483647.0, 2147483648.0, -2147483649.0, 3e9, -3e9, 2.0 ** 63, -2.0 ** 63,
                             2.0 ** 64, -2.0 ** 64, 1e30, -1e30, 1e300, -1e300, 1e-40, 6.1e-5, 3.4e38, 4e38],
                            rng.standard_normal(500) * 100, rng.uniform(-3, 3, 200),
                            rng.standard_normal(100) * 1e5, rng.standard_normal(50) * 1e10,
                            rng.standard_normal(112) * 1e3])
        v = v[:int(np.prod(shape))] if v.size >= np.prod(shape) else np.resize(v, shape)
        with np.errstate(all="ignore"):
            return v.reshape(shape).astype(d)
    return random_of(rng, src, shape)


def cast_cases():
    cases = []
    base = list(FLOATS) + list(INTS) + ["bool"]
    pairs = [(s, d) for s in base for d in base] + [(s, "f16") for s in base] + [("f16", d) for d in base + ["f16"]]
    for src, dst in pairs:
        name = "cast %s to %s" % (src, dst)

        def build(src=src, dst=dst, name=name):
            x = cast_input(rng_for(name), src)
            return {"inputs": [("x", x)], "expect": {"y": cast_expect(x, dst)}}
        cases.append(Case(name, "cast", attrs={"to": dst}, build=build))
    for dst in ("i64", "f32", "bool"):
        for shape in ((), (0, 3)):
            name = "cast f64 to %s %s" % (dst, "x".join(map(str, shape)) or "[]")

            def build(dst=dst, shape=shape, name=name):
                x = np.full(shape, -7.75) if shape == () else np.zeros(shape)
                return {"inputs": [("x", x)], "expect": {"y": cast_expect(x, dst)}}
            cases.append(Case(name, "cast", attrs={"to": dst}, build=build))

    # f64 -> f16 must round once: 1 + 2^-11 + 2^-30 is above the f16 halfway point, but
    # rounding through f32 first lands exactly on it and ties to even (down).
    def build_dr():
        x = np.array([1 + 2.0 ** -11 + 2.0 ** -30, -(1 + 2.0 ** -11 + 2.0 ** -30), 1 + 2.0 ** -11, 65519.99, 65520.0])
        with np.errstate(over="ignore"):
            return {"inputs": [("x", x)], "expect": {"y": x.astype(np.float16)}}
    cases.append(Case("cast f64 to f16 rounds once (no double rounding)", "cast", attrs={"to": "f16"}, build=build_dr))

    # f32 -> bf16: the output is an f32 .npy holding the bf16 value (round to nearest even)
    def build_bf():
        x = cast_input(rng_for("bf16"), "f32", (30, 30))
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        y = np.where(np.isnan(x), np.float32(NAN), rounded.astype(np.uint32).view(np.float32))
        return {"inputs": [("x", x)], "expect": {"y": y.astype(np.float32)}}
    cases.append(Case("cast f32 to bf16 (f32 .npy, round to nearest even)", "cast", attrs={"to": "bf16"}, build=build_bf))

    # bitcast: the same bytes read as another dtype of the same size (NumPy's view),
    # NaNs, infinities and negative zero included
    special = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3.4e38, 1e-45])
    for src, dst in (("f32", "i32"), ("i32", "f32"), ("f64", "i64"), ("i64", "f64"), ("f16", "i16"), ("i16", "f16"),
                     ("i8", "u8"), ("u8", "i8"), ("bool", "u8"), ("bool", "i8"), ("f32", "f32")):
        name = "bitcast %s to %s" % (src, dst)

        def build(src=src, dst=dst, name=name):
            if src in ("f32", "f64", "f16"):
                with np.errstate(over="ignore"):
                    x = np.concatenate([special, rng_for(name).standard_normal(23) * 100]).astype(NP[src])
            elif src == "bool":
                x = rng_for(name).integers(0, 2, 17).astype(bool)
            else:
                info = np.iinfo(NP[src])
                x = rng_for(name).integers(info.min, info.max, 40, dtype=NP[src], endpoint=True)
                x[:2] = info.min, info.max
            return {"inputs": [("x", x.reshape(-1))], "expect": {"y": x.view(NP[dst])}}
        cases.append(Case(name, "bitcast", attrs={"to": dst}, build=build))
    cases.append(Case("bitcast f32 to i64 refused (element sizes differ)", "bitcast",
                      [("x", np.zeros(3, np.float32))], attrs={"to": "i64"}, exit_code=3,
                      stderr_re=r"bitcast keeps the element size"))
    return cases


# ---------------------------------------------------------------- broadcasting ops

SHAPES = {"bcast": ((4, 1, 5), (3, 1)), "big": ((256, 1024), (1024,)), "scalar-left": ((), (2, 3)),
          "scalar-right": ((6, 7), ()), "scalars": ((), ()), "empty": ((0, 3), (1, 3)),
          "4d": ((5, 1, 1, 2), (1, 4, 3, 1)), "same": ((33, 65), (33, 65))}


def wrap(v, dt):
    """Python ints (object array) wrapped to an int dtype (two's complement)."""
    bits = np.dtype(dt).itemsize * 8
    m = 1 << bits
    f = np.frompyfunc(lambda a: (int(a) % m) - (m if np.dtype(dt).kind == "i" and int(a) % m >= m // 2 else 0), 1, 1)
    return np.asarray(f(v), dtype=object).astype(dt) if np.size(v) else np.zeros(np.shape(v), dt)


def int_div(a, b, dt):
    def q(x, y):
        x, y = int(x), int(y)
        r = abs(x) // abs(y)
        return r if (x < 0) == (y < 0) else -r
    return wrap(np.frompyfunc(q, 2, 1)(a.astype(object), b.astype(object)), dt)


def int_mod(a, b, dt, fmod):
    def m(x, y):
        x, y = int(x), int(y)
        if not fmod:
            return x % y  # Python: sign of the divisor
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # C: truncated quotient
        return x - y * q
    return wrap(np.frompyfunc(m, 2, 1)(a.astype(object), b.astype(object)), dt)


def int_pow(a, b, dt):
    bits = np.dtype(dt).itemsize * 8

    def p(x, y):
        x, y = int(x), int(y)
        if y < 0:
            return 1 if x == 1 else ((1 if y % 2 == 0 else -1) if x == -1 else 0)
        return pow(x % (1 << bits), y, 1 << bits)
    return wrap(np.frompyfunc(p, 2, 1)(a.astype(object), b.astype(object)), dt)


def _operands(rng, op, dt, sa, sb):
    d = NP[dt]
    if d.kind == "f":
        if op == "pow":
            a = np.abs(rng.standard_normal(sa) * 3).astype(d)
            b = (rng.standard_normal(sb) * 2).astype(d)
            if a.size > 8:  # negative bases with integral exponents, and IEEE special cases
                a.reshape(-1)[:8] = [-2.0, -1.5, 0.0, -0.0, NAN, 1.0, INF, -3.0]
            if b.size > 8:
                b.reshape(-1)[:8] = [3.0, 2.0, -1.0, 3.0, 0.0, NAN, -2.0, 0.5]
            return a, b
        a = (rng.standard_normal(sa) * 10).astype(d)
        b = (rng.standard_normal(sb) * 10).astype(d)
        if op in ("equal", "less", "less_equal", "greater", "greater_equal", "max", "min"):
            a, b = np.round(a / 4).astype(d), np.round(b / 4).astype(d)  # ties
        for arr in (a, b):
            if arr.size > 6 and op not in ("mod0",):
                arr.reshape(-1)[:4] = [NAN, INF, -INF, 0.0] if arr is a else [1.0, -INF, 0.0, NAN]
        if op == "mod0":
            b = np.where(b == 0, 1.5, b).astype(d)
        return a, b
    info = np.iinfo(d)
    a = rng.integers(info.min, info.max, sa, dtype=d, endpoint=True)
    b = rng.integers(info.min, info.max, sb, dtype=d, endpoint=True)
    if op in ("div", "mod0", "mod1"):
        b = np.where(rng.random(sb) < 0.5, b, rng.integers(max(info.min, -9), min(info.max, 9), sb, endpoint=True)).astype(d)
        b[b == 0] = 3
        if d.kind == "i" and a.size > 2 and b.size > 2:  # INT_MIN / -1 wraps; INT_MIN % -1 == 0
            a.reshape(-1)[0], b.reshape(-1)[0] = info.min, -1
    if op == "pow":
        a = rng.integers(max(info.min, -7), min(info.max, 7), sa, dtype=d, endpoint=True)
        lo = -3 if d.kind == "i" else 0
        b = rng.integers(lo, min(info.max, 40), sb, dtype=d, endpoint=True)
    if op in ("equal", "less", "less_equal", "greater", "greater_equal", "max", "min"):
        b = np.where(rng.random(sb) < 0.3, b, rng.integers(max(info.min, -3), min(info.max, 3), sb, endpoint=True)).astype(d)
        a = np.where(rng.random(sa) < 0.3, a, rng.integers(max(info.min, -3), min(info.max, 3), sa, endpoint=True)).astype(d)
    return a, b


def binary_expect(op, a, b, dt):
    with np.errstate(all="ignore"):
        return _binary_expect(op, a, b, dt)


def _binary_expect(op, a, b, dt):
    d = NP[dt]
    if d.kind in "iu":
        if op in ("add", "sub", "mul"):
            return {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a, b)  # wraps
        if op == "div":
            return int_div(*np.broadcast_arrays(a, b), d)
        if op in ("mod0", "mod1"):
            return int_mod(*np.broadcast_arrays(a, b), d, op == "mod1")
        if op == "pow":
            return int_pow(*np.broadcast_arrays(a, b), d)
    A, B = f64(a), f64(b)
    if op in ("equal", "less", "less_equal", "greater", "greater_equal"):
        return {"equal": np.equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
                "greater_equal": np.greater_equal}[op](a, b)
    with np.errstate(all="ignore"):
        if op in ("max", "min"):
            return (np.maximum if op == "max" else np.minimum)(a, b)
        if op in ("mod0", "mod1"):
            return (np.remainder if op == "mod0" else np.fmod)(a, b)  # exact in the dtype itself
        r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power}[op](A, B)
        return r.astype(d)


BINARY_TOL = {"add": BASIC, "sub": BASIC, "mul": BASIC, "div": BASIC, "pow": MATH, "mod0": BASIC, "mod1": BASIC,
              "max": EXACT, "min": EXACT}


def binary_cases():
    cases = []
    ops = ["add", "sub", "mul", "div", "pow", "mod0", "mod1", "max", "min",
           "equal", "less", "less_equal", "greater", "greater_equal"]
    for op in ops:
        for dt in NUMS:
            kinds = ["bcast"]
            if dt == "f32":
                kinds += ["big", "scalar-left", "scalars", "empty", "4d"]
            elif dt == "f64":
                kinds += ["scalar-right", "same"]
            elif dt == "i32":
                kinds += ["scalar-left", "same"]
            elif dt == "i8":
                kinds += ["same"]
            for kind in kinds:
                sa, sb = SHAPES[kind]
                name = "%s %s %s %s&%s" % (op if not op.startswith("mod") else "mod fmod=" + op[3], dt, kind,
                                           list(sa), list(sb))

                def build(op=op, dt=dt, sa=sa, sb=sb, name=name):
                    a, b = _operands(rng_for(name), op, dt, sa, sb)
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": binary_expect(op, a, b, dt)},
                            "tol": BINARY_TOL.get(op, EXACT)}
                attrs = {"fmod": int(op[3])} if op.startswith("mod") else None
                cases.append(Case(name, op[:3] if op.startswith("mod") else op, attrs=attrs, build=build))
    # pow with an exponent of another dtype: the result has the base's dtype
    for bd, ed in (("f32", "i32"), ("f32", "f64"), ("f64", "f32"), ("f64", "i64"), ("i32", "i64"), ("i64", "i8"),
                   ("u8", "i32")):
        name = "pow base %s exponent %s" % (bd, ed)

        def build(bd=bd, ed=ed, name=name):
            rng = rng_for(name)
            if NP[bd].kind == "f":
                a = (rng.standard_normal((6, 9)) * 3).astype(NP[bd])
                b = rng.integers(-4, 6, (9,)).astype(NP[ed])
                with np.errstate(all="ignore"):
                    y = np.power(f64(a), f64(b)).astype(NP[bd])
            else:
                a = rng.integers(-5 if NP[bd].kind == "i" else 0, 6, (6, 9)).astype(NP[bd])
                b = rng.integers(0, 12, (9,)).astype(NP[ed])
                y = int_pow(*np.broadcast_arrays(a, b), NP[bd])
            return {"inputs": [("a", a), ("b", b)], "expect": {"y": y}, "tol": MATH}
        cases.append(Case(name, "pow", build=build))
    # max/min with one and three inputs
    for op, fn in (("max", np.maximum), ("min", np.minimum)):
        for dt in ("f32", "f64", "i8", "i64", "u8"):
            for shapes in (((4, 3, 5),), ((4, 1, 5), (3, 1), (5,)), ((2, 3), (2, 3), (2, 3))):
                name = "%s %s %d inputs %s" % (op, dt, len(shapes), "&".join(str(list(s)) for s in shapes))

                def build(fn=fn, dt=dt, shapes=shapes, name=name):
                    rng = rng_for(name)
                    xs = [random_of(rng, dt, s, full_range=False) for s in shapes]
                    y = xs[0]
                    with np.errstate(all="ignore"):
                        for x in xs[1:]:
                            y = fn(y, x)
                    y = np.broadcast_to(y, np.broadcast_shapes(*shapes)).copy()
                    return {"inputs": [("x%d" % i, x) for i, x in enumerate(xs)], "expect": {"y": y}}
                cases.append(Case(name, op, build=build))
    # equal on bool; and/or/xor
    for op, fn in (("equal", np.equal), ("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
        for sa, sb in (((4, 1, 5), (3, 1)), ((), (7,)), ((0, 2), (2,)), ((300, 301), (300, 301))):
            name = "%s bool %s&%s" % (op, list(sa), list(sb))

            def build(fn=fn, sa=sa, sb=sb, name=name):
                rng = rng_for(name)
                a, b = rng.integers(0, 2, sa).astype(bool), rng.integers(0, 2, sb).astype(bool)
                return {"inputs": [("a", a), ("b", b)], "expect": {"y": fn(a, b)}}
            cases.append(Case(name, op, build=build))
    # where, every value dtype
    for dt in ALL:
        # the last two: an attention mask over scores with one fill value, and the fill on the other side
        for shapes in (((4, 1, 5), (3, 1), (5,)), ((), (2, 2), ()), ((0, 3), (3,), (1, 3)),
                       ((2, 1, 37), (2, 3, 37), ()), ((3, 37), (), (3, 37))):
            name = "where %s %s" % (dt, "&".join(str(list(s)) for s in shapes))

            def build(dt=dt, shapes=shapes, name=name):
                rng = rng_for(name)
                c = rng.integers(0, 2, shapes[0]).astype(bool)
                a, b = random_of(rng, dt, shapes[1]), random_of(rng, dt, shapes[2])
                return {"inputs": [("c", c), ("a", a), ("b", b)], "expect": {"y": np.where(c, a, b)}}
            cases.append(Case(name, "where", build=build))

    def build_wbig():
        rng = rng_for("where big")
        c = rng.random((256, 1024)) < 0.5
        a, b = rng.standard_normal((256, 1024)).astype(np.float32), rng.standard_normal((1024,)).astype(np.float32)
        return {"inputs": [("c", c), ("a", a), ("b", b)], "expect": {"y": np.where(c, a, b)}}
    cases.append(Case("where f32 big [256,1024]&[256,1024]&[1024]", "where", build=build_wbig))
    return cases


def cases():
    return unary_cases() + cast_cases() + binary_cases()
