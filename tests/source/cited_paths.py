#!/usr/bin/env python3
"""Every file a comment under src/ cites exists.

Reads the comments of src/**/*.{c,h,cu,cuh,def}, takes each word that names
a file (a name ending in a source, script, doc or man-page suffix, with or
without folders) and looks it up: as given from the repository root, under
src/, beside the citing file, or as the only file of that base name in the
tree. Names of other projects' files are listed in EXTERNAL below. Prints
one line per missing file and exits 1 when there is any.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SUFFIXES = r"(?:c|h|cu|cuh|def|py|sh|bats|md|proto|1|5)"
PATH_RE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.%s)(?![\w/-])" % SUFFIXES)


def system_includes():
    """The C compiler's include folders, and CUDA's."""
    dirs = ["/usr/include", "/usr/local/cuda/include"]
    try:
        import subprocess
        err = subprocess.run(["cc", "-E", "-Wp,-v", "-x", "c", "/dev/null"], capture_output=True, text=True).stderr
        dirs += [l.strip() for l in err.splitlines() if l.startswith(" /")]
    except OSError:
        pass
    return dirs


SYSTEM_INCLUDES = system_includes()
# Files of other projects that comments cite (ONNX's reference implementation
# and test data, and headers that are not installed on every machine; the
# headers under /usr/include count as existing).
EXTERNAL_PREFIXES = ("onnx/reference/", "onnx/backend/", "onnx/defs/", "/usr/")
EXTERNAL = {
    "onnx.proto", "cuda.h", "cuda_fp16.h", "cuda_bf16.h", "cublas_v2.h", "cufft.h", "cusolverDn.h", "op_resize.py",
    "op_grid_sample.py",
}


def comments(text):
    """The comment text of a C/C++/CUDA file, strings skipped."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append(text[i + 2:j])
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i + 2:j])
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return "\n".join(out)


def tracked_files():
    found = {}
    for top in ("src", "tests", "man", "bench", "fuzz", "scripts", "graphs", "."):
        base = os.path.join(ROOT, top)
        if top == ".":
            names = [f for f in os.listdir(ROOT) if os.path.isfile(os.path.join(ROOT, f))]
            for f in names:
                found.setdefault(f, []).append(f)
            continue
        for dp, dns, fns in os.walk(base):
            dns[:] = [d for d in dns if d not in (".git", "node_modules", "build")]
            for f in fns:
                found.setdefault(f, []).append(os.path.relpath(os.path.join(dp, f), ROOT))
    return found


def exists(cite, src_file, by_name):
    if cite in EXTERNAL or cite.startswith(EXTERNAL_PREFIXES):
        return True
    if cite.endswith(".h") and any(os.path.exists(os.path.join(d, cite)) for d in SYSTEM_INCLUDES):
        return True
    if cite.startswith("build/"):  # a build product: the Makefile must make it
        with open(os.path.join(ROOT, "Makefile")) as f:
            return os.path.basename(cite) in f.read()
    here = os.path.dirname(src_file)
    for cand in (os.path.join(ROOT, cite), os.path.join(ROOT, "src", cite), os.path.join(here, cite),
                 os.path.join(ROOT, "build", "gen", cite)):
        if os.path.exists(cand):
            return True
    if "/" not in cite and len(by_name.get(cite, [])) >= 1:
        return True
    return False


def main():
    by_name = tracked_files()
    missing = []
    for dp, _, fns in os.walk(os.path.join(ROOT, "src")):
        for f in sorted(fns):
            if not re.search(r"\.(c|h|cu|cuh|def)$", f):
                continue
            path = os.path.join(dp, f)
            text = open(path, encoding="utf-8", errors="replace").read()
            for m in PATH_RE.finditer(comments(text)):
                cite = m.group(1)
                if re.fullmatch(r"[\d.]+", cite):  # a number such as 1.5
                    continue
                if not exists(cite, path, by_name):
                    missing.append("%s: cites %s, which does not exist" % (os.path.relpath(path, ROOT), cite))
    for line in sorted(set(missing)):
        print(line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
