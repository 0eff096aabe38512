"""Models and expectations for dynamic_shapes.bats: Resize whose scales (and
tf_crop_and_resize's roi) and Pad whose constant value and axes are computed
at run time (man/ftrun.1, RUN-TIME SHAPES).

  dynamic_params.py models DIR            writes the models and inputs into DIR
  dynamic_params.py check DIR X OUT       checks OUT (ftrun's outputs for input X)

Every run-time value follows from n, the count of the positive entries of x
[6] (NonZero, Shape, Gather: known only at run time): the scales of the last
two axes of r [1, 1, 4, 5] are (n + 1) / 2 and (n + 2) / 3 (n = 0: both
shrink; 3 and 6: both grow, not by integers), the roi's starts and ends move
with n, Pad's value is max(x) (f32) and n (i64), opset 19's Pad pads axis
-1 - (n mod 2), and opset 19's Resize takes its scales, roi and sizes for the
axes it names (sizes with keep_aspect_ratio_policy). The expectations come from NumPy: np.pad, and ONNX's
reference resize (onnx/reference/ops/op_resize.py) as ported to NumPy in
tests/numeric/cases_pool.py (resize_ref), with the scales and roi computed
in float32 as the model computes them; never from ftrun's output.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "numeric"))

XS = {"x3": [1, -2, 3, 0, 5, -1], "x0": [-1] * 6, "x1": [0, 0, 0, 0, 2, 0], "x6": [6, 2, 4, 1, 5, 3]}

# name: (mode, coordinate_transformation_mode, nearest_mode, extra attributes)
RESIZES = {
    "nn_hp": ("nearest", "half_pixel", "round_prefer_floor", {}),
    "nn_asym": ("nearest", "asymmetric", "floor", {}),
    "nn_tf": ("nearest", "tf_half_pixel_for_nn", "round_prefer_ceil", {}),
    "lin_ac": ("linear", "align_corners", None, {}),
    "lin_hp": ("linear", "half_pixel", None, {}),
    "lin_php": ("linear", "pytorch_half_pixel", None, {}),
    "cub_hp": ("cubic", "half_pixel", None, {"cubic_coeff_a": -0.5}),
    "cub_asym": ("cubic", "asymmetric", None, {"exclude_outside": 1}),
    "crop": ("linear", "tf_crop_and_resize", None, {"extrapolation_value": 7.0}),
    "crop_c": ("nearest", "tf_crop_and_resize", "round_prefer_floor", {"extrapolation_value": -1.0}),
}
CROP_C = [0, 0, 0.25, 0.1, 1, 1, 0.8, 1.2]


def f32(v):
    return np.float32(v)


def run_values(n):
    """The scales and roi as the model computes them (float32 arithmetic)."""
    nf = f32(n)
    sh = (nf + f32(1)) / f32(2)
    sw = (nf + f32(2)) / f32(3)
    scales = np.array([1, 1, sh, sw], np.float32)
    roi = np.array([0, 0, f32(0.05) * nf, 0.1, 1, 1, 0.9, f32(1) - f32(0.02) * nf], np.float32)
    return scales, roi


def models(d):
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh

    def C(name, a):
        return h.make_node("Constant", [], [name], value=nh.from_array(np.array(a), name))

    head = [C("zero", f32(0)), C("one", f32(1)), C("two", f32(2)), C("three", f32(3)), C("i1", np.array([1], np.int64)),
            C("ones2", np.array([1, 1], np.float32)), C("zeros2", np.array([0, 0], np.float32)),
            C("c05", np.array([0.05], np.float32)), C("c02", np.array([0.02], np.float32)),
            C("c01", np.array([0.1], np.float32)), C("c09", np.array([0.9], np.float32)),
            C("one1", np.array([1], np.float32)), C("roi_c", np.array(CROP_C, np.float32)),
            h.make_node("Greater", ["x", "zero"], ["m"]), h.make_node("NonZero", ["m"], ["nz"]),
            h.make_node("Shape", ["nz"], ["nzs"]), h.make_node("Gather", ["nzs", "i1"], ["n1"], axis=0),
            h.make_node("Cast", ["n1"], ["nf"], to=TP.FLOAT),
            h.make_node("Add", ["nf", "one"], ["a1"]), h.make_node("Div", ["a1", "two"], ["sh"]),
            h.make_node("Add", ["nf", "two"], ["a2"]), h.make_node("Div", ["a2", "three"], ["sw"]),
            h.make_node("Concat", ["ones2", "sh", "sw"], ["scales"], axis=0),
            h.make_node("Mul", ["c05", "nf"], ["r0"]), h.make_node("Mul", ["c02", "nf"], ["r1"]),
            h.make_node("Sub", ["one1", "r1"], ["r2"]),
            h.make_node("Concat", ["zeros2", "r0", "c01", "ones2", "c09", "r2"], ["roi"], axis=0)]

    def save(nodes, ins, outs, opset, path):
        g = h.make_graph(nodes, "rtparams", ins, [h.make_tensor_value_info(o, t, [o + str(i) for i in range(
            2 if o.startswith("p") else 4)]) for o, t in outs])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8
        if opset <= 17:  # the installed checker may not know opset 18's Pad (axes) yet
            onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, path))

    xin = h.make_tensor_value_info("x", TP.FLOAT, [6])
    rin = h.make_tensor_value_info("r", TP.FLOAT, [1, 1, 4, 5])
    din = h.make_tensor_value_info("d", TP.FLOAT, [2, 3])
    diin = h.make_tensor_value_info("di", TP.INT64, [2, 3])

    # opset 13: every Resize of RESIZES on the run-time scales; Pad's value max(x) and n
    nodes = list(head)
    for name, (mode, ct, nm, extra) in RESIZES.items():
        attrs = dict(mode=mode, coordinate_transformation_mode=ct, **extra)
        if nm:
            attrs["nearest_mode"] = nm
        roi = "roi" if name == "crop" else "roi_c" if name == "crop_c" else ""
        nodes.append(h.make_node("Resize", ["r", roi, "scales"], [name], **attrs))
    nodes += [C("pads", np.array([1, 0, 0, 2], np.int64)), h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
              h.make_node("Pad", ["d", "pads", "mx"], ["pv"], mode="constant"),
              C("i0", np.array(1, np.int64)), h.make_node("Gather", ["nzs", "i0"], ["n0"], axis=0),
              h.make_node("Pad", ["di", "pads", "n0"], ["pi"], mode="constant")]
    outs = [(k, TP.FLOAT) for k in RESIZES] + [("pv", TP.FLOAT), ("pi", TP.INT64)]
    save(nodes, [xin, rin, din, diin], outs, 13, "p13.onnx")

    # opset 10: Resize(r, scales), nearest (asymmetric, floor) and linear
    nodes = head + [h.make_node("Resize", ["r", "scales"], ["u_nn"], mode="nearest"),
                    h.make_node("Resize", ["r", "scales"], ["u_lin"], mode="linear")]
    save(nodes, [xin, rin], [("u_nn", TP.FLOAT), ("u_lin", TP.FLOAT)], 10, "p10.onnx")

    # opset 19: half_pixel_symmetric; Pad with run-time axes -1 - (n mod 2) and value max(x)
    nodes = head + [h.make_node("Resize", ["r", "", "scales"], ["sym"], mode="linear",
                                coordinate_transformation_mode="half_pixel_symmetric"),
                    C("two_i", np.array([2], np.int64)), C("m1", np.array([-1], np.int64)),
                    h.make_node("Mod", ["n1", "two_i"], ["par"]), h.make_node("Sub", ["m1", "par"], ["axes"]),
                    C("pads2", np.array([2, 1], np.int64)), h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0),
                    h.make_node("Pad", ["d", "pads2", "mx", "axes"], ["pa"], mode="constant"),
                    h.make_node("Pad", ["d", "pads2", "", "axes"], ["pe"], mode="edge"),
                    # opset 18's axes: scales and roi for axes [3, 2], constant scales with a run-time roi
                    # for axes [2, 3], and sizes [2n + 2, 99] and [1, n + 1] with the aspect ratio kept
                    h.make_node("Concat", ["sw", "sh"], ["sc2"], axis=0),
                    h.make_node("Concat", ["c01", "r0", "r2", "c09"], ["roi2"], axis=0),
                    h.make_node("Concat", ["r0", "c01", "c09", "r2"], ["roi3"], axis=0),
                    C("sc3", np.array([1.5, 0.75], np.float32)), C("two64", np.array([2], np.int64)),
                    C("n99", np.array([99], np.int64)), C("one64", np.array([1], np.int64)),
                    h.make_node("Mul", ["n1", "two64"], ["n2"]), h.make_node("Add", ["n2", "two64"], ["n22"]),
                    h.make_node("Concat", ["n22", "n99"], ["sz2"], axis=0),
                    h.make_node("Add", ["n1", "one64"], ["np1"]),
                    h.make_node("Concat", ["one64", "np1"], ["sz3"], axis=0),
                    h.make_node("Resize", ["r", "", "sc2"], ["ax_sc"], mode="linear", axes=[3, 2]),
                    h.make_node("Resize", ["r", "roi2", "sc2"], ["ax_roi"], mode="linear", axes=[3, 2],
                                coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0),
                    h.make_node("Resize", ["r", "roi3", "sc3"], ["ax_roi_c"], mode="cubic", axes=[2, 3],
                                coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0),
                    h.make_node("Resize", ["r", "", "", "sz2"], ["ax_keep"], mode="linear", axes=[2, 3],
                                keep_aspect_ratio_policy="not_larger"),
                    h.make_node("Resize", ["r", "", "", "sz3"], ["ax_keep_s"], mode="nearest", axes=[-2, -1],
                                keep_aspect_ratio_policy="not_smaller")]
    save(nodes, [xin, rin, din], [(k, TP.FLOAT) for k in ("sym", "pa", "pe", "ax_sc", "ax_roi", "ax_roi_c", "ax_keep",
                                                          "ax_keep_s")], 19, "p19.onnx")

    for name, v in XS.items():
        np.save(os.path.join(d, name + ".npy"), np.array(v, np.float32))
    rng = np.random.default_rng(7)
    np.save(os.path.join(d, "r.npy"), rng.uniform(-4, 4, (1, 1, 4, 5)).astype(np.float32))
    np.save(os.path.join(d, "d.npy"), np.arange(6, dtype=np.float32).reshape(2, 3) + 1)
    np.save(os.path.join(d, "di.npy"), np.arange(6, dtype=np.int64).reshape(2, 3) - 2)


def expect(d, xname):
    from cases_pool import resize_ref

    x = np.array(XS[xname], np.float32)
    n = int((x > 0).sum())
    r = np.load(os.path.join(d, "r.npy"))
    dd = np.load(os.path.join(d, "d.npy"))
    di = np.load(os.path.join(d, "di.npy"))
    scales, roi = run_values(n)
    sc = [float(s) for s in scales]
    shape = [int(np.floor(r.shape[i] * sc[i])) for i in range(4)]  # ONNX: floor(input size * scale)

    def rs(mode, ct, nm, extra, roi_v=None, shape=shape, sc=sc):
        y, _ = resize_ref(r, shape, sc, mode, ct, nm or "round_prefer_floor", extra.get("cubic_coeff_a", -0.75),
                          extra.get("exclude_outside", 0), None if roi_v is None else [float(v) for v in roi_v],
                          extra.get("extrapolation_value", 0.0))
        return y.astype(np.float32)

    want = {}
    for name, (mode, ct, nm, extra) in RESIZES.items():
        want[name] = rs(mode, ct, nm, extra, roi if name == "crop" else np.array(CROP_C, np.float32)
                        if name == "crop_c" else None)
    want["pv"] = np.pad(dd, ((1, 0), (0, 2)), constant_values=x.max())
    want["pi"] = np.pad(di, ((1, 0), (0, 2)), constant_values=n)
    want["u_nn"] = rs("nearest", "asymmetric", "floor", {})
    want["u_lin"] = rs("linear", "asymmetric", None, {})
    want["sym"] = rs("linear", "half_pixel_symmetric", None, {})
    ax = 1 - n % 2  # -1 - (n mod 2) of rank 2
    pw = [(0, 0), (0, 0)]
    pw[ax] = (2, 1)
    want["pa"] = np.pad(dd, pw, constant_values=x.max())
    want["pe"] = np.pad(dd, pw, mode="edge")
    want["ax_sc"] = want["lin_hp"]
    want["ax_roi"] = want["crop"]
    sc3 = [1, 1, 1.5, 0.75]
    want["ax_roi_c"] = rs("cubic", "tf_crop_and_resize", None, {"extrapolation_value": 7.0}, roi,
                          [int(np.floor(r.shape[i] * sc3[i])) for i in range(4)], sc3)
    # keep_aspect_ratio_policy (ONNX's reference): one scale, the least (not_larger) or the most (not_smaller)
    # of size / input size over the axes; the sizes that scale gives rounded half up, the coordinates mapped
    # with that scale
    for name, sizes, pick, mode in (("ax_keep", [2 * n + 2, 99], min, "linear"),
                                    ("ax_keep_s", [1, n + 1], max, "nearest")):
        k = pick(sizes[0] / 4, sizes[1] / 5)
        want[name] = rs(mode, "half_pixel", None, {}, None, [1, 1, int(k * 4 + 0.5), int(k * 5 + 0.5)], [1, 1, k, k])
    return want


def check(d, xname, out):
    bad = []
    for name, w in expect(d, xname).items():
        g = np.load(os.path.join(out, name + ".npy"))
        exact = w.dtype != np.float32 or name.startswith(("nn", "u_nn", "crop_c", "p", "ax_keep_s"))
        ok = g.shape == w.shape and g.dtype == w.dtype and (
            (g == w).all() if exact else np.allclose(g, w, rtol=1e-5, atol=1e-5))
        if not ok:
            bad.append((name, g.shape, w.shape, g, w))
    assert not bad, bad
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "models":
        models(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
