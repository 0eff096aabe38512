#!/usr/bin/env bats
# Casts to and from strings and the ai.onnx.ml ops on bad input: a string
# that is no number, and malformed attribute tables, refused with exit 3
# naming the node and the op. Values are checked against NumPy in
# tests/onnx/op_mappers_ml.py.

bats_require_minimum_version 1.5.0
load helpers

# model.onnx of one node; $1 the file, then Python code that sets nodes, ins,
# outs (value infos) and opset (ai.onnx.ml imported at version ml, default 3)
onnx_model() {
    local f=$1 code=$2
    py "
import onnx
from onnx import helper, TensorProto
S = TensorProto.STRING
ml = 3
$code
m = helper.make_model(helper.make_graph(nodes, 't', ins, outs), opset_imports=[helper.make_opsetid('', opset),
                      helper.make_opsetid('ai.onnx.ml', ml)])
onnx.save(m, sys.argv[1])" "$f"
}

@test "strings_ml: a cast of a string that is no number is refused at run time with exit 3 naming node, op and element" {
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("Cast", ["x"], ["y"], name="tonum", to=TensorProto.FLOAT)]
ins = [helper.make_tensor_value_info("x", S, [3])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])]
opset = 17'
    py 'np.save(sys.argv[1], np.array(["1.5", "Hello", "2"]))' "$T/x.npy"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 3 ]
    [[ "$output" == *"tonum"* ]]
    [[ "$output" == *"(cast)"* ]]
    [[ "$output" == *"element 1"*"Hello"* ]]
    [ ! -e "$T/out/y.npy" ]
    py 'np.save(sys.argv[1], np.array(["1.5", "-2e3", "nan"]))' "$T/x.npy"
    run "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/out" -q
    [ "$status" -eq 0 ]
    py 'y = np.load(sys.argv[1]); assert y[0] == 1.5 and y[1] == -2000 and np.isnan(y[2]), y' "$T/out/y.npy"
}

@test "strings_ml: a cast between strings and a low-precision dtype, and a bitcast of strings, are refused with exit 3" {
    graph c8.json <<'J'
{"ftrun": 1, "tensors": {"x": {"dtype": "string", "shape": [2], "data": ["1", "2"]}}, "inputs": [], "outputs": ["y"],
 "nodes": [{"name": "c8", "op": "cast", "inputs": ["x"], "outputs": ["y"], "attrs": {"to": "f8e4m3fn"}}]}
J
    run "$FTRUN" run --dry-run "$T/c8.json"
    [ "$status" -eq 3 ]
    [[ "$output" == *"c8"* && "$output" == *"strings cast to and from"* ]]
    graph bc.json <<'J'
{"ftrun": 1, "tensors": {"x": {"dtype": "i64", "shape": [2], "data": [1, 2]}}, "inputs": [], "outputs": ["y"],
 "nodes": [{"name": "bc", "op": "bitcast", "inputs": ["x"], "outputs": ["y"], "attrs": {"to": "string"}}]}
J
    run "$FTRUN" run --dry-run "$T/bc.json"
    [ "$status" -eq 3 ]
    [[ "$output" == *"bc"* && "$output" == *"bitcast to strings"* ]]
}

@test "strings_ml: StringSplit on a device runs with --fallback cpu, its strings read at every run; values as Python's str.split" {
    fake_device_build
    onnx_model "$T/m.onnx" '
nodes = [helper.make_node("StringSplit", ["x"], ["y", "n"], name="sp", delimiter="-", maxsplit=2)]
ins = [helper.make_tensor_value_info("x", S, [2, 2])]
outs = [helper.make_tensor_value_info("y", S, None), helper.make_tensor_value_info("n", TensorProto.INT64, [2, 2])]
opset = 20'
    py 'np.save(sys.argv[1], np.array([["a-b-c-d", ""], ["-x-", "solo"]]))' "$T/x.npy"
    FAKE_MISSING_OP=string_split fake run --separate-stderr "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/o" -d cuda \
        -n 3
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"'sp' (string_split)"*"--fallback cpu"* ]]
    FAKE_MISSING_OP=string_split fake run --separate-stderr "$FTRUN" run "$T/m.onnx" -i x="$T/x.npy" -o "$T/o" -d cuda \
        --fallback cpu -n 3
    [ "$status" -eq 0 ]
    py '
x = np.load(sys.argv[1] + "/x.npy")
parts = [s.split("-", 2) for s in x.ravel()]
want = np.array([p + [""] * (3 - len(p)) for p in parts]).reshape(2, 2, 3)
y, n = np.load(sys.argv[1] + "/o/y.npy"), np.load(sys.argv[1] + "/o/n.npy")
assert y.shape == (2, 2, 3) and (y == want).all(), y
assert (n == np.array([len(p) for p in parts]).reshape(2, 2)).all(), n' "$T"
}

@test "strings_ml: malformed TfIdfVectorizer tables are refused with exit 3 naming node, op and attribute" {
    base='nodes = [helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tf", **a)]
ins = [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 5])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
opset = 9'
    good='a = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
         ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 3, 4])'
    onnx_model "$T/ok.onnx" "$good
$base"
    py 'np.save(sys.argv[1], np.arange(10, dtype=np.int64).reshape(2, 5))' "$T/x.npy"
    run "$FTRUN" run --dry-run "$T/ok.onnx" -i x="$T/x.npy"
    [ "$status" -eq 0 ]
    for bad in 'a["ngram_indexes"] = [0, 1]|ngram_indexes has 2 entries' \
               'a["pool_int64s"] = [1, 2, 3]|not a whole number of 2-grams' \
               'a["mode"] = "BM25"|attribute '"'"'mode'"'"' is '"'"'BM25'"'"'' \
               'a["ngram_counts"] = [3, 1]|ngram_counts[1] = 1' \
               'a["weights"] = [1.0]|weights has 1 entries for 3 output columns' \
               'a["min_gram_length"] = 3|min_gram_length 3 and max_gram_length 2' \
               'a["pool_strings"] = ["a"]; del a["pool_int64s"]|the pool is strings but input X is i64'; do
        onnx_model "$T/bad.onnx" "$good
${bad%%|*}
$base"
        run "$FTRUN" run --dry-run "$T/bad.onnx" -i x="$T/x.npy"
        [ "$status" -eq 3 ] || { echo "$bad: status $status: $output"; false; }
        [[ "$output" == *"'tf'"* ]] || { echo "$bad: $output"; false; }
        [[ "$output" == *"${bad#*|}"* ]] || { echo "$bad: $output"; false; }
    done
}

@test "strings_ml: malformed LabelEncoder tables are refused with exit 3 naming node, op and attribute" {
    base='nodes = [helper.make_node("LabelEncoder", ["x"], ["y"], name="le", domain="ai.onnx.ml", **a)]
ins = [helper.make_tensor_value_info("x", S, [3])]
outs = [helper.make_tensor_value_info("y", TensorProto.INT64, None)]
opset = 17'
    good='a = dict(keys_strings=["a", "b"], values_int64s=[1, 2])'
    onnx_model "$T/ok.onnx" "$good
$base"
    py 'np.save(sys.argv[1], np.array(["a", "c", "b"]))' "$T/x.npy"
    run "$FTRUN" run "$T/ok.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'assert np.load(sys.argv[1]).tolist() == [1, -1, 2]' "$T/o/y.npy"
    for bad in 'a["values_int64s"] = [1]|values '"'"'le/values'"'"' have shape [1] for 2 keys' \
               'a["keys_int64s"] = [1, 2]|exactly one of keys_tensor' \
               'a = dict(keys_int64s=[1, 2], values_int64s=[1, 2])|must be a 1-D tensor of strings' \
               'a["default_tensor"] = helper.make_tensor("d", TensorProto.FLOAT, [1], [0.5]); ml = 4|default_tensor must be one i64 value' \
               'a = dict(keys_strings=["a"], values_int64s=[1], default_int64=3); ml = 1|LabelEncoder'; do
        onnx_model "$T/bad.onnx" "$good
${bad%%|*}
$base"
        run "$FTRUN" run --dry-run "$T/bad.onnx" -i x="$T/x.npy"
        [ "$status" -eq 3 ] || { echo "$bad: status $status: $output"; false; }
        [[ "$output" == *"le"* ]] || { echo "$bad: $output"; false; }
        [[ "$output" == *"${bad#*|}"* ]] || { echo "$bad: $output"; false; }
    done
}

@test "strings_ml: malformed TreeEnsemble tables (cycles, ids, features, member sets) are refused with exit 3" {
    base='a["nodes_splits"] = helper.make_tensor("s", TensorProto.FLOAT, [len(a["nodes_modes"])], [1.0] * len(a["nodes_modes"]))
a["leaf_weights"] = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
a["nodes_modes"] = helper.make_tensor("m", TensorProto.UINT8, [len(a["nodes_modes"])], a["nodes_modes"])
nodes = [helper.make_node("TreeEnsemble", ["x"], ["y"], name="te", domain="ai.onnx.ml", **a)]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
opset = 21
ml = 5'
    good='a = dict(nodes_featureids=[0, 1], nodes_modes=[0, 0], nodes_truenodeids=[1, 0], nodes_trueleafs=[0, 1],
         nodes_falsenodeids=[1, 1], nodes_falseleafs=[1, 1], leaf_targetids=[0, 1], tree_roots=[0], n_targets=2)'
    onnx_model "$T/ok.onnx" "$good
$base"
    py 'np.save(sys.argv[1], np.array([[0.5, 2.0], [0.5, 0.0]], np.float32))' "$T/x.npy"
    run "$FTRUN" run "$T/ok.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'assert np.load(sys.argv[1]).tolist() == [[0.0, 2.0], [1.0, 0.0]], np.load(sys.argv[1])' "$T/o/y.npy"
    for bad in 'a["nodes_trueleafs"] = [0, 0]|the nodes form a cycle' \
               'a["nodes_featureids"] = [0, 2]|nodes_featureids[1] = 2 is not a feature' \
               'a["nodes_falsenodeids"] = [1, 5]|node 1'"'"'s false branch: leaf 5 is out of range' \
               'a["leaf_targetids"] = [0, 2]|leaf_targetids[1] = 2 is not a target' \
               'a["nodes_modes"] = [0, 6]|membership_values holds 0 NaN-ended sets for 1 BRANCH_MEMBER nodes' \
               'a["nodes_truenodeids"] = [1]|attribute '"'"'nodes_truenodeids'"'"' has 1 entries for 2 nodes' \
               'a["post_transform"] = 2|post_transform'; do
        onnx_model "$T/bad.onnx" "$good
${bad%%|*}
$base"
        run "$FTRUN" run --dry-run "$T/bad.onnx" -i x="$T/x.npy"
        [ "$status" -eq 3 ] || { echo "$bad: status $status: $output"; false; }
        [[ "$output" == *"'te' (tree_ensemble)"* ]] || { echo "$bad: $output"; false; }
        [[ "$output" == *"${bad#*|}"* ]] || { echo "$bad: $output"; false; }
    done
}

@test "strings_ml: TreeEnsembleRegressor leaves of two weights and a broken child id are refused with exit 3 naming the node" {
    base='nodes = [helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], name="reg", domain="ai.onnx.ml", **a)]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
opset = 17'
    good='a = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0], nodes_values=[0.5, 0, 0],
         nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
         target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[3.0, -1.0], n_targets=1,
         base_values=[0.5])'
    onnx_model "$T/ok.onnx" "$good
$base"
    py 'np.save(sys.argv[1], np.array([[9.0, 0.25], [9.0, 0.75]], np.float32))' "$T/x.npy"
    run "$FTRUN" run "$T/ok.onnx" -i x="$T/x.npy" -o "$T/o" -q
    [ "$status" -eq 0 ]
    py 'assert np.load(sys.argv[1]).tolist() == [[3.5], [-0.5]], np.load(sys.argv[1])' "$T/o/y.npy"
    for bad in 'a.update(target_treeids=[0, 0, 0], target_nodeids=[1, 2, 2], target_ids=[0, 0, 0], target_weights=[1.0, 2.0, 3.0])|leaf 2 of tree 0 has 2 target weights' \
               'a["nodes_falsenodeids"] = [7, 0, 0]|its false node 7 is not in the tree' \
               'a["post_transform"] = "PROBIT"|post_transform PROBIT'; do
        onnx_model "$T/bad.onnx" "$good
${bad%%|*}
$base"
        run "$FTRUN" run --dry-run "$T/bad.onnx" -i x="$T/x.npy"
        [ "$status" -eq 3 ] || { echo "$bad: status $status: $output"; false; }
        [[ "$output" == *"reg"* ]] || { echo "$bad: $output"; false; }
        [[ "$output" == *"${bad#*|}"* ]] || { echo "$bad: $output"; false; }
    done
}
