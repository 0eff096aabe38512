/* CPU kernels of the geometry ops (cpu.h, geom.c section): eye_like,
 * reverse_sequence, col2im, affine_grid and roi_align (center_crop_pad runs
 * pad's kernel, src/cpu/movement.c). Shapes and attributes were checked by
 * src/graph/infer_geom.c; sequence lengths and batch indices are data and are
 * checked here, all of them, before anything is written.
 *
 * The float kernels compute in the dtype's own precision (f32 for f32, f16
 * and bf16 through f32 by cpu_backend.c; f64 for f64), summing in a fixed
 * order that src/cuda/geom.cu repeats: col2im over the block positions in
 * row-major order, affine_grid as theta[j][0]*x + theta[j][1]*y (+ ...) +
 * theta[j][r], roi_align over the sample points row by row. */
#include "cpu.h"

#include <math.h>
#include <string.h>

static const char *in_name(const ft_kctx *k, const ft_node *n, int i) { return k->g->tensors[n->in[i]].name; }

/* ---- eye_like ------------------------------------------------------------------------- */

ft_status cpu_eye_like(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    const int64_t R = in[0].shape.dims[0], C = in[0].shape.dims[1], kk = n->params.geom.k;
    size_t es = ft_dtype_size(out->dtype);
    _Alignas(8) unsigned char one[8];
    ft_store_f64(one, out->dtype, 0, 1.0);
    if (R * C != 0)
        memset(out->data, 0, (size_t)(R * C) * es);
    /* only the rows the diagonal crosses (k may be any int64) */
    if (kk < C && kk > -R) {
        int64_t r1 = C - kk < R ? C - kk : R;
        for (int64_t r = kk < 0 ? -kk : 0; r < r1; r++)
            memcpy((char *)out->data + (size_t)(r * C + r + kk) * es, one, es);
    }
    return FT_OK;
}

/* ---- reverse_sequence ----------------------------------------------------------------- */

ft_status cpu_reverse_sequence(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    const int b = n->params.geom.batch_axis, t = n->params.geom.time_axis, is64 = in[1].dtype == FT_I64;
    const int64_t T = s->dims[t], nb = s->dims[b];
    for (int64_t i = 0; i < nb; i++) {
        int64_t v = cpu_load_index(in[1].data, is64, i);
        if (v < 0 || v > T)
            return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                               "sequence length %lld at position %lld of sequence_lens '%s' is out of range: time axis "
                               "%d of input '%s' has size %lld (valid lengths are 0..%lld)", (long long)v,
                               (long long)i, in_name(k, n, 1), t, in_name(k, n, 0), (long long)T, (long long)T);
    }
    int64_t total = (int64_t)ft_numel(s), st[FT_MAX_RANK];
    ft_strides(s, st);
    size_t es = ft_dtype_size(in[0].dtype);
    const char *x = in[0].data;
    char *y = out->data;
    for (int64_t p = 0; p < total; p++) {
        int64_t bi = p / st[b] % nb, ti = p / st[t] % T, len = cpu_load_index(in[1].data, is64, bi);
        int64_t src = ti < len ? p + (len - 1 - 2 * ti) * st[t] : p;
        memcpy(y + (size_t)p * es, x + (size_t)src * es, es);
    }
    return FT_OK;
}

/* ---- col2im --------------------------------------------------------------------------- */

/* y[n, c, p] = sum over block positions q (row-major) of x[n, c*K + q, l] where
 * the block l of q covers p: p_i + pb_i - q_i*d_i = l_i*s_i, 0 <= l_i < nb_i. */
#define DEF_COL2IM(T)                                                                                          \
    static void col2im_##T(const ft_geom_params *g, const ft_shape *ys, const T *x, T *y, int threads)       \
    {                                                                                                          \
        const int r = g->r;                                                                                    \
        int64_t K = 1, L = 1, P = 1;                                                                           \
        for (int i = 0; i < r; i++) {                                                                          \
            K *= g->blk[i];                                                                                    \
            L *= g->nb[i];                                                                                     \
            P *= g->img[i];                                                                                    \
        }                                                                                                      \
        const int64_t planes = ys->dims[0] * ys->dims[1];                                                      \
        int par = planes * P * K >= CPU_PAR_MIN && threads > 1;                                                \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                              \
        for (int64_t o = 0; o < planes * P; o++) {                                                            \
            int64_t pl = o / P, pos[FT_MAX_RANK], q[FT_MAX_RANK] = {0}, rem = o % P;                           \
            for (int i = r - 1; i >= 0; i--) {                                                                 \
                pos[i] = rem % g->img[i];                                                                      \
                rem /= g->img[i];                                                                              \
            }                                                                                                  \
            const T *xp = x + pl * K * L;                                                                      \
            T acc = 0;                                                                                         \
            for (int64_t kq = 0; kq < K; kq++) {                                                               \
                int64_t l = 0;                                                                                 \
                int ok = 1;                                                                                    \
                for (int i = 0; i < r && ok; i++) {                                                            \
                    int64_t v = pos[i] + g->pb[i] - q[i] * g->d[i];                                            \
                    ok = v >= 0 && v % g->s[i] == 0 && v / g->s[i] < g->nb[i];                                 \
                    l = l * g->nb[i] + (ok ? v / g->s[i] : 0);                                                 \
                }                                                                                              \
                if (ok)                                                                                        \
                    acc += xp[kq * L + l];                                                                     \
                for (int i = r - 1; i >= 0 && ++q[i] == g->blk[i]; i--)                                        \
                    q[i] = 0;                                                                                  \
            }                                                                                                  \
            y[o] = acc;                                                                                        \
        }                                                                                                      \
    }
DEF_COL2IM(float)
DEF_COL2IM(double)

ft_status cpu_col2im(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (ft_numel(&out->shape) == 0)
        return FT_OK;
    if (in[0].dtype == FT_F64)
        col2im_double(&n->params.geom, &out->shape, in[0].data, out->data, k->threads);
    else
        col2im_float(&n->params.geom, &out->shape, in[0].data, out->data, k->threads);
    return FT_OK;
}

/* ---- affine_grid ---------------------------------------------------------------------- */

/* Coordinate i of a dim of size S in [-1, 1]: the centres of S cells, or the
 * corners of S-1 cells with align_corners (0 where S is 1, as PyTorch). */
#define DEF_GRID(T)                                                                                            \
    static inline T grid_coord_##T(int64_t i, int64_t S, int align)                                           \
    {                                                                                                          \
        if (align)                                                                                             \
            return S > 1 ? (T)-1 + (T)2 * (T)i / (T)(S - 1) : (T)0;                                            \
        return ((T)2 * (T)i + (T)1) / (T)S - (T)1;                                                             \
    }                                                                                                          \
    static void affine_grid_##T(const ft_geom_params *g, const ft_shape *ys, const T *th, T *y)               \
    {                                                                                                          \
        const int r = g->r;                                                                                    \
        int64_t P = 1;                                                                                         \
        for (int i = 0; i < r; i++)                                                                            \
            P *= ys->dims[1 + i];                                                                              \
        for (int64_t o = 0; o < ys->dims[0] * P; o++) {                                                        \
            int64_t b = o / P, rem = o % P;                                                                    \
            T base[3];                                                                                         \
            for (int i = 0; i < r; i++) { /* base[0] is x, the last spatial dim */                             \
                int64_t S = ys->dims[r - i];                                                                   \
                base[i] = grid_coord_##T(rem % S, S, g->align_corners);                                        \
                rem /= S;                                                                                      \
            }                                                                                                  \
            const T *t = th + b * r * (r + 1);                                                                 \
            for (int j = 0; j < r; j++) {                                                                      \
                T acc = t[j * (r + 1)] * base[0];                                                              \
                for (int i = 1; i < r; i++)                                                                    \
                    acc += t[j * (r + 1) + i] * base[i];                                                       \
                y[o * r + j] = acc + t[j * (r + 1) + r];                                                       \
            }                                                                                                  \
        }                                                                                                      \
    }
DEF_GRID(float)
DEF_GRID(double)

ft_status cpu_affine_grid(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    if (in[0].dtype == FT_F64)
        affine_grid_double(&n->params.geom, &out->shape, in[0].data, out->data);
    else
        affine_grid_float(&n->params.geom, &out->shape, in[0].data, out->data);
    return FT_OK;
}

/* ---- roi_align ------------------------------------------------------------------------ */

/* Sample points per bin along a dim when sampling_ratio is 0: ceil(bin size),
 * at most FT_ROI_GRID_MAX (params.h), 0 for an empty or NaN roi. */
static int64_t ft_roi_grid(double q)
{
    if (!(q > 0))
        return 0;
    return q >= FT_ROI_GRID_MAX ? FT_ROI_GRID_MAX : (int64_t)ceil(q);
}

/* ONNX RoiAlign: each output bin averages (mode avg) or takes the largest of
 * (mode max) its sample points; a sample point is bilinear between its four
 * neighbours, and in mode max the value of a point is the largest of the four
 * weighted neighbours (ONNX's reference). */
#define DEF_ROI(T)                                                                                             \
    static void roi_bin_##T(const ft_geom_params *g, int64_t H, int64_t W, const T *plane, const T *roi,      \
                            int64_t ph, int64_t pw, T *out)                                                    \
    {                                                                                                          \
        const T off = g->half_pixel ? (T)0.5 : (T)0, sc = (T)g->scale;                                         \
        T x0 = roi[0] * sc - off, y0 = roi[1] * sc - off, x1 = roi[2] * sc - off, y1 = roi[3] * sc - off;      \
        T rw = x1 - x0, rh = y1 - y0;                                                                          \
        if (!g->half_pixel) {                                                                                  \
            rw = rw > (T)1 ? rw : (T)1;                                                                        \
            rh = rh > (T)1 ? rh : (T)1;                                                                        \
        }                                                                                                      \
        const T bh = rh / (T)g->oh, bw = rw / (T)g->ow;                                                        \
        const int64_t gh = g->sampling > 0 ? g->sampling : ft_roi_grid((double)(rh / (T)g->oh));               \
        const int64_t gw = g->sampling > 0 ? g->sampling : ft_roi_grid((double)(rw / (T)g->ow));               \
        const int64_t cnt = gh * gw > 1 ? gh * gw : 1;                                                         \
        T acc = 0;                                                                                             \
        int first = 1;                                                                                         \
        for (int64_t iy = 0; iy < gh; iy++) {                                                                  \
            T yy = y0 + (T)ph * bh + ((T)iy + (T)0.5) * bh / (T)gh;                                            \
            for (int64_t ix = 0; ix < gw; ix++) {                                                              \
                T xx = x0 + (T)pw * bw + ((T)ix + (T)0.5) * bw / (T)gw;                                        \
                T v = 0;                                                                                       \
                if (yy >= (T)-1 && yy <= (T)H && xx >= (T)-1 && xx <= (T)W) {                                    \
                    T yv = yy <= 0 ? (T)0 : yy, xv = xx <= 0 ? (T)0 : xx;                                      \
                    int64_t yl = (int64_t)yv, xl = (int64_t)xv, yh, xh;                                        \
                    if (yl >= H - 1) { yh = yl = H - 1; yv = (T)yl; } else yh = yl + 1;                        \
                    if (xl >= W - 1) { xh = xl = W - 1; xv = (T)xl; } else xh = xl + 1;                        \
                    T ly = yv - (T)yl, lx = xv - (T)xl, hy = (T)1 - ly, hx = (T)1 - lx;                        \
                    T v1 = hy * hx * plane[yl * W + xl], v2 = hy * lx * plane[yl * W + xh];                    \
                    T v3 = ly * hx * plane[yh * W + xl], v4 = ly * lx * plane[yh * W + xh];                    \
                    if (g->roi_mode == FT_ROI_AVG)                                                             \
                        v = v1 + v2 + v3 + v4;                                                                 \
                    else {                                                                                     \
                        v = v1 > v2 ? v1 : v2;                                                                 \
                        v = v > v3 ? v : v3;                                                                   \
                        v = v > v4 ? v : v4;                                                                   \
                    }                                                                                          \
                }                                                                                              \
                if (g->roi_mode == FT_ROI_AVG)                                                                 \
                    acc += v;                                                                                  \
                else                                                                                           \
                    acc = first || v > acc ? v : acc;                                                          \
                first = 0;                                                                                     \
            }                                                                                                  \
        }                                                                                                      \
        *out = g->roi_mode == FT_ROI_AVG ? acc / (T)cnt : acc;                                                 \
    }
DEF_ROI(float)
DEF_ROI(double)

ft_status cpu_roi_align(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_geom_params *g = &n->params.geom;
    const ft_shape *xs = &in[0].shape;
    const int64_t N = xs->dims[0], C = xs->dims[1], H = xs->dims[2], W = xs->dims[3], R = in[1].shape.dims[0];
    const int is64 = in[2].dtype == FT_I64;
    for (int64_t i = 0; i < R; i++) {
        int64_t v = cpu_load_index(in[2].data, is64, i);
        if (v < 0 || v >= N)
            return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                               "batch index %lld at position %lld of batch_indices '%s' is out of range: input '%s' "
                               "has %lld images (valid indices are 0..%lld)", (long long)v, (long long)i,
                               in_name(k, n, 2), in_name(k, n, 0), (long long)N, (long long)(N - 1));
    }
    const int64_t total = R * C * g->oh * g->ow;
    if (total == 0)
        return FT_OK;
    if (H == 0 || W == 0) { /* nothing to sample: every point lies outside */
        memset(out->data, 0, (size_t)total * ft_dtype_size(out->dtype));
        return FT_OK;
    }
    int par = total >= CPU_PAR_MIN / 16 && k->threads > 1;
    const int f64 = in[0].dtype == FT_F64;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t o = 0; o < total; o++) {
        int64_t pw = o % g->ow, ph = o / g->ow % g->oh, c = o / (g->ow * g->oh) % C, r = o / (g->ow * g->oh * C);
        int64_t b = cpu_load_index(in[2].data, is64, r);
        if (f64)
            roi_bin_double(g, H, W, (const double *)in[0].data + (b * C + c) * H * W, (const double *)in[1].data + r * 4,
                           ph, pw, (double *)out->data + o);
        else
            roi_bin_float(g, H, W, (const float *)in[0].data + (b * C + c) * H * W, (const float *)in[1].data + r * 4,
                          ph, pw, (float *)out->data + o);
    }
    return FT_OK;
}
