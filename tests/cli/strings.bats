#!/usr/bin/env bats
# String tensors: .npy inputs of NumPy's U and S dtypes, .npy outputs as '<U',
# the text ops and the element-moving ops on strings, and the refusals (bad
# UTF-8, a string into a numeric op, strings on CUDA). Expectations from NumPy
# and Python's str methods.

bats_require_minimum_version 1.5.0
load helpers

# model.onnx of one node over string inputs; $1 the file, then Python code
# that sets nodes, ins, outs (value infos) and opset
onnx_model() {
    local f=$1 code=$2
    py "
import onnx
from onnx import helper, TensorProto
S = TensorProto.STRING
$code
m = helper.make_model(helper.make_graph(nodes, 't', ins, outs), opset_imports=[helper.make_opsetid('', opset)])
onnx.save(m, sys.argv[1])" "$f"
}

@test "strings: U and S .npy inputs through concat, gather and reshape give NumPy's values, written as <U" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("Concat", ["a", "b"], ["c"], axis=0),
         helper.make_node("Gather", ["c", "i"], ["g"], axis=0),
         helper.make_node("Reshape", ["g", "s"], ["r"])]
ins = [helper.make_tensor_value_info("a", S, [2]), helper.make_tensor_value_info("b", S, [2]),
       helper.make_tensor_value_info("i", TensorProto.INT64, [4]), helper.make_tensor_value_info("s", TensorProto.INT64, [2])]
outs = [helper.make_tensor_value_info("r", S, [2, 2])]
opset = 17'
    py '
np.save(sys.argv[1] + "/a.npy", np.array(["héllo", "中文"]))
np.save(sys.argv[1] + "/b.npy", np.array([b"ab", b""]))
np.save(sys.argv[1] + "/i.npy", np.array([3, 0, 1, 2], dtype=np.int64))
np.save(sys.argv[1] + "/s.npy", np.array([2, 2], dtype=np.int64))' "$T"
    run "$FTRUN" run "$T/m.onnx" -i a="$T/a.npy" -i b="$T/b.npy" -i i="$T/i.npy" -i s="$T/s.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
got = np.load(sys.argv[1] + "/r.npy")
want = np.array([["", "héllo"], ["中文", "ab"]])
assert got.dtype.kind == "U" and got.shape == (2, 2) and (got == want).all(), (got.dtype, got)' "$T/out"
}

@test "strings: StringNormalizer, StringConcat and RegexFullMatch agree with Python's str methods" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("StringNormalizer", ["x"], ["n"], case_change_action="LOWER", is_case_sensitive=0,
                          stopwords=["THE"]),
         helper.make_node("StringConcat", ["x", "y"], ["c"]),
         helper.make_node("RegexFullMatch", ["x"], ["m"], pattern=r"[A-Z]\w+\d")]
ins = [helper.make_tensor_value_info("x", S, [4]), helper.make_tensor_value_info("y", S, [1])]
outs = [helper.make_tensor_value_info("n", S, None), helper.make_tensor_value_info("c", S, [4]),
        helper.make_tensor_value_info("m", TensorProto.BOOL, [4])]
opset = 20'
    py '
np.save(sys.argv[1] + "/x.npy", np.array(["The", "Quick9", "BROWN", "the fox"]))
np.save(sys.argv[1] + "/y.npy", np.array(["-é"]))' "$T"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
import re
x = ["The", "Quick9", "BROWN", "the fox"]
n = np.load(sys.argv[1] + "/n.npy"); c = np.load(sys.argv[1] + "/c.npy"); m = np.load(sys.argv[1] + "/m.npy")
assert n.tolist() == [s.lower() for s in x if s.lower() != "the"], n
assert c.tolist() == [s + "-é" for s in x], c
assert m.tolist() == [re.fullmatch(r"[A-Z]\w+\d", s) is not None for s in x], m' "$T/out"
}

@test "strings: equal on strings, against NumPy" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("Equal", ["x", "y"], ["e"])]
ins = [helper.make_tensor_value_info("x", S, [2, 2]), helper.make_tensor_value_info("y", S, [2])]
outs = [helper.make_tensor_value_info("e", TensorProto.BOOL, [2, 2])]
opset = 19'
    py '
np.save(sys.argv[1] + "/x.npy", np.array([["a", "b"], ["", "b"]]))
np.save(sys.argv[1] + "/y.npy", np.array(["a", "b"]))' "$T"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -i y="$T/y.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py '
got = np.load(sys.argv[1] + "/e.npy")
assert (got == (np.array([["a", "b"], ["", "b"]]) == np.array(["a", "b"]))).all(), got' "$T/out"
}

@test "strings: a string tensor into a numeric op is refused with exit 3 naming the node and the dtype" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("Abs", ["x"], ["y"], name="absnode")]
ins = [helper.make_tensor_value_info("x", S, [2])]
outs = [helper.make_tensor_value_info("y", S, [2])]
opset = 17'
    py 'np.save(sys.argv[1], np.array(["a", "b"]))' "$T/x.npy"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *absnode* ]]
    [[ "$output" == *string* ]]
    [ ! -e "$T/out/y.npy" ]
}

@test "strings: invalid UTF-8 in an S array and in a TensorProto is refused with exit 3" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("Identity", ["x"], ["y"])]
ins = [helper.make_tensor_value_info("x", S, [2])]
outs = [helper.make_tensor_value_info("y", S, [2])]
opset = 17'
    py '
from onnx import helper, TensorProto
np.save(sys.argv[1] + "/x.npy", np.array([b"ok", b"\xff\xfe"]))
t = helper.make_tensor("x", TensorProto.STRING, [2], [b"ok", b"\xc0\xaf"])
open(sys.argv[1] + "/x.pb", "wb").write(t.SerializeToString())' "$T"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"not valid UTF-8"* ]]
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.pb" -o "$T/out2" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"not valid UTF-8"* ]]
    [ ! -e "$T/out/y.npy" ] && [ ! -e "$T/out2/y.npy" ]
}

@test "strings: a pattern regcomp rejects is refused with exit 3" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("RegexFullMatch", ["x"], ["m"], pattern="a(b")]
ins = [helper.make_tensor_value_info("x", S, [1])]
outs = [helper.make_tensor_value_info("m", TensorProto.BOOL, [1])]
opset = 20'
    py 'np.save(sys.argv[1], np.array(["ab"]))' "$T/x.npy"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"POSIX extended"* ]]
}

@test "strings: JSON graphs take string data; --random-inputs and .ftg packing refuse strings" {
    cat > "$T/g.json" <<'JSON'
{"ftrun": 1, "inputs": ["x"], "outputs": ["y"],
 "tensors": {"x": {"dtype": "string", "shape": [2]},
             "k": {"dtype": "string", "shape": [2], "data": ["a", "βc"]}},
 "nodes": [{"op": "string_concat", "inputs": ["x", "k"], "outputs": ["y"]}]}
JSON
    py 'np.save(sys.argv[1], np.array(["1", "2"]))' "$T/x.npy"
    run "$FTRUN" run "$T/g.json" -d cpu -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py 'got = np.load(sys.argv[1]); assert got.tolist() == ["1a", "2βc"], got' "$T/out/y.npy"
    run "$FTRUN" run "$T/g.json" -d cpu --random-inputs -o "$T/out2" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"string tensor"* ]]
    run "$FTRUN" pack "$T/g.json" -o "$T/g.ftg"
    [ "$status" -eq 3 ]
    [[ "$output" == *"string constant"* ]]
}

@test "strings: ftrun ops lists the string ops" {
    run "$FTRUN" ops
    [ "$status" -eq 0 ]
    [[ "$output" == *string_normalizer* ]]
}
