"""Numeric cases of the f32 products that cpu/matmul_dnnl.c may run through
oneDNN's matmul primitive: one shared b (a constant of the graph, packed once,
or a graph input read in place), bias and activation, at odd sizes, one and
two threads; NaN and infinities through relu (ftrun's relu passes NaN, oneDNN's
relu post-op would not); the shapes the primitive leaves to matmul.c
(batches of b, broadcast or not, one product per thread; empty tensors;
K = 0); large products on one thread (cpu/blas.c may run them on OpenBLAS).
tests/run.sh runs every "matmul" and "gemm" case again with
FTRUN_MATMUL_IMPL=blas and =dnnl (ftrun(1)). The expectations are NumPy's, in
float64; the tolerance is the epilogue cases' of cases_reduce.py."""
import math

import numpy as np

from cases_reduce import act_ref, f64
from harness import Case, Tol, rng_for

NAN, INF = float("nan"), float("inf")


def tol(k, slope, scale, y):
    scale = np.nan_to_num(f64(scale), nan=0.0, posinf=0.0) + np.nan_to_num(np.abs(f64(y)), nan=0.0, posinf=0.0)
    return Tol(r=8, a=slope * (4 * math.sqrt(max(k, 1)) + 8), scale=scale)


def matmul_case(name, sa, sb, bias, act, threads, const_b, poison=None):
    """matmul a[sa] @ b[sb] (+ bias[N]) then act; b a constant of the graph when
    const_b (a "file" tensor outside the graph's inputs), else a graph input.
    poison(a, b, bias) may write NaN / inf into the arrays."""
    def build():
        rng = rng_for(name)
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        c = rng.standard_normal(sb[-1]).astype(np.float32) if bias else None
        if poison:
            poison(a, b, c)
        with np.errstate(invalid="ignore", over="ignore"):
            s = np.matmul(f64(a), f64(b))
            scale = np.matmul(np.abs(f64(a)), np.abs(f64(b)))
            ins = [("a", a), ("b", b)]
            if bias:
                s, scale = s + f64(c), scale + np.abs(f64(c))
                ins.append(("bias", c))
            y, slope = act_ref(act, s)
        return {"inputs": ins, "expect": {"y": y.astype(np.float32)}, "tol": tol(sa[-1], slope, scale, y)}
    gi = ["a"] + ([] if const_b else ["b"]) + (["bias"] if bias else [])
    return Case(name, "matmul", attrs={"activation": act}, args=["--threads", str(threads)], build=build,
                graph_inputs=gi, via_flag=("a",))


def gemm_case(name, m, k, n, ta, tb, crow, act, threads, const_b, poison=None):
    """gemm (alpha 1, beta 1) with c of shape crow ([N], [1,N] or None)."""
    def build():
        rng = rng_for(name)
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        c = rng.standard_normal(crow).astype(np.float32) if crow else None
        if poison:
            poison(a, b, c)
        A, B = (f64(a).T if ta else f64(a)), (f64(b).T if tb else f64(b))
        with np.errstate(invalid="ignore", over="ignore"):
            s, scale = A @ B, np.abs(A) @ np.abs(B)
            ins = [("a", a), ("b", b)]
            if crow:
                s, scale = s + f64(c), scale + np.abs(f64(c))
                ins.append(("c", c))
            y, slope = act_ref(act, s)
        return {"inputs": ins, "expect": {"y": y.astype(np.float32)}, "tol": tol(k, slope, scale, y)}
    gi = ["a"] + ([] if const_b else ["b"]) + (["c"] if crow else [])
    return Case(name, "gemm", attrs={"trans_a": ta, "trans_b": tb, "activation": act},
                args=["--threads", str(threads)], build=build, graph_inputs=gi, via_flag=("a",))


def nan_row(a, b, c):
    a[3, 5] = NAN


def inf_col(a, b, c):
    b[7, 9] = INF
    b[11, 2] = -INF


def nan_bias(a, b, c):
    c[2] = NAN


def inf_a(a, b, c):
    a[1, 4] = INF  # gemm trans_a=0: row 1 of the product


def cases():
    c = []
    # matmul, shared b: 2-D, odd sizes, tall batches folded into M, b with leading 1s
    for sa, sb, bias, act, th, const in (
            ((300, 257), (257, 129), True, "relu", 1, True), ((300, 257), (257, 129), True, "relu", 2, True),
            ((300, 257), (257, 129), False, "none", 2, False), ((2, 3, 67, 128), (128, 200), True, "gelu", 2, True),
            ((2, 3, 67, 128), (128, 200), False, "relu", 1, False), ((4, 50, 128), (1, 128, 200), True, "gelu_tanh", 1,
                                                                       True),
            ((256, 1024), (1024, 512), True, "relu", 2, True), ((9, 2000), (2000, 33), True, "none", 1, True),
            ((129, 64), (64, 8), True, "relu", 2, True),
            # at least 2^25 multiply-adds on one thread: OpenBLAS where oneDNN has no AVX-512 (blas.c)
            ((2, 64, 512), (512, 1024), True, "gelu", 1, True)):
        name = "matmul f32 impl %s@%s%s activation=%s threads=%d b=%s" % (
            list(sa), list(sb), " + bias" if bias else "", act, th, "constant" if const else "input")
        c.append(matmul_case(name, sa, sb, bias, act, th, const))
    # shapes the primitive leaves to matmul.c: broadcast batches, empty, K = 0
    for sa, sb, bias, act, th, const in (
            ((3, 1, 40, 64), (2, 64, 130), True, "relu", 2, True), ((2, 40, 64), (2, 64, 130), False, "none", 1, False),
            ((0, 128), (128, 64), True, "relu", 1, True), ((64, 0), (0, 64), True, "relu", 1, True),
            ((64, 128), (128, 0), False, "none", 1, True),
            # many large products: one per thread (matmul.c), with and without broadcasting
            ((8, 128, 64), (8, 64, 300), False, "none", 2, False), ((2, 4, 128, 64), (4, 64, 300), True, "relu", 2,
                                                                     True)):
        name = "matmul f32 impl %s@%s%s activation=%s threads=%d b=%s" % (
            list(sa), list(sb), " + bias" if bias else "", act, th, "constant" if const else "input")
        c.append(matmul_case(name, sa, sb, bias, act, th, const))
    # NaN and infinities: relu passes NaN (the relu post-op would not)
    for tag, poison in (("NaN in a", nan_row), ("+-inf in b", inf_col), ("NaN in bias", nan_bias)):
        for act, const in (("relu", True), ("relu", False), ("none", True), ("gelu", True)):
            name = "matmul f32 impl [64,128]@[128,96] + bias activation=%s b=%s %s" % (
                act, "constant" if const else "input", tag)
            c.append(matmul_case(name, (64, 128), (128, 96), True, act, 1, const, poison))
    # gemm: transpositions, a bias row [N] or [1,N], no c
    for m, k, n, ta, tb, crow, act, th, const in (
            (150, 200, 90, 1, 1, (1, 90), "relu", 1, True), (150, 200, 90, 0, 1, (90,), "gelu_tanh", 2, False),
            (256, 1024, 512, 0, 1, (512,), "relu", 2, True), (257, 300, 131, 1, 0, None, "none", 1, True),
            (64, 300, 64, 0, 0, (64,), "gelu", 2, True),
            # 2^25 multiply-adds on one thread, B^T with rows 1024 floats apart (blas.c: OpenBLAS
            # where oneDNN has no AVX-512), and with A transposed (oneDNN)
            (128, 1024, 256, 0, 1, (256,), "relu", 1, True), (256, 1024, 128, 1, 1, (1, 128), "none", 1, True),
            # ... on two threads, C's columns split in blocks of 512 and 488 (blas.c)
            (128, 1024, 1000, 0, 1, (1000,), "gelu", 2, True)):
        name = "gemm f32 impl M=%d K=%d N=%d trans_a=%d trans_b=%d c=%s activation=%s threads=%d b=%s" % (
            m, k, n, ta, tb, list(crow) if crow else "none", act, th, "constant" if const else "input")
        c.append(gemm_case(name, m, k, n, ta, tb, crow, act, th, const))
    for act in ("relu", "none"):
        name = "gemm f32 impl M=64 K=128 N=96 trans_b=1 c=[96] activation=%s b=constant inf in a" % act
        c.append(gemm_case(name, 64, 128, 96, 0, 1, (96,), act, 1, True, inf_a))
    return c
