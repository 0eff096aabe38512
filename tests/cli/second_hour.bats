#!/usr/bin/env bats
# What a user meets after the first hour: default tolerances that accept a
# correct float32 model, files that are not graphs, test runs that leave out
# known cases, models with unbound symbolic dims, timings with a warm-up,
# machine-readable output, fused node names and table columns, NumPy's
# printing, interruptions, malformed initializers, and the documentation of
# each. Expected values come from NumPy (or PyTorch in float64), never from
# ftrun.

bats_require_minimum_version 1.5.0
load helpers

MAN1=$ROOT/man/ftrun.1
MAN5=$ROOT/man/ftrun-graph.5

# mlp3 DIR: a float32 MLP (x [16,512] -> 512 -> relu -> 512 -> relu -> 1000,
# weights as .npy files beside DIR/g.json) and DIR/want.npy, its output
# computed by NumPy in float64 from the same float32 values: logits up to
# about 100, some near 0.
mlp3() {
    mkdir -p "$1"
    py 'd = sys.argv[1]
r = np.random.RandomState(3)
x = r.standard_normal((16, 512)).astype(np.float32)
w1 = (r.standard_normal((512, 512)) * np.sqrt(2 / 512)).astype(np.float32)
b1 = (r.standard_normal(512) * 0.1).astype(np.float32)
w2 = (r.standard_normal((512, 512)) * np.sqrt(2 / 512)).astype(np.float32)
w3 = r.standard_normal((512, 1000)).astype(np.float32)
for n, a in dict(x=x, w1=w1, b1=b1, w2=w2, w3=w3).items():
    np.save("%s/%s.npy" % (d, n), a)
f = lambda a: a.astype(np.float64)
y = np.maximum(np.maximum(f(x) @ f(w1) + f(b1), 0) @ f(w2), 0) @ f(w3)
np.save(d + "/want.npy", y.astype(np.float32))
# NumPy float32, the same arithmetic
np.save(d + "/numpy32.npy", np.maximum(np.maximum(x @ w1 + b1, 0) @ w2, 0) @ w3)
T = lambda s: {"dtype": "f32", "shape": list(s.shape)}
g = {"ftrun": 1, "name": "mlp3",
     "tensors": {"x": dict(T(x), file="x.npy"), "w1": dict(T(w1), file="w1.npy"), "b1": dict(T(b1), file="b1.npy"),
                 "w2": dict(T(w2), file="w2.npy"), "w3": dict(T(w3), file="w3.npy")},
     "inputs": ["x"], "outputs": ["y"],
     "nodes": [{"op": "matmul", "inputs": ["x", "w1"], "outputs": ["a1"]},
               {"op": "add", "inputs": ["a1", "b1"], "outputs": ["a1b"]},
               {"op": "relu", "inputs": ["a1b"], "outputs": ["h1"]},
               {"op": "matmul", "inputs": ["h1", "w2"], "outputs": ["a2"]},
               {"op": "relu", "inputs": ["a2"], "outputs": ["h2"]},
               {"op": "matmul", "inputs": ["h2", "w3"], "outputs": ["y"]}]}
json.dump(g, open(d + "/g.json", "w"))' "$1"
}

# --- 1. default tolerances --------------------------------------------------------

@test "--expect defaults: a correct float32 MLP against its float64 reference passes; the unscaled atol failed it" {
    mlp3 m
    run --separate-stderr "$FTRUN" m/g.json --expect m/want.npy -o o -v
    status_is 0
    # the atol applied is 1e-5 times the output's scale, the largest |expected|
    [[ "$stderr" =~ "16000 values match (rtol=0.0001, atol="[0-9.e-]+": 1e-05 x max |expected| "([0-9.]+)")" ]]
    py 'y = np.load("m/want.npy"); assert abs(np.abs(y).max() - float(sys.argv[1])) < 1e-3 * float(sys.argv[1])' \
        "${BASH_REMATCH[1]}"
    # the rule of earlier versions (atol 1e-5 whatever the scale) failed it, and
    # fails NumPy's own float32 result as well: float32 rounding, not an error
    run "$FTRUN" compare o/y.npy m/want.npy --rtol 1e-4 --atol 1e-5
    status_is 1
    has "values out of tolerance (rtol=0.0001, atol=1e-05)"
    run "$FTRUN" compare m/numpy32.npy m/want.npy --rtol 1e-4 --atol 1e-5
    status_is 1
    run "$FTRUN" compare m/numpy32.npy m/want.npy
    status_is 0
}

@test "--expect defaults still catch wrong results: a 1e-3 relative error, one value off by 1e-3 of the scale, a small value off by 0.01" {
    mlp3 m
    "$FTRUN" m/g.json -q -o o
    py 'y = np.load("m/want.npy"); s = np.abs(y).max()
np.save("rel.npy", y * np.float32(1 + 1e-3))
one = y.copy(); i = np.unravel_index(np.abs(y).argmax(), y.shape); one[i] += np.float32(1e-3 * s); np.save("one.npy", one)
small = y.copy(); j = np.unravel_index(np.abs(y).argmin(), y.shape); small[j] += np.float32(0.01); np.save("small.npy", small)'
    for bad in rel one small; do
        run --separate-stderr "$FTRUN" m/g.json --expect $bad.npy -o o2
        status_is 1
        [[ "$stderr" == *"ftrun: expect: output 'y': "*" out of tolerance (rtol=0.0001, atol="*" x max |expected| "* ]]
        run "$FTRUN" compare o/y.npy $bad.npy
        status_is 1
    done
}

@test "defaults: an explicit --atol is used as given, not scaled; outputs of scale 1 or less print atol=1e-05" {
    mlp3 m
    "$FTRUN" m/g.json -q -o o
    run "$FTRUN" compare o/y.npy m/want.npy --atol 1e-3
    status_is 0
    has "(rtol=0.0001, atol=0.001)"
    npy a.npy 'np.array([0.5, -1.0], np.float32)'
    run "$FTRUN" compare a.npy a.npy
    has "(rtol=0.0001, atol=1e-05)"
    # integers stay exact
    npy i.npy 'np.array([1000, 2], np.int32)'
    npy j.npy 'np.array([1000, 3], np.int32)'
    run "$FTRUN" compare i.npy j.npy
    status_is 1
    has "(rtol=0, atol=0)"
}

@test "defaults: a torchvision ResNet-50 (opset 13, random weights) passes ftrun test against PyTorch in float64" {
    if ! "$PYTHON" -c 'import torch, torchvision, onnx' 2>/dev/null; then
        skip "needs python3-torch, python3-torchvision and python3-onnx"
    fi
    dir=${TORCH_MODELS_DIR:-$ROOT/build/torch-models}
    nice "$PYTHON" "$TESTS_DIR/onnx/export_torch.py" "$dir" resnet50 > /dev/null 2>&1
    run "$FTRUN" test -d cpu -v "$dir/resnet50"
    status_is 0
    has "PASS        resnet50" "1000 values match (rtol=0.0001, atol="
    # with the atol of earlier versions two logits near 0 failed
    run "$FTRUN" test -d cpu --rtol 1e-4 --atol 1e-5 "$dir/resnet50"
    status_is 1
    has "values out of tolerance (rtol=0.0001, atol=1e-05)"
}

# --- 2. files that are not graphs ---------------------------------------------------

@test "not a graph: an empty file, whitespace, a Git LFS pointer, an HTML page: exit 3 naming what it looks like" {
    : > empty.onnx
    printf '  \n\n' > blank.onnx
    printf 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 102502400\n' > lfs.onnx
    printf '<!DOCTYPE html>\n<html lang="en"><head><title>model.onnx</title></head><body></body></html>\n' > page.onnx
    printf '\n<HTML><body>Moved</body></HTML>\n' > moved.onnx
    for cmd in run info convert; do
        args=()
        [ $cmd = convert ] && args=(-o out.json)
        run --separate-stderr "$FTRUN" $cmd empty.onnx "${args[@]}"
        status_is 3
        [ "$stderr" = "ftrun: error: empty.onnx: not a graph: the file is empty (0 bytes)" ]
    done
    run --separate-stderr "$FTRUN" info blank.onnx
    status_is 3
    [ "$stderr" = "ftrun: error: blank.onnx: not a graph: the file holds only whitespace (4 bytes)" ]
    run --separate-stderr "$FTRUN" lfs.onnx
    status_is 3
    [[ "$stderr" == "ftrun: error: lfs.onnx: not a graph: a Git LFS pointer (134 bytes), not the file of 102502400 bytes it stands for: fetch that with 'git lfs pull'"* ]]
    for f in page moved; do
        run --separate-stderr "$FTRUN" $f.onnx
        status_is 3
        [[ "$stderr" == "ftrun: error: $f.onnx: not a graph: an HTML page (a web page saved in place of the file?"* ]]
        [[ "$stderr" != *"JSON"* ]]
    done
    [ ! -e out.json ] && [ ! -e ftrun-out ]
}

@test "not a graph: NumPy arrays, archives, pickles, other text and unknown bytes are named too; JSON errors keep line:column" {
    npy arr.onnx.npy 'np.zeros(3, np.float32)'
    mv arr.onnx.npy arr.onnx
    py 'np.savez("z.npz", x=np.zeros(2)); import zipfile, pickle, gzip
with zipfile.ZipFile("zip.onnx", "w") as z: z.writestr("readme.txt", "x")
pickle.dump({"a": 1}, open("pkl.onnx", "wb"), protocol=2)
open("gz.onnx", "wb").write(gzip.compress(b"abc"))
open("bin.onnx", "wb").write(bytes([0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5]))'
    mv z.npz npz.onnx
    printf 'hello world\nthis is text\n' > text.onnx
    check() {
        run --separate-stderr "$FTRUN" "$1"
        status_is 3
        [[ "$stderr" == "ftrun: error: $1: not a graph: $2"* ]]
    }
    check arr.onnx "a NumPy .npy array"
    check npz.onnx "a NumPy .npz archive of arrays"
    check zip.onnx "a zip archive"
    check pkl.onnx "a Python pickle"
    check gz.onnx "gzip-compressed data"
    check text.onnx "a text file that is not a JSON graph (which starts with '{'); it begins 'hello world'"
    check bin.onnx "binary data of an unknown kind (first bytes de ad be ef 01 02 03 04)"
    # a graph file that is JSON keeps its syntax errors with line and column
    printf '{"ftrun": 1,\n "tensors": {]}' > bad.json
    run --separate-stderr "$FTRUN" bad.json
    status_is 3
    [[ "$stderr" == "ftrun: error: bad.json:2:15: JSON syntax error"* ]]
    # and so does the test command's model
    mkdir -p suite/c && : > suite/c/model.onnx
    npy suite/c/output_0.npy 'np.zeros(2, np.float32)'
    run "$FTRUN" test suite
    status_is 1
    has "FAIL        suite/c" "not a graph: the file is empty (0 bytes)"
}

# --- 3. test: leaving out known cases, sharding, missing folders ---------------------

# suite6 DIR: six cases DIR/c1 .. DIR/c6 (y = relu(x), by name); c3's expected
# value is wrong.
suite6() {
    for k in 1 2 3 4 5 6; do
        mkdir -p "$1/c$k/inputs" "$1/c$k/expected"
        cat > "$1/c$k/graph.json" <<'EOG'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [3]}}, "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "relu", "inputs": ["x"], "outputs": ["y"]}]}
EOG
        py 'd, k = sys.argv[1], int(sys.argv[2]); x = np.array([-1, 0.5, k], np.float32)
np.save(d + "/inputs/x.npy", x); np.save(d + "/expected/y.npy", np.maximum(x, 0) + (1 if k == 3 else 0))' "$1/c$k" "$k"
    done
}

@test "test --exclude: matching cases are SKIP, counted as skipped (not passed), in JUnit as skipped; the run passes" {
    suite6 s
    run "$FTRUN" test s -j 2
    status_is 1
    has "FAIL        s/c3"
    run "$FTRUN" test s --exclude 's/c3' --exclude 'c[56]' -j 2 --junit j.xml
    status_is 0
    has "SKIP        s/c3: excluded by --exclude 's/c3'" "SKIP        s/c5: excluded by --exclude 'c[56]'" \
        "PASS        s/c1" "3 passed, 0 failed, 0 unsupported, 3 skipped (6 cases in "
    lacks "PASS        s/c3"
    py 'import xml.etree.ElementTree as ET
r = ET.parse("j.xml").getroot()
assert (r.get("tests"), r.get("failures"), r.get("skipped")) == ("6", "0", "3"), r.attrib
sk = {c.get("name"): c.find("skipped").get("message") for c in r.iter("testcase") if c.find("skipped") is not None}
assert sk == {"c3": "excluded by --exclude &apos;s/c3&apos;".replace("&apos;", "\x27"), "c5": "excluded by --exclude \x27c[56]\x27",
              "c6": "excluded by --exclude \x27c[56]\x27"}, sk'
    # -q prints no skipped case
    run "$FTRUN" test s --exclude 's/c3' -q
    status_is 0
    [ "$output" = "$(printf '%s\n' "$output" | grep skipped)" ]
}

@test "test --exclude-from FILE: a pattern a line with its reason, # comments; ftrun's reference_differs.txt reads as is" {
    suite6 s
    printf '# known problems\n\ns/c3   reference made with the wrong bias\n  *c6  # flaky\n' > known.txt
    run "$FTRUN" test s --exclude-from known.txt
    status_is 0
    has "SKIP        s/c3: excluded by known.txt:3: reference made with the wrong bias" \
        "SKIP        s/c6: excluded by known.txt:4: flaky" "4 passed, 0 failed, 0 unsupported, 2 skipped"
    run --separate-stderr "$FTRUN" test s --exclude-from nosuch.txt
    status_is 2
    [[ "$stderr" == *"option --exclude-from: cannot read nosuch.txt: No such file or directory"* ]]
    # the project's own list of ONNX cases whose reference data ftrun cannot match
    data=/usr/share/libonnx-testdata/data/node
    if [ -d "$data/test_hannwindow" ]; then
        run "$FTRUN" test -d cpu "$data/test_hannwindow" "$data/test_abs"
        status_is 1
        run "$FTRUN" test -d cpu --exclude-from "$TESTS_DIR/onnx/reference_differs.txt" "$data/test_hannwindow" "$data/test_abs"
        status_is 0
        has "SKIP        test_hannwindow: excluded by $TESTS_DIR/onnx/reference_differs.txt:" "PASS        test_abs"
    fi
}

@test "test --shard K/N: the shards run disjoint shares that cover every case; their JUnit suites concatenate" {
    suite6 s
    for k in 1 2 3; do
        "$FTRUN" test s --shard $k/3 --exclude c3 --junit j$k.xml > out$k.txt || true
    done
    cat out1.txt out2.txt out3.txt | grep -E '^(PASS|SKIP|FAIL)' | awk '{print $2}' | sed 's/:$//' | sort > all.txt
    printf 's/c%d\n' 1 2 3 4 5 6 > want.txt
    diff all.txt want.txt
    grep -q "^2 passed, 0 failed, 0 unsupported, 0 skipped (2 cases in .*, shard 1/3)" out1.txt
    grep -q "shard 3/3)" out3.txt
    # case i goes to shard i mod N + 1: c1, c4 in 1/3; c3 (excluded) in 3/3
    grep -q "PASS        s/c4" out1.txt
    grep -q "SKIP        s/c3" out3.txt
    py 'import xml.etree.ElementTree as ET
names = []
for k in (1, 2, 3):
    for c in ET.parse("j%d.xml" % k).getroot().iter("testcase"):
        names.append(c.get("classname") + "/" + c.get("name"))
assert sorted(names) == ["s/c%d" % i for i in range(1, 7)], names'
    for bad in 0/3 4/3 1/0 x 2 1/2/3; do
        run --separate-stderr "$FTRUN" test s --shard $bad
        status_is 2
        [[ "$stderr" == *"option --shard: '$bad' is not K/N with 1 <= K <= N"* ]]
    done
}

@test "test: a missing DIR among others is a failed entry; the other folders still run and are reported" {
    suite6 s
    run --separate-stderr "$FTRUN" test s nosuch --exclude c3
    status_is 1
    [[ "$output" == *"PASS        s/c1"* ]]
    [[ "$output" == *"FAIL        nosuch: not a test folder: No such file or directory"* ]]
    [[ "$output" == *"5 passed, 1 failed, 0 unsupported, 1 skipped (7 cases in "* ]]
}

# --- 4. info and convert with unbound named dims ------------------------------------

# bgraph: x [batch,3] -> y = relu(x @ w) [batch,4]; z = reshape(concat(x, x), [-1]) [6*batch]
bgraph() {
    graph b.json <<'EOG'
{"ftrun": 1, "name": "b",
 "tensors": {"x": {"dtype": "f32", "shape": ["batch", 3]},
             "w": {"dtype": "f32", "shape": [3, 4], "data": [1, -1, 0.5, 2, 0, 1, -2, 1, 3, 1, 1, -1]}},
 "inputs": ["x"], "outputs": ["y", "z"],
 "nodes": [{"name": "mm", "op": "matmul", "inputs": ["x", "w"], "outputs": ["h"]},
           {"name": "act", "op": "relu", "inputs": ["h"], "outputs": ["y"]},
           {"name": "cat", "op": "concat", "inputs": ["x", "x"], "outputs": ["c"], "attrs": {"axis": 0}},
           {"name": "flat", "op": "reshape", "inputs": ["c"], "outputs": ["z"], "attrs": {"shape": [-1]}}]}
EOG
}

@test "info with an unbound named dim: shapes, FLOPs and bytes written with its name; run still needs it bound" {
    g=$(bgraph)
    run --separate-stderr "$FTRUN" info "$g"
    status_is 0
    [[ "$output" == *"unbound dims: batch ("* ]]
    [[ "$output" =~ "  x "\ +"f32   [batch,3]" ]]
    [[ "$output" =~ "  z "\ +"f32   [6*batch]" ]]
    [[ "$output" =~ "c f32[2*batch,3]" ]]
    # matmul 2*3*4 per row (the relu fused into it): 24*batch flops
    [[ "$output" =~ "y f32[batch,4]"\ +"24*batch" ]]
    [[ "$output" == *"planned peak:"*"bytes"* ]]
    run --separate-stderr "$FTRUN" info "$g" --json
    status_is 0
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-info/1" and d["unbound_dims"] == ["batch"], d
assert d["inputs"][0]["shape"] == ["batch", 3] and d["outputs"][1]["shape"] == ["6*batch"], d
assert [n["flops"] for n in d["nodes"]][0] == "24*batch", d["nodes"]' "$output"
    # bound, the same graph shows numbers
    run "$FTRUN" info "$g" --dim batch=2
    [[ "$output" =~ "  z "\ +"f32   [12]" ]]
    [[ "$output" != *"unbound"* ]]
    run --separate-stderr "$FTRUN" "$g"
    status_is 3
    [[ "$stderr" == *"input 'x' dim 0 ('batch') is not known: pass --dim batch=N"* ]]
}

@test "convert with an unbound named dim keeps it in the JSON and .ftg graph; each runs at any size" {
    g=$(bgraph)
    run --separate-stderr "$FTRUN" convert "$g" -o c/b.json
    status_is 0
    [[ "$stderr" == *"named dims kept: batch"* ]]
    py 'd = json.load(open("c/b.json")); t = d["tensors"]
assert t["x"]["shape"] == ["batch", 3] and t["y"]["shape"] == ["batch", 4] and t["z"]["shape"] == ["6*batch"], t'
    "$FTRUN" convert "$g" -o c/b.ftg -q
    for n in 2 5; do
        npy x$n.npy "np.linspace(-1, 1, $n * 3, dtype=np.float32).reshape($n, 3)"
        for m in c/b.json c/b.ftg; do
            run "$FTRUN" "$m" -i x=x$n.npy -o o$n -q
            status_is 0
            py 'x = np.load(sys.argv[1]); w = np.array([1, -1, 0.5, 2, 0, 1, -2, 1, 3, 1, 1, -1], np.float32).reshape(3, 4)
assert np.allclose(np.load(sys.argv[2] + "/y.npy"), np.maximum(x @ w, 0), rtol=1e-6)
assert np.array_equal(np.load(sys.argv[2] + "/z.npy"), np.concatenate([x, x]).ravel())' x$n.npy o$n
        done
    done
}

@test "convert refuses a model that bakes an unbound dim into an attribute, naming the node; info still shows it" {
    if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
        skip "needs python3-onnx"
    fi
    # y = reshape(x, concat(shape(x)[0:1], [2, 2])): the target shape is folded at load
    py 'import onnx
from onnx import helper as h, numpy_helper, TensorProto as P
nodes = [h.make_node("Shape", ["x"], ["s"]),
         h.make_node("Slice", ["s", "zero", "one"], ["b"]),
         h.make_node("Concat", ["b", "two2"], ["t"], axis=0),
         h.make_node("Reshape", ["x", "t"], ["y"], name="resh")]
inits = [numpy_helper.from_array(np.array([0], np.int64), "zero"),
         numpy_helper.from_array(np.array([1], np.int64), "one"),
         numpy_helper.from_array(np.array([2, 2], np.int64), "two2")]
g = h.make_graph(nodes, "r", [h.make_tensor_value_info("x", P.FLOAT, ["batch", 4])],
                 [h.make_tensor_value_info("y", P.FLOAT, ["batch", 2, 2])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), "r.onnx")'
    run --separate-stderr "$FTRUN" info r.onnx
    status_is 0
    [[ "$output" =~ "y f32[batch,2,2]" ]]
    run --separate-stderr "$FTRUN" convert r.onnx -o r.json
    status_is 3
    [[ "$stderr" == *"convert: node 'resh' (reshape), attribute 'shape' depends on the unbound dims (batch)"*"--dim batch=N"* ]]
    [ ! -e r.json ]
    run "$FTRUN" convert r.onnx -o r.json --dim batch=3 -q
    status_is 0
}

# --- 5. warm-up, heavy tails, runs per second ---------------------------------------

@test "-n without -w: 2 warm-up runs first (timing.json says so); -w 0 times the cold run, and a heavy tail is warned about" {
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -n 12 --threads 1 -o o --format none
    status_is 0
    [ "$(jget o/timing.json 'd["warmup"], d["iterations"]')" = "2 12" ]
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" --duration 0.1 --threads 1 -o o2 --format none
    [ "$(jget o2/timing.json 'd["warmup"]')" = 2 ]
    # the cold run (library start-up, JIT kernels) is many times the others:
    # the mean is far from the median, which the spread rule alone misses
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -w 0 -n 12 --threads 1 -o o3 --format none
    status_is 0
    [ "$(jget o3/timing.json 'd["warmup"]')" = 0 ]
    py 'r = json.load(open("o3/timing.json"))["run_ms"]; assert r["mean"] > 1.1 * r["median"], r'
    [[ "$stderr" =~ "ftrun: warning: heavy tail: the mean run ("[0-9.]+" ms) is "[0-9.]+" times the median ("[0-9.]+" ms; slowest "[0-9.]+" ms)" ]]
    # runs per second at the median
    line=$(printf '%s\n' "$stderr" | grep '^ftrun: mlp:')
    [[ "$line" =~ "12 runs ("([0-9.]+)"/s): min "[0-9.]+", median "([0-9.]+)", mean" ]]
    py 'rate, med = map(float, sys.argv[1:]); assert abs(rate - 1e3 / med) <= 0.01 * rate + 0.1, (rate, med)' \
        "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
}

# --- 6. machine-readable output --------------------------------------------------

@test "--version: the version first, then the compiler, the backends, the libraries' versions and the CPU's features" {
    run --separate-stderr "$FTRUN" --version
    status_is 0
    [ "${lines[0]}" = "ftrun 0.1.0" ]
    [[ "${lines[1]}" =~ ^compiler:\ (gcc|clang)\ [0-9] ]]
    [[ "${lines[2]}" =~ ^backends:\ cpu\;\ cuda ]]
    [[ "${lines[3]}" =~ ^libraries:\ oneDNN\ [0-9]+\.[0-9]+\.[0-9]+,\ OpenBLAS\ [0-9.]+.*,\ FFTW\ 3\.[0-9.]+.*,\ protobuf-c\ [0-9.]+,\ cJSON\ [0-9.]+,\ zlib\ [0-9.]+$ ]]
    [[ "${lines[4]}" =~ ^cpu:\ (AVX-512|AVX2|no\ AVX2).*oneDNN\ uses\ [a-z0-9_]+,\ OpenBLAS\ [A-Za-z0-9]+\ kernels$ ]]
    # the versions are those the libraries report
    v=$("$PYTHON" -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)')
    [[ "${lines[3]}" == *"zlib $v"* ]]
    # whether the CUDA backend was built: the file beside the binary
    FTRUN_CUDA_BACKEND=$T/none.so run "$FTRUN" -V
    [ "${lines[2]}" = "backends: cpu; cuda not built (no $T/none.so)" ]
}

@test "--json: info, ops, ops --onnx and devices print one JSON document with a schema key; test --json its report" {
    run --separate-stderr "$FTRUN" info "$GRAPHS/mlp.json" --json
    status_is 0
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-info/1" and d["ftrun_version"] == "0.1.0", d
assert d["graph"]["name"] == "mlp" and d["inputs"][0] == {"name": "x", "dtype": "f32", "shape": [32, 256], "value_from": "init"}, d
assert d["outputs"][0]["shape"] == [32, 10] and d["optimizer"]["level"] == 2 and d["optimizer"]["passes"]["matmul_epi"] == 3, d
assert sum(n["flops"] for n in d["nodes"]) == d["totals"]["flops"] and d["memory"]["weights_bytes"] > 0, d
assert all(set(n) == {"index", "name", "op", "inputs", "outputs", "flops", "bytes", "view"} for n in d["nodes"]), d' "$output"
    run --separate-stderr "$FTRUN" ops --json
    status_is 0
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-ops/1" and "cpu" in d["backends"], d.keys()
m = {o["op"]: o for o in d["ops"]}
assert m["matmul"]["available"] and "f32" in m["matmul"]["backends"]["cpu"] and "f32" in m["matmul"]["format"], m["matmul"]' "$output"
    run --separate-stderr "$FTRUN" ops --onnx --json
    status_is 0
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-onnx-ops/1", d.keys()
m = {o["op_type"]: o["status"] for o in d["operators"]}
assert m["Conv"] == "mapped" and m["Shape"] == "folded" and d["counts"]["operators"] == len(m), d["counts"]' "$output"
    run --separate-stderr "$FTRUN" devices --json
    status_is 0
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-devices/1", d
assert d["cpu"]["threads"] >= 1 and isinstance(d["cuda"]["devices"], list) and "path" in d["cuda"]["backend"], d
assert (d["cuda"]["none"] is None) == (len(d["cuda"]["devices"]) > 0), d' "$output"
    suite6 s
    run --separate-stderr "$FTRUN" test s --json --exclude c6
    status_is 1
    py 'd = json.loads(sys.argv[1]); assert d["schema"] == "ftrun-test/1", d
assert d["counts"] == {"cases": 6, "passed": 4, "failed": 1, "unsupported": 0, "skipped": 1}, d["counts"]
st = {c["name"]: c["status"] for c in d["cases"]}
assert st["s/c3"] == "fail" and st["s/c6"] == "skipped" and st["s/c1"] == "pass", st
assert "out of tolerance" in [c for c in d["cases"] if c["name"] == "s/c3"][0]["message"], d' "$output"
}

# --- 7. fused node names, long names, views ----------------------------------------

@test "fused nodes are named after the node they went into, with the ops fused into it: info, --profile, --trace" {
    run "$FTRUN" info "$GRAPHS/mlp.json"
    status_is 0
    # fc1 (matmul) + fc1_bias (add) + act1 (relu); fc2 + fc2_bias
    [[ "$output" =~ "fc1+add+relu  "\ *"matmul" ]]
    [[ "$output" =~ "fc2+add  "\ *"matmul" ]]
    [[ "$output" != *"act1"* ]]
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -n 3 --profile --trace tr.json -o o
    status_is 0
    [[ "$stderr" =~ "fc1+add+relu  "\ *"matmul" ]]
    py 'd = json.load(open("o/timing.json")); assert [n["name"] for n in d["nodes"]] == ["fc1+add+relu", "fc2+add", "classify"], d["nodes"]
t = json.load(open("tr.json")); assert {e["name"] for e in t["traceEvents"] if e.get("tid") == 2} == {"fc1+add+relu", "fc2+add", "classify"}'
    # -O0 keeps the file's names
    run "$FTRUN" info "$GRAPHS/mlp.json" -O0
    [[ "$output" =~ "act1  "\ *"relu" ]]
}

@test "long node names: info's and --profile's columns stay aligned, names cut in the middle with ..." {
    py 'long = "/model/encoder/layers.11/self_attention/output_projection/dense/MatMul_with_a_very_long_onnx_name_" 
g = {"ftrun": 1, "name": "long", "tensors": {"x": {"dtype": "f32", "shape": [4, 8], "init": {"fill": 1}}},
     "inputs": ["x"], "outputs": ["y"],
     "nodes": [{"name": long + "1", "op": "neg", "inputs": ["x"], "outputs": ["a"]},
               {"name": "short", "op": "exp", "inputs": ["a"], "outputs": ["b"]},
               {"name": long + "2_end", "op": "abs", "inputs": ["b"], "outputs": ["y"]}]}
json.dump(g, open("long.json", "w"))'
    run "$FTRUN" info long.json -O0
    status_is 0
    rows=$(printf '%s\n' "$output" | sed -n '/^nodes (execution order):/,/^  total:/p' | sed '1d;$d')
    # every row puts the op column at the same place, and the cut names keep their ends
    py 'rows = sys.argv[1].split("\n"); assert len(rows) == 4, rows
col = {r.index(op) for r, op in zip(rows, ["op", "neg", "exp", "abs"])}
assert len(col) == 1, rows
assert "..." in rows[1] and rows[1].split()[1].startswith("/model/encoder") and rows[3].split()[1].endswith("2_end"), rows
assert max(len(r) for r in rows) < 170, rows' "$rows"
    run --separate-stderr "$FTRUN" long.json -O0 -n 2 --profile -o o
    status_is 0
    rows=$(printf '%s\n' "$stderr" | sed -n '/^ftrun: profile over/,/^  nodes sum/p' | sed '1d;$d')
    # the header and every row end at the same column (GB/s right-aligned)
    py 'rows = sys.argv[1].split("\n"); assert len(rows) == 4, rows
assert rows[0].endswith("GB/s") and len({len(r) for r in rows}) == 1, rows
assert all("..." in r for r in rows if "model" in r), rows' "$rows"
}

@test "a reshape that the plan makes a view copies nothing: no bytes, no bandwidth in info, --profile and timing.json" {
    graph v.json <<'EOG'
{"ftrun": 1, "name": "v", "tensors": {"x": {"dtype": "f32", "shape": [64, 64], "init": {"fill": 2}}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"name": "a", "op": "neg", "inputs": ["x"], "outputs": ["n"]},
           {"name": "flat", "op": "reshape", "inputs": ["n"], "outputs": ["r"], "attrs": {"shape": [4096]}},
           {"name": "b", "op": "exp", "inputs": ["r"], "outputs": ["y"]}]}
EOG
    run "$FTRUN" info v.json
    status_is 0
    [[ "$output" =~ "flat  reshape (view)  r f32[4096]"\ +"0"\ +"0" ]]
    run --separate-stderr "$FTRUN" v.json -n 3 --profile -o o
    status_is 0
    [[ "$stderr" =~ "flat  reshape (view)"\ +[0-9.]+\ +[0-9.]+%\ +0\ +0\ +[0-9.]+\ +- ]]
    py 'n = {x["name"]: x for x in json.load(open("o/timing.json"))["nodes"]}
assert n["flat"]["view"] is True and n["flat"]["bytes"] == 0 and n["flat"]["gbytes_per_s"] is None, n["flat"]
assert n["a"]["view"] is False and n["a"]["gbytes_per_s"] is not None, n["a"]'
    # a reshape of the graph's input copies (the input keeps its bytes)
    graph w.json <<'EOG'
{"ftrun": 1, "name": "w", "tensors": {"x": {"dtype": "f32", "shape": [8, 8], "init": {"fill": 2}}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"name": "flat", "op": "reshape", "inputs": ["x"], "outputs": ["r"], "attrs": {"shape": [64]}},
           {"name": "b", "op": "exp", "inputs": ["r"], "outputs": ["y"]}]}
EOG
    run "$FTRUN" info w.json
    [[ "$output" =~ "flat  reshape  r f32[64]"\ +"0"\ +"512" ]]
}

# --- 8. show and --print as NumPy's str() ------------------------------------------

@test "show prints every array as NumPy's str() does: no trailing zeros it would not print, its mantissas and exponents" {
    py 'rng = np.random.RandomState(5)
arrays = [np.array([0.1, -0.2, -0.3, 0.4]),                    # 0.30000000000000004: "0.3", not "0.30000000"
          np.array([1.88335386, 0.3972174, -1.15628147]),     # "0.3972174 " padded with a space
          np.array([-5e-05, 4e-05, 1e-05], np.float32),       # "5.e-05": the point stays
          np.array([3e-05, -2e-05, 0.0]) * (1 + 1e-16),       # 3.0000000000000004e-05: "3.e-05"
          np.array([1e-5, 1e100]),                            # "1.e-005 1.e+100"
          np.array([833.88013, 1.3137927, 60965.078], np.float32),  # mantissas of one width from the exact value
          np.array([1501.0, np.inf, -67.25, -0.015625], np.float16),  # "1.563e-02": the shortest form
          np.array([42944.0, 1.5], np.float16), np.array([60192.0], np.float16),
          np.array(2.0), np.array(0.1, np.float32), np.array(1e-5), np.array(1.492650917123343e-07),
          np.array(-1173123300000000.0, np.float32), np.array([np.nan, 1e-5]), np.arange(2000, dtype=np.float32) / 7]
for k in range(120):
    n = rng.randint(1, 12)
    dt = [np.float32, np.float64, np.float16][k % 3]
    kinds = [rng.randn(n), np.round(rng.randn(n) * 10, rng.randint(0, 4)), rng.randn(n) * 10.0 ** rng.randint(-8, 9),
             rng.randint(-5, 5, n) * 10.0 ** rng.randint(-6, 10), rng.randn(n, 3) * 100]
    with np.errstate(over="ignore"):
        arrays.append(kinds[k % 5].astype(dt))
for i, a in enumerate(arrays):
    np.save("a%03d.npy" % i, a)
json.dump([str(a) for a in arrays], open("want.json", "w"))'
    run --separate-stderr "$FTRUN" show a*.npy
    status_is 0
    py 'import re
want = json.load(open("want.json"))
got = re.split(r"^a\d+\.npy: .*\n", sys.argv[1] + "\n", flags=re.M)[1:]
assert len(got) == len(want), (len(got), len(want))
bad = [(i, w, g.rstrip("\n")) for i, (w, g) in enumerate(zip(want, got)) if g.rstrip("\n") != w]
assert not bad, bad[:5]' "$output"
    # --print prints the same
    graph p.json <<'EOG'
{"ftrun": 1, "tensors": {"x": {"dtype": "f64", "shape": [4], "data": [0.1, 0.2, 0.3, 0.4]}},
 "inputs": ["x"], "outputs": ["y"], "nodes": [{"op": "mul", "inputs": ["x", "x"], "outputs": ["y"]}]}
EOG
    run --separate-stderr "$FTRUN" p.json --print -o o
    want=$("$PYTHON" -c 'import numpy as np; x = np.array([0.1, 0.2, 0.3, 0.4]); print(x * x)')
    [ "${lines[1]}" = "$want" ]
}

# --- 9. interruptions: one line ----------------------------------------------------

@test "SIGINT: one line and exit 130, also under timeout (which signals twice) and with a second ^C" {
    # one signal during timed runs
    "$FTRUN" "$GRAPHS/transformer_block.json" --duration 20 --threads 1 -o o 2> err1 &
    pid=$!
    sleep 1.5
    kill -INT $pid
    st=0
    wait $pid || st=$?
    [ "$st" -eq 130 ]
    [ "$(cat err1)" = "ftrun: interrupted by SIGINT; no results written" ]
    # timeout sends the signal to ftrun and then to its process group: still one line
    for k in 1 2 3; do
        st=0
        timeout --preserve-status -s INT 1.5 "$FTRUN" "$GRAPHS/transformer_block.json" --duration 20 --threads 1 -o o 2> err2 || st=$?
        [ "$st" -eq 130 ]
        [ "$(cat err2)" = "ftrun: interrupted by SIGINT; no results written" ]
        st=0
        timeout --preserve-status 1.5 "$FTRUN" "$GRAPHS/transformer_block.json" --duration 20 --threads 1 -o o 2> err3 || st=$?
        [ "$st" -eq 143 ]
        [ "$(cat err3)" = "ftrun: interrupted by SIGTERM; no results written" ]
    done
    # a second ^C later, while a long node runs, ends ftrun at once: one line
    graph mm.json <<'EOG'
{"ftrun": 1, "tensors": {"a": {"dtype": "f64", "shape": [3000, 3000], "init": {"fill": 1}}},
 "inputs": ["a"], "outputs": ["y"], "nodes": [{"name": "mm", "op": "matmul", "inputs": ["a", "a"], "outputs": ["y"]}]}
EOG
    "$FTRUN" mm.json -w 0 -n 5 --threads 1 -o o4 2> err4 &
    pid=$!
    sleep 1.2
    kill -INT $pid
    sleep 0.8
    kill -INT $pid 2> /dev/null || true
    st=0
    wait $pid || st=$?
    [ "$st" -eq 130 ]
    [ "$(wc -l < err4)" -eq 1 ]
    grep -Eq '^ftrun: interrupted by SIGINT( \(twice: stopped at once\))?; no results written$' err4
    [ ! -e o4/y.npy ]
    [ -z "$(ls -A o4 2> /dev/null)" ]
}

# --- 10. an initializer that promises more bytes than it holds ----------------------

@test "an ONNX initializer whose dims promise more than its data holds: exit 3 naming it, its dims and bytes, nothing allocated" {
    if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
        skip "needs python3-onnx"
    fi
    py 'from onnx import helper as h, TensorProto as P
def model(name, t):
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "g",
                     [h.make_tensor_value_info("x", P.FLOAT, [1, 100000])], [h.make_tensor_value_info("y", P.FLOAT, [1, 100000])], [t])
    open(name, "wb").write(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]).SerializeToString())
def W():
    t = P(); t.name = "W"; t.data_type = P.FLOAT; t.dims.extend([100000, 100000]); return t
t = W(); t.raw_data = b"\0" * 16; model("raw.onnx", t)
t = W(); t.float_data.extend([1, 2, 3, 4]); model("typed.onnx", t)
t = W(); t.data_location = P.EXTERNAL
for k, v in (("location", "w.bin"), ("length", "16")):
    e = t.external_data.add(); e.key = k; e.value = v
model("ext.onnx", t)
open("w.bin", "wb").write(b"\0" * 16)'
    for cmd in run info; do
        run --separate-stderr "$FTRUN" $cmd raw.onnx --random-inputs
        status_is 3
        [ "$stderr" = "ftrun: error: raw.onnx: initializer 'W': its dims [100000,100000] (f32) need 40000000000 bytes but its raw_data holds 16: the model is malformed or truncated" ]
    done
    run --separate-stderr "$FTRUN" typed.onnx --random-inputs
    status_is 3
    [[ "$stderr" == *"initializer 'W': its dims [100000,100000] need 10000000000 values but its float_data holds 4"* ]]
    run --separate-stderr "$FTRUN" ext.onnx --random-inputs
    status_is 3
    [[ "$stderr" == *"initializer 'W': external data length 16 but the tensor needs 40000000000 bytes"* ]]
    # found before any allocation: with 1 GiB of address space it is still exit 3, not out of memory
    st=0
    # (a 1 GiB address space shows nothing large is allocated; ASan's shadow
    # memory needs more than that, so the sanitized build runs without it)
    if [ -n "${FTRUN_SANITIZED:-}" ]; then
        "$FTRUN" info raw.onnx 2> err || st=$?
    else
        (ulimit -v 1048576; exec "$FTRUN" info raw.onnx) 2> err || st=$?
    fi
    [ "$st" -eq 3 ]
    grep -q "raw_data holds 16" err
}

# --- 11. the documentation says what ftrun does -------------------------------------

@test "ftrun(1) SYNOPSIS: one line per form, show and test apart; info's and test's options there and in --help" {
    syn=$(MANWIDTH=200 man -l "$MAN1" 2>/dev/null | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p')
    grep -Eq '^ +ftrun show FILE\.\.\.$' <<< "$syn"
    grep -Eq '^ +ftrun test DIR\.\.\. +\[OPTIONS\]$' <<< "$syn"
    line=$(grep -E '^ +ftrun +info' <<< "$syn")
    for o in -i --dim --shape --random-inputs -O --json --allow-external-files; do
        [[ "$line" == *"[$o"* ]] || { echo "info's synopsis lacks $o: $line" >&2; return 1; }
    done
    run "$FTRUN" --help
    help=$output
    info=$(sed -n '/ftrun info /,/ftrun ops /p' <<< "$help")
    for o in -i --dim --shape -O --json; do [[ "$info" == *"[$o"* ]]; done
    tst=$(sed -n '/ftrun test /,/^$/p' <<< "$help")
    # every option of test's own --help is in the main --help's test line
    run "$FTRUN" test --help
    for o in $(grep -oE '^  (-[a-zA-Z], )?--[a-z-]+' <<< "$output" | grep -oE -- '--[a-z-]+$'); do
        [ "$o" = --help ] && continue
        case $o in --device) o=-d ;; --jobs) o=-j ;; --quiet) o=-q ;; --verbose) o=-v ;; esac
        [[ "$tst" == *"[$o"* ]] || { echo "--help's test line lacks $o" >&2; return 1; }
    done
    [[ "$tst" == *"[-O LEVEL]"* ]]
}

@test "ftrun(1) DESCRIPTION: oneDNN runs the convolutions; its examples' node counts and names are those of today's optimizer" {
    desc=$(awk '/^\.SH DESCRIPTION/{on=1; next} /^\.SH/{on=0} on' "$MAN1" | tr '\n' ' ')
    [[ "$desc" == *"oneDNN for f32 convolutions"* ]]
    [[ "$desc" != *"OpenBLAS for matrix products and convolutions"* ]]
    # the summary line's example: as many nodes as a run of mlp.json reports
    want=$(grep -oE '^ftrun: mlp: [0-9]+ nodes' "$MAN1" | head -1)
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -n 2 -o o
    [[ "$stderr" == *"$want on cpu"* ]]
    # the --profile example names the nodes the run has
    for n in $(sed -n '/^ftrun: profile over/,/nodes sum to/p' "$MAN1" | awk 'NR > 2 && $1 != "nodes" && $1 != "..." {print $1}'); do
        "$FTRUN" info "$GRAPHS/mlp.json" | grep -q "  $n  " || { echo "the profile example names $n" >&2; return 1; }
    done
}

@test "README: the Debian packages it lists are the Makefile's, protobuf-c and libonnx-dev among them" {
    pkgs=$(sed -n '/^DEB_PKGS :=/,/^[a-z]/p' "$ROOT/Makefile" | sed 's/DEB_PKGS :=//; s/\\//' | tr ' \t' '\n\n' | grep -E '^[a-z0-9.+-]+$' | grep -v '^deps$')
    readme=$(tr '\n' ' ' < "$ROOT/README.md")
    for p in $pkgs; do
        [[ "$readme" == *"$p"* ]] || { echo "README lacks $p" >&2; return 1; }
    done
    [[ "$readme" == *"libprotobuf-c-dev"* && "$readme" == *"libonnx-dev"* ]]
}
