/* Graph documents made from a loaded graph (ftg.h): the concrete shape of a
 * declaration, and a whole document for graphs that came from another format
 * (`ftrun convert`). The values themselves are added by the writers through
 * ft_graph_doc_rewrite's fill. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftg.h"

static cJSON *shape_json(const ft_shape *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->rank; i++) {
        cJSON *d = cJSON_CreateNumber((double)s->dims[i]);
        if (!d || !cJSON_AddItemToArray(a, d)) {
            cJSON_Delete(d);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

int ft_doc_set_shape(cJSON *decl, const ft_shape *s)
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(decl, "shape"), *it;
    int named = 0;
    cJSON_ArrayForEach(it, old) named |= cJSON_IsString(it);
    if (!named)
        return 0;
    cJSON *a = shape_json(s);
    if (!a || !cJSON_ReplaceItemInObjectCaseSensitive(decl, "shape", a)) {
        cJSON_Delete(a);
        return -1;
    }
    return 0;
}

/* A float as JSON: a number, or "nan"/"inf"/"-inf" (json_reader.c reads those). */
static cJSON *float_json(double v)
{
    if (isnan(v))
        return cJSON_CreateString("nan");
    if (isinf(v))
        return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

static cJSON *attr_json(const ft_attr_def *d, const ft_attr_val *v)
{
    switch (d->type) {
    case FT_ATTR_INT:
        return cJSON_CreateNumber((double)v->i);
    case FT_ATTR_FLOAT:
        return float_json(v->f);
    case FT_ATTR_STRING:
        return cJSON_CreateString(v->s ? v->s : d->s);
    case FT_ATTR_INTS:
    case FT_ATTR_FLOATS: {
        cJSON *a = cJSON_CreateArray();
        for (int k = 0; a && k < v->n; k++) {
            cJSON *e = d->type == FT_ATTR_INTS ? cJSON_CreateNumber((double)v->ints[k]) : float_json(v->floats[k]);
            if (!e || !cJSON_AddItemToArray(a, e)) {
                cJSON_Delete(e);
                cJSON_Delete(a);
                return NULL;
            }
        }
        return a;
    }
    }
    return NULL;
}

static int add_names(cJSON *arr, const ft_graph *g, const int *idx, int n)
{
    for (int k = 0; k < n; k++) {
        cJSON *s = idx[k] < 0 ? cJSON_CreateNull() : cJSON_CreateString(g->tensors[idx[k]].name);
        if (!s || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            return -1;
        }
    }
    return 0;
}

static int add_node(cJSON *nodes, const ft_graph *g, const ft_node *n)
{
    cJSON *jn = cJSON_CreateObject();
    if (!jn || !cJSON_AddItemToArray(nodes, jn)) {
        cJSON_Delete(jn);
        return -1;
    }
    cJSON *in, *out, *attrs;
    if (!cJSON_AddStringToObject(jn, "name", n->name) || !cJSON_AddStringToObject(jn, "op", ft_op_name(n->op)) ||
        !(in = cJSON_AddArrayToObject(jn, "inputs")) || !(out = cJSON_AddArrayToObject(jn, "outputs")) ||
        add_names(in, g, n->in, n->n_in) || add_names(out, g, n->out, n->n_out) ||
        (ft_node_guard(n) >= 0 && !cJSON_AddStringToObject(jn, "guard", g->tensors[ft_node_guard(n)].name)))
        return -1;
    const ft_op_info *oi = ft_op_get(n->op);
    int any = 0;
    for (int k = 0; k < oi->n_attrs; k++)
        any |= n->attrs[k].present;
    if (!any)
        return 0;
    if (!(attrs = cJSON_AddObjectToObject(jn, "attrs")))
        return -1;
    for (int k = 0; k < oi->n_attrs; k++) {
        if (!n->attrs[k].present)
            continue;
        cJSON *v = attr_json(&oi->attrs[k], &n->attrs[k]);
        if (!v || !cJSON_AddItemToObject(attrs, oi->attrs[k].name, v)) {
            cJSON_Delete(v);
            return -1;
        }
    }
    return 0;
}

char *ft_graph_doc_make(const ft_graph *g, size_t *len, ft_error *err)
{
    cJSON *root = cJSON_CreateObject(), *tensors, *inputs, *outputs, *nodes;
    int bad = !root || !cJSON_AddNumberToObject(root, "ftrun", 1) || !cJSON_AddStringToObject(root, "name", g->name) ||
              !(tensors = cJSON_AddObjectToObject(root, "tensors")) || !(inputs = cJSON_AddArrayToObject(root, "inputs")) ||
              !(outputs = cJSON_AddArrayToObject(root, "outputs")) || !(nodes = cJSON_AddArrayToObject(root, "nodes"));
    for (int i = 0; i < g->n_tensors && !bad; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (!(t->flags & (FT_TF_INPUT | FT_TF_OUTPUT | FT_TF_VALUE)))
            continue;
        cJSON *decl = cJSON_AddObjectToObject(tensors, t->name), *s = NULL;
        bad = !decl || !cJSON_AddStringToObject(decl, "dtype", ft_dtype_name(t->dtype)) || !(s = shape_json(&t->shape));
        if (!bad && !cJSON_AddItemToObject(decl, "shape", s)) {
            cJSON_Delete(s);
            bad = 1;
        }
    }
    bad = bad || add_names(inputs, g, g->inputs, g->n_inputs) || add_names(outputs, g, g->outputs, g->n_outputs);
    for (int k = 0; k < g->n_nodes && !bad; k++)
        bad = add_node(nodes, g, &g->nodes[k]);
    char *text = bad ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) {
        ft_err(err, FT_ERUNTIME, "%s: out of memory making the graph document", g->file);
        return NULL;
    }
    /* cJSON's allocator (json_reader.c) may not be malloc: hand back a malloc copy */
    char *copy = ft_strdup(text);
    cJSON_free(text);
    if (!copy)
        ft_err(err, FT_ERUNTIME, "%s: out of memory making the graph document", g->file);
    else
        *len = strlen(copy);
    return copy;
}
