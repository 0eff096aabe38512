/* Kernel-side planning of einsum and of matmul's batch broadcasting, defined
 * in infer_misc.c beside einsum's inference and equation parser and shared by
 * the CPU kernels (cpu/einsum.c, cpu/matmul.c) and the CUDA ones
 * (cuda/matmul.cu) so that both backends derive the same layouts and take
 * the same decisions from the same shapes; pure C, no device code, no
 * allocation (the caller owns every array).
 *
 *   int64_t size[FT_EIN_NL]; int8_t olab[FT_MAX_RANK]; int no; char msg[1024];
 *   if (ft_ein_views(&n->params.matmul.ein, nops, shapes, data, olab, &no, size, ops, msg, sizeof msg)) ...
 */
#ifndef FT_INFER_MISC_H
#define FT_INFER_MISC_H

#include "ops.h"

#include <stdint.h>

/* Label ids: 52 letters, then one per "..." dim (ft_einsum_params, params.h). */
#define FT_EIN_ELL 52
#define FT_EIN_NL (FT_EIN_ELL + FT_MAX_RANK)

/* An operand (or intermediate) as a strided view with one stride per label. */
typedef struct {
    const void *data;
    int64_t st[FT_EIN_NL]; /* element stride per label; 0 where absent or broadcast */
    uint64_t has;          /* labels the values depend on (or of size 1) */
} ft_ein_op;

uint64_t ft_ein_numel(const int64_t *size, const int8_t *lab, int nl);

/* Labels of a mask in ascending id order; returns their count. */
int ft_ein_mask_labels(uint64_t m, int8_t *lab);

/* Orders the labels of mask m as they appear in ord (labels of m missing
 * from ord follow in id order). */
int ft_ein_order_by(uint64_t m, const int8_t *ord, int nord, int8_t *lab);

/* The labels of an operand in its own dim order (by stride, largest first). */
int ft_ein_op_order(const ft_ein_op *op, int8_t *lab);

/* op's strides for contiguous data in the label order lab. */
void ft_ein_set_layout(const int64_t *size, ft_ein_op *op, const void *data, const int8_t *lab, int nl);

/* The operands as views, from the equation parsed when the graph was checked
 * (n->params.matmul.ein, ft_einsum_parse), with no parsing: the output's
 * labels olab[0..*no) (p->out_lab); size[l] of every label (1 for unused
 * ones) and ops[i] as views of data[i]: a repeated label (diagonal) gets the
 * sum of its dims' strides, and a "..." dim of size 1 broadcast against a
 * larger one gets stride 0. Returns 0, or -1 with a message in msg (only when
 * nops or a rank differs from the parse). */
int ft_ein_views(const ft_einsum_params *p, int nops, const ft_shape *const *shapes, const void *const *data,
                 int8_t *olab, int *no, int64_t *size, ft_ein_op *ops, char *msg, size_t msgsz);

/* need_later[i] (i = 0..nops) = labels of ops[i..nops) and of the output
 * labels olab[0..no); returns the output's mask, need_later[nops]. */
uint64_t ft_ein_need_later(int nops, const ft_ein_op *ops, const int8_t *olab, int no, uint64_t *need_later);

/* 1 to contract pairwise, left to right; 0 for the direct loop, when an
 * intermediate would be much larger than every input and the output (of
 * total elements), since the loop needs no memory at all. */
int ft_ein_pairwise(const int64_t *size, int nops, const ft_shape *const *shapes, const ft_ein_op *ops,
                    const uint64_t *need_later, uint64_t total);

/* Label groups of one pairwise contraction C[b,m,n] = sum_k A[b,m,k] B[b,k,n]:
 * b in both and kept, m / n in one and kept, k in both and not kept; sa / sb
 * in one only and not kept (summed away while packing). */
typedef struct {
    uint64_t mk, sa, sb;
    int nb, nm, nn, nk, nc;
    int8_t bl[FT_EIN_NL], ml[FT_EIN_NL], nl[FT_EIN_NL], kl[FT_EIN_NL];
    int8_t cl[FT_EIN_NL]; /* C's labels: batch, m, n */
    uint64_t BT, M, N, K; /* element counts of the groups */
} ft_ein_pair_plan;

/* Groups follow res (the result's label order) when res is given, else the
 * operands' own dim orders; k always follows a's order. */
void ft_ein_pair_labels(const int64_t *size, const ft_ein_op *a, const ft_ein_op *b, uint64_t keep,
                        const int8_t *res, int nres, ft_ein_pair_plan *p);

/* 1 when a pair is worth a matrix product rather than the loop: tiny or thin
 * products run faster in the loop. */
int ft_ein_gemm_worth(uint64_t BT, uint64_t M, uint64_t N, uint64_t K);

/* matmul's matrix sizes: a is [.., M, K], b [.., K, N]. 1-D operands are
 * promoted to [1,K] / [K,1]; the promoted dim is absent from the output,
 * which changes nothing in the row-major layout. */
void ft_matmul_mkn(const ft_shape *as, const ft_shape *bs, int64_t *M, int64_t *K, int64_t *N);

/* gemm's matrix sizes: a is [M, K] ([K, M] with trans_a), b [K, N] ([N, K]
 * with trans_b). Returns M * N (0: the output is empty). */
uint64_t ft_gemm_mkn(const ft_matmul_params *mp, const ft_shape *as, const ft_shape *bs, int64_t *M, int64_t *K,
                     int64_t *N);
/* The strides (in elements; 0 along a broadcast dim) with which gemm's c of
 * shape cs is read over the [M, N] output. */
void ft_gemm_c_strides(const ft_shape *cs, int64_t M, int64_t N, int64_t *st);

/* matmul as a batch of [M, K] x [K, N] products (ft_matmul_mkn and
 * ft_matmul_batch), as cpu/matmul.c and cuda/matmul.cu run it: r batch dims
 * bdims with each operand's strides in whole matrices; tall when b is one
 * matrix for every batch and a is not broadcast, so that the batch is one
 * [nbatch * M, K] x [K, N] product. */
typedef struct ft_matmul_geom {
    int64_t M, K, N;
    int r, tall;
    int64_t bdims[FT_MAX_RANK], sa[FT_MAX_RANK], sb[FT_MAX_RANK];
    uint64_t nbatch;
    int64_t na, nb; /* the matrices of a and of b */
} ft_matmul_geom;
void ft_matmul_geom_of(const ft_shape *as, const ft_shape *bs, ft_matmul_geom *g);

#ifdef __CUDACC__
#define FT_MM_FN static __host__ __device__ inline
#else
#define FT_MM_FN static inline
#endif
/* Product t of the batch (0 .. nbatch-1): the matrices of a and of b it
 * reads, *oa and *ob (the kernels of matmul and of the integer matmuls on
 * both backends). */
FT_MM_FN void ft_matmul_batch_at(const ft_matmul_geom *g, int64_t t, int64_t *oa, int64_t *ob)
{
    int64_t a = 0, b = 0;
    for (int d = g->r - 1; d >= 0; d--) {
        int64_t q = t % g->bdims[d];
        t /= g->bdims[d];
        a += q * g->sa[d];
        b += q * g->sb[d];
    }
    *oa = a, *ob = b;
}

/* matmul's batch dims (all but the last two of a and of b, right-aligned,
 * broadcast NumPy style): bdims, and per operand each dim's stride in whole
 * matrices (0 along broadcast dims); *nbatch, *na and *nb get the matrix
 * counts of the batch, of a and of b. Returns the number of batch dims. */
int ft_matmul_batch(const ft_shape *as, const ft_shape *bs, int64_t *bdims, int64_t *sa, int64_t *sb,
                    uint64_t *nbatch, int64_t *na, int64_t *nb);

#endif
