/* Shape and dtype inference of attention, rotary_embedding and the per-channel normalisations
 * (batch_norm, instance_norm, group_norm). The validator has already checked
 * arity and the dtype of input 0; every other input, rank and attribute is
 * checked here so that the kernels can trust their views. */
#include "infer_common.h"

#include <math.h>
#include <string.h>

/* A negative or NaN epsilon would turn var + epsilon negative or NaN and every
 * output NaN without any sign of why. */
static ft_status epsilon_attr(ft_infer_ctx *c)
{
    double e = ft_attr(c->node, "epsilon")->f;
    if (!(e >= 0) || isinf(e))
        return ft_infer_fail(c, "attribute 'epsilon' must be finite and >= 0 (got %g)", e);
    c->params->norm.epsilon = e;
    return FT_OK;
}

/* ---- attention ------------------------------------------------------------------ */

static ft_status rank4(ft_infer_ctx *c, int i, const char *what, const char *layout)
{
    const ft_shape *s = &c->in[i]->shape;
    if (s->rank != 4) {
        char b[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s '%s' has shape %s (rank %d); expected rank 4 %s", what, ft_infer_in_name(c, i),
                             ft_shape_str(s, b), s->rank, layout);
    }
    return FT_OK;
}

/* Names a mismatch between one dim of two inputs, both shapes shown. */
static ft_status dim_mismatch(ft_infer_ctx *c, const char *dim, int i, const char *wi, int j, const char *wj)
{
    char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
    return ft_infer_fail(c, "%s of %s '%s' %s differs from that of %s '%s' %s", dim, wi, ft_infer_in_name(c, i),
                         ft_shape_str(&c->in[i]->shape, a), wj, ft_infer_in_name(c, j), ft_shape_str(&c->in[j]->shape, b));
}

/* past_key / past_value (inputs 4, 5): both or neither, rank 4 [B,Hk,P,D]
 * and [B,Hk,P,Dv] with the dtype of q; *P gets their length. */
static ft_status past_inputs(ft_infer_ctx *c, int64_t *P)
{
    int pk = c->n_in > 4 && c->in[4], pv = c->n_in > 5 && c->in[5];
    *P = 0;
    if (!pk && !pv)
        return FT_OK;
    if (pk != pv)
        return ft_infer_fail(c, "past_key and past_value are given together or not at all (only %s is given)",
                             pk ? "past_key" : "past_value");
    ft_status st;
    if ((st = rank4(c, 4, "past_key", "[B,Hk,P,D]")) || (st = rank4(c, 5, "past_value", "[B,Hk,P,Dv]")) ||
        (st = ft_infer_same_dtype(c, 4, 0, "past_key")) || (st = ft_infer_same_dtype(c, 5, 0, "past_value")))
        return st;
    const int64_t *k = c->in[1]->shape.dims, *v = c->in[2]->shape.dims;
    const int64_t *a = c->in[4]->shape.dims, *b = c->in[5]->shape.dims;
    static const char *const what[4] = {"batch size (dim 0)", "number of heads (dim 1)", "", "head size (dim 3)"};
    for (int d = 0; d < 4; d++) {
        if (d != 2 && a[d] != k[d])
            return dim_mismatch(c, what[d], 4, "past_key", 1, "k");
        if (d != 2 && b[d] != v[d])
            return dim_mismatch(c, what[d], 5, "past_value", 2, "v");
    }
    if (b[2] != a[2])
        return dim_mismatch(c, "sequence length P (dim 2)", 5, "past_value", 4, "past_key");
    *P = a[2];
    return FT_OK;
}

/* kv_len (input 6, ONNX's nonpad_kv_seqlen): i64 [B], the valid keys of
 * each batch (an external cache); not with past_key/past_value. */
static ft_status kv_len_input(ft_infer_ctx *c, int64_t P)
{
    if (c->n_in <= 6 || !c->in[6])
        return FT_OK;
    const ft_tinfo *t = c->in[6];
    char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
    if (t->dtype != FT_I64 || t->shape.rank != 1 || t->shape.dims[0] != c->in[0]->shape.dims[0])
        return ft_infer_fail(c, "kv_len '%s' is %s %s; expected i64 [B], one length per batch of q '%s' %s",
                             ft_infer_in_name(c, 6), ft_dtype_name(t->dtype), ft_shape_str(&t->shape, a),
                             ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, b));
    if (P > 0 || (c->n_in > 4 && c->in[4]))
        return ft_infer_fail(c, "kv_len (an external cache's valid lengths) is not taken with past_key/past_value");
    return FT_OK;
}

static ft_status window_attrs(ft_infer_ctx *c)
{
    static const char *const names[2] = {"window_left", "window_right"};
    for (int k = 0; k < 2; k++) {
        int64_t w = ft_attr(c->node, names[k])->i;
        if (w < -1)
            return ft_infer_fail(c, "attribute '%s' must be -1 (unbounded) or >= 0 (got %lld)", names[k], (long long)w);
    }
    return FT_OK;
}

ft_status ft_infer_attention(ft_infer_ctx *c)
{
    ft_status st;
    if ((st = rank4(c, 0, "q", "[B,H,S,D]")) || (st = rank4(c, 1, "k", "[B,Hk,T,D]")) ||
        (st = rank4(c, 2, "v", "[B,Hk,T,Dv]")) || (st = ft_infer_same_dtype(c, 1, 0, "k")) || (st = ft_infer_same_dtype(c, 2, 0, "v")))
        return st;
    const int64_t *q = c->in[0]->shape.dims, *k = c->in[1]->shape.dims, *v = c->in[2]->shape.dims;
    if (k[0] != q[0])
        return dim_mismatch(c, "batch size (dim 0)", 1, "k", 0, "q");
    if (v[0] != q[0])
        return dim_mismatch(c, "batch size (dim 0)", 2, "v", 0, "q");
    if (v[1] != k[1])
        return dim_mismatch(c, "number of heads (dim 1)", 2, "v", 1, "k");
    if (k[3] != q[3])
        return dim_mismatch(c, "head size D (dim 3)", 1, "k", 0, "q");
    if (v[2] != k[2])
        return dim_mismatch(c, "sequence length T (dim 2)", 2, "v", 1, "k");
    /* Grouped-query attention: query head h reads kv head h / (H / Hk). */
    if (k[1] == 0 ? q[1] != 0 : q[1] % k[1] != 0) {
        char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
        return ft_infer_fail(c, "k '%s' %s has %lld heads, which does not divide the %lld heads of q '%s' %s",
                             ft_infer_in_name(c, 1), ft_shape_str(&c->in[1]->shape, a), (long long)k[1], (long long)q[1],
                             ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, b));
    }
    /* A KV cache: the keys are past_key then k (P + T of them). */
    int64_t P;
    if ((st = past_inputs(c, &P)))
        return st;
    int64_t T = P + k[2];
    if (c->n_in > 3 && c->in[3]) {
        const ft_tinfo *m = c->in[3];
        if (m->dtype != FT_BOOL && m->dtype != c->in[0]->dtype)
            return ft_infer_fail(c, "mask '%s' has dtype %s; expected bool (true keeps) or %s (additive, the dtype "
                                 "of q)", ft_infer_in_name(c, 3), ft_dtype_name(m->dtype), ft_dtype_name(c->in[0]->dtype));
        ft_shape full = {.rank = 4, .dims = {q[0], q[1], q[2], T}};
        int ok = m->shape.rank <= 4;
        /* a shorter last dim (ONNX opset 24) masks the keys past its end */
        for (int d = 0; ok && d < m->shape.rank; d++) {
            int64_t have = m->shape.dims[d], want = full.dims[4 - m->shape.rank + d];
            ok = have == want || have == 1 || (d == m->shape.rank - 1 && have < want);
        }
        if (!ok) {
            char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
            return ft_infer_fail(c, "mask '%s' %s does not broadcast to the score shape [B,H,S,T] = %s%s",
                                 ft_infer_in_name(c, 3), ft_shape_str(&m->shape, a), ft_shape_str(&full, b),
                                 P ? " (T counts the past keys)" : "");
        }
    }
    const ft_attr_val *sc = ft_attr(c->node, "scale");
    if (sc->present && !isfinite(sc->f))
        return ft_infer_fail(c, "attribute 'scale' must be finite (got %g)", sc->f);
    double cap = ft_attr(c->node, "softcap")->f;
    if (!(cap >= 0) || isinf(cap))
        return ft_infer_fail(c, "attribute 'softcap' must be finite and >= 0 (0: none; got %g)", cap);
    if (c->n_out == 2)
        return ft_infer_fail(c, "has 2 outputs; expected 1 (y), 3 (y, present_key, present_value) or 4 (and "
                             "scores)");
    int causal;
    if ((st = ft_infer_flag(c, "causal", &causal)) || (st = kv_len_input(c, P)) || (st = window_attrs(c)))
        return st;
    int64_t mode = ft_attr(c->node, "scores_mode")->i;
    if (mode < 0 || mode > 3)
        return ft_infer_fail(c, "attribute 'scores_mode' must be 0 (q.k scaled), 1 (soft capped), 2 (masked) or 3 "
                             "(softmax weights) (got %lld)", (long long)mode);
    /* The scale both backends use. With D = 0 every score is 0 whatever the
     * scale: 1/sqrt(0) would only add NaN. */
    ft_attn_params *p = &c->params->attn;
    p->has_scale = sc->present;
    p->scale = sc->present ? sc->f : q[3] > 0 ? 1.0 / sqrt((double)q[3]) : 1.0;
    p->causal = causal;
    p->softcap = cap;
    p->past = P > 0 || (c->n_in > 4 && c->in[4]);
    p->present = c->n_out >= 3;
    p->scores = c->n_out == 4;
    p->scores_mode = (int)mode;
    p->kv_len = c->n_in > 6 && c->in[6];
    p->win_left = ft_attr(c->node, "window_left")->i;
    p->win_right = ft_attr(c->node, "window_right")->i;
    ft_shape o = {.rank = 4, .dims = {q[0], q[1], q[2], v[3]}};
    if ((st = ft_infer_check_size(c, &o)))
        return st;
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    if (p->present) {
        ft_shape pk = {.rank = 4, .dims = {k[0], k[1], T, k[3]}}, pv = {.rank = 4, .dims = {v[0], v[1], T, v[3]}};
        if ((st = ft_infer_set_out(c, 1, c->in[0]->dtype, &pk)) || (st = ft_infer_set_out(c, 2, c->in[0]->dtype, &pv)))
            return st;
    }
    if (p->scores) {
        ft_shape so = {.rank = 4, .dims = {q[0], q[1], q[2], T}};
        if ((st = ft_infer_check_size(c, &so)) || (st = ft_infer_set_out(c, 3, c->in[0]->dtype, &so)))
            return st;
    }
    return FT_OK;
}

/* ---- rotary_embedding ----------------------------------------------------------- */

/* x [B,H,S,D] or [B,S,H*D] (num_heads); cos/sin [B,S,>=R/2] (batch 1
 * broadcasts), or [P,>=R/2] read at position_ids [B,S] (i64). Only the first
 * R/2 entries of a cache row are read, as ONNX's reference slices them. */
ft_status ft_infer_rotary_embedding(ft_infer_ctx *c)
{
    ft_status st;
    const ft_shape *xs = &c->in[0]->shape;
    char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
    ft_rope_params *p = &c->params->rope;
    int64_t heads = ft_attr(c->node, "num_heads")->i, rdim = ft_attr(c->node, "rotary_embedding_dim")->i;
    if ((st = ft_infer_flag(c, "interleaved", &p->interleaved)))
        return st;
    if (heads < 0)
        return ft_infer_fail(c, "attribute 'num_heads' must be >= 0 (got %lld)", (long long)heads);
    if (xs->rank == 4) {
        if (heads && heads != xs->dims[1])
            return ft_infer_fail(c, "attribute 'num_heads' (%lld) differs from dim 1 of x '%s' %s [B,H,S,D]",
                                 (long long)heads, ft_infer_in_name(c, 0), ft_shape_str(xs, a));
        p->heads = xs->dims[1];
        p->head_size = xs->dims[3];
    } else if (xs->rank == 3) {
        if (heads < 1 || xs->dims[2] % heads)
            return ft_infer_fail(c, "x '%s' %s is [B,S,H*D] and needs attribute 'num_heads' dividing its last dim "
                                 "(got %lld)", ft_infer_in_name(c, 0), ft_shape_str(xs, a), (long long)heads);
        p->heads_last = 1;
        p->heads = heads;
        p->head_size = xs->dims[2] / heads;
    } else {
        return ft_infer_fail(c, "x '%s' has shape %s (rank %d); expected [B,H,S,D] or [B,S,H*D]",
                             ft_infer_in_name(c, 0), ft_shape_str(xs, a), xs->rank);
    }
    if (rdim < 0 || rdim > p->head_size || (rdim ? rdim : p->head_size) % 2)
        return ft_infer_fail(c, "attribute 'rotary_embedding_dim' (%lld; 0 means the head size) must be even and at "
                             "most the head size %lld", (long long)rdim, (long long)p->head_size);
    p->rdim = rdim ? rdim : p->head_size;
    if ((st = ft_infer_same_dtype(c, 1, 0, "cos_cache")) || (st = ft_infer_same_dtype(c, 2, 0, "sin_cache")))
        return st;
    const ft_shape *cs = &c->in[1]->shape, *ss = &c->in[2]->shape;
    if (!ft_shape_eq(cs, ss))
        return dim_mismatch(c, "shape", 2, "sin_cache", 1, "cos_cache");
    int64_t B = xs->dims[0], S = p->heads_last ? xs->dims[1] : xs->dims[2], half = p->rdim / 2;
    p->has_pos = c->n_in > 3 && c->in[3];
    if (p->has_pos) {
        const ft_shape *ps = &c->in[3]->shape;
        if (c->in[3]->dtype != FT_I64)
            return ft_infer_fail(c, "position_ids '%s' has dtype %s; expected i64", ft_infer_in_name(c, 3),
                                 ft_dtype_name(c->in[3]->dtype));
        if (ps->rank != 2 || ps->dims[0] != B || ps->dims[1] != S)
            return ft_infer_fail(c, "position_ids '%s' has shape %s; expected [B,S] = [%lld,%lld] from x '%s' %s",
                                 ft_infer_in_name(c, 3), ft_shape_str(ps, a), (long long)B, (long long)S,
                                 ft_infer_in_name(c, 0), ft_shape_str(xs, b));
        if (cs->rank != 2 || cs->dims[1] < half)
            return ft_infer_fail(c, "cos_cache '%s' has shape %s; with position_ids expected [max_position, >= %lld] "
                                 "(rotary_embedding_dim / 2)", ft_infer_in_name(c, 1), ft_shape_str(cs, a),
                                 (long long)half);
    } else {
        if (cs->rank != 3 || (cs->dims[0] != B && cs->dims[0] != 1) || cs->dims[1] != S || cs->dims[2] < half)
            return ft_infer_fail(c, "cos_cache '%s' has shape %s; without position_ids expected [B or 1, S, >= %lld] "
                                 "= [%lld,%lld,%lld] from x '%s' %s", ft_infer_in_name(c, 1), ft_shape_str(cs, a),
                                 (long long)half, (long long)B, (long long)S, (long long)half, ft_infer_in_name(c, 0),
                                 ft_shape_str(xs, b));
        p->cache_b = cs->dims[0];
    }
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* ---- batch_norm, instance_norm, group_norm ------------------------------------- */

/* x is [N, C, spatial...]: rank at least 2. */
static ft_status channels_input(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    if (x->rank < 2) {
        char b[FT_SHAPE_STR];
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); expected rank >= 2 [N,C,...]", ft_infer_in_name(c, 0),
                             ft_shape_str(x, b), x->rank);
    }
    return FT_OK;
}

/* Per-channel parameter i: x's dtype, shape exactly [C]. */
static ft_status channel_param(ft_infer_ctx *c, int i, const char *what)
{
    ft_status st = ft_infer_same_dtype(c, i, 0, what);
    if (st)
        return st;
    const ft_shape *p = &c->in[i]->shape, *x = &c->in[0]->shape;
    if (p->rank != 1 || p->dims[0] != x->dims[1]) {
        char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s '%s' has shape %s; expected [%lld], one value per channel (dim 1) of input "
                             "'%s' %s", what, ft_infer_in_name(c, i), ft_shape_str(p, a), (long long)x->dims[1], ft_infer_in_name(c, 0),
                             ft_shape_str(x, b));
    }
    return FT_OK;
}

ft_status ft_infer_batch_norm(ft_infer_ctx *c)
{
    static const char *const names[] = {"x", "scale", "bias", "mean", "var"};
    ft_status st;
    if ((st = channels_input(c)) || (st = epsilon_attr(c)))
        return st;
    for (int i = 1; i < 5; i++)
        if ((st = channel_param(c, i, names[i])))
            return st;
    int64_t tm = ft_attr(c->node, "training_mode")->i;
    double mom = ft_attr(c->node, "momentum")->f;
    if (tm != 0 && tm != 1)
        return ft_infer_fail(c, "attribute 'training_mode' is %lld; expected 0 or 1", (long long)tm);
    if (!isfinite(mom))
        return ft_infer_fail(c, "attribute 'momentum' must be finite (got %g)", mom);
    if (c->n_out > 1 && !tm)
        return ft_infer_fail(c, "outputs 1 and 2 (the updated running mean and variance) need training_mode=1");
    c->params->norm.training = (int)tm;
    c->params->norm.momentum = mom;
    c->out[0] = *c->in[0];
    /* training: the running mean and variance updated with the batch's */
    for (int i = 1; i < c->n_out; i++)
        c->out[i] = *c->in[2 + i];
    return FT_OK;
}

/* instance_norm and group_norm: x [N, C, ...], epsilon, a scale and a bias per channel. */
static ft_status scale_bias_norm(ft_infer_ctx *c)
{
    ft_status st;
    if ((st = channels_input(c)) || (st = epsilon_attr(c)) || (st = channel_param(c, 1, "scale")) ||
        (st = channel_param(c, 2, "bias")))
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_instance_norm(ft_infer_ctx *c)
{
    return scale_bias_norm(c);
}

ft_status ft_infer_group_norm(ft_infer_ctx *c)
{
    ft_status st = scale_bias_norm(c);
    if (st)
        return st;
    int64_t g = ft_attr(c->node, "num_groups")->i, ch = c->in[0]->shape.dims[1];
    if (g < 1)
        return ft_infer_fail(c, "attribute 'num_groups' must be >= 1 (got %lld)", (long long)g);
    if (ch % g != 0) {
        char b[FT_SHAPE_STR];
        return ft_infer_fail(c, "attribute 'num_groups' (%lld) does not divide the %lld channels (dim 1) of input "
                             "'%s' %s", (long long)g, (long long)ch, ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, b));
    }
    c->params->norm.num_groups = g;
    c->out[0] = *c->in[0];
    return FT_OK;
}
