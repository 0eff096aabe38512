#!/usr/bin/python3
"""Load-time benchmarks of ftrun's graph files.

  /usr/bin/python3 bench/load.py                  # all three, 1 GiB of weights
  /usr/bin/python3 bench/load.py mmap --gib 2     # only the first, 2 GiB
  /usr/bin/python3 bench/load.py json compress

mmap      a graph with GIB of f32 weights (a chain of matmuls through 64 MiB
          matrices) packed as an uncompressed .ftg, page cache warm:
          ftrun's load-to-ready time (timing.json "load_ms": map, CRC-32 of
          every blob, parse, validate) against `cat FILE > /dev/null`, and the
          wall time of `ftrun FILE --dry-run` against that of cat. Target:
          load_ms <= 1.5 x cat. For reference, the same graph as JSON with
          .npy weight files (read and copied).
json      a JSON graph of NODES nodes (blocks of matmul, add, relu, mul,
          reshape, transpose, softmax, residual add, tanh over [8, 32]
          activations): parse + validate time ("loaded ... in X ms" of
          `ftrun --dry-run -v`). Target: < 200 ms for 10,000 nodes.
compress  `ftrun pack --compress` on typical weights: normal-initialised f32,
          the same rounded to bf16 precision (low 16 bits zero), f16, and a
          realistic mix (f32 matrices, bf16-like matrices, layer-norm scales
          and biases, an f16 embedding, int8 quantised weights, position ids):
          stored/raw ratio, pack time, and load_ms compressed vs raw.

Times are medians of --repeat runs (default 5) after one warm-up run. Files
go to a temporary folder (--dir to choose it, --keep to keep them).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1e3


def median_of(f, n):
    f()  # warm-up: page cache, dynamic loader
    return statistics.median(f() for _ in range(n))


def load_ms(ftrun, graph, out, threads):
    """timing.json load_ms of one run that writes no result file."""
    run([ftrun, graph, "-q", "--format", "none", "-o", out, "--threads", str(threads)])
    with open(os.path.join(out, "timing.json")) as f:
        return json.load(f)["load_ms"]


def save_graph(path, tensors, nodes, outputs, inputs=()):
    with open(path, "w") as f:
        json.dump({"ftrun": 1, "tensors": tensors, "inputs": list(inputs), "outputs": outputs, "nodes": nodes}, f)


def bf16_like(a):
    """f32 rounded to bf16 precision (nearest even), stored as f32."""
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def mib(b):
    return b / 1048576.0


# --- mmap: 1 GiB of weights ---------------------------------------------------

def bench_mmap(a, d):
    n = max(1, round(a.gib * 16))  # 64 MiB matrices
    k = 4096
    rng = np.random.default_rng(0)
    wdir = os.path.join(d, "w")
    os.makedirs(wdir, exist_ok=True)
    tensors = {"x": {"dtype": "f32", "shape": [1, k], "init": {"normal": {"mean": 0, "std": 1}, "seed": 1}}}
    nodes = []
    h = "x"
    for i in range(n):
        w = (rng.standard_normal((k, k), dtype=np.float32) * np.float32(1 / 64)).astype(np.float32)
        np.save(os.path.join(wdir, "w%d.npy" % i), w)
        tensors["w%d" % i] = {"dtype": "f32", "shape": [k, k], "file": "w/w%d.npy" % i}
        nodes.append({"op": "matmul", "inputs": [h, "w%d" % i], "outputs": ["h%d" % i]})
        h = "h%d" % i
    g = os.path.join(d, "big.json")
    save_graph(g, tensors, nodes, [h])
    ftg = os.path.join(d, "big.ftg")
    t = time.perf_counter()
    run([a.ftrun, "pack", g, "-o", ftg, "-q"])
    pack_s = time.perf_counter() - t
    size = os.path.getsize(ftg)
    out = os.path.join(d, "out")
    cat = median_of(lambda: wall(["sh", "-c", 'cat "$0" > /dev/null', ftg]), a.repeat)
    ld = median_of(lambda: load_ms(a.ftrun, ftg, out, a.threads), a.repeat)
    dry = median_of(lambda: wall([a.ftrun, ftg, "--dry-run", "-q"]), a.repeat)
    true_ms = median_of(lambda: wall(["true"]), a.repeat)
    ld_json = median_of(lambda: load_ms(a.ftrun, g, out, a.threads), max(1, a.repeat // 2))
    print("== mmap: %d matrices of f32 [%d, %d], .ftg of %.1f MiB (packed in %.1f s); page cache warm" %
          (n, k, k, mib(size), pack_s))
    print("  cat FILE > /dev/null           %8.1f ms  (wall, %.1f GB/s)" % (cat, size / cat / 1e6))
    print("  ftrun load_ms (timing.json)    %8.1f ms  = %.2f x cat   (target <= 1.5)" % (ld, ld / cat))
    print("  ftrun --dry-run (wall)         %8.1f ms  = %.2f x cat   (process start-up: `true` takes %.1f ms)" %
          (dry, dry / cat, true_ms))
    print("  same graph as JSON + .npy files: load_ms %.1f ms = %.2f x cat (files read and copied)" %
          (ld_json, ld_json / cat))
    return {"bytes": size, "cat_ms": cat, "load_ms": ld, "dry_run_ms": dry, "json_npy_load_ms": ld_json,
            "ratio": ld / cat}


# --- json: 10,000 nodes -------------------------------------------------------

def bench_json(a, d):
    rng = np.random.default_rng(1)
    tensors = {"x": {"dtype": "f32", "shape": [8, 32], "init": {"uniform": {"low": -1, "high": 1}, "seed": 2}}}
    for k in range(10):
        tensors["w%d" % k] = {"dtype": "f32", "shape": [32, 32], "init": {"normal": {"mean": 0, "std": 0.1}, "seed": k}}
        tensors["b%d" % k] = {"dtype": "f32", "shape": [32], "data": [round(float(v), 6) for v in rng.standard_normal(32)]}
        tensors["s%d" % k] = {"dtype": "f32", "shape": [32], "data": [1.0] * 32}
    nodes = []
    h = "x"
    blocks = max(1, a.nodes // 10)
    for i in range(blocks):
        k = i % 10
        p = "l%d_" % i
        nodes += [
            {"name": p + "mm", "op": "matmul", "inputs": [h, "w%d" % k], "outputs": [p + "1"]},
            {"op": "add", "inputs": [p + "1", "b%d" % k], "outputs": [p + "2"]},
            {"op": "relu", "inputs": [p + "2"], "outputs": [p + "3"]},
            {"op": "mul", "inputs": [p + "3", "s%d" % k], "outputs": [p + "4"]},
            {"op": "reshape", "inputs": [p + "4"], "outputs": [p + "5"], "attrs": {"shape": [8, 4, 8]}},
            {"op": "transpose", "inputs": [p + "5"], "outputs": [p + "6"], "attrs": {"perm": [0, 2, 1]}},
            {"op": "reshape", "inputs": [p + "6"], "outputs": [p + "7"], "attrs": {"shape": [8, 32]}},
            {"op": "softmax", "inputs": [p + "7"], "outputs": [p + "8"], "attrs": {"axis": -1}},
            {"op": "add", "inputs": [p + "8", h], "outputs": [p + "9"]},
            {"op": "tanh", "inputs": [p + "9"], "outputs": [p + "h"]},
        ]
        h = p + "h"
    g = os.path.join(d, "nodes.json")
    save_graph(g, tensors, nodes, [h])
    size = os.path.getsize(g)

    def parse():
        r = run([a.ftrun, g, "--dry-run", "-v"])
        m = re.search(r"loaded \d+ nodes, \d+ tensors in ([0-9.]+) ms; plan: .* in ([0-9.]+) ms", r.stderr)
        if not m:
            sys.exit("unexpected ftrun -v output:\n" + r.stderr)
        return float(m.group(1)), float(m.group(2))

    parse()
    runs = [parse() for _ in range(a.repeat)]
    ld = statistics.median(r[0] for r in runs)
    pl = statistics.median(r[1] for r in runs)
    dry = median_of(lambda: wall([a.ftrun, g, "--dry-run", "-q"]), a.repeat)
    print("== json: %d nodes, %d declared tensors, %.1f MiB of JSON" % (len(nodes), len(tensors), mib(size)))
    print("  parse + validate (load)        %8.1f ms  (target < 200)" % ld)
    print("  memory plan                    %8.1f ms" % pl)
    print("  ftrun --dry-run (wall)         %8.1f ms" % dry)
    return {"nodes": len(nodes), "json_bytes": size, "load_ms": ld, "plan_ms": pl, "dry_run_ms": dry}


# --- compress -----------------------------------------------------------------

def weight_sets(total, rng):
    n = total // 4
    f32 = lambda m: (rng.standard_normal(m, dtype=np.float32) * np.float32(0.02))
    sets = {
        "f32 normal": {"w": ("f32", f32(n))},
        "bf16-like f32": {"w": ("f32", bf16_like(f32(n)))},
        "f16 normal": {"w": ("f16", f32(n * 2).astype(np.float16))},
    }
    # a transformer-like mix (by bytes: ~55% f32 matrices, ~25% bf16-like,
    # ~12% f16 embedding, ~7% int8 quantised, the rest small parameters)
    mix = {}
    d = 1024
    per = max(1, int(n * 0.55) // (d * d * 4))
    for i in range(per):
        mix["mlp%d" % i] = ("f32", f32(d * d * 4))
    for i in range(max(1, int(n * 0.25) // (d * d))):
        mix["attn%d" % i] = ("f32", bf16_like(f32(d * d)))
    mix["embed"] = ("f16", f32(int(n * 0.12) * 2).astype(np.float16))
    q = f32(int(n * 0.07) * 4)
    mix["q8"] = ("i8", np.clip(np.round(q / 0.02 * 40), -127, 127).astype(np.int8))
    for i in range(per):
        mix["ln%d_scale" % i] = ("f32", np.ones(d, np.float32))
        mix["ln%d_bias" % i] = ("f32", np.zeros(d, np.float32))
        mix["bias%d" % i] = ("f32", f32(4 * d))
    mix["pos_ids"] = ("i64", np.arange(8192, dtype=np.int64))
    sets["realistic mix"] = mix
    return sets


def bench_compress(a, d):
    rng = np.random.default_rng(2)
    total = int(a.compress_mib * 1048576)
    out = os.path.join(d, "out")
    print("== compress: about %.0f MiB per set; zlib blobs (level 1, run-length or LZ77 by a sample)" % (total / 1048576))
    print("  %-16s %10s %10s %7s %9s %9s %11s %11s" % ("weights", "raw MiB", "zlib MiB", "ratio", "pack raw", "pack -z",
                                                       "load raw", "load zlib"))
    res = {}
    for name, ts in weight_sets(total, rng).items():
        sd = os.path.join(d, "c_" + re.sub(r"\W+", "_", name))
        os.makedirs(sd, exist_ok=True)
        tensors, nodes, outs = {}, [], []
        for tn, (dt, arr) in ts.items():
            f = tn + ".npy"
            np.save(os.path.join(sd, f), arr.astype(np.float32) if dt == "bf16" else arr)
            tensors[tn] = {"dtype": dt, "shape": list(arr.shape), "file": f}
        # one tiny output so that a run does next to nothing
        tensors["one"] = {"dtype": "f32", "shape": [1], "data": [1]}
        nodes.append({"op": "relu", "inputs": ["one"], "outputs": ["y"]})
        g = os.path.join(sd, "g.json")
        save_graph(g, tensors, nodes, ["y"])
        raw, z = os.path.join(sd, "raw.ftg"), os.path.join(sd, "z.ftg")
        t = time.perf_counter()
        run([a.ftrun, "pack", g, "-o", raw, "-q"])
        t_raw = time.perf_counter() - t
        t = time.perf_counter()
        run([a.ftrun, "pack", g, "-o", z, "--compress", "-q"])
        t_z = time.perf_counter() - t
        lr = median_of(lambda: load_ms(a.ftrun, raw, out, a.threads), a.repeat)
        lz = median_of(lambda: load_ms(a.ftrun, z, out, a.threads), max(1, a.repeat // 2))
        sr, sz = os.path.getsize(raw), os.path.getsize(z)
        print("  %-16s %10.1f %10.1f %7.3f %8.1fs %8.1fs %9.1fms %9.1fms" % (name, mib(sr), mib(sz), sz / sr, t_raw, t_z,
                                                                       lr, lz))
        res[name] = {"raw_bytes": sr, "zlib_bytes": sz, "ratio": sz / sr, "pack_raw_s": t_raw, "pack_zlib_s": t_z,
                     "load_raw_ms": lr, "load_zlib_ms": lz}
        if not a.keep:
            shutil.rmtree(sd)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", choices=["mmap", "json", "compress", []], default=[])
    ap.add_argument("--ftrun", default="build/ftrun")
    ap.add_argument("--gib", type=float, default=1.0, help="weights of the mmap graph (default 1)")
    ap.add_argument("--nodes", type=int, default=10000, help="nodes of the json graph (default 10000)")
    ap.add_argument("--compress-mib", type=float, default=256, help="bytes of each compress set (default 256 MiB)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--dir", help="scratch folder (default: a new one under $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--json", help="also write the numbers to this file")
    a = ap.parse_args()
    a.ftrun = os.path.abspath(a.ftrun)
    if not os.access(a.ftrun, os.X_OK):
        sys.exit("no ftrun at %s (run make, or pass --ftrun)" % a.ftrun)
    which = a.which or ["mmap", "json", "compress"]
    d = a.dir or tempfile.mkdtemp(prefix="ftrun-load-")
    os.makedirs(d, exist_ok=True)
    print("ftrun %s, %d CPUs, scratch %s" % (a.ftrun, os.cpu_count() or 0, d))
    res = {}
    try:
        for w in which:
            res[w] = {"mmap": bench_mmap, "json": bench_json, "compress": bench_compress}[w](a, d)
    finally:
        if not a.keep and not a.dir:
            shutil.rmtree(d, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
