#include "ops.h"
#include "graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FT_MAX_ATTRS 12

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
    return op == FT_OP_NON_ZERO || op == FT_OP_COMPRESS || op == FT_OP_UNIQUE || op == FT_OP_NON_MAX_SUPPRESSION;
}

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

const ft_attr_val *ft_attr(const struct ft_node *n, const char *name)
{
    int i = ft_op_attr_index(n->op, name);
    if (i < 0) {
        fprintf(stderr, "ftrun: internal error: op %s has no attribute %s\n", ft_op_name(n->op), name);
        abort();
    }
    return &n->attrs[i];
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

ft_status ft_infer_fail(ft_infer_ctx *c, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_node_err(c->err, FT_EGRAPH, c->g, c->node, "%s", msg);
}

ft_status ft_infer_unavailable(ft_infer_ctx *c)
{
    return ft_infer_fail(c, "op '%s' is not available in this version of ftrun (%s)", ft_op_name(c->node->op),
                         FT_VERSION);
}

uint64_t ft_flops_none(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)in, (void)out;
    return 0;
}

uint64_t ft_flops_out(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)in;
    uint64_t s = 0;
    for (int i = 0; i < n->n_out; i++)
        s += ft_numel(&out[i].shape);
    return s;
}

uint64_t ft_flops_in(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)out;
    return ft_numel(&in[0]->shape);
}

uint64_t ft_flops_norm(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)out;
    return 5 * ft_numel(&in[0]->shape);
}

uint64_t ft_flops_matmul(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n;
    const ft_shape *a = &in[0]->shape;
    uint64_t k = a->rank ? (uint64_t)a->dims[a->rank - 1] : 1;
    return 2 * ft_numel(&out[0].shape) * k;
}

uint64_t ft_flops_gemm(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *a = &in[0]->shape;
    uint64_t k = (uint64_t)(ft_attr(n, "trans_a")->i ? a->dims[0] : a->dims[1]);
    return 2 * ft_numel(&out[0].shape) * k + 2 * ft_numel(&out[0].shape);
}

/* Product of the spatial dims of a weight [M, C/g, k...]. */
static uint64_t kernel_volume(const ft_shape *w)
{
    uint64_t v = 1;
    for (int i = 2; i < w->rank; i++)
        v *= (uint64_t)w->dims[i];
    return v;
}

/* A multiply-add per weight element per output position, plus the bias. */
uint64_t ft_flops_conv(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape;
    uint64_t cpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1;
    return 2 * ft_numel(&out[0].shape) * cpg * kernel_volume(w) + (n->n_in > 2 && in[2] ? ft_numel(&out[0].shape) : 0) +
           (n->n_in > 3 && in[3] ? ft_numel(&out[0].shape) : 0);
}

/* conv's products, plus the bilinear sample (four products, three sums and
 * the mask) of every input channel at every kernel and output position. */
uint64_t ft_flops_deform_conv(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape, *y = &out[0].shape;
    uint64_t cpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1, c = (uint64_t)in[0]->shape.dims[1];
    uint64_t pos = y->dims[1] ? ft_numel(y) / (uint64_t)y->dims[1] : 0; /* N x output positions */
    return 2 * ft_numel(y) * cpg * kernel_volume(w) + 8 * pos * c * kernel_volume(w) +
           (n->n_in > 3 && in[3] ? ft_numel(y) : 0);
}

/* Every input element is scattered through M/group x kernel weights. */
uint64_t ft_flops_conv_transpose(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape;
    uint64_t mpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1;
    return 2 * ft_numel(&in[0]->shape) * mpg * kernel_volume(w) + (n->n_in > 2 && in[2] ? ft_numel(&out[0].shape) : 0);
}

/* One comparison or addition per window element per output. */
uint64_t ft_flops_pool(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)in;
    const ft_attr_val *k = ft_attr(n, "kernel_shape");
    uint64_t v = 1;
    for (int i = 0; i < k->n; i++)
        v *= k->ints[i] > 0 ? (uint64_t)k->ints[i] : 1;
    return ft_numel(&out[0].shape) * v;
}

/* The usual 5 n log2(n) per complex transform of length n (half for real ones). */
uint64_t ft_flops_fft(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    int complex_in = n->op != FT_OP_RFFT;
    const ft_shape *s = &in[0]->shape;
    int lrank = complex_in ? s->rank - 1 : s->rank;
    if (lrank < 1)
        return 0;
    int ax;
    if (ft_axis(ft_attr(n, "axis")->i, lrank, &ax))
        return 0;
    const ft_shape *ls = n->op == FT_OP_IRFFT ? &out[0].shape : s; /* the transform length */
    uint64_t len = (uint64_t)ls->dims[ax];
    uint64_t total = n->op == FT_OP_IRFFT ? ft_numel(&out[0].shape) : ft_numel(s) / (complex_in ? 2 : 1);
    if (len < 2)
        return total;
    double lg = 0;
    for (uint64_t v = len; v > 1; v >>= 1)
        lg += 1;
    uint64_t f = (uint64_t)(5.0 * (double)total * lg);
    return complex_in && n->op != FT_OP_IRFFT ? f : f / 2;
}

/* Q K^T and P V: 2 B H S T (D + Dv), plus the softmax; T counts the past keys. */
uint64_t ft_flops_attention(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)out;
    const ft_shape *q = &in[0]->shape, *k = &in[1]->shape, *v = &in[2]->shape;
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return 0;
    int64_t t = k->dims[2];
    if (n->n_in > 4 && in[4] && in[4]->shape.rank == 4)
        t += in[4]->shape.dims[2];
    uint64_t bhst = (uint64_t)q->dims[0] * (uint64_t)q->dims[1] * (uint64_t)q->dims[2] * (uint64_t)t;
    return 2 * bhst * (uint64_t)(q->dims[3] + v->dims[3]) + 5 * bhst;
}
