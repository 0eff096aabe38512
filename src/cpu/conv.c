/* Convolution and transposed convolution on the CPU (ONNX Conv and
 * ConvTranspose, channels first, 1-D to 3-D), in f32 and f64. conv applies
 * its fused activation (params.h ft_conv_act) to each output tile while it is
 * in cache.
 *
 * conv: per (batch, group, tile of output positions), im2col of the tile into
 * a buffer that stays in cache, then one BLAS gemm W[g] @ col into the output.
 * conv_transpose: per (batch, group, block of output channels), gemm
 * W[g]^T @ x into a column buffer, then col2im scatter-adds it into the
 * output; blocks of distinct channels never write the same element, so they
 * run in parallel. Groups with a single input channel (depthwise) skip BLAS
 * and run direct loops, whose inner loop is a contiguous axpy at stride 1;
 * 2-D f32 depthwise convs with 3x3, 5x5 or 7x7 kernels at stride 1 or 2 run
 * a row kernel instead that sums every tap of an output in registers,
 * vectorised over the output row (dw_plane).
 *
 * A conv whose taps read padding at most positions (an atrous conv with a
 * dilation near the map's size) runs tap by tap instead (conv_sparse): per
 * tap one gemm over the output positions where it reads the input.
 *
 * Pads and sizes come from graph/infer_conv.c, which the CUDA kernels share. */
#include "cpu.h"
#include "dnnl_cache.h"
#include "vmath.h"
#include "../graph/infer_conv.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Declared by OpenBLAS's cblas.h; repeated because other cblas headers lack it. */
void openblas_set_num_threads(int);

#define MAX_SP FT_CONV_MAX_SP
/* Bytes of one column-buffer tile: small enough to stay in L2 between the
 * im2col that writes it and the gemm that reads it. */
#define TILE_BYTES (384 * 1024)

typedef ft_conv_geom geom;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Outputs o in [lo, hi) of spatial dim j whose input o*s + kj*d - pb lies in [0, in). */
static void out_range(const geom *g, int j, int64_t kj, int64_t *lo, int64_t *hi)
{
    int64_t off = kj * g->d[j] - g->pb[j];
    int64_t a = floor_div(-off + g->s[j] - 1, g->s[j]), b = floor_div(g->in[j] - 1 - off, g->s[j]) + 1;
    *lo = a > 0 ? a : 0;
    *hi = b < g->out[j] ? b : g->out[j];
    if (*hi < *lo)
        *hi = *lo;
}

/* Inputs i in [lo, hi) of spatial dim j whose output i*s + kj*d - pb lies in [0, out). */
static void in_range(const geom *g, int j, int64_t kj, int64_t *lo, int64_t *hi)
{
    int64_t off = kj * g->d[j] - g->pb[j];
    int64_t a = floor_div(-off + g->s[j] - 1, g->s[j]), b = floor_div(g->out[j] - 1 - off, g->s[j]) + 1;
    *lo = a > 0 ? a : 0;
    *hi = b < g->in[j] ? b : g->in[j];
    if (*hi < *lo)
        *hi = *lo;
}

/* Row-major element strides of a plane of the given spatial dims. */
static void plane_strides(const int64_t *dims, int r, int64_t *st)
{
    int64_t acc = 1;
    for (int j = r - 1; j >= 0; j--) {
        st[j] = acc;
        acc *= dims[j];
    }
}

/* ------------------------------------------------------------------ typed runs */

/* y[i] += w * x[i*s] (a gather along the last spatial dim). */
#define RUNS(T, SUF)                                                                                              \
    static void gather_##SUF(T *restrict y, const T *restrict x, int64_t n, int64_t s, T w)                      \
    {                                                                                                            \
        if (s == 1) {                                                                                            \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] += w * x[i];                                \
        } else {                                                                                                 \
            for (int64_t i = 0; i < n; i++)                                                                      \
                y[i] += w * x[i * s];                                                                            \
        }                                                                                                        \
    }                                                                                                            \
    /* y[i*s] += w * x[i] (a scatter along the last spatial dim). */                                             \
    static void scatter_##SUF(T *restrict y, const T *restrict x, int64_t n, int64_t s, T w)                     \
    {                                                                                                            \
        if (s == 1) {                                                                                            \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] += w * x[i];                                \
        } else {                                                                                                 \
            for (int64_t i = 0; i < n; i++)                                                                      \
                y[i * s] += w * x[i];                                                                            \
        }                                                                                                        \
    }                                                                                                            \
    static void fill_##SUF(T *y, int64_t n, const T *b)                                                          \
    {                                                                                                            \
        T v = b ? *b : 0;                                                                                        \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = v;                                            \
    }                                                                                                            \
    /* Adds rows m of the [rows, ld] block s to those of y, columns [0, n). */                                   \
    static void add_rows_##SUF(T *y, const T *s, int64_t rows, int64_t n, int64_t ld)                            \
    {                                                                                                            \
        for (int64_t m = 0; m < rows; m++) {                                                                     \
            T *restrict row = y + m * ld;                                                                        \
            const T *restrict src = s + m * ld;                                                                  \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) row[i] += src[i];                                \
        }                                                                                                        \
    }                                                                                                            \
    /* Adds bias[m] to rows m of a [rows, ld] block, columns [0, n). */                                          \
    static void add_bias_##SUF(T *y, int64_t rows, int64_t n, int64_t ld, const T *b)                            \
    {                                                                                                            \
        for (int64_t m = 0; m < rows; m++) {                                                                     \
            T v = b[m], *row = y + m * ld;                                                                       \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) row[i] += v;                                     \
        }                                                                                                        \
    }
RUNS(float, f)
RUNS(double, d)
#undef RUNS

/* Clones for the x86-64 vector extensions, picked at load time by the CPU's
 * features (GCC function multiversioning, as src/cpu/quant.c). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DWCLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define DWCLONES
#endif

/* silu in f64 (f32 uses vmath.h's ft_vsiluf, as unary.c does) */
static inline double silu_d(double x) { return x / (1.0 + exp(-x)); }

/* The fused activation (params.h ft_conv_act) on n outputs in place, each as
 * its op's kernel computes it (src/cpu/unary.c; f32 silu with vmath.h): NaN
 * passes relu and clip. */
#define EPILOGUE(T, SUF, SILU)                                                                                     \
    DWCLONES static void epilogue_##SUF(T *restrict y, int64_t n, const ft_conv_params *p)                               \
    {                                                                                                            \
        const T lo = (T)p->act_lo, hi = (T)p->act_hi;                                                            \
        switch (p->act) {                                                                                        \
        case FT_CONV_ACT_NONE:                                                                                   \
            return;                                                                                              \
        case FT_CONV_ACT_RELU:                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = y[i] < 0 ? (T)0 : y[i];                  \
            return;                                                                                              \
        case FT_CONV_ACT_CLIP:                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                                  \
            {                                                                                                    \
                T t = y[i] < lo ? lo : y[i];                                                                     \
                y[i] = t > hi ? hi : t;                                                                          \
            }                                                                                                    \
            return;                                                                                              \
        case FT_CONV_ACT_SILU:                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = SILU(y[i]);                             \
            return;                                                                                              \
        case FT_CONV_ACT_HARD_SWISH:                                                                             \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                                  \
            {                                                                                                    \
                T t = y[i] + (T)3;                                                                               \
                t = t < 0 ? (T)0 : t;                                                                            \
                t = t > 6 ? (T)6 : t;                                                                            \
                y[i] = y[i] * t / (T)6;                                                                          \
            }                                                                                                    \
            return;                                                                                              \
        }                                                                                                        \
    }
EPILOGUE(float, f, ft_vsiluf)
EPILOGUE(double, d, silu_d)
#undef EPILOGUE

static void epilogue(const geom *g, const ft_conv_params *p, void *y, int64_t n)
{
    if (g->es == 4)
        epilogue_f(y, n, p);
    else
        epilogue_d(y, n, p);
}

/* y[i] += s[i] over `rows` rows of n at stride ld: the fused residual sum
 * (conv's input 3), added before the activation. */
static void add_rows(const geom *g, void *y, const void *s, int64_t rows, int64_t n, int64_t ld)
{
    if (!s)
        return;
    if (g->es == 4)
        add_rows_f(y, s, rows, n, ld);
    else
        add_rows_d(y, s, rows, n, ld);
}

static void fill(const geom *g, void *y, int64_t n, const void *b)
{
    if (g->es == 4)
        fill_f(y, n, b);
    else
        fill_d(y, n, b);
}

/* ------------------------------------------------------------------ gemm */

/* C[m,n] = op(A)[m,k] @ B[k,n], row-major, A transposed when ta.
 * cblas takes int sizes; the shapes beyond them use a plain loop. */
static void gemm(const geom *g, int ta, int64_t m, int64_t n, int64_t kd, const void *a, int64_t lda, const void *b,
                 int64_t ldb, void *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (g->es == 4) { /* blas.c: 64-bit sizes; oneDNN's errors are bad arguments only, which geom rules out */
        (void)cpu_sgemm(ta, 0, m, n, kd, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
        return;
    }
    if (m > INT_MAX || n > INT_MAX || kd > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0;
                for (int64_t p = 0; p < kd; p++) {
                    int64_t ia = ta ? p * lda + i : i * lda + p, ib = p * ldb + j;
                    acc += g->es == 4 ? (double)((const float *)a)[ia] * ((const float *)b)[ib]
                                      : ((const double *)a)[ia] * ((const double *)b)[ib];
                }
                if (g->es == 4)
                    ((float *)c)[i * ldc + j] = (float)acc;
                else
                    ((double *)c)[i * ldc + j] = acc;
            }
        return;
    }
    enum CBLAS_TRANSPOSE t = ta ? CblasTrans : CblasNoTrans;
    cblas_dgemm(CblasRowMajor, t, CblasNoTrans, (int)m, (int)n, (int)kd, 1.0, a, (int)lda, b, (int)ldb, 0.0, c,
                (int)ldc);
}

/* ------------------------------------------------------------------ im2col */

/* Copies n elements from src at stride s into contiguous dst. */
static void copy_strided(void *dst, const void *src, int64_t n, int64_t s, size_t es)
{
    if (n <= 0)
        return;
    if (s == 1) {
        memcpy(dst, src, (size_t)n * es);
    } else if (es == 4) {
        uint32_t *restrict o = dst;
        const uint32_t *restrict x = src;
        for (int64_t i = 0; i < n; i++)
            o[i] = x[i * s];
    } else {
        uint64_t *restrict o = dst;
        const uint64_t *restrict x = src;
        for (int64_t i = 0; i < n; i++)
            o[i] = x[i * s];
    }
}

/* Advances the multi-index v over dims[0..n-1] (last fastest). */
static void next_index(int64_t *v, const int64_t *dims, int n)
{
    for (int j = n - 1; j >= 0; j--) {
        if (++v[j] < dims[j])
            return;
        v[j] = 0;
    }
}

/* Splits a flat position of a plane into its leading multi-index
 * (dims[0..n-1]) and its position along dims[n]. */
static int64_t split_pos(int64_t p, const int64_t *dims, int n, int64_t *v)
{
    int64_t last = p % dims[n], row = p / dims[n];
    for (int j = n - 1; j >= 0; j--) {
        v[j] = row % dims[j];
        row /= dims[j];
    }
    return last;
}

/* The ranges along the last spatial dim for each of its kernel positions
 * (the ranges along the last dim do not depend on the leading dims). Kernels
 * wider than the table compute theirs on the fly. */
#define RANGE_TAB 64
typedef struct {
    int64_t lo[RANGE_TAB], hi[RANGE_TAB];
} ranges;

static void fill_ranges(const geom *g, int transpose, ranges *rg)
{
    int L = g->r - 1;
    for (int64_t kq = 0; kq < g->k[L] && kq < RANGE_TAB; kq++)
        (transpose ? in_range : out_range)(g, L, kq, &rg->lo[kq], &rg->hi[kq]);
}

static void range_at(const geom *g, int transpose, const ranges *rg, int64_t kq, int64_t *lo, int64_t *hi)
{
    if (kq < RANGE_TAB)
        *lo = rg->lo[kq], *hi = rg->hi[kq];
    else
        (transpose ? in_range : out_range)(g, g->r - 1, kq, lo, hi);
}

/* Offset (in elements) of the row that row v reaches at leading kernel
 * position kv, in a tensor of leading dims lim and strides st, or -1 when it
 * lies outside (the padding): the input row an output row reads (lim g->in),
 * or the output row an input row reaches (transpose, lim g->out). */
static int64_t lead_offset(const geom *g, const int64_t *v, const int64_t *kv, const int64_t *lim, const int64_t *st)
{
    int64_t off = 0;
    for (int j = 0; j < g->r - 1; j++) {
        int64_t i = v[j] * g->s[j] + kv[j] * g->d[j] - g->pb[j];
        if (i < 0 || i >= lim[j])
            return -1;
        off += i * st[j];
    }
    return off;
}

/* col[(c*KK + kk), p - p0] = x[c, position p shifted by kernel position kk]
 * (0 in the padding), for output positions p in [p0, p1) of one group. xg
 * points at the group's first input channel. The positions are walked one
 * output row segment at a time so that index arithmetic stays out of the
 * per-channel copies. */
static void im2col(const geom *g, const char *xg, char *col, int64_t p0, int64_t p1)
{
    const int L = g->r - 1;
    const size_t es = g->es;
    const int64_t OL = g->out[L], KL = g->k[L], klead = g->KK / KL, pt = p1 - p0, sL = g->s[L];
    int64_t ist[MAX_SP];
    ranges rg;
    plane_strides(g->in, g->r, ist);
    fill_ranges(g, 0, &rg);
    for (int64_t p = p0; p < p1;) {
        int64_t ov[MAX_SP], kv[MAX_SP] = {0};
        int64_t o0 = split_pos(p, g->out, L, ov), len = min64(OL - o0, p1 - p);
        char *seg = col + (size_t)(p - p0) * es;
        for (int64_t kl = 0; kl < klead; kl++, next_index(kv, g->k, L)) {
            int64_t off = lead_offset(g, ov, kv, g->in, ist);
            for (int64_t kq = 0; kq < KL; kq++) {
                int64_t lo, hi;
                range_at(g, 0, &rg, kq, &lo, &hi);
                /* [a, b) is the part of the tile [o0, o0 + len) that reads
                 * the input; both stay inside the tile, also when every
                 * position of it lies in the padding (lo past its end). */
                int64_t a = off < 0 ? o0 : min64(max64(lo, o0), o0 + len);
                int64_t b = off < 0 ? o0 : min64(hi, o0 + len);
                if (b < a)
                    b = a;
                int64_t src = off + a * sL + kq * g->d[L] - g->pb[L];
                for (int64_t c = 0; c < g->Cg; c++) {
                    char *dp = seg + (size_t)((c * g->KK + kl * KL + kq) * pt) * es;
                    if (a > o0)
                        memset(dp, 0, (size_t)(a - o0) * es);
                    if (b > a)
                        copy_strided(dp + (size_t)(a - o0) * es, xg + (size_t)(c * g->NI + src) * es, b - a, sL, es);
                    if (b < o0 + len)
                        memset(dp + (size_t)(b - o0) * es, 0, (size_t)(o0 + len - b) * es);
                }
            }
        }
        p += len;
    }
}

/* ------------------------------------------------------------------ direct loops */

/* y (one output plane) += sum over kernel positions of w[kk] * x shifted:
 * the conv of one input plane x with one filter w. */
static void direct_gather(const geom *g, void *y, const void *x, const void *w)
{
    const int L = g->r - 1;
    const size_t es = g->es;
    const int64_t OL = g->out[L], KL = g->k[L], rows = g->P / OL, klead = g->KK / KL, sL = g->s[L];
    int64_t ist[MAX_SP], ov[MAX_SP] = {0};
    ranges rg;
    plane_strides(g->in, g->r, ist);
    fill_ranges(g, 0, &rg);
    for (int64_t row = 0; row < rows; row++, next_index(ov, g->out, L)) {
        char *yr = (char *)y + (size_t)(row * OL) * es;
        int64_t kv[MAX_SP] = {0};
        for (int64_t kl = 0; kl < klead; kl++, next_index(kv, g->k, L)) {
            int64_t off = lead_offset(g, ov, kv, g->in, ist);
            if (off < 0)
                continue;
            for (int64_t kq = 0; kq < KL; kq++) {
                int64_t a, b;
                range_at(g, 0, &rg, kq, &a, &b);
                if (a >= b)
                    continue;
                int64_t src = off + a * sL + kq * g->d[L] - g->pb[L];
                if (es == 4)
                    gather_f((float *)yr + a, (const float *)x + src, b - a, sL, ((const float *)w)[kl * KL + kq]);
                else
                    gather_d((double *)yr + a, (const double *)x + src, b - a, sL, ((const double *)w)[kl * KL + kq]);
            }
        }
    }
}

/* y (one output plane) += v * x scattered to output positions i*s + kk*d - pb
 * for each kernel position kk and input position i in [i0, i1). With x set,
 * x holds the whole input plane and v = w[kk] (a filter); with x NULL, w is
 * a col buffer whose row kk holds the tile's values (v = 1). */
static void direct_scatter(const geom *g, void *y, const void *x, const void *w, int64_t i0, int64_t i1)
{
    const int L = g->r - 1;
    const size_t es = g->es;
    const int64_t IL = g->in[L], KL = g->k[L], klead = g->KK / KL, sL = g->s[L], len_t = i1 - i0;
    int64_t ost[MAX_SP];
    ranges rg;
    plane_strides(g->out, g->r, ost);
    fill_ranges(g, 1, &rg);
    for (int64_t p = i0; p < i1;) {
        int64_t iv[MAX_SP], kv[MAX_SP] = {0};
        int64_t c0 = split_pos(p, g->in, L, iv), len = min64(IL - c0, i1 - p);
        for (int64_t kl = 0; kl < klead; kl++, next_index(kv, g->k, L)) {
            int64_t off = lead_offset(g, iv, kv, g->out, ost);
            if (off < 0)
                continue;
            for (int64_t kq = 0; kq < KL; kq++) {
                int64_t lo, hi, kk = kl * KL + kq;
                range_at(g, 1, &rg, kq, &lo, &hi);
                int64_t a = max64(lo, c0), b = min64(hi, c0 + len);
                if (a >= b)
                    continue;
                int64_t dst = off + a * sL + kq * g->d[L] - g->pb[L], at = p - i0 + (a - c0);
                if (es == 4) {
                    const float *src = x ? (const float *)x + at : (const float *)w + kk * len_t + at;
                    scatter_f((float *)y + dst, src, b - a, sL, x ? ((const float *)w)[kk] : 1.0f);
                } else {
                    const double *src = x ? (const double *)x + at : (const double *)w + kk * len_t + at;
                    scatter_d((double *)y + dst, src, b - a, sL, x ? ((const double *)w)[kk] : 1.0);
                }
            }
        }
        p += len;
    }
}

/* ------------------------------------------------------------------ depthwise 2-D, f32 */

/* Output columns [lo, hi) of one row of a KxK depthwise conv at stride S
 * (dilation 1), every tap inside the input row: y[ox] = b + sum of
 * w[ky*K+kx] * rows[ky][ox*S + kx - pl], vectorised over ox. rows[ky] is an
 * input row or a row of zeros (vertical padding). */
#define DW_ROW(K, S)                                                                                              \
    DWCLONES static void dw_row_##K##_##S(float *restrict y, const float *const *rows, const float *restrict w,   \
                                          float b, int64_t lo, int64_t hi, int64_t pl)                           \
    {                                                                                                            \
        float wk[K * K];                                                                                         \
        const float *r[K];                                                                                       \
        for (int i = 0; i < K * K; i++)                                                                          \
            wk[i] = w[i];                                                                                        \
        for (int i = 0; i < K; i++)                                                                              \
            r[i] = rows[i];                                                                                      \
        _Pragma("omp simd") for (int64_t ox = lo; ox < hi; ox++)                                                 \
        {                                                                                                        \
            float acc = b;                                                                                       \
            _Pragma("GCC unroll 8") for (int ky = 0; ky < K; ky++)                                               \
                _Pragma("GCC unroll 8") for (int kx = 0; kx < K; kx++)                                           \
                    acc += wk[ky * K + kx] * r[ky][ox * S + kx - pl];                                            \
            y[ox] = acc;                                                                                         \
        }                                                                                                        \
    }
DW_ROW(3, 1)
DW_ROW(3, 2)
DW_ROW(5, 1)
DW_ROW(5, 2)
DW_ROW(7, 1)
DW_ROW(7, 2)
#undef DW_ROW

typedef void (*dw_row_fn)(float *restrict, const float *const *, const float *restrict, float, int64_t, int64_t,
                          int64_t);

/* The row kernel of a 2-D f32 depthwise geometry (square kernel 3, 5 or 7,
 * equal strides 1 or 2, dilation 1), or NULL for the general loops. */
static dw_row_fn dw_kernel(const geom *g)
{
    if (g->r != 2 || g->es != 4 || g->d[0] != 1 || g->d[1] != 1 || g->k[0] != g->k[1] || g->s[0] != g->s[1])
        return NULL;
    int64_t K = g->k[0], S = g->s[0];
    if (S != 1 && S != 2)
        return NULL;
    if (K == 3)
        return S == 1 ? dw_row_3_1 : dw_row_3_2;
    if (K == 5)
        return S == 1 ? dw_row_5_1 : dw_row_5_2;
    if (K == 7)
        return S == 1 ? dw_row_7_1 : dw_row_7_2;
    return NULL;
}

/* One output plane of a depthwise conv through a row kernel: the columns
 * whose taps leave the input row are summed tap by tap, checked. zero holds
 * at least W zeros. */
static void dw_plane(const geom *g, dw_row_fn row, float *y, const float *x, const float *w, float b,
                     const float *zero)
{
    const int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1], K = g->k[0], S = g->s[0];
    const int64_t pt = g->pb[0], pl = g->pb[1];
    /* interior columns: ox*S - pl >= 0 and ox*S + K-1 - pl <= W-1 */
    int64_t lo = min64((pl + S - 1) / S, OW), hi = W - K + pl >= 0 ? min64((W - K + pl) / S + 1, OW) : 0;
    if (hi < lo)
        hi = lo;
    const float *rows[7];
    for (int64_t oy = 0; oy < OH; oy++) {
        float *yr = y + oy * OW;
        for (int64_t ky = 0; ky < K; ky++) {
            int64_t iy = oy * S + ky - pt;
            rows[ky] = iy >= 0 && iy < H ? x + iy * W : zero;
        }
        row(yr, rows, w, b, lo, hi, pl);
        for (int64_t ox = 0; ox < OW; ox = ox + 1 == lo ? hi : ox + 1) {
            if (ox >= lo && ox < hi)
                continue;
            float acc = b;
            for (int64_t ky = 0; ky < K; ky++)
                for (int64_t kx = 0; kx < K; kx++) {
                    int64_t ix = ox * S + kx - pl;
                    if (ix >= 0 && ix < W)
                        acc += w[ky * K + kx] * rows[ky][ix];
                }
            yr[ox] = acc;
        }
    }
}

/* Rows narrower than this run dw_small: too short for the row kernel's vectors. */
#define DW_NARROW 48

/* Floats of dw_small's scratch: the zero-padded input plane (rows of Wp =
 * (OW-1)*S + K, with slack for the stride-2 overrun) and the output plane at
 * row stride Wp. */
static int64_t dw_small_floats(const geom *g, int64_t *wp, int64_t *hp)
{
    const int64_t K = g->k[0], S = g->s[0];
    *wp = (g->out[1] - 1) * S + K;
    *hp = (g->out[0] - 1) * S + K;
    return (*hp + 2) * *wp + 2 * K + g->out[0] * *wp;
}

/* One output plane of a depthwise conv with narrow rows: the input is copied
 * into a zero-padded plane so that every tap is in range, then the row
 * kernel runs once over the plane flattened at row stride Wp (output q =
 * oy*Wp + ox reads padded element q*S + ky*Wp + kx); the columns ox >= OW it
 * computes on the way are dropped. */
static void dw_small(const geom *g, dw_row_fn row, float *y, const float *x, const float *w, float b, float *scratch)
{
    const int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1], S = g->s[0];
    const int64_t pt = g->pb[0], pl = g->pb[1];
    int64_t Wp, Hp, nf = dw_small_floats(g, &Wp, &Hp);
    float *xp = scratch, *yp = scratch + (nf - OH * Wp);
    memset(xp, 0, (size_t)(nf - OH * Wp) * sizeof(float));
    for (int64_t iy = max64(0, -pt); iy < H && iy - (-pt) < Hp; iy++) {
        /* padded row iy + pt holds input row iy at columns pl.. */
        int64_t c0 = max64(0, -pl), c1 = min64(W, Wp - pl);
        if (c1 > c0)
            memcpy(xp + (iy + pt) * Wp + pl + c0, x + iy * W + c0, (size_t)(c1 - c0) * sizeof(float));
    }
    const float *rows[7];
    for (int64_t ky = 0; ky < g->k[0]; ky++)
        rows[ky] = xp + ky * Wp;
    row(yp, rows, w, b, 0, (OH - 1) * Wp + OW, 0);
    for (int64_t oy = 0; oy < OH; oy++)
        memcpy(y + oy * OW, yp + oy * Wp, (size_t)OW * sizeof(float));
    (void)S;
}

/* ------------------------------------------------------------------ conv */

/* The calling thread's number in its parallel region (0 outside one). */
static inline int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static ft_status oom(ft_kctx *k, const ft_node *n, size_t bytes)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory allocating a %zu-byte convolution buffer", bytes);
}

/* ------------------------------------------------------------------ taps mostly in padding */

/* Output positions, summed over the kernel taps, whose tap reads the input
 * (not the padding): the multiply-adds a tap-by-tap form does, against
 * KK * P for im2col (an atrous conv with a dilation near the map's size, as
 * DeepLab's ASPP on a 14x14 map, reads padding at most taps). */
/* Tap kk's box of output positions that read the input (out_range per
 * dim): its kernel index kj, bounds lo, hi per dim, and its size. */
static int64_t tap_box(const geom *g, int64_t kk, int64_t *kj, int64_t *lo, int64_t *hi)
{
    int64_t rem = kk, r = 1;
    for (int j = g->r - 1; j >= 0; j--) {
        kj[j] = rem % g->k[j];
        rem /= g->k[j];
        out_range(g, j, kj[j], &lo[j], &hi[j]);
        r *= hi[j] - lo[j];
    }
    return r;
}

static int64_t live_taps(const geom *g)
{
    int64_t live = 0, kj[MAX_SP], lo[MAX_SP], hi[MAX_SP];
    for (int64_t kk = 0; kk < g->KK; kk++)
        live += tap_box(g, kk, kj, lo, hi);
    return live;
}

/* Whether conv_sparse runs the node: one group, less than half the taps'
 * positions live, buffers within 64 MiB. */
static int sparse_fits(const geom *g)
{
    if (g->G != 1 || g->KK < 2 || (uint64_t)(g->Cg + g->Mg) * (uint64_t)g->P * g->es > (64u << 20))
        return 0;
    return 2 * live_taps(g) < g->KK * g->P;
}

#define DEF_SPARSE_MOVE(S, T)                                                                                         \
    static void sparse_gather_##S(T *col, const T *x, const int64_t *ipos, int64_t R, int64_t C, int64_t NI)         \
    {                                                                                                                 \
        for (int64_t c = 0; c < C; c++)                                                                               \
            for (int64_t q = 0; q < R; q++)                                                                           \
                col[c * R + q] = x[c * NI + ipos[q]];                                                                 \
    }                                                                                                                 \
    static void sparse_add_##S(T *y, const T *tmp, const int64_t *opos, int64_t R, int64_t M, int64_t P)             \
    {                                                                                                                 \
        for (int64_t m = 0; m < M; m++)                                                                               \
            for (int64_t q = 0; q < R; q++)                                                                           \
                y[m * P + opos[q]] += tmp[m * R + q];                                                                 \
    }                                                                                                                 \
    static void sparse_pack_##S(T *wt, const T *w, int64_t kk, int64_t KK, int64_t n)                                \
    {                                                                                                                 \
        for (int64_t i = 0; i < n; i++)                                                                               \
            wt[i] = w[i * KK + kk];                                                                                   \
    }
DEF_SPARSE_MOVE(f, float)
DEF_SPARSE_MOVE(d, double)

/* The weights of a node conv_sparse runs, one [M, C] block per tap, packed
 * once per node and weights (the CPU_DNNL_SPARSE cache of dnnl_cache.h:
 * rebuilt when the weights move, freed with the backend context). */
typedef struct {
    cpu_dnnl_key key;
    void *wt; /* owned */
} sparse_entry;

static void sparse_drop(void *p)
{
    sparse_entry *e = p;
    free(e->wt);
    e->wt = NULL;
}

static const cpu_dnnl_kind sparse_kind = {CPU_DNNL_SPARSE, sizeof(cpu_dnnl_cache), sizeof(sparse_entry), sparse_drop,
                                          NULL};

/* Tap by tap (sparse_fits): y = bias, then for every kernel tap the output
 * positions where it reads the input (a box per tap: out_range) get
 * W[:, :, tap] @ x at those positions (gathered into a column block, one
 * gemm per tap and batch entry); the residual sum and the activation last.
 * The products skipped all read padding (zeros), so the sums are those of
 * im2col's without their zero terms. */
static ft_status conv_sparse(ft_kctx *k, const ft_node *n, const ft_view *in, const geom *g, const char *x, const char *w,
                             const char *b, const char *sum, char *y)
{
    const size_t es = g->es;
    const int64_t P = g->P, C = g->Cg, M = g->Mg;
    int64_t rmax = 0, ist[MAX_SP], ost[MAX_SP], lo[MAX_SP], hi[MAX_SP], kj[MAX_SP];
    plane_strides(g->in, g->r, ist);
    plane_strides(g->out, g->r, ost);
    for (int64_t kk = 0; kk < g->KK; kk++)
        rmax = max64(rmax, tap_box(g, kk, kj, lo, hi));
    /* the packed weights: kept per node where the weights are a constant, else this run's */
    cpu_dnnl_cache *cc;
    int fresh = 0, keep = k->g && k->be && cpu_input_is_const(k, n, 1);
    sparse_entry *e = keep ? cpu_dnnl_lookup(k, &sparse_kind, n, in, 0, &cc, &fresh) : NULL;
    size_t wb = (size_t)(g->KK * M * C) * es;
    char *wt = e ? e->wt : NULL, *own = NULL;
    if (!wt) {
        if (!(wt = own = ft_malloc(wb ? wb : 1)))
            return oom(k, n, wb);
        for (int64_t kk = 0; kk < g->KK; kk++)
            if (es == 4)
                sparse_pack_f((float *)wt + kk * M * C, (const float *)w, kk, g->KK, M * C);
            else
                sparse_pack_d((double *)wt + kk * M * C, (const double *)w, kk, g->KK, M * C);
        if (e)
            e->wt = own, own = NULL;
    }
    size_t nb = (size_t)((C + M) * rmax) * es + (size_t)(2 * rmax) * sizeof(int64_t);
    char *buf = ft_malloc(nb ? nb : 1);
    if (!buf) {
        free(own);
        return oom(k, n, nb);
    }
    int64_t *ipos = (int64_t *)buf, *opos = ipos + rmax; /* first: their alignment */
    char *col = (char *)(opos + rmax), *tmp = col + (size_t)(C * rmax) * es;
    for (int64_t t = 0; t < g->N * M; t++)
        fill(g, y + (size_t)(t * P) * es, P, b ? b + (size_t)(t % M) * es : NULL);
    for (int64_t kk = 0; kk < g->KK; kk++) {
        int64_t R = tap_box(g, kk, kj, lo, hi);
        if (R == 0)
            continue;
        for (int64_t q = 0; q < R; q++) { /* the box's positions, row-major */
            int64_t at = q, ip = 0, op = 0;
            for (int j = g->r - 1; j >= 0; j--) {
                int64_t span = hi[j] - lo[j], o = lo[j] + at % span;
                at /= span;
                op += o * ost[j];
                ip += (o * g->s[j] + kj[j] * g->d[j] - g->pb[j]) * ist[j];
            }
            ipos[q] = ip, opos[q] = op;
        }
        const char *wk = wt + (size_t)(kk * M * C) * es;
        for (int64_t bn = 0; bn < g->N; bn++) {
            const char *xb = x + (size_t)(bn * C * g->NI) * es;
            char *yb = y + (size_t)(bn * M * P) * es;
            if (es == 4)
                sparse_gather_f((float *)col, (const float *)xb, ipos, R, C, g->NI);
            else
                sparse_gather_d((double *)col, (const double *)xb, ipos, R, C, g->NI);
            gemm(g, 0, M, R, C, wk, C, col, R, tmp, R);
            if (es == 4)
                sparse_add_f((float *)yb, (const float *)tmp, opos, R, M, P);
            else
                sparse_add_d((double *)yb, (const double *)tmp, opos, R, M, P);
        }
    }
    for (int64_t t = 0; t < g->N * M; t++) {
        add_rows(g, y + (size_t)(t * P) * es, sum ? sum + (size_t)(t * P) * es : NULL, 1, P, P);
        epilogue(g, &n->params.conv, y + (size_t)(t * P) * es, P);
    }
    free(buf);
    free(own);
    return FT_OK;
}

static ft_status conv_native(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    geom g;
    const ft_conv_params *p = &n->params.conv;
    ft_conv_geom_of(p, &in[0].shape, &in[1].shape, &out[0].shape, in[0].dtype, 0, &g);
    const size_t es = g.es;
    const char *x = in[0].data, *w = in[1].data, *b = n->n_in > 2 ? in[2].data : NULL;
    const char *sum = n->n_in > 3 ? in[3].data : NULL; /* the fused residual, shaped as y */
    char *y = out[0].data;
    if (ft_numel(&out[0].shape) == 0)
        return FT_OK;
    const int64_t Kc = g.Cg * g.KK, P = g.P;
    const int T = k->threads > 0 ? k->threads : 1;
    /* C == 0: nothing to sum, the output is the bias. */
    if (Kc == 0) {
        for (int64_t t = 0; t < g.N * g.M; t++) {
            fill(&g, y + (size_t)(t * P) * es, P, b ? b + (size_t)(t % g.M) * es : NULL);
            add_rows(&g, y + (size_t)(t * P) * es, sum ? sum + (size_t)(t * P) * es : NULL, 1, P, P);
            epilogue(&g, p, y + (size_t)(t * P) * es, P);
        }
        return FT_OK;
    }
    uint64_t work = (uint64_t)g.N * (uint64_t)g.M * (uint64_t)P * (uint64_t)Kc;

    if (sparse_fits(&g))
        return conv_sparse(k, n, in, &g, x, w, b, sum, y);

    if (g.Cg == 1 && g.G > 1) {
        /* depthwise: one plane per task, summed directly (by rows of a
         * vectorised kernel where dw_kernel has one), the activation applied
         * to the plane while it is in cache */
        int par = T > 1 && g.N * g.M > 1 && work >= CPU_PAR_MIN;
        dw_row_fn row = dw_kernel(&g);
        int64_t wp_, hp_, small = row && g.out[1] < DW_NARROW ? dw_small_floats(&g, &wp_, &hp_) : 0;
        /* per thread: dw_small's scratch; or one row of zeros for dw_plane */
        size_t per = small ? (size_t)small : (size_t)g.in[1], nthr = small && par ? (size_t)T : 1;
        float *scratch = row ? ft_calloc(per * nthr, sizeof(float)) : NULL;
        if (row && !scratch)
            return oom(k, n, per * nthr * sizeof(float));
#pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (par)
        for (int64_t t = 0; t < g.N * g.M; t++) {
            int64_t nb = t / g.M, m = t % g.M, c = m / g.Mg;
            char *yp = y + (size_t)(t * P) * es;
            const char *xp = x + (size_t)((nb * g.C + c) * g.NI) * es, *wp = w + (size_t)(m * g.KK) * es;
            float bias = b && row ? ((const float *)b)[m] : 0.0f;
            if (small) {
                dw_small(&g, row, (float *)yp, (const float *)xp, (const float *)wp, bias,
                         scratch + per * (size_t)thread_num());
            } else if (row) {
                dw_plane(&g, row, (float *)yp, (const float *)xp, (const float *)wp, bias, scratch);
            } else {
                fill(&g, yp, P, b ? b + (size_t)m * es : NULL);
                direct_gather(&g, yp, xp, wp);
            }
            add_rows(&g, yp, sum ? sum + (size_t)(t * P) * es : NULL, 1, P, P);
            epilogue(&g, p, yp, P);
        }
        free(scratch);
        return FT_OK;
    }

    /* A 1x1 kernel at stride 1 without padding reads x as the column matrix. */
    int pointwise = 1;
    for (int j = 0; j < g.r; j++)
        pointwise &= g.k[j] == 1 && g.s[j] == 1 && g.pb[j] == 0 && g.in[j] == g.out[j];
    /* Every tile repacks the weights inside BLAS: below ~128 columns that
     * costs more than the cache misses of a larger tile. */
    int64_t pt = max64(128, (int64_t)(TILE_BYTES / ((uint64_t)Kc * es)) / 16 * 16);
    pt = min64(pt, P);
    int64_t tiles = (P + pt - 1) / pt, ng = g.N * g.G;
    /* Few tasks: cut the tiles finer so that every thread has equal work. */
    if (T > 1 && ng * tiles < 4 * T && P >= 64 * T) {
        int64_t want = (tiles + T - 1) / T * T;
        pt = max64(32, (P + want - 1) / want);
        pt = (pt + 15) / 16 * 16;
        tiles = (P + pt - 1) / pt;
    }
    int64_t tasks = ng * tiles;
    int par = T > 1 && tasks >= T && work >= (1u << 18);
    int nbuf = par ? T : 1;
    size_t bufsz = pointwise ? 0 : (size_t)(Kc * pt) * es;
    char *cols = NULL;
    if (bufsz && !(cols = ft_malloc(bufsz * (size_t)nbuf)))
        return oom(k, n, bufsz * (size_t)nbuf);
    /* Threads run one single-threaded gemm each; a lone task gets BLAS's own threads. */
    openblas_set_num_threads(par ? 1 : T);
#pragma omp parallel num_threads(T) if (par)
    {
        char *col = cols ? cols + bufsz * (size_t)thread_num() : NULL;
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            int64_t gi = t / tiles, tile = t % tiles, nb = gi / g.G, gr = gi % g.G;
            int64_t p0 = tile * pt, p1 = min64(P, p0 + pt);
            const char *xg = x + (size_t)((nb * g.C + gr * g.Cg) * g.NI) * es;
            char *yg = y + (size_t)((nb * g.M + gr * g.Mg) * P + p0) * es;
            const char *wg = w + (size_t)(gr * g.Mg * Kc) * es;
            if (pointwise) {
                gemm(&g, 0, g.Mg, p1 - p0, Kc, wg, Kc, xg + (size_t)p0 * es, P, yg, P);
            } else {
                im2col(&g, xg, col, p0, p1);
                gemm(&g, 0, g.Mg, p1 - p0, Kc, wg, Kc, col, p1 - p0, yg, P);
            }
            if (b) {
                if (es == 4)
                    add_bias_f((float *)yg, g.Mg, p1 - p0, P, (const float *)b + gr * g.Mg);
                else
                    add_bias_d((double *)yg, g.Mg, p1 - p0, P, (const double *)b + gr * g.Mg);
            }
            if (sum)
                add_rows(&g, yg, sum + (yg - y), g.Mg, p1 - p0, P);
            for (int64_t m = 0; p->act != FT_CONV_ACT_NONE && m < g.Mg; m++)
                epilogue(&g, p, yg + (size_t)(m * P) * es, p1 - p0);
        }
    }
    openblas_set_num_threads(T);
    free(cols);
    return FT_OK;
}

/* oneDNN where it runs the node faster (conv_dnnl.c), else the loops above. */
ft_status cpu_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_status st;
    if (cpu_conv_dnnl(k, n, in, out, conv_native, &st))
        return st;
    return conv_native(k, n, in, out);
}

/* ------------------------------------------------------------------ conv_transpose */

ft_status cpu_conv_transpose(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    geom g;
    ft_conv_geom_of(&n->params.conv, &in[0].shape, &in[1].shape, &out[0].shape, in[0].dtype, 1, &g);
    const size_t es = g.es;
    const char *x = in[0].data, *w = in[1].data, *b = n->n_in > 2 ? in[2].data : NULL;
    char *y = out[0].data;
    if (ft_numel(&out[0].shape) == 0)
        return FT_OK;
    const int64_t P = g.P, NI = g.NI, KK = g.KK, Mg = g.Mg;
    const int T = k->threads > 0 ? k->threads : 1;
    uint64_t work = (uint64_t)g.N * (uint64_t)g.C * (uint64_t)NI * (uint64_t)Mg * (uint64_t)KK;

    if (g.Cg <= 1 || NI == 0) {
        /* depthwise (or nothing to scatter): one output plane per task */
        int par = T > 1 && g.N * g.M > 1 && work >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (par)
        for (int64_t t = 0; t < g.N * g.M; t++) {
            int64_t nb = t / g.M, m = t % g.M, gr = m / Mg;
            char *yp = y + (size_t)(t * P) * es;
            fill(&g, yp, P, b ? b + (size_t)m * es : NULL);
            for (int64_t c = gr * g.Cg; c < (gr + 1) * g.Cg; c++)
                direct_scatter(&g, yp, x + (size_t)((nb * g.C + c) * NI) * es,
                               w + (size_t)((c * Mg + m % Mg) * KK) * es, 0, NI);
        }
        return FT_OK;
    }

    /* Blocks of output channels: enough blocks for every thread when the
     * batch and groups alone do not provide them. */
    int64_t ng = g.N * g.G, mb = Mg;
    if (T > 1 && ng < 4 * T) {
        int64_t want = (4 * T + ng - 1) / ng;
        mb = max64(1, (Mg + want - 1) / want);
    }
    int64_t mblocks = (Mg + mb - 1) / mb, tasks = ng * mblocks;
    int64_t rows = mb * KK;
    int64_t it = max64(16, (int64_t)(TILE_BYTES / ((uint64_t)rows * es)) / 16 * 16);
    it = min64(it, NI);
    int par = T > 1 && tasks > 1 && work >= (1u << 18);
    int nbuf = par ? T : 1;
    size_t bufsz = (size_t)(rows * it) * es;
    char *cols = ft_malloc(bufsz * (size_t)nbuf);
    if (!cols)
        return oom(k, n, bufsz * (size_t)nbuf);
    openblas_set_num_threads(par ? 1 : T);
#pragma omp parallel num_threads(T) if (par)
    {
        char *col = cols + bufsz * (size_t)thread_num();
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            int64_t gi = t / mblocks, m0 = (t % mblocks) * mb, m1 = min64(Mg, m0 + mb), nb = gi / g.G, gr = gi % g.G;
            const char *xg = x + (size_t)((nb * g.C + gr * g.Cg) * NI) * es;
            char *yg = y + (size_t)((nb * g.M + gr * Mg) * P) * es;
            /* W[g] is [Cg, Mg*KK]; columns m0*KK.. of it, transposed */
            const char *wg = w + (size_t)(gr * g.Cg * Mg * KK + m0 * KK) * es;
            for (int64_t m = m0; m < m1; m++)
                fill(&g, yg + (size_t)(m * P) * es, P, b ? b + (size_t)(gr * Mg + m) * es : NULL);
            for (int64_t i0 = 0; i0 < NI; i0 += it) {
                int64_t i1 = min64(NI, i0 + it), len = i1 - i0;
                gemm(&g, 1, (m1 - m0) * KK, len, g.Cg, wg, Mg * KK, xg + (size_t)i0 * es, NI, col, len);
                for (int64_t m = m0; m < m1; m++)
                    direct_scatter(&g, yg + (size_t)(m * P) * es, NULL, col + (size_t)((m - m0) * KK * len) * es, i0,
                                   i1);
            }
        }
    }
    openblas_set_num_threads(T);
    free(cols);
    return FT_OK;
}
