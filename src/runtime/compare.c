#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

ft_tol ft_tol_default(ft_dtype dt)
{
    switch (dt) {
    case FT_F64: return (ft_tol){1e-9, 1e-12};
    case FT_F32: return (ft_tol){1e-4, 1e-5};
    case FT_F16: return (ft_tol){1e-2, 1e-3};
    case FT_BF16: return (ft_tol){2e-2, 1e-2};
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_BOOL: return (ft_tol){0, 0};
    case FT_DTYPE_COUNT: break;
    }
    return (ft_tol){0, 0};
}

void ft_compare(const void *got, const void *want, ft_dtype dt, const ft_shape *s, ft_tol tol, ft_cmp *c)
{
    memset(c, 0, sizeof *c);
    c->n = ft_numel(s);
    double worst_excess = -1;
    int is_float = ft_dtype_is_float(dt);
    for (uint64_t i = 0; i < c->n; i++) {
        double x, y;
        int bad;
        if (is_float) {
            x = ft_load_f64(got, dt, (size_t)i);
            y = ft_load_f64(want, dt, (size_t)i);
            if (isnan(x) || isnan(y))
                bad = !(isnan(x) && isnan(y));
            else if (isinf(x) || isinf(y))
                bad = x != y;
            else {
                double d = fabs(x - y);
                if (d > c->max_abs) c->max_abs = d;
                if (y != 0 && d / fabs(y) > c->max_rel) c->max_rel = d / fabs(y);
                bad = d > tol.atol + tol.rtol * fabs(y);
            }
        } else {
            int64_t a = ft_load_i64(got, dt, (size_t)i), b = ft_load_i64(want, dt, (size_t)i);
            x = (double)a, y = (double)b;
            double d = fabs(x - y);
            if (d > c->max_abs) c->max_abs = d;
            if (y != 0 && d / fabs(y) > c->max_rel) c->max_rel = d / fabs(y);
            bad = a != b && d > tol.atol + tol.rtol * fabs(y);
        }
        if (!bad)
            continue;
        if (c->n_bad++ == 0)
            c->first_bad = i;
        double excess = (isnan(x - y) || isinf(x - y)) ? INFINITY : fabs(x - y);
        if (excess > worst_excess) {
            worst_excess = excess;
            c->worst = i;
            c->worst_got = x;
            c->worst_want = y;
        }
    }
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
