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
    def __init__(self, name, opset, shape, about, input_name="x", warmup=2, iterations=20, atol=0.0):
        """atol: an absolute difference the runtimes' outputs may show on top of
        run.py's tolerance (a quantized output: one quantum)."""
        self.name, self.opset, self.shape, self.about = name, opset, shape, about
        self.atol = atol
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
    # The families of models measured beside ORT but not tuned for (heavier: fewer runs). Two warm-ups
    # at least: ftrun's second run times its conv forms (several seconds on R3D-18), and a timed
    # round that holds it measures the timing, not the model.
    Model("vit_b_16_6", 14, (1, 3, 224, 224), "torchvision vit_b_16 with its first 6 encoder blocks, batch 1, 224x224",
          warmup=2, iterations=6),
    Model("convnext_tiny", 13, (1, 3, 224, 224), "torchvision convnext_tiny, batch 1, 224x224", warmup=2, iterations=6),
    Model("regnet_y_400mf", 13, (1, 3, 224, 224), "torchvision regnet_y_400mf, batch 1, 224x224"),
    Model("maxvit_t", 16, (1, 3, 224, 224), "torchvision maxvit_t, batch 1, 224x224", warmup=2, iterations=6),
    Model("r3d_18", 13, (1, 3, 8, 112, 112), "torchvision r3d_18 (video), batch 1, 8 frames of 112x112",
          warmup=2, iterations=6),
    Model("deeplabv3_mobilenet_v3", 13, (1, 3, 224, 224),
          "torchvision deeplabv3_mobilenet_v3_large (21 classes, no aux head), batch 1, 224x224", warmup=2,
          iterations=10),
    Model("transformer_decoder", 17, (1, 128, 512),
          "nn.TransformerDecoderLayer d_model 512, 8 heads, ffn 2048, causal self-attention, cross-attention "
          "to its own input, batch_first, batch 1, seq 128"),
    Model("wav2vec2_6", 14, (1, 16000),
          "torchaudio wav2vec2_base with its first 6 transformer blocks, batch 1, 1 s of 16 kHz audio",
          warmup=2, iterations=10),
    Model("conformer", 14, (1, 200, 80),
          "torchaudio Conformer: 80 features, 4 heads, ffn 512, 4 layers, kernel 31, batch 1, 200 frames"),
    Model("qdq_conv", 13, (1, 64, 56, 56),
          "int8 QDQ conv block (QuantizeLinear/DequantizeLinear u8 activations, per-channel 7-bit s8 weights "
          "as ONNX Runtime's quantizer writes them with reduce_range): 3 convs 3x3 64->64 with relu, batch 1, 56x56; no PyTorch module; outputs may differ by one quantum (2/255)",
          atol=2.0 / 255 * 1.001),
]}

# Models built directly as ONNX (no PyTorch module: PyTorch eager is skipped).
ONNX_ONLY = {"qdq_conv"}



def module(m):
    """The PyTorch module of model m, in eval mode, weights from its fixed seed."""
    import torch
    seed = sum(ord(ch) for ch in m.name)
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    if m.name in ONNX_ONLY:
        return None
    if m.name in ("resnet18", "mobilenet_v2", "efficientnet_b0", "mobilenet_v3_large", "convnext_tiny",
                  "regnet_y_400mf", "maxvit_t"):
        import torchvision.models as tvm
        mod = getattr(tvm, m.name)(weights=None)
    elif m.name == "vit_b_16_6":
        import torchvision.models as tvm
        mod = tvm.vit_b_16(weights=None)
        mod.encoder.layers = mod.encoder.layers[:6]
    elif m.name == "r3d_18":
        import torchvision.models.video as tvv
        mod = tvv.r3d_18(weights=None)
    elif m.name == "deeplabv3_mobilenet_v3":
        import torchvision.models.segmentation as tvs

        class Seg(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = tvs.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False)

            def forward(self, x):
                return self.net(x)["out"]
        mod = Seg()
    elif m.name == "transformer_decoder":
        class Dec(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.TransformerDecoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                                              dropout=0.0, batch_first=True)
                self.register_buffer("mask", torch.triu(torch.full((128, 128), float("-inf")), 1))

            def forward(self, x):
                return self.layer(x, x, tgt_mask=self.mask)
        mod = Dec()
    elif m.name == "wav2vec2_6":
        import torchaudio

        class W2V(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = torchaudio.models.wav2vec2_base()
                self.net.encoder.transformer.layers = self.net.encoder.transformer.layers[:6]

            def forward(self, x):
                return self.net(x)[0]
        mod = W2V()
    elif m.name == "conformer":
        import torchaudio

        class Conf(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = torchaudio.models.Conformer(input_dim=80, num_heads=4, ffn_dim=512, num_layers=4,
                                                       depthwise_conv_kernel_size=31)
                self.register_buffer("lengths", torch.tensor([200]))

            def forward(self, x):
                return self.net(x, self.lengths)[0]
        mod = Conf()
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
        x = input_array(m)
        if m.name in ONNX_ONLY:
            onnx.save(qdq_conv_model(), os.path.join(tmp, "model.onnx"))
            onnx.checker.check_model(os.path.join(tmp, "model.onnx"))
            np.save(os.path.join(tmp, "input.npy"), x)
            return
        mod = module(m)
        # Exported with gradients enabled: under no_grad, PyTorch's eval-mode
        # TransformerEncoderLayer takes its fused fast path, which has no ONNX export.
        torch.onnx.export(mod, (torch.from_numpy(x),), os.path.join(tmp, "model.onnx"), opset_version=m.opset,
                          input_names=[m.input_name], output_names=["y"], do_constant_folding=True)
        onnx.checker.check_model(os.path.join(tmp, "model.onnx"))
        np.save(os.path.join(tmp, "input.npy"), x)

    return cached_folder(os.path.join(outdir, m.name), key(), fill)


def qdq_conv_model():
    """qdq_conv: x -> Q/DQ (u8) -> [conv 3x3 with DQ(s8 weights, per-channel
    scales) and f32 bias -> relu -> Q/DQ (u8)] x 3 -> y, the QDQ form ONNX
    Runtime's static quantizer writes for a conv block."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.RandomState(11)
    nodes, inits = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    def qdq(x, name, scale):
        s, z = const(name + "_s", np.float32(scale)), const(name + "_z", np.uint8(0))
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"]))
        return name + "_dq"

    cur = qdq("x", "in", 4.0 / 127)
    # u8 with zero point 0: the negative half of the standard-normal input becomes 0, as after a relu
    for i in range(3):
        w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05
        # 7-bit weights (reduce_range): with full-range s8 weights and u8 activations, ONNX Runtime's
        # AVX2 kernels (no VNNI) saturate 16-bit pair sums and its outputs differ from the QDQ
        # graph's by up to 21 quanta on this block; its quantizer's reduce_range avoids that.
        ws = (np.abs(w).reshape(64, -1).max(axis=1) / 63).astype(np.float32)
        wq = np.clip(np.round(w / ws[:, None, None, None]), -63, 63).astype(np.int8)
        wn = "w%d" % i
        nodes.append(helper.make_node("DequantizeLinear", [const(wn + "_q", wq), const(wn + "_s", ws),
                                                            const(wn + "_z", np.zeros(64, np.int8))],
                                      [wn], axis=0))
        b = const("b%d" % i, (rng.standard_normal(64) * 0.1).astype(np.float32))
        nodes.append(helper.make_node("Conv", [cur, wn, b], ["c%d" % i], pads=[1, 1, 1, 1], kernel_shape=[3, 3]))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i]))
        cur = qdq("r%d" % i, "a%d" % i, 2.0 / 255)
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    g = helper.make_graph(nodes, "qdq_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


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
