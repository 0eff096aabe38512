/* The executor: places the plan in one backend arena, uploads values, walks
 * the nodes in order through the backend's kernel table, times the runs, and
 * brings the outputs back to host memory.
 *
 * Ownership: ft_exec_run fills a caller-owned ft_run_result; ft_run_result_free
 * releases its buffers.
 *
 *   ft_exec_opts o = {.warmup = 0, .iterations = 1};
 *   ft_run_result r = {0};
 *   if (ft_exec_check(g, be, NULL, &err) || ft_exec_run(g, &plan, be, ctx, &o, &r, &err)) ...
 *   ft_run_result_free(&r);
 * r.outputs[i] holds g->outputs[i]'s bytes; r.run_ms[k] each timed run.
 */
#ifndef FT_EXEC_H
#define FT_EXEC_H

#include <signal.h>

#include "backend.h"
#include "plan.h"

typedef struct ft_exec_opts {
    int warmup;        /* untimed runs first */
    double warmup_s;   /* and more untimed runs until this many seconds have passed (0: off) */
    int iterations;    /* timed runs (at least) */
    double duration_s; /* keep running until this many seconds of timed runs (0: off) */
    int threads;       /* passed to kernels (with follow_load: the most) */
    int follow_load;   /* take only the cores other processes leave idle, looked at every 10 ms
                        * during the runs (src/runtime/threads.h) */
    int progress;      /* show progress on stderr for long runs */
    int profile;       /* time every node (a sync after each) */
    int trace;         /* record each node's start and end in every timed run */
    int cuda_graph;    /* capture one run (after the warm-up; one is added if none) and replay it for the timed runs */
    /* Nodes the backend lacks run here instead (--fallback cpu): their inputs
     * are copied to host memory, the kernel runs, the outputs go back. */
    const ft_backend *fallback;
    ft_backend_ctx *fallback_ctx;
    int keep_tensors;  /* copy every tensor to host memory after the last run (needs an unshared plan) */
    int64_t loop_limit; /* the most iterations a run-time loop (loop_begin .. loop_end) makes in one run;
                         * 0: FT_LOOP_LIMIT. More is an FT_ERUNTIME error naming the loop. */
    /* Non-NULL: kernels may give up constants they hold a copy of
     * (ft_kctx.release), through this function of the graph's owner, which
     * frees the value and answers 1, or answers 0 and keeps it. Passed to
     * the kernels only when nothing reads intermediates but the graph's own
     * nodes (ft_kctx.private_layouts). The caller must not need the values
     * after the run (ft_pipeline_run sets it for release_values). */
    int (*release)(void *owner, int t);
    void *release_owner;
    int release_values; /* ft_pipeline_run: a pipeline that owns its graph sets release (above) */
} ft_exec_opts;

/* The default of ft_exec_opts.loop_limit (--loop-limit in ftrun(1)). */
#define FT_LOOP_LIMIT 1000000

/* One node execution in a timed run, in ms since the first timed run began. */
typedef struct ft_trace_event {
    int node;          /* index into g->nodes */
    int run;
    double start_ms, end_ms;
} ft_trace_event;

typedef struct ft_run_result {
    double *run_ms;   /* one per timed run */
    int n_runs;
    int n_warmup;     /* untimed runs made first */
    double h2d_ms, d2h_ms;
    void **outputs;   /* host copies, one per graph output */
    ft_shape *output_shapes; /* their shapes: the graph's, or as the last run gave them when they are
                              * known only at run time (graph.h: FT_TF_DYNAMIC) */
    int n_outputs;
    double *node_ms;  /* with profile: total ms per node (index into g->nodes) over the timed runs */
    ft_trace_event *events; /* with trace: n_events entries */
    size_t n_events;
    void **tensors;   /* with keep_tensors: a host copy of every tensor (index into g->tensors) */
    ft_shape *tensor_shapes; /* and their shapes, as output_shapes */
    int n_tensors;
    int device_timed; /* run_ms and node_ms are device times (backend timers), not host clock */
} ft_run_result;

/* Every node's op and dtype is implemented by the backend, or by fallback
 * when it is not NULL (checked before anything runs): FT_ERUNTIME naming the
 * node, op and dtype otherwise. */
ft_status ft_exec_check(const ft_graph *g, const ft_backend *be, const ft_backend *fallback, ft_error *err);
ft_status ft_exec_run(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_backend_ctx *ctx,
                      const ft_exec_opts *o, ft_run_result *r, ft_error *err);
void ft_run_result_free(ft_run_result *r);
/* One node alone on be, from views the caller holds (host memory on the cpu
 * backend): what --check-nodes recomputes. run_id as ft_kctx.run_id: one per
 * pass over a graph (ft_exec_new_run_id). No layout private to the backend is
 * used, so every view is plain. */
ft_status ft_exec_node(const ft_graph *g, const ft_node *n, const ft_backend *be, ft_backend_ctx *ctx, int threads,
                       uint64_t run_id, const ft_view *in, ft_view *out, ft_error *err);

/* Set by the command line's SIGINT/SIGTERM handler (the signal number); the
 * executor stops between nodes when it is nonzero. The one piece of global
 * state, because a signal handler can reach nothing else. */
extern volatile sig_atomic_t ft_stop_signal;

/* A new value for ft_kctx.run_id on every call (the executor takes one per
 * ft_exec_run; one per pass of ft_exec_node calls). */
uint64_t ft_exec_new_run_id(void);

#endif
