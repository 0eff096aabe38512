/* Shape and dtype inference of the indexing ops: gather_nd, scatter_nd,
 * scatter_elements, one_hot and trilu (cumprod shares cumsum's inference in
 * infer_math.c, hardmax softmax's). Each fills ft_index_params (params.h);
 * the kernels (src/cpu/index.c, src/cuda/index.cu) rely on every check made
 * here and check only the index values, which are data. */
#include "infer_common.h"

#include <string.h>

/* Input i holds indices: i32 or i64. */
static ft_status need_index(ft_infer_ctx *c, int i, const char *what)
{
    if (ft_dtype_in(c->in[i]->dtype, FT_DT_INDEX))
        return FT_OK;
    return ft_infer_fail(c, "%s '%s' have dtype %s; expected i32 or i64", what, ft_infer_in_name(c, i),
                         ft_dtype_name(c->in[i]->dtype));
}

/* The reduction attribute of scatter_nd and scatter_elements. */
static ft_status reduction_attr(ft_infer_ctx *c)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *r = ft_attr(c->node, "reduction")->s;
    for (int i = 0; i < (int)FT_ARRAY_LEN(names); i++)
        if (strcmp(r, names[i]) == 0) {
            c->params->index.reduction = i;
            return FT_OK;
        }
    return ft_infer_fail(c, "attribute 'reduction': unknown reduction '%s' (expected none, add, mul, max or min)", r);
}

/* gather_nd / scatter_nd: data rank >= 1, indices rank >= 1 and their last dim
 * m in 1..rank(data)-b. */
static ft_status nd_indices(ft_infer_ctx *c, int b, int64_t *m)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR];
    ft_status st = need_index(c, 1, "indices");
    if (st)
        return st;
    if (d->rank < 1 || q->rank < 1)
        return ft_infer_fail(c, "data '%s' %s and indices '%s' %s must both have rank >= 1", ft_infer_in_name(c, 0),
                             ft_shape_str(d, db), ft_infer_in_name(c, 1), ft_shape_str(q, qb));
    *m = q->dims[q->rank - 1];
    if (*m < 1 || *m > d->rank - b)
        return ft_infer_fail(c, "the last dim of indices '%s' %s is %lld; it must be 1..%d (the rank of data '%s' %s%s)",
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb), (long long)*m, d->rank - b,
                             ft_infer_in_name(c, 0), ft_shape_str(d, db), b ? " less batch_dims" : "");
    return FT_OK;
}

ft_status ft_infer_gather_nd(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR];
    int64_t b = ft_attr(c->node, "batch_dims")->i, m;
    if (b < 0 || b >= d->rank || b >= q->rank)
        return ft_infer_fail(c, "attribute 'batch_dims' is %lld; it must be 0..%d (less than the ranks of data '%s' %s "
                             "and indices '%s' %s)", (long long)b, (d->rank < q->rank ? d->rank : q->rank) - 1,
                             ft_infer_in_name(c, 0), ft_shape_str(d, db), ft_infer_in_name(c, 1), ft_shape_str(q, qb));
    ft_status st = nd_indices(c, (int)b, &m);
    if (st)
        return st;
    for (int i = 0; i < b; i++)
        if (d->dims[i] != q->dims[i])
            return ft_infer_fail(c, "batch dim %d differs: data '%s' %s has %lld, indices '%s' %s have %lld", i,
                                 ft_infer_in_name(c, 0), ft_shape_str(d, db), (long long)d->dims[i],
                                 ft_infer_in_name(c, 1), ft_shape_str(q, qb), (long long)q->dims[i]);
    int rout = q->rank - 1 + d->rank - (int)(b + m);
    if (rout > FT_MAX_RANK)
        return ft_infer_fail(c, "the result would have rank %d, more than the maximum of %d", rout, FT_MAX_RANK);
    ft_shape out = {.rank = rout};
    int k = 0;
    for (int i = 0; i < q->rank - 1; i++)
        out.dims[k++] = q->dims[i];
    for (int i = (int)(b + m); i < d->rank; i++)
        out.dims[k++] = d->dims[i];
    c->params->index.batch_dims = (int)b;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_scatter_nd(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape, *u = &c->in[2]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR], ub[FT_SHAPE_STR], wb[FT_SHAPE_STR];
    int64_t m;
    ft_status st;
    if ((st = reduction_attr(c)) || (st = nd_indices(c, 0, &m)) || (st = ft_infer_same_dtype(c, 2, 0, "updates")))
        return st;
    ft_shape want = {.rank = q->rank - 1 + d->rank - (int)m};
    int ok = want.rank <= FT_MAX_RANK;
    for (int i = 0, k = 0; ok && i < q->rank - 1; i++)
        want.dims[k++] = q->dims[i];
    for (int i = (int)m; ok && i < d->rank; i++)
        want.dims[q->rank - 1 + i - (int)m] = d->dims[i];
    if (!ok || !ft_shape_eq(&want, u))
        return ft_infer_fail(c, "updates '%s' have shape %s; indices '%s' %s into data '%s' %s need %s (indices' dims "
                             "without the last, then data's dims from %lld)", ft_infer_in_name(c, 2), ft_shape_str(u, ub),
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb), ft_infer_in_name(c, 0), ft_shape_str(d, db),
                             ok ? ft_shape_str(&want, wb) : "a rank above the maximum", (long long)m);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, d);
}

ft_status ft_infer_scatter_elements(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape, *u = &c->in[2]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR], ub[FT_SHAPE_STR];
    int64_t a = ft_attr(c->node, "axis")->i;
    int axis;
    ft_status st;
    if ((st = reduction_attr(c)) || (st = need_index(c, 1, "indices")) ||
        (st = ft_infer_same_dtype(c, 2, 0, "updates")))
        return st;
    if (ft_axis(a, d->rank, &axis) != 0)
        return ft_infer_fail(c, "attribute 'axis' is %lld, out of range for data '%s' of shape %s (valid: %d..%d)",
                             (long long)a, ft_infer_in_name(c, 0), ft_shape_str(d, db), -d->rank, d->rank - 1);
    /* stand-in shapes (a dynamic input): the ranks now, the dims at every run */
    int standin = ft_infer_standin(c);
    if (standin ? q->rank != u->rank : !ft_shape_eq(q, u))
        return ft_infer_fail(c, "updates '%s' of shape %s must have the shape of indices '%s' %s", ft_infer_in_name(c, 2),
                             ft_shape_str(u, ub), ft_infer_in_name(c, 1), ft_shape_str(q, qb));
    if (q->rank != d->rank)
        return ft_infer_fail(c, "indices '%s' of shape %s must have the rank of data '%s' of shape %s (%d, not %d)",
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb), ft_infer_in_name(c, 0), ft_shape_str(d, db),
                             d->rank, q->rank);
    for (int i = 0; i < d->rank && !standin; i++)
        if (i != axis && q->dims[i] > d->dims[i])
            return ft_infer_fail(c, "indices '%s' of shape %s are larger than data '%s' of shape %s on axis %d (%lld > "
                                 "%lld); only axis %d (the scatter axis) may be larger", ft_infer_in_name(c, 1),
                                 ft_shape_str(q, qb), ft_infer_in_name(c, 0), ft_shape_str(d, db), i,
                                 (long long)q->dims[i], (long long)d->dims[i], axis);
    c->params->index.axis = axis;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, d);
}

/* tensor_scatter (ONNX TensorScatter): past_cache [B, ..., max_seq, ...],
 * update of its shape but for seq <= max_seq on axis (not the batch axis 0),
 * write_indices i64 [B] (absent: zeros). */
ft_status ft_infer_tensor_scatter(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *u = &c->in[1]->shape;
    char db[FT_SHAPE_STR], ub[FT_SHAPE_STR], wb[FT_SHAPE_STR];
    int64_t a = ft_attr(c->node, "axis")->i;
    const char *mode = ft_attr(c->node, "mode")->s;
    int axis, circular = strcmp(mode, "circular") == 0;
    ft_status st;
    if (!circular && strcmp(mode, "linear") != 0)
        return ft_infer_fail(c, "attribute 'mode': unknown mode '%s' (expected linear or circular)", mode);
    if ((st = ft_infer_same_dtype(c, 1, 0, "update")))
        return st;
    if (d->rank < 2 || ft_axis(a, d->rank, &axis) != 0 || axis == 0)
        return ft_infer_fail(c, "attribute 'axis' is %lld; for past_cache '%s' of shape %s it must name a dim after "
                             "the batch dim 0 (rank at least 2)", (long long)a, ft_infer_in_name(c, 0),
                             ft_shape_str(d, db));
    int ok = u->rank == d->rank;
    for (int i = 0; ok && i < d->rank; i++)
        ok = i == axis ? u->dims[i] <= d->dims[i] : u->dims[i] == d->dims[i];
    if (!ok)
        return ft_infer_fail(c, "update '%s' of shape %s must have the shape of past_cache '%s' %s but on axis %d, "
                             "where it may be shorter", ft_infer_in_name(c, 1), ft_shape_str(u, ub),
                             ft_infer_in_name(c, 0), ft_shape_str(d, db), axis);
    if (c->n_in > 2 && c->in[2]) {
        const ft_shape *w = &c->in[2]->shape;
        if (c->in[2]->dtype != FT_I64 || w->rank != 1 || w->dims[0] != d->dims[0])
            return ft_infer_fail(c, "write_indices '%s' (%s %s) must be i64 [%lld], one position per batch",
                                 ft_infer_in_name(c, 2), ft_dtype_name(c->in[2]->dtype), ft_shape_str(w, wb),
                                 (long long)d->dims[0]);
    }
    c->params->index.axis = axis;
    c->params->index.circular = circular;
    return ft_infer_set_out(c, 0, c->in[0]->dtype, d);
}

ft_status ft_infer_one_hot(ft_infer_ctx *c)
{
    const ft_shape *q = &c->in[0]->shape, *v = &c->in[1]->shape;
    char qb[FT_SHAPE_STR], vb[FT_SHAPE_STR];
    int64_t a = ft_attr(c->node, "axis")->i;
    int axis, r = q->rank + 1, have;
    if (ft_numel(v) != 2)
        return ft_infer_fail(c, "values '%s' have shape %s; expected two values [off, on]", ft_infer_in_name(c, 1),
                             ft_shape_str(v, vb));
    const ft_attr_val *da; /* the attribute, or input 2's one value */
    ft_status st = ft_infer_ints(c, "depth", 2, &da, &have);
    if (st)
        return st;
    if (have && !da->present)
        return ft_infer_fail(c, "attribute 'depth' is required (or input 2 giving it)");
    if (have && ft_infer_has_in(c, 2) && da->n != 1)
        return ft_infer_fail(c, "input 2 ('%s') gives %d values for depth; expected one", ft_infer_in_name(c, 2),
                             da->n);
    int64_t depth = have ? da->i : 1; /* computed at run time: depth 1 stands in */
    if (depth < 1)
        return ft_infer_fail(c, "attribute 'depth' is %lld; it must be >= 1", (long long)depth);
    if (r > FT_MAX_RANK)
        return ft_infer_fail(c, "indices '%s' of shape %s have rank %d; one_hot adds an axis and the maximum rank is %d",
                             ft_infer_in_name(c, 0), ft_shape_str(q, qb), q->rank, FT_MAX_RANK);
    if (ft_axis(a, r, &axis) != 0)
        return ft_infer_fail(c, "attribute 'axis' is %lld, out of range for the result of rank %d (valid: %d..%d)",
                             (long long)a, r, -r, r - 1);
    ft_shape out = {.rank = r};
    for (int i = 0, k = 0; i < r; i++)
        out.dims[i] = i == axis ? depth : q->dims[k++];
    c->params->index.axis = axis;
    c->params->index.depth = depth;
    return ft_infer_set_out(c, 0, c->in[1]->dtype, &out);
}

ft_status ft_infer_trilu(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char xb[FT_SHAPE_STR];
    int upper;
    ft_status st = ft_infer_flag(c, "upper", &upper);
    if (st)
        return st;
    if (x->rank < 2)
        return ft_infer_fail(c, "input '%s' of shape %s has rank %d; trilu needs rank >= 2 (batches of matrices)",
                             ft_infer_in_name(c, 0), ft_shape_str(x, xb), x->rank);
    c->params->index.upper = upper;
    c->params->index.k = ft_attr(c->node, "k")->i;
    c->out[0] = *c->in[0];
    return FT_OK;
}
