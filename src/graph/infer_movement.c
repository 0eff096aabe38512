/* Shape and dtype inference of the shape and data-movement ops (reshape ... pad);
 * the CPU kernels in src/cpu/movement.c rely on every check made here. The
 * dtype of input 0 has already been checked against the op table's mask. */
#include "infer_common.h"
#include "infer_movement.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Normalise entry `v` of list attribute `attr` against `rank`. */
static ft_status list_axis(ft_infer_ctx *c, const char *attr, const ft_attr_val *a, int64_t v, int rank,
                           const char *what, int *out)
{
    char lb[FT_LIST_STR];
    if (ft_axis(v, rank, out) != 0) {
        if (rank == 0)
            return ft_infer_fail(c, "attribute '%s' %s: axis %lld is out of range: %s has rank 0 (no axes)",
                                 attr, ft_ints_str(a, lb), (long long)v, what);
        return ft_infer_fail(c, "attribute '%s' %s: axis %lld is out of range for %s of rank %d (valid: %d..%d)",
                             attr, ft_ints_str(a, lb), (long long)v, what, rank, -rank, rank - 1);
    }
    return FT_OK;
}

/* Normalise every entry of list attribute `attr` into ax[], refusing repeats. */
static ft_status list_axes(ft_infer_ctx *c, const char *attr, const ft_attr_val *a, int rank, const char *what,
                           int *ax)
{
    char lb[FT_LIST_STR];
    int seen[FT_MAX_RANK] = {0};
    if (a->n > rank)
        return ft_infer_fail(c, "attribute '%s' %s has %d entries but %s has rank %d", attr, ft_ints_str(a, lb), a->n,
                             what, rank);
    for (int i = 0; i < a->n; i++) {
        ft_status s = list_axis(c, attr, a, a->ints[i], rank, what, &ax[i]);
        if (s)
            return s;
        if (seen[ax[i]])
            return ft_infer_fail(c, "attribute '%s' %s names axis %d more than once", attr, ft_ints_str(a, lb), ax[i]);
        seen[ax[i]] = 1;
    }
    return FT_OK;
}

/* Single int attribute `attr` as an axis of a tensor of `rank`. */
static ft_status int_axis(ft_infer_ctx *c, const char *attr, int rank, int *out)
{
    int64_t v = ft_attr(c->node, attr)->i;
    char sb[FT_SHAPE_STR];
    if (ft_axis(v, rank, out) != 0) {
        if (rank == 0)
            return ft_infer_fail(c, "attribute '%s' is %lld but input '%s' is a scalar (rank 0, no axes)", attr,
                                 (long long)v, ft_infer_in_name(c, 0));
        return ft_infer_fail(c, "attribute '%s' is %lld, out of range for input '%s' of shape %s (valid: %d..%d)",
                             attr, (long long)v, ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, sb), -rank,
                             rank - 1);
    }
    return FT_OK;
}

static ft_status index_dtype(ft_infer_ctx *c, int i)
{
    if (!ft_dtype_in(c->in[i]->dtype, FT_DT_INDEX))
        return ft_infer_fail(c, "indices ('%s') have dtype %s; expected i32 or i64", ft_infer_in_name(c, i),
                             ft_dtype_name(c->in[i]->dtype));
    return FT_OK;
}

/* Stand-in for an output whose shape-giving input is computed at run time
 * (inferred at load; the executor infers the true one at every run): rank
 * dims, all of the input's elements on the first. */
static ft_status stand_in(ft_infer_ctx *c, int rank, const ft_shape *like)
{
    ft_shape o = {.rank = rank};
    for (int d = 0; d < rank; d++)
        o.dims[d] = like ? (d < like->rank ? like->dims[d] : 1) : d ? 1 : (int64_t)ft_numel(&c->in[0]->shape);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &o);
}

/* The shape-giving list of attribute name or input 1 (ft_infer_ints), or
 * the failure when neither gives it. */
static ft_status list_param(ft_infer_ctx *c, const char *name, const ft_attr_val **a, int *known)
{
    ft_status st = ft_infer_ints(c, name, 1, a, known);
    if (!st && !(*a)->present && *known)
        return ft_infer_fail(c, "attribute '%s' is required (or input 1 giving it)", name);
    return st;
}

ft_status ft_infer_reshape(ft_infer_ctx *c)
{
    const ft_attr_val *a;
    int have;
    ft_status st = list_param(c, "shape", &a, &have);
    if (st)
        return st;
    if (!have)
        return stand_in(c, (int)ft_numel(&c->in[1]->shape), NULL);
    int allowzero = ft_attr(c->node, "allowzero")->i != 0;
    const ft_shape *in = &c->in[0]->shape;
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR], ob[FT_SHAPE_STR];
    if (a->n > FT_MAX_RANK)
        return ft_infer_fail(c, "attribute 'shape' %s has %d dims; at most %d are supported", ft_ints_str(a, lb), a->n,
                             FT_MAX_RANK);
    ft_shape out = {.rank = a->n};
    int infer_at = -1, raw_zero = -1;
    uint64_t known = 1;
    for (int i = 0; i < a->n; i++) {
        int64_t v = a->ints[i];
        if (v == -1) {
            if (infer_at >= 0)
                return ft_infer_fail(c, "attribute 'shape' %s has more than one -1 (dims %d and %d); only one dim "
                                     "can be inferred", ft_ints_str(a, lb), infer_at, i);
            infer_at = i;
            out.dims[i] = 1;
            continue;
        }
        if (v < -1)
            return ft_infer_fail(c, "attribute 'shape' %s: dim %d is %lld; dims must be >= 0, or -1 to infer one",
                                 ft_ints_str(a, lb), i, (long long)v);
        if (v == 0) {
            raw_zero = i;
            if (!allowzero) {
                if (i >= in->rank)
                    return ft_infer_fail(c, "attribute 'shape' %s: dim %d is 0, which copies input dim %d, but input "
                                         "'%s' has shape %s (rank %d); set allowzero=1 for a size-0 dim",
                                         ft_ints_str(a, lb), i, i, ft_infer_in_name(c, 0), ft_shape_str(in, ib), in->rank);
                v = in->dims[i];
            }
        }
        out.dims[i] = v;
        if (ft_mul_overflow(known, (uint64_t)v, &known))
            return ft_infer_fail(c, "attribute 'shape' %s: the product of the dims overflows", ft_ints_str(a, lb));
    }
    if (allowzero && raw_zero >= 0 && infer_at >= 0)
        return ft_infer_fail(c, "attribute 'shape' %s has both 0 (dim %d) and -1 (dim %d), which allowzero=1 does "
                             "not allow", ft_ints_str(a, lb), raw_zero, infer_at);
    uint64_t n_in = ft_numel(in);
    if (infer_at >= 0) {
        if (known == 0)
            return ft_infer_fail(c, "attribute 'shape' %s: cannot infer the -1 dim because the other dims multiply "
                                 "to 0 (input '%s' has shape %s, %llu elements)", ft_ints_str(a, lb), ft_infer_in_name(c, 0),
                                 ft_shape_str(in, ib), (unsigned long long)n_in);
        if (n_in % known != 0)
            return ft_infer_fail(c, "cannot reshape input '%s' of shape %s (%llu elements) into %s: %llu is not a "
                                 "multiple of %llu, the product of the other dims", ft_infer_in_name(c, 0),
                                 ft_shape_str(in, ib), (unsigned long long)n_in, ft_ints_str(a, lb),
                                 (unsigned long long)n_in, (unsigned long long)known);
        out.dims[infer_at] = (int64_t)(n_in / known);
        known = n_in;
    }
    if (known != n_in)
        return ft_infer_fail(c, "cannot reshape input '%s' of shape %s (%llu elements) into shape %s (%s: %llu "
                             "elements)", ft_infer_in_name(c, 0), ft_shape_str(in, ib), (unsigned long long)n_in,
                             ft_ints_str(a, lb), ft_shape_str(&out, ob), (unsigned long long)known);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_transpose(ft_infer_ctx *c)
{
    const ft_attr_val *a = ft_attr(c->node, "perm");
    const ft_shape *in = &c->in[0]->shape;
    int r = in->rank, perm[FT_MAX_RANK];
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    if (a->present) {
        if (a->n != r)
            return ft_infer_fail(c, "attribute 'perm' %s has %d entries but input '%s' of shape %s has rank %d",
                                 ft_ints_str(a, lb), a->n, ft_infer_in_name(c, 0), ft_shape_str(in, ib), r);
        ft_status s = list_axes(c, "perm", a, r, "the input", perm);
        if (s)
            return s;
    } else {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    }
    ft_shape out = {.rank = r};
    for (int i = 0; i < r; i++)
        out.dims[i] = in->dims[perm[i]];
    memcpy(c->params->move.perm, perm, sizeof(int) * (size_t)r);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_flatten(ft_infer_ctx *c)
{
    const ft_shape *in = &c->in[0]->shape;
    int64_t axis = ft_attr(c->node, "axis")->i;
    int r = in->rank;
    char ib[FT_SHAPE_STR];
    if (axis < -r || axis > r)
        return ft_infer_fail(c, "attribute 'axis' is %lld, out of range for input '%s' of shape %s (valid: %d..%d)",
                             (long long)axis, ft_infer_in_name(c, 0), ft_shape_str(in, ib), -r, r);
    if (axis < 0)
        axis += r;
    ft_shape out = {.rank = 2, .dims = {1, 1}};
    for (int i = 0; i < r; i++)
        out.dims[i < axis ? 0 : 1] *= in->dims[i];
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_squeeze(ft_infer_ctx *c)
{
    const ft_attr_val *a = ft_attr(c->node, "axes");
    const ft_shape *in = &c->in[0]->shape;
    int r = in->rank, drop[FT_MAX_RANK] = {0};
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    if (ft_list_given(a)) {
        int ax[FT_MAX_RANK];
        ft_status s = list_axes(c, "axes", a, r, "the input", ax);
        if (s)
            return s;
        for (int i = 0; i < a->n; i++) {
            if (in->dims[ax[i]] != 1)
                return ft_infer_fail(c, "attribute 'axes' %s: cannot squeeze axis %d of input '%s' of shape %s: its "
                                     "size is %lld, not 1", ft_ints_str(a, lb), ax[i], ft_infer_in_name(c, 0),
                                     ft_shape_str(in, ib), (long long)in->dims[ax[i]]);
            drop[ax[i]] = 1;
        }
    } else {
        for (int i = 0; i < r; i++)
            drop[i] = in->dims[i] == 1;
    }
    ft_shape out = {.rank = 0};
    for (int i = 0; i < r; i++)
        if (!drop[i])
            out.dims[out.rank++] = in->dims[i];
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_unsqueeze(ft_infer_ctx *c)
{
    const ft_attr_val *a = ft_attr(c->node, "axes");
    const ft_shape *in = &c->in[0]->shape;
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    int rout = in->rank + a->n;
    if (rout > FT_MAX_RANK)
        return ft_infer_fail(c, "attribute 'axes' %s adds %d dims to input '%s' of shape %s: rank %d exceeds the "
                             "maximum of %d", ft_ints_str(a, lb), a->n, ft_infer_in_name(c, 0), ft_shape_str(in, ib), rout,
                             FT_MAX_RANK);
    int ax[FT_MAX_RANK], added[FT_MAX_RANK] = {0};
    ft_status s = list_axes(c, "axes", a, rout, "the output", ax);
    if (s)
        return s;
    for (int i = 0; i < a->n; i++)
        added[ax[i]] = 1;
    ft_shape out = {.rank = rout};
    for (int i = 0, j = 0; i < rout; i++)
        out.dims[i] = added[i] ? 1 : in->dims[j++];
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_expand(ft_infer_ctx *c)
{
    const ft_attr_val *a;
    int known;
    ft_status st = list_param(c, "shape", &a, &known);
    if (st)
        return st;
    const ft_shape *in = &c->in[0]->shape;
    if (!known) { /* the input's dims, aligned right */
        int r = (int)ft_numel(&c->in[1]->shape);
        ft_shape like = {.rank = r > in->rank ? r : in->rank};
        for (int d = 0; d < like.rank; d++) {
            int k = d - (like.rank - in->rank);
            like.dims[d] = k >= 0 ? in->dims[k] : 1;
        }
        return stand_in(c, like.rank, &like);
    }
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    if (a->n > FT_MAX_RANK)
        return ft_infer_fail(c, "attribute 'shape' %s has %d dims; at most %d are supported", ft_ints_str(a, lb), a->n,
                             FT_MAX_RANK);
    ft_shape want = {.rank = a->n}, out;
    for (int i = 0; i < a->n; i++) {
        if (a->ints[i] < 0)
            return ft_infer_fail(c, "attribute 'shape' %s: dim %d is %lld; dims must be >= 0", ft_ints_str(a, lb), i,
                                 (long long)a->ints[i]);
        want.dims[i] = a->ints[i];
    }
    if (ft_broadcast(in, &want, &out) != 0)
        return ft_infer_fail(c, "cannot expand input '%s' of shape %s to shape %s: the shapes do not broadcast "
                             "(each pair of dims, aligned from the right, must be equal or contain a 1)",
                             ft_infer_in_name(c, 0), ft_shape_str(in, ib), ft_ints_str(a, lb));
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_tile(ft_infer_ctx *c)
{
    const ft_attr_val *a;
    int known;
    ft_status st = list_param(c, "repeats", &a, &known);
    if (st)
        return st;
    const ft_shape *in = &c->in[0]->shape;
    if (!known)
        return stand_in(c, in->rank, in);
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    if (a->n != in->rank)
        return ft_infer_fail(c, "attribute 'repeats' %s has %d entries but input '%s' of shape %s has rank %d",
                             ft_ints_str(a, lb), a->n, ft_infer_in_name(c, 0), ft_shape_str(in, ib), in->rank);
    ft_shape out = {.rank = in->rank};
    for (int i = 0; i < a->n; i++) {
        int64_t d;
        if (a->ints[i] < 0)
            return ft_infer_fail(c, "attribute 'repeats' %s: entry %d is %lld; repeats must be >= 0",
                                 ft_ints_str(a, lb), i, (long long)a->ints[i]);
        if (__builtin_mul_overflow(in->dims[i], a->ints[i], &d))
            return ft_infer_fail(c, "attribute 'repeats' %s: axis %d of size %lld repeated %lld times overflows",
                                 ft_ints_str(a, lb), i, (long long)in->dims[i], (long long)a->ints[i]);
        out.dims[i] = d;
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_concat(ft_infer_ctx *c)
{
    const ft_shape *s0 = &c->in[0]->shape;
    char ab[FT_SHAPE_STR], bb[FT_SHAPE_STR];
    int axis;
    for (int i = 1; i < c->n_in; i++) {
        if (!c->in[i])
            return ft_infer_fail(c, "input %d is omitted; every input of concat must be given", i);
        if (c->in[i]->dtype != c->in[0]->dtype)
            return ft_infer_fail(c, "input %d ('%s') has dtype %s but input 0 ('%s') has %s", i, ft_infer_in_name(c, i),
                                 ft_dtype_name(c->in[i]->dtype), ft_infer_in_name(c, 0), ft_dtype_name(c->in[0]->dtype));
        if (c->in[i]->shape.rank != s0->rank)
            return ft_infer_fail(c, "input %d ('%s') has shape %s (rank %d) but input 0 ('%s') has shape %s (rank %d); "
                                 "concat needs inputs of equal rank", i, ft_infer_in_name(c, i),
                                 ft_shape_str(&c->in[i]->shape, ab), c->in[i]->shape.rank, ft_infer_in_name(c, 0),
                                 ft_shape_str(s0, bb), s0->rank);
    }
    ft_status st = int_axis(c, "axis", s0->rank, &axis);
    if (st)
        return st;
    c->params->move.axis = axis;
    ft_shape out = *s0;
    int standin = ft_infer_standin(c);
    for (int i = 1; i < c->n_in; i++) {
        const ft_shape *si = &c->in[i]->shape;
        for (int d = 0; d < s0->rank; d++)
            if (d != axis && si->dims[d] != s0->dims[d] && standin) {
                /* stand-ins that disagree: the larger stands in, the run checks */
                if (si->dims[d] > out.dims[d])
                    out.dims[d] = si->dims[d];
            } else if (d != axis && si->dims[d] != s0->dims[d])
                return ft_infer_fail(c, "input %d ('%s') has shape %s but input 0 ('%s') has shape %s: they differ on "
                                     "axis %d, and only axis %d (the concat axis) may differ", i, ft_infer_in_name(c, i),
                                     ft_shape_str(si, ab), ft_infer_in_name(c, 0), ft_shape_str(s0, bb), d, axis);
        if (__builtin_add_overflow(out.dims[axis], si->dims[axis], &out.dims[axis]))
            return ft_infer_fail(c, "the sizes of the inputs on axis %d overflow when added", axis);
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_split(ft_infer_ctx *c)
{
    const ft_attr_val *sp, *no = ft_attr(c->node, "num_outputs");
    const ft_shape *in = &c->in[0]->shape;
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    int axis, nout = c->n_out, have;
    ft_status st = int_axis(c, "axis", in->rank, &axis);
    if (!st)
        st = ft_infer_ints(c, "split", 1, &sp, &have); /* the attribute, or input 1's sizes */
    if (st)
        return st;
    c->params->move.axis = axis;
    int64_t dim = in->dims[axis];
    ft_shape out = *in;
    if (!have) { /* sizes computed at run time: each output stands in as the whole input */
        for (int i = 0; i < nout; i++)
            if ((st = ft_infer_set_out(c, i, c->in[0]->dtype, in)))
                return st;
        return FT_OK;
    }
    if (ft_list_given(sp) && no->present)
        return ft_infer_fail(c, "attributes 'split' %s and 'num_outputs' %lld are both given; give one of them",
                             ft_ints_str(sp, lb), (long long)no->i);
    if (ft_list_given(sp)) {
        if (sp->n != nout)
            return ft_infer_fail(c, "attribute 'split' %s has %d sizes but the node has %d output%s",
                                 ft_ints_str(sp, lb), sp->n, nout, nout == 1 ? "" : "s");
        int64_t sum = 0;
        for (int i = 0; i < sp->n; i++) {
            if (sp->ints[i] < 0)
                return ft_infer_fail(c, "attribute 'split' %s: size %d is %lld; sizes must be >= 0",
                                     ft_ints_str(sp, lb), i, (long long)sp->ints[i]);
            if (__builtin_add_overflow(sum, sp->ints[i], &sum))
                return ft_infer_fail(c, "attribute 'split' %s: the sizes overflow when added", ft_ints_str(sp, lb));
        }
        if (sum != dim && !ft_infer_standin(c)) /* a stand-in's axis: the run checks */
            return ft_infer_fail(c, "attribute 'split' %s sums to %lld but axis %d of input '%s' (shape %s) has size "
                                 "%lld", ft_ints_str(sp, lb), (long long)sum, axis, ft_infer_in_name(c, 0), ft_shape_str(in, ib),
                                 (long long)dim);
        for (int i = 0; i < nout; i++) {
            out.dims[axis] = sp->ints[i];
            if ((st = ft_infer_set_out(c, i, c->in[0]->dtype, &out)))
                return st;
        }
        return FT_OK;
    }
    if (no->present) {
        if (no->i < 1)
            return ft_infer_fail(c, "attribute 'num_outputs' is %lld; it must be >= 1", (long long)no->i);
        if (no->i != nout)
            return ft_infer_fail(c, "attribute 'num_outputs' is %lld but the node has %d output%s", (long long)no->i,
                                 nout, nout == 1 ? "" : "s");
        /* ONNX 18: chunks of ceil(dim / n), the last one takes what is left. */
        int64_t chunk = dim / nout + (dim % nout != 0);
        int64_t last = dim - chunk * (nout - 1);
        if (last < 0)
            return ft_infer_fail(c, "attribute 'num_outputs' %d cannot split axis %d of input '%s' (shape %s, size "
                                 "%lld): chunks of ceil(%lld/%d) = %lld leave %lld for the last output", nout, axis,
                                 ft_infer_in_name(c, 0), ft_shape_str(in, ib), (long long)dim, (long long)dim, nout,
                                 (long long)chunk, (long long)last);
        for (int i = 0; i < nout; i++) {
            out.dims[axis] = i == nout - 1 ? last : chunk;
            if ((st = ft_infer_set_out(c, i, c->in[0]->dtype, &out)))
                return st;
        }
        return FT_OK;
    }
    if (dim % nout != 0)
        return ft_infer_fail(c, "axis %d of input '%s' (shape %s) has size %lld, which does not split into %d equal "
                             "parts; give 'split' sizes or 'num_outputs'", axis, ft_infer_in_name(c, 0), ft_shape_str(in, ib),
                             (long long)dim, nout);
    out.dims[axis] = dim / nout;
    for (int i = 0; i < nout; i++)
        if ((st = ft_infer_set_out(c, i, c->in[0]->dtype, &out)))
            return st;
    return FT_OK;
}

/* ONNX Slice bounds on one axis: negative start/end count from the end, then
 * clamp to [0, dim] (step > 0) or start to [0, dim-1] and end to [-1, dim-1]
 * (step < 0). Same arithmetic as slice_range() in src/cpu/movement.c. */
int64_t ft_slice_len(int64_t dim, int64_t start, int64_t end, int64_t step)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        end = end < 0 ? 0 : end > dim ? dim : end;
        return end > start ? (int64_t)((uint64_t)(end - start - 1) / (uint64_t)step) + 1 : 0;
    }
    if (dim == 0)
        return 0;
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    return start > end ? (int64_t)((uint64_t)(start - end - 1) / (0 - (uint64_t)step)) + 1 : 0;
}

/* First index of an ONNX Slice on one axis of size dim (ft_slice_len gives the length). */
int64_t ft_slice_first(int64_t dim, int64_t start, int64_t step)
{
    if (start < 0)
        start += dim;
    if (step > 0)
        return start < 0 ? 0 : start > dim ? dim : start;
    return start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
}

ft_status ft_infer_slice(ft_infer_ctx *c)
{
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    const ft_attr_val *v[4];
    int known = 1;
    for (int i = 0; i < 4; i++) {
        int k;
        ft_status st = ft_infer_ints(c, names[i], i + 1, &v[i], &k);
        if (st)
            return st;
        known &= k;
    }
    const ft_attr_val *sa = v[0], *ea = v[1], *aa = v[2], *pa = v[3];
    const ft_shape *in = &c->in[0]->shape;
    if (!known) /* at most the input */
        return stand_in(c, in->rank, in);
    if (!sa->present || !ea->present)
        return ft_infer_fail(c, "'starts' and 'ends' are required (attributes, or inputs 1 and 2)");
    char lb[FT_LIST_STR], lb2[FT_LIST_STR], ib[FT_SHAPE_STR];
    int n = sa->n, ax[FT_MAX_RANK];
    if (ea->n != n)
        return ft_infer_fail(c, "attributes 'starts' %s and 'ends' %s have different lengths (%d and %d)",
                             ft_ints_str(sa, lb), ft_ints_str(ea, lb2), n, ea->n);
    if (aa->present && aa->n != n)
        return ft_infer_fail(c, "attribute 'axes' %s has %d entries but 'starts' %s has %d", ft_ints_str(aa, lb), aa->n,
                             ft_ints_str(sa, lb2), n);
    if (pa->present && pa->n != n)
        return ft_infer_fail(c, "attribute 'steps' %s has %d entries but 'starts' %s has %d", ft_ints_str(pa, lb),
                             pa->n, ft_ints_str(sa, lb2), n);
    if (aa->present) {
        ft_status s = list_axes(c, "axes", aa, in->rank, "the input", ax);
        if (s)
            return s;
    } else {
        if (n > in->rank)
            return ft_infer_fail(c, "attribute 'starts' %s has %d entries but input '%s' of shape %s has rank %d",
                                 ft_ints_str(sa, lb), n, ft_infer_in_name(c, 0), ft_shape_str(in, ib), in->rank);
        for (int i = 0; i < n; i++)
            ax[i] = i;
    }
    ft_shape out = *in;
    for (int i = 0; i < n; i++) {
        int64_t step = pa->present ? pa->ints[i] : 1;
        if (step == 0)
            return ft_infer_fail(c, "attribute 'steps' %s: entry %d (axis %d) is 0; steps must be nonzero",
                                 ft_ints_str(pa, lb), i, ax[i]);
        out.dims[ax[i]] = ft_slice_len(in->dims[ax[i]], sa->ints[i], ea->ints[i], step);
    }
    ft_move_params *p = &c->params->move;
    for (int d = 0; d < in->rank; d++)
        p->first[d] = 0, p->step[d] = 1;
    for (int i = 0; i < n; i++) {
        p->step[ax[i]] = pa->present ? pa->ints[i] : 1;
        p->first[ax[i]] = ft_slice_first(in->dims[ax[i]], sa->ints[i], p->step[ax[i]]);
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* gather and gather_elements: integer indices, and the axis of the data. */
static ft_status gather_axis(ft_infer_ctx *c, int *axis)
{
    ft_status st = index_dtype(c, 1);
    if (st || (st = int_axis(c, "axis", c->in[0]->shape.rank, axis)))
        return st;
    c->params->move.axis = *axis;
    return FT_OK;
}

ft_status ft_infer_gather(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR];
    int axis;
    ft_status st = gather_axis(c, &axis);
    if (st)
        return st;
    int rout = d->rank - 1 + q->rank;
    if (rout > FT_MAX_RANK)
        return ft_infer_fail(c, "data '%s' of shape %s gathered with indices '%s' of shape %s gives rank %d, more "
                             "than the maximum of %d", ft_infer_in_name(c, 0), ft_shape_str(d, db), ft_infer_in_name(c, 1),
                             ft_shape_str(q, qb), rout, FT_MAX_RANK);
    ft_shape out = {.rank = rout};
    int k = 0;
    for (int i = 0; i < axis; i++)
        out.dims[k++] = d->dims[i];
    for (int i = 0; i < q->rank; i++)
        out.dims[k++] = q->dims[i];
    for (int i = axis + 1; i < d->rank; i++)
        out.dims[k++] = d->dims[i];
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

ft_status ft_infer_gather_elements(ft_infer_ctx *c)
{
    const ft_shape *d = &c->in[0]->shape, *q = &c->in[1]->shape;
    char db[FT_SHAPE_STR], qb[FT_SHAPE_STR];
    int axis;
    ft_status st = gather_axis(c, &axis);
    if (st)
        return st;
    if (q->rank != d->rank)
        return ft_infer_fail(c, "indices '%s' of shape %s must have the rank of data '%s' of shape %s (%d, not %d)",
                             ft_infer_in_name(c, 1), ft_shape_str(q, qb), ft_infer_in_name(c, 0), ft_shape_str(d, db), d->rank,
                             q->rank);
    for (int i = 0; i < d->rank; i++)
        if (i != axis && q->dims[i] > d->dims[i])
            return ft_infer_fail(c, "indices '%s' of shape %s are larger than data '%s' of shape %s on axis %d (%lld > "
                                 "%lld); only axis %d (the gather axis) may be larger", ft_infer_in_name(c, 1),
                                 ft_shape_str(q, qb), ft_infer_in_name(c, 0), ft_shape_str(d, db), i, (long long)q->dims[i],
                                 (long long)d->dims[i], axis);
    return ft_infer_set_out(c, 0, c->in[0]->dtype, q);
}

ft_status ft_infer_pad(ft_infer_ctx *c)
{
    const ft_attr_val *pa, *aa = ft_attr(c->node, "axes");
    const char *mode = ft_attr(c->node, "mode")->s;
    const ft_shape *in = &c->in[0]->shape;
    char lb[FT_LIST_STR], ib[FT_SHAPE_STR];
    int r = in->rank, ax[FT_MAX_RANK], na, have;
    int reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0, wrap = strcmp(mode, "wrap") == 0;
    if (!reflect && !edge && !wrap && strcmp(mode, "constant") != 0)
        return ft_infer_fail(c, "attribute 'mode': unknown mode '%s' (expected constant, reflect, edge or wrap)",
                             mode);
    const ft_attr_val *va;
    int have_v, have_a;
    ft_status st = list_param(c, "pads", &pa, &have);
    if (!st) /* the constant value (input 2) and the axes (input 3) may come with every run */
        st = ft_infer_floats(c, "value", 2, 0, &va, &have_v);
    if (!st)
        st = ft_infer_ints(c, "axes", 3, &aa, &have_a);
    if (st)
        return st;
    if (ft_infer_has_in(c, 2) && c->in[2]->dtype != c->in[0]->dtype)
        return ft_infer_fail(c, "the value '%s' has dtype %s but input '%s' has %s", ft_infer_in_name(c, 2),
                             ft_dtype_name(c->in[2]->dtype), ft_infer_in_name(c, 0), ft_dtype_name(c->in[0]->dtype));
    if (have_v && ft_infer_has_in(c, 2) && va->n != 1)
        return ft_infer_fail(c, "the value (input 2, '%s') holds %d values; expected one", ft_infer_in_name(c, 2),
                             va->n);
    if (!have || !have_a) /* pads or axes computed at run time: the input's shape stands in */
        return stand_in(c, r, in);
    const char *what = ft_infer_has_in(c, 1) ? "pads (input 1)" : "attribute 'pads'";
    if (ft_list_given(aa)) {
        ft_status s = list_axes(c, ft_infer_has_in(c, 3) ? "axes (input 3)" : "axes", aa, r, "the input", ax);
        if (s)
            return s;
        na = aa->n;
    } else {
        na = r;
        for (int i = 0; i < r; i++)
            ax[i] = i;
    }
    if (pa->n != 2 * na)
        return ft_infer_fail(c, "%s %s has %d values; expected %d (all begins, then all ends, for the "
                             "%d %s of input '%s' of shape %s)", what, ft_ints_str(pa, lb), pa->n, 2 * na, na,
                             ft_list_given(aa) ? "listed axes" : "axes", ft_infer_in_name(c, 0), ft_shape_str(in, ib));
    ft_shape out = *in;
    for (int i = 0; i < na; i++) {
        int64_t dim = in->dims[ax[i]], b = pa->ints[i], e = pa->ints[i + na], od;
        if (__builtin_add_overflow(dim, b, &od) || __builtin_add_overflow(od, e, &od))
            return ft_infer_fail(c, "%s %s: pads %lld (begin) and %lld (end) on axis %d of size %lld "
                                 "overflow the output size", what, ft_ints_str(pa, lb), (long long)b, (long long)e, ax[i],
                                 (long long)dim);
        if (b < -dim || e < -dim || od < 0)
            return ft_infer_fail(c, "%s %s: pads %lld (begin) and %lld (end) on axis %d do not fit its "
                                 "size %lld (negative pads may crop at most the whole axis)", what, ft_ints_str(pa, lb),
                                 (long long)b, (long long)e, ax[i], (long long)dim);
        /* Negative pads crop first; reflect, edge and wrap then read the cropped input. */
        int64_t kept = dim + (b < 0 ? b : 0) + (e < 0 ? e : 0);
        if (kept < 0)
            return ft_infer_fail(c, "%s %s: pads %lld (begin) and %lld (end) crop more than the size "
                                 "%lld of axis %d", what, ft_ints_str(pa, lb), (long long)b, (long long)e, (long long)dim,
                                 ax[i]);
        if (reflect && (b >= kept || e >= kept) && (b > 0 || e > 0))
            return ft_infer_fail(c, "%s %s: mode 'reflect' needs each pad smaller than the axis, but "
                                 "axis %d has size %lld%s and pads %lld (begin) and %lld (end)", what, ft_ints_str(pa, lb),
                                 ax[i], (long long)kept, kept != dim ? " after cropping" : "", (long long)b,
                                 (long long)e);
        if ((edge || wrap) && kept == 0 && (b > 0 || e > 0))
            return ft_infer_fail(c, "%s %s: mode '%s' cannot pad axis %d: it is empty (size %lld%s)",
                                 what, ft_ints_str(pa, lb), mode, ax[i], (long long)kept,
                                 kept != dim ? " after cropping" : "");
        out.dims[ax[i]] = od;
    }
    ft_move_params *p = &c->params->move;
    p->pad_mode = reflect ? FT_PAD_REFLECT : edge ? FT_PAD_EDGE : wrap ? FT_PAD_WRAP : FT_PAD_CONSTANT;
    p->pad_value = have_v ? va->f : 0; /* a run-time value not read yet: the node is inferred again first */
    for (int i = 0; i < na; i++) {
        p->pb[ax[i]] = pa->ints[i];
        p->pe[ax[i]] = pa->ints[i + na];
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* depth_to_space (DCR or CRD) and space_to_depth on [N, C, H, W] with blocksize b
 * (ONNX DepthToSpace, SpaceToDepth): the output is [N, C/b^2, H*b, W*b] or
 * [N, C*b^2, H/b, W/b]. */
ft_status ft_infer_depth_space(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    const char *opn = ft_op_name(c->node->op);
    int to_space = c->node->op == FT_OP_DEPTH_TO_SPACE;
    char sb[FT_SHAPE_STR];
    int64_t b = ft_attr(c->node, "blocksize")->i;
    if (x->rank != 4)
        return ft_infer_fail(c, "input '%s' has shape %s (rank %d); %s needs rank 4 [N, C, H, W]",
                             ft_infer_in_name(c, 0), ft_shape_str(x, sb), x->rank, opn);
    if (b < 1 || b > ((int64_t)1 << 31))
        return ft_infer_fail(c, "attribute 'blocksize' is %lld; expected 1 to 2^31", (long long)b);
    ft_move_params *p = &c->params->move;
    p->block = b;
    p->crd = 0;
    ft_shape out = *x;
    uint64_t bb = (uint64_t)b * (uint64_t)b, big;
    if (to_space) {
        const char *mode = ft_attr(c->node, "mode")->s;
        if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
            return ft_infer_fail(c, "attribute 'mode': unknown value '%s' (expected DCR or CRD)", mode);
        p->crd = mode[0] == 'C';
        if ((uint64_t)x->dims[1] % bb)
            return ft_infer_fail(c, "input '%s' of shape %s: channels %lld are not a multiple of blocksize^2 = %llu",
                                 ft_infer_in_name(c, 0), ft_shape_str(x, sb), (long long)x->dims[1],
                                 (unsigned long long)bb);
        out.dims[1] = (int64_t)((uint64_t)x->dims[1] / bb);
        for (int i = 2; i < 4; i++) {
            if (ft_mul_overflow((uint64_t)x->dims[i], (uint64_t)b, &big) || big > (uint64_t)FT_MAX_TENSOR_BYTES)
                return ft_infer_fail(c, "input '%s' of shape %s: axis %d times blocksize %lld is too large",
                                     ft_infer_in_name(c, 0), ft_shape_str(x, sb), i, (long long)b);
            out.dims[i] = (int64_t)big;
        }
    } else {
        if (x->dims[2] % b || x->dims[3] % b)
            return ft_infer_fail(c, "input '%s' of shape %s: the spatial sizes %lld x %lld are not multiples of "
                                 "blocksize %lld", ft_infer_in_name(c, 0), ft_shape_str(x, sb), (long long)x->dims[2],
                                 (long long)x->dims[3], (long long)b);
        if (ft_mul_overflow((uint64_t)x->dims[1], bb, &big) || big > (uint64_t)FT_MAX_TENSOR_BYTES)
            return ft_infer_fail(c, "input '%s' of shape %s: channels times blocksize^2 is too large",
                                 ft_infer_in_name(c, 0), ft_shape_str(x, sb));
        out.dims[1] = (int64_t)big;
        out.dims[2] = x->dims[2] / b;
        out.dims[3] = x->dims[3] / b;
    }
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &out);
}

/* ---- kernel-side strided copies (infer_movement.h) --------------------------------- */

int64_t ft_xfer_simplify(ft_xfer *x)
{
    int r = 0;
    int64_t total = 1;
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] == 0) {
            x->rank = 0;
            return 0;
        }
        total *= x->dims[i];
        if (x->dims[i] == 1)
            continue;
        if (r > 0 && x->ss[r - 1] == x->ss[i] * x->dims[i] && x->ds[r - 1] == x->ds[i] * x->dims[i]) {
            x->dims[r - 1] *= x->dims[i];
            x->ss[r - 1] = x->ss[i];
            x->ds[r - 1] = x->ds[i];
        } else {
            x->dims[r] = x->dims[i];
            x->ss[r] = x->ss[i];
            x->ds[r] = x->ds[i];
            r++;
        }
    }
    x->rank = r;
    return total;
}

void ft_xfer_init(ft_xfer *x, const ft_shape *s)
{
    memset(x, 0, sizeof *x);
    x->rank = s->rank;
    ft_strides(s, x->ds);
    ft_strides(s, x->ss);
    for (int i = 0; i < s->rank; i++)
        x->dims[i] = s->dims[i];
}

void ft_xfer_transpose(ft_xfer *x, const int *perm, const ft_shape *in, const ft_shape *out)
{
    int64_t is[FT_MAX_RANK];
    ft_strides(in, is);
    ft_xfer_init(x, out);
    for (int i = 0; i < in->rank; i++)
        x->ss[i] = is[perm[i]];
}

void ft_xfer_expand(ft_xfer *x, const ft_shape *in, const ft_shape *out)
{
    ft_xfer_init(x, out);
    ft_broadcast_strides(in, out, x->ss);
}

void ft_xfer_tile(ft_xfer *x, const ft_shape *in, const ft_shape *out)
{
    /* out[r*d + j] along each axis is in[j]: view the output as (repeat, dim)
     * pairs and broadcast the input over the repeat dims. */
    int64_t is[FT_MAX_RANK], os[FT_MAX_RANK];
    ft_strides(in, is);
    ft_strides(out, os);
    memset(x, 0, sizeof *x);
    x->rank = 2 * in->rank;
    for (int i = 0; i < in->rank; i++) {
        x->dims[2 * i] = in->dims[i] ? out->dims[i] / in->dims[i] : 0;
        x->dims[2 * i + 1] = in->dims[i];
        x->ss[2 * i] = 0;
        x->ss[2 * i + 1] = is[i];
        x->ds[2 * i] = in->dims[i] * os[i];
        x->ds[2 * i + 1] = os[i];
    }
}

int64_t ft_xfer_part(ft_xfer *x, const ft_shape *part, const ft_shape *whole, int axis, int64_t *off, int whole_is_dst)
{
    int64_t ws[FT_MAX_RANK], at;
    ft_strides(whole, ws);
    ft_xfer_init(x, part);
    memcpy(whole_is_dst ? x->ds : x->ss, ws, sizeof ws);
    at = *off * ws[axis];
    *off += part->dims[axis];
    return at;
}

void ft_xfer_depth_space(ft_xfer *x, const ft_move_params *p, int to_space, const ft_shape *in, const ft_shape *out)
{
    /* The output as a contiguous 6-D box; source strides of the input [N, C, H, W]. */
    int64_t b = p->block, sn = in->dims[1] * in->dims[2] * in->dims[3], sc = in->dims[2] * in->dims[3],
            sh = in->dims[3];
    memset(x, 0, sizeof *x);
    x->rank = 6;
    if (to_space) {
        /* out [N, C', H, b, W, b]: y[n, c, h*b+i, w*b+j] = x[n, ch(c, i, j), h, w] */
        int64_t cp = out->dims[1], d[6] = {in->dims[0], cp, in->dims[2], b, in->dims[3], b};
        int64_t ss[6] = {sn, p->crd ? b * b * sc : sc, sh, p->crd ? b * sc : b * cp * sc, 1, p->crd ? sc : cp * sc};
        memcpy(x->dims, d, sizeof d), memcpy(x->ss, ss, sizeof ss);
    } else {
        /* out [N, b, b, C, H', W']: y[n, (i*b + j)*C + c, h, w] = x[n, c, h*b+i, w*b+j] */
        int64_t d[6] = {in->dims[0], b, b, in->dims[1], out->dims[2], out->dims[3]};
        int64_t ss[6] = {sn, sh, 1, sc, b * sh, b};
        memcpy(x->dims, d, sizeof d), memcpy(x->ss, ss, sizeof ss);
    }
    int64_t st = 1;
    for (int i = 5; i >= 0; i--)
        x->ds[i] = st, st *= x->dims[i];
}

int ft_xfer_slice(ft_xfer *x, const ft_move_params *p, const ft_shape *in, const ft_shape *out, int64_t *base)
{
    int64_t is[FT_MAX_RANK];
    ft_strides(in, is);
    ft_xfer_init(x, out);
    *base = 0;
    for (int d = 0; d < in->rank; d++) {
        if (out->dims[d] == 0)
            return 0;
        *base += p->first[d] * is[d];
        /* one element: the stride is never used, and a huge step would overflow */
        x->ss[d] = out->dims[d] > 1 ? is[d] * p->step[d] : 0;
    }
    return 1;
}

void ft_pad_value(double v, ft_dtype dt, unsigned char *buf)
{
    double lo = 0, hi = 0;
    switch (dt) {
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: case FT_BOOL:
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1:
        ft_store_f64(buf, dt, 0, v); /* the small floats: rounded and saturated as cast does */
        return;
    case FT_I4: lo = -8.0, hi = 7.0; break;
    case FT_U4: lo = 0.0, hi = 15.0; break;
    case FT_I2: lo = -2.0, hi = 1.0; break;
    case FT_U2: lo = 0.0, hi = 3.0; break;
    case FT_I64: {
        int64_t x = isnan(v) ? 0 : v >= 9223372036854775808.0 ? INT64_MAX : v < -9223372036854775808.0 ? INT64_MIN
                                                                                                     : (int64_t)v;
        ft_store_i64(buf, dt, 0, x);
        return;
    }
    case FT_I8: lo = -128.0, hi = 127.0; break;
    case FT_I16: lo = -32768.0, hi = 32767.0; break;
    case FT_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case FT_U8: lo = 0.0, hi = 255.0; break;
    case FT_U16: lo = 0.0, hi = 65535.0; break;
    case FT_U32: lo = 0.0, hi = 4294967295.0; break;
    case FT_U64: { /* saturate to [0, 2^64 - 1] */
        uint64_t u = isnan(v) || v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
        memcpy(buf, &u, sizeof u);
        return;
    }
    case FT_STRING: case FT_DTYPE_COUNT: return;
    }
    double x = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
    ft_store_i64(buf, dt, 0, (int64_t)x);
}
