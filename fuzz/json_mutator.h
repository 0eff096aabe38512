/* Structure-aware mutation of JSON graph documents for the json and ftg
 * harnesses: byte-level mutations rarely keep a graph valid far enough to
 * reach an op's inference with odd attributes or shapes, so this one edits
 * the parsed document (numbers, names, arrays, attributes from the op's
 * schema, whole new nodes) and prints it back. */
#ifndef FT_FUZZ_JSON_MUTATOR_H
#define FT_FUZZ_JSON_MUTATOR_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "graph/ops.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

typedef struct jm_rng {
    uint64_t s;
} jm_rng;

static uint32_t jm_next(jm_rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}
static uint32_t jm_below(jm_rng *r, uint32_t n) { return n ? jm_next(r) % n : 0; }

static const double jm_ints[] = {0, 1, -1, 2, -2, 3, 4, 5, 7, 8, 9, 16, 64, 127, 128, 255, 256, 65536, 2147483647.0,
                                 -2147483648.0, 4294967296.0, 9007199254740992.0, 9223372036854775807.0,
                                 -9223372036854775808.0, 1099511627776.0};
static const double jm_floats[] = {0.5, -0.5, 1e-30, 1e30, 1e308, -1e308, 3.75, 0.1, -0.0, 4e-320};
static const char *const jm_dtypes[] = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool", "f128", ""};
static const char *const jm_strings[] = {"none", "tanh", "constant", "reflect", "edge", "wrap", "SAME_UPPER", "SAME_LOWER",
                                         "VALID", "NOTSET", "forward", "backward", "ortho", "linear", "nearest", "cubic",
                                         "ij,jk->ik", "...i,...i->...", "ii->i", "a->", "i,i", "->", "bij,bjk->bik",
                                         "half_pixel", "asymmetric", "align_corners", "round_prefer_floor", "floor",
                                         "ceil", "f32", "i64", "bool", "", "x", "w.bin", "w.npy", "../w.npy"};

/* Every item of the document with its parent, up to a limit. */
typedef struct jm_items {
    cJSON *item[4096], *parent[4096];
    int n;
} jm_items;

static void jm_collect(jm_items *s, cJSON *j, cJSON *parent)
{
    if (s->n >= 4096)
        return;
    s->item[s->n] = j;
    s->parent[s->n++] = parent;
    for (cJSON *c = j->child; c; c = c->next)
        jm_collect(s, c, j);
}

/* cJSON keeps the last item of a list in child->prev for appending, and its
 * ReplaceItemViaPointer (1.7.15) leaves that stale when the last item is
 * replaced: relink every list before the next edit. */
static void jm_relink(cJSON *j)
{
    cJSON *last = NULL;
    for (cJSON *c = j->child; c; c = c->next) {
        if (c != j->child)
            c->prev = last;
        last = c;
        jm_relink(c);
    }
    if (j->child)
        j->child->prev = last;
}

/* Inserts item before position at (appends past the end). cJSON 1.7.15's
 * cJSON_InsertItemInArray drops an item inserted in the middle. */
static void jm_insert(cJSON *arr, int at, cJSON *item)
{
    if (!item)
        return;
    cJSON **link = &arr->child;
    for (int i = 0; i < at && *link; i++)
        link = &(*link)->next;
    item->next = *link;
    *link = item;
    jm_relink(arr);
}

/* A name some node or declaration uses, or a fresh one. */
static const char *jm_tensor_name(jm_rng *r, cJSON *doc)
{
    const char *pool[256];
    int n = 0;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "tensors"), *it;
    if (cJSON_IsObject(t))
        cJSON_ArrayForEach(it, t) if (n < 256) pool[n++] = it->string;
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes"), *nd;
    if (cJSON_IsArray(nodes))
        cJSON_ArrayForEach(nd, nodes)
        {
            cJSON *o = cJSON_GetObjectItemCaseSensitive(nd, "outputs");
            if (cJSON_IsArray(o))
                cJSON_ArrayForEach(it, o) if (cJSON_IsString(it) && n < 256) pool[n++] = it->valuestring;
        }
    if (!n || jm_below(r, 8) == 0) {
        static char fresh[16];
        snprintf(fresh, sizeof fresh, "t%u", jm_below(r, 100));
        return fresh;
    }
    return pool[jm_below(r, (uint32_t)n)];
}

static double jm_int(jm_rng *r) { return jm_ints[jm_below(r, sizeof jm_ints / sizeof *jm_ints)]; }

static cJSON *jm_attr_value(jm_rng *r, const ft_attr_def *d)
{
    ft_attr_type ty = d ? d->type : (ft_attr_type)jm_below(r, 5);
    switch (ty) {
    case FT_ATTR_INT: return cJSON_CreateNumber(jm_below(r, 3) ? (double)jm_below(r, 6) - 2 : jm_int(r));
    case FT_ATTR_FLOAT:
        return cJSON_CreateNumber(jm_below(r, 2) ? jm_floats[jm_below(r, sizeof jm_floats / sizeof *jm_floats)] : jm_int(r));
    case FT_ATTR_STRING:
        if (d && d->s[0] && jm_below(r, 4) == 0)
            return cJSON_CreateString(d->s);
        return cJSON_CreateString(jm_strings[jm_below(r, sizeof jm_strings / sizeof *jm_strings)]);
    case FT_ATTR_INTS:
    case FT_ATTR_FLOATS: {
        cJSON *a = cJSON_CreateArray();
        int n = (int)jm_below(r, 9);
        for (int i = 0; i < n && a; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(jm_below(r, 4) ? (double)jm_below(r, 8) - 3 : jm_int(r)));
        return a;
    }
    }
    return cJSON_CreateNull();
}

/* Sets a random attribute of node object nd (of its op's schema mostly). */
static void jm_set_attr(jm_rng *r, cJSON *nd)
{
    cJSON *jop = cJSON_GetObjectItemCaseSensitive(nd, "op");
    ft_op op;
    const ft_op_info *oi = NULL;
    if (cJSON_IsString(jop) && ft_op_lookup(jop->valuestring, &op) == 0)
        oi = ft_op_get(op);
    if (!oi || !oi->n_attrs || jm_below(r, 10) == 0)
        oi = ft_op_get((ft_op)jm_below(r, FT_OP_COUNT));
    if (!oi->n_attrs)
        return;
    const ft_attr_def *d = &oi->attrs[jm_below(r, (uint32_t)oi->n_attrs)];
    cJSON *attrs = cJSON_GetObjectItemCaseSensitive(nd, "attrs");
    if (!cJSON_IsObject(attrs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(nd, "attrs");
        attrs = cJSON_AddObjectToObject(nd, "attrs");
        if (!attrs)
            return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(attrs, d->name);
    cJSON_AddItemToObject(attrs, d->name, jm_attr_value(r, jm_below(r, 8) ? d : NULL));
}

/* A node of a random op reading existing tensors, appended to "nodes" (and
 * its output to "outputs" half the time). */
static void jm_add_node(jm_rng *r, cJSON *doc)
{
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    if (!cJSON_IsArray(nodes))
        return;
    const ft_op_info *oi = ft_op_get((ft_op)jm_below(r, FT_OP_COUNT));
    cJSON *nd = cJSON_CreateObject();
    if (!nd)
        return;
    cJSON_AddStringToObject(nd, "op", oi->name);
    cJSON *in = cJSON_AddArrayToObject(nd, "inputs"), *out = cJSON_AddArrayToObject(nd, "outputs");
    int max_in = oi->max_in < 0 ? oi->min_in + 3 : oi->max_in;
    int nin = oi->min_in + (int)jm_below(r, (uint32_t)(max_in - oi->min_in + 1));
    for (int i = 0; i < nin && in; i++)
        cJSON_AddItemToArray(in, jm_below(r, 12) ? cJSON_CreateString(jm_tensor_name(r, doc)) : cJSON_CreateNull());
    int max_out = oi->max_out < 0 ? oi->min_out + 2 : oi->max_out;
    int nout = oi->min_out + (int)jm_below(r, (uint32_t)(max_out - oi->min_out + 1));
    char name[32];
    unsigned base = jm_next(r) % 100000;
    for (int i = 0; i < nout && out; i++) {
        snprintf(name, sizeof name, "n%u_%d", base, i);
        cJSON_AddItemToArray(out, cJSON_CreateString(name));
    }
    for (int k = (int)jm_below(r, 4); k > 0; k--)
        jm_set_attr(r, nd);
    cJSON_AddItemToArray(nodes, nd);
    cJSON *outs = cJSON_GetObjectItemCaseSensitive(doc, "outputs");
    if (cJSON_IsArray(outs) && nout && jm_below(r, 2))
        cJSON_AddItemToArray(outs, cJSON_CreateString(name));
}

static void jm_mutate_item(jm_rng *r, cJSON *doc, cJSON *j, cJSON *parent)
{
    const char *key = j->string ? j->string : parent && parent->string ? parent->string : "";
    cJSON *nw = NULL;
    if (cJSON_IsNumber(j)) {
        double v = j->valuedouble;
        switch (jm_below(r, 6)) {
        case 0: case 1: v = jm_int(r); break;
        case 2: v = jm_floats[jm_below(r, sizeof jm_floats / sizeof *jm_floats)]; break;
        case 3: v = v + 1; break;
        case 4: v = v - 1; break;
        default: v = jm_below(r, 2) ? -v : v * 2; break;
        }
        nw = cJSON_CreateNumber(v);
    } else if (cJSON_IsString(j)) {
        if (!strcmp(key, "op") || jm_below(r, 16) == 0)
            nw = cJSON_CreateString(ft_op_name((ft_op)jm_below(r, FT_OP_COUNT)));
        else if (!strcmp(key, "dtype") || !strcmp(key, "to"))
            nw = cJSON_CreateString(jm_dtypes[jm_below(r, sizeof jm_dtypes / sizeof *jm_dtypes)]);
        else if (!strcmp(key, "inputs") || !strcmp(key, "outputs") || jm_below(r, 2))
            nw = cJSON_CreateString(jm_tensor_name(r, doc));
        else
            nw = cJSON_CreateString(jm_strings[jm_below(r, sizeof jm_strings / sizeof *jm_strings)]);
    } else if (cJSON_IsArray(j)) {
        int n = cJSON_GetArraySize(j);
        switch (jm_below(r, 5)) {
        case 0:
            if (n)
                cJSON_DeleteItemFromArray(j, (int)jm_below(r, (uint32_t)n));
            return;
        case 1:
            if (n)
                cJSON_AddItemToArray(j, cJSON_Duplicate(cJSON_GetArrayItem(j, (int)jm_below(r, (uint32_t)n)), 1));
            return;
        case 2: {
            cJSON *v = (!strcmp(key, "inputs") || !strcmp(key, "outputs")) ? cJSON_CreateString(jm_tensor_name(r, doc))
                                                                             : cJSON_CreateNumber((double)jm_below(r, 6) - 1);
            jm_insert(j, jm_below(r, 2) ? (int)jm_below(r, (uint32_t)n + 1) : n, v);
            return;
        }
        case 3:
            while (cJSON_GetArraySize(j) > 0)
                cJSON_DeleteItemFromArray(j, 0);
            return;
        default:
            if (n > 1) { /* swap two items */
                int a = (int)jm_below(r, (uint32_t)n);
                cJSON *x = cJSON_DetachItemFromArray(j, a);
                jm_insert(j, (int)jm_below(r, (uint32_t)n - 1), x);
            }
            return;
        }
    } else if (cJSON_IsObject(j)) {
        int n = cJSON_GetArraySize(j);
        if (cJSON_GetObjectItemCaseSensitive(j, "op") && jm_below(r, 3)) {
            jm_set_attr(r, j);
        } else if (!strcmp(key, "attrs") && parent && jm_below(r, 2)) {
            jm_set_attr(r, parent);
        } else if (n && jm_below(r, 2)) {
            cJSON_DeleteItemFromArray(j, (int)jm_below(r, (uint32_t)n)); /* a member, by position */
        } else if (n) {
            cJSON *c = cJSON_GetArrayItem(j, (int)jm_below(r, (uint32_t)n));
            cJSON_AddItemToObject(j, jm_tensor_name(r, doc), cJSON_Duplicate(c, 1));
        }
        return;
    } else {
        nw = jm_below(r, 2) ? cJSON_CreateNumber(jm_below(r, 2)) : cJSON_CreateBool(jm_below(r, 2));
    }
    if (nw && parent && j->string && cJSON_IsObject(parent))
        cJSON_ReplaceItemInObjectCaseSensitive(parent, j->string, nw);
    else if (nw && parent)
        cJSON_ReplaceItemViaPointer(parent, j, nw);
    else
        cJSON_Delete(nw);
}

/* Mutates JSON text in[0..n) into out (at most max bytes, not NUL-terminated).
 * Returns the new length, or 0 when in is not a JSON object or the result
 * does not fit. */
static size_t jm_mutate_text(const char *in, size_t n, char *out, size_t max, uint32_t seed)
{
    cJSON *doc = cJSON_ParseWithLength(in, n);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return 0;
    }
    jm_rng r = {seed * 0x9E3779B97F4A7C15ULL + 1};
    static jm_items items;
    for (int k = 1 + (int)jm_below(&r, 3); k > 0; k--) {
        jm_relink(doc);
        if (jm_below(&r, 8) == 0) {
            jm_add_node(&r, doc);
            continue;
        }
        items.n = 0;
        jm_collect(&items, doc, NULL);
        int i = 1 + (int)jm_below(&r, (uint32_t)(items.n > 1 ? items.n - 1 : 1));
        if (i < items.n)
            jm_mutate_item(&r, doc, items.item[i], items.parent[i]);
    }
    jm_relink(doc);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text)
        return 0;
    size_t len = strlen(text);
    if (len > max) {
        cJSON_free(text);
        return 0;
    }
    memcpy(out, text, len);
    cJSON_free(text);
    return len;
}

#endif
