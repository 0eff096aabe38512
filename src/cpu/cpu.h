/* CPU reference backend: kernel entry points, one file per op family.
 * Each kernel has the ft_kernel_fn signature (runtime/backend.h) and is listed
 * in the kernel table of both backends (runtime/kernels.def) with the dtype
 * set it handles. Kernels own nothing beyond the call: the executor owns the
 * views, the node's parameters are read from n->params.
 * Parallelism: OpenMP, with num_threads(k->threads); small tensors run serial.
 *
 *   ft_status cpu_relu6(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
 *   {
 *       if (in[0].dtype != FT_F32) return cpu_bad_dtype(k, n, in[0].dtype);
 *       uint64_t cnt = ft_numel(&out[0].shape);
 *       const float *x = in[0].data; float *y = out[0].data;
 *       int par = cnt >= CPU_PAR_MIN && k->threads > 1;
 *       _Pragma("omp parallel for num_threads(k->threads) if (par)")
 *       for (uint64_t i = 0; i < cnt; i++) y[i] = x[i] < 0 ? 0 : x[i] > 6 ? 6 : x[i];
 *       return FT_OK;
 *   }
 */
#ifndef FT_CPU_H
#define FT_CPU_H

#include "../runtime/backend.h"

/* Dtype sets the kernels implement natively. f16 and bf16 are added for every
 * op whose kernel handles f32: cpu_backend.c converts them to f32, runs the f32
 * kernel and rounds the results to nearest even (NUMERICS in man/ftrun-graph.5). */
#define CPU_FLOAT (FT_M(F32) | FT_M(F64))
#define CPU_NUM (CPU_FLOAT | FT_DT_INT)
#define CPU_SIGNED (CPU_FLOAT | FT_DT_SINT)
#define CPU_INT FT_DT_INT
#define CPU_ANY (CPU_NUM | FT_DT_BOOL)
#define CPU_BYTES FT_DT_MOVE /* pure data movement: every dtype, the low-precision ones and strings included */
#define CPU_CAST (FT_DT_ALL | FT_DT_STR) /* strings: runtime/text_cast.c */
#define CPU_EW_NUM CPU_NUM  /* the elementwise kernels' sets (the CUDA backend's differ) */
#define CPU_EW_INT CPU_INT
#define CPU_EW_ANY CPU_ANY
#define CPU_EQ (CPU_ANY | FT_DT_STR) /* equal: strings too (binary.c) */
#define CPU_STR FT_DT_STR
#define CPU_ML (FT_DT_NUM | FT_DT_STR) /* runtime/ml.c; each op's inference narrows it */
#define CPU_IMG FT_M(U8) /* image_decoder (graph/image_codec.c) */
#define CPU_BOOL FT_DT_BOOL
#define CPU_Q8 (FT_M(U8) | FT_M(I8))                           /* quantized operands */
/* dequantize_linear's inputs: the integers and the low-precision dtypes but f8e8m0 */
#define CPU_QINT (FT_M(U8) | FT_M(I8) | FT_M(I16) | FT_M(I32) | (FT_DT_LOWP & ~FT_M(F8E8M0)))

/* Below this many elements a kernel should not spawn threads. */
#define CPU_PAR_MIN 32768

/* Width of the column chunks reduced together (norm.c, reduce.c): wide, so
 * that each row is read in long contiguous pieces, but narrow enough that
 * every thread gets work; a multiple of 16, at most max. */
static inline int64_t cpu_col_chunk(int64_t inner, int64_t nouter, int threads, int par, int64_t max)
{
    int64_t want = par ? (threads + nouter - 1) / nouter : 1;
    int64_t c = (inner + want - 1) / want;
    c = (c + 15) / 16 * 16;
    return c < max ? c : max;
}

/* The place of dt in the per-dtype kernel tables of the CPU files, which
 * list their loops in this order: f32, f64, i8, i16, i32, i64, u8, u16, u32,
 * u64, bool (0..10; CPU_SLOT_BOOL, the numeric ones below it); -1 for f16 and
 * bf16, which arrive widened to f32 (cpu_backend.c). */
#define CPU_SLOT_BOOL 10
static inline int cpu_dtype_slot(ft_dtype dt)
{
    switch (dt) {
    case FT_F32: return 0;
    case FT_F64: return 1;
    case FT_I8: return 2;
    case FT_I16: return 3;
    case FT_I32: return 4;
    case FT_I64: return 5;
    case FT_U8: return 6;
    case FT_U16: return 7;
    case FT_U32: return 8;
    case FT_U64: return 9;
    case FT_BOOL: return CPU_SLOT_BOOL;
    case FT_F16: case FT_BF16: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return -1;
}

/* X(suffix, C type, 1 for an integer, ...) over the numeric dtypes in the
 * order above: CPU_NUM_TYPES all ten, CPU_INT_TYPES the eight integers. */
#define CPU_INT_TYPES(X, ...)                                                                                      \
    X(i8, int8_t, 1, __VA_ARGS__) X(i16, int16_t, 1, __VA_ARGS__) X(i32, int32_t, 1, __VA_ARGS__)                  \
    X(i64, int64_t, 1, __VA_ARGS__) X(u8, uint8_t, 1, __VA_ARGS__) X(u16, uint16_t, 1, __VA_ARGS__)                \
    X(u32, uint32_t, 1, __VA_ARGS__) X(u64, uint64_t, 1, __VA_ARGS__)
#define CPU_NUM_TYPES(X, ...) X(f32, float, 0, __VA_ARGS__) X(f64, double, 0, __VA_ARGS__) CPU_INT_TYPES(X, __VA_ARGS__)

/* The offset, by strides st, of the coordinates of flat position p in the
 * first `rank` dims of shape q (the last the fastest), dim `axis` left out:
 * where gather_elements and scatter_elements meet the data tensor. */
static inline int64_t cpu_offset_but_axis(const ft_shape *q, int rank, int axis, int64_t p, const int64_t *st)
{
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t c = p % q->dims[d];
        p /= q->dims[d];
        if (d != axis)
            off += c * st[d];
    }
    return off;
}

/* fn(ctx, start, end) over 0..n: on one thread below CPU_PAR_MIN, else over
 * `threads` contiguous ranges whose bounds are multiples of 64 elements, so
 * that two threads never write the same cache line (cpu_backend.c). */
void cpu_run_ranges(int threads, int64_t n, void (*fn)(void *ctx, int64_t start, int64_t end), void *ctx);

/* The error of a kernel without a loop for dtype dt: "no CPU kernel for OP on DT". */
ft_status cpu_no_kernel(ft_kctx *k, const ft_node *n, ft_dtype dt);
/* "dtype DT is not supported by the cpu OP kernel". */
ft_status cpu_bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt);

/* A thread's scratch buffer inside a parallel region: ft_malloc(bytes), or
 * NULL with *failed set (atomically) for the caller to report after the
 * region (cpu_backend.c). */
void *cpu_thread_scratch(size_t bytes, int *failed);

/* Element i of an i32 or i64 index tensor. */
static inline int64_t cpu_load_index(const void *p, int is64, int64_t i)
{
    return is64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

/* blas.c: the f32 matrix product every CPU kernel uses, row-major
 * C[m,n] = alpha op(A) op(B) + beta C (op(X) = X^T when ta / tb), leading
 * dimensions lda, ldb, ldc, 64-bit sizes; beta 0 ignores what C held.
 * Returns 0, or a nonzero oneDNN status that cpu_blas_error turns into the
 * node's error (FT_OK for 0). Safe inside a parallel region (runs on the
 * calling thread there). cpu_sgemv is its one-row / one-column case.
 *   int rc = cpu_sgemm(0, 1, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
 *   if (rc) return cpu_blas_error(k, n, rc); */
int cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
void cpu_sgemv(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
ft_status cpu_blas_error(ft_kctx *k, const ft_node *n, int code);

/* 1 if one of the n f32 values at p is a NaN or an infinity (p may be NULL). */
static inline int cpu_nonfinite_f32(const void *p, uint64_t n)
{
    if (!p)
        return 0;
    const uint32_t *u = p;
    uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
    for (uint64_t i = 0; i < n; i++)
        bad |= (u[i] & 0x7f800000u) == 0x7f800000u;
    return bad != 0;
}

/* 1 if input i of node n is a constant of the graph (a value with no
 * producer that is not a graph input): its contents never change. */
static inline int cpu_input_is_const(const ft_kctx *k, const ft_node *n, int i)
{
    int t = i < n->n_in ? n->in[i] : -1;
    if (t < 0 || !k->g)
        return 0;
    const ft_tensor *w = &k->g->tensors[t];
    return w->producer < 0 && (w->flags & FT_TF_VALUE) && !(w->flags & FT_TF_INPUT);
}

/* unary.c, binary.c */
ft_status cpu_unary(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_cast(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_binary(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_variadic(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_where(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* matmul.c */
ft_status cpu_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_gemm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* matmul.c: the fused epilogue (bias of N values or NULL, then act) on the
 * f32 rows x N matrix y, threads splitting the rows when it is large. */
void cpu_matmul_epilogue(ft_kctx *k, float *y, int64_t rows, int64_t N, const float *bias, ft_mm_act act);
/* matmul_dnnl.c: an f32 matmul / gemm through oneDNN's matmul primitive
 * (weights packed once when constant) where its rule picks it. Returns 1
 * when it ran the node (*st its status), 0 when the caller runs its own
 * path. Its per-node state: the CPU_DNNL_MATMUL cache (below). */
int cpu_matmul_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st);
/* qconv_dnnl.c: qlinear_conv's int32 sums of x times w (no zero points, no
 * bias) on oneDNN's int8 convolution where they are exact (see there): 1 when
 * it ran (*st its status; *acc the sums, channels last [N, spatial..., M],
 * held by the node's cache entry until its next run), 0 when the caller runs
 * its own loops. ys: the output's shape. */
int cpu_qconv_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, const ft_shape *ys, const int32_t **acc,
                   ft_status *st);
/* dnnl_cache.c: the per-node oneDNN state of conv_dnnl.c and matmul_dnnl.c,
 * a cache of each kind owned by the backend context (cpu_dnnl_cache_slot, in
 * cpu_backend.c), released by its close() through cpu_dnnl_cache_free. */
enum { CPU_DNNL_CONV, CPU_DNNL_MATMUL, CPU_DNNL_RNN, CPU_DNNL_QCONV, CPU_DNNL_SPARSE, CPU_DNNL_KINDS };
struct cpu_dnnl_cache;
struct cpu_dnnl_cache **cpu_dnnl_cache_slot(ft_backend_ctx *c, int kind);
void cpu_dnnl_cache_free(struct cpu_dnnl_cache *c);
/* The tuning cache lent to the context when it was opened
 * (ft_backend_opts.tuning; tuning.h), NULL when none (cpu_backend.c). */
ft_tuning *cpu_tuning_of(ft_backend_ctx *c);
/* reduce.c */
ft_status cpu_reduce(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_arg(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_cumsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* norm.c */
ft_status cpu_softmax(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_layer_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_rms_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* norm_axes.c */
ft_status cpu_axes_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* movement.c */
ft_status cpu_copy(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_transpose(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_expand(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_tile(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_concat(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_split(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_slice(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_gather(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_gather_elements(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_pad(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* The data error of index v at flat position i of idx (input 1 of n), out of
 * range for axis `axis` of input 0 (size dim): FT_EGRAPH naming node, tensors,
 * position and the valid range. cpu_check_indices reports the first index of
 * idx outside [-dim, dim-1]. */
ft_status cpu_index_error(ft_kctx *k, const ft_node *n, const ft_view *idx, int64_t i, int64_t v, int axis, int64_t dim);
ft_status cpu_check_indices(ft_kctx *k, const ft_node *n, const ft_view *idx, int axis, int64_t dim);
/* index.c: gather_nd, scatter_nd, scatter_elements, one_hot, trilu, cumprod, hardmax */
ft_status cpu_gather_nd(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_scatter_nd(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_scatter_elements(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_tensor_scatter(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_one_hot(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_trilu(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_cumprod(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_hardmax(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_depth_space(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* shapes.c: shape, size, range */
ft_status cpu_tensor_shape(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_tensor_size(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_range(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* geom.c: eye_like, reverse_sequence, col2im, affine_grid, roi_align (center_crop_pad: cpu_pad) */
ft_status cpu_eye_like(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_reverse_sequence(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_col2im(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_affine_grid(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_roi_align(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* conv.c */
ft_status cpu_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* conv_dnnl.c: an f32 conv through oneDNN, or the `native` kernel where that
 * is faster (timed on the node's first runs). Returns 1 when it ran the conv
 * (*st its status), 0 when the caller runs its own loops. Its per-node state:
 * the CPU_DNNL_CONV cache (cpu_dnnl_cache_slot). */
int cpu_conv_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_kernel_fn native, ft_status *st);
/* The backend's prepare (backend.h): empties the cache for a new graph or
 * run id and decides which tensors of k->g stay in oneDNN's blocked layouts
 * for the run (conv_layout.c), before any node runs; the kernels only read
 * that decision. FT_ERUNTIME when out of memory. */
ft_status cpu_conv_prepare(ft_kctx *k);
/* B when tensor t holds one of oneDNN's channel-blocked layouts,
 * [N][C/B][spatial][B], in this run (conv_dnnl.c, blocked chains): 8 or 16
 * for nChw8c / nChw16c and the like, C for channels-last (nhwc); else 0. */
int64_t cpu_channel_block(ft_kctx *k, int t);
/* blocked.c: the global pools, a per-channel mul and max_pool on a
 * channel-blocked tensor. 1 when it ran the node (*st its status), 0 when the tensor is
 * plain and the caller's loops run. */
int cpu_global_pool_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st);
int cpu_mul_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st);
int cpu_max_pool_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st);
/* blocked.c: y = the plain f32 tensor x of shape sh ([N][C][spatial]) in the
 * channel-blocked layout of block B ([N][C/B][spatial][B]; channels-last: B =
 * C), on `threads` threads, and *amax = max |x| (INFINITY when x holds a NaN
 * or an infinity), read in the same pass. 0 when it has no loop for that
 * (no AVX-512, B not a multiple of 16): the caller reorders. */
int cpu_to_blocked(const float *x, float *y, const ft_shape *sh, int64_t B, int threads, double *amax);
ft_status cpu_conv_transpose(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* deform.c: deform_conv */
ft_status cpu_deform_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* linalg.c: det */
ft_status cpu_det(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* pool.c (pooling), resize.c (resize) */
ft_status cpu_max_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_max_unpool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_average_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_global_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_resize(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_lp_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* image.c: lrn, grid_sample */
ft_status cpu_lrn(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_grid_sample(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* fft.c: fft, ifft, rfft, irfft, stft */
ft_status cpu_fft(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_stft(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* loss.c: softmax_cross_entropy_loss, negative_log_likelihood_loss, the window functions */
ft_status cpu_loss(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_window(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_random(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_mel_weight_matrix(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* attention.c: attention; norm_channels.c: batch_norm, instance_norm, group_norm */
ft_status cpu_attention(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* rotary.c: rotary_embedding */
ft_status cpu_rotary_embedding(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_batch_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_instance_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_group_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* rnn.c: lstm, gru, rnn */
ft_status cpu_rnn(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* misc.c: dropout, topk, einsum */
ft_status cpu_dropout(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_topk(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_einsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* quant.c: quantize_linear, dequantize_linear, dynamic_quantize_linear,
 * matmul_integer, qlinear_matmul, conv_integer, qlinear_conv */
ft_status cpu_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_dequantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_dynamic_quantize_linear(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_matmul_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_qlinear_matmul(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_conv_integer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status cpu_qlinear_conv(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* datadep.c: non_zero, compress, unique, non_max_suppression (outputs sized
 * at their bound; the kernel sets the shape it wrote) */
ft_status cpu_datadep(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);

#endif
