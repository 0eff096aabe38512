/* The graph optimizer: graph -> graph rewrites run after a graph is loaded and
 * validated and before it is planned (see ftrun(1), OPTIMIZER). Each pass
 * counts what it rewrote; the graph is validated again afterwards.
 *
 *   -O0  nothing
 *   -O1  dead: nodes whose outputs nobody reads and that are no graph output
 *   -O2  bn_fold (batch_norm with constant parameters after a conv -> the
 *        conv's weights and bias), silu, gelu, layer_norm, rms_norm, softmax,
 *        log_softmax, attention (their expanded forms -> the op;
 *        optimize_forms.c), transpose, conv_add (an add of a conv's
 *        output and a tensor of its shape -> the conv's input 3), conv_act
 *        (relu, clip, silu or hard_swish after a conv -> the conv's
 *        "activation"), matmul_epi (add of a constant [N] after a matmul
 *        -> its bias input; relu or gelu after a matmul or gemm -> its
 *        "activation"), then dead (the default)
 *
 * A pattern is rewritten only when its intermediate tensors have no reader
 * outside it and are no graph output, and the dtypes and shapes are those the
 * fused op computes. The fused node is the last node of the pattern with a
 * new op and inputs: it keeps that node's name, so `--check-nodes` and
 * `--profile` name it as the file did.
 *
 * Ownership: works on g in place; g->opt_note (owned by g) gets the line
 * `ftrun info` prints.
 *
 *   ft_graph *g; ...                   // ft_graph_load + ft_graph_validate
 *   ft_opt_stats s;
 *   if (ft_graph_optimize(g, 2, &s, &err)) ...   // err.msg; g re-validated
 *   printf("%d silu\n", s.silu);
 */
#ifndef FT_OPTIMIZE_H
#define FT_OPTIMIZE_H

#include "graph.h"

#define FT_OPT_DEFAULT 2

typedef struct ft_opt_stats {
    int level;
    int bn_fold, silu, gelu, layer_norm, rms_norm, softmax, log_softmax, attention, transpose, conv_add, conv_act, matmul_epi, dead;
    int rewritten; /* the sum of the counts above: nonzero when the graph changed */
} ft_opt_stats;

/* Run the passes of `level` (0, 1 or 2) on a validated graph, then validate
 * it again. stats may be NULL. */
ft_status ft_graph_optimize(ft_graph *g, int level, ft_opt_stats *stats, ft_error *err);

#endif
