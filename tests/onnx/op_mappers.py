#!/usr/bin/env python3
"""ONNX op mappers (src/graph/onnx_ops*.c) on the opsets and forms that Debian's
ONNX test data (onnx 1.12, opsets <= 17) does not cover: opset 18-23 ops and
signatures (Gelu, Mish, RMSNormalization, GroupNormalization, Attention, Reduce*
and Pad axes inputs, Split num_outputs, Resize axes, DFT axis input), older-opset
semantics (Softmax/Hardmax coerced to 2-D before opset 13), the bitwise ops
(opset 18) and signed BitShift, the reductions max/min of
ScatterElements/ScatterND (opset 18), GridSample's opset 20 mode names,
Attention's softcap and KV cache (past/present key and value) and
RotaryEmbedding, the short expansions (PRelu and Shrink on integers, Clip
with computed bounds, QuantizeLinear), the losses' optional log_prob output
and i32 targets, STFT of a complex signal, DeformConv (opset 19) and Det, and the legacy
forms of opsets 1-6 (broadcast and axis attributes, Gemm's broadcast,
BatchNormalization's is_test, AveragePool without count_include_pad), 
LinearAttention (opset 27) against its recurrence computed token by token,
blocked QuantizeLinear/DequantizeLinear (block_size), and FlexAttention
(ai.onnx.preview) with GQA at batch 2 (f32 and f16), score_mod/prob_mod graphs
that read the outer graph's values, softmax_precision and a negative scale.
Expected values come from NumPy or
PyTorch, never from ftrun.

Usage: FTRUN=build/ftrun /usr/bin/python3 tests/onnx/op_mappers.py [FILTER]
Prints TAP ("ok N name" / "not ok N name"); exits 1 when a case fails.
"""
import os, re, subprocess, sys, tempfile

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

FTRUN = os.environ.get("FTRUN", "build/ftrun")
NP2T = {np.dtype("float32"): TP.FLOAT, np.dtype("int64"): TP.INT64, np.dtype("bool"): TP.BOOL,
        np.dtype("uint8"): TP.UINT8, np.dtype("int8"): TP.INT8, np.dtype("int32"): TP.INT32,
        np.dtype("float64"): TP.DOUBLE, np.dtype("float16"): TP.FLOAT16}
rng = np.random.default_rng(7)
CASES = []


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def case(name, op, inputs, outputs, opset, attrs=None, consts=None, node_inputs=None):
    """inputs: fed at run time; consts: initializers (known at load)."""
    CASES.append((name, op, inputs, outputs, opset, attrs or {}, consts or {}, node_inputs))


def sdpa(q, k, v, mask=None, causal=False, scale=None, softcap=0.0, past=0):
    """softcap: cap tanh(s / cap) on the scaled scores, before the mask (ONNX's
    order since onnx/onnx#7867: a masked -inf stays -inf). past: causal lets query
    i see keys t <= i + past (the offset-aware mask of onnx/onnx#8068)."""
    s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool), past), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return ((e / e.sum(-1, keepdims=True)) @ v).astype(np.float32)


T = torch.from_numpy
x = f32(3, 4, 5)
case("gelu_20", "Gelu", {"x": x}, {"y": F.gelu(T(x)).numpy()}, 20)
case("gelu_20_tanh", "Gelu", {"x": x}, {"y": F.gelu(T(x), approximate="tanh").numpy()}, 20, {"approximate": "tanh"})
case("mish_18", "Mish", {"x": x}, {"y": (x * np.tanh(np.log1p(np.exp(x)))).astype(np.float32)}, 18)
sc = f32(5)
case("rms_norm_23", "RMSNormalization", {"x": x},
     {"y": (x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * sc).astype(np.float32)}, 23, {}, {"scale": sc})
sc2 = f32(4, 5)
case("rms_norm_23_axis", "RMSNormalization", {"x": x},
     {"y": (x / np.sqrt((x * x).mean((-1, -2), keepdims=True) + 1e-3) * sc2).astype(np.float32)}, 23,
     {"axis": -2, "epsilon": 1e-3}, {"scale": sc2})
xg, s6, b6, s3, b3 = f32(2, 6, 3, 3), f32(6), f32(6), f32(3), f32(3)
case("group_norm_21", "GroupNormalization", {"x": xg},
     {"y": F.group_norm(T(xg), 3, T(s6), T(b6), 1e-5).numpy()}, 21, {"num_groups": 3}, {"scale": s6, "bias": b6})
case("group_norm_18_per_group", "GroupNormalization", {"x": xg},
     {"y": F.group_norm(T(xg), 3, T(np.repeat(s3, 2)), T(np.repeat(b3, 2)), 1e-5).numpy()}, 18,
     {"num_groups": 3}, {"scale": s3, "bias": b3})
q, k, v = f32(2, 4, 5, 8), f32(2, 4, 6, 8), f32(2, 4, 6, 8)
case("attention_23", "Attention", {"q": q, "k": k, "v": v}, {"y": sdpa(q, k, v)}, 23)
qc = f32(2, 4, 6, 8)
case("attention_23_causal", "Attention", {"q": qc, "k": k, "v": v}, {"y": sdpa(qc, k, v, causal=True)}, 23,
     {"is_causal": 1})
m = rng.random((5, 6)) > 0.3
m[:, 0] = True
case("attention_23_bool_mask", "Attention", {"q": q, "k": k, "v": v, "m": m}, {"y": sdpa(q, k, v, m)}, 23)
fm = f32(5, 6)
case("attention_23_float_mask", "Attention", {"q": q, "k": k, "v": v, "m": fm}, {"y": sdpa(q, k, v, fm)}, 23)
kg, vg = f32(2, 2, 6, 8), f32(2, 2, 6, 8)
case("attention_23_gqa_scale", "Attention", {"q": q, "k": kg, "v": vg},
     {"y": sdpa(q, np.repeat(kg, 2, 1), np.repeat(vg, 2, 1), scale=0.3)}, 23, {"scale": 0.3})
q3, k3, v3 = f32(2, 5, 32), f32(2, 6, 16), f32(2, 6, 16)


def heads(a, n):
    return a.reshape(a.shape[0], a.shape[1], n, -1).transpose(0, 2, 1, 3)


o3 = sdpa(heads(q3, 4), np.repeat(heads(k3, 2), 2, 1), np.repeat(heads(v3, 2), 2, 1)).transpose(0, 2, 1, 3)
case("attention_23_3d", "Attention", {"q": q3, "k": k3, "v": v3}, {"y": o3.reshape(2, 5, 32)}, 23,
     {"q_num_heads": 4, "kv_num_heads": 2})
# softcap, KV cache (past_key/past_value in, present_key/present_value out)
fmi = f32(5, 6) * 2
fmi[rng.random((5, 6)) < 0.3] = -np.inf
fmi[:, 1] = 0.0
case("attention_23_softcap_mask", "Attention", {"q": q * 4, "k": k, "v": v, "m": fmi},
     {"y": sdpa(q * 4, k, v, fmi, softcap=1.5)}, 23, {"softcap": 1.5})
qp, kn, vn, pk, pv = f32(2, 4, 3, 8), f32(2, 2, 3, 8), f32(2, 2, 3, 8), f32(2, 2, 5, 8), f32(2, 2, 5, 8)
kf, vf = np.concatenate([pk, kn], 2), np.concatenate([pv, vn], 2)
mp = rng.random((3, 8)) > 0.3
mp[:, 0] = True
case("attention_23_past_present_bool_mask", "Attention", {"q": qp, "k": kn, "v": vn, "m": mp, "pk": pk, "pv": pv},
     {"y": sdpa(qp, np.repeat(kf, 2, 1), np.repeat(vf, 2, 1), mp), "present_key": kf, "present_value": vf}, 23)
case("attention_23_past_no_present", "Attention", {"q": qp, "k": kn, "v": vn, "pk": pk, "pv": pv},
     {"y": sdpa(qp, np.repeat(kf, 2, 1), np.repeat(vf, 2, 1), scale=0.2)}, 23, {"scale": 0.2},
     node_inputs=["q", "k", "v", "", "pk", "pv"])
case("attention_23_past_present_causal", "Attention", {"q": qp, "k": kn, "v": vn, "pk": pk, "pv": pv},
     {"y": sdpa(qp, np.repeat(kf, 2, 1), np.repeat(vf, 2, 1), causal=True, past=5), "present_key": kf,
      "present_value": vf}, 23, {"is_causal": 1}, node_inputs=["q", "k", "v", "", "pk", "pv"])
case("attention_23_present_no_past", "Attention", {"q": qp, "k": kn, "v": vn},
     {"y": sdpa(qp, np.repeat(kn, 2, 1), np.repeat(vn, 2, 1)), "present_key": kn, "present_value": vn}, 23)
q3p, k3n, v3n = f32(2, 3, 32), f32(2, 3, 16), f32(2, 3, 16)
k3f, v3f = np.concatenate([pk[:, :, :4], heads(k3n, 2)], 2), np.concatenate([pv[:, :, :4], heads(v3n, 2)], 2)
o3p = sdpa(heads(q3p, 4), np.repeat(k3f, 2, 1), np.repeat(v3f, 2, 1), softcap=3.0).transpose(0, 2, 1, 3)
case("attention_23_3d_past_present_softcap", "Attention",
     {"q": q3p, "k": k3n, "v": v3n, "pk": np.ascontiguousarray(pk[:, :, :4]), "pv": np.ascontiguousarray(pv[:, :, :4])},
     {"y": o3p.reshape(2, 3, 32), "present_key": k3f, "present_value": v3f}, 23,
     {"q_num_heads": 4, "kv_num_heads": 2, "softcap": 3.0}, node_inputs=["q", "k", "v", "", "pk", "pv"])
case("reduce_mean_18_axes", "ReduceMean", {"x": x}, {"y": x.mean(1, keepdims=True)}, 18, {},
     {"axes": np.array([1], np.int64)})
case("reduce_max_18_all", "ReduceMax", {"x": x}, {"y": x.max(keepdims=True)}, 18)
case("reduce_l2_18", "ReduceL2", {"x": x}, {"y": np.sqrt((x * x).sum(2))}, 18, {"keepdims": 0},
     {"axes": np.array([-1], np.int64)})
case("reduce_log_sum_18", "ReduceLogSum", {"x": np.abs(x)}, {"y": np.log(np.abs(x).sum(0))}, 18, {"keepdims": 0},
     {"axes": np.array([0], np.int64)})
case("reduce_sum_13_noop", "ReduceSum", {"x": x}, {"y": x}, 13, {"noop_with_empty_axes": 1},
     {"axes": np.array([], np.int64)})
xs = f32(7, 3)
case("split_18_num_outputs", "Split", {"x": xs}, {"a": xs[:3], "b": xs[3:6], "c": xs[6:]}, 18, {"num_outputs": 3})
xp = f32(2, 3, 4)
case("pad_18_axes", "Pad", {"x": xp}, {"y": np.pad(xp, ((0, 0), (0, 0), (1, 2)), constant_values=1.5)}, 18, {},
     {"pads": np.array([1, 2], np.int64), "cv": np.array(1.5, np.float32), "axes": np.array([2], np.int64)})
case("pad_2_reflect", "Pad", {"x": xp}, {"y": np.pad(xp, ((0, 0), (1, 1), (2, 0)), mode="reflect")}, 7,
     {"mode": "reflect", "pads": [0, 1, 2, 0, 1, 0]})
xr = f32(1, 2, 3, 4)
case("resize_18_axes", "Resize", {"x": xr}, {"y": np.repeat(np.repeat(xr, 2, 2), 2, 3)}, 18,
     {"axes": [2, 3], "mode": "nearest"}, {"roi": np.array([], np.float32), "scales": np.array([2, 2], np.float32)},
     ["x", "roi", "scales"])
case("resize_18_sizes_axes", "Resize", {"x": xr},
     {"y": F.interpolate(T(xr), size=(6, 8), mode="bilinear", align_corners=False).numpy()}, 18,
     {"axes": [2, 3], "mode": "linear"}, {"sizes": np.array([6, 8], np.int64)}, ["x", "", "", "sizes"])
case("upsample_7_attr", "Upsample", {"x": xr}, {"y": np.repeat(np.repeat(xr, 2, 2), 3, 3)}, 7,
     {"scales": [1.0, 1.0, 2.0, 3.0]})
xd = f32(2, 8, 1)
full = np.fft.fft(xd[..., 0], axis=1)
case("dft_20_real_full", "DFT", {"x": xd}, {"y": np.stack([full.real, full.imag], -1).astype(np.float32)}, 20, {},
     {"len": np.array(8, np.int64), "axis": np.array(1, np.int64)}, ["x", "len", "axis"])
one = np.fft.rfft(xd[..., 0], axis=1)
case("dft_20_onesided", "DFT", {"x": xd}, {"y": np.stack([one.real, one.imag], -1).astype(np.float32)}, 20,
     {"onesided": 1}, {"axis": np.array(-2, np.int64)}, ["x", "", "axis"])
xc = f32(2, 8, 2)
inv = np.fft.ifft(xc[..., 0] + 1j * xc[..., 1], axis=1)
case("dft_20_inverse", "DFT", {"x": xc}, {"y": np.stack([inv.real, inv.imag], -1).astype(np.float32)}, 20,
     {"inverse": 1}, {"axis": np.array(1, np.int64)}, ["x", "", "axis"])
pad = np.fft.fft(np.concatenate([xd[..., 0], np.zeros((2, 4), np.float32)], 1), axis=1)
case("dft_17_length_pad", "DFT", {"x": xd}, {"y": np.stack([pad.real, pad.imag], -1).astype(np.float32)}, 17,
     {"axis": 1}, {"len": np.array(12, np.int64)}, ["x", "len"])
x3 = f32(2, 3, 4)
e = np.exp(x3.reshape(2, 12) - x3.reshape(2, 12).max(1, keepdims=True))
case("softmax_11_axis1_coerced", "Softmax", {"x": x3}, {"y": (e / e.sum(1, keepdims=True)).reshape(2, 3, 4)}, 11,
     {"axis": 1})
case("log_softmax_13_axis1", "LogSoftmax", {"x": x3}, {"y": F.log_softmax(T(x3), 1).numpy()}, 13, {"axis": 1})
hm = np.zeros((2, 12), np.float32)
hm[np.arange(2), x3.reshape(2, 12).argmax(1)] = 1
case("hardmax_11_coerced", "Hardmax", {"x": x3}, {"y": hm.reshape(2, 3, 4)}, 11, {"axis": 1})
hm13 = (np.arange(3)[None, :, None] == x3.argmax(1)[:, None, :]).astype(np.float32)
case("hardmax_13_axis1", "Hardmax", {"x": x3}, {"y": hm13}, 13, {"axis": 1})
lo, hi = np.array(-0.5, np.float32), np.array(0.7, np.float32)
case("clip_13_computed_bounds", "Clip", {"x": x, "lo": lo, "hi": hi}, {"y": np.clip(x, -0.5, 0.7)}, 13)
case("clip_13_max_only", "Clip", {"x": x}, {"y": np.minimum(x, 0.2)}, 13, {}, {"hi": np.array(0.2, np.float32)},
     ["x", "", "hi"])
sl = f32(5)
case("prelu_16", "PRelu", {"x": x}, {"y": np.where(x < 0, x * sl, x)}, 16, {}, {"slope": sl})
xa = np.clip(x / 4, -0.9, 0.9)
case("atanh_9", "Atanh", {"x": xa}, {"y": np.arctanh(xa)}, 9)
case("tan_7", "Tan", {"x": xa}, {"y": np.tan(xa)}, 7)
case("asinh_9", "Asinh", {"x": xa}, {"y": np.arcsinh(xa)}, 9)
case("cosh_9", "Cosh", {"x": xa}, {"y": np.cosh(xa)}, 9)
case("asin_7", "Asin", {"x": xa}, {"y": np.arcsin(xa)}, 7)
case("acos_7", "Acos", {"x": xa}, {"y": np.arccos(xa)}, 7)
case("atan_7", "Atan", {"x": x}, {"y": np.arctan(x)}, 7)
case("shrink_9", "Shrink", {"x": x}, {"y": np.where(x < -1, x + 0.5, np.where(x > 1, x - 0.5, 0)).astype(np.float32)},
     9, {"lambd": 1.0, "bias": 0.5})
xi8 = np.array([[-7, 5, 3], [100, -128, 127]], np.int8)
case("shrink_9_int8", "Shrink", {"x": xi8}, {"y": np.where(xi8 < -4, xi8 + 2, np.where(xi8 > 4, xi8 - 2, 0)).astype(np.int8)},
     9, {"lambd": 4.0, "bias": 2.0})
case("prelu_16_int32", "PRelu", {"x": xi8.astype(np.int32)},
     {"y": np.where(xi8 < 0, xi8.astype(np.int32) * 3, xi8).astype(np.int32)}, 16, {}, {"slope": np.array(3, np.int32)})
ia, ib = np.array([[12, -3, 7], [0, 255, -128]], np.int32), np.array([10, 6, -1], np.int32)
for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
    case("%s_18_broadcast" % op.lower(), op, {"a": ia, "b": ib}, {"y": fn(ia, ib)}, 18)
case("bitwisenot_18", "BitwiseNot", {"a": ia}, {"y": np.invert(ia)}, 18)
ua, us = np.array([16, 4, 255], np.uint8), np.array([1, 2, 8], np.uint8)
case("bitshift_11_left_uint8", "BitShift", {"a": ua, "s": us}, {"y": np.array([32, 16, 0], np.uint8)}, 11,
     {"direction": "LEFT"})
case("bitshift_11_right_int32", "BitShift", {"a": ia, "s": np.array([1, 1, 2], np.int32)},
     {"y": np.array([[6, -2, 1], [0, 127, -32]], np.int32)}, 11, {"direction": "RIGHT"})
case("mod_13_fmod_float", "Mod", {"a": x, "b": np.array([1.5, -0.7, 2.0, -3.0, 0.3], np.float32)},
     {"y": np.fmod(x, np.array([1.5, -0.7, 2.0, -3.0, 0.3], np.float32))}, 13, {"fmod": 1})
xm = (f32(2, 3, 4) * 2 + 1).astype(np.float32)
mm = xm.mean((0, 2), keepdims=True)
case("mvn_13_axes", "MeanVarianceNormalization", {"x": xm},
     {"y": ((xm - mm) / (np.sqrt(((xm - mm) ** 2).mean((0, 2), keepdims=True)) + 1e-9)).astype(np.float32)}, 13,
     {"axes": [0, 2]})
case("lp_norm_1", "LpNormalization", {"x": x}, {"y": x / np.abs(x).sum(1, keepdims=True)}, 7, {"p": 1, "axis": 1})
idx = np.array([[0, 2], [-1, 1]], np.int64)
oh = np.where(np.arange(4)[None, None, :] == np.where(idx < 0, idx + 4, idx)[..., None], 5.0, -1.0)
case("one_hot_11", "OneHot", {"i": idx}, {"y": oh.astype(np.float32)}, 11, {},
     {"depth": np.array(4, np.int64), "values": np.array([-1, 5], np.float32)})
xt = f32(2, 4, 5)
case("trilu_14_upper_k1", "Trilu", {"x": xt}, {"y": np.triu(xt, 1)}, 14, {}, {"k": np.array(1, np.int64)})
case("trilu_14_lower", "Trilu", {"x": xt}, {"y": np.tril(xt)}, 14, {"upper": 0})
gi = np.array([[1, 0], [0, -1]], np.int64)
case("gather_nd_13", "GatherND", {"x": xt, "i": gi}, {"y": np.stack([xt[1, 0], xt[0, 3]])}, 13)
sd = f32(4, 3)
si = np.array([[1, 1, 0], [-1, 1, 2]], np.int64)
su = f32(2, 3)
se = sd.copy()
for p_ in np.ndindex(*si.shape):
    se[si[p_], p_[1]] = max(se[si[p_], p_[1]], su[p_])
case("scatter_elements_18_max", "ScatterElements", {"d": sd, "i": si, "u": su}, {"y": se}, 18, {"reduction": "max"})
ni = np.array([[2], [0], [2]], np.int64)
nu = f32(3, 3)
ne = sd.copy()
for t_ in range(3):
    ne[ni[t_, 0]] = np.minimum(ne[ni[t_, 0]], nu[t_])
case("scatter_nd_18_min", "ScatterND", {"d": sd, "i": ni, "u": nu}, {"y": ne}, 18, {"reduction": "min"})
sq, zq = np.array(0.05, np.float32), np.array(10, np.uint8)
case("quantize_13", "QuantizeLinear", {"x": x}, {"y": np.clip(np.rint(x / 0.05) + 10, 0, 255).astype(np.uint8)}, 13,
     {}, {"s": sq, "z": zq})
qx = rng.integers(-128, 127, (3, 4, 5)).astype(np.int8)
qs, qz = (rng.random(4) * 0.1 + 0.01).astype(np.float32), rng.integers(-5, 5, 4).astype(np.int8)
case("dequantize_13_axis", "DequantizeLinear", {"x": qx},
     {"y": ((qx.astype(np.float32) - qz[None, :, None]) * qs[None, :, None]).astype(np.float32)}, 13, {"axis": 1},
     {"s": qs, "z": qz})
xd2s = f32(1, 8, 2, 3)
d2s = xd2s.reshape(1, 2, 2, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 6)
case("depth_to_space_13_dcr", "DepthToSpace", {"x": xd2s}, {"y": d2s}, 13, {"blocksize": 2})
xl = np.abs(f32(1, 2, 5, 6)) + 0.1
case("lp_pool_18", "LpPool", {"x": xl}, {"y": F.lp_pool2d(T(xl), 3.0, (2, 3), stride=(1, 2)).numpy()}, 18,
     {"p": 3, "kernel_shape": [2, 3], "strides": [1, 2]})
case("depth_to_space_11_crd", "DepthToSpace", {"x": xd2s},
     {"y": F.pixel_shuffle(T(xd2s), 2).numpy()}, 11, {"blocksize": 2, "mode": "CRD"})
case("space_to_depth_13", "SpaceToDepth", {"x": d2s}, {"y": xd2s}, 13, {"blocksize": 2})
xlrn = f32(2, 6, 3, 4)
case("lrn_13", "LRN", {"x": xlrn}, {"y": F.local_response_norm(T(xlrn), 3, 0.3, 0.6, 1.5).numpy()}, 13,
     {"size": 3, "alpha": 0.3, "beta": 0.6, "bias": 1.5})
xgs, ggs = f32(2, 3, 4, 5), rng.uniform(-1, 1, (2, 3, 6, 2)).astype(np.float32)
for gmode, tmode in (("linear", "bilinear"), ("cubic", "bicubic"), ("nearest", "nearest")):
    case("grid_sample_20_%s" % gmode, "GridSample", {"x": xgs, "g": ggs},
         {"y": F.grid_sample(T(xgs), T(ggs), mode=tmode, padding_mode="border", align_corners=True).numpy()}, 20,
         {"mode": gmode, "padding_mode": "border", "align_corners": 1})
case("global_lp_pool_2_3d", "GlobalLpPool", {"x": xl[0]}, {"y": np.abs(xl[0] ** 3).sum(2, keepdims=True) ** (1 / 3)},
     11, {"p": 3})
case("global_lp_pool_2_empty", "GlobalLpPool", {"x": np.zeros((1, 2, 0, 3), np.float32)},
     {"y": np.zeros((1, 2, 1, 1), np.float32)}, 11)
case("global_lp_pool_2", "GlobalLpPool", {"x": xl}, {"y": np.sqrt((xl * xl).sum((2, 3), keepdims=True))}, 7)
xcc = f32(5, 4, 3)
ccp = np.zeros((3, 7, 3), np.float32)
ccp[:, 1:5, :] = xcc[1:4]
case("center_crop_pad_18", "CenterCropPad", {"x": xcc}, {"y": ccp}, 18, {"axes": [0, 1]},
     {"shape": np.array([3, 7], np.int64)})

# opset 24-28 ops: CumProd (26) against NumPy's cumprod (exclusive and reverse by hand),
# Swish (24) and SwiGLU (28) against their formulas in float64
xcp = rng.uniform(0.5, 1.5, (3, 5)).astype(np.float32)
case("cumprod_26_axis1", "CumProd", {"x": xcp}, {"y": np.cumprod(xcp.astype(np.float64), 1).astype(np.float32)}, 26, {},
     {"axis": np.array(1, np.int64)})
# exclusive and reverse: y[i] is the product of x[j] for j > i
excl = np.concatenate([np.cumprod(xcp.astype(np.float64)[::-1], 0)[::-1][1:], np.ones((1, 5))], 0)
case("cumprod_26_axis0_exclusive_reverse", "CumProd", {"x": xcp}, {"y": excl.astype(np.float32)}, 26,
     {"exclusive": 1, "reverse": 1}, {"axis": np.array(0, np.int64)})
xi = rng.integers(-3, 4, (2, 6)).astype(np.int32)
case("cumprod_26_int32", "CumProd", {"x": xi}, {"y": np.cumprod(xi, 1).astype(np.int32)}, 26, {},
     {"axis": np.array(-1, np.int64)})
xs, bs = f32(2, 7), f32(2, 7)
sig = lambda v: 1 / (1 + np.exp(-v))
xs64 = xs.astype(np.float64)
case("swish_24", "Swish", {"x": xs}, {"y": (xs64 * sig(0.7 * xs64)).astype(np.float32)}, 24, {"alpha": 0.7})
case("swiglu_28", "SwiGLU", {"a": xs, "b": bs}, {"y": (xs64 * sig(xs64) * bs).astype(np.float32)}, 28)

# ai.onnx.preview.training optimizers against their pseudo code in NumPy (float64, then
# rounded to the tensors' type; the attributes are ONNX floats, so the oracle takes
# their f32 values): T = 0 and T > 0 (Adam's and Momentum's first-step branches), two
# optimized tensors at once, f32 and f64
TR = "ai.onnx.preview.training:"
a32 = lambda v: float(np.float32(v))


def adagrad_ref(r, t, x, g, hh, decay, eps, nc):
    rr = r / (1 + t * decay)
    gr = nc * x + g
    hn = hh + gr * gr
    return x - rr * gr / (np.sqrt(hn) + eps), hn


def adam_ref(r, t, x, g, v, hh, alpha, beta, eps, nc, ncp):
    gr = nc * x + g
    vn = alpha * v + (1 - alpha) * gr
    hn = beta * hh + (1 - beta) * gr * gr
    ra = r * np.sqrt(1 - beta ** t) / (1 - alpha ** t) if t > 0 else r
    return (1 - ncp) * (x - ra * vn / (np.sqrt(hn) + eps)), vn, hn


def momentum_ref(r, t, x, g, v, alpha, beta, nc, nesterov):
    gr = nc * x + g
    vn = alpha * v + (beta if t > 0 else 1.0) * gr
    return (x - r * (gr + alpha * vn) if nesterov else x - r * vn), vn


for dt in (np.float32, np.float64):
    tag = "f32" if dt == np.float32 else "f64"
    xa, ga, ha = (rng.uniform(0.1, 1.0, (3, 4)) for _ in range(3))
    xb, gb, hb = (rng.uniform(0.1, 1.0, (5,)) for _ in range(3))
    for t in (0, 3):
        rin, tin = np.array(0.1, dt), np.array(t, np.int64)
        cv = lambda v, dt=dt: np.asarray(v, dt)
        xna, hna = adagrad_ref(0.1, t, xa, ga, ha, a32(0.1), a32(1e-6), a32(0.01))
        xnb, hnb = adagrad_ref(0.1, t, xb, gb, hb, a32(0.1), a32(1e-6), a32(0.01))
        case("adagrad_%s_t%d_two" % (tag, t), TR + "Adagrad",
             {"R": rin, "T": tin, "xa": cv(xa), "xb": cv(xb), "ga": cv(ga), "gb": cv(gb), "ha": cv(ha), "hb": cv(hb)},
             {"xna": cv(xna), "xnb": cv(xnb), "hna": cv(hna), "hnb": cv(hnb)}, 17,
             {"decay_factor": 0.1, "epsilon": 1e-6, "norm_coefficient": 0.01})
        xn, vn, hn = adam_ref(0.1, t, xa, ga, hb[:1] * ga, ha, a32(0.9), a32(0.99), a32(1e-7), a32(0.02), a32(0.01))
        case("adam_%s_t%d" % (tag, t), TR + "Adam",
             {"R": rin, "T": tin, "x": cv(xa), "g": cv(ga), "v": cv(hb[:1] * ga), "h": cv(ha)},
             {"xn": cv(xn), "vn": cv(vn), "hn": cv(hn)}, 17,
             {"alpha": 0.9, "beta": 0.99, "epsilon": 1e-7, "norm_coefficient": 0.02, "norm_coefficient_post": 0.01})
        for mode in ("standard", "nesterov"):
            xn, vn = momentum_ref(0.1, t, xa, ga, ha, a32(0.95), 0.5, a32(0.01), mode == "nesterov")
            case("momentum_%s_%s_t%d" % (mode, tag, t), TR + "Momentum",
                 {"R": rin, "T": tin, "x": cv(xa), "g": cv(ga), "v": cv(ha)}, {"xn": cv(xn), "vn": cv(vn)}, 17,
                 {"alpha": 0.95, "beta": 0.5, "mode": mode, "norm_coefficient": 0.01})

# CausalConvWithState (opset 27): a depthwise causal conv1d with carried state, against
# a NumPy loop over positions (float64): with and without past_state and bias, silu,
# kernel 1 (an empty state) and an input shorter than k - 1


def causal_conv_ref(x, w, b, past, silu):
    B, C, L = x.shape
    k = w.shape[2]
    past = np.zeros((B, C, k - 1)) if past is None else past
    p = np.concatenate([past, x], 2).astype(np.float64)
    y = np.zeros((B, C, L))
    for t in range(L):
        y[:, :, t] = (p[:, :, t:t + k] * w[None, :, 0, :]).sum(2)
    if b is not None:
        y += b[None, :, None]
    if silu:
        y = y / (1 + np.exp(-y))
    return y, p[:, :, L:]


for (B, C, L, k, bias, past, act) in ((2, 3, 6, 4, True, True, "silu"), (1, 4, 5, 3, False, False, "none"),
                                      (2, 2, 4, 1, True, False, "swish"), (1, 3, 2, 5, False, True, "none")):
    xcc, wcc = f32(B, C, L), f32(C, 1, k)
    bcc = f32(C) if bias else None
    pcc = f32(B, C, k - 1) if past else None
    y, st = causal_conv_ref(xcc, wcc, bcc, pcc, act != "none")
    ins = {"x": xcc, "w": wcc}
    names = ["x", "w", "b" if bias else "", "p" if past else ""]
    if bias:
        ins["b"] = bcc
    if past:
        ins["p"] = pcc
    while names[-1] == "":
        names.pop()
    case("causal_conv_with_state_27_b%d_c%d_l%d_k%d_%s%s%s" % (B, C, L, k, act, "_bias" if bias else "", "_past" if past else ""),
         "CausalConvWithState", ins, {"y": y.astype(np.float32), "st": st.astype(np.float32)}, 27, {"activation": act},
         node_inputs=names)

# ai.onnx.ml: Binarizer (x > threshold, in x's dtype; an integer x against a fractional
# threshold) and ArrayFeatureExtractor (x[..., indices] with the indices flattened; a 1-D x
# gives [1, count], as ONNX's reference and ONNX Runtime do), against NumPy
ML = "ai.onnx.ml:"
xbz = f32(3, 5)
case("ml_binarizer_f32", ML + "Binarizer", {"x": xbz}, {"y": (xbz > np.float32(0.3)).astype(np.float32)}, 17,
     {"threshold": 0.3})
xbi = rng.integers(-3, 4, (2, 6)).astype(np.int64)
case("ml_binarizer_i64_fractional_threshold", ML + "Binarizer", {"x": xbi}, {"y": (xbi > -0.5).astype(np.int64)}, 17,
     {"threshold": -0.5})
xaf = f32(2, 3, 6)
iaf = np.array([5, 0, 0, 2], np.int64)
case("ml_array_feature_extractor_3d", ML + "ArrayFeatureExtractor", {"x": xaf, "i": iaf}, {"z": xaf[..., iaf]}, 17)
xa1 = f32(7)
ia2 = np.array([[6, 1, 3]], np.int64)
case("ml_array_feature_extractor_1d", ML + "ArrayFeatureExtractor", {"x": xa1, "i": ia2},
     {"z": xa1[ia2.ravel()].reshape(1, 3)}, 17)

# geometry ops (src/onnx/onnx_ops_geom.c): Col2Im (opset 18), AffineGrid (opset 20), EyeLike on a computed
# input (the eye_like op; a constant input is folded), RoiAlign at opset 10 (output_half_pixel, no attribute)
xc2 = f32(2, 3 * 6, 10)
case("col2im_18", "Col2Im", {"x": xc2}, {"y": F.fold(T(xc2), (5, 6), (2, 3), dilation=(2, 1), padding=(1, 0),
                                                     stride=(1, 2)).numpy()}, 18,
     {"dilations": [2, 1], "pads": [1, 0, 1, 0], "strides": [1, 2]},
     {"image_shape": np.array([5, 6], np.int64), "block_shape": np.array([2, 3], np.int64)})
th2, th3 = f32(2, 2, 3), f32(2, 3, 4)
case("affine_grid_20_2d", "AffineGrid", {"theta": th2},
     {"y": F.affine_grid(T(th2), [2, 3, 4, 5], align_corners=False).numpy()}, 20, {},
     {"size": np.array([2, 3, 4, 5], np.int64)})
case("affine_grid_20_3d_align_corners", "AffineGrid", {"theta": th3},
     {"y": F.affine_grid(T(th3), [2, 1, 3, 4, 5], align_corners=True).numpy()}, 20, {"align_corners": 1},
     {"size": np.array([2, 1, 3, 4, 5], np.int64)})
case("eye_like_9_computed", "EyeLike", {"x": f32(4, 6)}, {"y": np.eye(4, 6, -1, dtype=np.int32)}, 9,
     {"k": -1, "dtype": TP.INT32})
xr = f32(2, 3, 8, 9)
rois = np.array([[0.5, 1.0, 6.2, 7.7], [2.0, 0.3, 8.5, 4.0], [0, 0, 1.5, 1.2]], np.float32)
bidx = np.array([1, 0, 1], np.int64)
import torchvision  # noqa: E402
rref = torchvision.ops.roi_align(T(xr), torch.cat([T(bidx)[:, None].float(), T(rois)], 1), (3, 4), 0.5, 2,
                                 aligned=False).numpy()
case("roi_align_10", "RoiAlign", {"x": xr, "rois": rois, "batch_indices": bidx}, {"y": rref}, 10,
     {"output_height": 3, "output_width": 4, "spatial_scale": 0.5, "sampling_ratio": 2})
# DeformConv (opset 19) against torchvision.ops.deform_conv2d (ONNX's offset layout,
# (y, x) per kernel position, and border rule are torchvision's); Det against NumPy.

xdc, wdc = f32(2, 4, 7, 6), f32(6, 2, 3, 2) * 0.3
odc = (rng.uniform(-2, 2, (2, 2 * 2 * 6, 3, 6))).astype(np.float32)
mdc, bdc = rng.uniform(0, 1, (2, 2 * 6, 3, 6)).astype(np.float32), f32(6)
ydc = torchvision.ops.deform_conv2d(F.pad(T(xdc), [0, 1, 1, 0]), T(odc), T(wdc), T(bdc), stride=(2, 1),
                                    mask=T(mdc)).numpy()
case("deform_conv_19_mask_bias_groups", "DeformConv", {"x": xdc, "off": odc, "mask": mdc}, {"y": ydc}, 19,
     {"group": 2, "offset_group": 2, "strides": [2, 1], "pads": [1, 0, 0, 1], "kernel_shape": [3, 2]},
     {"w": wdc, "b": bdc}, ["x", "w", "off", "b", "mask"])
odc1 = (rng.uniform(-1.5, 1.5, (2, 2 * 6, 5, 4))).astype(np.float32)
mdc1 = rng.uniform(0, 1, (2, 6, 5, 4)).astype(np.float32)
ydc1 = torchvision.ops.deform_conv2d(T(xdc), T(odc1), T(wdc), None, dilation=(1, 2), mask=T(mdc1)).numpy()
case("deform_conv_19_mask_no_bias_dilations", "DeformConv", {"x": xdc, "off": odc1, "mask": mdc1}, {"y": ydc1}, 19,
     {"group": 2, "dilations": [1, 2]}, {"w": wdc}, ["x", "w", "off", "", "mask"])
odc2 = (rng.uniform(-1.5, 1.5, (2, 2 * 6, 5, 5))).astype(np.float32)
ydc2 = torchvision.ops.deform_conv2d(T(xdc), T(odc2), T(wdc), T(bdc)).numpy()
case("deform_conv_19_bias_only", "DeformConv", {"x": xdc, "off": odc2}, {"y": ydc2}, 19, {"group": 2},
     {"w": wdc, "b": bdc}, ["x", "w", "off", "b"])
xdet = f32(3, 2, 4, 4)
xdet[1, 0, 3] = xdet[1, 0, 1]
case("det_19_batched", "Det", {"x": xdet}, {"y": np.linalg.det(xdet.astype(np.float64)).astype(np.float32)}, 19)


def rope(xh, cos, sin, rdim, interleaved):
    """xh [B, H, S, D]; cos/sin [B, S, rdim/2]: rotation as complex products."""
    c, s_ = cos[:, None], sin[:, None]
    rot, rest = xh[..., :rdim], xh[..., rdim:]
    if interleaved:
        z = (rot[..., 0::2] + 1j * rot[..., 1::2]) * (c + 1j * s_)
        out = np.stack([z.real, z.imag], -1).reshape(rot.shape)
    else:
        h2 = rdim // 2
        z = (rot[..., :h2] + 1j * rot[..., h2:]) * (c + 1j * s_)
        out = np.concatenate([z.real, z.imag], -1)
    return np.concatenate([out, rest], -1).astype(np.float32)


ang = rng.random((2, 5, 4)) * 6
xq = f32(2, 3, 5, 8)
case("rotary_23", "RotaryEmbedding", {"x": xq}, {"y": rope(xq, np.cos(ang), np.sin(ang), 8, False)}, 23, {},
     {"cos": np.cos(ang).astype(np.float32), "sin": np.sin(ang).astype(np.float32)})
cache = rng.random((16, 2)) * 6
pid = rng.integers(0, 16, (2, 5)).astype(np.int64)
case("rotary_23_interleaved_partial_positions", "RotaryEmbedding", {"x": xq},
     {"y": rope(xq, np.cos(cache[pid]), np.sin(cache[pid]), 4, True)}, 23,
     {"interleaved": 1, "rotary_embedding_dim": 4},
     {"cos": np.cos(cache).astype(np.float32), "sin": np.sin(cache).astype(np.float32), "pos": pid})
x3r = f32(2, 5, 24)
y3r = rope(x3r.reshape(2, 5, 3, 8).transpose(0, 2, 1, 3), np.cos(ang), np.sin(ang), 8, False)
case("rotary_23_3d", "RotaryEmbedding", {"x": x3r}, {"y": y3r.transpose(0, 2, 1, 3).reshape(2, 5, 24)}, 23,
     {"num_heads": 3}, {"cos": np.cos(ang).astype(np.float32), "sin": np.sin(ang).astype(np.float32)})

x3p = f32(2, 5, 24)
wide = rng.random((16, 4)) * 6  # rows wider than rotary_embedding_dim / 2: the first 2 entries are read
y3p = rope(x3p.reshape(2, 5, 3, 8).transpose(0, 2, 1, 3), np.cos(wide[pid][..., :2]), np.sin(wide[pid][..., :2]), 4,
           True)
case("rotary_23_3d_interleaved_partial_positions_wide_cache", "RotaryEmbedding", {"x": x3p},
     {"y": y3p.transpose(0, 2, 1, 3).reshape(2, 5, 24)}, 23,
     {"num_heads": 3, "interleaved": 1, "rotary_embedding_dim": 4},
     {"cos": np.cos(wide).astype(np.float32), "sin": np.sin(wide).astype(np.float32), "pos": pid})


def run(i, c):
    name, op, inputs, outputs, opset, attrs, consts, node_inputs = c
    d = tempfile.mkdtemp(prefix="onnx_op_")
    vi = lambda k, a: h.make_tensor_value_info(k, TP.STRING if a.dtype.kind in "US" else NP2T[a.dtype], a.shape)
    # "DOMAIN:Op" is an op of another domain, imported at version 1 beside the default domain
    # ("DOMAIN@V:Op" at version V)
    domain, _, op = op.rpartition(":")
    domain, _, dver = domain.partition("@")
    node = h.make_node(op, node_inputs or list(inputs) + list(consts), list(outputs), domain=domain or None, **attrs)
    g = h.make_graph([node], name, [vi(k, a) for k, a in inputs.items()], [vi(k, a) for k, a in outputs.items()],
                     initializer=[nh.from_array(a, k) for k, a in consts.items()])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + ([h.make_opsetid(domain, int(dver or 1))] if domain else []))
    model.ir_version = 8
    with open(d + "/model.onnx", "wb") as f:
        f.write(model.SerializeToString())
    args = [FTRUN, "run", d + "/model.onnx", "-q", "-d", "cpu", "-o", d + "/out", "--expect", d + "/expect"]
    os.makedirs(d + "/expect")
    for k, a in inputs.items():
        np.save(f"{d}/{k}.npy", a)
        args += ["-i", f"{k}={d}/{k}.npy"]
    for k, a in outputs.items():
        np.save(f"{d}/expect/{k}.npy", np.asarray(a))
    p = subprocess.run(args, capture_output=True, text=True)
    ok = p.returncode == 0
    print(("ok" if ok else "not ok"), i, name, "" if ok else "# exit %d: %s" % (p.returncode, p.stderr.strip()[-300:]))
    if ok:
        subprocess.run(["rm", "-rf", d])
    return ok



# Window functions (opset 17) against NumPy's formulas with the true pi. ONNX
# 1.12's own test data for them were made with pi = 3.1415 and differ by ~7e-5
# (tests/onnx/reference_differs.txt); these cases are the oracle instead.
def window(kind, n, periodic):
    d = n if periodic else n - 1
    t = 2 * np.pi * np.arange(n) / d
    if kind == "hann":
        w = 0.5 - 0.5 * np.cos(t)
    elif kind == "hamming":
        w = 25 / 46 - (1 - 25 / 46) * np.cos(t)
    else:
        w = 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t)
    return w.astype(np.float32)


for kind, op in (("hann", "HannWindow"), ("hamming", "HammingWindow"), ("blackman", "BlackmanWindow")):
    for periodic in (1, 0):
        case("%s_window_17_%s" % (kind, "periodic" if periodic else "symmetric"), op, {},
             {"y": window(kind, 10, periodic)}, 17, {"periodic": periodic}, {"size": np.array(10, np.int32)})

# Losses against PyTorch (SoftmaxCrossEntropyLoss with its log_prob output, i32
# targets, weights and ignore_index; NegativeLogLikelihoodLoss on [N, C, d1, d2]) and
# STFT of a complex signal against numpy.fft (two-sided, with a window input).
xl, tl, wl = f32(5, 4, 3), rng.integers(0, 4, (5, 3)).astype(np.int32), np.abs(f32(4)) + 0.1
tl[0, 0] = -1
case("softmax_cross_entropy_loss_13_log_prob", "SoftmaxCrossEntropyLoss", {"x": xl, "t": tl},
     {"y": F.cross_entropy(T(xl), T(tl.astype(np.int64)), weight=T(wl), ignore_index=-1).numpy(),
      "lp": F.log_softmax(T(xl), 1).numpy()}, 13, {"ignore_index": -1}, {"w": wl}, ["x", "t", "w"])
xn, tn = f32(2, 3, 2, 4), rng.integers(0, 3, (2, 2, 4))
case("nll_loss_13_4d_sum", "NegativeLogLikelihoodLoss", {"x": xn, "t": tn},
     {"y": F.nll_loss(T(xn), T(tn), reduction="sum").numpy()}, 13, {"reduction": "sum"})
sg, wn = f32(2, 40, 2), np.hanning(8).astype(np.float32)
fr = np.stack([(sg[:, f * 5:f * 5 + 8, 0] + 1j * sg[:, f * 5:f * 5 + 8, 1]) * wn for f in range(7)], 1)
sp = np.fft.fft(fr.astype(np.complex128), axis=-1)
case("stft_17_complex_two_sided", "STFT", {"x": sg}, {"y": np.stack([sp.real, sp.imag], -1).astype(np.float32)}, 17,
     {"onesided": 0}, {"step": np.array(5, np.int64), "w": wn}, ["x", "step", "w"])

# Legacy forms of opsets 1-6 (src/onnx/onnx_ops_legacy.c; ONNX's Changelog.md,
# Add-1/Add-6 ...): with broadcast=1, B's dims line up with A's from `axis`
# (default: A's last dims), each equal or 1, and the result has A's shape; Gemm's
# C broadcasts only with broadcast=1; BatchNormalization's is_test=1 is the
# inference form; AveragePool before opset 7 leaves the padding out of the count.
# The expected values align B by hand (NumPy's broadcasting aligns from the end).
xa, b34, b2, b3 = f32(2, 3, 4, 5), f32(3, 4), f32(2), f32(3)
case("add_6_axis1", "Add", {"a": xa}, {"y": xa + b34[None, :, :, None]}, 6, {"broadcast": 1, "axis": 1},
     {"b": b34}, ["a", "b"])
case("add_6_axis1_both_known", "Add", {}, {"y": xa + b34[None, :, :, None]}, 6, {"broadcast": 1, "axis": 1},
     {"a": xa, "b": b34}, ["a", "b"])
case("sub_6_axis0", "Sub", {"a": xa, "b": b2}, {"y": xa - b2[:, None, None, None]}, 6, {"broadcast": 1, "axis": 0})
b45 = f32(4, 5)
case("mul_6_suffix", "Mul", {"a": xa, "b": b45}, {"y": xa * b45}, 6, {"broadcast": 1})
b11 = f32(1, 1)
case("div_1_one_element", "Div", {"a": xa, "b": b11}, {"y": xa / b11[0, 0]}, 1,
     {"broadcast": 1, "axis": 0, "consumed_inputs": [0, 0]})
xp, e3 = np.abs(f32(2, 3, 4)) + 0.5, f32(3)
case("pow_6_axis1", "Pow", {"a": xp, "b": e3}, {"y": np.power(xp, e3[None, :, None]).astype(np.float32)}, 6,
     {"broadcast": 1, "axis": 1})
a23, b21 = f32(2, 3), f32(2, 1)
case("add_6_size1_dim", "Add", {"a": a23, "b": b21}, {"y": a23 + b21}, 6, {"broadcast": 1, "axis": 0})
case("add_6_same_shape", "Add", {"a": a23, "b": a23[::-1].copy()}, {"y": a23 + a23[::-1]}, 6)
xg3 = f32(2, 3, 4)
case("greater_6_axis1", "Greater", {"a": xg3, "b": b3}, {"y": xg3 > b3[None, :, None]}, 6, {"broadcast": 1, "axis": 1})
ba, bb = rng.random((2, 3, 4)) > 0.5, rng.random(2) > 0.5
case("and_1_axis0", "And", {"a": ba, "b": bb}, {"y": ba & bb[:, None, None]}, 1, {"broadcast": 1, "axis": 0})
ia, ib = rng.integers(0, 3, (2, 3, 4)).astype(np.int32), rng.integers(0, 3, 3).astype(np.int32)
case("equal_6_axis1", "Equal", {"a": ia, "b": ib}, {"y": ia == ib[None, :, None]}, 6, {"broadcast": 1, "axis": 1})
ga, gb, gc5, gc35 = f32(3, 4), f32(5, 4), f32(5), f32(3, 5)
case("gemm_6_broadcast_c", "Gemm", {"a": ga, "b": gb, "c": gc5}, {"y": 0.5 * ga @ gb.T + 2 * gc5}, 6,
     {"broadcast": 1, "transB": 1, "alpha": 0.5, "beta": 2.0})
case("gemm_1_full_c", "Gemm", {"a": ga, "b": gb, "c": gc35}, {"y": ga @ gb.T + gc35}, 1, {"transB": 1})
xb, sb, bb3, mb, vb = f32(2, 3, 4, 5), f32(3), f32(3), f32(3), np.abs(f32(3)) + 0.1
bn = lambda eps: F.batch_norm(T(xb), T(mb), T(vb), T(sb), T(bb3), False, 0.0, eps).numpy()
case("batch_norm_6_is_test", "BatchNormalization", {"x": xb}, {"y": bn(1e-3)}, 6, {"is_test": 1, "epsilon": 1e-3},
     {"s": sb, "bias": bb3, "mean": mb, "var": vb}, ["x", "s", "bias", "mean", "var"])
case("batch_norm_1_consumed_inputs", "BatchNormalization", {"x": xb}, {"y": bn(1e-5)}, 1,
     {"is_test": 1, "consumed_inputs": [0, 0, 0, 1, 1]}, {"s": sb, "bias": bb3, "mean": mb, "var": vb},
     ["x", "s", "bias", "mean", "var"])
xq = f32(1, 2, 5, 5)
case("average_pool_6_pads", "AveragePool", {"x": xq},
     {"y": F.avg_pool2d(T(xq), 3, 2, 1, count_include_pad=False).numpy()}, 6,
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
# opset-1 forms that differ from opset 6 only by consumed_inputs (a legacy optimization hint)
xr, xr2 = f32(2, 3, 4), f32(2, 3, 4)
ci = {"consumed_inputs": [0]}
case("relu_1_consumed_inputs", "Relu", {"x": xr}, {"y": np.maximum(xr, 0)}, 1, ci)
case("exp_1_consumed_inputs", "Exp", {"x": xr}, {"y": np.exp(xr)}, 1, ci)
case("neg_1_consumed_inputs", "Neg", {"x": xr}, {"y": -xr}, 1, ci)
case("elu_1_alpha", "Elu", {"x": xr}, {"y": np.where(xr < 0, 0.5 * (np.exp(xr) - 1), xr).astype(np.float32)}, 1,
     {"alpha": 0.5, "consumed_inputs": [0]})
case("hard_sigmoid_1_defaults", "HardSigmoid", {"x": xr}, {"y": np.clip(0.2 * xr + 0.5, 0, 1).astype(np.float32)}, 1, ci)
case("sum_1_consumed_inputs", "Sum", {"a": xr, "b": xr2}, {"y": xr + xr2}, 1, {"consumed_inputs": [0, 0]})
case("max_1_consumed_inputs", "Max", {"a": xr, "b": xr2}, {"y": np.maximum(xr, xr2)}, 1, {"consumed_inputs": [0, 0]})
xi, si, bi = f32(2, 3, 4, 5), f32(3), f32(3)
case("instance_norm_1_consumed_inputs", "InstanceNormalization", {"x": xi},
     {"y": F.instance_norm(T(xi), weight=T(si), bias=T(bi), eps=1e-3).numpy()}, 1,
     {"epsilon": 1e-3, "consumed_inputs": [0, 0, 0]}, {"s": si, "bias": bi}, ["x", "s", "bias"])


# LinearAttention (opset 27): the recurrence of its operator text, token by
# token in float64 (S per KV head [d_k, d_v]; query head j reads KV head j // G).
def linear_attention(q, k, v, hq, hkv, rule, past=None, decay=None, beta=None, scale=0.0):
    b, t, _ = q.shape
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    s = np.zeros((b, hkv, dk, dv)) if past is None else past.astype(np.float64)
    qs, ks, vs = q.reshape(b, t, hq, dk), k.reshape(b, t, hkv, dk), v.reshape(b, t, hkv, dv)
    g = None if decay is None else np.exp(decay.reshape(b, t, hkv, -1).astype(np.float64))
    bt = None if beta is None else np.broadcast_to(beta.reshape(b, t, -1), (b, t, hkv))
    out = np.zeros((b, t, hq, dv))
    for i in range(t):
        kt, vt = ks[:, i].astype(np.float64), vs[:, i].astype(np.float64)
        if rule in ("gated", "gated_delta"):
            s = s * g[:, i][..., None]
        w = vt
        if rule in ("delta", "gated_delta"):
            w = bt[:, i][..., None] * (vt - np.einsum("bhkv,bhk->bhv", s, kt))
        s = s + kt[..., :, None] * w[..., None, :]
        for j in range(hq):
            out[:, i, j] = (scale or 1 / np.sqrt(dk)) * np.einsum("bk,bkv->bv", qs[:, i, j], s[:, j // (hq // hkv)])
    return out.reshape(b, t, hq * dv).astype(np.float32), s.astype(np.float32)


la_q, la_k, la_v = f32(2, 5, 6 * 4), f32(2, 5, 2 * 4), f32(2, 5, 2 * 3)
la_k = (la_k.reshape(2, 5, 2, 4) / np.linalg.norm(la_k.reshape(2, 5, 2, 4), axis=-1, keepdims=True)).reshape(2, 5, 8)
la_s, la_dh, la_dk = f32(2, 2, 4, 3), -np.abs(f32(2, 5, 2)) * 0.3, -np.abs(f32(2, 5, 8)) * 0.3
la_b1, la_b2 = 1 / (1 + np.exp(-f32(2, 5, 1))), 1 / (1 + np.exp(-f32(2, 5, 2)))
for rule, extra, names in (("linear", {}, ["q", "k", "v"]),
                           ("gated", {"decay": la_dk}, ["q", "k", "v", "", "decay"]),
                           ("delta", {"past": la_s, "beta": la_b2}, ["q", "k", "v", "past", "", "beta"]),
                           ("gated_delta", {"past": la_s, "decay": la_dh, "beta": la_b1},
                            ["q", "k", "v", "past", "decay", "beta"])):
    la_o, la_st = linear_attention(la_q, la_k, la_v, 6, 2, rule, **extra)
    case("linear_attention_27_" + rule + "_gqa", "LinearAttention", {"q": la_q, "k": la_k, "v": la_v, **extra},
         {"y": la_o, "state": la_st}, 27, {"update_rule": rule, "q_num_heads": 6, "kv_num_heads": 2}, {}, names)
la_o, la_st = linear_attention(la_q[:, :1], la_k[:, :1], la_v[:, :1], 6, 2, "gated_delta", la_s, la_dh[:, :1],
                               la_b2[:, :1], scale=0.25)
case("linear_attention_27_decode_scale", "LinearAttention",
     {"q": la_q[:, :1], "k": la_k[:, :1], "v": la_v[:, :1], "past": la_s, "decay": la_dh[:, :1], "beta": la_b2[:, :1]},
     {"y": la_o, "state": la_st}, 27, {"q_num_heads": 6, "kv_num_heads": 2, "scale": 0.25})


# Blocked quantization (opset 21 block_size): scale and zero point repeated
# block_size times along the axis, the last block cut short; ONNX's
# saturate(round-half-even(x / scale) + zero_point) and (x - zero_point) * scale.
def blocks(a, axis, bs, n):
    return np.take(np.repeat(a, bs, axis=axis), np.arange(n), axis=axis)


bq_x, bq_s = f32(3, 5) * 40, np.abs(f32(3, 3)) + 0.1
bq_z = rng.integers(-20, 20, (3, 3)).astype(np.int8)
bq_y = np.clip(np.rint(bq_x / blocks(bq_s, 1, 2, 5)) + blocks(bq_z, 1, 2, 5), -128, 127).astype(np.int8)
case("quantize_linear_21_blocked_i8_cut", "QuantizeLinear", {"x": bq_x, "s": bq_s, "z": bq_z}, {"y": bq_y}, 21,
     {"axis": 1, "block_size": 2})
bq_s0 = np.abs(f32(2, 5)) + 0.05
bq_y0 = np.clip(np.rint(bq_x / blocks(bq_s0, 0, 2, 3)), 0, 255).astype(np.uint8)
case("quantize_linear_21_blocked_u8_axis0", "QuantizeLinear", {"x": bq_x, "s": bq_s0}, {"y": bq_y0}, 21,
     {"axis": 0, "block_size": 2, "output_dtype": TP.UINT8})
bd_x = rng.integers(0, 256, (2, 7, 3)).astype(np.uint8)
bd_s, bd_z = np.abs(f32(2, 3, 3)), rng.integers(0, 256, (2, 3, 3)).astype(np.uint8)
bd_y = ((bd_x.astype(np.float32) - blocks(bd_z, 1, 3, 7).astype(np.float32)) * blocks(bd_s, 1, 3, 7)).astype(np.float32)
case("dequantize_linear_21_blocked_u8_cut", "DequantizeLinear", {"x": bd_x, "s": bd_s, "z": bd_z}, {"y": bd_y}, 21,
     {"axis": -2, "block_size": 3})


# FlexAttention (ai.onnx.preview opset 1): the forms ONNX's test data leaves out
# (batch > 1 with GQA and a score_mod, subgraphs reading values of the outer
# graph, softmax_precision, a negative scale), against the formula of its
# operator text computed in NumPy: softmax(score_mod(Q K^T * scale)) then
# prob_mod, times V, query head h reading K/V head h // (Hq / Hkv); Q and K are
# each scaled by sqrt(scale) as its function body does (a negative scale: Q by
# -sqrt(|scale|)).
def flex(q, k, v, scale=None, score_mod=None, prob_mod=None, sp=None):
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    sp = sp or (np.float64 if q.dtype == np.float64 else np.float32)
    # Q and K each times sqrt(scale), taken in f32 (the operator's function body)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    r = np.sqrt(np.float32(abs(scale))).astype(q.dtype)
    s = ((q * (r if scale >= 0 else -r)).astype(np.float64) @ np.swapaxes(k * r, -1, -2).astype(np.float64))
    s = s.astype(q.dtype).astype(sp)  # the product in Q's dtype, then cast
    s = score_mod(s) if score_mod else s
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    p = prob_mod(p) if prob_mod else p
    return (p.astype(sp) @ v.astype(sp)).astype(q.dtype)


def mod_graph(name, nodes, dtype=TP.FLOAT, inits=()):
    """A modifier graph: input "s_in", output "s_out", 4-D of dtype."""
    return h.make_graph(nodes, name, [h.make_tensor_value_info("s_in", dtype, None)],
                        [h.make_tensor_value_info("s_out", dtype, None)], list(inits))


FA = "ai.onnx.preview:FlexAttention"
fq, fk, fv, fb = f32(2, 6, 5, 8), f32(2, 2, 7, 8), f32(2, 2, 7, 3), f32(2, 6, 5, 7)
case("flex_attention_gqa_batch2_score_mod_outer_input", FA, {"q": fq, "k": fk, "v": fv, "bias": fb},
     {"y": flex(fq, fk, fv, score_mod=lambda s: s + fb)}, 26,
     {"score_mod": mod_graph("add_bias", [h.make_node("Add", ["s_in", "bias"], ["s_out"])])}, {}, ["q", "k", "v"])
fw = np.abs(f32(1, 1, 1, 7)) + 0.5
dq, dk, dv = (a.astype(np.float64) for a in (fq, fk[:, :1], fv[:, :1]))
case("flex_attention_f64_scale_prob_mod_outer_const", FA, {"q": dq, "k": dk, "v": dv},
     {"y": flex(dq, dk, dv, scale=0.3, prob_mod=lambda p: p * fw.astype(np.float64))}, 26,
     {"scale": 0.3, "prob_mod": mod_graph("weigh", [h.make_node("Cast", ["w"], ["w64"], to=TP.DOUBLE),
                                                    h.make_node("Mul", ["s_in", "w64"], ["s_out"])], TP.DOUBLE)},
     {"w": fw}, ["q", "k", "v"])
fm = np.tril(np.ones((5, 7), bool), 1)
case("flex_attention_softmax_f64_where_outer_mask", FA, {"q": fq, "k": fk, "v": fv},
     {"y": flex(fq, fk, fv, score_mod=lambda s: np.where(fm, s, -np.inf), sp=np.float64)}, 26,
     {"softmax_precision": TP.DOUBLE,
      "score_mod": mod_graph("mask", [h.make_node("Where", ["m", "s_in", "ninf"], ["s_out"])], TP.DOUBLE,
                             [nh.from_array(np.array(-np.inf), "ninf")])},
     {"m": fm}, ["q", "k", "v"])
hq, hk, hv = fq.astype(np.float16), fk.astype(np.float16), fv.astype(np.float16)
case("flex_attention_f16_gqa_soft_cap_outer_const", FA, {"q": hq, "k": hk, "v": hv},
     {"y": flex(hq, hk, hv, score_mod=lambda s: np.tanh(s / np.float32(1.5)) * np.float32(1.5))}, 26,
     {"score_mod": mod_graph("soft_cap", [h.make_node("Div", ["s_in", "cap"], ["t0"]), h.make_node("Tanh", ["t0"], ["t1"]),
                                          h.make_node("Mul", ["t1", "cap"], ["s_out"])])},
     {"cap": np.array(1.5, np.float32)}, ["q", "k", "v"])
dk2, dv2 = fk.astype(np.float64), fv.astype(np.float64)
case("flex_attention_f64_gqa_scale", FA, {"q": dq, "k": dk2, "v": dv2}, {"y": flex(dq, dk2, dv2, scale=0.3)}, 26,
     {"scale": 0.3}, {}, ["q", "k", "v"])
case("flex_attention_negative_scale", FA, {"q": fq, "k": fk, "v": fv}, {"y": flex(fq, fk, fv, scale=-0.5)}, 26,
     {"scale": -0.5}, {}, ["q", "k", "v"])

if __name__ == "__main__":
    pat = sys.argv[1] if len(sys.argv) > 1 else ""
    sel = [c for c in CASES if re.search(pat, c[0])]
    print("1..%d" % len(sel))
    bad = sum(not run(i + 1, c) for i, c in enumerate(sel))
    sys.exit(1 if bad else 0)
