/* ONNX loss ops -> ftrun expansions: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (log_softmax over the class axis, then the same
 * negative log-likelihood): gather_elements of the target class, weights by
 * gather, ignore_index by where, reductions none / sum / mean (a weighted mean
 * divides by the sum of the weights used).
 *
 *   ft_status st = ox_map_nll_loss(c, n);  // reduction='mean', ignore_index=-1
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <string.h>

/* loss = -logp[n, target[n, ...], ...] (* weight[target]) reduced into out.
 * logp is [N, C, d...] of dtype dt; target input k_t, weight input k_w. */
static ft_status nll(onx_ctx *c, const onx_node *n, int logp, ft_dtype dt, int k_t, int k_w, int out)
{
    const char *red = onx_attr_s(c, n, "reduction", "mean");
    if (strcmp(red, "none") != 0 && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
        return onx_error(c, n, FT_EGRAPH, "attribute reduction='%s'; expected none, sum or mean", red);
    int target = onx_in(c, n, k_t), weight = onx_in(c, n, k_w), keep = -1;
    ft_dtype tdt = ox_dtype(c, n, k_t);
    if (onx_has_attr(n, "ignore_index")) {
        int ii = ox_scalar(c, n, "ignore_index", tdt, (double)onx_attr_i(n, "ignore_index", 0)),
            zero = ox_scalar(c, n, "class0", tdt, 0), ign = ox_tmp(c, n, "ignored"), safe = ox_tmp(c, n, "target");
        keep = ox_tmp(c, n, "kept");
        OX_NEED(ii >= 0 && zero >= 0 && ign >= 0 && safe >= 0 && keep >= 0);
        OX_NEED(ox_emit2(c, n, FT_OP_EQUAL, target, ii, ign) && ox_emit1(c, n, FT_OP_NOT, ign, keep));
        OX_NEED(ox_where(c, n, keep, target, zero, safe));
        target = safe;
    }
    int tu = ox_tmp(c, n, "target_col"), g = ox_tmp(c, n, "picked"), l = ox_tmp(c, n, "picked_flat"),
        nl = ox_tmp(c, n, "neg_log_likelihood");
    OX_NEED(tu >= 0 && g >= 0 && l >= 0 && nl >= 0);
    OX_NEED(ox_axis_op(c, n, FT_OP_UNSQUEEZE, target, 1, tu));
    ft_node *f = ox_emit2(c, n, FT_OP_GATHER_ELEMENTS, logp, tu, g);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", 1));
    OX_NEED(ox_axis_op(c, n, FT_OP_SQUEEZE, g, 1, l) && ox_emit1(c, n, FT_OP_NEG, l, nl));
    int w = -1;
    if (weight >= 0) {
        int wg = ox_tmp(c, n, "weight");
        OX_NEED(wg >= 0 && ox_emit2(c, n, FT_OP_GATHER, weight, target, wg));
        w = wg;
        if (keep >= 0) {
            int zero = ox_scalar(c, n, "zero", dt, 0), wk = ox_tmp(c, n, "weight_kept");
            OX_NEED(zero >= 0 && wk >= 0 && ox_where(c, n, keep, wg, zero, wk));
            w = wk;
        }
    } else if (keep >= 0) {
        int wk = ox_tmp(c, n, "weight_kept");
        OX_NEED(wk >= 0 && (f = ox_emit1(c, n, FT_OP_CAST, keep, wk)));
        OX_TRY(onx_set_s(c, f, "to", ft_dtype_name(dt)));
        w = wk;
    }
    int none = strcmp(red, "none") == 0, loss = nl;
    if (w >= 0) {
        loss = none ? out : ox_tmp(c, n, "weighted");
        OX_NEED(loss >= 0 && ox_emit2(c, n, FT_OP_MUL, nl, w, loss));
    } else if (none) {
        OX_NEED(ox_emit1(c, n, FT_OP_IDENTITY, nl, out));
    }
    if (none)
        return FT_OK;
    if (strcmp(red, "sum") == 0 || w < 0) {
        OX_NEED(f = ox_emit1(c, n, strcmp(red, "sum") == 0 ? FT_OP_REDUCE_SUM : FT_OP_REDUCE_MEAN, loss, out));
        return onx_set_i(c, f, "keepdims", 0);
    }
    int s = ox_tmp(c, n, "loss_sum"), ws = ox_tmp(c, n, "weight_sum");
    OX_NEED(s >= 0 && ws >= 0 && (f = ox_emit1(c, n, FT_OP_REDUCE_SUM, loss, s)));
    OX_TRY(onx_set_i(c, f, "keepdims", 0));
    OX_NEED(f = ox_emit1(c, n, FT_OP_REDUCE_SUM, w, ws));
    OX_TRY(onx_set_i(c, f, "keepdims", 0));
    OX_NEED(ox_emit2(c, n, FT_OP_DIV, s, ws, out));
    return FT_OK;
}

ft_status ox_map_nll_loss(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GATHER_ELEMENTS, 0));
    return nll(c, n, onx_in(c, n, 0), ox_dtype(c, n, 0), 1, 2, ox_out(c, n, 0));
}

ft_status ox_map_softmax_ce_loss(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_LOG_SOFTMAX, 0));
    int lp = ox_out(c, n, 1);
    OX_NEED(lp >= 0);
    ft_node *f = ox_emit1(c, n, FT_OP_LOG_SOFTMAX, onx_in(c, n, 0), lp);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", 1));
    return nll(c, n, lp, ox_dtype(c, n, 0), 1, 2, ox_out(c, n, 0));
}
