/* ONNX quantization -> ftrun's int8 ops (src/graph/infer_quant.c):
 *   QuantizeLinear -> quantize_linear, DequantizeLinear -> dequantize_linear,
 *   DynamicQuantizeLinear -> dynamic_quantize_linear, MatMulInteger ->
 *   matmul_integer, QLinearMatMul -> qlinear_matmul: one node each.
 *   ConvInteger: conv of the zero-point-shifted operands in f64 (exact for
 *     8-bit operands), cast to i32.
 *   QLinearConv: dequantize_linear of x and w, conv in the scales' dtype
 *     (the i32 bias dequantized with x_scale * w_scale), quantize_linear.
 * Blocked quantization (opset 21 block_size) is unsupported.
 *
 *   ft_status st = ox_map_quantize(c, n);  // "QuantizeLinear" -> one quantize_linear node
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

static ft_status check_block(onx_ctx *c, const onx_node *n)
{
    if (onx_attr_i(n, "block_size", 0) != 0)
        return onx_unsupported(c, n, "attribute block_size=%lld (blocked quantization)",
                               (long long)onx_attr_i(n, "block_size", 0));
    return FT_OK;
}

/* x, scale, zero point? with the node's axis, as one ftrun node of op. */
static ft_node *emit_q(onx_ctx *c, const onx_node *n, ft_op op)
{
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)};
    int out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, op, in, in[2] >= 0 ? 3 : 2, &out, 1);
    if (f && onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 1)))
        return NULL;
    return f;
}

ft_status ox_map_dequantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(check_block(c, n));
    OX_TRY(ox_check_dtype(c, n, FT_OP_DEQUANTIZE_LINEAR, 0));
    OX_NEED(emit_q(c, n, FT_OP_DEQUANTIZE_LINEAR));
    return FT_OK;
}

ft_status ox_map_quantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(check_block(c, n));
    OX_TRY(ox_check_dtype(c, n, FT_OP_QUANTIZE_LINEAR, 0));
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
    if (qdt != FT_U8 && qdt != FT_I8 && qdt != FT_I16)
        return onx_unsupported(c, n, "quantized dtype %s (ftrun quantizes to u8, i8 and i16)", ft_dtype_name(qdt));
    ft_node *f = emit_q(c, n, FT_OP_QUANTIZE_LINEAR);
    OX_NEED(f);
    if (onx_in(c, n, 2) < 0)
        OX_TRY(onx_set_s(c, f, "output_dtype", ft_dtype_name(qdt)));
    return FT_OK;
}

ft_status ox_map_dyn_quantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_DYNAMIC_QUANTIZE_LINEAR, 0));
    int x = onx_in(c, n, 0), out[3] = {ox_out(c, n, 0), ox_out(c, n, 1), ox_out(c, n, 2)};
    OX_NEED(out[0] >= 0 && out[1] >= 0 && out[2] >= 0);
    OX_NEED(onx_emit(c, n, FT_OP_DYNAMIC_QUANTIZE_LINEAR, &x, 1, out, 3));
    return FT_OK;
}

ft_status ox_map_matmul_integer(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_MATMUL_INTEGER, 0));
    int in[4] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2), onx_in(c, n, 3)}, nin = 4;
    while (nin > 2 && in[nin - 1] < 0)
        nin--;
    int out = ox_out(c, n, 0);
    OX_NEED(onx_emit(c, n, FT_OP_MATMUL_INTEGER, in, nin, &out, 1));
    return FT_OK;
}

ft_status ox_map_qlinear_matmul(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_QLINEAR_MATMUL, 0));
    int out = ox_out(c, n, 0);
    OX_NEED(onx_emit(c, n, FT_OP_QLINEAR_MATMUL, NULL, -1, &out, 1));
    return FT_OK;
}

/* ConvInteger: (x - x_zp) conv (w - w_zp) in f64 (exact for 8-bit operands),
 * cast to i32; w_zero_point may be per output channel ([M]: axis 0 of w). */
ft_status ox_map_conv_integer(onx_ctx *c, const onx_node *n)
{
    int ra = ox_shape(c, n, 0)->rank, rb = ox_shape(c, n, 1)->rank;
    int azp = along(c, n, 2, ra, 1, "x_zero_point"), bzp = along(c, n, 3, rb, 0, "w_zero_point");
    OX_NEED(azp >= -1 && bzp >= -1);
    int a = ox_tmp(c, n, "x_f64"), b = ox_tmp(c, n, "w_f64"), p = ox_tmp(c, n, "product");
    OX_NEED(a >= 0 && b >= 0 && p >= 0);
    OX_TRY(dequant(c, n, onx_in(c, n, 0), -1, azp, FT_F64, a, "x"));
    OX_TRY(dequant(c, n, onx_in(c, n, 1), -1, bzp, FT_F64, b, "w"));
    ft_node *f = ox_emit2(c, n, FT_OP_CONV, a, b, p);
    OX_NEED(f);
    OX_TRY(ox_conv_attrs(c, n, f, 0));
    OX_NEED(ox_cast(c, n, p, FT_I32, ox_out(c, n, 0)));
    return FT_OK;
}

/* One dequantize_linear / quantize_linear node: in[0..2] (zp < 0: none), axis. */
static ft_node *qnode(onx_ctx *c, const onx_node *n, ft_op op, int x, int scale, int zp, int axis, int out)
{
    int in[3] = {x, scale, zp};
    ft_node *f = onx_emit(c, n, op, in, zp >= 0 ? 3 : 2, &out, 1);
    if (f && onx_set_i(c, f, "axis", axis))
        return NULL;
    return f;
}

/* QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias?):
 * dequantize_linear of x and of w (w_scale per output channel: axis 0),
 * conv in the scales' dtype (the i32 bias dequantized with x_scale * w_scale),
 * quantize_linear to y_zp's dtype. */
ft_status ox_map_qlinear_conv(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_DEQUANTIZE_LINEAR, 0));
    int a = ox_tmp(c, n, "x_real"), b = ox_tmp(c, n, "w_real"), p = ox_tmp(c, n, "product");
    OX_NEED(a >= 0 && b >= 0 && p >= 0);
    OX_NEED(qnode(c, n, FT_OP_DEQUANTIZE_LINEAR, onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2), 1, a));
    OX_NEED(qnode(c, n, FT_OP_DEQUANTIZE_LINEAR, onx_in(c, n, 3), onx_in(c, n, 4), onx_in(c, n, 5), 0, b));
    int in[3] = {a, b, -1}, nin = 2;
    if (n->n_in > 8 && onx_in(c, n, 8) >= 0) {
        int bscale = ox_tmp(c, n, "bias_scale"), bias = ox_tmp(c, n, "bias");
        OX_NEED(bscale >= 0 && bias >= 0);
        OX_NEED(ox_emit2(c, n, FT_OP_MUL, onx_in(c, n, 1), onx_in(c, n, 4), bscale));
        OX_NEED(qnode(c, n, FT_OP_DEQUANTIZE_LINEAR, onx_in(c, n, 8), bscale, -1, 0, bias));
        in[2] = bias;
        nin = 3;
    }
    ft_node *f = onx_emit(c, n, FT_OP_CONV, in, nin, &p, 1);
    OX_NEED(f);
    OX_TRY(ox_conv_attrs(c, n, f, 0));
    OX_NEED(qnode(c, n, FT_OP_QUANTIZE_LINEAR, p, onx_in(c, n, 6), onx_in(c, n, 7), 1, ox_out(c, n, 0)));
    return FT_OK;
}
