/* Kernels of the text-feature and ai.onnx.ml ops on host memory, reached
 * through ft_dd_run (datadep.h); their attribute tables were checked by
 * their inference (graph/infer_ml.c). Semantics as ONNX defines them
 * (onnx/defs/nn/defs.cc, onnx/defs/traditionalml/defs.cc in the ONNX
 * sources) and as its reference (onnx/reference/ops/) computes them.
 *
 * tfidf_vectorizer: the pool's n-grams of the sizes asked for are sorted
 * into a table; each row's n-grams (items skip_distance apart, skip_distance
 * 1 .. max_skip_count + 1; unigrams once) are looked up in it. Items compare
 * as 64-bit keys: an integer's value, a string's interned pointer (equal
 * strings share one, graph/str.h).
 *
 * label_encoder: the keys sorted with their positions; each element of x
 * looked up by binary search. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datadep.h"
#include "../common.h"
#include "../graph/dtype_load.h"
#include "../graph/elem.h"
#include "../graph/graph.h"

static ft_status oom(ft_kctx *k, const ft_node *n)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory");
}

/* Element i of x as a key: an integer's value, a string's pointer. */
static uint64_t key_of(const void *x, ft_dtype dt, int64_t i)
{
    if (dt == FT_STRING)
        return (uint64_t)(uintptr_t)((const void *const *)x)[i];
    return (uint64_t)ft_ld_int(x, dt, i);
}

typedef struct {
    int64_t n;     /* items */
    int64_t at;    /* its first item in the pool */
    int64_t col;   /* its output column */
    int64_t order; /* its number in the pool: of equal n-grams the last counts, as ONNX's reference keeps it */
} gram;

static int cmp_keys(const uint64_t *a, const uint64_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* qsort_r's order of two grams of the pool ctx. */
static int cmp_gram(const void *pa, const void *pb, void *ctx)
{
    const gram *a = pa, *b = pb;
    const uint64_t *pool = ctx;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    int c = cmp_keys(pool + a->at, pool + b->at, a->n);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* The column of the n-gram q (n keys) in t (m grams), or -1. */
static int64_t find_gram(const gram *t, int64_t m, const uint64_t *pool, const uint64_t *q, int64_t n)
{
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = t[mid].n != n ? (t[mid].n < n ? -1 : 1) : cmp_keys(pool + t[mid].at, q, n);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m && t[lo].n == n && !cmp_keys(pool + t[lo].at, q, n) ? t[lo].col : -1;
}

ft_status ft_ml_tfidf(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const int64_t lo = ft_attr(n, "min_gram_length")->i, hi = ft_attr(n, "max_gram_length")->i;
    const int64_t skips = ft_attr(n, "max_skip_count")->i;
    const ft_attr_val *cnt = ft_attr(n, "ngram_counts"), *idx = ft_attr(n, "ngram_indexes"), *w = ft_attr(n, "weights");
    const char *mode = ft_attr(n, "mode")->s;
    const int64_t np = in[1].shape.dims[0];
    const int rows2 = in[0].shape.rank == 2;
    const int64_t rows = rows2 ? in[0].shape.dims[0] : 1, c = rows2 ? in[0].shape.dims[1] : (int64_t)ft_numel(&in[0].shape);
    const int64_t cols = out[0].shape.dims[out[0].shape.rank - 1];
    uint64_t *pool = ft_malloc((size_t)(np + hi) * sizeof *pool), *q = pool ? pool + np : NULL;
    gram *t = ft_malloc((size_t)(idx->n ? idx->n : 1) * sizeof *t);
    float *y = out[0].data;
    if (!pool || !t) {
        free(pool);
        free(t);
        return oom(k, n);
    }
    for (int64_t i = 0; i < np; i++)
        pool[i] = key_of(in[1].data, in[1].dtype, i);
    int64_t m = 0, id = 0;
    for (int g = 0; g < cnt->n; g++) {
        const int64_t s = cnt->ints[g], e = g + 1 < cnt->n ? cnt->ints[g + 1] : np, size = g + 1;
        for (int64_t a = s; a + size <= e; a += size, id++)
            if (size >= lo && size <= hi)
                t[m++] = (gram){size, a, idx->ints[id], id};
    }
    qsort_r(t, (size_t)m, sizeof *t, cmp_gram, pool);
    int64_t u = 0; /* of equal n-grams keep the last (its order is the highest) */
    for (int64_t i = 0; i < m; i++) {
        if (u && t[u - 1].n == t[i].n && !cmp_keys(pool + t[u - 1].at, pool + t[i].at, t[i].n))
            u--;
        t[u++] = t[i];
    }
    m = u;
    memset(y, 0, (size_t)(rows * cols) * sizeof *y);
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * cols;
        int64_t first = lo;
        for (int64_t d = 1; d <= skips + 1 && first <= hi; d++) {
            for (int64_t s = 0; s < c; s++)
                for (int64_t len = 1; len <= hi && s + (len - 1) * d < c; len++) {
                    q[len - 1] = key_of(in[0].data, in[0].dtype, r * c + s + (len - 1) * d);
                    if (len < first)
                        continue;
                    int64_t col = find_gram(t, m, pool, q, len);
                    if (col >= 0)
                        yr[col] += 1;
                }
            if (first == 1) /* unigrams are counted once: skips do not change them */
                first = 2;
        }
        for (int64_t j = 0; j < cols; j++) {
            if (!strcmp(mode, "IDF"))
                yr[j] = yr[j] > 0 ? (w->present ? (float)w->floats[j] : 1.f) : 0.f;
            else if (!strcmp(mode, "TFIDF") && w->present)
                yr[j] = (float)w->floats[j] * yr[j];
        }
    }
    free(pool);
    free(t);
    return FT_OK;
}

/* Element i of x as a key that is equal exactly when the values are: a
 * float's double bits with -0 as 0 and every NaN one NaN (a NaN key matches
 * NaN, as ONNX's LabelEncoder says), else key_of's. */
static uint64_t value_key(const void *x, ft_dtype dt, int64_t i)
{
    if (!ft_dtype_is_float(dt))
        return key_of(x, dt, i);
    double v = ft_ld_f64(x, dt, i);
    if (v == 0)
        v = 0;
    if (v != v)
        v = NAN;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

typedef struct {
    uint64_t key;
    int64_t at; /* its position in the keys: of equal keys the last maps, as a dict built in order keeps it */
} keyed;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

ft_status ft_ml_label_encoder(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const int64_t nk = in[1].shape.dims[0], cnt = (int64_t)ft_numel(&in[0].shape);
    const size_t es = ft_dtype_size(out[0].dtype);
    keyed *t = ft_malloc((size_t)(nk ? nk : 1) * sizeof *t);
    if (!t)
        return oom(k, n);
    for (int64_t i = 0; i < nk; i++)
        t[i] = (keyed){value_key(in[1].data, in[1].dtype, i), i};
    qsort(t, (size_t)nk, sizeof *t, cmp_keyed);
    int64_t u = 0;
    for (int64_t i = 0; i < nk; i++) {
        if (u && t[u - 1].key == t[i].key)
            u--;
        t[u++] = t[i];
    }
    const char *vals = in[2].data, *def = in[3].data;
    char *y = out[0].data;
    for (int64_t i = 0; i < cnt; i++) {
        const uint64_t q = value_key(in[0].data, in[0].dtype, i);
        int64_t lo = 0, hi = u;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (t[mid].key < q)
                lo = mid + 1;
            else
                hi = mid;
        }
        memcpy(y + (size_t)i * es, lo < u && t[lo].key == q ? vals + (size_t)t[lo].at * es : def, es);
    }
    free(t);
    return FT_OK;
}

/* Whether x goes the true way at a node of mode m (split s; a MEMBER node's
 * set the ns values at set). */
static int te_true(int64_t m, double x, double s, const double *set, int64_t ns)
{
    switch (m) {
    case 0: return x <= s;
    case 1: return x < s;
    case 2: return x >= s;
    case 3: return x > s;
    case 4: return x == s;
    case 5: return x != s;
    default:
        for (int64_t i = 0; i < ns; i++)
            if (set[i] == x)
                return 1;
        return 0;
    }
}

ft_status ft_ml_tree_ensemble(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_attr_val *split = ft_attr(n, "nodes_splits"), *feat = ft_attr(n, "nodes_featureids");
    const ft_attr_val *mode = ft_attr(n, "nodes_modes"), *tn = ft_attr(n, "nodes_truenodeids");
    const ft_attr_val *fn = ft_attr(n, "nodes_falsenodeids"), *tl = ft_attr(n, "nodes_trueleafs");
    const ft_attr_val *fl = ft_attr(n, "nodes_falseleafs"), *lt = ft_attr(n, "leaf_targetids");
    const ft_attr_val *lw = ft_attr(n, "leaf_weights"), *roots = ft_attr(n, "tree_roots");
    const ft_attr_val *mtt = ft_attr(n, "nodes_missing_value_tracks_true"), *mv = ft_attr(n, "membership_values");
    const int64_t agg = ft_attr(n, "aggregate_function")->i, nn = split->n;
    const int64_t rows = in[0].shape.dims[0], nf = in[0].shape.dims[1], nt = out[0].shape.dims[1];
    /* each MEMBER node's set: the next NaN-ended run of membership_values, in node order */
    int64_t *set_at = ft_malloc((size_t)(2 * nn + 1) * sizeof *set_at), *set_n = set_at ? set_at + nn : NULL;
    double *acc = ft_malloc((size_t)(nt ? nt : 1) * sizeof *acc);
    if (!set_at || !acc) {
        free(set_at);
        free(acc);
        return oom(k, n);
    }
    for (int64_t i = 0, at = 0; i < nn; i++) {
        set_at[i] = at, set_n[i] = 0;
        if (mode->ints[i] != 6 || !mv->present)
            continue;
        while (at < mv->n && mv->floats[at] == mv->floats[at])
            at++, set_n[i]++;
        at++; /* its NaN */
    }
    const int f32 = out[0].dtype == FT_F32;
    const double big = f32 ? 3.4028234663852886e38 : 1.7976931348623157e308; /* the dtype's largest, as ONNX's reference starts MIN */
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < nt; j++)
            acc[j] = agg == 2 ? big : agg == 3 ? -big : 0;
        for (int t = 0; t < roots->n; t++) {
            int64_t i = roots->ints[t], leaf;
            if (tl->ints[i] && fl->ints[i] && tn->ints[i] == fn->ints[i]) {
                leaf = i; /* a tree that is one leaf: the root's number names it, as ONNX's reference reads it */
            } else {
                for (;;) { /* inference checked that every walk ends at a leaf */
                    const double x = ft_ld_f64(in[0].data, in[0].dtype, r * nf + feat->ints[i]);
                    const int go = (x != x && mtt->present && mtt->ints[i]) ||
                                   te_true(mode->ints[i], x, split->floats[i], mv->floats + set_at[i], set_n[i]);
                    const int64_t next = go ? tn->ints[i] : fn->ints[i];
                    if (go ? tl->ints[i] : fl->ints[i]) {
                        leaf = next;
                        break;
                    }
                    i = next;
                }
            }
            double *a = &acc[lt->ints[leaf]], w = lw->floats[leaf];
            *a = agg == 0 ? *a + w / roots->n : agg == 1 ? *a + w : agg == 2 ? (w < *a ? w : *a) : (w > *a ? w : *a);
        }
        for (int64_t j = 0; j < nt; j++)
            ft_store_f64(out[0].data, out[0].dtype, (size_t)(r * nt + j), acc[j]);
    }
    free(set_at);
    free(acc);
    return FT_OK;
}
