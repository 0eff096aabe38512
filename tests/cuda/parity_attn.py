"""Parity cases of rotary_embedding and of attention's soft capping and KV cache
(family "attn"), each run on the device and on the CPU by tests/cuda/parity.py, which
calls gen_attn(parity) with itself as p.

rotary_embedding: two products and a sum per element, rounded once (16-bit types go
through f32 on both backends; src/cpu/rotary.c, src/cuda/attention_ext.cu), checked
with the accumulation class for two terms since the device may fuse the multiply-add.
attention with softcap / past_key, past_value / present_key, present_value: the
attention class of tests/cuda/parity.py (accum over D); the present outputs are
copies and meet it trivially."""

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
