"""Edge cases of the newer ops that their own case files leave out: the 16-bit float
dtypes (f16, bf16) of prelu, lp_normalization, mean_variance_normalization,
reduce_log_sum, mod with fmod=1, cumprod, hardmax, one_hot (with i16 and bf16
indices too), the data-movement and geometry ops (gather_nd, scatter_nd,
scatter_elements, trilu, eye_like, center_crop_pad, reverse_sequence, col2im,
affine_grid, roi_align) and the int8 ops' float sides (quantize_linear from bf16,
dequantize_linear to bf16); empty tensors through the recurrent layers, the int8
ops, the losses and stft; and out-of-range indices, whose message must name the
node, the index value and the valid range.

Oracles: the same independent ones as the ops' own case files (NumPy written from the
ONNX definitions, PyTorch where NumPy has none), evaluated in float64 on the exact
16-bit input values and rounded once to the 16-bit type (cases_half.store).  ftrun
computes 16-bit types in f32 and rounds once, so the tolerance is one 16-bit ulp plus
the f32 error of the computation (cases_half.tol)."""
import numpy as np
import torch
import torch.nn.functional as F

import cases_geom as geom
import cases_index as index
from cases_bitwise_norm import lp_expect, mvn_expect
from cases_half import store, tol as half_tol
from cases_quant import dequant_ref, quant_ref
from cases_rnn import rnn_case
from harness import EXACT, Case, rng_for

HALF = ("f16", "bf16")


def f64(x):
    return np.asarray(x, dtype=np.float64)


def smooth(dt, rng, shape, lo=-3.0, hi=3.0):
    return store(dt, rng.uniform(lo, hi, shape))


# ---------------------------------------------------------------- 16-bit float maths

def half_math_cases():
    c = []
    for dt in HALF:
        # prelu: slope broadcast as ONNX (unidirectionally to x), empty x, scalar slope
        for sx, ss in (((2, 3, 4, 5), (3, 1, 1)), ((8, 16), (16,)), ((4, 5), ()), ((2, 3, 4), (1, 4)), ((0, 3), (3,))):
            name = "prelu %s x%s slope%s" % (dt, list(sx), list(ss))
            rng = rng_for(name)
            x, s = smooth(dt, rng, sx), smooth(dt, rng, ss, -0.5, 1.5)
            y = store(dt, np.where(f64(x) < 0, f64(x) * f64(s), f64(x)))
            c.append(Case(name, "prelu", [("x", x, dt), ("slope", s, dt)], expect={"y": y}, tol=half_tol(dt, 1e-30)))
        for shape, axis in (((16, 300), -1), ((2, 3, 4, 5), 1), ((0, 5), -1)):
            for p in (1, 2):
                name = "lp_normalization %s %s axis=%d p=%d" % (dt, list(shape), axis, p)
                x = smooth(dt, rng_for(name), shape)
                y = lp_expect(x, axis, p)
                c.append(Case(name, "lp_normalization", [("x", x, dt)], attrs={"axis": axis, "p": p},
                              expect={"y": store(dt, y)}, tol=half_tol(dt, np.abs(y) + 1e-30, shape[axis])))
        for shape, axes in (((2, 3, 4, 5), None), ((6, 200), [-1])):
            name = "mean_variance_normalization %s %s axes=%s" % (dt, list(shape), axes)
            x = smooth(dt, rng_for(name), shape, 2.0, 6.0)
            y = mvn_expect(x, [0, 2, 3] if axes is None else axes)
            c.append(Case(name, "mean_variance_normalization", [("x", x, dt)], attrs={"axes": axes} if axes else None,
                          expect={"y": store(dt, y)}, tol=half_tol(dt, np.abs(y) + 8, 200)))
        for shape, axes, keep in (((8, 500), [-1], 0), ((3, 4, 5), [0, -1], 1), ((0, 4), [1], 0)):
            name = "reduce_log_sum %s %s axes=%s keepdims=%d" % (dt, list(shape), axes, keep)
            x = smooth(dt, rng_for(name), shape, 0.05, 2.0)
            with np.errstate(divide="ignore"):
                y = np.log(np.sum(f64(x), axis=tuple(axes), keepdims=bool(keep)))
            c.append(Case(name, "reduce_log_sum", [("x", x, dt)], attrs={"axes": axes, "keepdims": keep},
                          expect={"y": store(dt, y)}, tol=half_tol(dt, 1.0, 500)))
        # mod with fmod=1: C's fmod (sign of the dividend); exact, so one rounding at most
        for sa, sb in (((6, 1, 5), (4, 1)), ((37,), (37,)), ((0, 3), (3,))):
            name = "mod fmod=1 %s %s&%s" % (dt, list(sa), list(sb))
            rng = rng_for(name)
            a = smooth(dt, rng, sa, -50, 50)
            b = smooth(dt, rng, sb, 0.5, 7) * np.where(rng.random(sb) < 0.5, -1, 1).astype(np.float32)
            b = b.astype(a.dtype)
            c.append(Case(name, "mod", [("a", a, dt), ("b", b, dt)], attrs={"fmod": 1},
                          expect={"y": store(dt, np.fmod(f64(a), f64(b)))}, tol=half_tol(dt, 1e-30)))
        name = "cumprod %s 5x7 axis=-1 exclusive=1" % dt
        rng = rng_for(name)
        x = store(dt, rng.uniform(0.6, 1.5, (5, 7)) * rng.choice([-1.0, 1.0], (5, 7)))
        cp = index.cumprod(f64(x), 1, 1, 0)
        c.append(Case(name, "cumprod", [("x", x, dt)], attrs={"axis": -1, "exclusive": 1},
                      expect={"y": store(dt, cp)}, tol=half_tol(dt, np.abs(cp), 49)))
        name = "hardmax %s 4x6 axis=-1 ties" % dt
        x = store(dt, np.round(rng_for(name).uniform(-3, 3, (4, 6))))
        c.append(Case(name, "hardmax", [("x", x, dt)], attrs={"axis": -1},
                      expect={"y": index.hardmax(x, 1)}))
        name = "one_hot values %s indices i64 2x3 depth=5 axis=-2" % dt
        rng = rng_for(name)
        ind = rng.integers(-7, 7, (2, 3)).astype(np.int64)
        vals = smooth(dt, rng, (2,))
        c.append(Case(name, "one_hot", [("indices", ind), ("values", vals, dt)], attrs={"depth": 5, "axis": -2},
                      expect={"y": index.one_hot(ind, 5, -2, vals)}))
    # the index dtypes cases_index.py leaves out: i16 and bf16 (fractions truncated, NaN and
    # out-of-range values give "off" everywhere)
    name = "one_hot values f32 indices i16 3x4 depth=6 axis=1"
    rng = rng_for(name)
    ind = rng.integers(-8, 8, (3, 4)).astype(np.int16)
    vals = np.array([-1.5, 2.25], np.float32)
    c.append(Case(name, "one_hot", [("indices", ind), ("values", vals)], attrs={"depth": 6, "axis": 1},
                  expect={"y": index.one_hot(ind, 6, 1, vals)}))
    name = "one_hot values i32 indices bf16 7 depth=4 axis=0"
    ind = store("bf16", [0.0, 1.5, -1.0, -4.5, 3.75, 4.0, float("nan")])
    vals = np.array([0, 7], np.int32)
    c.append(Case(name, "one_hot", [("indices", ind, "bf16"), ("values", vals)], attrs={"depth": 4, "axis": 0},
                  expect={"y": index.one_hot(ind, 4, 0, vals)}))
    return c


# ---------------------------------------------------------------- 16-bit data movement and geometry

def scatter_rounded(dt, data, updates, targets, red):
    """Scatter with a reduction in the 16-bit type: each combination of two values is
    one operation rounded once (man/ftrun-graph.5, NUMERICS), in the order of the
    indices, as ONNX's reference does in the tensor's own dtype.  targets yields, in
    row-major index order, (position in the updates, position in the data)."""
    out = f64(data).copy()
    u = f64(updates)
    for p, t in targets:
        out[t] = store(dt, index.combine(np.asarray(out[t]), np.asarray(u[p]), red))
    return store(dt, out)


def nd_targets(ind):
    for q in np.ndindex(*ind.shape[:-1]):
        yield q, tuple(int(v) for v in ind[q])


def el_targets(ind, axis):
    for p in np.ndindex(*ind.shape):
        t = list(p)
        t[axis] = int(ind[p])
        yield p, tuple(t)

def half_movement_cases():
    c = []
    for dt in HALF:
        name = "gather_nd %s batch_dims=1 3x4x5 idx 3x2x1" % dt
        rng = rng_for(name)
        data = smooth(dt, rng, (3, 4, 5))
        ind = index.nd_indices(rng, (3, 4, 5), (3, 2, 1), 1)
        c.append(Case(name, "gather_nd", [("data", data, dt), ("indices", ind)], attrs={"batch_dims": 1},
                      expect={"y": index.gather_nd(data, ind, 1)}))
        for red in ("none", "add", "max"):
            name = "scatter_nd %s reduction=%s 4x5x2 idx 7x2" % (dt, red)
            rng = rng_for(name)
            data, upd = smooth(dt, rng, (4, 5, 2)), smooth(dt, rng, (7, 2))
            ind = index.nd_indices(rng, (4, 5, 2), (7, 2), 0)
            want = scatter_rounded(dt, data, upd, nd_targets(ind), red)
            c.append(Case(name, "scatter_nd", [("data", data, dt), ("indices", ind), ("updates", upd, dt)],
                          attrs={"reduction": red}, expect={"y": want}, tol=half_tol(dt, 1e-30)))
            name = "scatter_elements %s reduction=%s axis=-1 3x6 idx 3x4" % (dt, red)
            rng = rng_for(name)
            data, upd = smooth(dt, rng, (3, 6)), smooth(dt, rng, (3, 4))
            ind = rng.integers(-6, 6, (3, 4)).astype(np.int64)
            want = scatter_rounded(dt, data, upd, el_targets(ind, 1), red)
            c.append(Case(name, "scatter_elements", [("data", data, dt), ("indices", ind), ("updates", upd, dt)],
                          attrs={"axis": -1, "reduction": red}, expect={"y": want}, tol=half_tol(dt, 1e-30)))
        name = "trilu %s 2x4x5 upper=0 k=-1" % dt
        x = smooth(dt, rng_for(name), (2, 4, 5))
        c.append(Case(name, "trilu", [("x", x, dt)], attrs={"upper": 0, "k": -1}, expect={"y": np.tril(x, -1)}))
        name = "eye_like %s 3x5 k=1" % dt
        c.append(Case(name, "eye_like", [("x", smooth(dt, rng_for(name), (3, 5)), dt)], attrs={"k": 1},
                      expect={"y": np.eye(3, 5, 1, dtype=store(dt, 0).dtype)}))
        name = "center_crop_pad %s 5x4x3 shape=[3,6] axes=[0,-2]" % dt
        x = smooth(dt, rng_for(name), (5, 4, 3))
        c.append(Case(name, "center_crop_pad", [("x", x, dt)], attrs={"shape": [3, 6], "axes": [0, -2]},
                      expect={"y": geom.center_crop_pad(x, [3, 6], [0, 1])}))
        name = "reverse_sequence %s 4x3x2 batch_axis=1 time_axis=0" % dt
        x = smooth(dt, rng_for(name), (4, 3, 2))
        lens = np.array([4, 0, 2], np.int64)
        c.append(Case(name, "reverse_sequence", [("x", x, dt), ("sequence_lens", lens)],
                      attrs={"batch_axis": 1, "time_axis": 0}, expect={"y": geom.reverse_sequence(x, lens, 1, 0)}))
        name = "col2im %s 2-D image 5x6 block 2x3 pads strides" % dt
        img, blk, dil, pads, strides = [5, 6], [2, 3], [1, 1], [1, 0, 0, 1], [2, 1]
        nb = [(img[i] + pads[i] + pads[2 + i] - (dil[i] * (blk[i] - 1) + 1)) // strides[i] + 1 for i in range(2)]
        x = smooth(dt, rng_for(name), (2, 3 * 6, nb[0] * nb[1]))
        y = geom.col2im(x, img, blk, dil, pads, strides)
        c.append(Case(name, "col2im", [("x", x, dt)],
                      attrs={"image_shape": img, "block_shape": blk, "pads": pads, "strides": strides},
                      expect={"y": store(dt, y)}, tol=half_tol(dt, np.abs(y) + 1e-30, 6)))
        for size, align in (([2, 3, 4, 5], 0), ([1, 2, 3, 2, 4], 1)):
            name = "affine_grid %s size=%s align_corners=%d theta of 16-bit values" % (dt, size, align)
            r = len(size) - 2
            th = smooth(dt, rng_for(name), (size[0], r, r + 1), -2, 2)
            ref = F.affine_grid(torch.from_numpy(f64(th)), size, align_corners=bool(align)).numpy()
            c.append(Case(name, "affine_grid", [("theta", th, dt)], attrs={"size": size, "align_corners": align},
                          expect={"y": store(dt, ref)}, tol=half_tol(dt, 8.0, 4)))
        for mode in ("avg", "max"):
            name = "roi_align %s %s half_pixel 2x3x8x9 rois=3 out=3x2 ratio=2" % (dt, mode)
            rng = rng_for(name)
            x = smooth(dt, rng, (2, 3, 8, 9), -2, 2)
            rois = store(dt, np.array([[0.5, 1.0, 6.25, 7.75], [2.0, 0.25, 8.5, 4.0], [0, 0, 1.5, 1.25]]))
            bidx = np.array([1, 0, 1], np.int64)
            if mode == "avg":
                import torchvision
                boxes = torch.cat([torch.from_numpy(f64(bidx))[:, None], torch.from_numpy(f64(rois))], 1)
                ref = torchvision.ops.roi_align(torch.from_numpy(f64(x)), boxes, (3, 2), 1.0, 2, aligned=True).numpy()
            else:
                ref = geom.roi_align_max(x, rois, bidx, 3, 2, 2, 1.0, True)
            c.append(Case(name, "roi_align", [("x", x, dt), ("rois", rois, dt), ("batch_indices", bidx)],
                          attrs={"mode": mode, "output_height": 3, "output_width": 2, "sampling_ratio": 2},
                          expect={"y": store(dt, ref)}, tol=half_tol(dt, 4.0, 16)))
    return c


# ---------------------------------------------------------------- int8 ops' bf16 sides

def half_quant_cases():
    c = []
    # bf16 x: the halves land on ties (to even) and beyond the range (saturation);
    # x / 0.5 and x / 1 are exact, so the f32 values give ONNX's result
    x = store("bf16", [-300.0, -129.0, -128.5, -2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, 126.5, 127.5, 254.0, 255.5, 1e6])
    for qdt, zp in (("u8", 3), ("i8", -2)):
        for s in (1.0, 0.5):
            sv = store("bf16", s)
            z = np.array(zp, np.uint8 if qdt == "u8" else np.int8)
            c.append(Case("quantize_linear bf16->%s scale %g zp=%d ties/saturation" % (qdt, s, zp), "quantize_linear",
                          [("x", x, "bf16"), ("s", sv, "bf16"), ("z", z)],
                          expect={"y": quant_ref(f64(x), f64(sv), z, qdt)}))
    xs = store("bf16", np.random.default_rng(3).uniform(-20, 20, (3, 4)))
    ss = store("bf16", [0.25, 0.5, 2.0])
    c.append(Case("quantize_linear bf16->i8 per axis -2", "quantize_linear", [("x", xs, "bf16"), ("s", ss, "bf16")],
                  attrs={"axis": -2, "output_dtype": "i8"}, expect={"y": quant_ref(f64(xs), f64(ss), None, "i8", 0)}))
    # dequantize to bf16: (x - z) * s, exact in f32 for 8-bit x and a bf16 scale, then one rounding
    rng = np.random.default_rng(5)
    for qn, qt in (("u8", np.uint8), ("i8", np.int8)):
        info = np.iinfo(qt)
        x = rng.integers(info.min, int(info.max) + 1, (4, 6)).astype(qt)
        s = store("bf16", 0.0371)
        z = np.array(7, qt)
        want = store("bf16", (f64(x) - 7) * f64(s))
        c.append(Case("dequantize_linear %s->bf16 per tensor" % qn, "dequantize_linear",
                      [("x", x), ("s", s, "bf16"), ("z", z)], expect={"y": want}, tol=half_tol("bf16", 1e-30)))
        s = store("bf16", rng.uniform(0.01, 2, 6))
        want = store("bf16", f64(x) * f64(s).reshape(1, 6))
        c.append(Case("dequantize_linear %s->bf16 per axis -1" % qn, "dequantize_linear",
                      [("x", x), ("s", s, "bf16")], attrs={"axis": -1}, expect={"y": want},
                      tol=half_tol("bf16", 1e-30)))
    return c


# ---------------------------------------------------------------- empty tensors

def empty_cases():
    c = []
    for op in ("lstm", "gru", "rnn"):
        c.append(rnn_case("%s f32 empty batch (B=0) bidirectional" % op, op, "f32", 5, 0, 4, 6,
                          direction="bidirectional"))
        # no time steps: Y is [0, D, B, H] and Y_h (Y_c) the initial state
        c.append(rnn_case("%s f64 empty sequence (T=0), initial state" % op, op, "f64", 0, 3, 4, 6, init=True))
        c.append(rnn_case("%s f32 empty sequence (T=0), layout 1, no initial state" % op, op, "f32", 0, 2, 3, 5,
                          layout=1))
    u8 = np.uint8
    x = np.zeros((0, 3), u8)
    s = np.array(0.5, np.float32)
    c.append(Case("dequantize_linear u8->f32 empty", "dequantize_linear", [("x", x), ("s", s)],
                  expect={"y": dequant_ref(x, s, None)}))
    # ONNX: max(0, max x) and min(0, min x) of no values are both 0: scale 1/255, zero point 0
    c.append(Case("dynamic_quantize_linear empty", "dynamic_quantize_linear", [("x", np.zeros((0, 4), np.float32))],
                  outputs=["y", "scale", "zp"],
                  expect={"y": np.zeros((0, 4), u8), "scale": np.float32(1) / np.float32(255), "zp": u8(0)}))
    c.append(Case("conv_integer u8 empty batch", "conv_integer",
                  [("x", np.zeros((0, 2, 5, 5), u8)), ("w", np.ones((3, 2, 3, 3), u8))],
                  expect={"y": np.zeros((0, 3, 3, 3), np.int32)}))
    q = [("a", np.zeros((0, 4), u8)), ("as", s), ("az", u8(1)), ("b", np.ones((4, 3), u8)), ("bs", s), ("bz", u8(2)),
         ("ys", s), ("yz", u8(3))]
    c.append(Case("qlinear_matmul u8 empty rows", "qlinear_matmul", q, expect={"y": np.zeros((0, 3), u8)}))
    q = [("x", np.zeros((0, 2, 4, 4), u8)), ("xs", s), ("xz", u8(1)), ("w", np.ones((3, 2, 1, 1), u8)), ("ws", s),
         ("wz", u8(0)), ("ys", s), ("yz", u8(3))]
    c.append(Case("qlinear_conv u8 empty batch", "qlinear_conv", q, expect={"y": np.zeros((0, 3, 4, 4), u8)}))
    # losses of an empty batch: none -> [0], sum -> 0, mean -> 0/0 = NaN (PyTorch's cross_entropy too)
    for dt in ("f32", "f64"):
        npdt = np.float32 if dt == "f32" else np.float64
        x, t = np.zeros((0, 3), npdt), np.zeros((0,), np.int64)
        for red, want in (("none", np.zeros((0,), npdt)), ("sum", npdt(0)), ("mean", npdt("nan"))):
            ref = F.cross_entropy(torch.from_numpy(x), torch.from_numpy(t), reduction=red).numpy()
            assert np.array_equal(ref, want, equal_nan=True)
            c.append(Case("softmax_cross_entropy_loss %s empty batch reduction=%s" % (dt, red),
                          "softmax_cross_entropy_loss", [("x", x), ("target", t)], attrs={"reduction": red},
                          outputs=["y", "log_prob"], expect={"y": want, "log_prob": np.zeros((0, 3), npdt)}))
    c.append(Case("stft f32 empty batch", "stft", [("signal", np.zeros((0, 16, 1), np.float32)),
                                                   ("window", np.hanning(4).astype(np.float32))],
                  attrs={"frame_step": 2}, expect={"y": np.zeros((0, 7, 3, 2), np.float32)}))
    return c


# ---------------------------------------------------------------- out-of-range indices

def index_message(v, pos, flat, axis, size):
    """The CPU's message (the words of gather's: position in the indices, axis, size,
    valid range) or the CUDA backend's shorter one (the range, the flat element of the
    indices): either names the value and the valid range."""
    lo, hi = -size, size - 1
    cpu = r"index %d at position \[%s\] of indices 'indices' is out of range for axis %d of data 'data' " \
          r"\(size %d; valid indices are %d\.\.%d\)" % (v, ",".join(map(str, pos)), axis, size, lo, hi)
    cuda = r"index %d is out of range \[%d, %d\] \(at element %d of the indices\)" % (v, lo, hi, flat)
    return "(%s|%s)" % (cpu, cuda)


def index_error_cases():
    """Exit 3, no result file, and a message naming the node, the bad index and the
    range it should have been in (index_message)."""
    c = []
    data = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    for idt in (np.int32, np.int64):
        it = "i32" if idt == np.int32 else "i64"
        specs = [("gather_nd", {}, [("indices", np.array([[0, 1], [1, 3]], idt))], index_message(3, [1, 1], 3, 1, 3)),
                 ("gather_nd", {"batch_dims": 1}, [("indices", np.array([[[2, -5]], [[0, 0]]], idt))],
                  index_message(-5, [0, 0, 1], 1, 2, 4))]
        for red in ("none", "add", "mul", "max", "min"):
            specs.append(("scatter_nd", {"reduction": red},
                          [("indices", np.array([[0], [-3]], idt)), ("updates", np.zeros((2, 3, 4), np.float32))],
                          index_message(-3, [1, 0], 1, 0, 2)))
            specs.append(("scatter_elements", {"axis": -2, "reduction": red},
                          [("indices", np.array([[[0, 1]], [[3, 0]]], idt)),
                           ("updates", np.zeros((2, 1, 2), np.float32))],
                          index_message(3, [1, 0, 0], 2, 1, 3)))
        for op, attrs, extra, pat in specs:
            name = "%s %s indices %s out of range: exit 3 naming node, value and range" % (
                op, it, " ".join("%s=%s" % kv for kv in sorted(attrs.items())) or "-")
            c.append(Case(name, op, attrs=attrs or None, inputs=[("data", data)] + extra, exit_code=3,
                          node_name="lookup", stderr_re=[r"node 'lookup' \(%s\)" % op, pat]))
    # an empty indices tensor checks nothing and changes nothing
    c.append(Case("scatter_elements f32 axis=0 empty indices, data unchanged", "scatter_elements",
                  [("data", data), ("indices", np.zeros((0, 3, 4), np.int64)),
                   ("updates", np.zeros((0, 3, 4), np.float32))], attrs={"axis": 0}, expect={"y": data}, tol=EXACT))
    return c


def cases():
    return half_math_cases() + half_movement_cases() + half_quant_cases() + empty_cases() + index_error_cases()
