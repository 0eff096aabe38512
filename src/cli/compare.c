#include "compare.h"
#include "../graph/elem.h"

#include "../graph/graph.h"
#include "../graph/str.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

ft_tol ft_tol_default(ft_dtype dt)
{
    switch (dt) {
    case FT_F64: return (ft_tol){1e-9, 1e-12, 1};
    case FT_F32: return (ft_tol){1e-4, 1e-5, 1};
    case FT_F16: return (ft_tol){1e-2, 1e-3, 1};
    case FT_BF16: return (ft_tol){2e-2, 1e-2, 1};
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64: case FT_BOOL:
    case FT_I4: case FT_U4: case FT_I2: case FT_U2:
        return (ft_tol){0, 0, 0};
    /* the 8- and 4-bit floats: exact (one unit in their last place is 6 to 25 %) */
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1:
        return (ft_tol){0, 0, 1};
    case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return (ft_tol){0, 0, 0};
}

ft_tol ft_tol_choose(ft_dtype dt, int have_rtol, double rtol, int have_atol, double atol)
{
    ft_tol t = ft_tol_default(dt);
    if (have_rtol)
        t.rtol = rtol;
    if (have_atol) {
        t.atol = atol;
        t.scaled = 0;
    }
    return t;
}

void ft_compare(const void *got, const void *want, ft_dtype dt, const ft_shape *s, ft_tol tol, ft_cmp *c)
{
    memset(c, 0, sizeof *c);
    c->n = ft_numel(s);
    if (dt == FT_STRING) { /* equal or not; interned, so equal pointers */
        const ft_str *const *g = got, *const *w = want;
        for (uint64_t i = 0; i < c->n; i++)
            if (g[i] != w[i] && c->n_bad++ == 0) {
                c->first_bad = c->worst = i;
                c->first_got_str = g[i];
                c->first_want_str = w[i];
            }
        return;
    }
    double worst_excess = -1;
    int is_float = ft_dtype_is_float(dt) || ft_dtype_in(dt, FT_DT_LOWF);
    c->scale = 1;
    for (uint64_t i = 0; i < c->n && is_float && tol.scaled; i++) {
        double y = fabs(ft_load_f64(want, dt, (size_t)i));
        if (isfinite(y) && y > c->scale)
            c->scale = y;
    }
    tol.atol *= c->scale;
    c->atol = tol.atol;
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
            /* u64 above INT64_MAX: its value, not its wrapped bits; the
             * difference exact in uint64 (never 0 when a != b) */
            int ua = ft_dtype_is_uint(dt) ? (uint64_t)a > (uint64_t)b : a > b;
            x = ft_load_f64(got, dt, (size_t)i), y = ft_load_f64(want, dt, (size_t)i);
            double d = (double)(ua ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a);
            if (d > c->max_abs) c->max_abs = d;
            if (y != 0 && d / fabs(y) > c->max_rel) c->max_rel = d / fabs(y);
            bad = a != b && d > tol.atol + tol.rtol * fabs(y);
        }
        if (!bad)
            continue;
        if (c->n_bad++ == 0) {
            c->first_bad = i;
            c->first_got = x;
            c->first_want = y;
        }
        double excess = (isnan(x - y) || isinf(x - y)) ? INFINITY : fabs(x - y);
        if (excess > worst_excess) {
            worst_excess = excess;
            c->worst = i;
            c->worst_got = x;
            c->worst_want = y;
        }
    }
}

static const char *num(double v, ft_dtype dt, char *buf, size_t n)
{
    snprintf(buf, n, ft_dtype_is_float(dt) ? (dt == FT_F64 ? "%.17g" : "%.9g") : "%.0f", v);
    return buf;
}

const char *ft_tol_str(const ft_cmp *c, ft_tol tol, char *buf, size_t n)
{
    if (tol.scaled && c->scale > 1)
        snprintf(buf, n, "%g: %g x max |expected| %g", c->atol, tol.atol, c->scale);
    else
        snprintf(buf, n, "%g", tol.atol);
    return buf;
}

void ft_compare_shaped(const void *got, const ft_shape *got_s, const void *want, const ft_shape *want_s, ft_dtype dt,
                       ft_tol tol, ft_cmp *out)
{
    if (ft_shape_eq(got_s, want_s)) {
        ft_compare(got, want, dt, want_s, tol, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->n_bad = 1;
    out->shape_differs = 1;
    out->got_shape = *got_s;
}

int ft_shape_fits(const struct ft_tensor *t, const ft_shape *s)
{
    return (t->flags & FT_TF_DYNAMIC) ? s->rank == t->shape.rank : ft_shape_eq(s, &t->shape);
}

const char *ft_cmp_str(const ft_cmp *c, ft_dtype dt, const ft_shape *s, ft_tol tol, char *buf, size_t n)
{
    char i1[FT_SHAPE_STR], i2[FT_SHAPE_STR], a[40], b[40], d[40], e[40], at[96];
    int len;
    if (c->shape_differs) {
        snprintf(buf, n, "the run gave shape %s, expected %s", ft_shape_str(&c->got_shape, i1), ft_shape_str(s, i2));
        return buf;
    }
    ft_tol_str(c, tol, at, sizeof at);
    if (dt == FT_STRING) {
        const ft_str *g = c->first_got_str, *w = c->first_want_str;
        if (!c->n_bad)
            snprintf(buf, n, "%llu string%s match", (unsigned long long)c->n, c->n == 1 ? "" : "s");
        else
            snprintf(buf, n, "%llu of %llu strings differ; first at %s (got '%.*s', expected '%.*s')",
                     (unsigned long long)c->n_bad, (unsigned long long)c->n, ft_index_str(c->first_bad, s, i1),
                     (int)(ft_str_len(g) < 60 ? ft_str_len(g) : 60), ft_str_bytes(g),
                     (int)(ft_str_len(w) < 60 ? ft_str_len(w) : 60), ft_str_bytes(w));
        return buf;
    }
    if (!c->n_bad)
        len = snprintf(buf, n, "%llu value%s match (rtol=%g, atol=%s): max abs error %g, max rel error %g",
                       (unsigned long long)c->n, c->n == 1 ? "" : "s", tol.rtol, at, c->max_abs, c->max_rel);
    else
        len = snprintf(buf, n, "%llu of %llu values out of tolerance (rtol=%g, atol=%s): max abs error %g, max rel error %g; "
                       "first at %s (got %s, expected %s)",
                       (unsigned long long)c->n_bad, (unsigned long long)c->n, tol.rtol, at, c->max_abs, c->max_rel,
                       ft_index_str(c->first_bad, s, i1), num(c->first_got, dt, a, sizeof a),
                       num(c->first_want, dt, b, sizeof b));
    if (c->n_bad > 1 && c->worst != c->first_bad && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "; worst at %s (got %s, expected %s)", ft_index_str(c->worst, s, i2),
                 num(c->worst_got, dt, d, sizeof d), num(c->worst_want, dt, e, sizeof e));
    return buf;
}
