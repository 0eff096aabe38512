/* Graph validation: every tensor has exactly one origin, nodes are ordered
 * topologically (a cycle is refused, naming its nodes), and shapes and dtypes
 * are inferred node by node through the op table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* What node n reads before it runs: its inputs, then its guard (i == n_in;
 * -1 when it has none). */
static int dep(const ft_node *n, int i) { return i < n->n_in ? n->in[i] : ft_node_guard(n); }

static ft_status check_origins(ft_graph *g, ft_error *err)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[k];
        for (int i = 0; i <= n->n_in; i++) {
            if (dep(n, i) < 0)
                continue;
            ft_tensor *t = &g->tensors[dep(n, i)];
            t->n_readers++;
            if (t->producer < 0 && !(t->flags & FT_TF_DECLARED))
                return ft_node_err(err, FT_EGRAPH, g, n,
                                   "input '%s' is neither declared under \"tensors\" nor produced by any node", t->name);
        }
    }
    for (int i = 0; i < g->n_tensors; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (t->producer >= 0 && (t->flags & FT_TF_INPUT))
            return ft_err(err, FT_EGRAPH, "%s: tensor '%s' is listed under \"inputs\" but is produced by node '%s'", g->file,
                          t->name, g->nodes[t->producer].name);
        if (t->producer >= 0 && (t->flags & FT_TF_VALUE))
            return ft_err(err, FT_EGRAPH, "%s: tensor '%s' has a value source (%s) but is produced by node '%s'", g->file,
                          t->name, t->source, g->nodes[t->producer].name);
        if (t->producer < 0 && !(t->flags & (FT_TF_INPUT | FT_TF_VALUE)))
            return ft_err(err, FT_EGRAPH,
                          "%s: tensor '%s' has no value: it is not an input, no node produces it, and it has no "
                          "\"data\", \"file\" or \"init\"",
                          g->file, t->name);
    }
    return FT_OK;
}

/* Follow not-yet-ordered producers backwards from `start` until a node repeats. */
static ft_status report_cycle(const ft_graph *g, const int *indeg, int start, ft_error *err)
{
    int *seen = ft_calloc((size_t)g->n_nodes, sizeof(int));
    int *path = ft_malloc((size_t)g->n_nodes * sizeof(int));
    if (!seen || !path) {
        free(seen);
        free(path);
        return ft_err(err, FT_EGRAPH, "%s: the graph has a cycle through node '%s'", g->file, g->nodes[start].name);
    }
    int len = 0, cur = start;
    while (!seen[cur]) {
        seen[cur] = len + 1;
        path[len++] = cur;
        const ft_node *n = &g->nodes[cur];
        int next = -1;
        for (int i = 0; i < n->n_in && next < 0; i++)
            if (n->in[i] >= 0) {
                int p = g->tensors[n->in[i]].producer;
                if (p >= 0 && indeg[p] > 0)
                    next = p;
            }
        if (next < 0)
            break; /* cannot happen: an unordered node has an unordered producer */
        cur = next;
    }
    char chain[1024] = "";
    size_t l = 0;
    /* path[seen[cur]-1 .. len-1] is the cycle, walked against the data flow */
    for (int i = len - 1; i >= seen[cur] - 1 && l < sizeof chain - 80; i--)
        l += (size_t)snprintf(chain + l, sizeof chain - l, "'%s' -> ", g->nodes[path[i]].name);
    snprintf(chain + l, sizeof chain - l, "'%s'", g->nodes[path[len - 1]].name);
    ft_status st = ft_node_err(err, FT_EGRAPH, g, &g->nodes[cur], "the graph has a cycle: %s", chain);
    free(seen);
    free(path);
    return st;
}

/* Min-heap of node indices: among the nodes that are ready, the one written
 * first in the file runs first, so a file already in order runs as written. */
static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
    return top;
}

static ft_status topo_order(ft_graph *g, ft_error *err)
{
    int n = g->n_nodes;
    int *indeg = ft_calloc((size_t)(n ? n : 1), sizeof(int));
    int *queue = ft_malloc((size_t)(n ? n : 1) * sizeof(int));
    /* consumers lists in CSR form */
    int *cstart = ft_calloc((size_t)g->n_tensors + 1, sizeof(int));
    int total = 0;
    for (int k = 0; k < n; k++)
        total += g->nodes[k].n_in + 1;
    int *cons = ft_malloc((size_t)(total ? total : 1) * sizeof(int));
    if (!indeg || !queue || !cstart || !cons) {
        free(indeg), free(queue), free(cstart), free(cons);
        return ft_err(err, FT_ERUNTIME, "out of memory ordering the graph");
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i <= g->nodes[k].n_in; i++) {
            int t = dep(&g->nodes[k], i);
            if (t >= 0) {
                cstart[t + 1]++;
                if (g->tensors[t].producer >= 0)
                    indeg[k]++;
            }
        }
    for (int t = 0; t < g->n_tensors; t++)
        cstart[t + 1] += cstart[t];
    int *fill = ft_calloc((size_t)g->n_tensors + 1, sizeof(int));
    if (!fill) {
        free(indeg), free(queue), free(cstart), free(cons);
        return ft_err(err, FT_ERUNTIME, "out of memory ordering the graph");
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i <= g->nodes[k].n_in; i++) {
            int t = dep(&g->nodes[k], i);
            if (t >= 0)
                cons[cstart[t] + fill[t]++] = k;
        }
    free(fill);
    int *heap = ft_malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!heap) {
        free(indeg), free(queue), free(cstart), free(cons);
        return ft_err(err, FT_ERUNTIME, "out of memory ordering the graph");
    }
    int nh = 0, tail = 0;
    for (int k = 0; k < n; k++)
        if (indeg[k] == 0)
            heap_push(heap, &nh, k);
    while (nh > 0) {
        int k = heap_pop(heap, &nh);
        queue[tail++] = k;
        const ft_node *nd = &g->nodes[k];
        for (int o = 0; o < nd->n_out; o++) {
            int t = nd->out[o];
            for (int c = cstart[t]; c < cstart[t + 1]; c++)
                if (--indeg[cons[c]] == 0)
                    heap_push(heap, &nh, cons[c]);
        }
    }
    free(heap);
    ft_status st = FT_OK;
    if (tail < n) {
        int start = 0;
        while (indeg[start] == 0)
            start++;
        st = report_cycle(g, indeg, start, err);
        free(queue);
    } else {
        free(g->order);
        g->order = queue;
    }
    free(indeg), free(cstart), free(cons);
    return st;
}

ft_status ft_node_infer(ft_graph *g, ft_node *n, ft_error *err)
{
    const ft_op_info *oi = ft_op_get(n->op);
    const ft_tinfo *in[64];
    ft_tinfo insto[64], out[64];
    if (n->n_in > 64 || n->n_out > 64)
        return ft_node_err(err, FT_EGRAPH, g, n, "more than 64 inputs or outputs");
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0) {
            in[i] = NULL;
            continue;
        }
        const ft_tensor *t = &g->tensors[n->in[i]];
        insto[i].dtype = t->dtype;
        insto[i].shape = t->shape;
        in[i] = &insto[i];
    }
    ft_dtype dt0 = in[0]->dtype;
    if (!ft_dtype_in(dt0, oi->dtypes)) {
        char m[128];
        return ft_node_err(err, FT_EGRAPH, g, n, "input '%s' has dtype %s; %s accepts %s", g->tensors[n->in[0]].name,
                           ft_dtype_name(dt0), oi->name, ft_dtype_mask_str(oi->dtypes, m, sizeof m));
    }
    memset(out, 0, sizeof out);
    memset(&n->params, 0, sizeof n->params);
    ft_infer_ctx c = {.g = g, .node = n, .n_in = n->n_in, .n_out = n->n_out, .in = in, .out = out, .err = err, .params = &n->params};
    ft_status st = oi->infer(&c);
    if (st)
        return st;
    /* a data-dependent op's outputs, and whatever reads a dynamic tensor, get
     * their shapes at run time: what is inferred here stands in for them */
    int dyn = ft_node_dynamic(g, n), rv = c.rank_varies;
    for (int i = 0; i < n->n_in; i++)
        rv |= n->in[i] >= 0 && (g->tensors[n->in[i]].flags & FT_TF_RANK_VARIES);
    for (int o = 0; o < n->n_out; o++) {
        ft_tensor *t = &g->tensors[n->out[o]];
        uint64_t numel, bytes;
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_shape_numel(&out[o].shape, &numel) || ft_mul_overflow(numel, ft_dtype_size(out[o].dtype), &bytes) ||
            bytes > FT_MAX_TENSOR_BYTES)
            return ft_node_err(err, FT_EGRAPH, g, n, "output '%s' of shape %s is too large (limit %llu bytes)", t->name,
                               ft_shape_str(&out[o].shape, s1), (unsigned long long)FT_MAX_TENSOR_BYTES);
        if (t->flags & FT_TF_DECLARED) {
            /* -1: a named dim bound by nothing (json_reader.c resolve_dims) takes the inferred size */
            int same = t->shape.rank == out[o].shape.rank || (dyn && rv); /* rv: the rank too is the run's */
            for (int d = 0; d < t->shape.rank && same && !dyn; d++) /* dynamic: the rank alone is known */
                same = t->shape.dims[d] < 0 || t->shape.dims[d] == out[o].shape.dims[d];
            if (t->dtype != out[o].dtype || !same)
                return ft_node_err(err, FT_EGRAPH, g, n, "output '%s' is declared %s %s but the op produces %s %s", t->name,
                                   ft_dtype_name(t->dtype), ft_shape_str(&t->shape, s1), ft_dtype_name(out[o].dtype),
                                   ft_shape_str(&out[o].shape, s2));
            t->shape = out[o].shape;
        } else {
            t->dtype = out[o].dtype;
            t->shape = out[o].shape;
        }
        int odyn = dyn;
        if (n->op == FT_OP_LOOP_END) /* the final carried values keep the state's shapes; the scan outputs grow */
            odyn = o >= ft_loop_carried(n) || (g->tensors[n->in[2 + o]].flags & FT_TF_DYNAMIC);
        if (n->op == FT_OP_LOOP_BEGIN) /* the state is of run-time shape where its initial value or `vary` says */
            odyn = o >= 2 && ((g->tensors[n->in[o]].flags & FT_TF_DYNAMIC) || ft_loop_varies(n, o - 2));
        t->flags |= FT_TF_INFERRED | (odyn ? FT_TF_DYNAMIC : 0) | (odyn && rv ? FT_TF_RANK_VARIES : 0);
    }
    /* after every output's shape is set: a rule may read the node's other outputs */
    for (int o = 0; o < n->n_out; o++)
        g->tensors[n->out[o]].fixed_dims = dyn ? ft_node_fixed_dims(g, n, o) : 0;
    return FT_OK;
}

/* A loop_end's input 0 and carried state are its loop_begin's outputs, in
 * order (the executor copies the next values there: runtime/exec.c). */
static ft_status loop_end_check(const ft_graph *g, const ft_node *e, ft_error *err)
{
    int nv = ft_loop_carried(e), it = e->in[0], bp = it >= 0 ? g->tensors[it].producer : -1;
    const ft_node *b = bp >= 0 ? &g->nodes[bp] : NULL;
    int ok = b && b->op == FT_OP_LOOP_BEGIN && b->n_out == 2 + nv && b->out[0] == it;
    for (int j = 0; ok && j < nv; j++)
        ok = e->in[2 + j] == b->out[2 + j];
    if (!ok)
        return ft_node_err(err, FT_EGRAPH, g, e, "input 0 and inputs 2..%d must be the iteration number and the %d "
                           "carried values of one loop_begin, in order", 1 + nv, nv);
    return FT_OK;
}

ft_status ft_graph_validate(ft_graph *g, ft_error *err)
{
    for (int i = 0; i < g->n_tensors; i++) {
        g->tensors[i].n_readers = 0;
        g->tensors[i].flags &= ~(unsigned)(FT_TF_DYNAMIC | FT_TF_RANK_VARIES);
    }
    ft_status st = check_origins(g, err);
    if (!st)
        st = topo_order(g, err);
    for (int k = 0; k < g->n_nodes && !st; k++) {
        ft_node *n = &g->nodes[g->order[k]];
        int gt = ft_node_guard(n);
        char sb[FT_SHAPE_STR];
        if (gt >= g->n_tensors)
            st = ft_node_err(err, FT_EGRAPH, g, n, "internal error: guard %d names no tensor", gt);
        else if (gt >= 0 && (g->tensors[gt].dtype != FT_BOOL || ft_numel(&g->tensors[gt].shape) != 1))
            st = ft_node_err(err, FT_EGRAPH, g, n, "its guard '%s' must be one bool value, got %s %s",
                             g->tensors[gt].name, ft_dtype_name(g->tensors[gt].dtype),
                             ft_shape_str(&g->tensors[gt].shape, sb));
        if (!st)
            st = ft_node_infer(g, n, err);
        if (!st && n->op == FT_OP_LOOP_END)
            st = loop_end_check(g, n, err);
    }
    return st;
}
