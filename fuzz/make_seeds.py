#!/usr/bin/python3
"""Regenerates the seed corpora of fuzz/corpus/ (run from the repository root
with a built build/ftrun: /usr/bin/python3 fuzz/make_seeds.py).

  json/  graphs/*.json, tests/cli/data/*.json, one-node graphs of every op taken
         from the numeric test cases (inputs written inline as "data"), and
         graphs using "init", "file" (w.bin, w.npy: the files the harness puts
         beside the graph) and the error paths of the format
  ftg/   small JSON seeds packed with `ftrun pack` (raw and --compress)
  npy/   np.save of every dtype, scalar, empty, Fortran-order, version 2.0
  npz/   np.savez / np.savez_compressed archives
  onnx/  the smallest model of each op of ONNX's node tests (libonnx-testdata),
         models with initializers, external data (w.bin beside the model),
         symbolic dims, a shape computed at run time, and two tiny PyTorch
         exports (a conv net, an attention block)
  pb/    TensorProto files: inputs of the node tests, one per dtype and rank
and fuzz/json.dict (libFuzzer dictionary of the graph format: keys, dtypes, op
and attribute names from src/graph/ops.def, the .ftg magic), used by the json
and ftg harnesses.
Existing files of the same name are overwritten; nothing else is removed."""
import glob
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")
FTRUN = os.environ.get("FTRUN", os.path.join(ROOT, "build", "ftrun"))


def put(kind, name, data):
    d = os.path.join(OUT, kind)
    os.makedirs(d, exist_ok=True)
    mode = "w" if isinstance(data, str) else "wb"
    with open(os.path.join(d, name), mode) as f:
        f.write(data)


def jval(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def inline(arr):
    a = np.asarray(arr)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    flat = [jval(v) for v in a.reshape(-1).tolist()]
    return flat[0] if a.ndim == 0 else flat


def light(path):
    """The graph with every random "init" of more than 1024 elements made a
    "fill": random values cost most of a fuzzing run and add no coverage."""
    g = json.load(open(path))
    for d in (g.get("tensors") or {}).values():
        init = d.get("init") if isinstance(d, dict) else None
        if isinstance(init, dict) and ("uniform" in init or "normal" in init) and \
                int(np.prod(d.get("shape", []), dtype=np.int64)) > 1024:
            d["init"] = {"fill": 0.5}
    return json.dumps(g, separators=(",", ":"))


def op_graphs():
    sys.path.insert(0, os.path.join(ROOT, "tests", "numeric"))
    import harness
    import test_ops
    np.seterr(all="ignore")
    per_op = {}
    for c in test_ops.all_cases():
        try:
            if c.build:
                for k, v in c.build().items():
                    setattr(c, k, v)
        except Exception:
            continue
        arrs = [s for s in c.inputs if s is not None]
        total = sum(np.size(s[1]) for s in arrs)
        if total > 100000:
            continue
        tmp = tempfile.mkdtemp(prefix="ftseed-")
        try:
            path, _, _ = harness._graph(c, tmp)
            g = json.load(open(path))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for s in arrs:
            d = g["tensors"][s[0]]
            d.pop("file", None)
            if total <= 64:
                d["data"] = inline(s[1])
            else:  # larger inputs as "init", keeping the seed small (and fast: see light())
                d["init"] = {"uniform": {"low": -2, "high": 2}} \
                    if d["dtype"] in ("f16", "bf16", "f32", "f64") and np.size(s[1]) <= 1024 else {"fill": 1}
        text = json.dumps(g, separators=(",", ":"))
        per_op.setdefault(c.op or "multi", []).append((total > 64, len(text), c.exit_code != 0, text))
    n = 0
    for op, gs in sorted(per_op.items()):
        gs.sort()
        ok = [t for t in gs if not t[2]][:2]
        bad = [t for t in gs if t[2]][:1]
        for k, (_, _, _, text) in enumerate(ok + bad):
            put("json", "op_%s_%d.json" % (op, k), text)
            n += 1
    return n


HAND = {
    "init_all": {"ftrun": 1, "name": "inits", "tensors": {
        "a": {"dtype": "f32", "shape": [2, 3], "init": {"uniform": {"low": -1, "high": 1}, "seed": 7}},
        "b": {"dtype": "f64", "shape": [3], "init": {"normal": {"mean": 0, "std": 2}}},
        "c": {"dtype": "i32", "shape": [4], "init": {"arange": {"start": 1, "step": 2}}},
        "d": {"dtype": "bf16", "shape": [], "init": {"fill": 1.5}},
        "e": {"dtype": "u8", "shape": [0, 3], "init": {"fill": 0}}},
        "outputs": ["y", "z"], "nodes": [
            {"op": "add", "inputs": ["a", "a"], "outputs": ["y"]},
            {"op": "reduce_sum", "inputs": ["b"], "outputs": ["z"], "attrs": {"axes": [0], "keepdims": 0}}]},
    "files": {"ftrun": 1, "tensors": {
        "raw": {"dtype": "i16", "shape": [4, 8], "file": "w.bin", "offset": 64},
        "n": {"dtype": "f32", "shape": [4, 4], "file": "w.npy"},
        "nb": {"dtype": "bf16", "shape": [4, 4], "file": "w.npy"}},
        "outputs": ["y"], "nodes": [{"op": "matmul", "inputs": ["n", "nb"], "outputs": ["y"]}]},
    "inputs_decl": {"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [2, 4]},
                                            "h": {"dtype": "f32", "shape": [2, 4]}},
                    "inputs": ["x"], "outputs": ["y"], "nodes": [
                        {"name": "a", "op": "relu", "inputs": ["x"], "outputs": ["h"]},
                        {"name": "b", "op": "softmax", "inputs": ["h"], "outputs": ["y"], "attrs": {"axis": -1}}]},
    "nested_data": {"ftrun": 1, "tensors": {"m": {"dtype": "bool", "shape": [2, 2], "data": [[True, False], [0, 1]]},
                                            "s": {"dtype": "f16", "shape": [], "data": "-inf"}},
                    "outputs": ["y"], "nodes": [{"op": "not", "inputs": ["m"], "outputs": ["y"]}]},
    "cycle": {"ftrun": 1, "tensors": {}, "outputs": ["a"], "nodes": [
        {"op": "neg", "inputs": ["b"], "outputs": ["a"]}, {"op": "neg", "inputs": ["a"], "outputs": ["b"]}]},
    "two_producers": {"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [1], "data": [1]}}, "outputs": ["y"],
                      "nodes": [{"op": "exp", "inputs": ["x"], "outputs": ["y"]},
                                {"op": "log", "inputs": ["x"], "outputs": ["y"]}]},
    "version2": {"ftrun": 2, "outputs": ["y"], "nodes": []},
}


def hand_graphs():
    for name, g in HAND.items():
        put("json", "hand_%s.json" % name, json.dumps(g, indent=1))
    put("json", "hand_syntax.json", '{"ftrun": 1, "nodes": [ {"op": "add", }\n')
    return len(HAND) + 1


def ftg_seeds():
    srcs = ["hand_init_all.json", "hand_nested_data.json", "op_add_0.json", "op_matmul_0.json",
            "op_gather_0.json", "op_conv_0.json", "op_where_0.json", "op_cast_0.json"]
    tmp = tempfile.mkdtemp(prefix="ftseed-")
    n = 0
    try:
        for s in srcs:
            src = os.path.join(OUT, "json", s)
            if not os.path.exists(src):
                continue
            for comp in (False, True):
                out = os.path.join(tmp, "g.ftg")
                cmd = [FTRUN, "pack", src, "-o", out] + (["--compress"] if comp else [])
                if subprocess.run(cmd, capture_output=True).returncode != 0:
                    continue
                data = open(out, "rb").read()
                if len(data) <= 16384:
                    put("ftg", "%s%s.ftg" % (s[:-5], "_z" if comp else ""), data)
                    n += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return n


def npy_bytes(a, **kw):
    b = io.BytesIO()
    np.lib.format.write_array(b, a, allow_pickle=False, **kw)
    return b.getvalue()


def npy_seeds():
    arrs = {
        "f16": np.array([1.5, -2, np.inf], np.float16), "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f64": np.array([[np.nan]]), "i8": np.array([-128, 127], np.int8), "i16": np.arange(4, dtype=np.int16),
        "i32": np.array(7, np.int32), "i64": np.array([2 ** 62, -1]), "u8": np.arange(5, dtype=np.uint8),
        "bool": np.array([True, False]), "empty": np.zeros((3, 0), np.float32),
        "fortran": np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
        "rank8": np.ones((1, 2, 1, 2, 1, 1, 2, 1), np.float32),
    }
    for k, a in arrs.items():
        put("npy", k + ".npy", npy_bytes(a))
    put("npy", "v2.npy", npy_bytes(np.arange(3, dtype=np.float64), version=(2, 0)))
    put("npy", "v3.npy", npy_bytes(np.arange(3, dtype=np.int64), version=(3, 0)))
    put("npy", "bigendian.npy", npy_bytes(np.arange(3, dtype=">f4")))
    return len(arrs) + 3


def npz_seeds():
    sets = {
        "one": {"y": np.arange(6, dtype=np.float32).reshape(2, 3)},
        "many": {"a": np.array([1, 2], np.int8), "b/c": np.array(True), "e": np.zeros((0,), np.float64)},
    }
    n = 0
    for k, d in sets.items():
        for comp in (False, True):
            b = io.BytesIO()
            (np.savez_compressed if comp else np.savez)(b, **d)
            put("npz", "%s%s.npz" % (k, "_z" if comp else ""), b.getvalue())
            n += 1
    b = io.BytesIO()
    np.savez(b)
    put("npz", "empty.npz", b.getvalue())
    return n + 1


def make_dict():
    import re
    words = ["ftrun", "name", "tensors", "inputs", "outputs", "nodes", "op", "attrs", "dtype", "shape", "data",
             "file", "offset", "init", "blob", "fill", "arange", "uniform", "normal", "seed", "start", "step",
             "low", "high", "mean", "std", "nbytes", "encoding", "stored", "crc32", "raw", "zlib",
             "f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool", "float16", "bfloat16", "float32",
             "float64", "int8", "int16", "int32", "int64", "uint8", "bool_", "nan", "inf", "-inf", "+inf",
             "w.bin", "w.npy", "../w.bin", "/etc/hostname"]
    ops_def = open(os.path.join(ROOT, "src", "graph", "ops.def")).read()
    for m in re.finditer(r'^X\(\w+, "(\w+)", [^"]*"([^"]*)"', ops_def, re.M):
        words.append(m.group(1))
        for a in m.group(2).split():
            words.append(a.split(":")[0])
    seen, lines = set(), ["# libFuzzer dictionary of the ftrun graph format (written by fuzz/make_seeds.py)"]
    for w in words:
        if w not in seen:
            seen.add(w)
            lines.append('"\\"%s\\""' % w)
    lines += ['":"', '"{"', '"}"', '"["', '"]"', '","', '"true"', '"false"', '"null"', '"[]"', '"-1"', '"0"', '"1"',
              '"9223372036854775807"', '"-9223372036854775808"', '"1e308"', '"4294967296"',
              '"\\x89FTG\\x0d\\x0a\\x1a\\x0a"', '"\\x01\\x00\\x00\\x00"']
    with open(os.path.join(ROOT, "fuzz", "json.dict"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines) - 1


NODE_TESTS = "/usr/share/libonnx-testdata/data/node"


def onnx_seeds():
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    n = 0
    best = {}
    for m in sorted(glob.glob(os.path.join(NODE_TESTS, "*", "model.onnx"))):
        size = os.path.getsize(m)
        if size > 2048:
            continue
        model = onnx.load(m)
        ops = tuple(sorted({nd.op_type for nd in model.graph.node}))
        # ftrun reads opsets 7 to 23: an older model only reaches the version check
        old = min([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [0]) < 7
        if ops not in best or (old, size) < best[ops][0]:
            best[ops] = ((old, size), m)
    for _, m in sorted(best.values(), key=lambda v: v[1]):
        put("onnx", "node_" + os.path.basename(os.path.dirname(m))[5:] + ".onnx", open(m, "rb").read())
        n += 1

    def model(nodes, inputs, outputs, inits=(), opset=13):
        g = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m

    def vi(name, dt, shape):
        return helper.make_tensor_value_info(name, dt, shape)
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    hand = {"add_init": model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")],
                              [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [w]),
            "symbolic_batch": model([helper.make_node("Relu", ["x"], ["y"])],
                                    [vi("x", F, ["batch", 3])], [vi("y", F, ["batch", 3])]),
            "reshape_from_input": model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                                        [vi("x", F, [2, 3]), vi("s", I64, [2])], [vi("y", F, [3, 2])]),
            "shape_arith": model([helper.make_node("Shape", ["x"], ["s"]),
                                  helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
                                  helper.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
                                  helper.make_node("Concat", ["bu", "m1"], ["t"], axis=0),
                                  helper.make_node("Reshape", ["x", "t"], ["y"])],
                                 [vi("x", F, ["batch", 2, 3])], [vi("y", F, ["batch", 6])],
                                 [numpy_helper.from_array(np.array(0, np.int64), "i0"),
                                  numpy_helper.from_array(np.array([0], np.int64), "ax"),
                                  numpy_helper.from_array(np.array([-1], np.int64), "m1")])}
    ext = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
                [TensorProto(name="w", data_type=F, dims=[2, 3])])
    t = ext.graph.initializer[0]
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "16"), ("length", "24")):
        e = t.external_data.add()
        e.key, e.value = k, v
    hand["external_w_bin"] = ext
    hand.update(fusion_seeds(model, vi))
    for name, m in hand.items():
        put("onnx", name + ".onnx", m.SerializeToString())
        n += 1
    n += torch_seeds()
    return n


def fusion_seeds(model, vi):
    """The expanded forms the optimizer fuses (src/opt/optimize_forms.c),
    so that mutations start next to each pattern: softmax, log_softmax,
    rms_norm, attention with a where mask (the causal one, negated) and an
    additive one, layer_norm, gelu, silu."""
    from onnx import helper, numpy_helper, TensorProto
    F = TensorProto.FLOAT
    C = lambda name, v: numpy_helper.from_array(np.asarray(v, dtype=np.float32), name)
    N = helper.make_node
    x = [vi("x", F, [2, 4, 8])]
    y = [vi("y", F, None)]
    ax = numpy_helper.from_array(np.array([-1], np.int64), "ax")
    sm = [N("ReduceMax", ["x"], ["mx"], axes=[-1]), N("Sub", ["x", "mx"], ["d"]), N("Exp", ["d"], ["e"]),
          N("ReduceSum", ["e", "ax"], ["s"])]
    seeds = {
        "fuse_softmax": model(sm + [N("Div", ["e", "s"], ["y"])], x, y, [ax]),
        "fuse_log_softmax": model(sm + [N("Log", ["s"], ["l"]), N("Sub", ["d", "l"], ["y"])], x, y, [ax]),
        "fuse_rms_norm": model([N("Mul", ["x", "x"], ["q"]), N("ReduceMean", ["q"], ["m"], axes=[-1]),
                                N("Add", ["m", "eps"], ["v"]), N("Sqrt", ["v"], ["r"]), N("Reciprocal", ["r"], ["i"]),
                                N("Mul", ["x", "i"], ["n"]), N("Mul", ["n", "w"], ["y"])], x, y,
                               [C("eps", 1e-6), C("w", np.ones(8))]),
        "fuse_layer_norm": model([N("ReduceMean", ["x"], ["m"], axes=[-1]), N("Sub", ["x", "m"], ["d"]),
                                  N("Pow", ["d", "two"], ["q"]), N("ReduceMean", ["q"], ["v"], axes=[-1]),
                                  N("Add", ["v", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]), N("Div", ["d", "sd"], ["y"])],
                                 x, y, [C("two", 2.0), C("eps", 1e-5)]),
        "fuse_gelu": model([N("Div", ["x", "r2"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["a"]),
                            N("Mul", ["x", "a"], ["m"]), N("Mul", ["m", "half"], ["y"])], x, y,
                           [C("r2", 1.4142135), C("one", 1.0), C("half", 0.5)]),
        "fuse_silu": model([N("Sigmoid", ["x"], ["s"]), N("Mul", ["x", "s"], ["y"])], x, y),
    }
    S = 4
    q = [vi("x", F, [1, 2, S, 12])]
    split = numpy_helper.from_array(np.array([4, 4, 4], np.int64), "split")
    head = [N("Split", ["x", "split"], ["q", "k", "v"], axis=-1), N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
            N("MatMul", ["q", "kt"], ["s"]), N("Mul", ["s", "c"], ["s1"])]
    tail = [N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["y"])]
    seeds["fuse_attention_causal"] = model(
        head + [N("Where", ["masked", "ninf", "s1"], ["s2"])] + tail, q, y,
        [split, C("c", 0.5), C("ninf", -np.inf),
         numpy_helper.from_array(np.triu(np.ones((S, S), bool), 1)[None, None], "masked")])
    seeds["fuse_attention_additive"] = model(
        head + [N("Add", ["s1", "m"], ["s2"])] + tail, q, y,
        [split, C("c", 0.5), C("m", np.where(np.eye(S) > 0, 0, -1.0))])
    return seeds


def torch_seeds():
    import torch
    from torch import nn
    torch.manual_seed(0)
    conv = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(12, 2)).eval()
    att = nn.TransformerEncoderLayer(d_model=4, nhead=2, dim_feedforward=8, dropout=0.0, batch_first=True).eval()
    n = 0
    for name, m, x in (("torch_convnet", conv, torch.randn(1, 2, 4, 4)), ("torch_attention", att, torch.randn(1, 3, 4))):
        b = io.BytesIO()
        torch.onnx.export(m, (x,), b, opset_version=13, input_names=["x"], output_names=["y"])
        put("onnx", name + ".onnx", b.getvalue())
        n += 1
    return n


def pb_seeds():
    import onnx
    n = 0
    seen = set()
    for p in sorted(glob.glob(os.path.join(NODE_TESTS, "*", "test_data_set_0", "*.pb"))):
        if os.path.getsize(p) > 1024:
            continue
        t = onnx.TensorProto()
        t.ParseFromString(open(p, "rb").read())
        key = (t.data_type, len(t.dims), bool(t.raw_data))
        if key in seen:
            continue
        seen.add(key)
        put("pb", "%s_%s" % (p.split(os.sep)[-3][5:], os.path.basename(p)), open(p, "rb").read())
        n += 1
    return n


def main():
    n = {"json": 0}
    os.makedirs(os.path.join(OUT, "json"), exist_ok=True)
    for p in sorted(glob.glob(os.path.join(ROOT, "graphs", "*.json")) + glob.glob(os.path.join(ROOT, "tests", "cli", "data", "*.json"))):
        prefix = "graphs_" if "/graphs/" in p else "data_"
        put("json", prefix + os.path.basename(p), light(p))
        n["json"] += 1
    n["json"] += op_graphs() + hand_graphs()
    n["ftg"] = ftg_seeds()
    n["npy"] = npy_seeds()
    n["npz"] = npz_seeds()
    n["onnx"] = onnx_seeds()
    n["pb"] = pb_seeds()
    n["dict"] = make_dict()
    print(" ".join("%s: %d" % kv for kv in n.items()))


if __name__ == "__main__":
    main()
