/* Reports written by the command line: result files, timing.json, the text
 * of `ftrun info` and `ftrun ops`. Nothing here knows about kernels; the
 * caller frees the text ft_timing_json returns.
 *
 *   ft_print_summary(stdout, g, "cpu", &r, "ftrun-out", 1);
 *   char *json = ft_timing_json(g, &plan, &r, &info); fputs(json, f); free(json);
 */
#ifndef FT_REPORT_H
#define FT_REPORT_H

#include <stdio.h>

#include "../io/npy.h"
#include "../io/npz.h"
#include "compare.h"
#include "../runtime/exec.h"
#include "outfile.h"

typedef struct ft_timing_info {
    const char *device_name, *device_desc;
    int warmup, iterations;
    double load_ms, plan_ms;
    int random_inputs;    /* --random-inputs given: "random_seed" in timing.json */
    uint64_t random_seed;
} ft_timing_info;

/* The summary line of a run on f: runs, runs per second and the statistics
 * of the run times (one run: its time), then where the results are
 * (results 0: only timing.json, --format none). */
void ft_print_summary(FILE *f, const ft_graph *g, const char *device, const ft_run_result *r, const char *dir, int results);

/* timing.json text (caller frees). */
char *ft_timing_json(const ft_graph *g, const ft_plan *p, const ft_run_result *r, const ft_timing_info *ti);

/* The one report of a comparison, for --expect and `ftrun compare`:
 * "PREFIX: <ft_cmp_str>\n" on f. */
void ft_report_cmp(FILE *f, const char *prefix, const ft_cmp *c, ft_dtype dt, const ft_shape *s, ft_tol tol);

void ft_print_ops(FILE *f, const ft_backend *only);

#endif
