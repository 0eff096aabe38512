/* ftrun command line: parses options, runs the commands, prints reports.
 * Knows nothing of kernels: it drives graph -> plan -> executor -> files. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../graph/npy.h"
#include "../runtime/compare.h"
#include "report.h"

typedef struct {
    const char *name, *file;
} input_arg;

typedef struct {
    const char *command;
    const char *graph;
    const char *device;
    const char *outdir;
    const char *format;
    const char *expect;
    input_arg *inputs;
    int n_inputs;
    long warmup, iterations, threads;
    double duration;
    long long seed;
    double rtol, atol;
    int have_rtol, have_atol;
    int dry_run, quiet, verbose;
    int run_only_given; /* an option that only `run` takes */
    const char *run_only_name;
} cli;

static const char *prog = "ftrun";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: ftrun [run] GRAPH [OPTIONS]   run a graph (the default command)\n"
            "       ftrun info GRAPH              inputs, outputs, nodes with shapes, FLOPs, bytes, memory plan\n"
            "       ftrun ops [--device DEV]      every op with the dtypes each backend implements\n"
            "       ftrun devices                 the devices this machine offers\n"
            "\n"
            "Options of run:\n"
            "  -d, --device DEV        cpu, cuda, cuda:N or auto (default: auto = cuda:0 if usable, else cpu)\n"
            "  -i, --input NAME=FILE   value of input NAME from a .npy file (repeatable)\n"
            "  -o, --output-dir DIR    where results go (default ftrun-out)\n"
            "      --format FMT        npy (one .npy per output, default) or none (no result files)\n"
            "  -w, --warmup N          untimed runs first (default 0)\n"
            "  -n, --iterations N      timed runs (default 1)\n"
            "      --duration SEC      keep running timed iterations until SEC seconds have passed (at least -n)\n"
            "      --expect FILE|DIR   compare outputs to golden values (.npy file or folder of .npy)\n"
            "      --rtol R, --atol A  tolerances: pass when |x-y| <= atol + rtol*|y| (defaults per dtype)\n"
            "      --seed N            replace the seed of every random init\n"
            "      --threads N         CPU threads (default: all cores)\n"
            "      --dry-run           parse, validate, infer shapes, plan memory; run nothing\n"
            "  -q, --quiet             only errors on stderr\n"
            "  -v, --verbose           more detail on stderr\n"
            "  -h, --help              this help\n"
            "  -V, --version           the version\n"
            "\n"
            "Exit status: 0 success, 1 comparison out of tolerance, 2 usage error,\n"
            "3 invalid graph or input, 4 run-time failure. See ftrun(1) and ftrun-graph(5).\n");
}

static int usage_error(const char *fmt, ...) FT_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ftrun --help'.\n");
    return FT_EUSAGE;
}

static int fail(const ft_error *err)
{
    fprintf(stderr, "%s: error: %s\n", prog, err->msg);
    return err->code ? err->code : FT_ERUNTIME;
}

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        if (hi == LONG_MAX)
            return usage_error("option %s: '%s' is not an integer >= %ld", opt, s, lo);
        return usage_error("option %s: '%s' is not an integer in [%ld, %ld]", opt, s, lo, hi);
    }
    *out = (long)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0)
        return usage_error("option %s: '%s' is not a finite number >= 0", opt, s);
    *out = v;
    return 0;
}

enum {
    OPT_FORMAT = 256, OPT_DURATION, OPT_EXPECT, OPT_RTOL, OPT_ATOL, OPT_SEED, OPT_THREADS, OPT_DRY_RUN,
    OPT_UNAVAILABLE,
};

static const struct option long_opts[] = {
    {"device", required_argument, 0, 'd'},
    {"input", required_argument, 0, 'i'},
    {"output-dir", required_argument, 0, 'o'},
    {"format", required_argument, 0, OPT_FORMAT},
    {"warmup", required_argument, 0, 'w'},
    {"iterations", required_argument, 0, 'n'},
    {"duration", required_argument, 0, OPT_DURATION},
    {"expect", required_argument, 0, OPT_EXPECT},
    {"rtol", required_argument, 0, OPT_RTOL},
    {"atol", required_argument, 0, OPT_ATOL},
    {"seed", required_argument, 0, OPT_SEED},
    {"threads", required_argument, 0, OPT_THREADS},
    {"dry-run", no_argument, 0, OPT_DRY_RUN},
    {"quiet", no_argument, 0, 'q'},
    {"verbose", no_argument, 0, 'v'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    /* in the contract, not in this version: a clear error rather than "unknown option" */
    {"profile", no_argument, 0, OPT_UNAVAILABLE},
    {"trace", required_argument, 0, OPT_UNAVAILABLE},
    {"check", optional_argument, 0, OPT_UNAVAILABLE},
    {"check-nodes", no_argument, 0, OPT_UNAVAILABLE},
    {"cuda-graph", no_argument, 0, OPT_UNAVAILABLE},
    {"allow-tf32", no_argument, 0, OPT_UNAVAILABLE},
    {"fallback", required_argument, 0, OPT_UNAVAILABLE},
    {0, 0, 0, 0},
};

static int parse_args(int argc, char **argv, cli *c)
{
    static const char *const commands[] = {"run", "info", "ops", "devices", "pack", "unpack", "compare"};
    int first = 1;
    c->command = "run";
    if (argc > 1)
        for (size_t i = 0; i < FT_ARRAY_LEN(commands); i++)
            if (strcmp(argv[1], commands[i]) == 0) {
                c->command = commands[i];
                first = 2;
            }
    if (!strcmp(c->command, "pack") || !strcmp(c->command, "unpack") || !strcmp(c->command, "compare"))
        return usage_error("command '%s' is not available in this version of ftrun (%s)", c->command, FT_VERSION);
    /* getopt_long permutes, so options may follow the graph; argv[0] is skipped by getopt */
    char **av = argv + first - 1;
    int ac = argc - first + 1;
    opterr = 0;
    optind = 1;
    int ch, idx;
    while ((ch = getopt_long(ac, av, ":d:i:o:w:n:qvhV", long_opts, &idx)) != -1) {
        const char *oname = NULL;
        switch (ch) {
        case 'd': c->device = optarg; break;
        case 'i': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1])
                return usage_error("option --input: expected NAME=FILE, got '%s'", optarg);
            input_arg *ni = realloc(c->inputs, (size_t)(c->n_inputs + 1) * sizeof *ni);
            if (!ni)
                return usage_error("out of memory");
            c->inputs = ni;
            char *name = strndup(optarg, (size_t)(eq - optarg));
            if (!name)
                return usage_error("out of memory");
            c->inputs[c->n_inputs++] = (input_arg){name, eq + 1};
            oname = "--input";
            break;
        }
        case 'o': c->outdir = optarg; oname = "--output-dir"; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "npy") && strcmp(optarg, "none")) {
                if (!strcmp(optarg, "npz"))
                    return usage_error("option --format: 'npz' is not available in this version of ftrun; use npy or none");
                return usage_error("option --format: '%s' is not one of npy, none", optarg);
            }
            c->format = optarg;
            oname = "--format";
            break;
        case 'w': if (parse_long("--warmup", optarg, 0, INT_MAX, &c->warmup)) return FT_EUSAGE; oname = "--warmup"; break;
        case 'n': if (parse_long("--iterations", optarg, 1, INT_MAX, &c->iterations)) return FT_EUSAGE; oname = "--iterations"; break;
        case OPT_DURATION: if (parse_double("--duration", optarg, &c->duration)) return FT_EUSAGE; oname = "--duration"; break;
        case OPT_EXPECT: c->expect = optarg; oname = "--expect"; break;
        case OPT_RTOL: if (parse_double("--rtol", optarg, &c->rtol)) return FT_EUSAGE; c->have_rtol = 1; oname = "--rtol"; break;
        case OPT_ATOL: if (parse_double("--atol", optarg, &c->atol)) return FT_EUSAGE; c->have_atol = 1; oname = "--atol"; break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            long long v = strtoll(optarg, &end, 10);
            if (!*optarg || *end || errno || v < 0)
                return usage_error("option --seed: '%s' is not an integer in [0, %lld]", optarg, LLONG_MAX);
            c->seed = v;
            oname = "--seed";
            break;
        }
        case OPT_THREADS: if (parse_long("--threads", optarg, 1, 4096, &c->threads)) return FT_EUSAGE; oname = "--threads"; break;
        case OPT_DRY_RUN: c->dry_run = 1; oname = "--dry-run"; break;
        case 'q': c->quiet = 1; break;
        case 'v': c->verbose = 1; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("ftrun %s\n", FT_VERSION); exit(0);
        case OPT_UNAVAILABLE:
            return usage_error("option '--%s' is not available in this version of ftrun (%s)", long_opts[idx].name, FT_VERSION);
        case ':':
            if (optopt)
                return usage_error("option -%c needs an argument", optopt);
            return usage_error("option '%s' needs an argument", av[optind - 1]);
        case '?':
        default:
            if (optopt)
                return usage_error("unknown option -%c", optopt);
            return usage_error("unknown option '%s'", av[optind - 1]);
        }
        if (oname && !c->run_only_given) {
            c->run_only_given = 1;
            c->run_only_name = oname;
        }
    }
    int npos = ac - optind;
    int want_graph = !strcmp(c->command, "run") || !strcmp(c->command, "info");
    if (want_graph) {
        if (npos < 1)
            return usage_error(first == 1 && argc == 1 ? "no graph file given" : "'%s' needs a GRAPH file", c->command);
        if (npos > 1)
            return usage_error("unexpected argument '%s' (one GRAPH file per run)", av[optind + 1]);
        c->graph = av[optind];
    } else if (npos > 0) {
        return usage_error("'%s' takes no arguments, got '%s'", c->command, av[optind]);
    }
    if (strcmp(c->command, "run") && c->run_only_given)
        return usage_error("option %s does not apply to '%s'", c->run_only_name, c->command);
    if (strcmp(c->command, "run") && strcmp(c->command, "ops") && c->device)
        return usage_error("option --device does not apply to '%s'", c->command);
    return 0;
}

/* Parse DEV into a backend; returns an exit code (0 ok). */
static int pick_device(const char *dev, int for_run, const ft_backend **be, char *name, size_t nsz)
{
    if (!dev || !strcmp(dev, "auto")) {
        *be = &ft_cpu_backend; /* no CUDA backend in this build: auto is the CPU */
        snprintf(name, nsz, "cpu");
        return 0;
    }
    if (!strcmp(dev, "cpu")) {
        *be = &ft_cpu_backend;
        snprintf(name, nsz, "cpu");
        return 0;
    }
    int idx = 0;
    if (!strcmp(dev, "cuda") || (!strncmp(dev, "cuda:", 5) && dev[5] && strspn(dev + 5, "0123456789") == strlen(dev + 5) &&
                                 strlen(dev + 5) < 6 && (idx = atoi(dev + 5), 1))) {
        fprintf(stderr, "%s: error: device 'cuda:%d' is not available: this ftrun was built without the CUDA backend\n",
                prog, idx);
        return FT_ERUNTIME;
    }
    (void)for_run;
    return usage_error("option --device: '%s' is not one of cpu, cuda, cuda:N, auto", dev);
}

static int cmd_devices(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cpu      CPU reference backend, %ld thread%s (%ld core%s)\n", cores, cores == 1 ? "" : "s", cores,
           cores == 1 ? "" : "s");
    printf("cuda     none: this ftrun was built without the CUDA backend\n");
    return 0;
}

static ft_status load_graph(const cli *c, ft_graph **g, ft_error *err)
{
    ft_load_opts lo = {.seed_override = c->seed};
    ft_status st = ft_graph_load(c->graph, &lo, g, err);
    if (!st)
        st = ft_graph_validate(*g, err);
    if (st) {
        ft_graph_free(*g);
        *g = NULL;
    }
    return st;
}

static ft_status apply_inputs(const cli *c, ft_graph *g, ft_error *err)
{
    for (int i = 0; i < c->n_inputs; i++) {
        const input_arg *a = &c->inputs[i];
        int t = ft_graph_find(g, a->name);
        if (t < 0 || !(g->tensors[t].flags & FT_TF_INPUT)) {
            char list[1024] = "";
            size_t len = 0;
            for (int k = 0; k < g->n_inputs && len < sizeof list - 64; k++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", k ? ", " : "", g->tensors[g->inputs[k]].name);
            return ft_err(err, FT_EGRAPH, "--input %s=%s: '%s' is not an input of %s (its inputs: %s)", a->name, a->file,
                          a->name, g->file, g->n_inputs ? list : "none");
        }
        ft_tensor *tt = &g->tensors[t];
        ft_npy arr;
        ft_status st = ft_npy_read(a->file, &arr, err);
        if (st) {
            ft_err_prefix(err, "--input %s", a->name);
            return st;
        }
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_npy_to_dtype(&arr, tt->dtype) != 0)
            st = ft_err(err, FT_EGRAPH, "--input %s: %s has dtype %s but input '%s' is declared %s", a->name, a->file,
                        ft_dtype_name(arr.dtype), a->name, ft_dtype_name(tt->dtype));
        else if (!ft_shape_eq(&arr.shape, &tt->shape))
            st = ft_err(err, FT_EGRAPH, "--input %s: %s has shape %s but input '%s' is declared %s", a->name, a->file,
                        ft_shape_str(&arr.shape, s1), a->name, ft_shape_str(&tt->shape, s2));
        if (st) {
            ft_npy_clear(&arr);
            return st;
        }
        free(tt->value);
        tt->value = arr.data;
        tt->value_bytes = arr.nbytes;
        tt->source = "--input";
    }
    for (int i = 0; i < g->n_inputs; i++) {
        const ft_tensor *t = &g->tensors[g->inputs[i]];
        if (!t->value)
            return ft_err(err, FT_EGRAPH,
                          "%s: input '%s' (%s %s) has no value: pass --input %s=FILE.npy or give it \"data\", \"file\" or "
                          "\"init\" in the graph",
                          g->file, t->name, ft_dtype_name(t->dtype), ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), t->name);
    }
    return FT_OK;
}

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

/* Golden values per output, loaded before running so a bad path fails fast. */
static ft_status load_expect(const cli *c, const ft_graph *g, ft_npy *exp, ft_error *err)
{
    size_t len = strlen(c->expect);
    int is_file = len > 4 && !strcmp(c->expect + len - 4, ".npy");
    if (is_file && g->n_outputs != 1)
        return ft_err(err, FT_EGRAPH, "--expect %s: a single .npy file can only check a graph with one output (this graph has %d); pass a directory",
                      c->expect, g->n_outputs);
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600], path[4200];
        ft_sanitize_name(t->name, fname, sizeof fname);
        if (is_file)
            snprintf(path, sizeof path, "%s", c->expect);
        else
            snprintf(path, sizeof path, "%s/%s.npy", c->expect, fname);
        ft_status st = ft_npy_read(path, &exp[i], err);
        if (st) {
            ft_err_prefix(err, "--expect: output '%s'", t->name);
            return st;
        }
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_npy_to_dtype(&exp[i], t->dtype) != 0)
            return ft_err(err, FT_EGRAPH, "--expect: output '%s' is %s but %s holds %s", t->name, ft_dtype_name(t->dtype), path,
                          ft_dtype_name(exp[i].dtype));
        if (!ft_shape_eq(&exp[i].shape, &t->shape))
            return ft_err(err, FT_EGRAPH, "--expect: output '%s' has shape %s but %s has shape %s", t->name,
                          ft_shape_str(&t->shape, s1), path, ft_shape_str(&exp[i].shape, s2));
    }
    return FT_OK;
}

static int check_expect(const cli *c, const ft_graph *g, const ft_run_result *r, const ft_npy *exp)
{
    int bad = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_tol tol = ft_tol_default(t->dtype);
        if (c->have_rtol) tol.rtol = c->rtol;
        if (c->have_atol) tol.atol = c->atol;
        ft_cmp cm;
        ft_compare(r->outputs[i], exp[i].data, t->dtype, &t->shape, tol, &cm);
        if (cm.n_bad) {
            char idx[FT_SHAPE_STR];
            fprintf(stderr,
                    "%s: expect: output '%s': %llu of %llu values out of tolerance (rtol=%g, atol=%g): max abs error %g, "
                    "max rel error %g; worst at %s (got %.9g, expected %.9g)\n",
                    prog, t->name, (unsigned long long)cm.n_bad, (unsigned long long)cm.n, tol.rtol, tol.atol, cm.max_abs,
                    cm.max_rel, ft_index_str(cm.worst, &t->shape, idx), cm.worst_got, cm.worst_want);
            bad = 1;
        } else if (c->verbose) {
            fprintf(stderr, "%s: expect: output '%s': %llu values match (max abs error %g, max rel error %g)\n", prog, t->name,
                    (unsigned long long)cm.n, cm.max_abs, cm.max_rel);
        }
    }
    if (!bad && !c->quiet)
        fprintf(stderr, "%s: expect: %d output%s match %s\n", prog, g->n_outputs, g->n_outputs == 1 ? "" : "s", c->expect);
    return bad ? FT_EMISMATCH : FT_OK;
}

static int cmd_info(const cli *c)
{
    ft_error err = {0};
    ft_graph *g;
    if (load_graph(c, &g, &err))
        return fail(&err);
    ft_plan p;
    if (ft_plan_build(g, &p, &err)) {
        ft_graph_free(g);
        return fail(&err);
    }
    ft_print_info(stdout, g, &p);
    ft_plan_free(&p);
    ft_graph_free(g);
    return fflush(stdout) == 0 ? 0 : FT_ERUNTIME;
}

static int cmd_run(const cli *c)
{
    ft_error err = {0};
    const ft_backend *be;
    char devname[32];
    int rc = pick_device(c->device, 1, &be, devname, sizeof devname);
    if (rc)
        return rc;
    double t0 = ft_now();
    ft_graph *g = NULL;
    ft_plan plan = {0};
    ft_backend_ctx *ctx = NULL;
    ft_run_result res = {0};
    ft_outset outs = {0};
    ft_npy *exp = NULL;
    char *timing = NULL;
    if (load_graph(c, &g, &err) || apply_inputs(c, g, &err) || check_output_names(g, &err)) {
        rc = fail(&err);
        goto out;
    }
    double load_ms = (ft_now() - t0) * 1e3;
    if (ft_exec_check(g, be, &err)) {
        rc = fail(&err);
        goto out;
    }
    t0 = ft_now();
    if (ft_plan_build(g, &plan, &err)) {
        rc = fail(&err);
        goto out;
    }
    double plan_ms = (ft_now() - t0) * 1e3;
    if (c->verbose)
        fprintf(stderr, "%s: %s: loaded %d nodes, %d tensors in %.3f ms; plan: arena %llu bytes (unplanned %llu) in %.3f ms\n",
                prog, g->file, g->n_nodes, g->n_tensors, load_ms, (unsigned long long)plan.arena_bytes,
                (unsigned long long)plan.unplanned_bytes, plan_ms);
    if (c->expect) {
        exp = ft_calloc((size_t)g->n_outputs, sizeof *exp);
        if (!exp) {
            rc = fail(&(ft_error){FT_ERUNTIME, "out of memory"});
            goto out;
        }
        if (load_expect(c, g, exp, &err)) {
            rc = fail(&err);
            goto out;
        }
    }
    if (c->dry_run) {
        if (!c->quiet)
            fprintf(stderr, "%s: %s: valid; %d nodes on %s; planned arena %llu bytes (unplanned %llu); nothing run (--dry-run)\n",
                    prog, g->name, g->n_nodes, devname, (unsigned long long)plan.arena_bytes,
                    (unsigned long long)plan.unplanned_bytes);
        rc = 0;
        goto out;
    }
    ft_backend_opts bo = {.threads = (int)c->threads};
    if (be->open(&bo, &ctx, &err)) {
        rc = fail(&err);
        goto out;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ft_exec_opts eo = {
        .warmup = (int)c->warmup,
        .iterations = (int)(c->iterations ? c->iterations : 1),
        .duration_s = c->duration,
        .threads = c->threads > 0 ? (int)c->threads : (cores > 0 ? (int)cores : 1),
        .progress = !c->quiet && isatty(2),
    };
    if (ft_exec_run(g, &plan, be, ctx, &eo, &res, &err)) {
        rc = fail(&err);
        goto out;
    }
    const char *dir = c->outdir ? c->outdir : "ftrun-out";
    if (ft_mkdirs(dir, &err)) {
        rc = fail(&err);
        goto out;
    }
    int write_npy = !c->format || !strcmp(c->format, "npy");
    for (int i = 0; i < g->n_outputs && write_npy; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600];
        ft_sanitize_name(t->name, fname, sizeof fname - 8);
        strcat(fname, ".npy");
        if (ft_outset_npy(&outs, dir, fname, t->dtype, &t->shape, res.outputs[i], &err)) {
            ft_outset_abort(&outs);
            rc = fail(&err);
            goto out;
        }
    }
    ft_timing_info ti = {devname, be->describe(ctx), eo.warmup, eo.iterations, load_ms, plan_ms};
    timing = ft_timing_json(g, &plan, &res, &ti);
    if (!timing || ft_outset_text(&outs, dir, "timing.json", timing, &err) || ft_outset_commit(&outs, &err)) {
        if (!timing)
            err = (ft_error){FT_ERUNTIME, "out of memory writing timing.json"};
        ft_outset_abort(&outs);
        rc = fail(&err);
        goto out;
    }
    if (!c->quiet) {
        ft_stats s;
        ft_stats_compute(res.run_ms, res.n_runs, &s);
        fprintf(stderr, "%s: %s: %d nodes on %s: median %.3f ms over %d run%s; results in %s/\n", prog, g->name, g->n_nodes,
                devname, s.median, res.n_runs, res.n_runs == 1 ? "" : "s", dir);
    }
    rc = exp ? check_expect(c, g, &res, exp) : 0;
out:
    if (exp)
        for (int i = 0; i < g->n_outputs; i++)
            ft_npy_clear(&exp[i]);
    free(exp);
    free(timing);
    ft_run_result_free(&res);
    if (ctx)
        be->close(ctx);
    ft_plan_free(&plan);
    ft_graph_free(g);
    return rc;
}

int main(int argc, char **argv)
{
    cli c = {.seed = -1};
    if (argc == 1) {
        usage(stderr);
        return FT_EUSAGE;
    }
    int rc = parse_args(argc, argv, &c);
    if (!rc) {
        if (!strcmp(c.command, "devices")) {
            rc = cmd_devices();
        } else if (!strcmp(c.command, "ops")) {
            const ft_backend *be = NULL;
            char dn[32];
            if (c.device && (rc = pick_device(c.device, 0, &be, dn, sizeof dn)) != 0)
                goto done;
            ft_print_ops(stdout, be);
        } else if (!strcmp(c.command, "info")) {
            rc = cmd_info(&c);
        } else {
            rc = cmd_run(&c);
        }
    }
done:
    for (int i = 0; i < c.n_inputs; i++)
        free((char *)c.inputs[i].name);
    free(c.inputs);
    return rc;
}
