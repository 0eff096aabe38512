/* Matrix products on the CPU: matmul (numpy.matmul semantics with batch
 * broadcasting) and gemm; f32 through cpu_sgemm (blas.c: oneDNN, or OpenBLAS for
 * some large shapes), f64
 * through OpenBLAS's cblas. The optimizer's fused epilogue (params.h
 * ft_mm_act: matmul's bias, then relu or gelu) runs on each product's output
 * right after it is computed, while it is still in cache.
 *
 * f32 products with one shared B (the Linear layers) may instead run through
 * oneDNN's matmul primitive with B packed once (matmul_dnnl.c, which says
 * when). Batched products (attention heads) stay a loop of cpu_sgemm calls,
 * one per matrix, threads over the batch when the matrices are small or
 * many. oneDNN's sgemm costs about 0.5 us a call (blas.c's
 * measurements), under 5% of the transformer benchmarks' head products
 * ([8,128,64] x [8,64,128]: about 15 us each), so the primitive could save at
 * most that there; it is not used for them. */
#include "cpu.h"
#include "../graph/infer_misc.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* glibc's libmvec vector erfc and exp (see unary.c) for the epilogue's
 * `omp simd` loops. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GLIBC_PREREQ) && !defined(__clang__)
#if __GLIBC_PREREQ(2, 35)
__attribute__((simd("notinbranch"))) float erfcf(float);
__attribute__((simd("notinbranch"))) double(erfc)(double);
__attribute__((simd("notinbranch"))) float expf(float);
__attribute__((simd("notinbranch"))) double(exp)(double);
#endif
#endif

/* Declared by OpenBLAS's cblas.h; repeated because other cblas headers lack it. */
void openblas_set_num_threads(int);

/* One row-major product C[m,n] = alpha * op(A) op(B) + beta * C with leading
 * dimensions lda/ldb/ldc, in f32 or f64; 0 or cpu_sgemm's error code. f32
 * goes to cpu_sgemm (64-bit sizes). cblas takes int sizes: f64 rows are
 * split into int-sized pieces and the rare shapes whose columns exceed int
 * fall back to a plain loop rather than failing. */
static int gemm_one(ft_dtype dt, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return 0;
    if (dt == FT_F32)
        return cpu_sgemm(ta, tb, m, n, k, (float)alpha, a, lda, b, ldb, (float)beta, c, ldc);
    size_t es = 8;
    if (n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++) {
                    int64_t ia = ta ? p * lda + i : i * lda + p, ib = tb ? j * ldb + p : p * ldb + j;
                    s += ((const double *)a)[ia] * ((const double *)b)[ib];
                }
                double *y = (double *)c + i * ldc + j;
                *y = alpha * s + (beta != 0 ? beta * *y : 0);
            }
        return 0;
    }
    const int64_t step = INT_MAX / 2;
    enum CBLAS_TRANSPOSE tA = ta ? CblasTrans : CblasNoTrans, tB = tb ? CblasTrans : CblasNoTrans;
    for (int64_t i0 = 0; i0 < m; i0 += step) {
        int mi = (int)(m - i0 < step ? m - i0 : step), ni = (int)n, ki = (int)k;
        /* With op(A) = A^T, row i0 of op(A) is column i0 of A. */
        const char *ap = (const char *)a + (size_t)(ta ? i0 : i0 * lda) * es;
        char *cp = (char *)c + (size_t)(i0 * ldc) * es;
        /* Vector shapes go to gemv, which OpenBLAS runs much faster than a
         * degenerate gemm. gemv's beta=0 is not guaranteed to ignore NaN
         * garbage in y, so y is cleared first. */
        int vec = mi == 1 || ni == 1;
        if (vec && beta == 0)
            for (int64_t i = 0; i < mi; i++)
                memset(cp + (size_t)(i * ldc) * es, 0, (size_t)ni * es);
#define GEMM_CASE(T, GEMV, GEMM)                                                                                  \
    if (mi == 1) /* y[n] = x[k] op(B): gemv on B with the opposite transposition */                              \
        GEMV(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? ni : ki, tb ? ki : ni, (T)alpha, (const T *)b,      \
             (int)ldb, (const T *)ap, ta ? (int)lda : 1, (T)beta, (T *)cp, 1);                                   \
    else if (ni == 1) /* y[m] = op(A) x[k], x a column of op(B) */                                               \
        GEMV(CblasRowMajor, tA, ta ? ki : mi, ta ? mi : ki, (T)alpha, (const T *)ap, (int)lda, (const T *)b,         \
             tb ? 1 : (int)ldb, (T)beta, (T *)cp, (int)ldc);                                                      \
    else                                                                                                         \
        GEMM(CblasRowMajor, tA, tB, mi, ni, ki, (T)alpha, (const T *)ap, (int)lda, (const T *)b, (int)ldb, (T)beta, \
             (T *)cp, (int)ldc);
        GEMM_CASE(double, cblas_dgemv, cblas_dgemm)
#undef GEMM_CASE
    }
    return 0;
}

static void zero(void *p, uint64_t n, size_t es)
{
    if (n)
        memset(p, 0, (size_t)n * es);
}

/* The fused epilogue on `rows` rows of N values at y: bias (N values, or
 * NULL), then the activation, each computed as its own op's kernel does
 * (unary.c: relu, gelu, gelu approximate="tanh"). Cloned for AVX-512 and AVX2
 * (the build targets baseline x86-64). */
#define EPI_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define DEF_EPI(SFX, T, ERFC, EXP)                                                                                  \
    EPI_CLONES static void epilogue_##SFX(T *y, int64_t rows, int64_t N, const T *bias, ft_mm_act act)              \
    {                                                                                                              \
        for (int64_t i = 0; i < rows; i++) {                                                                       \
            T *r = y + i * N;                                                                                      \
            if (bias) {                                                                                            \
                _Pragma("omp simd") for (int64_t j = 0; j < N; j++) r[j] += bias[j];                               \
            }                                                                                                      \
            switch (act) {                                                                                         \
            case FT_MM_ACT_NONE:                                                                                   \
                break;                                                                                             \
            case FT_MM_ACT_RELU:                                                                                   \
                _Pragma("omp simd") for (int64_t j = 0; j < N; j++) r[j] = r[j] < 0 ? (T)0 : r[j];                 \
                break;                                                                                             \
            case FT_MM_ACT_GELU: /* erfc keeps the tail accurate for negative x */                                 \
                _Pragma("omp simd") for (int64_t j = 0; j < N; j++) r[j] =                                         \
                    (T)0.5 * r[j] * ERFC(-r[j] * (T)0.70710678118654752440);                                       \
                break;                                                                                             \
            case FT_MM_ACT_GELU_TANH: /* 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)) */                                 \
                _Pragma("omp simd") for (int64_t j = 0; j < N; j++) r[j] =                                         \
                    r[j] / ((T)1 + EXP((T)-1.5957691216057307117 * (r[j] + (T)0.044715 * r[j] * r[j] * r[j])));     \
                break;                                                                                             \
            }                                                                                                      \
        }                                                                                                          \
    }
DEF_EPI(f32, float, erfcf, expf)
DEF_EPI(f64, double, erfc, exp)

static void epilogue(ft_dtype dt, void *y, int64_t rows, int64_t N, const void *bias, ft_mm_act act)
{
    if (!bias && act == FT_MM_ACT_NONE)
        return;
    if (dt == FT_F32)
        epilogue_f32(y, rows, N, bias, act);
    else
        epilogue_f64(y, rows, N, bias, act);
}

/* The epilogue over `rows` rows, threads splitting the rows when large. */
static void epilogue_par(ft_kctx *k, ft_dtype dt, void *y, int64_t rows, int64_t N, const void *bias, ft_mm_act act)
{
    if (!bias && act == FT_MM_ACT_NONE)
        return;
    size_t rb = (size_t)N * ft_dtype_size(dt);
    int par = k->threads > 1 && rows > 1 && (uint64_t)rows * (uint64_t)N >= CPU_PAR_MIN;
    int64_t chunk = par ? (rows + k->threads - 1) / k->threads : rows;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t r0 = 0; r0 < rows; r0 += chunk)
        epilogue(dt, (char *)y + (size_t)r0 * rb, rows - r0 < chunk ? rows - r0 : chunk, N, bias, act);
}

void cpu_matmul_epilogue(ft_kctx *k, float *y, int64_t rows, int64_t N, const float *bias, ft_mm_act act)
{
    epilogue_par(k, FT_F32, y, rows, N, bias, act);
}

static ft_status matmul_blas(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_dtype dt = in[0].dtype;
    size_t es = ft_dtype_size(dt);
    uint64_t total = ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    const void *bias = n->n_in > 2 ? in[2].data : NULL;
    ft_mm_act act = n->params.matmul.act;
    ft_matmul_geom g;
    ft_matmul_geom_of(&in[0].shape, &in[1].shape, &g);
    const int64_t M = g.M, K = g.K, N = g.N;
    if (K == 0) {
        zero(out[0].data, total, es);
        epilogue_par(k, dt, out[0].data, (int64_t)(total / (uint64_t)N), N, bias, act);
        return FT_OK;
    }
    openblas_set_num_threads(k->threads);
    const char *A = in[0].data, *B = in[1].data;
    char *C = out[0].data;
    size_t amat = (size_t)(M * K) * es, bmat = (size_t)(K * N) * es, cmat = (size_t)(M * N) * es;
    /* b shared by every batch and a not broadcast: one tall product. */
    if (g.tall) {
        int rc = gemm_one(dt, 0, 0, (int64_t)g.nbatch * M, N, K, 1.0, A, K, B, N, 0.0, C, N);
        if (rc)
            return cpu_blas_error(k, n, rc);
        epilogue_par(k, dt, C, (int64_t)g.nbatch * M, N, bias, act);
        return FT_OK;
    }
    /* Small matrices, or many of them (attention heads: 64 products of
     * [256,64] x [64,256] in the transformer benchmark): one thread per
     * product beats the libraries' own threading, which stays
     * single-threaded below their size thresholds anyway and splits each
     * product, with a join per product, above them (inside the loop they run
     * on the calling thread). */
    uint64_t work = (uint64_t)M * (uint64_t)N * (uint64_t)K;
    int par = k->threads > 1 && g.nbatch >= 2 && (work < (1u << 21) || g.nbatch >= 4 * (uint64_t)k->threads) &&
              work * g.nbatch >= (1u << 18),
        brc = 0;
    if (par)
        openblas_set_num_threads(1);
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t t = 0; t < (int64_t)g.nbatch; t++) {
        int64_t oa, ob;
        ft_matmul_batch_at(&g, t, &oa, &ob);
        int rc = gemm_one(dt, 0, 0, M, N, K, 1.0, A + (size_t)oa * amat, K, B + (size_t)ob * bmat, N, 0.0,
                          C + (size_t)t * cmat, N);
        if (rc) {
#pragma omp atomic write
            brc = rc;
        } else {
            epilogue(dt, C + (size_t)t * cmat, M, N, bias, act);
        }
    }
    if (par)
        openblas_set_num_threads(k->threads);
    return brc ? cpu_blas_error(k, n, brc) : FT_OK;
}

ft_status cpu_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_status st;
    if (cpu_matmul_dnnl(k, n, in, out, &st))
        return st;
    return matmul_blas(k, n, in, out);
}

static ft_status gemm_blas(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_matmul_params *mp = &n->params.matmul;
    int64_t M, K, N;
    if (!ft_gemm_mkn(mp, &in[0].shape, &in[1].shape, &M, &K, &N))
        return FT_OK;
    ft_dtype dt = in[0].dtype;
    double beta = mp->beta;
    int has_c = n->n_in > 2 && in[2].data;
    /* A bias row (c of [N] or [1, N], beta 1: the exports' Linear layers) is
     * added in the epilogue after the product, which saves writing y once
     * before it and reading it back in the product. */
    const ft_shape *cs = has_c ? &in[2].shape : NULL;
    int row_c = has_c && K > 0 && beta == 1.0 && cs->rank >= 1 && cs->dims[cs->rank - 1] == N &&
                (cs->rank == 1 || cs->dims[0] == 1);
    /* Otherwise y starts as beta*c (computed elementwise, so beta=0 with an
     * infinite c gives NaN as the formula does), and the product is added
     * with beta=1. */
    if (has_c && !row_c) {
        int64_t st[2];
        ft_gemm_c_strides(&in[2].shape, M, N, st);
        int par = (uint64_t)M * (uint64_t)N >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) if (par)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t src = i * st[0] + j * st[1];
                if (dt == FT_F32)
                    ((float *)out[0].data)[i * N + j] = (float)(beta * ((const float *)in[2].data)[src]);
                else
                    ((double *)out[0].data)[i * N + j] = beta * ((const double *)in[2].data)[src];
            }
    } else if (K == 0) {
        zero(out[0].data, (uint64_t)(M * N), ft_dtype_size(dt));
    }
    if (K > 0) {
        openblas_set_num_threads(k->threads);
        int rc = gemm_one(dt, mp->trans_a, mp->trans_b, M, N, K, mp->alpha, in[0].data, in[0].shape.dims[1], in[1].data,
                          in[1].shape.dims[1],
                          has_c && !row_c ? 1.0 : 0.0, out[0].data, N);
        if (rc)
            return cpu_blas_error(k, n, rc);
    }
    epilogue_par(k, dt, out[0].data, M, N, row_c ? in[2].data : NULL, mp->act);
    return FT_OK;
}

ft_status cpu_gemm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_status st;
    if (cpu_matmul_dnnl(k, n, in, out, &st))
        return st;
    return gemm_blas(k, n, in, out);
}
