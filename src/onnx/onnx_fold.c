/* Load-time folding of ONNX shape arithmetic, so the planned graph is static.
 *
 * Ops that exist only to compute shapes or constants (Constant, Shape, Size,
 * ConstantOfShape, Range, If with a known condition; one known only at run
 * time is onnx_if.c's; a Shape or Size of a tensor whose shape is known only
 * at run time, unless it reads only dims fixed at load, is an op) are always
 * evaluated here, and EyeLike when its input is a small constant (otherwise
 * it maps to eye_like); the small integer and float ops exporters chain
 * around them (Gather, Concat, Unsqueeze, Slice, Cast, Add, Mul, Equal,
 * Where, ...) are evaluated when every input is known and the result is
 * small (and a Gather of a run-time Shape at dims fixed at load), and otherwise
 * left to their mappers (onnx_ops*.c). Values are computed in int64 for
 * integer and bool dtypes and in double for floats, then stored in the
 * output's dtype.
 *
 * Why this evaluator stays beside the one on the CPU kernels
 * (src/pipeline/load_eval.c, which computes a parameter input from nodes
 * already mapped):
 *   - It runs on the ONNX node before any mapper: a folded node is never
 *     mapped, its consumers see a constant, and the graph that is planned
 *     holds no node for it. load_eval.c needs the nodes mapped and
 *     inferred first (onnx_build.c), computes one value for one parameter,
 *     and leaves those nodes in the graph.
 *   - Shape and Size need only a tensor's shape, known at import while its
 *     values are not (a graph input without -i, an activation): no kernel
 *     can run on a value that does not exist, and load_eval.c gives no
 *     value for such a tensor. The int64 index arithmetic exporters chain
 *     after them (Gather, Unsqueeze, Concat, Slice, Add, Mul, Div, Equal,
 *     Where, Cast, ...) must be folded node by node as it is met, so that
 *     the Reshape, Expand, Slice, Pad or Range that reads it gets a static
 *     parameter and a static output shape before planning.
 *   - Sizes: only values of at most FOLD_MAX_ELEMS elements (onnx_fold_int.h)
 *     are evaluated here, each in one loop; anything larger, any
 *     low-precision float (cast's rounding is the kernels') and any op or
 *     form that `evaluable` below does not list goes to its mapper, and from there, when a
 *     parameter needs it at load, to load_eval.c's kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "../graph/infer_movement.h"
#include "onnx_fold_int.h"
#include "../graph/str.h"

/* The largest result of a fold-only op (ConstantOfShape, Range). */
#define FOLD_ONLY_MAX_BYTES ((uint64_t)1 << 30)

static const char *const fold_only[] = {"Constant", "Shape", "Size", "ConstantOfShape", "Range", "If"};

static const struct {
    const char *op, *why;
} refused[] = {
    {NULL, NULL}, /* none now; the list ends here */
};

int ft_onnx_fold_only(const char *op)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(fold_only); i++)
        if (!strcmp(op, fold_only[i]))
            return 1;
    return 0;
}

int ft_onnx_refused(const char *op, const char **why)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(refused) && refused[i].op; i++)
        if (!strcmp(op, refused[i].op)) {
            *why = refused[i].why;
            return 1;
        }
    return 0;
}

/* Output k of n gets v (freed). */
static ft_status emit_val(onx_ctx *c, const onx_node *n, int k, val *v)
{
    ft_npy a = {.dtype = v->dt, .shape = v->s};
    a.nbytes = (size_t)v->n * ft_dtype_size(v->dt);
    if (!(a.data = ft_malloc(a.nbytes ? a.nbytes : 1))) {
        val_free(v);
        return onx_error(c, n, FT_ERUNTIME, "out of memory folding the node");
    }
    for (uint64_t i = 0; i < v->n; i++) {
        if (v->isf)
            ft_store_f64(a.data, v->dt, i, v->f[i]);
        else
            ft_store_i64(a.data, v->dt, i, v->i[i]);
    }
    val_free(v);
    return onx_const_out(c, n, k, &a);
}


/* ---- fold-only ops ---- */

static ft_status fold_constant(onx_ctx *c, const onx_node *n)
{
    const Onnx__AttributeProto *a;
    ft_npy v = {0};
    if ((a = onx_attr(n, "value"))) {
        ft_status st = onx_attr_tensor(c, n, a, &v);
        if (st)
            return st;
    } else if ((a = onx_attr(n, "value_float")) || (a = onx_attr(n, "value_int"))) {
        int isf = !strcmp(a->name, "value_float");
        v.dtype = isf ? FT_F32 : FT_I64;
        v.nbytes = isf ? 4 : 8;
        if (!(v.data = ft_malloc(8)))
            return onx_error(c, n, FT_ERUNTIME, "out of memory");
        if (isf)
            *(float *)v.data = a->f;
        else
            *(int64_t *)v.data = a->i;
    } else if ((a = onx_attr(n, "value_floats")) || (a = onx_attr(n, "value_ints"))) {
        int isf = !strcmp(a->name, "value_floats");
        size_t cnt = isf ? a->n_floats : a->n_ints;
        v.dtype = isf ? FT_F32 : FT_I64;
        v.shape.rank = 1;
        v.shape.dims[0] = (int64_t)cnt;
        v.nbytes = cnt * (isf ? 4 : 8);
        if (!(v.data = ft_malloc(v.nbytes ? v.nbytes : 1)))
            return onx_error(c, n, FT_ERUNTIME, "out of memory");
        if (cnt)
            memcpy(v.data, isf ? (void *)a->floats : (void *)a->ints, v.nbytes);
    } else if (onx_attr(n, "sparse_value"))
        return onx_unsupported(c, n, "a sparse constant");
    else if ((a = onx_attr(n, "value_strings")) || (a = onx_attr(n, "value_string"))) {
        const int one = !strcmp(a->name, "value_string");
        const size_t cnt = one ? 1 : a->n_strings;
        v.dtype = FT_STRING;
        v.shape.rank = !one;
        v.shape.dims[0] = (int64_t)cnt;
        v.nbytes = cnt * sizeof(const ft_str *);
        if (!(v.data = ft_calloc(cnt ? cnt : 1, sizeof(const ft_str *))))
            return onx_error(c, n, FT_ERUNTIME, "out of memory");
        for (size_t i = 0; i < cnt; i++) {
            const ProtobufCBinaryData *b = one ? &a->s : &a->strings[i];
            if (!ft_utf8_valid((const char *)b->data, b->len)) {
                free(v.data);
                return onx_error(c, n, FT_EGRAPH, "string %zu of %s is not valid UTF-8", i, a->name);
            }
            if (ft_str_make((const char *)b->data, b->len, &((const ft_str **)v.data)[i])) {
                free(v.data);
                return onx_error(c, n, FT_ERUNTIME, "out of memory");
            }
        }
    }
    else
        return onx_error(c, n, FT_EGRAPH, "a Constant without a value attribute");
    return onx_const_out(c, n, 0, &v);
}

static ft_status fold_shape(onx_ctx *c, const onx_node *n, int size)
{
    const ft_tensor *t = onx_in_tensor(c, n, 0);
    if (!t)
        return onx_error(c, n, FT_EGRAPH, "input 0 (the tensor whose shape it reads) is missing");
    int r = t->shape.rank;
    int64_t start = onx_attr_i(n, "start", 0), end = onx_attr_i(n, "end", r);
    val v;
    ft_shape s = {.rank = size ? 0 : 1};
    ft_shape_span(r, &start, &end);
    if (!size)
        s.dims[0] = end - start;
    if (val_alloc(&v, FT_I64, &s))
        return onx_error(c, n, FT_ERUNTIME, "out of memory");
    if (size)
        v.i[0] = (int64_t)ft_numel(&t->shape);
    else
        for (int64_t d = start; d < end; d++)
            v.i[d - start] = t->shape.dims[d];
    return emit_val(c, n, 0, &v);
}

static ft_status need_const(onx_ctx *c, const onx_node *n, int k, const char *what, val *v)
{
    ft_status st;
    const ft_tensor *t = onx_in_value(c, n, k, &st);
    if (st)
        return st;
    if (!t)
        return onx_unsupported(c, n, "its %s (input %d) is computed at run time; ftrun needs it known at load time "
                               "(data-dependent shapes are not supported)", what, k);
    return val_load(t, v) ? onx_error(c, n, FT_ERUNTIME, "out of memory") : FT_OK;
}

/* ConstantOfShape whose shape is computed at run time: its value (a
 * scalar constant) expanded to that shape at run time. */
static ft_status runtime_constant_of_shape(onx_ctx *c, const onx_node *n, int shape)
{
    ft_npy fillv = {.dtype = FT_F32};
    const Onnx__AttributeProto *a = onx_attr(n, "value");
    ft_status st = a ? onx_attr_tensor(c, n, a, &fillv) : FT_OK;
    if (st)
        return st;
    unsigned char zero[16] = {0};
    ft_shape s0 = {.rank = 0};
    int v = onx_const_new(c, n, "value", fillv.dtype, &s0, fillv.data ? fillv.data : zero);
    ft_npy_clear(&fillv);
    int in[2] = {v, shape}, out = onx_out(c, n, 0);
    if (v < 0 || out < 0 || !onx_emit(c, n, FT_OP_EXPAND, in, 2, &out, 1))
        return onx_status(c);
    return FT_OK;
}

/* Range whose start, limit or delta is computed at run time: the range op. */
static ft_status runtime_range(onx_ctx *c, const onx_node *n)
{
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out = onx_out(c, n, 0);
    if (in[0] < 0 || in[1] < 0 || in[2] < 0)
        return onx_error(c, n, FT_EGRAPH, "start, limit and delta are required");
    if (out < 0 || !onx_emit(c, n, FT_OP_RANGE, in, 3, &out, 1))
        return onx_status(c);
    return FT_OK;
}

/* Shape or Size of a tensor whose shape is known only at run time: the
 * shape or size op, which reads it then. */
static ft_status runtime_shape(onx_ctx *c, const onx_node *n, int size)
{
    int in = onx_in(c, n, 0), out = onx_out(c, n, 0);
    ft_node *f = out >= 0 ? onx_emit(c, n, size ? FT_OP_SIZE : FT_OP_SHAPE, &in, 1, &out, 1) : NULL;
    if (!f)
        return onx_status(c);
    ft_status st = size ? FT_OK : onx_set_i(c, f, "start", onx_attr_i(n, "start", 0));
    if (!st && !size && onx_has_attr(n, "end"))
        st = onx_set_i(c, f, "end", onx_attr_i(n, "end", 0));
    return st;
}

/* 1 when the dims of t that a Shape (start, end) or Size of it reads are
 * all fixed at load (graph.h: ft_tensor.fixed_dims), though t's shape is
 * known only at run time. */
static int read_dims_fixed(const onx_node *n, const ft_tensor *t, int size)
{
    int r = t->shape.rank;
    int64_t start = size ? 0 : onx_attr_i(n, "start", 0), end = size ? r : onx_attr_i(n, "end", r);
    ft_shape_span(r, &start, &end);
    for (int64_t d = start; d < end; d++)
        if (!(t->fixed_dims & (1u << d)))
            return 0;
    return 1;
}

/* Gather at constant positions of a Shape that runs at run time (its input
 * is dynamic), where every dim those positions name is fixed at load: the
 * sizes, folded (1), as exporters test a dim before a Squeeze. 0: not this
 * form, or a position names a stand-in dim (left to the gather op). */
static int fold_shape_gather(onx_ctx *c, const onx_node *n, ft_status *st)
{
    *st = FT_OK;
    if (n->n_in != 2 || onx_attr_i(n, "axis", 0) != 0 || (*st = onx_infer_pending(c)))
        return *st ? -1 : 0;
    const ft_tensor *sh = onx_in_tensor(c, n, 0), *ix = onx_in_const(c, n, 1);
    if (!sh || !ix || sh->producer < 0 || (ix->flags & FT_TF_INPUT) || !shape_ok(&ix->shape, FOLD_MAX_ELEMS) ||
        (ix->dtype != FT_I64 && ix->dtype != FT_I32))
        return 0;
    const ft_node *sn = c->nodes[sh->producer];
    if (sn->op != FT_OP_SHAPE || sn->in[0] < 0 || sh->shape.rank != 1)
        return 0;
    const ft_tensor *x = &c->g->tensors[sn->in[0]];
    if (!(x->flags & FT_TF_DYNAMIC))
        return 0;
    int64_t start = sn->params.shp.start, len = sh->shape.dims[0];
    val q, v;
    if (val_load(ix, &q)) {
        *st = onx_error(c, n, FT_ERUNTIME, "out of memory");
        return -1;
    }
    int ok = 1;
    for (uint64_t k = 0; k < q.n && ok; k++) {
        int64_t p = q.i[k] < 0 ? q.i[k] + len : q.i[k];
        ok = p >= 0 && p < len && (x->fixed_dims & (1u << (start + p)));
    }
    if (ok && val_alloc(&v, FT_I64, &ix->shape)) {
        val_free(&q);
        *st = onx_error(c, n, FT_ERUNTIME, "out of memory");
        return -1;
    }
    for (uint64_t k = 0; k < q.n && ok; k++)
        v.i[k] = x->shape.dims[start + (q.i[k] < 0 ? q.i[k] + len : q.i[k])];
    val_free(&q);
    if (!ok)
        return 0;
    *st = emit_val(c, n, 0, &v);
    if (!*st)
        onx_note_fold(c, "Gather");
    return *st ? -1 : 1;
}

/* Shape, Size, ConstantOfShape and Range whose results are known only at run
 * time, emitted as ops: 1, 0 when they are known at load (folded), -1 with
 * *st on failure. A Shape or Size that reads only dims fixed at load is
 * known then. */
static int emit_runtime(onx_ctx *c, const onx_node *n, ft_status *st)
{
    const char *op = n->op_type;
    int rt = -1;
    *st = FT_OK;
    if (!strcmp(op, "Shape") || !strcmp(op, "Size")) {
        if ((*st = onx_infer_pending(c)))
            return -1;
        const ft_tensor *t = onx_in_tensor(c, n, 0);
        if (!t || !(t->flags & FT_TF_DYNAMIC) || read_dims_fixed(n, t, op[1] == 'i'))
            return 0;
        *st = runtime_shape(c, n, op[1] == 'i');
    } else if (!strcmp(op, "ConstantOfShape")) {
        if ((rt = onx_runtime_in(c, n, 0, st)) < 0)
            return *st ? -1 : 0;
        *st = runtime_constant_of_shape(c, n, rt);
    } else if (!strcmp(op, "Range")) {
        for (int k = 0; k < 3 && rt < 0 && !*st; k++)
            rt = onx_runtime_in(c, n, k, st);
        if (rt < 0)
            return *st ? -1 : 0;
        *st = runtime_range(c, n);
    } else {
        return 0;
    }
    return *st ? -1 : 1;
}

static ft_status fold_constant_of_shape(onx_ctx *c, const onx_node *n)
{
    val sh, v;
    ft_status st = need_const(c, n, 0, "shape", &sh);
    if (st)
        return st;
    if (sh.n > FT_MAX_RANK) {
        val_free(&sh);
        return onx_error(c, n, FT_EGRAPH, "shape has %llu dims (the limit is %d)", (unsigned long long)sh.n, FT_MAX_RANK);
    }
    ft_shape s = {.rank = (int)sh.n};
    for (uint64_t k = 0; k < sh.n; k++)
        s.dims[k] = geti(&sh, k);
    val_free(&sh);
    for (int d = 0; d < s.rank; d++)
        if (s.dims[d] < 0)
            return onx_error(c, n, FT_EGRAPH, "shape has a negative dim (%lld)", (long long)s.dims[d]);
    ft_npy fillv = {.dtype = FT_F32};
    const Onnx__AttributeProto *a = onx_attr(n, "value");
    if (a && (st = onx_attr_tensor(c, n, a, &fillv)))
        return st;
    uint64_t numel, bytes;
    if (ft_shape_numel(&s, &numel) || ft_mul_overflow(numel, ft_dtype_size(fillv.dtype), &bytes) ||
        bytes > FOLD_ONLY_MAX_BYTES) {
        ft_npy_clear(&fillv);
        return onx_unsupported(c, n, "the constant it makes is too large to fold (limit %llu bytes)",
                               (unsigned long long)FOLD_ONLY_MAX_BYTES);
    }
    if (val_alloc(&v, fillv.dtype, &s)) {
        ft_npy_clear(&fillv);
        return onx_error(c, n, FT_ERUNTIME, "out of memory");
    }
    double f = fillv.data ? ft_load_f64(fillv.data, fillv.dtype, 0) : 0;
    int64_t i = fillv.data ? ft_load_i64(fillv.data, fillv.dtype, 0) : 0;
    for (uint64_t k = 0; k < v.n; k++)
        put(&v, k, f, i);
    ft_npy_clear(&fillv);
    return emit_val(c, n, 0, &v);
}

static ft_status fold_range(onx_ctx *c, const onx_node *n)
{
    val a[3];
    ft_status st = FT_OK;
    int got = 0;
    for (; got < 3 && !st; got++)
        st = need_const(c, n, got, got == 0 ? "start" : got == 1 ? "limit" : "delta", &a[got]);
    if (st) {
        for (int k = 0; k < got - 1; k++)
            val_free(&a[k]);
        return st;
    }
    ft_dtype dt = a[0].dt;
    double s = getf(&a[0], 0), l = getf(&a[1], 0), d = getf(&a[2], 0);
    int64_t si = geti(&a[0], 0), li = geti(&a[1], 0), di = geti(&a[2], 0);
    int isf = a[0].isf;
    for (int k = 0; k < 3; k++)
        val_free(&a[k]);
    if (isf ? d == 0 : di == 0)
        return onx_error(c, n, FT_EGRAPH, "delta is 0");
    /* in double: li - si may overflow int64 */
    double cnt = isf ? ceil((l - s) / d) : ceil(((double)li - (double)si) / (double)di);
    if (!(cnt > 0))
        cnt = 0;
    if (cnt * (double)ft_dtype_size(dt) > (double)FOLD_ONLY_MAX_BYTES) /* before the count becomes an int64 */
        return onx_unsupported(c, n, "the range it makes is too large to fold");
    ft_shape sh = {.rank = 1, .dims = {(int64_t)cnt}};
    val v;
    if (val_alloc(&v, dt, &sh))
        return onx_error(c, n, FT_ERUNTIME, "out of memory");
    for (uint64_t k = 0; k < v.n; k++)
        put(&v, k, s + (double)k * d, si + (int64_t)k * di);
    return emit_val(c, n, 0, &v);
}

static ft_status fold_eye_like(onx_ctx *c, const onx_node *n)
{
    const ft_tensor *t = onx_in_tensor(c, n, 0);
    if (!t)
        return onx_error(c, n, FT_EGRAPH, "input 0 is missing");
    if (t->shape.rank != 2)
        return onx_error(c, n, FT_EGRAPH, "input must be 2-D, got rank %d", t->shape.rank);
    ft_dtype dt = t->dtype;
    if (onx_has_attr(n, "dtype") && ft_onnx_dtype((int32_t)onx_attr_i(n, "dtype", 1), &dt))
        return onx_unsupported(c, n, "dtype %s", ft_onnx_type_name((int32_t)onx_attr_i(n, "dtype", 1)));
    int64_t k = onx_attr_i(n, "k", 0);
    val v;
    if (val_alloc(&v, dt, &t->shape))
        return onx_error(c, n, FT_ERUNTIME, "out of memory");
    /* only the rows the diagonal k crosses (k may be any int64) */
    int64_t R = t->shape.dims[0], C = t->shape.dims[1];
    if (k < C && k > -R) {
        int64_t r1 = C - k < R ? C - k : R;
        for (int64_t r = k < 0 ? -k : 0; r < r1; r++)
            put(&v, (uint64_t)(r * C + r + k), 1, 1);
    }
    return emit_val(c, n, 0, &v);
}

static ft_status fold_if(onx_ctx *c, const onx_node *n)
{
    val cond;
    ft_status st = need_const(c, n, 0, "condition", &cond);
    if (st)
        return st;
    int take = cond.n > 0 && geti(&cond, 0) != 0;
    val_free(&cond);
    const Onnx__AttributeProto *b = onx_attr(n, take ? "then_branch" : "else_branch");
    if (!b || !b->g)
        return onx_error(c, n, FT_EGRAPH, "no %s graph", take ? "then_branch" : "else_branch");
    return onx_import_branch(c, n, b->g);
}

/* ---- ops evaluated when every input is known ---- */


static const struct {
    const char *op;
    kind k;
    int sub; /* K_MOVE: a move_kind, K_INDEX: an index_kind */
} evaluable[] = {
    {"Neg", K_UNARY, 0}, {"Abs", K_UNARY, 0}, {"Floor", K_UNARY, 0}, {"Ceil", K_UNARY, 0}, {"Sqrt", K_UNARY, 0},
    {"Not", K_UNARY, 0}, {"BitwiseNot", K_UNARY, 0}, {"Reciprocal", K_UNARY, 0}, {"Exp", K_UNARY, 0},
    {"Log", K_UNARY, 0}, {"Sign", K_UNARY, 0}, {"Round", K_UNARY, 0}, {"Relu", K_UNARY, 0}, {"Sigmoid", K_UNARY, 0},
    {"Tanh", K_UNARY, 0}, {"Sin", K_UNARY, 0}, {"Cos", K_UNARY, 0}, {"Erf", K_UNARY, 0},
    {"Add", K_BINARY, 0}, {"Sub", K_BINARY, 0}, {"Mul", K_BINARY, 0}, {"Div", K_BINARY, 0}, {"And", K_BINARY, 0},
    {"Or", K_BINARY, 0}, {"Xor", K_BINARY, 0}, {"Mod", K_BINARY, 0}, {"Pow", K_BINARY, 0}, {"BitShift", K_BINARY, 0},
    {"BitwiseAnd", K_BINARY, 0}, {"BitwiseOr", K_BINARY, 0}, {"BitwiseXor", K_BINARY, 0},
    {"Equal", K_CMP, 0}, {"Less", K_CMP, 0}, {"Greater", K_CMP, 0}, {"LessOrEqual", K_CMP, 0},
    {"GreaterOrEqual", K_CMP, 0},
    {"Max", K_VARIADIC, 0}, {"Min", K_VARIADIC, 0},
    {"Where", K_WHERE, 0},
    {"ReduceProd", K_REDUCE, 0}, {"ReduceSum", K_REDUCE, 0}, {"ReduceMax", K_REDUCE, 0}, {"ReduceMin", K_REDUCE, 0},
    {"Cast", K_MOVE, M_CAST}, {"Identity", K_MOVE, M_IDENTITY}, {"Unsqueeze", K_MOVE, M_UNSQUEEZE},
    {"Squeeze", K_MOVE, M_SQUEEZE}, {"Reshape", K_MOVE, M_RESHAPE}, {"Flatten", K_MOVE, M_FLATTEN},
    {"CastLike", K_MOVE, M_CAST},
    {"Gather", K_INDEX, X_GATHER}, {"Concat", K_INDEX, X_CONCAT}, {"Slice", K_INDEX, X_SLICE},
    {"Expand", K_INDEX, X_EXPAND}, {"Tile", K_INDEX, X_TILE}, {"Transpose", K_INDEX, X_TRANSPOSE},
};

/* The unary ops that take floating-point inputs only (ONNX's type constraints):
 * an integer input is not folded, its mapper reports it. */
static int float_only(const char *op)
{
    static const char *const ops[] = {"Sqrt", "Reciprocal", "Exp", "Log", "Round", "Sigmoid", "Tanh", "Sin", "Cos", "Erf"};
    for (size_t i = 0; i < FT_ARRAY_LEN(ops); i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return 0;
}

static double unary_f(const char *op, double x)
{
    if (!strcmp(op, "Neg"))
        return -x;
    if (!strcmp(op, "Not"))
        return x == 0;
    if (!strcmp(op, "Abs"))
        return fabs(x);
    if (!strcmp(op, "Floor"))
        return floor(x);
    if (!strcmp(op, "Ceil"))
        return ceil(x);
    if (!strcmp(op, "Reciprocal"))
        return 1.0 / x;
    if (!strcmp(op, "Exp"))
        return exp(x);
    if (!strcmp(op, "Log"))
        return log(x);
    if (!strcmp(op, "Sign"))
        return x > 0 ? 1.0 : x < 0 ? -1.0 : x; /* NaN stays NaN, -0 stays -0 */
    if (!strcmp(op, "Round"))
        return nearbyint(x); /* half to even in the default rounding mode */
    if (!strcmp(op, "Relu"))
        return x < 0 ? 0.0 : x;
    if (!strcmp(op, "Sigmoid"))
        return 1.0 / (1.0 + exp(-x));
    if (!strcmp(op, "Tanh"))
        return tanh(x);
    if (!strcmp(op, "Sin"))
        return sin(x);
    if (!strcmp(op, "Cos"))
        return cos(x);
    if (!strcmp(op, "Erf"))
        return erf(x);
    return sqrt(x);
}

static int64_t unary_i(const char *op, int64_t x)
{
    /* two's complement wrap, as the kernels compute it (no overflow on INT64_MIN) */
    if (!strcmp(op, "Neg"))
        return (int64_t)(0 - (uint64_t)x);
    if (!strcmp(op, "Abs"))
        return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    if (!strcmp(op, "Not"))
        return !x;
    if (!strcmp(op, "Sign"))
        return (x > 0) - (x < 0);
    if (!strcmp(op, "Relu"))
        return x < 0 ? 0 : x;
    if (!strcmp(op, "BitwiseNot"))
        return ~x;
    return x;
}

/* One binary op on a pair; *bad set for an integer division by zero. */
static void binary(const char *op, int fl, double af, double bf, int64_t ai, int64_t bi, double *rf, int64_t *ri, int *bad,
                   int fmod_attr, int shift_left, int shift_bits)
{
    if (!strcmp(op, "Add"))
        *rf = af + bf, *ri = (int64_t)((uint64_t)ai + (uint64_t)bi);
    else if (!strcmp(op, "Sub"))
        *rf = af - bf, *ri = (int64_t)((uint64_t)ai - (uint64_t)bi);
    else if (!strcmp(op, "Mul"))
        *rf = af * bf, *ri = (int64_t)((uint64_t)ai * (uint64_t)bi);
    else if (!strcmp(op, "Div")) {
        *rf = af / bf;
        if (!fl && (bi == 0 || (ai == INT64_MIN && bi == -1)))
            *bad = 1, *ri = 0;
        else if (fl)
            *ri = 0;
        else
            *ri = ai / bi;
    } else if (!strcmp(op, "Mod")) {
        /* fmod=0 (integers only): the result takes the divisor's sign, as
         * Python's %; fmod=1: C's fmod, the dividend's sign */
        *rf = fmod(af, bf);
        if (!fl && bi == 0)
            *bad = 1, *ri = 0;
        else if (!fl) {
            *ri = bi == -1 ? 0 : ai % bi;
            if (!fmod_attr && *ri != 0 && ((*ri < 0) != (bi < 0)))
                *ri += bi;
        }
    } else if (!strcmp(op, "Pow")) {
        *rf = pow(af, bf);
        *ri = to_i64(*rf); /* an integer base with a floating-point exponent: the base's type, toward zero */
        if (!fl) { /* integer base and exponent: exact, wrapping; a negative exponent gives 0 (or +-1 for +-1) */
            uint64_t r = 1, b = (uint64_t)ai;
            int64_t e = bi;
            if (e < 0)
                r = ai == 1 ? 1 : ai == -1 ? ((e & 1) ? (uint64_t)-1 : 1) : 0;
            for (; e > 0; e >>= 1, b *= b)
                if (e & 1)
                    r *= b;
            *ri = (int64_t)r;
        }
    } else if (!strcmp(op, "BitShift")) {
        /* the shift is of the unsigned value, of the input's width (shift_bits) */
        uint64_t mask = shift_bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << shift_bits) - 1;
        uint64_t a = (uint64_t)ai & mask;
        *ri = bi < 0 || bi >= shift_bits ? 0 : (int64_t)((shift_left ? a << bi : a >> bi) & mask);
    } else if (!strcmp(op, "BitwiseAnd"))
        *ri = ai & bi;
    else if (!strcmp(op, "BitwiseOr"))
        *ri = ai | bi;
    else if (!strcmp(op, "BitwiseXor"))
        *ri = ai ^ bi;
    else if (!strcmp(op, "And"))
        *ri = ai && bi;
    else if (!strcmp(op, "Or"))
        *ri = ai || bi;
    else if (!strcmp(op, "Xor"))
        *ri = !ai != !bi;
    else if (!strcmp(op, "Equal"))
        *ri = *rf = af == bf && ai == bi;
    else if (!strcmp(op, "Less"))
        *ri = *rf = af < bf || (af == bf && ai < bi);
    else if (!strcmp(op, "Greater"))
        *ri = *rf = af > bf || (af == bf && ai > bi);
    else if (!strcmp(op, "LessOrEqual"))
        *ri = *rf = !(af > bf || (af == bf && ai > bi));
    else if (!strcmp(op, "GreaterOrEqual"))
        *ri = *rf = !(af < bf || (af == bf && ai < bi));
    else if (!strcmp(op, "Max"))
        *rf = af != af || af > bf ? af : bf, *ri = ai > bi ? ai : bi;
    else /* Min */
        *rf = af != af || af < bf ? af : bf, *ri = ai < bi ? ai : bi;
}

/* Elementwise over broadcast inputs (2 for binary/compare, 3 for Where). */
static int eval_broadcast(onx_ctx *c, const onx_node *n, kind k, val *in, int nin, val *out)
{
    const char *op = n->op_type;
    int fmod_attr = (int)onx_attr_i(n, "fmod", 0);
    int shift_left = !strcmp(onx_attr_s(c, n, "direction", ""), "LEFT");
    int shift_bits = (int)ft_dtype_size(in[0].dt) * 8;
    int integer_only = !strcmp(op, "BitShift") || !strncmp(op, "Bitwise", 7);
    if ((integer_only && (in[0].isf || in[1].isf)) || (!strcmp(op, "Mod") && !fmod_attr && (in[0].isf || in[1].isf)))
        return 1; /* not a form ONNX allows: the mapper reports it */
    ft_shape s = in[0].s;
    for (int i = 1; i < nin; i++)
        if (ft_broadcast(&s, &in[i].s, &s))
            return -2;
    if (!shape_ok(&s, FOLD_MAX_ELEMS))
        return 1;
    ft_dtype dt = k == K_CMP ? FT_BOOL : k == K_WHERE ? in[1].dt : in[0].dt;
    if (val_alloc(out, dt, &s))
        return -1;
    int64_t st[3][FT_MAX_RANK], co[FT_MAX_RANK];
    for (int i = 0; i < nin; i++)
        ft_broadcast_strides(&in[i].s, &s, st[i]);
    int bad = 0;
    for (uint64_t e = 0; e < out->n; e++) {
        unravel(e, &s, co);
        uint64_t o[3];
        for (int i = 0; i < nin; i++)
            o[i] = ravel(co, st[i], s.rank);
        if (k == K_WHERE) {
            copy_el(out, e, &in[geti(&in[0], o[0]) ? 1 : 2], o[geti(&in[0], o[0]) ? 1 : 2]);
            continue;
        }
        /* integer operands compare exactly in int64; floats in double */
        int fl = in[0].isf || in[1].isf;
        double rf = 0;
        int64_t ri = 0;
        binary(op, fl, getf(&in[0], o[0]), getf(&in[1], o[1]), fl ? 0 : geti(&in[0], o[0]), fl ? 0 : geti(&in[1], o[1]), &rf, &ri,
               &bad, fmod_attr, shift_left, shift_bits);
        if (!fl && k != K_CMP)
            rf = (double)ri;
        put(out, e, rf, k == K_CMP && fl ? (int64_t)rf : ri);
    }
    return bad ? -3 : 0;
}

/* The kinds that compute values (the others move elements, bits intact). */
static int computes(kind k, int sub)
{
    return k == K_UNARY || k == K_BINARY || k == K_CMP || k == K_VARIADIC || k == K_REDUCE ||
           (k == K_MOVE && sub == M_CAST);
}

int ft_onnx_fold(onx_ctx *c, const onx_node *n, ft_status *st)
{
    const char *op = n->op_type;
    if (!strcmp(op, "If")) { /* a condition known only at run time: both branches, guarded */
        const ft_tensor *t = onx_in_value(c, n, 0, st);
        if (*st)
            return -1;
        if (!t) {
            *st = onx_import_if(c, n);
            return *st ? -1 : 1;
        }
    }
    if (!strcmp(op, "Gather")) {
        int r = fold_shape_gather(c, n, st);
        if (r)
            return r;
    }
    if (ft_onnx_fold_only(op)) {
        int r = emit_runtime(c, n, st);
        if (r)
            return r;
        if (!strcmp(op, "Constant"))
            *st = fold_constant(c, n);
        else if (!strcmp(op, "Shape") || !strcmp(op, "Size"))
            *st = fold_shape(c, n, op[1] == 'i');
        else if (!strcmp(op, "ConstantOfShape"))
            *st = fold_constant_of_shape(c, n);
        else if (!strcmp(op, "Range"))
            *st = fold_range(c, n);
        else
            *st = fold_if(c, n);
        if (!*st)
            onx_note_fold(c, op);
        return *st ? -1 : 1;
    }
    if (!strcmp(op, "EyeLike")) {
        /* a small constant input: a constant; else (or a graph input given with -i) the eye_like op */
        const ft_tensor *t = onx_in_const(c, n, 0);
        if (!t || (t->flags & FT_TF_INPUT) || t->shape.rank != 2 || !shape_ok(&t->shape, FOLD_MAX_ELEMS))
            return 0;
        *st = fold_eye_like(c, n);
        if (!*st)
            onx_note_fold(c, op);
        return *st ? -1 : 1;
    }
    kind k = K_NONE;
    int sub = 0;
    for (size_t i = 0; i < FT_ARRAY_LEN(evaluable); i++)
        if (!strcmp(op, evaluable[i].op)) {
            k = evaluable[i].k;
            sub = evaluable[i].sub;
        }
    /* only forms the mappers know (an older opset's signature may differ) */
    if (k == K_NONE || n->n_in < 1 || n->n_in > 16 || !onx_find_map(op, n->opset) || onx_legacy_broadcast(c, n))
        return 0;
    val in[16];
    int nin = 0;
    for (int i = 0; i < n->n_in; i++) {
        if (onx_in(c, n, i) < 0) {
            in[nin] = (val){0};
            in[nin++].n = (uint64_t)-1; /* marks an omitted optional input */
            continue;
        }
        /* graph inputs given with -i stay inputs here: only their mappers
         * and the fold-only ops read them as parameters */
        if (k == K_MOVE && sub == M_CAST && i == 1) { /* CastLike reads only its second input's type */
            const ft_tensor *like = onx_in_tensor(c, n, 1);
            const ft_shape none_s = {.rank = 1, .dims = {0}};
            if (!like || ft_dtype_is_lowp(like->dtype))
                goto none;
            if (val_alloc(&in[nin], like->dtype, &none_s))
                goto oom;
            nin++;
            continue;
        }
        const ft_tensor *t = onx_in_const(c, n, i);
        if (!t || (t->flags & FT_TF_INPUT) || !shape_ok(&t->shape, FOLD_MAX_ELEMS))
            goto none;
        if (t->dtype == FT_U64 && computes(k, sub)) /* int64 holds its bits, not its value above INT64_MAX */
            goto none;
        if (ft_dtype_is_lowp(t->dtype)) /* the low-precision dtypes: left to the kernels (cast's rounding) */
            goto none;
        if (val_load(t, &in[nin]))
            goto oom;
        nin++;
    }
    /* trailing omitted inputs count as absent */
    while (nin > 0 && in[nin - 1].n == (uint64_t)-1)
        nin--;
    if (nin == 0) /* no input: the mapper reports what is missing */
        return 0;
    for (int i = 0; i < nin; i++)
        if (in[i].n == (uint64_t)-1) /* an omitted middle input (Slice's axes): not folded here */
            goto none;
    val out = {0};
    int rc = 1;
    switch (k) {
    case K_UNARY:
        if ((float_only(op) && !in[0].isf) || (!strcmp(op, "BitwiseNot") && in[0].isf)) {
            rc = 1; /* not a form ONNX allows: the mapper reports it */
            break;
        }
        if (val_alloc(&out, in[0].dt, &in[0].s))
            goto oom;
        for (uint64_t e = 0; e < out.n; e++)
            put(&out, e, unary_f(op, getf(&in[0], e)), unary_i(op, geti(&in[0], e)));
        rc = 0;
        break;
    case K_BINARY:
    case K_CMP:
        rc = nin == 2 ? eval_broadcast(c, n, k, in, 2, &out) : 1;
        break;
    case K_WHERE:
        rc = nin == 3 ? eval_broadcast(c, n, k, in, 3, &out) : 1;
        break;
    case K_VARIADIC:
        if (nin == 1) {
            rc = val_alloc(&out, in[0].dt, &in[0].s) ? -1 : 0;
            for (uint64_t e = 0; !rc && e < out.n; e++)
                copy_el(&out, e, &in[0], e);
        } else
            rc = nin == 2 ? eval_broadcast(c, n, k, in, 2, &out) : 1;
        break;
    case K_MOVE:
        rc = onx_eval_move(c, n, (move_kind)sub, in, nin, &out);
        break;
    case K_INDEX:
        rc = onx_eval_index(c, n, (index_kind)sub, in, nin, &out);
        break;
    case K_REDUCE:
        rc = onx_eval_reduce(c, n, in, &out);
        break;
    case K_NONE:
        rc = 1;
        break;
    }
    for (int i = 0; i < nin; i++)
        val_free(&in[i]);
    if (rc == -1) {
        val_free(&out);
        *st = onx_error(c, n, FT_ERUNTIME, "out of memory folding the node");
        return -1;
    }
    if (rc == -3 || rc == -4) {
        val_free(&out);
        *st = onx_error(c, n, FT_EGRAPH, "%s", rc == -3 ? "integer division by zero in values known at load time"
                                                         : "an index is out of range in values known at load time");
        return -1;
    }
    if (!rc && out.dt == FT_U64 && computes(k, sub)) /* a u64 result above INT64_MAX would saturate */
        rc = 1;
    if (rc) { /* not foldable here (an unusual form, or too large): the mapper runs it */
        val_free(&out);
        return 0;
    }
    if (n->n_out > 1) {
        val_free(&out);
        return 0;
    }
    onx_note_fold(c, op);
    *st = emit_val(c, n, 0, &out);
    return *st ? -1 : 1;
none:
    for (int i = 0; i < nin; i++)
        val_free(&in[i]);
    return 0;
oom:
    for (int i = 0; i < nin; i++)
        val_free(&in[i]);
    *st = onx_error(c, n, FT_ERUNTIME, "out of memory folding the node");
    return -1;
}
