/* Shape and dtype inference of attention and the per-channel normalisations
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
    if (c->n_in > 3 && c->in[3]) {
        const ft_tinfo *m = c->in[3];
        if (m->dtype != FT_BOOL && m->dtype != c->in[0]->dtype)
            return ft_infer_fail(c, "mask '%s' has dtype %s; expected bool (true keeps) or %s (additive, the dtype "
                                 "of q)", ft_infer_in_name(c, 3), ft_dtype_name(m->dtype), ft_dtype_name(c->in[0]->dtype));
        ft_shape full = {.rank = 4, .dims = {q[0], q[1], q[2], k[2]}};
        int ok = m->shape.rank <= 4;
        for (int d = 0; ok && d < m->shape.rank; d++) {
            int64_t have = m->shape.dims[d], want = full.dims[4 - m->shape.rank + d];
            ok = have == want || have == 1;
        }
        if (!ok) {
            char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
            return ft_infer_fail(c, "mask '%s' %s does not broadcast to the score shape [B,H,S,T] = %s",
                                 ft_infer_in_name(c, 3), ft_shape_str(&m->shape, a), ft_shape_str(&full, b));
        }
    }
    const ft_attr_val *sc = ft_attr(c->node, "scale");
    if (sc->present && !isfinite(sc->f))
        return ft_infer_fail(c, "attribute 'scale' must be finite (got %g)", sc->f);
    int causal;
    if ((st = ft_infer_flag(c, "causal", &causal)))
        return st;
    /* The scale both backends use. With D = 0 every score is 0 whatever the
     * scale: 1/sqrt(0) would only add NaN. */
    ft_attn_params *p = &c->params->attn;
    p->has_scale = sc->present;
    p->scale = sc->present ? sc->f : q[3] > 0 ? 1.0 / sqrt((double)q[3]) : 1.0;
    p->causal = causal;
    ft_shape o = {.rank = 4, .dims = {q[0], q[1], q[2], v[3]}};
    if ((st = ft_infer_check_size(c, &o)))
        return st;
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
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
    c->out[0] = *c->in[0];
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
