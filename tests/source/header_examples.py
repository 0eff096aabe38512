#!/usr/bin/env python3
"""The usage example in each header's leading comment compiles.

The example is the last run of lines of the header's first comment that are
indented by three or more spaces after the " * ". It is compiled with the
header included (and the C library's common headers), as the body of a
function, or at file scope where it defines a function itself. In an example
"..." stands for code left out (it becomes an empty statement) and "//"
starts prose. The names an example takes as given (g, n, err, ...) are
undeclared there: an error about an undeclared name is accepted unless the
name is one of the project's (ft_, FT_, cpu_, cu_, onx_, ox_, jr_, ...), which
the header or its includes must declare (each such name is also looked up
on its own, since gcc reports nothing about a call whose arguments are
undeclared). Any other error (an unknown
function, type or member of the project, a wrong argument count, a syntax
error) fails. CUDA headers (.cuh) need nvcc and are not compiled here.

Usage: header_examples.py [ROOT [GEN]] (GEN: the folder of the generated
onnx.pb-c.h, default ROOT/build/gen); prints one block per failing header and
exits 1 when any fails.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "gen"))
PROJECT_NAME = re.compile(r"^(ft_|FT_|cpu_|CPU_|cu_|CU_|onx_|ox_|OX_|jr_)")
FLAGS = ["-std=gnu11", "-fsyntax-only", "-fopenmp", "-D_FILE_OFFSET_BITS=64", "-w",
         "-Werror=implicit-function-declaration", "-Werror=int-conversion", "-Werror=incompatible-pointer-types"]


def example_of(text):
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not m:
        return None
    runs, cur = [], []
    for line in m.group(1).split("\n"):
        e = re.match(r"^\s*\*? {3,}(\S.*)$", line)
        if e and not line.lstrip().startswith("*/"):
            cur.append(e.group(1))
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs[-1] if runs else None


def strip_prose(line):
    out, q = [], None
    i = 0
    while i < len(line):
        c = line[i]
        if q:
            if c == "\\":
                out.append(line[i:i + 2])
                i += 2
                continue
            if c == q:
                q = None
        elif c in "\"'":
            q = c
        elif line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out).replace("...", "{}")


def source_of(header, lines):
    body = "\n".join(strip_prose(l) for l in lines)
    rel = os.path.relpath(header, os.path.join(ROOT, "src"))
    pre = "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    pre += '#include "%s"\n' % rel
    file_scope = re.search(r"^\s*(static\s+)?[\w\s\*]+\b\w+\s*\([^;{]*\)\s*(\{|$)", body.split("\n")[0]) and \
        not re.match(r"^\s*(if|for|while|return)\b", body)
    if file_scope:
        return pre + "#line 1 \"example\"\n" + body + "\n"
    return pre + "void ft_header_example(void);\nvoid ft_header_example(void)\n{\n#line 1 \"example\"\n" + body + "\n}\n"


def check(header):
    lines = example_of(open(header, encoding="utf-8").read())
    if not lines:
        return "no usage example (lines indented by three spaces in its leading comment)"
    src = source_of(header, lines)
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        r = subprocess.run(["cc"] + FLAGS + ["-I", os.path.join(ROOT, "src"), "-I", GEN,
                                             path], capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C"))
    finally:
        os.unlink(path)
    bad = []
    # gcc reports no implicit declaration in a call whose arguments are
    # undeclared, so every project name the example uses (not a member after
    # "." or "->") is also looked up on its own: a macro, or anything that
    # __typeof__ accepts (a function, variable, enumerator or type).
    code = re.sub(r'"(\\.|[^"\\])*"', '""', src.split('#line 1 "example"', 1)[1])
    defined = {"ft_header_example"}
    d = re.match(r"\s*(?:static\s+)?[\w\s\*]+?\b(\w+)\s*\(", code)
    if "void ft_header_example(void)" not in src and d:  # the function the example defines at file scope
        defined.add(d.group(1))
    names = sorted({m.group(2) for m in re.finditer(r"(\.|->)?\s*\b(\w+)\b", code)
                    if not m.group(1) and PROJECT_NAME.match(m.group(2)) and m.group(2) not in defined})
    probe = src.split('#line 1 "example"', 1)[0].split("void ft_header_example(void);")[0]
    probe += "void ft_header_probe(void);\nvoid ft_header_probe(void)\n{\n"
    for i, name in enumerate(names):
        probe += "#ifndef %s\n    __typeof__(%s) *ft_probe_%d; (void)ft_probe_%d;\n#endif\n" % (name, name, i, i)
    probe += "}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(probe)
        ppath = f.name
    try:
        pr = subprocess.run(["cc"] + FLAGS + ["-I", os.path.join(ROOT, "src"), "-I", GEN,
                                              ppath], capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    finally:
        os.unlink(ppath)
    for line in pr.stderr.splitlines():
        u = re.search(r"error: '(\w+)' undeclared", line)
        if u:
            bad.append("example uses %s, which the header does not declare" % u.group(1))
    for line in r.stderr.splitlines():
        if " error: " not in line:
            continue
        u = re.search(r"error: '(\w+)' undeclared", line)
        if u and not PROJECT_NAME.match(u.group(1)):
            continue
        bad.append(line.replace(path, "example"))
    if bad:
        return "\n".join(["  " + b for b in bad] + ["  --- compiled as:"] + ["  | " + l for l in src.splitlines()])
    return None


def main():
    headers = sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.h"), recursive=True))
    failed = 0
    for h in headers:
        why = check(h)
        if why:
            failed += 1
            print("%s: %s" % (os.path.relpath(h, ROOT), why))
    print("# %d headers, %d failing" % (len(headers), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
