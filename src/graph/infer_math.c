/* Shape and dtype inference of matrix products, reductions and normalisations.
 * The validator has already checked arity and the dtype of input 0; everything
 * else (other inputs' dtypes, ranks, axes, attribute values) is checked here. */
#include "infer_common.h"
#include "infer_math.h"

#include <math.h>
#include <string.h>

static ft_status axis_attr(ft_infer_ctx *c, const char *name, int rank, int *out)
{
    int64_t a = ft_attr(c->node, name)->i;
    if (ft_axis(a, rank, out) != 0) {
        char s[FT_SHAPE_STR];
        if (rank == 0)
            return ft_infer_fail(c, "attribute '%s' = %lld is out of range: input '%s' is a scalar (rank 0) and "
                                 "has no axis", name, (long long)a, ft_infer_in_name(c, 0));
        return ft_infer_fail(c, "attribute '%s' = %lld is out of range for input '%s' of shape %s (rank %d: "
                             "valid axes are %d..%d)", name, (long long)a, ft_infer_in_name(c, 0),
                             ft_shape_str(&c->in[0]->shape, s), rank, -rank, rank - 1);
    }
    return FT_OK;
}

ft_status ft_infer_matmul_shape(ft_infer_ctx *c, int ia, int ib, ft_shape *out)
{
    const ft_shape *a = &c->in[ia]->shape, *b = &c->in[ib]->shape;
    char sa[FT_SHAPE_STR], sb[FT_SHAPE_STR];
    if (a->rank == 0 || b->rank == 0)
        return ft_infer_fail(c, "%s needs inputs of rank >= 1, got a '%s' %s and b '%s' %s", ft_op_name(c->node->op),
                             ft_infer_in_name(c, ia), ft_shape_str(a, sa), ft_infer_in_name(c, ib),
                             ft_shape_str(b, sb));
    int64_t ka = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    if (ka != kb && !ft_infer_standin(c)) /* stand-ins: the run checks */
        return ft_infer_fail(c, "inner dimensions do not agree: a '%s' %s has %lld columns, b '%s' %s has %lld "
                             "rows", ft_infer_in_name(c, ia), ft_shape_str(a, sa), (long long)ka,
                             ft_infer_in_name(c, ib), ft_shape_str(b, sb), (long long)kb);
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
                             ft_infer_in_name(c, ia), ft_shape_str(a, sa), ft_shape_str(&ba, x),
                             ft_infer_in_name(c, ib), ft_shape_str(b, sb), ft_shape_str(&bb, y));
    }
    ft_shape o = bo;
    if (a->rank >= 2)
        o.dims[o.rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        o.dims[o.rank++] = b->dims[b->rank - 1];
    *out = o;
    return ft_infer_check_size(c, &o);
}

/* matmul's and gemm's fused activation (params.h ft_mm_act), by name. */
static const char *const MM_ACT[] = {"none", "relu", "gelu", "gelu_tanh"};

static ft_status mm_activation(ft_infer_ctx *c)
{
    const char *a = ft_attr(c->node, "activation")->s;
    for (size_t i = 0; i < FT_ARRAY_LEN(MM_ACT); i++)
        if (a && strcmp(a, MM_ACT[i]) == 0) {
            c->params->matmul.act = (ft_mm_act)i;
            return FT_OK;
        }
    return ft_infer_fail(c, "attribute 'activation' = '%s' is not one of none, relu, gelu, gelu_tanh", a ? a : "");
}

ft_status ft_infer_matmul(ft_infer_ctx *c)
{
    ft_status st = ft_infer_same_dtype(c, 1, 0, NULL);
    if (st)
        return st;
    ft_shape o;
    if ((st = ft_infer_matmul_shape(c, 0, 1, &o)) || (st = mm_activation(c)))
        return st;
    /* the optional bias: [N], added to every row of the product */
    if (c->n_in > 2 && c->in[2]) {
        if ((st = ft_infer_same_dtype(c, 2, 0, NULL)))
            return st;
        const ft_shape *bs = &c->in[2]->shape;
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (c->in[1]->shape.rank < 2 || bs->rank != 1 || bs->dims[0] != o.dims[o.rank - 1])
            return ft_infer_fail(c, "bias '%s' %s must be 1-D with one value per column of the product %s (and b "
                                 "'%s' must be a matrix)", ft_infer_in_name(c, 2), ft_shape_str(bs, s1),
                                 ft_shape_str(&o, s2), ft_infer_in_name(c, 1));
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

ft_status ft_infer_gemm(ft_infer_ctx *c)
{
    ft_status st = ft_infer_same_dtype(c, 1, 0, NULL);
    if (st)
        return st;
    const ft_shape *a = &c->in[0]->shape, *b = &c->in[1]->shape;
    char sa[FT_SHAPE_STR], sb[FT_SHAPE_STR];
    if (a->rank != 2)
        return ft_infer_fail(c, "gemm needs a 2-D a, got '%s' %s (rank %d)", ft_infer_in_name(c, 0), ft_shape_str(a, sa),
                             a->rank);
    if (b->rank != 2)
        return ft_infer_fail(c, "gemm needs a 2-D b, got '%s' %s (rank %d)", ft_infer_in_name(c, 1), ft_shape_str(b, sb),
                             b->rank);
    int ta = 0, tb = 0;
    if ((st = ft_infer_flag(c, "trans_a", &ta)) || (st = ft_infer_flag(c, "trans_b", &tb)))
        return st;
    ft_matmul_params *mp = &c->params->matmul;
    mp->trans_a = ta, mp->trans_b = tb;
    mp->alpha = ft_attr(c->node, "alpha")->f;
    mp->beta = ft_attr(c->node, "beta")->f;
    if ((st = mm_activation(c)))
        return st;
    int64_t m = ta ? a->dims[1] : a->dims[0], ka = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
    if (ka != kb && !ft_infer_standin(c)) /* stand-ins: the run checks */
        return ft_infer_fail(c, "inner dimensions do not agree: a '%s' %s%s gives K=%lld, b '%s' %s%s gives "
                             "K=%lld", ft_infer_in_name(c, 0), ft_shape_str(a, sa), ta ? " (trans_a=1)" : "", (long long)ka,
                             ft_infer_in_name(c, 1), ft_shape_str(b, sb), tb ? " (trans_b=1)" : "", (long long)kb);
    ft_shape o = {.rank = 2, .dims = {m, nn}};
    if ((st = ft_infer_check_size(c, &o)))
        return st;
    if (c->n_in > 2 && c->in[2]) {
        if ((st = ft_infer_same_dtype(c, 2, 0, NULL)))
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
                                 ft_infer_in_name(c, 2), ft_shape_str(cs, s1), ft_shape_str(&o, s2), (long long)m,
                                 (long long)nn);
        }
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

/* The axes in list ints (n of them, negative counting from the end) as a
 * mask over x's dims; an axis out of range or listed twice fails. */
static ft_status axes_mask(ft_infer_ctx *c, const int64_t *ints, int n, int *red)
{
    const ft_shape *x = &c->in[0]->shape;
    char s[FT_SHAPE_STR];
    for (int i = 0; i < n; i++) {
        int a;
        if (ft_axis(ints[i], x->rank, &a) != 0) {
            if (x->rank == 0)
                return ft_infer_fail(c, "attribute 'axes': axis %lld is out of range: input '%s' is a scalar "
                                     "(rank 0) and has no axis", (long long)ints[i], ft_infer_in_name(c, 0));
            return ft_infer_fail(c, "attribute 'axes': axis %lld is out of range for input '%s' of shape %s "
                                 "(valid axes are %d..%d)", (long long)ints[i], ft_infer_in_name(c, 0),
                                 ft_shape_str(x, s), -x->rank, x->rank - 1);
        }
        if (red[a])
            return ft_infer_fail(c, "attribute 'axes': axis %d is listed twice (as %lld) for input '%s' of "
                                 "shape %s", a, (long long)ints[i], ft_infer_in_name(c, 0), ft_shape_str(x, s));
        red[a] = 1;
    }
    return FT_OK;
}

/* The reduced axes (empty list, noop_with_empty_axes) go to the kernels of
 * both backends as params.reduce.red. */
ft_status ft_infer_reduce(ft_infer_ctx *c)
{
    const ft_attr_val *ax = ft_attr(c->node, "axes");
    const ft_shape *x = &c->in[0]->shape;
    int keep = 0, noop = 0;
    ft_status st;
    if ((st = ft_infer_flag(c, "keepdims", &keep)) || (st = ft_infer_flag(c, "noop_with_empty_axes", &noop)))
        return st;
    int red[FT_MAX_RANK] = {0};
    if ((st = axes_mask(c, ax->ints, ax->n, red)))
        return st;
    if (ax->n == 0 && !noop)
        for (int i = 0; i < x->rank; i++)
            red[i] = 1;
    memcpy(c->params->reduce.red, red, sizeof red);
    c->params->reduce.keepdims = keep;
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
    if ((st = axis_attr(c, "axis", x->rank, &axis)) || (st = ft_infer_flag(c, "keepdims", &keep)) ||
        (st = ft_infer_flag(c, "select_last_index", &last)))
        return st;
    ft_reduce_params *rp = &c->params->reduce;
    rp->axis = axis, rp->keepdims = keep, rp->select_last = last;
    if (x->dims[axis] == 0) {
        char s[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s over an empty axis: axis %d of input '%s' %s has length 0",
                             ft_op_name(c->node->op), axis, ft_infer_in_name(c, 0), ft_shape_str(x, s));
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
    if ((st = axis_attr(c, "axis", c->in[0]->shape.rank, &axis)) || (st = ft_infer_flag(c, "exclusive", &excl)) ||
        (st = ft_infer_flag(c, "reverse", &rev)))
        return st;
    ft_reduce_params *rp = &c->params->reduce;
    rp->axis = axis, rp->exclusive = excl, rp->reverse = rev;
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_softmax(ft_infer_ctx *c)
{
    int axis;
    ft_status st = axis_attr(c, "axis", c->in[0]->shape.rank, &axis);
    if (st)
        return st;
    c->params->norm.axis = axis;
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* scale/bias of a normalisation must broadcast (one way) to x's dims axis..rank-1. */
static ft_status norm_param(ft_infer_ctx *c, int i, const char *what, int axis)
{
    if (i >= c->n_in || !c->in[i])
        return FT_OK;
    ft_status st = ft_infer_same_dtype(c, i, 0, NULL);
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
                             "(axis %d)", what, ft_infer_in_name(c, i), ft_shape_str(p, s1), ft_shape_str(&nd, s2),
                             ft_infer_in_name(c, 0), ft_shape_str(x, s3), axis);
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
    c->params->norm.axis = axis;
    c->params->norm.epsilon = ft_attr(c->node, "epsilon")->f;
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
    c->params->norm.axis = axis;
    c->params->norm.epsilon = ft_attr(c->node, "epsilon")->f;
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* lp_normalization (one axis) and mean_variance_normalization (a set of axes,
 * default [0, 2, 3] as ONNX): params.reduce.red marks the normalised axes. */
ft_status ft_infer_axes_norm(ft_infer_ctx *c)
{
    ft_reduce_params *p = &c->params->reduce;
    ft_status st;
    if (c->node->op == FT_OP_LP_NORMALIZATION) {
        int64_t lp = ft_attr(c->node, "p")->i, axis = ft_attr(c->node, "axis")->i;
        if (lp != 1 && lp != 2)
            return ft_infer_fail(c, "attribute 'p' is %lld; expected 1 or 2", (long long)lp);
        p->lp = (int)lp;
        if ((st = axis_attr(c, "axis", c->in[0]->shape.rank, &p->axis)))
            return st;
        st = axes_mask(c, &axis, 1, p->red);
    } else {
        static const int64_t def[] = {0, 2, 3};
        const ft_attr_val *ax = ft_attr(c->node, "axes");
        const int rank = c->in[0]->shape.rank;
        if (!ax->present && rank < 4)
            return ft_infer_fail(c, "attribute 'axes' is not given: its default [0, 2, 3] needs an input of rank 4 "
                                 "or more, and input '%s' has rank %d", ft_infer_in_name(c, 0), rank);
        st = ax->present ? axes_mask(c, ax->ints, ax->n, p->red) : axes_mask(c, def, 3, p->red);
        p->epsilon = ft_attr(c->node, "epsilon")->f;
    }
    if (st)
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* ---- kernel-side planning of reductions (infer_math.h) ------------------------------ */

ft_rop ft_reduce_op(ft_op op)
{
    /* An if-chain: a switch over ft_op would have to list every op. */
    if (op == FT_OP_REDUCE_MEAN) return R_MEAN;
    if (op == FT_OP_REDUCE_MAX) return R_MAX;
    if (op == FT_OP_REDUCE_MIN) return R_MIN;
    if (op == FT_OP_REDUCE_PROD) return R_PROD;
    if (op == FT_OP_REDUCE_L1) return R_L1;
    if (op == FT_OP_REDUCE_L2) return R_L2;
    if (op == FT_OP_REDUCE_SUM_SQUARE) return R_SUMSQ;
    if (op == FT_OP_REDUCE_LOG_SUM_EXP) return R_LSE;
    if (op == FT_OP_REDUCE_LOG_SUM) return R_LOGSUM;
    return R_SUM;
}

ft_rkind ft_reduce_kind(ft_rop op)
{
    switch (op) {
    case R_SUM: case R_MEAN: case R_LOGSUM: return K_SUM;
    case R_L1: return K_ABS;
    case R_L2: case R_SUMSQ: return K_SQ;
    case R_MAX: case R_LSE: return K_MAX;
    case R_MIN: return K_MIN;
    case R_PROD: return K_PROD;
    }
    return K_SUM;
}

void ft_reduce_plan(const ft_shape *s, const int *red, ft_rplan *p)
{
    int64_t gd[FT_MAX_RANK], gs[FT_MAX_RANK];
    int gr[FT_MAX_RANK], ng = 0;
    int64_t st[FT_MAX_RANK];
    ft_strides(s, st);
    memset(p, 0, sizeof *p);
    p->nred = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] == 1)
            continue;
        if (red[i])
            p->nred *= s->dims[i];
        /* Row-major dims merge with their right neighbour: the merged stride
         * is the inner one's. */
        if (ng && gr[ng - 1] == red[i]) {
            gd[ng - 1] *= s->dims[i];
            gs[ng - 1] = st[i];
        } else {
            gd[ng] = s->dims[i], gs[ng] = st[i], gr[ng] = red[i];
            ng++;
        }
    }
    p->inner = p->L = 1;
    int last = ng;
    if (ng && !gr[ng - 1])
        p->inner = gd[--last];
    else if (ng)
        p->L = gd[--last];
    p->nouter = 1;
    for (int g = 0; g < last; g++) {
        if (gr[g]) {
            p->rdim[p->nr] = gd[g], p->rstr[p->nr++] = gs[g];
        } else {
            p->kdim[p->nk] = gd[g], p->kstr[p->nk++] = gs[g];
            p->nouter *= gd[g];
        }
    }
}

double ft_reduce_identity(ft_rop op, ft_dtype dt)
{
    if (dt == FT_BOOL)
        return op == R_MIN;
    switch (op) {
    case R_MAX: case R_LSE: case R_LOGSUM: return -INFINITY; /* log(0) */
    case R_MIN: return INFINITY;
    case R_PROD: return 1;
    case R_MEAN: return ft_dtype_is_int(dt) ? 0 : NAN;
    case R_SUM: case R_L1: case R_L2: case R_SUMSQ: break;
    }
    return 0;
}

void ft_reduce_around_axis(const ft_shape *s, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < axis; i++)
        *outer *= s->dims[i];
    *len = s->dims[axis];
    for (int i = axis + 1; i < s->rank; i++)
        *inner *= s->dims[i];
}
