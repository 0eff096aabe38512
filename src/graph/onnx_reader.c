/* ONNX models in: ModelProto -> ft_graph.
 *
 * The model is unpacked with protobuf-c, checked (ir_version 3-10, default
 * domain opset 7-23), its inputs' shapes fixed through the dims resolver
 * (dims.h), and its nodes imported in file order: load-time folding first
 * (onnx_fold.c), else the node's mapper (onnx_ops*.c, contract in
 * onnx_import.h), then inference of what was emitted so later nodes see
 * static shapes. What ftrun cannot run (an op, an attribute value, a dtype) is
 * collected and reported in one message before anything runs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dims.h"
#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

enum { MAX_UNSUP_LINES = 64 };

typedef struct unsup_rec {
    char *key;   /* groups missing ops: "op NonZero (ai.onnx opset 13)"; NULL for one-off records */
    char *text;  /* the line (for a group: its node names) */
} unsup_rec;

struct onx_ctx {
    const char *file;
    const ft_load_opts *opts;
    ft_error *err;
    ft_graph *g;
    Onnx__ModelProto *model;
    int opset;
    struct ft_strmap *names;    /* ONNX value name -> tensor index */
    struct ft_strmap *inits;    /* initializer name -> index into init */
    struct ft_strmap *poisoned; /* values an unsupported node would have made */
    struct ft_strmap *outnames; /* the graph's output names */
    Onnx__TensorProto **init;
    ft_node **nodes;
    int n_nodes, cap_nodes, pending, emitted_here;
    void **owned;
    int n_owned, cap_owned;
    unsup_rec *unsup;
    int n_unsup, cap_unsup, unsup_flag;
    ft_status last;
    char *fold_names[64];
    int fold_counts[64], n_fold_kinds, n_folded;
};

/* ---- small helpers ---- */

static ft_status oom(onx_ctx *c)
{
    return c->last = ft_err(c->err, FT_ERUNTIME, "%s: out of memory while importing the model", c->file);
}

static void *keep(onx_ctx *c, void *p)
{
    if (!p)
        return NULL;
    if (c->n_owned == c->cap_owned) {
        int nc = c->cap_owned ? 2 * c->cap_owned : 64;
        void **no = ft_realloc(c->owned, (size_t)nc * sizeof *no);
        if (!no) {
            free(p);
            return NULL;
        }
        c->owned = no;
        c->cap_owned = nc;
    }
    return c->owned[c->n_owned++] = p;
}

static int add_tensor(onx_ctx *c, const char *want)
{
    ft_graph *g = c->g;
    char *name = ft_strdup(want);
    if (!name)
        return -1;
    for (int k = 2; ft_strmap_get(g->tmap, name) >= 0; k++) {
        free(name);
        size_t n = strlen(want) + 24;
        if (!(name = ft_malloc(n)))
            return -1;
        snprintf(name, n, "%s_%d", want, k);
    }
    if (g->n_tensors == g->cap_tensors) {
        int nc = g->cap_tensors ? g->cap_tensors * 2 : 64;
        ft_tensor *nt = ft_realloc(g->tensors, (size_t)nc * sizeof *nt);
        if (!nt) {
            free(name);
            return -1;
        }
        g->tensors = nt;
        g->cap_tensors = nc;
    }
    ft_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->producer = -1;
    if (ft_strmap_put(g->tmap, name, g->n_tensors)) {
        free(name);
        return -1;
    }
    return g->n_tensors++;
}

static int bind_name(onx_ctx *c, const char *onnx_name, int t)
{
    return ft_strmap_put(c->names, onnx_name, t) ? -1 : t;
}

/* A constant tensor named `name` holding a's value (taken over). */
static int add_const(onx_ctx *c, const char *name, ft_npy *a, const char *source)
{
    /* a graph output keeps its name for the node that will copy the value out */
    char alt[FT_MAX_NAME + 16];
    if (ft_strmap_get(c->outnames, name) >= 0) {
        snprintf(alt, sizeof alt, "%.1024s/value", name);
        name = alt;
    }
    int t = add_tensor(c, name);
    if (t < 0)
        return -1;
    ft_tensor *tt = &c->g->tensors[t];
    tt->dtype = a->dtype;
    tt->shape = a->shape;
    tt->value = a->data;
    tt->value_bytes = a->nbytes;
    tt->flags = FT_TF_DECLARED | FT_TF_VALUE | FT_TF_INFERRED;
    tt->source = source;
    a->data = NULL;
    a->nbytes = 0;
    return t;
}

static const char *nz(const char *s) { return s ? s : ""; }

static int is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

/* Tensor of an ONNX value name (initializers are decoded on first use), or -1
 * when the name is unknown, -2 on failure (c->last). */
static int resolve(onx_ctx *c, const char *name)
{
    int t = ft_strmap_get(c->names, name);
    if (t >= 0)
        return t;
    int k = ft_strmap_get(c->inits, name);
    if (k < 0)
        return -1;
    char what[FT_MAX_NAME + 32];
    snprintf(what, sizeof what, "initializer '%.1000s'", name);
    ft_npy a;
    if ((c->last = ft_onnx_tensor_decode(c->init[k], c->file, what, c->g->dir, c->opts->allow_external, &a, c->err)))
        return -2;
    t = add_const(c, name, &a, "initializer");
    free(a.data);
    if (t < 0 || bind_name(c, name, t) < 0) {
        oom(c);
        return -2;
    }
    return t;
}

/* ---- unsupported records ---- */

static ft_status record(onx_ctx *c, const char *key, const char *text)
{
    if (key)
        for (int i = 0; i < c->n_unsup; i++)
            if (c->unsup[i].key && !strcmp(c->unsup[i].key, key)) {
                size_t l = strlen(c->unsup[i].text) + strlen(text) + 3;
                char *nt = ft_realloc(c->unsup[i].text, l);
                if (!nt)
                    return oom(c);
                strcat(strcat(nt, ", "), text);
                c->unsup[i].text = nt;
                return FT_EGRAPH;
            }
    if (c->n_unsup == c->cap_unsup) {
        int nc = c->cap_unsup ? 2 * c->cap_unsup : 16;
        unsup_rec *nr = ft_realloc(c->unsup, (size_t)nc * sizeof *nr);
        if (!nr)
            return oom(c);
        c->unsup = nr;
        c->cap_unsup = nc;
    }
    unsup_rec *r = &c->unsup[c->n_unsup];
    r->key = key ? ft_strdup(key) : NULL;
    r->text = ft_strdup(text);
    if ((key && !r->key) || !r->text) {
        free(r->key);
        free(r->text);
        return oom(c);
    }
    c->n_unsup++;
    c->unsup_flag = 1;
    return FT_EGRAPH;
}

ft_status onx_unsupported(onx_ctx *c, const onx_node *n, const char *fmt, ...)
{
    char msg[1024], line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "node '%s' (%s, opset %d): %s", n->name, n->op_type, n->opset, msg);
    ft_status st = record(c, NULL, line);
    c->unsup_flag = 1;
    return st;
}

ft_status onx_error(onx_ctx *c, const onx_node *n, ft_status code, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return c->last = ft_err(c->err, code, "%s: node '%s' (%s): %s", c->file, n->name, n->op_type, msg);
}

ft_status onx_status(onx_ctx *c) { return c->last ? c->last : FT_ERUNTIME; }

/* ---- attributes ---- */

const Onnx__AttributeProto *onx_attr(const onx_node *n, const char *name)
{
    for (size_t i = 0; i < n->pb->n_attribute; i++)
        if (n->pb->attribute[i]->name && !strcmp(n->pb->attribute[i]->name, name))
            return n->pb->attribute[i];
    return NULL;
}

int onx_has_attr(const onx_node *n, const char *name) { return onx_attr(n, name) != NULL; }

int64_t onx_attr_i(const onx_node *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    return a && (a->has_i || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) ? a->i : def;
}

double onx_attr_f(const onx_node *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    if (a && (a->has_f || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
        return a->f;
    if (a && a->has_i)
        return (double)a->i;
    return def;
}

const char *onx_attr_s(onx_ctx *c, const onx_node *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    if (!a || !a->has_s)
        return def;
    char *s = keep(c, ft_malloc(a->s.len + 1));
    if (!s)
        return def;
    memcpy(s, a->s.data, a->s.len);
    s[a->s.len] = 0;
    return s;
}

int onx_attr_ints(const onx_node *n, const char *name, const int64_t **v)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    if (!a)
        return -1;
    *v = a->ints;
    return (int)a->n_ints;
}

int onx_attr_floats(const onx_node *n, const char *name, const float **v)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    if (!a)
        return -1;
    *v = a->floats;
    return (int)a->n_floats;
}

ft_status onx_attr_tensor(onx_ctx *c, const onx_node *n, const Onnx__AttributeProto *a, ft_npy *out)
{
    char what[FT_MAX_NAME + 64];
    snprintf(what, sizeof what, "node '%.1000s' (%s): attribute '%s'", n->name, n->op_type, nz(a->name));
    if (!a->t)
        return c->last = ft_err(c->err, FT_EGRAPH, "%s: %s has no tensor", c->file, what);
    return c->last = ft_onnx_tensor_decode(a->t, c->file, what, c->g->dir, c->opts->allow_external, out, c->err);
}

/* ---- inputs ---- */

int onx_in(onx_ctx *c, const onx_node *n, int k)
{
    if (k < 0 || k >= n->n_in || !n->pb->input[k] || !*n->pb->input[k])
        return -1;
    int t = resolve(c, n->pb->input[k]);
    return t < 0 ? -1 : t;
}

const ft_tensor *onx_in_tensor(onx_ctx *c, const onx_node *n, int k)
{
    int t = onx_in(c, n, k);
    return t < 0 ? NULL : &c->g->tensors[t];
}

const ft_tensor *onx_in_const(onx_ctx *c, const onx_node *n, int k)
{
    const ft_tensor *t = onx_in_tensor(c, n, k);
    return t && (t->flags & FT_TF_VALUE) ? t : NULL;
}

static ft_status need_const(onx_ctx *c, const onx_node *n, int k, const char *reason, const ft_tensor **out)
{
    const ft_tensor *t = onx_in_tensor(c, n, k);
    *out = NULL;
    if (!t)
        return FT_OK;
    if (!(t->flags & FT_TF_VALUE))
        return onx_error(c, n, FT_EGRAPH, "input %d ('%s') must be known at load time: %s; it is %s", k, n->pb->input[k],
                         reason ? reason : "ftrun takes it as a parameter",
                         (t->flags & FT_TF_INPUT) ? "a graph input without a value (give it with -i)"
                                                  : "computed at run time");
    *out = t;
    return FT_OK;
}

ft_status onx_const_ints(onx_ctx *c, const onx_node *n, int k, const char *reason, const int64_t **v, int *count)
{
    const ft_tensor *t;
    ft_status st = need_const(c, n, k, reason, &t);
    *count = -1;
    if (st || !t)
        return st;
    if (!ft_dtype_is_int(t->dtype) && t->dtype != FT_BOOL)
        return onx_error(c, n, FT_EGRAPH, "input %d ('%s') must hold integers, got %s", k, n->pb->input[k],
                         ft_dtype_name(t->dtype));
    uint64_t m = ft_numel(&t->shape);
    int64_t *a = keep(c, ft_malloc((size_t)(m ? m : 1) * sizeof *a));
    if (!a)
        return oom(c);
    for (uint64_t i = 0; i < m; i++)
        a[i] = ft_load_i64(t->value, t->dtype, i);
    *v = a;
    *count = (int)m;
    return FT_OK;
}

ft_status onx_const_floats(onx_ctx *c, const onx_node *n, int k, const char *reason, const double **v, int *count)
{
    const ft_tensor *t;
    ft_status st = need_const(c, n, k, reason, &t);
    *count = -1;
    if (st || !t)
        return st;
    uint64_t m = ft_numel(&t->shape);
    double *a = keep(c, ft_malloc((size_t)(m ? m : 1) * sizeof *a));
    if (!a)
        return oom(c);
    for (uint64_t i = 0; i < m; i++)
        a[i] = ft_load_f64(t->value, t->dtype, i);
    *v = a;
    *count = (int)m;
    return FT_OK;
}

/* ---- building ---- */

int onx_out(onx_ctx *c, const onx_node *n, int k)
{
    if (k < 0 || k >= n->n_out || !n->pb->output[k] || !*n->pb->output[k])
        return -1;
    const char *name = n->pb->output[k];
    int t = ft_strmap_get(c->names, name);
    if (t >= 0)
        return t;
    if ((t = add_tensor(c, name)) < 0 || bind_name(c, name, t) < 0) {
        oom(c);
        return -1;
    }
    return t;
}

int onx_tmp(onx_ctx *c, const onx_node *n, const char *suffix)
{
    char name[FT_MAX_NAME + 64];
    snprintf(name, sizeof name, "%.1000s/%s", n->name, suffix);
    int t = add_tensor(c, name);
    if (t < 0)
        oom(c);
    return t;
}

int onx_const_new(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, const ft_shape *s, const void *data)
{
    ft_npy a = {.dtype = dt, .shape = *s};
    a.nbytes = (size_t)ft_numel(s) * ft_dtype_size(dt);
    if (!(a.data = ft_malloc(a.nbytes ? a.nbytes : 1))) {
        oom(c);
        return -1;
    }
    memcpy(a.data, data, a.nbytes);
    char name[FT_MAX_NAME + 64];
    snprintf(name, sizeof name, "%.1000s/%s", n->name, suffix);
    int t = add_const(c, name, &a, "Constant");
    free(a.data);
    if (t < 0)
        oom(c);
    return t;
}

ft_status onx_const_out(onx_ctx *c, const onx_node *n, int k, ft_npy *a)
{
    if (k >= n->n_out || !n->pb->output[k] || !*n->pb->output[k]) {
        ft_npy_clear(a);
        return FT_OK;
    }
    int t = add_const(c, n->pb->output[k], a, "folded");
    ft_npy_clear(a);
    if (t < 0 || bind_name(c, n->pb->output[k], t) < 0)
        return oom(c);
    return FT_OK;
}

ft_status onx_alias(onx_ctx *c, const onx_node *n, int out_k, int src)
{
    if (out_k >= n->n_out || !n->pb->output[out_k] || !*n->pb->output[out_k])
        return FT_OK;
    return bind_name(c, n->pb->output[out_k], src) < 0 ? oom(c) : FT_OK;
}

static ft_status default_attrs(onx_ctx *c, ft_node *fn)
{
    const ft_op_info *oi = ft_op_get(fn->op);
    fn->attrs = ft_calloc((size_t)(oi->n_attrs ? oi->n_attrs : 1), sizeof *fn->attrs);
    if (!fn->attrs)
        return oom(c);
    for (int i = 0; i < oi->n_attrs; i++) {
        const ft_attr_def *d = &oi->attrs[i];
        ft_attr_val *v = &fn->attrs[i];
        if (d->has_default) {
            v->present = 1;
            v->i = d->i;
            v->f = d->f;
            if (d->type == FT_ATTR_STRING && !(v->s = ft_strdup(d->s)))
                return oom(c);
        }
    }
    return FT_OK;
}

ft_node *onx_emit(onx_ctx *c, const onx_node *n, ft_op op, const int *in, int n_in, const int *out, int n_out)
{
    int ins[64], outs[64];
    if (!in) {
        n_in = n->n_in < 64 ? n->n_in : 64;
        for (int k = 0; k < n_in; k++)
            ins[k] = onx_in(c, n, k);
        while (n_in > 0 && ins[n_in - 1] < 0)
            n_in--;
        in = ins;
    }
    if (!out) {
        n_out = n->n_out < 64 ? n->n_out : 64;
        for (int k = 0; k < n_out; k++)
            if ((outs[k] = onx_out(c, n, k)) < 0 && c->last)
                return NULL;
        while (n_out > 0 && outs[n_out - 1] < 0)
            n_out--;
        out = outs;
    }
    const ft_op_info *oi = ft_op_get(op);
    if (n_in < oi->min_in || (oi->max_in >= 0 && n_in > oi->max_in) || n_out < oi->min_out ||
        (oi->max_out >= 0 && n_out > oi->max_out)) {
        onx_error(c, n, FT_EGRAPH, "becomes ftrun %s with %d inputs and %d outputs, which %s does not take", oi->name, n_in,
                  n_out, oi->name);
        return NULL;
    }
    for (int k = 0; k < n_out; k++)
        if (out[k] < 0 || c->g->tensors[out[k]].producer >= 0 || (c->g->tensors[out[k]].flags & FT_TF_VALUE)) {
            onx_error(c, n, FT_EGRAPH, "output %d is missing or produced twice", k);
            return NULL;
        }
    if (c->n_nodes == c->cap_nodes) {
        int nc = c->cap_nodes ? 2 * c->cap_nodes : 64;
        ft_node **nn = ft_realloc(c->nodes, (size_t)nc * sizeof *nn);
        if (!nn) {
            oom(c);
            return NULL;
        }
        c->nodes = nn;
        c->cap_nodes = nc;
    }
    ft_node *fn = ft_calloc(1, sizeof *fn);
    if (!fn) {
        oom(c);
        return NULL;
    }
    c->nodes[c->n_nodes] = fn;
    fn->op = op;
    fn->index = c->n_nodes++;
    fn->n_in = n_in;
    fn->n_out = n_out;
    char name[FT_MAX_NAME + 80];
    if (c->emitted_here++ == 0)
        snprintf(name, sizeof name, "%.1000s", n->name);
    else
        snprintf(name, sizeof name, "%.1000s/%s_%d", n->name, oi->name, c->emitted_here - 1);
    fn->name = ft_strdup(name);
    fn->in = ft_malloc((size_t)(n_in ? n_in : 1) * sizeof(int));
    fn->out = ft_malloc((size_t)(n_out ? n_out : 1) * sizeof(int));
    if (!fn->name || !fn->in || !fn->out || default_attrs(c, fn)) {
        oom(c);
        return NULL;
    }
    memcpy(fn->in, in, (size_t)n_in * sizeof(int));
    memcpy(fn->out, out, (size_t)n_out * sizeof(int));
    for (int k = 0; k < n_out; k++)
        c->g->tensors[out[k]].producer = fn->index;
    return fn;
}

static ft_attr_val *set_attr(onx_ctx *c, ft_node *fn, const char *name, ft_attr_type want)
{
    int k = ft_op_attr_index(fn->op, name);
    if (k < 0 || ft_op_get(fn->op)->attrs[k].type != want) {
        fprintf(stderr, "ftrun: internal error: %s has no %s attribute '%s'\n", ft_op_name(fn->op),
                want == FT_ATTR_INT ? "integer" : "such", name);
        abort();
    }
    ft_attr_val *v = &fn->attrs[k];
    v->given = v->present = 1;
    return v;
}

ft_status onx_set_i(onx_ctx *c, ft_node *fn, const char *name, int64_t v)
{
    set_attr(c, fn, name, FT_ATTR_INT)->i = v;
    return FT_OK;
}

ft_status onx_set_f(onx_ctx *c, ft_node *fn, const char *name, double v)
{
    set_attr(c, fn, name, FT_ATTR_FLOAT)->f = v;
    return FT_OK;
}

ft_status onx_set_s(onx_ctx *c, ft_node *fn, const char *name, const char *v)
{
    ft_attr_val *a = set_attr(c, fn, name, FT_ATTR_STRING);
    free(a->s);
    return (a->s = ft_strdup(v)) ? FT_OK : oom(c);
}

ft_status onx_set_ints(onx_ctx *c, ft_node *fn, const char *name, const int64_t *v, int count)
{
    ft_attr_val *a = set_attr(c, fn, name, FT_ATTR_INTS);
    free(a->ints);
    a->n = count;
    if (!(a->ints = ft_malloc((size_t)(count > 0 ? count : 1) * sizeof *a->ints)))
        return oom(c);
    if (count > 0)
        memcpy(a->ints, v, (size_t)count * sizeof *v);
    return FT_OK;
}

ft_status onx_set_floats(onx_ctx *c, ft_node *fn, const char *name, const double *v, int count)
{
    ft_attr_val *a = set_attr(c, fn, name, FT_ATTR_FLOATS);
    free(a->floats);
    a->n = count;
    if (!(a->floats = ft_malloc((size_t)(count > 0 ? count : 1) * sizeof *a->floats)))
        return oom(c);
    if (count > 0)
        memcpy(a->floats, v, (size_t)count * sizeof *v);
    return FT_OK;
}

ft_status onx_infer_pending(onx_ctx *c)
{
    for (; c->pending < c->n_nodes; c->pending++) {
        ft_node *fn = c->nodes[c->pending];
        const ft_op_info *oi = ft_op_get(fn->op);
        for (int i = 0; i < oi->n_attrs; i++)
            if (oi->attrs[i].required && !fn->attrs[i].given)
                return c->last = ft_node_err(c->err, FT_EGRAPH, c->g, fn, "internal error: the ONNX import left required "
                                             "attribute '%s' unset", oi->attrs[i].name);
        if ((c->last = ft_node_infer(c->g, fn, c->err)))
            return c->last;
    }
    return FT_OK;
}

void onx_note_fold(onx_ctx *c, const char *op_type)
{
    c->n_folded++;
    for (int i = 0; i < c->n_fold_kinds; i++)
        if (!strcmp(c->fold_names[i], op_type)) {
            c->fold_counts[i]++;
            return;
        }
    if (c->n_fold_kinds < 64 && (c->fold_names[c->n_fold_kinds] = keep(c, ft_strdup(op_type))))
        c->fold_counts[c->n_fold_kinds++] = 1;
}

/* ---- the node loop ---- */

static int poisoned(onx_ctx *c, const char *name) { return ft_strmap_get(c->poisoned, name) >= 0; }

static ft_status poison_outputs(onx_ctx *c, const Onnx__NodeProto *np)
{
    for (size_t k = 0; k < np->n_output; k++)
        if (np->output[k] && *np->output[k] && ft_strmap_put(c->poisoned, np->output[k], 1))
            return oom(c);
    return FT_OK;
}

static ft_status import_node(onx_ctx *c, const Onnx__NodeProto *np, int index)
{
    char defname[128];
    snprintf(defname, sizeof defname, "%.80s_%d", nz(np->op_type), index);
    onx_node n = {np->name && *np->name ? np->name : defname, nz(np->op_type), index, c->opset, (int)np->n_input,
                  (int)np->n_output, np};
    c->emitted_here = 0;
    c->unsup_flag = 0;
    c->last = FT_OK;
    if (!is_default_domain(np->domain)) {
        char key[300], nm[FT_MAX_NAME + 8];
        snprintf(key, sizeof key, "op %s of domain '%s' (only the default ONNX domain is supported):", n.op_type, np->domain);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        ft_status st = record(c, key, nm);
        return st == FT_EGRAPH ? poison_outputs(c, np) : st;
    }
    for (int k = 0; k < n.n_in; k++) {
        const char *in = np->input[k];
        if (!in || !*in)
            continue;
        if (poisoned(c, in))
            return poison_outputs(c, np);
        int t = resolve(c, in);
        if (t == -2)
            return c->last;
        if (t < 0)
            return onx_error(c, &n, FT_EGRAPH, "input %d '%s' is not a graph input, an initializer or the output of an "
                             "earlier node", k, in);
    }
    const char *why;
    if (ft_onnx_refused(n.op_type, &why)) {
        char key[300], nm[FT_MAX_NAME + 8];
        snprintf(key, sizeof key, "op %s (%s):", n.op_type, why);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        ft_status st = record(c, key, nm);
        return st == FT_EGRAPH ? poison_outputs(c, np) : st;
    }
    ft_status st = FT_OK;
    int folded = ft_onnx_fold(c, &n, &st);
    if (folded < 0)
        return c->unsup_flag && st == FT_EGRAPH ? poison_outputs(c, np) : st;
    if (folded)
        return FT_OK;
    const onx_op_map *m = onx_find_map(n.op_type, n.opset);
    if (!m) {
        char key[300], nm[FT_MAX_NAME + 8];
        snprintf(key, sizeof key, "op %s (opset %d) is not supported:", n.op_type, n.opset);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        st = record(c, key, nm);
        return st == FT_EGRAPH ? poison_outputs(c, np) : st;
    }
    st = m->map(c, &n);
    if (st && c->unsup_flag && st == FT_EGRAPH) {
        c->pending = c->n_nodes; /* what it emitted is never inferred: the import fails at the end */
        return poison_outputs(c, np);
    }
    if (st)
        return st;
    if ((st = onx_infer_pending(c)))
        return st;
    for (int k = 0; k < n.n_out; k++)
        if (np->output[k] && *np->output[k] && ft_strmap_get(c->names, np->output[k]) < 0 &&
            ft_strmap_get(c->g->tmap, np->output[k]) < 0)
            return onx_error(c, &n, FT_EGRAPH, "output %d '%s' is not produced by the import of this op", k, np->output[k]);
    return FT_OK;
}

static ft_status import_nodes(onx_ctx *c, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        ft_status st = import_node(c, gp->node[i], (int)i);
        if (st)
            return st;
    }
    return FT_OK;
}

ft_status onx_import_branch(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *branch)
{
    for (size_t i = 0; i < branch->n_initializer; i++) {
        char what[FT_MAX_NAME + 64];
        snprintf(what, sizeof what, "initializer '%.1000s' of a branch of node '%.200s'", nz(branch->initializer[i]->name), n->name);
        ft_npy a;
        ft_status st = ft_onnx_tensor_decode(branch->initializer[i], c->file, what, c->g->dir, c->opts->allow_external, &a, c->err);
        if (st)
            return c->last = st;
        int t = add_const(c, nz(branch->initializer[i]->name), &a, "initializer");
        free(a.data);
        if (t < 0 || bind_name(c, nz(branch->initializer[i]->name), t) < 0)
            return oom(c);
    }
    ft_status st = import_nodes(c, branch);
    if (st || c->n_unsup)
        return st;
    if ((int)branch->n_output != n->n_out)
        return onx_error(c, n, FT_EGRAPH, "the branch taken has %zu outputs; the node has %d", branch->n_output, n->n_out);
    for (int k = 0; k < n->n_out && !st; k++) {
        int t = resolve(c, nz(branch->output[k]->name));
        if (t == -2)
            return c->last;
        if (t < 0)
            return onx_error(c, n, FT_EGRAPH, "branch output '%s' is not produced in the branch", nz(branch->output[k]->name));
        st = onx_alias(c, n, k, t);
    }
    return st;
}

/* ---- graph inputs and outputs ---- */

/* The declared dims of an input's shape (at most FT_MAX_RANK): numbers,
 * dim_param names, or unnamed. */
static void input_symdims(const Onnx__TensorShapeProto *sp, ft_symdim *d)
{
    for (size_t i = 0; i < sp->n_dim && i < FT_MAX_RANK; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sp->dim[i];
        d[i].value = -1;
        d[i].name = NULL;
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0)
            d[i].value = dm->dim_value;
        else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param && *dm->dim_param)
            d[i].name = dm->dim_param;
    }
}

/* Every input declared to the resolver first, so that a file given for a
 * later input binds the names of an earlier one (dims.h). */
static ft_status declare_inputs(onx_ctx *c, ft_dimenv *env, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const Onnx__TypeProto *tp = vi->type;
        if (ft_strmap_get(c->inits, nz(vi->name)) >= 0 || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !tp->tensor_type || !tp->tensor_type->shape || tp->tensor_type->shape->n_dim > FT_MAX_RANK)
            continue; /* import_input reports what is wrong with them */
        ft_symdim d[FT_MAX_RANK];
        input_symdims(tp->tensor_type->shape, d);
        ft_status st = ft_dimenv_declare(env, nz(vi->name), (int)tp->tensor_type->shape->n_dim, d, c->err);
        if (st)
            return st;
    }
    return FT_OK;
}

static ft_status import_input(onx_ctx *c, ft_dimenv *env, const Onnx__ValueInfoProto *vi)
{
    const char *name = nz(vi->name);
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is not a tensor (sequences, maps and optionals are not supported)",
                      c->file, name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ft_dtype dt;
    if (ft_onnx_dtype(tt->elem_type, &dt)) {
        char line[FT_MAX_NAME + 200];
        snprintf(line, sizeof line, "input '%s' has element type %s, which ftrun does not support", name,
                 ft_onnx_type_name(tt->elem_type));
        ft_status st = record(c, NULL, line);
        if (st == FT_EGRAPH && ft_strmap_put(c->poisoned, name, 1))
            return oom(c);
        return st == FT_EGRAPH ? FT_OK : st;
    }
    ft_shape s = {0};
    if (!tt->shape) {
        int found = 0;
        for (int i = 0; i < c->opts->n_shapes; i++)
            if (!strcmp(c->opts->shapes[i].input, name)) {
                s = c->opts->shapes[i].shape;
                found = 1;
            }
        if (!found)
            return ft_err(c->err, FT_EGRAPH, "%s: input '%s' has no shape in the model: pass --shape %s=D0,D1,... or a "
                          "file with -i %s=FILE", c->file, name, name, name);
        ft_symdim any[FT_MAX_RANK]; /* every dim unnamed: the bindings give them (and agree) */
        for (int i = 0; i < s.rank; i++)
            any[i] = (ft_symdim){-1, NULL};
        ft_status st = ft_dimenv_resolve(env, c->file, name, s.rank, any, &s, c->err);
        if (st)
            return st;
    } else {
        const Onnx__TensorShapeProto *sp = tt->shape;
        if (sp->n_dim > FT_MAX_RANK)
            return ft_err(c->err, FT_EGRAPH, "%s: input '%s' has rank %zu (the limit is %d)", c->file, name, sp->n_dim,
                          FT_MAX_RANK);
        ft_symdim d[FT_MAX_RANK];
        input_symdims(sp, d);
        ft_status st = ft_dimenv_resolve(env, c->file, name, (int)sp->n_dim, d, &s, c->err);
        if (st)
            return st;
    }
    int t = add_tensor(c, name);
    if (t < 0 || bind_name(c, name, t) < 0)
        return oom(c);
    ft_tensor *ft = &c->g->tensors[t];
    ft->dtype = dt;
    ft->shape = s;
    ft->flags = FT_TF_DECLARED | FT_TF_INPUT | FT_TF_INFERRED;
    for (int i = 0; i < c->opts->n_shapes; i++) {
        const ft_shape_bind *b = &c->opts->shapes[i];
        if (strcmp(b->input, name) || !b->data || b->dtype != dt || !ft_shape_eq(&b->shape, &s))
            continue;
        /* the value given with -i: nodes that need this input as a parameter may read it at load time */
        if (!(ft->value = ft_malloc(b->nbytes ? b->nbytes : 1)))
            return oom(c);
        memcpy(ft->value, b->data, b->nbytes);
        ft->value_bytes = b->nbytes;
        ft->flags |= FT_TF_VALUE;
        ft->source = "--input";
    }
    uint64_t numel, bytes;
    if (ft_shape_numel(&s, &numel) || ft_mul_overflow(numel, ft_dtype_size(dt), &bytes) || bytes > FT_MAX_TENSOR_BYTES)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' of shape %s is too large (limit %llu bytes)", c->file, name,
                      ft_shape_str(&s, (char[FT_SHAPE_STR]){0}), (unsigned long long)FT_MAX_TENSOR_BYTES);
    int *ni = ft_realloc(c->g->inputs, (size_t)(c->g->n_inputs + 1) * sizeof *ni);
    if (!ni)
        return oom(c);
    c->g->inputs = ni;
    ni[c->g->n_inputs++] = t;
    return FT_OK;
}

/* A graph output must be a tensor a node produces under the output's name;
 * anything else (an input, a constant, an alias, a value output twice) is
 * copied by an identity node into a tensor of that name. */
static ft_status import_output(onx_ctx *c, const Onnx__ValueInfoProto *vi, int index)
{
    const char *name = nz(vi->name);
    if (poisoned(c, name))
        return FT_OK;
    int t = resolve(c, name);
    if (t == -2)
        return c->last;
    if (t < 0)
        return ft_err(c->err, FT_EGRAPH, "%s: output '%s' is not produced by any node, initializer or input", c->file, name);
    ft_tensor *tt = &c->g->tensors[t];
    int direct = tt->producer >= 0 && !strcmp(tt->name, name) && !(tt->flags & FT_TF_OUTPUT);
    if (!direct) {
        Onnx__NodeProto np = ONNX__NODE_PROTO__INIT;
        char *ins[1] = {(char *)name}, nm[FT_MAX_NAME + 16];
        snprintf(nm, sizeof nm, "output_%d", index);
        np.n_input = 1;
        np.input = ins;
        onx_node n = {nm, "Identity", -1, c->opset, 1, 0, &np};
        c->emitted_here = 0;
        char oname[FT_MAX_NAME + 16];
        snprintf(oname, sizeof oname, "%s", name);
        int o = ft_strmap_get(c->g->tmap, oname) >= 0 ? -1 : add_tensor(c, oname);
        if (o < 0 && (o = add_tensor(c, nm)) < 0)
            return oom(c);
        int in[1] = {t}, out[1] = {o};
        if (!onx_emit(c, &n, FT_OP_IDENTITY, in, 1, out, 1))
            return c->last;
        ft_status st = onx_infer_pending(c);
        if (st)
            return st;
        t = o;
        tt = &c->g->tensors[t];
    }
    tt->flags |= FT_TF_OUTPUT;
    int *no = ft_realloc(c->g->outputs, (size_t)(c->g->n_outputs + 1) * sizeof *no);
    if (!no)
        return oom(c);
    c->g->outputs = no;
    no[c->g->n_outputs++] = t;
    return FT_OK;
}

/* ---- the model ---- */

/* Where a protobuf stops making sense, for the message about a file that
 * protobuf-c refused: walks the top-level fields of a ModelProto. */
static void diagnose(const unsigned char *b, size_t n, char *why, size_t wsz)
{
    size_t p = 0;
    while (p < n) {
        size_t start = p;
        uint64_t tag = 0, v = 0;
        int sh = 0;
        while (p < n && sh < 64) {
            tag |= (uint64_t)(b[p] & 0x7f) << sh;
            sh += 7;
            if (!(b[p++] & 0x80))
                break;
        }
        if (p >= n && (b[p - 1] & 0x80)) {
            snprintf(why, wsz, "truncated: a field tag at byte %zu runs past the end of the file (%zu bytes)", start, n);
            return;
        }
        unsigned wt = (unsigned)(tag & 7), field = (unsigned)(tag >> 3);
        if (field == 0 || wt == 3 || wt == 4 || wt > 5) {
            snprintf(why, wsz, "corrupt: invalid field tag 0x%llx at byte %zu", (unsigned long long)tag, start);
            return;
        }
        if (wt == 0) {
            while (p < n && (b[p] & 0x80))
                p++;
            if (p >= n) {
                snprintf(why, wsz, "truncated: field %u at byte %zu runs past the end of the file (%zu bytes)", field, start, n);
                return;
            }
            p++;
        } else if (wt == 1 || wt == 5) {
            size_t need = wt == 1 ? 8 : 4;
            if (n - p < need) {
                snprintf(why, wsz, "truncated: field %u at byte %zu runs past the end of the file (%zu bytes)", field, start, n);
                return;
            }
            p += need;
        } else {
            sh = 0;
            while (p < n && sh < 64) {
                v |= (uint64_t)(b[p] & 0x7f) << sh;
                sh += 7;
                if (!(b[p++] & 0x80))
                    break;
            }
            if (v > n - p) {
                snprintf(why, wsz, "truncated: field %u%s at byte %zu declares %llu bytes but %zu remain in the file", field,
                         field == 7 ? " (the graph)" : "", start, (unsigned long long)v, n - p);
                return;
            }
            p += v;
        }
    }
    snprintf(why, wsz, "malformed (a nested message is corrupt)");
}

static ft_status check_model(onx_ctx *c)
{
    const Onnx__ModelProto *m = c->model;
    if (!m->has_ir_version)
        return ft_err(c->err, FT_EGRAPH, "%s: the model has no ir_version", c->file);
    if (m->ir_version < 3 || m->ir_version > 10)
        return ft_err(c->err, FT_EGRAPH, "%s: ir_version %lld is not supported (ftrun reads ir_version 3 to 10)", c->file,
                      (long long)m->ir_version);
    c->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (is_default_domain(m->opset_import[i]->domain))
            c->opset = m->opset_import[i]->has_version ? (int)m->opset_import[i]->version : -1;
    if (c->opset < 0)
        return ft_err(c->err, FT_EGRAPH, "%s: the model imports no version of the default ONNX domain", c->file);
    if (c->opset < 7 || c->opset > 23)
        return ft_err(c->err, FT_EGRAPH, "%s: opset %d of the default domain is not supported (ftrun reads opsets 7 to 23)",
                      c->file, c->opset);
    if (!m->graph)
        return ft_err(c->err, FT_EGRAPH, "%s: the model has no graph", c->file);
    if (m->graph->n_sparse_initializer)
        return ft_err(c->err, FT_EGRAPH, "%s: sparse initializers are not supported", c->file);
    return FT_OK;
}

static ft_status unsupported_message(onx_ctx *c)
{
    size_t cap = 512, len = 0;
    for (int i = 0; i < c->n_unsup; i++)
        cap += strlen(c->unsup[i].text) + (c->unsup[i].key ? strlen(c->unsup[i].key) : 0) + 8;
    char *msg = ft_malloc(cap);
    if (!msg)
        return oom(c);
    len += (size_t)snprintf(msg, cap, "%s: the model uses %d thing%s ftrun does not support (nothing was run):", c->file,
                            c->n_unsup, c->n_unsup == 1 ? "" : "s");
    for (int i = 0; i < c->n_unsup && i < MAX_UNSUP_LINES; i++)
        len += (size_t)snprintf(msg + len, cap - len, "\n  %s%s%s", c->unsup[i].key ? c->unsup[i].key : "",
                                c->unsup[i].key ? " nodes " : "", c->unsup[i].text);
    if (c->n_unsup > MAX_UNSUP_LINES)
        snprintf(msg + len, cap - len, "\n  ... and %d more", c->n_unsup - MAX_UNSUP_LINES);
    ft_status st = ft_err(c->err, FT_EGRAPH, "%s", msg); /* ft_error holds 2 KiB: the head of a long list */
    free(msg);
    return st;
}

/* Drop tensors nothing reads, produces or lists (initializers and folded
 * values used only at load time), keeping indices dense. */
static ft_status compact(onx_ctx *c)
{
    ft_graph *g = c->g;
    int *used = ft_calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *used);
    if (!used)
        return oom(c);
    for (int k = 0; k < g->n_nodes; k++) {
        for (int i = 0; i < g->nodes[k].n_in; i++)
            if (g->nodes[k].in[i] >= 0)
                used[g->nodes[k].in[i]] = 1;
        for (int i = 0; i < g->nodes[k].n_out; i++)
            used[g->nodes[k].out[i]] = 1;
    }
    for (int i = 0; i < g->n_inputs; i++)
        used[g->inputs[i]] = 1;
    for (int i = 0; i < g->n_outputs; i++)
        used[g->outputs[i]] = 1;
    struct ft_strmap *tm = ft_strmap_new();
    if (!tm) {
        free(used);
        return oom(c);
    }
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        if (!used[i]) {
            free(g->tensors[i].name);
            free(g->tensors[i].value);
            used[i] = -1;
            continue;
        }
        g->tensors[n] = g->tensors[i];
        used[i] = n;
        if (ft_strmap_put(tm, g->tensors[n].name, n)) {
            /* keep the graph freeable: the rest stays as it was */
            for (int j = i + 1; j < g->n_tensors; j++)
                g->tensors[++n] = g->tensors[j];
            g->n_tensors = n + 1;
            ft_strmap_free(tm);
            free(used);
            return oom(c);
        }
        n++;
    }
    g->n_tensors = n;
    for (int k = 0; k < g->n_nodes; k++) {
        for (int i = 0; i < g->nodes[k].n_in; i++)
            if (g->nodes[k].in[i] >= 0)
                g->nodes[k].in[i] = used[g->nodes[k].in[i]];
        for (int i = 0; i < g->nodes[k].n_out; i++)
            g->nodes[k].out[i] = used[g->nodes[k].out[i]];
    }
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = used[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = used[g->outputs[i]];
    ft_strmap_free(g->tmap);
    g->tmap = tm;
    free(used);
    return FT_OK;
}

static ft_status describe(onx_ctx *c)
{
    const Onnx__ModelProto *m = c->model;
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "ONNX model, ir_version %lld, opset %d", (long long)m->ir_version, c->opset);
    for (size_t i = 0; i < m->n_opset_import && len < sizeof buf; i++)
        if (!is_default_domain(m->opset_import[i]->domain))
            len += (size_t)snprintf(buf + len, sizeof buf - len, ", %s opset %lld", m->opset_import[i]->domain,
                                    (long long)m->opset_import[i]->version);
    if (m->producer_name && *m->producer_name && len < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "; producer %s%s%s", m->producer_name,
                                m->producer_version && *m->producer_version ? " " : "", nz(m->producer_version));
    if (len < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "; %d ONNX nodes, %d folded at load time", (int)m->graph->n_node,
                                c->n_folded);
    for (int i = 0; i < c->n_fold_kinds && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %d", i ? ", " : " (", c->fold_names[i], c->fold_counts[i]);
    if (c->n_fold_kinds && len < sizeof buf)
        snprintf(buf + len, sizeof buf - len, ")");
    return (c->g->about = ft_strdup(buf)) ? FT_OK : oom(c);
}

static ft_status import_model(onx_ctx *c)
{
    ft_status st = check_model(c);
    if (st)
        return st;
    const Onnx__GraphProto *gp = c->model->graph;
    c->init = gp->initializer;
    for (size_t i = 0; i < gp->n_initializer; i++)
        if (ft_strmap_put(c->inits, nz(gp->initializer[i]->name), (int)i))
            return oom(c);
    for (size_t i = 0; i < gp->n_output; i++)
        if (ft_strmap_put(c->outnames, nz(gp->output[i]->name), (int)i))
            return oom(c);
    ft_dimenv *env = ft_dimenv_new(c->opts);
    if (!env)
        return oom(c);
    st = declare_inputs(c, env, gp);
    for (size_t i = 0; i < gp->n_input && !st; i++)
        if (ft_strmap_get(c->inits, nz(gp->input[i]->name)) < 0) /* an input with an initializer is a weight */
            st = import_input(c, env, gp->input[i]);
    if (!st)
        st = ft_dimenv_finish(env, c->file, c->err);
    ft_dimenv_free(env);
    if (!st)
        st = import_nodes(c, gp);
    for (size_t i = 0; i < gp->n_output && !st; i++)
        st = import_output(c, gp->output[i], (int)i);
    if (!st && c->n_unsup)
        st = unsupported_message(c);
    if (!st && c->g->n_outputs == 0)
        st = ft_err(c->err, FT_EGRAPH, "%s: the model has no outputs", c->file);
    return st;
}

static ft_status new_graph(const char *path, ft_graph **out, ft_error *err)
{
    ft_graph *g = ft_calloc(1, sizeof *g);
    if (!g)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    *out = g;
    g->file = ft_strdup(path);
    const char *slash = strrchr(path, '/');
    g->dir = ft_strdup(slash ? path : ".");
    if (g->dir && slash)
        g->dir[slash - path == 0 ? 1 : slash - path] = 0;
    g->name = ft_strdup(slash ? slash + 1 : path);
    if (g->name) {
        char *dot = strrchr(g->name, '.');
        if (dot && dot != g->name)
            *dot = 0;
    }
    g->tmap = ft_strmap_new();
    if (!g->file || !g->dir || !g->name || !g->tmap)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    return FT_OK;
}

int ft_onnx_sniff(const unsigned char *buf, size_t n)
{
    /* ir_version (field 1, varint) is what every writer puts first; a
     * producer_name or graph first is accepted too */
    return n >= 2 && (buf[0] == 0x08 || buf[0] == 0x12 || buf[0] == 0x3a);
}

ft_status ft_onnx_load(const char *path, const unsigned char *buf, size_t len, const ft_load_opts *opts,
                       ft_graph **out, ft_error *err)
{
    *out = NULL;
    onx_ctx cx = {.file = path, .opts = opts, .err = err}, *c = &cx;
    ft_status st = new_graph(path, &c->g, err);
    if (!st) {
        c->model = onnx__model_proto__unpack(NULL, len, buf);
        if (!c->model) {
            char why[256];
            diagnose(buf, len, why, sizeof why);
            st = ft_err(err, FT_EGRAPH, "%s: not a valid ONNX model: the protobuf is %s", path, why);
        }
    }
    c->names = ft_strmap_new();
    c->inits = ft_strmap_new();
    c->poisoned = ft_strmap_new();
    c->outnames = ft_strmap_new();
    if (!st && (!c->names || !c->inits || !c->poisoned || !c->outnames))
        st = oom(c);
    if (!st)
        st = import_model(c);
    /* the emitted nodes become the graph's, on success and failure alike, so
     * that ft_graph_free releases them */
    ft_graph *g = c->g;
    if (g) {
        g->nodes = ft_calloc((size_t)(c->n_nodes ? c->n_nodes : 1), sizeof *g->nodes);
        if (!g->nodes) {
            for (int i = 0; i < c->n_nodes; i++) {
                ft_node *fn = c->nodes[i];
                free(fn->name);
                free(fn->in);
                free(fn->out);
                free(fn); /* attrs of a failed import may leak here, on out of memory only */
            }
            st = st ? st : oom(c);
        } else {
            for (int i = 0; i < c->n_nodes; i++) {
                g->nodes[i] = *c->nodes[i];
                free(c->nodes[i]);
            }
            g->n_nodes = c->n_nodes;
        }
    }
    if (!st)
        st = compact(c);
    if (!st)
        st = describe(c);
    free(c->nodes);
    for (int i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    for (int i = 0; i < c->n_unsup; i++) {
        free(c->unsup[i].key);
        free(c->unsup[i].text);
    }
    free(c->unsup);
    ft_strmap_free(c->names);
    ft_strmap_free(c->inits);
    ft_strmap_free(c->poisoned);
    ft_strmap_free(c->outnames);
    if (c->model)
        onnx__model_proto__free_unpacked(c->model, NULL);
    if (st) {
        ft_graph_free(g);
        return st;
    }
    *out = g;
    return FT_OK;
}
