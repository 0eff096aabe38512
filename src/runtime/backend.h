/* The backend interface: one struct of function pointers plus a kernel table
 * indexed by op. The executor (exec.c) is the only caller. Memory handles are
 * opaque device pointers: on the CPU they are host pointers, on CUDA device
 * pointers; the executor only ever does pointer arithmetic on them and passes
 * them back. Copies take a stream-ordered form so a device backend can queue
 * them asynchronously; sync() waits for everything queued.
 *
 * Ownership: a backend context is created by open() and released by close();
 * memory from alloc() is released by release() before close(). close(NULL)
 * is a no-op.
 *
 * Support of op X in dtype Y is read from kernels[X].dtypes (a mask of the
 * dtype of input 0), never from a separate list.
 *
 * Both backends build the table from one list (kernels.def), expanded in a
 * switch over every op with no default (cpu/cpu_backend.c, cuda/backend.cu),
 * so an op added to ops.def and not placed fails to compile on both
 * (-Wswitch-enum).
 *
 *   ft_error err = {0};
 *   ft_backend_opts opts = {.threads = 0};
 *   const ft_backend *be = ft_backend_get("cpu", &err);
 *   ft_backend_ctx *ctx; be->open(&opts, &ctx, &err);
 *   void *arena; be->alloc(ctx, bytes, &arena, &err);
 *   be->upload(ctx, (char *)arena + off, host, n, &err); ...; be->sync(ctx, &err);
 *   be->release(ctx, arena); be->close(ctx);
 */
#ifndef FT_BACKEND_H
#define FT_BACKEND_H

#include "../common.h"
#include "../graph/graph.h"

/* A tensor as a kernel sees it: contiguous row-major data in backend memory.
 * data is NULL for an omitted optional input. */
typedef struct ft_view {
    void *data;
    ft_dtype dtype;
    ft_shape shape;
} ft_view;

/* The shapes and data pointers of views v[0..n-1], for the kernel-side
 * planning of src/graph, which takes shapes. */
static inline void ft_views_split(const ft_view *v, int n, const ft_shape **shapes, const void **data)
{
    for (int i = 0; i < n; i++)
        shapes[i] = &v[i].shape, data[i] = v[i].data;
}

typedef struct ft_backend_ctx ft_backend_ctx;

/* Everything a kernel gets besides its tensors. */
typedef struct ft_kctx {
    ft_backend_ctx *be;   /* the backend's own context */
    const ft_graph *g;    /* for messages (ft_node_err) */
    int threads;          /* CPU threads to use (>= 1) */
    ft_error *err;
    /* Nonzero when nothing reads an intermediate tensor but the graph's own
     * nodes on this backend (not a --fallback run, no copy of every tensor
     * for --check-nodes): a backend may then keep an intermediate whose
     * every reader is its own kernel in a layout of its own
     * (cpu/conv_dnnl.c's blocked convolution chains). */
    int private_layouts;
    /* Differs between two ft_exec_run calls (ft_exec_new_run_id): state a
     * backend caches per node is keyed by node address, and a graph loaded
     * after another may reuse its addresses. */
    uint64_t run_id;
    /* NULL, or: a kernel that has made a copy of its own of constant tensor
     * t (the CPU's packed matmul weights) and will never read t's value
     * again in this run may offer it, release(release_owner, t); 1 when the
     * graph's owner freed the value (no other node reads it, it is no graph
     * output): the kernel then gets NULL for t's data on later executions.
     * Set only for a graph that nothing reads after the run
     * (ft_exec_opts.release_values; private_layouts). */
    int (*release)(void *release_owner, int t);
    void *release_owner;
} ft_kctx;

/* A kernel: reads in[0..node->n_in-1], writes out[0..node->n_out-1].
 * Returns FT_OK, or fills k->err (naming the node via ft_node_err) and returns
 * FT_EGRAPH for bad data (index out of range, integer division by zero) or
 * FT_ERUNTIME for a device or library failure. */
typedef ft_status (*ft_kernel_fn)(ft_kctx *k, const ft_node *node, const ft_view *in, ft_view *out);

typedef struct ft_kernel {
    ft_kernel_fn fn;      /* NULL: op not implemented by this backend */
    ft_dtype_mask dtypes; /* dtypes of input 0 it handles */
} ft_kernel;

/* The CPU backend's recorded timed choices (cpu/tuning.h; --tuning-cache). */
typedef struct ft_tuning ft_tuning;

typedef struct ft_backend_opts {
    int device_index; /* cuda:N */
    int threads;      /* 0: all cores */
    int allow_tf32;
    /* Lent, not owned (NULL: none): the CPU backend's convs take a node's
     * form from it instead of timing them, and record there each form they
     * time; the caller frees it after close(). Other backends ignore it. */
    ft_tuning *tuning;
} ft_backend_opts;

/* One device as a backend sees it (ftrun devices). */
typedef struct ft_device_info {
    int index;
    char name[256];
    uint64_t total_bytes, free_bytes;
    int cc_major, cc_minor; /* compute capability */
    int sm_count;
} ft_device_info;

/* Version of this interface; a backend shared object built against another
 * version, or against another op table, is refused when loaded: its entry
 * point, ftrun_cuda_backend(FT_BACKEND_ABI, FT_BACKEND_OP_NAMES), compares
 * both with what it was built with. */
#define FT_BACKEND_ABI 7
/* Every op's name in the table's order, each ended by a newline: one string
 * literal made from ops.def, so that two builds of it compare with strcmp. */
#define FT_BACKEND_OP_NAMES_X(e, name, mi, ma, mo, mao, dt, attrs, inf, fl) name "\n"

typedef struct ft_backend {
    const char *name; /* "cpu", "cuda" */
    ft_status (*open)(const ft_backend_opts *o, ft_backend_ctx **out, ft_error *err);
    void (*close)(ft_backend_ctx *c);
    /* The device for reports ("cpu (x86_64, 16 threads)"). */
    const char *(*describe)(ft_backend_ctx *c);
    ft_status (*alloc)(ft_backend_ctx *c, size_t bytes, void **out, ft_error *err);
    void (*release)(ft_backend_ctx *c, void *p);
    ft_status (*upload)(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err);
    ft_status (*download)(ft_backend_ctx *c, void *dst, const void *src, size_t n, ft_error *err);
    ft_status (*sync)(ft_backend_ctx *c, ft_error *err);
    const ft_kernel *kernels; /* [FT_OP_COUNT] */
    /* Optional device timing (NULL: the executor times on the host after
     * sync()). mark(c, slot) records a point on the stream, slots 0..3;
     * elapsed(c, a, b, &ms) waits for mark b and gives the time from a to b. */
    ft_status (*mark)(ft_backend_ctx *c, int slot, ft_error *err);
    ft_status (*elapsed)(ft_backend_ctx *c, int a, int b, double *ms, ft_error *err);
    /* Optional graph capture (NULL: not offered). capture(c, 1) starts
     * recording what is queued instead of running it; capture(c, 0) ends the
     * recording and prepares it; replay(c) queues one replay. */
    ft_status (*capture)(ft_backend_ctx *c, int begin, ft_error *err);
    ft_status (*replay)(ft_backend_ctx *c, ft_error *err);
    /* Optional (NULL: nothing to decide). Called by the executor with the
     * run's kernel context (its graph, private_layouts and run_id) once the
     * graph is bound and before its first node runs, on every ft_exec_run and
     * ft_exec_node: where a backend decides, for the whole graph, what its
     * kernels then only read (the CPU's tensor layouts around convolutions,
     * cpu/conv_layout.c). Calling it again with the same graph and run id
     * changes nothing. */
    ft_status (*prepare)(ft_kctx *k);
    /* 1 when the backend's buffers are host memory its kernels read like
     * any other (the CPU): the executor then hands kernels the graph's
     * constants where the graph holds them, without copying them into the
     * arena (runtime/plan.h, const_bytes). */
    int host_memory;
} ft_backend;

extern const ft_backend ft_cpu_backend;

/* Backend by name (backend.c): "cpu" is built in; "cuda" is the shared object
 * libftrun-cuda.so, loaded on first use (see cuda_loader.c). NULL with a
 * message in err (what is missing) when it cannot be had. Loading the CUDA
 * backend needs no GPU; opening a device does. */
const ft_backend *ft_backend_get(const char *name, ft_error *err);
/* The CUDA backend shared object, loaded once (cuda_loader.c); NULL with the
 * reason in err. */
const ft_backend *ft_cuda_backend_load(ft_error *err);
/* The CUDA devices of this machine through the driver alone (no backend
 * loaded): fills up to max entries and returns the count, or returns -1 with
 * err saying why there are none usable (no driver, driver too old, no device). */
int ft_cuda_devices(ft_device_info *out, int max, ft_error *err);
/* Path of the CUDA backend shared object that ft_backend_get("cuda") loads
 * (or would try first). */
const char *ft_cuda_backend_path(void);
/* 1 if the backend implements node's op for the dtype of its input 0 (exec.c,
 * beside the executor that dispatches on it). */
int ft_backend_supports(const ft_backend *be, ft_op op, ft_dtype dt);
/* 1 if the backend runs node n of g: its kernel takes the dtype of input 0
 * and, for cast, the output's too (a cast to strings or to a low-precision
 * dtype runs where the destination is in the kernel's dtypes). What the
 * executor, --fallback and `ftrun` check per node. */
int ft_backend_runs(const ft_backend *be, const ft_graph *g, const ft_node *n);
/* The dtypes of input 0 the backend's kernel of op takes (0: no kernel), for
 * listings (`ftrun ops`); what the executor checks is ft_backend_runs. */
ft_dtype_mask ft_backend_dtypes(const ft_backend *be, ft_op op);

#endif
