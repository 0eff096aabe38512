"""Numeric cases of the random sampling ops: random_uniform_like, random_normal_like,
bernoulli and multinomial (ONNX RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial).

Oracle: philox.py, an independent NumPy implementation of the documented generator
(Philox-4x32-10, counter = the element's flat index, key = the seed attribute, the
53-bit uniforms u1 and u2 of "init"): uniform low + (high - low) u1, normal
mean + scale sqrt(-2 ln(1 - u1)) cos(2 pi u2), bernoulli 1 where u1 < p, multinomial the
first class whose running sum of exp(x - max) exceeds u1 times the row's sum. Each case also
checks its oracle against the distribution it stands for (range, mean and variance
within 6 standard errors, Bernoulli frequencies), so that a rule that were wrong in
both places would still show. ONNX's reference draws from NumPy's generator, whose
values ftrun does not reproduce (tests/onnx/reference_differs*.txt)."""
import math

import numpy as np

import philox
from cases_half import store
from harness import NP, Case, Tol, rng_for


def draw(op, n, seed, a=0.0, b=1.0, p=None):
    u1, u2 = philox.uniform_pairs(n, seed % (1 << 64))
    if op == "random_uniform_like":
        return a + (b - a) * u1
    if op == "random_normal_like":
        return a + b * np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    return (u1 < p.reshape(-1).astype(np.float64)).astype(np.float64)


def as_dtype(v, dt):
    if dt in ("f16", "bf16"):
        return store(dt, v.astype(np.float32).astype(np.float64))
    if dt == "bool":
        return v != 0
    return v.astype(NP[dt])


def check_stats(op, v, a, b, p=None):
    """The oracle's values against their distribution (6 standard errors)."""
    n = v.size
    if n < 1000:
        return
    if op == "random_uniform_like":
        assert v.min() >= a and v.max() < b or a == b, (v.min(), v.max())
        mu, var = (a + b) / 2, (b - a) ** 2 / 12
    elif op == "random_normal_like":
        mu, var = a, b * b
    else:
        pf = p.reshape(-1).astype(np.float64)
        assert set(np.unique(v)) <= {0.0, 1.0}
        mu, var = pf.mean(), (pf * (1 - pf)).mean()
    se = math.sqrt(var / n) if var else 0.0
    assert abs(v.mean() - mu) <= 6 * se + 1e-12, (op, v.mean(), mu, se)
    if op != "bernoulli" and var:
        assert abs(v.var() / var - 1) < 6 * math.sqrt(2.0 / n) + 0.05, (op, v.var(), var)


def cases():
    c = []
    specs = [  # op, input dtype, shape, output dtype (None: the input's), a, b, seed
        ("random_uniform_like", "f32", (200, 300), None, 0.0, 1.0, 0),
        ("random_uniform_like", "f64", (7, 11), "f64", -2.5, 4.0, 12345),
        ("random_uniform_like", "i64", (1000,), "f32", 10.0, 10.5, -1),
        ("random_uniform_like", "f32", (50, 40), "f16", -1.0, 1.0, 3),
        ("random_uniform_like", "bool", (50, 40), "bf16", 0.0, 8.0, 3),
        ("random_uniform_like", "f32", (0, 5), None, 0.0, 1.0, 1),
        ("random_normal_like", "f32", (300, 200), None, 0.0, 1.0, 0),
        ("random_normal_like", "f64", (100, 100), None, 5.0, 2.0, (1 << 40) + 7),
        ("random_normal_like", "u8", (3, 4, 5), "f64", -1.0, 0.5, 9),
        ("random_normal_like", "f16", (64, 64), None, 0.0, 3.0, 2),
        ("random_normal_like", "f32", (), None, 1.0, 0.0, 4),
    ]
    for op, idt, shape, odt, a, b, seed in specs:
        name = "%s %s%s -> %s (%g, %g) seed %d" % (op, idt, list(shape), odt or idt, a, b, seed)
        attrs = {"seed": seed, "low" if "uniform" in op else "mean": a, "high" if "uniform" in op else "scale": b}
        if odt:
            attrs["dtype"] = odt

        def build(op=op, idt=idt, shape=shape, odt=odt or idt, a=a, b=b, seed=seed, name=name):
            x = rng_for(name).integers(0, 2, shape).astype(NP[idt])
            v = draw(op, int(np.prod(shape, dtype=np.int64)), seed, a, b)
            check_stats(op, v, a, b)
            t = Tol(r=4, a=4, scale=max(abs(a), abs(b), 1.0)) if op == "random_normal_like" else Tol(r=1, a=1)
            if odt in ("f16", "bf16"):
                t = Tol(r=1, a=1)  # one rounding of the f32 value to 16 bits
            return {"inputs": [("x", x, idt)], "expect": {"y": as_dtype(v, odt).reshape(shape)}, "tol": t}
        c.append(Case(name, op, attrs=attrs, build=build))

    for pdt, shape, odt, seed, kind in (("f32", (400, 500), None, 0, "ramp"), ("f64", (1000,), "i32", 7, "half"),
                                        ("f16", (60, 70), "bool", 3, "ramp"), ("bf16", (60, 70), "u8", 3, "edges"),
                                        ("f32", (30, 30), "f64", -5, "edges"), ("f32", (0,), None, 1, "ramp")):
        name = "bernoulli %s%s -> %s seed %d p %s" % (pdt, list(shape), odt or pdt, seed, kind)
        attrs = {"seed": seed}
        if odt:
            attrs["dtype"] = odt

        def build(pdt=pdt, shape=shape, odt=odt or pdt, seed=seed, kind=kind):
            n = int(np.prod(shape, dtype=np.int64))
            if kind == "ramp":
                p = np.linspace(0, 1, n)
            elif kind == "half":
                p = np.full(n, 0.5)
            else:  # 0, 1, NaN (never), and values just inside
                p = np.resize(np.array([0.0, 1.0, np.nan, 1e-3, 0.999]), n)
            p = as_dtype(p, pdt).reshape(shape)
            v = draw("bernoulli", n, seed, p=p)
            if kind != "edges":
                check_stats("bernoulli", v, 0, 0, p)
            else:
                pf = p.reshape(-1).astype(np.float64)
                assert (v[pf == 0] == 0).all() and (v[pf == 1] == 1).all() and (v[np.isnan(pf)] == 0).all()
            return {"inputs": [("p", p, pdt)], "expect": {"y": as_dtype(v, odt).reshape(shape)}}
        c.append(Case(name, "bernoulli", attrs=attrs, build=build))

    for xdt, B, C, ns, odt, seed in (("f32", 4, 5, 2000, "i32", 0), ("f64", 3, 1, 7, "i64", 9), ("f16", 2, 40, 500, None, 3),
                                     ("bf16", 5, 3, 0, "i64", 1), ("f32", 2, 4, 300, "i64", -7)):
        name = "multinomial %s[%d, %d] x%d -> %s seed %d" % (xdt, B, C, ns, odt or "i32", seed)
        attrs = {"seed": seed, "sample_size": ns}
        if odt:
            attrs["dtype"] = odt

        def build(xdt=xdt, B=B, C=C, ns=ns, odt=odt or "i32", seed=seed, name=name):
            x = as_dtype(rng_for(name).normal(0, 2, (B, C)), xdt)
            if C >= 4:
                x[0, 1] = -np.inf  # a class of probability 0
            xf = x.astype(np.float64)
            u1, _ = philox.uniform_pairs(B * ns, seed % (1 << 64))
            y = np.zeros((B, ns), np.int64)
            for b in range(B):
                e = np.exp(xf[b] - xf[b].max())
                acc = np.cumsum(e)  # in order, as the kernels add
                t = u1[b * ns:(b + 1) * ns] * acc[-1]
                y[b] = np.minimum(np.searchsorted(acc[:-1], t, side="right"), C - 1)
                if ns >= 300:  # the oracle itself: class frequencies near the softmax
                    pr = e / e.sum()
                    f = np.bincount(y[b], minlength=C) / ns
                    assert (np.abs(f - pr) <= 6 * np.sqrt(pr * (1 - pr) / ns) + 1e-12).all(), (f, pr)
                if C >= 4 and b == 0:
                    assert not (y[b] == 1).any()
            return {"inputs": [("x", x, xdt)], "expect": {"y": y.astype(NP[odt])}}
        c.append(Case(name, "multinomial", attrs=attrs, build=build))
    c.append(Case("multinomial of a 1-D input: exit 3", "multinomial", inputs=[("x", np.ones(3, np.float32))],
                  exit_code=3, stderr_re=[r"\[batch, classes\]"]))
    c.append(Case("multinomial dtype f32: exit 3", "multinomial", inputs=[("x", np.ones((2, 3), np.float32))],
                  attrs={"dtype": "f32"}, exit_code=3, stderr_re=[r"i32 or i64"]))

    # one seed twice gives the same values, another seed others (the oracle says which)
    name = "random_uniform_like seeds 5, 5 and 6 in one graph"

    def build_three():
        x = np.zeros((40, 50), np.float32)
        v5, v6 = draw("random_uniform_like", x.size, 5).reshape(x.shape), draw("random_uniform_like", x.size, 6).reshape(x.shape)
        assert np.count_nonzero(v5 != v6) == x.size
        return {"inputs": [("x", x)], "expect": {"a": v5.astype(np.float32), "b": v5.astype(np.float32),
                                                 "c": v6.astype(np.float32)}}
    nodes = [{"name": k, "op": "random_uniform_like", "inputs": ["x"], "outputs": [k], "attrs": {"seed": s}}
             for k, s in (("a", 5), ("b", 5), ("c", 6))]
    c.append(Case(name, nodes=nodes, outputs=["a", "b", "c"], build=build_three, tol=Tol(r=1, a=1)))

    x = np.ones((3, 4), np.float32)
    for op, attrs, pat in (("random_uniform_like", {"low": 2.0, "high": 1.0}, r"low.*high"),
                           ("random_normal_like", {"scale": -1.0}, r"scale"),
                           ("random_uniform_like", {"dtype": "i32"}, r"float dtype"),
                           ("bernoulli", {"dtype": "nonsense"}, r"dtype")):
        c.append(Case("%s %s: exit 3" % (op, attrs), op, attrs=attrs, inputs=[("x", x)], exit_code=3,
                      node_name="rnd", stderr_re=[r"rnd", pat]))
    c.append(Case("bernoulli of i32 probabilities: exit 3", "bernoulli", inputs=[("p", np.ones(3, np.int32))],
                  exit_code=3, stderr_re=[r"i32"]))
    return c
