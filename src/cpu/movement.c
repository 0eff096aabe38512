/* CPU kernels of the shape and data-movement ops (cpu.h, movement section):
 * every dtype, moved as elements of ft_dtype_size() bytes. Shapes and
 * attributes were checked by src/graph/infer_movement.c; data (indices) is
 * checked here before anything is written.
 *
 * Most ops reduce to one strided copy (ft_xfer, src/graph/infer_movement.h): a
 * box of dims read through source strides and written through destination
 * strides, both in elements. Source strides may be 0 (broadcast) or negative
 * (reversed slices). */
#include "cpu.h"
#include "../graph/infer_movement.h"

#include <string.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#define TILE 64

/* Element-size integer types for byte moves of any dtype. */
typedef uint16_t u16a __attribute__((may_alias));
typedef uint32_t u32a __attribute__((may_alias));
typedef uint64_t u64a __attribute__((may_alias));
/* The cases of a switch over an element size with a unit type: M(T) moves
 * elements as T. */
#define BY_UNIT(M) case 1: M(uint8_t) break; case 2: M(u16a) break; case 4: M(u32a) break; case 8: M(u64a) break;

static void fill_elems(char *d, const char *s, int64_t n, size_t es)
{
    switch (es) {
    case 1: memset(d, *(const unsigned char *)s, (size_t)n); break;
    case 2: { u16a v = *(const u16a *)s, *D = (u16a *)d; for (int64_t i = 0; i < n; i++) D[i] = v; } break;
    case 4: { u32a v = *(const u32a *)s, *D = (u32a *)d; for (int64_t i = 0; i < n; i++) D[i] = v; } break;
    case 8: { u64a v = *(const u64a *)s, *D = (u64a *)d; for (int64_t i = 0; i < n; i++) D[i] = v; } break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, s, es);
    }
}

/* n elements, destination stride dst, source stride sst. */
static void run_copy(char *d, int64_t dst, const char *s, int64_t sst, int64_t n, size_t es)
{
    if (dst == 1 && sst == 1) {
        memcpy(d, s, (size_t)n * es);
        return;
    }
    if (dst == 1 && sst == 0) {
        fill_elems(d, s, n, es);
        return;
    }
#define RUN(T) { T *D = (T *)d; const T *S = (const T *)s; for (int64_t i = 0; i < n; i++) D[i * dst] = S[i * sst]; }
    switch (es) {
    BY_UNIT(RUN)
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(d + i * dst * (int64_t)es, s + i * sst * (int64_t)es, es);
    }
#undef RUN
}

/* Offsets of outer index o over dims[0..nd-1] (skipping dim `skip`). */
static void outer_offsets(const ft_xfer *x, int nd, int skip, int64_t o, int64_t *so, int64_t *dof)
{
    int64_t s = 0, d = 0;
    for (int m = nd - 1; m >= 0; m--) {
        if (m == skip)
            continue;
        int64_t c = o % x->dims[m];
        o /= x->dims[m];
        s += c * x->ss[m];
        d += c * x->ds[m];
    }
    *so = s;
    *dof = d;
}

/* One tile of 4-byte elements, D[i*dq + j] = S[i + j*sa]: 4x4 blocks through
 * registers (shuffles only, so the bits of any dtype pass unchanged). */
static void tile4(char *D0, const char *S0, int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t dq, int64_t sa)
{
    u32a *D = (u32a *)D0;
    const u32a *S = (const u32a *)S0;
    int64_t i = i0;
#if defined(__SSE2__)
    for (; i + 4 <= i1; i += 4) {
        int64_t j = j0;
        for (; j + 4 <= j1; j += 4) {
            const float *s = (const float *)(S + i + j * sa);
            float *d = (float *)(D + i * dq + j);
            __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + sa), r2 = _mm_loadu_ps(s + 2 * sa),
                   r3 = _mm_loadu_ps(s + 3 * sa);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            _mm_storeu_ps(d, r0);
            _mm_storeu_ps(d + dq, r1);
            _mm_storeu_ps(d + 2 * dq, r2);
            _mm_storeu_ps(d + 3 * dq, r3);
        }
        for (; j < j1; j++)
            for (int64_t ii = i; ii < i + 4; ii++)
                D[ii * dq + j] = S[ii + j * sa];
    }
#endif
    for (; i < i1; i++)
        for (int64_t j = j0; j < j1; j++)
            D[i * dq + j] = S[i + j * sa];
}

/* Transposing copy: the destination is contiguous along the last dim a, the
 * source along dim q. Square tiles keep both sides in cache. */
static void xfer_tiled(const ft_kctx *k, const ft_xfer *x, int q, char *dst, const char *src, size_t es, int par)
{
    int a = x->rank - 1;
    int64_t na = x->dims[a], nq = x->dims[q], sa = x->ss[a], dq = x->ds[q];
    int64_t outer = 1;
    for (int m = 0; m < a; m++)
        if (m != q)
            outer *= x->dims[m];
    /* one task per tile, so a short source-contiguous dim (HWC -> CHW) still
     * spreads over the threads */
    int64_t nbq = (nq + TILE - 1) / TILE, nba = (na + TILE - 1) / TILE, tasks = outer * nbq * nba;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t t = 0; t < tasks; t++) {
        int64_t so, dof, j0 = (t % nba) * TILE, i0 = (t / nba % nbq) * TILE;
        int64_t i1 = i0 + TILE < nq ? i0 + TILE : nq, j1 = j0 + TILE < na ? j0 + TILE : na;
        outer_offsets(x, a, q, t / nba / nbq, &so, &dof);
        char *D0 = dst + dof * (int64_t)es;
        const char *S0 = src + so * (int64_t)es;
#define TL(T) { T *D = (T *)D0; const T *S = (const T *)S0; \
                for (int64_t i = i0; i < i1; i++) for (int64_t j = j0; j < j1; j++) D[i * dq + j] = S[i + j * sa]; }
        switch (es) {
        case 1: TL(uint8_t) break;
        case 2: TL(u16a) break;
        case 4: tile4(D0, S0, i0, i1, j0, j1, dq, sa); break;
        case 8: TL(u64a) break;
        default:
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++)
                    memcpy(D0 + (i * dq + j) * (int64_t)es, S0 + (i + j * sa) * (int64_t)es, es);
        }
#undef TL
    }
}

/* Copy the box x from src to dst (element strides, es-byte elements). */
static void xfer_run(const ft_kctx *k, ft_xfer *x, char *dst, const char *src, size_t es)
{
    int64_t total = ft_xfer_simplify(x);
    if (total == 0)
        return;
    int R = x->rank;
    if (R == 0) {
        memcpy(dst, src, es);
        return;
    }
    int nth = k->threads > 1 ? k->threads : 1;
    int par = total >= CPU_PAR_MIN && nth > 1;
    if (R >= 2 && x->ds[R - 1] == 1 && x->ss[R - 1] != 1 && x->ss[R - 1] != 0) {
        for (int q = 0; q < R - 1; q++)
            if (x->ss[q] == 1) {
                xfer_tiled(k, x, q, dst, src, es, par);
                return;
            }
    }
    int64_t inner = x->dims[R - 1], outer = total / inner, dsi = x->ds[R - 1], ssi = x->ss[R - 1];
    if (par && outer < 4 * nth) {
        /* Few long runs (a plain copy, a big concat part): split each run. */
        int64_t pieces = (4 * nth + outer - 1) / outer;
        if (pieces > inner)
            pieces = inner;
        int64_t items = outer * pieces;
#pragma omp parallel for num_threads(nth) schedule(static)
        for (int64_t it = 0; it < items; it++) {
            int64_t so, dof, p = it % pieces, lo = inner * p / pieces, hi = inner * (p + 1) / pieces;
            outer_offsets(x, R - 1, -1, it / pieces, &so, &dof);
            run_copy(dst + (dof + lo * dsi) * (int64_t)es, dsi, src + (so + lo * ssi) * (int64_t)es, ssi, hi - lo, es);
        }
        return;
    }
    int64_t nchunk = par ? (outer < 4 * nth ? outer : 4 * nth) : 1;
#pragma omp parallel for num_threads(nth) schedule(static) if (par)
    for (int64_t ch = 0; ch < nchunk; ch++) {
        int64_t lo = outer * ch / nchunk, hi = outer * (ch + 1) / nchunk, so, dof, idx[FT_XFER_MAX_RANK];
        int64_t o = lo;
        for (int m = R - 2; m >= 0; m--) {
            idx[m] = o % x->dims[m];
            o /= x->dims[m];
        }
        outer_offsets(x, R - 1, -1, lo, &so, &dof);
        for (int64_t it = lo; it < hi; it++) {
            run_copy(dst + dof * (int64_t)es, dsi, src + so * (int64_t)es, ssi, inner, es);
            for (int m = R - 2; m >= 0; m--) {
                so += x->ss[m];
                dof += x->ds[m];
                if (++idx[m] < x->dims[m])
                    break;
                so -= x->ss[m] * x->dims[m];
                dof -= x->ds[m] * x->dims[m];
                idx[m] = 0;
            }
        }
    }
}

static const char *tensor_name(const ft_kctx *k, const ft_node *n, int i) { return k->g->tensors[n->in[i]].name; }

ft_status cpu_copy(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (out->data == in[0].data)
        return FT_OK;
    ft_xfer x = {.rank = 1, .dims = {(int64_t)ft_numel(&in[0].shape)}, .ds = {1}, .ss = {1}};
    xfer_run(k, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
    return FT_OK;
}

ft_status cpu_transpose(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_xfer x;
    ft_xfer_transpose(&x, n->params.move.perm, &in[0].shape, &out->shape);
    xfer_run(k, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
    return FT_OK;
}

ft_status cpu_depth_space(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_xfer x;
    ft_xfer_depth_space(&x, &n->params.move, n->op == FT_OP_DEPTH_TO_SPACE, &in[0].shape, &out->shape);
    xfer_run(k, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
    return FT_OK;
}

ft_status cpu_expand(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_xfer x;
    ft_xfer_expand(&x, &in[0].shape, &out->shape);
    xfer_run(k, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
    return FT_OK;
}

ft_status cpu_tile(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_xfer x;
    ft_xfer_tile(&x, &in[0].shape, &out->shape);
    xfer_run(k, &x, out->data, in[0].data, ft_dtype_size(in[0].dtype));
    return FT_OK;
}

ft_status cpu_concat(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    size_t es = ft_dtype_size(out->dtype);
    int64_t off = 0;
    for (int i = 0; i < n->n_in; i++) {
        ft_xfer x;
        int64_t at = ft_xfer_part(&x, &in[i].shape, &out->shape, n->params.move.axis, &off, 1);
        xfer_run(k, &x, (char *)out->data + at * (int64_t)es, in[i].data, es);
    }
    return FT_OK;
}

ft_status cpu_split(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    size_t es = ft_dtype_size(in[0].dtype);
    int64_t off = 0;
    for (int i = 0; i < n->n_out; i++) {
        ft_xfer x;
        int64_t at = ft_xfer_part(&x, &out[i].shape, &in[0].shape, n->params.move.axis, &off, 0);
        xfer_run(k, &x, out[i].data, (const char *)in[0].data + at * (int64_t)es, es);
    }
    return FT_OK;
}

ft_status cpu_slice(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_xfer x;
    int64_t base;
    if (!ft_xfer_slice(&x, &n->params.move, &in[0].shape, &out->shape, &base))
        return FT_OK;
    size_t es = ft_dtype_size(in[0].dtype);
    xfer_run(k, &x, out->data, (const char *)in[0].data + base * (int64_t)es, es);
    return FT_OK;
}

/* "[1,2]": position of flat element i in shape s. */
static const char *pos_str(const ft_shape *s, int64_t i, char *buf)
{
    ft_shape p = {.rank = s->rank};
    for (int d = s->rank - 1; d >= 0; d--) {
        p.dims[d] = s->dims[d] ? i % s->dims[d] : 0;
        i = s->dims[d] ? i / s->dims[d] : 0;
    }
    return ft_shape_str(&p, buf);
}

ft_status cpu_index_error(ft_kctx *k, const ft_node *n, const ft_view *idx, int64_t i, int64_t v, int axis, int64_t dim)
{
    char pb[FT_SHAPE_STR];
    if (dim == 0)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                           "index %lld at position %s of indices '%s' is out of range: axis %d of data '%s' is "
                           "empty (size 0), so no index is valid", (long long)v, pos_str(&idx->shape, i, pb),
                           tensor_name(k, n, 1), axis, tensor_name(k, n, 0));
    return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                       "index %lld at position %s of indices '%s' is out of range for axis %d of data '%s' "
                       "(size %lld; valid indices are %lld..%lld)", (long long)v, pos_str(&idx->shape, i, pb),
                       tensor_name(k, n, 1), axis, tensor_name(k, n, 0), (long long)dim, (long long)-dim,
                       (long long)(dim - 1));
}

ft_status cpu_check_indices(ft_kctx *k, const ft_node *n, const ft_view *idx, int axis, int64_t dim)
{
    int is64 = idx->dtype == FT_I64;
    int64_t count = (int64_t)ft_numel(&idx->shape);
    for (int64_t i = 0; i < count; i++) {
        int64_t v = cpu_load_index(idx->data, is64, i);
        if (v < -dim || v >= dim)
            return cpu_index_error(k, n, idx, i, v, axis, dim);
    }
    return FT_OK;
}

ft_status cpu_gather(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const int axis = n->params.move.axis;
    int64_t dim = s->dims[axis], outer = 1, inner = 1, nq = (int64_t)ft_numel(&in[1].shape);
    ft_status st = cpu_check_indices(k, n, &in[1], axis, dim);
    if (st)
        return st;
    for (int d = 0; d < axis; d++)
        outer *= s->dims[d];
    for (int d = axis + 1; d < s->rank; d++)
        inner *= s->dims[d];
    int64_t items = outer * nq;
    if (items == 0 || inner == 0)
        return FT_OK;
    size_t es = ft_dtype_size(in[0].dtype), row = (size_t)inner * es;
    const char *src = in[0].data;
    char *dst = out->data;
    const void *ip = in[1].data;
    int is64 = in[1].dtype == FT_I64;
    int par = items * inner >= CPU_PAR_MIN && k->threads > 1;
    if (inner == 1) {
        /* one element per index (embedding of scalars, last-axis gather) */
#define GA(T) { T *D = (T *)dst; const T *S = (const T *)src; \
        _Pragma("omp parallel for num_threads(k->threads) schedule(static) if (par)") \
        for (int64_t it = 0; it < items; it++) { \
            int64_t v = cpu_load_index(ip, is64, it % nq); \
            D[it] = S[(it / nq) * dim + (v < 0 ? v + dim : v)]; } }
        switch (es) {
        case 1: GA(uint8_t) return FT_OK;
        case 2: GA(u16a) return FT_OK;
        case 4: GA(u32a) return FT_OK;
        case 8: GA(u64a) return FT_OK;
        default: break;
        }
#undef GA
    }
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t it = 0; it < items; it++) {
        int64_t v = cpu_load_index(ip, is64, it % nq);
        if (v < 0)
            v += dim;
        memcpy(dst + (size_t)it * row, src + (size_t)((it / nq) * dim + v) * row, row);
    }
    return FT_OK;
}

ft_status cpu_gather_elements(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape, *q = &in[1].shape;
    const int r = s->rank, axis = n->params.move.axis;
    int64_t dim = s->dims[axis];
    ft_status st = cpu_check_indices(k, n, &in[1], axis, dim);
    if (st)
        return st;
    int64_t total = (int64_t)ft_numel(q);
    if (total == 0)
        return FT_OK;
    int64_t dstr[FT_MAX_RANK], len = q->dims[r - 1], rows = total / len, sa;
    ft_strides(s, dstr);
    sa = dstr[axis];
    size_t es = ft_dtype_size(in[0].dtype);
    const char *src = in[0].data;
    char *dst = out->data;
    const void *ip = in[1].data;
    int is64 = in[1].dtype == FT_I64, last = axis == r - 1;
    int par = total >= CPU_PAR_MIN && k->threads > 1;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t row = 0; row < rows; row++) {
        /* data offset of this row's coordinates, without the gather axis */
        int64_t base = cpu_offset_but_axis(q, r - 1, axis, row, dstr);
        const int64_t i0 = row * len;
#define GE(T) { T *D = (T *)dst; const T *S = (const T *)src; \
        for (int64_t j = 0; j < len; j++) { \
            int64_t v = cpu_load_index(ip, is64, i0 + j); \
            if (v < 0) v += dim; \
            D[i0 + j] = S[base + (last ? 0 : j) + v * sa]; } }
        switch (es) {
        BY_UNIT(GE)
        default:
            for (int64_t j = 0; j < len; j++) {
                int64_t v = cpu_load_index(ip, is64, i0 + j);
                if (v < 0)
                    v += dim;
                memcpy(dst + (size_t)(i0 + j) * es, src + (size_t)(base + (last ? 0 : j) + v * sa) * es, es);
            }
        }
#undef GE
    }
    return FT_OK;
}

ft_status cpu_pad(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_move_params *mp = &n->params.move;
    int reflect = mp->pad_mode == FT_PAD_REFLECT, edge = mp->pad_mode == FT_PAD_EDGE, wrap = mp->pad_mode == FT_PAD_WRAP;
    const ft_shape *s = &in[0].shape, *os_ = &out->shape;
    int r = s->rank;
    const int64_t *pb = mp->pb, *pe = mp->pe;
    size_t es = ft_dtype_size(in[0].dtype);
    int64_t is[FT_MAX_RANK], os[FT_MAX_RANK], kept[FT_MAX_RANK], ob[FT_MAX_RANK], soff = 0, doff = 0;
    ft_strides(s, is);
    ft_strides(os_, os);
    for (int d = 0; d < r; d++) {
        kept[d] = s->dims[d] + (pb[d] < 0 ? pb[d] : 0) + (pe[d] < 0 ? pe[d] : 0);
        ob[d] = pb[d] > 0 ? pb[d] : 0;
        soff += (pb[d] < 0 ? -pb[d] : 0) * is[d];
        doff += ob[d] * os[d];
    }
    if (ft_numel(os_) == 0)
        return FT_OK;
    char *dst = out->data;
    ft_xfer x = {.rank = r};
    for (int d = 0; d < r; d++) {
        x.dims[d] = kept[d];
        x.ds[d] = os[d];
        x.ss[d] = is[d];
    }
    xfer_run(k, &x, dst + doff * (int64_t)es, (const char *)in[0].data + soff * (int64_t)es, es);

    /* Borders, innermost axis first: at axis d the slab spans the kept range of
     * the axes before d and the full (already padded) range of those after. */
    _Alignas(8) unsigned char val[16] = {0};
    if (!reflect && !edge && !wrap)
        ft_pad_value(mp->pad_value, in[0].dtype, val);
    for (int d = r - 1; d >= 0; d--) {
        int64_t P = ob[d], E = pe[d] > 0 ? pe[d] : 0, base = 0;
        if (!P && !E)
            continue;
        for (int m = 0; m < d; m++)
            base += ob[m] * os[m];
        for (int side = 0; side < 2; side++) {
            int64_t cnt = side ? E : P;
            if (!cnt)
                continue;
            ft_xfer b = {.rank = r};
            for (int m = 0; m < r; m++) {
                b.dims[m] = m < d ? kept[m] : m > d ? os_->dims[m] : cnt;
                b.ds[m] = os[m];
                b.ss[m] = os[m];
            }
            if (wrap) {
                /* each position repeats the one a period (kept) nearer the
                 * middle: copy outward in blocks of at most one period, each
                 * reading what is already there */
                for (int64_t done = 0, len; done < cnt; done += len) {
                    len = cnt - done < kept[d] ? cnt - done : kept[d];
                    int64_t to = side ? P + kept[d] + done : P - done - len;
                    int64_t from = side ? to - kept[d] : to + kept[d];
                    ft_xfer part = b; /* xfer_run simplifies its argument */
                    part.dims[d] = len;
                    xfer_run(k, &part, dst + (base + to * os[d]) * (int64_t)es,
                             dst + (base + from * os[d]) * (int64_t)es, es);
                }
                continue;
            }
            int64_t at = side ? P + kept[d] : 0, from;
            const char *src;
            if (!reflect && !edge) {
                for (int m = 0; m < r; m++)
                    b.ss[m] = 0;
                src = (const char *)val;
            } else {
                if (edge) {
                    from = side ? P + kept[d] - 1 : P;
                    b.ss[d] = 0;
                } else {
                    /* mirror without repeating the edge element */
                    from = side ? P + kept[d] - 2 : 2 * P;
                    b.ss[d] = -os[d];
                }
                src = dst + (base + from * os[d]) * (int64_t)es;
            }
            xfer_run(k, &b, dst + (base + at * os[d]) * (int64_t)es, src, es);
        }
    }
    return FT_OK;
}
