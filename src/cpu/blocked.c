/* Kernels for tensors a run keeps in oneDNN's channel-blocked layout
 * (cpu/conv_dnnl.c, "Blocked chains"): nCw8c, nChw16c, nCdhw16c and the
 * like, that is [N][C/B][spatial][B] with B = 8 or 16 and C a multiple of B,
 * or channels-last nhwc and the like (B = C).
 * conv_dnnl.c's build_layouts lets a tensor stay blocked when one of these
 * reads it: the global average and max pools (a plain [N, C, 1, ...]
 * output) and a mul by a per-channel factor ([N or 1, C, 1, ...], plain),
 * whose product then stays blocked too (the squeeze-excitation blocks of
 * EfficientNet and MobileNetV3). pool.c and binary.c call these first; they
 * return 0 for a plain input, and the caller's own loops run. The results
 * are those of the plain loops: the same sums in double for the average, the
 * same NaN rule for the max, the same products. */
#include "cpu.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Lanes of one pass: the channels of a block are taken 16 at a time. */
#define LANES 16

/* items i0..i1 of [N * C/B blocks] x [ceil(B / LANES) lane groups], each
 * group summed (or maxed) over the `len` positions of its block */
static void gpool_items(const float *x, float *y, int64_t i0, int64_t i1, int64_t len, int64_t B, int max)
{
    const int64_t groups = (B + LANES - 1) / LANES;
    for (int64_t i = i0; i < i1; i++) {
        int64_t t = i / groups, j0 = i % groups * LANES, w = B - j0 < LANES ? B - j0 : LANES;
        const float *xp = x + t * len * B + j0;
        float *yp = y + t * B + j0; /* channel n*C + cb*B + j of the plain output */
        if (max) {
            float m[LANES];
            int nan[LANES] = {0};
            for (int j = 0; j < LANES; j++)
                m[j] = -INFINITY;
            for (int64_t s = 0; s < len; s++)
#pragma omp simd
                for (int j = 0; j < w; j++) {
                    float v = xp[s * B + j];
                    m[j] = v > m[j] ? v : m[j];
                    nan[j] |= v != v;
                }
            for (int j = 0; j < w; j++)
                yp[j] = nan[j] ? NAN : m[j];
        } else {
            double acc[LANES] = {0};
            for (int64_t s = 0; s < len; s++)
#pragma omp simd
                for (int j = 0; j < w; j++)
                    acc[j] += (double)xp[s * B + j];
            for (int j = 0; j < w; j++)
                yp[j] = (float)(acc[j] / (double)len);
        }
    }
}

int cpu_global_pool_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    int64_t B = cpu_channel_block(k, n->in[0]);
    if (!B)
        return 0;
    const ft_shape *s = &in[0].shape;
    int64_t items = s->dims[0] * (s->dims[1] / B) * ((B + LANES - 1) / LANES), len = 1;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int max = n->op == FT_OP_GLOBAL_MAX_POOL;
    int par = k->threads > 1 && items > 1 && (uint64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        gpool_items(in[0].data, out[0].data, items * id / nt, items * (id + 1) / nt, len, B, max);
    }
    *st = FT_OK;
    return 1;
}

int cpu_mul_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    int64_t B = cpu_channel_block(k, n->out[0]);
    if (!B)
        return 0;
    /* the blocked operand has the product's shape; the other is per channel */
    int big = cpu_channel_block(k, n->in[0]) ? 0 : 1;
    const float *x = in[big].data, *f = in[1 - big].data;
    float *y = out[0].data;
    const ft_shape *s = &out[0].shape;
    int64_t N = s->dims[0], C = s->dims[1], len = 1, fstep = in[1 - big].shape.dims[0] == 1 ? 0 : C;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int64_t CB = C / B, rows = N * CB * len; /* rows of B channels */
    int par = k->threads > 1 && (uint64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        int64_t t = r / len, nb = t / CB, cb = t % CB;
        const float *fp = f + nb * fstep + cb * B;
        const float *xp = x + r * B;
        float *yp = y + r * B;
#pragma omp simd
        for (int64_t j = 0; j < B; j++)
            yp[j] = xp[j] * fp[j];
    }
    *st = FT_OK;
    return 1;
}
