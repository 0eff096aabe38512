"""Numeric cases of the geometry ops: eye_like, reverse_sequence, center_crop_pad, col2im,
affine_grid and roi_align.  The oracles are independent of ftrun: numpy.eye, loops written
from the ONNX operator definitions (ReverseSequence, CenterCropPad, Col2Im in N-D, RoiAlign
mode max as ONNX's reference computes it), and PyTorch 1.13 where it has the op
(torch.nn.functional.fold for 2-D col2im, torch.nn.functional.affine_grid,
torchvision.ops.roi_align: aligned=True is half_pixel, aligned=False output_half_pixel),
run in float64 and rounded to the output dtype.  Bad attributes and data exit 3 naming
the node."""
import math
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

from cases_elementwise import random_of
from harness import ALL, NP, Case, Tol, rng_for

FLT = ("f16", "f32", "f64")
# PyTorch warns that unit-size grids with align_corners=True changed in 1.3 (they are 0, as ftrun's)
warnings.filterwarnings("ignore", message=".*affine_grid.*")


def shp(s):
    return "x".join(map(str, s)) or "[]"


# ---------------------------------------------------------------- oracles

def reverse_sequence(x, lens, b, t):
    y = x.copy()
    for i in range(x.shape[b]):
        n = int(lens[i])
        src = [slice(None)] * x.ndim
        src[b] = i
        dst = list(src)
        src[t] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
        dst[t] = slice(0, n)
        y[tuple(dst)] = x[tuple(src)]
    return y


def center_crop_pad(x, shape, axes):
    """ONNX CenterCropPad: centred crop or zero pad per axis, the odd element at the end."""
    out_shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for a, want in zip(axes, shape):
        dim = x.shape[a]
        out_shape[a] = want
        if want < dim:
            s = (dim - want) // 2
            src[a] = slice(s, s + want)
        elif want > dim:
            s = (want - dim) // 2
            dst[a] = slice(s, s + dim)
    y = np.zeros(out_shape, x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y


def col2im(x, img, blk, dil, pads, strides):
    """ONNX Col2Im in N-D: every column adds its block back into the padded image."""
    r = len(img)
    n, ck, _ = x.shape
    k = int(np.prod(blk))
    nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // strides[i] + 1 for i in range(r)]
    padded = np.zeros((n, ck // k) + tuple(img[i] + pads[i] + pads[r + i] for i in range(r)), np.float64)
    cols = x.astype(np.float64).reshape((n, ck // k) + tuple(blk) + tuple(nb))
    for q in np.ndindex(*blk):
        for l in np.ndindex(*nb):
            idx = tuple(l[i] * strides[i] + q[i] * dil[i] for i in range(r))
            padded[(slice(None), slice(None)) + idx] += cols[(slice(None), slice(None)) + q + l]
    crop = tuple(slice(pads[i], pads[i] + img[i]) for i in range(r))
    return padded[(slice(None), slice(None)) + crop]


def roi_align_max(x, rois, bidx, oh, ow, ratio, scale, half_pixel):
    """ONNX's reference RoiAlign, mode max: a sample point is worth the largest of its
    four weighted neighbours; a bin the largest of its points."""
    x, rois = x.astype(np.float64), rois.astype(np.float64)
    _, c, h, w = x.shape
    y = np.zeros((rois.shape[0], c, oh, ow))
    off = 0.5 if half_pixel else 0.0
    for r in range(rois.shape[0]):
        x0, y0, x1, y1 = rois[r] * scale - off
        rw, rh = x1 - x0, y1 - y0
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = ratio if ratio > 0 else int(math.ceil(rh / oh))
        gw = ratio if ratio > 0 else int(math.ceil(rw / ow))
        plane = x[int(bidx[r])]
        for ph in range(oh):
            for pw in range(ow):
                best = None
                for iy in range(gh):
                    yy = y0 + ph * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        xx = x0 + pw * bw + (ix + 0.5) * bw / gw
                        if yy < -1 or yy > h or xx < -1 or xx > w:
                            v = np.zeros(c)
                        else:
                            yv, xv = max(yy, 0.0), max(xx, 0.0)
                            yl, xl = int(yv), int(xv)
                            if yl >= h - 1:
                                yl = yh = h - 1
                                yv = float(yl)
                            else:
                                yh = yl + 1
                            if xl >= w - 1:
                                xl = xh = w - 1
                                xv = float(xl)
                            else:
                                xh = xl + 1
                            ly, lx = yv - yl, xv - xl
                            hy, hx = 1 - ly, 1 - lx
                            v = np.maximum(np.maximum(hy * hx * plane[:, yl, xl], hy * lx * plane[:, yl, xh]),
                                           np.maximum(ly * hx * plane[:, yh, xl], ly * lx * plane[:, yh, xh]))
                        best = v if best is None else np.maximum(best, v)
                y[r, :, ph, pw] = best if best is not None else 0
    return y


def smooth(rng, dt, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(NP[dt])


# ---------------------------------------------------------------- cases

def eye_like_cases():
    c = []
    specs = [((3, 5), 0, None), ((4, 4), 1, None), ((5, 3), -2, "i32"), ((3, 4), 7, "f64"), ((3, 4), -(2 ** 62), None),
             ((0, 3), 0, "f16"), ((4, 6), 2, "bool"), ((1, 1), 0, "u8")]
    for vi, (shape, k, dt_attr) in enumerate(specs):
        for dt in (ALL if vi == 0 else ("f32",) if vi % 2 else ("i64",)):
            out_dt = dt_attr or dt
            name = "eye_like %s %s k=%d dtype=%s" % (dt, shp(shape), k, dt_attr or "-")
            attrs = {"k": k}
            if dt_attr:
                attrs["dtype"] = dt_attr
            x = random_of(rng_for(name), dt, shape)
            kk = max(min(k, 1 << 20), -(1 << 20))
            c.append(Case(name, "eye_like", attrs=attrs, inputs=[("x", x)],
                          expect={"y": np.eye(shape[0], shape[1], kk, dtype=NP[out_dt])}))
    x = np.zeros((2, 3, 4), np.float32)
    c.append(Case("eye_like rank 3: exit 3", "eye_like", inputs=[("x", x)], exit_code=3, stderr_re=[r"n0", r"rank 2"]))
    c.append(Case("eye_like dtype f8: exit 3", "eye_like", attrs={"dtype": "f8"}, inputs=[("x", x[0])], exit_code=3,
                  stderr_re=[r"n0", r"unknown dtype 'f8'"]))
    return c


def reverse_sequence_cases():
    c = []
    specs = [((4, 3), 1, 0, [4, 0, 2], "i64"), ((3, 5), 0, 1, [1, 5, 3], "i64"), ((2, 4, 3), -1, -2, [2, 4, 1], "i32"),
             ((5, 2, 3), -2, 0, [5, 3], "i64"), ((0, 3), 1, 0, [0, 0, 0], "i64"), ((3, 0), 0, 1, [0, 0, 0], "i32")]
    for vi, (shape, b, t, lens, ldt) in enumerate(specs):
        for dt in (ALL if vi == 0 else ("f32",) if vi % 2 else ("i16", "f64")):
            name = "reverse_sequence %s %s batch_axis=%d time_axis=%d lens=%s" % (dt, shp(shape), b, t, lens)
            x = random_of(rng_for(name), dt, shape)
            ln = np.array(lens, NP[ldt])
            bb, tt = b % len(shape), t % len(shape)
            c.append(Case(name, "reverse_sequence", attrs={"batch_axis": b, "time_axis": t},
                          inputs=[("x", x), ("sequence_lens", ln)], expect={"y": reverse_sequence(x, ln, bb, tt)}))
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    c.append(Case("reverse_sequence length 5 of time 4: exit 3 naming the node", "reverse_sequence",
                  inputs=[("x", x), ("sequence_lens", np.array([1, 5, 2], np.int64))], exit_code=3,
                  stderr_re=[r"n0", r"sequence length 5 .* out of range"]))
    c.append(Case("reverse_sequence negative length: exit 3", "reverse_sequence",
                  inputs=[("x", x), ("sequence_lens", np.array([1, -1, 2], np.int64))], exit_code=3,
                  stderr_re=[r"n0", r"out of range"]))
    c.append(Case("reverse_sequence batch_axis = time_axis: exit 3", "reverse_sequence",
                  attrs={"batch_axis": 0, "time_axis": -2},
                  inputs=[("x", x), ("sequence_lens", np.array([1, 1, 2, 0], np.int64))], exit_code=3,
                  stderr_re=[r"n0", r"must differ"]))
    c.append(Case("reverse_sequence lens of the wrong length: exit 3", "reverse_sequence",
                  inputs=[("x", x), ("sequence_lens", np.array([1, 1], np.int64))], exit_code=3,
                  stderr_re=[r"n0", r"expected \[3\]"]))
    c.append(Case("reverse_sequence f32 lens: exit 3", "reverse_sequence",
                  inputs=[("x", x), ("sequence_lens", np.array([1, 1, 1], np.float32))], exit_code=3,
                  stderr_re=[r"n0", r"i32 or i64"]))
    return c


def center_crop_pad_cases():
    c = []
    specs = [((5, 4, 3), [3, 7], [0, 1]), ((6, 7), [6, 7], None), ((6, 7), [3, 10], None), ((2, 5, 4), [2, 3], [-1, -2]),
             ((4, 3), [0, 5], None), ((0, 3), [2, 1], None), ((3, 8, 2), [4], [1])]
    for vi, (shape, want, axes) in enumerate(specs):
        for dt in (ALL if vi == 0 else ("f32",) if vi % 2 else ("u8", "f64")):
            name = "center_crop_pad %s %s shape=%s axes=%s" % (dt, shp(shape), want, axes)
            x = random_of(rng_for(name), dt, shape)
            ax = [a % len(shape) for a in axes] if axes else list(range(len(shape)))
            attrs = {"shape": want}
            if axes:
                attrs["axes"] = axes
            c.append(Case(name, "center_crop_pad", attrs=attrs, inputs=[("x", x)],
                          expect={"y": center_crop_pad(x, want, ax)}))
    x = np.zeros((4, 3), np.float32)
    c.append(Case("center_crop_pad shape of 3 values for rank 2: exit 3", "center_crop_pad", attrs={"shape": [1, 2, 3]},
                  inputs=[("x", x)], exit_code=3, stderr_re=[r"n0", r"'shape'.*expected 2"]))
    c.append(Case("center_crop_pad negative size: exit 3", "center_crop_pad", attrs={"shape": [2, -1]},
                  inputs=[("x", x)], exit_code=3, stderr_re=[r"n0", r"negative"]))
    c.append(Case("center_crop_pad axis 2 of rank 2: exit 3", "center_crop_pad", attrs={"shape": [2], "axes": [2]},
                  inputs=[("x", x)], exit_code=3, stderr_re=[r"n0", r"out of range"]))
    return c


def col2im_cases():
    c = []
    # (N, C, image, block, dilations, pads, strides, torch oracle)
    specs = [(2, 3, [4, 5], [2, 2], [1, 1], [0, 0, 0, 0], [1, 1], True),
             (1, 2, [5, 6], [2, 3], [2, 1], [1, 0, 1, 0], [1, 2], True),
             (2, 1, [7, 7], [3, 3], [1, 1], [1, 1, 1, 1], [2, 2], True),
             (1, 2, [9], [3], [2], [1, 2], [2], False),
             (1, 1, [3, 4, 4], [2, 2, 3], [1, 1, 1], [0, 1, 0, 0, 0, 1], [1, 2, 1], False),
             (0, 2, [4, 4], [2, 2], [1, 1], [0, 0, 0, 0], [2, 2], True)]
    for vi, (n, ch, img, blk, dil, pads, st, use_torch) in enumerate(specs):
        r = len(img)
        nb = [(img[i] + pads[i] + pads[r + i] - (dil[i] * (blk[i] - 1) + 1)) // st[i] + 1 for i in range(r)]
        k, L = int(np.prod(blk)), int(np.prod(nb))
        for dt in (FLT if vi < 2 else ("f32",) if vi % 2 else ("f64",)):
            name = "col2im %s N=%d C=%d image=%s block=%s dil=%s pads=%s strides=%s" % (dt, n, ch, img, blk, dil, pads,
                                                                                      st)

            def build(dt=dt, n=n, ch=ch, img=img, blk=blk, dil=dil, pads=pads, st=st, k=k, L=L, use_torch=use_torch,
                      name=name):
                x = smooth(rng_for(name), dt, (n, ch * k, L))
                if use_torch:
                    ref = F.fold(torch.from_numpy(x.astype(np.float64)), img, blk, dilation=dil,
                                 padding=pads[:len(img)], stride=st).numpy()
                else:
                    ref = col2im(x, img, blk, dil, pads, st)
                return {"inputs": [("x", x)], "expect": {"y": ref.astype(NP[dt])},
                        "tol": Tol(r=4, a=4 * k + 2, scale=2.0)}
            c.append(Case(name, "col2im", attrs={"image_shape": img, "block_shape": blk, "dilations": dil,
                                                 "pads": pads, "strides": st}, build=build))
    x = np.zeros((1, 4, 5), np.float32)
    c.append(Case("col2im 5 columns where 12 blocks fit: exit 3", "col2im",
                  attrs={"image_shape": [4, 5], "block_shape": [2, 2]}, inputs=[("x", x)], exit_code=3,
                  stderr_re=[r"n0", r"expected \[N, C\*4, 12\]"]))
    c.append(Case("col2im block larger than the image: exit 3", "col2im",
                  attrs={"image_shape": [2, 2], "block_shape": [3, 1]}, inputs=[("x", x)], exit_code=3,
                  stderr_re=[r"n0", r"block spans 3"]))
    c.append(Case("col2im stride 0: exit 3", "col2im",
                  attrs={"image_shape": [4, 5], "block_shape": [2, 2], "strides": [0, 1]}, inputs=[("x", x)],
                  exit_code=3, stderr_re=[r"n0", r"'strides'.*out of range"]))
    c.append(Case("col2im i32 input: exit 3", "col2im", attrs={"image_shape": [4, 5], "block_shape": [2, 2]},
                  inputs=[("x", np.zeros((1, 4, 12), np.int32))], exit_code=3, stderr_re=[r"n0", r"i32"]))
    return c


def affine_grid_cases():
    c = []
    specs = [([2, 3, 4, 5], 0), ([2, 3, 4, 5], 1), ([1, 1, 1, 6], 1), ([2, 1, 3, 4, 5], 0), ([1, 2, 2, 3, 1], 1),
             ([0, 3, 4, 5], 0), ([2, 1, 0, 5], 1)]
    for vi, (size, align) in enumerate(specs):
        r = len(size) - 2
        for dt in (FLT if vi < 2 else ("f32",) if vi % 2 else ("f64",)):
            name = "affine_grid %s size=%s align_corners=%d" % (dt, size, align)
            th = smooth(rng_for(name), dt, (size[0], r, r + 1))
            if 0 in size:  # PyTorch refuses empty grids: the result is empty, of this shape
                ref = np.zeros([size[0]] + size[2:] + [r])
            else:
                ref = F.affine_grid(torch.from_numpy(th.astype(np.float64)), size, align_corners=bool(align)).numpy()
            c.append(Case(name, "affine_grid", attrs={"size": size, "align_corners": align}, inputs=[("theta", th)],
                          expect={"y": ref.astype(NP[dt])}, tol=Tol(r=8, a=16, scale=2.0)))
    th = np.zeros((2, 2, 3), np.float32)
    c.append(Case("affine_grid size of 3 values: exit 3", "affine_grid", attrs={"size": [2, 4, 5]},
                  inputs=[("theta", th)], exit_code=3, stderr_re=[r"n0", r"expected 4"]))
    c.append(Case("affine_grid theta of the wrong batch: exit 3", "affine_grid", attrs={"size": [3, 1, 4, 5]},
                  inputs=[("theta", th)], exit_code=3, stderr_re=[r"n0", r"needs \[3, 2, 3\]"]))
    c.append(Case("affine_grid align_corners 2: exit 3", "affine_grid", attrs={"size": [2, 1, 4, 5], "align_corners": 2},
                  inputs=[("theta", th)], exit_code=3, stderr_re=[r"n0", r"align_corners"]))
    return c


def roi_align_cases():
    c = []
    # (x shape, rois, batch indices, oh, ow, sampling_ratio, spatial_scale, half_pixel, mode)
    rois_a = [[0.5, 1.0, 6.2, 7.7], [2.0, 0.3, 8.5, 4.0], [0, 0, 1.5, 1.2], [-2.0, -1.5, 3.0, 12.0]]
    specs = [((2, 3, 8, 9), rois_a, [1, 0, 1, 0], 3, 4, 2, 1.0, True, "avg"),
             ((2, 3, 8, 9), rois_a, [1, 0, 1, 0], 2, 2, 0, 0.5, False, "avg"),
             ((1, 2, 10, 10), [[1, 1, 9, 9], [3.3, 2.2, 4.4, 8.8]], [0, 0], 5, 3, 0, 1.0, True, "avg"),
             ((2, 2, 6, 7), rois_a, [0, 1, 1, 0], 3, 3, 2, 1.0, True, "max"),
             ((2, 2, 6, 7), rois_a, [0, 1, 1, 0], 2, 3, 0, 0.5, False, "max"),
             ((2, 3, 5, 5), [], [], 2, 2, 0, 1.0, True, "avg"),
             ((1, 0, 5, 5), [[0, 0, 2, 2]], [0], 2, 2, 0, 1.0, True, "avg")]
    for vi, (xs, rois, bidx, oh, ow, ratio, scale, hp, mode) in enumerate(specs):
        for dt in (FLT if vi in (0, 3) else ("f32",) if vi % 2 else ("f64",)):
            idt = "i32" if vi == 2 else "i64"
            name = "roi_align %s %s %s %s rois=%d out=%dx%d ratio=%d scale=%g" % (
                dt, mode, "half_pixel" if hp else "output_half_pixel", shp(xs), len(rois), oh, ow, ratio, scale)

            def build(dt=dt, xs=xs, rois=rois, bidx=bidx, oh=oh, ow=ow, ratio=ratio, scale=scale, hp=hp, mode=mode,
                      idt=idt, name=name):
                x = smooth(rng_for(name), dt, xs)
                r = np.array(rois, NP[dt]).reshape(-1, 4)
                b = np.array(bidx, NP[idt])
                if mode == "avg":
                    boxes = torch.cat([torch.from_numpy(b.astype(np.float64))[:, None],
                                       torch.from_numpy(r.astype(np.float64))], 1)
                    ref = torchvision.ops.roi_align(torch.from_numpy(x.astype(np.float64)), boxes, (oh, ow), scale,
                                                    ratio, aligned=hp).numpy()
                else:
                    ref = roi_align_max(x, r, b, oh, ow, ratio, scale, hp)
                return {"inputs": [("x", x), ("rois", r), ("batch_indices", b)], "expect": {"y": ref.astype(NP[dt])},
                        "tol": Tol(r=16, a=64, scale=2.0)}
            c.append(Case(name, "roi_align", attrs={"mode": mode, "output_height": oh, "output_width": ow,
                                                    "sampling_ratio": ratio, "spatial_scale": scale,
                                                    "coordinate_transformation_mode":
                                                        "half_pixel" if hp else "output_half_pixel"}, build=build))
    x = np.zeros((2, 1, 4, 4), np.float32)
    rois = np.array([[0, 0, 2, 2], [1, 1, 3, 3]], np.float32)
    c.append(Case("roi_align batch index 2 of 2 images: exit 3 naming the node", "roi_align",
                  inputs=[("x", x), ("rois", rois), ("batch_indices", np.array([0, 2], np.int64))], exit_code=3,
                  stderr_re=[r"n0", r"batch index 2 .*out of range"]))
    ok_in = [("x", x), ("rois", rois), ("batch_indices", np.array([0, 1], np.int64))]
    for label, attrs, msg in (("mode sum", {"mode": "sum"}, r"unknown mode 'sum'"),
                              ("coordinate_transformation_mode asymmetric",
                               {"coordinate_transformation_mode": "asymmetric"}, r"unknown mode 'asymmetric'"),
                              ("output_height 0", {"output_height": 0}, r"output_height"),
                              ("sampling_ratio -1", {"sampling_ratio": -1}, r"sampling_ratio")):
        c.append(Case("roi_align %s: exit 3" % label, "roi_align", attrs=attrs, inputs=ok_in, exit_code=3,
                      stderr_re=[r"n0", msg]))
    c.append(Case("roi_align rois of 5 columns: exit 3", "roi_align",
                  inputs=[("x", x), ("rois", np.zeros((2, 5), np.float32)), ("batch_indices", np.zeros(2, np.int64))],
                  exit_code=3, stderr_re=[r"n0", r"num_rois, 4"]))
    c.append(Case("roi_align f64 rois for f32 input: exit 3", "roi_align",
                  inputs=[("x", x), ("rois", rois.astype(np.float64)), ("batch_indices", np.zeros(2, np.int64))],
                  exit_code=3, stderr_re=[r"n0", r"rois"]))
    return c


def cases():
    return (eye_like_cases() + reverse_sequence_cases() + center_crop_pad_cases() + col2im_cases() +
            affine_grid_cases() + roi_align_cases())
