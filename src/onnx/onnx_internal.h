/* What the ONNX reader (onnx_reader.c), the builder side (onnx_build.c) and
 * the load-time folder (onnx_fold.c) share beyond onnx_import.h. Not for the
 * op mappers. The context is the importer's state for one model; it owns the
 * tensors and names it adds until the model is loaded.
 *
 *   int t = onx_resolve(c, "x");                   // the ftrun tensor of an ONNX name, or -1
 *   if (t < 0 && onx_record(c, NULL, "input 'x' is never produced")) ...  // out of memory
 */
#ifndef FT_ONNX_INTERNAL_H
#define FT_ONNX_INTERNAL_H

#include "../io/npy.h"
#include "onnx_import.h"

#include <string.h>

#include "../graph/graph.h"
#include "onnx.pb-c.h"

/* The ONNX versions the reader accepts: ir_version 3 to 13 (IR 11's
 * multi-device configuration, a placement hint, is ignored; the dtypes IR 11-13
 * add are refused by name where a tensor has one) and default-domain opsets 1
 * to 28 (each op mapped from the first opset whose form ftrun implements;
 * onnx_ops.c's MAPS; the versions of opsets 24-28 add types and new ops, and
 * Attention's new inputs and attributes are refused by its mapper). */
enum { ONX_IR_MIN = 3, ONX_IR_MAX = 13, ONX_OPSET_MAX = 28 };

/* A sequence or optional value that exists only at load time (onnx_seq.c):
 * its elements are ordinary ftrun tensors, in order. */
typedef struct onx_seq {
    int *t;       /* the elements' tensor indices (owned by the context) */
    int n;        /* how many; an optional holds 0 (empty) or 1 */
    ft_dtype dt;  /* the element dtype */
    int optional; /* 1: an optional value, 0: a sequence */
    /* 1 + a tensor: a sequence whose length is known only at run time (a
     * list a run-time loop appends to, onnx_loop.c), its elements stacked
     * along a new axis 0 in that tensor (n is 0); 0: none. Only
     * ConcatFromSequence (axis 0, new_axis 1) and SequenceLength take it. */
    int stacked;
} onx_seq;

/* The carried values of run-time loops found to change shape in their body
 * (onnx_loop.c): per loop (its key: the node's name, else its first output's
 * name), a bit per carried value. Kept across the imports of one model
 * (onnx_reader.c's load), which imports it again when a bit is added. */
typedef struct onx_vary {
    char **key;
    uint64_t *mask;
    int n, cap;
} onx_vary;
enum { ONX_IMPORTS_MAX = 8 }; /* at most this many imports of one model */
void onx_vary_free(onx_vary *v);

typedef struct unsup_rec {
    char *key;   /* groups missing ops: "op NonZero (ai.onnx opset 13)"; NULL for one-off records */
    char *text;  /* the line (for a group: its node names) */
} unsup_rec;

struct onx_ctx {
    const char *file;
    const ft_load_opts *opts;
    ft_error *err;
    ft_graph *g;
    Onnx__ModelProto *model;
    int opset;
    struct ft_strmap *names;    /* ONNX value name -> tensor index */
    struct ft_strmap *inits;    /* initializer name -> index into init */
    struct ft_strmap *poisoned; /* values an unsupported node would have made */
    struct ft_strmap *outnames; /* the graph's output names */
    struct ft_strmap *suffix;   /* tensor name -> the next k to try for "name_k" when it is taken */
    struct ft_strmap *seqnames; /* sequence/optional value name -> index into seqs */
    onx_seq *seqs;
    int n_seqs, cap_seqs;
    Onnx__TensorProto **init;
    int *init_t; /* per initializer: the tensor that took its raw_data (onx_resolve), else -1 */
    ft_node **nodes;
    int n_nodes, cap_nodes, pending, emitted_here;
    int guard; /* 1 + the tensor guarding the nodes emitted now (a branch of a run-time If, onnx_if.c); 0: none */
    onx_vary *vary; /* not owned */
    int retry;      /* a carried value was added to vary: the model is to be imported again */
    void **owned;
    int n_owned, cap_owned;
    /* per tensor: its value computed at load (ft_load_opts.eval's cache,
     * owned here) and the tensor holding it that onx_value_of gives */
    void **vcache;
    ft_tensor **vcopy;
    int cap_vcache;
    unsup_rec *unsup;
    int n_unsup, cap_unsup, unsup_flag;
    ft_status last;
    char *fold_names[64];
    int fold_counts[64], n_fold_kinds, n_folded;
};

static inline const char *nz(const char *s) { return s ? s : ""; }
static inline int is_default_domain(const char *d) { return !d || !*d || !strcmp(d, "ai.onnx"); }

/* onnx_split.c: the model in buf decoded with its graph's initializers
 * taken one at a time (mapped: buf is a read-only file mapping whose ranges
 * may be dropped once decoded). NULL with *fallback set: decode it the usual
 * way; NULL without: out of memory. */
Onnx__ModelProto *ft_onnx_unpack_split(const unsigned char *buf, size_t len, int mapped, int *fallback);

/* Shared by onnx_build.c and onnx_reader.c. */
ft_status onx_oom(onx_ctx *c);
int onx_add_tensor(onx_ctx *c, const char *want);                       /* -1: out of memory */
int onx_bind(onx_ctx *c, const char *onnx_name, int t);                /* -1: out of memory */
int onx_add_const(onx_ctx *c, const char *name, ft_npy *a, const char *source); /* takes a's data */
/* Tensor of an ONNX value name (initializers decoded on first use); -1 when
 * unknown, -2 on failure (c->last). */
int onx_resolve(onx_ctx *c, const char *name);
/* Record something unsupported; key groups records ("op X ...:" + node names). */
ft_status onx_record(onx_ctx *c, const char *key, const char *text);

struct Onnx__AttributeProto;

/* Sequence and optional values (onnx_seq.c). The sequence ops resolve them at
 * load time: SequenceConstruct makes a list of tensors, SequenceAt aliases an
 * element, ConcatFromSequence emits a concat, Loop and SequenceMap are
 * unrolled over lists (onnx_loop.c), and so on. A sequence never reaches the
 * planned graph: a graph input or output is its tensors (onnx_seq_io.c); one
 * passed to another op is refused. */
/* The sequence or optional value named `name`, or NULL. */
const onx_seq *onx_seq_get(onx_ctx *c, const char *name);
/* Bind `name` to a copy of the list t[0..n) (-1 on out of memory). */
int onx_seq_put(onx_ctx *c, const char *name, const int *t, int n, ft_dtype dt, int optional);
/* The index into c->seqs of the list named `name`, or -1. */
int onx_seq_index(onx_ctx *c, const char *name);
/* Bind `name` to the list c->seqs[index] (-1: unbind it); -1 on out of memory. */
int onx_seq_bind(onx_ctx *c, const char *name, int index);
/* 1 for the ops that take sequence or optional values (their mappers). */
int onx_seq_op(const char *op_type);
/* Identity of a sequence or optional value: the same list. */
ft_status onx_seq_identity(onx_ctx *c, const onx_node *n);
/* Release the context's sequences. */
void onx_seq_free(onx_ctx *c);
/* A sequence or optional graph input (onnx_seq_io.c): one graph input per
 * tensor its bindings give (ft_shape_bind FT_BIND_SEQ/ELEM, or a tensor
 * binding for an optional tensor), named NAME.0 ... NAME.{n-1}, holding the
 * bound values. */
ft_status onx_seq_input(onx_ctx *c, const Onnx__TypeProto *tp, const char *name);
/* A sequence or optional graph output: its tensors and NAME.len (graph.h's
 * ft_out_group). */
ft_status onx_seq_output(onx_ctx *c, const Onnx__ValueInfoProto *vi, int index);
/* Tensor t as the graph output `name` (copied by an identity node when it is
 * not a node's output of that name); index names that node. */
ft_status onx_graph_output(onx_ctx *c, int t, const char *name, int index);
ft_status onx_graph_input(onx_ctx *c, int t);
/* Graph input ft takes the value of binding b (a copy; -1: out of memory). */
int onx_input_value(onx_ctx *c, ft_tensor *ft, const ft_shape_bind *b);
/* The next group of g->groups (-1: out of memory). */
int onx_group(onx_ctx *c, const char *name, ft_group_kind kind, int first, int n);

/* A loop body's (or branch's) initializers and nodes imported into the graph
 * being built, its inputs bound by the caller, its initializers in scope
 * (onx_scope_enter): a name already bound there is kept (a body input of
 * that name, or the tensor of an earlier iteration). */
ft_status onx_import_body(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body);
/* A subgraph's own initializers while it is imported (onnx_loop.c). Enter
 * saves what each of their names means outside (a tensor, a sequence, or
 * nothing yet: an outer initializer not read so far) and leaves the name to
 * the subgraph's value: unbound on the first entry, so that onx_import_body
 * decodes it, the same tensor again on later entries of the same scope (the
 * iterations of one loop). Leave, once the subgraph's outputs are read,
 * gives the names their outer meaning back; it does nothing outside the
 * scope. Start from (onx_scope){0}; release with onx_scope_free. */
typedef struct {
    const Onnx__GraphProto *gp;
    int *outer;     /* per initializer: the name's tensor outside, -1: none */
    int *outer_seq; /* its sequence (index into c->seqs) outside, -1: none */
    int *own;       /* the tensor the subgraph's value became, -1: not yet */
    int inside;
} onx_scope;
ft_status onx_scope_enter(onx_ctx *c, onx_scope *s, const Onnx__GraphProto *gp);
ft_status onx_scope_leave(onx_ctx *c, onx_scope *s);
void onx_scope_free(onx_scope *s);
/* Forget the ONNX value `name` (a loop body's output, before its next copy);
 * nonzero when out of memory. */
int onx_unbind(onx_ctx *c, const char *name);

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
/* An If whose condition is known only at run time (onnx_if.c): both
 * branches imported, each node guarded by the condition it runs on, the
 * outputs chosen by if_select. */
ft_status onx_import_if(onx_ctx *c, const onx_node *n);
/* Mark the outputs of np as made by something unsupported (its readers are
 * then skipped, the import fails listing what was unsupported). */
ft_status onx_poison_outputs(onx_ctx *c, const Onnx__NodeProto *np);
/* Forget the outputs of gp's nodes (and of graphs nested in them), so that
 * importing gp again, or a sibling reusing its names, makes new tensors
 * (onnx_loop.c). */
ft_status onx_unbind_outputs(onx_ctx *c, const Onnx__GraphProto *gp);

#endif
