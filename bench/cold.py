"""First result and peak memory of one run, as a CI job runs a model: the
cold measures of bench/run.py --onnx (see bench/README.md).

    import cold
    ms, kb = cold.ftrun("build/ftrun", "m.onnx", {"x": "in.npy"}, threads=2)
    ms, kb = cold.ort("node", "bench/ort/run.js", "m.onnx", {"x": "in.npy"}, threads=2)

ftrun: the wall time of the whole process (`ftrun MODEL -i ... -w 0 -n 1`:
start, dynamic loading, ONNX decode, optimize, plan, the first run with its
timed forms, writing the outputs, exit) and the process's peak resident set
as its timing.json gives it (memory.peak_rss_bytes: Linux's VmHWM at the
end of the run; getrusage's ru_maxrss would also count this Python process,
which forked it).

ONNX Runtime: node's own start-up is not counted. bench/ort/run.js reports
the time to load onnxruntime-node's library (require_ms), session creation
(load_ms) and the first session.run (times_ms[0], with -w 0 -n 1); their
sum is ORT's first result. Its memory is the node process's peak resident
set at the end less the peak before the library was loaded (node alone),
both VmHWM.

Both are measured on a page cache already warm with the model file: a cold
disk is the same for every runtime and not what is compared.
"""
import json
import os
import subprocess
import tempfile
import time


def _args(feeds):
    out = []
    for k, v in feeds.items():
        out += ["-i", "%s=%s" % (k, v)]
    return out


def ftrun(exe, model, feeds, threads, cwd=None):
    """(ms from process start to exit, peak RSS in KiB) of one ftrun run."""
    with tempfile.TemporaryDirectory(prefix="ftrun-cold-") as tmp:
        cmd = [exe, model, "-q", "-w", "0", "-n", "1", "--threads", str(threads), "-o", tmp] + _args(feeds)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ms = (time.perf_counter() - t0) * 1e3
        if r.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                    (r.stderr.strip().splitlines() or ["(no message)"])[-1]))
        with open(os.path.join(tmp, "timing.json")) as f:
            rss = json.load(f)["memory"].get("peak_rss_bytes")
    if rss is None:
        raise RuntimeError("%s: timing.json has no memory.peak_rss_bytes (no /proc?)" % " ".join(cmd))
    return ms, rss / 1024.0


def ort(node, script, model, feeds, threads, cwd=None):
    """(ms of library load + session creation + first run, peak RSS in KiB
    above node's own) of one ONNX Runtime process."""
    cmd = [node, script, model, "--threads", str(threads), "-w", "0", "-n", "1"] + _args(feeds)
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                (r.stderr.strip().splitlines() or ["(no message)"])[-1]))
    res = json.loads(r.stdout.strip().splitlines()[-1])
    if res.get("peak_rss_kb") is None or res.get("start_rss_kb") is None:
        raise RuntimeError("%s: no VmHWM (no /proc?)" % " ".join(cmd))
    ms = res["require_ms"] + res["load_ms"] + res["times_ms"][0]
    return ms, res["peak_rss_kb"] - res["start_rss_kb"]
