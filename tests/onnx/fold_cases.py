#!/usr/bin/env python3
"""Load-time folding of ONNX shape arithmetic, checked against NumPy.

Each case is a small ONNX model (built here with onnx.helper) whose output is
computed from constants and from the shapes of its inputs only, so ftrun
folds all of it at load time (src/onnx/onnx_fold.c); NumPy computes the same
thing independently. Prints TAP.

    FTRUN=build/ftrun /usr/bin/python3 tests/onnx/fold_cases.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FTRUN = os.environ.get("FTRUN", "build/ftrun")
I64 = TensorProto.INT64
F32 = TensorProto.FLOAT


def const(name, arr):
    arr = np.asarray(arr)
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_v"))


def model(nodes, inputs, out, out_type, opset=13):
    g = helper.make_graph(nodes, "fold", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(out, out_type, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="fold_cases")
    m.ir_version = 8
    return m


def cases():
    x = ("x", F32, [2, 3, 4])
    # Shape -> Gather -> Unsqueeze -> Concat: the usual reshape target of an export
    yield ("shape_gather_concat", model([
        helper.make_node("Shape", ["x"], ["s"]),
        const("i0", np.array(0, np.int64)),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        const("ax", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
        const("m1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["bu", "m1"], ["y"], axis=0),
    ], [x], "y", I64), {"x": (2, 3, 4)}, lambda: np.array([2, -1], np.int64))
    # Shape with start/end (opset 15), Slice with negative steps, ReduceProd
    yield ("shape_slice_reduceprod", model([
        helper.make_node("Shape", ["x"], ["s"], start=1),
        const("st", np.array([-1], np.int64)), const("en", np.array([-10], np.int64)),
        const("ax", np.array([0], np.int64)), const("sp", np.array([-1], np.int64)),
        helper.make_node("Slice", ["s", "st", "en", "ax", "sp"], ["r"]),
        helper.make_node("ReduceProd", ["r"], ["y"], keepdims=0),
    ], [x], "y", I64, opset=15), {"x": (2, 3, 4)}, lambda: np.array(12, np.int64))
    # Slice with INT64_MAX ends, as exporters write "to the end"
    yield ("slice_int64_max", model([
        helper.make_node("Shape", ["x"], ["s"]),
        const("st", np.array([1], np.int64)), const("en", np.array([2**63 - 1], np.int64)),
        helper.make_node("Slice", ["s", "st", "en"], ["y"]),
    ], [("x", F32, [5, 6, 7])], "y", I64), {"x": (5, 6, 7)}, lambda: np.array([6, 7], np.int64))
    # arithmetic, Cast to float and back, Div truncation of positive values
    yield ("arith_cast", model([
        helper.make_node("Shape", ["x"], ["s"]),
        const("two", np.array(2, np.int64)),
        helper.make_node("Mul", ["s", "two"], ["m"]),
        const("three", np.array(3, np.int64)),
        helper.make_node("Div", ["m", "three"], ["d"]),
        helper.make_node("Cast", ["d"], ["f"], to=F32),
        const("half", np.array(0.5, np.float32)),
        helper.make_node("Add", ["f", "half"], ["y"]),
    ], [x], "y", F32), {"x": (2, 3, 4)}, lambda: (np.array([2, 3, 4]) * 2 // 3).astype(np.float32) + np.float32(0.5))
    # ConstantOfShape, Range, Equal, Where, Expand, Tile, Transpose
    yield ("constant_of_shape", model([
        const("sh", np.array([2, 3], np.int64)),
        helper.make_node("ConstantOfShape", ["sh"], ["y"], value=numpy_helper.from_array(np.array([7], np.int32))),
    ], [], "y", TensorProto.INT32), {}, lambda: np.full((2, 3), 7, np.int32))
    yield ("range_where_equal", model([
        const("a", np.array(0, np.int64)), const("b", np.array(10, np.int64)), const("c", np.array(3, np.int64)),
        helper.make_node("Range", ["a", "b", "c"], ["r"]),
        const("six", np.array(6, np.int64)),
        helper.make_node("Equal", ["r", "six"], ["e"]),
        const("neg", np.array(-1, np.int64)),
        helper.make_node("Where", ["e", "neg", "r"], ["y"]),
    ], [], "y", I64), {}, lambda: np.where(np.arange(0, 10, 3) == 6, -1, np.arange(0, 10, 3)))
    yield ("range_float", model([
        const("a", np.array(1.0, np.float32)), const("b", np.array(-2.0, np.float32)),
        const("c", np.array(-0.75, np.float32)),
        helper.make_node("Range", ["a", "b", "c"], ["y"]),
    ], [], "y", F32), {}, lambda: np.arange(1.0, -2.0, -0.75, dtype=np.float32))
    t = np.arange(6, dtype=np.float32).reshape(2, 3)
    yield ("expand_tile_transpose", model([
        const("t", t), const("es", np.array([2, 2, 3], np.int64)),
        helper.make_node("Expand", ["t", "es"], ["e"]),
        helper.make_node("Transpose", ["e"], ["tr"], perm=[2, 0, 1]),
        const("rep", np.array([1, 2, 1], np.int64)),
        helper.make_node("Tile", ["tr", "rep"], ["y"]),
    ], [], "y", F32), {}, lambda: np.tile(np.transpose(np.broadcast_to(t, (2, 2, 3)), (2, 0, 1)), (1, 2, 1)))
    yield ("squeeze_reshape_reducesum", model([
        const("t", np.arange(24, dtype=np.int64).reshape(1, 4, 6)),
        const("sax", np.array([0], np.int64)),
        helper.make_node("Squeeze", ["t", "sax"], ["s"]),
        const("rs", np.array([0, -1, 2], np.int64)),
        helper.make_node("Reshape", ["s", "rs"], ["r"]),
        const("rax", np.array([1], np.int64)),
        helper.make_node("ReduceSum", ["r", "rax"], ["y"], keepdims=1),
    ], [], "y", I64), {}, lambda: np.arange(24).reshape(4, 3, 2).sum(axis=1, keepdims=True))
    # If whose condition folds: the branch taken is imported
    then_g = helper.make_graph([const("tv", np.array([1, 2], np.int64))], "then", [],
                               [helper.make_tensor_value_info("tv", I64, None)])
    else_g = helper.make_graph([const("ev", np.array([3], np.int64))], "else", [],
                               [helper.make_tensor_value_info("ev", I64, None)])
    yield ("if_folded", model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Size", ["s"], ["n"]),
        const("three", np.array(3, np.int64)),
        helper.make_node("Equal", ["n", "three"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
    ], [x], "y", I64), {"x": (2, 3, 4)}, lambda: np.array([1, 2], np.int64))
    # Gather with negative indices and a 2-D index tensor; Concat of floats
    yield ("gather_negative_2d", model([
        const("t", np.arange(12, dtype=np.float32).reshape(3, 4)),
        const("idx", np.array([[-1, 0], [1, -2]], np.int64)),
        helper.make_node("Gather", ["t", "idx"], ["y"], axis=1),
    ], [], "y", F32), {}, lambda: np.take(np.arange(12, dtype=np.float32).reshape(3, 4), [[3, 0], [1, 2]], axis=1))
    # EyeLike of a constant: folded (checked by the no-input rule below), an i32 dtype
    yield ("eye_like_constant", model([
        const("c", np.zeros((4, 3), np.float32)),
        helper.make_node("EyeLike", ["c"], ["y"], k=1, dtype=TensorProto.INT32),
    ], [], "y", TensorProto.INT32), {}, lambda: np.eye(4, 3, 1, dtype=np.int32))
    # EyeLike of a graph input: not folded, the eye_like op; diagonals above and below
    for k in (-2, 3):
        yield ("eye_like_k%d" % k, model([
            helper.make_node("EyeLike", ["x"], ["y"], k=k),
        ], [("x", F32, [3, 5])], "y", F32), {"x": (3, 5)}, lambda k=k: np.eye(3, 5, k, dtype=np.float32))
    # symbolic batch dim bound from the input file
    xb = ("x", F32, ["batch", 3])
    yield ("symbolic_dim_shape", model([
        helper.make_node("Shape", ["x"], ["y"]),
    ], [xb], "y", I64), {"x": (5, 3)}, lambda: np.array([5, 3], np.int64))


def elementwise_cases():
    """The elementwise ops folded since opsets 24-28 came in (Mod, Pow,
    BitShift, the bitwise ops, CastLike and the float unary ops), each on
    constants, against NumPy (float ops in float64, then rounded to f32)."""
    import math
    U8 = TensorProto.UINT8

    def one(name, op, arrays, out_type, want, opset=18, **attrs):
        names = ["a%d" % i for i in range(len(arrays))]
        nodes = [const(k, v) for k, v in zip(names, arrays)] + [helper.make_node(op, names, ["y"], **attrs)]
        return (name, model(nodes, [], "y", out_type, opset), {}, lambda: want)

    a = np.array([-7, 7, -7, 7, 0], np.int64)
    b = np.array([3, -3, -3, 3, 5], np.int64)
    yield one("mod_int_python_sign", "Mod", [a, b], I64, np.mod(a, b))
    yield one("mod_int_fmod", "Mod", [a, b], I64, np.fmod(a, b), fmod=1)
    fa, fb = np.array([-7.5, 7.5, 5.25], np.float32), np.array([2.0, -2.0, 0.5], np.float32)
    yield one("mod_float_fmod", "Mod", [fa, fb], F32, np.fmod(fa, fb), fmod=1)
    yield one("pow_int", "Pow", [np.array([2, 3, -2, 7], np.int64), np.array([10, 3, 3, 0], np.int64)], I64,
              np.array([1024, 27, -8, 1], np.int64))
    yield one("pow_float", "Pow", [np.array([2.0, 9.0, 0.5], np.float32), np.array([0.5, 1.5, -2.0], np.float32)], F32,
              np.power(np.array([2.0, 9.0, 0.5]), np.array([0.5, 1.5, -2.0])).astype(np.float32))
    u = np.array([1, 128, 255, 3], np.uint8)
    sh = np.array([3, 1, 4, 9], np.uint8)
    yield one("bitshift_left_u8", "BitShift", [u, sh], U8,
              np.array([8, 0, 240, 0], np.uint8), direction="LEFT")
    yield one("bitshift_right_u8", "BitShift", [u, sh], U8, np.array([0, 64, 15, 0], np.uint8), direction="RIGHT")
    yield one("bitwise_and_or_xor", "BitwiseXor", [a, b], I64, np.bitwise_xor(a, b))
    yield one("bitwise_not", "BitwiseNot", [a], I64, np.invert(a))
    yield one("castlike", "CastLike", [np.array([3, -1], np.int64), np.array([0.5], np.float32)], F32,
              np.array([3.0, -1.0], np.float32))
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 0.25], np.float32)
    x64 = x.astype(np.float64)
    yield one("round_half_even", "Round", [x], F32, np.round(x))
    yield one("sign_float", "Sign", [x], F32, np.sign(x))
    yield one("sign_int", "Sign", [a], I64, np.sign(a))
    yield one("relu_int", "Relu", [a], I64, np.maximum(a, 0), opset=14)
    for op, f in (("Reciprocal", lambda v: 1 / v), ("Exp", np.exp), ("Sigmoid", lambda v: 1 / (1 + np.exp(-v))),
                  ("Tanh", np.tanh), ("Sin", np.sin), ("Cos", np.cos),
                  ("Erf", np.vectorize(math.erf))):
        yield one(op.lower(), op, [x], F32, f(x64).astype(np.float32))
    yield one("log", "Log", [np.abs(x)], F32, np.log(np.abs(x64)).astype(np.float32))
    # CastLike whose second input is a graph input: only its type is read, so the cast still folds
    yield ("castlike_graph_input_type", model([
        const("c", np.array([3, -1, 7], np.int64)),
        helper.make_node("CastLike", ["c", "x"], ["y"]),
    ], [("x", F32, [2])], "y", F32, 15), {"x": (2,)}, lambda: np.array([3.0, -1.0, 7.0], np.float32))


def main():
    n = 0
    failed = 0
    all_cases = list(cases()) + list(elementwise_cases())
    print(f"1..{len(all_cases)}")
    with tempfile.TemporaryDirectory() as d:
        for name, m, inputs, oracle in all_cases:
            n += 1
            path = os.path.join(d, name + ".onnx")
            onnx.save(m, path)
            args = [FTRUN, "run", path, "-o", os.path.join(d, name + "_out"), "-q", "-n", "1"]
            for k, shape in inputs.items():
                f = os.path.join(d, f"{name}_{k}.npy")
                np.save(f, np.random.default_rng(n).standard_normal(shape).astype(np.float32))
                args += ["-i", f"{k}={f}"]
            r = subprocess.run(args, capture_output=True, text=True)
            want = oracle()
            ok = r.returncode == 0
            why = r.stderr.strip()
            if ok:
                got = np.load(os.path.join(d, name + "_out", "y.npy"))
                ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
                why = f"got {got.dtype} {got.shape} {got.ravel()[:8]}, want {want.dtype} {want.shape} {want.ravel()[:8]}"
            if ok and not inputs:
                # everything folded: the graph that runs is one copy into the output
                info = subprocess.run([FTRUN, "info", path], capture_output=True, text=True).stdout
                ok = "nodes: 1," in info and "folded at load time" in info
                why = "not everything was folded:\n" + info
            print(("ok" if ok else "not ok") + f" {n} - onnx fold {name}")
            if not ok:
                failed += 1
                print("# " + why.replace("\n", "\n# "))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
