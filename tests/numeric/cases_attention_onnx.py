"""Numeric cases of attention's ONNX opset 24/25 forms: kv_len (ONNX's
nonpad_kv_seqlen, input 6), the scores output (output 3, ONNX's qk_matmul_output,
scores_mode 0-3), the sliding window (window_left / window_right), a mask shorter than
the keys, the bottom-right causal offset and fully masked rows.

The oracle (onnx_attention_ref) is written here in float64 NumPy from the text of
ONNX's Attention-25: every query i has a position p = i + offset (offset = the past
length P, kv_len[b] - S with kv_len, else 0); the bias of key j is the mask (bool:
0 or -inf; additive: its value; -inf past a shorter mask's last dim) plus -inf where
j > p under causal, j < p - window_left, j > p + window_right, or j >= kv_len[b]; the
weights are softmax(softcap(scale q.k) + bias), and a row whose bias is -inf
everywhere has zero weights (and Y zeros).  Scores mode 0 is scale q.k, 1 after the
soft cap, 2 after the bias, 3 the weights.

Tolerances as cases_attention.py's: for y, 2 eps relative plus
eps P|v| ((4 sqrt(D) + 8) A + 4 sqrt(T) + 16) with A the largest |scale| |q| |k| + |mask|
of the row's kept keys; for the scores of modes 0-2, eps ((4 sqrt(D) + 8) |scale| |q| |k|
+ |mask|); for the weights, eps (P ((4 sqrt(D) + 8) A + 4 sqrt(T) + 16) + 4)."""
import math

import numpy as np

from cases_attention import f64, rep, shp, sq, tol
from harness import Case, rng_for


def onnx_attention_ref(q, k, v, mask=None, scale=None, causal=False, softcap=0.0, past=0, kv_len=None,
                       wl=-1, wr=-1):
    """(y, its tolerance scale, [scores of modes 0..3], their tolerance scales).  k and v
    hold the past keys first (P of them)."""
    Q, K, V = f64(q), f64(k), f64(v)
    B, H, S, D = Q.shape
    Hk, T = K.shape[1], K.shape[2]
    g = H // Hk
    K, V = np.repeat(K, g, axis=1), np.repeat(V, g, axis=1)
    sc = scale if scale is not None else (1.0 / math.sqrt(D) if D else 1.0)
    raw = np.einsum("bhsd,bhtd->bhst", Q, K) * sc
    a = np.einsum("bhsd,bhtd->bhst", np.abs(Q), np.abs(K)) * abs(sc)
    capped = softcap * np.tanh(raw / softcap) if softcap else raw
    if softcap:
        a = a + softcap
    bias = np.zeros((B, H, S, T))
    mabs = np.zeros((B, H, S, T))
    if mask is not None:
        M = np.asarray(mask)
        if M.shape[-1] not in (1, T):  # shorter: the missing keys are masked
            pad = [(0, 0)] * (M.ndim - 1) + [(0, T - M.shape[-1])]
            M = np.pad(M, pad, constant_values=False if M.dtype == np.bool_ else -np.inf)
        if M.dtype == np.bool_:
            bias = bias + np.where(np.broadcast_to(M, bias.shape), 0.0, -np.inf)
        else:
            Mf = np.broadcast_to(f64(M), bias.shape)
            bias = bias + Mf
            mabs = np.where(np.isfinite(Mf), np.abs(Mf), 0.0)
    if kv_len is not None:
        off = np.asarray(kv_len, dtype=np.int64).reshape(B, 1, 1, 1) - S
    else:
        off = np.full((B, 1, 1, 1), past, dtype=np.int64)
    pos = np.arange(S).reshape(1, 1, S, 1) + off
    j = np.arange(T).reshape(1, 1, 1, T)
    ok = np.ones((B, 1, S, T), dtype=bool)
    if causal:
        ok &= j <= pos
    if wl >= 0:
        ok &= j >= pos - wl
    if wr >= 0:
        ok &= j <= pos + wr
    if kv_len is not None:
        ok &= j < np.asarray(kv_len, dtype=np.int64).reshape(B, 1, 1, 1)
    bias = np.where(ok, bias, -np.inf)
    x = capped + bias
    keep = ~np.isneginf(bias)
    full = ~keep.any(axis=-1, keepdims=True)
    m = np.max(x, axis=-1, keepdims=True) if T else np.zeros((B, H, S, 1))
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(keep, np.exp(x - m), 0.0)
    l = np.sum(e, axis=-1, keepdims=True)
    p = np.where(full | (l == 0), 0.0, e / np.where(l == 0, 1.0, l))
    y = p @ V
    amax = np.max(np.where(keep, a + mabs, 0.0), axis=-1, keepdims=True) if T else np.zeros((B, H, S, 1))
    ts = (p @ np.abs(V)) * ((4 * sq(D) + 8) * amax + 4 * sq(T) + 16)
    s_ts = (4 * sq(D) + 8) * a + mabs
    p_ts = p * ((4 * sq(D) + 8) * amax + 4 * sq(T) + 16) + 4
    return y, ts, [raw, capped, x, p], [s_ts, s_ts, s_ts, p_ts]


def onnx_case(name, dt, qs, ks, vs, mask=None, scale=None, causal=False, softcap=None, past=None, kv_len=None,
              wl=-1, wr=-1, mode=None, args=(), post=None):
    """mask: None, ("bool", shape, p_keep) or ("add", shape).  kv_len: the lengths per
    batch (input 6).  mode: the scores output is written, at that stage.  post(rng, m)
    may edit the mask (fully masked rows)."""
    attrs = {}
    for key, val, dflt in (("scale", scale, None), ("causal", 1 if causal else 0, 0), ("softcap", softcap, None),
                           ("window_left", wl, -1), ("window_right", wr, -1), ("scores_mode", mode or 0, 0)):
        if val != dflt:
            attrs[key] = val

    def build():
        rng = rng_for(name)
        q = rep(rng.standard_normal(qs), dt)
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
            m = post(rng, m)
        kf, vf = k, v
        if past is not None:
            pk = rep(rng.standard_normal(ks[:2] + (past,) + ks[3:]), dt)
            pv = rep(rng.standard_normal(vs[:2] + (past,) + vs[3:]), dt)
            kf, vf = np.concatenate([pk, k], 2), np.concatenate([pv, v], 2)
        y, ts, sc, sts = onnx_attention_ref(q, kf, vf, m, scale, causal, softcap or 0.0, past or 0, kv_len, wl, wr)
        ins = [("q", q, dt), ("k", k, dt), ("v", v, dt)]
        ins.append(("mask", m, "bool" if m.dtype == np.bool_ else dt) if m is not None else None)
        if past is not None:
            ins += [("past_key", pk, dt), ("past_value", pv, dt)]
        elif kv_len is not None:
            ins += [None, None]
        if kv_len is not None:
            ins.append(("kv_len", np.asarray(kv_len, dtype=np.int64)))
        while ins[-1] is None:
            ins.pop()
        expect, tols = {"y": rep(y, dt)}, {"y": tol(dt, ts)}
        if mode is not None:
            expect.update(present_key=rep(kf, dt), present_value=rep(vf, dt), scores=rep(sc[mode], dt))
            tols["scores"] = tol(dt, np.where(np.isfinite(sts[mode]), sts[mode], 0.0))
        return {"inputs": ins, "expect": expect, "tol": tols}
    outs = ["y", "present_key", "present_value", "scores"] if mode is not None else None
    return Case(name, "attention", attrs=attrs or None, args=list(args), build=build, outputs=outs)


def name_of(dt, qs, ks, vs, label):
    return "attention %s q%s k%s v%s%s" % (dt, shp(qs), shp(ks), shp(vs), label)


def all_false_row(rng, m):
    """Query 1 of every batch and head sees no key: an all-false bool mask row."""
    m = m.copy()
    m[..., 1, :] = False
    return m


def all_neginf_row(rng, m):
    m = m.copy()
    m[..., 0, :] = -np.inf
    return m


def onnx_attention_cases():
    cases = []

    def add(dt, qs, ks, vs, label, **kw):
        cases.append(onnx_case(name_of(dt, qs, ks, vs, label), dt, qs, ks, vs, **kw))

    q4, k6 = (3, 2, 4, 8), (3, 2, 6, 8)
    for dt in ("f32", "f64"):
        # kv_len: padding keys, causal offset kv_len - S (negative: leading rows see nothing)
        add(dt, q4, k6, (3, 2, 6, 5), " kv_len [6,3,2] causal", kv_len=[6, 3, 2], causal=True)
        add(dt, q4, k6, (3, 2, 6, 5), " kv_len [6,3,0]", kv_len=[6, 3, 0])
        add(dt, q4, k6, (3, 2, 6, 5), " kv_len [5,4,7] causal bool mask", kv_len=[5, 4, 7], causal=True,
            mask=("bool", (3, 1, 4, 6), 0.8))
        # a mask shorter than the keys: the keys past its end are masked
        add(dt, q4, k6, (3, 2, 6, 5), " kv_len [4,6,5] additive mask [3,2,4,4]", kv_len=[4, 6, 5],
            mask=("add", (3, 2, 4, 4)))
        add(dt, (2, 2, 3, 8), (2, 2, 7, 8), (2, 2, 7, 8), " bool mask [3,5] of 7 keys", mask=("bool", (3, 5), 0.9))
        # windows, with and without causal, on a past offset and on kv_len
        add(dt, (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), " window 2,1", wl=2, wr=1)
        add(dt, (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), " window 1,-1 causal", wl=1, causal=True)
        add(dt, (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), " window -1,0", wr=0)
        add(dt, (2, 2, 3, 8), (2, 2, 3, 8), (2, 2, 3, 8), " past 5 window 2,0 causal", past=5, wl=2, wr=0,
            causal=True)
        add(dt, (2, 4, 4, 8), (2, 2, 9, 8), (2, 2, 9, 6), " gqa kv_len [9,5] window 3,1", kv_len=[9, 5], wl=3, wr=1)
        # the scores output at each stage
        for mode in range(4):
            add(dt, (2, 2, 3, 8), (2, 2, 4, 8), (2, 2, 4, 8), " scores mode %d softcap 2 additive mask causal" % mode,
                mode=mode, softcap=2.0, mask=("add", (2, 1, 3, 4)), causal=True)
            add(dt, (2, 2, 3, 8), (2, 2, 4, 8), (2, 2, 4, 8), " scores mode %d past 2 bool mask causal" % mode,
                mode=mode, past=2, mask=("bool", (3, 6), 0.8), causal=True)
        add(dt, (2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8), " scores mode 3 kv_len [2,5] causal window 1,-1",
            mode=3, kv_len=[2, 5], causal=True, wl=1)
    # fully masked rows: zeros in y and in the weights, also where the scores are large
    add("f32", (1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8), " all-false bool row scores mode 3", mode=3,
        mask=("bool", (1, 2, 3, 5), 0.7), post=all_false_row)
    add("f32", (1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8), " all -inf additive row scores mode 2", mode=2,
        mask=("add", (3, 5)), post=all_neginf_row)
    add("f64", (1, 1, 5, 4), (1, 1, 5, 4), (1, 1, 5, 4), " kv_len [2] causal scores mode 3", mode=3,
        kv_len=[2], causal=True)
    # 16-bit types (computed in f32)
    add("f16", (2, 4, 3, 8), (2, 2, 8, 8), (2, 2, 8, 8), " kv_len [8,5] causal scores mode 3", mode=3,
        kv_len=[8, 5], causal=True)
    add("bf16", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), " window 1,1 scores mode 2", mode=2, wl=1, wr=1)
    # several query and key blocks, threads: the skipped key ranges of each block
    add("f32", (2, 2, 300, 32), (2, 2, 700, 32), (2, 2, 700, 16), " kv_len [650,299] causal window 200,-1",
        kv_len=[650, 299], causal=True, wl=200, args=["--threads", "3"])
    add("f64", (1, 3, 200, 16), (1, 3, 600, 16), (1, 3, 600, 16), " window 100,50 bool mask scores mode 3",
        wl=100, wr=50, mask=("bool", (1, 3, 200, 600), 0.9), mode=3, args=["--threads", "2"])
    # no value columns: only the scores have elements
    add("f32", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 0), " Dv 0 scores mode 3", mode=3, causal=True)
    return cases


def onnx_attention_error_cases():
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    q, k, v = ("q", z(2, 2, 3, 8)), ("k", z(2, 2, 4, 8)), ("v", z(2, 2, 4, 6))
    c = []
    for label, ins, attrs, outs, pats in (
            ("kv_len i32", [q, k, v, None, None, None, ("kvl", np.array([4, 4], np.int32))], None, None,
             [r"kv_len", r"i32", r"i64 \[B\]"]),
            ("kv_len [3]", [q, k, v, None, None, None, ("kvl", np.array([4, 4, 4], np.int64))], None, None,
             [r"kv_len", r"\[3\]"]),
            ("kv_len with a past", [q, k, v, None, ("pk", z(2, 2, 1, 8)), ("pv", z(2, 2, 1, 6)),
                                    ("kvl", np.array([4, 4], np.int64))], None, None, [r"kv_len", r"past"]),
            ("scores_mode 4", [q, k, v], {"scores_mode": 4}, ["y", "pk", "pv", "s"], [r"scores_mode", r"4"]),
            ("window_left -2", [q, k, v], {"window_left": -2}, None, [r"window_left", r"-2"]),
            ("mask longer than T", [q, k, v, ("m", np.ones((3, 5), bool))], None, None,
             [r"\[3,5\]", r"\[2,2,3,4\]"])):
        c.append(Case("attention invalid: " + label + ": exit 3", "attention", inputs=ins, attrs=attrs, exit_code=3,
                      outputs=outs, node_name="attn", stderr_re=[r"attn"] + pats))
    return c


def cases():
    return onnx_attention_cases() + onnx_attention_error_cases()
