#!/usr/bin/python3
"""Times ftrun's rfft (FFTW) against PyTorch's CPU torch.fft.rfft on a batch of real signals.

    /usr/bin/python3 bench/fft.py [--threads 1 2] [--batch 256] [--length 4096] [--ftrun build/ftrun]
                                  [-w 5] [-n 50] [-r 3]

One graph, one rfft node over the last axis of a [batch, length] f32 input.  ftrun runs it
with `-q -w W -n N --threads T` and reports run_ms.median from timing.json (one whole run of
the graph, without loading and planning; FFTW's plan is made in the first warm-up run and
cached).  PyTorch gets the same array (torch.from_numpy), torch.set_num_threads(T), W
untimed and N timed calls of torch.fft.rfft(x, dim=-1), median.  The two are measured
alternately R times (--repeat) and each keeps its smallest median, so that a burst of load
from other processes on the machine does not land on one side only.  Both outputs are checked
against numpy.fft.rfft in float64 with the numeric tests' FFT tolerance
(2 eps |y| + 4 log2(n) eps max|y| along each line, f32 eps) and against each other with
twice that, so that the two timings are of the same work.  Prints one row per thread count
and the ratio ftrun / PyTorch (below 1: ftrun is faster).
Threaded timings need idle cores: on a small machine, another busy process makes each
OpenMP fork/join wait for a scheduler time slice (a few ms), whichever program is timed.
Exit status: 0 when every run agreed, 1 otherwise.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--length", type=int, default=4096)
    p.add_argument("-w", "--warmup", type=int, default=5)
    p.add_argument("-n", "--iterations", type=int, default=50)
    p.add_argument("-r", "--repeat", type=int, default=3)
    return p.parse_args()


ARGS = parse_args()

import numpy as np  # noqa: E402
import torch  # noqa: E402


def time_ftrun(graph, x_path, out_dir, threads):
    cmd = [ARGS.ftrun, graph, "-i", "x=" + x_path, "-o", out_dir, "-q", "-w", str(ARGS.warmup),
           "-n", str(ARGS.iterations), "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    with open(os.path.join(out_dir, "timing.json")) as f:
        ms = json.load(f)["run_ms"]["median"]
    return ms, np.load(os.path.join(out_dir, "y.npy"))


def time_torch(x, threads):
    torch.set_num_threads(threads)
    t = torch.from_numpy(x)
    for _ in range(ARGS.warmup):
        torch.fft.rfft(t, dim=-1)
    times = []
    for _ in range(ARGS.iterations):
        t0 = time.perf_counter()
        y = torch.fft.rfft(t, dim=-1)
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), torch.view_as_real(y).numpy()


def agree(got, ref, scale, c):
    """Largest error as a fraction of the allowed one (<= 1: agrees)."""
    e = float(np.finfo(np.float32).eps)
    lim = 2 * e * np.abs(ref) + c * math.log2(ARGS.length) * e * scale
    return float(np.max(np.abs(got.astype(np.float64) - ref) / lim))


def main():
    shape = (ARGS.batch, ARGS.length)
    x = np.random.default_rng(4096).standard_normal(shape).astype(np.float32)
    ref = np.fft.rfft(x.astype(np.float64), axis=-1)
    scale = np.max(np.abs(ref), axis=-1, keepdims=True)[..., None]
    ref = np.stack([ref.real, ref.imag], axis=-1)
    graph = {"ftrun": 1, "name": "rfft_bench", "tensors": {"x": {"dtype": "f32", "shape": list(shape)}},
             "inputs": ["x"], "outputs": ["y"],
             "nodes": [{"name": "spectrum", "op": "rfft", "inputs": ["x"], "outputs": ["y"]}]}
    ok = True
    print("rfft f32 %s, last axis (%d warm-up, %d timed runs, median; best of %d)" % (
        list(shape), ARGS.warmup, ARGS.iterations, ARGS.repeat))
    print("%-8s %12s %12s %14s  %s" % ("threads", "ftrun ms", "torch ms", "ftrun/torch", "agreement (ftrun, torch, both)"))
    with tempfile.TemporaryDirectory(prefix="ftrun-fft-bench-") as tmp:
        gpath, xpath = os.path.join(tmp, "rfft.json"), os.path.join(tmp, "x.npy")
        with open(gpath, "w") as f:
            json.dump(graph, f)
        np.save(xpath, x)
        for threads in ARGS.threads:
            ft_ms = th_ms = float("inf")
            for _ in range(max(ARGS.repeat, 1)):
                ms, ft_y = time_ftrun(gpath, xpath, os.path.join(tmp, "out%d" % threads), threads)
                ft_ms = min(ft_ms, ms)
                ms, th_y = time_torch(x, threads)
                th_ms = min(th_ms, ms)
            a, b, ab = agree(ft_y, ref, scale, 4), agree(th_y, ref, scale, 4), agree(ft_y, th_y.astype(np.float64),
                                                                                    scale, 8)
            good = ft_y.shape == th_y.shape == ref.shape and max(a, b, ab) <= 1
            ok &= good
            print("%-8d %12.3f %12.3f %14.3f  %.3g %.3g %.3g %s" % (threads, ft_ms, th_ms, ft_ms / th_ms, a, b, ab,
                                                                   "ok" if good else "DISAGREE"))
    print("torch %s, %s" % (torch.__version__, "MKL" if torch.backends.mkl.is_available() else "no MKL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
