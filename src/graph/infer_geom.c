/* Shape and dtype inference of the geometry ops: eye_like, reverse_sequence,
 * center_crop_pad, col2im, affine_grid and roi_align. Each fills
 * ft_geom_params (params.h), except center_crop_pad, which fills
 * ft_move_params as pad does and runs pad's kernel. The kernels
 * (src/cpu/geom.c, src/cuda/geom.cu) rely on every check made here and check
 * only data values (sequence lengths, batch indices). */
#include "infer_common.h"

#include <math.h>
#include <string.h>

ft_status ft_infer_eye_like(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    const ft_attr_val *da = ft_attr(c->node, "dtype");
    char xb[FT_SHAPE_STR];
    ft_dtype dt = c->in[0]->dtype;
    char list[160];
    if (da->given && ft_dtype_parse(da->s, &dt) != 0)
        return ft_infer_fail(c, "attribute 'dtype': unknown dtype '%s' (expected %s)", da->s,
                             ft_dtype_mask_str(FT_DT_ANY, list, sizeof list));
    if (x->rank != 2)
        return ft_infer_fail(c, "input '%s' of shape %s has rank %d; eye_like needs a matrix (rank 2)",
                             ft_infer_in_name(c, 0), ft_shape_str(x, xb), x->rank);
    c->params->geom.k = ft_attr(c->node, "k")->i;
    return ft_infer_set_out(c, 0, dt, x);
}

/* Int attribute `name` as an axis of the input (negative counts from the end). */
static ft_status geom_axis(ft_infer_ctx *c, const char *name, int *out)
{
    const ft_shape *x = &c->in[0]->shape;
    int64_t v = ft_attr(c->node, name)->i;
    char xb[FT_SHAPE_STR];
    if (ft_axis(v, x->rank, out) != 0)
        return ft_infer_fail(c, "attribute '%s' is %lld, out of range for input '%s' of shape %s (valid: %d..%d)", name,
                             (long long)v, ft_infer_in_name(c, 0), ft_shape_str(x, xb), -x->rank, x->rank - 1);
    return FT_OK;
}

ft_status ft_infer_reverse_sequence(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape, *l = &c->in[1]->shape;
    char xb[FT_SHAPE_STR], lb[FT_SHAPE_STR];
    int b, t;
    ft_status st;
    if (x->rank < 2)
        return ft_infer_fail(c, "input '%s' of shape %s has rank %d; reverse_sequence needs rank >= 2 (a batch axis "
                             "and a time axis)", ft_infer_in_name(c, 0), ft_shape_str(x, xb), x->rank);
    if ((st = geom_axis(c, "batch_axis", &b)) || (st = geom_axis(c, "time_axis", &t)))
        return st;
    if (b == t)
        return ft_infer_fail(c, "attributes 'batch_axis' and 'time_axis' both name axis %d; they must differ", b);
    if (!ft_dtype_in(c->in[1]->dtype, FT_DT_INDEX))
        return ft_infer_fail(c, "sequence_lens '%s' have dtype %s; expected i32 or i64", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype));
    if (l->rank != 1 || l->dims[0] != x->dims[b])
        return ft_infer_fail(c, "sequence_lens '%s' have shape %s; expected [%lld] (one length per entry of batch axis "
                             "%d of input '%s' %s)", ft_infer_in_name(c, 1), ft_shape_str(l, lb),
                             (long long)x->dims[b], b, ft_infer_in_name(c, 0), ft_shape_str(x, xb));
    c->params->geom.batch_axis = b;
    c->params->geom.time_axis = t;
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_center_crop_pad(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    const ft_attr_val *sa = ft_attr(c->node, "shape"), *aa = ft_attr(c->node, "axes");
    char lb[FT_LIST_STR], xb[FT_SHAPE_STR];
    int ax[FT_MAX_RANK], na = ft_list_given(aa) ? aa->n : x->rank, seen[FT_MAX_RANK] = {0};
    if (na > x->rank)
        return ft_infer_fail(c, "attribute 'axes' %s has %d entries but input '%s' has rank %d", ft_ints_str(aa, lb),
                             aa->n, ft_infer_in_name(c, 0), x->rank);
    for (int i = 0; i < na; i++) {
        if (!ft_list_given(aa))
            ax[i] = i;
        else if (ft_axis(aa->ints[i], x->rank, &ax[i]) != 0)
            return ft_infer_fail(c, "attribute 'axes' %s: %lld is out of range for input '%s' of shape %s (valid: "
                                 "%d..%d)", ft_ints_str(aa, lb), (long long)aa->ints[i], ft_infer_in_name(c, 0),
                                 ft_shape_str(x, xb), -x->rank, x->rank - 1);
        if (seen[ax[i]]++)
            return ft_infer_fail(c, "attribute 'axes' %s names axis %d more than once", ft_ints_str(aa, lb), ax[i]);
    }
    if (sa->n != na)
        return ft_infer_fail(c, "attribute 'shape' %s has %d values; expected %d (one per %s of input '%s' %s)",
                             ft_ints_str(sa, lb), sa->n, na, ft_list_given(aa) ? "listed axis" : "axis",
                             ft_infer_in_name(c, 0), ft_shape_str(x, xb));
    ft_shape out = *x;
    ft_move_params *p = &c->params->move;
    p->pad_mode = FT_PAD_CONSTANT;
    p->pad_value = 0;
    for (int i = 0; i < na; i++) {
        int64_t dim = x->dims[ax[i]], want = sa->ints[i];
        if (want < 0)
            return ft_infer_fail(c, "attribute 'shape' %s: size %lld for axis %d is negative", ft_ints_str(sa, lb),
                                 (long long)want, ax[i]);
        /* centred: the odd element of a crop or a pad goes to the end */
        int64_t lo = (dim > want ? dim - want : want - dim) / 2, hi = (dim > want ? dim - want : want - dim) - lo;
        p->pb[ax[i]] = dim > want ? -lo : lo;
        p->pe[ax[i]] = dim > want ? -hi : hi;
        out.dims[ax[i]] = want;
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* Optional list attribute `name` of r values >= lo (def when absent). */
static ft_status list_attr(ft_infer_ctx *c, const char *name, int want, int64_t lo, int64_t def, int64_t *v)
{
    const ft_attr_val *a = ft_attr(c->node, name);
    char lb[FT_LIST_STR];
    if (!ft_list_given(a)) {
        for (int i = 0; i < want; i++)
            v[i] = def;
        return FT_OK;
    }
    if (a->n != want)
        return ft_infer_fail(c, "attribute '%s' %s has %d values; expected %d", name, ft_ints_str(a, lb), a->n, want);
    for (int i = 0; i < want; i++) {
        if (a->ints[i] < lo || a->ints[i] > ((int64_t)1 << 31))
            return ft_infer_fail(c, "attribute '%s' %s: value %lld is out of range (%lld..2^31)", name,
                                 ft_ints_str(a, lb), (long long)a->ints[i], (long long)lo);
        v[i] = a->ints[i];
    }
    return FT_OK;
}

ft_status ft_infer_col2im(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    const ft_attr_val *ia = ft_attr(c->node, "image_shape"), *ba = ft_attr(c->node, "block_shape");
    char xb[FT_SHAPE_STR], lb[FT_LIST_STR], lb2[FT_LIST_STR];
    ft_geom_params *p = &c->params->geom;
    int r = ia->n;
    int64_t pads[2 * FT_MAX_RANK];
    ft_status st;
    if (x->rank != 3)
        return ft_infer_fail(c, "input '%s' of shape %s has rank %d; col2im needs [N, C*prod(block_shape), L]",
                             ft_infer_in_name(c, 0), ft_shape_str(x, xb), x->rank);
    if (r < 1 || r > FT_MAX_RANK - 2 || ba->n != r)
        return ft_infer_fail(c, "attributes 'image_shape' %s and 'block_shape' %s must have the same number of values, "
                             "1 to %d", ft_ints_str(ia, lb), ft_ints_str(ba, lb2), FT_MAX_RANK - 2);
    if ((st = list_attr(c, "image_shape", r, 1, 1, p->img)) || (st = list_attr(c, "block_shape", r, 1, 1, p->blk)) ||
        (st = list_attr(c, "dilations", r, 1, 1, p->d)) || (st = list_attr(c, "strides", r, 1, 1, p->s)) ||
        (st = list_attr(c, "pads", 2 * r, 0, 0, pads)))
        return st;
    int64_t kprod = 1, L = 1;
    ft_shape out = {.rank = r + 2, .dims = {x->dims[0]}};
    for (int i = 0; i < r; i++) {
        int64_t span = p->d[i] * (p->blk[i] - 1) + 1, room = p->img[i] + pads[i] + pads[r + i];
        if (room < span)
            return ft_infer_fail(c, "spatial dim %d: the block spans %lld (block_shape %lld, dilation %lld) but the "
                                 "padded image has only %lld", i, (long long)span, (long long)p->blk[i],
                                 (long long)p->d[i], (long long)room);
        p->nb[i] = (room - span) / p->s[i] + 1;
        p->pb[i] = pads[i];
        if (__builtin_mul_overflow(kprod, p->blk[i], &kprod) || __builtin_mul_overflow(L, p->nb[i], &L))
            return ft_infer_fail(c, "the block size or the number of blocks overflows (image_shape %s, block_shape %s)",
                                 ft_ints_str(ia, lb), ft_ints_str(ba, lb2));
        out.dims[2 + i] = p->img[i];
    }
    if (x->dims[1] % kprod != 0 || x->dims[2] != L)
        return ft_infer_fail(c, "input '%s' has shape %s; expected [N, C*%lld, %lld] (dim 1 a multiple of the block "
                             "size %lld, dim 2 the number of blocks, %lld)", ft_infer_in_name(c, 0),
                             ft_shape_str(x, xb), (long long)kprod, (long long)L, (long long)kprod, (long long)L);
    out.dims[1] = x->dims[1] / kprod;
    p->r = r;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_affine_grid(ft_infer_ctx *c)
{
    const ft_shape *t = &c->in[0]->shape;
    const ft_attr_val *sz = ft_attr(c->node, "size");
    char tb[FT_SHAPE_STR], lb[FT_LIST_STR];
    ft_status st;
    int r = sz->n - 2;
    if (r != 2 && r != 3)
        return ft_infer_fail(c, "attribute 'size' %s has %d values; expected 4 ([N, C, H, W]) or 5 ([N, C, D, H, W])",
                             ft_ints_str(sz, lb), sz->n);
    if ((st = ft_infer_flag(c, "align_corners", &c->params->geom.align_corners)))
        return st;
    for (int i = 0; i < sz->n; i++)
        if (sz->ints[i] < 0)
            return ft_infer_fail(c, "attribute 'size' %s: value %lld is negative", ft_ints_str(sz, lb),
                                 (long long)sz->ints[i]);
    if (t->rank != 3 || t->dims[0] != sz->ints[0] || t->dims[1] != r || t->dims[2] != r + 1)
        return ft_infer_fail(c, "theta '%s' has shape %s; size %s needs [%lld, %d, %d]", ft_infer_in_name(c, 0),
                             ft_shape_str(t, tb), ft_ints_str(sz, lb), (long long)sz->ints[0], r, r + 1);
    ft_shape out = {.rank = r + 2, .dims = {sz->ints[0]}};
    for (int i = 0; i < r; i++)
        out.dims[1 + i] = sz->ints[2 + i];
    out.dims[r + 1] = r;
    c->params->geom.r = r;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_roi_align(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape, *q = &c->in[1]->shape, *b = &c->in[2]->shape;
    char xb[FT_SHAPE_STR], qb[FT_SHAPE_STR], bb[FT_SHAPE_STR];
    ft_geom_params *p = &c->params->geom;
    const char *mode = ft_attr(c->node, "mode")->s, *ct = ft_attr(c->node, "coordinate_transformation_mode")->s;
    ft_status st;
    if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
        return ft_infer_fail(c, "attribute 'mode': unknown mode '%s' (expected avg or max)", mode);
    if (strcmp(ct, "half_pixel") != 0 && strcmp(ct, "output_half_pixel") != 0)
        return ft_infer_fail(c, "attribute 'coordinate_transformation_mode': unknown mode '%s' (expected half_pixel or "
                             "output_half_pixel)", ct);
    p->roi_mode = strcmp(mode, "max") == 0 ? FT_ROI_MAX : FT_ROI_AVG;
    p->half_pixel = strcmp(ct, "half_pixel") == 0;
    p->oh = ft_attr(c->node, "output_height")->i;
    p->ow = ft_attr(c->node, "output_width")->i;
    p->sampling = ft_attr(c->node, "sampling_ratio")->i;
    p->scale = ft_attr(c->node, "spatial_scale")->f;
    if (p->oh < 1 || p->ow < 1 || p->oh > ((int64_t)1 << 31) || p->ow > ((int64_t)1 << 31))
        return ft_infer_fail(c, "attributes 'output_height' %lld and 'output_width' %lld must be 1..2^31",
                             (long long)p->oh, (long long)p->ow);
    if (p->sampling < 0 || p->sampling > FT_ROI_GRID_MAX)
        return ft_infer_fail(c, "attribute 'sampling_ratio' is %lld; it must be 0 (adaptive) to %d",
                             (long long)p->sampling, FT_ROI_GRID_MAX);
    if (!isfinite(p->scale))
        return ft_infer_fail(c, "attribute 'spatial_scale' is %g; it must be finite", p->scale);
    if (x->rank != 4)
        return ft_infer_fail(c, "input '%s' of shape %s has rank %d; roi_align needs [N, C, H, W]",
                             ft_infer_in_name(c, 0), ft_shape_str(x, xb), x->rank);
    if ((st = ft_infer_same_dtype(c, 1, 0, "rois")))
        return st;
    if (q->rank != 2 || q->dims[1] != 4)
        return ft_infer_fail(c, "rois '%s' have shape %s; expected [num_rois, 4] (x1, y1, x2, y2)",
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb));
    if (!ft_dtype_in(c->in[2]->dtype, FT_DT_INDEX))
        return ft_infer_fail(c, "batch_indices '%s' have dtype %s; expected i32 or i64", ft_infer_in_name(c, 2),
                             ft_dtype_name(c->in[2]->dtype));
    if (b->rank != 1 || b->dims[0] != q->dims[0])
        return ft_infer_fail(c, "batch_indices '%s' have shape %s; expected [%lld] (one per row of rois '%s' %s)",
                             ft_infer_in_name(c, 2), ft_shape_str(b, bb), (long long)q->dims[0],
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb));
    ft_shape out = {.rank = 4, .dims = {q->dims[0], x->dims[1], p->oh, p->ow}};
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}
