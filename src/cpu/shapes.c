/* CPU kernels of the shape arithmetic ops (cpu.h, shapes.c section): shape
 * and size write their input's run-time shape and element count (the view's
 * shape, not its data), range writes start + i * delta. Shapes were checked
 * by src/graph/infer_shapes.c; src/cuda/shapes.cu computes the same. */
#include "cpu.h"

ft_status cpu_tensor_shape(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    int64_t *y = (int64_t *)out->data;
    for (int d = n->params.shp.start; d < n->params.shp.end; d++)
        y[d - n->params.shp.start] = in[0].shape.dims[d];
    return FT_OK;
}

ft_status cpu_tensor_size(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k, (void)n;
    *(int64_t *)out->data = (int64_t)ft_numel(&in[0].shape);
    return FT_OK;
}

ft_status cpu_range(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k, (void)n;
    int64_t len = (int64_t)ft_numel(&out->shape);
    ft_dtype dt = out->dtype;
    if (dt == FT_F32 || dt == FT_F64) {
        double s = ft_load_f64(in[0].data, dt, 0), d = ft_load_f64(in[2].data, dt, 0);
        for (int64_t i = 0; i < len; i++)
            ft_store_f64(out->data, dt, (size_t)i, s + (double)i * d);
    } else {
        int64_t s = ft_load_i64(in[0].data, dt, 0), d = ft_load_i64(in[2].data, dt, 0);
        for (int64_t i = 0; i < len; i++)
            ft_store_i64(out->data, dt, (size_t)i, s + i * d);
    }
    return FT_OK;
}
