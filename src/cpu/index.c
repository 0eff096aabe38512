/* CPU kernels of the indexing ops (cpu.h, index.c section): gather_nd,
 * scatter_nd, scatter_elements, one_hot, trilu, cumprod and hardmax. Shapes
 * and attributes were checked by src/graph/infer_index.c (cumprod: infer_math.c,
 * as cumsum); index values are data and are checked here, all of them, before
 * anything is written, with the message of gather (cpu_index_error).
 *
 * Scatter order (man/ftrun-graph.5): updates are applied one at a time in the
 * row-major order of the indices, each to the result of the ones before, so of
 * duplicate indices under reduction "none" the last one wins, and add / mul
 * of floats round in that order. The CUDA kernels (src/cuda/index.cu) keep
 * the same order. */
#include "cpu.h"
#include "../graph/infer_math.h"

#include <math.h>
#include <string.h>

static int64_t prod_dims(const ft_shape *s, int from, int to)
{
    int64_t p = 1;
    for (int d = from; d < to; d++)
        p *= s->dims[d];
    return p;
}

/* The slices addressed by the m-tuples of indices (gather_nd, scatter_nd):
 * tuple t of the indices selects slice base(t) + sum_j idx[t*m+j] * st[j] of
 * the data (in units of `slice` elements), where base is the tuple's batch. */
typedef struct nd_geom {
    int b, m;
    int64_t slice, nt, per_batch, block; /* elements per slice, tuples, tuples per batch, slices per batch */
    int64_t st[FT_MAX_RANK];
} nd_geom;

static void nd_geom_of(const ft_shape *d, const ft_shape *q, int b, nd_geom *g)
{
    g->b = b;
    g->m = (int)q->dims[q->rank - 1];
    g->slice = prod_dims(d, b + g->m, d->rank);
    g->nt = prod_dims(q, 0, q->rank - 1);
    g->per_batch = prod_dims(q, b, q->rank - 1);
    g->block = prod_dims(d, b, b + g->m);
    int64_t s = 1;
    for (int j = g->m - 1; j >= 0; j--) {
        g->st[j] = s;
        s *= d->dims[b + j];
    }
}

/* Every component j of every tuple must lie in [-dim, dim-1] of axis b+j. */
static ft_status nd_check(ft_kctx *k, const ft_node *n, const ft_view *data, const ft_view *idx, const nd_geom *g)
{
    int is64 = idx->dtype == FT_I64;
    int64_t count = g->nt * g->m;
    for (int64_t i = 0; i < count; i++) {
        int64_t v = cpu_load_index(idx->data, is64, i), dim = data->shape.dims[g->b + i % g->m];
        if (v < -dim || v >= dim)
            return cpu_index_error(k, n, idx, i, v, g->b + (int)(i % g->m), dim);
    }
    return FT_OK;
}

/* Slice number (in the whole data) of tuple t; indices already checked. */
static int64_t nd_slice(const ft_view *data, const ft_view *idx, const nd_geom *g, int64_t t)
{
    int is64 = idx->dtype == FT_I64;
    int64_t off = g->per_batch ? t / g->per_batch * g->block : 0;
    for (int j = 0; j < g->m; j++) {
        int64_t v = cpu_load_index(idx->data, is64, t * g->m + j);
        off += (v < 0 ? v + data->shape.dims[g->b + j] : v) * g->st[j];
    }
    return off;
}

ft_status cpu_gather_nd(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    nd_geom g;
    nd_geom_of(&in[0].shape, &in[1].shape, n->params.index.batch_dims, &g);
    ft_status st = nd_check(k, n, &in[0], &in[1], &g);
    if (st || g.nt == 0 || g.slice == 0)
        return st;
    size_t es = ft_dtype_size(in[0].dtype), row = (size_t)g.slice * es;
    const char *src = in[0].data;
    char *dst = out->data;
    int par = g.nt * g.slice >= CPU_PAR_MIN && k->threads > 1;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t t = 0; t < g.nt; t++)
        memcpy(dst + (size_t)t * row, src + (size_t)nd_slice(&in[0], &in[1], &g, t) * row, row);
    return FT_OK;
}

/* ---- scatter: y[j] = combine(y[j], u[j]) for cnt elements ---------------------------- */

#define IADD(a, b) (int64_t)((uint64_t)(a) + (uint64_t)(b))
#define IMUL(a, b) (int64_t)((uint64_t)(a) * (uint64_t)(b))
#define FADD(a, b) ((a) + (b))
#define FMUL(a, b) ((a) * (b))
#define BOR(a, b) ((a) | (b))
#define BAND(a, b) ((a) & (b))
#define SAME(v) (v)
#define LD_F16(v) ft_f16_to_f32(v)
#define ST_F16(v) ft_f32_to_f16(v)
#define LD_BF16(v) ft_bf16_to_f32(v)
#define ST_BF16(v) ft_f32_to_bf16(v)

/* max / min keep the current value on ties and when it is NaN, and take a NaN
 * update: NaN propagates, as numpy.maximum / numpy.minimum. */
#define DEF_RED(S, T, A, LD, ST, ADD, MUL)                                                                       \
    static void red_##S(void *yv, const void *uv, int64_t cnt, int red)                                       \
    {                                                                                                          \
        T *y = (T *)yv;                                                                                        \
        const T *u = (const T *)uv;                                                                            \
        for (int64_t j = 0; j < cnt; j++) {                                                                    \
            A a = (A)LD(y[j]), b = (A)LD(u[j]), r = b;                                                         \
            if (red == FT_SCATTER_ADD)                                                                         \
                r = ADD(a, b);                                                                                 \
            else if (red == FT_SCATTER_MUL)                                                                    \
                r = MUL(a, b);                                                                                 \
            else if (red == FT_SCATTER_MAX)                                                                    \
                r = (a >= b || a != a) ? a : b;                                                                \
            else if (red == FT_SCATTER_MIN)                                                                    \
                r = (a <= b || a != a) ? a : b;                                                                \
            y[j] = (T)ST(r);                                                                                   \
        }                                                                                                      \
    }

DEF_RED(f16, uint16_t, float, LD_F16, ST_F16, FADD, FMUL)
DEF_RED(bf16, uint16_t, float, LD_BF16, ST_BF16, FADD, FMUL)
DEF_RED(f32, float, float, SAME, SAME, FADD, FMUL)
DEF_RED(f64, double, double, SAME, SAME, FADD, FMUL)
DEF_RED(i8, int8_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(i16, int16_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(i32, int32_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(i64, int64_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(u8, uint8_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(u16, uint16_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(u32, uint32_t, int64_t, SAME, SAME, IADD, IMUL)
DEF_RED(u64, uint64_t, uint64_t, SAME, SAME, FADD, FMUL) /* unsigned: wraps, compares unsigned */
DEF_RED(bool, uint8_t, int, SAME, SAME, BOR, BAND)

typedef void (*red_fn)(void *, const void *, int64_t, int);

static red_fn red_of(ft_dtype dt)
{
    switch (dt) {
    case FT_F16: return red_f16;
    case FT_BF16: return red_bf16;
    case FT_F32: return red_f32;
    case FT_F64: return red_f64;
    case FT_I8: return red_i8;
    case FT_I16: return red_i16;
    case FT_I32: return red_i32;
    case FT_I64: return red_i64;
    case FT_U8: return red_u8;
    case FT_U16: return red_u16;
    case FT_U32: return red_u32;
    case FT_U64: return red_u64;
    case FT_BOOL: return red_bool;
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return NULL;
}

/* out = data (unless it is the same buffer), then the updates in order. */
static void start_scatter(const ft_view *in, ft_view *out)
{
    size_t bytes = (size_t)ft_numel(&in[0].shape) * ft_dtype_size(in[0].dtype);
    if (out->data != in[0].data && bytes)
        memcpy(out->data, in[0].data, bytes);
}

ft_status cpu_scatter_nd(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    nd_geom g;
    nd_geom_of(&in[0].shape, &in[1].shape, 0, &g);
    ft_status st = nd_check(k, n, &in[0], &in[1], &g);
    if (st)
        return st;
    start_scatter(in, out);
    int red = n->params.index.reduction;
    size_t es = ft_dtype_size(in[0].dtype), row = (size_t)g.slice * es;
    red_fn f = red_of(in[0].dtype);
    char *dst = out->data;
    const char *upd = in[2].data;
    for (int64_t t = 0; t < g.nt && g.slice; t++) {
        char *y = dst + (size_t)nd_slice(&in[0], &in[1], &g, t) * row;
        if (red == FT_SCATTER_NONE)
            memcpy(y, upd + (size_t)t * row, row);
        else
            f(y, upd + (size_t)t * row, g.slice, red);
    }
    return FT_OK;
}

ft_status cpu_scatter_elements(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape, *q = &in[1].shape;
    const int r = s->rank, axis = n->params.index.axis;
    int64_t dim = s->dims[axis];
    ft_status st = cpu_check_indices(k, n, &in[1], axis, dim);
    if (st)
        return st;
    start_scatter(in, out);
    int64_t total = (int64_t)ft_numel(q), dstr[FT_MAX_RANK];
    ft_strides(s, dstr);
    int red = n->params.index.reduction, is64 = in[1].dtype == FT_I64;
    size_t es = ft_dtype_size(in[0].dtype);
    red_fn f = red_of(in[0].dtype);
    char *dst = out->data;
    const char *upd = in[2].data;
    for (int64_t p = 0; p < total; p++) {
        int64_t off = cpu_offset_but_axis(q, r, axis, p, dstr);
        int64_t v = cpu_load_index(in[1].data, is64, p);
        off += (v < 0 ? v + dim : v) * dstr[axis];
        if (red == FT_SCATTER_NONE)
            memcpy(dst + (size_t)off * es, upd + (size_t)p * es, es);
        else
            f(dst + (size_t)off * es, upd + (size_t)p * es, 1, red);
    }
    return FT_OK;
}

/* ---- one_hot -------------------------------------------------------------------------- */

/* Index i of a one_hot input as a position in [0, depth): floats truncate
 * toward zero, negatives count from depth; -1 for NaN and values out of
 * [-depth, depth-1] (their row is all off values, as ONNX OneHot). */
static int64_t hot_index(const void *p, ft_dtype dt, int64_t i, int64_t depth)
{
    int64_t v = -1;
    double x = 0;
    switch (dt) {
    case FT_F32: x = ((const float *)p)[i]; goto flt;
    case FT_F64: x = ((const double *)p)[i]; goto flt;
    case FT_I8: v = ((const int8_t *)p)[i]; break;
    case FT_I16: v = ((const int16_t *)p)[i]; break;
    case FT_I32: v = ((const int32_t *)p)[i]; break;
    case FT_I64: v = ((const int64_t *)p)[i]; break;
    case FT_U8: v = ((const uint8_t *)p)[i]; break;
    case FT_U16: v = ((const uint16_t *)p)[i]; break;
    case FT_U32: v = ((const uint32_t *)p)[i]; break;
    case FT_U64: { /* above INT64_MAX: out of every range */
        uint64_t u = ((const uint64_t *)p)[i];
        v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
        break;
    }
    case FT_F16: case FT_BF16: case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: return -1; /* f16/bf16 arrive as f32 */
    }
    return v < -depth || v >= depth ? -1 : v < 0 ? v + depth : v;
flt:
    if (!(x > (double)-depth - 1.0 && x < (double)depth))
        return -1;
    v = (int64_t)x;
    return v < 0 ? v + depth : v;
}

ft_status cpu_one_hot(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    const int axis = n->params.index.axis;
    const int64_t depth = n->params.index.depth;
    const ft_shape *q = &in[0].shape;
    int64_t outer = prod_dims(q, 0, axis), inner = prod_dims(q, axis, q->rank);
    size_t es = ft_dtype_size(in[1].dtype);
    const char *off = in[1].data, *on = off + es;
    char *y = out->data;
    int par = outer * inner * depth >= CPU_PAR_MIN && k->threads > 1;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t h = hot_index(in[0].data, in[0].dtype, o * inner + i, depth);
            for (int64_t d = 0; d < depth; d++)
                memcpy(y + (size_t)((o * depth + d) * inner + i) * es, d == h ? on : off, es);
        }
    return FT_OK;
}

/* ---- trilu ---------------------------------------------------------------------------- */

ft_status cpu_trilu(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    const ft_shape *s = &in[0].shape;
    int64_t rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1], mats = prod_dims(s, 0, s->rank - 2);
    int64_t kk = n->params.index.k, lim = rows + cols;
    kk = kk > lim ? lim : kk < -lim ? -lim : kk; /* beyond +-(rows+cols) nothing changes */
    int upper = n->params.index.upper;
    size_t es = ft_dtype_size(in[0].dtype);
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            /* kept columns [a, b): upper j >= i + k, lower j <= i + k */
            int64_t a = upper ? i + kk : 0, b = upper ? cols : i + kk + 1;
            a = a < 0 ? 0 : a > cols ? cols : a;
            b = b < a ? a : b > cols ? cols : b;
            size_t base = (size_t)((m * rows + i) * cols) * es;
            char *y = (char *)out->data + base;
            const char *x = (const char *)in[0].data + base;
            memset(y, 0, (size_t)a * es);
            memmove(y + (size_t)a * es, x + (size_t)a * es, (size_t)(b - a) * es);
            memset(y + (size_t)b * es, 0, (size_t)(cols - b) * es);
        }
    return FT_OK;
}

/* ---- cumprod, hardmax: one line along the axis at a time ------------------------------ */

/* Floats multiply in double, ints in wrapping 64-bit arithmetic; the input
 * is read before the output is written, so in-place use is safe. */
#define DEF_CUMPROD(S, T, ACC)                                                                                    \
    static void cumprod_##S(const void *xv, void *yv, int64_t base, int64_t len, int64_t inner, int excl, int rev) \
    {                                                                                                             \
        const T *x = (const T *)xv + base;                                                                        \
        T *y = (T *)yv + base;                                                                                    \
        ACC acc = 1;                                                                                              \
        for (int64_t s = 0; s < len; s++) {                                                                       \
            int64_t i = (rev ? len - 1 - s : s) * inner;                                                          \
            ACC v = (ACC)x[i];                                                                                    \
            if (excl) {                                                                                           \
                y[i] = (T)acc;                                                                                    \
                acc *= v;                                                                                         \
            } else {                                                                                              \
                acc *= v;                                                                                         \
                y[i] = (T)acc;                                                                                    \
            }                                                                                                     \
        }                                                                                                         \
    }

/* The first maximum (NaN wins over every number, the first NaN) gets 1. */
#define DEF_HARDMAX(S, T, ACC)                                                                                    \
    static void hardmax_##S(const void *xv, void *yv, int64_t base, int64_t len, int64_t inner, int excl, int rev) \
    {                                                                                                             \
        (void)excl, (void)rev;                                                                                    \
        const T *x = (const T *)xv + base;                                                                        \
        T *y = (T *)yv + base;                                                                                    \
        int64_t best = 0;                                                                                         \
        for (int64_t s = 1; s < len && x[best * inner] == x[best * inner]; s++)                                   \
            if (x[s * inner] != x[s * inner] || x[s * inner] > x[best * inner])                                   \
                best = s;                                                                                         \
        for (int64_t s = 0; s < len; s++)                                                                         \
            y[s * inner] = (T)(s == best);                                                                        \
    }

#define DEF_LINE_OPS(S, T, ACC) DEF_CUMPROD(S, T, ACC) DEF_HARDMAX(S, T, ACC)
DEF_LINE_OPS(f32, float, double)
DEF_LINE_OPS(f64, double, double)
DEF_LINE_OPS(i8, int8_t, uint64_t)
DEF_LINE_OPS(i16, int16_t, uint64_t)
DEF_LINE_OPS(i32, int32_t, uint64_t)
DEF_LINE_OPS(i64, int64_t, uint64_t)
DEF_LINE_OPS(u8, uint8_t, uint64_t)
DEF_LINE_OPS(u16, uint16_t, uint64_t)
DEF_LINE_OPS(u32, uint32_t, uint64_t)
DEF_LINE_OPS(u64, uint64_t, uint64_t)

typedef void (*line_fn)(const void *, void *, int64_t, int64_t, int64_t, int, int);

static ft_status along_axis(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int axis, int excl,
                            int rev, const line_fn *fns)
{
    int slot = cpu_dtype_slot(in[0].dtype);
    if (slot < 0 || slot >= CPU_SLOT_BOOL)
        return cpu_bad_dtype(k, n, in[0].dtype);
    int64_t outer, len, inner;
    ft_reduce_around_axis(&in[0].shape, axis, &outer, &len, &inner);
    int64_t lines = outer * inner;
    int par = lines * len >= CPU_PAR_MIN && k->threads > 1;
    line_fn f = fns[slot];
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t l = 0; l < lines; l++)
        f(in[0].data, out[0].data, l / inner * len * inner + l % inner, len, inner, excl, rev);
    return FT_OK;
}

ft_status cpu_cumprod(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    static const line_fn fns[] = {cumprod_f32, cumprod_f64, cumprod_i8, cumprod_i16, cumprod_i32, cumprod_i64,
                                  cumprod_u8, cumprod_u16, cumprod_u32, cumprod_u64};
    const ft_reduce_params *p = &n->params.reduce;
    return along_axis(k, n, in, out, p->axis, p->exclusive, p->reverse, fns);
}

ft_status cpu_hardmax(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    static const line_fn fns[] = {hardmax_f32, hardmax_f64, hardmax_i8, hardmax_i16, hardmax_i32, hardmax_i64,
                                  hardmax_u8, hardmax_u16, hardmax_u32, hardmax_u64};
    return along_axis(k, n, in, out, n->params.norm.axis, 0, 0, fns);
}

/* ---- tensor_scatter ----------------------------------------------------------------- */

/* A copy of past_cache with update's rows along axis written from position
 * write_indices[b] of batch b on (modulo the axis size when circular). A
 * linear position outside the axis fails the run before anything is written. */
ft_status cpu_tensor_scatter(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *d = &in[0].shape;
    const int axis = n->params.index.axis, circ = n->params.index.circular;
    const int64_t *wi = n->n_in > 2 && in[2].data ? in[2].data : NULL;
    int64_t outer = 1, inner = 1, B = d->dims[0], max = d->dims[axis], seq = in[1].shape.dims[axis];
    for (int i = 1; i < axis; i++)
        outer *= d->dims[i];
    for (int i = axis + 1; i < d->rank; i++)
        inner *= d->dims[i];
    size_t es = ft_dtype_size(in[0].dtype), row = (size_t)inner * es;
    for (int64_t b = 0; b < B && !circ && seq > 0; b++) {
        int64_t w = wi ? wi[b] : 0;
        if (w < 0 || w > max - seq)
            return ft_node_err(k->err, FT_EGRAPH, k->g, n, "write_indices[%lld] = %lld: the %lld rows of update '%s' "
                               "do not fit in axis %d of past_cache '%s' (size %lld; valid positions 0..%lld)",
                               (long long)b, (long long)w, (long long)seq, k->g->tensors[n->in[1]].name, axis,
                               k->g->tensors[n->in[0]].name, (long long)max, (long long)(max - seq));
    }
    if (out[0].data != in[0].data)
        memcpy(out[0].data, in[0].data, (size_t)ft_numel(d) * es);
    for (int64_t b = 0; b < B; b++) {
        int64_t w = wi ? wi[b] : 0;
        for (int64_t o = 0; o < outer; o++) {
            const char *src = (const char *)in[1].data + (size_t)((b * outer + o) * seq) * row;
            char *dst = (char *)out[0].data + (size_t)((b * outer + o) * max) * row;
            for (int64_t s = 0; s < seq; s++) {
                int64_t p = circ ? ((w % max + max) % max + s) % max : w + s;
                memcpy(dst + (size_t)p * row, src + (size_t)s * row, row);
            }
        }
    }
    return FT_OK;
}
