#!/usr/bin/python3
"""A few cases that check the numeric harness itself, in either mode (FTNUM_MODE):
tests/cli/numeric_batch.bats runs them and reads the TAP. Run:

    FTRUN=build/ftrun /usr/bin/python3 tests/numeric/harness_selftest.py verdicts|slow

verdicts: cases whose right verdict is known: a right value passes; a wrong element,
a bound of the harness that is looser than ftrun test's default tolerance (rtol 1e-4
for f32) and one that is tighter, a wrong dtype, an input given with --input (inputs/
in batch mode) and an expected error (run mode in either).
slow: a quick case, one that runs for minutes (64 products of 3000x3000 matrices), a
quick case: with FTNUM_TIMEOUT the second times out; killing its ftrun process (the
worker of ftrun test in batch mode) fails it alone."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import harness  # noqa: E402
from harness import BASIC, Case, Tol  # noqa: E402


def verdicts():
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    wrong = x + x
    wrong[17] += 0.5
    return [
        Case("right: add", op="add", inputs=[("a", x), ("b", x)], expect={"y": x + x}, via_flag=()),
        Case("wrong: one element off", op="add", inputs=[("a", x), ("b", x)], expect={"y": wrong}, via_flag=()),
        # 1e-3 off, within the harness's 1e5 eps (1.2e-2) but not ftrun test's 1e-4
        Case("right: looser bound than ftrun test's", op="add", inputs=[("a", x), ("b", x)],
             expect={"y": ((x + x) * np.float32(1.001)).astype(np.float32)}, tol=Tol(r=1e5), via_flag=()),
        # 2e-6 off: within ftrun test's 1e-4, beyond the harness's 2 eps
        Case("wrong: tighter bound than ftrun test's", op="add", inputs=[("a", x), ("b", x)],
             expect={"y": ((x + x) * np.float32(1 + 2e-6)).astype(np.float32)}, tol=BASIC, via_flag=()),
        Case("wrong: dtype", op="add", inputs=[("a", x), ("b", x)], expect={"y": (x + x).astype(np.float64)},
             via_flag=()),
        Case("right: inputs with --input", op="mul", inputs=[("a", x), ("b x", x)], expect={"y": x * x},
             via_flag=("a", "b x")),
        Case("right: expected error", op="add", inputs=[("a", x), ("b", x[:5])], exit_code=3,
             stderr_re="broadcast"),
        Case("wrong: an error that does not come", op="add", inputs=[("a", x), ("b", x)], exit_code=3,
             stderr_re="broadcast"),
    ]


def slow():
    nodes = [{"name": "m1", "op": "matmul", "inputs": ["a", "a"], "outputs": ["t1"]}]
    nodes += [{"name": "m%d" % k, "op": "matmul", "inputs": ["t%d" % (k - 1), "a"], "outputs": ["t%d" % k]}
              for k in range(2, 64)]
    nodes.append({"name": "m64", "op": "matmul", "inputs": ["t63", "a"], "outputs": ["y"]})
    x = np.arange(6, dtype=np.float32)
    return [
        Case("quick 1", op="neg", inputs=[("a", x)], expect={"y": -x}),
        Case("slow", nodes=nodes, tensors={"a": {"dtype": "f32", "shape": [3000, 3000], "init": {"fill": 0.001}}},
             graph_inputs=[], expect={"y": np.zeros((3000, 3000), np.float32)}),
        Case("quick 2", op="neg", inputs=[("a", x)], expect={"y": -x}),
    ]


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which not in ("verdicts", "slow"):
        print("usage: harness_selftest.py verdicts|slow", file=sys.stderr)
        sys.exit(2)
    sys.exit(harness.main(verdicts() if which == "verdicts" else slow(), workers=int(os.environ.get("FTNUM_JOBS", "2"))))
