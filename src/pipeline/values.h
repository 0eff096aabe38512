/* What is known of a graph's inputs before the graph is loaded, as one
 * typed list that the loader and the binder both read: shapes alone
 * (--shape), the arrays of the files given with -i (read here, once, by
 * arrays.h's readers), and the tensors of sequence and optional inputs (an
 * .npz of 0.npy ... N-1.npy, or a data set's SequenceProto / OptionalProto
 * file).
 *
 * The loader sees the list as shape bindings (ft_values_load_opts, graph.h's
 * ft_shape_bind): their shapes bind symbolic dims (dims.h), and their values
 * let the ONNX importer compute parameter inputs (Reshape's shape, Slice's
 * starts, ...) at load time and give a sequence or optional input its
 * tensors. After the load, ft_values_apply gives the graph's tensor inputs
 * the arrays of the -i files (the run's values).
 *
 *   ft_values v = {0};
 *   if (ft_values_add_shape(&v, "x", &s, "--shape", &err) || ft_values_read(&v, "y", "y.npz", &err)) ...
 *   ft_load_opts o = {.seed_override = -1};
 *   ft_values_load_opts(&v, &o);       // what ft_pipeline_opts.inputs does (pipeline.h)
 *   if (ft_graph_load("m.onnx", &o, &g, &err) || ft_values_apply(&v, g, &err)) ...
 *   ft_values_free(&v);
 *
 * Ownership: the list owns its strings and arrays; ft_values_apply hands
 * each applied array's bytes to its tensor. A zeroed ft_values is an empty
 * list; ft_values_free leaves it empty again.
 */
#ifndef FT_PIPELINE_VALUES_H
#define FT_PIPELINE_VALUES_H

#include "../graph/graph.h"
#include "../io/npy.h"

typedef struct ft_values {
    ft_shape_bind *b; /* the loader's view: b[i].data points into a[i] (NULL for a shape alone) */
    ft_npy *a;        /* a[i]: the array of entry i (empty for a shape alone and a sequence's length) */
    unsigned char *given; /* 1: entry i is a tensor or sequence read from a -i file (ft_values_read) */
    int n, cap;
} ft_values;

/* A shape alone for input (origin names it in messages: "--shape"). */
ft_status ft_values_add_shape(ft_values *v, const char *input, const ft_shape *s, const char *origin, ft_error *err);
/* The file of -i INPUT=PATH (.npy, an .npz member INPUT.npy or its only
 * member, a TensorProto .pb): its array. An .npz whose members are 0.npy ...
 * N-1.npy is also (or, when it is not one array, only) a sequence of N
 * tensors (FT_BIND_SEQ then N FT_BIND_ELEM entries), for an ONNX sequence or
 * optional input. */
ft_status ft_values_read(ft_values *v, const char *input, const char *path, ft_error *err);
/* A SequenceProto (optional 0) or OptionalProto (1) file: its length and
 * tensors (an empty optional: length -1). */
ft_status ft_values_read_pb(ft_values *v, const char *input, const char *path, int optional, ft_error *err);
/* An array read by the caller, taken over (*a is left empty), as the value
 * of input; origin names its file. Not applied by ft_values_apply. */
ft_status ft_values_add_array(ft_values *v, const char *input, const char *origin, ft_npy *a, ft_error *err);
/* The array of the tensor entry whose file is origin, taken over into *out
 * (its entry keeps the shape, without the values): 0, or -1 when the list
 * has none. */
int ft_values_take(ft_values *v, const char *origin, ft_npy *out);
/* Point o's shape bindings at the list (it must outlive the load). */
void ft_values_load_opts(const ft_values *v, ft_load_opts *o);
/* Give g's tensor inputs the arrays of the -i files (converted to the
 * input's dtype, shape checked); a sequence given for a tensor input, or a
 * file for a name that is no input, is an error. A sequence or optional
 * input's tensors were given by the loader. */
ft_status ft_values_apply(ft_values *v, ft_graph *g, ft_error *err);
void ft_values_free(ft_values *v);

#endif
