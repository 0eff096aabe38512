/* The command line's options: --help's text and getopt_long's table, parsed
 * into an ft_cli for the command the table in main.c names (cli.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliutil.h"
#include "convert.h"

void ft_usage(FILE *f, const ft_command *commands, int n_commands)
{
    for (int i = 0; i < n_commands; i++) {
        const char *s = commands[i].synopsis;
        for (int first = 1; *s; first = 0) {
            const char *e = strchr(s, '\n');
            int len = e ? (int)(e - s) : (int)strlen(s);
            /* a line that starts with a word is another form of the command */
            if (first || *s != ' ')
                fprintf(f, "%s%s %.*s\n", i == 0 && first ? "Usage: " : "       ", ft_prog, len, s);
            else
                fprintf(f, "             %.*s\n", len, s);
            s += len + (e != NULL);
        }
    }
    fprintf(f,
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
            "  -w, --warmup N          untimed runs first (default 2; -w 0 times the cold run)\n"
            "  -n, --iterations N      timed runs (-n 1: one timed run)\n"
            "      --duration SEC      keep running timed iterations until SEC seconds have passed (at least -n)\n"
            "                          (none of the three: 0.2 s of warm-up, then 1 s of timed runs)\n"
            "      --expect FILE|DIR   compare outputs to golden values (.npy or .npz file, or folder of .npy)\n"
            "      --rtol R, --atol A  tolerances: pass when |x-y| <= atol + rtol*|y| (defaults per dtype, f32 1e-4\n"
            "                          and 1e-5; a default atol is scaled by the output's largest |y| when above 1)\n"
            "      --seed N            replace the seed of every random init\n"
            "      --threads N         CPU threads (default: the cores other processes leave idle,\n"
            "                          looked at every 10 ms; at most all cores, at least 1)\n"
            "      --dry-run           parse, validate, infer shapes, plan memory; run nothing\n"
            "      --tuning-cache FILE  the CPU convs' timed choices of form: taken from FILE instead of timed,\n"
            "                          and those timed added to it after a successful run (created if missing)\n"
            );
    /* the passes of each level, from the optimizer's table (optimize.h) */
    char words[FT_OPT_N_PASSES + 8][48];
    int nw = 0;
    snprintf(words[nw++], sizeof words[0], "graph optimizer: 0 none;");
    for (int level = 1; level <= FT_OPT_DEFAULT; level++) {
        snprintf(words[nw++], sizeof words[0], "%d%s", level, level == 1 ? "" : level == FT_OPT_DEFAULT ? " (default) also" : " also");
        for (int i = 0; i < FT_OPT_N_PASSES; i++)
            if (ft_opt_pass_level((ft_opt_pass)i) == level)
                snprintf(words[nw++], sizeof words[0], "%s%s", ft_opt_pass_name((ft_opt_pass)i), ";");
    }
    snprintf(words[nw++], sizeof words[0], "also for info, pack, convert, test");
    for (int i = 1; i < nw; i++) /* a comma between the passes of a level, a semicolon after its last */
        if (words[i][strlen(words[i]) - 1] == ';' && i + 1 < nw && words[i + 1][strlen(words[i + 1]) - 1] == ';')
            words[i][strlen(words[i]) - 1] = ',';
    int col = fprintf(f, "  -O LEVEL                %s", words[0]);
    for (int i = 1; i < nw; i++) {
        if (col + 1 + (int)strlen(words[i]) > 100)
            col = fprintf(f, "\n                         ") - 1;
        col += fprintf(f, " %s", words[i]);
    }
    fprintf(f, "\n");
    fprintf(f,
            "      --allow-external-files  let the graph's \"file\" values name files outside its folder\n"
            "      --print             print every output on stdout as NumPy does (dtype, shape, min/max/mean, values)\n"
            "      --profile           time every node: table on stderr, \"nodes\" in timing.json\n"
            "      --trace FILE        Chrome trace-event JSON of the timed runs (Perfetto, chrome://tracing; -: stdout)\n"
            "      --check[=cpu|O0]    also run on the CPU reference backend and compare every output; O0: the\n"
            "                          reference runs the graph as read, without the optimizer\n"
            "      --check-nodes       with --check: recompute every node on the CPU from the inputs the device\n"
            "                          saw and name the first node whose outputs differ\n"
            "      --fallback cpu      run ops the device lacks on the CPU, with a warning naming them\n"
            "      --loop-limit N      the most iterations a loop known only at run time makes (default 1000000)\n"
            "      --cuda-graph        capture one run as a CUDA graph and replay it for the timed runs\n"
            "      --allow-tf32        let f32 matrix products use TF32 tensor cores\n"
            "                          (--cuda-graph and --allow-tf32 do nothing on the CPU; a warning says so)\n"
            "  -q, --quiet             only errors on stderr\n"
            "  -v, --verbose           more detail on stderr\n"
            "  -h, --help              this help\n"
            "  -V, --version           the version, then the compiler, backends, libraries and CPU features\n"
            "      --json              info, ops, devices (and test): one JSON document on stdout (ftrun(1), JSON OUTPUT)\n"
            "\n"
            "Exit status: 0 success, 1 comparison out of tolerance, 2 usage error,\n"
            "3 invalid graph or input, 4 run-time failure, 130/143 stopped by SIGINT/SIGTERM.\n"
            "See ftrun(1) and ftrun-graph(5).\n");
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

int cli_parse_double(const char *opt, const char *s, double *out)
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
    OPT_DIM, OPT_SHAPE, OPT_RANDOM, OPT_RANDOM_RANGE, OPT_ONNX, OPT_PRINT, OPT_JSON, OPT_TUNING,
    OPT_LOOP_LIMIT,
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
    {"json", no_argument, 0, OPT_JSON},
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
    {"tuning-cache", required_argument, 0, OPT_TUNING},
    {"loop-limit", required_argument, 0, OPT_LOOP_LIMIT},
    {0, 0, 0, 0},
};

static void note_opt(ft_cli *c, unsigned bit, const char *name)
{
    int b = __builtin_ctz(bit);
    if (!(c->given & bit)) {
        c->given_name[b] = name;
        c->given_order[c->n_given++] = b;
    }
    c->given |= bit;
}

int ft_parse_args(int argc, char **argv, const ft_command *commands, int n_commands, ft_cli *c, const ft_command **command)
{
    int first = 1, cmd = 0;
    c->command = "run";
    if (argc > 1)
        for (int i = 0; i < n_commands; i++)
            if (commands[i].run && strcmp(argv[1], commands[i].name) == 0) {
                c->command = commands[i].name;
                cmd = i;
                first = 2;
            }
    *command = &commands[cmd];
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
                return cli_fail(&(ft_error){rc, "out of memory reading the command line"});
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
        case OPT_DURATION: if (cli_parse_double("--duration", optarg, &c->duration)) return FT_EUSAGE; note_opt(c, OB_DURATION, "--duration"); break;
        case OPT_EXPECT: c->expect = optarg; note_opt(c, OB_EXPECT, "--expect"); break;
        case OPT_ONNX: c->onnx_ops = 1; note_opt(c, OB_ONNX, "--onnx"); break;
        case OPT_JSON: c->json = 1; note_opt(c, OB_JSON, "--json"); break;
        case OPT_RTOL: if (cli_parse_double("--rtol", optarg, &c->rtol)) return FT_EUSAGE; c->have_rtol = 1; note_opt(c, OB_RTOL, "--rtol"); break;
        case OPT_ATOL: if (cli_parse_double("--atol", optarg, &c->atol)) return FT_EUSAGE; c->have_atol = 1; note_opt(c, OB_ATOL, "--atol"); break;
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
        case OPT_LOOP_LIMIT:
            if (parse_long("--loop-limit", optarg, 1, LONG_MAX, &c->loop_limit))
                return FT_EUSAGE;
            note_opt(c, OB_LOOP, "--loop-limit");
            break;
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
        case OPT_TUNING:
            if (!*optarg)
                return usage_error("option --tuning-cache needs a file name");
            c->tuning_cache = optarg;
            note_opt(c, OB_TUNING, "--tuning-cache");
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
        case 'h': ft_usage(stdout, commands, n_commands); exit(0);
        case 'V': ft_print_version(stdout); exit(cli_stdout_status(0));
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
