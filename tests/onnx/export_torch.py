#!/usr/bin/python3
"""Exports real PyTorch models to ONNX backend-test folders for ftrun's tests.

    /usr/bin/python3 tests/onnx/export_torch.py OUTDIR [MODEL...]   (default: the CI set)
    /usr/bin/python3 tests/onnx/export_torch.py --list               models, one a line
    /usr/bin/python3 tests/onnx/export_torch.py --ops OUTDIR [MODEL...]  ONNX ops each model uses

Each model goes to OUTDIR/NAME/ in the layout of ONNX's backend tests:

    model.onnx
    test_data_set_0/input_0.pb, output_0.pb   (onnx.TensorProto, names as in the graph)
    tolerance                                 "rtol atol" for comparing output_0 (one line)
    unordered                                 (some detectors) detections compared as a set
    ops                                       the ONNX op types the model uses, one a line

Weights are random (torchvision's weights=None and fresh nn.Modules: the recurrent
models are 2-layer bidirectional nn.LSTM and nn.GRU), from a fixed
seed per model; BatchNorm running statistics and affine parameters are randomised
as well so that folding them wrongly cannot go unnoticed. Models are in eval mode.
Inputs are float32 from a fixed NumPy seed. The references are computed by PyTorch
in float64 (the model and the input cast to double), then stored as float32: they
are the exact answer to within float64 rounding, so the tolerance covers only
ftrun's float32 arithmetic (accumulated over the model's depth).

The dynamic-batch model (gpt_block: the batch axis is the symbolic dim "batch")
has one test data set per batch size (test_data_set_0: batch 1, _1: batch 3).

Caching: a folder is written only when its file "stamp" does not hold the SHA-256
of this script and the torch version; a second run with the same script is a
no-op. Folders are written under a temporary name and renamed into place, so an
interrupted export leaves no half folder.
"""
import glob
import hashlib
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (opset, slow): slow models stay out of the default (CI) set and are
# exported by `make test-torch-models`.
MODELS = {
    "resnet18": (13, False),
    "mobilenet_v2": (13, False),
    "squeezenet1_0": (13, False),
    "efficientnet_b0": (13, False),
    "transformer_encoder": (13, False),
    "gpt_block": (13, False),
    "gpt_block_opset17": (17, False),
    "lstm_2layer_bidir": (13, False),
    "gru_2layer_bidir": (13, False),
    "ssdlite320_mobilenet_v3_large": (13, False),
    "retinanet_resnet50_fpn": (13, True),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (13, True),
    "resnet50": (13, True),
    "vit_b_16": (13, True),
}


def script_key():
    import torch
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(torch.__version__.encode())
    return h.hexdigest()


def randomise_norms(model, g):
    """BatchNorm/LayerNorm statistics and affine parameters from generator g."""
    import torch
    for m in model.modules():
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
                if m.weight is not None:
                    m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                    m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)
        elif isinstance(m, torch.nn.LayerNorm) and m.weight is not None:
            with torch.no_grad():
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.1)


def gpt_block_class():
    import torch
    from torch import nn

    class CausalSelfAttention(nn.Module):
        def __init__(self, d, heads, ctx):
            super().__init__()
            self.h = heads
            self.scale = 1.0 / float(d // heads) ** 0.5
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)).view(1, 1, ctx, ctx))

        def forward(self, x):
            b, t, d = x.size()
            q, k, v = self.qkv(x).split(d, dim=2)
            q = q.view(b, t, self.h, d // self.h).transpose(1, 2)
            k = k.view(b, t, self.h, d // self.h).transpose(1, 2)
            v = v.view(b, t, self.h, d // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * self.scale
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
            return self.proj(y)

    class GptBlock(nn.Module):
        def __init__(self, d=64, heads=4, ctx=16):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = CausalSelfAttention(d, heads, ctx)
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    return GptBlock


def set_detections(m, k):
    """How many detections a detector keeps (Faster R-CNN: its ROI heads)."""
    (m.roi_heads if hasattr(m, "roi_heads") else m).detections_per_img = k


def detector(name, g):
    """A torchvision detector on one [3, 160, 160] image, giving (boxes, scores,
    labels) of its 20 best detections, with the norms randomised.
    ssdlite320's random weights collapse to constant features (every score
    1/91), so its convolutions are drawn again with He's variance (fan in), the
    classification layers' then scaled by 0.2; retinanet's classification and
    box layers are scaled by 0.3 and 0.01 (scores far from 0 and 1, boxes
    inside the image). Images resize to 160 x 160, and each class keeps at
    most 100 candidates."""
    import torch
    import torchvision.models.detection as tvd
    m = getattr(tvd, name)(weights=None, weights_backbone=None)
    randomise_norms(m, g)
    with torch.no_grad():
        if name.startswith("ssdlite"):
            for mod in m.modules():
                if isinstance(mod, torch.nn.Conv2d):
                    torch.nn.init.kaiming_normal_(mod.weight, mode="fan_in", nonlinearity="relu")
            for seq in m.head.classification_head.module_list:
                seq[-1].weight.mul_(0.2)
            m.transform.fixed_size = (160, 160)
        elif name.startswith("fasterrcnn"):
            for mod in m.roi_heads.box_head.modules():
                if isinstance(mod, torch.nn.Linear):
                    torch.nn.init.kaiming_normal_(mod.weight, mode="fan_in", nonlinearity="relu")
            m.roi_heads.box_predictor.cls_score.weight.mul_(FRCNN_CLS_SCALE)
            m.roi_heads.box_predictor.bbox_pred.weight.mul_(0.01)
            m.roi_heads.score_thresh = FRCNN_SCORE_THRESH
        else:
            m.head.classification_head.cls_logits.weight.mul_(0.3)
            m.head.regression_head.bbox_reg.weight.mul_(0.01)
            m.transform.min_size, m.transform.max_size = (160,), 160
    m.topk_candidates = 100
    set_detections(m, DETECTIONS)

    class Detector(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            r = self.m([x])[0]
            return r["boxes"], r["scores"], r["labels"]
    return Detector()


DETECTIONS = 20
# Faster R-CNN's random class layer gives every class about 1/91: scaled up so
# that scores spread, and kept above a lowered threshold (torchvision: 0.05)
FRCNN_CLS_SCALE = 10.0
FRCNN_SCORE_THRESH = 0.02
# a seed other than the name's where the name's gives detection scores too close
# to order reproducibly (check_gaps)
SEED_OFFSET = {"ssdlite320_mobilenet_v3_large": 3, "retinanet_resnet50_fpn": 1}
# detectors whose detections include scores too close to order reproducibly
# (Faster R-CNN's random box head scores boxes shifted by a stride alike):
# their folders hold a file "unordered", and the test compares the
# detections as a set (match_detections.py)
UNORDERED = {"fasterrcnn_mobilenet_v3_large_320_fpn"}
# models with several outputs: their names (the others give one output, "y")
OUTPUTS = {"ssdlite320_mobilenet_v3_large": ["boxes", "scores", "labels"],
           "fasterrcnn_mobilenet_v3_large_320_fpn": ["boxes", "scores", "labels"],
           "retinanet_resnet50_fpn": ["boxes", "scores", "labels"]}


def build(name):
    """(model, [input shapes per test data set], input name, dynamic_axes or None, rtol, atol)."""
    import torch
    import torchvision.models as tvm
    seed = sum(ord(ch) for ch in name) + SEED_OFFSET.get(name, 0)
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    img = [(1, 3, 224, 224)]
    if name in ("resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "resnet50", "vit_b_16"):
        m = getattr(tvm, name)(weights=None)
        randomise_norms(m, g)
        return m, img, "input", None, 1e-4, 1e-5
    if name == "transformer_encoder":
        m = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                             batch_first=True)
        randomise_norms(m, g)
        return m, [(2, 10, 64)], "src", None, 1e-4, 1e-5
    if name in ("gpt_block", "gpt_block_opset17"):
        m = gpt_block_class()()
        randomise_norms(m, g)
        return m, [(1, 16, 64), (3, 16, 64)], "x", {"x": {0: "batch"}, "y": {0: "batch"}}, 1e-4, 1e-5
    if name in ("lstm_2layer_bidir", "gru_2layer_bidir"):
        cell = torch.nn.LSTM if name.startswith("lstm") else torch.nn.GRU

        class Recurrent(torch.nn.Module):  # the output sequence of both directions of the last layer
            def __init__(self):
                super().__init__()
                self.rnn = cell(input_size=16, hidden_size=32, num_layers=2, bidirectional=True, batch_first=True)

            def forward(self, x):
                return self.rnn(x)[0]
        return Recurrent(), [(3, 12, 16)], "x", None, 1e-4, 1e-5
    if name == "fasterrcnn_mobilenet_v3_large_320_fpn":
        # its own transform: the shorter side to 320 (here already 320)
        return detector(name, g), [(3, 320, 320)], "image", None, 1e-3, 1e-4
    if name in ("ssdlite320_mobilenet_v3_large", "retinanet_resnet50_fpn"):
        # boxes in pixels through exp and clipping: float32 rounding of a few 1e-4 px
        return detector(name, g), [(3, 160, 160)], "image", None, 1e-3, 1e-4
    raise SystemExit("export_torch: unknown model %r (--list lists them)" % name)


def check_gaps(name, model, x, scores):
    """Detections come sorted by score: two scores closer than float32 can
    tell apart may come in either order, the last kept and the first left out
    included. Refuse such a model or input (choose another seed). For the
    models in UNORDERED only the last kept and the first left out must be
    apart: their detections are compared as a set (match_detections.py)."""
    import torch
    inner = model.m if hasattr(model, "m") else None
    if inner is None:
        return
    set_detections(inner, DETECTIONS + 1)
    with torch.no_grad():
        s = model(torch.from_numpy(x).double())[1].numpy()
    set_detections(inner, DETECTIONS)
    gaps = -np.diff(s)
    if name in UNORDERED:
        gaps = gaps[DETECTIONS - 1:DETECTIONS]
    if gaps.size and gaps.min() < 5e-5:
        raise SystemExit("export_torch: %s: two detection scores differ by %.3g only; their order is not "
                         "reproducible" % (name, gaps.min()))


def onnx_ops(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    ops = set()

    def walk(graph):
        for n in graph.node:
            ops.add(n.op_type if n.domain in ("", "ai.onnx") else n.domain + "." + n.op_type)
            for a in n.attribute:
                if a.g is not None and a.g.node:
                    walk(a.g)
    walk(m.graph)
    return sorted(ops)


def export(name, outdir, key):
    import torch
    import onnx
    from onnx import numpy_helper
    dest = os.path.join(outdir, name)
    stamp = os.path.join(dest, "stamp")
    if os.path.exists(stamp) and open(stamp).read().strip() == key:
        return None
    opset = MODELS[name][0]
    t0 = time.time()
    model, shapes, in_name, dyn, rtol, atol = build(name)
    model.eval()
    for old in glob.glob(dest + ".tmp*"):  # left by an interrupted export
        pid = old.rsplit(".tmp", 1)[1]
        if not pid.isdigit() or not os.path.exists("/proc/" + pid):
            shutil.rmtree(old, ignore_errors=True)
    tmp = dest + ".tmp%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    x0 = torch.from_numpy(np.random.RandomState(7).standard_normal(shapes[0]).astype(np.float32))
    # Exported with gradients enabled: under no_grad, PyTorch's eval-mode
    # TransformerEncoderLayer takes its fused fast path, which has no ONNX export.
    out_names = OUTPUTS.get(name, ["y"])
    torch.onnx.export(model, (x0,), os.path.join(tmp, "model.onnx"), opset_version=opset,
                      input_names=[in_name], output_names=out_names, dynamic_axes=dyn,
                      do_constant_folding=True)
    onnx.checker.check_model(os.path.join(tmp, "model.onnx"))
    t_export = time.time() - t0
    xs = [np.random.RandomState(7 + k).standard_normal(shape).astype(np.float32)
          for k, shape in enumerate(shapes)]
    def outs(y):  # a model's outputs as a list of arrays
        return [t.numpy() for t in y] if isinstance(y, tuple) else [y.numpy()]
    with torch.no_grad():
        y32 = [outs(model(torch.from_numpy(x))) for x in xs]
        m64 = model.double()
        ys = [outs(m64(torch.from_numpy(x).double())) for x in xs]
    for x, y in zip(xs, ys):
        if len(y) > 1:
            check_gaps(name, m64, x, y[1])
    scale = max(float(np.max(np.abs(o), initial=0)) for y in ys for o in y)
    atol *= max(1.0, scale)
    # rtol and atol as ftrun's float32 defaults, atol scaled by the largest
    # output magnitude (near-zero logits carry the rounding of large terms).
    # PyTorch's own float32 run must stay within a tenth of them; integer
    # outputs (a detector's labels) must be equal.
    for k, (x, y, y_32) in enumerate(zip(xs, ys, y32)):
        for o, o32 in zip(y, y_32):
            if o.shape != o32.shape:
                raise SystemExit("export_torch: %s: PyTorch float32 gives shape %s, float64 %s" % (name, o32.shape, o.shape))
            if o.dtype.kind in "iub":
                if not (o == o32).all():
                    raise SystemExit("export_torch: %s: PyTorch float32 and float64 give other integers" % name)
                continue
            worst = float(np.max(np.abs(o32 - o) / (atol + rtol * np.abs(o)), initial=0))
            if worst > 0.1:
                raise SystemExit("export_torch: %s: PyTorch float32 uses %.2f of the tolerance" % (name, worst))
        d = os.path.join(tmp, "test_data_set_%d" % k)
        os.makedirs(d)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, in_name).SerializeToString())
        for j, (o, oname) in enumerate(zip(y, out_names)):
            o = o if o.dtype.kind in "iub" else o.astype(np.float32)
            with open(os.path.join(d, "output_%d.pb" % j), "wb") as f:
                f.write(numpy_helper.from_array(o, oname).SerializeToString())
    with open(os.path.join(tmp, "tolerance"), "w") as f:
        f.write("%g %g\n" % (rtol, atol))
    if name in UNORDERED:
        with open(os.path.join(tmp, "unordered"), "w") as f:
            f.write("detections compared as a set: tests/onnx/match_detections.py\n")
    with open(os.path.join(tmp, "ops"), "w") as f:
        f.write("".join(op + "\n" for op in onnx_ops(os.path.join(tmp, "model.onnx"))))
    with open(os.path.join(tmp, "stamp"), "w") as f:
        f.write(key + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(tmp, dest)
    return t_export, time.time() - t0


def main(argv):
    if argv[:1] == ["--list"]:
        for name, (opset, slow) in MODELS.items():
            print("%s opset %d%s" % (name, opset, " (slow: not in CI)" if slow else ""))
        return 0
    show_ops = argv[:1] == ["--ops"]
    if show_ops:
        argv = argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    outdir, names = argv[0], argv[1:] or [n for n, (_, slow) in MODELS.items() if not slow]
    for n in names:
        if n not in MODELS:
            print("export_torch: unknown model %r (--list lists them)" % n, file=sys.stderr)
            return 2
    os.makedirs(outdir, exist_ok=True)
    import torch
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    key = script_key()
    for n in names:
        t = export(n, outdir, key)
        if show_ops:
            with open(os.path.join(outdir, n, "ops")) as f:
                print("%s: %s" % (n, " ".join(f.read().split())))
        elif t is not None:
            print("# exported %s in %.1f s (%.1f s with the float64 references)" % (n, t[0], t[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
