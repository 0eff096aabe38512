/* CUDA kernels of the shape and data-movement ops (cu.cuh, movement.cu):
 * every dtype, moved as opaque units of 1, 2, 4, 8 or 16 bytes, so that one
 * instantiation per unit size serves all ten dtypes. The semantic reference
 * is src/cpu/movement.c; shapes and attributes were checked by
 * src/graph/infer_movement.c, index data is checked here on the device.
 *
 * Most ops reduce to one strided copy (ft_xfer, src/graph/infer_movement.h, as
 * on the CPU): a box of dims read through source strides and written through
 * destination strides. After merging dims that stay contiguous on both sides,
 * a copy whose innermost run is contiguous on both sides moves 16-byte units
 * where the alignment allows; a copy that is contiguous along different dims
 * on the two sides (a transpose) goes through shared-memory tiles. */
#include "cu.cuh"
extern "C" {
#include "../graph/infer_movement.h"
}

#include <string.h>

#define TP_TILE 32
#define TP_ROWS 8
#define TP_MIN_RUN 8

namespace {

/* CU_ELEM_DISPATCH (cu.cuh) over unit sizes, with 16 bytes (uint4) too. */
#define UNIT_DISPATCH(us, U, ...)                                   \
    if ((us) == 16) {                                               \
        typedef uint4 U;                                            \
        __VA_ARGS__;                                                \
    } else                                                          \
        CU_ELEM_DISPATCH(us, U, __VA_ARGS__)

/* Run the statements after I with I the type of i32 or i64 indices (dtype dt). */
#define INDEX_DISPATCH(dt, I, ...)                                  \
    if ((dt) == FT_I64) {                                           \
        typedef int64_t I;                                          \
        __VA_ARGS__;                                                \
    } else {                                                        \
        typedef int32_t I;                                          \
        __VA_ARGS__;                                                \
    }

/* ---- strided copy ----------------------------------------------------------------------- */

/* Widest unit (bytes) the copy can move: the innermost run must be contiguous
 * on both sides and every stride, the run length and both base addresses
 * must be multiples of the unit. Rewrites x in units; returns the unit size. */
size_t xfer_widen(ft_xfer *x, size_t es, const void *dst, const void *src)
{
    int R = x->rank;
    if (R == 0 || x->ds[R - 1] != 1 || x->ss[R - 1] != 1)
        return es;
    for (size_t us = 16; us > es; us /= 2) {
        int64_t f = (int64_t)(us / es);
        int ok = x->dims[R - 1] % f == 0 && (uintptr_t)dst % us == 0 && (uintptr_t)src % us == 0;
        for (int m = 0; ok && m < R - 1; m++)
            ok = x->ds[m] % f == 0 && x->ss[m] % f == 0;
        if (!ok)
            continue;
        x->dims[R - 1] /= f;
        for (int m = 0; m < R - 1; m++) {
            x->ds[m] /= f;
            x->ss[m] /= f;
        }
        return us;
    }
    return es;
}

struct xf_args {
    int rank; /* >= 1 */
    int64_t total;
    cu_fastdiv dv[FT_XFER_MAX_RANK];
    int64_t ds[FT_XFER_MAX_RANK], ss[FT_XFER_MAX_RANK];
};

template <class U>
__global__ void __launch_bounds__(CU_BLOCK) xf_kernel(U *__restrict__ dst, const U *__restrict__ src, xf_args a)
{
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        uint64_t rest = (uint64_t)t;
        int64_t so = 0, dof = 0;
        for (int m = a.rank - 1; m > 0; m--) {
            uint64_t q = cu_fastdiv_q(a.dv[m], rest);
            int64_t c = (int64_t)(rest - q * a.dv[m].d);
            so += c * a.ss[m];
            dof += c * a.ds[m];
            rest = q;
        }
        so += (int64_t)rest * a.ss[0];
        dof += (int64_t)rest * a.ds[0];
        dst[dof] = src[so];
    }
}

/* Transposing copy, D[i*dq + j] = S[i + j*sa] over an outer box: the source
 * is contiguous along i, the destination along j. A 32x32 tile goes through
 * shared memory (one column of padding: the column reads hit distinct banks)
 * so that both the loads and the stores of a warp are contiguous. */
struct tp_args {
    int orank;
    cu_fastdiv odv[FT_XFER_MAX_RANK];
    int64_t oss[FT_XFER_MAX_RANK], ods[FT_XFER_MAX_RANK];
    int64_t nq, na, sa, dq;
    int64_t nbq, nba, tiles;
};

template <class U>
__global__ void __launch_bounds__(TP_TILE * TP_ROWS)
    tp_kernel(U *__restrict__ dst, const U *__restrict__ src, tp_args a)
{
    __shared__ U tile[TP_TILE][TP_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
        int64_t ja = t % a.nba, rest = t / a.nba;
        int64_t iq = rest % a.nbq;
        uint64_t o = (uint64_t)(rest / a.nbq);
        int64_t so = 0, dof = 0;
        for (int m = a.orank - 1; m > 0; m--) {
            uint64_t q = cu_fastdiv_q(a.odv[m], o);
            int64_t c = (int64_t)(o - q * a.odv[m].d);
            so += c * a.oss[m];
            dof += c * a.ods[m];
            o = q;
        }
        if (a.orank > 0) {
            so += (int64_t)o * a.oss[0];
            dof += (int64_t)o * a.ods[0];
        }
        const int64_t i0 = iq * TP_TILE, j0 = ja * TP_TILE;
        const U *S = src + so;
        U *D = dst + dof;
        if (i0 + tx < a.nq)
            for (int r = ty; r < TP_TILE; r += TP_ROWS)
                if (j0 + r < a.na)
                    tile[r][tx] = S[(i0 + tx) + (j0 + r) * a.sa];
        __syncthreads();
        if (j0 + tx < a.na)
            for (int r = ty; r < TP_TILE; r += TP_ROWS)
                if (i0 + r < a.nq)
                    D[(i0 + r) * a.dq + (j0 + tx)] = tile[tx][r];
        __syncthreads();
    }
}

ft_status xfer_tiled(ft_kctx *k, const ft_node *n, const ft_xfer *x, int q, void *dst, const void *src, size_t es)
{
    tp_args a;
    memset(&a, 0, sizeof a);
    int R = x->rank, ia = R - 1;
    a.nq = x->dims[q];
    a.na = x->dims[ia];
    a.sa = x->ss[ia];
    a.dq = x->ds[q];
    int64_t outer = 1;
    for (int m = 0; m < ia; m++) {
        if (m == q)
            continue;
        a.odv[a.orank] = cu_fastdiv_make((uint64_t)x->dims[m]);
        a.oss[a.orank] = x->ss[m];
        a.ods[a.orank] = x->ds[m];
        a.orank++;
        outer *= x->dims[m];
    }
    a.nbq = (a.nq + TP_TILE - 1) / TP_TILE;
    a.nba = (a.na + TP_TILE - 1) / TP_TILE;
    a.tiles = outer * a.nbq * a.nba;
    uint64_t cap = (uint64_t)k->be->sm_count * 16u;
    unsigned grid = (unsigned)((uint64_t)a.tiles < cap ? (uint64_t)a.tiles : cap);
    dim3 block(TP_TILE, TP_ROWS);
    cudaStream_t s = k->be->stream;
    CU_ELEM_DISPATCH(es, U, tp_kernel<U><<<grid, block, 0, s>>>((U *)dst, (const U *)src, a));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* Copy the box x from src to dst (element strides, es-byte elements). */
ft_status xfer_run(ft_kctx *k, const ft_node *n, ft_xfer *x, void *dst, const void *src, size_t es)
{
    int64_t total = ft_xfer_simplify(x);
    if (total == 0)
        return FT_OK;
    cudaStream_t s = k->be->stream;
    int R = x->rank;
    if (R == 0 || (R == 1 && x->ds[0] == 1 && x->ss[0] == 1)) {
        CU_TRY(k, n, cudaMemcpyAsync(dst, src, (size_t)total * es, cudaMemcpyDeviceToDevice, s));
        return FT_OK;
    }
    /* A tile needs both contiguous runs long enough to fill a good part of
     * it; below that (HWC <-> CHW with 3 channels) the strided kernel, whose
     * partly used sectors are caught by L2, keeps every thread busy. */
    if (R >= 2 && x->ds[R - 1] == 1 && x->ss[R - 1] != 1 && x->ss[R - 1] != 0 && x->dims[R - 1] >= TP_MIN_RUN)
        for (int q = 0; q < R - 1; q++)
            if (x->ss[q] == 1 && x->dims[q] >= TP_MIN_RUN)
                return xfer_tiled(k, n, x, q, dst, src, es);
    size_t us = xfer_widen(x, es, dst, src);
    xf_args a;
    memset(&a, 0, sizeof a);
    a.rank = x->rank;
    a.total = total / (int64_t)(us / es);
    for (int m = 0; m < x->rank; m++) {
        a.dv[m] = cu_fastdiv_make((uint64_t)x->dims[m]);
        a.ds[m] = x->ds[m];
        a.ss[m] = x->ss[m];
    }
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    UNIT_DISPATCH(us, U, xf_kernel<U><<<grid, CU_BLOCK, 0, s>>>((U *)dst, (const U *)src, a));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* ---- gather ----------------------------------------------------------------------------- */

/* Output (outer, nq, row) in units of the row: unit t copies unit j of row
 * (o*dim + idx[qi]) of the data. */
struct ga_args {
    int64_t total, dim, rowu;
    cu_fastdiv drow, dnq;
    int node;
};

template <class U, class I>
__global__ void __launch_bounds__(CU_BLOCK) gather_kernel(U *__restrict__ dst, const U *__restrict__ src,
                                                          const I *__restrict__ idx, ga_args a, cu_derr *err)
{
    bool done = false;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        uint64_t r1 = cu_fastdiv_q(a.drow, (uint64_t)t);
        int64_t j = t - (int64_t)r1 * a.rowu;
        uint64_t o = cu_fastdiv_q(a.dnq, r1);
        int64_t qi = (int64_t)(r1 - o * a.dnq.d);
        int64_t v = (int64_t)idx[qi];
        if (v < -a.dim || v >= a.dim) {
            cu_index_error(done, err, a.node, qi, v, a.dim);
            dst[t] = U();
            continue;
        }
        if (v < 0)
            v += a.dim;
        dst[t] = src[((int64_t)o * a.dim + v) * a.rowu + j];
    }
}

/* Indices of an empty output are still checked, as on the CPU. */
template <class I>
__global__ void __launch_bounds__(CU_BLOCK)
    check_kernel(const I *__restrict__ idx, int64_t count, int64_t dim, int node, cu_derr *err)
{
    bool done = false;
    for (int64_t t = cu_grid_start(); t < count; t += cu_grid_step()) {
        int64_t v = (int64_t)idx[t];
        if (v < -dim || v >= dim)
            cu_index_error(done, err, node, t, v, dim);
    }
}

ft_status check_indices(ft_kctx *k, const ft_node *n, const ft_view *idx, int64_t dim)
{
    int64_t count = (int64_t)ft_numel(&idx->shape);
    if (count == 0)
        return FT_OK;
    unsigned grid = cu_grid(k->be, (uint64_t)count);
    cudaStream_t s = k->be->stream;
    int node = cu_node_index(k, n);
    if (idx->dtype == FT_I64)
        check_kernel<int64_t><<<grid, CU_BLOCK, 0, s>>>((const int64_t *)idx->data, count, dim, node, k->be->derr_dev);
    else
        check_kernel<int32_t><<<grid, CU_BLOCK, 0, s>>>((const int32_t *)idx->data, count, dim, node, k->be->derr_dev);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* gather_elements: out[p] = data[p with coordinate `axis` replaced by idx[p]]. */
struct ge_args {
    int rank, axis, node;
    int64_t total, dim;
    cu_fastdiv qd[FT_MAX_RANK];      /* index (= output) dims */
    int64_t dstr[FT_MAX_RANK]; /* data strides */
};

template <class U, class I>
__global__ void __launch_bounds__(CU_BLOCK) gather_el_kernel(U *__restrict__ dst, const U *__restrict__ src,
                                                             const I *__restrict__ idx, ge_args a, cu_derr *err)
{
    bool done = false;
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        uint64_t rest = (uint64_t)t;
        int64_t off = 0;
        for (int m = a.rank - 1; m > 0; m--) {
            uint64_t q = cu_fastdiv_q(a.qd[m], rest);
            if (m != a.axis)
                off += (int64_t)(rest - q * a.qd[m].d) * a.dstr[m];
            rest = q;
        }
        if (a.axis != 0)
            off += (int64_t)rest * a.dstr[0];
        int64_t v = (int64_t)idx[t];
        if (v < -a.dim || v >= a.dim) {
            cu_index_error(done, err, a.node, t, v, a.dim);
            dst[t] = U();
            continue;
        }
        if (v < 0)
            v += a.dim;
        dst[t] = src[off + v * a.dstr[a.axis]];
    }
}

/* ---- pad -------------------------------------------------------------------------------- */

enum { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_WRAP };

/* Every output element finds its source on its own: per axis, a coordinate
 * in the border maps into the kept (cropped) range by the mode, which is
 * what the CPU's border copies, innermost axis first, amount to. */
struct pad_args {
    int rank, mode;
    int64_t total;
    cu_fastdiv od[FT_MAX_RANK];                                       /* output dims */
    int64_t kept[FT_MAX_RANK], ob[FT_MAX_RANK], is[FT_MAX_RANK]; /* kept size, begin pad, source stride */
};

template <class U>
__global__ void __launch_bounds__(CU_BLOCK)
    pad_kernel(U *__restrict__ dst, const U *__restrict__ src, pad_args a, U val)
{
    for (int64_t t = cu_grid_start(); t < a.total; t += cu_grid_step()) {
        uint64_t rest = (uint64_t)t;
        int64_t off = 0;
        bool inside = true;
        for (int m = a.rank - 1; m >= 0; m--) {
            int64_t c;
            if (m > 0) {
                uint64_t q = cu_fastdiv_q(a.od[m], rest);
                c = (int64_t)(rest - q * a.od[m].d);
                rest = q;
            } else {
                c = (int64_t)rest;
            }
            c -= a.ob[m];
            const int64_t kp = a.kept[m];
            if (c < 0 || c >= kp) {
                if (a.mode == PAD_CONSTANT || kp <= 0) {
                    inside = false;
                    break;
                }
                if (a.mode == PAD_EDGE)
                    c = c < 0 ? 0 : kp - 1;
                else if (a.mode == PAD_WRAP) /* periodic, for pads of any size */
                    c = (c % kp + kp) % kp;
                else /* mirror without repeating the edge element; inference keeps pads < kp */
                    c = c < 0 ? -c : 2 * (kp - 1) - c;
                c = c < 0 ? 0 : c >= kp ? kp - 1 : c;
            }
            off += c * a.is[m];
        }
        dst[t] = inside ? src[off] : val;
    }
}

} /* namespace */

/* ---- entry points ----------------------------------------------------------------------- */

CU_KFN(cu_copy)
{
    size_t bytes = (size_t)ft_numel(&in[0].shape) * ft_dtype_size(in[0].dtype);
    if (bytes == 0 || out->data == in[0].data)
        return FT_OK;
    CU_TRY(k, n, cudaMemcpyAsync(out->data, in[0].data, bytes, cudaMemcpyDeviceToDevice, k->be->stream));
    return FT_OK;
}

CU_KFN(cu_transpose)
{
    ft_xfer x;
    ft_xfer_transpose(&x, n->params.move.perm, &in[0].shape, &out->shape);
    return xfer_run(k, n, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
}

CU_KFN(cu_depth_space)
{
    ft_xfer x;
    ft_xfer_depth_space(&x, &n->params.move, n->op == FT_OP_DEPTH_TO_SPACE, &in[0].shape, &out->shape);
    return xfer_run(k, n, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
}

CU_KFN(cu_expand)
{
    ft_xfer x;
    ft_xfer_expand(&x, &in[0].shape, &out->shape);
    return xfer_run(k, n, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
}

CU_KFN(cu_tile)
{
    ft_xfer x;
    ft_xfer_tile(&x, &in[0].shape, &out->shape);
    return xfer_run(k, n, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
}

CU_KFN(cu_concat)
{
    size_t es = ft_dtype_size(out->dtype);
    int64_t off = 0;
    for (int i = 0; i < n->n_in; i++) {
        ft_xfer x;
        int64_t at = ft_xfer_part(&x, &in[i].shape, &out->shape, n->params.move.axis, &off, 1);
        ft_status st = xfer_run(k, n, &x, (char *)out->data + at * (int64_t)es, in[i].data, es);
        if (st)
            return st;
    }
    return FT_OK;
}

CU_KFN(cu_split)
{
    size_t es = ft_dtype_size(in[0].dtype);
    int64_t off = 0;
    for (int i = 0; i < n->n_out; i++) {
        ft_xfer x;
        int64_t at = ft_xfer_part(&x, &out[i].shape, &in[0].shape, n->params.move.axis, &off, 0);
        ft_status st = xfer_run(k, n, &x, out[i].data, (const char *)in[0].data + at * (int64_t)es, es);
        if (st)
            return st;
    }
    return FT_OK;
}

CU_KFN(cu_slice)
{
    ft_xfer x;
    int64_t base;
    if (!ft_xfer_slice(&x, &n->params.move, &in[0].shape, &out->shape, &base))
        return FT_OK;
    size_t es = ft_dtype_size(in[0].dtype);
    return xfer_run(k, n, &x, out->data, (const char *)in[0].data + base * (int64_t)es, es);
}

CU_KFN(cu_gather)
{
    const ft_shape *s = &in[0].shape;
    const int axis = n->params.move.axis;
    int64_t dim = s->dims[axis], outer = 1, inner = 1, nq = (int64_t)ft_numel(&in[1].shape);
    for (int d = 0; d < axis; d++)
        outer *= s->dims[d];
    for (int d = axis + 1; d < s->rank; d++)
        inner *= s->dims[d];
    if (nq == 0)
        return FT_OK;
    if (outer == 0 || inner == 0)
        return check_indices(k, n, &in[1], dim);
    size_t es = ft_dtype_size(in[0].dtype), row = (size_t)inner * es, us = 16;
    while (us > 1 && (row % us || (uintptr_t)in[0].data % us || (uintptr_t)out->data % us))
        us /= 2;
    ga_args a;
    memset(&a, 0, sizeof a);
    a.rowu = (int64_t)(row / us);
    a.total = outer * nq * a.rowu;
    a.dim = dim;
    a.drow = cu_fastdiv_make((uint64_t)a.rowu);
    a.dnq = cu_fastdiv_make((uint64_t)nq);
    a.node = cu_node_index(k, n);
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t st = k->be->stream;
    INDEX_DISPATCH(in[1].dtype, I,
                   UNIT_DISPATCH(us, U,
                                 gather_kernel<U, I><<<grid, CU_BLOCK, 0, st>>>(
                                     (U *)out->data, (const U *)in[0].data, (const I *)in[1].data, a, k->be->derr_dev)));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_gather_elements)
{
    const ft_shape *s = &in[0].shape, *q = &in[1].shape;
    const int r = s->rank, axis = n->params.move.axis;
    int64_t total = (int64_t)ft_numel(q);
    if (total == 0 || r == 0)
        return FT_OK;
    ge_args a;
    memset(&a, 0, sizeof a);
    a.rank = r;
    a.axis = axis;
    a.node = cu_node_index(k, n);
    a.total = total;
    a.dim = s->dims[axis];
    ft_strides(s, a.dstr);
    for (int d = 0; d < r; d++)
        a.qd[d] = cu_fastdiv_make((uint64_t)q->dims[d]);
    size_t es = ft_dtype_size(in[0].dtype);
    unsigned grid = cu_grid(k->be, (uint64_t)total);
    cudaStream_t st = k->be->stream;
    INDEX_DISPATCH(in[1].dtype, I,
                   CU_ELEM_DISPATCH(es, U,
                                    gather_el_kernel<U, I><<<grid, CU_BLOCK, 0, st>>>(
                                        (U *)out->data, (const U *)in[0].data, (const I *)in[1].data, a, k->be->derr_dev)));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

CU_KFN(cu_pad)
{
    const ft_move_params *mp = &n->params.move;
    int reflect = mp->pad_mode == FT_PAD_REFLECT, edge = mp->pad_mode == FT_PAD_EDGE, wrap = mp->pad_mode == FT_PAD_WRAP;
    const ft_shape *s = &in[0].shape, *os = &out->shape;
    int r = s->rank;
    if (ft_numel(os) == 0)
        return FT_OK;
    const int64_t *pb = mp->pb, *pe = mp->pe;
    /* Condensed axes: unpadded neighbours merge (their coordinates never
     * leave the input), unpadded size-1 axes vanish. */
    int cr = 0, unp[FT_MAX_RANK];
    int64_t cin[FT_MAX_RANK], cout[FT_MAX_RANK], cob[FT_MAX_RANK], ccrop[FT_MAX_RANK], ckept[FT_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int u = pb[d] == 0 && pe[d] == 0;
        if (u && s->dims[d] == 1)
            continue;
        if (u && cr > 0 && unp[cr - 1]) {
            cin[cr - 1] *= s->dims[d];
            cout[cr - 1] *= s->dims[d];
            ckept[cr - 1] *= s->dims[d];
            continue;
        }
        unp[cr] = u;
        cin[cr] = s->dims[d];
        cout[cr] = os->dims[d];
        ckept[cr] = s->dims[d] + (pb[d] < 0 ? pb[d] : 0) + (pe[d] < 0 ? pe[d] : 0);
        cob[cr] = pb[d] > 0 ? pb[d] : 0;
        ccrop[cr] = pb[d] < 0 ? -pb[d] : 0;
        cr++;
    }
    if (cr == 0) {
        unp[0] = 1;
        cin[0] = cout[0] = ckept[0] = 1;
        cob[0] = ccrop[0] = 0;
        cr = 1;
    }
    size_t es = ft_dtype_size(in[0].dtype);
    if (cr == 1 && unp[0]) {
        cudaStream_t strm = k->be->stream;
        CU_TRY(k, n, cudaMemcpyAsync(out->data, in[0].data, (size_t)cin[0] * es, cudaMemcpyDeviceToDevice, strm));
        return FT_OK;
    }
    /* 16-byte units when the innermost condensed axis is unpadded and every
     * address stays a multiple of the unit (all strides contain that axis). */
    int64_t crop_elems = 0;
    {
        int64_t st = 1;
        for (int c = cr - 1; c >= 0; c--) {
            crop_elems += ccrop[c] * st;
            st *= cin[c];
        }
    }
    const char *src = (const char *)in[0].data + crop_elems * (int64_t)es;
    size_t us = es;
    if (unp[cr - 1])
        for (size_t w = 16; w > es; w /= 2)
            if (cin[cr - 1] % (int64_t)(w / es) == 0 && (uintptr_t)src % w == 0 && (uintptr_t)out->data % w == 0) {
                us = w;
                break;
            }
    int64_t f = (int64_t)(us / es);
    cin[cr - 1] /= f;
    cout[cr - 1] /= f;
    ckept[cr - 1] /= f;
    pad_args a;
    memset(&a, 0, sizeof a);
    a.rank = cr;
    a.mode = reflect ? PAD_REFLECT : edge ? PAD_EDGE : wrap ? PAD_WRAP : PAD_CONSTANT;
    a.total = 1;
    {
        int64_t st = 1;
        for (int c = cr - 1; c >= 0; c--) {
            a.od[c] = cu_fastdiv_make((uint64_t)cout[c]);
            a.kept[c] = ckept[c];
            a.ob[c] = cob[c];
            a.is[c] = st;
            st *= cin[c];
            a.total *= cout[c];
        }
    }
    /* the value's bytes repeated over the unit (zeros for edge/reflect/wrap) */
    unsigned char val[16], one[8];
    memset(val, 0, sizeof val);
    memset(one, 0, sizeof one);
    if (a.mode == PAD_CONSTANT) {
        ft_pad_value(mp->pad_value, in[0].dtype, one);
        for (size_t i = 0; i < us; i++)
            val[i] = one[i % es];
    }
    unsigned grid = cu_grid(k->be, (uint64_t)a.total);
    cudaStream_t st = k->be->stream;
    UNIT_DISPATCH(us, U, U v; memcpy(&v, val, sizeof v);
                  pad_kernel<U><<<grid, CU_BLOCK, 0, st>>>((U *)out->data, (const U *)src, a, v));
    CU_LAUNCHED(k, n);
    return FT_OK;
}
