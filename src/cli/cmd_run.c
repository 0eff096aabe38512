/* `ftrun run GRAPH`: the pipeline from the file to result files, timings,
 * and the checks a run can make (--expect, --check, --check-nodes). */
#include <errno.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/npy.h"
#include "../io/npz.h"
#include "../runtime/threads.h"
#include "check.h"
#include "cli.h"
#include "cliutil.h"
#include "outfile.h"
#include "profile.h"
#include "report.h"
#include "show.h"
#include "expect.h"
#include "tuning_file.h"
#include "../pipeline/arrays.h"

/* Output file names must be distinct after sanitising. */
static ft_status check_output_names(const ft_graph *g, ft_error *err)
{
    for (int i = 0; i < g->n_outputs; i++)
        for (int j = 0; j < i; j++) {
            char a[512], b[512];
            ft_sanitize_name(g->tensors[g->outputs[i]].name, a, sizeof a);
            ft_sanitize_name(g->tensors[g->outputs[j]].name, b, sizeof b);
            if (!strcmp(a, b))
                return ft_err(err, FT_EGRAPH, "%s: outputs '%s' and '%s' would both be written to %s.npy", g->file,
                              g->tensors[g->outputs[j]].name, g->tensors[g->outputs[i]].name, a);
        }
    return FT_OK;
}

static int check_expect(const ft_cli *c, const ft_graph *g, const ft_run_result *r, const ft_npy *exp)
{
    int bad = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_tol tol = cli_tol(c, t->dtype);
        ft_cmp cm;
        ft_compare_shaped(r->outputs[i], &r->output_shapes[i], exp[i].data, &exp[i].shape, t->dtype, tol, &cm);
        bad |= cm.n_bad != 0;
        if (cm.n_bad || c->verbose) {
            char prefix[600];
            snprintf(prefix, sizeof prefix, "%s: expect: output '%s'", ft_prog, t->name);
            ft_report_cmp(stderr, prefix, &cm, t->dtype, &exp[i].shape, tol);
        }
    }
    if (!bad && !c->quiet)
        fprintf(stderr, "%s: expect: %d output%s %s\n", ft_prog, g->n_outputs, g->n_outputs == 1 ? " matches" : "s match", c->expect);
    return bad ? FT_EMISMATCH : FT_OK;
}

/* The first signal asks the run to stop between nodes (exec.c reads
 * ft_stop_signal); main then prints the one line. Another within half a
 * second is the same request: `timeout` signals the process and then its
 * group, and a terminal's ^C reaches every process of the job. A later one
 * ends ftrun at once, from here: the temporary files in flight removed, the
 * line printed unless main has printed it (ft_stop_reported). */
static struct timespec first_signal;

static void on_stop_signal(int sig)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!ft_stop_signal) {
        first_signal = now;
        ft_stop_signal = sig;
        return;
    }
    double since = (double)(now.tv_sec - first_signal.tv_sec) + (now.tv_nsec - first_signal.tv_nsec) * 1e-9;
    if (since < 0.5)
        return;
    ft_outfile_remove_live();
    if (!__atomic_exchange_n(&ft_stop_reported, 1, __ATOMIC_SEQ_CST)) {
        static const char a[] = "ftrun: interrupted by SIGINT (twice: stopped at once); no results written\n";
        static const char b[] = "ftrun: interrupted by SIGTERM (twice: stopped at once); no results written\n";
        ssize_t w = ft_stop_signal == SIGINT ? write(2, a, sizeof a - 1) : write(2, b, sizeof b - 1);
        (void)w;
    }
    _exit(128 + ft_stop_signal);
}

/* During `run`, SIGINT and SIGTERM stop the work between nodes and remove any
 * result file in flight; a second signal (half a second or more after the
 * first) ends ftrun at once. The other commands keep the default action:
 * their files appear by rename only. */
static void catch_stop_signals(void)
{
    /* The handler runs on its own stack: with it on the thread's stack, a
     * signal arriving inside one of oneDNN's JIT matrix kernels (cpu/blas.c)
     * made ftrun abort at exit (free(): invalid pointer in oneDNN's exit
     * handlers, every time on one thread); valgrind sees those kernels read
     * below the stack pointer, which the signal frame overwrites. */
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Every place a run writes to, checked before it runs: the folder, each
 * result file in it, the trace. */
static ft_status check_run_outputs(const ft_cli *c, const ft_graph *g, const char *dir, ft_error *err)
{
    int pb = c->format && !strcmp(c->format, "pb"), npy = !c->format || !strcmp(c->format, "npy") || pb, n = 0;
    char(*names)[600] = ft_calloc((size_t)g->n_outputs + 2, sizeof *names);
    const char **list = ft_calloc((size_t)g->n_outputs + 2, sizeof *list);
    ft_status st = !names || !list ? ft_err(err, FT_ERUNTIME, "out of memory") : FT_OK;
    for (int i = 0; i < g->n_outputs && npy && !st; i++) {
        ft_sanitize_name(g->tensors[g->outputs[i]].name, names[n], sizeof names[n] - 8);
        strcat(names[n++], pb ? ".pb" : ".npy");
    }
    if (!st && c->format && !strcmp(c->format, "npz"))
        strcpy(names[n++], "outputs.npz");
    if (!st)
        strcpy(names[n++], "timing.json");
    for (int i = 0; i < n; i++)
        list[i] = names[i];
    if (!st)
        st = ft_outdir_check(dir, list, n, err);
    if (!st && c->trace && (st = ft_outfile_check(c->trace, FT_OUT_DASH, err)))
        ft_err_prefix(err, "--trace");
    free(names);
    free(list);
    return st;
}

int ft_cmd_run(const ft_cli *c)
{
    catch_stop_signals();
    ft_error err = {0};
    const ft_backend *be;
    char devname[32];
    int devidx = 0;
    int rc = pick_device(c->device, 1, c->quiet, &be, &devidx, devname, sizeof devname);
    if (rc)
        return rc;
    /* On the CPU there is nothing to fall back from. */
    const ft_backend *fb = c->fallback_cpu && be != &ft_cpu_backend ? &ft_cpu_backend : NULL;
    if (c->threads > 0)
        omp_set_num_threads((int)c->threads); /* loading (CRC, inflate) uses threads too */
    double t0 = ft_now();
    ft_pipeline p = {0}, p0 = {0}; /* p0: the graph as read, for --check=O0 */
    ft_graph *g = NULL;
    ft_run_result res = {0};
    ft_outset outs = {0};
    ft_npy *exp = NULL;
    char *timing = NULL;
    ft_tuning *tune = NULL;
    int tune_fresh = 0;
    if (cli_load(c, c->opt_level, &p, &err) || ft_bind_apply(c->bind, (g = p.g), 1, &err) || check_output_names(g, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    p.unshared = c->check_nodes; /* every tensor kept for the node-by-node check */
    if (c->check_o0 && (cli_load(c, 0, &p0, &err) || ft_check_copy_inputs(p0.g, g, &err))) {
        ft_err_prefix(&err, "--check=O0: the graph as read");
        rc = cli_fail(&err);
        goto out;
    }
    double load_ms = (ft_now() - t0) * 1e3;
    if (ft_pipeline_plan(&p, be, fb, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    int n_fallback = 0;
    for (int k = 0; fb && k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        ft_dtype dt = g->tensors[n->in[0]].dtype;
        if (ft_backend_runs(be, g, n))
            continue;
        n_fallback++;
        if (!c->quiet)
            fprintf(stderr, "%s: warning: node '%s' (%s, %s) runs on the cpu: %s lacks it (--fallback cpu)\n", ft_prog, n->name,
                    ft_op_name(n->op), ft_dtype_name(dt), devname);
    }
    const ft_plan plan = p.plan;
    double plan_ms = p.plan_ms;
    if (c->verbose)
        fprintf(stderr, "%s: %s: loaded %d nodes, %d tensors in %.3f ms; plan: arena %llu bytes (unplanned %llu) in %.3f ms\n",
                ft_prog, g->file, g->n_nodes, g->n_tensors, load_ms, (unsigned long long)plan.arena_bytes,
                (unsigned long long)plan.unplanned_bytes, plan_ms);
    if (c->expect) {
        exp = ft_calloc((size_t)g->n_outputs, sizeof *exp);
        if (!exp) {
            rc = cli_fail(&(ft_error){FT_ERUNTIME, "out of memory"});
            goto out;
        }
        /* loaded before running, so that a bad path fails fast */
        if (ft_expect_load(g, &(ft_expect_src){.path = c->expect}, exp, &err)) {
            ft_err_prefix(&err, "--expect");
            rc = cli_fail(&err);
            goto out;
        }
    }
    if (c->dry_run) {
        char dyn[600];
        if (!c->quiet && ft_graph_dynamic_str(g, dyn, sizeof dyn))
            fprintf(stderr, "%s: %s: run-time shapes: %s; their memory is given at run time, outside the arena\n", ft_prog,
                    g->name, dyn);
        if (!c->quiet && ft_graph_guards_str(g, dyn, sizeof dyn))
            fprintf(stderr, "%s: %s: guarded nodes: %d, run only when their guard is true: %s\n", ft_prog, g->name,
                    ft_graph_guarded(g), dyn);
        int nl = ft_graph_loops_str(g, dyn, sizeof dyn);
        if (!c->quiet && nl)
            fprintf(stderr, "%s: %s: run-time loops: %d, their bodies run again while their condition holds: %s\n",
                    ft_prog, g->name, nl, dyn);
        if (!c->quiet)
            fprintf(stderr, "%s: %s: valid; %d nodes on %s; planned arena %llu bytes (unplanned %llu); nothing run (--dry-run)\n",
                    ft_prog, g->name, g->n_nodes, devname, (unsigned long long)plan.arena_bytes,
                    (unsigned long long)plan.unplanned_bytes);
        rc = 0;
        goto out;
    }
    const char *dir = c->outdir ? c->outdir : "ftrun-out";
    if (check_run_outputs(c, g, dir, &err) || /* before anything runs */
        (c->tuning_cache && cli_tuning_load(c->tuning_cache, c->quiet, &tune, &tune_fresh, &err))) {
        rc = cli_fail(&err);
        goto out;
    }
    ft_backend_opts bo = {.device_index = devidx, .threads = (int)c->threads, .allow_tf32 = c->allow_tf32, .tuning = tune};
    if (ft_pipeline_open(&p, &bo, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    long cores = ft_usable_cores();
    if (c->threads > cores && !c->quiet)
        fprintf(stderr, "%s: warning: --threads %ld is more than the %ld core%s of this machine: the threads share them, "
                        "which slows the run and its timings\n", ft_prog, c->threads, cores, cores == 1 ? "" : "s");
    if (c->cuda_graph && be->capture && n_fallback && !c->quiet)
        fprintf(stderr, "%s: warning: --cuda-graph is not used: %d node%s run on the cpu (--fallback cpu)\n", ft_prog, n_fallback,
                n_fallback == 1 ? "" : "s");
    else if (c->cuda_graph && be->capture && (c->profile || c->trace) && !c->quiet)
        fprintf(stderr, "%s: warning: --cuda-graph is not used with --%s (per-node times need a sync after every node)\n",
                ft_prog, c->profile ? "profile" : "trace");
    for (int k = 0; k < 2 && !c->quiet && be == &ft_cpu_backend; k++)
        if (c->device_only[k])
            fprintf(stderr, "%s: warning: --%s applies to CUDA devices; running on %s without it\n", ft_prog, c->device_only[k],
                    devname);
    /* Neither -n, -w nor --duration: warm up for a fifth of the default
     * duration, then time runs for the whole of it (numbers worth quoting).
     * Without -w there are at least 2 warm-up runs: the first pays for
     * one-time work (memory, JIT kernels, FFT plans), the second for the CPU
     * convs' choice of form (FTRUN_CONV_IMPL), which times each form on a
     * node's second run; FTRUN_DEFAULT_DURATION=0 alone is one cold run. */
    double dflt = c->given & (OB_ITER | OB_WARMUP | OB_DURATION) ? 0 : c->default_duration;
    int warmup = c->given & OB_WARMUP ? (int)c->warmup : dflt > 0 || (c->given & (OB_ITER | OB_DURATION)) ? 2 : 0;
    ft_exec_opts eo = {
        .warmup = warmup,
        .warmup_s = dflt / 5,
        .iterations = (int)(c->iterations ? c->iterations : 1),
        .duration_s = dflt > 0 ? dflt : c->duration,
        .threads = c->threads > 0 ? (int)c->threads : (cores > 0 ? (int)cores : 1),
        .follow_load = c->threads == 0, /* no --threads: the idle cores (src/runtime/threads.h) */
        .progress = !c->quiet && isatty(2),
        .profile = c->profile,
        .trace = c->trace != NULL,
        .cuda_graph = c->cuda_graph,
        .loop_limit = c->loop_limit,
        /* the packed copies of constants replace them (ft_pipeline_run),
         * unless --check's reference run reads the graph after this one */
        .release_values = !c->check && !c->check_nodes,
    };
    if (ft_pipeline_run(&p, &eo, &res, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    if (c->verbose && p.n_released)
        fprintf(stderr, "%s: %d constant%s (%.1f MB) freed after the kernels packed them into copies of their own\n",
                ft_prog, p.n_released, p.n_released == 1 ? "" : "s", (double)p.released_bytes / 1e6);
    if (ft_mkdirs(dir, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    int write_pb = c->format && !strcmp(c->format, "pb");
    int write_npy = !c->format || !strcmp(c->format, "npy") || write_pb; /* one file per output */
    if (c->format && !strcmp(c->format, "npz")) {
        ft_npz_item *items = ft_calloc((size_t)g->n_outputs, sizeof *items);
        char(*names)[600] = ft_calloc((size_t)g->n_outputs, sizeof *names);
        ft_status st = !items || !names ? ft_err(&err, FT_ERUNTIME, "out of memory") : FT_OK;
        for (int i = 0; i < g->n_outputs && !st; i++) {
            const ft_tensor *t = &g->tensors[g->outputs[i]];
            ft_sanitize_name(t->name, names[i], sizeof names[i]);
            items[i] = (ft_npz_item){names[i], t->dtype, &res.output_shapes[i], res.outputs[i]};
        }
        if (!st)
            st = ft_outset_npz(&outs, dir, "outputs.npz", items, g->n_outputs, &err);
        free(items);
        free(names);
        if (st) {
            ft_outset_abort(&outs);
            rc = cli_fail(&err);
            goto out;
        }
    }
    for (int i = 0; i < g->n_outputs && write_npy; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600];
        ft_sanitize_name(t->name, fname, sizeof fname - 8);
        strcat(fname, write_pb ? ".pb" : ".npy");
        const ft_shape *os = &res.output_shapes[i];
        if (write_pb ? ft_outset_pb(&outs, dir, fname, t->name, t->dtype, os, res.outputs[i], &err)
                     : ft_outset_npy(&outs, dir, fname, t->dtype, os, res.outputs[i], &err)) {
            ft_outset_abort(&outs);
            rc = cli_fail(&err);
            goto out;
        }
    }
    /* --check and --check-nodes before the results are committed: a check
     * that cannot be made (out of memory) leaves no result file behind */
    int check_bad = 0;
    if (c->check) {
        ft_check_opts co = {ft_prog, devname, stderr, eo.threads, c->quiet, c->verbose, c->have_rtol, c->have_atol, c->rtol, c->atol,
                            p0.g ? "cpu -O0" : "cpu"};
        int bad1 = 0, bad2 = 0;
        if (ft_check_outputs(p0.g ? p0.g : g, &res, &co, &bad1, &err) || (c->check_nodes && ft_check_nodes(g, &res, &co, &bad2, &err))) {
            ft_outset_abort(&outs);
            rc = cli_fail(&err);
            goto out;
        }
        check_bad = bad1 || bad2;
    }
    ft_timing_info ti = {devname, be->describe(p.ctx), res.n_warmup, eo.iterations, load_ms, plan_ms, c->bind->random, c->bind->seed};
    timing = ft_timing_json(g, &plan, &res, &ti);
    /* the trace first, under a temporary name: if it cannot be written, no
     * result file appears either; it is renamed once the results are */
    ft_outfile tr = {0};
    if (c->trace && (ft_outfile_open(&tr, c->trace, FT_OUT_DASH, &err) || ft_trace_write(tr.f, c->trace, g, &res, devname, &err) ||
                     ft_outfile_close(&tr, &err))) {
        ft_outfile_abort(&tr);
        ft_outset_abort(&outs);
        rc = cli_fail(&err);
        goto out;
    }
    if (!timing || ft_outset_text(&outs, dir, "timing.json", timing, &err) || ft_outset_commit(&outs, &err) ||
        (c->trace && ft_outfile_commit(&tr, &err))) {
        if (!timing)
            err = (ft_error){FT_ERUNTIME, "out of memory writing timing.json"};
        ft_outset_abort(&outs);
        ft_outfile_abort(&tr);
        rc = cli_fail(&err);
        goto out;
    }
    if (tune && cli_tuning_save(c->tuning_cache, tune, tune_fresh, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    if (c->profile && !c->quiet)
        ft_profile_print(stderr, g, &plan, &res);
    if (!c->quiet && res.n_runs >= 2)
        ft_timing_warnings(stderr, &res, (be != &ft_cpu_backend ? FT_WARN_TRANSFERS : 0) |
                                             ((c->given & OB_ITER) && !c->duration ? FT_WARN_FEW_RUNS : 0));
    if (!c->quiet)
        ft_print_summary(stderr, g, devname, &res, dir, write_npy || (c->format && !strcmp(c->format, "npz")));
    for (int i = 0; i < g->n_outputs && c->print; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_show_array(stdout, t->name, t->dtype, &res.output_shapes[i], res.outputs[i]);
    }
    if (c->print && cli_stdout_status(0)) {
        rc = FT_ERUNTIME;
        goto out;
    }
    rc = exp ? check_expect(c, g, &res, exp) : 0;
    if (check_bad && !rc)
        rc = FT_EMISMATCH;
out:
    if (exp)
        for (int i = 0; i < g->n_outputs; i++)
            ft_npy_clear(&exp[i]);
    free(exp);
    free(timing);
    ft_run_result_free(&res);
    ft_pipeline_free(&p);
    ft_pipeline_free(&p0);
    ft_tuning_free(tune); /* after the contexts it was lent to are closed */
    return rc;
}
