/* ONNX softmax-like ops, normalizations and attention -> ftrun:
 * Softmax/LogSoftmax/Hardmax (before opset 13 ONNX coerces the input to 2-D
 * at `axis`: flatten, work on the last axis, reshape back), Layer/RMS/Batch/
 * Instance/Group normalization, LpNormalization and MeanVarianceNormalization
 * as short expansions, Attention and RotaryEmbedding (opset 23).
 *
 *   ft_status st = ox_map_softmax(c, n);  // opset 11, axis 1 of [2,3,4]: flatten + softmax + reshape
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <string.h>

/* Emit the op-specific "over the last axis of a 2-D view" part into dst. */
typedef ft_status (*axis_body)(onx_ctx *c, const onx_node *n, int x, const ft_shape *s, int axis, int dst);

/* Run body on axis `axis` of input 0; before opset 13 on the 2-D view
 * flattened at axis (ONNX's coercion), reshaped back afterwards. */
static ft_status with_axis(onx_ctx *c, const onx_node *n, axis_body body)
{
    const ft_shape *s = ox_shape(c, n, 0);
    int legacy = n->opset < 13, ax;
    OX_TRY(ox_axis(c, n, "axis", onx_attr_i(n, "axis", legacy ? 1 : -1), s->rank ? s->rank : 1, &ax));
    int x = onx_in(c, n, 0), out = ox_out(c, n, 0);
    if (!legacy || ax == s->rank - 1)
        return body(c, n, x, s, ax, out);
    ft_shape flat = {.rank = 2, .dims = {1, 1}};
    for (int d = 0; d < s->rank; d++)
        flat.dims[d >= ax] *= s->dims[d];
    int f = ox_tmp(c, n, "flat"), r = ox_tmp(c, n, "result");
    OX_NEED(f >= 0 && r >= 0);
    ft_node *fl = ox_emit1(c, n, FT_OP_FLATTEN, x, f);
    OX_NEED(fl);
    OX_TRY(onx_set_i(c, fl, "axis", ax));
    OX_TRY(body(c, n, f, &flat, 1, r));
    OX_NEED(ox_reshape(c, n, r, s, out));
    return FT_OK;
}

/* Softmax, LogSoftmax and Hardmax (1 at the first maximum along the axis,
 * else 0): one node with the axis. */
static ft_op softmax_op(const onx_node *n)
{
    if (strcmp(n->op_type, "LogSoftmax") == 0)
        return FT_OP_LOG_SOFTMAX;
    return strcmp(n->op_type, "Hardmax") == 0 ? FT_OP_HARDMAX : FT_OP_SOFTMAX;
}

static ft_status softmax_body(onx_ctx *c, const onx_node *n, int x, const ft_shape *s, int axis, int dst)
{
    (void)s;
    ft_node *f = ox_emit1(c, n, softmax_op(n), x, dst);
    OX_NEED(f);
    return onx_set_i(c, f, "axis", axis);
}

ft_status ox_map_softmax(onx_ctx *c, const onx_node *n)
{
    ft_op op = softmax_op(n);
    OX_TRY(ox_check_dtype(c, n, op == FT_OP_LOG_SOFTMAX ? FT_OP_SOFTMAX : op, 0));
    return with_axis(c, n, softmax_body);
}

ft_status ox_map_hardmax(onx_ctx *c, const onx_node *n)
{
    return ox_map_softmax(c, n);
}

/* The node's outputs up to the last named one (unnamed ones in between get
 * intermediates). Returns the count. */
static int named_outputs(onx_ctx *c, const onx_node *n, int *out, int max)
{
    int cnt = 0;
    for (int k = 0; k < n->n_out && k < max; k++)
        if (k == 0 || onx_out(c, n, k) >= 0)
            cnt = k + 1;
    for (int k = 0; k < cnt; k++)
        if ((out[k] = ox_out(c, n, k)) < 0)
            return -1;
    return cnt;
}

ft_status ox_map_layer_norm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_LAYER_NORM, 0));
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out[3];
    int no = named_outputs(c, n, out, 3);
    OX_NEED(no > 0);
    ft_node *f = onx_emit(c, n, FT_OP_LAYER_NORM, in, in[2] >= 0 ? 3 : 2, out, no);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -1)));
    return onx_set_f(c, f, "epsilon", onx_attr_f(n, "epsilon", 1e-5));
}

ft_status ox_map_rms_norm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_RMS_NORM, 0));
    ft_node *f = ox_emit2(c, n, FT_OP_RMS_NORM, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -1)));
    return onx_set_f(c, f, "epsilon", onx_attr_f(n, "epsilon", 1e-5));
}

ft_status ox_map_batch_norm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_BATCH_NORM, 0));
    if (n->opset < 9 && onx_attr_i(n, "spatial", 1) == 0)
        return onx_unsupported(c, n, "attribute spatial=0 (ftrun's batch_norm has per-channel statistics only)");
    if (onx_attr_i(n, "training_mode", 0) != 0)
        return onx_unsupported(c, n, "attribute training_mode=1 (ftrun's batch_norm is the inference form)");
    for (int k = 1; k < n->n_out; k++)
        if (onx_out(c, n, k) >= 0)
            return onx_unsupported(c, n, "output %d (running or saved statistics, a training output; ftrun's "
                                   "batch_norm is the inference form)", k);
    int in[5];
    for (int k = 0; k < 5; k++)
        in[k] = onx_in(c, n, k);
    int out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, FT_OP_BATCH_NORM, in, 5, &out, 1);
    OX_NEED(f);
    return onx_set_f(c, f, "epsilon", onx_attr_f(n, "epsilon", 1e-5));
}

ft_status ox_map_instance_norm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_INSTANCE_NORM, 0));
    ft_node *f = onx_emit(c, n, FT_OP_INSTANCE_NORM, NULL, -1, NULL, -1);
    OX_NEED(f);
    return onx_set_f(c, f, "epsilon", onx_attr_f(n, "epsilon", 1e-5));
}

/* GroupNormalization: opset 18 gives scale and bias per group ([G]), 21 per
 * channel ([C]) as ftrun's group_norm; a per-group one is repeated to [C]. */
ft_status ox_map_group_norm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GROUP_NORM, 0));
    const ft_shape *xs = ox_shape(c, n, 0);
    int64_t g = onx_attr_i(n, "num_groups", 0);
    if (xs->rank < 2 || g < 1 || xs->dims[1] % g != 0)
        return onx_error(c, n, FT_EGRAPH, "num_groups %lld does not divide the channels of input 0 (rank %d, C = "
                         "%lld)", (long long)g, xs->rank, (long long)(xs->rank >= 2 ? xs->dims[1] : 0));
    int64_t ch = xs->dims[1];
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)};
    for (int k = 1; k <= 2; k++) {
        const ft_shape *ps = ox_shape(c, n, k);
        if (ps->rank != 1 || ps->dims[0] == ch || ps->dims[0] != g)
            continue;
        ft_shape col = {.rank = 2, .dims = {g, 1}}, flat = {.rank = 1, .dims = {ch}};
        int64_t wide[2] = {g, ch / g};
        int a = ox_tmp(c, n, "per_group"), b = ox_tmp(c, n, "repeated"), r = ox_tmp(c, n, "per_channel");
        OX_NEED(a >= 0 && b >= 0 && r >= 0 && ox_reshape(c, n, in[k], &col, a));
        ft_node *e = ox_emit1(c, n, FT_OP_EXPAND, a, b);
        OX_NEED(e);
        OX_TRY(onx_set_ints(c, e, "shape", wide, 2));
        OX_NEED(ox_reshape(c, n, b, &flat, r));
        in[k] = r;
    }
    int out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, FT_OP_GROUP_NORM, in, 3, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "num_groups", g));
    return onx_set_f(c, f, "epsilon", onx_attr_f(n, "epsilon", 1e-5));
}

/* LpNormalization: lp_normalization, which refuses p other than 1 and 2. */
ft_status ox_map_lp_norm(onx_ctx *c, const onx_node *n)
{
    int64_t p = onx_attr_i(n, "p", 2), axis = onx_attr_i(n, "axis", -1);
    if (p != 1 && p != 2)
        return onx_unsupported(c, n, "attribute p=%lld (ONNX allows 1 and 2)", (long long)p);
    OX_TRY(ox_check_dtype(c, n, FT_OP_LP_NORMALIZATION, 0));
    ft_node *f = ox_emit1(c, n, FT_OP_LP_NORMALIZATION, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "p", p));
    return onx_set_i(c, f, "axis", axis);
}

/* MeanVarianceNormalization: mean_variance_normalization over axes (default
 * [0, 2, 3]) with ONNX's epsilon, 1e-9 (its function body adds it to the
 * standard deviation). */
ft_status ox_map_mvn(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_MEAN_VARIANCE_NORMALIZATION, 0));
    ft_node *f = ox_emit1(c, n, FT_OP_MEAN_VARIANCE_NORMALIZATION, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    const int64_t *axes;
    int na = onx_attr_ints(n, "axes", &axes);
    if (na >= 0)
        OX_TRY(onx_set_ints(c, f, "axes", axes, na));
    return onx_set_f(c, f, "epsilon", 1e-9);
}

/* A 3-D attention input [B, S, H*D] -> [B, H, S, D]. */
static int heads_first(onx_ctx *c, const onx_node *n, int k, int64_t heads, const char *attr)
{
    const ft_shape *s = ox_shape(c, n, k);
    if (heads < 1 || s->dims[2] % heads != 0) {
        onx_error(c, n, FT_EGRAPH, "3-D input %d (last dim %lld) needs attribute %s dividing its last dim", k,
                  (long long)s->dims[2], attr);
        return -1;
    }
    ft_shape split = {.rank = 4, .dims = {s->dims[0], s->dims[1], heads, s->dims[2] / heads}};
    static const int64_t perm[4] = {0, 2, 1, 3};
    int r = ox_tmp(c, n, "heads"), t = ox_tmp(c, n, "heads_first");
    if (r < 0 || t < 0 || !ox_reshape(c, n, onx_in(c, n, k), &split, r) || !ox_transpose(c, n, r, perm, 4, t))
        return -1;
    return t;
}

/* Attention (opset 23) without a KV cache: ftrun's attention on [B, H, S, D];
 * 3-D inputs [B, S, H*D] are split into heads around it. */
ft_status ox_map_attention(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_ATTENTION, 0));
    if (onx_in(c, n, 4) >= 0 || onx_in(c, n, 5) >= 0)
        return onx_unsupported(c, n, "inputs past_key/past_value (ftrun's attention has no KV cache)");
    if (n->n_in > 6 && onx_in(c, n, 6) >= 0)
        return onx_unsupported(c, n, "input nonpad_kv_seqlen (ftrun's attention has no per-batch key lengths)");
    for (int k = 1; k < n->n_out; k++)
        if (onx_out(c, n, k) >= 0)
            return onx_unsupported(c, n, "output %d (present key/value or the QK product; ftrun's attention has one "
                                   "output)", k);
    if (onx_attr_f(n, "softcap", 0.0) != 0.0)
        return onx_unsupported(c, n, "attribute softcap=%g (ftrun's attention has no soft capping)",
                               onx_attr_f(n, "softcap", 0.0));
    const ft_shape *qs = ox_shape(c, n, 0);
    int three = qs->rank == 3;
    int q = onx_in(c, n, 0), k = onx_in(c, n, 1), v = onx_in(c, n, 2), mask = onx_in(c, n, 3);
    if (three) {
        int64_t qh = onx_attr_i(n, "q_num_heads", 0), kh = onx_attr_i(n, "kv_num_heads", 0);
        q = heads_first(c, n, 0, qh, "q_num_heads");
        if (q < 0 || (k = heads_first(c, n, 1, kh, "kv_num_heads")) < 0 ||
            (v = heads_first(c, n, 2, kh, "kv_num_heads")) < 0)
            return onx_status(c);
    }
    int in[4] = {q, k, v, mask}, out = three ? ox_tmp(c, n, "context") : ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_ATTENTION, in, mask >= 0 ? 4 : 3, &out, 1);
    OX_NEED(f);
    if (onx_has_attr(n, "scale"))
        OX_TRY(onx_set_f(c, f, "scale", onx_attr_f(n, "scale", 1.0)));
    OX_TRY(onx_set_i(c, f, "causal", onx_attr_i(n, "is_causal", 0) != 0));
    if (three) {
        const ft_shape *vs = ox_shape(c, n, 2);
        int64_t qh = onx_attr_i(n, "q_num_heads", 0), kh = onx_attr_i(n, "kv_num_heads", 0);
        static const int64_t perm[4] = {0, 2, 1, 3};
        ft_shape o = {.rank = 3, .dims = {qs->dims[0], qs->dims[1], qh * (vs->dims[2] / kh)}};
        int t = ox_tmp(c, n, "seq_first");
        OX_NEED(t >= 0 && ox_transpose(c, n, out, perm, 4, t) && ox_reshape(c, n, t, &o, ox_out(c, n, 0)));
    }
    return FT_OK;
}

/* Slice of t along the last axis: [start, end) by step, into a new tensor. */
static int last_slice(onx_ctx *c, const onx_node *n, int t, int64_t start, int64_t end, int64_t step,
                      const char *suffix)
{
    int64_t axis = -1;
    int r = ox_tmp(c, n, suffix);
    ft_node *f = r >= 0 ? ox_emit1(c, n, FT_OP_SLICE, t, r) : NULL;
    if (!f || onx_set_ints(c, f, "starts", &start, 1) || onx_set_ints(c, f, "ends", &end, 1) ||
        onx_set_ints(c, f, "axes", &axis, 1) || onx_set_ints(c, f, "steps", &step, 1))
        return -1;
    return r;
}

/* Concatenation of a and b along the last axis into out. */
static ft_node *last_concat(onx_ctx *c, const onx_node *n, int a, int b, int out)
{
    int in[2] = {a, b};
    ft_node *f = onx_emit(c, n, FT_OP_CONCAT, in, 2, &out, 1);
    if (f && onx_set_i(c, f, "axis", -1))
        return NULL;
    return f;
}

/* RotaryEmbedding (opset 23): x [B, H, S, D] (or [B, S, H*D] with num_heads,
 * viewed as [B, S, H, D]); cos/sin [B, S, R/2], or [P, R/2] gathered by
 * position_ids [B, S]. The first R dims of each head rotate in pairs (the two
 * halves, or adjacent elements when interleaved):
 *   (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos); the other D - R pass. */
ft_status ox_map_rotary(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_MUL, 0));
    const ft_shape *xs = ox_shape(c, n, 0);
    int three = xs->rank == 3, x = onx_in(c, n, 0), out = ox_out(c, n, 0);
    int64_t heads = onx_attr_i(n, "num_heads", 0), inter = onx_attr_i(n, "interleaved", 0) != 0;
    if (xs->rank != 4 && !(three && heads > 0 && xs->dims[2] % heads == 0))
        return onx_error(c, n, FT_EGRAPH, "input 0 must be [B,H,S,D], or [B,S,H*D] with num_heads dividing its "
                         "last dim (rank %d, num_heads %lld)", xs->rank, (long long)heads);
    ft_shape hs = *xs;
    if (three)
        hs = (ft_shape){.rank = 4, .dims = {xs->dims[0], xs->dims[1], heads, xs->dims[2] / heads}};
    int64_t d = hs.dims[3], r = onx_attr_i(n, "rotary_embedding_dim", 0);
    if (r == 0)
        r = d;
    if (r < 2 || r > d || r % 2)
        return onx_error(c, n, FT_EGRAPH, "rotary_embedding_dim %lld must be even and at most the head size %lld",
                         (long long)r, (long long)d);
    if (three) {
        int t = ox_tmp(c, n, "heads");
        OX_NEED(t >= 0 && ox_reshape(c, n, x, &hs, t));
        x = t;
    }
    /* cos and sin as [B, S, R/2], broadcast over the heads axis */
    int cs[2];
    for (int k = 0; k < 2; k++) {
        int cache = onx_in(c, n, 1 + k), pos = onx_in(c, n, 3);
        if (pos >= 0) {
            int g = ox_tmp(c, n, k ? "sin" : "cos");
            ft_node *f = g >= 0 ? ox_emit2(c, n, FT_OP_GATHER, cache, pos, g) : NULL;
            OX_NEED(f);
            cache = g;
        }
        cs[k] = ox_tmp(c, n, k ? "sin_heads" : "cos_heads");
        OX_NEED(cs[k] >= 0 && ox_axis_op(c, n, FT_OP_UNSQUEEZE, cache, three ? 2 : 1, cs[k]));
    }
    int rot = r == d ? x : last_slice(c, n, x, 0, r, 1, "rotated");
    int x1 = inter ? last_slice(c, n, rot, 0, r, 2, "even") : last_slice(c, n, rot, 0, r / 2, 1, "first_half");
    int x2 = inter ? last_slice(c, n, rot, 1, r, 2, "odd") : last_slice(c, n, rot, r / 2, r, 1, "second_half");
    OX_NEED(rot >= 0 && x1 >= 0 && x2 >= 0);
    int a = ox_tmp(c, n, "x1_cos"), b = ox_tmp(c, n, "x2_sin"), e = ox_tmp(c, n, "x1_sin"), f2 = ox_tmp(c, n, "x2_cos"),
        re = ox_tmp(c, n, "real"), im = ox_tmp(c, n, "imag"), joined = ox_tmp(c, n, "rotated_out");
    OX_NEED(a >= 0 && b >= 0 && e >= 0 && f2 >= 0 && re >= 0 && im >= 0 && joined >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_MUL, x1, cs[0], a) && ox_emit2(c, n, FT_OP_MUL, x2, cs[1], b) &&
            ox_emit2(c, n, FT_OP_MUL, x1, cs[1], e) && ox_emit2(c, n, FT_OP_MUL, x2, cs[0], f2));
    OX_NEED(ox_emit2(c, n, FT_OP_SUB, a, b, re) && ox_emit2(c, n, FT_OP_ADD, e, f2, im));
    if (inter) {
        int ur = ox_tmp(c, n, "real_pair"), ui = ox_tmp(c, n, "imag_pair"), pairs = ox_tmp(c, n, "pairs");
        ft_shape rs = hs;
        rs.dims[3] = r;
        OX_NEED(ur >= 0 && ui >= 0 && pairs >= 0 && ox_axis_op(c, n, FT_OP_UNSQUEEZE, re, -1, ur) &&
                ox_axis_op(c, n, FT_OP_UNSQUEEZE, im, -1, ui) && last_concat(c, n, ur, ui, pairs) &&
                ox_reshape(c, n, pairs, &rs, joined));
    } else {
        OX_NEED(last_concat(c, n, re, im, joined));
    }
    int full = joined;
    if (r < d) {
        int pass = last_slice(c, n, x, r, d, 1, "passed");
        full = three ? ox_tmp(c, n, "heads_out") : out;
        OX_NEED(pass >= 0 && full >= 0 && last_concat(c, n, joined, pass, full));
    }
    if (three)
        OX_NEED(ox_reshape(c, n, full, xs, out));
    else if (full != out)
        OX_NEED(ox_emit1(c, n, FT_OP_IDENTITY, full, out));
    return FT_OK;
}
