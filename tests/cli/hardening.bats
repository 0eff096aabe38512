#!/usr/bin/env bats
# Files a graph may read, output names, limits, and interruption.

bats_require_minimum_version 1.5.0
load helpers

mkgraph() { # mkgraph DIR NAME FILEVALUE: a graph whose constant w comes from "file"
    mkdir -p "$1"
    py '
g = {"ftrun": 1, "tensors": {"w": {"dtype": "f32", "shape": [3], "file": sys.argv[2]}},
     "outputs": ["y"], "nodes": [{"op": "neg", "inputs": ["w"], "outputs": ["y"]}]}
json.dump(g, open(sys.argv[1], "w"))' "$1/$2" "$3"
}

@test "paths: a file inside the graph's folder (and a subfolder) is read" {
    mkdir -p "$T/g/sub"
    npy "$T/g/sub/w.npy" "np.arange(3, dtype=np.float32)"
    mkgraph "$T/g" in.json sub/w.npy
    run "$FTRUN" "$T/g/in.json" -q -o "$T/o"
    status_is 0
    py 'assert (np.load(sys.argv[1]) == -np.arange(3)).all()' "$T/o/y.npy"
}

@test "paths: '..' out of the graph's folder is refused with exit 3, naming both paths" {
    npy "$T/w.npy" "np.ones(3, np.float32)"
    mkgraph "$T/g" up.json ../w.npy
    run --separate-stderr "$FTRUN" "$T/g/up.json" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"tensor 'w'"*'"file" ../w.npy resolves to '*"/w.npy, outside the graph's folder"*"--allow-external-files"* ]]
    [ ! -e "$T/o/y.npy" ]
}

@test "paths: an absolute path is refused" {
    npy "$T/w.npy" "np.ones(3, np.float32)"
    mkgraph "$T/g" abs.json "$T/w.npy"
    run --separate-stderr "$FTRUN" "$T/g/abs.json" -o "$T/o"
    status_is 3
    [[ "$stderr" == *'"file" is an absolute path'* ]]
}

@test "paths: a symbolic link that leaves the folder is refused; info refuses too" {
    npy "$T/w.npy" "np.ones(3, np.float32)"
    mkgraph "$T/g" link.json link.npy
    ln -s "$T/w.npy" "$T/g/link.npy"
    run --separate-stderr "$FTRUN" "$T/g/link.json" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"outside the graph's folder"* ]]
    run --separate-stderr "$FTRUN" info "$T/g/link.json"
    status_is 3
}

@test "paths: --allow-external-files lifts the rule (run, info, pack)" {
    npy "$T/w.npy" "np.full(3, 2, np.float32)"
    mkgraph "$T/g" up.json ../w.npy
    run "$FTRUN" "$T/g/up.json" -q -o "$T/o" --allow-external-files
    status_is 0
    py 'assert (np.load(sys.argv[1]) == -2).all()' "$T/o/y.npy"
    run "$FTRUN" info "$T/g/up.json" --allow-external-files
    status_is 0
    run "$FTRUN" pack "$T/g/up.json" -o "$T/p.ftg" -q --allow-external-files
    status_is 0
}

@test "output names cannot write outside the output folder" {
    graph esc.json <<'JSON'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [2], "data": [1, 2]}},
 "outputs": ["../../escape", "/abs/y"],
 "nodes": [{"op": "neg", "inputs": ["x"], "outputs": ["../../escape"]},
           {"op": "abs", "inputs": ["x"], "outputs": ["/abs/y"]}]}
JSON
    mkdir -p "$T/a/b"
    run "$FTRUN" "$T/esc.json" -q -o "$T/a/b/out"
    status_is 0
    [ -f "$T/a/b/out/.._.._escape.npy" ]
    [ -f "$T/a/b/out/_abs_y.npy" ]
    [ ! -e "$T/a/escape.npy" ] && [ ! -e "$T/escape.npy" ] && [ ! -e /abs/y.npy ]
}

@test "limits: JSON nesting deeper than 1000 levels: exit 3 naming the limit" {
    py 'print("{\"ftrun\": 1, \"x\": " + "[" * 1100 + "]" * 1100 + "}")' > "$T/deep.json"
    run --separate-stderr "$FTRUN" "$T/deep.json"
    status_is 3
    [[ "$stderr" == *"deep.json:1:"*"JSON nesting deeper than 1000 levels"* ]]
}

@test "limits: names longer than 1024 bytes: exit 3" {
    py '
n = "t" * 1500
json.dump({"ftrun": 1, "tensors": {n: {"dtype": "f32", "shape": [1], "data": [1]}}, "outputs": [n], "nodes": []},
          open(sys.argv[1], "w"))' "$T/name.json"
    run --separate-stderr "$FTRUN" "$T/name.json"
    status_is 3
    [[ "$stderr" == *"a tensor name of 1500 bytes"*"limit of 1024 bytes"* ]]
}

@test "limits: rank above 8, a shape product that overflows, a tensor over 2^40 bytes: exit 3" {
    for shape in "[1,1,1,1,1,1,1,1,1]" "[4294967296,4294967296,16]" "[1099511627776]"; do
        py '
json.dump({"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": json.loads(sys.argv[2])}},
           "inputs": ["x"], "outputs": ["y"], "nodes": [{"op": "neg", "inputs": ["x"], "outputs": ["y"]}]},
          open(sys.argv[1], "w"))' "$T/big.json" "$shape"
        run --separate-stderr "$FTRUN" "$T/big.json" --dry-run
        status_is 3
        [[ "$stderr" == *"tensor 'x'"* ]]
        [[ "$stderr" == *"rank 9 exceeds the maximum rank 8"* || "$stderr" == *"too large"* ]]
    done
}

@test "limits: an inferred output beyond the byte limit is refused before anything runs" {
    graph expand.json <<'JSON'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [1], "data": [1]}}, "outputs": ["y"],
 "nodes": [{"name": "huge", "op": "expand", "inputs": ["x"], "outputs": ["y"], "attrs": {"shape": [1048576, 1048576]}}]}
JSON
    run --separate-stderr "$FTRUN" "$T/expand.json" -o "$T/o"
    status_is 3
    [[ "$stderr" == *"node 'huge' (expand)"*"too large"* ]]
}

long_graph() {
    graph long.json <<'JSON'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [512, 512], "init": {"fill": 0.001}}}, "outputs": ["c"],
 "nodes": [{"op": "matmul", "inputs": ["a", "a"], "outputs": ["c"]}]}
JSON
}

@test "SIGINT during a long run: exit 130 promptly, no result files" {
    g=$(long_graph)
    "$FTRUN" "$g" -n 1000000 -o "$T/o" 2> "$T/err" &
    pid=$!
    sleep 1
    kill -INT $pid
    start=$(date +%s)
    status=0
    wait $pid || status=$?
    [ "$status" -eq 130 ]
    [ $(( $(date +%s) - start )) -le 5 ]
    grep -q "interrupted by SIGINT; no results written" "$T/err"
    [ -z "$(ls -A "$T/o" 2>/dev/null)" ]
}

@test "SIGTERM during a long run: exit 143, no result files, no temporary files" {
    g=$(long_graph)
    mkdir -p "$T/o"
    "$FTRUN" "$g" -n 1000000 -o "$T/o" 2> "$T/err" &
    pid=$!
    sleep 1
    kill -TERM $pid
    status=0
    wait $pid || status=$?
    [ "$status" -eq 143 ]
    grep -q "interrupted by SIGTERM" "$T/err"
    [ -z "$(ls -A "$T/o")" ]
}
