"""Runner of the numeric tests: builds one graph per case in a temporary folder, runs
ftrun on it, compares every output with the NumPy expectation and prints TAP.
The case modules (cases_*.py) only describe cases; the tolerance rules live in Tol."""
import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

FTRUN = os.environ.get("FTRUN") or os.path.join(os.path.dirname(__file__), "..", "..", "build", "ftrun")
# one run per case, not the second of timed runs a plain `ftrun run` makes
os.environ.setdefault("FTRUN_DEFAULT_DURATION", "0")

DTYPE_NAME = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32",
              np.dtype(np.int64): "i64", np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
              np.dtype(np.uint32): "u32", np.dtype(np.uint64): "u64", np.dtype(np.bool_): "bool"}
NP = {v: k for k, v in DTYPE_NAME.items()}
FLOATS = ("f32", "f64")
SINTS = ("i8", "i16", "i32", "i64")
INTS = SINTS + ("u8",)
UINTS = ("u16", "u32", "u64")  # the wider unsigned types: cases_unsigned.py
NUMS = FLOATS + INTS
ALL = ("f16",) + NUMS + ("bool",)


def eps(dt):
    return float(np.finfo(dt).eps) if np.dtype(dt).kind == "f" else 0.0


class Tol:
    """How close an output must be to the expectation.
    exact:  equal values (NaN matches NaN); always used for ints and bool.
    ulp:    at most this many units in the last place apart (floats).
    else:   |got - exp| <= atol + rtol * |exp| with
              rtol = r * eps(dtype)          (+ r64 for f64 outputs)
              atol = a * eps(dtype) * scale  (+ a64 * scale for f64 outputs)
                     + 2 * the dtype's smallest subnormal (a subnormal result
                     has absolute, not relative, precision: expf on a GPU
                     is 1 subnormal step from glibc's near 2.5e-40)
            where scale is a scalar or an array broadcastable to the output (e.g. the
            sum of |terms| of a reduction), and eps is the dtype's machine epsilon.
    Floats always need matching NaN positions and identical infinities."""

    def __init__(self, r=0.0, a=0.0, scale=1.0, r64=0.0, a64=0.0, ulp=None, exact=False):
        self.r, self.a, self.scale, self.r64, self.a64, self.ulp, self.exact = r, a, scale, r64, a64, ulp, exact

    def bounds(self, dt):
        e = eps(dt)
        f64 = np.dtype(dt) == np.float64
        rtol = self.r * e + (self.r64 if f64 else 0.0)
        atol = (self.a * e + (self.a64 if f64 else 0.0)) * np.asarray(self.scale, dtype=np.float64)
        if np.dtype(dt).kind == "f":
            atol = atol + 2.0 * float(np.finfo(dt).smallest_subnormal)
        return rtol, atol

    def describe(self, dt):
        if self.exact or np.dtype(dt).kind != "f":
            return "exact"
        if self.ulp is not None:
            return "%d ulp" % self.ulp
        rtol, atol = self.bounds(dt)
        return "rtol=%.3g atol<=%.3g" % (rtol, float(np.max(atol)) if np.size(atol) else 0.0)


# FTNUM_STATS=1: print after each case the largest fraction of its tolerance it used
STATS = os.environ.get("FTNUM_STATS") == "1"
_used = threading.local()

EXACT = Tol(exact=True)
# Single correctly rounded IEEE operation (or two, e.g. 1/sqrt): 2 eps covers 2 roundings.
BASIC = Tol(r=2)
# One libm function, or a short composition of them (glibc is within ~1-3 ulp for f32);
# the f64 oracle is itself rounded, so f64 gets a fixed 1e-12 relative bound.
MATH = Tol(r=8, r64=1e-12)


def ordered(a):
    """Map floats to integers whose order and distance follow the float order (ulps)."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(it).astype(np.int64)
    mag = i & np.int64((1 << (8 * a.dtype.itemsize - 1)) - 1)
    return np.where(i < 0, -mag, i)  # sign-magnitude to two's complement; -0 == +0


def compare(got, exp, tol):
    """None when got matches exp under tol, else (diagnostic lines, flat index or None)."""
    if got.dtype != exp.dtype:
        return ["dtype: got %s, expected %s" % (got.dtype, exp.dtype)], None
    if got.shape != exp.shape:
        return ["shape: got %s, expected %s" % (list(got.shape), list(exp.shape))], None
    if exp.size == 0:
        return None
    if got.dtype == np.bool_:
        # a bool is one byte 0 or 1: NumPy reads any nonzero byte as True, so look at the bytes
        raw = got.reshape(-1).view(np.uint8)
        if raw.max() > 1:
            k = int(np.argmax(raw > 1))
            return ["bool output holds byte %d at flat index %d (a bool must be 0 or 1)" % (raw[k], k)], k
    g, e = got.reshape(-1), exp.reshape(-1)
    if exp.dtype.kind != "f" or tol.exact:
        bad = ~((g == e) | (np.isnan(g) & np.isnan(e))) if exp.dtype.kind == "f" else g != e
        what = "exact"
    else:
        gn, en = np.isnan(g), np.isnan(e)
        bad = gn != en
        ok = ~gn & ~en
        if tol.ulp is not None:
            diff = np.abs(ordered(g) - ordered(e))
            bad |= ok & (diff > tol.ulp)
            if STATS and ok.any():
                _used.v = max(getattr(_used, "v", 0.0), float(np.max(diff[ok])) / max(tol.ulp, 1))
            what = "%d ulp" % tol.ulp
        else:
            rtol, atol = tol.bounds(exp.dtype)
            atol = np.broadcast_to(atol, exp.shape).reshape(-1)
            gi, ei = np.isinf(g), np.isinf(e)
            with np.errstate(invalid="ignore", over="ignore"):
                err = np.abs(g.astype(np.float64) - e.astype(np.float64))
                lim = atol + rtol * np.abs(e.astype(np.float64))
            bad |= ok & (gi | ei) & (g != e)
            bad |= ok & ~gi & ~ei & ~(err <= lim)
            what = tol.describe(exp.dtype)
            if STATS:
                m = ok & ~gi & ~ei
                with np.errstate(invalid="ignore", divide="ignore"):
                    used = np.where(err[m] == 0, 0.0, err[m] / lim[m]) if m.any() else np.zeros(1)
                _used.v = max(getattr(_used, "v", 0.0), float(np.max(used)))
    nbad = int(np.count_nonzero(bad))
    if not nbad:
        return None
    idx = np.flatnonzero(bad)
    if exp.dtype.kind == "f":
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(g[idx].astype(np.float64) - e[idx].astype(np.float64))
        err = np.where(np.isnan(err), np.inf, err)
        worst = idx[int(np.argmax(err))]
    else:
        worst = idx[0]
    pos = list(np.unravel_index(worst, exp.shape)) if exp.ndim else []
    lines = ["%d of %d values differ (%s); worst at [%s]: got %r, expected %r" % (
        nbad, exp.size, what, ",".join(str(int(p)) for p in pos), g[worst].item(), e[worst].item())]
    if len(idx) > 1:
        firsts = ", ".join("[%d] got %r exp %r" % (i, g[i].item(), e[i].item()) for i in idx[:4])
        lines.append("first flat indices: " + firsts)
    return lines, worst


class Case:
    """One graph run.  inputs: list of (name, array[, declared dtype]) -- or None for an
    omitted optional input; expect: dict output name -> array (or a callable returning
    it); tol: a Tol or a dict output name -> Tol.  build: a callable returning a dict
    of these fields, called in the worker so that the large arrays of a case exist only
    while it runs.  exit_code/stderr_re: for cases that must fail with a message."""

    def __init__(self, name, op=None, inputs=(), attrs=None, expect=None, tol=EXACT, outputs=None,
                 args=(), nodes=None, tensors=None, graph_inputs=None, via_flag="auto", exit_code=0,
                 stderr_re=None, node_name="n0", build=None):
        self.name, self.op, self.inputs, self.attrs = name, op, inputs, attrs
        self.expect, self.tol, self.outputs, self.args = expect, tol, outputs, list(args)
        self.nodes, self.tensors, self.graph_inputs, self.via_flag = nodes, tensors, graph_inputs, via_flag
        self.exit_code, self.stderr_re, self.node_name, self.build = exit_code, stderr_re, node_name, build


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _graph(c, tmp, flag_dir=None):
    """Writes the inputs and graph.json to tmp; returns (graph path, extra argv, the
    input files as (name, path) or None in input order). The inputs given with --input
    go to flag_dir when given (a test folder's inputs/), else to tmp."""
    tensors = dict(c.tensors or {})
    in_names, argv, files = [], [], []
    for i, spec in enumerate(c.inputs):
        if spec is None:
            in_names.append(None)
            files.append(None)
            continue
        name, arr = spec[0], np.asarray(spec[1])
        decl = spec[2] if len(spec) > 2 else DTYPE_NAME[arr.dtype]
        fn = out_file(name)
        d = {"dtype": decl, "shape": list(arr.shape)}
        # about a third of the cases feed their inputs with --input, the others with "file"
        if name in c.via_flag or (c.via_flag == "auto" and zlib.crc32(c.name.encode()) % 3 == 0):
            f = os.path.join(flag_dir or tmp, fn)
            argv += ["--input", "%s=%s" % (name, f)]
            if flag_dir:
                os.makedirs(flag_dir, exist_ok=True)
        else:
            f = os.path.join(tmp, fn)
            d["file"] = fn
        np.save(f, arr, allow_pickle=False)
        files.append((name, f))
        tensors[name] = d
        in_names.append(name)
    outs = c.outputs or ["y"]
    if c.nodes is not None:
        nodes = c.nodes
    else:
        node = {"name": c.node_name, "op": c.op, "inputs": in_names, "outputs": outs}
        while node["inputs"] and node["inputs"][-1] is None:
            node["inputs"].pop()
        if c.attrs:
            node["attrs"] = c.attrs
        nodes = [node]
    g = {"ftrun": 1, "name": "numeric", "tensors": tensors,
         "inputs": c.graph_inputs if c.graph_inputs is not None else [n for n in in_names if n],
         "outputs": outs, "nodes": nodes}
    path = os.path.join(tmp, "graph.json")
    with open(path, "w") as f:
        json.dump(g, f, indent=1)
    return path, argv, files


def _inputs_at(inputs, out_shape, flat):
    """Input values at the failing element when the inputs have the output's shape."""
    parts = []
    for spec in inputs:
        if spec is not None and np.shape(spec[1]) == tuple(out_shape):
            parts.append("%s=%r" % (spec[0], np.asarray(spec[1]).reshape(-1)[flat].item()))
    return ("inputs there: " + ", ".join(parts)) if parts else None


# FTNUM_ARGS: extra ftrun options for every case (the CUDA tier passes "-d cuda");
# FTNUM_WRAP: a command put before ftrun (e.g. compute-sanitizer); FTNUM_TAG: a
# prefix for case names so that tiers stay apart in the TAP log.
EXTRA_ARGS = shlex.split(os.environ.get("FTNUM_ARGS", ""))
EXTRA_PREFIX = shlex.split(os.environ.get("FTNUM_WRAP", ""))


def materialize(c):
    """Gives a case with a build() its arrays (inputs, expect, tol, ...)."""
    if c.build:
        for k, v in c.build().items():
            setattr(c, k, v)


def release(c):
    """Drops the large arrays of a case with a build(): they are rebuilt on demand, and
    4,000 cases' arrays are not kept alive together."""
    if c.build:
        c.inputs, c.expect = (), None


def expectations(c):
    """The case's expected outputs: a dict output name -> array."""
    exp = c.expect() if callable(c.expect) else c.expect
    return {name: np.asarray(want) for name, want in exp.items()}


def out_file(name):
    """The file name ftrun gives an output (OUTPUT FILES in man/ftrun.1)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy"


def check_outputs(c, outdir, exp, inputs):
    """Compares the files ftrun wrote to outdir with exp (output name -> array) under the
    case's tolerance; inputs() gives c.inputs for the diagnostics. Returns (ok, diag)."""
    _used.v = 0.0
    diag, ok = [], True
    for name, want in exp.items():
        f = os.path.join(outdir, out_file(name))
        if not os.path.exists(f):
            return False, ["output file %s missing" % os.path.basename(f)]
        got = np.load(f, allow_pickle=False)
        tol = c.tol.get(name, EXACT) if isinstance(c.tol, dict) else c.tol
        r = compare(got, want, tol)
        if r is not None:
            ok = False
            lines, flat = r
            extra = _inputs_at(inputs(), want.shape, flat) if flat is not None else None
            diag += ["output '%s': %s" % (name, l) for l in lines] + ([extra] if extra else [])
    if STATS:
        diag.append("used %.3g of the tolerance" % getattr(_used, "v", 0.0))
    return ok, diag


def harness_error():
    return ["harness error: " + l for l in traceback.format_exc().strip().splitlines()[-4:]]


# FTNUM_TIMEOUT: seconds a case may run (default 120) in either mode
TIMEOUT = float(os.environ.get("FTNUM_TIMEOUT", "120"))


def run_case(c):
    """Runs one case in its own ftrun process (run mode). Returns (ok, diagnostic lines)."""
    tmp = tempfile.mkdtemp(prefix="ftnum-")
    try:
        materialize(c)
        path, argv, _ = _graph(c, tmp)
        outdir = os.path.join(tmp, "out")
        cmd = EXTRA_PREFIX + [FTRUN, "run", path, "-o", outdir, "-q"] + argv + c.args + EXTRA_ARGS
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, ["ftrun timed out after %g s: %s" % (TIMEOUT, " ".join(cmd))]
        diag = []
        if p.returncode != c.exit_code:
            diag.append("exit code %d, expected %d" % (p.returncode, c.exit_code))
            diag += ["stderr: " + l for l in p.stderr.strip().splitlines()[:6]]
            return False, diag
        if c.stderr_re is not None:
            pats = [c.stderr_re] if isinstance(c.stderr_re, str) else c.stderr_re
            for pat in pats:
                if not re.search(pat, p.stderr):
                    return False, ["stderr does not match /%s/: %s" % (pat, p.stderr.strip()[:300])]
        if c.exit_code != 0:
            left = [f for f in os.listdir(outdir) if f.endswith(".npy")] if os.path.isdir(outdir) else []
            if left:
                return False, ["a failed run left result files: %s" % ", ".join(sorted(left))]
            return True, []
        return check_outputs(c, outdir, expectations(c), lambda: c.inputs)
    except Exception:
        return False, harness_error()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        release(c)


# FTNUM_MODE: batch (the default, unless FTNUM_WRAP is set) runs the cases through one
# `ftrun test` (batch.py); run gives each case its own `ftrun run` process
MODE = os.environ.get("FTNUM_MODE") or ("run" if EXTRA_PREFIX else "batch")


def main(cases, workers=2):
    names = set()
    for c in cases:
        if c.name in names:
            print("duplicate case name: " + c.name, file=sys.stderr)
            return 2
        names.add(c.name)
    if MODE not in ("batch", "run"):
        print("FTNUM_MODE=%s: not batch or run" % MODE, file=sys.stderr)
        return 2
    only = os.environ.get("FTNUM_ONLY")
    if only:
        cases = [c for c in cases if re.search(only, c.name)]
    print("1..%d" % len(cases), flush=True)
    if not os.access(FTRUN, os.X_OK):
        for k, c in enumerate(cases, 1):
            print("not ok %d - %s\n# ftrun binary not found at %s" % (k, c.name, FTRUN))
        return 1
    t0 = time.time()
    results, printed, failed = [None] * len(cases), [0], [0]

    def emit():
        """Prints the verdicts that are in, in case order."""
        while printed[0] < len(cases) and results[printed[0]] is not None:
            k = printed[0]
            ok, diag = results[k]
            print("%s %d - %s%s" % ("ok" if ok else "not ok", k + 1, os.environ.get("FTNUM_TAG", ""), cases[k].name))
            for l in diag:
                print("# " + l)
            sys.stdout.flush()
            failed[0] += not ok
            results[k] = (ok, [])
            printed[0] += 1

    if MODE == "batch":
        import batch
        batch.run_all(sys.modules[__name__], cases, workers, int(os.environ.get("FTNUM_TEST_JOBS") or workers),
                      results, emit)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for k, fut in enumerate([pool.submit(run_case, c) for c in cases]):
                results[k] = fut.result()
                emit()
    emit()
    print("# %d numeric cases in %.1f s (%s mode, jobs %d)" % (len(cases), time.time() - t0, MODE, workers))
    if failed[0]:
        print("# %d of %d numeric cases failed" % (failed[0], len(cases)))
    return 1 if failed[0] else 0
