/* `ftrun info`'s description of a graph: as text (nodes in execution order
 * with their shapes, FLOPs and bytes, the memory plan; columns sized to their
 * contents) or as JSON (--json, schema "ftrun-info/1", man/ftrun.1 JSON
 * OUTPUT). A graph whose dims nothing binds is described from two loads with
 * different stand-in sizes (graph.h, ft_unbound): sizes that follow a
 * stand-in are written with its name.
 *
 *   ft_info_view v = {.g = p.g, .p = &p.plan, .opt = &p.opt};   // g2, p2, u1, u2: the stand-in runs
 *   ft_info_text(stdout, &v);
 *   char *json = ft_info_json(&v); fputs(json, stdout); free(json);
 */
#ifndef FT_CLI_INFO_H
#define FT_CLI_INFO_H

#include <stdio.h>

#include "../graph/graph.h"
#include "../opt/optimize.h"
#include "../runtime/plan.h"

typedef struct ft_info_view {
    const ft_graph *g;
    const ft_plan *p;
    const ft_opt_stats *opt;  /* what the optimizer rewrote (NULL: nothing) */
    const ft_graph *g2;       /* NULL, or the same graph with the second stand-in sizes */
    const ft_plan *p2;
    const ft_unbound *u1, *u2; /* with g2: the stand-ins of g and of g2 */
} ft_info_view;

void ft_info_text(FILE *f, const ft_info_view *v);
/* A size of the two stand-in runs (a with u's stand-ins, b with w's) as
 * text: the number when a == b (or u is NULL), else an expression in one
 * name (c*name+d) or in two (c*name1*name2), else "?". Returns 1 for a
 * plain number. */
int ft_sym_size(const ft_unbound *u, const ft_unbound *w, int64_t a, int64_t b, char *buf, size_t n);
/* The JSON text (malloc'd; NULL when out of memory). */
char *ft_info_json(const ft_info_view *v);

#endif
