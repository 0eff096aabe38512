#!/usr/bin/env bats
# Output paths that are safe to point anywhere (src/cli/outfile.c): regular
# files through an exclusive temporary file renamed into place, FIFOs and
# character devices (or links to them) written in place, "-" for standard
# output, planted links never followed, and every output location checked
# before anything runs.

bats_require_minimum_version 1.5.0
load helpers

# A graph whose run fails with exit 3 (integer division by zero): an output
# problem found before the run gives exit 4 instead.
divzero() {
    graph dz.json <<'EOF'
{"ftrun": 1, "name": "dz",
 "tensors": {"a": {"dtype": "i32", "shape": [2], "data": [1, 2]}, "b": {"dtype": "i32", "shape": [2], "data": [1, 0]}},
 "outputs": ["y"],
 "nodes": [{"name": "d", "op": "div", "inputs": ["a", "b"], "outputs": ["y"]}]}
EOF
}

@test "pack -o FIFO: written through, the FIFO stays a FIFO" {
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/ref.ftg" -q
    mkfifo "$T/p"
    timeout 20 cat "$T/p" > "$T/got" 3>&- &
    run "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/p" -q
    wait
    status_is 0
    [ -p "$T/p" ]
    cmp "$T/got" "$T/ref.ftg"
}

@test "pack -o -: the binary graph on standard output, no file named -" {
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/ref.ftg" -q
    "$FTRUN" pack "$GRAPHS/mlp.json" -o - -q > "$T/out.ftg"
    cmp "$T/out.ftg" "$T/ref.ftg"
    [ ! -e "$T/-" ]
}

@test "pack -o a link to /dev/stdout: the link is kept, the bytes reach standard output" {
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/ref.ftg" -q
    ln -s /dev/stdout "$T/lnk"
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/lnk" -q | cat > "$T/piped"
    [ -L "$T/lnk" ]
    cmp "$T/piped" "$T/ref.ftg"
    # standard output a regular file: the file gets the graph, the link stays
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/lnk" -q > "$T/redirected"
    [ -L "$T/lnk" ]
    cmp "$T/redirected" "$T/ref.ftg"
}

@test "pack -o a link to a regular file: the link is kept, its target replaced" {
    "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/ref.ftg" -q
    echo old > "$T/real.ftg"
    ln -s real.ftg "$T/link.ftg"
    run "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/link.ftg" -q
    status_is 0
    [ -L "$T/link.ftg" ]
    cmp "$T/real.ftg" "$T/ref.ftg"
}

@test "--trace -: the trace on standard output, results still written" {
    "$FTRUN" "$GRAPHS/mlp.json" -n 2 -q -o "$T/o" --trace - > "$T/trace.out"
    py 'd = json.load(open(sys.argv[1])); assert sum(e["ph"] == "X" and e["tid"] == 1 for e in d["traceEvents"]) == 2' "$T/trace.out"
    [ -f "$T/o/probs.npy" ] && [ -f "$T/o/timing.json" ]
    [ ! -e "$T/-" ]
}

@test "--trace to a link to /proc/self/fd/1: the link is kept, the trace reaches standard output" {
    ln -s /proc/self/fd/1 "$T/lnk"
    "$FTRUN" "$GRAPHS/mlp.json" -n 2 -q -o "$T/o" --trace "$T/lnk" | cat > "$T/piped"
    [ -L "$T/lnk" ]
    py 'd = json.load(open(sys.argv[1])); assert any(e.get("name") == "run 1" for e in d["traceEvents"])' "$T/piped"
}

@test "--trace to a FIFO: written in place" {
    mkfifo "$T/tp"
    timeout 20 cat "$T/tp" > "$T/got" 3>&- &
    run "$FTRUN" "$GRAPHS/mlp.json" -n 1 -q -o "$T/o" --trace "$T/tp"
    wait
    status_is 0
    [ -p "$T/tp" ]
    py 'json.load(open(sys.argv[1]))' "$T/got"
}

# The old temporary names were OUT.tmpPID; `exec` keeps the shell's PID, so a
# link planted under that name is in place when ftrun starts.
@test "a link planted at the temporary name of pack -o is never followed" {
    echo precious > "$T/victim"
    ( ln -s "$T/victim" "$T/out.ftg.tmp$BASHPID"; exec "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/out.ftg" -q )
    [ "$(cat "$T/victim")" = precious ]
    [ -f "$T/out.ftg" ] && [ ! -L "$T/out.ftg" ]
    "$FTRUN" info "$T/out.ftg" > /dev/null
}

@test "links planted at the temporary names of results, timing.json and the trace are never followed" {
    echo precious > "$T/victim"
    mkdir "$T/o"
    ( for f in .probs.npy .timing.json; do ln -s "$T/victim" "$T/o/$f.tmp$BASHPID"; done
      ln -s "$T/victim" "$T/t.json.tmp$BASHPID"
      exec "$FTRUN" "$GRAPHS/mlp.json" -n 1 -q -o "$T/o" --trace "$T/t.json" )
    [ "$(cat "$T/victim")" = precious ]
    [ -f "$T/o/probs.npy" ] && [ ! -L "$T/o/probs.npy" ]
    [ -f "$T/o/timing.json" ] && [ ! -L "$T/o/timing.json" ]
    [ -f "$T/t.json" ] && [ ! -L "$T/t.json" ]
    py 'np.load(sys.argv[1]); json.load(open(sys.argv[2])); json.load(open(sys.argv[3]))' "$T/o/probs.npy" "$T/o/timing.json" "$T/t.json"
}

@test "no temporary file is left beside the results" {
    run "$FTRUN" "$GRAPHS/mlp.json" -n 1 -q -o "$T/o" --trace "$T/t.json"
    status_is 0
    dir_has_exactly "$T/o" probs.npy timing.json
    mkdir -p "$T/p"
    run "$FTRUN" pack "$GRAPHS/mlp.json" -o "$T/p/m.ftg" -q
    status_is 0
    dir_has_exactly "$T/p" m.ftg
}

@test "an output folder below a regular file: exit 4 before the graph runs" {
    divzero
    touch "$T/file"
    run "$FTRUN" "$T/dz.json" -o "$T/file/sub"
    status_is 4
    has "file/sub"
    lacks "division by zero"
}

@test "a missing --trace folder: exit 4 before the graph runs, no result written" {
    divzero
    run "$FTRUN" "$T/dz.json" -o "$T/o" --trace "$T/nodir/t.json"
    status_is 4
    has "nodir"
    lacks "division by zero"
    [ ! -e "$T/o" ]
}

@test "--trace naming a directory: exit 4 before the graph runs" {
    divzero
    mkdir "$T/tdir"
    run "$FTRUN" "$T/dz.json" -o "$T/o" --trace "$T/tdir"
    status_is 4
    has "tdir" "directory"
    lacks "division by zero"
}

@test "a result file name taken by a directory: exit 4 before the graph runs" {
    divzero
    mkdir -p "$T/o/y.npy"
    run "$FTRUN" "$T/dz.json" -o "$T/o"
    status_is 4
    has "y.npy" "directory"
    lacks "division by zero"
}

@test "pack into a missing folder: exit 4 before the graph is read" {
    printf '{"ftrun": 1, "name": @bad' > "$T/bad.json"
    run "$FTRUN" pack "$T/bad.json" -o "$T/nodir/m.ftg"
    status_is 4
    has "nodir"
    lacks "syntax"
}

@test "an output folder that cannot be written: exit 4 before the graph runs" {
    if [ "$(id -u)" = 0 ]; then
        skip "root writes to read-only folders"
    fi
    divzero
    mkdir "$T/ro"
    chmod 555 "$T/ro"
    run "$FTRUN" "$T/dz.json" -o "$T/ro"
    chmod 755 "$T/ro"
    status_is 4
    lacks "division by zero"
}
