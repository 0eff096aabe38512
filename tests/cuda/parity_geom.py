"""Parity cases of the geometry ops (family "geom"): eye_like, reverse_sequence,
center_crop_pad, col2im, affine_grid and roi_align, each run on the device and on the
CPU by tests/cuda/parity.py, which calls gen_geom(parity) with itself as p.

eye_like, reverse_sequence and center_crop_pad move or write elements and are exact.
The float ops are exact too where the device repeats the CPU's operations one by one
(src/cuda/geom.cu rounds each add, multiply and divide on its own, never fusing them,
in src/cpu/geom.c's order), but are held to the accum class so that a libm or
compiler difference in a last bit does not count as a failure."""
import numpy as np


def gen_geom(p):
    sh, single, case = p.sh, p.single, p.case
    eye = [([3, 5], 0, None), ([6, 4], -2, "i32"), ([64, 300], 7, "f16"), ([0, 4], 0, None), ([5, 5], 2 ** 62, "bool"),
           ([1000, 3], -1, "f64")]
    for j, dt in enumerate(p.ANY):
        for k, (s, kk, odt) in enumerate(p.pick(eye, dt, j, 1)):
            a = {"k": kk}
            if odt:
                a["dtype"] = odt
            single("geom/eye_like/%s/%s,k=%d,dtype=%s" % (dt, sh(s), kk, odt or "-"), "eye_like",
                   lambda g, dt=dt, s=s: [g.x(dt, s)], attrs=a)
    rs = [([6, 4], 1, 0), ([4, 6], 0, 1), ([3, 5, 7], -1, 1), ([7, 300, 5], 1, 0), ([0, 3], 1, 0)]
    for j, dt in enumerate(p.ANY):
        for k, (s, b, t) in enumerate(p.pick(rs, dt, j, 1)):
            ldt = ("i64", "i32")[(j + k) % 2]

            def mk(g, dt=dt, s=s, b=b, t=t, ldt=ldt):
                T, nb = s[t % len(s)], s[b % len(s)]
                return [g.x(dt, s), g.arr(ldt, g.rng.integers(0, T + 1, [nb]))]
            single("geom/reverse_sequence/%s/%s,batch_axis=%d,time_axis=%d,%s" % (dt, sh(s), b, t, ldt),
                   "reverse_sequence", mk, attrs={"batch_axis": b, "time_axis": t})
    ccp = [([5, 4, 3], [3, 7], [0, 1]), ([9, 8], [4, 11], None), ([2, 300, 30], [301, 17], [-2, -1]), ([0, 4], [2, 2], None)]
    for j, dt in enumerate(p.ANY):
        for k, (s, want, axes) in enumerate(p.pick(ccp, dt, j, 1)):
            a = {"shape": want}
            if axes:
                a["axes"] = axes
            single("geom/center_crop_pad/%s/%s,shape=%s,axes=%s" % (dt, sh(s), sh(want), sh(axes or [])),
                   "center_crop_pad", lambda g, dt=dt, s=s: [g.x(dt, s)], attrs=a)
    # (N, C, image, block, dilations, pads, strides)
    c2i = [(2, 3, [4, 5], [2, 2], [1, 1], [0, 0, 0, 0], [1, 1]), (1, 2, [5, 6], [2, 3], [2, 1], [1, 0, 1, 0], [1, 2]),
           (2, 4, [33, 40], [3, 3], [1, 1], [1, 1, 1, 1], [2, 2]), (1, 2, [9], [3], [2], [1, 2], [2]),
           (1, 1, [3, 4, 4], [2, 2, 3], [1, 1, 1], [0, 1, 0, 0, 0, 1], [1, 2, 1]), (0, 2, [4, 4], [2, 2], [1, 1],
                                                                                  [0, 0, 0, 0], [2, 2])]
    for j, dt in enumerate(p.FLOATS):
        for k, (n, ch, img, blk, dil, pads, st) in enumerate(p.pick(c2i, dt, j, 2)):
            r = len(img)
            nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
            kk, L = int(np.prod(blk)), int(np.prod(nb))
            single("geom/col2im/%s/N=%d,C=%d,image=%s,block=%s,dil=%s,pads=%s,strides=%s" % (
                dt, n, ch, sh(img), sh(blk), sh(dil), sh(pads), sh(st)), "col2im",
                lambda g, dt=dt, s=[n, ch * kk, L]: [g.x(dt, s)],
                attrs={"image_shape": img, "block_shape": blk, "dilations": dil, "pads": pads, "strides": st},
                tol=p.accum(dt, kk))
    ag = [([2, 3, 4, 5], 0), ([2, 3, 4, 5], 1), ([3, 1, 64, 100], 0), ([2, 1, 3, 4, 5], 1), ([1, 2, 1, 6, 1], 1),
          ([0, 3, 4, 5], 0)]
    for j, dt in enumerate(p.FLOATS):
        for k, (size, align) in enumerate(p.pick(ag, dt, j, 2)):
            r = len(size) - 2
            single("geom/affine_grid/%s/size=%s,align_corners=%d" % (dt, sh(size), align), "affine_grid",
                   lambda g, dt=dt, s=[size[0], r, r + 1]: [g.x(dt, s, -2, 2)],
                   attrs={"size": size, "align_corners": align}, tol=p.accum(dt, r + 1, 2.0))
    rois_a = [[0.5, 1.0, 6.2, 7.7], [2.0, 0.3, 8.5, 4.0], [0, 0, 1.5, 1.2], [-2.0, -1.5, 3.0, 12.0]]
    ra = [([2, 3, 8, 9], rois_a, 3, 4, 2, 1.0, "half_pixel", "avg"),
          ([2, 3, 8, 9], rois_a, 2, 2, 0, 0.5, "output_half_pixel", "avg"),
          ([2, 2, 6, 7], rois_a, 3, 3, 2, 1.0, "half_pixel", "max"),
          ([2, 2, 6, 7], rois_a, 2, 3, 0, 0.5, "output_half_pixel", "max"),
          ([2, 16, 40, 50], rois_a * 8, 7, 7, 0, 2.0, "half_pixel", "avg"),
          ([2, 3, 5, 5], [], 2, 2, 0, 1.0, "half_pixel", "avg")]
    for j, dt in enumerate(p.FLOATS):
        for k, (xs, rois, oh, ow, ratio, scale, ct, mode) in enumerate(p.pick(ra, dt, j, 2)):
            idt = ("i64", "i32")[(j + k) % 2]

            def mk(g, dt=dt, xs=xs, rois=rois, idt=idt):
                r = np.array(rois, np.float64).reshape(-1, 4)
                return [g.x(dt, xs), g.arr(dt, r), g.arr(idt, g.rng.integers(0, xs[0], [r.shape[0]]))]
            single("geom/roi_align/%s/%s,rois=%d,out=%dx%d,ratio=%d,scale=%g,%s,%s,%s" % (
                dt, sh(xs), len(rois), oh, ow, ratio, scale, ct, mode, idt), "roi_align", mk,
                attrs={"mode": mode, "output_height": oh, "output_width": ow, "sampling_ratio": ratio,
                       "spatial_scale": scale, "coordinate_transformation_mode": ct},
                tol=p.accum(dt, 64))
    case("geom/reverse_sequence/f32/length_out_of_range",
         lambda g: [g.op("reverse_sequence", [g.x("f32", [4, 3]), g.arr("i64", [1, 5, 2])])],
         rc=3, err="out of range")
    case("geom/roi_align/f32/batch_index_out_of_range",
         lambda g: [g.op("roi_align", [g.x("f32", [2, 1, 4, 4]), g.arr("f32", [[0, 0, 2, 2], [1, 1, 3, 3]]),
                                       g.arr("i64", [0, 2])])],
         rc=3, err="out of range")
