/* The forms of opsets 1-6 whose attributes were dropped in opset 7 (ONNX's
 * operator changelog: Add-1/Add-6, Gemm-1/Gemm-6, BatchNormalization-1/-6,
 * AveragePool-1): each mapper here handles an op from opset 1, reads the
 * legacy attributes when n->opset is below 7 and hands the node on to the
 * mapper of the later form.
 *
 * Legacy broadcasting (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Less,
 * Greater before opset 7): without broadcast=1 the two inputs have one shape;
 * with it, B's dims line up with A's from `axis` (default: the last rank(B)
 * dims of A), each equal to A's or 1, and the result has A's shape. A B of one
 * element broadcasts whatever its rank (up to A's). The mapper reshapes B to
 * its dims followed by ones up to rank(A), after which NumPy's broadcasting
 * gives the same result:
 *
 *   A [2,3,4,5] + B [3,4] with axis=1  ->  reshape B to [3,4,1] ; add
 */
#include "onnx_ops.h"

#include <string.h>

static const struct {
    const char *onnx;
    ft_op op;
} LEGACY_BINARY[] = {
    {"Add", FT_OP_ADD},     {"Sub", FT_OP_SUB},   {"Mul", FT_OP_MUL},         {"Div", FT_OP_DIV},
    {"Pow", FT_OP_POW},     {"And", FT_OP_AND},   {"Or", FT_OP_OR},           {"Xor", FT_OP_XOR},
    {"Equal", FT_OP_EQUAL}, {"Less", FT_OP_LESS}, {"Greater", FT_OP_GREATER},
};

static int legacy_binary_op(const char *op_type, ft_op *op)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(LEGACY_BINARY); i++)
        if (strcmp(LEGACY_BINARY[i].onnx, op_type) == 0) {
            *op = LEGACY_BINARY[i].op;
            return 1;
        }
    return 0;
}

/* The axis of A where B's dims start: the attribute (negative counts from the
 * end of A) or rank(A) - rank(B). */
static int64_t legacy_axis(const onx_node *n, int ra, int rb)
{
    if (!onx_has_attr(n, "axis"))
        return ra - rb;
    int64_t ax = onx_attr_i(n, "axis", 0);
    return ax < 0 ? ax + ra : ax;
}

static uint64_t numel(const ft_shape *s)
{
    uint64_t k = 1;
    for (int i = 0; i < s->rank; i++)
        k *= (uint64_t)s->dims[i];
    return k;
}

int onx_legacy_broadcast(onx_ctx *c, const onx_node *n)
{
    ft_op op;
    if (n->opset >= 7 || n->n_in != 2 || !legacy_binary_op(n->op_type, &op))
        return 0;
    const ft_tensor *a = onx_in_tensor(c, n, 0), *b = onx_in_tensor(c, n, 1);
    if (!a || !b)
        return 0;
    int64_t bc = onx_attr_i(n, "broadcast", 0);
    if (bc == 0)
        return !ft_shape_eq(&a->shape, &b->shape);
    if (bc != 1 || b->shape.rank > a->shape.rank)
        return 1;
    /* suffix alignment and a one-element B broadcast as NumPy does */
    return numel(&b->shape) != 1 && legacy_axis(n, a->shape.rank, b->shape.rank) != a->shape.rank - b->shape.rank;
}

/* Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Less, Greater. */
ft_status ox_map_binary_v1(onx_ctx *c, const onx_node *n)
{
    ft_op op;
    if (n->opset >= 7 || !legacy_binary_op(n->op_type, &op))
        return ox_map_binary(c, n);
    OX_TRY(ox_check_dtype(c, n, op, 0));
    const ft_shape *sa = ox_shape(c, n, 0), *sb = ox_shape(c, n, 1);
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    int64_t bc = onx_attr_i(n, "broadcast", 0);
    int b = onx_in(c, n, 1);
    if (bc != 0 && bc != 1)
        return onx_unsupported(c, n, "attribute broadcast=%lld (opset %d's broadcast is 0 or 1)", (long long)bc,
                               n->opset);
    if (bc == 0) {
        if (!ft_shape_eq(sa, sb))
            return onx_error(c, n, FT_EGRAPH, "inputs 0 %s and 1 %s differ in shape and attribute broadcast is 0 "
                             "(before opset 7, B is broadcast only with broadcast=1)", ft_shape_str(sa, s1),
                             ft_shape_str(sb, s2));
    } else if (numel(sb) != 1 || sb->rank > sa->rank) {
        int ra = sa->rank, rb = sb->rank;
        int64_t ax = legacy_axis(n, ra, rb);
        int ok = rb <= ra && ax >= 0 && ax + rb <= ra;
        for (int i = 0; ok && i < rb; i++)
            ok = sb->dims[i] == sa->dims[ax + i] || sb->dims[i] == 1;
        if (!ok)
            return onx_error(c, n, FT_EGRAPH, "input 1 %s does not broadcast to input 0 %s from axis %lld (before "
                             "opset 7, B's dims match A's from `axis`, by default its last ones)",
                             ft_shape_str(sb, s2), ft_shape_str(sa, s1), (long long)ax);
        if (ax + rb < ra) {
            ft_shape s = *sb;
            while (s.rank < ra - ax)
                s.dims[s.rank++] = 1;
            int t = ox_tmp(c, n, "b_aligned");
            OX_NEED(t >= 0 && ox_reshape(c, n, b, &s, t));
            b = t;
        }
    }
    OX_NEED(ox_emit2(c, n, op, onx_in(c, n, 0), b, ox_out(c, n, 0)));
    return FT_OK;
}

/* Gemm-1/6: C has shape [M, N] unless broadcast=1, which broadcasts it as
 * opset 7 does (its dims the last ones of [M, N], each equal or 1). */
ft_status ox_map_gemm_v1(onx_ctx *c, const onx_node *n)
{
    if (n->opset >= 7)
        return ox_map_gemm(c, n);
    int64_t bc = onx_attr_i(n, "broadcast", 0);
    if (bc != 0 && bc != 1)
        return onx_unsupported(c, n, "attribute broadcast=%lld (opset %d's broadcast is 0 or 1)", (long long)bc,
                               n->opset);
    const ft_shape *sa = ox_shape(c, n, 0), *sb = ox_shape(c, n, 1), *sc = ox_shape(c, n, 2);
    if (bc == 0 && onx_in(c, n, 2) >= 0 && sa->rank == 2 && sb->rank == 2) {
        int64_t m = onx_attr_i(n, "transA", 0) ? sa->dims[1] : sa->dims[0];
        int64_t nn = onx_attr_i(n, "transB", 0) ? sb->dims[0] : sb->dims[1];
        ft_shape want = {.rank = 2, .dims = {m, nn}};
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (!ft_shape_eq(sc, &want))
            return onx_error(c, n, FT_EGRAPH, "input 2 (C) %s is not the result's shape %s and attribute broadcast "
                             "is 0 (before opset 7, C is broadcast only with broadcast=1)", ft_shape_str(sc, s1),
                             ft_shape_str(&want, s2));
    }
    return ox_map_gemm(c, n);
}

/* BatchNormalization-1/6: is_test=1 is the inference form of opset 7 on
 * (is_test=0 normalises with the batch's own statistics); consumed_inputs, a
 * legacy optimization hint of opset 1, does not change the result. */
ft_status ox_map_batch_norm_v1(onx_ctx *c, const onx_node *n)
{
    if (n->opset < 7 && onx_attr_i(n, "is_test", 0) == 0)
        return onx_unsupported(c, n, "attribute is_test=0 (training mode, normalising with the batch's statistics; "
                               "ftrun's batch_norm is the inference form, is_test=1)");
    return ox_map_batch_norm(c, n);
}

/* AveragePool-1: as opset 7 with count_include_pad=0, an attribute it does not
 * have. */
ft_status ox_map_pool_v1(onx_ctx *c, const onx_node *n)
{
    if (n->opset < 7 && strcmp(n->op_type, "AveragePool") == 0 && onx_has_attr(n, "count_include_pad"))
        return onx_unsupported(c, n, "attribute count_include_pad=%lld (AveragePool has it from opset 7; opset %d's "
                               "excludes the padding)", (long long)onx_attr_i(n, "count_include_pad", 0), n->opset);
    return ox_map_pool(c, n);
}
