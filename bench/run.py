#!/usr/bin/python3
"""ftrun's benchmark suite: ftrun against PyTorch eager, NumPy and ONNX Runtime
on the graphs in bench/graphs/ (with --onnx: ftrun, ONNX Runtime and PyTorch
on ONNX models), same values, outputs checked to agree.

    /usr/bin/python3 bench/run.py [--threads N] [--only NAME[,NAME]] [-w W] [-n N]
    /usr/bin/python3 bench/run.py --busy 1     # beside one busy process

Every runtime does W untimed then N timed runs of the whole graph and reports
the median: ftrun's run_ms.median from timing.json (`build/ftrun G -q -w W -n N
--threads T -o TMP`), bench/torchgraph.py and bench/npgraph.py timed around
one whole interpretation of the graph (values built beforehand, as ftrun's
load is outside run_ms). The N runs are split into R rounds (--rounds) that
alternate the runtimes; each time is then the median of the round medians.
All three get the same thread count and the same OpenBLAS kernels. A full run
replaces that thread count's section of bench/RESULTS.md; see bench/README.md.

With --onnx the suite is the ONNX models of bench/onnx_models.py instead
(exported once under build/bench-onnx/): ftrun on the .onnx file, ONNX
Runtime on the same file (bench/ort/run.js, onnxruntime-node) and PyTorch
eager on the module it was exported from; and, after the timed rounds,
--cold-runs C one-run processes of ftrun and ONNX Runtime, alternating: the
first result (process start to first result) and the peak resident memory
of such a run (bench/cold.py says exactly what each covers), medians of C.

With --busy K (K >= 0) the suite runs beside K busy processes (`sh -c 'while :; do :;
done'`, started before the first graph, stopped after the last): ftrun with
its default threads (no --threads), PyTorch with --threads T (default every
core), ftrun --threads 1 ("ftrun-t1") and ftrun --threads T ("ftrun-tT", a
thread per core: the default before it followed the load) take turns in the
same rounds, so "ftrun/ftrun-t1", "ftrun/torch" and "ftrun/ftrun-tT" are
ratios from one run under the same load (--busy 0: the same comparison with no busy process). Such a run
has its own section of RESULTS.md (busy=K).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys



def _threads_arg():
    """--threads from the command line (before argparse runs), else every core."""
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return str(os.cpu_count() or 1)


# The BLAS libraries and OpenMP read these when they load, and onnx_models
# imports NumPy (which loads OpenBLAS): set them before that import, so that
# NumPy and PyTorch run their products on the thread count asked for (set
# again below from the parsed arguments).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads_arg()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blascore  # noqa: E402
import cold  # noqa: E402
import onnx_models  # noqa: E402
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Bench:
    """A benchmark graph. pending: ops that ftrun may not have yet; a failing
    ftrun run of such a graph is reported as skipped, not as a failure.
    per_node: report median / nodes (dispatch overhead). onnx: the model of
    bench/onnx_models.py (path and feeds are then its exported files)."""

    def __init__(self, name, warmup, iterations, pending=None, per_node=False, feeds=None, about="", onnx=None):
        self.name = name
        self.path = os.path.join("bench", "graphs", name + ".json")
        self.onnx = onnx
        if onnx is not None:
            d = os.path.join(ONNX_DIR, name)
            self.path = os.path.join(d, "model.onnx")
            feeds = {onnx.input_name: os.path.join(d, "input.npy")}
        self.warmup, self.iterations = warmup, iterations
        self.pending = pending or []
        self.per_node = per_node
        self.feeds = feeds or {}  # input name -> .npy path (relative to the repository root)
        self.about = about


# W and N per graph keep a whole run at about a minute on a 2-core machine.
BENCHES = [
    Bench("mlp", 2, 15, about="batch 256, 1024-4096-4096-1024, gemm+relu, softmax"),
    Bench("cnn_block", 2, 15, pending=["conv", "batch_norm", "max_pool"],
          about="ResNet basic block on [8,64,56,56]: conv3x3-bn-relu-conv3x3-bn, residual, relu, 2x2 max pool"),
    Bench("transformer", 2, 15,
          about="pre-norm encoder block: batch 8, seq 256, d_model 512, 8 heads, ffn 2048, gelu"),
    Bench("fft_pipeline", 3, 40, pending=["rfft", "irfft"],
          about="Hann window, rfft of 256x4096, magnitude, mean log spectrum; per-bin gain, irfft"),
    Bench("dispatch_1000", 20, 300, per_node=True, about="1,000 mul/add on a [16] f32 tensor"),
]

# --onnx: the models of bench/onnx_models.py, exported under build/bench-onnx/.
ONNX_DIR = os.path.join(ROOT, "build", "bench-onnx")
ONNX_BENCHES = [Bench(m.name, m.warmup, m.iterations, about="%s (opset %d)" % (m.about, m.opset), onnx=m)
                for m in onnx_models.MODELS.values()]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for every runtime (default: every core, %(default)s)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only these graphs (repeatable or comma-separated; of: %s; with --onnx: %s); "
                        "RESULTS.md is then left alone" % (", ".join(b.name for b in BENCHES),
                                                           ", ".join(b.name for b in ONNX_BENCHES)))
    p.add_argument("--onnx", action="store_true",
                   help="the ONNX models (bench/onnx_models.py) on ftrun, ONNX Runtime and PyTorch "
                        "instead of bench/graphs/ (CPU only)")
    p.add_argument("--cold-runs", type=int, default=3, metavar="C",
                   help="with --onnx: one-run processes of ftrun and ONNX Runtime per model for the first "
                        "result and peak memory (bench/cold.py; default %(default)s, 0: none)")
    p.add_argument("-w", "--warmup", type=int, help="untimed runs for every graph (default: per graph)")
    p.add_argument("-n", "--iterations", type=int, help="timed runs for every graph (default: per graph)")
    p.add_argument("--rounds", type=int, default=5,
                   help="split the timed runs into R rounds that alternate the runtimes; each time is the "
                        "median of the round medians (default %(default)s; 1: one median of N runs)")
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                   help="cpu: ftrun, PyTorch and NumPy on the CPU; cuda: ftrun -d cuda and PyTorch on the GPU "
                        "(no NumPy); default %(default)s")
    p.add_argument("--busy", type=int, default=None, metavar="K",
                   help="run beside K busy processes and compare ftrun's default threads with --threads 1 "
                        "and with PyTorch (CPU, bench/graphs/ only; --busy 0: the same comparison without one)")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"), help="results file (default %(default)s)")
    p.add_argument("--no-results", action="store_true", help="print the table only")
    a = p.parse_args()
    if a.threads < 1 or a.rounds < 1 or a.cold_runs < 0:
        p.error("--threads and --rounds must be >= 1, --cold-runs >= 0")
    if (a.warmup is not None and a.warmup < 0) or (a.iterations is not None and a.iterations < 1):
        p.error("-w must be >= 0 and -n >= 1")
    if a.busy is not None and (a.busy < 0 or a.onnx or a.device != "cpu"):
        p.error("--busy K takes K >= 0 and runs bench/graphs/ on the CPU only")
    if a.onnx and a.device != "cpu":
        p.error("--onnx runs on the CPU only")
    a.only = [x for o in a.only for x in o.split(",") if x]
    known = {b.name for b in (ONNX_BENCHES if a.onnx else BENCHES)}
    for x in a.only:
        if x not in known:
            p.error("unknown graph '%s' (have: %s)" % (x, ", ".join(sorted(known))))
    return a


ARGS = parse_args()
# The BLAS libraries and OpenMP read these when they load: set them before
# NumPy and PyTorch are imported, so that every runtime gets ARGS.threads
# and the same BLAS kernels.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)
BLAS_CORE = blascore.openblas_core()

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, HERE)
import npgraph  # noqa: E402
import torchgraph  # noqa: E402

torch.set_num_threads(ARGS.threads)


LOAD_BEFORE = (0.0, 0.0, 0.0)
SHOWN_FTRUN = ARGS.ftrun  # the path given; ARGS.ftrun becomes a private copy of it


class Skip(Exception):
    """A runtime cannot run this graph (yet); the message says why."""


def sanitise(name):
    return "".join(c if c.isalnum() and c.isascii() or c in "._-" else "_" for c in name)


def time_ms(fn, warmup, iterations, sync=lambda: None):
    """(median, min) in ms of `iterations` calls after `warmup` calls, and the last result."""
    for _ in range(warmup):
        fn()
    sync()
    times, out = [], None
    for _ in range(iterations):
        t0 = time.perf_counter()
        out = fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return (float(np.median(times)), min(times)), out


# --- the runtimes ---------------------------------------------------------------
# Each peer: name, and run(bench, case, w, n) -> ((median ms, min ms),
# {output: ndarray}), or raises Skip. `case` holds what the runtimes share:
# the parsed graph and its values.

class FtrunPeer:
    """threads: ftrun's --threads; "default" passes none (ftrun's own choice)."""

    def __init__(self, exe, device="cpu", threads=None, name="ftrun"):
        self.name = name
        self.exe, self.device = exe, device
        self.threads = ARGS.threads if threads is None else threads
        self.available = self._ops()

    def _ops(self):
        """op -> False where `ftrun ops` says "not available"."""
        r = subprocess.run([self.exe, "ops"], capture_output=True, text=True)
        ops = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if f and f[0] != "op":
                ops[f[0]] = "not available" not in line
        return ops

    def run(self, bench, case, warmup, iterations):
        missing = sorted({n["op"] for n in case.graph.nodes if self.available.get(n["op"]) is False}) \
            if case.graph is not None else []
        if missing:
            raise Skip("`ftrun ops`: %s not available" % ", ".join(missing))
        with tempfile.TemporaryDirectory(prefix="ftrun-bench-") as tmp:
            cmd = [self.exe, bench.path, "-q", "-w", str(warmup), "-n", str(iterations), "-o", tmp]
            if self.threads != "default":
                cmd += ["--threads", str(self.threads)]
            if self.device != "cpu":
                cmd += ["-d", self.device]
            for k, v in bench.feeds.items():
                cmd += ["-i", "%s=%s" % (k, v)]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                msg = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
                msg = "exit %d: %s" % (r.returncode, msg.replace("ftrun: error: ", ""))
                if bench.pending:
                    raise Skip(msg)
                raise RuntimeError("%s: %s" % (" ".join([os.path.relpath(SHOWN_FTRUN, ROOT)] + cmd[1:]), msg))
            with open(os.path.join(tmp, "timing.json")) as f:
                timing = json.load(f)
            outs = {t: np.load(os.path.join(tmp, sanitise(t) + ".npy")) for t in case.outputs}
        return (timing["run_ms"]["median"], timing["run_ms"]["min"]), outs

    def cold(self, bench):
        return cold.ftrun(self.exe, bench.path, bench.feeds, self.threads, cwd=ROOT)


class TorchPeer:
    """PyTorch eager through bench/torchgraph.py. For device "cuda" the values
    live on the GPU and every timed call ends with torch.cuda.synchronize(),
    so that the time covers the kernels and not only their launches."""

    def __init__(self, device="cpu"):
        self.name = "torch"
        self.device = device
        self.sync = (lambda: None) if device == "cpu" else torch.cuda.synchronize

    def run(self, bench, case, warmup, iterations):
        if bench.onnx is not None and case.module is None:
            raise Skip("built as ONNX directly: no PyTorch module")
        if case.module is not None:  # an ONNX model: the nn.Module it was exported from
            x = torch.from_numpy(case.feeds[bench.onnx.input_name])
            with torch.inference_mode():
                ms, y = time_ms(lambda: case.module(x), warmup, iterations)
            return ms, {"y": y.numpy().copy()}
        try:
            tg = torchgraph.TorchGraph(case.graph, self.device)
        except NotImplementedError as e:
            raise Skip(str(e))
        vals = tg.values(np_values=case.values)
        ms, outs = time_ms(lambda: tg.run(vals), warmup, iterations, self.sync)
        return ms, {k: torchgraph.to_numpy(v) for k, v in outs.items()}


class NumpyPeer:
    def __init__(self):
        self.name = "numpy"

    def run(self, bench, case, warmup, iterations):
        missing = sorted({n["op"] for n in case.graph.nodes if n["op"] not in npgraph.OPS})
        if missing:
            raise Skip("npgraph.py lacks %s" % ", ".join(missing))
        return time_ms(lambda: case.graph.run(case.values), warmup, iterations)


class OrtPeer:
    """ONNX Runtime (CPU) through onnxruntime-node: `node bench/ort/run.js
    MODEL -i NAME=FILE --threads T -w W -n N -o TMP`, one process per round
    (session creation outside the time); the time is its median of N
    session.run calls, graph optimization level "all". A graph of
    bench/graphs/ runs as the ONNX export of torchgraph.py's interpretation
    of it (onnx_models.export_graph), skipped where the exporter lacks an op."""
    SCRIPT = os.path.join(HERE, "ort", "run.js")

    def __init__(self):
        self.name = "ort"
        self.node = shutil.which("node")
        self.version = "not installed"
        if self.node and os.path.isdir(os.path.join(HERE, "ort", "node_modules", "onnxruntime-node")):
            r = subprocess.run([self.node, "-e", "process.stdout.write(require('onnxruntime-node').env.versions.node)"],
                               cwd=os.path.join(HERE, "ort"), capture_output=True, text=True)
            if r.returncode == 0:
                self.version = "onnxruntime-node %s, node %s" % (r.stdout.strip(), subprocess.run(
                    [self.node, "--version"], capture_output=True, text=True).stdout.strip())

    def run(self, bench, case, warmup, iterations):
        if self.version == "not installed":
            raise Skip("onnxruntime-node is not installed in bench/ort (make bench-deps)")
        model, feeds = bench.path, bench.feeds
        if case.graph is not None:
            try:
                model, feeds = onnx_models.export_graph(
                    bench.name, case.graph, case.values, ONNX_DIR,
                    [os.path.join(ROOT, bench.path)] + [os.path.join(HERE, f) for f in ("torchgraph.py", "npgraph.py")])
            except Exception as e:
                raise Skip("torch.onnx.export of torchgraph.py's graph: %s" % (str(e).splitlines() or [""])[0][:120])
        with tempfile.TemporaryDirectory(prefix="ftrun-bench-ort-") as tmp:
            cmd = [self.node, self.SCRIPT, model, "--threads", str(ARGS.threads), "-w", str(warmup),
                   "-n", str(iterations), "-o", tmp]
            for k, v in feeds.items():
                cmd += ["-i", "%s=%s" % (k, v)]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                msg = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
                raise RuntimeError("node bench/ort/run.js %s: exit %d: %s" % (bench.name, r.returncode, msg))
            res = json.loads(r.stdout.strip().splitlines()[-1])
            outs = {t: np.load(os.path.join(tmp, sanitise(t) + ".npy")) for t in case.outputs}
        return (res["median_ms"], res["min_ms"]), outs

    def cold(self, bench):
        if self.version == "not installed":
            raise Skip("onnxruntime-node is not installed in bench/ort (make bench-deps)")
        return cold.ort(self.node, self.SCRIPT, bench.path, bench.feeds, ARGS.threads, cwd=ROOT)


def peers_for(device):
    """The runtimes compared on a device; the first is the one measured (ftrun),
    the rest its peers, in table order. NumPy has no GPU, so a CUDA run
    compares ftrun with PyTorch alone; the ONNX models run on ftrun, PyTorch
    and ONNX Runtime."""
    if ARGS.onnx:
        return [FtrunPeer(ARGS.ftrun), TorchPeer("cpu"), OrtPeer()]
    if ARGS.busy is not None:
        return [FtrunPeer(ARGS.ftrun, threads="default"), TorchPeer("cpu"),
                FtrunPeer(ARGS.ftrun, threads=1, name="ftrun-t1")] + \
            ([FtrunPeer(ARGS.ftrun, name="ftrun-t%d" % ARGS.threads)] if ARGS.threads > 1 else [])
    if device == "cpu":
        return [FtrunPeer(ARGS.ftrun), TorchPeer("cpu"), NumpyPeer(), OrtPeer()]
    if not torch.cuda.is_available():
        raise SystemExit("run.py: --device cuda needs PyTorch with CUDA, and torch %s has none "
                         "(torch.cuda.is_available() is False); bench/cuda.py compares ftrun with "
                         "cuBLAS and cudaMemcpy without it" % torch.__version__)
    # PyTorch's f32 products must not use TF32 either: ftrun only does with --allow-tf32.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return [FtrunPeer(ARGS.ftrun, "cuda"), TorchPeer("cuda")]


# --- comparing outputs ------------------------------------------------------------

def compare(got, ref, atol=0.0):
    """Largest absolute difference over all outputs, the largest relative one
    (max |x - y| / max |y| per output), and whether every value is within
    |x - y| <= 1e-5 * max(1, max|y|) + 1e-4 * |y| + atol (f32 sums of thousands
    of terms round differently in each runtime; ints and bools must be equal;
    atol: the model's own allowance, bench/onnx_models.py)."""
    worst_abs, worst_rel, ok, notes = 0.0, 0.0, True, []
    for name, y in ref.items():
        x = got[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            notes.append("%s: %s %s vs %s %s" % (name, x.dtype, x.shape, y.dtype, y.shape))
            ok = False
            continue
        if x.size == 0:
            continue
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        diff = np.where(np.isnan(xd) & np.isnan(yd), 0.0, np.abs(xd - yd))
        diff = np.where(np.isinf(xd) & (xd == yd), 0.0, diff)
        diff = np.nan_to_num(diff, nan=np.inf)
        scale = float(np.nanmax(np.abs(np.where(np.isfinite(yd), yd, 0.0))))
        d = float(diff.max())
        worst_abs = max(worst_abs, d)
        worst_rel = max(worst_rel, d / scale if scale > 0 else (0.0 if d == 0 else np.inf))
        if y.dtype.kind == "f":
            bad = diff > 1e-5 * max(scale, 1.0) + 1e-4 * np.abs(np.nan_to_num(yd)) + atol
        else:
            bad = diff != 0
        if bad.any():
            i = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), y.shape)
            notes.append("%s: %d of %d values differ, worst at %s: %r vs %r" % (name, int(bad.sum()), y.size,
                                                                              list(i), x[i], y[i]))
            ok = False
    return worst_abs, worst_rel, ok, notes


# --- running ---------------------------------------------------------------------

class Case:
    """What the runtimes share: a graph of bench/graphs/ and its values, or an
    ONNX model (exported when missing or stale), its input and its module."""

    def __init__(self, bench):
        self.graph = self.module = None
        if bench.onnx is not None:
            import onnx
            onnx_models.export(bench.onnx, ONNX_DIR)
            g = onnx.load(bench.path, load_external_data=False).graph
            self.nodes, self.outputs = len(g.node), [o.name for o in g.output]
            self.feeds = {k: np.load(v) for k, v in bench.feeds.items()}
            self.module = onnx_models.module(bench.onnx)
            return
        self.graph = npgraph.Graph.load(os.path.join(ROOT, bench.path))
        feeds = {k: np.load(os.path.join(ROOT, v)) for k, v in bench.feeds.items()}
        self.values = self.graph.values(feeds)
        self.nodes, self.outputs = len(self.graph.nodes), self.graph.outputs


def split_runs(n, rounds):
    """n timed runs spread over at most `rounds` rounds, as evenly as possible."""
    r = max(1, min(rounds, n))
    return [n // r + (1 if i < n % r else 0) for i in range(r)]


def run_bench(bench, peers):
    w = bench.warmup if ARGS.warmup is None else ARGS.warmup
    n = bench.iterations if ARGS.iterations is None else ARGS.iterations
    rounds = split_runs(n, ARGS.rounds)
    row = {"name": bench.name, "w": w, "n": n, "rounds": len(rounds), "ms": {}, "skip": {}, "error": {},
           "diff": {}, "notes": []}
    t0 = time.perf_counter()
    case = Case(bench)
    row["nodes"] = case.nodes
    outs, medians, mins = {}, {p.name: [] for p in peers}, {p.name: [] for p in peers}
    # Rounds interleave the runtimes (in a rotating order), so that load from
    # other processes that comes and goes falls on all of them alike; each
    # runtime's time is the median of its round medians.
    # Before each share, a pause: a runtime that has just run leaves its idle
    # threads spinning for a while (OpenMP, OpenBLAS; PyTorch's live in this
    # process), and with more than one thread they would take the cores from
    # the next runtime's first runs.
    settle = 0.3 if ARGS.threads > 1 else 0.0
    for k, n_r in enumerate(rounds):
        for p in peers[k % len(peers):] + peers[:k % len(peers)]:
            if p.name in row["skip"] or p.name in row["error"]:
                continue
            time.sleep(settle)
            try:
                ms, out = p.run(bench, case, w, n_r)
            except Skip as e:
                row["skip"][p.name] = str(e)
                continue
            except Exception as e:  # a failure of one runtime is reported, the others still run
                row["error"][p.name] = "%s: %s" % (type(e).__name__, e)
                continue
            medians[p.name].append(ms[0])
            mins[p.name].append(ms[1])
            outs[p.name] = out
    row["min"] = {}
    for name, ms in medians.items():
        if ms and name not in row["error"]:
            row["ms"][name] = float(np.median(ms))
            row["min"][name] = min(mins[name])
    # reference: the first peer that ran (PyTorch when it did), each other runtime checked against it
    ref_name = next((p.name for p in peers[1:] if p.name in outs), None)
    if ref_name:
        row["ref"] = ref_name
        for name, out in outs.items():
            if name != ref_name and name not in row["error"]:
                row["diff"][name] = compare(out, outs[ref_name], bench.onnx.atol if bench.onnx is not None else 0.0)
    if bench.onnx is not None:
        cold_runs(row, [p for p in peers if hasattr(p, "cold")], bench, settle)
    row["seconds"] = time.perf_counter() - t0
    del case, outs
    return row


def cold_runs(row, peers, bench, settle):
    """row["first"] and row["rss"]: per runtime, the medians of ARGS.cold_runs
    one-run processes (ms to the first result, peak RSS in KiB), alternating."""
    got = {p.name: [] for p in peers}
    for k in range(ARGS.cold_runs):
        for p in peers[k % len(peers):] + peers[:k % len(peers)]:
            if p.name in row["skip"] or p.name in row["error"]:
                continue
            time.sleep(settle)
            try:
                got[p.name].append(p.cold(bench))
            except Exception as e:
                row["error"][p.name] = "first-result run: %s: %s" % (type(e).__name__, e)
    row["first"] = {n: float(np.median([v[0] for v in g])) for n, g in got.items() if g and n not in row["error"]}
    row["rss"] = {n: float(np.median([v[1] for v in g])) for n, g in got.items() if g and n not in row["error"]}


def fmt_ms(row, peer):
    if peer in row["ms"]:
        return "%.3f" % row["ms"][peer]
    if peer in row["skip"]:
        return "skipped"
    if peer in row["error"]:
        return "FAILED"
    return "-"


def ratio(row, a, b):
    if a in row["ms"] and b in row["ms"] and row["ms"][b] > 0:
        return "%.2f" % (row["ms"][a] / row["ms"][b])
    return "-"


def agree_cell(row, peer):
    if peer not in row["diff"]:
        return "-"
    _, rel, ok, _ = row["diff"][peer]
    return "%.1e%s" % (rel, "" if ok else " NO")


def measure_ratio(row, key, a, b):
    m = row.get(key, {})
    return "%.2f" % (m[a] / m[b]) if a in m and b in m and m[b] > 0 else "-"


def table(rows, peers, markdown):
    names = [p.name for p in peers]
    head = ["graph", "nodes"] + ["%s ms" % p for p in names] + ["ftrun/%s" % p for p in names[1:]] + \
        ["rel diff %s" % p for p in names if p != "torch"]
    cold_names = [p.name for p in peers if hasattr(p, "cold")]
    with_cold = any(r.get("first") for r in rows)
    if with_cold:
        head += ["first ms %s" % p for p in cold_names] + ["first ftrun/%s" % p for p in cold_names[1:]] + \
            ["RSS MB %s" % p for p in cold_names] + ["RSS ftrun/%s" % p for p in cold_names[1:]]
    body = []
    for r in rows:
        body.append([r["name"], str(r["nodes"])] + [fmt_ms(r, p) for p in names] +
                    [ratio(r, "ftrun", p) for p in names[1:]] + [agree_cell(r, p) for p in names if p != "torch"])
        if with_cold:
            f, m = r.get("first", {}), r.get("rss", {})
            body[-1] += ["%.1f" % f[p] if p in f else "-" for p in cold_names] + \
                [measure_ratio(r, "first", "ftrun", p) for p in cold_names[1:]] + \
                ["%.1f" % (m[p] / 1024) if p in m else "-" for p in cold_names] + \
                [measure_ratio(r, "rss", "ftrun", p) for p in cold_names[1:]]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = "  ".join("%-*s" if i == 0 else "%*s" for i in range(len(head)))
    out = [fmt % tuple(x for pair in zip(widths, head) for x in pair)]
    out += [fmt % tuple(x for pair in zip(widths, b) for x in pair) for b in body]
    return "\n".join(out)


def geomeans(rows, peer):
    """'steady X, first result Y, peak RSS Z' over the rows where both ran."""
    parts = []
    for label, key in (("steady state", "ms"), ("first result", "first"), ("peak RSS", "rss")):
        rs = [r[key]["ftrun"] / r[key][peer] for r in rows
              if "ftrun" in r.get(key, {}) and peer in r.get(key, {}) and r[key][peer] > 0]
        if rs:
            parts.append("%s %.2f (%d models)" % (label, float(np.exp(np.mean(np.log(rs)))), len(rs)))
    return ", ".join(parts)


def notes(rows):
    out = []
    if ARGS.onnx and geomeans(rows, "ort"):
        out.append("geometric means of ftrun/ort: " + geomeans(rows, "ort"))
    for r in rows:
        if r["nodes"] and any(b.name == r["name"] and b.per_node for b in suite()):
            per = ", ".join("%s %.2f us" % (p, r["ms"][p] * 1e3 / r["nodes"]) for p in ("ftrun", "torch", "numpy", "ort")
                            if p in r["ms"])
            out.append("%s: per-node time (median / %d nodes): %s" % (r["name"], r["nodes"], per))
        if len(r["min"]) > 1 and "ftrun" in r["min"]:
            m = r["min"]
            out.append("%s: fastest run (less sensitive to other load): %s; %s" % (
                r["name"], ", ".join("%s %.3f ms" % (p, m[p]) for p in m),
                ", ".join("ftrun/%s %.2f" % (p, m["ftrun"] / m[p]) for p in m if p != "ftrun" and m[p] > 0)))
        for p, why in r["skip"].items():
            out.append("%s: %s skipped: %s" % (r["name"], p, why))
        for p, why in r["error"].items():
            out.append("%s: %s failed: %s" % (r["name"], p, why))
        for p, (ab, rel, ok, ns) in r["diff"].items():
            out.append("%s: %s vs %s: max abs diff %.3g, max rel diff %.3g: %s%s"
                       % (r["name"], p, r["ref"], ab, rel, "agree" if ok else "DISAGREE",
                          "" if ok else " (" + "; ".join(ns) + ")"))
    return out


# --- RESULTS.md ----------------------------------------------------------------

def machine():
    model, cores = platform.processor() or "unknown", None
    try:
        info = dict(line.split(":", 1) for line in subprocess.run(["lscpu"], capture_output=True, text=True)
                    .stdout.splitlines() if ":" in line)
        info = {k.strip(): v.strip() for k, v in info.items()}
        model = info.get("Model name", model)
        if "Model" in info:  # hypervisors often report a generic name: add family/model/stepping
            model += " (family %s, model %s, stepping %s)" % (info.get("CPU family", "?"), info["Model"],
                                                              info.get("Stepping", "?"))
        cores = int(info.get("Core(s) per socket", 0)) * int(info.get("Socket(s)", 1)) or None
    except (OSError, ValueError):
        pass
    return model, cores, os.cpu_count()


def git_commit():
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        return r.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def ftrun_version():
    try:
        return subprocess.run([ARGS.ftrun, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "ftrun (not found)"


HEADER = """# ftrun benchmark results

Written by `bench/run.py` (see bench/README.md): ftrun against PyTorch eager
(bench/torchgraph.py), NumPy (bench/npgraph.py) and, in sections written
since it joined, ONNX Runtime (bench/ort/run.js on the ONNX export of
torchgraph.py's interpretation) on bench/graphs/, every runtime with the same
thread count, medians of the timed runs after warm-ups.
Ratios below 1: ftrun is faster. "rel diff" is max |x - y| / max |y| against
PyTorch's outputs ("NO": outside the agreement tolerance). Each thread count
has its own section; a full run replaces its section.

The "ONNX models" sections (`bench/run.py --onnx`) compare ftrun on an ONNX
file with ONNX Runtime on the same file (onnxruntime-node, CPU, graph
optimization level "all", intra-op threads = the thread count) and with
PyTorch eager on the module the file was exported from; there "ftrun/ort"
is the ratio to beat.

The "Beside K busy processes" sections (`bench/run.py --busy K`) run the
graphs beside K busy processes (`--busy 0`: none) and compare ftrun's
default threads (no --threads: the cores other processes leave idle) with
PyTorch, with ftrun --threads 1 and with ftrun --threads T (a thread per
core, the default before it followed the load), all taking turns in the
same rounds; there "ftrun/ftrun-t1" and "ftrun/torch" should stay at or
below 1.2.
"""


def suite():
    """The benchmarks of this run's kind: bench/graphs/ or, with --onnx, the ONNX models."""
    return ONNX_BENCHES if ARGS.onnx else BENCHES


def header():
    graphs = "\n".join("- `%s`: %s" % (b.name, b.about) for b in BENCHES)
    models = "\n".join("- `%s`: %s" % (b.name, b.about) for b in ONNX_BENCHES)
    return HEADER + "\nGraphs (bench/graphs/):\n\n" + graphs + "\n\nONNX models (bench/onnx_models.py):\n\n" + \
        models + "\n"


def section_key():
    """The marker of this run's section in RESULTS.md: one per CPU thread count
    (and per thread count for the ONNX models), one for CUDA."""
    if ARGS.device != "cpu":
        return "device=%s" % ARGS.device
    if ARGS.busy is not None:
        return "busy=%d" % ARGS.busy
    return ("onnx-threads=%d" if ARGS.onnx else "threads=%d") % ARGS.threads


def gpu_name():
    """The `cuda:0` line of `ftrun devices` (name, memory, compute capability)."""
    try:
        out = subprocess.run([ARGS.ftrun, "devices"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return next((line.split(None, 1)[1].strip() for line in out.splitlines() if line.startswith("cuda:0")), "unknown")


def section(rows, peers, total_s):
    model, cores, cpus = machine()
    ort = next((p.version for p in peers if p.name == "ort"), None)
    lines = [
        "<!-- %s -->" % section_key(),
        ("## Beside %d busy process%s: ftrun's default threads, PyTorch %d thread%s, ftrun --threads 1 and %d"
         % (ARGS.busy, "" if ARGS.busy == 1 else "es", ARGS.threads, "" if ARGS.threads == 1 else "s", ARGS.threads)
         if ARGS.busy is not None else
         "## %s%d thread%s" % ("ONNX models, " if ARGS.onnx else "", ARGS.threads, "" if ARGS.threads == 1 else "s")
         if ARGS.device == "cpu"
         else "## %s (%d CPU thread%s)" % (ARGS.device.upper(), ARGS.threads, "" if ARGS.threads == 1 else "s")),
        "",
        "- machine: %s, %s cores (%d logical CPUs, nproc %d)" % (model, cores or "?", cpus or 0,
                                                               len(os.sched_getaffinity(0))),
    ] + (["- GPU: cuda:0 %s" % gpu_name()] if ARGS.device != "cpu" else []) + \
        (["- ONNX Runtime: %s (CPU provider, graph optimization level all, intra-op threads %d, "
          "inter-op 1, sequential)" % (ort, ARGS.threads)] if ort else []) + [
        "- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "- commit: %s (%s), PyTorch %s, NumPy %s, Python %s" % (git_commit(), ftrun_version(), torch.__version__,
                                                               np.__version__, platform.python_version()),
        "- threads: %s; device: %s; run.py took %.0f s" % (
            "ftrun default (none given), 1 and %d, PyTorch %d; load: %d busy process%s (sh -c 'while :; do :; done') "
            "throughout" % (ARGS.threads, ARGS.threads, ARGS.busy, "" if ARGS.busy == 1 else "es") if ARGS.busy is not None else ARGS.threads,
            ARGS.device, total_s),
        "- BLAS: " + BLAS_CORE,
        "- runs: W warm-ups then the timed runs, in R rounds alternating the runtimes (W each round); time = "
        "median of the round medians: %s" % ", ".join("%s W=%d N=%d R=%d" % (r["name"], r["w"], r["n"], r["rounds"])
                                                     for r in rows),
        "- load average (1, 5, 15 min) before / after: %s / %s (above 0 means other processes shared the cores)"
        % (" ".join("%.2f" % x for x in LOAD_BEFORE), " ".join("%.2f" % x for x in os.getloadavg())),
        "",
        table(rows, peers, markdown=True),
        "",
    ]
    lines += ["- " + n for n in notes(rows)]
    lines += ["", "<!-- end %s -->" % section_key(), ""]
    return "\n".join(lines)


def write_results(path, text):
    """Replaces this run's section (its thread count on the CPU, or its
    device), keeps the others: CPU ones sorted by threads, then devices."""
    sections = {}
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        for m in re.finditer(r"<!-- ((?:onnx-)?threads=\d+|busy=\d+|device=\w+) -->.*?<!-- end \1 -->\n", old, re.S):
            sections[m.group(1)] = m.group(0)
    sections[section_key()] = text

    def order(key):
        kind, value = key.split("=", 1)
        return (0, int(value), "") if kind == "threads" else (1, int(value), "") if kind == "onnx-threads" \
            else (2, int(value), "") if kind == "busy" else (3, 0, value)
    body = header() + "\n" + "\n".join(sections[k] for k in sorted(sections, key=order))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(body)
    os.replace(tmp, path)


def main():
    sys.stdout.reconfigure(line_buffering=True)  # the table after the progress lines on stderr
    if not os.access(ARGS.ftrun, os.X_OK):
        sys.exit("run.py: %s not found: build it with `make`" % ARGS.ftrun)
    # Time one binary throughout: a `make` elsewhere in the tree during the run
    # would otherwise swap or delete build/ftrun between graphs.
    snap = tempfile.TemporaryDirectory(prefix="ftrun-bench-bin-")
    exe = os.path.join(snap.name, "ftrun")
    shutil.copy2(ARGS.ftrun, exe)
    # ftrun loads its CUDA backend from beside the binary: the snapshot needs it too.
    backend = os.path.join(os.path.dirname(os.path.abspath(ARGS.ftrun)), "libftrun-cuda.so")
    if ARGS.device != "cpu" and os.path.exists(backend):
        shutil.copy2(backend, os.path.join(snap.name, "libftrun-cuda.so"))
    global SHOWN_FTRUN
    SHOWN_FTRUN = ARGS.ftrun
    ARGS.ftrun = exe
    peers = peers_for(ARGS.device)
    benches = [b for b in suite() if not ARGS.only or b.name in ARGS.only]
    global LOAD_BEFORE
    LOAD_BEFORE = os.getloadavg()
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(ARGS.busy or 0)]
    try:
        if busy:
            time.sleep(0.5)  # let the busy processes settle on the cores
        t0 = time.perf_counter()
        rows = []
        for b in benches:
            print("%s ..." % b.name, end=" ", file=sys.stderr, flush=True)
            rows.append(run_bench(b, peers))
            print("%.1f s" % rows[-1]["seconds"], file=sys.stderr, flush=True)
        total = time.perf_counter() - t0
    finally:
        for bp in busy:
            bp.kill()
            bp.wait()
    print("load average before / after: %s / %s" % (LOAD_BEFORE, os.getloadavg()))
    if ARGS.busy is not None:
        print("beside %d busy process%s: ftrun = default threads, ftrun-tN = --threads N" % (
            ARGS.busy, "" if ARGS.busy == 1 else "es"))
    print("threads %d, device %s, medians in ms over %d round%s (ratio below 1: ftrun is faster); %s"
          % (ARGS.threads, ARGS.device, ARGS.rounds, "" if ARGS.rounds == 1 else "s", BLAS_CORE))
    print(table(rows, peers, markdown=False))
    for n in notes(rows):
        print("  " + n)
    if not ARGS.only and not ARGS.no_results:
        write_results(ARGS.results, section(rows, peers, total))
        print("wrote %s (section: %s)" % (os.path.relpath(ARGS.results), section_key()))
    failed = any(r["error"] or any(not d[2] for d in r["diff"].values()) for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
