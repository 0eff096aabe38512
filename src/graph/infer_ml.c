/* Inference of the text-feature and ai.onnx.ml ops (ONNX's TfIdfVectorizer,
 * onnx/defs/nn/defs.cc in the ONNX sources; the ai.onnx.ml ops LabelEncoder
 * and TreeEnsemble, onnx/defs/traditionalml/defs.cc): their attribute tables are checked
 * here, once, so that the kernels (runtime/ml.c) index them without checks. */
#include <string.h>

#include "infer_common.h"

/* tfidf_vectorizer (x, pool): x [C] or [B, C] of i32, i64 or strings; pool
 * the n-grams, 1-D i64 (strings for string x), grouped by size: group g
 * (n-grams of g + 1 items) starts at ngram_counts[g]; n-gram k of the pool
 * counts into column ngram_indexes[k] of y ([C]: [cols]; [B, C]: [B, cols],
 * cols = max(ngram_indexes) + 1, f32). */
ft_status ft_infer_tfidf_vectorizer(ft_infer_ctx *c)
{
    const ft_tinfo *x = c->in[0], *pool = c->in[1];
    char b[FT_SHAPE_STR];
    if (x->shape.rank > 2)
        return ft_infer_fail(c, "input '%s' has shape %s: tfidf_vectorizer takes [C] or [B, C]", ft_infer_in_name(c, 0),
                             ft_shape_str(&x->shape, b));
    const ft_dtype want = x->dtype == FT_STRING ? FT_STRING : FT_I64;
    if (pool->dtype != want || pool->shape.rank != 1)
        return ft_infer_fail(c, "the pool '%s' must be a 1-D %s tensor for %s input, got %s %s", ft_infer_in_name(c, 1),
                             ft_dtype_name(want), ft_dtype_name(x->dtype), ft_dtype_name(pool->dtype),
                             ft_shape_str(&pool->shape, b));
    const char *mode = ft_attr(c->node, "mode")->s;
    if (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF"))
        return ft_infer_fail(c, "attribute 'mode' is '%s' (expected TF, IDF or TFIDF)", mode);
    const int64_t lo = ft_attr(c->node, "min_gram_length")->i, hi = ft_attr(c->node, "max_gram_length")->i;
    const int64_t skip = ft_attr(c->node, "max_skip_count")->i;
    if (lo < 1 || hi < lo)
        return ft_infer_fail(c, "min_gram_length %lld and max_gram_length %lld: need 1 <= min <= max", (long long)lo,
                             (long long)hi);
    if (skip < 0)
        return ft_infer_fail(c, "max_skip_count is %lld (must be >= 0)", (long long)skip);
    const ft_attr_val *cnt = ft_attr(c->node, "ngram_counts"), *idx = ft_attr(c->node, "ngram_indexes");
    const ft_attr_val *w = ft_attr(c->node, "weights");
    const int64_t np = pool->shape.dims[0];
    int64_t grams = 0;
    for (int g = 0; g < cnt->n; g++) {
        const int64_t s = cnt->ints[g], e = g + 1 < cnt->n ? cnt->ints[g + 1] : np;
        if (s < 0 || s > np || (g && s < cnt->ints[g - 1]))
            return ft_infer_fail(c, "ngram_counts[%d] = %lld: the groups must start in order within the pool's %lld "
                                 "items", g, (long long)s, (long long)np);
        if (e < s || e > np)
            continue; /* the next group's start, refused next */
        if ((e - s) % (g + 1))
            return ft_infer_fail(c, "the pool's %d-grams (items %lld..%lld) are not a whole number of %d-grams", g + 1,
                                 (long long)s, (long long)e - 1, g + 1);
        grams += (e - s) / (g + 1);
    }
    if (cnt->n == 0 && np)
        return ft_infer_fail(c, "ngram_counts is empty but the pool has %lld items", (long long)np);
    if (idx->n != grams)
        return ft_infer_fail(c, "ngram_indexes has %d entries for the pool's %lld n-grams", idx->n, (long long)grams);
    int64_t cols = 0;
    for (int k = 0; k < idx->n; k++) {
        if (idx->ints[k] < 0 || idx->ints[k] >= (int64_t)1 << 31)
            return ft_infer_fail(c, "ngram_indexes[%d] = %lld is out of range", k, (long long)idx->ints[k]);
        cols = idx->ints[k] + 1 > cols ? idx->ints[k] + 1 : cols;
    }
    if (w->present && w->n < cols)
        return ft_infer_fail(c, "weights has %d entries for %lld output columns", w->n, (long long)cols);
    ft_shape o = {.rank = 1, .dims = {cols}};
    if (x->shape.rank == 2)
        o = (ft_shape){.rank = 2, .dims = {x->shape.dims[0], cols}};
    return ft_infer_set_out(c, 0, FT_F32, &o);
}

/* Which of strings, integers (bool too) and floats dt is. */
static int key_class(ft_dtype dt) { return dt == FT_STRING ? 0 : ft_dtype_is_float(dt) ? 2 : 1; }

/* label_encoder (x, keys, values, default): each element of x that equals
 * keys[i] becomes values[i], any other default; y has x's shape and values'
 * dtype. keys compare with x as strings, integers or floats alike. */
ft_status ft_infer_label_encoder(ft_infer_ctx *c)
{
    const ft_tinfo *x = c->in[0], *k = c->in[1], *v = c->in[2], *d = c->in[3];
    static const char *const cls[] = {"strings", "integers", "floats"};
    char b[FT_SHAPE_STR], b2[FT_SHAPE_STR];
    if (k->shape.rank != 1 || key_class(k->dtype) != key_class(x->dtype) || ft_dtype_is_lowp(k->dtype))
        return ft_infer_fail(c, "the keys '%s' (%s %s) must be a 1-D tensor of %s, as input '%s' is %s",
                             ft_infer_in_name(c, 1), ft_dtype_name(k->dtype), ft_shape_str(&k->shape, b),
                             cls[key_class(x->dtype)], ft_infer_in_name(c, 0), ft_dtype_name(x->dtype));
    if (v->shape.rank != 1 || v->shape.dims[0] != k->shape.dims[0])
        return ft_infer_fail(c, "the values '%s' have shape %s for %lld keys: one value per key",
                             ft_infer_in_name(c, 2), ft_shape_str(&v->shape, b), (long long)k->shape.dims[0]);
    if (!ft_dtype_in(v->dtype, FT_DT_NUM | FT_DT_STR))
        return ft_infer_fail(c, "the values '%s' are %s: label_encoder gives numbers or strings", ft_infer_in_name(c, 2),
                             ft_dtype_name(v->dtype));
    if (d->dtype != v->dtype || ft_numel(&d->shape) != 1)
        return ft_infer_fail(c, "the default '%s' (%s %s) must be one %s value, as the values are",
                             ft_infer_in_name(c, 3), ft_dtype_name(d->dtype), ft_shape_str(&d->shape, b2),
                             ft_dtype_name(v->dtype));
    return ft_infer_set_out(c, 0, v->dtype, &x->shape);
}
