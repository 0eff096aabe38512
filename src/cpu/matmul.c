/* Matrix products on the CPU through OpenBLAS's cblas: matmul (numpy.matmul
 * semantics with batch broadcasting) and gemm. */
#include "cpu.h"
#include "../graph/infer_misc.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

/* Declared by OpenBLAS's cblas.h; repeated because other cblas headers lack it. */
void openblas_set_num_threads(int);

/* One row-major product C[m,n] = alpha * op(A) op(B) + beta * C with leading
 * dimensions lda/ldb/ldc, in f32 or f64. cblas takes int sizes: rows are
 * split into int-sized pieces and the rare shapes whose columns exceed int
 * fall back to a plain loop rather than failing. */
static void gemm_one(ft_dtype dt, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    size_t es = dt == FT_F32 ? 4 : 8;
    if (n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++) {
                    int64_t ia = ta ? p * lda + i : i * lda + p, ib = tb ? j * ldb + p : p * ldb + j;
                    s += dt == FT_F32 ? (double)((const float *)a)[ia] * ((const float *)b)[ib]
                                      : ((const double *)a)[ia] * ((const double *)b)[ib];
                }
                if (dt == FT_F32) {
                    float *y = (float *)c + i * ldc + j;
                    *y = (float)(alpha * s + (beta != 0 ? beta * *y : 0));
                } else {
                    double *y = (double *)c + i * ldc + j;
                    *y = alpha * s + (beta != 0 ? beta * *y : 0);
                }
            }
        return;
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
        if (dt == FT_F32) {
            GEMM_CASE(float, cblas_sgemv, cblas_sgemm)
        } else {
            GEMM_CASE(double, cblas_dgemv, cblas_dgemm)
        }
#undef GEMM_CASE
    }
}

static void zero(void *p, uint64_t n, size_t es)
{
    if (n)
        memset(p, 0, (size_t)n * es);
}

ft_status cpu_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *as = &in[0].shape, *bs = &in[1].shape;
    ft_dtype dt = in[0].dtype;
    size_t es = ft_dtype_size(dt);
    uint64_t total = ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    int64_t M, K, N;
    ft_matmul_mkn(as, bs, &M, &K, &N);
    if (K == 0) {
        zero(out[0].data, total, es);
        return FT_OK;
    }
    int64_t bdims[FT_MAX_RANK], sa[FT_MAX_RANK], sb[FT_MAX_RANK], na, nb;
    uint64_t nbatch;
    int r = ft_matmul_batch(as, bs, bdims, sa, sb, &nbatch, &na, &nb);
    openblas_set_num_threads(k->threads);
    const char *A = in[0].data, *B = in[1].data;
    char *C = out[0].data;
    size_t amat = (size_t)(M * K) * es, bmat = (size_t)(K * N) * es, cmat = (size_t)(M * N) * es;
    /* b shared by every batch and a not broadcast: one tall product. */
    if (nb == 1 && (uint64_t)na == nbatch) {
        gemm_one(dt, 0, 0, (int64_t)nbatch * M, N, K, 1.0, A, K, B, N, 0.0, C, N);
        return FT_OK;
    }
    /* Small matrices: one thread per product beats OpenBLAS's own threading,
     * which stays single-threaded below its size threshold anyway. */
    uint64_t work = (uint64_t)M * (uint64_t)N * (uint64_t)K;
    int par = k->threads > 1 && nbatch >= 2 && work < (1u << 21) && work * nbatch >= (1u << 18);
    if (par)
        openblas_set_num_threads(1);
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t t = 0; t < (int64_t)nbatch; t++) {
        int64_t rem = t, oa = 0, ob = 0;
        for (int i = r - 1; i >= 0; i--) {
            int64_t idx = rem % bdims[i];
            rem /= bdims[i];
            oa += idx * sa[i];
            ob += idx * sb[i];
        }
        gemm_one(dt, 0, 0, M, N, K, 1.0, A + (size_t)oa * amat, K, B + (size_t)ob * bmat, N, 0.0,
                 C + (size_t)t * cmat, N);
    }
    if (par)
        openblas_set_num_threads(k->threads);
    return FT_OK;
}

ft_status cpu_gemm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_dtype dt = in[0].dtype;
    const ft_matmul_params *mp = &n->params.matmul;
    int ta = mp->trans_a, tb = mp->trans_b;
    double alpha = mp->alpha, beta = mp->beta;
    const ft_shape *as = &in[0].shape, *bs = &in[1].shape;
    int64_t M = ta ? as->dims[1] : as->dims[0], K = ta ? as->dims[0] : as->dims[1];
    int64_t N = tb ? bs->dims[0] : bs->dims[1];
    if (M == 0 || N == 0)
        return FT_OK;
    int has_c = n->n_in > 2 && in[2].data;
    /* y starts as beta*c (computed elementwise, so beta=0 with an infinite c
     * gives NaN as the formula does), and the product is added with beta=1. */
    if (has_c) {
        int64_t st[2];
        ft_shape os = {.rank = 2, .dims = {M, N}};
        ft_broadcast_strides(&in[2].shape, &os, st);
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
    if (K == 0)
        return FT_OK;
    openblas_set_num_threads(k->threads);
    gemm_one(dt, ta, tb, M, N, K, alpha, in[0].data, as->dims[1], in[1].data, bs->dims[1], has_c ? 1.0 : 0.0,
             out[0].data, N);
    return FT_OK;
}
