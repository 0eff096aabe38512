/* The command line's shared state: the options as parsed (args.c), the
 * command table (main.c) and the commands, each in a file of its own:
 * cmd_run.c (run), cmd_graph.c (info, pack, unpack, convert), cmd_misc.c
 * (devices, ops, compare, show) and test.c (test, which parses its own
 * options). Every command reaches a graph through the pipeline
 * (src/pipeline/pipeline.h).
 *
 *   ft_bindings bind = {0};
 *   ft_cli c = {.seed = -1, .bind = &bind, .opt_level = FT_OPT_DEFAULT};
 *   static const ft_command table[] = {{"info", ft_cmd_info, OB_OPT, 1, 1, "a GRAPH file", "info GRAPH\n"}};
 *   const ft_command *cmd;
 *   int rc = ft_parse_args(argc, argv, table, 1, &c, &cmd);   // an exit status, 0 ok
 *   if (!rc)
 *       rc = cmd->run(&c);
 *   ft_bindings_free(&bind);
 *
 * Ownership: ft_cli points into argv and at the caller's bindings.
 */
#ifndef FT_CLI_CLI_H
#define FT_CLI_CLI_H

#include <stdio.h>

#include "../graph/graph.h"
#include "../pipeline/pipeline.h"
#include "compare.h"
#include "inputs.h"

typedef struct ft_cli {
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
    int json;      /* --json: info, ops, devices */
    const char *tuning_cache; /* --tuning-cache FILE (tuning_file.h) */
    long loop_limit;          /* --loop-limit N (0: FT_LOOP_LIMIT, runtime/exec.h) */
    unsigned given;            /* OB_* bits of the options given */
    const char *given_name[32]; /* the spelling of each, for messages */
    int given_order[32], n_given;
} ft_cli;

/* Options and the commands that take them (-q, -v, -h, -V go everywhere). */
enum {
    OB_DEVICE = 1u << 0, OB_INPUT = 1u << 1, OB_OUTDIR = 1u << 2, OB_FORMAT = 1u << 3, OB_WARMUP = 1u << 4,
    OB_ITER = 1u << 5, OB_DURATION = 1u << 6, OB_EXPECT = 1u << 7, OB_RTOL = 1u << 8, OB_ATOL = 1u << 9,
    OB_SEED = 1u << 10, OB_THREADS = 1u << 11, OB_DRYRUN = 1u << 12, OB_COMPRESS = 1u << 13, OB_PROFILE = 1u << 14,
    OB_TRACE = 1u << 15, OB_DEVICE_ONLY = 1u << 16, OB_EXTERNAL = 1u << 17, OB_CHECK = 1u << 18, OB_FALLBACK = 1u << 19,
    OB_DIMS = 1u << 20, OB_RANDOM = 1u << 21, OB_ONNX = 1u << 22, OB_PRINT = 1u << 23, OB_OPT = 1u << 24,
    OB_JSON = 1u << 25, OB_TUNING = 1u << 26, OB_LOOP = 1u << 27,
};

/* A row of the command table (main.c). */
typedef struct ft_command {
    const char *name;
    int (*run)(const ft_cli *c);  /* returns the exit status */
    unsigned allowed;             /* OB_* options it takes */
    int min_pos, max_pos;         /* operands */
    const char *operands;         /* for "needs ..." messages */
    const char *synopsis;         /* its lines of --help's "Usage:" (after "ftrun ") */
} ft_command;

extern const char *const ft_prog; /* "ftrun", the prefix of every message */
/* Set (atomically) by whoever prints the line of an interruption (main.c, or
 * the handler of a second signal in cmd_run.c), so that it is printed once. */
extern int ft_stop_reported;

/* args.c: argv -> c and the command of the table (the first row, run, when
 * argv[1] names none). Returns an exit status: 0, or FT_EUSAGE after the
 * message. */
int ft_parse_args(int argc, char **argv, const ft_command *commands, int n_commands, ft_cli *c, const ft_command **cmd);
/* --help's text on f: the table's synopses, then the options (args.c). */
void ft_usage(FILE *f, const ft_command *commands, int n_commands);
/* --version: "ftrun VERSION", then the compiler, the backends (whether the
 * CUDA backend was built), the libraries' versions and the CPU's features
 * (version.c). */
void ft_print_version(FILE *f);
/* A number in an option or variable: 0, or FT_EUSAGE after the message. */
int cli_parse_double(const char *opt, const char *s, double *out);

/* cliutil.c: */
/* "ftrun: error: MESSAGE" on stderr (nothing once SIGINT or SIGTERM has
 * stopped a run: main says that in one line); returns the error's exit status. */
int cli_fail(const ft_error *err);
/* rc, or FT_ERUNTIME after a message when standard output could not be written. */
int cli_stdout_status(int rc);
/* --rtol/--atol where given, else the dtype's default. */
ft_tol cli_tol(const ft_cli *c, ft_dtype dt);
/* The pipeline's load step with the command line's options (-i files read
 * first: their shapes bind dims; --seed; --allow-external-files) at the
 * optimizer level `level`. */
ft_status cli_load(const ft_cli *c, int level, ft_pipeline *p, ft_error *err);
/* The same, with the input dims nothing binds given the stand-in sizes of
 * u (graph.h: info, convert); u NULL is cli_load. */
ft_status cli_load_unbound(const ft_cli *c, int level, ft_unbound *u, ft_pipeline *p, ft_error *err);

/* The commands. */
int ft_cmd_run(const ft_cli *c);
int ft_cmd_info(const ft_cli *c);
int ft_cmd_pack(const ft_cli *c);
int ft_cmd_unpack(const ft_cli *c);
int ft_cmd_convert(const ft_cli *c);
int ft_cmd_devices(const ft_cli *c);
int ft_cmd_ops(const ft_cli *c);
int ft_cmd_compare(const ft_cli *c);
int ft_cmd_show(const ft_cli *c);

#endif
