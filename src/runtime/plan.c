#include "plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t off, size;
} block;

typedef struct {
    block *b;
    int n, cap;
    uint64_t top; /* end of the used part of the shared region */
} freelist;

static uint64_t align_up(uint64_t v) { return (v + FT_ALIGN - 1) & ~(uint64_t)(FT_ALIGN - 1); }

int ft_plan_is_persistent(const ft_tensor *t) { return (t->flags & (FT_TF_INPUT | FT_TF_OUTPUT | FT_TF_VALUE)) != 0; }

int ft_plan_is_constant(const ft_tensor *t)
{
    return (t->flags & FT_TF_VALUE) && !(t->flags & (FT_TF_INPUT | FT_TF_DYNAMIC)) && t->value;
}

static uint64_t fl_alloc(freelist *fl, uint64_t size)
{
    int best = -1;
    for (int i = 0; i < fl->n; i++)
        if (fl->b[i].size >= size && (best < 0 || fl->b[i].size < fl->b[best].size))
            best = i;
    if (best >= 0) {
        uint64_t off = fl->b[best].off;
        fl->b[best].off += size;
        fl->b[best].size -= size;
        if (fl->b[best].size == 0) {
            memmove(&fl->b[best], &fl->b[best + 1], (size_t)(fl->n - best - 1) * sizeof(block));
            fl->n--;
        }
        return off;
    }
    /* grow: a free block touching the top is extended instead of wasted */
    if (fl->n && fl->b[fl->n - 1].off + fl->b[fl->n - 1].size == fl->top) {
        uint64_t off = fl->b[fl->n - 1].off;
        fl->top = off + size;
        fl->n--;
        return off;
    }
    uint64_t off = fl->top;
    fl->top += size;
    return off;
}

static int fl_free(freelist *fl, uint64_t off, uint64_t size)
{
    int i = 0;
    while (i < fl->n && fl->b[i].off < off)
        i++;
    if (ft_grow(&fl->b, &fl->cap, fl->n, sizeof(block), 16))
        return -1;
    memmove(&fl->b[i + 1], &fl->b[i], (size_t)(fl->n - i) * sizeof(block));
    fl->b[i] = (block){off, size};
    fl->n++;
    if (i + 1 < fl->n && fl->b[i].off + fl->b[i].size == fl->b[i + 1].off) { /* merge with next */
        fl->b[i].size += fl->b[i + 1].size;
        memmove(&fl->b[i + 1], &fl->b[i + 2], (size_t)(fl->n - i - 2) * sizeof(block));
        fl->n--;
    }
    if (i > 0 && fl->b[i - 1].off + fl->b[i - 1].size == fl->b[i].off) { /* merge with previous */
        fl->b[i - 1].size += fl->b[i].size;
        memmove(&fl->b[i], &fl->b[i + 1], (size_t)(fl->n - i - 1) * sizeof(block));
        fl->n--;
    }
    return 0;
}

/* A node whose output is its input's bytes under another shape or dtype
 * (reshape, flatten, squeeze, unsqueeze, identity, bitcast), run as the last reader of an
 * intermediate input into an intermediate output: the output takes the
 * input's block, and the kernel, finding its output at its input's address,
 * copies nothing (cpu_copy in src/cpu/movement.c, cu_copy in
 * src/cuda/movement.cu). */
static int view_of_last_read(const ft_graph *g, const ft_node *n, const int *left)
{
    if (!(n->op == FT_OP_RESHAPE || n->op == FT_OP_FLATTEN || n->op == FT_OP_SQUEEZE || n->op == FT_OP_UNSQUEEZE ||
          n->op == FT_OP_IDENTITY || n->op == FT_OP_BITCAST) ||
        n->n_in != 1 || n->n_out != 1 || n->in[0] < 0)
        return 0;
    const ft_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->out[0]];
    return left[n->in[0]] == 1 && !ft_plan_is_persistent(a) && !ft_plan_is_persistent(b) &&
           !((a->flags | b->flags) & FT_TF_DYNAMIC) && ft_tensor_bytes(a) == ft_tensor_bytes(b);
}

int ft_plan_is_view(const ft_graph *g, const ft_plan *p, const ft_node *n)
{
    if (!(n->op == FT_OP_RESHAPE || n->op == FT_OP_FLATTEN || n->op == FT_OP_SQUEEZE || n->op == FT_OP_UNSQUEEZE ||
          n->op == FT_OP_IDENTITY || n->op == FT_OP_BITCAST) ||
        n->n_in != 1 || n->n_out != 1 || n->in[0] < 0 || !p || !p->offset)
        return 0;
    const ft_tensor *a = &g->tensors[n->in[0]], *b = &g->tensors[n->out[0]];
    return !ft_plan_is_persistent(a) && !ft_plan_is_persistent(b) && p->offset[n->in[0]] == p->offset[n->out[0]] &&
           p->offset[n->in[0]] != FT_PLAN_DYNAMIC && ft_tensor_bytes(a) == ft_tensor_bytes(b);
}

/* A graph's run-time loops (loop_begin .. loop_end, runtime/exec.c) run
 * their body again after loop_end: a tensor the body reads that was made
 * before it (outside the loop, or loop_begin's state) is read again by the
 * next iteration, so its block is kept to its loop's end. held[t]: the
 * position in g->order of that end (-1: none); NULL when g has no loop. */
static int *loop_holds(const ft_graph *g, int *oom)
{
    int any = 0;
    for (int k = 0; k < g->n_nodes && !any; k++)
        any = g->nodes[k].op == FT_OP_LOOP_BEGIN;
    if (!any)
        return NULL;
    int *held = ft_malloc((size_t)g->n_tensors * sizeof *held + 1), *pos = ft_malloc((size_t)g->n_nodes * sizeof *pos + 1);
    if (!held || !pos) {
        free(held);
        free(pos);
        *oom = 1;
        return NULL;
    }
    for (int i = 0; i < g->n_tensors; i++)
        held[i] = -1;
    for (int k = 0; k < g->n_nodes; k++)
        pos[g->order[k]] = k;
    for (int e = 0; e < g->n_nodes; e++) {
        const ft_node *end = &g->nodes[g->order[e]];
        int bp = end->op == FT_OP_LOOP_END ? g->tensors[end->in[0]].producer : -1;
        if (bp < 0 || pos[bp] > e)
            continue;
        for (int k = pos[bp] + 1; k < e; k++) {
            const ft_node *n = &g->nodes[g->order[k]];
            for (int i = 0; i <= n->n_in; i++) {
                int ti = i < n->n_in ? n->in[i] : ft_node_guard(n), pr = ti >= 0 ? g->tensors[ti].producer : -1;
                if (pr >= 0 && pos[pr] <= pos[bp] && held[ti] < e)
                    held[ti] = e;
            }
        }
    }
    free(pos);
    return held;
}

ft_status ft_plan_build(const ft_graph *g, ft_plan *p, ft_error *err)
{
    memset(p, 0, sizeof *p);
    p->n_tensors = g->n_tensors;
    p->offset = ft_calloc((size_t)g->n_tensors, sizeof(uint64_t));
    int *left = ft_calloc((size_t)g->n_tensors, sizeof(int));
    freelist fl = {0};
    if (!p->offset || !left) {
        free(left);
        ft_plan_free(p);
        return ft_err(err, FT_ERUNTIME, "out of memory planning the tensor arena");
    }
    uint64_t pers = 0;
    /* the constants first (const_bytes), then the other persistent tensors */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < g->n_tensors; i++) {
            const ft_tensor *t = &g->tensors[i];
            uint64_t sz = align_up(ft_tensor_bytes(t));
            if (pass == 1 && ft_plan_is_constant(t))
                continue;
            if (pass == 0) {
                p->unplanned_bytes += (t->flags & FT_TF_DYNAMIC) ? 0 : sz;
                left[i] = t->n_readers;
                if ((t->flags & FT_TF_VALUE) && !(t->flags & FT_TF_INPUT))
                    p->weights_bytes += ft_tensor_bytes(t);
                if (!ft_plan_is_constant(t))
                    continue;
            }
            if (t->flags & FT_TF_DYNAMIC) {
                p->offset[i] = FT_PLAN_DYNAMIC;
                p->n_dynamic++;
            } else if (ft_plan_is_persistent(t)) {
                p->offset[i] = pers;
                pers += sz;
            }
        }
        if (pass == 0)
            p->const_bytes = pers;
    }
    p->persistent_bytes = pers;
    int oom = 0, *held = loop_holds(g, &oom);
    for (int k = 0; k < g->n_nodes && !oom; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        int moved = view_of_last_read(g, n, left) && !(held && held[n->in[0]] >= 0) ? n->in[0] : -1;
        for (int o = 0; o < n->n_out; o++) {
            const ft_tensor *t = &g->tensors[n->out[o]];
            if (t->flags & FT_TF_DYNAMIC)
                continue;
            if (moved >= 0)
                p->offset[n->out[o]] = p->offset[moved]; /* the block passes to the output */
            else if (!ft_plan_is_persistent(t))
                p->offset[n->out[o]] = pers + fl_alloc(&fl, align_up(ft_tensor_bytes(t)));
        }
        for (int i = 0; i <= n->n_in; i++) { /* the inputs, then the guard: read before the node runs */
            int ti = i < n->n_in ? n->in[i] : ft_node_guard(n);
            if (ti < 0)
                continue;
            const ft_tensor *t = &g->tensors[ti];
            if (--left[ti] == 0 && !ft_plan_is_persistent(t) && ti != moved && !(t->flags & FT_TF_DYNAMIC) &&
                !(held && held[ti] >= k))
                oom |= fl_free(&fl, p->offset[ti] - pers, align_up(ft_tensor_bytes(t)));
        }
        for (int ti = 0; held && n->op == FT_OP_LOOP_END && ti < g->n_tensors; ti++) { /* kept to here */
            const ft_tensor *t = &g->tensors[ti];
            if (held[ti] == k && left[ti] == 0 && !ft_plan_is_persistent(t) && !(t->flags & FT_TF_DYNAMIC))
                oom |= fl_free(&fl, p->offset[ti] - pers, align_up(ft_tensor_bytes(t)));
        }
        for (int o = 0; o < n->n_out; o++) { /* outputs nobody reads */
            int ti = n->out[o];
            const ft_tensor *t = &g->tensors[ti];
            if (t->n_readers == 0 && !ft_plan_is_persistent(t) && !(t->flags & FT_TF_DYNAMIC))
                oom |= fl_free(&fl, p->offset[ti] - pers, align_up(ft_tensor_bytes(t)));
        }
    }
    p->arena_bytes = pers + fl.top;
    free(fl.b);
    free(left);
    free(held);
    if (oom) {
        ft_plan_free(p);
        return ft_err(err, FT_ERUNTIME, "out of memory planning the tensor arena");
    }
    return FT_OK;
}

ft_status ft_plan_build_unshared(const ft_graph *g, ft_plan *p, ft_error *err)
{
    ft_status st = ft_plan_build(g, p, err);
    if (st)
        return st;
    uint64_t off = p->const_bytes; /* the constants keep their places, first */
    for (int i = 0; i < g->n_tensors; i++) {
        if (p->offset[i] == FT_PLAN_DYNAMIC || ft_plan_is_constant(&g->tensors[i]))
            continue;
        p->offset[i] = off;
        off += align_up(ft_tensor_bytes(&g->tensors[i]));
    }
    p->arena_bytes = off;
    return FT_OK;
}

void ft_plan_free(ft_plan *p)
{
    free(p->offset);
    p->offset = NULL;
}
