/* What the optimizer's files share (optimize.c: the driver, the helpers
 * below and the conv / matmul / transpose passes; optimize_forms.c: the
 * passes that recognise expanded forms; optimize_quant.c: qdq_conv). Not
 * for use outside src/graph's optimizer.
 *
 * Ownership: an opt borrows its graph, owns `dead` (one byte per node, set
 * when a pass removes the node; compact() in optimize.c drops them) and
 * borrows err. Tensors and nodes are numbered as in the graph.
 *
 *   opt o = {g, dead, err};
 *   int n = opt_prod(&o, t, FT_OP_MATMUL);   // the matmul making t, or -1
 *   if (n >= 0 && opt_private(&o, t)) ...    // only one reading slot
 */
#ifndef FT_OPTIMIZE_INT_H
#define FT_OPTIMIZE_INT_H

#include "../graph/graph.h"

typedef struct opt {
    ft_graph *g;
    char *dead; /* per node */
    ft_error *err;
    int guarded; /* the graph has guarded nodes: a fusion keeps to nodes of one guard (opt_private) */
} opt;

ft_status opt_oom(opt *o); /* fills o->err, returns FT_ERUNTIME */
/* An intermediate: exactly one reading slot, no graph output, a shape known
 * at load (not FT_TF_DYNAMIC). */
int opt_private(const opt *o, int t);
/* The live node producing t with op `op`, or -1 (also for t < 0). */
int opt_prod(const opt *o, int t, ft_op op);
/* The one live node reading private tensor t, when its op is `op`; or -1. */
int opt_reader(const opt *o, int t, ft_op op);
/* The live nodes reading t, one entry per reading slot (a node reading t
 * twice is listed twice), at most max of them in ks; returns how many
 * slots read t (may exceed max). */
int opt_readers(const opt *o, int t, int *ks, int max);
/* A constant: a value of the file, no input, no producer. */
int opt_is_const(const opt *o, int t);
/* t is a one-element float constant within a relative 1e-4 of want. */
int opt_scalar_near(const opt *o, int t, double want);
/* A one-element float constant's value in *v; 0 when t is none. */
int opt_scalar_val(const opt *o, int t, double *v);
/* The operand of binary node k other than t (-1 when t is neither or both). */
int opt_other(const opt *o, int k, int t);
/* The fused op may replace x -> out: same dtype and shape, known at load, a dtype op takes. */
int opt_same_as_input(const opt *o, int x, int out, ft_op op);
/* Node k is removed: its reading slots are released, its outputs lose their producer. */
void opt_kill(opt *o, int k);
/* Node k becomes op(ins) with op's default attributes; its name and outputs stay. */
ft_status opt_rewrite(opt *o, int k, ft_op op, const int *ins, int n_in);
/* The first live node at or after k whose op is op, or g->n_nodes. */
int opt_next_live(const opt *o, int k, ft_op op);
/* Node n's attribute `name` (of its op's table), marked given. */
ft_attr_val *opt_attr(ft_node *n, const char *name);

/* optimize_forms.c: each counts what it rewrote in *count. */
ft_status opt_silu(opt *o, int *count);
ft_status opt_hard_swish(opt *o, int *count);
ft_status opt_gelu(opt *o, int *count);
ft_status opt_layer_norm(opt *o, int *count);
ft_status opt_rms_norm(opt *o, int *count);
ft_status opt_softmax(opt *o, int *count, int *log_count);
ft_status opt_attention(opt *o, int *count);

/* optimize_quant.c */
ft_status opt_qdq_conv(opt *o, int *count);

#endif
