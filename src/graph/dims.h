/* Symbolic dims: input shapes that name a dim ("batch") or leave it unnamed,
 * fixed at load time from --dim NAME=N, --shape INPUT=D0,D1,... and the shapes
 * of the files given with -i. JSON graphs (a shape entry that is a string) and
 * ONNX models (dim_param, or a dim with neither value nor name) both resolve
 * their inputs through this.
 *
 *   ft_dimenv *e = ft_dimenv_new(opts);               // opts: the bindings
 *   ft_symdim d[2] = {{-1, "batch"}, {128, NULL}};
 *   ft_shape s;
 *   if (ft_dimenv_resolve(e, "m.onnx", "x", 2, d, &s, &err)) ...  // s = [N,128]
 *   ...                                               // every input
 *   if (ft_dimenv_finish(e, "m.onnx", &err)) ...      // bindings that matched nothing
 *   ft_dimenv_free(e);
 *
 * (messages: "m.onnx: input 'x' dim 0 ('batch') is not known: pass --dim
 * batch=N, ...", "m.onnx: --dim batch=4 but -i x=a.npy has shape [2,3]
 * (dim 0 'batch')", "--shape y=2: 'y' is not an input of m.onnx (its
 * inputs: 'x')")
 *
 * Ownership: the environment copies nothing from opts (the bindings must
 * outlive it) and owns its own records; ft_dimenv_free(NULL) is a no-op.
 */
#ifndef FT_DIMS_H
#define FT_DIMS_H

#include "graph.h"

/* One declared dim: a number (name NULL, value >= 0), a name (value -1), or
 * unnamed (value -1, name NULL). */
typedef struct ft_symdim {
    int64_t value;
    const char *name;
} ft_symdim;

typedef struct ft_dimenv ft_dimenv;

ft_dimenv *ft_dimenv_new(const ft_load_opts *opts); /* NULL: out of memory */
void ft_dimenv_free(ft_dimenv *e);
/* The concrete shape of input `input` declared with dims[0..rank-1]: from a
 * shape binding of that input (checked against the declared numbers, and
 * binding its names), else each named dim from a --dim binding or from an
 * earlier input that fixed it. A name means one value across the whole graph.
 * Fails (FT_EGRAPH) naming file, input, dim and the option that would fix it. */
ft_status ft_dimenv_resolve(ft_dimenv *e, const char *file, const char *input, int rank, const ft_symdim *dims,
                            ft_shape *out, ft_error *err);
/* Optional, before the first resolve: declare every input, so that a name
 * fixed by the shape binding of a later input is known to an earlier one
 * (without it, inputs resolve in call order; json_tensors.c and
 * onnx_reader.c declare). dims are copied; their names must outlive e. */
ft_status ft_dimenv_declare(ft_dimenv *e, const char *input, int rank, const ft_symdim *dims, ft_error *err);
/* An input that is not a tensor (an ONNX sequence or optional value, read by
 * onnx_seq_io.c): its bindings are its reader's, never unmatched here. */
ft_status ft_dimenv_declare_value(ft_dimenv *e, const char *input, ft_error *err);
/* A tensor whose shape is fixed by its value (origin, for messages: "file
 * w.npy"): the numbers are checked and the names bound from shape. */
ft_status ft_dimenv_fix(ft_dimenv *e, const char *file, const char *tensor, const char *origin, int rank,
                        const ft_symdim *dims, const ft_shape *shape, ft_error *err);
/* The dims known so far into out (-1 where a name is not bound yet): the
 * number of unknown dims, or -1 on failure (a --dim conflict; err filled). */
int ft_dimenv_known(ft_dimenv *e, const char *file, int rank, const ft_symdim *dims, ft_shape *out, ft_error *err);
/* After every input: a --dim or --shape that matched nothing is an error
 * naming it and the names the graph has. */
ft_status ft_dimenv_finish(ft_dimenv *e, const char *file, ft_error *err);

#endif
