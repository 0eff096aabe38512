/* Inference and typed parameters (params.h, ft_quant_params) of the int8
 * inference ops, with ONNX's semantics (man/ftrun-graph.5, QUANTIZATION):
 *   quantize_linear(x, scale, zero_point?)      y = saturate(rint(x / scale) + zero_point)
 *   dequantize_linear(x, scale, zero_point?)    y = (x - zero_point) * scale
 *   dynamic_quantize_linear(x)                  y (u8), scale, zero_point from min/max of x
 *   matmul_integer(a, b, a_zp?, b_zp?)          i32 = (a - a_zp) @ (b - b_zp)
 *   qlinear_matmul(a, as, azp, b, bs, bzp, ys, yzp)
 *                                               y = saturate(rint(acc * (as * bs / ys)) + yzp)
 * A scale (and its zero point) is per tensor (a scalar or one value) or per
 * axis (1-D, as long as x's `axis`); matmul's are per row of a ([M]) and per
 * column of b ([N]). The kernels (cpu/quant.c, cuda/quant.cu) read the
 * shapes and node->params.quant only.
 *
 *   ft_graph_validate(g, &err);   // runs ft_infer_quantize_linear, fills n->params.quant
 *
 * Nothing is allocated. */
#include "infer_common.h"
#include "infer_math.h"

#include <stdio.h>

#define Q8 (FT_M(U8) | FT_M(I8))
#define QOUT (FT_M(U8) | FT_M(I8) | FT_M(I16) | FT_M(U16) | (FT_DT_LOWP & ~FT_M(F8E8M0)))

/* A scale (input is) and its optional zero point (input iz) for a tensor of
 * shape xs: per tensor (one value, rank <= 1) or a 1-D vector of length
 * want along `what` (want < 0: per-tensor only). *vec gets 1 for a vector. */
static ft_status scale_shape(ft_infer_ctx *c, int is, int iz, int64_t want, const char *what, int *vec)
{
    char b1[FT_SHAPE_STR], b2[FT_SHAPE_STR];
    const ft_shape *s = &c->in[is]->shape;
    *vec = 0;
    if (!(s->rank <= 1 && ft_numel(s) == 1)) {
        if (s->rank != 1 || want < 0 || s->dims[0] != want) {
            if (want < 0)
                return ft_infer_fail(c, "'%s' %s must be a scalar (one value)", ft_infer_in_name(c, is),
                                     ft_shape_str(s, b1));
            return ft_infer_fail(c, "'%s' %s must be a scalar or 1-D of length %lld (%s)", ft_infer_in_name(c, is),
                                 ft_shape_str(s, b1), (long long)want, what);
        }
        *vec = 1;
    }
    if (iz >= 0 && iz < c->n_in && c->in[iz]) {
        const ft_shape *z = &c->in[iz]->shape;
        if (z->rank > 1 || ft_numel(z) != ft_numel(s))
            return ft_infer_fail(c, "zero point '%s' %s must have the shape of scale '%s' %s", ft_infer_in_name(c, iz),
                                 ft_shape_str(z, b1), ft_infer_in_name(c, is), ft_shape_str(s, b2));
    }
    return FT_OK;
}

static ft_status need_float(ft_infer_ctx *c, int i)
{
    if (ft_dtype_in(c->in[i]->dtype, FT_DT_FLOAT))
        return FT_OK;
    return ft_infer_fail(c, "scale '%s' has dtype %s (expected f16, bf16, f32 or f64)", ft_infer_in_name(c, i),
                         ft_dtype_name(c->in[i]->dtype));
}

/* axis attribute of quantize/dequantize, resolved when the scale is 1-D. */
static ft_status q_axis(ft_infer_ctx *c, int *vec)
{
    const ft_shape *x = &c->in[0]->shape;
    int64_t ax = ft_attr(c->node, "axis")->i;
    int64_t want = -1;
    char what[64] = "per-axis scale";
    c->params->quant.axis = -1;
    if (x->rank > 0 && ax >= -x->rank && ax < x->rank) {
        if (ax < 0)
            ax += x->rank;
        want = x->dims[ax];
        snprintf(what, sizeof what, "dim %lld of x", (long long)ax);
    }
    ft_status st = scale_shape(c, 1, 2, want, what, vec);
    if (st)
        return st;
    if (*vec)
        c->params->quant.axis = (int)ax;
    return FT_OK;
}

ft_status ft_infer_quantize_linear(ft_infer_ctx *c)
{
    ft_status st = ft_infer_same_dtype(c, 1, 0, "scale");
    int vec;
    if (st || (st = q_axis(c, &vec)))
        return st;
    const ft_attr_val *od = ft_attr(c->node, "output_dtype");
    ft_dtype q = FT_U8;
    if (od->present && ft_dtype_parse(od->s, &q) != 0)
        return ft_infer_fail(c, "attribute 'output_dtype': unknown dtype '%s' (expected u8, i8, i16 or a low-precision "
                             "dtype but f8e8m0)", od->s);
    if (c->n_in > 2 && c->in[2]) {
        ft_dtype z = c->in[2]->dtype;
        if (od->present && z != q)
            return ft_infer_fail(c, "zero point '%s' has dtype %s but attribute 'output_dtype' is %s",
                                 ft_infer_in_name(c, 2), ft_dtype_name(z), ft_dtype_name(q));
        q = z;
    }
    if (!ft_dtype_in(q, QOUT))
    {
        char list[200];
        return ft_infer_fail(c, "cannot quantize to %s (%s)", ft_dtype_name(q), ft_dtype_mask_str(QOUT, list, sizeof list));
    }
    c->params->quant.qdt = (int)q;
    return ft_infer_set_out(c, 0, q, &c->in[0]->shape);
}

ft_status ft_infer_dequantize_linear(ft_infer_ctx *c)
{
    /* output_dtype (ONNX's, opset 21): the output's dtype, else the scale's;
     * an f8e8m0 scale (a power of two) needs it */
    const ft_attr_val *od = ft_attr(c->node, "output_dtype");
    ft_dtype out = c->in[1]->dtype;
    if (od->present && (ft_dtype_parse(od->s, &out) != 0 || !ft_dtype_in(out, FT_DT_FLOAT)))
        return ft_infer_fail(c, "attribute 'output_dtype' is '%s' (expected f16, bf16, f32 or f64)", od->s);
    ft_status st = c->in[1]->dtype == FT_F8E8M0 && od->present ? FT_OK : need_float(c, 1);
    int vec;
    if (st || (st = q_axis(c, &vec)))
        return st;
    if (c->n_in > 2 && c->in[2] && (st = ft_infer_same_dtype(c, 2, 0, "zero point")))
        return st;
    return ft_infer_set_out(c, 0, out, &c->in[0]->shape);
}

ft_status ft_infer_dynamic_quantize_linear(ft_infer_ctx *c)
{
    ft_shape one = {.rank = 0};
    ft_status st = ft_infer_set_out(c, 0, FT_U8, &c->in[0]->shape);
    if (!st)
        st = ft_infer_set_out(c, 1, c->in[0]->dtype, &one);
    if (!st)
        st = ft_infer_set_out(c, 2, FT_U8, &one);
    return st;
}

/* The matrix sizes M, N of a [.., M, K] @ b [.., K, N] (a 1-D operand has no M or N). */
static void mn_of(const ft_shape *a, const ft_shape *b, int64_t *M, int64_t *N)
{
    *M = a->rank >= 2 ? a->dims[a->rank - 2] : -1;
    *N = b->rank >= 2 ? b->dims[b->rank - 1] : -1;
}

ft_status ft_infer_matmul_integer(ft_infer_ctx *c)
{
    ft_shape o;
    ft_status st = FT_OK;
    if (!ft_dtype_in(c->in[1]->dtype, Q8))
        return ft_infer_fail(c, "b '%s' has dtype %s (expected u8 or i8)", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype));
    if ((st = ft_infer_matmul_shape(c, 0, 1, &o)))
        return st;
    int64_t M, N;
    mn_of(&c->in[0]->shape, &c->in[1]->shape, &M, &N);
    if (c->n_in > 2 && c->in[2]) {
        if ((st = ft_infer_same_dtype(c, 2, 0, "a_zero_point")) ||
            (st = scale_shape(c, 2, -1, M, "the rows of a", &c->params->quant.row_a)))
            return st;
    }
    if (c->n_in > 3 && c->in[3]) {
        if ((st = ft_infer_same_dtype(c, 3, 1, "b_zero_point")) ||
            (st = scale_shape(c, 3, -1, N, "the columns of b", &c->params->quant.col_b)))
            return st;
    }
    return ft_infer_set_out(c, 0, FT_I32, &o);
}

/* The inputs of qlinear_matmul and qlinear_conv: (a, a_scale, a_zero_point,
 * b, b_scale, b_zero_point, y_scale, y_zero_point), a and b named as the op
 * names them; every one but the zero points of a and b is required. */
static ft_status qlinear_inputs(ft_infer_ctx *c, const char *a, const char *b)
{
    static const int req[] = {0, 1, 3, 4, 6, 7};
    char w1[32], w2[32];
    ft_status st;
    for (int i = 0; i < 6; i++)
        if (!c->in[req[i]])
            return ft_infer_fail(c, "inputs %s, %s_scale, %s, %s_scale, y_scale and y_zero_point are required "
                                 "(input %d is omitted)", a, a, b, b, req[i]);
    if (!ft_dtype_in(c->in[3]->dtype, Q8))
        return ft_infer_fail(c, "%s '%s' has dtype %s (expected u8 or i8)", b, ft_infer_in_name(c, 3),
                             ft_dtype_name(c->in[3]->dtype));
    if (!ft_dtype_in(c->in[7]->dtype, Q8))
        return ft_infer_fail(c, "y_zero_point '%s' has dtype %s (expected u8 or i8)", ft_infer_in_name(c, 7),
                             ft_dtype_name(c->in[7]->dtype));
    snprintf(w1, sizeof w1, "%s_scale", b);
    if ((st = need_float(c, 1)) || (st = ft_infer_same_dtype(c, 4, 1, w1)) ||
        (st = ft_infer_same_dtype(c, 6, 1, "y_scale")))
        return st;
    snprintf(w1, sizeof w1, "%s_zero_point", a);
    snprintf(w2, sizeof w2, "%s_zero_point", b);
    if ((c->in[2] && (st = ft_infer_same_dtype(c, 2, 0, w1))) || (c->in[5] && (st = ft_infer_same_dtype(c, 5, 3, w2))))
        return st;
    return FT_OK;
}

ft_status ft_infer_qlinear_matmul(ft_infer_ctx *c)
{
    ft_shape o;
    ft_status st = FT_OK;
    if ((st = qlinear_inputs(c, "a", "b")))
        return st;
    if ((st = ft_infer_matmul_shape(c, 0, 3, &o)))
        return st;
    int64_t M, N;
    mn_of(&c->in[0]->shape, &c->in[3]->shape, &M, &N);
    int yvec;
    if ((st = scale_shape(c, 1, 2, M, "the rows of a", &c->params->quant.row_a)) ||
        (st = scale_shape(c, 4, 5, N, "the columns of b", &c->params->quant.col_b)) ||
        (st = scale_shape(c, 6, 7, -1, "", &yvec)))
        return st;
    c->params->quant.qdt = (int)c->in[7]->dtype;
    return ft_infer_set_out(c, 0, c->in[7]->dtype, &o);
}

uint64_t ft_flops_qlinear_matmul(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n;
    const ft_shape *a = &in[0]->shape;
    uint64_t k = a->rank ? (uint64_t)a->dims[a->rank - 1] : 1;
    return 2 * ft_numel(&out[0].shape) * k + 4 * ft_numel(&out[0].shape);
}

/* conv's checks and output shape (ft_infer_conv, which fills c->params->conv)
 * for the operands x (input 0), w (input iw) and bias (input ib, -1: none),
 * whatever their integer dtypes; the messages name the node's own inputs. */
static ft_status conv_shape(ft_infer_ctx *c, int iw, int ib)
{
    int has_b = ib >= 0 && ib < c->n_in && c->in[ib];
    int ins[3] = {c->node->in[0], c->node->in[iw], has_b ? c->node->in[ib] : -1};
    ft_node tmp = *c->node;
    tmp.in = ins;
    tmp.n_in = has_b ? 3 : 2;
    ft_tinfo w = *c->in[iw], b = has_b ? *c->in[ib] : w;
    w.dtype = b.dtype = c->in[0]->dtype;
    const ft_tinfo *in[3] = {c->in[0], &w, has_b ? &b : NULL};
    ft_infer_ctx cc = *c;
    cc.node = &tmp;
    cc.in = in;
    cc.n_in = tmp.n_in;
    return ft_infer_conv(&cc);
}

ft_status ft_infer_conv_integer(ft_infer_ctx *c)
{
    ft_status st;
    int vec;
    if (!ft_dtype_in(c->in[1]->dtype, Q8))
        return ft_infer_fail(c, "w '%s' has dtype %s (expected u8 or i8)", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype));
    if ((st = conv_shape(c, 1, -1)))
        return st;
    if (c->n_in > 2 && c->in[2] && ((st = ft_infer_same_dtype(c, 2, 0, "x_zero_point")) ||
                                    (st = scale_shape(c, 2, -1, -1, "", &vec))))
        return st;
    if (c->n_in > 3 && c->in[3] && ((st = ft_infer_same_dtype(c, 3, 1, "w_zero_point")) ||
                                    (st = scale_shape(c, 3, -1, c->in[1]->shape.dims[0], "the output channels of w",
                                                      &vec))))
        return st;
    c->out[0].dtype = FT_I32;
    return FT_OK;
}

ft_status ft_infer_qlinear_conv(ft_infer_ctx *c)
{
    ft_status st;
    int vec;
    if ((st = qlinear_inputs(c, "x", "w")))
        return st;
    if (c->n_in > 8 && c->in[8] && c->in[8]->dtype != FT_I32)
        return ft_infer_fail(c, "bias '%s' has dtype %s (expected i32)", ft_infer_in_name(c, 8),
                             ft_dtype_name(c->in[8]->dtype));
    if ((st = conv_shape(c, 3, 8)))
        return st;
    if (c->params->conv.act != FT_CONV_ACT_NONE && c->params->conv.act != FT_CONV_ACT_RELU)
        return ft_infer_fail(c, "attribute 'activation' = '%s': qlinear_conv takes none or relu",
                             ft_attr(c->node, "activation")->s);
    if ((st = scale_shape(c, 1, 2, -1, "", &vec)) ||
        (st = scale_shape(c, 4, 5, c->in[3]->shape.dims[0], "the output channels of w", &vec)) ||
        (st = scale_shape(c, 6, 7, -1, "", &vec)))
        return st;
    c->out[0].dtype = c->in[7]->dtype;
    return FT_OK;
}

uint64_t ft_flops_qlinear_conv(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n;
    const ft_shape *w = &in[3]->shape;
    uint64_t k = 1;
    for (int i = 1; i < w->rank; i++)
        k *= (uint64_t)w->dims[i];
    return 2 * ft_numel(&out[0].shape) * k + 4 * ft_numel(&out[0].shape);
}
