/* CPU resize (f32, f64): nearest, N-linear and N-cubic interpolation over any axes,
 * following the formulas of the ONNX reference implementation
 * (onnx/reference/ops/op_resize.py). The inference in
 * src/graph/infer_pool.c has checked the attributes and fixed the output
 * shape; this file maps every output coordinate of every axis to its source
 * cells once, then gathers. With antialias (linear, cubic) each axis has
 * ft_resize_aa_width() taps per output coordinate (ft_resize_aa_axis). */
#include "cpu.h"
#include "../graph/infer_pool.h"
#include "../graph/sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One axis: for every output coordinate the lower and upper source cells
 * (clamped to the edge, like the reference's edge padding) and the weight of
 * the upper one (0 for nearest, and whenever the source coordinate is an
 * integer: then only the lower cell is read). */
typedef struct axis_map {
    int64_t *lo, *hi; /* lo -1: the source is outside (tf_crop_and_resize's extrapolation) */
    double *w;
    int active;  /* some weight is not 0 */
    int outside; /* some lo is -1 */
} axis_map;

static void map_axis(axis_map *m, const ft_resize_params *p, int d, double scale, int64_t in, int64_t out)
{
    m->active = m->outside = 0;
    for (int64_t o = 0; o < out; o++) {
        double xo = ft_resize_src_coord(p, d, (double)o, scale, in, out);
        if (ft_resize_outside(p, xo, in)) {
            m->lo[o] = m->hi[o] = -1, m->w[o] = 0;
            m->outside = 1;
            continue;
        }
        ft_resize_cells(xo, in, p->linear, p->nm, &m->lo[o], &m->hi[o], &m->w[o]);
        m->active |= m->w[o] != 0;
    }
}

/* Corners of the outer axes (all but the last): at most 2^(8-1). */
#define MAX_CORNERS 128

#define DEF_RESIZE(S, T)                                                                                              \
    static void resize_##S(const T *x, T *y, const ft_shape *is, const ft_shape *os, const axis_map *m, double ext,  \
                           int threads, int par)                                                                      \
    {                                                                                                                 \
        int r = is->rank;                                                                                             \
        int64_t ist[FT_MAX_RANK];                                                                                     \
        ft_strides(is, ist);                                                                                          \
        int64_t olast = os->dims[r - 1], rows = (int64_t)(ft_numel(os) / (uint64_t)olast);                            \
        const axis_map *ml = &m[r - 1];                                                                               \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t row = 0; row < rows; row++) {                                                                    \
            int64_t off[MAX_CORNERS];                                                                                 \
            double wt[MAX_CORNERS];                                                                                   \
            int nc = 1;                                                                                               \
            off[0] = 0, wt[0] = 1;                                                                                    \
            int64_t rem = row;                                                                                        \
            int outside = 0;                                                                                          \
            for (int d = r - 2; d >= 0; d--) {                                                                        \
                int64_t o = rem % os->dims[d];                                                                        \
                rem /= os->dims[d];                                                                                   \
                outside |= m[d].lo[o] < 0;                                                                            \
                int64_t lo = m[d].lo[o] * ist[d];                                                                     \
                double w = m[d].w[o];                                                                                 \
                if (w == 0) {                                                                                         \
                    for (int c = 0; c < nc; c++)                                                                      \
                        off[c] += lo;                                                                                 \
                    continue;                                                                                         \
                }                                                                                                     \
                int64_t hi = m[d].hi[o] * ist[d];                                                                     \
                for (int c = 0; c < nc; c++) {                                                                        \
                    off[nc + c] = off[c] + hi, wt[nc + c] = wt[c] * w;                                                \
                    off[c] += lo, wt[c] *= 1 - w;                                                                     \
                }                                                                                                     \
                nc *= 2;                                                                                              \
            }                                                                                                         \
            T *yr = y + row * olast;                                                                                  \
            /* rows wholly inside and all on one input row and cell: a gather */                                      \
            if (!outside && !ml->outside && nc == 1 && !ml->active) {                                                 \
                const T *xr = x + off[0];                                                                             \
                for (int64_t o = 0; o < olast; o++)                                                                   \
                    yr[o] = xr[ml->lo[o]];                                                                            \
                continue;                                                                                             \
            }                                                                                                         \
            for (int64_t o = 0; o < olast; o++) {                                                                     \
                if (outside || ml->lo[o] < 0) {                                                                       \
                    yr[o] = (T)ext;                                                                                   \
                    continue;                                                                                         \
                }                                                                                                     \
                int64_t lo = ml->lo[o], hi = ml->hi[o];                                                               \
                double w = ml->w[o], acc = 0;                                                                         \
                for (int c = 0; c < nc; c++) {                                                                        \
                    const T *xr = x + off[c];                                                                         \
                    double v = w == 0 ? (double)xr[lo] : (1 - w) * (double)xr[lo] + w * (double)xr[hi];               \
                    acc += wt[c] * v;                                                                                 \
                }                                                                                                     \
                yr[o] = (T)acc;                                                                                       \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_RESIZE(f32, float)
DEF_RESIZE(f64, double)

/* ---- cubic ------------------------------------------------------------------------- */

/* Every output element sums the products of the taps of every axis (one tap
 * on the axes where its coordinate falls on a cell), the first axis
 * outermost. */
#define DEF_CUBIC(S, T)                                                                                               \
    static void cubic_##S(const T *x, T *y, const ft_shape *is, const ft_shape *os, ft_taps *const *tab, double ext, \
                          int threads, int par)                                                                       \
    {                                                                                                                 \
        int r = is->rank;                                                                                             \
        int64_t ist[FT_MAX_RANK], total = (int64_t)ft_numel(os);                                                      \
        ft_strides(is, ist);                                                                                          \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t e = 0; e < total; e++) {                                                                         \
            const ft_taps *t[FT_MAX_RANK];                                                                            \
            int64_t rem = e;                                                                                          \
            int outside = 0;                                                                                          \
            for (int d = r - 1; d >= 0; d--) {                                                                        \
                t[d] = &tab[d][rem % os->dims[d]];                                                                    \
                outside |= t[d]->n == 0;                                                                              \
                rem /= os->dims[d];                                                                                   \
            }                                                                                                         \
            if (outside) {                                                                                            \
                y[e] = (T)ext;                                                                                        \
                continue;                                                                                             \
            }                                                                                                         \
            int k[FT_MAX_RANK] = {0};                                                                                 \
            double acc = 0;                                                                                           \
            for (;;) {                                                                                                \
                int64_t off = 0;                                                                                      \
                double w = 1;                                                                                         \
                for (int d = 0; d < r; d++)                                                                           \
                    off += t[d]->i[k[d]] * ist[d], w *= t[d]->w[k[d]];                                                \
                acc += w * (double)x[off];                                                                            \
                int d = r - 1;                                                                                        \
                while (d >= 0 && ++k[d] == t[d]->n)                                                                   \
                    k[d--] = 0;                                                                                       \
                if (d < 0)                                                                                            \
                    break;                                                                                            \
            }                                                                                                         \
            y[e] = (T)acc;                                                                                            \
        }                                                                                                             \
    }

DEF_CUBIC(f32, float)
DEF_CUBIC(f64, double)

/* ---- antialias ------------------------------------------------------------------------- */

/* The taps of every axis (ft_resize_aa_axis): n[d] per output coordinate. */
typedef struct aa_tab {
    int n[FT_MAX_RANK];
    const int64_t *i[FT_MAX_RANK];
    const double *w[FT_MAX_RANK];
} aa_tab;

/* Every output element sums the products of the taps of every axis, the
 * first axis outermost; an axis without taps gives the extrapolation value. */
#define DEF_AA(S, T)                                                                                                  \
    static void aa_##S(const T *x, T *y, const ft_shape *is, const ft_shape *os, const aa_tab *tb, double ext,       \
                       int threads, int par)                                                                          \
    {                                                                                                                 \
        int r = is->rank;                                                                                             \
        int64_t ist[FT_MAX_RANK], total = (int64_t)ft_numel(os);                                                      \
        ft_strides(is, ist);                                                                                          \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t e = 0; e < total; e++) {                                                                         \
            int64_t at[FT_MAX_RANK], rem = e;                                                                         \
            int outside = 0;                                                                                          \
            for (int d = r - 1; d >= 0; d--) {                                                                        \
                at[d] = rem % os->dims[d] * tb->n[d];                                                                 \
                outside |= tb->i[d][at[d]] < 0;                                                                       \
                rem /= os->dims[d];                                                                                   \
            }                                                                                                         \
            if (outside) {                                                                                            \
                y[e] = (T)ext;                                                                                        \
                continue;                                                                                             \
            }                                                                                                         \
            int k[FT_MAX_RANK] = {0};                                                                                 \
            double acc = 0;                                                                                           \
            for (;;) {                                                                                                \
                int64_t off = 0;                                                                                      \
                double w = 1;                                                                                         \
                for (int d = 0; d < r; d++)                                                                           \
                    off += tb->i[d][at[d] + k[d]] * ist[d], w *= tb->w[d][at[d] + k[d]];                              \
                acc += w * (double)x[off];                                                                            \
                int d = r - 1;                                                                                        \
                while (d >= 0 && ++k[d] == tb->n[d])                                                                  \
                    k[d--] = 0;                                                                                       \
                if (d < 0)                                                                                            \
                    break;                                                                                            \
            }                                                                                                         \
            y[e] = (T)acc;                                                                                            \
        }                                                                                                             \
    }

DEF_AA(f32, float)
DEF_AA(f64, double)

static ft_status resize_aa(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *is = &in[0].shape, *os = &out[0].shape;
    const ft_resize_params *md = &n->params.resize;
    aa_tab tb;
    int64_t total = 0;
    for (int d = 0; d < is->rank; d++) {
        tb.n[d] = ft_resize_aa_width(md, ft_resize_scale(md, is, os, d));
        total += os->dims[d] * tb.n[d];
    }
    char *buf = ft_malloc((size_t)total * (sizeof(int64_t) + sizeof(double)));
    if (!buf)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the resize tables (%lld entries)",
                           (long long)total);
    int64_t *ib = (int64_t *)buf;
    double *wb = (double *)(buf + (size_t)total * sizeof(int64_t));
    for (int d = 0; d < is->rank; d++) {
        ft_resize_aa_axis(md, d, ft_resize_scale(md, is, os, d), is->dims[d], os->dims[d], ib, wb);
        tb.i[d] = ib, tb.w[d] = wb;
        ib += os->dims[d] * tb.n[d], wb += os->dims[d] * tb.n[d];
    }
    int par = ft_numel(os) >= CPU_PAR_MIN / 16 && k->threads > 1;
    if (in[0].dtype == FT_F64)
        aa_f64(in[0].data, out[0].data, is, os, &tb, md->extrapolation, k->threads, par);
    else
        aa_f32(in[0].data, out[0].data, is, os, &tb, md->extrapolation, k->threads, par);
    free(buf);
    return FT_OK;
}

/* One block holds the tables of every axis, os->dims[d] entries for axis d:
 * the cubic taps, or for nearest and linear lo, hi (int64) and w (double). */
ft_status cpu_resize(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *is = &in[0].shape, *os = &out[0].shape;
    const ft_resize_params *md = &n->params.resize;
    uint64_t numel = ft_numel(os);
    if (numel == 0)
        return FT_OK;
    int f64 = in[0].dtype == FT_F64;
    if (!f64 && in[0].dtype != FT_F32)
        return cpu_bad_dtype(k, n, in[0].dtype);
    if (md->antialias)
        return resize_aa(k, n, in, out);
    int r = is->rank;
    int64_t total = 0;
    for (int d = 0; d < r; d++)
        total += os->dims[d];
    size_t per = md->cubic ? sizeof(ft_taps) : 2 * sizeof(int64_t) + sizeof(double);
    char *buf = ft_malloc((size_t)total * per);
    if (!buf)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the resize tables (%lld entries)",
                           (long long)total);
    if (md->cubic) {
        ft_taps *tab[FT_MAX_RANK], *next = (ft_taps *)buf;
        for (int d = 0; d < r; d++) {
            tab[d] = next;
            ft_resize_cubic_axis(md, d, ft_resize_scale(md, is, os, d), is->dims[d], os->dims[d], next);
            next += os->dims[d];
        }
        int par = numel >= CPU_PAR_MIN / 4 && k->threads > 1;
        if (f64)
            cubic_f64(in[0].data, out[0].data, is, os, tab, md->extrapolation, k->threads, par);
        else
            cubic_f32(in[0].data, out[0].data, is, os, tab, md->extrapolation, k->threads, par);
    } else {
        axis_map m[FT_MAX_RANK];
        int64_t *ib = (int64_t *)buf;
        double *wb = (double *)(buf + (size_t)total * 2 * sizeof(int64_t));
        for (int d = 0; d < r; d++) {
            int64_t o = os->dims[d];
            m[d].lo = ib, m[d].hi = ib + o, m[d].w = wb;
            ib += 2 * o, wb += o;
            map_axis(&m[d], md, d, ft_resize_scale(md, is, os, d), is->dims[d], o);
        }
        int par = numel >= CPU_PAR_MIN && k->threads > 1;
        if (f64)
            resize_f64(in[0].data, out[0].data, is, os, m, md->extrapolation, k->threads, par);
        else
            resize_f32(in[0].data, out[0].data, is, os, m, md->extrapolation, k->threads, par);
    }
    free(buf);
    return FT_OK;
}
