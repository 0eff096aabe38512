/* CUDA pooling and resize (cu.cuh, pool.cu): max_pool (floats, i8, u8),
 * average_pool, lp_pool, the global pools (floats) and resize (floats), channels-first.
 * The semantic references are src/cpu/pool.c and src/cpu/resize.c, whose
 * formulas, summation orders and double-precision arithmetic are reproduced
 * here so that results agree bit for bit wherever the CPU's are defined by
 * one order (windows, resize), and within double rounding elsewhere (global
 * average). f16/bf16 take the CPU's path through f32: loads widen, a double
 * result is rounded to f32 and then to the 16-bit type.
 *
 * Per-axis window bounds and resize source cells are computed once per
 * output coordinate of each axis by a small kernel into the workspace; the
 * main kernels run one thread per output element and look them up. */
#include "cu.cuh"
extern "C" {
#include "../graph/infer_pool.h"
#include "../graph/sample.h"
}

#include <limits.h>
#include <math.h>
#include <string.h>

namespace {

/* ---- helpers ---------------------------------------------------------------------------- */

/* A double result stored as the CPU does: f32 and the 16-bit floats through
 * one rounding to f32 (the 16-bit ones then rounded again, as the CPU's f32
 * path does), f64 as is. */
template <class T> __device__ __forceinline__ T from_double(double v) { return (T)v; }
template <> __device__ __forceinline__ float from_double<float>(double v) { return __double2float_rn(v); }
template <> __device__ __forceinline__ __half from_double<__half>(double v)
{
    return __float2half_rn(__double2float_rn(v));
}
template <> __device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double v)
{
    return __float2bfloat16_rn(__double2float_rn(v));
}

/* The NaN the CPU stores for a max over a NaN: C's NAN (0x7fc00000) in f32,
 * widened to f64, or narrowed by ft_f32_to_f16 / ft_f32_to_bf16. */
template <class T> __device__ __forceinline__ T nan_out() { return T(); }
template <> __device__ __forceinline__ float nan_out<float>() { return __int_as_float(0x7fc00000); }
template <> __device__ __forceinline__ double nan_out<double>() { return __longlong_as_double(0x7ff8000000000000LL); }
template <> __device__ __forceinline__ __half nan_out<__half>() { return __ushort_as_half((unsigned short)0x7e00); }
template <> __device__ __forceinline__ __nv_bfloat16 nan_out<__nv_bfloat16>()
{
    return __ushort_as_bfloat16((unsigned short)0x7fc0);
}

/* Start of a max (the result of an empty window) in the compare type. */
template <class A> __device__ __forceinline__ A lowest();
template <> __device__ __forceinline__ float lowest<float>() { return -INFINITY; }
template <> __device__ __forceinline__ double lowest<double>() { return -(double)INFINITY; }
template <> __device__ __forceinline__ int8_t lowest<int8_t>() { return INT8_MIN; }
template <> __device__ __forceinline__ uint8_t lowest<uint8_t>() { return 0; }

template <class A> __device__ __forceinline__ bool is_nan(A v) { return v != v; }
template <> __device__ __forceinline__ bool is_nan<int8_t>(int8_t) { return false; }
template <> __device__ __forceinline__ bool is_nan<uint8_t>(uint8_t) { return false; }

ft_status no_kernel(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "%s: no cuda kernel for %s", ft_op_name(n->op), ft_dtype_name(dt));
}

/* ---- max_pool, average_pool ------------------------------------------------------------- */

/* Per output position of one axis: the first input cell of its window inside
 * the input, how many window cells are inside the input, and how many are
 * inside the padded input (the count_include_pad divisor). */
struct ptab {
    int64_t first, cnt, cntpad;
};

struct tab_args {
    int64_t total;
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
};

__global__ void __launch_bounds__(CU_BLOCK) pool_tab_kernel(ptab *__restrict__ tab, tab_args a)
{
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        int i = 0;
        int64_t p = e;
        while (i < 2 && p >= a.out[i])
            p -= a.out[i++];
        const int64_t in = a.in[i], k = a.k[i], d = a.d[i], pe = a.pe[i];
        const int64_t start = p * a.s[i] - a.pb[i]; /* >= -pb */
        /* window cells start + j*d, j in [0, k): the ones in [0, in) */
        int64_t jlo = start >= 0 ? 0 : (-start + d - 1) / d;
        int64_t jhi = start > in - 1 ? 0 : (in - 1 - start) / d + 1;
        if (jhi > k)
            jhi = k;
        int64_t jpad = start > in + pe - 1 ? 0 : (in + pe - 1 - start) / d + 1;
        ptab t;
        t.cnt = jhi > jlo ? jhi - jlo : 0;
        t.first = t.cnt ? start + jlo * d : 0; /* never point outside the input */
        t.cntpad = jpad < k ? jpad : k;
        tab[e] = t;
    }
}

struct pool_args {
    int64_t total;
    cu_fastdiv o0, o1, o2;
    int64_t in1, in2, plane;
    int64_t dd, dh, dw; /* dilation steps in elements */
    int64_t t1, t2;     /* table offsets of axes 1 and 2 (axis 0 at 0) */
    int incl;
};

/* The window of output t: plane p, tables of its three coordinates. */
__device__ __forceinline__ int64_t pool_locate(const pool_args &a, const ptab *tab, int64_t t, ptab &td, ptab &th,
                                               ptab &tw)
{
    uint64_t r = (uint64_t)t, q;
    q = cu_fastdiv_q(a.o2, r);
    const int64_t ow = (int64_t)(r - q * a.o2.d);
    r = q;
    q = cu_fastdiv_q(a.o1, r);
    const int64_t oh = (int64_t)(r - q * a.o1.d);
    r = q;
    q = cu_fastdiv_q(a.o0, r);
    const int64_t od = (int64_t)(r - q * a.o0.d);
    td = tab[od];
    th = tab[a.t1 + oh];
    tw = tab[a.t2 + ow];
    return (int64_t)q * a.plane + (td.first * a.in1 + th.first) * a.in2 + tw.first;
}

/* Max with NaN propagation for floats (a NaN anywhere in the window wins);
 * an empty window gives -inf or the int minimum. Same visiting order and
 * strict compare as the CPU, so the sign of a zero maximum agrees too. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    maxpool_kernel(T *__restrict__ y, const T *__restrict__ x, const ptab *__restrict__ tab, pool_args a)
{
    typedef typename cu_acc<T>::type A;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        ptab td, th, tw;
        const T *xw = x + pool_locate(a, tab, t, td, th, tw);
        A m = lowest<A>();
        bool nan = false;
        for (int64_t i = 0; i < td.cnt; i++)
            for (int64_t j = 0; j < th.cnt; j++) {
                const T *row = xw + i * a.dd + j * a.dh;
                for (int64_t c = 0; c < tw.cnt; c++) {
                    A v = cu_load(row, c * a.dw);
                    m = v > m ? v : m;
                    nan |= is_nan(v);
                }
            }
        if (nan)
            y[t] = nan_out<T>();
        else
            cu_store(y, t, m);
    }
}

/* max_pool with Indices, as the CPU's maxpool_idx: the value and the flat
 * position in the input (N and C included; the spatial strides sd, sh, sw
 * row- or column-major) of the first cell holding it, the first NaN holding
 * it for good; -1 for an empty window. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    maxpool_idx_kernel(T *__restrict__ y, int64_t *__restrict__ yi, const T *__restrict__ x,
                       const ptab *__restrict__ tab, pool_args a, int64_t sd, int64_t sh, int64_t sw, int64_t d0,
                       int64_t d1)
{
    typedef typename cu_acc<T>::type A;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        ptab td, th, tw;
        const int64_t off = pool_locate(a, tab, t, td, th, tw);
        const T *xw = x + off;
        const int64_t base = off / a.plane * a.plane;
        A m = lowest<A>();
        bool nan = false;
        int64_t at = -1;
        for (int64_t i = 0; i < td.cnt; i++)
            for (int64_t j = 0; j < th.cnt; j++) {
                const T *row = xw + i * a.dd + j * a.dh;
                for (int64_t c = 0; c < tw.cnt; c++) {
                    A v = cu_load(row, c * a.dw);
                    if (!nan && (v > m || is_nan(v) || at < 0)) {
                        m = v, nan = is_nan(v);
                        at = (td.first + i * d0) * sd + (th.first + j * d1) * sh + (tw.first + c * a.dw) * sw;
                    }
                }
            }
        if (nan)
            y[t] = nan_out<T>();
        else
            cu_store(y, t, m);
        yi[t] = at < 0 ? -1 : base + at;
    }
}

/* (sum over the window cells inside the input of |x|^p)^(1/p), as on the CPU. */
__device__ __forceinline__ double lp_term(double v, int p) { return p == 1 ? fabs(v) : p == 2 ? v * v : pow(fabs(v), (double)p); }
__device__ __forceinline__ double lp_root(double s, int p) { return p == 1 ? s : p == 2 ? sqrt(s) : pow(s, 1.0 / (double)p); }

/* Window sums in double in the CPU's order. average_pool (LP false): the mean
 * over the window cells inside the input; the divisor also counts the
 * padding cells (not the ceil_mode overhang) with count_include_pad. No input
 * cell and no padding counted gives 0/0 = NaN, as on the CPU. lp_pool (LP
 * true): the p-th root of the sum of |x|^p. */
template <class T, bool LP>
__global__ void __launch_bounds__(CU_BLOCK)
    sumpool_kernel(T *__restrict__ y, const T *__restrict__ x, const ptab *__restrict__ tab, pool_args a, int pw)
{
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        ptab td, th, tw;
        const T *xw = x + pool_locate(a, tab, t, td, th, tw);
        double sum = 0;
        for (int64_t i = 0; i < td.cnt; i++)
            for (int64_t j = 0; j < th.cnt; j++) {
                const T *row = xw + i * a.dd + j * a.dh;
                for (int64_t c = 0; c < tw.cnt; c++) {
                    double v = (double)cu_load(row, c * a.dw);
                    sum += LP ? lp_term(v, pw) : v;
                }
            }
        if (LP) {
            y[t] = from_double<T>(lp_root(sum, pw));
        } else {
            int64_t cdh = a.incl ? td.cntpad * th.cntpad : td.cnt * th.cnt;
            double cnt = __dmul_rn((double)cdh, (double)(a.incl ? tw.cntpad : tw.cnt));
            y[t] = from_double<T>(sum / cnt);
        }
    }
}

/* avg: 0 max_pool, 1 average_pool, 2 lp_pool */
ft_status run_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int avg)
{
    ft_dtype dt = in[0].dtype;
    int ok = 0;
    switch (dt) {
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: ok = 1; break;
    case FT_I8: case FT_U8: ok = !avg; break;
    case FT_I16: case FT_I32: case FT_I64: case FT_U16: case FT_U32: case FT_U64: case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT:
        break;
    }
    if (!ok)
        return no_kernel(k, n, dt);
    uint64_t numel = ft_numel(&out[0].shape);
    if (numel == 0)
        return FT_OK;
    ft_pool_geom g;
    ft_pool_geom_of(&n->params.pool, &in[0].shape, &out[0].shape, &g);
    tab_args ta;
    memset(&ta, 0, sizeof ta);
    ta.total = g.out[0] + g.out[1] + g.out[2];
    for (int i = 0; i < 3; i++) {
        ta.in[i] = g.in[i], ta.out[i] = g.out[i], ta.k[i] = g.k[i], ta.s[i] = g.s[i];
        ta.d[i] = g.d[i], ta.pb[i] = g.pb[i], ta.pe[i] = g.pe[i];
    }
    void *ws = NULL;
    ft_status st = cu_workspace(k, n, (size_t)ta.total * sizeof(ptab), &ws);
    if (st)
        return st;
    ptab *tab = (ptab *)ws;
    cudaStream_t s = k->be->stream;
    pool_tab_kernel<<<cu_grid(k->be, (uint64_t)ta.total), CU_BLOCK, 0, s>>>(tab, ta);
    CU_LAUNCHED(k, n);

    pool_args a;
    memset(&a, 0, sizeof a);
    a.total = (int64_t)numel;
    a.o0 = cu_fastdiv_make((uint64_t)g.out[0]);
    a.o1 = cu_fastdiv_make((uint64_t)g.out[1]);
    a.o2 = cu_fastdiv_make((uint64_t)g.out[2]);
    a.in1 = g.in[1];
    a.in2 = g.in[2];
    a.plane = g.in[0] * g.in[1] * g.in[2];
    a.dd = g.d[0] * g.in[1] * g.in[2];
    a.dh = g.d[1] * g.in[2];
    a.dw = g.d[2];
    a.t1 = g.out[0];
    a.t2 = g.out[0] + g.out[1];
    a.incl = avg && n->params.pool.count_include_pad;
    unsigned grid = cu_grid(k->be, numel);
    const void *x = in[0].data;
    void *y = out[0].data;
    /* max_pool's Indices: the spatial strides of a flat input position */
    int64_t *yi = !avg && n->n_out > 1 ? (int64_t *)out[1].data : NULL;
    const int cm = n->params.pool.storage_order;
    const int64_t sd = cm ? 1 : g.in[1] * g.in[2], sh = cm ? g.in[0] : g.in[2], sw = cm ? g.in[0] * g.in[1] : 1;
#define MAX_LAUNCH(T)                                                                                            \
    do {                                                                                                         \
        if (yi)                                                                                                  \
            maxpool_idx_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, yi, (const T *)x, tab, a, sd, sh, sw, g.d[0],  \
                                                            g.d[1]);                                             \
        else                                                                                                     \
            maxpool_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, tab, a);                           \
    } while (0)
#define POOL_LAUNCH(T)                                                                                           \
    do {                                                                                                         \
        if (avg == 2)                                                                                            \
            sumpool_kernel<T, true><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, tab, a, n->params.pool.p);   \
        else if (avg)                                                                                            \
            sumpool_kernel<T, false><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, tab, a, 0);                 \
        else                                                                                                     \
            MAX_LAUNCH(T);                                                                                       \
    } while (0)
    switch (dt) {
    case FT_F16: POOL_LAUNCH(__half); break;
    case FT_BF16: POOL_LAUNCH(__nv_bfloat16); break;
    case FT_F32: POOL_LAUNCH(float); break;
    case FT_F64: POOL_LAUNCH(double); break;
    case FT_I8: MAX_LAUNCH(int8_t); break;
    case FT_U8: MAX_LAUNCH(uint8_t); break;
    case FT_I16: case FT_I32: case FT_I64: case FT_U16: case FT_U32: case FT_U64: case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT:
        break;
    }
#undef POOL_LAUNCH
#undef MAX_LAUNCH
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* ---- global pools ----------------------------------------------------------------------- */

/* Planes up to this long get one warp each; longer ones a block, or several
 * blocks (chunks combined by a second kernel) when there are too few planes
 * to fill the GPU. */
#define GP_WARP_LEN 1024
#define GP_MIN_CHUNK 4096

/* Partial result: a double sum, or the maximum with the flat position of its
 * first occurrence (so that the sign of a zero maximum is the one of the
 * CPU's sequential scan, whatever order the threads see the plane in) and
 * whether a NaN was seen. */
struct gacc {
    double v;
    long long i;
    int nan;
};

template <bool MAX> __device__ __forceinline__ gacc gacc_init()
{
    gacc g;
    g.v = MAX ? -(double)INFINITY : 0.0;
    g.i = LLONG_MAX;
    g.nan = 0;
    return g;
}

/* Fold the value v at position i: only a strictly greater value moves the
 * maximum, as in the CPU's scan (the positions seen by one thread rise). */
template <bool MAX> __device__ __forceinline__ void gacc_add(gacc &g, double v, long long i)
{
    if (MAX) {
        if (v > g.v) {
            g.v = v;
            g.i = i;
        }
        g.nan |= v != v;
    } else {
        g.v += v;
    }
}

template <bool MAX> __device__ __forceinline__ void gacc_merge(gacc &g, const gacc &o)
{
    if (MAX) {
        if (o.v > g.v || (o.v == g.v && o.i < g.i)) {
            g.v = o.v;
            g.i = o.i;
        }
        g.nan |= o.nan;
    } else {
        g.v += o.v;
    }
}

template <bool MAX> __device__ __forceinline__ gacc gacc_shfl_down(const gacc &g, int off)
{
    gacc o;
    o.v = __shfl_down_sync(0xffffffffu, g.v, off);
    o.i = __shfl_down_sync(0xffffffffu, g.i, off);
    o.nan = __shfl_down_sync(0xffffffffu, g.nan, off);
    return o;
}

template <bool MAX> __device__ __forceinline__ void gacc_warp(gacc &g)
{
    for (int off = 16; off > 0; off >>= 1) {
        gacc o = gacc_shfl_down<MAX>(g, off);
        gacc_merge<MAX>(g, o);
    }
}

template <class T, bool MAX> __device__ __forceinline__ void gacc_store(T *y, int64_t p, const gacc &g, int64_t len)
{
    if (MAX)
        y[p] = g.nan ? nan_out<T>() : from_double<T>(g.v);
    else
        y[p] = from_double<T>(g.v / (double)len);
}

template <class T, bool MAX>
__global__ void __launch_bounds__(CU_BLOCK)
    gpool_warp_kernel(T *__restrict__ y, const T *__restrict__ x, int64_t planes, int64_t len)
{
    const int lane = (int)(threadIdx.x & 31);
    /* warp-uniform loop: every lane takes part in the shuffles */
    for (int64_t p = cu_grid_start() >> 5; p < planes; p += cu_grid_step() >> 5) {
        const T *xp = x + p * len;
        gacc g = gacc_init<MAX>();
        for (int64_t i = lane; i < len; i += 32)
            gacc_add<MAX>(g, (double)cu_load(xp, i), i);
        gacc_warp<MAX>(g);
        if (lane == 0)
            gacc_store<T, MAX>(y, p, g, len);
    }
}

/* One block per (plane, chunk of clen cells); with one chunk per plane the
 * block writes the result, otherwise its partial. */
template <class T, bool MAX>
__global__ void __launch_bounds__(CU_BLOCK) gpool_block_kernel(T *__restrict__ y, gacc *__restrict__ part,
                                                               const T *__restrict__ x, int64_t planes, int64_t len,
                                                               int64_t nch, int64_t clen)
{
    __shared__ gacc sh[CU_BLOCK / 32];
    const int lane = (int)(threadIdx.x & 31), wid = (int)(threadIdx.x >> 5);
    const int nw = (int)(blockDim.x >> 5);
    for (int64_t w = blockIdx.x; w < planes * nch; w += gridDim.x) {
        const int64_t p = w / nch, b = (w % nch) * clen, e = b + clen < len ? b + clen : len;
        const T *xp = x + p * len;
        gacc g = gacc_init<MAX>();
        for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x)
            gacc_add<MAX>(g, (double)cu_load(xp, i), i);
        gacc_warp<MAX>(g);
        if (lane == 0)
            sh[wid] = g;
        __syncthreads();
        if (wid == 0) {
            g = lane < nw ? sh[lane] : gacc_init<MAX>();
            gacc_warp<MAX>(g);
            if (lane == 0) {
                if (part)
                    part[w] = g;
                else
                    gacc_store<T, MAX>(y, p, g, len);
            }
        }
        __syncthreads();
    }
}

template <class T, bool MAX>
__global__ void __launch_bounds__(CU_BLOCK)
    gpool_combine_kernel(T *__restrict__ y, const gacc *__restrict__ part, int64_t planes, int64_t nch, int64_t len)
{
    for (int64_t p = cu_grid_start(); p < planes; p += cu_grid_step()) {
        gacc g = part[p * nch];
        for (int64_t c = 1; c < nch; c++)
            gacc_merge<MAX>(g, part[p * nch + c]);
        gacc_store<T, MAX>(y, p, g, len);
    }
}

template <class T, bool MAX>
ft_status global_pool(ft_kctx *k, const ft_node *n, const T *x, T *y, int64_t planes, int64_t len)
{
    cudaStream_t s = k->be->stream;
    if (len <= GP_WARP_LEN) {
        gpool_warp_kernel<T, MAX><<<cu_grid(k->be, (uint64_t)planes * 32u), CU_BLOCK, 0, s>>>(y, x, planes, len);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    /* enough blocks to fill every SM (8 blocks of 256 threads each) */
    int64_t target = (int64_t)k->be->sm_count * 8, nch = 1;
    if (planes < target) {
        nch = (target + planes - 1) / planes;
        int64_t most = (len + GP_MIN_CHUNK - 1) / GP_MIN_CHUNK;
        if (nch > most)
            nch = most;
        if (nch < 1)
            nch = 1;
    }
    int64_t clen = (len + nch - 1) / nch;
    nch = (len + clen - 1) / clen; /* no empty chunk */
    uint64_t work = (uint64_t)planes * (uint64_t)nch, cap = (uint64_t)k->be->sm_count * 32u;
    unsigned grid = (unsigned)(work < cap ? work : cap);
    if (nch == 1) {
        gpool_block_kernel<T, MAX><<<grid, CU_BLOCK, 0, s>>>(y, NULL, x, planes, len, 1, clen);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    void *ws = NULL;
    ft_status st = cu_workspace(k, n, (size_t)work * sizeof(gacc), &ws);
    if (st)
        return st;
    gacc *part = (gacc *)ws;
    gpool_block_kernel<T, MAX><<<grid, CU_BLOCK, 0, s>>>(y, part, x, planes, len, nch, clen);
    CU_LAUNCHED(k, n);
    gpool_combine_kernel<T, MAX><<<cu_grid(k->be, (uint64_t)planes), CU_BLOCK, 0, s>>>(y, part, planes, nch, len);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T>
ft_status global_pool_t(ft_kctx *k, const ft_node *n, const void *x, void *y, int64_t planes, int64_t len, int max)
{
    if (max)
        return global_pool<T, true>(k, n, (const T *)x, (T *)y, planes, len);
    return global_pool<T, false>(k, n, (const T *)x, (T *)y, planes, len);
}

/* ---- resize ----------------------------------------------------------------------------- */

/* Source coordinate of output coordinate x, as ft_resize_src_coord() in
 * src/graph/infer_pool.c: same expressions in the same order, and every product
 * rounded on its own (__dmul_rn: no fused multiply-add), so that the nearest
 * modes pick the same cells and ties fall the same way. */
__device__ __forceinline__ double src_coord(int ct, double x, double scale, int64_t in, int64_t out, double r0,
                                            double r1)
{
    double ow = __dmul_rn(scale, (double)in);
    switch (ct) {
    case FT_RESIZE_CT_HALF_PIXEL: return (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)out / ow;
        double center = (double)in / 2;
        double offset = __dmul_rn(center, 1 - adjustment);
        return offset + (x + 0.5) / scale - 0.5;
    }
    case FT_RESIZE_CT_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_ALIGN_CORNERS: return ow == 1 ? 0.0 : __dmul_rn(x, (double)(in - 1)) / (ow - 1);
    case FT_RESIZE_CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    case FT_RESIZE_CT_TF_CROP_AND_RESIZE: {
        double xo = ow == 1 ? __dmul_rn(r1 - r0, (double)(in - 1)) / 2
                            : __dmul_rn(__dmul_rn(x, r1 - r0), (double)(in - 1)) / (ow - 1);
        return xo + __dmul_rn(r0, (double)(in - 1));
    }
    default: return x / scale; /* asymmetric */
    }
}

/* For one output coordinate of one axis: the lower and upper source cells
 * (clamped to the edge) and the weight of the upper one (0 for nearest, and
 * whenever only the lower cell is read). */
struct rtab {
    int64_t lo, hi;
    double w;
};

struct rmap_args {
    int rank, linear, ct, nm;
    int64_t total;
    int64_t in[FT_MAX_RANK], out[FT_MAX_RANK];
    double scale[FT_MAX_RANK], r0[FT_MAX_RANK], r1[FT_MAX_RANK];
};

/* Also raises *last_active when some weight of the last axis is not 0: the
 * CPU then computes that axis through doubles instead of copying. */
__global__ void __launch_bounds__(CU_BLOCK) resize_map_kernel(rtab *__restrict__ tab, int *last_active, rmap_args a)
{
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        int d = 0;
        int64_t o = e;
        while (d < a.rank - 1 && o >= a.out[d])
            o -= a.out[d++];
        const int64_t in = a.in[d];
        double xo = src_coord(a.ct, (double)o, a.scale[d], in, a.out[d], a.r0[d], a.r1[d]);
        if (a.ct == FT_RESIZE_CT_TF_CROP_AND_RESIZE && (xo < 0 || xo > (double)(in - 1))) {
            rtab t;
            t.lo = t.hi = -1; /* tf_crop_and_resize: the extrapolation value */
            t.w = 0;
            tab[e] = t;
            continue;
        }
        rtab t;
        ft_resize_cells(xo, in, a.linear, a.nm, &t.lo, &t.hi, &t.w);
        if (t.w != 0 && d == a.rank - 1)
            *last_active = 1;
        tab[e] = t;
    }
}

struct resize_args {
    int rank;
    double ext; /* tf_crop_and_resize's extrapolation value */
    int64_t total;
    cu_fastdiv od[FT_MAX_RANK];     /* output dims */
    int64_t toff[FT_MAX_RANK]; /* first table entry of each axis */
    int64_t ist[FT_MAX_RANK];  /* input strides */
};

/* One output element: the corners of the outer axes with a nonzero weight
 * (2^active of them) in the CPU's order (axis rank-2 first, its upper cell
 * is bit 0), each weight the product of the axis factors in that order,
 * each corner interpolated along the last axis, summed in order. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK) resize_kernel(T *__restrict__ y, const T *__restrict__ x,
                                                          const rtab *__restrict__ tab,
                                                          const int *__restrict__ last_active, resize_args a)
{
    const bool act_last = *last_active != 0;
    const int r = a.rank;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        uint64_t rest = (uint64_t)t, q = cu_fastdiv_q(a.od[r - 1], rest);
        const rtab ml = tab[a.toff[r - 1] + (int64_t)(rest - q * a.od[r - 1].d)];
        rest = q;
        int64_t base = 0, dlt[FT_MAX_RANK - 1];
        double wv[FT_MAX_RANK - 1];
        unsigned act = 0;
        bool outside = ml.lo < 0;
#pragma unroll
        for (int d = FT_MAX_RANK - 2; d >= 0; d--) {
            dlt[d] = 0;
            wv[d] = 0;
            if (d <= r - 2) {
                int64_t c;
                if (d > 0) {
                    q = cu_fastdiv_q(a.od[d], rest);
                    c = (int64_t)(rest - q * a.od[d].d);
                    rest = q;
                } else {
                    c = (int64_t)rest;
                }
                const rtab e = tab[a.toff[d] + c];
                outside |= e.lo < 0;
                base += e.lo * a.ist[d];
                if (e.w != 0) {
                    act |= 1u << d;
                    dlt[d] = (e.hi - e.lo) * a.ist[d];
                    wv[d] = e.w;
                }
            }
        }
        if (outside) {
            y[t] = from_double<T>(a.ext);
            continue;
        }
        if (act == 0 && !act_last) {
            y[t] = x[base + ml.lo];
            continue;
        }
        const int nc = 1 << __popc(act);
        double acc = 0;
        for (int c = 0; c < nc; c++) {
            int64_t off = base;
            double wt = 1;
            int j = 0;
#pragma unroll
            for (int d = FT_MAX_RANK - 2; d >= 0; d--)
                if ((act >> d) & 1u) {
                    if ((c >> j) & 1) {
                        off += dlt[d];
                        wt = __dmul_rn(wt, wv[d]);
                    } else {
                        wt = __dmul_rn(wt, 1 - wv[d]);
                    }
                    j++;
                }
            const T *xr = x + off;
            double v = (double)cu_load(xr, ml.lo);
            if (ml.w != 0)
                v = __dadd_rn(__dmul_rn(1 - ml.w, v), __dmul_rn(ml.w, (double)cu_load(xr, ml.hi)));
            acc = __dadd_rn(acc, __dmul_rn(wt, v));
        }
        y[t] = from_double<T>(acc);
    }
}

} /* namespace */

/* ---- entry points ----------------------------------------------------------------------- */

CU_KFN(cu_max_pool) { return run_pool(k, n, in, out, 0); }

CU_KFN(cu_average_pool) { return run_pool(k, n, in, out, 1); }

CU_KFN(cu_lp_pool) { return run_pool(k, n, in, out, 2); }

CU_KFN(cu_global_pool)
{
    const ft_shape *s = &in[0].shape;
    int64_t planes = s->dims[0] * s->dims[1], len = 1;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int max = n->op == FT_OP_GLOBAL_MAX_POOL;
    ft_dtype dt = in[0].dtype;
    if (!ft_dtype_is_float(dt))
        return no_kernel(k, n, dt);
    if (planes == 0 || len == 0)
        return FT_OK;
    const void *x = in[0].data;
    void *y = out[0].data;
    CU_DISPATCH_FLOAT(dt, T, return global_pool_t<T>(k, n, x, y, planes, len, max));
    return FT_OK;
}

CU_KFN(cu_resize)
{
    ft_dtype dt = in[0].dtype;
    if (!ft_dtype_is_float(dt))
        return no_kernel(k, n, dt);
    const ft_shape *is = &in[0].shape, *os = &out[0].shape;
    uint64_t numel = ft_numel(os);
    if (numel == 0 || is->rank == 0)
        return FT_OK;
    if (n->params.resize.cubic || n->params.resize.antialias)
        return cu_resize_cubic(k, n, in, out);
    const int r = is->rank;
    rmap_args m;
    memset(&m, 0, sizeof m);
    m.rank = r;
    const ft_resize_params *rp = &n->params.resize;
    m.linear = rp->linear;
    m.ct = rp->ct;
    m.nm = rp->nm;
    resize_args a;
    memset(&a, 0, sizeof a);
    a.rank = r;
    a.ext = rp->extrapolation;
    a.total = (int64_t)numel;
    int64_t ist[FT_MAX_RANK];
    ft_strides(is, ist);
    for (int d = 0; d < r; d++) {
        m.in[d] = is->dims[d];
        m.out[d] = os->dims[d];
        m.scale[d] = ft_resize_scale(rp, is, os, d);
        m.r0[d] = rp->roi_start[d];
        m.r1[d] = rp->roi_end[d];
        a.toff[d] = m.total;
        m.total += os->dims[d];
        a.od[d] = cu_fastdiv_make((uint64_t)os->dims[d]);
        a.ist[d] = ist[d];
    }
    /* workspace: the flag, padded to the table's alignment, then the table */
    void *ws = NULL;
    ft_status st = cu_workspace(k, n, 16 + (size_t)m.total * sizeof(rtab), &ws);
    if (st)
        return st;
    int *flag = (int *)ws;
    rtab *tab = (rtab *)((char *)ws + 16);
    cudaStream_t s = k->be->stream;
    CU_TRY(k, n, cudaMemsetAsync(flag, 0, sizeof(int), s));
    resize_map_kernel<<<cu_grid(k->be, (uint64_t)m.total), CU_BLOCK, 0, s>>>(tab, flag, m);
    CU_LAUNCHED(k, n);
    unsigned grid = cu_grid(k->be, numel);
    const void *x = in[0].data;
    void *y = out[0].data;
    switch (dt) {
    case FT_F16: resize_kernel<__half><<<grid, CU_BLOCK, 0, s>>>((__half *)y, (const __half *)x, tab, flag, a); break;
    case FT_BF16:
        resize_kernel<__nv_bfloat16>
            <<<grid, CU_BLOCK, 0, s>>>((__nv_bfloat16 *)y, (const __nv_bfloat16 *)x, tab, flag, a);
        break;
    case FT_F32: resize_kernel<float><<<grid, CU_BLOCK, 0, s>>>((float *)y, (const float *)x, tab, flag, a); break;
    case FT_F64: resize_kernel<double><<<grid, CU_BLOCK, 0, s>>>((double *)y, (const double *)x, tab, flag, a); break;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* ---- max_unpool (src/cpu/pool.c) ---------------------------------------------------------- */

namespace {

/* One thread per element of x: x[e] to the output position of index[e] in
 * the unpooled [N*C, u0, u1, u2] (spatial axes padded to 3 with size 1 in
 * front), placed in the leading corner of the output's [o0, o1, o2]. Equal
 * indices race (the CPU keeps the last); a bad index is reported. */
struct unpool_args {
    int64_t total, limit, uplane, oplane;
    int64_t u[3], o[3];
    int node;
};

template <class U>
__global__ void __launch_bounds__(CU_BLOCK)
    unpool_kernel(U *__restrict__ y, const U *__restrict__ x, const int64_t *__restrict__ idx, unpool_args a,
                  cu_derr *err)
{
    bool done = false;
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        int64_t v = idx[e];
        if (v < 0 || v >= a.limit) {
            if (!done)
                cu_report(err, CU_DERR_INDEX, a.node, e, v, 0, a.limit - 1);
            done = true;
            continue;
        }
        int64_t plane = v / a.uplane, r = v % a.uplane;
        int64_t w = r % a.u[2], h = r / a.u[2] % a.u[1], d = r / (a.u[1] * a.u[2]);
        y[plane * a.oplane + (d * a.o[1] + h) * a.o[2] + w] = x[e];
    }
}

} // namespace

CU_KFN(cu_max_unpool)
{
    const ft_pool_params *pp = &n->params.pool;
    const ft_shape *os = &out[0].shape;
    unpool_args a;
    memset(&a, 0, sizeof a);
    a.uplane = a.oplane = 1;
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - pp->sp); /* spatial axis of padded axis i, < 0 for a leading 1 */
        a.u[i] = j >= 0 ? pp->unpooled[j] : 1;
        a.o[i] = j >= 0 ? os->dims[2 + j] : 1;
        a.uplane *= a.u[i], a.oplane *= a.o[i];
    }
    a.limit = os->dims[0] * os->dims[1] * a.uplane;
    a.total = (int64_t)ft_numel(&in[0].shape);
    a.node = cu_node_index(k, n);
    size_t es = ft_dtype_size(out[0].dtype), bytes = (size_t)ft_numel(os) * es;
    if (bytes)
        CU_TRY(k, n, cudaMemsetAsync(out[0].data, 0, bytes, k->be->stream));
    if (a.total == 0)
        return FT_OK;
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t s = k->be->stream;
    CU_ELEM_DISPATCH(es, U,
                     unpool_kernel<U><<<grid, CU_BLOCK, 0, s>>>((U *)out[0].data, (const U *)in[0].data,
                                                                 (const int64_t *)in[1].data, a, k->be->derr_dev));
    CU_LAUNCHED(k, n);
    return FT_OK;
}
