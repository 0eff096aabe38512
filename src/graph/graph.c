/* Graph lifetime, lookups, node-context errors, the string map, and the
 * counter-based generator behind "init". */
#include "graph.h"
#include "lowp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct ft_strmap {
    char **keys;
    int *vals;
    size_t cap, len;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

struct ft_strmap *ft_strmap_new(void)
{
    struct ft_strmap *m = ft_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cap = 64;
    m->keys = ft_calloc(m->cap, sizeof *m->keys);
    m->vals = ft_calloc(m->cap, sizeof *m->vals);
    if (!m->keys || !m->vals) {
        ft_strmap_free(m);
        return NULL;
    }
    return m;
}

void ft_strmap_free(struct ft_strmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap && m->keys; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    free(m);
}

int ft_strmap_get(const struct ft_strmap *m, const char *key)
{
    for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i])
            return -1;
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    }
}

static void put_slot(char **keys, int *vals, size_t cap, char *key, int val)
{
    size_t i = hash_str(key) & (cap - 1);
    while (keys[i])
        i = (i + 1) & (cap - 1);
    keys[i] = key;
    vals[i] = val;
}

int ft_strmap_put(struct ft_strmap *m, const char *key, int value)
{
    for (size_t i = hash_str(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (strcmp(m->keys[i], key) == 0) { /* a key put again takes the new value */
            m->vals[i] = value;
            return 0;
        }
    if ((m->len + 1) * 2 > m->cap) {
        size_t nc = m->cap * 2;
        char **nk = ft_calloc(nc, sizeof *nk);
        int *nv = ft_calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                put_slot(nk, nv, nc, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = nc;
    }
    char *k = ft_strdup(key);
    if (!k)
        return -1;
    put_slot(m->keys, m->vals, m->cap, k, value);
    m->len++;
    return 0;
}

int ft_graph_find(const ft_graph *g, const char *name) { return g->tmap ? ft_strmap_get(g->tmap, name) : -1; }

static void free_attrs(ft_node *n)
{
    if (!n->attrs)
        return;
    const ft_op_info *oi = ft_op_get(n->op);
    for (int i = 0; i < oi->n_attrs; i++) {
        free(n->attrs[i].s);
        free(n->attrs[i].ints);
        free(n->attrs[i].floats);
    }
    free(n->attrs);
}

int ft_node_default_attrs(ft_node *n)
{
    const ft_op_info *oi = ft_op_get(n->op);
    n->attrs = ft_calloc((size_t)(oi->n_attrs ? oi->n_attrs : 1), sizeof *n->attrs);
    if (!n->attrs)
        return -1;
    for (int i = 0; i < oi->n_attrs; i++) {
        const ft_attr_def *d = &oi->attrs[i];
        ft_attr_val *v = &n->attrs[i];
        if (d->has_default) {
            v->present = 1;
            v->i = d->i;
            v->f = d->f;
            if (d->type == FT_ATTR_STRING && !(v->s = ft_strdup(d->s)))
                return -1;
        }
    }
    return 0;
}

void ft_node_clear(ft_node *n)
{
    free(n->name);
    free(n->in);
    free(n->out);
    free_attrs(n);
}

void ft_graph_free(ft_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_tensors; i++) {
        free(g->tensors[i].name);
        if (!g->tensors[i].borrowed)
            free(g->tensors[i].value);
    }
    for (int i = 0; i < g->n_nodes; i++)
        ft_node_clear(&g->nodes[i]);
    free(g->tensors);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->order);
    free(g->file);
    free(g->dir);
    free(g->name);
    free(g->about);
    free(g->opt_note);
    for (int i = 0; i < g->n_groups; i++)
        free(g->groups[i].name);
    free(g->groups);
    ft_strmap_free(g->tmap);
    if (g->map)
        munmap(g->map, g->map_bytes);
    free(g);
}

const ft_attr_val *ft_attr(const struct ft_node *n, const char *name)
{
    int i = ft_op_attr_index(n->op, name);
    if (i < 0) {
        fprintf(stderr, "ftrun: internal error: op %s has no attribute %s\n", ft_op_name(n->op), name);
        abort();
    }
    return &n->attrs[i];
}

void ft_tensor_set_value(ft_tensor *t, void *owned, size_t bytes)
{
    if (!t->borrowed)
        free(t->value);
    t->value = owned;
    t->value_bytes = bytes;
    t->borrowed = 0;
}

ft_status ft_node_err(ft_error *err, ft_status code, const ft_graph *g, const ft_node *n, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_err(err, code, "%s: node '%s' (%s): %s", g && g->file ? g->file : "<graph>", n->name,
                  ft_op_name(n->op), msg);
}

static double unit53(uint32_t hi, uint32_t lo)
{
    return ((double)(hi >> 5) * 67108864.0 + (double)(lo >> 6)) * (1.0 / 9007199254740992.0);
}

static void store_init(void *buf, ft_dtype dt, uint64_t i, double v)
{
    if (dt == FT_U64) { /* as below, in [0, 2^64 - 1] */
        v = trunc(v);
        ((uint64_t *)buf)[i] = isnan(v) || v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
    } else if (ft_dtype_is_int(dt)) {
        /* truncate toward zero, saturating at the dtype's range (as cast does) */
        static const double lo[FT_DTYPE_COUNT] = {[FT_I8] = -128.0, [FT_I16] = -32768.0, [FT_I32] = -2147483648.0,
                                                  [FT_I64] = -9223372036854775808.0};
        static const double hi[FT_DTYPE_COUNT] = {[FT_I8] = 127.0,         [FT_I16] = 32767.0,
                                                  [FT_I32] = 2147483647.0, [FT_I64] = 9223372036854775807.0,
                                                  [FT_U8] = 255.0,         [FT_U16] = 65535.0,
                                                  [FT_U32] = 4294967295.0};
        v = trunc(v);
        int64_t x;
        if (isnan(v))
            x = 0;
        else if (v <= lo[dt])
            x = dt == FT_I64 ? INT64_MIN : (int64_t)lo[dt];
        else if (v >= hi[dt])
            x = dt == FT_I64 ? INT64_MAX : (int64_t)hi[dt];
        else
            x = (int64_t)v;
        ft_store_i64(buf, dt, (size_t)i, x);
    } else if (ft_dtype_in(dt, FT_DT_LOWI)) { /* the same, in the 4- or 2-bit range */
        int64_t lo, hi;
        ft_lowi_range(dt, &lo, &hi);
        v = trunc(v);
        ((int8_t *)buf)[i] = (int8_t)(isnan(v) ? 0 : v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v);
    } else {
        ft_store_f64(buf, dt, (size_t)i, v); /* the small floats: rounded and saturated as cast does */
    }
}

void ft_init_values(void *buf, ft_dtype dt, uint64_t numel, int kind, double a, double b, uint64_t seed)
{
    /* Every element depends on its index alone (counter-based generator), so
     * the threads may take any share: the values are the same bit for bit. */
#pragma omp parallel for schedule(static) if (numel >= 65536)
    for (uint64_t i = 0; i < numel; i++) {
        double v;
        if (kind == 0) {
            v = a;
        } else if (kind == 1) {
            v = a + (double)i * b;
        } else {
            uint32_t w[4];
            ft_philox4x32(i, seed, w);
            double u1 = unit53(w[0], w[1]);
            if (kind == 2 || kind == 4) {
                v = a + (b - a) * u1;
                if (kind == 4)
                    v = floor(v);
            } else {
                double u2 = unit53(w[2], w[3]);
                v = a + b * sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
            }
        }
        store_init(buf, dt, i, v);
    }
}
