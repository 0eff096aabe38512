#!/bin/bash
# Fault-injection sweep: runs ftrun commands with tests/fault/faultinject.c
# preloaded, failing the Nth allocation or I/O call for every N the command
# reaches, and checks that every such run ends cleanly (tests/fault/README.md).
#
#   tests/fault/sweep.sh [CASE...]    cases: run run-npz run-ftg info pack unpack compare run-dims run-random convert
#                                     run-onnx run-convs run-convs-res run-dyn run-loop run-text
#
# Environment:
#   FTRUN            the binary under test (default build/ftrun)
#   FTRUN_SANITIZED  1 when FTRUN is built with ASan: leaks are then checked at every point
#   FAULT_SHIM       the shim (default build/fault/libfaultinject.so, built when missing)
#   PYTHON           a python3 with NumPy (default /usr/bin/python3)
#   FAULT_GRAPH      full (default: six nodes, every kind of value source) or small
#                    (three nodes: about half the calls, for tests/cli/fault.bats)
#   FAULT_CLASSES    the classes to sweep (default "alloc io")
#   FAULT_STEP       test every STEP-th call index (default 1)
#   FAULT_STEP_IO    the same for the io class (default FAULT_STEP)
#   FAULT_PERSIST    1: every call from the Nth on fails, not only the Nth
#   FAULT_LEAK       asan | valgrind | none (default: asan when FTRUN_SANITIZED=1, else valgrind)
#   FAULT_LEAK_STEP  with valgrind, check every STEP-th index (and the first) (default 10)
#   FAULT_TIMEOUT    seconds allowed per run (default 20)
#   FAULT_JOBS       runs in parallel (default: the number of CPUs)
#   FAULT_WORK       work folder (default: a temporary one, kept only when a problem is found)
#   FAULT_COUNTS_ONLY=1  only print how many calls each case makes per class
#   FAULT_SHOW_TOLERATED=1  also list the failures that were tolerated (status 0)
#
# Each point must end with status 0 (the failure was tolerated, and then the
# results must equal those of a run without faults) or with an "ftrun: error:"
# message that gives the cause and the status the contract gives that cause:
# 4 for an allocation or a write (out of memory, disk full), 3 for a read of an
# input file. Never a signal, a hang, a sanitizer report, a leak, a comparison
# status (1) or a usage status (2); a failed run leaves no result file (and no
# temporary file) behind. Problems are printed as "FAIL case class N: why", and
# the status is 1 when there is any.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FTRUN=${FTRUN:-$root/build/ftrun}
FAULT_SHIM=${FAULT_SHIM:-$root/build/fault/libfaultinject.so}
PYTHON=${PYTHON:-/usr/bin/python3}
CLASSES=${FAULT_CLASSES:-alloc io}
STEP=${FAULT_STEP:-1}
STEP_IO=${FAULT_STEP_IO:-$STEP}
PERSIST=${FAULT_PERSIST:-0}
TIMEOUT=${FAULT_TIMEOUT:-20}
JOBS=${FAULT_JOBS:-$(nproc 2>/dev/null || echo 2)}
LEAK_STEP=${FAULT_LEAK_STEP:-10}
if [ -n "${FAULT_LEAK:-}" ]; then
    LEAK=$FAULT_LEAK
elif [ -n "${FTRUN_SANITIZED:-}" ]; then
    LEAK=asan
else
    LEAK=valgrind
fi
ALL_CASES="run run-npz run-ftg run-trace info pack unpack compare run-dims run-random convert run-onnx run-convs run-convs-res run-text"
CASES=${*:-$ALL_CASES}

[ -x "$FTRUN" ] || { echo "sweep: no ftrun binary at $FTRUN" >&2; exit 2; }

if [ ! -f "$FAULT_SHIM" ] || [ "$here/faultinject.c" -nt "$FAULT_SHIM" ]; then
    mkdir -p "$(dirname "$FAULT_SHIM")"
    ${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -fPIC -shared -Wl,-soname,libfaultinject.so -o "$FAULT_SHIM" \
        "$here/faultinject.c" -ldl || { echo "sweep: cannot build the shim" >&2; exit 2; }
fi
if [ "$LEAK" = valgrind ] && ! command -v valgrind >/dev/null 2>&1; then
    echo "sweep: valgrind is not installed: leaks are not checked" >&2
    LEAK=none
fi

if [ -n "${FAULT_WORK:-}" ]; then
    W=$FAULT_WORK
    rm -rf "$W"
    mkdir -p "$W"
    keep=1
else
    W=$(mktemp -d "${TMPDIR:-/tmp}/ftrun-fault.XXXXXX")
    keep=0
fi
FX=$W/fixtures
B=$W/baseline
mkdir -p "$FX" "$B" "$W/res" "$W/p" "$W/bin"
# a copy: the tree's binary may be rebuilt while the sweep runs
cp "$FTRUN" "$W/bin/ftrun" || exit 2
FTRUN=$W/bin/ftrun

# The same calls in every run: one thread, and no re-execution of ftrun for
# its BLAS kernel choice (which would also differ under valgrind, whose CPU
# has no AVX-512). The re-execution path is swept by tests/cli/fault.bats.
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
else
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Prescott}
fi
export OMP_NUM_THREADS=1
export FTRUN_DEFAULT_DURATION=0 # one run where a case gives neither -n, -w nor --duration
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:verify_asan_link_order=0
unset FAULT_AT FAULT_COUNT FAULT_BASE FAULT_VERBOSE FAULT_LOG FAULT_LIBS

# ---- fixtures: a graph with every kind of value source, one fed input ----

"$PYTHON" - "$FX" "${FAULT_GRAPH:-full}" <<'EOF' || { echo "sweep: cannot write the fixtures" >&2; exit 2; }
import json, sys
import numpy as np
fx, size = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(1)
np.save(fx + "/x.npy", rng.standard_normal((4, 8)).astype(np.float32))
# compressible: a zlib blob when packed with --compress
np.save(fx + "/w.npy", (np.arange(128) % 5 - 2).astype(np.float32).reshape(8, 16) / 4)
with open(fx + "/raw.bin", "wb") as f:
    f.write(b"\0" * 8 + np.array([0.5, -0.5, 1, 0], np.float32).tobytes())
g = {"ftrun": 1, "name": "fault",
     "tensors": {"x": {"dtype": "f32", "shape": [4, 8]},
                 "w": {"dtype": "f32", "shape": [8, 16], "file": "w.npy"},
                 "b": {"dtype": "f32", "shape": [16], "data": [i / 8 - 1 for i in range(16)]},
                 "w2": {"dtype": "f32", "shape": [16, 4], "init": {"uniform": {"low": -1, "high": 1}, "seed": 3}},
                 "r": {"dtype": "f32", "shape": [4], "file": "raw.bin", "offset": 8}},
     "inputs": ["x"], "outputs": ["y", "p"],
     "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["x", "w"], "outputs": ["h"]},
               {"name": "bias", "op": "add", "inputs": ["h", "b"], "outputs": ["hb"]},
               {"name": "act", "op": "relu", "inputs": ["hb"], "outputs": ["a"]},
               {"name": "fc2", "op": "matmul", "inputs": ["a", "w2"], "outputs": ["z"]},
               {"name": "shift", "op": "add", "inputs": ["z", "r"], "outputs": ["y"]},
               {"name": "sm", "op": "softmax", "inputs": ["y"], "outputs": ["p"]}]}
if size == "small":
    g["tensors"] = {k: g["tensors"][k] for k in ("x", "w", "b")}
    g["tensors"]["b"]["data"] = g["tensors"]["b"]["data"][:4] * 4
    g["nodes"] = [g["nodes"][0], dict(g["nodes"][1], outputs=["y"]),
                  {"name": "sm", "op": "softmax", "inputs": ["y"], "outputs": ["p"]}]
json.dump(g, open(fx + "/g.json", "w"), indent=1)
g["tensors"]["x"]["shape"] = ["n", 8]  # a named dim, bound by -i, --dim or --shape
json.dump(g, open(fx + "/g_dims.json", "w"), indent=1)
EOF
fail_setup() {
    echo "sweep: setup failed: $*" >&2
    exit 2
}
"$FTRUN" "$FX/g.json" -i "x=$FX/x.npy" --threads 1 -q -o "$FX/golden" || fail_setup "run of the fixture graph"
rm -f "$FX/golden/timing.json"
"$FTRUN" "$FX/g.json" -i "x=$FX/x.npy" --threads 1 -q -o "$FX/gz" --format npz || fail_setup "npz run"
mv "$FX/gz/outputs.npz" "$FX/golden.npz"
"$FTRUN" pack "$FX/g.json" -o "$FX/g.ftg" --compress -q || fail_setup "pack"

# run-convs: convs whose intermediates stay in oneDNN's layouts, with a
# squeeze-excitation block (tests/cli/conv_chain.py se; PyTorch's goldens)
if [[ " $CASES " == *" run-convs "* ]]; then
    mkdir -p "$FX/convs" && "$PYTHON" "$root/tests/cli/conv_chain.py" se "$FX/convs" || fail_setup "the conv chain fixture"
fi
# run-convs-res: a graph input read by two convs (one blocked copy of it, made
# on each of the runs) and a max pool reading a blocked tensor into the
# graph's output (tests/cli/conv_chain.py res)
if [[ " $CASES " == *" run-convs-res "* ]]; then
    mkdir -p "$FX/convres" && "$PYTHON" "$root/tests/cli/conv_chain.py" res "$FX/convres" || fail_setup "the residual conv fixture"
fi

# run-dyn: shapes known only at run time (non_zero, compress, unique and the
# nodes after them), three runs, --check-nodes keeping every tensor
if [[ " $CASES " == *" run-dyn "* ]]; then
    mkdir -p "$FX/dyn" && "$PYTHON" - "$FX/dyn" <<'EOF' || fail_setup "the run-time shape fixture"
import json, os, sys
import numpy as np
d = sys.argv[1]
x = np.array([[1, -2, 3, 3], [0, 5, -1, 1], [3, 2, 2, -7]], np.float32)
np.save(d + "/x.npy", x)
g = {"ftrun": 1, "name": "dyn",
     "tensors": {"x": {"dtype": "f32", "shape": [3, 4]}, "zero": {"dtype": "f32", "shape": [], "data": [0]}},
     "inputs": ["x"], "outputs": ["idxT", "u", "cnt", "y"],
     "nodes": [{"name": "pos", "op": "greater", "inputs": ["x", "zero"], "outputs": ["m"]},
               {"name": "nz", "op": "non_zero", "inputs": ["m"], "outputs": ["idx"]},
               {"name": "t", "op": "transpose", "inputs": ["idx"], "outputs": ["idxT"], "attrs": {"perm": [1, 0]}},
               {"name": "flat", "op": "reshape", "inputs": ["x"], "outputs": ["xf"], "attrs": {"shape": [-1]}},
               {"name": "mf", "op": "reshape", "inputs": ["m"], "outputs": ["mflat"], "attrs": {"shape": [-1]}},
               {"name": "cmp", "op": "compress", "inputs": ["xf", "mflat"], "outputs": ["sel"]},
               {"name": "uq", "op": "unique", "inputs": ["sel"], "outputs": ["u", "first", "inv", "cnt"]},
               {"name": "sq", "op": "mul", "inputs": ["u", "u"], "outputs": ["y"]}]}
json.dump(g, open(d + "/g.json", "w"), indent=1)
m = x > 0
u, c = np.unique(x.reshape(-1)[m.reshape(-1)], return_counts=True)
os.makedirs(d + "/want")
np.save(d + "/want/idxT.npy", np.array(np.nonzero(m)).T.astype(np.int64))
np.save(d + "/want/u.npy", u)
np.save(d + "/want/cnt.npy", c.astype(np.int64))
np.save(d + "/want/y.npy", u * u)
EOF
fi

# run-loop: an ONNX Loop whose trip count is an input (run at run time), its
# carried value grown by a Concat at each iteration (the importer imports the
# model a second time with that state of run-time shape), a scan output;
# two runs, --check-nodes
if [[ " $CASES " == *" run-loop "* ]]; then
    mkdir -p "$FX/loop/want" && "$PYTHON" - "$FX/loop" <<'EOF' || fail_setup "the run-time loop fixture"
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as TP
d = sys.argv[1]
F, B, I = TP.FLOAT, TP.BOOL, TP.INT64
vi = h.make_tensor_value_info
c = lambda name, dt, dims, v: h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", dt, dims, v))
body = h.make_graph([c("half", F, [], [0.5]), c("st", I, [1], [-1]), c("en", I, [1], [2 ** 62]), c("ax", I, [1], [0]),
                     h.make_node("Slice", ["y_in", "st", "en", "ax"], ["last"]), h.make_node("Mul", ["last", "half"], ["nx"]),
                     h.make_node("Concat", ["y_in", "nx"], ["y_out"], axis=0),
                     h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0), h.make_node("Identity", ["cond_in"], ["cond_out"])],
                    "body", [vi("k", I, []), vi("cond_in", B, []), vi("y_in", F, [None])],
                    [vi("cond_out", B, []), vi("y_out", F, [None]), vi("s", F, [])])
g = h.make_graph([h.make_node("Loop", ["n", "", "y0"], ["y", "ss"], body=body)], "loop",
                 [vi("n", I, []), vi("y0", F, [2])], [vi("y", F, [None]), vi("ss", F, [None])])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), d + "/m.onnx")
y = np.array([1.0, 3.0], np.float32)
np.save(d + "/y0.npy", y)
np.save(d + "/n.npy", np.array(4, np.int64))
ss = []
for k in range(4):
    y = np.concatenate([y, y[-1:] * np.float32(0.5)])
    ss.append(y.sum(dtype=np.float32))
np.save(d + "/want/y.npy", y)
np.save(d + "/want/ss.npy", np.array(ss, np.float32))
EOF
fi

# run-onnx: the same computation as an ONNX model (python3-onnx): w as external
# data (m.onnx.data beside it), b in the typed float_data field, the rest in
# raw_data or Constant nodes; the input as a TensorProto file; the goldens from
# NumPy.
if [[ " $CASES " == *" run-onnx "* ]]; then
    "$PYTHON" - "$FX" "${FAULT_GRAPH:-full}" <<'EOF' || fail_setup "the ONNX fixture"
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
fx, size = sys.argv[1], sys.argv[2]
x = np.load(fx + "/x.npy")
w = np.load(fx + "/w.npy")
b = np.arange(16, dtype=np.float32) / 8 - 1
if size == "small":
    b = np.tile(b[:4], 4)
w2 = np.random.default_rng(3).uniform(-1, 1, (16, 4)).astype(np.float32)
r = np.array([0.5, -0.5, 1, 0], np.float32)
F = TensorProto.FLOAT
inits = [numpy_helper.from_array(w, "w"), helper.make_tensor("b", F, [16], b.tolist())]
nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc1")]
if size == "small":
    nodes.append(helper.make_node("Add", ["h", "b"], ["y"], name="bias"))
    y = x @ w + b
else:
    inits += [numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.array([4, 16], np.int64), "shape")]
    nodes += [helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
              helper.make_node("Relu", ["hb"], ["a"], name="act"),
              helper.make_node("Reshape", ["a", "shape"], ["a2"], name="same_shape"),
              helper.make_node("MatMul", ["a2", "w2"], ["z"], name="fc2"),
              helper.make_node("Constant", [], ["r"], name="r", value=numpy_helper.from_array(r, "r")),
              helper.make_node("Add", ["z", "r"], ["y"], name="shift")]
    y = np.maximum(x @ w + b, 0) @ w2 + r
nodes.append(helper.make_node("Softmax", ["y"], ["p"], name="sm", axis=-1))
e = np.exp(y - y.max(axis=-1, keepdims=True))
p = e / e.sum(axis=-1, keepdims=True)
vi = helper.make_tensor_value_info
g = helper.make_graph(nodes, "fault", [vi("x", F, [4, 8])],
                      [vi("y", F, list(y.shape)), vi("p", F, list(y.shape))], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save_model(m, fx + "/m.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="m.onnx.data", size_threshold=256)
open(fx + "/x.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
os.makedirs(fx + "/golden-onnx")
np.save(fx + "/golden-onnx/y.npy", y.astype(np.float32))
np.save(fx + "/golden-onnx/p.npy", p.astype(np.float32))
EOF
fi

# run-text: an ONNX model reading a string input (.npy of unicode strings) and
# a PNG held as a u8 initializer: StringSplit's counts, StringNormalizer's
# lower-cased strings as the length of each (a string output is not compared
# by --expect), and ImageDecoder's pixels; the goldens from Python and Pillow.
if [[ " $CASES " == *" run-text "* ]]; then
    "$PYTHON" - "$FX" <<'EOF' || fail_setup "the strings and image fixture"
import io, os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
from PIL import Image
fx = sys.argv[1]
os.makedirs(fx + "/text/want")
s = np.array(["a bb  ccc", " Hello World ", ""], dtype="<U16")
np.save(fx + "/text/s.npy", s)
pix = np.random.default_rng(5).integers(0, 256, (3, 5, 3)).astype(np.uint8)
buf = io.BytesIO()
Image.fromarray(pix, "RGB").save(buf, format="PNG")
png = np.frombuffer(buf.getvalue(), np.uint8)
vi = helper.make_tensor_value_info
nodes = [helper.make_node("StringSplit", ["s"], ["parts", "counts"], name="split"),
         helper.make_node("ImageDecoder", ["png"], ["pix"], name="decode", pixel_format="RGB")]
g = helper.make_graph(nodes, "text", [vi("s", TensorProto.STRING, [3])],
                      [vi("counts", TensorProto.INT64, [3]), vi("pix", TensorProto.UINT8, [3, 5, 3])],
                      [numpy_helper.from_array(png, "png")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
m.ir_version = 9
onnx.save(m, fx + "/text/m.onnx")
np.save(fx + "/text/want/counts.npy", np.array([len(x.split()) for x in s], np.int64))
np.save(fx + "/text/want/pix.npy", np.asarray(Image.open(io.BytesIO(png.tobytes())).convert("RGB")))
EOF
fi

# graph:NAME cases run graphs/NAME.json, with random values for inputs that
# have no value source.
for c in $CASES; do
    [[ $c == graph:* ]] || continue
    mkdir -p "$FX/in-${c#graph:}"
    "$PYTHON" - "$root/graphs/${c#graph:}.json" "$FX/in-${c#graph:}" <<'EOF' || fail_setup "inputs of $c"
import json, sys
import numpy as np
g = json.load(open(sys.argv[1]))
names = {"f16": "float16", "bf16": "float32", "f32": "float32", "f64": "float64", "i8": "int8", "i16": "int16",
         "i32": "int32", "i64": "int64", "u8": "uint8", "bool": "bool"}
rng = np.random.default_rng(0)
with open(sys.argv[2] + "/args", "w") as out:
    for name in g.get("inputs", []):
        t = g["tensors"][name]
        if any(k in t for k in ("data", "file", "init")):
            continue
        dt = np.dtype(names.get(t["dtype"], t["dtype"]))
        shape = tuple(t["shape"])
        v = rng.standard_normal(shape) if dt.kind == "f" else rng.integers(0, 2 if dt.kind == "b" else 3, shape)
        path = sys.argv[2] + "/" + "".join(ch if ch.isalnum() else "_" for ch in name) + ".npy"
        np.save(path, v.astype(dt))
        print("--input=%s=%s" % (name, path), file=out)
EOF
done

# case_args CASE DIR: sets A (the arguments), KIND (dir, file or stdout) and R
# (where the results go) for a run whose results go under DIR.
case_args() {
    local c=$1 d=$2
    R=$d/out
    case $c in
    run) KIND=dir A=("$FX/g.json" -i "x=$FX/x.npy" --threads 1 -q -o "$R" --expect "$FX/golden") ;;
    run-npz) KIND=dir A=("$FX/g.json" -i "x=$FX/x.npy" --threads 1 -q -o "$R" --format npz --expect "$FX/golden.npz") ;;
    run-ftg) KIND=dir A=("$FX/g.ftg" -i "x=$FX/x.npy" --threads 1 -q -o "$R" --expect "$FX/golden") ;;
    run-trace) KIND=dir A=("$FX/g.json" -i "x=$FX/x.npy" --threads 1 -q -o "$R" -n 2 --profile --trace "$R/trace.json") ;;
    info) KIND=stdout A=(info "$FX/g.json") ;;
    pack) KIND=file A=(pack "$FX/g.json" -o "$R/g.ftg" --compress -q) ;;
    unpack) KIND=dir A=(unpack "$FX/g.ftg" -o "$R" -q) ;;
    compare) KIND=stdout A=(compare "$FX/golden" "$FX/golden.npz" -q) ;;
    run-dims) KIND=dir A=("$FX/g_dims.json" -i "x=$FX/x.npy" --threads 1 -q -o "$R" --expect "$FX/golden") ;;
    run-random) KIND=dir A=("$FX/g_dims.json" --dim n=4 --random-inputs=3 --threads 1 -q -o "$R") ;;
    convert) KIND=file A=(convert "$FX/g_dims.json" --shape x=4,8 -o "$R/g.ftg" --compress -q) ;;
    run-onnx) KIND=dir A=("$FX/m.onnx" -i "x=$FX/x.pb" --threads 1 -q -o "$R" --expect "$FX/golden-onnx") ;;
    run-convs) KIND=dir A=("$FX/convs/se.onnx" -i "x=$FX/convs/x.npy" --threads 1 -q -o "$R" --expect "$FX/convs/want"
                           --rtol 1e-4 --atol 1e-4) ;;
    run-dyn) KIND=dir A=("$FX/dyn/g.json" -i "x=$FX/dyn/x.npy" --threads 1 -q -o "$R" -n 3 --check-nodes
                         --expect "$FX/dyn/want") ;;
    run-loop) KIND=dir A=("$FX/loop/m.onnx" -i "n=$FX/loop/n.npy" -i "y0=$FX/loop/y0.npy" --threads 1 -q -o "$R" -n 2
                          --check-nodes --expect "$FX/loop/want") ;;
    run-text) KIND=dir A=("$FX/text/m.onnx" -i "s=$FX/text/s.npy" --threads 1 -q -o "$R" --expect "$FX/text/want") ;;
    run-convs-res) KIND=dir A=("$FX/convres/res.onnx" -i "x=$FX/convres/x.npy" --threads 1 -q -o "$R" -n 2
                               --expect "$FX/convres/want" --rtol 1e-4 --atol 1e-4) ;;
    graph:*)
        local ins=()
        mapfile -t ins <"$FX/in-${c#graph:}/args"
        KIND=dir A=("$root/graphs/${c#graph:}.json" "${ins[@]}" --threads 1 -q -o "$R") ;;
    *) echo "sweep: unknown case '$c' (cases: $ALL_CASES, graph:NAME for graphs/NAME.json)" >&2; exit 2 ;;
    esac
}

# ftrun_at DIR CLASS N [WRAPPER...]: one run with call N of CLASS failing.
ftrun_at() {
    local d=$1 cls=$2 n=$3
    shift 3
    if [ "$KIND" = file ]; then mkdir -p "$R"; else mkdir -p "$d"; fi
    (cd "$d" && FAULT_CLASS=$cls FAULT_AT=$n FAULT_PERSIST=$PERSIST FAULT_VERBOSE=1 FAULT_COUNT=1 FAULT_LOG=$d/fault.log \
        FAULT_PROG=${FTRUN##*/} LD_PRELOAD=$FAULT_SHIM timeout -k 5 "$TIMEOUT" "$@" "$FTRUN" "${A[@]}" >"$d/stdout" 2>"$d/stderr")
}

for c in $CASES; do
    case_args "$c" "$B/$c"
    for cls in $CLASSES; do
        rm -rf "$B/$c"
        ftrun_at "$B/$c" "$cls" 0
        st=$?
        [ "$st" -eq 0 ] || { cat "$B/$c/stderr" >&2; fail_setup "$c exits with $st without faults"; }
        n=$(sed -n 's/^faultinject: [a-z]* calls: //p' "$B/$c/fault.log" | tail -1)
        echo "${n:-0}" >"$W/count.$c.$cls"
        rm -f "$B/$c/fault.log"
    done
done
if [ -n "${FAULT_COUNTS_ONLY:-}" ]; then
    for c in $CASES; do
        for cls in $CLASSES; do
            printf '%-8s %-5s %s calls\n' "$c" "$cls" "$(cat "$W/count.$c.$cls")"
        done
    done
    [ "$keep" = 1 ] || rm -rf "$W"
    exit 0
fi

# ---- checking one point ----
# (in bash itself where it can: a sweep runs thousands of points)

shopt -s nullglob dotglob

# listing DIR: sets L to the names in DIR (results are flat folders), sorted.
listing() {
    L=()
    local f
    for f in "$1"/*; do L+=("${f##*/}"); done
}

# timing.json: the same keys in the same order as without faults.
keys() { grep -o '"[A-Za-z0-9_]*":' "$1"; }

# same_results CASE DIR: the results of a successful point equal the baseline's.
same_results() {
    local c=$1 d=$2 base=$B/$1 f got want
    if [ "$KIND" = stdout ]; then
        cmp -s "$d/stdout" "$base/stdout" || { echo "exit 0 but its standard output differs from a run without faults"; return 1; }
        return 0
    fi
    listing "$R"
    got="${L[*]}"
    listing "$base/out"
    want="${L[*]}"
    if [ "$got" != "$want" ]; then
        echo "exit 0 but the results are [$got], not [$want]"
        return 1
    fi
    for f in "${L[@]}"; do
        case $f in
        *.npy | graph.json)
            cmp -s "$R/$f" "$base/out/$f" || { echo "exit 0 but $f differs from a run without faults"; return 1; } ;;
        timing.json | trace.json)
            [ "$(keys "$R/$f")" = "$(keys "$base/out/$f")" ] ||
                { echo "exit 0 but $f lacks keys that a run without faults writes"; return 1; } ;;
        *.npz)
            "$FTRUN" compare "$R/$f" "$base/out/$f" -q >/dev/null 2>&1 ||
                { echo "exit 0 but $f differs from a run without faults"; return 1; } ;;
        *.ftg)
            "$FTRUN" "$R/$f" -i "x=$FX/x.npy" --threads 1 -q -o "$d/check" --expect "$FX/golden" >/dev/null 2>&1 ||
                { echo "exit 0 but $f does not run to the golden values"; return 1; } ;;
        esac
    done
    return 0
}

# expect_for WHAT: sets E to the status a failure of that call must give: 3 for
# reading an input, 4 for running out of memory (mmap fails with ENOMEM) or writing.
expect_for() {
    case $1 in
    fopen:r | open:r | openat:r | read | pread | fread | opendir | fclose:r) E=3 ;;
    *) E=4 ;;
    esac
}

# cause_for WHAT: sets C to text the message must contain (an extended regex).
cause_for() {
    case $1 in
    malloc | calloc | realloc | posix_memalign | aligned_alloc | memalign | strdup | strndup | mmap | *:m)
        C='[Oo]ut of memory|Cannot allocate memory' ;;
    fopen:r | open:r | openat:r | read | pread | fread | opendir | rename | fclose:r) C='Input/output error' ;;
    *) C='No space left on device' ;;
    esac
}

# first_line TEXT PREFIX: sets F to the first line of TEXT that starts with PREFIX.
first_line() {
    F=""
    local l
    while IFS= read -r l; do
        if [[ $l == "$2"* ]]; then
            F=$l
            return
        fi
    done <<<"$1"
}

# check_run CASE CLASS N DIR STATUS: prints a problem and returns 1, or returns 0.
check_run() {
    local c=$1 cls=$2 n=$3 d=$4 st=$5 log="" err="" what="" site want="" cause="" l w tmp=()
    [ -f "$d/fault.log" ] && IFS= read -r -d '' log <"$d/fault.log"
    IFS= read -r -d '' err <"$d/stderr"
    first_line "$log" "faultinject: call $n ("
    local line=$F
    if [ -n "$line" ]; then
        what=${line#*(}
        what=${what%%)*}
        site=${line#*called from }
    else
        site="(call $n not reached)"
    fi
    if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
        echo "hangs (killed after ${TIMEOUT}s) when $what fails at $site"
        return 1
    fi
    if [ "$st" -ge 128 ]; then
        echo "killed by signal $((st - 128)) when $what fails at $site: ${err: -300}"
        return 1
    fi
    if [[ $err =~ AddressSanitizer|LeakSanitizer|runtime\ error:|Segmentation|Aborted|libgomp:|double\ free|corrupted ]]; then
        echo "status $st, and a crash or sanitizer report when $what fails at $site: ${BASH_REMATCH[0]}: ${err:0:600}"
        return 1
    fi
    if [ "$KIND" != stdout ]; then
        tmp=("$R"/*.tmp*)
        if [ "${#tmp[@]}" -gt 0 ]; then
            echo "status $st leaves temporary files behind (${tmp[*]##*/}) when $what fails at $site"
            return 1
        fi
    fi
    if [ "$st" -eq 0 ]; then
        same_results "$c" "$d" || { echo "    (when $what fails at $site)"; return 1; }
        return 0
    fi
    if [ -z "$line" ]; then
        echo "status $st although call $n was never reached (a run without faults exits 0)"
        return 1
    fi
    first_line "$err" "ftrun: error: "
    local msg=$F
    if [ -z "$msg" ]; then
        echo "status $st without an 'ftrun: error:' message when $what fails at $site: ${err:0:300}"
        return 1
    fi
    # with FAULT_PERSIST, any of the calls that failed may be the one reported
    while IFS= read -r l; do
        [[ $l == "faultinject: call "* ]] || continue
        w=${l#*(}
        w=${w%%)*}
        expect_for "$w"
        cause_for "$w"
        want="$want $E"
        cause="${cause:+$cause|}$C"
    done <<<"$log"
    if [[ " $want " != *" $st "* ]]; then
        echo "status $st, not$want, when $what fails at $site: $msg"
        return 1
    fi
    if ! [[ $msg =~ $cause ]]; then
        echo "the message does not give the cause ($cause) when $what fails at $site: $msg"
        return 1
    fi
    if [ "$KIND" != stdout ]; then
        listing "$R"
        if [ "${#L[@]}" -gt 0 ]; then
            echo "status $st leaves result files behind (${L[*]}) when $what fails at $site"
            return 1
        fi
    fi
    return 0
}

# point CASE CLASS N: runs and checks one point; writes its verdict to $W/res.
point() {
    local c=$1 cls=$2 n=$3 d=$W/p/$1.$2.$3 st msg verdict line
    case_args "$c" "$d"
    ftrun_at "$d" "$cls" "$n"
    st=$?
    if msg=$(check_run "$c" "$cls" "$n" "$d" "$st"); then
        verdict="ok $st"
        if [ "$st" -eq 0 ] && [ -n "${FAULT_SHOW_TOLERATED:-}" ] && [ -f "$d/fault.log" ]; then
            IFS= read -r -d '' line <"$d/fault.log"
            first_line "$line" "faultinject: call $n ("
            [ -n "$F" ] && verdict="ok 0 ${F#faultinject: call $n }"
        fi
    else
        verdict="FAIL $c $cls $n: $msg"
    fi
    if [ "${verdict%% *}" = ok ] && [ "$LEAK" = valgrind ] && { [ "$n" -eq 1 ] || [ $((n % LEAK_STEP)) -eq 0 ]; }; then
        local v=$d.vg
        case_args "$c" "$v"
        ftrun_at "$v" "$cls" "$n" valgrind -q --soname-synonyms=somalloc=nouserintercepts --trace-children=yes \
            --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99
        st=$?
        if [ "$st" -eq 99 ] || grep -q 'definitely lost' "$v/stderr"; then
            line=$(grep -m1 "^faultinject: call $n " "$v/fault.log" 2>/dev/null)
            verdict="FAIL $c $cls $n: valgrind finds a leak or a memory error when ${line#faultinject: call $n } (status $st): $(grep -m3 -E 'lost|Invalid|uninit' "$v/stderr" | tr '\n' ' ')"
        else
            rm -rf "$v"
        fi
    fi
    echo "$verdict" >"$W/res/$c.$cls.$n"
    [ "${verdict%% *}" = ok ] && rm -rf "$d"
}

running=0
for c in $CASES; do
    for cls in $CLASSES; do
        total=$(cat "$W/count.$c.$cls")
        step=$STEP
        [ "$cls" = io ] && step=$STEP_IO
        for ((n = 1; n <= total; n += step)); do
            point "$c" "$cls" "$n" &
            running=$((running + 1))
            if [ "$running" -ge "$JOBS" ]; then
                wait -n
                running=$((running - 1))
            fi
        done
    done
done
wait

problems=0
for c in $CASES; do
    for cls in $CLASSES; do
        total=$(cat "$W/count.$c.$cls")
        ok0=0 okerr=0 bad=0
        step=$STEP
        [ "$cls" = io ] && step=$STEP_IO
        for ((n = 1; n <= total; n += step)); do
            r=$(cat "$W/res/$c.$cls.$n" 2>/dev/null || echo "FAIL $c $cls $n: no verdict")
            case $r in
            "ok 0"*) ok0=$((ok0 + 1)); [ -n "${FAULT_SHOW_TOLERATED:-}" ] && [ "$r" != "ok 0" ] && echo "tolerated: $c $cls $n: ${r#ok 0 }" ;;
            ok*) okerr=$((okerr + 1)) ;;
            *) bad=$((bad + 1)); echo "$r" ;;
            esac
        done
        problems=$((problems + bad))
        printf '# %-8s %-5s %4d calls: %4d tolerated, %4d failed cleanly, %d problems\n' "$c" "$cls" "$total" "$ok0" "$okerr" "$bad"
    done
done
echo "# leak check: $LEAK$([ "$LEAK" = valgrind ] && echo " (index 1 and every ${LEAK_STEP}th)")"
if [ "$problems" -gt 0 ]; then
    echo "# $problems problems; runs kept in $W/p"
    exit 1
fi
[ "$keep" = 1 ] || rm -rf "$W"
echo "# no problems"
exit 0
