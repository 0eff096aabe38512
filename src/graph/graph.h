/* The graph in memory: tensors, nodes, attributes.
 *
 * Ownership: the graph owns every tensor, node, attribute, string and value
 * buffer in it; ft_graph_free releases all of it. ft_graph_free(NULL) is a no-op.
 * A tensor loaded from an uncompressed blob of a binary graph (.ftg) is
 * "borrowed": its value points into the graph's read-only mapping of the file
 * (g->map), is never written, and is not freed on its own. Replace a value with
 * ft_tensor_set_value, which knows the difference.
 *
 *   ft_load_opts o = {.seed_override = -1};
 *   ft_graph *g; ft_error err = {0};
 *   if (ft_graph_load("mlp.json", &o, &g, &err)) ...   // err.msg, err.code
 *   if (ft_graph_validate(g, &err)) ...      // topological order + inference
 *   for (int k = 0; k < g->n_nodes; k++) { ft_node *n = &g->nodes[g->order[k]]; ... }
 *   ft_graph_free(g);
 */
#ifndef FT_GRAPH_H
#define FT_GRAPH_H

#include "../common.h"
#include "dtype.h"
#include "elem.h"
#include "ops.h"
#include "shape.h"

/* Bytes in a tensor or node name (the readers refuse longer ones). */
#define FT_MAX_NAME 1024

enum {
    FT_TF_DECLARED = 1 << 0, /* listed under "tensors" */
    FT_TF_INPUT = 1 << 1,    /* listed under "inputs" */
    FT_TF_OUTPUT = 1 << 2,   /* listed under "outputs" */
    FT_TF_VALUE = 1 << 3,    /* has a host value (data, file or init) */
    FT_TF_INFERRED = 1 << 4, /* dtype and shape known (declared or inferred) */
    /* Shape known only at run time: an output of a data-dependent op
     * (ft_node_data_dependent) or of a node reading such a tensor. The shape
     * held is the load-time stand-in (a data-dependent op's bound, what
     * follows from it downstream); the executor infers the true one at every
     * run (runtime/exec.c). Set by ft_node_infer. */
    FT_TF_DYNAMIC = 1 << 5,
    /* A dynamic tensor whose rank, too, is known only at run time: an
     * if_select of branches of different ranks, and what reads it. Its
     * stand-in has the rank of the larger branch; no dim of it is fixed.
     * Set by ft_node_infer. */
    FT_TF_RANK_VARIES = 1 << 6,
};

typedef struct ft_tensor {
    char *name;
    ft_dtype dtype;
    ft_shape shape;
    unsigned flags;
    int producer;    /* node index, or -1 */
    int n_readers;   /* number of node input slots reading it, and of nodes it guards */
    void *value;     /* host bytes (row-major, dtype-sized), owned; NULL if none */
    size_t value_bytes;
    const char *source; /* "data", "file", "init", "blob", "--input", or NULL (static string) */
    /* A dynamic tensor (FT_TF_DYNAMIC): bit d set when dim d of the stand-in
     * shape is proven to be the size every run gives (ft_node_fixed_dims),
     * clear when it is a stand-in. Read only under FT_TF_DYNAMIC (the shape
     * of any other tensor is known whole); set by ft_node_infer. */
    unsigned fixed_dims;
    int borrowed;       /* value points into the graph's file mapping (read-only, not owned) */
} ft_tensor;

typedef struct ft_node {
    char *name;      /* given or "<op>_<index>" */
    ft_op op;
    int index;       /* position in the file's "nodes" array */
    int n_in, n_out;
    int *in;         /* tensor indices; -1 for an omitted optional input */
    int *out;        /* tensor indices */
    ft_attr_val *attrs; /* one per entry of ft_op_get(op)->attrs, defaults filled */
    ft_params params;   /* typed attributes (params.h), filled by ft_graph_validate */
    /* 1 + the index of the node's guard, a bool tensor whose first element,
     * read at run time, decides whether the node runs (false: the executor
     * skips it and its outputs are not written); 0: the node always runs.
     * The branches of an ONNX If whose condition is known only at run time
     * (onnx/onnx_if.c); "guard" in ftrun-graph(5). Use ft_node_guard. */
    int guard;
} ft_node;

/* The tensor index of n's guard, or -1 when n always runs. */
static inline int ft_node_guard(const ft_node *n) { return n->guard - 1; }

typedef struct ft_graph {
    char *file;      /* path as given */
    char *dir;       /* folder of the file, for relative value files */
    char *name;      /* "name" or the file's base name */
    ft_tensor *tensors;
    int n_tensors, cap_tensors;
    ft_node *nodes;
    int n_nodes;
    int *inputs, n_inputs;
    int *outputs, n_outputs;
    int *order;      /* topological order of node indices (after validate) */
    struct ft_strmap *tmap; /* tensor name -> index */
    void *map;       /* read-only mapping of a binary graph file (NULL for JSON) */
    char *about;     /* what the reader noted for `ftrun info` (ONNX: producer, opsets, folding), or NULL */
    char *opt_note;  /* what the optimizer rewrote, for `ftrun info` (optimize.h), or NULL */
    size_t map_bytes;
    int keep_named_dims; /* documents written for it keep the named dims of their declarations
                          * (ft_graph_doc_rewrite; convert with unbound dims) instead of the sizes */
    /* An ONNX model with a sequence or optional output: one group per ONNX
     * output, in order (else none). A tensor output is one graph output; a
     * sequence or optional output NAME of n tensors is n graph outputs
     * NAME.0 ... NAME.{n-1} followed by NAME.len, an int64 scalar n
     * (src/onnx/onnx_reader.c). */
    struct ft_out_group *groups;
    int n_groups;
    /* 1 in the executor's working copy (runtime/exec.c) and --check-nodes'
     * (cli/check.c): every shape is the one a run saw, none is a stand-in,
     * and inference checks them all (ft_infer_standin). */
    int run_shapes;
} ft_graph;

typedef enum { FT_GROUP_TENSOR, FT_GROUP_SEQUENCE, FT_GROUP_OPTIONAL } ft_group_kind;
typedef struct ft_out_group {
    char *name;         /* the ONNX output's name */
    ft_group_kind kind;
    int first, n;       /* graph outputs first .. first+n-1 (the elements); a sequence or optional's
                         * NAME.len is output first+n */
} ft_out_group;

/* Bindings of symbolic dims (see dims.h): --dim NAME=N, and the shape of an
 * input from --shape INPUT=D0,D1,... or from the file given with -i. */
typedef struct ft_dim_bind {
    const char *name;
    int64_t value;
} ft_dim_bind;
typedef struct ft_shape_bind {
    const char *input;
    ft_shape shape;
    const char *origin; /* for messages: "--shape" or the -i file's path */
    /* The values from -i when the caller has read them (else data NULL): an
     * ONNX input that a node needs as a parameter (Reshape's shape, ...) is
     * then taken from them at load time. */
    ft_dtype dtype;
    const void *data;
    size_t nbytes;
    /* A sequence or optional value (an ONNX input, src/onnx/onnx_reader.c):
     * FT_BIND_SEQ says that `input` holds `count` tensors (-1: an empty
     * optional), each given by an FT_BIND_ELEM binding of `input` with its
     * `index`. Shape-only code (dims.c) passes over them. */
    enum { FT_BIND_TENSOR, FT_BIND_SEQ, FT_BIND_ELEM } kind;
    int count, index;
} ft_shape_bind;

/* Stand-in sizes for the named dims of inputs that nothing binds (`info`
 * and `convert` show a model before its dims are chosen, dims.c): instead of
 * stopping the load, such a dim takes the stand-in ft_unbound_value(k,
 * attempt, run) of its name (the k-th such name met; an unnamed dim is named
 * "INPUT:dimK"), recorded here. Two loads with run 0 and 1 tell what depends
 * on which name. */
#define FT_MAX_UNBOUND 16
typedef struct ft_unbound {
    int attempt, run; /* which stand-ins: attempt 0 (primes from 23), 1 (from 3), 2 (from 101); run 0 or 1 */
    int n;
    char name[FT_MAX_UNBOUND][320];
    int64_t value[FT_MAX_UNBOUND];
} ft_unbound;
int64_t ft_unbound_value(int k, int attempt, int run);

typedef struct ft_load_opts {
    int64_t seed_override; /* replaces every random init's seed when >= 0 */
    int allow_external;    /* "file" may name paths outside the graph's folder */
    const ft_dim_bind *dims;
    int n_dims;
    const ft_shape_bind *shapes;
    int n_shapes;
    ft_unbound *unbound;   /* NULL: a dim nothing binds stops the load */
    /* Computes, at load, tensor t of g that a node produces (the importer's
     * nodes are nodes[0..]; g->nodes is not yet filled), from the values
     * known then (constants, inputs given with -i). cache holds one entry per
     * tensor of g: the values earlier calls computed (NULL: none), which this
     * one reads instead of computing them again, and to which it adds every
     * value it computes, t's included (ft_malloc'd; the caller frees them).
     * FT_OK with cache[t] NULL when t depends on something not known at load.
     * NULL: nothing is computed (pipeline/load.c sets its own). */
    ft_status (*eval)(const struct ft_graph *g, struct ft_node *const *nodes, int t, void **cache, ft_error *err);
} ft_load_opts;

/* Load a graph file: a binary graph (.ftg), an ONNX model (onnx.h) or a JSON
 * graph, recognised by their first bytes (load.c); every value source is
 * loaded and checked. */
ft_status ft_graph_load(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err);
/* The same from bytes in memory: an ONNX model or a JSON graph, told apart
 * by their first bytes; a binary graph (.ftg) is refused (it is read from a
 * file only). path names the bytes in messages; "file" values are relative
 * to its folder. */
ft_status ft_graph_load_mem(const char *path, const void *bytes, size_t len, const ft_load_opts *opts, ft_graph **out,
                            ft_error *err);
/* A JSON graph from a buffer (path is used for messages and relative files). */
ft_status ft_graph_load_json(const char *path, const char *text, size_t len, const ft_load_opts *opts,
                             ft_graph **out, ft_error *err);
/* Topological order (refusing cycles), shape and dtype inference of every node,
 * checks of declarations against inference, value presence. */
ft_status ft_graph_validate(ft_graph *g, ft_error *err);
void ft_graph_free(ft_graph *g);
/* Give n (its op set) one attribute value per entry of the op's schema, the
 * defaults filled in, none marked given. 0, or -1 when out of memory (what was
 * allocated stays in n for ft_node_clear). */
int ft_node_default_attrs(ft_node *n);
/* Release what a node owns (name, input and output lists, attributes), not
 * the node itself: for nodes built outside a graph's array. */
void ft_node_clear(ft_node *n);
/* Infer the dtype and shape of n's outputs from its inputs' (already known),
 * checking declared outputs; what ft_graph_validate does for every node. */
ft_status ft_node_infer(ft_graph *g, ft_node *n, ft_error *err);
/* Give t the value `owned` (allocated with ft_malloc, bytes long), releasing
 * its previous value unless that was borrowed from the file mapping. */
void ft_tensor_set_value(ft_tensor *t, void *owned, size_t bytes);

/* How many tensors of g (validated) get their shapes at run time
 * (FT_TF_DYNAMIC), and why, into buf: "5 tensors, after 'nz' (non_zero),
 * 'uq' (unique)" naming the data-dependent nodes (infer_dynamic.c). 0 and
 * "" when none. */
int ft_graph_dynamic_str(const ft_graph *g, char *buf, size_t n);
/* 1 if node n runs with shapes known only at run time: a data-dependent op,
 * a reader of a dynamic tensor, or a node whose shape-giving input
 * (ft_op_value_inputs) is computed at run time. */
int ft_node_dynamic(const ft_graph *g, const ft_node *n);
/* The dims of output o of n (inferred, dynamic) whose sizes are fixed at load
 * (bit d: dim d; ft_tensor.fixed_dims): a dim is fixed only where a rule of
 * infer_dynamic.c proves it from the op and its inputs' fixed dims (a
 * non_zero's first dim is its input's rank; a gather's from its indices'
 * and data's; elementwise ops, transpose, concat, squeeze and unsqueeze
 * with axes, shape and size carry them through); every other
 * dim of a dynamic output, and every dim of any other op's, is a stand-in. */
unsigned ft_node_fixed_dims(const ft_graph *g, const ft_node *n, int o);
/* The inputs of n (bit i: input i) whose values give its output shapes
 * (ft_op_value_inputs) and are computed at run time, not known at load: the
 * executor reads them at every run before inferring n again. 0: none. */
int ft_node_runtime_values(const ft_graph *g, const ft_node *n);
/* 1 if n's kernel decides its output shapes from values: a data-dependent
 * op (ft_op_data_dependent), or an if_select whose two branches' shapes
 * differ. */
int ft_node_data_dependent(const ft_graph *g, const ft_node *n);
/* A loop_end's number of carried values (its inputs: iteration number, next
 * condition, the carried state, the next carried values, the scan values). */
int ft_loop_carried(const ft_node *n);
/* Whether carried value j of loop_begin n may change shape between iterations
 * (its "vary" list). */
int ft_loop_varies(const ft_node *n, int j);
/* How many run-time loops g has (loop_begin nodes), and which, into buf:
 * "'L' (7 body nodes, 2 carried values, 1 scan output)" (cut with "..."). */
int ft_graph_loops_str(const ft_graph *g, char *buf, size_t n);
/* How many nodes of g have a guard (ft_node_guard). */
int ft_graph_guarded(const ft_graph *g);
/* The same count, and which nodes run on which guard, into buf, in order:
 * "'a', 'b' if 'c'; 'd' if 'not_c'" (cut with "..." when longer). */
int ft_graph_guards_str(const ft_graph *g, char *buf, size_t n);

/* Tensor index by name, or -1. */
int ft_graph_find(const ft_graph *g, const char *name);
static inline size_t ft_tensor_bytes(const ft_tensor *t) { return (size_t)ft_numel(&t->shape) * ft_dtype_size(t->dtype); }

/* Attribute of a node by name (aborts on a name not in the op's schema). */
const ft_attr_val *ft_attr(const ft_node *n, const char *name);

/* Error with node context: "FILE: node 'NAME' (OP): message", code FT_EGRAPH unless given. */
ft_status ft_node_err(ft_error *err, ft_status code, const ft_graph *g, const ft_node *n, const char *fmt, ...)
    FT_PRINTF(5, 6);

/* Counter-based generator used by "init" (Philox-4x32-10, graph/philox.h); see ftrun-graph(5). */
#include "philox.h"
/* Fill buf (numel elements of dt) from an init spec. kind: 0 fill, 1 arange,
 * 2 uniform, 3 normal, 4 uniform rounded down (floor: the integers of
 * [low, high) for --random-inputs). a/b: value / start,step / low,high / mean,std. */
void ft_init_values(void *buf, ft_dtype dt, uint64_t numel, int kind, double a, double b, uint64_t seed);

/* Small string -> int hash map (owned keys). */
struct ft_strmap *ft_strmap_new(void);
void ft_strmap_free(struct ft_strmap *m);
int ft_strmap_get(const struct ft_strmap *m, const char *key);          /* -1 if absent */
int ft_strmap_put(struct ft_strmap *m, const char *key, int value);     /* 0 ok, -1 no memory; a key again: its new value */

#endif
