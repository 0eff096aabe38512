#!/usr/bin/env bats
# Commands, help, version and option syntax of the ftrun command line.

bats_require_minimum_version 1.5.0
load helpers

# --- help, version, no arguments ---------------------------------------------

@test "no arguments: usage on stderr, nothing on stdout, exit 2" {
    run --separate-stderr "$FTRUN"
    status_is 2
    [ -z "$output" ]
    [[ "$stderr" == *[Uu]sage* ]]
    [[ "$stderr" == *ftrun* ]]
}

@test "--help: usage on stdout, empty stderr, exit 0" {
    run --separate-stderr "$FTRUN" --help
    status_is 0
    [ -z "$stderr" ]
    [[ "$output" == *[Uu]sage* ]]
    # the usage names the commands and the main options
    for word in run info ops devices --input --output-dir --expect --dry-run --threads --seed; do
        [[ "$output" == *"$word"* ]] || { echo "usage lacks $word"; return 1; }
    done
}

@test "-h is the same as --help" {
    run --separate-stderr "$FTRUN" --help
    status_is 0
    long=$output
    run --separate-stderr "$FTRUN" -h
    status_is 0
    [ -z "$stderr" ]
    [ "$output" = "$long" ]
}

@test "run --help prints usage on stdout, exit 0" {
    run --separate-stderr "$FTRUN" run --help
    status_is 0
    [ -z "$stderr" ]
    [[ "$output" == *[Uu]sage* ]]
    [[ "$output" == *--iterations* ]]
}

@test "--help after a graph still prints usage and runs nothing" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" --help
    status_is 0
    [[ "$output" == *[Uu]sage* ]]
    [ ! -e "$T/ftrun-out" ]
}

@test "--version prints 'ftrun 0.1.0' on stdout as its first line, exit 0" {
    run --separate-stderr "$FTRUN" --version
    status_is 0
    [ "${lines[0]}" = "ftrun 0.1.0" ]
    [ -z "$stderr" ]
}

@test "-V prints 'ftrun 0.1.0' on stdout as its first line, exit 0" {
    run --separate-stderr "$FTRUN" -V
    status_is 0
    [ "${lines[0]}" = "ftrun 0.1.0" ]
    [ -z "$stderr" ]
}

# --- run, the default command --------------------------------------------------

@test "run is the default command: GRAPH alone runs it into ftrun-out/" {
    run "$FTRUN" "$DATA/small.json"
    status_is 0
    [ -f "$T/ftrun-out/s.npy" ]
    [ -f "$T/ftrun-out/r.npy" ]
    [ -f "$T/ftrun-out/timing.json" ]
}

@test "explicit 'run' gives the same result files as the default command" {
    run "$FTRUN" "$DATA/small.json" -o "$T/implicit"
    status_is 0
    run "$FTRUN" run "$DATA/small.json" -o "$T/explicit"
    status_is 0
    cmp "$T/implicit/s.npy" "$T/explicit/s.npy"
    cmp "$T/implicit/r.npy" "$T/explicit/r.npy"
}

@test "'run FILE' runs a graph file named like a command word" {
    cp "$DATA/small.json" "$T/info"
    run "$FTRUN" run info -o "$T/o"
    status_is 0
    [ -f "$T/o/s.npy" ]
    [ -f "$T/o/timing.json" ]
}

@test "a command word as first argument is the command (info is not run as a graph)" {
    cp "$DATA/small.json" "$T/info"
    # 'ftrun info' with no graph argument is a usage error, not a run of ./info
    run "$FTRUN" info
    status_is 2
    [ ! -e "$T/ftrun-out" ]
}

# --- info ----------------------------------------------------------------------

@test "info prints the graph name, file, inputs/outputs, nodes and the memory plan on stdout" {
    run --separate-stderr "$FTRUN" info "$DATA/input.json"
    status_is 0
    [[ "$output" == *fed* ]]
    [[ "$output" == *input.json* ]]
    # input x and output y with dtype and shape
    echo "$output" | grep -E "\bx\b.*f32.*\[2,3\]"
    echo "$output" | grep -E "\by\b.*f32.*\[2,2\]"
    # node table: name and op
    echo "$output" | grep -E "proj.*matmul"
    echo "$output" | grep -E "planned peak: +[0-9]+ bytes"
    echo "$output" | grep -E "unplanned: +[0-9]+ bytes"
    echo "$output" | grep -E "weights: +[0-9]+"
    # info runs nothing and writes nothing
    [ ! -e "$T/ftrun-out" ]
}

@test "info lists nodes in execution order even when the file lists them out of order" {
    g=$(graph rev.json <<'EOF'
{"ftrun": 1, "name": "rev",
 "tensors": {"a": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": [], "outputs": ["c"],
 "nodes": [
   {"name": "second", "op": "exp", "inputs": ["b"], "outputs": ["c"]},
   {"name": "first", "op": "neg", "inputs": ["a"], "outputs": ["b"]}
 ]}
EOF
)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    first=$(echo "$output" | grep -n "first" | head -1 | cut -d: -f1)
    second=$(echo "$output" | grep -n "second" | head -1 | cut -d: -f1)
    [ -n "$first" ] && [ -n "$second" ]
    [ "$first" -lt "$second" ]
}

@test "info without a graph argument: exit 2" {
    run "$FTRUN" info
    status_is 2
    has "ftrun: error:"
}

# --- ops -----------------------------------------------------------------------

@test "ops lists every op of the op table with the cpu dtypes" {
    run --separate-stderr "$FTRUN" ops
    status_is 0
    names=$(sed -n 's/^X([A-Z0-9_]*, *"\([a-z0-9_]*\)".*/\1/p' "$ROOT/src/graph/ops.def")
    [ -n "$names" ]
    for op in $names; do
        echo "$output" | grep -qE "^$op[[:space:]]" || { echo "ops lacks $op"; return 1; }
    done
    echo "$output" | grep -E "^add[[:space:]].*cpu:.*f32.*f64.*i32"
    echo "$output" | grep -E "^matmul[[:space:]].*cpu:.*f32.*f64"
    # matmul is float only: no integer dtype on its line
    ! echo "$output" | grep -E "^matmul[[:space:]].*i32"
    echo "$output" | grep -E "^relu[[:space:]].*cpu:.*f32"
}

@test "ops says 'not available' for every op this version does not implement" {
    run --separate-stderr "$FTRUN" ops
    status_is 0
    missing=$(sed -n 's/^X([A-Z0-9_]*, *"\([a-z0-9_]*\)".*ft_infer_unavailable.*/\1/p' "$ROOT/src/graph/ops.def")
    for op in $missing; do
        echo "$output" | grep -E "^$op[[:space:]].*not available" || { echo "$op not marked"; return 1; }
    done
    # and an implemented op is not marked
    ! echo "$output" | grep -E "^add[[:space:]].*not available"
}

@test "ops --device cpu restricts the listing to the cpu backend" {
    run --separate-stderr "$FTRUN" ops --device cpu
    status_is 0
    echo "$output" | grep -E "^add[[:space:]].*cpu:.*f32"
    ! echo "$output" | grep -i "cuda"
    n_all=$(sed -n 's/^X([A-Z0-9_]*, *"\([a-z0-9_]*\)".*/\1/p' "$ROOT/src/graph/ops.def" | wc -l)
    n_lines=$(echo "$output" | grep -cE "^[a-z][a-z0-9_]*[[:space:]]")
    [ "$n_lines" -ge "$n_all" ]
}

@test "ops --device=cpu (= form) gives the same listing as --device cpu" {
    run --separate-stderr "$FTRUN" ops --device cpu
    status_is 0
    a=$output
    run --separate-stderr "$FTRUN" ops --device=cpu
    status_is 0
    [ "$output" = "$a" ]
    echo "$output" | grep -E "^softmax[[:space:]].*cpu:.*f32"
}

@test "ops --device gpu is a usage error" {
    run "$FTRUN" ops --device gpu
    status_is 2
    has "ftrun: error:" "gpu"
}

# --- devices -------------------------------------------------------------------

@test "devices lists the cpu backend with threads and cores" {
    run --separate-stderr "$FTRUN" devices
    status_is 0
    echo "$output" | grep -E "^cpu[[:space:]]+CPU reference backend, [1-9][0-9]* threads \([1-9][0-9]* cores\)"
}

@test "devices says why no CUDA device is listed" {
    if have_cuda; then skip "a CUDA device is usable here"; fi
    run "$FTRUN" devices
    status_is 0
    echo "$output" | grep -i "cuda"
    ! echo "$output" | grep -E "^cuda:"
}

# --- option syntax -------------------------------------------------------------

@test "options may come after the graph, --opt=value and --opt value" {
    run "$FTRUN" "$DATA/small.json" --output-dir="$T/o1" --iterations=3 --warmup 2
    status_is 0
    [ -f "$T/o1/s.npy" ]
    [ "$(jget "$T/o1/timing.json" 'd["iterations"]')" = 3 ]
    [ "$(jget "$T/o1/timing.json" 'd["warmup"]')" = 2 ]
}

@test "options may come before the graph" {
    run "$FTRUN" -o "$T/o2" -n 2 "$DATA/small.json"
    status_is 0
    [ -f "$T/o2/r.npy" ]
    [ "$(jget "$T/o2/timing.json" 'd["iterations"]')" = 2 ]
    run "$FTRUN" run --output-dir "$T/o3" "$DATA/small.json"
    status_is 0
    [ -f "$T/o3/r.npy" ]
}

@test "short options take attached values (-n4 -oDIR)" {
    run "$FTRUN" "$DATA/small.json" -n4 "-o$T/o4"
    status_is 0
    [ "$(jget "$T/o4/timing.json" 'd["iterations"]')" = 4 ]
}

@test "-- ends options: a graph file whose name starts with '-'" {
    cp "$DATA/small.json" "$T/-g.json"
    run "$FTRUN" -o "$T/o5" -- -g.json
    status_is 0
    [ -f "$T/o5/s.npy" ]
    run "$FTRUN" run -o "$T/o6" -- -g.json
    status_is 0
    [ -f "$T/o6/s.npy" ]
}

@test "without --, a file name starting with '-' is an unknown option (exit 2)" {
    cp "$DATA/small.json" "$T/-g.json"
    run "$FTRUN" -g.json
    status_is 2
    has "ftrun: error:" "Try 'ftrun --help'."
}

@test "-q: nothing on stderr on success, results still written" {
    run --separate-stderr "$FTRUN" -q "$DATA/small.json" -o "$T/q"
    status_is 0
    [ -z "$stderr" ]
    [ -z "$output" ]
    [ -f "$T/q/s.npy" ]
    run --separate-stderr "$FTRUN" "$DATA/small.json" --quiet -o "$T/q2"
    status_is 0
    [ -z "$stderr" ]
}

@test "-q still reports errors" {
    run --separate-stderr "$FTRUN" -q "$T/nope.json"
    status_is 3
    [[ "$stderr" == *"ftrun: error:"*nope.json* ]]
}

@test "default stderr on success: one summary line with graph, nodes, device, the run's time, results dir" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/sum"
    status_is 0
    [ -z "$output" ]
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" =~ ^"ftrun: small: 2 nodes on cpu: 1 run, "[0-9]+\.[0-9]{3}" ms; results in ".*sum/$ ]]
}

@test "-v prints more than the default (load/plan details)" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/v0"
    status_is 0
    quiet_lines=$(printf '%s\n' "$stderr" | wc -l)
    run --separate-stderr "$FTRUN" "$DATA/small.json" -v -o "$T/v1"
    status_is 0
    verbose_lines=$(printf '%s\n' "$stderr" | wc -l)
    [ "$verbose_lines" -gt "$quiet_lines" ]
    # the details mention the arena size
    [[ "$stderr" == *arena* ]]
    run --separate-stderr "$FTRUN" "$DATA/small.json" --verbose -o "$T/v2"
    status_is 0
    [ "$(printf '%s\n' "$stderr" | wc -l)" -gt "$quiet_lines" ]
}

@test "-d cpu, --device=cpu and -d auto all run on the cpu" {
    for d in "-d cpu" "--device=cpu" "--device auto"; do
        rm -rf "$T/o"
        run "$FTRUN" "$DATA/small.json" $d -o "$T/o"
        status_is 0
        [ -f "$T/o/s.npy" ]
    done
    [ "$(jget "$T/o/timing.json" 'd["device"]["name"]')" = cpu ] || have_cuda
}

@test "-d cuda without a usable CUDA backend: exit 4, says the device is not available" {
    if have_cuda; then skip "a CUDA device is usable here"; fi
    run "$FTRUN" "$DATA/small.json" -d cuda -o "$T/c"
    status_is 4
    has "ftrun: error:" "cuda:0" "not available"
    [ ! -e "$T/c/s.npy" ]
    run "$FTRUN" "$DATA/small.json" --device cuda:1 -o "$T/c"
    status_is 4
    has "cuda:1" "not available"
}

@test "start: ftrun executes itself once more for GOMP_SPINCOUNT only where OpenMP threads may run a graph" {
    command -v strace > /dev/null || skip "strace is not installed"
    export ASAN_OPTIONS=detect_leaks=0 # LeakSanitizer does not work under ptrace
    starts() { # the number of execve calls of one command line
        env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OPENBLAS_CORETYPE=Haswell \
            strace -f -e trace=execve -o "$T/st.log" "$FTRUN" "$@" > /dev/null 2>&1
        grep -c 'execve(' "$T/st.log"
    }
    [ "$(starts "$DATA/small.json" -q -o "$T/a" --threads 2)" -eq 2 ]
    [ "$(starts run "$DATA/small.json" -q -o "$T/b")" -eq 2 ]
    [ "$(starts "$DATA/small.json" -q -o "$T/c" --threads 1)" -eq 1 ]
    [ "$(starts run "$DATA/small.json" -q -o "$T/d" --threads=1)" -eq 1 ]
    [ "$(starts info "$DATA/small.json")" -eq 1 ]
    [ "$(starts --version)" -eq 1 ]
    # the user's own setting: never a second start for it
    run env GOMP_SPINCOUNT=5 OPENBLAS_CORETYPE=Haswell strace -f -e trace=execve -o "$T/u.log" "$FTRUN" "$DATA/small.json" -q -o "$T/e"
    [ "$status" -eq 0 ]
    [ "$(grep -c 'execve(' "$T/u.log")" -eq 1 ]
    for o in a b c d e; do [ -f "$T/$o/timing.json" ]; done
}
