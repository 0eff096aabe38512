"""Parity cases of rotary_embedding and of attention's soft capping and KV cache
(family "attn"), each run on the device and on the CPU by tests/cuda/parity.py, which
calls gen_attn(parity) with itself as p.

rotary_embedding: two products and a sum per element, rounded once (16-bit types go
through f32 on both backends; src/cpu/rotary.c, src/cuda/attention_ext.cu), checked
with the accumulation class for two terms since the device may fuse the multiply-add.
attention with softcap / past_key, past_value / present_key, present_value: the
attention class of tests/cuda/parity.py (accum over D); the present outputs are
copies and meet it trivially.  attention's ONNX opset 24/25 forms (ATTNO): kv_len
(input 6, some lengths below S or 0: rows and batches without keys), window_left /
window_right, a mask shorter than the keys, and the scores output (output 3) at each
scores_mode, the same class (the device's scores come from their own kernel,
attention_scores.cu; mode 2's -inf must match exactly)."""

ROPE = [
    # x shape, layout (4: [B,H,S,D], 3: [B,S,H*D] with heads), heads, rdim, interleaved, positions, cache batch
    ([2, 3, 5, 8], 4, 0, 0, 0, False, 2),
    ([2, 3, 5, 8], 4, 0, 4, 1, True, 0),
    ([2, 5, 24], 3, 3, 0, 1, False, 1),
    ([2, 5, 24], 3, 3, 6, 0, True, 0),
    ([1, 8, 128, 64], 4, 0, 32, 0, True, 0),
    ([4, 100, 2048], 3, 16, 0, 1, True, 0),
    ([2, 3, 0, 8], 4, 0, 0, 0, False, 2),
    ([1, 2, 7, 2], 4, 0, 0, 1, False, 1),
]

ATTNX = [
    # B, H, Hk, S, T, P, D, Dv, mask, causal, softcap, present
    (2, 4, 4, 16, 33, 0, 64, 64, "bool:B1ST", 0, 2.0, False),
    (1, 4, 2, 33, 16, 0, 128, 128, "add:ST", 1, 30.0, False),
    (1, 2, 2, 1, 1, 63, 64, 64, None, 1, 0.0, True),
    (2, 8, 2, 16, 16, 40, 64, 32, None, 1, 5.0, True),
    (1, 2, 2, 9, 9, 7, 320, 320, "bool:B1ST", 0, 0.0, False),
    (1, 2, 2, 128, 128, 1920, 64, 64, "add:11ST", 1, 50.0, True),
    (1, 1, 1, 4, 0, 6, 8, 8, None, 0, 1.0, True),
    (2, 2, 2, 0, 5, 3, 16, 16, None, 0, 0.0, True),
]

ATTNO = [
    # B, H, Hk, S, T, P, D, Dv, mask ("short": bool [B,1,S,T-3]), causal, window (left, right), kv_len, scores_mode
    (3, 4, 2, 8, 40, 0, 64, 64, None, 1, (-1, -1), [40, 5, 0], None),
    (2, 2, 2, 70, 300, 0, 64, 32, "bool:B1ST", 1, (100, -1), [290, 60], None),
    (2, 2, 2, 33, 33, 0, 128, 128, "add:ST", 0, (4, 2), None, None),
    (1, 4, 4, 16, 16, 24, 64, 64, None, 1, (8, 0), None, None),
    (2, 2, 1, 9, 20, 0, 320, 320, "short", 0, (-1, -1), [20, 12], None),
    (2, 2, 2, 5, 12, 0, 64, 64, "add:inf", 1, (-1, -1), None, 0),
    (2, 2, 2, 5, 12, 3, 32, 32, "bool:B1ST", 1, (-1, -1), None, 1),
    (2, 2, 2, 5, 12, 0, 64, 64, "add:ST", 0, (3, 3), [12, 4], 2),
    (2, 4, 2, 6, 10, 0, 64, 64, "bool:dead_row", 1, (-1, -1), [10, 3], 3),
    (1, 2, 2, 3, 7, 0, 8, 0, None, 1, (-1, -1), None, 3),
]


def gen_attn_onnx(p):
    sh = p.sh
    for j, dt in enumerate(p.FLOATS):
        for B, H, Hk, S, T, P, D, Dv, mask, causal, (wl, wr), kvl, mode in p.pick(ATTNO, dt, j, 4):
            attrs = {"causal": causal, "softcap": 20.0}
            if wl >= 0:
                attrs["window_left"] = wl
            if wr >= 0:
                attrs["window_right"] = wr
            if mode is not None:
                attrs["scores_mode"] = mode

            def mk(g, dt=dt, B=B, H=H, Hk=Hk, S=S, T=T, P=P, D=D, Dv=Dv, mask=mask, kvl=kvl):
                m = None
                if mask == "short":
                    m = g.arr("bool", g.rng.random([B, 1, S, T - 3]) < 0.8)
                elif mask:
                    m = p.attn_mask(g, dt, mask, B, S, T + P)
                ins = [g.x(dt, [B, H, S, D], 0, 1, dist="normal"), g.x(dt, [B, Hk, T, D], 0, 1, dist="normal"),
                       g.x(dt, [B, Hk, T, Dv]), m]
                if P:
                    ins += [g.x(dt, [B, Hk, P, D], 0, 1, dist="normal"), g.x(dt, [B, Hk, P, Dv])]
                if kvl is not None:
                    ins += [None] * (6 - len(ins)) + [g.arr("i64", kvl)]
                while ins[-1] is None:
                    ins.pop()
                return ins
            p.single("attn/attention_onnx/%s/B=%d,H=%d,Hk=%d,S=%d,T=%d,P=%d,D=%d,Dv=%d,mask=%s,causal=%d,window=%d,%d,"
                     "kv_len=%s,scores_mode=%s" % (dt, B, H, Hk, S, T, P, D, Dv, mask or "none", causal, wl, wr,
                                                   sh(kvl) if kvl is not None else "none",
                                                   "none" if mode is None else mode),
                     "attention", mk, attrs=attrs, nout=1 if mode is None else 4, tol=p.accum(dt, D))


def gen_attn(p):
    sh, single, case = p.sh, p.single, p.case
    for j, dt in enumerate(p.FLOATS):
        for xs, lay, heads, rdim, inter, pos, cb in p.pick(ROPE, dt, j, 3):
            B, S = xs[0], (xs[1] if lay == 3 else xs[2])
            D = (xs[2] // heads) if lay == 3 else xs[3]
            half = (rdim or D) // 2

            def mk(g, dt=dt, xs=xs, B=B, S=S, half=half, pos=pos, cb=cb):
                if pos:
                    npos = 3 * S + 2
                    return [g.x(dt, xs, -2, 2), g.x(dt, [npos, half]), g.x(dt, [npos, half]),
                            g.arr("i64", g.rng.integers(-npos, npos, [B, S]))]
                return [g.x(dt, xs, -2, 2), g.x(dt, [cb or B, S, half + 1]), g.x(dt, [cb or B, S, half + 1])]
            attrs = {"interleaved": inter, "rotary_embedding_dim": rdim}
            if heads:
                attrs["num_heads"] = heads
            single("attn/rotary_embedding/%s/%s,rdim=%d,interleaved=%d,%s" % (
                dt, sh(xs), rdim, inter, "positions" if pos else "cache_batch=%d" % (cb or B)),
                "rotary_embedding", mk, attrs=attrs, tol=p.accum(dt, 2))
    case("attn/rotary_embedding/f32/position_out_of_range",
         lambda g: [g.op("rotary_embedding", [g.x("f32", [1, 2, 3, 4]), g.x("f32", [5, 2]), g.x("f32", [5, 2]),
                                              g.arr("i64", [[0, 5, 1]])])],
         rc=3, err="out of range")
    for j, dt in enumerate(p.FLOATS):
        for B, H, Hk, S, T, P, D, Dv, mask, causal, cap, present in p.pick(ATTNX, dt, j, 3):
            attrs = {"causal": causal}
            if cap:
                attrs["softcap"] = cap

            def mk(g, dt=dt, B=B, H=H, Hk=Hk, S=S, T=T, P=P, D=D, Dv=Dv, mask=mask):
                ins = [g.x(dt, [B, H, S, D], 0, 1, dist="normal"), g.x(dt, [B, Hk, T, D], 0, 1, dist="normal"),
                       g.x(dt, [B, Hk, T, Dv]), p.attn_mask(g, dt, mask, B, S, T + P) if mask else None]
                if P:
                    ins += [g.x(dt, [B, Hk, P, D], 0, 1, dist="normal"), g.x(dt, [B, Hk, P, Dv])]
                while ins[-1] is None:
                    ins.pop()
                return ins
            single("attn/attention/%s/B=%d,H=%d,Hk=%d,S=%d,T=%d,P=%d,D=%d,Dv=%d,mask=%s,causal=%d,softcap=%g%s" % (
                dt, B, H, Hk, S, T, P, D, Dv, mask or "none", causal, cap, ",present" if present else ""),
                "attention", mk, attrs=attrs, nout=3 if present else 1, tol=p.accum(dt, D))
    gen_attn_onnx(p)
