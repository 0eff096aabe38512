#!/usr/bin/python3
"""Numeric test tier: every op of this version run by ftrun on a one-node graph and
compared with NumPy computed here.  Prints TAP; exits 1 if any case failed.

Run: FTRUN=build/ftrun /usr/bin/python3 tests/numeric/test_ops.py
     FTNUM_ONLY=REGEX to run only the cases whose name matches.
     FTNUM_ARGS="-d cuda" options of every ftrun run (the device); FTNUM_TAG a prefix
       of the case names; FTNUM_WRAP a command before ftrun; FTNUM_TIMEOUT seconds a
       case may run (default 120); FTNUM_STATS=1 how much of its tolerance each used.
     FTNUM_MODE=batch (the default, unless FTNUM_WRAP is set) or run; FTNUM_JOBS cases
       at once (run mode's processes, default 2); FTNUM_TEST_JOBS the workers of
       ftrun test in batch mode (default FTNUM_JOBS).
     tests/cuda/batch_same.sh numeric checks that both modes give every case the same verdict.

How a case works: inputs are written with np.save and declared under "tensors" (about a
third are fed with --input NAME=FILE instead of "file"), ftrun runs the graph with
`run graph.json -o OUT -q`, and OUT/<output>.npy is compared with the expectation.
That is run mode, one process per case. Batch mode (tests/numeric/batch.py) writes each
case as a test folder instead (the --input files as inputs/NAME.npy, the expectation as
expected/NAME.npy) and runs them all with one `ftrun test -j N --save-outputs OUT`, whose
workers open the device once each; the saved outputs are then compared here in the same
way. The cases that expect an error, or give ftrun test an option it does not take
(--seed, -w, -n), run in run mode there too.  The
expectation never comes from ftrun: float results are computed in float64 from the exact
input values (then rounded to the output dtype), integer results with Python integers
and the documented wrap-around/truncation rules (NUMERICS in man/ftrun-graph.5).

Comparison (harness.compare): the dtype and the shape must match exactly; for floats the
NaN positions must match and infinities must be the same infinity.  Values:
  exact      data movement (reshape ... pad, gather), integer and bool results,
             comparisons, is_nan/is_inf, floor/ceil/round, relu/neg/abs/sign/clip,
             max/min, reduce_max/min, argmax/argmin, cast (rounding to nearest even is
             fully specified), fill/arange init values.
  BASIC      2 eps relative (f32 eps 1.19e-7, f64 2.2e-16): one or two correctly rounded
             IEEE operations (add, sub, mul, div, mod, sqrt, reciprocal, leaky_relu);
             rsqrt 4 eps, softsign 3 eps.
  MATH       8 eps relative for f32 (glibc's libm is within 1-3 ulp; short compositions
             such as sigmoid = 1/(1+exp(-x)) add a few roundings); 1e-12 relative for f64,
             whose oracle is itself computed in f64 with its own rounding.  Used for
             sigmoid, tanh, exp, log, erf (oracle: math.erf vectorised), silu, pow.
  + absolute terms where the exact result is near 0 but the formula cancels:
             sin/cos 2 eps; softplus 2 eps; elu/celu/selu 4-8 eps times alpha*gamma
             (exp(x)-1 near 0); hard_sigmoid 2 eps; gelu, mish, hard_swish 8 eps * |x|
             (x * (1 + f(x)) with f(x) -> -1).
  reductions, matmul, gemm, cumsum: |got - exp| <= 2 eps |exp| + (4 sqrt(K) + 2) eps S
             where K is the number of terms and S the sum of |terms| (|A| @ |B| for
             matrix products, plus |beta C|); random rounding errors grow like sqrt(K).
             reduce_prod: (4 + 2) (K+1) eps |prod|; log_sum_exp: S = 1 + |result|.
  softmax:   relative (4 sqrt(K) + 16 + |x - max|) eps per element (exp amplifies the
             rounding of x - max); log_softmax absolute 4 eps (|x - max| + |log sum| +
             sqrt(K) + |y|); both plus the smallest normal for underflow.
  layer_norm/rms_norm: absolute (4 sqrt(K) + 16) eps (|xhat| + 1 + |mean| inv_std) |scale|
             + |bias|: the |mean| inv_std term is what an f32 two-pass algorithm loses on
             inputs whose mean is large against their spread (a one-pass E[x^2]-E[x]^2 in
             f32 loses that term squared, and fails the "offset 50" cases).
  init:      uniform/normal within 1 ulp of the dtype: the generator is computed in
             double by both sides and rounded once, so only a double result straddling a
             rounding boundary of the dtype can differ (by 1 ulp); f64 normal allows 8
             ulp because NumPy's and glibc's log and cos may each differ by a few ulp.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import glob  # noqa: E402
import importlib  # noqa: E402

import harness  # noqa: E402
import philox  # noqa: E402


# Large cases rerun with an odd thread count: uneven OpenMP chunks and boundaries.
THREADED = ("add f32 big", "exp f32 256x1024", "cast f32 to i8", "reduce_sum f32 64x128x256 axes=[1]",
            "reduce_max f32 64x128x256 axes=[0, 2]", "argmax f32 64x128x256 axis=1", "cumsum f32 64x1000 axis=0",
            "softmax f32 64x1024", "matmul f32 [512, 512]", "transpose f32 default perm big", "layer_norm f32 4x768",
            "rms_norm f32 4x4096", "gather f32 embedding", "pad f32 big constant", "where f32 big",
            "init uniform f32 1000x1000", "layer_norm f32 64x2100", "global_average_pool f32 2x64x56x56",
            "softmax f32 16x300")


def all_cases():
    # every tests/numeric/cases_*.py module contributes its cases()
    here = os.path.dirname(os.path.abspath(__file__))
    cs = []
    for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
        cs += importlib.import_module(os.path.basename(path)[:-3]).cases()
    extra = []
    for c in cs:
        if c.name.startswith(THREADED):
            t = copy.copy(c)
            t.name, t.args = c.name + " --threads 3", c.args + ["--threads", "3"]
            extra.append(t)
    return cs + extra


if __name__ == "__main__":
    np.seterr(all="ignore")
    err = philox.self_check()
    if err:  # the oracle itself must be right before it judges ftrun
        print("1..1\nnot ok 1 - philox oracle self-check\n# " + err)
        sys.exit(1)
    sys.exit(harness.main(all_cases(), workers=int(os.environ.get("FTNUM_JOBS", "2"))))
