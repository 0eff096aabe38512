/* The CUDA backend's shared layer: the backend context, the checking macros
 * every CUDA/cuBLAS/cuFFT call goes through, dtype dispatch, element
 * conversions, launch geometry, the per-node workspace and the device-side
 * report of data errors (an index out of range, integer division by zero).
 *
 * A CUDA op file has three layers: __global__ kernels, launchers on
 * k->be->stream, and the entry point with the ft_kernel_fn signature that takes
 * the node. Entry points are declared below and listed in the kernel table
 * of both backends (runtime/kernels.def).
 *
 *   ft_status cu_relu(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) {
 *       cudaStream_t s = k->be->stream;
 *       relu_kernel<<<cu_grid(k->be, cnt), CU_BLOCK, 0, s>>>(...);
 *       CU_LAUNCHED(k, n);          // cudaGetLastError, naming node and op
 *       return FT_OK;
 *   }
 *
 * Ownership: the context owns its stream, handles, workspace, pinned staging
 * buffers and plan caches; cu_close releases all of them. Kernels never
 * allocate device memory themselves: they use cu_workspace. */
#ifndef FT_CU_CUH
#define FT_CU_CUH

extern "C" {
#include "../runtime/backend.h"
}

/* The toolkit's own headers do not build under -Wswitch-enum. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wswitch-enum"
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cufft.h>
#pragma GCC diagnostic pop
#include <stdint.h>

/* Dtype sets. Every float op runs natively in f16 and bf16 (loads widen to
 * f32, arithmetic in f32, one rounding to nearest even on store: NUMERICS in
 * man/ftrun-graph.5, and what the CPU reference does). u16, u32 and u64 run
 * in the elementwise kernels (the EW_ sets), cast and data movement only;
 * every other kernel leaves them to the CPU (CU_DISPATCH has no case for
 * them). */
#define CU_UWIDE (FT_M(U16) | FT_M(U32) | FT_M(U64))
#define CU_FLOAT FT_DT_FLOAT
#define CU_NUM (FT_DT_NUM & ~CU_UWIDE)
#define CU_SIGNED FT_DT_SIGNED
#define CU_INT (FT_DT_INT & ~CU_UWIDE)
#define CU_ANY (FT_DT_ANY & ~CU_UWIDE)
#define CU_EW_NUM FT_DT_NUM
#define CU_EW_INT FT_DT_INT
#define CU_EW_ANY FT_DT_ANY
#define CU_EQ FT_DT_ANY /* no strings on this backend (graph/str.h) */
#define CU_STR 0
#define CU_ML 0 /* the ai.onnx.ml ops run on the CPU (--fallback cpu) */
#define CU_IMG 0 /* image_decoder: the CPU's alone (--fallback cpu) */
#define CU_BYTES FT_DT_ALL /* data movement copies bytes: the low-precision dtypes too, never strings */
#define CU_CAST FT_DT_ANY  /* no low-precision dtype (cu_cast refuses them as destinations) */
#define CU_BOOL FT_DT_BOOL
#define CU_Q8 (FT_M(U8) | FT_M(I8))                           /* quantized operands */
#define CU_QINT (FT_M(U8) | FT_M(I8) | FT_M(I16) | FT_M(I32)) /* dequantize_linear's inputs */

/* A data error found by a kernel. The first error wins (atomicCAS on code),
 * so the record lives in device memory: atomics on host-mapped memory go over
 * the host link and are only atomic where that link supports them (not on
 * PCIe hosts: hostNativeAtomicSupported is 0 there). The host copies it back
 * at every sync. */
enum { CU_DERR_NONE = 0, CU_DERR_INDEX = 1, CU_DERR_DIVZERO = 2 };
typedef struct cu_derr {
    int code;          /* CU_DERR_* */
    int node;          /* index into g->nodes */
    long long pos;     /* flat position in the output (or index tensor) */
    long long value;   /* the offending index */
    long long lo, hi;  /* valid range [lo, hi] */
} cu_derr;

struct cu_fft_cache;
struct cu_conv_cache;

struct ft_backend_ctx {
    int device;
    cudaDeviceProp prop;
    int sm_count;
    cudaStream_t stream;
    cublasHandle_t blas;   /* made on first use: cu_blas() */
    void *blas_ws;         /* cuBLAS workspace, fixed so graph capture never allocates */
    int allow_tf32;
    char desc[320];
    void *ws;              /* per-node workspace (device) */
    size_t ws_bytes;
    void *stage[2];        /* pinned staging buffers for transfers */
    size_t stage_bytes;
    cudaEvent_t stage_ev[2];
    cudaEvent_t marks[4];  /* device timing (backend mark/elapsed) */
    cu_derr *derr;         /* pinned host copy of the data-error record, refreshed at sync */
    cu_derr *derr_dev;     /* the record itself, in device memory (kernels report here) */
    const ft_graph *g;     /* the graph of the kernels queued, for messages at sync */
    int capturing;         /* inside CUDA graph capture: no allocation, no sync */
    cudaGraph_t graph;
    cudaGraphExec_t graph_exec;
    struct cu_fft_cache *fft; /* cuFFT plans per shape (fft.cu) */
};

/* Threads per block for elementwise-style kernels. */
#define CU_BLOCK 256

/* Grid for a grid-stride loop over n items: enough blocks to fill the GPU,
 * never more than the items need, at least 1. */
static inline unsigned cu_grid(const ft_backend_ctx *c, uint64_t n, unsigned block = CU_BLOCK)
{
    uint64_t need = (n + block - 1) / block;
    uint64_t cap = (uint64_t)c->sm_count * 32u;
    if (need > cap) need = cap;
    return need ? (unsigned)need : 1u;
}

/* Grid-stride loops: this thread's first item and the stride. */
__device__ __forceinline__ int64_t cu_grid_start() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t cu_grid_step() { return (int64_t)gridDim.x * blockDim.x; }

/* Division by a runtime constant: flat indices are split into coordinates
 * once per element, and a 64-bit division is a subroutine of dozens of
 * instructions on the GPU, a multiply-high by a magic number a handful.
 * Round-up method (Granlund & Montgomery): with l = ceil(log2 d) and
 * m = floor(2^64 (2^l - d) / d) + 1, n / d = (mulhi(n, m) + n) >> l for every
 * n < 2^63 (the sum then fits). Made on the host, used on the device. */
struct cu_fastdiv {
    uint64_t d, m;
    unsigned l;
};

static inline cu_fastdiv cu_fastdiv_make(uint64_t d)
{
    cu_fastdiv f;
    f.d = d ? d : 1;
    f.l = 0;
    while (f.l < 63 && ((uint64_t)1 << f.l) < f.d)
        f.l++;
    unsigned __int128 num = (unsigned __int128)(((uint64_t)1 << f.l) - f.d) << 64;
    f.m = (uint64_t)(num / f.d) + 1;
    return f;
}

__device__ __forceinline__ uint64_t cu_fastdiv_q(const cu_fastdiv &f, uint64_t n) { return (__umul64hi(n, f.m) + n) >> f.l; }

/* Failure of a CUDA/cuBLAS/cuFFT call: "FILE: node 'N' (op): CALL failed: NAME
 * (text) at SOURCE:LINE" (the calling .cu file), FT_ERUNTIME. Defined in
 * backend.cu. */
ft_status cu_fail(ft_kctx *k, const ft_node *n, const char *call, const char *name, const char *text,
                  const char *file, int line);
const char *cu_cublas_str(cublasStatus_t s);
/* The context's cuBLAS handle (stream, workspace and math mode set), made on
 * first use (backend.cu); a node error when it cannot be had. */
ft_status cu_blas(ft_kctx *k, const ft_node *n, cublasHandle_t *out);
const char *cu_cufft_str(cufftResult r);

/* The three checks: run call (spelt text), and on a status r_ other than ok
 * return its failure, described by name and desc. */
#define CU_CHECK_(k, n, T, ok, text, call, name, desc)                          \
    do {                                                                      \
        T r_ = (call);                                                        \
        if (r_ != (ok))                                                       \
            return cu_fail((k), (n), text, name, desc, __FILE__, __LINE__);   \
    } while (0)
#define CU_TRY(k, n, call) \
    CU_CHECK_(k, n, cudaError_t, cudaSuccess, #call, call, cudaGetErrorName(r_), cudaGetErrorString(r_))
#define CUBLAS_TRY(k, n, call) \
    CU_CHECK_(k, n, cublasStatus_t, CUBLAS_STATUS_SUCCESS, #call, call, cu_cublas_str(r_), "cuBLAS")
#define CUFFT_TRY(k, n, call) CU_CHECK_(k, n, cufftResult, CUFFT_SUCCESS, #call, call, cu_cufft_str(r_), "cuFFT")
/* After every kernel launch. */
#define CU_LAUNCHED(k, n) CU_TRY(k, n, cudaGetLastError())

/* Per-node scratch memory on the device, valid until the next call (one call
 * per kernel invocation; ask for the total). Grows by reallocation outside
 * CUDA graph capture; inside capture a larger request is an error. */
ft_status cu_workspace(ft_kctx *k, const ft_node *n, size_t bytes, void **out);

/* Index of node n in k->g->nodes (for device error reports). */
static inline int cu_node_index(const ft_kctx *k, const ft_node *n) { return (int)(n - k->g->nodes); }

/* Device side: record a data error (first one wins). */
__device__ __forceinline__ void cu_report(cu_derr *e, int code, int node, long long pos, long long value, long long lo,
                                          long long hi)
{
    if (atomicCAS(&e->code, 0, -1) == 0) {
        e->node = node;
        e->pos = pos;
        e->value = value;
        e->lo = lo;
        e->hi = hi;
        __threadfence();
        atomicExch(&e->code, code);
    }
}

/* An index error: every report is an atomic on the one error record, so a
 * tensor full of bad indices must not turn into millions of them contending
 * for one address. One report per thread at most, by one lane of the lanes
 * that found one together. The valid range is [-dim, dim-1]. */
__device__ __forceinline__ void cu_index_error(bool &done, cu_derr *e, int node, int64_t pos, int64_t v, int64_t dim)
{
    if (done)
        return;
    done = true;
    unsigned mask = __activemask();
    if ((int)(threadIdx.x & 31) == __ffs(mask) - 1)
        cu_report(e, CU_DERR_INDEX, node, pos, v, -dim, dim - 1);
}

/* Run the statements after U with U the unsigned type of `es` (1, 2, 4, 8)
 * bytes: data movement of any dtype. Variadic: a launch's <<<...>>> has commas. */
#define CU_ELEM_DISPATCH(es, U, ...)                                \
    switch (es) {                                                   \
    case 1: { typedef uint8_t U; __VA_ARGS__; } break;              \
    case 2: { typedef uint16_t U; __VA_ARGS__; } break;             \
    case 4: { typedef uint32_t U; __VA_ARGS__; } break;             \
    case 8: { typedef unsigned long long U; __VA_ARGS__; } break;   \
    default: break;                                                 \
    }

/* Element conversions: widen to f32 / f64 and narrow with one rounding. */
template <class T> __device__ __forceinline__ float cu_f(T v) { return (float)v; }
template <> __device__ __forceinline__ float cu_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float cu_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T cu_from_f(float v) { return (T)v; }
template <> __device__ __forceinline__ __half cu_from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 cu_from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* Any element widened to double, and a double result stored with the CPU's
 * roundings (16-bit floats through f32, as the CPU's f32 kernel followed by
 * its rounding to 16 bits; integer stores: reduce.cu). */
template <class T> __device__ __forceinline__ double cu_to_d(T v) { return (double)v; }
template <> __device__ __forceinline__ double cu_to_d<__half>(__half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double cu_to_d<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }
static __device__ __forceinline__ void cu_st_d(float *y, int64_t i, double v) { y[i] = (float)v; }
static __device__ __forceinline__ void cu_st_d(double *y, int64_t i, double v) { y[i] = v; }
static __device__ __forceinline__ void cu_st_d(__half *y, int64_t i, double v) { y[i] = __float2half_rn((float)v); }
static __device__ __forceinline__ void cu_st_d(__nv_bfloat16 *y, int64_t i, double v) { y[i] = __float2bfloat16_rn((float)v); }

/* The arithmetic type of a storage type: f32 for the 16-bit floats, itself otherwise. */
template <class T> struct cu_acc { typedef T type; };
template <> struct cu_acc<__half> { typedef float type; };
template <> struct cu_acc<__nv_bfloat16> { typedef float type; };
template <class T> __device__ __forceinline__ typename cu_acc<T>::type cu_load(const T *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float cu_load<__half>(const __half *p, int64_t i) { return __half2float(p[i]); }
template <> __device__ __forceinline__ float cu_load<__nv_bfloat16>(const __nv_bfloat16 *p, int64_t i) { return __bfloat162float(p[i]); }
template <class T, class A> __device__ __forceinline__ void cu_store(T *p, int64_t i, A v) { p[i] = (T)v; }
template <> __device__ __forceinline__ void cu_store<__half, float>(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
template <> __device__ __forceinline__ void cu_store<__nv_bfloat16, float>(__nv_bfloat16 *p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

/* The cases of the float dtypes in the dispatches below: BODY with T the
 * storage type. */
#define CU_FLOAT_CASES(T, BODY)                                    \
    case FT_F16: { typedef __half T; BODY; } break;                \
    case FT_BF16: { typedef __nv_bfloat16 T; BODY; } break;        \
    case FT_F32: { typedef float T; BODY; } break;                 \
    case FT_F64: { typedef double T; BODY; } break

/* Dtype dispatch: runs BODY with T the storage type of dt. bool is stored as
 * one byte 0/1 (uint8_t). */
#define CU_DISPATCH(dt, T, BODY)                                   \
    switch (dt) {                                                  \
    CU_FLOAT_CASES(T, BODY);                                       \
    case FT_I8: { typedef int8_t T; BODY; } break;                 \
    case FT_I16: { typedef int16_t T; BODY; } break;               \
    case FT_I32: { typedef int32_t T; BODY; } break;               \
    case FT_I64: { typedef int64_t T; BODY; } break;               \
    case FT_U8: { typedef uint8_t T; BODY; } break;                \
    case FT_BOOL: { typedef uint8_t T; BODY; } break;              \
    case FT_U16: case FT_U32: case FT_U64: /* CU_NUM: not here */  \
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;                      \
    }
/* Same over the float dtypes only (others: nothing runs). */
#define CU_DISPATCH_FLOAT(dt, T, BODY)                             \
    switch (dt) {                                                  \
    CU_FLOAT_CASES(T, BODY);                                       \
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: \
    case FT_U16: case FT_U32: case FT_U64:                         \
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;        \
    }

/* A shape with row-major strides, passed to kernels by value. */
typedef struct cu_shape {
    int rank;
    int64_t dims[FT_MAX_RANK];
    int64_t strides[FT_MAX_RANK]; /* elements; 0 for a broadcast dim */
} cu_shape;

/* Contiguous strides of s. */
cu_shape cu_shape_of(const ft_shape *s);
/* Shape `out` with the strides of `in` read through broadcasting to out. */
cu_shape cu_shape_bcast(const ft_shape *in, const ft_shape *out);

/* Kernel entry points (the ft_kernel_fn signature), per op family. */
#define CU_KFN(name) ft_status name(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
/* elementwise.cu */
CU_KFN(cu_unary);
CU_KFN(cu_cast);
CU_KFN(cu_binary);
CU_KFN(cu_variadic);
CU_KFN(cu_where);
/* reduce.cu */
CU_KFN(cu_reduce);
CU_KFN(cu_arg);
CU_KFN(cu_cumsum);
CU_KFN(cu_topk);
/* norm.cu */
CU_KFN(cu_softmax);
CU_KFN(cu_layer_norm);
CU_KFN(cu_rms_norm);
/* norm_axes.cu */
CU_KFN(cu_axes_norm);
/* norm_channels.cu */
CU_KFN(cu_batch_norm);
CU_KFN(cu_instance_norm);
CU_KFN(cu_group_norm);
/* movement.cu */
CU_KFN(cu_copy);
CU_KFN(cu_transpose);
CU_KFN(cu_expand);
CU_KFN(cu_tile);
CU_KFN(cu_concat);
CU_KFN(cu_split);
CU_KFN(cu_slice);
CU_KFN(cu_gather);
CU_KFN(cu_gather_elements);
CU_KFN(cu_pad);
/* index.cu; cu_check_indices: the m-tuples of idx must lie in [-dims[j], dims[j] - 1] */
ft_status cu_check_indices(ft_kctx *k, const ft_node *n, const ft_view *idx, int m, const int64_t *dims);
CU_KFN(cu_gather_nd);
CU_KFN(cu_scatter_nd);
CU_KFN(cu_scatter_elements);
CU_KFN(cu_tensor_scatter);
CU_KFN(cu_one_hot);
CU_KFN(cu_trilu);
CU_KFN(cu_cumprod);
CU_KFN(cu_hardmax);
/* movement.cu: depth_to_space, space_to_depth */
CU_KFN(cu_depth_space);
/* geom.cu: eye_like, reverse_sequence, col2im, affine_grid, roi_align (center_crop_pad: cu_pad) */
CU_KFN(cu_tensor_shape);
CU_KFN(cu_tensor_size);
CU_KFN(cu_range);
CU_KFN(cu_eye_like);
CU_KFN(cu_reverse_sequence);
CU_KFN(cu_col2im);
CU_KFN(cu_affine_grid);
CU_KFN(cu_roi_align);
/* matmul.cu */
CU_KFN(cu_matmul);
CU_KFN(cu_gemm);
CU_KFN(cu_einsum);
/* conv.cu */
CU_KFN(cu_conv);
CU_KFN(cu_conv_transpose);
/* deform.cu: deform_conv */
CU_KFN(cu_deform_conv);
/* linalg.cu: det */
CU_KFN(cu_det);
/* pool.cu */
CU_KFN(cu_max_pool);
CU_KFN(cu_max_unpool);
CU_KFN(cu_average_pool);
CU_KFN(cu_global_pool);
CU_KFN(cu_resize);
CU_KFN(cu_lp_pool);
/* image.cu */
CU_KFN(cu_lrn);
CU_KFN(cu_grid_sample);
CU_KFN(cu_resize_cubic); /* resize in mode cubic or with antialias, called by cu_resize */
/* fft.cu */
CU_KFN(cu_fft);
CU_KFN(cu_stft);
/* loss.cu: softmax_cross_entropy_loss, negative_log_likelihood_loss, the window functions */
CU_KFN(cu_loss);
CU_KFN(cu_window);
CU_KFN(cu_random);
CU_KFN(cu_mel_weight_matrix);
void cu_fft_cache_free(struct cu_fft_cache *c);
/* attention.cu */
CU_KFN(cu_attention);
CU_KFN(cu_dropout);
/* attention_ext.cu: rotary_embedding, and attention's KV cache: keys and
 * values past then new into present_key/present_value (or the workspace);
 * *kp, *vp and *T are set to them and their length. */
CU_KFN(cu_rotary_embedding);
ft_status cu_attn_kv_cache(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const void **kp,
                           const void **vp, int64_t *T);
/* rnn.cu: lstm, gru, rnn */
CU_KFN(cu_rnn);
/* matmul.cu, shared with conv.cu and rnn.cu: C[b] = alpha A[b] B[b] + beta C[b]
 * (row-major meaning, operands as {row, column, batch} element strides). */
ft_status cu_gemm_strided(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, int64_t batch, int64_t M, int64_t N,
                          int64_t K, double alpha, const void *A, const int64_t *as, const void *B, const int64_t *bs,
                          double beta, void *C, const int64_t *cs);
/* quant.cu */
CU_KFN(cu_quantize_linear);
CU_KFN(cu_dequantize_linear);
CU_KFN(cu_dynamic_quantize_linear);
CU_KFN(cu_matmul_integer);
CU_KFN(cu_qlinear_matmul);
CU_KFN(cu_conv_integer);
CU_KFN(cu_qlinear_conv);
/* datadep.cu: non_zero, compress, unique, non_max_suppression */
CU_KFN(cu_datadep);

#endif
