/* Writing a loaded graph as an ftrun graph (convert.h): the JSON + .npy
 * writer shared by `unpack` and `convert`, and `convert` itself. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "report.h"

typedef struct {
    char **fname; /* per tensor: its "file" in the document, or NULL */
} files_ctx;

static int fill_file(void *ctx, const ft_graph *g, int tensor, struct cJSON *decl, ft_error *err)
{
    const files_ctx *u = ctx;
    if (!cJSON_AddStringToObject(decl, "file", u->fname[tensor])) {
        ft_err(err, FT_ERUNTIME, "out of memory");
        return -1;
    }
    return 0;
}

ft_status ft_write_json_graph(const ft_graph *g, const char *doc, size_t len, const char *dir, const char *json_name,
                              const char *subdir, int *files, ft_error *err)
{
    char *json = NULL;
    ft_outset outs = {0};
    *files = 0;
    files_ctx u = {ft_calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof(char *))};
    struct ft_strmap *used = ft_strmap_new();
    ft_status st = !u.fname || !used ? ft_err(err, FT_ERUNTIME, "out of memory") : FT_OK;
    /* one file per value, named after the tensor; names equal after
     * sanitising get a numeric suffix */
    for (int i = 0; i < g->n_tensors && !st; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (!(t->flags & FT_TF_VALUE) || !(t->flags & FT_TF_DECLARED))
            continue;
        char base[520], name[1200];
        ft_sanitize_name(t->name, base, sizeof base);
        snprintf(name, sizeof name, "%s%s.npy", subdir, base);
        for (int k = 2; ft_strmap_get(used, name) >= 0 || !strcmp(name, json_name); k++)
            snprintf(name, sizeof name, "%s%s_%d.npy", subdir, base, k);
        if (ft_strmap_put(used, name, i) || !(u.fname[i] = ft_strdup(name)))
            st = ft_err(err, FT_ERUNTIME, "out of memory");
    }
    if (!st && !(json = ft_graph_doc_rewrite(g, doc, len, fill_file, &u, 1, err)))
        st = err->code ? err->code : FT_ERUNTIME;
    char sub[4200];
    size_t sl = strlen(subdir);
    snprintf(sub, sizeof sub, "%s%s%.*s", dir, sl ? "/" : "", sl ? (int)sl - 1 : 0, subdir);
    if (!st)
        st = ft_mkdirs(sub, err);
    for (int i = 0; i < g->n_tensors && !st; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (u.fname[i] && !(st = ft_outset_npy(&outs, sub, u.fname[i] + sl, t->dtype, &t->shape, t->value, err)))
            (*files)++;
    }
    if (!st) {
        size_t jl = strlen(json);
        char *text = ft_malloc(jl + 2);
        if (!text) {
            st = ft_err(err, FT_ERUNTIME, "out of memory");
        } else {
            memcpy(text, json, jl);
            memcpy(text + jl, "\n", 2);
            st = ft_outset_text(&outs, dir, json_name, text, err);
            free(text);
        }
    }
    if (!st)
        st = ft_outset_commit(&outs, err);
    else
        ft_outset_abort(&outs);
    for (int i = 0; u.fname && i < g->n_tensors; i++)
        free(u.fname[i]);
    free(u.fname);
    ft_strmap_free(used);
    free(json);
    return st;
}

int ft_convert_kind(const char *path)
{
    size_t n = strlen(path);
    if (n > 5 && !strcmp(path + n - 5, ".json"))
        return 1;
    if (n > 4 && !strcmp(path + n - 4, ".ftg"))
        return 2;
    return 0;
}

ft_status ft_convert(ft_graph *g, const char *out, int compress, const char *given, size_t len, ft_pack_stats *ps, int *files,
                     ft_error *err)
{
    /* graphs from other formats hold values the reader did not declare */
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].flags & FT_TF_VALUE)
            g->tensors[i].flags |= FT_TF_DECLARED;
    char *doc = given ? ft_strdup(given) : ft_graph_doc_make(g, &len, err);
    if (!doc)
        return given ? ft_err(err, FT_ERUNTIME, "out of memory") : err->code ? err->code : FT_ERUNTIME;
    ft_status st;
    *files = 0;
    const char *slash = strrchr(out, '/');
    const char *name = slash ? slash + 1 : out;
    char dir[4200], sub[1200];
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    else
        snprintf(dir, sizeof dir, ".");
    if (ft_convert_kind(out) == 2) {
        ft_outfile of = {0};
        st = ft_mkdirs(dir, err);
        if (!st)
            st = ft_outfile_open(&of, out, 0, err);
        if (!st && (st = ft_ftg_write(g, doc, len, of.f, out, compress, ps, err)))
            ft_outfile_abort(&of);
        else if (!st)
            st = ft_outfile_commit(&of, err);
    } else {
        /* OUT.json, its values in OUT.values/ beside it */
        snprintf(sub, sizeof sub, "%.*s.values/", (int)(strlen(name) - 5), name);
        st = ft_write_json_graph(g, doc, len, dir, name, sub, files, err);
    }
    free(doc);
    return st;
}
