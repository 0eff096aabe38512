#!/usr/bin/env bats
# `ftrun test DIR...`: both folder layouts, verdicts, JUnit XML, -j, isolation
# of crashing and hanging cases, exit statuses. Expected values come from
# NumPy (or from ONNX's own test data), never from ftrun.

bats_require_minimum_version 1.5.0
load helpers

# A JSON graph computing y = x * 2 + b (b has a value of its own).
scale_graph() {
    mkdir -p "$1"
    cat > "$1/graph.json" <<'EOF'
{"ftrun": 1, "name": "scale",
 "tensors": {"x": {"dtype": "f32", "shape": [2, 3]},
             "two": {"dtype": "f32", "shape": [], "data": 2},
             "b": {"dtype": "f32", "shape": [3], "data": [0.5, -1, 3]}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "mul", "inputs": ["x", "two"], "outputs": ["x2"]},
           {"op": "add", "inputs": ["x2", "b"], "outputs": ["y"]}]}
EOF
}

# A JSON graph with two inputs and two outputs: s = a + c, p = a * c.
two_graph() {
    mkdir -p "$1"
    cat > "$1/graph.json" <<'EOF'
{"ftrun": 1, "name": "two",
 "tensors": {"a": {"dtype": "f32", "shape": [4]}, "c": {"dtype": "f32", "shape": [4]}},
 "inputs": ["a", "c"], "outputs": ["s", "p"],
 "nodes": [{"op": "add", "inputs": ["a", "c"], "outputs": ["s"]},
           {"op": "mul", "inputs": ["a", "c"], "outputs": ["p"]}]}
EOF
}

# suite/: scale (by name), two (by position, two data sets)
make_suite() {
    scale_graph suite/scale
    mkdir -p suite/scale/inputs suite/scale/expected
    py 'x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
np.save("suite/scale/inputs/x.npy", x)
np.save("suite/scale/expected/y.npy", x * 2 + np.array([0.5, -1, 3], np.float32))'
    two_graph suite/two
    for k in 0 1; do mkdir -p suite/two/test_data_set_$k; done
    py 'for k in range(2):
    a = np.linspace(-1, 1, 4).astype(np.float32) * (k + 1); c = np.float32(3) - a
    d = "suite/two/test_data_set_%d/" % k
    np.save(d + "input_0.npy", a); np.save(d + "input_1.npy", c)
    np.save(d + "output_0.npy", a + c); np.save(d + "output_1.npy", a * c)'
}

# junit FILE: "tests failures skipped" of the testsuites element, then one
# "classname/name status" line per testcase (status pass, failure:TYPE or skipped).
junit() {
    py 'import xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert r.tag == "testsuites", r.tag
print(r.get("tests"), r.get("failures"), r.get("skipped"))
n = 0
for s in r.findall("testsuite"):
    cases = s.findall("testcase")
    assert int(s.get("tests")) == len(cases)
    assert int(s.get("failures")) == sum(c.find("failure") is not None for c in cases)
    assert int(s.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
    for c in cases:
        float(c.get("time"))
        f, k = c.find("failure"), c.find("skipped")
        st = "failure:" + f.get("type") if f is not None else "skipped" if k is not None else "pass"
        print(c.get("classname") + "/" + c.get("name"), st)
        n += 1
assert n == int(r.get("tests"))' "$1"
}

@test "test: ftrun's layout by name and by position, every data set, exit 0" {
    make_suite
    run --separate-stderr "$FTRUN" test suite -d cpu
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "PASS"*" suite/scale ("*" ms)" ]]
    [[ "${lines[1]}" == "PASS"*" suite/two ("*" ms)" ]]
    [[ "${lines[2]}" == "2 passed, 0 failed, 0 unsupported (2 cases in "* ]]
}

@test "test: a DIR that is itself a case is named after its folder" {
    make_suite
    run --separate-stderr "$FTRUN" test suite/scale/
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "PASS"*" scale ("* ]]
}

@test "test: a value out of tolerance fails the case: exit 1, the case, output and worst error named" {
    make_suite
    py 'y = np.load("suite/scale/expected/y.npy"); y[1, 2] += 0.5; y[0, 0] += 0.25
np.save("suite/scale/expected/y.npy", y)'
    run --separate-stderr "$FTRUN" test suite -d cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"FAIL"*" suite/scale ("*"output 'y': 2 of 6 values out of tolerance"*"max abs error 0.5"*"worst at [1,2]"* ]]
    [[ "$output" == *"PASS"*" suite/two"* ]]
    [[ "${lines[-1]}" == "1 passed, 1 failed, 0 unsupported"* ]]
}

@test "test: the failing data set is named; --atol large enough makes it pass" {
    make_suite
    py 'd = "suite/two/test_data_set_1/"; p = np.load(d + "output_1.npy"); p[3] += 0.01; np.save(d + "output_1.npy", p)'
    run --separate-stderr "$FTRUN" test suite/two
    [ "$status" -eq 1 ]
    [[ "$output" == *"FAIL"*" two ("*"test_data_set_1: output 'p': 1 of 4 values out of tolerance"* ]]
    run --separate-stderr "$FTRUN" test suite/two --atol 0.02
    [ "$status" -eq 0 ]
}

@test "test: -v prints every output's comparison under the case" {
    make_suite
    run --separate-stderr "$FTRUN" test suite/two -v
    [ "$status" -eq 0 ]
    [[ "$output" == *"    test_data_set_0: output 's': 4 values match"* ]]
    [[ "$output" == *"    test_data_set_1: output 'p': 4 values match"* ]]
}

@test "test: data that does not fit the graph fails the case, naming the file" {
    make_suite
    npy suite/scale/inputs/zz.npy 'np.zeros(3, np.float32)'
    npy suite/two/test_data_set_0/input_1.npy 'np.zeros(5, np.float32)'
    run --separate-stderr "$FTRUN" test suite
    [ "$status" -eq 1 ]
    [[ "$output" == *"suite/scale ("*"inputs/zz.npy names no input of the graph (its inputs: 'x')"* ]]
    [[ "$output" == *"suite/two ("*"input_1.npy has shape [5] but input 'c' has shape [4]"* ]]
}

@test "test: a missing expected value fails the case" {
    make_suite
    rm suite/two/test_data_set_0/output_1.npy
    run --separate-stderr "$FTRUN" test suite/two
    [ "$status" -eq 1 ]
    [[ "$output" == *"no expected value for output 'p'"* ]]
}

@test "test: --junit writes JUnit XML with the counts, failures and their types" {
    make_suite
    py 'y = np.load("suite/scale/expected/y.npy"); y[0, 1] = 100; np.save("suite/scale/expected/y.npy", y)'
    mkdir -p more/ok
    scale_graph more/ok
    mkdir -p more/ok/inputs more/ok/expected
    py 'x = np.ones((2, 3), np.float32); np.save("more/ok/inputs/x.npy", x)
np.save("more/ok/expected/y.npy", x * 2 + np.array([0.5, -1, 3], np.float32))'
    run --separate-stderr "$FTRUN" test suite more --junit out/report.xml
    [ "$status" -eq 1 ]
    run junit out/report.xml
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "3 1 0" ]
    [ "${lines[1]}" = "suite/scale failure:failure" ]
    [ "${lines[2]}" = "suite/two pass" ]
    [ "${lines[3]}" = "more/ok pass" ]
    py 'import xml.etree.ElementTree as ET
f = ET.parse("out/report.xml").getroot().find(".//failure")
assert "output \x27y\x27" in f.get("message") and "got 100" not in f.get("message") and "expected 100" in f.get("message"), f.get("message")'
}

@test "test: -j 1 and -j 4 give the same verdicts in the same order" {
    make_suite
    for k in 1 2 3 4 5; do cp -r suite/scale suite/scale_$k; done
    py 'y = np.load("suite/scale_3/expected/y.npy"); y[1, 1] += 1; np.save("suite/scale_3/expected/y.npy", y)'
    run --separate-stderr "$FTRUN" test suite -j 1 --junit j1.xml
    [ "$status" -eq 1 ]
    one=$(printf '%s\n' "${lines[@]}" | sed 's/ ([0-9.]* ms)//; s/ in [0-9.]* s, -j [0-9]*//')
    run --separate-stderr "$FTRUN" test suite -j 4 --junit j4.xml
    [ "$status" -eq 1 ]
    four=$(printf '%s\n' "${lines[@]}" | sed 's/ ([0-9.]* ms)//; s/ in [0-9.]* s, -j [0-9]*//')
    [ "$one" = "$four" ]
    [[ "$one" == *"FAIL"*"suite/scale_3: output 'y'"* ]]
    [ "$(junit j1.xml)" = "$(junit j4.xml)" ]
}

# A graph that runs for many seconds.
slow_case() {
    mkdir -p "$1/expected"
    # 64 products of 3000x3000 matrices: 3.5 TFLOP
    local nodes='{"op": "matmul", "inputs": ["a", "a"], "outputs": ["t1"]}' k
    for k in $(seq 2 63); do
        nodes="$nodes, {\"op\": \"matmul\", \"inputs\": [\"t$((k - 1))\", \"a\"], \"outputs\": [\"t$k\"]}"
    done
    nodes="$nodes, {\"op\": \"matmul\", \"inputs\": [\"t63\", \"a\"], \"outputs\": [\"y\"]}"
    cat > "$1/graph.json" <<EOF
{"ftrun": 1, "name": "slow",
 "tensors": {"a": {"dtype": "f32", "shape": [3000, 3000], "init": {"fill": 0.001}}},
 "inputs": [], "outputs": ["y"],
 "nodes": [$nodes]}
EOF
    npy "$1/expected/y.npy" 'np.zeros((3000, 3000), np.float32)'
}

@test "test: a case that outlives --timeout is killed and fails; the others still run" {
    make_suite
    slow_case suite/a_slow
    start=$(date +%s)
    run --separate-stderr "$FTRUN" test suite --timeout 1 -j 2 --junit j.xml
    [ "$status" -eq 1 ]
    [ $(( $(date +%s) - start )) -lt 30 ]
    [[ "${lines[0]}" == "FAIL"*" suite/a_slow ("*"timed out after 1 s (--timeout); the case was killed" ]]
    [[ "${lines[1]}" == "PASS"*" suite/scale"* ]]
    [[ "${lines[2]}" == "PASS"*" suite/two"* ]]
    [[ "$(junit j.xml)" == *"suite/a_slow failure:timeout"* ]]
}

@test "test: a case whose process crashes is that case's failure; the run goes on" {
    make_suite
    slow_case suite/a_slow
    "$FTRUN" test suite -j 1 --timeout 120 --junit j.xml > out.txt 2> err.txt &
    pid=$!
    child=
    for _ in $(seq 100); do
        child=$(pgrep -P "$pid" | head -1) && [ -n "$child" ] && break
        sleep 0.1
    done
    [ -n "$child" ]
    sleep 0.3
    kill -SEGV "$child"
    wait "$pid" || st=$?
    [ "${st:-0}" -eq 1 ]
    cat out.txt
    # under AddressSanitizer its handler reports the signal and exits
    grep -Eq "^FAIL .* suite/a_slow \(.*crashed: (killed by signal 11 \(Segmentation fault\)|exited with status [0-9]+ before a verdict; its last words: .*AddressSanitizer)" out.txt
    grep -q "^PASS .* suite/scale" out.txt
    grep -q "^PASS .* suite/two" out.txt
    grep -q "^2 passed, 1 failed, 0 unsupported" out.txt
    [[ "$(junit j.xml)" == *"suite/a_slow failure:crash"* ]]
}

# suite/: a_ok and scale (y = x * 2 + b), m_slow (runs for minutes), two; in
# that order, so that with -j 1 one worker runs a_ok, then m_slow.
batch_suite() {
    make_suite
    cp -r suite/scale suite/a_ok
    slow_case suite/m_slow
}

@test "test: -j 1 runs every case in one worker process; -j 2 in two" {
    command -v strace > /dev/null || skip "strace is not installed"
    make_suite
    for k in 1 2 3 4 5; do cp -r suite/scale suite/scale_$k; done
    # processes forked (clone without CLONE_THREAD), not threads; LeakSanitizer
    # does not work under ptrace
    export ASAN_OPTIONS=detect_leaks=0
    forks() { grep -E '(clone3?|v?fork)\(' "$1" | grep -vc CLONE_THREAD; }
    run strace -f -o s1.log -e trace=clone,clone3,fork,vfork "$FTRUN" test suite -j 1
    [ "$status" -eq 0 ]
    [[ "$output" == *"7 passed, 0 failed, 0 unsupported (7 cases in "* ]]
    [ "$(forks s1.log)" -eq 1 ]
    run strace -f -o s2.log -e trace=clone,clone3,fork,vfork "$FTRUN" test suite -j 2 -d cpu
    [ "$status" -eq 0 ]
    # the device check's child, then two workers
    [ "$(forks s2.log)" -eq 3 ]
}

@test "test: a case that times out in the middle of a batch fails alone; a new worker runs the rest" {
    batch_suite
    run --separate-stderr "$FTRUN" test suite -j 1 --timeout 2 --junit j.xml
    echo "$output" "$stderr"
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "PASS"*" suite/a_ok ("* ]]
    [[ "${lines[1]}" == "FAIL"*" suite/m_slow ("*"timed out after 2 s (--timeout); the case was killed" ]]
    [[ "${lines[2]}" == "PASS"*" suite/scale ("* ]]
    [[ "${lines[3]}" == "PASS"*" suite/two ("* ]]
    [[ "${lines[4]}" == "3 passed, 1 failed, 0 unsupported (4 cases in "* ]]
    [ "$(junit j.xml)" = "4 1 0
suite/a_ok pass
suite/m_slow failure:timeout
suite/scale pass
suite/two pass" ]
}

@test "test: a worker that crashes in the middle of a batch fails only its case; a new worker runs the rest" {
    batch_suite
    "$FTRUN" test suite -j 1 --timeout 120 --junit j.xml > out.txt 2> err.txt &
    pid=$!
    # a_ok is done (its line is printed), so the one worker is running m_slow
    for _ in $(seq 300); do
        grep -q "suite/a_ok" out.txt && break
        sleep 0.1
    done
    grep -q "^PASS .* suite/a_ok" out.txt
    child=$(pgrep -P "$pid" | head -1)
    [ -n "$child" ]
    sleep 0.3
    kill -SEGV "$child"
    wait "$pid" || st=$?
    cat out.txt err.txt
    [ "${st:-0}" -eq 1 ]
    grep -Eq "^FAIL .* suite/m_slow \(.*crashed: (killed by signal 11 \(Segmentation fault\)|exited with status [0-9]+ before a verdict; its last words: .*AddressSanitizer)" out.txt
    [ "$(sed -n 3p out.txt | cut -c1-4)" = PASS ] && grep -q "^PASS .* suite/scale" out.txt
    grep -q "^PASS .* suite/two" out.txt
    grep -q "^3 passed, 1 failed, 0 unsupported (4 cases" out.txt
    [[ "$(junit j.xml)" == *"suite/m_slow failure:crash"* ]]
}

@test "test: a case's tolerance.json replaces the dtype defaults; --rtol/--atol win over it" {
    make_suite
    py 'y = np.load("suite/scale/expected/y.npy"); y[0, 1] += 0.004; np.save("suite/scale/expected/y.npy", y)'
    run --separate-stderr "$FTRUN" test suite/scale
    [ "$status" -eq 1 ]
    # the default atol, scaled by the largest |expected| (9)
    [[ "$output" == *"(rtol=0.0001, atol=9e-05: 1e-05 x max |expected| 9)"* ]]
    echo '{"rtol": 0, "atol": 0.005}' > suite/scale/tolerance.json
    run --separate-stderr "$FTRUN" test suite -v
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"output 'y': 6 values match (rtol=0, atol=0.005)"* ]]
    # the other case keeps the defaults
    [[ "$output" == *"output 's': 4 values match (rtol=0.0001, atol=3e-05: 1e-05 x max |expected| 3)"* ]]
    run --separate-stderr "$FTRUN" test suite/scale --atol 0.001
    [ "$status" -eq 1 ]
    [[ "$output" == *"(rtol=0, atol=0.001)"* ]]
    echo '{"rtol": 0, "tol": 1}' > suite/scale/tolerance.json
    run --separate-stderr "$FTRUN" test suite
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "FAIL"*"suite/scale ("*"suite/scale/tolerance.json: unknown key 'tol' (only rtol and atol)" ]]
    [[ "${lines[1]}" == "PASS"*"suite/two ("* ]]
    echo '{"atol": -1}' > suite/scale/tolerance.json
    run --separate-stderr "$FTRUN" test suite/scale
    [ "$status" -eq 1 ]
    [[ "$output" == *"tolerance.json: atol is not a finite number >= 0"* ]]
}

@test "test --save-outputs: every case's outputs as DIR/CASE/[SET/]NAME.npy; outputs without expected values are saved, not failed" {
    make_suite
    rm -r suite/scale/expected
    run --separate-stderr "$FTRUN" test suite --save-outputs saved -j 2
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "PASS"*" suite/scale ("* ]]
    [[ "${lines[1]}" == "PASS"*" suite/two ("* ]]
    py 'x = np.load("suite/scale/inputs/x.npy")
y = np.load("saved/suite/scale/y.npy")
assert y.dtype == np.float32 and np.array_equal(y, x * 2 + np.array([0.5, -1, 3], np.float32)), y
for k in range(2):
    d = "suite/two/test_data_set_%d/" % k
    a, c = np.load(d + "input_0.npy"), np.load(d + "input_1.npy")
    assert np.array_equal(np.load("saved/suite/two/test_data_set_%d/s.npy" % k), a + c)
    assert np.array_equal(np.load("saved/suite/two/test_data_set_%d/p.npy" % k), a * c)'
    # without --save-outputs the missing expected value is a failure again
    run --separate-stderr "$FTRUN" test suite
    [ "$status" -eq 1 ]
    [[ "${lines[0]}" == "FAIL"*"suite/scale: no expected values"* ]]
    run --separate-stderr "$FTRUN" test suite --save-outputs ""
    [ "$status" -eq 2 ]
}

@test "test --save-outputs: an empty output without an expected value is saved with its shape, static or known only at run time" {
    mkdir -p suite/empty suite/nz
    cat > suite/empty/graph.json <<'EOF'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [0, 3], "data": []}}, "inputs": [], "outputs": ["y"],
 "nodes": [{"op": "identity", "inputs": ["x"], "outputs": ["y"]}]}
EOF
    cat > suite/nz/graph.json <<'EOF'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [0, 3], "data": []},
 "m": {"dtype": "i32", "shape": [2, 2], "data": [[0, 4], [0, 0]]}}, "inputs": [], "outputs": ["y", "z"],
 "nodes": [{"op": "non_zero", "inputs": ["x"], "outputs": ["y"]}, {"op": "non_zero", "inputs": ["m"], "outputs": ["z"]}]}
EOF
    run --separate-stderr "$FTRUN" test suite --save-outputs saved -j 2
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "PASS"*" suite/empty ("* ]]
    [[ "${lines[1]}" == "PASS"*" suite/nz ("* ]]
    py 'assert np.load("saved/suite/empty/y.npy").shape == (0, 3)
assert np.load("saved/suite/nz/y.npy").shape == (2, 0)
assert np.load("saved/suite/nz/z.npy").tolist() == [[0], [1]]'
}

@test "test: a folder that holds no case, or is missing, is a failed entry of the report; the others still run" {
    make_suite
    mkdir -p empty/sub
    echo '{}' > empty/sub/data.json
    run --separate-stderr "$FTRUN" test suite empty nowhere --junit j.xml
    [ "$status" -eq 1 ]
    [[ "$output" == *"PASS        suite/scale"* ]]
    [[ "$output" == *"FAIL        empty: not a test folder: no model.onnx, graph.json or graph.ftg"* ]]
    [[ "$output" == *"FAIL        nowhere: not a test folder: No such file or directory"* ]]
    [[ "$output" == *"2 passed, 2 failed, 0 unsupported (4 cases in "* ]]
    # JUnit: an <error> of type missing, counted in errors
    py 'import xml.etree.ElementTree as ET
r = ET.parse("j.xml").getroot()
assert (r.get("tests"), r.get("failures"), r.get("errors")) == ("4", "0", "2"), r.attrib
e = [c.find("error") for s in r for c in s if c.find("error") is not None]
assert [x.get("type") for x in e] == ["missing", "missing"], e'
    run --separate-stderr "$FTRUN" test nowhere
    [ "$status" -eq 1 ]
    [[ "$output" == *"FAIL        nowhere: not a test folder: No such file or directory"* ]]
}

@test "test: usage errors are exit 2" {
    run --separate-stderr "$FTRUN" test
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"'test' needs at least one DIR"* ]]
    run --separate-stderr "$FTRUN" test . -j 0
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"option --jobs: '0' is not an integer >= 1"* ]]
    run --separate-stderr "$FTRUN" test . --timeout x
    [ "$status" -eq 2 ]
    run --separate-stderr "$FTRUN" test . --format npz
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"'--format' does not apply to 'test'"* ]]
    run --separate-stderr "$FTRUN" test . -d gpu
    [ "$status" -eq 2 ]
}

@test "test: -q prints only failures and the summary" {
    make_suite
    py 'y = np.load("suite/scale/expected/y.npy"); y[0, 0] = 9; np.save("suite/scale/expected/y.npy", y)'
    run --separate-stderr "$FTRUN" test suite -q
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[0]}" == "FAIL"*"suite/scale"* ]]
    [[ "${lines[1]}" == "1 passed, 1 failed, 0 unsupported"* ]]
}

# --- the ONNX layout --------------------------------------------------------

# onnx_case DIR: model.onnx computing Relu(X) + Y with its data set in .pb files.
onnx_case() {
    py 'import onnx, os
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]; os.makedirs(d + "/test_data_set_0", exist_ok=True)
g = helper.make_graph([helper.make_node("Relu", ["X"], ["R"]), helper.make_node("Add", ["R", "Y"], ["Z"])], "g",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3]), helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), d + "/model.onnx")
x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32); y = np.full((2, 3), 0.5, np.float32)
for name, a in (("input_0", x), ("input_1", y), ("output_0", np.maximum(x, 0) + y)):
    open(d + "/test_data_set_0/" + name + ".pb", "wb").write(numpy_helper.from_array(a).SerializeToString())' "$1"
}

@test "test: the ONNX layout: model.onnx with TensorProto inputs and outputs by position" {
    onnx_case onnx/relu_add
    run --separate-stderr "$FTRUN" test onnx -d cpu
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "PASS"*" onnx/relu_add ("* ]]
    py 'from onnx import numpy_helper, TensorProto
t = TensorProto(); t.ParseFromString(open("onnx/relu_add/test_data_set_0/output_0.pb", "rb").read())
a = numpy_helper.to_array(t).copy(); a[0, 1] = -7
open("onnx/relu_add/test_data_set_0/output_0.pb", "wb").write(numpy_helper.from_array(a).SerializeToString())'
    run --separate-stderr "$FTRUN" test onnx -d cpu
    [ "$status" -eq 1 ]
    [[ "$output" == *"FAIL"*"onnx/relu_add ("*"test_data_set_0: output 'Z': 1 of 6 values out of tolerance"*"(got 2.5, expected -7)"* ]]
}

@test "test: ONNX's own test data: node/test_abs and node/test_add pass" {
    data=/usr/share/libonnx-testdata/data/node
    [ -d "$data/test_abs" ] || skip "libonnx-testdata is not installed"
    mkdir node
    ln -s "$data/test_abs" "$data/test_add" node/
    run --separate-stderr "$FTRUN" test node -d cpu --junit j.xml
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [ "$(junit j.xml)" = "2 0 0
node/test_abs pass
node/test_add pass" ]
}

@test "test: a model the importer refuses as unsupported is UNSUPPORTED, never passed nor failed" {
    py 'import onnx, os
from onnx import helper, TensorProto, numpy_helper
os.makedirs("m/custom/test_data_set_0")
g = helper.make_graph([helper.make_node("Frobnicate", ["X"], ["Z"], domain="com.example")], "g",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]), "m/custom/model.onnx")
for name in ("input_0", "output_0"):
    open("m/custom/test_data_set_0/" + name + ".pb", "wb").write(numpy_helper.from_array(np.ones(2, np.float32)).SerializeToString())'
    run --separate-stderr "$FTRUN" test m --junit j.xml
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "UNSUPPORTED"*" m/custom ("*"Frobnicate"* ]]
    [[ "${lines[1]}" == "0 passed, 0 failed, 1 unsupported"* ]]
    [ "$(junit j.xml)" = "1 0 1
m/custom skipped" ]
}

@test "test --help: its options on stdout, exit 0" {
    run --separate-stderr "$FTRUN" test --help
    [ "$status" -eq 0 ]
    [[ "$output" == "Usage: ftrun test DIR... [OPTIONS]"* ]]
    [[ "$output" == *"--junit FILE"* && "$output" == *"--timeout SEC"* && "$output" == *"-j, --jobs N"* ]]
}

# The ONNX test-data tier's rules, on a small tree: node/relu_add passes,
# node/custom is refused as unsupported.
tier() {
    touch "$T/differs.txt"
    ONNX_TESTDATA=$T/data FTRUN_ONNX_LIST=$T/list.txt FTRUN_ONNX_DIFFERS=$T/differs.txt "$PYTHON" "$ROOT/tests/onnx/testdata.py" "$@"
}

@test "ONNX tier: a listed case that passes, an unlisted refusal, a stale entry and a mismatch fail; a listed refusal is skipped" {
    onnx_case data/node/relu_add
    py 'import onnx, os
from onnx import helper, TensorProto, numpy_helper
os.makedirs("data/node/custom/test_data_set_0")
g = helper.make_graph([helper.make_node("Frobnicate", ["X"], ["Z"], domain="com.example")], "g",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]), "data/node/custom/model.onnx")
for name in ("input_0", "output_0"):
    open("data/node/custom/test_data_set_0/" + name + ".pb", "wb").write(numpy_helper.from_array(np.ones(2, np.float32)).SerializeToString())'
    # the list regenerated: the refusal only, never the passing case
    : > list.txt
    run tier --write-list
    [ "$status" -eq 0 ]
    [ "$(grep -v "^#" list.txt)" = "node/custom  non-default domain: com.example (Frobnicate)" ]
    run tier
    [ "$status" -eq 0 ]
    [[ "$output" == *"ok 1 - node/custom # skip unsupported: "*"Frobnicate"* ]]
    [[ "$output" == *"ok 2 - node/relu_add"* ]]
    # a listed case that passes, and a listed case that does not exist
    printf 'node/relu_add  op missing: Relu\nnode/gone  op missing: Gone\n' >> list.txt
    run tier
    [ "$status" -eq 1 ]
    [[ "$output" == *"not ok 2 - node/relu_add # passes but "*"/list.txt lists it"* ]]
    [[ "$output" == *"not ok 3 - node/gone # listed in "*"/list.txt but no such case"* ]]
    # an unlisted refusal fails
    : > list.txt
    run tier
    [ "$status" -eq 1 ]
    [[ "$output" == *"not ok 1 - node/custom # refused as unsupported but not in "*"/list.txt"* ]]
    # a mismatch fails even when listed, and --write-list never lists it
    py 'from onnx import numpy_helper
a = np.zeros((2, 3), np.float32)
open("data/node/relu_add/test_data_set_0/output_0.pb", "wb").write(numpy_helper.from_array(a).SerializeToString())'
    printf 'node/relu_add  op missing: Relu\n' > list.txt
    run tier --write-list
    [ "$status" -eq 1 ]
    [[ "$output" == *"not ok 2 - node/relu_add # test_data_set_0: output 'Z': "*"out of tolerance"* ]]
    run grep -c relu_add list.txt
    [ "$output" = 0 ]
    # a mismatch listed as "reference differs" is skipped with its reason; once it passes, the entry fails
    printf 'node/custom  non-default domain: com.example (Frobnicate)\n' > list.txt
    printf 'node/relu_add  the reference is made another way\n' > differs.txt
    run tier
    [ "$status" -eq 0 ]
    [[ "$output" == *"ok 2 - node/relu_add # skip reference differs: the reference is made another way"* ]]
    onnx_case data/node/relu_add
    run tier
    [ "$status" -eq 1 ]
    [[ "$output" == *"not ok 2 - node/relu_add # passes but "*"/differs.txt lists it"* ]]
}

@test "test: a JSON graph's named dims are bound by the inputs/NAME files of each data set" {
    mkdir -p nd/scale
    cat > nd/scale/graph.json <<'JSON'
{"ftrun": 1, "name": "named",
 "tensors": {"x": {"dtype": "f32", "shape": ["n", 3]}, "two": {"dtype": "f32", "shape": [], "data": 2}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "mul", "inputs": ["x", "two"], "outputs": ["y"]}]}
JSON
    py 'import os
for k, n in ((0, 2), (1, 5)):
    d = "nd/scale/test_data_set_%d/" % k
    os.makedirs(d + "inputs"); os.makedirs(d + "expected")
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3) - 4
    np.save(d + "inputs/x.npy", x); np.save(d + "expected/y.npy", x * 2)'
    run --separate-stderr "$FTRUN" test nd -v
    echo "$output" "$stderr"
    [ "$status" -eq 0 ]
    [[ "$output" == *"test_data_set_0: output 'y': 6 values match"* ]]
    [[ "$output" == *"test_data_set_1: output 'y': 15 values match"* ]]
}

@test "parity suite on the cpu: batch mode (one ftrun test over test folders) and run mode give the same verdicts" {
    # batched cases of several tolerance classes, an expected error and a
    # --check-nodes chain (these two kept in run mode)
    FTPARITY_ONLY='^(unary/(abs|exp)/f32/|binary/div/|reduce/reduce_sum/f16/|chain/mlp/f32)' run "$ROOT/tests/cuda/batch_same.sh"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"ok 1 - parity suite on the cpu: batch mode ("*" cases batched) and run mode agree on all "*" verdicts"* ]]
    [[ "$output" == *"# batch of "*" cases: "*" test "*" -d cpu -j "* ]]
}

@test "test: an expected value of another dtype or shape fails the case naming output and file, by position and by name" {
    make_suite
    npy suite/two/test_data_set_1/output_1.npy 'np.zeros(4, np.int32)'
    npy suite/scale/expected/y.npy 'np.zeros((3, 2), np.float32)'
    run --separate-stderr "$FTRUN" test suite
    [ "$status" -eq 1 ]
    [[ "$output" == *"suite/two ("*"test_data_set_1: output 'p' is f32 but suite/two/test_data_set_1/output_1.npy holds i32"* ]]
    [[ "$output" == *"suite/scale ("*"output 'y' has shape [2,3] but suite/scale/expected/y.npy has shape [3,2]"* ]]
}

@test "test: an expected file that cannot be read fails the case naming output and file" {
    make_suite
    printf 'not an array' > suite/two/test_data_set_0/output_0.npy
    run --separate-stderr "$FTRUN" test suite/two
    [ "$status" -eq 1 ]
    [[ "$output" == *"output 's': suite/two/test_data_set_0/output_0.npy"* ]]
}
