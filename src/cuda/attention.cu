/* CUDA scaled dot-product attention and dropout.
 *
 * Attention follows the CPU reference (src/cpu/attention.c): scores
 * s = scale * q.k, soft capped when softcap is given (cap tanh(s / cap)),
 * then the mask (bool: false -> -inf; additive: added, -inf masks), and
 * -inf for the keys query i may not see: with its position p = i + offset
 * (offset: the past length P, kv_len[b] - S with kv_len, else 0), keys past
 * p under causal, outside [p - window_left, p + window_right], at or past
 * kv_len[b] or past a shorter mask's last dim; then an online softmax over
 * tiles of keys: the running row maximum
 * and sum are rescaled when the maximum grows, so no exp ever sees a positive
 * argument and long rows with large logits cannot overflow. A row whose keys
 * are all masked keeps max -inf and sum 0 and is written as zeros; a NaN score
 * poisons the sum so that NaN inputs never turn into zeros. Scores reach
 * global memory only as output 3 (attention_scores.cu, a kernel of its own).
 *
 * Three kernels:
 *   attn_tc    f16/bf16, D and Dv <= 256: tensor cores through mma.sync
 *              m16n8k16 (f32 accumulation). A block of 4 warps takes 64
 *              queries of one (batch, head), each warp 16 of them; K and V
 *              tiles are double-buffered in shared memory with cp.async; the
 *              score fragments stay in registers, are turned into the A
 *              operand of P V in place, and the output accumulates in
 *              registers. P is split into a head and a tail of the 16-bit
 *              type (two products), so its rounding does not cost more
 *              than the output's own rounding: P in f16 alone (11 bits)
 *              put errors of 1e-4 into outputs near 0.01 whose terms
 *              cancel, about ten times the output's own rounding.
 *   attn_simt  f32 (D, Dv <= 256) and f64 (<= 128) on CUDA cores: 4 warps,
 *              32 queries, 8 per warp; lane j scores key j of a 32-key tile;
 *              lane c accumulates output columns c, c+32, ...
 *   attn_rows  everything else (larger heads): one block per query row and
 *              chunk of 512 output columns, keys 32 at a time.
 *
 * Dropout reproduces the CPU's mask bit for bit (src/cpu/misc.c: element i
 * is kept iff the 53-bit uniform from Philox-4x32-10 with counter i and key
 * seed is >= ratio), compared here as integers: u53 >= ceil(ratio * 2^53),
 * which is the same test since both sides scale exactly by 2^53. */
#include "attention.cuh"

#include <limits.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------- shared-memory tile loads */

__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared without a register round trip; ok == false
 * writes 16 zero bytes and reads nothing. */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool ok)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(ok ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Rows [row0, row0 + ROWS) of the row-major [nrows, cols] matrix g into
 * sm[r * lds + c] for c < cols_pad (a multiple of the 16-byte chunk), zeros
 * outside the matrix. vec: g is 16-byte aligned and cols a multiple of the
 * chunk, so whole chunks go through cp.async; otherwise plain loads. */
template <class T, int ROWS, int NT>
__device__ __forceinline__ void load_tile(T *sm, int lds, const T *g, int64_t row0, int64_t nrows, int64_t cols,
                                          int cols_pad, int vec)
{
    constexpr int CH = 16 / sizeof(T);
    const int cpr = cols_pad / CH;
    for (int idx = threadIdx.x; idx < ROWS * cpr; idx += NT) {
        int r = idx / cpr, c = (idx - r * cpr) * CH;
        int64_t row = row0 + r;
        T *dst = sm + r * lds + c;
        if (vec) {
            bool ok = row < nrows && c < cols;
            cp_async16(dst, ok ? (const void *)(g + row * cols + c) : (const void *)g, ok);
        } else {
#pragma unroll
            for (int e = 0; e < CH; e++) {
                int64_t col = c + e;
                dst[e] = (row < nrows && col < cols) ? g[row * cols + col] : cu_from_f<T>(0.0f);
            }
        }
    }
}

/* ------------------------------------------------- tensor-core kernel (f16/bf16) */

#define TC_BQ 64  /* queries per block: 16 per warp */
#define TC_NT 128 /* threads per block */

template <int DMAX> struct tc_cfg {
    static constexpr int BK = DMAX >= 256 ? 32 : 64; /* keys per tile: bounded by registers at DMAX 256 */
    static constexpr int LD = DMAX + 8;              /* halves per shared row: conflict-free ldmatrix */
    static constexpr size_t SMEM = (size_t)(TC_BQ + 4 * BK) * LD * 2; /* Q + 2 x (K, V) */
};

template <class T> struct tc_is_bf16 { static constexpr bool value = false; };
template <> struct tc_is_bf16<__nv_bfloat16> { static constexpr bool value = true; };

template <bool BF> __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1);
template <> __device__ __forceinline__ void mma16816<false>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <> __device__ __forceinline__ void mma16816<true>(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Four 8x8 b16 matrices; lane l gives the address of row l % 8 of matrix l / 8
 * and receives, of each matrix, row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1
 * (transposed: row and column swapped). */
__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p))
                 : "memory");
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p))
                 : "memory");
}

/* Two floats rounded into one 32-bit register of the 16-bit type (lo in the low half). */
template <bool BF> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<false>(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, 4);
    return u;
}
template <> __device__ __forceinline__ uint32_t pack2<true>(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, 4);
    return u;
}
/* What pack2<BF> lost to rounding, itself rounded to the 16-bit type. */
template <bool BF> __device__ __forceinline__ uint32_t pack2_tail(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2_tail<false>(float lo, float hi)
{
    float2 f = __half22float2(__floats2half2_rn(lo, hi));
    return pack2<false>(lo - f.x, hi - f.y);
}
template <> __device__ __forceinline__ uint32_t pack2_tail<true>(float lo, float hi)
{
    float2 f = __bfloat1622float2(__floats2bfloat162_rn(lo, hi));
    return pack2<true>(lo - f.x, hi - f.y);
}

/* Work item `item` of the flash kernels (attn_tc, attn_simt): batch b, head
 * h and the query block of BQ queries from q0, the latest blocks first (under
 * causal masking they have the most keys); batch b's span and the keys
 * [kbeg, kend) some query of the block may see; the element offsets of the
 * head's Q rows and its kv head's K and V rows, and the mask's base. */
struct flash_item {
    int64_t b, h, q0, kbeg, kend, qoff, koff, voff, mbase;
    kv_span sp;
};
__device__ __forceinline__ flash_item flash_item_of(const attn_args &a, int64_t item, int64_t BQ)
{
    flash_item f;
    const int64_t bh = item / a.nqb, qb = a.nqb - 1 - item % a.nqb;
    f.b = bh / a.H, f.h = bh % a.H;
    const int64_t hk = f.h / a.grp;
    f.q0 = qb * BQ;
    const int64_t qend = min64(f.q0 + BQ, a.S);
    f.sp = batch_span(a, f.b);
    int64_t unused;
    key_range(a, f.sp, f.q0, f.kbeg, unused);
    key_range(a, f.sp, qend - 1, unused, f.kend);
    f.qoff = (f.b * a.H + f.h) * a.S * a.D;
    f.koff = (f.b * a.Hk + hk) * a.T * a.D;
    f.voff = (f.b * a.Hk + hk) * a.T * a.Dv;
    f.mbase = f.b * a.ms[0] + f.h * a.ms[1];
    return f;
}

template <class T, int DMAX> __global__ void __launch_bounds__(TC_NT) attn_tc(attn_args a)
{
    constexpr bool BF = tc_is_bf16<T>::value;
    constexpr int BK = tc_cfg<DMAX>::BK, LD = tc_cfg<DMAX>::LD, NS = BK / 8, NO = DMAX / 8;
    const float NEG_INF = -INFINITY, L2E = 1.4426950408889634f;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = (T *)smem_raw;     /* [TC_BQ][LD]; warp w reads rows 16w..16w+15 only */
    T *Ks = Qs + TC_BQ * LD;   /* [2][BK][LD] */
    T *Vs = Ks + 2 * BK * LD;  /* [2][BK][LD] */
    const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
    const T *Q = (const T *)a.q, *K = (const T *)a.k, *V = (const T *)a.v;
    T *O = (T *)a.o;
    const int Dp = (int)((a.D + 15) & ~(int64_t)15), Dvp = (int)((a.Dv + 15) & ~(int64_t)15);
    const float scale = a.scale_f;

    for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
        const flash_item fi = flash_item_of(a, item, TC_BQ);
        const int64_t b = fi.b, h = fi.h, q0 = fi.q0, kbeg = fi.kbeg, kend = fi.kend, mbase = fi.mbase;
        const kv_span sp = fi.sp;
        int64_t ntiles = kend > kbeg ? (kend - kbeg + BK - 1) / BK : 0;
        const T *Qg = Q + fi.qoff, *Kg = K + fi.koff, *Vg = V + fi.voff;
        const int64_t qi0 = q0 + w * 16 + g, qi1 = qi0 + 8;

        __syncthreads(); /* the previous item is done with every buffer */
        load_tile<T, TC_BQ, TC_NT>(Qs, LD, Qg, q0, a.S, a.D, Dp, a.vec_qk);
        if (ntiles > 0) {
            load_tile<T, BK, TC_NT>(Ks, LD, Kg, kbeg, a.T, a.D, Dp, a.vec_qk);
            load_tile<T, BK, TC_NT>(Vs, LD, Vg, kbeg, a.T, a.Dv, Dvp, a.vec_v);
        }
        cp_async_commit();

        float o[NO][4];
#pragma unroll
        for (int i = 0; i < NO; i++)
            o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
        float m0 = NEG_INF, m1 = NEG_INF, l0 = 0.0f, l1 = 0.0f; /* rows g and g + 8 of the warp */

        for (int64_t jt = 0; jt < ntiles; jt++) {
            const int buf = (int)(jt & 1);
            if (jt + 1 < ntiles) {
                load_tile<T, BK, TC_NT>(Ks + (buf ^ 1) * BK * LD, LD, Kg, kbeg + (jt + 1) * BK, a.T, a.D, Dp,
                                        a.vec_qk);
                load_tile<T, BK, TC_NT>(Vs + (buf ^ 1) * BK * LD, LD, Vg, kbeg + (jt + 1) * BK, a.T, a.Dv, Dvp,
                                        a.vec_v);
                cp_async_commit();
                cp_async_wait<1>();
            } else {
                cp_async_wait<0>();
            }
            __syncthreads();
            const T *Kb = Ks + buf * BK * LD, *Vb = Vs + buf * BK * LD;

            /* S = Q K^T: A from the warp's 16 query rows, B from key rows
             * (K row-major is B column-major). */
            float s[NS][4];
#pragma unroll
            for (int i = 0; i < NS; i++)
                s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
            for (int kk = 0; kk < Dp; kk += 16) {
                uint32_t qa[4];
                ldsm_x4(qa, Qs + (w * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LD + kk + (lane >> 4) * 8);
#pragma unroll
                for (int np = 0; np < BK / 16; np++) {
                    uint32_t kf[4];
                    ldsm_x4(kf, Kb + (np * 16 + (lane >> 4) * 8 + (lane & 7)) * LD + kk + ((lane >> 3) & 1) * 8);
                    mma16816<BF>(s[2 * np], qa, kf[0], kf[1]);
                    mma16816<BF>(s[2 * np + 1], qa, kf[2], kf[3]);
                }
            }

            /* Fragment element e of n-tile nt: row g (+8 for e >= 2), key nt*8 + 2 t4 + (e & 1). */
            const int64_t k0 = kbeg + jt * BK;
            float mx0 = NEG_INF, mx1 = NEG_INF;
#pragma unroll
            for (int nt = 0; nt < NS; nt++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    int64_t qi = (e & 2) ? qi1 : qi0;
                    int64_t kj = k0 + nt * 8 + 2 * t4 + (e & 1);
                    float x = tile_score<T, float>(a, sp, mbase, qi, kj, s[nt][e] * scale);
                    s[nt][e] = x;
                    if (e & 2)
                        mx1 = fmaxf(mx1, x);
                    else
                        mx0 = fmaxf(mx0, x);
                }
            }
            /* a row lives in the 4 lanes of a quad */
            mx0 = fmaxf(mx0, __shfl_xor_sync(FULL_MASK, mx0, 1));
            mx0 = fmaxf(mx0, __shfl_xor_sync(FULL_MASK, mx0, 2));
            mx1 = fmaxf(mx1, __shfl_xor_sync(FULL_MASK, mx1, 1));
            mx1 = fmaxf(mx1, __shfl_xor_sync(FULL_MASK, mx1, 2));
            float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
            /* a row with no visible key yet subtracts 0: masked scores give
             * exp(-inf) = 0, NaN scores stay NaN */
            float mu0 = mn0 == NEG_INF ? 0.0f : mn0, mu1 = mn1 == NEG_INF ? 0.0f : mn1;
            float c0 = exp2f((m0 - mu0) * L2E), c1 = exp2f((m1 - mu1) * L2E);
            m0 = mn0;
            m1 = mn1;
            float ls0 = 0.0f, ls1 = 0.0f;
#pragma unroll
            for (int nt = 0; nt < NS; nt++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float p = exp2f((s[nt][e] - ((e & 2) ? mu1 : mu0)) * L2E);
                    s[nt][e] = p;
                    if (e & 2)
                        ls1 += p;
                    else
                        ls0 += p;
                }
            }
            l0 = l0 * c0 + ls0;
            l1 = l1 * c1 + ls1;
#pragma unroll
            for (int i = 0; i < NO; i++) {
                o[i][0] *= c0;
                o[i][1] *= c0;
                o[i][2] *= c1;
                o[i][3] *= c1;
            }

            /* O += P V. The accumulator layout of n-tiles 2kb and 2kb+1 is
             * the A layout of keys 16kb..16kb+15; V row-major is read
             * transposed into the B layout. */
#pragma unroll
            for (int kb = 0; kb < BK / 16; kb++) {
                uint32_t pa[4], pt[4];
                pa[0] = pack2<BF>(s[2 * kb][0], s[2 * kb][1]);
                pa[1] = pack2<BF>(s[2 * kb][2], s[2 * kb][3]);
                pa[2] = pack2<BF>(s[2 * kb + 1][0], s[2 * kb + 1][1]);
                pa[3] = pack2<BF>(s[2 * kb + 1][2], s[2 * kb + 1][3]);
                pt[0] = pack2_tail<BF>(s[2 * kb][0], s[2 * kb][1]);
                pt[1] = pack2_tail<BF>(s[2 * kb][2], s[2 * kb][3]);
                pt[2] = pack2_tail<BF>(s[2 * kb + 1][0], s[2 * kb + 1][1]);
                pt[3] = pack2_tail<BF>(s[2 * kb + 1][2], s[2 * kb + 1][3]);
#pragma unroll
                for (int np = 0; np < DMAX / 16; np++) {
                    if (np * 16 < Dvp) {
                        uint32_t vf[4];
                        ldsm_x4_trans(vf, Vb + (kb * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LD + np * 16 +
                                              (lane >> 4) * 8);
                        mma16816<BF>(o[2 * np], pa, vf[0], vf[1]);
                        mma16816<BF>(o[2 * np + 1], pa, vf[2], vf[3]);
                        mma16816<BF>(o[2 * np], pt, vf[0], vf[1]);
                        mma16816<BF>(o[2 * np + 1], pt, vf[2], vf[3]);
                    }
                }
            }
            __syncthreads(); /* buffer buf is refilled two tiles on */
        }
        cp_async_wait<0>();
        __syncthreads(); /* every copy into Qs has landed before it holds the output */

        l0 += __shfl_xor_sync(FULL_MASK, l0, 1);
        l0 += __shfl_xor_sync(FULL_MASK, l0, 2);
        l1 += __shfl_xor_sync(FULL_MASK, l1, 1);
        l1 += __shfl_xor_sync(FULL_MASK, l1, 2);
        /* every key masked: zeros, even where v holds inf or NaN */
        const bool z0 = l0 == 0.0f, z1 = l1 == 0.0f;
        const float i0 = 1.0f / l0, i1 = 1.0f / l1;
        T *Ow = Qs + w * 16 * LD; /* the warp's own query rows stage its output */
#pragma unroll
        for (int nt = 0; nt < NO; nt++) {
            if (nt * 8 < Dvp) {
                int col = nt * 8 + 2 * t4;
                uint32_t r0 = pack2<BF>(z0 ? 0.0f : o[nt][0] * i0, z0 ? 0.0f : o[nt][1] * i0);
                uint32_t r1 = pack2<BF>(z1 ? 0.0f : o[nt][2] * i1, z1 ? 0.0f : o[nt][3] * i1);
                *(uint32_t *)(Ow + g * LD + col) = r0;
                *(uint32_t *)(Ow + (g + 8) * LD + col) = r1;
            }
        }
        __syncwarp();
        const int cpr = Dvp / 8;
        for (int idx = lane; idx < 16 * cpr; idx += 32) {
            int r = idx / cpr, c = (idx - r * cpr) * 8;
            int64_t qi = q0 + w * 16 + r;
            if (qi >= a.S || c >= a.Dv)
                continue;
            T *dst = O + ((b * a.H + h) * a.S + qi) * a.Dv + c;
            const T *src = Ow + r * LD + c;
            if (a.vec_o) {
                *(uint4 *)dst = *(const uint4 *)src;
            } else {
                for (int e = 0; e < 8 && c + e < a.Dv; e++)
                    dst[e] = src[e];
            }
        }
    }
}

/* ------------------------------------------------- CUDA-core kernel (f32, f64) */

#define SM_BQ 32  /* queries per block */
#define SM_BK 32  /* keys per tile: one per lane */
#define SM_R 8    /* queries per warp */
#define SM_NT 128

template <class T> struct vec16;
template <> struct vec16<float> {
    typedef float4 type;
    static __device__ __forceinline__ float dot(float4 a, float4 b, float acc)
    {
        return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
    }
    static __device__ __forceinline__ float get(float4 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
};
template <> struct vec16<double> {
    typedef double2 type;
    static __device__ __forceinline__ double dot(double2 a, double2 b, double acc)
    {
        return fma(a.y, b.y, fma(a.x, b.x, acc));
    }
    static __device__ __forceinline__ double get(double2 v, int i) { return i == 0 ? v.x : v.y; }
};

template <class T, int DMAX> struct sm_cfg {
    static constexpr int CH = 16 / sizeof(T);
    static constexpr int LDK = DMAX + CH; /* an odd number of 16-byte units: conflict-free row reads */
    static constexpr int LDV = DMAX;
    static constexpr size_t SMEM = ((size_t)(SM_BQ + SM_BK) * LDK + (size_t)SM_BK * LDV + 4 * SM_R * SM_BK) * sizeof(T);
};

template <class T, int DMAX> __global__ void __launch_bounds__(SM_NT) attn_simt(attn_args a)
{
    typedef vec16<T> VT;
    typedef typename VT::type V4;
    constexpr int CH = sm_cfg<T, DMAX>::CH, LDK = sm_cfg<T, DMAX>::LDK, LDV = sm_cfg<T, DMAX>::LDV, NV = DMAX / 32;
    const T NEG_INF = (T)-INFINITY;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *Qs = (T *)smem_raw;       /* [SM_BQ][LDK] */
    T *Ks = Qs + SM_BQ * LDK;    /* [SM_BK][LDK] */
    T *Vs = Ks + SM_BK * LDK;    /* [SM_BK][LDV] */
    T *Ps = Vs + SM_BK * LDV;    /* [4 warps][SM_R][SM_BK] */
    const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31;
    const T *Q = (const T *)a.q, *K = (const T *)a.k, *V = (const T *)a.v;
    T *O = (T *)a.o;
    const int Dp = (int)((a.D + CH - 1) / CH * CH);
    const int nvi = (int)((a.Dv + 31) / 32);
    const int Dvp = nvi * 32; /* <= DMAX: V columns up to here are zero-filled */
    const T scale = pick_scale<T>(a);
    T *Pw = Ps + w * SM_R * SM_BK;

    for (int64_t item = blockIdx.x; item < a.items; item += gridDim.x) {
        const flash_item fi = flash_item_of(a, item, SM_BQ);
        const int64_t b = fi.b, h = fi.h, q0 = fi.q0, kbeg = fi.kbeg, kend = fi.kend, mbase = fi.mbase;
        const kv_span sp = fi.sp;
        const T *Qg = Q + fi.qoff, *Kg = K + fi.koff, *Vg = V + fi.voff;

        T o[SM_R][NV], m[SM_R], l[SM_R];
#pragma unroll
        for (int r = 0; r < SM_R; r++) {
            m[r] = NEG_INF;
            l[r] = 0;
#pragma unroll
            for (int i = 0; i < NV; i++)
                o[r][i] = 0;
        }

        __syncthreads();
        load_tile<T, SM_BQ, SM_NT>(Qs, LDK, Qg, q0, a.S, a.D, Dp, a.vec_qk);
        cp_async_commit(); /* its own group: waited for below even when there is no key */
        for (int64_t k0 = kbeg; k0 < kend; k0 += SM_BK) {
            if (k0 > kbeg)
                __syncthreads(); /* everyone is done with the previous tile */
            load_tile<T, SM_BK, SM_NT>(Ks, LDK, Kg, k0, a.T, a.D, Dp, a.vec_qk);
            load_tile<T, SM_BK, SM_NT>(Vs, LDV, Vg, k0, a.T, a.Dv, Dvp, a.vec_v);
            cp_async_commit();
            cp_async_wait<0>();
            __syncthreads();

            T acc[SM_R];
#pragma unroll
            for (int r = 0; r < SM_R; r++)
                acc[r] = 0;
            const T *kr = Ks + lane * LDK;
            for (int d = 0; d < Dp; d += CH) {
                V4 kv = *(const V4 *)(kr + d);
#pragma unroll
                for (int r = 0; r < SM_R; r++)
                    acc[r] = VT::dot(*(const V4 *)(Qs + (w * SM_R + r) * LDK + d), kv, acc[r]);
            }
            const int64_t kj = k0 + lane;
#pragma unroll
            for (int r = 0; r < SM_R; r++) {
                int64_t qi = q0 + w * SM_R + r;
                T x = tile_score<T, T>(a, sp, mbase, qi, kj, (T)(acc[r] * scale));
                T mn = amax(m[r], warp_max(x));
                T mu = mn == NEG_INF ? (T)0 : mn;
                T corr = aexp(m[r] - mu);
                m[r] = mn;
                T p = aexp(x - mu);
                l[r] = l[r] * corr + p; /* per-lane partial, summed at the end */
                Pw[r * SM_BK + lane] = p;
#pragma unroll
                for (int i = 0; i < NV; i++)
                    o[r][i] *= corr;
            }
            __syncwarp();

#pragma unroll 2
            for (int j = 0; j < SM_BK; j += CH) {
                T vv[CH][NV];
#pragma unroll
                for (int jj = 0; jj < CH; jj++)
#pragma unroll
                    for (int i = 0; i < NV; i++)
                        vv[jj][i] = i < nvi ? Vs[(j + jj) * LDV + lane + 32 * i] : (T)0;
#pragma unroll
                for (int r = 0; r < SM_R; r++) {
                    V4 pv = *(const V4 *)(Pw + r * SM_BK + j);
#pragma unroll
                    for (int jj = 0; jj < CH; jj++) {
                        T pj = VT::get(pv, jj);
#pragma unroll
                        for (int i = 0; i < NV; i++)
                            o[r][i] = fma(pj, vv[jj][i], o[r][i]);
                    }
                }
            }
        }
        cp_async_wait<0>(); /* Q copies, when there was no key tile to wait for them */

#pragma unroll
        for (int r = 0; r < SM_R; r++) {
            int64_t qi = q0 + w * SM_R + r;
            T lr = warp_sum(l[r]);
            if (qi >= a.S)
                continue;
            T inv = (T)1 / lr;
            T *dst = O + ((b * a.H + h) * a.S + qi) * a.Dv;
#pragma unroll
            for (int i = 0; i < NV; i++) {
                int64_t col = lane + 32 * i;
                if (i < nvi && col < a.Dv)
                    dst[col] = lr == 0 ? (T)0 : o[r][i] * inv;
            }
        }
    }
}

/* ------------------------------------------------- per-row kernel (any head size) */

#define RW_NT 128
#define RW_KC 32  /* keys per step */
#define RW_PER 4  /* output columns per thread per chunk */

template <class T> __global__ void __launch_bounds__(RW_NT) attn_rows(attn_args a, int64_t nrows, int64_t nchunks)
{
    typedef typename cu_acc<T>::type A;
    const A NEG_INF = (A)-INFINITY;
    __shared__ A sc[RW_KC];
    const int tid = threadIdx.x, w = tid >> 5, lane = tid & 31;
    const T *Q = (const T *)a.q, *K = (const T *)a.k, *V = (const T *)a.v;
    T *O = (T *)a.o;
    const A scale = pick_scale<A>(a);

    for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
        int64_t s = row % a.S, bh = row / a.S, h = bh % a.H, b = bh / a.H, hk = h / a.grp;
        const T *q = Q + row * a.D;
        const T *kb = K + (b * a.Hk + hk) * a.T * a.D, *vb = V + (b * a.Hk + hk) * a.T * a.Dv;
        int64_t kbeg, kend; /* the keys it may see: causal, window, padding, whole */
        key_range(a, batch_span(a, b), s, kbeg, kend);
        int64_t mrow = b * a.ms[0] + h * a.ms[1] + s * a.ms[2];
        for (int64_t ch = blockIdx.y; ch < nchunks; ch += gridDim.y) {
            int64_t c0 = ch * (RW_NT * RW_PER);
            A m = NEG_INF, l = 0, o[RW_PER];
#pragma unroll
            for (int i = 0; i < RW_PER; i++)
                o[i] = 0;
            for (int64_t k0 = kbeg; k0 < kend; k0 += RW_KC) {
                int nk = (int)min64(RW_KC, kend - k0);
                __syncthreads(); /* sc is free */
                for (int jj = w; jj < RW_KC; jj += RW_NT / 32) {
                    A x = NEG_INF;
                    if (jj < nk) {
                        const T *kr = kb + (k0 + jj) * a.D;
                        A dot = 0;
                        for (int64_t d = lane; d < a.D; d += 32)
                            dot += cu_load(q, d) * cu_load(kr, d);
                        x = warp_sum(dot) * scale;
                        if (a.has_cap)
                            x = soft_cap(a, x);
                        if (a.mask_kind)
                            x = apply_mask<T, A>(a, mrow + (k0 + jj) * a.ms[3], x);
                    }
                    if (lane == 0)
                        sc[jj] = x;
                }
                __syncthreads();
                /* every thread derives the same m, l from the same scores */
                A mx = NEG_INF;
                for (int jj = 0; jj < nk; jj++)
                    mx = amax(mx, sc[jj]);
                A mn = amax(m, mx), mu = mn == NEG_INF ? (A)0 : mn, corr = aexp(m - mu);
                m = mn;
#pragma unroll
                for (int i = 0; i < RW_PER; i++)
                    o[i] *= corr;
                A ps = 0;
                for (int jj = 0; jj < nk; jj++) {
                    A p = aexp(sc[jj] - mu);
                    ps += p;
                    const T *vr = vb + (k0 + jj) * a.Dv;
#pragma unroll
                    for (int i = 0; i < RW_PER; i++) {
                        int64_t col = c0 + tid + RW_NT * i;
                        if (col < a.Dv)
                            o[i] += p * cu_load(vr, col);
                    }
                }
                l = l * corr + ps;
            }
            T *dst = O + row * a.Dv;
#pragma unroll
            for (int i = 0; i < RW_PER; i++) {
                int64_t col = c0 + tid + RW_NT * i;
                if (col < a.Dv)
                    cu_store(dst, col, l == 0 ? (A)0 : o[i] / l);
            }
        }
    }
}

/* ------------------------------------------------- attention launchers */

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
static unsigned blocks_for(int64_t items) { return (unsigned)(items < INT_MAX ? items : INT_MAX); }

/* Launch kern over a.items blocks of nt threads with smem bytes of dynamic
 * shared memory, first raising kern's limit on this device (once: opted_in
 * is the caller's record of the device). */
template <class K>
static ft_status launch_smem(ft_kctx *k, const ft_node *n, K kern, int &opted_in, size_t smem, unsigned nt,
                             const attn_args &a)
{
    if (opted_in != k->be->device) {
        CU_TRY(k, n, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted_in = k->be->device;
    }
    kern<<<blocks_for(a.items), nt, smem, k->be->stream>>>(a);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T, int DMAX> static ft_status run_tc(ft_kctx *k, const ft_node *n, attn_args a)
{
    size_t smem = tc_cfg<DMAX>::SMEM;
    a.nqb = (a.S + TC_BQ - 1) / TC_BQ;
    a.items = a.B * a.H * a.nqb;
    static int opted_in = -1; /* device whose limit was raised: once, during the warmup run */
    return launch_smem(k, n, attn_tc<T, DMAX>, opted_in, smem, TC_NT, a);
}

template <class T, int DMAX> static ft_status run_simt(ft_kctx *k, const ft_node *n, attn_args a)
{
    size_t smem = sm_cfg<T, DMAX>::SMEM;
    a.nqb = (a.S + SM_BQ - 1) / SM_BQ;
    a.items = a.B * a.H * a.nqb;
    static int opted_in = -1;
    return launch_smem(k, n, attn_simt<T, DMAX>, opted_in, smem, SM_NT, a);
}

template <class T> static ft_status run_rows(ft_kctx *k, const ft_node *n, attn_args a)
{
    int64_t nrows = a.B * a.H * a.S, nchunks = (a.Dv + RW_NT * RW_PER - 1) / (RW_NT * RW_PER);
    dim3 grid(blocks_for(nrows), (unsigned)(nchunks < 65535 ? nchunks : 65535));
    attn_rows<T><<<grid, RW_NT, 0, k->be->stream>>>(a, nrows, nchunks);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* f16/bf16: tensor cores while both head sizes fit a tile. */
template <class T> static ft_status run_half(ft_kctx *k, const ft_node *n, attn_args a)
{
    int64_t dm = a.D > a.Dv ? a.D : a.Dv;
    if (dm > 256)
        return run_rows<T>(k, n, a);
    a.vec_qk = aligned16(a.q) && aligned16(a.k) && a.D % 8 == 0;
    a.vec_v = aligned16(a.v) && a.Dv % 8 == 0;
    a.vec_o = aligned16(a.o) && a.Dv % 8 == 0;
    if (dm <= 64)
        return run_tc<T, 64>(k, n, a);
    if (dm <= 128)
        return run_tc<T, 128>(k, n, a);
    return run_tc<T, 256>(k, n, a);
}

/* f32 up to 256, f64 up to 128 (its tiles take twice the shared memory). */
template <class T, int LIMIT> static ft_status run_wide(ft_kctx *k, const ft_node *n, attn_args a)
{
    int64_t dm = a.D > a.Dv ? a.D : a.Dv;
    if (dm > LIMIT)
        return run_rows<T>(k, n, a);
    const int64_t ch = 16 / (int64_t)sizeof(T);
    a.vec_qk = aligned16(a.q) && aligned16(a.k) && a.D % ch == 0;
    a.vec_v = aligned16(a.v) && a.Dv % ch == 0;
    if (dm <= 64)
        return run_simt<T, 64>(k, n, a);
    if constexpr (LIMIT > 128) {
        if (dm > 128)
            return run_simt<T, LIMIT>(k, n, a);
    }
    return run_simt<T, 128>(k, n, a);
}

CU_KFN(cu_attention)
{
    ft_dtype dt = in[0].dtype;
    const int64_t *qd = in[0].shape.dims, *kd = in[1].shape.dims, *vd = in[2].shape.dims;
    attn_args a;
    memset(&a, 0, sizeof a);
    a.q = in[0].data;
    a.k = in[1].data;
    a.v = in[2].data;
    a.T = kd[2];
    /* a KV cache: keys and values become past then new (attention_ext.cu) */
    if (n->params.attn.past || n->params.attn.present) {
        ft_status st = cu_attn_kv_cache(k, n, in, out, &a.k, &a.v, &a.T);
        if (st)
            return st;
    }
    const ft_attn_params *ap = &n->params.attn;
    a.o = out[0].data;
    a.B = qd[0];
    a.H = qd[1];
    a.S = qd[2];
    a.D = qd[3];
    a.Hk = kd[1];
    a.Dv = vd[3];
    a.grp = a.H / a.Hk;
    a.scale_d = n->params.attn.scale; /* given, or 1/sqrt(D) (graph/infer_attention.c) */
    a.scale_f = (float)a.scale_d;
    a.causal = n->params.attn.causal;
    a.coff = a.T - kd[2]; /* P: with a KV cache the diagonal moves past the cached keys */
    a.kvl = ap->kv_len ? (const int64_t *)in[6].data : NULL;
    a.wl = ap->win_left;
    a.wr = ap->win_right;
    a.mask_t = a.T;
    a.has_cap = n->params.attn.softcap != 0;
    if (a.has_cap) {
        a.cap_d = n->params.attn.softcap;
        a.icap_d = 1.0 / a.cap_d;
        a.cap_f = (float)a.cap_d;
        a.icap_f = (float)a.icap_d;
    }
    if (n->n_in > 3 && in[3].data) {
        /* a last dim shorter than T (not 1, which broadcasts) masks the keys past it */
        const ft_shape *ms = &in[3].shape;
        int64_t mt = ms->rank > 0 ? ms->dims[ms->rank - 1] : 1;
        a.mask_t = mt != 1 && mt < a.T ? mt : a.T;
        ft_shape full = {4, {a.B, a.H, a.S, a.mask_t}};
        a.mask = in[3].data;
        a.mask_kind = in[3].dtype == FT_BOOL ? 1 : 2;
        ft_broadcast_strides(ms, &full, a.ms);
    }
    /* Y (none to write with Dv = 0), then output 3 */
    int y = ft_numel(&out[0].shape) > 0, sm = ap->scores_mode;
    void *sc = ap->scores ? out[3].data : NULL;
    ft_status st;
    switch (dt) {
    case FT_F16:
        st = y ? run_half<__half>(k, n, a) : FT_OK;
        return st || !sc ? st : cu_attn_scores(k, n, a, dt, sc, sm);
    case FT_BF16:
        st = y ? run_half<__nv_bfloat16>(k, n, a) : FT_OK;
        return st || !sc ? st : cu_attn_scores(k, n, a, dt, sc, sm);
    case FT_F32:
        st = y ? run_wide<float, 256>(k, n, a) : FT_OK;
        return st || !sc ? st : cu_attn_scores(k, n, a, dt, sc, sm);
    case FT_F64:
        st = y ? run_wide<double, 128>(k, n, a) : FT_OK;
        return st || !sc ? st : cu_attn_scores(k, n, a, dt, sc, sm);
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda attention kernel",
                       ft_dtype_name(dt));
}

/* ------------------------------------------------- dropout */

/* Element i is kept iff ((w0 >> 5) * 2^26 + (w1 >> 6)) >= thr. */
__device__ __forceinline__ bool dropout_keep(uint64_t i, uint64_t seed, uint64_t thr)
{
    uint32_t w[4]; /* Philox-4x32-10 (graph/philox.h): the first two words */
    ft_philox4x32(i, seed, w);
    uint64_t u53 = ((uint64_t)(w[0] >> 5) << 26) | (uint64_t)(w[1] >> 6);
    return u53 >= thr;
}

/* Kept: x * scale with the product in double, rounded to the arithmetic
 * type and then stored (16-bit types: f32 first, as the CPU's f32 kernel
 * followed by narrowing). Dropped: +0 whatever x is. */
template <class T> __device__ __forceinline__ T drop_one(T v, bool keep, double scale)
{
    typedef typename cu_acc<T>::type A;
    A r = keep ? (A)((double)cu_load(&v, 0) * scale) : (A)0;
    T out;
    cu_store(&out, 0, r);
    return out;
}

template <int V> __device__ __forceinline__ void store_mask(uint8_t *p, uint64_t bits);
template <> __device__ __forceinline__ void store_mask<2>(uint8_t *p, uint64_t bits) { *(uint16_t *)p = (uint16_t)bits; }
template <> __device__ __forceinline__ void store_mask<4>(uint8_t *p, uint64_t bits) { *(uint32_t *)p = (uint32_t)bits; }
template <> __device__ __forceinline__ void store_mask<8>(uint8_t *p, uint64_t bits) { *(uint64_t *)p = bits; }

/* vec: 16-byte groups of elements (x, y 16-byte aligned, mask aligned to the
 * group's mask bytes), the tail element by element. */
template <class T>
__global__ void dropout_kernel(const T *__restrict__ x, T *__restrict__ y, uint8_t *__restrict__ mask, uint64_t cnt,
                               uint64_t seed, uint64_t thr, double scale, int vec)
{
    constexpr int V = 16 / sizeof(T);
    uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t nv = vec ? cnt / V : 0;
    for (uint64_t gi = tid; gi < nv; gi += stride) {
        uint4 raw = ((const uint4 *)x)[gi], res;
        T xe[V], ye[V];
        memcpy(xe, &raw, 16);
        uint64_t bits = 0;
#pragma unroll
        for (int e = 0; e < V; e++) {
            bool keep = dropout_keep(gi * V + e, seed, thr);
            ye[e] = drop_one(xe[e], keep, scale);
            bits |= (uint64_t)keep << (8 * e);
        }
        memcpy(&res, ye, 16);
        ((uint4 *)y)[gi] = res;
        if (mask)
            store_mask<V>(mask + gi * V, bits);
    }
    for (uint64_t i = nv * V + tid; i < cnt; i += stride) {
        bool keep = dropout_keep(i, seed, thr);
        y[i] = drop_one(x[i], keep, scale);
        if (mask)
            mask[i] = (uint8_t)keep;
    }
}

template <class T>
static ft_status run_dropout(ft_kctx *k, const ft_node *n, const void *x, void *y, uint8_t *mask, uint64_t cnt,
                             uint64_t seed, uint64_t thr, double scale)
{
    const uintptr_t V = 16 / sizeof(T);
    int vec = aligned16(x) && aligned16(y) && (!mask || ((uintptr_t)mask & (V - 1)) == 0);
    uint64_t work = vec ? cnt / V + cnt % V : cnt;
    dropout_kernel<T><<<cu_grid(k->be, work), CU_BLOCK, 0, k->be->stream>>>((const T *)x, (T *)y, mask, cnt, seed,
                                                                            thr, scale, vec);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_dropout)
{
    ft_dtype dt = in[0].dtype;
    uint64_t cnt = ft_numel(&in[0].shape);
    int training = n->params.attn.training;
    double ratio = n->params.attn.ratio;
    uint64_t seed = n->params.attn.seed;
    uint8_t *mask = n->n_out > 1 ? (uint8_t *)out[1].data : NULL;
    if (cnt == 0)
        return FT_OK;
    if (!training) {
        CU_TRY(k, n, cudaMemcpyAsync(out[0].data, in[0].data, (size_t)cnt * ft_dtype_size(dt),
                                     cudaMemcpyDeviceToDevice, k->be->stream));
        if (mask)
            CU_TRY(k, n, cudaMemsetAsync(mask, 1, (size_t)cnt, k->be->stream));
        return FT_OK;
    }
    /* u53 / 2^53 >= ratio  <=>  u53 >= ceil(ratio * 2^53), both sides exact;
     * a NaN ratio keeps nothing, as the CPU's comparison does. */
    const double two53 = 9007199254740992.0;
    uint64_t thr;
    if (ratio != ratio || ratio * two53 > two53)
        thr = ((uint64_t)1 << 53) + 1;
    else if (ratio <= 0)
        thr = 0;
    else
        thr = (uint64_t)ceil(ratio * two53);
    double scale = 1.0 / (1.0 - ratio);
    switch (dt) {
    case FT_F16: return run_dropout<__half>(k, n, in[0].data, out[0].data, mask, cnt, seed, thr, scale);
    case FT_BF16: return run_dropout<__nv_bfloat16>(k, n, in[0].data, out[0].data, mask, cnt, seed, thr, scale);
    case FT_F32: return run_dropout<float>(k, n, in[0].data, out[0].data, mask, cnt, seed, thr, scale);
    case FT_F64: return run_dropout<double>(k, n, in[0].data, out[0].data, mask, cnt, seed, thr, scale);
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda dropout kernel",
                       ft_dtype_name(dt));
}
