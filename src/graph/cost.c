/* FLOPs and bytes of a node, from the op table's counters and the tensor sizes. */
#include "graph.h"

void ft_node_cost(const ft_graph *g, const ft_node *n, uint64_t *flops, uint64_t *bytes)
{
    const ft_tinfo *in[64];
    ft_tinfo insto[64], out[64];
    *bytes = 0;
    *flops = 0;
    if (n->n_in > 64 || n->n_out > 64)
        return;
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0) {
            in[i] = NULL;
            continue;
        }
        const ft_tensor *t = &g->tensors[n->in[i]];
        insto[i] = (ft_tinfo){t->dtype, t->shape};
        in[i] = &insto[i];
        *bytes += ft_tensor_bytes(t);
    }
    for (int o = 0; o < n->n_out; o++) {
        const ft_tensor *t = &g->tensors[n->out[o]];
        out[o] = (ft_tinfo){t->dtype, t->shape};
        *bytes += ft_tensor_bytes(t);
    }
    *flops = ft_op_get(n->op)->flops(n, in, out);
}
