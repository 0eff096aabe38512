/* ONNX matrix products, reductions, scans and the Fourier transform -> ftrun:
 * MatMul, Gemm, Einsum, Reduce* (axes as an attribute or, from opset 13 for
 * ReduceSum and 18 for the others, an input), ArgMax/ArgMin, CumSum, TopK and
 * DFT (opset 17: axis attribute; 20: axis input).
 *
 *   ft_status st = ox_map_reduce(c, n);  // "ReduceMean" -> reduce_mean {axes, keepdims}
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <string.h>

ft_status ox_map_matmul(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_MATMUL, 0));
    OX_NEED(ox_emit2(c, n, FT_OP_MATMUL, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_gemm(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GEMM, 0));
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out = ox_out(c, n, 0);
    ft_node *g = onx_emit(c, n, FT_OP_GEMM, in, in[2] >= 0 ? 3 : 2, &out, 1);
    OX_NEED(g);
    OX_TRY(onx_set_f(c, g, "alpha", onx_attr_f(n, "alpha", 1.0)));
    OX_TRY(onx_set_f(c, g, "beta", onx_attr_f(n, "beta", 1.0)));
    OX_TRY(onx_set_i(c, g, "trans_a", onx_attr_i(n, "transA", 0)));
    return onx_set_i(c, g, "trans_b", onx_attr_i(n, "transB", 0));
}

ft_status ox_map_einsum(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_EINSUM, 0));
    const char *eq = onx_attr_s(c, n, "equation", "");
    char buf[512];
    size_t k = 0;
    for (const char *p = eq; *p && k + 1 < sizeof buf; p++)
        if (*p != ' ')
            buf[k++] = *p;
    buf[k] = 0;
    ft_node *f = onx_emit(c, n, FT_OP_EINSUM, NULL, -1, NULL, -1);
    OX_NEED(f);
    return onx_set_s(c, f, "equation", buf);
}

static const struct {
    const char *onnx;
    ft_op op;
    int axes_input_since; /* opset from which axes is input 1 */
} REDUCE[] = {
    {"ReduceSum", FT_OP_REDUCE_SUM, 13},          {"ReduceMean", FT_OP_REDUCE_MEAN, 18},
    {"ReduceMax", FT_OP_REDUCE_MAX, 18},          {"ReduceMin", FT_OP_REDUCE_MIN, 18},
    {"ReduceProd", FT_OP_REDUCE_PROD, 18},        {"ReduceL1", FT_OP_REDUCE_L1, 18},
    {"ReduceL2", FT_OP_REDUCE_L2, 18},            {"ReduceSumSquare", FT_OP_REDUCE_SUM_SQUARE, 18},
    {"ReduceLogSumExp", FT_OP_REDUCE_LOG_SUM_EXP, 18}, {"ReduceLogSum", FT_OP_REDUCE_LOG_SUM, 18},
};

/* Reduce*: the ftrun reduction with the same name. */
ft_status ox_map_reduce(onx_ctx *c, const onx_node *n)
{
    size_t i = 0;
    while (i < FT_ARRAY_LEN(REDUCE) && strcmp(REDUCE[i].onnx, n->op_type) != 0)
        i++;
    if (i == FT_ARRAY_LEN(REDUCE))
        return onx_error(c, n, FT_ERUNTIME, "no reduction mapping for op type '%s'", n->op_type);
    ft_op op = REDUCE[i].op;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    const int64_t *axes = NULL;
    int na;
    OX_TRY(ox_ints_param(c, n, "axes", 1, REDUCE[i].axes_input_since, "the reduced axes", &axes, &na));
    ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    if (na >= 0)
        OX_TRY(onx_set_ints(c, f, "axes", axes, na));
    OX_TRY(onx_set_i(c, f, "keepdims", onx_attr_i(n, "keepdims", 1)));
    if (n->opset >= REDUCE[i].axes_input_since)
        OX_TRY(onx_set_i(c, f, "noop_with_empty_axes", onx_attr_i(n, "noop_with_empty_axes", 0)));
    return FT_OK;
}

ft_status ox_map_arg(onx_ctx *c, const onx_node *n)
{
    ft_op op = strcmp(n->op_type, "ArgMax") == 0 ? FT_OP_ARGMAX : FT_OP_ARGMIN;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0)));
    OX_TRY(onx_set_i(c, f, "keepdims", onx_attr_i(n, "keepdims", 1)));
    return onx_set_i(c, f, "select_last_index", onx_attr_i(n, "select_last_index", 0));
}

/* CumSum (11) and CumProd (26): ftrun's cumsum / cumprod, the axis known at load. */
ft_status ox_map_cumsum(onx_ctx *c, const onx_node *n)
{
    const ft_op op = !strcmp(n->op_type, "CumProd") ? FT_OP_CUMPROD : FT_OP_CUMSUM;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    int64_t axis;
    OX_TRY(onx_const_int1(c, n, 1, "axis", "ftrun's cumsum and cumprod take the axis as an attribute", &axis));
    ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", axis));
    OX_TRY(onx_set_i(c, f, "exclusive", onx_attr_i(n, "exclusive", 0)));
    return onx_set_i(c, f, "reverse", onx_attr_i(n, "reverse", 0));
}

ft_status ox_map_topk(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_TOPK, 0));
    int64_t k;
    if (n->opset < 10) {
        k = onx_attr_i(n, "k", -1);
    }
    ft_status st = FT_OK;
    int kt = n->opset >= 10 ? onx_runtime_in(c, n, 1, &st) : -1; /* k computed at run time: an input */
    if (n->opset >= 10 && (st || (kt < 0 && (st = onx_const_int1(c, n, 1, "K", "ftrun's topk takes k as an attribute",
                                                                   &k)))))
        return st;
    int x[2] = {onx_in(c, n, 0), kt}, out[2] = {ox_out(c, n, 0), ox_out(c, n, 1)};
    OX_NEED(out[0] >= 0 && out[1] >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_TOPK, x, kt >= 0 ? 2 : 1, out, 2);
    OX_NEED(f);
    if (kt < 0)
        OX_TRY(onx_set_i(c, f, "k", k));
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -1)));
    OX_TRY(onx_set_i(c, f, "largest", onx_attr_i(n, "largest", 1)));
    return onx_set_i(c, f, "sorted", onx_attr_i(n, "sorted", 1));
}

/* DFT with inverse=1 and onesided=1 (numpy.fft.irfft): the signal's m bins
 * along ax are a one-sided spectrum (a real one, [..., 1], is padded to
 * complex with imaginary part 0); irfft gives the real [..., n, ...], n the
 * dft_length or 2*(m-1) (irfft crops or zero-pads the bins to n/2+1), and an
 * unsqueeze the trailing 1. */
/* DFT's input 1 (dft_length), known at load, into *len; *len unchanged when
 * the input is absent. */
static ft_status dft_length(onx_ctx *c, const onx_node *n, int64_t *len)
{
    if (onx_in(c, n, 1) < 0)
        return FT_OK;
    const int64_t *v;
    int nv;
    OX_TRY(onx_const_ints(c, n, 1, "the transform length fixes the output shape", &v, &nv));
    if (nv != 1 || v[0] < 1)
        return onx_error(c, n, FT_EGRAPH, "input 1 (dft_length) must hold one positive value");
    *len = v[0];
    return FT_OK;
}

static ft_status map_irfft(onx_ctx *c, const onx_node *n, int x, int out, int ax, int rank, int real, int64_t m)
{
    int64_t len = 2 * (m - 1), last = rank - 1;
    OX_TRY(dft_length(c, n, &len));
    if (len < 1)
        return onx_error(c, n, FT_EGRAPH, "a one-sided inverse of %lld bin%s without dft_length has no samples "
                         "(2*(m-1) = %lld)", (long long)m, m == 1 ? "" : "s", (long long)len);
    ft_node *f;
    if (real) {
        int cx = ox_tmp(c, n, "complex");
        int64_t pads[2 * FT_MAX_RANK] = {0};
        pads[2 * rank - 1] = 1;
        OX_NEED(cx >= 0);
        OX_NEED(f = ox_emit1(c, n, FT_OP_PAD, x, cx));
        OX_TRY(onx_set_ints(c, f, "pads", pads, 2 * rank));
        x = cx;
    }
    int sig = ox_tmp(c, n, "signal");
    OX_NEED(sig >= 0);
    OX_NEED(f = ox_emit1(c, n, FT_OP_IRFFT, x, sig));
    OX_TRY(onx_set_i(c, f, "axis", ax));
    OX_TRY(onx_set_i(c, f, "n", len));
    OX_NEED(f = ox_emit1(c, n, FT_OP_UNSQUEEZE, sig, out));
    return onx_set_ints(c, f, "axes", &last, 1);
}

/* DFT: the signal is [..., n, ..., 1] (real) or [..., n, ..., 2] (complex);
 * ftrun's complex tensors have the same trailing 2 and count axes without it.
 * Real forward onesided: squeeze + rfft; otherwise a real signal is padded to
 * complex (imaginary part 0) and goes through fft/ifft; a complex onesided
 * result keeps the first n/2+1 bins (slice). dft_length cuts (slice) or
 * zero-pads (pad) the signal first. An inverse onesided one is map_irfft's. */
ft_status ox_map_dft(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_FFT, 0));
    const ft_shape *s = ox_shape(c, n, 0);
    int rank = s->rank, inverse = onx_attr_i(n, "inverse", 0) != 0, onesided = onx_attr_i(n, "onesided", 0) != 0;
    int64_t axis = n->opset < 20 ? onx_attr_i(n, "axis", 1) : -2;
    if (rank < 2 || (s->dims[rank - 1] != 1 && s->dims[rank - 1] != 2))
        return onx_error(c, n, FT_EGRAPH, "input 0 has rank %d and last dim %lld; DFT expects [..., 1] (real) or "
                         "[..., 2] (complex)", rank, (long long)(rank ? s->dims[rank - 1] : 0));
    if (n->opset >= 20 && onx_in(c, n, 2) >= 0)
        OX_TRY(onx_const_int1(c, n, 2, "axis", "ftrun's fft takes the axis as an attribute", &axis));
    int ax;
    OX_TRY(ox_axis(c, n, "axis", axis, rank, &ax));
    if (ax == rank - 1)
        return onx_error(c, n, FT_EGRAPH, "axis %lld is the last (real/imaginary) dim of the signal", (long long)axis);
    int real = s->dims[rank - 1] == 1, x = onx_in(c, n, 0), out = ox_out(c, n, 0);
    int64_t len = s->dims[ax];
    if (inverse && onesided)
        return map_irfft(c, n, x, out, ax, rank, real, len);
    int64_t want = len;
    OX_TRY(dft_length(c, n, &want));
    if (want != len) {
        int t = ox_tmp(c, n, "resized");
        OX_NEED(t >= 0);
        if (want < len) {
            int64_t st = 0, en = want, a = ax;
            ft_node *f = ox_emit1(c, n, FT_OP_SLICE, x, t);
            OX_NEED(f);
            OX_TRY(onx_set_ints(c, f, "starts", &st, 1));
            OX_TRY(onx_set_ints(c, f, "ends", &en, 1));
            OX_TRY(onx_set_ints(c, f, "axes", &a, 1));
        } else {
            int64_t pads[2 * FT_MAX_RANK] = {0};
            pads[rank + ax] = want - len;
            ft_node *f = ox_emit1(c, n, FT_OP_PAD, x, t);
            OX_NEED(f);
            OX_TRY(onx_set_ints(c, f, "pads", pads, 2 * rank));
        }
        x = t;
        len = want;
    }
    if (real && onesided && !inverse) {
        int sq = ox_tmp(c, n, "real");
        int64_t last = rank - 1;
        OX_NEED(sq >= 0);
        ft_node *f = ox_emit1(c, n, FT_OP_SQUEEZE, x, sq);
        OX_NEED(f);
        OX_TRY(onx_set_ints(c, f, "axes", &last, 1));
        OX_NEED(f = ox_emit1(c, n, FT_OP_RFFT, sq, out));
        return onx_set_i(c, f, "axis", ax);
    }
    if (real) {
        int cx = ox_tmp(c, n, "complex");
        int64_t pads[2 * FT_MAX_RANK] = {0};
        pads[2 * rank - 1] = 1;
        OX_NEED(cx >= 0);
        ft_node *f = ox_emit1(c, n, FT_OP_PAD, x, cx);
        OX_NEED(f);
        OX_TRY(onx_set_ints(c, f, "pads", pads, 2 * rank));
        x = cx;
    }
    int dst = onesided ? ox_tmp(c, n, "spectrum") : out;
    OX_NEED(dst >= 0);
    ft_node *f = ox_emit1(c, n, inverse ? FT_OP_IFFT : FT_OP_FFT, x, dst);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", ax));
    if (onesided) {
        int64_t st = 0, en = len / 2 + 1, a = ax;
        OX_NEED(f = ox_emit1(c, n, FT_OP_SLICE, dst, out));
        OX_TRY(onx_set_ints(c, f, "starts", &st, 1));
        OX_TRY(onx_set_ints(c, f, "ends", &en, 1));
        OX_TRY(onx_set_ints(c, f, "axes", &a, 1));
    }
    return FT_OK;
}
