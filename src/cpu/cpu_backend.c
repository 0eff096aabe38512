#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct ft_backend_ctx {
    int threads;
    char desc[128];
};

#define K(fn, m) {fn, m}
/* What each kernel implements itself; see cpu_kernels below for f16/bf16. */
static const ft_kernel native[FT_OP_COUNT] = {
    [FT_OP_IDENTITY] = K(cpu_copy, CPU_BYTES),
    [FT_OP_NEG] = K(cpu_unary, CPU_SIGNED),
    [FT_OP_ABS] = K(cpu_unary, CPU_SIGNED),
    [FT_OP_SIGN] = K(cpu_unary, CPU_SIGNED),
    [FT_OP_RELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SIGMOID] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_TANH] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_EXP] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_LOG] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SQRT] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_RSQRT] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_RECIPROCAL] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SIN] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_COS] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_ERF] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_FLOOR] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_CEIL] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_ROUND] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SOFTPLUS] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SOFTSIGN] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SILU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_MISH] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_HARD_SWISH] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_LEAKY_RELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_ELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_CELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_SELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_HARD_SIGMOID] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_GELU] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_CLIP] = K(cpu_unary, CPU_NUM),
    [FT_OP_CAST] = K(cpu_cast, CPU_BYTES),
    [FT_OP_NOT] = K(cpu_unary, FT_DT_BOOL),
    [FT_OP_IS_NAN] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_IS_INF] = K(cpu_unary, CPU_FLOAT),
    [FT_OP_ADD] = K(cpu_binary, CPU_NUM),
    [FT_OP_SUB] = K(cpu_binary, CPU_NUM),
    [FT_OP_MUL] = K(cpu_binary, CPU_NUM),
    [FT_OP_DIV] = K(cpu_binary, CPU_NUM),
    [FT_OP_POW] = K(cpu_binary, CPU_NUM),
    [FT_OP_MOD] = K(cpu_binary, CPU_NUM),
    [FT_OP_MAX] = K(cpu_variadic, CPU_NUM),
    [FT_OP_MIN] = K(cpu_variadic, CPU_NUM),
    [FT_OP_EQUAL] = K(cpu_binary, CPU_ANY),
    [FT_OP_LESS] = K(cpu_binary, CPU_NUM),
    [FT_OP_LESS_EQUAL] = K(cpu_binary, CPU_NUM),
    [FT_OP_GREATER] = K(cpu_binary, CPU_NUM),
    [FT_OP_GREATER_EQUAL] = K(cpu_binary, CPU_NUM),
    [FT_OP_AND] = K(cpu_binary, FT_DT_BOOL),
    [FT_OP_OR] = K(cpu_binary, FT_DT_BOOL),
    [FT_OP_XOR] = K(cpu_binary, FT_DT_BOOL),
    [FT_OP_WHERE] = K(cpu_where, FT_DT_BOOL),
    [FT_OP_MATMUL] = K(cpu_matmul, CPU_FLOAT),
    [FT_OP_GEMM] = K(cpu_gemm, CPU_FLOAT),
    [FT_OP_REDUCE_SUM] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_MEAN] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_MAX] = K(cpu_reduce, CPU_ANY),
    [FT_OP_REDUCE_MIN] = K(cpu_reduce, CPU_ANY),
    [FT_OP_REDUCE_PROD] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_L1] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_L2] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_SUM_SQUARE] = K(cpu_reduce, CPU_NUM),
    [FT_OP_REDUCE_LOG_SUM_EXP] = K(cpu_reduce, CPU_NUM),
    [FT_OP_ARGMAX] = K(cpu_arg, CPU_NUM),
    [FT_OP_ARGMIN] = K(cpu_arg, CPU_NUM),
    [FT_OP_CUMSUM] = K(cpu_cumsum, CPU_NUM),
    [FT_OP_SOFTMAX] = K(cpu_softmax, CPU_FLOAT),
    [FT_OP_LOG_SOFTMAX] = K(cpu_softmax, CPU_FLOAT),
    [FT_OP_LAYER_NORM] = K(cpu_layer_norm, CPU_FLOAT),
    [FT_OP_RMS_NORM] = K(cpu_rms_norm, CPU_FLOAT),
    [FT_OP_RESHAPE] = K(cpu_copy, CPU_BYTES),
    [FT_OP_TRANSPOSE] = K(cpu_transpose, CPU_BYTES),
    [FT_OP_FLATTEN] = K(cpu_copy, CPU_BYTES),
    [FT_OP_SQUEEZE] = K(cpu_copy, CPU_BYTES),
    [FT_OP_UNSQUEEZE] = K(cpu_copy, CPU_BYTES),
    [FT_OP_EXPAND] = K(cpu_expand, CPU_BYTES),
    [FT_OP_TILE] = K(cpu_tile, CPU_BYTES),
    [FT_OP_CONCAT] = K(cpu_concat, CPU_BYTES),
    [FT_OP_SPLIT] = K(cpu_split, CPU_BYTES),
    [FT_OP_SLICE] = K(cpu_slice, CPU_BYTES),
    [FT_OP_GATHER] = K(cpu_gather, CPU_BYTES),
    [FT_OP_GATHER_ELEMENTS] = K(cpu_gather_elements, CPU_BYTES),
    [FT_OP_PAD] = K(cpu_pad, CPU_BYTES),
    [FT_OP_EINSUM] = K(cpu_einsum, CPU_FLOAT),
    [FT_OP_TOPK] = K(cpu_topk, CPU_NUM),
    [FT_OP_BATCH_NORM] = K(cpu_batch_norm, CPU_FLOAT),
    [FT_OP_INSTANCE_NORM] = K(cpu_instance_norm, CPU_FLOAT),
    [FT_OP_GROUP_NORM] = K(cpu_group_norm, CPU_FLOAT),
    [FT_OP_CONV] = K(cpu_conv, CPU_FLOAT),
    [FT_OP_CONV_TRANSPOSE] = K(cpu_conv_transpose, CPU_FLOAT),
    [FT_OP_MAX_POOL] = K(cpu_max_pool, CPU_FLOAT | FT_M(I8) | FT_M(U8)),
    [FT_OP_AVERAGE_POOL] = K(cpu_average_pool, CPU_FLOAT),
    [FT_OP_GLOBAL_AVERAGE_POOL] = K(cpu_global_pool, CPU_FLOAT),
    [FT_OP_GLOBAL_MAX_POOL] = K(cpu_global_pool, CPU_FLOAT),
    [FT_OP_RESIZE] = K(cpu_resize, CPU_FLOAT),
    [FT_OP_FFT] = K(cpu_fft, CPU_FLOAT),
    [FT_OP_IFFT] = K(cpu_fft, CPU_FLOAT),
    [FT_OP_RFFT] = K(cpu_fft, CPU_FLOAT),
    [FT_OP_IRFFT] = K(cpu_fft, CPU_FLOAT),
    [FT_OP_ATTENTION] = K(cpu_attention, CPU_FLOAT),
    [FT_OP_DROPOUT] = K(cpu_dropout, CPU_FLOAT),
};

#define HALF (FT_M(F16) | FT_M(BF16))

/* f16/bf16 through the f32 kernel: widen every 16-bit float input (exactly),
 * run the kernel, round every 16-bit float output to nearest even. Inputs
 * of other dtypes (indices, masks) pass through untouched. */
static ft_status cpu_via_f32(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_view vin[64] = {0}, vout[64] = {0};
    void *tmp[128];
    int nt = 0;
    ft_status st = FT_OK;
    if (n->n_in > 64 || n->n_out > 64)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "too many inputs or outputs");
    for (int i = 0; i < n->n_in + n->n_out && !st; i++) {
        int is_in = i < n->n_in;
        const ft_view *v = is_in ? &in[i] : &out[i - n->n_in];
        ft_view *w = is_in ? &vin[i] : &vout[i - n->n_in];
        *w = *v;
        if (!v->data || !ft_dtype_in(v->dtype, HALF))
            continue;
        uint64_t cnt = ft_numel(&v->shape);
        float *f = ft_malloc((size_t)cnt * sizeof(float));
        if (!f) {
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory widening %s to f32 (%llu elements)",
                             ft_dtype_name(v->dtype), (unsigned long long)cnt);
            break;
        }
        tmp[nt++] = f;
        if (is_in) {
            const uint16_t *h = v->data;
            if (v->dtype == FT_F16)
                for (uint64_t j = 0; j < cnt; j++) f[j] = ft_f16_to_f32(h[j]);
            else
                for (uint64_t j = 0; j < cnt; j++) f[j] = ft_bf16_to_f32(h[j]);
        }
        w->data = f;
        w->dtype = FT_F32;
    }
    if (!st)
        st = native[n->op].fn(k, n, vin, vout);
    for (int o = 0; o < n->n_out && !st; o++) {
        if (!out[o].data || !ft_dtype_in(out[o].dtype, HALF))
            continue;
        uint64_t cnt = ft_numel(&out[o].shape);
        const float *f = vout[o].data;
        uint16_t *h = out[o].data;
        if (out[o].dtype == FT_F16)
            for (uint64_t j = 0; j < cnt; j++) h[j] = ft_f32_to_f16(f[j]);
        else
            for (uint64_t j = 0; j < cnt; j++) h[j] = ft_f32_to_bf16(f[j]);
    }
    for (int i = 0; i < nt; i++)
        free(tmp[i]);
    return st;
}

/* The table the executor dispatches through: native kernels, plus f16/bf16
 * wherever the op's contract takes them and the kernel handles f32. */
static ft_kernel cpu_kernels[FT_OP_COUNT];

__attribute__((constructor)) static void cpu_kernels_init(void)
{
    for (int op = 0; op < FT_OP_COUNT; op++) {
        cpu_kernels[op] = native[op];
        ft_dtype_mask want = ft_op_get((ft_op)op)->dtypes & HALF;
        if (native[op].fn && want && !(native[op].dtypes & want) && ft_dtype_in(FT_F32, native[op].dtypes)) {
            cpu_kernels[op].fn = cpu_via_f32;
            cpu_kernels[op].dtypes |= want;
        }
    }
}

static ft_status cpu_open(const ft_backend_opts *o, ft_backend_ctx **out, ft_error *err)
{
    ft_backend_ctx *c = ft_calloc(1, sizeof *c);
    if (!c)
        return ft_err(err, FT_ERUNTIME, "out of memory opening the cpu backend");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = o && o->threads > 0 ? o->threads : (cores > 0 ? (int)cores : 1);
#ifdef _OPENMP
    omp_set_num_threads(c->threads);
#endif
    snprintf(c->desc, sizeof c->desc, "CPU reference backend, %d thread%s", c->threads, c->threads == 1 ? "" : "s");
    *out = c;
    return FT_OK;
}

static void cpu_close(ft_backend_ctx *c) { free(c); }
static const char *cpu_describe(ft_backend_ctx *c) { return c->desc; }

static ft_status cpu_alloc(ft_backend_ctx *c, size_t bytes, void **out, ft_error *err)
{
    (void)c;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
        return ft_err(err, FT_ERUNTIME, "out of memory: cannot allocate %zu bytes for the tensor arena", bytes);
    *out = p;
    return FT_OK;
}

static void cpu_release(ft_backend_ctx *c, void *p) { (void)c, free(p); }

static ft_status cpu_copy_bytes(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err)
{
    (void)c, (void)err;
    if (n)
        memcpy(dst, src, n);
    return FT_OK;
}

static ft_status cpu_sync(ft_backend_ctx *c, ft_error *err) { (void)c, (void)err; return FT_OK; }

int ft_cpu_threads(ft_backend_ctx *c) { return c->threads; }

const ft_backend ft_cpu_backend = {
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .describe = cpu_describe,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_copy_bytes,
    .download = cpu_copy_bytes,
    .sync = cpu_sync,
    .kernels = cpu_kernels,
};
