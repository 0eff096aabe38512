/* --check and --check-nodes: the run's results against the CPU reference. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "../graph/cost.h"
#include "../pipeline/pipeline.h"

#include <float.h>
#include <math.h>

static ft_tol tol_for(const ft_check_opts *o, ft_dtype dt)
{
    return ft_tol_choose(dt, o->have_rtol, o->rtol, o->have_atol, o->atol);
}

/* --check-nodes without --atol: a node whose outputs each sum K terms
 * (K = its FLOPs per output element, e.g. 2 x the inner size of a matrix
 * product, about 5 log2 N for an FFT of length N) gets atol raised to
 * eps(dtype) x sqrt(K) x the largest |value| of the CPU's output: the
 * rounding of a sum grows with the number and size of its terms, so an
 * output that cancels to near 0 (a quiet FFT bin) can differ by that much
 * between two correct backends (where that is above the default atol,
 * scaled by the same largest value). Other nodes keep the dtype's default. */
static ft_tol node_tol(const ft_check_opts *o, const ft_graph *g, const ft_node *n, const ft_tensor *t, const void *ref)
{
    ft_tol tol = tol_for(o, t->dtype);
    uint64_t ne = 0;
    if (o->have_atol || !ft_dtype_is_float(t->dtype) || ft_shape_numel(&t->shape, &ne) || ne == 0)
        return tol;
    uint64_t flops = 0, bytes = 0;
    ft_node_cost(g, n, &flops, &bytes);
    double k = (double)flops / (double)ne;
    if (k <= 2.0)
        return tol;
    double mag = 0;
    for (uint64_t i = 0; i < ne; i++) {
        double v = fabs(ft_load_f64(ref, t->dtype, i));
        if (isfinite(v) && v > mag)
            mag = v;
    }
    double eps = t->dtype == FT_F64 ? DBL_EPSILON : t->dtype == FT_F32 ? FLT_EPSILON : t->dtype == FT_F16 ? 0x1p-10 : 0x1p-7;
    double a = eps * sqrt(k) * mag;
    if (a > tol.atol * (mag > 1 ? mag : 1)) { /* above the default's own scaled atol */
        tol.atol = a;
        tol.scaled = 0;
    }
    return tol;
}

/* --check=O0: the graph as read (g0) gets the values of the run's inputs
 * (from -i files, --random-inputs or the file itself) by name. The optimizer
 * keeps every input and output of a graph, so both graphs list the same. */
ft_status ft_check_copy_inputs(ft_graph *g0, const ft_graph *g, ft_error *err)
{
    for (int i = 0; i < g0->n_inputs; i++) {
        ft_tensor *t0 = &g0->tensors[g0->inputs[i]];
        int t = ft_graph_find(g, t0->name);
        const ft_tensor *src = t >= 0 ? &g->tensors[t] : NULL;
        if (!src || !src->value || src->dtype != t0->dtype || !ft_shape_eq(&src->shape, &t0->shape))
            continue; /* as the run's own check reports it */
        size_t bytes = ft_tensor_bytes(src);
        void *v = ft_malloc(bytes ? bytes : 1);
        if (!v)
            return ft_err(err, FT_ERUNTIME, "input '%s': out of memory copying %zu bytes", t0->name, bytes);
        memcpy(v, src->value, bytes);
        ft_tensor_set_value(t0, v, bytes);
        t0->source = src->source;
    }
    return FT_OK;
}

ft_status ft_check_outputs(const ft_graph *g, const ft_run_result *r, const ft_check_opts *o, int *mismatch, ft_error *err)
{
    *mismatch = 0;
    ft_backend_opts bo = {.threads = o->threads};
    ft_pipeline p;
    ft_run_result ref = {0};
    ft_exec_opts eo = {.warmup = 0, .iterations = 1, .threads = o->threads > 0 ? o->threads : 1};
    ft_pipeline_adopt(&p, g, 0); /* the run's graph, or the graph as read (--check=O0) */
    ft_status st = ft_pipeline_plan(&p, &ft_cpu_backend, NULL, err);
    if (!st)
        st = ft_pipeline_open(&p, &bo, err);
    if (!st)
        st = ft_pipeline_run(&p, &eo, &ref, err);
    if (st) {
        ft_err_prefix(err, "--check: the cpu reference run failed");
        goto out;
    }
    int bad = 0;
    const char *against = o->ref ? o->ref : "cpu";
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_tol tol = tol_for(o, t->dtype);
        ft_cmp cm;
        ft_compare_shaped(r->outputs[i], &r->output_shapes[i], ref.outputs[i], &ref.output_shapes[i], t->dtype, tol, &cm);
        bad += cm.n_bad != 0;
        if (cm.n_bad || o->verbose) {
            char prefix[700];
            snprintf(prefix, sizeof prefix, "%s: check: output '%s' on %s against %s", o->prog, t->name, o->device,
                     against);
            ft_report_cmp(o->out, prefix, &cm, t->dtype, &ref.output_shapes[i], tol);
        }
    }
    if (!bad && !o->quiet)
        fprintf(o->out, "%s: check: %d output%s on %s match the %s reference\n", o->prog, g->n_outputs,
                g->n_outputs == 1 ? "" : "s", o->device, against);
    else if (bad)
        fprintf(o->out, "%s: check: %d of %d output%s on %s differ from the %s reference\n", o->prog, bad, g->n_outputs,
                g->n_outputs == 1 ? "" : "s", o->device, against);
    *mismatch = bad != 0;
out:
    ft_run_result_free(&ref);
    ft_pipeline_free(&p);
    return st;
}

ft_status ft_check_nodes(const ft_graph *g, const ft_run_result *r, const ft_check_opts *o, int *mismatch, ft_error *err)
{
    *mismatch = 0;
    if (!r->tensors)
        return ft_err(err, FT_ERUNTIME, "--check-nodes: the run kept no tensors");
    ft_backend_opts bo = {.threads = o->threads};
    ft_backend_ctx *ctx = NULL;
    ft_status st = ft_cpu_backend.open(&bo, &ctx, err);
    if (st)
        return st;
    int max_io = 1;
    for (int k = 0; k < g->n_nodes; k++) {
        if (g->nodes[k].n_in > max_io) max_io = g->nodes[k].n_in;
        if (g->nodes[k].n_out > max_io) max_io = g->nodes[k].n_out;
    }
    ft_view *in = ft_calloc((size_t)max_io, sizeof *in), *out = ft_calloc((size_t)max_io, sizeof *out);
    /* Shapes known only at run time: the run's (r->tensor_shapes); a
     * dynamic node is inferred again with them, on a copy of the tables */
    ft_graph wg = *g;
    ft_tensor *wt = ft_malloc((size_t)g->n_tensors * sizeof *wt + 1);
    ft_node *wn = ft_malloc((size_t)g->n_nodes * sizeof *wn + 1);
    if (wt && wn) {
        memcpy(wt, g->tensors, (size_t)g->n_tensors * sizeof *wt);
        memcpy(wn, g->nodes, (size_t)g->n_nodes * sizeof *wn);
        for (int i = 0; i < g->n_tensors; i++)
            wt[i].shape = r->tensor_shapes[i];
        wg.tensors = wt;
        wg.nodes = wn;
        wg.run_shapes = 1;
    }
    if (!in || !out || !wt || !wn) {
        st = ft_err(err, FT_ERUNTIME, "out of memory for --check-nodes");
        goto done;
    }
    uint64_t run_id = ft_exec_new_run_id();
    int n_bad = 0, first = -1;
    /* Each node is recomputed on the CPU from the inputs the device saw, so a
     * divergence is the node's own, not drift carried from earlier nodes. */
    int in_empty_loop = 0;
    for (int k = 0; k < g->n_nodes && !st; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        int gt = ft_node_guard(n);
        if (gt >= 0 && !*(const uint8_t *)r->tensors[gt]) /* the run skipped it: nothing to compare */
            continue;
        /* a run-time loop's two nodes are the executor's own, with no kernel;
         * its body is checked on the last iteration's values (the condition
         * the body read is false only when no iteration ran: then nothing is) */
        if (n->op == FT_OP_LOOP_BEGIN || n->op == FT_OP_LOOP_END) {
            in_empty_loop = n->op == FT_OP_LOOP_BEGIN && !*(const uint8_t *)r->tensors[n->out[1]];
            continue;
        }
        if (in_empty_loop)
            continue;
        if (ft_node_dynamic(g, n)) {
            if ((st = ft_node_infer(&wg, &wn[g->order[k]], err)))
                break;
            n = &wn[g->order[k]];
        }
        for (int i = 0; i < n->n_in; i++) {
            int t = n->in[i];
            in[i] = t < 0 ? (ft_view){0} : (ft_view){r->tensors[t], g->tensors[t].dtype, r->tensor_shapes[t]};
        }
        for (int i = 0; i < n->n_out && !st; i++) {
            const ft_tensor *t = &wt[n->out[i]]; /* a data-dependent op's: its bound */
            size_t nb = ft_tensor_bytes(t);
            out[i] = (ft_view){ft_malloc(nb ? nb : 1), t->dtype, t->shape};
            if (!out[i].data)
                st = ft_node_err(err, FT_ERUNTIME, g, n, "out of memory recomputing output '%s' (%zu bytes)", t->name, nb);
        }
        if (!st)
            st = ft_exec_node(&wg, n, &ft_cpu_backend, ctx, o->threads, run_id, in, out, err);
        int node_bad = 0;
        for (int i = 0; i < n->n_out && !st; i++) {
            const ft_tensor *t = &wt[n->out[i]];
            wt[n->out[i]].shape = r->tensor_shapes[n->out[i]]; /* what the nodes after it read */
            ft_tol tol = node_tol(o, &wg, n, t, out[i].data);
            ft_cmp cm;
            ft_compare_shaped(r->tensors[n->out[i]], &r->tensor_shapes[n->out[i]], out[i].data, &out[i].shape, t->dtype,
                              tol, &cm);
            if (cm.n_bad && !node_bad && (first < 0 || o->verbose)) {
                char prefix[900];
                snprintf(prefix, sizeof prefix, "%s: check-nodes: %s node '%s' (%s) output '%s' on %s against cpu", o->prog,
                         first < 0 ? "first divergence at" : "also", n->name, ft_op_name(n->op), t->name, o->device);
                ft_report_cmp(o->out, prefix, &cm, t->dtype, &out[i].shape, tol);
            }
            node_bad |= cm.n_bad != 0;
        }
        for (int i = 0; i < n->n_out; i++) {
            free(out[i].data);
            out[i].data = NULL;
        }
        if (node_bad) {
            n_bad++;
            if (first < 0)
                first = k;
        }
    }
    if (st) {
        ft_err_prefix(err, "--check-nodes: the cpu reference failed");
    } else if (n_bad) {
        fprintf(o->out, "%s: check-nodes: %d of %d node%s on %s differ from the cpu reference given the same inputs\n", o->prog,
                n_bad, g->n_nodes, g->n_nodes == 1 ? "" : "s", o->device);
        *mismatch = 1;
    } else if (!o->quiet) {
        fprintf(o->out, "%s: check-nodes: all %d node%s on %s match the cpu reference given the same inputs\n", o->prog,
                g->n_nodes, g->n_nodes == 1 ? "" : "s", o->device);
    }
done:
    free(in);
    free(out);
    free(wt);
    free(wn);
    ft_cpu_backend.close(ctx);
    return st;
}
