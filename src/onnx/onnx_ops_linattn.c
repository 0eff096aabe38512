/* ONNX LinearAttention (opset 27) -> ftrun: the recurrence of its function
 * body (onnx/defs/nn/defs.cc in ONNX, a Scan over the T tokens) unrolled at
 * load into split, reshape, exp, mul, sub, add, matmul and concat, in f32
 * whatever the input dtype (the body's accumulation), per KV head h:
 *
 *   linear:      S = S + k v^T
 *   gated:       S = exp(g) * S + k v^T
 *   delta:       S = S + k (beta * (v - S^T k))^T
 *   gated_delta: S = exp(g) * S, then as delta
 *   output:      o = scale * q^T S   (each of the q_num_heads / kv_num_heads
 *                                     query heads of group h reads S)
 *
 * The step reads the [B, 1, H*D] slice of each packed input as [B, H, D, 1]
 * (a column), [B, H, 1, D] (a row) or, for the query, [B, H_kv, G, d_k]
 * (the G query heads sharing KV head h as rows), so no transpose is needed;
 * the per-step outputs [B, H_kv, G, d_v] are [B, 1, H_q*d_v] as they lie and
 * are concatenated along T. The scale multiplies the query once up front.
 *
 *   ft_status st = ox_map_linear_attention(c, n);  // T=4: 4 steps of ~15 nodes
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LA_DECAY = 1, LA_BETA = 2 };

typedef struct {
    int64_t b, steps, hq, hkv, dk, dv;
    int64_t decay_w, beta_w; /* per-head width of decay (d_k or 1), heads of beta (H_kv or 1) */
} la_dims;

/* Tensor x as f32 (a cast when it is another dtype), or -1. */
static int as_f32(onx_ctx *c, const onx_node *n, int x, ft_dtype dt)
{
    if (dt == FT_F32)
        return x;
    int r = ox_tmp(c, n, "f32");
    return r >= 0 && ox_cast(c, n, x, FT_F32, r) ? r : -1;
}

/* Result of a two-input op into a fresh intermediate, or -1. */
static int op2(onx_ctx *c, const onx_node *n, ft_op op, int a, int b, const char *suffix)
{
    int r = ox_tmp(c, n, suffix);
    return r >= 0 && ox_emit2(c, n, op, a, b, r) ? r : -1;
}

/* Tensor x viewed as [d0, d1, d2, d3], or -1. */
static int view4(onx_ctx *c, const onx_node *n, int x, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    ft_shape s = {.rank = 4, .dims = {d0, d1, d2, d3}};
    int r = ox_tmp(c, n, "view");
    return r >= 0 && ox_reshape(c, n, x, &s, r) ? r : -1;
}

/* Input k ([B, T, W]) in f32 split along T into parts[0..T-1] ([B, 1, W]);
 * exp'd first when `exp` is set (the decay). */
static ft_status steps_of(onx_ctx *c, const onx_node *n, int k, const la_dims *d, int exp, int *parts)
{
    int x = as_f32(c, n, onx_in(c, n, k), ox_dtype(c, n, k));
    OX_NEED(x >= 0);
    if (exp) {
        int e = ox_tmp(c, n, "exp_decay");
        OX_NEED(e >= 0 && ox_emit1(c, n, FT_OP_EXP, x, e));
        x = e;
    }
    if (d->steps == 1) {
        parts[0] = x;
        return FT_OK;
    }
    for (int64_t t = 0; t < d->steps; t++)
        OX_NEED((parts[t] = ox_tmp(c, n, "step")) >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_SPLIT, &x, 1, parts, (int)d->steps);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", 1));
    return onx_set_i(c, f, "num_outputs", d->steps);
}

/* Check the inputs' shapes against the attributes and fill d. */
static ft_status la_check(onx_ctx *c, const onx_node *n, int rule, la_dims *d)
{
    d->hq = onx_attr_i(n, "q_num_heads", 0);
    d->hkv = onx_attr_i(n, "kv_num_heads", 0);
    if (d->hq < 1 || d->hkv < 1 || d->hq % d->hkv != 0)
        return onx_error(c, n, FT_EGRAPH, "attributes q_num_heads (%lld) and kv_num_heads (%lld) must be given, "
                         "positive, and q_num_heads a multiple of kv_num_heads", (long long)d->hq, (long long)d->hkv);
    const ft_shape *qs = ox_shape(c, n, 0), *ks = ox_shape(c, n, 1), *vs = ox_shape(c, n, 2);
    if (qs->rank != 3 || ks->rank != 3 || vs->rank != 3)
        return onx_error(c, n, FT_EGRAPH, "query, key and value must be 3-D [B, T, H*D] (ranks %d, %d, %d)",
                         qs->rank, ks->rank, vs->rank);
    d->b = qs->dims[0];
    d->steps = qs->dims[1];
    d->dk = qs->dims[2] / d->hq;
    d->dv = vs->dims[2] / d->hkv;
    if (d->steps < 1 || qs->dims[2] % d->hq != 0 || vs->dims[2] % d->hkv != 0 || ks->dims[2] != d->hkv * d->dk ||
        ks->dims[0] != d->b || vs->dims[0] != d->b || ks->dims[1] != d->steps || vs->dims[1] != d->steps)
        return onx_error(c, n, FT_EGRAPH, "query [%lld, %lld, %lld], key [%lld, %lld, %lld] and value [%lld, %lld, "
                         "%lld] do not agree with q_num_heads %lld and kv_num_heads %lld (T at least 1)",
                         (long long)qs->dims[0], (long long)qs->dims[1], (long long)qs->dims[2],
                         (long long)ks->dims[0], (long long)ks->dims[1], (long long)ks->dims[2],
                         (long long)vs->dims[0], (long long)vs->dims[1], (long long)vs->dims[2], (long long)d->hq,
                         (long long)d->hkv);
    if (onx_in(c, n, 3) >= 0) {
        const ft_shape *ps = ox_shape(c, n, 3);
        if (ps->rank != 4 || ps->dims[0] != d->b || ps->dims[1] != d->hkv || ps->dims[2] != d->dk ||
            ps->dims[3] != d->dv)
            return onx_error(c, n, FT_EGRAPH, "input 3 (past_state) must be [B, H_kv, d_k, d_v] = [%lld, %lld, "
                             "%lld, %lld]", (long long)d->b, (long long)d->hkv, (long long)d->dk, (long long)d->dv);
    }
    static const char *const what[2] = {"decay", "beta"};
    for (int j = 0; j < 2; j++) {
        if (!(rule & (j ? LA_BETA : LA_DECAY)))
            continue;
        int k = 4 + j;
        if (onx_in(c, n, k) < 0)
            return onx_error(c, n, FT_EGRAPH, "update_rule '%s' needs input %d (%s)",
                             onx_attr_s(c, n, "update_rule", "gated_delta"), k, what[j]);
        const ft_shape *s = ox_shape(c, n, k);
        int64_t w = s->rank == 3 ? s->dims[2] : -1;
        int ok = s->rank == 3 && s->dims[0] == d->b && s->dims[1] == d->steps &&
                 (j ? (w == d->hkv || w == 1) : (w == d->hkv || w == d->hkv * d->dk));
        if (!ok)
            return onx_error(c, n, FT_EGRAPH, "input %d (%s) must be [B, T, %s] with B=%lld, T=%lld", k, what[j],
                             j ? "H_kv or 1" : "H_kv*d_k or H_kv", (long long)d->b, (long long)d->steps);
        if (j)
            d->beta_w = w;
        else
            d->decay_w = w / d->hkv;
    }
    return FT_OK;
}

/* The state before the first step: past_state in f32, or -1 (zeros). */
static ft_status first_state(onx_ctx *c, const onx_node *n, int *state)
{
    *state = -1;
    if (onx_in(c, n, 3) >= 0)
        OX_NEED((*state = as_f32(c, n, onx_in(c, n, 3), ox_dtype(c, n, 3))) >= 0);
    return FT_OK;
}

/* One step: the state after token t into *state, its output row into *out. */
static ft_status one_step(onx_ctx *c, const onx_node *n, const la_dims *d, int rule, const int *part, int *state,
                          int *out)
{
    int64_t g = d->hq / d->hkv;
    int kc = view4(c, n, part[1], d->b, d->hkv, d->dk, 1), write = view4(c, n, part[2], d->b, d->hkv, 1, d->dv);
    OX_NEED(kc >= 0 && write >= 0);
    if ((rule & LA_DECAY) && *state >= 0) {
        int dec = view4(c, n, part[3], d->b, d->hkv, d->decay_w, 1);
        OX_NEED(dec >= 0 && (*state = op2(c, n, FT_OP_MUL, *state, dec, "decayed")) >= 0);
    }
    if (rule & LA_BETA) {
        if (*state >= 0) {
            int kr = view4(c, n, part[1], d->b, d->hkv, 1, d->dk);
            int got = kr >= 0 ? op2(c, n, FT_OP_MATMUL, kr, *state, "retrieved") : -1;
            OX_NEED(got >= 0 && (write = op2(c, n, FT_OP_SUB, write, got, "diff")) >= 0);
        }
        int beta = view4(c, n, part[4], d->b, d->beta_w, 1, 1);
        OX_NEED(beta >= 0 && (write = op2(c, n, FT_OP_MUL, beta, write, "delta")) >= 0);
    }
    int outer = op2(c, n, FT_OP_MUL, kc, write, "outer");
    OX_NEED(outer >= 0);
    if (*state >= 0)
        OX_NEED((outer = op2(c, n, FT_OP_ADD, *state, outer, "state")) >= 0);
    *state = outer;
    int q = view4(c, n, part[0], d->b, d->hkv, g, d->dk);
    int o = q >= 0 ? op2(c, n, FT_OP_MATMUL, q, *state, "read") : -1;
    ft_shape row = {.rank = 3, .dims = {d->b, 1, d->hq * d->dv}};
    OX_NEED(o >= 0 && (*out = ox_tmp(c, n, "out_step")) >= 0 && ox_reshape(c, n, o, &row, *out));
    return FT_OK;
}

/* Output k of the node from the f32 tensor x: a cast to dt, or x itself. */
static ft_status emit_output(onx_ctx *c, const onx_node *n, int k, int x, ft_dtype dt)
{
    if (dt == FT_F32)
        return onx_alias(c, n, k, x);
    int o = ox_out(c, n, k);
    OX_NEED(o >= 0 && ox_cast(c, n, x, dt, o));
    return FT_OK;
}

ft_status ox_map_linear_attention(onx_ctx *c, const onx_node *n)
{
    const char *ur = onx_attr_s(c, n, "update_rule", "gated_delta");
    static const char *const rules[4] = {"linear", "gated", "delta", "gated_delta"};
    int rule = -1;
    for (int j = 0; j < 4; j++)
        if (strcmp(ur, rules[j]) == 0)
            rule = j;
    if (rule < 0)
        return onx_error(c, n, FT_EGRAPH, "attribute update_rule '%s' (ONNX defines linear, gated, delta and "
                         "gated_delta)", ur);
    for (int k = 0; k < 6; k++) {
        ft_dtype dt = ox_dtype(c, n, k);
        if (onx_in(c, n, k) >= 0 && dt != FT_F32 && dt != FT_F16 && dt != FT_BF16)
            return onx_unsupported(c, n, "input %d has dtype %s (LinearAttention takes f16, bf16 and f32)", k,
                                   ft_dtype_name(dt));
    }
    la_dims d = {0};
    OX_TRY(la_check(c, n, rule, &d));
    double scale = onx_attr_f(n, "scale", 0.0);
    if (scale == 0.0)
        scale = 1.0 / sqrt((double)d.dk);
    /* parts[j * T + t]: step t of query (scaled), key, value, exp(decay), beta */
    int *parts = calloc((size_t)(5 * d.steps), sizeof(int)), *outs = calloc((size_t)d.steps, sizeof(int));
    ft_status st = parts && outs ? FT_OK : onx_error(c, n, FT_ERUNTIME, "out of memory unrolling %lld steps",
                                                     (long long)d.steps);
    int state = -1;
    if (st == FT_OK)
        st = first_state(c, n, &state);
    for (int j = 0; j < 5 && st == FT_OK; j++)
        if (j < 3 || (j == 3 && (rule & LA_DECAY)) || (j == 4 && (rule & LA_BETA)))
            st = steps_of(c, n, j == 3 ? 4 : j == 4 ? 5 : j, &d, j == 3, parts + j * d.steps);
    if (st == FT_OK) {
        int sc = ox_scalar(c, n, "scale", FT_F32, scale);
        for (int64_t t = 0; t < d.steps && st == FT_OK; t++) {
            int q = sc >= 0 ? op2(c, n, FT_OP_MUL, parts[t], sc, "scaled_q") : -1;
            int part[5] = {q, parts[d.steps + t], parts[2 * d.steps + t], parts[3 * d.steps + t],
                           parts[4 * d.steps + t]};
            st = q >= 0 ? one_step(c, n, &d, rule, part, &state, &outs[t]) : onx_status(c);
        }
    }
    int out = outs && d.steps == 1 ? outs[0] : -1;
    if (st == FT_OK && d.steps > 1) {
        out = ox_tmp(c, n, "out_f32");
        ft_node *f = out >= 0 ? onx_emit(c, n, FT_OP_CONCAT, outs, (int)d.steps, &out, 1) : NULL;
        st = f ? onx_set_i(c, f, "axis", 1) : onx_status(c);
    }
    free(parts);
    free(outs);
    OX_TRY(st);
    OX_TRY(emit_output(c, n, 0, out, ox_dtype(c, n, 0)));
    return emit_output(c, n, 1, state, ox_dtype(c, n, onx_in(c, n, 3) >= 0 ? 3 : 0));
}
