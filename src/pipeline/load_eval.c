/* Values computed at load (graph.h: ft_load_opts.eval): a node of an ONNX
 * model that needs an input as a parameter (Range's limit, Pad's pads,
 * Expand's shape, an If's condition, ...) when other nodes compute it from
 * constants and from inputs given with -i. The nodes that compute it run
 * here, once, on the CPU backend's kernels (the one definition of each op),
 * from the values known at load; the model's nodes stay as they are. The
 * result holds for those -i values: another value given for the same input
 * is another load. Every value computed is kept in the caller's cache, so
 * that a later evaluation (the next iteration of a Loop whose condition the
 * carried values give) runs only the nodes it adds: each node runs once per
 * load. */
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"

/* The most bytes of intermediate values one evaluation may hold, and the most
 * nodes it may run: beyond them the value is left to run time (refused). */
#define EVAL_MAX_BYTES ((size_t)64 << 20)
#define EVAL_MAX_NODES 4096

typedef struct {
    const ft_graph *g;
    ft_node *const *nodes;
    void **cache;  /* per tensor: a value an earlier evaluation computed, or NULL */
    char *need;    /* per node: runs */
    void **buf;    /* per tensor: its value for the run (borrowed when it has one) */
    char *own;     /* per tensor: buf was allocated here */
    int n_need;
    size_t bytes;
} eval;

/* Marks the nodes t needs; 0 when t depends on a value unknown at load. */
static int collect(eval *e, int t)
{
    int cap = 64, n = 0;
    int *stack = ft_malloc((size_t)cap * sizeof *stack);
    char *seen = ft_calloc((size_t)e->g->n_tensors, 1);
    int ok = stack && seen;
    if (ok) {
        stack[n++] = t;
        seen[t] = 1;
    }
    while (ok && n) {
        int xi = stack[--n];
        const ft_tensor *x = &e->g->tensors[xi];
        if ((x->flags & FT_TF_VALUE) || e->cache[xi])
            continue;
        /* a run-time loop's values exist only while the executor runs it */
        if (x->producer < 0 || (x->flags & FT_TF_DYNAMIC) || e->nodes[x->producer]->op == FT_OP_LOOP_BEGIN ||
            e->nodes[x->producer]->op == FT_OP_LOOP_END) {
            ok = 0;
            break;
        }
        if (!e->need[x->producer]) {
            e->need[x->producer] = 1;
            e->bytes += ft_tensor_bytes(x);
            if (++e->n_need > EVAL_MAX_NODES || e->bytes > EVAL_MAX_BYTES) {
                ok = 0;
                break;
            }
            const ft_node *nd = e->nodes[x->producer];
            for (int i = 0; i < nd->n_in && ok; i++) {
                int u = nd->in[i];
                if (u < 0 || seen[u])
                    continue;
                seen[u] = 1;
                if (n == cap && ft_grow(&stack, &cap, n, sizeof *stack, 64))
                    ok = 0;
                else
                    stack[n++] = u;
            }
        }
    }
    free(stack);
    free(seen);
    return ok;
}

static ft_status run_nodes(eval *e, int n_nodes, ft_error *err)
{
    ft_backend_opts bo = {.threads = 1};
    ft_backend_ctx *ctx = NULL;
    ft_status st = ft_cpu_backend.open(&bo, &ctx, err);
    ft_view in[64], out[64];
    uint64_t run_id = ft_exec_new_run_id();
    /* the importer emits nodes in an order where producers come first */
    for (int k = 0; k < n_nodes && !st; k++) {
        const ft_node *n = e->nodes[k];
        if (!e->need[k])
            continue;
        if (n->n_in > 64 || n->n_out > 64) {
            st = ft_node_err(err, FT_EGRAPH, e->g, n, "more than 64 inputs or outputs");
            break;
        }
        for (int i = 0; i < n->n_in; i++) {
            int t = n->in[i];
            const ft_tensor *x = t >= 0 ? &e->g->tensors[t] : NULL;
            in[i] = x ? (ft_view){e->buf[t], x->dtype, x->shape} : (ft_view){0};
        }
        for (int o = 0; o < n->n_out && !st; o++) {
            int t = n->out[o];
            const ft_tensor *x = &e->g->tensors[t];
            size_t nb = ft_tensor_bytes(x);
            if (!(e->buf[t] = ft_malloc(nb ? nb : 1)))
                st = ft_node_err(err, FT_ERUNTIME, e->g, n, "out of memory computing '%s' at load", x->name);
            e->own[t] = 1;
            out[o] = (ft_view){e->buf[t], x->dtype, x->shape};
        }
        if (!st)
            st = ft_exec_node(e->g, n, &ft_cpu_backend, ctx, 1, run_id, in, out, err);
    }
    ft_cpu_backend.close(ctx);
    return st;
}

ft_status ft_load_eval(const ft_graph *g, ft_node *const *nodes, int t, void **cache, ft_error *err)
{
    const ft_tensor *x = &g->tensors[t];
    if (x->producer < 0 || cache[t])
        return FT_OK;
    int n_nodes = 0; /* the importer's nodes so far: every producer is one of them */
    for (int i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].producer >= n_nodes)
            n_nodes = g->tensors[i].producer + 1;
    eval e = {g, nodes, cache, ft_calloc((size_t)n_nodes + 1, 1), ft_calloc((size_t)g->n_tensors + 1, sizeof(void *)),
              ft_calloc((size_t)g->n_tensors + 1, 1), 0, 0};
    ft_status st = FT_OK;
    if (!e.need || !e.buf || !e.own)
        st = ft_err(err, FT_ERUNTIME, "%s: out of memory computing '%s' at load", g->file, x->name);
    else if (collect(&e, t)) {
        for (int i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & FT_TF_VALUE)
                e.buf[i] = g->tensors[i].value;
            else if (cache[i])
                e.buf[i] = cache[i];
        st = run_nodes(&e, n_nodes, err);
        for (int i = 0; !st && i < g->n_tensors; i++)
            if (e.own[i]) { /* the cache takes every value computed */
                cache[i] = e.buf[i];
                e.own[i] = 0;
            }
    }
    for (int i = 0; e.buf && e.own && i < g->n_tensors; i++)
        if (e.own[i])
            free(e.buf[i]);
    free(e.need);
    free(e.buf);
    free(e.own);
    return st;
}
