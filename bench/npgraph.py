"""A small NumPy interpreter of the ftrun graph format (see ftrun-graph(5)).

It exists so that bench/examples.py and bench/run.py can time NumPy doing
the same work as ftrun, and check that both give the same values; run.py's
PyTorch interpreter (torchgraph.py) reuses its reader and value sources. It
covers the value sources (data, file, init with ftrun's Philox-4x32-10
generator) and the ops of the example and bench graphs (and a few more), not
the whole op list.

    g = Graph.load("graphs/mlp.json")
    vals = g.values(feeds={"x": np.load("x.npy")})   # constants and inputs
    outs = g.run(vals)                               # {output name: array}
"""
import json
import math
import os

import numpy as np

DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "bool": np.bool_,
    # NumPy's names, accepted as aliases
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "bool_": np.bool_,
}

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, key):
    """Philox-4x32-10 for an array of 64-bit counters and one 64-bit key.

    The counter words are (lo32(i), hi32(i), 0, 0), the key words
    (lo32(key), hi32(key)). Returns the four output words as uint64 arrays
    (each holding a 32-bit value). In-place ufuncs: a round then costs a few
    passes over the block instead of a dozen fresh temporaries."""
    counter = np.asarray(counter, dtype=np.uint64)
    c0 = counter & MASK32
    c1 = counter >> np.uint64(32)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    p0 = np.empty_like(c0)
    p1 = np.empty_like(c0)
    s32 = np.uint64(32)
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        np.multiply(c0, M0, out=p0)
        np.multiply(c2, M1, out=p1)
        np.right_shift(p1, s32, out=c0)
        c0 ^= c1
        c0 ^= np.uint64(k0)
        np.bitwise_and(p1, MASK32, out=c1)
        np.right_shift(p0, s32, out=c2)
        c2 ^= c3
        c2 ^= np.uint64(k1)
        np.bitwise_and(p0, MASK32, out=c3)
        k0 = (k0 + W0) & 0xFFFFFFFF
        k1 = (k1 + W1) & 0xFFFFFFFF
    return c0, c1, c2, c3


def _unit53(hi, lo):
    return ((hi >> np.uint64(5)).astype(np.float64) * 67108864.0
            + (lo >> np.uint64(6)).astype(np.float64)) / 9007199254740992.0


# Elements per Philox block: the block's working set (six uint64 arrays) stays
# in cache, which makes initialising a 16M-element weight about 7x faster
# than one pass over whole arrays.
_INIT_BLOCK = 1 << 16


def _init_block(spec, start, stop, seed):
    i = np.arange(start, stop, dtype=np.uint64)
    if "fill" in spec:
        return np.full(stop - start, float(spec["fill"]), dtype=np.float64)
    if "arange" in spec:
        a = spec["arange"]
        return float(a.get("start", 0)) + i.astype(np.float64) * float(a.get("step", 1))
    x0, x1, x2, x3 = philox4x32_10(i, seed)
    u1 = _unit53(x0, x1)
    if "uniform" in spec:
        u = spec["uniform"]
        low, high = float(u.get("low", 0)), float(u.get("high", 1))
        return low + (high - low) * u1
    if "normal" in spec:
        u = spec["normal"]
        mean, std = float(u.get("mean", 0)), float(u.get("std", 1))
        u2 = _unit53(x2, x3)
        return mean + std * np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * math.pi * u2)
    raise ValueError("unknown init %r" % (spec,))


def float_to_int(v, dt):
    """Doubles to an integer dtype as ftrun converts them: truncation toward
    zero, NaN -> 0, saturation at the dtype's range (2^63 itself is not an
    int64, hence the comparisons in double before converting)."""
    info = np.iinfo(dt)
    v = np.trunc(np.nan_to_num(np.asarray(v, dtype=np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf))
    hi, lo = v >= float(info.max), v <= float(info.min)
    y = np.where(hi | lo, 0.0, v).astype(dt)
    y[hi] = info.max
    y[lo] = info.min
    return y


def init_values(spec, dtype, shape, seed_override=None):
    """Values of an "init" value source, computed in double, then converted."""
    n = int(np.prod(shape, dtype=np.int64))
    seed = int(spec.get("seed", 0)) if seed_override is None else seed_override
    dt = np.dtype(dtype)
    out = np.empty(n, dtype=dt)
    for start in range(0, n, _INIT_BLOCK):
        stop = min(n, start + _INIT_BLOCK)
        v = _init_block(spec, start, stop, seed)
        if dt.kind in "iu":
            v = float_to_int(v, dt)
        elif dt == np.float16:
            v = v.astype(np.float32).astype(np.float16)
        else:
            v = v.astype(dt)
        out[start:stop] = v
    return out.reshape(shape)


def _data_value(x):
    if isinstance(x, str):
        return {"nan": math.nan, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf}[x]
    return x


def _flatten(x):
    if isinstance(x, list):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    return [_data_value(x)]


class Graph:
    def __init__(self, doc, path):
        self.doc = doc
        self.path = path
        self.name = doc.get("name", os.path.basename(path))
        self.tensors = doc.get("tensors", {})
        self.inputs = doc.get("inputs", [])
        self.outputs = doc["outputs"]
        self.nodes = self._toposort(doc["nodes"])

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f), path)

    @staticmethod
    def _toposort(nodes):
        nodes = [dict(n, name=n.get("name") or "%s_%d" % (n["op"], i)) for i, n in enumerate(nodes)]
        producer = {}
        for i, n in enumerate(nodes):
            for t in n["outputs"]:
                producer[t] = i
        order, state = [], [0] * len(nodes)

        def visit(i):
            if state[i] == 2:
                return
            if state[i] == 1:
                raise ValueError("cycle through node %r" % nodes[i]["name"])
            state[i] = 1
            for t in nodes[i]["inputs"]:
                if t and t in producer:
                    visit(producer[t])
            state[i] = 2
            order.append(nodes[i])

        for i in range(len(nodes)):
            visit(i)
        return order

    def values(self, feeds=None, seed=None):
        """Every declared tensor with a value: feeds first, then the value source."""
        feeds = feeds or {}
        vals = {}
        base = os.path.dirname(os.path.abspath(self.path))
        for name, d in self.tensors.items():
            dt = DTYPES[d["dtype"]]
            shape = tuple(d["shape"])
            if name in feeds:
                v = np.asarray(feeds[name])
            elif "data" in d:
                v = np.array(_flatten(d["data"]), dtype=np.float64 if dt != np.bool_ else np.bool_)
                v = v.astype(dt).reshape(shape)
            elif "file" in d:
                fp = os.path.join(base, d["file"])
                with open(fp, "rb") as f:
                    magic = f.read(6)
                if magic == b"\x93NUMPY":
                    v = np.load(fp)
                else:
                    n = int(np.prod(shape, dtype=np.int64))
                    v = np.fromfile(fp, dtype=np.dtype(dt).newbyteorder("<"), count=n,
                                    offset=int(d.get("offset", 0))).astype(dt).reshape(shape)
            elif "init" in d:
                v = init_values(d["init"], dt, shape, seed)
            else:
                continue
            vals[name] = np.ascontiguousarray(v)
        return vals

    def run(self, vals):
        env = dict(vals)
        for n in self.nodes:
            ins = [env[t] if t else None for t in n["inputs"]]
            outs = OPS[n["op"]](ins, n.get("attrs", {}))
            if not isinstance(outs, tuple):
                outs = (outs,)
            for t, v in zip(n["outputs"], outs):
                if t:
                    env[t] = v
        return {t: env[t] for t in self.outputs}


# --- ops (ONNX semantics, static parameters as attributes) -------------------

def _axes(a, key="axes"):
    ax = a.get(key)
    return None if ax is None or len(ax) == 0 else tuple(ax)


def _reduce(fn):
    def op(ins, a):
        x = ins[0]
        ax = _axes(a)
        if ax is None and a.get("noop_with_empty_axes", 0):
            return x
        return fn(x, axis=ax, keepdims=bool(a.get("keepdims", 1))).astype(x.dtype, copy=False)
    return op


def _arg(fn):
    def op(ins, a):
        r = fn(ins[0], axis=a.get("axis", 0))
        if a.get("keepdims", 1):
            r = np.expand_dims(r, a.get("axis", 0))
        return r.astype(np.int64)
    return op


def _layer_norm(ins, a):
    x = ins[0]
    axis = a.get("axis", -1) % x.ndim
    eps = a.get("epsilon", 1e-5)
    ax = tuple(range(axis, x.ndim))
    mean = x.mean(axis=ax, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=ax, keepdims=True)
    y = d / np.sqrt(var + x.dtype.type(eps))
    if len(ins) > 1 and ins[1] is not None:
        y = y * ins[1]
    if len(ins) > 2 and ins[2] is not None:
        y = y + ins[2]
    return y


def _softmax(ins, a):
    x = ins[0]
    axis = a.get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(ins, a):
    x = ins[0]
    axis = a.get("axis", -1)
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)


def _erf_np(x):
    """Vectorised erf: a rational approximation on [-4, 4] (as in Eigen's
    float erf), a few ulp in f32; NumPy itself has no erf and SciPy is not
    assumed. Computed in the input's dtype (f32 stays f32, as ftrun does)."""
    t = x.dtype.type
    x = np.clip(x, t(-4), t(4))
    x2 = x * x
    p = t(_ERF_P[0])
    for c in _ERF_P[1:]:
        p = p * x2 + t(c)
    q = t(_ERF_Q[0])
    for c in _ERF_Q[1:]:
        q = q * x2 + t(c)
    return x * p / q


def _gelu(ins, a):
    x = ins[0]
    t = x.dtype.type
    if a.get("approximate", "none") == "tanh":
        c = t(math.sqrt(2.0 / math.pi))
        return t(0.5) * x * (t(1) + np.tanh(c * (x + t(0.044715) * x * x * x)))
    return t(0.5) * x * (t(1) + _erf_np(x * t(1.0 / math.sqrt(2.0))))


def _reshape(ins, a):
    x = ins[0]
    shape = list(a["shape"])
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def _slice(ins, a):
    x = ins[0]
    starts, ends = a["starts"], a["ends"]
    axes = a.get("axes") or list(range(len(starts)))
    steps = a.get("steps") or [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        idx[ax] = slice(s, e, st)
    return x[tuple(idx)]


def _clip(x, lo, hi):
    if x.dtype.kind in "iu":  # integer bounds: ceil(min), floor(max), within the dtype's range
        info = np.iinfo(x.dtype)
        lo = info.min if lo == -np.inf else min(max(math.ceil(lo), info.min), info.max)
        hi = info.max if hi == np.inf else min(max(math.floor(hi), info.min), info.max)
        return np.clip(x, lo, hi).astype(x.dtype)
    return np.clip(x, x.dtype.type(lo), x.dtype.type(hi))


def _cast(ins, a):
    x = ins[0]
    dt = np.dtype(DTYPES[a["to"]])
    if x.dtype.kind == "f" and dt.kind in "iu":
        return float_to_int(x, dt)
    return x.astype(dt)


def _gemm(ins, a):
    A, B = ins[0], ins[1]
    if a.get("trans_a", 0):
        A = A.T
    if a.get("trans_b", 0):
        B = B.T
    t = A.dtype.type
    y = A @ B
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if alpha != 1.0:
        y = y * t(alpha)
    if len(ins) > 2 and ins[2] is not None:
        y = y + (ins[2] if beta == 1.0 else t(beta) * ins[2])
    return y


def _per_channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm(ins, a):
    x, scale, bias, mean, var = ins
    t = x.dtype.type
    k = scale / np.sqrt(var + t(a.get("epsilon", 1e-5)))
    return (x - _per_channel(mean, x.ndim)) * _per_channel(k, x.ndim) + _per_channel(bias, x.ndim)


def spatial_params(a, in_sizes, kernel):
    """strides, dilations, begin pads, end pads and output sizes of a conv or
    pool over spatial sizes in_sizes (ONNX rules, auto_pad included; ceil_mode
    drops a last window that would start in the end padding, as ftrun and
    PyTorch do)."""
    r = len(in_sizes)
    strides = list(a.get("strides") or [1] * r)
    dil = list(a.get("dilations") or [1] * r)
    pads = list(a.get("pads") or [0] * (2 * r))
    ceil_mode = a.get("ceil_mode", 0)
    auto = a.get("auto_pad", "NOTSET")
    pb, pe, out = pads[:r], pads[r:], []
    for i in range(r):
        eff = (kernel[i] - 1) * dil[i] + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-in_sizes[i] // strides[i])
            total = max(0, (o - 1) * strides[i] + eff - in_sizes[i])
            small, big = total // 2, total - total // 2
            pb[i], pe[i] = (small, big) if auto == "SAME_UPPER" else (big, small)
        elif auto == "VALID":
            pb[i] = pe[i] = 0
        span = in_sizes[i] + pb[i] + pe[i] - eff
        o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= in_sizes[i] + pb[i]:
            o -= 1
        out.append(o)
    return strides, dil, pb, pe, out


def _windows(x, kernel, a, fill):
    """x [N, C, *spatial] -> a strided view [N, C, *out, *kernel] of the padded
    input (padding value fill), and the output sizes."""
    r = x.ndim - 2
    strides, dil, pb, pe, out = spatial_params(a, x.shape[2:], kernel)
    eff = [(kernel[i] - 1) * dil[i] + 1 for i in range(r)]
    # extra end padding so that every ceil_mode window exists
    pe = [max(pe[i], (out[i] - 1) * strides[i] + eff[i] - x.shape[2 + i] - pb[i]) for i in range(r)]
    if any(pb) or any(pe):
        x = np.pad(x, [(0, 0), (0, 0)] + list(zip(pb, pe)), constant_values=fill)
    v = np.lib.stride_tricks.sliding_window_view(x, eff, axis=tuple(range(2, 2 + r)))
    idx = (slice(None), slice(None)) + tuple(slice(0, (out[i] - 1) * strides[i] + 1, strides[i]) for i in range(r)) \
        + tuple(slice(None, None, dil[i]) for i in range(r))
    return v[idx], out


def _conv(ins, a):
    """im2col: one contiguous copy per kernel offset into cols [N, C*K, P],
    then a batched BLAS product [O, C*K] x [C*K, P] per group, which lands
    directly in [N, O, *out] order."""
    x, w = ins[0], ins[1]
    r = x.ndim - 2
    g = a.get("group", 1)
    kernel = w.shape[2:]
    strides, dil, pb, pe, out = spatial_params(a, x.shape[2:], kernel)
    if any(pb) or any(pe):
        x = np.pad(x, [(0, 0), (0, 0)] + list(zip(pb, pe)))
    n, c = x.shape[:2]
    ksize, p = int(np.prod(kernel)), int(np.prod(out))
    cols = np.empty((n, c, ksize) + tuple(out), dtype=x.dtype)
    for j, off in enumerate(np.ndindex(*kernel)):
        idx = tuple(slice(off[i] * dil[i], off[i] * dil[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                    for i in range(r))
        cols[:, :, j] = x[(slice(None), slice(None)) + idx]
    cg, og = c // g, w.shape[0] // g
    cols = cols.reshape(n, g, cg * ksize, p)
    wg = w.reshape(g, og, cg * ksize)
    y = np.empty((n, g, og, p), dtype=x.dtype)
    for i in range(g):
        np.matmul(wg[i], cols[:, i], out=y[:, i])
    y = y.reshape((n, g * og) + tuple(out))
    if len(ins) > 2 and ins[2] is not None:
        y += _per_channel(ins[2], y.ndim)
    return y


def _lowest(dt):
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


def _max_pool(ins, a):
    x = ins[0]
    r = x.ndim - 2
    xw, _ = _windows(x, a["kernel_shape"], a, _lowest(x.dtype))
    return xw.max(axis=tuple(range(2 + r, 2 + 2 * r)))


def _average_pool(ins, a):
    x = ins[0]
    r = x.ndim - 2
    axes = tuple(range(2 + r, 2 + 2 * r))
    xw, _ = _windows(x, a["kernel_shape"], a, 0)
    total = xw.sum(axis=axes, dtype=x.dtype)
    # the divisor: elements of the input (or of input and explicit pads with
    # count_include_pad) under each window, never the ceil_mode overhang
    ones = np.ones((1, 1) + x.shape[2:], dtype=x.dtype)
    if a.get("count_include_pad", 0):
        _, _, pb, pe, _ = spatial_params(a, x.shape[2:], a["kernel_shape"])
        ones = np.pad(ones, [(0, 0), (0, 0)] + list(zip(pb, pe)), constant_values=1)
        a = dict(a, pads=[0] * (2 * r), auto_pad="NOTSET")
    cw, _ = _windows(ones, a["kernel_shape"], a, 0)
    return (total / cw.sum(axis=axes, dtype=x.dtype)).astype(x.dtype)


def _complex(x):
    return x[..., 0] + 1j * x[..., 1].astype(np.result_type(x.dtype, np.complex64))


def _real_pair(z, dt):
    return np.ascontiguousarray(np.stack([z.real, z.imag], axis=-1).astype(dt))


def _fft(fn, complex_in, real_out):
    """numpy.fft computes in double; the result is rounded to the input's dtype."""
    def op(ins, a):
        x = ins[0]
        v = _complex(x) if complex_in else x
        kw = {"axis": a.get("axis", -1), "norm": a.get("norm", "backward")}
        if real_out and a.get("n") is not None:
            kw["n"] = a["n"]
        z = fn(v, **kw)
        return z.astype(x.dtype) if real_out else _real_pair(z, x.dtype)
    return op


OPS = {
    "identity": lambda i, a: i[0].copy(),
    "neg": lambda i, a: -i[0],
    "abs": lambda i, a: np.abs(i[0]),
    "relu": lambda i, a: np.maximum(i[0], i[0].dtype.type(0)),
    "sigmoid": lambda i, a: 1 / (1 + np.exp(-i[0])),
    "tanh": lambda i, a: np.tanh(i[0]),
    "exp": lambda i, a: np.exp(i[0]),
    "log": lambda i, a: np.log(i[0]),
    "sqrt": lambda i, a: np.sqrt(i[0]),
    "rsqrt": lambda i, a: 1 / np.sqrt(i[0]),
    "reciprocal": lambda i, a: 1 / i[0],
    "erf": lambda i, a: _erf_np(i[0]),
    "sin": lambda i, a: np.sin(i[0]),
    "cos": lambda i, a: np.cos(i[0]),
    "floor": lambda i, a: np.floor(i[0]),
    "ceil": lambda i, a: np.ceil(i[0]),
    "round": lambda i, a: np.round(i[0]),
    "silu": lambda i, a: i[0] / (1 + np.exp(-i[0])),
    "leaky_relu": lambda i, a: np.where(i[0] >= 0, i[0], i[0] * i[0].dtype.type(a.get("alpha", 0.01))),
    "gelu": _gelu,
    "clip": lambda i, a: _clip(i[0], a.get("min", -np.inf), a.get("max", np.inf)),
    "cast": _cast,
    "not": lambda i, a: np.logical_not(i[0]),
    "is_nan": lambda i, a: np.isnan(i[0]),
    "is_inf": lambda i, a: np.isinf(i[0]),
    "add": lambda i, a: i[0] + i[1],
    "sub": lambda i, a: i[0] - i[1],
    "mul": lambda i, a: i[0] * i[1],
    "div": lambda i, a: i[0] / i[1] if i[0].dtype.kind == "f" else np.trunc(i[0] / i[1]).astype(i[0].dtype),
    "pow": lambda i, a: np.power(i[0], i[1]).astype(i[0].dtype),
    "max": lambda i, a: _fold(np.maximum, i),
    "min": lambda i, a: _fold(np.minimum, i),
    "equal": lambda i, a: i[0] == i[1],
    "less": lambda i, a: i[0] < i[1],
    "less_equal": lambda i, a: i[0] <= i[1],
    "greater": lambda i, a: i[0] > i[1],
    "greater_equal": lambda i, a: i[0] >= i[1],
    "and": lambda i, a: i[0] & i[1],
    "or": lambda i, a: i[0] | i[1],
    "xor": lambda i, a: i[0] ^ i[1],
    "where": lambda i, a: np.where(i[0], i[1], i[2]),
    "matmul": lambda i, a: np.matmul(i[0], i[1]),
    "gemm": _gemm,
    "reduce_sum": _reduce(np.sum),
    "reduce_mean": _reduce(np.mean),
    "reduce_max": _reduce(np.max),
    "reduce_min": _reduce(np.min),
    "reduce_prod": _reduce(np.prod),
    "argmax": _arg(np.argmax),
    "argmin": _arg(np.argmin),
    "cumsum": lambda i, a: np.cumsum(i[0], axis=a["axis"], dtype=i[0].dtype),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "layer_norm": _layer_norm,
    "batch_norm": _batch_norm,
    "conv": _conv,
    "max_pool": _max_pool,
    "average_pool": _average_pool,
    "global_average_pool": lambda i, a: i[0].mean(axis=tuple(range(2, i[0].ndim)), keepdims=True, dtype=i[0].dtype),
    "global_max_pool": lambda i, a: i[0].max(axis=tuple(range(2, i[0].ndim)), keepdims=True),
    "fft": _fft(np.fft.fft, True, False),
    "ifft": _fft(np.fft.ifft, True, False),
    "rfft": _fft(np.fft.rfft, False, False),
    "irfft": _fft(np.fft.irfft, True, True),
    "reshape": _reshape,
    "transpose": lambda i, a: np.transpose(i[0], a.get("perm")),
    "flatten": lambda i, a: i[0].reshape(int(np.prod(i[0].shape[:a.get("axis", 1)])), -1),
    "squeeze": lambda i, a: np.squeeze(i[0], axis=_axes(a)),
    "unsqueeze": lambda i, a: np.expand_dims(i[0], tuple(a["axes"])),
    "concat": lambda i, a: np.concatenate(i, axis=a["axis"]),
    "slice": _slice,
    "gather": lambda i, a: np.take(i[0], i[1], axis=a.get("axis", 0)),
}


def _fold(f, xs):
    r = xs[0]
    for x in xs[1:]:
        r = f(r, x)
    return r
