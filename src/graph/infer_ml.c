/* Inference of the text-feature and ai.onnx.ml ops (ONNX's TfIdfVectorizer,
 * onnx/defs/nn/defs.cc in the ONNX sources; the ai.onnx.ml ops LabelEncoder
 * and TreeEnsemble, onnx/defs/traditionalml/defs.cc): their attribute tables are checked
 * here, once, so that the kernels (runtime/ml.c) index them without checks. */
#include <stdlib.h>
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

/* tree_ensemble's node and leaf lists. */
#define TE_LISTS(X)                                                                                                    \
    X(nodes_featureids) X(nodes_modes) X(nodes_truenodeids) X(nodes_falsenodeids) X(nodes_trueleafs) X(nodes_falseleafs)

/* Whether the walk from every root of tree_ensemble's table ends at leaves
 * (no node reached again on one path); state: n bytes of scratch. */
static int te_acyclic(const ft_node *nd, int64_t n, char *state, int64_t *stack)
{
    const ft_attr_val *tn = ft_attr(nd, "nodes_truenodeids"), *fn = ft_attr(nd, "nodes_falsenodeids");
    const ft_attr_val *tl = ft_attr(nd, "nodes_trueleafs"), *fl = ft_attr(nd, "nodes_falseleafs");
    const ft_attr_val *roots = ft_attr(nd, "tree_roots");
    memset(state, 0, (size_t)n);
    for (int r = 0; r < roots->n; r++) {
        const int64_t root = roots->ints[r];
        if (state[root] == 2 || (tl->ints[root] && fl->ints[root] && tn->ints[root] == fn->ints[root]))
            continue;
        /* iterative depth-first walk: stack entries are node * 3 + the next child to visit (0, 1) or 2 (done) */
        int64_t top = 0;
        stack[top++] = root * 3;
        state[root] = 1;
        while (top) {
            const int64_t i = stack[top - 1] / 3, k = stack[top - 1] % 3;
            if (k == 2) {
                state[i] = 2;
                top--;
                continue;
            }
            stack[top - 1]++;
            const int leaf = (int)(k == 0 ? tl->ints[i] : fl->ints[i]);
            const int64_t next = k == 0 ? tn->ints[i] : fn->ints[i];
            if (leaf || state[next] == 2)
                continue;
            if (state[next] == 1)
                return 0;
            state[next] = 1;
            stack[top++] = next * 3;
        }
    }
    return 1;
}

/* tree_ensemble (x [N, F]) -> y [N, n_targets], x's dtype: ai.onnx.ml
 * TreeEnsemble (version 5). The tables are checked here: list lengths, ids
 * and feature numbers in range, modes known, member sets for every MEMBER
 * node, no cycles. */
ft_status ft_infer_tree_ensemble(ft_infer_ctx *c)
{
    const ft_node *nd = c->node;
    const ft_shape *xs = &c->in[0]->shape;
    char b[FT_SHAPE_STR];
    if (xs->rank != 2)
        return ft_infer_fail(c, "input '%s' has shape %s: tree_ensemble takes [N, features]", ft_infer_in_name(c, 0),
                             ft_shape_str(xs, b));
    const ft_attr_val *splits = ft_attr(nd, "nodes_splits"), *lw = ft_attr(nd, "leaf_weights");
    const ft_attr_val *lt = ft_attr(nd, "leaf_targetids"), *roots = ft_attr(nd, "tree_roots");
    const ft_attr_val *mtt = ft_attr(nd, "nodes_missing_value_tracks_true"), *mv = ft_attr(nd, "membership_values");
    const int64_t n = splits->n, nl = lw->n, nt = ft_attr(nd, "n_targets")->i;
#define TE_LEN(name)                                                                                                   \
    if (ft_attr(nd, #name)->n != n)                                                                                    \
        return ft_infer_fail(c, "attribute '" #name "' has %d entries for %lld nodes (nodes_splits)", ft_attr(nd, #name)->n, \
                             (long long)n);
    TE_LISTS(TE_LEN)
#undef TE_LEN
    if (mtt->present && mtt->n != n)
        return ft_infer_fail(c, "attribute 'nodes_missing_value_tracks_true' has %d entries for %lld nodes", mtt->n,
                             (long long)n);
    if (lt->n != nl)
        return ft_infer_fail(c, "attribute 'leaf_targetids' has %d entries for %lld leaves (leaf_weights)", lt->n,
                             (long long)nl);
    if (nt < 1)
        return ft_infer_fail(c, "attribute 'n_targets' is %lld (must be >= 1)", (long long)nt);
    const int64_t agg = ft_attr(nd, "aggregate_function")->i, post = ft_attr(nd, "post_transform")->i;
    if (agg < 0 || agg > 3)
        return ft_infer_fail(c, "attribute 'aggregate_function' is %lld (expected 0 AVERAGE, 1 SUM, 2 MIN or 3 MAX)",
                             (long long)agg);
    if (post != 0)
        return ft_infer_fail(c, "attribute 'post_transform' is %lld: ftrun's tree_ensemble takes 0 (NONE) only",
                             (long long)post);
    for (int i = 0; i < lt->n; i++)
        if (lt->ints[i] < 0 || lt->ints[i] >= nt)
            return ft_infer_fail(c, "leaf_targetids[%d] = %lld is not a target (n_targets %lld)", i,
                                 (long long)lt->ints[i], (long long)nt);
    const ft_attr_val *feat = ft_attr(nd, "nodes_featureids"), *modes = ft_attr(nd, "nodes_modes");
    const ft_attr_val *tn = ft_attr(nd, "nodes_truenodeids"), *fn = ft_attr(nd, "nodes_falsenodeids");
    const ft_attr_val *tl = ft_attr(nd, "nodes_trueleafs"), *fl = ft_attr(nd, "nodes_falseleafs");
    int64_t members = 0, sets = 0;
    for (int64_t i = 0; i < n; i++) {
        if (modes->ints[i] < 0 || modes->ints[i] > 6)
            return ft_infer_fail(c, "nodes_modes[%lld] = %lld (expected 0 BRANCH_LEQ .. 6 BRANCH_MEMBER)", (long long)i,
                                 (long long)modes->ints[i]);
        members += modes->ints[i] == 6;
        if (feat->ints[i] < 0 || feat->ints[i] >= xs->dims[1])
            return ft_infer_fail(c, "nodes_featureids[%lld] = %lld is not a feature of input '%s' (%lld features)",
                                 (long long)i, (long long)feat->ints[i], ft_infer_in_name(c, 0), (long long)xs->dims[1]);
        for (int side = 0; side < 2; side++) {
            const int64_t leaf = (side ? fl : tl)->ints[i], id = (side ? fn : tn)->ints[i];
            if ((leaf != 0 && leaf != 1) || id < 0 || id >= (leaf ? nl : n))
                return ft_infer_fail(c, "node %lld's %s branch: %s %lld is out of range (%lld %s)", (long long)i,
                                     side ? "false" : "true", leaf ? "leaf" : "node", (long long)id,
                                     (long long)(leaf ? nl : n), leaf ? "leaves" : "nodes");
        }
    }
    for (int i = 0; mv->present && i < mv->n; i++)
        sets += mv->floats[i] != mv->floats[i];
    if (members && sets != members)
        return ft_infer_fail(c, "membership_values holds %lld NaN-ended sets for %lld BRANCH_MEMBER nodes",
                             (long long)sets, (long long)members);
    for (int r = 0; r < roots->n; r++) {
        const int64_t root = roots->ints[r];
        if (root < 0 || root >= n || (tl->ints[root] && fl->ints[root] && tn->ints[root] == fn->ints[root] &&
                                      root >= nl))
            return ft_infer_fail(c, "tree_roots[%d] = %lld is out of range (%lld nodes)", r, (long long)root, (long long)n);
    }
    char *state = malloc((size_t)(n ? n : 1));
    int64_t *stack = malloc((size_t)(n ? n : 1) * sizeof *stack);
    int ok = state && stack && te_acyclic(nd, n, state, stack);
    int mem = state && stack;
    free(state);
    free(stack);
    if (!mem)
        return ft_infer_fail(c, "out of memory");
    if (!ok)
        return ft_infer_fail(c, "the nodes form a cycle: a tree's walk reaches a node again");
    ft_shape o = {.rank = 2, .dims = {xs->dims[0], nt}};
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &o);
}
