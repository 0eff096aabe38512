/* Matrix products on the GPU: matmul and gemm through cuBLAS (einsum, which
 * uses the same calls, is einsum.cu).
 *
 * cuBLAS is column-major and our tensors are row-major. A row-major
 * C = A B is the column-major C^T = B^T A^T, so row-major buffers go to
 * cuBLAS as they are. More generally a matrix whose rows and columns each
 * have one stride, one of them 1, is read in place (transposed if need be),
 * and a batch with one stride per operand is one strided-batched call:
 * mm_plan works that out. Only layouts cuBLAS cannot read are copied
 * (einsum's packing) or described by pointer arrays (matmul's irregular
 * batch broadcasting).
 *
 * Precision: f32 in f32 (TF32 only when the backend allows it), f16/bf16 on
 * tensor cores with f32 accumulation and one rounding on store, f64 in f64.
 */
#include "mm.cuh"

extern "C" {
#include "../graph/infer_misc.h"
}

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ cuBLAS */
namespace {


static cudaDataType_t mm_type(ft_dtype dt)
{
    switch (dt) {
    case FT_F16:
        return CUDA_R_16F;
    case FT_BF16:
        return CUDA_R_16BF;
    case FT_F64:
        return CUDA_R_64F;
    case FT_F32:
    case FT_I8:
    case FT_I16:
    case FT_I32:
    case FT_I64:
    case FT_U8:
    case FT_U16:
    case FT_U32:
    case FT_U64:
    case FT_BOOL:
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT:
        break;
    }
    return CUDA_R_32F;
}

} // namespace

/* X (rows x cols, X(i,j) at i*rs + j*cs) as column-major storage without
 * transposition: a unit row stride (or a single row) and a leading
 * dimension of at least the row count, as cuBLAS requires. */
int cm_plain(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld)
{
    int64_t need = rows > 1 ? rows : 1, l = cols == 1 ? need : cs;
    if ((rs != 1 && rows != 1) || l < need)
        return 0;
    *ld = l;
    return 1;
}

/* X as a cuBLAS operand: stored as is (N) or as its transpose (T). */
int cm_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t *op, int64_t *ld)
{
    if (cm_plain(rows, cols, rs, cs, ld)) {
        *op = CUBLAS_OP_N;
        return 1;
    }
    if (cm_plain(cols, rows, cs, rs, ld)) {
        *op = CUBLAS_OP_T;
        return 1;
    }
    return 0;
}

/* Row-major meaning: C[b] (M x N) = A[b] (M x K) B[b] (K x N), each operand
 * given as {row stride, column stride, batch stride} in elements. Fills the
 * call, or returns 0 when an operand has a layout cuBLAS cannot read (the
 * operands' feasibility does not depend on which of the two forms C takes,
 * since cm_operand accepts a matrix exactly when it accepts its transpose). */
int mm_plan(int64_t batch, int64_t M, int64_t N, int64_t K, const void *A, const int64_t *as, const void *B,
            const int64_t *bs, void *C, const int64_t *cs, mm_call *o)
{
    memset(o, 0, sizeof *o);
    o->k = K;
    o->batch = batch;
    o->c = C;
    o->sc = cs[2];
    if (cm_plain(N, M, cs[1], cs[0], &o->ldc)) { /* C^T (N x M) = B^T (N x K) A^T (K x M) */
        o->m = N, o->n = M;
        o->a = B, o->sa = bs[2];
        o->b = A, o->sb = as[2];
        return cm_operand(N, K, bs[1], bs[0], &o->ta, &o->lda) && cm_operand(K, M, as[1], as[0], &o->tb, &o->ldb);
    }
    if (cm_plain(M, N, cs[0], cs[1], &o->ldc)) { /* C stored column-major: C = A B */
        o->m = M, o->n = N;
        o->a = A, o->sa = as[2];
        o->b = B, o->sb = bs[2];
        return cm_operand(M, K, as[0], as[1], &o->ta, &o->lda) && cm_operand(K, N, bs[0], bs[1], &o->tb, &o->ldb);
    }
    return 0;
}

/* Issues the call: A and B of dtype ab, C of dtype cd (C may be f32 for
 * f16/bf16 operands). The 64-bit entry points only when a size needs them. */
ft_status mm_exec(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, const mm_call *c, double alpha,
                  double beta, int arrays)
{
    cudaDataType_t at = mm_type(ab), ct = mm_type(cd);
    cublasComputeType_t comp = ab == FT_F64                        ? CUBLAS_COMPUTE_64F
                               : ab == FT_F32 && k->be->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                    : CUBLAS_COMPUTE_32F;
    float fa = (float)alpha, fb = (float)beta;
    const void *pa = ab == FT_F64 ? (const void *)&alpha : (const void *)&fa;
    const void *pb = ab == FT_F64 ? (const void *)&beta : (const void *)&fb;
    cublasHandle_t h;
    ft_status hs = cu_blas(k, n, &h);
    if (hs)
        return hs;
    int big = c->m > INT_MAX || c->n > INT_MAX || c->k > INT_MAX || c->lda > INT_MAX || c->ldb > INT_MAX ||
              c->ldc > INT_MAX || c->batch > INT_MAX;
    if (arrays) {
        const void *const *A = (const void *const *)c->a, *const *B = (const void *const *)c->b;
        void *const *C = (void *const *)c->c;
        if (!big)
            CUBLAS_TRY(k, n, cublasGemmBatchedEx(h, c->ta, c->tb, (int)c->m, (int)c->n, (int)c->k, pa, A, at,
                                                 (int)c->lda, B, at, (int)c->ldb, pb, C, ct, (int)c->ldc, (int)c->batch,
                                                 comp, CUBLAS_GEMM_DEFAULT));
        else
            CUBLAS_TRY(k, n, cublasGemmBatchedEx_64(h, c->ta, c->tb, c->m, c->n, c->k, pa, A, at, c->lda, B, at, c->ldb,
                                                    pb, C, ct, c->ldc, c->batch, comp, CUBLAS_GEMM_DEFAULT));
    } else if (c->batch == 1) {
        if (!big)
            CUBLAS_TRY(k, n, cublasGemmEx(h, c->ta, c->tb, (int)c->m, (int)c->n, (int)c->k, pa, c->a, at, (int)c->lda,
                                          c->b, at, (int)c->ldb, pb, c->c, ct, (int)c->ldc, comp, CUBLAS_GEMM_DEFAULT));
        else
            CUBLAS_TRY(k, n, cublasGemmEx_64(h, c->ta, c->tb, c->m, c->n, c->k, pa, c->a, at, c->lda, c->b, at, c->ldb,
                                             pb, c->c, ct, c->ldc, comp, CUBLAS_GEMM_DEFAULT));
    } else {
        if (!big)
            CUBLAS_TRY(k, n, cublasGemmStridedBatchedEx(h, c->ta, c->tb, (int)c->m, (int)c->n, (int)c->k, pa, c->a, at,
                                                        (int)c->lda, c->sa, c->b, at, (int)c->ldb, c->sb, pb, c->c, ct,
                                                        (int)c->ldc, c->sc, (int)c->batch, comp, CUBLAS_GEMM_DEFAULT));
        else
            CUBLAS_TRY(k, n, cublasGemmStridedBatchedEx_64(h, c->ta, c->tb, c->m, c->n, c->k, pa, c->a, at, c->lda,
                                                           c->sa, c->b, at, c->ldb, c->sb, pb, c->c, ct, c->ldc, c->sc,
                                                           c->batch, comp, CUBLAS_GEMM_DEFAULT));
    }
    return FT_OK;
}

ft_status mm_layout_err(ft_kctx *k, const ft_node *n, int64_t M, int64_t N, int64_t K)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n,
                       "internal error: a %lld x %lld x %lld product has a layout cuBLAS cannot read", (long long)M,
                       (long long)N, (long long)K);
}

/* Shared with conv.cu: C[b] = alpha A[b] B[b] + beta C[b] with the
 * row-major meaning and {row, column, batch} element strides of mm_plan. */
ft_status cu_gemm_strided(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, int64_t batch, int64_t M, int64_t N,
                          int64_t K, double alpha, const void *A, const int64_t *as, const void *B, const int64_t *bs,
                          double beta, void *C, const int64_t *cs)
{
    mm_call c;
    if (!mm_plan(batch, M, N, K, A, as, B, bs, C, cs, &c))
        return mm_layout_err(k, n, M, N, K);
    return mm_exec(k, n, ab, cd, &c, alpha, beta, 0);
}

/* ------------------------------------------------------------------ matmul */
namespace {


/* Pointers of an irregular batch: batch t has the multi-index of t over
 * dims, and each operand its own stride per dim (0 where broadcast). */
typedef struct {
    int nd;
    int64_t dims[FT_MAX_RANK], sa[FT_MAX_RANK], sb[FT_MAX_RANK]; /* strides in bytes */
    const char *a, *b;
    char *c;
    int64_t cmat; /* bytes per C matrix */
    int64_t batch;
} mm_ptrs_args;

__global__ void mm_ptrs(mm_ptrs_args p, const void **pa, const void **pb, void **pc)
{
    MM_FOR (t, (uint64_t)p.batch) {
        int64_t rem = (int64_t)t, oa = 0, ob = 0;
        for (int i = p.nd - 1; i >= 0; i--) {
            int64_t idx = rem % p.dims[i];
            rem /= p.dims[i];
            oa += idx * p.sa[i];
            ob += idx * p.sb[i];
        }
        pa[t] = p.a + oa;
        pb[t] = p.b + ob;
        pc[t] = p.c + (int64_t)t * p.cmat;
    }
}

/* The optimizer's fused epilogue (params.h ft_mm_act) as a pass over the
 * product y (rows of N): bias[j] (or none), then the activation, in the
 * accumulation type, as the bias add and the activation's own kernels
 * compute them (elementwise.cu). */
__device__ __forceinline__ float mm_erfc(float x) { return erfcf(x); }
__device__ __forceinline__ double mm_erfc(double x) { return erfc(x); }
__device__ __forceinline__ float mm_exp(float x) { return expf(x); }
__device__ __forceinline__ double mm_exp(double x) { return exp(x); }

template <class T> __global__ void mm_epilogue(T *y, const T *bias, int act, uint64_t total, int64_t N)
{
    typedef typename cu_acc<T>::type A;
    MM_FOR (t, total) {
        A v = cu_load(y, (int64_t)t);
        if (bias)
            v = v + cu_load(bias, (int64_t)(t % (uint64_t)N));
        if (act == FT_MM_ACT_RELU)
            v = v < (A)0 ? (A)0 : v;
        else if (act == FT_MM_ACT_GELU)
            v = (A)0.5 * v * mm_erfc(-v * (A)0.70710678118654752440);
        else if (act == FT_MM_ACT_GELU_TANH)
            v = v / ((A)1 + mm_exp((A)-1.5957691216057307117 * (v + (A)0.044715 * v * v * v)));
        cu_store(y, (int64_t)t, v);
    }
}

template <class T>
static void mm_epilogue_launch(const ft_backend_ctx *be, void *y, const void *bias, int act, uint64_t total, int64_t N)
{
    mm_epilogue<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((T *)y, (const T *)bias, act, total, N);
}

/* The epilogue of node n (matmul's bias input 2, the activation) on its
 * output, when it has one. */
static ft_status mm_apply_epilogue(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const void *bias = n->op == FT_OP_MATMUL && n->n_in > 2 ? in[2].data : NULL;
    int act = (int)n->params.matmul.act;
    uint64_t total = ft_numel(&out[0].shape);
    if ((!bias && act == FT_MM_ACT_NONE) || total == 0)
        return FT_OK;
    int64_t N = out[0].shape.rank ? out[0].shape.dims[out[0].shape.rank - 1] : 1;
    CU_DISPATCH_FLOAT(out[0].dtype, T, mm_epilogue_launch<T>(k->be, out[0].data, bias, act, total, N));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* matmul's product, before the epilogue. */
static ft_status mm_product(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);

} // namespace

CU_KFN(cu_matmul)
{
    ft_status st = mm_product(k, n, in, out);
    return st ? st : mm_apply_epilogue(k, n, in, out);
}

namespace {
static ft_status mm_product(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_dtype dt = in[0].dtype;
    size_t es = ft_dtype_size(dt);
    uint64_t total = ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ft_matmul_geom g;
    ft_matmul_geom_of(&in[0].shape, &in[1].shape, &g);
    const int64_t M = g.M, K = g.K, N = g.N;
    if (K == 0) {
        CU_TRY(k, n, cudaMemsetAsync(out[0].data, 0, (size_t)total * es, k->be->stream));
        return FT_OK;
    }
    int64_t ast[3] = {K, 1, M * K}, bst[3] = {N, 1, K * N}, cst[3] = {N, 1, M * N};
    mm_call c;
    /* b shared by every batch and a not broadcast: one tall product. */
    if (g.tall) {
        int64_t rows = (int64_t)g.nbatch * M;
        if (!mm_plan(1, rows, N, K, in[0].data, ast, in[1].data, bst, out[0].data, cst, &c))
            return mm_layout_err(k, n, rows, N, K);
        return mm_exec(k, n, dt, dt, &c, 1.0, 0.0, 0);
    }
    /* Merge batch dims along which both operands advance regularly; one
     * merged dim is a strided batch (stride 0 for a broadcast operand). */
    int nd = 0;
    int64_t md[FT_MAX_RANK], ma[FT_MAX_RANK], mb[FT_MAX_RANK];
    for (int i = 0; i < g.r; i++) {
        if (g.bdims[i] == 1)
            continue;
        if (nd && ma[nd - 1] == g.sa[i] * g.bdims[i] && mb[nd - 1] == g.sb[i] * g.bdims[i]) {
            md[nd - 1] *= g.bdims[i];
            ma[nd - 1] = g.sa[i];
            mb[nd - 1] = g.sb[i];
        } else {
            md[nd] = g.bdims[i];
            ma[nd] = g.sa[i];
            mb[nd] = g.sb[i];
            nd++;
        }
    }
    if (nd <= 1) {
        ast[2] = nd ? ma[0] * M * K : 0;
        bst[2] = nd ? mb[0] * K * N : 0;
        if (!mm_plan((int64_t)g.nbatch, M, N, K, in[0].data, ast, in[1].data, bst, out[0].data, cst, &c))
            return mm_layout_err(k, n, M, N, K);
        return mm_exec(k, n, dt, dt, &c, 1.0, 0.0, 0);
    }
    /* Broadcasting over part of the batch. cuBLAS cannot see the matrices
     * behind pointer arrays and its tensor-core kernels take them as 16-byte
     * aligned (a misaligned-address fault otherwise), so pointer arrays only
     * when every matrix starts on 16 bytes; else one strided-batched call
     * (whose pointers cuBLAS does check) per index of the other merged dims,
     * batched along the longest. */
    const uint64_t amat = (uint64_t)(M * K) * es, bmat = (uint64_t)(K * N) * es, cmat = (uint64_t)(M * N) * es;
    if (((uintptr_t)in[0].data | (uintptr_t)in[1].data | (uintptr_t)out[0].data | amat | bmat | cmat) % 16) {
        int big = 0;
        int64_t cm[FT_MAX_RANK], idx[FT_MAX_RANK], acc = 1; /* C is contiguous over the merged dims */
        for (int i = nd - 1; i >= 0; i--) {
            cm[i] = acc, acc *= md[i], idx[i] = 0;
            if (md[i] > md[big])
                big = i;
        }
        ast[2] = ma[big] * M * K, bst[2] = mb[big] * K * N, cst[2] = cm[big] * M * N;
        for (uint64_t call = 0; call < g.nbatch / (uint64_t)md[big]; call++) {
            int64_t oa = 0, ob = 0, oc = 0;
            for (int i = 0; i < nd; i++)
                if (i != big)
                    oa += idx[i] * ma[i], ob += idx[i] * mb[i], oc += idx[i] * cm[i];
            if (!mm_plan(md[big], M, N, K, (const char *)in[0].data + (uint64_t)oa * amat, ast,
                         (const char *)in[1].data + (uint64_t)ob * bmat, bst, (char *)out[0].data + (uint64_t)oc * cmat,
                         cst, &c))
                return mm_layout_err(k, n, M, N, K);
            ft_status st = mm_exec(k, n, dt, dt, &c, 1.0, 0.0, 0);
            if (st)
                return st;
            for (int i = nd - 1; i >= 0; i--) {
                if (i == big)
                    continue;
                if (++idx[i] < md[i])
                    break;
                idx[i] = 0;
            }
        }
        return FT_OK;
    }
    /* Each array on its own 256 bytes: cuBLAS also wants the arrays aligned. */
    const size_t arr = ((size_t)g.nbatch * sizeof(void *) + 255) & ~(size_t)255;
    void *ws;
    ft_status st = cu_workspace(k, n, 3 * arr, &ws);
    if (st)
        return st;
    const void **pa = (const void **)ws, **pb = (const void **)((char *)ws + arr);
    void **pc = (void **)((char *)ws + 2 * arr);
    mm_ptrs_args p;
    memset(&p, 0, sizeof p);
    p.nd = nd;
    for (int i = 0; i < nd; i++) {
        p.dims[i] = md[i];
        p.sa[i] = ma[i] * M * K * (int64_t)es;
        p.sb[i] = mb[i] * K * N * (int64_t)es;
    }
    p.a = (const char *)in[0].data;
    p.b = (const char *)in[1].data;
    p.c = (char *)out[0].data;
    p.cmat = M * N * (int64_t)es;
    p.batch = (int64_t)g.nbatch;
    mm_ptrs<<<cu_grid(k->be, g.nbatch), CU_BLOCK, 0, k->be->stream>>>(p, pa, pb, pc);
    CU_LAUNCHED(k, n);
    if (!mm_plan((int64_t)g.nbatch, M, N, K, pa, ast, pb, bst, pc, cst, &c))
        return mm_layout_err(k, n, M, N, K);
    return mm_exec(k, n, dt, dt, &c, 1.0, 0.0, 1);
}

} // namespace

/* ------------------------------------------------------------------ gemm */
namespace {


/* Narrowing of a value computed in double the way the CPU reference stores
 * it: through f32 for f32/f16/bf16 (the 16-bit types run as f32 there). */
template <class T> __device__ __forceinline__ T mm_from_d(double v) { return cu_from_f<T>((float)v); }
template <> __device__ __forceinline__ double mm_from_d<double>(double v) { return v; }

/* y (M x N) = c broadcast (strides s0, s1), or beta * c when scale is set. */
template <class T>
__global__ void gemm_fill(T *y, const T *c, int64_t total, int64_t N, int64_t s0, int64_t s1, int scale, double beta)
{
    MM_FOR (t, (uint64_t)total) {
        int64_t i = (int64_t)t / N, j = (int64_t)t - i * N, src = i * s0 + j * s1;
        if (scale)
            y[t] = mm_from_d<T>(beta * (double)cu_load(c, src));
        else
            y[t] = c[src];
    }
}

template <class T>
static void gemm_fill_launch(const ft_backend_ctx *be, void *y, const void *c, uint64_t total, int64_t N,
                             const int64_t *st, int scale, double beta)
{
    gemm_fill<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((T *)y, (const T *)c, (int64_t)total, N, st[0], st[1],
                                                                    scale, beta);
}

} // namespace

CU_KFN(cu_gemm)
{
    const ft_matmul_params *mp = &n->params.matmul;
    int64_t M, K, N;
    if (!ft_gemm_mkn(mp, &in[0].shape, &in[1].shape, &M, &K, &N))
        return FT_OK;
    ft_dtype dt = in[0].dtype;
    int ta = mp->trans_a, tb = mp->trans_b;
    double alpha = mp->alpha, beta = mp->beta;
    const ft_shape *as = &in[0].shape, *bs = &in[1].shape;
    cudaStream_t s = k->be->stream;
    int has_c = n->n_in > 2 && in[2].data;
    /* y starts as c and cuBLAS adds alpha*op(a)op(b) with beta. f32 and f64
     * take beta*c computed here in double (the CPU's order of rounding);
     * f16/bf16 keep c as is so that cuBLAS forms alpha*ab + beta*c in f32
     * with one rounding, as the CPU does; beta = 0 gives 0*c here (NaN for
     * an infinite c, as the formula does, where cuBLAS would drop c). */
    double cbeta = 0.0;
    if (has_c) {
        int scale = dt == FT_F32 || dt == FT_F64 || beta == 0.0 || K == 0;
        int64_t st[2];
        ft_gemm_c_strides(&in[2].shape, M, N, st);
        uint64_t total = (uint64_t)M * (uint64_t)N;
        CU_DISPATCH_FLOAT(dt, T, gemm_fill_launch<T>(k->be, out[0].data, in[2].data, total, N, st, scale, beta));
        CU_LAUNCHED(k, n);
        cbeta = scale ? 1.0 : beta;
    } else if (K == 0) {
        CU_TRY(k, n, cudaMemsetAsync(out[0].data, 0, (size_t)M * (size_t)N * ft_dtype_size(dt), s));
    }
    if (K == 0)
        return mm_apply_epilogue(k, n, in, out);
    /* op(a)(m,k): a stored [M,K] (row stride a's dim 1) or, transposed, [K,M]. */
    int64_t ast[3] = {ta ? 1 : as->dims[1], ta ? as->dims[1] : 1, 0};
    int64_t bst[3] = {tb ? 1 : bs->dims[1], tb ? bs->dims[1] : 1, 0};
    int64_t cst[3] = {N, 1, 0};
    ft_status st = cu_gemm_strided(k, n, dt, dt, 1, M, N, K, alpha, in[0].data, ast, in[1].data, bst, cbeta,
                                   out[0].data, cst);
    return st ? st : mm_apply_epilogue(k, n, in, out);
}

