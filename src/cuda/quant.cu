/* int8 inference on CUDA (ONNX semantics, src/graph/infer_quant.c), with
 * the CPU's results bit for bit (cpu/quant.c): quantize_linear,
 * dequantize_linear, dynamic_quantize_linear, matmul_integer and
 * qlinear_matmul. Rounding and saturation come from runtime/quant_math.h,
 * shared with the CPU.
 *
 * The integer products accumulate in int32 with wrap-around. Two i8
 * operands without zero points, one matrix of b shared by every batch, K and
 * N multiples of 4 and sizes that fit int go to cuBLAS's int8 GEMM
 * (cublasGemmEx, CUDA_R_8I inputs, CUBLAS_COMPUTE_32I); everything else, or
 * a cuBLAS that refuses the layout, runs a plain kernel, one output per
 * thread. qlinear_matmul requantizes the int32 products in a second kernel. */
#include "cu.cuh"

#include "../runtime/quant_math.h"

extern "C" {
#include "../graph/infer_conv.h"
#include "../graph/infer_math.h"
#include "../graph/infer_misc.h"
}

namespace {

/* v rounded to the scale dtype S (ONNX computes in its operands' dtype). */
template <class S> __device__ __forceinline__ double in_s(double v) { return (double)cu_f(cu_from_f<S>((float)v)); }
template <> __device__ __forceinline__ double in_s<float>(double v) { return (double)(float)v; }
template <> __device__ __forceinline__ double in_s<double>(double v) { return v; }

/* x / s in the dtype of x: 16-bit floats divide in f32 and round once. */
template <class X> __device__ __forceinline__ double qdiv(X x, X s) { return in_s<X>((double)(cu_f(x) / cu_f(s))); }
template <> __device__ __forceinline__ double qdiv<float>(float x, float s) { return (double)(x / s); }
template <> __device__ __forceinline__ double qdiv<double>(double x, double s) { return x / s; }

template <class X, class Q>
__global__ void k_quantize(const X *x, const X *s, const Q *zp, Q *y, int64_t total, int64_t len, int64_t inner,
                           int64_t lo, int64_t hi)
{
    for (int64_t i = cu_grid_start(); i < total; i += cu_grid_step()) {
        int64_t c = len > 1 ? (i / inner) % len : 0;
        int64_t z = zp ? (int64_t)zp[c] : 0;
        y[i] = (Q)ft_qsat(rint(qdiv<X>(x[i], s[c])), z, lo, hi);
    }
}

/* (float(x) - float(zp)) * scale: in f32 then rounded to S, in f64 for an f64 scale. */
template <class I, class S>
__global__ void k_dequantize(const I *x, const S *s, const I *zp, S *y, int64_t total, int64_t len, int64_t inner)
{
    for (int64_t i = cu_grid_start(); i < total; i += cu_grid_step()) {
        int64_t c = len > 1 ? (i / inner) % len : 0;
        float d = (float)x[i] - (zp ? (float)zp[c] : 0.0f);
        cu_st_d(y, i, (double)(d * cu_f(s[c])));
    }
}

template <class I>
__global__ void k_dequantize_f64(const I *x, const double *s, const I *zp, double *y, int64_t total, int64_t len,
                                 int64_t inner)
{
    for (int64_t i = cu_grid_start(); i < total; i += cu_grid_step()) {
        int64_t c = len > 1 ? (i / inner) % len : 0;
        float d = (float)x[i] - (zp ? (float)zp[c] : 0.0f);
        y[i] = (double)d * s[c];
    }
}

/* One block: the range [min(0, min x), max(0, max x)], then the scale and
 * zero point as ONNX's DynamicQuantizeLinear computes them in f32. */
__global__ void k_dyn_range(const float *x, int64_t total, float *scale, uint8_t *zp)
{
    __shared__ float smx[1024], smn[1024];
    float mx = 0.0f, mn = 0.0f;
    for (int64_t i = threadIdx.x; i < total; i += blockDim.x) {
        mx = x[i] > mx ? x[i] : mx;
        mn = x[i] < mn ? x[i] : mn;
    }
    smx[threadIdx.x] = mx, smn[threadIdx.x] = mn;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            smx[threadIdx.x] = smx[threadIdx.x + w] > smx[threadIdx.x] ? smx[threadIdx.x + w] : smx[threadIdx.x];
            smn[threadIdx.x] = smn[threadIdx.x + w] < smn[threadIdx.x] ? smn[threadIdx.x + w] : smn[threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        mx = smx[0], mn = smn[0];
        float s = __fdiv_rn(mx == mn ? 1.0f : __fsub_rn(mx, mn), 255.0f);
        float z = __fsub_rn(0.0f, __fdiv_rn(mn, s));
        z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
        *scale = s;
        *zp = (uint8_t)rintf(z);
    }
}

__global__ void k_dyn_quantize(const float *x, int64_t total, const float *scale, const uint8_t *zp, uint8_t *y)
{
    float s = *scale;
    int64_t z = *zp;
    for (int64_t i = cu_grid_start(); i < total; i += cu_grid_step())
        y[i] = (uint8_t)ft_qsat(rintf(__fdiv_rn(x[i], s)), z, 0, 255);
}

/* matmul's batch of products (ft_matmul_geom_of), by value. */
struct mm_batch {
    ft_matmul_geom g;
    int row_a, col_b;
};

/* acc[t, i, j] = sum_p (a - a_zp)(b - b_zp) in 32 bits, wrapping (unsigned
 * arithmetic: no signed overflow). */
template <class A, class B>
__global__ void k_int_mm(const A *a, const B *b, const A *za, const B *zb, int32_t *acc, int64_t total, mm_batch m)
{
    for (int64_t idx = cu_grid_start(); idx < total; idx += cu_grid_step()) {
        const int64_t M = m.g.M, K = m.g.K, N = m.g.N;
        int64_t j = idx % N, rowi = idx / N, i = rowi % M, t = rowi / M, oa, ob;
        ft_matmul_batch_at(&m.g, t, &oa, &ob);
        int32_t z1 = za ? (int32_t)za[m.row_a ? i : 0] : 0, z2 = zb ? (int32_t)zb[m.col_b ? j : 0] : 0;
        const A *ap = a + (oa * M + i) * K;
        const B *bp = b + ob * K * N + j;
        uint32_t s = 0;
        for (int64_t p = 0; p < K; p++)
            s += (uint32_t)(((int32_t)ap[p] - z1) * ((int32_t)bp[p * N] - z2));
        acc[idx] = (int32_t)s;
    }
}

/* y = sat(rint(acc * (as * bs / ys)) + yzp), the multiplier in S; a's scale
 * indexed by (idx / rdiv) % rmod when per row, b's by (idx / cdiv) % cmod
 * when per column (or output channel). */
struct rq_index {
    int64_t rdiv, rmod, cdiv, cmod;
    int row_a, col_b;
};

template <class S, class Q>
__global__ void k_requant(const int32_t *acc, const S *as, const S *bs, const S *ys, const Q *yz, Q *y, int64_t total,
                          rq_index ix, int64_t lo, int64_t hi, int relu)
{
    double ysv = cu_to_d(ys[0]);
    int64_t z = yz ? (int64_t)yz[0] : 0;
    if (relu && z > lo) /* a fused relu: max(q, y_zero_point), the quantized relu */
        lo = z;
    for (int64_t idx = cu_grid_start(); idx < total; idx += cu_grid_step()) {
        int64_t i = ix.row_a ? (idx / ix.rdiv) % ix.rmod : 0, j = ix.col_b ? (idx / ix.cdiv) % ix.cmod : 0;
        double m = in_s<S>(in_s<S>(cu_to_d(as[i]) * cu_to_d(bs[j])) / ysv);
        y[idx] = (Q)ft_qsat(rint((double)acc[idx] * m), z, lo, hi);
    }
}

/* acc[n, m, p] = bias[m] + sum over the group's channels and the kernel of
 * (x - x_zp)(w - w_zp), padding contributing 0; 32 bits, wrapping. */
template <class X, class W>
__global__ void k_int_conv(const X *x, const W *w, const X *xz, const W *wz, int wvec, const int32_t *bias,
                           int32_t *acc, int64_t total, ft_conv_geom g)
{
    for (int64_t idx = cu_grid_start(); idx < total; idx += cu_grid_step()) {
        int64_t p = idx % g.P, nm = idx / g.P, m = nm % g.M, nn = nm / g.M, gi = m / g.Mg;
        int64_t o[FT_CONV_MAX_SP] = {0, 0, 0}, q = p;
        for (int j = g.r - 1; j >= 0; j--) {
            o[j] = (q % g.out[j]) * g.s[j] - g.pb[j];
            q /= g.out[j];
        }
        int32_t zx = xz ? (int32_t)xz[0] : 0, zw = wz ? (int32_t)wz[wvec ? m : 0] : 0;
        const X *xg = x + (nn * g.C + gi * g.Cg) * g.NI;
        const W *wm = w + m * g.Cg * g.KK;
        uint32_t s = bias ? (uint32_t)bias[m] : 0u;
        for (int64_t kk = 0; kk < g.KK; kk++) {
            int64_t off = 0, kq = kk, kc[FT_CONV_MAX_SP] = {0, 0, 0};
            bool inside = true;
            for (int j = g.r - 1; j >= 0; j--) {
                kc[j] = kq % g.k[j];
                kq /= g.k[j];
            }
            for (int j = 0; j < g.r; j++) {
                int64_t i = o[j] + kc[j] * g.d[j];
                inside = inside && i >= 0 && i < g.in[j];
                off = off * g.in[j] + i;
            }
            if (!inside)
                continue;
            for (int64_t c = 0; c < g.Cg; c++)
                s += (uint32_t)(((int32_t)xg[c * g.NI + off] - zx) * ((int32_t)wm[c * g.KK + kk] - zw));
        }
        acc[idx] = (int32_t)s;
    }
}

void axis_split(const ft_node *n, const ft_shape *x, int64_t *len, int64_t *inner)
{
    int64_t outer;
    if (n->params.quant.axis < 0) {
        *len = 1, *inner = (int64_t)ft_numel(x);
        return;
    }
    ft_reduce_around_axis(x, n->params.quant.axis, &outer, len, inner);
}

template <class A>
ft_status launch_mm_a(ft_kctx *k, const ft_node *n, const ft_view *a, const ft_view *b, const ft_view *za,
                      const ft_view *zb, int32_t *acc, int64_t total, const mm_batch &m)
{
    unsigned g = cu_grid(k->be, (uint64_t)total);
    if (b->dtype == FT_U8)
        k_int_mm<A, uint8_t><<<g, CU_BLOCK, 0, k->be->stream>>>((const A *)a->data, (const uint8_t *)b->data,
                                                                (const A *)za->data, (const uint8_t *)zb->data,
                                                                acc, total, m);
    else
        k_int_mm<A, int8_t><<<g, CU_BLOCK, 0, k->be->stream>>>((const A *)a->data, (const int8_t *)b->data,
                                                               (const A *)za->data, (const int8_t *)zb->data, acc,
                                                               total, m);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* The int32 products of a and b (zero points subtracted) into acc. */
ft_status int_mm(ft_kctx *k, const ft_node *n, const ft_view *a, const ft_view *b, const ft_view *za,
                 const ft_view *zb, int32_t *acc, int64_t total)
{
    mm_batch m;
    ft_matmul_geom_of(&a->shape, &b->shape, &m.g);
    m.row_a = n->params.quant.row_a, m.col_b = n->params.quant.col_b;
    const int64_t K = m.g.K, N = m.g.N, rows = (int64_t)m.g.nbatch * m.g.M;
    if (a->dtype == FT_I8 && b->dtype == FT_I8 && !za->data && !zb->data && m.g.tall && K % 4 == 0 && N % 4 == 0 &&
        K > 0 && rows <= INT_MAX && N <= INT_MAX && K <= INT_MAX) {
        /* row-major acc[rows, N] = a[rows, K] b[K, N] is column-major acc^T = b^T a^T */
        const int32_t one = 1, zero = 0;
        cublasHandle_t h;
        ft_status hs = cu_blas(k, n, &h);
        if (hs)
            return hs;
        cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)rows, (int)K, &one,
                                        b->data, CUDA_R_8I, (int)N, a->data, CUDA_R_8I, (int)K, &zero, acc,
                                        CUDA_R_32I, (int)N, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
        if (s == CUBLAS_STATUS_SUCCESS)
            return FT_OK;
        if (s != CUBLAS_STATUS_NOT_SUPPORTED && s != CUBLAS_STATUS_INVALID_VALUE)
            return cu_fail(k, n, "cublasGemmEx", cu_cublas_str(s), "cuBLAS", __FILE__, __LINE__);
    }
    if (a->dtype == FT_U8)
        return launch_mm_a<uint8_t>(k, n, a, b, za, zb, acc, total, m);
    return launch_mm_a<int8_t>(k, n, a, b, za, zb, acc, total, m);
}

template <class X, class Q>
void launch_q(ft_kctx *k, const ft_view *in, ft_view *out, const void *zp, int64_t total, int64_t len, int64_t inner)
{
    int64_t lo, hi;
    ft_qrange(out[0].dtype, &lo, &hi);
    k_quantize<X, Q><<<cu_grid(k->be, (uint64_t)total), CU_BLOCK, 0, k->be->stream>>>(
        (const X *)in[0].data, (const X *)in[1].data, (const Q *)zp, (Q *)out[0].data, total, len, inner, lo, hi);
}

template <class X>
void launch_qx(ft_kctx *k, const ft_view *in, ft_view *out, const void *zp, int64_t total, int64_t len, int64_t inner)
{
    if (out[0].dtype == FT_U8)
        launch_q<X, uint8_t>(k, in, out, zp, total, len, inner);
    else if (out[0].dtype == FT_I8)
        launch_q<X, int8_t>(k, in, out, zp, total, len, inner);
    else if (out[0].dtype == FT_U16)
        launch_q<X, uint16_t>(k, in, out, zp, total, len, inner);
    else
        launch_q<X, int16_t>(k, in, out, zp, total, len, inner);
}

template <class I>
void launch_dq(ft_kctx *k, const ft_view *in, ft_view *out, const void *zp, int64_t total, int64_t len, int64_t inner)
{
    unsigned g = cu_grid(k->be, (uint64_t)total);
    cudaStream_t st = k->be->stream;
    const I *x = (const I *)in[0].data, *z = (const I *)zp;
    switch (in[1].dtype) {
    case FT_F64:
        k_dequantize_f64<I><<<g, CU_BLOCK, 0, st>>>(x, (const double *)in[1].data, z, (double *)out[0].data, total,
                                                    len, inner);
        break;
    case FT_F32:
        k_dequantize<I, float><<<g, CU_BLOCK, 0, st>>>(x, (const float *)in[1].data, z, (float *)out[0].data, total,
                                                       len, inner);
        break;
    case FT_F16:
        k_dequantize<I, __half><<<g, CU_BLOCK, 0, st>>>(x, (const __half *)in[1].data, z, (__half *)out[0].data,
                                                        total, len, inner);
        break;
    case FT_BF16:
        k_dequantize<I, __nv_bfloat16><<<g, CU_BLOCK, 0, st>>>(x, (const __nv_bfloat16 *)in[1].data, z,
                                                               (__nv_bfloat16 *)out[0].data, total, len, inner);
        break;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
}

template <class S>
void launch_rq(ft_kctx *k, const ft_view *in, ft_view *out, const int32_t *acc, int64_t total, rq_index ix, int relu)
{
    int64_t lo, hi;
    ft_qrange(out[0].dtype, &lo, &hi);
    unsigned g = cu_grid(k->be, (uint64_t)total);
    const S *as = (const S *)in[1].data, *bs = (const S *)in[4].data, *ys = (const S *)in[6].data;
    if (out[0].dtype == FT_U8)
        k_requant<S, uint8_t><<<g, CU_BLOCK, 0, k->be->stream>>>(acc, as, bs, ys, (const uint8_t *)in[7].data,
                                                                 (uint8_t *)out[0].data, total, ix, lo, hi, relu);
    else
        k_requant<S, int8_t><<<g, CU_BLOCK, 0, k->be->stream>>>(acc, as, bs, ys, (const int8_t *)in[7].data,
                                                                (int8_t *)out[0].data, total, ix, lo, hi, relu);
}

/* qlinear_matmul / qlinear_conv: the int32 products in acc requantized into
 * out[0], clamped below at the zero point when relu (qlinear_conv's fused relu). */
ft_status requant(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const int32_t *acc, int64_t total,
                  rq_index ix, int relu)
{
    switch (in[1].dtype) {
    case FT_F32: launch_rq<float>(k, in, out, acc, total, ix, relu); break;
    case FT_F64: launch_rq<double>(k, in, out, acc, total, ix, relu); break;
    case FT_F16: launch_rq<__half>(k, in, out, acc, total, ix, relu); break;
    case FT_BF16: launch_rq<__nv_bfloat16>(k, in, out, acc, total, ix, relu); break;
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class X, class W>
void launch_conv(ft_kctx *k, const ft_view *x, const ft_view *w, const ft_view *xz, const ft_view *wz,
                 const ft_view *bias, int32_t *acc, int64_t total, const ft_conv_geom &g)
{
    k_int_conv<X, W><<<cu_grid(k->be, (uint64_t)total), CU_BLOCK, 0, k->be->stream>>>(
        (const X *)x->data, (const W *)w->data, (const X *)xz->data, (const W *)wz->data,
        wz->data && ft_numel(&wz->shape) > 1, (const int32_t *)bias->data, acc, total, g);
}

/* The int32 convolution of x and w (zero points subtracted, bias added) into acc. */
ft_status int_conv(ft_kctx *k, const ft_node *n, const ft_view *x, const ft_view *w, const ft_view *xz,
                   const ft_view *wz, const ft_view *bias, const ft_shape *ys, int32_t *acc, int64_t total,
                   ft_conv_geom *g)
{
    ft_conv_geom_of(&n->params.conv, &x->shape, &w->shape, ys, x->dtype, 0, g);
    if (x->dtype == FT_U8 && w->dtype == FT_U8)
        launch_conv<uint8_t, uint8_t>(k, x, w, xz, wz, bias, acc, total, *g);
    else if (x->dtype == FT_U8)
        launch_conv<uint8_t, int8_t>(k, x, w, xz, wz, bias, acc, total, *g);
    else if (w->dtype == FT_U8)
        launch_conv<int8_t, uint8_t>(k, x, w, xz, wz, bias, acc, total, *g);
    else
        launch_conv<int8_t, int8_t>(k, x, w, xz, wz, bias, acc, total, *g);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

} // namespace

/* quantize_linear (a float x) and dequantize_linear (an integer x): one
 * kernel over x, the scale's index from the axis split. */
static ft_status q_elementwise(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&in[0].shape), len, inner;
    if (total == 0)
        return FT_OK;
    axis_split(n, &in[0].shape, &len, &inner);
    const void *zp = n->n_in > 2 ? in[2].data : NULL;
    switch (in[0].dtype) {
    case FT_F32: launch_qx<float>(k, in, out, zp, total, len, inner); break;
    case FT_F64: launch_qx<double>(k, in, out, zp, total, len, inner); break;
    case FT_F16: launch_qx<__half>(k, in, out, zp, total, len, inner); break;
    case FT_BF16: launch_qx<__nv_bfloat16>(k, in, out, zp, total, len, inner); break;
    case FT_U8: launch_dq<uint8_t>(k, in, out, zp, total, len, inner); break;
    case FT_I8: launch_dq<int8_t>(k, in, out, zp, total, len, inner); break;
    case FT_I16: launch_dq<int16_t>(k, in, out, zp, total, len, inner); break;
    case FT_I32: launch_dq<int32_t>(k, in, out, zp, total, len, inner); break;
    case FT_U16: launch_dq<uint16_t>(k, in, out, zp, total, len, inner); break;
    case FT_I64: case FT_U32: case FT_U64: case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

ft_status cu_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return q_elementwise(k, n, in, out);
}

ft_status cu_dequantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return q_elementwise(k, n, in, out);
}

ft_status cu_dynamic_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&in[0].shape);
    k_dyn_range<<<1, 1024, 0, k->be->stream>>>((const float *)in[0].data, total, (float *)out[1].data,
                                               (uint8_t *)out[2].data);
    CU_LAUNCHED(k, n);
    if (total == 0)
        return FT_OK;
    k_dyn_quantize<<<cu_grid(k->be, (uint64_t)total), CU_BLOCK, 0, k->be->stream>>>(
        (const float *)in[0].data, total, (const float *)out[1].data, (const uint8_t *)out[2].data,
        (uint8_t *)out[0].data);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

ft_status cu_matmul_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ft_view none = {};
    return int_mm(k, n, &in[0], &in[1], n->n_in > 2 ? &in[2] : &none, n->n_in > 3 ? &in[3] : &none,
                  (int32_t *)out[0].data, total);
}

ft_status cu_qlinear_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&out[0].shape), M, K, N;
    if (total == 0)
        return FT_OK;
    void *ws;
    ft_status st = cu_workspace(k, n, (size_t)total * sizeof(int32_t), &ws);
    if (st || (st = int_mm(k, n, &in[0], &in[3], &in[2], &in[5], (int32_t *)ws, total)))
        return st;
    ft_matmul_mkn(&in[0].shape, &in[3].shape, &M, &K, &N);
    rq_index ix = {N, M, 1, N, n->params.quant.row_a, n->params.quant.col_b};
    return requant(k, n, in, out, (const int32_t *)ws, total, ix, 0);
}

ft_status cu_conv_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ft_view none = {};
    ft_conv_geom g;
    return int_conv(k, n, &in[0], &in[1], n->n_in > 2 ? &in[2] : &none, n->n_in > 3 ? &in[3] : &none, &none,
                    &out[0].shape, (int32_t *)out[0].data, total, &g);
}

ft_status cu_qlinear_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    void *ws;
    ft_view none = {};
    ft_conv_geom g;
    ft_status st = cu_workspace(k, n, (size_t)total * sizeof(int32_t), &ws);
    if (st || (st = int_conv(k, n, &in[0], &in[3], &in[2], &in[5], n->n_in > 8 ? &in[8] : &none, &out[0].shape,
                             (int32_t *)ws, total, &g)))
        return st;
    rq_index ix = {1, 1, g.P, g.M, 0, ft_numel(&in[4].shape) > 1};
    return requant(k, n, in, out, (const int32_t *)ws, total, ix, n->params.conv.act == FT_CONV_ACT_RELU);
}
