"""Parity cases of the windowed ops at their geometry extremes (family "extreme"): conv,
conv_transpose, conv_integer, qlinear_conv, deform_conv, max/average/lp pools, resize,
grid_sample, roi_align, col2im, lrn and space_to_depth with pads larger than the input
(output positions, whole tiles and blocks of them, that see only padding), pads on
one side only, strides and dilations past the kernel and the input (up to the limits,
2^40 for the convs and 2^31 for the pools), kernels as large as the padded input, 1x1
and 1xN inputs, groups 1 / 2 / depthwise, odd batches, each
run on the device and on the CPU by tests/cuda/parity.py, which calls
gen_extremes(parity) with itself as p. The same geometries are checked against
NumPy / PyTorch by tests/numeric/cases_extremes.py.

Every float config runs in f32 and, round robin, a few in f16, bf16 and f64; the
tolerance classes are those of the ops' own parity cases (accum for sums, exact for
max_pool, nearest resize and grid_sample, and the integer convs). Windows of padding
only give the documented values on both backends (max -inf, average NaN or 0, lp 0),
which the comparison requires to match exactly (NaN meets NaN). The geometries ONNX
gives no output are refused at inference, on either device (exit 3)."""


# (label, x shape, w shape, attrs, bias)
CONVS = [
    ("1d/group2,leading_pads124", [2, 4, 6], [4, 2, 3], {"group": 2, "pads": [124, 0]}, True),
    ("1d/group2,leading_pads1000", [2, 4, 6], [4, 2, 3], {"group": 2, "pads": [1000, 0]}, True),
    ("1d/group2,trailing_pads300", [2, 4, 6], [4, 2, 3], {"group": 2, "pads": [0, 300]}, False),
    ("1d/pads_past_input,odd_batch", [3, 5, 7], [2, 5, 4], {"pads": [150, 3]}, True),
    ("1d/depthwise,leading_pads130", [1, 3, 5], [3, 1, 3], {"group": 3, "pads": [130, 0]}, True),
    ("1d/stride100,pads200", [1, 3, 5], [2, 3, 2], {"strides": [100], "pads": [200, 0]}, True),
    ("1d/dilation_past_input", [1, 2, 4], [3, 2, 3], {"dilations": [5], "pads": [5, 5]}, True),
    ("1d/kernel=padded_input", [1, 2, 5], [3, 2, 9], {"pads": [2, 2]}, True),
    ("1d/one_element,pads300", [1, 1, 1], [1, 1, 1], {"pads": [300, 300]}, True),
    ("1d/same_upper,kernel_past_input", [1, 2, 2], [2, 2, 7], {"auto_pad": "SAME_LOWER"}, True),
    ("2d/pads_past_input", [1, 2, 3, 4], [3, 2, 3, 3], {"pads": [124, 0, 0, 124]}, True),
    ("2d/group2,leading_pads130", [2, 4, 3, 3], [4, 2, 3, 3], {"group": 2, "pads": [130, 0, 0, 0]}, True),
    ("2d/strides_past_input", [1, 3, 4, 5], [2, 3, 2, 2], {"strides": [9, 11], "pads": [3, 4, 5, 6]}, True),
    ("2d/dilations_past_input", [1, 2, 3, 3], [2, 2, 2, 2], {"dilations": [4, 5], "pads": [2, 3, 2, 3]}, False),
    ("2d/kernel=padded_input,batch2", [2, 3, 3, 4], [4, 3, 5, 6], {"pads": [1, 1, 1, 1]}, True),
    ("2d/depthwise3x3,pads3,1x1_input", [1, 2, 1, 1], [2, 1, 3, 3], {"group": 2, "pads": [3, 3, 3, 3]}, True),
    ("2d/depthwise5x5,stride2,pads_past", [1, 2, 1, 3], [2, 1, 5, 5], {"group": 2, "strides": [2, 2],
                                                                       "pads": [6, 5, 5, 6]}, True),
    ("2d/depthwise7x7,wide_pads", [1, 2, 2, 2], [2, 1, 7, 7], {"group": 2, "pads": [7, 30, 7, 30]}, True),
    ("2d/depthwise3x3,row_of_pads", [1, 2, 2, 3], [2, 1, 3, 3], {"group": 2, "pads": [1, 50, 1, 50]}, False),
    ("2d/grouped,odd_batch", [3, 4, 2, 3], [6, 2, 2, 3], {"group": 2, "pads": [4, 0, 0, 5], "strides": [3, 1]}, True),
    ("3d/leading_pads130", [1, 2, 2, 3, 2], [2, 2, 2, 2, 2], {"pads": [130, 0, 0, 0, 0, 0]}, True),
    ("3d/depthwise,pads_one_side", [1, 3, 2, 2, 2], [3, 1, 2, 2, 2], {"group": 3, "strides": [3, 1, 2],
                                                                       "pads": [2, 0, 3, 0, 2, 4]}, True),
    ("3d/kernel=padded_input", [1, 2, 2, 2, 2], [2, 2, 4, 4, 4], {"pads": [1] * 6}, False),
    ("1d/kernel80=padded_input", [1, 2, 10], [3, 2, 80], {"pads": [35, 35]}, True),
    ("2d/kernel_of_70_columns", [1, 2, 3, 5], [2, 2, 2, 70], {"pads": [0, 33, 1, 33], "strides": [1, 3]}, False),
    # attributes near the 2^40 limit (index arithmetic far past 32 bits)
    ("1d/stride,pads=2^40", [1, 2, 3], [2, 2, 2], {"strides": [2 ** 40], "pads": [2 ** 40, 0]}, True),
    ("1d/dilation,pads=2^39", [1, 2, 2], [3, 2, 2], {"dilations": [2 ** 39], "pads": [2 ** 39, 0]}, True),
    ("2d/depthwise,strides=2^40", [1, 2, 2, 2], [2, 1, 1, 1], {"group": 2, "strides": [2 ** 40, 2 ** 40],
                                                               "pads": [2 ** 40 - 1, 0, 0, 2 ** 40]}, True),
]
CONVTS = [
    ("1d/pads_leave_one", [1, 2, 3], [2, 3, 5], {"pads": [3, 3]}, True),
    ("1d/group2,stride40,pads120", [2, 4, 6], [4, 2, 3], {"group": 2, "strides": [40], "pads": [120, 0]}, True),
    ("1d/output_padding_past_stride", [1, 2, 2], [2, 3, 2], {"strides": [2], "output_padding": [5]}, True),
    ("1d/depthwise,output_padding4", [1, 3, 2], [3, 1, 3], {"group": 3, "strides": [2], "output_padding": [4],
                                                           "pads": [1, 0]}, False),
    ("1d/output_shape_far_beyond", [1, 2, 2], [2, 3, 2], {"strides": [2], "output_shape": [40]}, True),
    ("1d/output_shape1", [1, 2, 5], [2, 3, 3], {"strides": [2], "output_shape": [1]}, True),
    ("2d/depthwise,strides_past", [1, 4, 3, 2], [4, 1, 3, 3], {"group": 4, "strides": [5, 7], "pads": [0, 4, 3, 0],
                                                              "output_padding": [6, 1]}, True),
    ("2d/grouped,dilations_past", [2, 4, 2, 2], [4, 3, 2, 2], {"group": 2, "dilations": [5, 3],
                                                               "pads": [1, 0, 0, 2]}, True),
    ("2d/1x1_input,odd_batch", [3, 2, 1, 1], [2, 3, 2, 3], {"strides": [4, 4], "output_padding": [3, 2]}, False),
    ("3d/output_shape_beyond", [1, 3, 2, 1, 2], [3, 1, 2, 2, 2], {"group": 3, "strides": [2, 2, 2],
                                                                  "output_shape": [9, 5, 7]}, True),
    ("1d/kernel70,pads30", [1, 2, 3], [2, 2, 70], {"pads": [30, 30]}, True),
    ("1d/stride=2^40", [1, 1, 2], [1, 2, 1], {"strides": [2 ** 40], "pads": [2 ** 40 - 1, 0]}, True),
    ("1d/group2,dilation=2^39", [1, 2, 2], [2, 1, 2], {"group": 2, "dilations": [2 ** 39], "pads": [2 ** 39, 0]},
     False),
]
# (label, x shape, kernel_shape, strides, attrs)
POOLS = [
    ("1d/pads5_kernel2", [1, 2, 3], [2], [1], {"pads": [5, 5]}),
    ("1d/stride3,pads7,ceil", [1, 2, 3], [2], [3], {"pads": [7, 4], "ceil_mode": 1}),
    ("2d/pads50,one_side", [2, 1, 2, 2], [2, 2], [1, 1], {"pads": [50, 0, 0, 50]}),
    ("2d/strides_past_input", [1, 2, 5, 5], [2, 2], [7, 9], {"pads": [1, 1, 1, 1]}),
    ("1d/dilation_past_input", [1, 2, 3], [2], [1], {"dilations": [5], "pads": [3, 3]}),
    ("2d/kernel=padded_input", [1, 2, 3, 4], [5, 6], [1, 1], {"pads": [1, 1, 1, 1]}),
    ("3d/pads_past_input,dilation", [1, 2, 2, 1, 3], [3, 2, 4], [4, 4, 4], {"dilations": [1, 3, 1],
                                                                            "pads": [1, 2, 0, 0, 2, 1],
                                                                            "ceil_mode": 1}),
    ("2d/same_upper,kernel_past_input", [1, 2, 2, 3], [5, 4], [1, 2], {"auto_pad": "SAME_UPPER"}),
    ("2d/1x1_input,ceil", [2, 3, 1, 1], [3, 3], [2, 2], {"pads": [2, 2, 2, 2], "ceil_mode": 1}),
    ("2d/row_of_4096_padded", [1, 1, 2, 2], [1, 2], [1, 1], {"pads": [0, 4000, 0, 0]}),
    ("1d/stride,pads=2^31", [1, 2, 3], [2], [2 ** 31], {"pads": [2 ** 31, 0]}),
    ("1d/dilation,pads=2^31", [1, 2, 2], [2], [1], {"dilations": [2 ** 31], "pads": [2 ** 31, 0]}),
]


def gen_extremes(p):
    sh, single, case, accum, EXACT = p.sh, p.single, p.case, p.accum, p.EXACT
    # conv, conv_transpose
    for op, cfgs in (("conv", CONVS), ("conv_transpose", CONVTS)):
        for j, dt in enumerate(p.FLOATS):
            for label, xs, ws, attrs, bias in (cfgs if dt == "f32" else p.rot(cfgs, 5 * j, 5)):
                group = attrs.get("group", 1)
                m = ws[0] if op == "conv" else ws[1] * group
                k = (xs[1] // group) * p.prod(ws[2:])

                def mk(g, dt=dt, xs=xs, ws=ws, bias=bias, m=m):
                    return [g.x(dt, xs), g.x(dt, ws, -0.5, 0.5)] + ([g.x(dt, [m])] if bias else [])
                single("extreme/%s/%s/%s/%s%s" % (op, dt, label, sh(xs), ",bias" if bias else ""), op, mk,
                       attrs=attrs, tol=accum(dt, k, 0.5))
    # conv_integer, qlinear_conv (exact)
    for label, xs, ws, attrs, _ in CONVS[:3] + CONVS[5:8] + CONVS[15:17] + CONVS[21:22] + CONVS[-3:]:
        for xd, wd in (("u8", "i8"), ("i8", "u8")):
            single("extreme/conv_integer/%sx%s/%s/%s/zero_points" % (xd, wd, label, sh(xs)), "conv_integer",
                   lambda g, xd=xd, wd=wd, xs=xs, ws=ws: [g.x(xd, xs), g.x(wd, ws), g.x(xd, []), g.x(wd, [ws[0]])],
                   attrs=attrs)

            def mkq(g, xd=xd, wd=wd, xs=xs, ws=ws):
                M = ws[0]
                return [g.x(xd, xs), g.x("f32", [], 0.005, 0.05), g.x(xd, []), g.x(wd, ws),
                        g.x("f32", [M], 0.005, 0.05), g.x(wd, [M]), g.x("f32", [], 0.2, 2.0), g.x(xd, []),
                        g.x("i32", [M], ilo=-5000, ihi=5000)]
            single("extreme/qlinear_conv/%sx%s/%s/%s/bias" % (xd, wd, label, sh(xs)), "qlinear_conv", mkq, attrs=attrs)
    # deform_conv: pads past the input, strides past it, a 1x1 input
    deforms = [("pads_past_input", [1, 2, 2, 2], [2, 2, 3, 3], {"pads": [4, 4, 4, 4]}),
               ("strides_past_input", [1, 2, 3, 3], [2, 2, 2, 2], {"pads": [2, 2, 2, 2], "strides": [5, 5]}),
               ("depthwise,1x1_input", [1, 3, 1, 1], [3, 1, 3, 3], {"group": 3, "offset_group": 3,
                                                                   "pads": [2, 2, 2, 2]})]
    for j, dt in enumerate(p.FLOATS):
        for label, xs, ws, attrs in (deforms if dt == "f32" else p.rot(deforms, j, 1)):
            s, pp, og = attrs.get("strides", [1, 1]), attrs["pads"], attrs.get("offset_group", 1)
            oh = (xs[2] + pp[0] + pp[2] - ws[2]) // s[0] + 1
            ow = (xs[3] + pp[1] + pp[3] - ws[3]) // s[1] + 1
            kk = ws[2] * ws[3]

            def mkd(g, dt=dt, xs=xs, ws=ws, og=og, oh=oh, ow=ow, kk=kk):
                return [g.x(dt, xs), g.x(dt, ws, -0.5, 0.5), g.x(dt, [xs[0], og * 2 * kk, oh, ow], -2.5, 2.5),
                        g.x(dt, [ws[0]]), g.x(dt, [xs[0], og * kk, oh, ow], 0.0, 1.0)]
            single("extreme/deform_conv/%s/%s/%s" % (dt, label, sh(xs)), "deform_conv", mkd, attrs=attrs,
                   tol=accum(dt, ws[1] * kk, 0.5))
    # pools: windows of padding only, strides and dilations past the input
    for j, dt in enumerate(p.FLOATS + ("i8", "u8")):
        for label, xs, k, s, extra in (POOLS if dt == "f32" else p.rot(POOLS, 3 * j, 3)):
            attrs = dict(extra, kernel_shape=k, strides=s)
            single("extreme/max_pool/%s/%s/%s" % (dt, label, sh(xs)), "max_pool",
                   lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=attrs)
            if dt in ("i8", "u8"):
                continue
            for cip in (0, 1):
                single("extreme/average_pool/%s/%s,count_pad=%d/%s" % (dt, label, cip, sh(xs)), "average_pool",
                       lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=dict(attrs, count_include_pad=cip),
                       tol=accum(dt, p.prod(k)))
            single("extreme/lp_pool/%s/%s/%s" % (dt, label, sh(xs)), "lp_pool", lambda g, dt=dt, xs=xs: [g.x(dt, xs)],
                   attrs=dict(attrs, p=3 if j % 2 else 2), tol=accum(dt, p.prod(k), 3.0))
    # resize: 1x1 and 1xN inputs through every mode and coordinate transformation, scale extremes
    combos = [(m, c) for m in ("nearest", "linear", "cubic") for c in p.COORDS]
    shapes = [([1, 1, 1, 1], {"sizes": [1, 1, 3, 4]}), ([1, 2, 1, 5], {"scales": [1.0, 1.0, 2.5, 0.5]}),
              ([1, 1, 1, 6], {"sizes": [1, 1, 1, 1]}), ([1, 1, 2, 2], {"scales": [1.0, 1.0, 37.5, 50.0]})]
    for j, dt in enumerate(p.FLOATS):
        for k, (mode, coord) in enumerate(combos if dt == "f32" else p.rot(combos, 5 * j, 5)):
            for xs, size in (shapes if dt == "f32" else shapes[k % 4:k % 4 + 1]):
                attrs = dict(size, mode=mode, coordinate_transformation_mode=coord)
                if mode == "nearest":
                    attrs["nearest_mode"] = p.NEAREST[k % 4]
                (key, vals), = size.items()
                single("extreme/resize/%s/%s/%s,%s/%s=%s" % (dt, sh(xs), mode, coord, key,
                                                             ",".join("%g" % v for v in vals)),
                       "resize", lambda g, dt=dt, xs=xs: [g.x(dt, xs)], attrs=attrs,
                       tol=EXACT if mode == "nearest" else accum(dt, 16 if mode == "cubic" else 1, 2.0))
    # rank 8, every axis resized from 1 or 2 cells
    for dt in p.FLOATS:
        for mode in ("nearest", "linear"):
            single("extreme/resize/%s/[2,1,2,1,2,1,2,3]/%s,rank8/sizes=3,2,3,2,3,2,3,2" % (dt, mode), "resize",
                   lambda g, dt=dt: [g.x(dt, [2, 1, 2, 1, 2, 1, 2, 3])],
                   attrs={"sizes": [3, 2, 3, 2, 3, 2, 3, 2], "mode": mode},
                   tol=EXACT if mode == "nearest" else accum(dt, 256, 1.0))
    # grid_sample: 1x1 and 1xN inputs, coordinates far outside
    for j, dt in enumerate(p.FLOATS):
        grids = [(m, pad, a) for m in ("bilinear", "nearest", "bicubic") for pad in ("zeros", "border", "reflection")
                 for a in (0, 1)]
        for k, (mode, pad, ac) in enumerate(grids if dt == "f32" else p.rot(grids, 5 * j, 4)):
            gshapes = (([1, 2, 1, 1], [3, 4]), ([1, 2, 1, 5], [2, 3]))
            for xs, os_ in (gshapes if dt == "f32" else gshapes[k % 2:k % 2 + 1]):
                cells = {"nearest": 1, "bilinear": 4, "bicubic": 16}[mode]
                single("extreme/grid_sample/%s/%s->%s/%s,%s,align_corners=%d" % (dt, sh(xs), sh(os_), mode, pad, ac),
                       "grid_sample",
                       lambda g, dt=dt, xs=xs, os_=os_: [g.x(dt, xs), g.x(dt, [xs[0]] + os_ + [2], -4, 4)],
                       attrs={"mode": mode, "padding_mode": pad, "align_corners": ac},
                       tol=EXACT if mode == "nearest" else accum(dt, cells, 2.0))
    # roi_align: rois far outside, of size 0, larger than the image; 1x1 and Nx1 images
    far = [[-10, -10, 20, 20], [2, 2, 2, 2], [50, 50, 60, 60], [-30, -5, -20, 0.5], [0.2, 0.1, 0.3, 0.4]]
    ra = [([1, 2, 1, 1], 2, 3, 2, 1.0, "half_pixel", "avg"), ([2, 1, 2, 3], 7, 7, 0, 1.0, "output_half_pixel", "avg"),
          ([1, 2, 1, 1], 3, 2, 0, 1.0, "half_pixel", "max"), ([1, 2, 3, 1], 1, 2, 4, 0.5, "output_half_pixel", "max")]
    for j, dt in enumerate(p.FLOATS):
        for k, (xs, oh, ow, ratio, scale, ct, mode) in enumerate(ra if dt == "f32" else p.rot(ra, j, 1)):
            def mkr(g, dt=dt, xs=xs):
                return [g.x(dt, xs), g.arr(dt, far), g.arr("i64", g.rng.integers(0, xs[0], [len(far)]))]
            single("extreme/roi_align/%s/%s,out=%dx%d,ratio=%d,scale=%g,%s,%s" % (dt, sh(xs), oh, ow, ratio, scale, ct,
                                                                                 mode), "roi_align", mkr,
                   attrs={"mode": mode, "output_height": oh, "output_width": ow, "sampling_ratio": ratio,
                          "spatial_scale": scale, "coordinate_transformation_mode": ct}, tol=accum(dt, 64))
    # col2im: pads past the image, blocks larger than it, strides past it
    c2i = [(1, 2, [2, 2], [2, 2], [1, 1], [3, 3, 3, 3], [1, 1]), (2, 1, [1, 1], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1]),
           (1, 2, [3, 4], [1, 2], [1, 1], [0, 1, 0, 2], [5, 7]), (1, 2, [3], [2], [4], [2, 2], [1]),
           (1, 2, [3], [2], [2 ** 31], [2 ** 31, 0], [1]),
           (2, 1, [2, 3], [1, 2], [1, 1], [2 ** 31, 0, 2 ** 31, 1], [2 ** 31, 1])]
    for j, dt in enumerate(p.FLOATS):
        for n, ch, img, blk, dil, pads, st in (c2i if dt == "f32" else p.rot(c2i, j, 1)):
            r = len(img)
            nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
            kk, L = p.prod(blk), p.prod(nb)
            single("extreme/col2im/%s/N=%d,C=%d,image=%s,block=%s,dil=%s,pads=%s,strides=%s" % (
                dt, n, ch, sh(img), sh(blk), sh(dil), sh(pads), sh(st)), "col2im",
                lambda g, dt=dt, s=[n, ch * kk, L]: [g.x(dt, s)],
                attrs={"image_shape": img, "block_shape": blk, "dilations": dil, "pads": pads, "strides": st},
                tol=accum(dt, kk))
    # lrn windows wider than the channels; space_to_depth with the block as large as the image
    for dt in p.FLOATS:
        single("extreme/lrn/%s/[2,3,2]/size=1001" % dt, "lrn", lambda g, dt=dt: [g.x(dt, [2, 3, 2], -2, 2)],
               attrs={"size": 1001, "alpha": 0.5}, tol=accum(dt, 3, 4.0))
    for dt in ("f32", "u8", "bool"):
        single("extreme/space_to_depth/%s/[2,3,4,4]/blocksize=4" % dt, "space_to_depth",
               lambda g, dt=dt: [g.x(dt, [2, 3, 4, 4])], attrs={"blocksize": 4})
    # refused at inference on either device
    case("extreme/conv/f32/pads_2^40_output_too_large",
         lambda g: [g.op("conv", [g.x("f32", [1, 1, 1]), g.x("f32", [1, 1, 1])], {"pads": [2 ** 40, 2 ** 40]})],
         rc=3, err="too large")
    case("extreme/conv_transpose/f32/pads_past_the_full_result",
         lambda g: [g.op("conv_transpose", [g.x("f32", [1, 2, 3]), g.x("f32", [2, 2, 3])], {"pads": [1000, 0]})],
         rc=3, err="would be -995")
    case("extreme/max_pool/f32/window_past_the_padded_input",
         lambda g: [g.op("max_pool", [g.x("f32", [1, 1, 3])], {"kernel_shape": [4], "ceil_mode": 1})],
         rc=3, err="larger than the padded input")
