#!/usr/bin/python3
"""int8 against f32 matrix products on the CPU, in one run: for each size, a
one-node matmul_integer graph (i8 x i8 -> i32, zero points 0) and a one-node
f32 matmul graph of the same shape (OpenBLAS sgemm), each timed by ftrun
(`run_ms.median` of timing.json, -w 3 -n 20), and the ratio int8 / f32
(below 1: the integer kernel is faster). The integer kernel's results are
checked against NumPy's int64 product first, so both timings are of correct
work.

  /usr/bin/python3 bench/quant.py [--threads N] [--ftrun PATH] [SIZE ...]

SIZE is M,K,N (default: 64,256,64 256,1024,256 512,2048,512)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def graph(op, dt, m, k, n, seed):
    lo, hi = (-128, 128) if dt == "i8" else (-1.0, 1.0)
    t = {"a": {"dtype": dt, "shape": [m, k], "init": {"uniform": {"low": lo, "high": hi}, "seed": seed}},
         "b": {"dtype": dt, "shape": [k, n], "init": {"uniform": {"low": lo, "high": hi}, "seed": seed + 1}}}
    return {"ftrun": 1, "name": "bench %s" % op, "tensors": t, "inputs": [], "outputs": ["y"],
            "nodes": [{"name": "mm", "op": op, "inputs": ["a", "b"], "outputs": ["y"]}]}


def run(ftrun, g, tmp, name, threads):
    path = os.path.join(tmp, name + ".json")
    out = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(g, f)
    cmd = [ftrun, "run", path, "-o", out, "-q", "-d", "cpu", "-w", "3", "-n", "20"]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "timing.json")) as f:
        return json.load(f)["run_ms"]["median"], out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    ap.add_argument("sizes", nargs="*", default=["64,256,64", "256,1024,256", "512,2048,512"])
    a = ap.parse_args()
    print("| M,K,N | int8 matmul_integer ms | f32 matmul ms | int8 / f32 |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="ftq-") as tmp:
        for s in a.sizes:
            m, k, n = (int(v) for v in s.split(","))
            ti, _ = run(a.ftrun, graph("matmul_integer", "i8", m, k, n, 7), tmp, "int_%s" % s.replace(",", "_"),
                          a.threads)
            # the check: ftrun writes its inputs' generated values only through the graph,
            # so they are regenerated here by a second one-node graph that outputs them
            chk = graph("matmul_integer", "i8", m, k, n, 7)
            chk["outputs"] = ["a", "b", "y"]
            _, cout = run(a.ftrun, chk, tmp, "chk_%s" % s.replace(",", "_"), a.threads)
            av, bv, yv = (np.load(os.path.join(cout, x + ".npy")) for x in ("a", "b", "y"))
            want = (av.astype(np.int64) @ bv.astype(np.int64)).astype(np.int32)
            if not np.array_equal(yv, want):
                print("matmul_integer %s differs from NumPy" % s, file=sys.stderr)
                return 1
            tf, _ = run(a.ftrun, graph("matmul", "f32", m, k, n, 7), tmp, "f32_%s" % s.replace(",", "_"), a.threads)
            print("| %s | %.3f | %.3f | %.2f |" % (s, ti, tf, ti / tf), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
