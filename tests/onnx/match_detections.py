#!/usr/bin/python3
"""Compares a detector's outputs with PyTorch's as a set of detections.

    /usr/bin/python3 tests/onnx/match_detections.py SET OUT RTOL ATOL

SET is a test_data_set folder (output_0.pb boxes [N, 4], output_1.pb scores
[N], output_2.pb labels [N]: PyTorch's, in float64 rounded to float32); OUT
holds ftrun's boxes.npy, scores.npy and labels.npy. Detections whose scores
are closer than float32 can order may come in either order
(export_torch.py: UNORDERED): each of PyTorch's is matched to one of ftrun's
with the same label and the nearest box. The counts must be equal; every
box coordinate within ATOL + RTOL * |reference|, every score within that
with ATOL unscaled (export_torch.py scales it by the largest output). Exit 0 when they
agree, 1 (a line on stderr saying where) when they do not.
"""
import os
import sys

import numpy as np


def load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    ds, out, rtol, atol = argv[0], argv[1], float(argv[2]), float(argv[3])
    rb, rs, rl = (load_pb(os.path.join(ds, "output_%d.pb" % k)) for k in range(3))
    gb, gs, gl = (np.load(os.path.join(out, n + ".npy")) for n in ("boxes", "scores", "labels"))
    if gb.shape != rb.shape or gs.shape != rs.shape or gl.shape != rl.shape:
        print("match_detections: shapes boxes %s scores %s labels %s, PyTorch's %s %s %s"
              % (gb.shape, gs.shape, gl.shape, rb.shape, rs.shape, rl.shape), file=sys.stderr)
        return 1
    # ATOL is scaled by the largest output magnitude (export_torch.py), the
    # boxes' pixels: the scores, in [0, 1], take it unscaled
    scale = max(1.0, float(np.abs(rb).max(initial=0)), float(np.abs(rs).max(initial=0)))
    satol = atol * max(1.0, float(np.abs(rs).max(initial=0))) / scale
    free = np.ones(len(gl), bool)
    for i in range(len(rl)):
        cand = np.nonzero(free & (gl == rl[i]))[0]
        if cand.size == 0:
            print("match_detections: PyTorch's detection %d (label %d, score %.6g) has no match left"
                  % (i, rl[i], rs[i]), file=sys.stderr)
            return 1
        dist = np.abs(gb[cand] - rb[i]).max(axis=1)
        j = cand[np.argmin(dist)]
        free[j] = False
        bad_box = np.abs(gb[j] - rb[i]) > atol + rtol * np.abs(rb[i])
        bad_score = abs(gs[j] - rs[i]) > satol + rtol * abs(rs[i])
        if bad_box.any() or bad_score:
            print("match_detections: PyTorch's detection %d (label %d) box %s score %.7g; ftrun's nearest %s %.7g"
                  % (i, rl[i], rb[i], rs[i], gb[j], gs[j]), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
