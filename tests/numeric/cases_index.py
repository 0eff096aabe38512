"""Numeric cases of the indexing ops: gather_nd, scatter_nd, scatter_elements, one_hot,
trilu, cumprod and hardmax.  The oracles below are written element by element from the
ONNX operator definitions (GatherND, ScatterND, ScatterElements, OneHot, Trilu, CumSum
with a product, Hardmax) with NumPy's own indexing, never from ftrun's output.  Scatter
updates are applied in the row-major order of the indices (the documented order), so the
last duplicate wins under reduction "none".  Out-of-range indices must fail with exit 3
naming the node."""
import warnings

import numpy as np

from cases_elementwise import random_of
from harness import ALL, EXACT, NP, Case, Tol, rng_for

warnings.filterwarnings("ignore", category=RuntimeWarning)  # integer wrap-around of the oracles

NUMS = ("f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8")


def shp(s):
    return "x".join(map(str, s)) or "[]"


# ---------------------------------------------------------------- oracles

def gather_nd(data, idx, b):
    m = idx.shape[-1]
    out = np.empty(idx.shape[:-1] + data.shape[b + m:], data.dtype)
    for bi in np.ndindex(*data.shape[:b]):
        for qi in np.ndindex(*idx.shape[b:-1]):
            out[bi + qi] = data[bi + tuple(int(v) for v in idx[bi + qi])]
    return out


def combine(a, u, red):
    if red == "none":
        return u
    if a.dtype == np.bool_:
        return {"add": a | u, "mul": a & u, "max": a | u, "min": a & u}[red]
    return {"add": a + u, "mul": a * u, "max": np.maximum(a, u), "min": np.minimum(a, u)}[red]


def scatter_nd(data, idx, upd, red):
    out = data.copy()
    for qi in np.ndindex(*idx.shape[:-1]):
        t = tuple(int(v) for v in idx[qi])
        out[t] = combine(np.asarray(out[t]), np.asarray(upd[qi]), red)
    return out


def scatter_elements(data, idx, upd, axis, red):
    out = data.copy()
    for p in np.ndindex(*idx.shape):
        t = list(p)
        t[axis] = int(idx[p])
        t = tuple(t)
        out[t] = combine(np.asarray(out[t]), np.asarray(upd[p]), red)
    return out


def one_hot(ind, depth, axis, values):
    r = ind.ndim + 1
    axis = axis + r if axis < 0 else axis
    x = ind.astype(np.float64)
    v = np.trunc(np.nan_to_num(x, nan=-1e300))
    valid = ~np.isnan(x) & (v >= -depth) & (v < depth)
    pos = np.where(valid, np.where(v < 0, v + depth, v), -1).astype(np.int64)
    hot = np.arange(depth).reshape([depth if i == axis else 1 for i in range(r)]) == np.expand_dims(pos, axis)
    return np.where(hot, values[1], values[0]).astype(values.dtype)


def cumprod(x, axis, excl, rev):
    d = x.dtype
    if d.kind == "f":
        w = x.astype(np.float64)
    else:
        w = x.astype(np.int64).astype(np.uint64)  # two's complement, wraps mod 2**64
    if rev:
        w = np.flip(w, axis)
    c = np.cumprod(w, axis=axis)
    if excl:
        c = np.concatenate([np.ones_like(np.take(c, [0], axis=axis)), np.delete(c, -1, axis=axis)], axis=axis) \
            if x.shape[axis] else c
    if rev:
        c = np.flip(c, axis)
    if d == np.float16:
        return c.astype(np.float32).astype(np.float16)  # the f32 result rounded to f16 (NUMERICS)
    return c.astype(d)


def hardmax(x, axis):
    if x.shape[axis] == 0:
        return np.zeros_like(x)
    am = np.expand_dims(np.argmax(x, axis=axis), axis)  # the first maximum; NaN wins
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return (np.arange(x.shape[axis]).reshape(shape) == am).astype(x.dtype)


def rand_idx(rng, lo_hi, shape, dt="i64"):
    lo, hi = lo_hi
    return rng.integers(lo, hi, shape).astype(NP[dt])


def nd_indices(rng, dshape, qshape, b=0, dt="i64"):
    """Index tuples (negatives included) valid for data dims b .. b+m-1."""
    m = qshape[-1]
    cols = [rng.integers(-dshape[b + j], dshape[b + j], qshape[:-1]) if dshape[b + j] else
            np.zeros(qshape[:-1], np.int64) for j in range(m)]
    return np.stack(cols, axis=-1).astype(NP[dt]).reshape(qshape)


# ---------------------------------------------------------------- cases

def gather_nd_cases():
    c = []
    specs = [("m=2 of 3-D", (4, 5, 3), (6, 2), 0, "i64"), ("m=3 scalar slices", (4, 5, 3), (2, 3, 3), 0, "i32"),
             ("m=1 rows", (7, 2), (3, 1), 0, "i64"), ("batch_dims=1", (3, 4, 5), (3, 2, 1), 1, "i64"),
             ("batch_dims=2 i32", (2, 3, 4, 2), (2, 3, 5, 1), 2, "i32"), ("empty indices", (4, 5), (0, 2), 0, "i64"),
             ("empty slices", (4, 0), (3, 1), 0, "i64")]
    for vi, (label, dshape, qshape, b, idt) in enumerate(specs):
        for dt in (ALL if vi == 0 else ("f32",)):
            name = "gather_nd %s %s %s idx %s" % (dt, label, shp(dshape), shp(qshape))

            def build(dt=dt, dshape=dshape, qshape=qshape, b=b, idt=idt, name=name):
                rng = rng_for(name)
                data = random_of(rng, dt, dshape)
                ind = nd_indices(rng, dshape, qshape, b, idt)
                return {"inputs": [("data", data), ("indices", ind)], "expect": {"y": gather_nd(data, ind, b)}}
            c.append(Case(name, "gather_nd", attrs={"batch_dims": b} if b else None, build=build))
    return c


def scatter_nd_cases():
    c = []
    specs = [("m=1 rows", (6, 3), (4, 1)), ("m=2 of 3-D", (4, 5, 2), (7, 2)), ("m=3 elements", (3, 4, 2), (10, 3)),
             ("empty indices", (4, 3), (0, 1))]
    for red in ("none", "add", "mul", "max", "min"):
        for vi, (label, dshape, qshape) in enumerate(specs):
            dts = ALL if (vi == 1 and red in ("none", "add")) else ("f32", "i32") if vi == 1 else ("f64",)
            for dt in dts:
                name = "scatter_nd %s reduction=%s %s %s idx %s" % (dt, red, label, shp(dshape), shp(qshape))

                def build(dt=dt, dshape=dshape, qshape=qshape, red=red, name=name):
                    rng = rng_for(name)
                    data = random_of(rng, dt, dshape, full_range=False)
                    ind = nd_indices(rng, dshape, qshape, 0, "i32" if "m=3" in name else "i64")
                    upd = random_of(rng, dt, qshape[:-1] + dshape[qshape[-1]:], full_range=False)
                    return {"inputs": [("data", data), ("indices", ind), ("updates", upd)],
                            "expect": {"y": scatter_nd(data, ind, upd, red)}}
                c.append(Case(name, "scatter_nd", attrs={"reduction": red}, build=build))
    # duplicates under "none": the last in index order wins (-1 and 2 are the same row)
    data = np.zeros((3, 2), np.float32)
    ind = np.array([[2], [0], [-1]], np.int64)
    upd = np.array([[1, 1], [2, 2], [3, 3]], np.float32)
    c.append(Case("scatter_nd f32 duplicate indices: the last wins", "scatter_nd",
                  inputs=[("data", data), ("indices", ind), ("updates", upd)],
                  expect={"y": np.array([[2, 2], [0, 0], [3, 3]], np.float32)}))
    return c


def scatter_elements_cases():
    c = []
    specs = [("axis=0", (5, 3), (4, 3), 0), ("axis=1", (3, 6), (3, 4), 1), ("axis=-1 3-D", (2, 3, 5), (2, 2, 7), -1),
             ("axis=0 empty indices", (4, 3), (0, 3), 0)]
    for red in ("none", "add", "mul", "max", "min"):
        for vi, (label, dshape, qshape, axis) in enumerate(specs):
            dts = ALL if (vi == 1 and red in ("none", "max")) else ("f32", "i64") if vi == 1 else ("f64",)
            for dt in dts:
                name = "scatter_elements %s reduction=%s %s %s idx %s" % (dt, red, label, shp(dshape), shp(qshape))

                def build(dt=dt, dshape=dshape, qshape=qshape, axis=axis, red=red, name=name):
                    rng = rng_for(name)
                    data = random_of(rng, dt, dshape, full_range=False)
                    n = dshape[axis]
                    ind = rand_idx(rng, (-n, n), qshape, "i32" if axis == 0 else "i64")
                    upd = random_of(rng, dt, qshape, full_range=False)
                    ax = axis + len(dshape) if axis < 0 else axis
                    return {"inputs": [("data", data), ("indices", ind), ("updates", upd)],
                            "expect": {"y": scatter_elements(data, ind, upd, ax, red)}}
                c.append(Case(name, "scatter_elements", attrs={"axis": axis, "reduction": red}, build=build))
    data = np.zeros((2, 3), np.int32)
    ind = np.array([[1, 1, -2], [0, 2, -1]], np.int64)
    upd = np.array([[5, 6, 7], [8, 9, 10]], np.int32)
    c.append(Case("scatter_elements i32 axis=1 duplicate indices: the last wins", "scatter_elements",
                  attrs={"axis": 1}, inputs=[("data", data), ("indices", ind), ("updates", upd)],
                  expect={"y": np.array([[0, 7, 0], [8, 0, 10]], np.int32)}))
    return c


def one_hot_cases():
    c = []
    specs = [("axis=-1", (2, 3), 5, -1, "i64"), ("axis=0", (4,), 3, 0, "i32"), ("axis=1 3-D", (2, 3, 2), 4, 1, "i64"),
             ("axis=-3", (3, 2), 6, -3, "i8"), ("scalar index", (), 4, -1, "u8"), ("float indices", (7,), 4, -1, "f32"),
             ("f64 indices", (3, 3), 3, 1, "f64"), ("empty indices", (0, 3), 2, -1, "i64"),
             ("f16 indices", (5,), 3, 0, "f16")]
    for vi, (label, qshape, depth, axis, idt) in enumerate(specs):
        for vdt in (ALL if vi == 0 else ("f32",) if vi % 2 else ("i32",)):
            name = "one_hot values %s %s indices %s %s depth=%d" % (vdt, label, idt, shp(qshape), depth)

            def build(vdt=vdt, qshape=qshape, depth=depth, axis=axis, idt=idt, name=name):
                rng = rng_for(name)
                if NP[idt].kind == "f":
                    # fractions, out-of-range values both ways and a NaN: off everywhere for those
                    ind = (rng.uniform(-depth - 2, depth + 2, qshape)).astype(NP[idt])
                    if ind.size:
                        ind.reshape(-1)[0] = np.nan
                else:
                    lo = max(-depth - 2, np.iinfo(NP[idt]).min)
                    ind = rng.integers(lo, depth + 2, qshape).astype(NP[idt])
                values = random_of(rng, vdt, (2,), full_range=False)
                return {"inputs": [("indices", ind), ("values", values)],
                        "expect": {"y": one_hot(ind, depth, axis, values)}}
            c.append(Case(name, "one_hot", attrs={"depth": depth, "axis": axis}, build=build))
    return c


def trilu_cases():
    c = []
    specs = [((4, 5), 1, 0), ((4, 5), 0, 0), ((3, 3), 1, 1), ((3, 3), 0, -1), ((2, 3, 4, 6), 1, -2),
             ((2, 5, 3), 0, 2), ((3, 4), 1, 10), ((3, 4), 0, -10), ((3, 4), 1, -(2 ** 62)), ((0, 4), 1, 0),
             ((2, 0, 3), 0, 0), ((1, 6), 0, -1)]
    for vi, (shape, upper, k) in enumerate(specs):
        for dt in (ALL if vi < 2 else ("f32",) if vi % 2 else ("i16",)):
            name = "trilu %s %s upper=%d k=%d" % (dt, shp(shape), upper, k)

            def build(dt=dt, shape=shape, upper=upper, k=k, name=name):
                x = random_of(rng_for(name), dt, shape)
                kk = max(min(k, 1 << 20), -(1 << 20))
                y = np.triu(x, kk) if upper else np.tril(x, kk)
                return {"inputs": [("x", x)], "expect": {"y": y}}
            c.append(Case(name, "trilu", attrs={"upper": upper, "k": k}, build=build))
    return c


def cumprod_cases():
    c = []
    specs = [((5, 7), 1, 0, 0), ((5, 7), 0, 1, 0), ((4, 3, 6), -1, 0, 1), ((4, 3, 6), 1, 1, 1), ((9,), 0, 0, 0),
             ((3, 0, 2), 1, 0, 0), ((64, 300), 0, 0, 0)]
    for vi, (shape, axis, excl, rev) in enumerate(specs):
        for dt in (NUMS if vi < 4 else ("f32", "i64")):
            name = "cumprod %s %s axis=%d exclusive=%d reverse=%d" % (dt, shp(shape), axis, excl, rev)

            def build(dt=dt, shape=shape, axis=axis, excl=excl, rev=rev, name=name):
                rng = rng_for(name)
                d = NP[dt]
                if d.kind == "f":
                    # magnitudes near 1 keep long products finite
                    x = (rng.uniform(0.6, 1.5, shape) * rng.choice([-1.0, 1.0], shape)).astype(d)
                else:
                    x = random_of(rng, dt, shape)
                ax = axis + len(shape) if axis < 0 else axis
                return {"inputs": [("x", x)], "expect": {"y": cumprod(x, ax, excl, rev)}}
            # floats: the exact product of the inputs, taken in double and rounded once (f16 twice)
            c.append(Case(name, "cumprod", attrs={"axis": axis, "exclusive": excl, "reverse": rev},
                          tol=Tol(r=1) if dt != "f16" else Tol(r=1.5), build=build))
    x = np.array([2.0, np.nan, 3.0, np.inf, 0.0], np.float32)
    c.append(Case("cumprod f32 NaN and inf propagate", "cumprod", attrs={"axis": 0},
                  inputs=[("x", x)], expect={"y": np.array([2, np.nan, np.nan, np.nan, np.nan], np.float32)}))
    return c


def hardmax_cases():
    c = []
    specs = [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((4, 1), -1), ((2, 0, 3), 1), ((2, 3, 0), -1), ((7,), 0)]
    for vi, (shape, axis) in enumerate(specs):
        for dt in (NUMS if vi == 0 else ("f32",) if vi % 2 else ("i8", "f64")):
            name = "hardmax %s %s axis=%d" % (dt, shp(shape), axis)

            def build(dt=dt, shape=shape, axis=axis, name=name):
                rng = rng_for(name)
                x = random_of(rng, dt, shape, full_range=False)
                if NP[dt].kind in "iu" and x.size:
                    x.reshape(-1)[::2] = 3  # ties: the first maximum wins
                ax = axis + len(shape) if axis < 0 else axis
                return {"inputs": [("x", x)], "expect": {"y": hardmax(x, ax)}}
            c.append(Case(name, "hardmax", attrs={"axis": axis}, build=build))
    x = np.array([[1.0, 5.0, 5.0, 2.0], [np.nan, 1.0, np.nan, 9.0], [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    c.append(Case("hardmax f32 ties, NaN and -inf rows", "hardmax", inputs=[("x", x)],
                  expect={"y": np.array([[0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], np.float32)}))
    return c


def error_cases():
    c = []
    data = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for label, op, inputs, attrs in (
            ("gather_nd index 4 of dim 4", "gather_nd", [("data", data), ("indices", np.array([[0, 4]], np.int64))], None),
            ("gather_nd index -5 of dim 4 batch_dims=1", "gather_nd",
             [("data", data), ("indices", np.array([[1], [-5], [0]], np.int32))], {"batch_dims": 1}),
            ("scatter_nd index 3 of dim 3", "scatter_nd",
             [("data", data), ("indices", np.array([[1], [3]], np.int64)), ("updates", np.zeros((2, 4), np.float32))],
             {"reduction": "add"}),
            ("scatter_elements index -5 of dim 4", "scatter_elements",
             [("data", data), ("indices", np.array([[0, -5]], np.int64)), ("updates", np.zeros((1, 2), np.float32))],
             {"axis": 1})):
        c.append(Case(label + " out of range: exit 3 naming the node", op, attrs=attrs, inputs=inputs, exit_code=3,
                      node_name="lookup", stderr_re=[r"lookup", r"out of range"]))
    return c


def cases():
    return (gather_nd_cases() + scatter_nd_cases() + scatter_elements_cases() + one_hot_cases() + trilu_cases() +
            cumprod_cases() + hardmax_cases() + error_cases())
