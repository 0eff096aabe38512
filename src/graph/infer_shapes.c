/* Inference of the shape arithmetic ops: shape and size (a tensor's shape
 * and element count as int64 values) and range (start, limit, delta given as
 * tensors). The values of shape and size are known at run time only when
 * their input's shape is (FT_TF_DYNAMIC); range's output length depends on
 * its inputs' values, which ft_infer_ints gives at load when they are
 * constants and, at run time, as the executor read them
 * (src/runtime/exec.c). */
#include <math.h>
#include <string.h>

#include "graph.h"
#include "infer_common.h"

ft_status ft_infer_shape(ft_infer_ctx *c)
{
    int r = c->in[0]->shape.rank;
    const ft_attr_val *e = ft_attr(c->node, "end");
    int64_t start = ft_attr(c->node, "start")->i, end = e->present ? e->i : r;
    ft_shape_span(r, &start, &end);
    c->params->shp.start = (int)start;
    c->params->shp.end = (int)end;
    ft_shape o = {.rank = 1, .dims = {end - start}};
    return ft_infer_set_out(c, 0, FT_I64, &o);
}

ft_status ft_infer_size(ft_infer_ctx *c)
{
    ft_shape o = {.rank = 0};
    return ft_infer_set_out(c, 0, FT_I64, &o);
}

ft_status ft_infer_range(ft_infer_ctx *c)
{
    static const char *const what[3] = {"start", "limit", "delta"};
    ft_dtype dt = c->in[0]->dtype;
    char sb[FT_SHAPE_STR];
    for (int i = 0; i < 3; i++)
        if (c->in[i]->dtype != dt || ft_numel(&c->in[i]->shape) != 1 || c->in[i]->shape.rank > 1)
            return ft_infer_fail(c, "%s '%s' must be one %s value (a scalar, as start's), got %s %s", what[i],
                                 ft_infer_in_name(c, i), ft_dtype_name(dt), ft_dtype_name(c->in[i]->dtype),
                                 ft_shape_str(&c->in[i]->shape, sb));
    if (dt != FT_I64 && dt != FT_I32 && dt != FT_I16 && dt != FT_F32 && dt != FT_F64)
        return ft_infer_fail(c, "start '%s' has dtype %s; range takes i16, i32, i64, f32 or f64",
                             ft_infer_in_name(c, 0), ft_dtype_name(dt));
    double v[3];
    int64_t iv[3];
    for (int i = 0; i < 3; i++) {
        const ft_tensor *t = &c->g->tensors[c->node->in[i]];
        if (!(t->flags & FT_TF_VALUE) || !t->value) { /* computed at run time: a stand-in of one element */
            ft_shape o = {.rank = 1, .dims = {1}};
            return ft_infer_set_out(c, 0, dt, &o);
        }
        v[i] = ft_load_f64(t->value, dt, 0);
        iv[i] = ft_load_i64(t->value, dt, 0);
    }
    int isf = dt == FT_F32 || dt == FT_F64;
    if (isf ? v[2] == 0 : iv[2] == 0)
        return ft_infer_fail(c, "delta '%s' is 0", ft_infer_in_name(c, 2));
    /* ONNX Range: max(ceil((limit - start) / delta), 0) elements; in double,
     * where limit - start cannot overflow */
    double n = isf ? ceil((v[1] - v[0]) / v[2]) : ceil(((double)iv[1] - (double)iv[0]) / (double)iv[2]);
    if (!(n > 0))
        n = 0;
    if (n > 9.0e15)
        return ft_infer_fail(c, "range from %g to %g by %g has too many elements", v[0], v[1], v[2]);
    ft_shape o = {.rank = 1, .dims = {(int64_t)n}};
    return ft_infer_set_out(c, 0, dt, &o);
}
