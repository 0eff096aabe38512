/* Reports written by the command line: result files, timing.json, the text
 * of `ftrun info` and `ftrun ops`. Nothing here knows about kernels. */
#ifndef FT_REPORT_H
#define FT_REPORT_H

#include <stdio.h>

#include "../graph/npy.h"
#include "../graph/npz.h"
#include "../runtime/compare.h"
#include "../runtime/exec.h"

typedef struct ft_stats {
    double min, median, mean, p90, p99, max;
} ft_stats;

void ft_stats_compute(const double *ms, int n, ft_stats *s);

/* File name of an output: characters outside [A-Za-z0-9._-] become '_'. */
void ft_sanitize_name(const char *name, char *buf, size_t n);

/* A set of files written under temporary names and renamed together. */
typedef struct ft_outset {
    int n, cap;
    char **tmp, **final;
} ft_outset;
/* Create DIR (and parents). */
ft_status ft_mkdirs(const char *dir, ft_error *err);
ft_status ft_outset_npy(ft_outset *s, const char *dir, const char *fname, ft_dtype dt, const ft_shape *shape,
                        const void *data, ft_error *err);
ft_status ft_outset_text(ft_outset *s, const char *dir, const char *fname, const char *text, ft_error *err);
/* An .npz of n arrays (see npz.h). */
ft_status ft_outset_npz(ft_outset *s, const char *dir, const char *fname, const ft_npz_item *items, int n, ft_error *err);
/* Rename every temporary file to its final name; on failure remove them all. */
ft_status ft_outset_commit(ft_outset *s, ft_error *err);
/* Remove every temporary file (used on failure). */
void ft_outset_abort(ft_outset *s);

typedef struct ft_timing_info {
    const char *device_name, *device_desc;
    int warmup, iterations;
    double load_ms, plan_ms;
    int random_inputs;    /* --random-inputs given: "random_seed" in timing.json */
    uint64_t random_seed;
} ft_timing_info;

/* timing.json text (caller frees). */
char *ft_timing_json(const ft_graph *g, const ft_plan *p, const ft_run_result *r, const ft_timing_info *ti);

/* The one report of a comparison, for --expect and `ftrun compare`:
 * "PREFIX: <ft_cmp_str>\n" on f. */
void ft_report_cmp(FILE *f, const char *prefix, const ft_cmp *c, ft_dtype dt, const ft_shape *s, ft_tol tol);

void ft_print_info(FILE *f, const ft_graph *g, const ft_plan *p);
void ft_print_ops(FILE *f, const ft_backend *only);

#endif
