/* The CUDA backend: context, memory, transfers through pinned staging
 * buffers, device timing, CUDA graph capture, the report of data errors found
 * by kernels, and the kernel table. Built as libftrun-cuda.so; the ftrun
 * binary loads it with dlopen (runtime/cuda_loader.c) and calls
 * ftrun_cuda_backend() for the backend struct. The binary exports its graph
 * functions (ft_node_err, ft_attr, ...) to this object. */
#include "cu.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Transfers are staged in two pinned buffers of this size, so a copy of any
 * size runs at pinned bandwidth with a bounded amount of pinned memory. */
#define STAGE_BYTES ((size_t)32 << 20)
/* cuBLAS gets a fixed workspace so that graph capture never makes it allocate. */
#define CUBLAS_WS_BYTES ((size_t)32 << 20)

ft_status cu_fail(ft_kctx *k, const ft_node *n, const char *call, const char *name, const char *text, const char *file,
                  int line)
{
    const char *base = strstr(file, "src/");
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "%s failed on cuda:%d: %s (%s) at %s:%d", call, k->be->device, name,
                       text, base ? base : file, line);
}

const char *cu_cublas_str(cublasStatus_t s) { return cublasGetStatusName(s); }

const char *cu_cufft_str(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE: return "CUFFT_NVSHMEM_FAILURE";
    }
    return "unknown cuFFT status";
}

cu_shape cu_shape_of(const ft_shape *s)
{
    cu_shape c;
    memset(&c, 0, sizeof c);
    c.rank = s->rank;
    memcpy(c.dims, s->dims, (size_t)s->rank * sizeof c.dims[0]);
    ft_strides(s, c.strides);
    return c;
}

cu_shape cu_shape_bcast(const ft_shape *in, const ft_shape *out)
{
    cu_shape c;
    memset(&c, 0, sizeof c);
    c.rank = out->rank;
    int64_t st[FT_MAX_RANK];
    ft_broadcast_strides(in, out, st);
    for (int d = 0; d < out->rank; d++) {
        c.dims[d] = out->dims[d];
        c.strides[d] = st[d];
    }
    return c;
}

ft_status cu_workspace(ft_kctx *k, const ft_node *n, size_t bytes, void **out)
{
    ft_backend_ctx *c = k->be;
    if (bytes <= c->ws_bytes) {
        *out = c->ws;
        return FT_OK;
    }
    if (c->capturing)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n,
                           "needs %zu bytes of workspace during CUDA graph capture (%zu reserved by the warm-up run)", bytes,
                           c->ws_bytes);
    /* The old buffer may still be in use by queued kernels. */
    CU_TRY(k, n, cudaStreamSynchronize(c->stream));
    if (c->ws) {
        cudaFree(c->ws);
        c->ws = NULL;
        c->ws_bytes = 0;
    }
    size_t want = bytes + bytes / 4;
    want = (want + 255) & ~(size_t)255;
    cudaError_t e = cudaMalloc(&c->ws, want);
    if (e != cudaSuccess) {
        c->ws = NULL;
        cudaGetLastError();
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n,
                           "out of memory on cuda:%d: cannot allocate %zu bytes of workspace (%zu of %zu bytes free)",
                           c->device, want, fr, tot);
    }
    c->ws_bytes = want;
    *out = c->ws;
    return FT_OK;
}

ft_status cu_blas(ft_kctx *k, const ft_node *n, cublasHandle_t *out)
{
    ft_backend_ctx *c = k->be;
    if (c->blas) {
        *out = c->blas;
        return FT_OK;
    }
    if (c->capturing)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n,
                           "needs a cuBLAS handle during CUDA graph capture (none was made by the warm-up run)");
    cublasStatus_t bs = cublasCreate(&c->blas);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        c->blas = NULL;
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "cuda:%d: cublasCreate failed: %s", c->device,
                           cublasGetStatusName(bs));
    }
    cudaError_t e = cudaMalloc(&c->blas_ws, CUBLAS_WS_BYTES);
    if (e != cudaSuccess) {
        c->blas_ws = NULL;
        cudaGetLastError();
        cublasDestroy(c->blas);
        c->blas = NULL;
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "cuda:%d: cudaMalloc(&c->blas_ws, CUBLAS_WS_BYTES) failed: %s (%s)",
                           c->device, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    if ((bs = cublasSetStream(c->blas, c->stream)) != CUBLAS_STATUS_SUCCESS ||
        (bs = cublasSetWorkspace(c->blas, c->blas_ws, CUBLAS_WS_BYTES)) != CUBLAS_STATUS_SUCCESS ||
        (bs = cublasSetMathMode(c->blas, (cublasMath_t)((c->allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) |
                                                          CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION))) !=
            CUBLAS_STATUS_SUCCESS) {
        cublasDestroy(c->blas);
        c->blas = NULL;
        cudaFree(c->blas_ws);
        c->blas_ws = NULL;
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "cuda:%d: setting up cuBLAS failed: %s", c->device,
                           cublasGetStatusName(bs));
    }
    *out = c->blas;
    return FT_OK;
}

/* Errors outside a node: "cuda:N: CALL failed: NAME (text)". */
static ft_status dev_fail(ft_backend_ctx *c, ft_error *err, const char *what, cudaError_t e)
{
    cudaGetLastError();
    return ft_err(err, FT_ERUNTIME, "cuda:%d: %s failed: %s (%s)", c ? c->device : -1, what, cudaGetErrorName(e),
                  cudaGetErrorString(e));
}
#define DEV_TRY(c, err, call)                                      \
    do {                                                           \
        cudaError_t e__ = (call);                                  \
        if (e__ != cudaSuccess) return dev_fail((c), (err), #call, e__); \
    } while (0)

static void cu_close(ft_backend_ctx *c)
{
    if (!c)
        return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    if (c->graph_exec)
        cudaGraphExecDestroy(c->graph_exec);
    if (c->graph)
        cudaGraphDestroy(c->graph);
    cu_fft_cache_free(c->fft);
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->blas_ws)
        cudaFree(c->blas_ws);
    if (c->ws)
        cudaFree(c->ws);
    for (int i = 0; i < 2; i++) {
        if (c->stage[i])
            cudaFreeHost(c->stage[i]);
        if (c->stage_ev[i])
            cudaEventDestroy(c->stage_ev[i]);
    }
    for (int i = 0; i < 4; i++)
        if (c->marks[i])
            cudaEventDestroy(c->marks[i]);
    if (c->derr)
        cudaFreeHost(c->derr);
    if (c->derr_dev)
        cudaFree(c->derr_dev);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

static ft_status cu_open(const ft_backend_opts *o, ft_backend_ctx **out, ft_error *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ft_err(err, FT_ERUNTIME, "device 'cuda:%d' is not available: %s (%s)", o->device_index, cudaGetErrorName(e),
                      cudaGetErrorString(e));
    }
    if (count == 0)
        return ft_err(err, FT_ERUNTIME, "device 'cuda:%d' is not available: the CUDA runtime sees no device",
                      o->device_index);
    if (o->device_index < 0 || o->device_index >= count)
        return ft_err(err, FT_ERUNTIME, "device 'cuda:%d' is not available: this machine has %d CUDA device%s (cuda:0 to cuda:%d)",
                      o->device_index, count, count == 1 ? "" : "s", count - 1);
    ft_backend_ctx *c = (ft_backend_ctx *)calloc(1, sizeof *c);
    if (!c)
        return ft_err(err, FT_ERUNTIME, "out of memory opening the cuda backend");
    c->device = o->device_index;
    c->allow_tf32 = o->allow_tf32;
    ft_status st = FT_OK;
#define OPEN_TRY(call)                                              \
    do {                                                            \
        cudaError_t e_ = (call);                                    \
        if (e_ != cudaSuccess) { st = dev_fail(c, err, #call, e_); goto fail; } \
    } while (0)
    OPEN_TRY(cudaSetDevice(c->device));
    OPEN_TRY(cudaGetDeviceProperties(&c->prop, c->device));
    c->sm_count = c->prop.multiProcessorCount > 0 ? c->prop.multiProcessorCount : 1;
    OPEN_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++)
        OPEN_TRY(cudaEventCreateWithFlags(&c->stage_ev[i], cudaEventDisableTiming));
    for (int i = 0; i < 4; i++)
        OPEN_TRY(cudaEventCreate(&c->marks[i]));
    OPEN_TRY(cudaHostAlloc((void **)&c->derr, sizeof(cu_derr), cudaHostAllocDefault));
    memset(c->derr, 0, sizeof(cu_derr));
    OPEN_TRY(cudaMalloc((void **)&c->derr_dev, sizeof(cu_derr)));
    /* on the stream: every kernel that may report is queued after it */
    OPEN_TRY(cudaMemsetAsync(c->derr_dev, 0, sizeof(cu_derr), c->stream));
    /* cuBLAS is made on first use (cu_blas): a graph without a matrix
     * product does not pay for its handle and workspace. cuFFT plans are
     * made on first use too (fft.cu). */
    snprintf(c->desc, sizeof c->desc, "%s (compute capability %d.%d, %d SMs, %.1f GiB)", c->prop.name, c->prop.major,
             c->prop.minor, c->prop.multiProcessorCount, (double)c->prop.totalGlobalMem / (1024.0 * 1024 * 1024));
    *out = c;
    return FT_OK;
fail:
    cu_close(c);
    return st;
#undef OPEN_TRY
}

static const char *cu_describe(ft_backend_ctx *c) { return c->desc; }

static ft_status cu_alloc(ft_backend_ctx *c, size_t bytes, void **out, ft_error *err)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 256);
    if (e != cudaSuccess) {
        cudaGetLastError();
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        return ft_err(err, FT_ERUNTIME,
                      "out of memory on cuda:%d: cannot allocate %zu bytes for the tensor arena (%zu of %zu bytes free): %s",
                      c->device, bytes, fr, tot, cudaGetErrorName(e));
    }
    *out = p;
    return FT_OK;
}

static void cu_release(ft_backend_ctx *c, void *p)
{
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    cudaFree(p);
}

/* Pinned staging buffers, made on the first transfer. 0 when they could not
 * be had (transfers then go straight from pageable memory). */
static int have_stage(ft_backend_ctx *c)
{
    if (c->stage[0])
        return 1;
    for (int i = 0; i < 2; i++)
        if (cudaHostAlloc(&c->stage[i], STAGE_BYTES, cudaHostAllocDefault) != cudaSuccess) {
            cudaGetLastError();
            if (i == 1) {
                cudaFreeHost(c->stage[0]);
                c->stage[0] = NULL;
            }
            c->stage[i] = NULL;
            return 0;
        }
    c->stage_bytes = STAGE_BYTES;
    return 1;
}

static ft_status cu_upload(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err)
{
    if (!n)
        return FT_OK;
    if (!have_stage(c)) {
        DEV_TRY(c, err, cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, c->stream));
        return FT_OK;
    }
    /* Two buffers in turn: fill one while the other is being copied. */
    for (size_t off = 0, b = 0; off < n; b ^= 1) {
        size_t m = n - off < c->stage_bytes ? n - off : c->stage_bytes;
        DEV_TRY(c, err, cudaEventSynchronize(c->stage_ev[b]));
        memcpy(c->stage[b], (const char *)src + off, m);
        DEV_TRY(c, err, cudaMemcpyAsync((char *)dst + off, c->stage[b], m, cudaMemcpyHostToDevice, c->stream));
        DEV_TRY(c, err, cudaEventRecord(c->stage_ev[b], c->stream));
        off += m;
    }
    return FT_OK;
}

static ft_status cu_download(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err)
{
    if (!n)
        return FT_OK;
    if (!have_stage(c)) {
        DEV_TRY(c, err, cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, c->stream));
        DEV_TRY(c, err, cudaStreamSynchronize(c->stream));
        return FT_OK;
    }
    /* Queue chunk i into one buffer, then drain chunk i-1 from the other. */
    size_t prev_off = 0, prev_m = 0;
    int prev_b = -1;
    for (size_t off = 0, b = 0;; b ^= 1) {
        size_t m = off < n ? (n - off < c->stage_bytes ? n - off : c->stage_bytes) : 0;
        if (m) {
            DEV_TRY(c, err, cudaMemcpyAsync(c->stage[b], (const char *)src + off, m, cudaMemcpyDeviceToHost, c->stream));
            DEV_TRY(c, err, cudaEventRecord(c->stage_ev[b], c->stream));
        }
        if (prev_b >= 0) {
            DEV_TRY(c, err, cudaEventSynchronize(c->stage_ev[prev_b]));
            memcpy((char *)dst + prev_off, c->stage[prev_b], prev_m);
        }
        if (!m)
            break;
        prev_b = (int)b;
        prev_off = off;
        prev_m = m;
        off += m;
    }
    return FT_OK;
}

static ft_status cu_sync(ft_backend_ctx *c, ft_error *err)
{
    /* The data-error record comes back with the same wait. */
    cudaError_t e = cudaMemcpyAsync(c->derr, c->derr_dev, sizeof *c->derr, cudaMemcpyDeviceToHost, c->stream);
    cudaError_t e2 = cudaStreamSynchronize(c->stream);
    if (e == cudaSuccess)
        e = e2;
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ft_err(err, FT_ERUNTIME,
                      "cuda:%d: a kernel failed: %s (%s); run with --profile to synchronise after every node and name it",
                      c->device, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    cu_derr d = *c->derr;
    if (d.code > 0) {
        memset(c->derr, 0, sizeof *c->derr);
        /* cleared for the next run; queued, so it precedes any later kernel */
        if (cudaMemsetAsync(c->derr_dev, 0, sizeof *c->derr, c->stream) != cudaSuccess)
            cudaGetLastError();
        const ft_graph *g = c->g;
        if (!g || d.node < 0 || d.node >= g->n_nodes)
            return ft_err(err, FT_EGRAPH, "cuda:%d: a kernel found invalid data", c->device);
        const ft_node *n = &g->nodes[d.node];
        if (d.code == CU_DERR_DIVZERO && n->n_in >= 2 && n->in[1] >= 0 && n->n_out >= 1) {
            /* the same words as the CPU's message: output element, then where the divisor is 0 */
            const ft_tensor *b = &g->tensors[n->in[1]], *o = &g->tensors[n->out[0]];
            char os[FT_SHAPE_STR], bs[FT_SHAPE_STR];
            return ft_node_err(err, FT_EGRAPH, g, n,
                               "integer division by zero at output element %lld %s: divisor input '%s' is 0 at index %s",
                               d.pos, ft_index_str((uint64_t)d.pos, &o->shape, os), b->name,
                               ft_index_str((uint64_t)d.lo, &b->shape, bs));
        }
        if (d.code == CU_DERR_DIVZERO)
            return ft_node_err(err, FT_EGRAPH, g, n, "integer division by zero at element %lld", d.pos);
        if (d.hi < d.lo)
            return ft_node_err(err, FT_EGRAPH, g, n, "index %lld is out of range: the axis it indexes is empty (at element %lld of the indices)",
                               d.value, d.pos);
        return ft_node_err(err, FT_EGRAPH, g, n, "index %lld is out of range [%lld, %lld] (at element %lld of the indices)",
                           d.value, d.lo, d.hi, d.pos);
    }
    return FT_OK;
}

static ft_status cu_mark(ft_backend_ctx *c, int slot, ft_error *err)
{
    if (slot < 0 || slot >= 4)
        return ft_err(err, FT_ERUNTIME, "cuda: timing slot %d out of range", slot);
    DEV_TRY(c, err, cudaEventRecord(c->marks[slot], c->stream));
    return FT_OK;
}

static ft_status cu_elapsed(ft_backend_ctx *c, int a, int b, double *ms, ft_error *err)
{
    if (a < 0 || a >= 4 || b < 0 || b >= 4)
        return ft_err(err, FT_ERUNTIME, "cuda: timing slot out of range");
    float f = 0;
    DEV_TRY(c, err, cudaEventSynchronize(c->marks[b]));
    DEV_TRY(c, err, cudaEventElapsedTime(&f, c->marks[a], c->marks[b]));
    *ms = f;
    return FT_OK;
}

static ft_status cu_capture(ft_backend_ctx *c, int begin, ft_error *err)
{
    if (begin) {
        DEV_TRY(c, err, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
        c->capturing = 1;
        return FT_OK;
    }
    c->capturing = 0;
    if (c->graph_exec) {
        cudaGraphExecDestroy(c->graph_exec);
        c->graph_exec = NULL;
    }
    if (c->graph) {
        cudaGraphDestroy(c->graph);
        c->graph = NULL;
    }
    DEV_TRY(c, err, cudaStreamEndCapture(c->stream, &c->graph));
    DEV_TRY(c, err, cudaGraphInstantiate(&c->graph_exec, c->graph, 0));
    return FT_OK;
}

static ft_status cu_replay(ft_backend_ctx *c, ft_error *err)
{
    if (!c->graph_exec)
        return ft_err(err, FT_ERUNTIME, "cuda:%d: no captured CUDA graph to replay", c->device);
    DEV_TRY(c, err, cudaGraphLaunch(c->graph_exec, c->stream));
    return FT_OK;
}

/* Every op, and the kernel and dtypes that run it here: the table of
 * runtime/kernels.def, shared with cpu/cpu_backend.c. */
#define FT_KERNEL_FN(name) cu_##name
#define FT_KERNEL_SET(set) CU_##set
#include "../runtime/kernels.def"

static ft_kernel real_kernels[FT_OP_COUNT]; /* what runs each op */
static ft_kernel cu_kernels[FT_OP_COUNT];   /* the table the executor sees: cu_enter for each */

/* Every node enters here: remember the graph whose kernels are queued, so a
 * data error a kernel records can be reported with its node at sync. */
static ft_status cu_enter(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    k->be->g = k->g;
    return real_kernels[n->op].fn(k, n, in, out);
}

static const ft_backend cu_backend = {
    "cuda",
    cu_open,
    cu_close,
    cu_describe,
    cu_alloc,
    cu_release,
    cu_upload,
    cu_download,
    cu_sync,
    cu_kernels,
    cu_mark,
    cu_elapsed,
    cu_capture,
    cu_replay,
    nullptr, /* prepare: nothing decided per graph before a run */
    0,       /* host_memory: device memory, into which the constants are uploaded */
};

/* The op table this library was built with (runtime/backend.h). */
static const char built_op_names[] =
#define X FT_BACKEND_OP_NAMES_X
#include "../graph/ops.def"
#undef X
    ;

extern "C" __attribute__((visibility("default"))) const ft_backend *ftrun_cuda_backend(int abi, const char *op_names)
{
    if (abi != FT_BACKEND_ABI || !op_names || strcmp(op_names, built_op_names) != 0)
        return NULL;
    for (int op = 0; op < FT_OP_COUNT; op++) {
        real_kernels[op] = kernel_of((ft_op)op);
        cu_kernels[op] = real_kernels[op];
        if (cu_kernels[op].fn)
            cu_kernels[op].fn = cu_enter;
    }
    return &cu_backend;
}
