/* `ftrun test DIR...`: see test.h and man/ftrun.1 (TEST FOLDERS).
 *
 * The parent scans the folders for cases, then keeps up to -j children
 * running, one case each: a child loads the model once per data set, feeds
 * its inputs, runs it on the device and compares every output with the
 * expected values (ft_tol_choose, the rule of --expect). It sends back one
 * status byte and a one-line message on a pipe; its stderr goes to a second
 * pipe, kept as the case's log. A child that dies, exits without a verdict or
 * outlives --timeout is that case's failure. Results are printed in case
 * order whatever order the children finish in, so -j changes nothing but the
 * time. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../graph/graph.h"
#include "../graph/npz.h"
#include "../graph/onnx_inputs.h"
#include "../runtime/compare.h"
#include "../runtime/exec.h"
#include "report.h"
#include "test.h"

static const char *const prog = "ftrun";

typedef struct topts {
    const char *device, *junit;
    double rtol, atol, timeout;
    int have_rtol, have_atol;
    long jobs, threads;
    int quiet, verbose;
} topts;

/* A growable string. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void sb_printf(sbuf *b, const char *fmt, ...) FT_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n >= 0)
        sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ------------------------------------------------------------------ cases */

typedef struct tcase {
    char *dir, *name; /* the folder; "SUITE/REST" (or the folder's name) */
    int suite;        /* index of the DIR operand it came from */
    char status;      /* 'P' pass, 'F' fail, 'U' unsupported; 0 while pending */
    char *msg;        /* one line */
    sbuf log;         /* the child's stderr */
    double secs;
} tcase;

typedef struct caselist {
    tcase *c;
    int n, cap;
} caselist;

/* The model file names a case folder may hold, in the order they are looked
 * for; the content, not the name, tells the loader the format. */
static const char *const model_names[] = {"model.onnx", "graph.json", "graph.ftg"};

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int find_model(const char *dir, char *path, size_t n)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(model_names); i++) {
        snprintf(path, n, "%s/%s", dir, model_names[i]);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            return 1;
    }
    return 0;
}

static int only_dirs(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Cases at or below dir (a case folder, or up to 4 levels of folders holding
 * them), sorted by name. Returns -1 when out of memory. */
static int collect(caselist *L, const char *dir, const char *name, int suite, int depth)
{
    char model[4200];
    if (find_model(dir, model, sizeof model)) {
        if (L->n == L->cap) {
            int cap = L->cap ? 2 * L->cap : 64;
            tcase *c = realloc(L->c, (size_t)cap * sizeof *c);
            if (!c)
                return -1;
            L->c = c;
            L->cap = cap;
        }
        tcase *t = &L->c[L->n];
        memset(t, 0, sizeof *t);
        t->dir = ft_strdup(dir);
        t->name = ft_strdup(name);
        t->suite = suite;
        if (!t->dir || !t->name)
            return -1;
        L->n++;
        return 0;
    }
    if (depth >= 4)
        return 0;
    struct dirent **ents;
    int n = scandir(dir, &ents, only_dirs, versionsort);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char sub[4200], subname[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, ents[i]->d_name);
        snprintf(subname, sizeof subname, "%s/%s", name, ents[i]->d_name);
        if (!rc && is_dir(sub))
            rc = collect(L, sub, subname, suite, depth + 1);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    return rc;
}

/* ------------------------------------------------------ one case (child) */

/* The ONNX importer's refusal of a model it does not support (exit status
 * 3): "FILE: the model uses N things ftrun does not support (nothing was
 * run):" and one line per op, attribute or dtype (src/graph/onnx_import.h,
 * onx_unsupported), or a one-line "FILE: ... is not supported" (an ir_version,
 * opset, input type) of a model.onnx. Any other failure to load is a failure. When it is
 * one, the reason (without the file name, the lines joined by "; ") goes to
 * msg. */
static int unsupported_reason(const ft_error *e, const char *model, char *msg, size_t n)
{
    size_t ml = strlen(model);
    if (e->code != FT_EGRAPH || strncmp(e->msg, model, ml) || strncmp(e->msg + ml, ": ", 2))
        return 0;
    const char *head = e->msg + ml + 2, *nl = strchr(head, '\n');
    int onnx = ml > 5 && !strcmp(model + ml - 5, ".onnx");
    if (!strstr(head, "ftrun does not support") && !(onnx && strstr(head, "not supported")))
        return 0;
    size_t len = 0;
    msg[0] = 0;
    if (!nl || !strstr(head, "ftrun does not support")) /* one line */
        nl = head - 1;
    for (const char *p = nl + 1; *p && len + 3 < n;) {
        while (*p == ' ' || *p == '\n')
            p++;
        size_t k = strcspn(p, "\n");
        if (k)
            len += (size_t)snprintf(msg + len, n - len, "%s%.*s", len ? "; " : "", (int)k, p);
        p += k;
    }
    return 1;
}

enum { MAX_POS = 256 };

/* The files of one data set: positional input_K / output_K, and named
 * inputs/NAME, expected/NAME (each .pb or .npy). */
typedef struct dataset {
    char *pos_in[MAX_POS], *pos_out[MAX_POS];
    int n_pos_in, n_pos_out;
    char **named_in, **named_out; /* paths */
    int n_named_in, n_named_out;
} dataset;

static void dataset_free(dataset *d)
{
    for (int i = 0; i < MAX_POS; i++) {
        free(d->pos_in[i]);
        free(d->pos_out[i]);
    }
    for (int i = 0; i < d->n_named_in; i++)
        free(d->named_in[i]);
    for (int i = 0; i < d->n_named_out; i++)
        free(d->named_out[i]);
    free(d->named_in);
    free(d->named_out);
    memset(d, 0, sizeof *d);
}

static int has_data_ext(const char *f, size_t *stem)
{
    size_t n = strlen(f);
    if (n > 3 && !strcmp(f + n - 3, ".pb")) {
        *stem = n - 3;
        return 1;
    }
    if (n > 4 && !strcmp(f + n - 4, ".npy")) {
        *stem = n - 4;
        return 1;
    }
    return 0;
}

/* "input_12.pb" with prefix "input_" -> 12; -1 when it is not of that form. */
static int pos_index(const char *f, const char *prefix)
{
    size_t stem, pl = strlen(prefix);
    if (strncmp(f, prefix, pl) || !has_data_ext(f, &stem) || stem == pl || stem - pl > 4)
        return -1;
    int k = 0;
    for (size_t i = pl; i < stem; i++) {
        if (f[i] < '0' || f[i] > '9')
            return -1;
        k = k * 10 + (f[i] - '0');
    }
    return k;
}

static int no_dots(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

static ft_status list_named(const char *dir, char ***out, int *n, ft_error *err)
{
    struct dirent **ents;
    int m = scandir(dir, &ents, no_dots, versionsort);
    if (m < 0)
        return errno == ENOENT ? FT_OK : ft_err(err, FT_EGRAPH, "%s: cannot list: %s", dir, strerror(errno));
    ft_status st = FT_OK;
    *out = ft_calloc((size_t)(m ? m : 1), sizeof **out);
    if (!*out)
        st = ft_err(err, FT_ERUNTIME, "out of memory");
    for (int i = 0; i < m; i++) {
        size_t stem;
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir, ents[i]->d_name);
        if (!st && !has_data_ext(ents[i]->d_name, &stem))
            st = ft_err(err, FT_EGRAPH, "%s: not a .npy or .pb file", p);
        if (!st && !((*out)[(*n)++] = ft_strdup(p)))
            st = ft_err(err, FT_ERUNTIME, "out of memory");
        free(ents[i]);
    }
    free(ents);
    return st;
}

static ft_status dataset_scan(const char *dir, dataset *d, ft_error *err)
{
    struct dirent **ents;
    int m = scandir(dir, &ents, no_dots, versionsort);
    if (m < 0)
        return ft_err(err, FT_EGRAPH, "%s: cannot list: %s", dir, strerror(errno));
    ft_status st = FT_OK;
    for (int i = 0; i < m; i++) {
        const char *f = ents[i]->d_name;
        int ki = pos_index(f, "input_"), ko = pos_index(f, "output_");
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", dir, f);
        if (!st && (ki >= MAX_POS || ko >= MAX_POS))
            st = ft_err(err, FT_EGRAPH, "%s: position beyond %d", p, MAX_POS - 1);
        else if (!st && (ki >= 0 || ko >= 0)) {
            char **slot = ki >= 0 ? &d->pos_in[ki] : &d->pos_out[ko];
            if (*slot)
                st = ft_err(err, FT_EGRAPH, "%s and %s: two files for one position", *slot, p);
            else if (!(*slot = ft_strdup(p)))
                st = ft_err(err, FT_ERUNTIME, "out of memory");
            int *np = ki >= 0 ? &d->n_pos_in : &d->n_pos_out;
            int k = ki >= 0 ? ki : ko;
            if (k + 1 > *np)
                *np = k + 1;
        }
        free(ents[i]);
    }
    free(ents);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/inputs", dir);
    if (!st)
        st = list_named(sub, &d->named_in, &d->n_named_in, err);
    snprintf(sub, sizeof sub, "%s/expected", dir);
    if (!st)
        st = list_named(sub, &d->named_out, &d->n_named_out, err);
    for (int k = 0; !st && k < d->n_pos_in; k++)
        if (!d->pos_in[k])
            st = ft_err(err, FT_EGRAPH, "%s: input_%d is missing (inputs are numbered from 0)", dir, k);
    for (int k = 0; !st && k < d->n_pos_out; k++)
        if (!d->pos_out[k])
            st = ft_err(err, FT_EGRAPH, "%s: output_%d is missing (outputs are numbered from 0)", dir, k);
    if (!st && !d->n_pos_out && !d->n_named_out)
        st = ft_err(err, FT_EGRAPH, "%s: no expected values (output_K.pb/.npy or expected/NAME.npy)", dir);
    return st;
}

/* The tensor among list[0..n) (graph inputs or outputs) named by file path
 * (its stem is the name or its sanitised form), or -1. */
static int named_tensor(const ft_graph *g, const int *list, int n, const char *path)
{
    const char *f = strrchr(path, '/');
    f = f ? f + 1 : path;
    size_t stem;
    has_data_ext(f, &stem);
    for (int i = 0; i < n; i++) {
        const char *tn = g->tensors[list[i]].name;
        char san[600];
        ft_sanitize_name(tn, san, sizeof san);
        if ((strlen(tn) == stem && !strncmp(tn, f, stem)) || (strlen(san) == stem && !strncmp(san, f, stem)))
            return i;
    }
    return -1;
}

static const char *tensor_names(const ft_graph *g, const int *list, int n, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 64 < sz; i++)
        len += (size_t)snprintf(buf + len, sz - len, "%s'%s'", i ? ", " : "", g->tensors[list[i]].name);
    return n ? buf : "none";
}

/* Read an array file as the dtype and shape of tensor t. */
static ft_status read_as(const char *path, const ft_tensor *t, const char *what, ft_npy *a, ft_error *err)
{
    ft_status st = ft_array_read(path, NULL, a, err);
    if (st)
        return st;
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (ft_npy_to_dtype(a, t->dtype) != 0)
        st = ft_err(err, FT_EGRAPH, "%s holds %s but %s '%s' is %s", path, ft_dtype_name(a->dtype), what, t->name,
                    ft_dtype_name(t->dtype));
    else if (!ft_shape_eq(&a->shape, &t->shape))
        st = ft_err(err, FT_EGRAPH, "%s has shape %s but %s '%s' has shape %s", path, ft_shape_str(&a->shape, s1), what,
                    t->name, ft_shape_str(&t->shape, s2));
    if (st)
        ft_npy_clear(a);
    return st;
}

/* Give the graph its inputs from the data set. For an ONNX model input_K is
 * its K-th graph input without an initializer (onames, read from the model);
 * otherwise the K-th graph input without a value of its own, or the K-th
 * input when the data set has one file per graph input. */
static ft_status feed_inputs(ft_graph *g, const dataset *d, char **onames, ft_error *err)
{
    int *free_in = ft_calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *free_in), n_free = 0;
    if (!free_in)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    for (int i = 0; i < g->n_inputs; i++)
        if (!g->tensors[g->inputs[i]].value || d->n_pos_in == g->n_inputs)
            free_in[n_free++] = g->inputs[i];
    ft_status st = FT_OK;
    char list[1024];
    if (!onames && d->n_pos_in > n_free) /* for a model, checked against its list before loading */
        st = ft_err(err, FT_EGRAPH, "%d input files (input_0 to input_%d) but the graph has %d input%s to feed (%s)",
                    d->n_pos_in, d->n_pos_in - 1, n_free, n_free == 1 ? "" : "s", tensor_names(g, free_in, n_free, list, sizeof list));
    for (int k = 0; !st && k < d->n_pos_in + d->n_named_in; k++) {
        const char *path = k < d->n_pos_in ? d->pos_in[k] : d->named_in[k - d->n_pos_in];
        int ti = k < d->n_pos_in && !onames ? free_in[k] : -1;
        if (k < d->n_pos_in && onames) {
            ti = ft_graph_find(g, onames[k]);
            if (ti < 0 || !(g->tensors[ti].flags & FT_TF_INPUT))
                continue; /* the import used its value and no node reads it at run time */
        }
        if (ti < 0) {
            int j = named_tensor(g, g->inputs, g->n_inputs, path);
            if (j < 0) {
                st = ft_err(err, FT_EGRAPH, "%s names no input of the graph (its inputs: %s)", path,
                            tensor_names(g, g->inputs, g->n_inputs, list, sizeof list));
                break;
            }
            ti = g->inputs[j];
        }
        ft_npy a;
        if (!(st = read_as(path, &g->tensors[ti], "input", &a, err))) {
            ft_tensor_set_value(&g->tensors[ti], a.data, a.nbytes);
            g->tensors[ti].source = "--input";
        }
    }
    for (int i = 0; !st && i < g->n_inputs; i++)
        if (!g->tensors[g->inputs[i]].value)
            st = ft_err(err, FT_EGRAPH, "input '%s' has no value: the data set has no file for it", g->tensors[g->inputs[i]].name);
    free(free_in);
    return st;
}

/* Expected values, one per graph output: output_K is the K-th output. */
static ft_status load_expected(const ft_graph *g, const dataset *d, ft_npy *exp, ft_error *err)
{
    char list[1024];
    if (d->n_pos_out > g->n_outputs)
        return ft_err(err, FT_EGRAPH, "%d expected outputs (output_0 to output_%d) but the graph has %d (%s)", d->n_pos_out,
                      d->n_pos_out - 1, g->n_outputs, tensor_names(g, g->outputs, g->n_outputs, list, sizeof list));
    ft_status st = FT_OK;
    for (int k = 0; !st && k < d->n_pos_out + d->n_named_out; k++) {
        const char *path = k < d->n_pos_out ? d->pos_out[k] : d->named_out[k - d->n_pos_out];
        int j = k < d->n_pos_out ? k : named_tensor(g, g->outputs, g->n_outputs, path);
        if (j < 0)
            return ft_err(err, FT_EGRAPH, "%s names no output of the graph (its outputs: %s)", path,
                          tensor_names(g, g->outputs, g->n_outputs, list, sizeof list));
        if (exp[j].data)
            return ft_err(err, FT_EGRAPH, "%s: a second expected value for output '%s'", path, g->tensors[g->outputs[j]].name);
        st = read_as(path, &g->tensors[g->outputs[j]], "output", &exp[j], err);
    }
    for (int j = 0; !st && j < g->n_outputs; j++)
        if (!exp[j].data && ft_tensor_bytes(&g->tensors[g->outputs[j]]))
            st = ft_err(err, FT_EGRAPH, "no expected value for output '%s' (output_%d or expected/NAME)", g->tensors[g->outputs[j]].name, j);
    return st;
}

/* For an ONNX model (onames: its inputs without an initializer, n >= 0),
 * every input file read before the import and given to it as a shape and
 * value binding: the import takes the values of parameter inputs (Reshape's
 * shape, Slice's starts, ...) at load time. */
static ft_status bind_inputs(const dataset *d, char **onames, int n, ft_shape_bind **binds, ft_npy **arrs, int *nb,
                             ft_error *err)
{
    if (n < 0)
        return FT_OK;
    if (d->n_pos_in > n)
        return ft_err(err, FT_EGRAPH, "%d input files (input_0 to input_%d) but the model has %d input%s without an initializer",
                      d->n_pos_in, d->n_pos_in - 1, n, n == 1 ? "" : "s");
    int cap = d->n_pos_in + d->n_named_in;
    *binds = ft_calloc((size_t)(cap ? cap : 1), sizeof **binds);
    *arrs = ft_calloc((size_t)(cap ? cap : 1), sizeof **arrs);
    if (!*binds || !*arrs)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    for (int k = 0; k < cap; k++) {
        const char *path = k < d->n_pos_in ? d->pos_in[k] : d->named_in[k - d->n_pos_in], *name = NULL;
        if (k < d->n_pos_in) {
            name = onames[k];
        } else {
            const char *f = strrchr(path, '/') + 1;
            size_t stem;
            has_data_ext(f, &stem);
            for (int i = 0; i < n && !name; i++)
                if (strlen(onames[i]) == stem && !strncmp(onames[i], f, stem))
                    name = onames[i];
            if (!name)
                continue; /* feed_inputs names the file */
        }
        ft_npy *a = &(*arrs)[*nb];
        ft_error e2 = {0};
        if (ft_array_read(path, NULL, a, &e2))
            continue; /* reported by feed_inputs, unless the model is refused first */
        (*binds)[(*nb)++] = (ft_shape_bind){.input = name, .shape = a->shape, .origin = path, .dtype = a->dtype,
                                            .data = a->data, .nbytes = a->nbytes};
    }
    return FT_OK;
}

/* Run one data set; the verdict ('P', 'F', 'U') and a message. label: "" or
 * "test_data_set_N: ", the prefix of messages. */
static char run_set(const topts *o, const ft_backend *be, int devidx, const char *model, const char *setdir, const char *label,
                    char *msg, size_t msz)
{
    ft_error err = {0};
    ft_graph *g = NULL;
    ft_plan plan = {0};
    ft_backend_ctx *ctx = NULL;
    ft_run_result res = {0};
    ft_npy *exp = NULL;
    dataset d;
    memset(&d, 0, sizeof d);
    char verdict = 'F';
    char **onames = NULL;
    int n_onames = -1, n_binds = 0;
    ft_shape_bind *binds = NULL;
    ft_npy *arrs = NULL;
    ft_load_opts lo = {.seed_override = -1};
    if (dataset_scan(setdir, &d, &err) || ft_onnx_input_names(model, &onames, &n_onames, &err) ||
        bind_inputs(&d, onames, n_onames, &binds, &arrs, &n_binds, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    lo.shapes = binds;
    lo.n_shapes = n_binds;
    ft_status st = ft_graph_load(model, &lo, &g, &err);
    if (st && unsupported_reason(&err, model, msg, msz)) {
        verdict = 'U';
        goto out;
    }
    if (!st)
        st = ft_graph_validate(g, &err);
    if (st) {
        snprintf(msg, msz, "%s", err.msg);
        goto out;
    }
    if (feed_inputs(g, &d, onames, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    exp = ft_calloc((size_t)(g->n_outputs ? g->n_outputs : 1), sizeof *exp);
    if (!exp || load_expected(g, &d, exp, &err) || ft_exec_check(g, be, NULL, &err) || ft_plan_build(g, &plan, &err)) {
        snprintf(msg, msz, "%s%s", label, exp ? err.msg : "out of memory");
        goto out;
    }
    ft_backend_opts bo = {.device_index = devidx, .threads = (int)o->threads};
    ft_exec_opts eo = {.iterations = 1, .threads = (int)o->threads};
    if (be->open(&bo, &ctx, &err) || ft_exec_run(g, &plan, be, ctx, &eo, &res, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    int bad = 0;
    double worst = -1;
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_tol tol = ft_tol_choose(t->dtype, o->have_rtol, o->rtol, o->have_atol, o->atol);
        ft_cmp cm;
        ft_compare(res.outputs[i], exp[i].data, t->dtype, &t->shape, tol, &cm);
        char line[1024];
        ft_cmp_str(&cm, t->dtype, &t->shape, tol, line, sizeof line);
        if (cm.n_bad || o->verbose)
            fprintf(stderr, "%soutput '%s': %s\n", label, t->name, line);
        /* the message names the output with the largest error beyond tolerance */
        double e = isnan(cm.max_abs) ? INFINITY : cm.max_abs;
        if (cm.n_bad && (!bad || e > worst)) {
            snprintf(msg, msz, "%soutput '%s': %s", label, t->name, line);
            worst = e;
        }
        bad += cm.n_bad != 0;
    }
    if (!bad) {
        snprintf(msg, msz, "%d output%s match", g->n_outputs, g->n_outputs == 1 ? "" : "s");
        verdict = 'P';
    }
out:
    if (exp)
        for (int i = 0; g && i < g->n_outputs; i++)
            ft_npy_clear(&exp[i]);
    free(exp);
    ft_run_result_free(&res);
    if (ctx)
        be->close(ctx);
    ft_plan_free(&plan);
    ft_graph_free(g);
    dataset_free(&d);
    for (int i = 0; i < n_binds; i++)
        ft_npy_clear(&arrs[i]);
    free(arrs);
    free(binds);
    if (onames)
        ft_onnx_names_free(onames, n_onames);
    return verdict;
}

static int set_dirs(const struct dirent *e)
{
    return !strncmp(e->d_name, "test_data_set_", 14);
}

/* The child's work: every data set of the case (test_data_set_* folders, or
 * the case folder itself when it has none). Stops at the first that does not
 * pass. */
static char run_case(const topts *o, const tcase *c, char *msg, size_t msz)
{
    const ft_backend *be;
    int devidx;
    char devname[32];
    if (pick_device(o->device, 1, 0, &be, &devidx, devname, sizeof devname)) {
        snprintf(msg, msz, "device %s is not usable", o->device ? o->device : "auto");
        return 'F';
    }
    char model[4200];
    find_model(c->dir, model, sizeof model);
    struct dirent **ents;
    int n = scandir(c->dir, &ents, set_dirs, versionsort);
    if (n < 0) {
        snprintf(msg, msz, "%s: cannot list: %s", c->dir, strerror(errno));
        return 'F';
    }
    char v = 'P';
    int sets = 0;
    for (int i = 0; i < n; i++) {
        char sd[4200], label[300];
        snprintf(sd, sizeof sd, "%s/%s", c->dir, ents[i]->d_name);
        snprintf(label, sizeof label, "%s: ", ents[i]->d_name);
        if (v == 'P' && is_dir(sd)) {
            v = run_set(o, be, devidx, model, sd, label, msg, msz);
            sets++;
        }
        free(ents[i]);
    }
    free(ents);
    if (!sets)
        v = run_set(o, be, devidx, model, c->dir, "", msg, msz);
    else if (v == 'P')
        snprintf(msg, msz, "%d data set%s", sets, sets == 1 ? "" : "s");
    return v;
}

/* ------------------------------------------------------ scheduling (parent) */

typedef struct slot {
    int idx; /* case, or -1 when free */
    pid_t pid;
    int rfd, lfd; /* verdict pipe, log pipe (-1 once at EOF) */
    double start, deadline;
    int timed_out;
    sbuf res;
} slot;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static int start_case(const topts *o, tcase *c, int idx, slot *s)
{
    int rp[2], lp[2];
    if (pipe2(rp, O_CLOEXEC))
        return -1;
    if (pipe2(lp, O_CLOEXEC)) {
        close(rp[0]);
        close(rp[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(rp[0]), close(rp[1]), close(lp[0]), close(lp[1]);
        return -1;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        dup2(lp[1], 1);
        dup2(lp[1], 2);
        close(rp[0]);
        close(lp[0]);
        omp_set_num_threads((int)o->threads);
        char msg[2400] = "";
        char v = run_case(o, c, msg, sizeof msg);
        fflush(stdout);
        fflush(stderr);
        char out[2600];
        int n = snprintf(out, sizeof out, "%c%s", v, msg);
        write_all(rp[1], out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1);
        _exit(0);
    }
    close(rp[1]);
    close(lp[1]);
    memset(s, 0, sizeof *s);
    *s = (slot){.idx = idx, .pid = pid, .rfd = rp[0], .lfd = lp[0], .start = ft_now()};
    s->deadline = o->timeout > 0 ? s->start + o->timeout : INFINITY;
    return 0;
}

enum { LOG_CAP = 16384 };

/* Read what a pipe has; at EOF close it. */
static void drain(int *fd, sbuf *b, size_t cap)
{
    char buf[4096];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    if (b->len < cap)
        sb_add(b, buf, (size_t)n < cap - b->len ? (size_t)n : cap - b->len);
}

/* Messages and logs quote files that may hold any bytes: what is not valid
 * UTF-8, and control characters but tab and newline, become '?', so that
 * the report and the XML stay valid text. */
static void clean_text(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (p && *p) {
        int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 && *p >= 0xC2 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 && *p <= 0xF4 ? 4 : 0;
        for (int k = 1; k < n; k++)
            if ((p[k] & 0xC0) != 0x80)
                n = 0;
        if (n == 1 && *p < 0x20 && *p != '\n' && *p != '\t')
            n = 0;
        if (!n) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

static char *first_line(const char *s)
{
    while (s && (*s == '\n' || *s == ' '))
        s++;
    if (!s || !*s)
        return NULL;
    size_t n = strcspn(s, "\n");
    return strndup(s, n);
}

/* The verdict of a finished child. */
static void finish_case(const topts *o, tcase *c, slot *s, int wstatus)
{
    c->secs = ft_now() - s->start;
    char buf[3000];
    if (s->timed_out) {
        snprintf(buf, sizeof buf, "timed out after %g s (--timeout); the case was killed", o->timeout);
        c->status = 'F';
    } else if (s->res.len && !s->res.oom && strchr("PFU", s->res.s[0])) {
        c->status = s->res.s[0];
        snprintf(buf, sizeof buf, "%s", s->res.s + 1);
    } else {
        char *l = first_line(c->log.s);
        if (WIFSIGNALED(wstatus))
            snprintf(buf, sizeof buf, "crashed: killed by signal %d (%s)%s%s", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)),
                     l ? "; its last words: " : "", l ? l : "");
        else
            snprintf(buf, sizeof buf, "crashed: exited with status %d before a verdict%s%s", WEXITSTATUS(wstatus),
                     l ? "; its last words: " : "", l ? l : "");
        free(l);
        c->status = 'F';
    }
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    clean_text(buf);
    clean_text(c->log.s);
    c->msg = ft_strdup(buf);
    free(s->res.s);
    s->idx = -1;
}

static void print_case(const topts *o, const tcase *c)
{
    if (o->quiet && c->status != 'F')
        return;
    const char *word = c->status == 'P' ? "PASS" : c->status == 'U' ? "UNSUPPORTED" : "FAIL";
    if (c->status == 'P')
        printf("%-11s %s (%.1f ms)\n", word, c->name, c->secs * 1e3);
    else
        printf("%-11s %s (%.1f ms): %s\n", word, c->name, c->secs * 1e3, c->msg ? c->msg : "");
    if (o->verbose && c->log.len) {
        const char *p = c->log.s;
        while (*p) {
            size_t n = strcspn(p, "\n");
            printf("    %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}

static int run_all(const topts *o, caselist *L)
{
    slot *sl = ft_calloc((size_t)o->jobs, sizeof *sl);
    struct pollfd *pf = ft_calloc((size_t)o->jobs * 2, sizeof *pf);
    if (!sl || !pf) {
        free(sl);
        free(pf);
        fprintf(stderr, "%s: error: test: out of memory\n", prog);
        return FT_ERUNTIME;
    }
    for (long j = 0; j < o->jobs; j++)
        sl[j].idx = -1;
    int next = 0, done = 0, printed = 0, running = 0;
    while (done < L->n) {
        for (long j = 0; j < o->jobs && next < L->n; j++)
            if (sl[j].idx < 0) {
                if (start_case(o, &L->c[next], next, &sl[j])) {
                    if (!running) {
                        fprintf(stderr, "%s: error: test: cannot start a process for %s: %s\n", prog, L->c[next].name,
                                strerror(errno));
                        free(sl);
                        free(pf);
                        return FT_ERUNTIME;
                    }
                    break; /* try again once a running case is done */
                }
                next++;
                running++;
            }
        int np = 0;
        double now = ft_now(), wait_s = 1.0;
        for (long j = 0; j < o->jobs; j++) {
            slot *s = &sl[j];
            if (s->idx < 0)
                continue;
            if (s->rfd >= 0)
                pf[np++] = (struct pollfd){.fd = s->rfd, .events = POLLIN};
            if (s->lfd >= 0)
                pf[np++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
            if (!s->timed_out && s->deadline - now < wait_s)
                wait_s = s->deadline - now;
        }
        if (np)
            poll(pf, (nfds_t)np, wait_s > 0 ? (int)(wait_s * 1000) + 1 : 0);
        now = ft_now();
        for (long j = 0; j < o->jobs; j++) {
            slot *s = &sl[j];
            if (s->idx < 0)
                continue;
            tcase *c = &L->c[s->idx];
            for (int k = 0; k < np; k++) {
                if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                if (pf[k].fd == s->rfd)
                    drain(&s->rfd, &s->res, 4096);
                else if (pf[k].fd == s->lfd)
                    drain(&s->lfd, &c->log, LOG_CAP);
            }
            if (!s->timed_out && now > s->deadline) {
                kill(s->pid, SIGKILL);
                s->timed_out = 1;
            }
            if (s->rfd < 0 && s->lfd < 0) {
                int ws = 0;
                while (waitpid(s->pid, &ws, 0) < 0 && errno == EINTR)
                    ;
                finish_case(o, c, s, ws);
                done++;
                running--;
            }
        }
        while (printed < L->n && L->c[printed].status) {
            print_case(o, &L->c[printed++]);
            fflush(stdout);
        }
    }
    free(sl);
    free(pf);
    return 0;
}

/* ------------------------------------------------------------- reports */

static void xml_textn(sbuf *b, const char *s, size_t n)
{
    for (const char *e = s ? s + n : s; s && s < e && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&')
            sb_add(b, "&amp;", 5);
        else if (ch == '<')
            sb_add(b, "&lt;", 4);
        else if (ch == '>')
            sb_add(b, "&gt;", 4);
        else if (ch == '"')
            sb_add(b, "&quot;", 6);
        else if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r')
            sb_add(b, "?", 1); /* not allowed in XML 1.0 */
        else
            sb_add(b, s, 1);
    }
}

static void xml_text(sbuf *b, const char *s) { xml_textn(b, s, s ? strlen(s) : 0); }

/* JUnit XML: one <testsuite> per DIR operand, one <testcase> per case; a
 * failure has <failure>, an unsupported case <skipped>, each with the message
 * (and the case's log in <system-err>). */
static int write_junit(const topts *o, const caselist *L, char **dirs, int n_dirs, double total_s)
{
    sbuf b = {0};
    int all[3] = {0};
    for (int i = 0; i < L->n; i++)
        all[L->c[i].status == 'F' ? 1 : L->c[i].status == 'U' ? 2 : 0]++;
    char ts[64];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&now));
    sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ftrun test\" tests=\"%d\" failures=\"%d\" "
              "errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", L->n, all[1], all[2], total_s);
    for (int d = 0; d < n_dirs; d++) {
        int cnt[3] = {0}, n = 0;
        double secs = 0;
        for (int i = 0; i < L->n; i++)
            if (L->c[i].suite == d) {
                cnt[L->c[i].status == 'F' ? 1 : L->c[i].status == 'U' ? 2 : 0]++;
                secs += L->c[i].secs;
                n++;
            }
        sb_add(&b, "  <testsuite name=\"", 19);
        xml_text(&b, dirs[d]);
        sb_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n", n, cnt[1],
                  cnt[2], secs, ts);
        for (int i = 0; i < L->n; i++) {
            const tcase *c = &L->c[i];
            if (c->suite != d)
                continue;
            const char *slash = strchr(c->name, '/');
            sb_add(&b, "    <testcase classname=\"", 25);
            xml_textn(&b, c->name, slash ? (size_t)(slash - c->name) : strlen(c->name));
            sb_add(&b, "\" name=\"", 8);
            xml_text(&b, slash ? slash + 1 : c->name);
            sb_printf(&b, "\" time=\"%.3f\"", c->secs);
            if (c->status == 'P') {
                sb_add(&b, "/>\n", 3);
                continue;
            }
            sb_add(&b, ">\n      <", 9);
            sb_add(&b, c->status == 'F' ? "failure" : "skipped", 7);
            sb_add(&b, " message=\"", 10);
            if (c->status == 'U')
                sb_add(&b, "unsupported: ", 13);
            xml_text(&b, c->msg);
            sb_add(&b, "\"", 1);
            if (c->status == 'F') {
                sb_printf(&b, " type=\"%s\">", !strncmp(c->msg, "crashed", 7) ? "crash"
                                                : !strncmp(c->msg, "timed out", 9) ? "timeout" : "failure");
                xml_text(&b, c->msg);
                sb_add(&b, "</failure>\n", 11);
            } else {
                sb_add(&b, "/>\n", 3);
            }
            if (c->log.len) {
                sb_add(&b, "      <system-err>", 18);
                xml_text(&b, c->log.s);
                sb_add(&b, "</system-err>\n", 14);
            }
            sb_add(&b, "    </testcase>\n", 16);
        }
        sb_add(&b, "  </testsuite>\n", 15);
    }
    sb_add(&b, "</testsuites>\n", 14);
    ft_error err = {0};
    ft_status st = b.oom ? ft_err(&err, FT_ERUNTIME, "out of memory") : FT_OK;
    /* written under a temporary name and renamed: never a partial file */
    char *path = ft_strdup(o->junit), *slash = path ? strrchr(path, '/') : NULL;
    ft_outset outs = {0};
    if (!path)
        st = ft_err(&err, FT_ERUNTIME, "out of memory");
    if (!st) {
        const char *dir = slash ? (slash == path ? "/" : (*slash = 0, path)) : ".";
        const char *fname = slash ? slash + 1 : path;
        st = !*fname ? ft_err(&err, FT_EUSAGE, "no file name") : ft_mkdirs(dir, &err);
        if (!st)
            st = ft_outset_text(&outs, dir, fname, b.s, &err);
        if (!st)
            st = ft_outset_commit(&outs, &err);
        else
            ft_outset_abort(&outs);
    }
    free(path);
    free(b.s);
    if (st) {
        fprintf(stderr, "%s: error: test: --junit %s: %s\n", prog, o->junit, err.msg);
        return FT_ERUNTIME;
    }
    return 0;
}

/* ------------------------------------------------------------- command */

/* A number >= lo (an integer when whole is set). */
static int number(const char *opt, const char *s, double lo, int whole, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || (whole && (v != floor(v) || v > 1e6)))
        return usage_error("option %s: '%s' is not %s >= %g", opt, s, whole ? "an integer" : "a finite number", lo);
    *out = v;
    return 0;
}

enum { OPT_RTOL = 256, OPT_ATOL, OPT_JUNIT, OPT_TIMEOUT, OPT_THREADS };

/* Runs the device check in a child, so the parent never opens a CUDA context
 * it would hand to forked children. */
static int probe_device(const char *dev)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return 0; /* each case will say it */
    if (pid == 0) {
        const ft_backend *be;
        int idx;
        char name[32];
        _exit(pick_device(dev, 1, 0, &be, &idx, name, sizeof name));
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : FT_ERUNTIME;
}

int ft_cmd_test(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"device", required_argument, 0, 'd'}, {"jobs", required_argument, 0, 'j'},
        {"rtol", required_argument, 0, OPT_RTOL}, {"atol", required_argument, 0, OPT_ATOL},
        {"junit", required_argument, 0, OPT_JUNIT}, {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"threads", required_argument, 0, OPT_THREADS}, {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    topts o = {.timeout = 300, .jobs = cores};
    int have_threads = 0, ch;
    double v;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, ":d:j:qvh", lopts, NULL)) != -1) {
        switch (ch) {
        case 'd': o.device = optarg; break;
        case 'j': if (number("--jobs", optarg, 1, 1, &v)) return FT_EUSAGE; o.jobs = (long)v; break;
        case OPT_THREADS: if (number("--threads", optarg, 1, 1, &v)) return FT_EUSAGE; o.threads = (long)v; have_threads = 1; break;
        case OPT_RTOL: if (number("--rtol", optarg, 0, 0, &o.rtol)) return FT_EUSAGE; o.have_rtol = 1; break;
        case OPT_ATOL: if (number("--atol", optarg, 0, 0, &o.atol)) return FT_EUSAGE; o.have_atol = 1; break;
        case OPT_TIMEOUT: if (number("--timeout", optarg, 0, 0, &o.timeout)) return FT_EUSAGE; break;
        case OPT_JUNIT:
            if (!*optarg)
                return usage_error("option --junit needs a file name");
            o.junit = optarg;
            break;
        case 'q': o.quiet = 1; break;
        case 'v': o.verbose = 1; break;
        case 'h':
            printf("Usage: ftrun test DIR... [-d DEV] [-j N] [--junit FILE] [--timeout SEC] [--rtol R] [--atol A] [-q|-v]\n"
                   "Runs test folders (ONNX backend-test layout or ftrun's own); see TEST FOLDERS in ftrun(1).\n");
            return 0;
        case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
        default: return usage_error("option '%s' does not apply to 'test'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error("'test' needs at least one DIR");
    if (!have_threads)
        o.threads = cores / o.jobs > 1 ? cores / o.jobs : 1;
    if (o.device && strcmp(o.device, "auto")) {
        int rc = probe_device(o.device);
        if (rc)
            return rc;
    }
    caselist L = {0};
    int n_dirs = argc - optind, rc = 0;
    char **dirs = argv + optind;
    char **suite = ft_calloc((size_t)n_dirs, sizeof *suite);
    for (int d = 0; suite && d < n_dirs && !rc; d++) {
        size_t len = strlen(dirs[d]);
        while (len > 1 && dirs[d][len - 1] == '/')
            dirs[d][--len] = 0;
        const char *base = strrchr(dirs[d], '/');
        suite[d] = (char *)(base && base[1] ? base + 1 : dirs[d]);
        int before = L.n;
        if (!is_dir(dirs[d])) {
            fprintf(stderr, "%s: error: test: %s is not a test folder: %s\n", prog, dirs[d],
                    access(dirs[d], F_OK) ? strerror(errno) : "not a directory");
            rc = FT_EGRAPH;
        } else if (collect(&L, dirs[d], suite[d], d, 0)) {
            fprintf(stderr, "%s: error: test: out of memory\n", prog);
            rc = FT_ERUNTIME;
        } else if (L.n == before) {
            fprintf(stderr, "%s: error: test: %s is not a test folder: no model.onnx, graph.json or graph.ftg in it or in "
                    "its subfolders (see TEST FOLDERS in ftrun(1))\n", prog, dirs[d]);
            rc = FT_EGRAPH;
        }
    }
    if (!suite)
        rc = FT_ERUNTIME;
    double t0 = ft_now();
    if (!rc)
        rc = run_all(&o, &L);
    double total = ft_now() - t0;
    int cnt[3] = {0};
    for (int i = 0; i < L.n; i++)
        cnt[L.c[i].status == 'F' ? 1 : L.c[i].status == 'U' ? 2 : 0]++;
    if (!rc) {
        printf("%d passed, %d failed, %d unsupported (%d case%s in %.1f s, -j %ld)\n", cnt[0], cnt[1], cnt[2], L.n,
               L.n == 1 ? "" : "s", total, o.jobs);
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "%s: error: test: cannot write to standard output\n", prog);
            rc = FT_ERUNTIME;
        }
    }
    if (!rc && o.junit)
        rc = write_junit(&o, &L, suite, n_dirs, total);
    if (!rc && cnt[1])
        rc = FT_EMISMATCH;
    for (int i = 0; i < L.n; i++) {
        free(L.c[i].dir);
        free(L.c[i].name);
        free(L.c[i].msg);
        free(L.c[i].log.s);
    }
    free(L.c);
    free(suite);
    return rc;
}
