#!/usr/bin/env bats
# The documentation's examples run as tests, extracted from the sources
# (tests/examples.py): every command of ftrun(1)'s EXAMPLES with the exit
# status it documents, the graph of ftrun-graph(5)'s EXAMPLE, and the
# README's Usage block, which must also print no warning about runs or
# transfers. A documented example that stops working fails here.

bats_require_minimum_version 1.5.0
load helpers

# Runs the commands (JSON lines of tests/examples.py) from a folder that holds
# the example graphs, with /tmp/ paths moved into the test's folder and the
# program named PROG replaced by the ftrun under test. Commands matching SKIP
# (a regex) are left out. Fails at the first command whose exit status
# differs from the documented one.
run_examples() {
    local prog=$1 skip=$2 list=$3
    mkdir -p "$T/work/tmp"
    ln -sfn "$ROOT/graphs" "$T/work/graphs"
    local n=0
    while IFS= read -r line; do
        cmd=$(py 'print(json.loads(sys.argv[1])["cmd"])' "$line")
        want=$(py 'print(json.loads(sys.argv[1])["status"])' "$line")
        if [ -n "$skip" ] && [[ "$cmd" =~ $skip ]]; then
            continue
        fi
        cmd=${cmd//\/tmp\//$T/work/tmp/}
        cmd=${cmd/#$prog /\"\$FTRUN\" }
        st=0
        (cd "$T/work" && eval "$cmd") > "$T/out" 2> "$T/err" || st=$?
        if [ "$st" -ne "$want" ]; then
            echo "example '$cmd' exited $st, documented $want:" >&2
            cat "$T/err" >&2
            return 1
        fi
        if [ -n "${NO_WARNINGS:-}" ] && grep -E "warning: (transfers take longer|[0-9]+ runs?: p99 needs|--threads)" "$T/err"; then
            echo "example '$cmd' warns" >&2
            return 1
        fi
        n=$((n + 1))
    done < "$list"
    echo "$n examples ran" >&3
    [ "$n" -gt 0 ]
}

@test "ftrun(1) EXAMPLES: every command runs with the exit status the page documents" {
    "$PYTHON" "$TESTS_DIR/examples.py" man1 "$ROOT/man/ftrun.1" > "$T/list"
    [ "$(wc -l < "$T/list")" -ge 15 ]
    # the seed example is the documented failure
    grep -q '"cmd": "ftrun graphs/mlp.json --seed 5.*"status": 1' "$T/list"
    run_examples ftrun '' "$T/list"
}

@test "ftrun-graph(5) EXAMPLE: the graph runs, and its output is a softmax over 3 classes for 4 rows" {
    "$PYTHON" "$TESTS_DIR/examples.py" man5 "$ROOT/man/ftrun-graph.5" > "$T/tiny.json"
    run --separate-stderr "$FTRUN" "$T/tiny.json" -n 1 -o "$T/o"
    status_is 0
    py 'p = np.load(sys.argv[1]); assert p.shape == (4, 3) and p.dtype == np.float32, p.shape
assert (p > 0).all() and np.allclose(p.sum(1), 1, atol=1e-6), p' "$T/o/probs.npy"
}

@test "README Usage: every command for the cpu runs, exit 0, with no warning about runs, transfers or threads" {
    "$PYTHON" "$TESTS_DIR/examples.py" readme "$ROOT/README.md" > "$T/list"
    [ "$(wc -l < "$T/list")" -ge 15 ]
    NO_WARNINGS=1 run_examples build/ftrun ' -d cuda ' "$T/list"
}

@test "README Usage: the GPU commands run on a CUDA device" {
    if ! have_cuda; then
        skip "no usable CUDA device"
    fi
    "$PYTHON" "$TESTS_DIR/examples.py" readme "$ROOT/README.md" | grep -- ' -d cuda ' > "$T/list"
    NO_WARNINGS=1 run_examples build/ftrun '' "$T/list"
}
