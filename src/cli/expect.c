/* The expected values of a graph's outputs (expect.h): one loader for
 * `ftrun run --expect` and `ftrun test`. */
#include "expect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../io/npz.h"
#include "../pipeline/arrays.h"
#include "compare.h"

/* Output j's expected value a, read from path with status st: converted to
 * the output's dtype and checked against its shape. Every error names the
 * output and the file; a is cleared on failure. */
static ft_status take(const ft_graph *g, int j, const char *path, ft_status st, ft_npy *a, ft_error *err)
{
    const ft_tensor *t = &g->tensors[g->outputs[j]];
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (st)
        ft_err_prefix(err, "output '%s'", t->name);
    else if (ft_npy_to_dtype(a, t->dtype) != 0)
        st = ft_err(err, FT_EGRAPH, "output '%s' is %s but %s holds %s", t->name, ft_dtype_name(t->dtype), path,
                    ft_dtype_name(a->dtype));
    else if (!ft_shape_fits(t, &a->shape))
        st = ft_err(err, FT_EGRAPH, "output '%s' has shape %s but %s has shape %s", t->name, ft_shape_str(&t->shape, s1),
                    path, ft_shape_str(&a->shape, s2));
    if (st)
        ft_npy_clear(a);
    return st;
}

/* --expect PATH: a folder holds NAME.pb or NAME.npy per output; a file is an
 * .npz (member NAME.npy per output) or a .npy / .pb (graphs of one output),
 * told apart by their first bytes. A path that does not exist is a file when
 * it ends in .npy, .npz or .pb, else a folder. */
static ft_status load_path(const ft_graph *g, const char *src, ft_npy *exp, ft_error *err)
{
    size_t len = strlen(src);
    struct stat sb;
    int exists = stat(src, &sb) == 0;
    int is_file = exists ? !S_ISDIR(sb.st_mode)
                         : len > 4 && (!strcmp(src + len - 4, ".npy") || !strcmp(src + len - 4, ".npz") ||
                                       !strcmp(src + len - 3, ".pb"));
    ft_npz z = {0};
    int is_npz = 0;
    if (is_file && exists) {
        FILE *f = fopen(src, "rb");
        unsigned char head[4] = {0};
        size_t n = f ? fread(head, 1, sizeof head, f) : 0;
        int e = !f || ferror(f) ? errno : 0;
        if (f)
            fclose(f);
        if (e)
            return ft_err(err, e == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot read: %s", src, strerror(e));
        is_npz = ft_npz_is_npz(head, n);
    }
    if (is_npz) {
        ft_status st = ft_npz_open(src, &z, err);
        if (st)
            return st;
    } else if (is_file && g->n_outputs != 1) {
        return ft_err(err, FT_EGRAPH,
                      "%s: a single .npy file can only check a graph with one output (this graph has %d); pass an .npz file or a directory",
                      src, g->n_outputs);
    }
    ft_status st = FT_OK;
    for (int i = 0; i < g->n_outputs && !st; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600], path[4200];
        ft_sanitize_name(t->name, fname, sizeof fname);
        if (is_npz) {
            int k = ft_npz_find(&z, t->name);
            if (k < 0) {
                char list[1024];
                st = ft_err(err, FT_EGRAPH, "output '%s': %s has no member %s.npy (members: %s)", t->name, src, fname,
                            ft_npz_names(&z, list, sizeof list));
                break;
            }
            snprintf(path, sizeof path, "%s (member %s.npy)", src, z.e[k].name);
            st = take(g, i, path, ft_npz_read(&z, k, &exp[i], err), &exp[i], err);
            continue;
        }
        if (is_file)
            snprintf(path, sizeof path, "%s", src);
        else {
            snprintf(path, sizeof path, "%s/%s.pb", src, fname);
            if (access(path, F_OK) != 0)
                snprintf(path, sizeof path, "%s/%s.npy", src, fname);
        }
        st = take(g, i, path, ft_array_read(path, NULL, &exp[i], err), &exp[i], err);
    }
    ft_npz_close(&z);
    return st;
}

/* A sequence or optional output's expected value (group gr, graph.h): path
 * is a SequenceProto or OptionalProto; its tensors go to the group's
 * outputs and its length to NAME.len. */
static ft_status load_group(const ft_graph *g, const ft_out_group *gr, const char *path, ft_npy *exp, ft_error *err)
{
    ft_npy *v = NULL;
    int count = 0;
    ft_status st = ft_array_read_values(path, gr->kind == FT_GROUP_OPTIONAL, &v, &count, err);
    if (st) {
        ft_err_prefix(err, "output '%s'", gr->name);
        return st;
    }
    int n = count < 0 ? 0 : count;
    if (n != gr->n)
        st = ft_err(err, FT_EGRAPH, "output '%s' is %s of %d tensor%s; %s holds %d%s", gr->name,
                    gr->kind == FT_GROUP_OPTIONAL ? "an optional" : "a sequence", gr->n, gr->n == 1 ? "" : "s", path, n,
                    count < 0 ? " (an empty optional)" : "");
    for (int i = 0; i < n; i++) {
        if (!st && !(st = take(g, gr->first + i, path, FT_OK, &v[i], err)))
            exp[gr->first + i] = v[i];
        else
            ft_npy_clear(&v[i]);
    }
    free(v);
    ft_npy *l = &exp[gr->first + gr->n];
    if (!st && !(l->data = ft_malloc(sizeof(int64_t))))
        st = ft_err(err, FT_ERUNTIME, "out of memory");
    if (!st) {
        *(int64_t *)l->data = n;
        l->dtype = FT_I64;
        l->nbytes = sizeof(int64_t);
    }
    return st;
}

int ft_file_tensor(const ft_graph *g, const int *list, int n, const char *path)
{
    const char *f = strrchr(path, '/');
    f = f ? f + 1 : path;
    size_t stem = strlen(f);
    if (stem > 3 && !strcmp(f + stem - 3, ".pb"))
        stem -= 3;
    else if (stem > 4 && !strcmp(f + stem - 4, ".npy"))
        stem -= 4;
    for (int i = 0; i < n; i++) {
        const char *tn = g->tensors[list[i]].name;
        char san[600];
        ft_sanitize_name(tn, san, sizeof san);
        if ((strlen(tn) == stem && !strncmp(tn, f, stem)) || (strlen(san) == stem && !strncmp(san, f, stem)))
            return i;
    }
    return -1;
}

const char *ft_tensor_list(const ft_graph *g, const int *list, int n, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len + 64 < sz; i++)
        len += (size_t)snprintf(buf + len, sz - len, "%s'%s'", i ? ", " : "", g->tensors[list[i]].name);
    return n ? buf : "none";
}

/* A data set's files: output_K is the K-th output (the K-th ONNX output, a
 * group of graph outputs, when the graph has groups); expected/NAME the
 * output it names. */
static ft_status load_files(const ft_graph *g, const ft_expect_src *s, ft_npy *exp, ft_error *err)
{
    char list[1024];
    int n_pos = g->n_groups ? g->n_groups : g->n_outputs;
    if (s->n_pos > n_pos)
        return ft_err(err, FT_EGRAPH, "%d expected outputs (output_0 to output_%d) but the graph has %d (%s)", s->n_pos,
                      s->n_pos - 1, n_pos, ft_tensor_list(g, g->outputs, g->n_outputs, list, sizeof list));
    ft_status st = FT_OK;
    for (int k = 0; !st && k < s->n_pos + s->n_named; k++) {
        const char *path = k < s->n_pos ? s->pos[k] : s->named[k - s->n_pos];
        const ft_out_group *gr = k < s->n_pos && g->n_groups ? &g->groups[k] : NULL;
        if (gr && gr->kind != FT_GROUP_TENSOR) {
            st = load_group(g, gr, path, exp, err);
            continue;
        }
        int j = gr ? gr->first : k < s->n_pos ? k : ft_file_tensor(g, g->outputs, g->n_outputs, path);
        if (j < 0)
            return ft_err(err, FT_EGRAPH, "%s names no output of the graph (its outputs: %s)", path,
                          ft_tensor_list(g, g->outputs, g->n_outputs, list, sizeof list));
        if (exp[j].data)
            return ft_err(err, FT_EGRAPH, "%s: a second expected value for output '%s'", path, g->tensors[g->outputs[j]].name);
        st = take(g, j, path, ft_array_read(path, NULL, &exp[j], err), &exp[j], err);
    }
    for (int j = 0; !st && j < g->n_outputs; j++)
        if (s->need_all && !exp[j].data && ft_tensor_bytes(&g->tensors[g->outputs[j]]))
            st = ft_err(err, FT_EGRAPH, "no expected value for output '%s' (output_%d or expected/NAME)",
                        g->tensors[g->outputs[j]].name, j);
    return st;
}

ft_status ft_expect_load(const ft_graph *g, const ft_expect_src *src, ft_npy *exp, ft_error *err)
{
    return src->path ? load_path(g, src->path, exp, err) : load_files(g, src, exp, err);
}
