/* CPU resize (f32, f64): nearest, N-linear and N-cubic interpolation over any axes,
 * following the formulas of the ONNX reference implementation
 * (onnx/reference/ops/op_resize.py). The inference in
 * src/graph/infer_pool.c has checked the attributes and fixed the output
 * shape; this file maps every output coordinate of every axis to its source
 * cells once, then gathers. Cubic, and antialias (linear, cubic), read the
 * taps of every output coordinate of every axis (ft_resize_taps_fill,
 * infer_pool.h), as the CUDA kernel does (src/cuda/image.cu). */
#include "cpu.h"
#include "../graph/infer_pool.h"
#include "../graph/sample.h"

#include <math.h>
#include <omp.h>
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
            /* one or two outer corners, all inside (bilinear over the last two axes): the loop below with \
             * its corner loop unrolled, the same sums in the same order */                                       \
            if (!outside && !ml->outside && nc <= 2) {                                                                \
                const T *x0 = x + off[0], *x1 = x + off[nc - 1];                                                      \
                double w0 = wt[0], w1 = nc == 2 ? wt[1] : 0;                                                          \
                for (int64_t o = 0; o < olast; o++) {                                                                 \
                    int64_t lo = ml->lo[o], hi = ml->hi[o];                                                           \
                    double w = ml->w[o];                                                                              \
                    double v0 = w == 0 ? (double)x0[lo] : (1 - w) * (double)x0[lo] + w * (double)x0[hi];              \
                    double acc = 0 + w0 * v0;                                                                         \
                    if (nc == 2)                                                                                      \
                        acc += w1 * (w == 0 ? (double)x1[lo] : (1 - w) * (double)x1[lo] + w * (double)x1[hi]);        \
                    yr[o] = (T)acc;                                                                                   \
                }                                                                                                     \
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

/* Bilinear over the last two axes, every cell inside, the outer axes
 * gathered (no weight): each output row blends two rows of the input row
 * interpolated along the last axis, and those rows serve every output row
 * that reads them (an upsampling by 8 reads each one 8 times), so each is
 * made once per thread (two slots, keyed by its input offset) instead of
 * once per output row. The sums and their order are resize_##S's:
 * h = (1 - w) x[lo] + w x[hi] along the row (x[lo] where w is 0), then
 * 0 + (1 - v) h0 + v h1 (h0 where v is 0), in double, so the results are
 * resize_##S's bit for bit. DeepLabV3's 21x28x28 -> 224x224: 3.6 -> 1.6 ms
 * at 1 thread, 2.1 -> 1.0 at 2. Rows r0..r1 of the output's
 * [outer..., OH] rows; h holds 2 * OW doubles. */
#define DEF_RESIZE_SEP(S, T)                                                                                          \
    static void sep_##S(const T *x, T *y, const ft_shape *is, const ft_shape *os, const axis_map *m, double *h,      \
                        int64_t r0, int64_t r1)                                                                       \
    {                                                                                                                 \
        const int r = is->rank;                                                                                       \
        int64_t ist[FT_MAX_RANK];                                                                                     \
        ft_strides(is, ist);                                                                                          \
        const int64_t OH = os->dims[r - 2], OW = os->dims[r - 1];                                                     \
        const axis_map *mv = &m[r - 2], *mh = &m[r - 1];                                                              \
        int64_t key[2] = {-1, -1};                                                                                    \
        for (int64_t row = r0; row < r1; row++) {                                                                     \
            int64_t oh = row % OH, rem = row / OH, base = 0;                                                          \
            for (int d = r - 3; d >= 0; d--) {                                                                        \
                base += m[d].lo[rem % os->dims[d]] * ist[d];                                                          \
                rem /= os->dims[d];                                                                                   \
            }                                                                                                         \
            const double v = mv->w[oh];                                                                               \
            const int64_t want[2] = {base + mv->lo[oh] * ist[r - 2], base + mv->hi[oh] * ist[r - 2]};                 \
            const double *hr[2];                                                                                      \
            for (int c = 0; c < (v == 0 ? 1 : 2); c++) {                                                             \
                int slot = key[0] == want[c] ? 0 : key[1] == want[c] ? 1 : -1;                                        \
                if (slot < 0) { /* the slot the other corner does not hold */                                         \
                    slot = c == 1 && key[0] == want[0] ? 1 : c == 1 ? 0 : key[1] == want[1] ? 0 : 1;                  \
                    const T *xr = x + want[c];                                                                        \
                    double *hs = h + slot * OW;                                                                       \
                    for (int64_t o = 0; o < OW; o++) {                                                                \
                        int64_t lo = mh->lo[o], hi = mh->hi[o];                                                       \
                        double w = mh->w[o];                                                                          \
                        hs[o] = w == 0 ? (double)xr[lo] : (1 - w) * (double)xr[lo] + w * (double)xr[hi];              \
                    }                                                                                                 \
                    key[slot] = want[c];                                                                              \
                }                                                                                                     \
                hr[c] = h + slot * OW;                                                                                \
            }                                                                                                         \
            T *yr = y + row * OW;                                                                                     \
            if (v == 0) {                                                                                             \
                for (int64_t o = 0; o < OW; o++)                                                                      \
                    yr[o] = (T)hr[0][o];                                                                              \
            } else {                                                                                                  \
                const double *h0 = hr[0], *h1 = hr[1], v0 = 1 - v;                                                    \
                for (int64_t o = 0; o < OW; o++)                                                                      \
                    yr[o] = (T)(0 + v0 * h0[o] + v * h1[o]);                                                          \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_RESIZE_SEP(f32, float)
DEF_RESIZE_SEP(f64, double)

/* Whether sep_##S serves this resize: rank 2 or more, no cell outside, the
 * outer axes without weights. */
static int sep_fits(const ft_shape *is, const axis_map *m)
{
    int r = is->rank;
    if (r < 2 || m[r - 1].outside || m[r - 2].outside)
        return 0;
    for (int d = 0; d < r - 2; d++)
        if (m[d].active || m[d].outside)
            return 0;
    return 1;
}

/* ---- cubic and antialias ----------------------------------------------------------------- */

/* Every output element sums the products of the taps of every axis
 * (ft_resize_taps, infer_pool.h), the first axis outermost; an axis without
 * taps gives the extrapolation value. */
#define DEF_TAPS(S, T)                                                                                                \
    static void taps_##S(const T *x, T *y, const ft_shape *is, const ft_shape *os, const ft_resize_taps *tt,         \
                         const void *block, double ext, int threads, int par)                                         \
    {                                                                                                                 \
        int r = is->rank;                                                                                             \
        int64_t ist[FT_MAX_RANK], total = (int64_t)ft_numel(os);                                                      \
        ft_strides(is, ist);                                                                                          \
        const ft_tap_span *span;                                                                                      \
        const int64_t *idx;                                                                                           \
        const double *wt;                                                                                             \
        ft_resize_taps_at(tt, block, &span, &idx, &wt);                                                               \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t e = 0; e < total; e++) {                                                                         \
            int64_t at[FT_MAX_RANK], nt[FT_MAX_RANK], rem = e;                                                        \
            int outside = 0;                                                                                          \
            for (int d = r - 1; d >= 0; d--) {                                                                        \
                const ft_tap_span *sp = &span[tt->off[d] + rem % os->dims[d]];                                        \
                at[d] = sp->at, nt[d] = sp->n;                                                                        \
                outside |= sp->n == 0;                                                                                \
                rem /= os->dims[d];                                                                                   \
            }                                                                                                         \
            if (outside) {                                                                                            \
                y[e] = (T)ext;                                                                                        \
                continue;                                                                                             \
            }                                                                                                         \
            int64_t k[FT_MAX_RANK] = {0};                                                                             \
            double acc = 0;                                                                                           \
            for (;;) {                                                                                                \
                int64_t off = 0;                                                                                      \
                double w = 1;                                                                                         \
                for (int d = 0; d < r; d++)                                                                           \
                    off += idx[at[d] + k[d]] * ist[d], w *= wt[at[d] + k[d]];                                         \
                acc += w * (double)x[off];                                                                            \
                int d = r - 1;                                                                                        \
                while (d >= 0 && ++k[d] == nt[d])                                                                     \
                    k[d--] = 0;                                                                                       \
                if (d < 0)                                                                                            \
                    break;                                                                                            \
            }                                                                                                         \
            y[e] = (T)acc;                                                                                            \
        }                                                                                                             \
    }

DEF_TAPS(f32, float)
DEF_TAPS(f64, double)

static ft_status resize_taps(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *is = &in[0].shape, *os = &out[0].shape;
    const ft_resize_params *md = &n->params.resize;
    ft_resize_taps tt;
    ft_resize_taps_size(md, is, os, &tt);
    void *block = ft_malloc(tt.bytes);
    if (!block)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the resize tables (%lld entries)",
                           (long long)tt.n_tap);
    ft_resize_taps_fill(md, is, os, &tt, block);
    int par = ft_numel(os) >= (md->antialias ? CPU_PAR_MIN / 16 : CPU_PAR_MIN / 4) && k->threads > 1;
    if (in[0].dtype == FT_F64)
        taps_f64(in[0].data, out[0].data, is, os, &tt, block, md->extrapolation, k->threads, par);
    else
        taps_f32(in[0].data, out[0].data, is, os, &tt, block, md->extrapolation, k->threads, par);
    free(block);
    return FT_OK;
}

/* Nearest and linear: one block holds the tables of every axis, os->dims[d]
 * entries for axis d: lo, hi (int64) and w (double). */
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
    if (md->antialias || md->cubic)
        return resize_taps(k, n, in, out);
    int r = is->rank;
    int64_t total = 0;
    for (int d = 0; d < r; d++)
        total += os->dims[d];
    char *buf = ft_malloc((size_t)total * (2 * sizeof(int64_t) + sizeof(double)));
    if (!buf)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the resize tables (%lld entries)",
                           (long long)total);
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
    double *h = NULL;
    if (sep_fits(is, m) && (h = ft_malloc((size_t)(par ? k->threads : 1) * 2 * (size_t)os->dims[r - 1] * sizeof *h))) {
        const int64_t rows = (int64_t)(numel / (uint64_t)os->dims[r - 1]);
#pragma omp parallel num_threads(k->threads) if (par)
        {
            int nt = omp_get_num_threads(), id = omp_get_thread_num();
            double *hb = h + (size_t)id * 2 * (size_t)os->dims[r - 1];
            if (f64)
                sep_f64(in[0].data, out[0].data, is, os, m, hb, rows * id / nt, rows * (id + 1) / nt);
            else
                sep_f32(in[0].data, out[0].data, is, os, m, hb, rows * id / nt, rows * (id + 1) / nt);
        }
        free(h);
    } else if (f64) {
        resize_f64(in[0].data, out[0].data, is, os, m, md->extrapolation, k->threads, par);
    } else {
        resize_f32(in[0].data, out[0].data, is, os, m, md->extrapolation, k->threads, par);
    }
    free(buf);
    return FT_OK;
}
