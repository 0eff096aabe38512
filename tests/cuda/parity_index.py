"""Parity cases of the indexing ops (family "index"): gather_nd, scatter_nd,
scatter_elements, one_hot, trilu, cumprod and hardmax, each run on the device and on
the CPU by tests/cuda/parity.py, which calls gen_index(parity) with itself as p.

Every case is exact: both backends move the same elements, apply scatter updates in
the same (index) order with the same arithmetic, and multiply cumprod in double in the
same order (src/cpu/index.c, src/cuda/index.cu). Duplicate indices are part of the
scatter cases on purpose: the order rule is what they check."""
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
