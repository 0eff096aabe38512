"""Parity cases of max_pool's Indices output, max_unpool, tensor_scatter and
batch_norm's training_mode (family "forms"), run on the device and on the CPU by
tests/cuda/parity.py, which calls gen_forms(parity) with itself as p.

max_pool with Indices and tensor_scatter are exact (the same cells and the same
first-maximum rule; tensor_scatter moves bytes). max_unpool reads the Indices of a
max_pool whose windows do not overlap (stride = kernel), so no two values reach one
cell and the result is exact too. batch_norm training reduces in double in another
order than the CPU: the statistics' tolerance."""


def gen_forms(p):
    sh, single, pick, accum = p.sh, p.single, p.pick, p.accum
    pools = [("2d", [2, 3, 9, 11], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
             ("1d", [2, 4, 17], {"kernel_shape": [4], "strides": [3]}),
             ("3d", [1, 2, 5, 6, 7], {"kernel_shape": [2, 3, 2], "dilations": [2, 1, 2]}),
             ("2d,ceil", [1, 8, 56, 56], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})]
    for j, dt in enumerate(p.FLOATS + ("i8", "u8")):
        for label, xs, attrs in pick(pools, dt, j, 2):
            for so in (0, 1):
                single("forms/max_pool_indices/%s/%s,storage_order=%d/%s" % (dt, label, so, sh(xs)), "max_pool",
                       lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=dict(attrs, storage_order=so), nout=2)
    for j, dt in enumerate(p.FLOATS):
        for xs, k in pick((([2, 3, 8, 10], [2, 2]), ([1, 2, 9], [3]), ([1, 2, 4, 6, 4], [2, 2, 2])), dt, j, 1):
            def mk(g, dt=dt, xs=xs, k=k):
                y, i = g.op("max_pool", [g.x(dt, xs)], {"kernel_shape": k, "strides": k}, 2)
                return [y, i]
            for grow in (0, 1):
                def build(g, mk=mk, k=k, xs=xs, grow=grow):
                    y, i = mk(g)
                    a = {"kernel_shape": k, "strides": k}
                    if grow:
                        a["output_shape"] = xs[:2] + [d + 1 for d in xs[2:]]
                    return [g.op("max_unpool", [y, i], a)]
                p.case("forms/max_unpool/%s/%s,k=%s,grow=%d" % (dt, sh(xs), sh(k), grow), build)
    ts = [([2, 3, 8, 4], [2, 3, 3, 4], -2), ([3, 10, 5], [3, 4, 5], 1), ([2, 7], [2, 7], 1)]
    for j, dt in enumerate(p.ANY):
        for cs, us, axis in pick(ts, dt, j, 1):
            for mode in ("linear", "circular"):
                def mk(g, dt=dt, cs=cs, us=us, axis=axis, mode=mode):
                    room = cs[axis] - us[axis]
                    w = g.rng.integers(0, room + 1, [cs[0]]) if mode == "linear" else \
                        g.rng.integers(-cs[axis], 2 * cs[axis], [cs[0]])
                    return [g.x(dt, cs), g.x(dt, us), g.arr("i64", w)]
                single("forms/tensor_scatter/%s/%s,update=%s,axis=%d,%s" % (dt, sh(cs), sh(us), axis, mode),
                       "tensor_scatter", mk, attrs={"axis": axis, "mode": mode})
    for j, dt in enumerate(p.FLOATS):
        for shape in pick(([4, 6], [2, 6, 33], [2, 3, 17, 19], [8, 64, 28, 28]), dt, j, 2):
            c = shape[1]
            single("forms/batch_norm_training/%s/%s" % (dt, sh(shape)), "batch_norm",
                   lambda g, dt=dt, shape=shape, c=c: [g.x(dt, shape, -2, 3), g.x(dt, [c], 0.5, 1.5), g.x(dt, [c]),
                                                       g.x(dt, [c], -0.5, 0.5), g.x(dt, [c], 0.1, 2)],
                   attrs={"training_mode": 1, "momentum": 0.8}, nout=3, tol=accum(dt, 1, 8.0))
