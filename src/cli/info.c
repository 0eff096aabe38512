/* `ftrun info`: the text and the JSON description of a graph (info.h). With
 * dims nothing binds, the graph was loaded twice with different stand-in
 * sizes (graph.h, ft_unbound): a size equal in both is the graph's own, one
 * that follows a stand-in is written with its name ("batch", "2*batch",
 * "batch+1", "3*batch*seq"), and any other that differs is unknown ("?"). */
#include "info.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/cost.h"
#include "../io/ftg.h"
#include "cliutil.h"

int ft_sym_size(const ft_unbound *u, const ft_unbound *w, int64_t a, int64_t b, char *buf, size_t n)
{
    if (!u || !w || a == b) {
        snprintf(buf, n, "%lld", (long long)a);
        return 1;
    }
    /* c*name + d, the smallest |d| first */
    int best = -1;
    int64_t bc = 0, bd = 0;
    for (int k = 0; k < u->n; k++) {
        int64_t da = u->value[k] - w->value[k];
        if (da == 0 || (a - b) % da)
            continue;
        int64_t c = (a - b) / da, d = a - c * u->value[k];
        if (c > 0 && (best < 0 || llabs(d) < llabs(bd)))
            best = k, bc = c, bd = d;
    }
    if (best >= 0) {
        int len = bc == 1 ? snprintf(buf, n, "%s", u->name[best]) : snprintf(buf, n, "%lld*%s", (long long)bc, u->name[best]);
        if (bd && len > 0 && (size_t)len < n)
            snprintf(buf + len, n - (size_t)len, "%+lld", (long long)bd);
        return 0;
    }
    for (int k = 0; k < u->n; k++)
        for (int l = k; l < u->n; l++) {
            int64_t pa = u->value[k] * u->value[l], pb = w->value[k] * w->value[l];
            if (a % pa || b % pb || a / pa != b / pb || a / pa <= 0)
                continue;
            int64_t c = a / pa;
            char cs[32] = "";
            if (c != 1)
                snprintf(cs, sizeof cs, "%lld*", (long long)c);
            if (k == l)
                snprintf(buf, n, "%s%s^2", cs, u->name[k]);
            else
                snprintf(buf, n, "%s%s*%s", cs, u->name[k], u->name[l]);
            return 0;
        }
    snprintf(buf, n, "?");
    return 0;
}

static int sym(const ft_info_view *v, int64_t a, int64_t b, char *buf, size_t n)
{
    return ft_sym_size(v->g2 ? v->u1 : NULL, v->g2 ? v->u2 : NULL, a, b, buf, n);
}

static const char *sym_shape(const ft_info_view *v, const ft_shape *a, const ft_shape *b, char *buf, size_t n)
{
    if (v->g2 && a->rank != b->rank) {
        snprintf(buf, n, "[?]");
        return buf;
    }
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < a->rank && len < n - 1; i++) {
        char d[300];
        sym(v, a->dims[i], v->g2 ? b->dims[i] : a->dims[i], d, sizeof d);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", d);
    }
    if (len < n - 1)
        snprintf(buf + len, n - len, "]");
    return buf;
}

static const ft_tensor *twin(const ft_info_view *v, int t) { return v->g2 ? &v->g2->tensors[t] : &v->g->tensors[t]; }

static int is_view(const ft_info_view *v, const ft_node *n)
{
    return ft_plan_is_view(v->g, v->p, n) && (!v->g2 || ft_plan_is_view(v->g2, v->p2, &v->g2->nodes[n - v->g->nodes]));
}

/* The node's flops and bytes in g and g2 (fl[1], by[1]; the same as g's
 * without g2), added to the totals tf and tb when they are not NULL. */
static void node_cost(const ft_info_view *v, int idx, uint64_t fl[2], uint64_t by[2], uint64_t tf[2], uint64_t tb[2])
{
    const ft_node *n = &v->g->nodes[idx];
    ft_node_cost(v->g, n, &fl[0], &by[0]);
    fl[1] = fl[0], by[1] = by[0];
    if (v->g2)
        ft_node_cost(v->g2, &v->g2->nodes[idx], &fl[1], &by[1]);
    if (is_view(v, n))
        by[0] = by[1] = 0; /* a view copies nothing */
    if (tf)
        for (int r = 0; r < 2; r++)
            tf[r] += fl[r], tb[r] += by[r];
}

static const char *human(uint64_t b, char *buf, size_t n)
{
    if (b < 1024)
        snprintf(buf, n, "%llu B", (unsigned long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else if (b < 1024ull * 1024 * 1024)
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
    return buf;
}

static void tensor_line(FILE *f, const ft_info_view *v, int t, int name_w)
{
    const ft_tensor *x = &v->g->tensors[t];
    char s[FT_SHAPE_STR * 8];
    fprintf(f, "  ");
    ft_cell(f, x->name, name_w, 0);
    fprintf(f, "  %-5s ", ft_dtype_name(x->dtype));
    sym_shape(v, &x->shape, &twin(v, t)->shape, s, sizeof s);
    if (x->flags & FT_TF_DYNAMIC)
        strcat(s, "*");
    if (x->source) {
        ft_cell(f, s, 20, 0);
        fprintf(f, "  value from %s\n", x->source);
    } else {
        fprintf(f, "%s\n", s);
    }
}

static void outputs_str(const ft_info_view *v, const ft_node *n, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = 0;
    for (int o = 0; o < n->n_out && len + 64 < sz; o++) {
        const ft_tensor *t = &v->g->tensors[n->out[o]];
        char s[FT_SHAPE_STR * 8];
        len += (size_t)snprintf(buf + len, sz - len, "%s%s %s%s%s", o ? ", " : "", t->name, ft_dtype_name(t->dtype),
                                sym_shape(v, &t->shape, &twin(v, n->out[o])->shape, s, sizeof s),
                                (t->flags & FT_TF_DYNAMIC) ? "*" : "");
    }
}

static int clamp(int w, int lo, int hi) { return w < lo ? lo : w > hi ? hi : w; }

void ft_info_text(FILE *f, const ft_info_view *v)
{
    const ft_graph *g = v->g;
    const ft_plan *p = v->p;
    fprintf(f, "graph: %s\nfile: %s\n", g->name, g->file);
    if (g->about)
        fprintf(f, "source: %s\n", g->about);
    if (g->opt_note)
        fprintf(f, "%s\n", g->opt_note);
    fprintf(f, "nodes: %d, tensors: %d\n", g->n_nodes, g->n_tensors);
    char dyn[600];
    if (ft_graph_dynamic_str(g, dyn, sizeof dyn))
        fprintf(f, "run-time shapes: %s (their nodes, marked dynamic, are inferred again at every run; a shape "
                "marked * is the load's stand-in: a data-dependent op's bound, or what follows from it)\n", dyn);
    if (ft_graph_guards_str(g, dyn, sizeof dyn))
        fprintf(f, "guarded nodes: %d, each run only when its guard is true (an ONNX If's branch), skipped otherwise: "
                "%s\n", ft_graph_guarded(g), dyn);
    int nl = ft_graph_loops_str(g, dyn, sizeof dyn);
    if (nl)
        fprintf(f, "run-time loops: %d, each body (the nodes between its loop_begin and loop_end) run again while "
                "its condition holds and its trip count allows (an ONNX Loop known only at run time): %s\n", nl, dyn);
    if (v->g2) {
        fprintf(f, "unbound dims:");
        for (int k = 0; k < v->u1->n; k++)
            fprintf(f, "%s %s", k ? "," : "", v->u1->name[k]);
        fprintf(f, " (sizes that follow them are written with their names, others that depend on them as ?; bind them "
                   "with --dim NAME=N, --shape or -i to see every size)\n");
    }
    int name_w = 4;
    for (int i = 0; i < g->n_inputs; i++)
        name_w = clamp(ft_text_width(g->tensors[g->inputs[i]].name), name_w, 48);
    for (int i = 0; i < g->n_outputs; i++)
        name_w = clamp(ft_text_width(g->tensors[g->outputs[i]].name), name_w, 48);
    fprintf(f, "inputs:%s\n", g->n_inputs ? "" : " (none)");
    for (int i = 0; i < g->n_inputs; i++)
        tensor_line(f, v, g->inputs[i], name_w);
    fprintf(f, "outputs:\n");
    for (int i = 0; i < g->n_outputs; i++)
        tensor_line(f, v, g->outputs[i], name_w);
    /* the node table's columns fit their contents, names up to 48 columns and
     * outputs up to 64 (longer ones cut in the middle) */
    int nw = 4, ow = 7, opw = 2, fw = 5, bw = 5;
    char buf[2048], n1[320], n2[320];
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        nw = clamp(ft_text_width(n->name), nw, 48);
        opw = clamp((int)strlen(ft_op_name(n->op)) + (is_view(v, n) ? 7 : ft_node_dynamic(g, n) ? 10 : 0) +
                    (ft_node_guard(n) >= 0 ? 10 : 0), opw, 40);
        outputs_str(v, n, buf, sizeof buf);
        ow = clamp(ft_text_width(buf), ow, 64);
        uint64_t fl[2], by[2];
        node_cost(v, g->order[k], fl, by, NULL, NULL);
        fw = clamp((int)strlen((sym(v, (int64_t)fl[0], (int64_t)fl[1], n1, sizeof n1), n1)), fw, 40);
        bw = clamp((int)strlen((sym(v, (int64_t)by[0], (int64_t)by[1], n2, sizeof n2), n2)), bw, 40);
    }
    fprintf(f, "nodes (execution order):\n  %4s  ", "#");
    ft_cell(f, "name", nw, 0);
    fprintf(f, "  ");
    ft_cell(f, "op", opw, 0);
    fprintf(f, "  ");
    ft_cell(f, "outputs", ow, 0);
    fprintf(f, "  %*s  %*s\n", fw, "flops", bw, "bytes");
    uint64_t tf[2] = {0, 0}, tb[2] = {0, 0};
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        uint64_t fl[2], by[2];
        node_cost(v, g->order[k], fl, by, tf, tb);
        char op[64];
        snprintf(op, sizeof op, "%s%s%s", ft_op_name(n->op),
                 is_view(v, n) ? " (view)" : ft_node_dynamic(g, n) ? " (dynamic)" : "",
                 ft_node_guard(n) >= 0 ? " (guarded)" : "");
        outputs_str(v, n, buf, sizeof buf);
        fprintf(f, "  %4d  ", k);
        ft_cell(f, n->name, nw, 0);
        fprintf(f, "  ");
        ft_cell(f, op, opw, 0);
        fprintf(f, "  ");
        ft_cell(f, buf, ow, 0);
        sym(v, (int64_t)fl[0], (int64_t)fl[1], n1, sizeof n1);
        sym(v, (int64_t)by[0], (int64_t)by[1], n2, sizeof n2);
        fprintf(f, "  %*s  %*s\n", fw, n1, bw, n2);
    }
    sym(v, (int64_t)tf[0], (int64_t)tf[1], n1, sizeof n1);
    sym(v, (int64_t)tb[0], (int64_t)tb[1], n2, sizeof n2);
    fprintf(f, "  total: %s flops, %s bytes moved\n", n1, n2);
    fprintf(f, "memory plan:\n");
    const ft_plan *q = v->g2 ? v->p2 : p;
    char h[32];
    struct {
        const char *label;
        uint64_t a, b;
        const char *what;
    } rows[] = {
        {"planned peak:", p->arena_bytes, q->arena_bytes, "one arena"},
        {"unplanned:", p->unplanned_bytes, q->unplanned_bytes, "every tensor in its own buffer"},
        {"persistent:", p->persistent_bytes, q->persistent_bytes, NULL},
        {"weights:", p->weights_bytes, q->weights_bytes, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int plain = sym(v, (int64_t)rows[i].a, (int64_t)rows[i].b, n1, sizeof n1);
        fprintf(f, "  %-17s %s bytes%s", rows[i].label, n1, strcmp(n1, "?") ? "" : " (depends on the unbound dims)");
        if (plain && i != 2)
            fprintf(f, " (%s)", human(rows[i].a, h, sizeof h));
        if (i == 2)
            fprintf(f, " (inputs, outputs, constants)");
        else if (rows[i].what)
            fprintf(f, ": %s", rows[i].what);
        fprintf(f, "\n");
    }
    if (p->unplanned_bytes && (!v->g2 || (p->arena_bytes == q->arena_bytes && p->unplanned_bytes == q->unplanned_bytes)))
        fprintf(f, "  %-17s %.1f%%\n", "saving:", 100.0 * (1.0 - (double)p->arena_bytes / (double)p->unplanned_bytes));
}

/* A size in JSON: a number, an expression string ("2*batch"), or null (?). */
static cJSON *jnum(const ft_info_view *v, int64_t a, int64_t b)
{
    char buf[320];
    if (sym(v, a, b, buf, sizeof buf))
        return cJSON_CreateNumber((double)a);
    return strcmp(buf, "?") ? cJSON_CreateString(buf) : cJSON_CreateNull();
}

static cJSON *jshape(const ft_info_view *v, const ft_shape *a, const ft_shape *b)
{
    cJSON *arr = cJSON_CreateArray();
    if (v->g2 && a->rank != b->rank) {
        cJSON_Delete(arr);
        return cJSON_CreateNull();
    }
    for (int i = 0; arr && i < a->rank; i++)
        cJSON_AddItemToArray(arr, jnum(v, a->dims[i], v->g2 ? b->dims[i] : a->dims[i]));
    return arr;
}

static cJSON *jtensor(const ft_info_view *v, int t)
{
    const ft_tensor *x = &v->g->tensors[t];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", x->name);
    cJSON_AddStringToObject(o, "dtype", ft_dtype_name(x->dtype));
    cJSON_AddItemToObject(o, "shape", jshape(v, &x->shape, &twin(v, t)->shape));
    return o;
}

char *ft_info_json(const ft_info_view *v)
{
    const ft_graph *g = v->g;
    unsigned long oom0 = ft_json_oom();
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "schema", "ftrun-info/1");
    cJSON_AddStringToObject(root, "ftrun_version", FT_VERSION);
    cJSON *jg = cJSON_AddObjectToObject(root, "graph");
    cJSON_AddStringToObject(jg, "name", g->name);
    cJSON_AddStringToObject(jg, "file", g->file);
    if (g->about)
        cJSON_AddStringToObject(jg, "source", g->about);
    else
        cJSON_AddNullToObject(jg, "source");
    cJSON_AddNumberToObject(jg, "nodes", g->n_nodes);
    cJSON_AddNumberToObject(jg, "tensors", g->n_tensors);
    cJSON *jo = cJSON_AddObjectToObject(root, "optimizer");
    cJSON_AddNumberToObject(jo, "level", v->opt ? v->opt->level : 0);
    cJSON *jp = cJSON_AddObjectToObject(jo, "passes");
    for (int i = 0; v->opt && i < FT_OPT_N_PASSES; i++)
        if (ft_opt_pass_level((ft_opt_pass)i) <= v->opt->level)
            cJSON_AddNumberToObject(jp, ft_opt_pass_name((ft_opt_pass)i), v->opt->count[i]);
    cJSON *ju = cJSON_AddArrayToObject(root, "unbound_dims");
    for (int k = 0; v->g2 && k < v->u1->n; k++)
        cJSON_AddItemToArray(ju, cJSON_CreateString(v->u1->name[k]));
    cJSON *ji = cJSON_AddArrayToObject(root, "inputs");
    for (int i = 0; i < g->n_inputs; i++) {
        cJSON *o = jtensor(v, g->inputs[i]);
        const char *src = g->tensors[g->inputs[i]].source;
        if (src)
            cJSON_AddStringToObject(o, "value_from", src);
        else
            cJSON_AddNullToObject(o, "value_from");
        cJSON_AddItemToArray(ji, o);
    }
    cJSON *jout = cJSON_AddArrayToObject(root, "outputs");
    for (int i = 0; i < g->n_outputs; i++)
        cJSON_AddItemToArray(jout, jtensor(v, g->outputs[i]));
    cJSON *jn = cJSON_AddArrayToObject(root, "nodes");
    uint64_t tf[2] = {0, 0}, tb[2] = {0, 0};
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        uint64_t fl[2], by[2];
        node_cost(v, g->order[k], fl, by, tf, tb);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", k);
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "op", ft_op_name(n->op));
        cJSON *in = cJSON_AddArrayToObject(o, "inputs");
        for (int i = 0; i < n->n_in; i++)
            cJSON_AddItemToArray(in, n->in[i] < 0 ? cJSON_CreateNull() : cJSON_CreateString(g->tensors[n->in[i]].name));
        cJSON *out = cJSON_AddArrayToObject(o, "outputs");
        for (int i = 0; i < n->n_out; i++)
            cJSON_AddItemToArray(out, jtensor(v, n->out[i]));
        cJSON_AddItemToObject(o, "flops", jnum(v, (int64_t)fl[0], (int64_t)fl[1]));
        cJSON_AddItemToObject(o, "bytes", jnum(v, (int64_t)by[0], (int64_t)by[1]));
        cJSON_AddBoolToObject(o, "view", is_view(v, n));
        cJSON_AddItemToArray(jn, o);
    }
    cJSON *jt = cJSON_AddObjectToObject(root, "totals");
    cJSON_AddItemToObject(jt, "flops", jnum(v, (int64_t)tf[0], (int64_t)tf[1]));
    cJSON_AddItemToObject(jt, "bytes", jnum(v, (int64_t)tb[0], (int64_t)tb[1]));
    const ft_plan *p = v->p, *q = v->g2 ? v->p2 : v->p;
    cJSON *jm = cJSON_AddObjectToObject(root, "memory");
    cJSON_AddItemToObject(jm, "planned_peak_bytes", jnum(v, (int64_t)p->arena_bytes, (int64_t)q->arena_bytes));
    cJSON_AddItemToObject(jm, "unplanned_bytes", jnum(v, (int64_t)p->unplanned_bytes, (int64_t)q->unplanned_bytes));
    cJSON_AddItemToObject(jm, "persistent_bytes", jnum(v, (int64_t)p->persistent_bytes, (int64_t)q->persistent_bytes));
    cJSON_AddItemToObject(jm, "weights_bytes", jnum(v, (int64_t)p->weights_bytes, (int64_t)q->weights_bytes));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text || ft_json_oom() != oom0) {
        cJSON_free(text);
        return NULL;
    }
    char *copy = ft_strdup(text);
    cJSON_free(text);
    return copy;
}
