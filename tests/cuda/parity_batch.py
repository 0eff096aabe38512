"""Batch mode of tests/cuda/parity.py: every case that `ftrun test` can judge is
written as a test folder in ftrun's own layout (graph.json and its .npy files,
tolerance.json), one `ftrun test -d cpu --save-outputs` over all of them gives each
its expected/ values, and one `ftrun test -d DEV -j N -v` runs them on the device in
N worker processes that each start the device once. parity.py calls these with
itself as p (FTRUN, DEVICE, JOBS, TEST_JOBS, WRAP, write_graph, keep)."""
import json
import os
import re
import shlex
import subprocess
import tempfile
import traceback


def batchable(c):
    """A case `ftrun test` can judge: its outputs against the cpu's, one tolerance."""
    return c.rc == 0 and not c.check_nodes and not c.big


def prepare_case(p, c, folder):
    """Writes c as a test folder: graph.json and its .npy files, tolerance.json
    (expected/ comes from cpu_references). None when written, else (False, diag, secs)."""
    try:
        os.makedirs(folder)
        p.write_graph(c, folder)
        with open(os.path.join(folder, "tolerance.json"), "w") as f:
            json.dump({"rtol": float(c.tol[0]), "atol": float(c.tol[1])}, f)
        return None
    except Exception:
        return False, ["suite error: " + l for l in traceback.format_exc().rstrip().splitlines()[-6:]], 0.0


LINE = re.compile(r"^(PASS|FAIL|UNSUPPORTED) +batch/c(\d+) \(([0-9.]+) ms\)(?:: (.*))?$")


def cpu_references(p, cases, idx, root, results):
    """One `ftrun test -d cpu --save-outputs` over the folders of cases[k], k in idx,
    whose outputs become each folder's expected/. Returns the ks that have them; a
    case whose graph fails on the cpu gets its verdict in results."""
    ref = os.path.join(root, "ref")
    cmd = [p.FTRUN, "test", os.path.join(root, "batch"), "-d", "cpu", "-j", str(max(p.JOBS, os.cpu_count() or 1)),
           "--timeout", "600", "-q", "--save-outputs", ref]
    print("# cpu references of %d cases: %s" % (len(idx), " ".join(shlex.quote(a) for a in cmd)), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    failed = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(1) != "PASS":
            failed[int(m.group(2))] = m.group(4) or ""
    ready = []
    for k in idx:
        folder, out = os.path.join(root, "batch", "c%05d" % k), os.path.join(ref, "batch", "c%05d" % k)
        if k not in failed and os.path.isdir(out):
            os.rename(out, os.path.join(folder, "expected"))
            ready.append(k)
            continue
        diag = ["the cpu reference failed: " + failed.get(k, "no outputs (ftrun test exit status %d)" % r.returncode)]
        p.keep(cases[k], folder, diag)
        diag.append("command: " + " ".join(shlex.quote(a) for a in cmd))
        results[k] = (False, diag, 0.0)
    return ready


def run_batch(p, cases, idx, root, results, emit):
    """One `ftrun test -v` over the prepared folders of cases[k] for k in idx;
    each verdict goes to results[k] and emit() prints it as its line arrives."""
    cmd = p.WRAP + [p.FTRUN, "test", os.path.join(root, "batch"), "-d", p.DEVICE, "-j", str(p.TEST_JOBS), "--timeout",
                  "600", "-v"]
    print("# batch of %d cases: %s" % (len(idx), " ".join(shlex.quote(a) for a in cmd)), flush=True)
    errf = tempfile.TemporaryFile(mode="w+", dir=root)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, errors="replace")
    want, pending = set(idx), [None]  # pending: (k, ok, diag, secs) while its log lines may follow

    def settle():
        if pending[0] is not None:
            k, ok, diag, secs = pending[0]
            results[k], pending[0] = (ok, diag, secs), None
            emit()

    for line in proc.stdout:
        line = line.rstrip("\n")
        if line.startswith("    "):  # -v: the log of the case above
            if pending[0] is not None and not pending[0][1] and len(pending[0][2]) < 42:
                pending[0][2].insert(len(pending[0][2]) - 1, line[4:])
            continue
        settle()
        m = LINE.match(line)
        if m:
            k = int(m.group(2))
            ok = m.group(1) == "PASS"
            diag = [] if ok else [m.group(1).lower() + ": " + (m.group(4) or "")]
            if not ok:
                p.keep(cases[k], os.path.join(root, "batch", "c%05d" % k), diag)
                diag.append("case folder batch/c%05d: `ftrun test FOLDER -d %s -v` reruns it" % (k, p.DEVICE))
            pending[0] = (k, ok, diag, float(m.group(3)) / 1e3)
            want.discard(k)
    settle()
    rc = proc.wait()
    errf.seek(0)
    err = errf.read()
    errf.close()
    for k in sorted(want):
        results[k] = (False, ["ftrun test gave no verdict for this case (exit status %d)" % rc] +
                      ["ftrun test: " + l for l in err.splitlines()[-10:]], 0.0)
    emit()
    return rc
