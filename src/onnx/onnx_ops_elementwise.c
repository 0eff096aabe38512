/* ONNX elementwise ops -> ftrun elementwise ops: one-to-one unary and binary
 * ops (the trigonometric and hyperbolic functions, the bitwise ops, BitShift,
 * PRelu and Shrink on floats included; Det, one matrix in and its determinant out), activations with attributes, Clip,
 * Cast/CastLike, variadic Sum/Mean, and short expansions for the forms ftrun
 * has no single op for (PRelu and Shrink on integers, IsInf with one sign).
 * The table in onnx_ops.c names each mapper.
 *
 *   ft_status st = ox_map_unary(c, n);   // n->op_type "Relu" -> one relu node
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *onnx;
    ft_op op;
} op_pair;

static const op_pair UNARY[] = {
    {"Abs", FT_OP_ABS},         {"Neg", FT_OP_NEG},         {"Sign", FT_OP_SIGN},
    {"Relu", FT_OP_RELU},       {"Sigmoid", FT_OP_SIGMOID}, {"Tanh", FT_OP_TANH},
    {"Exp", FT_OP_EXP},         {"Log", FT_OP_LOG},         {"Sqrt", FT_OP_SQRT},
    {"Reciprocal", FT_OP_RECIPROCAL}, {"Sin", FT_OP_SIN},   {"Cos", FT_OP_COS},
    {"Erf", FT_OP_ERF},         {"Floor", FT_OP_FLOOR},     {"Ceil", FT_OP_CEIL},
    {"Round", FT_OP_ROUND},     {"Softplus", FT_OP_SOFTPLUS}, {"Softsign", FT_OP_SOFTSIGN},
    {"HardSwish", FT_OP_HARD_SWISH}, {"Mish", FT_OP_MISH},  {"Not", FT_OP_NOT},
    {"IsNaN", FT_OP_IS_NAN},     {"Tan", FT_OP_TAN},         {"Asin", FT_OP_ASIN},
    {"Acos", FT_OP_ACOS},       {"Atan", FT_OP_ATAN},       {"Sinh", FT_OP_SINH},
    {"Cosh", FT_OP_COSH},       {"Asinh", FT_OP_ASINH},     {"Acosh", FT_OP_ACOSH},
    {"Atanh", FT_OP_ATANH},     {"BitwiseNot", FT_OP_BITWISE_NOT}, {"Det", FT_OP_DET},
};

static const op_pair BINARY[] = {
    {"Add", FT_OP_ADD},     {"Sub", FT_OP_SUB},     {"Mul", FT_OP_MUL},
    {"Div", FT_OP_DIV},     {"Pow", FT_OP_POW},     {"Mod", FT_OP_MOD},
    {"Equal", FT_OP_EQUAL}, {"Less", FT_OP_LESS},   {"LessOrEqual", FT_OP_LESS_EQUAL},
    {"Greater", FT_OP_GREATER}, {"GreaterOrEqual", FT_OP_GREATER_EQUAL},
    {"And", FT_OP_AND},     {"Or", FT_OP_OR},       {"Xor", FT_OP_XOR},
    {"Max", FT_OP_MAX},     {"Min", FT_OP_MIN},     {"BitwiseAnd", FT_OP_BITWISE_AND},
    {"BitwiseOr", FT_OP_BITWISE_OR}, {"BitwiseXor", FT_OP_BITWISE_XOR}, {"BitShift", FT_OP_BIT_SHIFT},
};

static int find_pair(const op_pair *t, size_t len, const char *name, ft_op *op)
{
    for (size_t i = 0; i < len; i++)
        if (strcmp(t[i].onnx, name) == 0) {
            *op = t[i].op;
            return 0;
        }
    return -1;
}

static ft_status no_such(onx_ctx *c, const onx_node *n)
{
    return onx_error(c, n, FT_ERUNTIME, "no elementwise mapping for op type '%s'", n->op_type);
}

/* The op that table t maps n to, its input dtypes checked. */
static ft_status find_op(onx_ctx *c, const onx_node *n, const op_pair *t, size_t len, ft_op *op)
{
    if (find_pair(t, len, n->op_type, op))
        return no_such(c, n);
    return ox_check_dtype(c, n, *op, 0);
}

ft_status ox_map_unary(onx_ctx *c, const onx_node *n)
{
    ft_op op;
    OX_TRY(find_op(c, n, UNARY, FT_ARRAY_LEN(UNARY), &op));
    OX_NEED(ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_binary(onx_ctx *c, const onx_node *n)
{
    ft_op op;
    OX_TRY(find_op(c, n, BINARY, FT_ARRAY_LEN(BINARY), &op));
    ft_node *f = ox_emit2(c, n, op, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    if (op == FT_OP_MOD)
        OX_TRY(onx_set_i(c, f, "fmod", onx_attr_i(n, "fmod", 0)));
    if (op == FT_OP_BIT_SHIFT) {
        /* ONNX's "LEFT" / "RIGHT"; another value is refused by the graph's validation */
        const char *d = onx_attr_s(c, n, "direction", "");
        OX_TRY(onx_set_s(c, f, "direction", strcmp(d, "LEFT") == 0 ? "left" : strcmp(d, "RIGHT") == 0 ? "right" : d));
    }
    return FT_OK;
}

ft_status ox_map_variadic(onx_ctx *c, const onx_node *n)
{
    ft_op op;
    OX_TRY(find_op(c, n, BINARY, FT_ARRAY_LEN(BINARY), &op));
    return ox_emit_chunked(c, n, op, -1);
}

/* Sum: x1 + x2 + ...; Mean: the same sum divided by the count. */
ft_status ox_map_sum_mean(onx_ctx *c, const onx_node *n)
{
    int mean = strcmp(n->op_type, "Mean") == 0;
    OX_TRY(ox_check_dtype(c, n, FT_OP_ADD, 0));
    int out = ox_out(c, n, 0), acc = onx_in(c, n, 0);
    if (n->n_in == 1 && !mean) {
        OX_NEED(ox_emit1(c, n, FT_OP_IDENTITY, acc, out));
        return FT_OK;
    }
    for (int k = 1; k < n->n_in; k++) {
        int dst = (k == n->n_in - 1 && !mean) ? out : ox_tmp(c, n, "sum");
        OX_NEED(dst >= 0 && ox_emit2(c, n, FT_OP_ADD, acc, onx_in(c, n, k), dst));
        acc = dst;
    }
    if (mean) {
        int cnt = ox_scalar(c, n, "count", ox_dtype(c, n, 0), n->n_in);
        OX_NEED(cnt >= 0 && ox_emit2(c, n, FT_OP_DIV, acc, cnt, out));
    }
    return FT_OK;
}

ft_status ox_map_where(onx_ctx *c, const onx_node *n)
{
    OX_NEED(onx_emit(c, n, FT_OP_WHERE, NULL, -1, NULL, -1));
    return FT_OK;
}

/* Activations whose ONNX attributes are ftrun's (same names and defaults). */
ft_status ox_map_alpha_act(onx_ctx *c, const onx_node *n)
{
    static const struct {
        const char *onnx;
        ft_op op;
        double alpha, beta; /* ONNX defaults; beta: Selu's gamma, HardSigmoid's beta */
    } T[] = {
        {"LeakyRelu", FT_OP_LEAKY_RELU, 0.01, 0},
        {"Elu", FT_OP_ELU, 1.0, 0},
        {"Celu", FT_OP_CELU, 1.0, 0},
        {"Selu", FT_OP_SELU, 1.67326319217681884765625, 1.05070102214813232421875},
        {"HardSigmoid", FT_OP_HARD_SIGMOID, 0.2, 0.5},
        {"ThresholdedRelu", FT_OP_THRESHOLDED_RELU, 1.0, 0},
        {"Swish", FT_OP_SWISH, 1.0, 0},
    };
    for (size_t i = 0; i < FT_ARRAY_LEN(T); i++) {
        if (strcmp(T[i].onnx, n->op_type) != 0)
            continue;
        OX_TRY(ox_check_dtype(c, n, T[i].op, 0));
        ft_node *f = ox_emit1(c, n, T[i].op, onx_in(c, n, 0), ox_out(c, n, 0));
        OX_NEED(f);
        OX_TRY(onx_set_f(c, f, "alpha", onx_attr_f(n, "alpha", T[i].alpha)));
        if (T[i].op == FT_OP_SELU)
            OX_TRY(onx_set_f(c, f, "gamma", onx_attr_f(n, "gamma", T[i].beta)));
        if (T[i].op == FT_OP_HARD_SIGMOID)
            OX_TRY(onx_set_f(c, f, "beta", onx_attr_f(n, "beta", T[i].beta)));
        return FT_OK;
    }
    return no_such(c, n);
}

/* SwiGLU (opset 28): swish(A, alpha) * B, A and B of one shape (no broadcasting). */
ft_status ox_map_swiglu(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_SWISH, 0));
    const ft_shape *a = ox_shape(c, n, 0), *b = ox_shape(c, n, 1);
    if (!ft_shape_eq(a, b))
        return onx_error(c, n, FT_EGRAPH, "inputs A and B must have one shape (SwiGLU does not broadcast)");
    int g = ox_tmp(c, n, "swish");
    OX_NEED(g >= 0);
    ft_node *f = ox_emit1(c, n, FT_OP_SWISH, onx_in(c, n, 0), g);
    OX_NEED(f);
    OX_TRY(onx_set_f(c, f, "alpha", onx_attr_f(n, "alpha", 1.0)));
    OX_NEED(ox_emit2(c, n, FT_OP_MUL, g, onx_in(c, n, 1), ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_gelu(onx_ctx *c, const onx_node *n)
{
    const char *ap = onx_attr_s(c, n, "approximate", "none");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
        return onx_unsupported(c, n, "attribute approximate='%s' (ftrun's gelu has 'none' and 'tanh')", ap);
    OX_TRY(ox_check_dtype(c, n, FT_OP_GELU, 0));
    ft_node *f = ox_emit1(c, n, FT_OP_GELU, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_s(c, f, "approximate", ap);
}

/* Clip: min/max attributes before opset 11, optional inputs from then on.
 * Bounds known at load become clip's attributes; a bound computed at run time
 * becomes max(x, min) / min(x, max). */
ft_status ox_map_clip(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_CLIP, 0));
    int x = onx_in(c, n, 0), out = ox_out(c, n, 0);
    if (n->opset < 11) {
        ft_node *f = ox_emit1(c, n, FT_OP_CLIP, x, out);
        OX_NEED(f);
        if (onx_has_attr(n, "min"))
            OX_TRY(onx_set_f(c, f, "min", onx_attr_f(n, "min", -INFINITY)));
        if (onx_has_attr(n, "max"))
            OX_TRY(onx_set_f(c, f, "max", onx_attr_f(n, "max", INFINITY)));
        return FT_OK;
    }
    int lo = onx_in(c, n, 1), hi = onx_in(c, n, 2);
    const ft_tensor *lo_c = onx_in_const(c, n, 1), *hi_c = onx_in_const(c, n, 2);
    if ((lo < 0 || lo_c) && (hi < 0 || hi_c)) {
        ft_node *f = ox_emit1(c, n, FT_OP_CLIP, x, out);
        OX_NEED(f);
        const double *v;
        int cnt;
        for (int k = 1; k <= 2; k++) {
            OX_TRY(onx_const_floats(c, n, k, "clip bound", &v, &cnt));
            if (cnt > 1)
                return onx_unsupported(c, n, "input %d holds %d values; Clip's bounds are scalars", k, cnt);
            if (cnt == 1)
                OX_TRY(onx_set_f(c, f, k == 1 ? "min" : "max", v[0]));
        }
        return FT_OK;
    }
    int cur = x;
    if (lo >= 0) {
        int dst = hi >= 0 ? ox_tmp(c, n, "lower") : out;
        OX_NEED(dst >= 0 && ox_emit2(c, n, FT_OP_MAX, cur, lo, dst));
        cur = dst;
    }
    if (hi >= 0)
        OX_NEED(ox_emit2(c, n, FT_OP_MIN, cur, hi, out));
    return FT_OK;
}

/* Cast, CastLike (the second input's type) and BitCast (opset 26: the bytes
 * read as 'to', whose element size bitcast's inference checks). */
ft_status ox_map_cast(onx_ctx *c, const onx_node *n)
{
    ft_dtype to;
    if (strcmp(n->op_type, "CastLike") == 0) {
        to = ox_dtype(c, n, 1);
    } else {
        const char *name;
        int64_t t = onx_attr_i(n, "to", 0);
        if (ox_dtype_from_onnx(t, &to, &name))
            return onx_unsupported(c, n, "attribute to=%lld (%s): ftrun has no such dtype", (long long)t, name);
    }
    const int bitcast = strcmp(n->op_type, "BitCast") == 0;
    if (bitcast && (to == FT_STRING || ox_dtype(c, n, 0) == FT_STRING))
        return onx_unsupported(c, n, "a bitcast %s strings", to == FT_STRING ? "to" : "from");
    ft_node *f = ox_emit1(c, n, bitcast ? FT_OP_BITCAST : FT_OP_CAST, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_s(c, f, "to", ft_dtype_name(to)));
    if (bitcast)
        return FT_OK;
    /* saturate (opset 19) and round_mode (opset 24): the float8 and f8e8m0 conversions */
    if (onx_has_attr(n, "saturate"))
        OX_TRY(onx_set_i(c, f, "saturate", onx_attr_i(n, "saturate", 1) != 0));
    if (onx_has_attr(n, "round_mode"))
        OX_TRY(onx_set_s(c, f, "round_mode", onx_attr_s(c, n, "round_mode", "up")));
    return FT_OK;
}

/* IsInf: is_inf, and with one of detect_negative/detect_positive off, the sign
 * test of the other (x < 0 or x > 0). */
ft_status ox_map_is_inf(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_IS_INF, 0));
    int neg = onx_attr_i(n, "detect_negative", 1) != 0, pos = onx_attr_i(n, "detect_positive", 1) != 0;
    int x = onx_in(c, n, 0), out = ox_out(c, n, 0);
    ft_dtype dt = ox_dtype(c, n, 0);
    if (neg && pos) {
        OX_NEED(ox_emit1(c, n, FT_OP_IS_INF, x, out));
        return FT_OK;
    }
    if (!neg && !pos) { /* never true: x > +inf */
        int inf = ox_scalar(c, n, "inf", dt, INFINITY);
        OX_NEED(inf >= 0 && ox_emit2(c, n, FT_OP_GREATER, x, inf, out));
        return FT_OK;
    }
    int zero = ox_scalar(c, n, "zero", dt, 0), inf_t = ox_tmp(c, n, "is_inf"), sgn = ox_tmp(c, n, "sign");
    OX_NEED(zero >= 0 && inf_t >= 0 && sgn >= 0);
    OX_NEED(ox_emit1(c, n, FT_OP_IS_INF, x, inf_t));
    OX_NEED(ox_emit2(c, n, pos ? FT_OP_GREATER : FT_OP_LESS, x, zero, sgn));
    OX_NEED(ox_emit2(c, n, FT_OP_AND, inf_t, sgn, out));
    return FT_OK;
}

/* PRelu: the prelu op on floats; on integers where(x < 0, x * slope, x).
 * Before opset 7 a slope of shape [C] is per channel (dim 1 of x): it is
 * reshaped to [C, 1, ...] so that it broadcasts there. */
ft_status ox_map_prelu(onx_ctx *c, const onx_node *n)
{
    int x = onx_in(c, n, 0), slope = onx_in(c, n, 1);
    const ft_shape *xs = ox_shape(c, n, 0), *ss = ox_shape(c, n, 1);
    if (n->opset < 7 && xs->rank >= 3 && ss->rank == 1 && ss->dims[0] == xs->dims[1] && ss->dims[0] != 1) {
        ft_shape col = {.rank = xs->rank - 1};
        col.dims[0] = ss->dims[0];
        for (int d = 1; d < col.rank; d++)
            col.dims[d] = 1;
        int r = ox_tmp(c, n, "slope_per_channel");
        OX_NEED(r >= 0 && ox_reshape(c, n, slope, &col, r));
        slope = r;
    }
    if (ft_dtype_is_float(ox_dtype(c, n, 0))) {
        OX_TRY(ox_check_dtype(c, n, FT_OP_PRELU, 0));
        OX_NEED(ox_emit2(c, n, FT_OP_PRELU, x, slope, ox_out(c, n, 0)));
        return FT_OK;
    }
    OX_TRY(ox_check_dtype(c, n, FT_OP_MUL, 0));
    int zero = ox_scalar(c, n, "zero", ox_dtype(c, n, 0), 0), neg = ox_tmp(c, n, "negative"),
        scaled = ox_tmp(c, n, "scaled");
    OX_NEED(zero >= 0 && neg >= 0 && scaled >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_LESS, x, zero, neg) && ox_emit2(c, n, FT_OP_MUL, x, slope, scaled));
    OX_NEED(ox_where(c, n, neg, scaled, x, ox_out(c, n, 0)));
    return FT_OK;
}

/* Shrink: x < -lambd: x + bias; x > lambd: x - bias; else 0. The shrink op
 * on floats; on integers an expansion in where, add and sub. */
ft_status ox_map_shrink(onx_ctx *c, const onx_node *n)
{
    int x = onx_in(c, n, 0);
    ft_dtype dt = ox_dtype(c, n, 0);
    double lambd = onx_attr_f(n, "lambd", 0.5), bias = onx_attr_f(n, "bias", 0.0);
    if (ft_dtype_is_float(dt)) {
        ft_node *f = ox_emit1(c, n, FT_OP_SHRINK, x, ox_out(c, n, 0));
        OX_NEED(f);
        OX_TRY(onx_set_f(c, f, "lambd", lambd));
        return onx_set_f(c, f, "bias", bias);
    }
    OX_TRY(ox_check_dtype(c, n, FT_OP_ADD, 0));
    int lo = ox_scalar(c, n, "neg_lambd", dt, -lambd), hi = ox_scalar(c, n, "lambd", dt, lambd),
        b = ox_scalar(c, n, "bias", dt, bias), zero = ox_scalar(c, n, "zero", dt, 0);
    int below = ox_tmp(c, n, "below"), above = ox_tmp(c, n, "above"), plus = ox_tmp(c, n, "plus_bias"),
        minus = ox_tmp(c, n, "minus_bias"), upper = ox_tmp(c, n, "upper");
    OX_NEED(lo >= 0 && hi >= 0 && b >= 0 && zero >= 0 && below >= 0 && above >= 0 && plus >= 0 && minus >= 0 &&
            upper >= 0);
    OX_NEED(ox_emit2(c, n, FT_OP_LESS, x, lo, below) && ox_emit2(c, n, FT_OP_GREATER, x, hi, above));
    OX_NEED(ox_emit2(c, n, FT_OP_ADD, x, b, plus) && ox_emit2(c, n, FT_OP_SUB, x, b, minus));
    OX_NEED(ox_where(c, n, above, minus, zero, upper));
    OX_NEED(ox_where(c, n, below, plus, upper, ox_out(c, n, 0)));
    return FT_OK;
}
