/* int8 inference on the CPU (ONNX semantics, src/graph/infer_quant.c):
 * quantize_linear, dequantize_linear, dynamic_quantize_linear, and the
 * integer products matmul_integer and qlinear_matmul. The products subtract
 * the zero points into 16-bit operands (b transposed so both run along K)
 * and accumulate in 32-bit integers, wrapping as ONNX's int32 accumulator
 * does; no product goes through floating point. Rounding and saturation
 * come from runtime/quant_math.h, shared with cuda/quant.cu. */
#include "cpu.h"
#include "../graph/infer_conv.h"
#include "../graph/infer_math.h"
#include "../graph/dtype_load.h"
#include "../graph/infer_misc.h"
#include "../runtime/quant_math.h"
#include "vmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* v rounded to dtype dt (ONNX computes in the dtype of its operands). */
static inline double in_dt(double v, ft_dtype dt)
{
    switch (dt) {
    case FT_F32: return (float)v;
    case FT_F16: return ft_f16_to_f32(ft_f32_to_f16((float)v));
    case FT_BF16: return ft_bf16_to_f32(ft_f32_to_bf16((float)v));
    case FT_F64: case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: case FT_STRING: case FT_DTYPE_COUNT: FT_CASE_LOWP:
        break;
    }
    return v;
}

static inline void st_f(void *p, ft_dtype dt, int64_t i, double v)
{
    switch (dt) {
    case FT_F32: ((float *)p)[i] = (float)v; break;
    case FT_F64: ((double *)p)[i] = v; break;
    case FT_F16: ((uint16_t *)p)[i] = ft_f32_to_f16((float)v); break;
    case FT_BF16: ((uint16_t *)p)[i] = ft_f32_to_bf16((float)v); break;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64: case FT_BOOL:
    case FT_STRING: case FT_DTYPE_COUNT: FT_CASE_LOWP: break;
    }
}

/* (outer, len, inner) of x around the per-axis scale's axis; len 1 per tensor. */
/* quantize_linear and dequantize_linear: x as [outer, len, inner] around
 * the axis of the scale (len 1 for a scalar scale), whether a zero point is
 * given, and whether the work is worth threads. */
typedef struct {
    int64_t outer, len, inner;
    int has_zp, par;
} qplan;

static qplan plan_of(const ft_node *n, const ft_view *in)
{
    qplan q;
    int ax = n->params.quant.axis;
    if (ax < 0)
        q.outer = 1, q.len = 1, q.inner = (int64_t)ft_numel(&in[0].shape);
    else
        ft_reduce_around_axis(&in[0].shape, ax, &q.outer, &q.len, &q.inner);
    q.has_zp = n->n_in > 2 && in[2].data;
    q.par = ft_numel(&in[0].shape) >= CPU_PAR_MIN;
    return q;
}

/* The common forms as loops the compiler vectorises, same results as the
 * general path: f32 -> u8/i8 and u8/i8 -> f32 with f32 scales.
 * q8_from_f32: v = x / s in f32 (the f64 quotient rounded to f32 is the f32
 * quotient), NaN -> 0, clamped to [lo - zp, hi - zp] (integer bounds, so
 * clamping before rounding gives what rounding then saturating gives),
 * rounded half to even by adding and subtracting 1.5 * 2^23 (exact for
 * |v| < 2^22), plus zp. */
FT_VINLINE int32_t q8_of(float x, float s, float zp, float vlo, float vhi)
{
    float v = x / s;
    v = v != v ? 0.0f : v;
    v = v < vlo ? vlo : v > vhi ? vhi : v;
    return (int32_t)(((v + 12582912.0f) - 12582912.0f) + zp);
}

static FT_VCLONES void q8_from_f32(const float *restrict x, int64_t n, float s, float zp, float lo, float hi,
                                   uint8_t *restrict u8, int8_t *restrict i8)
{
    /* omp simd: at -O2 GCC's cost model leaves these loops scalar */
    if (u8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            u8[i] = (uint8_t)q8_of(x[i], s, zp, lo - zp, hi - zp);
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            i8[i] = (int8_t)q8_of(x[i], s, zp, lo - zp, hi - zp);
    }
}

static FT_VCLONES void f32_from_q8(const uint8_t *restrict u8, const int8_t *restrict i8, int64_t n, float zp, float s,
                                   float *restrict y)
{
    if (u8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = ((float)u8[i] - zp) * s;
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = ((float)i8[i] - zp) * s;
    }
}

ft_status cpu_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t lo, hi;
    const qplan q = plan_of(n, in);
    ft_dtype xd = in[0].dtype, qd = out[0].dtype;
    ft_qrange(qd, &lo, &hi);
    if (ft_dtype_in(qd, FT_DT_LOWI))
        ft_lowi_range(qd, &lo, &hi);
    /* the 8- and 4-bit floats: x / scale + zero point, rounded once (no rint) */
    const int lowf = ft_dtype_in(qd, FT_DT_LOWF), sat = lowf && ft_attr(n, "saturate")->i != 0;
    if (xd == FT_F32 && in[1].dtype == FT_F32 && (qd == FT_U8 || qd == FT_I8)) {
#pragma omp parallel for collapse(2) num_threads(k->threads) if (q.par)
        for (int64_t o = 0; o < q.outer; o++)
            for (int64_t c = 0; c < q.len; c++) {
                int64_t base = (o * q.len + c) * q.inner;
                float zp = q.has_zp ? (float)ft_ld_int(in[2].data, in[2].dtype, c) : 0.0f;
                uint8_t *y = (uint8_t *)out[0].data + base;
                q8_from_f32((const float *)in[0].data + base, q.inner, ((const float *)in[1].data)[c], zp, (float)lo,
                            (float)hi, qd == FT_U8 ? y : NULL, qd == FT_I8 ? (int8_t *)y : NULL);
            }
        return FT_OK;
    }
#pragma omp parallel for collapse(2) num_threads(k->threads) if (q.par)
    for (int64_t o = 0; o < q.outer; o++)
        for (int64_t c = 0; c < q.len; c++) {
            double s = ft_ld_f64(in[1].data, xd, c);
            int64_t base = (o * q.len + c) * q.inner;
            if (lowf) {
                double zp = q.has_zp ? ft_ld_f64(in[2].data, in[2].dtype, c) : 0;
                for (int64_t i = base; i < base + q.inner; i++) {
                    double v = in_dt(ft_ld_f64(in[0].data, xd, i) / s, xd);
                    if (q.has_zp) /* absent, -0 stays -0 */
                        v = in_dt(v + zp, xd);
                    ((uint8_t *)out[0].data)[i] = ft_lowf_from_f64(qd, v, sat);
                }
            } else {
                int64_t zp = q.has_zp ? ft_ld_int(in[2].data, in[2].dtype, c) : 0;
                for (int64_t i = base; i < base + q.inner; i++)
                    ft_st_int(out[0].data, qd, i, ft_qsat(rint(in_dt(ft_ld_f64(in[0].data, xd, i) / s, xd)), zp, lo, hi));
            }
        }
    return FT_OK;
}

ft_status cpu_dequantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const qplan q = plan_of(n, in);
    ft_dtype xd = in[0].dtype, sd = in[1].dtype, od = out[0].dtype; /* od: output_dtype, else sd */
    const int xf = ft_dtype_in(xd, FT_DT_LOWF); /* the 8- and 4-bit floats: their values */
    if ((xd == FT_U8 || xd == FT_I8) && sd == FT_F32 && od == FT_F32) {
#pragma omp parallel for collapse(2) num_threads(k->threads) if (q.par)
        for (int64_t o = 0; o < q.outer; o++)
            for (int64_t c = 0; c < q.len; c++) {
                int64_t base = (o * q.len + c) * q.inner;
                const uint8_t *x = (const uint8_t *)in[0].data + base;
                f32_from_q8(xd == FT_U8 ? x : NULL, xd == FT_I8 ? (const int8_t *)x : NULL, q.inner,
                            q.has_zp ? (float)ft_ld_int(in[2].data, xd, c) : 0.0f, ((const float *)in[1].data)[c],
                            (float *)out[0].data + base);
            }
        return FT_OK;
    }
#pragma omp parallel for collapse(2) num_threads(k->threads) if (q.par)
    for (int64_t o = 0; o < q.outer; o++)
        for (int64_t c = 0; c < q.len; c++) {
            /* ONNX: (float32(x) - float32(zp)) * scale, the product in f64 for an f64 scale */
            double s = ft_ld_f64(in[1].data, sd, c);
            float zf = q.has_zp ? (float)(xf ? ft_ld_f64(in[2].data, xd, c) : ft_ld_int(in[2].data, xd, c)) : 0.0f;
            int64_t base = (o * q.len + c) * q.inner;
            for (int64_t i = base; i < base + q.inner; i++) {
                float d = (float)(xf ? ft_ld_f64(in[0].data, xd, i) : ft_ld_int(in[0].data, xd, i)) - zf;
                st_f(out[0].data, od, i, od == FT_F64 ? (double)d * s : (double)(d * (float)s));
            }
        }
    return FT_OK;
}

ft_status cpu_dynamic_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)n;
    const float *x = in[0].data;
    int64_t cnt = (int64_t)ft_numel(&in[0].shape);
    float mx = 0.0f, mn = 0.0f; /* the range always includes 0 */
    int par = cnt >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) if (par) reduction(max : mx) reduction(min : mn)
    for (int64_t i = 0; i < cnt; i++) {
        mx = x[i] > mx ? x[i] : mx;
        mn = x[i] < mn ? x[i] : mn;
    }
    float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zpf = 0.0f - mn / scale;
    zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
    int64_t zp = (int64_t)rintf(zpf);
    uint8_t *y = out[0].data;
#pragma omp parallel for num_threads(k->threads) if (par)
    for (int64_t i = 0; i < cnt; i++)
        y[i] = (uint8_t)ft_qsat(rintf(x[i] / scale), zp, 0, 255);
    *(float *)out[1].data = scale;
    *(uint8_t *)out[2].data = (uint8_t)zp;
    return FT_OK;
}

/* ---------------------------------------------------------------- integer products */

/* Requantization of qlinear_matmul: y = sat(rint(acc * as[i] bs[j] / ys) + yzp),
 * the multiplier computed in the scales' dtype as ONNX does. */
typedef struct {
    const ft_view *as, *bs; /* a's scale (per tensor or per row), b's (per tensor or per column / channel) */
    int64_t lo, hi, yzp;
    double ysv;
} requant;

/* The multiplier as[ia] * bs[jb] / ys, each step rounded to the scales' dtype. */
static inline double qmult(const requant *rq, int64_t ia, int64_t jb)
{
    ft_dtype sd = rq->as->dtype;
    return in_dt(in_dt(ft_ld_f64(rq->as->data, sd, ia) * ft_ld_f64(rq->bs->data, sd, jb), sd) / rq->ysv, sd);
}

/* Rows of int16 (a - a_zp) are dotted with columns of int16 (b - b_zp)
 * in int32 over chunks of at most 32768 terms (|sum| < 2^31), and the
 * chunks are added modulo 2^32: int32 accumulation with wrap-around, as
 * ONNX's MatMulInteger, and without signed overflow. */
#define QCHUNK 32768

/* Clones of the dot products for the x86-64 vector extensions, picked at
 * load time by the CPU's features (GCC function multiversioning). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QCLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define QCLONES
#endif

/* The build's -O2 leaves these loops scalar (GCC's very cheap vectorizer
 * cost model); with the dynamic model they become pmaddwd dot products. */
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")

/* acc[c] += row . col[c] for 4 columns of b (stride K) at once, the row's
 * loads shared. */
QCLONES static void dot4(const int16_t *a, const int16_t *b, int64_t K,
                                                                    uint32_t *acc)
{
    const int16_t *b0 = b, *b1 = b + K, *b2 = b + 2 * K, *b3 = b + 3 * K;
    for (int64_t k0 = 0; k0 < K; k0 += QCHUNK) {
        int64_t k1 = K - k0 < QCHUNK ? K : k0 + QCHUNK;
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int64_t p = k0; p < k1; p++) {
            int32_t v = a[p];
            s0 += v * b0[p];
            s1 += v * b1[p];
            s2 += v * b2[p];
            s3 += v * b3[p];
        }
        acc[0] += (uint32_t)s0, acc[1] += (uint32_t)s1, acc[2] += (uint32_t)s2, acc[3] += (uint32_t)s3;
    }
}

/* acc[4 r + c] += row r . col c for 4 rows of a and 4 columns of b (both
 * with stride K): each loaded value serves four products, which keeps b's
 * columns from being streamed again for every row. */
QCLONES static void dot4x4(const int16_t *a, const int16_t *b, int64_t K, uint32_t *acc)
{
    const int16_t *a0 = a, *a1 = a + K, *a2 = a + 2 * K, *a3 = a + 3 * K;
    const int16_t *b0 = b, *b1 = b + K, *b2 = b + 2 * K, *b3 = b + 3 * K;
    for (int64_t k0 = 0; k0 < K; k0 += QCHUNK) {
        int64_t k1 = K - k0 < QCHUNK ? K : k0 + QCHUNK;
        int32_t s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0;
        int32_t s20 = 0, s21 = 0, s22 = 0, s23 = 0, s30 = 0, s31 = 0, s32 = 0, s33 = 0;
        for (int64_t p = k0; p < k1; p++) {
            int32_t x0 = a0[p], x1 = a1[p], x2 = a2[p], x3 = a3[p];
            int32_t y0 = b0[p], y1 = b1[p], y2 = b2[p], y3 = b3[p];
            s00 += x0 * y0, s01 += x0 * y1, s02 += x0 * y2, s03 += x0 * y3;
            s10 += x1 * y0, s11 += x1 * y1, s12 += x1 * y2, s13 += x1 * y3;
            s20 += x2 * y0, s21 += x2 * y1, s22 += x2 * y2, s23 += x2 * y3;
            s30 += x3 * y0, s31 += x3 * y1, s32 += x3 * y2, s33 += x3 * y3;
        }
        int32_t s[16] = {s00, s01, s02, s03, s10, s11, s12, s13, s20, s21, s22, s23, s30, s31, s32, s33};
        for (int i = 0; i < 16; i++)
            acc[i] += (uint32_t)s[i];
    }
}

QCLONES static uint32_t dot1(const int16_t *a, const int16_t *b, int64_t K)
{
    uint32_t acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += QCHUNK) {
        int64_t k1 = K - k0 < QCHUNK ? K : k0 + QCHUNK;
        int32_t s = 0;
        for (int64_t p = k0; p < k1; p++)
            s += (int32_t)a[p] * b[p];
        acc += (uint32_t)s;
    }
    return acc;
}
#pragma GCC pop_options

/* Rows of a handled together, and the columns of b per panel: a panel of
 * QPANEL columns (QPANEL x K 16-bit values) stays in cache while every row
 * of the group passes over it. */
#define QROWS 16
#define QPANEL 64

/* The int32 products of h <= QROWS rows of a (ar: [h, K]) with every column
 * of b (bm: [N, K]) into out [h, N]. */
static void block_products(const int16_t *ar, int h, const int16_t *bm, int64_t N, int64_t K, int32_t *out)
{
    int h4 = h / 4 * 4;
    int64_t n4 = N / 4 * 4;
    for (int64_t jp = 0; jp < n4; jp += QPANEL) {
        int64_t je = jp + QPANEL < n4 ? jp + QPANEL : n4;
        for (int r0 = 0; r0 < h4; r0 += 4)
            for (int64_t j = jp; j < je; j += 4) {
                uint32_t acc[16] = {0};
                dot4x4(ar + r0 * K, bm + j * K, K, acc);
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++)
                        out[(r0 + r) * N + j + c] = (int32_t)acc[4 * r + c];
            }
    }
    for (int r = 0; r < h; r++) {
        int64_t jj = r < h4 ? n4 : 0;
        for (; jj + 4 <= N; jj += 4) {
            uint32_t acc[4] = {0, 0, 0, 0};
            dot4(ar + r * K, bm + jj * K, K, acc);
            for (int c = 0; c < 4; c++)
                out[r * N + jj + c] = (int32_t)acc[c];
        }
        for (; jj < N; jj++)
            out[r * N + jj] = (int32_t)dot1(ar + r * K, bm + jj * K, K);
    }
}

/* dst[i] = src[i] - z for the n values of an 8-bit (or wider) integer view. */
static void widen(const void *src, ft_dtype dt, int64_t off, int64_t stride, int64_t n, int64_t z, int16_t *dst)
{
    if (dt == FT_U8) {
        const uint8_t *p = (const uint8_t *)src + off;
        for (int64_t i = 0; i < n; i++)
            dst[i] = (int16_t)(p[i * stride] - z);
    } else if (dt == FT_I8) {
        const int8_t *p = (const int8_t *)src + off;
        for (int64_t i = 0; i < n; i++)
            dst[i] = (int16_t)(p[i * stride] - z);
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = (int16_t)(ft_ld_int(src, dt, off + i * stride) - z);
    }
}

static ft_status int_matmul(ft_kctx *k, const ft_node *n, const ft_view *a, const ft_view *b, const ft_view *za,
                            const ft_view *zb, const requant *rq, ft_view *y)
{
    const ft_shape *as = &a->shape, *bs = &b->shape;
    if (ft_numel(&y->shape) == 0)
        return FT_OK;
    ft_matmul_geom g;
    ft_matmul_geom_of(as, bs, &g);
    const int64_t M = g.M, K = g.K, N = g.N, nb = g.nb;
    const uint64_t nbatch = g.nbatch;
    int row_a = n->params.quant.row_a, col_b = n->params.quant.col_b;
    /* b - b_zp, transposed to [N, K], for each of b's matrices */
    int16_t *bt = malloc((size_t)(nb * N * K + 1) * sizeof *bt);
    if (!bt)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the %lld x %lld x %lld integer operand",
                           (long long)nb, (long long)N, (long long)K);
    int par = k->threads > 1 && (uint64_t)nb * N * K >= CPU_PAR_MIN;
#pragma omp parallel for collapse(2) num_threads(k->threads) if (par)
    for (int64_t t = 0; t < nb; t++)
        for (int64_t j = 0; j < N; j++) {
            int64_t z = zb->data ? ft_ld_int(zb->data, zb->dtype, col_b ? j : 0) : 0;
            widen(b->data, b->dtype, t * K * N + j, N, K, z, bt + (t * N + j) * K);
        }
    /* blocks of up to QROWS rows of one matrix of the batch */
    int64_t bpm = (M + QROWS - 1) / QROWS, blocks = (int64_t)nbatch * bpm;
    par = k->threads > 1 && (uint64_t)nbatch * M * N * (K + 1) >= CPU_PAR_MIN;
    ft_status st = FT_OK;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int16_t *ar = malloc((size_t)(QROWS * K + 1) * sizeof *ar);
        int32_t *accs = rq ? malloc((size_t)(QROWS * N + 1) * sizeof *accs) : NULL;
        if (!ar || (rq && !accs)) {
#pragma omp critical
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for %d rows of %lld values", QROWS,
                             (long long)K);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < blocks; blk++) {
            if (!ar || (rq && !accs))
                continue;
            int64_t t = blk / bpm, i0 = (blk % bpm) * QROWS, oa, ob;
            int h = (int)(M - i0 < QROWS ? M - i0 : QROWS);
            ft_matmul_batch_at(&g, t, &oa, &ob);
            for (int q = 0; q < h; q++) {
                int64_t z = za->data ? ft_ld_int(za->data, za->dtype, row_a ? i0 + q : 0) : 0;
                widen(a->data, a->dtype, (oa * M + i0 + q) * K, 1, K, z, ar + q * K);
            }
            const int16_t *bm = bt + ob * N * K;
            int64_t row = t * M + i0;
            if (!rq) {
                block_products(ar, h, bm, N, K, (int32_t *)y->data + row * N);
                continue;
            }
            block_products(ar, h, bm, N, K, accs);
            for (int q = 0; q < h; q++)
                for (int64_t j = 0; j < N; j++)
                    ft_st_int(y->data, y->dtype, (row + q) * N + j,
                              ft_qsat(rint((double)accs[q * N + j] * qmult(rq, row_a ? i0 + q : 0, col_b ? j : 0)),
                                      rq->yzp, rq->lo, rq->hi));
        }
        free(ar);
        free(accs);
    }
    free(bt);
    return st;
}

/* qlinear_matmul's and qlinear_conv's inputs 1, 4, 6, 7 (a/x scale, b/w
 * scale, y scale, y zero point) as a requantization. */
static void qlinear_requant(const ft_view *in, const ft_view *out, requant *rq)
{
    rq->as = &in[1], rq->bs = &in[4];
    ft_qrange(out[0].dtype, &rq->lo, &rq->hi);
    rq->yzp = in[7].data ? ft_ld_int(in[7].data, in[7].dtype, 0) : 0;
    rq->ysv = ft_ld_f64(in[6].data, in[6].dtype, 0);
}

ft_status cpu_matmul_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_view none = {0};
    return int_matmul(k, n, &in[0], &in[1], n->n_in > 2 ? &in[2] : &none, n->n_in > 3 ? &in[3] : &none, NULL,
                      &out[0]);
}

ft_status cpu_qlinear_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    requant rq;
    qlinear_requant(in, out, &rq);
    return int_matmul(k, n, &in[0], &in[3], &in[2], &in[5], &rq, &out[0]);
}

/* conv_integer / qlinear_conv: a direct convolution of the zero-point-shifted
 * 16-bit operands (padding contributes 0, as ONNX's reference subtracts the
 * zero points before padding), accumulated in 32 bits with wrap-around, the
 * i32 bias added to the accumulator. */
static ft_status int_conv(ft_kctx *k, const ft_node *n, const ft_view *x, const ft_view *w, const ft_view *xz,
                          const ft_view *wz, const ft_view *bias, const requant *rq, ft_view *y)
{
    if (ft_numel(&y->shape) == 0)
        return FT_OK;
    ft_conv_geom g;
    ft_conv_geom_of(&n->params.conv, &x->shape, &w->shape, &y->shape, x->dtype, 0, &g);
    int64_t nx = (int64_t)ft_numel(&x->shape), wper = g.Cg * g.KK;
    int wvec = wz->data && ft_numel(&wz->shape) > 1;
    int16_t *xc = malloc((size_t)(nx + 1) * sizeof *xc), *wc = malloc((size_t)(g.M * wper + 1) * sizeof *wc);
    int64_t *koff = malloc((size_t)g.KK * FT_CONV_MAX_SP * sizeof *koff);
    if (!xc || !wc || !koff) {
        free(xc), free(wc), free(koff);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the integer convolution operands");
    }
    widen(x->data, x->dtype, 0, 1, nx, xz->data ? ft_ld_int(xz->data, xz->dtype, 0) : 0, xc);
    for (int64_t m = 0; m < g.M; m++)
        widen(w->data, w->dtype, m * wper, 1, wper, wz->data ? ft_ld_int(wz->data, wz->dtype, wvec ? m : 0) : 0,
              wc + m * wper);
    for (int64_t kk = 0; kk < g.KK; kk++) { /* kernel position -> its offset (k_j * d_j) along each dim */
        int64_t q = kk;
        for (int j = g.r - 1; j >= 0; j--) {
            koff[kk * FT_CONV_MAX_SP + j] = (q % g.k[j]) * g.d[j];
            q /= g.k[j];
        }
    }
    int64_t pairs = g.N * g.M;
    int par = k->threads > 1 && (uint64_t)pairs * g.P * wper >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) schedule(dynamic, 1) if (par)
    for (int64_t nm = 0; nm < pairs; nm++) {
        int64_t nn = nm / g.M, m = nm % g.M, gi = m / g.Mg;
        const int16_t *wm = wc + m * wper, *xg = xc + (nn * g.C + gi * g.Cg) * g.NI;
        uint32_t b0 = bias->data ? (uint32_t)((const int32_t *)bias->data)[m] : 0;
        double mult = rq ? qmult(rq, 0, ft_numel(&rq->bs->shape) > 1 ? m : 0) : 0;
        for (int64_t p = 0; p < g.P; p++) {
            int64_t o[FT_CONV_MAX_SP] = {0}, q = p;
            for (int j = g.r - 1; j >= 0; j--) {
                o[j] = (q % g.out[j]) * g.s[j] - g.pb[j];
                q /= g.out[j];
            }
            uint32_t acc = b0;
            for (int64_t kk = 0; kk < g.KK; kk++) {
                int64_t off = 0, inside = 1;
                for (int j = 0; j < g.r; j++) {
                    int64_t i = o[j] + koff[kk * FT_CONV_MAX_SP + j];
                    inside &= i >= 0 && i < g.in[j];
                    off = off * g.in[j] + i;
                }
                if (!inside)
                    continue;
                for (int64_t c = 0; c < g.Cg; c++)
                    acc += (uint32_t)((int32_t)xg[c * g.NI + off] * wm[c * g.KK + kk]);
            }
            int64_t at = nm * g.P + p;
            if (!rq)
                ((int32_t *)y->data)[at] = (int32_t)acc;
            else
                ft_st_int(y->data, y->dtype, at, ft_qsat(rint((double)(int32_t)acc * mult), rq->yzp, rq->lo, rq->hi));
        }
    }
    free(xc), free(wc), free(koff);
    return FT_OK;
}

ft_status cpu_conv_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_view none = {0};
    return int_conv(k, n, &in[0], &in[1], n->n_in > 2 ? &in[2] : &none, n->n_in > 3 ? &in[3] : &none, &none, NULL,
                    &out[0]);
}

/* One position's M channels of cpu_qconv_dnnl's channels-last sums: the bias
 * b0 added in 32 bits with wrap-around as int_conv adds it, then ft_qsat's
 * rounding, zero point and saturation, vectorised (the same values). */
static FT_VCLONES void requant_row(const int32_t *restrict a, const uint32_t *restrict b0, const double *restrict mult,
                                   int64_t M, double zp, double lo, double hi, int32_t *restrict q)
{
#pragma omp simd
    for (int64_t m = 0; m < M; m++) {
        double r = rint((double)(int32_t)(b0[m] + (uint32_t)a[m]) * mult[m]);
        double v = (r != r ? 0.0 : r) + zp;
        q[m] = (int32_t)(v <= lo ? lo : v >= hi ? hi : v);
    }
}

/* The channels-last sums acc [N, P, M] of cpu_qconv_dnnl (cpu.h) with the
 * bias, requantized into y [N, M, P] (u8 or i8). */
static ft_status requant_last(ft_kctx *k, const ft_node *n, const int32_t *acc, const ft_view *bias, const requant *rq,
                              int64_t N, int64_t M, int64_t P, ft_view *y)
{
    int vec = ft_numel(&rq->bs->shape) > 1;
    uint32_t *b0 = ft_malloc((size_t)M * sizeof *b0 + 1);
    double *mult = ft_malloc((size_t)M * sizeof *mult + 1);
    if (!b0 || !mult) {
        free(b0), free(mult);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory requantizing the integer convolution");
    }
    for (int64_t m = 0; m < M; m++) {
        b0[m] = bias->data ? (uint32_t)((const int32_t *)bias->data)[m] : 0;
        mult[m] = qmult(rq, 0, vec ? m : 0);
    }
    /* blocks of QB positions: requantized channels-last, then written out one
     * channel row of QB bytes at a time */
    enum { QB = 64 };
    int64_t nb = (P + QB - 1) / QB;
    int par = k->threads > 1 && (uint64_t)(N * M * P) >= CPU_PAR_MIN, u8 = y->dtype == FT_U8;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int32_t *q = malloc((size_t)(QB * M) * sizeof *q + 1);
#pragma omp for schedule(static)
        for (int64_t blk = 0; blk < N * nb; blk++) {
            if (!q)
                continue;
            int64_t nn = blk / nb, p0 = blk % nb * QB, pc = P - p0 < QB ? P - p0 : QB;
            for (int64_t j = 0; j < pc; j++)
                requant_row(acc + (nn * P + p0 + j) * M, b0, mult, M, (double)rq->yzp, (double)rq->lo,
                            (double)rq->hi, q + j * M);
            char *yb = (char *)y->data + nn * M * P + p0;
            for (int64_t m = 0; m < M; m++)
                for (int64_t j = 0; j < pc; j++)
                    yb[m * P + j] = u8 ? (char)(uint8_t)q[j * M + m] : (char)(int8_t)q[j * M + m];
        }
        if (!q)
            par = -1;
        free(q);
    }
    free(b0), free(mult);
    if (par < 0)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory requantizing the integer convolution");
    return FT_OK;
}

ft_status cpu_qlinear_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    requant rq;
    ft_view none = {0};
    const ft_view *bias = n->n_in > 8 ? &in[8] : &none;
    qlinear_requant(in, out, &rq);
    /* a fused relu: max(q, y_zero_point), the quantized relu (the same as
     * quantizing the relu of the real value, for a positive y_scale) */
    if (n->params.conv.act == FT_CONV_ACT_RELU && rq.yzp > rq.lo)
        rq.lo = rq.yzp;
    const int32_t *acc;
    ft_status st;
    if (cpu_qconv_dnnl(k, n, in, &out[0].shape, &acc, &st)) {
        if (st)
            return st;
        uint64_t P = ft_numel(&out[0].shape) / (uint64_t)(out[0].shape.dims[0] * out[0].shape.dims[1]);
        return requant_last(k, n, acc, bias, &rq, out[0].shape.dims[0], out[0].shape.dims[1], (int64_t)P, &out[0]);
    }
    return int_conv(k, n, &in[0], &in[3], &in[2], &in[5], bias, &rq, &out[0]);
}
