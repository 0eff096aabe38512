/* CUDA random_uniform_like, random_normal_like, bernoulli and multinomial: the CPU
 * reference's values (src/cpu/random.c): element i from Philox-4x32-10 with
 * counter i and the node's seed as key, the two 53-bit uniforms
 * u1 = ((w0 >> 5) 2^26 + (w1 >> 6)) / 2^53 and u2 (from w2, w3) in double,
 * then low + (high - low) u1, mean + scale sqrt(-2 ln(1 - u1)) cos(2 pi u2),
 * or u1 < p[i]; one thread per element. The normal's log, sqrt and cos are
 * CUDA's, within an ulp of the CPU's libm in double.
 *
 *   ft_status st = cu_random(k, n, in, out);   // via the kernel table (runtime/kernels.def) */
#include "cu.cuh"
#include "../graph/philox.h"

#include <math.h>

static __device__ __forceinline__ double unit53(uint32_t a, uint32_t b)
{
    return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * (1.0 / 9007199254740992.0);
}

/* A double result stored as the CPU's ft_store_f64 does for these values
 * (16-bit floats through f32; integers and bool from 0 or 1 only). */
template <class T> static __device__ __forceinline__ void store_v(T *y, uint64_t i, double v) { y[i] = (T)v; }
template <> __device__ __forceinline__ void store_v<float>(float *y, uint64_t i, double v) { cu_st_d(y, (int64_t)i, v); }
template <> __device__ __forceinline__ void store_v<__half>(__half *y, uint64_t i, double v) { cu_st_d(y, (int64_t)i, v); }
template <> __device__ __forceinline__ void store_v<__nv_bfloat16>(__nv_bfloat16 *y, uint64_t i, double v)
{
    cu_st_d(y, (int64_t)i, v);
}
template <> __device__ __forceinline__ void store_v<bool>(bool *y, uint64_t i, double v) { y[i] = v != 0; }

/* op 0 uniform, 1 normal, 2 bernoulli (p of dtype P) */
template <class T, class P>
__global__ void random_kernel(T *y, const P *p, uint64_t cnt, int op, double a, double b, uint64_t seed)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cnt; i += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t w[4];
        ft_philox4x32(i, seed, w);
        double u1 = unit53(w[0], w[1]), v;
        if (op == 0)
            v = a + (b - a) * u1;
        else if (op == 1)
            v = a + b * sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * unit53(w[2], w[3]));
        else
            v = u1 < cu_to_d(p[i]) ? 1.0 : 0.0;
        store_v(y, i, v);
    }
}

/* bernoulli: y from the probabilities x, of storage type U. */
template <class T, class U>
static void launch_like(unsigned g, cudaStream_t s, T *y, const void *x, uint64_t cnt, int op, uint64_t seed)
{
    random_kernel<T, U><<<g, CU_BLOCK, 0, s>>>(y, (const U *)x, cnt, op, 0, 0, seed);
}

template <class T>
static ft_status launch_out(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, uint64_t cnt, int op)
{
    const ft_random_params *p = &n->params.rnd;
    unsigned g = cu_grid(k->be, cnt);
    cudaStream_t s = k->be->stream;
    T *y = (T *)out[0].data;
    if (op < 2) {
        random_kernel<T, float><<<g, CU_BLOCK, 0, s>>>(y, NULL, cnt, op, p->a, p->b, p->seed);
    } else {
        if (!ft_dtype_in(in[0].dtype, FT_DT_FLOAT))
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                               ft_dtype_name(in[0].dtype), ft_op_name(n->op));
        const void *x = in[0].data;
        CU_DISPATCH_FLOAT(in[0].dtype, U, (launch_like<T, U>)(g, s, y, x, cnt, op, p->seed));
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* multinomial: one thread per (row, sample), the rule of cpu/random.c. */
template <class P, class I>
__global__ void multinomial_kernel(const P *x, I *y, int64_t rows, int64_t cls, int64_t ns, uint64_t seed)
{
    for (int64_t i = cu_grid_start(); i < rows * ns; i += cu_grid_step()) {
        const P *r = x + (i / ns) * cls;
        double mx = -INFINITY, total = 0, acc = 0;
        for (int64_t c = 0; c < cls; c++)
            mx = cu_to_d(r[c]) > mx ? cu_to_d(r[c]) : mx;
        for (int64_t c = 0; c < cls; c++)
            total += exp(cu_to_d(r[c]) - mx);
        uint32_t w[4];
        ft_philox4x32((uint64_t)i, seed, w);
        double t = unit53(w[0], w[1]) * total;
        int64_t c = 0;
        for (; c < cls - 1; c++) {
            acc += exp(cu_to_d(r[c]) - mx);
            if (t < acc)
                break;
        }
        y[i] = (I)c;
    }
}

template <class P>
static ft_status launch_multinomial(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t rows = in[0].shape.dims[0], cls = in[0].shape.dims[1], ns = out[0].shape.dims[1];
    unsigned g = cu_grid(k->be, (uint64_t)(rows * ns));
    cudaStream_t s = k->be->stream;
    if (out[0].dtype == FT_I64)
        multinomial_kernel<P, int64_t><<<g, CU_BLOCK, 0, s>>>((const P *)in[0].data, (int64_t *)out[0].data, rows, cls,
                                                             ns, n->params.rnd.seed);
    else
        multinomial_kernel<P, int32_t><<<g, CU_BLOCK, 0, s>>>((const P *)in[0].data, (int32_t *)out[0].data, rows, cls,
                                                             ns, n->params.rnd.seed);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_random)
{
    uint64_t cnt = ft_numel(&out[0].shape);
    if (n->op == FT_OP_MULTINOMIAL && cnt) {
        switch (in[0].dtype) {
        case FT_F16: return launch_multinomial<__half>(k, n, in, out);
        case FT_BF16: return launch_multinomial<__nv_bfloat16>(k, n, in, out);
        case FT_F32: return launch_multinomial<float>(k, n, in, out);
        case FT_F64: return launch_multinomial<double>(k, n, in, out);
        case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
        case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
        }
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                           ft_dtype_name(in[0].dtype), ft_op_name(n->op));
    }
    int op = n->op == FT_OP_RANDOM_UNIFORM_LIKE ? 0 : n->op == FT_OP_RANDOM_NORMAL_LIKE ? 1 : 2;
    if (cnt == 0)
        return FT_OK;
    switch (out[0].dtype) {
    case FT_F16: return launch_out<__half>(k, n, in, out, cnt, op);
    case FT_BF16: return launch_out<__nv_bfloat16>(k, n, in, out, cnt, op);
    case FT_F32: return launch_out<float>(k, n, in, out, cnt, op);
    case FT_F64: return launch_out<double>(k, n, in, out, cnt, op);
    case FT_I8: return launch_out<int8_t>(k, n, in, out, cnt, op);
    case FT_I16: return launch_out<int16_t>(k, n, in, out, cnt, op);
    case FT_I32: return launch_out<int32_t>(k, n, in, out, cnt, op);
    case FT_I64: return launch_out<int64_t>(k, n, in, out, cnt, op);
    case FT_U8: return launch_out<uint8_t>(k, n, in, out, cnt, op);
    case FT_U16: return launch_out<uint16_t>(k, n, in, out, cnt, op);
    case FT_U32: return launch_out<uint32_t>(k, n, in, out, cnt, op);
    case FT_U64: return launch_out<uint64_t>(k, n, in, out, cnt, op);
    case FT_BOOL: return launch_out<bool>(k, n, in, out, cnt, op);
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "output dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(out[0].dtype), ft_op_name(n->op));
}
