/* Measurement reports: the per-node profile (stderr table and timing.json
 * "nodes"), the Chrome trace-event file, the statistics of the run times,
 * and the warnings about timings a user should not trust. The run result
 * owns the raw numbers; these only read.
 *
 *   ft_stats s; ft_stats_compute(r.run_ms, r.n_runs, &s);   // s.median, s.p90 ...
 *   ft_profile_print(stderr, g, &plan, &r);
 *   int warned = ft_timing_warnings(stderr, &r, FT_WARN_FEW_RUNS);
 */
#ifndef FT_PROFILE_H
#define FT_PROFILE_H

#include <stdio.h>

#include "../runtime/exec.h"
#include "../runtime/plan.h"

struct cJSON;

/* Statistics of run times (ms), percentiles as numpy.percentile's default;
 * NaN throughout when there was no memory to sort them. */
typedef struct ft_stats {
    double min, median, mean, p90, p99, max;
} ft_stats;

void ft_stats_compute(const double *ms, int n, ft_stats *s);

/* Table of nodes by time: name, op, mean ms, share, FLOPs, bytes, GFLOP/s,
 * GB/s, its columns as wide as their contents (names cut in the middle past
 * 48 columns). A node that the plan p makes a view (ft_plan_is_view) moves
 * no bytes: its op reads "reshape (view)", its bytes 0 and its GB/s "-". */
void ft_profile_print(FILE *f, const ft_graph *g, const ft_plan *p, const ft_run_result *r);
/* Add "nodes": [...] to a timing.json object (a view: "view" true, bytes 0,
 * gbytes_per_s null). */
void ft_profile_json(struct cJSON *root, const ft_graph *g, const ft_plan *p, const ft_run_result *r);
/* Chrome trace-event JSON (complete events, microseconds) of the timed runs,
 * written to f (path names it in messages). */
ft_status ft_trace_write(FILE *f, const char *path, const ft_graph *g, const ft_run_result *r, const char *device, ft_error *err);
/* Warnings about the timings on f, each line starting with "ftrun: warning: ";
 * returns the count. Always: unstable timings, when the median is known only
 * to within more than 1% (95% confidence, from 1.4826 x the median absolute
 * deviation: a spread that a few preempted runs do not decide). With FT_WARN_TRANSFERS (a device that is not
 * the host; on the CPU "transfers" are memory copies): transfers longer than
 * the median run. With FT_WARN_FEW_RUNS (the count was fixed with -n): fewer
 * than 100 runs for p99, 10 for p90. */
enum { FT_WARN_TRANSFERS = 1, FT_WARN_FEW_RUNS = 2 };
int ft_timing_warnings(FILE *f, const ft_run_result *r, unsigned what);

#endif
