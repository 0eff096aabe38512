/* CUDA normalisations over rows: softmax / log_softmax over an axis,
 * layer_norm and rms_norm over the trailing dims. Semantics as cpu/norm.c.
 * The per-channel norms (batch, instance, group) are in norm_channels.cu; the
 * chunked statistics passes both use are in norm.cuh.
 *
 * Rows that fit in registers (the common case: up to 32768 elements, 16384
 * for f64) take one pass over memory: a group of G threads (a fraction of a
 * warp up to a 1024-thread block) loads its row once, with 16-byte vector
 * loads when the row length and the pointers allow, keeps it in registers
 * through the statistics (max and sum of exp; mean then squared deviations:
 * two passes over the cached row keep the variance accurate when |mean| is
 * large against the spread) and writes it once. Statistics there use the
 * compute type (f32 for 16-bit floats and f32): each thread sums at most 32
 * elements before a tree, which stays well inside the sqrt(K) error bound.
 *
 * Longer rows and the strided softmax axis go through chunked passes with
 * statistics in double, as the CPU keeps them: partial results per (row,
 * chunk) into the workspace, a per-row finishing kernel, then an elementwise
 * pass. Every output element is read before it is written by the same
 * thread, after all statistics, so in-place use is safe. */
#include "norm.cuh"

extern "C" {
#include "../graph/infer_math.h"
}

#include <math.h>
#include <string.h>

namespace {

/* 16 bytes <-> V compute-type values. */
__device__ __forceinline__ void unpack(uint4 u, float *o)
{
    o[0] = __uint_as_float(u.x), o[1] = __uint_as_float(u.y), o[2] = __uint_as_float(u.z), o[3] = __uint_as_float(u.w);
}
__device__ __forceinline__ uint4 pack(const float *o, float)
{
    return make_uint4(__float_as_uint(o[0]), __float_as_uint(o[1]), __float_as_uint(o[2]), __float_as_uint(o[3]));
}
__device__ __forceinline__ void unpack(uint4 u, double *o)
{
    o[0] = __hiloint2double((int)u.y, (int)u.x);
    o[1] = __hiloint2double((int)u.w, (int)u.z);
}
__device__ __forceinline__ uint4 pack(const double *o, double)
{
    return make_uint4((unsigned)__double2loint(o[0]), (unsigned)__double2hiint(o[0]), (unsigned)__double2loint(o[1]),
                      (unsigned)__double2hiint(o[1]));
}
__device__ __forceinline__ void unpack_h(unsigned w, float *o)
{
    o[0] = __half2float(__ushort_as_half((unsigned short)(w & 0xFFFFu)));
    o[1] = __half2float(__ushort_as_half((unsigned short)(w >> 16)));
}
__device__ __forceinline__ unsigned pack_h(float a, float b)
{
    return (unsigned)__half_as_ushort(__float2half_rn(a)) | ((unsigned)__half_as_ushort(__float2half_rn(b)) << 16);
}
__device__ __forceinline__ void unpack_b(unsigned w, float *o)
{
    o[0] = __bfloat162float(__ushort_as_bfloat16((unsigned short)(w & 0xFFFFu)));
    o[1] = __bfloat162float(__ushort_as_bfloat16((unsigned short)(w >> 16)));
}
__device__ __forceinline__ unsigned pack_b(float a, float b)
{
    return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(a)) |
           ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(b)) << 16);
}
template <class T> struct VecIO;
template <> struct VecIO<float> {
    static __device__ __forceinline__ void ld(uint4 u, float *o) { unpack(u, o); }
    static __device__ __forceinline__ uint4 st(const float *o) { return pack(o, 0.0f); }
};
template <> struct VecIO<double> {
    static __device__ __forceinline__ void ld(uint4 u, double *o) { unpack(u, o); }
    static __device__ __forceinline__ uint4 st(const double *o) { return pack(o, 0.0); }
};
template <> struct VecIO<__half> {
    static __device__ __forceinline__ void ld(uint4 u, float *o)
    {
        unpack_h(u.x, o), unpack_h(u.y, o + 2), unpack_h(u.z, o + 4), unpack_h(u.w, o + 6);
    }
    static __device__ __forceinline__ uint4 st(const float *o)
    {
        return make_uint4(pack_h(o[0], o[1]), pack_h(o[2], o[3]), pack_h(o[4], o[5]), pack_h(o[6], o[7]));
    }
};
template <> struct VecIO<__nv_bfloat16> {
    static __device__ __forceinline__ void ld(uint4 u, float *o)
    {
        unpack_b(u.x, o), unpack_b(u.y, o + 2), unpack_b(u.z, o + 4), unpack_b(u.w, o + 6);
    }
    static __device__ __forceinline__ uint4 st(const float *o)
    {
        return make_uint4(pack_b(o[0], o[1]), pack_b(o[2], o[3]), pack_b(o[4], o[5]), pack_b(o[6], o[7]));
    }
};

enum { OP_SOFTMAX, OP_LOGSOFTMAX, OP_LAYER, OP_RMS };

/* ---- one pass: the row in registers -------------------------------------------- */

struct RowArgs {
    const void *x;
    void *y;
    const void *sc, *bi; /* dense over the row, or NULL */
    void *mo, *io;       /* layer_norm's mean / inv_std_dev outputs, or NULL */
    int64_t rows, d;
    double eps;
    int G;               /* threads per row: 1..32 (power of two) or a multiple of 32 */
    int op;
    int vec;             /* 16-byte accesses: d % V == 0 and every pointer aligned */
};

/* Sum (or max) over the G threads of a row; every thread gets the result, in
 * the same order. Every thread of the block must call. */
template <class C> __device__ __forceinline__ C gred(C v, bool mx, int G, C *red)
{
    const int w = G < 32 ? G : 32;
    for (int o = w >> 1; o > 0; o >>= 1) {
        C t = __shfl_xor_sync(0xffffffffu, v, o);
        v = mx ? cmax(v, t) : v + t;
    }
    if (G <= 32)
        return v;
    const int gw = G >> 5, first = ((int)threadIdx.x / G) * gw;
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    C r = red[first];
    for (int i = 1; i < gw; i++)
        r = mx ? cmax(r, red[first + i]) : r + red[first + i];
    __syncthreads();
    return r;
}

/* Slot s of a thread (N = NV * V slots) holds element pos(s) of its row:
 * vector lane + (s / V) * G, element s % V of it, or element lane + s * G. */
template <int V> __device__ __forceinline__ int slot_pos(int s, bool vec, int lane, int G)
{
    return vec ? (lane + (s / V) * G) * V + s % V : lane + s * G;
}

/* The slots of a thread as they lie in its row of d elements: with vec,
 * fv(first slot, vector index, in) for each of its NV 16-byte vectors,
 * otherwise fs(slot, position, in) for each of its NV * V slots; in: ok and
 * the vector or the position lies inside the row. */
template <class T, int NV, class FV, class FS>
__device__ __forceinline__ void for_slots(bool ok, bool vec, int lane, int G, int d, FV fv, FS fs)
{
    constexpr int V = 16 / (int)sizeof(T);
    if (vec) {
        const int nvec = d / V;
#pragma unroll
        for (int kv = 0; kv < NV; kv++) {
            const int vi = lane + kv * G;
            fv(kv * V, vi, ok && vi < nvec);
        }
    } else {
#pragma unroll
        for (int s = 0; s < NV * V; s++) {
            const int q = lane + s * G;
            fs(s, q, ok && q < d);
        }
    }
}

template <class T, int NV>
__device__ __forceinline__ void load_slots(const T *p, typename cu_acc<T>::type *v, bool ok, bool vec, int lane, int G,
                                           int d)
{
    typedef typename cu_acc<T>::type C;
    constexpr int V = 16 / (int)sizeof(T);
    for_slots<T, NV>(
        ok, vec, lane, G, d,
        [&](int s0, int vi, bool in) {
            if (in) {
                VecIO<T>::ld(reinterpret_cast<const uint4 *>(p)[vi], v + s0);
            } else {
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[s0 + e] = 0;
            }
        },
        [&](int s, int q, bool in) { v[s] = in ? cu_load(p, q) : (C)0; });
}

/* v[s] = v[s] * w + b with w, b the parameters at the slots' positions (either may be NULL). */
template <class T, int NV>
__device__ __forceinline__ void apply_params(typename cu_acc<T>::type *v, const T *sc, const T *bi, bool ok, bool vec,
                                             int lane, int G, int d)
{
    typedef typename cu_acc<T>::type C;
    constexpr int V = 16 / (int)sizeof(T);
    for_slots<T, NV>(
        ok, vec, lane, G, d,
        [&](int s0, int vi, bool in) {
            if (!in)
                return;
            C t[V];
            if (sc) {
                VecIO<T>::ld(reinterpret_cast<const uint4 *>(sc)[vi], t);
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[s0 + e] *= t[e];
            }
            if (bi) {
                VecIO<T>::ld(reinterpret_cast<const uint4 *>(bi)[vi], t);
#pragma unroll
                for (int e = 0; e < V; e++)
                    v[s0 + e] += t[e];
            }
        },
        [&](int s, int q, bool in) {
            if (in) {
                if (sc)
                    v[s] *= cu_load(sc, q);
                if (bi)
                    v[s] += cu_load(bi, q);
            }
        });
}

template <class T, int NV>
__global__ void __launch_bounds__(256, 2) row_norm(RowArgs a)
{
    typedef typename cu_acc<T>::type C;
    constexpr int V = 16 / (int)sizeof(T), N = NV * V;
    __shared__ C red[32];
    const int G = a.G, rpb = (int)blockDim.x / G, lane = (int)threadIdx.x % G;
    const bool vec = a.vec != 0;
    const int d = (int)a.d; /* at most 256 threads x 32 slots */
    const T *X = (const T *)a.x;
    T *Y = (T *)a.y;
    for (int64_t r0 = (int64_t)blockIdx.x * rpb; r0 < a.rows; r0 += (int64_t)gridDim.x * rpb) {
        const int64_t row = r0 + (int)threadIdx.x / G;
        const bool valid = row < a.rows;
        const int64_t off = (valid ? row : 0) * a.d;
        C v[N];
        load_slots<T, NV>(X + off, v, valid, vec, lane, G, d);
#define IN(s) (valid && slot_pos<V>((s), vec, lane, G) < d)
        if (a.op == OP_SOFTMAX || a.op == OP_LOGSOFTMAX) {
            /* fmax skips NaN, but a NaN makes the sum NaN and so every
             * output, as on the CPU. */
            C mx = (C)-INFINITY;
#pragma unroll
            for (int s = 0; s < N; s++)
                if (IN(s))
                    mx = cmax(mx, v[s]);
            mx = gred(mx, true, G, red);
            C sum = 0;
            if (a.op == OP_SOFTMAX) {
#pragma unroll
                for (int s = 0; s < N; s++)
                    if (IN(s)) {
                        v[s] = cexp(v[s] - mx);
                        sum += v[s];
                    }
                sum = gred(sum, false, G, red);
                const C inv = (C)1 / sum;
#pragma unroll
                for (int s = 0; s < N; s++)
                    v[s] *= inv;
            } else {
#pragma unroll
                for (int s = 0; s < N; s++)
                    if (IN(s))
                        sum += cexp(v[s] - mx);
                sum = gred(sum, false, G, red);
                const C ls = clog(sum);
#pragma unroll
                for (int s = 0; s < N; s++)
                    v[s] = (v[s] - mx) - ls;
            }
        } else {
            C mean = 0;
            if (a.op == OP_LAYER) {
                C s1 = 0;
#pragma unroll
                for (int s = 0; s < N; s++)
                    if (IN(s))
                        s1 += v[s];
                mean = gred(s1, false, G, red) / (C)d;
            }
            C s2 = 0;
#pragma unroll
            for (int s = 0; s < N; s++)
                if (IN(s)) {
                    C t = v[s] - mean;
                    s2 += t * t;
                }
            const C var = gred(s2, false, G, red) / (C)d;
            const C inv = (C)1 / csqrt(var + (C)a.eps);
            if (valid && lane == 0) {
                if (a.mo)
                    cu_store((T *)a.mo, row, mean);
                if (a.io)
                    cu_store((T *)a.io, row, inv);
            }
#pragma unroll
            for (int s = 0; s < N; s++)
                v[s] = (v[s] - mean) * inv;
            if (a.sc || a.bi)
                apply_params<T, NV>(v, (const T *)a.sc, (const T *)a.bi, valid, vec, lane, G, d);
        }
        T *yr = Y + off;
        for_slots<T, NV>(
            valid, vec, lane, G, d,
            [&](int s0, int vi, bool in) {
                if (in)
                    reinterpret_cast<uint4 *>(yr)[vi] = VecIO<T>::st(v + s0);
            },
            [&](int s, int q, bool in) {
                if (in)
                    cu_store(yr, (int64_t)q, v[s]);
            });
#undef IN
    }
}

/* Slots per thread of the largest instantiation: 32 compute values. */
template <class T> constexpr int nv_max() { return sizeof(T) == 2 ? 4 : 8; }

/* Pick NV (vectors or V-element groups per thread) and G <= 256 for a row
 * of d, or return 0 when it does not fit in registers. A row that one warp
 * can hold (at most nv_max slots per lane) gets one warp: its statistics
 * then need no block barrier, and each lane has up to 128 bytes of loads
 * in flight. (A 1024-float row on 256 threads of one float4 each reached
 * 0.70 of a copy's bandwidth on an H100 for softmax, 0.66 for layer_norm.)
 * Longer rows take the fewest slots per thread that fit 256 threads. */
template <class T> static int row_plan(int64_t d, int vec, int *G)
{
    const int V = 16 / (int)sizeof(T);
    const int64_t units = vec ? d / V : d;
    for (int nv = 1; nv <= nv_max<T>(); nv *= 2) {
        const int64_t per = vec ? nv : (int64_t)nv * V, need = (units + per - 1) / per;
        if (need <= 32) {
            int g = 1;
            while (g < need)
                g *= 2;
            *G = g;
            return nv;
        }
    }
    for (int nv = 1; nv <= nv_max<T>(); nv *= 2) {
        const int64_t per = vec ? nv : (int64_t)nv * V, need = (units + per - 1) / per;
        if (need <= 256) {
            int g = 1;
            if (need <= 32)
                while (g < need)
                    g *= 2;
            else
                g = (int)((need + 31) / 32 * 32);
            *G = g;
            return nv;
        }
    }
    return 0;
}

template <class T, int NV> static void row_go(ft_kctx *k, const RowArgs &a)
{
    const int rpb = a.G >= 256 ? 1 : 256 / a.G;
    const int64_t blocks = (a.rows + rpb - 1) / rpb, cap = (int64_t)k->be->sm_count * 32;
    row_norm<T, NV><<<(unsigned)min64(blocks, cap), rpb * a.G, 0, k->be->stream>>>(a);
}

template <class T> static void row_launch(ft_kctx *k, const RowArgs &a, int nv)
{
    switch (nv) {
    case 1: row_go<T, 1>(k, a); break;
    case 2: row_go<T, 2>(k, a); break;
    case 4: row_go<T, 4>(k, a); break;
    default:
        if constexpr (nv_max<T>() >= 8)
            row_go<T, 8>(k, a);
        break;
    }
}

/* ---- rows too long for registers: a block per row, streaming ------------------ */

#define ST_BLOCK 1024

/* f(position, value) for each element of the row this thread owns. */
template <class T, class F> __device__ __forceinline__ void for_row(const T *xr, bool vec, int64_t d, F f)
{
    typedef typename cu_acc<T>::type C;
    constexpr int V = 16 / (int)sizeof(T);
    if (vec) {
        const int64_t nvec = d / V;
#pragma unroll 4
        for (int64_t vi = threadIdx.x; vi < nvec; vi += ST_BLOCK) {
            C t[V];
            VecIO<T>::ld(reinterpret_cast<const uint4 *>(xr)[vi], t);
#pragma unroll
            for (int e = 0; e < V; e++)
                f(vi * V + e, t[e]);
        }
    } else {
#pragma unroll 4
        for (int64_t j = threadIdx.x; j < d; j += ST_BLOCK)
            f(j, cu_load(xr, j));
    }
}

/* One row per block iteration, a pass over global memory per statistic and
 * one for the output. With at most a block or two per SM the rows in flight
 * fit in L2, so the later passes are served from there and DRAM sees about
 * one read and one write. */
template <class T> __global__ void __launch_bounds__(ST_BLOCK) row_stream(RowArgs a)
{
    typedef typename cu_acc<T>::type C;
    constexpr int V = 16 / (int)sizeof(T);
    __shared__ C red[32];
    const bool vec = a.vec != 0;
    const int64_t d = a.d;
    const T *SC = (const T *)a.sc, *BI = (const T *)a.bi;
    const bool soft = a.op == OP_SOFTMAX || a.op == OP_LOGSOFTMAX;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const T *xr = (const T *)a.x + row * d;
        T *yr = (T *)a.y + row * d;
        C c0 = 0, c1 = 0; /* softmax: max, 1 / sum or log(sum); norms: mean, inv */
        if (soft) {
            C mx = (C)-INFINITY, sum = 0;
            for_row(xr, vec, d, [&](int64_t, C v) { mx = cmax(mx, v); });
            mx = gred(mx, true, ST_BLOCK, red);
            for_row(xr, vec, d, [&](int64_t, C v) { sum += cexp(v - mx); });
            sum = gred(sum, false, ST_BLOCK, red);
            c0 = mx;
            c1 = a.op == OP_SOFTMAX ? (C)1 / sum : clog(sum);
        } else {
            if (a.op == OP_LAYER) {
                C s1 = 0;
                for_row(xr, vec, d, [&](int64_t, C v) { s1 += v; });
                c0 = gred(s1, false, ST_BLOCK, red) / (C)d;
            }
            C s2 = 0;
            const C mean = c0;
            for_row(xr, vec, d, [&](int64_t, C v) { s2 += (v - mean) * (v - mean); });
            c1 = (C)1 / csqrt(gred(s2, false, ST_BLOCK, red) / (C)d + (C)a.eps);
            if (threadIdx.x == 0) {
                if (a.mo)
                    cu_store((T *)a.mo, row, c0);
                if (a.io)
                    cu_store((T *)a.io, row, c1);
            }
        }
        const int op = a.op;
        auto out = [&](C v) -> C {
            return op == OP_SOFTMAX ? cexp(v - c0) * c1 : op == OP_LOGSOFTMAX ? (v - c0) - c1 : (v - c0) * c1;
        };
        if (vec) {
            const int64_t nvec = d / V;
#pragma unroll 4
            for (int64_t vi = threadIdx.x; vi < nvec; vi += ST_BLOCK) {
                C t[V], w[V];
                VecIO<T>::ld(reinterpret_cast<const uint4 *>(xr)[vi], t);
#pragma unroll
                for (int e = 0; e < V; e++)
                    t[e] = out(t[e]);
                if (!soft && SC) {
                    VecIO<T>::ld(reinterpret_cast<const uint4 *>(SC)[vi], w);
#pragma unroll
                    for (int e = 0; e < V; e++)
                        t[e] *= w[e];
                }
                if (!soft && BI) {
                    VecIO<T>::ld(reinterpret_cast<const uint4 *>(BI)[vi], w);
#pragma unroll
                    for (int e = 0; e < V; e++)
                        t[e] += w[e];
                }
                reinterpret_cast<uint4 *>(yr)[vi] = VecIO<T>::st(t);
            }
        } else {
#pragma unroll 4
            for (int64_t j = threadIdx.x; j < d; j += ST_BLOCK) {
                C t = out(cu_load(xr, j));
                if (!soft && SC)
                    t *= cu_load(SC, j);
                if (!soft && BI)
                    t += cu_load(BI, j);
                cu_store(yr, j, t);
            }
        }
    }
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Elementwise pass of the chunked rows, item = (row, chunk). The compute
 * follows the CPU: exp and x - max in the element type, the rest in double. */
template <class T>
__global__ void __launch_bounds__(NB) ap_rows(const T *x, T *y, int64_t rows, int64_t len, int64_t nch, int op,
                                              const double *o0, const double *o1, const T *sc, const T *bi)
{
    typedef typename cu_acc<T>::type C;
    const int64_t items = rows * nch;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t row = udiv(it, nch), j0 = (it - row * nch) * CHUNK, j1 = min64(len, j0 + CHUNK);
        const double a = o0 ? o0[row] : 0.0, b = o1[row];
        const T *xr = x + row * len;
        T *yr = y + row * len;
        for (int64_t j = j0 + threadIdx.x; j < j1; j += NB) {
            double r;
            if (op == OP_SOFTMAX) {
                r = (double)cexp(cu_load(xr, j) - (C)a) * b;
            } else if (op == OP_LOGSOFTMAX) {
                r = (double)(cu_load(xr, j) - (C)a) - b;
            } else {
                r = (cu_to_d(xr[j]) - a) * b;
                if (sc)
                    r *= cu_to_d(sc[j]);
                if (bi)
                    r += cu_to_d(bi[j]);
            }
            cu_st_d(yr, j, r);
        }
    }
}

/* softmax over a strided axis: block 32 x 8, item = (outer o, tile of cpt
 * columns). Lanes along the columns (consecutive addresses); the 8 rows of
 * the block and the lanes left over when inner < 32 split the axis into ns
 * contiguous streams per column, combined in stream order. */
template <class T>
__global__ void __launch_bounds__(NB) sm_cols(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, int logsm)
{
    typedef typename cu_acc<T>::type C;
    __shared__ double sh[NB];
    const int lane = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int cpt = inner < 32 ? (int)inner : 32, nsub = 32 / cpt, ns = nsub * 8;
    const int cl = lane % cpt, sub = lane / cpt, sid = ty * nsub + sub;
    const int64_t ntiles = (inner + cpt - 1) / cpt, items = outer * ntiles;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t o = udiv(it, ntiles), c = (it - o * ntiles) * cpt + cl;
        const bool valid = sub < nsub && c < inner;
        const int64_t r0 = len * sid / ns, r1 = len * (sid + 1) / ns;
        const int64_t base = o * len * inner + c;
        double m = -INFINITY;
        if (valid)
            for (int64_t r = r0; r < r1; r++)
                m = dmax(m, cu_to_d(x[base + r * inner]));
        sh[ty * 32 + lane] = m;
        __syncthreads();
        double M = -INFINITY;
        for (int s = 0; s < ns; s++)
            M = dmax(M, sh[(s / nsub) * 32 + (s % nsub) * cpt + cl]);
        __syncthreads();
        const C mc = (C)M;
        double sum = 0;
        if (valid)
            for (int64_t r = r0; r < r1; r++)
                sum += (double)cexp(cu_load(x, base + r * inner) - mc);
        sh[ty * 32 + lane] = sum;
        __syncthreads();
        double S = 0;
        for (int s = 0; s < ns; s++)
            S += sh[(s / nsub) * 32 + (s % nsub) * cpt + cl];
        __syncthreads();
        const double f = logsm ? log(S) : 1.0 / S;
        if (valid)
            for (int64_t r = r0; r < r1; r++) {
                const int64_t e = base + r * inner;
                const C v = cu_load(x, e) - mc;
                cu_st_d(y, e, logsm ? (double)v - f : (double)cexp(v) * f);
            }
    }
}

/* layer_norm's scale / bias broadcast over the normalised dims, made dense. */
template <class T> __global__ void expand_param(const T *src, T *dst, int64_t d, cu_shape sh)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t q = i, off = 0;
        for (int a = sh.rank - 1; a >= 0; a--) {
            const int64_t t = udiv(q, sh.dims[a]);
            off += (q - t * sh.dims[a]) * sh.strides[a];
            q = t;
        }
        dst[i] = src[off];
    }
}

template <class T> __global__ void fill_nan(T *p, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        cu_st_d(p, i, (double)NAN);
}

/* ---- host side ---------------------------------------------------------------- */

/* Chunked softmax / layer_norm / rms_norm of rows x d. ws holds part (rows *
 * nch * 2 doubles), o0, o1 (rows doubles each). */
template <class T>
static ft_status rows_chunked(ft_kctx *k, const ft_node *n, const T *x, T *y, int64_t rows, int64_t d, int op,
                              double eps, const T *sc, const T *bi, T *mo, T *io, char *ws)
{
    cudaStream_t st = k->be->stream;
    int64_t ch, nch;
    int G;
    chunking(d, &ch, &nch, &G);
    double *part = (double *)ws;
    double *o0 = (double *)(ws + al256((size_t)(rows * nch) * 2 * sizeof(double)));
    double *o1 = o0 + rows;
    const unsigned pg = grid_items(k, rows * nch, NB / G), fg = cu_grid(k->be, (uint64_t)rows);
    if (op == OP_SOFTMAX || op == OP_LOGSOFTMAX) {
        st_part<T><<<pg, NB, 0, st>>>(x, rows, d, nch, ch, S_SOFT, (const double *)NULL, part, G);
        CU_LAUNCHED(k, n);
        st_fin<T><<<fg, CU_BLOCK, 0, st>>>(op == OP_SOFTMAX ? F_SOFT : F_LOGSOFT, part, rows, nch, d, eps, o0, o1,
                                           (T *)NULL);
        CU_LAUNCHED(k, n);
    } else {
        if (op == OP_LAYER) {
            st_part<T><<<pg, NB, 0, st>>>(x, rows, d, nch, ch, S_SUM, (const double *)NULL, part, G);
            CU_LAUNCHED(k, n);
            st_fin<T><<<fg, CU_BLOCK, 0, st>>>(F_MEAN, part, rows, nch, d, eps, o0, o1, mo);
            CU_LAUNCHED(k, n);
        }
        st_part<T><<<pg, NB, 0, st>>>(x, rows, d, nch, ch, op == OP_LAYER ? S_SQDEV : S_SQ, o0, part, G);
        CU_LAUNCHED(k, n);
        st_fin<T><<<fg, CU_BLOCK, 0, st>>>(F_INV, part, rows, nch, d, eps, o0, o1, io);
        CU_LAUNCHED(k, n);
    }
    const int64_t anch = (d + CHUNK - 1) / CHUNK;
    ap_rows<T><<<grid_items(k, rows * anch, 1), NB, 0, st>>>(x, y, rows, d, anch, op,
                                                             op == OP_RMS ? (const double *)NULL : o0, o1, sc, bi);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* The streaming path needs a row for every SM; fewer, longer rows are split
 * across blocks by the chunked path instead. */
static bool stream_ok(ft_kctx *k, int64_t rows) { return rows >= (int64_t)k->be->sm_count; }

/* Rows over 64 KiB: one block per SM, so that the rows in flight stay in L2. */
template <class T> static void stream_launch(ft_kctx *k, const RowArgs &a)
{
    const int64_t per_sm = (int64_t)sizeof(T) * a.d > ((int64_t)64 << 10) ? 1 : 2;
    const int64_t grid = min64(a.rows, (int64_t)k->be->sm_count * per_sm);
    row_stream<T><<<(unsigned)grid, ST_BLOCK, 0, k->be->stream>>>(a);
}

static size_t chunked_ws(int64_t rows, int64_t d)
{
    int64_t ch, nch;
    int G;
    chunking(d, &ch, &nch, &G);
    return al256((size_t)(rows * nch) * 2 * sizeof(double)) + al256((size_t)rows * 2 * sizeof(double));
}

template <class T> static ft_status softmax_t(ft_kctx *k, const ft_node *n, const T *x, T *y, int64_t outer, int64_t len,
                                             int64_t inner, int logsm)
{
    const int op = logsm ? OP_LOGSOFTMAX : OP_SOFTMAX;
    if (inner > 1) {
        const int cpt = inner < 32 ? (int)inner : 32;
        sm_cols<T><<<grid_items(k, outer * ((inner + cpt - 1) / cpt), 1), dim3(32, NB / 32), 0, k->be->stream>>>(
            x, y, outer, len, inner, logsm);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    RowArgs a;
    memset(&a, 0, sizeof a);
    a.x = x, a.y = y, a.rows = outer, a.d = len, a.op = op;
    a.vec = len % (16 / (int64_t)sizeof(T)) == 0 && aligned16(x) && aligned16(y);
    int G, nv = row_plan<T>(len, a.vec, &G);
    if (nv) {
        a.G = G;
        row_launch<T>(k, a, nv);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    if (stream_ok(k, outer)) {
        stream_launch<T>(k, a);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, chunked_ws(outer, len), &ws);
    if (rc != FT_OK)
        return rc;
    return rows_chunked<T>(k, n, x, y, outer, len, op, 0.0, (const T *)NULL, (const T *)NULL, (T *)NULL, (T *)NULL,
                           (char *)ws);
}

/* layer_norm (rms = 0) and rms_norm over dims axis.. of in[0]. */
template <class T> static ft_status norm_t(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int axis, int rms)
{
    cudaStream_t st = k->be->stream;
    const ft_shape *s = &in[0].shape;
    int64_t rows = 1, d = 1;
    for (int i = 0; i < axis; i++)
        rows *= s->dims[i];
    for (int i = axis; i < s->rank; i++)
        d *= s->dims[i];
    T *mo = !rms && n->n_out > 1 ? (T *)out[1].data : NULL;
    T *io = !rms && n->n_out > 2 ? (T *)out[2].data : NULL;
    if (rows == 0)
        return FT_OK;
    if (d == 0) {
        /* Statistics of an empty row are undefined: NaN, as numpy.mean gives. */
        T *stats[2] = {mo, io};
        for (int i = 0; i < 2; i++)
            if (stats[i]) {
                fill_nan<T><<<cu_grid(k->be, (uint64_t)rows), CU_BLOCK, 0, st>>>(stats[i], rows);
                CU_LAUNCHED(k, n);
            }
        return FT_OK;
    }
    const ft_view *pv[2] = {n->n_in > 1 && in[1].data ? &in[1] : NULL, !rms && n->n_in > 2 && in[2].data ? &in[2] : NULL};
    const T *pp[2] = {NULL, NULL};
    int expand[2] = {0, 0};
    size_t pbytes = al256((size_t)d * sizeof(T)), need = 0;
    for (int i = 0; i < 2; i++)
        if (pv[i]) {
            pp[i] = (const T *)pv[i]->data;
            expand[i] = (int64_t)ft_numel(&pv[i]->shape) != d;
            need += expand[i] ? pbytes : 0;
        }
    const int op = rms ? OP_RMS : OP_LAYER;
    RowArgs a;
    memset(&a, 0, sizeof a);
    a.x = in[0].data, a.y = out[0].data, a.mo = mo, a.io = io, a.rows = rows, a.d = d, a.op = op;
    a.eps = n->params.norm.epsilon;
    const int V = 16 / (int)sizeof(T);
    a.vec = d % V == 0 && aligned16(a.x) && aligned16(a.y);
    for (int i = 0; i < 2; i++)
        if (pp[i] && !expand[i] && !aligned16(pp[i]))
            a.vec = 0;
    int G = 0, nv = row_plan<T>(d, a.vec, &G);
    const bool stream = !nv && stream_ok(k, rows);
    const size_t cws = nv || stream ? 0 : chunked_ws(rows, d);
    void *ws = NULL;
    if (need + cws) {
        ft_status rc = cu_workspace(k, n, need + cws, &ws);
        if (rc != FT_OK)
            return rc;
    }
    char *w = (char *)ws;
    for (int i = 0; i < 2; i++)
        if (expand[i]) {
            ft_shape nd;
            memset(&nd, 0, sizeof nd);
            nd.rank = s->rank - axis;
            memcpy(nd.dims, s->dims + axis, sizeof(int64_t) * (size_t)nd.rank);
            const cu_shape sh = cu_shape_bcast(&pv[i]->shape, &nd);
            expand_param<T><<<cu_grid(k->be, (uint64_t)d), CU_BLOCK, 0, st>>>(pp[i], (T *)w, d, sh);
            CU_LAUNCHED(k, n);
            pp[i] = (const T *)w;
            w += pbytes;
        }
    a.sc = pp[0], a.bi = pp[1];
    if (nv) {
        a.G = G;
        row_launch<T>(k, a, nv);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    if (stream) {
        stream_launch<T>(k, a);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    return rows_chunked<T>(k, n, (const T *)a.x, (T *)a.y, rows, d, op, a.eps, pp[0], pp[1], mo, io, w);
}

} // namespace

/* ---- entry points ------------------------------------------------------------ */

ft_status cu_softmax(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const int axis = n->params.norm.axis;
    int64_t outer, len, inner;
    ft_reduce_around_axis(s, axis, &outer, &len, &inner);
    if (outer * len * inner == 0)
        return FT_OK;
    const int logsm = n->op == FT_OP_LOG_SOFTMAX;
    CU_DISPATCH_FLOAT(in[0].dtype, T,
                      return softmax_t<T>(k, n, (const T *)in[0].data, (T *)out[0].data, outer, len, inner, logsm));
    return bad_dtype(k, n, in[0].dtype);
}

static ft_status norm_entry(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int rms)
{
    const int axis = n->params.norm.axis;
    CU_DISPATCH_FLOAT(in[0].dtype, T, return norm_t<T>(k, n, in, out, axis, rms));
    return bad_dtype(k, n, in[0].dtype);
}

ft_status cu_layer_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return norm_entry(k, n, in, out, 0);
}

ft_status cu_rms_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return norm_entry(k, n, in, out, 1);
}
