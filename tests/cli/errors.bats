#!/usr/bin/env bats
# Every error path: exit code and the precise parts of the message
# (file, line:column, node, op, tensor, offending values).

bats_require_minimum_version 1.5.0
load helpers

# A graph with one input x (f32 [2,3]) and a matmul; used by the -i tests.
fed() { printf '%s\n' "$DATA/input.json"; }

# --- graph file: reading and parsing -------------------------------------------

@test "malformed JSON: exit 3, FILE:LINE:COL and the text near the error" {
    g=$(graph bad.json <<'EOF'
{
  "ftrun": 1,
  "name": @oops,
  "outputs": []
}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    [[ "$output" =~ bad\.json:3:([0-9]+):\ JSON\ syntax\ error ]]
    col=${BASH_REMATCH[1]}
    # the '@' is in column 11; allow a parser that reports the column just before or after it
    [ "$col" -ge 10 ] && [ "$col" -le 12 ]
    has "near '"
    has "@oops"
}

@test "truncated JSON: exit 3 with FILE:LINE:COL" {
    printf '{"ftrun": 1,\n "tensors": {\n' > "$T/trunc.json"
    run "$FTRUN" "$T/trunc.json"
    status_is 3
    is_error
    [[ "$output" =~ trunc\.json:[23]:[0-9]+:\ JSON\ syntax\ error ]]
}

@test "missing graph file: exit 3, 'FILE: cannot open: No such file or directory'" {
    run "$FTRUN" "$T/nowhere.json"
    status_is 3
    is_error
    has "$T/nowhere.json: cannot open: No such file or directory"
    [ ! -e "$T/ftrun-out" ]
}

@test "graph file is a directory: exit 3 naming it" {
    mkdir "$T/adir.json"
    run "$FTRUN" "$T/adir.json"
    status_is 3
    is_error
    has "adir.json"
}

@test "format version too new: exit 3 naming both versions" {
    g=$(graph v2.json <<'EOF'
{"ftrun": 2, "tensors": {"a": {"dtype": "f32", "shape": [1], "data": [1]}},
 "inputs": [], "outputs": ["b"], "nodes": [{"op": "neg", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "v2.json" "format version 2 is newer than this ftrun supports (1)"
}

@test "format version missing: exit 3" {
    g=$(graph nov.json <<'EOF'
{"tensors": {"a": {"dtype": "f32", "shape": [1], "data": [1]}},
 "inputs": [], "outputs": ["b"], "nodes": [{"op": "neg", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "nov.json"
    msg=${output#*nov.json}
    [[ "$msg" == *ftrun* || "$msg" == *version* ]]
}

@test "unknown top-level key: a warning naming it, the run succeeds" {
    g=$(graph extra.json <<'EOF'
{"ftrun": 1, "comment_xyz": "future", "tensors": {"a": {"dtype": "f32", "shape": [1], "data": [1]}},
 "inputs": [], "outputs": ["b"], "nodes": [{"op": "neg", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 0
    has "comment_xyz"
    lacks "ftrun: error:"
    [ -f "$T/o/b.npy" ]
}

# --- ops, attributes, keys -------------------------------------------------------

@test "unknown op: exit 3, names node and op, suggests 'softmax' for 'softmx'" {
    g=$(graph op.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "probs", "op": "softmx", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "op.json" "probs" "'softmx'" "did you mean 'softmax'"
}

@test "unknown attribute: exit 3, names node, op and attribute, suggests 'axis'" {
    g=$(graph attr.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "sm", "op": "softmax", "inputs": ["a"], "outputs": ["b"], "attrs": {"axsi": 0}}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "attr.json: node 'sm' (softmax)" "axsi" "'axis'"
}

@test "unknown key inside a node: exit 3, names the key and suggests 'attrs'" {
    g=$(graph nkey.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "sm", "op": "softmax", "inputs": ["a"], "outputs": ["b"], "atrs": {"axis": 0}}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "nkey.json" "sm" "atrs" "'attrs'"
}

@test "unknown key inside a tensor declaration: exit 3, names tensor and key, suggests 'data'" {
    g=$(graph tkey.json <<'EOF'
{"ftrun": 1, "tensors": {"w1": {"dtype": "f32", "shape": [3], "dat": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w1"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "tkey.json: tensor 'w1'" "dat" "'data'"
}

@test "too few inputs: exit 3, names node and op and the counts" {
    g=$(graph few.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "plus", "op": "add", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "few.json: node 'plus' (add): "
    msg=${output#*"(add): "}
    [[ "$msg" == *input* ]]
    [[ "$msg" == *2* ]]
    [[ "$msg" == *1* ]]
}

@test "too many inputs: exit 3, names node and op and the counts" {
    g=$(graph many.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "act", "op": "relu", "inputs": ["a", "a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "many.json: node 'act' (relu): "
    msg=${output#*"(relu): "}
    [[ "$msg" == *input* ]]
    [[ "$msg" == *2* ]]
    [[ "$msg" == *1* ]]
}

@test "too many outputs: exit 3, names node and op" {
    g=$(graph mout.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "act", "op": "relu", "inputs": ["a"], "outputs": ["b", "c"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "mout.json: node 'act' (relu): " "output"
}

@test "missing required attribute: exit 3, names node, op and attribute" {
    g=$(graph req.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "conv_type", "op": "cast", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "req.json: node 'conv_type' (cast): " "'to'"
}

@test "attribute of the wrong type: exit 3 naming the attribute" {
    g=$(graph atype.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "sm", "op": "softmax", "inputs": ["a"], "outputs": ["b"], "attrs": {"axis": "last"}}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "node 'sm' (softmax)" "axis"
}

# --- inputs ------------------------------------------------------------------------

@test "input with no value: exit 3, says how to supply it" {
    run "$FTRUN" "$(fed)" -o "$T/o"
    status_is 3
    is_error
    has "input.json" "input 'x'" "has no value" "pass --input x=FILE.npy"
    [ ! -e "$T/o/y.npy" ]
}

@test "-i NAME not an input of the graph: exit 3, names it and lists the graph's inputs" {
    npy "$T/x.npy" 'np.ones((2,3), np.float32)'
    run "$FTRUN" "$(fed)" -i nope="$T/x.npy"
    status_is 3
    is_error
    has "'nope'"
    msg=${output#*nope}
    [[ "$msg" == *x* ]]
}

@test "-i with a missing file: exit 3 naming the file" {
    run "$FTRUN" "$(fed)" -i x="$T/absent.npy"
    status_is 3
    is_error
    has "$T/absent.npy" "No such file or directory"
}

@test "-i with a directory instead of a file: exit 3 naming it" {
    mkdir "$T/adir.npy"
    run "$FTRUN" "$(fed)" -i x="$T/adir.npy"
    status_is 3
    is_error
    has "$T/adir.npy"
}

@test "-i with a file that is not .npy: exit 3 naming the file" {
    echo "hello, not numpy" > "$T/junk.npy"
    run "$FTRUN" "$(fed)" -i x="$T/junk.npy"
    status_is 3
    is_error
    has "$T/junk.npy"
}

@test "-i with a truncated .npy: exit 3 naming the file" {
    npy "$T/full.npy" 'np.ones((2,3), np.float32)'
    head -c $(( $(stat -c %s "$T/full.npy") - 5 )) "$T/full.npy" > "$T/short.npy"
    run "$FTRUN" "$(fed)" -i x="$T/short.npy"
    status_is 3
    is_error
    has "$T/short.npy"
}

@test "-i .npy with the wrong dtype: exit 3 naming input, file and both dtypes" {
    npy "$T/x64.npy" 'np.ones((2,3), np.float64)'
    run "$FTRUN" "$(fed)" -i x="$T/x64.npy" -o "$T/o"
    status_is 3
    is_error
    has "'x'" "x64.npy" "f32"
    [[ "$output" == *f64* || "$output" == *float64* ]]
    [ ! -e "$T/o/y.npy" ]
}

@test "-i .npy with the wrong shape: exit 3 naming input, file and both shapes" {
    npy "$T/x32.npy" 'np.ones((3,2), np.float32)'
    run "$FTRUN" "$(fed)" -i x="$T/x32.npy"
    status_is 3
    is_error
    has "'x'" "x32.npy" "[2,3]" "[3,2]"
}

@test "-i value without '=': usage error, exit 2" {
    run "$FTRUN" "$(fed)" -i x.npy
    status_is 2
    is_error
    has "x.npy" "Try 'ftrun --help'."
}

# --- shapes, dtypes, structure -----------------------------------------------------

@test "shape mismatch: matmul [2,3] x [4,5] names node, op and both shapes" {
    g=$(graph mm.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
             "b": {"dtype": "f32", "shape": [4, 5], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 3
    is_error
    has "mm.json: node 'fc1' (matmul): " "[2,3]" "[4,5]"
    [ ! -e "$T/o/c.npy" ]
}

@test "broadcast mismatch in add names node, op and both shapes" {
    g=$(graph bc.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
             "b": {"dtype": "f32", "shape": [4], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "plus", "op": "add", "inputs": ["a", "b"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "bc.json: node 'plus' (add): " "[2,3]" "[4]"
}

@test "dtype mismatch: add f32 + i32 names node, op and both dtypes" {
    g=$(graph dt.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]},
             "b": {"dtype": "i32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "mix", "op": "add", "inputs": ["a", "b"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "dt.json: node 'mix' (add): " "f32" "i32"
}

@test "dtype not accepted by the op (relu on i32): exit 3 naming node, op and dtype" {
    g=$(graph rdt.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "i32", "shape": [3], "data": [1, -2, 3]}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "act", "op": "relu", "inputs": ["a"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "node 'act' (relu)" "i32"
}

@test "cycle: exit 3 naming a node on the cycle" {
    g=$(graph cyc.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["out"],
 "nodes": [
   {"name": "entry", "op": "neg", "inputs": ["a"], "outputs": ["p"]},
   {"name": "loop_a", "op": "add", "inputs": ["p", "r"], "outputs": ["q"]},
   {"name": "loop_b", "op": "exp", "inputs": ["q"], "outputs": ["r"]},
   {"name": "tail", "op": "neg", "inputs": ["r"], "outputs": ["out"]}
 ]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "cyc.json"
    [[ "$output" == *cycle* ]]
    [[ "$output" == *loop_a* || "$output" == *loop_b* ]]
}

@test "self-loop: exit 3 naming the node" {
    g=$(graph self.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["q"],
 "nodes": [{"name": "ouroboros", "op": "add", "inputs": ["a", "q"], "outputs": ["q"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "ouroboros"
}

@test "two producers of one tensor: exit 3 naming both nodes and the tensor" {
    g=$(graph dup.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["h"],
 "nodes": [
   {"name": "maker_one", "op": "neg", "inputs": ["a"], "outputs": ["h"]},
   {"name": "maker_two", "op": "exp", "inputs": ["a"], "outputs": ["h"]}
 ]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "dup.json" "maker_one" "maker_two" "'h'"
}

@test "tensor read but never produced nor declared: exit 3 naming node and tensor" {
    g=$(graph ghost.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["c"],
 "nodes": [{"name": "reader", "op": "add", "inputs": ["a", "phantom"], "outputs": ["c"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "ghost.json" "reader" "phantom"
}

@test "graph output that nothing produces: exit 3 naming it" {
    g=$(graph noout.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["missing_out"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["a"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "missing_out"
}

@test "declared intermediate disagreeing with inference: exit 3 with both shapes" {
    g=$(graph decl.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}},
                        "h": {"dtype": "f32", "shape": [3, 2]}},
 "inputs": [], "outputs": ["h"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["a"], "outputs": ["h"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "'h'" "[2,3]" "[3,2]"
}

@test "declared constant with no value source: exit 3 naming the tensor" {
    g=$(graph nosrc.json <<'EOF'
{"ftrun": 1, "tensors": {"lonely": {"dtype": "f32", "shape": [3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["lonely"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "lonely"
}

# --- tensor values -------------------------------------------------------------------

@test "missing data file: exit 3 naming tensor and file" {
    g=$(graph mf.json <<'EOF'
{"ftrun": 1, "tensors": {"w1": {"dtype": "f32", "shape": [3], "file": "weights/absent.bin"}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w1"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "w1" "absent.bin"
}

@test "data file path is relative to the graph's folder" {
    mkdir -p "$T/g/weights" "$T/elsewhere"
    py 'np.arange(3, dtype=np.float32).tofile(sys.argv[1])' "$T/g/weights/w.bin"
    graph g/rel.json <<'EOF' >/dev/null
{"ftrun": 1, "tensors": {"w1": {"dtype": "f32", "shape": [3], "file": "weights/w.bin"}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w1"], "outputs": ["b"]}]}
EOF
    cd "$T/elsewhere"
    run "$FTRUN" ../g/rel.json -o "$T/o"
    status_is 0
    py 'assert np.array_equal(np.load(sys.argv[1]), -np.arange(3, dtype=np.float32))' "$T/o/b.npy"
}

@test "short raw data file (offset + size beyond the end): exit 3 with tensor and both sizes" {
    head -c 13 /dev/zero > "$T/w.bin"
    g=$(graph short.json <<'EOF'
{"ftrun": 1, "tensors": {"w2": {"dtype": "f32", "shape": [5], "file": "w.bin", "offset": 6}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w2"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "w2" "w.bin" "13"
    # needed: 6 + 5*4 = 26 bytes (or 20 bytes at offset 6)
    [[ "$output" == *26* || "$output" == *20* ]]
}

@test "raw data file exactly long enough loads (offset honoured)" {
    py 'np.array([99, 1, 2, 3, 4, 5], np.float32).tofile(sys.argv[1])' "$T/w.bin"
    g=$(graph exact.json <<'EOF'
{"ftrun": 1, "tensors": {"w2": {"dtype": "f32", "shape": [5], "file": "w.bin", "offset": 4}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w2"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 0
    py 'assert np.array_equal(np.load(sys.argv[1]), -np.arange(1, 6, dtype=np.float32))' "$T/o/b.npy"
}

@test ".npy data file with the wrong dtype: exit 3 naming tensor and dtypes" {
    npy "$T/w.npy" 'np.ones(3, np.int64)'
    g=$(graph wdt.json <<'EOF'
{"ftrun": 1, "tensors": {"w3": {"dtype": "f32", "shape": [3], "file": "w.npy"}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w3"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "w3" "w.npy" "f32"
    [[ "$output" == *i64* || "$output" == *int64* ]]
}

@test ".npy data file with the wrong shape: exit 3 naming tensor and shapes" {
    npy "$T/w.npy" 'np.ones((2, 2), np.float32)'
    g=$(graph wsh.json <<'EOF'
{"ftrun": 1, "tensors": {"w3": {"dtype": "f32", "shape": [4], "file": "w.npy"}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w3"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "w3" "w.npy" "[4]" "[2,2]"
}

@test "bad dtype name: exit 3 naming tensor and the dtype" {
    g=$(graph bdt.json <<'EOF'
{"ftrun": 1, "tensors": {"w4": {"dtype": "f33", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w4"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "bdt.json: tensor 'w4'" "f33"
}

@test "data count mismatch: exit 3 naming tensor and both counts" {
    g=$(graph cnt.json <<'EOF'
{"ftrun": 1, "tensors": {"w5": {"dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w5"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "cnt.json: tensor 'w5'"
    msg=${output#*"tensor 'w5'"}
    [[ "$msg" == *5* ]]
    [[ "$msg" == *6* ]]
}

@test "nested data not matching the shape: exit 3 naming the tensor" {
    g=$(graph nest.json <<'EOF'
{"ftrun": 1, "tensors": {"w6": {"dtype": "f32", "shape": [2, 3], "data": [[1, 2], [3, 4], [5, 6]]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w6"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "tensor 'w6'"
}

@test "non-integral value for an int tensor: exit 3 naming tensor, index and value" {
    g=$(graph nint.json <<'EOF'
{"ftrun": 1, "tensors": {"w7": {"dtype": "i32", "shape": [3], "data": [1, 2.5, 3]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w7"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "tensor 'w7'" "2.5"
}

@test "out-of-range value for an int tensor: exit 3 naming tensor and value" {
    g=$(graph oor.json <<'EOF'
{"ftrun": 1, "tensors": {"w8": {"dtype": "u8", "shape": [2], "data": [7, 300]}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "identity", "inputs": ["w8"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "tensor 'w8'" "300"
}

@test "two value sources for one tensor: exit 3 naming the tensor" {
    g=$(graph two.json <<'EOF'
{"ftrun": 1, "tensors": {"w9": {"dtype": "f32", "shape": [2], "data": [1, 2], "init": {"fill": 0}}},
 "inputs": [], "outputs": ["b"],
 "nodes": [{"name": "n", "op": "neg", "inputs": ["w9"], "outputs": ["b"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "tensor 'w9'"
}

@test "integer division by zero while running: exit 3 naming node and element index" {
    run "$FTRUN" "$DATA/intdiv.json" -o "$T/o"
    status_is 3
    is_error
    has "node 'quot' (div): "
    msg=${output#*"(div): "}
    # the zero divisor is element 2
    [[ "$msg" =~ (^|[^0-9.])2([^0-9.]|$) ]]
}

# --- option values: exit 2 --------------------------------------------------------------

# bad_opt ARGS...: asserts exit 2, an error line, the hint, and that no result was written.
bad_opt() {
    run "$FTRUN" "$DATA/small.json" -o "$T/o" "$@"
    status_is 2
    is_error
    has "Try 'ftrun --help'."
    [ ! -e "$T/o" ]
}

@test "-n 0 is a usage error naming the option and value" {
    bad_opt -n 0
    has "0"
    [[ "$output" == *-n* || "$output" == *--iterations* ]]
}

@test "-n x is a usage error naming the value" {
    bad_opt -n x
    has "'x'"
}

@test "-n 5x (trailing garbage) is a usage error" {
    bad_opt -n 5x
    has "5x"
}

@test "--iterations -3 is a usage error" {
    bad_opt --iterations -3
    has "-3"
}

@test "-w -1 is a usage error" {
    bad_opt -w -1
    has "-1"
}

@test "--threads 0 is a usage error naming the option" {
    bad_opt --threads 0
    has "threads"
}

@test "--seed -5 is a usage error" {
    bad_opt --seed -5
    has "-5"
}

@test "--rtol x and --atol -1 are usage errors" {
    bad_opt --rtol x
    has "rtol"
    bad_opt --atol -1
    has "atol"
}

@test "--format xyz is a usage error naming the value" {
    bad_opt --format xyz
    has "xyz"
}

@test "--device gpu is a usage error (exit 2) naming the value" {
    bad_opt --device gpu
    has "gpu"
}

@test "unknown option: exit 2 naming it" {
    bad_opt --frobnicate
    has "frobnicate"
}

@test "unknown short option: exit 2" {
    bad_opt -Z
    has "Z"
}

@test "missing option argument: exit 2" {
    run "$FTRUN" "$DATA/small.json" -n
    status_is 2
    is_error
    has "Try 'ftrun --help'."
}

@test "extra positional argument: exit 2 naming it" {
    bad_opt "$DATA/input.json"
    has "input.json"
}

@test "unknown command-like word is treated as a graph file (exit 3, cannot open)" {
    run "$FTRUN" frobnicate
    status_is 3
    has "frobnicate: cannot open"
}

# --- output directory -----------------------------------------------------------------------

@test "output dir not writable (parent is a regular file): exit 4 naming the path" {
    echo plain > "$T/file"
    run "$FTRUN" "$DATA/small.json" -o "$T/file/out"
    status_is 4
    is_error
    has "$T/file/out"
}

@test "output dir is a regular file: exit 4 naming it" {
    echo plain > "$T/notdir"
    run "$FTRUN" "$DATA/small.json" -o "$T/notdir"
    status_is 4
    is_error
    has "$T/notdir"
    [ "$(cat "$T/notdir")" = plain ]
}

@test "a failed run leaves no partial result files in an existing output dir" {
    mkdir "$T/o"
    echo keep > "$T/o/marker.txt"
    run "$FTRUN" "$DATA/intdiv.json" -o "$T/o"
    status_is 3
    has "node 'quot' (div)"
    dir_has_exactly "$T/o" marker.txt
}

@test "a graph error leaves no output dir behind" {
    run "$FTRUN" "$(fed)" -o "$T/new/dir"
    status_is 3
    has "input 'x'"
    [ ! -e "$T/new" ]
}

@test "a failed run does not replace earlier results" {
    run "$FTRUN" "$DATA/input_default.json" -o "$T/o"
    status_is 0
    cp "$T/o/y.npy" "$T/y.before"
    npy "$T/bad.npy" 'np.ones(4, np.float32)'
    run "$FTRUN" "$DATA/input_default.json" -i x="$T/bad.npy" -o "$T/o"
    status_is 3
    cmp "$T/o/y.npy" "$T/y.before"
    dir_has_exactly "$T/o" y.npy timing.json
}
