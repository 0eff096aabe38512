/* CPU pooling kernels: max_pool (f32, f64, i8, u8), average_pool, lp_pool and
 * the global pools (f32, f64), channels-first with 1 to 3 spatial dims. The
 * inference in src/graph/infer_pool.c has checked every attribute; the
 * padding is recomputed from the same attributes and the inferred output
 * shape by ft_pool_geom_of (src/graph/infer_pool.c). Sums accumulate in double (the f32 global mean first
 * sums blocks of 64 as a pairwise f32 tree, see gsum_f32). Work is split over the output
 * rows of every N*C plane. resize lives in resize.c. */
#include "cpu.h"
#include "vmath.h"
#include "../graph/infer_pool.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Per output position of one axis: the first input cell of its window inside
 * the input, how many window cells are inside the input, and how many are
 * inside the padded input (the count_include_pad divisor). */
typedef struct axis_tab {
    int64_t *first, *cnt, *cntpad;
} axis_tab;

static void tabs_free(axis_tab *t)
{
    for (int i = 0; i < 3; i++)
        free(t[i].first);
}

static ft_status tabs_make(ft_kctx *kc, const ft_node *n, const ft_pool_geom *g, axis_tab *t)
{
    memset(t, 0, 3 * sizeof *t);
    for (int i = 0; i < 3; i++) {
        int64_t o = g->out[i];
        int64_t *buf = ft_malloc((size_t)o * 3 * sizeof(int64_t));
        if (!buf) {
            tabs_free(t);
            return ft_node_err(kc->err, FT_ERUNTIME, kc->g, n, "out of memory for the pooling tables (%lld entries)",
                               (long long)o);
        }
        t[i].first = buf, t[i].cnt = buf + o, t[i].cntpad = buf + 2 * o;
        int64_t in = g->in[i], k = g->k[i], s = g->s[i], d = g->d[i], pb = g->pb[i], pe = g->pe[i];
        for (int64_t p = 0; p < o; p++) {
            ft_pool_window(g, i, p, &t[i].first[p], &t[i].cnt[p]);
            /* the cells inside the input padded at the end */
            int64_t start = p * s - pb;
            int64_t jpad = start > in + pe - 1 ? 0 : (in + pe - 1 - start) / d + 1;
            t[i].cntpad[p] = jpad < k ? jpad : k;
        }
    }
    return FT_OK;
}

/* The parallel loop over rows: every (plane, output depth, output row). */
#define ROW_SETUP(T)                                                                                                  \
    int64_t p = r / (g->out[0] * g->out[1]), rest_ = r % (g->out[0] * g->out[1]);                                     \
    int64_t od = rest_ / g->out[1], oh = rest_ % g->out[1];                                                           \
    int64_t fd = t[0].first[od], cd = t[0].cnt[od], fh = t[1].first[oh], ch = t[1].cnt[oh];                           \
    const int64_t dd = g->d[0] * g->in[1] * g->in[2], dh = g->d[1] * g->in[2], dw = g->d[2];                          \
    const T *xp = x + p * g->in[0] * g->in[1] * g->in[2] + (fd * g->in[1] + fh) * g->in[2];                           \
    T *yp = y + r * g->out[2];

/* Every cell v (of type T) of the window at xw of the current output: cd x ch x
 * cw cells, dd, dh and dw apart (ROW_SETUP); a, b and c count them. The
 * arguments after v are the body. */
#define FOR_WINDOW(T, v, ...)                                                                                         \
    for (int64_t a = 0; a < cd; a++)                                                                                  \
        for (int64_t b = 0; b < ch; b++) {                                                                            \
            const T *row_ = xw + a * dd + b * dh;                                                                     \
            for (int64_t c = 0; c < cw; c++) {                                                                        \
                T v = row_[c * dw];                                                                                   \
                __VA_ARGS__                                                                                           \
            }                                                                                                         \
        }

/* Max with NaN propagation for floats (a NaN anywhere in the window wins, as
 * in reduce_max); an empty window (all padding) gives -inf or the int minimum.
 * Branch-free: on random data a compare-and-branch mispredicts half the time. */
#define DEF_MAXPOOL(S, T, LOWEST, ISNAN, NANV)                                                                        \
    static void maxpool_##S(const ft_pool_geom *g, const axis_tab *t, const void *xv, void *yv, int threads, int par) \
    {                                                                                                                 \
        const T *x = xv;                                                                                              \
        T *y = yv;                                                                                                    \
        int64_t rows = g->planes * g->out[0] * g->out[1];                                                             \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t r = 0; r < rows; r++) {                                                                          \
            ROW_SETUP(T)                                                                                              \
            for (int64_t ow = 0; ow < g->out[2]; ow++) {                                                              \
                const T *xw = xp + t[2].first[ow];                                                                    \
                int64_t cw = t[2].cnt[ow];                                                                            \
                T m = LOWEST;                                                                                         \
                int nan = 0;                                                                                          \
                FOR_WINDOW(T, v, m = v > m ? v : m; nan |= ISNAN(v);)                                                 \
                yp[ow] = nan ? NANV : m;                                                                              \
            }                                                                                                         \
        }                                                                                                             \
    }

#define FNAN(v) ((v) != (v))
#define INAN(v) 0
DEF_MAXPOOL(f32, float, -INFINITY, FNAN, NAN)
DEF_MAXPOOL(f64, double, -INFINITY, FNAN, NAN)
DEF_MAXPOOL(i8, int8_t, INT8_MIN, INAN, 0)
DEF_MAXPOOL(u8, uint8_t, 0, INAN, 0)

/* max_pool with Indices (ONNX): the value as above and the flat position in
 * the input of the first cell holding it (a strictly greater value moves it;
 * the first NaN holds it for good), counted over N, C and the spatial axes,
 * row-major or, with storage_order 1, column-major over the spatial axes; -1
 * for an empty window. */
#define DEF_MAXPOOL_IDX(S, T, LOWEST, ISNAN, NANV)                                                                    \
    static void maxpool_idx_##S(const ft_pool_geom *g, const axis_tab *t, const void *xv, void *yv, int64_t *yi,      \
                                int cm, int threads, int par)                                                         \
    {                                                                                                                 \
        const T *x = xv;                                                                                              \
        T *y = yv;                                                                                                    \
        int64_t rows = g->planes * g->out[0] * g->out[1];                                                             \
        const int64_t sd = cm ? 1 : g->in[1] * g->in[2], sh = cm ? g->in[0] : g->in[2];                               \
        const int64_t sw = cm ? g->in[0] * g->in[1] : 1;                                                              \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t r = 0; r < rows; r++) {                                                                          \
            ROW_SETUP(T)                                                                                              \
            int64_t *ip = yi + r * g->out[2], base = p * g->in[0] * g->in[1] * g->in[2];                              \
            for (int64_t ow = 0; ow < g->out[2]; ow++) {                                                              \
                const T *xw = xp + t[2].first[ow];                                                                    \
                int64_t cw = t[2].cnt[ow], fw = t[2].first[ow], at = -1;                                              \
                T m = LOWEST;                                                                                         \
                int nan = 0;                                                                                          \
                FOR_WINDOW(T, v, if (!nan && (v > m || ISNAN(v) || at < 0)) {                                         \
                    m = v, nan = ISNAN(v);                                                                            \
                    at = (fd + a * g->d[0]) * sd + (fh + b * g->d[1]) * sh + (fw + c * g->d[2]) * sw;                 \
                })                                                                                                    \
                yp[ow] = nan ? NANV : m;                                                                              \
                ip[ow] = at < 0 ? -1 : base + at;                                                                     \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_MAXPOOL_IDX(f32, float, -INFINITY, FNAN, NAN)
DEF_MAXPOOL_IDX(f64, double, -INFINITY, FNAN, NAN)
DEF_MAXPOOL_IDX(i8, int8_t, INT8_MIN, INAN, 0)
DEF_MAXPOOL_IDX(u8, uint8_t, 0, INAN, 0)

/* max_pool's loops, without and with Indices, for f32, f64, i8 and u8 (slot
 * 0 to 3; max_slot: -1 for the other dtypes) */
static void (*const maxpool_of[])(const ft_pool_geom *, const axis_tab *, const void *, void *, int, int) = {
    maxpool_f32, maxpool_f64, maxpool_i8, maxpool_u8};
static void (*const maxpool_idx_of[])(const ft_pool_geom *, const axis_tab *, const void *, void *, int64_t *, int, int,
                                      int) = {maxpool_idx_f32, maxpool_idx_f64, maxpool_idx_i8, maxpool_idx_u8};
static int max_slot(ft_dtype dt)
{
    return dt == FT_F32 ? 0 : dt == FT_F64 ? 1 : dt == FT_I8 ? 2 : dt == FT_U8 ? 3 : -1;
}

/* ---- 2-D fast paths (max_pool, average_pool) --------------------------------------- */

/* A 2-D pool (depth 1) without dilation whose padded input row fits FAST_W
 * cells: each output row is made in two vector passes, first the column
 * reduction of its ch input rows into a padded row buffer (padding cells
 * -inf for max, 0 for sums, so every window reads k full cells), then the
 * reduction of k neighbours at stride s along that buffer. Kernel widths 2
 * and 3 at strides 1 and 2 have their own loops; other widths share one. */
#define FAST_W 4096
static int pool_fast2d(const ft_pool_geom *g)
{
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->pb[0] == 0 && g->d[1] == 1 && g->d[2] == 1 &&
           g->k[2] <= 16 && g->s[2] * (g->out[2] - 1) + g->k[2] <= FAST_W && g->pb[2] <= FAST_W;
}

/* max keeping NaN: a NaN anywhere wins (as the general kernel) */
#define MAXN(a, v) ((v) > (a) || (v) != (v) ? (v) : (a))
#define HPASS_MAX(a, v) a = MAXN(a, v)
#define HPASS_SUM(a, v) a += v

/* y[o] = reduction of b[o*S .. o*S+K) for o < n, with K and S constants when
 * the caller's switch gives them. */
#define DEF_HPASS(NAME, T, STEP)                                                                                      \
    static inline __attribute__((always_inline)) void NAME(T *restrict y, const T *restrict b, int64_t n, int64_t K, \
                                                           int64_t S)                                                 \
    {                                                                                                                 \
        _Pragma("omp simd") for (int64_t o = 0; o < n; o++)                                                           \
        {                                                                                                             \
            const T *w = b + o * S;                                                                                   \
            T a = w[0];                                                                                               \
            for (int64_t j = 1; j < K; j++)                                                                           \
                STEP(a, w[j]);                                                                                        \
            y[o] = a;                                                                                                 \
        }                                                                                                             \
    }                                                                                                                 \
    static inline __attribute__((always_inline)) void NAME##_any(T *restrict y, const T *restrict b, int64_t n,    \
                                                                 int64_t K, int64_t S)                     \
    {                                                                                                                 \
        if (K == 2 && S == 1)                                                                                         \
            NAME(y, b, n, 2, 1);                                                                                      \
        else if (K == 2 && S == 2)                                                                                    \
            NAME(y, b, n, 2, 2);                                                                                      \
        else if (K == 3 && S == 1)                                                                                    \
            NAME(y, b, n, 3, 1);                                                                                      \
        else if (K == 3 && S == 2)                                                                                    \
            NAME(y, b, n, 3, 2);                                                                                      \
        else                                                                                                          \
            NAME(y, b, n, K, S);                                                                                      \
    }

/* One kernel per dtype and op: B is the row buffer's type (T for max; double
 * for average, so that sums behave as the general kernel's), PAD its padding
 * value, COL(c, v) folds one more input row into the buffer,
 * OUT(yp, b) writes the output row from the buffer. */
#define DEF_FAST2D(NAME, T, B, PAD, COL, OUT)                                                                         \
    FT_VCLONES static void NAME(const ft_pool_geom *g, const axis_tab *t, const T *x, T *y, int incl, int64_t r0,     \
                                int64_t r1)                                                                           \
    {                                                                                                                 \
        const int64_t H_ = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];                                    \
        const int64_t kw = g->k[2], sw = g->s[2], pb = g->pb[2];                                                      \
        const int64_t L = sw * (OW - 1) + kw;       /* buffer cells read */                                           \
        const int64_t wn = W < L - pb ? W : L - pb; /* input columns inside them */                                   \
        B buf[FAST_W], *b = buf, *c = buf + pb, hb[FAST_W];                                                           \
        /* OWV: OW rounded up to 16 outputs where the buffer holds their windows and the tail is                   \
         * over 8 (a tail of 8 runs as one AVX vector, more as scalars: 2x2 pooling of 56-wide rows                 \
         * went 0.54 -> 0.36 ms); the extra outputs read padding and are dropped */                                \
        const int64_t OWV =                                                                                           \
            OW % 16 > 8 && sw * ((OW + 15) / 16 * 16 - 1) + kw <= FAST_W ? (OW + 15) / 16 * 16 : OW;                 \
        const int64_t LV = sw * (OWV - 1) + kw;                                                                       \
        (void)hb, (void)incl;                                                                                         \
        for (int64_t j = 0; j < LV; j++)                                                                              \
            b[j] = PAD;                                                                                               \
        for (int64_t r = r0; r < r1; r++) {                                                                           \
            const int64_t p = r / OH, oh = r % OH;                                                                    \
            const int64_t fh = t[1].first[oh], ch = t[1].cnt[oh];                                                     \
            const T *xp = x + (p * H_ + fh) * W;                                                                      \
            T *yp = y + r * OW;                                                                                       \
            if (ch == 0) {                                                                                            \
                for (int64_t j = 0; j < wn; j++)                                                                      \
                    c[j] = PAD;                                                                                       \
            } else {                                                                                                  \
                _Pragma("omp simd") for (int64_t j = 0; j < wn; j++) c[j] = (B)xp[j];                                 \
                for (int64_t a = 1; a < ch; a++) {                                                                    \
                    const T *xr = xp + a * W;                                                                         \
                    _Pragma("omp simd") for (int64_t j = 0; j < wn; j++) COL(c[j], (B)xr[j]);                         \
                }                                                                                                     \
            }                                                                                                         \
            OUT(yp, b)                                                                                                \
        }                                                                                                             \
    }
#define COL_MAX(c, v) c = MAXN(c, v)
#define COL_SUM(c, v) c += v
DEF_HPASS(hmax_f32, float, HPASS_MAX)
DEF_HPASS(hmax_f64, double, HPASS_MAX)
DEF_HPASS(hsum_f64, double, HPASS_SUM)
#define OUT_MAX_F32(yp, b)                                                                                            \
    if (OWV == OW) {                                                                                                  \
        hmax_f32_any(yp, b, OW, kw, sw);                                                                              \
    } else {                                                                                                          \
        const int64_t o16 = OW / 16 * 16;                                                                             \
        hmax_f32_any(yp, b, o16, kw, sw);                                                                             \
        hmax_f32_any(hb, b + o16 * sw, 16, kw, sw);                                                                   \
        memcpy(yp + o16, hb, (size_t)(OW - o16) * sizeof *yp);                                                        \
    }
#define OUT_MAX_F64(yp, b) hmax_f64_any(yp, b, OW, kw, sw);
/* the divisor from the tables, as the general kernel (a 2-D window has depth 1) */
#define OUT_AVG_T(T, yp, b)                                                                                           \
    hsum_f64_any(hb, b, OW, kw, sw);                                                                                  \
    const double cdh = (double)(incl ? t[1].cntpad[oh] : ch);                                                         \
    for (int64_t ow = 0; ow < OW; ow++)                                                                               \
        yp[ow] = (T)(hb[ow] / (cdh * (double)(incl ? t[2].cntpad[ow] : t[2].cnt[ow])));
#define OUT_AVG_F32(yp, b) OUT_AVG_T(float, yp, b)
#define OUT_AVG_F64(yp, b) OUT_AVG_T(double, yp, b)
DEF_FAST2D(fmax_f32, float, float, -INFINITY, COL_MAX, OUT_MAX_F32)
DEF_FAST2D(fmax_f64, double, double, -INFINITY, COL_MAX, OUT_MAX_F64)
DEF_FAST2D(favg_f32, float, double, 0.0, COL_SUM, OUT_AVG_F32)
DEF_FAST2D(favg_f64, double, double, 0.0, COL_SUM, OUT_AVG_F64)

static void fast2d_rows(const ft_pool_geom *g, const axis_tab *t, const void *x, void *y, int f64, int avg, int incl,
                        int64_t r0, int64_t r1)
{
    if (avg && f64)
        favg_f64(g, t, x, y, incl, r0, r1);
    else if (avg)
        favg_f32(g, t, x, y, incl, r0, r1);
    else if (f64)
        fmax_f64(g, t, x, y, incl, r0, r1);
    else
        fmax_f32(g, t, x, y, incl, r0, r1);
}

static void fast2d(const ft_pool_geom *g, const axis_tab *t, const void *x, void *y, int f64, int avg, int incl,
                   int threads, int par)
{
    const int64_t rows = g->planes * g->out[1];
    if (!par) {
        fast2d_rows(g, t, x, y, f64, avg, incl, 0, rows);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        fast2d_rows(g, t, x, y, f64, avg, incl, rows * id / nt, rows * (id + 1) / nt);
    }
}

/* Window sums: average_pool and lp_pool differ only in the term summed and
 * the result made of the sum.
 * average_pool: mean over the window cells inside the input; the divisor also
 * counts the padding cells (not the ceil_mode overhang) with
 * count_include_pad. A window with no input cell and no padding counted gives
 * 0/0 = NaN.
 * lp_pool: (sum over the window cells inside the input of |x|^p)^(1/p):
 * padding cells count as 0, an empty window gives 0. */
static inline double lp_term(double v, int p) { return p == 1 ? fabs(v) : p == 2 ? v * v : pow(fabs(v), (double)p); }
static inline double lp_root(double s, int p) { return p == 1 ? s : p == 2 ? sqrt(s) : pow(s, 1.0 / (double)p); }
#define AVG_TERM(v, pw) (v)
#define AVG_RESULT(sum, cnt, pw) ((sum) / (cnt))
#define LP_RESULT(sum, cnt, pw) lp_root(sum, pw)

#define DEF_SUMPOOL(NAME, S, T, TERM, RESULT)                                                                         \
    static void NAME##_##S(const ft_pool_geom *g, const axis_tab *t, const T *x, T *y, int incl, int pw, int threads, \
                           int par)                                                                                   \
    {                                                                                                                 \
        int64_t rows = g->planes * g->out[0] * g->out[1];                                                             \
        _Pragma("omp parallel for num_threads(threads) schedule(static) if (par)")                                    \
        for (int64_t r = 0; r < rows; r++) {                                                                          \
            ROW_SETUP(T)                                                                                              \
            int64_t cdh = incl ? t[0].cntpad[od] * t[1].cntpad[oh] : cd * ch;                                         \
            for (int64_t ow = 0; ow < g->out[2]; ow++) {                                                              \
                const T *xw = xp + t[2].first[ow];                                                                    \
                int64_t cw = t[2].cnt[ow];                                                                            \
                double sum = 0;                                                                                       \
                FOR_WINDOW(T, v, sum += TERM((double)v, pw);)                                                         \
                double cnt = (double)cdh * (double)(incl ? t[2].cntpad[ow] : cw);                                     \
                (void)cnt;                                                                                            \
                yp[ow] = (T)(RESULT(sum, cnt, pw));                                                                   \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_SUMPOOL(avgpool, f32, float, AVG_TERM, AVG_RESULT)
DEF_SUMPOOL(avgpool, f64, double, AVG_TERM, AVG_RESULT)
DEF_SUMPOOL(lppool, f32, float, lp_term, LP_RESULT)
DEF_SUMPOOL(lppool, f64, double, lp_term, LP_RESULT)

/* Output cells times window cells, saturating (kernels may be huge). */
static uint64_t pool_work(const ft_pool_geom *g, uint64_t numel)
{
    uint64_t w = numel;
    for (int i = 0; i < 3; i++)
        if (ft_mul_overflow(w, (uint64_t)g->k[i], &w))
            return UINT64_MAX;
    return w;
}

/* avg: 0 max_pool, 1 average_pool, 2 lp_pool */
static ft_status run_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int avg)
{
    ft_pool_geom g;
    axis_tab t[3];
    ft_pool_geom_of(&n->params.pool, &in[0].shape, &out[0].shape, &g);
    uint64_t numel = ft_numel(&out[0].shape);
    if (numel == 0)
        return FT_OK;
    ft_status st = tabs_make(k, n, &g, t);
    if (st)
        return st;
    int par = pool_work(&g, numel) >= CPU_PAR_MIN && k->threads > 1;
    const void *x = in[0].data;
    void *y = out[0].data;
    /* f32 and f64 2-D windows: fast2d's passes (max_pool without Indices, average_pool) */
    int fast = (in[0].dtype == FT_F32 || in[0].dtype == FT_F64) && pool_fast2d(&g);
    if (avg == 2) {
        int pw = n->params.pool.p;
        if (in[0].dtype == FT_F32)
            lppool_f32(&g, t, x, y, 0, pw, k->threads, par);
        else if (in[0].dtype == FT_F64)
            lppool_f64(&g, t, x, y, 0, pw, k->threads, par);
        else
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "lp_pool: no cpu kernel for %s",
                             ft_dtype_name(in[0].dtype));
    } else if (!avg && (n->n_out > 1 || !fast)) {
        int slot = max_slot(in[0].dtype);
        if (slot < 0)
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "max_pool: no cpu kernel for %s",
                             ft_dtype_name(in[0].dtype));
        else if (n->n_out > 1)
            maxpool_idx_of[slot](&g, t, x, y, out[1].data, n->params.pool.storage_order, k->threads, par);
        else
            maxpool_of[slot](&g, t, x, y, k->threads, par);
    } else if (fast) {
        fast2d(&g, t, x, y, in[0].dtype == FT_F64, avg, n->params.pool.count_include_pad, k->threads, par);
    } else {
        int incl = n->params.pool.count_include_pad;
        if (in[0].dtype == FT_F32)
            avgpool_f32(&g, t, x, y, incl, 0, k->threads, par);
        else if (in[0].dtype == FT_F64)
            avgpool_f64(&g, t, x, y, incl, 0, k->threads, par);
        else
            st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "average_pool: no cpu kernel for %s",
                             ft_dtype_name(in[0].dtype));
    }
    tabs_free(t);
    return st;
}

ft_status cpu_max_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_status bst;
    if (cpu_max_pool_blocked(k, n, in, out, &bst))
        return bst;
    return run_pool(k, n, in, out, 0);
}

ft_status cpu_average_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return run_pool(k, n, in, out, 1);
}

ft_status cpu_lp_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    return run_pool(k, n, in, out, 2);
}

/* ---- global pools ----------------------------------------------------------------- */

/* The f32 mean's sum, in the cache's time (one accumulator chain, or a
 * conversion to double per element, ran at a third of it): blocks of 64
 * elements are summed in f32 as a pairwise tree of 8 vectors of 8 lanes
 * (3 roundings per lane, none for a constant plane: every level doubles),
 * then each lane goes into a double accumulator; the tail < 64 is summed
 * the same way in f32 by pairs of 8-lane vectors, the last < 8 in double. */
typedef float gv8f __attribute__((vector_size(32)));
typedef float gv4f __attribute__((vector_size(16)));
typedef double gv4d __attribute__((vector_size(32)));
#define GLOAD8(p) ({ gv8f v_; memcpy(&v_, (p), sizeof v_); v_; })
#define GWIDEN(v, d0, d1)                                                                                             \
    do {                                                                                                              \
        gv4f lo_, hi_;                                                                                                \
        memcpy(&lo_, &(v), sizeof lo_);                                                                               \
        memcpy(&hi_, (const char *)&(v) + sizeof lo_, sizeof hi_);                                                    \
        d0 += __builtin_convertvector(lo_, gv4d), d1 += __builtin_convertvector(hi_, gv4d);                           \
    } while (0)

FT_VCLONES static double gsum_f32(const float *x, int64_t len)
{
    gv4d d0 = {0}, d1 = {0}, d2 = {0}, d3 = {0};
    int64_t i = 0;
    for (; i + 64 <= len; i += 64) {
        const float *p = x + i;
        gv8f s = ((GLOAD8(p) + GLOAD8(p + 8)) + (GLOAD8(p + 16) + GLOAD8(p + 24))) +
                 ((GLOAD8(p + 32) + GLOAD8(p + 40)) + (GLOAD8(p + 48) + GLOAD8(p + 56)));
        if (i & 64)
            GWIDEN(s, d2, d3);
        else
            GWIDEN(s, d0, d1);
    }
    if (i + 8 <= len) {
        gv8f t = {0};
        for (; i + 16 <= len; i += 16)
            t += GLOAD8(x + i) + GLOAD8(x + i + 8);
        if (i + 8 <= len)
            t += GLOAD8(x + i), i += 8;
        GWIDEN(t, d2, d3);
    }
    gv4d d = (d0 + d1) + (d2 + d3);
    double total = (d[0] + d[1]) + (d[2] + d[3]);
    for (; i < len; i++)
        total += (double)x[i];
    return total;
}

/* The f64 mean's sum, in blocks so that the rounding error grows with the
 * block count, not with the plane size; within a block, in vector lanes (omp
 * simd). */
#define GBLOCK 256
FT_VCLONES static double gsum_f64(const double *x, int64_t len)
{
    double total = 0;
    for (int64_t b = 0; b < len; b += GBLOCK) {
        int64_t e = b + GBLOCK < len ? b + GBLOCK : len;
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = b; i < e; i++)
            s += x[i];
        total += s;
    }
    return total;
}

/* Planes [p0, p1); compiled for AVX-512, AVX2 and the baseline (the caller
 * holds the parallel region, so the clones are what runs in it). */
#define DEF_GLOBAL(S, T)                                                                                              \
    FT_VCLONES static void global_rows_##S(const T *x, T *y, int64_t p0, int64_t p1, int64_t len, int max)           \
    {                                                                                                                 \
        for (int64_t p = p0; p < p1; p++) {                                                                           \
            const T *xp = x + p * len;                                                                                \
            if (max) {                                                                                                \
                T m = -INFINITY;                                                                                      \
                int nan = 0;                                                                                          \
                for (int64_t i = 0; i < len; i++) {                                                                   \
                    m = xp[i] > m ? xp[i] : m;                                                                        \
                    nan |= xp[i] != xp[i];                                                                            \
                }                                                                                                     \
                y[p] = nan ? (T)NAN : m;                                                                              \
            } else {                                                                                                  \
                y[p] = (T)(gsum_##S(xp, len) / (double)len);                                                          \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
    static void global_##S(const T *x, T *y, int64_t planes, int64_t len, int max, int threads, int par)              \
    {                                                                                                                 \
        if (!par) {                                                                                                   \
            global_rows_##S(x, y, 0, planes, len, max);                                                               \
            return;                                                                                                   \
        }                                                                                                             \
        _Pragma("omp parallel num_threads(threads)")                                                                  \
        {                                                                                                             \
            int nt = omp_get_num_threads(), id = omp_get_thread_num();                                                \
            global_rows_##S(x, y, planes * id / nt, planes * (id + 1) / nt, len, max);                                \
        }                                                                                                             \
    }

DEF_GLOBAL(f32, float)
DEF_GLOBAL(f64, double)

ft_status cpu_global_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_status bst;
    if (cpu_global_pool_blocked(k, n, in, out, &bst))
        return bst;
    const ft_shape *s = &in[0].shape;
    int64_t planes = s->dims[0] * s->dims[1], len = 1;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int max = n->op == FT_OP_GLOBAL_MAX_POOL;
    int par = (uint64_t)planes * (uint64_t)len >= CPU_PAR_MIN && planes > 1 && k->threads > 1;
    if (planes == 0)
        return FT_OK;
    if (in[0].dtype == FT_F32)
        global_f32(in[0].data, out[0].data, planes, len, max, k->threads, par);
    else if (in[0].dtype == FT_F64)
        global_f64(in[0].data, out[0].data, planes, len, max, k->threads, par);
    else
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "%s: no cpu kernel for %s", ft_op_name(n->op),
                           ft_dtype_name(in[0].dtype));
    return FT_OK;
}

/* ---- max_unpool -------------------------------------------------------------------- */

/* The output is zeros but for every x[e] written at the position index[e]
 * counts in the unpooled tensor [N, C, unpooled...] (the leading corner of
 * an output_shape that is larger), in the order of x (the last of equal
 * indices wins). An index outside the unpooled tensor fails the run. */
ft_status cpu_max_unpool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_pool_params *pp = &n->params.pool;
    const ft_shape *os = &out[0].shape;
    const int64_t *idx = in[1].data;
    int64_t total = (int64_t)ft_numel(&in[0].shape), uplane = 1, oplane = 1;
    for (int i = 0; i < pp->sp; i++)
        uplane *= pp->unpooled[i], oplane *= os->dims[2 + i];
    int64_t limit = os->dims[0] * os->dims[1] * uplane;
    size_t es = ft_dtype_size(out[0].dtype);
    memset(out[0].data, 0, (size_t)ft_numel(os) * es);
    for (int64_t e = 0; e < total; e++) {
        int64_t v = idx[e];
        if (v < 0 || v >= limit)
            return ft_node_err(k->err, FT_EGRAPH, k->g, n, "index %lld at flat position %lld of indices '%s' is out of "
                               "range: the unpooled tensor has %lld elements (valid indices are 0..%lld)", (long long)v,
                               (long long)e, k->g->tensors[n->in[1]].name, (long long)limit, (long long)(limit - 1));
        int64_t plane = v / uplane, rem = v % uplane, at = 0, mul = 1;
        for (int i = pp->sp - 1; i >= 0; i--) {
            at += rem % pp->unpooled[i] * mul;
            rem /= pp->unpooled[i], mul *= os->dims[2 + i];
        }
        memcpy((char *)out[0].data + (size_t)(plane * oplane + at) * es, (const char *)in[0].data + (size_t)e * es, es);
    }
    return FT_OK;
}
