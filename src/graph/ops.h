/* The op table (ops.def expanded) and the attribute schemas.
 *
 *   const ft_op_info *oi = ft_op_get(FT_OP_SOFTMAX);  // name, arity, attrs, infer, flops
 *   ft_op op; if (ft_op_lookup("softmax", &op) == 0) ...
 *   int k = ft_op_attr_index(FT_OP_SOFTMAX, "axis");   // -1 when the schema has none
 *
 * Attribute values of a node live in node->attrs, one per schema entry, in
 * schema order; ft_attr() (graph.h) finds one by name (an unknown name is a
 * programming error and aborts). The inference functions and FLOP counters
 * the table names are defined in infer_*.c and cost.c.
 */
#ifndef FT_OPS_H
#define FT_OPS_H

#include "../common.h"
#include "dtype.h"
#include "params.h"
#include "shape.h"

typedef enum {
#define X(e, name, mi, ma, mo, mao, dt, attrs, inf, fl) FT_OP_##e,
#include "ops.def"
#undef X
    FT_OP_COUNT
} ft_op;

typedef enum { FT_ATTR_INT, FT_ATTR_FLOAT, FT_ATTR_STRING, FT_ATTR_INTS, FT_ATTR_FLOATS } ft_attr_type;

typedef struct ft_attr_def {
    char name[40];
    ft_attr_type type;
    int required;    /* no default: must be given */
    int has_default; /* a default value exists ("=?" means neither) */
    int64_t i;       /* default for INT */
    double f;        /* default for FLOAT */
    char s[40];      /* default for STRING */
} ft_attr_def;

typedef struct ft_attr_val {
    int given;       /* set in the file */
    int present;     /* given or defaulted */
    int64_t i;
    double f;
    char *s;         /* owned */
    int n;           /* INTS / FLOATS length */
    int64_t *ints;   /* owned */
    double *floats;  /* owned */
} ft_attr_val;

/* Dtype and shape of one tensor during inference. */
typedef struct ft_tinfo {
    ft_dtype dtype;
    ft_shape shape;
} ft_tinfo;

struct ft_graph;
struct ft_node;

/* What an inference function sees. in[i] is NULL for an omitted optional input;
 * the function fills out[0..n_out-1] and the node's typed parameters *params
 * (params.h: the attributes read once, for the kernels). Fail with ft_infer_fail(). */
/* Inputs whose values give a node's shapes (ft_op_value_inputs): input
 * slots 0 .. FT_MAX_VALUE_INPUTS-1, each at most FT_MAX_VALUES values. */
#define FT_MAX_VALUE_INPUTS 5
#define FT_MAX_VALUES (2 * FT_MAX_RANK)
typedef struct ft_infer_ctx {
    const struct ft_graph *g;
    const struct ft_node *node;
    int n_in, n_out;
    const ft_tinfo *const *in;
    ft_tinfo *out;
    ft_error *err;
    ft_params *params; /* the node's, zeroed before inference */
    /* set by an infer function whose outputs' rank is decided at run time
     * (if_select of branches of different ranks): they are FT_TF_RANK_VARIES */
    int rank_varies;
    /* ft_infer_ints's and ft_infer_floats's copies of the lists that inputs give (infer_common.h) */
    ft_attr_val vals[FT_MAX_VALUE_INPUTS];
    int64_t val_ints[FT_MAX_VALUE_INPUTS][FT_MAX_VALUES];
    double val_floats[FT_MAX_VALUE_INPUTS][FT_MAX_VALUES];
} ft_infer_ctx;

typedef ft_status (*ft_infer_fn)(ft_infer_ctx *c);
typedef uint64_t (*ft_flops_fn)(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out);

typedef struct ft_op_info {
    const char *name;
    int min_in, max_in, min_out, max_out; /* max -1: unbounded */
    ft_dtype_mask dtypes;                 /* accepted dtypes of input 0 */
    const char *attr_schema;
    int n_attrs;
    const ft_attr_def *attrs;
    ft_infer_fn infer; /* ft_infer_unavailable: known op, not in this version */
    int available;     /* infer != ft_infer_unavailable */
    ft_flops_fn flops;
} ft_op_info;

const ft_op_info *ft_op_get(ft_op op);
const char *ft_op_name(ft_op op);
int ft_op_lookup(const char *name, ft_op *out);
/* Index of attribute `name` in op's schema, or -1. */
int ft_op_attr_index(ft_op op, const char *name);

/* 1 for an op whose output shape depends on its input's values (non_zero,
 * compress, unique, non_max_suppression, string_normalizer, string_split): inference gives each output at
 * its bound, the kernel sets the shape it wrote (runtime/backend.h). */
int ft_op_data_dependent(ft_op op);
/* The input slots (bit i: input i) whose values give op's output shapes:
 * reshape's shape, expand's, tile's repeats, slice's starts/ends/axes/steps,
 * topk's k, range's start/limit/delta, pad's pads, resize's sizes, one_hot's
 * depth (input 2), split's sizes; string_split's strings and image_decoder's
 * bytes (any shape: read whole, not through ft_infer_ints). A node whose such input is not known
 * at load is dynamic (FT_TF_DYNAMIC outputs): the executor reads the values
 * at every run and infers the node again with them (runtime/exec.c). */
unsigned ft_op_value_inputs(ft_op op);
/* 1 for an op whose value input is read whole, whatever its size, rather
 * than as a few shape values: image_decoder's encoded image (its header
 * gives the output's shape). */
int ft_op_value_bytes(ft_op op);

/* "did you mean 'x', 'y'?" style suggestion of close names into buf ("" if none). */
const char *ft_suggest(const char *name, const char *const *cands, int n, char *buf, size_t bufsz);
/* Suggestion among op names. */
const char *ft_suggest_op(const char *name, char *buf, size_t bufsz);

/* The inference of an op that is named in the table but not built yet. */
ft_status ft_infer_unavailable(ft_infer_ctx *c);
/* Inference functions named in ops.def. */
#define X(e, name, mi, ma, mo, mao, dt, attrs, inf, fl) ft_status inf(ft_infer_ctx *c);
#include "ops.def"
#undef X
/* FLOP counters named in ops.def (several ops share one: the repeated
 * declarations are the same). */
#define X(e, name, mi, ma, mo, mao, dt, attrs, inf, fl) \
    uint64_t fl(const struct ft_node *, const ft_tinfo *const *, const ft_tinfo *);
#include "ops.def"
#undef X

#endif
