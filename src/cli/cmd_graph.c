/* The commands that read a graph and describe or rewrite it: info, pack,
 * unpack, convert (cli.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/ftg.h"
#include "cli.h"
#include "convert.h"
#include "info.h"
#include "outfile.h"
#include "report.h"

static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
    if (b < 10240)
        snprintf(buf, n, "%llu bytes", (unsigned long long)b);
    else if (b < 10 * 1048576ull)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else if (b < 10 * 1073741824ull)
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
    return buf;
}

/* info and convert: the graph loaded with stand-in sizes for the input dims
 * nothing binds (graph.h, ft_unbound). *u1 gets the names; when there is
 * none, p2 stays empty and p1 is the graph as it is. Otherwise p2 holds the
 * same graph with the second stand-ins. plan: also plan both (info). A
 * stand-in can break a model whose sizes have limits (a context length, a
 * kernel larger than the input): then the next set of stand-ins is tried,
 * and when none loads, the error is that of the graph as given. */
static ft_status load_unbound(const ft_cli *c, int plan, ft_pipeline *p1, ft_pipeline *p2, ft_unbound *u1, ft_unbound *u2,
                              ft_error *err)
{
    memset(p2, 0, sizeof *p2);
    ft_error first = {0};
    for (int attempt = 0; attempt < 3; attempt++) {
        *u1 = (ft_unbound){.attempt = attempt, .run = 0};
        *u2 = (ft_unbound){.attempt = attempt, .run = 1};
        ft_error e = {0};
        ft_status st = cli_load_unbound(c, c->opt_level, u1, p1, &e);
        if (!st && u1->n == 0) { /* every dim bound: the graph as it is */
            if (plan && ((st = ft_bind_apply(c->bind, p1->g, 0, err)) || (st = ft_pipeline_plan(p1, NULL, NULL, err))))
                ft_pipeline_free(p1);
            return st;
        }
        if (st && u1->n == 0) { /* a failure no stand-in made */
            *err = e;
            return st;
        }
        if (!st)
            st = cli_load_unbound(c, c->opt_level, u2, p2, &e);
        if (!st && (p1->g->n_nodes != p2->g->n_nodes || p1->g->n_tensors != p2->g->n_tensors || u1->n != u2->n))
            st = ft_err(&e, FT_EGRAPH, "%s: the graph's nodes depend on the unbound dims", c->graph);
        for (int i = 0; !st && i < p1->g->n_nodes; i++)
            if (p1->g->nodes[i].op != p2->g->nodes[i].op)
                st = ft_err(&e, FT_EGRAPH, "%s: the graph's nodes depend on the unbound dims", c->graph);
        if (!st && plan)
            st = ft_pipeline_plan(p1, NULL, NULL, &e);
        if (!st && plan)
            st = ft_pipeline_plan(p2, NULL, NULL, &e);
        if (!st)
            return FT_OK;
        if (st == FT_ERUNTIME) {
            *err = e;
            return st;
        }
        if (!first.code)
            first = e;
        ft_pipeline_free(p1);
        ft_pipeline_free(p2);
    }
    /* no stand-ins load: the error of the graph as given, with the first
     * stand-ins' own */
    ft_status st = cli_load(c, c->opt_level, p1, err);
    if (!st) {
        ft_pipeline_free(p1);
        *err = first;
        return first.code;
    }
    char names[600] = "";
    size_t len = 0;
    ft_unbound u = {0};
    if (!cli_load_unbound(c, c->opt_level, &u, p1, &(ft_error){0}))
        ft_pipeline_free(p1);
    for (int k = 0; k < u.n && len < sizeof names - 300; k++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s=%lld", k ? ", " : "", u.name[k], (long long)u.value[k]);
    size_t ml = strlen(err->msg);
    snprintf(err->msg + ml, sizeof err->msg - ml, " (info and convert show unbound dims with stand-in sizes, but with %s "
             "it fails too: %.700s)", names, first.msg);
    return st;
}

int ft_cmd_info(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p, p2;
    ft_unbound u1, u2;
    /* the memory plan only: info describes a graph whichever device runs it */
    if (load_unbound(c, 1, &p, &p2, &u1, &u2, &err))
        return cli_fail(&err);
    ft_info_view v = {.g = p.g, .p = &p.plan, .opt = &p.opt};
    if (p2.g)
        v.g2 = p2.g, v.p2 = &p2.plan, v.u1 = &u1, v.u2 = &u2;
    int rc = 0;
    if (c->json) {
        char *text = ft_info_json(&v);
        if (text)
            fputs(text, stdout), fputc('\n', stdout);
        else
            rc = cli_fail(&(ft_error){FT_ERUNTIME, "out of memory writing the JSON description"});
        free(text);
    } else {
        ft_info_text(stdout, &v);
    }
    ft_pipeline_free(&p);
    ft_pipeline_free(&p2);
    return rc ? rc : cli_stdout_status(0);
}

int ft_cmd_pack(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    struct stat sb;
    if (stat(c->outdir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: error: pack -o %s: that is a directory; pack writes one file such as %s/model.ftg\n", ft_prog,
                c->outdir, c->outdir);
        return FT_ERUNTIME;
    }
    if (ft_outfile_check(c->outdir, FT_OUT_DASH, &err) || cli_load(c, c->opt_level, &p, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    char *doc = NULL;
    size_t len = 0;
    ft_pack_stats ps;
    ft_outfile of = {0};
    ft_status st = FT_OK;
    /* the file's own document, unless the graph was rewritten or the file is
     * not one (an ONNX model): then the document is made from the graph */
    if (g->about || p.opt.rewritten) {
        for (int i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & FT_TF_VALUE)
                g->tensors[i].flags |= FT_TF_DECLARED;
        if (!(doc = ft_graph_doc_make(g, &len, &err)))
            st = err.code ? err.code : FT_ERUNTIME;
    } else
        st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_outfile_open(&of, c->outdir, FT_OUT_DASH, &err);
    if (!st && (st = ft_ftg_write(g, doc, len, of.f, c->outdir, c->compress, &ps, &err)))
        ft_outfile_abort(&of);
    else if (!st)
        st = ft_outfile_commit(&of, &err);
    free(doc);
    ft_pipeline_free(&p);
    if (st)
        return cli_fail(&err);
    if (!c->quiet) {
        char a[32], b[32], f[32];
        fprintf(stderr, "%s: pack: wrote %s: %d blob%s (%d zlib), %s of values stored in %s; file %s\n", ft_prog,
                strcmp(c->outdir, "-") ? c->outdir : "standard output", ps.blobs,
                ps.blobs == 1 ? "" : "s", ps.zlib_blobs, human_bytes(ps.value_bytes, a, sizeof a),
                human_bytes(ps.stored_bytes, b, sizeof b), human_bytes(ps.file_bytes, f, sizeof f));
    }
    return 0;
}

int ft_cmd_unpack(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    /* the document as written: nothing to optimize */
    if (ft_outdir_check(c->outdir, NULL, 0, &err) || cli_load(c, 0, &p, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    char *doc = NULL;
    size_t len = 0;
    int files = 0;
    ft_status st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_write_json_graph(g, doc, len, c->outdir, "graph.json", "", &files, &err);
    free(doc);
    ft_pipeline_free(&p);
    if (st)
        return cli_fail(&err);
    if (!c->quiet)
        fprintf(stderr, "%s: unpack: wrote %s/graph.json and %d .npy file%s\n", ft_prog, c->outdir, files, files == 1 ? "" : "s");
    return 0;
}

/* convert with unbound dims: the documents of the two stand-in loads, walked
 * together. A number that differs is a dim of a declared shape that follows a
 * stand-in: it becomes the name ("batch"), or, in an output's shape (which
 * inference fills), the expression ("2*batch", or "?"), a name nothing binds.
 * Any other difference (a node's attribute, a value's shape or bytes) comes
 * from sizes the model computes from its input's shape and baked into the
 * graph: that graph cannot be written for every size. */
typedef struct sym_walk {
    const ft_unbound *u1, *u2;
    const ft_graph *g;
    char where[1200];
} sym_walk;

static int sym_merge(sym_walk *w, cJSON *a, const cJSON *b, const char *tensor, int in_shape, const char *path)
{
    if ((a->type & 0xFF) != (b->type & 0xFF)) {
        snprintf(w->where, sizeof w->where, "%s", path);
        return -1;
    }
    if (cJSON_IsNumber(a)) {
        if (a->valuedouble == b->valuedouble)
            return 0;
        int t = tensor ? ft_graph_find(w->g, tensor) : -1;
        if (!in_shape || t < 0) {
            snprintf(w->where, sizeof w->where, "%s", path);
            return -1;
        }
        const ft_tensor *x = &w->g->tensors[t];
        char expr[320];
        int plain = ft_sym_size(w->u1, w->u2, (int64_t)a->valuedouble, (int64_t)b->valuedouble, expr, sizeof expr);
        int is_name = 0;
        for (int k = 0; k < w->u1->n; k++)
            is_name |= !strcmp(expr, w->u1->name[k]);
        /* an input's dim is a stand-in itself; a value needs a concrete shape */
        if (plain || (x->flags & FT_TF_VALUE) || ((x->flags & FT_TF_INPUT) && !is_name)) {
            snprintf(w->where, sizeof w->where, "%s", path);
            return -1;
        }
        a->type = cJSON_String; /* a number has no valuestring to free */
        a->valuestring = ft_strdup(expr);
        return a->valuestring ? 0 : (snprintf(w->where, sizeof w->where, "out of memory"), -1);
    }
    if (cJSON_IsString(a)) {
        if (strcmp(a->valuestring, b->valuestring)) {
            snprintf(w->where, sizeof w->where, "%s", path);
            return -1;
        }
        return 0;
    }
    if (cJSON_IsArray(a) || cJSON_IsObject(a)) {
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) {
            snprintf(w->where, sizeof w->where, "%s", path);
            return -1;
        }
        int k = 0;
        cJSON *x;
        cJSON_ArrayForEach(x, a)
        {
            const cJSON *y = cJSON_IsObject(a) ? cJSON_GetObjectItemCaseSensitive(b, x->string) : cJSON_GetArrayItem(b, k);
            char sub[1200];
            const char *t = tensor;
            int shape = 0;
            if (!y) {
                snprintf(w->where, sizeof w->where, "%s", path);
                return -1;
            }
            if (!*path && (!strcmp(x->string, "nodes") || !strcmp(x->string, "tensors")))
                snprintf(sub, sizeof sub, "%s", x->string);
            else if (!strcmp(path, "nodes")) {
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(x, "name"), *op = cJSON_GetObjectItemCaseSensitive(x, "op");
                snprintf(sub, sizeof sub, "node '%.400s' (%.40s)", cJSON_IsString(nm) ? nm->valuestring : "?",
                         cJSON_IsString(op) ? op->valuestring : "?");
            } else if (!strcmp(path, "tensors")) {
                snprintf(sub, sizeof sub, "tensor '%.400s'", x->string);
                t = x->string;
            } else if (cJSON_IsObject(a)) {
                shape = tensor && !strcmp(x->string, "shape") && !strncmp(path, "tensor '", 8);
                snprintf(sub, sizeof sub, "%.1000s%s%s '%.100s'", path, *path ? ", " : "",
                         !strcmp(x->string, "attrs") ? "attributes" : strncmp(path, "node", 4) ? "key" : "attribute", x->string);
                if (!strcmp(x->string, "attrs"))
                    snprintf(sub, sizeof sub, "%.1000s", path);
            } else {
                snprintf(sub, sizeof sub, "%.1000s", path);
            }
            if (sym_merge(w, x, y, t, in_shape || shape, sub))
                return -1;
            k++;
        }
    }
    return 0;
}

static char *sym_document(ft_graph *g1, ft_graph *g2, const ft_unbound *u1, const ft_unbound *u2, size_t *len, ft_error *err)
{
    for (int r = 0; r < 2; r++) { /* as ft_convert declares them */
        ft_graph *g = r ? g2 : g1;
        for (int i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & FT_TF_VALUE)
                g->tensors[i].flags |= FT_TF_DECLARED;
    }
    char names[400] = "", how[600] = "";
    size_t nl = 0, hl = 0;
    for (int k = 0; k < u1->n && nl < sizeof names - 100 && hl < sizeof how - 100; k++) {
        nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", k ? ", " : "", u1->name[k]);
        hl += (size_t)snprintf(how + hl, sizeof how - hl, "%s--dim %s=N", k ? " " : "", u1->name[k]);
    }
    /* the values: the same bytes in both, or they depend on the dims */
    for (int i = 0; i < g1->n_tensors; i++) {
        const ft_tensor *a = &g1->tensors[i], *b = &g2->tensors[i];
        if ((a->flags & FT_TF_VALUE) && (!(b->flags & FT_TF_VALUE) || ft_tensor_bytes(a) != ft_tensor_bytes(b) ||
                                         memcmp(a->value, b->value, ft_tensor_bytes(a))))
            return ft_err(err, FT_EGRAPH, "%s: convert: the values of tensor '%s' depend on the unbound dims (%s): bind "
                          "them (%s, or --shape, -i) to write the graph for one size", g1->file, a->name, names, how), NULL;
    }
    size_t l1, l2;
    char *d1 = ft_graph_doc_make(g1, &l1, err), *d2 = d1 ? ft_graph_doc_make(g2, &l2, err) : NULL;
    cJSON *j1 = d2 ? cJSON_ParseWithLength(d1, l1) : NULL, *j2 = j1 ? cJSON_ParseWithLength(d2, l2) : NULL;
    char *out = NULL;
    sym_walk w = {u1, u2, g1, ""};
    if (d1 && d2 && (!j1 || !j2))
        ft_err(err, FT_ERUNTIME, "out of memory");
    else if (j2 && sym_merge(&w, j1, j2, NULL, 0, ""))
        ft_err(err, FT_EGRAPH, "%s: convert: %s depends on the unbound dims (%s), which the model computes from its inputs' "
               "shapes: bind them (%s, or --shape, -i) to write the graph for one size", g1->file, w.where, names, how);
    else if (j2) {
        char *text = cJSON_PrintUnformatted(j1);
        out = text ? ft_strdup(text) : NULL;
        cJSON_free(text);
        if (!out)
            ft_err(err, FT_ERUNTIME, "out of memory");
        else
            *len = strlen(out);
    }
    cJSON_Delete(j1);
    cJSON_Delete(j2);
    free(d1);
    free(d2);
    return out;
}

/* `convert MODEL -o OUT.json|OUT.ftg`: any graph file as an ftrun graph. */
int ft_cmd_convert(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p, p2;
    ft_unbound u1, u2;
    if (ft_outpath_check(c->outdir, &err) || load_unbound(c, 0, &p, &p2, &u1, &u2, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    ft_pack_stats ps = {0};
    int files = 0;
    size_t len = 0;
    char *doc = p2.g ? sym_document(g, p2.g, &u1, &u2, &len, &err) : NULL;
    g->keep_named_dims = doc != NULL;
    ft_status st = p2.g && !doc ? err.code : ft_convert(g, c->outdir, c->compress, doc, len, &ps, &files, &err);
    int n_nodes = g->n_nodes;
    free(doc);
    ft_pipeline_free(&p);
    ft_pipeline_free(&p2);
    if (st)
        return cli_fail(&err);
    char kept[400] = "";
    size_t kl = 0;
    for (int k = 0; k < u1.n && kl < sizeof kept - 100; k++)
        kl += (size_t)snprintf(kept + kl, sizeof kept - kl, "%s%s", k ? ", " : "; named dims kept: ", u1.name[k]);
    if (!c->quiet && ft_convert_kind(c->outdir) == 2)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d blob%s%s\n", ft_prog, c->outdir, n_nodes, n_nodes == 1 ? "" : "s",
                ps.blobs, ps.blobs == 1 ? "" : "s", kept);
    else if (!c->quiet)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d .npy file%s in %.*s.values/%s\n", ft_prog, c->outdir, n_nodes,
                n_nodes == 1 ? "" : "s", files, files == 1 ? "" : "s", (int)strlen(c->outdir) - 5, c->outdir, kept);
    return 0;
}
