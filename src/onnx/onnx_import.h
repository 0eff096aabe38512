/* ONNX import, the side the op mappers see (onnx_ops*.c).
 *
 * The reader (onnx_reader.c) walks the model's nodes in file order. For each
 * node it first tries load-time folding (onnx_fold.c: shape arithmetic whose
 * inputs are all known, see ft_onnx_fold); otherwise it calls the node's
 * mapper from the table in onnx_ops.c, which emits one ftrun node or a short
 * fixed expansion. After a mapper returns, the reader infers the dtype and
 * shape of everything it emitted, so the next node sees static shapes.
 *
 * A mapper:
 *
 *   static ft_status map_gemm(onx_ctx *c, const onx_node *n)
 *   {
 *       ft_node *g = onx_emit(c, n, FT_OP_GEMM, NULL, -1, NULL, -1); // inputs/outputs as in ONNX
 *       if (!g) return onx_status(c);
 *       ft_status st = onx_set_f(c, g, "alpha", onx_attr_f(n, "alpha", 1.0));
 *       return st ? st : onx_set_i(c, g, "trans_a", onx_attr_i(n, "transA", 0));
 *   }
 *
 * Parameters ONNX passes as inputs that ftrun takes as attributes are read
 * with onx_const_ints / onx_const_floats; an input that is computed at run
 * time is an error naming the node, op, input and reason. An attribute value
 * or dtype ftrun does not support is reported with onx_unsupported: the reader
 * collects every such report of the model into one message (exit 3) and goes
 * on with the next node.
 *
 * Ownership: the context owns everything it hands out (strings, value lists);
 * it lives until ft_onnx_load returns. Emitted nodes and tensors belong to the
 * graph being built.
 */
#ifndef FT_ONNX_IMPORT_H
#define FT_ONNX_IMPORT_H

#include "../graph/graph.h"

typedef struct onx_ctx onx_ctx;
struct Onnx__NodeProto;

typedef struct onx_node {
    const char *name;    /* the node's name, or "<OpType>_<index>" when it has none */
    const char *op_type; /* e.g. "Conv" */
    int index;           /* position in the graph's node list */
    int opset;           /* default-domain opset version the model imports */
    int n_in, n_out;     /* as in the model, omitted ("") inputs included */
    const struct Onnx__NodeProto *pb;
} onx_node;

/* ---- inputs ---- */
/* Tensor index (in the graph being built) of input k, or -1 when k >= n_in or
 * the input is omitted (""). Its dtype and shape are known. */
int onx_in(onx_ctx *c, const onx_node *n, int k);
const ft_tensor *onx_in_tensor(onx_ctx *c, const onx_node *n, int k); /* NULL when absent */
/* The value of input k when it is known at load time (initializer, Constant,
 * folded), else NULL. */
const ft_tensor *onx_in_const(onx_ctx *c, const onx_node *n, int k);
/* The same, or else input k computed now from the values known at load
 * (ft_load_opts.eval: constants and inputs given with -i); NULL when it
 * cannot be, and *st set when computing it failed (an error to report). */
const ft_tensor *onx_in_value(onx_ctx *c, const onx_node *n, int k, ft_status *st);
/* The same for tensor t (-1: none) of the graph being built. */
const ft_tensor *onx_value_of(onx_ctx *c, int t, ft_status *st);
/* Input k when its values are computed at run time: neither known at load
 * (onx_in_value) nor a graph input, but an output of nodes that run. Its
 * tensor index, or -1 (absent, known at load, or a graph input, which the
 * load-time path reports; *st set when computing it at load failed). A node
 * that takes it as a tensor input becomes dynamic (ft_op_value_inputs). */
int onx_runtime_in(onx_ctx *c, const onx_node *n, int k, ft_status *st);
/* Input k as a list of integers (any integer dtype, any rank, flattened).
 * Absent input: *count = -1 and FT_OK. Computed at run time: an error "node
 * 'N' (Op): input K ('name') must be known at load time: REASON". The list is
 * owned by the context. */
ft_status onx_const_ints(onx_ctx *c, const onx_node *n, int k, const char *reason, const int64_t **v, int *count);
/* Same for floating-point (and integer) values, converted to double. */
ft_status onx_const_floats(onx_ctx *c, const onx_node *n, int k, const char *reason, const double **v, int *count);
/* Input k as exactly one integer; "input K (what) holds N values; expected
 * one" otherwise (an absent input holds -1). */
ft_status onx_const_int1(onx_ctx *c, const onx_node *n, int k, const char *what, const char *reason, int64_t *out);
/* The first value of input k into *val when the input is there and not
 * empty; *val (the default) is kept otherwise. */
ft_status onx_const_float_or(onx_ctx *c, const onx_node *n, int k, const char *reason, double *val);

/* ---- attributes of the ONNX node ---- */
int onx_has_attr(const onx_node *n, const char *name);
int64_t onx_attr_i(const onx_node *n, const char *name, int64_t def);
double onx_attr_f(const onx_node *n, const char *name, double def);
/* String attribute (NUL-terminated, owned by the context) or def. */
const char *onx_attr_s(onx_ctx *c, const onx_node *n, const char *name, const char *def);
/* INTS / FLOATS attribute: count, or -1 when absent (*v untouched). */
int onx_attr_ints(const onx_node *n, const char *name, const int64_t **v);
int onx_attr_floats(const onx_node *n, const char *name, const float **v);

/* ---- building ---- */
/* Tensor index for output k of the ONNX node (created on first use), or -1
 * when the model leaves that output unnamed. */
int onx_out(onx_ctx *c, const onx_node *n, int k);
/* A fresh intermediate tensor, named "<node>/<suffix>" (made unique). */
int onx_tmp(onx_ctx *c, const onx_node *n, const char *suffix);
/* A new constant tensor with the given value (bytes copied), named
 * "<node>/<suffix>". Returns its index, or -1 (out of memory; onx_status). */
int onx_const_new(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, const ft_shape *s, const void *data);
/* Emit an ftrun node. in/out: tensor indices (-1 for an omitted optional
 * input); pass in == NULL with n_in == -1 to take the ONNX node's inputs as
 * they are, and out == NULL with n_out == -1 for its outputs (trailing unnamed
 * outputs dropped). Attributes start at their defaults. The node is named after
 * the ONNX node ("<name>" for the first node a mapper emits, "<name>/<op>_<k>"
 * for the others). Returns NULL on failure (onx_status has it). */
ft_node *onx_emit(onx_ctx *c, const onx_node *n, ft_op op, const int *in, int n_in, const int *out, int n_out);
/* Set an attribute of an emitted node (aborts on a name not in its schema). */
ft_status onx_set_i(onx_ctx *c, ft_node *fn, const char *name, int64_t v);
ft_status onx_set_f(onx_ctx *c, ft_node *fn, const char *name, double v);
ft_status onx_set_s(onx_ctx *c, ft_node *fn, const char *name, const char *v);
ft_status onx_set_ints(onx_ctx *c, ft_node *fn, const char *name, const int64_t *v, int count);
ft_status onx_set_floats(onx_ctx *c, ft_node *fn, const char *name, const double *v, int count);
/* Infer dtype and shape of everything emitted so far (a mapper that needs the
 * shape of its own intermediate calls this; the reader calls it after each
 * mapper). */
ft_status onx_infer_pending(onx_ctx *c);
/* Make output tensor t an alias of tensor src (Identity-like ops that emit no
 * node: Dropout in inference, Identity). */
ft_status onx_alias(onx_ctx *c, const onx_node *n, int out_k, int src);

/* ---- errors ---- */
/* Record "node 'N' (Op, opset V): <message>" as unsupported; returns FT_EGRAPH.
 * The reader lists every such record of the model in one message. */
ft_status onx_unsupported(onx_ctx *c, const onx_node *n, const char *fmt, ...) FT_PRINTF(3, 4);
/* A hard error naming the model file, node and op (returns code). */
ft_status onx_error(onx_ctx *c, const onx_node *n, ft_status code, const char *fmt, ...) FT_PRINTF(4, 5);
/* The status and message of the last failure of onx_emit/onx_const_new. */
ft_status onx_status(onx_ctx *c);

/* ---- the mapper table (onnx_ops.c) ---- */
typedef ft_status (*onx_map_fn)(onx_ctx *c, const onx_node *n);
typedef struct onx_op_map {
    const char *op_type; /* a default-domain ("" or "ai.onnx") op type, or DOMAIN.OP for another domain */
    int since;           /* first opset (of its domain) this mapper handles (older: unsupported) */
    onx_map_fn map;
} onx_op_map;
/* The mapper for op_type at opset, or NULL. */
const onx_op_map *onx_find_map(const char *op_type, int opset);
/* 1 when n is a binary op of opset 1-6 whose legacy broadcasting (the
 * broadcast and axis attributes, onnx_ops_legacy.c) differs from NumPy's on
 * its inputs' shapes, or which the mapper refuses: it is not folded. */
int onx_legacy_broadcast(onx_ctx *c, const onx_node *n);

/* Every default-domain ONNX op, then the ops of other domains ftrun knows
 * (named DOMAIN.OP), with how ftrun treats it, for `ftrun ops --onnx`: 'm'
 * mapped to ftrun ops, 'f' folded at load time only, '-' missing. */
typedef struct onx_op_status {
    const char *op_type;
    char how;
    const char *note; /* the ftrun op(s) or the reason, "" when none */
} onx_op_status;
int onx_op_catalogue(const onx_op_status **list);

#endif
