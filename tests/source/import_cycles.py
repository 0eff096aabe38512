#!/usr/bin/env python3
"""No import circle across the files of src/.

A unit is a stem: src/graph/ops.c and src/graph/ops.h are the one unit
graph/ops; a unit imports another when one of its files has an
`#include "..."` line that names a file of the other (resolved beside the
including file, then from src/). Prints each circle among units (a strongly
connected component of more than one unit: its members, one circle through
them and each import between them) and each circle among the folders of
src/ (one circle through its folders, with the imports that make each step;
src/common.* belongs to no folder and is left out of that graph), then a count, and exits 1 when there is any.

    python3 tests/source/import_cycles.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
SUFFIXES = (".c", ".h", ".cu", ".cuh", ".def")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)

# Circles that are inherent, each with the reason it is allowed:
#   ("unit/a", "unit/b"): "why",  or  ("folder:x", "folder:y"): "why"
# (the sorted members of the circle). There is none today.
ALLOWED = {}


def units(src):
    """Map each file of src/ (relative path) to its unit (path less suffix)."""
    out = {}
    for d, _, files in os.walk(src):
        for f in files:
            if f.endswith(SUFFIXES):
                rel = os.path.relpath(os.path.join(d, f), src)
                out[rel] = os.path.splitext(rel)[0]
    return out


def edges(src, files):
    """Unit -> set of units it imports."""
    g = {u: set() for u in files.values()}
    for rel, u in files.items():
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE_RE.findall(text):
            for cand in (os.path.normpath(os.path.join(os.path.dirname(rel), inc)), os.path.normpath(inc)):
                if cand in files:
                    if files[cand] != u:
                        g[u].add(files[cand])
                    break
    return g


def sccs(g):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def circle(g, comp):
    """One circle through the component's first member, as a path."""
    members = set(comp)
    start = comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(g[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    src = os.path.join(ROOT, "src")
    files = units(src)
    g = edges(src, files)
    folders = {}
    for u, deps in g.items():
        if "/" not in u:
            continue
        a = u.split("/")[0]
        folders.setdefault(a, set())
        for w in deps:
            if "/" in w and w.split("/")[0] != a:
                folders[a].add(w.split("/")[0])
    found = 0
    for kind, graph, prefix in (("unit", g, ""), ("folder", folders, "folder:")):
        for comp in sccs(graph):
            key = tuple(prefix + c for c in comp)
            if key in ALLOWED:
                continue
            found += 1
            print("%s circle: %s (%s)" % (kind, ", ".join(comp), " -> ".join(circle(graph, comp))))
            if kind == "unit":
                for u in comp:
                    for w in sorted(g[u]):
                        if w in comp:
                            print("  %s imports %s" % (u, w))
            else:  # the imports that make each step of the circle printed
                path = circle(graph, comp)
                for a, b in zip(path, path[1:]):
                    for u in sorted(x for x in g if x.startswith(a + "/")):
                        for w in sorted(g[u]):
                            if w.startswith(b + "/"):
                                print("  %s imports %s" % (u, w))
    print("%d units, %d folders, %d circles" % (len(g), len(folders), found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
