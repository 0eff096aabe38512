/* Inference of the data-dependent ops: non_zero, compress, unique,
 * non_max_suppression, and if_select when its branches' shapes differ; and of
 * image_decoder, whose output's shape its input's bytes give (ops.h:
 * ft_op_value_bytes). How many elements each gives depends on its input's
 * values, so each output is inferred at its bound (the most the op can give
 * for these input shapes); ft_node_infer marks the outputs dynamic
 * (FT_TF_DYNAMIC), the executor gives them memory for that bound at run time,
 * and the kernel sets the shape it wrote (runtime/backend.h). */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "image_codec.h"
#include "infer_common.h"

ft_status ft_infer_non_zero(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    /* a scalar counts as one element of a 1-D tensor (NumPy's nonzero) */
    ft_shape o = {.rank = 2, .dims = {s->rank ? s->rank : 1, (int64_t)ft_numel(s)}};
    return ft_infer_set_out(c, 0, FT_I64, &o);
}

/* The optional axis attribute resolved against rank: -1 when absent. */
static ft_status axis_or_flat(ft_infer_ctx *c, int rank, int *axis)
{
    const ft_attr_val *a = ft_attr(c->node, "axis");
    *axis = -1;
    if (!a->present)
        return FT_OK;
    if (ft_axis(a->i, rank, axis) != 0)
        return ft_infer_fail(c, "attribute 'axis' = %lld is out of range for input '%s' of rank %d (valid axes are "
                             "%d..%d)", (long long)a->i, ft_infer_in_name(c, 0), rank, -rank, rank - 1);
    return FT_OK;
}

ft_status ft_infer_compress(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape, *cs = &c->in[1]->shape;
    char b[FT_SHAPE_STR];
    if (c->in[1]->dtype != FT_BOOL || cs->rank != 1)
        return ft_infer_fail(c, "the condition '%s' must be a 1-D bool tensor, got %s %s", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype), ft_shape_str(cs, b));
    int axis;
    ft_status st = axis_or_flat(c, s->rank, &axis);
    if (st)
        return st;
    c->params->dd.axis = axis;
    ft_shape o = {.rank = 1, .dims = {(int64_t)ft_numel(s)}};
    if (axis >= 0)
        o = *s;
    int d = axis >= 0 ? axis : 0;
    if (cs->dims[0] < o.dims[d]) /* slices past the condition's end are dropped */
        o.dims[d] = cs->dims[0];
    return ft_infer_set_out(c, 0, c->in[0]->dtype, &o);
}

ft_status ft_infer_unique(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    int axis, sorted;
    ft_status st = axis_or_flat(c, s->rank, &axis);
    if (!st)
        st = ft_infer_flag(c, "sorted", &sorted);
    if (st)
        return st;
    c->params->dd.axis = axis;
    c->params->dd.sorted = sorted;
    int64_t len = axis >= 0 ? s->dims[axis] : (int64_t)ft_numel(s);
    ft_shape y = {.rank = 1, .dims = {len}}, v = {.rank = 1, .dims = {len}};
    if (axis >= 0)
        y = *s;
    st = ft_infer_set_out(c, 0, c->in[0]->dtype, &y);
    for (int i = 1; i < c->n_out && !st; i++) /* indices, inverse_indices, counts */
        st = ft_infer_set_out(c, i, FT_I64, &v);
    return st;
}

/* Input i, when given and known at load, as an integer (its first element). */
static int const_int(const ft_infer_ctx *c, int i, int64_t *v)
{
    if (i >= c->n_in || !c->in[i] || c->node->in[i] < 0)
        return 0;
    const ft_tensor *t = &c->g->tensors[c->node->in[i]];
    if (!(t->flags & FT_TF_VALUE) || !t->value || ft_numel(&t->shape) < 1 || t->dtype != FT_I64)
        return 0;
    *v = ((const int64_t *)t->value)[0];
    return 1;
}

/* image_decoder: [H, W, 3] (RGB, BGR) or [H, W, 1] (Grayscale), H and W
 * from the image's header when its bytes are known (a constant at load; at
 * run time, as the executor read them); [1, 1, C] stands in before that. */
ft_status ft_infer_image_decoder(ft_infer_ctx *c)
{
    const char *pf = ft_attr(c->node, "pixel_format")->s;
    int pix = !strcmp(pf, "RGB") ? FT_PIX_RGB : !strcmp(pf, "BGR") ? FT_PIX_BGR : !strcmp(pf, "Grayscale") ? FT_PIX_GRAY : -1;
    if (pix < 0)
        return ft_infer_fail(c, "attribute 'pixel_format' = '%s': expected \"RGB\", \"BGR\" or \"Grayscale\"", pf);
    c->params->dd.pixel = pix;
    const ft_tensor *t = &c->g->tensors[c->node->in[0]];
    char sb[FT_SHAPE_STR], why[256];
    if (t->shape.rank != 1)
        return ft_infer_fail(c, "the encoded image '%s' has shape %s; expected a 1-D u8 tensor of its bytes",
                             ft_infer_in_name(c, 0), ft_shape_str(&t->shape, sb));
    ft_shape o = {.rank = 3, .dims = {1, 1, pix == FT_PIX_GRAY ? 1 : 3}};
    int rc = (t->flags & FT_TF_VALUE) && t->value ?
        ft_image_probe((const uint8_t *)t->value, (size_t)ft_numel(&t->shape), &o.dims[0], &o.dims[1], why, sizeof why) : 0;
    if (rc == -2)
        return ft_node_err(c->err, FT_ERUNTIME, c->g, c->node, "the encoded image '%s' cannot be read: %s",
                           ft_infer_in_name(c, 0), why);
    if (rc)
        return ft_infer_fail(c, "the encoded image '%s' cannot be read: %s", ft_infer_in_name(c, 0), why);
    return ft_infer_set_out(c, 0, FT_U8, &o);
}

ft_status ft_infer_non_max_suppression(ft_infer_ctx *c)
{
    const ft_shape *bx = &c->in[0]->shape, *sc = &c->in[1]->shape;
    char b1[FT_SHAPE_STR], b2[FT_SHAPE_STR];
    if (bx->rank == 3 && sc->rank == 3 && c->in[1]->dtype == c->in[0]->dtype && ft_infer_standin(c) &&
        (bx->dims[2] != 4 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])) {
        /* stand-ins that disagree: the bound of the larger, the run checks */
        int64_t b = bx->dims[0] > sc->dims[0] ? bx->dims[0] : sc->dims[0];
        int64_t nb = bx->dims[1] > sc->dims[2] ? bx->dims[1] : sc->dims[2];
        ft_shape o = {.rank = 2, .dims = {0, 3}};
        if (__builtin_mul_overflow(b, sc->dims[1], &o.dims[0]) || __builtin_mul_overflow(o.dims[0], nb, &o.dims[0]))
            return ft_infer_fail(c, "the stand-ins of boxes %s and scores %s bound more selections than can be "
                                 "counted", ft_shape_str(bx, b1), ft_shape_str(sc, b2));
        return ft_infer_set_out(c, 0, FT_I64, &o);
    }
    if (bx->rank != 3 || bx->dims[2] != 4)
        return ft_infer_fail(c, "boxes '%s' must have shape [batches, boxes, 4], got %s", ft_infer_in_name(c, 0),
                             ft_shape_str(bx, b1));
    if (c->in[1]->dtype != c->in[0]->dtype || sc->rank != 3 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])
        return ft_infer_fail(c, "scores '%s' must be %s of shape [batches, classes, boxes] = [%lld, classes, %lld], got "
                             "%s %s", ft_infer_in_name(c, 1), ft_dtype_name(c->in[0]->dtype), (long long)bx->dims[0],
                             (long long)bx->dims[1], ft_dtype_name(c->in[1]->dtype), ft_shape_str(sc, b2));
    static const char *const what[] = {NULL, NULL, "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
    for (int i = 2; i < c->n_in; i++) {
        if (!c->in[i])
            continue;
        ft_dtype want = i == 2 ? FT_I64 : FT_F32;
        if (c->in[i]->dtype != want || ft_numel(&c->in[i]->shape) != 1 || c->in[i]->shape.rank > 1)
            return ft_infer_fail(c, "%s '%s' must be one %s value (a scalar or shape [1]), got %s %s", what[i],
                                 ft_infer_in_name(c, i), ft_dtype_name(want), ft_dtype_name(c->in[i]->dtype),
                                 ft_shape_str(&c->in[i]->shape, b1));
    }
    int center;
    ft_status st = ft_infer_flag(c, "center_point_box", &center);
    if (st)
        return st;
    c->params->dd.center = center;
    /* at most every box of every class of every batch, or max per class
     * when that is known now (absent: 0, nothing is selected) */
    int64_t per = bx->dims[1], m;
    if (c->n_in < 3 || !c->in[2])
        per = 0;
    else if (const_int(c, 2, &m))
        per = m < 0 ? 0 : m < per ? m : per;
    ft_shape o = {.rank = 2, .dims = {bx->dims[0] * sc->dims[1] * per, 3}};
    return ft_infer_set_out(c, 0, FT_I64, &o);
}

/* if_select: the value of the branch its condition chose (the other branch
 * did not run). Branches of equal shapes give that shape; otherwise the
 * output is sized at their larger dims and its shape decided at run time;
 * branches of different ranks give the shape of the one with more elements
 * (the then branch on a tie) as the stand-in, rank and all decided at run
 * time (FT_TF_RANK_VARIES). */
ft_status ft_infer_if_select(ft_infer_ctx *c)
{
    const ft_tinfo *a = c->in[1], *b = c->in[2];
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (c->in[0]->dtype != FT_BOOL || ft_numel(&c->in[0]->shape) != 1)
        return ft_infer_fail(c, "the condition '%s' must be one bool value, got %s %s", ft_infer_in_name(c, 0),
                             ft_dtype_name(c->in[0]->dtype), ft_shape_str(&c->in[0]->shape, s1));
    if (a->dtype != b->dtype)
        return ft_infer_fail(c, "the branches give %s %s ('%s') and %s %s ('%s'); ftrun needs the same dtype",
                             ft_dtype_name(a->dtype), ft_shape_str(&a->shape, s1), ft_infer_in_name(c, 1),
                             ft_dtype_name(b->dtype), ft_shape_str(&b->shape, s2), ft_infer_in_name(c, 2));
    if (a->shape.rank != b->shape.rank) {
        c->rank_varies = 1;
        return ft_infer_set_out(c, 0, a->dtype, ft_numel(&b->shape) > ft_numel(&a->shape) ? &b->shape : &a->shape);
    }
    ft_shape o = a->shape;
    for (int d = 0; d < o.rank; d++)
        if (b->shape.dims[d] > o.dims[d])
            o.dims[d] = b->shape.dims[d];
    return ft_infer_set_out(c, 0, a->dtype, &o);
}

int ft_node_data_dependent(const ft_graph *g, const ft_node *n)
{
    if (n->op != FT_OP_IF_SELECT)
        return ft_op_data_dependent(n->op);
    const ft_tensor *a = &g->tensors[n->in[1]], *b = &g->tensors[n->in[2]];
    return !ft_shape_eq(&a->shape, &b->shape) || ((a->flags | b->flags) & FT_TF_DYNAMIC);
}

int ft_graph_guarded(const ft_graph *g)
{
    int count = 0;
    for (int k = 0; k < g->n_nodes; k++)
        count += ft_node_guard(&g->nodes[k]) >= 0;
    return count;
}

int ft_node_dynamic(const ft_graph *g, const ft_node *n)
{
    if (ft_node_data_dependent(g, n))
        return 1;
    unsigned vin = ft_op_value_inputs(n->op);
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0)
            continue;
        const ft_tensor *t = &g->tensors[n->in[i]];
        /* a shape-giving input computed at run time: its values come then */
        if ((t->flags & FT_TF_DYNAMIC) || (i < 32 && (vin & (1u << i)) && !(t->flags & FT_TF_VALUE)))
            return 1;
    }
    return 0;
}

int ft_node_runtime_values(const ft_graph *g, const ft_node *n)
{
    unsigned vin = ft_op_value_inputs(n->op), m = 0;
    for (int i = 0; i < n->n_in && i < 32; i++)
        if (n->in[i] >= 0 && (vin & (1u << i)) && !(g->tensors[n->in[i]].flags & FT_TF_VALUE))
            m |= 1u << i;
    return (int)m;
}

int ft_graph_dynamic_str(const ft_graph *g, char *buf, size_t n)
{
    int count = 0, named = 0;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_tensors; i++)
        count += (g->tensors[i].flags & FT_TF_DYNAMIC) != 0;
    if (!count)
        return 0;
    len += (size_t)snprintf(buf, n, "%d tensor%s, after", count, count == 1 ? "" : "s");
    for (int k = 0; k < g->n_nodes && len < n; k++) {
        const ft_node *nd = &g->nodes[g->order ? g->order[k] : k];
        if (!ft_node_data_dependent(g, nd) && !(nd->op == FT_OP_LOOP_END && nd->n_out > ft_loop_carried(nd)))
            continue;
        if (named == 4) {
            len += (size_t)snprintf(buf + len, n - len, ", ...");
            break;
        }
        len += (size_t)snprintf(buf + len, n - len, "%s '%s' (%s)", named++ ? "," : "", nd->name, ft_op_name(nd->op));
    }
    return count;
}

int ft_graph_guards_str(const ft_graph *g, char *buf, size_t n)
{
    int count = 0, prev = -1;
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < g->n_nodes && len < n; k++) {
        const ft_node *nd = &g->nodes[g->order ? g->order[k] : k];
        int gt = ft_node_guard(nd);
        if (gt < 0)
            continue;
        if (count++ && gt != prev) /* the nodes before ran on the guard before */
            len += (size_t)snprintf(buf + len, n - len, " if '%s';", g->tensors[prev].name);
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s'%s'", count > 1 && gt == prev ? ", " : count > 1 ? " " : "",
                                    nd->name);
        prev = gt;
    }
    if (count && len < n)
        snprintf(buf + len, n - len, " if '%s'", g->tensors[prev].name);
    if (len >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
    return count;
}

/* loop_begin (trip count, condition, initial carried values): the iteration
 * number (i64 scalar), the condition the body reads (bool scalar) and the
 * carried state, each of its initial value's dtype and shape. */
ft_status ft_infer_loop_begin(ft_infer_ctx *c)
{
    char sb[FT_SHAPE_STR];
    if (c->n_out != c->n_in)
        return ft_infer_fail(c, "%d inputs and %d outputs; loop_begin has one output per input", c->n_in, c->n_out);
    if (!c->in[0] || ft_numel(&c->in[0]->shape) != 1)
        return ft_infer_fail(c, "the trip count '%s' must be one int64 value, got %s", ft_infer_in_name(c, 0),
                             c->in[0] ? ft_shape_str(&c->in[0]->shape, sb) : "none");
    if (!c->in[1] || c->in[1]->dtype != FT_BOOL || ft_numel(&c->in[1]->shape) != 1)
        return ft_infer_fail(c, "the condition '%s' must be one bool value", ft_infer_in_name(c, 1));
    const ft_attr_val *v = ft_attr(c->node, "vary");
    for (int i = 0; v->present && i < v->n; i++)
        if (v->ints[i] < 0 || v->ints[i] >= c->n_in - 2)
            return ft_infer_fail(c, "vary[%d] = %lld names no carried value (it has %d)", i, (long long)v->ints[i],
                                 c->n_in - 2);
    ft_status st = ft_infer_set_out(c, 0, FT_I64, &(ft_shape){0});
    if (!st)
        st = ft_infer_set_out(c, 1, FT_BOOL, &(ft_shape){0});
    for (int j = 2; j < c->n_in && !st; j++) {
        if (!c->in[j])
            return ft_infer_fail(c, "carried value %d is missing", j - 2);
        st = ft_infer_set_out(c, j, c->in[j]->dtype, &c->in[j]->shape);
    }
    return st;
}

int ft_loop_carried(const ft_node *n) { return n->n_in - n->n_out - 2; }

int ft_loop_varies(const ft_node *n, int j)
{
    const ft_attr_val *v = ft_attr(n, "vary");
    for (int i = 0; v->present && i < v->n; i++)
        if (v->ints[i] == j)
            return 1;
    return 0;
}

/* loop_end (iteration number, next condition, carried state s, next carried
 * values, scan values): the final carried values (the state's dtypes and
 * shapes) and the scan outputs, [iterations, ...] known at run time (stand
 * in: 1 iteration; ft_node_infer marks them dynamic). */
ft_status ft_infer_loop_end(ft_infer_ctx *c)
{
    int nv = ft_loop_carried(c->node), nk = c->n_out - nv;
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (nv < 0 || nk < 0)
        return ft_infer_fail(c, "%d inputs and %d outputs do not make a loop's carried and scan values", c->n_in,
                             c->n_out);
    if (!c->in[1] || c->in[1]->dtype != FT_BOOL || ft_numel(&c->in[1]->shape) != 1)
        return ft_infer_fail(c, "the next condition '%s' must be one bool value", ft_infer_in_name(c, 1));
    ft_status st = FT_OK;
    for (int j = 0; j < nv && !st; j++) {
        const ft_tinfo *s = c->in[2 + j], *x = c->in[2 + nv + j];
        int xt = c->node->in[2 + nv + j];
        int st_t = c->node->in[2 + j], dyn = (xt >= 0 && (c->g->tensors[xt].flags & FT_TF_DYNAMIC) && !c->g->run_shapes) ||
                                               (st_t >= 0 && (c->g->tensors[st_t].flags & FT_TF_DYNAMIC));
        if (!s || !x)
            return ft_infer_fail(c, "carried value %d is missing", j);
        if (s->dtype != x->dtype || (!dyn && !ft_shape_eq(&s->shape, &x->shape)))
            return ft_infer_fail(c, "the body makes carried value %d ('%s', %s %s) into %s %s ('%s'); a carried value "
                                 "keeps its dtype and shape from one iteration to the next", j, ft_infer_in_name(c, 2 + j),
                                 ft_dtype_name(s->dtype), ft_shape_str(&s->shape, s1), ft_dtype_name(x->dtype),
                                 ft_shape_str(&x->shape, s2), ft_infer_in_name(c, 2 + nv + j));
        st = ft_infer_set_out(c, j, s->dtype, &s->shape);
    }
    for (int k = 0; k < nk && !st; k++) {
        const ft_tinfo *e = c->in[2 + 2 * nv + k];
        if (!e)
            return ft_infer_fail(c, "scan value %d is missing", k);
        if (e->shape.rank >= FT_MAX_RANK)
            return ft_infer_fail(c, "scan value %d has rank %d; stacked it would pass the most, %d", k, e->shape.rank,
                                 FT_MAX_RANK);
        ft_shape o = {.rank = e->shape.rank + 1, .dims = {1}};
        for (int d = 0; d < e->shape.rank; d++)
            o.dims[d + 1] = e->shape.dims[d];
        st = ft_infer_set_out(c, nv + k, e->dtype, &o);
    }
    return st;
}

int ft_graph_loops_str(const ft_graph *g, char *buf, size_t n)
{
    int count = 0;
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const ft_node *e = &g->nodes[i];
        if (e->op != FT_OP_LOOP_END)
            continue;
        if (++count > 4) {
            if (count == 5 && len < n)
                len += (size_t)snprintf(buf + len, n - len, ", ...");
            continue;
        }
        /* the body: the nodes ordered between its loop_begin and it */
        int bp = g->tensors[e->in[0]].producer, pb = -1, pe = -1, nv = ft_loop_carried(e), nk = e->n_out - nv;
        for (int k = 0; g->order && k < g->n_nodes; k++) {
            pb = g->order[k] == bp ? k : pb;
            pe = g->order[k] == i ? k : pe;
        }
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s'%s' (%d body nodes, %d carried value%s, %d scan output%s)",
                                    count > 1 ? ", " : "", bp >= 0 ? g->nodes[bp].name : e->name,
                                    pb >= 0 && pe > pb ? pe - pb - 1 : 0, nv, nv == 1 ? "" : "s", nk, nk == 1 ? "" : "s");
    }
    return count;
}

/* The fixed dims of input i of n: none when it is absent, all when its
 * shape is known whole (not dynamic). */
static unsigned in_fixed(const ft_graph *g, const ft_node *n, int i, int *rank)
{
    const ft_tensor *t = i < n->n_in && n->in[i] >= 0 ? &g->tensors[n->in[i]] : NULL;
    *rank = t ? t->shape.rank : -1;
    if (!t || (t->flags & FT_TF_RANK_VARIES))
        return 0;
    return (t->flags & FT_TF_DYNAMIC) ? t->fixed_dims : (1u << t->shape.rank) - 1;
}

/* Broadcasting from the right over every input (concat: its inputs have one
 * rank): an output dim is fixed when each input having it has it fixed. A
 * fixed 1 meeting a stand-in is not fixed: the stand-in's size wins. */
static unsigned bcast_fixed(const ft_graph *g, const ft_node *n, int r)
{
    unsigned m = (1u << r) - 1;
    for (int i = 0; i < n->n_in; i++) {
        int ri;
        unsigned f = in_fixed(g, n, i, &ri);
        if (ri < 0)
            continue;
        if (ri > r)
            return 0;
        for (int d = 0; d < ri; d++)
            if (!(f & (1u << d)))
                m &= ~(1u << (d + r - ri));
    }
    return m;
}

/* squeeze (unsq 0) and unsqueeze (1) of input dims f0 by the axes attribute:
 * an added dim (1) is fixed, a kept one as it was; without axes (squeeze:
 * every dim of size 1, which a stand-in may not be) nothing. */
static unsigned axes_fixed(const ft_node *n, int r_in, int r_out, unsigned f0, int unsq)
{
    const ft_attr_val *a = ft_attr(n, "axes");
    int rr = unsq ? r_out : r_in, j = 0;
    unsigned mark = 0, m = 0;
    if (!a->present || a->n <= 0 || r_out != (unsq ? r_in + a->n : r_in - a->n))
        return 0;
    for (int k = 0; k < a->n; k++) {
        int64_t ax = a->ints[k] < 0 ? a->ints[k] + rr : a->ints[k];
        if (ax < 0 || ax >= rr)
            return 0;
        mark |= 1u << ax;
    }
    for (int d = 0; d < rr; d++) {
        if (mark & (1u << d)) {
            m |= unsq ? 1u << d : 0;
            continue;
        }
        if (f0 & (1u << (unsq ? j : d)))
            m |= 1u << (unsq ? d : j);
        j++;
    }
    return m;
}

unsigned ft_node_fixed_dims(const ft_graph *g, const ft_node *n, int o)
{
    const ft_tensor *y = &g->tensors[n->out[o]];
    int r = y->shape.rank, r0, rq;
    if (y->flags & FT_TF_RANK_VARIES)
        return 0;
    unsigned all = (1u << r) - 1, f0 = in_fixed(g, n, 0, &r0);
    ft_infer_fn inf = ft_op_get(n->op)->infer;
    if (n->op == FT_OP_SHAPE || n->op == FT_OP_SIZE) /* their lengths follow from the input's rank */
        return n->op == FT_OP_SHAPE && (g->tensors[n->in[0]].flags & FT_TF_RANK_VARIES) ? 0 : all;
    if (n->op == FT_OP_NON_ZERO) /* [rank, count] */
        return r == 2 ? 1u : 0;
    if (n->op == FT_OP_GATHER && r0 >= 1) { /* data[:axis] + indices' shape + data[axis+1:] */
        unsigned fq = in_fixed(g, n, 1, &rq);
        int a = n->params.move.axis;
        if (rq < 0 || a < 0 || a >= r0 || r != r0 - 1 + rq)
            return 0;
        unsigned lo = f0 & ((1u << a) - 1), hi = f0 >> (a + 1);
        return (lo | (fq << a) | (hi << (a + rq))) & all;
    }
    if (n->op == FT_OP_TRANSPOSE && r == r0) {
        unsigned m = 0;
        for (int d = 0; d < r; d++)
            if (f0 & (1u << n->params.move.perm[d]))
                m |= 1u << d;
        return m;
    }
    if ((n->op == FT_OP_SQUEEZE || n->op == FT_OP_UNSQUEEZE) && r0 >= 0)
        return axes_fixed(n, r0, r, f0, n->op == FT_OP_UNSQUEEZE);
    if ((inf == ft_infer_unary || inf == ft_infer_unary_bool || inf == ft_infer_cast) && r == r0 && n->n_in == 1)
        return f0 & all;
    if (inf == ft_infer_binary || inf == ft_infer_compare || inf == ft_infer_variadic || inf == ft_infer_where ||
        inf == ft_infer_concat)
        return n->n_out == 1 ? bcast_fixed(g, n, r) : 0;
    return 0;
}
