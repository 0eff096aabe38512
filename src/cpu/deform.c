/* deform_conv on the CPU (ONNX DeformConv, 2-D; src/graph/infer_conv.c):
 * a deformable im2col and one GEMM per group. For batch element b, input
 * channel c (in offset group og = c / (C / offset_group)), kernel position
 * (i, j) and output position (oy, ox), the column entry is
 *   x[b, c] sampled bilinearly at (oy s0 - p0 + i d0 + dy, ox s1 - p1 + j d1 + dx)
 *   times mask[b, og kH kW + i kW + j, oy, ox] (1 without a mask)
 * with (dy, dx) = offset[b, og 2 kH kW + 2 (i kW + j) + (0, 1), oy, ox], and the
 * samples outside the image zero, as torchvision.ops.deform_conv2d's
 * bilinear_interpolate: a point with y <= -1, y >= H, x <= -1 or x >= W is 0,
 * otherwise each of its four neighbours contributes when inside. Then
 * y[b, group g] = w[g] (Mg x Cg kH kW) @ columns[g] (+ bias). The sampling runs
 * in the dtype (f32 or f64; f16 and bf16 arrive as f32, cpu_backend.c). */
#include "cpu.h"
#include "../graph/infer_conv.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#define DEFORM_FNS(T, SUF)                                                                                          \
    static T bilinear_##SUF(const T *im, int64_t H, int64_t W, T y, T x)                                            \
    {                                                                                                               \
        if (!(y > -1 && y < (T)H && x > -1 && x < (T)W))                                                            \
            return 0;                                                                                               \
        int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(x), y1 = y0 + 1, x1 = x0 + 1;                          \
        T ly = y - (T)y0, lx = x - (T)x0, hy = 1 - ly, hx = 1 - lx;                                                 \
        T v1 = y0 >= 0 && x0 >= 0 ? im[y0 * W + x0] : 0, v2 = y0 >= 0 && x1 < W ? im[y0 * W + x1] : 0;              \
        T v3 = y1 < H && x0 >= 0 ? im[y1 * W + x0] : 0, v4 = y1 < H && x1 < W ? im[y1 * W + x1] : 0;                \
        return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;                                           \
    }                                                                                                               \
    /* Columns of batch element b: row c * KK + kk, column p. */                                                   \
    static void columns_##SUF(const ft_conv_geom *g, int64_t og, const T *x, const T *off, const T *mask, int64_t b, \
                              T *col, int threads, int par)                                                         \
    {                                                                                                               \
        int64_t rows = g->C * g->KK, H = g->in[0], W = g->in[1], OW = g->out[1], cpo = g->C / og;                   \
        (void)threads;                                                                                              \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                  \
        for (int64_t r = 0; r < rows; r++) {                                                                        \
            int64_t c = r / g->KK, kk = r % g->KK, o = c / cpo, ki = kk / g->k[1], kj = kk % g->k[1];               \
            const T *im = x + (b * g->C + c) * H * W;                                                               \
            const T *dy = off + ((b * og + o) * 2 * g->KK + 2 * kk) * g->P, *dx = dy + g->P;                        \
            const T *mk = mask ? mask + ((b * og + o) * g->KK + kk) * g->P : NULL;                                  \
            T *dst = col + r * g->P;                                                                                \
            for (int64_t p = 0; p < g->P; p++) {                                                                    \
                int64_t oy = p / OW, ox = p % OW;                                                                   \
                T py = (T)(oy * g->s[0] - g->pb[0] + ki * g->d[0]) + dy[p];                                         \
                T px = (T)(ox * g->s[1] - g->pb[1] + kj * g->d[1]) + dx[p];                                         \
                T v = bilinear_##SUF(im, H, W, py, px);                                                             \
                dst[p] = mk ? v * mk[p] : v;                                                                        \
            }                                                                                                       \
        }                                                                                                           \
    }
DEFORM_FNS(float, f)
DEFORM_FNS(double, d)

ft_status cpu_deform_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_view *x = &in[0], *w = &in[1], *off = &in[2];
    const void *bias = n->n_in > 3 ? in[3].data : NULL, *mask = n->n_in > 4 ? in[4].data : NULL;
    ft_conv_geom g;
    ft_conv_geom_of(&n->params.conv, &x->shape, &w->shape, &out[0].shape, x->dtype, 0, &g);
    if (ft_numel(&out[0].shape) == 0)
        return FT_OK;
    int64_t og = n->params.conv.offset_group, kc = g.Cg * g.KK, rows = g.C * g.KK;
    int f64 = x->dtype == FT_F64;
    size_t es = f64 ? sizeof(double) : sizeof(float);
    if (g.Mg > INT_MAX || g.P > INT_MAX || kc > INT_MAX)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "deform_conv: a group's product (%lld x %lld x %lld) "
                           "exceeds the BLAS's 32-bit sizes", (long long)g.Mg, (long long)g.P, (long long)kc);
    void *col = malloc((size_t)(rows * g.P) * es + 1);
    if (!col)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the %lld x %lld deformed columns",
                           (long long)rows, (long long)g.P);
    int par = k->threads > 1 && (uint64_t)rows * (uint64_t)g.P >= CPU_PAR_MIN;
    for (int64_t b = 0; b < g.N; b++) {
        for (int64_t gr = 0; gr < g.G; gr++) {
            /* Without input channels (C = 0) the product is empty: zeros, then the bias. */
            int64_t at = (b * g.M + gr * g.Mg) * g.P;
            if (gr == 0 && kc > 0) {
                if (f64)
                    columns_d(&g, og, x->data, off->data, mask, b, col, k->threads, par);
                else
                    columns_f(&g, og, x->data, off->data, mask, b, col, k->threads, par);
            }
            int rc = 0;
            if (f64)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g.Mg, (int)g.P, (int)kc, 1.0,
                            (const double *)w->data + gr * g.Mg * kc, (int)(kc ? kc : 1),
                            (const double *)col + gr * kc * g.P, (int)g.P, 0.0, (double *)out[0].data + at, (int)g.P);
            else
                rc = cpu_sgemm(0, 0, g.Mg, g.P, kc, 1.0f, (const float *)w->data + gr * g.Mg * kc, kc ? kc : 1,
                               (const float *)col + gr * kc * g.P, g.P, 0.0f, (float *)out[0].data + at, g.P);
            if (rc) {
                free(col);
                return cpu_blas_error(k, n, rc);
            }
            if (bias)
                for (int64_t m = 0; m < g.Mg; m++)
                    for (int64_t p = 0; p < g.P; p++) {
                        if (f64)
                            ((double *)out[0].data)[at + m * g.P + p] += ((const double *)bias)[gr * g.Mg + m];
                        else
                            ((float *)out[0].data)[at + m * g.P + p] += ((const float *)bias)[gr * g.Mg + m];
                    }
        }
    }
    free(col);
    return FT_OK;
}
