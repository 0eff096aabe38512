/* CUDA reductions: reduce_* over any set of axes, argmax/argmin and cumsum
 * (topk lives in reduce_topk.cu).
 *
 * A reduction is planned as on the CPU (cpu/reduce.c): size-1 dims dropped,
 * adjacent kept / reduced dims merged. Two layouts remain:
 *   - rows: the innermost merged group is reduced; every output reduces
 *     segments of L contiguous elements (nseg of them, one per position of
 *     the other reduced groups). A warp or a whole block takes one output.
 *   - columns: the innermost group is kept (inner > 1); a 32 x 8 block takes
 *     up to 32 adjacent outputs, lanes along the columns so that every load
 *     instruction reads consecutive addresses, the 8 rows of the block (and
 *     lanes left over when inner < 32) split the reduced positions into
 *     contiguous streams that are combined in shared memory in a fixed order.
 * When the outputs are too few to fill the GPU, each output is split into S
 * pieces reduced by different groups into a workspace, then combined in
 * piece order by a finishing kernel: results never depend on timing.
 *
 * Accumulation matches the CPU's classes: floats (and ints for l2 and
 * log_sum_exp) in double, other integer reductions in wrapping 64-bit
 * unsigned arithmetic so that sums and products wrap exactly as in the dtype.
 * One kernel source serves reduce_*, argmax/argmin (a policy carrying the
 * (value, index) pair) and every dtype; the policy decides what is loaded,
 * how two partial results combine and how a result is stored. */
#include "cu.cuh"
#include "../runtime/numeric.h"

extern "C" {
#include "../graph/infer_math.h"
}

#include <math.h>
#include <string.h>

/* Integer stores of a double result: truncate, NaN -> 0, saturate (the
 * float stores are in cu.cuh). */
static __device__ __forceinline__ void cu_st_d(int8_t *y, int64_t i, double v) { y[i] = (int8_t)ft_sat_i64(v, INT8_MIN, INT8_MAX); }
static __device__ __forceinline__ void cu_st_d(int16_t *y, int64_t i, double v) { y[i] = (int16_t)ft_sat_i64(v, INT16_MIN, INT16_MAX); }
static __device__ __forceinline__ void cu_st_d(int32_t *y, int64_t i, double v) { y[i] = (int32_t)ft_sat_i64(v, INT32_MIN, INT32_MAX); }
static __device__ __forceinline__ void cu_st_d(int64_t *y, int64_t i, double v) { y[i] = ft_sat_i64(v, INT64_MIN, INT64_MAX); }
static __device__ __forceinline__ void cu_st_d(uint8_t *y, int64_t i, double v) { y[i] = (uint8_t)ft_sat_i64(v, 0, UINT8_MAX); }

namespace {

/* ---- shared helpers --------------------------------------------------------- */

/* Index arithmetic is 64-bit; most values fit 32 bits, where division is
 * several times cheaper. */
__device__ __forceinline__ int64_t udiv(int64_t a, int64_t b)
{
    if ((((uint64_t)a | (uint64_t)b) >> 32) == 0)
        return (int64_t)((uint32_t)a / (uint32_t)b);
    return (int64_t)((uint64_t)a / (uint64_t)b);
}

__host__ __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
__host__ __device__ __forceinline__ int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

template <class T> struct is_fp { static const bool value = false; };
template <> struct is_fp<__half> { static const bool value = true; };
template <> struct is_fp<__nv_bfloat16> { static const bool value = true; };
template <> struct is_fp<float> { static const bool value = true; };
template <> struct is_fp<double> { static const bool value = true; };


/* The shift of log_sum_exp's exp phase: a NaN or infinite maximum is the
 * result itself, and shifting by 0 keeps exp() from making NaN meanwhile. */
__device__ __forceinline__ double fin(double m) { return (m != m || fabs(m) == INFINITY) ? 0.0 : m; }

/* ---- plan ------------------------------------------------------------------- */

/* What a kernel does with a finished (output, piece) value. */
enum { OUT_FINAL, OUT_PART, OUT_M };

/* The CPU's plan (rows are its runs) plus the segment count the rows kernel
 * divides by. */
struct RPlan : ft_rplan {
    int64_t nseg;                             /* rows: nred / L */
};

/* Offset of position i of an odometer over nd dims (dim, str; the last
 * fastest): the kept dims of an output, or the reduced groups. */
__device__ __forceinline__ int64_t odo_off(int nd, const int64_t *dim, const int64_t *str, int64_t i)
{
    int64_t off = 0;
#pragma unroll
    for (int d = FT_MAX_RANK - 1; d >= 0; d--) {
        if (d < nd) {
            int64_t q = udiv(i, dim[d]);
            off += (i - q * dim[d]) * str[d];
            i = q;
        }
    }
    return off;
}

__device__ __forceinline__ int64_t outer_off(const RPlan &p, int64_t o) { return odo_off(p.nk, p.kdim, p.kstr, o); }

/* Offset of reduced position q (odometer over the reduced groups). */
__device__ __forceinline__ int64_t red_off(const RPlan &p, int64_t q) { return odo_off(p.nr, p.rdim, p.rstr, q); }

struct Odo {
    int64_t idx[FT_MAX_RANK];
    int64_t off;
};

__device__ __forceinline__ void odo_set(const RPlan &p, Odo &it, int64_t q)
{
    it.off = 0;
#pragma unroll
    for (int d = FT_MAX_RANK - 1; d >= 0; d--) {
        it.idx[d] = 0;
        if (d < p.nr) {
            int64_t t = udiv(q, p.rdim[d]);
            it.idx[d] = q - t * p.rdim[d];
            it.off += it.idx[d] * p.rstr[d];
            q = t;
        }
    }
}

__device__ __forceinline__ void odo_next(const RPlan &p, Odo &it)
{
#pragma unroll
    for (int d = FT_MAX_RANK - 1; d >= 0; d--) {
        if (d < p.nr) {
            it.off += p.rstr[d];
            if (++it.idx[d] < p.rdim[d])
                return;
            it.off -= p.rstr[d] * p.rdim[d];
            it.idx[d] = 0;
        }
    }
}

/* ---- policies ---------------------------------------------------------------- */

/* Fields every policy has, so the kernels can read them without knowing which. */
struct PBase {
    int kind;           /* K_* accumulated */
    int op;             /* R_* (finishing) */
    int mode;           /* OUT_* */
    int two_phase;      /* log_sum_exp in one launch: maximum, then sum of exp */
    int is_bool;
    int amax, last;     /* argmax / select_last_index */
    int64_t nred;
    double *mo;         /* OUT_M: per-output maxima */
    const double *m_in; /* K_EXP: per-output maxima from a previous launch */
};

/* Floats, and ints for l2 / log_sum_exp: double accumulation. */
template <class TT> struct FRed : PBase {
    typedef TT T;
    typedef double Acc;
    static const bool kLse = true;
    T *y;
    Acc *part;
    __device__ __forceinline__ Acc ident() const
    {
        return kind == K_PROD ? 1.0 : kind == K_MAX ? -INFINITY : kind == K_MIN ? INFINITY : 0.0;
    }
    __device__ __forceinline__ Acc get(const T *x, int64_t i, int64_t, double m) const
    {
        double v = cu_to_d(x[i]);
        switch (kind) {
        case K_ABS: return fabs(v);
        case K_SQ: return v * v;
        case K_EXP: return exp(v - m);
        default: return v;
        }
    }
    __device__ __forceinline__ Acc comb(Acc a, Acc b) const
    {
        switch (kind) {
        case K_MAX: return (a != a || b != b) ? (double)NAN : (a > b ? a : b);
        case K_MIN: return (a != a || b != b) ? (double)NAN : (a < b ? a : b);
        case K_PROD: return a * b;
        default: return a + b;
        }
    }
    __device__ __forceinline__ Acc shfl(Acc a, int o) const { return __shfl_xor_sync(0xffffffffu, a, o); }
    __device__ __forceinline__ double as_m(Acc a) const { return a; }
    __device__ __forceinline__ void emit(int64_t oi, int64_t pi, Acc a, double m) const
    {
        if (mode == OUT_PART) {
            part[pi] = a;
            return;
        }
        if (mode == OUT_M) {
            mo[oi] = a;
            return;
        }
        double v = a;
        if (op == R_MEAN)
            v /= (double)nred;
        else if (op == R_L2)
            v = sqrt(v);
        else if (op == R_LOGSUM)
            v = log(v);
        else if (op == R_LSE)
            v = (m != m || fabs(m) == INFINITY) ? m : m + log(v);
        cu_st_d(y, oi, v);
    }
};

/* Integer (and bool) reductions in wrapping 64-bit arithmetic; max/min compare signed. */
template <class TT> struct IRed : PBase {
    typedef TT T;
    typedef unsigned long long Acc;
    static const bool kLse = false;
    T *y;
    Acc *part;
    __device__ __forceinline__ Acc ident() const
    {
        return kind == K_PROD ? 1ull
               : kind == K_MAX ? (Acc)INT64_MIN
               : kind == K_MIN ? (Acc)INT64_MAX
                               : 0ull;
    }
    __device__ __forceinline__ Acc get(const T *x, int64_t i, int64_t, double) const
    {
        Acc u = (Acc)(long long)x[i];
        switch (kind) {
        case K_ABS: return (long long)u < 0 ? 0ull - u : u;
        case K_SQ: return u * u;
        default: return u;
        }
    }
    __device__ __forceinline__ Acc comb(Acc a, Acc b) const
    {
        switch (kind) {
        case K_MAX: return (long long)a > (long long)b ? a : b;
        case K_MIN: return (long long)a < (long long)b ? a : b;
        case K_PROD: return a * b;
        default: return a + b;
        }
    }
    __device__ __forceinline__ Acc shfl(Acc a, int o) const { return __shfl_xor_sync(0xffffffffu, a, o); }
    __device__ __forceinline__ double as_m(Acc) const { return 0.0; }
    __device__ __forceinline__ void emit(int64_t oi, int64_t pi, Acc a, double) const
    {
        if (mode == OUT_PART) {
            part[pi] = a;
            return;
        }
        if (op == R_MEAN)
            a = (Acc)((long long)a / (long long)nred);
        y[oi] = is_bool ? (T)(a != 0) : (T)a;
    }
};

/* argmax / argmin: the candidate (value, position). The order used to
 * combine is total (NaN above every number, ties broken by position), so any
 * combination order gives the CPU's sequential answer. */
template <class T> struct akey { typedef long long K; };
template <> struct akey<__half> { typedef float K; };
template <> struct akey<__nv_bfloat16> { typedef float K; };
template <> struct akey<float> { typedef float K; };
template <> struct akey<double> { typedef double K; };
__device__ __forceinline__ bool knan(float v) { return isnan(v); }
__device__ __forceinline__ bool knan(double v) { return isnan(v); }
__device__ __forceinline__ bool knan(long long) { return false; }
template <class T> __device__ __forceinline__ typename akey<T>::K kload(T v) { return (typename akey<T>::K)v; }
template <> __device__ __forceinline__ float kload<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float kload<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class K> struct ArgAcc {
    K v;
    long long i; /* -1: no candidate yet */
};

template <class TT> struct ArgP : PBase {
    typedef TT T;
    typedef typename akey<T>::K K;
    typedef ArgAcc<K> Acc;
    static const bool kLse = false;
    long long *y;
    Acc *part;
    __device__ __forceinline__ Acc ident() const
    {
        Acc a;
        a.v = (K)0;
        a.i = -1;
        return a;
    }
    __device__ __forceinline__ Acc get(const T *x, int64_t i, int64_t pos, double) const
    {
        Acc a;
        a.v = kload(x[i]);
        a.i = pos;
        return a;
    }
    /* a strictly before b in the answer's order */
    __device__ __forceinline__ bool before(const Acc &a, const Acc &b) const
    {
        bool an = knan(a.v), bn = knan(b.v);
        if (an || bn)
            return an && bn ? (last ? a.i > b.i : a.i < b.i) : an;
        if (a.v == b.v)
            return last ? a.i > b.i : a.i < b.i;
        return amax ? a.v > b.v : a.v < b.v;
    }
    __device__ __forceinline__ Acc comb(Acc a, Acc b) const
    {
        if (a.i < 0)
            return b;
        if (b.i < 0)
            return a;
        return before(b, a) ? b : a;
    }
    __device__ __forceinline__ Acc shfl(Acc a, int o) const
    {
        Acc r;
        r.v = __shfl_xor_sync(0xffffffffu, a.v, o);
        r.i = __shfl_xor_sync(0xffffffffu, a.i, o);
        return r;
    }
    __device__ __forceinline__ double as_m(Acc) const { return 0.0; }
    __device__ __forceinline__ void emit(int64_t oi, int64_t pi, Acc a, double) const
    {
        if (mode == OUT_PART)
            part[pi] = a;
        else
            y[oi] = a.i;
    }
};

/* ---- kernels ------------------------------------------------------------------ */

#define RED_BLOCK 256

/* Combine a value over a group of G threads (32: the warp; 256: the block).
 * Every thread of the group gets the same result; every thread of the block
 * must call (G == 256 synchronises). */
template <class P>
__device__ __forceinline__ typename P::Acc group_reduce(const P &p, typename P::Acc a, int G, typename P::Acc *sm)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        a = p.comb(a, p.shfl(a, o));
    if (G == 32)
        return a;
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = a;
    __syncthreads();
    typename P::Acc r = sm[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++)
        r = p.comb(r, sm[w]);
    __syncthreads();
    return r;
}

/* Rows layout: this thread's share of reduction units [u0, u1) of one output
 * (elements of the run when there is no other reduced group, else segments). */
template <class P>
__device__ typename P::Acc rows_acc(const P &p, const typename P::T *x, const RPlan &pl, int64_t base, int64_t u0,
                                    int64_t u1, int lane, int G, double m)
{
    typedef typename P::Acc Acc;
    typedef typename P::T T;
    Acc acc = p.ident();
    if (pl.nr == 0) {
        const T *xp = x + base;
        const int64_t g = G;
        int64_t t = u0 + lane;
        for (; t + 3 * g < u1; t += 4 * g) {
            Acc a0 = p.get(xp, t, t, m), a1 = p.get(xp, t + g, t + g, m);
            Acc a2 = p.get(xp, t + 2 * g, t + 2 * g, m), a3 = p.get(xp, t + 3 * g, t + 3 * g, m);
            acc = p.comb(acc, p.comb(p.comb(a0, a1), p.comb(a2, a3)));
        }
        for (; t < u1; t += g)
            acc = p.comb(acc, p.get(xp, t, t, m));
    } else if (2 * pl.L >= G) {
        /* Long runs: the group walks the segments together, lanes across the run. */
        Odo it;
        odo_set(pl, it, u0);
        for (int64_t s = u0; s < u1; s++) {
            const T *xp = x + base + it.off;
            for (int64_t i = lane; i < pl.L; i += G)
                acc = p.comb(acc, p.get(xp, i, i, m));
            odo_next(pl, it);
        }
    } else {
        /* Short runs: each lane takes whole segments. */
        for (int64_t s = u0 + lane; s < u1; s += G) {
            const T *xp = x + base + red_off(pl, s);
            for (int64_t i = 0; i < pl.L; i++)
                acc = p.comb(acc, p.get(xp, i, i, m));
        }
    }
    return acc;
}

/* Rows layout: item = (output o, piece s), G threads per item. */
template <class P>
__global__ void __launch_bounds__(RED_BLOCK) red_rows(P p, const typename P::T *x, RPlan pl, int S, int G)
{
    typedef typename P::Acc Acc;
    __shared__ __align__(16) unsigned char raw[(RED_BLOCK / 32) * sizeof(Acc)];
    Acc *sm = reinterpret_cast<Acc *>(raw);
    const int gpb = (int)blockDim.x / G, g = (int)threadIdx.x / G, lane = (int)threadIdx.x % G;
    const int64_t items = pl.nouter * S;
    const int64_t units = pl.nr == 0 ? pl.nred : pl.nseg;
    for (int64_t it0 = (int64_t)blockIdx.x * gpb; it0 < items; it0 += (int64_t)gridDim.x * gpb) {
        const int64_t it = it0 + g;
        const bool valid = it < items;
        int64_t o = 0, base = 0, u0 = 0, u1 = 0;
        double m = 0;
        if (valid) {
            o = udiv(it, S);
            int64_t s = it - o * S;
            base = outer_off(pl, o);
            u0 = units * s / S;
            u1 = units * (s + 1) / S;
            if (p.kind == K_EXP)
                m = fin(p.m_in[o]);
        }
        Acc a = valid ? rows_acc(p, x, pl, base, u0, u1, lane, G, m) : p.ident();
        a = group_reduce(p, a, G, sm);
        if constexpr (P::kLse) {
            if (p.two_phase) {
                m = p.as_m(a);
                P q = p;
                q.kind = K_EXP;
                Acc b = valid ? rows_acc(q, x, pl, base, u0, u1, lane, G, fin(m)) : q.ident();
                a = group_reduce(q, b, G, sm);
            }
        }
        if (valid && lane == 0)
            p.emit(o, it, a, m);
    }
}

/* Columns layout: one stream [r0, r1) of reduced positions for one column;
 * xp points at the column's element of reduced position 0. */
template <class P>
__device__ typename P::Acc cols_acc(const P &p, const typename P::T *xp, const RPlan &pl, int64_t r0, int64_t r1,
                                    double m)
{
    typedef typename P::Acc Acc;
    Acc acc = p.ident();
    if (pl.nr == 1) {
        const int64_t st = pl.rstr[0];
        int64_t r = r0;
        for (; r + 3 < r1; r += 4) {
            Acc a0 = p.get(xp, r * st, r, m), a1 = p.get(xp, (r + 1) * st, r + 1, m);
            Acc a2 = p.get(xp, (r + 2) * st, r + 2, m), a3 = p.get(xp, (r + 3) * st, r + 3, m);
            acc = p.comb(acc, p.comb(p.comb(a0, a1), p.comb(a2, a3)));
        }
        for (; r < r1; r++)
            acc = p.comb(acc, p.get(xp, r * st, r, m));
    } else {
        Odo it;
        odo_set(pl, it, r0);
        for (int64_t r = r0; r < r1; r++) {
            acc = p.comb(acc, p.get(xp, it.off, r, m));
            odo_next(pl, it);
        }
    }
    return acc;
}

/* Combine the streams of each column in stream order; the result is valid in
 * threads (ty 0, lane < cpt). Every thread of the block must call. */
template <class P>
__device__ __forceinline__ typename P::Acc cols_combine(const P &p, typename P::Acc a, typename P::Acc *sm, int cpt,
                                                        int nsub, int ns)
{
    sm[threadIdx.y * 32 + threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0 && (int)threadIdx.x < cpt) {
        a = sm[threadIdx.x];
        for (int sid = 1; sid < ns; sid++)
            a = p.comb(a, sm[(sid / nsub) * 32 + (sid % nsub) * cpt + (int)threadIdx.x]);
    }
    __syncthreads();
    return a;
}

/* Columns layout: block 32 x 8, item = (outer o, tile of cpt columns, piece s).
 * Lane l serves column l % cpt as stream l / cpt (several streams per column
 * when inner < 32); stream id = ty * nsub + sub. */
template <class P>
__global__ void __launch_bounds__(RED_BLOCK) red_cols(P p, const typename P::T *x, RPlan pl, int S)
{
    typedef typename P::Acc Acc;
    __shared__ __align__(16) unsigned char raw[RED_BLOCK * sizeof(Acc)];
    __shared__ double msh[32];
    Acc *sm = reinterpret_cast<Acc *>(raw);
    const int lane = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int cpt = pl.inner < 32 ? (int)pl.inner : 32, nsub = 32 / cpt, ns = nsub * 8;
    const int cl = lane % cpt, sub = lane / cpt, sid = ty * nsub + sub;
    const int64_t ntiles = (pl.inner + cpt - 1) / cpt, items = pl.nouter * ntiles * S;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t q = udiv(it, S), s = it - q * S;
        const int64_t o = udiv(q, ntiles), tile = q - o * ntiles;
        const int64_t c = tile * cpt + cl, oi = o * pl.inner + c;
        const bool valid = sub < nsub && c < pl.inner;
        const int64_t rs = pl.nred * s / S, re = pl.nred * (s + 1) / S;
        const int64_t r0 = rs + (re - rs) * sid / ns, r1 = rs + (re - rs) * (sid + 1) / ns;
        const typename P::T *xp = x + outer_off(pl, o) + c;
        double m = 0;
        if (valid && p.kind == K_EXP)
            m = fin(p.m_in[oi]);
        Acc a = valid ? cols_acc(p, xp, pl, r0, r1, m) : p.ident();
        a = cols_combine(p, a, sm, cpt, nsub, ns);
        if constexpr (P::kLse) {
            if (p.two_phase) {
                if (ty == 0 && lane < cpt)
                    msh[lane] = p.as_m(a);
                __syncthreads();
                m = msh[cl];
                P q2 = p;
                q2.kind = K_EXP;
                Acc b = valid ? cols_acc(q2, xp, pl, r0, r1, fin(m)) : q2.ident();
                a = cols_combine(q2, b, sm, cpt, nsub, ns);
            }
        }
        if (ty == 0 && sub == 0 && valid)
            p.emit(oi, oi * S + s, a, m);
    }
}

/* Combine the S pieces of each output in piece order. */
template <class P> __global__ void red_final(P p, const typename P::Acc *part, int64_t nout, int S)
{
    for (int64_t oi = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; oi < nout; oi += (int64_t)gridDim.x * blockDim.x) {
        typename P::Acc a = part[oi * S];
        for (int s = 1; s < S; s++)
            a = p.comb(a, part[oi * S + s]);
        p.emit(oi, oi, a, p.kind == K_EXP ? p.m_in[oi] : 0.0);
    }
}

template <class T> __global__ void fill_d(T *y, int64_t n, double v)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        cu_st_d(y, i, v);
}

/* ---- host side ------------------------------------------------------------------ */

static size_t align_up(size_t v) { return (v + 255) & ~(size_t)255; }

template <class P> static void launch_pass(ft_kctx *k, const P &p, const typename P::T *x, const RPlan &pl, int S, int G)
{
    cudaStream_t st = k->be->stream;
    const int64_t cap = (int64_t)k->be->sm_count * 32;
    if (pl.inner > 1) {
        int cpt = pl.inner < 32 ? (int)pl.inner : 32;
        int64_t items = pl.nouter * ((pl.inner + cpt - 1) / cpt) * S;
        red_cols<P><<<(unsigned)min64(items, cap), dim3(32, RED_BLOCK / 32), 0, st>>>(p, x, pl, S);
    } else {
        int64_t gpb = RED_BLOCK / G, blocks = (pl.nouter * S + gpb - 1) / gpb;
        red_rows<P><<<(unsigned)min64(blocks, cap), RED_BLOCK, 0, st>>>(p, x, pl, S, G);
    }
}

template <class P> static void launch_final(ft_kctx *k, const P &p, const typename P::Acc *part, int64_t nout, int S)
{
    red_final<P><<<cu_grid(k->be, (uint64_t)nout), CU_BLOCK, 0, k->be->stream>>>(p, part, nout, S);
}

/* Choose the split, run the passes. p has kind, op and the output set. */
template <class P>
static ft_status red_run(ft_kctx *k, const ft_node *n, P p, const typename P::T *x, const RPlan &pl, int64_t nout)
{
    typedef typename P::Acc Acc;
    const int64_t target = (int64_t)k->be->sm_count * 8; /* blocks of 256 that fill the GPU */
    int S = 1, G = 32;
    if (pl.inner > 1) {
        int cpt = pl.inner < 32 ? (int)pl.inner : 32, ns = (32 / cpt) * 8;
        int64_t blocks = pl.nouter * ((pl.inner + cpt - 1) / cpt);
        int64_t lim = pl.nred / (ns * 16);
        if (blocks < target && lim > 1)
            S = (int)min64(min64((target + blocks - 1) / blocks, lim), 1024);
    } else {
        G = pl.nred >= 1024 ? 256 : 32;
        int64_t gpb = RED_BLOCK / G, blocks = (pl.nouter + gpb - 1) / gpb;
        int64_t lim = pl.nred / ((int64_t)G * 16);
        if (pl.nr > 0)
            lim = min64(lim, 2 * pl.L >= G ? pl.nseg : pl.nseg / G);
        if (blocks < target && lim > 1)
            S = (int)min64(min64((target + blocks - 1) / blocks, lim), 1024);
    }
    const bool lse = P::kLse && p.op == R_LSE;
    p.nred = pl.nred;
    if (S == 1) {
        p.mode = OUT_FINAL;
        p.two_phase = lse;
        launch_pass(k, p, x, pl, 1, G);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    size_t pbytes = align_up((size_t)nout * (size_t)S * sizeof(Acc)), mbytes = lse ? (size_t)nout * sizeof(double) : 0;
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, pbytes + mbytes, &ws);
    if (rc != FT_OK)
        return rc;
    Acc *part = (Acc *)ws;
    p.part = part;
    p.two_phase = 0;
    if (lse) {
        double *m = (double *)((char *)ws + pbytes);
        p.kind = K_MAX;
        p.mode = OUT_PART;
        launch_pass(k, p, x, pl, S, G);
        CU_LAUNCHED(k, n);
        p.mode = OUT_M;
        p.mo = m;
        launch_final(k, p, part, nout, S);
        CU_LAUNCHED(k, n);
        p.kind = K_EXP;
        p.m_in = m;
    }
    p.mode = OUT_PART;
    launch_pass(k, p, x, pl, S, G);
    CU_LAUNCHED(k, n);
    p.mode = OUT_FINAL;
    launch_final(k, p, part, nout, S);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T>
static ft_status reduce_t(ft_kctx *k, const ft_node *n, const T *x, void *y, const RPlan &pl, int64_t nout, ft_rop op,
                          int ipath, int is_bool)
{
    if constexpr (!is_fp<T>::value) {
        if (ipath) {
            IRed<T> p = IRed<T>();
            p.kind = ft_reduce_kind(op), p.op = op, p.is_bool = is_bool, p.y = (T *)y;
            return red_run(k, n, p, x, pl, nout);
        }
    }
    (void)ipath, (void)is_bool;
    FRed<T> p = FRed<T>();
    p.kind = ft_reduce_kind(op), p.op = op, p.y = (T *)y;
    return red_run(k, n, p, x, pl, nout);
}

template <class T> static ft_status fill_identity(ft_kctx *k, const ft_node *n, void *y, int64_t nout, double v)
{
    fill_d<T><<<cu_grid(k->be, (uint64_t)nout), CU_BLOCK, 0, k->be->stream>>>((T *)y, nout, v);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

static ft_status bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(dt), ft_op_name(n->op));
}

template <class T>
static ft_status arg_t(ft_kctx *k, const ft_node *n, const T *x, long long *y, const RPlan &pl, int64_t nout, int amax,
                       int last)
{
    ArgP<T> p = ArgP<T>();
    p.kind = K_SUM, p.op = R_SUM, p.amax = amax, p.last = last, p.y = y;
    return red_run(k, n, p, x, pl, nout);
}

/* ---- cumsum ------------------------------------------------------------------- */

/* Floats accumulate in double, ints in wrapping 64-bit arithmetic, as the CPU. */
template <class T> struct cs_acc { typedef unsigned long long A; };
template <> struct cs_acc<__half> { typedef double A; };
template <> struct cs_acc<__nv_bfloat16> { typedef double A; };
template <> struct cs_acc<float> { typedef double A; };
template <> struct cs_acc<double> { typedef double A; };

template <class T> __device__ __forceinline__ typename cs_acc<T>::A cs_ld(T v)
{
    if constexpr (is_fp<T>::value)
        return cu_to_d(v);
    else
        return (unsigned long long)(long long)v;
}

template <class T> __device__ __forceinline__ void cs_st(T *y, int64_t i, typename cs_acc<T>::A a)
{
    if constexpr (is_fp<T>::value)
        cu_st_d(y, i, a);
    else
        y[i] = (T)a;
}

#define CS_E 8
#define CS_CH (RED_BLOCK * CS_E)

/* Inclusive prefix sum of v over the warp's lanes; *ex gets the exclusive one (0 on lane 0). */
template <class A> __device__ __forceinline__ A warp_scan(A v, int lane, A *ex)
{
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        A t = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o)
            v = v + t;
    }
    A e = __shfl_up_sync(0xffffffffu, v, 1);
    *ex = lane == 0 ? (A)0 : e;
    return v;
}

/* Contiguous rows, item = (row, chunk of CS_CH scan positions). mode 0: the
 * chunk's total into tot[item]; mode 1: the outputs, starting from tot[item]
 * (the exclusive prefix of the chunk totals) when tot is given. Scan position
 * j is element len-1-j with reverse. */
template <class T>
__global__ void __launch_bounds__(RED_BLOCK) cs_rows(const T *x, T *y, int64_t rows, int64_t len, int64_t nch,
                                                     typename cs_acc<T>::A *tot, int mode, int excl, int rev)
{
    typedef typename cs_acc<T>::A A;
    __shared__ A buf[CS_CH];
    __shared__ A wsum[RED_BLOCK / 32];
    const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5;
    const int64_t items = rows * nch;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
        const int64_t row = udiv(it, nch), j0 = (it - row * nch) * CS_CH;
        const int cnt = (int)min64(CS_CH, len - j0);
        const T *xr = x + row * len;
        for (int e = tid; e < CS_CH; e += RED_BLOCK) {
            int64_t j = j0 + e;
            buf[e] = e < cnt ? cs_ld(xr[rev ? len - 1 - j : j]) : (A)0;
        }
        __syncthreads();
        A loc[CS_E], s = 0;
#pragma unroll
        for (int q = 0; q < CS_E; q++) {
            s = s + buf[tid * CS_E + q];
            loc[q] = s;
        }
        A ex, v = warp_scan(s, lane, &ex);
        if (lane == 31)
            wsum[w] = v;
        __syncthreads();
        if (mode == 0) {
            if (tid == 0) {
                A t = 0;
                for (int i = 0; i < RED_BLOCK / 32; i++)
                    t = t + wsum[i];
                tot[it] = t;
            }
            __syncthreads();
            continue;
        }
        A wp = 0;
        for (int i = 0; i < w; i++)
            wp = wp + wsum[i];
        const A base = (tot ? tot[it] : (A)0) + (wp + ex);
#pragma unroll
        for (int q = 0; q < CS_E; q++)
            buf[tid * CS_E + q] = excl ? (q ? base + loc[q - 1] : base) : base + loc[q];
        __syncthreads();
        T *yr = y + row * len;
        for (int e = tid; e < cnt; e += RED_BLOCK) {
            int64_t j = j0 + e;
            cs_st(yr, rev ? len - 1 - j : j, buf[e]);
        }
        __syncthreads();
    }
}

/* Strided axis: thread per (outer o, chunk, column c), c fastest, a sequential
 * scan over the chunk's positions; modes as cs_rows, tot indexed like the
 * threads ((o * nch + chunk) * inner + c). Each element is read before its
 * output is written, so in-place use is safe. */
template <class T>
__global__ void cs_cols(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, int64_t nch, int64_t clen,
                        typename cs_acc<T>::A *tot, int mode, int excl, int rev)
{
    typedef typename cs_acc<T>::A A;
    const int64_t total = outer * nch * inner;
    for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < total; id += (int64_t)gridDim.x * blockDim.x) {
        const int64_t q = udiv(id, inner), c = id - q * inner;
        const int64_t o = udiv(q, nch), ch = q - o * nch;
        const int64_t j0 = ch * clen, j1 = min64(len, j0 + clen);
        const int64_t off = o * len * inner + c;
        A acc = (mode == 1 && tot) ? tot[id] : (A)0;
        for (int64_t j = j0; j < j1; j++) {
            int64_t e = off + (rev ? len - 1 - j : j) * inner;
            A v = cs_ld(x[e]);
            if (mode == 0) {
                acc = acc + v;
            } else if (excl) {
                cs_st(y, e, acc);
                acc = acc + v;
            } else {
                acc = acc + v;
                cs_st(y, e, acc);
            }
        }
        if (mode == 0)
            tot[id] = acc;
    }
}

/* Chunk totals -> exclusive prefixes, a warp per line of nch totals (line
 * l = o * inner + c holds tot[(o * nch + j) * inner + c]). */
template <class A> __global__ void cs_carry(A *tot, int64_t lines, int64_t nch, int64_t inner)
{
    const int lane = (int)(threadIdx.x & 31);
    const int64_t nw = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t l = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; l < lines; l += nw) {
        const int64_t o = udiv(l, inner), c = l - o * inner;
        A *tp = tot + o * nch * inner + c;
        A carry = 0;
        for (int64_t j0 = 0; j0 < nch; j0 += 32) {
            const int64_t j = j0 + lane;
            A v = j < nch ? tp[j * inner] : (A)0;
            A ex;
            v = warp_scan(v, lane, &ex);
            if (j < nch)
                tp[j * inner] = carry + ex;
            carry = carry + __shfl_sync(0xffffffffu, v, 31);
        }
    }
}

/* The passes of a cumsum over lines split into nch chunks each (chunk totals
 * at tot[(o * nch + j) * inner + c] for line o * inner + c): one pass when
 * nch is 1, else chunk totals, their carries (cs_carry), then the chunks with
 * their carries. pass(ws, mode) launches the chunk kernel (mode 1: final). */
template <class A, class P>
static ft_status cs_passes(ft_kctx *k, const ft_node *n, int64_t lines, int64_t nch, int64_t inner, P pass)
{
    if (nch == 1) {
        pass((A *)NULL, 1);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, (size_t)(lines * nch) * sizeof(A), &ws);
    if (rc != FT_OK)
        return rc;
    pass((A *)ws, 0);
    CU_LAUNCHED(k, n);
    cs_carry<A><<<cu_grid(k->be, (uint64_t)lines * 32), CU_BLOCK, 0, k->be->stream>>>((A *)ws, lines, nch, inner);
    CU_LAUNCHED(k, n);
    pass((A *)ws, 1);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T>
static ft_status cumsum_t(ft_kctx *k, const ft_node *n, const T *x, T *y, int64_t outer, int64_t len, int64_t inner,
                          int excl, int rev)
{
    typedef typename cs_acc<T>::A A;
    cudaStream_t st = k->be->stream;
    const int64_t cap = (int64_t)k->be->sm_count * 32;
    if (inner == 1) {
        const int64_t nch = (len + CS_CH - 1) / CS_CH, items = outer * nch;
        const unsigned grid = (unsigned)min64(items, cap);
        return cs_passes<A>(k, n, outer, nch, 1, [&](A *ws, int mode) {
            cs_rows<T><<<grid, RED_BLOCK, 0, st>>>(x, y, outer, len, nch, ws, mode, excl, rev);
        });
    }
    /* Enough (line, chunk) threads to fill the GPU, chunks of at least 64. */
    const int64_t lines = outer * inner, want = (int64_t)k->be->sm_count * 2048;
    int64_t nch = 1;
    if (lines < want)
        nch = min64((want + lines - 1) / lines, max64(1, len / 64));
    const int64_t clen = (len + nch - 1) / nch;
    nch = (len + clen - 1) / clen;
    const int64_t total = lines * nch;
    const unsigned grid = cu_grid(k->be, (uint64_t)total);
    return cs_passes<A>(k, n, lines, nch, inner, [&](A *ws, int mode) {
        cs_cols<T><<<grid, CU_BLOCK, 0, st>>>(x, y, outer, len, inner, nch, clen, ws, mode, excl, rev);
    });
}

} // namespace

/* ---- entry points ------------------------------------------------------------ */

ft_status cu_reduce(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const ft_dtype dt = in[0].dtype;
    const int64_t nout = (int64_t)ft_numel(&out[0].shape);
    if (nout == 0)
        return FT_OK;
    const ft_rop op = ft_reduce_op(n->op);
    if (dt == FT_BOOL && op != R_MAX && op != R_MIN)
        return bad_dtype(k, n, dt);
    if (ft_numel(s) == 0) {
        /* Outputs exist, so only reduced dims are empty. */
        const double v = ft_reduce_identity(op, dt);
        CU_DISPATCH(dt, T, return fill_identity<T>(k, n, out[0].data, nout, v));
        return bad_dtype(k, n, dt);
    }
    const int *red = n->params.reduce.red;
    RPlan pl;
    ft_reduce_plan(s, red, &pl);
    pl.nseg = pl.nred / pl.L;
    const int ipath = !ft_dtype_is_float(dt) && op != R_L2 && op != R_LSE && op != R_LOGSUM;
    CU_DISPATCH(dt, T,
                return reduce_t<T>(k, n, (const T *)in[0].data, out[0].data, pl, nout, op, ipath, dt == FT_BOOL));
    return bad_dtype(k, n, dt);
}

ft_status cu_arg(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const int axis = n->params.reduce.axis;
    const int amax = n->op == FT_OP_ARGMAX, last = n->params.reduce.select_last;
    int64_t outer, len, inner;
    ft_reduce_around_axis(s, axis, &outer, &len, &inner);
    if (outer * inner == 0)
        return FT_OK; /* len >= 1: inference refuses an empty axis (graph/infer_math.c) */
    /* [outer, len, inner] as a reduction plan: one reduced group. */
    RPlan pl;
    memset(&pl, 0, sizeof pl);
    pl.nouter = outer;
    pl.nred = len;
    pl.inner = inner;
    if (outer > 1) {
        pl.nk = 1;
        pl.kdim[0] = outer;
        pl.kstr[0] = len * inner;
    }
    if (inner == 1) {
        pl.L = len;
        pl.nseg = 1;
    } else {
        pl.L = 1;
        pl.nr = 1;
        pl.rdim[0] = len;
        pl.rstr[0] = inner;
        pl.nseg = len;
    }
    const ft_dtype dt = in[0].dtype;
    if (dt == FT_BOOL)
        return bad_dtype(k, n, dt);
    CU_DISPATCH(dt, T,
                return arg_t<T>(k, n, (const T *)in[0].data, (long long *)out[0].data, pl, outer * inner, amax, last));
    return bad_dtype(k, n, dt);
}

ft_status cu_cumsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const int axis = n->params.reduce.axis;
    const int excl = n->params.reduce.exclusive, rev = n->params.reduce.reverse;
    int64_t outer, len, inner;
    ft_reduce_around_axis(s, axis, &outer, &len, &inner);
    if (outer * len * inner == 0)
        return FT_OK;
    const ft_dtype dt = in[0].dtype;
    if (dt == FT_BOOL)
        return bad_dtype(k, n, dt);
    CU_DISPATCH(dt, T,
                return cumsum_t<T>(k, n, (const T *)in[0].data, (T *)out[0].data, outer, len, inner, excl, rev));
    return bad_dtype(k, n, dt);
}
