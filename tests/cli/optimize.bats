#!/usr/bin/env bats
# The graph optimizer (src/opt/optimize.c, ftrun(1) OPTIMIZER): each fusion
# rewrites its expanded form, the fused graph computes what NumPy computes for
# the expanded form, a pattern whose intermediate has another reader is left
# alone, and -O0 rewrites nothing.

load helpers

# mk KIND: writes $T/KIND.onnx (one input x, output y and maybe z), $T/x.npy and
# $T/want.npy, NumPy's value of y computed the expanded way (float64, then f32).
mk() {
    "$PYTHON" - "$1" "$T" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

kind, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
x = (rng.standard_normal((2, 5, 16)) * 2).astype(np.float32)
xd = x.astype(np.float64)
C = lambda name, v: nh.from_array(np.asarray(v, dtype=np.float32), name)
inits, nodes, outs, opset = [], [], ["y"], 13
erf = np.vectorize(__import__("math").erf)
if kind in ("silu", "silu_swapped", "silu_shared"):
    order = ["s", "x"] if kind != "silu_swapped" else ["x", "s"]
    nodes = [h.make_node("Sigmoid", ["x"], ["s"], name="sig"), h.make_node("Mul", order, ["y"], name="swish")]
    want = xd / (1 + np.exp(-xd))
    if kind == "silu_shared":
        outs.append("s")
elif kind in ("hard_swish", "hard_swish_swapped", "hard_sigmoid_other"):
    # x * hard_sigmoid(x) with HardSwish's alpha 1/6 (as f32) and beta 1/2; other alphas stay as they are
    alpha = 0.2 if kind == "hard_sigmoid_other" else 1.0 / 6
    order = ["s", "x"] if kind != "hard_swish_swapped" else ["x", "s"]
    nodes = [h.make_node("HardSigmoid", ["x"], ["s"], name="hsig", alpha=alpha),
             h.make_node("Mul", order, ["y"], name="hswish")]
    want = xd * np.clip(np.float32(alpha).astype(np.float64) * xd + 0.5, 0, 1)
elif kind in ("gelu", "gelu_half_first", "gelu_shared"):
    nodes = [h.make_node("Div", ["x", "sqrt2"], ["d"]), h.make_node("Erf", ["d"], ["e"]),
             h.make_node("Add", ["e", "one"], ["a"])]
    inits = [C("sqrt2", 1.4142135), C("one", 1.0), C("half", 0.5)]
    if kind == "gelu_half_first":
        nodes[0] = h.make_node("Mul", ["x", "rsqrt2"], ["d"])
        inits.append(C("rsqrt2", 0.70710677))
        nodes += [h.make_node("Mul", ["x", "half"], ["xh"]), h.make_node("Mul", ["xh", "a"], ["y"], name="gelu_out")]
    else:
        nodes += [h.make_node("Mul", ["x", "a"], ["m"]), h.make_node("Mul", ["m", "half"], ["y"], name="gelu_out")]
    if kind == "gelu_shared":
        nodes.append(h.make_node("Neg", ["e"], ["z"]))
        outs.append("z")
    want = 0.5 * xd * (1 + erf(xd / np.sqrt(2)))
elif kind in ("gelu_tanh", "gelu_tanh_pow"):
    k = np.sqrt(2 / np.pi)
    inits = [C("k", k), C("c", 0.044715), C("one", 1.0), C("half", 0.5), C("three", 3.0)]
    if kind == "gelu_tanh":  # torch.onnx: 0.5 * (x * (1 + tanh(k * (x + c * (x * (x * x))))))
        nodes = [h.make_node("Mul", ["x", "x"], ["x2"]), h.make_node("Mul", ["x", "x2"], ["x3"])]
    else:  # 0.5 * x * (1 + tanh(k * (x + c * pow(x, 3)))), the half first
        nodes = [h.make_node("Pow", ["x", "three"], ["x3"])]
    nodes += [h.make_node("Mul", ["c", "x3"], ["cx3"]), h.make_node("Add", ["x", "cx3"], ["in"]),
              h.make_node("Mul", ["k", "in"], ["u"]), h.make_node("Tanh", ["u"], ["t"]),
              h.make_node("Add", ["one", "t"], ["a"])]
    if kind == "gelu_tanh":
        nodes += [h.make_node("Mul", ["x", "a"], ["m"]), h.make_node("Mul", ["half", "m"], ["y"], name="gelu_out")]
    else:
        nodes += [h.make_node("Mul", ["half", "x"], ["xh"]), h.make_node("Mul", ["xh", "a"], ["y"], name="gelu_out")]
    want = 0.5 * xd * (1 + np.tanh(k * (xd + 0.044715 * xd ** 3)))
elif kind in ("layer_norm", "layer_norm_shared"):
    g = (rng.random(16) + 0.5).astype(np.float32)
    b = (rng.standard_normal(16) * 0.1).astype(np.float32)
    inits = [C("two", 2.0), C("eps", 1e-5), C("gamma", g), C("beta", b)]
    nodes = [h.make_node("ReduceMean", ["x"], ["mu"], axes=[-1]), h.make_node("Sub", ["x", "mu"], ["d"]),
             h.make_node("Pow", ["d", "two"], ["sq"]), h.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
             h.make_node("Add", ["var", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["sd"]),
             h.make_node("Div", ["d", "sd"], ["n"]), h.make_node("Mul", ["n", "gamma"], ["sc"]),
             h.make_node("Add", ["sc", "beta"], ["y"], name="ln_out")]
    if kind == "layer_norm_shared":
        nodes.append(h.make_node("Abs", ["d"], ["z"]))
        outs.append("z")
    d = xd - xd.mean(-1, keepdims=True)
    want = d / np.sqrt((d ** 2).mean(-1, keepdims=True) + 1e-5) * g + b
elif kind == "gemm_transposed":  # gemm(transpose(x), w, b) with trans_a 1: x @ w + b
    x = rng.standard_normal((5, 6)).astype(np.float32)
    w, b = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    xd = x.astype(np.float64)
    inits = [C("w", w), C("b", b)]
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             h.make_node("Gemm", ["t", "w", "b"], ["y"], name="fc", transA=1)]
    want = xd @ w + b
elif kind.startswith("conv_bn"):  # conv (+ bias) then batch_norm then relu; oracle: PyTorch in float64
    import torch
    x = rng.standard_normal((2, 4, 9, 11)).astype(np.float32)
    w = (rng.standard_normal((6, 4, 3, 3)) / 6).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    sc, beta, mean = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.2, 2.0, 6).astype(np.float32)
    bias = kind != "conv_bn_nobias"
    inits = [C("w", w), C("sc", sc), C("beta", beta), C("mean", mean), C("var", var)] + ([C("b", b)] if bias else [])
    nodes = [h.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c", "sc", "beta", "mean", "var"], ["n"], name="bn", epsilon=1e-3),
             h.make_node("Relu", ["n"], ["y"], name="act")]
    T = lambda v: torch.from_numpy(v.astype(np.float64))
    c = torch.nn.functional.conv2d(T(x), T(w), T(b) if bias else None, padding=1)
    n = torch.nn.functional.batch_norm(c, T(mean), T(var), T(sc), T(beta), training=False, eps=1e-3)
    want = np.maximum(n.numpy(), 0)
    if kind == "conv_bn_shared":  # the conv's output has another reader
        nodes.append(h.make_node("Neg", ["c"], ["z"]))
        outs.append("z")
    if kind == "conv_bn_shared_w":  # the weight has another reader
        nodes.append(h.make_node("Conv", ["x", "w"], ["z"], name="conv2", pads=[1, 1, 1, 1]))
        outs.append("z")
elif kind.startswith("conv_add"):  # conv(x) + x (ResNet's residual), maybe then relu; oracle: PyTorch in float64
    import torch
    x = rng.standard_normal((2, 4, 9, 11)).astype(np.float32)
    w = (rng.standard_normal((4, 4, 3, 3)) / 6).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    xd = x.astype(np.float64)
    inits = [C("w", w), C("b", b), C("cb", rng.standard_normal((1, 4, 1, 1)))]
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1])]
    c = torch.nn.functional.conv2d(torch.from_numpy(xd), torch.from_numpy(w.astype(np.float64)),
                                   torch.from_numpy(b.astype(np.float64)), padding=1).numpy()
    other = "cb" if kind == "conv_add_bcast" else "x"
    nodes.append(h.make_node("Add", [other, "c"] if kind == "conv_add_swapped" else ["c", other], ["a"], name="add"))
    want = c + (nh.to_array(inits[2]).astype(np.float64) if other == "cb" else xd)
    if kind == "conv_add":
        nodes[-1].output[0] = "y"
    else:
        nodes.append(h.make_node("Relu", ["a"], ["y"], name="act"))
        want = np.maximum(want, 0)
    if kind == "conv_add_shared":
        nodes.append(h.make_node("Neg", ["c"], ["z"]))
        outs.append("z")
elif kind.startswith("conv_"):  # conv (bias, pads) then an activation; oracle: PyTorch's conv in float64
    import torch
    x = rng.standard_normal((2, 4, 9, 11)).astype(np.float32)
    w = (rng.standard_normal((6, 4, 3, 3)) / 6).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    if kind == "conv_dw_relu6":  # depthwise, stride 2, as MobileNet's
        w = (rng.standard_normal((4, 1, 3, 3)) / 3).astype(np.float32)
        b = rng.standard_normal(4).astype(np.float32)
    xd, group = x.astype(np.float64), w.shape[0] if kind == "conv_dw_relu6" else 1
    stride = 2 if kind == "conv_dw_relu6" else 1
    inits = [C("w", w), C("b", b), C("lo", 0.0), C("hi", 6.0)]
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], group=group,
                         strides=[stride, stride])]
    c = torch.nn.functional.conv2d(torch.from_numpy(xd), torch.from_numpy(w.astype(np.float64)),
                                   torch.from_numpy(b.astype(np.float64)), padding=1, stride=stride,
                                   groups=group).numpy()
    if kind in ("conv_relu", "conv_shared"):
        nodes.append(h.make_node("Relu", ["c"], ["y"], name="act"))
        want = np.maximum(c, 0)
    elif kind in ("conv_relu6", "conv_dw_relu6"):
        nodes.append(h.make_node("Clip", ["c", "lo", "hi"], ["y"], name="act"))
        want = np.clip(c, 0, 6)
    elif kind == "conv_silu":
        nodes += [h.make_node("Sigmoid", ["c"], ["s"]), h.make_node("Mul", ["c", "s"], ["y"], name="act")]
        want = c / (1 + np.exp(-c))
    elif kind == "conv_hardswish":
        nodes.append(h.make_node("HardSwish", ["c"], ["y"], name="act"))
        want = c * np.clip(c + 3, 0, 6) / 6
        opset = 14
    elif kind == "conv_hardsigmoid_mul":  # hardswish as torch.onnx writes it below opset 14
        nodes += [h.make_node("HardSigmoid", ["c"], ["s"], alpha=1.0 / 6), h.make_node("Mul", ["c", "s"], ["y"], name="act")]
        want = c * np.clip(c / 6 + 0.5, 0, 1)
    if kind == "conv_shared":
        nodes.append(h.make_node("Neg", ["c"], ["z"]))
        outs.append("z")
elif kind.startswith("mm_") or kind == "gemm_relu":  # matmul (+ bias) then an activation
    w = (rng.standard_normal((16, 8)) / 4).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    inits = [C("w", w), C("b", b)]
    wd, bd = w.astype(np.float64), b.astype(np.float64)
    if kind == "gemm_relu":
        x = rng.standard_normal((5, 16)).astype(np.float32)
        xd = x.astype(np.float64)
        nodes = [h.make_node("Gemm", ["x", "w", "b"], ["m"], name="fc", alpha=0.5),
                 h.make_node("Relu", ["m"], ["y"], name="act")]
        want = np.maximum(0.5 * (xd @ wd) + bd, 0)
    else:
        if kind == "mm_batched_bias_relu":  # a batch of b matrices: one product per batch
            w = (rng.standard_normal((2, 16, 8)) / 4).astype(np.float32)
            inits[0], wd = C("w", w), w.astype(np.float64)
        order = ["b", "m"] if kind == "mm_bias_gelu" else ["m", "b"]
        nodes = [h.make_node("MatMul", ["x", "w"], ["m"], name="mm"), h.make_node("Add", order, ["s"], name="bias")]
        s = xd @ wd + bd
        if kind == "mm_bias_gelu":  # the expanded erf form: gelu, then into the matmul
            inits += [C("sqrt2", 1.4142135), C("one", 1.0), C("half", 0.5)]
            nodes += [h.make_node("Div", ["s", "sqrt2"], ["d"]), h.make_node("Erf", ["d"], ["e"]),
                      h.make_node("Add", ["e", "one"], ["a"]), h.make_node("Mul", ["s", "a"], ["g"]),
                      h.make_node("Mul", ["g", "half"], ["y"], name="act")]
            want = 0.5 * s * (1 + erf(s / np.sqrt(2)))
        elif kind == "mm_bias":
            nodes[-1].output[0] = "y"
            want = s
        else:
            nodes.append(h.make_node("Relu", ["s"], ["y"], name="act"))
            want = np.maximum(s, 0)
        if kind == "mm_shared":  # the product has another reader: nothing folds
            nodes.append(h.make_node("Neg", ["m"], ["z"]))
            outs.append("z")
elif kind.startswith("softmax") or kind.startswith("log_softmax"):  # ONNX's function bodies, opset 13
    ax = 1 if kind == "softmax_axis1" else -1
    inits = [nh.from_array(np.array([ax], np.int64), "ax")]
    nodes = [h.make_node("ReduceMax", ["x"], ["mx"], axes=[ax]), h.make_node("Sub", ["x", "mx"], ["d"]),
             h.make_node("Exp", ["d"], ["e"]), h.make_node("ReduceSum", ["e", "ax"], ["s"])]
    if kind == "softmax_noshift":  # exp(x) / sum(exp(x)): overflows where softmax does not, left alone
        nodes = [h.make_node("Exp", ["x"], ["e"]), h.make_node("ReduceSum", ["e", "ax"], ["s"])]
    d = xd - xd.max(ax, keepdims=True)
    if kind.startswith("log_softmax"):
        nodes += [h.make_node("Log", ["s"], ["ls"]), h.make_node("Sub", ["d", "ls"], ["y"], name="sm_out")]
        want = d - np.log(np.exp(d).sum(ax, keepdims=True))
    else:
        nodes.append(h.make_node("Div", ["e", "s"], ["y"], name="sm_out"))
        want = np.exp(d) / np.exp(d).sum(ax, keepdims=True)
    if kind in ("softmax_shared", "log_softmax_shared"):  # exp(d) is also an output
        outs.append("e")
elif kind.startswith("rms_norm"):  # x / sqrt(mean(x^2) + eps) [* w]
    w = (rng.random(16) + 0.5).astype(np.float32)
    inits = [C("two", 2.0), C("eps", 1e-6), C("w", w), C("one", 1.0)]
    sq = h.make_node("Mul", ["x", "x"], ["sq"]) if kind != "rms_norm" else h.make_node("Pow", ["x", "two"], ["sq"])
    nodes = [sq, h.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1]), h.make_node("Add", ["ms", "eps"], ["ve"]),
             h.make_node("Sqrt", ["ve"], ["r"])]
    if kind == "rms_norm":  # x / r * w
        nodes += [h.make_node("Div", ["x", "r"], ["n"]), h.make_node("Mul", ["n", "w"], ["y"], name="rms_out")]
    elif kind == "rms_norm_recip":  # w * (x * reciprocal(r))
        nodes += [h.make_node("Reciprocal", ["r"], ["i"]), h.make_node("Mul", ["x", "i"], ["n"]),
                  h.make_node("Mul", ["w", "n"], ["y"], name="rms_out")]
    else:  # (1 / r) * x, torch.rsqrt's export, no weight
        nodes += [h.make_node("Div", ["one", "r"], ["i"]), h.make_node("Mul", ["i", "x"], ["y"], name="rms_out")]
    if kind == "rms_norm_shared":  # r is also an output
        outs.append("r")
    want = xd / np.sqrt((xd ** 2).mean(-1, keepdims=True) + 1e-6)
    if kind in ("rms_norm", "rms_norm_recip"):
        want = want * w
elif kind.startswith("attn"):  # softmax(q k^T * c + mask) v, q, k, v split from x [2, 3, 8, 3 * 6]
    S, D = 8, 6
    x = rng.standard_normal((2, 3, S, 3 * D)).astype(np.float32)
    xd = x.astype(np.float64)
    q, k, v = xd[..., :D], xd[..., D:2 * D], xd[..., 2 * D:]
    inits = [nh.from_array(np.array([D, D, D], np.int64), "split"), C("c", 0.4), C("ninf", -np.inf), C("big", -1e9)]
    nodes = [h.make_node("Split", ["x", "split"], ["q", "k", "v"], axis=-1),
             h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["s"])]
    s = q @ k.transpose(0, 1, 3, 2)
    keep = rng.random((S, S)) < 0.5
    keep[np.arange(S), rng.integers(0, S, S)] = True  # every row keeps a key
    if kind == "attn_nokeep":  # row 3 keeps nothing: attention would give zeros, the expanded form an average
        keep[3] = False
    if kind in ("attn_causal", "attn_shared"):  # torch's masked_fill(mask == 0, -inf): where(masked, -inf, s)
        nodes += [h.make_node("Mul", ["s", "c"], ["s1"]), h.make_node("Where", ["masked", "ninf", "s1"], ["s2"])]
        inits.append(nh.from_array(np.triu(np.ones((S, S), bool), 1)[None, None], "masked"))
        s = np.where(np.tril(np.ones((S, S), bool)), s * np.float64(np.float32(0.4)), -np.inf)
        if kind == "attn_shared":  # the scores are also an output
            outs.append("s1")
    elif kind == "attn_additive":  # s / c + m, m 0 or -inf
        m = np.where(keep, 0, -np.inf).astype(np.float32)
        nodes += [h.make_node("Div", ["s", "c"], ["s1"]), h.make_node("Add", ["s1", "m"], ["s2"])]
        inits.append(nh.from_array(m, "m"))
        s = s / np.float64(np.float32(0.4)) + m
    elif kind == "attn_plain":  # torch's q @ k.transpose(-2, -1) / sqrt(D), no mask
        nodes += [h.make_node("Div", ["s", "sqrtd"], ["s2"])]
        inits.append(C("sqrtd", np.sqrt(D)))
        s = s / np.float64(np.float32(np.sqrt(D)))
    else:  # attn_bool, attn_nokeep: where(keep, s, -1e9), no scale
        nodes.append(h.make_node("Where", ["keep", "s", "big"], ["s2"]))
        inits.append(nh.from_array(keep, "keep"))
        s = np.where(keep, s, -1e9)
    nodes += [h.make_node("Softmax", ["s2"], ["p"], axis=-1), h.make_node("MatMul", ["p", "v"], ["y"], name="attn_out")]
    e = np.exp(s - s.max(-1, keepdims=True))
    want = (e / e.sum(-1, keepdims=True)) @ v
elif kind == "dead":
    nodes = [h.make_node("Exp", ["x"], ["unused"], name="gone"), h.make_node("Relu", ["x"], ["y"])]
    want = np.maximum(xd, 0)
vi = lambda n: h.make_tensor_value_info(n, TensorProto.FLOAT, None)
graph = h.make_graph(nodes, kind, [h.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                     [vi(n) for n in outs], inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
onnx.save(model, f"{out}/{kind}.onnx")
np.save(f"{out}/x.npy", x)
np.save(f"{out}/want.npy", want.astype(np.float32))
EOF
}

# opt_line KIND [LEVEL]: the optimizer line of `ftrun info`.
opt_line() {
    "$FTRUN" info "$T/$1.onnx" ${2:+-O$2} | grep '^optimizer'
}

# written KIND COND: KIND converted to .ftg and unpacked has nodes n (a Python
# list) for which COND holds, and the .ftg runs (-O0) to NumPy's value.
written() {
    "$FTRUN" convert "$T/$1.onnx" -o c.ftg -q
    "$FTRUN" unpack c.ftg -o u -q
    py "import json; n = json.load(open('u/graph.json'))['nodes']; assert $2, n"
    mk $1
    "$FTRUN" c.ftg -i x=x.npy -o o -q -O0 --expect want.npy --rtol 1e-4 --atol 1e-5
}

# same KIND: y at -O2 equals NumPy's expanded form and y at -O0.
same() {
    "$FTRUN" "$T/$1.onnx" -i x=x.npy -o o2 -q --expect want.npy --rtol 1e-4 --atol 1e-5
    "$FTRUN" "$T/$1.onnx" -i x=x.npy -o o0 -q -O0 --expect want.npy --rtol 1e-4 --atol 1e-5
    "$FTRUN" compare o2/y.npy o0/y.npy --rtol 1e-5 --atol 1e-6
}

# one_conv KIND LINE: KIND's optimizer line is LINE, its graph one node, and
# that node agrees with the expanded form (same) in every CPU form of the
# fused conv: oneDNN plain / blocked, conv.c's loops.
one_conv() {
    mk $1
    run opt_line $1
    [ "$output" = "$2" ]
    run "$FTRUN" info "$T/$1.onnx"
    [[ "$output" =~ nodes:\ 1, ]]
    same $1
    local impl
    for impl in native plain blocked; do
        FTRUN_CONV_IMPL=$impl "$FTRUN" "$T/$1.onnx" -i x=x.npy -o o_$impl -q --expect want.npy --rtol 1e-4 --atol 1e-5
    done
}

# gated KIND NAME OP GATE: KIND's mul(x, GATE(x)) became OP (counted by NAME's
# pass), named after the mul, no GATE left, and it computes the expanded form
gated() {
    mk $1
    run opt_line $1
    [ "$output" = "$(counts "$2 1")" ]
    run "$FTRUN" info "$T/$1.onnx"
    [[ "$output" =~ swish\ +$3 ]]
    [[ ! "$output" =~ $4 ]]
    same $1
}

@test "silu: mul(sigmoid(x), x) in either order becomes silu, and computes x*sigmoid(x)" {
    for k in silu silu_swapped; do gated $k silu silu sigmoid; done
}

@test "hard_swish: mul(hard_sigmoid(x; alpha 1/6, beta 1/2), x) in either order becomes hard_swish; other alphas do not" {
    for k in hard_swish hard_swish_swapped; do gated $k hard_swish hard_swish hard_sigmoid; done
    mk hard_sigmoid_other
    run opt_line hard_sigmoid_other
    [ "$output" = "$(counts)" ]
    same hard_sigmoid_other
}

@test "gelu: the erf form (two associations) and the tanh form (x*x*x or pow(x, 3)) become gelu" {
    # gelu, gelu_half_first: x/2 (1 + erf(x/sqrt 2)); gelu_tanh*: approximate tanh
    for k in gelu gelu_half_first gelu_tanh gelu_tanh_pow; do
        mk $k
        run opt_line $k
        [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 1, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ gelu_out\ +gelu ]]
        [[ ! "$output" =~ (erf|tanh)\  ]]
        [[ "$output" =~ nodes:\ 1, ]]
        same $k
    done
}

@test "layer_norm: the opset-13 expansion with scale and bias becomes layer_norm" {
    mk layer_norm
    run opt_line layer_norm
    [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 1, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
    run "$FTRUN" info "$T/layer_norm.onnx"
    [[ "$output" =~ ln_out\ +layer_norm ]]
    [[ "$output" =~ nodes:\ 1, ]]
    same layer_norm
}

# counts "name N, ..." of the optimizer line: every count not named is 0
counts() {
    local line="optimizer (-O2):" n
    for n in conv_taps bn_fold silu hard_swish gelu layer_norm rms_norm softmax log_softmax attention transpose conv_add conv_act qdq_conv matmul_epi dead; do
        local v=0 kv
        for kv in "$@"; do [ "${kv% *}" = $n ] && v=${kv#* }; done
        line="$line $n $v,"
    done
    echo "${line%,}"
}

# fused KIND LINE REGEX: KIND's optimizer line is LINE, `ftrun info` matches
# REGEX (the fused node's name and op), and it computes NumPy's value (same)
fused() {
    mk $1
    run opt_line $1
    [ "$output" = "$2" ]
    run "$FTRUN" info "$T/$1.onnx"
    [[ "$output" =~ $3 ]]
    same $1
}

# left_alone KIND: nothing is rewritten, and the graph still computes NumPy's value
left_alone() {
    mk $1
    run opt_line $1
    [ "$output" = "$(counts)" ]
    "$FTRUN" "$T/$1.onnx" -i x=x.npy -o o2 -q
    py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-6)'
}

@test "softmax, log_softmax: ONNX's function bodies (max subtracted, over the last or another axis) become the op" {
    for k in softmax softmax_axis1 log_softmax; do
        case $k in log_*) want=$(counts "log_softmax 1") ;; *) want=$(counts "softmax 1") ;; esac
        fused $k "$want" "nodes: 1,.*sm_out +${k%_axis1} "
    done
    # the axis is kept: written out, the fused node of softmax_axis1 says axis 1 - 3 = -2
    written softmax_axis1 'len(n) == 1 and n[0]["op"] == "softmax" and n[0]["attrs"]["axis"] == -2'
}

@test "softmax: not without the max subtracted, nor when exp(d) is read outside the pattern" {
    for k in softmax_noshift softmax_shared log_softmax_shared; do
        left_alone $k
    done
}

@test "rms_norm: x / sqrt(mean(x^2) + eps), by division, reciprocal or 1 / r, with or without a weight" {
    for k in rms_norm rms_norm_recip rms_norm_div1; do
        fused $k "$(counts "rms_norm 1")" "nodes: 1,.*rms_out +rms_norm "
    done
    written rms_norm_recip 'len(n) == 1 and n[0]["op"] == "rms_norm" and len(n[0]["inputs"]) == 2 and abs(n[0]["attrs"]["epsilon"] - 1e-6) < 1e-12'
    left_alone rms_norm_shared
}

@test "attention: softmax(q k^T scaled + mask) v becomes attention; the causal mask becomes causal = 1" {
    for k in attn_causal attn_additive attn_bool attn_plain; do
        fused $k "$(counts "attention 1")" "attn_out +attention "
        [[ ! "$output" =~ softmax\ \  ]]
        # k^T was k transposed by [0, 1, 3, 2]: attention reads k, and no transpose is left to copy it
        [[ "$output" =~ nodes:\ 2, ]]
        [[ ! "$output" =~ transpose\ \  ]]
    done
    # written out: scale 0.4 (or 1 / 0.4, 1 / sqrt(6)), the causal one without a mask input, attention reading k
    written attn_causal 'n[-1]["op"] == "attention" and n[-1]["attrs"]["causal"] == 1 and n[-1]["inputs"] == ["q", "k", "v"] and abs(n[-1]["attrs"]["scale"] - 0.4) < 1e-6 and not [t for t in n if t["op"] == "transpose"]'
    written attn_additive 'n[-1]["op"] == "attention" and len(n[-1]["inputs"]) == 4 and abs(n[-1]["attrs"]["scale"] - 2.5) < 1e-5'
    written attn_plain '[t["op"] for t in n] == ["split", "attention"] and n[-1]["inputs"] == ["q", "k", "v"] and abs(n[-1]["attrs"]["scale"] - 6 ** -0.5) < 1e-6'
}

@test "attention: k^T made by another permutation keeps its transpose, which now makes k" {
    # k [B,T,H,D] transposed by [0, 2, 3, 1] to [B,H,D,T]: attention reads k through a transpose by [0, 2, 1, 3]
    "$PYTHON" - "$T" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh
rng = np.random.default_rng(3)
q = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
k = rng.standard_normal((2, 7, 3, 4)).astype(np.float32)
v = rng.standard_normal((2, 3, 7, 4)).astype(np.float32)
nodes = [h.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]), h.make_node("MatMul", ["q", "kt"], ["s"]),
         h.make_node("Mul", ["s", "c"], ["s2"]), h.make_node("Softmax", ["s2"], ["p"], axis=-1),
         h.make_node("MatMul", ["p", "v"], ["y"], name="attn_out")]
vi = lambda n, a: h.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
g = h.make_graph(nodes, "attn_perm", [vi("q", q), vi("k", k), vi("v", v)],
                 [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [nh.from_array(np.array(0.5, np.float32), "c")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), sys.argv[1] + "/attn_perm.onnx")
s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 3, 1) * 0.5
e = np.exp(s - s.max(-1, keepdims=True))
for n, a in (("q", q), ("k", k), ("v", v)):
    np.save(f"{sys.argv[1]}/{n}.npy", a)
np.save(sys.argv[1] + "/want.npy", ((e / e.sum(-1, keepdims=True)) @ v.astype(np.float64)).astype(np.float32))
EOF
    run opt_line attn_perm
    [ "$output" = "$(counts "attention 1")" ]
    "$FTRUN" convert "$T/attn_perm.onnx" -o c.ftg -q
    "$FTRUN" unpack c.ftg -o u -q
    py 'n = json.load(open("u/graph.json"))["nodes"]; assert [t["op"] for t in n] == ["transpose", "attention"] and n[0]["attrs"]["perm"] == [0, 2, 1, 3], n'
    "$FTRUN" "$T/attn_perm.onnx" -i q=q.npy -i k=k.npy -i v=v.npy -o o -q --expect want.npy --rtol 1e-4 --atol 1e-5
}

@test "attention: not when a row of the mask keeps no key or the scores are read outside the pattern" {
    for k in attn_nokeep attn_shared; do
        left_alone $k
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ softmax\ \  ]]
    done
}

@test "a PyTorch opset-13 export (encoder layer, LayerNorm, tanh GELU) is fused and still computes what PyTorch does" {
    "$PYTHON" - <<'EOF'
import numpy as np, torch
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.enc = torch.nn.TransformerEncoderLayer(64, 4, 256, batch_first=True, dropout=0.0, activation="gelu")
        s.ln, s.act, s.lin = torch.nn.LayerNorm(64), torch.nn.GELU(approximate="tanh"), torch.nn.Linear(64, 64)
    def forward(s, x):
        return s.lin(s.act(s.ln(s.enc(x))))
m = M().eval()
for ln in (m.enc.norm1, m.enc.norm2, m.ln):
    with torch.no_grad():
        ln.weight.uniform_(0.5, 1.5), ln.bias.normal_(0, 0.1)
x = torch.randn(1, 16, 64)
torch.onnx.export(m, x, "m.onnx", opset_version=13, input_names=["x"], output_names=["y"])
np.save("x.npy", x.numpy())
with torch.no_grad():
    np.save("want.npy", m(x).numpy())
EOF
    run "$FTRUN" info m.onnx
    [[ "$output" =~ optimizer\ \(-O2\):\ conv_taps\ 0,\ bn_fold\ 0,\ silu\ 0,\ hard_swish\ 0,\ gelu\ 2,\ layer_norm\ 3,\ rms_norm\ 0,\ softmax\ 0,\ log_softmax\ 0,\ attention\ 0,\ transpose\ 0,\ conv_add\ 0,\ conv_act\ 0,\ qdq_conv\ 0,\ matmul_epi\ 5,\ dead\ 0 ]]
    [[ ! "$output" =~ reduce_mean ]]
    "$FTRUN" m.onnx -i x=x.npy -o o2 -q --expect want.npy --rtol 1e-4 --atol 1e-4
    "$FTRUN" m.onnx -i x=x.npy -o o0 -q -O0 --expect want.npy --rtol 1e-4 --atol 1e-4
}

@test "a pattern whose intermediate has another reader or is an output is not rewritten" {
    for k in silu_shared gelu_shared layer_norm_shared; do
        mk $k
        run opt_line $k
        # layer_norm_shared: d = x - mean(x) is also an output, so no layer_norm; what is
        # left, d / sqrt(mean(d^2) + eps) * gamma, is the rms_norm of d
        if [ $k = layer_norm_shared ]; then want=$(counts "rms_norm 1"); else want=$(counts); fi
        [ "$output" = "$want" ]
        "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o2 -q
        py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-5)'
    done
}

@test "transpose: of a constant folds into the constant; of a gemm operand folds into trans_a" {
    npy w.npy 'np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)'
    npy x.npy 'np.random.default_rng(4).standard_normal((4, 2, 3)).astype(np.float32)'
    graph tc.json <<'EOF'
{"ftrun": 1, "name": "tc",
 "tensors": {"x": {"dtype": "f32", "shape": [4, 2, 3]}, "w": {"dtype": "f32", "shape": [2, 3, 4], "file": "w.npy"}},
 "inputs": ["x"], "outputs": ["y"],
 "nodes": [{"name": "wt", "op": "transpose", "inputs": ["w"], "outputs": ["w_t"], "attrs": {"perm": [2, 0, 1]}},
           {"name": "sum", "op": "add", "inputs": ["x", "w_t"], "outputs": ["y"]}]}
EOF
    run "$FTRUN" info tc.json
    [[ "$output" =~ optimizer\ \(-O2\):\ conv_taps\ 0,\ bn_fold\ 0,\ silu\ 0,\ hard_swish\ 0,\ gelu\ 0,\ layer_norm\ 0,\ rms_norm\ 0,\ softmax\ 0,\ log_softmax\ 0,\ attention\ 0,\ transpose\ 1,\ conv_add\ 0,\ conv_act\ 0,\ qdq_conv\ 0,\ matmul_epi\ 0,\ dead\ 0 ]]
    [[ "$output" =~ nodes:\ 1, ]]
    npy want.npy 'np.load("x.npy") + np.load("w.npy").transpose(2, 0, 1)'
    "$FTRUN" tc.json -i x=x.npy -o o2 -q --expect want.npy --rtol 0 --atol 0
    "$FTRUN" tc.json -i x=x.npy -o o0 -q -O0 --expect want.npy --rtol 0 --atol 0
    mk gemm_transposed
    run opt_line gemm_transposed
    [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 1, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
    run "$FTRUN" info "$T/gemm_transposed.onnx"
    [[ "$output" =~ nodes:\ 1, ]]
    same gemm_transposed
}

@test "conv_act: relu, clip (relu6), sigmoid-mul (silu) and hard_swish after a conv fold into the conv" {
    for k in conv_relu conv_relu6 conv_dw_relu6 conv_silu conv_hardswish conv_hardsigmoid_mul; do
        mk $k
        run opt_line $k
        if [ $k = conv_hardsigmoid_mul ]; then
            [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 1, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 1, qdq_conv 0, matmul_epi 0, dead 0" ]
        elif [ $k = conv_silu ]; then
            [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 1, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 1, qdq_conv 0, matmul_epi 0, dead 0" ]
        else
            [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 1, qdq_conv 0, matmul_epi 0, dead 0" ]
        fi
        # one node, a conv named after the conv with the activation fused into it
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ nodes:\ 1, ]]
        case $k in
        conv_silu) [[ "$output" =~ conv\+silu\ +conv ]] ;;
        conv_hardswish | conv_hardsigmoid_mul) [[ "$output" =~ conv\+hard_swish\ +conv ]] ;;
        conv_relu) [[ "$output" =~ conv\+relu\ +conv ]] ;;
        *) [[ "$output" =~ conv\+clip\ +conv ]] ;;
        esac
        same $k
    done
    # the fused graph written out carries the activation and runs the same
    written conv_relu6 'len(n) == 1 and n[0]["attrs"]["activation"] == "clip" and n[0]["attrs"]["activation_min"] == 0 and n[0]["attrs"]["activation_max"] == 6'
}

@test "ftrun test -O: a test case runs its graph optimized (default) or as read (-O0)" {
    mk conv_silu
    mkdir -p case/test_data_set_0
    cp "$T/conv_silu.onnx" case/model.onnx
    py 'from onnx import numpy_helper as nh
for name, f in (("input_0", "x.npy"), ("output_0", "want.npy")):
    open("case/test_data_set_0/%s.pb" % name, "wb").write(nh.from_array(np.load(f)).SerializeToString())'
    for level in "" -O0 -O1 -O2; do
        run "$FTRUN" test -d cpu $level --rtol 1e-4 --atol 1e-5 case
        [ "$status" -eq 0 ]
        [[ "$output" =~ "1 passed, 0 failed" ]]
    done
    run "$FTRUN" test -d cpu -O3 case
    [ "$status" -eq 2 ]
    [[ "$output" =~ "-O: '3' is not an optimizer level" ]]
}

@test "conv_act: a conv whose output has another reader keeps its activation node" {
    mk conv_shared
    run opt_line conv_shared
    [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
    run "$FTRUN" info "$T/conv_shared.onnx"
    [[ "$output" =~ act\ +relu ]]
    "$FTRUN" "$T/conv_shared.onnx" -i x=x.npy -o o2 -q
    py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-5)'
}

@test "bn_fold: batch_norm after a conv goes into its weights and bias (with or without a bias); the relu then fuses" {
    for k in conv_bn conv_bn_nobias; do
        one_conv $k "optimizer (-O2): conv_taps 0, bn_fold 1, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 1, qdq_conv 0, matmul_epi 0, dead 0"
    done
    # written out (convert, pack), the folded graph keeps its folded weights
    # and no batch_norm, and runs to the same values at -O0
    "$FTRUN" convert "$T/conv_bn_nobias.onnx" -o c.ftg -q
    "$FTRUN" unpack c.ftg -o u -q
    py 'import json; n = json.load(open("u/graph.json"))["nodes"]; assert [x["op"] for x in n] == ["conv"] and len(n[0]["inputs"]) == 3, n'
    mk conv_bn_nobias
    "$FTRUN" c.ftg -i x=x.npy -o o -q -O0 --expect want.npy --rtol 1e-4 --atol 1e-5
}

@test "bn_fold: not when the conv's output or its weight has another reader" {
    for k in conv_bn_shared conv_bn_shared_w; do
        mk $k
        run opt_line $k
        [[ "$output" =~ "bn_fold 0," ]]
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ batch_norm ]]
        "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o2 -q
        py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-5)'
    done
}

@test "conv_add: conv + residual (+ relu) becomes one conv with the residual as input 3, either operand order" {
    for k in conv_add_relu conv_add_swapped conv_add; do
        act=1
        [ $k = conv_add ] && act=0
        one_conv $k "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 1, conv_act $act, qdq_conv 0, matmul_epi 0, dead 0"
    done
    # the fused graph written out has the residual as the conv's input 3, bias kept
    "$FTRUN" convert "$T/conv_add_relu.onnx" -o c.ftg -q
    "$FTRUN" unpack c.ftg -o u -q
    py 'import json; n = json.load(open("u/graph.json"))["nodes"]; assert len(n) == 1 and n[0]["op"] == "conv" and n[0]["inputs"] == ["x", "w", "b", "x"] and n[0]["attrs"]["activation"] == "relu", n'
    mk conv_add_relu
    "$FTRUN" c.ftg -i x=x.npy -o o -q -O0 --expect want.npy --rtol 1e-4 --atol 1e-5
}

@test "conv_add: not when the conv's output has another reader or the other operand broadcasts" {
    for k in conv_add_shared conv_add_bcast; do
        mk $k
        run opt_line $k
        [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ add\ +add ]]
        "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o2 -q
        py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-5)'
    done
}

@test "matmul_epi: a constant bias add and relu or gelu after a matmul, relu after a gemm, fold into the product" {
    for k in mm_bias_relu mm_bias_gelu mm_bias mm_batched_bias_relu gemm_relu; do
        mk $k
        run opt_line $k
        case $k in
        mm_bias_relu | mm_batched_bias_relu) want="gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 2," ;;
        mm_bias_gelu) want="gelu 1, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 2," ;;
        *) want="gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 1," ;;
        esac
        [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, $want dead 0" ]
        # one node, the product, named after it with the ops fused into it
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" =~ nodes:\ 1, ]]
        case $k in
        gemm_relu) [[ "$output" =~ fc\+relu\ +gemm ]] ;;
        mm_bias) [[ "$output" =~ mm\+add\ +matmul ]] ;;
        mm_bias_gelu) [[ "$output" =~ mm\+add\+gelu\ +matmul ]] ;;
        *) [[ "$output" =~ mm\+add\+relu\ +matmul ]] ;;
        esac
        same $k
    done
    # the fused graph written out carries the bias input and the activation, and runs the same
    written mm_bias_gelu 'len(n) == 1 and n[0]["op"] == "matmul" and len(n[0]["inputs"]) == 3 and n[0]["attrs"]["activation"] == "gelu"'
}

@test "matmul_epi: a product whose output has another reader keeps its add and activation" {
    mk mm_shared
    run opt_line mm_shared
    [ "$output" = "optimizer (-O2): conv_taps 0, bn_fold 0, silu 0, hard_swish 0, gelu 0, layer_norm 0, rms_norm 0, softmax 0, log_softmax 0, attention 0, transpose 0, conv_add 0, conv_act 0, qdq_conv 0, matmul_epi 0, dead 0" ]
    run "$FTRUN" info "$T/mm_shared.onnx"
    [[ "$output" =~ nodes:\ 4, ]]
    "$FTRUN" "$T/mm_shared.onnx" -i x=x.npy -o o2 -q
    py 'assert np.allclose(np.load("o2/y.npy"), np.load("want.npy"), rtol=1e-4, atol=1e-5)'
}

@test "dead nodes go at -O1 and -O2, not at -O0" {
    mk dead
    run opt_line dead 1
    [ "$output" = "optimizer (-O1): dead 1" ]
    run "$FTRUN" info "$T/dead.onnx"
    [[ "$output" =~ dead\ 1 ]]
    [[ ! "$output" =~ gone ]]
    run "$FTRUN" info "$T/dead.onnx" -O0
    [[ "$output" =~ gone\ +exp ]]
    same dead
}

@test "--check=O0 compares the optimized run with the graph as read, on the CPU" {
    mk layer_norm
    run "$FTRUN" "$T/layer_norm.onnx" -i x=x.npy -o o --check=O0
    [ "$status" -eq 0 ]
    [[ "$output" =~ "check: 1 output on cpu match the cpu -O0 reference" ]]
    # the fused layer_norm rounds otherwise than its expansion: with no tolerance
    # the two differ, which they cannot if the reference were the fused graph again
    run "$FTRUN" "$T/layer_norm.onnx" -i x=x.npy -o o --check=O0 --rtol 0 --atol 0
    [ "$status" -eq 1 ]
    [[ "$output" =~ "check: output 'y' on cpu against cpu -O0:" ]]
    [[ "$output" =~ "check: 1 of 1 output on cpu differ from the cpu -O0 reference" ]]
    run "$FTRUN" "$T/layer_norm.onnx" -i x=x.npy -o o --check --rtol 0 --atol 0
    [ "$status" -eq 0 ]
    # the outputs written are the optimized run's
    "$FTRUN" compare o/y.npy want.npy --rtol 1e-4 --atol 1e-5
    run "$FTRUN" "$T/layer_norm.onnx" -i x=x.npy -o o --check=O0 --check-nodes
    [ "$status" -eq 2 ]
    [[ "$output" =~ "--check-nodes compares node by node" ]]
    run "$FTRUN" "$T/layer_norm.onnx" -i x=x.npy -o o --check=O1
    [ "$status" -eq 2 ]
    [[ "$output" =~ "'O1' is not a reference" ]]
}

@test "-O0 rewrites nothing" {
    for k in silu gelu layer_norm rms_norm softmax log_softmax attn_causal; do
        mk $k
        run opt_line $k 0
        [ "$output" = "optimizer (-O0): off" ]
        run "$FTRUN" info "$T/$k.onnx" -O0
        op=$k
        [ $k = attn_causal ] && op=attention
        [[ ! "$output" =~ \ $op\  ]]
    done
}

@test "convert and pack write the optimized graph, or the graph as read with -O0" {
    mk silu
    "$FTRUN" convert "$T/silu.onnx" -o s2.ftg -q
    "$FTRUN" convert "$T/silu.onnx" -o s0.ftg -q -O0
    run "$FTRUN" info s2.ftg -O0
    [[ "$output" =~ swish\ +silu ]]
    run "$FTRUN" info s0.ftg -O0
    [[ "$output" =~ sigmoid ]]
    "$FTRUN" unpack s0.ftg -o u0 -q
    "$FTRUN" pack u0/graph.json -o p2.ftg -q
    run "$FTRUN" info p2.ftg -O0
    [[ "$output" =~ swish\ +silu ]]
    "$FTRUN" p2.ftg -i x=x.npy -o o -q --expect want.npy --rtol 1e-4 --atol 1e-5
}

@test "-O takes 0, 1 or 2 and only where a graph is read" {
    mk silu
    run "$FTRUN" info "$T/silu.onnx" -O3
    [ "$status" -eq 2 ]
    [[ "$output" =~ -O ]]
    run "$FTRUN" unpack "$T/silu.onnx" -o u -O1
    [ "$status" -eq 2 ]
    run "$FTRUN" compare a.npy b.npy -O1
    [ "$status" -eq 2 ]
}

@test "every pass of info's optimizer line is in --help's -O list and has its entry in ftrun(1), OPTIMIZER" {
    mk silu
    run opt_line silu 2
    [ "$status" -eq 0 ]
    # "optimizer (-O2): conv_taps 0, bn_fold 0, silu 1, ..." -> the pass names
    names=$(printf '%s\n' "$output" | sed -E 's/^optimizer \(-O2\)://; s/ [0-9]+,?//g')
    [ "$(echo $names | wc -w)" -ge 13 ]
    help=$("$FTRUN" --help | sed -n '/^  -O LEVEL/,/^  *--allow-external/p')
    section=$(sed -n '/^\.SH OPTIMIZER/,/^\.SH /p' "$ROOT/man/ftrun.1")
    for p in $names; do
        [[ "$help" =~ [\ ,]$p[,\;] ]] || { echo "--help lacks $p" >&2; false; }
        # an entry's tag: ".B name", or ".BR" naming it among others
        printf '%s\n' "$section" | grep -Eq "^\.BR? (.*[ \"])?$p([ \"].*)?\$" ||
            { echo "ftrun(1) OPTIMIZER has no entry for $p" >&2; false; }
    done
}

# qdq KIND: $T/KIND.onnx, a QDQ conv block as ONNX Runtime's quantizer writes it
# (x f32 -> Q/DQ u8 zero point 0 -> conv with DQ(i8 weights, per-channel
# scales), f32 bias -> relu -> Q/DQ u8), $T/qx.npy, and two NumPy oracles:
# want_int.npy, the integer semantics (exact sums, the bias rounded to
# x_scale * w_scale), and want_f32.npy, the expanded form in float64.
# KIND: qdq (7-bit weights), qdq_wide (a weight of 100), qdq_geom (stride 2,
# pads, group 2, no bias, no relu).
qdq() {
    "$PYTHON" - "$1" "$T" <<'EOF2'
import sys
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh
kind, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
C, M, H = 8, 6, 9
G = 2 if kind == "qdq_geom" else 1
attrs = dict(strides=[2, 2], pads=[1, 0, 2, 1], group=2) if G == 2 else dict(pads=[1, 1, 1, 1])
wq = rng.integers(-64, 65, (M, C // G, 3, 3)).astype(np.int8)
if kind == "qdq_wide":
    wq[0, 0, 0, 0] = 100
ws = rng.uniform(0.002, 0.01, M).astype(np.float32)
b = None if G == 2 else rng.uniform(-0.5, 0.5, M).astype(np.float32)
xs, ys, yz = np.float32(0.02), np.float32(0.05), np.uint8(17)
relu = G == 1
inits = [nh.from_array(np.array(xs), "xs"), nh.from_array(np.uint8(0), "xz"), nh.from_array(wq, "wq"),
         nh.from_array(ws, "ws"), nh.from_array(np.zeros(M, np.int8), "wz"), nh.from_array(np.array(ys), "ys"),
         nh.from_array(np.array(yz), "yz")]
nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
         h.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0)]
cin = ["xd", "w"]
if b is not None:
    inits.append(nh.from_array(b, "b"))
    cin.append("b")
nodes.append(h.make_node("Conv", cin, ["c"], kernel_shape=[3, 3], **attrs))
last = "c"
if relu:
    nodes.append(h.make_node("Relu", ["c"], ["r"]))
    last = "r"
nodes += [h.make_node("QuantizeLinear", [last, "ys", "yz"], ["yq"]), h.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
x = rng.uniform(0, 255 * xs, (2, C, H, H)).astype(np.float32)
g = h.make_graph(nodes, "qdq", [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                 [h.make_tensor_value_info("y", TP.FLOAT, None)], initializer=inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, out + "/" + kind + ".onnx")
np.save(out + "/qx.npy", x)

def conv(xv, wv):  # float64 / int64 direct convolution, NCHW, ONNX pads [t, l, b, r]
    p = attrs["pads"]
    xp = np.pad(xv, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    s = attrs.get("strides", [1, 1])
    oh, ow = (xp.shape[2] - 3) // s[0] + 1, (xp.shape[3] - 3) // s[1] + 1
    y = np.zeros((xv.shape[0], M, oh, ow), xv.dtype)
    cg, mg = C // G, M // G
    for mo in range(M):
        gi = mo // mg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, gi * cg:(gi + 1) * cg, i * s[0]:i * s[0] + 3, j * s[1]:j * s[1] + 3]
                y[:, mo, i, j] = (patch * wv[mo]).sum(axis=(1, 2, 3))
    return y
q = np.clip(np.rint(x.astype(np.float64) / xs), 0, 255)  # x's quantization, zero point 0
acc = conv(q.astype(np.int64), wq.astype(np.int64))
sw = (xs * ws).astype(np.float32).astype(np.float64)
if b is not None:
    acc = acc + np.rint(b.astype(np.float64) / sw).astype(np.int64).reshape(1, M, 1, 1)
mult = ((xs * ws).astype(np.float32) / ys).astype(np.float32).astype(np.float64).reshape(1, M, 1, 1)
qi = np.clip(np.rint(acc * mult) + int(yz), int(yz) if relu else 0, 255)
np.save(out + "/want_int.npy", ((qi - int(yz)) * np.float64(ys)).astype(np.float32))
f = conv(q * np.float64(xs), wq.astype(np.float64) * ws.astype(np.float64).reshape(M, 1, 1, 1))
if b is not None:
    f = f + b.astype(np.float64).reshape(1, M, 1, 1)
if relu:
    f = np.maximum(f, 0)
qf = np.clip(np.rint(f / np.float64(ys)) + int(yz), 0, 255)
np.save(out + "/want_f32.npy", ((qf - int(yz)) * np.float64(ys)).astype(np.float32))
EOF2
}

@test "qdq_conv: ONNX Runtime's QDQ conv (7-bit weights, per-channel scales, bias, relu) becomes qlinear_conv with NumPy's integer values" {
    for k in qdq qdq_geom; do
        qdq $k
        run opt_line $k
        [ "$output" = "$(counts "conv_act $([ $k = qdq ] && echo 1 || echo 0)" "qdq_conv 1" "dead 2")" ]
        run "$FTRUN" info "$T/$k.onnx"
        [[ "$output" == *"qlinear_conv"* ]]
        [[ "$output" == *"+quantize_linear"* ]]
        for impl in auto loops; do
            # exactly the integer semantics; within one quantum (y_scale) of the f32 expanded form
            FTRUN_QCONV_IMPL=$impl "$FTRUN" "$T/$k.onnx" -i x="$T/qx.npy" -o "$T/o_${k}_$impl" -q --expect "$T/want_int.npy" --rtol 0 --atol 0
            "$FTRUN" compare "$T/o_${k}_$impl/y.npy" "$T/want_f32.npy" --rtol 0 --atol 0.0501
        done
        "$FTRUN" "$T/$k.onnx" -i x="$T/qx.npy" -o "$T/o_${k}_O1" -q -O1 --expect "$T/want_f32.npy" --rtol 0 --atol 1e-6
    done
}

@test "qdq_conv: not with a weight beyond 7 bits (oneDNN's pairs of products could saturate without VNNI)" {
    qdq qdq_wide
    run opt_line qdq_wide
    [ "$output" = "$(counts "conv_act 1")" ]
    "$FTRUN" "$T/qdq_wide.onnx" -i x="$T/qx.npy" -o "$T/o" -q --expect "$T/want_f32.npy" --rtol 0 --atol 1e-6
}

# taps KIND: $T/KIND.onnx, one conv whose outer taps read only padding (or
# not), $T/tx.npy and $T/want_t.npy, NumPy's direct convolution (float64) with
# the whole kernel. KIND: t2d (d 24 on 14x14: only the centre tap reads the
# input), t2d_partial (d 6: every tap reads somewhere), t1d (1-D, stride 2,
# pads 9 and 1, k 5 d 3: the first taps read only padding), tgroup (group 2,
# d 8 on 7x5, with a bias).
taps() {
    "$PYTHON" - "$1" "$T" <<'EOF2'
import sys
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh
kind, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(5)
cfg = {"t2d": ([1, 3, 14, 14], [4, 3, 3, 3], dict(dilations=[24, 24], pads=[24, 24, 24, 24]), 1),
       "t2d_partial": ([1, 3, 14, 14], [4, 3, 3, 3], dict(dilations=[6, 6], pads=[6, 6, 6, 6]), 1),
       "t1d": ([2, 2, 9], [3, 2, 5], dict(dilations=[3], pads=[9, 1], strides=[2]), 1),
       "tgroup": ([1, 4, 7, 5], [6, 2, 3, 3], dict(dilations=[8, 8], pads=[8, 8, 8, 8], group=2), 2)}[kind]
xs, ws, attrs, G = cfg
x = rng.standard_normal(xs).astype(np.float32)
w = rng.standard_normal(ws).astype(np.float32)
b = rng.standard_normal(ws[0]).astype(np.float32) if kind == "tgroup" else None
inits = [nh.from_array(w, "w")] + ([nh.from_array(b, "b")] if b is not None else [])
node = h.make_node("Conv", ["x", "w"] + (["b"] if b is not None else []), ["y"], **attrs)
g = h.make_graph([node], kind, [h.make_tensor_value_info("x", TP.FLOAT, xs)], [h.make_tensor_value_info("y", TP.FLOAT, None)],
                 initializer=inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, out + "/" + kind + ".onnx")
np.save(out + "/tx.npy", x)
r = len(xs) - 2
d, s, p = attrs["dilations"], attrs.get("strides", [1] * r), attrs["pads"]
xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p[j], p[r + j]) for j in range(r)])
k = ws[2:]
osz = [(xp.shape[2 + j] - ((k[j] - 1) * d[j] + 1)) // s[j] + 1 for j in range(r)]
y = np.zeros([xs[0], ws[0]] + osz)
cg, mg = xs[1] // G, ws[0] // G
for idx in np.ndindex(*osz):
    for t in np.ndindex(*k):
        sl = tuple(idx[j] * s[j] + t[j] * d[j] for j in range(r))
        for gi in range(G):
            patch = xp[(slice(None), slice(gi * cg, (gi + 1) * cg)) + sl]  # [N, cg]
            wt = w[(slice(gi * mg, (gi + 1) * mg), slice(None)) + t].astype(np.float64)  # [mg, cg]
            y[(slice(None), slice(gi * mg, (gi + 1) * mg)) + idx] += patch @ wt.T
if b is not None:
    y += b.reshape([1, -1] + [1] * r)
np.save(out + "/want_t.npy", y.astype(np.float32))
EOF2
}

@test "conv_taps: kernel taps that read only padding are dropped (atrous convs, 1-D, grouped with a bias), same values as NumPy's whole kernel" {
    for k in t2d t1d tgroup t2d_partial; do
        taps $k
        run opt_line $k
        [ "$output" = "$(counts "conv_taps $([ $k = t2d_partial ] && echo 0 || echo 1)")" ]
        for impl in native plain blocked; do
            FTRUN_CONV_IMPL=$impl "$FTRUN" "$T/$k.onnx" -i x="$T/tx.npy" -o "$T/o_${k}_$impl" -q --expect "$T/want_t.npy" --rtol 1e-4 --atol 1e-5
        done
        "$FTRUN" "$T/$k.onnx" -i x="$T/tx.npy" -o "$T/o_${k}_O1" -q -O1 --expect "$T/want_t.npy" --rtol 1e-4 --atol 1e-5
    done
    # the centre tap alone: the conv counts a 1x1 kernel's flops (4 x 3 x 14 x 14 x 2)
    run "$FTRUN" info "$T/t2d.onnx"
    [[ "$output" =~ y\ f32\[1,4,14,14\]\ +4704\  ]]
}
