/* Ops of ONNX's ai.onnx.ml domain (version 1) that map onto ftrun ops:
 * Binarizer (x > threshold as 1 or 0 in x's dtype) and ArrayFeatureExtractor
 * (x[..., indices], the indices flattened; a 1-D x gives [1, count], as ONNX's
 * reference and ONNX Runtime do). Named "ai.onnx.ml.OP" in MAPS.
 *
 *   const onx_op_map *m = onx_find_map("ai.onnx.ml.Binarizer", 1);
 *   if (m) st = m->map(c, n);
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_ops.h"
#include "onnx_internal.h"
#include "onnx.pb-c.h"
#include "../graph/elem.h"
#include "../graph/str.h"
#include "../io/npy.h"

ft_status ox_map_binarizer(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GREATER, 0));
    const ft_dtype dt = ox_dtype(c, n, 0);
    double t = onx_attr_f(n, "threshold", 0.0);
    /* for integers, x > t is x > floor(t) */
    int th = ox_scalar(c, n, "threshold", dt, ft_dtype_is_float(dt) ? t : floor(t)), gt = ox_tmp(c, n, "above");
    OX_NEED(th >= 0 && gt >= 0 && ox_emit2(c, n, FT_OP_GREATER, onx_in(c, n, 0), th, gt));
    OX_NEED(ox_cast(c, n, gt, dt, ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_array_feature_extractor(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GATHER, 0));
    const ft_shape *xs = ox_shape(c, n, 0), *is = ox_shape(c, n, 1);
    if (xs->rank < 1)
        return onx_error(c, n, FT_EGRAPH, "input X is a scalar: ArrayFeatureExtractor selects along its last axis");
    const int64_t count = (int64_t)ft_numel(is);
    int idx = onx_in(c, n, 1);
    if (is->rank != 1) { /* the indices flattened */
        const ft_shape flat = {.rank = 1, .dims = {count}};
        int t = ox_tmp(c, n, "indices");
        OX_NEED(t >= 0 && ox_reshape(c, n, idx, &flat, t));
        idx = t;
    }
    const int one_d = xs->rank == 1;
    int out = one_d ? ox_tmp(c, n, "selected") : ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *g = ox_emit2(c, n, FT_OP_GATHER, onx_in(c, n, 0), idx, out);
    OX_NEED(g);
    OX_TRY(onx_set_i(c, g, "axis", xs->rank - 1));
    if (one_d) {
        const ft_shape row = {.rank = 2, .dims = {1, count}};
        OX_NEED(ox_reshape(c, n, out, &row, ox_out(c, n, 0)));
    }
    return FT_OK;
}

/* An INTS attribute (absent: none) onto f's attribute of that name. */
static ft_status copy_ints(onx_ctx *c, const onx_node *n, ft_node *f, const char *name)
{
    const int64_t *v = NULL;
    int k = onx_attr_ints(n, name, &v);
    return onx_set_ints(c, f, name, v, k < 0 ? 0 : k);
}

/* TfIdfVectorizer (opset 9, default domain): tfidf_vectorizer with its pool
 * (pool_int64s or pool_strings) as a 1-D constant, input 1. */
ft_status ox_map_tfidf_vectorizer(onx_ctx *c, const onx_node *n)
{
    const ft_dtype dt = ox_dtype(c, n, 0);
    if (dt != FT_STRING && dt != FT_I32 && dt != FT_I64)
        return onx_error(c, n, FT_EGRAPH, "input X has dtype %s: TfIdfVectorizer takes int32, int64 or strings",
                         ft_dtype_name(dt));
    const Onnx__AttributeProto *ps = onx_attr(n, "pool_strings");
    const int64_t *pi = NULL;
    const int npi = onx_attr_ints(n, "pool_int64s", &pi);
    if ((ps != NULL) == (npi >= 0))
        return onx_error(c, n, FT_EGRAPH, "give one of pool_strings and pool_int64s");
    if ((ps != NULL) != (dt == FT_STRING))
        return onx_error(c, n, FT_EGRAPH, "the pool is %s but input X is %s", ps ? "strings" : "int64",
                         ft_dtype_name(dt));
    int pool;
    if (ps) {
        pool = ox_const_strings(c, n, "pool", ps);
        if (pool == -2)
            return onx_error(c, n, FT_EGRAPH, "a pool string is not valid UTF-8");
    } else {
        const ft_shape s = {.rank = 1, .dims = {npi}};
        pool = onx_const_new(c, n, "pool", FT_I64, &s, pi);
    }
    int in[2] = {onx_in(c, n, 0), pool}, out = ox_out(c, n, 0);
    OX_NEED(pool >= 0 && out >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_TFIDF_VECTORIZER, in, 2, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_s(c, f, "mode", onx_attr_s(c, n, "mode", "")));
    OX_TRY(onx_set_i(c, f, "min_gram_length", onx_attr_i(n, "min_gram_length", 0)));
    OX_TRY(onx_set_i(c, f, "max_gram_length", onx_attr_i(n, "max_gram_length", 0)));
    OX_TRY(onx_set_i(c, f, "max_skip_count", onx_attr_i(n, "max_skip_count", 0)));
    OX_TRY(copy_ints(c, n, f, "ngram_counts"));
    OX_TRY(copy_ints(c, n, f, "ngram_indexes"));
    const float *w = NULL;
    const int nw = onx_attr_floats(n, "weights", &w);
    if (nw >= 0) {
        double *d = malloc((size_t)(nw ? nw : 1) * sizeof *d);
        OX_NEED(d);
        for (int i = 0; i < nw; i++)
            d[i] = w[i];
        ft_status st = onx_set_floats(c, f, "weights", d, nw);
        free(d);
        OX_TRY(st);
    }
    return FT_OK;
}

/* One of LabelEncoder's key or value lists as a 1-D constant (suffix): the
 * TENSOR attribute NAME_tensor or one of NAME_strings, NAME_int64s,
 * NAME_floats; -1 on failure (reported), -2 when none or more than one is
 * given, -3 for a string that is not UTF-8. *dt: its dtype. */
static int encoder_list(onx_ctx *c, const onx_node *n, const char *name, ft_dtype *dt)
{
    char an[4][32];
    static const char *const sfx[4] = {"tensor", "strings", "int64s", "floats"};
    const Onnx__AttributeProto *a[4];
    int given = 0, which = -1;
    for (int i = 0; i < 4; i++) {
        snprintf(an[i], sizeof an[i], "%s_%s", name, sfx[i]);
        if ((a[i] = onx_attr(n, an[i])))
            given++, which = i;
    }
    if (given != 1)
        return -2;
    if (which == 0) {
        ft_npy v;
        if (onx_attr_tensor(c, n, a[0], &v))
            return -1;
        const ft_shape s = {.rank = 1, .dims = {(int64_t)ft_numel(&v.shape)}};
        *dt = v.dtype;
        int t = onx_const_new(c, n, name, v.dtype, &s, v.data);
        ft_npy_clear(&v);
        return t;
    }
    if (which == 1) {
        *dt = FT_STRING;
        int t = ox_const_strings(c, n, name, a[1]);
        return t == -2 ? -3 : t;
    }
    const ft_shape s = {.rank = 1, .dims = {(int64_t)(which == 2 ? a[2]->n_ints : a[3]->n_floats)}};
    *dt = which == 2 ? FT_I64 : FT_F32;
    return onx_const_new(c, n, name, *dt, &s, which == 2 ? (const void *)a[2]->ints : (const void *)a[3]->floats);
}

/* ai.onnx.ml LabelEncoder (versions 2-4): label_encoder with its keys,
 * values and default as constants; the default is default_tensor (version
 * 4) or the default_string, default_int64 or default_float of the values'
 * type (their own defaults "_Unused", -1 and -0.0). Version 1's
 * classes_strings form is refused by the map's version. */
ft_status ox_map_label_encoder(onx_ctx *c, const onx_node *n)
{
    ft_dtype kd = FT_F32, vd = FT_F32;
    const int keys = encoder_list(c, n, "keys", &kd), vals = keys >= 0 ? encoder_list(c, n, "values", &vd) : -1;
    if (keys == -2 || vals == -2)
        return onx_error(c, n, FT_EGRAPH, "give exactly one of %s_tensor, %s_strings, %s_int64s and %s_floats",
                         keys == -2 ? "keys" : "values", keys == -2 ? "keys" : "values", keys == -2 ? "keys" : "values",
                         keys == -2 ? "keys" : "values");
    if (keys == -3 || vals == -3)
        return onx_error(c, n, FT_EGRAPH, "a %s string is not valid UTF-8", keys == -3 ? "key" : "value");
    OX_NEED(keys >= 0 && vals >= 0);
    int def;
    const ft_shape one = {.rank = 1, .dims = {1}};
    const Onnx__AttributeProto *dt = onx_attr(n, "default_tensor");
    if (dt) {
        ft_npy v;
        OX_TRY(onx_attr_tensor(c, n, dt, &v));
        if (ft_numel(&v.shape) != 1 || v.dtype != vd) {
            ft_npy_clear(&v);
            return onx_error(c, n, FT_EGRAPH, "default_tensor must be one %s value, as the values are",
                             ft_dtype_name(vd));
        }
        def = onx_const_new(c, n, "default", v.dtype, &one, v.data);
        ft_npy_clear(&v);
    } else if (vd == FT_STRING) {
        const char *s = onx_attr_s(c, n, "default_string", "_Unused");
        const ft_str *p;
        if (!ft_utf8_valid(s, strlen(s)) || ft_str_make(s, strlen(s), &p))
            return onx_error(c, n, FT_EGRAPH, "default_string is not valid UTF-8");
        def = onx_const_new(c, n, "default", FT_STRING, &one, &p);
    } else if (ft_dtype_is_float(vd)) {
        double f = onx_attr_f(n, "default_float", -0.0);
        float f32 = (float)f;
        def = vd == FT_F64 ? onx_const_new(c, n, "default", FT_F64, &one, &f)
                           : onx_const_new(c, n, "default", FT_F32, &one, &f32);
    } else {
        const int64_t i = onx_attr_i(n, "default_int64", -1);
        def = onx_const_new(c, n, "default", FT_I64, &one, &i);
    }
    int in[4] = {onx_in(c, n, 0), keys, vals, def}, out = ox_out(c, n, 0);
    OX_NEED(def >= 0 && out >= 0);
    OX_NEED(onx_emit(c, n, FT_OP_LABEL_ENCODER, in, 4, &out, 1));
    return FT_OK;
}

/* A TENSOR attribute of n onto f's list attribute `name`: floats (as
 * doubles) or ints. Absent: the list stays unset (required lists are then
 * refused by the op's schema). */
static ft_status tensor_list(onx_ctx *c, const onx_node *n, ft_node *f, const char *name, int ints)
{
    const Onnx__AttributeProto *a = onx_attr(n, name);
    if (!a)
        return FT_OK;
    ft_npy v;
    OX_TRY(onx_attr_tensor(c, n, a, &v));
    const size_t cnt = (size_t)ft_numel(&v.shape);
    void *buf = malloc((cnt ? cnt : 1) * 8);
    if (!buf) {
        ft_npy_clear(&v);
        return onx_oom(c);
    }
    for (size_t i = 0; i < cnt; i++) {
        if (ints)
            ((int64_t *)buf)[i] = ft_load_i64(v.data, v.dtype, i);
        else
            ((double *)buf)[i] = ft_load_f64(v.data, v.dtype, i);
    }
    ft_npy_clear(&v);
    ft_status st = ints ? onx_set_ints(c, f, name, buf, (int)cnt) : onx_set_floats(c, f, name, buf, (int)cnt);
    free(buf);
    return st;
}

/* ai.onnx.ml TreeEnsemble (version 5): tree_ensemble with the node and leaf
 * tables as attributes (nodes_hitrates is not read). */
ft_status ox_map_tree_ensemble(onx_ctx *c, const onx_node *n)
{
    const ft_dtype dt = ox_dtype(c, n, 0);
    if (dt != FT_F32 && dt != FT_F64)
        return onx_unsupported(c, n, "input X of dtype %s: ftrun's tree_ensemble takes float and double",
                               ft_dtype_name(dt));
    ft_node *f = ox_emit1(c, n, FT_OP_TREE_ENSEMBLE, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    static const char *const ints[] = {"nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids",
                                       "nodes_trueleafs", "nodes_falseleafs", "leaf_targetids", "tree_roots",
                                       "nodes_missing_value_tracks_true"};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (onx_attr(n, ints[i]))
            OX_TRY(copy_ints(c, n, f, ints[i]));
    OX_TRY(tensor_list(c, n, f, "nodes_modes", 1));
    OX_TRY(tensor_list(c, n, f, "nodes_splits", 0));
    OX_TRY(tensor_list(c, n, f, "leaf_weights", 0));
    OX_TRY(tensor_list(c, n, f, "membership_values", 0));
    OX_TRY(onx_set_i(c, f, "n_targets", onx_attr_i(n, "n_targets", 0)));
    OX_TRY(onx_set_i(c, f, "aggregate_function", onx_attr_i(n, "aggregate_function", 1)));
    return onx_set_i(c, f, "post_transform", onx_attr_i(n, "post_transform", 0));
}

/* A float list attribute given as NAME (floats) or NAME_as_tensor, into v
 * (malloc'd doubles, *cnt of them; NULL and 0 when absent). */
static ft_status legacy_floats(onx_ctx *c, const onx_node *n, const char *name, double **v, int *cnt)
{
    char tn[64];
    snprintf(tn, sizeof tn, "%s_as_tensor", name);
    const Onnx__AttributeProto *t = onx_attr(n, tn);
    const float *f = NULL;
    int k = onx_attr_floats(n, name, &f);
    ft_npy a = {0};
    if (t)
        OX_TRY(onx_attr_tensor(c, n, t, &a));
    *cnt = t ? (int)ft_numel(&a.shape) : k < 0 ? 0 : k;
    *v = malloc((size_t)(*cnt ? *cnt : 1) * sizeof **v);
    if (!*v) {
        ft_npy_clear(&a);
        return onx_oom(c);
    }
    for (int i = 0; i < *cnt; i++)
        (*v)[i] = t ? ft_load_f64(a.data, a.dtype, (size_t)i) : f[i];
    ft_npy_clear(&a);
    return FT_OK;
}

/* The legacy tables of TreeEnsembleRegressor rewritten as TreeEnsemble's. */
typedef struct {
    int64_t *ints[8]; /* featureids, modes, truenodeids, falsenodeids, trueleafs, falseleafs, targetids, roots */
    double *splits, *weights;
    int nn, nl, nr;
} te_tables;

static void te_free(te_tables *t)
{
    for (int i = 0; i < 8; i++)
        free(t->ints[i]);
    free(t->splits);
    free(t->weights);
}

/* The entry of node id in tree tr, or -1. */
static int64_t te_find(const int64_t *tree, const int64_t *ids, int m, int64_t tr, int64_t id)
{
    for (int e = 0; e < m; e++)
        if (tree[e] == tr && ids[e] == id)
            return e;
    return -1;
}

/* ai.onnx.ml TreeEnsembleRegressor (versions 1 and 3): the trees rewritten
 * as tree_ensemble's tables, where every leaf carries one target weight
 * (single-target regressors, as scikit-learn's converters write them); then
 * a cast to float, base_values added, and post_transform NONE, LOGISTIC
 * (sigmoid) or SOFTMAX (softmax on the last axis). Leaves of several or no
 * weights, BRANCH_MEMBER and the other transforms are refused. */
ft_status ox_map_tree_ensemble_regressor(onx_ctx *c, const onx_node *n)
{
    const ft_dtype dt = ox_dtype(c, n, 0);
    if (!ft_dtype_in(dt, FT_M(F32) | FT_M(F64) | FT_M(I32) | FT_M(I64)))
        return onx_unsupported(c, n, "input X of dtype %s (TreeEnsembleRegressor takes float, double, int32, int64)",
                               ft_dtype_name(dt));
    const char *post = onx_attr_s(c, n, "post_transform", "NONE"), *agg = onx_attr_s(c, n, "aggregate_function", "SUM");
    static const char *const aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
    int64_t aggn = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(agg, aggs[i]))
            aggn = i;
    if (aggn < 0)
        return onx_error(c, n, FT_EGRAPH, "aggregate_function is '%s' (expected AVERAGE, SUM, MIN or MAX)", agg);
    if (strcmp(post, "NONE") && strcmp(post, "LOGISTIC") && strcmp(post, "SOFTMAX"))
        return onx_unsupported(c, n, "post_transform %s (ftrun maps NONE, LOGISTIC and SOFTMAX)", post);
    const int64_t *tree, *ids, *feat, *tn, *fn, *mtt = NULL, *ttree, *tnode, *tid;
    const int m = onx_attr_ints(n, "nodes_treeids", &tree);
    const int mt = onx_attr_ints(n, "target_treeids", &ttree);
    const Onnx__AttributeProto *modes = onx_attr(n, "nodes_modes");
    if (m < 0 || mt < 0 || !modes || onx_attr_ints(n, "nodes_nodeids", &ids) != m ||
        onx_attr_ints(n, "nodes_featureids", &feat) != m || onx_attr_ints(n, "nodes_truenodeids", &tn) != m ||
        onx_attr_ints(n, "nodes_falsenodeids", &fn) != m || (int)modes->n_strings != m ||
        onx_attr_ints(n, "target_nodeids", &tnode) != mt || onx_attr_ints(n, "target_ids", &tid) != mt)
        return onx_error(c, n, FT_EGRAPH, "the nodes_* lists (treeids, nodeids, featureids, modes, truenodeids, "
                         "falsenodeids) and the target_* lists (treeids, nodeids, ids) must each be given with one length");
    const int nm = onx_attr_ints(n, "nodes_missing_value_tracks_true", &mtt);
    double *vals = NULL, *tw = NULL, *base = NULL;
    int nv, ntw, nb;
    te_tables t = {0};
    int64_t *renum = malloc((size_t)(m ? m : 1) * 2 * sizeof *renum), *leaf_w = renum ? renum + m : NULL;
    ft_status st = renum ? FT_OK : onx_oom(c);
    if (!st)
        st = legacy_floats(c, n, "nodes_values", &vals, &nv);
    if (!st)
        st = legacy_floats(c, n, "target_weights", &tw, &ntw);
    if (!st)
        st = legacy_floats(c, n, "base_values", &base, &nb);
    const int64_t nt = onx_attr_i(n, "n_targets", 1);
    if (!st && (nv != m || ntw != mt || (nb && nb != nt) || (nm >= 0 && nm != m) || nt < 1))
        st = onx_error(c, n, FT_EGRAPH, "nodes_values, target_weights, base_values (n_targets) or "
                       "nodes_missing_value_tracks_true has the wrong length");
    static const char *const mn[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
    /* number the branch nodes and the leaves; each leaf's one target entry */
    for (int e = 0; !st && e < m; e++) {
        const char *md = (const char *)modes->strings[e].data;
        const size_t ml = modes->strings[e].len;
        renum[e] = -1;
        if (ml == 4 && !memcmp(md, "LEAF", 4)) {
            int hits = 0;
            for (int k = 0; k < mt; k++)
                if (ttree[k] == tree[e] && tnode[k] == ids[e])
                    hits++, leaf_w[e] = k;
            if (hits != 1)
                st = onx_unsupported(c, n, "leaf %lld of tree %lld has %d target weights (ftrun maps one per leaf)",
                                     (long long)ids[e], (long long)tree[e], hits);
            renum[e] = t.nl++;
            continue;
        }
        int known = 0;
        for (int k = 0; k < 6; k++)
            known |= ml == strlen(mn[k]) && !memcmp(md, mn[k], ml);
        if (!known)
            st = onx_unsupported(c, n, "nodes_modes[%d] is '%.*s'", e, (int)(ml > 20 ? 20 : ml), md);
        renum[e] = t.nn++;
    }
    for (int k = 0; !st && k < mt; k++)
        if (tid[k] < 0 || tid[k] >= nt)
            st = onx_error(c, n, FT_EGRAPH, "target_ids[%d] = %lld is not a target (n_targets %lld)", k,
                           (long long)tid[k], (long long)nt);
    int trees = 0; /* distinct tree ids */
    for (int e = 0; !st && e < m; e++) {
        int first = 1;
        for (int f = 0; f < e && first; f++)
            first = tree[f] != tree[e];
        trees += first;
    }
    if (!st) {
        const int cap = t.nn + trees + 1, lcap = t.nl + trees + 1;
        for (int i = 0; i < 6; i++)
            t.ints[i] = calloc((size_t)cap, sizeof(int64_t));
        t.ints[6] = calloc((size_t)lcap, sizeof(int64_t));
        t.ints[7] = calloc((size_t)trees + 1, sizeof(int64_t));
        t.splits = calloc((size_t)cap, sizeof(double));
        t.weights = calloc((size_t)lcap, sizeof(double));
        for (int i = 0; i < 8; i++)
            if (!t.ints[i])
                st = onx_oom(c);
        if (!t.splits || !t.weights)
            st = onx_oom(c);
    }
    int64_t *mtt_new = NULL;
    if (!st && nm >= 0 && !(mtt_new = calloc((size_t)(t.nn + trees + 1), sizeof *mtt_new)))
        st = onx_oom(c);
    for (int e = 0; !st && e < m; e++) {
        const char *md = (const char *)modes->strings[e].data;
        const size_t ml = modes->strings[e].len;
        if (ml == 4 && !memcmp(md, "LEAF", 4)) {
            t.ints[6][renum[e]] = tid[leaf_w[e]];
            t.weights[renum[e]] = tw[leaf_w[e]];
            continue;
        }
        const int64_t j = renum[e];
        for (int k = 0; k < 6; k++)
            if (ml == strlen(mn[k]) && !memcmp(md, mn[k], ml))
                t.ints[1][j] = k;
        t.ints[0][j] = feat[e];
        t.splits[j] = vals[e];
        if (mtt_new)
            mtt_new[j] = mtt[e];
        for (int side = 0; side < 2 && !st; side++) {
            const int64_t f = te_find(tree, ids, m, tree[e], side ? fn[e] : tn[e]);
            if (f < 0) {
                st = onx_error(c, n, FT_EGRAPH, "node %lld of tree %lld: its %s node %lld is not in the tree",
                               (long long)ids[e], (long long)tree[e], side ? "false" : "true",
                               (long long)(side ? fn[e] : tn[e]));
                break;
            }
            const int isleaf = modes->strings[f].len == 4 && !memcmp(modes->strings[f].data, "LEAF", 4);
            t.ints[side ? 3 : 2][j] = renum[f];
            t.ints[side ? 5 : 4][j] = isleaf;
        }
    }
    /* the roots: per tree, the entry no other entry of that tree names as a child */
    for (int e = 0; !st && e < m && t.nr <= trees; e++) {
        int child = 0;
        for (int f = 0; f < m && !child; f++)
            child = tree[f] == tree[e] && !(modes->strings[f].len == 4 && !memcmp(modes->strings[f].data, "LEAF", 4)) &&
                    (tn[f] == ids[e] || fn[f] == ids[e]);
        if (child)
            continue;
        const int leaf = modes->strings[e].len == 4 && !memcmp(modes->strings[e].data, "LEAF", 4);
        if (!leaf) {
            t.ints[7][t.nr++] = renum[e];
            continue;
        }
        /* a one-leaf tree: a node whose two ways lead to the leaf and to a copy of it */
        const int64_t j = t.nn++, copy = t.nl++;
        t.ints[6][copy] = t.ints[6][renum[e]];
        t.weights[copy] = t.weights[renum[e]];
        t.ints[2][j] = renum[e], t.ints[3][j] = copy, t.ints[4][j] = t.ints[5][j] = 1;
        t.ints[7][t.nr++] = j;
    }
    if (!st && t.nr != trees)
        st = onx_error(c, n, FT_EGRAPH, "%d trees but %d roots (entries no node of their tree names as a child)", trees,
                       t.nr);
    /* x (a cast to f32 for integers) -> tree_ensemble -> f32 -> + base_values -> post_transform */
    int x = onx_in(c, n, 0);
    const ft_dtype wd = dt == FT_F64 ? FT_F64 : FT_F32;
    if (!st && wd != dt) {
        int xc = ox_tmp(c, n, "x_f32");
        st = xc >= 0 && ox_cast(c, n, x, FT_F32, xc) ? FT_OK : FT_EGRAPH;
        x = xc;
    }
    const int last_plain = !nb && !strcmp(post, "NONE") && wd == FT_F32;
    int y = st ? -1 : last_plain ? ox_out(c, n, 0) : ox_tmp(c, n, "sums");
    ft_node *f = st || y < 0 ? NULL : ox_emit1(c, n, FT_OP_TREE_ENSEMBLE, x, y);
    if (!st && !f)
        st = FT_EGRAPH;
    static const char *const names[8] = {"nodes_featureids", "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
                                         "nodes_trueleafs", "nodes_falseleafs", "leaf_targetids", "tree_roots"};
    for (int i = 0; i < 8 && !st; i++)
        st = onx_set_ints(c, f, names[i], t.ints[i], i == 6 ? t.nl : i == 7 ? t.nr : t.nn);
    if (!st)
        st = onx_set_floats(c, f, "nodes_splits", t.splits, t.nn);
    if (!st)
        st = onx_set_floats(c, f, "leaf_weights", t.weights, t.nl);
    if (!st && mtt_new)
        st = onx_set_ints(c, f, "nodes_missing_value_tracks_true", mtt_new, t.nn);
    if (!st)
        st = onx_set_i(c, f, "n_targets", nt);
    if (!st)
        st = onx_set_i(c, f, "aggregate_function", aggn);
    if (!st && wd != FT_F32) {
        const int done = !nb && !strcmp(post, "NONE");
        int y2 = done ? ox_out(c, n, 0) : ox_tmp(c, n, "sums_f32");
        st = y2 >= 0 && ox_cast(c, n, y, FT_F32, y2) ? FT_OK : FT_EGRAPH;
        y = y2;
    }
    if (!st && nb) {
        float *b32 = malloc((size_t)nb * sizeof *b32);
        const ft_shape bs = {.rank = 1, .dims = {nb}};
        for (int i = 0; b32 && i < nb; i++)
            b32[i] = (float)base[i];
        int bc = b32 ? onx_const_new(c, n, "base_values", FT_F32, &bs, b32) : -1;
        free(b32);
        int y2 = !strcmp(post, "NONE") ? ox_out(c, n, 0) : ox_tmp(c, n, "with_base");
        st = bc >= 0 && y2 >= 0 && ox_emit2(c, n, FT_OP_ADD, y, bc, y2) ? FT_OK : FT_EGRAPH;
        y = y2;
    }
    if (!st && strcmp(post, "NONE")) {
        ft_node *p = ox_emit1(c, n, strcmp(post, "LOGISTIC") ? FT_OP_SOFTMAX : FT_OP_SIGMOID, y, ox_out(c, n, 0));
        st = p ? (strcmp(post, "LOGISTIC") ? onx_set_i(c, p, "axis", -1) : FT_OK) : FT_EGRAPH;
    }
    te_free(&t);
    free(mtt_new);
    free(renum);
    free(vals);
    free(tw);
    free(base);
    return st;
}
