/* Shape and dtype inference of the elementwise ops. The dtype of input 0 has
 * already been checked against the op table's mask by the validator. */
#include "graph.h"

#include <string.h>

/* Input i must have the dtype of input ref. */
static ft_status same_dtype(ft_infer_ctx *c, int i, int ref)
{
    if (c->in[i]->dtype != c->in[ref]->dtype)
        return ft_infer_fail(c, "input %d ('%s') has dtype %s but input %d ('%s') has %s", i,
                             c->g->tensors[c->node->in[i]].name, ft_dtype_name(c->in[i]->dtype), ref,
                             c->g->tensors[c->node->in[ref]].name, ft_dtype_name(c->in[ref]->dtype));
    return FT_OK;
}

static ft_status bcast(ft_infer_ctx *c, int first, int last, ft_shape *out)
{
    *out = c->in[first]->shape;
    for (int i = first + 1; i <= last; i++) {
        ft_shape r;
        if (ft_broadcast(out, &c->in[i]->shape, &r) != 0) {
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

ft_status ft_infer_unary(ft_infer_ctx *c)
{
    c->out[0] = *c->in[0];
    return FT_OK;
}

ft_status ft_infer_unary_bool(ft_infer_ctx *c)
{
    c->out[0].shape = c->in[0]->shape;
    c->out[0].dtype = FT_BOOL;
    return FT_OK;
}

ft_status ft_infer_cast(ft_infer_ctx *c)
{
    const char *to = ft_attr(c->node, "to")->s;
    ft_dtype dt;
    if (ft_dtype_parse(to, &dt) != 0)
        return ft_infer_fail(c, "attribute 'to': unknown dtype '%s' (expected f16, bf16, f32, f64, i8, i16, "
                             "i32, i64, u8 or bool)", to);
    c->out[0].shape = c->in[0]->shape;
    c->out[0].dtype = dt;
    return FT_OK;
}

ft_status ft_infer_binary(ft_infer_ctx *c)
{
    ft_status s = same_dtype(c, 1, 0);
    if (s)
        return s;
    c->out[0].dtype = c->in[0]->dtype;
    return bcast(c, 0, 1, &c->out[0].shape);
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
        ft_status s = same_dtype(c, i, 0);
        if (s)
            return s;
    }
    c->out[0].dtype = c->in[0]->dtype;
    return bcast(c, 0, c->n_in - 1, &c->out[0].shape);
}

ft_status ft_infer_compare(ft_infer_ctx *c)
{
    ft_status s = same_dtype(c, 1, 0);
    if (s)
        return s;
    c->out[0].dtype = FT_BOOL;
    return bcast(c, 0, 1, &c->out[0].shape);
}

ft_status ft_infer_where(ft_infer_ctx *c)
{
    ft_status s = same_dtype(c, 2, 1);
    if (s)
        return s;
    c->out[0].dtype = c->in[1]->dtype;
    return bcast(c, 0, 2, &c->out[0].shape);
}

ft_status ft_infer_gelu(ft_infer_ctx *c)
{
    const char *a = ft_attr(c->node, "approximate")->s;
    if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
        return ft_infer_fail(c, "attribute 'approximate' is '%s'; expected 'none' or 'tanh'", a);
    return ft_infer_unary(c);
}
