/* A stand-in for libftrun-cuda.so in the command-line tests: a device backend
 * whose "device memory" is host memory and whose kernels are the CPU
 * reference's, so that everything ftrun does around a device (picking it,
 * transfers, device timers, graph capture and replay, --check, --check-nodes,
 * --fallback) runs on a machine without a GPU. Switches:
 *   FAKE_PERTURB_OP=NAME   outputs of that op get +0.5 added to element 0
 *   FAKE_MISSING_OP=NAME   the backend lacks that op
 * Graph capture records the kernels queued and replay runs the record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/runtime/backend.h"

typedef struct {
    ft_kctx k;
    const ft_node *n;
    ft_view *in, *out;
} call;

struct ft_backend_ctx {
    ft_backend_ctx *cpu;
    int device;
    int capturing;
    call *rec;
    int n_rec, cap_rec;
    double marks[4];
    char desc[64];
};

static ft_kernel table[FT_OP_COUNT];
static int perturb_op = -1;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static ft_status run_call(ft_backend_ctx *c, ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_kctx ck = *k;
    ck.be = c->cpu;
    ft_status st = ft_cpu_backend.kernels[n->op].fn(&ck, n, in, out);
    if (!st && (int)n->op == perturb_op)
        for (int o = 0; o < n->n_out; o++)
            if (ft_numel(&out[o].shape) && ft_dtype_is_float(out[o].dtype))
                ft_store_f64(out[o].data, out[o].dtype, 0, ft_load_f64(out[o].data, out[o].dtype, 0) + 0.5);
    return st;
}

/* The CPU kernels it runs read what the CPU backend decided for the graph. */
static ft_status fake_prepare(ft_kctx *k)
{
    ft_kctx ck = *k;
    ck.be = k->be->cpu;
    return ft_cpu_backend.prepare ? ft_cpu_backend.prepare(&ck) : FT_OK;
}

static ft_status fake_kernel(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_backend_ctx *c = k->be;
    if (!c->capturing)
        return run_call(c, k, n, in, out);
    /* recorded with copies of the views: the executor reuses its arrays */
    if (c->n_rec == c->cap_rec) {
        int nc = c->cap_rec ? c->cap_rec * 2 : 64;
        call *r = realloc(c->rec, (size_t)nc * sizeof *r);
        if (!r)
            return ft_err(k->err, FT_ERUNTIME, "fake: out of memory recording");
        c->rec = r;
        c->cap_rec = nc;
    }
    call *cl = &c->rec[c->n_rec];
    cl->in = calloc((size_t)n->n_in + 1, sizeof(ft_view));
    cl->out = calloc((size_t)n->n_out + 1, sizeof(ft_view));
    if (!cl->in || !cl->out) {
        free(cl->in);
        free(cl->out);
        return ft_err(k->err, FT_ERUNTIME, "fake: out of memory recording");
    }
    memcpy(cl->in, in, (size_t)n->n_in * sizeof(ft_view));
    memcpy(cl->out, out, (size_t)n->n_out * sizeof(ft_view));
    cl->k = *k;
    cl->n = n;
    c->n_rec++;
    return FT_OK;
}

static void clear_rec(ft_backend_ctx *c)
{
    for (int i = 0; i < c->n_rec; i++) {
        free(c->rec[i].in);
        free(c->rec[i].out);
    }
    c->n_rec = 0;
}

static ft_status fake_open(const ft_backend_opts *o, ft_backend_ctx **out, ft_error *err)
{
    ft_backend_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ft_err(err, FT_ERUNTIME, "fake: out of memory");
    ft_backend_opts co = *o;
    if (ft_cpu_backend.open(&co, &c->cpu, err)) {
        free(c);
        return err->code;
    }
    c->device = o->device_index;
    snprintf(c->desc, sizeof c->desc, "Fake CUDA device %d", c->device);
    *out = c;
    return FT_OK;
}

static void fake_close(ft_backend_ctx *c)
{
    if (!c)
        return;
    clear_rec(c);
    free(c->rec);
    ft_cpu_backend.close(c->cpu);
    free(c);
}

static const char *fake_describe(ft_backend_ctx *c) { return c->desc; }

static ft_status fake_alloc(ft_backend_ctx *c, size_t bytes, void **out, ft_error *err)
{
    return ft_cpu_backend.alloc(c->cpu, bytes, out, err);
}

static void fake_release(ft_backend_ctx *c, void *p) { ft_cpu_backend.release(c->cpu, p); }

static ft_status fake_copy(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err)
{
    return ft_cpu_backend.upload(c->cpu, dst, src, n, err);
}

static ft_status fake_sync(ft_backend_ctx *c, ft_error *err)
{
    if (c->capturing)
        return ft_err(err, FT_ERUNTIME, "fake: sync during capture");
    return FT_OK;
}

static ft_status fake_mark(ft_backend_ctx *c, int slot, ft_error *err)
{
    if (slot < 0 || slot > 3)
        return ft_err(err, FT_ERUNTIME, "fake: bad timing slot %d", slot);
    c->marks[slot] = now_ms();
    return FT_OK;
}

static ft_status fake_elapsed(ft_backend_ctx *c, int a, int b, double *ms, ft_error *err)
{
    (void)err;
    *ms = c->marks[b] - c->marks[a];
    return FT_OK;
}

static ft_status fake_capture(ft_backend_ctx *c, int begin, ft_error *err)
{
    (void)err;
    if (begin)
        clear_rec(c);
    c->capturing = begin;
    if (!begin && getenv("FAKE_REPORT_CAPTURE"))
        fprintf(stderr, "fake: captured %d kernels\n", c->n_rec);
    return FT_OK;
}

static ft_status fake_replay(ft_backend_ctx *c, ft_error *err)
{
    for (int i = 0; i < c->n_rec; i++) {
        call *cl = &c->rec[i];
        cl->k.err = err;
        ft_status st = run_call(c, &cl->k, cl->n, cl->in, cl->out);
        if (st)
            return st;
    }
    return FT_OK;
}

static const ft_backend fake = {
    .name = "cuda",
    .open = fake_open,
    .close = fake_close,
    .describe = fake_describe,
    .alloc = fake_alloc,
    .release = fake_release,
    .upload = fake_copy,
    .download = fake_copy,
    .sync = fake_sync,
    .kernels = table,
    .mark = fake_mark,
    .elapsed = fake_elapsed,
    .capture = fake_capture,
    .replay = fake_replay,
    .prepare = fake_prepare,
};

/* The op table this object was built with; FAKE_OTHER_OPS=1 stands for an
 * object built against another one (an op added since). */
static const char built_op_names[] =
#define X FT_BACKEND_OP_NAMES_X
#include "../../src/graph/ops.def"
#undef X
    "added_op\n";

__attribute__((visibility("default"))) const ft_backend *ftrun_cuda_backend(int abi, const char *op_names)
{
    const char *other = getenv("FAKE_OTHER_OPS");
    size_t own = sizeof built_op_names - 1 - strlen("added_op\n") + (other && *other == '1' ? strlen("added_op\n") : 0);
    if (abi != FT_BACKEND_ABI || !op_names || strlen(op_names) != own || strncmp(op_names, built_op_names, own) != 0)
        return NULL;
    const char *p = getenv("FAKE_PERTURB_OP"), *m = getenv("FAKE_MISSING_OP");
    ft_op op;
    if (p && ft_op_lookup(p, &op) == 0)
        perturb_op = (int)op;
    for (int i = 0; i < FT_OP_COUNT; i++) {
        table[i] = ft_cpu_backend.kernels[i];
        if (table[i].fn)
            table[i].fn = fake_kernel;
        if (m && !strcmp(m, ft_op_name((ft_op)i)))
            table[i].fn = NULL;
    }
    return &fake;
}
