"""Numeric cases of det (ONNX Det) and deform_conv (ONNX DeformConv, 2-D), plus their
inference errors.

det oracle: numpy.linalg.det in float64 of the exact inputs (LAPACK's LU, independent
of ftrun's build).  Singular matrices are integer-valued with a repeated row or a zero
column, so their determinant is exactly 0 and every LU finds an exact zero pivot.
Tolerance: |got - exp| <= 2 eps |exp| + 8 M eps B with B = M cond_2(A) |det A| (LU
with partial pivoting is backward stable, |dA| <~ M eps |A|, and the determinant's
relative change is at most M ||A^-1|| ||dA||), capped by the Hadamard bound
prod_i |row_i|_2, which alone serves the singular matrices (exact 0); f16 / bf16 inputs are representable, computed in f32 and rounded
once: one ulp of the 16-bit type more.

deform_conv oracle: torchvision.ops.deform_conv2d (torchvision 0.14) in float64 from
the exact inputs; ONNX's asymmetric pads are applied with F.pad first (a zero border
sampled bilinearly is the same as torchvision's zero outside the image), the groups
come from w's shape and the offset groups from offset's.  Tolerance: conv's
(cases_conv.tol) with S the same deform_conv2d of |x|, |w| and |mask| plus |bias|,
plus the rounding of the sampling positions (f32 positions are off by eps |pos|, and
the image changes by at most 2 max|x| per unit step): 2 eps P max|x| W1 where P is the
largest |position| and W1 the sum of |w| |mask| of one output channel."""
import numpy as np

from cases_conv import EPS16, EPS32, BF16_R, F16_TINY, _attrs, f64, rep, shp, sq, tol as conv_tol, torch_mod
from harness import Case, Tol, rng_for


def det_tol(dt, m, H):
    s = 8 * max(m, 1) * f64(H)
    if dt == "f16":
        return Tol(r=1 + 2 * EPS32 / EPS16, a=1, scale=s * EPS32 / EPS16 + F16_TINY / EPS16)
    if dt == "bf16":
        return Tol(r=BF16_R + 2, a=1, scale=s)
    return Tol(r=2, a=1, scale=s)


def det_case(shape, dt="f32", kind="random", label=""):
    name = "det %s x=%s %s%s" % (dt, shp(shape), kind, label)

    def build():
        rng = rng_for(name)
        m = shape[-1]
        if kind == "random":
            a = rng.standard_normal(shape) / sq(m) * 1.5
        else:
            a = rng.integers(-4, 5, shape).astype(np.float64)
            if m >= 2 and a.size:
                if kind == "repeated row":
                    a[..., m - 1, :] = a[..., 0, :]
                else:  # zero column
                    a[..., :, m // 2] = 0
        a = rep(a, dt)
        exp = np.linalg.det(f64(a)) if a.size else np.ones(shape[:-2]) if m == 0 else np.zeros(shape[:-2])
        H = np.prod(np.sqrt(np.sum(f64(a) ** 2, axis=-1)), axis=-1) if m else np.ones(shape[:-2])
        if m and a.size:
            with np.errstate(all="ignore"):
                B = m * np.linalg.cond(f64(a)) * np.abs(exp)
            H = np.where(np.isfinite(B), np.minimum(B, H), H)
        decl = "bf16" if dt == "bf16" else None
        return {"inputs": [("x", a, decl) if decl else ("x", a)], "expect": {"y": rep(exp, dt)},
                "tol": det_tol(dt, m, H)}
    return Case(name, "det", build=build)


def det_cases():
    c = []
    for dt in ("f32", "f64"):
        for s in ((3, 3), (1, 1), (2, 2), (4, 5, 5), (2, 3, 4, 4), (6, 8, 8), (2, 32, 32), (64, 64), (200, 3, 3)):
            c.append(det_case(s, dt))
        c.append(det_case((5, 4, 4), dt, "repeated row"))
        c.append(det_case((3, 6, 6), dt, "zero column"))
        c.append(det_case((0, 3, 3), dt, label=" empty batch"))
        c.append(det_case((2, 0, 0), dt, label=" M=0"))
        c.append(det_case((0, 0), dt, label=" M=0 scalar"))
    for dt in ("f16", "bf16"):
        c.append(det_case((4, 3, 3), dt))
        c.append(det_case((2, 5, 5), dt, "repeated row"))
    z = np.zeros
    specs = [("rank 1", z(4, np.float32), [r"rank >= 2", r"rank 1"]),
             ("not square", z((2, 3, 4), np.float32), [r"square", r"3 x 4"]),
             ("integer input", z((3, 3), np.int32), [r"i32"])]
    for label, x, res in specs:
        c.append(Case("det invalid: %s: exit 3" % label, "det", inputs=[("x", x)], exit_code=3, node_name="lu",
                      stderr_re=[r"node 'lu' \(det\)"] + res))
    return c


# ---------------------------------------------------------------- deform_conv

def deform_ref(x, w, off, b, mask, strides, pads, dil):
    """float64 result, tolerance scale S, terms per output K, the position term."""
    torch = torch_mod()
    import torchvision
    F = torch.nn.functional
    pads = pads or [0, 0, 0, 0]
    X = F.pad(torch.from_numpy(f64(x)), [pads[1], pads[3], pads[0], pads[2]])
    Xa = F.pad(torch.from_numpy(np.abs(f64(x))), [pads[1], pads[3], pads[0], pads[2]])
    W, O = torch.from_numpy(f64(w)), torch.from_numpy(f64(off))
    Mk = torch.from_numpy(f64(mask)) if mask is not None else None
    Mka = torch.from_numpy(np.abs(f64(mask))) if mask is not None else None
    kw = {"stride": tuple(strides or (1, 1)), "dilation": tuple(dil or (1, 1)), "padding": (0, 0)}
    y = torchvision.ops.deform_conv2d(X, O, W, None, mask=Mk, **kw).numpy()
    S = torchvision.ops.deform_conv2d(Xa, O, W.abs(), None, mask=Mka, **kw).numpy()
    M = w.shape[0]
    if b is not None:
        bb = f64(b).reshape(1, M, 1, 1)
        y, S = y + bb, S + np.abs(bb)
    K = w.shape[1] * w.shape[2] * w.shape[3]
    maxm = float(np.max(np.abs(f64(mask)))) if mask is not None and mask.size else 1.0
    W1 = np.sum(np.abs(f64(w)), axis=(1, 2, 3)).reshape(1, M, 1, 1) * maxm
    P = float(max(x.shape[2:]) * 2 + np.max(np.abs(f64(off)), initial=0) + 4)
    pos = 2 * P * float(np.max(np.abs(f64(x)), initial=0)) * W1
    return y, S, K, pos


def deform_case(xs, ws, dt="f32", bias=True, mask=True, strides=None, pads=None, dil=None, group=1, og=1,
                spread=2.0, label=""):
    a = _attrs(strides, pads, dil, group, "NOTSET")
    if og != 1:
        a["offset_group"] = og
    name = " ".join(p for p in ("deform_conv %s x=%s w=%s" % (dt, shp(xs), shp(ws)), "bias" if bias else "",
                                "mask" if mask else "", " ".join("%s=%s" % (k, v) for k, v in a.items()),
                                label.strip()) if p)
    s, d, pp = strides or [1, 1], dil or [1, 1], pads or [0, 0, 0, 0]
    oh = (xs[2] + pp[0] + pp[2] - (ws[2] - 1) * d[0] - 1) // s[0] + 1
    ow = (xs[3] + pp[1] + pp[3] - (ws[3] - 1) * d[1] - 1) // s[1] + 1
    kk = ws[2] * ws[3]

    def build():
        rng = rng_for(name)
        x = rep(rng.standard_normal(xs), dt)
        w = rep(rng.standard_normal(ws) / sq(int(np.prod(ws[1:]))), dt)
        off = rep(rng.uniform(-spread, spread, (xs[0], og * 2 * kk, oh, ow)), dt)
        mk = rep(rng.uniform(0, 1, (xs[0], og * kk, oh, ow)), dt) if mask else None
        b = rep(rng.standard_normal(ws[0]), dt) if bias else None
        y, S, K, pos = deform_ref(x, w, off, b, mk, strides, pads, dil)
        t = conv_tol(dt, K, S + pos / (4 * sq(K) + 4))
        decl = "bf16" if dt == "bf16" else None

        def one(n, v):
            return (n, v, decl) if decl else (n, v)
        ins = [one("x", x), one("w", w), one("offset", off)]
        ins.append(one("b", b) if bias else None)
        if mask:
            ins.append(one("mask", mk))
        elif not bias:
            ins.pop()
        return {"inputs": ins, "expect": {"y": rep(y, dt)}, "tol": t}
    return Case(name, "deform_conv", attrs=a or None, build=build)


def deform_cases():
    c = []
    for dt in ("f32", "f64"):
        c.append(deform_case((1, 1, 5, 5), (1, 1, 3, 3), dt, bias=False, mask=False, spread=0.0, label="zero offsets"))
        c.append(deform_case((2, 3, 7, 8), (4, 3, 3, 3), dt))
        c.append(deform_case((2, 3, 7, 8), (4, 3, 3, 3), dt, bias=False, mask=False))
        c.append(deform_case((2, 3, 7, 8), (4, 3, 3, 3), dt, bias=True, mask=False))
        c.append(deform_case((2, 3, 7, 8), (4, 3, 3, 3), dt, bias=False, mask=True))
        c.append(deform_case((1, 4, 9, 9), (6, 2, 3, 3), dt, group=2, pads=[1, 1, 1, 1]))
        c.append(deform_case((2, 6, 8, 7), (6, 2, 2, 3), dt, group=3, og=3, strides=[2, 1], pads=[1, 0, 0, 2]))
        c.append(deform_case((1, 4, 10, 9), (8, 4, 3, 2), dt, og=2, dil=[2, 3], pads=[2, 1, 1, 2]))
        c.append(deform_case((1, 4, 10, 9), (8, 2, 3, 3), dt, group=2, og=4, strides=[2, 2], spread=6.0,
                             label="offsets far outside"))
        c.append(deform_case((1, 2, 6, 6), (3, 2, 1, 1), dt, label="pointwise"))
        c.append(deform_case((0, 3, 7, 8), (4, 3, 3, 3), dt, label="empty batch"))
    for dt in ("f16", "bf16"):
        c.append(deform_case((1, 4, 7, 7), (4, 2, 3, 3), dt, group=2, og=2, pads=[1, 1, 1, 1]))
    z = np.zeros
    x, w = z((1, 4, 6, 6), np.float32), z((4, 4, 3, 3), np.float32)
    off, mk = z((1, 18, 4, 4), np.float32), z((1, 9, 4, 4), np.float32)
    specs = [
        ("3-D input", [("x", z((1, 4, 6), np.float32)), ("w", z((4, 4, 3), np.float32)), ("offset", z((1, 6, 4), np.float32))],
         {}, [r"2-D", r"rank 4"]),
        ("offset channels", [("x", x), ("w", w), ("offset", z((1, 16, 4, 4), np.float32))], {},
         [r"offset 'offset' \[1,16,4,4\] must have shape \[1, 18, 4, 4\]"]),
        ("offset spatial", [("x", x), ("w", w), ("offset", z((1, 18, 5, 4), np.float32))], {},
         [r"must have shape \[1, 18, 4, 4\]"]),
        ("mask shape", [("x", x), ("w", w), ("offset", off), None, ("mask", z((1, 18, 4, 4), np.float32))], {},
         [r"mask 'mask' \[1,18,4,4\] must have shape \[1, 9, 4, 4\]"]),
        ("offset_group not dividing C", [("x", x), ("w", w), ("offset", z((1, 54, 4, 4), np.float32))],
         {"offset_group": 3}, [r"'offset_group' = 3", r"C=4"]),
        ("bias shape", [("x", x), ("w", w), ("offset", off), ("b", z(3, np.float32))], {},
         [r"bias 'b' \[3\] must have shape \[4\]"]),
        ("weight channels", [("x", x), ("w", z((4, 3, 3, 3), np.float32)), ("offset", off)], {},
         [r"C/group = 4"]),
        ("offset dtype", [("x", x), ("w", w), ("offset", z((1, 18, 4, 4), np.float64))], {}, [r"f64"]),
    ]
    for label, inputs, attrs, res in specs:
        c.append(Case("deform_conv invalid: %s: exit 3" % label, "deform_conv", inputs=inputs, attrs=attrs or None,
                      exit_code=3, node_name="dcn", stderr_re=[r"node 'dcn' \(deform_conv\)"] + res))
    return c


def cases():
    return det_cases() + deform_cases()
