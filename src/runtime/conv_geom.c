#include "conv_geom.h"

#include <string.h>

/* Spatial attribute j, or its default when absent (an empty list is absent,
 * as in inference). */
static int64_t attr_at(const ft_node *n, const char *name, int j, int64_t dflt)
{
    const ft_attr_val *a = ft_attr(n, name);
    return a->present && a->n > 0 ? a->ints[j] : dflt;
}

static int auto_pad_of(const ft_node *n)
{
    const char *s = ft_attr(n, "auto_pad")->s;
    return !strcmp(s, "SAME_UPPER") ? 1 : !strcmp(s, "SAME_LOWER") ? 2 : !strcmp(s, "VALID") ? 3 : 0;
}

void ft_conv_geom_of(const ft_node *n, const ft_view *in, const ft_view *out, int transpose, ft_conv_geom *g)
{
    const ft_shape *x = &in[0].shape, *w = &in[1].shape, *y = &out[0].shape;
    memset(g, 0, sizeof *g);
    g->r = x->rank - 2;
    g->es = ft_dtype_size(in[0].dtype);
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->M = y->dims[1];
    g->G = ft_attr(n, "group")->i;
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    g->NI = g->P = g->KK = 1;
    int ap = auto_pad_of(n);
    int has_os = transpose && ft_attr(n, "output_shape")->present && ft_attr(n, "output_shape")->n > 0;
    for (int j = 0; j < g->r; j++) {
        int64_t in_j = x->dims[2 + j], out_j = y->dims[2 + j], k = w->dims[2 + j];
        int64_t s = attr_at(n, "strides", j, 1), d = attr_at(n, "dilations", j, 1), ek = (k - 1) * d + 1, pb = 0;
        if (!transpose) {
            if (ap == 0)
                pb = attr_at(n, "pads", j, 0);
            else if (ap == 1 || ap == 2) {
                int64_t total = (out_j - 1) * s + ek - in_j;
                total = total > 0 ? total : 0;
                pb = ap == 1 ? total / 2 : total - total / 2;
            }
        } else if (has_os || ap == 1 || ap == 2) {
            /* ONNX: the extra element of an odd total goes to the end for
             * SAME_UPPER, to the begin otherwise. A negative total (an
             * output_shape beyond the full result) extends the end, where
             * no input reaches. */
            int64_t total = s * (in_j - 1) + attr_at(n, "output_padding", j, 0) + ek - out_j;
            pb = total <= 0 ? 0 : ap == 1 ? total / 2 : total - total / 2;
        } else if (ap == 0) {
            pb = attr_at(n, "pads", j, 0);
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
