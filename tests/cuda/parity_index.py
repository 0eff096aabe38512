"""Parity cases of the indexing ops (family "index"): gather_nd, scatter_nd,
scatter_elements, one_hot, trilu, cumprod and hardmax, each run on the device and on
the CPU by tests/cuda/parity.py, which calls gen_index(parity) with itself as p.

Every case is exact: both backends move the same elements, apply scatter updates in
the same (index) order with the same arithmetic, and multiply cumprod in double in the
same order (src/cpu/index.c, src/cuda/index.cu). Duplicate indices are part of the
scatter cases on purpose: the order rule is what they check.

gen_dynamic (called from gen_index) adds the data-dependent ops non_zero, compress,
unique and non_max_suppression, whose output shapes are known only at run time: both
backends run runtime/datadep.c's definition (CUDA on host copies of its inputs), so
their results, shapes included, are exact; graphs where later nodes read such an
output check that the device infers them again with the shapes of the run. Their
inputs are files with zeros, repeats and ties (few distinct values, no NaN: unique's
order of NaN is not specified)."""
import numpy as np


def nd_idx(g, dshape, qshape, b=0):
    m = qshape[-1]
    cols = [g.rng.integers(-dshape[b + j], dshape[b + j], qshape[:-1]) if dshape[b + j] else
            np.zeros(qshape[:-1], np.int64) for j in range(m)]
    return np.stack(cols, axis=-1).reshape(qshape)


def gen_index(p):
    sh, single, case = p.sh, p.single, p.case
    gnd = [([7, 5, 3], [9, 2], 0), ([4, 6], [3, 2, 2], 0), ([3, 4, 5], [3, 2, 1], 1), ([2, 3, 4, 2], [2, 3, 5, 1], 2),
           ([1023, 17], [500, 1], 0), ([4, 5], [0, 2], 0), ([4, 0], [3, 1], 0)]
    for j, dt in enumerate(p.ANY):
        for k, (ds, qs, b) in enumerate(p.pick(gnd, dt, j, 1)):
            idt = ("i32", "i64")[(j + k) % 2]

            def mk(g, dt=dt, ds=ds, qs=qs, b=b, idt=idt):
                return [g.x(dt, ds), g.arr(idt, nd_idx(g, ds, qs, b))]
            single("index/gather_nd/%s/%s,idx=%s,batch_dims=%d,%s" % (dt, sh(ds), sh(qs), b, idt), "gather_nd", mk,
                   attrs={"batch_dims": b})
    snd = [([6, 3], [40, 1]), ([4, 5, 2], [30, 2]), ([3, 4, 2], [100, 3]), ([64, 256], [200, 1]), ([4, 3], [0, 1])]
    for red in ("none", "add", "mul", "max", "min"):
        for j, dt in enumerate(p.ANY):
            for k, (ds, qs) in enumerate(p.pick(snd, dt, j, 1)):
                def mk(g, dt=dt, ds=ds, qs=qs):
                    us = qs[:-1] + ds[qs[-1]:]
                    return [g.x(dt, ds, ilo=-3, ihi=4), g.arr("i64", nd_idx(g, ds, qs)), g.x(dt, us, ilo=-3, ihi=4)]
                single("index/scatter_nd/%s/%s,idx=%s,%s" % (dt, sh(ds), sh(qs), red), "scatter_nd", mk,
                       attrs={"reduction": red})
    sel = [([5, 3], [9, 3], 0), ([3, 6], [3, 20], 1), ([2, 3, 5], [2, 2, 7], -1), ([128, 64], [300, 64], 0),
           ([4, 3], [0, 3], 0)]
    for red in ("none", "add", "mul", "max", "min"):
        for j, dt in enumerate(p.ANY):
            for k, (ds, qs, axis) in enumerate(p.pick(sel, dt, j, 1)):
                idt = ("i64", "i32")[(j + k) % 2]

                def mk(g, dt=dt, ds=ds, qs=qs, axis=axis, idt=idt):
                    n = ds[axis]
                    return [g.x(dt, ds, ilo=-3, ihi=4), g.arr(idt, g.rng.integers(-n, n, qs)), g.x(dt, qs, ilo=-3, ihi=4)]
                single("index/scatter_elements/%s/%s,idx=%s,axis=%d,%s,%s" % (dt, sh(ds), sh(qs), axis, red, idt),
                       "scatter_elements", mk, attrs={"axis": axis, "reduction": red})
    oh = [([2, 3], 5, -1), ([40], 7, 0), ([2, 3, 2], 4, 1), ([], 3, 0), ([0, 3], 2, -1), ([64, 64], 33, 1)]
    for j, dt in enumerate(p.NUMS):
        for k, (qs, depth, axis) in enumerate(p.pick(oh, dt, j, 1)):
            vdt = p.ANY[(j + k) % len(p.ANY)]

            def mk(g, dt=dt, qs=qs, depth=depth, vdt=vdt):
                lo = 0 if dt == "u8" else -depth - 2
                ind = g.rng.uniform(lo, depth + 2, qs) if dt in p.FLOATS else g.rng.integers(lo, depth + 2, qs)
                return [g.arr(dt, ind), g.arr(vdt, g.rng.integers(-5, 6, [2]))]
            single("index/one_hot/%s/%s,depth=%d,axis=%d,values=%s" % (dt, sh(qs), depth, axis, vdt), "one_hot", mk,
                   attrs={"depth": depth, "axis": axis})
    tri = [([4, 5], 1, 0), ([4, 5], 0, 1), ([2, 3, 6, 6], 1, -2), ([5, 3], 0, -1), ([256, 1024], 1, 100),
           ([3, 4], 0, -(2 ** 62)), ([0, 4], 1, 0)]
    for j, dt in enumerate(p.ANY):
        for k, (s, upper, kk) in enumerate(p.pick(tri, dt, j, 1)):
            single("index/trilu/%s/%s,upper=%d,k=%d" % (dt, sh(s), upper, kk), "trilu",
                   lambda g, dt=dt, s=s: [g.x(dt, s)], attrs={"upper": upper, "k": kk})
    cp = [([7, 33], 1, 0, 0), ([7, 33], 0, 1, 0), ([2, 3, 4, 5], -1, 1, 1), ([65537], 0, 0, 1), ([0, 5], 1, 0, 0),
          ([300, 40], 0, 0, 0)]
    for j, dt in enumerate(p.NUMS):
        for k, (s, axis, ex, rev) in enumerate(p.pick(cp, dt, j, 2)):
            single("index/cumprod/%s/%s,axis=%d,exclusive=%d,reverse=%d" % (dt, sh(s), axis, ex, rev), "cumprod",
                   lambda g, dt=dt, s=s: [g.x(dt, s, lo=0.5, hi=1.5)],
                   attrs={"axis": axis, "exclusive": ex, "reverse": rev})
    hm = [([3, 5], -1), ([3, 5], 0), ([2, 3, 4], 1), ([256, 1024], -1), ([2, 0, 3], 1), ([1000, 3], 0)]
    for j, dt in enumerate(p.NUMS):
        for k, (s, axis) in enumerate(p.pick(hm, dt, j, 1)):
            single("index/hardmax/%s/%s,axis=%d" % (dt, sh(s), axis), "hardmax",
                   lambda g, dt=dt, s=s: [p.discrete(g, dt, s)], attrs={"axis": axis})
    case("index/scatter_nd/f32/index_out_of_range",
         lambda g: [g.op("scatter_nd", [g.x("f32", [5, 3]), g.arr("i64", [[0], [5]]), g.x("f32", [2, 3])])],
         rc=3, err="out of range")
    case("index/gather_nd/i32/index_out_of_range",
         lambda g: [g.op("gather_nd", [g.x("i32", [4, 3]), g.arr("i32", [[0, -4], [1, 1]])])],
         rc=3, err="out of range")
    case("index/scatter_elements/f16/index_out_of_range",
         lambda g: [g.op("scatter_elements", [g.x("f16", [4, 3]), g.arr("i32", [[0, 7, 1]]), g.x("f16", [1, 3])])],
         rc=3, err="out of range")
    gen_dynamic(p)


def few(g, dt, shape, k=4, zeros=0.0):
    """Values of dt from k distinct ones (repeats for unique), a fraction zeros of them
    0 (-0.0 among the float ones, for non_zero)."""
    shape = tuple(shape)
    if dt == "bool":
        return g.arr(dt, g.rng.random(shape) < 0.5)
    lo = 0 if dt == "u8" else -(k // 2)
    v = g.rng.integers(lo, lo + k, shape).astype(np.float64)
    if dt in ("f32", "f16", "bf16", "f64"):
        v = v * 0.75
    if zeros:
        z = g.rng.random(shape) < zeros
        v = np.where(z, -0.0 if dt in ("f32", "f16", "bf16", "f64") else 0.0, v)
    return g.arr(dt, v)


def nms_inputs(g, B, C, N, center):
    """Boxes [B, N, 4] in clusters (many overlap), multiples of 1/8, and scores
    [B, C, N] in steps of 1/32 (ties)."""
    K = max(2, N // 4)
    obj = g.rng.integers(0, 64, (B, K, 2)) / 8.0
    size = g.rng.integers(8, 24, (B, K, 2)) / 8.0
    which = g.rng.integers(0, K, (B, N))
    lo = np.take_along_axis(obj, which[..., None], 1) + g.rng.integers(-3, 4, (B, N, 2)) / 8.0
    hi = lo + np.take_along_axis(size, which[..., None], 1) + g.rng.integers(-3, 4, (B, N, 2)) / 8.0
    if center:
        boxes = np.concatenate([((lo + hi) / 2)[..., ::-1], (hi - lo)[..., ::-1]], axis=-1)
    else:
        flip = g.rng.random((B, N, 2)) < 0.3
        boxes = np.concatenate([np.where(flip, hi, lo), np.where(flip, lo, hi)], axis=-1)
    return g.arr("f32", boxes), g.arr("f32", g.rng.integers(0, 33, (B, C, N)) / 32.0)


def gen_dynamic(p):
    sh, single, case = p.sh, p.single, p.case
    nz = [[3, 4, 5], [7], [], [0, 3], [64, 33], [2, 3, 2, 5]]
    for j, dt in enumerate(p.ANY):
        for k, s in enumerate(p.pick(nz, dt, j, 2)):
            single("index/non_zero/%s/%s" % (dt, sh(s)), "non_zero",
                   lambda g, dt=dt, s=s: [few(g, dt, s, zeros=0.4)])
    single("index/non_zero/f32/[3,4]/all_zero", "non_zero", lambda g: [g.arr("f32", np.zeros((3, 4)))])
    cp = [([6, 4], 6, 0), ([3, 7], 7, 1), ([2, 3, 5], 5, -1), ([4, 5, 2], 5, -2), ([3, 4], 12, None),
          ([8, 3], 5, 0), ([3, 9], 4, -1), ([4, 3], 7, 0), ([2, 3], 9, None), ([300, 40], 300, 0)]
    for j, dt in enumerate(p.ANY):
        for k, (s, n, axis) in enumerate(p.pick(cp, dt, j, 2)):
            def mk(g, dt=dt, s=s, n=n, axis=axis):
                dim = int(np.prod(s)) if axis is None else s[axis]
                cond = g.rng.random(n) < 0.5
                cond[dim:] = False  # a condition longer than the axis: false past its end
                return [g.x(dt, s, ilo=-50, ihi=50), g.arr("bool", cond)]
            single("index/compress/%s/%s,cond=[%d],axis=%s" % (dt, sh(s), n, axis), "compress", mk,
                   attrs=None if axis is None else {"axis": axis})
    case("index/compress/f32/condition_true_past_the_axis",
         lambda g: [g.op("compress", [g.x("f32", [3, 4]), g.arr("bool", [True, False, False, True])], {"axis": 0})],
         rc=3, err="past the end")
    un = [([40], None), ([3, 4, 5], None), ([8, 3], 0), ([3, 9], 1), ([2, 2, 10], -1), ([0], None), ([1000], None)]
    for j, dt in enumerate(p.ANY):
        for k, (s, axis) in enumerate(p.pick(un, dt, j, 2)):
            for srt in (1, 0):
                attrs = {"sorted": srt}
                if axis is not None:
                    attrs["axis"] = axis
                single("index/unique/%s/%s,axis=%s,sorted=%d" % (dt, sh(s), axis, srt), "unique",
                       lambda g, dt=dt, s=s, axis=axis: [few(g, dt, s, k=3 if axis is not None else 6)],
                       attrs=attrs, nout=4)
    nm = [(1, 1, 12, 12, 0.5, None, 0), (1, 1, 12, 12, 0.5, None, 1), (1, 2, 20, 3, 0.3, 0.5, 1),
          (2, 3, 18, 4, 0.25, 0.2, 0), (2, 2, 120, 30, 0.45, 0.1, 0), (1, 2, 14, 14, 0.0, None, 0)]
    for B, C, N, mx, th, sth, center in nm:
        def mk(g, B=B, C=C, N=N, mx=mx, th=th, sth=sth, center=center):
            boxes, scores = nms_inputs(g, B, C, N, center)
            ins = [boxes, scores, g.arr("i64", mx), g.arr("f32", th)]
            return ins + ([g.arr("f32", [sth])] if sth is not None else [])
        single("index/non_max_suppression/f32/B=%d,C=%d,N=%d,max=%d,iou=%g,score=%s,center=%d" % (
            B, C, N, mx, th, sth, center), "non_max_suppression", mk, attrs={"center_point_box": center})
    single("index/non_max_suppression/f32/max_absent", "non_max_suppression",
           lambda g: list(nms_inputs(g, 1, 1, 8, 0)))

    # later nodes read a run-time shape: inferred again on the device
    def unique_mul(g):
        y = g.op("unique", [few(g, "i32", [50], k=7)])
        return [g.op("mul", [y, y])]
    case("index/unique/i32/then_mul", unique_mul)

    def non_zero_transpose(g):
        return [g.op("transpose", [g.op("non_zero", [few(g, "f16", [6, 5], zeros=0.5)])])]
    case("index/non_zero/f16/then_transpose", non_zero_transpose)

    def compress_unique(g):
        c = g.op("compress", [few(g, "i64", [40], k=9), g.arr("bool", g.rng.random(40) < 0.6)])
        y, _, _, n = g.op("unique", [c], {"sorted": 0}, nout=4)
        return [y, n, g.op("reduce_sum", [g.op("cast", [y], {"to": "f32"})], {"keepdims": 0})]
    case("index/compress/i64/then_unique_then_reduce_sum", compress_unique)

    def nms_gather(g):
        boxes, scores = nms_inputs(g, 2, 2, 16, 0)
        sel = g.op("non_max_suppression", [boxes, scores, g.arr("i64", 5), g.arr("f32", 0.5)])
        return [sel, g.op("add", [g.op("cast", [sel], {"to": "f32"}), g.x("f32", [3])])]
    case("index/non_max_suppression/f32/then_cast_add", nms_gather)
