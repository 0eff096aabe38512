"""Numeric cases of the low-precision dtypes (ONNX's FLOAT8E4M3FN, FLOAT8E4M3FNUZ,
FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1, INT4, UINT4, INT2, UINT2): decoding
of every bit pattern, encoding (cast from f32 with saturate=1 and 0, f8e8m0's three
round modes) of random values and of the edges (ties, the largest finite value and the
first value past it, subnormals, zeros, infinities, NaN), the 4- and 2-bit integers'
wrap-around, quantize_linear / dequantize_linear, the .npy forms of inputs and outputs,
and data movement. The oracles are written here from the bit-level definitions (sign,
exponent, mantissa) with NumPy: decoding by the formula, encoding by a brute-force
search of the nearest representable value (ties to the even code), never from ftrun."""
import numpy as np

from harness import Case

# name: (exponent bits, mantissa bits, bias, kind); kind: how NaN / inf are spelt
FMT = {
    "f8e4m3fn": (4, 3, 7, "fn"),
    "f8e4m3fnuz": (4, 3, 8, "fnuz"),
    "f8e5m2": (5, 2, 15, "ieee"),
    "f8e5m2fnuz": (5, 2, 16, "fnuz"),
    "f4e2m1": (2, 1, 1, "none"),
}
# the NaN codes ftrun writes (man/ftrun-graph.5, NUMERICS): sign kept where there is one
NAN = {"fn": lambda s: s | 0x7F, "fnuz": lambda s: 0x80, "ieee": lambda s: s | 0x7E, "none": lambda s: 0x8}


def nbits(dt):
    if dt == "f8e8m0":
        return 8
    e, m, _, _ = FMT[dt]
    return 1 + e + m


def decode(dt, codes):
    """Values of the codes of small float dt, from sign / exponent / mantissa."""
    if dt == "f8e8m0":
        c = codes.astype(np.int64)
        return np.where(c == 0xFF, np.nan, np.ldexp(1.0, c - 127)).astype(np.float32)
    e, m, bias, kind = FMT[dt]
    c = codes.astype(np.int64)
    s = (c >> (e + m)) & 1
    ex = (c >> m) & ((1 << e) - 1)
    man = c & ((1 << m) - 1)
    mag = np.where(ex == 0, man * 2.0 ** (1 - bias - m), (2 ** m + man) * np.ldexp(1.0, ex - bias - m))
    v = np.where(s == 1, -mag, mag)
    if kind == "fn":
        v = np.where((c & 0x7F) == 0x7F, np.nan, v)
    elif kind == "fnuz":
        v = np.where(c == 0x80, np.nan, v)
    elif kind == "ieee":
        v = np.where(ex == (1 << e) - 1, np.where(man == 0, np.where(s == 1, -np.inf, np.inf), np.nan), v)
    return v.astype(np.float32)


def positive_table(dt):
    """(codes, values) of the finite non-negative values, and the first value past the
    largest (the overflow candidate), in code order."""
    half = 1 << (nbits(dt) - 1)
    codes = np.arange(half)
    vals = decode(dt, codes).astype(np.float64)
    ok = np.isfinite(vals)
    codes, vals = codes[ok], vals[ok]
    _, m, _, _ = FMT[dt]
    top = vals[-1]
    ulp = top - vals[-2]
    return codes, vals, int(codes[-1]) + 1, top + ulp


def encode(dt, x, sat):
    """Codes of f32 values x: the nearest value by brute force, ties to the even code."""
    _, _, _, kind = FMT[dt]
    codes, vals, over_code, over_val = positive_table(dt)
    cand_c = np.append(codes, over_code)
    cand_v = np.append(vals, over_val)
    sbit = 1 << (nbits(dt) - 1)
    out = np.zeros(x.shape, np.uint8)
    for i, xv in enumerate(x.reshape(-1).astype(np.float64)):
        s = sbit if np.signbit(xv) else 0
        if np.isnan(xv):
            out.flat[i] = NAN[kind](s)
            continue
        a = abs(xv)
        if np.isinf(a) or a >= over_val:
            k = len(cand_c)  # past everything
        else:
            d = np.abs(cand_v - a)
            best = d.min()
            ties = np.nonzero(d == best)[0]
            k = ties[0] if len(ties) == 1 else [t for t in ties if cand_c[t] % 2 == 0][0]
        if k >= len(codes):  # overflow
            if sat or kind == "none":
                out.flat[i] = s | int(codes[-1])
            elif kind == "ieee":
                out.flat[i] = s | 0x7C
            else:
                out.flat[i] = NAN[kind](s)
            continue
        c = int(cand_c[k])
        out.flat[i] = 0 if (c == 0 and kind == "fnuz") else (s | c)
    return out


def encode_e8m0(x, sat, mode):
    """f8e8m0 codes: up, the smallest power of two 2^-127..2^127 >= |x|; down, the
    largest <= |x|; nearest, the nearest of them or of the out-of-range markers 2^-128
    and 2^128 (ties to the larger). Nothing there: out of range (0x00 / 0xfe with
    saturate, else NaN 0xff)."""
    out = np.zeros(x.shape, np.uint8)
    pw = np.ldexp(1.0, np.arange(-127, 128))
    for i, xv in enumerate(x.reshape(-1).astype(np.float64)):
        if np.isnan(xv):
            out.flat[i] = 0xFF
            continue
        a = abs(xv)
        if np.isinf(a):
            out.flat[i] = 0xFE if sat else 0xFF
            continue
        if mode == "up":
            k = np.nonzero(pw >= a)[0]
            k = k[0] if len(k) else 255
        elif mode == "down":
            k = np.nonzero(pw <= a)[0]
            k = k[-1] if len(k) else -1
        else:
            ext = np.concatenate([[2.0 ** -128], pw, [2.0 ** 128]])
            d = np.abs(ext - a)
            k = np.nonzero(d == d.min())[0][-1] - 1
        if k < 0:
            out.flat[i] = 0x00 if sat else 0xFF
        elif k > 254:
            out.flat[i] = 0xFE if sat else 0xFF
        else:
            out.flat[i] = k
    return out


def edge_values(dt):
    """Zeros, the largest value, the midpoints around it and past it, subnormals, ties,
    infinities, NaN, each with both signs."""
    codes, vals, _, over = positive_table(dt)
    mids = (vals[:-1] + vals[1:]) / 2
    top = vals[-1]
    v = list(vals) + list(mids) + [top + (over - top) / 2, over, top * 4, 1e30, 1e-30, vals[1] / 2, vals[1] / 4,
                                   vals[1] * 0.75, np.nextafter(np.float32(mids[3]), 1), np.inf, np.nan]
    v = np.array(v, np.float64)
    return np.concatenate([v, -v]).astype(np.float32)


def enc_graph(to, sat, out_dt="u8", mode=None):
    attrs = {"to": to, "saturate": sat}
    if mode:
        attrs["round_mode"] = mode
    return [{"name": "c", "op": "cast", "inputs": ["x"], "outputs": ["q"], "attrs": attrs},
            {"name": "b", "op": "bitcast", "inputs": ["q"], "outputs": ["y"], "attrs": {"to": out_dt}}]


def dec_graph(dt, to="f32"):
    return [{"name": "b", "op": "bitcast", "inputs": ["x"], "outputs": ["q"], "attrs": {"to": dt}},
            {"name": "c", "op": "cast", "inputs": ["q"], "outputs": ["y"], "attrs": {"to": to}}]


def float_cases():
    cs = []
    allc = np.arange(256, dtype=np.uint8)
    for dt in list(FMT) + ["f8e8m0"]:
        codes = allc if nbits(dt) == 8 or dt == "f8e8m0" else np.arange(16, dtype=np.uint8)
        want = decode(dt, codes)
        cs.append(Case("lowp decode %s every code" % dt, inputs=[("x", codes)], nodes=dec_graph(dt),
                       expect={"y": want}))
        fin = ~np.isnan(want)  # bit-exact, signed zeros included
        cs.append(Case("lowp decode %s bits" % dt, inputs=[("x", codes[fin])],
                       nodes=dec_graph(dt) + [{"name": "u", "op": "bitcast", "inputs": ["y"], "outputs": ["z"],
                                               "attrs": {"to": "u32"}}],
                       outputs=["z"], expect={"z": want[fin].view(np.uint32)}))
        if dt == "f8e8m0":
            continue
        rng = np.random.default_rng(nbits(dt) * 1000 + FMT[dt][2])
        top = float(positive_table(dt)[3])
        rnd = (rng.standard_normal(3000) * np.exp2(rng.uniform(-FMT[dt][2] - 4, np.log2(top) + 2, 3000)))
        for sat in (1, 0):
            for name, x in (("edges", edge_values(dt)), ("random", rnd.astype(np.float32))):
                cs.append(Case("lowp encode %s saturate=%d %s" % (dt, sat, name), inputs=[("x", x)],
                               nodes=enc_graph(dt, sat), expect={"y": encode(dt, x, sat)}))
        # f16 and f64 sources round once, from their own value
        with np.errstate(over="ignore"):
            x = edge_values(dt)
            x16 = x.astype(np.float16)
        cs.append(Case("lowp encode %s from f16" % dt, inputs=[("x", x16)],
                       nodes=enc_graph(dt, 1), expect={"y": encode(dt, x16.astype(np.float32), 1)}))
        # an f32 just above a tie rounds up: a second rounding through a wider step would not
        codes, vals, _, _ = positive_table(dt)
        mids = ((vals[:-1] + vals[1:]) / 2).astype(np.float32)
        up = np.nextafter(mids, np.float32(np.inf))
        cs.append(Case("lowp encode %s just past ties" % dt, inputs=[("x", up)], nodes=enc_graph(dt, 1),
                       expect={"y": encode(dt, up, 1)}))
    # f8e8m0: every round mode, saturating or not
    xs = np.array([0, 0.124, 0.25, 0.5, 1.1, 1.5, 1.4999, 2, 3, 4, 6, 8, 1e-39, 2.0 ** -127, 2.0 ** -128,
                   3 * 2.0 ** -128, 2.0 ** 127, 1.5 * 2.0 ** 127, 3e38, np.inf, np.nan, -1, -3], np.float32)
    for sat in (1, 0):
        for mode in ("up", "down", "nearest"):
            cs.append(Case("lowp encode f8e8m0 saturate=%d %s" % (sat, mode), inputs=[("x", xs)],
                           nodes=enc_graph("f8e8m0", sat, mode=mode), expect={"y": encode_e8m0(xs, sat, mode)}))
    return cs


INTS = {"i4": (-8, 7, 4, True), "u4": (0, 15, 4, False), "i2": (-2, 1, 2, True), "u2": (0, 3, 2, False)}


def wrap(v, dt):
    lo, hi, b, signed = INTS[dt]
    u = np.asarray(v, np.int64) & ((1 << b) - 1)
    return np.where(signed & (u >= (1 << (b - 1))), u - (1 << b), u)


def int_cases():
    cs = []
    x = np.array([-9, -8.9, -8, -7.5, -3, -2.5, -2, -1.9, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 3.9, 7, 8, 9, 15, 16, 17,
                  100, -100, 1e10, -1e10, np.nan], np.float32)
    for dt in INTS:
        signed = INTS[dt][3]
        store = "i8" if signed else "u8"
        npdt = np.int8 if signed else np.uint8
        # float -> 4/2-bit: truncation toward zero, then the low bits (NaN -> 0, beyond int64 saturating)
        tr = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        tr = np.clip(tr, -2.0 ** 63, 2.0 ** 63 - 1)
        ints = np.array([int(v) for v in tr], dtype=object)
        want = np.array([wrap(int(v) & 0xFF, dt) for v in ints], npdt)
        cs.append(Case("lowp cast f32 to %s" % dt, inputs=[("x", x)], nodes=enc_graph(dt, 1, store),
                       expect={"y": want}))
        # int -> 4/2-bit wraps; and back to i32 gives the value
        iv = np.array([-129, -128, -9, -8, -3, -2, -1, 0, 1, 2, 3, 7, 8, 15, 16, 255, 256, 1 << 40], np.int64)
        cs.append(Case("lowp cast i64 to %s" % dt, inputs=[("x", iv)], nodes=enc_graph(dt, 1, store),
                       expect={"y": wrap(iv, dt).astype(npdt)}))
        lo, hi = INTS[dt][:2]
        vals = np.arange(lo, hi + 1).astype(npdt)
        cs.append(Case("lowp %s to f32 and i32" % dt, inputs=[("x", vals, dt)],
                       nodes=[{"name": "c", "op": "cast", "inputs": ["x"], "outputs": ["y"], "attrs": {"to": "f32"}},
                              {"name": "d", "op": "cast", "inputs": ["x"], "outputs": ["z"], "attrs": {"to": "i32"}}],
                       outputs=["y", "z"], expect={"y": vals.astype(np.float32), "z": vals.astype(np.int32)}))
        # an output of the dtype itself is written as i1 / u1
        cs.append(Case("lowp %s output npy" % dt, inputs=[("x", vals, dt)],
                       nodes=[{"name": "t", "op": "reshape", "inputs": ["x"], "outputs": ["y"],
                               "attrs": {"shape": [-1, 1]}}],
                       expect={"y": vals.reshape(-1, 1)}))
        # an .npy value out of range is refused
        cs.append(Case("lowp %s input out of range" % dt, inputs=[("x", np.array([hi + 1], npdt), dt)], op="identity",
                       expect={}, exit_code=3, stderr_re="declared %s" % dt))
        # quantize_linear saturates to the range; dequantize_linear gives (q - zp) * scale back
        xq = np.linspace(-12, 12, 49).astype(np.float32)
        zp = np.array(1 if lo < 0 else 2, npdt)
        q = np.clip(np.rint(xq / np.float32(1.5)) + int(zp), lo, hi).astype(npdt)
        cs.append(Case("lowp quantize_linear %s" % dt, op="quantize_linear",
                       inputs=[("x", xq), ("s", np.float32(1.5)), ("z", zp, dt)], expect={"y": q}))
        cs.append(Case("lowp dequantize_linear %s" % dt, op="dequantize_linear",
                       inputs=[("x", q, dt), ("s", np.float32(1.5)), ("z", zp, dt)],
                       expect={"y": ((q.astype(np.float32) - np.float32(int(zp))) * np.float32(1.5))}))
    return cs


def misc_cases():
    cs = []
    for dt in FMT:
        codes = np.arange(1 << nbits(dt), dtype=np.uint8)
        vals = decode(dt, codes)
        x = vals[~np.isnan(vals)].reshape(-1)
        # an input declared as the dtype from an f32 .npy, moved, written back as f32
        n = x.size // 2 * 2
        xx = x[:n].reshape(2, -1)
        cs.append(Case("lowp %s npy in, transpose, npy out" % dt, op="transpose", inputs=[("x", xx, dt)],
                       attrs={"perm": [1, 0]}, expect={"y": xx.T}))
        cs.append(Case("lowp %s concat and pad" % dt,
                       nodes=[{"name": "c", "op": "concat", "inputs": ["x", "x"], "outputs": ["t"], "attrs": {"axis": 0}},
                              {"name": "p", "op": "pad", "inputs": ["t"], "outputs": ["y"],
                               "attrs": {"pads": [1, 0, 0, 2], "value": 1.0}}],
                       inputs=[("x", xx, dt)],
                       expect={"y": np.pad(np.concatenate([xx, xx]), ((1, 0), (0, 2)), constant_values=1.0)}))
        # quantize_linear to the small float: x / scale rounded once, saturating (or not)
        xq = edge_values(dt)[:40] * np.float32(2)
        for sat in (1, 0):
            cs.append(Case("lowp quantize_linear %s saturate=%d" % (dt, sat),
                           nodes=[{"name": "q", "op": "quantize_linear", "inputs": ["x", "s"], "outputs": ["t"],
                                   "attrs": {"output_dtype": dt, "saturate": sat}},
                                  {"name": "b", "op": "bitcast", "inputs": ["t"], "outputs": ["y"], "attrs": {"to": "u8"}}],
                           inputs=[("x", xq), ("s", np.float32(2))], expect={"y": encode(dt, xq / np.float32(2), sat)}))
        # dequantize_linear with an f16 output (output_dtype)
        cs.append(Case("lowp dequantize_linear %s to f16" % dt, op="dequantize_linear",
                       inputs=[("x", x, dt), ("s", np.float32(0.5))], attrs={"output_dtype": "f16"},
                       expect={"y": (x * np.float32(0.5)).astype(np.float16)}))
    # arithmetic on them is refused by the op table
    cs.append(Case("lowp add refused", op="add", inputs=[("a", np.zeros(2, np.float32), "f8e4m3fn"),
                                                        ("b", np.zeros(2, np.float32), "f8e4m3fn")],
                   expect={}, exit_code=3, stderr_re="f8e4m3fn"))
    cs.append(Case("lowp cast bad round_mode", inputs=[("x", np.zeros(2, np.float32))],
                   nodes=enc_graph("f8e8m0", 1, mode="sideways"), expect={}, exit_code=3,
                   stderr_re="round_mode"))
    return cs


def cases():
    return float_cases() + int_cases() + misc_cases()
