"""Numeric cases of the data-dependent ops: non_zero, compress, unique and
non_max_suppression, whose output shapes are known only at run time.  ftrun infers
each output at a bound when it loads the graph and writes the shape the run gave, so
every expectation below has the shape NumPy gives and the comparison (exact shape,
exact values) checks both.

Oracles, never ftrun's output:
  non_zero   np.nonzero stacked into [max(rank, 1), N] int64 (a scalar is a 1-element
             vector, as np.nonzero(np.atleast_1d(x)));
  compress   np.compress(cond, x, axis) (axis None: the flattened x); a condition
             shorter than the axis keeps only its slices, a longer one must be false
             past the end (a true entry there: exit 3 naming the node);
  unique     np.unique(x, return_index, return_inverse, return_counts, axis); for
             sorted=0 the same groups reordered by their first occurrence (Y, indices
             and counts permuted, inverse_indices renumbered);
  non_max_suppression
             nms() below, written from ONNX's NonMaxSuppression text: per batch and
             class, the boxes with score > score_threshold (when given) in falling
             score order, ties to the lower box index, each kept unless its IoU with
             a box already kept exceeds iou_threshold, at most
             max_output_boxes_per_class of them (absent: none).  Boxes are corners
             [y1, x1, y2, x2] in any order, or [x_centre, y_centre, width, height]
             with center_point_box=1; no overlap or a box of no area never
             suppresses.  Coordinates are multiples of 1/8 (exact in f32, halves of
             widths too), and no IoU of a case lies within 1e-4 of the threshold, so
             the f64 oracle and an f32 kernel cannot decide a pair differently.

Cases whose graph feeds a dynamic output to another node (unique then mul, non_zero
then transpose, compress then unique, ...) check that the nodes after a
data-dependent op are inferred again with the shapes of the run."""
import numpy as np

from cases_elementwise import random_of
from harness import ALL, NP, UINTS, Case, rng_for

def shp(s):
    return "x".join(map(str, s)) or "[]"


# ---------------------------------------------------------------- oracles

def non_zero(x):
    x = np.asarray(x)
    r = max(x.ndim, 1)
    idx = np.nonzero(np.atleast_1d(x))
    return np.stack(idx).astype(np.int64).reshape(r, -1)


def compress(x, cond, axis):
    if axis is None:
        n = x.size
    else:
        n = x.shape[axis]
    return np.compress(cond[:n], x, axis=axis)


def unique(x, axis, sorted_=1):
    """(Y, indices, inverse_indices, counts) of np.unique; sorted_=0: by first occurrence."""
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)


def extent(b, center):
    """(xmin, ymin, xmax, ymax) in float64."""
    b = [float(v) for v in b]
    if center:
        return b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    return min(b[1], b[3]), min(b[0], b[2]), max(b[1], b[3]), max(b[0], b[2])


def iou(a, b, center):
    """IoU, or None when the pair never suppresses (no overlap, a box of no area)."""
    p, q = extent(a, center), extent(b, center)
    ix0, ix1 = max(p[0], q[0]), min(p[2], q[2])
    iy0, iy1 = max(p[1], q[1]), min(p[3], q[3])
    if ix1 <= ix0 or iy1 <= iy0:
        return None
    inter = (ix1 - ix0) * (iy1 - iy0)
    a1 = (p[2] - p[0]) * (p[3] - p[1])
    a2 = (q[2] - q[0]) * (q[3] - q[1])
    if inter <= 0 or a1 <= 0 or a2 <= 0 or a1 + a2 - inter <= 0:
        return None
    return inter / (a1 + a2 - inter)


def nms(boxes, scores, max_per, iou_th, score_th, center, near=None):
    """Selected [batch, class, box] rows (int64 [M, 3]).  near: a list that gets every
    IoU compared with the threshold (to keep the cases away from it)."""
    th = float(np.float32(iou_th))
    out = []
    B, C, N = scores.shape
    for b in range(B):
        for c in range(C):
            sc = [float(v) for v in scores[b, c]]
            cand = [i for i in range(N) if score_th is None or sc[i] > float(np.float32(score_th))]
            cand.sort(key=lambda i: (-sc[i], i))
            kept = []
            for i in cand:
                if len(kept) >= max_per:
                    break
                keep = True
                for j in kept:
                    v = iou(boxes[b, j], boxes[b, i], center)
                    if v is not None and near is not None:
                        near.append(v)
                    if v is not None and v > th:
                        keep = False
                        break
                if keep:
                    kept.append(i)
                    out.append((b, c, i))
    return np.array(out, np.int64).reshape(-1, 3)


# ---------------------------------------------------------------- values

def few_values(rng, dt, shape, k=4):
    """Values of dt drawn from k distinct ones (many repeats): for unique."""
    d = NP[dt]
    if d == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if d.kind == "u" else -(k // 2)
    v = rng.integers(lo, lo + k, shape)
    if d.kind == "f":
        return (v * 0.75).astype(d)
    return v.astype(d)


def sparse(rng, dt, shape, frac=0.4):
    """Random values of dt with about frac of them zero (-0.0 among the float zeros)."""
    x = random_of(rng, dt, shape)
    if x.size:
        z = rng.random(shape) < frac
        x[z] = 0
        if NP[dt].kind == "f":
            flat, zf = x.reshape(-1), np.flatnonzero(z.reshape(-1))
            flat[zf[::2]] = -0.0
    return x


# ---------------------------------------------------------------- cases

def non_zero_cases():
    c = []
    for dt in ALL:
        name = "non_zero %s 3x4x5 (NaN, inf and -0 among the values)" % dt

        def build(dt=dt, name=name):
            x = sparse(rng_for(name), dt, (3, 4, 5))
            return {"inputs": [("x", x)], "expect": {"y": non_zero(x)}}
        c.append(Case(name, "non_zero", build=build))
    specs = [("f32", (17,), "1-D"), ("i32", (2, 3, 2, 5), "rank 4"), ("bool", (6, 7), "2-D"),
             ("f16", (4, 9), "2-D"), ("u8", (64, 33), "2-D larger")]
    for dt, s, label in specs:
        name = "non_zero %s %s %s" % (dt, label, shp(s))

        def build(dt=dt, s=s, name=name):
            x = sparse(rng_for(name), dt, s)
            return {"inputs": [("x", x)], "expect": {"y": non_zero(x)}}
        c.append(Case(name, "non_zero", build=build))
    for dt in UINTS:  # the wider unsigned types; u64 values above 2^63 are nonzero too
        name = "non_zero %s 4x5 (values past the signed range)" % dt
        x = sparse(rng_for(name), dt, (4, 5))
        x[0, 1] = np.iinfo(NP[dt]).max
        c.append(Case(name, "non_zero", inputs=[("x", x)], expect={"y": non_zero(x)}))
    # bf16 travels as an f32 .npy of bf16 values (k/4 with |k| < 64 are exact in bf16)
    name = "non_zero bf16 5x6"
    x = few_values(rng_for(name), "f32", (5, 6), k=5)
    c.append(Case(name, "non_zero", inputs=[("x", x, "bf16")], expect={"y": non_zero(x)}))
    for dt in ("f32", "i32", "bool", "f16"):
        x = np.zeros((3, 4), NP[dt])
        c.append(Case("non_zero %s all zero 3x4: [2, 0]" % dt, "non_zero", inputs=[("x", x)],
                      expect={"y": np.zeros((2, 0), np.int64)}))
    x = np.array([0.0, -0.0, 0.0], np.float32)
    c.append(Case("non_zero f32 only signed zeros: [1, 0]", "non_zero", inputs=[("x", x)],
                  expect={"y": np.zeros((1, 0), np.int64)}))
    c.append(Case("non_zero f32 empty input 0x3: [2, 0]", "non_zero", inputs=[("x", np.zeros((0, 3), np.float32))],
                  expect={"y": np.zeros((2, 0), np.int64)}))
    for dt, v in (("f32", 2.5), ("i64", 0), ("bool", True), ("f16", np.nan)):
        x = np.array(v, NP[dt])
        c.append(Case("non_zero %s scalar %r: [1, %d]" % (dt, v, int(x != 0 or x != x)), "non_zero",
                      inputs=[("x", x)], expect={"y": non_zero(x)}))
    return c


def compress_cases():
    c = []
    # (label, shape, condition length, axis)
    specs = [("axis=0", (6, 4), 6, 0), ("axis=1", (3, 7), 7, 1), ("axis=-1 3-D", (2, 3, 5), 5, -1),
             ("axis=-2 3-D", (4, 5, 2), 5, -2), ("axis=1 3-D", (2, 6, 3), 6, 1),
             ("no axis (flattened)", (3, 4), 12, None), ("no axis 3-D", (2, 3, 4), 24, None),
             ("condition shorter than the axis", (8, 3), 5, 0), ("axis=-1 condition shorter", (3, 9), 4, -1),
             ("no axis condition shorter", (4, 5), 7, None),
             ("condition longer, false past the end", (4, 3), 7, 0),
             ("no axis condition longer, false past the end", (2, 3), 9, None)]
    for vi, (label, s, n, axis) in enumerate(specs):
        for dt in (ALL if vi == 0 else ("f32", "i64") if vi in (2, 5) else ("f32",) if vi % 2 else ("i32",)):
            name = "compress %s %s %s cond [%d]" % (dt, label, shp(s), n)

            def build(dt=dt, s=s, n=n, axis=axis, name=name):
                rng = rng_for(name)
                x = random_of(rng, dt, s)
                cond = rng.random(n) < 0.5
                dim = int(np.prod(s)) if axis is None else s[axis]
                cond[dim:] = False
                if n and not cond[:dim].any():
                    cond[0] = True
                return {"inputs": [("x", x), ("cond", cond)], "expect": {"y": compress(x, cond, axis)}}
            c.append(Case(name, "compress", attrs=None if axis is None else {"axis": axis}, build=build))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    c.append(Case("compress f32 all false axis=1: [3, 0]", "compress", attrs={"axis": 1},
                  inputs=[("x", x), ("cond", np.zeros(4, bool))], expect={"y": np.zeros((3, 0), np.float32)}))
    c.append(Case("compress f32 all true axis=0: the input", "compress", attrs={"axis": 0},
                  inputs=[("x", x), ("cond", np.ones(3, bool))], expect={"y": x}))
    c.append(Case("compress f32 empty condition no axis: [0]", "compress",
                  inputs=[("x", x), ("cond", np.zeros(0, bool))], expect={"y": np.zeros(0, np.float32)}))
    c.append(Case("compress i32 scalar input no axis", "compress",
                  inputs=[("x", np.array(7, np.int32)), ("cond", np.array([True]))],
                  expect={"y": np.array([7], np.int32)}))
    for label, attrs, cond in (("axis=0 true at 3 of 3", {"axis": 0}, [True, False, False, True]),
                               ("no axis true at 12 of 12", None, [False] * 12 + [True])):
        c.append(Case("compress f32 %s: exit 3 naming the node" % label, "compress", attrs=attrs,
                      inputs=[("x", x), ("cond", np.array(cond))], exit_code=3, node_name="pick",
                      stderr_re=[r"pick", r"past the end"]))
    return c


def unique_cases():
    c = []
    # (label, shape, axis)
    specs = [("flat 1-D", (40,), None), ("flat 3-D", (3, 4, 5), None), ("axis=0", (8, 3), 0),
             ("axis=1", (3, 9), 1), ("axis=-1 3-D", (2, 2, 10), -1), ("axis=1 3-D", (2, 7, 2), 1),
             ("axis=0 1-D", (30,), 0)]
    for vi, (label, s, axis) in enumerate(specs):
        dts = ALL if vi in (0, 2) else ("f32", "i32", "bool") if vi in (1, 3) else ("i64", "f64")
        for dt in dts:
            for srt in (1, 0):
                name = "unique %s %s %s sorted=%d" % (dt, label, shp(s), srt)

                def build(dt=dt, s=s, axis=axis, srt=srt, name=name):
                    rng = rng_for(name)
                    # slices along an axis repeat only if they are short and few-valued
                    x = few_values(rng, dt, s, k=3 if axis is not None else 6)
                    if axis is not None and x.shape[axis] > 2:  # at least one repeated slice
                        ax = axis % x.ndim
                        src = np.take(x, [0], axis=ax)
                        idx = [slice(None)] * x.ndim
                        idx[ax] = slice(x.shape[ax] - 1, x.shape[ax])
                        x[tuple(idx)] = src
                    y, first, inv, cnt = unique(x, axis, srt)
                    return {"inputs": [("x", x)], "expect": {"y": y, "indices": first, "inverse": inv, "counts": cnt}}
                attrs = {"sorted": srt}
                if axis is not None:
                    attrs["axis"] = axis
                c.append(Case(name, "unique", attrs=attrs, outputs=["y", "indices", "inverse", "counts"],
                              build=build))
    # floats with many distinct values, negatives and infinities
    for srt in (1, 0):
        name = "unique f32 distinct and repeated values with inf 50 sorted=%d" % srt

        def build(srt=srt, name=name):
            rng = rng_for(name)
            x = np.concatenate([rng.standard_normal(30), [np.inf, -np.inf, np.inf]]).astype(np.float32)
            x = np.concatenate([x, x[rng.integers(0, x.size, 17)]])
            rng.shuffle(x)
            y, first, inv, cnt = unique(x, None, srt)
            return {"inputs": [("x", x)], "expect": {"y": y, "indices": first, "inverse": inv, "counts": cnt}}
        c.append(Case(name, "unique", attrs={"sorted": srt}, outputs=["y", "indices", "inverse", "counts"],
                      build=build))
    # NaN: one value, after every number (numpy.unique's equal_nan)
    for srt in (1, 0):
        x = np.array([3, np.nan, 1, np.nan, 3, -np.inf, np.nan, 1], np.float32)
        y, first, inv, cnt = unique(x, None, srt)
        c.append(Case("unique f32 with NaN sorted=%d" % srt, "unique", attrs={"sorted": srt}, inputs=[("x", x)],
                      outputs=["y", "indices", "inverse", "counts"],
                      expect={"y": y, "indices": first, "inverse": inv, "counts": cnt}))
    # unsigned order: a u64 above 2^63 is the largest, not negative
    for dt in UINTS:
        x = np.array([5, 2 ** 15 + 3, 0, 5, 1, 2 ** 15 + 3], NP[dt])
        if dt == "u64":
            x[1] = x[5] = 2 ** 63 + 3
        y, first, inv, cnt = unique(x, None)
        c.append(Case("unique %s values past the signed range sorted=1" % dt, "unique", inputs=[("x", x)],
                      outputs=["y", "indices", "inverse", "counts"],
                      expect={"y": y, "indices": first, "inverse": inv, "counts": cnt}))
    # bf16: the input and Y as f32 .npy files of bf16 values
    for label, s_, axis in (("flat", (24,), None), ("axis=1", (3, 8), 1)):
        for srt in (1, 0):
            name = "unique bf16 %s %s sorted=%d" % (label, shp(s_), srt)
            x = few_values(rng_for(name), "f32", s_, k=3)
            y, first, inv, cnt = unique(x, axis, srt)
            attrs = {"sorted": srt}
            if axis is not None:
                attrs["axis"] = axis
            c.append(Case(name, "unique", attrs=attrs, inputs=[("x", x, "bf16")],
                          outputs=["y", "indices", "inverse", "counts"],
                          expect={"y": y, "indices": first, "inverse": inv, "counts": cnt}))
    # fewer outputs: Y alone, Y and indices
    x = np.array([3, 1, 3, 2, 1, 3], np.int32)
    c.append(Case("unique i32 only Y sorted=1", "unique", inputs=[("x", x)], expect={"y": np.array([1, 2, 3], np.int32)}))
    c.append(Case("unique i32 Y and indices sorted=0", "unique", attrs={"sorted": 0}, inputs=[("x", x)],
                  outputs=["y", "indices"],
                  expect={"y": np.array([3, 1, 2], np.int32), "indices": np.array([0, 1, 3], np.int64)}))
    for dt in ("f32", "i64"):
        x = np.zeros((0,), NP[dt])
        c.append(Case("unique %s empty input: [0]" % dt, "unique", inputs=[("x", x)],
                      outputs=["y", "indices", "inverse", "counts"],
                      expect={"y": x, "indices": np.zeros(0, np.int64), "inverse": np.zeros(0, np.int64),
                              "counts": np.zeros(0, np.int64)}))
    x = np.array(4.5, np.float32)
    c.append(Case("unique f32 scalar input", "unique", inputs=[("x", x)], outputs=["y", "indices", "inverse", "counts"],
                  expect={"y": np.array([4.5], np.float32), "indices": np.array([0], np.int64),
                          "inverse": np.array([0], np.int64), "counts": np.array([1], np.int64)}))
    x = np.full((5, 3), 2, np.int16)
    y, first, inv, cnt = unique(x, 0)
    c.append(Case("unique i16 axis=0 all rows equal: one row", "unique", attrs={"axis": 0}, inputs=[("x", x)],
                  outputs=["y", "indices", "inverse", "counts"],
                  expect={"y": y, "indices": first, "inverse": inv, "counts": cnt}))
    return c


def boxes_for(rng, B, N, center):
    """B x N boxes in clusters (several boxes of one object, each its corners moved by
    up to 3/8, so that many overlap a lot and others not at all), coordinates
    multiples of 1/8: corners [y1, x1, y2, x2] in either order per axis, or
    [x_centre, y_centre, width, height]."""
    K = max(2, N // 4)
    obj = rng.integers(0, 64, (B, K, 2)) / 8.0                    # an object's corner
    size = rng.integers(8, 24, (B, K, 2)) / 8.0                   # its height and width
    which = rng.integers(0, K, (B, N))
    lo = np.take_along_axis(obj, which[..., None], 1) + rng.integers(-3, 4, (B, N, 2)) / 8.0
    hi = lo + np.take_along_axis(size, which[..., None], 1) + rng.integers(-3, 4, (B, N, 2)) / 8.0
    if center:
        c, wh = (lo + hi) / 2, hi - lo                            # halves of 1/8 steps: exact
        return np.concatenate([c[..., ::-1], wh[..., ::-1]], axis=-1).astype(np.float32)
    flip = rng.random((B, N, 2)) < 0.3                            # corners in the other order
    a, b = np.where(flip, hi, lo), np.where(flip, lo, hi)
    return np.concatenate([a, b], axis=-1).astype(np.float32)


def nms_cases():
    c = []
    # (label, B, C, N, max_per, iou, score_th, center)
    specs = [("corners", 1, 1, 12, 12, 0.5, None, 0), ("centres", 1, 1, 12, 12, 0.5, None, 1),
             ("corners score_threshold", 1, 1, 16, 16, 0.4, 0.3, 0),
             ("centres score_threshold", 1, 1, 16, 16, 0.4, 0.3, 1),
             ("corners max=3", 1, 1, 20, 3, 0.6, None, 0), ("centres max=2 score_threshold", 1, 2, 20, 2, 0.3, 0.5, 1),
             ("two batches two classes", 2, 2, 15, 10, 0.5, None, 0),
             ("two batches three classes centres score_threshold max=4", 2, 3, 18, 4, 0.25, 0.2, 1),
             ("iou_threshold=0", 1, 2, 14, 14, 0.0, None, 0), ("iou_threshold=1: nothing suppressed", 1, 1, 10, 10, 1.0, None, 0),
             ("max larger than the boxes", 2, 1, 6, 100, 0.5, None, 0), ("many boxes", 2, 2, 120, 30, 0.45, 0.1, 0)]
    for label, B, C, N, max_per, th, sth, center in specs:
        name = "non_max_suppression f32 %s B=%d C=%d N=%d" % (label, B, C, N)

        def build(B=B, C=C, N=N, max_per=max_per, th=th, sth=sth, center=center, name=name):
            rng = rng_for(name)
            for _ in range(100):
                boxes = boxes_for(rng, B, N, center)
                # scores in steps of 1/32, so ties of equal scores occur
                scores = (rng.integers(0, 33, (B, C, N)) / 32.0).astype(np.float32)
                near = []
                y = nms(boxes, scores, max_per, th, sth, center, near)
                if not any(abs(v - th) < 1e-4 for v in near) or th in (0.0, 1.0):
                    break
            else:
                raise RuntimeError("no boxes away from the threshold")
            ins = [("boxes", boxes), ("scores", scores), ("max_per", np.array(max_per, np.int64)),
                   ("iou", np.array(th, np.float32))]
            if sth is not None:
                ins.append(("score_th", np.array([sth], np.float32)))
            return {"inputs": ins, "expect": {"y": y}}
        c.append(Case(name, "non_max_suppression", attrs={"center_point_box": center} if center else None,
                      build=build))
    # hand-made: equal scores go to the lower box; a box of no area, and disjoint boxes, never suppress
    boxes = np.array([[[0, 0, 2, 2], [2, 2, 0, 0], [0, 0, 2, 1.875], [5, 5, 5, 7], [5, 5, 6, 6], [3, 3, 4, 4]]],
                     np.float32)
    scores = np.array([[[0.5, 0.5, 0.5, 0.9, 0.8, 0.1]]], np.float32)
    ins = [("boxes", boxes), ("scores", scores), ("max_per", np.array([10], np.int64)), ("iou", np.array(0.5, np.float32))]
    c.append(Case("non_max_suppression f32 ties, flipped corners, a box of no area", "non_max_suppression",
                  inputs=ins, expect={"y": nms(boxes, scores, 10, 0.5, None, 0)}))
    c.append(Case("non_max_suppression f32 hand-made expectation", "non_max_suppression", inputs=ins,
                  expect={"y": np.array([[0, 0, 3], [0, 0, 4], [0, 0, 0], [0, 0, 5]], np.int64)}))
    # max_output_boxes_per_class absent (0 boxes), 0, negative; score threshold above every score
    c.append(Case("non_max_suppression f32 max_output_boxes_per_class absent: [0, 3]", "non_max_suppression",
                  inputs=[("boxes", boxes), ("scores", scores)], expect={"y": np.zeros((0, 3), np.int64)}))
    for m in (0, -2):
        c.append(Case("non_max_suppression f32 max_output_boxes_per_class=%d: [0, 3]" % m, "non_max_suppression",
                      inputs=[("boxes", boxes), ("scores", scores), ("max_per", np.array(m, np.int64))],
                      expect={"y": np.zeros((0, 3), np.int64)}))
    c.append(Case("non_max_suppression f32 score_threshold above every score: [0, 3]", "non_max_suppression",
                  inputs=ins + [("score_th", np.array(0.95, np.float32))], expect={"y": np.zeros((0, 3), np.int64)}))
    c.append(Case("non_max_suppression f32 iou_threshold absent (0), score_threshold given", "non_max_suppression",
                  inputs=[("boxes", boxes), ("scores", scores), ("max_per", np.array(10, np.int64)), None,
                          ("score_th", np.array(0.2, np.float32))],
                  expect={"y": nms(boxes, scores, 10, 0.0, 0.2, 0)}))
    # max known at load (a "data" constant): the bound is that value
    rng = rng_for("nms const max")
    b2, s2 = boxes_for(rng, 2, 10, 0), (rng.integers(0, 33, (2, 2, 10)) / 32.0).astype(np.float32)
    c.append(Case("non_max_suppression f32 max_output_boxes_per_class a constant 2", tensors={
        "m": {"dtype": "i64", "shape": [], "data": 2}, "t": {"dtype": "f32", "shape": [1], "data": [0.5]}},
        inputs=[("boxes", b2), ("scores", s2)], graph_inputs=["boxes", "scores"],
        nodes=[{"name": "n0", "op": "non_max_suppression", "inputs": ["boxes", "scores", "m", "t"], "outputs": ["y"]}],
        expect={"y": nms(b2, s2, 2, 0.5, None, 0)}))
    return c


def chain_cases():
    """A dynamic output read by later nodes: they are inferred again at run time."""
    c = []
    rng = rng_for("chains")
    x = few_values(rng, "i32", (20,), k=5)
    y, _, _, _ = unique(x, None)
    c.append(Case("unique then mul: Y * Y", inputs=[("x", x)], outputs=["z"],
                  nodes=[{"name": "u", "op": "unique", "inputs": ["x"], "outputs": ["y"]},
                         {"name": "m", "op": "mul", "inputs": ["y", "y"], "outputs": ["z"]}],
                  expect={"z": y * y}))
    x = sparse(rng, "f32", (4, 5))
    c.append(Case("non_zero then transpose: np.argwhere", inputs=[("x", x)], outputs=["z"],
                  nodes=[{"name": "nz", "op": "non_zero", "inputs": ["x"], "outputs": ["i"]},
                         {"name": "t", "op": "transpose", "inputs": ["i"], "outputs": ["z"]}],
                  expect={"z": np.argwhere(x).astype(np.int64)}))
    x = few_values(rng, "f32", (6, 5), k=4)
    cond = np.array([True, False, True, True, False, True])
    cx = compress(x, cond, 0)
    c.append(Case("compress then reduce_sum over the compressed axis, and the compressed rows", inputs=[("x", x), ("cond", cond)],
                  outputs=["s", "c"],
                  nodes=[{"name": "cp", "op": "compress", "inputs": ["x", "cond"], "outputs": ["c"], "attrs": {"axis": 0}},
                         {"name": "r", "op": "reduce_sum", "inputs": ["c"], "outputs": ["s"],
                          "attrs": {"axes": [0], "keepdims": 0}}],
                  expect={"s": cx.astype(np.float64).sum(axis=0).astype(np.float32), "c": cx}))
    x = few_values(rng, "i64", (30,), k=7)
    cond = rng.random(30) < 0.6
    u = unique(np.compress(cond, x), None, 0)
    c.append(Case("compress then unique sorted=0 (two data-dependent ops in a row)", inputs=[("x", x), ("cond", cond)],
                  outputs=["y", "counts"],
                  nodes=[{"name": "cp", "op": "compress", "inputs": ["x", "cond"], "outputs": ["c"]},
                         {"name": "u", "op": "unique", "inputs": ["c"], "outputs": ["y", "i", "v", "counts"],
                          "attrs": {"sorted": 0}}],
                  expect={"y": u[0], "counts": u[3]}))
    x = sparse(rng, "i32", (3, 4, 2))
    nz = non_zero(x)
    c.append(Case("non_zero then non_zero of its indices", inputs=[("x", x)], outputs=["z"],
                  nodes=[{"name": "a", "op": "non_zero", "inputs": ["x"], "outputs": ["i"]},
                         {"name": "b", "op": "non_zero", "inputs": ["i"], "outputs": ["z"]}],
                  expect={"z": non_zero(nz)}))
    boxes = boxes_for(rng, 1, 12, 0)
    scores = (rng.integers(0, 33, (1, 2, 12)) / 32.0).astype(np.float32)
    sel = nms(boxes, scores, 5, 0.5, None, 0)
    c.append(Case("non_max_suppression then cast to f32 and add", inputs=[("boxes", boxes), ("scores", scores),
                                                                        ("max_per", np.array(5, np.int64)),
                                                                        ("iou", np.array(0.5, np.float32))],
                  outputs=["z", "sel"],
                  nodes=[{"name": "n", "op": "non_max_suppression", "inputs": ["boxes", "scores", "max_per", "iou"],
                          "outputs": ["sel"]},
                         {"name": "f", "op": "cast", "inputs": ["sel"], "outputs": ["f"], "attrs": {"to": "f32"}},
                         {"name": "a", "op": "add", "inputs": ["f", "f"], "outputs": ["z"]}],
                  expect={"z": (sel * 2).astype(np.float32), "sel": sel}))
    return c


def cases():
    return non_zero_cases() + compress_cases() + unique_cases() + nms_cases() + chain_cases()
