/* The side of the ONNX importer that node mappers and the folder call
 * (onnx_import.h, onnx_internal.h): reading a node's inputs and attributes,
 * creating tensors and emitting ftrun nodes into the graph being built. The
 * node loop that drives it is onnx_reader.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

/* ---- small helpers ---- */

ft_status onx_oom(onx_ctx *c)
{
    return c->last = ft_err(c->err, FT_ERUNTIME, "%s: out of memory while importing the model", c->file);
}

static void *keep(onx_ctx *c, void *p)
{
    if (!p)
        return NULL;
    if (ft_grow(&c->owned, &c->cap_owned, c->n_owned, sizeof *c->owned, 64)) {
        free(p);
        return NULL;
    }
    return c->owned[c->n_owned++] = p;
}

int onx_add_tensor(onx_ctx *c, const char *want)
{
    ft_graph *g = c->g;
    char *name = ft_strdup(want);
    if (!name)
        return -1;
    /* a name taken: "name_k", k from where the last search for it stopped
     * (a loop body unrolled n times names n tensors alike: no O(n^2) search) */
    int k = ft_strmap_get(g->tmap, name) >= 0 ? ft_strmap_get(c->suffix, want) : 0;
    for (k = k < 2 ? 2 : k; ft_strmap_get(g->tmap, name) >= 0; k++) {
        free(name);
        size_t n = strlen(want) + 24;
        if (!(name = ft_malloc(n)))
            return -1;
        snprintf(name, n, "%s_%d", want, k);
    }
    if (strcmp(name, want) != 0 && ft_strmap_put(c->suffix, want, k)) {
        free(name);
        return -1;
    }
    if (ft_grow(&g->tensors, &g->cap_tensors, g->n_tensors, sizeof *g->tensors, 64)) {
        free(name);
        return -1;
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

int onx_bind(onx_ctx *c, const char *onnx_name, int t)
{
    return ft_strmap_put(c->names, onnx_name, t) ? -1 : t;
}

int onx_unbind(onx_ctx *c, const char *name) { return ft_strmap_put(c->names, name, -1); }

/* A constant tensor named `name` holding a's value (taken over). */
int onx_add_const(onx_ctx *c, const char *name, ft_npy *a, const char *source)
{
    /* a graph output keeps its name for the node that will copy the value out */
    char alt[FT_MAX_NAME + 16];
    if (ft_strmap_get(c->outnames, name) >= 0) {
        snprintf(alt, sizeof alt, "%.1024s/value", name);
        name = alt;
    }
    int t = onx_add_tensor(c, name);
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

/* Tensor of an ONNX value name (initializers are decoded on first use), or -1
 * when the name is unknown, -2 on failure (c->last). */
int onx_resolve(onx_ctx *c, const char *name)
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
    int taken = 0;
    if (c->init_t[k] >= 0) { /* its raw_data went to that tensor: the same value again, copied */
        const ft_tensor *src = &c->g->tensors[c->init_t[k]];
        memset(&a, 0, sizeof a);
        a.dtype = src->dtype, a.shape = src->shape, a.nbytes = src->value_bytes;
        if (!(a.data = ft_malloc(a.nbytes))) {
            onx_oom(c);
            return -2;
        }
        memcpy(a.data, src->value, a.nbytes);
    } else if ((c->last = ft_onnx_tensor_take(c->init[k], c->file, what, c->g->dir, c->opts->allow_external, &a,
                                              &taken, c->err)))
        return -2;
    t = onx_add_const(c, name, &a, "initializer");
    free(a.data);
    if (t < 0 || onx_bind(c, name, t) < 0) {
        onx_oom(c);
        return -2;
    }
    if (taken)
        c->init_t[k] = t;
    return t;
}

/* ---- unsupported records ---- */

ft_status onx_record(onx_ctx *c, const char *key, const char *text)
{
    if (key)
        for (int i = 0; i < c->n_unsup; i++)
            if (c->unsup[i].key && !strcmp(c->unsup[i].key, key)) {
                size_t l = strlen(c->unsup[i].text) + strlen(text) + 3;
                char *nt = ft_realloc(c->unsup[i].text, l);
                if (!nt)
                    return onx_oom(c);
                strcat(strcat(nt, ", "), text);
                c->unsup[i].text = nt;
                return FT_EGRAPH;
            }
    if (ft_grow(&c->unsup, &c->cap_unsup, c->n_unsup, sizeof *c->unsup, 16))
        return onx_oom(c);
    unsup_rec *r = &c->unsup[c->n_unsup];
    r->key = key ? ft_strdup(key) : NULL;
    r->text = ft_strdup(text);
    if ((key && !r->key) || !r->text) {
        free(r->key);
        free(r->text);
        return onx_oom(c);
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
    ft_status st = onx_record(c, NULL, line);
    c->unsup_flag = 1;
    return st;
}

ft_status onx_error(onx_ctx *c, const onx_node *n, ft_status code, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
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
    if (a->s.len)
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
    int t = onx_resolve(c, n->pb->input[k]);
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

const ft_tensor *onx_in_value(onx_ctx *c, const onx_node *n, int k, ft_status *st)
{
    return onx_value_of(c, onx_in(c, n, k), st);
}

int onx_runtime_in(onx_ctx *c, const onx_node *n, int k, ft_status *st)
{
    int t = onx_in(c, n, k);
    *st = FT_OK;
    if (t < 0 || onx_value_of(c, t, st) || *st)
        return -1;
    return c->g->tensors[t].flags & (FT_TF_VALUE | FT_TF_INPUT) ? -1 : t;
}

const ft_tensor *onx_value_of(onx_ctx *c, int ti, ft_status *st)
{
    const ft_tensor *t = ti >= 0 ? &c->g->tensors[ti] : NULL;
    *st = FT_OK;
    if (!t || (t->flags & FT_TF_VALUE))
        return t;
    if (!c->opts || !c->opts->eval || t->producer < 0 || (t->flags & FT_TF_DYNAMIC))
        return NULL;
    if ((*st = onx_infer_pending(c)))
        return NULL;
    if (c->cap_vcache < c->g->n_tensors) { /* one entry per tensor, the new ones empty */
        int cap = c->g->n_tensors + c->g->n_tensors / 2 + 64;
        void **vc = ft_realloc(c->vcache, (size_t)cap * sizeof *vc);
        if (vc)
            c->vcache = vc;
        ft_tensor **cp = vc ? ft_realloc(c->vcopy, (size_t)cap * sizeof *cp) : NULL;
        if (!cp) {
            *st = onx_oom(c);
            return NULL;
        }
        c->vcopy = cp;
        memset(vc + c->cap_vcache, 0, (size_t)(cap - c->cap_vcache) * sizeof *vc);
        memset(cp + c->cap_vcache, 0, (size_t)(cap - c->cap_vcache) * sizeof *cp);
        c->cap_vcache = cap;
    }
    if (c->vcopy[ti])
        return c->vcopy[ti];
    if ((*st = c->last = c->opts->eval(c->g, c->nodes, ti, c->vcache, c->err)) || !c->vcache[ti])
        return NULL;
    /* a copy of the tensor holding the value: the tensor itself stays the
     * output of the nodes that compute it at run time */
    ft_tensor *copy = keep(c, ft_malloc(sizeof *copy));
    if (!copy) {
        *st = onx_oom(c);
        return NULL;
    }
    void *v = c->vcache[ti];
    c->vcopy[ti] = copy;
    *copy = *t;
    copy->value = v;
    copy->value_bytes = ft_tensor_bytes(t);
    copy->flags |= FT_TF_VALUE;
    copy->source = "--input";
    onx_note_fold(c, "computed at load");
    return copy;
}

static ft_status need_const(onx_ctx *c, const onx_node *n, int k, const char *reason, const ft_tensor **out)
{
    ft_status est;
    const ft_tensor *v = onx_in_value(c, n, k, &est);
    if (est)
        return est;
    if (v) {
        *out = v;
        return FT_OK;
    }
    const ft_tensor *t = onx_in_tensor(c, n, k);
    *out = NULL;
    if (!t)
        return FT_OK;
    /* a graph input the user can give with -i is an error to fix; a value
     * computed from the data is a run-time shape, which ftrun cannot plan */
    if (!(t->flags & FT_TF_VALUE) && (t->flags & FT_TF_INPUT))
        return onx_error(c, n, FT_EGRAPH, "input %d ('%s') must be known at load time: %s; it is a graph input "
                         "without a value (give it with -i)", k, n->pb->input[k],
                         reason ? reason : "ftrun takes it as a parameter");
    if (!(t->flags & FT_TF_VALUE))
        return onx_unsupported(c, n, "input %d is computed at run time; ftrun needs it known at load time (%s; "
                               "data-dependent shapes are not supported)", k,
                               reason ? reason : "ftrun takes it as a parameter");
    *out = t;
    return FT_OK;
}

/* Input k's values as int64 (ints, which refuses a floating-point input) or
 * double: an array owned by the context stored into *vp (an int64_t ** or a
 * double **), *count of them (-1: no input). */
static ft_status const_values(onx_ctx *c, const onx_node *n, int k, const char *reason, int ints, void *vp, int *count)
{
    const ft_tensor *t;
    ft_status st = need_const(c, n, k, reason, &t);
    *count = -1;
    if (st || !t)
        return st;
    if (ints && !ft_dtype_is_int(t->dtype) && t->dtype != FT_BOOL)
        return onx_error(c, n, FT_EGRAPH, "input %d ('%s') must hold integers, got %s", k, n->pb->input[k],
                         ft_dtype_name(t->dtype));
    uint64_t m = ft_numel(&t->shape);
    void *a = keep(c, ft_malloc((size_t)(m ? m : 1) * sizeof(int64_t)));
    if (!a)
        return onx_oom(c);
    for (uint64_t i = 0; i < m; i++) {
        if (ints)
            ((int64_t *)a)[i] = ft_load_i64(t->value, t->dtype, i);
        else
            ((double *)a)[i] = ft_load_f64(t->value, t->dtype, i);
    }
    memcpy(vp, &a, sizeof a);
    *count = (int)m;
    return FT_OK;
}

ft_status onx_const_ints(onx_ctx *c, const onx_node *n, int k, const char *reason, const int64_t **v, int *count)
{
    return const_values(c, n, k, reason, 1, v, count);
}

ft_status onx_const_int1(onx_ctx *c, const onx_node *n, int k, const char *what, const char *reason, int64_t *out)
{
    const int64_t *v;
    int nv;
    ft_status st = onx_const_ints(c, n, k, reason, &v, &nv);
    if (st)
        return st;
    if (nv != 1)
        return onx_error(c, n, FT_EGRAPH, "input %d (%s) holds %d values; expected one", k, what, nv);
    *out = v[0];
    return FT_OK;
}

ft_status onx_const_float_or(onx_ctx *c, const onx_node *n, int k, const char *reason, double *val)
{
    const double *v;
    int nv;
    ft_status st = onx_const_floats(c, n, k, reason, &v, &nv);
    if (!st && nv >= 1)
        *val = v[0];
    return st;
}

ft_status onx_const_floats(onx_ctx *c, const onx_node *n, int k, const char *reason, const double **v, int *count)
{
    return const_values(c, n, k, reason, 0, v, count);
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
    if ((t = onx_add_tensor(c, name)) < 0 || onx_bind(c, name, t) < 0) {
        onx_oom(c);
        return -1;
    }
    return t;
}

int onx_tmp(onx_ctx *c, const onx_node *n, const char *suffix)
{
    char name[FT_MAX_NAME + 64];
    snprintf(name, sizeof name, "%.1000s/%s", n->name, suffix);
    int t = onx_add_tensor(c, name);
    if (t < 0)
        onx_oom(c);
    return t;
}

int onx_const_new(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, const ft_shape *s, const void *data)
{
    ft_npy a = {.dtype = dt, .shape = *s};
    a.nbytes = (size_t)ft_numel(s) * ft_dtype_size(dt);
    if (!(a.data = ft_malloc(a.nbytes ? a.nbytes : 1))) {
        onx_oom(c);
        return -1;
    }
    if (a.nbytes)
        memcpy(a.data, data, a.nbytes);
    char name[FT_MAX_NAME + 64];
    snprintf(name, sizeof name, "%.1000s/%s", n->name, suffix);
    int t = onx_add_const(c, name, &a, "Constant");
    free(a.data);
    if (t < 0)
        onx_oom(c);
    return t;
}

ft_status onx_const_out(onx_ctx *c, const onx_node *n, int k, ft_npy *a)
{
    if (k >= n->n_out || !n->pb->output[k] || !*n->pb->output[k]) {
        ft_npy_clear(a);
        return FT_OK;
    }
    int t = onx_add_const(c, n->pb->output[k], a, "folded");
    ft_npy_clear(a);
    if (t < 0 || onx_bind(c, n->pb->output[k], t) < 0)
        return onx_oom(c);
    return FT_OK;
}

ft_status onx_alias(onx_ctx *c, const onx_node *n, int out_k, int src)
{
    if (out_k >= n->n_out || !n->pb->output[out_k] || !*n->pb->output[out_k])
        return FT_OK;
    return onx_bind(c, n->pb->output[out_k], src) < 0 ? onx_oom(c) : FT_OK;
}

ft_node *onx_emit(onx_ctx *c, const onx_node *n, ft_op op, const int *in, int n_in, const int *out, int n_out)
{
    int ins[64], outs[64];
    if ((!in && n->n_in > 64) || (!out && n->n_out > 64)) { /* ftrun's nodes take at most 64 (graph/validate.c) */
        c->last = onx_unsupported(c, n, "%d %s (an ftrun node takes at most 64)",
                                  !in && n->n_in > 64 ? n->n_in : n->n_out, !in && n->n_in > 64 ? "inputs" : "outputs");
        return NULL;
    }
    if (!in) {
        n_in = n->n_in;
        for (int k = 0; k < n_in; k++)
            ins[k] = onx_in(c, n, k);
        while (n_in > 0 && ins[n_in - 1] < 0)
            n_in--;
        in = ins;
    }
    if (!out) {
        n_out = n->n_out;
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
    for (int k = 0; k < oi->min_in; k++)
        if (in[k] < 0) {
            onx_error(c, n, FT_EGRAPH, "input %d, which ftrun's %s needs, is missing", k, oi->name);
            return NULL;
        }
    for (int k = 0; k < n_out; k++)
        if (out[k] < 0 || c->g->tensors[out[k]].producer >= 0 || (c->g->tensors[out[k]].flags & FT_TF_VALUE)) {
            if (out[k] < 0 && c->last == FT_ERUNTIME) /* making it ran out of memory (onx_out): that error stands */
                return NULL;
            onx_error(c, n, FT_EGRAPH, "output %d is missing or produced twice", k);
            return NULL;
        }
    if (ft_grow(&c->nodes, &c->cap_nodes, c->n_nodes, sizeof *c->nodes, 64)) {
        onx_oom(c);
        return NULL;
    }
    ft_node *fn = ft_calloc(1, sizeof *fn);
    if (!fn) {
        onx_oom(c);
        return NULL;
    }
    c->nodes[c->n_nodes] = fn;
    fn->op = op;
    fn->guard = c->guard;
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
    if (!fn->name || !fn->in || !fn->out || ft_node_default_attrs(fn)) {
        onx_oom(c);
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
    return (a->s = ft_strdup(v)) ? FT_OK : onx_oom(c);
}

/* A list attribute (ints or floats: elements of 8 bytes) set to a copy of v. */
static ft_status set_list(onx_ctx *c, ft_node *fn, const char *name, ft_attr_type type, const void *v, int count)
{
    ft_attr_val *a = set_attr(c, fn, name, type);
    void *p = ft_malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    if (type == FT_ATTR_INTS)
        free(a->ints), a->ints = p;
    else
        free(a->floats), a->floats = p;
    a->n = count;
    if (!p)
        return onx_oom(c);
    if (count > 0)
        memcpy(p, v, (size_t)count * sizeof(int64_t));
    return FT_OK;
}

ft_status onx_set_ints(onx_ctx *c, ft_node *fn, const char *name, const int64_t *v, int count)
{
    return set_list(c, fn, name, FT_ATTR_INTS, v, count);
}

ft_status onx_set_floats(onx_ctx *c, ft_node *fn, const char *name, const double *v, int count)
{
    return set_list(c, fn, name, FT_ATTR_FLOATS, v, count);
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
