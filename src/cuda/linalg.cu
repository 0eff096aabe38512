/* Linear algebra on CUDA: det, the determinant of every square matrix of a
 * batch (src/graph/infer_linalg.c), as the CPU's src/cpu/linalg.c: each
 * matrix copied into the workspace in the working precision (f64 for f64,
 * f32 for f32, f16 and bf16), factored P A = L U with partial pivoting by
 * cuBLAS's getrfBatched, and det = (-1)^(row swaps) * prod(diag U), stored
 * with one rounding. A singular matrix has an exact zero on U's diagonal, so
 * its determinant is 0; M = 0 gives 1. cuBLAS reads the row-major matrices as
 * their transposes, which have the same determinant. */
#include "cu.cuh"

namespace {

template <class T> struct det_work { typedef float type; };
template <> struct det_work<double> { typedef double type; };

/* Matrix b of the chunk starting at b0 into a + b * ms (ms: M * M rounded up
 * to 16 bytes, so every matrix cuBLAS gets is aligned as a fresh allocation's
 * rows would be), and its pointer into ptr[b]. */
template <class T, class C>
__global__ void det_load(const T *x, C *a, C **ptr, int64_t total, int64_t mm, int64_t ms, int64_t b0)
{
    for (int64_t i = cu_grid_start(); i < total; i += cu_grid_step()) {
        int64_t b = i / mm, e = i % mm;
        a[b * ms + e] = (C)cu_load(x, b0 * mm + i);
        if (e == 0)
            ptr[b] = a + b * ms;
    }
}

template <class T, class C>
__global__ void det_finish(const C *a, const int *piv, T *y, int64_t m, int64_t ms, int64_t b0, int64_t nb)
{
    for (int64_t b = cu_grid_start(); b < nb; b += cu_grid_step()) {
        const C *u = a + b * ms;
        const int *p = piv + b * m;
        C d = 1;
        int neg = 0;
        for (int64_t i = 0; i < m; i++) {
            d *= u[i * m + i];
            neg ^= p[i] != (int)i + 1;
        }
        cu_store(y, b0 + b, neg ? -d : d);
    }
}

template <class T> __global__ void det_ones(T *y, int64_t nb)
{
    for (int64_t b = cu_grid_start(); b < nb; b += cu_grid_step())
        cu_store(y, b, (typename cu_acc<T>::type)1);
}

static cublasStatus_t getrf(cublasHandle_t h, int m, float **a, int *piv, int *info, int nb)
{
    return cublasSgetrfBatched(h, m, a, m, piv, info, nb);
}
static cublasStatus_t getrf(cublasHandle_t h, int m, double **a, int *piv, int *info, int nb)
{
    return cublasDgetrfBatched(h, m, a, m, piv, info, nb);
}

template <class T> ft_status run_det(ft_kctx *k, const ft_node *n, const T *x, T *y, int64_t batch, int64_t m)
{
    typedef typename det_work<T>::type C;
    ft_backend_ctx *be = k->be;
    if (m == 0) {
        det_ones<T><<<cu_grid(be, (uint64_t)batch), CU_BLOCK, 0, be->stream>>>(y, batch);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    const int64_t q = (int64_t)(16 / sizeof(C)); /* elements per 16 bytes */
    int64_t mm = m * m, ms = (mm + q - 1) / q * q;
    /* Matrices per call: the batch, bounded by getrfBatched's int count and a
     * workspace of about 256 MiB (at least one matrix). */
    int64_t per = (int64_t)(sizeof(C *) + (size_t)ms * sizeof(C) + (size_t)(m + 1) * sizeof(int));
    int64_t chunk = ((int64_t)256 << 20) / per;
    chunk = chunk < 1 ? 1 : chunk > batch ? batch : chunk > (1 << 30) ? (1 << 30) : chunk;
    cublasHandle_t h;
    ft_status st = cu_blas(k, n, &h);
    if (st)
        return st;
    void *ws;
    st = cu_workspace(k, n, (size_t)(chunk * per) + 64, &ws); /* 64: the alignment gap */
    if (st)
        return st;
    C **ptr = (C **)ws;
    C *a = (C *)(ptr + (chunk + 1) / 2 * 2); /* 16-byte aligned after the pointers */
    int *piv = (int *)(a + chunk * ms), *info = piv + chunk * m;
    for (int64_t b0 = 0; b0 < batch; b0 += chunk) {
        int64_t nb = batch - b0 < chunk ? batch - b0 : chunk, total = nb * mm;
        det_load<T, C><<<cu_grid(be, (uint64_t)total), CU_BLOCK, 0, be->stream>>>(x, a, ptr, total, mm, ms, b0);
        CU_LAUNCHED(k, n);
        CUBLAS_TRY(k, n, getrf(h, (int)m, ptr, piv, info, (int)nb));
        det_finish<T, C><<<cu_grid(be, (uint64_t)nb), CU_BLOCK, 0, be->stream>>>(a, piv, y, m, ms, b0, nb);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}

} // namespace

ft_status cu_det(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *xs = &in[0].shape;
    int64_t batch = (int64_t)ft_numel(&out[0].shape), m = xs->dims[xs->rank - 1];
    if (batch == 0)
        return FT_OK;
    ft_status st = FT_OK;
    CU_DISPATCH_FLOAT(in[0].dtype, T, st = run_det<T>(k, n, (const T *)in[0].data, (T *)out[0].data, batch, m));
    return st;
}
