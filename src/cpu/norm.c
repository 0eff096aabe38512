/* CPU normalisations over an axis: softmax / log_softmax, layer_norm and
 * rms_norm, in f32 and f64. Statistics accumulate in double (f32 softmax,
 * layer_norm and rms_norm: blocks of 256 or 512 in f32 lanes first); every
 * input element of a row is read before the same element of the output is
 * written, so the kernels also work in place. */
#include "cpu.h"
#include "vmath.h"
#include "../graph/infer_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 1024


/* ---- softmax -------------------------------------------------------------------- */

/* Contiguous row: max (MAX) subtracted; the sum of exp over blocks of SM_BLOCK in
 * T, the blocks' sums in double. EXP is the element type's exp (f32:
 * ft_vexpf of src/cpu/vmath.h, inline so the loops vectorise; the sum and the
 * division keep the error at a few ulp); EXPNP its version for x - max <= 0
 * (f32: ft_vexpf_nonpos, 0 under the smallest normal), written to y and then
 * summed by SUM. The f32 rows are compiled for AVX-512, AVX2+FMA and the
 * baseline (FT_VCLONES). */
#define SM_BLOCK 256
#define DEF_SOFTMAX(S, T, EXP, EXPNP, MAX, SUM, CLONES)                                                           \
    CLONES static void softmax_row_##S(const T *restrict x, T *restrict y, int64_t n, int logsm)                \
    {                                                                                                             \
        const T m = MAX(x, n);                                                                                    \
        double s = 0;                                                                                             \
        for (int64_t b = 0; b < n; b += SM_BLOCK) {                                                               \
            const int64_t e1 = b + SM_BLOCK < n ? b + SM_BLOCK : n;                                               \
            T bs = 0;                                                                                             \
            if (logsm) {                                                                                          \
                _Pragma("omp simd reduction(+ : bs)") for (int64_t i = b; i < e1; i++) bs += EXP(x[i] - m);       \
            } else {                                                                                              \
                _Pragma("omp simd") for (int64_t i = b; i < e1; i++) y[i] = EXPNP(x[i] - m);                      \
                bs = SUM(y + b, e1 - b);                                                                          \
            }                                                                                                     \
            s += (double)bs;                                                                                      \
        }                                                                                                         \
        if (logsm) {                                                                                              \
            double ls = log(s);                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = (T)((double)(x[i] - m) - ls);              \
            return;                                                                                               \
        }                                                                                                         \
        /* 1/s rounded to T, then one product: within 1 ulp, without widening the row */                        \
        const T inv = (T)(1.0 / s);                                                                               \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] *= inv;                                          \
    }                                                                                                             \
    /* Strided: the axis has stride inner; columns [c0, c1) of one outer block. */                                \
    CLONES static void softmax_cols_##S(const T *x, T *y, int64_t len, int64_t inner, int64_t c0, int64_t c1,     \
                                        int logsm)                                                                \
    {                                                                                                             \
        int64_t n = c1 - c0;                                                                                      \
        T m[CHUNK];                                                                                               \
        double s[CHUNK];                                                                                          \
        x += c0, y += c0;                                                                                         \
        for (int64_t c = 0; c < n; c++)                                                                           \
            m[c] = x[c], s[c] = 0;                                                                                \
        for (int64_t i = 1; i < len; i++) {                                                                       \
            const T *xi = x + i * inner;                                                                          \
            _Pragma("omp simd") for (int64_t c = 0; c < n; c++) m[c] = xi[c] > m[c] ? xi[c] : m[c];               \
        }                                                                                                         \
        for (int64_t i = 0; i < len; i++) {                                                                       \
            const T *xi = x + i * inner;                                                                          \
            T *yi = y + i * inner;                                                                                \
            if (logsm)                                                                                            \
                _Pragma("omp simd") for (int64_t c = 0; c < n; c++)                                               \
                {                                                                                                 \
                    T v = xi[c] - m[c];                                                                           \
                    s[c] += (double)EXP(v);                                                                       \
                    yi[c] = v;                                                                                    \
                }                                                                                                 \
            else                                                                                                  \
                _Pragma("omp simd") for (int64_t c = 0; c < n; c++)                                               \
                {                                                                                                 \
                    T e = EXP(xi[c] - m[c]);                                                                      \
                    s[c] += (double)e;                                                                            \
                    yi[c] = e;                                                                                    \
                }                                                                                                 \
        }                                                                                                         \
        for (int64_t c = 0; c < n; c++)                                                                           \
            s[c] = logsm ? log(s[c]) : 1.0 / s[c];                                                                \
        for (int64_t i = 0; i < len; i++) {                                                                       \
            T *yi = y + i * inner;                                                                                \
            if (logsm)                                                                                            \
                _Pragma("omp simd") for (int64_t c = 0; c < n; c++) yi[c] = (T)((double)yi[c] - s[c]);            \
            else                                                                                                  \
                _Pragma("omp simd") for (int64_t c = 0; c < n; c++) yi[c] = (T)((double)yi[c] * s[c]);            \
        }                                                                                                         \
    }

DEF_SOFTMAX(f32, float, ft_vexpf, ft_vexpf_nonpos, ft_vrow_maxf, ft_vrow_sumf, FT_VCLONES)
DEF_SOFTMAX(f64, double, exp, exp, ft_vrow_maxd, ft_vrow_sumd, )

static ft_status bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return cpu_bad_dtype(k, n, dt);
}

ft_status cpu_softmax(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return bad_dtype(k, n, dt);
    const int axis = n->params.norm.axis;
    int logsm = n->op == FT_OP_LOG_SOFTMAX;
    int64_t outer, len, inner;
    ft_reduce_around_axis(s, axis, &outer, &len, &inner);
    if (outer * len * inner == 0)
        return FT_OK;
    int par = (int64_t)ft_numel(s) >= CPU_PAR_MIN && k->threads > 1;
    int64_t chunk = inner == 1 ? 1 : cpu_col_chunk(inner, outer, k->threads, par, CHUNK);
    int64_t nch = (inner + chunk - 1) / chunk, items = outer * nch;
    const char *x = in[0].data;
    char *y = out[0].data;
    size_t es = ft_dtype_size(dt);
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t it = 0; it < items; it++) {
        int64_t o = it / nch, c0 = it % nch * chunk, c1 = c0 + chunk < inner ? c0 + chunk : inner;
        size_t off = (size_t)(o * len * inner) * es;
        if (dt == FT_F32) {
            if (inner == 1)
                softmax_row_f32((const float *)(x + off), (float *)(y + off), len, logsm);
            else
                softmax_cols_f32((const float *)(x + off), (float *)(y + off), len, inner, c0, c1, logsm);
        } else {
            if (inner == 1)
                softmax_row_f64((const double *)(x + off), (double *)(y + off), len, logsm);
            else
                softmax_cols_f64((const double *)(x + off), (double *)(y + off), len, inner, c0, c1, logsm);
        }
    }
    return FT_OK;
}

/* ---- layer_norm / rms_norm ------------------------------------------------------ */

/* scale or bias as a dense vector over the normalised dims: the input itself
 * when it already has that many elements (a one-way broadcastable tensor of
 * the same size has the same layout), else an expanded copy in *owned. */
static ft_status norm_param(ft_kctx *k, const ft_node *n, const ft_view *p, const ft_shape *x, int axis, int64_t d,
                            const void **data, void **owned)
{
    *data = NULL;
    *owned = NULL;
    if (!p || !p->data)
        return FT_OK;
    if ((int64_t)ft_numel(&p->shape) == d) {
        *data = p->data;
        return FT_OK;
    }
    ft_shape nd = {.rank = x->rank - axis};
    memcpy(nd.dims, x->dims + axis, sizeof(int64_t) * (size_t)nd.rank);
    int64_t st[FT_MAX_RANK], idx[FT_MAX_RANK] = {0};
    ft_broadcast_strides(&p->shape, &nd, st);
    size_t es = ft_dtype_size(p->dtype);
    char *buf = ft_malloc((size_t)d * es);
    if (!buf)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory expanding a %lld-element parameter",
                           (long long)d);
    int64_t src = 0;
    for (int64_t i = 0; i < d; i++) {
        memcpy(buf + (size_t)i * es, (const char *)p->data + (size_t)src * es, es);
        for (int a = nd.rank - 1; a >= 0; a--) {
            src += st[a];
            if (++idx[a] < nd.dims[a])
                break;
            src -= st[a] * nd.dims[a];
            idx[a] = 0;
        }
    }
    *data = buf;
    *owned = buf;
    return FT_OK;
}

/* One row of d elements. rms: no centring. Two passes (mean, then squared
 * deviations) keep the variance accurate when |mean| >> std. f64 here, f32
 * below. */
#define DEF_NORM(S, T)                                                                                            \
    FT_VCLONES static void norm_row_##S(const T *x, T *y, int64_t d, const T *sc, const T *bi, double eps, int rms, \
                             T *mean_out, T *inv_out)                                                             \
    {                                                                                                             \
        double mean = 0, var = 0;                                                                                 \
        if (!rms) {                                                                                               \
            _Pragma("omp simd reduction(+ : mean) simdlen(8)") for (int64_t i = 0; i < d; i++) mean += (double)x[i]; \
            mean /= (double)d;                                                                                    \
        }                                                                                                         \
        _Pragma("omp simd reduction(+ : var) simdlen(8)") for (int64_t i = 0; i < d; i++)                         \
        {                                                                                                         \
            double v = (double)x[i] - mean;                                                                       \
            var += v * v;                                                                                         \
        }                                                                                                         \
        var /= (double)d;                                                                                         \
        double inv = 1.0 / sqrt(var + eps);                                                                       \
        if (mean_out)                                                                                             \
            *mean_out = (T)mean;                                                                                  \
        if (inv_out)                                                                                              \
            *inv_out = (T)inv;                                                                                    \
        if (sc && bi)                                                                                             \
            _Pragma("omp simd") for (int64_t i = 0; i < d; i++)                                                   \
                y[i] = (T)(((double)x[i] - mean) * inv * (double)sc[i] + (double)bi[i]);                         \
        else if (sc)                                                                                              \
            _Pragma("omp simd") for (int64_t i = 0; i < d; i++)                                                   \
                y[i] = (T)(((double)x[i] - mean) * inv * (double)sc[i]);                                          \
        else if (bi)                                                                                              \
            _Pragma("omp simd") for (int64_t i = 0; i < d; i++)                                                   \
                y[i] = (T)(((double)x[i] - mean) * inv + (double)bi[i]);                                          \
        else                                                                                                      \
            _Pragma("omp simd") for (int64_t i = 0; i < d; i++) y[i] = (T)(((double)x[i] - mean) * inv);          \
    }

DEF_NORM(f64, double)

/* f32 rows: the statistics' sums in blocks of 512 over 4 vectors of 8 f32
 * lanes (a tree, not a chain: the double lanes of an `omp simd reduction`
 * ran at a third of the speed), the blocks' sums in double; the output in
 * f32, as (x - mean) * inv_std * scale + bias. sq: the sum of (x - c)^2,
 * else of x. */
typedef float ln_v8f __attribute__((vector_size(32)));
static inline double ln_sum_f32(const float *x, int64_t n, float c, int sq)
{
    double total = 0;
    int64_t i = 0;
    const ln_v8f cv = (ln_v8f){0} + c;
    while (i + 32 <= n) {
        const int64_t e = i + 512 <= n ? i + 512 : n - (n - i) % 32;
        ln_v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (; i < e; i += 32) {
            ln_v8f v0, v1, v2, v3;
            memcpy(&v0, x + i, sizeof v0);
            memcpy(&v1, x + i + 8, sizeof v1);
            memcpy(&v2, x + i + 16, sizeof v2);
            memcpy(&v3, x + i + 24, sizeof v3);
            if (sq) {
                v0 -= cv, v1 -= cv, v2 -= cv, v3 -= cv;
                a0 += v0 * v0, a1 += v1 * v1, a2 += v2 * v2, a3 += v3 * v3;
            } else {
                a0 += v0, a1 += v1, a2 += v2, a3 += v3;
            }
        }
        a0 = (a0 + a1) + (a2 + a3);
        total += (double)(((a0[0] + a0[4]) + (a0[1] + a0[5])) + ((a0[2] + a0[6]) + (a0[3] + a0[7])));
    }
    for (; i < n; i++) {
        double v = sq ? (double)(x[i] - c) : (double)x[i];
        total += sq ? v * v : v;
    }
    return total;
}

FT_VCLONES static void norm_row_f32(const float *x, float *y, int64_t d, const float *sc, const float *bi,
                                    double eps, int rms, float *mean_out, float *inv_out)
{
    const double mean = rms ? 0 : ln_sum_f32(x, d, 0, 0) / (double)d;
    const float mf = (float)mean;
    const double var = ln_sum_f32(x, d, mf, 1) / (double)d;
    const double inv = 1.0 / sqrt(var + eps);
    const float invf = (float)inv;
    if (mean_out)
        *mean_out = mf;
    if (inv_out)
        *inv_out = invf;
    if (sc && bi)
#pragma omp simd
        for (int64_t i = 0; i < d; i++)
            y[i] = (x[i] - mf) * invf * sc[i] + bi[i];
    else if (sc)
#pragma omp simd
        for (int64_t i = 0; i < d; i++)
            y[i] = (x[i] - mf) * invf * sc[i];
    else if (bi)
#pragma omp simd
        for (int64_t i = 0; i < d; i++)
            y[i] = (x[i] - mf) * invf + bi[i];
    else
#pragma omp simd
        for (int64_t i = 0; i < d; i++)
            y[i] = (x[i] - mf) * invf;
}

static ft_status norm_common(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int rms)
{
    const ft_shape *s = &in[0].shape;
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return bad_dtype(k, n, dt);
    const int axis = n->params.norm.axis;
    double eps = n->params.norm.epsilon;
    int64_t rows = 1, d = 1;
    for (int i = 0; i < axis; i++)
        rows *= s->dims[i];
    for (int i = axis; i < s->rank; i++)
        d *= s->dims[i];
    size_t es = ft_dtype_size(dt);
    char *mo = !rms && n->n_out > 1 ? out[1].data : NULL;
    char *io = !rms && n->n_out > 2 ? out[2].data : NULL;
    if (rows == 0)
        return FT_OK;
    if (d == 0) {
        /* Statistics of an empty row are undefined: NaN, as numpy.mean gives. */
        char *stats[2] = {mo, io};
        for (int i = 0; i < 2; i++)
            for (int64_t r = 0; stats[i] && r < rows; r++) {
                if (dt == FT_F32)
                    ((float *)stats[i])[r] = NAN;
                else
                    ((double *)stats[i])[r] = NAN;
            }
        return FT_OK;
    }
    const void *sc = NULL, *bi = NULL;
    void *own_sc = NULL, *own_bi = NULL;
    ft_status st = norm_param(k, n, n->n_in > 1 ? &in[1] : NULL, s, axis, d, &sc, &own_sc);
    if (!st && !rms)
        st = norm_param(k, n, n->n_in > 2 ? &in[2] : NULL, s, axis, d, &bi, &own_bi);
    if (st) {
        free(own_sc);
        return st;
    }
    int par = (int64_t)ft_numel(s) >= CPU_PAR_MIN && k->threads > 1 && rows > 1;
    const char *x = in[0].data;
    char *y = out[0].data;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t r = 0; r < rows; r++) {
        size_t off = (size_t)(r * d) * es;
        if (dt == FT_F32)
            norm_row_f32((const float *)(x + off), (float *)(y + off), d, sc, bi, eps, rms,
                         mo ? (float *)mo + r : NULL, io ? (float *)io + r : NULL);
        else
            norm_row_f64((const double *)(x + off), (double *)(y + off), d, sc, bi, eps, rms,
                         mo ? (double *)mo + r : NULL, io ? (double *)io + r : NULL);
    }
    free(own_sc);
    free(own_bi);
    return FT_OK;
}

ft_status cpu_layer_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return norm_common(k, n, in, out, 0);
}

ft_status cpu_rms_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return norm_common(k, n, in, out, 1);
}
