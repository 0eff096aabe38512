/* Graph inputs from the command line: --dim, --shape and the files of -i
 * (read before the graph is loaded, into the one list of the inputs' shapes
 * and values, src/pipeline/values.h, whose shapes bind symbolic dims and
 * whose values the ONNX importer may compute with), then given to the loaded
 * graph, and --random-inputs.
 *
 *   ft_bindings b = {0};
 *   char msg[512];
 *   if (ft_bind_dim_arg(&b, "batch=4", msg, sizeof msg)) ...  // usage error msg (exit 2)
 *   if (ft_bind_input_arg(&b, "x=a.npy", msg, sizeof msg)) ...
 *   if (ft_bind_read_files(&b, &err)) ...                    // reads every -i file
 *   ft_pipeline_opts po = {.load = {.seed_override = -1}, .inputs = &b.vals};
 *   ft_bind_load_opts(&b, &po.load);                          // the --dim bindings
 *   ft_pipeline_load(&p, path, &po, &err);
 *   if (ft_bind_apply(&b, p.g, 1, &err)) ...                  // values, random, presence
 *   ft_bindings_free(&b);
 *
 * Ownership: the bindings own their strings and the list; ft_bind_apply
 * hands each array's bytes to its tensor. ft_bindings_free releases the
 * rest; a zeroed ft_bindings is valid.
 */
#ifndef FT_CLI_INPUTS_H
#define FT_CLI_INPUTS_H

#include <stddef.h>

#include "../graph/graph.h"
#include "../io/npy.h"
#include "../pipeline/pipeline.h"

typedef struct ft_bindings {
    ft_dim_bind *dims;
    int n_dims;
    ft_values vals;            /* the --shape options, then the -i files' arrays once read */
    char **in_name, **in_file; /* -i NAME=FILE */
    int n_in, read;
    int random;                /* --random-inputs given */
    uint64_t seed;             /* its seed (default 0) */
    int have_range;
    double lo, hi; /* --random-range */
} ft_bindings;

/* Option parsers: 0, or FT_EUSAGE with the reason in msg. */
int ft_bind_dim_arg(ft_bindings *b, const char *arg, char *msg, size_t n);    /* NAME=N */
int ft_bind_shape_arg(ft_bindings *b, const char *arg, char *msg, size_t n);  /* INPUT=D0,D1,... ("INPUT=": scalar) */
int ft_bind_input_arg(ft_bindings *b, const char *arg, char *msg, size_t n);  /* NAME=FILE */
int ft_bind_random_arg(ft_bindings *b, const char *arg, char *msg, size_t n); /* [SEED], arg may be NULL */
int ft_bind_range_arg(ft_bindings *b, const char *arg, char *msg, size_t n);  /* LO,HI */

/* Read every -i file into b->vals (ft_values_read: an array, or a sequence
 * for an ONNX sequence or optional input). Idempotent. */
ft_status ft_bind_read_files(ft_bindings *b, ft_error *err);
/* Point o at the --dim bindings (they stay owned by b); the shapes and
 * values are b->vals (ft_pipeline_opts.inputs). */
void ft_bind_load_opts(const ft_bindings *b, ft_load_opts *o);
/* Give g's inputs their values: the -i arrays (ft_values_apply), then random
 * values for the inputs still without one when --random-inputs was given.
 * With require, an input left without a value is an error saying how to
 * supply one. */
ft_status ft_bind_apply(ft_bindings *b, ft_graph *g, int require, ft_error *err);
void ft_bindings_free(ft_bindings *b);

/* The default range of --random-inputs for dtype dt: [-1, 1) for floats,
 * [0, 10) for integers, [0, 2) for bool. */
void ft_random_range(ft_dtype dt, double *lo, double *hi);

#endif
