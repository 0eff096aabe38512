/* ONNX softmax-like ops, normalizations and attention -> ftrun:
 * Softmax/LogSoftmax/Hardmax (before opset 13 ONNX coerces the input to 2-D
 * at `axis`: flatten, work on the last axis, reshape back), Layer/RMS/Batch/
 * Instance/Group normalization, LpNormalization and MeanVarianceNormalization
 * as short expansions, Attention and RotaryEmbedding (opset 23) onto
 * attention and rotary_embedding.
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
    /* training_mode=1 (opset 14+): the batch's statistics, and outputs 1 and 2
     * the running mean and variance updated with momentum */
    int train = onx_attr_i(n, "training_mode", 0) != 0, out[3] = {ox_out(c, n, 0), -1, -1}, n_out = 1;
    for (int k = 1; k < n->n_out; k++) {
        if (onx_out(c, n, k) < 0)
            continue;
        if (!train || k > 2)
            return onx_unsupported(c, n, "output %d (%s statistics without training_mode=1; ftrun's batch_norm "
                                   "gives the running mean and variance of training_mode=1)", k,
                                   k > 2 ? "saved" : "running");
        out[k] = onx_out(c, n, k);
        n_out = k + 1;
    }
    for (int k = 1; k < n_out; k++)
        if (out[k] < 0)
            OX_NEED((out[k] = ox_out(c, n, k)) >= 0);
    int in[5];
    for (int k = 0; k < 5; k++)
        in[k] = onx_in(c, n, k);
    ft_node *f = onx_emit(c, n, FT_OP_BATCH_NORM, in, 5, out, n_out);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "training_mode", train));
    OX_TRY(onx_set_f(c, f, "momentum", onx_attr_f(n, "momentum", 0.9)));
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

/* Attention (opsets 23-25): ftrun's attention on [B, H, S, D]; 3-D inputs
 * [B, S, H*D] are split into heads around it. softcap, past_key/past_value
 * (inputs 4, 5), nonpad_kv_seqlen (input 6: kv_len), present_key/
 * present_value (outputs 1, 2), the QK product (output 3, always 4-D, with
 * qk_matmul_output_mode as scores_mode) and opset 25's left_window_size/
 * right_window_size (window_left/window_right) map onto the op's own.
 * softmax_precision is not read: the weights are computed in f32 (f64 for
 * f64 inputs) and rounded to the output dtype, as it asks for f16 and bf16. */
ft_status ox_map_attention(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_ATTENTION, 0));
    int pk = onx_in(c, n, 4), pv = onx_in(c, n, 5), kvl = n->n_in > 6 ? onx_in(c, n, 6) : -1;
    if ((pk >= 0) != (pv >= 0))
        return onx_error(c, n, FT_EGRAPH, "inputs past_key and past_value are given together or not at all");
    int64_t mode = onx_attr_i(n, "qk_matmul_output_mode", 0);
    int scores = n->n_out > 3 && onx_out(c, n, 3) >= 0;
    if (scores && (mode < 0 || mode > 3))
        return onx_unsupported(c, n, "attribute qk_matmul_output_mode=%lld (ONNX defines 0 to 3)", (long long)mode);
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
    int present = scores || (n->n_out > 1 && onx_out(c, n, 1) >= 0) || (n->n_out > 2 && onx_out(c, n, 2) >= 0);
    int in[7] = {q, k, v, mask, pk, pv, kvl};
    int outs[4] = {three ? ox_tmp(c, n, "context") : ox_out(c, n, 0), -1, -1, scores ? onx_out(c, n, 3) : -1};
    OX_NEED(outs[0] >= 0);
    for (int j = 1; present && j < 3; j++) {
        outs[j] = n->n_out > j && onx_out(c, n, j) >= 0 ? onx_out(c, n, j) : ox_tmp(c, n, j == 1 ? "present_key" :
                                                                                          "present_value");
        OX_NEED(outs[j] >= 0);
    }
    int nin = kvl >= 0 ? 7 : pk >= 0 ? 6 : mask >= 0 ? 4 : 3;
    ft_node *f = onx_emit(c, n, FT_OP_ATTENTION, in, nin, outs, scores ? 4 : present ? 3 : 1);
    OX_NEED(f);
    if (onx_has_attr(n, "scale"))
        OX_TRY(onx_set_f(c, f, "scale", onx_attr_f(n, "scale", 1.0)));
    if (onx_attr_f(n, "softcap", 0.0) != 0.0)
        OX_TRY(onx_set_f(c, f, "softcap", onx_attr_f(n, "softcap", 0.0)));
    OX_TRY(onx_set_i(c, f, "causal", onx_attr_i(n, "is_causal", 0) != 0));
    if (scores && mode != 0)
        OX_TRY(onx_set_i(c, f, "scores_mode", mode));
    int64_t wl = onx_attr_i(n, "left_window_size", -1), wr = onx_attr_i(n, "right_window_size", -1);
    if (wl != -1)
        OX_TRY(onx_set_i(c, f, "window_left", wl));
    if (wr != -1)
        OX_TRY(onx_set_i(c, f, "window_right", wr));
    if (three) {
        const ft_shape *vs = ox_shape(c, n, 2);
        int64_t qh = onx_attr_i(n, "q_num_heads", 0), kh = onx_attr_i(n, "kv_num_heads", 0);
        static const int64_t perm[4] = {0, 2, 1, 3};
        ft_shape o = {.rank = 3, .dims = {qs->dims[0], qs->dims[1], qh * (vs->dims[2] / kh)}};
        int t = ox_tmp(c, n, "seq_first");
        OX_NEED(t >= 0 && ox_transpose(c, n, outs[0], perm, 4, t) && ox_reshape(c, n, t, &o, ox_out(c, n, 0)));
    }
    return FT_OK;
}

/* RotaryEmbedding (opset 23): ftrun's rotary_embedding, which takes the same
 * inputs (x [B,H,S,D] or [B,S,H*D], cos_cache, sin_cache, position_ids) and
 * attributes. */
ft_status ox_map_rotary(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_ROTARY_EMBEDDING, 0));
    int pos = onx_in(c, n, 3), in[4] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2), pos}, out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, FT_OP_ROTARY_EMBEDDING, in, pos >= 0 ? 4 : 3, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "interleaved", onx_attr_i(n, "interleaved", 0)));
    OX_TRY(onx_set_i(c, f, "rotary_embedding_dim", onx_attr_i(n, "rotary_embedding_dim", 0)));
    return onx_set_i(c, f, "num_heads", onx_attr_i(n, "num_heads", 0));
}
