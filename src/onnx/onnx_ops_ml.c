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
