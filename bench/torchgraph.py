"""A PyTorch interpreter of the ftrun graph format (see ftrun-graph(5)), the
"PyTorch eager" peer of bench/run.py.

It reads the same JSON file as ftrun, builds the same values (bench/npgraph.py
reads the file and generates "init" values with ftrun's Philox-4x32-10
generator, bit for bit; the arrays become tensors without a copy), orders the
nodes topologically and runs each with torch functions under
torch.inference_mode(). Op semantics are ftrun's (ONNX, static parameters as
attributes). It covers the ops of bench/graphs/ and graphs/ and most of the
catalogue, not all of it: an op it lacks raises NotImplementedError naming it.

    g = TorchGraph.load("bench/graphs/mlp.json")        # device="cpu"
    vals = g.values()                                   # {name: tensor}
    outs = g.run(vals)                                  # {output name: tensor}

    g = TorchGraph.load("graphs/transformer_block.json", device="cuda")
    outs = {k: to_numpy(v) for k, v in g.run(g.values()).items()}

With device="cuda" the values are copied to the GPU once, by values(), and
every op makes its results on its inputs' device (the index and mask tensors
an op creates take device= from its inputs). Kernels run asynchronously: a
caller timing a run calls torch.cuda.synchronize() before reading the clock,
and to_numpy() brings outputs back to the host.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npgraph  # noqa: E402

TORCH_DTYPES = {
    np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64, np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16, np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.bool_): torch.bool,
}
INT_RANGE = {torch.int8: (-2**7, 2**7 - 1), torch.int16: (-2**15, 2**15 - 1), torch.int32: (-2**31, 2**31 - 1),
             torch.int64: (-2**63, 2**63 - 1), torch.uint8: (0, 255)}


def torch_dtype(name):
    return TORCH_DTYPES[np.dtype(npgraph.DTYPES[name])]


class TorchGraph:
    def __init__(self, graph, device="cpu"):
        self.graph = graph
        self.name = graph.name
        self.device = torch.device(device)
        self.outputs = graph.outputs
        self.steps = [self._compile(n) for n in graph.nodes]

    @classmethod
    def load(cls, path, device="cpu"):
        return cls(npgraph.Graph.load(path), device)

    @staticmethod
    def _compile(node):
        op = node["op"]
        if op not in OPS:
            raise NotImplementedError("torchgraph: op '%s' (node '%s') is not implemented" % (op, node["name"]))
        fn = OPS[op](node.get("attrs", {}), node)
        return fn, tuple(node["inputs"]), tuple(node["outputs"])

    def values(self, feeds=None, seed=None, np_values=None):
        """Every declared tensor with a value, as tensors on the device.
        np_values (from npgraph's Graph.values) avoids building them twice."""
        if np_values is None:
            np_values = self.graph.values(feeds, seed)
        return {k: torch.from_numpy(np.ascontiguousarray(v)).to(self.device) for k, v in np_values.items()}

    def run(self, vals):
        env = dict(vals)
        with torch.inference_mode():
            for fn, ins, outs in self.steps:
                r = fn([env[t] if t else None for t in ins])
                if isinstance(r, (tuple, list)):
                    for t, v in zip(outs, r):
                        if t:
                            env[t] = v
                else:
                    env[outs[0]] = r
        return {t: env[t] for t in self.outputs}


def to_numpy(t):
    return t.detach().to("cpu").contiguous().numpy()


# --- helpers ------------------------------------------------------------------

def _opt(ins, i):
    return ins[i] if len(ins) > i else None


def _dims(a, ndim, key="axes"):
    ax = a.get(key)
    if not ax:
        return None
    return tuple(sorted(x % ndim for x in ax))


def _float_to_int(x, dt):
    """ftrun's float -> int: truncate toward zero, NaN -> 0, saturate."""
    lo, hi = INT_RANGE[dt]
    y = torch.trunc(torch.nan_to_num(x.double(), nan=0.0, posinf=math.inf, neginf=-math.inf))
    big, small = y >= float(hi), y <= float(lo)
    r = torch.where(big | small, torch.zeros_like(y), y).to(dt)
    r = torch.where(big, torch.full_like(r, hi), r)
    return torch.where(small, torch.full_like(r, lo), r)


def _is_float(x):
    return x.dtype.is_floating_point


# --- op factories: f(attrs, node) -> fn(list of inputs) -----------------------

def _unary(f):
    return lambda a, n: lambda i: f(i[0])


def _binary(f):
    return lambda a, n: lambda i: f(i[0], i[1])


def _clip(a, n):
    lo, hi = a.get("min", -math.inf), a.get("max", math.inf)

    def fn(i):
        x = i[0]
        if _is_float(x):
            return torch.clamp(x, lo, hi)
        rlo, rhi = INT_RANGE[x.dtype]
        ilo = rlo if lo == -math.inf else max(rlo, min(rhi, math.ceil(lo)))
        ihi = rhi if hi == math.inf else max(rlo, min(rhi, math.floor(hi)))
        return torch.clamp(x, ilo, ihi)
    return fn


def _cast(a, n):
    dt = torch_dtype(a["to"])

    def fn(i):
        x = i[0]
        if _is_float(x) and dt in INT_RANGE:
            return _float_to_int(x, dt)
        return x.to(dt)
    return fn


def _div(a, n):
    def fn(i):
        x, y = i
        if _is_float(x):
            return torch.div(x, y)
        return torch.div(x, y, rounding_mode="trunc").to(x.dtype)
    return fn


def _mod(a, n):
    f = torch.fmod if a.get("fmod", 0) else torch.remainder
    return lambda i: f(i[0], i[1])


def _fold(f):
    def factory(a, n):
        def fn(i):
            r = i[0]
            for x in i[1:]:
                r = f(r, x)
            return r
        return fn
    return factory


def _gemm(a, n):
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    ta, tb = a.get("trans_a", 0), a.get("trans_b", 0)

    def fn(i):
        A, B, C = i[0], i[1], _opt(i, 2)
        if ta:
            A = A.t()
        if tb:
            B = B.t()
        if C is None:
            y = torch.mm(A, B)
            return y if alpha == 1.0 else y * alpha
        return torch.addmm(C, A, B, beta=beta, alpha=alpha)
    return fn


def _reduce(kind):
    def factory(a, n):
        keep = bool(a.get("keepdims", 1))
        noop = a.get("noop_with_empty_axes", 0)

        def fn(i):
            x = i[0]
            dims = _dims(a, x.ndim) if x.ndim else None
            if dims is None:
                if noop:
                    return x
                dims = tuple(range(x.ndim))
            if x.ndim == 0:
                dims = ()
            if not dims:
                return REDUCE_SCALAR[kind](x)
            return REDUCE[kind](x, dims, keep)
        return fn
    return factory


def _int_sum(x, d, k):
    return torch.sum(x, dim=d, keepdim=k).to(x.dtype)


def _mean(x, d, k):
    if _is_float(x):
        return torch.mean(x, dim=d, keepdim=k)
    cnt = int(np.prod([x.shape[j] for j in d]))
    s = torch.sum(x, dim=d, keepdim=k, dtype=torch.int64)
    return torch.div(s, max(cnt, 1), rounding_mode="trunc").to(x.dtype)


def _prod(x, d, k):
    for j in sorted(d, reverse=True):
        x = torch.prod(x, dim=j, keepdim=k, dtype=x.dtype)
    return x


def _extreme(f, b):
    return lambda x, d, k: (b(x, dim=d, keepdim=k) if x.dtype == torch.bool else f(x, dim=d, keepdim=k))


def _any(x, dim, keepdim):
    for j in sorted(dim, reverse=True):
        x = torch.any(x, dim=j, keepdim=keepdim)
    return x


def _all(x, dim, keepdim):
    for j in sorted(dim, reverse=True):
        x = torch.all(x, dim=j, keepdim=keepdim)
    return x


REDUCE = {
    "sum": lambda x, d, k: torch.sum(x, dim=d, keepdim=k) if _is_float(x) else _int_sum(x, d, k),
    "mean": _mean,
    "max": _extreme(torch.amax, _any),
    "min": _extreme(torch.amin, _all),
    "prod": _prod,
    "l1": lambda x, d, k: REDUCE["sum"](torch.abs(x), d, k),
    "l2": lambda x, d, k: (torch.sqrt(torch.sum(x * x, dim=d, keepdim=k)) if _is_float(x)
                           else torch.trunc(torch.sqrt(torch.sum(x.double() ** 2, dim=d, keepdim=k))).to(x.dtype)),
    "sum_square": lambda x, d, k: REDUCE["sum"](x * x, d, k),
    "log_sum_exp": lambda x, d, k: (torch.logsumexp(x, dim=d, keepdim=k) if _is_float(x)
                                    else torch.trunc(torch.logsumexp(x.double(), dim=d, keepdim=k)).to(x.dtype)),
}
REDUCE_SCALAR = {
    "sum": lambda x: x.clone(), "mean": lambda x: x.clone(), "max": lambda x: x.clone(),
    "min": lambda x: x.clone(), "prod": lambda x: x.clone(), "l1": torch.abs,
    "l2": lambda x: torch.abs(x), "sum_square": lambda x: x * x, "log_sum_exp": lambda x: x.clone(),
}


def _arg(f):
    def factory(a, n):
        axis, keep, last = a.get("axis", 0), bool(a.get("keepdims", 1)), a.get("select_last_index", 0)

        def fn(i):
            x = i[0]
            if last:
                size = x.shape[axis]
                return (size - 1) - f(torch.flip(x, (axis,)), dim=axis, keepdim=keep)
            return f(x, dim=axis, keepdim=keep)
        return fn
    return factory


def _cumsum(a, n):
    axis, excl, rev = a["axis"], a.get("exclusive", 0), a.get("reverse", 0)

    def fn(i):
        x = i[0]
        if rev:
            x = torch.flip(x, (axis,))
        y = torch.cumsum(x, dim=axis, dtype=x.dtype)
        if excl:
            y = torch.narrow(torch.cat([torch.zeros_like(torch.narrow(y, axis, 0, 1)), y], dim=axis), axis, 0,
                             x.shape[axis])
        return torch.flip(y, (axis,)) if rev else y
    return fn


def _topk(a, n):
    k, axis, largest, srt = a["k"], a.get("axis", -1), bool(a.get("largest", 1)), bool(a.get("sorted", 1))
    return lambda i: tuple(torch.topk(i[0], k, dim=axis, largest=largest, sorted=srt))


def _layer_norm(a, n):
    axis, eps = a.get("axis", -1), a.get("epsilon", 1e-5)
    extra = len(n["outputs"]) > 1

    def fn(i):
        x, scale, bias = i[0], _opt(i, 1), _opt(i, 2)
        ax = axis % x.ndim
        norm_shape = tuple(x.shape[ax:])
        if not extra and (scale is None or tuple(scale.shape) == norm_shape) and \
                (bias is None or tuple(bias.shape) == norm_shape):
            return F.layer_norm(x, norm_shape, scale, bias, eps)
        dims = tuple(range(ax, x.ndim))
        mean = x.mean(dim=dims, keepdim=True)
        d = x - mean
        inv = torch.rsqrt((d * d).mean(dim=dims, keepdim=True) + eps)
        y = d * inv
        if scale is not None:
            y = y * scale
        if bias is not None:
            y = y + bias
        return (y, mean, inv)[:len(n["outputs"])]
    return fn


def _rms_norm(a, n):
    axis, eps = a.get("axis", -1), a.get("epsilon", 1e-5)

    def fn(i):
        x, scale = i[0], _opt(i, 1)
        dims = tuple(range(axis % x.ndim, x.ndim))
        y = x * torch.rsqrt((x * x).mean(dim=dims, keepdim=True) + eps)
        return y if scale is None else y * scale
    return fn


def _batch_norm(a, n):
    eps = a.get("epsilon", 1e-5)
    return lambda i: F.batch_norm(i[0], i[3], i[4], i[1], i[2], False, 0.0, eps)


def _group_norm(a, n):
    g, eps = a["num_groups"], a.get("epsilon", 1e-5)
    return lambda i: F.group_norm(i[0], g, i[1], i[2], eps)


def _reshape(a, n):
    shape, allowzero = list(a["shape"]), a.get("allowzero", 0)

    def fn(i):
        x = i[0]
        s = shape if allowzero else [x.shape[j] if v == 0 else v for j, v in enumerate(shape)]
        return torch.reshape(x, s)
    return fn


def _transpose(a, n):
    perm = a.get("perm")
    return lambda i: i[0].permute(*(perm if perm else range(i[0].ndim - 1, -1, -1)))


def _flatten(a, n):
    axis = a.get("axis", 1)

    def fn(i):
        x = i[0]
        ax = axis % x.ndim if x.ndim else 0
        return x.reshape(int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:])))
    return fn


def _squeeze(a, n):
    def fn(i):
        x = i[0]
        dims = _dims(a, x.ndim)
        if dims is None:
            return x.squeeze()
        for d in reversed(dims):
            x = x.squeeze(d)
        return x
    return fn


def _unsqueeze(a, n):
    axes = a["axes"]

    def fn(i):
        x = i[0]
        r = x.ndim + len(axes)
        for d in sorted(v % r for v in axes):
            x = x.unsqueeze(d)
        return x
    return fn


def _expand(a, n):
    shape = tuple(a["shape"])
    return lambda i: i[0].expand(torch.broadcast_shapes(tuple(i[0].shape), shape))


def _split(a, n):
    axis, sizes, num = a.get("axis", 0), a.get("split"), a.get("num_outputs")
    nout = len(n["outputs"])

    def fn(i):
        x = i[0]
        size = x.shape[axis]
        if sizes:
            s = list(sizes)
        else:
            parts = num or nout
            chunk = -(-size // parts)
            s = [min(chunk, size - j * chunk) for j in range(parts)]
        return tuple(torch.split(x, s, dim=axis))
    return fn


def _slice(a, n):
    starts, ends = a["starts"], a["ends"]
    axes = a.get("axes") or list(range(len(starts)))
    steps = a.get("steps") or [1] * len(starts)

    def fn(i):
        x = i[0]
        idx = [slice(None)] * x.ndim
        neg = []
        for s, e, ax, st in zip(starts, ends, axes, steps):
            if st > 0:
                idx[ax] = slice(s, e, st)
            else:
                neg.append((ax % x.ndim, slice(s, e, st)))
        y = x[tuple(idx)]
        for ax, sl in neg:  # torch slicing has no negative steps: gather the indices
            y = y.index_select(ax, torch.arange(*sl.indices(y.shape[ax]), device=y.device))
        return y
    return fn


def _gather(a, n):
    axis = a.get("axis", 0)

    def fn(i):
        x, idx = i
        ax = axis % x.ndim
        j = idx.to(torch.int64)
        j = torch.where(j < 0, j + x.shape[ax], j)
        y = x.index_select(ax, j.reshape(-1))
        return y.reshape(tuple(x.shape[:ax]) + tuple(idx.shape) + tuple(x.shape[ax + 1:]))
    return fn


def _gather_elements(a, n):
    axis = a.get("axis", 0)

    def fn(i):
        x, idx = i
        j = idx.to(torch.int64)
        j = torch.where(j < 0, j + x.shape[axis], j)
        return torch.gather(x, axis, j)
    return fn


def _pad_index(length, before, after, mode, device):
    k = torch.arange(-before, length + after, device=device)
    if mode == "edge":
        return k.clamp(0, length - 1)
    period = 2 * (length - 1)  # reflect
    k = torch.remainder(k, period) if period > 0 else torch.zeros_like(k)
    return torch.where(k >= length, period - k, k)


def _pad(a, n):
    pads, mode, value, axes = a["pads"], a.get("mode", "constant"), a.get("value", 0), a.get("axes")

    def fn(i):
        x = i[0]
        ax = [v % x.ndim for v in axes] if axes else list(range(x.ndim))
        r = len(ax)
        if mode == "constant":
            tp = [0] * (2 * x.ndim)
            for j, d in enumerate(ax):
                tp[2 * (x.ndim - 1 - d)] = pads[j]
                tp[2 * (x.ndim - 1 - d) + 1] = pads[r + j]
            return F.pad(x, tp, value=value)
        for j, d in enumerate(ax):
            x = x.index_select(d, _pad_index(x.shape[d], pads[j], pads[r + j], mode, x.device))
        return x
    return fn


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAXPOOL = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVGPOOL = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def _torch_pads(pb, pe):
    tp = []
    for b, e in zip(reversed(pb), reversed(pe)):
        tp += [b, e]
    return tp


def _conv(a, n):
    group = a.get("group", 1)

    def fn(i):
        x, w, b = i[0], i[1], _opt(i, 2)
        r = x.ndim - 2
        strides, dil, pb, pe, _ = npgraph.spatial_params(a, list(x.shape[2:]), list(w.shape[2:]))
        if pb != pe:
            x = F.pad(x, _torch_pads(pb, pe))
            pb = [0] * r
        return _CONV[r](x, w, b, stride=strides, padding=pb, dilation=dil, groups=group)
    return fn


def _max_pool(a, n):
    kernel = list(a["kernel_shape"])

    def fn(i):
        x = i[0]
        r = x.ndim - 2
        strides, dil, pb, pe, out = npgraph.spatial_params(a, list(x.shape[2:]), kernel)
        eff = [(kernel[j] - 1) * dil[j] + 1 for j in range(r)]
        if pb == pe and all(2 * pb[j] <= eff[j] for j in range(r)):
            y = _MAXPOOL[r](x, kernel, strides, pb, dil, ceil_mode=bool(a.get("ceil_mode", 0)))
            if list(y.shape[2:]) == out:
                return y
        # asymmetric or large pads: pad with -inf (enough for every window), pool, keep `out`
        ext = [max(pe[j], (out[j] - 1) * strides[j] + eff[j] - x.shape[2 + j] - pb[j]) for j in range(r)]
        xp = F.pad(x, _torch_pads(pb, ext), value=-math.inf)
        y = _MAXPOOL[r](xp, kernel, strides, 0, dil)
        return y[(slice(None), slice(None)) + tuple(slice(0, o) for o in out)]
    return fn


def _average_pool(a, n):
    kernel = list(a["kernel_shape"])
    cip = bool(a.get("count_include_pad", 0))

    def fn(i):
        x = i[0]
        r = x.ndim - 2
        strides, dil, pb, pe, out = npgraph.spatial_params(a, list(x.shape[2:]), kernel)
        if pb != pe or any(2 * p > k for p, k in zip(pb, kernel)) or any(d != 1 for d in dil):
            raise NotImplementedError("torchgraph: average_pool with asymmetric or large pads or dilations")
        kw = {} if r == 1 else {"divisor_override": None}
        y = _AVGPOOL[r](x, kernel, strides, pb, ceil_mode=bool(a.get("ceil_mode", 0)), count_include_pad=cip, **kw)
        return y
    return fn


def _complex(x):
    return torch.view_as_complex(x.contiguous())


def _fft(f, complex_in, real_out):
    def factory(a, n):
        axis, norm, length = a.get("axis", -1), a.get("norm", "backward"), a.get("n")

        def fn(i):
            x = _complex(i[0]) if complex_in else i[0]
            z = f(x, n=length, dim=axis, norm=norm) if real_out else f(x, dim=axis, norm=norm)
            return z if real_out else torch.view_as_real(z)
        return fn
    return factory


def _attention(a, n):
    causal = a.get("causal", 0)
    scale_attr = a.get("scale")

    def fn(i):
        q, k, v, mask = i[0], i[1], i[2], _opt(i, 3)
        h, hk = q.shape[1], k.shape[1]
        if hk != h:
            k = k.repeat_interleave(h // hk, dim=1)
            v = v.repeat_interleave(h // hk, dim=1)
        scale = scale_attr if scale_attr is not None else 1.0 / math.sqrt(q.shape[-1])
        s = torch.matmul(q, k.transpose(-1, -2)) * scale
        keep = None
        if mask is not None:
            if mask.dtype == torch.bool:
                keep = mask
            else:
                s = s + mask
        if causal:
            S, T = s.shape[-2], s.shape[-1]
            c = torch.ones(S, T, dtype=torch.bool, device=s.device).tril()
            keep = c if keep is None else keep & c
        if keep is not None:
            s = s.masked_fill(~keep, -math.inf)
        p = torch.softmax(s, dim=-1)
        p = torch.nan_to_num(p, nan=0.0)  # a query with every key masked out gets zeros
        return torch.matmul(p, v)
    return fn


def _dropout(a, n):
    if a.get("training", 0):
        raise NotImplementedError("torchgraph: dropout with training=1")
    nout = len(n["outputs"])
    return lambda i: i[0] if nout == 1 else (i[0], torch.ones_like(i[0], dtype=torch.bool))


def _gelu(a, n):
    approx = a.get("approximate", "none")
    return lambda i: F.gelu(i[0], approximate=approx)


def _alpha(f, default):
    return lambda a, n: (lambda i, al=a.get("alpha", default): f(i[0], al))


def _selu(a, n):
    al, g = a.get("alpha", 1.6732632), a.get("gamma", 1.0507010)
    return lambda i: g * torch.where(i[0] > 0, i[0], al * torch.expm1(i[0]))


def _hard_sigmoid(a, n):
    al, be = a.get("alpha", 0.2), a.get("beta", 0.5)
    return lambda i: torch.clamp(i[0] * al + be, 0.0, 1.0)


OPS = {
    "identity": _unary(lambda x: x),
    "neg": _unary(torch.neg),
    "abs": _unary(torch.abs),
    "sign": _unary(torch.sign),
    "relu": _unary(torch.relu),
    "sigmoid": _unary(torch.sigmoid),
    "tanh": _unary(torch.tanh),
    "exp": _unary(torch.exp),
    "log": _unary(torch.log),
    "sqrt": _unary(torch.sqrt),
    "rsqrt": _unary(torch.rsqrt),
    "reciprocal": _unary(torch.reciprocal),
    "sin": _unary(torch.sin),
    "cos": _unary(torch.cos),
    "erf": _unary(torch.erf),
    "floor": _unary(torch.floor),
    "ceil": _unary(torch.ceil),
    "round": _unary(torch.round),
    "softplus": _unary(lambda x: torch.log1p(torch.exp(-torch.abs(x))) + torch.relu(x)),
    "softsign": _unary(F.softsign),
    "silu": _unary(F.silu),
    "mish": _unary(F.mish),
    "hard_swish": _unary(F.hardswish),
    "leaky_relu": _alpha(F.leaky_relu, 0.01),
    "elu": _alpha(lambda x, al: F.elu(x, al), 1.0),
    "celu": _alpha(lambda x, al: F.celu(x, al), 1.0),
    "selu": _selu,
    "hard_sigmoid": _hard_sigmoid,
    "gelu": _gelu,
    "clip": _clip,
    "cast": _cast,
    "not": _unary(torch.logical_not),
    "is_nan": _unary(torch.isnan),
    "is_inf": _unary(torch.isinf),
    "add": _binary(torch.add),
    "sub": _binary(torch.sub),
    "mul": _binary(torch.mul),
    "div": _div,
    "pow": _binary(lambda x, y: torch.pow(x, y).to(x.dtype)),
    "mod": _mod,
    "max": _fold(torch.maximum),
    "min": _fold(torch.minimum),
    "equal": _binary(torch.eq),
    "less": _binary(torch.lt),
    "less_equal": _binary(torch.le),
    "greater": _binary(torch.gt),
    "greater_equal": _binary(torch.ge),
    "and": _binary(torch.logical_and),
    "or": _binary(torch.logical_or),
    "xor": _binary(torch.logical_xor),
    "where": lambda a, n: lambda i: torch.where(i[0], i[1], i[2]),
    "matmul": _binary(torch.matmul),
    "gemm": _gemm,
    "einsum": lambda a, n: (lambda i, eq=a["equation"]: torch.einsum(eq, *i)),
    "reduce_sum": _reduce("sum"),
    "reduce_mean": _reduce("mean"),
    "reduce_max": _reduce("max"),
    "reduce_min": _reduce("min"),
    "reduce_prod": _reduce("prod"),
    "reduce_l1": _reduce("l1"),
    "reduce_l2": _reduce("l2"),
    "reduce_sum_square": _reduce("sum_square"),
    "reduce_log_sum_exp": _reduce("log_sum_exp"),
    "argmax": _arg(torch.argmax),
    "argmin": _arg(torch.argmin),
    "cumsum": _cumsum,
    "topk": _topk,
    "softmax": lambda a, n: (lambda i, d=a.get("axis", -1): torch.softmax(i[0], d)),
    "log_softmax": lambda a, n: (lambda i, d=a.get("axis", -1): torch.log_softmax(i[0], d)),
    "layer_norm": _layer_norm,
    "rms_norm": _rms_norm,
    "batch_norm": _batch_norm,
    "instance_norm": lambda a, n: (lambda i, e=a.get("epsilon", 1e-5): F.instance_norm(i[0], weight=i[1],
                                                                                       bias=i[2], eps=e)),
    "group_norm": _group_norm,
    "reshape": _reshape,
    "transpose": _transpose,
    "flatten": _flatten,
    "squeeze": _squeeze,
    "unsqueeze": _unsqueeze,
    "expand": _expand,
    "tile": lambda a, n: (lambda i, r=tuple(a["repeats"]): i[0].repeat(r)),
    "concat": lambda a, n: (lambda i, d=a["axis"]: torch.cat(i, dim=d)),
    "split": _split,
    "slice": _slice,
    "gather": _gather,
    "gather_elements": _gather_elements,
    "pad": _pad,
    "conv": _conv,
    "max_pool": _max_pool,
    "average_pool": _average_pool,
    "global_average_pool": _unary(lambda x: x.mean(dim=tuple(range(2, x.ndim)), keepdim=True)),
    "global_max_pool": _unary(lambda x: x.amax(dim=tuple(range(2, x.ndim)), keepdim=True)),
    "fft": _fft(torch.fft.fft, True, False),
    "ifft": _fft(torch.fft.ifft, True, False),
    "rfft": _fft(torch.fft.rfft, False, False),
    "irfft": _fft(torch.fft.irfft, True, True),
    "attention": _attention,
    "dropout": _dropout,
}
