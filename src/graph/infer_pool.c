/* Shape and dtype inference of max_pool, average_pool, lp_pool, the global
 * pools, resize, lrn and grid_sample, the parser of their attributes into
 * ft_pool_params, ft_resize_params and ft_image_params (params.h), and the
 * kernel-side geometry computed from those and the inferred shapes
 * (infer_pool.h), so that the padding, the per-axis scales and the resize
 * source coordinates are derived in this one file for inference and for both
 * backends. The dtype of input 0 has already been checked against the op
 * table's mask. */
#include "infer_common.h"
#include "infer_pool.h"
#include "sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bound on kernel sizes, strides, dilations and pads: keeps every window
 * computation far inside int64 (dims themselves are bounded by the tensor
 * size limit). */
#define POOL_ATTR_MAX ((int64_t)1 << 31)

/* Every spatial dim (after N and C) must be at least 1: a window or a global
 * reduction over nothing has no value. */
static ft_status spatial_nonempty(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char sb[FT_SHAPE_STR];
    for (int i = 2; i < x->rank; i++)
        if (x->dims[i] < 1)
            return ft_infer_fail(c, "input '%s' of shape %s has an empty spatial axis %d; %s needs every spatial "
                                 "size (the dims after N and C) to be at least 1", ft_infer_in_name(c, 0), ft_shape_str(x, sb),
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
    char lb[FT_LIST_STR], sb[FT_SHAPE_STR];
    if (!ft_list_given(a)) {
        if (a->present && strcmp(attr, "kernel_shape") == 0)
            return ft_infer_fail(c, "attribute 'kernel_shape' is empty; expected %d values, one per spatial axis of "
                                 "input '%s' of shape %s", count, ft_infer_in_name(c, 0), ft_shape_str(x, sb));
        for (int i = 0; i < count; i++)
            out[i] = def;
        return FT_OK;
    }
    if (a->n != count)
        return ft_infer_fail(c, "attribute '%s' %s has %d values; expected %d (%s) for input '%s' of shape %s", attr,
                             ft_ints_str(a, lb), a->n, count, why, ft_infer_in_name(c, 0), ft_shape_str(x, sb));
    for (int i = 0; i < count; i++) {
        if (a->ints[i] < lo)
            return ft_infer_fail(c, "attribute '%s' %s: value %lld at position %d must be at least %lld", attr,
                                 ft_ints_str(a, lb), (long long)a->ints[i], i, (long long)lo);
        if (a->ints[i] > POOL_ATTR_MAX)
            return ft_infer_fail(c, "attribute '%s' %s: value %lld at position %d is too large (at most %lld)", attr,
                                 ft_ints_str(a, lb), (long long)a->ints[i], i, (long long)POOL_ATTR_MAX);
        out[i] = a->ints[i];
    }
    return FT_OK;
}

ft_status ft_infer_pool(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape;
    const char *opn = ft_op_name(n->op);
    char sb[FT_SHAPE_STR], lb[FT_LIST_STR];
    int avg = n->op == FT_OP_AVERAGE_POOL;
    if (x->rank < 3 || x->rank > 5)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); %s needs rank 3, 4 or 5 (N, C and 1 to 3 "
                             "spatial dims)", ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank, opn);
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
    ft_pool_params *pp = &c->params->pool;
    pp->sp = sp;
    memcpy(pp->k, k, sizeof k), memcpy(pp->s, s, sizeof s), memcpy(pp->d, d, sizeof d);
    memcpy(pp->pads, pads, sizeof pads);
    pp->ceil_mode = (int)ceil_mode;
    pp->count_include_pad = avg && ft_attr(n, "count_include_pad")->i != 0;
    if (n->op == FT_OP_LP_POOL) {
        int64_t pv = ft_attr(n, "p")->i;
        if (pv < 1 || pv > 1024)
            return ft_infer_fail(c, "attribute 'p' is %lld; expected 1 to 1024", (long long)pv);
        pp->p = (int)pv;
    }
    pp->auto_pad = same_upper ? FT_AUTO_PAD_SAME_UPPER : same_lower ? FT_AUTO_PAD_SAME_LOWER
                   : valid    ? FT_AUTO_PAD_VALID
                              : FT_AUTO_PAD_NOTSET;
    if (!notset) {
        const ft_attr_val *pa = ft_attr(n, "pads");
        for (int i = 0; i < 2 * sp; i++)
            if (pads[i] != 0)
                return ft_infer_fail(c, "attribute 'pads' %s cannot be combined with auto_pad '%s' (which computes "
                                     "the padding); give one or the other", ft_ints_str(pa, lb), ap);
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
    if (n->op == FT_OP_MAX_POOL) {
        int64_t so = ft_attr(n, "storage_order")->i;
        if (so != 0 && so != 1)
            return ft_infer_fail(c, "attribute 'storage_order' is %lld; expected 0 (row-major) or 1 (column-major)",
                                 (long long)so);
        pp->storage_order = (int)so;
        /* Indices: the flat position of each maximum in the input (N and C included) */
        if (c->n_out > 1 && (st = ft_infer_set_out(c, 1, FT_I64, &out)))
            return st;
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- max_unpool --------------------------------------------------------------------- */

/* x [N, C, spatial...] and its i64 indices of the same shape (max_pool's
 * Indices: flat positions in the unpooled tensor [N, C, (x-1)*stride - pads +
 * kernel ...]); the output is that tensor, or output_shape with the unpooled
 * one in its leading corner (the ONNX reference's reading). */
ft_status ft_infer_max_unpool(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape, *ix = &c->in[1]->shape;
    char sb[FT_SHAPE_STR], ib[FT_SHAPE_STR], lb[FT_LIST_STR];
    if (x->rank < 3 || x->rank > 5)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); max_unpool needs rank 3, 4 or 5 (N, C and 1 to 3 "
                             "spatial dims)", ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank);
    if (c->in[1]->dtype != FT_I64 || !ft_shape_eq(x, ix))
        return ft_infer_fail(c, "indices '%s' (%s %s) must be i64 of the shape of input '%s' %s", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype), ft_shape_str(ix, ib), ft_infer_in_name(c, 0),
                             ft_shape_str(x, sb));
    int sp = x->rank - 2;
    int64_t k[3], s[3], pads[6];
    ft_status st;
    if ((st = spatial_list(c, "kernel_shape", sp, 1, 1, "one per spatial axis", k)) ||
        (st = spatial_list(c, "strides", sp, 1, 1, "one per spatial axis", s)) ||
        (st = spatial_list(c, "pads", 2 * sp, 0, 0, "all begins, then all ends", pads)))
        return st;
    ft_pool_params *pp = &c->params->pool;
    pp->sp = sp;
    ft_shape out = *x;
    for (int i = 0; i < sp; i++) {
        int64_t u = (x->dims[2 + i] - 1) * s[i] - pads[i] - pads[sp + i] + k[i];
        if (x->dims[2 + i] < 1 || u < 1)
            return ft_infer_fail(c, "on spatial axis %d the unpooled size (%lld - 1) * stride %lld - pads %lld and %lld + "
                                 "kernel %lld is %lld; it must be at least 1", i, (long long)x->dims[2 + i],
                                 (long long)s[i], (long long)pads[i], (long long)pads[sp + i], (long long)k[i],
                                 (long long)u);
        pp->k[i] = k[i], pp->s[i] = s[i], pp->pads[i] = pads[i], pp->pads[sp + i] = pads[sp + i];
        pp->unpooled[i] = out.dims[2 + i] = u;
    }
    const ft_attr_val *os = ft_attr(n, "output_shape");
    if (ft_list_given(os)) {
        int ok = os->n == x->rank && os->ints[0] == x->dims[0] && os->ints[1] == x->dims[1];
        for (int i = 0; ok && i < sp; i++)
            ok = os->ints[2 + i] >= pp->unpooled[i];
        if (!ok)
            return ft_infer_fail(c, "attribute 'output_shape' %s must have rank %d, the N and C of input '%s' %s and "
                                 "spatial sizes at least the unpooled ones %s", ft_ints_str(os, lb), x->rank,
                                 ft_infer_in_name(c, 0), ft_shape_str(x, sb), ft_shape_str(&out, ib));
        for (int i = 0; i < sp; i++)
            out.dims[2 + i] = os->ints[2 + i];
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- global pools ----------------------------------------------------------------- */

ft_status ft_infer_global_pool(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char sb[FT_SHAPE_STR];
    if (x->rank < 3)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); %s needs rank 3 or more (N, C and at least one "
                             "spatial dim)", ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank, ft_op_name(c->node->op));
    ft_status st = spatial_nonempty(c);
    if (st)
        return st;
    ft_shape out = *x;
    for (int i = 2; i < x->rank; i++)
        out.dims[i] = 1;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- resize ------------------------------------------------------------------------ */

/* In the order of the linear flag, the FT_RESIZE_CT_* and the FT_RESIZE_NM_* values. */
static const char *const RESIZE_MODES[] = {"nearest", "linear", "cubic"};
static const char *const RESIZE_CTMS[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                          "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize"};
static const char *const RESIZE_NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* The index of string attribute attr's value in names (*out). */
static ft_status one_of(ft_infer_ctx *c, const char *attr, const char *const *names, int count, int *out)
{
    const char *v = ft_attr(c->node, attr)->s;
    char list[256];
    size_t len = 0;
    for (int i = 0; i < count; i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return FT_OK;
        }
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                                names[i]);
    }
    return ft_infer_fail(c, "attribute '%s': unknown value '%s' (expected %s)", attr, v, list);
}

ft_status ft_infer_resize(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape;
    const ft_attr_val *sz, *sc, *roi;
    char sb[FT_SHAPE_STR], lb[FT_LIST_STR], lb2[FT_LIST_STR];
    int have, have_sc, have_roi;
    /* the attributes, or the values of inputs 1 (sizes), 2 (scales) and 3 (roi) */
    ft_status st = ft_infer_ints(c, "sizes", 1, &sz, &have);
    if (!st)
        st = ft_infer_floats(c, "scales", 2, 0, &sc, &have_sc);
    if (!st)
        st = ft_infer_floats(c, "roi", 3, 1, &roi, &have_roi);
    if (st)
        return st;
    ft_resize_params *rp = &c->params->resize;
    int mode;
    if ((st = one_of(c, "mode", RESIZE_MODES, (int)FT_ARRAY_LEN(RESIZE_MODES), &mode)) ||
        (st = one_of(c, "coordinate_transformation_mode", RESIZE_CTMS, (int)FT_ARRAY_LEN(RESIZE_CTMS), &rp->ct)) ||
        (st = one_of(c, "nearest_mode", RESIZE_NEAREST, (int)FT_ARRAY_LEN(RESIZE_NEAREST), &rp->nm)))
        return st;
    rp->linear = mode == 1;
    rp->cubic = mode == 2;
    rp->cubic_a = ft_attr(n, "cubic_coeff_a")->f;
    int64_t exo = ft_attr(n, "exclude_outside")->i;
    if (exo != 0 && exo != 1)
        return ft_infer_fail(c, "attribute 'exclude_outside' is %lld; expected 0 or 1", (long long)exo);
    rp->exclude_outside = (int)exo;
    int64_t aa = ft_attr(n, "antialias")->i;
    if (aa != 0 && aa != 1)
        return ft_infer_fail(c, "attribute 'antialias' is %lld; expected 0 or 1", (long long)aa);
    if (aa && !rp->linear && !rp->cubic)
        return ft_infer_fail(c, "attribute 'antialias' is 1 with mode nearest; it needs mode linear or cubic");
    rp->antialias = (int)aa;
    if (!isfinite(rp->cubic_a))
        return ft_infer_fail(c, "attribute 'cubic_coeff_a' is %g; expected a finite value", rp->cubic_a);
    rp->extrapolation = ft_attr(n, "extrapolation_value")->f;
    if (x->rank == 0)
        return ft_infer_fail(c, "input '%s' is a scalar; resize needs rank 1 or more", ft_infer_in_name(c, 0));
    /* axes: the axes that sizes, scales and roi list (every axis when not given) */
    const ft_attr_val *axa = ft_attr(n, "axes");
    int ax[FT_MAX_RANK], nax = x->rank, seen[FT_MAX_RANK] = {0};
    if (ft_list_given(axa)) {
        if (axa->n > x->rank)
            return ft_infer_fail(c, "attribute 'axes' %s has %d entries but input '%s' has rank %d",
                                 ft_ints_str(axa, lb), axa->n, ft_infer_in_name(c, 0), x->rank);
        for (int i = 0; i < axa->n; i++) {
            if (ft_axis(axa->ints[i], x->rank, &ax[i]) != 0 || seen[ax[i]])
                return ft_infer_fail(c, "attribute 'axes' %s: axis %lld is %s for input '%s' of rank %d",
                                     ft_ints_str(axa, lb), (long long)axa->ints[i],
                                     ft_axis(axa->ints[i], x->rank, &ax[i]) ? "out of range" : "repeated",
                                     ft_infer_in_name(c, 0), x->rank);
            seen[ax[i]] = 1;
        }
        nax = axa->n;
    } else {
        for (int i = 0; i < nax; i++)
            ax[i] = i;
    }
    const char *per = ft_list_given(axa) ? "listed axis" : "axis";
    if (rp->ct == FT_RESIZE_CT_TF_CROP_AND_RESIZE && have_roi) {
        if (!roi->present || roi->n != 2 * nax)
            return ft_infer_fail(c, "coordinate_transformation_mode 'tf_crop_and_resize' needs attribute 'roi' with %d "
                                 "values (or input 3 giving them: the start of every %s of input '%s' of shape %s, "
                                 "then the ends); %s%s", 2 * nax, per, ft_infer_in_name(c, 0), ft_shape_str(x, sb),
                                 roi->present ? "got " : "it is not given", roi->present ? ft_floats_str(roi, lb) : "");
        for (int i = 0; i < x->rank; i++)
            rp->roi_start[i] = 0, rp->roi_end[i] = 1;
        for (int i = 0; i < roi->n; i++) {
            if (!isfinite(roi->floats[i]))
                return ft_infer_fail(c, "roi %s: value %g at position %d is not finite",
                                     ft_floats_str(roi, lb), roi->floats[i], i);
            if (i < nax)
                rp->roi_start[ax[i]] = roi->floats[i];
            else
                rp->roi_end[ax[i - nax]] = roi->floats[i];
        }
    }
    if (!have && (sc->present || ft_infer_has_in(c, 2)))
        return ft_infer_fail(c, "input 1 ('%s') gives the sizes and %s is given; give exactly one of them",
                             ft_infer_in_name(c, 1), ft_infer_has_in(c, 2) ? "input 2 (scales)" : "attribute 'scales'");
    if (!have_sc && sz->present)
        return ft_infer_fail(c, "input 2 ('%s') gives the scales and %s is given; give exactly one of them",
                             ft_infer_in_name(c, 2), ft_infer_has_in(c, 1) ? "input 1 (sizes)" : "attribute 'sizes'");
    if (!have || !have_sc || !have_roi) /* computed at run time: the input's shape stands in */
        return ft_infer_set_out(c, 0, c->in[0]->dtype, x);
    if (sz->present && sc->present)
        return ft_infer_fail(c, "attributes 'sizes' %s and 'scales' %s are both given; give exactly one of them",
                             ft_ints_str(sz, lb), ft_floats_str(sc, lb2));
    if (!sz->present && !sc->present)
        return ft_infer_fail(c, "give exactly one of the attributes 'sizes' (output shape) or 'scales' (one factor "
                             "per axis of input '%s' of shape %s)", ft_infer_in_name(c, 0), ft_shape_str(x, sb));
    ft_shape out = *x;
    const char *pol = ft_attr(n, "keep_aspect_ratio_policy")->s;
    int keep = strcmp(pol, "not_larger") == 0 ? 1 : strcmp(pol, "not_smaller") == 0 ? 2 : 0;
    if (!keep && strcmp(pol, "stretch") != 0)
        return ft_infer_fail(c, "attribute 'keep_aspect_ratio_policy': unknown value '%s' (expected stretch, "
                             "not_larger or not_smaller)", pol);
    if (sz->present) {
        const char *sz_what = ft_infer_has_in(c, 1) ? "sizes (input 1)" : "attribute 'sizes'";
        if (sz->n != nax)
            return ft_infer_fail(c, "%s %s has %d values; expected %d, one per %s of input '%s' of shape %s", sz_what,
                                 ft_ints_str(sz, lb), sz->n, nax, per, ft_infer_in_name(c, 0), ft_shape_str(x, sb));
        double ks = keep == 1 ? INFINITY : 0;
        for (int i = 0; i < nax; i++) {
            int64_t v = sz->ints[i], d = x->dims[ax[i]];
            if (v < 0)
                return ft_infer_fail(c, "%s %s: size %lld of axis %d is negative", sz_what, ft_ints_str(sz, lb),
                                     (long long)v, ax[i]);
            if (d == 0 && v > 0)
                return ft_infer_fail(c, "%s %s: axis %d of input '%s' of shape %s is empty and cannot be resized to "
                                     "%lld", sz_what, ft_ints_str(sz, lb), ax[i], ft_infer_in_name(c, 0),
                                     ft_shape_str(x, sb), (long long)v);
            out.dims[ax[i]] = v;
            if (keep && d > 0) /* one scale for the listed axes: the least (not_larger) or the most (not_smaller) */
                ks = keep == 1 ? fmin(ks, (double)v / (double)d) : fmax(ks, (double)v / (double)d);
        }
        if (keep && isfinite(ks)) { /* the sizes rounded half up, and that one scale maps the coordinates (ONNX) */
            for (int i = 0; i < x->rank; i++)
                rp->scales[i] = 1;
            for (int i = 0; i < nax; i++) {
                out.dims[ax[i]] = (int64_t)floor(ks * (double)x->dims[ax[i]] + 0.5);
                rp->scales[ax[i]] = ks;
            }
            rp->has_scales = 1;
        }
    } else {
        const char *sc_what = ft_infer_has_in(c, 2) ? "scales (input 2)" : "attribute 'scales'";
        if (sc->n != nax)
            return ft_infer_fail(c, "%s %s has %d values; expected %d, one per %s of input '%s' of shape %s", sc_what,
                                 ft_floats_str(sc, lb), sc->n, nax, per, ft_infer_in_name(c, 0), ft_shape_str(x, sb));
        for (int i = 0; i < x->rank; i++)
            rp->scales[i] = 1;
        for (int i = 0; i < nax; i++) {
            double v = sc->floats[i];
            if (!(v > 0) || !isfinite(v))
                return ft_infer_fail(c, "%s %s: scale %g of axis %d must be positive and finite", sc_what,
                                     ft_floats_str(sc, lb), v, ax[i]);
            /* ONNX: output size = floor(input size * scale). */
            double o = floor((double)x->dims[ax[i]] * v);
            if (o > (double)FT_MAX_TENSOR_BYTES)
                return ft_infer_fail(c, "%s %s: axis %d of size %lld scaled by %g gives %g, too large", sc_what,
                                     ft_floats_str(sc, lb), ax[i], (long long)x->dims[ax[i]], v, o);
            out.dims[ax[i]] = (int64_t)o;
            rp->scales[ax[i]] = v;
        }
        rp->has_scales = 1;
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- lrn, grid_sample --------------------------------------------------------------- */

/* lrn over the channels of [N, C, ...] (ONNX LRN): y = x / (bias + alpha / size
 * * sum of x^2 over channels c - (size-1)/2 .. c + size/2)^beta. */
ft_status ft_infer_lrn(ft_infer_ctx *c)
{
    const ft_node *n = c->node;
    const ft_shape *x = &c->in[0]->shape;
    char sb[FT_SHAPE_STR];
    if (x->rank < 2)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); lrn needs rank 2 or more [N, C, ...]",
                             ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank);
    ft_image_params *p = &c->params->image;
    p->size = ft_attr(n, "size")->i;
    p->alpha = ft_attr(n, "alpha")->f;
    p->beta = ft_attr(n, "beta")->f;
    p->bias = ft_attr(n, "bias")->f;
    if (p->size < 1 || p->size > POOL_ATTR_MAX)
        return ft_infer_fail(c, "attribute 'size' is %lld; expected 1 to %lld", (long long)p->size,
                             (long long)POOL_ATTR_MAX);
    if (!isfinite(p->alpha) || !isfinite(p->beta) || !isfinite(p->bias))
        return ft_infer_fail(c, "attributes alpha %g, beta %g and bias %g must be finite", p->alpha, p->beta, p->bias);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, x);
}

static const char *const GS_MODES[] = {"nearest", "bilinear", "bicubic", "linear", "cubic"};
static const char *const GS_PADDING[] = {"zeros", "border", "reflection"};

/* grid_sample (ONNX GridSample): x [N, C, D1..Dr] sampled at the normalized
 * coordinates of grid [N, O1..Or, r] (last entry: x coordinate, i.e. the last
 * axis), r = 1 to 3; the output is [N, C, O1..Or]. */
ft_status ft_infer_grid_sample(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape, *gr = &c->in[1]->shape;
    char sb[FT_SHAPE_STR], sb2[FT_SHAPE_STR];
    ft_status st;
    ft_image_params *p = &c->params->image;
    int mode;
    if ((st = one_of(c, "mode", GS_MODES, (int)FT_ARRAY_LEN(GS_MODES), &mode)) ||
        (st = one_of(c, "padding_mode", GS_PADDING, (int)FT_ARRAY_LEN(GS_PADDING), &p->padding)) ||
        (st = ft_infer_flag(c, "align_corners", &p->align_corners)) ||
        (st = ft_infer_same_dtype(c, 1, 0, "grid")))
        return st;
    p->mode = mode == 0 ? FT_GS_NEAREST : mode == 1 || mode == 3 ? FT_GS_LINEAR : FT_GS_CUBIC;
    if (x->rank < 3 || x->rank > 5)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); grid_sample needs rank 3, 4 or 5 (N, C and 1 to "
                             "3 spatial dims)", ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank);
    int r = x->rank - 2;
    if (gr->rank != x->rank || gr->dims[0] != x->dims[0] || gr->dims[r + 1] != r)
        return ft_infer_fail(c, "grid '%s' has shape %s; for input '%s' of shape %s it must be [%lld, %s%d] (batch, "
                             "the output's %d spatial sizes, then %d coordinates)", ft_infer_in_name(c, 1),
                             ft_shape_str(gr, sb2), ft_infer_in_name(c, 0), ft_shape_str(x, sb), (long long)x->dims[0],
                             r == 1 ? "O1, " : r == 2 ? "O1, O2, " : "O1, O2, O3, ", r, r, r);
    ft_shape out = *x;
    for (int i = 0; i < r; i++)
        out.dims[2 + i] = gr->dims[1 + i];
    if (ft_numel(&out) > 0 && (st = spatial_nonempty(c)))
        return st;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- kernel-side geometry (infer_pool.h) ------------------------------------------ */

void ft_pool_geom_of(const ft_pool_params *p, const ft_shape *x, const ft_shape *y, ft_pool_geom *g)
{
    int sp = p->sp, off = 3 - sp;
    int same = p->auto_pad == FT_AUTO_PAD_SAME_UPPER || p->auto_pad == FT_AUTO_PAD_SAME_LOWER;
    g->planes = x->dims[0] * x->dims[1];
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = g->pe[i] = 0;
    }
    for (int i = 0; i < sp; i++) {
        int j = off + i;
        g->in[j] = x->dims[2 + i];
        g->out[j] = y->dims[2 + i];
        g->k[j] = p->k[i], g->s[j] = p->s[i], g->d[j] = p->d[i];
        if (same) {
            /* ONNX SAME_*: total padding that makes ceil(in / stride) windows fit;
             * the odd cell goes to the end (UPPER) or the beginning (LOWER). */
            int64_t total = (g->out[j] - 1) * p->s[i] + (p->k[i] - 1) * p->d[i] + 1 - g->in[j];
            if (total < 0)
                total = 0;
            g->pb[j] = p->auto_pad == FT_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
        } else if (p->auto_pad == FT_AUTO_PAD_NOTSET) {
            g->pb[j] = p->pads[i], g->pe[j] = p->pads[sp + i];
        }
    }
}

double ft_resize_scale(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, int d)
{
    /* ONNX: with sizes the scale is output / input, with scales the attribute itself */
    return p->has_scales ? p->scales[d] : (double)os->dims[d] / (double)is->dims[d];
}

/* Taps per output coordinate of an axis: four for cubic, the widened
 * filter's width with antialias. */
static int64_t taps_width(const ft_resize_params *p, double scale)
{
    if (!p->antialias)
        return 4;
    double s = scale < 1 ? scale : 1;
    return -2 * (int64_t)floor((p->cubic ? -2 : -1) / s);
}

/* The antialiasing filter at distance t (in output cells): the triangle of
 * linear, Keys' cubic kernel with cubic_coeff_a. */
static double aa_filter(const ft_resize_params *p, double t)
{
    t = fabs(t);
    if (!p->cubic)
        return t < 1 ? 1 - t : 0;
    double a = p->cubic_a;
    if (t <= 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    return t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0;
}

/* The n antialiased taps at source coordinate x (scale s, at most 1). */
static void aa_taps(const ft_resize_params *p, double s, double x, int64_t in, int64_t n, int64_t *ii, double *ww)
{
    /* the n cells nearest x, the lower ones first on a tie: from the cell
     * left of x (x itself on a cell counts as right of it) */
    int64_t first = (int64_t)ceil(x) - n / 2;
    double sum = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = first + k;
        ww[k] = p->exclude_outside && (i < 0 || i >= in) ? 0 : aa_filter(p, s * ((double)i - x));
        ii[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
        sum += ww[k];
    }
    for (int64_t k = 0; k < n; k++)
        ww[k] = sum != 0 ? ww[k] / sum : 0;
}

void ft_resize_taps_size(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, ft_resize_taps *t)
{
    t->n_span = t->n_tap = 0;
    for (int d = 0; d < is->rank; d++) {
        t->off[d] = t->n_span;
        t->n_span += os->dims[d];
        t->n_tap += os->dims[d] * taps_width(p, ft_resize_scale(p, is, os, d));
    }
    t->bytes = (size_t)t->n_span * sizeof(ft_tap_span) + (size_t)t->n_tap * (sizeof(int64_t) + sizeof(double));
}

void ft_resize_taps_fill(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, const ft_resize_taps *t,
                         void *block)
{
    ft_tap_span *span = block;
    int64_t *idx = (int64_t *)(span + t->n_span), at = 0;
    double *w = (double *)(idx + t->n_tap);
    for (int d = 0; d < is->rank; d++) {
        double scale = ft_resize_scale(p, is, os, d), s = scale < 1 ? scale : 1;
        int64_t in = is->dims[d], out = os->dims[d], width = taps_width(p, scale);
        for (int64_t o = 0; o < out; o++, at += width) {
            ft_tap_span *sp = &span[t->off[d] + o];
            double x = ft_resize_src_coord(p, d, (double)o, scale, in, out);
            sp->at = at;
            sp->n = ft_resize_outside(p, x, in) ? 0 : width;
            if (!sp->n)
                continue;
            if (p->antialias) {
                aa_taps(p, s, x, in, width, idx + at, w + at);
                continue;
            }
            ft_taps c;
            ft_resize_cubic_taps(x, in, p->cubic_a, p->exclude_outside, &c);
            sp->n = c.n;
            for (int k = 0; k < c.n; k++)
                idx[at + k] = c.i[k], w[at + k] = c.w[k];
        }
    }
}

int ft_resize_outside(const ft_resize_params *p, double x, int64_t in)
{
    return p->ct == FT_RESIZE_CT_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(in - 1));
}

/* Source coordinate of output coordinate x on an axis of `in` cells. scale is
 * the attribute's scale, or out/in when sizes were given; the reference
 * computes output_width = scale * in in floating point and uses it (not the
 * integer size) where a mode needs the output length. Same expression order
 * as the reference, so that ties of the nearest modes fall the same way. */
double ft_resize_src_coord(const ft_resize_params *p, int d, double x, double scale, int64_t in, int64_t out)
{
    double ow = scale * (double)in;
    switch (p->ct) {
    case FT_RESIZE_CT_HALF_PIXEL: return (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)out / ow;
        double center = (double)in / 2;
        double offset = center * (1 - adjustment);
        return offset + (x + 0.5) / scale - 0.5;
    }
    case FT_RESIZE_CT_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_ALIGN_CORNERS: return ow == 1 ? 0.0 : x * (double)(in - 1) / (ow - 1);
    case FT_RESIZE_CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    case FT_RESIZE_CT_TF_CROP_AND_RESIZE: {
        double r0 = p->roi_start[d], r1 = p->roi_end[d];
        double xo = ow == 1 ? (r1 - r0) * (double)(in - 1) / 2 : x * (r1 - r0) * (double)(in - 1) / (ow - 1);
        return xo + r0 * (double)(in - 1);
    }
    default: return x / scale; /* asymmetric */
    }
}
