/* CUDA lrn, grid_sample, cubic and antialiased resize (floats), one thread per output
 * element (grid_sample: per output position, looping over the channels).
 * The semantic references are src/cpu/image.c and src/cpu/resize.c; the
 * cells and weights of grid_sample and of cubic and antialiased resize come
 * from the same functions (src/graph/sample.h, ft_resize_taps_fill), sums are taken in double in the CPU's
 * order, and f16/bf16 results are rounded through f32 as the CPU's path
 * does. Results agree with the CPU within the accumulation tolerances (the
 * device may fuse multiply-adds). */
#include "cu.cuh"
extern "C" {
#include "../graph/infer_pool.h"
#include "../graph/sample.h"
}

#include <math.h>
#include <string.h>

namespace {

ft_status no_kernel(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "%s: no cuda kernel for %s", ft_op_name(n->op), ft_dtype_name(dt));
}

/* A double result stored as the CPU does (16-bit floats through f32). */
template <class T> __device__ __forceinline__ void store_d(T *y, int64_t i, double v)
{
    cu_store(y, i, (typename cu_acc<T>::type)v);
}

/* ---- lrn ---------------------------------------------------------------------------------- */

struct lrn_args {
    int64_t total, ch, sp, before, after;
    double scale, bias, beta;
};

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) lrn_kernel(T *__restrict__ y, const T *__restrict__ x, lrn_args a)
{
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        int64_t s = e % a.sp, c = (e / a.sp) % a.ch, b = e / (a.sp * a.ch);
        int64_t lo = c - a.before < 0 ? 0 : c - a.before, hi = c + a.after >= a.ch ? a.ch - 1 : c + a.after;
        const T *xs = x + b * a.ch * a.sp + s;
        double sum = 0;
        for (int64_t i = lo; i <= hi; i++) {
            double v = (double)cu_load(xs, i * a.sp);
            sum += v * v;
        }
        store_d(y, e, (double)cu_load(x, e) / pow(a.bias + a.scale * sum, a.beta));
    }
}

/* ---- grid_sample -------------------------------------------------------------------------- */

struct gs_args {
    int64_t total; /* N * output positions */
    int64_t ch, osp, isp;
    int r;
    int64_t in[3];
    ft_image_params p;
};

template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    gs_kernel(T *__restrict__ y, const T *__restrict__ x, const T *__restrict__ grid, gs_args a)
{
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        const int64_t b = e / a.osp, o = e % a.osp;
        ft_taps t[3];
        int ok = 1;
        for (int d = 0; d < a.r; d++)
            ok &= ft_gs_taps((double)cu_load(grid, e * a.r + (a.r - 1 - d)), a.in[d], &a.p, &t[d]);
        int64_t st[3] = {1, 1, 1};
        for (int d = a.r - 2; d >= 0; d--)
            st[d] = st[d + 1] * a.in[d + 1];
        for (int64_t c = 0; c < a.ch; c++) {
            const T *xp = x + (b * a.ch + c) * a.isp;
            double acc = 0;
            if (!ok) {
                acc = __longlong_as_double(0x7ff8000000000000LL);
            } else {
                /* the cells in the CPU's order: the first axis outermost */
                int k0n = t[0].n, k1n = a.r > 1 ? t[1].n : 1, k2n = a.r > 2 ? t[2].n : 1;
                for (int k0 = 0; k0 < k0n; k0++)
                    for (int k1 = 0; k1 < k1n; k1++)
                        for (int k2 = 0; k2 < k2n; k2++) {
                            int64_t off = t[0].i[k0] * st[0];
                            double w = t[0].w[k0];
                            bool zero = t[0].i[k0] < 0;
                            if (a.r > 1) {
                                off += t[1].i[k1] * st[1], w *= t[1].w[k1], zero |= t[1].i[k1] < 0;
                            }
                            if (a.r > 2) {
                                off += t[2].i[k2] * st[2], w *= t[2].w[k2], zero |= t[2].i[k2] < 0;
                            }
                            if (!zero)
                                acc += w * (double)cu_load(xp, off);
                        }
            }
            store_d(y, (b * a.ch + c) * a.osp + o, acc);
        }
    }
}

/* ---- cubic and antialiased resize ------------------------------------------------------------ */

struct taps_args {
    int rank;
    int64_t total;
    int64_t od[FT_MAX_RANK], toff[FT_MAX_RANK], ist[FT_MAX_RANK];
    double ext; /* tf_crop_and_resize's extrapolation value */
};

/* Every output element sums the products of the taps of every axis
 * (ft_resize_taps, infer_pool.h), the first axis outermost, as on the CPU. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    taps_kernel(T *__restrict__ y, const T *__restrict__ x, const ft_tap_span *__restrict__ span,
                const int64_t *__restrict__ idx, const double *__restrict__ wt, taps_args a)
{
    const int r = a.rank;
    for (int64_t e = cu_grid_start(); e < a.total; e += cu_grid_step()) {
        int64_t at[FT_MAX_RANK], nt[FT_MAX_RANK], rem = e;
        bool outside = false;
        for (int d = r - 1; d >= 0; d--) {
            const ft_tap_span *sp = &span[a.toff[d] + rem % a.od[d]];
            at[d] = sp->at, nt[d] = sp->n;
            outside |= sp->n == 0;
            rem /= a.od[d];
        }
        if (outside) {
            store_d(y, e, a.ext);
            continue;
        }
        int64_t k[FT_MAX_RANK];
        for (int d = 0; d < r; d++)
            k[d] = 0;
        double acc = 0;
        for (;;) {
            int64_t off = 0;
            double w = 1;
            for (int d = 0; d < r; d++)
                off += idx[at[d] + k[d]] * a.ist[d], w *= wt[at[d] + k[d]];
            acc += w * (double)cu_load(x, off);
            int d = r - 1;
            while (d >= 0 && ++k[d] == nt[d])
                k[d--] = 0;
            if (d < 0)
                break;
        }
        store_d(y, e, acc);
    }
}

template <class T>
void taps_launch(cudaStream_t s, unsigned grid, void *y, const void *x, const ft_tap_span *span, const int64_t *idx,
                 const double *w, const taps_args &a)
{
    taps_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, span, idx, w, a);
}

/* The tap tables built on the host (ft_resize_taps_fill, as on the CPU),
 * copied to the workspace. */
ft_status taps_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *is = &in[0].shape, *os = &out[0].shape;
    const ft_resize_params *rp = &n->params.resize;
    taps_args a;
    memset(&a, 0, sizeof a);
    a.rank = is->rank;
    a.total = (int64_t)ft_numel(os);
    a.ext = rp->extrapolation;
    ft_resize_taps tt;
    ft_resize_taps_size(rp, is, os, &tt);
    ft_strides(is, a.ist);
    for (int d = 0; d < is->rank; d++) {
        a.od[d] = os->dims[d];
        a.toff[d] = tt.off[d];
    }
    void *host = ft_malloc(tt.bytes);
    if (!host)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the resize tables (%lld entries)",
                           (long long)tt.n_tap);
    ft_resize_taps_fill(rp, is, os, &tt, host);
    void *ws = NULL;
    ft_status st = cu_workspace(k, n, tt.bytes, &ws);
    cudaStream_t s = k->be->stream;
    if (!st) {
        cudaError_t ce = cudaMemcpyAsync(ws, host, tt.bytes, cudaMemcpyHostToDevice, s);
        if (ce == cudaSuccess)
            ce = cudaStreamSynchronize(s); /* the host table is freed below */
        if (ce != cudaSuccess)
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "cuda: copying the resize table: %s", cudaGetErrorString(ce));
    }
    free(host);
    if (st)
        return st;
    const ft_tap_span *span;
    const int64_t *idx;
    const double *w;
    ft_resize_taps_at(&tt, ws, &span, &idx, &w);
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    CU_DISPATCH_FLOAT(in[0].dtype, T, taps_launch<T>(s, grid, out[0].data, in[0].data, span, idx, w, a));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T> void lrn_launch(cudaStream_t s, unsigned grid, void *y, const void *x, const lrn_args &a)
{
    lrn_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, a);
}

template <class T>
void gs_launch(cudaStream_t s, unsigned grid, void *y, const void *x, const void *g, const gs_args &a)
{
    gs_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, (const T *)g, a);
}

bool is_float(ft_dtype dt)
{
    switch (dt) {
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: return true;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return false;
}

} /* namespace */

/* ---- entry points ------------------------------------------------------------------------- */

CU_KFN(cu_lrn)
{
    ft_dtype dt = in[0].dtype;
    if (!is_float(dt))
        return no_kernel(k, n, dt);
    const ft_shape *s = &in[0].shape;
    uint64_t numel = ft_numel(s);
    if (numel == 0)
        return FT_OK;
    const ft_image_params *p = &n->params.image;
    lrn_args a;
    a.total = (int64_t)numel;
    a.ch = s->dims[1];
    a.sp = (int64_t)(numel / (uint64_t)(s->dims[0] * s->dims[1]));
    a.before = (p->size - 1) / 2;
    a.after = p->size / 2;
    a.scale = p->alpha / (double)p->size;
    a.bias = p->bias;
    a.beta = p->beta;
    unsigned grid = cu_grid(k->be, numel);
    cudaStream_t st = k->be->stream;
    CU_DISPATCH_FLOAT(dt, T, lrn_launch<T>(st, grid, out[0].data, in[0].data, a));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_grid_sample)
{
    ft_dtype dt = in[0].dtype;
    if (!is_float(dt))
        return no_kernel(k, n, dt);
    const ft_shape *xs = &in[0].shape, *os = &out[0].shape;
    uint64_t numel = ft_numel(os);
    if (numel == 0)
        return FT_OK;
    gs_args a;
    memset(&a, 0, sizeof a);
    a.r = xs->rank - 2;
    a.ch = xs->dims[1];
    a.osp = a.isp = 1;
    for (int d = 0; d < a.r; d++) {
        a.in[d] = xs->dims[2 + d];
        a.isp *= xs->dims[2 + d];
        a.osp *= os->dims[2 + d];
    }
    a.total = xs->dims[0] * a.osp;
    a.p = n->params.image;
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t st = k->be->stream;
    CU_DISPATCH_FLOAT(dt, T, gs_launch<T>(st, grid, out[0].data, in[0].data, in[1].data, a));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_resize_cubic) { return taps_run(k, n, in, out); }
