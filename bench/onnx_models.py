"""The ONNX benchmark models of bench/run.py --onnx: PyTorch modules, exported
once to ONNX under build/bench-onnx/NAME/ (model.onnx, input.npy), cached.

    import onnx_models
    m = onnx_models.MODELS["resnet18"]
    d = onnx_models.export(m, "build/bench-onnx")   # -> folder with model.onnx, input.npy
    module = onnx_models.module(m)                  # the same weights, for PyTorch eager

Weights are random (torchvision's weights=None and fresh nn.Modules) from a
fixed seed per model, BatchNorm/LayerNorm statistics and affine parameters
randomised too (as in the test export script of the ONNX importer,
tests/onnx/export_torch.py, from which randomise_norms and the GPT block
are imported); eval mode, batch fixed (no
dynamic axes). Inputs are float32 from a fixed NumPy seed. A folder is
re-exported only when its "stamp" differs from the SHA-256 of this file and
the torch version; it is written under a temporary name and renamed into
place.
"""
import hashlib
import os
import shutil
import sys

import numpy as np

# The GPT block and the randomised norms are the ONNX tests' own
# (tests/onnx/export_torch.py), so the benchmark runs the models the tests check.
EXPORT_TORCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx", "export_torch.py")
sys.path.insert(0, os.path.dirname(EXPORT_TORCH))
from export_torch import gpt_block_class, randomise_norms  # noqa: E402


class Model:
    def __init__(self, name, opset, shape, about, input_name="x", warmup=2, iterations=20):
        self.name, self.opset, self.shape, self.about = name, opset, shape, about
        self.input_name = input_name
        self.warmup, self.iterations = warmup, iterations


MODELS = {m.name: m for m in [
    Model("resnet18", 13, (1, 3, 224, 224), "torchvision resnet18, batch 1, 224x224"),
    Model("mobilenet_v2", 13, (1, 3, 224, 224), "torchvision mobilenet_v2, batch 1, 224x224"),
    Model("efficientnet_b0", 13, (1, 3, 224, 224), "torchvision efficientnet_b0, batch 1, 224x224"),
    Model("transformer_encoder", 17, (1, 128, 512),
          "nn.TransformerEncoderLayer d_model 512, 8 heads, ffn 2048, batch_first, batch 1, seq 128"),
    Model("gpt_block", 17, (1, 128, 768),
          "GPT-2-style pre-norm block: d 768, 12 heads, causal mask, GELU MLP 3072, batch 1, seq 128"),
    Model("mlp", 13, (256, 1024), "Linear 1024->4096, ReLU, Linear 4096->1024, batch 256"),
    Model("mobilenet_v3_large", 13, (1, 3, 224, 224), "torchvision mobilenet_v3_large, batch 1, 224x224"),
    Model("lstm", 13, (20, 4, 64), "nn.LSTM 2 layers, 64 -> 128, batch 4, 20 steps (the output sequence)",
          iterations=100),
    Model("gru_bidir", 13, (20, 1, 64),
          "nn.GRU 2 layers, bidirectional, 64 -> 128, batch 1, 20 steps (the output sequence)", iterations=100),
]}



def module(m):
    """The PyTorch module of model m, in eval mode, weights from its fixed seed."""
    import torch
    seed = sum(ord(ch) for ch in m.name)
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    if m.name in ("resnet18", "mobilenet_v2", "efficientnet_b0", "mobilenet_v3_large"):
        import torchvision.models as tvm
        mod = getattr(tvm, m.name)(weights=None)
    elif m.name == "transformer_encoder":
        mod = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, dropout=0.0,
                                               batch_first=True)
    elif m.name == "gpt_block":
        mod = gpt_block_class()(768, 12, 128)
    elif m.name in ("lstm", "gru_bidir"):
        cell = torch.nn.LSTM if m.name == "lstm" else torch.nn.GRU

        class Seq(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = cell(input_size=64, hidden_size=128, num_layers=2, bidirectional=m.name == "gru_bidir")

            def forward(self, x):
                return self.rnn(x)[0]
        mod = Seq()
    elif m.name == "mlp":
        mod = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024))
    else:
        raise KeyError(m.name)
    randomise_norms(mod, g)
    return mod.eval()


def input_array(m):
    return np.random.RandomState(7).standard_normal(m.shape).astype(np.float32)


def key():
    import torch
    h = hashlib.sha256()
    for path in (os.path.abspath(__file__), EXPORT_TORCH):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(torch.__version__.encode())
    return h.hexdigest()


def cached_folder(dest, k, fill):
    """dest, filled by fill(tmp) under a temporary name and renamed into place,
    unless dest/stamp already holds k. Returns dest."""
    stamp = os.path.join(dest, "stamp")
    if os.path.exists(stamp) and open(stamp).read().strip() == k:
        return dest
    tmp = dest + ".tmp%d" % os.getpid()
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        fill(tmp)
        with open(os.path.join(tmp, "stamp"), "w") as f:
            f.write(k + "\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(tmp, dest)
    return dest


def export(m, outdir):
    """outdir/NAME with model.onnx (input m.input_name, output "y") and
    input.npy; exported only when missing or stale. Returns the folder."""
    import torch
    import onnx

    def fill(tmp):
        mod = module(m)
        x = input_array(m)
        # Exported with gradients enabled: under no_grad, PyTorch's eval-mode
        # TransformerEncoderLayer takes its fused fast path, which has no ONNX export.
        torch.onnx.export(mod, (torch.from_numpy(x),), os.path.join(tmp, "model.onnx"), opset_version=m.opset,
                          input_names=[m.input_name], output_names=["y"], do_constant_folding=True)
        onnx.checker.check_model(os.path.join(tmp, "model.onnx"))
        np.save(os.path.join(tmp, "input.npy"), x)

    return cached_folder(os.path.join(outdir, m.name), key(), fill)


def export_graph(name, graph, values, outdir, sources):
    """A graph of bench/graphs/ as ONNX, for ONNX Runtime: bench/torchgraph.py's
    interpretation of it traced by torch.onnx.export (opset 17), the graph's
    inputs as the model's inputs, every other value a constant. Writes
    outdir/graph-NAME/ (model.onnx, INPUT.npy per input) when missing or stale
    (stamp: this file, the `sources` files and the torch version). Returns
    (model path, {input: .npy path}); raises what the exporter raises for an op
    it cannot export (rfft, irfft)."""
    import torch
    import onnx
    import torchgraph
    dest = os.path.join(outdir, "graph-" + name)
    names = list(graph.inputs)
    feeds = {k: os.path.join(dest, "input-%d.npy" % i) for i, k in enumerate(names)}
    h = hashlib.sha256(key().encode())
    for s in sources:
        with open(s, "rb") as f:
            h.update(f.read())

    def fill(tmp):
        tg = torchgraph.TorchGraph(graph, "cpu")
        tv = tg.values(np_values=values)

        class Interpreted(torch.nn.Module):
            def forward(self, *xs):
                v = dict(tv)
                v.update(zip(names, xs))
                out = tg.run(v)
                return tuple(out[o] for o in graph.outputs)

        torch.onnx.export(Interpreted(), tuple(tv[i] for i in names), os.path.join(tmp, "model.onnx"),
                          opset_version=17, input_names=names, output_names=list(graph.outputs),
                          do_constant_folding=True)
        onnx.checker.check_model(os.path.join(tmp, "model.onnx"))
        for i, n in enumerate(names):
            np.save(os.path.join(tmp, "input-%d.npy" % i), np.ascontiguousarray(values[n]))

    cached_folder(dest, h.hexdigest(), fill)
    return os.path.join(dest, "model.onnx"), feeds
