/* Internal to onnx_fold.c and onnx_fold_eval.c: the values load-time
 * folding computes with (int64 for integer and bool dtypes, double for
 * floats) and the evaluators of the movement, indexing and reduction ops.
 *
 * Ownership: a val owns its arrays (val_free).
 *
 *   ft_shape s = {.rank = 1, .dims = {3}};
 *   val v = {0};
 *   if (!val_alloc(&v, FT_I64, &s)) put(&v, 0, 0.0, 7);   // element 0 = 7
 *   val_free(&v);
 */
#ifndef FT_ONNX_FOLD_INT_H
#define FT_ONNX_FOLD_INT_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* The largest result folded for an op that could also run as a node. */
#define FOLD_MAX_ELEMS 65536

/* What the folder does with an op (onnx_fold.c's table of evaluable ops):
 * compute values elementwise or reduce them (onnx_fold.c), move elements with
 * their bits intact (K_MOVE, onx_eval_move, by move_kind) or pick them by
 * index (K_INDEX, onx_eval_index, by index_kind). */
typedef enum { K_NONE, K_UNARY, K_BINARY, K_CMP, K_VARIADIC, K_WHERE, K_REDUCE, K_MOVE, K_INDEX } kind;
typedef enum { M_CAST, M_IDENTITY, M_UNSQUEEZE, M_SQUEEZE, M_RESHAPE, M_FLATTEN } move_kind;
typedef enum { X_GATHER, X_CONCAT, X_SLICE, X_EXPAND, X_TILE, X_TRANSPOSE } index_kind;

/* ---- values ---- */

typedef struct val {
    ft_dtype dt;
    ft_shape s;
    uint64_t n;
    int isf;
    int64_t *i;
    double *f;
} val;

static inline void val_free(val *v)
{
    free(v->i);
    free(v->f);
    memset(v, 0, sizeof *v);
}

static inline int val_alloc(val *v, ft_dtype dt, const ft_shape *s)
{
    memset(v, 0, sizeof *v);
    v->dt = dt;
    v->s = *s;
    v->n = ft_numel(s);
    v->isf = ft_dtype_is_float(dt);
    size_t m = (size_t)(v->n ? v->n : 1);
    if (v->isf)
        v->f = ft_calloc(m, sizeof *v->f);
    else
        v->i = ft_calloc(m, sizeof *v->i);
    return v->isf ? !v->f : !v->i;
}

static inline int val_load(const ft_tensor *t, val *v)
{
    if (val_alloc(v, t->dtype, &t->shape))
        return -1;
    for (uint64_t k = 0; k < v->n; k++) {
        if (v->isf)
            v->f[k] = ft_load_f64(t->value, t->dtype, k);
        else
            v->i[k] = ft_load_i64(t->value, t->dtype, k);
    }
    return 0;
}

static inline double getf(const val *v, uint64_t k) { return v->isf ? v->f[k] : (double)v->i[k]; }
/* double -> int64 toward zero, saturating (NaN gives 0) */
static inline int64_t to_i64(double f)
{
    if (f != f)
        return 0;
    if (f >= 9223372036854775807.0)
        return INT64_MAX;
    if (f <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)f;
}
static inline int64_t geti(const val *v, uint64_t k) { return v->isf ? to_i64(v->f[k]) : v->i[k]; }
static inline void put(val *v, uint64_t k, double f, int64_t i)
{
    if (v->isf)
        v->f[k] = f;
    else
        v->i[k] = v->dt == FT_BOOL ? (i != 0) : i;
}
/* Copy element a[ka] into b[kb] (same kind). */
static inline void copy_el(val *b, uint64_t kb, const val *a, uint64_t ka) { put(b, kb, getf(a, ka), geti(a, ka)); }

static inline void unravel(uint64_t idx, const ft_shape *s, int64_t *co)
{
    for (int d = s->rank - 1; d >= 0; d--) {
        int64_t dim = s->dims[d] ? s->dims[d] : 1;
        co[d] = (int64_t)(idx % (uint64_t)dim);
        idx /= (uint64_t)dim;
    }
}

static inline uint64_t ravel(const int64_t *co, const int64_t *strides, int rank)
{
    uint64_t o = 0;
    for (int d = 0; d < rank; d++)
        o += (uint64_t)(co[d] * strides[d]);
    return o;
}

static inline int shape_ok(const ft_shape *s, uint64_t max)
{
    uint64_t n;
    return s->rank <= FT_MAX_RANK && !ft_shape_numel(s, &n) && n <= max;
}

/* onnx_fold_eval.c: each returns 0 with out filled, or 1 when the op is left
 * to its mapper (a form not folded, a result too large), or -1 out of memory. */
int onx_eval_move(onx_ctx *c, const onx_node *n, move_kind k, val *in, int nin, val *out);
int onx_eval_index(onx_ctx *c, const onx_node *n, index_kind k, val *in, int nin, val *out);
int onx_eval_reduce(onx_ctx *c, const onx_node *n, val *in, val *out);

#endif
