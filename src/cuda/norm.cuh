/* What the CUDA normalisations share: norm.cu (softmax, log_softmax,
 * layer_norm, rms_norm) and norm_channels.cu (batch_norm, instance_norm,
 * group_norm). Included by those two files only, internal to each
 * (anonymous namespace).
 *
 * It holds the compute-type math and the chunked statistics passes in double,
 * as the CPU keeps them: partial results per (row, chunk) into the workspace
 * (st_part), then a per-row finishing kernel (st_fin), with their chunking
 * and grid sizes on the host. */
#ifndef FT_CU_NORM_CUH
#define FT_CU_NORM_CUH

#include "cu.cuh"

#include <math.h>

namespace {

__host__ __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

__device__ __forceinline__ int64_t udiv(int64_t a, int64_t b)
{
    if ((((uint64_t)a | (uint64_t)b) >> 32) == 0)
        return (int64_t)((uint32_t)a / (uint32_t)b);
    return (int64_t)((uint64_t)a / (uint64_t)b);
}

/* Compute-type math. */
__device__ __forceinline__ float cexp(float v) { return expf(v); }
__device__ __forceinline__ double cexp(double v) { return exp(v); }
__device__ __forceinline__ float clog(float v) { return logf(v); }
__device__ __forceinline__ double clog(double v) { return log(v); }
__device__ __forceinline__ float csqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double csqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float cmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double cmax(double a, double b) { return fmax(a, b); }

/* ---- chunked passes, statistics in double ------------------------------------- */

enum { S_SUM, S_SQDEV, S_SQ, S_SOFT };
enum { F_MEAN, F_INV, F_SOFT, F_LOGSOFT };
#define NB 256
/* Elements per (row, chunk) item of the chunked passes. */
#define CHUNK 8192

__device__ __forceinline__ double dmax(double a, double b) { return fmax(a, b); }

/* Sum (or max) over a group of G threads (32 or NB). Every thread of the block must call. */
__device__ __forceinline__ double dred(double v, bool mx, int G, double *sm)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        double t = __shfl_xor_sync(0xffffffffu, v, o);
        v = mx ? dmax(v, t) : v + t;
    }
    if (G == 32)
        return v;
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = v;
    __syncthreads();
    double r = sm[0];
    for (int i = 1; i < NB / 32; i++)
        r = mx ? dmax(r, sm[i]) : r + sm[i];
    __syncthreads();
    return r;
}

/* Partial statistics of item (row, chunk) of rows of len elements, G
 * threads per item. S_SOFT: the chunk's maximum and the sum of exp(x - it)
 * (shifted by 0 when the maximum is -inf, so that an all -inf chunk sums to 0
 * and a NaN still shows) into part[2 * item .. + 1]; otherwise one sum. */
template <class T>
__global__ void __launch_bounds__(NB) st_part(const T *x, int64_t rows, int64_t len, int64_t nch, int64_t ch, int kind,
                                              const double *mean, double *part, int G)
{
    typedef typename cu_acc<T>::type C;
    __shared__ double sm[NB / 32];
    const int gpb = NB / G, lane = (int)threadIdx.x % G;
    const int64_t items = rows * nch;
    for (int64_t it0 = (int64_t)blockIdx.x * gpb; it0 < items; it0 += (int64_t)gridDim.x * gpb) {
        const int64_t it = it0 + (int)threadIdx.x / G;
        const bool valid = it < items;
        int64_t row = 0, j0 = 0, j1 = 0;
        if (valid) {
            row = udiv(it, nch);
            j0 = (it - row * nch) * ch;
            j1 = min64(len, j0 + ch);
        }
        const T *xr = x + row * len;
        double s = 0;
        if (kind == S_SOFT) {
            double m = -INFINITY;
            for (int64_t j = j0 + lane; j < j1; j += G)
                m = dmax(m, cu_to_d(xr[j]));
            m = dred(m, true, G, sm);
            const C sh = (C)(m == -INFINITY ? 0.0 : m);
            for (int64_t j = j0 + lane; j < j1; j += G)
                s += (double)cexp(cu_load(xr, j) - sh);
            s = dred(s, false, G, sm);
            if (valid && lane == 0)
                part[2 * it] = m, part[2 * it + 1] = s;
            continue;
        }
        const double mu = kind == S_SQDEV && valid ? mean[row] : 0.0;
        for (int64_t j = j0 + lane; j < j1; j += G) {
            const double v = cu_to_d(xr[j]);
            s += kind == S_SUM ? v : (v - mu) * (v - mu);
        }
        s = dred(s, false, G, sm);
        if (valid && lane == 0)
            part[it] = s;
    }
}

/* Per row: combine the chunk partials in chunk order. F_MEAN: o0 = mean;
 * F_INV: o1 = 1 / sqrt(sum / len + eps); F_SOFT / F_LOGSOFT: o0 = maximum,
 * o1 = 1 / sum or log(sum). tout (optional): the statistic in the output dtype. */
template <class T>
__global__ void st_fin(int kind, const double *part, int64_t rows, int64_t nch, int64_t len, double eps, double *o0,
                       double *o1, T *tout)
{
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (int64_t)gridDim.x * blockDim.x) {
        if (kind == F_SOFT || kind == F_LOGSOFT) {
            double M = -INFINITY, S = 0;
            for (int64_t c = 0; c < nch; c++)
                M = dmax(M, part[2 * (r * nch + c)]);
            for (int64_t c = 0; c < nch; c++) {
                const double mc = part[2 * (r * nch + c)], sc = part[2 * (r * nch + c) + 1];
                S += mc == -INFINITY ? sc : sc * exp(mc - M);
            }
            o0[r] = M;
            o1[r] = kind == F_SOFT ? 1.0 / S : log(S);
            continue;
        }
        double t = 0;
        for (int64_t c = 0; c < nch; c++)
            t += part[r * nch + c];
        double v = kind == F_MEAN ? t / (double)len : 1.0 / sqrt(t / (double)len + eps);
        (kind == F_MEAN ? o0 : o1)[r] = v;
        if (tout)
            cu_st_d(tout, r, v);
    }
}

/* ---- host side of the chunked passes ------------------------------------------ */

inline size_t al256(size_t v) { return (v + 255) & ~(size_t)255; }

/* Group size and chunking of the statistics passes for rows of len. */
inline void chunking(int64_t len, int64_t *ch, int64_t *nch, int *G)
{
    *ch = len <= CHUNK ? len : CHUNK;
    *nch = (len + *ch - 1) / *ch;
    *G = *ch >= 1024 ? NB : 32;
}

inline unsigned grid_items(ft_kctx *k, int64_t items, int per_block)
{
    const int64_t b = (items + per_block - 1) / per_block, cap = (int64_t)k->be->sm_count * 32;
    return (unsigned)(b < 1 ? 1 : min64(b, cap));
}

inline ft_status bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(dt), ft_op_name(n->op));
}

} // namespace

#endif
