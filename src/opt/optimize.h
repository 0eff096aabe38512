/* The graph optimizer: graph -> graph rewrites run after a graph is loaded and
 * validated and before it is planned (see ftrun(1), OPTIMIZER). Each pass
 * counts what it rewrote; the graph is validated again afterwards.
 *
 *   -O0  nothing
 *   -O1  dead: nodes whose outputs nobody reads and that are no graph output
 *   -O2  conv_taps (kernel taps that read only padding dropped from a
 *        conv), bn_fold (batch_norm with constant parameters after a conv -> the
 *        conv's weights and bias), silu, hard_swish, gelu, layer_norm, rms_norm, softmax,
 *        log_softmax, attention (their expanded forms -> the op;
 *        optimize_forms.c), transpose, conv_add (an add of a conv's
 *        output and a tensor of its shape -> the conv's input 3), conv_act
 *        (relu, clip, silu or hard_swish after a conv -> the conv's
 *        "activation"), qdq_conv (a conv between dequantize_linear and
 *        quantize_linear nodes -> qlinear_conv; optimize_quant.c),
 *        matmul_epi (add of a constant [N] after a matmul
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
 *   printf("%d silu\n", s.count[FT_OPT_silu]);
 */
#ifndef FT_OPTIMIZE_H
#define FT_OPTIMIZE_H

#include "../graph/graph.h"

#define FT_OPT_DEFAULT 2

/* The passes in the order they run: X(name, level). Their counters, `ftrun
 * info`'s summary line and --help's list of -O2 come from this table (the
 * functions are in optimize.c's table of the same order). */
#define FT_OPT_PASSES(X)                                                                                            \
    X(conv_taps, 2) X(bn_fold, 2) X(silu, 2) X(hard_swish, 2) X(gelu, 2) X(layer_norm, 2) X(rms_norm, 2) X(softmax, 2) X(log_softmax, 2)              \
    X(attention, 2) X(transpose, 2) X(conv_add, 2) X(conv_act, 2) X(qdq_conv, 2) X(matmul_epi, 2) X(dead, 1)

typedef enum ft_opt_pass {
#define FT_OPT_ENUM(name, level) FT_OPT_##name,
    FT_OPT_PASSES(FT_OPT_ENUM)
#undef FT_OPT_ENUM
    FT_OPT_N_PASSES
} ft_opt_pass;

typedef struct ft_opt_stats {
    int level;
    int count[FT_OPT_N_PASSES]; /* what each pass rewrote (index ft_opt_pass) */
    int rewritten;              /* the sum of the counts: nonzero when the graph changed */
} ft_opt_stats;

/* A pass's name ("bn_fold") and the lowest level that runs it. */
const char *ft_opt_pass_name(ft_opt_pass p);
int ft_opt_pass_level(ft_opt_pass p);

/* Run the passes of `level` (0, 1 or 2) on a validated graph, then validate
 * it again. stats may be NULL. */
ft_status ft_graph_optimize(ft_graph *g, int level, ft_opt_stats *stats, ft_error *err);

#endif
