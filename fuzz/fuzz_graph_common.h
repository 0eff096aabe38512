/* What the graph harnesses (fuzz_json.c, fuzz_ftg.c, fuzz_onnx.c) do with a
 * graph that loaded: what `ftrun info` does (validate, optimize at the
 * default level, cost every node, plan memory); fuzz_run.c takes the same
 * steps before it runs the graph. The optimizer must turn
 * every valid graph into a valid one: a graph it makes that fails the
 * validation after it is a bug, as is a failure without a message. */
#ifndef FT_FUZZ_GRAPH_COMMON_H
#define FT_FUZZ_GRAPH_COMMON_H

#include "graph/cost.h"
#include "graph/graph.h"
#include "opt/optimize.h"
#include "runtime/plan.h"

/* Validate, then optimize at -O2: 1 when g is valid and optimized, 0 when it
 * was refused (with a message). */
static int fz_prepare(ft_graph *g)
{
    ft_error err = {0};
    if (ft_graph_validate(g, &err) != FT_OK) {
        if (!err.msg[0])
            abort(); /* every failure must say why */
        return 0;
    }
    if (ft_graph_optimize(g, FT_OPT_DEFAULT, NULL, &err) != FT_OK) {
        if (err.code != FT_ERUNTIME || !err.msg[0])
            abort(); /* an invalid graph made of a valid one, or no message */
        return 0;    /* out of memory */
    }
    return 1;
}

/* Every tensor placed by plan p (persistent or produced by a node) lies
 * inside its arena. */
static void fz_check_plan(const ft_graph *g, const ft_plan *p)
{
    for (int t = 0; t < p->n_tensors && t < g->n_tensors; t++) {
        const ft_tensor *x = &g->tensors[t];
        if ((ft_plan_is_persistent(x) || x->producer >= 0) &&
            (p->offset[t] > p->arena_bytes || ft_tensor_bytes(x) > p->arena_bytes - p->offset[t]))
            abort();
    }
}

__attribute__((unused)) static void fz_check_graph(ft_graph *g)
{
    if (!fz_prepare(g))
        return;
    for (int k = 0; k < g->n_nodes; k++) {
        uint64_t flops, bytes;
        ft_node_cost(g, &g->nodes[g->order[k]], &flops, &bytes);
    }
    ft_plan p;
    ft_error err = {0};
    memset(&p, 0, sizeof p);
    if (ft_plan_build(g, &p, &err) == FT_OK) {
        fz_check_plan(g, &p);
        ft_plan_free(&p);
    } else if (!err.msg[0]) {
        abort();
    }
}

#endif
