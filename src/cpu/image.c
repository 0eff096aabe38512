/* CPU kernels of lrn and grid_sample (f32, f64; f16/bf16 through f32 as
 * every float kernel, see cpu.h). The inference in src/graph/infer_pool.c
 * has checked the attributes and shapes; grid_sample's cells and weights
 * come from src/graph/sample.h, shared with src/cuda/image.cu. Sums are
 * taken in double. */
#include "cpu.h"
#include "../graph/sample.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- lrn -------------------------------------------------------------------------- */

/* y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
 * the window c - (size-1)/2 .. c + size/2 cut to the channels. */
#define DEF_LRN(S, T)                                                                                                 \
    static void lrn_##S(const T *x, T *y, int64_t nb, int64_t ch, int64_t sp, const ft_image_params *p,              \
                        int threads, int par)                                                                         \
    {                                                                                                                 \
        int64_t total = nb * ch * sp, before = (p->size - 1) / 2, after = p->size / 2;                              \
        double scale = p->alpha / (double)p->size;                                                                    \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t e = 0; e < total; e++) {                                                                         \
            int64_t s = e % sp, c = (e / sp) % ch, b = e / (sp * ch);                                                 \
            int64_t lo = c - before < 0 ? 0 : c - before, hi = c + after >= ch ? ch - 1 : c + after;                  \
            const T *xs = x + b * ch * sp + s;                                                                        \
            double sum = 0;                                                                                           \
            for (int64_t i = lo; i <= hi; i++) {                                                                      \
                double v = (double)xs[i * sp];                                                                        \
                sum += v * v;                                                                                         \
            }                                                                                                         \
            y[e] = (T)((double)x[e] / pow(p->bias + scale * sum, p->beta));                                           \
        }                                                                                                             \
    }

DEF_LRN(f32, float)
DEF_LRN(f64, double)

ft_status cpu_lrn(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    uint64_t numel = ft_numel(s);
    if (numel == 0)
        return FT_OK;
    int64_t sp = (int64_t)(numel / (uint64_t)(s->dims[0] * s->dims[1]));
    int par = numel * (uint64_t)n->params.image.size >= CPU_PAR_MIN && k->threads > 1;
    if (in[0].dtype == FT_F32)
        lrn_f32(in[0].data, out[0].data, s->dims[0], s->dims[1], sp, &n->params.image, k->threads, par);
    else if (in[0].dtype == FT_F64)
        lrn_f64(in[0].data, out[0].data, s->dims[0], s->dims[1], sp, &n->params.image, k->threads, par);
    else
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "lrn: no cpu kernel for %s", ft_dtype_name(in[0].dtype));
    return FT_OK;
}

/* ---- grid_sample ------------------------------------------------------------------ */

/* Cells of one output position: up to 4^3 offsets into a channel plane with
 * their weights (offset -1: a zeros-padding cell). */
#define GS_MAX_CELLS 64

/* The cells of output position pos (its grid entry g[0..r-1], x first) over
 * the r spatial axes in[0..r-1]; 0 when the coordinate gives no value. */
static int gs_cells(const ft_image_params *p, int r, const int64_t *in, const double *g, int64_t *off, double *wt,
                    int *count)
{
    ft_taps t[3];
    for (int d = 0; d < r; d++)
        if (!ft_gs_taps(g[r - 1 - d], in[d], p, &t[d]))
            return 0;
    int nc = 1;
    off[0] = 0, wt[0] = 1;
    for (int d = 0; d < r; d++) {
        int64_t stride = 1;
        for (int e = d + 1; e < r; e++)
            stride *= in[e];
        /* expand every cell so far by this axis's taps, the earlier axes outermost */
        int m = nc * t[d].n;
        for (int c = m - 1; c >= 0; c--) {
            int src = c / t[d].n, k = c % t[d].n;
            int64_t o = off[src], i = t[d].i[k];
            off[c] = o < 0 || i < 0 ? -1 : o + i * stride;
            wt[c] = wt[src] * t[d].w[k];
        }
        nc = m;
    }
    *count = nc;
    return 1;
}

#define DEF_GS(S, T)                                                                                                  \
    static void gs_##S(const T *x, const T *grid, T *y, int64_t nb, int64_t ch, int r, const int64_t *in,            \
                       int64_t osp, const ft_image_params *p, int threads, int par)                                   \
    {                                                                                                                 \
        int64_t isp = 1;                                                                                              \
        for (int d = 0; d < r; d++)                                                                                   \
            isp *= in[d];                                                                                             \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t e = 0; e < nb * osp; e++) {                                                                      \
            int64_t b = e / osp, o = e % osp;                                                                         \
            double g[3];                                                                                              \
            for (int d = 0; d < r; d++)                                                                               \
                g[d] = (double)grid[e * r + d];                                                                       \
            int64_t off[GS_MAX_CELLS];                                                                                \
            double wt[GS_MAX_CELLS];                                                                                  \
            int nc = 0, ok = gs_cells(p, r, in, g, off, wt, &nc);                                                     \
            for (int64_t c = 0; c < ch; c++) {                                                                        \
                const T *xp = x + (b * ch + c) * isp;                                                                 \
                double acc = ok ? 0 : NAN;                                                                            \
                for (int k = 0; k < nc; k++)                                                                          \
                    if (off[k] >= 0)                                                                                  \
                        acc += wt[k] * (double)xp[off[k]];                                                            \
                y[(b * ch + c) * osp + o] = (T)acc;                                                                   \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_GS(f32, float)
DEF_GS(f64, double)

ft_status cpu_grid_sample(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *xs = &in[0].shape, *os = &out[0].shape;
    uint64_t numel = ft_numel(os);
    if (numel == 0)
        return FT_OK;
    int r = xs->rank - 2;
    int64_t sz[3], osp = 1;
    for (int d = 0; d < r; d++)
        sz[d] = xs->dims[2 + d], osp *= os->dims[2 + d];
    const ft_image_params *p = &n->params.image;
    int cells = p->mode == FT_GS_NEAREST ? 1 : p->mode == FT_GS_LINEAR ? 1 << r : 1 << (2 * r);
    int par = numel * (uint64_t)cells >= CPU_PAR_MIN && k->threads > 1;
    if (in[0].dtype == FT_F32)
        gs_f32(in[0].data, in[1].data, out[0].data, xs->dims[0], xs->dims[1], r, sz, osp, p, k->threads, par);
    else if (in[0].dtype == FT_F64)
        gs_f64(in[0].data, in[1].data, out[0].data, xs->dims[0], xs->dims[1], r, sz, osp, p, k->threads, par);
    else
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "grid_sample: no cpu kernel for %s",
                           ft_dtype_name(in[0].dtype));
    return FT_OK;
}
