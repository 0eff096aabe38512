#include "pool_geom.h"

#include <string.h>

static void list_or(const ft_attr_val *a, int count, int64_t def, int64_t *out)
{
    for (int i = 0; i < count; i++)
        out[i] = (a->present && a->n > 0) ? a->ints[i] : def;
}

void ft_pool_geom_of(const ft_node *n, const ft_view *x, const ft_view *y, ft_pool_geom *g)
{
    int sp = x->shape.rank - 2, off = 3 - sp;
    int64_t k[3], s[3], d[3], pads[6];
    list_or(ft_attr(n, "kernel_shape"), sp, 1, k);
    list_or(ft_attr(n, "strides"), sp, 1, s);
    list_or(ft_attr(n, "dilations"), sp, 1, d);
    list_or(ft_attr(n, "pads"), 2 * sp, 0, pads);
    const char *ap = ft_attr(n, "auto_pad")->s;
    int upper = strcmp(ap, "SAME_UPPER") == 0, lower = strcmp(ap, "SAME_LOWER") == 0;
    g->planes = x->shape.dims[0] * x->shape.dims[1];
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < sp; i++) {
        int j = off + i;
        g->in[j] = x->shape.dims[2 + i];
        g->out[j] = y->shape.dims[2 + i];
        g->k[j] = k[i], g->s[j] = s[i], g->d[j] = d[i];
        if (upper || lower) {
            /* ONNX SAME_*: total padding that makes ceil(in / stride) windows fit;
             * the odd cell goes to the end (UPPER) or the beginning (LOWER). */
            int64_t total = (g->out[j] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - g->in[j];
            if (total < 0)
                total = 0;
            g->pb[j] = upper ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
        } else if (strcmp(ap, "VALID") != 0) {
            g->pb[j] = pads[i], g->pe[j] = pads[sp + i];
        }
    }
}

static int pick(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return 0; /* unreachable after inference */
}

void ft_resize_modes_of(const ft_node *n, ft_resize_modes *m)
{
    /* in the order of the FT_RESIZE_CT_* and FT_RESIZE_NM_* values */
    static const char *const cts[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric"};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    m->linear = strcmp(ft_attr(n, "mode")->s, "linear") == 0;
    m->ct = pick(ft_attr(n, "coordinate_transformation_mode")->s, cts, (int)FT_ARRAY_LEN(cts));
    m->nm = pick(ft_attr(n, "nearest_mode")->s, nms, (int)FT_ARRAY_LEN(nms));
}

double ft_resize_scale(const ft_node *n, const ft_shape *is, const ft_shape *os, int d)
{
    const ft_attr_val *sc = ft_attr(n, "scales");
    /* ONNX: with sizes the scale is output / input, with scales the attribute itself */
    return sc->present ? sc->floats[d] : (double)os->dims[d] / (double)is->dims[d];
}
