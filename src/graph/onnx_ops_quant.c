/* ONNX linear quantization -> ftrun elementwise expansions:
 *   DequantizeLinear: y = (cast(x) - cast(zero_point)) * scale
 *   QuantizeLinear:   y = cast(clip(round(x / scale) + zero_point, qmin, qmax))
 * per tensor (scalar scale) or per axis (1-D scale, reshaped to broadcast
 * along `axis`). Blocked quantization (opset 21 block_size) is unsupported.
 *
 *   ft_status st = ox_map_quantize(c, n);  // "QuantizeLinear" -> div, round, add, clip, cast
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <string.h>

/* Input k (scale or zero point) as a tensor broadcasting against x: a 1-D
 * per-axis parameter is reshaped to [1, .., C, .., 1]. */
static int per_axis(onx_ctx *c, const onx_node *n, int k, const char *suffix)
{
    int t = onx_in(c, n, k);
    const ft_shape *ps = ox_shape(c, n, k), *xs = ox_shape(c, n, 0);
    if (t < 0 || ps->rank != 1 || xs->rank < 1)
        return t;
    int ax;
    if (ox_axis(c, n, "axis", onx_attr_i(n, "axis", 1), xs->rank, &ax))
        return -2;
    ft_shape b = {.rank = xs->rank};
    for (int i = 0; i < xs->rank; i++)
        b.dims[i] = i == ax ? ps->dims[0] : 1;
    int r = ox_tmp(c, n, suffix);
    if (r < 0 || !ox_reshape(c, n, t, &b, r))
        return -2;
    return r;
}

static ft_node *emit_cast(onx_ctx *c, const onx_node *n, int in, ft_dtype to, int out)
{
    ft_node *f = ox_emit1(c, n, FT_OP_CAST, in, out);
    if (f && onx_set_s(c, f, "to", ft_dtype_name(to)))
        return NULL;
    return f;
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
    ft_dtype fdt = ox_dtype(c, n, 1);
    int scale = per_axis(c, n, 1, "scale"), zp = per_axis(c, n, 2, "zero_point");
    OX_NEED(scale >= 0 && zp >= -1);
    int xf = ox_tmp(c, n, "x_float"), out = ox_out(c, n, 0);
    OX_NEED(xf >= 0 && emit_cast(c, n, onx_in(c, n, 0), fdt, xf));
    int centered = xf;
    if (zp >= 0) {
        int zf = ox_tmp(c, n, "zero_point_float");
        centered = ox_tmp(c, n, "centered");
        OX_NEED(zf >= 0 && centered >= 0 && emit_cast(c, n, zp, fdt, zf));
        OX_NEED(ox_emit2(c, n, FT_OP_SUB, xf, zf, centered));
    }
    OX_NEED(ox_emit2(c, n, FT_OP_MUL, centered, scale, out));
    return FT_OK;
}

ft_status ox_map_quantize(onx_ctx *c, const onx_node *n)
{
    OX_TRY(check_block(c, n));
    OX_TRY(ox_check_dtype(c, n, FT_OP_ROUND, 0));
    ft_dtype xdt = ox_dtype(c, n, 0), qdt = FT_U8;
    if (onx_in(c, n, 2) >= 0) {
        qdt = ox_dtype(c, n, 2);
    } else if (onx_has_attr(n, "output_dtype")) {
        const char *name;
        int64_t t = onx_attr_i(n, "output_dtype", 2);
        if (ox_dtype_from_onnx(t, &qdt, &name))
            return onx_unsupported(c, n, "attribute output_dtype=%lld (%s): ftrun has no such dtype", (long long)t,
                                   name);
    }
    double lo = 0, hi = 0;
    switch (qdt) {
    case FT_U8: lo = 0, hi = 255; break;
    case FT_I8: lo = -128, hi = 127; break;
    case FT_I16: lo = -32768, hi = 32767; break;
    case FT_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: case FT_I64: case FT_BOOL: case FT_DTYPE_COUNT:
        return onx_unsupported(c, n, "quantized dtype %s (ftrun quantizes to u8, i8, i16 and i32)",
                               ft_dtype_name(qdt));
    }
    int scale = per_axis(c, n, 1, "scale"), zp = per_axis(c, n, 2, "zero_point");
    OX_NEED(scale >= 0 && zp >= -1);
    int q = ox_tmp(c, n, "scaled"), r = ox_tmp(c, n, "rounded"), cl = ox_tmp(c, n, "clipped");
    OX_NEED(q >= 0 && r >= 0 && cl >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_DIV, onx_in(c, n, 0), scale, q) && ox_emit1(c, n, FT_OP_ROUND, q, r));
    int shifted = r;
    if (zp >= 0) {
        int zf = ox_tmp(c, n, "zero_point_float");
        shifted = ox_tmp(c, n, "shifted");
        OX_NEED(zf >= 0 && shifted >= 0 && emit_cast(c, n, zp, xdt, zf) && ox_emit2(c, n, FT_OP_ADD, r, zf, shifted));
    }
    ft_node *f = ox_emit1(c, n, FT_OP_CLIP, shifted, cl);
    OX_NEED(f);
    OX_TRY(onx_set_f(c, f, "min", lo));
    OX_TRY(onx_set_f(c, f, "max", hi));
    OX_NEED(emit_cast(c, n, cl, qdt, ox_out(c, n, 0)));
    return FT_OK;
}
