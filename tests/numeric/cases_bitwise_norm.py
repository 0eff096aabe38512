"""Numeric cases of the integer bitwise ops (bitwise_and/or/xor/not, bit_shift), prelu
and the normalisations over a set of axes (lp_normalization,
mean_variance_normalization). Expectations: Python integers for the bitwise ops (the
shift rule of man/ftrun-graph.5 written out here, not taken from NumPy), NumPy in
float64 from the exact inputs for the others, never ftrun's output."""
import math

import numpy as np

from harness import EXACT, INTS, NP, Case, Tol, rng_for

NAN, INF = float("nan"), float("inf")


def f64(x):
    return np.asarray(x, dtype=np.float64)


def _ints(rng, dt, shape):
    info = np.iinfo(NP[dt])
    x = rng.integers(info.min, info.max, shape, dtype=NP[dt], endpoint=True)
    flat = x.reshape(-1)
    sp = [info.min, info.max, 0, 1, info.max // 2][:flat.size]
    if np.dtype(NP[dt]).kind == "i":
        sp = (sp + [-1])[:flat.size]
    flat[:len(sp)] = sp
    return x


BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}
SHAPES = (((37, 41), (37, 41)), ((6, 1, 5), (4, 1)), ((), (3,)), ((0, 4), (4,)), ((2, 3), ()))


def shift_expect(a, b, dt, right):
    """NumPy's shift rule, in Python integers: a left shift wraps in the dtype; a
    right shift of a signed value is arithmetic; an amount that is negative or at
    least the width shifts every bit out (0, or -1 for a negative value shifted
    right)."""
    bits = np.dtype(dt).itemsize * 8
    a, b = np.broadcast_arrays(a, b)
    out = np.zeros(a.shape, dtype=object)
    for i in np.ndindex(a.shape):
        x, s = int(a[i]), int(b[i])
        if right:
            out[i] = x >> s if 0 <= s < bits else (-1 if x < 0 else 0)
        else:
            out[i] = x << s if 0 <= s < bits else 0
    from cases_elementwise import wrap
    return wrap(out, dt)


def bitwise_cases():
    cases = []
    for dt in INTS:
        for sa, sb in SHAPES:
            for op, fn in BITWISE.items():
                name = "%s %s %s&%s" % (op, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, fn=fn, name=name):
                    rng = rng_for(name)
                    a, b = _ints(rng, dt, sa), _ints(rng, dt, sb)
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": fn(a, b).astype(NP[dt])}}
                cases.append(Case(name, op, build=build))
            for direction in ("left", "right"):
                name = "bit_shift %s %s %s&%s" % (direction, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, direction=direction, name=name):
                    rng = rng_for(name)
                    bits = np.dtype(NP[dt]).itemsize * 8
                    a = _ints(rng, dt, sa)
                    lo = -3 if np.dtype(NP[dt]).kind == "i" else 0
                    b = rng.integers(lo, bits + 3, sb).astype(NP[dt])
                    flat = b.reshape(-1)
                    sp = [0, bits - 1, bits, 1][:flat.size]
                    flat[:len(sp)] = sp
                    return {"inputs": [("a", a), ("b", b)],
                            "expect": {"y": shift_expect(a, b, NP[dt], direction == "right")}}
                cases.append(Case(name, "bit_shift", attrs={"direction": direction}, build=build))
        for shape in ((33, 17), (), (0, 3)):
            name = "bitwise_not %s %s" % (dt, list(shape))

            def build(dt=dt, shape=shape, name=name):
                x = _ints(rng_for(name), dt, shape)
                return {"inputs": [("x", x)], "expect": {"y": np.invert(x)}}
            cases.append(Case(name, "bitwise_not", build=build))
    # u8 shifts by the values of ONNX's own test (test_bitshift_*_uint8)
    x, s = np.array([16, 4, 1], np.uint8), np.array([1, 2, 3], np.uint8)
    for d, y in (("right", [8, 1, 0]), ("left", [32, 16, 8])):
        cases.append(Case("bit_shift %s u8 ONNX example" % d, "bit_shift", [("a", x), ("b", s)], attrs={"direction": d},
                          expect={"y": np.array(y, np.uint8)}))
    # refused: a float input, a direction other than left/right
    a = np.array([1.0, 2.0], np.float32)
    cases.append(Case("bitwise_and f32 refused", "bitwise_and", [("a", a), ("b", a)], exit_code=3,
                      stderr_re=r"bitwise_and.*f32"))
    i = np.array([1, 2], np.int32)
    cases.append(Case("bit_shift direction=up refused", "bit_shift", [("a", i), ("b", i)], attrs={"direction": "up"},
                      exit_code=3, stderr_re=r"direction.*'up'.*left.*right"))
    return cases


# ---------------------------------------------------------------- prelu

PRELU_SHAPES = (((2, 3, 4, 5), (3, 1, 1)), ((2, 3, 4, 5), ()), ((8, 16), (16,)), ((8, 16), (8, 16)),
                ((4, 5), (1,)), ((0, 3), (3,)), ((), ()))


def prelu_cases():
    cases = []
    for dt in ("f32", "f64"):
        for sx, ss in PRELU_SHAPES:
            name = "prelu %s x%s slope%s" % (dt, list(sx), list(ss))

            def build(dt=dt, sx=sx, ss=ss, name=name):
                rng = rng_for(name)
                x = (rng.standard_normal(sx) * 3).astype(NP[dt])
                flat = x.reshape(-1)
                sp = [NAN, INF, -INF, 0.0, -0.0][:flat.size]
                flat[:len(sp)] = sp
                s = rng.uniform(-0.5, 1.5, ss).astype(NP[dt])
                y = np.where(f64(x) < 0, f64(x) * f64(s), f64(x)).astype(NP[dt])
                return {"inputs": [("x", x), ("slope", s)], "expect": {"y": y}, "tol": Tol(r=2)}
            cases.append(Case(name, "prelu", build=build))
    x, s = np.ones((3,), np.float32), np.ones((2, 3), np.float32)
    cases.append(Case("prelu slope broadcasting beyond x refused", "prelu", [("x", x), ("slope", s)], exit_code=3,
                      stderr_re=r"slope 'slope' \[2, ?3\] does not broadcast to the shape \[3\]"))
    return cases


# ---------------------------------------------------------------- lp_normalization, mean_variance_normalization

def _norm_tol(scale):
    # double accumulation, one rounding of the result; |scale| bounds |y|
    return Tol(r=2, a=4, scale=scale, r64=1e-13, a64=1e-13)


def lp_expect(x, axis, p):
    X = f64(x)
    with np.errstate(all="ignore"):
        n = np.sum(np.abs(X), axis=axis, keepdims=True) if p == 1 else \
            np.sqrt(np.sum(X * X, axis=axis, keepdims=True))
        return np.where(n == 0, 0.0, X / n)


def mvn_expect(x, axes, eps=1e-9):
    X = f64(x)
    if X.size == 0:
        return X.copy()
    with np.errstate(all="ignore"):
        m = X.mean(axis=tuple(axes), keepdims=True)
        v = ((X - m) ** 2).mean(axis=tuple(axes), keepdims=True)
        return (X - m) / (np.sqrt(v) + eps)


def norm_cases():
    cases = []
    for dt in ("f32", "f64"):
        for shape, axis in (((16, 300), -1), ((16, 300), 0), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), -3), ((7,), 0),
                            ((0, 5), 1), ((4, 0), 1)):
            for p in (1, 2):
                name = "lp_normalization %s %s axis=%d p=%d" % (dt, list(shape), axis, p)

                def build(dt=dt, shape=shape, axis=axis, p=p, name=name):
                    x = (rng_for(name).standard_normal(shape) * 3).astype(NP[dt])
                    y = lp_expect(x, axis, p)
                    return {"inputs": [("x", x)], "expect": {"y": y.astype(NP[dt])},
                            "tol": _norm_tol(np.abs(y) + 1e-30)}
                cases.append(Case(name, "lp_normalization", attrs={"axis": axis, "p": p}, build=build))
        for shape, axes in (((2, 3, 4, 5), None), ((2, 3, 4, 5), [1]), ((2, 3, 4, 5), [-1, 0]), ((64, 1000), [1]),
                            ((3, 4), [0, 1]), ((0, 3, 2, 2), None), ((5, 6), [])):
            name = "mean_variance_normalization %s %s axes=%s" % (dt, list(shape), axes)

            def build(dt=dt, shape=shape, axes=axes, name=name):
                x = (rng_for(name).standard_normal(shape) * 2 + 5).astype(NP[dt])
                y = mvn_expect(x, [0, 2, 3] if axes is None else axes)
                # the cancellation of x - mean: relative to |x - mean| plus |mean| / std
                return {"inputs": [("x", x)], "expect": {"y": y.astype(NP[dt])},
                        "tol": Tol(r=4, a=16, scale=np.abs(y) + 8, r64=1e-12, a64=1e-12)}
            attrs = None if axes is None else {"axes": axes}
            cases.append(Case(name, "mean_variance_normalization", attrs=attrs, build=build))
    # a zero norm gives 0 (ONNX's reference: np.where(norm == 0, 0, x / norm)), a NaN
    # stays NaN; a constant group gives 0 (0 / epsilon)
    z = np.array([[0.0, 0.0], [3.0, -4.0], [NAN, 1.0]], np.float32)
    cases.append(Case("lp_normalization f32 zero row gives 0", "lp_normalization", [("x", z)],
                      expect={"y": np.array([[0.0, 0.0], [0.6, -0.8], [NAN, NAN]], np.float32)}, tol=Tol(r=2)))
    c = np.full((2, 3), 7.5, np.float32)
    cases.append(Case("mean_variance_normalization f32 constant gives 0", "mean_variance_normalization",
                      [("x", c)], attrs={"axes": [1]}, expect={"y": np.zeros((2, 3), np.float32)}))
    c = np.array([[1.0, 2.0, 4.0]], np.float64)
    y = (c - c.mean()) / (np.sqrt(((c - c.mean()) ** 2).mean()) + 0.5)
    cases.append(Case("mean_variance_normalization f64 epsilon=0.5", "mean_variance_normalization", [("x", c)],
                      attrs={"axes": [1], "epsilon": 0.5}, expect={"y": y}, tol=Tol(r64=1e-14, a64=1e-15)))
    # refused: p other than 1/2, an axis out of range, the default axes on a rank-2 input
    x = np.ones((2, 3), np.float32)
    cases.append(Case("lp_normalization p=3 refused", "lp_normalization", [("x", x)], attrs={"p": 3}, exit_code=3,
                      stderr_re=r"'p' is 3; expected 1 or 2"))
    cases.append(Case("lp_normalization axis=2 refused", "lp_normalization", [("x", x)], attrs={"axis": 2},
                      exit_code=3, stderr_re=r"'axis' = 2 is out of range"))
    cases.append(Case("mean_variance_normalization default axes on rank 2 refused", "mean_variance_normalization",
                      [("x", x)], exit_code=3,
                      stderr_re=r"default \[0, 2, 3\] needs an input of rank 4 or more, and input 'x' has rank 2"))
    return cases


def cases():
    return bitwise_cases() + prelu_cases() + norm_cases()
