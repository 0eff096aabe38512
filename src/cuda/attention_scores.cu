/* CUDA attention's scores output (output 3, ONNX's qk_matmul_output): the
 * scores of one stage written to global memory by a kernel of their own, so
 * that the attention kernels (attention.cu) keep theirs in registers. */
#include "attention.cuh"

#include <limits.h>

/* ------------------------------------------------- the scores output (output 3) */

#define SC_NT 128

/* Across the block (every thread gets the result); red: SC_NT / 32 slots. */
template <class A> __device__ __forceinline__ A block_max(A v, A *red)
{
    v = warp_max(v);
    __syncthreads(); /* red is free */
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    for (int i = 0; i < SC_NT / 32; i++)
        v = amax(v, red[i]);
    return v;
}
template <class A> __device__ __forceinline__ A block_sum(A v, A *red)
{
    v = warp_sum(v);
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0;
    for (int i = 0; i < SC_NT / 32; i++)
        v += red[i];
    return v;
}

/* Score of query row s (of batch b, head h) and key t at stage mode: 0 the
 * scaled q.k, 1 soft capped, 2 (and 3) masked as the attention kernels mask. */
template <class T, class A>
__device__ __forceinline__ A stage_score(const attn_args &a, const kv_span &sp, int64_t mbase, const T *q, const T *kr,
                                         int64_t s, int64_t t, int mode)
{
    A dot = 0;
    for (int64_t d = 0; d < a.D; d++)
        dot += cu_load(q, d) * cu_load(kr, d);
    A x = dot * pick_scale<A>(a);
    if (mode == 0)
        return x;
    if (mode == 1)
        return a.has_cap ? soft_cap(a, x) : x;
    return tile_score<T, A>(a, sp, mbase, s, t, x);
}

/* One block per query row, a thread per key: the row of output 3. Mode 3
 * (the softmax weights) takes the row's maximum and sum first and computes
 * each score three times; a row without a visible key is zeros, as Y. */
template <class T> __global__ void __launch_bounds__(SC_NT) attn_scores(attn_args a, T *out, int mode, int64_t nrows)
{
    typedef typename cu_acc<T>::type A;
    const A NEG_INF = (A)-INFINITY;
    __shared__ A red[SC_NT / 32];
    const T *Q = (const T *)a.q, *K = (const T *)a.k;
    for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
        int64_t s = row % a.S, bh = row / a.S, h = bh % a.H, b = bh / a.H, hk = h / a.grp;
        const T *q = Q + row * a.D, *kb = K + (b * a.Hk + hk) * a.T * a.D;
        const kv_span sp = batch_span(a, b);
        const int64_t mbase = b * a.ms[0] + h * a.ms[1];
        T *dst = out + row * a.T;
        if (mode < 3) {
            for (int64_t t = threadIdx.x; t < a.T; t += SC_NT)
                cu_store(dst, t, stage_score<T, A>(a, sp, mbase, q, kb + t * a.D, s, t, mode));
            continue;
        }
        A mx = NEG_INF, sum = 0;
        for (int64_t t = threadIdx.x; t < a.T; t += SC_NT)
            mx = amax(mx, stage_score<T, A>(a, sp, mbase, q, kb + t * a.D, s, t, 2));
        mx = block_max(mx, red);
        A mu = mx == NEG_INF ? (A)0 : mx;
        for (int64_t t = threadIdx.x; t < a.T; t += SC_NT)
            sum += aexp(stage_score<T, A>(a, sp, mbase, q, kb + t * a.D, s, t, 2) - mu);
        sum = block_sum(sum, red);
        for (int64_t t = threadIdx.x; t < a.T; t += SC_NT) {
            A p = mx == NEG_INF ? (A)0 : aexp(stage_score<T, A>(a, sp, mbase, q, kb + t * a.D, s, t, 2) - mu) / sum;
            cu_store(dst, t, p);
        }
    }
}

template <class T> static ft_status run_scores(ft_kctx *k, const ft_node *n, const attn_args &a, void *out, int mode)
{
    int64_t nrows = a.B * a.H * a.S;
    if (nrows == 0 || a.T == 0)
        return FT_OK;
    unsigned blocks = (unsigned)(nrows < INT_MAX ? nrows : INT_MAX);
    attn_scores<T><<<blocks, SC_NT, 0, k->be->stream>>>(a, (T *)out, mode, nrows);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

ft_status cu_attn_scores(ft_kctx *k, const ft_node *n, const attn_args &a, ft_dtype dt, void *out, int mode)
{
    if (dt == FT_F16)
        return run_scores<__half>(k, n, a, out, mode);
    if (dt == FT_BF16)
        return run_scores<__nv_bfloat16>(k, n, a, out, mode);
    if (dt == FT_F32)
        return run_scores<float>(k, n, a, out, mode);
    if (dt == FT_F64)
        return run_scores<double>(k, n, a, out, mode);
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda attention scores kernel",
                       ft_dtype_name(dt));
}
