"""Numeric cases of matmul, gemm, the reductions, argmax/argmin, cumsum, softmax,
log_softmax, layer_norm and rms_norm.  Float expectations are computed in float64
from the exact inputs; tolerances scale with sqrt(K) * eps * (sum of |terms|)."""
import math

import numpy as np

from harness import EXACT, FLOATS, NP, Case, Tol, rng_for

NAN, INF = float("nan"), float("inf")


def f64(x):
    return np.asarray(x, dtype=np.float64)


def sq(k):
    return math.sqrt(max(k, 1))


def tiny(dt):
    return float(np.finfo(dt).tiny / np.finfo(dt).eps)  # atol floor of one smallest normal


def shp(s):
    return "x".join(map(str, s)) or "[]"


# ---------------------------------------------------------------- matmul, gemm

def matmul_cases():
    cases = []
    specs = [("f32", (512, 512), (512, 512)), ("f32", (3, 4), (4, 5)), ("f64", (3, 4), (4, 5)),
             ("f32", (4,), (4, 5)), ("f32", (3, 4), (4,)), ("f32", (7,), (7,)), ("f64", (7,), (7,)),
             ("f32", (2, 1, 3, 4), (5, 4, 6)), ("f64", (2, 1, 3, 4), (5, 4, 6)), ("f32", (4,), (2, 4, 5)),
             ("f32", (2, 3, 4), (4,)), ("f32", (3, 0), (0, 4)), ("f64", (2, 3, 0), (0, 5)), ("f32", (0, 4), (4, 5)),
             ("f32", (3, 4), (4, 0)), ("f64", (300, 200), (200, 100)), ("f32", (1, 768), (768, 3072)),
             ("f32", (8, 64, 64), (8, 64, 64)), ("f32", (1000, 3), (3, 1)), ("f32", (1, 1), (1, 1))]
    for dt, sa, sb in specs:
        name = "matmul %s %s@%s" % (dt, list(sa), list(sb))

        def build(dt=dt, sa=sa, sb=sb, name=name):
            rng = rng_for(name)
            a, b = rng.standard_normal(sa).astype(NP[dt]), rng.standard_normal(sb).astype(NP[dt])
            k = sa[-1]
            y = np.matmul(f64(a), f64(b)).astype(NP[dt])
            scale = np.matmul(np.abs(f64(a)), np.abs(f64(b)))
            return {"inputs": [("a", a), ("b", b)], "expect": {"y": y}, "tol": Tol(r=2, a=4 * sq(k), scale=scale)}
        cases.append(Case(name, "matmul", build=build))

    def build_nan():
        a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
        b = np.arange(20, dtype=np.float32).reshape(4, 5) / 3 - 2
        a[1, 2] = NAN
        with np.errstate(invalid="ignore"):
            y = np.matmul(f64(a), f64(b)).astype(np.float32)
        return {"inputs": [("a", a), ("b", b)], "expect": {"y": y}, "tol": Tol(r=8, a=8, scale=1 + np.abs(f64(y)))}
    cases.append(Case("matmul f32 NaN in a propagates to its row", "matmul", build=build_nan))

    for dt in FLOATS:
        for ta, tb, alpha, beta, cshape in ((0, 0, 1.0, 1.0, "N"), (1, 0, 0.5, 2.0, "M1"), (0, 1, -1.5, 0.25, "1N"),
                                            (1, 1, 2.0, -1.0, "MN"), (0, 0, 1.0, 3.0, "scalar"),
                                            (0, 1, 0.75, 1.0, None), (0, 0, 1.0, 0.0, "MN")):
            m, k, n = (64, 32, 48) if dt == "f32" else (9, 7, 5)
            name = "gemm %s M=%d K=%d N=%d trans_a=%d trans_b=%d alpha=%g beta=%g c=%s" % (
                dt, m, k, n, ta, tb, alpha, beta, cshape or "none")

            def build(dt=dt, ta=ta, tb=tb, alpha=alpha, beta=beta, cshape=cshape, m=m, k=k, n=n, name=name):
                rng = rng_for(name)
                a = rng.standard_normal((k, m) if ta else (m, k)).astype(NP[dt])
                b = rng.standard_normal((n, k) if tb else (k, n)).astype(NP[dt])
                A, B = (f64(a).T if ta else f64(a)), (f64(b).T if tb else f64(b))
                y = alpha * (A @ B)
                scale = abs(alpha) * (np.abs(A) @ np.abs(B))
                ins = [("a", a), ("b", b)]
                if cshape:
                    cs = {"N": (n,), "M1": (m, 1), "1N": (1, n), "MN": (m, n), "scalar": ()}[cshape]
                    c = rng.standard_normal(cs).astype(NP[dt])
                    y = y + beta * f64(c)
                    scale = scale + np.abs(beta * f64(c))
                    ins.append(("c", c))
                return {"inputs": ins, "expect": {"y": y.astype(NP[dt])}, "tol": Tol(r=2, a=4 * sq(k) + 4, scale=scale)}
            attrs = {"trans_a": ta, "trans_b": tb, "alpha": alpha, "beta": beta}
            cases.append(Case(name, "gemm", attrs=attrs, build=build))

    def build_big():
        rng = rng_for("gemm big")
        a, b = rng.standard_normal((512, 512)).astype(np.float32), rng.standard_normal((512, 512)).astype(np.float32)
        c = rng.standard_normal((512,)).astype(np.float32)
        y = (f64(a) @ f64(b).T + f64(c))
        scale = np.abs(f64(a)) @ np.abs(f64(b)).T + np.abs(f64(c))
        return {"inputs": [("a", a), ("b", b), ("c", c)], "expect": {"y": y.astype(np.float32)},
                "tol": Tol(r=2, a=4 * sq(512) + 4, scale=scale)}
    cases.append(Case("gemm f32 512x512x512 trans_b=1 c=[512]", "gemm", attrs={"trans_b": 1}, build=build_big))
    return cases + epilogue_cases()


# The optimizer's fused epilogue (opt/optimize.c matmul_epi): matmul's bias
# input and matmul's / gemm's activation, written here directly into the graph.
ERFC = np.vectorize(math.erfc)


def act_ref(act, s):
    """NumPy's value of the activation on float64 s, and its slope bound."""
    if act == "relu":
        return np.maximum(s, 0), 1.0
    if act == "gelu":
        return 0.5 * s * ERFC(-s / math.sqrt(2)), 1.2
    if act == "gelu_tanh":
        return 0.5 * s * (1 + np.tanh(math.sqrt(2 / math.pi) * (s + 0.044715 * s ** 3))), 1.2
    return s, 1.0


def epilogue_cases():
    cases = []
    # (dtype, a, b, bias?, activation, threads): 2-D; a tall 3-D a with a shared
    # b (one product); batched b (one product per matrix); K = 0 (bias alone)
    specs = [("f32", (64, 32), (32, 48), True, "relu", 1), ("f32", (64, 32), (32, 48), True, "gelu", 1),
             ("f32", (64, 32), (32, 48), True, "gelu_tanh", 2), ("f32", (64, 32), (32, 48), False, "relu", 1),
             ("f32", (64, 32), (32, 48), True, "none", 1), ("f64", (9, 7), (7, 5), True, "gelu", 1),
             ("f64", (9, 7), (7, 5), True, "relu", 1), ("f32", (2, 128, 64), (64, 96), True, "gelu", 2),
             ("f32", (3, 16, 24), (3, 24, 20), True, "relu", 2), ("f32", (2, 16, 24), (1, 24, 20), True, "gelu", 1),
             ("f32", (5, 0), (0, 6), True, "gelu", 1), ("f32", (1, 128), (128, 1000), True, "relu", 1),
             ("f16", (16, 32), (32, 24), True, "gelu", 1)]
    for dt, sa, sb, has_bias, act, th in specs:
        name = "matmul %s %s@%s%s activation=%s threads=%d" % (dt, list(sa), list(sb), " + bias" if has_bias else "",
                                                            act, th)

        def build(dt=dt, sa=sa, sb=sb, has_bias=has_bias, act=act, name=name):
            rng = rng_for(name)
            a, b = rng.standard_normal(sa).astype(NP[dt]), rng.standard_normal(sb).astype(NP[dt])
            s = np.matmul(f64(a), f64(b))
            scale = np.matmul(np.abs(f64(a)), np.abs(f64(b)))
            ins = [("a", a), ("b", b)]
            if has_bias:
                bias = rng.standard_normal(sb[-1]).astype(NP[dt])
                s, scale = s + f64(bias), scale + np.abs(f64(bias))
                ins.append(("bias", bias))
            y, slope = act_ref(act, s)
            k = sa[-1]
            return {"inputs": ins, "expect": {"y": y.astype(NP[dt])},
                    "tol": Tol(r=8, a=slope * (4 * sq(k) + 8), scale=scale + np.abs(y))}
        cases.append(Case(name, "matmul", attrs={"activation": act}, args=["--threads", str(th)], build=build))
    # gemm with an activation, and the one-row / one-column products (cpu/blas.c's
    # gemv loops: the classifier's 1x1280 @ 1280x1000^T, either transposition)
    for dt, act, m, k, n, ta, tb in (("f32", "relu", 33, 40, 17, 0, 1), ("f32", "gelu_tanh", 33, 40, 17, 0, 1),
                                     ("f64", "gelu", 33, 40, 17, 0, 1), ("f32", "none", 1, 1280, 1000, 0, 1),
                                     ("f32", "relu", 1, 300, 700, 1, 0), ("f32", "none", 600, 70, 1, 1, 1),
                                     ("f32", "none", 600, 70, 1, 0, 0), ("f32", "none", 1, 5, 3, 0, 0)):
        name = "gemm %s M=%d K=%d N=%d trans_a=%d trans_b=%d alpha=0.5 c=[N] activation=%s" % (dt, m, k, n, ta, tb, act)

        def build(dt=dt, act=act, m=m, k=k, n=n, ta=ta, tb=tb, name=name):
            rng = rng_for(name)
            a = rng.standard_normal((k, m) if ta else (m, k)).astype(NP[dt])
            b = rng.standard_normal((n, k) if tb else (k, n)).astype(NP[dt])
            A, B = (f64(a).T if ta else f64(a)), (f64(b).T if tb else f64(b))
            c = rng.standard_normal(n).astype(NP[dt])
            s = 0.5 * (A @ B) + f64(c)
            scale = 0.5 * (np.abs(A) @ np.abs(B)) + np.abs(f64(c))
            y, slope = act_ref(act, s)
            return {"inputs": [("a", a), ("b", b), ("c", c)], "expect": {"y": y.astype(NP[dt])},
                    "tol": Tol(r=8, a=slope * (4 * sq(k) + 8), scale=scale + np.abs(y))}
        cases.append(Case(name, "gemm", attrs={"trans_a": ta, "trans_b": tb, "alpha": 0.5, "activation": act},
                          args=["--threads", "2"] if k == 1280 else [], build=build))
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    cases.append(Case("matmul bias of the wrong length is refused", "matmul",
                      [("a", a), ("b", b), ("bias", np.ones(4, np.float32))], exit_code=3,
                      stderr_re=r"bias 'bias' \[4\] must be 1-D with one value per column of the product \[3,5\]"))
    cases.append(Case("matmul activation 'tanh' is refused", "matmul", [("a", a), ("b", b)],
                      attrs={"activation": "tanh"}, exit_code=3,
                      stderr_re=r"attribute 'activation' = 'tanh' is not one of none, relu, gelu, gelu_tanh"))
    return cases


# ---------------------------------------------------------------- reductions

RED_OPS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
           "reduce_sum_square", "reduce_log_sum_exp", "reduce_log_sum"]


def _norm_axes(axes, rank):
    return tuple(sorted(a % rank for a in axes)) if axes else tuple(range(rank))


def reduce_float(op, x, axes, keepdims):
    """float64 result and the scale of its rounding error (per output element)."""
    X = f64(x)
    ax = _norm_axes(axes, X.ndim)
    k = int(np.prod([X.shape[a] for a in ax])) if ax else 1
    kw = {"axis": ax, "keepdims": bool(keepdims)}
    with np.errstate(all="ignore"):
        if op == "reduce_sum":
            return np.sum(X, **kw), np.sum(np.abs(X), **kw), k
        if op == "reduce_mean":
            s = np.sum(X, **kw)
            return (s / k if k else np.full(s.shape, NAN)), np.sum(np.abs(X), **kw) / max(k, 1), k
        if op == "reduce_max":
            return (np.max(X, **kw) if X.size else np.full(np.sum(X, **kw).shape, -INF)), 0.0, k
        if op == "reduce_min":
            return (np.min(X, **kw) if X.size else np.full(np.sum(X, **kw).shape, INF)), 0.0, k
        if op == "reduce_prod":
            p = np.prod(X, **kw)
            return p, np.abs(p) * (k + 1), 1  # each factor adds one rounding: relative k eps
        if op == "reduce_l1":
            s = np.sum(np.abs(X), **kw)
            return s, s, k
        if op == "reduce_sum_square":
            s = np.sum(X * X, **kw)
            return s, s, k
        if op == "reduce_l2":
            s = np.sqrt(np.sum(X * X, **kw))
            return s, s, k
        if op == "reduce_log_sum":
            s, S = np.sum(X, **kw), np.sum(np.abs(X), **kw)
            # log(s) moves by (error of s) / |s|: the sum's error scale over |s|
            return np.log(s), 1.0 + np.where(s != 0, S / np.where(s != 0, np.abs(s), 1.0), 0.0), k
        if op == "reduce_log_sum_exp":
            if X.size == 0:
                r = np.full(np.sum(X, **kw).shape, -INF)
                return r, 1.0, k
            m = np.max(X, axis=ax, keepdims=True)
            s = np.sum(np.exp(X - m), axis=ax, keepdims=True)
            r = m + np.log(s)
            if not keepdims:
                r = np.squeeze(r, axis=ax)
            return r, 1.0 + np.abs(r), k
    raise ValueError(op)


def reduce_int(op, x, axes, keepdims, dt):
    info = np.iinfo(dt)
    ax = _norm_axes(axes, x.ndim)
    k = int(np.prod([x.shape[a] for a in ax])) if ax else 1
    kw = {"axis": ax, "keepdims": bool(keepdims)}
    O = x.astype(object)
    if op == "reduce_max":
        return (np.max(x, **kw) if x.size else np.full(np.sum(x, **kw).shape, info.min, dt)).astype(dt)
    if op == "reduce_min":
        return (np.min(x, **kw) if x.size else np.full(np.sum(x, **kw).shape, info.max, dt)).astype(dt)
    from cases_elementwise import wrap
    if op == "reduce_sum":
        return wrap(np.sum(O, **kw) if x.size else np.zeros(np.sum(x, **kw).shape, object), dt)
    if op == "reduce_prod":
        return wrap(np.prod(O, **kw) if x.size else np.ones(np.sum(x, **kw).shape, object), dt)
    if op == "reduce_l1":
        return wrap(np.sum(np.abs(O), **kw) if x.size else np.zeros(np.sum(x, **kw).shape, object), dt)
    if op == "reduce_sum_square":
        return wrap(np.sum(O * O, **kw) if x.size else np.zeros(np.sum(x, **kw).shape, object), dt)
    if op == "reduce_mean":
        s = np.sum(O, **kw) if x.size else np.zeros(np.sum(x, **kw).shape, object)
        q = np.frompyfunc(lambda v: 0 if k == 0 else (abs(int(v)) // k) * (1 if v >= 0 else -1), 1, 1)(s)
        return np.asarray(q, dtype=object).astype(dt) if np.size(q) else np.zeros(np.shape(s), dt)
    # l2, log_sum_exp, log_sum: computed in double, truncated, and (like a float -> int cast)
    # saturated to the dtype's range
    r, _, _ = reduce_float(op, x, axes, keepdims)
    return np.clip(np.trunc(r), info.min, info.max).astype(dt)


def _red_input(rng, op, dt, shape):
    d = NP[dt]
    if d.kind == "f":
        if op == "reduce_prod":
            x = rng.uniform(0.8, 1.25, shape) * np.where(rng.random(shape) < 0.5, -1, 1)
        elif op == "reduce_log_sum":
            x = rng.uniform(0.05, 3.0, shape)  # positive sums: log is defined
        else:
            x = rng.standard_normal(shape) * 3
        return x.astype(d)
    info = np.iinfo(d)
    if op in ("reduce_l2", "reduce_log_sum_exp"):
        return rng.integers(max(info.min, -60), min(info.max, 60), shape, endpoint=True).astype(d)
    if op == "reduce_log_sum":
        return rng.integers(0, min(info.max, 60), shape, endpoint=True).astype(d)
    if d == np.int64:
        return rng.integers(-10 ** 12, 10 ** 12, shape).astype(d)
    return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)


def _red_case(op, dt, shape, axes, keepdims, noop=None, label="", input_fn=None):
    attrs = {"keepdims": keepdims}
    if axes is not None:
        attrs["axes"] = list(axes)
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    name = "%s %s %s axes=%s keepdims=%d%s%s" % (op, dt, shp(shape), list(axes or []), keepdims,
                                                  " noop_with_empty_axes=%d" % noop if noop is not None else "", label)

    def build():
        rng = rng_for(name)
        x = input_fn(rng) if input_fn else _red_input(rng, op, dt, shape)
        d = NP[dt]
        if noop and not axes:
            return {"inputs": [("x", x)], "expect": {"y": x.copy()}}
        if d == np.bool_:
            ax = _norm_axes(axes, x.ndim)
            fn = np.any if op == "reduce_max" else np.all
            return {"inputs": [("x", x)], "expect": {"y": fn(x, axis=ax, keepdims=bool(keepdims))}}
        if d.kind in "iu":
            return {"inputs": [("x", x)], "expect": {"y": np.asarray(reduce_int(op, x, axes, keepdims, d))}}
        r, scale, k = reduce_float(op, x, axes, keepdims)
        tol = EXACT if op in ("reduce_max", "reduce_min") else \
            Tol(r=2, a=4 * sq(k) + 2, scale=np.asarray(scale, dtype=np.float64) + tiny(d))
        with np.errstate(over="ignore"):
            return {"inputs": [("x", x)], "expect": {"y": np.asarray(r).astype(d)}, "tol": tol}
    return Case(name, op, attrs=attrs, build=build)


def reduce_cases():
    cases = []
    for op in RED_OPS:
        if op == "reduce_prod":
            big = [((16, 32, 24), [1], 1), ((16, 32, 24), [-1], 0), ((16, 32, 24), [0, 2], 1)]
        else:
            big = [((64, 128, 256), [1], 1), ((64, 128, 256), [-1], 0), ((64, 128, 256), [0, 2], 1),
                   ((64, 128, 256), [], 0)]
        for shape, axes, kd in big:
            cases.append(_red_case(op, "f32", shape, axes, kd))
        cases.append(_red_case(op, "f64", (5, 6, 7), [0, -1], 0))
        cases.append(_red_case(op, "f64", (5, 6, 7), None, 1))
        cases.append(_red_case(op, "f32", (3, 4, 5), [-2], 1))
        cases.append(_red_case(op, "f32", (), None, 1))
        cases.append(_red_case(op, "f32", (), None, 0))
        # empty inputs: identities (0, 1, -inf, +inf, NaN for mean)
        cases.append(_red_case(op, "f32", (0, 5), [0], 0))
        cases.append(_red_case(op, "f32", (0, 5), [1], 1))
        cases.append(_red_case(op, "f64", (2, 0, 3), None, 0))
        for dt in ("i8", "i16", "i32", "i64", "u8"):
            cases.append(_red_case(op, dt, (6, 7, 9), [1, 2], 0))
        if op not in ("reduce_l2", "reduce_log_sum_exp"):
            cases.append(_red_case(op, "i32", (4, 0), [1], 0))
            cases.append(_red_case(op, "u8", (0, 3), [0], 1))
    for op in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"):
        cases.append(_red_case(op, "f32", (3, 4), [], 1, noop=1))
        cases.append(_red_case(op, "i32", (3, 4), None, 0, noop=1))
    cases.append(_red_case("reduce_sum", "f32", (3, 4), [], 0, noop=0))
    for op in ("reduce_max", "reduce_min"):
        for shape, axes in (((5, 7), [1]), ((5, 7), None), ((0, 4), [0]), ((3, 2, 4), [0, 2])):
            cases.append(_red_case(op, "bool", shape, axes, 0, input_fn=lambda rng, shape=shape: rng.random(shape) < 0.8))
    # NaN propagates through sums and max/min (numpy.max); stable log-sum-exp for big values
    for op in ("reduce_sum", "reduce_max", "reduce_min", "reduce_mean", "reduce_l2", "reduce_log_sum_exp",
               "reduce_log_sum"):
        def nan_in(rng):
            x = rng.standard_normal((4, 6)).astype(np.float32)
            x[1, 3] = NAN
            return x
        cases.append(_red_case(op, "f32", (4, 6), [1], 0, label=" NaN in row 1", input_fn=nan_in))
    for off in (1000.0, -1000.0):
        cases.append(_red_case("reduce_log_sum_exp", "f32", (8, 100), [1], 0, label=" values near %g" % off,
                               input_fn=lambda rng, off=off: (rng.standard_normal((8, 100)) + off).astype(np.float32)))
    cases.append(_red_case("reduce_sum", "i8", (40, 100), [1], 0, label=" overflow wraps",
                           input_fn=lambda rng: rng.integers(60, 127, (40, 100)).astype(np.int8)))
    return cases


# ---------------------------------------------------------------- argmax/argmin, cumsum

def arg_cases():
    cases = []
    for op in ("argmax", "argmin"):
        for dt, shape, axis, kd, last in (("f32", (64, 128, 256), 1, 1, 0), ("f32", (64, 128, 256), -1, 0, 1),
                                          ("f32", (7, 9), None, 1, 0), ("f64", (7, 9, 4), -2, 0, 1),
                                          ("i8", (30, 40), 1, 0, 0), ("i8", (30, 40), 1, 0, 1),
                                          ("u8", (30, 40), 0, 1, 1), ("i64", (5, 6), -1, 1, 0),
                                          ("i32", (100,), 0, 0, 1), ("f32", (0, 5), 1, 1, 0),
                                          ("f32", (1,), 0, 0, 0), ("i16", (3, 5), 0, 0, 1)):
            attrs = {"keepdims": kd, "select_last_index": last}
            if axis is not None:
                attrs["axis"] = axis
            name = "%s %s %s axis=%s keepdims=%d select_last_index=%d" % (op, dt, shp(shape), axis, kd, last)

            def build(op=op, dt=dt, shape=shape, axis=axis, kd=kd, last=last, name=name):
                rng = rng_for(name)
                x = rng.integers(-6, 7, shape).astype(NP[dt])  # many ties
                if NP[dt].kind == "f":
                    x = (x + rng.integers(0, 2, shape) * 0.5).astype(NP[dt])
                ax = (axis or 0) % len(shape)
                fn = np.argmax if op == "argmax" else np.argmin
                if last:
                    y = x.shape[ax] - 1 - fn(np.flip(x, ax), axis=ax)
                else:
                    y = fn(x, axis=ax)
                y = np.asarray(y, dtype=np.int64)
                if kd:
                    y = np.expand_dims(y, ax)
                return {"inputs": [("x", x)], "expect": {"y": y}}
            cases.append(Case(name, op, attrs=attrs, build=build))
    for dt, shape, axis in (("f32", (64, 1000), 1), ("f32", (64, 1000), 0), ("f64", (5, 6, 7), -2),
                            ("i32", (20, 30), -1), ("i8", (4, 200), 1), ("u8", (4, 200), 1), ("i64", (9, 9), 0),
                            ("f32", (0, 4), 1), ("f32", (3, 0), 1), ("i16", (50,), 0)):
        for excl, rev in ((0, 0), (1, 0), (0, 1), (1, 1)):
            name = "cumsum %s %s axis=%d exclusive=%d reverse=%d" % (dt, shp(shape), axis, excl, rev)

            def build(dt=dt, shape=shape, axis=axis, excl=excl, rev=rev, name=name):
                rng = rng_for(name)
                d = NP[dt]
                if d.kind == "f":
                    x = (rng.standard_normal(shape) * 3).astype(d)
                else:
                    info = np.iinfo(d)
                    x = rng.integers(max(info.min, -10 ** 9), min(info.max, 10 ** 9), shape, endpoint=True).astype(d)
                ax = axis % len(shape)
                X = f64(x) if d.kind == "f" else x.astype(np.int64)
                if rev:
                    X = np.flip(X, ax)
                c = np.cumsum(X, axis=ax)
                s = np.cumsum(np.abs(X), axis=ax)
                if excl and c.shape[ax]:  # shift by one along the axis, starting from 0
                    head = np.zeros_like(np.take(c, [0], axis=ax))
                    c = np.concatenate([head, np.take(c, range(c.shape[ax] - 1), axis=ax)], axis=ax)
                if rev:
                    c, s = np.flip(c, ax), np.flip(s, ax)
                y = c.astype(d)  # int64 -> narrower ints wraps
                tol = Tol(r=2, a=4 * sq(shape[ax]) + 2, scale=s) if d.kind == "f" else EXACT
                return {"inputs": [("x", x)], "expect": {"y": y}, "tol": tol}
            cases.append(Case(name, "cumsum", attrs={"axis": axis, "exclusive": excl, "reverse": rev}, build=build))
    return cases


# ---------------------------------------------------------------- softmax, norms

def softmax_cases():
    cases = []
    specs = [("f32", (64, 1024), -1, ""), ("f32", (8, 16, 32), 0, ""), ("f32", (8, 16, 32), 1, ""),
             ("f32", (8, 16, 32), -1, ""), ("f64", (8, 16, 32), 1, ""), ("f64", (10,), 0, ""),
             ("f32", (16, 100), -1, "large"), ("f32", (16, 100), -1, "-inf"), ("f64", (16, 100), 0, "large"),
             ("f32", (0, 5), -1, ""), ("f32", (5, 0), -1, ""), ("f32", (3, 1), -1, ""),
             ("f32", (6, 37), -1, "special"), ("f32", (6, 128), -1, "special"), ("f32", (37, 6), 0, "special"),
             ("f64", (6, 37), -1, "special"), ("f32", (16, 300), -1, "wide"), ("f32", (5, 77), -1, "wide")]
    for op in ("softmax", "log_softmax"):
        for dt, shape, axis, kind in specs:
            name = "%s %s %s axis=%d%s" % (op, dt, shp(shape), axis, {"": "", "large": " values near +-1000",
                                                                       "-inf": " with -inf entries",
                                                                       "special": " NaN, inf, -inf rows, huge, subnormal",
                                                                       "wide": " x - max down to -300 (e^x under"
                                                                               " the smallest normal)"}[kind])

            def build(op=op, dt=dt, shape=shape, axis=axis, kind=kind, name=name):
                rng = rng_for(name)
                d = NP[dt]
                x = rng.standard_normal(shape) * 4
                if kind == "large" and x.size:
                    x = x + np.where(np.arange(shape[0]) % 2 == 0, 1000.0, -1000.0).reshape((-1,) + (1,) * (len(shape) - 1))
                if kind == "wide":
                    x = rng.uniform(-300, 0, shape)
                if kind == "-inf":
                    x[rng.random(shape) < 0.3] = -INF
                    x[:, 0] = 0.5  # every row keeps a finite value
                if kind == "special":  # lines along the axis: NaN, +inf, all -inf, subnormal, huge, plain
                    xl = np.moveaxis(x, axis, -1)
                    xl[0, 3] = np.nan
                    xl[1, 5] = INF
                    xl[2, :] = -INF
                    xl[3, :] = xl[3, :] * 1e-41
                    xl[4, ::2], xl[4, 1::2] = 3e38, -3e38
                x = x.astype(d)
                X = f64(x)
                k = shape[axis] if shape else 1
                if X.size == 0:
                    return {"inputs": [("x", x)], "expect": {"y": x.copy()}}
                m = np.max(X, axis=axis, keepdims=True)
                with np.errstate(invalid="ignore"):
                    dx = X - m
                e = np.exp(dx)
                s = np.sum(e, axis=axis, keepdims=True)
                fin = np.where(np.isfinite(dx), np.abs(dx), 0.0)
                if op == "softmax":
                    y = e / s
                    tol = Tol(a=1, scale=np.abs(y) * (4 * sq(k) + 16 + fin) + tiny(d))
                else:
                    y = dx - np.log(s)
                    tol = Tol(a=4, scale=fin + np.abs(np.log(s)) + sq(k) + np.where(np.isfinite(y), np.abs(y), 0))
                return {"inputs": [("x", x)], "expect": {"y": y.astype(d)}, "tol": tol}
            cases.append(Case(name, op, attrs={"axis": axis}, build=build))
    return cases


def layer_norm_expect(x, scale, bias, axis, epsilon):
    X = f64(x)
    ax = tuple(range(axis % X.ndim, X.ndim))
    mean = np.mean(X, axis=ax, keepdims=True) if X.size else np.zeros(X.shape[:axis % X.ndim] + (1,) * len(ax))
    var = np.mean((X - mean) ** 2, axis=ax, keepdims=True) if X.size else mean
    inv = 1.0 / np.sqrt(var + epsilon)
    xhat = (X - mean) * inv
    s = f64(scale) if scale is not None else 1.0
    b = f64(bias) if bias is not None else 0.0
    return xhat * s + b, mean, inv, xhat


def norm_cases():
    cases = []
    specs = [("f32", (8, 16, 64), -1, "sb", ""), ("f32", (8, 16, 64), -1, "s", ""), ("f32", (8, 16, 64), -1, "", ""),
             ("f32", (8, 16, 64), -2, "sb", ""), ("f32", (4, 768), 1, "sb", ""), ("f64", (4, 6, 10), -1, "sb", ""),
             ("f32", (0, 64), -1, "sb", ""), ("f32", (16, 64), -1, "sb", "offset"), ("f32", (2, 3, 4), 0, "sb", ""),
             # row lengths ending in each part of the f32 sums (src/cpu/norm.c: blocks of 512 in
             # 32-element steps, then single elements), a long offset row, NaN and inf rows
             ("f32", (5, 37), -1, "sb", ""), ("f32", (3, 1000), -1, "sb", ""), ("f32", (6, 7), -1, "s", ""),
             ("f32", (3, 5000), -1, "sb", "offset"), ("f32", (4, 77), -1, "sb", "special"),
             ("f32", (64, 2100), -1, "sb", "")]
    for dt, shape, axis, params, kind in specs:
        for with_stats in (False, True):
            if with_stats and params != "sb":
                continue
            eps_attr = 1e-3 if kind == "offset" else 1e-5
            name = "layer_norm %s %s axis=%d%s%s%s" % (dt, shp(shape), axis, {"sb": " scale+bias", "s": " scale",
                                                                              "": ""}[params],
                                                      {"offset": " offset 50 epsilon=1e-3", "special": " NaN and inf rows",
                                                       "": ""}[kind], " mean,inv_std_dev" if with_stats else "")

            def build(dt=dt, shape=shape, axis=axis, params=params, kind=kind, with_stats=with_stats, name=name, e=eps_attr):
                rng = rng_for(name)
                d = NP[dt]
                x = rng.standard_normal(shape) * 2 + (50 if kind == "offset" else 0.3)
                if kind == "special":
                    x[0, 5], x[1, 70], x[2, 3] = np.nan, np.inf, -np.inf
                x = x.astype(d)
                ns = shape[axis % len(shape):]
                k = int(np.prod(ns))
                sc = (rng.standard_normal(ns) + 1).astype(d) if "s" in params else None
                bi = rng.standard_normal(ns).astype(d) if "b" in params else None
                with np.errstate(invalid="ignore"):
                    y, mean, inv, xhat = layer_norm_expect(x, sc, bi, axis, e)
                cond = np.abs(mean) * inv  # offset relative to spread: f32 sums lose this much
                yscale = (np.abs(xhat) + 1 + cond) * (np.abs(f64(sc)) if sc is not None else 1) + \
                    (np.abs(f64(bi)) if bi is not None else 0)
                ins = [("x", x), ("scale", sc) if sc is not None else None, ("bias", bi) if bi is not None else None]
                exp = {"y": y.astype(d)}
                tol = {"y": Tol(a=4 * sq(k) + 16, scale=yscale)}
                if with_stats:
                    exp["mean"], exp["inv_std_dev"] = mean.astype(d), inv.astype(d)
                    tol["mean"] = Tol(r=2, a=4 * sq(k), scale=np.mean(np.abs(f64(x)), axis=tuple(range(axis % x.ndim, x.ndim)),
                                                                     keepdims=True) if x.size else 0.0)
                    tol["inv_std_dev"] = Tol(r=4 * sq(k) + 8, a=4 * sq(k) + 8, scale=np.abs(inv) * cond)
                return {"inputs": ins, "expect": exp, "tol": tol}
            attrs = {"axis": axis}
            if kind == "offset":
                attrs["epsilon"] = eps_attr
            cases.append(Case(name, "layer_norm", attrs=attrs, outputs=["y", "mean", "inv_std_dev"] if with_stats else ["y"],
                              build=build))
    for dt, shape, axis, with_scale in (("f32", (8, 16, 64), -1, True), ("f32", (8, 16, 64), -1, False),
                                        ("f32", (8, 16, 64), -2, True), ("f64", (3, 5, 7), -1, True),
                                        ("f32", (0, 8), -1, True), ("f32", (4, 4096), -1, True)):
        name = "rms_norm %s %s axis=%d%s" % (dt, shp(shape), axis, " scale" if with_scale else "")

        def build(dt=dt, shape=shape, axis=axis, with_scale=with_scale, name=name):
            rng = rng_for(name)
            d = NP[dt]
            x = (rng.standard_normal(shape) * 2 + 0.5).astype(d)
            ns = shape[axis % len(shape):]
            k = int(np.prod(ns))
            X = f64(x)
            ax = tuple(range(axis % len(shape), len(shape)))
            ms = np.mean(X * X, axis=ax, keepdims=True) if X.size else 0.0
            y = X / np.sqrt(ms + 1e-5)
            sc = None
            if with_scale:
                sc = (rng.standard_normal(ns) + 1).astype(d)
                y = y * f64(sc)
            return {"inputs": [("x", x)] + ([("scale", sc)] if with_scale else []), "expect": {"y": y.astype(d)},
                    "tol": Tol(a=4 * sq(k) + 16, scale=np.abs(y) + tiny(d))}
        cases.append(Case(name, "rms_norm", attrs={"axis": axis}, build=build))
    return cases


def cases():
    return matmul_cases() + reduce_cases() + arg_cases() + softmax_cases() + norm_cases()
