/* deform_conv on CUDA (ONNX DeformConv, 2-D), as the CPU's src/cpu/deform.c:
 * per batch element a deformable im2col into the workspace (one thread per
 * column entry: bilinear sampling with torchvision's border rule, times the
 * mask), then one strided-batched GEMM over the groups (cu_gemm_strided,
 * matmul.cu), then the bias. The sampling runs in f64 for f64 and in f32
 * otherwise; f16 and bf16 columns hold the samples rounded to the dtype (one
 * rounding more than the CPU, which keeps them in f32 until the result; the
 * parity tolerance of a product covers it, tests/cuda/parity_linalg.py). */
#include "cu.cuh"

extern "C" {
#include "../graph/infer_conv.h"
}

namespace {

template <class A> __device__ __forceinline__ A df_floor(A v) { return floor(v); }
template <> __device__ __forceinline__ float df_floor<float>(float v) { return floorf(v); }

template <class T>
__global__ void deform_columns(const T *x, const T *off, const T *mask, T *col, ft_conv_geom g, int64_t og,
                               int64_t b, int64_t total)
{
    typedef typename cu_acc<T>::type A;
    int64_t H = g.in[0], W = g.in[1], OW = g.out[1], cpo = g.C / og;
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step()) {
        int64_t r = t / g.P, p = t % g.P;
        int64_t c = r / g.KK, kk = r % g.KK, o = c / cpo, ki = kk / g.k[1], kj = kk % g.k[1];
        int64_t oy = p / OW, ox = p % OW;
        const T *im = x + (b * g.C + c) * H * W;
        int64_t ob = ((b * og + o) * 2 * g.KK + 2 * kk) * g.P + p;
        A y = (A)(oy * g.s[0] - g.pb[0] + ki * g.d[0]) + cu_load(off, ob);
        A xx = (A)(ox * g.s[1] - g.pb[1] + kj * g.d[1]) + cu_load(off, ob + g.P);
        A v = 0;
        if (y > -1 && y < (A)H && xx > -1 && xx < (A)W) {
            int64_t y0 = (int64_t)df_floor(y), x0 = (int64_t)df_floor(xx), y1 = y0 + 1, x1 = x0 + 1;
            A ly = y - (A)y0, lx = xx - (A)x0, hy = 1 - ly, hx = 1 - lx;
            A v1 = y0 >= 0 && x0 >= 0 ? cu_load(im, y0 * W + x0) : (A)0;
            A v2 = y0 >= 0 && x1 < W ? cu_load(im, y0 * W + x1) : (A)0;
            A v3 = y1 < H && x0 >= 0 ? cu_load(im, y1 * W + x0) : (A)0;
            A v4 = y1 < H && x1 < W ? cu_load(im, y1 * W + x1) : (A)0;
            v = hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
        }
        if (mask)
            v *= cu_load(mask, ((b * og + o) * g.KK + kk) * g.P + p);
        cu_store(col, t, v);
    }
}

template <class T> __global__ void deform_bias(T *y, const T *bias, int64_t M, int64_t P, int64_t total)
{
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step())
        cu_store(y, t, cu_load(y, t) + cu_load(bias, (t / P) % M));
}

template <class T> __global__ void deform_zero(T *y, int64_t total)
{
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step())
        y[t] = T();
}

/* Launchers, so that a dispatch macro sees no <<<...>>> commas. */
template <class T> void launch_columns(ft_backend_ctx *be, const void *x, const void *off, const void *mask, void *col,
                                       const ft_conv_geom &g, int64_t og, int64_t b, int64_t total)
{
    deform_columns<T><<<cu_grid(be, (uint64_t)total), CU_BLOCK, 0, be->stream>>>(
        (const T *)x, (const T *)off, (const T *)mask, (T *)col, g, og, b, total);
}

template <class T> void launch_bias(ft_backend_ctx *be, void *y, const void *bias, int64_t M, int64_t P, int64_t total)
{
    deform_bias<T><<<cu_grid(be, (uint64_t)total), CU_BLOCK, 0, be->stream>>>((T *)y, (const T *)bias, M, P, total);
}

template <class T> void launch_zero(ft_backend_ctx *be, void *y, int64_t total)
{
    deform_zero<T><<<cu_grid(be, (uint64_t)total), CU_BLOCK, 0, be->stream>>>((T *)y, total);
}

} // namespace

ft_status cu_deform_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_backend_ctx *be = k->be;
    const ft_view *x = &in[0], *w = &in[1], *off = &in[2];
    const void *bias = n->n_in > 3 ? in[3].data : NULL, *mask = n->n_in > 4 ? in[4].data : NULL;
    int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ft_conv_geom g;
    ft_conv_geom_of(&n->params.conv, &x->shape, &w->shape, &out[0].shape, x->dtype, 0, &g);
    int64_t og = n->params.conv.offset_group, kc = g.Cg * g.KK, rows = g.C * g.KK, cols = rows * g.P;
    ft_dtype dt = x->dtype;
    size_t es = ft_dtype_size(dt);
    ft_status st = FT_OK;
    if (kc == 0) { /* no input channel: the bias alone */
        CU_DISPATCH_FLOAT(dt, T, launch_zero<T>(be, out[0].data, total));
        CU_LAUNCHED(k, n);
    } else {
        void *ws;
        if ((st = cu_workspace(k, n, (size_t)cols * es, &ws)))
            return st;
        int64_t ast[3] = {kc, 1, g.Mg * kc}, bst[3] = {g.P, 1, kc * g.P}, cst[3] = {g.P, 1, g.Mg * g.P};
        for (int64_t b = 0; b < g.N && !st; b++) {
            CU_DISPATCH_FLOAT(dt, T, launch_columns<T>(be, x->data, off->data, mask, ws, g, og, b, cols));
            CU_LAUNCHED(k, n);
            st = cu_gemm_strided(k, n, dt, dt, g.G, g.Mg, g.P, kc, 1.0, w->data, ast, ws, bst, 0.0,
                                 (char *)out[0].data + (size_t)(b * g.M * g.P) * es, cst);
        }
        if (st)
            return st;
    }
    if (bias) {
        CU_DISPATCH_FLOAT(dt, T, launch_bias<T>(be, out[0].data, bias, g.M, g.P, total));
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}
