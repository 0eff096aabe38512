/* What the CUDA attention kernels share (attention.cu: Y; attention_scores.cu:
 * output 3): their arguments, the masking rules and the warp reductions.
 *
 *   ft_status st = cu_attn_scores(k, n, a, FT_F32, out[3].data, 3);  // the softmax weights
 */
#ifndef FTRUN_CUDA_ATTENTION_CUH
#define FTRUN_CUDA_ATTENTION_CUH

#include "cu.cuh"

#include <math.h>

typedef struct attn_args {
    const void *q, *k, *v, *mask;
    void *o;
    int64_t B, H, S, T, D, Dv, Hk, grp; /* grp = H / Hk query heads per kv head */
    int64_t ms[4];                      /* mask strides over [B,H,S,mask_t], 0 along broadcast dims */
    int mask_kind;                      /* 0 none, 1 bool, 2 additive (dtype of q) */
    int causal;
    int64_t coff;             /* offset: the past length; query i sits at key position i + coff */
    const int64_t *kvl;       /* kv_len [B] (device) or NULL: keys t >= kvl[b] are padding, offset kvl[b] - S */
    int64_t wl, wr;           /* window: keys pos - wl <= t <= pos + wr (-1: unbounded) */
    int64_t mask_t;           /* keys t >= mask_t lie past a shorter mask's last dim: masked */
    float scale_f;
    double scale_d;
    int has_cap;              /* softcap given: x -> cap tanh(x / cap) before the masks */
    float cap_f, icap_f;      /* cap and 1 / cap */
    double cap_d, icap_d;
    int vec_qk, vec_v, vec_o; /* rows are whole 16-byte chunks at 16-byte aligned addresses */
    int64_t nqb, items;       /* query blocks per (batch, head); blocks of work in all */
} attn_args;

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ float amax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double amax(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float aexp(float a) { return expf(a); }
__device__ __forceinline__ double aexp(double a) { return exp(a); }

template <class A> __device__ __forceinline__ A pick_scale(const attn_args &a);
template <> __device__ __forceinline__ float pick_scale<float>(const attn_args &a) { return a.scale_f; }
template <> __device__ __forceinline__ double pick_scale<double>(const attn_args &a) { return a.scale_d; }

/* Soft capping of a scaled score, as the CPU (src/cpu/attention.c): cap tanh(x (1/cap)). */
__device__ __forceinline__ float soft_cap(const attn_args &a, float x) { return a.cap_f * tanhf(x * a.icap_f); }
__device__ __forceinline__ double soft_cap(const attn_args &a, double x) { return a.cap_d * tanh(x * a.icap_d); }

/* Score x of mask element idx: bool false -> -inf, additive -> x + m (an
 * additive -inf masks the key even where x is NaN or inf: a row masked
 * everywhere is zeros, ONNX's fully-masked-row guard). */
template <class T, class A> __device__ __forceinline__ A apply_mask(const attn_args &a, int64_t idx, A x)
{
    if (a.mask_kind == 1)
        return ((const uint8_t *)a.mask)[idx] ? x : (A)-INFINITY;
    A m = (A)cu_load((const T *)a.mask, idx);
    return m == (A)-INFINITY ? m : x + m;
}

/* What batch b's queries may see: query i sits at key position i + off and
 * no key at or past lim is visible (T, kv_len, a shorter mask). */
struct kv_span {
    int64_t off, lim;
};
__device__ __forceinline__ kv_span batch_span(const attn_args &a, int64_t b)
{
    kv_span sp = {a.coff, a.mask_t < a.T ? a.mask_t : a.T};
    if (a.kvl) {
        int64_t nk = a.kvl[b];
        sp.off = nk - a.S;
        if (nk < sp.lim)
            sp.lim = nk < 0 ? 0 : nk;
    }
    return sp;
}
/* Keys [lo, hi) visible to query qi before the mask: causal, window, lim.
 * lo only grows and hi never shrinks with qi. */
__device__ __forceinline__ void key_range(const attn_args &a, const kv_span &sp, int64_t qi, int64_t &lo, int64_t &hi)
{
    int64_t pos = qi + sp.off;
    lo = a.wl >= 0 && pos - a.wl > 0 ? pos - a.wl : 0;
    hi = sp.lim;
    if (a.causal && pos + 1 < hi)
        hi = pos + 1;
    if (a.wr >= 0 && pos + a.wr + 1 < hi)
        hi = pos + a.wr + 1;
    if (hi < lo)
        hi = lo;
}
__device__ __forceinline__ bool key_visible(const attn_args &a, const kv_span &sp, int64_t qi, int64_t kj)
{
    int64_t pos = qi + sp.off;
    return kj < sp.lim && !(a.causal && kj > pos) && !(a.wl >= 0 && kj < pos - a.wl) &&
           !(a.wr >= 0 && kj > pos + a.wr);
}

/* The score of query row qi and key kj in a tile (x already scaled): soft
 * cap, then -inf for a key the query may not see (past the last key, above
 * the causal diagonal, outside the window, padding), else the mask (rows
 * qi >= S only pad the tile and read no mask). */
template <class T, class A>
__device__ __forceinline__ A tile_score(const attn_args &a, const kv_span &sp, int64_t mbase, int64_t qi, int64_t kj,
                                        A x)
{
    if (a.has_cap)
        x = soft_cap(a, x);
    if (!key_visible(a, sp, qi, kj))
        return (A)-INFINITY;
    if (a.mask_kind && qi < a.S)
        x = apply_mask<T, A>(a, mbase + qi * a.ms[2] + kj * a.ms[3], x);
    return x;
}

template <class A> __device__ __forceinline__ A warp_max(A v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = amax(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
template <class A> __device__ __forceinline__ A warp_sum(A v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

/* Output 3 of attention ([B,H,S,T], dtype dt) at stage mode (0 scaled q.k,
 * 1 soft capped, 2 masked, 3 softmax weights), from a's q and keys. */
ft_status cu_attn_scores(ft_kctx *k, const ft_node *n, const attn_args &a, ft_dtype dt, void *out, int mode);

#endif
