/* `ftrun test`: one case, run in a worker process (see test.h). A case
 * folder's data sets are read, the model loaded and run once per data set,
 * and every output compared with its expected value (with the tolerance of
 * the case's tolerance.json, when it has one). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../graph/graph.h"
#include "../io/npy.h"
#include "../io/npz.h"
#include "../onnx/onnx.h"
#include "../onnx/onnx_inputs.h"
#include "../pipeline/pipeline.h"
#include "compare.h"
#include "outfile.h"
#include "report.h"
#include "cliutil.h"
#include "test_int.h"
#include "../pipeline/arrays.h"
#include "expect.h"

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The ONNX importer's refusal of a model it does not support (exit status
 * 3): "FILE: the model uses N things ftrun does not support (nothing was
 * run):" and one line per op, attribute or dtype (src/onnx/onnx_import.h,
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
    ft_free_strs(d->named_in, d->n_named_in);
    ft_free_strs(d->named_out, d->n_named_out);
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

static ft_status dataset_scan(const char *dir, dataset *d, int need_expected, ft_error *err)
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
    if (!st && need_expected && !d->n_pos_out && !d->n_named_out)
        st = ft_err(err, FT_EGRAPH, "%s: no expected values (output_K.pb/.npy or expected/NAME.npy)", dir);
    return st;
}

/* An input file (its array as the import's bindings read it, else read
 * now), as the dtype and shape of input t (cleared on failure). */
static ft_status read_input(ft_values *v, const char *path, const ft_tensor *t, ft_npy *a, ft_error *err)
{
    ft_status st = ft_values_take(v, path, a) ? ft_array_read(path, NULL, a, err) : FT_OK;
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (st)
        return st;
    if (ft_npy_to_dtype(a, t->dtype) != 0)
        st = ft_err(err, FT_EGRAPH, "%s holds %s but input '%s' is %s", path, ft_dtype_name(a->dtype), t->name,
                    ft_dtype_name(t->dtype));
    else if (!ft_shape_fits(t, &a->shape))
        st = ft_err(err, FT_EGRAPH, "%s has shape %s but input '%s' has shape %s", path, ft_shape_str(&a->shape, s1),
                    t->name, ft_shape_str(&t->shape, s2));
    if (st)
        ft_npy_clear(a);
    return st;
}

/* Give the graph its inputs from the data set. For an ONNX model input_K is
 * its K-th graph input without an initializer (onames, read from the model);
 * otherwise the K-th graph input without a value of its own, or the K-th
 * input when the data set has one file per graph input. */
static ft_status feed_inputs(ft_graph *g, const dataset *d, char **onames, ft_values *v, ft_error *err)
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
                    d->n_pos_in, d->n_pos_in - 1, n_free, n_free == 1 ? "" : "s", ft_tensor_list(g, free_in, n_free, list, sizeof list));
    for (int k = 0; !st && k < d->n_pos_in + d->n_named_in; k++) {
        const char *path = k < d->n_pos_in ? d->pos_in[k] : d->named_in[k - d->n_pos_in];
        int ti = k < d->n_pos_in && !onames ? free_in[k] : -1;
        if (k < d->n_pos_in && onames) {
            ti = ft_graph_find(g, onames[k]);
            if (ti < 0 || !(g->tensors[ti].flags & FT_TF_INPUT))
                continue; /* the import used its value and no node reads it at run time */
        }
        if (ti < 0) {
            int j = ft_file_tensor(g, g->inputs, g->n_inputs, path);
            if (j < 0) {
                st = ft_err(err, FT_EGRAPH, "%s names no input of the graph (its inputs: %s)", path,
                            ft_tensor_list(g, g->inputs, g->n_inputs, list, sizeof list));
                break;
            }
            ti = g->inputs[j];
        }
        ft_npy a;
        if (!(st = read_input(v, path, &g->tensors[ti], &a, err))) {
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

/* For an ONNX model (onames: its inputs without an initializer, n >= 0;
 * kinds: tensor, sequence or optional, onnx_inputs.h), every input file
 * read before the import and given to it as a shape and value binding: the
 * import takes the values of parameter inputs (Reshape's shape, Slice's
 * starts, ...) at load time, and the length and tensors of a sequence or
 * optional input. Also used with the names of the inputs/NAME files of a
 * JSON or binary graph whose named dims need them (kinds NULL). */
static ft_status bind_inputs(const dataset *d, char **onames, const int *kinds, int n, ft_values *v, ft_error *err)
{
    if (n < 0)
        return FT_OK;
    if (d->n_pos_in > n)
        return ft_err(err, FT_EGRAPH, "%d input files (input_0 to input_%d) but the model has %d input%s without an initializer",
                      d->n_pos_in, d->n_pos_in - 1, n, n == 1 ? "" : "s");
    for (int k = 0; k < d->n_pos_in + d->n_named_in; k++) {
        const char *path = k < d->n_pos_in ? d->pos_in[k] : d->named_in[k - d->n_pos_in], *name = NULL;
        int kind = 0;
        if (k < d->n_pos_in) {
            name = onames[k];
            kind = kinds ? kinds[k] : 0;
        } else {
            const char *f = strrchr(path, '/') + 1;
            size_t stem;
            has_data_ext(f, &stem);
            for (int i = 0; i < n && !name; i++)
                if (strlen(onames[i]) == stem && !strncmp(onames[i], f, stem)) {
                    name = onames[i];
                    kind = kinds ? kinds[i] : 0;
                }
            if (!name)
                continue; /* feed_inputs names the file */
        }
        if (kind) { /* a sequence's or optional's file: an error in it is the case's failure */
            ft_status st = ft_values_read_pb(v, name, path, kind == 2, err);
            if (st)
                return st;
            continue;
        }
        ft_npy a;
        ft_error e2 = {0};
        if (ft_array_read(path, NULL, &a, &e2))
            continue; /* reported by feed_inputs, unless the model is refused first */
        if (ft_values_add_array(v, name, path, &a, err)) {
            ft_npy_clear(&a);
            return err->code;
        }
    }
    return FT_OK;
}

/* --save-outputs: every output of the run as dir/NAME.npy (the names of
 * `ftrun run`'s files), written under temporary names and renamed together. */
static ft_status save_outputs(const ft_graph *g, const ft_run_result *res, const char *dir, ft_error *err)
{
    ft_outset outs = {0};
    ft_status st = ft_mkdirs(dir, err);
    for (int i = 0; !st && i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600];
        ft_sanitize_name(t->name, fname, sizeof fname - 8);
        strcat(fname, ".npy");
        st = ft_outset_npy(&outs, dir, fname, t->dtype, &res->output_shapes[i], res->outputs[i], err);
    }
    if (!st)
        st = ft_outset_commit(&outs, err);
    else
        ft_outset_abort(&outs);
    if (st) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        ft_err(err, st, "--save-outputs %s: %s", dir, why);
    }
    return st;
}

/* Run one data set; the verdict ('P', 'F', 'U') and a message. label: "" or
 * "test_data_set_N: ", the prefix of messages. */
static char run_set(const ft_test_opts *o, ft_test_dev *dev, const char *model, const char *setdir, const char *label,
                    const char *save, char *msg, size_t msz)
{
    const ft_backend *be = dev->be;
    ft_error err = {0};
    ft_graph *g = NULL;
    ft_pipeline p = {0};
    ft_run_result res = {0};
    ft_npy *exp = NULL;
    dataset d;
    memset(&d, 0, sizeof d);
    char verdict = 'F';
    char **onames = NULL, **stems = NULL;
    int n_onames = -1, n_stems = 0, *okinds = NULL;
    ft_values vals = {0};
    ft_load_opts lo = {.seed_override = -1};
    if (dataset_scan(setdir, &d, !save, &err) || ft_onnx_input_names(model, &onames, &okinds, &n_onames, &err) ||
        bind_inputs(&d, onames, okinds, n_onames, &vals, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    ft_values_load_opts(&vals, &lo);
    ft_status st = ft_graph_load(model, &lo, &g, &err);
    if (st && n_onames < 0 && d.n_named_in && strstr(err.msg, "is not known")) {
        /* a graph with named dims: bind them from the shapes of inputs/NAME
         * files (a file named exactly after its input) and load again */
        dataset dn = d;
        dn.n_pos_in = 0;
        if (!(stems = ft_calloc((size_t)d.n_named_in, sizeof *stems))) {
            snprintf(msg, msz, "out of memory");
            goto out;
        }
        for (n_stems = 0; n_stems < d.n_named_in; n_stems++) {
            const char *f = strrchr(d.named_in[n_stems], '/') + 1;
            size_t stem;
            has_data_ext(f, &stem);
            if (!(stems[n_stems] = strndup(f, stem))) {
                snprintf(msg, msz, "out of memory");
                goto out;
            }
        }
        ft_error e2 = {0};
        if (!bind_inputs(&dn, stems, NULL, n_stems, &vals, &e2)) {
            ft_values_load_opts(&vals, &lo);
            st = ft_graph_load(model, &lo, &g, &err);
        }
    }
    if (st && unsupported_reason(&err, model, msg, msz)) {
        verdict = 'U';
        goto out;
    }
    if (!st) {
        ft_pipeline_opts po = {.opt_level = o->opt_level};
        st = ft_pipeline_take(&p, g, &po, &err);
        g = p.g; /* NULL when that failed: the pipeline has freed it */
    }
    if (st) {
        snprintf(msg, msz, "%s", err.msg);
        goto out;
    }
    if (feed_inputs(g, &d, onames, &vals, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    exp = ft_calloc((size_t)(g->n_outputs ? g->n_outputs : 1), sizeof *exp);
    ft_expect_src es = {.pos = d.pos_out, .n_pos = d.n_pos_out, .named = d.named_out, .n_named = d.n_named_out, .need_all = !save};
    if (!exp || ft_expect_load(g, &es, exp, &err) || ft_pipeline_plan(&p, be, NULL, &err)) {
        snprintf(msg, msz, "%s%s", label, exp ? err.msg : "out of memory");
        goto out;
    }
    ft_backend_opts bo = {.device_index = dev->index, .threads = (int)o->threads};
    ft_exec_opts eo = {.iterations = 1, .threads = (int)o->threads};
    /* the worker's context, opened by its first case that runs */
    if (!dev->ctx && be->open(&bo, &dev->ctx, &err)) {
        dev->ctx = NULL;
        dev->retire = 1;
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    ft_pipeline_use(&p, dev->ctx);
    if (ft_pipeline_run(&p, &eo, &res, &err)) {
        /* a device or library failure may leave the context unusable: the
         * worker ends after this case and a new one takes the next */
        if (err.code == FT_ERUNTIME)
            dev->retire = 1;
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    if (save && save_outputs(g, &res, save, &err)) {
        snprintf(msg, msz, "%s%s", label, err.msg);
        goto out;
    }
    int bad = 0, checked = 0;
    double worst = -1;
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        /* --save-outputs: an output without an expected value is only saved; so
         * is one of no bytes at load (an empty .npy holds a shape, and a value
         * not given has none: calloc's rank 0 and no data) */
        if (!exp[i].data && !exp[i].shape.rank)
            continue;
        checked++;
        ft_tol tol = ft_tol_choose(t->dtype, o->have_rtol, o->rtol, o->have_atol, o->atol);
        ft_cmp cm;
        ft_compare_shaped(res.outputs[i], &res.output_shapes[i], exp[i].data, &exp[i].shape, t->dtype, tol, &cm);
        char line[1024];
        ft_cmp_str(&cm, t->dtype, &exp[i].shape, tol, line, sizeof line);
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
        if (save)
            snprintf(msg, msz, "%d output%s match, %d saved", checked, checked == 1 ? "" : "s", g->n_outputs);
        else
            snprintf(msg, msz, "%d output%s match", g->n_outputs, g->n_outputs == 1 ? "" : "s");
        verdict = 'P';
    }
out:
    if (exp)
        for (int i = 0; g && i < g->n_outputs; i++)
            ft_npy_clear(&exp[i]);
    free(exp);
    ft_run_result_free(&res);
    if (dev->retire && dev->ctx) {
        be->close(dev->ctx);
        dev->ctx = NULL;
    }
    if (p.g)
        ft_pipeline_free(&p);
    else
        ft_graph_free(g);
    dataset_free(&d);
    ft_values_free(&vals);
    if (onames)
        ft_free_strs(onames, n_onames);
    free(okinds);
    ft_free_strs(stems, n_stems);
    return verdict;
}

static int set_dirs(const struct dirent *e)
{
    return !strncmp(e->d_name, "test_data_set_", 14);
}

/* The case's tolerance.json, {"rtol": R, "atol": A} (either may be left
 * out): in place of the dtype defaults, unless --rtol / --atol are given.
 * 0 when there is none or it was read; -1 with the reason in msg. */
static int case_tolerance(ft_test_opts *o, const char *dir, char *msg, size_t msz)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/tolerance.json", dir);
    struct stat sb;
    if (stat(path, &sb))
        return 0;
    unsigned char *buf = NULL;
    size_t len = 0;
    ft_error err = {0};
    if (ft_read_file(path, &buf, &len, &err)) {
        snprintf(msg, msz, "%s", err.msg);
        return -1;
    }
    cJSON *doc = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    int rc = 0;
    if (!cJSON_IsObject(doc)) {
        snprintf(msg, msz, "%s: not a JSON object {\"rtol\": R, \"atol\": A}", path);
        rc = -1;
    }
    for (cJSON *it = doc && !rc ? doc->child : NULL; it && !rc; it = it->next) {
        int r = !strcmp(it->string, "rtol"), a = !strcmp(it->string, "atol");
        if (!r && !a) {
            snprintf(msg, msz, "%s: unknown key '%s' (only rtol and atol)", path, it->string);
            rc = -1;
        } else if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0) {
            snprintf(msg, msz, "%s: %s is not a finite number >= 0", path, it->string);
            rc = -1;
        } else if (r && !o->have_rtol) {
            o->rtol = it->valuedouble;
            o->have_rtol = 1;
        } else if (a && !o->have_atol) {
            o->atol = it->valuedouble;
            o->have_atol = 1;
        }
    }
    cJSON_Delete(doc);
    return rc;
}

/* A worker's work for one case: every data set of the case
 * (test_data_set_* folders, or the case folder itself when it has none).
 * Stops at the first that does not pass. */
char ft_test_run_case(const ft_test_opts *opts, ft_test_dev *dev, const char *dir, const char *save, char *msg, size_t msz)
{
    if (!dev->picked) {
        char devname[32];
        dev->picked = pick_device(opts->device, 1, 0, &dev->be, &dev->index, devname, sizeof devname) ? -1 : 1;
    }
    if (dev->picked < 0) {
        snprintf(msg, msz, "device %s is not usable", opts->device ? opts->device : "auto");
        return 'F';
    }
    ft_test_opts oc = *opts, *o = &oc;
    if (case_tolerance(o, dir, msg, msz))
        return 'F';
    char model[4200];
    ft_test_find_model(dir, model, sizeof model);
    struct dirent **ents;
    int n = scandir(dir, &ents, set_dirs, versionsort);
    if (n < 0) {
        snprintf(msg, msz, "%s: cannot list: %s", dir, strerror(errno));
        return 'F';
    }
    char v = 'P';
    int sets = 0;
    for (int i = 0; i < n; i++) {
        char sd[4200], label[300];
        snprintf(sd, sizeof sd, "%s/%s", dir, ents[i]->d_name);
        snprintf(label, sizeof label, "%s: ", ents[i]->d_name);
        if (v == 'P' && !dev->retire && is_dir(sd)) {
            char ss[4600];
            snprintf(ss, sizeof ss, "%s/%s", save ? save : "", ents[i]->d_name);
            v = run_set(o, dev, model, sd, label, save ? ss : NULL, msg, msz);
            sets++;
        }
        free(ents[i]);
    }
    free(ents);
    if (!sets)
        v = run_set(o, dev, model, dir, "", save, msg, msz);
    else if (v == 'P')
        snprintf(msg, msz, "%d data set%s", sets, sets == 1 ? "" : "s");
    return v;
}

void ft_test_dev_close(ft_test_dev *dev)
{
    if (dev->ctx)
        dev->be->close(dev->ctx);
    dev->ctx = NULL;
}
