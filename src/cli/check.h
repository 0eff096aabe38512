/* --check and --check-nodes: a run's results against the CPU reference
 * backend, reported through the same comparison lines as --expect.
 *
 *   ft_check_opts o = {.prog = "ftrun", .device = "cuda:0", .out = stderr};
 *   int bad; if (ft_check_outputs(g, &res, &o, &bad, &err)) ...;   // bad: exit 1
 *
 * ft_check_outputs runs the whole graph again on the CPU and compares every
 * output (given the graph as read instead, for --check=O0, it compares the
 * run with that: the outputs are the same list). ft_check_nodes needs a run made with keep_tensors (every tensor
 * copied back): it recomputes each node on the CPU from the inputs the device
 * saw and names the first node whose outputs differ. Neither keeps anything. */
#ifndef FT_CHECK_H
#define FT_CHECK_H

#include <stdio.h>

#include "../runtime/exec.h"
#include "report.h"

typedef struct ft_check_opts {
    const char *prog, *device;
    FILE *out;
    int threads, quiet, verbose;
    int have_rtol, have_atol;
    double rtol, atol;
    const char *ref; /* the reference in messages: "cpu", or "cpu -O0" (the graph as read) */
} ft_check_opts;

ft_status ft_check_outputs(const ft_graph *g, const ft_run_result *r, const ft_check_opts *o, int *mismatch, ft_error *err);
/* --check=O0: g0, the graph as read, takes the values of g's inputs by name
 * (g0's own values are replaced; g keeps its). */
ft_status ft_check_copy_inputs(ft_graph *g0, const ft_graph *g, ft_error *err);
ft_status ft_check_nodes(const ft_graph *g, const ft_run_result *r, const ft_check_opts *o, int *mismatch, ft_error *err);

#endif
