#!/usr/bin/python3
"""Backend parity suite: every op in every dtype the CPU backend implements, over
scalars, single elements, odd and empty shapes, broadcasts and a realistic size, run
on a device against the CPU reference. In the spirit of ggml's test-backend-ops: no
NumPy oracle, only agreement between backends.

Two modes (FTPARITY_MODE):
  batch  (default; parity_batch.py) every case becomes a test folder in ftrun's own layout
         (graph.json and its .npy files, expected/NAME.npy from a run of the
         graph on the cpu, tolerance.json with the case's rtol and atol), and one
         `ftrun test -d DEV -j N -v` runs them all in N worker processes that
         each open the device once (one CUDA context and cuBLAS handle for
         hundreds of cases instead of one per case). The cases that expect an
         error (an exit status and message from the device) or compare every
         node (--check-nodes), and the big ones, still run as in `run` mode.
  run    each case is `ftrun run GRAPH -d DEV --check --rtol R --atol A` of its
         own (the device result against the CPU reference, compared inside
         ftrun): one process, and one device start-up, per case.
Both compare with |device - cpu| <= atol + rtol * |cpu| and give the same verdicts
(tests/cuda/batch_same.sh checks that on the cpu).

Environment
  FTRUN             the binary (default build/ftrun of this checkout)
  FTPARITY_DEVICE   device under test (default cuda); `cpu` runs the same suite CPU
                    against CPU, which proves every graph valid and every expected
                    error raised without a GPU
  FTPARITY_ONLY     regular expression: run only the cases whose name it matches
  FTPARITY_JOBS     cases run at once (default 2): processes of `run` mode and the
                    cpu reference runs of `batch` mode
  FTPARITY_TEST_JOBS  the workers of `ftrun test` in batch mode (default FTPARITY_JOBS)
  FTPARITY_MODE     batch (default; run when FTPARITY_WRAP is set) or run, see above
  FTPARITY_BIG=1    adds cases whose tensors exceed 2^31 bytes (64-bit indexing)
  FTPARITY_WRAP     a command put before every ftrun on the device (e.g. compute-sanitizer)
  FTPARITY_KEEP=DIR keeps the graph folder of every failing case under DIR
Options: --list prints the case names, --count the cases per family; neither runs.

Output is TAP: `1..N`, `ok K - name` or `not ok K - name` followed by `# ` lines
with ftrun's exit status, stderr and command; exit status 1 if any case failed.
Case names are FAMILY/OP/DTYPE/DETAIL.

Inputs come from "init" value sources (Philox, generated on the host: identical bits
on every device, no files even for huge tensors). Where exact values matter (divisors
that must not be 0, indices within range, where conditions, ties, NaN and inf, bool
inputs, masks) the case writes a small .npy file next to the graph instead.

Tolerances. --check applies one --rtol/--atol pair to every output of a graph, as
|device - cpu| <= atol + rtol * |cpu|; NaN must meet NaN and infinities must be
equal. An integer or bool output is exact whenever atol + rtol * |value| < 1, but
cases with integer or bool outputs use the exact class anyway. The classes, as
(rtol, atol) per output dtype:

  exact  (0, 0) for every dtype. Data movement and selection (identity, reshape ...
         pad, depth_to_space, space_to_depth, gather, where, max/min, reduce_max/min,
         max_pool, topk values and indices, argmax/argmin, nearest resize and
         grid_sample, dropout masks), every integer and
         bool result, comparisons and logic, casts, neg/abs/sign/relu/floor/ceil/
         round/clip, and add/sub/mul (one IEEE operation: f32 is wide enough that
         rounding f16/bf16 results through it is still correctly rounded).
  elem   one libm call or a short composition of them, a few ulp of the dtype:
           f64 (1e-13, 1e-14)  f32 (2e-6, 1e-6)  f16 (2e-3, 1e-5)  bf16 (1.6e-2, 1e-5)
         f16 and bf16 are computed in f32 and rounded once, so one ulp of f32 can
         move the result by one ulp of the 16-bit type (2^-10, 2^-7 relative).
         The atol covers results near 0 reached by cancellation (exp(x) - 1 for
         elu near 0 ...). div, pow, mod, the float unary functions, leaky_relu,
         linear dropout outputs.
  accum  sums whose order differs between backends (reductions, cumsum, softmax,
         norms, matmul, gemm, einsum, conv, average and lp pools, lrn, linear and cubic
         resize, linear and cubic grid_sample, fft, attention): rtol per dtype and an atol of unit * sqrt(K) * mag, where K
         is the number of terms summed per output and mag the size of a term:
           f64 (1e-10, 1e-12)  f32 (2e-4, 1e-5)  f16 (1e-2, 1e-3)  bf16 (2e-2, 8e-3)
         (rtol, atol unit). Rounding errors of a sum of K terms grow like
         sqrt(K) * eps * mag, so a result that cancels to near 0 keeps a bound of
         that size while large results are held to rtol. f32 matrix products are
         held to f32 bounds: TF32 is off unless --allow-tf32 is given, and no case
         gives it.
"""
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_index  # noqa: E402  (the indexing ops' cases: gen_index)
import parity_loss  # noqa: E402  (losses, windows and stft: gen_loss)
import parity_attn  # noqa: E402  (rotary_embedding, attention's softcap and KV cache: gen_attn)
import parity_geom  # noqa: E402  (the geometry ops' cases: gen_geom)
import parity_linalg  # noqa: E402  (det and deform_conv: gen_linalg)
import parity_extremes  # noqa: E402  (the windowed ops at their geometry extremes: gen_extremes)
import parity_forms  # noqa: E402  (max_pool Indices, max_unpool, tensor_scatter, batch_norm training: gen_forms)
import parity_batch  # noqa: E402  (batch mode: the cases as test folders, one ftrun test)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FTRUN = os.environ.get("FTRUN") or os.path.join(ROOT, "build", "ftrun")
os.environ.setdefault("FTRUN_DEFAULT_DURATION", "0")  # one run per case unless -n is given
DEVICE = os.environ.get("FTPARITY_DEVICE") or "cuda"
ONLY = os.environ.get("FTPARITY_ONLY")
JOBS = max(1, int(os.environ.get("FTPARITY_JOBS") or "2"))
BIG = os.environ.get("FTPARITY_BIG") == "1"
WRAP = shlex.split(os.environ.get("FTPARITY_WRAP", ""))
KEEP = os.environ.get("FTPARITY_KEEP")
# a wrapper (compute-sanitizer) reports per process: one case per process then
MODE = os.environ.get("FTPARITY_MODE") or ("run" if WRAP else "batch")
TEST_JOBS = max(1, int(os.environ.get("FTPARITY_TEST_JOBS") or JOBS))

FLOATS = ("f32", "f16", "bf16", "f64")
SINTS = ("i8", "i16", "i32", "i64")
INTS = SINTS + ("u8",)
NUMS = FLOATS + INTS
ANY = NUMS + ("bool",)
SIGNED = FLOATS + SINTS
# NumPy has no bf16: a bf16 tensor reads an f32 .npy, rounded to nearest even
NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64, "i8": np.int8,
      "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "bool": np.bool_}
IRANGE = {"i8": (-128, 128), "i16": (-32768, 32768), "i32": (-2 ** 31, 2 ** 31), "i64": (-2 ** 63, 2 ** 63),
          "u8": (0, 256)}
NAN, INF = float("nan"), float("inf")

# ---------------------------------------------------------------- tolerances
EXACT = (0.0, 0.0)
ELEM = {"f64": (1e-13, 1e-14), "f32": (2e-6, 1e-6), "f16": (2e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}
ACCUM = {"f64": (1e-10, 1e-12), "f32": (2e-4, 1e-5), "f16": (1e-2, 1e-3), "bf16": (2e-2, 8e-3)}


def elem(dt):
    return ELEM.get(dt, EXACT)


def accum(dt, k=1, mag=1.0):
    if dt not in ACCUM:
        return EXACT
    r, a = ACCUM[dt]
    return (r, a * math.sqrt(max(k, 1)) * mag)


# ---------------------------------------------------------------- graphs
def sh(s):
    return "[" + ",".join(str(d) for d in s) + "]"


def prod(s):
    p = 1
    for d in s:
        p *= d
    return p


class G:
    """One graph under construction: tensors with value sources, .npy files, nodes."""

    def __init__(self, name):
        self.name = name
        self.tensors, self.files, self.nodes = {}, {}, []
        self.n = 0
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def _new(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def seed(self, t):
        return zlib.crc32(("%s/%s" % (self.name, t)).encode()) & 0x7FFFFFFF

    def init(self, dt, shape, lo=-1.0, hi=1.0, dist="uniform"):
        t = self._new("x")
        if dist == "uniform":
            init = {"uniform": {"low": lo, "high": hi}, "seed": self.seed(t)}
        elif dist == "normal":
            init = {"normal": {"mean": lo, "std": hi}, "seed": self.seed(t)}
        elif dist == "arange":
            init = {"arange": {"start": lo, "step": hi}}
        else:
            init = {"fill": lo}
        self.tensors[t] = {"dtype": dt, "shape": list(shape), "init": init}
        return t

    def arr(self, dt, a):
        t = self._new("d")
        with np.errstate(all="ignore"):
            a = np.ascontiguousarray(np.asarray(a).astype(NP[dt]))
        self.files[t + ".npy"] = a
        self.tensors[t] = {"dtype": dt, "shape": list(a.shape), "file": t + ".npy"}
        return t

    def x(self, dt, shape, lo=-1.0, hi=1.0, ilo=None, ihi=None, dist="uniform"):
        """A random input: floats in [lo, hi), ints in [ilo, ihi) (default the full
        range, wrapping arithmetic included), bool half true."""
        if dt == "bool":
            return self.arr("bool", self.rng.random(tuple(shape)) < 0.5)
        if dt in INTS:
            a, b = IRANGE[dt]
            a = a if ilo is None else max(a, ilo)
            b = b if ihi is None else min(b, ihi)
            return self.init(dt, shape, a, b)
        return self.init(dt, shape, lo, hi, dist)

    def op(self, op, inputs, attrs=None, nout=1):
        outs = [self._new("y") for _ in range(nout)]
        node = {"name": "%s_%d" % (op, len(self.nodes)), "op": op, "inputs": list(inputs), "outputs": outs}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)
        return outs[0] if nout == 1 else outs


class Case:
    def __init__(self, name, build, tol=EXACT, rc=0, err=None, big=False, check_nodes=False):
        self.name, self.build, self.tol, self.rc, self.err = name, build, tol, rc, err
        self.big, self.check_nodes = big, check_nodes


CASES = []


def case(name, build, tol=EXACT, **kw):
    CASES.append(Case(name, build, tol, **kw))


def single(name, op, mk_inputs, attrs=None, tol=EXACT, nout=1, keep=None):
    """A one-node case: mk_inputs(g) -> input names; keep: which outputs to return."""
    def build(g):
        outs = g.op(op, mk_inputs(g), attrs, nout)
        outs = [outs] if nout == 1 else outs
        return outs if keep is None else [outs[i] for i in keep]
    case(name, build, tol)


def rot(lst, start, n):
    return [lst[(start + k) % len(lst)] for k in range(min(n, len(lst)))]


def pick(cfgs, dt, j, n):
    """Every config in f32; n of them, round robin, in the other dtypes."""
    return list(cfgs) if dt == "f32" else rot(list(cfgs), n * j, n)


# ---------------------------------------------------------------- value sets
def float_specials(dt, rng, extra=95):
    v = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 1e-3, -1e-3,
         1e-7, -1e-7, 6e-8, 20.0, -20.0, 88.5, -88.5, 100.0, -100.0, 710.0, -745.0, 1e4, -1e4, 65504.0,
         1e30, -1e30, 1e-40]
    v += list(rng.uniform(-12, 12, extra))
    return np.array(v, np.float64)


def cast_source(dt, rng):
    """Values of dtype dt that probe every conversion: edges of each target's range,
    rounding ties of each float type, NaN and infinities, plus random ones."""
    if dt == "bool":
        return rng.random(200) < 0.5
    if dt in INTS:
        lo, hi = IRANGE[dt]
        edges = [0, 1, -1, 2, 127, -128, 128, -129, 255, 256, 32767, -32768, 32768, 65535, 65536, 2049,
                 65519, 65520, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 32 + 3, 2 ** 53 + 1,
                 2 ** 63 - 1, -2 ** 63, 2 ** 62 + 2 ** 40 + 1]
        edges = [e for e in edges if lo <= e < hi]
        rnd = rng.integers(lo, hi, 160, dtype=np.int64, endpoint=False) if dt != "u8" else rng.integers(0, 256, 160)
        return np.array(edges + list(rnd), np.int64)
    v = [NAN, INF, -INF, 0.0, -0.0, 0.49, 0.5, 0.99, 1.0, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 127.5, 128.0,
         255.5, 256.0, -128.5, -129.0, 32767.5, 32768.0, -32769.0, 65504.0, 65519.0, 65520.0, 70000.0,
         2147483520.0, 2147483648.0, -2147483904.0, 4294967296.0, 9.2e18, 9.3e18, -9.3e18, 1e20, 3.3895e38,
         -3.4e38, 1e39, 1e-45, 5.9e-8, 2.9e-8, 6.2e-5, 1e-40,
         1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -24, 2.0 ** 53 + 1]
    v += list(rng.uniform(-300, 300, 80)) + list(rng.standard_normal(40) * 1e5) + list(rng.uniform(-3, 3, 30))
    return np.array(v, np.float64)


def discrete(g, dt, shape, nan_frac=0.05):
    """Few distinct values (many ties), NaN among the floats: for comparisons, ties
    in argmax/topk."""
    shape = tuple(shape)
    if dt == "bool":
        return g.arr(dt, g.rng.random(shape) < 0.5)
    lo = 0 if dt == "u8" else -3
    v = g.rng.integers(lo, lo + 7, shape).astype(np.float64)
    if dt in FLOATS:
        v = v / 2
        v = np.where(g.rng.random(shape) < nan_frac, NAN, v)
        if v.size > 3:
            v.reshape(-1)[:2] = [0.0, -0.0]
    return g.arr(dt, v)


def nonzero_ints(g, dt, shape, lim=50):
    lo = 1 if dt == "u8" else -lim
    v = g.rng.integers(lo, lim, tuple(shape))
    v[v == 0] = 1
    return g.arr(dt, v)


# ---------------------------------------------------------------- elementwise, one input
UNARY_SHAPES = [[], [1], [7], [33], [1023], [65537], [0], [3, 0, 5], [256, 1024], [2, 3, 5, 7]]
FLOAT_UNARY = ["relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "erf",
               "floor", "ceil", "round", "softplus", "softsign", "silu", "mish", "hard_swish", "leaky_relu",
               "elu", "celu", "selu", "hard_sigmoid", "thresholded_relu", "gelu", "shrink", "swish", "tan", "asin",
               "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"]
UNARY_EXACT = {"relu", "thresholded_relu", "shrink", "floor", "ceil", "round", "neg", "abs", "sign", "identity",
               "is_nan", "is_inf"}
UNARY_RANGE = {"exp": (-10, 10), "log": (-0.5, 8), "sqrt": (-0.5, 8), "rsqrt": (-0.5, 8),
               "reciprocal": (-4, 4), "sin": (-20, 20), "cos": (-20, 20), "tan": (-4, 4), "asin": (-1.2, 1.2),
               "acos": (-1.2, 1.2), "atanh": (-1.2, 1.2), "acosh": (0.5, 8)}
UNARY_ATTRS = {"leaky_relu": [{"alpha": 0.2}, {"alpha": -0.5}], "elu": [{"alpha": 0.5}], "celu": [{"alpha": 2.0}],
               "selu": [{"alpha": 1.5, "gamma": 2.0}], "hard_sigmoid": [{"alpha": 0.1, "beta": 0.6}],
               "thresholded_relu": [{"alpha": -0.25}], "shrink": [{"bias": 0.25, "lambd": 1.5}],
               "swish": [{"alpha": 0.5}],
               "gelu": [{"approximate": "tanh"}]}


def unary_input(g, op, dt, shape):
    if op in ("floor", "ceil", "round"):
        # quarter steps: every .5 is a tie for round
        return g.init(dt, shape, -0.25 * (prod(shape) // 2), 0.25, "arange")
    lo, hi = UNARY_RANGE.get(op, (-6, 6))
    return g.x(dt, shape, lo, hi)


def attr_label(a):
    return ",".join("%s=%s" % kv for kv in sorted(a.items()))


def gen_unary():
    for i, op in enumerate(FLOAT_UNARY):
        tol = (lambda dt: EXACT) if op in UNARY_EXACT else elem
        for j, dt in enumerate(FLOATS):
            for s in rot(UNARY_SHAPES, 2 * i + 3 * j, 2 if dt == "f32" else 1):
                single("unary/%s/%s/%s" % (op, dt, sh(s)), op, lambda g, op=op, dt=dt, s=s: [unary_input(g, op, dt, s)],
                       tol=tol(dt))
            single("unary/%s/%s/specials" % (op, dt), op,
                   lambda g, dt=dt: [g.arr(dt, float_specials(dt, g.rng))], tol=tol(dt))
            for a in UNARY_ATTRS.get(op, []):
                s = UNARY_SHAPES[(i + j) % len(UNARY_SHAPES)] or [5]
                single("unary/%s/%s/%s/%s" % (op, dt, attr_label(a), sh(s)), op,
                       lambda g, dt=dt, s=s: [g.x(dt, s, -6, 6)], attrs=a, tol=elem(dt))
                if dt == "f32":
                    single("unary/%s/%s/%s/specials" % (op, dt, attr_label(a)), op,
                           lambda g, dt=dt: [g.arr(dt, float_specials(dt, g.rng))], attrs=a, tol=elem(dt))
    for op in ("is_nan", "is_inf"):
        for j, dt in enumerate(FLOATS):
            single("unary/%s/%s/specials" % (op, dt), op, lambda g, dt=dt: [g.arr(dt, float_specials(dt, g.rng))])
            s = UNARY_SHAPES[(4 + 3 * j) % len(UNARY_SHAPES)]
            single("unary/%s/%s/%s" % (op, dt, sh(s)), op, lambda g, dt=dt, s=s: [g.x(dt, s, -1e4, 1e4)])
    for i, op in enumerate(("neg", "abs", "sign")):
        for j, dt in enumerate(SIGNED):
            s = UNARY_SHAPES[(3 * i + j) % len(UNARY_SHAPES)]
            single("unary/%s/%s/%s" % (op, dt, sh(s)), op, lambda g, dt=dt, s=s: [g.x(dt, s, -6, 6)])
            src = (lambda g, dt=dt: g.arr(dt, float_specials(dt, g.rng))) if dt in FLOATS else \
                (lambda g, dt=dt: g.arr(dt, cast_source(dt, g.rng)))
            single("unary/%s/%s/edges" % (op, dt), op, lambda g, src=src: [src(g)])
    for j, dt in enumerate(ANY):
        for s in rot(UNARY_SHAPES, 3 * j, 2):
            single("unary/identity/%s/%s" % (dt, sh(s)), "identity", lambda g, dt=dt, s=s: [g.x(dt, s)])
    for s in ([7], [1023], [0], []):
        single("unary/not/bool/%s" % sh(s), "not", lambda g, s=s: [g.x("bool", s)])
    clips = [("both", {"min": -0.5, "max": 0.75}), ("min", {"min": -0.25}), ("max", {"max": 0.1}),
             ("frac", {"min": -3.5, "max": 2.5}), ("wide", {"min": -1e6, "max": 1e6}),
             ("crossed", {"min": 3.0, "max": 3.0})]
    for j, dt in enumerate(NUMS):
        for k, (lab, a) in enumerate(rot(clips, j, 4)):
            if dt in INTS and lab in ("both", "min", "max"):
                a = {kk: v * 40 for kk, v in a.items()}
            s = UNARY_SHAPES[(j + 2 * k) % len(UNARY_SHAPES)]
            single("unary/clip/%s/%s/%s" % (dt, lab, sh(s)), "clip",
                   lambda g, dt=dt, s=s: [g.x(dt, s, -1, 1, -100, 100)], attrs=a)
        if dt in FLOATS:
            single("unary/clip/%s/specials" % dt, "clip", lambda g, dt=dt: [g.arr(dt, float_specials(dt, g.rng))],
                   attrs={"min": -2.0, "max": 50.0})


# ---------------------------------------------------------------- cast
def gen_cast():
    for i, src in enumerate(ANY):
        for j, dst in enumerate(ANY):
            single("cast/%s->%s/edges" % (src, dst), "cast",
                   lambda g, src=src: [g.arr(src, cast_source(src, g.rng))], attrs={"to": dst})
            if (i + j) % 2:
                continue
            s = UNARY_SHAPES[(i + 3 * j) % len(UNARY_SHAPES)]
            if src == "bool":
                mk = lambda g, s=s: [g.x("bool", s)]
            elif src in INTS:
                mk = lambda g, src=src, s=s: [g.x(src, s)]
            else:  # well beyond every integer range and beyond f16
                mk = lambda g, src=src, s=s: [g.init(src, s, 0, 3e5, "normal")]
            single("cast/%s->%s/%s" % (src, dst, sh(s)), "cast", mk, attrs={"to": dst})


def gen_bitcast():
    for src, dst in (("f32", "i32"), ("i32", "f32"), ("f64", "i64"), ("i64", "f64"), ("f16", "i16"),
                     ("i8", "u8"), ("bool", "u8")):
        single("bitcast/%s->%s/edges" % (src, dst), "bitcast",
               lambda g, src=src: [g.arr(src, cast_source(src, g.rng))], attrs={"to": dst})


# ---------------------------------------------------------------- elementwise, broadcasting
BIN_SHAPES = [([5, 1, 7], [3, 1]), ([33], [33]), ([4, 1], [1, 6]), ([], [7, 9]), ([7, 9], []), ([], []),
              ([1], [1023]), ([256, 1024], [1024]), ([0, 3], [3]), ([2, 3, 4, 5], [3, 1, 5]),
              ([65537], [65537]), ([2, 1, 3, 1, 5, 1], [4, 1, 6])]


def bin_inputs(g, op, dt, sa, sb):
    if op in ("div", "mod"):
        if dt in INTS:
            return [g.x(dt, sa), nonzero_ints(g, dt, sb)]
        return [g.x(dt, sa, -10, 10), g.x(dt, sb, -3, 3)]
    if op == "pow":
        if dt in INTS:
            return [g.x(dt, sa, ilo=-5, ihi=6), g.x(dt, sb, ilo=0, ihi=8)]
        return [g.x(dt, sa, 0.1, 4), g.x(dt, sb, -3, 3)]
    return [g.x(dt, sa, -4, 4), g.x(dt, sb, -4, 4)]


def gen_binary():
    ops = [("add", {}), ("sub", {}), ("mul", {}), ("div", {}), ("pow", {}), ("mod", {}), ("mod", {"fmod": 1})]
    for i, (op, a) in enumerate(ops):
        label = op + ("_fmod" if a else "")
        exact_op = op in ("add", "sub", "mul")
        for j, dt in enumerate(NUMS):
            tol = EXACT if exact_op else elem(dt)
            for sa, sb in rot(BIN_SHAPES, 2 * (i + j), 2):
                single("binary/%s/%s/%sx%s" % (label, dt, sh(sa), sh(sb)), op,
                       lambda g, op=op, dt=dt, sa=sa, sb=sb: bin_inputs(g, op, dt, sa, sb), attrs=a, tol=tol)
            if dt in FLOATS:
                def sp(g, dt=dt):
                    v = float_specials(dt, g.rng)
                    return [g.arr(dt, v[:, None]), g.arr(dt, v[None, ::-1][:, :40])]
                single("binary/%s/%s/specials" % (label, dt), op, sp, attrs=a, tol=tol)
    # wrapping integer arithmetic on full-range operands
    for op in ("add", "sub", "mul"):
        for dt in INTS:
            single("binary/%s/%s/wrap/[1023]" % (op, dt), op, lambda g, dt=dt: [g.x(dt, [1023]), g.x(dt, [1023])])
    for dt in SINTS:
        lo = IRANGE[dt][0]
        single("binary/div/%s/min_by_minus1" % dt, "div",
               lambda g, dt=dt, lo=lo: [g.arr(dt, [lo, lo, -7, 7, lo + 1]), g.arr(dt, [-1, 1, 2, -2, -1])])
        single("binary/mod/%s/signs" % dt, "mod",
               lambda g, dt=dt: [g.arr(dt, [7, -7, 7, -7, 0, 6, -6]), g.arr(dt, [3, 3, -3, -3, 5, 3, -3])])
        single("binary/mod_fmod/%s/signs" % dt, "mod",
               lambda g, dt=dt: [g.arr(dt, [7, -7, 7, -7, 0, 6, -6]), g.arr(dt, [3, 3, -3, -3, 5, 3, -3])],
               attrs={"fmod": 1})
        single("binary/pow/%s/negative_exponents" % dt, "pow",
               lambda g, dt=dt: [g.arr(dt, np.repeat([-2, -1, 0, 1, 2, 3], 7)),
                                 g.arr(dt, np.tile([-3, -2, -1, 0, 1, 2, 3], 6))])
    # the exponent may have another dtype than the base
    mixed = [("f32", "i32"), ("f16", "i8"), ("f64", "f32"), ("bf16", "i64"), ("i32", "f32"), ("i64", "i8"),
             ("u8", "f64"), ("i16", "u8")]
    for bd, ed in mixed:
        def mk(g, bd=bd, ed=ed):
            base = g.x(bd, [5, 33], 0.1, 4, -5, 6)
            if ed in INTS:
                return [base, g.x(ed, [33], ilo=0 if bd in INTS else -3, ihi=5)]
            # whole and fractional exponents
            return [base, g.arr(ed, np.concatenate([np.arange(-2, 4), g.rng.uniform(-2, 3, 27)]))]
        single("binary/pow/%s^%s/[5,33]x[33]" % (bd, ed), "pow", mk, tol=elem(bd))
    # integer division by zero is an error found in the data
    for op, dt in (("div", "i32"), ("mod", "i64")):
        case("binary/%s/%s/division_by_zero" % (op, dt),
             lambda g, op=op, dt=dt: [g.op(op, [g.arr(dt, [5, 6, 7, 8]), g.arr(dt, [1, 2, 0, 4])])],
             rc=3, err="division by zero")


def gen_variadic():
    cfgs = [[[7]], [[5, 1, 7], [3, 1]], [[], [4, 5], [5]], [[33], [33], [33], [33]], [[256, 1024], [1024]],
            [[0, 2], [2]], [[2, 1, 3, 1, 5, 1], [1, 4, 1, 6, 1, 1], [1]]]
    for i, op in enumerate(("max", "min")):
        for j, dt in enumerate(NUMS):
            for shapes in rot(cfgs, 3 * (i + j), 3):
                single("variadic/%s/%s/%s" % (op, dt, "x".join(sh(s) for s in shapes)), op,
                       lambda g, dt=dt, shapes=shapes: [g.x(dt, s, ilo=-50, ihi=50) for s in shapes])
            if dt in FLOATS:
                single("variadic/%s/%s/nan" % (op, dt), op,
                       lambda g, dt=dt: [discrete(g, dt, [9, 8], 0.2), discrete(g, dt, [8], 0.2),
                                         discrete(g, dt, [9, 1], 0.2)])


CMP_SHAPES = [([5, 1, 7], [3, 1]), ([33], [33]), ([4, 1], [1, 6]), ([], [7, 9]), ([256, 1024], [1024]),
              ([0, 3], [3]), ([2, 1, 3, 1, 5, 1], [4, 1, 6])]


def gen_compare():
    ops = ["equal", "less", "less_equal", "greater", "greater_equal"]
    for i, op in enumerate(ops):
        dts = ANY if op == "equal" else NUMS
        for j, dt in enumerate(dts):
            for sa, sb in rot(CMP_SHAPES, 2 * (i + j), 2):
                single("compare/%s/%s/%sx%s" % (op, dt, sh(sa), sh(sb)), op,
                       lambda g, dt=dt, sa=sa, sb=sb: [discrete(g, dt, sa), discrete(g, dt, sb)])
    for i, op in enumerate(("and", "or", "xor")):
        for sa, sb in rot(CMP_SHAPES, i, 3):
            single("logic/%s/bool/%sx%s" % (op, sh(sa), sh(sb)), op,
                   lambda g, sa=sa, sb=sb: [g.x("bool", sa), g.x("bool", sb)])
    wshapes = [([5, 1, 7], [3, 1], [7]), ([33], [33], [33]), ([], [4, 5], [5]), ([4, 1], [1, 6], []),
               ([256, 1024], [1024], [256, 1]), ([0, 3], [3], [1, 3]), ([2, 1, 3, 1, 5, 1], [4, 1, 6], [1])]
    for j, dt in enumerate(ANY):
        for sc, sa, sb in rot(wshapes, 2 * j, 2):
            single("where/%s/%s/%s/%s" % (dt, sh(sc), sh(sa), sh(sb)), "where",
                   lambda g, dt=dt, sc=sc, sa=sa, sb=sb: [g.x("bool", sc), g.x(dt, sa), g.x(dt, sb)])


def gen_bitwise():
    for i, op in enumerate(("bitwise_and", "bitwise_or", "bitwise_xor", "bit_shift")):
        for j, dt in enumerate(INTS):
            # shift amounts from -2 to the width + 2 (negative and too large ones shift every bit out)
            hi = np.dtype(NP[dt]).itemsize * 8 + 3 if op == "bit_shift" else None
            for k, (sa, sb) in enumerate(rot(CMP_SHAPES, 2 * (i + j), 2) + [([257], [257])]):
                d = ("left", "right")[(j + k) % 2] if op == "bit_shift" else None
                single("bitwise/%s/%s/%sx%s" % (op + ("_" + d if d else ""), dt, sh(sa), sh(sb)), op,
                       lambda g, dt=dt, sa=sa, sb=sb, hi=hi: [g.x(dt, sa), g.x(dt, sb, ilo=-2 if hi else None, ihi=hi)],
                       attrs={"direction": d} if d else None)
    for j, dt in enumerate(INTS):
        for s in rot(UNARY_SHAPES, j, 2):
            single("bitwise/bitwise_not/%s/%s" % (dt, sh(s)), "bitwise_not", lambda g, dt=dt, s=s: [g.x(dt, s)])
    pshapes = [([2, 3, 4, 5], [3, 1, 1]), ([256, 1024], [1024]), ([7], []), ([0, 3], [3]), ([33], [33])]
    for j, dt in enumerate(FLOATS):
        for sx, ss in rot(pshapes, j, 3):
            single("prelu/%s/%sx%s" % (dt, sh(sx), sh(ss)), "prelu",
                   lambda g, dt=dt, sx=sx, ss=ss: [g.x(dt, sx, -4, 4), g.x(dt, ss, -0.5, 1.5)], tol=elem(dt))
        single("prelu/%s/specials" % dt, "prelu",
               lambda g, dt=dt: [g.arr(dt, float_specials(dt, g.rng)), g.x(dt, [], 0.1, 1)], tol=elem(dt))


# ---------------------------------------------------------------- reductions
REDUCE_OPS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
              "reduce_sum_square", "reduce_log_sum_exp", "reduce_log_sum"]
RED_CFGS = [([7, 33, 5], [1], 1, 0), ([7, 33, 5], [0, 2], 0, 0), ([256, 1024], [-1], 1, 0),
            ([256, 1024], [0], 0, 0), ([3, 4, 5, 6], [], 1, 0), ([3, 4, 5, 6], [], 0, 1), ([1023], [0], 0, 0),
            ([], [], 1, 0), ([4, 0, 3], [1], 1, 0), ([4, 0, 3], [0, 2], 0, 0), ([65537], [], 0, 0),
            ([2, 3, 4, 5, 6], [-1, -3], 1, 0), ([1, 1, 7], [0, 1], 0, 0)]


def red_k(shape, axes, noop):
    if not axes:
        return 1 if noop else prod(shape)
    return prod(shape[a] for a in axes)


def reduce_input(g, op, dt, shape):
    if op == "reduce_prod":
        return g.x(dt, shape, 0.99, 1.01, -3, 4)
    if op == "reduce_log_sum_exp":
        return g.x(dt, shape, -5, 5, -20, 20)
    if op == "reduce_l2":
        return g.x(dt, shape, -1, 1, -1000, 1000)
    if op == "reduce_log_sum":
        return g.x(dt, shape, 0.05, 2, 0, 1000)
    return g.x(dt, shape)


def reduce_tol(op, dt, k):
    if op in ("reduce_max", "reduce_min") or dt not in FLOATS:
        return EXACT
    if op == "reduce_prod":
        return accum(dt, 1, 1e-3)
    if op in ("reduce_mean", "reduce_l2", "reduce_log_sum_exp", "reduce_log_sum"):
        return accum(dt, 1, 1.0)
    return accum(dt, k, 1.0)


def reduce_specials(rng):
    """One row per case: NaN, +inf, -inf, both infinities, zeros of both signs, then
    plain rows. Magnitudes stay moderate: a huge value would make the result depend
    on the summation order and on whether squares are taken in f32 or f64."""
    v = rng.uniform(-3, 3, (8, 16))
    v[0, 3] = NAN
    v[1, 5] = INF
    v[2, 7] = -INF
    v[3, 1], v[3, 9] = INF, -INF
    v[4, :] = np.where(np.arange(16) % 2, 0.0, -0.0)
    return v


def gen_reduce():
    for i, op in enumerate(REDUCE_OPS):
        dts = ANY if op in ("reduce_max", "reduce_min") else NUMS
        for j, dt in enumerate(dts):
            cfgs = RED_CFGS if dt == "f32" else rot(RED_CFGS, 2 * (i + j), 2)
            for shape, axes, kd, noop in cfgs:
                attrs = {"keepdims": kd}
                if axes:
                    attrs["axes"] = axes
                if noop:
                    attrs["noop_with_empty_axes"] = 1
                k = red_k(shape, axes, noop)
                single("reduce/%s/%s/%s/axes=%s,keepdims=%d%s" % (op, dt, sh(shape), sh(axes), kd,
                                                                 ",noop" if noop else ""), op,
                       lambda g, op=op, dt=dt, shape=shape: [reduce_input(g, op, dt, shape)], attrs=attrs,
                       tol=reduce_tol(op, dt, k))
        for dt in ("f32", "f16"):
            single("reduce/%s/%s/specials/axes=[1]" % (op, dt), op,
                   lambda g, dt=dt: [g.arr(dt, reduce_specials(g.rng))], attrs={"axes": [1]},
                   tol=reduce_tol(op, dt, 16))


def gen_arg():
    cfgs = [([7, 33, 5], 1, 1, 0), ([7, 33, 5], -1, 0, 1), ([256, 1024], 1, 0, 0), ([1023], 0, 1, 1),
            ([1], 0, 0, 0), ([3, 0, 4], 2, 1, 0), ([2, 3, 4, 5, 6, 7], -3, 1, 1), ([65537], -1, 0, 0)]
    for i, op in enumerate(("argmax", "argmin")):
        for j, dt in enumerate(NUMS):
            for shape, axis, kd, last in rot(cfgs, 2 * (i + j), 2):
                attrs = {"axis": axis, "keepdims": kd, "select_last_index": last}
                single("arg/%s/%s/%s/axis=%d,keepdims=%d,last=%d" % (op, dt, sh(shape), axis, kd, last), op,
                       lambda g, dt=dt, shape=shape: [g.x(dt, shape, ilo=-20, ihi=20)], attrs=attrs)
            for last in ((i + j) % 2,):
                single("arg/%s/%s/ties/last=%d" % (op, dt, last), op,
                       lambda g, dt=dt: [discrete(g, dt, [6, 40], 0.02)],
                       attrs={"axis": 1, "keepdims": 0, "select_last_index": last})


def gen_cumsum():
    cfgs = [([1023], 0, 0, 0), ([7, 33], 1, 1, 0), ([7, 33], 0, 0, 1), ([7, 33], -1, 1, 1), ([256, 1024], 1, 0, 0),
            ([2, 3, 4, 5], 2, 1, 1), ([1], 0, 0, 0), ([0, 5], 1, 0, 1), ([65537], -1, 1, 0), ([5, 4, 3], 0, 0, 1)]
    for j, dt in enumerate(NUMS):
        for shape, axis, ex, rev in (cfgs if dt == "f32" else rot(cfgs, 4 * j, 4)):
            k = shape[axis]
            single("cumsum/%s/%s/axis=%d,exclusive=%d,reverse=%d" % (dt, sh(shape), axis, ex, rev), "cumsum",
                   lambda g, dt=dt, shape=shape: [g.x(dt, shape)], attrs={"axis": axis, "exclusive": ex, "reverse": rev},
                   tol=accum(dt, k))


def gen_topk():
    cfgs = [([1023], 10, -1, 1, 1), ([7, 33], 5, 0, 0, 1), ([256, 1024], 8, -1, 1, 0), ([5, 65], 65, 1, 0, 1),
            ([4, 7], 0, 1, 1, 1), ([2, 3, 5, 4], 2, 2, 0, 0), ([1], 1, 0, 1, 1), ([65537], 100, 0, 1, 1),
            ([3, 0, 4], 2, -1, 1, 1)]
    for j, dt in enumerate(NUMS):
        for shape, k, axis, largest, srt in (cfgs if dt == "f32" else rot(cfgs, 3 * j, 3)):
            single("topk/%s/%s/k=%d,axis=%d,largest=%d,sorted=%d" % (dt, sh(shape), k, axis, largest, srt), "topk",
                   lambda g, dt=dt, shape=shape: [g.x(dt, shape)],
                   attrs={"k": k, "axis": axis, "largest": largest, "sorted": srt}, nout=2)
        for largest in (0, 1):
            single("topk/%s/ties/largest=%d" % (dt, largest), "topk",
                   lambda g, dt=dt: [discrete(g, dt, [6, 40], 0.05)],
                   attrs={"k": 9, "axis": 1, "largest": largest}, nout=2)


# ---------------------------------------------------------------- normalization
def gen_softmax():
    cfgs = [([7, 33, 65], 0), ([7, 33, 65], 1), ([7, 33, 65], -1), ([256, 1024], -1), ([1, 1], -1), ([3, 0, 4], 1),
            ([1023], 0), ([2, 3, 4, 5, 6, 7], 3)]
    for op in ("softmax", "log_softmax"):
        for j, dt in enumerate(FLOATS):
            for shape, axis in pick(cfgs, dt, j, 3):
                single("norm/%s/%s/%s/axis=%d" % (op, dt, sh(shape), axis), op,
                       lambda g, dt=dt, shape=shape: [g.x(dt, shape, -4, 4)], attrs={"axis": axis},
                       tol=accum(dt, 1, 4.0 if op == "log_softmax" else 1.0))
            single("norm/%s/%s/large_values" % (op, dt), op,
                   lambda g, dt=dt: [g.x(dt, [9, 300], -3e4, 3e4)], tol=accum(dt, 1, 3e4 if op == "log_softmax" else 1))

            def masked_rows(g, dt=dt):
                v = g.rng.uniform(-3, 3, (5, 12))
                v[0, :] = -INF
                v[1, ::2] = -INF
                v[2, 3] = NAN
                v[3, 5] = INF
                return [g.arr(dt, v)]
            single("norm/%s/%s/inf_nan_rows" % (op, dt), op, masked_rows, tol=accum(dt, 1, 4.0))


def gen_norms():
    for j, dt in enumerate(FLOATS):
        ln = [([7, 33, 65], -1, "sb", 1), ([7, 33, 65], 1, "sb", 3), ([256, 1024], -1, "s", 1),
              ([256, 1024], -1, "", 3), ([4, 1], -1, "sb", 3), ([0, 16], -1, "sb", 1), ([2, 3, 4, 5], -2, "b", 3),
              ([3, 5, 7], 0, "sb", 3)]
        for shape, axis, sb, nout in pick(ln, dt, j, 3):
            norm_shape = shape[axis:]

            def mk(g, dt=dt, shape=shape, sb=sb, norm_shape=norm_shape):
                ins = [g.x(dt, shape, -2, 3)]
                ins.append(g.x(dt, norm_shape, 0.5, 1.5) if "s" in sb else "")
                ins.append(g.x(dt, norm_shape) if "b" in sb else "")
                while ins and ins[-1] == "":
                    ins.pop()
                return ins
            single("norm/layer_norm/%s/%s/axis=%d,%s,outputs=%d" % (dt, sh(shape), axis, sb or "plain", nout),
                   "layer_norm", mk, attrs={"axis": axis, "epsilon": 1e-5}, nout=nout, tol=accum(dt, 1, 4.0))
        rms = [([7, 33, 65], -1, 1), ([7, 33, 65], 1, 0), ([256, 1024], -1, 1), ([1, 1], -1, 0), ([0, 8], -1, 1),
               ([2, 3, 4, 5], -3, 1)]
        for shape, axis, sc in pick(rms, dt, j, 3):
            def mk(g, dt=dt, shape=shape, axis=axis, sc=sc):
                return [g.x(dt, shape, -2, 3)] + ([g.x(dt, shape[axis:], 0.5, 1.5)] if sc else [])
            single("norm/rms_norm/%s/%s/axis=%d,scale=%d" % (dt, sh(shape), axis, sc), "rms_norm", mk,
                   attrs={"axis": axis, "epsilon": 1e-6}, tol=accum(dt, 1, 4.0))
        for shape in pick(([4, 6], [2, 6, 33], [2, 3, 17, 19], [1, 4, 3, 5, 6], [0, 3, 4], [8, 64, 28, 28]), dt, j, 3):
            c = shape[1]
            single("norm/batch_norm/%s/%s" % (dt, sh(shape)), "batch_norm",
                   lambda g, dt=dt, shape=shape, c=c: [g.x(dt, shape, -2, 3), g.x(dt, [c], 0.5, 1.5), g.x(dt, [c]),
                                                       g.x(dt, [c], -0.5, 0.5), g.x(dt, [c], 0.1, 2)],
                   tol=accum(dt, 1, 8.0))
        for shape in pick(([4, 6], [2, 6, 33], [2, 3, 17, 19], [1, 4, 3, 5, 6], [0, 3, 4], [2, 5, 1]), dt, j, 3):
            c = shape[1]
            single("norm/instance_norm/%s/%s" % (dt, sh(shape)), "instance_norm",
                   lambda g, dt=dt, shape=shape, c=c: [g.x(dt, shape, -2, 3), g.x(dt, [c], 0.5, 1.5), g.x(dt, [c])],
                   attrs={"epsilon": 1e-5}, tol=accum(dt, 1, 4.0))
        for shape, groups in pick((([2, 6, 33], 3), ([2, 8, 9, 10], 1), ([2, 8, 9, 10], 8), ([1, 12, 3, 4, 5], 4),
                                   ([3, 6], 2), ([0, 4, 5], 2), ([4, 32, 16, 16], 8)), dt, j, 3):
            c = shape[1]
            single("norm/group_norm/%s/%s/groups=%d" % (dt, sh(shape), groups), "group_norm",
                   lambda g, dt=dt, shape=shape, c=c: [g.x(dt, shape, -2, 3), g.x(dt, [c], 0.5, 1.5), g.x(dt, [c])],
                   attrs={"num_groups": groups}, tol=accum(dt, 1, 4.0))
        for shape, axis, p in pick((([7, 33, 65], -1, 2), ([7, 33, 65], 0, 1), ([256, 1024], 1, 2), ([0, 5], 1, 1),
                                    ([2, 3, 4, 5], -3, 1), ([65537], 0, 2)), dt, j, 3):
            single("norm/lp_normalization/%s/%s/axis=%d,p=%d" % (dt, sh(shape), axis, p), "lp_normalization",
                   lambda g, dt=dt, shape=shape: [g.x(dt, shape, -2, 3)], attrs={"axis": axis, "p": p},
                   tol=accum(dt, 1, 1.0))
        for shape, axes in pick((([2, 3, 17, 19], None), ([7, 33, 65], [0, 2]), ([256, 1024], [-1]), ([4, 5], []),
                                 ([0, 3, 2, 2], None), ([8, 64, 28, 28], None), ([3, 4, 5], [1])), dt, j, 3):
            single("norm/mean_variance_normalization/%s/%s/axes=%s" % (dt, sh(shape), axes),
                   "mean_variance_normalization", lambda g, dt=dt, shape=shape: [g.x(dt, shape, -2, 3)],
                   attrs={"axes": axes} if axes is not None else None, tol=accum(dt, 1, 4.0))


# ---------------------------------------------------------------- matrix products
def mm_k(sa, sb):
    return sa[-1]


def gen_matmul():
    shapes = [([7], [7]), ([7], [7, 5]), ([3, 7], [7]), ([1, 1], [1, 1]), ([7, 33], [33, 129]),
              ([2, 3, 7, 33], [33, 5]), ([4, 1, 7, 9], [3, 9, 11]), ([129, 1], [1, 33]), ([0, 5], [5, 3]),
              ([3, 0], [0, 4]), ([33, 4095], [4095, 129]), ([256, 1024], [1024, 256]), ([5], [2, 5, 3]),
              ([2, 1, 3, 1, 7, 9], [4, 1, 5, 9, 4]), ([1, 129], [129, 1])]
    for dt in FLOATS:
        for sa, sb in shapes:
            k = sa[-1]
            single("matmul/%s/%sx%s" % (dt, sh(sa), sh(sb)), "matmul",
                   lambda g, dt=dt, sa=sa, sb=sb: [g.x(dt, sa), g.x(dt, sb)], tol=accum(dt, k))
    cfgs = [(7, 33, 5, 0, 0, 1.0, 1.0, "N"), (7, 33, 5, 1, 0, 0.5, 2.0, "MN"), (7, 33, 5, 0, 1, 1.0, 1.0, "M1"),
            (7, 33, 5, 1, 1, -1.5, 0.0, "MN"), (1, 1, 1, 0, 0, 1.0, 1.0, "S"), (129, 65, 33, 1, 0, 1.0, -1.0, "1N"),
            (64, 512, 96, 0, 1, 0.25, 1.0, ""), (33, 0, 7, 0, 0, 1.0, 1.0, "N"), (0, 5, 3, 0, 1, 1.0, 1.0, "N")]
    for dt in FLOATS:
        for m, k, n, ta, tb, al, be, cs in cfgs:
            sa = [k, m] if ta else [m, k]
            sb = [n, k] if tb else [k, n]
            c = {"N": [n], "MN": [m, n], "M1": [m, 1], "S": [], "1N": [1, n], "": None}[cs]

            def mk(g, dt=dt, sa=sa, sb=sb, c=c):
                return [g.x(dt, sa), g.x(dt, sb)] + ([g.x(dt, c)] if c is not None else [])
            single("gemm/%s/M=%d,K=%d,N=%d,ta=%d,tb=%d,alpha=%g,beta=%g,c=%s" % (dt, m, k, n, ta, tb, al, be,
                                                                             sh(c) if c is not None else "none"),
                   "gemm", mk, attrs={"trans_a": ta, "trans_b": tb, "alpha": al, "beta": be},
                   tol=accum(dt, k, max(abs(al), 1.0) + abs(be)))
    eqs = [("ij,jk->ik", [[7, 33], [33, 5]], 33), ("bij,bjk->bik", [[3, 7, 9], [3, 9, 5]], 9), ("ii->i", [[7, 7]], 1),
           ("ij->", [[33, 65]], 33 * 65), ("...ij,...jk->...ik", [[2, 3, 4, 5], [3, 5, 6]], 5),
           ("i,j->ij", [[7], [9]], 1), ("ij,jk,kl->il", [[5, 6], [6, 7], [7, 8]], 42),
           ("bhqd,bhkd->bhqk", [[2, 3, 5, 64], [2, 3, 7, 64]], 64), ("ij,jk", [[4, 5], [5, 6]], 5), ("ii", [[9, 9]], 9),
           ("ij->ji", [[7, 33], ], 1), ("i,i->", [[1023], [1023]], 1023), ("ab,ab->a", [[0, 4], [0, 4]], 4)]
    for j, dt in enumerate(FLOATS):
        for eq, shapes, k in pick(eqs, dt, j, 5):
            single("einsum/%s/%s/%s" % (dt, eq.replace(" ", ""), "x".join(sh(s) for s in shapes)), "einsum",
                   lambda g, dt=dt, shapes=shapes: [g.x(dt, s) for s in shapes], attrs={"equation": eq},
                   tol=accum(dt, k))


# ---------------------------------------------------------------- int8 inference
QZ = {"u8": (0, 256), "i8": (-128, 128), "i16": (-32768, 32768)}


def q_ties(g, dt, shape):
    """Values whose quotient by 0.5 lands on halves, beyond the range and between."""
    n = prod(shape)
    base = np.array([-2.25, -0.75, -0.25, 0.25, 0.75, 1.25, 63.75, 64.25, 127.75, 127.25, -64.25, 1e4, -1e4, 0.0],
                    np.float64)
    v = np.resize(base, n) + np.resize(g.rng.integers(-100, 100, 17) * 0.5, n) * (np.arange(n) % 3 == 0)
    return g.arr(dt, v.reshape(shape))


def gen_quant():
    shapes = [[], [7], [33, 65], [4, 3, 5], [256, 1024], [0, 3]]
    for dt in FLOATS:
        for qd in ("u8", "i8", "i16"):
            for shape in shapes:
                def mk(g, dt=dt, qd=qd, shape=shape):
                    return [q_ties(g, dt, shape), g.arr(dt, np.array(0.5)), g.x(qd, [], ilo=QZ[qd][0], ihi=QZ[qd][1])]
                single("quantize_linear/%s/%s/%s/per_tensor" % (dt, qd, sh(shape)), "quantize_linear", mk)
            for shape, axis in (([33, 65], 1), ([4, 3, 5], 0), ([4, 3, 5], -2), ([256, 1024], 0)):
                def mk(g, dt=dt, qd=qd, shape=shape, axis=axis):
                    c = shape[axis]
                    return [g.x(dt, shape, -300, 300), g.x(dt, [c], 0.05, 2.0), g.x(qd, [c])]
                single("quantize_linear/%s/%s/%s/axis=%d" % (dt, qd, sh(shape), axis), "quantize_linear", mk,
                       attrs={"axis": axis})
        single("quantize_linear/%s/u16/[33,65]/per_tensor" % dt, "quantize_linear",
               lambda g, dt=dt: [q_ties(g, dt, [33, 65]), g.arr(dt, np.array(0.5)), g.arr("u16", np.array(30000))])
        single("quantize_linear/%s/u8/[33,65]/no_zero_point" % dt, "quantize_linear",
               lambda g, dt=dt: [g.x(dt, [33, 65], -3, 300), g.arr(dt, np.array(0.75))])
    for qd in ("u8", "i8", "i16", "i32"):
        for sd in FLOATS:
            for shape in ([], [7], [33, 65], [256, 1024], [0]):
                single("dequantize_linear/%s/%s/%s/per_tensor" % (qd, sd, sh(shape)), "dequantize_linear",
                       lambda g, qd=qd, sd=sd, shape=shape: [g.x(qd, shape), g.x(sd, [], 0.001, 2.0)] +
                       ([g.x(qd, [])] if qd != "i32" else []))
            single("dequantize_linear/%s/%s/[4,3,5]/axis=1" % (qd, sd), "dequantize_linear",
                   lambda g, qd=qd, sd=sd: [g.x(qd, [4, 3, 5]), g.x(sd, [3], 0.001, 2.0)] +
                   ([g.x(qd, [3])] if qd != "i32" else []), attrs={"axis": 1})
    for shape in ([], [1], [7], [33, 65], [256, 1024], [0]):
        single("dynamic_quantize_linear/f32/%s" % sh(shape), "dynamic_quantize_linear",
               lambda g, shape=shape: [g.x("f32", shape, -3, 5)], nout=3)
    single("dynamic_quantize_linear/f32/[300]/positive", "dynamic_quantize_linear",
           lambda g: [g.x("f32", [300], 0.5, 5)], nout=3)
    # matrix products: i8 x i8 without zero points and K, N multiples of 4 take cuBLAS's int8 GEMM
    mm = [([64, 256], [256, 48]), ([2, 3, 8, 32], [32, 16]), ([7, 33], [33, 5]), ([4, 1, 5, 9], [3, 9, 6]),
          ([9], [9, 4]), ([5, 9], [9]), ([0, 5], [5, 3]), ([3, 0], [0, 4]), ([256, 1024], [1024, 256]),
          ([2, 16, 64], [2, 64, 32])]
    for ad, bd in (("i8", "i8"), ("u8", "u8"), ("u8", "i8"), ("i8", "u8")):
        for sa, sb in mm:
            single("matmul_integer/%sx%s/%sx%s" % (ad, bd, sh(sa), sh(sb)), "matmul_integer",
                   lambda g, ad=ad, bd=bd, sa=sa, sb=sb: [g.x(ad, sa), g.x(bd, sb)])
            def mkz(g, ad=ad, bd=bd, sa=sa, sb=sb):
                M, N = (sa[-2] if len(sa) > 1 else 1), (sb[-1] if len(sb) > 1 else 1)
                za = g.x(ad, [M] if len(sa) > 1 else [])
                zb = g.x(bd, [N] if len(sb) > 1 else [])
                return [g.x(ad, sa), g.x(bd, sb), za, zb]
            single("matmul_integer/%sx%s/%sx%s/zero_points" % (ad, bd, sh(sa), sh(sb)), "matmul_integer", mkz)
        for sd in FLOATS:
            for sa, sb, per in (([64, 256], [256, 48], 1), ([2, 3, 8, 32], [32, 16], 0), ([7, 33], [33, 5], 1),
                                ([0, 5], [5, 3], 0)):
                def mkq(g, ad=ad, bd=bd, sa=sa, sb=sb, per=per, sd=sd):
                    M, N = sa[-2], sb[-1]
                    yd = ad
                    return [g.x(ad, sa), g.x(sd, [M] if per else [], 0.001, 0.05), g.x(ad, [M] if per else []),
                            g.x(bd, sb), g.x(sd, [N] if per else [], 0.001, 0.05), g.x(bd, [N] if per else []),
                            g.x(sd, [], 0.5, 4.0), g.x(yd, [])]
                single("qlinear_matmul/%sx%s/%s/%sx%s/%s" % (ad, bd, sd, sh(sa), sh(sb),
                                                            "per_row_column" if per else "per_tensor"),
                       "qlinear_matmul", mkq)


def gen_quant_conv():
    geoms = [([1, 3, 7, 7], [4, 3, 3, 3], {}), ([2, 4, 9, 8], [6, 2, 3, 2], {"group": 2, "pads": [1, 0, 2, 1]}),
             ([1, 2, 11, 10], [3, 2, 3, 3], {"strides": [2, 3], "dilations": [2, 1], "pads": [1, 1, 1, 1]}),
             ([2, 3, 15], [5, 3, 4], {"strides": [2], "pads": [3, 1]}), ([1, 2, 4, 5, 6], [3, 2, 2, 3, 2], {}),
             ([2, 16, 28, 28], [32, 16, 3, 3], {"pads": [1, 1, 1, 1]}),
             ([1, 8, 6, 6], [8, 1, 3, 3], {"group": 8, "auto_pad": "SAME_UPPER"})]
    for xd, wd in (("u8", "u8"), ("i8", "i8"), ("u8", "i8"), ("i8", "u8")):
        for xs, ws, attrs in geoms:
            tag = "%sx%s/%sx%s/%s" % (xd, wd, sh(xs), sh(ws), ",".join("%s=%s" % (a, sh(v) if isinstance(v, list) else v)
                                                                for a, v in sorted(attrs.items())))
            single("conv_integer/%s" % tag, "conv_integer", lambda g, xd=xd, wd=wd, xs=xs, ws=ws: [g.x(xd, xs),
                                                                                                 g.x(wd, ws)],
                   attrs=attrs or None)
            single("conv_integer/%s/zero_points" % tag, "conv_integer",
                   lambda g, xd=xd, wd=wd, xs=xs, ws=ws: [g.x(xd, xs), g.x(wd, ws), g.x(xd, []), g.x(wd, [ws[0]])],
                   attrs=attrs or None)
            for sd in ("f32", "f16"):
                def mk(g, xd=xd, wd=wd, xs=xs, ws=ws, sd=sd):
                    M = ws[0]
                    return [g.x(xd, xs), g.x(sd, [], 0.005, 0.05), g.x(xd, []), g.x(wd, ws), g.x(sd, [M], 0.005, 0.05),
                            g.x(wd, [M]), g.x(sd, [], 0.2, 2.0), g.x(xd, []), g.x("i32", [M], ilo=-5000, ihi=5000)]
                single("qlinear_conv/%s/%s/bias" % (tag, sd), "qlinear_conv", mk, attrs=attrs or None)


# ---------------------------------------------------------------- movement
def mv_inputs(g, dt, shapes):
    return [g.x(dt, s) for s in shapes]


def movement(op, cfgs):
    """cfgs: (label, input shapes, attrs, number of outputs). f32 runs every config,
    the other dtypes one each, round robin: the kernels move bytes, so the element
    size matters more than the dtype, and every size meets several configs."""
    for j, dt in enumerate(ANY):
        for label, shapes, attrs, nout in pick(cfgs, dt, j, 1):
            single("movement/%s/%s/%s" % (op, dt, label), op,
                   lambda g, dt=dt, shapes=shapes: mv_inputs(g, dt, shapes), attrs=attrs, nout=nout)


def gen_movement():
    movement("reshape", [
        ("[2,3,4]->[4,-1]", [[2, 3, 4]], {"shape": [4, -1]}, 1),
        ("[2,3,4]->[0,-1]", [[2, 3, 4]], {"shape": [0, -1]}, 1),
        ("[0,3]->[3,0],allowzero", [[0, 3]], {"shape": [3, 0], "allowzero": 1}, 1),
        ("[24]->[2,3,4]", [[24]], {"shape": [2, 3, 4]}, 1),
        ("[]->[1,1]", [[]], {"shape": [1, 1]}, 1),
        ("[1]->[]", [[1]], {"shape": []}, 1),
        ("[2,3,4,5,6,7]->[7,6,-1]", [[2, 3, 4, 5, 6, 7]], {"shape": [7, 6, -1]}, 1),
    ])
    movement("transpose", [
        ("[7,33]", [[7, 33]], None, 1),
        ("[2,3,4]/perm=[1,0,2]", [[2, 3, 4]], {"perm": [1, 0, 2]}, 1),
        ("[2,3,4,5]/perm=[3,1,0,2]", [[2, 3, 4, 5]], {"perm": [3, 1, 0, 2]}, 1),
        ("[2,3,4,5,6]/perm=[4,2,0,3,1]", [[2, 3, 4, 5, 6]], {"perm": [4, 2, 0, 3, 1]}, 1),
        ("[2,3,2,3,2,3]/reversed", [[2, 3, 2, 3, 2, 3]], {"perm": [5, 4, 3, 2, 1, 0]}, 1),
        ("[2,3,4,3,2,5]/perm=[0,2,4,1,3,5]", [[2, 3, 4, 3, 2, 5]], {"perm": [0, 2, 4, 1, 3, 5]}, 1),
        ("[256,1024]/perm=[1,0]", [[256, 1024]], {"perm": [1, 0]}, 1),
        ("[0,5,3]/perm=[2,0,1]", [[0, 5, 3]], {"perm": [2, 0, 1]}, 1),
        ("[1,1,7]/perm=[2,1,0]", [[1, 1, 7]], {"perm": [2, 1, 0]}, 1),
        ("[33,65,3]/perm=[1,2,0]", [[33, 65, 3]], {"perm": [1, 2, 0]}, 1),
    ])
    movement("flatten", [
        ("[2,3,4,5]/axis=0", [[2, 3, 4, 5]], {"axis": 0}, 1),
        ("[2,3,4,5]/axis=2", [[2, 3, 4, 5]], {"axis": 2}, 1),
        ("[2,3,4,5]/axis=-1", [[2, 3, 4, 5]], {"axis": -1}, 1),
        ("[2,3,4,5]/axis=4", [[2, 3, 4, 5]], {"axis": 4}, 1),
        ("[7]/default", [[7]], None, 1),
        ("[2,0,3]/axis=1", [[2, 0, 3]], {"axis": 1}, 1),
    ])
    movement("squeeze", [
        ("[1,3,1,5]/all", [[1, 3, 1, 5]], None, 1),
        ("[1,3,1,5]/axes=[0]", [[1, 3, 1, 5]], {"axes": [0]}, 1),
        ("[1,3,1,5]/axes=[-2,0]", [[1, 3, 1, 5]], {"axes": [-2, 0]}, 1),
        ("[1]/all", [[1]], None, 1),
        ("[1,1,1,1,1,7]/all", [[1, 1, 1, 1, 1, 7]], None, 1),
        ("[0,1,3]/axes=[1]", [[0, 1, 3]], {"axes": [1]}, 1),
    ])
    movement("unsqueeze", [
        ("[3,5]/axes=[0]", [[3, 5]], {"axes": [0]}, 1),
        ("[3,5]/axes=[-1]", [[3, 5]], {"axes": [-1]}, 1),
        ("[3,5]/axes=[0,3]", [[3, 5]], {"axes": [0, 3]}, 1),
        ("[]/axes=[0]", [[]], {"axes": [0]}, 1),
        ("[3,4]/axes=[1,-1,0]", [[3, 4]], {"axes": [1, -1, 0]}, 1),
        ("[2,3,4,5,6]/axes=[5]", [[2, 3, 4, 5, 6]], {"axes": [5]}, 1),
        ("[0,3]/axes=[1]", [[0, 3]], {"axes": [1]}, 1),
    ])
    movement("expand", [
        ("[3,1]->[2,3,4]", [[3, 1]], {"shape": [2, 3, 4]}, 1),
        ("[1]->[7]", [[1]], {"shape": [7]}, 1),
        ("[]->[2,3]", [[]], {"shape": [2, 3]}, 1),
        ("[5,1,7]->[3,1]", [[5, 1, 7]], {"shape": [3, 1]}, 1),
        ("[2,1,3,1,5,1]->[2,4,3,6,5,2]", [[2, 1, 3, 1, 5, 1]], {"shape": [2, 4, 3, 6, 5, 2]}, 1),
        ("[4,1]->[4,0]", [[4, 1]], {"shape": [4, 0]}, 1),
        ("[1,1024]->[256,1024]", [[1, 1024]], {"shape": [256, 1024]}, 1),
    ])
    movement("tile", [
        ("[2,3]x[2,3]", [[2, 3]], {"repeats": [2, 3]}, 1),
        ("[7]x[3]", [[7]], {"repeats": [3]}, 1),
        ("[2,3,4]x[1,1,2]", [[2, 3, 4]], {"repeats": [1, 1, 2]}, 1),
        ("[1,2,1,2,1,2]x[2,1,3,1,2,1]", [[1, 2, 1, 2, 1, 2]], {"repeats": [2, 1, 3, 1, 2, 1]}, 1),
        ("[2,3]x[0,1]", [[2, 3]], {"repeats": [0, 1]}, 1),
        ("[2,0]x[3,2]", [[2, 0]], {"repeats": [3, 2]}, 1),
        ("[33,1]x[1,31]", [[33, 1]], {"repeats": [1, 31]}, 1),
    ])
    movement("concat", [
        ("[2,3]+[4,3]+[1,3]/axis=0", [[2, 3], [4, 3], [1, 3]], {"axis": 0}, 1),
        ("[2,3]+[2,5]/axis=-1", [[2, 3], [2, 5]], {"axis": -1}, 1),
        ("20x[7]/axis=0", [[7]] * 20, {"axis": 0}, 1),
        ("[2,3,4]+[2,0,4]+[2,5,4]/axis=1", [[2, 3, 4], [2, 0, 4], [2, 5, 4]], {"axis": 1}, 1),
        ("[1,2,1,2,1,2]x2/axis=5", [[1, 2, 1, 2, 1, 2]] * 2, {"axis": 5}, 1),
        ("[256,512]x2/axis=1", [[256, 512]] * 2, {"axis": 1}, 1),
        ("40x[3,1]/axis=1", [[3, 1]] * 40, {"axis": 1}, 1),
        ("[1]/axis=0", [[1]], {"axis": 0}, 1),
        ("[0,3]+[0,3]/axis=0", [[0, 3], [0, 3]], {"axis": 0}, 1),
    ])
    movement("split", [
        ("[10,3]/axis=0,split=[2,3,5]", [[10, 3]], {"axis": 0, "split": [2, 3, 5]}, 3),
        ("[4,9]/axis=-1,equal", [[4, 9]], {"axis": -1}, 3),
        ("[4]/num_outputs=3", [[4]], {"num_outputs": 3}, 3),
        ("[7,33]/axis=1,split=[0,33]", [[7, 33]], {"axis": 1, "split": [0, 33]}, 2),
        ("[2,3,4,5,6,7]/axis=3,split=[1,4]", [[2, 3, 4, 5, 6, 7]], {"axis": 3, "split": [1, 4]}, 2),
        ("[1023]/num_outputs=4", [[1023]], {"num_outputs": 4}, 4),
        ("[256,1024]/axis=1,split=[1,1000,23]", [[256, 1024]], {"axis": 1, "split": [1, 1000, 23]}, 3),
    ])
    movement("slice", [
        ("[10]/reverse", [[10]], {"starts": [-1], "ends": [-11], "steps": [-1]}, 1),
        ("[10]/8:1:-3", [[10]], {"starts": [8], "ends": [1], "axes": [0], "steps": [-3]}, 1),
        ("[5,6,7]/clamp", [[5, 6, 7]], {"starts": [1, -5], "ends": [4, 100], "axes": [0, 2], "steps": [1, 2]}, 1),
        ("[5]/-100:-100:-1", [[5]], {"starts": [-100], "ends": [-100], "steps": [-1]}, 1),
        ("[2,3,4,5,6,7]/mixed", [[2, 3, 4, 5, 6, 7]],
         {"starts": [1, 0, -1], "ends": [2, 3, 0], "axes": [0, 2, 5], "steps": [1, 2, -2]}, 1),
        ("[7,9]/empty", [[7, 9]], {"starts": [0], "ends": [0], "axes": [1]}, 1),
        ("[256,1024]/steps=[2,3]", [[256, 1024]], {"starts": [0, 1], "ends": [256, 1024], "axes": [0, 1],
                                                   "steps": [2, 3]}, 1),
        ("[33,65]/neg_axes", [[33, 65]], {"starts": [-10, 60], "ends": [-1, 2], "axes": [-2, -1],
                                          "steps": [1, -7]}, 1),
    ])
    pads = [
        ("[3,4]/constant", [[3, 4]], {"pads": [1, 2, 2, 1]}, 1),
        ("[3,4]/reflect", [[3, 4]], {"pads": [1, 2, 2, 1], "mode": "reflect"}, 1),
        ("[3,4]/edge", [[3, 4]], {"pads": [2, 3, 1, 3], "mode": "edge"}, 1),
        ("[5,6,7]/reflect_negative", [[5, 6, 7]], {"pads": [1, -1, 0, -2, 2, 1], "mode": "reflect"}, 1),
        ("[5,6,7]/edge_axes=[-1]", [[5, 6, 7]], {"pads": [2, 3], "mode": "edge", "axes": [-1]}, 1),
        ("[7]/constant_noop", [[7]], {"pads": [0, 0]}, 1),
        ("[2,3,4,5]/constant_value", [[2, 3, 4, 5]], {"pads": [1, 0, 0, 1, 0, 1, 1, 0], "value": 7.0}, 1),
        ("[0,3]/constant", [[0, 3]], {"pads": [1, 1, 1, 1], "value": 1.0}, 1),
        ("[1,1,1,2,2,3]/edge", [[1, 1, 1, 2, 2, 3]], {"pads": [0, 1, 0, 1, 2, 0, 1, 0, 1, 0, 0, 2], "mode": "edge"}, 1),
        ("[256,1024]/reflect", [[256, 1024]], {"pads": [3, 5, 2, 7], "mode": "reflect"}, 1),
        ("[4,5]/constant_negative", [[4, 5]], {"pads": [-1, 2, 0, -3], "value": -2.0}, 1),
        ("[2,3,4]/wrap", [[2, 3, 4]], {"pads": [0, 7, 1, 1, 2, 6], "mode": "wrap"}, 1),
        ("[5,6]/wrap_negative", [[5, 6]], {"pads": [-2, 3, 4, -1], "mode": "wrap"}, 1),
    ]
    movement("pad", pads)
    gathers = [
        ("[7,5]/axis=0", [7, 5], [0, -1, 3, 3, -7], 0),
        ("[7,5]/axis=1,2d_indices", [7, 5], [[1, -2], [4, 0]], 1),
        ("[3,4,5]/axis=-1,scalar_index", [3, 4, 5], -1, -1),
        ("[1023]/axis=0,500_indices", [1023], None, 0),
        ("[2,3,4,5,6]/axis=3", [2, 3, 4, 5, 6], [[0, 1], [2, -1]], 3),
        ("[5,0,3]/axis=0", [5, 0, 3], [1, 2], 0),
        ("[5,3]/empty_indices", [5, 3], np.zeros([0], np.int64), 0),
        ("[256,1024]/axis=0", [256, 1024], None, 0),
    ]
    for j, dt in enumerate(ANY):
        for k, (label, shape, idx, axis) in enumerate(pick(gathers, dt, j, 1)):
            idt = ("i32", "i64")[(j + k) % 2]

            def mk(g, dt=dt, shape=shape, idx=idx, axis=axis, idt=idt):
                n = shape[axis]
                ind = g.rng.integers(-n, n, 500) if idx is None else np.asarray(idx)
                return [g.x(dt, shape), g.arr(idt, ind)]
            single("movement/gather/%s/%s,%s" % (dt, label, idt), "gather", mk, attrs={"axis": axis})
    gel = [([7, 5], [4, 5], 0), ([7, 5], [7, 3], -1), ([3, 4, 5], [3, 4, 2], 1), ([33], [100], 0),
           ([2, 3, 4, 5, 6], [2, 3, 4, 5, 2], 4), ([4, 0], [2, 0], 0), ([256, 1024], [256, 7], 1)]
    for j, dt in enumerate(ANY):
        for k, (ds, isz, axis) in enumerate(pick(gel, dt, j, 1)):
            idt = ("i64", "i32")[(j + k) % 2]

            def mk(g, dt=dt, ds=ds, isz=isz, axis=axis, idt=idt):
                n = ds[axis]
                return [g.x(dt, ds), g.arr(idt, g.rng.integers(-n, max(n, 1), isz) if n else np.zeros(isz, np.int64))]
            single("movement/gather_elements/%s/%s,idx=%s,axis=%d,%s" % (dt, sh(ds), sh(isz), axis, idt),
                   "gather_elements", mk, attrs={"axis": axis})
    case("movement/gather/f32/index_out_of_range",
         lambda g: [g.op("gather", [g.x("f32", [7, 5]), g.arr("i64", [0, 3, 7, 1])], {"axis": 0})],
         rc=3, err="out of range")
    case("movement/gather_elements/i32/index_out_of_range",
         lambda g: [g.op("gather_elements", [g.x("i32", [4, 3]), g.arr("i32", [[0, -4, 2], [1, 1, -5]])], {"axis": 0})],
         rc=3, err="out of range")


# ---------------------------------------------------------------- convolution and pooling
CONVS = [
    ("1d/stride2,pads", [2, 3, 33], [4, 3, 5], {"strides": [2], "pads": [1, 2]}, True),
    ("1d/depthwise,dil3", [1, 6, 65], [6, 1, 3], {"group": 6, "dilations": [3], "pads": [3, 3]}, False),
    ("1d/long", [3, 8, 100], [16, 8, 7], {"strides": [3], "pads": [3, 3]}, True),
    ("2d/pads1", [2, 3, 17, 19], [8, 3, 3, 3], {"pads": [1, 1, 1, 1]}, True),
    ("2d/group2,stride,dil", [1, 4, 32, 32], [6, 2, 3, 5],
     {"group": 2, "strides": [2, 3], "dilations": [2, 1], "pads": [0, 1, 2, 3]}, True),
    ("2d/same_upper", [1, 3, 15, 15], [4, 3, 4, 4], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, True),
    ("2d/same_lower", [1, 3, 15, 14], [4, 3, 3, 4], {"strides": [2, 3], "auto_pad": "SAME_LOWER"}, False),
    ("2d/valid", [2, 3, 9, 9], [5, 3, 3, 2], {"strides": [1, 2], "auto_pad": "VALID"}, True),
    ("2d/depthwise", [2, 16, 28, 28], [16, 1, 3, 3], {"group": 16, "pads": [1, 1, 1, 1]}, True),
    ("2d/1x1", [4, 64, 14, 14], [128, 64, 1, 1], {}, True),
    ("2d/resnet_3x3", [1, 64, 56, 56], [64, 64, 3, 3], {"pads": [1, 1, 1, 1]}, True),
    ("3d/pads,stride", [1, 2, 7, 8, 9], [3, 2, 3, 3, 3], {"pads": [1] * 6, "strides": [1, 2, 1]}, True),
    ("3d/group2,dil", [1, 4, 6, 6, 6], [4, 2, 2, 2, 2], {"group": 2, "dilations": [2, 1, 2]}, False),
    ("2d/empty_batch", [0, 3, 8, 8], [4, 3, 3, 3], {}, True),
    ("1d/one_element", [1, 1, 1], [1, 1, 1], {}, False),
]
CONVTS = [
    ("1d/stride2,outpad", [2, 3, 9], [3, 4, 3], {"strides": [2], "pads": [1, 1], "output_padding": [1]}, True),
    ("2d/stride2,pads", [1, 4, 7, 7], [4, 3, 3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1]}, False),
    ("2d/group2,dil2", [2, 4, 5, 6], [4, 2, 3, 3], {"group": 2, "dilations": [2, 2]}, True),
    ("2d/same_upper", [1, 3, 5, 5], [3, 2, 4, 4], {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, True),
    ("2d/same_lower", [1, 3, 5, 6], [3, 2, 3, 3], {"strides": [2, 2], "auto_pad": "SAME_LOWER"}, False),
    ("2d/output_shape", [1, 2, 7, 7], [2, 3, 3, 3], {"strides": [2, 2], "output_shape": [14, 14]}, True),
    ("2d/output_shape_beyond", [1, 2, 7, 7], [2, 3, 3, 3], {"strides": [2, 2], "output_shape": [17, 16]}, True),
    ("2d/depthwise", [1, 8, 9, 9], [8, 1, 4, 4], {"group": 8, "strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ("3d/stride,pads", [1, 2, 4, 5, 6], [2, 3, 3, 3, 3], {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1]}, True),
    ("2d/upsampler", [2, 16, 16, 16], [16, 8, 4, 4], {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ("2d/empty_batch", [0, 2, 4, 4], [2, 3, 3, 3], {}, False),
    ("2d/valid,outpad", [1, 3, 4, 4], [3, 2, 3, 3], {"auto_pad": "VALID", "strides": [3, 3],
                                                     "output_padding": [2, 1]}, True),
]


def gen_conv():
    for op, cfgs, mdim in (("conv", CONVS, 0), ("conv_transpose", CONVTS, 1)):
        for j, dt in enumerate(FLOATS):
            for label, xs, ws, attrs, bias in (cfgs if dt == "f32" else rot(cfgs, 5 * j, 5)):
                group = attrs.get("group", 1)
                m = ws[0] if op == "conv" else ws[1] * group
                k = (xs[1] // group) * prod(ws[2:])

                def mk(g, dt=dt, xs=xs, ws=ws, bias=bias, m=m):
                    return [g.x(dt, xs), g.x(dt, ws, -0.5, 0.5)] + ([g.x(dt, [m])] if bias else [])
                single("%s/%s/%s/%s%s" % (op, dt, label, sh(xs), ",bias" if bias else ""), op, mk, attrs=attrs,
                       tol=accum(dt, k, 0.5))


POOLS = [
    ("1d", [2, 3, 33], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ("2d/ceil", [2, 3, 17, 19], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ("2d/dilations", [1, 2, 16, 16], {"kernel_shape": [2, 3], "dilations": [2, 1]}),
    ("2d/same_upper", [1, 3, 15, 15], {"kernel_shape": [4, 4], "strides": [3, 3], "auto_pad": "SAME_UPPER"}),
    ("2d/same_lower", [1, 3, 14, 15], {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ("2d/valid,ceil", [1, 3, 10, 11], {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID", "ceil_mode": 1}),
    ("3d/ceil", [1, 2, 7, 8, 9], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1], "pads": [0, 1, 1, 1, 0, 1],
                                  "ceil_mode": 1}),
    ("2d/empty_batch", [0, 3, 8, 8], {"kernel_shape": [2, 2]}),
    ("2d/resnet_stem", [4, 64, 56, 56], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("2d/whole", [1, 1, 5, 5], {"kernel_shape": [5, 5]}),
]


def gen_pool():
    for j, dt in enumerate(FLOATS + ("i8", "u8")):
        for label, xs, attrs in (POOLS if dt == "f32" else rot(POOLS, 4 * j, 4)):
            single("pool/max_pool/%s/%s/%s" % (dt, label, sh(xs)), "max_pool", lambda g, dt=dt, xs=xs: [g.x(dt, xs)],
                   attrs=attrs)
    for j, dt in enumerate(FLOATS):
        cfgs = POOLS + [(l + ",count_pad", x, dict(a, count_include_pad=1)) for l, x, a in POOLS if "pads" in a]
        for label, xs, attrs in (cfgs if dt == "f32" else rot(cfgs, 4 * j, 4)):
            single("pool/average_pool/%s/%s/%s" % (dt, label, sh(xs)), "average_pool",
                   lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=attrs, tol=accum(dt, prod(attrs["kernel_shape"])))
        single("pool/max_pool/%s/nan" % dt, "max_pool",
               lambda g, dt=dt: [discrete(g, dt, [1, 2, 6, 6], 0.1)], attrs={"kernel_shape": [2, 2]})
        for xs in pick(([2, 3, 7], [2, 3, 17, 19], [1, 2, 4, 5, 6], [0, 3, 4, 4], [2, 3, 1, 1], [1, 64, 56, 56]), dt, j, 2):
            single("pool/global_average_pool/%s/%s" % (dt, sh(xs)), "global_average_pool",
                   lambda g, dt=dt, xs=xs: [g.x(dt, xs)], tol=accum(dt, 1))
            single("pool/global_max_pool/%s/%s" % (dt, sh(xs)), "global_max_pool", lambda g, dt=dt, xs=xs: [g.x(dt, xs)])


COORDS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def gen_resize():
    combos = [("nearest", c, n) for c in COORDS for n in NEAREST] + [("linear", c, None) for c in COORDS] + \
        [("cubic", c, None) for c in COORDS]
    shapes = [([1, 2, 5, 7], {"scales": [1.0, 1.0, 2.5, 0.6]}), ([1, 2, 5, 7], {"sizes": [1, 2, 11, 4]})]
    for j, dt in enumerate(FLOATS):
        for k, (mode, coord, near) in enumerate(combos if dt == "f32" else rot(combos, 7 * j, 7)):
            for xs, size in shapes[k % 2:k % 2 + 1]:
                attrs = dict(size, mode=mode, coordinate_transformation_mode=coord)
                if near:
                    attrs["nearest_mode"] = near
                single("resize/%s/%s/%s,%s%s/%s" % (dt, sh(xs), mode, coord, "," + near if near else "",
                                                   "scales" if "scales" in size else "sizes"), "resize",
                       lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=attrs,
                       tol=EXACT if mode == "nearest" else accum(dt, 16 if mode == "cubic" else 1, 2.0))
        extra = [("1d_linear", [9], {"sizes": [20], "mode": "linear"}),
                 ("cubic_exclude_outside", [1, 2, 6, 5], {"scales": [1.0, 1.0, 2.0, 0.8], "mode": "cubic",
                                                          "cubic_coeff_a": -0.5, "exclude_outside": 1}),
                 ("3d_tricubic", [1, 1, 4, 5, 6], {"scales": [1.0, 1.0, 1.5, 2.0, 0.5], "mode": "cubic"}),
                 ("crop_linear", [1, 2, 6, 7], {"sizes": [1, 2, 5, 9], "mode": "linear",
                                                "coordinate_transformation_mode": "tf_crop_and_resize",
                                                "roi": [0, 0, 0.2, -0.1, 1, 1, 0.8, 1.1], "extrapolation_value": 1.5}),
                 ("crop_nearest", [1, 2, 6, 7], {"scales": [1.0, 1.0, 1.5, 0.8], "mode": "nearest",
                                                 "coordinate_transformation_mode": "tf_crop_and_resize",
                                                 "roi": [0, 0, -0.3, 0.4, 1, 1, 1.2, 1.3], "extrapolation_value": -2}),
                 ("crop_cubic", [1, 2, 6, 7], {"sizes": [1, 2, 5, 9], "mode": "cubic",
                                               "coordinate_transformation_mode": "tf_crop_and_resize",
                                               "roi": [0, 0, 0.2, -0.1, 1, 1, 0.8, 1.1]}),
                 ("realistic_cubic", [2, 64, 56, 56], {"scales": [1.0, 1.0, 2.0, 2.0], "mode": "cubic"}),
                 ("3d_trilinear", [1, 1, 4, 5, 6], {"scales": [1.0, 1.0, 1.5, 2.0, 0.5], "mode": "linear"}),
                 ("n_and_c", [2, 3, 4], {"sizes": [3, 5, 6]}),
                 ("empty_out", [1, 2, 3, 4], {"sizes": [1, 2, 0, 4]}),
                 ("down_half_align", [1, 1, 8, 8], {"scales": [1.0, 1.0, 0.5, 0.5], "mode": "linear",
                                                     "coordinate_transformation_mode": "align_corners"}),
                 ("one_pixel_align", [1, 1, 1, 1], {"sizes": [1, 1, 3, 3], "mode": "linear",
                                                     "coordinate_transformation_mode": "align_corners"}),
                 ("realistic", [2, 64, 56, 56], {"scales": [1.0, 1.0, 2.0, 2.0], "mode": "linear"})]
        for label, xs, attrs in extra:
            single("resize/%s/%s/%s" % (dt, sh(xs), label), "resize", lambda g, dt=dt, xs=xs: [g.x(dt, xs)],
                   attrs=attrs, tol=accum(dt, 16, 2.0) if attrs.get("mode") == "cubic" else
                   accum(dt, 1) if attrs.get("mode") == "linear" else EXACT)


# ---------------------------------------------------------------- image ops
def gen_image():
    d2s = [([2, 8, 3, 5], 2, "DCR"), ([2, 8, 3, 5], 2, "CRD"), ([1, 18, 4, 4], 3, "CRD"), ([0, 4, 2, 2], 2, "DCR"),
           ([4, 64, 28, 28], 4, "DCR"), ([3, 4, 1, 1], 1, "CRD")]
    s2d = [([2, 3, 4, 6], 2), ([1, 2, 9, 6], 3), ([0, 2, 4, 4], 2), ([4, 16, 56, 56], 4)]
    for j, dt in enumerate(ANY):
        for xs, b, mode in pick(d2s, dt, j, 2):
            single("movement/depth_to_space/%s/%s/blocksize=%d,%s" % (dt, sh(xs), b, mode), "depth_to_space",
                   lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs={"blocksize": b, "mode": mode})
        for xs, b in pick(s2d, dt, j, 2):
            single("movement/space_to_depth/%s/%s/blocksize=%d" % (dt, sh(xs), b), "space_to_depth",
                   lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs={"blocksize": b})
    lrns = [([2, 16, 5, 6], 5, {}), ([2, 7, 9], 4, {"alpha": 0.5, "beta": 0.6, "bias": 2.0}), ([4, 8], 3, {}),
            ([0, 4, 3, 3], 3, {}), ([8, 96, 27, 27], 5, {"bias": 2.0}), ([1, 3, 4], 11, {"alpha": 0.3})]
    for j, dt in enumerate(FLOATS):
        for xs, size, extra in pick(lrns, dt, j, 3):
            single("norm/lrn/%s/%s/size=%d" % (dt, sh(xs), size), "lrn", lambda g, dt=dt, xs=xs: [g.x(dt, xs, -2, 2)],
                   attrs=dict(extra, size=size), tol=accum(dt, size, 4.0))
        cfgs = POOLS + [(l + ",p=%d" % p, x, dict(a, p=p)) for p in (1, 3) for l, x, a in POOLS[:4]]
        for label, xs, attrs in (cfgs if dt == "f32" else rot(cfgs, 4 * j, 4)):
            single("pool/lp_pool/%s/%s/%s" % (dt, label, sh(xs)), "lp_pool", lambda g, dt=dt, xs=xs: [g.x(dt, xs)],
                   attrs=attrs, tol=accum(dt, prod(attrs["kernel_shape"]), 3.0))
    grids = [(m, p, a) for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")
             for a in (0, 1)]
    shapes = [([2, 3, 5, 6], [4, 7]), ([1, 2, 4, 5, 3], [3, 2, 4]), ([2, 3, 7], [9])]
    for j, dt in enumerate(FLOATS):
        for k, (mode, pad, ac) in enumerate(grids if dt == "f32" else rot(grids, 5 * j, 5)):
            for xs, os_ in shapes[k % 3:k % 3 + 1] + ([([4, 32, 64, 64], [48, 80])] if k == 0 else []):
                r = len(xs) - 2
                cells = {"nearest": 1, "bilinear": 2 ** r, "bicubic": 4 ** r}[mode]
                single("grid_sample/%s/%s->%s/%s,%s,align_corners=%d" % (dt, sh(xs), sh(os_), mode, pad, ac),
                       "grid_sample", lambda g, dt=dt, xs=xs, os_=os_, r=r: [g.x(dt, xs), g.x(dt, [xs[0]] + os_ + [r],
                                                                                            -1.3, 1.3)],
                       attrs={"mode": mode, "padding_mode": pad, "align_corners": ac},
                       tol=EXACT if mode == "nearest" else accum(dt, cells, 2.0))
        single("grid_sample/%s/empty_batch" % dt, "grid_sample",
               lambda g, dt=dt: [g.x(dt, [0, 3, 4, 4]), g.x(dt, [0, 2, 2, 2])])
    case("movement/depth_to_space/f32/channels_not_multiple",
         lambda g: [g.op("depth_to_space", [g.x("f32", [1, 8, 2, 2])], {"blocksize": 3})],
         rc=3, err="not a multiple of blocksize")
    case("grid_sample/f32/bad_grid_shape",
         lambda g: [g.op("grid_sample", [g.x("f32", [1, 2, 4, 4]), g.x("f32", [1, 3, 3, 3])])],
         rc=3, err="grid")


# ---------------------------------------------------------------- fft
def fft_tol(op, dt, n, norm):
    inverse = op in ("ifft", "irfft")
    f = {"backward": 1.0 / n if inverse else 1.0, "ortho": 1.0 / math.sqrt(n), "forward": 1.0 if inverse else 1.0 / n}[norm]
    return accum(dt, n, f)


def fft_case(op, dt, n, where, norm, extra=""):
    """where: the axis position (last, first, mid); n: the transform length."""
    batch = {"last": ([3], -1), "first": ([], 0), "mid": ([2], 1)}[where]
    pre, axis = batch
    if where == "first":
        logical = [n, 3]
    elif where == "mid":
        logical = [2, n, 3]
    else:
        logical = [3, n]
    attrs = {"axis": axis, "norm": norm}
    if op == "rfft":
        shape = logical
    elif op == "irfft":
        m = n // 2 + 1
        logical = [m if d == n and i == (axis % len(logical)) else d for i, d in enumerate(logical)]
        shape = logical + [2]
        attrs["n"] = n
    else:
        shape = logical + [2]
    single("fft/%s/%s/n=%d,axis=%s,norm=%s%s" % (op, dt, n, where, norm, extra), op,
           lambda g, dt=dt, shape=shape: [g.x(dt, shape)], attrs=attrs, tol=fft_tol(op, dt, n, norm))


def gen_fft():
    norms = ["backward", "ortho", "forward"]
    wheres = ["last", "first", "mid"]
    for i, op in enumerate(("fft", "ifft", "rfft", "irfft")):
        for j, dt in enumerate(FLOATS):
            for li, n in enumerate((1, 7, 64, 1000)):
                fft_case(op, dt, n, wheres[(li + j) % 3], norms[(li + i + j) % 3])
        for norm in norms:
            fft_case(op, "f32", 64, "mid", norm, ",all_norms")
        fft_case(op, "f32", 4096, "last", "backward", ",long")
        fft_case(op, "f64", 97, "first", "ortho", ",prime")
        shape = [0, 8] if op == "rfft" else ([0, 5, 2] if op == "irfft" else [0, 8, 2])
        single("fft/%s/f32/empty_batch" % op, op, lambda g, shape=shape: [g.x("f32", shape)],
               attrs={"n": 8} if op == "irfft" else None)
    for n, m in ((7, 3), (20, 5), (5, 0), (1, 4)):
        # n cuts or pads the m bins; m = 0 gives zeros
        single("fft/irfft/f32/m=%d,n=%d" % (m, n), "irfft", lambda g, m=m: [g.x("f32", [2, m, 2])],
               attrs={"n": n}, tol=accum("f32", n))
    single("fft/irfft/f32/default_n", "irfft", lambda g: [g.x("f32", [4, 33, 2])], tol=accum("f32", 64))

    def roundtrip(g):
        x = g.x("f32", [4, 1000])
        return [g.op("irfft", [g.op("rfft", [x])], {"n": 1000})]
    case("fft/rfft+irfft/f32/roundtrip", roundtrip, accum("f32", 1000), check_nodes=True)

    def reuse(g):
        # the inverse transform must leave its input intact for a later reader
        x = g.x("f32", [8, 65, 2])
        return [g.op("irfft", [x], {"n": 128}), g.op("mul", [x, x])]
    case("fft/irfft/f32/input_reused", reuse, accum("f32", 128), check_nodes=True)


# ---------------------------------------------------------------- attention, dropout
ATTN = [
    # B, H, Hk, S, T, D, Dv, mask, causal, scale
    (1, 2, 2, 7, 7, 64, 64, None, 0, None),
    (2, 4, 4, 16, 33, 64, 64, "bool:B1ST", 0, None),
    (1, 4, 4, 33, 16, 128, 128, "add:ST", 0, None),
    (2, 8, 2, 16, 16, 64, 64, None, 1, None),
    (1, 4, 1, 5, 9, 64, 32, "bool:111T", 1, None),
    (1, 2, 2, 1, 2048, 64, 64, None, 0, None),
    (1, 2, 2, 128, 2048, 128, 128, "add:11ST", 1, None),
    (1, 1, 1, 4, 6, 8, 8, "bool:dead_row", 0, None),
    (2, 2, 2, 0, 5, 16, 16, None, 0, None),
    (1, 2, 2, 9, 9, 64, 64, None, 1, 0.3),
    (2, 4, 2, 33, 65, 128, 64, "bool:B1ST", 1, None),
    (1, 2, 2, 16, 16, 1, 1, "add:inf", 0, None),
    (4, 8, 8, 64, 64, 64, 64, None, 1, None),
]


def attn_mask(g, dt, kind, B, S, T):
    if kind.startswith("bool"):
        shape = {"B1ST": [B, 1, S, T], "111T": [1, 1, 1, T], "dead_row": [S, T]}[kind[5:]]
        m = g.rng.random(shape) < 0.7
        if kind.endswith("dead_row"):
            m[1, :] = False
        return g.arr("bool", m)
    shape = {"ST": [S, T], "11ST": [1, 1, S, T], "inf": [B, 1, S, T]}[kind[4:]]
    m = g.rng.uniform(-4, 0, shape)
    m[g.rng.random(shape) < 0.2] = -INF
    if kind.endswith("inf"):
        m[..., 0, :] = -INF
    return g.arr(dt, m)


def gen_attention():
    for j, dt in enumerate(FLOATS):
        for B, H, Hk, S, T, D, Dv, mask, causal, scale in ATTN:
            attrs = {"causal": causal}
            if scale is not None:
                attrs["scale"] = scale

            def mk(g, dt=dt, B=B, H=H, Hk=Hk, S=S, T=T, D=D, Dv=Dv, mask=mask):
                ins = [g.x(dt, [B, H, S, D], 0, 1, dist="normal"), g.x(dt, [B, Hk, T, D], 0, 1, dist="normal"),
                       g.x(dt, [B, Hk, T, Dv])]
                return ins + ([attn_mask(g, dt, mask, B, S, T)] if mask else [])
            single("attention/%s/B=%d,H=%d,Hk=%d,S=%d,T=%d,D=%d,Dv=%d,mask=%s,causal=%d%s" % (
                dt, B, H, Hk, S, T, D, Dv, mask or "none", causal, ",scale=%g" % scale if scale else ""),
                "attention", mk, attrs=attrs, tol=accum(dt, D))


def gen_dropout():
    cfgs = [([1023], 0.5, 1, 7, "mask"), ([256, 1024], 0.1, 1, 12345, "both"), ([65537], 0.9, 1, -3, "both"),
            ([7, 33], 0.0, 1, 1, "both"), ([33], 0.5, 0, 0, "both"), ([0, 5], 0.5, 1, 2, "both"),
            ([], 0.3, 1, 99, "both"), ([4096], 0.25, 1, 2 ** 40 + 5, "mask"), ([2, 3, 4, 5, 6, 7], 0.5, 1, 3, "y")]
    for dt in FLOATS:
        for shape, ratio, training, seed, outs in cfgs:
            keep = {"mask": [1], "both": [0, 1], "y": [0]}[outs]
            single("dropout/%s/%s/ratio=%g,training=%d,seed=%d,%s" % (dt, sh(shape), ratio, training, seed, outs),
                   "dropout", lambda g, dt=dt, shape=shape: [g.x(dt, shape, -3, 3)],
                   attrs={"ratio": ratio, "training": training, "seed": seed}, nout=2, keep=keep,
                   tol=EXACT if outs == "mask" else elem(dt))



def gen_random():
    """random_uniform_like, random_normal_like, bernoulli and multinomial: the same Philox
    numbers on both backends (uniform, bernoulli and multinomial exact, unless CUDA's exp
    moved a running sum across a draw, about 1e-16 a sample; normal through libm's and
    CUDA's log, sqrt and cos in double: elem)."""
    for dt in FLOATS:
        for shape, seed in (([1023], 7), ([256, 1024], 2 ** 40 + 5), ([], 3), ([0, 4], 1)):
            single("random/random_uniform_like/%s/%s,seed=%d" % (dt, sh(shape), seed), "random_uniform_like",
                   lambda g, shape=shape: [g.x("f32", shape)], attrs={"dtype": dt, "low": -2.0, "high": 3.0,
                                                                       "seed": seed}, tol=elem(dt))
            single("random/random_normal_like/%s/%s,seed=%d" % (dt, sh(shape), seed), "random_normal_like",
                   lambda g, shape=shape: [g.x("f32", shape)], attrs={"dtype": dt, "mean": 1.0, "scale": 2.0,
                                                                       "seed": seed}, tol=elem(dt))
            for odt in (dt, "bool", "i32", "u8"):
                single("random/bernoulli/%s/%s,seed=%d,%s" % (dt, sh(shape), seed, odt), "bernoulli",
                       lambda g, dt=dt, shape=shape: [g.x(dt, shape, 0.0, 1.0)], attrs={"dtype": odt, "seed": seed})
        for B, C, ns, odt in ((4, 10, 1000, "i32"), (1, 1, 3, "i64"), (64, 300, 16, "i64"), (3, 5, 0, "i32")):
            single("random/multinomial/%s/[%d,%d],samples=%d,%s" % (dt, B, C, ns, odt), "multinomial",
                   lambda g, dt=dt, B=B, C=C: [g.x(dt, [B, C], -3.0, 3.0)],
                   attrs={"dtype": odt, "sample_size": ns, "seed": 11})


# ---------------------------------------------------------------- recurrent layers
RNN_CFGS = [
    # op, T, B, I, H, direction, layout, seq_lens, init, extra attrs
    ("lstm", 7, 3, 16, 32, "forward", 0, None, False, {}),
    ("lstm", 9, 4, 8, 24, "bidirectional", 0, [9, 3, 0, 7], True, {}),
    ("lstm", 6, 5, 12, 16, "reverse", 1, [6, 1, 4, 6, 2], True, {"clip": 0.7, "input_forget": 1}),
    ("lstm", 5, 2, 8, 8, "bidirectional", 1, None, True,
     {"activations": "hard_sigmoid,elu,softsign,sigmoid,tanh,tanh", "activation_alpha": [0.3, 0.6],
      "activation_beta": [0.4]}),
    ("lstm", 33, 16, 64, 128, "bidirectional", 0, None, False, {}),
    ("gru", 7, 3, 16, 32, "forward", 0, None, False, {}),
    ("gru", 9, 4, 8, 24, "bidirectional", 1, [9, 3, 0, 7], True, {"linear_before_reset": 1}),
    ("gru", 6, 5, 12, 16, "reverse", 0, [6, 1, 4, 6, 2], True, {"clip": 0.7}),
    ("gru", 33, 16, 64, 128, "bidirectional", 0, None, True, {"linear_before_reset": 1}),
    ("rnn", 7, 3, 16, 32, "forward", 0, None, False, {}),
    ("rnn", 9, 4, 8, 24, "bidirectional", 1, [9, 3, 0, 7], True, {"activations": "relu"}),
    ("rnn", 6, 5, 12, 16, "reverse", 0, [6, 1, 4, 6, 2], True, {"activations": "leaky_relu", "activation_alpha": [0.2]}),
]
RNN_G = {"lstm": 4, "gru": 3, "rnn": 1}


def gen_rnn():
    for j, dt in enumerate(FLOATS):
        for op, T, B, I, H, direction, layout, seq, init, extra in pick(RNN_CFGS, dt, j, 6):
            D, G = (2 if direction == "bidirectional" else 1), RNN_G[op]
            attrs = dict(extra, direction=direction, layout=layout, hidden_size=H)

            def mk(g, op=op, dt=dt, T=T, B=B, I=I, H=H, D=D, G=G, layout=layout, seq=seq, init=init):
                s = 0.5 / math.sqrt(H)
                ins = [g.x(dt, [B, T, I] if layout else [T, B, I]), g.x(dt, [D, G * H, I], -s, s),
                       g.x(dt, [D, G * H, H], -s, s), g.x(dt, [D, 2 * G * H], -0.2, 0.2),
                       g.arr("i32", seq) if seq else None]
                st = [B, D, H] if layout else [D, B, H]
                ins += [g.x(dt, st) if init else None]
                if op == "lstm":
                    ins += [g.x(dt, st) if init else None, g.x(dt, [D, 3 * H], -0.3, 0.3)]
                while ins[-1] is None:
                    ins.pop()
                return ins
            single("rnn/%s/%s/T=%d,B=%d,I=%d,H=%d,%s,layout=%d,seq=%s,init=%d%s" % (
                op, dt, T, B, I, H, direction, layout, "yes" if seq else "no", init,
                "," + attr_label({k: v for k, v in extra.items() if not isinstance(v, list)}) if extra else ""),
                op, mk, attrs=attrs, tol=accum(dt, (I + H) * T), nout=3 if op == "lstm" else 2)


# ---------------------------------------------------------------- small models, node by node
def gen_chains():
    for dt in ("f32", "f16", "bf16"):
        def mlp(g, dt=dt):
            x = g.x(dt, [64, 256])
            h = g.op("matmul", [x, g.x(dt, [256, 512], -0.1, 0.1)])
            h = g.op("gelu", [g.op("add", [h, g.x(dt, [512], -0.1, 0.1)])])
            h = g.op("layer_norm", [h, g.x(dt, [512], 0.5, 1.5), g.x(dt, [512])])
            return [g.op("softmax", [g.op("matmul", [h, g.x(dt, [512, 10], -0.1, 0.1)])])]
        case("chain/mlp/%s" % dt, mlp, accum(dt, 512, 0.2), check_nodes=True)

        def block(g, dt=dt):
            B, S, E, H = 2, 33, 128, 4
            x = g.x(dt, [B, S, E])
            heads = []
            for _ in range(3):
                p = g.op("matmul", [x, g.x(dt, [E, E], -0.1, 0.1)])
                p = g.op("reshape", [p], {"shape": [B, S, H, E // H]})
                heads.append(g.op("transpose", [p], {"perm": [0, 2, 1, 3]}))
            a = g.op("attention", heads, {"causal": 1})
            a = g.op("reshape", [g.op("transpose", [a], {"perm": [0, 2, 1, 3]})], {"shape": [B, S, E]})
            y = g.op("add", [x, g.op("matmul", [a, g.x(dt, [E, E], -0.1, 0.1)])])
            return [g.op("rms_norm", [y, g.x(dt, [E], 0.5, 1.5)])]
        case("chain/attention_block/%s" % dt, block, accum(dt, 128, 0.2), check_nodes=True)

        def convnet(g, dt=dt):
            x = g.x(dt, [2, 3, 32, 32])
            h = g.op("conv", [x, g.x(dt, [16, 3, 3, 3], -0.3, 0.3), g.x(dt, [16], -0.1, 0.1)], {"pads": [1, 1, 1, 1]})
            h = g.op("batch_norm", [h, g.x(dt, [16], 0.5, 1.5), g.x(dt, [16]), g.x(dt, [16], -0.1, 0.1),
                                    g.x(dt, [16], 0.5, 2)])
            h = g.op("max_pool", [g.op("relu", [h])], {"kernel_shape": [2, 2], "strides": [2, 2]})
            h = g.op("flatten", [g.op("global_average_pool", [h])])
            return [g.op("gemm", [h, g.x(dt, [10, 16], -0.3, 0.3), g.x(dt, [10])], {"trans_b": 1})]
        case("chain/convnet/%s" % dt, convnet, accum(dt, 27, 0.5), check_nodes=True)


# ---------------------------------------------------------------- over 2^31 bytes
def gen_big():
    n = 600000000
    case("big/add/f32/[600000000]+[]",
         lambda g: [g.op("add", [g.x("f32", [n]), g.x("f32", [])])], big=True)
    case("big/cast/f32->f16/[1100000000]",
         lambda g: [g.op("cast", [g.init("f32", [1100000000], 0, 3e4, "normal")], {"to": "f16"})], big=True)
    case("big/reduce_sum/f32/[600000000]/all",
         lambda g: [g.op("reduce_sum", [g.x("f32", [n])], {"keepdims": 0})], accum("f32", n), big=True)
    case("big/reduce_sum/f32/[2,300000000]/axes=[1]",
         lambda g: [g.op("reduce_sum", [g.x("f32", [2, n // 2])], {"axes": [1]})], accum("f32", n // 2), big=True)
    case("big/transpose/f32/[40000,15000]",
         lambda g: [g.op("transpose", [g.x("f32", [40000, 15000])])], big=True)
    case("big/softmax/f32/[70000,8192]/axis=-1",
         lambda g: [g.op("softmax", [g.x("f32", [70000, 8192], -4, 4)])], accum("f32", 1), big=True)
    case("big/gather/f16/[1200000000]/indices_past_2^31",
         lambda g: [g.op("gather", [g.x("f16", [1200000000]),
                                    g.arr("i64", [0, 1199999999, -1, 2 ** 30 + 7, 1100000001, -1200000000])])],
         big=True)
    case("big/concat/f32/[300000000]x2",
         lambda g: [g.op("concat", [g.x("f32", [n // 2]), g.x("f32", [n // 2])], {"axis": 0})], big=True)


GENERATORS = [gen_unary, gen_cast, gen_bitcast, gen_binary, gen_variadic, gen_compare, gen_bitwise, gen_reduce, gen_arg, gen_cumsum, gen_topk,
              gen_softmax, gen_norms, gen_matmul, gen_quant, gen_quant_conv, gen_movement, gen_conv, gen_pool, gen_resize, gen_image,
              gen_fft, gen_attention, gen_dropout, gen_random, gen_rnn, gen_chains, lambda: parity_index.gen_index(sys.modules[__name__]),
              lambda: parity_loss.gen_loss(sys.modules[__name__]), lambda: parity_attn.gen_attn(sys.modules[__name__]),
              lambda: parity_geom.gen_geom(sys.modules[__name__]), lambda: parity_linalg.gen_linalg(sys.modules[__name__]),
              lambda: parity_extremes.gen_extremes(sys.modules[__name__]),
              lambda: parity_forms.gen_forms(sys.modules[__name__])]


# ---------------------------------------------------------------- running
def write_graph(c, tmp):
    g = G(c.name)
    outs = c.build(g)
    doc = {"ftrun": 1, "name": "parity " + c.name, "tensors": g.tensors, "inputs": [], "outputs": list(outs),
           "nodes": g.nodes}
    for fn, a in g.files.items():
        np.save(os.path.join(tmp, fn), a, allow_pickle=False)
    path = os.path.join(tmp, "graph.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def command(c, path, outdir):
    cmd = WRAP + [FTRUN, "run", path, "-d", DEVICE, "-q", "--format", "none", "-o", outdir]
    if c.rc == 0:
        # an expected error must come from the device itself, not from the reference
        cmd += ["--check", "--rtol", repr(float(c.tol[0])), "--atol", repr(float(c.tol[1]))]
        if c.check_nodes:
            cmd.append("--check-nodes")
    return cmd


def run_case(c, root):
    tmp = tempfile.mkdtemp(prefix="case-", dir=root)
    diag, ok = [], False
    try:
        path = write_graph(c, tmp)
        cmd = command(c, path, os.path.join(tmp, "out"))
        limit = 3600 if c.big else 600
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            diag = ["timed out after %d s" % limit, "command: " + " ".join(shlex.quote(a) for a in cmd)]
            return False, diag, time.time() - t0
        dt = time.time() - t0
        ok = p.returncode == c.rc and (c.err is None or re.search(c.err, p.stderr) is not None)
        if not ok:
            want = "exit status %d" % c.rc + (" and stderr matching /%s/" % c.err if c.err else "")
            diag.append("exit status %d, expected %s" % (p.returncode, want))
            lines = p.stderr.rstrip().splitlines()
            diag += lines[:40] + (["... %d more lines" % (len(lines) - 40)] if len(lines) > 40 else [])
            diag.append("command: " + " ".join(shlex.quote(a) for a in cmd))
            keep(c, tmp, diag)
        return ok, diag, dt
    except Exception:
        return False, ["suite error: " + l for l in traceback.format_exc().rstrip().splitlines()[-6:]], 0.0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def keep(c, folder, diag):
    if KEEP:
        dst = os.path.join(KEEP, re.sub(r"[^A-Za-z0-9._=,+-]", "_", c.name))
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(folder, dst, ignore=shutil.ignore_patterns("out"))
        diag.append("graph kept in " + dst)


def preflight(root):
    """None when DEVICE runs a trivial graph; else the reason, or raises to bail out."""
    tmp = tempfile.mkdtemp(prefix="preflight-", dir=root)
    path = os.path.join(tmp, "g.json")
    with open(path, "w") as f:
        json.dump({"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}}, "inputs": [],
                   "outputs": ["b"], "nodes": [{"op": "add", "inputs": ["a", "a"], "outputs": ["b"]}]}, f)
    p = subprocess.run(WRAP + [FTRUN, "run", path, "-d", DEVICE, "-q", "--format", "none", "-o",
                               os.path.join(tmp, "out")], capture_output=True, text=True, timeout=600)
    if p.returncode == 0:
        return None
    msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit status %d" % p.returncode
    if p.returncode == 4 and re.search(r"not available|not installed|no CUDA|no usable", p.stderr):
        return msg
    raise RuntimeError("a trivial graph fails on %s: %s" % (DEVICE, msg))


def all_cases():
    for gen in GENERATORS:
        gen()
    if BIG:
        gen_big()
    names = set()
    for c in CASES:
        if c.name in names:
            raise SystemExit("duplicate case name: " + c.name)
        names.add(c.name)
    return [c for c in CASES if not ONLY or re.search(ONLY, c.name)]


def main(argv):
    cases = all_cases()
    if "--list" in argv:
        for c in cases:
            print(c.name)
        return 0
    if "--count" in argv:
        fam = {}
        for c in cases:
            f = c.name.split("/")[0]
            f = f + "/" + c.name.split("/")[1] if f in ("norm", "pool", "movement", "fft") else f
            fam[f] = fam.get(f, 0) + 1
        for f in sorted(fam):
            print("%-28s %d" % (f, fam[f]))
        print("%-28s %d" % ("total", len(cases)))
        return 0
    if not os.access(FTRUN, os.X_OK):
        print("1..0\nBail out! ftrun binary not found at %s" % FTRUN)
        return 1
    root = tempfile.mkdtemp(prefix="ftparity-")
    try:
        try:
            why = preflight(root)
        except Exception as e:
            print("1..0\nBail out! %s" % e)
            return 1
        if why:
            print("1..0 # SKIP device %s is not usable: %s" % (DEVICE, why))
            return 0
        print("1..%d" % len(cases), flush=True)
        t0, failed, slow = time.time(), 0, []
        results = [None] * len(cases)
        printed = [0]

        def emit():
            """Prints the verdicts that are in, in case order."""
            nonlocal failed
            while printed[0] < len(cases) and results[printed[0]] is not None:
                k = printed[0]
                ok, diag, secs = results[k]
                print("%s %d - %s" % ("ok" if ok else "not ok", k + 1, cases[k].name))
                for line in diag:
                    print("# " + line)
                sys.stdout.flush()
                failed += not ok
                slow.append((secs, cases[k].name))
                results[k] = (ok, [], secs)
                printed[0] += 1

        inb = set(k for k, c in enumerate(cases) if MODE == "batch" and parity_batch.batchable(c))
        ready = []
        # the folders are written on every core; the cases of run mode run JOBS at
        # once meanwhile
        with ThreadPoolExecutor(max_workers=max(JOBS, os.cpu_count() or 1)) as prep, \
                ThreadPoolExecutor(max_workers=JOBS) as pool:
            runs = {k: pool.submit(run_case, c, root) for k, c in enumerate(cases) if k not in inb}
            preps = {k: prep.submit(parity_batch.prepare_case, sys.modules[__name__], cases[k], os.path.join(root, "batch", "c%05d" % k)) for k in sorted(inb)}
            written = []
            for k in sorted(preps):
                r = preps.pop(k).result()
                if r is None:
                    written.append(k)
                else:
                    results[k] = r
            t_ref = time.time()
            if written:
                ready = parity_batch.cpu_references(sys.modules[__name__], cases, written, root, results)
            t_ref = time.time() - t_ref
            for k in sorted(runs):
                results[k] = runs.pop(k).result()
                emit()
        emit()
        t_test = t_test_start = time.time()
        if ready:
            parity_batch.run_batch(sys.modules[__name__], cases, ready, root, results, emit)
        t_test = time.time() - t_test
        emit()
        slow.sort(reverse=True)
        print("# %d cases on %s against cpu, %d failed, %.1f s (%s mode, %d cases batched; jobs %d)" % (
            len(cases), DEVICE, failed, time.time() - t0, MODE, len(ready), JOBS))
        if ready:
            print("# batch: %.1f s before the device run (of it the cpu references %.1f s, %.1f ms a case), "
                  "ftrun test on %s %.1f s (%.1f ms a case)" % (t_test_start - t0, t_ref, 1e3 * t_ref / len(ready), DEVICE,
                                                              t_test, 1e3 * t_test / len(ready)))
        for secs, name in slow[:5]:
            print("# slowest: %.2f s %s" % (secs, name))
        return 1 if failed else 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
