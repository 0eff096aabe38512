#include "report.h"
#include "../graph/cost.h"
#include "../io/ftg.h"
#include "profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ft_print_summary(FILE *f, const ft_graph *g, const char *device, const ft_run_result *r, const char *dir, int results)
{
    ft_stats s;
    ft_stats_compute(r->run_ms, r->n_runs, &s);
    fprintf(f, "ftrun: %s: %d nodes on %s: ", g->name, g->n_nodes, device);
    if (r->n_runs == 1) {
        fprintf(f, "1 run, %.3f ms", s.median);
    } else {
        /* runs per second at the median run, the figure quoted: a few slow
         * runs move the mean, not the median */
        fprintf(f, "%d runs (%.1f/s): min %.3f, median %.3f, mean %.3f", r->n_runs, s.median > 0 ? 1e3 / s.median : 0.0,
                s.min, s.median, s.mean);
        if (r->n_runs >= 10) /* a percentile of fewer runs means little */
            fprintf(f, ", p90 %.3f", s.p90);
        if (r->n_runs >= 100)
            fprintf(f, ", p99 %.3f", s.p99);
        fprintf(f, " ms");
    }
    if (results)
        fprintf(f, "; results in %s/\n", dir);
    else
        fprintf(f, "; timings in %s/timing.json\n", dir);
}

void ft_report_cmp(FILE *f, const char *prefix, const ft_cmp *c, ft_dtype dt, const ft_shape *s, ft_tol tol)
{
    char line[1024];
    fprintf(f, "%s: %s\n", prefix, ft_cmp_str(c, dt, s, tol, line, sizeof line));
}

static double r6(double v) { return round(v * 1e6) / 1e6; }

char *ft_timing_json(const ft_graph *g, const ft_plan *p, const ft_run_result *r, const ft_timing_info *ti)
{
    unsigned long oom0 = ft_json_oom(); /* an Add that fails would leave a key out */
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "ftrun_version", FT_VERSION);
    cJSON *jg = cJSON_AddObjectToObject(root, "graph");
    cJSON_AddStringToObject(jg, "name", g->name);
    cJSON_AddStringToObject(jg, "file", g->file);
    cJSON_AddNumberToObject(jg, "nodes", g->n_nodes);
    /* where each input's value came from: "--input", "--random-inputs", "data", "file", "init", "blob" */
    cJSON *ji = cJSON_AddObjectToObject(root, "inputs");
    for (int i = 0; i < g->n_inputs; i++) {
        const ft_tensor *t = &g->tensors[g->inputs[i]];
        cJSON_AddStringToObject(ji, t->name, t->source ? t->source : "none");
    }
    if (ti->random_inputs)
        cJSON_AddNumberToObject(root, "random_seed", (double)ti->random_seed);
    cJSON *jd = cJSON_AddObjectToObject(root, "device");
    cJSON_AddStringToObject(jd, "name", ti->device_name);
    cJSON_AddStringToObject(jd, "description", ti->device_desc);
    cJSON_AddNumberToObject(root, "warmup", ti->warmup);
    cJSON_AddNumberToObject(root, "iterations", r->n_runs);
    cJSON_AddNumberToObject(root, "load_ms", r6(ti->load_ms));
    cJSON_AddNumberToObject(root, "plan_ms", r6(ti->plan_ms));
    cJSON_AddNumberToObject(root, "h2d_ms", r6(r->h2d_ms));
    cJSON_AddNumberToObject(root, "d2h_ms", r6(r->d2h_ms));
    ft_stats s;
    ft_stats_compute(r->run_ms, r->n_runs, &s);
    cJSON *jr = cJSON_AddObjectToObject(root, "run_ms");
    cJSON_AddNumberToObject(jr, "min", r6(s.min));
    cJSON_AddNumberToObject(jr, "median", r6(s.median));
    cJSON_AddNumberToObject(jr, "mean", r6(s.mean));
    cJSON_AddNumberToObject(jr, "p90", r6(s.p90));
    cJSON_AddNumberToObject(jr, "p99", r6(s.p99));
    cJSON_AddNumberToObject(jr, "max", r6(s.max));
    cJSON *jm = cJSON_AddObjectToObject(root, "memory");
    cJSON_AddNumberToObject(jm, "planned_peak_bytes", (double)p->arena_bytes);
    cJSON_AddNumberToObject(jm, "unplanned_bytes", (double)p->unplanned_bytes);
    cJSON_AddNumberToObject(jm, "weights_bytes", (double)p->weights_bytes);
    uint64_t rss = ft_peak_rss_bytes(); /* null where it cannot be read */
    if (rss)
        cJSON_AddNumberToObject(jm, "peak_rss_bytes", (double)rss);
    else
        cJSON_AddNullToObject(jm, "peak_rss_bytes");
    /* each output's dtype and shape as the runs gave it (every run of one
     * invocation reads the same inputs: a dynamic output's shape is that of
     * every run), and whether the shape is known only at run time */
    cJSON *jo = cJSON_AddObjectToObject(root, "outputs");
    for (int i = 0; i < g->n_outputs && i < r->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        cJSON *o = cJSON_AddObjectToObject(jo, t->name);
        cJSON_AddStringToObject(o, "dtype", ft_dtype_name(t->dtype));
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < r->output_shapes[i].rank; d++) {
            cJSON *dim = cJSON_CreateNumber((double)r->output_shapes[i].dims[d]);
            if (!cJSON_AddItemToArray(sh, dim)) /* out of memory: the count of ft_json_oom says so */
                cJSON_Delete(dim);
        }
        cJSON_AddBoolToObject(o, "dynamic", (t->flags & FT_TF_DYNAMIC) != 0);
    }
    ft_profile_json(root, g, p, r);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text || ft_json_oom() != oom0) {
        cJSON_free(text);
        return NULL;
    }
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = 0;
    }
    cJSON_free(text);
    return out;
}

/* "f16 bf16 f32": the dtypes of a mask, separated by spaces. */
static const char *dtype_list(ft_dtype_mask m, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int d = 0; d < FT_DTYPE_COUNT; d++)
        if (ft_dtype_in((ft_dtype)d, m) && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " " : "", ft_dtype_name((ft_dtype)d));
    return buf;
}

void ft_print_ops(FILE *f, const ft_backend *only)
{
    ft_error e = {0};
    const ft_backend *cuda = ft_backend_get("cuda", &e);
    const ft_backend *bes[2] = {&ft_cpu_backend, cuda};
    size_t n_bes = cuda ? 2 : 1;
    fprintf(f, "%-20s %s\n", "op", "dtypes the graph format accepts (ftrun-graph(5), OPS), then those each backend implements");
    for (int op = 0; op < FT_OP_COUNT; op++) {
        const ft_op_info *oi = ft_op_get((ft_op)op);
        fprintf(f, "%-20s", oi->name);
        if (!oi->available) {
            fprintf(f, " not available in this version\n");
            continue;
        }
        char acc[128];
        fprintf(f, " format: %s ", dtype_list(oi->dtypes, acc, sizeof acc));
        for (size_t b = 0; b < n_bes; b++) {
            if (only && only != bes[b])
                continue;
            ft_dtype_mask mk = ft_backend_dtypes(bes[b], (ft_op)op) & oi->dtypes;
            char buf[128], miss[128];
            fprintf(f, " %s: %s", bes[b]->name, mk ? dtype_list(mk, buf, sizeof buf) : "-");
            if (oi->dtypes & ~mk)
                fprintf(f, " (lacks %s)", ft_dtype_mask_str(oi->dtypes & ~mk, miss, sizeof miss));
        }
        fprintf(f, "\n");
    }
}
