"""Numeric cases of dropout, topk and einsum.
dropout: training=0 is the identity; training=1 is compared bit for bit with a NumPy
  reimplementation of the documented rule (philox.py: element i kept iff u1(i) >= ratio,
  Philox-4x32-10 with counter i and key = the node's seed; kept values x * (1/(1-ratio))
  computed in double and rounded to the dtype, f16/bf16 through f32; dropped values 0).
topk: exact, against a stable NumPy argsort (ties: lower index first; NaN larger than
  every number, as NumPy sorts it).
einsum: against numpy.einsum in float64 from the exact inputs; tolerance as the matrix
  products: 2 eps |exp| + (4 sqrt(K) + 2) eps S, K the number of terms per output element
  and S the same einsum of the absolute values (f16: eps of f16; bf16 (an f32 .npy):
  2^-7 relative expressed in f32 eps)."""
import math
import re

import numpy as np

import philox
from harness import EXACT, NP, Case, Tol, rng_for

NAN, INF = float("nan"), float("inf")
BF16_R = 2.0 ** -7 / float(np.finfo(np.float32).eps)  # one bf16 ulp (relative) in f32 eps


def f64(x):
    return np.asarray(x, dtype=np.float64)


def shp(s):
    return "x".join(map(str, s)) or "[]"


def f32_to_bf16(x):
    """float32 array -> its nearest-even bf16 value, as float32 (NaN kept)."""
    x = np.asarray(x, dtype=np.float32)
    shape = x.shape
    x = x.reshape(-1)
    bits = x.view(np.uint32).astype(np.uint64)
    s16, one = np.uint64(16), np.uint64(1)
    r = (((bits + np.uint64(0x7FFF) + ((bits >> s16) & one)) >> s16) << s16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(NAN), r).astype(np.float32).reshape(shape)


def values(rng, dt, shape, scale=1.0):
    """Exact inputs of dtype dt (the array as written to the .npy; bf16 travels as f32)."""
    x = rng.standard_normal(shape) * scale
    if dt == "bf16":
        return f32_to_bf16(x.astype(np.float32))
    return x.astype(NP[dt])


def npy(dt):
    return np.float32 if dt == "bf16" else NP[dt]


def round_to(y, dt):
    """float64 results -> the dtype ftrun writes (f16/bf16 computed in f32 first)."""
    if dt == "bf16":
        return f32_to_bf16(f64(y).astype(np.float32))
    return f64(y).astype(NP[dt])


# ---------------------------------------------------------------- dropout

def dropout_expect(x, dt, ratio, training, seed):
    """(y, mask) by the documented rule."""
    n = x.size
    if not training:
        return x.copy(), np.ones(x.shape, dtype=np.bool_)
    u1, _ = philox.uniform_pairs(n, seed)
    keep = (u1 >= ratio).reshape(x.shape)
    scale = 1.0 / (1.0 - ratio)
    with np.errstate(invalid="ignore", over="ignore"):
        v = f64(x) * scale
        if dt in ("f16", "bf16"):  # run by the f32 kernel, then rounded to 16 bits
            v32 = v.astype(np.float32)
            y = v32.astype(np.float16) if dt == "f16" else f32_to_bf16(v32)
        else:
            y = v.astype(NP[dt])
    y = np.where(keep, y, np.zeros((), dtype=y.dtype)).astype(npy(dt))
    return y, keep


def dropout_cases():
    cases = []
    specs = [  # dtype, shape, ratio, training, seed, with mask, extra args
        ("f32", (64, 1000), 0.5, 0, 0, True, []), ("f64", (7, 9), 0.5, 0, 3, False, []),
        ("f16", (33, 17), 0.25, 0, 0, True, []), ("bf16", (33, 17), 0.25, 0, 0, False, []),
        ("f32", (64, 1000), 0.5, 1, 0, True, []), ("f32", (64, 1000), 0.5, 1, 0, True, ["--threads", "3"]),
        ("f32", (300, 301), 0.1, 1, 12345, True, []), ("f64", (5, 6, 7), 0.3, 1, 99, True, []),
        ("f64", (1000,), 0.9, 1, 7, False, []), ("f32", (40, 50), 0.0, 1, 5, True, []),
        ("f32", (40, 50), 0.5, 1, -1, True, []), ("f32", (40, 50), 0.5, 1, (1 << 40) + 5, True, []),
        ("f16", (50, 60), 0.4, 1, 11, True, []), ("bf16", (50, 60), 0.4, 1, 11, True, []),
        ("f32", (), 0.5, 1, 2, True, []), ("f32", (0, 4), 0.5, 1, 2, True, []),
        ("f32", (30, 40), 0.5, 1, 8, True, ["--seed", "77"]), ("f32", (3, 4), 1.0, 0, 0, True, []),
    ]
    for dt, shape, ratio, training, seed, with_mask, args in specs:
        name = "dropout %s %s ratio=%g training=%d seed=%d%s%s" % (
            dt, shp(shape), ratio, training, seed, " +mask" if with_mask else "",
            (" " + " ".join(args)) if args else "")
        outs = ["y", "mask"] if with_mask else ["y"]

        def build(dt=dt, shape=shape, ratio=ratio, training=training, seed=seed, with_mask=with_mask, name=name):
            x = values(rng_for(name), dt, shape, 3.0)
            if x.size > 4:  # specials must travel untouched when kept
                x.reshape(-1)[:4] = [INF, -INF, -0.0, 2.0 ** -100 if dt != "f16" else 2.0 ** -24]
            y, keep = dropout_expect(x, dt, ratio, training, seed)
            if training and 0 < ratio and x.size > 1000:  # the oracle itself: the mask rate is about 1-ratio
                assert abs(np.mean(keep) - (1 - ratio)) < 0.02, np.mean(keep)
            exp = {"y": y}
            if with_mask:
                exp["mask"] = keep
            return {"inputs": [("x", x, dt)], "expect": exp}
        cases.append(Case(name, "dropout", attrs={"ratio": ratio, "training": training, "seed": seed},
                          outputs=outs, args=args, build=build))

    # two nodes, same input, seeds 1 and 2: both follow the rule, and their masks differ
    name = "dropout f32 seeds 1 and 2 give different masks"

    def build_two():
        x = values(rng_for(name), "f32", (20, 30))
        y1, m1 = dropout_expect(x, "f32", 0.5, 1, 1)
        y2, m2 = dropout_expect(x, "f32", 0.5, 1, 2)
        assert np.count_nonzero(m1 != m2) > 100
        return {"inputs": [("x", x)], "expect": {"y1": y1, "m1": m1, "y2": y2, "m2": m2}}
    nodes = [{"name": "d1", "op": "dropout", "inputs": ["x"], "outputs": ["y1", "m1"],
              "attrs": {"training": 1, "seed": 1}},
             {"name": "d2", "op": "dropout", "inputs": ["x"], "outputs": ["y2", "m2"],
              "attrs": {"training": 1, "seed": 2}}]
    cases.append(Case(name, nodes=nodes, outputs=["y1", "m1", "y2", "m2"], build=build_two))

    x = np.ones((3, 4), np.float32)
    for label, attrs, pat in (("ratio=1 training=1", {"ratio": 1.0, "training": 1}, r"ratio"),
                              ("ratio=1.5", {"ratio": 1.5}, r"ratio.*1\.5"),
                              ("ratio=-0.1", {"ratio": -0.1, "training": 1}, r"ratio.*-0\.1"),
                              ("training=2", {"training": 2}, r"training")):
        cases.append(Case("dropout %s: exit 3" % label, "dropout", attrs=attrs, inputs=[("x", x)],
                          exit_code=3, node_name="drop", stderr_re=[r"drop", pat]))
    return cases


# ---------------------------------------------------------------- topk

def topk_expect(x, k, axis, largest):
    """(values, indices) of ONNX TopK: ties lower index first, NaN above every number."""
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    if largest:
        # stable ascending sort of the reversed row, reversed: descending, ties by lower
        # index, NaN (last in NumPy's ascending order) first
        order = (n - 1 - np.argsort(np.flip(xm, -1), axis=-1, kind="stable"))[..., ::-1]
    else:
        order = np.argsort(xm, axis=-1, kind="stable")
    idx = order[..., :k].astype(np.int64)
    vals = np.take_along_axis(xm, idx, axis=-1)
    return np.moveaxis(vals, -1, axis).copy(), np.moveaxis(idx, -1, axis).copy()


def topk_input(rng, dt, shape, kind):
    d = npy(dt)
    if kind == "ties":  # few distinct values (and both zeros)
        x = rng.integers(-3, 4, shape).astype(np.float64) * 0.5
        if np.dtype(d).kind == "f":
            x[rng.random(shape) < 0.1] = -0.0
        return x.astype(d) if dt != "bf16" else f32_to_bf16(x.astype(np.float32))
    if kind == "nan":
        x = rng.integers(-4, 5, shape).astype(np.float64)
        r = rng.random(shape)
        x[r < 0.15] = NAN
        x[(r >= 0.15) & (r < 0.2)] = INF
        x[(r >= 0.2) & (r < 0.25)] = -INF
        return x.astype(d)
    if np.dtype(d).kind == "f":
        return values(rng, dt, shape, 10.0)
    info = np.iinfo(d)
    if kind == "extreme":
        pool = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], dtype=np.int64)
        return pool[rng.integers(0, len(pool), shape)].astype(d)
    return rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)


def topk_cases():
    cases = []
    specs = [  # dtype, shape, k, axis, largest, sorted, input kind
        ("f32", (64, 1000), 5, -1, 1, 1, ""), ("f32", (64, 1000), 5, -1, 0, 1, ""),
        ("f32", (64, 1000), 700, -1, 1, 1, ""), ("f32", (64, 1000), 700, 1, 0, 1, ""),
        ("f32", (64, 1000), 1000, -1, 1, 1, ""), ("f32", (64, 1000), 0, -1, 1, 1, ""),
        ("f32", (300, 20, 30), 3, 0, 1, 1, ""), ("f32", (300, 20, 30), 150, 0, 0, 1, ""),
        ("f64", (6, 50, 7), 4, 1, 1, 1, ""), ("f64", (6, 50, 7), 50, -2, 0, 1, ""),
        ("f32", (40, 100), 6, 1, 1, 1, "ties"), ("f32", (40, 100), 60, 1, 1, 1, "ties"),
        ("f32", (40, 100), 6, 1, 0, 1, "ties"), ("f64", (100, 40), 100, 0, 0, 1, "ties"),
        ("f32", (40, 100), 5, 1, 1, 1, "nan"), ("f32", (40, 100), 5, 1, 0, 1, "nan"),
        ("f64", (40, 100), 100, 1, 1, 1, "nan"), ("f64", (40, 100), 100, 1, 0, 1, "nan"),
        ("f32", (40, 100), 5, 1, 1, 0, ""), ("f32", (40, 100), 50, 1, 0, 0, "ties"),
        ("i8", (50, 300), 10, 1, 1, 1, ""), ("i8", (50, 300), 200, 1, 0, 1, ""),
        ("i16", (20, 30, 40), 7, 1, 1, 1, ""), ("i32", (20, 300), 25, -1, 0, 1, ""),
        ("i64", (20, 300), 30, -1, 1, 1, "extreme"), ("i64", (20, 300), 300, -1, 0, 1, "extreme"),
        ("u8", (30, 500), 8, 1, 1, 1, ""), ("u8", (30, 500), 400, 1, 0, 1, ""),
        ("i32", (30, 50), 50, 1, 1, 1, "extreme"),
        ("f16", (30, 200), 9, 1, 1, 1, ""), ("f16", (30, 200), 9, 1, 0, 1, "ties"),
        ("bf16", (30, 200), 9, 1, 1, 1, ""), ("bf16", (30, 200), 150, 1, 0, 1, "ties"),
        ("f32", (1,), 1, 0, 1, 1, ""), ("f32", (0, 5), 2, 1, 1, 1, ""), ("f32", (5, 0), 0, 1, 1, 1, ""),
        ("f32", (7,), 7, 0, 0, 1, "nan"),
        ("f32", (512, 2048), 16, -1, 1, 1, ""),
    ]
    for dt, shape, k, axis, largest, srt, kind in specs:
        name = "topk %s %s k=%d axis=%d largest=%d sorted=%d%s" % (dt, shp(shape), k, axis, largest, srt,
                                                                 " " + kind if kind else "")

        def build(dt=dt, shape=shape, k=k, axis=axis, largest=largest, kind=kind, name=name):
            x = topk_input(rng_for(name), dt, shape, kind)
            v, i = topk_expect(x, k, axis, largest)
            return {"inputs": [("x", x, dt)], "expect": {"values": v, "indices": i}}
        attrs = {"k": k, "axis": axis, "largest": largest, "sorted": srt}
        cases.append(Case(name, "topk", attrs=attrs, outputs=["values", "indices"], build=build))
        if shape == (512, 2048) or (shape == (300, 20, 30) and k == 150):
            cases.append(Case(name + " --threads 3", "topk", attrs=attrs, outputs=["values", "indices"],
                              args=["--threads", "3"], build=build))

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for label, attrs, pat in (("k=5 > dim 4", {"k": 5}, r"'k' = 5"), ("k=-1", {"k": -1}, r"'k' = -1"),
                              ("axis=2 of rank 2", {"k": 1, "axis": 2}, r"'axis' = 2"),
                              ("largest=2", {"k": 1, "largest": 2}, r"largest"),
                              ("k missing", {}, r"\bk\b")):
        cases.append(Case("topk %s: exit 3" % label, "topk", attrs=attrs, inputs=[("x", x)],
                          outputs=["values", "indices"], exit_code=3, node_name="top", stderr_re=[r"top", pat]))
    cases.append(Case("topk on a scalar: exit 3", "topk", attrs={"k": 1}, inputs=[("x", np.float32(2))],
                      outputs=["values", "indices"], exit_code=3, node_name="top", stderr_re=[r"top", r"scalar"]))
    return cases


# ---------------------------------------------------------------- einsum

def einsum_terms(eq, shapes):
    """Number of terms summed per output element: the product of the sizes of the labels
    that are not in the output."""
    lhs = eq.replace(" ", "").split("->")[0]
    sizes = {}
    for term, s in zip(lhs.split(","), shapes):
        letters = term.replace("...", "")
        if "..." in term:
            pre = term.index("...")
            post = len(term) - pre - 3
            dims = list(s[:pre]) + list(s[len(s) - post:] if post else [])
        else:
            dims = list(s)
        for ch, d in zip(letters, dims):
            sizes[ch] = d
    if "->" in eq:
        out = eq.replace(" ", "").split("->")[1]
    else:
        cnt = {}
        for ch in lhs.replace(",", "").replace("...", ""):
            cnt[ch] = cnt.get(ch, 0) + 1
        out = "".join(ch for ch in cnt if cnt[ch] == 1)
    k = 1
    for ch, d in sizes.items():
        if ch not in out:
            k *= d
    return k


def einsum_case(eq, shapes, dt, label="", args=(), gen=None):
    name = "einsum %s '%s' %s%s%s" % (dt, eq, " ".join(shp(s) for s in shapes), label,
                                       (" " + " ".join(args)) if args else "")

    def build():
        rng = rng_for(name)
        xs = [gen(rng, s) if gen else values(rng, dt, s) for s in shapes]
        xs = [x.astype(npy(dt)) if dt != "bf16" else f32_to_bf16(x.astype(np.float32)) for x in xs]
        y = np.einsum(eq, *[f64(x) for x in xs])
        scale = np.einsum(eq, *[np.abs(f64(x)) for x in xs])
        k = einsum_terms(eq, shapes)
        a = 4 * math.sqrt(max(k, 1)) + 2
        if dt == "bf16":
            tol = Tol(r=BF16_R + 2, a=a, scale=scale)
        else:
            tol = Tol(r=2, a=a, scale=scale)
        return {"inputs": [("x%d" % i, x, dt) for i, x in enumerate(xs)],
                "expect": {"y": round_to(np.asarray(y), dt)}, "tol": tol}
    return Case(name, "einsum", attrs={"equation": eq}, args=list(args), build=build)


def einsum_cases():
    cases = []
    specs = [
        # matrix products (the BLAS path, with and without copies)
        ("ij,jk->ik", [(200, 300), (300, 100)]), ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("ij,kj->ik", [(64, 48), (80, 48)]), ("ji,jk->ik", [(48, 64), (48, 80)]),
        ("ij,jk->ki", [(64, 48), (48, 80)]), ("ji,kj->ki", [(48, 64), (80, 48)]),
        ("bij,bjk->bik", [(8, 64, 32), (8, 32, 48)]), ("bij,bjk->bik", [(64, 20, 16), (64, 16, 24)]),
        ("bhid,bhjd->bhij", [(2, 3, 40, 16), (2, 3, 50, 16)]), ("bhij,bhjd->bhid", [(2, 3, 40, 50), (2, 3, 50, 16)]),
        ("ijk,jkl->il", [(20, 6, 7), (6, 7, 30)]), ("ijk,kjl->il", [(20, 6, 7), (7, 6, 30)]),
        ("ij,jk->k", [(30, 40), (40, 50)]), ("ij,j->i", [(100, 64)] + [(64,)]), ("j,jk->k", [(64,), (64, 100)]),
        ("bij,jk->bik", [(4, 30, 20), (20, 25)]), ("ij,bjk->bik", [(30, 20), (4, 20, 25)]),
        ("ik,kj", [(30, 20), (20, 25)]),
        # one operand: transpose, trace, diagonal, sums
        ("ij->ji", [(30, 40)]), ("abc->cab", [(20, 30, 40)]), ("abcd->dbca", [(3, 4, 5, 6)]),
        ("ii->", [(17, 17)]), ("ii", [(17, 17)]), ("ii->i", [(17, 17)]), ("bii->bi", [(4, 9, 9)]),
        ("iji->j", [(5, 6, 5)]), ("ij->", [(30, 40)]), ("ijk->j", [(10, 20, 30)]), ("ij->i", [(30, 40)]),
        ("ij", [(5, 6)]), ("ba", [(5, 6)]), ("", [()]), ("i->", [(1000,)]),
        # products without contraction, dots, outer products
        ("i,j->ij", [(30,), (40,)]), ("i,i->", [(500,)] * 2), ("i,i", [(500,)] * 2), ("ij,ij->ij", [(30, 40)] * 2),
        ("ij,ij->i", [(30, 400)] * 2), ("ij,ij->", [(30, 40)] * 2), ("bi,bj->bij", [(5, 6), (5, 7)]),
        (",ij->ij", [(), (3, 4)]), ("ii,ij->j", [(6, 6), (6, 7)]), ("ij,jj->i", [(5, 6), (6, 6)]),
        # ellipsis
        ("...ij,...jk->...ik", [(2, 1, 30, 40), (5, 40, 20)]), ("...ij,...jk", [(3, 4, 5), (3, 5, 6)]),
        ("i...->...", [(4, 5, 6)]), ("...i,...i->...", [(2, 1, 3), (5, 3)]), ("...ii->...i", [(3, 4, 4)]),
        ("b...,b...->...b", [(4, 5, 6), (4, 5, 6)]), ("...,...->...", [(3, 1), (1, 4)]),
        ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]), ("...ij->...ji", [(2, 3, 4, 5)]),
        ("i...j,j...->i...", [(3, 2, 4), (4, 2)]),
        # three and more operands
        ("ij,jk,kl->il", [(20, 30), (30, 40), (40, 10)]), ("i,i,i->", [(50,)] * 3),
        ("ij,jk,kl", [(6, 7), (7, 8), (8, 9)]), ("bi,bj,bk->bijk", [(3, 4), (3, 5), (3, 6)]),
        ("ab,bc,cd,de->ae", [(5, 6), (6, 7), (7, 8), (8, 9)]), ("i,j,k->", [(5,), (6,), (7,)]),
        ("ij,ij,ij->ij", [(8, 9)] * 3), ("ab,cd,ef,gh->", [(4, 4)] * 4),
        # implicit output in ASCII order (upper case first), spaces
        ("Ba,b", [(2, 3), (4,)]), ("aB,Bc", [(3, 4), (4, 5)]), ("ij, jk -> ik", [(3, 4), (4, 5)]),
        # empty tensors
        ("ij,jk->ik", [(3, 0), (0, 4)]), ("ij,jk->ik", [(0, 3), (3, 4)]), ("ii->i", [(0, 0)]),
        ("ij->", [(0, 5)]), ("ij,jk->ik", [(30, 0), (0, 40)]),
    ]
    for eq, shapes in specs:
        for dt in ("f32", "f64"):
            if dt == "f64" and max((int(np.prod(s)) for s in shapes), default=0) > 20000:
                continue
            cases.append(einsum_case(eq, shapes, dt))
    for dt in ("f16", "bf16"):
        for eq, shapes in (("ij,jk->ik", [(20, 30), (30, 16)]), ("bhid,bhjd->bhij", [(1, 2, 8, 16), (1, 2, 9, 16)]),
                           ("ii->", [(12, 12)]), ("ij->ji", [(5, 7)]), ("i,j->ij", [(5,), (6,)]),
                           ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]), ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)])):
            cases.append(einsum_case(eq, shapes, dt))
    # threads: uneven chunks in the loop and in the batched products
    cases.append(einsum_case("ij,jk->ik", [(300, 200), (200, 100)], "f32", args=("--threads", "3")))
    cases.append(einsum_case("bij,bjk->bik", [(64, 20, 16), (64, 16, 24)], "f32", args=("--threads", "3")))
    cases.append(einsum_case("abc->cab", [(20, 30, 40)], "f32", args=("--threads", "3")))
    cases.append(einsum_case("ij,ij->i", [(300, 400)] * 2, "f32", args=("--threads", "3")))
    cases.append(einsum_case("ij,jk,kl->il", [(60, 50), (50, 40), (40, 30)], "f32", args=("--threads", "3")))

    # special values flow through: NaN poisons its row of the product, inf survives
    def nan_gen(rng, s):
        x = rng.standard_normal(s)
        if len(s) == 2 and s[0] == 6:
            x[2, 3] = NAN
            x[4, 1] = INF
        return x
    cases.append(einsum_case("ij,jk->ik", [(6, 40), (40, 50)], "f32", label=" NaN and inf", gen=nan_gen))
    cases.append(einsum_case("ij,jk->ik", [(6, 4), (4, 5)], "f64", label=" NaN and inf", gen=nan_gen))
    return cases + einsum_error_cases()


def einsum_error_cases():
    cases = []
    f = np.float32

    def err(label, eq, arrays, pats):
        name = "einsum error %s: exit 3" % label
        ins = [("x%d" % i, a) for i, a in enumerate(arrays)]
        cases.append(Case(name, "einsum", attrs={"equation": eq}, inputs=ins, exit_code=3, node_name="ein",
                          stderr_re=[r"ein", re.escape("equation '%s'" % eq)] + pats))
    m23, m34, m45 = np.ones((2, 3), f), np.ones((3, 4), f), np.ones((4, 5), f)
    err("two terms, one input", "ij,jk->ik", [m23], [r"2 operand terms.*1 input"])
    err("one term, two inputs", "ij->ij", [m23, m34], [r"1 operand term.*2 inputs"])
    err("term with 3 labels for rank 2", "ijk,jk->ik", [m23, m34], [r"operand 0 \('x0'\)", r"rank 2", r"3 labels"])
    err("term with 1 label for rank 2", "ij,j->i", [m23, m34], [r"operand 1 \('x1'\)"])
    err("inconsistent sizes of j", "ij,jk->ik", [m23, m45], [r"label 'j'", r"size 3", r"4", r"'x1'"])
    err("a letter does not broadcast (size 1 vs 4)", "ij,jk->ik", [np.ones((2, 1), f), m45],
        [r"label 'j'", r"size 1", r"4"])
    err("diagonal of a non-square", "ii->i", [m23], [r"label 'i'"])
    err("digit in a term", "ij,j1->i", [m23, m34], [r"'1'"])
    err("output label not in inputs", "ij->k", [m23], [r"'k'"])
    err("output label twice", "ii->ii", [np.ones((3, 3), f)], [r"'i'.*more than once"])
    err("two ellipses in a term", "...i...->i", [np.ones((2, 3, 4), f)], [r"more than one '\.\.\.'"])
    err("lone dot", "i.j->ij", [m23], [r"'\.'"])
    err("two arrows", "ij->ji->ij", [m23], [r"more than one '->'"])
    err("dash without >", "ij-ji", [m23], [r"'-'"])
    err("comma in the output", "ij,jk->i,k", [m23, m34], [r"output"])
    err("ellipsis dims dropped", "...ij->ij", [np.ones((5, 2, 3), f)], [r"'\.\.\.'"])
    err("ellipsis dims do not broadcast", "...i,...i->...i", [np.ones((2, 3), f), np.ones((4, 3), f)],
        [r"broadcast", r"'x0'|'x1'"])
    err("dtype mismatch", "ij,jk->ik", [m23, np.ones((3, 4), np.float64)], [r"f64", r"f32"])
    return cases


def cases():
    return dropout_cases() + topk_cases() + einsum_cases()
