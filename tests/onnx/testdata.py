#!/usr/bin/python3
"""ONNX's own test data run by `ftrun test` on the CPU: Debian's libonnx-testdata
(ONNX 1.12) by default, or the newer copy the project keeps
(tests/data/onnx-testdata-6be0677, unpacked by tests/run.sh) with its own lists.

Prints TAP, one line per case ("ok 12 - node/test_abs"), for tests/run.sh.
The expected values are ONNX's: the test_data_set_N/output_K.pb files the ONNX
project generated with its reference implementation.

tests/onnx/unsupported.txt lists the cases ftrun's importer refuses with its
"unsupported" error, one per line: "node/test_xxx  reason". The rules:
  - a case that passes is ok, unless it is listed: then it fails, so that the
    list stays true (remove the line);
  - a listed case the importer refuses is reported as skipped (never passed);
  - a case listed in tests/onnx/reference_differs.txt (written by hand: ONNX
    1.12's data that ftrun cannot be held to, each with its reason and where
    the behaviour is checked against another oracle) that fails is skipped; one
    that passes or is refused fails, so that list stays true too;
  - every other outcome fails: a mismatch, a crash, a timeout, a load error,
    an unsupported refusal of a case that is not listed, a listed case that
    does not exist.

  --write-list   regenerate tests/onnx/unsupported.txt from this run's
                 "unsupported" refusals only (a mismatch or a crash is a bug,
                 never listed); failures are still printed and fail the run.
Environment: FTRUN (the binary), ONNX_TESTDATA (default
/usr/share/libonnx-testdata/data), FTRUN_TEST_JOBS (default: the cores),
FTRUN_ONNX_LIST (another list, for the tests of this script), FTRUN_TEST_DEVICE
(default cpu; the CUDA tier passes cuda:0), FTRUN_ONNX_DIFFERS (another
reference_differs list), FTRUN_ONNX_TAG (a name put before each TAP name, e.g.
"6be0677"), FTRUN_TEST_OPT (an optimizer level
for ftrun test, e.g. -O0: tests/run.sh runs the tier at the default -O2 and
again at -O0; the TAP names then start with "(-O0) ").
The "light" folder of the newer data (whole CNNs, light_NAME.onnx with
light_NAME_output_0.pb, whose output does not depend on the input) is run by
`ftrun run --random-inputs --expect`, one TAP line per model.
Progress goes to stderr every 100 cases or 10 s ("# ONNX test data: 300 of 1072
cases done ..."), so a long run on a device shows it is alive.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.environ.get("FTRUN_ONNX_LIST") or os.path.join(HERE, "unsupported.txt")
# Cases whose reference data ftrun cannot be held to (written by hand, with the reason)
DIFFERS = os.environ.get("FTRUN_ONNX_DIFFERS") or os.path.join(HERE, "reference_differs.txt")
FOLDERS = ["node", "pytorch-converted", "pytorch-operator", "simple"]
LIST_NAME = os.path.relpath(LIST, os.path.join(HERE, "..", ".."))
DIFFERS_NAME = os.path.relpath(DIFFERS, os.path.join(HERE, "..", ".."))


def read_list(path):
    listed = {}
    if not os.path.exists(path):
        return listed
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            listed[name] = reason.strip()
    return listed


def short_reason(msg):
    """The importer's reason in short, for the list: one item per thing it
    refused, without node and tensor names ("op missing: Foo", "Resize: ...")."""
    items = []
    for part in msg.split("; "):
        part = " ".join(part.split())
        part = re.sub(r": nodes '.*$", "", part)
        m = re.match(r"op (\S+) of domain '(.*?)'", part)
        if m:
            part = "non-default domain: %s (%s)" % (m.group(2), m.group(1))
        m = re.match(r"op (\S+) \(opset \d+\) is not supported", part)
        if m:
            part = "op missing: " + m.group(1)
        elif re.match(r"op (\S+) \((.*)\)$", part):
            m = re.match(r"op (\S+) \((.*)\)$", part)
            part = "%s: %s" % (m.group(1), m.group(2))
        elif re.match(r"node '.*?' \((\S+), opset \d+\): ", part):
            m = re.match(r"node '.*?' \((\S+), opset \d+\): (.*)", part)
            part = "%s: %s" % (m.group(1), m.group(2))
        else:
            part = re.sub(r"^input '.*?' has element type (\S+), which ftrun does not support", r"dtype \1", part)
            part = re.sub(r"^input '.*?' is not a tensor", "input is not a tensor", part)
        if part not in items:
            items.append(part)
    return "; ".join(items)[:300]


def count_cases(dirs):
    """The case folders under dirs, as `ftrun test` finds them (up to 4 levels)."""
    n = 0
    for d in dirs:
        for top, subs, files in os.walk(d):
            if {"model.onnx", "graph.json", "graph.ftg"} & set(files):
                n += 1
                subs[:] = []
            elif top[len(d):].count(os.sep) >= 4:
                subs[:] = []
    return n


def run_with_progress(cmd, total, tmp, every_n=100, every_s=10.0):
    """Runs `ftrun test` and, on stderr, says how far it is every every_n cases or
    every_s seconds: a run on a device takes minutes and prints its TAP at the end.
    Returns (returncode, stdout, stderr) as a CompletedProcess."""
    t0 = last_t = time.time()
    done = last_n = failed = 0
    out = []
    with open(os.path.join(tmp, "stderr"), "w+") as errf:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True, errors="replace")
        for line in p.stdout:
            out.append(line)
            if line.startswith(("PASS ", "FAIL ", "UNSUPPORTED ")):
                done += 1
                failed += line.startswith("FAIL ")
                now = time.time()
                if done - last_n >= every_n or now - last_t >= every_s:
                    print("# ONNX test data: %d of %d cases done (%d FAIL so far, before the lists are applied), %.0f s" %
                          (done, total, failed, now - t0), file=sys.stderr, flush=True)
                    last_n, last_t = done, now
        rc = p.wait()
        errf.seek(0)
        return subprocess.CompletedProcess(cmd, rc, "".join(out), errf.read())


def run_light(ftrun, folder, tag, first, tmp):
    """The light models: light_NAME.onnx run once on random inputs (their output
    does not depend on them), compared with light_NAME_output_0.pb. Returns
    (TAP lines, failures)."""
    lines, bad = [], 0
    env = dict(os.environ, FTRUN_DEFAULT_DURATION="0")
    opt = os.environ.get("FTRUN_TEST_OPT")
    for i, f in enumerate(sorted(x for x in os.listdir(folder) if x.endswith(".onnx"))):
        model = os.path.join(folder, f)
        expect = model[:-len(".onnx")] + "_output_0.pb"
        name = tag + "light/" + f[:-len(".onnx")]
        cmd = [ftrun, "run", model, "-d", os.environ.get("FTRUN_TEST_DEVICE") or "cpu", "--random-inputs",
               "--expect", expect, "-o", os.path.join(tmp, "light-" + f)] + ([opt] if opt else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, timeout=900)
            ok, why = p.returncode == 0, " ".join((p.stderr or p.stdout).split())[-600:]
        except subprocess.TimeoutExpired:
            ok, why = False, "timed out after 900 s"
        if ok:
            lines.append("ok %d - %s" % (first + i, name))
        else:
            lines.append("not ok %d - %s # %s" % (first + i, name, why))
            bad += 1
    return lines, bad


def main():
    write_list = "--write-list" in sys.argv[1:]
    ftrun = os.environ.get("FTRUN") or os.path.join(HERE, "..", "..", "build", "ftrun")
    root = os.environ.get("ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")
    dirs = [os.path.join(root, d) for d in FOLDERS if os.path.isdir(os.path.join(root, d))]
    if not dirs:
        print("ok 1 - ONNX test data # skip not installed (%s; Debian package libonnx-testdata)" % root)
        return 0
    jobs = os.environ.get("FTRUN_TEST_JOBS") or str(os.cpu_count() or 1)
    opt = os.environ.get("FTRUN_TEST_OPT")
    tag = "".join("(%s) " % t for t in (os.environ.get("FTRUN_ONNX_TAG"), opt) if t)
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        t0 = time.time()
        p = run_with_progress([ftrun, "test", "-d", os.environ.get("FTRUN_TEST_DEVICE") or "cpu", "-j", jobs, "--timeout", "120",
                               "--junit", junit] + ([opt] if opt else []) + dirs, count_cases(dirs), tmp)
        wall = time.time() - t0
        if p.returncode not in (0, 1) or not os.path.exists(junit):
            print("not ok 1 - ftrun test on the ONNX test data: exit status %d" % p.returncode)
            for line in (p.stderr + p.stdout).splitlines()[-20:]:
                print("# " + line)
            return 1
        root_el = ET.parse(junit).getroot()
    cases = []  # (name, status, message)
    for tc in root_el.iter("testcase"):
        name = tc.get("classname") + "/" + tc.get("name")
        fail, skip = tc.find("failure"), tc.find("skipped")
        if fail is not None:
            cases.append((name, "fail", fail.get("message", "")))
        elif skip is not None:
            cases.append((name, "unsupported", skip.get("message", "").replace("unsupported: ", "", 1)))
        else:
            cases.append((name, "pass", ""))
    listed = read_list(LIST)
    differs = read_list(DIFFERS)
    n = bad = 0
    counts = {}
    seen = set()
    for name, status, msg in cases:
        n += 1
        seen.add(name)
        folder = name.split("/")[0]
        c = counts.setdefault(folder, {"pass": 0, "fail": 0, "unsupported": 0, "differs": 0})
        c["differs" if name in differs and status == "fail" else status] += 1
        if name in differs:
            if status == "fail":
                print("ok %d - %s # skip reference differs: %s" % (n, tag + name, differs[name]))
            else:
                print("not ok %d - %s # %s but %s lists it: remove the line" %
                      (n, tag + name, "passes" if status == "pass" else "is refused as unsupported", DIFFERS_NAME))
                bad += 1
        elif status == "pass" and name in listed and not write_list:
            print("not ok %d - %s # passes but %s lists it (%s): remove the line" % (n, tag + name, LIST_NAME, listed[name]))
            bad += 1
        elif status == "pass":
            print("ok %d - %s" % (n, tag + name))
        elif status == "unsupported" and (name in listed or write_list):
            print("ok %d - %s # skip unsupported: %s" % (n, tag + name, short_reason(msg)))
        elif status == "unsupported":
            print("not ok %d - %s # refused as unsupported but not in %s: %s" % (n, tag + name, LIST_NAME, short_reason(msg)))
            bad += 1
        else:
            print("not ok %d - %s # %s" % (n, tag + name, " ".join(msg.split())[:2000]))
            bad += 1
    for name in sorted((set(listed) | set(differs)) - seen):
        if write_list:
            continue
        n += 1
        print("not ok %d - %s # listed in %s but no such case in %s" %
              (n, tag + name, LIST_NAME if name in listed else DIFFERS_NAME, root))
        bad += 1
    light = os.path.join(root, "light")
    if os.path.isdir(light) and not write_list:
        with tempfile.TemporaryDirectory() as tmp:
            lines, lbad = run_light(ftrun, light, tag, n + 1, tmp)
        for line in lines:
            print(line)
        n += len(lines)
        bad += lbad
        counts["light"] = {"pass": len(lines) - lbad, "fail": lbad, "unsupported": 0, "differs": 0}
    for folder, c in counts.items():
        print("# %s: %d passed, %d unsupported, %d reference differs, %d failed" %
              (folder, c["pass"], c["unsupported"], c["differs"], c["fail"]))
    print("# ONNX test data: %d cases in %.1f s (ftrun test -j %s)" % (len(cases), wall, jobs))
    if write_list:
        with open(LIST + ".tmp", "w") as f:
            f.write("# Cases of %s that ftrun's ONNX importer refuses as unsupported,\n" % ("ONNX's test data at " + os.environ["FTRUN_ONNX_TAG"] if os.environ.get("FTRUN_ONNX_TAG") else "Debian's libonnx-testdata") +
                    "# one per line: CASE  REASON. Generated by `make onnx-unsupported-list` from the importer's\n"
                    "# own refusals only; tests/onnx/testdata.py fails on a listed case that passes.\n")
            for name, status, msg in cases:
                if status == "unsupported":
                    f.write("%s  %s\n" % (name, short_reason(msg)))
        os.replace(LIST + ".tmp", LIST)
        print("# wrote %s (%d cases)" % (LIST, sum(1 for c in cases if c[1] == "unsupported")))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
