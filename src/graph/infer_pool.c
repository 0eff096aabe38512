/* Shape and dtype inference of max_pool, average_pool, the global pools and
 * resize; the CPU kernels in src/cpu/pool.c and src/cpu/resize.c rely on
 * every check made here (they recompute the padding and the per-axis scales
 * from the same attributes and the inferred output shape). The dtype of
 * input 0 has already been checked against the op table's mask. */
#include "graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_STR 240
/* Bound on kernel sizes, strides, dilations and pads: keeps every window
 * computation far inside int64 (dims themselves are bounded by the tensor
 * size limit). */
#define POOL_ATTR_MAX ((int64_t)1 << 31)

static const char *in_name(const ft_infer_ctx *c) { return c->g->tensors[c->node->in[0]].name; }

/* "[1,2,3]" for an integer list attribute; long lists end in "...". */
static const char *ints_str(const ft_attr_val *a, char *buf)
{
    size_t len = 0;
    buf[len++] = '[';
    for (int i = 0; i < a->n; i++) {
        if (len > LIST_STR - 32) {
            len += (size_t)snprintf(buf + len, LIST_STR - len, ",...");
            break;
        }
        len += (size_t)snprintf(buf + len, LIST_STR - len, "%s%lld", i ? "," : "", (long long)a->ints[i]);
    }
    buf[len++] = ']';
    buf[len] = 0;
    return buf;
}

static const char *floats_str(const ft_attr_val *a, char *buf)
{
    size_t len = 0;
    buf[len++] = '[';
    for (int i = 0; i < a->n; i++) {
        if (len > LIST_STR - 40) {
            len += (size_t)snprintf(buf + len, LIST_STR - len, ",...");
            break;
        }
        /* shortest of %.15g / %.17g that reads back as the same double */
        char num[40];
        snprintf(num, sizeof num, "%.15g", a->floats[i]);
        if (strtod(num, NULL) != a->floats[i])
            snprintf(num, sizeof num, "%.17g", a->floats[i]);
        len += (size_t)snprintf(buf + len, LIST_STR - len, "%s%s", i ? "," : "", num);
    }
    buf[len++] = ']';
    buf[len] = 0;
    return buf;
}

/* An optional list attribute counts as given only when it has entries. */
static int list_given(const ft_attr_val *a) { return a->present && a->n > 0; }

static ft_status set_out(ft_infer_ctx *c, ft_dtype dt, const ft_shape *s)
{
    char sb[FT_SHAPE_STR];
    uint64_t n, bytes;
    if (ft_shape_numel(s, &n))
        return ft_infer_fail(c, "output shape %s has too many elements to count", ft_shape_str(s, sb));
    if (ft_mul_overflow(n, ft_dtype_size(dt), &bytes) || bytes > FT_MAX_TENSOR_BYTES)
        return ft_infer_fail(c, "output shape %s of %s is too large (%llu elements; the limit is %llu bytes)",
                             ft_shape_str(s, sb), ft_dtype_name(dt), (unsigned long long)n,
                             (unsigned long long)FT_MAX_TENSOR_BYTES);
    c->out[0].dtype = dt;
    c->out[0].shape = *s;
    return FT_OK;
}

/* Every spatial dim (after N and C) must be at least 1: a window or a global
 * reduction over nothing has no value. */
static ft_status spatial_nonempty(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char sb[FT_SHAPE_STR];
    for (int i = 2; i < x->rank; i++)
        if (x->dims[i] < 1)
            return ft_infer_fail(c, "input '%s' of shape %s has an empty spatial axis %d; %s needs every spatial "
                                 "size (the dims after N and C) to be at least 1", in_name(c), ft_shape_str(x, sb),
                                 i, ft_op_name(c->node->op));
    return FT_OK;
}

/* ---- max_pool, average_pool ------------------------------------------------------ */

/* An int-list attribute with one entry per spatial axis, each in [lo, POOL_ATTR_MAX]
 * (count: the expected length); absent or [] gives def. */
static ft_status spatial_list(ft_infer_ctx *c, const char *attr, int count, int64_t lo, int64_t def,
                              const char *why, int64_t *out)
{
    const ft_attr_val *a = ft_attr(c->node, attr);
    const ft_shape *x = &c->in[0]->shape;
    char lb[LIST_STR], sb[FT_SHAPE_STR];
    if (!list_given(a)) {
        if (a->present && strcmp(attr, "kernel_shape") == 0)
            return ft_infer_fail(c, "attribute 'kernel_shape' is empty; expected %d values, one per spatial axis of "
                                 "input '%s' of shape %s", count, in_name(c), ft_shape_str(x, sb));
        for (int i = 0; i < count; i++)
            out[i] = def;
        return FT_OK;
    }
    if (a->n != count)
        return ft_infer_fail(c, "attribute '%s' %s has %d values; expected %d (%s) for input '%s' of shape %s", attr,
                             ints_str(a, lb), a->n, count, why, in_name(c), ft_shape_str(x, sb));
    for (int i = 0; i < count; i++) {
        if (a->ints[i] < lo)
            return ft_infer_fail(c, "attribute '%s' %s: value %lld at position %d must be at least %lld", attr,
                                 ints_str(a, lb), (long long)a->ints[i], i, (long long)lo);
        if (a->ints[i] > POOL_ATTR_MAX)
            return ft_infer_fail(c, "attribute '%s' %s: value %lld at position %d is too large (at most %lld)", attr,
                                 ints_str(a, lb), (long long)a->ints[i], i, (long long)POOL_ATTR_MAX);
        out[i] = a->ints[i];
    }
    return FT_OK;
}

ft_status ft_infer_pool(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape;
    const char *opn = ft_op_name(n->op);
    char sb[FT_SHAPE_STR], lb[LIST_STR];
    int avg = n->op == FT_OP_AVERAGE_POOL;
    if (x->rank < 3 || x->rank > 5)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); %s needs rank 3, 4 or 5 (N, C and 1 to 3 "
                             "spatial dims)", in_name(c), ft_shape_str(x, sb), x->rank, opn);
    int sp = x->rank - 2;
    int64_t k[3], s[3], d[3], pads[6];
    ft_status st;
    if ((st = spatial_list(c, "kernel_shape", sp, 1, 1, "one per spatial axis", k)) ||
        (st = spatial_list(c, "strides", sp, 1, 1, "one per spatial axis", s)) ||
        (st = spatial_list(c, "dilations", sp, 1, 1, "one per spatial axis", d)) ||
        (st = spatial_list(c, "pads", 2 * sp, 0, 0, "all begins, then all ends", pads)))
        return st;
    int64_t ceil_mode = ft_attr(n, "ceil_mode")->i;
    if (ceil_mode != 0 && ceil_mode != 1)
        return ft_infer_fail(c, "attribute 'ceil_mode' is %lld; expected 0 or 1", (long long)ceil_mode);
    if (avg) {
        int64_t cip = ft_attr(n, "count_include_pad")->i;
        if (cip != 0 && cip != 1)
            return ft_infer_fail(c, "attribute 'count_include_pad' is %lld; expected 0 or 1", (long long)cip);
    }
    const char *ap = ft_attr(n, "auto_pad")->s;
    int same_upper = strcmp(ap, "SAME_UPPER") == 0, same_lower = strcmp(ap, "SAME_LOWER") == 0;
    int notset = strcmp(ap, "NOTSET") == 0, valid = strcmp(ap, "VALID") == 0;
    if (!same_upper && !same_lower && !notset && !valid)
        return ft_infer_fail(c, "attribute 'auto_pad': unknown value '%s' (expected NOTSET, SAME_UPPER, SAME_LOWER or "
                             "VALID)", ap);
    if (!notset) {
        const ft_attr_val *pa = ft_attr(n, "pads");
        for (int i = 0; i < 2 * sp; i++)
            if (pads[i] != 0)
                return ft_infer_fail(c, "attribute 'pads' %s cannot be combined with auto_pad '%s' (which computes "
                                     "the padding); give one or the other", ints_str(pa, lb), ap);
    }
    if ((st = spatial_nonempty(c)))
        return st;
    ft_shape out = *x;
    for (int i = 0; i < sp; i++) {
        int64_t in = x->dims[2 + i], eff = (k[i] - 1) * d[i] + 1, o;
        if (same_upper || same_lower) {
            o = (in + s[i] - 1) / s[i];
        } else {
            int64_t pb = pads[i], pe = pads[sp + i], span = in + pb + pe - eff;
            if (span < 0)
                return ft_infer_fail(c, "on spatial axis %d the window (kernel_shape %lld, dilation %lld: %lld cells) "
                                     "is larger than the padded input (size %lld + pads %lld and %lld = %lld)",
                                     i, (long long)k[i], (long long)d[i], (long long)eff, (long long)in,
                                     (long long)pb, (long long)pe, (long long)(in + pb + pe));
            o = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
            /* ONNX (and PyTorch): a last window starting in the right padding is dropped. */
            if (ceil_mode && (o - 1) * s[i] >= in + pb)
                o--;
        }
        out.dims[2 + i] = o;
    }
    return set_out(c, c->in[0]->dtype, &out);
}

/* ---- global pools ----------------------------------------------------------------- */

ft_status ft_infer_global_pool(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char sb[FT_SHAPE_STR];
    if (x->rank < 3)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); %s needs rank 3 or more (N, C and at least one "
                             "spatial dim)", in_name(c), ft_shape_str(x, sb), x->rank, ft_op_name(c->node->op));
    ft_status st = spatial_nonempty(c);
    if (st)
        return st;
    ft_shape out = *x;
    for (int i = 2; i < x->rank; i++)
        out.dims[i] = 1;
    return set_out(c, c->in[0]->dtype, &out);
}

/* ---- resize ------------------------------------------------------------------------ */

static const char *const RESIZE_MODES[] = {"nearest", "linear"};
static const char *const RESIZE_CTMS[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                          "align_corners", "asymmetric"};
static const char *const RESIZE_NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

static ft_status one_of(ft_infer_ctx *c, const char *attr, const char *const *names, int count)
{
    const char *v = ft_attr(c->node, attr)->s;
    char list[256];
    size_t len = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(v, names[i]) == 0)
            return FT_OK;
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                                names[i]);
    }
    return ft_infer_fail(c, "attribute '%s': unknown value '%s' (expected %s)", attr, v, list);
}

ft_status ft_infer_resize(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape;
    const ft_attr_val *sz = ft_attr(n, "sizes"), *sc = ft_attr(n, "scales");
    char sb[FT_SHAPE_STR], lb[LIST_STR], lb2[LIST_STR];
    ft_status st;
    if ((st = one_of(c, "mode", RESIZE_MODES, (int)FT_ARRAY_LEN(RESIZE_MODES))) ||
        (st = one_of(c, "coordinate_transformation_mode", RESIZE_CTMS, (int)FT_ARRAY_LEN(RESIZE_CTMS))) ||
        (st = one_of(c, "nearest_mode", RESIZE_NEAREST, (int)FT_ARRAY_LEN(RESIZE_NEAREST))))
        return st;
    if (sz->present && sc->present)
        return ft_infer_fail(c, "attributes 'sizes' %s and 'scales' %s are both given; give exactly one of them",
                             ints_str(sz, lb), floats_str(sc, lb2));
    if (!sz->present && !sc->present)
        return ft_infer_fail(c, "give exactly one of the attributes 'sizes' (output shape) or 'scales' (one factor "
                             "per axis of input '%s' of shape %s)", in_name(c), ft_shape_str(x, sb));
    if (x->rank == 0)
        return ft_infer_fail(c, "input '%s' is a scalar; resize needs rank 1 or more", in_name(c));
    ft_shape out = *x;
    if (sz->present) {
        if (sz->n != x->rank)
            return ft_infer_fail(c, "attribute 'sizes' %s has %d values; expected %d, one per axis of input '%s' of "
                                 "shape %s", ints_str(sz, lb), sz->n, x->rank, in_name(c), ft_shape_str(x, sb));
        for (int i = 0; i < x->rank; i++) {
            int64_t v = sz->ints[i];
            if (v < 0)
                return ft_infer_fail(c, "attribute 'sizes' %s: size %lld of axis %d is negative", ints_str(sz, lb),
                                     (long long)v, i);
            if (x->dims[i] == 0 && v > 0)
                return ft_infer_fail(c, "attribute 'sizes' %s: axis %d of input '%s' of shape %s is empty and cannot "
                                     "be resized to %lld", ints_str(sz, lb), i, in_name(c), ft_shape_str(x, sb),
                                     (long long)v);
            out.dims[i] = v;
        }
    } else {
        if (sc->n != x->rank)
            return ft_infer_fail(c, "attribute 'scales' %s has %d values; expected %d, one per axis of input '%s' of "
                                 "shape %s", floats_str(sc, lb), sc->n, x->rank, in_name(c), ft_shape_str(x, sb));
        for (int i = 0; i < x->rank; i++) {
            double v = sc->floats[i];
            if (!(v > 0) || !isfinite(v))
                return ft_infer_fail(c, "attribute 'scales' %s: scale %g of axis %d must be positive and finite",
                                     floats_str(sc, lb), v, i);
            /* ONNX: output size = floor(input size * scale). */
            double o = floor((double)x->dims[i] * v);
            if (o > (double)FT_MAX_TENSOR_BYTES)
                return ft_infer_fail(c, "attribute 'scales' %s: axis %d of size %lld scaled by %g gives %g, too "
                                     "large", floats_str(sc, lb), i, (long long)x->dims[i], v, o);
            out.dims[i] = (int64_t)o;
        }
    }
    return set_out(c, c->in[0]->dtype, &out);
}
