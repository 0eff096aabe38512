#!/usr/bin/python3
"""Times ftrun's conv against PyTorch's CPU conv (torch.nn.functional.conv2d).

    /usr/bin/python3 bench/conv.py [--threads N ...] [--ftrun build/ftrun] [-w 5] [-n 50]

Default case: conv2d 3x3, input 1x64x56x56 f32, 64 output channels, pad 1, bias.
For each thread count, in one run: ftrun runs a one-node graph with
`-w W -n N --threads T -q` and its time is run_ms.median from timing.json;
PyTorch runs the same convolution with torch.set_num_threads(T), median of N
timed calls after W warm-ups. Both outputs are compared (f32 sums of 576
terms round differently: |x - y| <= 1e-4 * max|y|), then the ratio of the
medians ftrun / torch is printed (below 1: ftrun is faster), and the ratio of
the fastest runs, which other load on the machine disturbs less.
Exit status: 0 when every run worked and agreed, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("-w", "--warmup", type=int, default=5)
    p.add_argument("-n", "--iterations", type=int, default=50)
    p.add_argument("--shape", default="1,64,56,56", help="input N,C,H,W")
    p.add_argument("--out-channels", type=int, default=64)
    p.add_argument("--kernel", type=int, default=3)
    p.add_argument("--pad", type=int, default=1)
    p.add_argument("--stride", type=int, default=1)
    return p.parse_args()


def write_graph(d, x, w, b, pad, stride):
    for name, v in (("x", x), ("w", w), ("b", b)):
        np.save(os.path.join(d, name + ".npy"), v)
    g = {"ftrun": 1, "name": "conv_bench",
         "tensors": {n: {"dtype": "f32", "shape": list(v.shape), "file": n + ".npy"}
                     for n, v in (("x", x), ("w", w), ("b", b))},
         "inputs": ["x"], "outputs": ["y"],
         "nodes": [{"name": "conv", "op": "conv", "inputs": ["x", "w", "b"], "outputs": ["y"],
                    "attrs": {"pads": [pad] * 4, "strides": [stride] * 2}}]}
    path = os.path.join(d, "graph.json")
    with open(path, "w") as f:
        json.dump(g, f)
    return path


def time_ftrun(args, graph, out_dir, threads):
    cmd = [args.ftrun, graph, "-o", out_dir, "-q", "-w", str(args.warmup), "-n", str(args.iterations),
           "--threads", str(threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    with open(os.path.join(out_dir, "timing.json")) as f:
        t = json.load(f)["run_ms"]
    return t["median"], t["min"], np.load(os.path.join(out_dir, "y.npy"))


def time_torch(args, x, w, b, threads):
    torch.set_num_threads(threads)
    X, W, B = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    with torch.no_grad():
        for _ in range(args.warmup):
            y = F.conv2d(X, W, B, stride=args.stride, padding=args.pad)
        times = []
        for _ in range(args.iterations):
            t0 = time.perf_counter()
            y = F.conv2d(X, W, B, stride=args.stride, padding=args.pad)
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times)), float(np.min(times)), y.numpy()


def blas_core():
    """The kernel set OpenBLAS picks on this machine (it decides ftrun's gemm speed;
    OPENBLAS_CORETYPE overrides its CPU detection). Asked in a child process so
    that this one does not start OpenBLAS's threads."""
    code = ("import ctypes, ctypes.util\n"
            "lib = ctypes.CDLL(ctypes.util.find_library('openblas') or 'libopenblas.so.0')\n"
            "lib.openblas_get_corename.restype = ctypes.c_char_p\n"
            "print(lib.openblas_get_corename().decode())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def main():
    args = parse_args()
    if not os.access(args.ftrun, os.X_OK):
        sys.exit("conv.py: %s not found: build it with `make`" % args.ftrun)
    shape = tuple(int(s) for s in args.shape.split(","))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((args.out_channels, shape[1], args.kernel, args.kernel))
         / np.sqrt(shape[1] * args.kernel ** 2)).astype(np.float32)
    b = rng.standard_normal(args.out_channels).astype(np.float32)
    flops = None
    ok = True
    rows = []
    with tempfile.TemporaryDirectory(prefix="ftrun-conv-bench-") as tmp:
        graph = write_graph(tmp, x, w, b, args.pad, args.stride)
        for t in args.threads:
            out_dir = os.path.join(tmp, "out%d" % t)
            try:
                f_ms, f_min, fy = time_ftrun(args, graph, out_dir, t)
            except RuntimeError as e:
                print("threads %d: %s" % (t, e))
                ok = False
                continue
            t_ms, t_min, ty = time_torch(args, x, w, b, t)
            flops = 2.0 * ty.size * shape[1] * args.kernel ** 2
            diff = float(np.max(np.abs(fy.astype(np.float64) - ty))) if ty.size else 0.0
            agree = fy.shape == ty.shape and diff <= 1e-4 * max(1.0, float(np.max(np.abs(ty))))
            ok &= agree
            rows.append((t, f_ms, t_ms, f_min, t_min, diff, agree))
    print("conv2d x=%s w=%dx%dx%dx%d pad=%d stride=%d f32, %d warm-up + %d timed runs, medians"
          % ("x".join(map(str, shape)), args.out_channels, shape[1], args.kernel, args.kernel, args.pad,
             args.stride, args.warmup, args.iterations))
    print("OpenBLAS core: %s%s" % (blas_core(), " (OPENBLAS_CORETYPE=%s)" % os.environ["OPENBLAS_CORETYPE"]
                                    if os.environ.get("OPENBLAS_CORETYPE") else ""))
    print("%7s %10s %10s %8s %10s %10s %9s %12s  %s" % ("threads", "ftrun ms", "torch ms", "ratio", "ftrun GF/s",
                                                       "torch GF/s", "min ratio", "max abs diff", "agree"))
    for t, f_ms, t_ms, f_min, t_min, diff, agree in rows:
        print("%7d %10.3f %10.3f %8.2f %10.1f %10.1f %9.2f %12.3g  %s" % (
            t, f_ms, t_ms, f_ms / t_ms, flops / f_ms / 1e6, flops / t_ms / 1e6, f_min / t_min, diff,
            "yes" if agree else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
