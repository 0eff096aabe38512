#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile sig_atomic_t ft_stop_signal;

static ft_status interrupted(ft_error *err)
{
    return ft_err(err, FT_ERUNTIME, "interrupted by %s", ft_stop_signal == SIGINT ? "SIGINT" : ft_stop_signal == SIGTERM ? "SIGTERM" : "a signal");
}

double ft_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

ft_status ft_exec_check(const ft_graph *g, const ft_backend *be, ft_error *err)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        ft_dtype dt = g->tensors[n->in[0]].dtype;
        if (!ft_backend_supports(be, n->op, dt)) {
            char m[128];
            const ft_kernel *kk = &be->kernels[n->op];
            if (!kk->fn)
                return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement op '%s'", be->name,
                                   ft_op_name(n->op));
            return ft_node_err(err, FT_ERUNTIME, g, n, "the %s backend does not implement '%s' for dtype %s (it has: %s)",
                               be->name, ft_op_name(n->op), ft_dtype_name(dt), ft_dtype_mask_str(kk->dtypes, m, sizeof m));
        }
    }
    return FT_OK;
}

typedef struct {
    ft_view *in, *out;
    int max_io;
} scratch;

/* Per-node timing of one run: NULL when not profiling or tracing. */
typedef struct {
    ft_run_result *r;
    int run;
    double t0;
    int events;
} node_timer;

static ft_status run_once(const ft_graph *g, const ft_plan *p, const ft_backend *be, ft_kctx *kc, char *arena, scratch *s,
                          node_timer *tm)
{
    for (int k = 0; k < g->n_nodes; k++) {
        if (ft_stop_signal)
            return interrupted(kc->err);
        const ft_node *n = &g->nodes[g->order[k]];
        for (int i = 0; i < n->n_in; i++) {
            int t = n->in[i];
            if (t < 0) {
                memset(&s->in[i], 0, sizeof s->in[i]);
                continue;
            }
            s->in[i] = (ft_view){arena + p->offset[t], g->tensors[t].dtype, g->tensors[t].shape};
        }
        for (int o = 0; o < n->n_out; o++) {
            int t = n->out[o];
            s->out[o] = (ft_view){arena + p->offset[t], g->tensors[t].dtype, g->tensors[t].shape};
        }
        double a = tm ? ft_now() : 0;
        ft_status st = be->kernels[n->op].fn(kc, n, s->in, s->out);
        if (!st && tm)
            st = be->sync(kc->be, kc->err);
        if (st)
            return st;
        if (tm) {
            double b = ft_now();
            int ni = g->order[k];
            if (tm->r->node_ms)
                tm->r->node_ms[ni] += (b - a) * 1e3;
            if (tm->events)
                tm->r->events[tm->r->n_events++] = (ft_trace_event){ni, tm->run, (a - tm->t0) * 1e3, (b - tm->t0) * 1e3};
        }
    }
    return be->sync(kc->be, kc->err);
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
    scratch s = {ft_calloc((size_t)max_io, sizeof(ft_view)), ft_calloc((size_t)max_io, sizeof(ft_view)), max_io};
    int cap = o->iterations > 0 ? o->iterations : 1;
    r->run_ms = ft_malloc((size_t)cap * sizeof(double));
    r->outputs = ft_calloc((size_t)g->n_outputs, sizeof(void *));
    r->n_outputs = g->n_outputs;
    void *arena = NULL;
    ft_status st = FT_OK;
    if (!s.in || !s.out || !r->run_ms || !r->outputs) {
        st = ft_err(err, FT_ERUNTIME, "out of memory preparing the run");
        goto out;
    }
    if ((st = be->alloc(ctx, (size_t)p->arena_bytes, &arena, err)))
        goto out;
    char *base = arena;
    double t0 = ft_now();
    for (int i = 0; i < g->n_tensors; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (t->value && (st = be->upload(ctx, base + p->offset[i], t->value, ft_tensor_bytes(t), err)))
            goto out;
    }
    if ((st = be->sync(ctx, err)))
        goto out;
    r->h2d_ms = (ft_now() - t0) * 1e3;
    ft_kctx kc = {ctx, g, o->threads > 0 ? o->threads : 1, err};
    double start = ft_now(), last = 0;
    int total = o->warmup + o->iterations;
    size_t ev_cap = 0;
    if (o->profile && !(r->node_ms = ft_calloc((size_t)g->n_nodes, sizeof(double)))) {
        st = ft_err(err, FT_ERUNTIME, "out of memory for the profile");
        goto out;
    }
    for (int w = 0; w < o->warmup; w++) {
        if ((st = run_once(g, p, be, &kc, base, &s, NULL)))
            goto out;
        progress(o, start, &last, w + 1, total);
    }
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
        node_timer tm = {r, it, timed_start, o->trace};
        double a = ft_now();
        if ((st = run_once(g, p, be, &kc, base, &s, (o->profile || o->trace) ? &tm : NULL)))
            goto out;
        double ms = (ft_now() - a) * 1e3;
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
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        size_t nb = ft_tensor_bytes(t);
        r->outputs[i] = ft_malloc(nb);
        if (!r->outputs[i]) {
            st = ft_err(err, FT_ERUNTIME, "out of memory copying output '%s' (%zu bytes)", t->name, nb);
            goto out;
        }
        if ((st = be->download(ctx, r->outputs[i], base + p->offset[g->outputs[i]], nb, err)))
            goto out;
    }
    st = be->sync(ctx, err);
    r->d2h_ms = (ft_now() - t0) * 1e3;
out:
    if (arena)
        be->release(ctx, arena);
    free(s.in);
    free(s.out);
    if (st)
        ft_run_result_free(r);
    return st;
}

void ft_run_result_free(ft_run_result *r)
{
    for (int i = 0; r->outputs && i < r->n_outputs; i++)
        free(r->outputs[i]);
    free(r->outputs);
    free(r->run_ms);
    free(r->node_ms);
    free(r->events);
    memset(r, 0, sizeof *r);
}
