/* CUDA kernels of the geometry ops (cu.cuh, geom.cu): eye_like,
 * reverse_sequence, col2im, affine_grid and roi_align (center_crop_pad runs
 * pad's kernel, src/cuda/movement.cu). The semantic reference is
 * src/cpu/geom.c, whose summation orders these kernels repeat; shapes and
 * attributes were checked by src/graph/infer_geom.c. Sequence lengths and
 * batch indices are checked on the device (cu_report, first bad one); an
 * output element whose length or index is bad is left 0 and the run fails at
 * the next sync. One thread per output element throughout. */
#include "cu.cuh"

#include <string.h>

namespace {

/* Arithmetic rounded once per operation, never contracted into an FMA, so
 * the sums and products are the CPU's (src/cpu/geom.c), bit for bit. */
__device__ __forceinline__ float radd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double radd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float rsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double rsub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float rmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float rdiv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double rdiv(double a, double b) { return __ddiv_rn(a, b); }

/* ---- eye_like ------------------------------------------------------------------------ */

template <class U>
__global__ void __launch_bounds__(CU_BLOCK) eye_kernel(U *__restrict__ y, int64_t total, int64_t cols, int64_t k, U one)
{
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step()) {
        int64_t r = t / cols, c = t - r * cols;
        y[t] = c - r == k ? one : U();
    }
}

/* ---- reverse_sequence ---------------------------------------------------------------- */

template <class U, class I>
__global__ void __launch_bounds__(CU_BLOCK) revseq_kernel(U *__restrict__ y, const U *__restrict__ x,
                                                          const I *__restrict__ lens, int64_t total, int64_t sb,
                                                          int64_t nb, int64_t st, int64_t T, cu_derr *err, int node)
{
    for (int64_t p = cu_grid_start(); p < total; p += cu_grid_step()) {
        int64_t bi = p / sb % nb, ti = p / st % T, len = (int64_t)lens[bi];
        if (len < 0 || len > T) {
            if (ti == 0)
                cu_report(err, CU_DERR_INDEX, node, bi, len, 0, T);
            y[p] = U();
            continue;
        }
        y[p] = x[ti < len ? p + (len - 1 - 2 * ti) * st : p];
    }
}

/* ---- col2im -------------------------------------------------------------------------- */

struct c2i_args {
    int r;
    int64_t K, L, P, total;
    int64_t img[FT_MAX_RANK], blk[FT_MAX_RANK], d[FT_MAX_RANK], s[FT_MAX_RANK], pb[FT_MAX_RANK], nb[FT_MAX_RANK];
};

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) col2im_kernel(T *__restrict__ y, const T *__restrict__ x, c2i_args a)
{
    typedef typename cu_acc<T>::type A;
    for (int64_t o = cu_grid_start(); o < a.total; o += cu_grid_step()) {
        int64_t pl = o / a.P, rem = o % a.P, pos[FT_MAX_RANK], q[FT_MAX_RANK];
        for (int i = a.r - 1; i >= 0; i--) {
            pos[i] = rem % a.img[i];
            rem /= a.img[i];
            q[i] = 0;
        }
        const T *xp = x + pl * a.K * a.L;
        A acc = 0;
        for (int64_t kq = 0; kq < a.K; kq++) {
            int64_t l = 0;
            bool ok = true;
            for (int i = 0; i < a.r && ok; i++) {
                int64_t v = pos[i] + a.pb[i] - q[i] * a.d[i];
                ok = v >= 0 && v % a.s[i] == 0 && v / a.s[i] < a.nb[i];
                l = l * a.nb[i] + (ok ? v / a.s[i] : 0);
            }
            if (ok)
                acc = radd(acc, cu_load(xp, kq * a.L + l));
            for (int i = a.r - 1; i >= 0 && ++q[i] == a.blk[i]; i--)
                q[i] = 0;
        }
        cu_store(y, o, acc);
    }
}

/* ---- affine_grid --------------------------------------------------------------------- */

template <class A> __device__ __forceinline__ A grid_coord(int64_t i, int64_t S, int align)
{
    if (align)
        return S > 1 ? radd((A)-1, rdiv(rmul((A)2, (A)i), (A)(S - 1))) : (A)0;
    return radd(rdiv(radd(rmul((A)2, (A)i), (A)1), (A)S), (A)-1);
}

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) affine_grid_kernel(T *__restrict__ y, const T *__restrict__ th,
                                                               int64_t total, int r, int64_t d0, int64_t d1,
                                                               int64_t d2, int align)
{
    typedef typename cu_acc<T>::type A;
    const int64_t dims[3] = {d0, d1, d2}; /* spatial dims, outermost first */
    int64_t P = 1;
    for (int i = 0; i < r; i++)
        P *= dims[i];
    for (int64_t o = cu_grid_start(); o < total; o += cu_grid_step()) {
        int64_t b = o / P, rem = o % P;
        A base[3];
        for (int i = 0; i < r; i++) {
            int64_t S = dims[r - 1 - i];
            base[i] = grid_coord<A>(rem % S, S, align);
            rem /= S;
        }
        const T *t = th + b * r * (r + 1);
        for (int j = 0; j < r; j++) {
            A acc = rmul(cu_load(t, j * (r + 1)), base[0]);
            for (int i = 1; i < r; i++)
                acc = radd(acc, rmul(cu_load(t, j * (r + 1) + i), base[i]));
            cu_store(y, o * r + j, radd(acc, cu_load(t, j * (r + 1) + r)));
        }
    }
}

/* ---- roi_align ----------------------------------------------------------------------- */

struct roi_args {
    int64_t C, H, W, N, oh, ow, sampling, total;
    int max_mode, half_pixel, empty;
    double scale;
    int node;
};

/* As ft_roi_grid in src/cpu/geom.c. */
__device__ __forceinline__ int64_t roi_grid(double q)
{
    if (!(q > 0))
        return 0;
    return q >= FT_ROI_GRID_MAX ? FT_ROI_GRID_MAX : (int64_t)ceil(q);
}

template <class T, class I>
__global__ void __launch_bounds__(CU_BLOCK) roi_align_kernel(T *__restrict__ y, const T *__restrict__ x,
                                                             const T *__restrict__ rois, const I *__restrict__ bidx,
                                                             roi_args a, cu_derr *err)
{
    typedef typename cu_acc<T>::type A;
    for (int64_t o = cu_grid_start(); o < a.total; o += cu_grid_step()) {
        int64_t pw = o % a.ow, ph = o / a.ow % a.oh, c = o / (a.ow * a.oh) % a.C, r = o / (a.ow * a.oh * a.C);
        int64_t b = (int64_t)bidx[r];
        if (b < 0 || b >= a.N) {
            if (c == 0 && ph == 0 && pw == 0)
                cu_report(err, CU_DERR_INDEX, a.node, r, b, 0, a.N - 1);
            y[o] = T();
            continue;
        }
        const int64_t H = a.H, W = a.W;
        const T *plane = x + (b * a.C + c) * H * W;
        const T *roi = rois + r * 4;
        const A off = a.half_pixel ? (A)0.5 : (A)0, sc = (A)a.scale;
        A x0 = rsub(rmul(cu_load(roi, 0), sc), off);
        A y0 = rsub(rmul(cu_load(roi, 1), sc), off);
        A x1 = rsub(rmul(cu_load(roi, 2), sc), off);
        A y1 = rsub(rmul(cu_load(roi, 3), sc), off);
        A rw = rsub(x1, x0), rh = rsub(y1, y0);
        if (!a.half_pixel) {
            rw = rw > (A)1 ? rw : (A)1;
            rh = rh > (A)1 ? rh : (A)1;
        }
        const A bh = rdiv(rh, (A)a.oh), bw = rdiv(rw, (A)a.ow);
        const int64_t gh = a.empty ? 0 : a.sampling > 0 ? a.sampling : roi_grid((double)bh);
        const int64_t gw = a.empty ? 0 : a.sampling > 0 ? a.sampling : roi_grid((double)bw);
        const int64_t cnt = gh * gw > 1 ? gh * gw : 1;
        A acc = 0;
        bool first = true;
        for (int64_t iy = 0; iy < gh; iy++) {
            A yy = radd(radd(y0, rmul((A)ph, bh)),
                                 rdiv(rmul(radd((A)iy, (A)0.5), bh), (A)gh));
            for (int64_t ix = 0; ix < gw; ix++) {
                A xx = radd(radd(x0, rmul((A)pw, bw)),
                                     rdiv(rmul(radd((A)ix, (A)0.5), bw), (A)gw));
                A v = 0;
                if (yy >= (A)-1 && yy <= (A)H && xx >= (A)-1 && xx <= (A)W) {
                    A yv = yy <= 0 ? (A)0 : yy, xv = xx <= 0 ? (A)0 : xx;
                    int64_t yl = (int64_t)yv, xl = (int64_t)xv, yh, xh;
                    if (yl >= H - 1) { yh = yl = H - 1; yv = (A)yl; } else yh = yl + 1;
                    if (xl >= W - 1) { xh = xl = W - 1; xv = (A)xl; } else xh = xl + 1;
                    A ly = rsub(yv, (A)yl), lx = rsub(xv, (A)xl);
                    A hy = rsub((A)1, ly), hx = rsub((A)1, lx);
                    A v1 = rmul(rmul(hy, hx), cu_load(plane, yl * W + xl));
                    A v2 = rmul(rmul(hy, lx), cu_load(plane, yl * W + xh));
                    A v3 = rmul(rmul(ly, hx), cu_load(plane, yh * W + xl));
                    A v4 = rmul(rmul(ly, lx), cu_load(plane, yh * W + xh));
                    if (!a.max_mode)
                        v = radd(radd(radd(v1, v2), v3), v4);
                    else {
                        v = v1 > v2 ? v1 : v2;
                        v = v > v3 ? v : v3;
                        v = v > v4 ? v : v4;
                    }
                }
                if (!a.max_mode)
                    acc = radd(acc, v);
                else
                    acc = first || v > acc ? v : acc;
                first = false;
            }
        }
        cu_store(y, o, a.max_mode ? acc : rdiv(acc, (A)cnt));
    }
}

/* Launchers, so that a dispatch macro's argument holds no bare comma. */
template <class T> void run_col2im(void *y, const void *x, const c2i_args &a, unsigned grid, cudaStream_t s)
{
    col2im_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, a);
}

template <class T>
void run_affine_grid(void *y, const void *th, int64_t total, int r, const int64_t *d, int align, unsigned grid,
                     cudaStream_t s)
{
    affine_grid_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)th, total, r, d[0], d[1], d[2], align);
}

template <class T>
void run_roi_align(void *y, const void *x, const void *rois, const void *bi, bool is64, const roi_args &a,
                   cu_derr *err, unsigned grid, cudaStream_t s)
{
    if (is64)
        roi_align_kernel<T, int64_t><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, (const T *)rois,
                                                               (const int64_t *)bi, a, err);
    else
        roi_align_kernel<T, int32_t><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, (const T *)rois,
                                                               (const int32_t *)bi, a, err);
}

} // namespace

CU_KFN(cu_eye_like)
{
    const int64_t cols = in[0].shape.dims[1], total = (int64_t)ft_numel(&out->shape);
    if (total == 0)
        return FT_OK;
    size_t es = ft_dtype_size(out->dtype);
    unsigned long long one = 0;
    ft_store_f64(&one, out->dtype, 0, 1.0); /* little-endian: the low es bytes hold the value */
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    int64_t kk = n->params.geom.k;
    kk = kk > cols ? cols : kk < -total ? -total : kk; /* beyond the matrix nothing changes; no overflow in c - r */
    void *y = out->data;
    CU_ELEM_DISPATCH(es, U, eye_kernel<U><<<grid, CU_BLOCK, 0, s>>>((U *)y, total, cols, kk, (U)one));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_reverse_sequence)
{
    const ft_shape *sh = &in[0].shape;
    const int b = n->params.geom.batch_axis, t = n->params.geom.time_axis;
    int64_t total = (int64_t)ft_numel(sh), st[FT_MAX_RANK];
    if (total == 0)
        return FT_OK;
    ft_strides(sh, st);
    size_t es = ft_dtype_size(in[0].dtype);
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *x = in[0].data;
    int node = cu_node_index(k, n);
    if (in[1].dtype == FT_I64) {
        const int64_t *l = (const int64_t *)in[1].data;
        CU_ELEM_DISPATCH(es, U, revseq_kernel<U, int64_t><<<grid, CU_BLOCK, 0, s>>>(
            (U *)y, (const U *)x, l, total, st[b], sh->dims[b], st[t], sh->dims[t], k->be->derr_dev, node));
    } else {
        const int32_t *l = (const int32_t *)in[1].data;
        CU_ELEM_DISPATCH(es, U, revseq_kernel<U, int32_t><<<grid, CU_BLOCK, 0, s>>>(
            (U *)y, (const U *)x, l, total, st[b], sh->dims[b], st[t], sh->dims[t], k->be->derr_dev, node));
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_col2im)
{
    const ft_geom_params *g = &n->params.geom;
    c2i_args a;
    memset(&a, 0, sizeof a);
    a.r = g->r;
    a.K = a.L = a.P = 1;
    for (int i = 0; i < g->r; i++) {
        a.K *= g->blk[i];
        a.L *= g->nb[i];
        a.P *= g->img[i];
        a.img[i] = g->img[i];
        a.blk[i] = g->blk[i];
        a.d[i] = g->d[i];
        a.s[i] = g->s[i];
        a.pb[i] = g->pb[i];
        a.nb[i] = g->nb[i];
    }
    a.total = (int64_t)ft_numel(&out->shape);
    if (a.total == 0)
        return FT_OK;
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *x = in[0].data;
    CU_DISPATCH_FLOAT(in[0].dtype, T, run_col2im<T>(y, x, a, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_affine_grid)
{
    const ft_geom_params *g = &n->params.geom;
    const ft_shape *o = &out->shape;
    int64_t total = (int64_t)ft_numel(o) / g->r;
    if (total == 0)
        return FT_OK;
    int64_t d[3] = {1, 1, 1};
    for (int i = 0; i < g->r; i++)
        d[i] = o->dims[1 + i];
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *th = in[0].data;
    CU_DISPATCH_FLOAT(in[0].dtype, T, run_affine_grid<T>(y, th, total, g->r, d, g->align_corners, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_roi_align)
{
    const ft_geom_params *g = &n->params.geom;
    const ft_shape *xs = &in[0].shape;
    roi_args a;
    memset(&a, 0, sizeof a);
    a.N = xs->dims[0];
    a.C = xs->dims[1];
    a.H = xs->dims[2];
    a.W = xs->dims[3];
    a.oh = g->oh;
    a.ow = g->ow;
    a.sampling = g->sampling;
    a.max_mode = g->roi_mode == FT_ROI_MAX;
    a.half_pixel = g->half_pixel;
    a.scale = g->scale;
    a.node = cu_node_index(k, n);
    a.total = (int64_t)ft_numel(&out->shape);
    if (a.total == 0)
        return FT_OK;
    a.empty = a.H == 0 || a.W == 0; /* nothing to sample: every bin is 0 (batch indices still checked) */
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *x = in[0].data, *rois = in[1].data, *bi = in[2].data;
    const bool is64 = in[2].dtype == FT_I64;
    CU_DISPATCH_FLOAT(in[0].dtype, T, run_roi_align<T>(y, x, rois, bi, is64, a, k->be->derr_dev, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}
