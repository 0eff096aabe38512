"""Numeric cases of attention, rotary_embedding, batch_norm, instance_norm and group_norm.

attention with softcap and a KV cache: the same oracle with cap tanh(s / cap) on the
scaled scores before the mask, and past_key/past_value concatenated before k and v by
NumPy (causal then offset by the past length); present_key/present_value must equal
those concatenations exactly.  rotary_embedding: a float64 NumPy rotation written from
ONNX's definition (rope_ref), tolerance 2 eps relative plus 2 eps (|x1 c| + |x2 s|).

attention: the oracle is a float64 NumPy softmax(scale * q k^T + mask) v written here
(grouped-query heads repeated, bool masks and causal as -inf, a query with no key left
gets zeros); one case is cross-checked against PyTorch.  Tolerance per output element
(b, h, s, d), with P the exact weights:
    |got - exp| <= 2 eps |exp| + eps * P|v|_d * ((4 sqrt(D) + 8) A + 4 sqrt(T) + 16)
where A is the largest |scale| (|q| |k|^T) + |mask| of the row's kept keys: an error e
in the scores moves the weights by a relative e, and the scores' own rounding grows
with sqrt(D) and the magnitude of the logits (large logits are ill-conditioned in any
precision; the cases with logits near +-1000 check that nothing overflows and that the
result keeps that accuracy).

batch_norm / instance_norm / group_norm: the oracle is PyTorch (F.batch_norm with
training=False, F.instance_norm, F.group_norm) in float64 from the exact inputs.
Tolerance as layer_norm's: absolute (4 sqrt(K) + 16) eps (|xhat| + 1 + |mean| inv_std)
|scale| + |bias| with K the elements of one statistic (1 for batch_norm), plus 2 eps
relative.

f16 / bf16 (computed by the backend in f32): inputs are generated representable, the
oracle is computed in float64 from them and rounded to the 16-bit type; the tolerance
is one ulp of the 16-bit type (relative) plus the f32 bound above.  bf16 travels as an
f32 .npy, so its ulp is expressed in f32 eps."""
import math

import numpy as np

from harness import NP, Case, Tol, rng_for

EPS32 = float(np.finfo(np.float32).eps)
BF16_R = 2.0 ** -7 / EPS32  # one bf16 ulp (relative) in f32 eps
F16_TINY = 2.0 ** -24  # smallest f16 subnormal: the absolute floor near zero


def f64(x):
    return np.asarray(x, dtype=np.float64)


def shp(s):
    return "x".join(map(str, s)) or "[]"


def sq(k):
    return math.sqrt(max(k, 1))


def bf16_round(v):
    """float64 -> nearest-even bf16 value (8 significant bits), as float32."""
    m, e = np.frexp(f64(v))
    return np.ldexp(np.rint(np.ldexp(m, 8)), e - 8).astype(np.float32)


def rep(x, dt):
    """Values exactly representable in dt, as the array written to the .npy."""
    if dt == "bf16":
        return bf16_round(x)
    return f64(x).astype(NP[dt])


def npy_dt(dt):
    return np.float32 if dt == "bf16" else NP[dt]


def tol(dt, scale):
    """2 eps relative + eps * scale absolute in dt; for 16-bit types one ulp of the
    type plus the f32 bound (the backend computes in f32)."""
    if dt == "f16":
        return Tol(r=1 + 2 * EPS32 / 2.0 ** -10, a=1, scale=f64(scale) * EPS32 / 2.0 ** -10 + F16_TINY / 2.0 ** -10)
    if dt == "bf16":
        return Tol(r=BF16_R + 2, a=1, scale=scale)
    return Tol(r=2, a=1, scale=scale)


# ---------------------------------------------------------------- attention

def attention_ref(q, k, v, mask=None, scale=None, causal=False, softcap=0.0, past=0):
    """float64 result and the tolerance scale of each output element.  softcap:
    cap tanh(s / cap) on the scaled scores, before the mask (ONNX Attention).
    past: the first keys are a cache of that length; causal then lets query i see
    keys t <= i + past (ONNX's offset-aware causal mask)."""
    Q, K, V = f64(q), f64(k), f64(v)
    B, H, S, D = Q.shape
    Hk, T, Dv = K.shape[1], K.shape[2], V.shape[3]
    g = H // Hk if Hk else 1
    K, V = np.repeat(K, g, axis=1), np.repeat(V, g, axis=1)
    sc = scale if scale is not None else (1.0 / math.sqrt(D) if D else 1.0)
    s = np.einsum("bhsd,bhtd->bhst", Q, K) * sc
    a = np.einsum("bhsd,bhtd->bhst", np.abs(Q), np.abs(K)) * abs(sc)
    if softcap:
        s = softcap * np.tanh(s / softcap)
        a = a + softcap  # tanh's slope is at most 1: the raw score's error, plus the rounding of the capped one
    keep = np.ones((B, H, S, T), dtype=bool)
    if mask is not None:
        if mask.dtype == np.bool_:
            keep &= np.broadcast_to(mask, keep.shape)
        else:
            M = np.broadcast_to(f64(mask), keep.shape)
            s = s + M
            a = a + np.where(np.isfinite(M), np.abs(M), 0.0)
            keep &= ~np.isneginf(M)
    if causal:
        keep &= np.arange(T)[None, :] <= np.arange(S)[:, None] + past
    s = np.where(keep, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True) if T else np.zeros((B, H, S, 1))
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(keep, np.exp(s - m), 0.0)
    l = np.sum(e, axis=-1, keepdims=True)
    p = e / np.where(l == 0, 1.0, l)
    with np.errstate(invalid="ignore"):
        y = np.where(l == 0, 0.0, p @ V)  # a query with no key left: zeros whatever v holds
    amax = np.max(np.where(keep, a, 0.0), axis=-1, keepdims=True) if T else np.zeros((B, H, S, 1))
    with np.errstate(invalid="ignore"):
        scale_t = (p @ np.abs(V)) * ((4 * sq(D) + 8) * amax + 4 * sq(T) + 16)
    return y, np.where(np.isfinite(scale_t), scale_t, 0.0)


def attention_case(name, dt, qs, ks, vs, mask=None, scale=None, causal=False, qmul=1.0, args=(), post=None,
                   oracle=None, softcap=None, past=None, present=False):
    """mask: None, ("bool", shape, p_keep) or ("add", shape).  post(rng, q, k, v, m)
    may edit the inputs (NaN, fully masked rows) before the oracle sees them.
    past: P, the length of past_key/past_value (inputs 4, 5), concatenated before
    k and v by NumPy for the oracle; present: the node also writes present_key and
    present_value, expected to be exactly those concatenations."""
    attrs = {}
    if scale is not None:
        attrs["scale"] = scale
    if causal:
        attrs["causal"] = 1
    if softcap is not None:
        attrs["softcap"] = softcap

    def build():
        rng = rng_for(name)
        q = rep(rng.standard_normal(qs) * qmul, dt)
        k = rep(rng.standard_normal(ks), dt)
        v = rep(rng.standard_normal(vs), dt)
        m = None
        if mask is not None:
            if mask[0] == "bool":
                m = rng.random(mask[1]) < mask[2]
            else:
                mv = rng.standard_normal(mask[1]) * 2
                mv[rng.random(mask[1]) < 0.25] = -np.inf
                m = rep(mv, dt)
        if post is not None:
            q, k, v, m = post(rng, q, k, v, m)
        kf, vf = k, v
        if past is not None:
            pk = rep(rng.standard_normal(ks[:2] + (past,) + ks[3:]), dt)
            pv = rep(rng.standard_normal(vs[:2] + (past,) + vs[3:]), dt)
            kf, vf = np.concatenate([pk, k], 2), np.concatenate([pv, v], 2)
        if oracle is None:
            y, ts = attention_ref(q, kf, vf, m, scale, causal, softcap or 0.0, past or 0)
        else:
            y, ts = oracle(q, kf, vf, m, scale, causal)
        ins = [("q", q, dt), ("k", k, dt), ("v", v, dt)]
        if m is not None:
            ins.append(("mask", m, "bool" if m.dtype == np.bool_ else dt))
        elif past is not None:
            ins.append(None)
        if past is not None:
            ins += [("past_key", pk, dt), ("past_value", pv, dt)]
        expect, tols = {"y": rep(y, dt)}, {"y": tol(dt, ts)}
        if present:
            expect.update(present_key=kf, present_value=vf)
        return {"inputs": ins, "expect": expect, "tol": tols}
    return Case(name, "attention", attrs=attrs or None, args=list(args), build=build,
                outputs=["y", "present_key", "present_value"] if present else None)


def attn_name(dt, qs, ks, vs, label):
    return "attention %s q%s k%s v%s%s" % (dt, shp(qs), shp(ks), shp(vs), label)


def torch_oracle(q, k, v, m, scale, causal):
    """The same function through PyTorch (its fused kernel when this version has one)."""
    import torch
    import torch.nn.functional as F
    Q, K, V = (torch.from_numpy(f64(a)) for a in (q, k, v))
    g = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(g, dim=1), V.repeat_interleave(g, dim=1)
    M = torch.from_numpy(np.asarray(m)) if m is not None else None
    if hasattr(F, "scaled_dot_product_attention"):
        if causal and M is not None:
            # PyTorch >= 2.1 refuses attn_mask with is_causal: fold the causal
            # rule (key t visible to query i iff t <= i) into the mask.
            keep = torch.ones(Q.shape[-2], K.shape[-2], dtype=torch.bool).tril()
            M = M & keep if M.dtype == torch.bool else torch.where(keep, M, float("-inf"))
            causal = False
        y = F.scaled_dot_product_attention(Q, K, V, attn_mask=M, is_causal=bool(causal), scale=scale)
    else:
        s = Q @ K.transpose(-1, -2) * (scale if scale is not None else Q.shape[-1] ** -0.5)
        if M is not None:
            s = s.masked_fill(~M, float("-inf")) if M.dtype == torch.bool else s + M
        if causal:
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        y = torch.softmax(s, dim=-1) @ V
    return y.numpy(), attention_ref(q, k, v, m, scale, causal)[1]


def attention_cases():
    cases = []

    def add(dt, qs, ks, vs, label="", **kw):
        cases.append(attention_case(attn_name(dt, qs, ks, vs, label), dt, qs, ks, vs, **kw))

    B, H, S, T, D, Dv = 2, 4, 10, 12, 16, 8
    q4, k4, v4 = (B, H, S, D), (B, H, T, D), (B, H, T, Dv)
    for dt in ("f32", "f64", "f16", "bf16"):
        add(dt, q4, k4, v4)
        add(dt, q4, k4, v4, " bool mask [B,1,1,T]", mask=("bool", (B, 1, 1, T), 0.7))
        add(dt, q4, k4, v4, " additive mask [H,S,T] with -inf", mask=("add", (H, S, T)))
        add(dt, (1, 2, 7, 8), (1, 2, 13, 8), (1, 2, 13, 8), " causal S<T", causal=True)
    # masks: full shape, NumPy broadcasting from lower ranks, scalars
    add("f32", q4, k4, v4, " bool mask [B,H,S,T]", mask=("bool", (B, H, S, T), 0.6))
    add("f32", q4, k4, v4, " bool mask [S,T]", mask=("bool", (S, T), 0.5))
    add("f32", q4, k4, v4, " bool mask [B,1,S,1]", mask=("bool", (B, 1, S, 1), 0.8))
    add("f32", q4, k4, v4, " bool mask [T]", mask=("bool", (T,), 0.5))
    add("f32", q4, k4, v4, " additive mask [B,H,S,T]", mask=("add", (B, H, S, T)))
    add("f32", q4, k4, v4, " additive mask [1,1,S,T]", mask=("add", (1, 1, S, T)))
    add("f32", q4, k4, v4, " additive mask [B,1,S,1]", mask=("add", (B, 1, S, 1)))
    add("f64", q4, k4, v4, " additive mask [T]", mask=("add", (T,)))
    add("f64", q4, k4, v4, " bool mask [H,1,T]", mask=("bool", (H, 1, T), 0.6))
    # causal, aligned at the top left: S > T (queries past T see every key), S == T, with masks
    add("f32", (1, 2, 13, 8), (1, 2, 7, 8), (1, 2, 7, 4), " causal S>T", causal=True)
    add("f64", (2, 3, 9, 8), (2, 3, 9, 8), (2, 3, 9, 8), " causal S=T", causal=True)
    add("f32", (2, 3, 9, 8), (2, 3, 20, 8), (2, 3, 20, 5), " causal + bool mask", causal=True,
        mask=("bool", (2, 1, 9, 20), 0.7))
    add("f32", (1, 2, 300, 16), (1, 2, 600, 16), (1, 2, 600, 16), " causal + additive mask, several key blocks",
        causal=True, mask=("add", (300, 600)))
    # grouped-query and multi-query heads
    add("f32", (2, 8, 6, 16), (2, 2, 9, 16), (2, 2, 9, 12), " grouped-query 8/2")
    add("f64", (1, 6, 5, 8), (1, 1, 7, 8), (1, 1, 7, 8), " multi-query 6/1", mask=("bool", (6, 5, 7), 0.7))
    add("f32", (2, 6, 40, 32), (2, 3, 70, 32), (2, 3, 70, 32), " grouped-query 6/3 causal", causal=True)
    # explicit scales (a zero scale gives uniform weights)
    add("f32", q4, k4, v4, " scale=0.3", scale=0.3)
    add("f64", q4, k4, v4, " scale=-1.5", scale=-1.5)
    add("f32", q4, k4, v4, " scale=0", scale=0.0)
    add("f16", q4, k4, v4, " scale=0.125 bool mask", scale=0.125, mask=("bool", (B, 1, S, T), 0.8))

    # a query whose keys are all masked gets zeros (never NaN), even with inf in v
    def kill_rows(rng, q, k, v, m):
        m = m.copy()
        m[0, 1, 3, :] = False
        m[1, :, 0, :] = False
        return q, k, v, m
    for dt in ("f32", "f64", "bf16"):
        add(dt, q4, k4, v4, " bool mask with fully masked rows", mask=("bool", (B, H, S, T), 0.7), post=kill_rows)

    def kill_add(rng, q, k, v, m):
        m = m.copy()
        m[:, 2, :] = -np.inf
        return q, k, v, m
    add("f32", q4, k4, v4, " additive mask with -inf rows", mask=("add", (H, S, T)), post=kill_add)

    def kill_head_nan_v(rng, q, k, v, m):
        m = m.copy()
        m[0, 0] = False  # every query of batch 0 head 0; only that head reads kv head 0 there
        v = v.copy()
        v[0, 0, 0, :] = np.nan
        v[0, 0, 1, :] = np.inf
        return q, k, v, m
    add("f32", q4, k4, v4, " fully masked head reading NaN and inf in v", mask=("bool", (B, H, S, T), 0.8),
        post=kill_head_nan_v)
    # causal with S > T under a mask removing every key of the first queries
    add("f32", (1, 2, 8, 8), (1, 2, 5, 8), (1, 2, 5, 8), " causal, first queries fully masked", causal=True,
        mask=("bool", (5,), 1.0), post=lambda rng, q, k, v, m: (q, k, v, np.array([False, False, True, True, True])))

    # NaN in q: the rows reading it are NaN (not silently zero)
    def nan_q(rng, q, k, v, m):
        q = q.copy()
        q[0, 0, 2, :] = np.nan
        q[1, 3, 4, 0] = np.nan
        return q, k, v, m
    add("f32", q4, k4, v4, " NaN in q propagates", post=nan_q)

    # long sequences with large logits: the row max is subtracted, nothing overflows
    for dt in ("f32", "f64"):
        add(dt, (1, 2, 64, 32), (1, 2, 2048, 32), (1, 2, 2048, 32), " T=2048 logits near +-1000", qmul=300.0)
    add("f32", (1, 2, 64, 32), (1, 2, 2048, 32), (1, 2, 2048, 32), " T=2048 logits near +-1000 additive mask",
        qmul=300.0, mask=("add", (1, 1, 64, 2048)))
    add("f16", (1, 2, 32, 16), (1, 2, 2048, 16), (1, 2, 2048, 16), " T=2048 large logits", qmul=8.0)
    add("f32", (1, 2, 1024, 64), (1, 2, 1024, 64), (1, 2, 1024, 64), " causal S=T=1024 large logits",
        qmul=30.0, causal=True)
    # head sizes: D != Dv, 1-wide heads, one query (decoding)
    add("f32", (2, 2, 5, 1), (2, 2, 6, 1), (2, 2, 6, 1), " D=Dv=1")
    add("f64", (2, 2, 5, 3), (2, 2, 6, 3), (2, 2, 6, 40), " D=3 Dv=40")
    add("f32", (4, 8, 1, 64), (4, 8, 500, 64), (4, 8, 500, 64), " one query, 500 keys")
    # empty tensors: no batch, no queries, no keys (zeros), D=0 (uniform weights)
    add("f32", (0, 2, 3, 4), (0, 2, 5, 4), (0, 2, 5, 4), " empty batch")
    add("f32", (1, 2, 0, 4), (1, 2, 5, 4), (1, 2, 5, 4), " no queries")
    add("f32", (1, 2, 3, 4), (1, 2, 0, 4), (1, 2, 0, 6), " no keys (zeros)")
    add("f64", (1, 2, 3, 0), (1, 2, 5, 0), (1, 2, 5, 3), " D=0 (uniform)")
    add("f32", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 0), " Dv=0")
    # threads: uneven splits of the query blocks, dynamic scheduling with causal
    for t in ("1", "3"):
        add("f32", (2, 3, 200, 48), (2, 3, 333, 48), (2, 3, 333, 40), " causal --threads " + t, causal=True,
            args=["--threads", t], mask=("bool", (2, 1, 1, 333), 0.9))
    add("f64", (1, 1, 100, 16), (1, 1, 700, 16), (1, 1, 700, 16), " --threads 3", args=["--threads", "3"])
    # independent oracle: PyTorch (key 0 kept: its softmax would give NaN on an empty row)
    def keep_first(rng, q, k, v, m):
        m = m.copy()
        m[..., 0] = True
        return q, k, v, m
    cases.append(attention_case(attn_name("f64", q4, k4, v4, " causal + bool mask vs PyTorch"), "f64", q4, k4, v4,
                                mask=("bool", (B, 1, S, T), 0.8), causal=True, oracle=torch_oracle,
                                post=keep_first))
    # softcap (before the mask: masked keys stay out) and the KV cache
    for dt in ("f32", "f64", "f16", "bf16"):
        add(dt, q4, k4, v4, " softcap=2 additive mask with -inf", softcap=2.0, qmul=3.0, mask=("add", (H, S, T)))
        add(dt, (2, 4, 3, 16), (2, 2, 3, 16), (2, 2, 3, 8), " past P=9 + present, grouped-query", past=9,
            present=True)
    add("f32", (1, 2, 64, 32), (1, 2, 700, 32), (1, 2, 700, 32), " softcap=30 logits near +-1000, several key blocks",
        softcap=30.0, qmul=300.0)
    add("f32", (2, 2, 5, 8), (2, 2, 5, 8), (2, 2, 5, 8), " softcap=0.5 causal bool mask", softcap=0.5, causal=True,
        mask=("bool", (2, 1, 5, 5), 0.8))
    add("f64", (2, 2, 1, 8), (2, 2, 1, 8), (2, 2, 1, 6), " one query, past P=40 (decoding), no present", past=40)
    add("f32", (1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8), " present without past (a copy of k, v)", present=True)
    add("f32", (2, 2, 3, 8), (2, 2, 3, 8), (2, 2, 3, 8), " past P=5 + present, bool mask [S,P+T], softcap",
        past=5, present=True, softcap=4.0, mask=("bool", (3, 8), 0.7))
    add("f32", (1, 2, 3, 8), (1, 2, 0, 8), (1, 2, 0, 8), " no new keys, past P=6 + present", past=6, present=True)
    add("f32", (1, 2, 0, 8), (1, 2, 2, 8), (1, 2, 2, 8), " no queries, past P=3 + present", past=3, present=True)
    add("f32", (2, 4, 40, 32), (2, 4, 40, 32), (2, 4, 40, 32), " past P=300 + present causal --threads 3", past=300,
        present=True, causal=True, args=["--threads", "3"])
    add("f64", (1, 2, 6, 8), (1, 2, 6, 8), (1, 2, 6, 8), " past P=4 causal (diagonal at P)", past=4, causal=True)
    add("bf16", (1, 2, 1, 16), (1, 2, 1, 16), (1, 2, 1, 16), " decoding step: past P=31 causal softcap", past=31,
        causal=True, softcap=5.0, present=True)
    return cases


def attention_error_cases():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    c = []
    for label, ins, attrs, pats in (
            ("q rank 3", [("q", z(2, 5, 8)), ("k", z(2, 1, 5, 8)), ("v", z(2, 1, 5, 8))], None,
             [r"rank 3", r"\[2,5,8\]"]),
            ("k heads 3 do not divide q heads 4", [("q", z(1, 4, 5, 8)), ("k", z(1, 3, 6, 8)), ("v", z(1, 3, 6, 8))],
             None, [r"3 heads", r"4 heads"]),
            ("head size of k differs", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 7)), ("v", z(1, 2, 6, 8))], None,
             [r"head size", r"\[1,2,6,7\]"]),
            ("T of v differs", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 8)), ("v", z(1, 2, 7, 8))], None,
             [r"sequence length", r"\[1,2,7,8\]"]),
            ("batch of v differs", [("q", z(2, 2, 5, 8)), ("k", z(2, 2, 6, 8)), ("v", z(1, 2, 6, 8))], None,
             [r"batch", r"\[1,2,6,8\]"]),
            ("k dtype f64", [("q", z(1, 2, 5, 8)), ("k", np.zeros((1, 2, 6, 8))), ("v", z(1, 2, 6, 8))], None,
             [r"f64", r"f32"]),
            ("mask dtype i32", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 8)), ("v", z(1, 2, 6, 8)),
                                ("mask", np.ones((5, 6), np.int32))], None, [r"mask", r"i32"]),
            ("mask [5,7] vs T=6", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 8)), ("v", z(1, 2, 6, 8)),
                                   ("mask", np.ones((5, 7), bool))], None, [r"\[5,7\]", r"\[1,2,5,6\]"]),
            ("mask rank 5", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 8)), ("v", z(1, 2, 6, 8)),
                             ("mask", np.ones((1, 1, 2, 5, 6), bool))], None, [r"mask"]),
            ("causal=2", [("q", z(1, 2, 5, 8)), ("k", z(1, 2, 6, 8)), ("v", z(1, 2, 6, 8))], {"causal": 2},
             [r"causal", r"2"])):
        c.append(Case("attention invalid: " + label + ": exit 3", "attention", inputs=ins, attrs=attrs, exit_code=3,
                      node_name="attn", stderr_re=[r"attn"] + pats))
    return c


# ---------------------------------------------------------------- rotary_embedding

def rope_ref(x, cos, sin, pos, rdim, interleaved, heads):
    """float64 rotary embedding written from ONNX's definition: x [B,H,S,D] or
    [B,S,H*D]; cos/sin [B,S,>=R/2] (or batch 1), or [P,>=R/2] read at pos [B,S]
    (negative ids from the end); pairs (i, i+R/2), or (2i, 2i+1) interleaved, become
    (x1 c - x2 s, x1 s + x2 c).  Also returns the tolerance scale |x1 c| + |x2 s|."""
    X = f64(x)
    three = X.ndim == 3
    if three:
        B, S, HD = X.shape
        X = X.reshape(B, S, heads, HD // heads).transpose(0, 2, 1, 3)
    B, H, S, D = X.shape
    R = rdim or D
    C, Sn = f64(cos), f64(sin)
    if pos is not None:
        C, Sn = C[pos], Sn[pos]
    C, Sn = np.broadcast_to(C[..., :R // 2], (B, S, R // 2))[:, None], np.broadcast_to(Sn[..., :R // 2], (B, S, R // 2))[:, None]
    if interleaved:
        i1, i2 = np.arange(0, R, 2), np.arange(1, R, 2)
    else:
        i1, i2 = np.arange(R // 2), np.arange(R // 2, R)
    x1, x2 = X[..., i1], X[..., i2]
    Y, T = X.copy(), np.zeros_like(X)
    Y[..., i1], Y[..., i2] = x1 * C - x2 * Sn, x1 * Sn + x2 * C
    T[..., i1], T[..., i2] = np.abs(x1 * C) + np.abs(x2 * Sn), np.abs(x1 * Sn) + np.abs(x2 * C)
    if three:
        Y, T = (a.transpose(0, 2, 1, 3).reshape(B, S, H * D) for a in (Y, T))
    return Y, T


def rope_case(dt, xs, rdim=0, interleaved=0, heads=0, npos=None, cache_b=None, wide=0, label="", args=()):
    """npos: position ids into a [npos, R/2 + wide] cache; else a [cache_b or B, S, R/2 + wide] cache."""
    three = len(xs) == 3
    D = xs[2] // heads if three else xs[3]
    B, S = xs[0], (xs[1] if three else xs[2])
    half = (rdim or D) // 2
    name = "rotary_embedding %s x%s rdim=%d interleaved=%d%s%s" % (dt, shp(xs), rdim, interleaved,
                                                                  " positions" if npos else "", label)
    attrs = {"interleaved": interleaved, "rotary_embedding_dim": rdim}
    if heads:
        attrs["num_heads"] = heads

    def build():
        rng = rng_for(name)
        x = rep(rng.standard_normal(xs) * 2, dt)
        cshape = (npos, half + wide) if npos else (cache_b or B, S, half + wide)
        ang = rng.uniform(0, 6.3, cshape)
        cos, sin = rep(np.cos(ang), dt), rep(np.sin(ang), dt)
        pos = rng.integers(-npos, npos, (B, S)) if npos else None
        y, ts = rope_ref(x, cos, sin, pos, rdim, interleaved, heads)
        ins = [("x", x, dt), ("cos_cache", cos, dt), ("sin_cache", sin, dt)]
        if npos:
            ins.append(("position_ids", pos.astype(np.int64)))
        return {"inputs": ins, "expect": {"y": rep(y, dt)}, "tol": tol(dt, 2 * ts)}
    return Case(name, "rotary_embedding", attrs=attrs, args=list(args), build=build)


def rope_cases():
    c = []
    for dt in ("f32", "f64", "f16", "bf16"):
        c.append(rope_case(dt, (2, 3, 5, 8)))
        c.append(rope_case(dt, (2, 5, 24), rdim=4, interleaved=1, heads=3, npos=16))
        c.append(rope_case(dt, (2, 3, 5, 8), interleaved=1, npos=9))
        c.append(rope_case(dt, (2, 5, 24), rdim=6, heads=3, label=" partial"))
    c += [rope_case("f32", (2, 4, 7, 16), rdim=8, label=" partial [B,H,S,D]"),
          rope_case("f32", (2, 4, 7, 16), rdim=8, interleaved=1, cache_b=1, label=" cache batch 1"),
          rope_case("f64", (3, 6, 20), heads=2, wide=3, label=" cache rows wider than R/2"),
          rope_case("f32", (2, 6, 20), heads=2, interleaved=1, npos=40, wide=5, label=" wide cache"),
          rope_case("f32", (1, 2, 3, 2), label=" D=2"),
          rope_case("f32", (2, 3, 0, 8), label=" S=0"),
          rope_case("f32", (2, 0, 24), heads=3, npos=4, label=" S=0"),
          rope_case("f32", (4, 16, 128, 64), rdim=32, npos=512, label=" large --threads 3", args=["--threads", "3"]),
          rope_case("f64", (2, 300, 1024), heads=8, interleaved=1, label=" large 3-D")]
    return c


def rope_error_cases():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    pos = lambda a: np.array(a, np.int64)  # noqa: E731
    c = []
    for label, ins, attrs, pats, code in (
            ("x rank 2", [("x", z(5, 8)), ("c", z(5, 4)), ("s", z(5, 4))], None, [r"rank 2", r"\[5,8\]"], 3),
            ("3-D x without num_heads", [("x", z(2, 5, 24)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))], None,
             [r"num_heads", r"\[2,5,24\]"], 3),
            ("num_heads 5 does not divide 24", [("x", z(2, 5, 24)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))],
             {"num_heads": 5}, [r"num_heads", r"5"], 3),
            ("num_heads differs from dim 1", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))],
             {"num_heads": 2}, [r"num_heads", r"\[2,3,5,8\]"], 3),
            ("odd rotary_embedding_dim", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))],
             {"rotary_embedding_dim": 3}, [r"rotary_embedding_dim", r"3"], 3),
            ("rotary_embedding_dim past D", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 5)), ("s", z(2, 5, 5))],
             {"rotary_embedding_dim": 10}, [r"rotary_embedding_dim", r"10", r"\b8\b"], 3),
            ("odd head size", [("x", z(2, 3, 5, 7)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))], None,
             [r"rotary_embedding_dim", r"\b7\b"], 3),
            ("cache too narrow", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 3)), ("s", z(2, 5, 3))], None,
             [r"cos_cache", r"\[2,5,3\]"], 3),
            ("cache S differs", [("x", z(2, 3, 5, 8)), ("c", z(2, 4, 4)), ("s", z(2, 4, 4))], None,
             [r"cos_cache", r"\[2,4,4\]"], 3),
            ("sin shape differs from cos", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 4)), ("s", z(1, 5, 4))], None,
             [r"sin_cache", r"\[1,5,4\]"], 3),
            ("cos dtype f64", [("x", z(2, 3, 5, 8)), ("c", np.zeros((2, 5, 4))), ("s", z(2, 5, 4))], None,
             [r"cos_cache", r"f64"], 3),
            ("position_ids i32", [("x", z(1, 2, 3, 4)), ("c", z(6, 2)), ("s", z(6, 2)),
                                  ("p", np.zeros((1, 3), np.int32))], None, [r"position_ids", r"i32"], 3),
            ("position_ids shape", [("x", z(1, 2, 3, 4)), ("c", z(6, 2)), ("s", z(6, 2)), ("p", pos([[0, 1]]))],
             None, [r"position_ids", r"\[1,2\]"], 3),
            ("3-D cache with position_ids", [("x", z(1, 2, 3, 4)), ("c", z(1, 3, 2)), ("s", z(1, 3, 2)),
                                             ("p", pos([[0, 1, 2]]))], None, [r"cos_cache", r"max_position"], 3),
            ("position id 6 past a 6-row cache", [("x", z(1, 2, 3, 4)), ("c", z(6, 2)), ("s", z(6, 2)),
                                                 ("p", pos([[0, 6, 1]]))], None, [r"position id 6", r"out of range"], 3),
            ("position id -7", [("x", z(1, 2, 3, 4)), ("c", z(6, 2)), ("s", z(6, 2)), ("p", pos([[0, 1, -7]]))],
             None, [r"-7", r"out of range"], 3),
            ("interleaved=2", [("x", z(2, 3, 5, 8)), ("c", z(2, 5, 4)), ("s", z(2, 5, 4))], {"interleaved": 2},
             [r"interleaved"], 3)):
        c.append(Case("rotary_embedding invalid: " + label + ": exit %d" % code, "rotary_embedding", inputs=ins,
                      attrs=attrs, exit_code=code, node_name="rope", stderr_re=[r"rope"] + pats))
    return c


def attention_cache_error_cases():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    q, k, v = ("q", z(1, 2, 3, 8)), ("k", z(1, 2, 4, 8)), ("v", z(1, 2, 4, 6))
    c = []
    for label, ins, attrs, outs, pats in (
            ("past_key without past_value", [q, k, v, None, ("pk", z(1, 2, 5, 8))], None, None,
             [r"past_key", r"past_value"]),
            ("past_key head size 7", [q, k, v, None, ("pk", z(1, 2, 5, 7)), ("pv", z(1, 2, 5, 6))], None, None,
             [r"past_key", r"\[1,2,5,7\]"]),
            ("past_value heads 1", [q, k, v, None, ("pk", z(1, 2, 5, 8)), ("pv", z(1, 1, 5, 6))], None, None,
             [r"past_value", r"\[1,1,5,6\]"]),
            ("past lengths differ", [q, k, v, None, ("pk", z(1, 2, 5, 8)), ("pv", z(1, 2, 4, 6))], None, None,
             [r"past_value", r"\[1,2,4,6\]"]),
            ("past_key rank 3", [q, k, v, None, ("pk", z(2, 5, 8)), ("pv", z(1, 2, 5, 6))], None, None,
             [r"past_key", r"rank 3"]),
            ("past_key dtype f64", [q, k, v, None, ("pk", np.zeros((1, 2, 5, 8))), ("pv", z(1, 2, 5, 6))], None,
             None, [r"past_key", r"f64"]),
            ("mask longer than T with the past", [q, k, v, ("m", np.ones((3, 10), bool)), ("pk", z(1, 2, 5, 8)),
                                                  ("pv", z(1, 2, 5, 6))], None, None,
             [r"\[3,10\]", r"\[1,2,3,9\]", r"past"]),
            ("softcap -1", [q, k, v], {"softcap": -1.0}, None, [r"softcap", r"-1"]),
            ("two outputs", [q, k, v], None, ["y", "pk_out"], [r"2 outputs", r"present_key"])):
        c.append(Case("attention invalid: " + label + ": exit 3", "attention", inputs=ins, attrs=attrs, exit_code=3,
                      outputs=outs, node_name="attn", stderr_re=[r"attn"] + pats))
    return c


# ---------------------------------------------------------------- batch/instance/group norm

def torch_norm(op, x, params, eps, groups=None):
    import torch
    import torch.nn.functional as F
    X = torch.from_numpy(f64(x))
    P = [torch.from_numpy(f64(p)) for p in params]
    if op == "batch_norm":
        sc, bi, mean, var = P
        return F.batch_norm(X, mean, var, weight=sc, bias=bi, training=False, eps=eps).numpy()
    if op == "instance_norm":
        return F.instance_norm(X, weight=P[0], bias=P[1], eps=eps).numpy()
    return F.group_norm(X, groups, weight=P[0], bias=P[1], eps=eps).numpy()


def norm_stats(x, groups):
    """Per-element |xhat| + 1 + |mean| inv_std, and the statistic size K."""
    X = f64(x)
    if X.size == 0:
        return np.zeros(X.shape), 1
    g = X.reshape(X.shape[0], groups, -1)
    k = g.shape[2]
    mean = g.mean(axis=2, keepdims=True)
    inv = 1.0 / np.sqrt(((g - mean) ** 2).mean(axis=2, keepdims=True) + 1e-5)
    return (np.abs((g - mean) * inv) + 1 + np.abs(mean) * inv).reshape(X.shape), k


def chan(p, x):
    return f64(p).reshape((1, -1) + (1,) * (x.ndim - 2))


def norm_case(op, dt, shape, groups=None, eps=None, offset=0.0, args=(), label=""):
    name = "%s %s %s%s%s%s" % (op, dt, shp(shape), " num_groups=%d" % groups if groups else "",
                               " epsilon=%g" % eps if eps is not None else "", label)
    attrs = {}
    if groups is not None:
        attrs["num_groups"] = groups
    if eps is not None:
        attrs["epsilon"] = eps
    e = 1e-5 if eps is None else eps

    def build():
        rng = rng_for(name)
        C = shape[1]
        x = rep(rng.standard_normal(shape) * 2 + offset, dt)
        sc = rep(rng.standard_normal(C) + 1, dt)
        bi = rep(rng.standard_normal(C), dt)
        ins = [("x", x, dt), ("scale", sc, dt), ("bias", bi, dt)]
        if op == "batch_norm":
            mean = rep(rng.standard_normal(C) + offset, dt)
            var = rep(rng.random(C) * 3 + 0.05, dt)
            ins += [("mean", mean, dt), ("var", var, dt)]
            params = [sc, bi, mean, var]
            xhat = (f64(x) - chan(mean, x)) / np.sqrt(chan(var, x) + e)
            ts = 8 * ((np.abs(xhat) + 1) * np.abs(chan(sc, x)) + np.abs(chan(bi, x)))
        else:
            params = [sc, bi]
            st, k = norm_stats(x, C if op == "instance_norm" else groups)
            ts = (4 * sq(k) + 16) * (st * np.abs(chan(sc, x)) + np.abs(chan(bi, x)))
        if x.size == 0 or (op == "instance_norm" and x.ndim == 2):
            # PyTorch refuses these; the definition is plain: empty, or a single
            # element per statistic (xhat = 0, y = bias)
            y = np.broadcast_to(chan(bi, x), x.shape).copy()
        else:
            y = torch_norm(op, x, params, e, groups)
        return {"inputs": ins, "expect": {"y": rep(y, dt)}, "tol": tol(dt, ts)}
    return Case(name, op, attrs=attrs or None, args=list(args), build=build)


def norm_cases():
    cases = []
    spatial = ((4, 6, 10), (2, 5, 7, 9), (2, 3, 4, 5, 6))
    for dt in ("f32", "f64", "f16", "bf16"):
        for s in spatial:
            cases.append(norm_case("batch_norm", dt, s))
            cases.append(norm_case("instance_norm", dt, s))
        cases.append(norm_case("group_norm", dt, (4, 6, 10), groups=3))
        cases.append(norm_case("group_norm", dt, (2, 8, 7, 9), groups=2))
        cases.append(norm_case("group_norm", dt, (2, 6, 4, 5, 3), groups=6))
    cases += [
        norm_case("batch_norm", "f32", (8, 6)),
        norm_case("batch_norm", "f64", (3, 4, 5), eps=0.1),
        norm_case("batch_norm", "f32", (4, 3, 50), offset=50.0, label=" offset 50"),
        norm_case("batch_norm", "f32", (0, 3, 4)),
        norm_case("batch_norm", "f32", (8, 32, 64, 64)),
        norm_case("batch_norm", "f32", (2, 3, 100, 100), args=["--threads", "3"], label=" --threads 3"),
        norm_case("instance_norm", "f32", (3, 4)),
        norm_case("instance_norm", "f64", (2, 3, 17), eps=1e-3),
        norm_case("instance_norm", "f32", (2, 3, 1000), offset=50.0, label=" offset 50"),
        norm_case("instance_norm", "f32", (2, 0, 5)),
        norm_case("instance_norm", "f32", (2, 3, 0)),
        norm_case("instance_norm", "f32", (2, 4, 256, 256)),
        norm_case("instance_norm", "f32", (1, 3, 150, 170), args=["--threads", "3"], label=" --threads 3"),
        norm_case("group_norm", "f32", (2, 8, 12, 12), groups=1),
        norm_case("group_norm", "f32", (2, 8, 12, 12), groups=8),
        norm_case("group_norm", "f64", (3, 6), groups=2),
        norm_case("group_norm", "f32", (2, 12, 33), groups=4, offset=50.0, label=" offset 50"),
        norm_case("group_norm", "f32", (2, 6, 3, 3), groups=3, eps=0.5),
        norm_case("group_norm", "f32", (0, 4, 5), groups=2),
        norm_case("group_norm", "f32", (2, 32, 64, 64), groups=8),
        # chunks of 16384 elements crossing channel boundaries inside a group
        norm_case("group_norm", "f32", (1, 6, 111, 113), groups=2, args=["--threads", "3"], label=" --threads 3"),
        norm_case("group_norm", "f64", (2, 4, 9000), groups=2),
    ]
    return cases


def norm_error_cases():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    one = lambda *s: np.ones(s, np.float32)  # noqa: E731
    c = []
    for label, op, ins, attrs, pats in (
            ("x rank 1", "batch_norm", [("x", z(4)), ("scale", one(4)), ("bias", z(4)), ("mean", z(4)),
                                        ("var", one(4))], None, [r"rank 1", r"rank >= 2"]),
            ("scale [4] for 3 channels", "batch_norm", [("x", z(2, 3, 5)), ("scale", one(4)), ("bias", z(3)),
                                                        ("mean", z(3)), ("var", one(3))], None,
             [r"scale", r"\[4\]", r"\[3\]"]),
            ("var [3,1]", "batch_norm", [("x", z(2, 3, 5)), ("scale", one(3)), ("bias", z(3)), ("mean", z(3)),
                                         ("var", one(3, 1))], None, [r"var", r"\[3,1\]"]),
            ("mean f64 with x f32", "batch_norm", [("x", z(2, 3, 5)), ("scale", one(3)), ("bias", z(3)),
                                                   ("mean", np.zeros(3)), ("var", one(3))], None,
             [r"mean", r"f64"]),
            ("epsilon -1", "batch_norm", [("x", z(2, 3, 5)), ("scale", one(3)), ("bias", z(3)), ("mean", z(3)),
                                          ("var", one(3))], {"epsilon": -1.0}, [r"epsilon", r"-1"]),
            ("bias [1,3]", "instance_norm", [("x", z(2, 3, 5)), ("scale", one(3)), ("bias", z(1, 3))], None,
             [r"bias", r"\[1,3\]"]),
            ("num_groups 3 with 4 channels", "group_norm", [("x", z(2, 4, 5)), ("scale", one(4)), ("bias", z(4))],
             {"num_groups": 3}, [r"num_groups", r"\b3\b", r"\b4\b"]),
            ("num_groups 0", "group_norm", [("x", z(2, 4, 5)), ("scale", one(4)), ("bias", z(4))],
             {"num_groups": 0}, [r"num_groups", r"0"])):
        c.append(Case("%s invalid: %s: exit 3" % (op, label), op, inputs=ins, attrs=attrs, exit_code=3,
                      node_name="norm", stderr_re=[r"norm"] + pats))
    return c


def cases():
    return (attention_cases() + attention_error_cases() + attention_cache_error_cases() + rope_cases() +
            rope_error_cases() + norm_cases() + norm_error_cases())
