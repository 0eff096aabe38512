"""Parity cases of det and deform_conv (family "linalg"), each run on the device and
on the CPU by tests/cuda/parity.py, which calls gen_linalg(parity) with itself as p.

det: the CPU factors with LAPACK's getrf, CUDA with cuBLAS's getrfBatched (both LU
with partial pivoting, in f32 for f32/f16/bf16 and in f64 for f64), so the results
agree to a few rounding errors of the product of M pivots: the matrices are well
conditioned (I * 1.5 plus a uniform [-1, 1) / sqrt(M) part), held to a relative
tolerance of about M eps. Singular matrices (integer entries, a repeated row) give an
exact 0 on both, and the empty batch and M = 0 (all ones) are exact.

deform_conv: both sample bilinearly with the same formula and sum the products with
a GEMM (OpenBLAS, cuBLAS), so the tolerance is a product's: accum(dt, K) with K the
terms per output (C/group * kernel positions)."""
import numpy as np

DET_R = {"f64": 1e-12, "f32": 2e-5, "f16": 2e-3, "bf16": 1.6e-2}


def well(g, batch, m):
    a = g.rng.uniform(-1, 1, tuple(batch) + (m, m)) / np.sqrt(max(m, 1))
    return a + 1.5 * np.eye(m)


def gen_linalg(p):
    sh, single = p.sh, p.single
    dets = [([3, 3], 0), ([7, 4, 4], 0), ([2, 3, 8, 8], 0), ([16, 16], 0), ([5, 32, 32], 0), ([300, 2, 2], 0),
            ([1, 1], 0), ([6, 5, 5], 1), ([0, 4, 4], 0), ([3, 0, 0], 0)]
    for j, dt in enumerate(p.FLOATS):
        for k, (s, singular) in enumerate(p.pick(dets, dt, j, 4)):
            m = s[-1]
            if dt in ("f16", "bf16") and m > 8:
                continue  # the determinant would leave the 16-bit range

            def mk(g, dt=dt, s=s, singular=singular, m=m):
                if singular:
                    a = g.rng.integers(-4, 5, tuple(s)).astype(np.float64)
                    a[..., m - 1, :] = a[..., 0, :]
                else:
                    a = well(g, s[:-2], m)
                return [g.arr(dt, a)]
            single("linalg/det/%s/%s%s" % (dt, sh(s), ",singular" if singular else ""), "det", mk,
                   tol=(DET_R[dt] * max(m, 1), 1e-30))
    deforms = [
        ("basic", [2, 3, 7, 8], [4, 3, 3, 3], {}, True, True),
        ("no_mask", [2, 3, 7, 8], [4, 3, 3, 3], {}, True, False),
        ("no_bias", [1, 4, 9, 9], [6, 2, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}, False, True),
        ("groups,offset_groups", [2, 6, 8, 7], [6, 2, 2, 3],
         {"group": 3, "offset_group": 3, "strides": [2, 1], "pads": [1, 0, 0, 2]}, True, True),
        ("dilations", [1, 4, 10, 9], [8, 4, 3, 2], {"offset_group": 2, "dilations": [2, 3], "pads": [2, 1, 1, 2]},
         False, False),
        ("larger", [2, 16, 20, 20], [32, 16, 3, 3], {"offset_group": 4, "pads": [1, 1, 1, 1]}, True, True),
        ("empty_batch", [0, 3, 7, 8], [4, 3, 3, 3], {}, True, True),
    ]
    for j, dt in enumerate(p.FLOATS):
        for label, xs, ws, attrs, bias, mask in p.pick(deforms, dt, j, 3):
            s, d = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
            pp, og = attrs.get("pads", [0, 0, 0, 0]), attrs.get("offset_group", 1)
            oh = (xs[2] + pp[0] + pp[2] - (ws[2] - 1) * d[0] - 1) // s[0] + 1
            ow = (xs[3] + pp[1] + pp[3] - (ws[3] - 1) * d[1] - 1) // s[1] + 1
            kk = ws[2] * ws[3]
            k = ws[1] * kk

            def mk(g, dt=dt, xs=xs, ws=ws, bias=bias, mask=mask, og=og, oh=oh, ow=ow, kk=kk):
                ins = [g.x(dt, xs), g.x(dt, ws, -0.5, 0.5), g.x(dt, [xs[0], og * 2 * kk, oh, ow], -2.5, 2.5)]
                if bias or mask:
                    ins.append(g.x(dt, [ws[0]]) if bias else "")
                if mask:
                    ins.append(g.x(dt, [xs[0], og * kk, oh, ow], 0.0, 1.0))
                return ins
            single("linalg/deform_conv/%s/%s/%s%s%s" % (dt, label, sh(xs), ",bias" if bias else "",
                                                       ",mask" if mask else ""),
                   "deform_conv", mk, attrs=attrs or None, tol=p.accum(dt, k, 0.5))
