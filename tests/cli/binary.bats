#!/usr/bin/env bats
# Binary graphs (.ftg): `ftrun pack` / `ftrun unpack`, the file layout of
# graph-format.md section 2, round trips of every dtype, and the checks made
# before any blob byte is used (each a clean exit 3 naming file and tensor).

bats_require_minimum_version 1.5.0
load helpers

# Writes $T/ftg.py: build(header, data, ...) assembles a .ftg; blob(...) a
# blob descriptor; graph(...) a one-node graph y = identity(w); parse(path)
# splits a .ftg into (version, flags, header dict, data bytes, D).
ftg_tools() {
    cat > "$T/ftg.py" <<'EOF'
import json, struct, zlib
import numpy as np
MAGIC = b"\x89FTG\r\n\x1a\n"
def build(header, data=b"", version=1, flags=0, hlen=None, pad=b"\0"):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    out = MAGIC + struct.pack("<IIQ", version, flags, len(h) if hlen is None else hlen) + h
    d = (len(out) + 63) // 64 * 64
    return out + pad * (d - len(out)) + data
def blob(off, stored, enc="raw", nbytes=None, crc=None, n_stored=None):
    return {"offset": off, "nbytes": len(stored) if nbytes is None else nbytes, "encoding": enc,
            "stored": len(stored) if n_stored is None else n_stored,
            "crc32": zlib.crc32(stored) if crc is None else crc}
def graph(tensors, src="w"):
    return {"ftrun": 1, "tensors": tensors, "outputs": ["y"],
            "nodes": [{"op": "identity", "inputs": [src], "outputs": ["y"]}]}
def parse(path):
    b = open(path, "rb").read()
    assert b[:8] == MAGIC, b[:8]
    ver, flags, h = struct.unpack("<IIQ", b[8:24])
    d = (24 + h + 63) // 64 * 64
    assert b[24 + h:d] == b"\0" * (d - 24 - h)
    return ver, flags, json.loads(b[24:24 + h]), b[d:], d
W = np.arange(16, dtype=np.float32).tobytes()
V = np.arange(16, 32, dtype=np.float32).tobytes()
def w16(b, **kw):
    return {"w": {"dtype": "f32", "shape": [16], "blob": blob(0, b, **kw)}}
EOF
}

# Runs ftrun on $1 and checks a clean exit 3 naming the file and every further argument.
refused() {
    local f=$1
    shift
    run "$FTRUN" "$f" -o "$T/o"
    status_is 3
    is_error
    has "$f" "$@"
    [ ! -e "$T/o" ]
}

# --- pack and the file layout -----------------------------------------------

@test "pack: the file follows graph-format.md section 2 and runs like the JSON graph" {
    ftg_tools
    run "$FTRUN" pack "$DATA/small.json" -o "$T/s.ftg"
    status_is 0
    has "ftrun: pack: wrote $T/s.ftg: 2 blobs (0 zlib)"
    py '
sys.path.insert(0, sys.argv[2])
import ftg, zlib
ver, flags, h, data, d = ftg.parse(sys.argv[1])
assert (ver, flags) == (1, 0)
assert d % 64 == 0
assert h["ftrun"] == 1 and h["outputs"] == ["s", "r"] and len(h["nodes"]) == 2
for name in ("a", "b"):
    t = h["tensors"][name]
    assert set(t) == {"dtype", "shape", "blob"}, t
    b = t["blob"]
    assert b["offset"] % 64 == 0 and b["encoding"] == "raw" and b["stored"] == b["nbytes"]
    raw = data[b["offset"]:b["offset"] + b["stored"]]
    assert zlib.crc32(raw) == b["crc32"]
a = np.frombuffer(data[h["tensors"]["a"]["blob"]["offset"]:][:24], np.float32)
assert a.tolist() == [1, -2, 3, -4, 5, -6], a' "$T/s.ftg" "$T"
    "$FTRUN" "$DATA/small.json" -q -o "$T/j"
    run "$FTRUN" "$T/s.ftg" -o "$T/b"
    status_is 0
    has "small: 2 nodes on cpu"
    cmp "$T/j/s.npy" "$T/b/s.npy"
    cmp "$T/j/r.npy" "$T/b/r.npy"
    [ "$(jget "$T/b/timing.json" 'd["graph"]["file"]')" = "$T/s.ftg" ]
}

@test "pack materialises \"file\" (.npy and raw with offset) and \"init\" values; the .ftg needs none of the files" {
    mkdir -p "$T/src/w"
    npy "$T/src/w/a.npy" 'np.arange(12, dtype=np.int16).reshape(3, 4) - 5'
    py 'open(sys.argv[1], "wb").write(b"\xff" * 8 + np.array([1.5, -2.25, 3], "<f8").tobytes())' "$T/src/raw.bin"
    graph src/g.json > /dev/null <<'EOF'
{"ftrun": 1, "name": "sources",
 "tensors": {
   "a": {"dtype": "i16", "shape": [3, 4], "file": "w/a.npy"},
   "r": {"dtype": "f64", "shape": [3], "file": "raw.bin", "offset": 8},
   "u": {"dtype": "f32", "shape": [5, 7], "init": {"normal": {"mean": 1, "std": 2}, "seed": 3}},
   "k": {"dtype": "i32", "shape": [6], "init": {"arange": {"start": -2, "step": 3}}}},
 "outputs": ["ya", "yr", "yu", "yk"],
 "nodes": [{"op": "identity", "inputs": ["a"], "outputs": ["ya"]},
           {"op": "identity", "inputs": ["r"], "outputs": ["yr"]},
           {"op": "identity", "inputs": ["u"], "outputs": ["yu"]},
           {"op": "identity", "inputs": ["k"], "outputs": ["yk"]}]}
EOF
    "$FTRUN" "$T/src/g.json" -q -o "$T/j"
    run "$FTRUN" pack "$T/src/g.json" -o "$T/g.ftg" -q
    status_is 0
    [ -z "$output" ]
    # --seed at pack time replaces the seed of the random inits that get materialised
    "$FTRUN" pack "$T/src/g.json" --seed 9 -o "$T/g9.ftg" -q
    "$FTRUN" "$T/src/g.json" --seed 9 -q -o "$T/j9"
    rm -r "$T/src"
    run "$FTRUN" "$T/g.ftg" -o "$T/b"
    status_is 0
    for y in ya yr yu yk; do cmp "$T/j/$y.npy" "$T/b/$y.npy"; done
    "$FTRUN" "$T/g9.ftg" -q -o "$T/b9"
    ! cmp -s "$T/b/yu.npy" "$T/b9/yu.npy"
    cmp "$T/j9/yu.npy" "$T/b9/yu.npy"
    cmp "$T/b/yk.npy" "$T/b9/yk.npy"
    # a materialised init no longer depends on --seed at run time
    "$FTRUN" "$T/g.ftg" --seed 9 -q -o "$T/b9r"
    cmp "$T/b/yu.npy" "$T/b9r/yu.npy"
}

# Every dtype, with edge values, an empty and a scalar tensor: JSON -> .ftg
# (raw and --compress) -> unpack; every value must come back bit for bit.
@test "round trip of every dtype, empty and scalar tensors: pack, pack --compress, unpack give the values back bit for bit" {
    py '
f32 = lambda v: [float(x) for x in v]
vals = {
  "f16":  ("float16", [0.0, -0.0, 1.5, -65504, 6e-08, "inf", "-inf", "nan", 0.333251953125]),
  "bf16": ("float32", [0.0, -0.0, 1.5, -3.3895313892515355e38, 1.1754943508222875e-38, "inf", "-inf", "nan", 0.333984375]),
  "f32":  ("float32", [0.0, -0.0, 1.5, 3.4028234663852886e38, 1e-45, "inf", "-inf", "nan", 0.1]),
  "f64":  ("float64", [0.0, -0.0, 1.5, 1.7976931348623157e308, 5e-324, "inf", "-inf", "nan", 0.1]),
  "i8":   ("int8", [-128, 127, 0, -1, 1, 2, 3, 4, 5]),
  "i16":  ("int16", [-32768, 32767, 0, -1, 1, 2, 3, 4, 5]),
  "i32":  ("int32", [-2147483648, 2147483647, 0, -1, 1, 2, 3, 4, 5]),
  "i64":  ("int64", [-9007199254740992, 9007199254740992, 0, -1, 1, 2, 3, 4, 5]),
  "u8":   ("uint8", [0, 255, 1, 2, 3, 4, 5, 6, 7]),
  "bool": ("bool", [True, False, True, True, False, False, True, False, True]),
}
tensors, nodes, outs, expect = {}, [], [], {}
for dt, (npdt, v) in vals.items():
    for kind, shape, data in (("m", [3, 3], v), ("e", [0, 3], []), ("s", [], v[2])):
        name = dt + "_" + kind
        tensors[name] = {"dtype": dt, "shape": shape, "data": data}
        nodes.append({"op": "identity", "inputs": [name], "outputs": ["y_" + name]})
        outs.append("y_" + name)
        conv = lambda x: float(x) if isinstance(x, str) else x
        arr = np.array([conv(x) for x in data] if isinstance(data, list) else conv(data), dtype=npdt).reshape(shape)
        expect[name] = arr
# a big, very compressible tensor so that --compress has something to do
tensors["z"] = {"dtype": "f32", "shape": [64, 64], "init": {"fill": 0.5}}
nodes.append({"op": "identity", "inputs": ["z"], "outputs": ["y_z"]}); outs.append("y_z")
expect["z"] = np.full((64, 64), 0.5, np.float32)
json.dump({"ftrun": 1, "name": "dtypes", "tensors": tensors, "outputs": outs, "nodes": nodes}, open(sys.argv[1] + "/g.json", "w"))
np.savez(sys.argv[1] + "/expect.npz", **expect)' "$T"
    "$FTRUN" "$T/g.json" -q -o "$T/j"
    run "$FTRUN" pack "$T/g.json" -o "$T/raw.ftg"
    status_is 0
    has "31 blobs (0 zlib)"
    run "$FTRUN" pack "$T/g.json" -o "$T/z.ftg" --compress
    status_is 0
    [[ "$output" != *"(0 zlib)"* ]]
    [ "$(stat -c %s "$T/z.ftg")" -lt "$(stat -c %s "$T/raw.ftg")" ]
    "$FTRUN" unpack "$T/z.ftg" -o "$T/u" -q
    for g in raw.ftg z.ftg u/graph.json; do
        "$FTRUN" "$T/$g" -q -o "$T/out"
        for f in "$T"/j/*.npy; do cmp "$f" "$T/out/$(basename "$f")"; done
    done
    # the unpacked .npy files hold the values, byte for byte (bf16 as f32, exactly)
    py '
e = np.load(sys.argv[1] + "/expect.npz")
g = json.load(open(sys.argv[1] + "/u/graph.json"))
assert len(g["tensors"]) == len(e.files)
for name in e.files:
    t = g["tensors"][name]
    assert set(t) == {"dtype", "shape", "file"}, t
    a = np.load(sys.argv[1] + "/u/" + t["file"])
    want = e[name]
    assert a.dtype == want.dtype and a.shape == want.shape, (name, a.dtype, a.shape)
    assert a.tobytes() == want.tobytes(), (name, a, want)
' "$T"
}

@test "pack --compress: zlib only where it makes a blob smaller; the header says which" {
    ftg_tools
    py '
json.dump({"ftrun": 1, "tensors": {
  "zeros": {"dtype": "f32", "shape": [1000], "init": {"fill": 0}},
  "noise": {"dtype": "u8", "shape": [4000], "init": {"uniform": {"low": 0, "high": 256}, "seed": 4}},
  "tiny":  {"dtype": "u8", "shape": [3], "data": [1, 2, 3]},
  "large": {"dtype": "i32", "shape": [3, 1000001], "init": {"uniform": {"low": -2e9, "high": 2e9}, "seed": 5}}},
  "outputs": ["a", "b", "c", "d"],
  "nodes": [{"op": "identity", "inputs": ["zeros"], "outputs": ["a"]},
            {"op": "identity", "inputs": ["noise"], "outputs": ["b"]},
            {"op": "identity", "inputs": ["tiny"], "outputs": ["c"]},
            {"op": "identity", "inputs": ["large"], "outputs": ["d"]}]}, open(sys.argv[1], "w"))' "$T/g.json"
    run "$FTRUN" pack "$T/g.json" -o "$T/g.ftg" --compress
    status_is 0
    has "4 blobs (1 zlib)"
    py '
sys.path.insert(0, sys.argv[2])
import ftg, zlib
_, _, h, data, _ = ftg.parse(sys.argv[1])
enc = {k: v["blob"]["encoding"] for k, v in h["tensors"].items()}
assert enc == {"zeros": "zlib", "noise": "raw", "tiny": "raw", "large": "raw"}, enc
# the CRC-32 of every blob, the 12 MB one too (computed in pieces by several threads)
for k, v in h["tensors"].items():
    b = v["blob"]
    assert zlib.crc32(data[b["offset"]:b["offset"] + b["stored"]]) == b["crc32"], k
b = h["tensors"]["zeros"]["blob"]
assert b["stored"] < b["nbytes"] == 4000
assert zlib.decompress(data[b["offset"]:b["offset"] + b["stored"]]) == bytes(4000)' "$T/g.ftg" "$T"
    "$FTRUN" "$T/g.json" -q -o "$T/j"
    "$FTRUN" "$T/g.ftg" -q -o "$T/b"
    for y in a b c d; do cmp "$T/j/$y.npy" "$T/b/$y.npy"; done
}

@test "the kind of graph file is told by its first bytes, not by its name" {
    "$FTRUN" pack "$DATA/small.json" -o "$T/s.ftg" -q
    cp "$T/s.ftg" "$T/really-binary.json"
    cp "$DATA/small.json" "$T/really-json.ftg"
    run "$FTRUN" "$T/really-binary.json" -o "$T/a"
    status_is 0
    run "$FTRUN" "$T/really-json.ftg" -o "$T/b"
    status_is 0
    cmp "$T/a/r.npy" "$T/b/r.npy"
    run "$FTRUN" info "$T/really-binary.json"
    status_is 0
    has "graph: small" "file: $T/really-binary.json"
}

@test "a .ftg can be packed again, and unpacked again" {
    "$FTRUN" pack "$DATA/small.json" -o "$T/1.ftg" --compress -q
    run "$FTRUN" pack "$T/1.ftg" -o "$T/2.ftg"
    status_is 0
    run "$FTRUN" unpack "$T/2.ftg" -o "$T/u"
    status_is 0
    has "wrote $T/u/graph.json and 2 .npy files"
    dir_has_exactly "$T/u" graph.json a.npy b.npy
    "$FTRUN" "$DATA/small.json" -q -o "$T/j"
    "$FTRUN" "$T/u/graph.json" -q -o "$T/k"
    cmp "$T/j/r.npy" "$T/k/r.npy"
}

@test "unpack: one .npy per tensor with a value, sanitised and distinct names, referenced with \"file\"; inputs without values stay so" {
    graph g.json > /dev/null <<'EOF'
{"ftrun": 1, "tensors": {
   "x": {"dtype": "f32", "shape": [2]},
   "w/1": {"dtype": "f32", "shape": [2], "data": [1, 2]},
   "w:1": {"dtype": "f32", "shape": [2], "data": [3, 4]},
   "graph": {"dtype": "i8", "shape": [], "data": 7}},
 "inputs": ["x"], "outputs": ["y", "z"],
 "nodes": [{"op": "add", "inputs": ["x", "w/1"], "outputs": ["t"]},
           {"op": "add", "inputs": ["t", "w:1"], "outputs": ["y"]},
           {"op": "identity", "inputs": ["graph"], "outputs": ["z"]}]}
EOF
    run "$FTRUN" unpack "$T/g.json" -o "$T/u/deep"
    status_is 0
    dir_has_exactly "$T/u/deep" graph.json w_1.npy w_1_2.npy graph.npy
    py '
g = json.load(open(sys.argv[1] + "/graph.json"))
t = g["tensors"]
assert t["x"] == {"dtype": "f32", "shape": [2]}, t["x"]
assert t["w/1"]["file"] == "w_1.npy" and t["w:1"]["file"] == "w_1_2.npy" and t["graph"]["file"] == "graph.npy"
assert np.load(sys.argv[1] + "/w_1_2.npy").tolist() == [3, 4]
assert g["inputs"] == ["x"] and len(g["nodes"]) == 3' "$T/u/deep"
    npy "$T/x.npy" 'np.array([10, 20], np.float32)'
    run "$FTRUN" "$T/u/deep/graph.json" -i x="$T/x.npy" -o "$T/o"
    status_is 0
    [ "$(py 'print(np.load(sys.argv[1]).tolist())' "$T/o/y.npy")" = "[14.0, 26.0]" ]
}

@test "an input with a blob default can be replaced with --input" {
    graph g.json > /dev/null <<'EOF'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [3], "data": [1, 2, 3]}},
 "inputs": ["x"], "outputs": ["y"], "nodes": [{"op": "neg", "inputs": ["x"], "outputs": ["y"]}]}
EOF
    "$FTRUN" pack "$T/g.json" -o "$T/g.ftg" -q
    "$FTRUN" "$T/g.ftg" -q -o "$T/a"
    [ "$(py 'print(np.load(sys.argv[1]).tolist())' "$T/a/y.npy")" = "[-1.0, -2.0, -3.0]" ]
    npy "$T/x.npy" 'np.array([5, 6, 7], np.float32)'
    "$FTRUN" "$T/g.ftg" -i x="$T/x.npy" -q -o "$T/b"
    [ "$(py 'print(np.load(sys.argv[1]).tolist())' "$T/b/y.npy")" = "[-5.0, -6.0, -7.0]" ]
}

@test "\"blob\" is accepted only in the header of a binary graph" {
    graph g.json > /dev/null <<'EOF'
{"ftrun": 1, "tensors": {"w": {"dtype": "f32", "shape": [1],
  "blob": {"offset": 0, "nbytes": 4, "encoding": "raw", "stored": 4, "crc32": 0}}},
 "outputs": ["y"], "nodes": [{"op": "identity", "inputs": ["w"], "outputs": ["y"]}]}
EOF
    refused "$T/g.json" "tensor 'w'" "unknown key 'blob'"
}

# --- pack / unpack usage -----------------------------------------------------

@test "pack and unpack need -o; --compress is for pack only; extra operands are usage errors" {
    run "$FTRUN" pack "$DATA/small.json"
    status_is 2
    has "-o OUT.ftg" "Try 'ftrun --help'."
    run "$FTRUN" unpack "$DATA/small.json"
    status_is 2
    has "-o DIR"
    run "$FTRUN" "$DATA/small.json" --compress
    status_is 2
    has "--compress" "'run'"
    run "$FTRUN" unpack "$DATA/small.json" -o "$T/u" --compress
    status_is 2
    run "$FTRUN" pack "$DATA/small.json" "$DATA/f64.json" -o "$T/x.ftg"
    status_is 2
    has "unexpected argument"
    run "$FTRUN" pack -o "$T/x.ftg"
    status_is 2
    run "$FTRUN" pack "$DATA/small.json" -o "$T/x.ftg" -n 3
    status_is 2
    has "--iterations" "'pack'"
    [ ! -e "$T/x.ftg" ]
}

@test "pack of an invalid or missing graph: exit 3, no output file; -o a directory: exit 4" {
    graph bad.json > /dev/null <<'EOF'
{"ftrun": 1, "tensors": {"a": {"dtype": "f32", "shape": [2], "data": [1, 2, 3]}},
 "outputs": ["y"], "nodes": [{"op": "relu", "inputs": ["a"], "outputs": ["y"]}]}
EOF
    run "$FTRUN" pack "$T/bad.json" -o "$T/x.ftg"
    status_is 3
    is_error
    has "tensor 'a'"
    run "$FTRUN" pack "$T/nothing.json" -o "$T/x.ftg"
    status_is 3
    has "nothing.json" "cannot open"
    [ -z "$(ls -A "$T" | grep x.ftg)" ]
    mkdir "$T/d"
    run "$FTRUN" pack "$DATA/small.json" -o "$T/d"
    status_is 4
    is_error
    has "$T/d" "directory"
    run "$FTRUN" unpack "$T/nothing.ftg" -o "$T/u"
    status_is 3
    [ ! -e "$T/u" ]
}

# --- refused files -----------------------------------------------------------

@test "truncated at every field boundary (magic, version, flags, header length, header, padding, each blob): exit 3 naming the file" {
    ftg_tools
    py '
sys.path.insert(0, sys.argv[2])
from ftg import *
z = zlib.compress(V)
hdr = graph({"w": {"dtype": "f32", "shape": [16], "blob": blob(0, W)},
             "v": {"dtype": "f32", "shape": [16], "blob": blob(64, z, "zlib", nbytes=64)}})
b = build(hdr, W + z)
open(sys.argv[1] + "/full.ftg", "wb").write(b)
h = len(json.dumps(hdr))
d = (24 + h + 63) // 64 * 64
assert (24 + h) % 64, "no padding to cut into"
cuts = sorted({1, 4, 7, 8, 10, 12, 15, 16, 20, 23, 24, 24 + h // 2, 23 + h, 24 + h, d - 1, d, d + 1,
               d + 63, d + 64, d + 65, len(b) - 1})
open(sys.argv[1] + "/cuts", "w").write(" ".join(map(str, cuts)))
open(sys.argv[1] + "/data_at", "w").write(str(d))' "$T" "$T"
    run "$FTRUN" "$T/full.ftg" -o "$T/ok"
    status_is 0
    for n in $(cat "$T/cuts"); do
        head -c "$n" "$T/full.ftg" > "$T/cut.ftg"
        run "$FTRUN" "$T/cut.ftg" -o "$T/o"
        [ "$status" -eq 3 ] || { echo "cut at $n: exit $status: $output"; return 1; }
        is_error
        has "$T/cut.ftg"
        if [ "$n" -lt 24 ]; then has "truncated"; fi
    done
    # cuts inside the data section name the tensor whose blob is cut
    d=$(cat "$T/data_at")
    head -c "$((d + 63))" "$T/full.ftg" > "$T/cut.ftg"
    refused "$T/cut.ftg" "tensor 'w'" "beyond the end of the file"
    head -c "$(( $(stat -c %s "$T/full.ftg") - 1 ))" "$T/full.ftg" > "$T/cut.ftg"
    refused "$T/cut.ftg" "tensor 'v'" "beyond the end of the file"
}

@test "wrong magic, wrong version, nonzero flags, header length beyond the file, nonzero padding: exit 3, each said" {
    ftg_tools
    py '
sys.path.insert(0, sys.argv[2])
from ftg import *
d = sys.argv[1]
good = build(graph(w16(W)), W)
open(d + "/magic.ftg", "wb").write(good[:3] + b"X" + good[4:])
open(d + "/png.ftg", "wb").write(b"\x89PNG\r\n\x1a\n" + good[8:])
open(d + "/v2.ftg", "wb").write(build(graph(w16(W)), W, version=2))
open(d + "/v0.ftg", "wb").write(build(graph(w16(W)), W, version=0))
open(d + "/flags.ftg", "wb").write(build(graph(w16(W)), W, flags=4))
open(d + "/hlen.ftg", "wb").write(build(graph(w16(W)), W, hlen=1 << 40))
open(d + "/hlen64.ftg", "wb").write(build(graph(w16(W)), W, hlen=(1 << 64) - 1))
assert (24 + len(json.dumps(graph(w16(W))))) % 64, "no padding"
open(d + "/pad.ftg", "wb").write(build(graph(w16(W)), W, pad=b" "))
open(d + "/json.ftg", "wb").write(build(b"{\"ftrun\": 1,\n \"tensors\": {]}", W))' "$T" "$T"
    refused "$T/magic.ftg" "bad magic number 89 46 54 58 0d 0a 1a 0a"
    refused "$T/png.ftg" "not an ftrun binary graph"
    refused "$T/v2.ftg" "version 2 is newer than this ftrun supports"
    refused "$T/v0.ftg" "version 0 is not supported"
    refused "$T/flags.ftg" "flags 0x00000004 are not zero"
    refused "$T/hlen.ftg" "header length 1099511627776 goes beyond the end of the file"
    refused "$T/hlen64.ftg" "header length 18446744073709551615 goes beyond the end of the file"
    refused "$T/pad.ftg" "padding after the header" "not zero"
    refused "$T/json.ftg" "json.ftg:2:" "JSON syntax error"
}

@test "blob checks: CRC, alignment, overlap, sizes, encoding, range: exit 3 naming file and tensor" {
    ftg_tools
    py '
sys.path.insert(0, sys.argv[2])
from ftg import *
d = sys.argv[1]
def put(name, tensors, data):
    open(d + "/" + name + ".ftg", "wb").write(build(graph(tensors), data))
put("crc", w16(W, crc=12345), W)
flipped = bytearray(W); flipped[17] ^= 4
put("flip", w16(W), bytes(flipped))
put("align", {"w": {"dtype": "f32", "shape": [16], "blob": blob(32, W)}}, bytes(32) + W)
put("overlap", {"w": {"dtype": "f32", "shape": [16], "blob": blob(0, W)},
                "v": {"dtype": "f32", "shape": [16], "blob": blob(0, W)}}, W)
put("overlap2", {"w": {"dtype": "f32", "shape": [32], "blob": blob(0, W + V)},
                 "v": {"dtype": "f32", "shape": [16], "blob": blob(64, V)}}, W + V)
put("nbytes", {"w": {"dtype": "f32", "shape": [15], "blob": blob(0, W)}}, W)
put("stored", w16(W, n_stored=60), W)
put("range", {"w": {"dtype": "f32", "shape": [16], "blob": blob(64, W)}}, W)
put("huge", {"w": {"dtype": "f32", "shape": [16], "blob": blob(2**52, W)}}, W)
put("enc", w16(W, enc="lz4"), W)
put("missing", {"w": {"dtype": "f32", "shape": [16], "blob": {"offset": 0, "nbytes": 64, "encoding": "raw", "stored": 64}}}, W)
put("two", {"w": {"dtype": "f32", "shape": [16], "blob": blob(0, W), "data": [0] * 16}}, W)
put("neg", w16(W, crc=-1), W)' "$T" "$T"
    refused "$T/crc.ftg" "tensor 'w'" "CRC-32 mismatch" "0x00003039"
    refused "$T/flip.ftg" "tensor 'w'" "CRC-32 mismatch"
    refused "$T/align.ftg" "tensor 'w'" "offset 32 is not a multiple of 64"
    refused "$T/overlap.ftg" "overlap" "tensor 'w'" "tensor 'v'"
    refused "$T/overlap2.ftg" "tensor 'v'" "[64, 128) overlap those of tensor 'w' [0, 128)"
    refused "$T/nbytes.ftg" "tensor 'w'" "nbytes 64" "f32 [15] is 60 bytes"
    refused "$T/stored.ftg" "tensor 'w'" "raw blob stores 60 bytes but nbytes is 64"
    refused "$T/range.ftg" "tensor 'w'" "beyond the end of the file"
    refused "$T/huge.ftg" "tensor 'w'" "beyond the end of the file"
    refused "$T/enc.ftg" "tensor 'w'" "\"encoding\" must be \"raw\" or \"zlib\"" "lz4"
    refused "$T/missing.ftg" "tensor 'w'" "lacks \"crc32\""
    refused "$T/two.ftg" "tensor 'w'" "2 value sources"
    refused "$T/neg.ftg" "tensor 'w'" "crc32"
}

@test "zlib blobs: beyond the declared size, short, truncated, trailing bytes, corrupt: exit 3 naming file and tensor" {
    ftg_tools
    py '
sys.path.insert(0, sys.argv[2])
from ftg import *
d = sys.argv[1]
def put(name, z):
    open(d + "/" + name + ".ftg", "wb").write(build(graph(w16(z, enc="zlib", nbytes=64)), z))
put("ok", zlib.compress(W))
put("bomb", zlib.compress(bytes(1 << 20)))
put("over", zlib.compress(W + b"\0"))
put("short", zlib.compress(W[:60]))
put("trunc", zlib.compress(W)[:-6])
put("trail", zlib.compress(W) + b"\0\0")
put("corrupt", zlib.compress(W)[:2] + b"\xff" * 30)' "$T" "$T"
    run "$FTRUN" "$T/ok.ftg" -o "$T/ok"
    status_is 0
    refused "$T/bomb.ftg" "tensor 'w'" "inflates beyond the declared size of 64 bytes"
    refused "$T/over.ftg" "tensor 'w'" "inflates beyond the declared size of 64 bytes"
    refused "$T/short.ftg" "tensor 'w'" "inflates to 60 bytes, not the declared 64"
    refused "$T/trunc.ftg" "tensor 'w'" "truncated"
    refused "$T/trail.ftg" "tensor 'w'" "2 of the" "follow the end of the zlib stream"
    refused "$T/corrupt.ftg" "tensor 'w'" "corrupt"
}

@test "valgrind: loading good and refused binary graphs is clean and leaks nothing" {
    command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
    [ -z "${FTRUN_SANITIZED:-}" ] || skip "the binary is built with sanitizers, which valgrind cannot run"
    ftg_tools
    py '
sys.path.insert(0, sys.argv[2])
from ftg import *
d = sys.argv[1]
z = zlib.compress(V)
two = {"w": {"dtype": "f32", "shape": [16], "blob": blob(0, W)},
       "v": {"dtype": "f32", "shape": [16], "blob": blob(64, z, "zlib", nbytes=64)}}
open(d + "/good.ftg", "wb").write(build(graph(two), W + z))
open(d + "/bomb.ftg", "wb").write(build(graph(two), W + zlib.compress(bytes(1000))))
open(d + "/crc.ftg", "wb").write(build(graph(w16(W, crc=1)), W))
open(d + "/cut.ftg", "wb").write(build(graph(two), W + z)[:-3])
open(d + "/overlap.ftg", "wb").write(build(graph({"w": two["w"], "v": {"dtype": "f32", "shape": [16], "blob": blob(0, W)}}), W))' "$T" "$T"
    vg() { valgrind -q --trace-children=yes --leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite "$@"; }
    run vg "$FTRUN" "$T/good.ftg" --threads 1 -q -o "$T/o"
    status_is 0
    "$FTRUN" pack "$T/good.ftg" -o "$T/re.ftg" -q
    run vg "$FTRUN" pack "$T/good.ftg" --compress -o "$T/re2.ftg" -q
    status_is 0
    run vg "$FTRUN" unpack "$T/re2.ftg" -o "$T/u" -q
    status_is 0
    for f in bomb crc cut overlap; do
        run vg "$FTRUN" "$T/$f.ftg" -q -o "$T/o2"
        [ "$status" -eq 3 ] || { echo "$f: exit $status: $output"; return 1; }
        is_error
    done
}
