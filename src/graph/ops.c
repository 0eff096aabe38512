#include "ops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FT_MAX_ATTRS 16

typedef struct {
    ft_op_info info;
    ft_attr_def defs[FT_MAX_ATTRS];
} op_entry;

static op_entry table[FT_OP_COUNT] = {
#define X(e, nm, mi, ma, mo, mao, dt, at, inf, fl) \
    [FT_OP_##e] = {.info = {.name = nm, .min_in = mi, .max_in = ma, .min_out = mo, .max_out = mao, .dtypes = dt, .attr_schema = at, .infer = inf, .flops = fl}},
#include "ops.def"
#undef X
};
static int table_ready;

/* Parse "name:type[=default]" entries. The schema strings are part of the
 * program, so a malformed one is an internal error. */
static void parse_schema(op_entry *e)
{
    const char *p = e->info.attr_schema;
    int n = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (n >= FT_MAX_ATTRS)
            abort();
        ft_attr_def *d = &e->defs[n++];
        memset(d, 0, sizeof *d);
        size_t k = strcspn(p, ":");
        if (k >= sizeof d->name || p[k] != ':')
            abort();
        memcpy(d->name, p, k);
        p += k + 1;
        switch (*p++) {
        case 'i': d->type = FT_ATTR_INT; break;
        case 'f': d->type = FT_ATTR_FLOAT; break;
        case 's': d->type = FT_ATTR_STRING; break;
        case 'I': d->type = FT_ATTR_INTS; break;
        case 'F': d->type = FT_ATTR_FLOATS; break;
        default: abort();
        }
        if (*p != '=') {
            d->required = 1;
        } else {
            p++;
            size_t vl = strcspn(p, " ");
            char v[40];
            if (vl >= sizeof v)
                abort();
            memcpy(v, p, vl);
            v[vl] = 0;
            p += vl;
            if (strcmp(v, "?") != 0) {
                d->has_default = 1;
                if (d->type == FT_ATTR_INT)
                    d->i = strtoll(v, NULL, 10);
                else if (d->type == FT_ATTR_FLOAT)
                    d->f = strtod(v, NULL);
                else if (d->type == FT_ATTR_STRING)
                    memcpy(d->s, v, vl + 1);
                /* list defaults are always [] */
            }
        }
    }
    e->info.n_attrs = n;
    e->info.attrs = e->defs;
    e->info.available = e->info.infer != ft_infer_unavailable;
}

static void ensure_table(void)
{
    if (table_ready)
        return;
    for (int i = 0; i < FT_OP_COUNT; i++)
        parse_schema(&table[i]);
    table_ready = 1;
}

const ft_op_info *ft_op_get(ft_op op)
{
    ensure_table();
    return &table[op].info;
}

int ft_op_data_dependent(ft_op op)
{
    return op == FT_OP_NON_ZERO || op == FT_OP_COMPRESS || op == FT_OP_UNIQUE || op == FT_OP_NON_MAX_SUPPRESSION ||
           op == FT_OP_STRING_NORMALIZER || op == FT_OP_STRING_SPLIT;
}

unsigned ft_op_value_inputs(ft_op op)
{
    static const unsigned char slots[FT_OP_COUNT] = {
        [FT_OP_RESHAPE] = 1u << 1, [FT_OP_EXPAND] = 1u << 1, [FT_OP_TILE] = 1u << 1,
        [FT_OP_SLICE] = 0xfu << 1, [FT_OP_TOPK] = 1u << 1,   [FT_OP_RANGE] = 0x7u,
        [FT_OP_STRING_SPLIT] = 1u, /* its strings: how many pieces the longest split gives */
        [FT_OP_IMAGE_DECODER] = 1u,
        [FT_OP_PAD] = 0x7u << 1,   [FT_OP_RESIZE] = 0x7u << 1, [FT_OP_ONE_HOT] = 1u << 2,
        [FT_OP_SPLIT] = 1u << 1,
    };
    return (unsigned)op < FT_OP_COUNT ? slots[op] : 0;
}

int ft_op_value_bytes(ft_op op) { return op == FT_OP_IMAGE_DECODER || op == FT_OP_STRING_SPLIT; }

const char *ft_op_name(ft_op op) { return (unsigned)op < FT_OP_COUNT ? table[op].info.name : "?"; }

int ft_op_lookup(const char *name, ft_op *out)
{
    for (int i = 0; i < FT_OP_COUNT; i++)
        if (strcmp(table[i].info.name, name) == 0) {
            *out = (ft_op)i;
            return 0;
        }
    return -1;
}

int ft_op_attr_index(ft_op op, const char *name)
{
    const ft_op_info *oi = ft_op_get(op);
    for (int i = 0; i < oi->n_attrs; i++)
        if (strcmp(oi->attrs[i].name, name) == 0)
            return i;
    return -1;
}

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c) c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c) c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

const char *ft_suggest(const char *name, const char *const *cands, int n, char *buf, size_t bufsz)
{
    size_t len = 0;
    int found = 0;
    int limit = strlen(name) <= 4 ? 1 : 2;
    buf[0] = 0;
    for (int pass = 0; pass <= limit; pass++) /* closest first */
        for (int i = 0; i < n && found < 3; i++) {
            int d = edit_distance(name, cands[i]);
            /* also accept a candidate containing the name (e.g. "norm" -> "layer_norm") */
            int sub = pass == limit && strlen(name) >= 3 && strstr(cands[i], name) && d > limit;
            if (d != pass && !sub)
                continue;
            int w = snprintf(buf + len, bufsz - len, "%s'%s'", found ? ", " : "did you mean ", cands[i]);
            if (w < 0 || (size_t)w >= bufsz - len)
                return buf;
            len += (size_t)w;
            found++;
        }
    if (found)
        snprintf(buf + len, bufsz - len, "?");
    return buf;
}

const char *ft_suggest_op(const char *name, char *buf, size_t bufsz)
{
    const char *names[FT_OP_COUNT];
    for (int i = 0; i < FT_OP_COUNT; i++)
        names[i] = table[i].info.name;
    return ft_suggest(name, names, FT_OP_COUNT, buf, bufsz);
}
