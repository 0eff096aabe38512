/* CPU per-channel normalisations of [N, C, spatial...] tensors: batch_norm
 * (inference form, and training_mode's batch statistics), instance_norm and
 * group_norm, in f32 and f64.
 *
 * Statistics and the affine step run in double. The work is cut into rows
 * (one channel for batch_norm, one (n, group) for the others: the channels of
 * a group are contiguous) and each row into fixed chunks of CH elements, so a
 * few huge rows still spread over every thread, and the partial sums, hence
 * the results, do not depend on the thread count. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>

#define CH 16384

#define DEF_ROW(S, T)                                                                                             \
    static double sum_##S(const T *x, int64_t n)                                                                  \
    {                                                                                                             \
        double s = 0;                                                                                             \
        _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++) s += (double)x[i];                   \
        return s;                                                                                                 \
    }                                                                                                             \
    static double sqdev_##S(const T *x, int64_t n, double m)                                                      \
    {                                                                                                             \
        double s = 0;                                                                                             \
        _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++)                                      \
        {                                                                                                         \
            double d = (double)x[i] - m;                                                                          \
            s += d * d;                                                                                           \
        }                                                                                                         \
        return s;                                                                                                 \
    }                                                                                                             \
    /* Centred before scaling: x*a + (b - m*a) would cancel when |m| >> std. */                                   \
    static void affine_##S(const T *x, T *y, int64_t n, double m, double a, double b)                             \
    {                                                                                                             \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = (T)(((double)x[i] - m) * a + b);               \
    }

DEF_ROW(f32, float)
DEF_ROW(f64, double)

static double row_sum(ft_dtype dt, const void *x, int64_t off, int64_t n)
{
    return dt == FT_F32 ? sum_f32((const float *)x + off, n) : sum_f64((const double *)x + off, n);
}

static double row_sqdev(ft_dtype dt, const void *x, int64_t off, int64_t n, double m)
{
    return dt == FT_F32 ? sqdev_f32((const float *)x + off, n, m) : sqdev_f64((const double *)x + off, n, m);
}

static void row_affine(ft_dtype dt, const void *x, void *y, int64_t off, int64_t n, double m, double a, double b)
{
    if (dt == FT_F32)
        affine_f32((const float *)x + off, (float *)y + off, n, m, a, b);
    else
        affine_f64((const double *)x + off, (double *)y + off, n, m, a, b);
}

static double load(ft_dtype dt, const void *p, int64_t i)
{
    return dt == FT_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static ft_status bad_dtype(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return cpu_bad_dtype(k, n, dt);
}

static ft_status oom(ft_kctx *k, const ft_node *n, int64_t cnt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for %lld normalisation statistics",
                       (long long)cnt);
}

/* Product of the dims after the channel dim (1 for rank 2). */
static int64_t spatial(const ft_shape *s)
{
    int64_t sp = 1;
    for (int i = 2; i < s->rank; i++)
        sp *= s->dims[i];
    return sp;
}

/* training_mode: the batch's mean and (biased) variance per channel over N
 * and the spatial dims, in double, two passes; the running statistics out[1]
 * and out[2] (when given) are input * momentum + batch * (1 - momentum). An
 * empty batch has NaN statistics. */
static void batch_stats(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, double *bm, double *bv)
{
    ft_dtype dt = in[0].dtype;
    const ft_shape *s = &in[0].shape;
    int64_t N = s->dims[0], C = s->dims[1], sp = spatial(s);
    double cnt = (double)N * (double)sp, mom = n->params.norm.momentum;
    int par = k->threads > 1 && C > 1 && (int64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t c = 0; c < C; c++) {
        double sum = 0, sq = 0;
        for (int64_t b = 0; b < N; b++)
            sum += row_sum(dt, in[0].data, (b * C + c) * sp, sp);
        double m = sum / cnt;
        for (int64_t b = 0; b < N; b++)
            sq += row_sqdev(dt, in[0].data, (b * C + c) * sp, sp, m);
        bm[c] = m, bv[c] = sq / cnt;
    }
    for (int o = 1; o < n->n_out && o < 3; o++)
        for (int64_t c = 0; c < C; c++) {
            double r = load(dt, in[2 + o].data, c) * mom + (o == 1 ? bm[c] : bv[c]) * (1 - mom);
            if (dt == FT_F32)
                ((float *)out[o].data)[c] = (float)r;
            else
                ((double *)out[o].data)[c] = r;
        }
}

ft_status cpu_batch_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return bad_dtype(k, n, dt);
    const ft_shape *s = &in[0].shape;
    int64_t C = s->dims[1], sp = spatial(s), rows = s->dims[0] * C;
    const int train = n->params.norm.training;
    double eps = n->params.norm.epsilon;
    double *a = ft_malloc((size_t)(train ? 3 : 1) * (size_t)(C ? C : 1) * sizeof(double));
    if (!a)
        return oom(k, n, C);
    double *bm = a + C, *bv = a + 2 * C;
    if (train)
        batch_stats(k, n, in, out, bm, bv);
    if (rows == 0 || sp == 0) {
        free(a);
        return FT_OK;
    }
    for (int64_t c = 0; c < C; c++)
        a[c] = load(dt, in[1].data, c) / sqrt((train ? bv[c] : load(dt, in[4].data, c)) + eps);
    int64_t nch = (sp + CH - 1) / CH, items = rows * nch;
    int par = k->threads > 1 && (int64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t it = 0; it < items; it++) {
        int64_t r = it / nch, c0 = it % nch * CH, len = sp - c0 < CH ? sp - c0 : CH, c = r % C;
        row_affine(dt, in[0].data, out[0].data, r * sp + c0, len, train ? bm[c] : load(dt, in[3].data, c), a[c],
                   load(dt, in[2].data, c));
    }
    free(a);
    return FT_OK;
}

/* Rows of len elements, channel c of a row spanning cpg channels of sp
 * elements each: mean and inverse deviation per row, then the per-channel
 * affine step. groups: rows per sample (C / cpg). */
static ft_status group_stats_apply(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int64_t groups)
{
    ft_dtype dt = in[0].dtype;
    const ft_shape *s = &in[0].shape;
    int64_t C = s->dims[1], sp = spatial(s), rows = s->dims[0] * groups;
    if (rows == 0 || sp == 0 || C == 0)
        return FT_OK;
    int64_t cpg = C / groups, len = cpg * sp;
    int64_t nch = (len + CH - 1) / CH, items = rows * nch;
    double eps = n->params.norm.epsilon;
    double *part = ft_malloc((size_t)items * sizeof(double)), *mean = ft_malloc((size_t)rows * 2 * sizeof(double));
    if (!part || !mean) {
        free(part);
        free(mean);
        return oom(k, n, items + 2 * rows);
    }
    double *inv = mean + rows;
    int par = k->threads > 1 && (int64_t)ft_numel(s) >= CPU_PAR_MIN;
    const void *x = in[0].data;
    /* Two passes (mean, then squared deviations) keep the variance accurate
     * when the mean is large against the spread. */
#pragma omp parallel num_threads(k->threads) if (par)
    {
#pragma omp for schedule(static)
        for (int64_t it = 0; it < items; it++) {
            int64_t r = it / nch, c0 = it % nch * CH;
            part[it] = row_sum(dt, x, r * len + c0, len - c0 < CH ? len - c0 : CH);
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            double t = 0;
            for (int64_t c = 0; c < nch; c++)
                t += part[r * nch + c];
            mean[r] = t / (double)len;
        }
#pragma omp for schedule(static)
        for (int64_t it = 0; it < items; it++) {
            int64_t r = it / nch, c0 = it % nch * CH;
            part[it] = row_sqdev(dt, x, r * len + c0, len - c0 < CH ? len - c0 : CH, mean[r]);
        }
#pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            double t = 0;
            for (int64_t c = 0; c < nch; c++)
                t += part[r * nch + c];
            inv[r] = 1.0 / sqrt(t / (double)len + eps);
        }
#pragma omp for schedule(static)
        for (int64_t it = 0; it < items; it++) {
            int64_t r = it / nch, o = it % nch * CH, end = o + CH < len ? o + CH : len;
            /* the chunk may cross channel boundaries inside the group */
            while (o < end) {
                int64_t ch = (r % groups) * cpg + o / sp, stop = (o / sp + 1) * sp;
                if (stop > end)
                    stop = end;
                row_affine(dt, x, out[0].data, r * len + o, stop - o, mean[r], inv[r] * load(dt, in[1].data, ch),
                           load(dt, in[2].data, ch));
                o = stop;
            }
        }
    }
    free(part);
    free(mean);
    return FT_OK;
}

ft_status cpu_instance_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (in[0].dtype != FT_F32 && in[0].dtype != FT_F64)
        return bad_dtype(k, n, in[0].dtype);
    return group_stats_apply(k, n, in, out, in[0].shape.dims[1]);
}

ft_status cpu_group_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (in[0].dtype != FT_F32 && in[0].dtype != FT_F64)
        return bad_dtype(k, n, in[0].dtype);
    int64_t g = n->params.norm.num_groups;
    if (g < 1 || in[0].shape.dims[1] % g != 0)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "num_groups %lld does not divide the %lld channels",
                           (long long)g, (long long)in[0].shape.dims[1]);
    return group_stats_apply(k, n, in, out, g);
}
