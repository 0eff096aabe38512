/* Per-node cost model: FLOPs from the op table, bytes = every input and output
 * read or written once. Plain computation: no ownership.
 *
 *   uint64_t f, b;
 *   ft_node_cost(g, &g->nodes[i], &f, &b);
 */
#ifndef FT_COST_H
#define FT_COST_H

#include "graph.h"

void ft_node_cost(const ft_graph *g, const ft_node *n, uint64_t *flops, uint64_t *bytes);

#endif
