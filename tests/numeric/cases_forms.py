"""Numeric cases of max_pool's Indices output (ONNX MaxPool output 1), max_unpool
(MaxUnpool), tensor_scatter (TensorScatter) and batch_norm's training_mode
(BatchNormalization training_mode=1), plus their inference errors.

Oracles, written here from the ONNX operator texts and independent of ftrun:
  max_pool Indices: a plain loop over every window in the ONNX order (the cells of
         the input inside the window, row-major); the first strictly greater value
         moves the maximum (a NaN, once seen, stays); the index is the flat position
         of that cell in the input, N and C included, the spatial part row-major or,
         with storage_order=1, column-major.  Cross-checked against PyTorch's
         F.max_pool2d(return_indices=True) (per-plane row-major indices) for 2-D.
  max_unpool: zeros of the unpooled shape [N, C, (in-1)*stride - pads + kernel], every
         x[e] written at flat index[e], then placed in the leading corner of
         output_shape (the ONNX reference's reading).
  tensor_scatter: a NumPy copy of past_cache with update's rows along axis written at
         write_indices[b] + s (modulo the axis size when circular).
  batch_norm training: the batch's mean and biased variance per channel in float64;
         y = (x - mean) / sqrt(var + eps) * scale + bias; running = input * momentum +
         batch * (1 - momentum).
Tolerances: max_pool, max_unpool and tensor_scatter are exact; batch_norm training
|got - exp| <= 2 eps |exp| + (4 sqrt(K) + 16) eps (|xhat| + 1) |scale| + |bias| with K
the elements of one channel (the statistics' rounding)."""
import itertools
import math

import numpy as np

from harness import EXACT, NP, Case, Tol, rng_for


def shp(s):
    return "x".join(map(str, s)) or "[]"


def maxpool_idx_ref(x, k, s, d, pb, out, so):
    N, C = x.shape[:2]
    sp = x.shape[2:]
    y = np.zeros((N, C) + tuple(out), dtype=np.float64 if x.dtype.kind == "f" else np.int64)
    idx = np.full((N, C) + tuple(out), -1, dtype=np.int64)
    strides = []
    for i in range(len(sp)):
        if so == 0:
            strides.append(int(np.prod(sp[i + 1:])))
        else:
            strides.append(int(np.prod(sp[:i])))
    plane = int(np.prod(sp))
    for n_, c_ in itertools.product(range(N), range(C)):
        for o in itertools.product(*[range(v) for v in out]):
            best, at, nan = None, -1, False
            cells = itertools.product(*[[o[i] * s[i] - pb[i] + j * d[i] for j in range(k[i])] for i in range(len(sp))])
            for cell in cells:
                if any(cell[i] < 0 or cell[i] >= sp[i] for i in range(len(sp))):
                    continue
                v = x[(n_, c_) + cell]
                if nan:
                    continue
                if best is None or v > best or (x.dtype.kind == "f" and math.isnan(v)):
                    best, nan = v, x.dtype.kind == "f" and math.isnan(v)
                    at = (n_ * C + c_) * plane + sum(cell[i] * strides[i] for i in range(len(sp)))
            y[(n_, c_) + o] = best if best is not None else -np.inf
            idx[(n_, c_) + o] = at
    return y, idx


def pool_out(sp, k, s, d, pads):
    r = len(sp)
    return [(sp[i] + pads[i] + pads[r + i] - ((k[i] - 1) * d[i] + 1)) // s[i] + 1 for i in range(r)]


def maxpool_case(dt, shape, k, s=None, d=None, pads=None, so=0, nan=False):
    r = len(k)
    s, d, pads = s or [1] * r, d or [1] * r, pads or [0] * (2 * r)
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "pads": pads, "storage_order": so}
    name = "max_pool indices %s %s k=%s s=%s d=%s pads=%s storage_order=%d%s" % (
        dt, shp(shape), k, s, d, pads, so, " nan" if nan else "")

    def build():
        rng = rng_for(name)
        if dt in ("i8", "u8"):
            x = rng.integers(np.iinfo(NP[dt]).min, np.iinfo(NP[dt]).max, shape, dtype=NP[dt], endpoint=True)
        else:
            x = np.round(rng.standard_normal(shape) * 4).astype(NP[dt])  # ties: the first maximum
            if nan:
                x.reshape(-1)[rng.choice(x.size, max(1, x.size // 20), replace=False)] = np.nan
        out = pool_out(shape[2:], k, s, d, pads)
        y, idx = maxpool_idx_ref(x, k, s, d, pads, out, so)
        if r == 2 and so == 0 and dt in ("f32", "f64") and not nan and all(pads[i] <= k[i] // 2 for i in range(2)) \
                and pads[:2] == pads[2:]:
            import torch
            ty, ti = torch.nn.functional.max_pool2d(torch.from_numpy(x.astype(np.float64)), k, s, pads[:2], d,
                                                    return_indices=True)
            plane = shape[2] * shape[3]
            base = (np.arange(shape[0] * shape[1]) * plane).reshape(shape[0], shape[1], 1, 1)
            if not (np.array_equal(ty.numpy(), y) and np.array_equal(ti.numpy() + base, idx)):
                raise AssertionError("oracle disagrees with PyTorch's max_pool2d indices")
        return {"inputs": [("x", x, dt)], "expect": {"y": y.astype(NP[dt]), "i": idx}, "tol": EXACT}
    return Case(name, "max_pool", attrs=attrs, outputs=["y", "i"], build=build)


def unpool_case(dt, shape, k, s, pads=None, grow=0):
    r = len(k)
    pads = pads or [0] * (2 * r)
    unp = [(shape[2 + i] - 1) * s[i] - pads[i] - pads[r + i] + k[i] for i in range(r)]
    attrs = {"kernel_shape": k, "strides": s, "pads": pads}
    out = list(shape[:2]) + [u + grow for u in unp]
    if grow:
        attrs["output_shape"] = out
    name = "max_unpool %s %s k=%s s=%s pads=%s output_shape=%s" % (dt, shp(shape), k, s, pads, out if grow else "-")

    def build():
        rng = rng_for(name)
        x = rng.standard_normal(shape).astype(NP[dt])
        total = shape[0] * shape[1] * int(np.prod(unp))
        idx = rng.integers(0, total, shape).astype(np.int64)
        y = np.zeros(total)
        for e in range(x.size):  # in order: the last of equal indices wins
            y[idx.reshape(-1)[e]] = x.reshape(-1)[e]
        full = np.zeros(out)
        full[tuple(slice(0, v) for v in list(shape[:2]) + unp)] = y.reshape(list(shape[:2]) + unp)
        return {"inputs": [("x", x, dt), ("i", idx, "i64")], "expect": {"y": full.astype(NP[dt])}, "tol": EXACT}
    return Case(name, "max_unpool", attrs=attrs, build=build)


def scatter_case(dt, cs, us, axis, mode, with_idx=True):
    name = "tensor_scatter %s %s update %s axis=%d %s%s" % (dt, shp(cs), shp(us), axis, mode,
                                                           "" if with_idx else " no write_indices")

    def build():
        rng = rng_for(name)
        a = axis % len(cs)
        cache = (rng.standard_normal(cs) * 10).astype(NP[dt])
        upd = (rng.standard_normal(us) * 10).astype(NP[dt])
        if mode == "linear":
            w = rng.integers(0, cs[a] - us[a] + 1, [cs[0]])
        else:
            w = rng.integers(-2 * cs[a], 2 * cs[a], [cs[0]])
        w = w if with_idx else np.zeros(cs[0], np.int64)
        y = cache.copy()
        for pre in np.ndindex(*cs[:a]):
            for q in range(us[a]):
                pos = w[pre[0]] + q
                if mode == "circular":
                    pos %= cs[a]
                y[pre + (pos,)] = upd[pre + (q,)]
        inputs = [("past_cache", cache, dt), ("update", upd, dt)] + ([("write_indices", w.astype(np.int64))]
                                                                      if with_idx else [])
        return {"inputs": inputs, "expect": {"y": y}, "tol": EXACT}
    return Case(name, "tensor_scatter", attrs={"axis": axis, "mode": mode}, build=build)


def bn_train_case(dt, shape, eps=1e-5, mom=0.9):
    name = "batch_norm training %s %s epsilon=%g momentum=%g" % (dt, shp(shape), eps, mom)

    def build():
        rng = rng_for(name)
        C = shape[1]
        x = (rng.standard_normal(shape) * 2 + 1).astype(NP[dt])
        sc, bi = rng.uniform(0.5, 1.5, C).astype(NP[dt]), rng.uniform(-1, 1, C).astype(NP[dt])
        rm, rv = rng.uniform(-0.5, 0.5, C).astype(NP[dt]), rng.uniform(0.1, 2, C).astype(NP[dt])
        X = x.astype(np.float64)
        ax = tuple(i for i in range(len(shape)) if i != 1)
        m, v = X.mean(axis=ax), X.var(axis=ax)
        bshape = [1, C] + [1] * (len(shape) - 2)
        xhat = (X - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + eps)
        y = xhat * sc.reshape(bshape) + bi.reshape(bshape)
        K = x.size // C
        scale = (np.abs(xhat) + 1) * np.abs(sc.astype(np.float64)).reshape(bshape) + np.abs(bi).reshape(bshape)
        tol = Tol(r=2, a=4 * math.sqrt(K) + 16, scale=scale)
        return {"inputs": [("x", x), ("scale", sc), ("bias", bi), ("mean", rm), ("var", rv)],
                "expect": {"y": y.astype(NP[dt]), "running_mean": (rm * mom + m * (1 - mom)).astype(NP[dt]),
                           "running_var": (rv * mom + v * (1 - mom)).astype(NP[dt])},
                "tol": {"y": tol, "running_mean": Tol(r=4, a=4 * math.sqrt(K) + 4, scale=2 + np.abs(m)),
                        "running_var": Tol(r=4, a=4 * math.sqrt(K) + 4, scale=4 + 2 * v)}}
    return Case(name, "batch_norm", attrs={"epsilon": eps, "momentum": mom, "training_mode": 1},
                outputs=["y", "running_mean", "running_var"], build=build)


def error_cases():
    x = np.zeros((1, 1, 4, 4), np.float32)
    return [
        Case("max_pool indices storage_order=2 refused", "max_pool", inputs=[("x", x)],
             attrs={"kernel_shape": [2, 2], "storage_order": 2}, outputs=["y", "i"], exit_code=3,
             stderr_re="storage_order"),
        Case("max_unpool output_shape smaller than unpooled refused", "max_unpool",
             inputs=[("x", x), ("i", np.zeros((1, 1, 4, 4), np.int64))],
             attrs={"kernel_shape": [2, 2], "strides": [2, 2], "output_shape": [1, 1, 7, 8]}, exit_code=3,
             stderr_re="output_shape"),
        Case("max_unpool index out of range fails the run", "max_unpool",
             inputs=[("x", x[:, :, :2, :2]), ("i", np.array([[[[0, 1], [2, 16]]]], np.int64))],
             attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, exit_code=3, stderr_re="out of range"),
        Case("tensor_scatter linear write past the axis fails the run", "tensor_scatter",
             inputs=[("c", np.zeros((2, 5, 3), np.float32)), ("u", np.ones((2, 2, 3), np.float32)),
                     ("w", np.array([0, 4], np.int64))], attrs={"axis": 1}, exit_code=3, stderr_re="do not fit"),
        Case("tensor_scatter axis 0 refused", "tensor_scatter",
             inputs=[("c", np.zeros((2, 5), np.float32)), ("u", np.ones((1, 5), np.float32))], attrs={"axis": 0},
             exit_code=3, stderr_re="batch dim"),
        Case("batch_norm running outputs without training_mode refused", "batch_norm",
             inputs=[("x", x), ("s", np.ones(1, np.float32)), ("b", np.zeros(1, np.float32)),
                     ("m", np.zeros(1, np.float32)), ("v", np.ones(1, np.float32))],
             outputs=["y", "rm", "rv"], exit_code=3, stderr_re="training_mode"),
    ]


def cases():
    c = []
    for dt in ("f32", "f64", "i8", "u8"):
        c.append(maxpool_case(dt, (2, 3, 7, 9), [3, 3], [2, 2], pads=[1, 1, 1, 1]))
        c.append(maxpool_case(dt, (2, 3, 7, 9), [3, 2], [1, 2], d=[2, 1], so=1))
    c.append(maxpool_case("f32", (1, 2, 13), [4], [3], pads=[2, 1]))
    c.append(maxpool_case("f32", (1, 2, 5, 6, 4), [2, 3, 2], [1, 2, 1], pads=[0, 1, 0, 1, 1, 1], so=1))
    c.append(maxpool_case("f32", (1, 2, 5, 6, 4), [2, 3, 2], [1, 2, 1], pads=[0, 1, 0, 1, 1, 1], so=0))
    c.append(maxpool_case("f32", (2, 4, 10, 10), [3, 3], [2, 2], nan=True))
    for dt in ("f32", "f64"):
        c.append(unpool_case(dt, (2, 3, 4, 5), [2, 2], [2, 2]))
        c.append(unpool_case(dt, (2, 3, 4, 5), [3, 3], [2, 2], pads=[1, 0, 1, 1], grow=2))
    c.append(unpool_case("f32", (1, 2, 7), [3], [2], grow=1))
    c.append(unpool_case("f32", (1, 2, 3, 2, 4), [2, 2, 2], [2, 2, 2]))
    for dt in ("f32", "f64", "i8", "i64", "u16"):
        c.append(scatter_case(dt, (2, 3, 8, 4), (2, 3, 3, 4), -2, "linear"))
        c.append(scatter_case(dt, (3, 10, 5), (3, 4, 5), 1, "circular"))
    c.append(scatter_case("f32", (2, 6), (2, 6), 1, "circular"))
    c.append(scatter_case("f32", (2, 5, 3), (2, 2, 3), 1, "linear", with_idx=False))
    for dt in ("f32", "f64"):
        c.append(bn_train_case(dt, (4, 6)))
        c.append(bn_train_case(dt, (2, 3, 17, 19), eps=1e-2, mom=0.7))
        c.append(bn_train_case(dt, (8, 16, 28, 28)))
    return c + error_cases()
