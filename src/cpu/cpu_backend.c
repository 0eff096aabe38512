#include "cpu.h"

#include "../runtime/threads.h"

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
    struct cpu_dnnl_cache *dnnl[CPU_DNNL_KINDS]; /* owned: conv_dnnl.c's and matmul_dnnl.c's per-node primitives */
    ft_tuning *tuning; /* lent by the opener (ft_backend_opts.tuning), NULL: none */
};

/* Every op, and the kernel and dtypes that run it natively here (see
 * cpu_kernels below for f16/bf16): the table of runtime/kernels.def, shared
 * with cuda/backend.cu. */
#define FT_KERNEL_FN(name) cpu_##name
#define FT_KERNEL_SET(set) CPU_##set
#include "../runtime/kernels.def"

static ft_kernel native[FT_OP_COUNT]; /* kernel_of for every op */

#define HALF (FT_M(F16) | FT_M(BF16))

/* f16/bf16 through the f32 kernel: widen every 16-bit float input (exactly),
 * run the kernel, round every 16-bit float output to nearest even. Inputs
 * of other dtypes (indices, masks) pass through untouched. */
static ft_status cpu_via_f32(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    /* every node of an op that takes f16/bf16 comes here: one without them
     * goes straight to the kernel (this is on every node's path) */
    int half = 0;
    for (int i = 0; i < n->n_in && !half; i++)
        half = in[i].data && ft_dtype_in(in[i].dtype, HALF);
    for (int o = 0; o < n->n_out && !half; o++)
        half = out[o].data && ft_dtype_in(out[o].dtype, HALF);
    if (!half)
        return native[n->op].fn(k, n, in, out);
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
        /* a data-dependent kernel (non_zero, unique) sets the shape it wrote */
        out[o].shape = vout[o].shape;
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
    c->threads = o && o->threads > 0 ? o->threads : ft_usable_cores();
    c->tuning = o ? o->tuning : NULL;
#ifdef _OPENMP
    omp_set_num_threads(c->threads);
#endif
    snprintf(c->desc, sizeof c->desc, "CPU reference backend, %d thread%s", c->threads, c->threads == 1 ? "" : "s");
    *out = c;
    return FT_OK;
}

static void cpu_close(ft_backend_ctx *c)
{
    for (int i = 0; c && i < CPU_DNNL_KINDS; i++)
        cpu_dnnl_cache_free(c->dnnl[i]);
    free(c);
}
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
struct cpu_dnnl_cache **cpu_dnnl_cache_slot(ft_backend_ctx *c, int kind) { return &c->dnnl[kind]; }
ft_tuning *cpu_tuning_of(ft_backend_ctx *c) { return c->tuning; }

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
    .prepare = cpu_conv_prepare,
    .host_memory = 1,
};

void cpu_run_ranges(int threads, int64_t n, void (*fn)(void *ctx, int64_t start, int64_t end), void *ctx)
{
    const int64_t align = 64;
    if (n < CPU_PAR_MIN || threads < 2) {
        fn(ctx, 0, n);
        return;
    }
    const int64_t parts = threads;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t t = 0; t < parts; t++) {
        int64_t s = t == 0 ? 0 : (n * t / parts) & ~(align - 1);
        int64_t e = t == parts - 1 ? n : (n * (t + 1) / parts) & ~(align - 1);
        if (e > s)
            fn(ctx, s, e);
    }
}

ft_status cpu_no_kernel(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "no CPU kernel for %s on %s", ft_op_name(n->op), ft_dtype_name(dt));
}

ft_status cpu_bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cpu %s kernel", ft_dtype_name(dt),
                       ft_op_name(n->op));
}

void *cpu_thread_scratch(size_t bytes, int *failed)
{
    void *p = ft_malloc(bytes);
    if (!p) {
#pragma omp atomic write
        *failed = 1;
    }
    return p;
}
