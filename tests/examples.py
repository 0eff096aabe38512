"""Examples extracted from the documentation, so that tests run them as
written (tests/cli/examples.bats).

    examples.py man1 man/ftrun.1       the commands of section EXAMPLES, one
                                       JSON object per line: {"cmd", "status"}
    examples.py man5 man/ftrun-graph.5 the graph of section EXAMPLE (JSON text)
    examples.py readme README.md       the commands of the README's Usage block

A command's expected exit status is 0, or the one a roff comment
'.\\" status N' just before it in the .EX block gives. A roff comment
'.\\" setup: COMMAND' in a block is a command the page does not show that
makes the files the example needs (run as written, before what follows).
"""
import json
import re
import sys


def unroff(line):
    """The text a roff line shows (the escapes the man pages use)."""
    for a, b in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\%", ""), ("\\&", ""), ("\\e", "\\")):
        line = line.replace(a, b)
    return line


def section(lines, name):
    out, on = [], False
    for line in lines:
        if line.startswith(".SH "):
            on = line[4:].strip().strip('"') == name
            continue
        if on:
            out.append(line)
    return out


def ex_blocks(lines):
    """The lines of every .EX ... .EE block (roff comments kept)."""
    blocks, cur = [], None
    for line in lines:
        if line.startswith(".EX"):
            cur = []
        elif line.startswith(".EE"):
            blocks.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line)
    return blocks


def commands(block_lines):
    """Shell commands of a block: continuation lines joined, each with its status."""
    out, status, pending = [], 0, ""
    for raw in block_lines:
        m = re.match(r'^\.\\"\s*status\s+(\d+)', raw)
        if m:
            status = int(m.group(1))
            continue
        m = re.match(r'^\.\\"\s*setup:\s*(.*)$', raw)
        if m:  # a command the page does not show that makes the files its example needs
            out.append({"cmd": m.group(1), "status": 0, "setup": True})
            continue
        if raw.startswith('.\\"'):
            continue
        line = unroff(raw)
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1].rstrip() + " "
            continue
        cmd = (pending + line.strip()).strip()
        pending = ""
        if cmd and not cmd.startswith("#"):
            out.append({"cmd": cmd, "status": status})
            status = 0
    return out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8").read().splitlines()
    if kind == "man1":
        for block in ex_blocks(section(lines, "EXAMPLES")):
            for c in commands(block):
                print(json.dumps(c))
    elif kind == "man5":
        blocks = ex_blocks(section(lines, "EXAMPLE"))
        print("\n".join(unroff(l) for l in blocks[0]))
    elif kind == "readme":
        text = "\n".join(lines)
        m = re.search(r"^## Usage\n+```sh\n(.*?)^```", text, re.S | re.M)
        block = m.group(1).splitlines()
        for c in commands(block):
            print(json.dumps(c))
    else:
        sys.exit("usage: examples.py man1|man5|readme FILE")


if __name__ == "__main__":
    main()
