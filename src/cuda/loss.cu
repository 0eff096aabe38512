/* CUDA softmax_cross_entropy_loss, negative_log_likelihood_loss, the
 * window functions (hann_window, hamming_window, blackman_window) and
 * mel_weight_matrix (graph/mel.h, one thread per element): the
 * semantics of the CPU reference (src/cpu/loss.c), parameters from
 * node->params.loss (src/graph/infer_loss.c).
 *
 * Losses: one thread per (sample, position) element computes, in double, the
 * row's log-sum-exp over C (softmax_cross_entropy_loss; log_prob written when
 * asked), then -w[t] * logp[t]. Under reduction none that is the output; for
 * sum and mean each element's loss and weight go to the workspace and one
 * block adds them up in a fixed order (deterministic), then writes sum or
 * sum / weight sum. A target outside [0, C-1] that is not ignore_index is
 * reported through the data-error record (exit 3 at the sync) and contributes
 * nothing, so no out-of-range read happens meanwhile.
 *
 *   ft_status st = cu_loss(k, n, in, out);   // via the kernel table (runtime/kernels.def) */
#include "cu.cuh"
#include "../graph/mel.h"

#include <math.h>

struct loss_args {
    int64_t N, C, D;
    int sce, has_ignore, has_w, red, has_lp;
    long long ignore;
    int node;
};

template <class T, class I>
__global__ void loss_elems(const T *__restrict__ x, const I *__restrict__ tgt, const T *__restrict__ w, T *y, T *lp,
                           double *part, loss_args a, cu_derr *err)
{
    bool done = false;
    for (int64_t e = cu_grid_start(); e < a.N * a.D; e += cu_grid_step()) {
        int64_t i = e / a.D, d = e % a.D, t = (int64_t)tgt[e];
        const T *row = x + i * a.C * a.D + d;
        double lse = 0;
        if (a.sce) {
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < a.C; c++)
                m = fmax(m, cu_to_d(row[c * a.D]));
            for (int64_t c = 0; c < a.C; c++)
                s += exp(cu_to_d(row[c * a.D]) - m);
            lse = m + log(s);
            if (a.has_lp)
                for (int64_t c = 0; c < a.C; c++)
                    cu_st_d(lp, i * a.C * a.D + c * a.D + d, cu_to_d(row[c * a.D]) - lse);
        }
        double l = 0, wt = 0;
        bool ignored = a.has_ignore && t == a.ignore;
        if (!ignored && (t < 0 || t >= a.C)) {
            if (!done)
                cu_report(err, CU_DERR_INDEX, a.node, e, t, 0, a.C - 1);
            done = true;
        } else if (!ignored) {
            wt = a.has_w ? cu_to_d(w[t]) : 1.0;
            l = -wt * (cu_to_d(row[t * a.D]) - lse);
        }
        if (a.red == FT_LOSS_NONE) {
            cu_st_d(y, e, l);
        } else {
            part[2 * e] = l;
            part[2 * e + 1] = wt;
        }
    }
}

/* One block: y[0] = sum of the losses (sum) or that over the weights' sum (mean). */
template <class T> __global__ void loss_total(const double *__restrict__ part, int64_t cnt, int mean, T *y)
{
    __shared__ double ls[CU_BLOCK], ws[CU_BLOCK];
    double l = 0, w = 0;
    for (int64_t e = threadIdx.x; e < cnt; e += blockDim.x) {
        l += part[2 * e];
        w += part[2 * e + 1];
    }
    ls[threadIdx.x] = l;
    ws[threadIdx.x] = w;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) {
            ls[threadIdx.x] += ls[threadIdx.x + h];
            ws[threadIdx.x] += ws[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        cu_st_d(y, 0, mean ? ls[0] / ws[0] : ls[0]);
}

template <class T>
static ft_status loss_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, loss_args a, double *part,
                          int64_t cnt)
{
    cudaStream_t s = k->be->stream;
    const T *x = (const T *)in[0].data, *w = a.has_w ? (const T *)in[2].data : NULL;
    T *y = (T *)out[0].data, *lp = a.has_lp ? (T *)out[1].data : NULL;
    if (cnt > 0) {
        if (in[1].dtype == FT_I64)
            loss_elems<T, int64_t><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, s>>>(
                x, (const int64_t *)in[1].data, w, y, lp, part, a, k->be->derr_dev);
        else
            loss_elems<T, int32_t><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, s>>>(
                x, (const int32_t *)in[1].data, w, y, lp, part, a, k->be->derr_dev);
        CU_LAUNCHED(k, n);
    }
    if (a.red != FT_LOSS_NONE) {
        loss_total<T><<<1, CU_BLOCK, 0, s>>>(part, cnt, a.red == FT_LOSS_MEAN, y);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}

CU_KFN(cu_loss)
{
    const ft_loss_params *p = &n->params.loss;
    const ft_shape *xs = &in[0].shape;
    loss_args a;
    a.N = xs->dims[0];
    a.C = xs->dims[1];
    a.D = 1;
    for (int d = 2; d < xs->rank; d++)
        a.D *= xs->dims[d];
    a.sce = n->op == FT_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    a.has_ignore = p->has_ignore;
    a.ignore = (long long)p->ignore_index;
    a.has_w = n->n_in > 2 && n->in[2] >= 0;
    a.red = p->reduction;
    a.has_lp = n->n_out > 1 && out[1].data != NULL;
    a.node = cu_node_index(k, n);
    int64_t cnt = a.N * a.D;
    double *part = NULL;
    ft_status st;
    if (a.red != FT_LOSS_NONE && cnt > 0 &&
        (st = cu_workspace(k, n, (size_t)cnt * 2 * sizeof(double), (void **)&part)))
        return st;
    CU_DISPATCH_FLOAT(in[0].dtype, T, return loss_run<T>(k, n, in, out, a, part, cnt));
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(in[0].dtype), ft_op_name(n->op));
}

/* Element j of a window of periodic length N (as cpu/loss.c window_at). */
template <class T> __global__ void window_kernel(T *y, int64_t size, double N, int op)
{
    for (int64_t j = cu_grid_start(); j < size; j += cu_grid_step()) {
        double v = 1.0;
        if (N != 0) {
            double a = 2 * M_PI * (double)j / N;
            if (op == FT_OP_HANN_WINDOW)
                v = 0.5 - 0.5 * cos(a);
            else if (op == FT_OP_HAMMING_WINDOW)
                v = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
            else
                v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        }
        cu_st_d(y, j, v);
    }
}

template <class T> static void launch_window(unsigned g, cudaStream_t s, T *y, int64_t size, double N, int op)
{
    window_kernel<T><<<g, CU_BLOCK, 0, s>>>(y, size, N, op);
}

CU_KFN(cu_window)
{
    (void)in;
    int64_t size = out[0].shape.dims[0];
    double N = n->params.loss.periodic ? (double)size : (double)size - 1;
    if (size == 0)
        return FT_OK;
    cudaStream_t s = k->be->stream;
    unsigned g = cu_grid(k->be, (uint64_t)size);
    if (!ft_dtype_in(out[0].dtype, FT_DT_FLOAT))
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "output dtype %s is not supported by the cuda %s kernel",
                           ft_dtype_name(out[0].dtype), ft_op_name(n->op));
    CU_DISPATCH_FLOAT(out[0].dtype, T, launch_window<T>(g, s, (T *)out[0].data, size, N, (int)n->op));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* A scalar input read on the device as a double: the integer sizes (i32,
 * i64) and the float edges (f16, bf16, f32, f64). */
static __device__ double mel_scalar(const void *p, int dt)
{
    switch (dt) {
    case FT_I32: return (double)*(const int32_t *)p;
    case FT_I64: return (double)*(const int64_t *)p;
    case FT_F16: return cu_to_d(*(const __half *)p);
    case FT_BF16: return cu_to_d(*(const __nv_bfloat16 *)p);
    case FT_F64: return *(const double *)p;
    default: return (double)*(const float *)p;
    }
}

template <class T>
__global__ void mel_kernel(T *y, int64_t rows, int64_t bins, const void *dftp, const void *srp, int idt, const void *lop,
                           const void *hip, int fdt)
{
    int64_t dft = (int64_t)mel_scalar(dftp, idt), sr = (int64_t)mel_scalar(srp, idt);
    double lo, step;
    ft_mel_range(mel_scalar(lop, fdt), mel_scalar(hip, fdt), bins, fdt == FT_F64, &lo, &step);
    for (int64_t e = cu_grid_start(); e < rows * bins; e += cu_grid_step()) {
        int64_t j = e / bins, i = e % bins;
        int64_t l = ft_mel_edge(i, lo, step, dft, sr), c = ft_mel_edge(i + 1, lo, step, dft, sr),
                h = ft_mel_edge(i + 2, lo, step, dft, sr);
        cu_st_d(y, e, ft_mel_weight(j, l, c, h));
    }
}

CU_KFN(cu_mel_weight_matrix)
{
    int64_t rows = out[0].shape.dims[0], bins = out[0].shape.dims[1];
    cudaStream_t s = k->be->stream;
    unsigned g = cu_grid(k->be, (uint64_t)(rows * bins));
    int idt = (int)in[1].dtype, fdt = (int)in[3].dtype;
#define MEL_LAUNCH(T)                                                                                             \
    mel_kernel<T><<<g, CU_BLOCK, 0, s>>>((T *)out[0].data, rows, bins, in[1].data, in[2].data, idt, in[3].data, \
                                         in[4].data, fdt)
    switch (out[0].dtype) {
    case FT_F16: MEL_LAUNCH(__half); break;
    case FT_BF16: MEL_LAUNCH(__nv_bfloat16); break;
    case FT_F32: MEL_LAUNCH(float); break;
    case FT_F64: MEL_LAUNCH(double); break;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT:
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "output dtype %s is not supported by the cuda %s kernel",
                           ft_dtype_name(out[0].dtype), ft_op_name(n->op));
    }
#undef MEL_LAUNCH
    CU_LAUNCHED(k, n);
    return FT_OK;
}
