#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "threads.h"

volatile sig_atomic_t ft_stop_signal;

static ft_status interrupted(ft_error *err)
{
    return ft_err(err, FT_ERUNTIME, "interrupted by %s", ft_stop_signal == SIGINT ? "SIGINT" : ft_stop_signal == SIGTERM ? "SIGTERM" : "a signal");
}

uint64_t ft_exec_new_run_id(void)
{
    static uint64_t last; /* the executor runs on one thread */
    return ++last;
}

double ft_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int ft_backend_supports(const ft_backend *be, ft_op op, ft_dtype dt)
{
    const ft_kernel *k = &be->kernels[op];
    return k->fn != NULL && ft_dtype_in(dt, k->dtypes);
}

int ft_backend_runs(const ft_backend *be, const ft_graph *g, const ft_node *n)
{
    if (!ft_backend_supports(be, n->op, g->tensors[n->in[0]].dtype))
        return 0;
    return n->op != FT_OP_CAST || ft_dtype_in(g->tensors[n->out[0]].dtype, be->kernels[n->op].dtypes);
}

ft_dtype_mask ft_backend_dtypes(const ft_backend *be, ft_op op)
{
    return be->kernels[op].fn ? be->kernels[op].dtypes : 0;
}

ft_status ft_exec_check(const ft_graph *g, const ft_backend *be, const ft_backend *fallback, ft_error *err)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        ft_dtype dt = g->tensors[n->in[0]].dtype;
        if (!ft_backend_runs(be, g, n) && !(fallback && ft_backend_runs(fallback, g, n))) {
            char m[128];
            const ft_kernel *kk = &be->kernels[n->op];
            if (!kk->fn)
                return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement op '%s'%s", be->name,
                                   ft_op_name(n->op), strcmp(be->name, "cpu") ? " (--fallback cpu runs it on the cpu)" : "");
            if (!ft_backend_supports(be, n->op, dt))
                return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement '%s' for dtype %s (it has: "
                                   "%s)", be->name, ft_op_name(n->op), ft_dtype_name(dt),
                                   ft_dtype_mask_str(kk->dtypes, m, sizeof m));
            ft_dtype to = g->tensors[n->out[0]].dtype;
            return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement '%s' to dtype %s (it has: %s)%s",
                               be->name, ft_op_name(n->op), ft_dtype_name(to), ft_dtype_mask_str(kk->dtypes, m, sizeof m),
                               fallback ? "" : " (--fallback cpu runs it on the cpu)");
        }
    }
    return FT_OK;
}

ft_status ft_exec_node(const ft_graph *g, const ft_node *n, const ft_backend *be, ft_backend_ctx *ctx, int threads,
                       uint64_t run_id, const ft_view *in, ft_view *out, ft_error *err)
{
    if (!ft_backend_runs(be, g, n))
        return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement '%s' for dtype %s", be->name,
                           ft_op_name(n->op), ft_dtype_name(g->tensors[n->in[0]].dtype));
    ft_kctx kc = {ctx, g, threads > 0 ? threads : 1, err, .private_layouts = 0, .run_id = run_id};
    ft_status st = be->prepare ? be->prepare(&kc) : FT_OK;
    return st ? st : be->kernels[n->op].fn(&kc, n, in, out);
}

typedef struct {
    ft_view *in, *out;
    int max_io;
    const ft_exec_opts *o;
    ft_threads_follow tf; /* with o->follow_load */
    signed char *guard;   /* per tensor, a graph with guarded nodes: a guard's value this run, -1 not read yet */
    /* On a backend whose memory is the host's (ft_backend.host_memory), the
     * constants (the first skip bytes of the plan: plan.h) are read where the
     * graph holds them, and the arena starts at offset skip. */
    uint64_t skip;
    const ft_tensor *consts;
    /* A graph with run-time loops (loop_begin .. loop_end): per position in
     * g->order, the loop whose begin or end node is there (-1: none); each
     * loop's positions, and its iteration number and count this run; a host
     * buffer the loop's values pass through. */
    int *loop_at;
    struct loop_state {
        int begin, end;
        int64_t trips, it, count;
    } *loops;
    void *stage;
    size_t stage_cap;
} scratch;

static size_t view_bytes(const ft_view *v) { return (size_t)ft_numel(&v->shape) * ft_dtype_size(v->dtype); }

/* A graph with dynamic tensors (plan.h: FT_PLAN_DYNAMIC) runs on a copy of
 * its tensor and node tables: before each node that reads a dynamic tensor,
 * or is a data-dependent op, its inference runs again on the copy with the
 * shapes this run has seen (filling the node's parameters for them), its
 * dynamic outputs get buffers of their own, grown when a run needs more and
 * kept for the next, and a data-dependent kernel's shapes are recorded. The
 * graph itself is never changed. */
typedef struct {
    ft_graph g;       /* the copy: its tensors and nodes arrays are the two below */
    ft_tensor *t;
    ft_node *nodes;
    char *again;      /* per node: inferred again at every run */
    unsigned *vin;    /* per node: its shape-giving inputs computed at run time (ft_node_runtime_values) */
    void **vals;      /* per tensor: host copy of such an input's values this run, or NULL */
    void **buf;       /* per tensor: a dynamic tensor's buffer, or NULL */
    size_t *cap;
    const ft_backend *be;
    ft_backend_ctx *ctx;
} dyn_state;

static void dyn_free(dyn_state *d)
{
    for (int i = 0; d->buf && i < d->g.n_tensors; i++)
        if (d->buf[i])
            d->be->release(d->ctx, d->buf[i]);
    free(d->t);
    free(d->nodes);
    free(d->again);
    free(d->vin);
    for (int i = 0; d->vals && i < d->g.n_tensors; i++)
        free(d->vals[i]);
    free(d->vals);
    free(d->buf);
    free(d->cap);
    memset(d, 0, sizeof *d);
}

static ft_status dyn_init(dyn_state *d, const ft_graph *g, const ft_backend *be, ft_backend_ctx *ctx, ft_error *err)
{
    memset(d, 0, sizeof *d);
    d->g = *g;
    d->be = be;
    d->ctx = ctx;
    d->t = ft_malloc((size_t)g->n_tensors * sizeof *d->t + 1);
    d->nodes = ft_malloc((size_t)g->n_nodes * sizeof *d->nodes + 1);
    d->again = ft_calloc((size_t)g->n_nodes + 1, 1);
    d->buf = ft_calloc((size_t)g->n_tensors + 1, sizeof *d->buf);
    d->cap = ft_calloc((size_t)g->n_tensors + 1, sizeof *d->cap);
    d->vin = ft_calloc((size_t)g->n_nodes + 1, sizeof *d->vin);
    d->vals = ft_calloc((size_t)g->n_tensors + 1, sizeof *d->vals);
    if (!d->t || !d->nodes || !d->again || !d->buf || !d->cap || !d->vin || !d->vals) {
        dyn_free(d);
        return ft_err(err, FT_ERUNTIME, "out of memory preparing the run-time shapes");
    }
    memcpy(d->t, g->tensors, (size_t)g->n_tensors * sizeof *d->t);
    memcpy(d->nodes, g->nodes, (size_t)g->n_nodes * sizeof *d->nodes);
    d->g.tensors = d->t;
    d->g.nodes = d->nodes;
    d->g.run_shapes = 1;
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[k];
        d->again[k] = (char)ft_node_dynamic(g, n);
        d->vin[k] = (unsigned)ft_node_runtime_values(g, n);
    }
    return FT_OK;
}

/* Node k's shapes for this run: inferred again, and buffers for its dynamic
 * outputs (a data-dependent op's at their bound). */
static ft_status dyn_prepare(dyn_state *d, int k, ft_error *err)
{
    ft_node *n = &d->nodes[k];
    ft_status st = ft_node_infer(&d->g, n, err);
    if (st) {
        ft_err_prefix(err, "at run time");
        return st;
    }
    for (int o = 0; o < n->n_out; o++) {
        int t = n->out[o];
        size_t nb = ft_tensor_bytes(&d->t[t]);
        if (!(d->t[t].flags & FT_TF_DYNAMIC) || (d->buf[t] && nb <= d->cap[t]))
            continue;
        if (d->buf[t])
            d->be->release(d->ctx, d->buf[t]);
        d->buf[t] = NULL;
        size_t want = nb < FT_ALIGN ? FT_ALIGN : nb + nb / 4; /* room to grow into */
        if ((st = d->be->alloc(d->ctx, want, &d->buf[t], err))) {
            char sb[FT_SHAPE_STR];
            ft_err_prefix(err, "%s: node '%s' (%s): output '%s' of run-time shape %s (%zu bytes)", d->g.file, n->name,
                          ft_op_name(n->op), d->t[t].name, ft_shape_str(&d->t[t].shape, sb), nb);
            d->buf[t] = NULL;
            return st;
        }
        d->cap[t] = want;
    }
    return FT_OK;
}

/* After a data-dependent kernel: the shapes it wrote become this run's. */
static ft_status dyn_record(dyn_state *d, int k, const ft_view *out, ft_error *err)
{
    const ft_node *n = &d->nodes[k];
    for (int o = 0; o < n->n_out; o++) {
        ft_tensor *t = &d->t[n->out[o]];
        if ((out[o].shape.rank != t->shape.rank && !(t->flags & FT_TF_RANK_VARIES)) ||
            ft_numel(&out[o].shape) > ft_numel(&t->shape))
            return ft_node_err(err, FT_ERUNTIME, &d->g, n, "internal error: the kernel wrote more than the bound of "
                               "output '%s'", t->name);
        t->shape = out[o].shape;
    }
    return FT_OK;
}

/* One node on the fallback backend: its inputs come to host memory, the
 * fallback kernel runs there, its outputs go back to the device arena. */
static ft_status run_fallback(const ft_graph *g, const ft_node *n, const ft_backend *be, ft_kctx *kc, scratch *s)
{
    const ft_exec_opts *o = s->o;
    ft_view *hin = ft_calloc((size_t)n->n_in, sizeof *hin), *hout = ft_calloc((size_t)n->n_out, sizeof *hout);
    ft_status st = (!hin || !hout) ? ft_node_err(kc->err, FT_ERUNTIME, g, n, "out of memory for the fallback copies") : FT_OK;
    if (!st)
        st = be->sync(kc->be, kc->err);
    for (int i = 0; i < n->n_in && !st; i++) {
        hin[i] = s->in[i];
        if (!s->in[i].data)
            continue;
        size_t nb = view_bytes(&s->in[i]);
        if (!(hin[i].data = ft_malloc(nb ? nb : 1)))
            st = ft_node_err(kc->err, FT_ERUNTIME, g, n, "out of memory copying input %d to the host (%zu bytes)", i, nb);
        else
            st = be->download(kc->be, hin[i].data, s->in[i].data, nb, kc->err);
    }
    for (int i = 0; i < n->n_out && !st; i++) {
        hout[i] = s->out[i];
        size_t nb = view_bytes(&s->out[i]);
        if (!(hout[i].data = ft_malloc(nb ? nb : 1)))
            st = ft_node_err(kc->err, FT_ERUNTIME, g, n, "out of memory for output %d on the host (%zu bytes)", i, nb);
    }
    if (!st) {
        ft_kctx fk = {o->fallback_ctx, g, kc->threads, kc->err, .run_id = kc->run_id};
        st = o->fallback->kernels[n->op].fn(&fk, n, hin, hout);
    }
    for (int i = 0; i < n->n_out && !st; i++) {
        s->out[i].shape = hout[i].shape; /* a data-dependent kernel sets what it wrote */
        st = be->upload(kc->be, s->out[i].data, hout[i].data, view_bytes(&s->out[i]), kc->err);
    }
    if (!st)
        st = be->sync(kc->be, kc->err);
    for (int i = 0; hin && i < n->n_in; i++)
        if (s->in[i].data)
            free(hin[i].data);
    for (int i = 0; hout && i < n->n_out; i++)
        free(hout[i].data);
    free(hin);
    free(hout);
    return st;
}

/* Per-node timing of one run: NULL when not profiling or tracing. */
typedef struct {
    ft_run_result *r;
    int run;
    double t0;
    int events;
    size_t *cap; /* room in r->events: a run-time loop's body records once per iteration */
} node_timer;

/* no_sync: queue only, the caller synchronises (a run being recorded, or
 * one whose end is marked on the device first). */
/* Where tensor t lives this run. */
static void *tensor_data(const scratch *s, const ft_plan *p, char *arena, const dyn_state *d, int t)
{
    if (p->offset[t] == FT_PLAN_DYNAMIC)
        return d->buf[t];
    if (p->offset[t] < s->skip) /* read only: no kernel writes its inputs */
        return (void *)s->consts[t].value;
    return arena + (p->offset[t] - s->skip);
}

/* Whether guarded node n runs: its guard's first element, read once per run
 * (on a device, after waiting for what is queued: one byte comes back). */
static ft_status guard_on(const ft_backend *be, ft_kctx *kc, scratch *s, void *data, int t, int *on)
{
    if (s->guard[t] < 0) {
        uint8_t b = 0;
        ft_status st = be->sync(kc->be, kc->err);
        if (!st)
            st = be->download(kc->be, &b, data, 1, kc->err);
        if (st)
            return st;
        s->guard[t] = b != 0;
    }
    *on = s->guard[t];
    return FT_OK;
}

/* Node k's shape-giving inputs computed at run time, read to host memory
 * for its inference this run (ft_infer_ints takes them as the tensors'
 * values): on a device after waiting for the work queued before it, one
 * synchronisation per such node. */
static ft_status dyn_values(dyn_state *d, int k, const scratch *s, const ft_plan *p, char *arena, ft_error *err)
{
    const ft_node *n = &d->nodes[k];
    ft_status st = FT_OK;
    int synced = 0;
    for (int i = 0; i < n->n_in && i < 32 && !st; i++) {
        if (!(d->vin[k] & (1u << i)))
            continue;
        int t = n->in[i];
        ft_tensor *x = &d->t[t];
        size_t nb = ft_tensor_bytes(x), room = FT_MAX_VALUES * sizeof(int64_t);
        if (ft_op_value_bytes(n->op)) { /* read whole (string_split's strings, an encoded image): room for this run's */
            void *grown = nb > room ? ft_realloc(d->vals[t], nb) : d->vals[t];
            if (nb > room && !grown)
                return ft_node_err(err, FT_ERUNTIME, &d->g, n, "out of memory reading input %d ('%s', %zu bytes)", i,
                                   x->name, nb);
            d->vals[t] = grown;
        } else if (ft_numel(&x->shape) > FT_MAX_VALUES || x->shape.rank > 1) {
            char sb[FT_SHAPE_STR];
            st = ft_node_err(err, FT_EGRAPH, &d->g, n, "input %d ('%s') gives shape values but has shape %s; at most "
                             "%d values in a 1-D tensor are supported", i, x->name, ft_shape_str(&x->shape, sb),
                             FT_MAX_VALUES);
            ft_err_prefix(err, "at run time");
            return st;
        }
        if (!d->vals[t] && !(d->vals[t] = ft_malloc(room)))
            return ft_node_err(err, FT_ERUNTIME, &d->g, n, "out of memory reading input %d ('%s')", i, x->name);
        if (!synced && !(st = d->be->sync(d->ctx, err)))
            synced = 1;
        if (!st && nb)
            st = d->be->download(d->ctx, d->vals[t], tensor_data(s, p, arena, d, t), nb, err);
        x->value = d->vals[t];
        x->value_bytes = nb;
        x->flags |= FT_TF_VALUE;
    }
    return st;
}

/* Room for nb bytes in s->stage. */
static ft_status stage_room(scratch *s, size_t nb, ft_error *err)
{
    if (nb <= s->stage_cap)
        return FT_OK;
    void *grown = ft_realloc(s->stage, nb);
    if (!grown)
        return ft_err(err, FT_ERUNTIME, "out of memory for a run-time loop's values (%zu bytes)", nb);
    s->stage = grown;
    s->stage_cap = nb;
    return FT_OK;
}

/* A run-time loop's dynamic tensor t (a scan output, a state or final value
 * of run-time shape: its buffer is d->buf[t]) with room for nb bytes, the
 * first keep of what it holds kept. */
static ft_status scan_room(const ft_backend *be, ft_kctx *kc, scratch *s, dyn_state *d, int t, size_t keep, size_t nb)
{
    if (d->buf[t] && nb <= d->cap[t])
        return FT_OK;
    size_t want = nb < FT_ALIGN ? FT_ALIGN : nb * 2;
    void *nbuf = NULL;
    ft_status st = be->alloc(kc->be, want, &nbuf, kc->err);
    if (!st && keep)
        st = stage_room(s, keep, kc->err);
    if (!st && keep && !(st = be->sync(kc->be, kc->err)) && !(st = be->download(kc->be, s->stage, d->buf[t], keep, kc->err)))
        st = be->upload(kc->be, nbuf, s->stage, keep, kc->err);
    if (st) {
        if (nbuf)
            be->release(kc->be, nbuf);
        return st;
    }
    if (d->buf[t])
        be->release(kc->be, d->buf[t]);
    d->buf[t] = nbuf;
    d->cap[t] = want;
    return FT_OK;
}

/* One pair of loop_copy: the bytes it moves (none where both lists name
 * one tensor) and its source's shape when read. */
typedef struct pair_move {
    size_t nb;
    ft_shape shape;
} pair_move;

/* The values of tensors src[0..n) copied into dst[0..n) (where the two
 * lists name the same tensor, nothing), all read before any is written:
 * one may be another's source (a body that swaps two carried values). A
 * dst of run-time shape (a carried value that changes shape) takes its
 * src's shape, as it was read, with room for it. */
static ft_status loop_copy(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_kctx *kc, char *arena,
                           scratch *s, dyn_state *d, const int *src, const int *dst, int n)
{
    const ft_tensor *ts = d ? d->t : g->tensors;
    pair_move local[8], *pm = n <= 8 ? local : ft_malloc((size_t)n * sizeof *pm);
    if (!pm)
        return ft_err(kc->err, FT_ERUNTIME, "out of memory for a run-time loop's %d carried values", n);
    size_t total = 0, at = 0;
    for (int j = 0; j < n; j++) {
        pm[j].nb = src[j] == dst[j] ? 0 : ft_tensor_bytes(&ts[src[j]]);
        pm[j].shape = ts[src[j]].shape;
        total += pm[j].nb;
    }
    ft_status st = total ? stage_room(s, total, kc->err) : FT_OK;
    if (!st && total)
        st = be->sync(kc->be, kc->err);
    for (int j = 0; j < n && !st; j++) {
        if (pm[j].nb)
            st = be->download(kc->be, (char *)s->stage + at, tensor_data(s, p, arena, d, src[j]), pm[j].nb, kc->err);
        at += pm[j].nb;
    }
    at = 0;
    for (int j = 0; j < n && !st; j++) {
        /* a dst resized here may be a later pair's src: its shape was read above */
        if (src[j] != dst[j] && p->offset[dst[j]] == FT_PLAN_DYNAMIC) {
            d->t[dst[j]].shape = pm[j].shape;
            st = scan_room(be, kc, s, d, dst[j], 0, pm[j].nb);
        }
        if (pm[j].nb && !st)
            st = be->upload(kc->be, tensor_data(s, p, arena, d, dst[j]), (char *)s->stage + at, pm[j].nb, kc->err);
        at += pm[j].nb;
    }
    if (pm != local)
        free(pm);
    return st;
}

/* loop_begin at position k: this run's trip count and condition read; the
 * state set from the initial values and the body next (*next), or, when
 * the loop makes no iteration, its final values the initial ones, its scan
 * outputs empty, and the node after its loop_end next. */
static ft_status loop_begin(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_kctx *kc, char *arena,
                            scratch *s, dyn_state *d, int k, int *next)
{
    const ft_node *n = &g->nodes[g->order[k]];
    struct loop_state *L = &s->loops[s->loop_at[k]];
    const ft_node *e = &g->nodes[g->order[L->end]];
    int64_t m = 0;
    uint8_t c = 0, one = 1;
    ft_status st = be->sync(kc->be, kc->err);
    if (!st)
        st = be->download(kc->be, &m, tensor_data(s, p, arena, d, n->in[0]), sizeof m, kc->err);
    if (!st)
        st = be->download(kc->be, &c, tensor_data(s, p, arena, d, n->in[1]), 1, kc->err);
    if (st)
        return st;
    L->trips = m;
    L->it = ft_attr(n, "start")->i;
    L->count = 0;
    int nv = n->n_in - 2, runs = c && L->it < L->trips;
    uint8_t zero = 0; /* the condition the body reads: false only where no iteration ran (cli/check.c reads it) */
    st = be->upload(kc->be, tensor_data(s, p, arena, d, n->out[0]), &L->it, sizeof L->it, kc->err);
    if (!st)
        st = be->upload(kc->be, tensor_data(s, p, arena, d, n->out[1]), runs ? &one : &zero, 1, kc->err);
    if (st)
        return st;
    if (runs) {
        *next = k + 1;
        return st ? st : loop_copy(g, p, be, kc, arena, s, d, n->in + 2, n->out + 2, nv);
    }
    for (int o = nv; o < e->n_out && !st; o++) { /* no iteration: scan outputs of 0 entries */
        d->t[e->out[o]].shape.dims[0] = 0;
        st = scan_room(be, kc, s, d, e->out[o], 0, 0);
    }
    *next = L->end + 1;
    return st ? st : loop_copy(g, p, be, kc, arena, s, d, n->in + 2, e->out, nv);
}

/* loop_end at position k: this iteration's scan values appended; then the
 * body again (*next its first node: the next carried values become the
 * state) while the condition holds and the trip count is not reached, or
 * the final values written and the node after it next. */
static ft_status loop_end(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_kctx *kc, char *arena,
                          scratch *s, dyn_state *d, int k, int *next)
{
    const ft_node *e = &g->nodes[g->order[k]];
    struct loop_state *L = &s->loops[s->loop_at[k]];
    const ft_node *b = &g->nodes[g->order[L->begin]];
    const ft_tensor *ts = d ? d->t : g->tensors;
    int nv = ft_loop_carried(e), nk = e->n_out - nv;
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    ft_status st = FT_OK;
    for (int j = 0; j < nv; j++) {
        const ft_tensor *x = &ts[e->in[2 + nv + j]], *sj = &ts[e->in[2 + j]];
        if (!ft_shape_eq(&x->shape, &sj->shape) && !(sj->flags & FT_TF_DYNAMIC)) /* dynamic: it may change */
            return ft_node_err(kc->err, FT_ERUNTIME, g, e, "iteration %lld makes carried value %d ('%s', %s) into %s "
                               "('%s'); a carried value keeps its shape from one iteration to the next",
                               (long long)L->it, j, sj->name, ft_shape_str(&sj->shape, s1), ft_shape_str(&x->shape, s2),
                               x->name);
    }
    for (int q = 0; q < nk && !st; q++) {
        int et = e->in[2 + 2 * nv + q], ot = e->out[nv + q];
        ft_shape *os = &d->t[ot].shape;
        const ft_shape *es = &ts[et].shape;
        size_t eb = ft_tensor_bytes(&ts[et]);
        int same = os->rank == es->rank + 1;
        for (int i = 0; same && i < es->rank; i++)
            same = os->dims[i + 1] == es->dims[i];
        if (L->count && !same) {
            ft_shape was = *os;
            was.dims[0] = 0;
            return ft_node_err(kc->err, FT_ERUNTIME, g, e, "scan value %d ('%s') has shape %s at iteration %lld and "
                               "[*%s before; the values a scan output stacks keep their shape", q, ts[et].name,
                               ft_shape_str(es, s1), (long long)L->it, ft_shape_str(&was, s2) + 2);
        }
        if (!L->count) {
            os->rank = es->rank + 1;
            for (int i = 0; i < es->rank; i++)
                os->dims[i + 1] = es->dims[i];
        }
        size_t have = (size_t)L->count * eb;
        st = scan_room(be, kc, s, d, ot, have, have + eb);
        if (!st && eb && !(st = stage_room(s, eb, kc->err)) && !(st = be->sync(kc->be, kc->err)) &&
            !(st = be->download(kc->be, s->stage, tensor_data(s, p, arena, d, et), eb, kc->err)))
            st = be->upload(kc->be, (char *)d->buf[ot] + have, s->stage, eb, kc->err);
        os->dims[0] = L->count + 1;
    }
    uint8_t c = 0;
    if (!st && !(st = be->sync(kc->be, kc->err)))
        st = be->download(kc->be, &c, tensor_data(s, p, arena, d, e->in[1]), 1, kc->err);
    if (st)
        return st;
    L->count++;
    L->it++;
    if (!c || L->it >= L->trips) {
        *next = k + 1;
        return loop_copy(g, p, be, kc, arena, s, d, e->in + 2 + nv, e->out, nv);
    }
    int64_t limit = s->o->loop_limit > 0 ? s->o->loop_limit : FT_LOOP_LIMIT;
    if (L->count >= limit)
        return ft_node_err(kc->err, FT_ERUNTIME, g, e, "the run-time loop from '%s' goes on after %lld iterations, the "
                           "most ftrun runs (--loop-limit)", b->name, (long long)L->count);
    uint8_t one = 1;
    st = loop_copy(g, p, be, kc, arena, s, d, e->in + 2 + nv, b->out + 2, nv);
    if (!st)
        st = be->upload(kc->be, tensor_data(s, p, arena, d, b->out[0]), &L->it, sizeof L->it, kc->err);
    if (!st)
        st = be->upload(kc->be, tensor_data(s, p, arena, d, b->out[1]), &one, 1, kc->err);
    for (int q = L->begin + 1; s->guard && q < k; q++) { /* the body's guards are read again */
        const ft_node *bn = &g->nodes[g->order[q]];
        for (int o = 0; o < bn->n_out; o++)
            s->guard[bn->out[o]] = -1;
    }
    *next = L->begin + 1;
    return st;
}

static ft_status run_once(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_kctx *kc, char *arena, scratch *s,
                          node_timer *tm, int no_sync, dyn_state *d)
{
    const ft_tensor *ts = d ? d->t : g->tensors;
    if (s->guard)
        memset(s->guard, -1, (size_t)g->n_tensors);
    for (int k = 0; k < g->n_nodes;) {
        if (ft_stop_signal)
            return interrupted(kc->err);
        int ni = g->order[k];
        const ft_node *n = &g->nodes[ni];
        if (n->op == FT_OP_LOOP_BEGIN || n->op == FT_OP_LOOP_END) { /* the executor's own: a jump or a step on */
            int next = k + 1, gt = ft_node_guard(n), on = 1;
            ft_status st = gt >= 0 && n->op == FT_OP_LOOP_BEGIN
                               ? guard_on(be, kc, s, tensor_data(s, p, arena, d, gt), gt, &on) : FT_OK;
            if (!st && !on) { /* in a branch not taken: the whole loop is skipped */
                k = s->loops[s->loop_at[k]].end + 1;
                continue;
            }
            if (!st)
                st = n->op == FT_OP_LOOP_BEGIN ? loop_begin(g, p, be, kc, arena, s, d, k, &next)
                                               : loop_end(g, p, be, kc, arena, s, d, k, &next);
            if (st)
                return st;
            k = next;
            continue;
        }
        k++;
        int gt = ft_node_guard(n), on = 1;
        if (gt >= 0) { /* a branch not taken: skipped, its outputs not written */
            ft_status st = guard_on(be, kc, s, tensor_data(s, p, arena, d, gt), gt, &on);
            if (st)
                return st;
            if (!on)
                continue;
        }
        if (d && d->again[ni]) {
            ft_status st = d->vin[ni] ? dyn_values(d, ni, s, p, arena, kc->err) : FT_OK;
            if (!st)
                st = dyn_prepare(d, ni, kc->err);
            if (st)
                return st;
            n = &d->nodes[ni];
        }
        if (s->o->follow_load && (k & 15) == 0) /* a clock read per 16 nodes, a look at the load per 10 ms */
            kc->threads = ft_threads_now(&s->tf);
        for (int i = 0; i < n->n_in; i++) {
            int t = n->in[i];
            if (t < 0) {
                memset(&s->in[i], 0, sizeof s->in[i]);
                continue;
            }
            s->in[i] = (ft_view){tensor_data(s, p, arena, d, t), ts[t].dtype, ts[t].shape};
        }
        for (int o = 0; o < n->n_out; o++) {
            int t = n->out[o];
            s->out[o] = (ft_view){tensor_data(s, p, arena, d, t), ts[t].dtype, ts[t].shape};
        }
        double a = tm ? ft_now() : 0;
        int dev_timer = tm && be->mark && tm->r->node_ms;
        ft_status st = dev_timer ? be->mark(kc->be, 2, kc->err) : FT_OK;
        if (!st) {
            if (ft_backend_runs(be, g, n))
                st = be->kernels[n->op].fn(kc, n, s->in, s->out);
            else
                st = run_fallback(g, n, be, kc, s);
        }
        if (!st && d && ft_node_data_dependent(g, &g->nodes[ni]))
            st = dyn_record(d, ni, s->out, kc->err);
        if (!st && dev_timer)
            st = be->mark(kc->be, 3, kc->err);
        if (!st && tm)
            st = be->sync(kc->be, kc->err);
        if (st)
            return st;
        if (tm) {
            double b = ft_now();
            double dms = (b - a) * 1e3;
            if (dev_timer && (st = be->elapsed(kc->be, 2, 3, &dms, kc->err)))
                return st;
            if (tm->r->node_ms)
                tm->r->node_ms[ni] += dms;
            if (tm->events && tm->r->n_events == *tm->cap) {
                ft_trace_event *ne = ft_realloc(tm->r->events, *tm->cap * 2 * sizeof *ne);
                if (!ne)
                    return ft_err(kc->err, FT_ERUNTIME, "out of memory recording the trace");
                tm->r->events = ne;
                *tm->cap *= 2;
            }
            if (tm->events)
                tm->r->events[tm->r->n_events++] = (ft_trace_event){ni, tm->run, (a - tm->t0) * 1e3, (b - tm->t0) * 1e3};
        }
    }
    return no_sync ? FT_OK : be->sync(kc->be, kc->err);
}

/* The run-time loops of g (loop_begin .. loop_end) found in its order;
 * --cuda-graph refused with them (what a run records cannot jump back). */
static ft_status loops_init(const ft_graph *g, const ft_backend *be, const ft_exec_opts *o, scratch *s, ft_error *err)
{
    int nl = 0, nb = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        nl += g->nodes[k].op == FT_OP_LOOP_END;
        nb += g->nodes[k].op == FT_OP_LOOP_BEGIN;
    }
    if (!nl && !nb)
        return FT_OK;
    s->loop_at = ft_malloc((size_t)g->n_nodes * sizeof *s->loop_at);
    s->loops = ft_calloc((size_t)nl + 1, sizeof *s->loops);
    int *pos = ft_malloc((size_t)g->n_nodes * sizeof *pos);
    if (!s->loop_at || !s->loops || !pos) {
        free(pos);
        return ft_err(err, FT_ERUNTIME, "out of memory preparing the run-time loops");
    }
    for (int k = 0; k < g->n_nodes; k++) {
        pos[g->order[k]] = k;
        s->loop_at[k] = -1;
    }
    ft_status st = FT_OK;
    for (int k = 0, l = 0; k < g->n_nodes && !st; k++) {
        const ft_node *e = &g->nodes[g->order[k]];
        if (e->op != FT_OP_LOOP_END)
            continue;
        int bp = g->tensors[e->in[0]].producer;
        if (bp < 0 || g->nodes[bp].op != FT_OP_LOOP_BEGIN || pos[bp] > k)
            st = ft_node_err(err, FT_EGRAPH, g, e, "input 0 ('%s') is not the iteration number of a loop_begin before it",
                             g->tensors[e->in[0]].name);
        else if (o->cuda_graph && be->capture)
            st = ft_node_err(err, FT_EUSAGE, g, e, "--cuda-graph does not take a graph with a loop whose iterations are "
                             "known only at run time (from '%s'); run without --cuda-graph", g->nodes[bp].name);
        else if (s->loop_at[pos[bp]] >= 0)
            st = ft_node_err(err, FT_EGRAPH, g, e, "its loop_begin '%s' already ends at another loop_end",
                             g->nodes[bp].name);
        else {
            s->loops[l] = (struct loop_state){.begin = pos[bp], .end = k};
            s->loop_at[pos[bp]] = s->loop_at[k] = l++;
        }
    }
    for (int k = 0; k < g->n_nodes && !st; k++) { /* each loop_begin has its end; loops nest, never overlap */
        const ft_node *n = &g->nodes[g->order[k]];
        if (n->op == FT_OP_LOOP_BEGIN && s->loop_at[k] < 0)
            st = ft_node_err(err, FT_EGRAPH, g, n, "no loop_end reads its iteration number; a loop_begin needs one");
        for (int a = 0; a < nl && !st && n->op == FT_OP_LOOP_END; a++) {
            const struct loop_state *x = &s->loops[a], *y = &s->loops[s->loop_at[k]];
            if (x->begin < y->begin && y->begin < x->end && x->end < y->end)
                st = ft_node_err(err, FT_EGRAPH, g, n, "its loop overlaps the loop from '%s' without nesting in it",
                                 g->nodes[g->order[x->begin]].name);
        }
    }
    free(pos);
    return st;
}

static void progress(const ft_exec_opts *o, double start, double *last, int done, int total)
{
    double now = ft_now();
    if (!o->progress || now - start < 1.0 || now - *last < 0.1)
        return;
    *last = now;
    if (o->duration_s > 0)
        fprintf(stderr, "\rftrun: run %d (%.1f of %.1f s)   ", done, now - start, o->duration_s);
    else
        fprintf(stderr, "\rftrun: run %d of %d (%.0f%%)   ", done, total, 100.0 * done / (total ? total : 1));
}

ft_status ft_exec_run(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_backend_ctx *ctx,
                      const ft_exec_opts *o, ft_run_result *r, ft_error *err)
{
    memset(r, 0, sizeof *r);
    int max_io = 1;
    for (int k = 0; k < g->n_nodes; k++) {
        if (g->nodes[k].n_in > max_io) max_io = g->nodes[k].n_in;
        if (g->nodes[k].n_out > max_io) max_io = g->nodes[k].n_out;
    }
    scratch s = {ft_calloc((size_t)max_io, sizeof(ft_view)), ft_calloc((size_t)max_io, sizeof(ft_view)), max_io, o, {.max = o->threads},
                 ft_graph_guarded(g) ? ft_malloc((size_t)g->n_tensors + 1) : NULL, be->host_memory ? p->const_bytes : 0,
                 g->tensors, NULL, NULL, NULL, 0};
    int cap = o->iterations > 0 ? o->iterations : 1;
    r->run_ms = ft_malloc((size_t)cap * sizeof(double));
    r->outputs = ft_calloc((size_t)g->n_outputs, sizeof(void *));
    r->output_shapes = ft_calloc((size_t)g->n_outputs + 1, sizeof(ft_shape));
    r->n_outputs = g->n_outputs;
    void *arena = NULL;
    dyn_state dyn = {0}, *d = NULL;
    ft_status st = FT_OK;
    if (!s.in || !s.out || !r->run_ms || !r->outputs || !r->output_shapes || (ft_graph_guarded(g) && !s.guard)) {
        st = ft_err(err, FT_ERUNTIME, "out of memory preparing the run");
        goto out;
    }
    if (s.guard && o->cuda_graph && be->capture) {
        const ft_node *gn = NULL; /* the first guarded node, for the message */
        for (int k = 0; k < g->n_nodes && !gn; k++)
            if (ft_node_guard(&g->nodes[g->order[k]]) >= 0)
                gn = &g->nodes[g->order[k]];
        st = ft_err(err, FT_EUSAGE, "%s: --cuda-graph does not take a graph with nodes that run on a condition known "
                    "only at run time (%d guarded nodes, the first '%s' (%s), guard '%s'); run without --cuda-graph",
                    g->file, ft_graph_guarded(g), gn->name, ft_op_name(gn->op), g->tensors[ft_node_guard(gn)].name);
        goto out;
    }
    if ((st = loops_init(g, be, o, &s, err)))
        goto out;
    if (p->n_dynamic) {
        const ft_node *dn = NULL; /* the first data-dependent node, for messages */
        for (int k = 0; k < g->n_nodes && !dn; k++)
            if (ft_node_data_dependent(g, &g->nodes[g->order[k]]))
                dn = &g->nodes[g->order[k]];
        const char *what = o->cuda_graph && be->capture ? "--cuda-graph" : NULL;
        if (what) {
            st = ft_err(err, FT_EUSAGE, "%s: %s does not take a graph whose shapes are known only at run time (node "
                        "'%s' (%s) and %d tensors after it); run without %s", g->file, what, dn ? dn->name : "?",
                        dn ? ft_op_name(dn->op) : "?", p->n_dynamic, what);
            goto out;
        }
        if ((st = dyn_init(&dyn, g, be, ctx, err)))
            goto out;
        d = &dyn;
    }
    if ((st = be->alloc(ctx, (size_t)(p->arena_bytes - s.skip), &arena, err)))
        goto out;
    char *base = arena;
    double t0 = ft_now();
    for (int i = 0; i < g->n_tensors; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (t->value && p->offset[i] != FT_PLAN_DYNAMIC && p->offset[i] >= s.skip &&
            (st = be->upload(ctx, tensor_data(&s, p, base, d, i), t->value, ft_tensor_bytes(t), err)))
            goto out;
    }
    if ((st = be->sync(ctx, err)))
        goto out;
    r->h2d_ms = (ft_now() - t0) * 1e3;
    /* a dynamic graph keeps every tensor in its plain layout: a layout of a
     * backend's own is decided for the shapes known before the first run */
    ft_kctx kc = {ctx, d ? &d->g : g, o->threads > 0 ? o->threads : 1, err, .private_layouts = !o->keep_tensors && !d,
                  .release = !o->keep_tensors && !d ? o->release : NULL, .release_owner = o->release_owner,
                  .run_id = ft_exec_new_run_id()};
    /* what the backends decide for the whole graph, before any node runs */
    ft_kctx fk = {o->fallback_ctx, g, kc.threads, err, .private_layouts = 0, .run_id = kc.run_id};
    if ((be->prepare && (st = be->prepare(&kc))) ||
        (o->fallback && o->fallback->prepare && (st = o->fallback->prepare(&fk))))
        goto out;
    double start = ft_now(), last = 0;
    int total = o->warmup + o->iterations;
    size_t ev_cap = 0;
    if (o->profile && !(r->node_ms = ft_calloc((size_t)g->n_nodes, sizeof(double)))) {
        st = ft_err(err, FT_ERUNTIME, "out of memory for the profile");
        goto out;
    }
    /* A captured graph is recorded from a run whose workspaces and plans
     * already exist: at least one warm-up run first. */
    int use_graph = o->cuda_graph && be->capture && be->replay && !o->profile && !o->trace;
    for (int k = 0; k < g->n_nodes && use_graph; k++) { /* a fallback node synchronises: nothing to record */
        const ft_node *n = &g->nodes[k];
        if (!ft_backend_runs(be, g, n))
            use_graph = 0;
    }
    int warmup = use_graph && o->warmup < 1 ? 1 : o->warmup;
    for (int w = 0; w < warmup || (o->warmup_s > 0 && ft_now() - start < o->warmup_s); w++) {
        if ((st = run_once(g, p, be, &kc, base, &s, NULL, 0, d)))
            goto out;
        r->n_warmup++;
        progress(o, start, &last, w + 1, total);
    }
    if (use_graph) {
        if ((st = be->capture(ctx, 1, err)))
            goto out;
        st = run_once(g, p, be, &kc, base, &s, NULL, 1, d);
        ft_status st2 = be->capture(ctx, 0, st ? &(ft_error){0} : err);
        if (st || (st = st2))
            goto out;
    }
    int dev_time = be->mark && be->elapsed;
    r->device_timed = dev_time;
    double timed_start = ft_now();
    for (int it = 0;; it++) {
        if (it >= o->iterations && (o->duration_s <= 0 || ft_now() - timed_start >= o->duration_s))
            break;
        if (o->trace && r->n_events + (size_t)g->n_nodes > ev_cap) {
            size_t nc = ev_cap ? ev_cap * 2 : (size_t)g->n_nodes * 16 + 16;
            ft_trace_event *ne = ft_realloc(r->events, nc * sizeof *ne);
            if (!ne) {
                st = ft_err(err, FT_ERUNTIME, "out of memory recording the trace");
                goto out;
            }
            r->events = ne;
            ev_cap = nc;
        }
        node_timer tm = {r, it, timed_start, o->trace, &ev_cap};
        double a = ft_now();
        if (dev_time && (st = be->mark(ctx, 0, err)))
            goto out;
        /* With device timers the end mark is queued right behind the last
         * kernel, before the host waits: the wait is not the run's time. */
        int per_node = o->profile || o->trace;
        int defer_sync = use_graph || (dev_time && !per_node);
        if (use_graph)
            st = be->replay(ctx, err);
        else
            st = run_once(g, p, be, &kc, base, &s, per_node ? &tm : NULL, defer_sync, d);
        if (st || (dev_time && (st = be->mark(ctx, 1, err))) || (defer_sync && (st = be->sync(ctx, err))))
            goto out;
        double ms = (ft_now() - a) * 1e3;
        if (dev_time && (st = be->elapsed(ctx, 0, 1, &ms, err)))
            goto out;
        if (r->n_runs == cap) {
            double *nr = ft_realloc(r->run_ms, (size_t)cap * 2 * sizeof(double));
            if (!nr) {
                st = ft_err(err, FT_ERUNTIME, "out of memory recording run times");
                goto out;
            }
            r->run_ms = nr;
            cap *= 2;
        }
        r->run_ms[r->n_runs++] = ms;
        progress(o, start, &last, o->warmup + it + 1, total);
    }
    if (o->progress && ft_now() - start >= 1.0)
        fprintf(stderr, "\r%60s\r", "");
    t0 = ft_now();
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &(d ? d->t : g->tensors)[g->outputs[i]]; /* as the last run left it */
        size_t nb = ft_tensor_bytes(t);
        r->output_shapes[i] = t->shape;
        r->outputs[i] = ft_malloc(nb ? nb : 1);
        if (!r->outputs[i]) {
            st = ft_err(err, FT_ERUNTIME, "out of memory copying output '%s' (%zu bytes)", t->name, nb);
            goto out;
        }
        if ((st = be->download(ctx, r->outputs[i], tensor_data(&s, p, base, d, g->outputs[i]), nb, err)))
            goto out;
    }
    if (!st && o->keep_tensors) {
        if (!(r->tensors = ft_calloc((size_t)g->n_tensors, sizeof(void *)))) {
            st = ft_err(err, FT_ERUNTIME, "out of memory keeping every tensor");
            goto out;
        }
        r->n_tensors = g->n_tensors;
        const ft_tensor *ts = d ? d->t : g->tensors; /* as the last run left them */
        if (!(r->tensor_shapes = ft_malloc((size_t)g->n_tensors * sizeof *r->tensor_shapes + 1)))
            st = ft_err(err, FT_ERUNTIME, "out of memory keeping every tensor");
        for (int i = 0; i < g->n_tensors && !st; i++) {
            size_t nb = ft_tensor_bytes(&ts[i]);
            r->tensor_shapes[i] = ts[i].shape;
            if (p->offset[i] == FT_PLAN_DYNAMIC && !d->buf[i]) /* not reached by the run (none is) */
                nb = 0;
            if (!(r->tensors[i] = ft_malloc(nb ? nb : 1)))
                st = ft_err(err, FT_ERUNTIME, "out of memory copying tensor '%s' (%zu bytes)", g->tensors[i].name, nb);
            else if (nb)
                st = be->download(ctx, r->tensors[i], tensor_data(&s, p, base, d, i), nb, err);
        }
        if (st)
            goto out;
    }
    st = be->sync(ctx, err);
    r->d2h_ms = (ft_now() - t0) * 1e3;
out:
    if (d)
        dyn_free(d);
    if (arena)
        be->release(ctx, arena);
    free(s.in);
    free(s.out);
    free(s.guard);
    free(s.loop_at);
    free(s.loops);
    free(s.stage);
    if (st)
        ft_run_result_free(r);
    return st;
}

void ft_run_result_free(ft_run_result *r)
{
    for (int i = 0; r->outputs && i < r->n_outputs; i++)
        free(r->outputs[i]);
    free(r->outputs);
    free(r->output_shapes);
    free(r->run_ms);
    free(r->node_ms);
    free(r->events);
    for (int i = 0; r->tensors && i < r->n_tensors; i++)
        free(r->tensors[i]);
    free(r->tensors);
    free(r->tensor_shapes);
    memset(r, 0, sizeof *r);
}
