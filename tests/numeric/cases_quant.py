"""Numeric cases of the int8 inference ops: quantize_linear, dequantize_linear,
dynamic_quantize_linear, matmul_integer, qlinear_matmul.

The oracle is ONNX's reference implementation written out here in NumPy:
  quantize_linear:   y = clip(rint(x / scale) + zero_point, qmin, qmax), the division in
                     x's dtype (NumPy's float16 divides in f32 and rounds once), np.rint
                     rounding half to even;
  dequantize_linear: y = (f32(x) - f32(zero_point)) * scale, the product in f32 (f64 for
                     an f64 scale), rounded to the scale's dtype;
  dynamic_quantize_linear: f32 throughout: scale = (max(0, max x) - min(0, min x)) / 255
                     (1/255 when both are 0), zero_point = rint(clip(0 - min / scale, 0, 255)),
                     y = clip(rint(x / scale) + zero_point, 0, 255);
  matmul_integer:    (a - a_zp) @ (b - b_zp) in int64, wrapped to int32 (ONNX accumulates
                     in int32);
  qlinear_matmul:    the matmul_integer accumulator times (a_scale * b_scale / y_scale)
                     (that multiplier in the scales' dtype, the product in f64), rint, plus
                     y_zero_point, saturated to y's dtype (ONNX's reference casts without
                     saturating; ftrun saturates, as ONNX Runtime and QuantizeLinear do).
  conv_integer / qlinear_conv: the same with a direct convolution in int64 of the
                     zero-point-shifted operands, zero padding after the shift (ONNX's
                     reference), the i32 bias added to the accumulator, one multiplier per
                     output channel (x_scale * w_scale[m] / y_scale).
Per-axis scales broadcast along their axis; matmul's per-row a scale / zero point along
a's rows, per-column b ones along b's columns.  Every comparison is exact."""
import itertools

import numpy as np

from harness import Case

QR = {"u8": (0, 255), "i8": (-128, 127), "i16": (-32768, 32767), "u16": (0, 65535)}
NPQ = {"u8": np.uint8, "i8": np.int8, "i16": np.int16, "u16": np.uint16}


def along(v, rank, axis):
    """A per-axis parameter shaped to broadcast along axis of a rank-`rank` tensor."""
    v = np.asarray(v)
    if v.size == 1 or rank == 0:
        return v.reshape(())
    shape = [1] * rank
    shape[axis] = v.size
    return v.reshape(shape)


def quant_ref(x, s, zp, qdt, axis=1):
    r = x.ndim
    q = np.rint(x / along(s, r, axis % r if r else 0)).astype(np.float64)
    z = 0 if zp is None else along(zp, r, axis % r if r else 0).astype(np.int64)
    lo, hi = QR[qdt]
    return np.clip(q + z, lo, hi).astype(NPQ[qdt])


def dequant_ref(x, s, zp, axis=1):
    r = x.ndim
    ax = axis % r if r else 0
    d = x.astype(np.float32) - (np.float32(0) if zp is None else along(zp, r, ax).astype(np.float32))
    sb = along(s, r, ax)
    if s.dtype == np.float64:
        return d.astype(np.float64) * sb
    return (d * sb.astype(np.float32)).astype(s.dtype)


def dyn_ref(x):
    mx = np.float32(max(np.float32(0), x.max() if x.size else np.float32(0)))
    mn = np.float32(min(np.float32(0), x.min() if x.size else np.float32(0)))
    s = np.float32(np.float32(1.0) if mx == mn else np.float32(mx - mn)) / np.float32(255)
    z = np.rint(np.clip(np.float32(0) - mn / s, 0, 255))
    y = np.clip(np.rint(x / s) + z, 0, 255).astype(np.uint8)
    return y, np.float32(s), np.uint8(z)


def wrap32(v):
    return (((v.astype(np.int64) + 2 ** 31) % 2 ** 32) - 2 ** 31).astype(np.int32)


def mm_int_ref(a, b, za=None, zb=None):
    A = a.astype(np.int64)
    B = b.astype(np.int64)
    if za is not None:
        A = A - (za.astype(np.int64).reshape(-1, 1) if za.size > 1 else za.astype(np.int64).reshape(()))
    if zb is not None:
        B = B - zb.astype(np.int64).reshape(-1) if zb.size > 1 else B - zb.astype(np.int64).reshape(())
    return wrap32(np.matmul(A, B))


def qlmm_ref(a, sa, za, b, sb, zb, sy, zy):
    acc = mm_int_ref(a, b, za, zb).astype(np.float64)
    asv = sa.reshape(-1, 1) if sa.size > 1 else sa.reshape(())
    bsv = sb.reshape(-1) if sb.size > 1 else sb.reshape(())
    m = ((asv * bsv).astype(sa.dtype) / sy.reshape(())).astype(sa.dtype)
    lo, hi = QR[{np.dtype(np.uint8): "u8", np.dtype(np.int8): "i8"}[zy.dtype]]
    y = np.clip(np.rint(acc * m.astype(np.float64)) + np.int64(zy.reshape(())), lo, hi)
    return y.astype(zy.dtype)


def conv_ref(x, w, strides, pads, dil, group):
    """Direct N-D convolution in int64 (x [N, C, ...], w [M, C/group, ...])."""
    r = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[j], pads[r + j]) for j in range(r)])
    ks = w.shape[2:]
    out = [(xp.shape[2 + j] - ((ks[j] - 1) * dil[j] + 1)) // strides[j] + 1 for j in range(r)]
    M, Cg = w.shape[0], w.shape[1]
    Mg = M // group
    y = np.zeros([x.shape[0], M] + out, np.int64)
    for g in range(group):
        for kp in itertools.product(*[range(k) for k in ks]):
            sl = tuple(slice(kp[j] * dil[j], kp[j] * dil[j] + strides[j] * (out[j] - 1) + 1, strides[j])
                       for j in range(r))
            xs = xp[(slice(None), slice(g * Cg, (g + 1) * Cg)) + sl]
            wk = w[(slice(g * Mg, (g + 1) * Mg), slice(None)) + kp]
            y[:, g * Mg:(g + 1) * Mg] += np.einsum("nc...,mc->nm...", xs, wk)
    return y


def conv_int_ref(x, w, xz, wz, attrs, bias=None):
    r = x.ndim - 2
    X = x.astype(np.int64) - (0 if xz is None else np.int64(xz.reshape(())))
    W = w.astype(np.int64)
    if wz is not None:
        W = W - (wz.astype(np.int64).reshape([-1] + [1] * (w.ndim - 1)) if wz.size > 1 else np.int64(wz.reshape(())))
    y = conv_ref(X, W, attrs.get("strides", [1] * r), attrs.get("pads", [0] * 2 * r), attrs.get("dilations", [1] * r),
                 attrs.get("group", 1))
    if bias is not None:
        y = y + bias.astype(np.int64).reshape([1, -1] + [1] * r)
    return wrap32(y)


def qlconv_ref(x, xs, xz, w, ws, wz, ys, yz, attrs, bias=None):
    acc = conv_int_ref(x, w, xz, wz, attrs, bias).astype(np.float64)
    r = x.ndim - 2
    wsv = ws.reshape([1, -1] + [1] * r) if ws.size > 1 else ws.reshape(())
    m = ((xs.reshape(()) * wsv).astype(xs.dtype) / ys.reshape(())).astype(xs.dtype)
    lo, hi = QR[{np.dtype(np.uint8): "u8", np.dtype(np.int8): "i8"}[yz.dtype]]
    return np.clip(np.rint(acc * m.astype(np.float64)) + np.int64(yz.reshape(())), lo, hi).astype(yz.dtype)


def conv_cases():
    c = []
    rng = np.random.default_rng(19)

    def rand(dt, shape):
        return rand_int(rng, dt, shape)

    geoms = [([1, 3, 7, 7], [4, 3, 3, 3], {}), ([2, 4, 9, 8], [6, 2, 3, 2], {"group": 2, "pads": [1, 0, 2, 1]}),
             ([1, 2, 11, 10], [3, 2, 3, 3], {"strides": [2, 3], "dilations": [2, 1], "pads": [1, 1, 1, 1]}),
             ([2, 3, 15], [5, 3, 4], {"strides": [2], "pads": [3, 1]}),
             ([1, 4, 5, 5], [4, 1, 3, 3], {"group": 4, "pads": [1, 1, 1, 1]})]
    for xd, wd in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)):
        xn, wn = np.dtype(xd).name, np.dtype(wd).name
        for xsh, wsh, attrs in geoms:
            x, w = rand(xd, xsh), rand(wd, wsh)
            tag = "%sx%s %s*%s %s" % (xn, wn, xsh, wsh, attrs)
            c.append(Case("conv_integer %s no zero points" % tag, "conv_integer", [("x", x), ("w", w)],
                          attrs=attrs or None, expect={"y": conv_int_ref(x, w, None, None, attrs)}))
            xz, wz = rand(xd, []), rand(wd, [wsh[0]])
            c.append(Case("conv_integer %s zero points, w per channel" % tag, "conv_integer",
                          [("x", x), ("w", w), ("xz", xz), ("wz", wz)], attrs=attrs or None,
                          expect={"y": conv_int_ref(x, w, xz, wz, attrs)}))
            for sd in (np.float32, np.float16):
                yd = xd
                M = wsh[0]
                ins = [("x", x), ("xs", np.array(rng.uniform(0.005, 0.05), sd)), ("xz", rand(xd, [])), ("w", w),
                       ("ws", rng.uniform(0.005, 0.05, M).astype(sd)), ("wz", rand(wd, [M])),
                       ("ys", np.array(rng.uniform(0.2, 2.0), sd)), ("yz", rand(yd, [])),
                       ("b", rng.integers(-5000, 5000, M).astype(np.int32))]
                vals = [v for _, v in ins]
                c.append(Case("qlinear_conv %s scales %s per channel, bias" % (tag, np.dtype(sd).name),
                              "qlinear_conv", ins, attrs=attrs or None,
                              expect={"y": qlconv_ref(*vals[:8], attrs, vals[8])}))
    # constant i8 weights with zero points 0 and x u8 with zero point 0: the
    # CPU's int8 convolution (cpu/qconv_dnnl.c) where |w| <= 64, its loops for
    # the case with a weight of 100; the fused relu is max(q, y_zero_point)
    for xsh, wsh, attrs in geoms:
        for act, wmax in (("relu", 64), ("none", 64), ("relu", 100)):
            M = wsh[0]
            w = rng.integers(-64, 65, wsh).astype(np.int8)
            if wmax > 64:
                w.reshape(-1)[0] = wmax
            ins = [("x", rand(np.uint8, xsh)), ("xs", np.array(rng.uniform(0.005, 0.05), np.float32)),
                   ("xz", np.array(0, np.uint8)), ("w", w), ("ws", rng.uniform(0.005, 0.05, M).astype(np.float32)),
                   ("wz", np.zeros(M, np.int8)), ("ys", np.array(rng.uniform(0.05, 0.5), np.float32)),
                   ("yz", np.array(rng.integers(20, 120), np.uint8)),
                   ("b", rng.integers(-5000, 5000, M).astype(np.int32))]
            vals = [v for _, v in ins]
            want = qlconv_ref(*vals[:8], attrs, vals[8])
            if act == "relu":
                want = np.maximum(want, vals[7])
            c.append(Case("qlinear_conv u8xi8 %s*%s %s constant weights within %d, activation %s" %
                          (xsh, wsh, attrs, wmax, act), "qlinear_conv", ins, attrs=dict(attrs, activation=act),
                          expect={"y": want}, graph_inputs=["x"], via_flag=("x",)))
    # ONNX's QLinearConv example (per tensor, no bias)
    x = np.array([[255, 174, 162, 25, 203, 168, 58], [15, 59, 237, 95, 129, 0, 64], [56, 242, 153, 221, 168, 12, 166],
                  [232, 178, 186, 195, 237, 162, 237], [188, 39, 124, 77, 80, 102, 43],
                  [127, 230, 21, 83, 41, 40, 134], [255, 154, 92, 141, 42, 148, 247]], np.uint8).reshape(1, 1, 7, 7)
    ins = [("x", x), ("xs", np.array(0.00369204697, np.float32)), ("xz", np.array(132, np.uint8)),
           ("w", np.array([0], np.uint8).reshape(1, 1, 1, 1)), ("ws", np.array([0.00172794575], np.float32)),
           ("wz", np.array([255], np.uint8)), ("ys", np.array(0.00162681262, np.float32)),
           ("yz", np.array(123, np.uint8))]
    c.append(Case("qlinear_conv u8 onnx example", "qlinear_conv", ins,
                  expect={"y": qlconv_ref(*[v for _, v in ins], {})}))
    return c


def rand_int(rng, dt, shape):
    """Integers of dtype dt over its whole range."""
    info = np.iinfo(dt)
    return rng.integers(info.min, int(info.max) + 1, shape).astype(dt)


def ties(dt):
    # exact halves (ties to even), values beyond the range, 0 and -0
    return np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.5, 126.5, 127.5, 128.5, 254.5, 255.5, 256.0,
                     -127.5, -128.5, -129.0, 1e6, -1e6, 0.49999997, 2.5000002, 40000.0, -40000.0], dt)


def quant_cases():
    c = []
    rng = np.random.default_rng(7)
    for xd in (np.float32, np.float64, np.float16):
        xn = np.dtype(xd).name
        x = ties(xd)
        for qdt, zp in (("u8", 0), ("u8", 128), ("i8", 0), ("i8", -3), ("i16", 1000), ("u16", 30000), ("u16", 0)):
            s = np.array(1.0, xd)
            z = np.array(zp, NPQ[qdt])
            c.append(Case("quantize_linear %s->%s ties/saturation zp=%d" % (xn, qdt, zp), "quantize_linear",
                          [("x", x), ("s", s), ("z", z)], expect={"y": quant_ref(x, s, z, qdt)}))
        # a scale that makes x / scale land on halves and near them
        x = (np.arange(-40, 41, dtype=np.float64) * 0.25).astype(xd)
        s = np.array(0.5, xd)
        c.append(Case("quantize_linear %s->i8 scale 0.5 no zero point output_dtype" % xn, "quantize_linear",
                      [("x", x), ("s", s)], attrs={"output_dtype": "i8"}, expect={"y": quant_ref(x, s, None, "i8")}))
        c.append(Case("quantize_linear %s->u8 default dtype" % xn, "quantize_linear",
                      [("x", x), ("s", s)], expect={"y": quant_ref(x, s, None, "u8")}))
    # per axis, every axis of a 3-D tensor, negative axis, random values
    x = (rng.standard_normal((3, 4, 5)) * 40).astype(np.float32)
    for axis in (0, 1, 2, -1, -3):
        n = x.shape[axis]
        s = rng.uniform(0.05, 2.0, n).astype(np.float32)
        for qdt in ("u8", "i8"):
            lo, hi = QR[qdt]
            z = rng.integers(lo, hi + 1, n).astype(NPQ[qdt])
            c.append(Case("quantize_linear f32->%s per axis %d" % (qdt, axis), "quantize_linear",
                          [("x", x), ("s", s), ("z", z)], attrs={"axis": axis},
                          expect={"y": quant_ref(x, s, z, qdt, axis)}))
    # a one-element 1-D scale is per tensor; scalar x; big tensor (threads)
    s1 = np.array([0.25], np.float32)
    z1 = np.array([10], np.uint8)
    c.append(Case("quantize_linear f32->u8 scale [1]", "quantize_linear", [("x", x), ("s", s1), ("z", z1)],
                  expect={"y": quant_ref(x, s1, z1, "u8")}))
    xs = np.array(3.75, np.float32)
    c.append(Case("quantize_linear f32->i8 scalar x", "quantize_linear", [("x", xs), ("s", s1)],
                  attrs={"output_dtype": "i8"}, expect={"y": quant_ref(xs, s1, None, "i8")}))
    xb = (rng.standard_normal((64, 1000)) * 100).astype(np.float32)
    sb = rng.uniform(0.1, 1.0, 1000).astype(np.float32)
    zb = rng.integers(-128, 128, 1000).astype(np.int8)
    c.append(Case("quantize_linear f32->i8 64x1000 per axis 1", "quantize_linear", [("x", xb), ("s", sb), ("z", zb)],
                  expect={"y": quant_ref(xb, sb, zb, "i8", 1)}, args=["--threads", "3"]))
    xe = np.zeros((0, 3), np.float32)
    c.append(Case("quantize_linear f32->u8 empty", "quantize_linear", [("x", xe), ("s", s1)],
                  expect={"y": np.zeros((0, 3), np.uint8)}))
    return c


def dequant_cases():
    c = []
    rng = np.random.default_rng(11)
    for qn, qt in (("u8", np.uint8), ("i8", np.int8), ("i16", np.int16), ("i32", np.int32)):
        info = np.iinfo(qt)
        x = np.concatenate([np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2], np.int64),
                            rng.integers(info.min, int(info.max) + 1, 19)]).astype(qt).reshape(4, 6)
        for sd in (np.float32, np.float64, np.float16):
            s = np.array(0.0375, sd)
            z = np.array(0 if qn == "i32" else rng.integers(info.min, int(info.max) + 1), qt)
            c.append(Case("dequantize_linear %s->%s per tensor" % (qn, np.dtype(sd).name), "dequantize_linear",
                          [("x", x), ("s", s), ("z", z)], expect={"y": dequant_ref(x, s, z)}))
        s = rng.uniform(0.001, 3, 6).astype(np.float32)
        c.append(Case("dequantize_linear %s->float32 per axis -1 no zero point" % qn, "dequantize_linear",
                      [("x", x), ("s", s)], attrs={"axis": -1}, expect={"y": dequant_ref(x, s, None, -1)}))
        if qn != "i32":
            s = rng.uniform(0.001, 3, 4).astype(np.float32)
            z = rng.integers(info.min, int(info.max) + 1, 4).astype(qt)
            c.append(Case("dequantize_linear %s->float32 per axis 0" % qn, "dequantize_linear",
                          [("x", x), ("s", s), ("z", z)], attrs={"axis": 0}, expect={"y": dequant_ref(x, s, z, 0)}))
    # a round trip: quantize then dequantize (two nodes)
    x = (rng.standard_normal((5, 7)) * 3).astype(np.float32)
    s = rng.uniform(0.01, 0.1, 7).astype(np.float32)
    z = rng.integers(-20, 20, 7).astype(np.int8)
    q = quant_ref(x, s, z, "i8", 1)
    nodes = [{"name": "q", "op": "quantize_linear", "inputs": ["x", "s", "z"], "outputs": ["q"], "attrs": {"axis": 1}},
             {"name": "d", "op": "dequantize_linear", "inputs": ["q", "s", "z"], "outputs": ["y"],
              "attrs": {"axis": 1}}]
    c.append(Case("quantize_linear + dequantize_linear round trip i8 per axis", inputs=[("x", x), ("s", s), ("z", z)],
                  nodes=nodes, outputs=["y"], expect={"y": dequant_ref(q, s, z, 1)}))
    return c


def dyn_cases():
    c = []
    rng = np.random.default_rng(13)
    xs = {
        "random": (rng.standard_normal((6, 9)) * 4).astype(np.float32),
        "all positive": rng.uniform(0.5, 9.0, (3, 17)).astype(np.float32),
        "all negative": rng.uniform(-9.0, -0.5, (17,)).astype(np.float32),
        "all zero": np.zeros((4, 4), np.float32),
        "onnx data": np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32),
        "big": (rng.standard_normal((300, 500)) * 10).astype(np.float32),
    }
    for name, x in xs.items():
        y, s, z = dyn_ref(x)
        c.append(Case("dynamic_quantize_linear %s" % name, "dynamic_quantize_linear", [("x", x)],
                      outputs=["y", "scale", "zp"], expect={"y": y, "scale": s, "zp": z},
                      args=["--threads", "3"] if name == "big" else []))
    return c


def mm_cases():
    c = []
    rng = np.random.default_rng(17)

    def rand(dt, shape):
        return rand_int(rng, dt, shape)

    shapes = [([4, 3], [3, 2]), ([7, 33], [33, 5]), ([2, 3, 5, 7], [7, 4]), ([4, 1, 5, 9], [3, 9, 6]),
              ([9], [9, 4]), ([5, 9], [9]), ([0, 5], [5, 3]), ([3, 0], [0, 4]), ([64, 256], [256, 48]),
              ([37, 50], [50, 23]), ([3, 21, 40], [40, 18])]
    for ad, bd in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8), (np.int8, np.uint8)):
        an, bn = np.dtype(ad).name, np.dtype(bd).name
        for sa, sb in shapes:
            a, b = rand(ad, sa), rand(bd, sb)
            c.append(Case("matmul_integer %sx%s %sx%s no zero points" % (an, bn, sa, sb), "matmul_integer",
                          [("a", a), ("b", b)], expect={"y": mm_int_ref(a, b)}))
            za, zb = rand(ad, []), rand(bd, [])
            c.append(Case("matmul_integer %sx%s %sx%s scalar zero points" % (an, bn, sa, sb), "matmul_integer",
                          [("a", a), ("b", b), ("za", za), ("zb", zb)], expect={"y": mm_int_ref(a, b, za, zb)}))
        a, b = rand(ad, [6, 10]), rand(bd, [10, 7])
        za, zb = rand(ad, [6]), rand(bd, [7])
        c.append(Case("matmul_integer %sx%s per-row a / per-column b zero points" % (an, bn), "matmul_integer",
                      [("a", a), ("b", b), ("za", za), ("zb", zb)], expect={"y": mm_int_ref(a, b, za, zb)}))
        c.append(Case("matmul_integer %sx%s only b zero point" % (an, bn), "matmul_integer",
                      [("a", a), ("b", b), None, ("zb", zb)], expect={"y": mm_int_ref(a, b, None, zb)}))
    # int32 accumulation wraps: 255 * 255 * 70000 > 2^32
    a = np.full((2, 70000), 255, np.uint8)
    b = np.full((70000, 3), 255, np.uint8)
    b[:, 1] = 0
    b[::7, 2] = 3
    za = np.array(0, np.uint8)
    zb = np.array(0, np.uint8)
    c.append(Case("matmul_integer u8 K=70000 wraps in int32", "matmul_integer", [("a", a), ("b", b), ("za", za),
                                                                                  ("zb", zb)],
                  expect={"y": mm_int_ref(a, b, za, zb)}))
    a, b = rand(np.int8, [128, 512]), rand(np.int8, [512, 96])
    c.append(Case("matmul_integer i8 128x512x96 threads", "matmul_integer", [("a", a), ("b", b)],
                  expect={"y": mm_int_ref(a, b)}, args=["--threads", "3"]))
    # qlinear_matmul, ONNX's own example values first
    a = np.array([[208, 236, 0, 238], [3, 214, 255, 29]], np.uint8)
    b = np.array([[152, 51, 244], [60, 26, 255], [0, 127, 246], [127, 254, 247]], np.uint8)
    ins = [("a", a), ("as", np.array([0.0066], np.float32)), ("az", np.array([113], np.uint8)), ("b", b),
           ("bs", np.array([0.00705], np.float32)), ("bz", np.array([114], np.uint8)),
           ("ys", np.array([0.0107], np.float32)), ("yz", np.array([118], np.uint8))]
    c.append(Case("qlinear_matmul u8 onnx example", "qlinear_matmul", ins,
                  expect={"y": qlmm_ref(*[v for _, v in ins])}))
    for ad, bd, yd in ((np.uint8, np.uint8, np.uint8), (np.int8, np.int8, np.int8), (np.uint8, np.int8, np.int8),
                       (np.int8, np.uint8, np.uint8)):
        for sd in (np.float32, np.float16, np.float64):
            for per in (False, True):
                sa, sb = ([2, 3, 6, 10], [10, 7]) if not per else ([6, 10], [10, 7])
                a, b = rand(ad, sa), rand(bd, sb)
                M, N = sa[-2], sb[-1]
                asc = rng.uniform(0.001, 0.05, M if per else 1).astype(sd)
                bsc = rng.uniform(0.001, 0.05, N if per else 1).astype(sd)
                ysc = np.array(rng.uniform(0.05, 0.5), sd)
                az, bz = rand(ad, [M] if per else []), rand(bd, [N] if per else [])
                yz = rand(yd, [])
                ins = [("a", a), ("as", asc), ("az", az), ("b", b), ("bs", bsc), ("bz", bz), ("ys", ysc), ("yz", yz)]
                c.append(Case("qlinear_matmul %sx%s->%s scales %s %s" % (
                    np.dtype(ad).name, np.dtype(bd).name, np.dtype(yd).name, np.dtype(sd).name,
                    "per row/column" if per else "per tensor batched"), "qlinear_matmul", ins,
                    expect={"y": qlmm_ref(*[v for _, v in ins])}))
    return c


def error_cases():
    f = np.zeros((2, 3), np.float32)
    u = np.zeros((2, 3), np.uint8)
    s1 = np.array(0.5, np.float32)
    bad = [
        ("quantize_linear", "scale length differs from the axis", [("x", f), ("s", np.ones(4, np.float32))], {},
         r"'s' \[4\] must be a scalar or 1-D of length 3 \(dim 1 of x\)"),
        ("quantize_linear", "2-D scale", [("x", f), ("s", np.ones((2, 3), np.float32))], {}, r"must be a scalar or 1-D"),
        ("quantize_linear", "zero point shape differs from scale",
         [("x", f), ("s", np.ones(3, np.float32)), ("z", np.zeros(2, np.uint8))], {},
         r"zero point 'z' \[2\] must have the shape of scale 's' \[3\]"),
        ("quantize_linear", "scale dtype differs from x", [("x", f), ("s", np.array(0.5))], {},
         r"scale 's' has dtype f64"),
        ("quantize_linear", "zero point dtype against output_dtype", [("x", f), ("s", s1), ("z", np.array(1, np.int8))],
         {"output_dtype": "u8"}, r"zero point 'z' has dtype i8 but attribute 'output_dtype' is u8"),
        ("quantize_linear", "output_dtype f32", [("x", f), ("s", s1)], {"output_dtype": "f32"},
         r"cannot quantize to f32"),
        ("quantize_linear", "integer x", [("x", u), ("s", s1)], {}, r"u8"),
        ("dequantize_linear", "float x", [("x", f), ("s", s1)], {}, r"f32"),
        ("dequantize_linear", "integer scale", [("x", u), ("s", np.array(2, np.int32))], {},
         r"scale 's' has dtype i32 \(expected f16, bf16, f32 or f64\)"),
        ("dequantize_linear", "zero point dtype differs from x", [("x", u), ("s", s1), ("z", np.array(1, np.int8))], {},
         r"zero point 'z' has dtype i8"),
        ("dequantize_linear", "per-axis scale on axis 0", [("x", u), ("s", np.ones(3, np.float32))], {"axis": 0},
         r"length 2 \(dim 0 of x\)"),
        ("dynamic_quantize_linear", "f64 x", [("x", f.astype(np.float64))], {}, r"f64"),
        ("matmul_integer", "inner dims", [("a", u), ("b", u)], {}, r"inner dimensions do not agree"),
        ("matmul_integer", "a zero point length", [("a", u), ("b", u.T.copy()), ("za", np.zeros(3, np.uint8))], {},
         r"'za' \[3\] must be a scalar or 1-D of length 2 \(the rows of a\)"),
        ("matmul_integer", "b zero point dtype", [("a", u), ("b", u.T.copy()), None, ("zb", np.zeros(2, np.int8))], {},
         r"b_zero_point 'zb' has dtype i8"),
        ("matmul_integer", "i16 b", [("a", u), ("b", u.T.astype(np.int16))], {}, r"b 'b' has dtype i16"),
        ("qlinear_matmul", "y zero point i16",
         [("a", u), ("as", s1), ("az", np.array(0, np.uint8)), ("b", u.T.copy()), ("bs", s1),
          ("bz", np.array(0, np.uint8)), ("ys", s1), ("yz", np.array(0, np.int16))], {},
         r"y_zero_point 'yz' has dtype i16"),
        ("qlinear_matmul", "per-tensor y scale",
         [("a", u), ("as", s1), ("az", np.array(0, np.uint8)), ("b", u.T.copy()), ("bs", s1),
          ("bz", np.array(0, np.uint8)), ("ys", np.ones(2, np.float32)), ("yz", np.array(0, np.uint8))], {},
         r"'ys' \[2\] must be a scalar"),
        ("conv_integer", "i16 w", [("x", np.zeros((1, 2, 4, 4), np.uint8)), ("w", np.zeros((3, 2, 2, 2), np.int16))],
         {}, r"w 'w' has dtype i16"),
        ("conv_integer", "w zero point length",
         [("x", np.zeros((1, 2, 4, 4), np.uint8)), ("w", np.zeros((3, 2, 2, 2), np.uint8)), None,
          ("wz", np.zeros(2, np.uint8))], {}, r"'wz' \[2\] must be a scalar or 1-D of length 3"),
        ("conv_integer", "channels", [("x", np.zeros((1, 2, 4, 4), np.uint8)), ("w", np.zeros((3, 1, 2, 2), np.uint8))],
         {}, r"input channels per group"),
        ("qlinear_conv", "f32 bias",
         [("x", np.zeros((1, 2, 4, 4), np.uint8)), ("xs", s1), ("xz", np.array(0, np.uint8)),
          ("w", np.zeros((3, 2, 2, 2), np.uint8)), ("ws", s1), ("wz", np.array(0, np.uint8)), ("ys", s1),
          ("yz", np.array(0, np.uint8)), ("b", np.zeros(3, np.float32))], {}, r"bias 'b' has dtype f32 \(expected i32\)"),
        ("qlinear_matmul", "scale dtypes differ",
         [("a", u), ("as", s1), ("az", np.array(0, np.uint8)), ("b", u.T.copy()), ("bs", np.array(0.5)),
          ("bz", np.array(0, np.uint8)), ("ys", s1), ("yz", np.array(0, np.uint8))], {},
         r"b_scale 'bs' has dtype f64"),
    ]
    return [Case("%s invalid: %s: exit 3" % (op, label), op, inputs=ins, attrs=attrs or None, exit_code=3,
                 outputs=["y", "scale", "zp"] if op == "dynamic_quantize_linear" else None,
                 stderr_re=[r"node 'n0' \(%s\)" % op, pat]) for op, label, ins, attrs, pat in bad]


def cases():
    return quant_cases() + dequant_cases() + dyn_cases() + mm_cases() + conv_cases() + error_cases()
