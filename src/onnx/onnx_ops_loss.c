/* ONNX losses and STFT -> one ftrun node each: NegativeLogLikelihoodLoss
 * -> negative_log_likelihood_loss, SoftmaxCrossEntropyLoss ->
 * softmax_cross_entropy_loss (with its optional log_prob output), STFT ->
 * stft (frame_step and frame_length, inputs in ONNX, become attributes and
 * must be known at load time), MelWeightMatrix -> mel_weight_matrix (its
 * num_mel_bins and dft_length, the output's shape, known at load). The window
 * functions are in onnx_ops_nn.c.
 *
 *   ft_status st = ox_map_nll_loss(c, n);  // one negative_log_likelihood_loss node
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <string.h>

static ft_status map_loss(onx_ctx *c, const onx_node *n, ft_op op)
{
    OX_TRY(ox_check_dtype(c, n, op, 0));
    ft_dtype tdt = ox_dtype(c, n, 1);
    if (tdt != FT_I32 && tdt != FT_I64)
        return onx_unsupported(c, n, "target (input 1) of dtype %s (ftrun's %s takes i32 or i64 class indices)",
                               ft_dtype_name(tdt), ft_op_name(op));
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)};
    int out[2] = {ox_out(c, n, 0), -1}, n_out = 1;
    if (op == FT_OP_SOFTMAX_CROSS_ENTROPY_LOSS && onx_out(c, n, 1) >= 0) {
        out[1] = onx_out(c, n, 1);
        n_out = 2;
    }
    ft_node *f = onx_emit(c, n, op, in, in[2] >= 0 ? 3 : 2, out, n_out);
    OX_NEED(f);
    OX_TRY(onx_set_s(c, f, "reduction", onx_attr_s(c, n, "reduction", "mean")));
    if (onx_has_attr(n, "ignore_index"))
        OX_TRY(onx_set_i(c, f, "ignore_index", onx_attr_i(n, "ignore_index", 0)));
    return FT_OK;
}

ft_status ox_map_nll_loss(onx_ctx *c, const onx_node *n)
{
    return map_loss(c, n, FT_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS);
}

ft_status ox_map_softmax_ce_loss(onx_ctx *c, const onx_node *n)
{
    return map_loss(c, n, FT_OP_SOFTMAX_CROSS_ENTROPY_LOSS);
}

/* STFT(signal, frame_step, window?, frame_length?; onesided). */
ft_status ox_map_stft(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_STFT, 0));
    int64_t step, len;
    OX_TRY(onx_const_int1(c, n, 1, "frame_step", "ftrun's stft takes frame_step as an attribute", &step));
    int in[2] = {onx_in(c, n, 0), onx_in(c, n, 2)}, out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, FT_OP_STFT, in, in[1] >= 0 ? 2 : 1, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "frame_step", step));
    OX_TRY(onx_set_i(c, f, "onesided", onx_attr_i(n, "onesided", 1)));
    if (onx_in(c, n, 3) >= 0) {
        OX_TRY(onx_const_int1(c, n, 3, "frame_length", "the frame length fixes the output shape", &len));
        OX_TRY(onx_set_i(c, f, "frame_length", len));
    }
    return FT_OK;
}

ft_status ox_map_mel_weight_matrix(onx_ctx *c, const onx_node *n)
{
    int64_t bins, dft;
    OX_TRY(onx_const_int1(c, n, 0, "num_mel_bins", "it sets the output's shape", &bins));
    OX_TRY(onx_const_int1(c, n, 1, "dft_length", "it sets the output's shape", &dft));
    ft_dtype dt;
    const char *tn;
    int64_t ot = onx_attr_i(n, "output_datatype", 1);
    if (ox_dtype_from_onnx(ot, &dt, &tn))
        return onx_unsupported(c, n, "attribute output_datatype=%lld (%s): ftrun has no such dtype", (long long)ot, tn);
    if (!ft_dtype_in(dt, FT_DT_FLOAT))
        return onx_unsupported(c, n, "attribute output_datatype=%lld (%s): ftrun's mel_weight_matrix writes floats",
                               (long long)ot, tn);
    OX_TRY(ox_check_dtype(c, n, FT_OP_MEL_WEIGHT_MATRIX, 0));
    int in[5];
    for (int i = 0; i < 5; i++)
        if ((in[i] = onx_in(c, n, i)) < 0)
            return onx_error(c, n, FT_EGRAPH, "input %d is missing", i);
    int out = ox_out(c, n, 0);
    ft_node *f = out < 0 ? NULL : onx_emit(c, n, FT_OP_MEL_WEIGHT_MATRIX, in, 5, &out, 1);
    OX_NEED(f);
    return onx_set_s(c, f, "output_datatype", ft_dtype_name(dt));
}
