/* einsum on the GPU.
 *
 * einsum follows cpu/einsum.c: every operand is a strided view with one
 * stride per label; operands are contracted pairwise, left to right, each
 * pair one batched product after packing what cuBLAS cannot read in place;
 * diagonals, sums over labels of one operand, small contractions and
 * contractions whose intermediates would be huge run in a generic strided
 * kernel that accumulates in double, as the CPU loop does.
 */
#include "mm.cuh"

extern "C" {
#include "../graph/infer_misc.h"
}

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ einsum */
namespace {


/* Words of a loop table: header, sizes, and per operand a pointer and one
 * stride per label (output labels and summed labels are distinct). */
#define EIN_TAB_MAX (4 + FT_EIN_NL + FT_EIN_MAXOPS * (1 + FT_EIN_NL))
#define EIN_POKE 256

__device__ __forceinline__ double ein_ld(const void *p, int64_t i, int dt)
{
    if (dt == FT_F64)
        return ((const double *)p)[i];
    if (dt == FT_F32)
        return (double)((const float *)p)[i];
    if (dt == FT_F16)
        return (double)__half2float(((const __half *)p)[i]);
    return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

/* Through f32 for the 32- and 16-bit types, as the CPU loop stores. */
__device__ __forceinline__ void ein_st(void *p, int64_t i, int dt, double v)
{
    if (dt == FT_F64)
        ((double *)p)[i] = v;
    else if (dt == FT_F32)
        ((float *)p)[i] = (float)v;
    else if (dt == FT_F16)
        ((__half *)p)[i] = __float2half_rn((float)v);
    else
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v);
}

/* Loop tables travel to the device as kernel arguments (stream-ordered and
 * capturable, unlike a copy from pageable memory). */
typedef struct {
    int64_t v[EIN_POKE];
} ein_chunk;

__global__ void ein_poke(int64_t *dst, ein_chunk c, int cnt)
{
    if ((int)threadIdx.x < cnt)
        dst[threadIdx.x] = c.v[threadIdx.x];
}

/* Loop table (int64 words): nops, no, ns, dtype; the no output label sizes;
 * the ns summed label sizes; then per operand its pointer, its strides along
 * the output labels and along the summed labels. Labels of size 1 are left
 * out everywhere. Up to 2 operands the per-operand offsets stay in registers. */
#define EIN_FOR_OPS(i) _Pragma("unroll (NMAX <= 4 ? NMAX : 1)") for (int i = 0; i < NMAX; i++) if (i < nops)
#define EIN_PTR(i) ((const void *)(uintptr_t)opt[(i) * w])
#define EIN_OST(i, d) opt[(i) * w + 1 + (d)]
#define EIN_SST(i, d) opt[(i) * w + 1 + no + (d)]

#define EIN_TABLE_PROLOGUE                                                                                           \
    extern __shared__ int64_t sm[];                                                                                  \
    for (int i_ = threadIdx.x; i_ < words; i_ += blockDim.x)                                                         \
        sm[i_] = tab[i_];                                                                                            \
    __syncthreads();                                                                                                 \
    const int nops = (int)sm[0], no = (int)sm[1], ns = (int)sm[2], dt = (int)sm[3], w = 1 + no + ns;                \
    const int64_t *osz = sm + 4, *ssz = osz + no, *opt = ssz + ns;                                                   \
    (void)ssz

/* Offsets of output element t in each operand. */
#define EIN_OUT_OFFSETS(t, off)                                                                                      \
    do {                                                                                                             \
        uint64_t rem_ = (t);                                                                                         \
        EIN_FOR_OPS(i) off[i] = 0;                                                                                   \
        for (int d_ = no - 1; d_ >= 0; d_--) {                                                                       \
            uint64_t sz_ = (uint64_t)osz[d_];                                                                        \
            int64_t idx_ = (int64_t)(rem_ % sz_);                                                                    \
            rem_ /= sz_;                                                                                             \
            EIN_FOR_OPS(i) off[i] += idx_ * EIN_OST(i, d_);                                                          \
        }                                                                                                            \
    } while (0)

/* One thread per output element; the summed labels by odometer, the last
 * (densest in operand 0) as a tight loop. */
template <int NMAX>
__global__ void __launch_bounds__(CU_BLOCK)
    ein_loop_out(const int64_t *tab, int words, void *dst, uint64_t total, uint64_t sumtotal)
{
    EIN_TABLE_PROLOGUE;
    MM_FOR (t, total) {
        int64_t off[NMAX];
        EIN_OUT_OFFSETS(t, off);
        double acc;
        if (ns == 0) {
            acc = 1;
            EIN_FOR_OPS(i) acc *= ein_ld(EIN_PTR(i), off[i], dt);
        } else {
            acc = 0;
            int64_t si[FT_EIN_NL], ist[NMAX];
            const int64_t inner = ssz[ns - 1];
            const uint64_t outer = sumtotal / (uint64_t)inner;
            for (int d = 0; d < ns - 1; d++)
                si[d] = 0;
            EIN_FOR_OPS(i) ist[i] = EIN_SST(i, ns - 1);
            for (uint64_t s = 0; s < outer; s++) {
                for (int64_t j = 0; j < inner; j++) {
                    double p = 1;
                    EIN_FOR_OPS(i) p *= ein_ld(EIN_PTR(i), off[i] + j * ist[i], dt);
                    acc += p;
                }
                for (int d = ns - 2; d >= 0; d--) {
                    if (++si[d] < ssz[d]) {
                        EIN_FOR_OPS(i) off[i] += EIN_SST(i, d);
                        break;
                    }
                    si[d] = 0;
                    EIN_FOR_OPS(i) off[i] -= (ssz[d] - 1) * EIN_SST(i, d);
                }
            }
        }
        ein_st(dst, (int64_t)t, dt, acc);
    }
}

/* Sum of v over the block (valid in thread 0); red holds one value per warp. */
__device__ __forceinline__ double ein_block_sum(double v, double *red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0)
        red[wid] = v;
    __syncthreads();
    v = 0;
    if (wid == 0) {
        v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0.0;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
    }
    __syncthreads();
    return v;
}

/* Few outputs with long sums: block x takes output elements, the gridDim.y
 * blocks of a column split the summed space; with one split the block
 * stores its result, otherwise a partial per split goes to part. */
template <int NMAX>
__global__ void __launch_bounds__(CU_BLOCK)
    ein_loop_split(const int64_t *tab, int words, void *dst, double *part, uint64_t total, uint64_t sumtotal)
{
    __shared__ double red[CU_BLOCK / 32];
    EIN_TABLE_PROLOGUE;
    const unsigned splits = gridDim.y;
    const int narrow = sumtotal <= 0xffffffffull; /* every index then fits 32 bits: cheaper divisions */
    for (uint64_t o = blockIdx.x; o < total; o += gridDim.x) {
        int64_t off[NMAX];
        EIN_OUT_OFFSETS(o, off);
        double acc = 0;
        const uint64_t step = (uint64_t)blockDim.x * splits;
        for (uint64_t s = (uint64_t)blockIdx.y * blockDim.x + threadIdx.x; s < sumtotal; s += step) {
            int64_t so[NMAX];
            EIN_FOR_OPS(i) so[i] = off[i];
            uint64_t rem = s;
            for (int d = ns - 1; d >= 0; d--) {
                int64_t idx;
                if (narrow) {
                    uint32_t r32 = (uint32_t)rem, z = (uint32_t)ssz[d];
                    idx = r32 % z;
                    rem = r32 / z;
                } else {
                    idx = (int64_t)(rem % (uint64_t)ssz[d]);
                    rem /= (uint64_t)ssz[d];
                }
                EIN_FOR_OPS(i) so[i] += idx * EIN_SST(i, d);
            }
            double p = 1;
            EIN_FOR_OPS(i) p *= ein_ld(EIN_PTR(i), so[i], dt);
            acc += p;
        }
        acc = ein_block_sum(acc, red);
        if (threadIdx.x == 0) {
            if (splits == 1)
                ein_st(dst, (int64_t)o, dt, acc);
            else
                part[o * splits + blockIdx.y] = acc;
        }
    }
}

/* Adds each output's partials in a fixed order (deterministic results). */
__global__ void ein_finish(const double *part, void *dst, int dt, uint64_t total, unsigned splits)
{
    MM_FOR (o, total) {
        double s = 0;
        for (unsigned y = 0; y < splits; y++)
            s += part[o * splits + y];
        ein_st(dst, (int64_t)o, dt, s);
    }
}

/* ---- strided copies (einsum's permutations) ---- */

/* dst (contiguous over dims[0..r)) = src read at strides st. */
typedef struct {
    int r;
    int64_t dims[FT_MAX_RANK], st[FT_MAX_RANK];
} pm_args;

template <class E, class I>
__device__ __forceinline__ void pm_naive_run(const E *src, E *dst, const pm_args &a, I total)
{
    for (I t = (I)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (I)gridDim.x * blockDim.x) {
        I rem = t;
        int64_t off = 0;
        for (int d = a.r - 1; d > 0; d--) {
            I sz = (I)a.dims[d], idx = rem % sz;
            rem /= sz;
            off += (int64_t)idx * a.st[d];
        }
        dst[t] = src[off + (int64_t)rem * a.st[0]];
    }
}

template <class E> __global__ void __launch_bounds__(CU_BLOCK) pm_naive(const E *src, E *dst, pm_args a, uint64_t total)
{
    /* 32-bit index arithmetic while t + the grid stride cannot wrap. */
    if (total < (1ull << 31))
        pm_naive_run<E, uint32_t>(src, dst, a, (uint32_t)total);
    else
        pm_naive_run<E, uint64_t>(src, dst, a, total);
}

/* A transpose through shared memory: p is the destination's last dim (unit
 * stride there), q a dim the source is densest along; reads go along q and
 * writes along p, both coalesced. The remaining dims index the tiles. */
typedef struct {
    int nr;
    int64_t rd[FT_MAX_RANK], rs[FT_MAX_RANK], rt[FT_MAX_RANK]; /* other dims: size, source and destination stride */
    int64_t P, Q, sp, sq, dq;
    uint64_t tp, tq, tiles; /* tiles along p, along q, in all */
} pt_args;

template <class E> __global__ void __launch_bounds__(256) pm_tiled(const E *src, E *dst, pt_args a)
{
    __shared__ E tile[32][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (uint64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
        uint64_t rest = t / a.tp, r = rest / a.tq;
        int64_t p0 = (int64_t)(t - rest * a.tp) * 32, q0 = (int64_t)(rest - r * a.tq) * 32;
        int64_t so = 0, dof = 0;
        for (int d = a.nr - 1; d >= 0; d--) {
            int64_t idx = (int64_t)(r % (uint64_t)a.rd[d]);
            r /= (uint64_t)a.rd[d];
            so += idx * a.rs[d];
            dof += idx * a.rt[d];
        }
        for (int j = 0; j < 32; j += 8) {
            int64_t p = p0 + ty + j, q = q0 + tx;
            if (p < a.P && q < a.Q)
                tile[ty + j][tx] = src[so + q * a.sq + p * a.sp];
        }
        __syncthreads();
        for (int j = 0; j < 32; j += 8) {
            int64_t q = q0 + ty + j, p = p0 + tx;
            if (p < a.P && q < a.Q)
                dst[dof + q * a.dq + p] = tile[tx][ty + j];
        }
        __syncthreads();
    }
}

/* dst (contiguous over dims[0..r), r <= FT_MAX_RANK, dims already merged)
 * = src at strides st, elements of es bytes. */
static ft_status pm_launch(ft_kctx *k, const ft_node *n, size_t es, const void *src, void *dst, int r,
                           const int64_t *dims, const int64_t *st)
{
    cudaStream_t s = k->be->stream;
    uint64_t total = 1;
    for (int d = 0; d < r; d++)
        total *= (uint64_t)dims[d];
    if (r == 0 || (r == 1 && st[0] == 1)) {
        CU_TRY(k, n, cudaMemcpyAsync(dst, src, (size_t)total * es, cudaMemcpyDeviceToDevice, s));
        return FT_OK;
    }
    int q = -1;
    if (r >= 2 && st[r - 1] != 1 && dims[r - 1] >= 16)
        for (int d = 0; d < r - 1; d++)
            if (st[d] != 0 && dims[d] >= 16 && (q < 0 || st[d] < st[q]))
                q = d;
    if (q >= 0 && st[q] < st[r - 1]) {
        pt_args a;
        memset(&a, 0, sizeof a);
        int64_t dst_st[FT_MAX_RANK], acc = 1;
        for (int d = r - 1; d >= 0; d--)
            dst_st[d] = acc, acc *= dims[d];
        for (int d = 0; d < r - 1; d++)
            if (d != q) {
                a.rd[a.nr] = dims[d];
                a.rs[a.nr] = st[d];
                a.rt[a.nr++] = dst_st[d];
            }
        a.P = dims[r - 1], a.sp = st[r - 1];
        a.Q = dims[q], a.sq = st[q], a.dq = dst_st[q];
        a.tp = (uint64_t)(a.P + 31) / 32;
        a.tq = (uint64_t)(a.Q + 31) / 32;
        a.tiles = total / (uint64_t)(a.P * a.Q) * a.tp * a.tq;
        uint64_t cap = (uint64_t)k->be->sm_count * 16;
        unsigned grid = (unsigned)(a.tiles < cap ? a.tiles : cap);
        CU_ELEM_DISPATCH(es, E, pm_tiled<E><<<grid, dim3(32, 8), 0, s>>>((const E *)src, (E *)dst, a));
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    pm_args a;
    memset(&a, 0, sizeof a);
    a.r = r;
    for (int d = 0; d < r; d++)
        a.dims[d] = dims[d], a.st[d] = st[d];
    CU_ELEM_DISPATCH(es, E, pm_naive<E><<<cu_grid(k->be, total), CU_BLOCK, 0, s>>>((const E *)src, (E *)dst, a, total));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* ---- the plan ---- */

/* Workspace areas: two intermediates (ping-pong), packed A, B and C, the
 * loop table and the split partials. */
enum { EB_INTER0, EB_INTER1, EB_PA, EB_PB, EB_PC, EB_TAB, EB_PART, EB_COUNT };

/* The whole evaluation runs twice: a sizing pass (dry) that launches nothing
 * and records the largest request per workspace area, then the real pass
 * on one workspace of their sum. Both take the same decisions, which depend
 * on shapes and strides only. */
typedef struct {
    ft_kctx *k;
    const ft_node *n;
    ft_dtype dt;
    size_t es;
    int64_t size[FT_EIN_NL];
    int dry;
    uint64_t need[EB_COUNT];
    char *buf[EB_COUNT];
} ein_ctx;

static void *ein_buf(ein_ctx *e, int which, uint64_t bytes)
{
    if (e->dry) {
        if (bytes > e->need[which])
            e->need[which] = bytes;
        return NULL;
    }
    return e->buf[which];
}

/* The labels lab[0..nl) (outermost first) as one dim of strides st: 1 with
 * its stride when each label's stride is the next one's times its size. An
 * empty group is a dim of size 1 (stride 0). */
static int group_of(const ein_ctx *e, const int64_t *st, const int8_t *lab, int nl, int64_t *stride)
{
    for (int i = 0; i + 1 < nl; i++)
        if (st[lab[i]] != st[lab[i + 1]] * e->size[lab[i + 1]])
            return 0;
    *stride = nl ? st[lab[nl - 1]] : 0;
    return 1;
}

/* dst (contiguous, labels olab in that order) = sum over the labels slab of
 * the product of the operands, in the generic kernel. */
static ft_status ein_loop(ein_ctx *e, int nops, const ft_ein_op *ops, const int8_t *olab, int no, const int8_t *slab_in,
                          int ns, void *dst)
{
    ft_kctx *k = e->k;
    const ft_node *n = e->n;
    uint64_t total = ft_ein_numel(e->size, olab, no), sumtotal = ft_ein_numel(e->size, slab_in, ns);
    if (total == 0)
        return FT_OK;
    /* The innermost summed label is the one operand 0 is densest along. */
    int8_t slab[FT_EIN_NL];
    memcpy(slab, slab_in, (size_t)ns);
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0; j--) {
            int64_t a = ops[0].has >> slab[j] & 1 ? ops[0].st[slab[j]] : 0;
            int64_t b = ops[0].has >> slab[j - 1] & 1 ? ops[0].st[slab[j - 1]] : 0;
            if (a <= b)
                break;
            int8_t t = slab[j];
            slab[j] = slab[j - 1];
            slab[j - 1] = t;
        }
    int words = 4 + no + ns + nops * (1 + no + ns);
    /* Few outputs with long sums: split the sums over blocks (up to 4 blocks
     * per SM in all, at least 4 terms per thread). */
    unsigned splits = 0;
    uint64_t sms = (uint64_t)k->be->sm_count;
    if (ns > 0 && total < 2 * sms * CU_BLOCK && sumtotal >= 1024) {
        uint64_t want = (4 * sms + total - 1) / total, cap = sumtotal / (CU_BLOCK * 4);
        if (want > cap)
            want = cap;
        if (want > 65535)
            want = 65535;
        splits = want > 1 ? (unsigned)want : 1;
    }
    int64_t *tabdev = (int64_t *)ein_buf(e, EB_TAB, (uint64_t)words * 8);
    double *part = splits > 1 ? (double *)ein_buf(e, EB_PART, total * splits * 8) : NULL;
    if (e->dry)
        return FT_OK;
    int64_t tab[EIN_TAB_MAX];
    tab[0] = nops, tab[1] = no, tab[2] = ns, tab[3] = (int64_t)e->dt;
    int64_t *osz = tab + 4, *ssz = osz + no, *opt = ssz + ns;
    for (int d = 0; d < no; d++)
        osz[d] = e->size[olab[d]];
    for (int d = 0; d < ns; d++)
        ssz[d] = e->size[slab[d]];
    for (int i = 0; i < nops; i++) {
        int64_t *o = opt + i * (1 + no + ns);
        o[0] = (int64_t)(uintptr_t)ops[i].data;
        for (int d = 0; d < no; d++)
            o[1 + d] = ops[i].has >> olab[d] & 1 ? ops[i].st[olab[d]] : 0;
        for (int d = 0; d < ns; d++)
            o[1 + no + d] = ops[i].has >> slab[d] & 1 ? ops[i].st[slab[d]] : 0;
    }
    cudaStream_t s = k->be->stream;
    for (int w0 = 0; w0 < words; w0 += EIN_POKE) {
        ein_chunk c;
        int cnt = words - w0 < EIN_POKE ? words - w0 : EIN_POKE;
        memset(&c, 0, sizeof c);
        memcpy(c.v, tab + w0, (size_t)cnt * 8);
        ein_poke<<<1, EIN_POKE, 0, s>>>(tabdev + w0, c, cnt);
        CU_LAUNCHED(k, n);
    }
    size_t smem = (size_t)words * 8;
    if (!splits) {
        unsigned grid = cu_grid(k->be, total);
        if (nops <= 2)
            ein_loop_out<2><<<grid, CU_BLOCK, smem, s>>>(tabdev, words, dst, total, sumtotal);
        else
            ein_loop_out<FT_EIN_MAXOPS><<<grid, CU_BLOCK, smem, s>>>(tabdev, words, dst, total, sumtotal);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    dim3 grid((unsigned)total, splits); /* total < 2 * SMs * CU_BLOCK here */
    if (nops <= 2)
        ein_loop_split<2><<<grid, CU_BLOCK, smem, s>>>(tabdev, words, dst, part, total, sumtotal);
    else
        ein_loop_split<FT_EIN_MAXOPS><<<grid, CU_BLOCK, smem, s>>>(tabdev, words, dst, part, total, sumtotal);
    CU_LAUNCHED(k, n);
    if (splits > 1) {
        ein_finish<<<cu_grid(k->be, total), CU_BLOCK, 0, s>>>(part, dst, (int)e->dt, total, splits);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}

/* dst (contiguous, labels lab in that order) = op relabelled: a strided
 * copy with the dims that stay contiguous merged; past FT_MAX_RANK merged
 * dims (intermediates can carry many labels) the generic kernel. */
static ft_status ein_copy(ein_ctx *e, const ft_ein_op *op, const int8_t *lab, int nl, void *dst)
{
    int64_t dims[FT_EIN_NL], st[FT_EIN_NL];
    int r = 0;
    for (int i = 0; i < nl; i++) {
        int64_t d = e->size[lab[i]], s = op->has >> lab[i] & 1 ? op->st[lab[i]] : 0;
        if (r && st[r - 1] == s * d) {
            dims[r - 1] *= d;
            st[r - 1] = s;
        } else {
            dims[r] = d;
            st[r++] = s;
        }
    }
    if (r > FT_MAX_RANK)
        return ein_loop(e, 1, op, lab, nl, NULL, 0, dst);
    if (e->dry)
        return FT_OK;
    return pm_launch(e->k, e->n, e->es, op->data, dst, r, dims, st);
}

/* dst (contiguous, labels lab in that order) = op with the labels of the
 * mask sum summed away. */
static ft_status ein_pack(ein_ctx *e, const ft_ein_op *op, const int8_t *lab, int nl, uint64_t sum, void *dst)
{
    if (!sum)
        return ein_copy(e, op, lab, nl, dst);
    int8_t sl[FT_EIN_NL];
    int ns = ft_ein_mask_labels(sum, sl);
    return ein_loop(e, 1, op, lab, nl, sl, ns, dst);
}

#define EIN_TRY(x)                                                                                                   \
    do {                                                                                                             \
        ft_status st_ = (x);                                                                                         \
        if (st_)                                                                                                     \
            return st_;                                                                                              \
    } while (0)

/* op packed contiguous as [batch, x, y] (labels g->bl, then xl, then yl;
 * the labels of mask sum summed away) into buffer `which`: *p gets the data
 * and st the strides of x, y and the batch. */
static ft_status ein_pack_bxy(ein_ctx *e, int which, const ft_ein_op *op, const ft_ein_pair_plan *g, const int8_t *xl,
                              int nx, const int8_t *yl, int ny, uint64_t sum, uint64_t X, uint64_t Y, const void **p,
                              int64_t *st)
{
    int8_t seq[FT_EIN_NL];
    const int nb = g->nb;
    void *buf = ein_buf(e, which, g->BT * X * Y * e->es);
    memcpy(seq, g->bl, (size_t)nb), memcpy(seq + nb, xl, (size_t)nx), memcpy(seq + nb + nx, yl, (size_t)ny);
    EIN_TRY(ein_pack(e, op, seq, nb + nx + ny, sum, buf));
    *p = buf;
    st[0] = (int64_t)Y, st[1] = 1, st[2] = (int64_t)(X * Y);
    return FT_OK;
}

/* Contracts a and b keeping the labels of keep. With res, the result goes
 * to dst in the label order res (exactly the kept labels); otherwise into
 * the intermediate area `inter`, in an order chosen here and described by
 * *r. Labels: b in both and kept (batch), m / n in one and kept, k in both
 * and not kept (contracted), sa / sb in one only and not kept (summed while
 * packing). C[b,m,n] = A[b,m,k] B[b,k,n] in one batched product when that
 * is worth it, the generic kernel otherwise. */
static ft_status ein_pair(ein_ctx *e, const ft_ein_op *a, const ft_ein_op *b, uint64_t keep, const int8_t *res,
                          int nres, void *dst, ft_ein_op *r, int inter)
{
    ft_ein_pair_plan g;
    ft_ein_pair_labels(e->size, a, b, keep, res, nres, &g);
    const int8_t *bl = g.bl, *ml = g.ml, *nl = g.nl, *kl = g.kl, *cl = g.cl;
    const int nb = g.nb, nm = g.nm, nn = g.nn, nk = g.nk, nc = g.nc;
    const uint64_t mk = g.mk, sa = g.sa, sb = g.sb, BT = g.BT, M = g.M, N = g.N, K = g.K;
    size_t es = e->es;
    if (!res) {
        dst = ein_buf(e, inter, BT * M * N * es);
        res = cl, nres = nc;
        ft_ein_set_layout(e->size, r, dst, cl, nc);
    }
    /* The CPU's threshold: tiny or thin products run in the loop. */
    int use_gemm = ft_ein_gemm_worth(BT, M, N, K);
    if (!use_gemm) {
        ft_ein_op two[2] = {*a, *b};
        int8_t sum[FT_EIN_NL];
        int ns = ft_ein_mask_labels(mk | sa | sb, sum);
        return ein_loop(e, 2, two, res, nres, sum, ns, dst);
    }
    /* Each operand is read in place when its batch, row and column labels
     * each collapse to one stride cuBLAS accepts; otherwise packed. */
    int64_t dst_st[FT_EIN_NL], s = 1;
    memset(dst_st, 0, sizeof dst_st);
    for (int i = nres - 1; i >= 0; i--)
        dst_st[res[i]] = s, s *= e->size[res[i]];
    int64_t ast[3], bst[3], cst[3], ld;
    cublasOperation_t op;
    int c_direct = group_of(e, dst_st, ml, nm, &cst[0]) && group_of(e, dst_st, nl, nn, &cst[1]) &&
                   group_of(e, dst_st, bl, nb, &cst[2]) &&
                   (cm_plain((int64_t)N, (int64_t)M, cst[1], cst[0], &ld) ||
                    cm_plain((int64_t)M, (int64_t)N, cst[0], cst[1], &ld));
    int a_direct = !sa && group_of(e, a->st, ml, nm, &ast[0]) && group_of(e, a->st, kl, nk, &ast[1]) &&
                   group_of(e, a->st, bl, nb, &ast[2]) && cm_operand((int64_t)M, (int64_t)K, ast[0], ast[1], &op, &ld);
    int b_direct = !sb && group_of(e, b->st, kl, nk, &bst[0]) && group_of(e, b->st, nl, nn, &bst[1]) &&
                   group_of(e, b->st, bl, nb, &bst[2]) && cm_operand((int64_t)K, (int64_t)N, bst[0], bst[1], &op, &ld);
    const void *A = a->data, *B = b->data;
    void *C = dst;
    if (!a_direct)
        EIN_TRY(ein_pack_bxy(e, EB_PA, a, &g, ml, nm, kl, nk, sa, M, K, &A, ast));
    if (!b_direct)
        EIN_TRY(ein_pack_bxy(e, EB_PB, b, &g, kl, nk, nl, nn, sb, K, N, &B, bst));
    if (!c_direct) {
        C = ein_buf(e, EB_PC, BT * M * N * es);
        cst[0] = (int64_t)N, cst[1] = 1, cst[2] = (int64_t)(M * N);
    }
    if (!e->dry) {
        mm_call c;
        if (!mm_plan((int64_t)BT, (int64_t)M, (int64_t)N, (int64_t)K, A, ast, B, bst, C, cst, &c))
            return mm_layout_err(e->k, e->n, (int64_t)M, (int64_t)N, (int64_t)K);
        EIN_TRY(mm_exec(e->k, e->n, e->dt, e->dt, &c, 1.0, 0.0, 0));
    }
    if (!c_direct) {
        ft_ein_op cv;
        ft_ein_set_layout(e->size, &cv, C, cl, nc);
        EIN_TRY(ein_copy(e, &cv, res, nres, dst));
    }
    return FT_OK;
}

/* One pass of the evaluation (see ein_ctx). */
static ft_status ein_run(ein_ctx *e, int nops, const ft_ein_op *ops, const uint64_t *need_later, uint64_t outm,
                         const int8_t *olab, int no, int pairwise, void *dst)
{
    if (!pairwise) {
        int8_t sl[FT_EIN_NL];
        int ns = ft_ein_mask_labels(need_later[0] & ~outm, sl);
        if (nops == 1 && ns == 0)
            return ein_copy(e, &ops[0], olab, no, dst);
        return ein_loop(e, nops, ops, olab, no, sl, ns, dst);
    }
    ft_ein_op acc = ops[0];
    for (int i = 1; i < nops; i++) {
        ft_ein_op r;
        if (i == nops - 1)
            return ein_pair(e, &acc, &ops[i], outm, olab, no, dst, NULL, 0);
        EIN_TRY(ein_pair(e, &acc, &ops[i], need_later[i + 1], NULL, 0, NULL, &r, EB_INTER0 + (i & 1)));
        acc = r;
    }
    return FT_OK;
}

} // namespace

CU_KFN(cu_einsum)
{
    int nops = n->n_in;
    uint64_t total = ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ein_ctx e;
    memset(&e, 0, sizeof e);
    e.k = k, e.n = n, e.dt = in[0].dtype, e.es = ft_dtype_size(in[0].dtype);
    const ft_shape *shapes[FT_EIN_MAXOPS];
    const void *data[FT_EIN_MAXOPS];
    ft_views_split(in, nops < FT_EIN_MAXOPS ? nops : FT_EIN_MAXOPS, shapes, data);
    int8_t olab_all[FT_MAX_RANK];
    int no_all;
    char msg[1024];
    ft_ein_op *ops = (ft_ein_op *)ft_calloc((size_t)nops, sizeof *ops);
    if (!ops)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory");
    if (ft_ein_views(&n->params.matmul.ein, nops, shapes, data, olab_all, &no_all, e.size, ops, msg,
                     sizeof msg)) {
        free(ops);
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "%s", msg);
    }
    /* Labels of size 1 carry no layout: they are left out everywhere. */
    for (int i = 0; i < nops; i++)
        for (int l = 0; l < FT_EIN_NL; l++)
            if (e.size[l] == 1) {
                ops[i].st[l] = 0;
                ops[i].has &= ~((uint64_t)1 << l);
            }
    int8_t olab[FT_MAX_RANK];
    int no = 0;
    for (int d = 0; d < no_all; d++)
        if (e.size[olab_all[d]] != 1)
            olab[no++] = olab_all[d];
    uint64_t need_later[FT_EIN_MAXOPS + 1];
    uint64_t outm = ft_ein_need_later(nops, ops, olab, no, need_later);
    ft_status st = FT_OK;
    /* A summed label of size 0: every sum is empty. */
    int empty = 0;
    for (int l = 0; l < FT_EIN_NL; l++)
        empty |= (need_later[0] >> l & 1) && e.size[l] == 0;
    if (empty) {
        free(ops);
        CU_TRY(k, n, cudaMemsetAsync(out[0].data, 0, (size_t)total * e.es, k->be->stream));
        return FT_OK;
    }
    int pairwise = ft_ein_pairwise(e.size, nops, shapes, ops, need_later, total);
    for (int pass = 0; pass < 2 && !st; pass++) {
        e.dry = pass == 0;
        if (!e.dry) {
            size_t off[EB_COUNT], sum = 0;
            for (int b = 0; b < EB_COUNT; b++) {
                off[b] = sum;
                sum += ((size_t)e.need[b] + 255) & ~(size_t)255;
            }
            void *ws = NULL;
            if (sum && (st = cu_workspace(k, n, sum, &ws)))
                break;
            for (int b = 0; b < EB_COUNT; b++)
                e.buf[b] = (char *)ws + off[b];
        }
        st = ein_run(&e, nops, ops, need_later, outm, olab, no, pairwise, out[0].data);
    }
    free(ops);
    return st;
}
