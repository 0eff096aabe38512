/* What matmul.cu's cuBLAS calls offer the other products (einsum.cu): one
 * call planned from row-major strided operands (mm_plan), and issued
 * (mm_exec). Definitions in matmul.cu.
 *
 * Ownership: no state; an mm_call points at the caller's device buffers.
 */
#ifndef FT_CUDA_MM_CUH
#define FT_CUDA_MM_CUH

#include "cu.cuh"

/* Grid-stride loop over [0, total), 64-bit. */
#define MM_FOR(t, total)                                                                                     \
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < (total);                            \
         t += (uint64_t)gridDim.x * blockDim.x)

/* One cuBLAS call: column-major C (m x n) = op(A) (m x k) op(B) (k x n),
 * batch products apart by the element strides sa, sb, sc (or, for a
 * pointer-array call, a, b and c are device arrays of batch pointers). */
typedef struct {
    cublasOperation_t ta, tb;
    int64_t m, n, k, batch;
    const void *a, *b;
    void *c;
    int64_t lda, ldb, ldc, sa, sb, sc;
} mm_call;

/* X (rows x cols, X(i,j) at i*rs + j*cs) as column-major storage without
 * transposition (leading dimension *ld): 1, or 0 when it is not. */
int cm_plain(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld);
/* X as a cuBLAS operand: stored as is (N) or as its transpose (T). */
int cm_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t *op, int64_t *ld);
/* C[b] (M x N) = A[b] (M x K) B[b] (K x N), each operand given as {row
 * stride, column stride, batch stride} in elements: fills the call, or
 * returns 0 when an operand has a layout cuBLAS cannot read. */
int mm_plan(int64_t batch, int64_t M, int64_t N, int64_t K, const void *A, const int64_t *as, const void *B,
            const int64_t *bs, void *C, const int64_t *cs, mm_call *o);
/* Issues the call: A and B of dtype ab, C of dtype cd (arrays: a, b, c are
 * device arrays of batch pointers). */
ft_status mm_exec(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, const mm_call *c, double alpha,
                  double beta, int arrays);
/* The error for a product whose layout mm_plan refused. */
ft_status mm_layout_err(ft_kctx *k, const ft_node *n, int64_t M, int64_t N, int64_t K);

#endif
