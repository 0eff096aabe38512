/* What the graph harnesses (fuzz_json.c, fuzz_ftg.c, fuzz_onnx.c) do with a
 * graph that loaded, through the pipeline (src/pipeline/pipeline.h) as
 * `ftrun info` does: validate, optimize at the default level, cost every
 * node, plan memory; fuzz_run.c takes the same steps before it runs the
 * graph. The optimizer must turn every valid graph into a valid one: a graph
 * it makes that fails the validation after it is a bug, as is a failure
 * without a message. */
#ifndef FT_FUZZ_GRAPH_COMMON_H
#define FT_FUZZ_GRAPH_COMMON_H

#include <string.h>

#include "graph/cost.h"
#include "graph/graph.h"
#include "opt/optimize.h"
#include "pipeline/pipeline.h"
#include "runtime/plan.h"

/* The pipeline takes g (it is then the pipeline's, also when refused),
 * validates it and optimizes it at -O2: 1 when p holds it valid and
 * optimized, 0 when it was refused (with a message). */
static int fz_prepare(ft_pipeline *p, ft_graph *g)
{
    ft_error err = {0};
    ft_pipeline_opts po = {.opt_level = FT_OPT_DEFAULT};
    if (ft_pipeline_take(p, g, &po, &err) == FT_OK)
        return 1;
    if (!err.msg[0] || !p->failed)
        abort(); /* every failure must say why, and where */
    if (!strcmp(p->failed, "optimize") && err.code != FT_ERUNTIME)
        abort(); /* an invalid graph made of a valid one (not out of memory) */
    return 0;
}

/* Every tensor placed by plan p (persistent or produced by a node) lies
 * inside its arena; a tensor of run-time shape (FT_PLAN_DYNAMIC) gets its
 * memory while the graph runs, outside it. */
static void fz_check_plan(const ft_graph *g, const ft_plan *p)
{
    for (int t = 0; t < p->n_tensors && t < g->n_tensors; t++) {
        const ft_tensor *x = &g->tensors[t];
        if ((ft_plan_is_persistent(x) || x->producer >= 0) && p->offset[t] != FT_PLAN_DYNAMIC &&
            (p->offset[t] > p->arena_bytes || ft_tensor_bytes(x) > p->arena_bytes - p->offset[t]))
            abort();
    }
}

/* Takes g (freed here). */
__attribute__((unused)) static void fz_check_graph(ft_graph *g)
{
    ft_pipeline p;
    if (!fz_prepare(&p, g))
        return;
    for (int k = 0; k < p.g->n_nodes; k++) {
        uint64_t flops, bytes;
        ft_node_cost(p.g, &p.g->nodes[p.g->order[k]], &flops, &bytes);
    }
    ft_error err = {0};
    if (ft_pipeline_plan(&p, NULL, NULL, &err) == FT_OK)
        fz_check_plan(p.g, &p.plan);
    else if (!err.msg[0])
        abort();
    ft_pipeline_free(&p);
}

#endif
