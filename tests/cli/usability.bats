#!/usr/bin/env bats
# The rough edges a new user meets first: messages that say what happened,
# warnings that carry information, and documentation that matches behaviour.

bats_require_minimum_version 1.5.0
load helpers

MAN1=$ROOT/man/ftrun.1
MAN5=$ROOT/man/ftrun-graph.5

# The text of a man page section, without roff requests: section FILE NAME
section() {
    awk -v want="$2" '/^\.SH /{on = (substr($0, 5) == want || substr($0, 5) == "\"" want "\"")} on' "$1"
}

@test "a JSON file cut inside a string: unexpected end of file, where the file ends" {
    printf '{"ftrun": 1,\n "outputs": ["y"], "out' > "$T/cut.json"
    run "$FTRUN" "$T/cut.json"
    status_is 3
    has "cut.json:2:24: JSON syntax error: unexpected end of file (in the string that starts at 2:20)"
    lacks "near 'out'"
}

@test "a JSON file cut inside a word: unexpected end of file" {
    printf '{"ftrun": 1, "name": tru' > "$T/cut.json"
    run "$FTRUN" "$T/cut.json"
    status_is 3
    has "unexpected end of file"
    # a bad character before the cut is still reported where it is
    printf '{"ftrun": 1, "name": @x, "a": "b' > "$T/bad.json"
    run "$FTRUN" "$T/bad.json"
    status_is 3
    has "JSON syntax error near '@x"
}

@test "--expect with one output: '1 output matches'" {
    "$FTRUN" "$GRAPHS/mlp.json" -q -o "$T/gold"
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -o "$T/o" --expect "$T/gold"
    status_is 0
    [[ "$stderr" == *"ftrun: expect: 1 output matches $T/gold"* ]]
    "$FTRUN" "$DATA/small.json" -q -o "$T/gold2"
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/o2" --expect "$T/gold2"
    [[ "$stderr" == *"ftrun: expect: 2 outputs match $T/gold2"* ]]
}

@test "a broadcast error names both operands' tensors and shapes" {
    graph bc.json <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]},
                         "b": {"dtype": "f32", "shape": [4], "data": [1, 2, 3, 4]}},
 "outputs": ["y"], "nodes": [{"name": "s", "op": "add", "inputs": ["a", "b"], "outputs": ["y"]}]}
EOF
    run "$FTRUN" "$T/bc.json"
    status_is 3
    has "node 's' (add): shapes [2,3] ('a') and [4] ('b') do not broadcast"
}

@test "--threads above the number of cores: a warning naming both" {
    cores=$(getconf _NPROCESSORS_ONLN)
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/o" --threads $((cores + 2))
    status_is 0
    [[ "$stderr" == *"warning: --threads $((cores + 2)) is more than the $cores core"* ]]
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/o" --threads "$cores"
    [[ "$stderr" != *warning* ]]
}

@test "the same input given twice with -i: usage error naming both files" {
    npy "$T/a.npy" 'np.ones((2, 3), np.float32)'
    npy "$T/b.npy" 'np.zeros((2, 3), np.float32)'
    run --separate-stderr "$FTRUN" "$DATA/input.json" -i x="$T/a.npy" -i x="$T/b.npy" -o "$T/o"
    status_is 2
    [[ "$stderr" == *"input 'x' is given twice"*"$T/a.npy"*"$T/b.npy"* ]]
    [ ! -e "$T/o" ]
}

@test "exit status after SIGINT and SIGTERM is in ftrun(1)'s table and --help" {
    section "$MAN1" "EXIT STATUS" | grep -q '^\.BR 130 ", " 143'
    section "$MAN1" "EXIT STATUS" | grep -q 'SIGINT or SIGTERM'
    run "$FTRUN" --help
    has "130/143"
    # and the behaviour it documents
    "$FTRUN" "$GRAPHS/transformer_block.json" --duration 30 -v -o "$T/o" 2> "$T/err" &
    pid=$!
    # -v says when the graph is loaded and planned: the run is under way then
    for _ in $(seq 200); do grep -q "loaded" "$T/err" && break; sleep 0.1; done
    sleep 0.2
    kill -TERM "$pid"
    st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ]
    grep -q "interrupted by SIGTERM; no results written" "$T/err"
}

@test "ftrun(1) DESCRIPTION names both backends" {
    section "$MAN1" DESCRIPTION > "$T/desc"
    ! grep -q "one backend" "$T/desc"
    grep -q "CUDA backend" "$T/desc"
}

@test "--allow-external-files: in --help, ftrun(1), the README, and ftrun-graph(5)'s \"file\" section" {
    run "$FTRUN" --help
    has "--allow-external-files"
    grep -q 'allow\\-external\\-files' "$MAN1"
    grep -q -- '--allow-external-files' "$ROOT/README.md"
    # ftrun-graph(5) no longer says an absolute path "is used as is" without the option
    awk '/^\.SS .*values from a file/{on=1; next} /^\.SS /{on=0} on' "$MAN5" > "$T/file-section"
    grep -q 'allow\\-external\\-files' "$T/file-section"
    # the behaviour: an absolute "file" path is refused without it, read with it
    npy "$T/w.npy" 'np.arange(3, dtype=np.float32)'
    mkdir "$T/g"
    printf '{"ftrun": 1, "tensors": {"w": {"dtype": "f32", "shape": [3], "file": "%s"}}, "outputs": ["y"],
 "nodes": [{"op": "neg", "inputs": ["w"], "outputs": ["y"]}]}' "$T/w.npy" > "$T/g/abs.json"
    run "$FTRUN" "$T/g/abs.json" -o "$T/o"
    status_is 3
    has "--allow-external-files"
    run "$FTRUN" "$T/g/abs.json" -o "$T/o" --allow-external-files
    status_is 0
}

@test "ftrun(1) ENVIRONMENT: the thread paragraph is its own entry, not part of FTRUN_CUDA_BACKEND" {
    section "$MAN1" ENVIRONMENT > "$T/env"
    awk '/^\.B FTRUN_CUDA_BACKEND$/{on=1; next} /^\.TP/{on=0} on' "$T/env" > "$T/entry"
    [ -s "$T/entry" ]
    ! grep -qi "threads" "$T/entry"
    grep -q 'OMP_NUM_THREADS' "$T/env"
    grep -q '^\.B FTRUN_DEFAULT_DURATION' "$T/env"
}

@test "ops: no file outside the repository cited; the format's dtypes come first, as ftrun(1) says" {
    run --separate-stderr "$FTRUN" ops --device cpu
    status_is 0
    header=$(printf '%s\n' "$output" | head -1)
    [[ "$header" != *ops.md* ]]
    for cited in $(printf '%s\n' "$header" | grep -oE '[a-z_-]+\.(md|[15])' || true); do
        [ -e "$ROOT/$cited" ] || [ -e "$ROOT/man/$cited" ] || { echo "cites $cited"; return 1; }
    done
    # matmul takes floats only; add takes integers too; the backend column follows
    printf '%s\n' "$output" | grep -qE '^matmul +format: f16 bf16 f32 f64 +cpu: '
    printf '%s\n' "$output" | grep -qE '^add +format: [a-z0-9 ]*i32[a-z0-9 ]* +cpu: '
    ! printf '%s\n' "$output" | grep -qE '^matmul +format: .*i32.* +cpu:'
}

@test "make uninstall removes the lib/ftrun folder it installed into" {
    mkdir -p "$T/stage/usr/bin" "$T/stage/usr/lib/ftrun" "$T/stage/usr/share/man/man1" "$T/stage/usr/share/man/man5"
    touch "$T/stage/usr/bin/ftrun" "$T/stage/usr/lib/ftrun/libftrun-cuda.so" \
          "$T/stage/usr/share/man/man1/ftrun.1" "$T/stage/usr/share/man/man5/ftrun-graph.5"
    make -s -C "$ROOT" uninstall PREFIX=/usr DESTDIR="$T/stage" > /dev/null
    [ ! -e "$T/stage/usr/lib/ftrun" ]
    [ ! -e "$T/stage/usr/bin/ftrun" ]
    [ -d "$T/stage/usr/lib" ]
}

@test "make: builds every core's worth at once by default, -jN still chooses, and plain make builds all" {
    run make -n -p -C "$ROOT" NVCC= 2>/dev/null
    printf '%s\n' "$output" | grep -qE "^MAKEFLAGS = .*-j$(nproc)( |$)"
    printf '%s\n' "$output" | grep -q '^\.DEFAULT_GOAL := all$'
    run make -n -p -C "$ROOT" NVCC= -j7 2>/dev/null
    [ "$(printf '%s\n' "$output" | grep -E '^MAKEFLAGS = ' | grep -oE -- '-j[0-9]+' | sort -u)" = "-j7" ]
}
