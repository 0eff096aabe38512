/* The one pipeline (pipeline.h): load -> validate -> optimize -> plan ->
 * bind -> run, in that order, for every caller. */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Validates and optimizes the graph just loaded into p; on failure p is freed. */
static ft_status finish_load(ft_pipeline *p, const ft_pipeline_opts *o, double t0, ft_error *err)
{
    const char *step = "validate";
    ft_status st = ft_graph_validate(p->g, err);
    if (!st) {
        step = "optimize";
        st = ft_graph_optimize(p->g, o->opt_level, &p->opt, err);
    }
    if (st) {
        ft_pipeline_free(p);
        p->failed = step;
        return st;
    }
    p->unshared = o->unshared;
    p->load_ms = (ft_now() - t0) * 1e3;
    return FT_OK;
}

/* The load's options: o->load with o->inputs as its shape bindings. */
static ft_load_opts load_opts(const ft_pipeline_opts *o)
{
    ft_load_opts lo = o->load;
    if (o->inputs)
        ft_values_load_opts(o->inputs, &lo);
    return lo;
}

ft_status ft_pipeline_load(ft_pipeline *p, const char *path, const ft_pipeline_opts *o, ft_error *err)
{
    memset(p, 0, sizeof *p);
    double t0 = ft_now();
    ft_load_opts lo = load_opts(o);
    ft_status st = ft_graph_load(path, &lo, &p->g, err);
    if (st) {
        p->failed = "read";
        return st;
    }
    p->own_graph = 1;
    return finish_load(p, o, t0, err);
}

ft_status ft_pipeline_load_mem(ft_pipeline *p, const char *name, const void *bytes, size_t n, const ft_pipeline_opts *o,
                               ft_error *err)
{
    memset(p, 0, sizeof *p);
    double t0 = ft_now();
    ft_load_opts lo = load_opts(o);
    ft_status st = ft_graph_load_mem(name, bytes, n, &lo, &p->g, err);
    if (st) {
        p->failed = "read";
        return st;
    }
    p->own_graph = 1;
    return finish_load(p, o, t0, err);
}

ft_status ft_pipeline_take(ft_pipeline *p, ft_graph *g, const ft_pipeline_opts *o, ft_error *err)
{
    memset(p, 0, sizeof *p);
    p->g = g;
    p->own_graph = 1;
    return finish_load(p, o, ft_now(), err);
}

void ft_pipeline_adopt(ft_pipeline *p, const ft_graph *g, int unshared)
{
    memset(p, 0, sizeof *p);
    p->g = (ft_graph *)g; /* planned and run only, both of which read it (own_graph 0) */
    p->unshared = unshared;
}

ft_status ft_pipeline_plan(ft_pipeline *p, const ft_backend *be, const ft_backend *fallback, ft_error *err)
{
    double t0 = ft_now();
    ft_status st = be ? ft_exec_check(p->g, be, fallback, err) : FT_OK;
    if (!st)
        st = p->unshared ? ft_plan_build_unshared(p->g, &p->plan, err) : ft_plan_build(p->g, &p->plan, err);
    if (st) {
        p->failed = "plan";
        return st;
    }
    p->planned = 1;
    p->be = be;
    p->fallback = fallback;
    p->plan_ms = (ft_now() - t0) * 1e3;
    return FT_OK;
}

ft_status ft_pipeline_open(ft_pipeline *p, const ft_backend_opts *bo, ft_error *err)
{
    if (!p->planned)
        return ft_err(err, FT_ERUNTIME, "%s: internal error: the graph is bound to a device before it is planned",
                      p->g ? p->g->file : "(no graph)");
    ft_status st = p->be->open(bo, &p->ctx, err);
    if (st) {
        p->ctx = NULL;
        p->failed = "open";
        return st;
    }
    p->own_ctx = 1;
    if (p->fallback && (st = p->fallback->open(bo, &p->fallback_ctx, err))) {
        p->fallback_ctx = NULL;
        p->failed = "open";
    }
    return st;
}

void ft_pipeline_use(ft_pipeline *p, ft_backend_ctx *ctx)
{
    p->ctx = ctx;
    p->own_ctx = 0;
}

/* ft_exec_opts.release for a pipeline that owns its graph: constant t's value
 * freed (or, in the file's mapping, its whole pages handed back) when its
 * one reader is the kernel offering it and it is no graph output. */
static int release_value(void *owner, int t)
{
    ft_pipeline *p = owner;
    ft_graph *g = p->g;
    if (t < 0 || t >= g->n_tensors)
        return 0;
    ft_tensor *x = &g->tensors[t];
    if (!x->value || x->producer >= 0 || !(x->flags & FT_TF_VALUE) || (x->flags & FT_TF_INPUT) || x->n_readers != 1)
        return 0;
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == t)
            return 0;
    size_t bytes = ft_tensor_bytes(x);
    if (x->borrowed) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)x->value, e = a + bytes;
        uintptr_t a0 = (a + page - 1) / page * page, e0 = e / page * page;
        if (e0 > a0)
            (void)madvise((void *)a0, e0 - a0, MADV_DONTNEED);
    } else {
        free(x->value);
    }
    x->value = NULL;
    x->value_bytes = 0;
    p->n_released++;
    p->released_bytes += bytes;
    return 1;
}

ft_status ft_pipeline_run(ft_pipeline *p, const ft_exec_opts *eo, ft_run_result *r, ft_error *err)
{
    if (!p->planned || !p->ctx)
        return ft_err(err, FT_ERUNTIME, "%s: internal error: the graph runs before it is planned and bound",
                      p->g ? p->g->file : "(no graph)");
    ft_exec_opts o = *eo;
    o.fallback = p->fallback;
    o.fallback_ctx = p->fallback_ctx;
    o.keep_tensors = o.keep_tensors || p->unshared;
    if (o.release_values && p->own_graph)
        o.release = release_value, o.release_owner = p;
    ft_status st = ft_exec_run(p->g, &p->plan, p->be, p->ctx, &o, r, err);
    if (st)
        p->failed = "run";
    return st;
}

void ft_pipeline_free(ft_pipeline *p)
{
    if (p->ctx && p->own_ctx)
        p->be->close(p->ctx);
    if (p->fallback_ctx)
        p->fallback->close(p->fallback_ctx);
    if (p->planned)
        ft_plan_free(&p->plan);
    if (p->own_graph)
        ft_graph_free(p->g);
    memset(p, 0, sizeof *p);
}
