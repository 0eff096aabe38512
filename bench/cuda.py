#!/usr/bin/python3
"""ftrun's CUDA benchmarks: ftrun -d cuda against what bounds it on the same
GPU, in one run: a device-to-device cudaMemcpy for memory-bound ops, cuBLAS
for matrix products (both from bench/cuda_peer.cu), PyTorch eager for the
transformer block. Prints a table and writes bench/RESULTS-cuda.md.

    /usr/bin/python3 bench/cuda.py --quick        # a first smoke run (a minute or two)
    /usr/bin/python3 bench/cuda.py                # the full run
    /usr/bin/python3 bench/cuda.py --dry-run      # no GPU: the graphs and commands, graphs checked on the CPU

Groups (--only): bandwidth (relu, add, softmax, layer_norm on a 256 MiB f32
tensor; effective bandwidth over that of cudaMemcpy, target >= 0.80), matmul
(4096^3 in f32, bf16, and f32 with TF32; ftrun time over cuBLAS time, target
<= 1.05), transformer (graphs/transformer_block.json with and without
--cuda-graph, against PyTorch eager; outputs checked). See bench/README.md.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

MIB = 1 << 20
BW_ROWS, BW_COLS = 65536, 1024  # f32: 256 MiB, large enough that caches and launch cost do not count
BW_BYTES = BW_ROWS * BW_COLS * 4
MM = 4096
TARGET_BW = 0.80  # ftrun's effective bandwidth / cudaMemcpy's, at least
TARGET_MM = 1.05  # ftrun's time / cuBLAS's, at most
GROUPS = ["bandwidth", "matmul", "transformer"]
TRANSFORMER = os.path.join(ROOT, "graphs", "transformer_block.json")
# ftrun warnings that every row here gets by design: the inputs are uploaded
# once and kept out of run_ms, and --quick runs too few iterations for a p99.
EXPECTED_WARNINGS = ("transfers", "p99 needs")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="few iterations (W=3, N=10): a first smoke run")
    p.add_argument("--only", action="append", default=[], metavar="GROUP",
                   help="run only these groups (repeatable or comma-separated; of: %s)" % ", ".join(GROUPS))
    p.add_argument("-w", "--warmup", type=int, help="untimed runs (default 10, --quick 3)")
    p.add_argument("-n", "--iterations", type=int, help="timed runs (default 100, --quick 10)")
    p.add_argument("--timeout", type=int, default=300, help="seconds allowed to each ftrun or peer call "
                   "(default %(default)s)")
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    p.add_argument("--peer", default=os.path.join(ROOT, "build", "cuda_peer"),
                   help="the peer program, built from bench/cuda_peer.cu with nvcc when missing or older "
                        "(default %(default)s)")
    p.add_argument("--arch", default="sm_90", help="nvcc -arch for the peer (default %(default)s: H100/H200)")
    p.add_argument("--keep", metavar="DIR", help="write the graphs (and ftrun's outputs) to DIR and keep them")
    p.add_argument("--dry-run", action="store_true",
                   help="write the graphs, print the commands, check each graph with `ftrun G --dry-run -d cpu`; "
                        "use no GPU")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS-cuda.md"),
                   help="results file (default %(default)s)")
    p.add_argument("--no-results", action="store_true", help="print the table only")
    a = p.parse_args()
    a.only = [x for o in a.only for x in o.split(",") if x] or list(GROUPS)
    for x in a.only:
        if x not in GROUPS:
            p.error("unknown group '%s' (have: %s)" % (x, ", ".join(GROUPS)))
    a.w = a.warmup if a.warmup is not None else (3 if a.quick else 10)
    a.n = a.iterations if a.iterations is not None else (10 if a.quick else 100)
    if a.w < 0 or a.n < 1 or a.timeout < 1:
        p.error("-w must be >= 0, -n >= 1 and --timeout >= 1")
    return a


ARGS = None


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cmdline(cmd):
    return " ".join(shlex.quote(os.path.relpath(c, ROOT) if os.path.isabs(c) and c.startswith(ROOT + "/") else c)
                    for c in cmd)


def tail(text, lines=30):
    return "\n".join((text or "").strip().splitlines()[-lines:])


# --- graphs -----------------------------------------------------------------------

def uniform(dtype, shape, seed, low=-1.0, high=1.0):
    return {"dtype": dtype, "shape": shape, "init": {"uniform": {"low": low, "high": high}, "seed": seed}}


def graph(name, tensors, inputs, outputs, nodes):
    return {"ftrun": 1, "name": name, "tensors": tensors, "inputs": inputs, "outputs": outputs, "nodes": nodes}


def bandwidth_cases():
    """(name, graph, bytes read + written, what). Values come from "init", so
    the files are small; they are generated and uploaded once, outside run_ms."""
    shape = [BW_ROWS, BW_COLS]
    x = uniform("f32", shape, 1)
    out = []
    out.append(("relu", graph("bw_relu", {"x": x}, ["x"], ["y"],
                              [{"name": "relu", "op": "relu", "inputs": ["x"], "outputs": ["y"]}]),
                2 * BW_BYTES, "y = relu(x)"))
    out.append(("add", graph("bw_add", {"a": x, "b": uniform("f32", shape, 2)}, ["a", "b"], ["y"],
                             [{"name": "add", "op": "add", "inputs": ["a", "b"], "outputs": ["y"]}]),
                3 * BW_BYTES, "y = a + b"))
    out.append(("softmax", graph("bw_softmax", {"x": x}, ["x"], ["y"],
                                 [{"name": "softmax", "op": "softmax", "inputs": ["x"], "outputs": ["y"],
                                   "attrs": {"axis": -1}}]),
                2 * BW_BYTES, "softmax over rows of 1024"))
    ln = {"x": x, "scale": uniform("f32", [BW_COLS], 3, 0.5, 1.5), "bias": uniform("f32", [BW_COLS], 4, -0.1, 0.1)}
    out.append(("layer_norm", graph("bw_layer_norm", ln, ["x"], ["y"],
                                    [{"name": "layer_norm", "op": "layer_norm", "inputs": ["x", "scale", "bias"],
                                      "outputs": ["y"], "attrs": {"axis": -1, "epsilon": 1e-5}}]),
                2 * BW_BYTES + 2 * BW_COLS * 4, "layer_norm over rows of 1024, with scale and bias"))
    return out


def matmul_cases():
    """(name, graph, dtype, tf32)."""
    out = []
    for dtype, tf32 in (("f32", False), ("bf16", False), ("f32", True)):
        g = graph("mm_%s" % dtype, {"a": uniform(dtype, [MM, MM], 1), "b": uniform(dtype, [MM, MM], 2)}, ["a", "b"],
                  ["c"], [{"name": "matmul", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}])
        out.append(("matmul %s%s" % (dtype, " tf32" if tf32 else ""), g, dtype, tf32))
    return out


def write_graph(folder, g):
    path = os.path.join(folder, g["name"] + ".json")
    with open(path, "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")
    return path


# --- running ftrun and the peer ---------------------------------------------------

# Peer runs that failed: their rows have no ratio, and the run's exit status is 1.
PEER_FAILURES = []


class Failed(Exception):
    """A command failed; the message says which and why (its stderr was printed)."""


def run_cmd(cmd, what):
    """Runs cmd with the timeout; returns the CompletedProcess, or raises
    Failed after printing the command and its stderr."""
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=ARGS.timeout)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        log("  %s timed out after %d s: %s%s" % (what, ARGS.timeout, cmdline(cmd),
                                                  ("\n" + tail(err)) if err.strip() else ""))
        raise Failed("%s timed out after %d s" % (what, ARGS.timeout))
    except OSError as e:
        log("  %s could not start: %s: %s" % (what, cmdline(cmd), e))
        raise Failed("%s could not start: %s" % (what, e))
    if r.returncode != 0:
        log("  %s failed (exit %d): %s\n%s" % (what, r.returncode, cmdline(cmd),
                                              tail(r.stderr) or "  (no message on stderr)"))
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise Failed("%s exit %d: %s" % (what, r.returncode, last))
    return r


def ftrun_cmd(path, outdir, fmt="none", extra=(), device="cuda", w=None, n=None):
    return [ARGS.ftrun, path, "-d", device, "-w", str(ARGS.w if w is None else w),
            "-n", str(ARGS.n if n is None else n), "--format", fmt, "-o", outdir] + list(extra)


def run_ftrun(cmd, label, notes):
    """Runs ftrun; returns its timing.json. Warnings worth keeping go to notes."""
    r = run_cmd(cmd, "ftrun")
    for line in r.stderr.splitlines():
        if "warning:" in line and not any(k in line for k in EXPECTED_WARNINGS):
            notes.append("%s: %s" % (label, line.strip()))
    outdir = cmd[cmd.index("-o") + 1]
    try:
        with open(os.path.join(outdir, "timing.json")) as f:
            timing = json.load(f)
        median = float(timing["run_ms"]["median"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Failed("ftrun succeeded but its timing.json is unreadable: %s" % e)
    dev = str(timing.get("device", {}).get("name", "?"))
    want = cmd[cmd.index("-d") + 1]
    if want.startswith("cuda") and not dev.startswith("cuda"):
        raise Failed("ftrun ran on '%s', not on the GPU" % dev)
    if median <= 0:
        raise Failed("ftrun reported a median of %g ms" % median)
    return timing


def peer_cmd(*args):
    return [ARGS.peer] + [str(a) for a in args]


def run_peer(args):
    """Runs cuda_peer; returns its JSON line as a dict."""
    r = run_cmd(peer_cmd(*args), "cuda_peer")
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failed("cuda_peer printed no JSON line: %r" % r.stdout[-200:])
    if args[0] != "info" and not out.get("median_ms", 0) > 0:
        raise Failed("cuda_peer reported a median of %r ms" % out.get("median_ms"))
    return out


def nvcc_path():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    cand = os.path.join(home, "bin", "nvcc")
    return (cand if os.access(cand, os.X_OK) else shutil.which("nvcc")), home


def build_cmd():
    nvcc, home = nvcc_path()
    src = os.path.join(HERE, "cuda_peer.cu")
    # The rpath finds cuBLAS where nvcc found it, with or without ldconfig entries.
    return [nvcc or "nvcc", "-O3", "-std=c++17", "-arch=%s" % ARGS.arch, "-o", ARGS.peer, src, "-lcublas",
            "-Xlinker", "-rpath,%s" % os.path.join(home, "lib64")]


def peer_stale():
    src = os.path.join(HERE, "cuda_peer.cu")
    return not os.access(ARGS.peer, os.X_OK) or os.path.getmtime(ARGS.peer) < os.path.getmtime(src)


def build_peer():
    """Builds the peer when missing or older than its source; returns None, or why it is unusable."""
    if not peer_stale():
        return None
    cmd = build_cmd()
    if not nvcc_path()[0]:
        if os.access(ARGS.peer, os.X_OK):
            log("cuda.py: warning: nvcc not found; using %s, older than bench/cuda_peer.cu" % ARGS.peer)
            return None
        return "nvcc not found (looked in $CUDA_HOME/bin, default /usr/local/cuda/bin, and PATH)"
    os.makedirs(os.path.dirname(os.path.abspath(ARGS.peer)), exist_ok=True)
    log("building %s: %s" % (os.path.relpath(ARGS.peer, ROOT), cmdline(cmd)))
    try:
        run_cmd(cmd, "nvcc")
    except Failed as e:
        return str(e)
    return None


# --- comparing outputs --------------------------------------------------------------

def compare(got, ref):
    """(ok, max abs diff, max rel diff, note), the rule of bench/run.py: a value
    agrees when |x - y| <= 1e-5 * max(1, max|y|) + 1e-4 * |y| (f32 sums of
    hundreds of terms round differently in each program)."""
    import numpy as np
    worst_abs, worst_rel, ok, notes = 0.0, 0.0, True, []
    for name, y in ref.items():
        x = got.get(name)
        if x is None or x.shape != y.shape:
            notes.append("%s: shape %s vs %s" % (name, None if x is None else x.shape, y.shape))
            ok = False
            continue
        if x.size == 0:
            continue
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities are handled just here
            diff = np.where((np.isnan(xd) & np.isnan(yd)) | (np.isinf(xd) & (xd == yd)), 0.0, np.abs(xd - yd))
        diff = np.nan_to_num(diff, nan=np.inf)
        scale = float(np.max(np.abs(np.where(np.isfinite(yd), yd, 0.0))))
        d = float(diff.max())
        worst_abs = max(worst_abs, d)
        worst_rel = max(worst_rel, d / scale if scale > 0 else (0.0 if d == 0 else float("inf")))
        bad = diff > 1e-5 * max(scale, 1.0) + 1e-4 * np.abs(np.nan_to_num(yd))
        if bad.any():
            i = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), y.shape)
            notes.append("%s: %d of %d values differ, worst at %s: %r vs %r"
                         % (name, int(bad.sum()), y.size, list(i), float(x[i]), float(y[i])))
            ok = False
    return ok, worst_abs, worst_rel, "; ".join(notes)


def load_outputs(outdir, names):
    import numpy as np
    safe = lambda t: "".join(c if c.isalnum() and c.isascii() or c in "._-" else "_" for c in t)  # noqa: E731
    return {t: np.load(os.path.join(outdir, safe(t) + ".npy")) for t in names}


# --- the groups ---------------------------------------------------------------------

def row(group, name, **kw):
    r = {"group": group, "name": name, "ftrun_ms": None, "ftrun_rate": "", "peer": "", "peer_ms": None,
         "peer_rate": "", "ratio": None, "target": "", "met": None, "check": "", "error": ""}
    r.update(kw)
    return r


def group_bandwidth(tmp, notes, peer_err):
    rows = []
    copy, copy_err = None, peer_err
    if not copy_err:
        log("cudaMemcpy D2D of %d MiB ..." % (BW_BYTES // MIB))
        try:
            copy = run_peer(["copy", BW_BYTES, ARGS.n])
        except Failed as e:
            copy_err = str(e)
    if copy_err and not peer_err:
        PEER_FAILURES.append("cudaMemcpy copy: %s" % copy_err)
    for name, g, nbytes, what in bandwidth_cases():
        label = "%s %d MiB f32" % (name, BW_BYTES // MIB)
        r = row("bandwidth", label, peer="cudaMemcpy D2D", target=">= %.2f" % TARGET_BW,
                about="%s, inputs f32 [%d, %d] uniform(-1, 1); %d MiB read + written"
                % (what, BW_ROWS, BW_COLS, nbytes // MIB))
        if copy:
            r["peer_ms"], r["peer_rate"] = copy["median_ms"], "%.0f GB/s" % copy["gbytes_per_s"]
        log("%s ..." % label)
        path = write_graph(tmp, g)
        try:
            t = run_ftrun(ftrun_cmd(path, os.path.join(tmp, "out-" + g["name"])), label, notes)
            ms = float(t["run_ms"]["median"])
            gbps = nbytes / (ms * 1e6)
            r["ftrun_ms"], r["ftrun_rate"] = ms, "%.0f GB/s" % gbps
            if copy:
                r["ratio"] = gbps / copy["gbytes_per_s"]
                r["met"] = r["ratio"] >= TARGET_BW
        except Failed as e:
            r["error"] = str(e)
        rows.append(r)
    return rows


def group_matmul(tmp, notes, peer_err):
    rows = []
    flops = 2.0 * MM * MM * MM
    for name, g, dtype, tf32 in matmul_cases():
        label = "%s %d^3" % (name, MM)
        r = row("matmul", label, peer="cuBLAS GemmEx%s" % (" TF32" if tf32 else ""), target="<= %.2f" % TARGET_MM,
                about="C = A B, A and B %s [%d, %d] uniform(-1, 1)%s" % (dtype, MM, MM,
                                                                         ", --allow-tf32" if tf32 else ""))
        log("%s ..." % label)
        peer = None
        if not peer_err:
            try:
                peer = run_peer(["gemm", dtype, MM, MM, MM, ARGS.n] + (["tf32"] if tf32 else []))
                r["peer_ms"], r["peer_rate"] = peer["median_ms"], "%.1f TFLOP/s" % peer["tflops"]
            except Failed as e:
                PEER_FAILURES.append("%s: cuBLAS: %s" % (label, e))
        path = write_graph(tmp, g)
        try:
            t = run_ftrun(ftrun_cmd(path, os.path.join(tmp, "out-%s%s" % (g["name"], "-tf32" if tf32 else "")),
                                    extra=["--allow-tf32"] if tf32 else []), label, notes)
            ms = float(t["run_ms"]["median"])
            r["ftrun_ms"], r["ftrun_rate"] = ms, "%.1f TFLOP/s" % (flops / (ms * 1e9))
            if peer:
                r["ratio"] = ms / peer["median_ms"]
                r["met"] = r["ratio"] <= TARGET_MM
        except Failed as e:
            r["error"] = str(e)
        rows.append(r)
    return rows


def torch_eager(path, notes):
    """((median ms, min ms), {output: ndarray}) of PyTorch eager on cuda:0, or
    None with the reason in notes."""
    try:
        import torch
    except Exception as e:  # any import failure means: no PyTorch peer
        notes.append("transformer: PyTorch row skipped: torch is not importable (%s: %s)" % (type(e).__name__, e))
        return None
    if not torch.cuda.is_available():
        notes.append("transformer: PyTorch row skipped: torch %s has no usable CUDA device "
                     "(torch.cuda.is_available() is False; a CPU-only build such as Debian's python3-torch)"
                     % torch.__version__)
        return None
    # f32 products in full f32, as ftrun does without --allow-tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        import torchgraph
        tg = torchgraph.TorchGraph.load(path, device="cuda")
        vals = tg.values()
        for _ in range(ARGS.w):
            tg.run(vals)
        torch.cuda.synchronize()
        times = []
        for _ in range(ARGS.n):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            tg.run(vals)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        outs = {k: torchgraph.to_numpy(v) for k, v in tg.run(vals).items()}
    except Exception as e:  # a PyTorch failure costs its row, not the run
        notes.append("transformer: PyTorch failed: %s: %s" % (type(e).__name__, e))
        log("  PyTorch failed: %s: %s" % (type(e).__name__, e))
        return None
    return (statistics.median(times), min(times)), outs, "PyTorch %s eager" % torch.__version__


def group_transformer(tmp, notes):
    rows = []
    with open(TRANSFORMER) as f:
        outputs = json.load(f)["outputs"]
    log("transformer_block: PyTorch eager ...")
    te = torch_eager(TRANSFORMER, notes)
    ref, ref_name = (te[1], "PyTorch CUDA") if te else (None, "")
    if ref is None:
        log("transformer_block: ftrun -d cpu (the reference outputs without PyTorch) ...")
        out = os.path.join(tmp, "out-tb-cpu")
        try:
            run_cmd(ftrun_cmd(TRANSFORMER, out, fmt="npy", device="cpu", w=0, n=1) + ["-q"], "ftrun -d cpu")
            ref, ref_name = load_outputs(out, outputs), "ftrun -d cpu"
        except (Failed, OSError, ValueError) as e:
            notes.append("transformer: no reference outputs: %s" % e)
    peer_name = te[2] if te else "PyTorch eager (skipped)"
    for label, extra in (("transformer_block", []), ("transformer_block --cuda-graph", ["--cuda-graph"])):
        r = row("transformer", label, peer=peer_name, target="-",
                about="graphs/transformer_block.json: batch 4, seq 128, d_model 256, 4 heads, MLP 1024")
        if te:
            r["peer_ms"] = te[0][0]
        log("%s ..." % label)
        out = os.path.join(tmp, "out-tb%s" % ("-graph" if extra else ""))
        try:
            t = run_ftrun(ftrun_cmd(TRANSFORMER, out, fmt="npy", extra=extra), label, notes)
            r["ftrun_ms"] = float(t["run_ms"]["median"])
            if te:
                r["ratio"] = r["ftrun_ms"] / te[0][0]
            if ref is not None:
                ok, ab, rel, why = compare(load_outputs(out, outputs), ref)
                r["check"] = "%s (rel %.1e vs %s)" % ("agree" if ok else "DISAGREE", rel, ref_name)
                notes.append("%s vs %s: max abs diff %.3g, max rel diff %.3g: %s%s"
                             % (label, ref_name, ab, rel, "agree" if ok else "DISAGREE",
                                (" (%s)" % why) if why else ""))
                if not ok:
                    r["error"] = "outputs disagree with %s" % ref_name
        except Failed as e:
            r["error"] = str(e)
        except (OSError, ValueError) as e:
            r["error"] = "ftrun's outputs are unreadable: %s" % e
        rows.append(r)
    if te:
        notes.append("transformer: PyTorch time: median %.3f ms, fastest %.3f ms, wall clock around each run with "
                     "torch.cuda.synchronize() (includes Python and per-op dispatch, as eager code does)"
                     % te[0])
    return rows


# --- reporting ----------------------------------------------------------------------

def fmt_ms(v):
    return "-" if v is None else "%.3f" % v


def table_cells(r):
    met = "-" if r["met"] is None else ("yes" if r["met"] else "NO")
    ftrun = "FAILED" if r["error"] and r["ftrun_ms"] is None else fmt_ms(r["ftrun_ms"])
    return [r["name"], ftrun, r["ftrun_rate"] or "-", r["peer"], fmt_ms(r["peer_ms"]), r["peer_rate"] or "-",
            "-" if r["ratio"] is None else "%.2f" % r["ratio"], r["target"] or "-", met, r["check"] or "-"]


HEAD = ["benchmark", "ftrun ms", "ftrun rate", "peer", "peer ms", "peer rate", "ratio", "target", "met", "outputs"]


def table(rows, markdown):
    body = [table_cells(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(HEAD) + " |",
                 "|" + "|".join("---" if h in ("benchmark", "peer", "outputs") else "---:" for h in HEAD) + "|"]
        return "\n".join(lines + ["| " + " | ".join(b) + " |" for b in body])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(HEAD)]
    line = lambda cells: "  ".join(c.ljust(w) if i in (0, 3, 9) else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(HEAD)] + [line(b) for b in body])


def devices_info():
    """(GPU line of `ftrun devices` or None, CUDA backend line or '', full output)."""
    try:
        r = subprocess.run([ARGS.ftrun, "devices"], capture_output=True, text=True, timeout=ARGS.timeout)
        out = r.stdout + r.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return None, "", "ftrun devices: %s" % e
    gpu = next((line.split(None, 1)[1].strip() for line in out.splitlines() if line.startswith("cuda:0")), None)
    backend = next((line.split("CUDA backend:", 1)[1].strip() for line in out.splitlines() if "CUDA backend:" in line),
                   "")
    return gpu, backend, out.strip()


def nvidia_smi():
    exe = shutil.which("nvidia-smi")
    if not exe:
        return ""
    try:
        r = subprocess.run([exe, "--query-gpu=name,driver_version,clocks.max.sm,power.limit", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def git_commit():
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def version_of(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def results_md(rows, notes, ctx):
    lines = [
        "# ftrun CUDA benchmark results",
        "",
        "Written by `bench/cuda.py` (see bench/README.md): ftrun `-d cuda` against cudaMemcpy and cuBLAS "
        "(bench/cuda_peer.cu) and PyTorch eager (bench/torchgraph.py), on one GPU in one run. ftrun's time is "
        "`run_ms.median` of timing.json (CUDA events around each whole run, uploads and downloads excluded); "
        "the peers' are medians of CUDA-event times (cuda_peer) or of wall-clock times with "
        "torch.cuda.synchronize() around each run (PyTorch).",
        "",
        "- ratio, bandwidth rows: ftrun's effective bandwidth (bytes read + written / median time) over "
        "cudaMemcpy's (2 x bytes copied / median time); target >= %.2f." % TARGET_BW,
        "- ratio, matmul rows: ftrun's median time over cuBLAS's; target <= %.2f (within 5%%)." % TARGET_MM,
        "- ratio, transformer rows: ftrun's median time over PyTorch eager's (below 1: ftrun is faster); "
        "no target, and the outputs are checked.",
        "",
        "- GPU: %s" % ctx["gpu"],
        "- driver / CUDA runtime / cuBLAS (cuda_peer info): %s" % ctx["versions"],
    ]
    if ctx["smi"]:
        lines.append("- nvidia-smi (name, driver, max SM clock, power limit): %s" % ctx["smi"])
    lines += [
        "- ftrun CUDA backend: %s" % (ctx["backend"] or "unknown"),
        "- date: %s" % ctx["date"],
        "- commit: %s (%s), Python %s, %s" % (ctx["commit"], ctx["ftrun_version"], platform.python_version(),
                                              ctx["torch"]),
        "- runs: %d warm-ups then %d timed runs for every program%s; bench/cuda.py took %.0f s"
        % (ARGS.w, ARGS.n, " (--quick: a smoke run, not for quoting)" if ARGS.quick else "", ctx["seconds"]),
        "- command: `%s`" % ctx["argv"],
        "",
        table(rows, markdown=True),
        "",
        "What each row runs:",
        "",
    ]
    lines += ["- %s: %s" % (r["name"], r["about"]) for r in rows]
    lines += ["", "Notes:", ""] + ["- " + n for n in notes] + ["- %s: FAILED: %s" % (r["name"], r["error"])
                                                             for r in rows if r["error"]]
    summary = ctx["summary"]
    lines += ["", summary, ""]
    return "\n".join(lines)


# --- dry run ------------------------------------------------------------------------

def dry_run(tmp):
    """No GPU: writes the graphs, prints every command a real run would make,
    and checks each graph with ftrun on the CPU (load, validate, infer, plan)."""
    bad = 0
    if peer_stale():
        print("# would build the peer:\n%s" % cmdline(build_cmd()))
    else:
        print("# peer up to date: %s" % os.path.relpath(ARGS.peer, ROOT))
    graphs = []
    if "bandwidth" in ARGS.only:
        print("\n# bandwidth (peer: %d MiB device-to-device copy)" % (BW_BYTES // MIB))
        print(cmdline(peer_cmd("copy", BW_BYTES, ARGS.n)))
        for name, g, nbytes, what in bandwidth_cases():
            path = write_graph(tmp, g)
            graphs.append(path)
            print("%s  # %s, %d MiB moved" % (cmdline(ftrun_cmd(path, os.path.join(tmp, "out-" + g["name"]))),
                                              what, nbytes // MIB))
    if "matmul" in ARGS.only:
        print("\n# matmul")
        for name, g, dtype, tf32 in matmul_cases():
            path = write_graph(tmp, g)
            if path not in graphs:
                graphs.append(path)
            print(cmdline(peer_cmd("gemm", dtype, MM, MM, MM, ARGS.n, *(["tf32"] if tf32 else []))))
            print(cmdline(ftrun_cmd(path, os.path.join(tmp, "out-%s%s" % (g["name"], "-tf32" if tf32 else "")),
                                    extra=["--allow-tf32"] if tf32 else [])))
    if "transformer" in ARGS.only:
        print("\n# transformer")
        graphs.append(TRANSFORMER)
        for extra in ([], ["--cuda-graph"]):
            print(cmdline(ftrun_cmd(TRANSFORMER, os.path.join(tmp, "out-tb%s" % ("-graph" if extra else "")),
                                    fmt="npy", extra=extra)))
        try:
            import torch
            have = "torch %s, torch.cuda.is_available() = %s" % (torch.__version__, torch.cuda.is_available())
        except Exception as e:  # reported, as a real run would
            have = "torch not importable: %s" % e
        print("# PyTorch eager: TorchGraph.load(%r, device='cuda'), %d warm-ups, %d timed runs (%s)"
              % (os.path.relpath(TRANSFORMER, ROOT), ARGS.w, ARGS.n, have))
    print("\n# checking the graphs with `ftrun G --dry-run -d cpu`")
    for path in graphs:
        cmd = [ARGS.ftrun, path, "--dry-run", "-d", "cpu"]
        try:
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=ARGS.timeout)
            ok, msg = r.returncode == 0, (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        except (OSError, subprocess.SubprocessError) as e:
            ok, msg = False, str(e)
        bad += not ok
        print("%s %s: %s" % ("ok  " if ok else "FAIL", cmdline(cmd), msg))
    if ARGS.keep:
        print("graphs in %s" % tmp)
    return 1 if bad else 0


# --- main ---------------------------------------------------------------------------

def main():
    global ARGS
    ARGS = parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    ARGS.ftrun, ARGS.peer = os.path.abspath(ARGS.ftrun), os.path.abspath(ARGS.peer)
    if not os.access(ARGS.ftrun, os.X_OK):
        sys.exit("cuda.py: %s not found: build it with `make`" % ARGS.ftrun)
    keep = ARGS.keep
    if keep:
        os.makedirs(keep, exist_ok=True)
        tmp_ctx = None
        tmp = os.path.abspath(keep)
    else:
        tmp_ctx = tempfile.TemporaryDirectory(prefix="ftrun-cuda-bench-")
        tmp = tmp_ctx.name
    try:
        if ARGS.dry_run:
            return dry_run(tmp)
        return real_run(tmp)
    finally:
        if tmp_ctx:
            tmp_ctx.cleanup()


def real_run(tmp):
    t0 = time.time()
    notes = []
    peer_err = build_peer()
    if peer_err:
        log("cuda.py: the peer is unusable, its columns stay empty: %s" % peer_err)
    info, versions = None, "unknown"
    if not peer_err:
        try:
            info = run_peer(["info"])
            versions = "driver %s, runtime %s, cuBLAS %s" % (info.get("driver"), info.get("runtime"),
                                                             info.get("cublas"))
        except Failed as e:
            peer_err = "cuda_peer info: %s" % e
            log("cuda.py: %s" % peer_err)
    gpu, backend, devices = devices_info()
    if not gpu and not info:
        log("cuda.py: no usable CUDA device: `ftrun devices` lists no cuda:0 and cuda_peer cannot run.\n"
            "ftrun devices says:\n%s" % devices)
        return 1
    if not gpu:
        notes.append("`ftrun devices` lists no cuda:0 (%s); every ftrun row will fail"
                     % " / ".join(devices.splitlines()))
        gpu = "%s (from cuda_peer; ftrun sees no CUDA device)" % info.get("name")
    else:
        gpu = "cuda:0 " + gpu
    if backend and "(loaded)" not in backend:
        log("cuda.py: warning: ftrun's CUDA backend: %s" % backend)
        notes.append("ftrun's CUDA backend: %s" % backend)
    log("GPU: %s; %s" % (gpu, versions))
    if peer_err:
        notes.append("cuda_peer unusable: %s" % peer_err)

    rows = []
    if "bandwidth" in ARGS.only:
        rows += group_bandwidth(tmp, notes, peer_err)
    if "matmul" in ARGS.only:
        rows += group_matmul(tmp, notes, peer_err)
    if "transformer" in ARGS.only:
        rows += group_transformer(tmp, notes)

    judged = [r for r in rows if r["met"] is not None]
    failed = [r for r in rows if r["error"]]
    notes += ["peer failed: %s" % f for f in PEER_FAILURES]
    summary = "targets met: %d of %d measured rows%s%s" % (
        sum(1 for r in judged if r["met"]), len(judged),
        "; not met: " + ", ".join(r["name"] for r in judged if not r["met"]) if any(not r["met"] for r in judged)
        else "", "; FAILED: " + ", ".join(r["name"] for r in failed) if failed else "")

    print("%s; %s; W=%d N=%d%s" % (gpu, versions, ARGS.w, ARGS.n, " (quick)" if ARGS.quick else ""))
    print(table(rows, markdown=False))
    for n in notes + ["%s: FAILED: %s" % (r["name"], r["error"]) for r in failed]:
        print("  " + n)
    print(summary)
    if not ARGS.no_results:
        try:
            import torch
            torch_v = "PyTorch %s" % torch.__version__
        except Exception:  # only a version string for the results
            torch_v = "no PyTorch"
        ctx = {"gpu": gpu, "versions": versions, "smi": nvidia_smi(), "backend": backend,
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "commit": git_commit(), "ftrun_version": version_of([ARGS.ftrun, "--version"]), "torch": torch_v,
               "seconds": time.time() - t0, "argv": " ".join(["bench/cuda.py"] + sys.argv[1:]), "summary": summary}
        text = results_md(rows, notes, ctx)
        path = ARGS.results + ".tmp"
        with open(path, "w") as f:
            f.write(text)
        os.replace(path, ARGS.results)
        print("wrote %s" % os.path.relpath(ARGS.results))
    return 1 if failed or PEER_FAILURES or peer_err else 0


if __name__ == "__main__":
    sys.exit(main())
