/* Helpers shared by the inference files (src/graph/infer_*.c): names for
 * messages, the common checks, and lists printed for messages. All take the
 * inference context of ops.h; nothing is allocated.
 *
 *   char lb[FT_LIST_STR];
 *   if ((st = ft_infer_same_dtype(c, 1, 0, NULL))) return st;
 *   return ft_infer_fail(c, "attribute 'axes' %s ...", ft_ints_str(ft_attr(c->node, "axes"), lb));
 */
#ifndef FT_INFER_COMMON_H
#define FT_INFER_COMMON_H

#include "graph.h"

/* Size of the buffers of ft_ints_str and ft_floats_str. */
#define FT_LIST_STR 240

/* Fail inference with "FILE: node 'N' (op): message" and FT_EGRAPH. */
ft_status ft_infer_fail(ft_infer_ctx *c, const char *fmt, ...) FT_PRINTF(2, 3);

/* Name of input i of the node. */
const char *ft_infer_in_name(const ft_infer_ctx *c, int i);
/* Input i must have the dtype of input ref: "WHAT 'x' has dtype ..." with
 * what, else "input I ('x') has dtype ...". */
ft_status ft_infer_same_dtype(ft_infer_ctx *c, int i, int ref, const char *what);
/* The int list a node takes as attribute `name` or, when the node has input
 * `slot` (ft_op_value_inputs), as that input's values: a constant's at load,
 * and at run time the values the executor read for this run
 * (src/runtime/exec.c). *a is the attribute, or a list held in c standing in
 * for it (present, n values). *known is 0 when the input's values are not
 * available now (computed at run time, inference at load): *a is then the
 * attribute and the caller infers a stand-in shape. Inputs of a dtype other
 * than i32 or i64, or of more than FT_MAX_VALUES values, are refused. */
ft_status ft_infer_ints(ft_infer_ctx *c, const char *name, int slot, const ft_attr_val **a, int *known);
/* As ft_infer_ints for a float list attribute (F) or a float attribute (f):
 * the input's values as doubles in (*a)->floats, the first also in (*a)->f.
 * Any numeric dtype is taken; strings, and values that are not finite when
 * finite is set, are refused. */
ft_status ft_infer_floats(ft_infer_ctx *c, const char *name, int slot, int finite, const ft_attr_val **a, int *known);
/* 1 when the node is inferred at load and one of its inputs is dynamic: its
 * shape is a stand-in (ft_node_infer), and a disagreement between stand-in
 * dims (two that do not broadcast) is not an error yet: the node is inferred
 * again at every run with the true shapes (ft_graph.run_shapes), strictly. */
int ft_infer_standin(const ft_infer_ctx *c);
/* 1 if the node has input slot (given, not omitted). */
int ft_infer_has_in(const ft_infer_ctx *c, int slot);
/* A 0/1 flag attribute: other values are refused so that a typo does not
 * silently mean "true". */
ft_status ft_infer_flag(ft_infer_ctx *c, const char *name, int *out);
/* A result shape whose size the format cannot hold is refused. */
ft_status ft_infer_check_size(ft_infer_ctx *c, const ft_shape *o);
/* Output i gets dtype dt and shape s, refusing element counts or byte sizes
 * the runtime cannot address. */
ft_status ft_infer_set_out(ft_infer_ctx *c, int i, ft_dtype dt, const ft_shape *s);
/* An optional list attribute counts as given only when it has entries:
 * "axes": [] means the same as leaving it out. */
int ft_list_given(const ft_attr_val *a);
/* "[1,-1,3]" for an int list attribute, "[0.5,2]" for a float list; long
 * lists end in "...". buf holds FT_LIST_STR bytes. */
const char *ft_ints_str(const ft_attr_val *a, char *buf);
const char *ft_floats_str(const ft_attr_val *a, char *buf);

#endif
