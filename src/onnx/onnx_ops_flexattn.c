/* FlexAttention of ONNX's ai.onnx.preview domain (opset 1) as ftrun ops, in
 * the order of the operator's text:
 *
 *   scores = (Q * sqrt(scale)) @ (K * sqrt(scale))^T   // in Q's dtype, K from its head (GQA)
 *   scores = cast(scores, softmax dtype)                // when it differs from Q's
 *   scores = score_mod(scores)                          // the subgraph, imported here
 *   probs  = softmax(scores, axis -1)
 *   probs  = prob_mod(probs)                            // likewise
 *   Y      = cast(probs @ cast(V, softmax dtype), Q's dtype)
 *
 * Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev]; query head h reads
 * K/V head h / (Hq / Hkv) (a gather along the head axis when Hq != Hkv).
 * scale defaults to 1/sqrt(E); sqrt(scale) is taken in f32 and rounded to
 * Q's dtype, as ONNX's reference and function body do; a negative scale
 * multiplies Q by -sqrt(|scale|) (the scores are still QK^T * scale). The
 * softmax dtype is softmax_precision (float16, bfloat16, float or double),
 * by default f64 for f64 inputs and f32 otherwise. Without modifier graphs,
 * f32 and f64 inputs whose softmax dtype is their own become one attention
 * node (GQA included) with scale sqrt(scale)^2, the same product.
 *
 * A modifier subgraph (score_mod, prob_mod) takes one tensor [B, Hq, L, S] of
 * the softmax dtype and returns one of the same shape and dtype. Its nodes are
 * imported into the graph (as a loop body is, onnx_loop.c): its input bound
 * to the scores or probabilities, its initializers decoded for this node
 * (another node's graph may use the same names with other values), names of
 * the outer scope resolving to the main graph's values, shape arithmetic on
 * the (static) scores folded at load. A subgraph of another arity, or an output
 * of another shape or dtype, is an error naming the node and attribute.
 *
 *   {"ai.onnx.preview.FlexAttention", 1, ox_map_flex_attention}  // onnx_ops.c's table
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx_internal.h"
#include "onnx_ops.h"

static const char *const QKV[3] = {"Q", "K", "V"};

/* The inputs' ranks, dtypes and dims: d = {B, Hq, L, E, Hkv, S, Ev}. */
static ft_status check_inputs(onx_ctx *c, const onx_node *n, int64_t *d, ft_dtype *dt)
{
    if (n->n_in != 3 || n->n_out != 1)
        return onx_error(c, n, FT_EGRAPH, "%d inputs and %d outputs; FlexAttention takes Q, K and V and gives Y",
                         n->n_in, n->n_out);
    const ft_tensor *t[3];
    for (int k = 0; k < 3; k++) {
        if (!(t[k] = onx_in_tensor(c, n, k)))
            return onx_error(c, n, FT_EGRAPH, "input %d (%s) is missing", k, QKV[k]);
        if (t[k]->flags & FT_TF_DYNAMIC)
            return onx_unsupported(c, n, "input %d (%s) has a shape known only at run time; ftrun builds the scores "
                                   "tensor with its shape at load", k, QKV[k]);
        if (t[k]->shape.rank != 4)
            return onx_error(c, n, FT_EGRAPH, "input %d (%s) has rank %d; FlexAttention takes rank-4 Q [B, Hq, L, E], "
                             "K [B, Hkv, S, E] and V [B, Hkv, S, Ev]", k, QKV[k], t[k]->shape.rank);
    }
    *dt = t[0]->dtype;
    if (*dt != FT_F16 && *dt != FT_BF16 && *dt != FT_F32 && *dt != FT_F64)
        return onx_error(c, n, FT_EGRAPH, "input 0 (Q) has dtype %s; FlexAttention takes float16, bfloat16, float or "
                         "double", ft_dtype_name(*dt));
    if (t[1]->dtype != *dt || t[2]->dtype != *dt)
        return onx_error(c, n, FT_EGRAPH, "inputs Q, K and V have dtypes %s, %s and %s; they must be the same",
                         ft_dtype_name(*dt), ft_dtype_name(t[1]->dtype), ft_dtype_name(t[2]->dtype));
    const int64_t *q = t[0]->shape.dims, *k = t[1]->shape.dims, *v = t[2]->shape.dims;
    char qs[FT_SHAPE_STR], ks[FT_SHAPE_STR], vs[FT_SHAPE_STR];
    ft_shape_str(&t[0]->shape, qs), ft_shape_str(&t[1]->shape, ks), ft_shape_str(&t[2]->shape, vs);
    const char *why = q[0] != k[0] || q[0] != v[0] ? "the batch sizes (dim 0) differ"
                    : k[1] != v[1]                 ? "K and V have different numbers of heads (dim 1)"
                    : k[2] != v[2]                 ? "K and V have different sequence lengths (dim 2)"
                    : q[3] != k[3]                 ? "Q and K have different head sizes (dim 3)"
                    : k[1] < 1 || q[1] % k[1]      ? "Q's number of heads (dim 1) is not a multiple of K's and V's"
                                                   : NULL;
    if (why)
        return onx_error(c, n, FT_EGRAPH, "Q %s, K %s and V %s do not agree: %s", qs, ks, vs, why);
    int64_t all[7] = {q[0], q[1], q[2], q[3], k[1], k[2], v[3]};
    memcpy(d, all, sizeof all);
    return FT_OK;
}

/* The dtype of the scores, softmax and probabilities. */
static ft_status softmax_dtype(onx_ctx *c, const onx_node *n, ft_dtype in, ft_dtype *sp)
{
    *sp = in == FT_F64 ? FT_F64 : FT_F32;
    if (!onx_has_attr(n, "softmax_precision"))
        return FT_OK;
    int64_t p = onx_attr_i(n, "softmax_precision", 1);
    const char *name;
    if (ox_dtype_from_onnx(p, sp, &name) || (*sp != FT_F16 && *sp != FT_BF16 && *sp != FT_F32 && *sp != FT_F64))
        return onx_error(c, n, FT_EGRAPH, "attribute softmax_precision=%lld (%s); expected 1 (float), 10 (float16), "
                         "16 (bfloat16) or 11 (double)", (long long)p, name ? name : "no ONNX type");
    return FT_OK;
}

/* The tensor of the modifier subgraph's output (imported) into *r. */
static ft_status subgraph_out(onx_ctx *c, const onx_node *n, const char *attr, const Onnx__GraphProto *gp, int *r)
{
    const char *oname = nz(gp->output[0]->name);
    if (onx_seq_get(c, oname))
        return onx_error(c, n, FT_EGRAPH, "attribute %s: its output '%s' is a sequence; FlexAttention reads a tensor",
                         attr, oname);
    *r = onx_resolve(c, oname);
    if (*r == -2)
        return c->last;
    if (*r < 0)
        return onx_error(c, n, FT_EGRAPH, "attribute %s: its output '%s' is not produced in its graph", attr, oname);
    return FT_OK;
}

/* The modifier subgraph of attribute `attr` applied to tensor t (the scores
 * or probabilities): its output's tensor into *out, t itself when the node
 * has no such attribute. */
static ft_status apply_mod(onx_ctx *c, const onx_node *n, const char *attr, const char *what, int t, int *out)
{
    *out = t;
    const Onnx__AttributeProto *a = onx_attr(n, attr);
    if (!a)
        return FT_OK;
    if (!a->g)
        return onx_error(c, n, FT_EGRAPH, "attribute %s is not a graph", attr);
    const Onnx__GraphProto *gp = a->g;
    if (gp->n_input != 1 || gp->n_output != 1)
        return onx_error(c, n, FT_EGRAPH, "attribute %s: its graph has %zu input%s and %zu output%s; FlexAttention "
                         "gives it one input (the %s [B, Hq, L, S]) and reads one output", attr, gp->n_input,
                         gp->n_input == 1 ? "" : "s", gp->n_output, gp->n_output == 1 ? "" : "s", what);
    OX_TRY(onx_infer_pending(c)); /* the subgraph's shape arithmetic reads t's shape */
    int here = c->emitted_here, unsup = c->n_unsup;
    /* another node's modifier graph may use the same names, initializers
     * included (with other values): this one's node outputs are made anew
     * and its initializers are its own while it is imported */
    onx_scope sc = {0};
    ft_status st = onx_unbind_outputs(c, gp);
    if (!st)
        st = onx_scope_enter(c, &sc, gp);
    if (!st && onx_bind(c, nz(gp->input[0]->name), t) < 0)
        st = onx_oom(c);
    if (!st)
        st = onx_import_body(c, n, gp);
    c->emitted_here = here; /* the subgraph's nodes named their own */
    int r = -1;
    if (!st && c->n_unsup > unsup) { /* the subgraph holds something unsupported: so does the node */
        c->unsup_flag = 1;
        st = FT_EGRAPH;
    } else if (!st)
        st = subgraph_out(c, n, attr, gp, &r); /* before its initializers go out of scope */
    ft_status ls = onx_scope_leave(c, &sc);
    onx_scope_free(&sc);
    if (st || ls)
        return st ? st : ls;
    const char *oname = nz(gp->output[0]->name);
    OX_TRY(onx_infer_pending(c));
    const ft_tensor *x = &c->g->tensors[r], *in = &c->g->tensors[t];
    if (x->dtype != in->dtype || (x->flags & FT_TF_DYNAMIC) || !ft_shape_eq(&x->shape, &in->shape)) {
        char xs[FT_SHAPE_STR], is[FT_SHAPE_STR];
        ft_shape_str(&x->shape, xs), ft_shape_str(&in->shape, is);
        return onx_error(c, n, FT_EGRAPH, "attribute %s: its output '%s' is %s %s%s; it must be %s %s, as the %s it "
                         "takes", attr, oname, ft_dtype_name(x->dtype), xs,
                         x->flags & FT_TF_DYNAMIC ? " (shape known at run time)" : "", ft_dtype_name(in->dtype), is,
                         what);
    }
    *out = r;
    return FT_OK;
}

/* K or V (input k) with its heads repeated for the query heads (GQA): a
 * gather of head h / group along axis 1, or the input itself. */
static int heads_for_queries(onx_ctx *c, const onx_node *n, int k, int64_t hq, int64_t hkv)
{
    int t = onx_in(c, n, k);
    if (hq == hkv)
        return t;
    int64_t *idx = ft_malloc((size_t)hq * sizeof *idx);
    if (!idx) {
        onx_oom(c);
        return -1;
    }
    for (int64_t h = 0; h < hq; h++)
        idx[h] = h / (hq / hkv);
    ft_shape s = {.rank = 1, .dims = {hq}};
    int ix = ox_const_ints(c, n, k == 1 ? "k_heads" : "v_heads", FT_I64, &s, idx);
    free(idx);
    int out = ix < 0 ? -1 : ox_tmp(c, n, k == 1 ? "k_per_query_head" : "v_per_query_head");
    ft_node *g = out < 0 ? NULL : ox_emit2(c, n, FT_OP_GATHER, t, ix, out);
    return g && !onx_set_i(c, g, "axis", 1) ? out : -1;
}

ft_status ox_map_flex_attention(onx_ctx *c, const onx_node *n)
{
    int64_t d[7] = {0};
    ft_dtype dt = FT_F32, sp = FT_F32;
    OX_TRY(check_inputs(c, n, d, &dt));
    OX_TRY(softmax_dtype(c, n, dt, &sp));
    double scale = onx_has_attr(n, "scale") ? onx_attr_f(n, "scale", 1.0) : 1.0 / sqrt((double)d[3]);
    double root = sqrtf(fabsf((float)scale));
    if (!onx_has_attr(n, "score_mod") && !onx_has_attr(n, "prob_mod") && sp == dt && (dt == FT_F32 || dt == FT_F64)) {
        /* nothing between the products: ftrun's attention, which computes them in dt and reads K/V head h / group */
        int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, y = ox_out(c, n, 0);
        ft_node *f = y < 0 ? NULL : onx_emit(c, n, FT_OP_ATTENTION, in, 3, &y, 1);
        OX_NEED(f);
        return onx_set_f(c, f, "scale", (scale < 0 ? -root : root) * root);
    }
    int k = heads_for_queries(c, n, 1, d[1], d[4]), v = k < 0 ? -1 : heads_for_queries(c, n, 2, d[1], d[4]);
    OX_NEED(k >= 0 && v >= 0);
    int sq = ox_scalar(c, n, "q_scale", dt, scale < 0 ? -root : root), sk = ox_scalar(c, n, "k_scale", dt, root);
    int qs = ox_tmp(c, n, "q_scaled"), ks = ox_tmp(c, n, "k_scaled"), kt = ox_tmp(c, n, "k_transposed");
    int sc = ox_tmp(c, n, "scores");
    static const int64_t perm[4] = {0, 1, 3, 2};
    OX_NEED(sq >= 0 && sk >= 0 && qs >= 0 && ks >= 0 && kt >= 0 && sc >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_MUL, onx_in(c, n, 0), sq, qs) && ox_emit2(c, n, FT_OP_MUL, k, sk, ks));
    OX_NEED(ox_transpose(c, n, ks, perm, 4, kt) && ox_emit2(c, n, FT_OP_MATMUL, qs, kt, sc));
    if (sp != dt) {
        int cs = ox_tmp(c, n, "scores_cast");
        OX_NEED(cs >= 0 && ox_cast(c, n, sc, sp, cs));
        sc = cs;
    }
    int mod, pr = ox_tmp(c, n, "probs");
    OX_NEED(pr >= 0);
    OX_TRY(apply_mod(c, n, "score_mod", "scores", sc, &mod));
    OX_NEED(ox_emit1(c, n, FT_OP_SOFTMAX, mod, pr));
    OX_TRY(apply_mod(c, n, "prob_mod", "probabilities", pr, &mod));
    int y = ox_out(c, n, 0);
    OX_NEED(y >= 0);
    if (sp == dt)
        return ox_emit2(c, n, FT_OP_MATMUL, mod, v, y) ? FT_OK : onx_status(c);
    int vc = ox_tmp(c, n, "v_cast"), yc = ox_tmp(c, n, "y_softmax_dtype");
    OX_NEED(vc >= 0 && yc >= 0 && ox_cast(c, n, v, sp, vc) && ox_emit2(c, n, FT_OP_MATMUL, mod, vc, yc));
    return ox_cast(c, n, yc, dt, y) ? FT_OK : onx_status(c);
}
