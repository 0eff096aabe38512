/* What the ONNX reader (onnx_reader.c) and the load-time folder (onnx_fold.c)
 * share beyond onnx_import.h. Not for the op mappers. */
#ifndef FT_ONNX_INTERNAL_H
#define FT_ONNX_INTERNAL_H

#include "npy.h"
#include "onnx_import.h"

struct Onnx__AttributeProto;

/* Try to fold node n at load time (its outputs become constants). Returns 1
 * when folded, 0 when the node is left to its mapper; on failure returns -1
 * with *st set (an unsupported record or a hard error). */
int ft_onnx_fold(onx_ctx *c, const onx_node *n, ft_status *st);
/* 1 for ops that exist only at load time (Constant, Shape, Size, ...). */
int ft_onnx_fold_only(const char *op_type);
/* 1 for ops refused outright, with the reason (loops, data-dependent shapes). */
int ft_onnx_refused(const char *op_type, const char **why);

/* Output k of n becomes a constant with value a (taken over; a is cleared). */
ft_status onx_const_out(onx_ctx *c, const onx_node *n, int k, ft_npy *a);
/* The attribute `name` of n, or NULL. */
const struct Onnx__AttributeProto *onx_attr(const onx_node *n, const char *name);
/* Decode a TENSOR attribute into a (owned copy). */
ft_status onx_attr_tensor(onx_ctx *c, const onx_node *n, const struct Onnx__AttributeProto *a, ft_npy *out);
/* Count a fold of op_type for `ftrun info`. */
void onx_note_fold(onx_ctx *c, const char *op_type);
/* Import the nodes of a subgraph (a folded If's branch) into the graph being
 * built, in the current name scope, and make n's outputs the branch's. */
ft_status onx_import_branch(onx_ctx *c, const onx_node *n, const struct Onnx__GraphProto *branch);

#endif
