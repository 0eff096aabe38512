/* CUDA kernels of the indexing ops (cu.cuh, index.cu): gather_nd, scatter_nd,
 * scatter_elements, one_hot, trilu, cumprod and hardmax. The semantic
 * reference is src/cpu/index.c; shapes and attributes were checked by
 * src/graph/infer_index.c. Index values are checked on the device by one pass
 * over the indices that reports the first bad one (cu_index_error); the op's
 * kernel then skips a bad index, and the run fails at the next sync.
 *
 * Order of the scatters, as on the CPU: updates that reach the same element
 * are applied in the row-major order of the indices. scatter_nd gives each
 * element of a slice one thread that walks the index tuples in order;
 * scatter_elements gives each line of the indices along the axis (the only
 * updates that can collide) one thread that walks the line in order. So the
 * last duplicate wins under "none", and float add / mul round in the CPU's
 * order: the results are the CPU's, bit for bit. */
#include "cu.cuh"

extern "C" {
#include "../graph/infer_math.h"
}

#include <string.h>

#include <type_traits>

namespace {

template <class T> struct ix_fp { static const bool value = false; };
template <> struct ix_fp<float> { static const bool value = true; };
template <> struct ix_fp<double> { static const bool value = true; };
template <> struct ix_fp<__half> { static const bool value = true; };
template <> struct ix_fp<__nv_bfloat16> { static const bool value = true; };

/* ---- index checks ------------------------------------------------------------------- */

/* Component p % m of the flat indices must lie in [-dims[p % m], dims[p % m] - 1]. */
struct chk_args {
    int64_t count;
    int m, node;
    int64_t dims[FT_MAX_RANK];
};

template <class I>
__global__ void __launch_bounds__(CU_BLOCK) check_kernel(const I *__restrict__ idx, chk_args a, cu_derr *err)
{
    bool done = false;
    for (int64_t t = cu_grid_start(); t < a.count; t += cu_grid_step()) {
        int64_t v = (int64_t)idx[t], dim = a.dims[t % a.m];
        if (v < -dim || v >= dim)
            cu_index_error(done, err, a.node, t, v, dim);
    }
}

} // namespace

/* Shared with attention_ext.cu (cu.cuh). */
ft_status cu_check_indices(ft_kctx *k, const ft_node *n, const ft_view *idx, int m, const int64_t *dims)
{
    chk_args a;
    memset(&a, 0, sizeof a);
    a.count = (int64_t)ft_numel(&idx->shape);
    if (a.count == 0)
        return FT_OK;
    a.m = m;
    a.node = cu_node_index(k, n);
    memcpy(a.dims, dims, sizeof(int64_t) * (size_t)m);
    unsigned grid = cu_grid(k->be, (uint64_t)a.count);
    cudaStream_t s = k->be->stream;
    if (idx->dtype == FT_I64)
        check_kernel<int64_t><<<grid, CU_BLOCK, 0, s>>>((const int64_t *)idx->data, a, k->be->derr_dev);
    else
        check_kernel<int32_t><<<grid, CU_BLOCK, 0, s>>>((const int32_t *)idx->data, a, k->be->derr_dev);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

namespace {

/* ---- gather_nd, scatter_nd ---------------------------------------------------------- */

/* Tuple t (m indices) selects slice t / per_batch * block + sum_j idx_j * st[j]
 * of the data, in units of `slice` elements (src/cpu/index.c, nd_geom). */
struct nd_args {
    int m;
    int64_t slice, nt, per_batch, block;
    int64_t st[FT_MAX_RANK], dims[FT_MAX_RANK];
};

static int64_t prod_dims(const ft_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++)
        p *= s->dims[d];
    return p;
}

static nd_args nd_args_of(const ft_shape *d, const ft_shape *q, int b)
{
    nd_args a;
    memset(&a, 0, sizeof a);
    a.m = (int)q->dims[q->rank - 1];
    a.slice = prod_dims(d, b + a.m, d->rank);
    a.nt = prod_dims(q, 0, q->rank - 1);
    a.per_batch = prod_dims(q, b, q->rank - 1);
    a.block = prod_dims(d, b, b + a.m);
    int64_t s = 1;
    for (int j = a.m - 1; j >= 0; j--) {
        a.st[j] = s;
        a.dims[j] = d->dims[b + j];
        s *= d->dims[b + j];
    }
    return a;
}

/* Slice of tuple t, or -1 when one of its indices is out of range. */
template <class I> __device__ __forceinline__ int64_t nd_slice(const I *idx, const nd_args &a, int64_t t)
{
    int64_t off = a.per_batch ? t / a.per_batch * a.block : 0;
    for (int j = 0; j < a.m; j++) {
        int64_t v = (int64_t)idx[t * a.m + j], dim = a.dims[j];
        if (v < -dim || v >= dim)
            return -1;
        off += (v < 0 ? v + dim : v) * a.st[j];
    }
    return off;
}

template <class U, class I>
__global__ void __launch_bounds__(CU_BLOCK) gather_nd_kernel(U *__restrict__ y, const U *__restrict__ x,
                                                             const I *__restrict__ idx, nd_args a)
{
    const int64_t total = a.nt * a.slice;
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step()) {
        int64_t tup = t / a.slice, j = t - tup * a.slice, s = nd_slice(idx, a, tup);
        y[t] = s < 0 ? U() : x[s * a.slice + j];
    }
}

/* y = combine(y, u) in the CPU's arithmetic (src/cpu/index.c, DEF_RED). */
template <class T> __device__ __forceinline__ void combine(T *y, int64_t i, T u, int red)
{
    if (red == FT_SCATTER_NONE) {
        y[i] = u;
        return;
    }
    typedef typename cu_acc<T>::type A;
    A a = cu_load(y, i), b = cu_load(&u, 0), r = b;
    if (red == FT_SCATTER_ADD || red == FT_SCATTER_MUL) {
        if constexpr (ix_fp<T>::value)
            r = red == FT_SCATTER_ADD ? a + b : a * b;
        else
            r = (A)(red == FT_SCATTER_ADD ? (unsigned long long)(long long)a + (unsigned long long)(long long)b
                                          : (unsigned long long)(long long)a * (unsigned long long)(long long)b);
    } else if (red == FT_SCATTER_MAX) {
        r = (a >= b || a != a) ? a : b;
    } else if (red == FT_SCATTER_MIN) {
        r = (a <= b || a != a) ? a : b;
    }
    cu_store(y, i, r);
}

/* bool: add is or, mul is and (max and min of 0/1 are the same). */
__device__ __forceinline__ void combine_bool(uint8_t *y, int64_t i, uint8_t u, int red)
{
    uint8_t a = y[i];
    y[i] = red == FT_SCATTER_NONE ? u : (red == FT_SCATTER_ADD || red == FT_SCATTER_MAX) ? (uint8_t)(a | u) : (uint8_t)(a & u);
}

template <class T> __device__ __forceinline__ void combine_any(T *y, int64_t i, T u, int red, bool is_bool)
{
    if constexpr (sizeof(T) == 1 && !ix_fp<T>::value)
        if (is_bool) {
            combine_bool((uint8_t *)y, i, (uint8_t)u, red);
            return;
        }
    combine(y, i, u, red);
}

template <class T, class I>
__global__ void __launch_bounds__(CU_BLOCK) scatter_nd_kernel(T *__restrict__ y, const T *__restrict__ u,
                                                              const I *__restrict__ idx, nd_args a, int red, bool is_bool)
{
    for (int64_t j = cu_grid_start(); j < a.slice; j += cu_grid_step())
        for (int64_t t = 0; t < a.nt; t++) {
            int64_t s = nd_slice(idx, a, t);
            if (s >= 0)
                combine_any(y, s * a.slice + j, u[t * a.slice + j], red, is_bool);
        }
}

/* ---- scatter_elements --------------------------------------------------------------- */

struct se_args {
    int rank, axis;
    int64_t lines, len, dim;         /* lines of the indices along the axis, their length, data's axis size */
    int64_t qd[FT_MAX_RANK];         /* index dims */
    int64_t qs[FT_MAX_RANK], ds[FT_MAX_RANK]; /* index and data strides */
};

template <class T, class I>
__global__ void __launch_bounds__(CU_BLOCK) scatter_el_kernel(T *__restrict__ y, const T *__restrict__ u,
                                                              const I *__restrict__ idx, se_args a, int red, bool is_bool)
{
    for (int64_t l = cu_grid_start(); l < a.lines; l += cu_grid_step()) {
        int64_t rest = l, qo = 0, dof = 0;
        for (int d = a.rank - 1; d >= 0; d--) {
            if (d == a.axis)
                continue;
            int64_t c = rest % a.qd[d];
            rest /= a.qd[d];
            qo += c * a.qs[d];
            dof += c * a.ds[d];
        }
        for (int64_t s = 0; s < a.len; s++) {
            int64_t p = qo + s * a.qs[a.axis], v = (int64_t)idx[p];
            if (v < -a.dim || v >= a.dim)
                continue;
            combine_any(y, dof + (v < 0 ? v + a.dim : v) * a.ds[a.axis], u[p], red, is_bool);
        }
    }
}

/* ---- one_hot, trilu ----------------------------------------------------------------- */

/* As hot_index in src/cpu/index.c: -1 for NaN and out of [-depth, depth-1]. */
template <class I> __device__ __forceinline__ int64_t hot_index(I raw, int64_t depth)
{
    if constexpr (ix_fp<I>::value) {
        double x = cu_to_d(raw);
        if (!(x > (double)-depth - 1.0 && x < (double)depth))
            return -1;
        int64_t v = (int64_t)x;
        return v < 0 ? v + depth : v;
    } else {
        int64_t v = (int64_t)raw;
        return v < -depth || v >= depth ? -1 : v < 0 ? v + depth : v;
    }
}

template <class U, class I>
__global__ void __launch_bounds__(CU_BLOCK) one_hot_kernel(U *__restrict__ y, const I *__restrict__ idx,
                                                           const U *__restrict__ vals, int64_t total, int64_t depth,
                                                           int64_t inner)
{
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step()) {
        int64_t i = t % inner, r = t / inner, d = r % depth, o = r / depth;
        y[t] = vals[d == hot_index(idx[o * inner + i], depth) ? 1 : 0];
    }
}

template <class U>
__global__ void __launch_bounds__(CU_BLOCK) trilu_kernel(U *__restrict__ y, const U *__restrict__ x, int64_t total,
                                                         int64_t rows, int64_t cols, int64_t k, int upper)
{
    for (int64_t t = cu_grid_start(); t < total; t += cu_grid_step()) {
        int64_t j = t % cols, i = (t / cols) % rows;
        bool keep = upper ? j - i >= k : j - i <= k;
        y[t] = keep ? x[t] : U();
    }
}

/* ---- cumprod, hardmax: one thread per line along the axis ---------------------------- */

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) cumprod_kernel(T *__restrict__ y, const T *__restrict__ x, int64_t lines,
                                                           int64_t len, int64_t inner, int excl, int rev)
{
    for (int64_t l = cu_grid_start(); l < lines; l += cu_grid_step()) {
        int64_t base = l / inner * len * inner + l % inner;
        if constexpr (ix_fp<T>::value) {
            double acc = 1;
            for (int64_t s = 0; s < len; s++) {
                int64_t i = base + (rev ? len - 1 - s : s) * inner;
                double v = cu_to_d(x[i]);
                if (!excl)
                    acc *= v;
                cu_st_d(y, i, acc);
                if (excl)
                    acc *= v;
            }
        } else {
            unsigned long long acc = 1;
            for (int64_t s = 0; s < len; s++) {
                int64_t i = base + (rev ? len - 1 - s : s) * inner;
                unsigned long long v = (unsigned long long)(long long)x[i];
                if (!excl)
                    acc *= v;
                y[i] = (T)acc;
                if (excl)
                    acc *= v;
            }
        }
    }
}

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) hardmax_kernel(T *__restrict__ y, const T *__restrict__ x, int64_t lines,
                                                           int64_t len, int64_t inner)
{
    typedef typename cu_acc<T>::type A;
    for (int64_t l = cu_grid_start(); l < lines; l += cu_grid_step()) {
        int64_t base = l / inner * len * inner + l % inner, best = 0;
        A bv = len ? cu_load(x, base) : A();
        for (int64_t s = 1; s < len && bv == bv; s++) {
            A v = cu_load(x, base + s * inner);
            if (v != v || v > bv)
                best = s, bv = v;
        }
        for (int64_t s = 0; s < len; s++)
            cu_store(y, base + s * inner, (A)(s == best ? 1 : 0));
    }
}

/* Host launchers, so that CU_DISPATCH bodies hold no top-level comma. */
template <class T, class I, class Args>
void scatter_launch(T *y, const T *u, const I *ip, const Args &a, int red, bool is_bool, unsigned grid, cudaStream_t s)
{
    if constexpr (std::is_same<Args, nd_args>::value)
        scatter_nd_kernel<T, I><<<grid, CU_BLOCK, 0, s>>>(y, u, ip, a, red, is_bool);
    else
        scatter_el_kernel<T, I><<<grid, CU_BLOCK, 0, s>>>(y, u, ip, a, red, is_bool);
}

/* scatter_nd (Args nd_args) or scatter_elements (se_args) with i64 or i32 indices. */
template <class T, class Args>
void run_scatter(const ft_view *in, void *y, const Args &a, int red, bool is_bool, unsigned grid, cudaStream_t s)
{
    if (in[1].dtype == FT_I64)
        scatter_launch((T *)y, (const T *)in[2].data, (const int64_t *)in[1].data, a, red, is_bool, grid, s);
    else
        scatter_launch((T *)y, (const T *)in[2].data, (const int32_t *)in[1].data, a, red, is_bool, grid, s);
}

template <class I>
void run_one_hot(const ft_view *in, void *y, size_t es, int64_t total, int64_t depth, int64_t inner, unsigned grid,
                 cudaStream_t s)
{
    const I *iv = (const I *)in[0].data;
    CU_ELEM_DISPATCH(es, U, one_hot_kernel<U, I><<<grid, CU_BLOCK, 0, s>>>((U *)y, iv, (const U *)in[1].data, total,
                                                                         depth, inner));
}

template <class T>
void run_line(int op, const void *x, void *y, int64_t lines, int64_t len, int64_t inner, int excl, int rev,
              unsigned grid, cudaStream_t s)
{
    if (op == FT_OP_CUMPROD)
        cumprod_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, lines, len, inner, excl, rev);
    else
        hardmax_kernel<T><<<grid, CU_BLOCK, 0, s>>>((T *)y, (const T *)x, lines, len, inner);
}

ft_status bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(dt), ft_op_name(n->op));
}

/* out = data, unless they are the same buffer. */
ft_status start_scatter(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    size_t bytes = (size_t)ft_numel(&in[0].shape) * ft_dtype_size(in[0].dtype);
    if (bytes && out->data != in[0].data)
        CU_TRY(k, n, cudaMemcpyAsync(out->data, in[0].data, bytes, cudaMemcpyDeviceToDevice, k->be->stream));
    return FT_OK;
}

/* run_scatter over count work items (the slices of scatter_nd, the lines of
 * scatter_elements). */
template <class A>
ft_status launch_scatter(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const A &a, int64_t count)
{
    const int red = n->params.index.reduction;
    const bool is_bool = in[0].dtype == FT_BOOL;
    unsigned grid = cu_grid(k->be, (uint64_t)count);
    cudaStream_t s = k->be->stream;
    ft_dtype dt = in[0].dtype;
    if (ft_dtype_in(dt, CU_UWIDE)) {
        /* u16, u32, u64 (CU_BYTES, not CU_DISPATCH's): moved, added and
         * multiplied (wrapping) as the signed type of their size, whose bits
         * are the same; their order is not, so max / min stay on the CPU */
        if (red == FT_SCATTER_MAX || red == FT_SCATTER_MIN)
            return bad_dtype(k, n, dt);
        dt = dt == FT_U16 ? FT_I16 : dt == FT_U32 ? FT_I32 : FT_I64;
    }
    CU_DISPATCH(dt, T, run_scatter<T>(in, out->data, a, red, is_bool, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

} // namespace

CU_KFN(cu_gather_nd)
{
    nd_args a = nd_args_of(&in[0].shape, &in[1].shape, n->params.index.batch_dims);
    ft_status st = cu_check_indices(k, n, &in[1], a.m, a.dims);
    int64_t total = a.nt * a.slice;
    if (st || total == 0)
        return st;
    size_t es = ft_dtype_size(in[0].dtype);
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    const void *x = in[0].data;
    void *y = out->data;
    if (in[1].dtype == FT_I64) {
        const int64_t *ip = (const int64_t *)in[1].data;
        CU_ELEM_DISPATCH(es, U, gather_nd_kernel<U, int64_t><<<grid, CU_BLOCK, 0, s>>>((U *)y, (const U *)x, ip, a));
    } else {
        const int32_t *ip = (const int32_t *)in[1].data;
        CU_ELEM_DISPATCH(es, U, gather_nd_kernel<U, int32_t><<<grid, CU_BLOCK, 0, s>>>((U *)y, (const U *)x, ip, a));
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_scatter_nd)
{
    nd_args a = nd_args_of(&in[0].shape, &in[1].shape, 0);
    ft_status st = cu_check_indices(k, n, &in[1], a.m, a.dims);
    if (st || (st = start_scatter(k, n, in, out)) || a.nt == 0 || a.slice == 0)
        return st;
    return launch_scatter(k, n, in, out, a, a.slice);
}

CU_KFN(cu_scatter_elements)
{
    const ft_shape *d = &in[0].shape, *q = &in[1].shape;
    se_args a;
    memset(&a, 0, sizeof a);
    a.rank = d->rank;
    a.axis = n->params.index.axis;
    a.dim = d->dims[a.axis];
    ft_status st = cu_check_indices(k, n, &in[1], 1, &a.dim);
    int64_t total = (int64_t)ft_numel(q);
    if (st || (st = start_scatter(k, n, in, out)) || total == 0)
        return st;
    a.len = q->dims[a.axis];
    a.lines = total / a.len;
    memcpy(a.qd, q->dims, sizeof(int64_t) * (size_t)q->rank);
    ft_strides(q, a.qs);
    ft_strides(d, a.ds);
    return launch_scatter(k, n, in, out, a, a.lines);
}

CU_KFN(cu_one_hot)
{
    const ft_shape *q = &in[0].shape;
    const int axis = n->params.index.axis;
    const int64_t depth = n->params.index.depth, inner = prod_dims(q, axis, q->rank);
    int64_t total = (int64_t)ft_numel(&out->shape);
    if (total == 0)
        return FT_OK;
    if (in[0].dtype == FT_BOOL)
        return bad_dtype(k, n, in[0].dtype);
    size_t es = ft_dtype_size(in[1].dtype);
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    CU_DISPATCH(in[0].dtype, I, run_one_hot<I>(in, out->data, es, total, depth, inner, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_trilu)
{
    const ft_shape *sh = &in[0].shape;
    int64_t total = (int64_t)ft_numel(sh);
    if (total == 0)
        return FT_OK;
    int64_t rows = sh->dims[sh->rank - 2], cols = sh->dims[sh->rank - 1], kk = n->params.index.k, lim = rows + cols;
    kk = kk > lim ? lim : kk < -lim ? -lim : kk; /* beyond +-(rows+cols) nothing changes; no overflow in j - i */
    size_t es = ft_dtype_size(in[0].dtype);
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *x = in[0].data;
    int upper = n->params.index.upper;
    CU_ELEM_DISPATCH(es, U, trilu_kernel<U><<<grid, CU_BLOCK, 0, s>>>((U *)y, (const U *)x, total, rows, cols, kk, upper));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* cumprod and hardmax: one thread per line along the axis. */
static ft_status along_axis(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int axis, int excl, int rev)
{
    int64_t outer, len, inner;
    ft_reduce_around_axis(&in[0].shape, axis, &outer, &len, &inner);
    int64_t lines = outer * inner;
    if (lines * len == 0)
        return FT_OK;
    const ft_dtype dt = in[0].dtype;
    if (dt == FT_BOOL)
        return bad_dtype(k, n, dt);
    unsigned grid = cu_grid(k->be, (uint64_t)lines);
    cudaStream_t s = k->be->stream;
    void *y = out->data;
    const void *x = in[0].data;
    CU_DISPATCH(dt, T, run_line<T>(n->op, x, y, lines, len, inner, excl, rev, grid, s));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_cumprod)
{
    const ft_reduce_params *p = &n->params.reduce;
    return along_axis(k, n, in, out, p->axis, p->exclusive, p->reverse);
}

CU_KFN(cu_hardmax) { return along_axis(k, n, in, out, n->params.norm.axis, 0, 0); }

/* ---- tensor_scatter (src/cpu/index.c) ----------------------------------------------------- */

namespace {

/* One thread per element of update [B, outer, seq, inner] (axis folded):
 * row s of batch b goes to position write_indices[b] + s of past_cache's
 * axis (modulo max when circular). A linear position outside the axis is
 * reported (the CPU fails before writing) and its rows are skipped. */
struct ts_args {
    int64_t total, outer, seq, inner, max;
    int circ, node;
};

template <class U>
__global__ void __launch_bounds__(CU_BLOCK)
    tensor_scatter_kernel(U *__restrict__ y, const U *__restrict__ u, const int64_t *__restrict__ wi, ts_args a,
                          cu_derr *err)
{
    bool done = false;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        int64_t j = t % a.inner, r = t / a.inner, s = r % a.seq, bo = r / a.seq, b = bo / a.outer;
        int64_t w = wi ? wi[b] : 0, p;
        if (a.circ) {
            p = ((w % a.max + a.max) % a.max + s) % a.max;
        } else {
            if (w < 0 || w > a.max - a.seq) {
                if (!done)
                    cu_report(err, CU_DERR_INDEX, a.node, b, w, 0, a.max - a.seq);
                done = true;
                continue;
            }
            p = w + s;
        }
        y[(bo * a.max + p) * a.inner + j] = u[t];
    }
}

} // namespace

CU_KFN(cu_tensor_scatter)
{
    const ft_shape *d = &in[0].shape;
    ts_args a;
    memset(&a, 0, sizeof a);
    const int axis = n->params.index.axis;
    a.outer = prod_dims(d, 1, axis);
    a.inner = prod_dims(d, axis + 1, d->rank);
    a.max = d->dims[axis];
    a.seq = in[1].shape.dims[axis];
    a.total = (int64_t)ft_numel(&in[1].shape);
    a.circ = n->params.index.circular;
    a.node = cu_node_index(k, n);
    ft_status st = start_scatter(k, n, in, out);
    if (st || a.total == 0)
        return st;
    const int64_t *wi = n->n_in > 2 && in[2].data ? (const int64_t *)in[2].data : NULL;
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t s = k->be->stream;
    CU_ELEM_DISPATCH(ft_dtype_size(in[0].dtype), U,
                     tensor_scatter_kernel<U><<<grid, CU_BLOCK, 0, s>>>((U *)out[0].data, (const U *)in[1].data, wi, a,
                                                                         k->be->derr_dev));
    CU_LAUNCHED(k, n);
    return FT_OK;
}
