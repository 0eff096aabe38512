/* CUDA kernels of the shape arithmetic ops (cu.cuh, shapes.cu): shape and
 * size write the run-time shape of their input, passed by value from the
 * host (the view's shape; the input's data is not read), range writes
 * start + i * delta reading start and delta on the device. The semantic
 * reference is src/cpu/shapes.c. */
#include "cu.cuh"

namespace {

struct dims_arg {
    int64_t v[FT_MAX_RANK];
};

__global__ void shape_kernel(int64_t *__restrict__ y, dims_arg d, int n)
{
    int i = (int)threadIdx.x;
    if (i < n)
        y[i] = d.v[i];
}

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) range_kernel(T *__restrict__ y, const T *__restrict__ start,
                                                         const T *__restrict__ delta, int64_t len)
{
    const T s = *start, d = *delta;
    for (int64_t t = cu_grid_start(); t < len; t += cu_grid_step())
        y[t] = (T)(s + (T)t * d);
}

template <class T> void range_launch(ft_kctx *k, const ft_view *in, ft_view *out, int64_t len)
{
    range_kernel<T><<<cu_grid(k->be, (uint64_t)len), CU_BLOCK, 0, k->be->stream>>>(
        (T *)out->data, (const T *)in[0].data, (const T *)in[2].data, len);
}

} // namespace

CU_KFN(cu_tensor_shape)
{
    dims_arg d = {};
    int n0 = n->params.shp.start, cnt = n->params.shp.end - n->params.shp.start;
    for (int i = 0; i < cnt; i++)
        d.v[i] = in[0].shape.dims[n0 + i];
    if (cnt > 0)
        shape_kernel<<<1, FT_MAX_RANK, 0, k->be->stream>>>((int64_t *)out->data, d, cnt);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_tensor_size)
{
    dims_arg d = {};
    d.v[0] = (int64_t)ft_numel(&in[0].shape);
    shape_kernel<<<1, 1, 0, k->be->stream>>>((int64_t *)out->data, d, 1);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_range)
{
    const int64_t len = (int64_t)ft_numel(&out->shape);
    if (len == 0)
        return FT_OK;
    const ft_dtype dt = out->dtype;
    if (dt == FT_F32)
        range_launch<float>(k, in, out, len);
    else if (dt == FT_F64)
        range_launch<double>(k, in, out, len);
    else if (dt == FT_I16)
        range_launch<int16_t>(k, in, out, len);
    else if (dt == FT_I32)
        range_launch<int32_t>(k, in, out, len);
    else if (dt == FT_I64)
        range_launch<int64_t>(k, in, out, len);
    else
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "range: dtype %s is not supported on cuda",
                           ft_dtype_name(dt));
    CU_LAUNCHED(k, n);
    return FT_OK;
}
