#include "profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../graph/cost.h"
#include "cliutil.h"
#include "../io/ftg.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks, as numpy.percentile's default. */
static double pct(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

void ft_stats_compute(const double *ms, int n, ft_stats *s)
{
    memset(s, 0, sizeof *s);
    if (n <= 0)
        return;
    /* the usual few runs need no allocation; without memory to sort, NaN
     * says "unknown" where 0 would be a wrong time */
    double small[256];
    double *v = n <= 256 ? small : malloc((size_t)n * sizeof(double));
    if (!v) {
        s->min = s->max = s->mean = s->median = s->p90 = s->p99 = NAN;
        return;
    }
    memcpy(v, ms, (size_t)n * sizeof(double));
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    s->min = v[0];
    s->max = v[n - 1];
    s->mean = sum / n;
    s->median = pct(v, n, 0.5);
    s->p90 = pct(v, n, 0.9);
    s->p99 = pct(v, n, 0.99);
    if (v != small)
        free(v);
}

typedef struct {
    int node;
    double ms;
} row;

static int by_time_desc(const void *a, const void *b)
{
    double x = ((const row *)a)->ms, y = ((const row *)b)->ms;
    return (x < y) - (x > y);
}

static double total_node_ms(const ft_graph *g, const ft_run_result *r)
{
    double t = 0;
    for (int i = 0; i < g->n_nodes; i++)
        t += r->node_ms[i];
    return t;
}

void ft_profile_print(FILE *f, const ft_graph *g, const ft_plan *p, const ft_run_result *r)
{
    if (!r->node_ms || r->n_runs == 0)
        return;
    row *rows = malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *rows);
    if (!rows)
        return;
    for (int i = 0; i < g->n_nodes; i++)
        rows[i] = (row){i, r->node_ms[i]};
    qsort(rows, (size_t)g->n_nodes, sizeof *rows, by_time_desc);
    double total = total_node_ms(g, r);
    int nw = 4, ow = 2;
    for (int i = 0; i < g->n_nodes; i++) {
        int w = ft_text_width(g->nodes[i].name), o = (int)strlen(ft_op_name(g->nodes[i].op)) + 7 * ft_plan_is_view(g, p, &g->nodes[i]);
        nw = w > nw ? (w < 48 ? w : 48) : nw;
        ow = o > ow ? o : ow;
    }
    fprintf(f, "ftrun: profile over %d run%s (mean per run):\n  ", r->n_runs, r->n_runs == 1 ? "" : "s");
    ft_cell(f, "node", nw, 0);
    fprintf(f, "  ");
    ft_cell(f, "op", ow, 0);
    fprintf(f, " %10s %7s %14s %14s %9s %8s\n", "mean ms", "share", "flops", "bytes", "GFLOP/s", "GB/s");
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[rows[k].node];
        uint64_t fl, by;
        ft_node_cost(g, n, &fl, &by);
        int view = ft_plan_is_view(g, p, n);
        if (view)
            by = 0;
        double mean = rows[k].ms / r->n_runs;
        double sec = mean * 1e-3;
        char op[64], gbs[32];
        snprintf(op, sizeof op, "%s%s", ft_op_name(n->op), view ? " (view)" : "");
        if (view)
            snprintf(gbs, sizeof gbs, "-");
        else
            snprintf(gbs, sizeof gbs, "%.2f", sec > 0 ? by / sec * 1e-9 : 0.0);
        fprintf(f, "  ");
        ft_cell(f, n->name, nw, 0);
        fprintf(f, "  ");
        ft_cell(f, op, ow, 0);
        fprintf(f, " %10.4f %6.1f%% %14llu %14llu %9.2f %8s\n", mean, total > 0 ? 100.0 * rows[k].ms / total : 0.0,
                (unsigned long long)fl, (unsigned long long)by, sec > 0 ? fl / sec * 1e-9 : 0.0, gbs);
    }
    ft_stats s;
    ft_stats_compute(r->run_ms, r->n_runs, &s);
    fprintf(f, "  nodes sum to %.4f ms per run; whole run mean %.4f ms\n", total / r->n_runs, s.mean);
    free(rows);
}

void ft_profile_json(struct cJSON *root, const ft_graph *g, const ft_plan *p, const ft_run_result *r)
{
    if (!r->node_ms || r->n_runs == 0)
        return;
    double total = total_node_ms(g, r);
    cJSON *arr = cJSON_AddArrayToObject(root, "nodes");
    if (!arr)
        return; /* out of memory: the caller sees it in ft_json_oom() */
    for (int k = 0; k < g->n_nodes; k++) {
        int i = g->order[k];
        const ft_node *n = &g->nodes[i];
        uint64_t fl, by;
        ft_node_cost(g, n, &fl, &by);
        int view = ft_plan_is_view(g, p, n);
        if (view)
            by = 0;
        double mean = r->node_ms[i] / r->n_runs, sec = mean * 1e-3;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "op", ft_op_name(n->op));
        cJSON_AddNumberToObject(o, "mean_ms", round(mean * 1e6) / 1e6);
        cJSON_AddNumberToObject(o, "percent", total > 0 ? round(1e3 * 100.0 * r->node_ms[i] / total) / 1e3 : 0.0);
        cJSON_AddNumberToObject(o, "flops", (double)fl);
        cJSON_AddNumberToObject(o, "bytes", (double)by);
        cJSON_AddNumberToObject(o, "gflops_per_s", sec > 0 ? round(fl / sec * 1e-9 * 1e3) / 1e3 : 0.0);
        if (view)
            cJSON_AddNullToObject(o, "gbytes_per_s");
        else
            cJSON_AddNumberToObject(o, "gbytes_per_s", sec > 0 ? round(by / sec * 1e-9 * 1e3) / 1e3 : 0.0);
        cJSON_AddBoolToObject(o, "view", view);
        cJSON_AddItemToArray(arr, o);
    }
}

static void shapes_str(const ft_graph *g, const int *idx, int n, char *buf, size_t sz, int dtypes)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 32 < sz; i++) {
        if (idx[i] < 0) {
            len += (size_t)snprintf(buf + len, sz - len, "%s-", i ? " " : "");
            continue;
        }
        const ft_tensor *t = &g->tensors[idx[i]];
        char s[FT_SHAPE_STR];
        len += (size_t)snprintf(buf + len, sz - len, "%s%s", i ? " " : "",
                                dtypes ? ft_dtype_name(t->dtype) : ft_shape_str(&t->shape, s));
    }
}

ft_status ft_trace_write(FILE *f, const char *path, const ft_graph *g, const ft_run_result *r, const char *device, ft_error *err)
{
    unsigned long oom0 = ft_json_oom(); /* an Add that fails would leave an event out */
    cJSON *root = cJSON_CreateObject();
    cJSON *evs = root ? cJSON_AddArrayToObject(root, "traceEvents") : NULL;
    if (!evs) {
        cJSON_Delete(root);
        return ft_err(err, FT_ERUNTIME, "out of memory writing the trace");
    }
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "name", "process_name");
    cJSON_AddStringToObject(meta, "ph", "M");
    cJSON_AddNumberToObject(meta, "pid", 1);
    cJSON *margs = cJSON_AddObjectToObject(meta, "args");
    char pname[256];
    snprintf(pname, sizeof pname, "ftrun %s on %s", g->name, device);
    cJSON_AddStringToObject(margs, "name", pname);
    cJSON_AddItemToArray(evs, meta);
    /* one enclosing event per timed run */
    int run = -1;
    double run_start = 0, run_end = 0;
    for (size_t e = 0; e <= r->n_events; e++) {
        if (e == r->n_events || r->events[e].run != run) {
            if (run >= 0) {
                cJSON *o = cJSON_CreateObject();
                char nm[32];
                snprintf(nm, sizeof nm, "run %d", run);
                cJSON_AddStringToObject(o, "name", nm);
                cJSON_AddStringToObject(o, "cat", "run");
                cJSON_AddStringToObject(o, "ph", "X");
                cJSON_AddNumberToObject(o, "ts", round(run_start * 1e3 * 1e3) / 1e3);
                cJSON_AddNumberToObject(o, "dur", round((run_end - run_start) * 1e3 * 1e3) / 1e3);
                cJSON_AddNumberToObject(o, "pid", 1);
                cJSON_AddNumberToObject(o, "tid", 1);
                cJSON_AddItemToArray(evs, o);
            }
            if (e == r->n_events)
                break;
            run = r->events[e].run;
            run_start = r->events[e].start_ms;
        }
        run_end = r->events[e].end_ms;
    }
    for (size_t e = 0; e < r->n_events; e++) {
        const ft_trace_event *ev = &r->events[e];
        const ft_node *n = &g->nodes[ev->node];
        uint64_t fl, by;
        ft_node_cost(g, n, &fl, &by);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "cat", ft_op_name(n->op));
        cJSON_AddStringToObject(o, "ph", "X");
        cJSON_AddNumberToObject(o, "ts", round(ev->start_ms * 1e6) / 1e3);
        cJSON_AddNumberToObject(o, "dur", round((ev->end_ms - ev->start_ms) * 1e6) / 1e3);
        cJSON_AddNumberToObject(o, "pid", 1);
        cJSON_AddNumberToObject(o, "tid", 2);
        cJSON *a = cJSON_AddObjectToObject(o, "args");
        char buf[1024];
        cJSON_AddStringToObject(a, "op", ft_op_name(n->op));
        cJSON_AddNumberToObject(a, "run", ev->run);
        shapes_str(g, n->in, n->n_in, buf, sizeof buf, 0);
        cJSON_AddStringToObject(a, "input_shapes", buf);
        shapes_str(g, n->in, n->n_in, buf, sizeof buf, 1);
        cJSON_AddStringToObject(a, "input_dtypes", buf);
        shapes_str(g, n->out, n->n_out, buf, sizeof buf, 0);
        cJSON_AddStringToObject(a, "output_shapes", buf);
        shapes_str(g, n->out, n->n_out, buf, sizeof buf, 1);
        cJSON_AddStringToObject(a, "output_dtypes", buf);
        cJSON_AddNumberToObject(a, "flops", (double)fl);
        cJSON_AddNumberToObject(a, "bytes", (double)by);
        cJSON_AddItemToArray(evs, o);
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text || ft_json_oom() != oom0) {
        cJSON_free(text);
        return ft_err(err, FT_ERUNTIME, "out of memory writing the trace");
    }
    /* the caller's file: a temporary one renamed when complete (src/cli/outfile.h) */
    size_t n = strlen(text);
    ft_status st = FT_OK;
    if (fwrite(text, 1, n, f) != n || fputc('\n', f) == EOF)
        st = ft_err(err, FT_ERUNTIME, "cannot write trace %s: %s", path, strerror(errno ? errno : EIO));
    cJSON_free(text);
    return st;
}

/* The spread of the run times that a few preempted runs do not decide:
 * 1.4826 x the median absolute deviation, over the median (for normally
 * distributed times, the coefficient of variation). NAN without memory. */
static double robust_cv(const double *ms, int n, double median)
{
    double *d = malloc((size_t)n * sizeof *d);
    if (!d || median <= 0) {
        free(d);
        return NAN;
    }
    for (int i = 0; i < n; i++)
        d[i] = fabs(ms[i] - median);
    ft_stats s;
    ft_stats_compute(d, n, &s);
    free(d);
    return 1.4826 * s.median / median;
}

int ft_timing_warnings(FILE *f, const ft_run_result *r, unsigned what)
{
    int n = 0;
    if (r->n_runs <= 0)
        return 0;
    ft_stats s;
    ft_stats_compute(r->run_ms, r->n_runs, &s);
    /* what matters is the median quoted: its 95% confidence half-width is
     * about 1.96 x 1.2533 x sd / sqrt(n) */
    double cv = r->n_runs >= 2 ? robust_cv(r->run_ms, r->n_runs, s.median) : 0;
    double hw = 1.96 * 1.2533 * cv / sqrt((double)r->n_runs);
    if (hw > 0.01) {
        fprintf(f, "ftrun: warning: unstable timings: the coefficient of variation is %.1f%% over %d runs, so the median is "
                   "known only to within %.1f%% (above 1%%); use more warm-up runs (-w), a longer --duration, or a quieter "
                   "machine\n", 100 * cv, r->n_runs, 100 * hw);
        n++;
    }
    /* a heavy tail: a few runs far slower than the rest (a cold first run,
     * page faults, another process) pull the mean away from the median,
     * which the spread of the typical runs above does not show */
    if (r->n_runs >= 3 && s.median > 0 && s.mean > 1.1 * s.median) {
        char how[64];
        if (s.mean >= 2 * s.median)
            snprintf(how, sizeof how, "%.1f times", s.mean / s.median);
        else
            snprintf(how, sizeof how, "%.0f%% above", 100 * (s.mean / s.median - 1));
        fprintf(f, "ftrun: warning: heavy tail: the mean run (%.3f ms) is %s the median (%.3f ms; slowest %.3f ms): some "
                   "runs were much slower than the rest; quote the median, and use more warm-up runs (-w) or a longer "
                   "--duration\n", s.mean, how, s.median, s.max);
        n++;
    }
    if ((what & FT_WARN_TRANSFERS) && r->h2d_ms + r->d2h_ms > s.median) {
        fprintf(f, "ftrun: warning: transfers take longer than the compute: h2d %.3f ms + d2h %.3f ms vs median run %.3f ms\n",
                r->h2d_ms, r->d2h_ms, s.median);
        n++;
    }
    if ((what & FT_WARN_FEW_RUNS) && r->n_runs < 100) {
        fprintf(f, "ftrun: warning: %d run%s: p99 needs at least 100 runs%s to mean anything (pass -n 100 or more)\n", r->n_runs,
                r->n_runs == 1 ? "" : "s", r->n_runs < 10 ? " and p90 at least 10" : "");
        n++;
    }
    return n;
}
