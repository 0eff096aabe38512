/* ftrun command line: parses options, runs the commands, prints reports.
 * Knows nothing of kernels: it drives graph -> plan -> executor -> files. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../graph/ftg.h"
#include "../graph/npy.h"
#include "../graph/npz.h"
#include "../graph/onnx_import.h"
#include "../graph/optimize.h"
#include "compare.h"
#include "../runtime/threads.h"
#include "profile.h"
#include "check.h"
#include "cliutil.h"
#include "convert.h"
#include "inputs.h"
#include "report.h"
#include "show.h"
#include "test.h"

typedef struct {
    const char *command;
    const char *graph;
    const char *graph2; /* compare: the second operand */
    const char *device;
    const char *outdir;
    const char *format;
    const char *expect;
    ft_bindings *bind; /* -i, --dim, --shape, --random-inputs (inputs.h) */
    long warmup, iterations, threads;
    double duration, default_duration;
    long long seed;
    double rtol, atol;
    int have_rtol, have_atol;
    int dry_run, quiet, verbose, compress, profile, allow_external;
    const char *trace;
    int print;                  /* --print */
    char **pos;                 /* the operands (show takes any number) */
    int npos;
    const char *device_only[2]; /* CUDA-only switches that were given */
    int cuda_graph, allow_tf32, check, check_nodes, check_o0, fallback_cpu, onnx_ops;
    int opt_level; /* -O (optimize.h) */
    unsigned given;            /* OB_* bits of the options given */
    const char *given_name[32]; /* the spelling of each, for messages */
    int given_order[32], n_given;
} cli;

/* Options and the commands that take them (-q, -v, -h, -V go everywhere). */
enum {
    OB_DEVICE = 1u << 0, OB_INPUT = 1u << 1, OB_OUTDIR = 1u << 2, OB_FORMAT = 1u << 3, OB_WARMUP = 1u << 4,
    OB_ITER = 1u << 5, OB_DURATION = 1u << 6, OB_EXPECT = 1u << 7, OB_RTOL = 1u << 8, OB_ATOL = 1u << 9,
    OB_SEED = 1u << 10, OB_THREADS = 1u << 11, OB_DRYRUN = 1u << 12, OB_COMPRESS = 1u << 13, OB_PROFILE = 1u << 14,
    OB_TRACE = 1u << 15, OB_DEVICE_ONLY = 1u << 16, OB_EXTERNAL = 1u << 17, OB_CHECK = 1u << 18, OB_FALLBACK = 1u << 19,
    OB_DIMS = 1u << 20, OB_RANDOM = 1u << 21, OB_ONNX = 1u << 22, OB_PRINT = 1u << 23, OB_OPT = 1u << 24,
};
static const struct {
    const char *command;
    unsigned allowed;
    int min_pos, max_pos;
    const char *operands;
} commands[] = {
    {"run", ~(unsigned)OB_COMPRESS, 1, 1, "a GRAPH file"},
    {"info", OB_EXTERNAL | OB_INPUT | OB_DIMS | OB_RANDOM | OB_OPT, 1, 1, "a GRAPH file"},
    {"ops", OB_DEVICE | OB_ONNX, 0, 0, ""},
    {"devices", 0, 0, 0, ""},
    {"pack", OB_OUTDIR | OB_COMPRESS | OB_SEED | OB_EXTERNAL | OB_DIMS | OB_OPT, 1, 1, "a GRAPH file"},
    {"unpack", OB_OUTDIR | OB_DIMS, 1, 1, "a GRAPH file"},
    {"convert", OB_OUTDIR | OB_COMPRESS | OB_SEED | OB_EXTERNAL | OB_DIMS | OB_OPT, 1, 1, "a MODEL file"},
    {"compare", OB_RTOL | OB_ATOL, 2, 2, "two operands, A and B"},
    {"show", 0, 1, INT_MAX, "one or more .npy or .npz files or result folders"},
};

static void note_opt(cli *c, unsigned bit, const char *name)
{
    int b = __builtin_ctz(bit);
    if (!(c->given & bit)) {
        c->given_name[b] = name;
        c->given_order[c->n_given++] = b;
    }
    c->given |= bit;
}

static const char *prog = "ftrun";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: ftrun [run] GRAPH [OPTIONS]   run a graph (the default command)\n"
            "       ftrun info GRAPH              inputs, outputs, nodes with shapes, FLOPs, bytes, memory plan\n"
            "                                     (takes -i, --dim, --shape, --random-inputs to bind named dims)\n"
            "       ftrun ops [--device DEV]      every op with the dtypes each backend implements\n"
            "       ftrun ops --onnx              every ONNX operator and what ftrun makes of it\n"
            "       ftrun devices                 the devices this machine offers\n"
            "       ftrun pack GRAPH -o OUT.ftg [--compress]   JSON graph -> binary graph (--compress: zlib blobs; -o -: stdout)\n"
            "       ftrun unpack GRAPH.ftg -o DIR              binary graph -> DIR/graph.json + one .npy per value\n"
            "       ftrun convert MODEL -o OUT.json|OUT.ftg    any graph file -> ftrun graph (OUT.json: values in\n"
            "                                                  OUT.values/); takes --dim, --shape, --compress (.ftg)\n"
            "       ftrun compare A B [--rtol R] [--atol A]    compare .npy files, .npz files or result folders\n"
            "       ftrun show FILE...                         print arrays (.npy, .npz, result folders) as NumPy does\n"
            "       ftrun test DIR... [-d DEV] [-j N] [--junit FILE] [--timeout SEC] [--threads N] [--rtol R] [--atol A]\n"
            "                          run test folders (ONNX backend-test layout or ftrun's own); exit 1 if a case fails\n"
            "\n"
            "Options of run:\n"
            "  -d, --device DEV        cpu, cuda, cuda:N or auto (default: auto = cuda:0 if usable, else cpu)\n"
            "  -i, --input NAME=FILE   value of input NAME from a .npy or .npz file (repeatable); its shape\n"
            "                          binds the input's named dims\n"
            "      --dim NAME=N        the value of the named (symbolic) dim NAME (repeatable)\n"
            "      --shape INPUT=D0,D1,...  the shape of INPUT (INPUT= for a scalar; repeatable)\n"
            "      --random-inputs[=SEED]  inputs without a value get Philox uniform values (seed default 0;\n"
            "                          input k of the graph's inputs uses SEED+k): floats in [-1,1),\n"
            "                          integers in [0,10), bool 0 or 1; -i wins for the inputs it names\n"
            "      --random-range LO,HI  range of --random-inputs for floats and integers ([LO,HI))\n"
            "  -o, --output-dir DIR    where results go (default ftrun-out)\n"
            "      --format FMT        npy (one .npy per output, default), npz (one outputs.npz), pb (one ONNX\n"
            "                          TensorProto .pb per output) or none\n"
            "  -w, --warmup N          untimed runs first\n"
            "  -n, --iterations N      timed runs (-n 1: one run)\n"
            "      --duration SEC      keep running timed iterations until SEC seconds have passed (at least -n)\n"
            "                          (none of the three: 0.2 s of warm-up, then 1 s of timed runs)\n"
            "      --expect FILE|DIR   compare outputs to golden values (.npy or .npz file, or folder of .npy)\n"
            "      --rtol R, --atol A  tolerances: pass when |x-y| <= atol + rtol*|y| (defaults per dtype)\n"
            "      --seed N            replace the seed of every random init\n"
            "      --threads N         CPU threads (default: the cores other processes leave idle,\n"
            "                          looked at every 10 ms; at most all cores, at least 1)\n"
            "      --dry-run           parse, validate, infer shapes, plan memory; run nothing\n"
            "  -O LEVEL                graph optimizer: 0 none, 1 dead nodes, 2 also fold batch_norm into\n"
            "                          convs, fuse silu, gelu, layer_norm, rms_norm, softmax,\n"
            "                          log_softmax, attention, conv residual adds and activations,\n"
            "                          matmul bias adds and activations, fold transposes\n"
            "                          (default 2); also for info, pack, convert, test\n"
            "      --allow-external-files  let the graph's \"file\" values name files outside its folder\n"
            "      --print             print every output on stdout as NumPy does (dtype, shape, min/max/mean, values)\n"
            "      --profile           time every node: table on stderr, \"nodes\" in timing.json\n"
            "      --trace FILE        Chrome trace-event JSON of the timed runs (Perfetto, chrome://tracing; -: stdout)\n"
            "      --check[=cpu|O0]    also run on the CPU reference backend and compare every output; O0: the\n"
            "                          reference runs the graph as read, without the optimizer\n"
            "      --check-nodes       with --check: recompute every node on the CPU from the inputs the device\n"
            "                          saw and name the first node whose outputs differ\n"
            "      --fallback cpu      run ops the device lacks on the CPU, with a warning naming them\n"
            "      --cuda-graph        capture one run as a CUDA graph and replay it for the timed runs\n"
            "      --allow-tf32        let f32 matrix products use TF32 tensor cores\n"
            "                          (--cuda-graph and --allow-tf32 do nothing on the CPU; a warning says so)\n"
            "  -q, --quiet             only errors on stderr\n"
            "  -v, --verbose           more detail on stderr\n"
            "  -h, --help              this help\n"
            "  -V, --version           the version\n"
            "\n"
            "Exit status: 0 success, 1 comparison out of tolerance, 2 usage error,\n"
            "3 invalid graph or input, 4 run-time failure, 130/143 stopped by SIGINT/SIGTERM.\n"
            "See ftrun(1) and ftrun-graph(5).\n");
}

static int fail(const ft_error *err)
{
    fprintf(stderr, "%s: error: %s\n", prog, err->msg);
    return err->code ? err->code : FT_ERUNTIME;
}

/* info and compare report on standard output: a failed write fails the command. */
static int stdout_status(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    fprintf(stderr, "%s: error: cannot write to standard output: %s\n", prog, strerror(errno ? errno : EIO));
    return FT_ERUNTIME;
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
    OPT_COMPRESS, OPT_PROFILE, OPT_TRACE, OPT_DEVICE_ONLY, OPT_EXTERNAL, OPT_CHECK, OPT_CHECK_NODES, OPT_FALLBACK,
    OPT_DIM, OPT_SHAPE, OPT_RANDOM, OPT_RANDOM_RANGE, OPT_ONNX, OPT_PRINT,
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
    {"compress", no_argument, 0, OPT_COMPRESS},
    {"onnx", no_argument, 0, OPT_ONNX},
    {"quiet", no_argument, 0, 'q'},
    {"verbose", no_argument, 0, 'v'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
    {"profile", no_argument, 0, OPT_PROFILE},
    {"print", no_argument, 0, OPT_PRINT},
    {"allow-external-files", no_argument, 0, OPT_EXTERNAL},
    {"trace", required_argument, 0, OPT_TRACE},
    /* CUDA-only switches: accepted, and a warning says they do nothing on the CPU */
    {"cuda-graph", no_argument, 0, OPT_DEVICE_ONLY},
    {"allow-tf32", no_argument, 0, OPT_DEVICE_ONLY},
    {"check", optional_argument, 0, OPT_CHECK},
    {"check-nodes", no_argument, 0, OPT_CHECK_NODES},
    {"fallback", required_argument, 0, OPT_FALLBACK},
    {"dim", required_argument, 0, OPT_DIM},
    {"shape", required_argument, 0, OPT_SHAPE},
    {"random-inputs", optional_argument, 0, OPT_RANDOM},
    {"random-range", required_argument, 0, OPT_RANDOM_RANGE},
    {0, 0, 0, 0},
};

static int parse_args(int argc, char **argv, cli *c)
{
    int first = 1, cmd = 0;
    c->command = "run";
    if (argc > 1)
        for (size_t i = 0; i < FT_ARRAY_LEN(commands); i++)
            if (strcmp(argv[1], commands[i].command) == 0) {
                c->command = commands[i].command;
                cmd = (int)i;
                first = 2;
            }
    /* getopt_long permutes, so options may follow the graph; argv[0] is skipped by getopt */
    char **av = argv + first - 1;
    int ac = argc - first + 1;
    opterr = 0;
    optind = 1;
    int ch, idx;
    while ((ch = getopt_long(ac, av, ":d:i:o:w:n:O:qvhV", long_opts, &idx)) != -1) {
        switch (ch) {
        case 'd': c->device = optarg; note_opt(c, OB_DEVICE, "--device"); break;
        case 'i':
        case OPT_DIM:
        case OPT_SHAPE:
        case OPT_RANDOM:
        case OPT_RANDOM_RANGE: {
            char msg[1500];
            int (*const parse[])(ft_bindings *, const char *, char *, size_t) = {
                ft_bind_input_arg, ft_bind_dim_arg, ft_bind_shape_arg, ft_bind_random_arg, ft_bind_range_arg};
            int k = ch == 'i' ? 0 : ch - OPT_DIM + 1, rc = parse[k](c->bind, optarg, msg, sizeof msg);
            if (rc == FT_EUSAGE)
                return usage_error("%s", msg);
            if (rc)
                return fail(&(ft_error){rc, "out of memory reading the command line"});
            static const char *const spelling[] = {"--input", "--dim", "--shape", "--random-inputs", "--random-range"};
            note_opt(c, k == 0 ? OB_INPUT : k < 3 ? OB_DIMS : OB_RANDOM, spelling[k]);
            break;
        }
        case 'o': c->outdir = optarg; note_opt(c, OB_OUTDIR, "--output-dir"); break;
        case OPT_FORMAT:
            if (strcmp(optarg, "npy") && strcmp(optarg, "npz") && strcmp(optarg, "pb") && strcmp(optarg, "none"))
                return usage_error("option --format: '%s' is not one of npy, npz, pb, none", optarg);
            c->format = optarg;
            note_opt(c, OB_FORMAT, "--format");
            break;
        case 'w': if (parse_long("--warmup", optarg, 0, INT_MAX, &c->warmup)) return FT_EUSAGE; note_opt(c, OB_WARMUP, "--warmup"); break;
        case 'n': if (parse_long("--iterations", optarg, 1, INT_MAX, &c->iterations)) return FT_EUSAGE; note_opt(c, OB_ITER, "--iterations"); break;
        case OPT_DURATION: if (parse_double("--duration", optarg, &c->duration)) return FT_EUSAGE; note_opt(c, OB_DURATION, "--duration"); break;
        case OPT_EXPECT: c->expect = optarg; note_opt(c, OB_EXPECT, "--expect"); break;
        case OPT_ONNX: c->onnx_ops = 1; note_opt(c, OB_ONNX, "--onnx"); break;
        case OPT_RTOL: if (parse_double("--rtol", optarg, &c->rtol)) return FT_EUSAGE; c->have_rtol = 1; note_opt(c, OB_RTOL, "--rtol"); break;
        case OPT_ATOL: if (parse_double("--atol", optarg, &c->atol)) return FT_EUSAGE; c->have_atol = 1; note_opt(c, OB_ATOL, "--atol"); break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            long long v = strtoll(optarg, &end, 10);
            if (!*optarg || *end || errno || v < 0)
                return usage_error("option --seed: '%s' is not an integer in [0, %lld]", optarg, LLONG_MAX);
            c->seed = v;
            note_opt(c, OB_SEED, "--seed");
            break;
        }
        case OPT_THREADS: if (parse_long("--threads", optarg, 1, 4096, &c->threads)) return FT_EUSAGE; note_opt(c, OB_THREADS, "--threads"); break;
        case OPT_DRY_RUN: c->dry_run = 1; note_opt(c, OB_DRYRUN, "--dry-run"); break;
        case OPT_COMPRESS: c->compress = 1; note_opt(c, OB_COMPRESS, "--compress"); break;
        case OPT_PROFILE: c->profile = 1; note_opt(c, OB_PROFILE, "--profile"); break;
        case OPT_PRINT: c->print = 1; note_opt(c, OB_PRINT, "--print"); break;
        case OPT_EXTERNAL: c->allow_external = 1; note_opt(c, OB_EXTERNAL, "--allow-external-files"); break;
        case OPT_TRACE:
            if (!*optarg)
                return usage_error("option --trace needs a file name");
            c->trace = optarg;
            note_opt(c, OB_TRACE, "--trace");
            break;
        case OPT_DEVICE_ONLY:
            note_opt(c, OB_DEVICE_ONLY, long_opts[idx].name);
            c->device_only[long_opts[idx].name[0] == 'c' ? 0 : 1] = long_opts[idx].name;
            if (long_opts[idx].name[0] == 'c')
                c->cuda_graph = 1;
            else
                c->allow_tf32 = 1;
            break;
        case OPT_CHECK:
            if (optarg && strcmp(optarg, "cpu") && strcmp(optarg, "O0"))
                return usage_error("option --check: '%s' is not a reference (cpu: the graph run on the CPU; O0: the "
                                   "graph as read, without the optimizer, run on the CPU)", optarg);
            c->check = 1;
            c->check_o0 |= optarg && !strcmp(optarg, "O0");
            note_opt(c, OB_CHECK, "--check");
            break;
        case OPT_CHECK_NODES:
            c->check = c->check_nodes = 1;
            note_opt(c, OB_CHECK, "--check-nodes");
            break;
        case OPT_FALLBACK:
            if (strcmp(optarg, "cpu"))
                return usage_error("option --fallback: '%s' is not a fallback backend (the one there is: cpu)", optarg);
            c->fallback_cpu = 1;
            note_opt(c, OB_FALLBACK, "--fallback");
            break;
        case 'O': {
            long level;
            if (parse_long("-O", optarg, 0, 2, &level))
                return FT_EUSAGE;
            c->opt_level = (int)level;
            note_opt(c, OB_OPT, "-O");
            break;
        }
        case 'q': c->quiet = 1; break;
        case 'v': c->verbose = 1; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("ftrun %s\n", FT_VERSION); exit(0);
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
    }
    int npos = ac - optind;
    if (commands[cmd].max_pos == 0 && npos > 0)
        return usage_error("'%s' takes no arguments, got '%s'", c->command, av[optind]);
    if (npos < commands[cmd].min_pos) {
        if (first == 1 && argc == 1)
            return usage_error("no graph file given");
        return usage_error("'%s' needs %s", c->command, commands[cmd].operands);
    }
    if (npos > commands[cmd].max_pos)
        return usage_error("unexpected argument '%s' ('%s' takes %s)", av[optind + commands[cmd].max_pos], c->command,
                           commands[cmd].operands);
    c->pos = av + optind;
    c->npos = npos;
    if (npos >= 1)
        c->graph = av[optind];
    if (npos >= 2)
        c->graph2 = av[optind + 1];
    for (int k = 0; k < c->n_given; k++)
        if (!(commands[cmd].allowed & (1u << c->given_order[k])))
            return usage_error("option %s does not apply to '%s'", c->given_name[c->given_order[k]], c->command);
    if ((!strcmp(c->command, "pack") || !strcmp(c->command, "unpack")) && !c->outdir)
        return usage_error("'%s' needs -o %s", c->command, !strcmp(c->command, "pack") ? "OUT.ftg" : "DIR");
    if (!strcmp(c->command, "convert") && (!c->outdir || !ft_convert_kind(c->outdir)))
        return usage_error("'convert' needs -o OUT.json or -o OUT.ftg (the output kind is chosen by the name: .json or .ftg)%s%s",
                           c->outdir ? ", got " : "", c->outdir ? c->outdir : "");
    if (!strcmp(c->command, "convert") && c->compress && ft_convert_kind(c->outdir) != 2)
        return usage_error("option --compress applies to -o OUT.ftg only");
    if (c->bind->have_range && !c->bind->random)
        return usage_error("option --random-range needs --random-inputs");
    if (c->check_o0 && c->check_nodes)
        return usage_error("option --check-nodes compares node by node, so it needs the same graph: --check=cpu, not --check=O0");
    return 0;
}

static int cmd_devices(void)
{
    long cores = ft_usable_cores();
    printf("cpu      CPU reference backend, %ld thread%s (%ld core%s)\n", cores, cores == 1 ? "" : "s", cores,
           cores == 1 ? "" : "s");
    ft_device_info d[64];
    ft_error e = {0};
    int n = ft_cuda_devices(d, 64, &e);
    if (n < 0)
        printf("cuda     none: %s\n", e.msg);
    for (int i = 0; i < n && i < 64; i++)
        printf("cuda:%-3d %s, %.1f GiB, compute capability %d.%d, %d SMs\n", d[i].index, d[i].name,
               (double)d[i].total_bytes / (1024.0 * 1024 * 1024), d[i].cc_major, d[i].cc_minor, d[i].sm_count);
    ft_error be = {0};
    if (ft_backend_get("cuda", &be))
        printf("         CUDA backend: %s (loaded)\n", ft_cuda_backend_path());
    else
        printf("         CUDA backend: %s\n", be.msg);
    return stdout_status(0);
}

static ft_opt_stats last_opt; /* of the last load_graph */

/* Load, validate, optimize at `level` (what it rewrote into *stats, or not
 * kept when stats is NULL). */
static ft_status load_graph_at(const cli *c, int level, ft_graph **g, ft_opt_stats *stats, ft_error *err)
{
    ft_load_opts lo = {.seed_override = c->seed, .allow_external = c->allow_external};
    *g = NULL;
    ft_status st = ft_bind_read_files(c->bind, err); /* their shapes bind dims */
    ft_bind_load_opts(c->bind, &lo);
    if (!st)
        st = ft_graph_load(c->graph, &lo, g, err);
    if (!st)
        st = ft_graph_validate(*g, err);
    if (!st) /* unpack rewrites the document as written: nothing to optimize (load_graph) */
        st = ft_graph_optimize(*g, level, stats, err);
    if (st) {
        ft_graph_free(*g);
        *g = NULL;
    }
    return st;
}

static ft_status load_graph(const cli *c, ft_graph **g, ft_error *err)
{
    return load_graph_at(c, strcmp(c->command, "unpack") ? c->opt_level : 0, g, &last_opt, err);
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

/* Golden values per output, loaded before running so a bad path fails fast.
 * A folder holds <name>.npy per output; a file is an .npz (member <name>.npy
 * per output) or a .npy (graphs of one output), told apart by first bytes. */
static ft_status load_expect(const cli *c, const ft_graph *g, ft_npy *exp, ft_error *err)
{
    size_t len = strlen(c->expect);
    struct stat sb;
    int exists = stat(c->expect, &sb) == 0;
    int is_file = exists ? !S_ISDIR(sb.st_mode)
                         : len > 4 && (!strcmp(c->expect + len - 4, ".npy") || !strcmp(c->expect + len - 4, ".npz") ||
                                     !strcmp(c->expect + len - 3, ".pb"));
    ft_npz z = {0};
    int is_npz = 0;
    if (is_file && exists) {
        FILE *f = fopen(c->expect, "rb");
        unsigned char head[4] = {0};
        size_t n = f ? fread(head, 1, sizeof head, f) : 0;
        int e = !f || ferror(f) ? errno : 0;
        if (f)
            fclose(f);
        if (e)
            return ft_err(err, e == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "--expect %s: cannot read: %s", c->expect, strerror(e));
        is_npz = ft_npz_is_npz(head, n);
    }
    if (is_npz) {
        ft_status st = ft_npz_open(c->expect, &z, err);
        if (st) {
            ft_err_prefix(err, "--expect");
            return st;
        }
    } else if (is_file && g->n_outputs != 1) {
        return ft_err(err, FT_EGRAPH, "--expect %s: a single .npy file can only check a graph with one output (this graph has %d); pass an .npz file or a directory",
                      c->expect, g->n_outputs);
    }
    ft_status st = FT_OK;
    for (int i = 0; i < g->n_outputs && !st; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600], path[4200];
        ft_sanitize_name(t->name, fname, sizeof fname);
        if (is_npz) {
            int k = ft_npz_find(&z, t->name);
            snprintf(path, sizeof path, "%s (member %s.npy)", c->expect, k >= 0 ? z.e[k].name : fname);
            if (k < 0) {
                char list[1024];
                st = ft_err(err, FT_EGRAPH, "--expect: output '%s': %s has no member %s.npy (members: %s)", t->name, c->expect,
                            fname, ft_npz_names(&z, list, sizeof list));
                break;
            }
            st = ft_npz_read(&z, k, &exp[i], err);
        } else {
            if (is_file)
                snprintf(path, sizeof path, "%s", c->expect);
            else {
                /* NAME.npy, or an ONNX tensor file NAME.pb */
                snprintf(path, sizeof path, "%s/%s.pb", c->expect, fname);
                if (access(path, F_OK) != 0)
                    snprintf(path, sizeof path, "%s/%s.npy", c->expect, fname);
            }
            st = ft_array_read(path, NULL, &exp[i], err);
        }
        if (st) {
            ft_err_prefix(err, "--expect: output '%s'", t->name);
            break;
        }
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_npy_to_dtype(&exp[i], t->dtype) != 0)
            st = ft_err(err, FT_EGRAPH, "--expect: output '%s' is %s but %s holds %s", t->name, ft_dtype_name(t->dtype), path,
                        ft_dtype_name(exp[i].dtype));
        else if (!ft_shape_eq(&exp[i].shape, &t->shape))
            st = ft_err(err, FT_EGRAPH, "--expect: output '%s' has shape %s but %s has shape %s", t->name,
                        ft_shape_str(&t->shape, s1), path, ft_shape_str(&exp[i].shape, s2));
    }
    ft_npz_close(&z);
    return st;
}

static ft_tol pick_tol(const cli *c, ft_dtype dt)
{
    return ft_tol_choose(dt, c->have_rtol, c->rtol, c->have_atol, c->atol);
}

static int check_expect(const cli *c, const ft_graph *g, const ft_run_result *r, const ft_npy *exp)
{
    int bad = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_tol tol = pick_tol(c, t->dtype);
        ft_cmp cm;
        ft_compare(r->outputs[i], exp[i].data, t->dtype, &t->shape, tol, &cm);
        bad |= cm.n_bad != 0;
        if (cm.n_bad || c->verbose) {
            char prefix[600];
            snprintf(prefix, sizeof prefix, "%s: expect: output '%s'", prog, t->name);
            ft_report_cmp(stderr, prefix, &cm, t->dtype, &t->shape, tol);
        }
    }
    if (!bad && !c->quiet)
        fprintf(stderr, "%s: expect: %d output%s %s\n", prog, g->n_outputs, g->n_outputs == 1 ? " matches" : "s match", c->expect);
    return bad ? FT_EMISMATCH : FT_OK;
}

static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
    if (b < 10240)
        snprintf(buf, n, "%llu bytes", (unsigned long long)b);
    else if (b < 10 * 1048576ull)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else if (b < 10 * 1073741824ull)
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
    return buf;
}

static int cmd_pack(const cli *c)
{
    ft_error err = {0};
    ft_graph *g;
    struct stat sb;
    if (stat(c->outdir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: error: pack -o %s: that is a directory; pack writes one file such as %s/model.ftg\n", prog,
                c->outdir, c->outdir);
        return FT_ERUNTIME;
    }
    if (ft_outfile_check(c->outdir, FT_OUT_DASH, &err) || load_graph(c, &g, &err))
        return fail(&err);
    char *doc = NULL;
    size_t len = 0;
    ft_pack_stats ps;
    ft_outfile of = {0};
    ft_status st = FT_OK;
    /* the file's own document, unless the graph was rewritten or the file is
     * not one (an ONNX model): then the document is made from the graph */
    if (g->about || last_opt.rewritten) {
        for (int i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & FT_TF_VALUE)
                g->tensors[i].flags |= FT_TF_DECLARED;
        if (!(doc = ft_graph_doc_make(g, &len, &err)))
            st = err.code ? err.code : FT_ERUNTIME;
    } else
        st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_outfile_open(&of, c->outdir, FT_OUT_DASH, &err);
    if (!st && (st = ft_ftg_write(g, doc, len, of.f, c->outdir, c->compress, &ps, &err)))
        ft_outfile_abort(&of);
    else if (!st)
        st = ft_outfile_commit(&of, &err);
    free(doc);
    ft_graph_free(g);
    if (st)
        return fail(&err);
    if (!c->quiet) {
        char a[32], b[32], f[32];
        fprintf(stderr, "%s: pack: wrote %s: %d blob%s (%d zlib), %s of values stored in %s; file %s\n", prog,
                strcmp(c->outdir, "-") ? c->outdir : "standard output", ps.blobs,
                ps.blobs == 1 ? "" : "s", ps.zlib_blobs, human_bytes(ps.value_bytes, a, sizeof a),
                human_bytes(ps.stored_bytes, b, sizeof b), human_bytes(ps.file_bytes, f, sizeof f));
    }
    return 0;
}

static int cmd_unpack(const cli *c)
{
    ft_error err = {0};
    ft_graph *g;
    if (ft_outdir_check(c->outdir, NULL, 0, &err) || load_graph(c, &g, &err))
        return fail(&err);
    char *doc = NULL;
    size_t len = 0;
    int files = 0;
    ft_status st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_write_json_graph(g, doc, len, c->outdir, "graph.json", "", &files, &err);
    free(doc);
    ft_graph_free(g);
    if (st)
        return fail(&err);
    if (!c->quiet)
        fprintf(stderr, "%s: unpack: wrote %s/graph.json and %d .npy file%s\n", prog, c->outdir, files, files == 1 ? "" : "s");
    return 0;
}

/* `convert MODEL -o OUT.json|OUT.ftg`: any graph file as an ftrun graph. */
static int cmd_convert(const cli *c)
{
    ft_error err = {0};
    ft_graph *g;
    if (ft_outpath_check(c->outdir, &err) || load_graph(c, &g, &err))
        return fail(&err);
    ft_pack_stats ps = {0};
    int files = 0;
    ft_status st = ft_convert(g, c->outdir, c->compress, &ps, &files, &err);
    int n_nodes = g->n_nodes;
    ft_graph_free(g);
    if (st)
        return fail(&err);
    if (!c->quiet && ft_convert_kind(c->outdir) == 2)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d blob%s\n", prog, c->outdir, n_nodes, n_nodes == 1 ? "" : "s",
                ps.blobs, ps.blobs == 1 ? "" : "s");
    else if (!c->quiet)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d .npy file%s in %.*s.values/\n", prog, c->outdir, n_nodes,
                n_nodes == 1 ? "" : "s", files, files == 1 ? "" : "s", (int)strlen(c->outdir) - 5, c->outdir);
    return 0;
}

/* `compare A B`: B holds the expected values. */
static int cmd_compare(const cli *c)
{
    ft_error err = {0};
    ft_arrays a, b;
    if (ft_arrays_load(c->graph, &a, &err))
        return fail(&err);
    if (ft_arrays_load(c->graph2, &b, &err)) {
        ft_arrays_free(&a);
        return fail(&err);
    }
    int single = a.n == 1 && b.n == 1, problems = 0, bad = 0, compared = 0;
    for (int i = 0; i < b.n && !single; i++) {
        int found = 0;
        for (int j = 0; j < a.n && !found; j++)
            found = !strcmp(a.name[j], b.name[i]);
        if (!found) {
            fprintf(stderr, "%s: error: compare: '%s' is in %s but not in %s\n", prog, b.name[i], b.where[i], c->graph);
            problems++;
        }
    }
    for (int i = 0; i < a.n; i++) {
        int j = single ? 0 : -1;
        for (int k = 0; k < b.n && j < 0; k++)
            if (!strcmp(a.name[i], b.name[k]))
                j = k;
        if (j < 0) {
            fprintf(stderr, "%s: error: compare: '%s' is in %s but not in %s\n", prog, a.name[i], a.where[i], c->graph2);
            problems++;
            continue;
        }
        const ft_npy *x = &a.a[i], *y = &b.a[j];
        char label[1100], s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (!strcmp(a.name[i], b.name[j]))
            snprintf(label, sizeof label, "'%s'", a.name[i]);
        else
            snprintf(label, sizeof label, "'%s' vs '%s'", a.name[i], b.name[j]);
        if (x->dtype != y->dtype || !ft_shape_eq(&x->shape, &y->shape)) {
            fprintf(stderr, "%s: error: compare: %s: %s %s in %s but %s %s in %s\n", prog, label, ft_dtype_name(x->dtype),
                    ft_shape_str(&x->shape, s1), a.where[i], ft_dtype_name(y->dtype), ft_shape_str(&y->shape, s2), b.where[j]);
            problems++;
            continue;
        }
        ft_tol tol = pick_tol(c, x->dtype);
        ft_cmp cm;
        ft_compare(x->data, y->data, x->dtype, &x->shape, tol, &cm);
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "%s %s %s", label, ft_dtype_name(x->dtype), ft_shape_str(&x->shape, s1));
        ft_report_cmp(stdout, prefix, &cm, x->dtype, &x->shape, tol);
        compared++;
        bad += cm.n_bad != 0;
    }
    if (!c->quiet) {
        if (problems)
            fprintf(stderr, "%s: compare: %d problem%s with the operands (missing tensors, dtype or shape); %d of %d compared tensors out of tolerance\n",
                    prog, problems, problems == 1 ? "" : "s", bad, compared);
        else if (bad)
            fprintf(stderr, "%s: compare: %d of %d tensor%s out of tolerance\n", prog, bad, compared, compared == 1 ? "" : "s");
        else
            fprintf(stderr, "%s: compare: %d tensor%s\n", prog, compared, compared == 1 ? " matches" : "s match");
    }
    ft_arrays_free(&a);
    ft_arrays_free(&b);
    return stdout_status(problems ? FT_EGRAPH : bad ? FT_EMISMATCH : 0);
}

static int cmd_info(const cli *c)
{
    ft_error err = {0};
    ft_graph *g;
    if (load_graph(c, &g, &err) || ft_bind_apply(c->bind, g, 0, &err)) {
        ft_graph_free(g);
        return fail(&err);
    }
    ft_plan p;
    if (ft_plan_build(g, &p, &err)) {
        ft_graph_free(g);
        return fail(&err);
    }
    ft_print_info(stdout, g, &p);
    ft_plan_free(&p);
    ft_graph_free(g);
    return stdout_status(0);
}

static void catch_stop_signals(void);

/* Every place a run writes to, checked before it runs: the folder, each
 * result file in it, the trace. */
static ft_status check_run_outputs(const cli *c, const ft_graph *g, const char *dir, ft_error *err)
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

static int cmd_run(const cli *c)
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
    ft_backend_ctx *fb_ctx = NULL;
    if (c->threads > 0)
        omp_set_num_threads((int)c->threads); /* loading (CRC, inflate) uses threads too */
    double t0 = ft_now();
    ft_graph *g = NULL, *g0 = NULL; /* g0: the graph as read, for --check=O0 */
    ft_plan plan = {0};
    ft_backend_ctx *ctx = NULL;
    ft_run_result res = {0};
    ft_outset outs = {0};
    ft_npy *exp = NULL;
    char *timing = NULL;
    if (load_graph(c, &g, &err) || ft_bind_apply(c->bind, g, 1, &err) || check_output_names(g, &err)) {
        rc = fail(&err);
        goto out;
    }
    if (c->check_o0 && (load_graph_at(c, 0, &g0, NULL, &err) || ft_check_copy_inputs(g0, g, &err))) {
        ft_err_prefix(&err, "--check=O0: the graph as read");
        rc = fail(&err);
        goto out;
    }
    double load_ms = (ft_now() - t0) * 1e3;
    if (ft_exec_check(g, be, fb, &err)) {
        rc = fail(&err);
        goto out;
    }
    int n_fallback = 0;
    for (int k = 0; fb && k < g->n_nodes; k++) {
        const ft_node *n = &g->nodes[g->order[k]];
        ft_dtype dt = g->tensors[n->in[0]].dtype;
        if (ft_backend_supports(be, n->op, dt))
            continue;
        n_fallback++;
        if (!c->quiet)
            fprintf(stderr, "%s: warning: node '%s' (%s, %s) runs on the cpu: %s lacks it (--fallback cpu)\n", prog, n->name,
                    ft_op_name(n->op), ft_dtype_name(dt), devname);
    }
    t0 = ft_now();
    if ((c->check_nodes ? ft_plan_build_unshared(g, &plan, &err) : ft_plan_build(g, &plan, &err))) {
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
    const char *dir = c->outdir ? c->outdir : "ftrun-out";
    if (check_run_outputs(c, g, dir, &err)) { /* before anything runs */
        rc = fail(&err);
        goto out;
    }
    ft_backend_opts bo = {.device_index = devidx, .threads = (int)c->threads, .allow_tf32 = c->allow_tf32};
    if (be->open(&bo, &ctx, &err) || (fb && fb->open(&bo, &fb_ctx, &err))) {
        rc = fail(&err);
        goto out;
    }
    long cores = ft_usable_cores();
    if (c->threads > cores && !c->quiet)
        fprintf(stderr, "%s: warning: --threads %ld is more than the %ld core%s of this machine: the threads share them, "
                        "which slows the run and its timings\n", prog, c->threads, cores, cores == 1 ? "" : "s");
    if (c->cuda_graph && be->capture && n_fallback && !c->quiet)
        fprintf(stderr, "%s: warning: --cuda-graph is not used: %d node%s run on the cpu (--fallback cpu)\n", prog, n_fallback,
                n_fallback == 1 ? "" : "s");
    else if (c->cuda_graph && be->capture && (c->profile || c->trace) && !c->quiet)
        fprintf(stderr, "%s: warning: --cuda-graph is not used with --%s (per-node times need a sync after every node)\n",
                prog, c->profile ? "profile" : "trace");
    for (int k = 0; k < 2 && !c->quiet && be == &ft_cpu_backend; k++)
        if (c->device_only[k])
            fprintf(stderr, "%s: warning: --%s applies to CUDA devices; running on %s without it\n", prog, c->device_only[k],
                    devname);
    /* Neither -n, -w nor --duration: warm up for a fifth of the default
     * duration, then time runs for the whole of it (numbers worth quoting). */
    double dflt = c->given & (OB_ITER | OB_WARMUP | OB_DURATION) ? 0 : c->default_duration;
    ft_exec_opts eo = {
        .warmup = (int)c->warmup,
        .warmup_s = dflt / 5,
        .iterations = (int)(c->iterations ? c->iterations : 1),
        .duration_s = dflt > 0 ? dflt : c->duration,
        .threads = c->threads > 0 ? (int)c->threads : (cores > 0 ? (int)cores : 1),
        .follow_load = c->threads == 0, /* no --threads: the idle cores (src/runtime/threads.h) */
        .progress = !c->quiet && isatty(2),
        .profile = c->profile,
        .trace = c->trace != NULL,
        .cuda_graph = c->cuda_graph,
        .fallback = fb,
        .fallback_ctx = fb_ctx,
        .keep_tensors = c->check_nodes,
    };
    if (ft_exec_run(g, &plan, be, ctx, &eo, &res, &err)) {
        rc = fail(&err);
        goto out;
    }
    if (ft_mkdirs(dir, &err)) {
        rc = fail(&err);
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
            items[i] = (ft_npz_item){names[i], t->dtype, &t->shape, res.outputs[i]};
        }
        if (!st)
            st = ft_outset_npz(&outs, dir, "outputs.npz", items, g->n_outputs, &err);
        free(items);
        free(names);
        if (st) {
            ft_outset_abort(&outs);
            rc = fail(&err);
            goto out;
        }
    }
    for (int i = 0; i < g->n_outputs && write_npy; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        char fname[600];
        ft_sanitize_name(t->name, fname, sizeof fname - 8);
        strcat(fname, write_pb ? ".pb" : ".npy");
        if (write_pb ? ft_outset_pb(&outs, dir, fname, t->name, t->dtype, &t->shape, res.outputs[i], &err)
                     : ft_outset_npy(&outs, dir, fname, t->dtype, &t->shape, res.outputs[i], &err)) {
            ft_outset_abort(&outs);
            rc = fail(&err);
            goto out;
        }
    }
    ft_timing_info ti = {devname, be->describe(ctx), res.n_warmup, eo.iterations, load_ms, plan_ms, c->bind->random, c->bind->seed};
    timing = ft_timing_json(g, &plan, &res, &ti);
    /* the trace first, under a temporary name: if it cannot be written, no
     * result file appears either; it is renamed once the results are */
    ft_outfile tr = {0};
    if (c->trace && (ft_outfile_open(&tr, c->trace, FT_OUT_DASH, &err) || ft_trace_write(tr.f, c->trace, g, &res, devname, &err) ||
                     ft_outfile_close(&tr, &err))) {
        ft_outfile_abort(&tr);
        ft_outset_abort(&outs);
        rc = fail(&err);
        goto out;
    }
    if (!timing || ft_outset_text(&outs, dir, "timing.json", timing, &err) || ft_outset_commit(&outs, &err) ||
        (c->trace && ft_outfile_commit(&tr, &err))) {
        if (!timing)
            err = (ft_error){FT_ERUNTIME, "out of memory writing timing.json"};
        ft_outset_abort(&outs);
        ft_outfile_abort(&tr);
        rc = fail(&err);
        goto out;
    }
    if (c->profile && !c->quiet)
        ft_profile_print(stderr, g, &res);
    if (!c->quiet && res.n_runs >= 2)
        ft_timing_warnings(stderr, &res, (be != &ft_cpu_backend ? FT_WARN_TRANSFERS : 0) |
                                             ((c->given & OB_ITER) && !c->duration ? FT_WARN_FEW_RUNS : 0));
    if (!c->quiet)
        ft_print_summary(stderr, g, devname, &res, dir, write_npy || (c->format && !strcmp(c->format, "npz")));
    for (int i = 0; i < g->n_outputs && c->print; i++) {
        const ft_tensor *t = &g->tensors[g->outputs[i]];
        ft_show_array(stdout, t->name, t->dtype, &t->shape, res.outputs[i]);
    }
    if (c->print && stdout_status(0)) {
        rc = FT_ERUNTIME;
        goto out;
    }
    rc = exp ? check_expect(c, g, &res, exp) : 0;
    if (c->check) {
        ft_check_opts co = {prog, devname, stderr, eo.threads, c->quiet, c->verbose, c->have_rtol, c->have_atol, c->rtol, c->atol,
                            g0 ? "cpu -O0" : "cpu"};
        int bad1 = 0, bad2 = 0;
        if (ft_check_outputs(g0 ? g0 : g, &res, &co, &bad1, &err) || (c->check_nodes && ft_check_nodes(g, &res, &co, &bad2, &err))) {
            rc = fail(&err);
            goto out;
        }
        if ((bad1 || bad2) && !rc)
            rc = FT_EMISMATCH;
    }
out:
    if (exp)
        for (int i = 0; i < g->n_outputs; i++)
            ft_npy_clear(&exp[i]);
    free(exp);
    free(timing);
    ft_run_result_free(&res);
    if (ctx)
        be->close(ctx);
    if (fb_ctx)
        fb->close(fb_ctx);
    ft_plan_free(&plan);
    ft_graph_free(g);
    ft_graph_free(g0);
    return rc;
}

void ft_blas_tune(char **argv);

static void on_stop_signal(int sig) { ft_stop_signal = sig; }

/* During `run`, SIGINT and SIGTERM stop the work between nodes and remove any
 * result file in flight; a second signal ends ftrun at once. The other
 * commands keep the default action: their files appear by rename only. */
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
    sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* `ftrun ops --onnx`: the ONNX importer's catalogue (src/graph/onnx_ops.c). */
static void print_onnx_ops(FILE *f)
{
    const onx_op_status *l;
    int n = onx_op_catalogue(&l), cnt[3] = {0};
    for (int i = 0; i < n; i++) {
        const char *how = l[i].how == 'm' ? "mapped" : l[i].how == 'f' ? "folded" : "missing";
        cnt[l[i].how == 'm' ? 0 : l[i].how == 'f' ? 1 : 2]++;
        fprintf(f, "%-28s %-8s %s\n", l[i].op_type, how, l[i].note);
    }
    fprintf(f, "%d ONNX operators: %d mapped to ftrun ops, %d folded at load time only, %d missing\n", n, cnt[0],
            cnt[1], cnt[2]);
}

int main(int argc, char **argv)
{
    ft_blas_tune(argv); /* may execute ftrun again with better BLAS kernels */
    ft_bindings bind = {0};
    cli c = {.seed = -1, .bind = &bind, .opt_level = FT_OPT_DEFAULT};
    if (argc == 1) {
        usage(stderr);
        return FT_EUSAGE;
    }
    if (!strcmp(argv[1], "test"))
        return ft_cmd_test(argc - 1, argv + 1);
    int rc = parse_args(argc, argv, &c);
    const char *dd = getenv("FTRUN_DEFAULT_DURATION");
    c.default_duration = 1.0;
    if (!rc && dd && !strcmp(c.command, "run") && parse_double("FTRUN_DEFAULT_DURATION (environment)", dd, &c.default_duration))
        rc = FT_EUSAGE;
    if (!rc) {
        if (!strcmp(c.command, "devices")) {
            rc = cmd_devices();
        } else if (!strcmp(c.command, "ops") && c.onnx_ops) {
            print_onnx_ops(stdout);
        } else if (!strcmp(c.command, "ops")) {
            const ft_backend *be = NULL;
            char dn[32];
            int di;
            if (c.device && strcmp(c.device, "auto") && (rc = pick_device(c.device, 0, c.quiet, &be, &di, dn, sizeof dn)) != 0)
                goto done;
            ft_print_ops(stdout, be);
        } else if (!strcmp(c.command, "info")) {
            rc = cmd_info(&c);
        } else if (!strcmp(c.command, "pack")) {
            rc = cmd_pack(&c);
        } else if (!strcmp(c.command, "unpack")) {
            rc = cmd_unpack(&c);
        } else if (!strcmp(c.command, "convert")) {
            rc = cmd_convert(&c);
        } else if (!strcmp(c.command, "compare")) {
            rc = cmd_compare(&c);
        } else if (!strcmp(c.command, "show")) {
            ft_error err = {0};
            rc = ft_show_files(stdout, (const char *const *)c.pos, c.npos, &err) ? fail(&err) : stdout_status(0);
        } else {
            rc = cmd_run(&c);
        }
    }
done:
    if (ft_stop_signal) {
        /* whatever was in flight has been removed: no partial result files */
        fprintf(stderr, "%s: interrupted by %s; no results written\n", prog, ft_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        rc = 128 + ft_stop_signal;
    }
    ft_bindings_free(&bind);
    return rc;
}
