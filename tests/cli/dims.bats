#!/usr/bin/env bats
# Symbolic dims (named dims in shapes, --dim, --shape, shapes of -i files),
# --random-inputs and `ftrun convert`. Expected values come from NumPy and
# from tests/cli/philox.py (the documented generator written out in Python).

bats_require_minimum_version 1.5.0
load helpers

# y = x @ w with x [batch, 3] and w given as data (so NumPy can recompute y).
mm_graph() {
    graph mm.json <<'EOF'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": ["batch", 3]},
             "w": {"dtype": "f32", "shape": [3, 2], "data": [1, 2, 3, 4, 5, 6]},
             "y": {"dtype": "f32", "shape": ["batch", 2]}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}]}
EOF
}

# y = x @ w: the NumPy value for the x in file $1, compared with ftrun's y in $2.
check_mm() {
    py '
x = np.load(sys.argv[1]); y = np.load(sys.argv[2])
w = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
assert y.shape == (x.shape[0], 2), y.shape
assert np.allclose(y, x @ w, rtol=1e-6), (y, x @ w)' "$1" "$2"
}

# --- named dims bound from -i, --dim, --shape -------------------------------------------

@test "named dim bound from the -i file: two batch sizes, NumPy's values" {
    g=$(mm_graph)
    npy "$T/x2.npy" 'np.arange(6, dtype=np.float32).reshape(2, 3)'
    npy "$T/x5.npy" 'np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)'
    run "$FTRUN" "$g" -i x="$T/x2.npy" -o "$T/o2"
    status_is 0
    check_mm "$T/x2.npy" "$T/o2/y.npy"
    run "$FTRUN" "$g" -i x="$T/x5.npy" -o "$T/o5"
    status_is 0
    check_mm "$T/x5.npy" "$T/o5/y.npy"
}

@test "named dim bound from an .npz member given with -i" {
    g=$(mm_graph)
    py 'np.savez(sys.argv[1], x=np.ones((4, 3), np.float32))' "$T/in.npz"
    run "$FTRUN" "$g" -i x="$T/in.npz" -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).shape == (4, 2)' "$T/o/y.npy"
}

@test "--dim binds a named dim; an input with \"init\" is generated at the bound shape" {
    g=$(graph init.json <<'EOF'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": ["batch", 3], "init": {"arange": {"start": 0, "step": 0.5}}},
             "w": {"dtype": "f32", "shape": [3, 2], "data": [1, 2, 3, 4, 5, 6]}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}]}
EOF
)
    run "$FTRUN" "$g" --dim batch=4 -o "$T/o"
    status_is 0
    npy "$T/x.npy" '(np.arange(12) * 0.5).astype(np.float32).reshape(4, 3)'
    check_mm "$T/x.npy" "$T/o/y.npy"
}

@test "--shape gives an input's shape; info shows the bound shapes" {
    g=$(mm_graph)
    run "$FTRUN" info "$g" --shape x=7,3
    status_is 0
    has "[7,3]" "[7,2]"
    run "$FTRUN" "$g" --shape x=6,3 --random-inputs -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).shape == (6, 2)' "$T/o/y.npy"
}

@test "--shape INPUT= is a scalar" {
    g=$(graph scalar.json <<'EOF'
{"ftrun": 1, "tensors": {"s": {"dtype": "f32", "shape": []}, "v": {"dtype": "f32", "shape": ["n"]}},
 "inputs": ["s", "v"], "outputs": ["y"],
 "nodes": [{"op": "mul", "inputs": ["v", "s"], "outputs": ["y"]}]}
EOF
)
    npy "$T/s.npy" 'np.float32(3)'
    npy "$T/v.npy" 'np.array([1, 2, -4], np.float32)'
    run "$FTRUN" "$g" --shape s= -i s="$T/s.npy" -i v="$T/v.npy" -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).tolist() == [3.0, 6.0, -12.0]' "$T/o/y.npy"
    run "$FTRUN" "$g" --shape v= -i s="$T/s.npy"
    status_is 3
    is_error
    has "--shape v=" "input 'v' is declared [n]"
}

@test "a name means one value: a later input's file binds an earlier input" {
    g=$(graph two.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": ["batch", 2], "init": {"fill": 1.5}},
             "b": {"dtype": "f32", "shape": ["batch", 2]}},
 "inputs": ["a", "b"], "outputs": ["y"],
 "nodes": [{"op": "add", "inputs": ["a", "b"], "outputs": ["y"]}]}
EOF
)
    npy "$T/b.npy" 'np.arange(6, dtype=np.float32).reshape(3, 2)'
    run "$FTRUN" "$g" -i b="$T/b.npy" -o "$T/o"
    status_is 0
    py 'assert np.array_equal(np.load(sys.argv[1]), np.arange(6, dtype=np.float32).reshape(3, 2) + 1.5)' "$T/o/y.npy"
}

@test "two -i files that disagree on a named dim: exit 3 naming both" {
    g=$(graph two.json <<'EOF'
{"ftrun": 1,
 "tensors": {"a": {"dtype": "f32", "shape": ["batch", 2]}, "b": {"dtype": "f32", "shape": ["batch", 2]}},
 "inputs": ["a", "b"], "outputs": ["y"],
 "nodes": [{"op": "add", "inputs": ["a", "b"], "outputs": ["y"]}]}
EOF
)
    npy "$T/a.npy" 'np.ones((2, 2), np.float32)'
    npy "$T/b.npy" 'np.ones((3, 2), np.float32)'
    run "$FTRUN" "$g" -i a="$T/a.npy" -i b="$T/b.npy" -o "$T/o"
    status_is 3
    is_error
    has "-i a=$T/a.npy has shape [2,2] (dim 0 'batch') but -i b=$T/b.npy has shape [3,2] (dim 0 'batch')"
    [ ! -e "$T/o" ]
}

@test "a constant's .npy file binds a named dim; a disagreeing -i is an error naming the file" {
    npy "$T/w.npy" 'np.arange(8, dtype=np.float32).reshape(4, 2)'
    g=$(graph wfile.json <<'EOF'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": ["batch", "k"]}, "w": {"dtype": "f32", "shape": ["k", 2], "file": "w.npy"}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}]}
EOF
)
    run "$FTRUN" info "$g" --dim batch=3
    status_is 0
    has "[3,4]" "[3,2]"
    npy "$T/x.npy" 'np.ones((2, 5), np.float32)'
    run "$FTRUN" "$g" -i x="$T/x.npy"
    status_is 3
    is_error
    has "w.npy" "(dim 0 'k')" "-i x=$T/x.npy has shape [2,5] (dim 1 'k')"
}

@test "a constant with \"init\" whose named dim nothing binds: exit 3 saying how to bind it" {
    g=$(graph cinit.json <<'EOF'
{"ftrun": 1,
 "tensors": {"c": {"dtype": "f32", "shape": ["n"], "init": {"fill": 1}}},
 "inputs": [], "outputs": ["y"],
 "nodes": [{"op": "relu", "inputs": ["c"], "outputs": ["y"]}]}
EOF
)
    run "$FTRUN" "$g"
    status_is 3
    is_error
    has "cinit.json" "tensor 'c'" "dim 0 ('n') is not known" "--dim n=N"
    run "$FTRUN" "$g" --dim n=3 -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).tolist() == [1.0, 1.0, 1.0]' "$T/o/y.npy"
}

@test "a named dim on an output: unbound, it takes the inferred size; bound, it is checked" {
    g=$(graph out.json <<'EOF'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": [2, 3], "init": {"fill": 1}}, "y": {"dtype": "f32", "shape": ["rows", 3]}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"op": "relu", "inputs": ["x"], "outputs": ["y"]}]}
EOF
)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 0
    py 'assert np.load(sys.argv[1]).shape == (2, 3)' "$T/o/y.npy"
    run "$FTRUN" "$g" --dim rows=5 -o "$T/o2"
    status_is 3
    is_error
    has "output 'y' is declared f32 [5,3] but the op produces f32 [2,3]"
}

# --- the messages ------------------------------------------------------------------------

@test "an unbound named dim: exit 3, names file, input, dim and every way to bind it" {
    g=$(mm_graph)
    run "$FTRUN" "$g" -o "$T/o"
    status_is 3
    is_error
    has "mm.json: input 'x' dim 0 ('batch') is not known: pass --dim batch=N, --shape x=D0,D1,... or a file with -i x=FILE"
    [ ! -e "$T/o" ]
}

@test "--dim against an -i file: exit 3 naming both" {
    g=$(mm_graph)
    npy "$T/a.npy" 'np.ones((2, 3), np.float32)'
    run "$FTRUN" "$g" --dim batch=4 -i x="$T/a.npy"
    status_is 3
    is_error
    has "--dim batch=4 but -i x=$T/a.npy has shape [2,3] (dim 0 'batch')"
}

@test "--dim against --shape, and --shape against -i: exit 3 naming both" {
    g=$(mm_graph)
    run "$FTRUN" "$g" --dim batch=5 --shape x=2,3
    status_is 3
    has "--dim batch=5 but --shape x=2,3 (dim 0 'batch')"
    npy "$T/a.npy" 'np.ones((4, 3), np.float32)'
    run "$FTRUN" "$g" --shape x=2,3 -i x="$T/a.npy"
    status_is 3
    is_error
    has "--shape x=2,3" "-i x=$T/a.npy has shape [4,3]"
}

@test "-i file whose fixed dims differ from the declaration: exit 3 naming both shapes" {
    g=$(mm_graph)
    npy "$T/a.npy" 'np.ones((2, 4), np.float32)'
    run "$FTRUN" "$g" -i x="$T/a.npy"
    status_is 3
    is_error
    has "-i x=$T/a.npy has shape [2,4] but input 'x' is declared [batch,3]"
}

@test "--shape of something that is not an input: exit 3 listing the inputs" {
    g=$(mm_graph)
    run "$FTRUN" "$g" --shape y=2,3
    status_is 3
    is_error
    has "--shape y=2,3: 'y' is not an input of $g (its inputs: 'x')"
}

@test "--dim of a name the graph does not have: exit 3 listing its names" {
    g=$(mm_graph)
    run "$FTRUN" "$g" --dim batch=2 --dim seq=4 --random-inputs
    status_is 3
    is_error
    has "--dim seq=4" "no dim named 'seq'" "'batch'"
}

@test "malformed --dim, --shape, -i and --random options: usage errors, exit 2" {
    g=$(mm_graph)
    for bad in "--dim batch" "--dim =3" "--dim batch=x" "--dim batch=-1" "--dim batch=1.5" "--dim batch=" \
               "--shape x" "--shape x=2,,3" "--shape x=2,-3" "--shape x=a" "--shape x=1,2,3,4,5,6,7,8,9" \
               "--random-inputs=-1" "--random-inputs=abc" "--random-range 1,2" "--random-inputs --random-range 2,1" \
               "--random-inputs --random-range 1" "--random-inputs --random-range a,b"; do
        run "$FTRUN" "$g" $bad
        [ "$status" -eq 2 ] || { echo "$bad: exit $status: $output" >&2; return 1; }
        has "ftrun: error:" "Try 'ftrun --help'."
    done
}

@test "the same --dim, --shape or -i twice: usage error naming it" {
    g=$(mm_graph)
    npy "$T/a.npy" 'np.ones((2, 3), np.float32)'
    run "$FTRUN" "$g" --dim batch=2 --dim batch=3
    status_is 2
    has "'batch' is given twice"
    run "$FTRUN" "$g" --shape x=2,3 --shape x=2,3
    status_is 2
    has "'x' is given twice"
    run "$FTRUN" "$g" -i x="$T/a.npy" -i x="$T/a.npy"
    status_is 2
    has "'x' is given twice"
}

@test "--dim and --shape do not apply to compare, ops, devices" {
    run "$FTRUN" ops --dim batch=2
    status_is 2
    has "option --dim does not apply to 'ops'"
}

# --- --random-inputs ----------------------------------------------------------------------

# x f32 [n,3] and k i64 [n] pass through identity: the outputs are the inputs.
rand_graph() {
    graph rand.json <<'EOF'
{"ftrun": 1,
 "tensors": {"x": {"dtype": "f32", "shape": ["n", 3]}, "k": {"dtype": "i64", "shape": ["n"]},
             "c": {"dtype": "f32", "shape": [2], "init": {"fill": 7}}},
 "inputs": ["x", "k", "c"], "outputs": ["xo", "ko", "co"],
 "nodes": [{"op": "identity", "inputs": ["x"], "outputs": ["xo"]},
           {"op": "identity", "inputs": ["k"], "outputs": ["ko"]},
           {"op": "identity", "inputs": ["c"], "outputs": ["co"]}]}
EOF
}

# The documented rule: input number k draws uniform values with seed SEED+k;
# floats low + (high-low)*u1 rounded to the dtype, integers floor of that.
expect_random() { # SEED LO HI ILO IHI DIR
    PYTHONPATH=$TESTS_DIR/cli py '
import philox
seed, lo, hi, ilo, ihi, d = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
x = philox.values("uniform", seed, 12, lo, hi).astype(np.float32).reshape(4, 3)
k = np.floor(philox.values("uniform", seed + 1, 4, ilo, ihi)).astype(np.int64)
gx, gk = np.load(d + "/xo.npy"), np.load(d + "/ko.npy")
assert gx.dtype == np.float32 and np.array_equal(gx, x), (gx, x)
assert gk.dtype == np.int64 and np.array_equal(gk, k), (gk, k)
assert np.load(d + "/co.npy").tolist() == [7.0, 7.0]' "$@"
}

@test "--random-inputs=SEED: the documented Philox values (NumPy), floats in [-1,1), integers in [0,10)" {
    g=$(rand_graph)
    run "$FTRUN" "$g" --dim n=4 --random-inputs=12345 -o "$T/o"
    status_is 0
    expect_random 12345 -1 1 0 10 "$T/o"
    py 'x = np.load(sys.argv[1]); assert x.min() >= -1 and x.max() < 1 and len(np.unique(x)) == 12' "$T/o/xo.npy"
    py 'k = np.load(sys.argv[1]); assert k.min() >= 0 and k.max() < 10' "$T/o/ko.npy"
}

@test "--random-inputs without a seed is seed 0; the same seed gives the same values, another seed others" {
    g=$(rand_graph)
    run "$FTRUN" "$g" --dim n=4 --random-inputs -o "$T/a"
    status_is 0
    expect_random 0 -1 1 0 10 "$T/a"
    run "$FTRUN" "$g" --dim n=4 --random-inputs=0 -o "$T/b"
    status_is 0
    cmp "$T/a/xo.npy" "$T/b/xo.npy"
    cmp "$T/a/ko.npy" "$T/b/ko.npy"
    run "$FTRUN" "$g" --dim n=4 --random-inputs=1 -o "$T/c"
    status_is 0
    ! cmp -s "$T/a/xo.npy" "$T/c/xo.npy"
}

@test "--random-range LO,HI sets the range of floats and integers" {
    g=$(rand_graph)
    run "$FTRUN" "$g" --dim n=4 --random-inputs=9 --random-range -3,5 -o "$T/o"
    status_is 0
    expect_random 9 -3 5 -3 5 "$T/o"
}

@test "-i wins over --random-inputs; timing.json and info say where each input came from" {
    g=$(rand_graph)
    npy "$T/x.npy" 'np.full((4, 3), 2.5, np.float32)'
    run "$FTRUN" "$g" -i x="$T/x.npy" --random-inputs=3 -o "$T/o"
    status_is 0
    py 'assert (np.load(sys.argv[1]) == 2.5).all()' "$T/o/xo.npy"
    PYTHONPATH=$TESTS_DIR/cli py '
import philox
k = np.floor(philox.values("uniform", 4, 4, 0, 10)).astype(np.int64)
assert np.array_equal(np.load(sys.argv[1]), k)' "$T/o/ko.npy"
    [ "$(jget "$T/o/timing.json" 'd["inputs"]["x"]')" = "--input" ]
    [ "$(jget "$T/o/timing.json" 'd["inputs"]["k"]')" = "--random-inputs" ]
    [ "$(jget "$T/o/timing.json" 'd["inputs"]["c"]')" = "init" ]
    [ "$(jget "$T/o/timing.json" 'd["random_seed"]')" = "3" ]
    run "$FTRUN" info "$g" --dim n=2 --random-inputs
    status_is 0
    [[ "$output" == *"k "*"value from --random-inputs"* ]]
    [[ "$output" != *"c "*"value from --random-inputs"* ]]
}

@test "--random-inputs: bool inputs are floor(2*u1), whatever --random-range says" {
    g=$(graph b.json <<'EOF'
{"ftrun": 1, "tensors": {"p": {"dtype": "f32", "shape": [3]}, "q": {"dtype": "bool", "shape": [64]}},
 "inputs": ["p", "q"], "outputs": ["qo"],
 "nodes": [{"op": "identity", "inputs": ["q"], "outputs": ["qo"]}]}
EOF
)
    run "$FTRUN" "$g" --random-inputs=40 --random-range 5,9 -o "$T/o"
    status_is 0
    PYTHONPATH=$TESTS_DIR/cli py '
import philox
want = np.floor(philox.values("uniform", 41, 64, 0, 2)) != 0
got = np.load(sys.argv[1])
assert got.dtype == np.bool_ and np.array_equal(got, want) and 0 < got.sum() < 64, (got, want)' "$T/o/qo.npy"
}

@test "without --random-inputs an input with no value says how to supply one" {
    g=$(rand_graph)
    run "$FTRUN" "$g" --dim n=4
    status_is 3
    has "input 'x'" "has no value" "--random-inputs"
}

# --- convert --------------------------------------------------------------------------------

conv_graph() {
    graph conv.json <<'EOF'
{"ftrun": 1, "name": "conv",
 "tensors": {"x": {"dtype": "f32", "shape": ["batch", 3]},
             "w": {"dtype": "f32", "shape": [3, 3], "init": {"normal": {"mean": 0, "std": 1}, "seed": 11}},
             "b": {"dtype": "f32", "shape": [3], "data": [0.1, "inf", -0.3]},
             "h": {"dtype": "f16", "shape": ["batch", 3], "init": {"uniform": {"low": -2, "high": 2}, "seed": 5}},
             "i": {"dtype": "i64", "shape": [4], "data": [9007199254740993, -1, 0, 42]}},
 "inputs": ["x"], "outputs": ["y", "z", "io"],
 "nodes": [{"name": "mm", "op": "matmul", "inputs": ["x", "w"], "outputs": ["m"]},
           {"op": "add", "inputs": ["m", "b"], "outputs": ["a"]},
           {"op": "softmax", "inputs": ["a"], "outputs": ["y"], "attrs": {"axis": -1}},
           {"op": "cast", "inputs": ["h"], "outputs": ["z"], "attrs": {"to": "f32"}},
           {"op": "identity", "inputs": ["i"], "outputs": ["io"]}]}
EOF
}

@test "convert JSON -> .ftg -> JSON: the same values bit for bit and the same results" {
    # -O0 throughout: the graph as written (-O2 would fold the add into the matmul)
    g=$(conv_graph)
    npy "$T/x.npy" 'np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)'
    run "$FTRUN" convert -O0 "$g" --dim batch=2 -o "$T/c/m.ftg" --compress
    status_is 0
    has "wrote $T/c/m.ftg"
    run "$FTRUN" convert -O0 "$T/c/m.ftg" -o "$T/j/back.json"
    status_is 0
    [ -f "$T/j/back.json" ] && [ -d "$T/j/back.values" ]
    PYTHONPATH=$TESTS_DIR/cli py '
import philox
d = sys.argv[1] + "/back.values/"
w = philox.values("normal", 11, 9, 0, 1).astype(np.float32).reshape(3, 3)
h = philox.values("uniform", 5, 6, -2, 2).astype(np.float32).astype(np.float16).reshape(2, 3)
assert np.load(d + "w.npy").tobytes() == w.tobytes()
assert np.load(d + "h.npy").dtype == np.float16 and np.load(d + "h.npy").tobytes() == h.tobytes()
assert np.load(d + "b.npy").tobytes() == np.array([0.1, np.inf, -0.3], np.float32).tobytes()
assert np.load(d + "i.npy").tolist() == [9007199254740992, -1, 0, 42]  # JSON numbers are doubles
doc = json.load(open(sys.argv[1] + "/back.json"))
assert doc["tensors"]["x"]["shape"] == [2, 3], doc["tensors"]["x"]
assert [n["op"] for n in doc["nodes"]] == ["matmul", "add", "softmax", "cast", "identity"]' "$T/j"
    run "$FTRUN" "$g" -i x="$T/x.npy" -o "$T/o1"
    status_is 0
    run "$FTRUN" "$T/c/m.ftg" -i x="$T/x.npy" -o "$T/o2"
    status_is 0
    run "$FTRUN" "$T/j/back.json" -i x="$T/x.npy" -o "$T/o3"
    status_is 0
    for f in y z io; do cmp "$T/o1/$f.npy" "$T/o2/$f.npy"; cmp "$T/o1/$f.npy" "$T/o3/$f.npy"; done
    run "$FTRUN" compare "$T/o1" "$T/o3" --rtol 0 --atol 0
    status_is 0
}

@test "convert JSON -> JSON keeps node names and attributes; the written graph reconverts to the same document" {
    # -O0 throughout: the graph as written (-O2 would fold the add into the matmul)
    g=$(conv_graph)
    run "$FTRUN" convert -O0 "$g" --shape x=3,3 -o "$T/a.json"
    status_is 0
    py 'd = json.load(open(sys.argv[1])); n = d["nodes"]
assert n[0]["name"] == "mm" and n[2]["attrs"]["axis"] == -1 and n[3]["attrs"]["to"] == "f32", n
assert d["tensors"]["h"]["shape"] == [3, 3] and d["tensors"]["h"]["file"] == "a.values/h.npy"' "$T/a.json"
    run "$FTRUN" convert -O0 "$T/a.json" -o "$T/b/b.json"
    status_is 0
    py 'a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for t in a["tensors"].values():
    t.pop("file", None)
for t in b["tensors"].values():
    t.pop("file", None)
a.pop("name"); b.pop("name")
assert a == b, (a, b)' "$T/a.json" "$T/b/b.json"
    for f in w b h i; do cmp "$T/a.values/$f.npy" "$T/b/b.values/$f.npy"; done
}

@test "convert: the output kind comes from the -o name; others are usage errors naming the choices" {
    g=$(conv_graph)
    run "$FTRUN" convert "$g" --dim batch=1 -o "$T/m.onnx"
    status_is 2
    has ".json" ".ftg" "m.onnx"
    run "$FTRUN" convert "$g" --dim batch=1
    status_is 2
    has "-o OUT.json"
    run "$FTRUN" convert "$g" --dim batch=1 --compress -o "$T/m.json"
    status_is 2
    has "--compress"
    [ ! -e "$T/m.json" ]
}

@test "convert of a graph whose named dim is unbound and sizes a value: exit 3 with the binding hint, no file" {
    g=$(conv_graph)
    run "$FTRUN" convert "$g" -o "$T/m.ftg"
    status_is 3
    # h's "init" is generated at [batch,3]: its values need a size
    has "convert: the values of tensor 'h' depend on the unbound dims (batch): bind them (--dim batch=N, or --shape, -i)"
    [ ! -e "$T/m.ftg" ]
}

@test "pack and unpack of a graph with named dims write the bound, concrete shapes" {
    g=$(mm_graph)
    run "$FTRUN" pack "$g" --dim batch=3 -o "$T/m.ftg"
    status_is 0
    run "$FTRUN" unpack "$T/m.ftg" -o "$T/u"
    status_is 0
    py 'd = json.load(open(sys.argv[1])); assert d["tensors"]["x"]["shape"] == [3, 3], d' "$T/u/graph.json"
    run "$FTRUN" info "$T/m.ftg"
    status_is 0
    has "[3,2]"
}

# --- failures of every call --------------------------------------------------------------

@test "fault sweep: every allocation and I/O call of a run with a named dim, --random-inputs and convert fails cleanly" {
    # tests/fault/sweep.sh: exit 3 or 4 with a message, no crash, no partial file; leaks at every point under ASan
    if [ -n "${FTRUN_SANITIZED:-}" ]; then leak=asan; else leak=none; fi
    shim=$BATS_TEST_TMPDIR/libfaultinject.so
    ${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o "$shim" "$TESTS_DIR/fault/faultinject.c" -ldl
    run env FTRUN="$FTRUN" FAULT_SHIM="$shim" FAULT_GRAPH=small FAULT_LEAK=$leak FAULT_WORK="$T/sweep" \
        "$TESTS_DIR/fault/sweep.sh" run-dims run-random convert
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -E '^(FAIL|#)' | head -40
        return 1
    fi
    has "# no problems"
    [ "$(printf '%s\n' "$output" | grep -Ec '^# [a-z-]+ +(alloc|io) +[1-9][0-9]* calls')" -eq 6 ]
}

# --- ONNX models: symbolic dims through the same resolver --------------------------------------

# dyn.onnx (made with onnx.helper): inputs x [batch, 3] and z [batch, seq] (dim_param);
# outputs sx = Shape(x), sz = Shape(z), t = Shape(x) * [10, 1], folded at load
# time from the bound shapes. u.onnx: input u whose dim 0 has neither value nor name.
onnx_models() {
    "$PYTHON" - "$T" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
d = sys.argv[1]
k = numpy_helper.from_array(np.array([10, 1], np.int64), "K")
nodes = [helper.make_node("Shape", ["x"], ["sx"], name="shape_x"), helper.make_node("Shape", ["z"], ["sz"], name="shape_z"),
         helper.make_node("Mul", ["sx", "K"], ["t"], name="scale")]
g = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
                                     helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", "seq"])],
                      [helper.make_tensor_value_info(n, TensorProto.INT64, [2]) for n in ("sx", "sz", "t")], initializer=[k])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, d + "/dyn.onnx")
u = helper.make_tensor_value_info("u", TensorProto.FLOAT, [None, 2])
g = helper.make_graph([helper.make_node("Shape", ["u"], ["su"], name="shape_u")], "unnamed", [u],
                      [helper.make_tensor_value_info("su", TensorProto.INT64, [2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), d + "/u.onnx")
PY
}

# the outputs in DIR against the shapes of the files X and Z (NumPy)
check_dyn() { # DIR X.npy Z.npy
    py '
d, x, z = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
assert np.load(d + "/sx.npy").tolist() == list(x.shape)
assert np.load(d + "/sz.npy").tolist() == list(z.shape)
assert np.load(d + "/t.npy").tolist() == [10 * x.shape[0], x.shape[1]]' "$@"
}

@test "ONNX: a dynamic batch dim bound from -i files of two batch sizes" {
    onnx_models
    npy "$T/x2.npy" 'np.ones((2, 3), np.float32)'
    npy "$T/z2.npy" 'np.ones((2, 5), np.float32)'
    npy "$T/x7.npy" 'np.ones((7, 3), np.float32)'
    npy "$T/z7.npy" 'np.ones((7, 1), np.float32)'
    run "$FTRUN" "$T/dyn.onnx" -i x="$T/x2.npy" -i z="$T/z2.npy" -o "$T/o2"
    status_is 0
    check_dyn "$T/o2" "$T/x2.npy" "$T/z2.npy"
    run "$FTRUN" "$T/dyn.onnx" -i z="$T/z7.npy" -i x="$T/x7.npy" -o "$T/o7"
    status_is 0
    check_dyn "$T/o7" "$T/x7.npy" "$T/z7.npy"
}

@test "ONNX: a TensorProto .pb file given with -i binds the dims of JSON and ONNX inputs alike" {
    onnx_models
    "$PYTHON" -c '
import sys, numpy as np
from onnx import numpy_helper
for name, shape in (("x", (6, 3)), ("z", (6, 4))):
    t = numpy_helper.from_array(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), name)
    open(sys.argv[1] + "/" + name + ".pb", "wb").write(t.SerializeToString())
    np.save(sys.argv[1] + "/" + name + ".npy", numpy_helper.to_array(t))' "$T"
    run "$FTRUN" "$T/dyn.onnx" -i x="$T/x.pb" -i z="$T/z.pb" -o "$T/o"
    status_is 0
    check_dyn "$T/o" "$T/x.npy" "$T/z.npy"
    g=$(mm_graph)
    run "$FTRUN" "$g" -i x="$T/x.pb" -o "$T/m"
    status_is 0
    check_mm "$T/x.npy" "$T/m/y.npy"
}

@test "ONNX: --dim and --shape bind the dims; a later input's file binds an earlier input's dim" {
    onnx_models
    run "$FTRUN" "$T/dyn.onnx" --dim batch=4 --dim seq=6 --random-inputs -o "$T/o"
    status_is 0
    npy "$T/x.npy" 'np.ones((4, 3), np.float32)'
    npy "$T/z.npy" 'np.ones((4, 6), np.float32)'
    check_dyn "$T/o" "$T/x.npy" "$T/z.npy"
    npy "$T/z3.npy" 'np.ones((3, 2), np.float32)'
    run "$FTRUN" info "$T/dyn.onnx" -i z="$T/z3.npy"
    status_is 0
    [[ "$output" =~ "  x "\ +"f32   [3,3]" ]]
    run "$FTRUN" info "$T/u.onnx" --shape u=9,2
    status_is 0
    has "[9,2]"
}

@test "ONNX: the messages of an unbound dim, an unnamed dim, a conflict, a stray --shape and --dim" {
    onnx_models
    m=$T/dyn.onnx
    run "$FTRUN" "$m" -o "$T/o"
    status_is 3
    is_error
    has "$m: input 'x' dim 0 ('batch') is not known: pass --dim batch=N, --shape x=D0,D1,... or a file with -i x=FILE"
    [ ! -e "$T/o" ]
    run "$FTRUN" "$T/u.onnx"
    status_is 3
    has "u.onnx: input 'u' dim 0 (unnamed) is not known: pass --shape u=D0,D1,... or a file with -i u=FILE"
    npy "$T/x2.npy" 'np.ones((2, 3), np.float32)'
    run "$FTRUN" "$m" --dim batch=4 -i x="$T/x2.npy"
    status_is 3
    has "$m: --dim batch=4 but -i x=$T/x2.npy has shape [2,3] (dim 0 'batch')"
    run "$FTRUN" "$m" --dim batch=4 --dim seq=1 --shape y=2,3
    status_is 3
    has "--shape y=2,3: 'y' is not an input of $m (its inputs: 'x', 'z')"
    run "$FTRUN" "$m" --dim batch=4 --dim seq=1 --dim heads=2
    status_is 3
    has "--dim heads=2: $m has no dim named 'heads' (its named dims: 'batch', 'seq')"
}

@test "ONNX: convert to JSON and to .ftg with the dims bound; the converted graphs give the same results" {
    onnx_models
    npy "$T/x.npy" 'np.ones((5, 3), np.float32)'
    npy "$T/z.npy" 'np.ones((5, 2), np.float32)'
    run "$FTRUN" convert "$T/dyn.onnx" --dim batch=5 --dim seq=2 -o "$T/c/m.json"
    status_is 0
    run "$FTRUN" convert "$T/dyn.onnx" --shape x=5,3 --shape z=5,2 -o "$T/c/m.ftg"
    status_is 0
    py 'd = json.load(open(sys.argv[1])); assert d["tensors"]["x"]["shape"] == [5, 3] and d["tensors"]["z"]["shape"] == [5, 2], d' \
        "$T/c/m.json"
    run "$FTRUN" "$T/dyn.onnx" -i x="$T/x.npy" -i z="$T/z.npy" -o "$T/o1"
    status_is 0
    check_dyn "$T/o1" "$T/x.npy" "$T/z.npy"
    run "$FTRUN" "$T/c/m.json" -i x="$T/x.npy" -i z="$T/z.npy" -o "$T/o2"
    status_is 0
    run "$FTRUN" "$T/c/m.ftg" -i x="$T/x.npy" -i z="$T/z.npy" -o "$T/o3"
    status_is 0
    for f in sx sz t; do cmp "$T/o1/$f.npy" "$T/o2/$f.npy"; cmp "$T/o1/$f.npy" "$T/o3/$f.npy"; done
    # unbound, the model's Shape nodes fold into values that depend on the dims
    run "$FTRUN" convert "$T/dyn.onnx" -o "$T/c/n.json"
    status_is 3
    has "convert: the values of tensor 'sx/value' depend on the unbound dims (batch, seq)" "--dim batch=N --dim seq=N"
    [ ! -e "$T/c/n.json" ]
}
