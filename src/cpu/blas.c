/* The CPU backend's one f32 matrix product (cpu.h: cpu_sgemm): oneDNN's
 * dnnl_sgemm, with OpenBLAS kept for the shapes where it measured faster.
 * f64 products and LAPACK stay on OpenBLAS in their callers.
 *
 * Measured on the Sapphire Rapids Xeon this project benchmarks on (1 thread,
 * GFLOP/s, dnnl_sgemm vs OpenBLAS 0.3.21 SkylakeX kernels, row-major MxNxK):
 *   128x1536x512 133 vs 128, 128x2048x512 137 vs 117, 128x512x2048 144 vs 126,
 *   128x128x64 (B transposed, attention scores) 137 vs 99, 64x128x64 (B^T)
 *   115 vs 54, 8x512x512 128 vs 41, 2x512x512 42 vs 40;
 * OpenBLAS wins where oneDNN's fixed cost per call (about 0.5 us) dominates
 * or a side is very thin:
 *   16x16x16 0.2 vs 0.7 us, 32x32x64 0.9 vs 1.2 us, 4x256x256 7.6 vs 11.6 us,
 *   256x4x256 15 vs 37 us.
 * Hence OpenBLAS below 8 rows or columns and below 65536 multiply-adds, where
 * it takes the sizes (int); oneDNN everywhere else, with one exception.
 *
 * On an AMD EPYC (Zen 3, AVX2, no AVX-512: oneDNN's AVX2 kernels, OpenBLAS's
 * Zen ones), one thread, dnnl_sgemm slows down on large products whose B
 * rows are a multiple of 512 or 1024 floats apart (GFLOP/s, dnnl_sgemm vs
 * OpenBLAS, best of 20-40 calls): B not transposed 128x3072x768 44 vs 87,
 * 128x2048x512 46 vs 88, 128x512x512 57 vs 76, 197x3072x768 42 vs 71; B
 * transposed 256x4096x1024 77 vs 86, 256x1024x4096 82 vs 89, 256x1024x1024
 * 80 vs 85. Elsewhere OpenBLAS is level or ahead with B not transposed
 * when its rows are a multiple of 256 floats apart (197x768x3072 83 vs 86,
 * 128x768x768 82 vs 88, 197x2304x768 73 vs 75), and behind on the shapes of
 * convolutions as im2col products, whose B rows are the output pixels
 * (64x3136x576 91 vs 80, 128x784x1152 80 vs 74, 64x12544x147 68 vs 58),
 * with B transposed and other row strides (197x768x768 90 vs 86,
 * 128x768x768 89 vs 85, 128x512x512 94 vs 87), and below 2^25
 * multiply-adds (256x256x256 94 vs 89, 128x128x64 with B^T 82 vs 61). In
 * whole runs (per-node times, best of 6 alternating runs): the ONNX
 * transformer_decoder 16.0 -> 14.7 ms, gpt_block 23.5 -> 22.9 ms
 * (mlp.0: 8.4 -> 7.6 ms), the ONNX mlp (two B^T gemms) 55.9 -> 50.6 ms (fastest
 * of 4 alternating runs of 20).
 * So where oneDNN has no AVX-512 code, a single-threaded product of at least
 * 2^25 multiply-adds with A not transposed and B's rows a multiple of 256
 * floats apart (1024 when B is transposed) goes to OpenBLAS
 * (large_on_openblas).
 *
 * On two threads OpenBLAS's own threads scaled worse than dnnl_sgemm on the
 * same (busy) machine (128x768x3072: 88 vs 145 GFLOP/s), and whole runs of
 * gpt_block with them were slower (21-26 vs 14-15 ms). Each OpenMP thread
 * running OpenBLAS on its own block of C's columns instead measured ahead
 * of dnnl_sgemm where B's rows are a multiple of 1024 floats apart
 * (GFLOP/s, best of 15 calls, two passes, load average about 4):
 * 128x3072x768 166 and 76 vs 91 and 39, 256x4096x1024 (B^T) 145 and 158 vs
 * 126 and 138, level at 128x768x3072 (153 and 71 vs 150 and 76), and
 * behind elsewhere (128x2304x768 165 vs 176); the ONNX mlp's two gemms, per-node best of 6 runs of 6 at
 * that load, 63 and 61 -> 53 and 51 ms. So on more threads the rows must be
 * a multiple of 1024 floats apart, and each thread gets at least 256
 * columns.
 *
 * Vectors (one row or one column) go to cpu_sgemv's own loops, which stream
 * the matrix once: on the classifier's 1x1280 @ (1000x1280)^T they run at
 * 25-26 GB/s on one thread, as OpenBLAS's sgemv (the memory's pace) and
 * against oneDNN's 14-25 GB/s, and split the outputs over threads
 * (OpenBLAS's threaded sgemv measured slower on two threads).
 *
 * Threads: oneDNN follows omp_set_num_threads (cpu_backend.c sets it per
 * run); called inside a parallel region it runs on the calling thread.
 * OpenBLAS (Debian's OpenMP build, the Makefile's OPENBLAS_LIB) runs on
 * libgomp's threads too, and its openblas_set_num_threads is
 * omp_set_num_threads: the callers set it per node (matmul.c, conv.c,
 * einsum.c) for the small products and set it back to the run's count;
 * the large ones run with it set to one (large_on_openblas). */
#include "cpu.h"

#include <cblas.h>
#include <limits.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <string.h>

/* Declared by OpenBLAS's cblas.h; repeated because other cblas headers lack it. */
void openblas_set_num_threads(int);

static int fits_int(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc)
{
    return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX;
}

/* The large products that OpenBLAS runs faster than dnnl_sgemm where
 * oneDNN has no AVX-512 code (see the top), outside parallel regions: A not
 * transposed, at least 2^25 multiply-adds, and B's rows a multiple of 256
 * floats apart on one thread (1024 when B is transposed), of 1024 on more,
 * with at least 256 columns of C for each thread. The number of threads to
 * split C's columns over, or 0 for dnnl_sgemm. */
static int large_on_openblas(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t ldb)
{
    if (ta || (double)m * (double)n * (double)k < 33554432.0 || omp_in_parallel())
        return 0;
    int nt = omp_get_max_threads();
    if (nt < 1 || ldb % (tb || nt > 1 ? 1024 : 256) != 0 || n < 256 * (int64_t)nt)
        return 0;
    return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) != dnnl_cpu_isa_avx512_core ? nt : 0;
}

int cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return 0;
    if (k <= 0 || alpha == 0) { /* no product: C = beta C, with beta 0 ignoring what C held */
        for (int64_t i = 0; i < m; i++) {
            float *y = c + i * ldc;
            if (beta == 0)
                memset(y, 0, (size_t)n * sizeof(float));
            else
                for (int64_t j = 0; j < n; j++)
                    y[j] *= beta;
        }
        return 0;
    }
    if (m == 1 || n == 1) {
        cpu_sgemv(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return 0;
    }
    int64_t small = m < n ? m : n;
    if ((small < 8 || (double)m * (double)n * (double)k < 65536.0) && fits_int(m, n, k, lda, ldb, ldc)) {
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
        return 0;
    }
    int nt = large_on_openblas(ta, tb, m, n, k, ldb);
    if (nt && fits_int(m, n, k, lda, ldb, ldc)) {
        /* each thread a block of C's columns (a multiple of 64, so no two
         * write one cache line), OpenBLAS on the calling thread */
        openblas_set_num_threads(1);
        int64_t per = ((n + nt - 1) / nt + 63) / 64 * 64;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
        for (int t = 0; t < nt; t++) {
            int64_t j0 = t * per, j1 = j0 + per < n ? j0 + per : n;
            if (j0 < j1)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)(j1 - j0), (int)k,
                            alpha, a, (int)lda, b + (tb ? j0 * ldb : j0), (int)ldb, beta, c + j0, (int)ldc);
        }
        openblas_set_num_threads(nt); /* omp_get_max_threads() when large_on_openblas read it */
        return 0;
    }
    return (int)dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The two loops of cpu_sgemv over a matrix W with row stride ldw, for output
 * elements [i0, i1):
 *   dot:  y[i] = sum_p W[i,p] x[p]   (W's rows are contiguous along k)
 *   axpy: y[j] = sum_p x[p] W[p,j]   (W's rows are contiguous along the output)
 * each reads W once, front to back, which is what bounds a product with one
 * row or column: the weights come from memory once. Cloned for AVX-512 and
 * AVX2 (the build targets baseline x86-64). */
#define GVCLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

GVCLONES static void gemv_dot(int64_t i0, int64_t i1, int64_t k, float alpha, const float *w, int64_t ldw,
                              const float *x, int64_t incx, float beta, float *c, int64_t incy)
{
    int64_t i = i0;
    /* four rows at a time: four independent sums, x read once for them */
    for (; incx == 1 && i + 4 <= i1; i += 4) {
        const float *w0 = w + i * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw;
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int64_t p = 0; p < k; p++) {
            s0 += w0[p] * x[p];
            s1 += w1[p] * x[p];
            s2 += w2[p] * x[p];
            s3 += w3[p] * x[p];
        }
        float s[4] = {s0, s1, s2, s3};
        for (int r = 0; r < 4; r++) {
            float *y = c + (i + r) * incy;
            *y = beta == 0 ? alpha * s[r] : alpha * s[r] + beta * *y;
        }
    }
    for (; i < i1; i++) {
        const float *wr = w + i * ldw;
        float s = 0;
        if (incx == 1) {
#pragma omp simd reduction(+ : s)
            for (int64_t p = 0; p < k; p++)
                s += wr[p] * x[p];
        } else {
            for (int64_t p = 0; p < k; p++)
                s += wr[p] * x[p * incx];
        }
        float *y = c + i * incy;
        *y = beta == 0 ? alpha * s : alpha * s + beta * *y;
    }
}

/* axpy in blocks of GV_JB outputs (their sums stay in L1), four rows of W at
 * a time, each row's block read contiguously. */
enum { GV_JB = 2048 };
GVCLONES static void gemv_axpy(int64_t j0, int64_t j1, int64_t k, float alpha, const float *w, int64_t ldw,
                               const float *x, int64_t incx, float beta, float *c, int64_t incy)
{
    float acc[GV_JB];
    for (; j0 < j1; j0 += GV_JB) {
        int64_t nj = j1 - j0 < GV_JB ? j1 - j0 : GV_JB;
        memset(acc, 0, sizeof acc);
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
            float x0 = x[p * incx], x1 = x[(p + 1) * incx], x2 = x[(p + 2) * incx], x3 = x[(p + 3) * incx];
            const float *w0 = w + p * ldw + j0, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw;
#pragma omp simd
            for (int64_t j = 0; j < nj; j++)
                acc[j] += x0 * w0[j] + x1 * w1[j] + x2 * w2[j] + x3 * w3[j];
        }
        for (; p < k; p++) {
            float xp = x[p * incx];
            const float *w0 = w + p * ldw + j0;
#pragma omp simd
            for (int64_t j = 0; j < nj; j++)
                acc[j] += xp * w0[j];
        }
        for (int64_t j = 0; j < nj; j++) {
            float *y = c + (j0 + j) * incy;
            *y = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * *y;
        }
    }
}

void cpu_sgemv(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    const float *w, *x;
    int64_t ldw, incx, incy, len;
    int dot;
    if (m == 1) { /* y[j] = sum_p A[0,p] B[p,j]; with B^T stored, B's column j is row j */
        w = b, ldw = ldb, x = a, incx = ta ? lda : 1, incy = 1, len = n, dot = tb;
    } else { /* y[i] = sum_p A[i,p] B[p,0] */
        w = a, ldw = lda, x = b, incx = tb ? 1 : ldb, incy = ldc, len = m, dot = !ta;
    }
    /* Threads split the outputs into contiguous ranges (multiples of 64, so
     * no two write one cache line) once W is large enough to be worth it. */
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    if ((double)len * (double)k < 262144.0 || len < 128)
        nt = 1;
    int64_t per = ((len + nt - 1) / nt + 63) / 64 * 64;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
        int64_t i0 = t * per, i1 = i0 + per < len ? i0 + per : len;
        if (i0 >= i1)
            continue;
        if (dot)
            gemv_dot(i0, i1, k, alpha, w, ldw, x, incx, beta, c, incy);
        else
            gemv_axpy(i0, i1, k, alpha, w, ldw, x, incx, beta, c, incy);
    }
}

ft_status cpu_blas_error(ft_kctx *k, const ft_node *n, int code)
{
    if (code == 0)
        return FT_OK;
    const char *why = code == dnnl_out_of_memory       ? "out of memory"
                      : code == dnnl_invalid_arguments ? "invalid arguments"
                      : code == dnnl_unimplemented     ? "unimplemented"
                      : code == dnnl_runtime_error     ? "run-time error"
                                                       : "failure";
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "oneDNN's f32 matrix product (dnnl_sgemm) failed: %s (status %d)",
                       why, code);
}
