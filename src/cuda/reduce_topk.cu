/* CUDA topk (the reductions family; split from reduce.cu for size).
 *
 * Order as the CPU (cpu/misc.c): every value becomes an unsigned key whose
 * ascending order is the output order (NaN -> the largest key, -0 -> +0, bits
 * flipped for largest=1), and the position along the axis breaks ties, so
 * the answer is the first k items of the row sorted by (key, position): a
 * total order, hence exactly the CPU's stable result whatever the sort.
 * sorted=0 returns the same order.
 *
 * Rows of up to TK_TILE items are sorted whole in shared memory by a bitonic
 * network (one block per row, or several short rows per block). Longer rows
 * are copied as (key, position) pairs into the workspace, padded to a power
 * of two, and sorted there: stages whose compare distance fits a tile run in
 * shared memory, the others as one global pass each. Rows are processed in
 * batches that bound the workspace. Values are copied bit for bit from the
 * input (NaN payloads and -0 survive). */
#include "cu.cuh"

extern "C" {
#include "../graph/infer_math.h"
}

namespace {

/* 4096 (key, position) pairs: 48 KiB, the shared memory a block may use without opting in. */
#define TK_TILE 4096
#define TK_PAD_KEY 0xFFFFFFFFFFFFFFFFull
#define TK_PAD_POS 0xFFFFFFFFu
/* Workspace bound for one batch of long rows. */
#define TK_BATCH_BYTES ((size_t)256 << 20)

__device__ __forceinline__ int64_t tk_div(int64_t a, int64_t b)
{
    if ((((uint64_t)a | (uint64_t)b) >> 32) == 0)
        return (int64_t)((uint32_t)a / (uint32_t)b);
    return (int64_t)((uint64_t)a / (uint64_t)b);
}

__device__ __forceinline__ unsigned long long tk_key(float v)
{
    if (v != v)
        return 0xFFFFFFFFull;
    unsigned u = v == 0.0f ? 0u : __float_as_uint(v);
    return (u & 0x80000000u) ? (unsigned long long)(~u) : (unsigned long long)(u | 0x80000000u);
}
__device__ __forceinline__ unsigned long long tk_key(double v)
{
    if (v != v)
        return TK_PAD_KEY;
    unsigned long long u = v == 0.0 ? 0ull : (unsigned long long)__double_as_longlong(v);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
/* 16-bit floats widen exactly to f32, whose key order is theirs. */
__device__ __forceinline__ unsigned long long tk_key(__half v) { return tk_key(__half2float(v)); }
__device__ __forceinline__ unsigned long long tk_key(__nv_bfloat16 v) { return tk_key(__bfloat162float(v)); }
__device__ __forceinline__ unsigned long long tk_key(int8_t v) { return (unsigned long long)((uint8_t)v ^ 0x80u); }
__device__ __forceinline__ unsigned long long tk_key(int16_t v) { return (unsigned long long)((uint16_t)v ^ 0x8000u); }
__device__ __forceinline__ unsigned long long tk_key(int32_t v) { return (unsigned long long)((uint32_t)v ^ 0x80000000u); }
__device__ __forceinline__ unsigned long long tk_key(int64_t v) { return (unsigned long long)v ^ 0x8000000000000000ull; }
__device__ __forceinline__ unsigned long long tk_key(uint8_t v) { return (unsigned long long)v; }

/* Compare-exchange of items lo < hi: ascending puts the smaller (key, pos) at lo. */
__device__ __forceinline__ void tk_cmpx(unsigned long long *ks, unsigned *ps, int64_t lo, int64_t hi, bool asc)
{
    unsigned long long ka = ks[lo], kb = ks[hi];
    unsigned pa = ps[lo], pb = ps[hi];
    bool gt = ka > kb || (ka == kb && pa > pb);
    if (gt == asc) {
        ks[lo] = kb, ks[hi] = ka;
        ps[lo] = pb, ps[hi] = pa;
    }
}

/* Bitonic stages kk = kk0..kk1 over n items in shared memory, compare
 * distances j <= jcap. gofs: index of item 0 in the batch array; rows are P
 * items (a power of two) and the direction of a compare follows the item's
 * position in its row, so that each row is sorted on its own. Every thread of
 * the block must call. */
__device__ void tk_bitonic(unsigned long long *ks, unsigned *ps, int n, int64_t P, int64_t gofs, int64_t kk0, int64_t kk1,
                           int jcap)
{
    for (int64_t kk = kk0; kk <= kk1; kk <<= 1) {
        for (int j = (int)(kk / 2 < jcap ? kk / 2 : jcap); j > 0; j >>= 1) {
            for (int q = (int)threadIdx.x; q < n / 2; q += (int)blockDim.x) {
                int lo = ((q & ~(j - 1)) << 1) | (q & (j - 1));
                bool asc = (((gofs + lo) & (P - 1)) & kk) == 0;
                tk_cmpx(ks, ps, lo, lo + j, asc);
            }
            __syncthreads();
        }
    }
}

/* Item e: the key (flipped for the smallest) and position of element j of
 * row `row`, or the padding past the row or the last row. */
template <class T>
__device__ __forceinline__ void tk_item(const T *x, unsigned long long *ks, unsigned *ps, int64_t e, int64_t row,
                                        int64_t j, int64_t nrows, int64_t dim, int64_t inner, unsigned long long flip)
{
    if (row < nrows && j < dim) {
        int64_t o = tk_div(row, inner), c = row - o * inner;
        ks[e] = tk_key(x[(o * dim + j) * inner + c]) ^ flip;
        ps[e] = (unsigned)j;
    } else {
        ks[e] = TK_PAD_KEY;
        ps[e] = TK_PAD_POS;
    }
}

/* Rows of P <= TK_TILE padded items, R rows per block. Row r of the tensor
 * (r = o * inner + c) reads x[(o * dim + j) * inner + c]. */
template <class T>
__global__ void __launch_bounds__(1024) tk_small(const T *x, T *vals, long long *idx, int64_t nrows, int64_t dim,
                                                 int64_t inner, int64_t k, int P, int logP, int R,
                                                 unsigned long long flip)
{
    extern __shared__ unsigned long long tk_sm[];
    unsigned long long *ks = tk_sm;
    unsigned *ps = (unsigned *)(tk_sm + R * P);
    const int n = R * P;
    for (int64_t rb = (int64_t)blockIdx.x * R; rb < nrows; rb += (int64_t)gridDim.x * R) {
        for (int e = (int)threadIdx.x; e < n; e += (int)blockDim.x) {
            int r = e >> logP, j = e & (P - 1);
            int64_t row = rb + r;
            tk_item(x, ks, ps, e, row, j, nrows, dim, inner, flip);
        }
        __syncthreads();
        tk_bitonic(ks, ps, n, P, 0, 2, P, P / 2);
        const int64_t nk = (int64_t)R * k;
        for (int64_t e = threadIdx.x; e < nk; e += blockDim.x) {
            int64_t r = tk_div(e, k), jj = e - r * k, row = rb + r;
            if (row < nrows) {
                int64_t o = tk_div(row, inner), c = row - o * inner;
                int64_t pos = ps[r * P + jj];
                vals[(o * k + jj) * inner + c] = x[(o * dim + pos) * inner + c];
                idx[(o * k + jj) * inner + c] = pos;
            }
        }
        __syncthreads();
    }
}

/* Long rows: batch rows r0 .. r0 + nb - 1 into nb * P (key, position) items. */
template <class T>
__global__ void tk_fill(const T *x, unsigned long long *ks, unsigned *ps, int64_t r0, int64_t nb, int64_t nrows,
                        int64_t dim, int64_t inner, int64_t P, int logP, unsigned long long flip)
{
    const int64_t total = nb * P;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = e >> logP, j = e & (P - 1), row = r0 + r;
        tk_item(x, ks, ps, e, row, j, nrows, dim, inner, flip);
    }
}

/* Stages kk0..kk1 with distances below TK_TILE, one tile per block in shared memory. */
__global__ void __launch_bounds__(1024) tk_tiles(unsigned long long *ks, unsigned *ps, int64_t total, int64_t P,
                                                 int64_t kk0, int64_t kk1)
{
    extern __shared__ unsigned long long tk_sm[];
    unsigned long long *sk = tk_sm;
    unsigned *sp = (unsigned *)(tk_sm + TK_TILE);
    const int64_t ntiles = total / TK_TILE;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t g0 = t * TK_TILE;
        for (int e = (int)threadIdx.x; e < TK_TILE; e += (int)blockDim.x) {
            sk[e] = ks[g0 + e];
            sp[e] = ps[g0 + e];
        }
        __syncthreads();
        tk_bitonic(sk, sp, TK_TILE, P, g0, kk0, kk1, TK_TILE / 2);
        for (int e = (int)threadIdx.x; e < TK_TILE; e += (int)blockDim.x) {
            ks[g0 + e] = sk[e];
            ps[g0 + e] = sp[e];
        }
        __syncthreads();
    }
}

/* One bitonic step (stage kk, distance j >= TK_TILE) over the whole batch. */
__global__ void tk_step(unsigned long long *ks, unsigned *ps, int64_t total, int64_t P, int64_t kk, int64_t j)
{
    const int64_t pairs = total / 2;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < pairs; q += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo = ((q & ~(j - 1)) << 1) | (q & (j - 1));
        tk_cmpx(ks, ps, lo, lo + j, ((lo & (P - 1)) & kk) == 0);
    }
}

template <class T>
__global__ void tk_gather(const T *x, T *vals, long long *idx, const unsigned *ps, int64_t r0, int64_t nb,
                          int64_t nrows, int64_t dim, int64_t inner, int64_t k, int64_t P)
{
    const int64_t total = nb * k;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = tk_div(e, k), jj = e - r * k, row = r0 + r;
        if (row >= nrows)
            continue;
        int64_t o = tk_div(row, inner), c = row - o * inner;
        int64_t pos = ps[r * P + jj];
        vals[(o * k + jj) * inner + c] = x[(o * dim + pos) * inner + c];
        idx[(o * k + jj) * inner + c] = pos;
    }
}

static int64_t tk_min(int64_t a, int64_t b) { return a < b ? a : b; }

template <class T>
static ft_status topk_t(ft_kctx *k, const ft_node *n, const T *x, T *vals, long long *idx, int64_t nrows, int64_t dim,
                        int64_t inner, int64_t kk, unsigned long long flip)
{
    cudaStream_t st = k->be->stream;
    const int64_t cap = (int64_t)k->be->sm_count * 32;
    int logP = 1;
    while (((int64_t)1 << logP) < dim)
        logP++;
    const int64_t P = (int64_t)1 << logP;
    const size_t item = sizeof(unsigned long long) + sizeof(unsigned);
    if (P <= TK_TILE) {
        /* P/2 threads per row (at most 1024), short rows packed 256 threads to a block. */
        const int tpr = (int)tk_min(P / 2, 1024), R = tpr >= 256 ? 1 : 256 / tpr;
        const size_t smem = (size_t)R * (size_t)P * item;
        const int64_t blocks = (nrows + R - 1) / R;
        tk_small<T><<<(unsigned)tk_min(blocks, cap), R * tpr, smem, st>>>(x, vals, idx, nrows, dim, inner, kk, (int)P,
                                                                          logP, R, flip);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    int64_t nb = (int64_t)(TK_BATCH_BYTES / ((size_t)P * item));
    nb = nb < 1 ? 1 : tk_min(nb, nrows);
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, (size_t)(nb * P) * item, &ws);
    if (rc != FT_OK)
        return rc;
    unsigned long long *ks = (unsigned long long *)ws;
    unsigned *ps = (unsigned *)(ks + nb * P);
    const size_t tsm = (size_t)TK_TILE * item;
    for (int64_t r0 = 0; r0 < nrows; r0 += nb) {
        const int64_t b = tk_min(nb, nrows - r0), total = b * P;
        tk_fill<T><<<cu_grid(k->be, (uint64_t)total), CU_BLOCK, 0, st>>>(x, ks, ps, r0, b, nrows, dim, inner, P, logP,
                                                                         flip);
        CU_LAUNCHED(k, n);
        const unsigned tgrid = (unsigned)tk_min(total / TK_TILE, cap);
        tk_tiles<<<tgrid, 1024, tsm, st>>>(ks, ps, total, P, 2, TK_TILE);
        CU_LAUNCHED(k, n);
        for (int64_t s = 2 * TK_TILE; s <= P; s <<= 1) {
            for (int64_t j = s / 2; j >= TK_TILE; j >>= 1) {
                tk_step<<<cu_grid(k->be, (uint64_t)total / 2), CU_BLOCK, 0, st>>>(ks, ps, total, P, s, j);
                CU_LAUNCHED(k, n);
            }
            tk_tiles<<<tgrid, 1024, tsm, st>>>(ks, ps, total, P, s, s);
            CU_LAUNCHED(k, n);
        }
        tk_gather<T><<<cu_grid(k->be, (uint64_t)(b * kk)), CU_BLOCK, 0, st>>>(x, vals, idx, ps, r0, b, nrows, dim,
                                                                              inner, kk, P);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}

} // namespace

ft_status cu_topk(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const ft_dtype dt = in[0].dtype;
    const int axis = n->params.reduce.axis, largest = n->params.reduce.largest;
    const int64_t kk = n->params.reduce.k;
    int64_t outer, dim, inner;
    ft_reduce_around_axis(s, axis, &outer, &dim, &inner);
    if (kk == 0 || outer == 0 || inner == 0)
        return FT_OK;
    if (kk < 0 || kk > dim)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "k = %lld is out of range for an axis of %lld",
                           (long long)kk, (long long)dim);
    /* Positions travel as 32-bit values beside the keys, padding included. */
    if (dim > ((int64_t)1 << 31))
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "the cuda topk kernel handles axes of at most 2^31 "
                           "elements (axis %d has %lld)", axis, (long long)dim);
    if (dt == FT_BOOL || dt == FT_DTYPE_COUNT)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda topk kernel",
                           ft_dtype_name(dt));
    /* Key width in bytes: 16-bit floats use their f32 keys. */
    const size_t w = (dt == FT_F16 || dt == FT_BF16) ? 4 : ft_dtype_size(dt);
    const unsigned long long flip = !largest ? 0ull : w == 8 ? ~0ull : ((1ull << (8 * w)) - 1);
    CU_DISPATCH(dt, T,
                return topk_t<T>(k, n, (const T *)in[0].data, (T *)out[0].data, (long long *)out[1].data,
                                 outer * inner, dim, inner, kk, flip));
    return FT_OK;
}
