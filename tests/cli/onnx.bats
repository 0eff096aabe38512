#!/usr/bin/env bats
# ONNX input: damaged files, unsupported ops, external data, versions and
# values that must be known at load time. Models are written here with
# onnx.helper; expected values come from NumPy.

bats_require_minimum_version 1.5.0
load helpers

# onx 'python code' ARGS...: runs code with numpy (np), onnx, helper, TensorProto
# and numpy_helper imported; sys.argv[1:] are ARGS.
onx() {
    local code=$1
    shift
    "$PYTHON" -c "import sys, os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
def save(model, path):
    open(path, 'wb').write(model.SerializeToString())
def value(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)
$code" "$@"
}

# add_model PATH: y = x + w, x and w f32 [2,3], w an initializer of 0..5.
add_model() {
    onx '
w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], "add",
                      [value("x", TensorProto.FLOAT, [2, 3])], [value("y", TensorProto.FLOAT, [2, 3])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
save(m, sys.argv[1])' "$1"
}

setup_file() {
    if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
        echo "python3-onnx is missing (make deps)" >&2
        return 1
    fi
}

# ---- a well-formed model first: what the damaged ones are compared with ----

@test "onnx: a well-formed model runs and equals NumPy (.npy and .pb inputs and goldens)" {
    add_model "$T/m.onnx"
    npy "$T/x.npy" "np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)"
    run "$FTRUN" "$T/m.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o"
    status_is 0
    py 'y = np.load(sys.argv[1]); x = np.load(sys.argv[2])
assert y.dtype == np.float32 and y.shape == (2, 3)
assert np.array_equal(y, x + np.arange(6, dtype=np.float32).reshape(2, 3))' "$T/o/y.npy" "$T/x.npy"
    onx '
x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
open(sys.argv[1], "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
open(sys.argv[2], "wb").write(numpy_helper.from_array(x + np.arange(6, dtype=np.float32).reshape(2, 3), "y").SerializeToString())
open(sys.argv[3], "wb").write(numpy_helper.from_array(x + 1, "y").SerializeToString())' \
        "$T/x.pb" "$T/y.pb" "$T/wrong.pb"
    run "$FTRUN" "$T/m.onnx" -q -n 1 -i x="$T/x.pb" --expect "$T/y.pb" -o "$T/o2"
    status_is 0
    # the comparison can fail: a golden off by one is a mismatch (exit 1)
    run "$FTRUN" "$T/m.onnx" -q -n 1 -i x="$T/x.pb" --expect "$T/wrong.pb" -o "$T/o3"
    status_is 1
}

# ---- damaged files ----

@test "onnx: a model cut at several offsets is refused with exit 3 naming the file" {
    add_model "$T/m.onnx"
    size=$(stat -c %s "$T/m.onnx")
    for cut in 1 5 $((size / 4)) $((size / 2)) $((size * 3 / 4)) $((size - 7)) $((size - 1)); do
        head -c "$cut" "$T/m.onnx" > "$T/cut$cut.onnx"
        run --separate-stderr "$FTRUN" info "$T/cut$cut.onnx"
        echo "cut at $cut of $size bytes: $stderr" >&2
        status_is 3
        [[ "$stderr" == *"ftrun: error:"*"cut$cut.onnx"* ]] || { echo "$stderr" >&2; return 1; }
        [[ "$stderr" != *Sanitizer* ]]
        run "$FTRUN" "$T/cut$cut.onnx" -q -n 1 -o "$T/o$cut"
        status_is 3
        [ ! -e "$T/o$cut" ] || [ -z "$(ls -A "$T/o$cut")" ]
    done
}

@test "onnx: corrupted bytes end in exit 3 with a message, or load; never a crash" {
    add_model "$T/m.onnx"
    npy "$T/x.npy" "np.zeros((2, 3), np.float32)"
    # a length prefix made huge (the graph field's, right after its tag 0x3a) must be refused
    onx '
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(0x3a)        # field 7 (graph), wire type 2
b[i + 1:i + 2] = b"\xff\xff\xff\xff\x0f"
open(sys.argv[2], "wb").write(bytes(b))
rng = np.random.RandomState(3)
for k in range(24):
    c = bytearray(open(sys.argv[1], "rb").read())
    for p in rng.randint(0, len(c), size=1 + k % 4):
        c[p] = rng.randint(0, 256)
    open(os.path.join(sys.argv[3], "bad%d.onnx" % k), "wb").write(bytes(c))' \
        "$T/m.onnx" "$T/huge.onnx" "$T"
    run --separate-stderr "$FTRUN" info "$T/huge.onnx"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"huge.onnx"* ]]
    for k in $(seq 0 23); do
        run --separate-stderr "$FTRUN" "$T/bad$k.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o$k"
        echo "bad$k.onnx: status $status: $stderr" >&2
        [ "$status" -eq 0 ] || [ "$status" -eq 3 ]
        [[ "$stderr" != *Sanitizer* ]]
        if [ "$status" -eq 3 ]; then
            [[ "$stderr" == *"ftrun: error:"* ]]
        fi
    done
}

@test "onnx: a model's weights are not held twice while it loads (peak_rss_bytes)" {
    [ -r /proc/self/status ] || skip "no /proc/self/status on this system"
    # y = ReduceSum(Sum(w0 .. w23)) + x + b: 24 initializers of 4 MiB (96 MiB), a small one after them
    onx '
rng = np.random.RandomState(3)
ws = [rng.standard_normal((1024, 1024)).astype(np.float32) for _ in range(24)]
b = np.arange(4, dtype=np.float32)
names = ["w%d" % i for i in range(24)]
g = helper.make_graph([helper.make_node("Sum", names, ["m"], name="sum"),
                       helper.make_node("ReduceSum", ["m"], ["s"], keepdims=0, name="total"),
                       helper.make_node("Add", ["s", "x"], ["t"], name="add"),
                       helper.make_node("Add", ["t", "b"], ["y"], name="bias")], "big",
                      [value("x", TensorProto.FLOAT, [4])], [value("y", TensorProto.FLOAT, [4])],
                      [numpy_helper.from_array(w, n) for w, n in zip(ws, names)] + [numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
m.ir_version = 8
save(m, sys.argv[1])
x = np.ones(4, np.float32)
np.save(sys.argv[2], x)
np.save(sys.argv[3], (sum(w.astype(np.float64).sum() for w in ws) + x + b).astype(np.float32))' "$T/big.onnx" "$T/x.npy" "$T/want.npy"
    run "$FTRUN" "$T/big.onnx" -i x="$T/x.npy" -o "$T/o" -q
    status_is 0
    py '
import json, sys, numpy as np
got, want = np.load(sys.argv[2]), np.load(sys.argv[3])
assert np.allclose(got, want, rtol=1e-4, atol=1e-2), (got, want)
peak = json.load(open(sys.argv[1]))["memory"]["peak_rss_bytes"]
MiB = 1 << 20
# the weights once (96 MiB) plus the program; twice would be 192 MiB and more
# (an ASan build adds an eighth for its shadow memory and its own start-up)
limit = 200 if sys.argv[4] else 150
assert 96 * MiB <= peak < limit * MiB, peak / MiB' "$T/o/timing.json" "$T/o/y.npy" "$T/want.npy" "${FTRUN_SANITIZED:-}"
}

@test "onnx: an empty .onnx file is refused with exit 3 naming it" {
    : > "$T/zero.onnx"
    run --separate-stderr "$FTRUN" "$T/zero.onnx" -q -n 1 -o "$T/o"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"zero.onnx"* ]]
    [ ! -e "$T/o" ] || [ -z "$(ls -A "$T/o")" ]
}

@test "onnx: an input .pb file that is cut short is refused with exit 3" {
    add_model "$T/m.onnx"
    onx 'open(sys.argv[1], "wb").write(numpy_helper.from_array(np.ones((2, 3), np.float32), "x").SerializeToString()[:-5])' "$T/x.pb"
    run --separate-stderr "$FTRUN" "$T/m.onnx" -q -n 1 -i x="$T/x.pb" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"x.pb"* ]]
}

# ---- ops ftrun does not have: one message listing them all ----

@test "onnx: unsupported ops are all listed in one message with their node names" {
    onx '
nodes = [helper.make_node("Relu", ["x"], ["r"], name="fine_relu"),
         helper.make_node("Bernoulli", ["boxes"], ["sel"], name="bern_first"),
         helper.make_node("Frobnicate", ["r"], ["f"], name="frob_second", domain="com.example"),
         helper.make_node("MaxRoiPool", ["r4", "rois"], ["roi"], name="roi_third", pooled_shape=[1, 1])]
g = helper.make_graph(nodes, "unsupported",
    [value("x", TensorProto.FLOAT, [2, 3]), value("boxes", TensorProto.FLOAT, [1, 4, 4]),
     value("scores", TensorProto.FLOAT, [1, 1, 4]), value("r4", TensorProto.FLOAT, [1, 1, 4, 4]),
     value("rois", TensorProto.FLOAT, [1, 5])],
    [value("sel", TensorProto.FLOAT, [1, 4, 4]), value("f", TensorProto.FLOAT, [2, 3]),
     value("roi", TensorProto.FLOAT, [1, 1, 1, 1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
m.ir_version = 8
save(m, sys.argv[1])' "$T/u.onnx"
    run --separate-stderr "$FTRUN" "$T/u.onnx" -q -n 1 -o "$T/o"
    status_is 3
    [[ "$stderr" == *"u.onnx"* ]]
    for s in bern_first Bernoulli frob_second Frobnicate roi_third MaxRoiPool; do
        [[ "$stderr" == *"$s"* ]] || { echo "no '$s' in: $stderr" >&2; return 1; }
    done
    [[ "$stderr" != *fine_relu* ]]
    # one error, not one per op
    [ "$(grep -c 'ftrun: error:' <<< "$stderr")" -eq 1 ]
    [ ! -e "$T/o" ] || [ -z "$(ls -A "$T/o")" ]
}

# ---- external data ----

# ext_model DIR LOCATION: add_model's model in DIR/m.onnx with w's bytes in
# DIR/LOCATION (onnx.external_data_helper), then the location rewritten as given.
ext_model() {
    onx '
from onnx import external_data_helper as edh
d, loc = sys.argv[1], sys.argv[2]
m = onnx.load(os.path.join(d, "m.onnx"))
edh.convert_model_to_external_data(m, all_tensors_to_one_file=True, location="w.bin", size_threshold=0)
onnx.save_model(m, os.path.join(d, "m.onnx"))
# move the data where the test wants it and point the model there
target = os.path.normpath(os.path.join(d, loc)) if not os.path.isabs(loc) else loc
os.makedirs(os.path.dirname(target), exist_ok=True)
os.replace(os.path.join(d, "w.bin"), target)
m = onnx.load(os.path.join(d, "m.onnx"), load_external_data=False)
for t in m.graph.initializer:
    for e in t.external_data:
        if e.key == "location":
            e.value = loc
save(m, os.path.join(d, "m.onnx"))' "$@"
}

@test "onnx: external data inside the model's folder (and a subfolder) is read" {
    mkdir -p "$T/g"
    npy "$T/x.npy" "np.full((2, 3), 0.5, np.float32)"
    for loc in w.bin data/w.bin; do
        add_model "$T/g/m.onnx"
        ext_model "$T/g" "$loc"
        [ -f "$T/g/$loc" ]
        run "$FTRUN" "$T/g/m.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o"
        status_is 0
        py 'assert np.array_equal(np.load(sys.argv[1]), np.arange(6, dtype=np.float32).reshape(2, 3) + 0.5)' "$T/o/y.npy"
        rm -rf "$T/o" "$T/g"/*
    done
}

@test "onnx: external data outside the model's folder (../, absolute) is refused with exit 3 naming both paths" {
    mkdir -p "$T/g"
    npy "$T/x.npy" "np.zeros((2, 3), np.float32)"
    add_model "$T/g/m.onnx"
    ext_model "$T/g" ../w.bin
    [ -f "$T/w.bin" ]
    run --separate-stderr "$FTRUN" "$T/g/m.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"m.onnx"* ]]
    [[ "$stderr" == *"../w.bin"* ]]
    [ ! -e "$T/o/y.npy" ]
    add_model "$T/g/m.onnx"
    ext_model "$T/g" "$T/abs/w.bin"
    [ -f "$T/abs/w.bin" ]
    run --separate-stderr "$FTRUN" "$T/g/m.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"m.onnx"* ]]
    [[ "$stderr" == *"$T/abs/w.bin"* ]]
    [ ! -e "$T/o/y.npy" ]
}

@test "onnx: external data that is missing or shorter than the tensor is refused with exit 3" {
    mkdir -p "$T/g"
    add_model "$T/g/m.onnx"
    ext_model "$T/g" w.bin
    head -c 10 "$T/g/w.bin" > "$T/g/short" && mv "$T/g/short" "$T/g/w.bin"
    run --separate-stderr "$FTRUN" info "$T/g/m.onnx"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"w.bin"* ]]
    rm "$T/g/w.bin"
    run --separate-stderr "$FTRUN" info "$T/g/m.onnx"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*"w.bin"* ]]
}

# ---- versions ----

# versioned PATH IR OPSET: add_model's model with this ir_version and default-domain opset.
versioned() {
    add_model "$1"
    onx 'm = onnx.load(sys.argv[1]); m.ir_version = int(sys.argv[2]); m.opset_import[0].version = int(sys.argv[3])
save(m, sys.argv[1])' "$@"
}

# loads_or_not IR:OPSET STATUS WORD: `ftrun info` of such a model ends with STATUS;
# a refusal names the model, WORD and the refused value (WORD ir_version: IR, else opset).
loads_or_not() {
    local ir=${1%:*} opset=${1#*:} v
    versioned "$T/m.onnx" "$ir" "$opset"
    run --separate-stderr "$FTRUN" info "$T/m.onnx"
    status_is "$2"
    [ "$2" -eq 0 ] && return 0
    if [ "$3" = ir_version ]; then v=$ir; else v=$opset; fi
    [[ "$stderr" == *"ftrun: error:"*"m.onnx"*"$3"*"$v"* ]] || { echo "$stderr" >&2; return 1; }
}

@test "onnx: ir_version outside 3-13 is refused with exit 3 naming the version" {
    loads_or_not 2:7 3 ir_version
    loads_or_not 14:13 3 ir_version
    # the ends of the range load (IR 3 with opset 7, the pair ONNX 1.2 wrote; IR 13 with opset 28)
    loads_or_not 3:7 0
    loads_or_not 13:28 0
    loads_or_not 11:13 0
}

@test "onnx: a default-domain opset outside 1-28 is refused with exit 3 naming it; an op's form older than ftrun maps is named" {
    loads_or_not 8:0 3 opset
    loads_or_not 8:29 3 opset
    loads_or_not 8:7 0
    loads_or_not 8:28 0
    # Upsample before opset 7 (the experimental form with width_scale/height_scale): refused as unsupported,
    # naming the opset
    onx '
node = helper.make_node("Upsample", ["x"], ["y"], name="up0", width_scale=2.0, height_scale=2.0)
g = helper.make_graph([node], "up", [value("x", TensorProto.FLOAT, [1, 1, 2, 2])], [value("y", TensorProto.FLOAT, [1, 1, 4, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)])
m.ir_version = 3
save(m, sys.argv[1])' "$T/m.onnx"
    run --separate-stderr "$FTRUN" info "$T/m.onnx"
    status_is 3
    [[ "$stderr" == *"does not support"*"op Upsample at opset 6 is not supported (ftrun reads it from opset 7)"*"up0"* ]] || { echo "$stderr" >&2; return 1; }
    # Add at opset 6 with the legacy broadcast/axis attributes runs (B aligned to A from axis 0)
    versioned "$T/m.onnx" 3 6
    onx 'm = onnx.load(sys.argv[1]); m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([10, 20], np.float32), "w"))
m.graph.node[0].attribute.extend([helper.make_attribute("broadcast", 1), helper.make_attribute("axis", 0)])
save(m, sys.argv[1])' "$T/m.onnx"
    npy "$T/x.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3)'
    run --separate-stderr "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -n 1 -q
    status_is 0
    py 'y = np.load(sys.argv[1]); assert (y == np.arange(6).reshape(2, 3) + np.array([[10], [20]])).all(), y' "$T/out/y.npy"
    # an opset-1 model of ops whose form has not changed runs, and agrees with NumPy
    onx '
g = helper.make_graph([helper.make_node("Softplus", ["x"], ["y"])], "sp", [value("x", TensorProto.FLOAT, [4])],
                      [value("y", TensorProto.FLOAT, [4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 1)])
m.ir_version = 3
save(m, sys.argv[1])' "$T/sp.onnx"
    npy "$T/x.npy" 'np.array([-2, -0.5, 0, 3], np.float32)'
    run --separate-stderr "$FTRUN" run "$T/sp.onnx" -i x="$T/x.npy" -o "$T/out" -n 1 -q
    status_is 0
    py 'y = np.load(sys.argv[1]); x = np.array([-2, -0.5, 0, 3], np.float32)
assert np.allclose(y, np.log1p(np.exp(x)), rtol=1e-6, atol=1e-7), y' "$T/out/y.npy"
}

# legacy MODEL OPSET OP 'attrs' SHAPE_A SHAPE_B: MODEL holds y = OP(a, b), both f32 graph inputs of the given
# shapes (comma-separated; "" for a scalar), at that opset, with the attributes of the Python dict attrs.
legacy() {
    onx '
sa = [int(d) for d in sys.argv[5].split(",") if d]; sb = [int(d) for d in sys.argv[6].split(",") if d]
names = ["a", "b", "c"][:3 if sys.argv[3] == "Gemm" else 2]
shapes = {"a": sa, "b": sb, "c": [int(d) for d in os.environ.get("SHAPE_C", "").split(",") if d]}
node = helper.make_node(sys.argv[3], names, ["y"], name="n0", **eval(sys.argv[4]))
g = helper.make_graph([node], "legacy", [value(k, TensorProto.FLOAT, shapes[k]) for k in names],
                      [value("y", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", int(sys.argv[2]))])
m.ir_version = 3
save(m, sys.argv[1])' "$@"
}

# refused FILE STATUS TEXT...: `ftrun info FILE` ends with STATUS and its message holds each TEXT.
refused() {
    local f=$1 st=$2
    shift 2
    run --separate-stderr "$FTRUN" info "$f"
    status_is "$st"
    for t in "$@"; do
        [[ "$stderr" == *"$t"* ]] || { echo "missing '$t' in: $stderr" >&2; return 1; }
    done
}

@test "onnx: legacy forms of opsets 1-6 that ftrun cannot honour are refused naming the attribute and value" {
    legacy "$T/m.onnx" 6 Add '{"broadcast": 2}' 2,3 3
    refused "$T/m.onnx" 3 "n0" "attribute broadcast=2"
    legacy "$T/m.onnx" 6 Add '{}' 2,3 3
    refused "$T/m.onnx" 3 "n0" "[2,3]" "[3]" "broadcast is 0"
    legacy "$T/m.onnx" 6 Mul '{"broadcast": 1, "axis": 1}' 2,3 2
    refused "$T/m.onnx" 3 "n0" "does not broadcast" "from axis 1"
    legacy "$T/m.onnx" 6 Sub '{"broadcast": 1}' 3 2,3
    refused "$T/m.onnx" 3 "n0" "does not broadcast"
    SHAPE_C=3 legacy "$T/m.onnx" 6 Gemm '{}' 2,4 4,3
    refused "$T/m.onnx" 3 "n0" "input 2 (C) [3]" "[2,3]" "broadcast is 0"
    SHAPE_C=3 legacy "$T/m.onnx" 6 Gemm '{"broadcast": 1}' 2,4 4,3
    refused "$T/m.onnx" 0
    onx '
ins = [value("x", TensorProto.FLOAT, [1, 2, 3, 3])] + [value(k, TensorProto.FLOAT, [2]) for k in "sbmv"]
bn = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn0", consumed_inputs=[0, 0, 0, 1, 1])
ap = helper.make_node("AveragePool", ["x"], ["z"], name="ap0", kernel_shape=[2, 2], count_include_pad=1)
g = helper.make_graph([bn, ap], "legacy", ins, [value("y", TensorProto.FLOAT, None), value("z", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 5)])
m.ir_version = 3
save(m, sys.argv[1])' "$T/m.onnx"
    refused "$T/m.onnx" 3 "bn0" "attribute is_test=0" "ap0" "attribute count_include_pad=1"
}

linattn() {
    onx '
ins = [value(k, TensorProto.FLOAT, [1, 3, w]) for k, w in (("q", 8), ("k", 8), ("v", 6), ("d", 2), ("b", 2))]
node = helper.make_node("LinearAttention", sys.argv[2].split(","), ["y", "s"], name="la0", **eval(sys.argv[3]))
g = helper.make_graph([node], "la", ins, [value("y", TensorProto.FLOAT, None), value("s", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 27)])
m.ir_version = 10
save(m, sys.argv[1])' "$@"
}

@test "onnx: LinearAttention with heads, update_rule or inputs that do not agree is refused naming the node and values" {
    linattn "$T/m.onnx" q,k,v,,d,b '{"q_num_heads": 2, "kv_num_heads": 2}'
    refused "$T/m.onnx" 0
    linattn "$T/m.onnx" q,k,v '{"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}'
    refused "$T/m.onnx" 3 "la0" "LinearAttention" "q_num_heads (3)" "kv_num_heads (2)"
    linattn "$T/m.onnx" q,k,v '{"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "fast"}'
    refused "$T/m.onnx" 3 "la0" "update_rule 'fast'"
    linattn "$T/m.onnx" q,k,v,,d '{"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "delta"}'
    refused "$T/m.onnx" 3 "la0" "update_rule 'delta' needs input 5 (beta)"
    linattn "$T/m.onnx" q,d,v '{"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"}'
    refused "$T/m.onnx" 3 "la0" "key [1, 3, 2]" "q_num_heads 2"
}

@test "onnx: blocked QuantizeLinear whose scale does not have one value per block is refused naming the shapes" {
    onx '
ins = [value("x", TensorProto.FLOAT, [3, 5]), value("s", TensorProto.FLOAT, [3, 2])]
node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="bq0", axis=1, block_size=2)
g = helper.make_graph([node], "bq", ins, [value("y", TensorProto.UINT8, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 10
save(m, sys.argv[1])' "$T/m.onnx"
    refused "$T/m.onnx" 3 "bq0" "QuantizeLinear" "block_size 2 on axis 1" "scale [3,2]" "shape [3,5]"
}

# ---- values that must be known when the model loads ----

@test "onnx: Reshape whose shape is a graph input is refused naming the node, op and input" {
    onx '
g = helper.make_graph([helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_from_input")], "r",
                      [value("x", TensorProto.FLOAT, [2, 3]), value("target", TensorProto.INT64, [2])],
                      [value("y", TensorProto.FLOAT, [3, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
save(m, sys.argv[1])' "$T/r.onnx"
    run --separate-stderr "$FTRUN" info "$T/r.onnx"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"* ]]
    for s in r.onnx reshape_from_input Reshape target; do
        [[ "$stderr" == *"$s"* ]] || { echo "no '$s' in: $stderr" >&2; return 1; }
    done
}

@test "onnx: a constant Reshape or Tile whose dims overflow, a Squeeze of an axis not 1, are refused at that node, not folded" {
    # [2^32, 2^32] of an empty constant: the product wraps to 0 in 64 bits, the
    # element count of the empty input; Tile by 2^62 of an axis of size 4
    onx '
c = numpy_helper.from_array(np.zeros((0,), np.float32), "c")
s = numpy_helper.from_array(np.array([2 ** 32, 2 ** 32], np.int64), "s")
g = helper.make_graph([helper.make_node("Reshape", ["c", "s"], ["r"], name="huge_reshape"),
                       helper.make_node("Add", ["x", "r"], ["y"], name="add0")], "r",
                      [value("x", TensorProto.FLOAT, [1])], [value("y", TensorProto.FLOAT, None)], [c, s])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
rep = numpy_helper.from_array(np.array([2 ** 62], np.int64), "rep")
g = helper.make_graph([helper.make_node("Tile", ["w", "rep"], ["t"], name="huge_tile"),
                       helper.make_node("Add", ["x", "t"], ["y"], name="add0")], "t",
                      [value("x", TensorProto.FLOAT, [1])], [value("y", TensorProto.FLOAT, None)], [w, rep])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[2])
e = numpy_helper.from_array(np.zeros((0, 3), np.float32), "e")
ax = numpy_helper.from_array(np.array([1], np.int64), "ax")
g = helper.make_graph([helper.make_node("Squeeze", ["e", "ax"], ["q"], name="bad_squeeze"),
                       helper.make_node("Add", ["x", "q"], ["y"], name="add0")], "q",
                      [value("x", TensorProto.FLOAT, [1])], [value("y", TensorProto.FLOAT, None)], [e, ax])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[3])' "$T/r.onnx" "$T/t.onnx" "$T/q.onnx"
    run --separate-stderr "$FTRUN" info "$T/r.onnx"
    status_is 3
    [[ "$stderr" == *"node 'huge_reshape' (reshape): attribute 'shape' [4294967296,4294967296]: the product of the dims overflows"* ]]
    run --separate-stderr "$FTRUN" info "$T/t.onnx"
    status_is 3
    [[ "$stderr" == *"node 'huge_tile' (tile): attribute 'repeats' [4611686018427387904]: axis 0 of size 4 repeated 4611686018427387904 times overflows"* ]]
    # [0,3] squeezed at axis 1 keeps the count (0) but is no squeeze
    run --separate-stderr "$FTRUN" info "$T/q.onnx"
    status_is 3
    [[ "$stderr" == *"node 'bad_squeeze' (squeeze): attribute 'axes' [1]: cannot squeeze axis 1 of input 'e' of shape [0,3]: its size is 3, not 1"* ]]
}

@test "onnx: Reshape whose shape is an initializer runs and equals NumPy" {
    onx '
t = numpy_helper.from_array(np.array([3, -1], np.int64), "target")
g = helper.make_graph([helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_const")], "r",
                      [value("x", TensorProto.FLOAT, [2, 3])], [value("y", TensorProto.FLOAT, [3, 2])], [t])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
save(m, sys.argv[1])' "$T/r.onnx"
    npy "$T/x.npy" "np.arange(6, dtype=np.float32).reshape(2, 3)"
    run "$FTRUN" "$T/r.onnx" -q -n 1 -i x="$T/x.npy" -o "$T/o"
    status_is 0
    py 'assert np.array_equal(np.load(sys.argv[1]), np.arange(6, dtype=np.float32).reshape(3, 2))' "$T/o/y.npy"
}

@test "onnx: a Concat of 90 inputs and a Max of 70 keep them all (ops of ops of at most 64)" {
    py '
import onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
nodes, xs = [], []
for k in range(90):
    nodes += [h.make_node("Constant", [], ["c%d" % k], value=nh.from_array(np.full(2, k, np.float32))),
              h.make_node("Add", ["x", "c%d" % k], ["x%d" % k])]
    xs.append("x%d" % k)
for name, tail, shape in (("cat", h.make_node("Concat", xs, ["y"], axis=0), [180]),
                          ("max", h.make_node("Max", xs[:70], ["y"]), [2])):
    g = h.make_graph(nodes + [tail], name, [h.make_tensor_value_info("x", TP.FLOAT, [2])],
                     [h.make_tensor_value_info("y", TP.FLOAT, shape)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, sys.argv[1] + "/" + name + ".onnx")
np.save(sys.argv[1] + "/x.npy", np.array([0.5, -1], np.float32))' "$T"
    run "$FTRUN" run "$T/cat.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'x = np.array([0.5, -1], np.float32)
w = np.concatenate([x + np.float32(k) for k in range(90)])
g = np.load(sys.argv[1] + "/y.npy")
assert g.shape == w.shape and (g == w).all(), (g, w)' "$T/o"
    run "$FTRUN" run "$T/max.onnx" -i x="$T/x.npy" -o "$T/m" -q
    [ "$status" -eq 0 ]
    py 'g = np.load(sys.argv[1] + "/y.npy")
assert (g == np.array([69.5, 68], np.float32)).all(), g' "$T/m"
}
