/* The optimizer's quantization pass (optimize.h: qdq_conv).
 *
 * qdq_conv: the QDQ form ONNX Runtime's static quantizer writes around a conv,
 *
 *   y = quantize_linear(relu?(conv(dequantize_linear(xq, sx, zx),
 *                                  dequantize_linear(wq, sw, zw), b?)), sy, zy)
 *
 * -> y = qlinear_conv(xq, sx, zx, wq, sw, zw, sy, zy, bq?) {activation: relu?},
 * the conv's sums made in integers (exactly, where the f32 conv rounds) by
 * the CPU's int8 convolution (cpu/qconv_dnnl.c). Rewritten only where that
 * kernel applies on every x86-64 CPU, so that the fused node is never the
 * slower: xq u8 with zx a constant 0; wq a constant i8 whose every value is
 * within [-64, 64] (7 bits, what the quantizer writes with reduce_range) with
 * zw constants 0; sx, sy, zy constant scalars, zy u8; sw a constant f32,
 * one or one per output channel (axis 0); the conv's output read by the
 * quantize_linear only; the conv without a sum input and with activation
 * none or relu (relu then quantize is max(q, zy), qlinear_conv's relu).
 * The bias b, a constant f32 [M] only the conv reads, becomes the i32
 * bq[m] = round(b[m] / (sx * sw[m])) in place, as the quantizer rounds it.
 * The result can differ from the f32 form's by one quantum of y where the
 * f32 sums round across a rounding boundary of y (ftrun(1), OPTIMIZER).
 *
 * The quantize_linear node becomes the qlinear_conv, named after the conv
 * with "+quantize_linear"; the conv goes; the dequantize_linear nodes go with
 * the dead pass when nothing else reads them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimize_int.h"
#include "../graph/dtype_load.h"

/* t: a constant of dtype dt with n elements (n < 0: any count). */
static int const_of(const opt *o, int t, ft_dtype dt, int64_t n)
{
    return t >= 0 && opt_is_const(o, t) && o->g->tensors[t].dtype == dt && o->g->tensors[t].value &&
           (n < 0 || ft_numel(&o->g->tensors[t].shape) == (uint64_t)n);
}

/* t: a constant of integer dtype dt whose every value lies in [lo, hi]. */
static int const_within(const opt *o, int t, ft_dtype dt, int64_t lo, int64_t hi)
{
    if (!const_of(o, t, dt, -1))
        return 0;
    const ft_tensor *x = &o->g->tensors[t];
    uint64_t n = ft_numel(&x->shape);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = ft_ld_int(x->value, dt, (int64_t)i);
        if (v < lo || v > hi)
            return 0;
    }
    return 1;
}

/* The node's inputs (n_in in all), -1 for an absent one. */
static int in_of(const ft_node *n, int i) { return i < n->n_in ? n->in[i] : -1; }

/* Conv node c's match (ins: qlinear_conv's inputs), or 0. */
static int match(const opt *o, int c, int q, int *ins)
{
    const ft_graph *g = o->g;
    const ft_node *cv = &g->nodes[c], *qn = &g->nodes[q];
    const ft_conv_params *p = &cv->params.conv;
    if (cv->n_in > 3 || (p->act != FT_CONV_ACT_NONE && p->act != FT_CONV_ACT_RELU) ||
        g->tensors[cv->in[0]].dtype != FT_F32 || g->tensors[qn->out[0]].dtype != FT_U8)
        return 0;
    int dx = opt_prod(o, cv->in[0], FT_OP_DEQUANTIZE_LINEAR), dw = opt_prod(o, cv->in[1], FT_OP_DEQUANTIZE_LINEAR);
    if (dx < 0 || dw < 0)
        return 0;
    const ft_node *nx = &g->nodes[dx], *nw = &g->nodes[dw];
    int64_t M = g->tensors[cv->out[0]].shape.dims[1];
    int xq = in_of(nx, 0), sx = in_of(nx, 1), zx = in_of(nx, 2), wq = in_of(nw, 0), sw = in_of(nw, 1),
        zw = in_of(nw, 2), sy = in_of(qn, 1), zy = in_of(qn, 2), b = in_of(cv, 2);
    int per_channel = sw >= 0 && ft_numel(&g->tensors[sw].shape) > 1;
    if (xq < 0 || g->tensors[xq].dtype != FT_U8 || !const_of(o, sx, FT_F32, 1) || !const_within(o, zx, FT_U8, 0, 0) ||
        !const_within(o, wq, FT_I8, -64, 64) || !const_within(o, zw, FT_I8, 0, 0) ||
        !const_of(o, sw, FT_F32, per_channel ? M : 1) || (per_channel && nw->params.quant.axis != 0) ||
        ft_numel(&g->tensors[zw].shape) != ft_numel(&g->tensors[sw].shape) || !const_of(o, sy, FT_F32, 1) ||
        !const_of(o, zy, FT_U8, 1))
        return 0;
    if (b >= 0 && (!const_of(o, b, FT_F32, M) || g->tensors[b].n_readers != 1))
        return 0;
    int v[9] = {xq, sx, zx, wq, sw, zw, sy, zy, b};
    memcpy(ins, v, sizeof v);
    return 1;
}

/* The f32 bias b becomes the i32 round(b[m] / (sx * sw[m])) (saturated). */
static int quantize_bias(opt *o, int b, int sx, int sw)
{
    ft_tensor *t = &o->g->tensors[b];
    const ft_tensor *ts = &o->g->tensors[sw];
    int64_t M = (int64_t)ft_numel(&t->shape), nsw = (int64_t)ft_numel(&ts->shape);
    int32_t *q = ft_malloc((size_t)M * sizeof *q + 1);
    if (!q)
        return -1;
    double xs = ((const float *)o->g->tensors[sx].value)[0];
    for (int64_t m = 0; m < M; m++) {
        double s = xs * ((const float *)ts->value)[nsw > 1 ? m : 0];
        double v = s != 0 ? rint(((const float *)t->value)[m] / s) : 0;
        q[m] = v != v ? 0 : v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
    }
    ft_tensor_set_value(t, q, (size_t)M * sizeof *q);
    t->dtype = FT_I32;
    return 0;
}

ft_status opt_qdq_conv(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int q = 0; q < g->n_nodes; q++) {
        ft_node *qn = &g->nodes[q];
        if (o->dead[q] || qn->op != FT_OP_QUANTIZE_LINEAR || qn->n_in < 3)
            continue;
        int r = qn->in[0], c = opt_prod(o, r, FT_OP_CONV), ins[9];
        if (c < 0 || !opt_private(o, r) || !match(o, c, q, ins))
            continue;
        ft_node *cv = &g->nodes[c];
        size_t len = strlen(cv->name) + sizeof "+quantize_linear";
        char *name = ft_malloc(len);
        if (!name || (ins[8] >= 0 && quantize_bias(o, ins[8], ins[1], ins[4]))) {
            free(name);
            return opt_oom(o);
        }
        snprintf(name, len, "%s+quantize_linear", cv->name);
        ft_status st = opt_rewrite(o, q, FT_OP_QLINEAR_CONV, ins, ins[8] >= 0 ? 9 : 8);
        if (st) {
            free(name);
            return st;
        }
        qn = &g->nodes[q];
        cv = &g->nodes[c];
        free(qn->name);
        qn->name = name;
        /* the conv's attributes that qlinear_conv has (all but the clip bounds) move over */
        const ft_op_info *oi = ft_op_get(FT_OP_QLINEAR_CONV);
        for (int i = 0; i < oi->n_attrs; i++) {
            int j = ft_op_attr_index(FT_OP_CONV, oi->attrs[i].name);
            if (j < 0)
                continue;
            ft_attr_val t = qn->attrs[i];
            qn->attrs[i] = cv->attrs[j];
            cv->attrs[j] = t;
        }
        opt_kill(o, c);
        ++*count;
    }
    return FT_OK;
}
