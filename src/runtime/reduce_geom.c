#include "reduce_geom.h"

#include <math.h>
#include <string.h>

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
    return R_SUM;
}

ft_rkind ft_reduce_kind(ft_rop op)
{
    switch (op) {
    case R_SUM: case R_MEAN: return K_SUM;
    case R_L1: return K_ABS;
    case R_L2: case R_SUMSQ: return K_SQ;
    case R_MAX: case R_LSE: return K_MAX;
    case R_MIN: return K_MIN;
    case R_PROD: return K_PROD;
    }
    return K_SUM;
}

void ft_reduce_axes(const ft_node *n, int rank, int *red)
{
    const ft_attr_val *ax = ft_attr(n, "axes");
    memset(red, 0, sizeof(int) * FT_MAX_RANK);
    for (int i = 0; i < ax->n; i++) {
        int a;
        if (ft_axis(ax->ints[i], rank, &a) == 0)
            red[a] = 1;
    }
    if (ax->n == 0 && !ft_attr(n, "noop_with_empty_axes")->i)
        for (int i = 0; i < rank; i++)
            red[i] = 1;
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
    case R_MAX: case R_LSE: return -INFINITY;
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
