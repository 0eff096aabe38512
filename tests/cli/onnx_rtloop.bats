#!/usr/bin/env bats
# ONNX Loop whose iterations are known only at run time (src/onnx/onnx_loop.c,
# runtime/exec.c): the body imported once between loop_begin and loop_end,
# run again while the condition holds and the trip count allows. A model
# converted without -i keeps the loop for run time. Models and expected
# values (NumPy, and PyTorch for the torch.jit.script exports) from
# tests/cli/onnx_rtloop_models.py.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    fake_device_build
    "$PYTHON" "$TESTS_DIR/cli/onnx_rtloop_models.py" "$BATS_FILE_TMPDIR" 2>/dev/null
}

M=${BATS_FILE_TMPDIR:-}

# conv NAME: the model converted to a binary graph with nothing given at load
conv() {
    run "$FTRUN" convert "$M/$1.onnx" -o "$T/$1.ftg" -q
    [ "$status" -eq 0 ]
}

# runcase GRAPH MODEL TAG [ARGS...]: run GRAPH on case TAG's inputs into $T/o_TAG
runcase() {
    local g=$1 m=$2 tag=$3 f name args=()
    shift 3
    for f in "$M/$m.$tag".in.*.npy; do
        f=${f##*/}
        name=${f#"$m.$tag.in."}
        args+=(-i "${name%.npy}=$M/$f")
    done
    rm -rf "$T/o_$tag"
    run --separate-stderr "$FTRUN" run "$g" "${args[@]}" -o "$T/o_$tag" -q "$@"
}

# want MODEL TAG [RTOL]: every expected output of the case matches (shape and values)
want() {
    py '
import glob, os
m, tag, t, rtol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
files = glob.glob(f"{m}.{tag}.want.*.npy")
assert files
for f in files:
    name = f.split(".want.")[1][:-4]
    w, g = np.load(f), np.load(f"{t}/o_{tag}/{name}.npy")
    assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
    assert np.allclose(g, w, rtol=rtol, atol=rtol), (name, g, w)' "$M/$1" "$2" "$T" "${3:-1e-6}"
}

@test "run-time Loop: a trip count given at run time (0, 1, 5 and 7 trips, the body's condition ending one early) gives NumPy's values, -n 3" {
    conv trips
    for tag in t0_9 t1_9 t5_9 t7_3; do
        runcase "$T/trips.ftg" trips $tag -n 3
        [ "$status" -eq 0 ]
        want trips $tag
    done
    py 'import numpy as np; assert np.load(sys.argv[1]).shape == (3, 2, 3)' "$T/o_t7_3/ys.npy"
}

@test "run-time Loop: a condition computed from the data, an outer-scope limit, two scan outputs; zero iterations give empty scans" {
    conv cond
    for tag in zero some more; do
        runcase "$T/cond.ftg" cond $tag
        [ "$status" -eq 0 ]
        want cond $tag
    done
    py 'import numpy as np; assert np.load(sys.argv[1]).shape == (0, 4) and np.load(sys.argv[2]).shape == (0,)' \
        "$T/o_zero/ys.npy" "$T/o_zero/ks.npy"
}

@test "run-time Loop: trip count and condition both at run time, carried values swapped each iteration" {
    conv both
    for tag in n4 stop off; do
        runcase "$T/both.ftg" both $tag -n 2
        [ "$status" -eq 0 ]
        want both $tag
    done
}

@test "run-time Loop: the .onnx run with -i unrolls at load and gives the same values as the run-time loop" {
    runcase "$M/both.onnx" both stop
    [ "$status" -eq 0 ]
    want both stop
    run "$FTRUN" info "$M/both.onnx" -i n="$M/both.stop.in.n.npy" -i c="$M/both.stop.in.c.npy" \
        -i a0="$M/both.stop.in.a0.npy" -i b0="$M/both.stop.in.b0.npy" -i stop="$M/both.stop.in.stop.npy"
    [ "$status" -eq 0 ]
    [[ "$output" != *"loop_begin"* ]]
}

@test "run-time Loop: a loop that does not end stops at --loop-limit with exit 4 naming the loop; the default limit too" {
    conv forever
    runcase "$T/forever.ftg" forever go --loop-limit 50
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"(loop_end): the run-time loop from 'Loop_0' goes on after 50 iterations, the most ftrun runs (--loop-limit)"* ]]
    [ ! -e "$T/o_go" ]
    runcase "$T/forever.ftg" forever go
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"goes on after 1000000 iterations"* ]]
    runcase "$T/forever.ftg" forever stop --loop-limit 1
    [ "$status" -eq 0 ]
    want forever stop
    run --separate-stderr "$FTRUN" run "$T/forever.ftg" --loop-limit 0 --dry-run
    [ "$status" -eq 2 ]
}

@test "run-time Loop: a body that changes a carried value's shape (Compress) carries the new shape; a JSON loop_begin without its vary is exit 4" {
    conv reshape
    for tag in same shrinks; do
        runcase "$T/reshape.ftg" reshape $tag -n 2
        [ "$status" -eq 0 ]
        want reshape $tag
    done
    run "$FTRUN" convert "$T/reshape.ftg" -o "$T/reshape.json" -q
    [ "$status" -eq 0 ]
    py '
d = json.load(open(sys.argv[1]))
b = [n for n in d["nodes"] if n["op"] == "loop_begin"][0]
assert b["attrs"]["vary"] == [0], b
del b["attrs"]["vary"]
json.dump(d, open(sys.argv[2], "w"))' "$T/reshape.json" "$T/fixed.json"
    runcase "$T/fixed.json" reshape shrinks
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"node 'Loop_0/loop_end_1' (loop_end): iteration 0 makes carried value 0 ('Loop_0/carried_0', [3]) into [2] ('y_out'); a carried value keeps its shape"* ]]
    [ ! -e "$T/o_shrinks" ]
    sed 's/"vary": \[0\]/"vary": [3]/' "$T/reshape.json" > "$T/bad.json"
    run --separate-stderr "$FTRUN" info "$T/bad.json"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"node 'Loop_0' (loop_begin): vary[0] = 3 names no carried value (it has 1)"* ]]
}

@test "run-time Loop: carried values of changing shapes swapped each iteration, one grown, give NumPy's values (0, 1, 5 iterations)" {
    conv swapgrow
    for tag in n0 n1 n5; do
        runcase "$T/swapgrow.ftg" swapgrow $tag -n 2
        [ "$status" -eq 0 ]
        want swapgrow $tag
    done
    fake runcase "$T/swapgrow.ftg" swapgrow n5 -d cuda --check
    [ "$status" -eq 0 ]
    want swapgrow n5
}

@test "run-time Loop: torch.jit.script loop growing its value with torch.cat gives PyTorch's values" {
    conv tgrow
    for tag in n0 n1 n5; do
        runcase "$T/tgrow.ftg" tgrow $tag -n 2
        [ "$status" -eq 0 ]
        want tgrow $tag 1e-5
    done
}

@test "run-time Loop: torch.jit.script greedy decoder (tokens appended until n or token 0, attention of run-time length) gives PyTorch's tokens" {
    conv tdec
    for tag in n0 n1 n6 n30; do
        runcase "$T/tdec.ftg" tdec $tag -n 2
        [ "$status" -eq 0 ]
        want tdec $tag
    done
    runcase "$M/tdec.onnx" tdec n6
    [ "$status" -eq 0 ]
    want tdec n6
}

@test "run-time Loop: a loop known at load is still unrolled (no loop_begin)" {
    run "$FTRUN" info "$M/known.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" != *"loop_begin"* ]]
    [[ "$output" != *"run-time loops"* ]]
    runcase "$M/known.onnx" known k
    [ "$status" -eq 0 ]
    want known k
}

@test "run-time Loop: info and --dry-run say the graph has a run-time loop" {
    conv cond
    run "$FTRUN" info "$T/cond.ftg"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time loops: 1, each body"*"'Loop_2' (5 body nodes, 1 carried value, 2 scan outputs)"* ]]
    [[ "$output" == *"loop_begin"* && "$output" == *"loop_end"* ]]
    runcase "$T/cond.ftg" cond some --dry-run
    [ "$status" -eq 0 ]
    run "$FTRUN" run "$T/cond.ftg" -i x="$M/cond.some.in.x.npy" -i limit="$M/cond.some.in.limit.npy" --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time loops: 1, their bodies run again while their condition holds: 'Loop_2'"* ]]
}

@test "run-time Loop: torch.jit.script while loop (a list appended each iteration, stacked) gives PyTorch's values" {
    conv twhile
    for tag in a b c; do
        runcase "$T/twhile.ftg" twhile $tag
        [ "$status" -eq 0 ]
        want twhile $tag 1e-5
    done
    py '
import numpy as np
n = {np.load(f"{sys.argv[1]}/o_{t}/ys.npy").shape[0] for t in "abc"}
assert len(n) == 3, n' "$T"
}

@test "run-time Loop: torch.jit.script for loop over range(n), n an input (0, 1 and 6 iterations), gives PyTorch's values" {
    conv tfor
    for tag in n0 n1 n6; do
        runcase "$T/tfor.ftg" tfor $tag
        [ "$status" -eq 0 ]
        want tfor $tag 1e-5
    done
}

@test "run-time Loop: --check-nodes recomputes the body's nodes, and passes (also when no iteration ran)" {
    conv trips
    for tag in t0_9 t5_9; do
        runcase "$T/trips.ftg" trips $tag --check --check-nodes
        [ "$status" -eq 0 ]
    done
}

@test "run-time Loop: on a device (the fake backend) the loop runs with its values through the host; --cuda-graph refuses (exit 2)" {
    conv cond
    for tag in zero more; do
        fake runcase "$T/cond.ftg" cond $tag -d cuda --check --check-nodes
        [ "$status" -eq 0 ]
        want cond $tag
    done
    fake runcase "$T/cond.ftg" cond more -d cuda --cuda-graph
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"(loop_end): --cuda-graph does not take a graph with a loop whose iterations are known only at run time (from 'Loop_2')"* ]]
    [ ! -e "$T/o_more" ]
}

@test "run-time Loop: the graph keeps loop_begin and loop_end through convert to JSON (and -O0), and runs the same" {
    run "$FTRUN" convert "$M/both.onnx" -o "$T/both.json" -q
    [ "$status" -eq 0 ]
    py '
d = json.load(open(sys.argv[1]))
ops = [n["op"] for n in d["nodes"]]
assert ops.count("loop_begin") == 1 and ops.count("loop_end") == 1, ops
b, e = ops.index("loop_begin"), ops.index("loop_end")
assert b < e and e - b > 2, ops' "$T/both.json"
    for tag in n4 off; do
        runcase "$T/both.json" both $tag -O0
        [ "$status" -eq 0 ]
        want both $tag
    done
}

@test "run-time Loop: an If on the carried value inside the body takes its branch anew at each iteration" {
    conv ifbody
    runcase "$T/ifbody.ftg" ifbody n6 -n 2
    [ "$status" -eq 0 ]
    want ifbody n6
}

@test "run-time Loop: one nested in another's body (its trip count from the outer iteration, a scan output at each level) gives NumPy's values" {
    conv nested
    for tag in n3m4 n3m0 n0m2; do
        runcase "$T/nested.ftg" nested $tag -n 2
        [ "$status" -eq 0 ]
        want nested $tag
    done
    conv nested2
    for tag in n0 n1 n4; do
        runcase "$T/nested2.ftg" nested2 $tag -n 2
        [ "$status" -eq 0 ]
        want nested2 $tag 1e-5
    done
    run "$FTRUN" info "$T/nested2.ftg"
    [[ "$output" == *"run-time loops: 2"* ]]
}

@test "run-time Loop: one in a run-time If's branch runs when the branch is taken, and is skipped whole when not" {
    conv inif
    for tag in t f t; do
        runcase "$T/inif.ftg" inif $tag -n 2
        [ "$status" -eq 0 ]
        want inif $tag
    done
    fake runcase "$T/inif.ftg" inif t -d cuda --check --check-nodes
    [ "$status" -eq 0 ]
    want inif t
    # not taken, a loop of 10^12 iterations costs nothing
    py 'np.save(sys.argv[1], np.array(10**12, np.int64))' "$T/big.npy"
    run timeout 60 "$FTRUN" run "$T/inif.ftg" -i c="$M/inif.f.in.c.npy" -i m="$T/big.npy" -i y0="$M/inif.f.in.y0.npy" -o "$T/o_big" -q
    [ "$status" -eq 0 ]
    py 'assert np.array_equal(np.load(sys.argv[1]), np.load(sys.argv[2]))' "$T/o_big/y.npy" "$M/inif.f.want.y.npy"
}

@test "run-time Loop: a JSON graph whose loop_end does not read its loop_begin's state in order, or lacks its loop_end, is refused (exit 3)" {
    run "$FTRUN" convert "$M/both.onnx" -o "$T/both.json" -q
    [ "$status" -eq 0 ]
    py '
d = json.load(open(sys.argv[1]))
e = [n for n in d["nodes"] if n["op"] == "loop_end"][0]
e["inputs"][2], e["inputs"][3] = e["inputs"][3], e["inputs"][2]
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
b = [n for n in d["nodes"] if n["op"] == "loop_begin"][0]
d["nodes"] = [n for n in d["nodes"] if n["op"] != "loop_end" and "Loop_0/scan_0" not in n["inputs"]]
d.get("tensors", {}).pop("abs", None)
for n in d["nodes"]:  # what read the loop_end reads its initial values instead
    n["inputs"] = [b["inputs"][2 + int(i.split("_")[-1])] if i.startswith("Loop_0/final_") else i for i in n["inputs"]]
d["outputs"] = [o for o in d["outputs"] if o != "abs"]
json.dump(d, open(sys.argv[3], "w"))' "$T/both.json" "$T/swapped.json" "$T/noend.json"
    run --separate-stderr "$FTRUN" info "$T/swapped.json"
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"(loop_end): input 0 and inputs 2..3 must be the iteration number and the 2 carried values of one loop_begin, in order"* ]]
    runcase "$T/noend.json" both n4 -O0  # -O1 and up drop the loop_begin whose values nothing reads
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"(loop_begin): no loop_end reads its iteration number; a loop_begin needs one"* ]]
}

@test "run-time Loop: a value made before the loop and read last in the body keeps its bytes for every iteration" {
    conv held
    runcase "$T/held.ftg" held n4 -n 2
    [ "$status" -eq 0 ]
    want held n4
    run "$FTRUN" convert "$M/held.onnx" -o "$T/held.json" -q -O0
    [ "$status" -eq 0 ]
    runcase "$T/held.json" held n4 -O0
    [ "$status" -eq 0 ]
    want held n4
}

@test "run-time Loop: a body node of run-time shape (Compress) is inferred again at every iteration" {
    conv dynbody
    runcase "$T/dynbody.ftg" dynbody n5 -n 2
    [ "$status" -eq 0 ]
    want dynbody n5
}

@test "run-time Scan: over a run-time number of rows (Compress: 0, 1, 4), a reversed scan input, a reversed scan output on axis 1, gives NumPy's values, -n 3" {
    conv scandyn
    for tag in m0 m1 m4; do
        runcase "$T/scandyn.ftg" scandyn $tag -n 3
        [ "$status" -eq 0 ]
        want scandyn $tag 1e-5
    done
    py 'import numpy as np; assert np.load(sys.argv[1]).shape == (3, 0) and np.load(sys.argv[2]).shape == (3, 4)' \
        "$T/o_m0/o2s.npy" "$T/o_m4/o2s.npy"
    run "$FTRUN" info "$M/scandyn.onnx"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run-time loops: 1"*"'Scan_"*"1 carried value, 2 scan outputs"* ]]
}

@test "run-time Scan: on a device (the fake backend) with --check-nodes, and from the .onnx directly, gives NumPy's values" {
    for tag in m0 m4; do
        fake runcase "$M/scandyn.onnx" scandyn $tag -d cuda --check --check-nodes
        [ "$status" -eq 0 ]
        want scandyn $tag 1e-5
    done
}

@test "run-time Scan: 5000 positions known at load (more than ftrun unrolls) run as a run-time loop, NumPy's running sum" {
    runcase "$M/scanlong.onnx" scanlong l
    [ "$status" -eq 0 ]
    want scanlong l 1e-5
    run "$FTRUN" info "$M/scanlong.onnx"
    [[ "$output" == *"run-time loops: 1"* ]]
}
