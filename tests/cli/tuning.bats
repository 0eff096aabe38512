#!/usr/bin/env bats
# --tuning-cache FILE (ftrun(1), FILES): the CPU convs' timed choices of form
# (src/cpu/conv_dnnl.c) kept from one run to the next. The graphs are
# tests/cli/conv_chain.py's, whose outputs are checked against PyTorch
# (float64); the log lines are FTRUN_CONV_LOG's.

load helpers

unset FTRUN_CONV_IMPL # the timed pick, unless a test sets it

# gen KIND: $T/KIND.onnx, $T/x.npy, $T/want/ (PyTorch's values)
gen() {
    "$PYTHON" "$TESTS_DIR/cli/conv_chain.py" "$1" "$T"
}

# tuned KIND [ARGS]: two runs on one thread (the second times each conv's
# forms), checked against want/; FTRUN_CONV_LOG's conv lines on stdout,
# ftrun's other stderr lines in $T/err.
tuned() {
    local k=$1
    shift
    FTRUN_CONV_LOG=1 "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o --threads 1 -w 1 -n 1 --expect want --rtol 1e-4 \
        --atol 1e-4 "$@" 2> "$T/log"
    local rc=$?
    grep "^ftrun: conv '" "$T/log"
    grep -v "^ftrun: conv '" "$T/log" > "$T/err"
    return $rc
}

# entries FILE: the number of conv entries
entries() {
    py 'print(len(json.load(open(sys.argv[1]))["conv"]))' "$1"
}

@test "tuning cache: the first run records one entry per timed conv, the second times none and agrees with PyTorch" {
    gen mbv2
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ] || { echo "$output"; cat "$T/err"; return 1; }
    local timed
    timed=$(grep -c " ms" <<< "$output")
    [ "$timed" -ge 3 ]
    ! grep -q "cache" <<< "$output"
    [ -f tc.json ]
    [ "$(entries tc.json)" -eq "$timed" ]
    py 'd = json.load(open("tc.json")); assert d["format"] == "ftrun-tuning-cache/1", d
m = d["machine"]; assert set(m) == {"cpu", "isa", "onednn", "openblas", "ftrun"}, m
for e in d["conv"]:
    assert e["pick"] in ("plain", "blocked", "blocked-add", "native"), e
    assert "threads 1" in e["key"] and e["key"].startswith("conv f32 x["), e
    assert e["pick"] in e["ms"], e
assert len({e["key"] for e in d["conv"]}) == len(d["conv"])'
    cp tc.json first.json
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ] || { echo "$output"; cat "$T/err"; return 1; }
    [ "$(grep -c "from the tuning cache" <<< "$output")" -eq "$timed" ]
    ! grep -q " ms" <<< "$output"
    # the picks are those recorded, node by node
    py 'import re
d = {e["key"]: e["pick"] for e in json.load(open("first.json"))["conv"]}
picks = [re.match(r"ftrun: conv .*?: (\S+) \(", l).group(1) for l in open(sys.argv[1]) if l.startswith("ftrun: conv")]
assert sorted(picks) == sorted(d.values()), (picks, d)' "$T/log"
    cmp tc.json first.json # nothing new: not rewritten
}

@test "tuning cache: another thread count or graph adds entries and keeps the old ones" {
    gen mbv2
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    local n1
    n1=$(entries tc.json)
    FTRUN_CONV_LOG=1 run "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o --threads 2 -w 1 -n 1 --expect want --rtol 1e-4 \
        --atol 1e-4 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    [ "$(entries tc.json)" -eq $((2 * n1)) ]
    # at 1 thread again: every pick from the file
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    ! grep -q " ms" <<< "$output"
    gen c24 # (another x.npy and want/)
    run tuned c24 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    [ "$(entries tc.json)" -gt $((2 * n1)) ]
}

@test "tuning cache: FTRUN_CONV_IMPL wins over the file, and records nothing" {
    gen mbv2
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    cp tc.json first.json
    FTRUN_CONV_IMPL=native run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    grep -q "native (forced by FTRUN_CONV_IMPL)" <<< "$output"
    ! grep -q "cache" <<< "$output"
    cmp tc.json first.json
}

@test "tuning cache: a file from another machine is ignored with one warning and rewritten" {
    gen mbv2
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    local n1 cpu
    n1=$(entries tc.json)
    cpu=$(py 'print(json.load(open("tc.json"))["machine"]["cpu"])')
    py 'd = json.load(open("tc.json")); d["machine"]["cpu"] = "Some Other CPU @ 1.00GHz"
d["conv"].append({"key": "conv f32 from elsewhere", "pick": "plain"}); json.dump(d, open("tc.json", "w"))'
    run tuned mbv2 --tuning-cache tc.json
    [ "$status" -eq 0 ]
    [ "$(grep -c "warning: --tuning-cache tc.json was recorded on another machine" "$T/err")" -eq 1 ]
    grep -q "Some Other CPU" "$T/err"
    ! grep -q "from the tuning cache" <<< "$output" # timed again
    [ "$(grep -c " ms" <<< "$output")" -eq "$n1" ]
    [ "$(py 'print(json.load(open("tc.json"))["machine"]["cpu"])')" = "$cpu" ]
    [ "$(entries tc.json)" -eq "$n1" ] # the other machine's entries dropped
    # -q: no warning
    py 'd = json.load(open("tc.json")); d["machine"]["onednn"] = "0.0.0"; json.dump(d, open("tc.json", "w"))'
    run "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o --threads 1 -w 0 -n 1 -q --tuning-cache tc.json
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "tuning cache: a malformed file is exit 3 naming the file and the field, before anything runs" {
    gen mbv2
    local good
    run tuned mbv2 --tuning-cache good.json
    [ "$status" -eq 0 ]
    good=$(cat good.json)
    local -a bad=(
        'not json {'
        ''
        '[1, 2]'
        '{"machine": {}, "conv": []}'
        '{"format": "ftrun-tuning-cache/9", "machine": {}, "conv": []}'
    )
    local i=0 f
    for f in "${bad[@]}"; do
        printf '%s' "$f" > "bad$i.json"
        i=$((i + 1))
    done
    # field errors in an otherwise good file
    py 'import copy
d = json.loads(sys.argv[1])
cases = []
e = copy.deepcopy(d); e["conv"][0]["pick"] = "fastest"; cases.append(e)
e = copy.deepcopy(d); del e["conv"][0]["key"]; cases.append(e)
e = copy.deepcopy(d); e["conv"][0]["ms"] = {"turbo": 1}; cases.append(e)
e = copy.deepcopy(d); e["machine"]["cpu"] = 7; cases.append(e)
e = copy.deepcopy(d); del e["machine"]["ftrun"]; cases.append(e)
e = copy.deepcopy(d); e["conv"] = {}; cases.append(e)
e = copy.deepcopy(d); e["extra"] = 1; cases.append(e)
e = copy.deepcopy(d); e["conv"][0]["when"] = "now"; cases.append(e)
for k, c in enumerate(cases):
    json.dump(c, open("bad%d.json" % (int(sys.argv[2]) + k), "w"))
print(len(cases))' "$good" $i
    local want=(
        "not valid JSON" "not valid JSON" "not a JSON object" "missing field: format" "format is 'ftrun-tuning-cache/9'"
        "conv\[0\]: pick is not plain, blocked, blocked-add or native: 'fastest'" "conv\[0\]: missing field: key"
        "conv\[0\]: unknown form .*: ms.turbo" "field is not a string: machine.cpu" "missing field: machine.ftrun"
        "field is not an array: conv" "unknown field: extra" "conv\[0\]: unknown field: when"
    )
    for i in "${!want[@]}"; do
        cp "bad$i.json" before.json
        FTRUN_CONV_LOG=1 run "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o "out$i" --threads 1 -w 1 -n 1 --tuning-cache "bad$i.json"
        [ "$status" -eq 3 ] || { echo "bad$i.json: exit $status: $output"; return 1; }
        grep -q -- "--tuning-cache bad$i.json: ${want[$i]}" <<< "$output" || { echo "bad$i.json: $output"; return 1; }
        [ "$(wc -l <<< "$output")" -eq 1 ] # nothing ran: no conv log line
        [ ! -e "out$i" ]
        cmp "bad$i.json" before.json
    done
    # a folder, or a file in a missing folder
    mkdir dir.json
    run "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o1 --threads 1 -w 0 -n 1 --tuning-cache dir.json
    [ "$status" -eq 3 ]
    [ ! -e o1 ]
    run "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o2 --threads 1 -w 0 -n 1 --tuning-cache nodir/tc.json
    [ "$status" -eq 4 ]
    grep -q -- "--tuning-cache" <<< "$output"
    [ ! -e o2 ]
    run "$FTRUN" "$T/mbv2.onnx" --tuning-cache=
    [ "$status" -eq 2 ]
}

@test "tuning cache: a failed run neither creates nor replaces the file" {
    # a conv, then a gather whose index (an input) is out of range: the run fails
    py 'import onnx
from onnx import helper as h, TensorProto as P, numpy_helper as nh
w = nh.from_array(np.random.default_rng(0).standard_normal((16, 16, 3, 3)).astype(np.float32), "w")
g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                  h.make_node("Gather", ["c", "idx"], ["y"], axis=1)], "g",
                 [h.make_tensor_value_info("x", P.FLOAT, [1, 16, 8, 8]), h.make_tensor_value_info("idx", P.INT64, [1])],
                 [h.make_tensor_value_info("y", P.FLOAT, None)], [w])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), "fail.onnx")
np.save("x.npy", np.ones((1, 16, 8, 8), np.float32)); np.save("bad.npy", np.array([99], np.int64))
np.save("ok.npy", np.array([3], np.int64))'
    run "$FTRUN" fail.onnx -i x=x.npy -i idx=bad.npy -o o --threads 1 -w 1 -n 1 --tuning-cache tc.json
    [ "$status" -ne 0 ] || { echo "$output"; return 1; }
    [ ! -e tc.json ]
    [ ! -e o ]
    # the same graph that succeeds creates it; one from another machine is kept as it is when the run fails
    run "$FTRUN" fail.onnx -i x=x.npy -i idx=ok.npy -o o --threads 1 -w 1 -n 1 --tuning-cache tc.json
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ -f tc.json ]
    py 'd = json.load(open("tc.json")); d["machine"]["openblas"] = "elsewhere"; json.dump(d, open("tc.json", "w"))'
    cp tc.json before.json
    run "$FTRUN" fail.onnx -i x=x.npy -i idx=bad.npy -o o2 --threads 1 -w 1 -n 1 --tuning-cache tc.json
    [ "$status" -ne 0 ]
    cmp tc.json before.json
    ls -a | grep -v "^\.\.\?$" | grep -qv "^\(fail.onnx\|x.npy\|bad.npy\|ok.npy\|tc.json\|before.json\|o\)$" && { ls -a; return 1; }
    true
}
