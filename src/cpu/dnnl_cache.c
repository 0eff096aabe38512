/* The per-node oneDNN caches of conv_dnnl.c and matmul_dnnl.c (dnnl_cache.h). */
#include "dnnl_cache.h"
#include "dnnl_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

cpu_dnnl_cache *cpu_dnnl_cache_get(ft_backend_ctx *be, const cpu_dnnl_kind *kind)
{
    struct cpu_dnnl_cache **slot = cpu_dnnl_cache_slot(be, kind->slot), *c = *slot;
    if (!c && (c = ft_calloc(1, kind->size))) {
        *slot = c;
        c->kind = kind;
        c->broken = cpu_dnnl_open(&c->eng, &c->strm);
    }
    return c;
}

/* Frees every entry's state, the work buffers and the kind's own fields
 * (the array stays). */
static void forget(cpu_dnnl_cache *c)
{
    if (c->kind->drop)
        for (int i = 0; i < c->n; i++)
            c->kind->drop(c->e + (size_t)i * c->kind->esz);
    c->n = 0;
    for (int j = 0; j < CPU_DNNL_WORK; j++) {
        free(c->work[j]);
        c->work[j] = NULL, c->work_cap[j] = 0;
    }
    if (c->kind->forget)
        c->kind->forget(c);
}

void *cpu_dnnl_work(cpu_dnnl_cache *c, int j, size_t nb)
{
    if (nb > c->work_cap[j]) {
        void *p = NULL;
        if (posix_memalign(&p, 64, nb) != 0)
            return NULL;
        free(c->work[j]);
        c->work[j] = p, c->work_cap[j] = nb;
    }
    return c->work[j];
}

int cpu_dnnl_cache_begin(cpu_dnnl_cache *c, const ft_kctx *k)
{
    if (cpu_dnnl_cache_current(c, k))
        return 0;
    forget(c);
    c->g = k->g, c->run_id = k->run_id;
    return 1;
}

void cpu_dnnl_cache_free(struct cpu_dnnl_cache *c)
{
    if (!c)
        return;
    forget(c);
    free(c->e);
    if (c->strm)
        dnnl_stream_destroy(c->strm);
    if (c->eng)
        dnnl_engine_destroy(c->eng);
    free(c);
}

void *cpu_dnnl_cache_entry(cpu_dnnl_cache *c, const ft_kctx *k, const ft_node *n, const ft_view *in, int *fresh)
{
    /* one entry per node and thread count: when the count follows the load
     * (ftrun(1), --threads) it moves between a few values, and each keeps
     * its primitives (and its pick, its packed weights) */
    const size_t esz = c->kind->esz;
    cpu_dnnl_key *e = NULL;
    *fresh = 0;
    for (int i = 0; i < c->n && !e; i++) {
        cpu_dnnl_key *x = (cpu_dnnl_key *)(c->e + (size_t)i * esz);
        if (x->node == n && x->threads == k->threads)
            e = x;
    }
    if (e && (e->w == in[1].data || (e->w_released && !in[1].data)) && ft_shape_eq(&e->xs, &in[0].shape))
        return e;
    if (e) {
        if (c->kind->drop)
            c->kind->drop(e);
    } else {
        if (ft_grow(&c->e, &c->cap, c->n, esz, 32))
            return NULL;
        e = (cpu_dnnl_key *)(c->e + (size_t)c->n++ * esz);
    }
    memset(e, 0, esz);
    e->node = n, e->w = in[1].data, e->threads = k->threads, e->xs = in[0].shape;
    e->w_const = cpu_input_is_const(k, n, 1);
    e->pick.choice = -1;
    e->pick.best = -1;
    for (int i = 0; i < CPU_DNNL_FORMS; i++)
        e->pick.t[i] = -1;
    *fresh = 1;
    return e;
}

/* On one thread, the CPU time of the process, not wall time: a run that
 * other processes preempt on a busy machine is not charged for the wait.
 * On more, wall time: CPU time would charge a form that uses every thread
 * as much as one that keeps them waiting, and the pick is about latency. */
static double now_s(int threads)
{
    struct timespec ts;
    clock_gettime(threads > 1 ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

ft_status cpu_dnnl_time(cpu_dnnl_pick *p, int form, double margin, int threads, ft_status (*run)(void *arg, int form),
                        void *arg)
{
    double t = -1, spent = 0;
    /* at least 3 runs, and more (up to 16) until 2 ms went by: a small
     * node's single run is noisy, in wall time above all */
    for (int rep = 0; rep < 3 || (rep < 16 && spent < 2e-3); rep++) {
        double t0 = now_s(threads);
        ft_status s = run(arg, form);
        if (s)
            return s;
        double dt = now_s(threads) - t0;
        spent += dt;
        if (rep > 0 && (t < 0 || dt < t))
            t = dt;
        /* a first run (weights reordered, buffers touched) over ten times
         * the best so far: no need to time it further */
        if (rep == 0 && p->best >= 0 && dt > 10 * p->best) {
            t = dt;
            break;
        }
    }
    p->t[form] = t;
    if (p->best < 0 || t < margin * p->best)
        p->best = t, p->lead = form;
    return FT_OK;
}

void *cpu_dnnl_lookup(const ft_kctx *k, const cpu_dnnl_kind *kind, const ft_node *n, const ft_view *in,
                      int need_engine, cpu_dnnl_cache **c, int *fresh)
{
    /* a new run (ft_kctx.run_id): a graph loaded after another may reuse its
     * node and weight addresses, so nothing cached is kept */
    *c = cpu_dnnl_cache_get(k->be, kind);
    if (!*c || (need_engine && (*c)->broken))
        return NULL;
    cpu_dnnl_cache_begin(*c, k);
    return cpu_dnnl_cache_entry(*c, k, n, in, fresh);
}
