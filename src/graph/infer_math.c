/* Shape and dtype inference of matrix products, reductions and normalisations.
 * The validator has already checked arity and the dtype of input 0; everything
 * else (other inputs' dtypes, ranks, axes, attribute values) is checked here. */
#include "graph.h"

#include <string.h>

static const char *tname(const ft_infer_ctx *c, int i) { return c->g->tensors[c->node->in[i]].name; }

/* Input i (when given) must have the dtype of input 0. */
static ft_status same_dtype(ft_infer_ctx *c, int i)
{
    if (c->in[i]->dtype != c->in[0]->dtype)
        return ft_infer_fail(c, "input %d ('%s') has dtype %s but input 0 ('%s') has %s", i, tname(c, i),
                             ft_dtype_name(c->in[i]->dtype), tname(c, 0), ft_dtype_name(c->in[0]->dtype));
    return FT_OK;
}

/* A 0/1 flag attribute. Other values are refused so a typo does not silently
 * mean "true". */
static ft_status flag_attr(ft_infer_ctx *c, const char *name, int *out)
{
    int64_t v = ft_attr(c->node, name)->i;
    if (v != 0 && v != 1)
        return ft_infer_fail(c, "attribute '%s' must be 0 or 1 (got %lld)", name, (long long)v);
    *out = (int)v;
    return FT_OK;
}

/* Products can be far larger than their inputs: refuse sizes the format cannot hold. */
static ft_status check_size(ft_infer_ctx *c, const ft_shape *o)
{
    uint64_t n, bytes;
    if (ft_shape_numel(o, &n) || ft_mul_overflow(n, ft_dtype_size(c->in[0]->dtype), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES) {
        char s[FT_SHAPE_STR];
        return ft_infer_fail(c, "result shape %s is too large (limit %llu bytes)", ft_shape_str(o, s),
                             (unsigned long long)FT_MAX_TENSOR_BYTES);
    }
    return FT_OK;
}

static ft_status axis_attr(ft_infer_ctx *c, const char *name, int rank, int *out)
{
    int64_t a = ft_attr(c->node, name)->i;
    if (ft_axis(a, rank, out) != 0) {
        char s[FT_SHAPE_STR];
        if (rank == 0)
            return ft_infer_fail(c, "attribute '%s' = %lld is out of range: input '%s' is a scalar (rank 0) and "
                                 "has no axis", name, (long long)a, tname(c, 0));
        return ft_infer_fail(c, "attribute '%s' = %lld is out of range for input '%s' of shape %s (rank %d: "
                             "valid axes are %d..%d)", name, (long long)a, tname(c, 0),
                             ft_shape_str(&c->in[0]->shape, s), rank, -rank, rank - 1);
    }
    return FT_OK;
}

ft_status ft_infer_matmul(ft_infer_ctx *c)
{
    ft_status st = same_dtype(c, 1);
    if (st)
        return st;
    const ft_shape *a = &c->in[0]->shape, *b = &c->in[1]->shape;
    char sa[FT_SHAPE_STR], sb[FT_SHAPE_STR];
    if (a->rank == 0 || b->rank == 0)
        return ft_infer_fail(c, "matmul needs inputs of rank >= 1, got a '%s' %s and b '%s' %s", tname(c, 0),
                             ft_shape_str(a, sa), tname(c, 1), ft_shape_str(b, sb));
    int64_t ka = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb)
        return ft_infer_fail(c, "inner dimensions do not agree: a '%s' %s has %lld columns, b '%s' %s has %lld "
                             "rows", tname(c, 0), ft_shape_str(a, sa), (long long)ka, tname(c, 1),
                             ft_shape_str(b, sb), (long long)kb);
    ft_shape ba = {0}, bb = {0}, bo;
    if (a->rank > 2) {
        ba.rank = a->rank - 2;
        memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.rank);
    }
    if (b->rank > 2) {
        bb.rank = b->rank - 2;
        memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
    }
    if (ft_broadcast(&ba, &bb, &bo) != 0) {
        char x[FT_SHAPE_STR], y[FT_SHAPE_STR];
        return ft_infer_fail(c, "batch dimensions do not broadcast: a '%s' %s (batch %s) and b '%s' %s (batch %s)",
                             tname(c, 0), ft_shape_str(a, sa), ft_shape_str(&ba, x), tname(c, 1),
                             ft_shape_str(b, sb), ft_shape_str(&bb, y));
    }
    ft_shape o = bo;
    if (a->rank >= 2)
        o.dims[o.rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o.dims[o.rank++] = b->dims[b->rank - 1];
    if ((st = check_size(c, &o)))
        return st;
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

ft_status ft_infer_gemm(ft_infer_ctx *c)
{
    ft_status st = same_dtype(c, 1);
    if (st)
        return st;
    const ft_shape *a = &c->in[0]->shape, *b = &c->in[1]->shape;
    char sa[FT_SHAPE_STR], sb[FT_SHAPE_STR];
    if (a->rank != 2)
        return ft_infer_fail(c, "gemm needs a 2-D a, got '%s' %s (rank %d)", tname(c, 0), ft_shape_str(a, sa),
                             a->rank);
    if (b->rank != 2)
        return ft_infer_fail(c, "gemm needs a 2-D b, got '%s' %s (rank %d)", tname(c, 1), ft_shape_str(b, sb),
                             b->rank);
    int ta = 0, tb = 0;
    if ((st = flag_attr(c, "trans_a", &ta)) || (st = flag_attr(c, "trans_b", &tb)))
        return st;
    int64_t m = ta ? a->dims[1] : a->dims[0], ka = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
    if (ka != kb)
        return ft_infer_fail(c, "inner dimensions do not agree: a '%s' %s%s gives K=%lld, b '%s' %s%s gives "
                             "K=%lld", tname(c, 0), ft_shape_str(a, sa), ta ? " (trans_a=1)" : "", (long long)ka,
                             tname(c, 1), ft_shape_str(b, sb), tb ? " (trans_b=1)" : "", (long long)kb);
    ft_shape o = {.rank = 2, .dims = {m, nn}};
    if ((st = check_size(c, &o)))
        return st;
    if (c->n_in > 2 && c->in[2]) {
        if ((st = same_dtype(c, 2)))
            return st;
        const ft_shape *cs = &c->in[2]->shape;
        int ok = cs->rank <= 2;
        for (int i = 0; ok && i < cs->rank; i++) {
            int64_t d = cs->dims[i], want = o.dims[2 - cs->rank + i];
            ok = d == want || d == 1;
        }
        if (!ok) {
            char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
            return ft_infer_fail(c, "c '%s' %s does not broadcast to the result shape %s (M=%lld, N=%lld)",
                                 tname(c, 2), ft_shape_str(cs, s1), ft_shape_str(&o, s2), (long long)m,
                                 (long long)nn);
        }
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

/* The CPU kernel (cpu/reduce.c) derives the reduced axes from the same
 * attributes, so the rules here (empty list, noop_with_empty_axes) must match. */
ft_status ft_infer_reduce(ft_infer_ctx *c)
{
    const ft_attr_val *ax = ft_attr(c->node, "axes");
    const ft_shape *x = &c->in[0]->shape;
    int keep = 0, noop = 0;
    ft_status st;
    if ((st = flag_attr(c, "keepdims", &keep)) || (st = flag_attr(c, "noop_with_empty_axes", &noop)))
        return st;
    int red[FT_MAX_RANK] = {0};
    char s[FT_SHAPE_STR];
    for (int i = 0; i < ax->n; i++) {
        int a;
        if (ft_axis(ax->ints[i], x->rank, &a) != 0) {
            if (x->rank == 0)
                return ft_infer_fail(c, "attribute 'axes': axis %lld is out of range: input '%s' is a scalar "
                                     "(rank 0) and has no axis", (long long)ax->ints[i], tname(c, 0));
            return ft_infer_fail(c, "attribute 'axes': axis %lld is out of range for input '%s' of shape %s "
                                 "(valid axes are %d..%d)", (long long)ax->ints[i], tname(c, 0),
                                 ft_shape_str(x, s), -x->rank, x->rank - 1);
        }
        if (red[a])
            return ft_infer_fail(c, "attribute 'axes': axis %d is listed twice (as %lld) for input '%s' of "
                                 "shape %s", a, (long long)ax->ints[i], tname(c, 0), ft_shape_str(x, s));
        red[a] = 1;
    }
    if (ax->n == 0 && !noop)
        for (int i = 0; i < x->rank; i++)
            red[i] = 1;
    ft_shape o = {0};
    for (int i = 0; i < x->rank; i++) {
        if (!red[i])
            o.dims[o.rank++] = x->dims[i];
        else if (keep)
            o.dims[o.rank++] = 1;
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

ft_status ft_infer_arg(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    int axis = 0, keep = 0, last = 0;
    ft_status st;
    if ((st = axis_attr(c, "axis", x->rank, &axis)) || (st = flag_attr(c, "keepdims", &keep)) ||
        (st = flag_attr(c, "select_last_index", &last)))
        return st;
    if (x->dims[axis] == 0) {
        char s[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s over an empty axis: axis %d of input '%s' %s has length 0",
                             ft_op_name(c->node->op), axis, tname(c, 0), ft_shape_str(x, s));
    }
    ft_shape o = {0};
    for (int i = 0; i < x->rank; i++) {
        if (i != axis)
            o.dims[o.rank++] = x->dims[i];
        else if (keep)
            o.dims[o.rank++] = 1;
    }
    c->out[0].dtype = FT_I64;
    c->out[0].shape = o;
    return FT_OK;
}

ft_status ft_infer_cumsum(ft_infer_ctx *c)
{
    int axis = 0, excl = 0, rev = 0;
    ft_status st;
    if ((st = axis_attr(c, "axis", c->in[0]->shape.rank, &axis)) || (st = flag_attr(c, "exclusive", &excl)) ||
        (st = flag_attr(c, "reverse", &rev)))
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_softmax(ft_infer_ctx *c)
{
    int axis;
    ft_status st = axis_attr(c, "axis", c->in[0]->shape.rank, &axis);
    if (st)
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* scale/bias of a normalisation must broadcast (one way) to x's dims axis..rank-1. */
static ft_status norm_param(ft_infer_ctx *c, int i, const char *what, int axis)
{
    if (i >= c->n_in || !c->in[i])
        return FT_OK;
    ft_status st = same_dtype(c, i);
    if (st)
        return st;
    const ft_shape *x = &c->in[0]->shape, *p = &c->in[i]->shape;
    ft_shape nd = {.rank = x->rank - axis};
    memcpy(nd.dims, x->dims + axis, sizeof(int64_t) * (size_t)nd.rank);
    int ok = p->rank <= nd.rank;
    for (int d = 0; ok && d < p->rank; d++) {
        int64_t have = p->dims[d], want = nd.dims[nd.rank - p->rank + d];
        ok = have == want || have == 1;
    }
    if (!ok) {
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR], s3[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s '%s' %s does not broadcast to the normalised dims %s of input '%s' %s "
                             "(axis %d)", what, tname(c, i), ft_shape_str(p, s1), ft_shape_str(&nd, s2),
                             tname(c, 0), ft_shape_str(x, s3), axis);
    }
    return FT_OK;
}

ft_status ft_infer_layer_norm(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    int axis;
    ft_status st;
    if ((st = axis_attr(c, "axis", x->rank, &axis)) || (st = norm_param(c, 1, "scale", axis)) ||
        (st = norm_param(c, 2, "bias", axis)))
        return st;
    c->out[0] = *c->in[0];
    ft_shape stat = *x;
    for (int i = axis; i < x->rank; i++)
        stat.dims[i] = 1;
    for (int i = 1; i < c->n_out; i++) {
        c->out[i].dtype = c->in[0]->dtype;
        c->out[i].shape = stat;
    }
    return FT_OK;
}

ft_status ft_infer_rms_norm(ft_infer_ctx *c)
{
    int axis;
    ft_status st;
    if ((st = axis_attr(c, "axis", c->in[0]->shape.rank, &axis)) || (st = norm_param(c, 1, "scale", axis)))
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}
