#!/usr/bin/python3
"""Where ftrun's time goes on an ONNX model, next to ONNX Runtime's, per op type
and per node.

    /usr/bin/python3 bench/profile.py MODEL.onnx -i NAME=FILE.npy [--threads T] [-w W] [-n N] [--top K]
    /usr/bin/python3 bench/profile.py efficientnet_b0     # a model of bench/onnx_models.py (exported if needed)

Runs `build/ftrun MODEL -i ... --profile -w W -n N --threads T -o TMP` (the
per-node times from TMP/timing.json, "nodes") and `node bench/ort/run.js
MODEL ... --profile TMP/ort.json` (ONNX Runtime's profiler, kernel times per
node in the timed runs), and prints, mean ms per run: the op types of each
side, most first, and the K slowest nodes of each. ONNX Runtime fuses nodes
(Conv with its activation, x * sigmoid(x) into QuickGelu, ...) and ftrun
may too, so the two lists are not node for node: compare the op-type totals.
Both runtimes time their nodes with their profilers on, and the totals of
the kernel times leave out what lies between them.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="an .onnx file, or the name of a model of bench/onnx_models.py")
    p.add_argument("-i", action="append", default=[], metavar="NAME=FILE.npy", help="an input (repeatable)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("-w", type=int, default=2, help="warm-up runs (default %(default)s)")
    p.add_argument("-n", type=int, default=10, help="profiled runs (default %(default)s)")
    p.add_argument("--top", type=int, default=12, help="slowest nodes shown per runtime (default %(default)s)")
    p.add_argument("--ftrun", default=os.path.join(ROOT, "build", "ftrun"))
    return p.parse_args()


def resolve(a):
    """(model path, [NAME=FILE]) for a file or a bench model name."""
    if os.path.exists(a.model):
        return a.model, a.i
    sys.path.insert(0, HERE)
    import onnx_models
    if a.model not in onnx_models.MODELS:
        sys.exit("profile.py: %s is neither a file nor a model of bench/onnx_models.py (%s)"
                 % (a.model, ", ".join(onnx_models.MODELS)))
    m = onnx_models.MODELS[a.model]
    d = onnx_models.export(m, os.path.join(ROOT, "build", "bench-onnx"))
    return os.path.join(d, "model.onnx"), a.i or ["%s=%s" % (m.input_name, os.path.join(d, "input.npy"))]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("profile.py: %s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                   (r.stderr.strip().splitlines() or ["?"])[-1]))
    return r


def ftrun_nodes(a, model, inputs, tmp):
    cmd = [a.ftrun, model, "--profile", "-q", "-w", str(a.w), "-n", str(a.n), "--threads", str(a.threads),
           "-o", os.path.join(tmp, "ftrun")]
    for x in inputs:
        cmd += ["-i", x]
    run(cmd)
    with open(os.path.join(tmp, "ftrun", "timing.json")) as f:
        t = json.load(f)
    grouped = grouped_convs(model)
    return [(n["name"], n["op"] + (" (grouped)" if n["name"] in grouped else ""), n["mean_ms"])
            for n in t["nodes"]], t["run_ms"]["median"]


def grouped_convs(model):
    """Names of the model's Conv nodes with group > 1 (depthwise and the like):
    ftrun's conv nodes keep their ONNX names, so its table can tell them apart."""
    import onnx
    g = onnx.load(model, load_external_data=False).graph
    return {n.name for n in g.node if n.op_type == "Conv" and any(x.name == "group" and x.i > 1 for x in n.attribute)}


def ort_nodes(a, model, inputs, tmp):
    trace = os.path.join(tmp, "ort.json")
    cmd = ["node", os.path.join(HERE, "ort", "run.js"), model, "--threads", str(a.threads), "-w", str(a.w),
           "-n", str(a.n), "--profile", trace]
    for x in inputs:
        cmd += ["-i", x]
    res = json.loads(run(cmd).stdout.strip().splitlines()[-1])
    with open(trace) as f:
        events = json.load(f)
    ends = sorted(e["ts"] + e["dur"] for e in events if e.get("cat") == "Session" and e.get("name") == "model_run")
    start = ends[a.w - 1] if a.w > 0 and len(ends) >= a.w else float("-inf")
    runs = max(1, len(ends) - min(a.w, len(ends)))
    total = collections.defaultdict(float)
    ops = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= start:
            name = e["name"][:-len("_kernel_time")]
            total[name] += e["dur"] / 1e3 / runs
            ops[name] = e.get("args", {}).get("op_name", "?")
    return [(k, ops[k], v) for k, v in total.items()], res["median_ms"]


def show(title, nodes, median, top):
    by_op = collections.defaultdict(lambda: [0.0, 0])
    for _, op, ms in nodes:
        by_op[op][0] += ms
        by_op[op][1] += 1
    s = sum(ms for _, _, ms in nodes)
    print("%s: run median %.3f ms (profiler off), %d nodes, %.3f ms in nodes (profiler on)" % (title, median,
                                                                                              len(nodes), s))
    print("  %-28s %6s %9s %6s" % ("op", "nodes", "ms", "%"))
    for op, (ms, c) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        print("  %-28s %6d %9.3f %6.1f" % (op, c, ms, 100 * ms / s if s else 0))
    print("  slowest nodes:")
    for name, op, ms in sorted(nodes, key=lambda n: -n[2])[:top]:
        print("  %9.3f  %-16s %s" % (ms, op, name))


def main():
    a = parse_args()
    model, inputs = resolve(a)
    with tempfile.TemporaryDirectory(prefix="ftrun-profile-") as tmp:
        fn, fm = ftrun_nodes(a, model, inputs, tmp)
        on, om = ort_nodes(a, model, inputs, tmp)
    print("%s, %d thread%s, W=%d N=%d, load average %s" % (os.path.relpath(model), a.threads,
                                                         "" if a.threads == 1 else "s", a.w, a.n,
                                                         " ".join("%.2f" % x for x in os.getloadavg())))
    show("ftrun", fn, fm, a.top)
    show("ONNX Runtime", on, om, a.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
