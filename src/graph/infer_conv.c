/* Shape and dtype inference of conv and conv_transpose (ONNX Conv and
 * ConvTranspose, channels first) and deform_conv (ONNX DeformConv), the parser of their attributes into
 * ft_conv_params (params.h), and the kernel-side geometry (infer_conv.h) that
 * both backends derive their pads from, by the rules used here. The
 * validator has already checked arity and the dtype of input 0; everything
 * else is checked here. */
#include "infer_common.h"
#include "infer_conv.h"

#include <string.h>

#define MAX_SP FT_SP_MAX /* 1-D, 2-D and 3-D */
/* Bounds that keep the kernels' index arithmetic (o * stride + k * dilation
 * - pad, in int64) far from overflow: every integer attribute is at most
 * LIMIT, and a kernel span or a full transposed output at most SPAN. */
#define LIMIT ((int64_t)1 << 40)
#define SPAN ((int64_t)1 << 60)

/* Spatial parameters of one node, after checking every attribute. */
typedef struct {
    int r;                            /* number of spatial dims */
    int64_t k[MAX_SP];                /* kernel size (from the weight) */
    int64_t s[MAX_SP], d[MAX_SP];     /* strides, dilations */
    int64_t pb[MAX_SP], pe[MAX_SP];   /* pads at the begin and the end */
    int64_t op[MAX_SP];               /* output_padding (conv_transpose) */
    int64_t os[MAX_SP];               /* output_shape (conv_transpose) */
    int has_pads, has_os;
    int auto_pad;                     /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    int64_t group;
    int64_t M;                        /* output channels (checked against the weight and the bias) */
} geom;

static const char *const AUTO_PAD[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

/* An empty list counts as absent: converters often write "output_shape": []. */
static const ft_attr_val *list_attr(ft_infer_ctx *c, const char *name)
{
    const ft_attr_val *a = ft_attr(c->node, name);
    return a->present && a->n > 0 ? a : NULL;
}

/* Reads an optional list attribute of `want` values, each >= min. */
static ft_status read_list(ft_infer_ctx *c, const char *name, int want, int64_t min, int64_t *dst, int *given)
{
    const ft_attr_val *a = list_attr(c, name);
    if (given)
        *given = a != NULL;
    if (!a)
        return FT_OK;
    int r = c->in[0]->shape.rank - 2;
    if (a->n != want)
        return ft_infer_fail(c, "attribute '%s' has %d value%s but the %d-D %s needs %d (%s)", name, a->n,
                             a->n == 1 ? "" : "s", r, ft_op_name(c->node->op), want,
                             want == 2 * r ? "all begins, then all ends" : "one per spatial dim");
    for (int i = 0; i < a->n; i++)
        if (a->ints[i] < min || a->ints[i] > LIMIT)
            return ft_infer_fail(c, "attribute '%s': value %lld at position %d is out of range (must be %lld to "
                                 "2^40)", name, (long long)a->ints[i], i, (long long)min);
    memcpy(dst, a->ints, sizeof(int64_t) * (size_t)a->n);
    return FT_OK;
}

static ft_status channels(ft_infer_ctx *c, int ib, geom *g);

/* Checks shared by both ops: ranks, dtypes, the kernel, strides, dilations,
 * pads and auto_pad, then the channels and the bias at input ib. */
static ft_status common(ft_infer_ctx *c, int ib, geom *g)
{
    const ft_shape *x = &c->in[0]->shape, *w = &c->in[1]->shape;
    char sx[FT_SHAPE_STR], sw[FT_SHAPE_STR];
    const char *op = ft_op_name(c->node->op);
    memset(g, 0, sizeof *g);
    if (x->rank < 3 || x->rank > 2 + MAX_SP)
        return ft_infer_fail(c, "%s needs an input of rank 3, 4 or 5 (N, C and 1 to 3 spatial dims), got '%s' %s "
                             "(rank %d)", op, ft_infer_in_name(c, 0), ft_shape_str(x, sx), x->rank);
    g->r = x->rank - 2;
    if (c->in[1]->dtype != c->in[0]->dtype)
        return ft_infer_fail(c, "weight '%s' has dtype %s but input '%s' has %s", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype), ft_infer_in_name(c, 0), ft_dtype_name(c->in[0]->dtype));
    if (w->rank != x->rank)
        return ft_infer_fail(c, "weight '%s' %s has rank %d but input '%s' %s has rank %d: a %d-D %s needs a "
                             "weight of rank %d (%s, kernel...)", ft_infer_in_name(c, 1), ft_shape_str(w, sw), w->rank,
                             ft_infer_in_name(c, 0), ft_shape_str(x, sx), x->rank, g->r, op, x->rank,
                             c->node->op != FT_OP_CONV_TRANSPOSE ? "M, C/group" : "C, M/group");
    for (int j = 0; j < g->r; j++) {
        g->k[j] = w->dims[2 + j];
        if (g->k[j] < 1)
            return ft_infer_fail(c, "weight '%s' %s has kernel size %lld along spatial dim %d: kernel sizes must "
                                 "be >= 1", ft_infer_in_name(c, 1), ft_shape_str(w, sw), (long long)g->k[j], j);
        g->s[j] = g->d[j] = 1;
    }
    ft_status st;
    if ((st = read_list(c, "strides", g->r, 1, g->s, NULL)) || (st = read_list(c, "dilations", g->r, 1, g->d, NULL)))
        return st;
    for (int j = 0; j < g->r; j++)
        if ((__int128)(g->k[j] - 1) * g->d[j] + 1 > SPAN)
            return ft_infer_fail(c, "the kernel along spatial dim %d spans (%lld - 1) * dilation %lld + 1 elements, "
                                 "more than 2^60", j, (long long)g->k[j], (long long)g->d[j]);
    int64_t pads[2 * MAX_SP] = {0};
    if ((st = read_list(c, "pads", 2 * g->r, 0, pads, &g->has_pads)))
        return st;
    for (int j = 0; j < g->r; j++) {
        g->pb[j] = pads[j];
        g->pe[j] = pads[g->r + j];
    }
    const char *ap = ft_attr(c->node, "auto_pad")->s;
    g->auto_pad = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(ap, AUTO_PAD[i]) == 0)
            g->auto_pad = i;
    if (g->auto_pad < 0)
        return ft_infer_fail(c, "attribute 'auto_pad' = '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
    if (g->auto_pad != 0 && g->has_pads)
        return ft_infer_fail(c, "attributes 'pads' and 'auto_pad' = '%s' cannot be used together (pads are "
                             "computed by auto_pad; use auto_pad = 'NOTSET' with explicit pads)", ap);
    if (g->auto_pad != 0)
        memset(g->pb, 0, sizeof g->pb), memset(g->pe, 0, sizeof g->pe);
    g->group = ft_attr(c->node, "group")->i;
    if (g->group < 1)
        return ft_infer_fail(c, "attribute 'group' = %lld must be >= 1", (long long)g->group);
    if (x->dims[1] % g->group != 0)
        return ft_infer_fail(c, "input '%s' %s has C=%lld channels, not divisible by group=%lld", ft_infer_in_name(c, 0),
                             ft_shape_str(x, sx), (long long)x->dims[1], (long long)g->group);
    return channels(c, ib, g);
}

/* The optional bias, input ib (2 for conv and conv_transpose, 3 for deform_conv). */
static ft_status check_bias(ft_infer_ctx *c, int ib, int64_t m)
{
    if (c->n_in <= ib || !c->in[ib])
        return FT_OK;
    const ft_shape *b = &c->in[ib]->shape;
    char sb[FT_SHAPE_STR];
    if (c->in[ib]->dtype != c->in[0]->dtype)
        return ft_infer_fail(c, "bias '%s' has dtype %s but input '%s' has %s", ft_infer_in_name(c, ib),
                             ft_dtype_name(c->in[ib]->dtype), ft_infer_in_name(c, 0), ft_dtype_name(c->in[0]->dtype));
    if (b->rank != 1 || b->dims[0] != m)
        return ft_infer_fail(c, "bias '%s' %s must have shape [%lld] (one value per output channel)", ft_infer_in_name(c, ib),
                             ft_shape_str(b, sb), (long long)m);
    return FT_OK;
}

/* The weight's channel dims against the input's C and group: conv's weight
 * is [M, C/group, kernel...], conv_transpose's [C, M/group, kernel...]; M
 * into g->M, then the bias at input ib. */
static ft_status channels(ft_infer_ctx *c, int ib, geom *g)
{
    const ft_shape *x = &c->in[0]->shape, *w = &c->in[1]->shape;
    char sx[FT_SHAPE_STR], sw[FT_SHAPE_STR];
    int64_t group = g->group, C = x->dims[1];
    if (c->node->op != FT_OP_CONV_TRANSPOSE) {
        g->M = w->dims[0];
        if (w->dims[1] != C / group)
            return ft_infer_fail(c, "weight '%s' %s has %lld input channels per group (dim 1) but input '%s' %s with "
                                 "group=%lld needs C/group = %lld", ft_infer_in_name(c, 1), ft_shape_str(w, sw),
                                 (long long)w->dims[1], ft_infer_in_name(c, 0), ft_shape_str(x, sx), (long long)group,
                                 (long long)(C / group));
        if (g->M % group != 0)
            return ft_infer_fail(c, "weight '%s' %s has M=%lld output channels (dim 0), not divisible by group=%lld",
                                 ft_infer_in_name(c, 1), ft_shape_str(w, sw), (long long)g->M, (long long)group);
        return check_bias(c, ib, g->M);
    }
    if (w->dims[0] != C)
        return ft_infer_fail(c, "weight '%s' %s has %lld input channels (dim 0) but input '%s' %s has C=%lld: a "
                             "conv_transpose weight is [C, M/group, kernel...]", ft_infer_in_name(c, 1),
                             ft_shape_str(w, sw), (long long)w->dims[0], ft_infer_in_name(c, 0), ft_shape_str(x, sx),
                             (long long)C);
    uint64_t Mu;
    if (ft_mul_overflow((uint64_t)w->dims[1], (uint64_t)group, &Mu) || Mu > (uint64_t)INT64_MAX / 2)
        return ft_infer_fail(c, "M/group=%lld times group=%lld output channels is too large", (long long)w->dims[1],
                             (long long)group);
    g->M = (int64_t)Mu;
    return check_bias(c, ib, g->M);
}

/* The result of both ops: its size checked, the checked attributes kept for
 * the kernels. */
static ft_status finish(ft_infer_ctx *c, const geom *g, const ft_shape *o)
{
    ft_status st = ft_infer_check_size(c, o);
    if (st)
        return st;
    ft_conv_params *p = &c->params->conv;
    p->r = g->r;
    p->group = g->group;
    memcpy(p->s, g->s, sizeof p->s), memcpy(p->d, g->d, sizeof p->d);
    memcpy(p->pb, g->pb, sizeof p->pb), memcpy(p->pe, g->pe, sizeof p->pe);
    memcpy(p->op, g->op, sizeof p->op), memcpy(p->os, g->os, sizeof p->os);
    p->has_pads = g->has_pads;
    p->has_os = g->has_os;
    p->auto_pad = g->auto_pad;
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = *o;
    return FT_OK;
}

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* conv's fused activation (params.h ft_conv_act), by the name of its op. */
static const char *const CONV_ACT[] = {"none", "relu", "clip", "silu", "hard_swish"};

static ft_status conv_activation(ft_infer_ctx *c)
{
    ft_conv_params *p = &c->params->conv;
    if (ft_op_attr_index(c->node->op, "activation") < 0)
        return FT_OK; /* conv_integer: none */
    const char *a = ft_attr(c->node, "activation")->s;
    for (size_t i = 0; i < FT_ARRAY_LEN(CONV_ACT); i++)
        if (a && strcmp(a, CONV_ACT[i]) == 0) {
            p->act = (ft_conv_act)i;
            if (ft_op_attr_index(c->node->op, "activation_min") < 0)
                return FT_OK; /* qlinear_conv: none or relu (infer_quant.c) */
            p->act_lo = ft_attr(c->node, "activation_min")->f;
            p->act_hi = ft_attr(c->node, "activation_max")->f;
            if (p->act_lo > p->act_hi)
                p->act_lo = p->act_hi; /* as clip: max everywhere */
            return FT_OK;
        }
    return ft_infer_fail(c, "attribute 'activation' = '%s' is not one of none, relu, clip, silu, hard_swish",
                         a ? a : "");
}

/* The output shape of conv and deform_conv (the bias at input ib) and of
 * conv_transpose (bias at 2, output_padding and output_shape read here). */
static ft_status conv_out(ft_infer_ctx *c, int ib)
{
    int tr = c->node->op == FT_OP_CONV_TRANSPOSE;
    geom g;
    ft_status st = common(c, ib, &g);
    if (st || (tr && ((st = read_list(c, "output_padding", g.r, 0, g.op, NULL)) ||
                      (st = read_list(c, "output_shape", g.r, 1, g.os, &g.has_os)))))
        return st;
    const ft_shape *x = &c->in[0]->shape;
    char sx[FT_SHAPE_STR];
    ft_shape o = {.rank = x->rank, .dims = {x->dims[0], g.M}};
    for (int j = 0; j < g.r; j++) {
        int64_t in = x->dims[2 + j], ek = (g.k[j] - 1) * g.d[j] + 1, out;
        if (!tr) {
            if (g.auto_pad == 1 || g.auto_pad == 2)
                out = ceil_div(in, g.s[j]);
            else
                out = (in + g.pb[j] + g.pe[j] - ek) >= 0 ? (in + g.pb[j] + g.pe[j] - ek) / g.s[j] + 1 : 0;
            if (out < 1)
                return ft_infer_fail(c, "output size along spatial dim %d would be %lld: input '%s' %s has size %lld "
                                     "there, the kernel spans %lld (size %lld, dilation %lld), pads %lld+%lld, "
                                     "stride %lld (auto_pad %s)", j, (long long)out, ft_infer_in_name(c, 0),
                                     ft_shape_str(x, sx), (long long)in, (long long)ek, (long long)g.k[j],
                                     (long long)g.d[j], (long long)g.pb[j], (long long)g.pe[j], (long long)g.s[j],
                                     AUTO_PAD[g.auto_pad]);
            o.dims[2 + j] = out;
            continue;
        }
        if ((__int128)g.s[j] * (in > 0 ? in - 1 : 0) + g.op[j] + ek > SPAN)
            return ft_infer_fail(c, "the output along spatial dim %d would span stride %lld * (%lld - 1) + "
                                 "output_padding %lld + kernel span %lld elements, more than 2^60", j,
                                 (long long)g.s[j], (long long)in, (long long)g.op[j], (long long)ek);
        /* ONNX: output_shape (then pads are ignored and recomputed from it),
         * else SAME_* gives in * stride, else the pads decide. */
        if (g.has_os)
            out = g.os[j];
        else if (g.auto_pad == 1 || g.auto_pad == 2)
            out = in * g.s[j];
        else
            out = g.s[j] * (in - 1) + g.op[j] + ek - g.pb[j] - g.pe[j];
        if (out < 1)
            return ft_infer_fail(c, "output size along spatial dim %d would be %lld: input '%s' %s has size %lld "
                                 "there, stride %lld, the kernel spans %lld (size %lld, dilation %lld), "
                                 "output_padding %lld, pads %lld+%lld", j, (long long)out, ft_infer_in_name(c, 0),
                                 ft_shape_str(x, sx), (long long)in, (long long)g.s[j], (long long)ek,
                                 (long long)g.k[j], (long long)g.d[j], (long long)g.op[j], (long long)g.pb[j],
                                 (long long)g.pe[j]);
        o.dims[2 + j] = out;
    }
    if ((st = finish(c, &g, &o)) || tr)
        return st;
    return conv_activation(c);
}

/* conv's optional input 3, the residual sum the optimizer's conv_add pass
 * fused into it: the output's dtype and shape (no broadcasting). */
ft_status ft_infer_conv(ft_infer_ctx *c)
{
    ft_status st = conv_out(c, 2);
    if (st || c->n_in <= 3 || !c->in[3])
        return st;
    char ss[FT_SHAPE_STR], so[FT_SHAPE_STR];
    if (c->in[3]->dtype != c->out[0].dtype || !ft_shape_eq(&c->in[3]->shape, &c->out[0].shape))
        return ft_infer_fail(c, "sum '%s' (%s %s) must have the output's dtype and shape (%s %s)", ft_infer_in_name(c, 3),
                             ft_dtype_name(c->in[3]->dtype), ft_shape_str(&c->in[3]->shape, ss),
                             ft_dtype_name(c->out[0].dtype), ft_shape_str(&c->out[0].shape, so));
    return FT_OK;
}

/* deform_conv (ONNX DeformConv, 2-D): x [N, C, H, W], w [M, C/group, kH, kW],
 * offset [N, offset_group * 2 * kH * kW, oH, oW] (a (dy, dx) pair per kernel
 * position), bias [M]?, mask [N, offset_group * kH * kW, oH, oW]?; the output
 * and every attribute as conv's. */
ft_status ft_infer_deform_conv(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape, *w = &c->in[1]->shape;
    char sx[FT_SHAPE_STR], sw[FT_SHAPE_STR], so[FT_SHAPE_STR];
    if (x->rank != 4)
        return ft_infer_fail(c, "deform_conv is 2-D: input '%s' must have rank 4 (N, C, H, W), got %s (rank %d)",
                             ft_infer_in_name(c, 0), ft_shape_str(x, sx), x->rank);
    ft_status st = conv_out(c, 3);
    if (st)
        return st;
    const ft_shape *y = &c->out[0].shape;
    int64_t og = ft_attr(c->node, "offset_group")->i, C = x->dims[1], kk = w->dims[2] * w->dims[3];
    if (og < 1 || C % og != 0)
        return ft_infer_fail(c, "attribute 'offset_group' = %lld must be >= 1 and divide the C=%lld channels of "
                             "input '%s' %s", (long long)og, (long long)C, ft_infer_in_name(c, 0), ft_shape_str(x, sx));
    c->params->conv.offset_group = og;
    for (int i = 2; i <= 4; i += 2) { /* offset, then mask */
        if (i >= c->n_in || !c->in[i])
            continue;
        const ft_shape *t = &c->in[i]->shape;
        int64_t per = i == 2 ? 2 : 1;
        if ((st = ft_infer_same_dtype(c, i, 0, i == 2 ? "offset" : "mask")))
            return st;
        if (t->rank != 4 || t->dims[0] != x->dims[0] || t->dims[1] != og * per * kk || t->dims[2] != y->dims[2] ||
            t->dims[3] != y->dims[3])
            return ft_infer_fail(c, "%s '%s' %s must have shape [%lld, %lld, %lld, %lld] (N, offset_group %lld * %s"
                                 "%lld kernel positions of weight '%s' %s, and the output's %lld x %lld positions)",
                                 i == 2 ? "offset" : "mask", ft_infer_in_name(c, i), ft_shape_str(t, so),
                                 (long long)x->dims[0], (long long)(og * per * kk), (long long)y->dims[2],
                                 (long long)y->dims[3], (long long)og, i == 2 ? "2 * " : "", (long long)kk,
                                 ft_infer_in_name(c, 1), ft_shape_str(w, sw), (long long)y->dims[2],
                                 (long long)y->dims[3]);
    }
    return FT_OK;
}

ft_status ft_infer_conv_transpose(ft_infer_ctx *c) { return conv_out(c, 2); }

/* ---- kernel-side geometry (infer_conv.h) ------------------------------------------ */

void ft_conv_geom_of(const ft_conv_params *p, const ft_shape *x, const ft_shape *w, const ft_shape *y, ft_dtype dt,
                     int transpose, ft_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    g->r = x->rank - 2;
    g->es = ft_dtype_size(dt);
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->M = y->dims[1];
    g->G = p->group;
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    g->NI = g->P = g->KK = 1;
    int same = p->auto_pad == FT_AUTO_PAD_SAME_UPPER || p->auto_pad == FT_AUTO_PAD_SAME_LOWER;
    int upper = p->auto_pad == FT_AUTO_PAD_SAME_UPPER;
    for (int j = 0; j < g->r; j++) {
        int64_t in_j = x->dims[2 + j], out_j = y->dims[2 + j], k = w->dims[2 + j];
        int64_t s = p->s[j], d = p->d[j], ek = (k - 1) * d + 1, pb = 0;
        if (!transpose) {
            if (p->auto_pad == FT_AUTO_PAD_NOTSET)
                pb = p->pb[j];
            else if (same) {
                int64_t total = (out_j - 1) * s + ek - in_j;
                total = total > 0 ? total : 0;
                pb = upper ? total / 2 : total - total / 2;
            }
        } else if (p->has_os || same) {
            /* ONNX: the extra element of an odd total goes to the end for
             * SAME_UPPER, to the begin otherwise. A negative total (an
             * output_shape beyond the full result) extends the end, where
             * no input reaches. */
            int64_t total = s * (in_j - 1) + p->op[j] + ek - out_j;
            pb = total <= 0 ? 0 : upper ? total / 2 : total - total / 2;
        } else if (p->auto_pad == FT_AUTO_PAD_NOTSET) {
            pb = p->pb[j];
        }
        g->in[j] = in_j;
        g->out[j] = out_j;
        g->k[j] = k;
        g->s[j] = s;
        g->d[j] = d;
        g->pb[j] = pb;
        g->NI *= in_j;
        g->P *= out_j;
        g->KK *= k;
    }
}
