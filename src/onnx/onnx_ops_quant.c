/* ONNX quantization -> ftrun's int8 ops (src/graph/infer_quant.c):
 *   QuantizeLinear -> quantize_linear, DequantizeLinear -> dequantize_linear,
 *   DynamicQuantizeLinear -> dynamic_quantize_linear, MatMulInteger ->
 *   matmul_integer, QLinearMatMul -> qlinear_matmul: one node each.
 *   ConvInteger -> conv_integer, QLinearConv -> qlinear_conv.
 * Blocked quantization (opset 21 block_size: one scale, and zero point, per
 * block_size elements along axis) is expanded: the scale and zero point are
 * repeated to x's shape (reshape, expand, reshape, slice), then
 *   QuantizeLinear:   quantize_linear(round(x / scale) + zero_point, 1)
 *                     (its rint is exact on those integers, and it saturates
 *                     to the output dtype)
 *   DequantizeLinear: (x - zero_point) * scale, in f32 (f64 for an f64
 *                     output), rounded to the output dtype.
 *
 *   ft_status st = ox_map_quantize(c, n);  // "QuantizeLinear" -> one quantize_linear node
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <stdio.h>
#include <string.h>

/* The checks of a (De)QuantizeLinear node (op): its input dtype; then
 * block_size into *bs (0: not blocked), its axis into *axis; the scale and
 * zero point of a blocked one must have x's shape but ceil(size /
 * block_size) on the axis. */
static ft_status quant_check(onx_ctx *c, const onx_node *n, ft_op op, int *axis, int64_t *bs)
{
    OX_TRY(ox_check_dtype(c, n, op, 0));
    *bs = onx_attr_i(n, "block_size", 0);
    if (*bs == 0)
        return FT_OK;
    const ft_shape *xs = ox_shape(c, n, 0), *ss = ox_shape(c, n, 1);
    OX_TRY(ox_axis(c, n, "axis", onx_attr_i(n, "axis", 1), xs->rank, axis));
    int ok = *bs > 0 && ss->rank == xs->rank && xs->rank < FT_MAX_RANK;
    for (int d = 0; ok && d < xs->rank; d++)
        ok = ss->dims[d] == (d == *axis ? (xs->dims[d] + *bs - 1) / *bs : xs->dims[d]);
    if (ok && onx_in(c, n, 2) >= 0)
        ok = ft_shape_eq(ox_shape(c, n, 2), ss);
    if (!ok) {
        char xb[FT_SHAPE_STR], sb[FT_SHAPE_STR], zb[FT_SHAPE_STR];
        return onx_error(c, n, FT_EGRAPH, "block_size %lld on axis %d: the scale %s (and zero point %s) must be x's "
                         "shape %s with ceil(size / block_size) on the axis (block_size > 0, rank below %d)",
                         (long long)*bs, *axis, ft_shape_str(ss, sb),
                         onx_in(c, n, 2) >= 0 ? ft_shape_str(ox_shape(c, n, 2), zb) : "(none)", ft_shape_str(xs, xb),
                         FT_MAX_RANK);
    }
    return FT_OK;
}

/* Input k (scale or zero point, checked by quant_check) repeated bs times
 * along axis a and cut to x's size: a tensor of x's shape, or -1. */
static int block_full(onx_ctx *c, const onx_node *n, int k, int a, int64_t bs)
{
    const ft_shape *xs = ox_shape(c, n, 0), *ts = ox_shape(c, n, k);
    ft_shape u = {.rank = ts->rank + 1}, full = *ts;
    int64_t wide[FT_MAX_RANK];
    for (int d = 0; d < ts->rank; d++)
        u.dims[d + (d > a)] = ts->dims[d];
    u.dims[a + 1] = 1;
    for (int d = 0; d < u.rank; d++)
        wide[d] = d == a + 1 ? bs : u.dims[d];
    full.dims[a] = ts->dims[a] * bs;
    int r = ox_tmp(c, n, "block"), e = ox_tmp(c, n, "blocks"), f = ox_tmp(c, n, "repeated");
    if (r < 0 || e < 0 || f < 0 || !ox_reshape(c, n, onx_in(c, n, k), &u, r))
        return -1;
    ft_node *ex = ox_emit1(c, n, FT_OP_EXPAND, r, e);
    if (!ex || onx_set_ints(c, ex, "shape", wide, u.rank) || !ox_reshape(c, n, e, &full, f))
        return -1;
    if (full.dims[a] == xs->dims[a])
        return f;
    int64_t start = 0, end = xs->dims[a], ax = a;
    int sl = ox_tmp(c, n, "cut");
    ft_node *s = sl >= 0 ? ox_emit1(c, n, FT_OP_SLICE, f, sl) : NULL;
    if (!s || onx_set_ints(c, s, "starts", &start, 1) || onx_set_ints(c, s, "ends", &end, 1) ||
        onx_set_ints(c, s, "axes", &ax, 1))
        return -1;
    return sl;
}

/* Result of a two-input op into out (or a fresh intermediate when out < 0), or -1. */
static int bin(onx_ctx *c, const onx_node *n, ft_op op, int a, int b, int out)
{
    int r = out >= 0 ? out : ox_tmp(c, n, ft_op_name(op));
    return r >= 0 && ox_emit2(c, n, op, a, b, r) ? r : -1;
}

/* Zero point input 2, repeated to x's shape, cast to dt; or -1. */
static int block_zero_point(onx_ctx *c, const onx_node *n, int a, int64_t bs, ft_dtype dt)
{
    int z = block_full(c, n, 2, a, bs), zf = ox_tmp(c, n, "zero_point");
    return z >= 0 && zf >= 0 && ox_cast(c, n, z, dt, zf) ? zf : -1;
}

/* QuantizeLinear with block_size, quantizing to qdt. */
static ft_status blocked_quantize(onx_ctx *c, const onx_node *n, int a, int64_t bs, ft_dtype qdt)
{
    ft_dtype xd = ox_dtype(c, n, 0);
    int s = block_full(c, n, 1, a, bs), t = s >= 0 ? bin(c, n, FT_OP_DIV, onx_in(c, n, 0), s, -1) : -1;
    OX_NEED(t >= 0);
    if (onx_in(c, n, 2) >= 0) {
        int r = ox_tmp(c, n, "rounded"), z = block_zero_point(c, n, a, bs, xd);
        OX_NEED(r >= 0 && z >= 0 && ox_emit1(c, n, FT_OP_ROUND, t, r) && (t = bin(c, n, FT_OP_ADD, r, z, -1)) >= 0);
    }
    int one = ox_scalar(c, n, "one", xd, 1.0), out = ox_out(c, n, 0), in[2] = {t, one};
    OX_NEED(one >= 0 && out >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_QUANTIZE_LINEAR, in, 2, &out, 1);
    OX_NEED(f);
    if (onx_has_attr(n, "saturate"))
        OX_TRY(onx_set_i(c, f, "saturate", onx_attr_i(n, "saturate", 1) != 0));
    return onx_set_s(c, f, "output_dtype", ft_dtype_name(qdt));
}

/* DequantizeLinear with block_size, into dtype od; in f32 (f64 for an f64
 * output) as dequantize_linear computes. */
static ft_status blocked_dequantize(onx_ctx *c, const onx_node *n, int a, int64_t bs, ft_dtype od)
{
    ft_dtype w = od == FT_F64 ? FT_F64 : FT_F32;
    int x = ox_tmp(c, n, "as_float");
    OX_NEED(x >= 0 && ox_cast(c, n, onx_in(c, n, 0), w, x));
    if (onx_in(c, n, 2) >= 0) {
        int z = block_zero_point(c, n, a, bs, w);
        OX_NEED(z >= 0 && (x = bin(c, n, FT_OP_SUB, x, z, -1)) >= 0);
    }
    int s = block_full(c, n, 1, a, bs), out = ox_out(c, n, 0);
    OX_NEED(s >= 0 && out >= 0);
    if (ox_dtype(c, n, 1) != w) {
        int sw = ox_tmp(c, n, "scale");
        OX_NEED(sw >= 0 && ox_cast(c, n, s, w, sw));
        s = sw;
    }
    if (od == w)
        return bin(c, n, FT_OP_MUL, x, s, out) >= 0 ? FT_OK : onx_status(c);
    int y = bin(c, n, FT_OP_MUL, x, s, -1);
    OX_NEED(y >= 0 && ox_cast(c, n, y, od, out));
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
    int axis;
    int64_t bs;
    OX_TRY(quant_check(c, n, FT_OP_DEQUANTIZE_LINEAR, &axis, &bs));
    ft_dtype od = ox_dtype(c, n, 1);
    int64_t t = onx_attr_i(n, "output_dtype", 0); /* opset 21: the output's dtype, else the scale's */
    const char *name;
    if (t != 0 && ox_dtype_from_onnx(t, &od, &name))
        return onx_unsupported(c, n, "attribute output_dtype=%lld (%s): ftrun has no such dtype", (long long)t, name);
    if (bs)
        return blocked_dequantize(c, n, axis, bs, od);
    ft_node *f = emit_q(c, n, FT_OP_DEQUANTIZE_LINEAR);
    OX_NEED(f);
    if (t != 0)
        OX_TRY(onx_set_s(c, f, "output_dtype", ft_dtype_name(od)));
    return FT_OK;
}

ft_status ox_map_quantize(onx_ctx *c, const onx_node *n)
{
    int axis;
    int64_t bs;
    OX_TRY(quant_check(c, n, FT_OP_QUANTIZE_LINEAR, &axis, &bs));
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
    if (qdt != FT_U8 && qdt != FT_I8 && qdt != FT_I16 && qdt != FT_U16 && !(ft_dtype_is_lowp(qdt) && qdt != FT_F8E8M0))
        return onx_unsupported(c, n, "quantized dtype %s (ftrun quantizes to u8, i8, i16, u16, the float8 types, "
                               "float4e2m1 and the 4- and 2-bit integers)", ft_dtype_name(qdt));
    if (bs)
        return blocked_quantize(c, n, axis, bs, qdt);
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
