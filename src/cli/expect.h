/* Expected values of a graph's outputs: the one loader for `ftrun run
 * --expect` (src/cli/cmd_run.c) and `ftrun test` (src/cli/test_case.c).
 * A source is either a path (an .npz file with a member NAME.npy per output,
 * a single .npy or .pb file for a graph of one output, or a folder of
 * NAME.npy / NAME.pb files) or the files of a test data set (output_K by
 * position, a SequenceProto or OptionalProto for a sequence or optional
 * output; expected/NAME by name). Every array is read, converted to its
 * output's dtype and checked against its shape (ft_shape_fits, run-time dims
 * accepted); an error names the output and the file:
 * "output 'y' is f32 but FILE holds i64", "output 'y' has shape [2,3] but
 * FILE has shape [3]", "output 'y': FILE: <why it could not be read>".
 * Errors are FT_EGRAPH (exit status 3), FT_ERUNTIME when out of memory.
 *
 * The caller owns exp (g->n_outputs zeroed arrays) and clears each array
 * with ft_npy_clear, also after a failure.
 *
 *   ft_npy *exp = calloc(g->n_outputs, sizeof *exp);
 *   ft_expect_src src = {.path = "gold.npz"};
 *   if (ft_expect_load(g, &src, exp, &err)) ...;
 *   for (int i = 0; i < g->n_outputs; i++) ft_npy_clear(&exp[i]);
 *   free(exp);
 */
#ifndef FT_CLI_EXPECT_H
#define FT_CLI_EXPECT_H

#include "../graph/graph.h"
#include "../io/npy.h"

typedef struct ft_expect_src {
    const char *path;  /* --expect FILE|DIR; NULL: the data set's files below */
    char *const *pos;  /* output_K files, K = 0 .. n_pos-1 (the K-th output, or group when the graph has groups) */
    int n_pos;
    char *const *named; /* expected/NAME files: NAME is an output's name or its sanitised form */
    int n_named;
    int need_all;       /* every output of some bytes needs a value (a data set without --save-outputs) */
} ft_expect_src;

ft_status ft_expect_load(const ft_graph *g, const ft_expect_src *src, ft_npy *exp, ft_error *err);

/* The index among list[0..n) (graph inputs or outputs) of the tensor a data
 * set's file names (path's stem, less .npy or .pb, is the tensor's name or
 * its sanitised form), or -1. */
int ft_file_tensor(const ft_graph *g, const int *list, int n, const char *path);
/* The names of list[0..n) as "'a', 'b'" in buf, for messages ("none" when n is 0). */
const char *ft_tensor_list(const ft_graph *g, const int *list, int n, char *buf, size_t sz);

#endif
