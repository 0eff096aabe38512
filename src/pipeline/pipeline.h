/* The one pipeline every command and harness uses: a graph file (or its
 * bytes) is read, validated and optimized; the graph is planned for a
 * backend, bound to a device context and run; the outputs come back to host
 * memory with the run's statistics. `run`, `--check`, `--check-nodes`,
 * `test`'s workers, `info`, `pack`, `unpack`, `convert` and the fuzz
 * harnesses go through it; nothing else strings these steps together.
 *
 * Steps, each needing the one before it:
 *   ft_pipeline_load / _load_mem / _take    file, bytes or a graph read -> validated, optimized graph (p->g)
 *   (or ft_pipeline_adopt                   a graph loaded and validated before)
 *   ft_pipeline_plan                        every node implemented (ft_exec_check), memory planned
 *   ft_pipeline_open / _use                 the backend's context: opened here, or lent by the caller
 *   ft_pipeline_run                         inputs uploaded, nodes run (runtime/exec.c), outputs read back
 * What is known of the inputs before the load (--shape, the -i files, a data
 * set's files) is one list (values.h) that the load reads (o->inputs: shapes
 * that bind dims, values the ONNX importer computes with) and that gives the
 * inputs their values between load and plan (ft_values_apply, called by
 * cli/inputs.c's ft_bind_apply): the plan is made for the graph as it then is.
 *
 * Ownership: the pipeline owns its graph (unless adopted), its
 * plan and the contexts it opened; ft_pipeline_free releases them and leaves
 * a context lent by ft_pipeline_use open. The run result is the caller's
 * (ft_run_result_free).
 *
 *   ft_pipeline p = {0};
 *   ft_pipeline_opts po = {.load = {.seed_override = -1}, .opt_level = FT_OPT_DEFAULT};
 *   ft_backend_opts bo = {.threads = 1};
 *   ft_exec_opts eo = {.iterations = 1, .threads = 1};
 *   ft_run_result r = {0};
 *   ft_error err = {0};
 *   if (ft_pipeline_load(&p, "graphs/mlp.json", &po, &err) || ft_pipeline_plan(&p, &ft_cpu_backend, NULL, &err) ||
 *       ft_pipeline_open(&p, &bo, &err) || ft_pipeline_run(&p, &eo, &r, &err))
 *       fprintf(stderr, "%s\n", err.msg);
 *   ft_run_result_free(&r);
 *   ft_pipeline_free(&p);
 */
#ifndef FT_PIPELINE_H
#define FT_PIPELINE_H

#include <stddef.h>

#include "../graph/graph.h"
#include "../opt/optimize.h"
#include "../runtime/backend.h"
#include "../runtime/exec.h"
#include "../runtime/plan.h"
#include "values.h"

typedef struct ft_pipeline_opts {
    ft_load_opts load; /* seed override, external files, bound dims */
    const ft_values *inputs; /* the inputs' shapes and values (values.h) as the load's shape bindings; NULL: load's own */
    int opt_level;     /* the optimizer's level (0: the graph as read; FT_OPT_DEFAULT) */
    int unshared;      /* plan every tensor its own bytes (ft_plan_build_unshared): for keep_tensors */
} ft_pipeline_opts;

typedef struct ft_pipeline {
    ft_graph *g;          /* after a load: validated and optimized */
    int own_graph;        /* 0: adopted (ft_pipeline_adopt): the caller's, not changed nor freed here */
    ft_opt_stats opt;     /* what the optimizer rewrote */
    int unshared;
    ft_plan plan;         /* after ft_pipeline_plan */
    int planned;
    const ft_backend *be, *fallback; /* after ft_pipeline_plan */
    ft_backend_ctx *ctx, *fallback_ctx;
    int own_ctx;          /* ctx was opened here (ft_pipeline_open), not lent (ft_pipeline_use) */
    double load_ms, plan_ms;
    /* Constants whose values the run's kernels gave up (ft_exec_opts.release_values):
     * how many and their bytes. */
    int n_released;
    uint64_t released_bytes;
    /* After a failure, the step that refused: "read", "validate",
     * "optimize", "plan", "open" or "run" (NULL while none has). */
    const char *failed;
} ft_pipeline;

/* Reads the graph file at path (its kind told by its first bytes: graph.h),
 * validates it and runs the optimizer at o->opt_level. */
ft_status ft_pipeline_load(ft_pipeline *p, const char *path, const ft_pipeline_opts *o, ft_error *err);
/* The same from bytes in memory (an ONNX model or a JSON graph; a binary
 * .ftg is read from a file only); name is the file name messages give and the
 * folder "file" values are relative to. */
ft_status ft_pipeline_load_mem(ft_pipeline *p, const char *name, const void *bytes, size_t n, const ft_pipeline_opts *o,
                               ft_error *err);
/* A graph the caller read (ft_graph_load) and gives up: validated and
 * optimized here, then the pipeline's (freed here also when this fails). */
ft_status ft_pipeline_take(ft_pipeline *p, ft_graph *g, const ft_pipeline_opts *o, ft_error *err);
/* A graph that has passed ft_graph_validate (and the optimizer, as its
 * holder wanted), lent by the caller, who keeps and frees it: planned and run
 * as it is, never changed (--check's reference run). */
void ft_pipeline_adopt(ft_pipeline *p, const ft_graph *g, int unshared);
/* Checks that be (or fallback, when not NULL) implements every node and plans
 * the memory. be NULL: the memory plan alone, for no backend (info). */
ft_status ft_pipeline_plan(ft_pipeline *p, const ft_backend *be, const ft_backend *fallback, ft_error *err);
/* Opens the backend's context (and the fallback's) with bo. */
ft_status ft_pipeline_open(ft_pipeline *p, const ft_backend_opts *bo, ft_error *err);
/* Runs with a context the caller opened and keeps (a worker's device). */
void ft_pipeline_use(ft_pipeline *p, ft_backend_ctx *ctx);
/* One ft_exec_run of the planned graph; eo's fallback fields are the
 * pipeline's. With eo->release_values and a graph the pipeline owns, a
 * kernel that holds its own copy of a constant (ft_kctx.release) has the
 * value freed when no other node reads it and it is no graph output (a
 * value in a file mapping is handed back to the kernel, MADV_DONTNEED):
 * its value is then NULL, so the graph must not be run or read again for
 * such values after this call (not for --check's reference run). */
ft_status ft_pipeline_run(ft_pipeline *p, const ft_exec_opts *eo, ft_run_result *r, ft_error *err);
/* Releases what the pipeline owns; p is then empty (ft_pipeline_free twice is safe). */
void ft_pipeline_free(ft_pipeline *p);
/* The load-time evaluator every load through ft_graph_load and
 * ft_graph_load_mem gets (ft_load_opts.eval; load_eval.c): the nodes that
 * compute tensor t run on the CPU backend from the values known at load and
 * those cache holds from earlier calls, and cache keeps what they compute. */
ft_status ft_load_eval(const ft_graph *g, ft_node *const *nodes, int t, void **cache, ft_error *err);

#endif
