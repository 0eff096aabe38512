#include "shape.h"

#include <stdio.h>
#include <string.h>

int ft_shape_numel(const ft_shape *s, uint64_t *n)
{
    /* As in NumPy, the other dims of an empty shape must still multiply within
     * bounds ([0, 2^62, 9] is refused): every product of dims of an accepted
     * shape then fits in int64, 0 or not. */
    uint64_t p = 1;
    int empty = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] == 0)
            empty = 1;
        else if (s->dims[i] < 0 || __builtin_mul_overflow(p, (uint64_t)s->dims[i], &p) || p > FT_MAX_TENSOR_BYTES)
            return 1;
    }
    *n = empty ? 0 : p;
    return 0;
}

uint64_t ft_numel(const ft_shape *s)
{
    uint64_t p = 1;
    for (int i = 0; i < s->rank; i++)
        p *= (uint64_t)s->dims[i];
    return p;
}

int ft_shape_eq(const ft_shape *a, const ft_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

const char *ft_shape_str(const ft_shape *s, char *buf)
{
    size_t len = 0;
    buf[len++] = '[';
    for (int i = 0; i < s->rank && len < FT_SHAPE_STR - 24; i++)
        len += (size_t)snprintf(buf + len, FT_SHAPE_STR - len, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    buf[len++] = ']';
    buf[len] = 0;
    return buf;
}

const char *ft_index_str(uint64_t flat, const ft_shape *s, char *buf)
{
    ft_shape idx = *s;
    for (int i = s->rank - 1; i >= 0; i--) {
        uint64_t d = (uint64_t)s->dims[i];
        idx.dims[i] = d ? (int64_t)(flat % d) : 0;
        flat = d ? flat / d : 0;
    }
    return ft_shape_str(&idx, buf);
}

int ft_broadcast(const ft_shape *a, const ft_shape *b, ft_shape *out)
{
    ft_shape r;
    r.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r.rank; i++) {
        int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1)
            r.dims[i] = da;
        else if (da == 1)
            r.dims[i] = db;
        else
            return -1;
    }
    *out = r;
    return 0;
}

int ft_axis(int64_t axis, int rank, int *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return -1;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

void ft_strides(const ft_shape *s, int64_t *strides)
{
    int64_t st = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
}

void ft_broadcast_strides(const ft_shape *in, const ft_shape *out, int64_t *strides)
{
    int64_t own[FT_MAX_RANK];
    ft_strides(in, own);
    for (int i = 0; i < out->rank; i++) {
        int j = in->rank - out->rank + i;
        strides[i] = (j < 0 || in->dims[j] == 1) ? 0 : own[j];
    }
}

int ft_broadcast_merge(const ft_shape *out, int nin, const ft_shape *const *in, int64_t *dims, int64_t (*st)[FT_MAX_RANK],
                       unsigned *inner)
{
    int64_t bst[8][FT_MAX_RANK];
    for (int j = 0; j < nin; j++)
        ft_broadcast_strides(in[j], out, bst[j]);
    int r = 0;
    for (int d = 0; d < out->rank; d++) {
        const int64_t dim = out->dims[d];
        if (dim == 1)
            continue;
        int merge = r > 0;
        for (int j = 0; j < nin && merge; j++)
            merge = st[j][r - 1] == bst[j][d] * dim;
        if (merge) {
            dims[r - 1] *= dim;
            for (int j = 0; j < nin; j++)
                st[j][r - 1] = bst[j][d];
            continue;
        }
        dims[r] = dim;
        for (int j = 0; j < nin; j++)
            st[j][r] = bst[j][d];
        r++;
    }
    if (r == 0) { /* a scalar or all dims 1: one element */
        dims[0] = 1;
        for (int j = 0; j < nin; j++)
            st[j][0] = 0;
        r = 1;
    }
    *inner = 0;
    for (int j = 0; j < nin; j++)
        if (st[j][r - 1] != 0)
            *inner |= 1u << j;
    return r;
}

void ft_shape_span(int r, int64_t *start, int64_t *end)
{
    int64_t a = *start < 0 ? *start + r : *start, b = *end < 0 ? *end + r : *end;
    a = a < 0 ? 0 : a > r ? r : a;
    b = b < 0 ? 0 : b > r ? r : b;
    *start = a;
    *end = b < a ? a : b;
}
