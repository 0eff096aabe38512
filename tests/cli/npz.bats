#!/usr/bin/env bats
# .npz files: `--format npz` results read by NumPy, and archives written by
# NumPy (np.savez, np.savez_compressed) read by ftrun for --input and
# --expect; damaged archives are refused (exit 3), never a crash.

bats_require_minimum_version 1.5.0
load helpers

# The graph of every dtype plus an empty and a scalar output.
dtypes_graph() {
    py '
outs, nodes, tensors = [], [], {}
for dt, data in (("f16", [1.5, -2]), ("bf16", [1.5, 3.015625]), ("f32", [0.1, "nan"]), ("f64", [0.1, "-inf"]),
                 ("i8", [-128, 127]), ("i16", [-5, 6]), ("i32", [7, -8]), ("i64", [9007199254740993, -1]),
                 ("u8", [0, 255]), ("bool", [True, False])):
    tensors[dt] = {"dtype": dt, "shape": [2], "data": data}
    nodes.append({"op": "identity", "inputs": [dt], "outputs": ["out/" + dt]})
    outs.append("out/" + dt)
tensors["e"] = {"dtype": "f32", "shape": [3, 0], "data": []}
tensors["s"] = {"dtype": "i32", "shape": [], "data": 42}
tensors["big"] = {"dtype": "f32", "shape": [100, 100], "init": {"fill": 1}}
tensors["noise"] = {"dtype": "u8", "shape": [4000], "init": {"uniform": {"low": 0, "high": 256}}}
for n in ("e", "s", "big", "noise"):
    nodes.append({"op": "identity", "inputs": [n], "outputs": ["y" + n]})
    outs.append("y" + n)
json.dump({"ftrun": 1, "tensors": tensors, "outputs": outs, "nodes": nodes}, open(sys.argv[1], "w"))' "$T/d.json"
}

@test "--format npz: one outputs.npz (plus timing.json) that numpy.load reads, equal to the .npy results" {
    dtypes_graph
    run "$FTRUN" "$T/d.json" --format npz -o "$T/z"
    status_is 0
    dir_has_exactly "$T/z" outputs.npz timing.json
    "$FTRUN" "$T/d.json" -q -o "$T/n"
    py '
import zipfile
z = np.load(sys.argv[1] + "/outputs.npz")
names = sorted(f[:-4] for f in __import__("os").listdir(sys.argv[2]) if f.endswith(".npy"))
assert sorted(z.files) == names, (z.files, names)
for n in names:
    a, b = z[n], np.load(sys.argv[2] + "/" + n + ".npy")
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), n
assert z["out_bf16"].dtype == np.float32 and z["out_bf16"].tolist() == [1.5, 3.015625]
assert z["out_i64"][0] == 9007199254740992 or z["out_i64"][0] == 9007199254740993
assert z["ye"].shape == (3, 0) and z["ys"].shape == () and z["ys"] == 42
zf = zipfile.ZipFile(sys.argv[1] + "/outputs.npz")
assert zf.testzip() is None
kinds = {i.filename: i.compress_type for i in zf.infolist()}
# members are deflated when that makes them smaller, else stored
assert kinds["ybig.npy"] == zipfile.ZIP_DEFLATED and kinds["ynoise.npy"] == zipfile.ZIP_STORED, kinds' "$T/z" "$T/n"
}

@test "--format npz with --expect of the same file passes; --format none still writes no npz" {
    run "$FTRUN" "$DATA/small.json" --format npz -o "$T/gold"
    status_is 0
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold/outputs.npz" --format npz -o "$T/o"
    status_is 0
    has "ftrun: expect: 2 outputs match $T/gold/outputs.npz"
    run "$FTRUN" "$DATA/small.json" --format none -o "$T/none"
    dir_has_exactly "$T/none" timing.json
}

@test "--input NAME=FILE.npz takes member NAME.npy, or the only member; np.savez and np.savez_compressed" {
    py '
x = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
np.savez(sys.argv[1] + "/named.npz", other=x + 100, x=x)
np.savez_compressed(sys.argv[1] + "/named_c.npz", x=x, other=x + 100)
np.savez(sys.argv[1] + "/single.npz", whatever=x)
np.savez_compressed(sys.argv[1] + "/single_c.npz", arr_0=x)
np.save(sys.argv[1] + "/x.npy", x)' "$T"
    "$FTRUN" "$DATA/input.json" -i x="$T/x.npy" -q -o "$T/ref"
    for f in named named_c single single_c; do
        run "$FTRUN" "$DATA/input.json" -i x="$T/$f.npz" -o "$T/$f"
        status_is 0
        cmp "$T/ref/y.npy" "$T/$f/y.npy"
    done
}

@test "--input FILE.npz without member NAME.npy among several: exit 3 listing the members; dtype and shape still checked" {
    py '
np.savez(sys.argv[1] + "/two.npz", a=np.zeros((2, 3), np.float32), b=np.zeros((2, 3), np.float32))
np.savez(sys.argv[1] + "/bad.npz", x=np.zeros((2, 3), np.float64))
np.savez(sys.argv[1] + "/shape.npz", x=np.zeros((3, 2), np.float32))' "$T"
    run "$FTRUN" "$DATA/input.json" -i x="$T/two.npz" -o "$T/o"
    status_is 3
    is_error
    has "two.npz" "x.npy" "members: a, b"
    run "$FTRUN" "$DATA/input.json" -i x="$T/bad.npz" -o "$T/o"
    status_is 3
    has "bad.npz" "f64" "f32"
    run "$FTRUN" "$DATA/input.json" -i x="$T/shape.npz" -o "$T/o"
    status_is 3
    has "shape.npz" "[3,2]" "[2,3]"
    [ ! -e "$T/o" ]
}

@test "--expect FILE.npz (np.savez and np.savez_compressed): member <output>.npy per output; pass, fail, missing member" {
    py '
s = np.array([[1.5, -1.75, 2], [-3.5, 5.25, -7]], np.float32)
r = np.maximum(s, 0)
np.savez(sys.argv[1] + "/ok.npz", s=s, r=r)
np.savez_compressed(sys.argv[1] + "/ok_c.npz", r=r, s=s, extra=np.zeros(3))
r2 = r.copy(); r2[1, 1] = 4.75
np.savez_compressed(sys.argv[1] + "/bad.npz", s=s, r=r2)
np.savez(sys.argv[1] + "/missing.npz", s=s)' "$T"
    run --separate-stderr "$FTRUN" "$DATA/small.json" --expect "$T/ok.npz" -o "$T/o"
    status_is 0
    [[ "$stderr" == *"ftrun: expect: 2 outputs match $T/ok.npz"* ]]
    run "$FTRUN" "$DATA/small.json" --expect "$T/ok_c.npz" -o "$T/o"
    status_is 0
    run --separate-stderr "$FTRUN" "$DATA/small.json" --expect "$T/bad.npz" -o "$T/o"
    status_is 1
    [[ "$stderr" == *"ftrun: expect: output 'r': 1 of 6 values out of tolerance"*"first at [1,1] (got 5.25, expected 4.75)"* ]]
    run "$FTRUN" "$DATA/small.json" --expect "$T/missing.npz" -o "$T/o2"
    status_is 3
    is_error
    has "output 'r'" "missing.npz" "r.npy" "members: s"
    [ ! -e "$T/o2" ]
}

@test "--expect FILE.npz finds outputs by their sanitised names too" {
    np_out='np.array([-1, -2, -3], np.int64)'
    py "np.savez(sys.argv[1], out_y_1=$np_out)" "$T/g.npz"
    run "$FTRUN" "$DATA/oddname.json" --expect "$T/g.npz" -o "$T/o"
    status_is 0
    "$FTRUN" "$DATA/oddname.json" --format npz -q -o "$T/z"
    [ "$(py 'print(np.load(sys.argv[1]).files)' "$T/z/outputs.npz")" = "['out_y_1']" ]
}

@test "damaged archives: truncated, bad CRC, zip64, encrypted, unknown method, inflating past the declared size: exit 3" {
    py '
import struct, zlib
d = sys.argv[1]
np.savez(d + "/good.npz", x=np.arange(6, dtype=np.float32).reshape(2, 3))
b = bytearray(open(d + "/good.npz", "rb").read())
open(d + "/trunc.npz", "wb").write(b[:len(b) // 2])
open(d + "/short.npz", "wb").write(b[:10])
cd = b.rfind(b"PK\x01\x02")
eocd = b.rfind(b"PK\x05\x06")
lh = 0
c = bytearray(b); c[len(c) - 200] ^= 0xff          # a byte of the stored member
open(d + "/crc.npz", "wb").write(c)
c = bytearray(b); c[cd + 20:cd + 24] = b"\xff" * 4   # zip64 compressed size
open(d + "/zip64.npz", "wb").write(c)
c = bytearray(b); c[eocd + 10:eocd + 12] = b"\xff\xff"; c[eocd + 8:eocd + 10] = b"\xff\xff"
open(d + "/zip64n.npz", "wb").write(c)
c = bytearray(b); c[cd + 8] |= 1
open(d + "/enc.npz", "wb").write(c)
c = bytearray(b); c[cd + 10:cd + 12] = struct.pack("<H", 12)
open(d + "/bzip2.npz", "wb").write(c)
c = bytearray(b); c[cd + 42:cd + 46] = struct.pack("<I", 999999)
open(d + "/lho.npz", "wb").write(c)
# a deflated member that inflates beyond its declared size
import zipfile
zipfile.ZipFile(d + "/defl.npz", "w", zipfile.ZIP_DEFLATED).writestr("x.npy", open(d + "/x.npy", "rb").read() if False else
    (lambda f: (np.save(f, np.zeros((2, 3), np.float32)), f.getvalue())[1])(__import__("io").BytesIO()))
b = bytearray(open(d + "/defl.npz", "rb").read())
cd = b.rfind(b"PK\x01\x02")
usize = struct.unpack("<I", b[cd + 24:cd + 28])[0]
c = bytearray(b); c[cd + 24:cd + 28] = struct.pack("<I", usize - 8)
open(d + "/bomb.npz", "wb").write(c)
open(d + "/notzip.npz", "wb").write(b"PK\x03\x04" + bytes(100))' "$T"
    run "$FTRUN" "$DATA/input.json" -i x="$T/good.npz" -o "$T/ok"
    status_is 0
    check() {
        local f=$1
        shift
        run "$FTRUN" "$DATA/input.json" -i x="$T/$f" -o "$T/o"
        [ "$status" -eq 3 ] || { echo "$f: exit $status: $output"; return 1; }
        is_error
        has "$T/$f" "$@"
    }
    check trunc.npz
    check short.npz
    check crc.npz "CRC-32"
    check zip64.npz "zip64"
    check zip64n.npz "zip64"
    check enc.npz "encrypted"
    check bzip2.npz "method 12"
    check lho.npz "x.npy"
    check bomb.npz "inflates beyond the declared size"
    check notzip.npz
    run "$FTRUN" compare "$T/crc.npz" "$T/good.npz"
    status_is 3
    has "CRC-32"
    [ ! -e "$T/o" ]
}

@test "valgrind: writing npz results and reading np.savez_compressed archives is clean" {
    command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
    [ -z "${FTRUN_SANITIZED:-}" ] || skip "the binary is built with sanitizers, which valgrind cannot run"
    py '
x = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
np.savez_compressed(sys.argv[1] + "/in.npz", x=x)
np.savez_compressed(sys.argv[1] + "/gold.npz", y=x @ np.array([[1, 2], [3, 4], [5, 6]], np.float32))' "$T"
    run valgrind -q --trace-children=yes --leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite \
        "$FTRUN" "$DATA/input.json" -i x="$T/in.npz" --expect "$T/gold.npz" --format npz --threads 1 -q -o "$T/o"
    status_is 0
    run valgrind -q --trace-children=yes --leak-check=full --error-exitcode=99 --errors-for-leak-kinds=definite \
        "$FTRUN" compare "$T/o/outputs.npz" "$T/gold.npz" -q
    status_is 0
}

@test "--format pb writes one ONNX TensorProto per output, named after it, read back by onnx's numpy_helper" {
    cat > "$T/g.json" <<'J'
{"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [2, 3], "data": [[1, -2, 3], [-4, 5, -6]]},
                         "k": {"dtype": "i64", "shape": [2], "data": [7, -9]}},
 "inputs": [], "outputs": ["y", "z"],
 "nodes": [{"op": "relu", "inputs": ["x"], "outputs": ["y"]}, {"op": "neg", "inputs": ["k"], "outputs": ["z"]}]}
J
    run "$FTRUN" run "$T/g.json" --format pb -o "$T/out" -n 1
    status_is 0
    [ -f "$T/out/y.pb" ] && [ -f "$T/out/z.pb" ] && [ ! -e "$T/out/y.npy" ]
    py 'from onnx import TensorProto, numpy_helper
y = TensorProto(); y.ParseFromString(open(sys.argv[1], "rb").read())
z = TensorProto(); z.ParseFromString(open(sys.argv[2], "rb").read())
assert y.name == "y" and z.name == "z", (y.name, z.name)
assert np.array_equal(numpy_helper.to_array(y), np.maximum(np.array([[1, -2, 3], [-4, 5, -6]], np.float32), 0))
assert numpy_helper.to_array(z).dtype == np.int64 and list(numpy_helper.to_array(z)) == [-7, 9]' "$T/out/y.pb" "$T/out/z.pb"
    run "$FTRUN" compare "$T/out" "$T/out"
    status_is 0
    run "$FTRUN" run "$T/g.json" --format pbx -o "$T/out2"
    status_is 2
    has "not one of npy, npz, pb, none"
}

@test "--expect: an expected member of another dtype or shape, a folder missing a file: exit 3 naming output and file, nothing written" {
    py '
s = np.array([[1.5, -1.75, 2], [-3.5, 5.25, -7]], np.float32)
r = np.maximum(s, 0)
np.savez(sys.argv[1] + "/dt.npz", s=s, r=r.astype(np.int64))
np.savez(sys.argv[1] + "/sh.npz", s=s, r=r.reshape(3, 2))' "$T"
    run "$FTRUN" "$DATA/small.json" --expect "$T/dt.npz" -o "$T/o1"
    status_is 3
    is_error
    has "--expect: output 'r' is f32 but $T/dt.npz (member r.npy) holds i64"
    [ ! -e "$T/o1" ]
    run "$FTRUN" "$DATA/small.json" --expect "$T/sh.npz" -o "$T/o2"
    status_is 3
    has "--expect: output 'r' has shape [2,3] but $T/sh.npz (member r.npy) has shape [3,2]"
    [ ! -e "$T/o2" ]
    mkdir "$T/gold"
    py 'np.save(sys.argv[1], np.zeros((2, 3), np.float32))' "$T/gold/s.npy"
    run "$FTRUN" "$DATA/small.json" --expect "$T/gold" -o "$T/o3"
    status_is 3
    has "--expect: output 'r': " "$T/gold/r.npy"
    [ ! -e "$T/o3" ]
}
