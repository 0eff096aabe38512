#!/usr/bin/python3
"""Times ftrun against NumPy on the example graphs in graphs/.

    /usr/bin/python3 bench/examples.py [--threads N] [--ftrun build/ftrun] [GRAPH ...]

For each graph, ftrun runs it with `-q -w 3 -n 20 --threads N` and reports
run_ms.median from timing.json; bench/npgraph.py runs the same graph with
NumPy ops (values prepared once, then 3 untimed and 20 timed runs, median).
The outputs of both are compared so that the two timings are of the same work.
Exit status: 0 when every graph ran and agreed, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name -> {input: .npy file}; graphs whose inputs have an init default need none.
EXAMPLES = {
    "mlp": {},
    "transformer_block": {},
    "stats": {},
    "sensor": {"readings": "graphs/data/sensor.npy"},
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graphs", nargs="*", help="example names (default: all of %s)" % ", ".join(EXAMPLES))
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("-w", "--warmup", type=int, default=3)
    p.add_argument("-n", "--iterations", type=int, default=20)
    return p.parse_args()


ARGS = parse_args()
# NumPy's BLAS reads these when it loads: give it the same threads as ftrun.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)
sys.path.insert(0, HERE)
import blascore  # noqa: E402

# the same BLAS kernels as ftrun picks for itself
BLAS_CORE = blascore.openblas_core()

import numpy as np  # noqa: E402

sys.path.insert(0, HERE)
import npgraph  # noqa: E402


def sanitise(name):
    return "".join(c if c.isalnum() and c.isascii() or c in "._-" else "_" for c in name)


def time_ftrun(graph, feeds, out_dir):
    cmd = [ARGS.ftrun, graph, "-o", out_dir, "-q", "-w", str(ARGS.warmup),
           "-n", str(ARGS.iterations), "--threads", str(ARGS.threads)]
    for name, path in feeds.items():
        cmd += ["-i", "%s=%s" % (name, path)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    with open(os.path.join(out_dir, "timing.json")) as f:
        return json.load(f)["run_ms"]["median"]


def time_numpy(g, vals):
    for _ in range(ARGS.warmup):
        g.run(vals)
    times = []
    for _ in range(ARGS.iterations):
        t0 = time.perf_counter()
        outs = g.run(vals)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), outs


def compare(g, out_dir, ref):
    """Largest absolute difference over all outputs, and whether every output
    is within |x - y| <= atol + rtol * |y| with f32-level tolerances scaled to
    the output's magnitude (sums over 10^4 terms round differently in f32)."""
    worst, ok = 0.0, True
    for name, y in ref.items():
        x = np.load(os.path.join(out_dir, sanitise(name) + ".npy"))
        if x.shape != y.shape or x.dtype != y.dtype:
            print("  %s/%s: ftrun gives %s %s, numpy %s %s" % (g.name, name, x.dtype, x.shape, y.dtype, y.shape))
            ok = False
            continue
        if x.size == 0:
            continue
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        both_nan = np.isnan(xd) & np.isnan(yd)
        diff = np.where(both_nan, 0.0, np.abs(xd - yd))
        diff = np.nan_to_num(diff, nan=np.inf)
        worst = max(worst, float(diff.max()))
        if y.dtype.kind == "f":
            scale = float(np.nanmax(np.abs(yd))) if np.isfinite(yd).any() else 1.0
            bad = diff > 1e-5 * max(scale, 1.0) + 1e-4 * np.abs(yd)
        else:
            bad = diff != 0
        if bad.any():
            i = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), y.shape)
            print("  %s/%s: %d of %d values differ; worst at %s: ftrun %r, numpy %r"
                  % (g.name, name, int(bad.sum()), y.size, list(i), x[i], y[i]))
            ok = False
    return worst, ok


def main():
    names = ARGS.graphs or list(EXAMPLES)
    if not os.access(ARGS.ftrun, os.X_OK):
        sys.exit("examples.py: %s not found: build it with `make`" % ARGS.ftrun)
    rows, all_ok = [], True
    for name in names:
        if name not in EXAMPLES:
            sys.exit("examples.py: unknown example '%s' (have: %s)" % (name, ", ".join(EXAMPLES)))
        graph = os.path.join("graphs", name + ".json")
        feeds = EXAMPLES[name]
        g = npgraph.Graph.load(os.path.join(ROOT, graph))
        vals = g.values({k: np.load(os.path.join(ROOT, v)) for k, v in feeds.items()})
        with tempfile.TemporaryDirectory(prefix="ftrun-bench-") as tmp:
            try:
                f_ms = time_ftrun(graph, feeds, tmp)
            except RuntimeError as e:
                print("  %s: %s" % (name, e))
                rows.append((name, None, None, None, None, False))
                all_ok = False
                continue
            n_ms, ref = time_numpy(g, vals)
            diff, ok = compare(g, tmp, ref)
        all_ok &= ok
        rows.append((name, f_ms, n_ms, f_ms / n_ms if n_ms > 0 else float("inf"), diff, ok))

    print("threads %d, %d warm-up + %d timed runs, medians; %s" % (ARGS.threads, ARGS.warmup, ARGS.iterations, BLAS_CORE))
    print("%-18s %12s %12s %8s %14s  %s" % ("graph", "ftrun ms", "numpy ms", "ratio", "max abs diff", "agree"))
    for name, f_ms, n_ms, ratio, diff, ok in rows:
        if f_ms is None:
            print("%-18s %12s %12s %8s %14s  %s" % (name, "failed", "-", "-", "-", "no"))
        else:
            print("%-18s %12.3f %12.3f %8.2f %14.3g  %s" % (name, f_ms, n_ms, ratio, diff, "yes" if ok else "NO"))
    print("ratio = ftrun / numpy (below 1: ftrun is faster)")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
