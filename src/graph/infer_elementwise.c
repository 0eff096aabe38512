/* Shape and dtype inference of the elementwise ops. The dtype of input 0 has
 * already been checked against the op table's mask by the validator. */
#include "infer_common.h"

#include <math.h>
#include <string.h>

static ft_status bcast(ft_infer_ctx *c, int first, int last, ft_shape *out)
{
    *out = c->in[first]->shape;
    for (int i = first + 1; i <= last; i++) {
        ft_shape r;
        if (ft_broadcast(out, &c->in[i]->shape, &r) != 0 && ft_infer_standin(c)) {
            /* stand-ins that disagree: their larger dims stand in, the check waits for the run */
            const ft_shape *b = &c->in[i]->shape;
            r.rank = out->rank > b->rank ? out->rank : b->rank;
            for (int d = 0; d < r.rank; d++) {
                int da = d - (r.rank - out->rank), db = d - (r.rank - b->rank);
                int64_t x = da >= 0 ? out->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
                r.dims[d] = x > y ? x : y;
            }
        } else if (ft_broadcast(out, &c->in[i]->shape, &r) != 0) {
            char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
            if (i == first + 1)
                return ft_infer_fail(c, "shapes %s ('%s') and %s ('%s') do not broadcast", ft_shape_str(out, a),
                                     c->g->tensors[c->node->in[first]].name, ft_shape_str(&c->in[i]->shape, b),
                                     c->g->tensors[c->node->in[i]].name);
            return ft_infer_fail(c, "shapes %s (inputs %d to %d broadcast together) and %s ('%s') do not broadcast",
                                 ft_shape_str(out, a), first, i - 1, ft_shape_str(&c->in[i]->shape, b),
                                 c->g->tensors[c->node->in[i]].name);
        }
        *out = r;
    }
    return FT_OK;
}

static void int_range(ft_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case FT_I8: *lo = INT8_MIN, *hi = INT8_MAX; return;
    case FT_I16: *lo = INT16_MIN, *hi = INT16_MAX; return;
    case FT_I32: *lo = INT32_MIN, *hi = INT32_MAX; return;
    case FT_I64: *lo = INT64_MIN, *hi = INT64_MAX; return;
    case FT_U8: *lo = 0, *hi = UINT8_MAX; return;
    case FT_U16: *lo = 0, *hi = UINT16_MAX; return;
    case FT_U32: *lo = 0, *hi = UINT32_MAX; return;
    case FT_U64: break; /* unary_params */
    case FT_BOOL: *lo = 0, *hi = 1; return;
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: case FT_STRING: case FT_DTYPE_COUNT: break;
    FT_CASE_LOWP: break; /* no clip of them (FT_DT_NUM) */
    }
    *lo = INT64_MIN, *hi = INT64_MAX;
}

/* A double bound as an integer of [tlo, thi]; NaN means no bound (def). */
static int64_t int_bound(double v, int64_t tlo, int64_t thi, int64_t def)
{
    if (isnan(v))
        return def;
    if (v <= (double)tlo)
        return tlo;
    if (v >= (double)thi) /* (double)INT64_MAX is 2^63: the cast below stays in range */
        return thi;
    return (int64_t)v;
}

/* The same as a uint64 (NaN: def). */
static uint64_t u64_bound(double v, uint64_t def)
{
    if (isnan(v))
        return def;
    return v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
}

/* The parser of the one-input ops' attributes: each float attribute the op
 * has under one of these names, clip's bounds (infinite when absent) and, on
 * an integer dtype, their integer values. */
static void unary_params(ft_infer_ctx *c)
{
    ft_unary_params *p = &c->params->unary;
    static const char *const names[] = {"alpha", "beta", "gamma", "min", "max", "lambd", "bias"};
    double *vals[] = {&p->alpha, &p->beta, &p->gamma, &p->lo, &p->hi, &p->lambd, &p->bias};
    p->lo = -INFINITY;
    p->hi = INFINITY;
    for (size_t i = 0; i < FT_ARRAY_LEN(names); i++)
        if (ft_op_attr_index(c->node->op, names[i]) >= 0)
            *vals[i] = ft_attr(c->node, names[i])->f;
    if (c->node->op == FT_OP_CLIP && c->in[0]->dtype == FT_U64) {
        /* the bits of the uint64 bounds (cpu/unary.c reads them back as uint64) */
        uint64_t ulo = u64_bound(ceil(p->lo), 0), uhi = u64_bound(floor(p->hi), UINT64_MAX);
        p->ilo = (int64_t)(ulo > uhi ? uhi : ulo);
        p->ihi = (int64_t)uhi;
    } else if (c->node->op == FT_OP_CLIP && ft_dtype_is_int(c->in[0]->dtype)) {
        int64_t tlo, thi;
        int_range(c->in[0]->dtype, &tlo, &thi);
        p->ilo = int_bound(ceil(p->lo), tlo, thi, tlo);
        p->ihi = int_bound(floor(p->hi), tlo, thi, thi);
        if (p->ilo > p->ihi)
            p->ilo = p->ihi;
    }
}

ft_status ft_infer_unary(ft_infer_ctx *c)
{
    unary_params(c);
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_unary_bool(ft_infer_ctx *c)
{
    c->out[0].shape = c->in[0]->shape;
    c->out[0].dtype = FT_BOOL;
    return FT_OK;
}

/* cast: any dtype to 'to'; bitcast: the same bytes read as 'to' (ops.def). */
ft_status ft_infer_cast(ft_infer_ctx *c)
{
    const char *to = ft_attr(c->node, "to")->s;
    ft_dtype dt;
    if (ft_dtype_parse(to, &dt) != 0)
    {
        char list[256];
        return ft_infer_fail(c, "attribute 'to': unknown dtype '%s' (expected %s)", to,
                             ft_dtype_mask_str(FT_DT_ALL, list, sizeof list));
    }
    const ft_dtype src = c->in[0]->dtype;
    if (c->node->op == FT_OP_BITCAST && (dt == FT_STRING || src == FT_STRING))
        return ft_infer_fail(c, "bitcast %s strings: a string element is no bit pattern", dt == FT_STRING ? "to" : "from");
    /* strings cast to and from numbers and bools (runtime/text_cast.c) */
    if ((dt == FT_STRING && ft_dtype_is_lowp(src)) || (src == FT_STRING && ft_dtype_is_lowp(dt)))
        return ft_infer_fail(c, "a cast from %s to %s: strings cast to and from %s only", ft_dtype_name(src),
                             ft_dtype_name(dt), "bool, the integers and f16, bf16, f32, f64");
    if (c->node->op == FT_OP_CAST) { /* round_mode: f8e8m0's rounding (cpu/unary.c reads both attributes) */
        const char *rm = ft_attr(c->node, "round_mode")->s;
        if (strcmp(rm, "up") && strcmp(rm, "down") && strcmp(rm, "nearest"))
            return ft_infer_fail(c, "attribute 'round_mode' is '%s' (expected up, down or nearest)", rm);
    }
    /* bitcast reads the input's bytes as 'to': the element sizes must match */
    if (c->node->op == FT_OP_BITCAST && ft_dtype_size(dt) != ft_dtype_size(c->in[0]->dtype))
        return ft_infer_fail(c, "attribute 'to' is %s (%zu bytes), the input is %s (%zu bytes): bitcast keeps the "
                             "element size", to, ft_dtype_size(dt), ft_dtype_name(c->in[0]->dtype),
                             ft_dtype_size(c->in[0]->dtype));
    c->out[0].shape = c->in[0]->shape;
    c->out[0].dtype = dt;
    return FT_OK;
}

/* Input i has input j's dtype; the output (dtype dt) has the broadcast shape
 * of inputs 0..i. */
static ft_status same_bcast(ft_infer_ctx *c, int i, int j, ft_dtype dt)
{
    ft_status s = ft_infer_same_dtype(c, i, j, NULL);
    if (s)
        return s;
    c->out[0].dtype = dt;
    return bcast(c, 0, i, &c->out[0].shape);
}

ft_status ft_infer_binary(ft_infer_ctx *c)
{
    if (c->node->op == FT_OP_MOD)
        c->params->binary.fmod = ft_attr(c->node, "fmod")->i != 0;
    if (c->node->op == FT_OP_BIT_SHIFT) {
        const char *d = ft_attr(c->node, "direction")->s;
        if (strcmp(d, "left") != 0 && strcmp(d, "right") != 0)
            return ft_infer_fail(c, "attribute 'direction' is '%s'; expected 'left' or 'right'", d);
        c->params->binary.shift_right = strcmp(d, "right") == 0;
    }
    return same_bcast(c, 1, 0, c->in[0]->dtype);
}

/* prelu: the slope broadcasts one way, to x's shape (ONNX PRelu). */
ft_status ft_infer_prelu(ft_infer_ctx *c)
{
    ft_status s = ft_infer_binary(c);
    if (s)
        return s;
    if (!ft_shape_eq(&c->out[0].shape, &c->in[0]->shape)) {
        char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
        return ft_infer_fail(c, "slope '%s' %s does not broadcast to the shape %s of x '%s' (it may only have "
                             "x's dims or 1, aligned from the right)", ft_infer_in_name(c, 1),
                             ft_shape_str(&c->in[1]->shape, b), ft_shape_str(&c->in[0]->shape, a),
                             ft_infer_in_name(c, 0));
    }
    return FT_OK;
}

ft_status ft_infer_pow(ft_infer_ctx *c)
{
    if (!ft_dtype_in(c->in[1]->dtype, FT_DT_NUM))
        return ft_infer_fail(c, "exponent ('%s') has dtype %s; expected a float or int dtype",
                             c->g->tensors[c->node->in[1]].name, ft_dtype_name(c->in[1]->dtype));
    c->out[0].dtype = c->in[0]->dtype;
    return bcast(c, 0, 1, &c->out[0].shape);
}

ft_status ft_infer_variadic(ft_infer_ctx *c)
{
    for (int i = 1; i < c->n_in; i++) {
        if (!c->in[i])
            return ft_infer_fail(c, "input %d is omitted; every input of %s must be given", i,
                                 ft_op_name(c->node->op));
        ft_status s = ft_infer_same_dtype(c, i, 0, NULL);
        if (s)
            return s;
    }
    c->out[0].dtype = c->in[0]->dtype;
    return bcast(c, 0, c->n_in - 1, &c->out[0].shape);
}

ft_status ft_infer_compare(ft_infer_ctx *c)
{
    return same_bcast(c, 1, 0, FT_BOOL);
}

ft_status ft_infer_where(ft_infer_ctx *c)
{
    return same_bcast(c, 2, 1, c->in[1]->dtype);
}

ft_status ft_infer_gelu(ft_infer_ctx *c)
{
    const char *a = ft_attr(c->node, "approximate")->s;
    if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
        return ft_infer_fail(c, "attribute 'approximate' is '%s'; expected 'none' or 'tanh'", a);
    ft_status st = ft_infer_unary(c);
    c->params->unary.gelu_tanh = strcmp(a, "tanh") == 0;
    return st;
}
