/* ftrun command line: the command table and the dispatch. Each command lives
 * in a file of its own (cli.h); none of them knows kernels: they go through
 * the pipeline (src/pipeline/pipeline.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "test.h"
#include "../graph/str.h"

/* The commands, in --help's order; the first is the default (a graph file
 * as the first operand runs it). test parses its own options (test.c). */
static const ft_command commands[] = {
    {"run", ft_cmd_run, ~(unsigned)OB_COMPRESS, 1, 1, "a GRAPH file",
     "[run] GRAPH [OPTIONS]   run a graph (the default command)\n"},
    {"info", ft_cmd_info, OB_EXTERNAL | OB_INPUT | OB_DIMS | OB_RANDOM | OB_OPT | OB_JSON, 1, 1, "a GRAPH file",
     "info GRAPH [-i NAME=FILE] [--dim NAME=N] [--shape INPUT=D0,D1,...] [-O LEVEL] [--json]\n"
     "                        inputs, outputs, nodes with shapes, FLOPs, bytes, memory plan; named dims\n"
     "                        left unbound are shown by name (--json: one JSON document)\n"},
    {"ops", ft_cmd_ops, OB_DEVICE | OB_ONNX | OB_JSON, 0, 0, "",
     "ops [--device DEV] [--json]  every op with the dtypes each backend implements\n"
     "ops --onnx [--json]     every ONNX operator and what ftrun makes of it\n"},
    {"devices", ft_cmd_devices, OB_JSON, 0, 0, "", "devices [--json]        the devices this machine offers\n"},
    {"pack", ft_cmd_pack, OB_OUTDIR | OB_COMPRESS | OB_SEED | OB_EXTERNAL | OB_DIMS | OB_OPT, 1, 1, "a GRAPH file",
     "pack GRAPH -o OUT.ftg [--compress]   JSON graph -> binary graph (--compress: zlib blobs; -o -: stdout)\n"},
    {"unpack", ft_cmd_unpack, OB_OUTDIR | OB_DIMS, 1, 1, "a GRAPH file",
     "unpack GRAPH.ftg -o DIR              binary graph -> DIR/graph.json + one .npy per value\n"},
    {"convert", ft_cmd_convert, OB_OUTDIR | OB_COMPRESS | OB_SEED | OB_EXTERNAL | OB_DIMS | OB_OPT, 1, 1, "a MODEL file",
     "convert MODEL -o OUT.json|OUT.ftg    any graph file -> ftrun graph (OUT.json: values in\n"
     "                                     OUT.values/); takes --dim, --shape, --compress (.ftg)\n"},
    {"compare", ft_cmd_compare, OB_RTOL | OB_ATOL, 2, 2, "two operands, A and B",
     "compare A B [--rtol R] [--atol A]    compare .npy files, .npz files or result folders\n"},
    {"show", ft_cmd_show, 0, 1, INT_MAX, "one or more .npy or .npz files or result folders",
     "show FILE...                         print arrays (.npy, .npz, result folders) as NumPy does\n"},
    {"test", NULL, 0, 1, INT_MAX, "one or more test folders",
     "test DIR... [-d DEV] [-j N] [--threads N] [--timeout SEC] [-O LEVEL] [--rtol R] [--atol A]\n"
     "             [--exclude PATTERN] [--exclude-from FILE] [--shard K/N] [--junit FILE] [--json]\n"
     "             [--save-outputs DIR] [-q] [-v]\n"
     "             run test folders (ONNX backend-test layout or ftrun's own); exit 1 if a case fails\n"
     "             (ftrun test --help: its options)\n"},
};
static const int n_commands = (int)(sizeof commands / sizeof commands[0]);

void ft_blas_tune(char **argv);

int main(int argc, char **argv)
{
    ft_blas_tune(argv); /* may execute ftrun again with better BLAS kernels */
    atexit(ft_str_store_free); /* the strings of string tensors (graph/str.h) */
    if (argc == 1) {
        ft_usage(stderr, commands, n_commands);
        return FT_EUSAGE;
    }
    if (!strcmp(argv[1], "test"))
        return ft_cmd_test(argc - 1, argv + 1);
    ft_bindings bind = {0};
    ft_cli c = {.seed = -1, .bind = &bind, .opt_level = FT_OPT_DEFAULT};
    const ft_command *cmd = NULL;
    int rc = ft_parse_args(argc, argv, commands, n_commands, &c, &cmd);
    const char *dd = getenv("FTRUN_DEFAULT_DURATION");
    c.default_duration = 1.0;
    if (!rc && dd && cmd->run == ft_cmd_run &&
        cli_parse_double("FTRUN_DEFAULT_DURATION (environment)", dd, &c.default_duration))
        rc = FT_EUSAGE;
    if (!rc)
        rc = cmd->run(&c);
    if (ft_stop_signal) {
        /* whatever was in flight has been removed: no partial result files;
         * the one line (the errors the interruption caused are not printed,
         * cli_fail) */
        if (!__atomic_exchange_n(&ft_stop_reported, 1, __ATOMIC_SEQ_CST))
            fprintf(stderr, "%s: interrupted by %s; no results written\n", ft_prog,
                    ft_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
        rc = 128 + ft_stop_signal;
    }
    ft_bindings_free(&bind);
    return rc;
}
