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

/* Every op, and the kernel and dtypes that run it natively here (see
 * cpu_kernels below for f16/bf16). No default: a new op in ops.def fails to
 * compile until it is placed (-Wswitch-enum), as in cuda/backend.cu. */
static ft_kernel kernel_of(ft_op op)
{
    ft_kernel k = {NULL, 0};
#define KK(f_, m_) do { k.fn = (f_); k.dtypes = (m_); } while (0)
    switch (op) {
    case FT_OP_IDENTITY: case FT_OP_RESHAPE: case FT_OP_FLATTEN: case FT_OP_SQUEEZE: case FT_OP_UNSQUEEZE:
        KK(cpu_copy, CPU_BYTES); break;
    case FT_OP_NEG: case FT_OP_ABS: case FT_OP_SIGN:
        KK(cpu_unary, CPU_SIGNED); break;
    case FT_OP_RELU: case FT_OP_SIGMOID: case FT_OP_TANH: case FT_OP_EXP: case FT_OP_LOG: case FT_OP_SQRT:
    case FT_OP_RSQRT: case FT_OP_RECIPROCAL: case FT_OP_SIN: case FT_OP_COS: case FT_OP_ERF: case FT_OP_FLOOR:
    case FT_OP_CEIL: case FT_OP_ROUND: case FT_OP_SOFTPLUS: case FT_OP_SOFTSIGN: case FT_OP_SILU: case FT_OP_MISH:
    case FT_OP_HARD_SWISH: case FT_OP_LEAKY_RELU: case FT_OP_ELU: case FT_OP_CELU: case FT_OP_SELU:
    case FT_OP_HARD_SIGMOID: case FT_OP_GELU: case FT_OP_IS_NAN: case FT_OP_IS_INF:
        KK(cpu_unary, CPU_FLOAT); break;
    case FT_OP_CLIP: KK(cpu_unary, CPU_NUM); break;
    case FT_OP_NOT: KK(cpu_unary, FT_DT_BOOL); break;
    case FT_OP_CAST: KK(cpu_cast, CPU_BYTES); break;
    case FT_OP_ADD: case FT_OP_SUB: case FT_OP_MUL: case FT_OP_DIV: case FT_OP_POW: case FT_OP_MOD:
    case FT_OP_LESS: case FT_OP_LESS_EQUAL: case FT_OP_GREATER: case FT_OP_GREATER_EQUAL:
        KK(cpu_binary, CPU_NUM); break;
    case FT_OP_EQUAL: KK(cpu_binary, CPU_ANY); break;
    case FT_OP_AND: case FT_OP_OR: case FT_OP_XOR: KK(cpu_binary, FT_DT_BOOL); break;
    case FT_OP_MAX: case FT_OP_MIN: KK(cpu_variadic, CPU_NUM); break;
    case FT_OP_WHERE: KK(cpu_where, FT_DT_BOOL); break;
    case FT_OP_MATMUL: KK(cpu_matmul, CPU_FLOAT); break;
    case FT_OP_GEMM: KK(cpu_gemm, CPU_FLOAT); break;
    case FT_OP_EINSUM: KK(cpu_einsum, CPU_FLOAT); break;
    case FT_OP_REDUCE_SUM: case FT_OP_REDUCE_MEAN: case FT_OP_REDUCE_PROD: case FT_OP_REDUCE_L1: case FT_OP_REDUCE_L2:
    case FT_OP_REDUCE_SUM_SQUARE: case FT_OP_REDUCE_LOG_SUM_EXP:
        KK(cpu_reduce, CPU_NUM); break;
    case FT_OP_REDUCE_MAX: case FT_OP_REDUCE_MIN: KK(cpu_reduce, CPU_ANY); break;
    case FT_OP_ARGMAX: case FT_OP_ARGMIN: KK(cpu_arg, CPU_NUM); break;
    case FT_OP_CUMSUM: KK(cpu_cumsum, CPU_NUM); break;
    case FT_OP_TOPK: KK(cpu_topk, CPU_NUM); break;
    case FT_OP_SOFTMAX: case FT_OP_LOG_SOFTMAX: KK(cpu_softmax, CPU_FLOAT); break;
    case FT_OP_LAYER_NORM: KK(cpu_layer_norm, CPU_FLOAT); break;
    case FT_OP_RMS_NORM: KK(cpu_rms_norm, CPU_FLOAT); break;
    case FT_OP_BATCH_NORM: KK(cpu_batch_norm, CPU_FLOAT); break;
    case FT_OP_INSTANCE_NORM: KK(cpu_instance_norm, CPU_FLOAT); break;
    case FT_OP_GROUP_NORM: KK(cpu_group_norm, CPU_FLOAT); break;
    case FT_OP_TRANSPOSE: KK(cpu_transpose, CPU_BYTES); break;
    case FT_OP_EXPAND: KK(cpu_expand, CPU_BYTES); break;
    case FT_OP_TILE: KK(cpu_tile, CPU_BYTES); break;
    case FT_OP_CONCAT: KK(cpu_concat, CPU_BYTES); break;
    case FT_OP_SPLIT: KK(cpu_split, CPU_BYTES); break;
    case FT_OP_SLICE: KK(cpu_slice, CPU_BYTES); break;
    case FT_OP_GATHER: KK(cpu_gather, CPU_BYTES); break;
    case FT_OP_GATHER_ELEMENTS: KK(cpu_gather_elements, CPU_BYTES); break;
    case FT_OP_PAD: KK(cpu_pad, CPU_BYTES); break;
    case FT_OP_CONV: KK(cpu_conv, CPU_FLOAT); break;
    case FT_OP_CONV_TRANSPOSE: KK(cpu_conv_transpose, CPU_FLOAT); break;
    case FT_OP_MAX_POOL: KK(cpu_max_pool, CPU_FLOAT | FT_M(I8) | FT_M(U8)); break;
    case FT_OP_AVERAGE_POOL: KK(cpu_average_pool, CPU_FLOAT); break;
    case FT_OP_GLOBAL_AVERAGE_POOL: case FT_OP_GLOBAL_MAX_POOL: KK(cpu_global_pool, CPU_FLOAT); break;
    case FT_OP_RESIZE: KK(cpu_resize, CPU_FLOAT); break;
    case FT_OP_FFT: case FT_OP_IFFT: case FT_OP_RFFT: case FT_OP_IRFFT: KK(cpu_fft, CPU_FLOAT); break;
    case FT_OP_ATTENTION: KK(cpu_attention, CPU_FLOAT); break;
    case FT_OP_DROPOUT: KK(cpu_dropout, CPU_FLOAT); break;
    case FT_OP_COUNT: break;
    }
#undef KK
    return k;
}

static ft_kernel native[FT_OP_COUNT]; /* kernel_of for every op */

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
        native[op] = kernel_of((ft_op)op);
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
