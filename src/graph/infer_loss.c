/* Shape and dtype inference of the losses (softmax_cross_entropy_loss,
 * negative_log_likelihood_loss), the window functions (hann_window,
 * hamming_window, blackman_window), mel_weight_matrix and stft, with ONNX's semantics
 * (man/ftrun-graph.5, "Losses, windows and stft"). The typed parameters go
 * into node->params.loss (params.h); the kernels (cpu/loss.c, cpu/fft.c,
 * cuda/loss.cu, cuda/fft.cu) read those and the shapes only.
 *
 *   ft_graph_validate(g, &err);   // runs ft_infer_loss, fills n->params.loss
 *
 * Nothing is allocated. */
#include "infer_common.h"
#include "graph.h"

#include <string.h>

/* reduction and ignore_index, shared by both losses. */
static ft_status loss_attrs(ft_infer_ctx *c)
{
    const char *red = ft_attr(c->node, "reduction")->s;
    ft_loss_params *p = &c->params->loss;
    if (!strcmp(red, "none"))
        p->reduction = FT_LOSS_NONE;
    else if (!strcmp(red, "sum"))
        p->reduction = FT_LOSS_SUM;
    else if (!strcmp(red, "mean"))
        p->reduction = FT_LOSS_MEAN;
    else
        return ft_infer_fail(c, "attribute 'reduction': unknown value '%s' (expected \"none\", \"sum\" or \"mean\")", red);
    const ft_attr_val *ii = ft_attr(c->node, "ignore_index");
    p->has_ignore = ii->present;
    p->ignore_index = ii->present ? ii->i : 0;
    return FT_OK;
}

/* x [N, C, d...] (scores or log-probabilities), target [N, d...] of i32/i64,
 * optional weight [C] of x's dtype. Output 0: the loss, target's shape under
 * reduction none, else a scalar; output 1 (softmax_cross_entropy_loss): the
 * log-probabilities, x's shape. */
ft_status ft_infer_loss(ft_infer_ctx *c)
{
    ft_status st = loss_attrs(c);
    if (st)
        return st;
    const ft_shape *x = &c->in[0]->shape, *t = &c->in[1]->shape;
    char b1[FT_SHAPE_STR], b2[FT_SHAPE_STR];
    if (x->rank < 2)
        return ft_infer_fail(c, "input '%s' %s must have rank >= 2 ([N, C] or [N, C, d1, ...])",
                             ft_infer_in_name(c, 0), ft_shape_str(x, b1));
    if (c->in[1]->dtype != FT_I32 && c->in[1]->dtype != FT_I64)
        return ft_infer_fail(c, "target '%s' has dtype %s; class indices are i32 or i64", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype));
    ft_shape want = *x;
    want.rank = x->rank - 1;
    want.dims[0] = x->dims[0];
    for (int d = 2; d < x->rank; d++)
        want.dims[d - 1] = x->dims[d];
    int same = t->rank == want.rank;
    for (int d = 0; same && d < t->rank; d++)
        same = t->dims[d] == want.dims[d];
    if (!same)
        return ft_infer_fail(c, "target '%s' %s must have the shape of input '%s' %s without its class dim 1: %s",
                             ft_infer_in_name(c, 1), ft_shape_str(t, b1), ft_infer_in_name(c, 0), ft_shape_str(x, b2),
                             ft_shape_str(&want, b2));
    if (c->n_in > 2 && c->in[2]) {
        const ft_shape *w = &c->in[2]->shape;
        if ((st = ft_infer_same_dtype(c, 2, 0, "weight")))
            return st;
        if (w->rank != 1 || w->dims[0] != x->dims[1])
            return ft_infer_fail(c, "weight '%s' %s must be 1-D of length C = %lld (dim 1 of input '%s')",
                                 ft_infer_in_name(c, 2), ft_shape_str(w, b1), (long long)x->dims[1],
                                 ft_infer_in_name(c, 0));
    }
    ft_shape scalar = {0};
    if ((st = ft_infer_set_out(c, 0, c->in[0]->dtype,
                               c->params->loss.reduction == FT_LOSS_NONE ? &want : &scalar)))
        return st;
    if (c->n_out > 1)
        return ft_infer_set_out(c, 1, c->in[0]->dtype, x);
    return FT_OK;
}

/* size: an i32/i64 scalar (or 1-element tensor) whose value is known when the
 * graph is checked (a constant); output [size] of output_datatype. */
ft_status ft_infer_window(ft_infer_ctx *c)
{
    ft_loss_params *p = &c->params->loss;
    ft_status st = ft_infer_flag(c, "periodic", &p->periodic);
    if (st)
        return st;
    const char *od = ft_attr(c->node, "output_datatype")->s;
    ft_dtype odt;
    if (ft_dtype_parse(od, &odt) != 0 || !ft_dtype_in(odt, FT_DT_FLOAT))
        return ft_infer_fail(c, "attribute 'output_datatype' = '%s': expected a float dtype (f16, bf16, f32, f64)", od);
    p->odt = (int)odt;
    const ft_shape *s = &c->in[0]->shape;
    const ft_tensor *t = &c->g->tensors[c->node->in[0]];
    char b[FT_SHAPE_STR];
    if (ft_numel(s) != 1 || s->rank > 1)
        return ft_infer_fail(c, "size '%s' %s must be a scalar", ft_infer_in_name(c, 0), ft_shape_str(s, b));
    if (!t->value)
        return ft_infer_fail(c, "size '%s' must be a constant (its value sets the output's shape)",
                             ft_infer_in_name(c, 0));
    int64_t n = c->in[0]->dtype == FT_I64 ? *(const int64_t *)t->value : (int64_t) * (const int32_t *)t->value;
    if (n < 0)
        return ft_infer_fail(c, "size '%s' = %lld: a window length must be >= 0", ft_infer_in_name(c, 0), (long long)n);
    ft_shape o = {0};
    o.rank = 1;
    o.dims[0] = n;
    return ft_infer_set_out(c, 0, odt, &o);
}

/* A scalar constant of input i (window sizes, mel_weight_matrix's sizes). */
static ft_status const_scalar(ft_infer_ctx *c, int i, const char *what, int64_t *v)
{
    const ft_shape *s = &c->in[i]->shape;
    const ft_tensor *t = &c->g->tensors[c->node->in[i]];
    char b[FT_SHAPE_STR];
    if (ft_numel(s) != 1 || s->rank > 1)
        return ft_infer_fail(c, "%s '%s' %s must be a scalar", what, ft_infer_in_name(c, i), ft_shape_str(s, b));
    if (!t->value)
        return ft_infer_fail(c, "%s '%s' must be a constant (its value sets the output's shape)", what,
                             ft_infer_in_name(c, i));
    *v = c->in[i]->dtype == FT_I64 ? *(const int64_t *)t->value : (int64_t) * (const int32_t *)t->value;
    return FT_OK;
}

/* num_mel_bins, dft_length (constants), sample_rate (their integer dtype),
 * lower_edge_hertz, upper_edge_hertz (one float dtype), all scalars; output
 * [dft_length / 2 + 1, num_mel_bins] in output_datatype. */
ft_status ft_infer_mel_weight_matrix(ft_infer_ctx *c)
{
    const char *od = ft_attr(c->node, "output_datatype")->s;
    ft_dtype odt, idt = c->in[0]->dtype, fdt = c->in[3]->dtype;
    if (ft_dtype_parse(od, &odt) != 0 || !ft_dtype_in(odt, FT_DT_FLOAT))
        return ft_infer_fail(c, "attribute 'output_datatype' = '%s': expected a float dtype (f16, bf16, f32, f64)", od);
    c->params->loss.odt = (int)odt;
    if (c->in[1]->dtype != idt || c->in[2]->dtype != idt)
        return ft_infer_fail(c, "num_mel_bins, dft_length and sample_rate must share one dtype (%s, %s, %s)",
                             ft_dtype_name(idt), ft_dtype_name(c->in[1]->dtype), ft_dtype_name(c->in[2]->dtype));
    if (!ft_dtype_in(fdt, FT_DT_FLOAT) || c->in[4]->dtype != fdt)
        return ft_infer_fail(c, "lower_edge_hertz and upper_edge_hertz must share one float dtype (%s, %s)",
                             ft_dtype_name(fdt), ft_dtype_name(c->in[4]->dtype));
    for (int i = 2; i < 5; i++) {
        char b[FT_SHAPE_STR];
        if (ft_numel(&c->in[i]->shape) != 1 || c->in[i]->shape.rank > 1)
            return ft_infer_fail(c, "input %d '%s' %s must be a scalar", i, ft_infer_in_name(c, i),
                                 ft_shape_str(&c->in[i]->shape, b));
    }
    int64_t bins, dft;
    ft_status st = const_scalar(c, 0, "num_mel_bins", &bins);
    if (!st)
        st = const_scalar(c, 1, "dft_length", &dft);
    if (st)
        return st;
    if (bins < 1 || dft < 1 || bins > ((int64_t)1 << 24) || dft > ((int64_t)1 << 30))
        return ft_infer_fail(c, "num_mel_bins = %lld and dft_length = %lld: expected 1..2^24 and 1..2^30",
                             (long long)bins, (long long)dft);
    ft_shape o = {0};
    o.rank = 2;
    o.dims[0] = dft / 2 + 1;
    o.dims[1] = bins;
    return ft_infer_set_out(c, 0, odt, &o);
}

/* signal [B, L, 1] (real) or [B, L, 2] (complex); optional window [n];
 * output [B, frames, bins, 2] with frames = (L - n) / frame_step + 1 and
 * bins = n / 2 + 1 when onesided, else n. */
ft_status ft_infer_stft(ft_infer_ctx *c)
{
    ft_loss_params *p = &c->params->loss;
    ft_status st = ft_infer_flag(c, "onesided", &p->onesided);
    if (st)
        return st;
    const ft_shape *s = &c->in[0]->shape;
    char b1[FT_SHAPE_STR], b2[FT_SHAPE_STR];
    if (s->rank != 3 || (s->dims[2] != 1 && s->dims[2] != 2))
        return ft_infer_fail(c, "signal '%s' %s must be [batch, length, 1] (real) or [batch, length, 2] (complex)",
                             ft_infer_in_name(c, 0), ft_shape_str(s, b1));
    p->complex_in = s->dims[2] == 2;
    p->frame_step = ft_attr(c->node, "frame_step")->i;
    if (p->frame_step < 1)
        return ft_infer_fail(c, "attribute 'frame_step' = %lld must be >= 1", (long long)p->frame_step);
    const ft_attr_val *fl = ft_attr(c->node, "frame_length");
    int has_w = c->n_in > 1 && c->in[1];
    if (has_w) {
        const ft_shape *w = &c->in[1]->shape;
        if ((st = ft_infer_same_dtype(c, 1, 0, "window")))
            return st;
        if (w->rank != 1)
            return ft_infer_fail(c, "window '%s' %s must be 1-D", ft_infer_in_name(c, 1), ft_shape_str(w, b1));
        if (fl->present && fl->i != w->dims[0])
            return ft_infer_fail(c, "attribute 'frame_length' = %lld differs from the length of window '%s' %s",
                                 (long long)fl->i, ft_infer_in_name(c, 1), ft_shape_str(w, b1));
        p->frame_length = w->dims[0];
    } else if (fl->present) {
        p->frame_length = fl->i;
    } else {
        return ft_infer_fail(c, "neither a window input nor attribute 'frame_length': the frame length is unknown");
    }
    if (p->frame_length < 1 || p->frame_length > s->dims[1])
        return ft_infer_fail(c, "frame length %lld must be in [1, %lld] (the length of signal '%s' %s)",
                             (long long)p->frame_length, (long long)s->dims[1], ft_infer_in_name(c, 0),
                             ft_shape_str(s, b2));
    ft_shape o = {0};
    o.rank = 4;
    o.dims[0] = s->dims[0];
    o.dims[1] = (s->dims[1] - p->frame_length) / p->frame_step + 1;
    o.dims[2] = p->onesided ? p->frame_length / 2 + 1 : p->frame_length;
    o.dims[3] = 2;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &o);
}

/* One complex transform of length n per frame, 5 n log2(n) (log2 rounded
 * down, as ft_flops_fft in ops.c), plus n products by the window. */
uint64_t ft_flops_stft(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    int64_t len = n->n_in > 1 && in[1] && in[1]->shape.rank == 1 ? in[1]->shape.dims[0]
                                                               : ft_attr(n, "frame_length")->i;
    if (out->shape.rank != 4 || len < 1)
        return 0;
    uint64_t frames = (uint64_t)out->shape.dims[0] * (uint64_t)out->shape.dims[1], lg = 0;
    for (uint64_t v = (uint64_t)len; v > 1; v >>= 1)
        lg++;
    return frames * (5 * (uint64_t)len * lg + (uint64_t)len);
}
