/* Measurement reports: the per-node profile (stderr table and timing.json
 * "nodes"), the Chrome trace-event file, and the warnings about timings a
 * user should not trust. The run result owns the raw numbers; these only read. */
#ifndef FT_PROFILE_H
#define FT_PROFILE_H

#include <stdio.h>

#include "../runtime/exec.h"

struct cJSON;

/* Table of nodes by time: name, op, mean ms, share, FLOPs, bytes, GFLOP/s, GB/s. */
void ft_profile_print(FILE *f, const ft_graph *g, const ft_run_result *r);
/* Add "nodes": [...] to a timing.json object. */
void ft_profile_json(struct cJSON *root, const ft_graph *g, const ft_run_result *r);
/* Chrome trace-event JSON (complete events, microseconds) of the timed runs,
 * written to f (path names it in messages). */
ft_status ft_trace_write(FILE *f, const char *path, const ft_graph *g, const ft_run_result *r, const char *device, ft_error *err);
/* Warnings about the timings (unstable, transfer-bound, too few runs for the
 * percentiles) on f, each line starting with "ftrun: warning: ". Returns the count. */
int ft_timing_warnings(FILE *f, const ft_run_result *r);

#endif
