/* ONNX quantization -> ftrun's int8 ops (src/graph/infer_quant.c):
 *   QuantizeLinear -> quantize_linear, DequantizeLinear -> dequantize_linear,
 *   DynamicQuantizeLinear -> dynamic_quantize_linear, MatMulInteger ->
 *   matmul_integer, QLinearMatMul -> qlinear_matmul: one node each.
 *   ConvInteger -> conv_integer, QLinearConv -> qlinear_conv.
 * Blocked quantization (opset 21 block_size) is unsupported.
 *
 *   ft_status st = ox_map_quantize(c, n);  // "QuantizeLinear" -> one quantize_linear node
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <stdio.h>
#include <string.h>

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
    ft_node *f = emit_q(c, n, FT_OP_DEQUANTIZE_LINEAR);
    OX_NEED(f);
    if (onx_attr_i(n, "output_dtype", 0) != 0) { /* opset 21: the output's dtype, else the scale's */
        ft_dtype od;
        const char *name;
        int64_t t = onx_attr_i(n, "output_dtype", 0);
        if (ox_dtype_from_onnx(t, &od, &name))
            return onx_unsupported(c, n, "attribute output_dtype=%lld (%s): ftrun has no such dtype", (long long)t, name);
        OX_TRY(onx_set_s(c, f, "output_dtype", ft_dtype_name(od)));
    }
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
    if (qdt != FT_U8 && qdt != FT_I8 && qdt != FT_I16 && !(ft_dtype_is_lowp(qdt) && qdt != FT_F8E8M0))
        return onx_unsupported(c, n, "quantized dtype %s (ftrun quantizes to u8, i8, i16, the float8 types, "
                               "float4e2m1 and the 4- and 2-bit integers)", ft_dtype_name(qdt));
    ft_node *f = emit_q(c, n, FT_OP_QUANTIZE_LINEAR);
    OX_NEED(f);
    if (onx_has_attr(n, "saturate")) /* opset 19: the float8 outputs */
        OX_TRY(onx_set_i(c, f, "saturate", onx_attr_i(n, "saturate", 1) != 0));
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

/* ConvInteger -> conv_integer, QLinearConv -> qlinear_conv: one node each,
 * inputs as in ONNX, conv's attributes. */
ft_status ox_map_int_conv(onx_ctx *c, const onx_node *n)
{
    ft_op op = strcmp(n->op_type, "ConvInteger") == 0 ? FT_OP_CONV_INTEGER : FT_OP_QLINEAR_CONV;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    int out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, op, NULL, -1, &out, 1);
    OX_NEED(f);
    return ox_conv_attrs(c, n, f, 0);
}
