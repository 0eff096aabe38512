"""Batch mode of the numeric harness (harness.main, FTNUM_MODE=batch): every case that
`ftrun test` can run is written as a test folder in ftrun's own layout (TEST FOLDERS in
man/ftrun.1: graph.json and the .npy files its tensors name, inputs/NAME.npy for the
inputs that run mode gives with --input, expected/NAME.npy from the oracle), and one

    ftrun test DIR -j N --timeout SEC --save-outputs OUT [-d DEV] [--threads T]

runs them all in N worker processes that each open the device once (one CUDA context
for hundreds of cases, where run mode pays one per case). The verdict of a case is then
the harness's own (harness.check_outputs on OUT/CASE/NAME.npy, the per-element bounds of
its Tol), exactly as run mode judges the files of `ftrun run -o`; ftrun test's own
comparison of the saved outputs with expected/ (one rtol/atol per dtype) has no say. A
case that ftrun test fails in any other way (a load or run error, a crash of its
worker, --timeout) fails with that message, as run mode fails on ftrun's exit status. Cases that expect an error (exit status, stderr text) and cases with
options ftrun test does not take (--seed, -w, -n) run in run mode, one process each;
cases with --threads or -O run in one ftrun test per set of options."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def test_options(args):
    """The `ftrun test` options that do what the `ftrun run` options args do, as a
    tuple; None when some option has no counterpart there."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--device", "--threads", "-O") and i + 1 < len(args):
            out += [a, args[i + 1]]
            i += 2
        elif a.startswith(("--device=", "--threads=")):
            out.append(a)
            i += 1
        else:
            return None
    return tuple(out)


def plan(h, cases):
    """Splits the case indexes into {ftrun test options: [k]} and the run-mode list."""
    base = test_options(h.EXTRA_ARGS)
    groups, runs = {}, []
    for k, c in enumerate(cases):
        opts = test_options(c.args) if base is not None and c.exit_code == 0 and c.stderr_re is None else None
        if opts is None:
            runs.append(k)
        else:
            groups.setdefault(base + opts, []).append(k)
    return groups, runs


def prepare(h, c, folder):
    """Writes case c as a test folder. Returns (output names, input files) for the
    check, or (False, diag) when the harness itself failed (as run mode reports it)."""
    try:
        os.makedirs(os.path.join(folder, "expected"))
        h.materialize(c)
        _, _, files = h._graph(c, folder, os.path.join(folder, "inputs"))
        exp = h.expectations(c)
        for name, want in exp.items():
            np.save(os.path.join(folder, "expected", h.out_file(name)), want, allow_pickle=False)
        return list(exp), files
    except Exception:
        return False, h.harness_error()
    finally:
        h.release(c)


LINE = re.compile(r"^(PASS|FAIL|UNSUPPORTED) +(t\d+)/c(\d+) \(([0-9.]+) ms\)(?:: (.*))?$")


def judge(h, c, folder, outdir, word, msg, meta):
    """The verdict of a case from its line of ftrun test and its saved outputs."""
    names, files = meta
    try:
        # "output 'NAME': ..." is ftrun test's comparison with its own tolerance, made
        # after the outputs were saved: the harness's bounds decide instead
        if word == "PASS" or (word == "FAIL" and msg.startswith("output '")):
            exp = {n: np.load(os.path.join(folder, "expected", h.out_file(n)), allow_pickle=False) for n in names}
            return h.check_outputs(c, outdir, exp, lambda: [
                None if f is None else (f[0], np.load(f[1], allow_pickle=False)) for f in files])
        return False, ["ftrun test: %s: %s" % (word, msg)]
    except Exception:
        return False, h.harness_error()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(outdir, ignore_errors=True)


def run_group(h, cases, ks, meta, root, g, opts, jobs, done):
    """One `ftrun test` over the folders root/g/cK of the cases ks; done(k, ok, diag)
    gets each verdict once the harness has checked the case. Returns ftrun test's
    exit status."""
    save = os.path.join(root, "out")
    cmd = h.EXTRA_PREFIX + [h.FTRUN, "test", os.path.join(root, g), "-j", str(jobs), "--timeout", "%g" % h.TIMEOUT,
                            "--save-outputs", save] + list(opts)
    print("# batch of %d cases: %s" % (len(ks), " ".join(shlex.quote(a) for a in cmd)), flush=True)
    errf = tempfile.TemporaryFile(mode="w+", dir=root)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, errors="replace")
    want = set(ks)
    # ftrun test prints a line a case, in case order, as soon as the case and those
    # before it are done; the checks run in the pool while this loop reads on, so
    # that ftrun test never waits on a full pipe
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        for line in proc.stdout:
            m = LINE.match(line.rstrip("\n"))
            if m and m.group(2) == g and int(m.group(3)) in want:
                k = int(m.group(3))
                want.discard(k)
                case = "%s/c%05d" % (g, k)
                fut = pool.submit(judge, h, cases[k], os.path.join(root, case), os.path.join(save, case), m.group(1),
                                  m.group(5) or "", meta[k])
                fut.add_done_callback(lambda f, k=k: done(k, *f.result()))
        rc = proc.wait()
    errf.seek(0)
    err = errf.read().splitlines()
    errf.close()
    for k in sorted(want):
        done(k, False, ["ftrun test gave no verdict for this case (exit status %d)" % rc] +
             ["ftrun test: " + l for l in err[-10:]])
    return rc


def run_all(h, cases, workers, test_jobs, results, emit):
    """Runs cases in batch mode (run mode for those that cannot be batched); each
    verdict goes to results[k] as (ok, diag) and emit() prints what is in."""
    groups, runs = plan(h, cases)
    if test_options(h.EXTRA_ARGS) is None:
        print("# FTNUM_ARGS has an option that ftrun test does not take: every case in run mode", flush=True)
    lock = threading.Lock()

    def done(k, ok, diag):
        with lock:
            results[k] = (ok, diag)
            emit()

    t0 = time.time()
    root = tempfile.mkdtemp(prefix="ftnum-batch-")
    meta, batched, t_test = {}, 0, 0.0
    try:
        # the folders are written on every core; the run-mode cases run meanwhile
        with ThreadPoolExecutor(max_workers=workers) as pool, \
                ThreadPoolExecutor(max_workers=max(workers, os.cpu_count() or 1)) as prep:
            futs = {k: pool.submit(h.run_case, cases[k]) for k in runs}
            preps = {}
            for gi, ks in enumerate(groups.values()):
                for k in ks:
                    preps[k] = prep.submit(prepare, h, cases[k], os.path.join(root, "t%d" % gi, "c%05d" % k))
            for k in sorted(preps):
                r = preps.pop(k).result()
                if r[0] is False:
                    done(k, *r)
                else:
                    meta[k] = r
            t_prep = time.time() - t0
            for k in sorted(futs):
                done(k, *futs.pop(k).result())
        for gi, (opts, ks) in enumerate(groups.items()):
            ks = [k for k in ks if k in meta]
            if ks:
                t1 = time.time()
                run_group(h, cases, ks, meta, root, "t%d" % gi, opts, test_jobs, done)
                t_test += time.time() - t1
                batched += len(ks)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("# batch mode: %d cases batched in %d ftrun test runs (-j %d), %d in run mode; %.1f s writing the "
          "folders, %.1f s in ftrun test" % (batched, len(groups), test_jobs, len(runs), t_prep, t_test))
