/* ONNX linear quantization -> ftrun expansions:
 *   DequantizeLinear: y = (cast(x) - cast(zero_point)) * scale
 *   QuantizeLinear:   y = cast(clip(round(x / scale) + zero_point, qmin, qmax))
 *   DynamicQuantizeLinear: the u8 scale and zero point from min/max of x, then
 *     QuantizeLinear
 *   QLinearMatMul, QLinearConv: dequantize, matmul/conv in f32, quantize
 *   MatMulInteger, ConvInteger: matmul/conv of the zero-point-shifted operands
 *     in f64 (exact for 8-bit operands), cast to i32
 * per tensor (scalar scale) or per axis (1-D scale, reshaped to broadcast along
 * the axis). Blocked quantization (opset 21 block_size) is unsupported.
 *
 *   ft_status st = ox_map_quantize(c, n);  // "QuantizeLinear" -> div, round, add, clip, cast
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <stdio.h>
#include <string.h>

/* Tensor t (input k of the node, a scale or zero point) as a tensor that
 * broadcasts against a tensor of rank `rank`: a 1-D parameter of more than
 * one value is reshaped to [1, .., C, .., 1] with C on `axis`. -1 when t is
 * absent, -2 on failure (onx_status). */
static int along(onx_ctx *c, const onx_node *n, int k, int rank, int64_t axis64, const char *suffix)
{
    int t = onx_in(c, n, k), axis;
    const ft_shape *ps = ox_shape(c, n, k);
    if (t < 0 || ps->rank != 1 || ps->dims[0] == 1 || rank < 1)
        return t;
    if (ox_axis(c, n, "axis", axis64, rank, &axis))
        return -2;
    ft_shape b = {.rank = rank};
    for (int i = 0; i < rank; i++)
        b.dims[i] = i == axis ? ps->dims[0] : 1;
    int r = ox_tmp(c, n, suffix);
    if (r < 0 || !ox_reshape(c, n, t, &b, r))
        return -2;
    return r;
}

/* out = (cast(x, fdt) - cast(zp, fdt)) [* scale]; zp -1: none, scale -1: none. */
static ft_status dequant(onx_ctx *c, const onx_node *n, int x, int scale, int zp, ft_dtype fdt, int out,
                         const char *tag)
{
    char b[64];
    snprintf(b, sizeof b, "%s_float", tag);
    int xf = (zp < 0 && scale < 0) ? out : ox_tmp(c, n, b);
    OX_NEED(xf >= 0 && ox_cast(c, n, x, fdt, xf));
    int cur = xf;
    if (zp >= 0) {
        snprintf(b, sizeof b, "%s_zero_point", tag);
        int zf = ox_tmp(c, n, b);
        snprintf(b, sizeof b, "%s_centered", tag);
        int cen = scale < 0 ? out : ox_tmp(c, n, b);
        OX_NEED(zf >= 0 && cen >= 0 && ox_cast(c, n, zp, fdt, zf) && ox_emit2(c, n, FT_OP_SUB, xf, zf, cen));
        cur = cen;
    }
    if (scale >= 0)
        OX_NEED(ox_emit2(c, n, FT_OP_MUL, cur, scale, out));
    return FT_OK;
}

static ft_status qrange(onx_ctx *c, const onx_node *n, ft_dtype qdt, double *lo, double *hi)
{
    switch (qdt) {
    case FT_U8: *lo = 0, *hi = 255; return FT_OK;
    case FT_I8: *lo = -128, *hi = 127; return FT_OK;
    case FT_I16: *lo = -32768, *hi = 32767; return FT_OK;
    case FT_I32: *lo = -2147483648.0, *hi = 2147483647.0; return FT_OK;
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: case FT_I64: case FT_BOOL: case FT_DTYPE_COUNT:
        break;
    }
    return onx_unsupported(c, n, "quantized dtype %s (ftrun quantizes to u8, i8, i16 and i32)", ft_dtype_name(qdt));
}

/* out = cast(clip(round(x / scale) + cast(zp, xdt), range of qdt), qdt). */
static ft_status quant(onx_ctx *c, const onx_node *n, int x, ft_dtype xdt, int scale, int zp, ft_dtype qdt, int out)
{
    double lo = 0, hi = 0;
    OX_TRY(qrange(c, n, qdt, &lo, &hi));
    int q = ox_tmp(c, n, "scaled"), r = ox_tmp(c, n, "rounded"), cl = ox_tmp(c, n, "clipped");
    OX_NEED(q >= 0 && r >= 0 && cl >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_DIV, x, scale, q) && ox_emit1(c, n, FT_OP_ROUND, q, r));
    int shifted = r;
    if (zp >= 0) {
        int zf = ox_tmp(c, n, "zero_point_float");
        shifted = ox_tmp(c, n, "shifted");
        OX_NEED(zf >= 0 && shifted >= 0 && ox_cast(c, n, zp, xdt, zf) && ox_emit2(c, n, FT_OP_ADD, r, zf, shifted));
    }
    ft_node *f = ox_emit1(c, n, FT_OP_CLIP, shifted, cl);
    OX_NEED(f);
    OX_TRY(onx_set_f(c, f, "min", lo));
    OX_TRY(onx_set_f(c, f, "max", hi));
    OX_NEED(ox_cast(c, n, cl, qdt, out));
    return FT_OK;
}

static ft_status check_block(onx_ctx *c, const onx_node *n)
{
    if (onx_attr_i(n, "block_size", 0) != 0)
        return onx_unsupported(c, n, "attribute block_size=%lld (blocked quantization)",
                               (long long)onx_attr_i(n, "block_size", 0));
    return FT_OK;
}

ft_status ox_map_dequantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(check_block(c, n));
    int rank = ox_shape(c, n, 0)->rank;
    int64_t ax = onx_attr_i(n, "axis", 1);
    int scale = along(c, n, 1, rank, ax, "scale"), zp = along(c, n, 2, rank, ax, "zero_point");
    OX_NEED(scale >= 0 && zp >= -1);
    return dequant(c, n, onx_in(c, n, 0), scale, zp, ox_dtype(c, n, 1), ox_out(c, n, 0), "x");
}

ft_status ox_map_quantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(check_block(c, n));
    OX_TRY(ox_check_dtype(c, n, FT_OP_ROUND, 0));
    ft_dtype qdt = FT_U8;
    if (onx_in(c, n, 2) >= 0) {
        qdt = ox_dtype(c, n, 2);
    } else if (onx_has_attr(n, "output_dtype")) {
        const char *name;
        int64_t t = onx_attr_i(n, "output_dtype", 2);
        if (ox_dtype_from_onnx(t, &qdt, &name))
            return onx_unsupported(c, n, "attribute output_dtype=%lld (%s): ftrun has no such dtype", (long long)t,
                                   name);
    }
    int rank = ox_shape(c, n, 0)->rank;
    int64_t ax = onx_attr_i(n, "axis", 1);
    int scale = along(c, n, 1, rank, ax, "scale"), zp = along(c, n, 2, rank, ax, "zero_point");
    OX_NEED(scale >= 0 && zp >= -1);
    return quant(c, n, onx_in(c, n, 0), ox_dtype(c, n, 0), scale, zp, qdt, ox_out(c, n, 0));
}

/* DynamicQuantizeLinear (u8): lo = min(0, min x), hi = max(0, max x),
 * scale = (hi - lo) / 255, zero point = clip(round(-lo / scale), 0, 255). */
ft_status ox_map_dyn_quantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_ROUND, 0));
    ft_dtype dt = ox_dtype(c, n, 0);
    int x = onx_in(c, n, 0), scale = ox_out(c, n, 1), zp = ox_out(c, n, 2);
    int mn = ox_tmp(c, n, "min"), mx = ox_tmp(c, n, "max"), lo = ox_tmp(c, n, "low"), hi = ox_tmp(c, n, "high"),
        span = ox_tmp(c, n, "span"), nlo = ox_tmp(c, n, "neg_low");
    int zero = ox_scalar(c, n, "zero", dt, 0), q255 = ox_scalar(c, n, "qmax", dt, 255);
    OX_NEED(scale >= 0 && zp >= 0 && mn >= 0 && mx >= 0 && lo >= 0 && hi >= 0 && span >= 0 && nlo >= 0 &&
            zero >= 0 && q255 >= 0);
    ft_node *f = ox_emit1(c, n, FT_OP_REDUCE_MIN, x, mn);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "keepdims", 0));
    OX_NEED(f = ox_emit1(c, n, FT_OP_REDUCE_MAX, x, mx));
    OX_TRY(onx_set_i(c, f, "keepdims", 0));
    OX_NEED(ox_emit2(c, n, FT_OP_MIN, mn, zero, lo) && ox_emit2(c, n, FT_OP_MAX, mx, zero, hi));
    OX_NEED(ox_emit2(c, n, FT_OP_SUB, hi, lo, span) && ox_emit2(c, n, FT_OP_DIV, span, q255, scale));
    OX_NEED(ox_emit1(c, n, FT_OP_NEG, lo, nlo));
    OX_TRY(quant(c, n, nlo, dt, scale, -1, FT_U8, zp));
    return quant(c, n, x, dt, scale, zp, FT_U8, ox_out(c, n, 0));
}

/* MatMulInteger / ConvInteger: (a - a_zp) (*) (b - b_zp) in f64, cast to i32.
 * MatMulInteger's a_zero_point may be per row ([M]: along axis rank-2 of a),
 * b_zero_point per column ([N]: the last axis); ConvInteger's w_zero_point
 * per output channel ([M]: axis 0 of w). */
ft_status ox_map_integer_op(onx_ctx *c, const onx_node *n)
{
    int conv = strcmp(n->op_type, "ConvInteger") == 0;
    int ra = ox_shape(c, n, 0)->rank, rb = ox_shape(c, n, 1)->rank;
    int azp = along(c, n, 2, ra, conv ? 1 : ra - 2, "a_zero_point"),
        bzp = along(c, n, 3, rb, conv ? 0 : rb - 1, "b_zero_point");
    OX_NEED(azp >= -1 && bzp >= -1);
    int a = ox_tmp(c, n, "a_f64"), b = ox_tmp(c, n, "b_f64"), p = ox_tmp(c, n, "product");
    OX_NEED(a >= 0 && b >= 0 && p >= 0);
    OX_TRY(dequant(c, n, onx_in(c, n, 0), -1, azp, FT_F64, a, "a"));
    OX_TRY(dequant(c, n, onx_in(c, n, 1), -1, bzp, FT_F64, b, "b"));
    ft_node *f = ox_emit2(c, n, conv ? FT_OP_CONV : FT_OP_MATMUL, a, b, p);
    OX_NEED(f);
    if (conv)
        OX_TRY(ox_conv_attrs(c, n, f, 0));
    OX_NEED(ox_cast(c, n, p, FT_I32, ox_out(c, n, 0)));
    return FT_OK;
}

/* QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) and
 * QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias?):
 * dequantize both operands to f32, matmul / conv (the i32 bias dequantized
 * with x_scale * w_scale), quantize to y_zp's dtype. */
ft_status ox_map_qlinear(onx_ctx *c, const onx_node *n)
{
    int conv = strcmp(n->op_type, "QLinearConv") == 0;
    int ra = ox_shape(c, n, 0)->rank, rb = ox_shape(c, n, 3)->rank;
    int as = along(c, n, 1, ra, conv ? 1 : ra - 2, "a_scale"), az = along(c, n, 2, ra, conv ? 1 : ra - 2, "a_zp"),
        bs = along(c, n, 4, rb, conv ? 0 : rb - 1, "b_scale"), bz = along(c, n, 5, rb, conv ? 0 : rb - 1, "b_zp");
    OX_NEED(as >= 0 && az >= -1 && bs >= 0 && bz >= -1);
    ft_dtype fdt = ox_dtype(c, n, 1);
    int a = ox_tmp(c, n, "a_real"), b = ox_tmp(c, n, "b_real"), p = ox_tmp(c, n, "product");
    OX_NEED(a >= 0 && b >= 0 && p >= 0);
    OX_TRY(dequant(c, n, onx_in(c, n, 0), as, az, fdt, a, "a"));
    OX_TRY(dequant(c, n, onx_in(c, n, 3), bs, bz, fdt, b, "b"));
    int in[3] = {a, b, -1}, nin = 2;
    if (conv && n->n_in > 8 && onx_in(c, n, 8) >= 0) {
        int bias_f = ox_tmp(c, n, "bias_float"), bscale = ox_tmp(c, n, "bias_scale"), bias = ox_tmp(c, n, "bias");
        OX_NEED(bias_f >= 0 && bscale >= 0 && bias >= 0 && ox_cast(c, n, onx_in(c, n, 8), fdt, bias_f));
        OX_NEED(ox_emit2(c, n, FT_OP_MUL, onx_in(c, n, 1), onx_in(c, n, 4), bscale));
        OX_NEED(ox_emit2(c, n, FT_OP_MUL, bias_f, bscale, bias));
        in[2] = bias;
        nin = 3;
    }
    ft_node *f = onx_emit(c, n, conv ? FT_OP_CONV : FT_OP_MATMUL, in, nin, &p, 1);
    OX_NEED(f);
    if (conv)
        OX_TRY(ox_conv_attrs(c, n, f, 0));
    int ys = onx_in(c, n, 6), yz = onx_in(c, n, 7);
    return quant(c, n, p, fdt, ys, yz, yz >= 0 ? ox_dtype(c, n, 7) : FT_U8, ox_out(c, n, 0));
}
