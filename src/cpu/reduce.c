/* CPU reductions: reduce_* over any set of axes, argmax/argmin and cumsum.
 *
 * A reduction is planned once per call: size-1 dims are dropped and adjacent
 * dims of the same kind (kept / reduced) merged, which turns most real cases
 * into one of two loops:
 *   - the innermost merged group is reduced ("runs"): every output reduces
 *     contiguous runs of length L (last-axis reductions, reduce-all);
 *   - the innermost group is kept ("columns"): outputs that are adjacent in
 *     memory are reduced together, a vector of accumulators per input row
 *     (leading-axis reductions, reductions over a middle axis).
 * Floats (and ints for l2 / log_sum_exp / log_sum) accumulate in double, summed
 * pairwise along runs; ints accumulate in 64-bit unsigned arithmetic so that
 * sums and products wrap exactly as they would in the dtype. With
 * noop_with_empty_axes=1 and no axes, each output reduces a single element
 * (so reduce_sum_square squares, reduce_l1 takes |x|), as ONNX's reference. */
#include "cpu.h"
#include "../runtime/numeric.h"
#include "../graph/infer_math.h"

#include <math.h>

/* Columns are processed in chunks of at most this many outputs (stack buffers). */
#define CHUNK 2048


/* ---- per-dtype element loops ------------------------------------------------- */

#define G_SUM(v) (v)
#define G_ABS(v) fabs(v)
#define G_SQ(v) ((v) * (v))

/* Pairwise summation as NumPy does it: blocks summed with a few vector
 * partial sums, blocks combined in halves. The error grows with log n. */
#define DEF_PAIRWISE(NAME, T, LD, G)                                                                              \
    static double NAME(const T *x, int64_t n)                                                                     \
    {                                                                                                             \
        if (n <= 256) {                                                                                           \
            double s = 0;                                                                                         \
            _Pragma("omp simd reduction(+ : s) simdlen(8)") for (int64_t i = 0; i < n; i++)                       \
                s += G((double)LD(x[i]));                                                                         \
            return s;                                                                                             \
        }                                                                                                         \
        int64_t h = n / 2;                                                                                        \
        h -= h % 8;                                                                                               \
        return NAME(x, h) + NAME(x + h, n - h);                                                                   \
    }

#define LD_PLAIN(v) (v)
#define LD_BOOL(v) ((v) != 0)

/* Loops for one element type. S: suffix; T: type; LD: load (bool normalises
 * to 0/1); IS_INT: no NaN to look for; UNS: unsigned, so never negative, and
 * max/min compare (int64)(v ^ BIAS): BIAS is 2^63 for u64, which turns its
 * unsigned order into the signed order of int64 (finish_i takes it off
 * again), 0 for every other type. The _Pragma("omp simd") loops are
 * vectorised at -O2 (plain loops of unknown length are not). */
#define DEF_TYPE(S, T, LD, IS_INT, UNS, BIAS)                                                                     \
    DEF_PAIRWISE(pw_sum_##S, T, LD, G_SUM)                                                                        \
    DEF_PAIRWISE(pw_abs_##S, T, LD, G_ABS)                                                                        \
    DEF_PAIRWISE(pw_sq_##S, T, LD, G_SQ)                                                                          \
    /* Reduce a contiguous run of n >= 1 elements in double. */                                                   \
    static double frun_##S(const void *xv, int64_t n, ft_rkind kind, double m)                                    \
    {                                                                                                             \
        const T *x = xv;                                                                                          \
        double r;                                                                                                 \
        int nan = 0;                                                                                              \
        switch (kind) {                                                                                           \
        case K_SUM:                                                                                               \
            return pw_sum_##S(x, n);                                                                              \
        case K_ABS:                                                                                               \
            return pw_abs_##S(x, n);                                                                              \
        case K_SQ:                                                                                                \
            return pw_sq_##S(x, n);                                                                               \
        case K_MAX:                                                                                               \
            r = -INFINITY;                                                                                        \
            _Pragma("omp simd reduction(max : r) reduction(| : nan)") for (int64_t i = 0; i < n; i++)             \
            {                                                                                                     \
                double v = (double)LD(x[i]);                                                                      \
                r = v > r ? v : r;                                                                                \
                nan |= !IS_INT && v != v;                                                                         \
            }                                                                                                     \
            return nan ? NAN : r;                                                                                 \
        case K_MIN:                                                                                               \
            r = INFINITY;                                                                                         \
            _Pragma("omp simd reduction(min : r) reduction(| : nan)") for (int64_t i = 0; i < n; i++)             \
            {                                                                                                     \
                double v = (double)LD(x[i]);                                                                      \
                r = v < r ? v : r;                                                                                \
                nan |= !IS_INT && v != v;                                                                         \
            }                                                                                                     \
            return nan ? NAN : r;                                                                                 \
        case K_PROD:                                                                                              \
            r = 1;                                                                                                \
            for (int64_t i = 0; i < n; i++)                                                                       \
                r *= (double)LD(x[i]);                                                                            \
            return r;                                                                                             \
        case K_EXP:                                                                                               \
            r = 0;                                                                                                \
            for (int64_t i = 0; i < n; i++)                                                                       \
                r += exp((double)LD(x[i]) - m);                                                                   \
            return r;                                                                                             \
        }                                                                                                         \
        return 0;                                                                                                 \
    }                                                                                                             \
    /* The same in wrapping 64-bit integer arithmetic (max/min compare signed). */                                \
    static uint64_t irun_##S(const void *xv, int64_t n, ft_rkind kind)                                            \
    {                                                                                                             \
        const T *x = xv;                                                                                          \
        uint64_t u;                                                                                               \
        int64_t r;                                                                                                \
        switch (kind) {                                                                                           \
        case K_SUM:                                                                                               \
            u = 0;                                                                                                \
            _Pragma("omp simd reduction(+ : u)") for (int64_t i = 0; i < n; i++)                                  \
                u += (uint64_t)(int64_t)LD(x[i]);                                                                 \
            return u;                                                                                             \
        case K_ABS:                                                                                               \
            u = 0;                                                                                                \
            _Pragma("omp simd reduction(+ : u)") for (int64_t i = 0; i < n; i++)                                  \
            {                                                                                                     \
                int64_t v = (int64_t)LD(x[i]);                                                                    \
                u += !(UNS) && v < 0 ? 0 - (uint64_t)v : (uint64_t)v;                                            \
            }                                                                                                     \
            return u;                                                                                             \
        case K_SQ:                                                                                                \
            u = 0;                                                                                                \
            _Pragma("omp simd reduction(+ : u)") for (int64_t i = 0; i < n; i++)                                  \
            {                                                                                                     \
                uint64_t v = (uint64_t)(int64_t)LD(x[i]);                                                         \
                u += v * v;                                                                                       \
            }                                                                                                     \
            return u;                                                                                             \
        case K_PROD:                                                                                              \
            u = 1;                                                                                                \
            for (int64_t i = 0; i < n; i++)                                                                       \
                u *= (uint64_t)(int64_t)LD(x[i]);                                                                 \
            return u;                                                                                             \
        case K_MAX:                                                                                               \
            r = INT64_MIN;                                                                                        \
            _Pragma("omp simd reduction(max : r)") for (int64_t i = 0; i < n; i++)                                \
            {                                                                                                     \
                int64_t v = (int64_t)((uint64_t)LD(x[i]) ^ (BIAS));                                               \
                r = v > r ? v : r;                                                                                \
            }                                                                                                     \
            return (uint64_t)r;                                                                                   \
        case K_MIN:                                                                                               \
            r = INT64_MAX;                                                                                        \
            _Pragma("omp simd reduction(min : r)") for (int64_t i = 0; i < n; i++)                                \
            {                                                                                                     \
                int64_t v = (int64_t)((uint64_t)LD(x[i]) ^ (BIAS));                                               \
                r = v < r ? v : r;                                                                                \
            }                                                                                                     \
            return (uint64_t)r;                                                                                   \
        case K_EXP:                                                                                               \
            break;                                                                                                \
        }                                                                                                         \
        return 0;                                                                                                 \
    }                                                                                                             \
    /* acc[j] (op)= x[j] for one row of a column chunk. */                                                        \
    static void fvec_##S(const void *xv, int64_t n, ft_rkind kind, double *restrict acc, const double *m)         \
    {                                                                                                             \
        const T *restrict x = xv;                                                                                 \
        switch (kind) {                                                                                           \
        case K_SUM:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) acc[j] += (double)LD(x[j]);                      \
            break;                                                                                                \
        case K_ABS:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) acc[j] += fabs((double)LD(x[j]));                \
            break;                                                                                                \
        case K_SQ:                                                                                                \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                double v = (double)LD(x[j]);                                                                      \
                acc[j] += v * v;                                                                                  \
            }                                                                                                     \
            break;                                                                                                \
        case K_MAX:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                double v = (double)LD(x[j]);                                                                      \
                acc[j] = (v > acc[j] || v != v) ? v : acc[j];                                                     \
            }                                                                                                     \
            break;                                                                                                \
        case K_MIN:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                double v = (double)LD(x[j]);                                                                      \
                acc[j] = (v < acc[j] || v != v) ? v : acc[j];                                                     \
            }                                                                                                     \
            break;                                                                                                \
        case K_PROD:                                                                                              \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) acc[j] *= (double)LD(x[j]);                      \
            break;                                                                                                \
        case K_EXP:                                                                                               \
            for (int64_t j = 0; j < n; j++)                                                                       \
                acc[j] += exp((double)LD(x[j]) - m[j]);                                                           \
            break;                                                                                                \
        }                                                                                                         \
    }                                                                                                             \
    static void ivec_##S(const void *xv, int64_t n, ft_rkind kind, uint64_t *restrict acc)                        \
    {                                                                                                             \
        const T *restrict x = xv;                                                                                 \
        switch (kind) {                                                                                           \
        case K_SUM:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) acc[j] += (uint64_t)(int64_t)LD(x[j]);           \
            break;                                                                                                \
        case K_ABS:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                int64_t v = (int64_t)LD(x[j]);                                                                    \
                acc[j] += !(UNS) && v < 0 ? 0 - (uint64_t)v : (uint64_t)v;                                        \
            }                                                                                                     \
            break;                                                                                                \
        case K_SQ:                                                                                                \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                uint64_t v = (uint64_t)(int64_t)LD(x[j]);                                                         \
                acc[j] += v * v;                                                                                  \
            }                                                                                                     \
            break;                                                                                                \
        case K_PROD:                                                                                              \
            for (int64_t j = 0; j < n; j++)                                                                       \
                acc[j] *= (uint64_t)(int64_t)LD(x[j]);                                                            \
            break;                                                                                                \
        case K_MAX:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                int64_t v = (int64_t)((uint64_t)LD(x[j]) ^ (BIAS));                                               \
                acc[j] = v > (int64_t)acc[j] ? (uint64_t)v : acc[j];                                              \
            }                                                                                                     \
            break;                                                                                                \
        case K_MIN:                                                                                               \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++)                                                   \
            {                                                                                                     \
                int64_t v = (int64_t)((uint64_t)LD(x[j]) ^ (BIAS));                                               \
                acc[j] = v < (int64_t)acc[j] ? (uint64_t)v : acc[j];                                              \
            }                                                                                                     \
            break;                                                                                                \
        case K_EXP:                                                                                               \
            break;                                                                                                \
        }                                                                                                         \
    }

#define U64_BIAS ((uint64_t)1 << 63)
DEF_TYPE(f32, float, LD_PLAIN, 0, 0, 0)
DEF_TYPE(f64, double, LD_PLAIN, 0, 0, 0)
DEF_TYPE(i8, int8_t, LD_PLAIN, 1, 0, 0)
DEF_TYPE(i16, int16_t, LD_PLAIN, 1, 0, 0)
DEF_TYPE(i32, int32_t, LD_PLAIN, 1, 0, 0)
DEF_TYPE(i64, int64_t, LD_PLAIN, 1, 0, 0)
DEF_TYPE(u8, uint8_t, LD_PLAIN, 1, 1, 0)
DEF_TYPE(u16, uint16_t, LD_PLAIN, 1, 1, 0)
DEF_TYPE(u32, uint32_t, LD_PLAIN, 1, 1, 0)
DEF_TYPE(u64, uint64_t, LD_PLAIN, 1, 1, U64_BIAS)
DEF_TYPE(b8, uint8_t, LD_BOOL, 1, 0, 0)

static void store_d(ft_dtype dt, void *y, int64_t i, double v)
{
    switch (dt) {
    case FT_F32: ((float *)y)[i] = (float)v; break;
    case FT_F64: ((double *)y)[i] = v; break;
    case FT_I8: ((int8_t *)y)[i] = (int8_t)ft_sat_i64(v, INT8_MIN, INT8_MAX); break;
    case FT_I16: ((int16_t *)y)[i] = (int16_t)ft_sat_i64(v, INT16_MIN, INT16_MAX); break;
    case FT_I32: ((int32_t *)y)[i] = (int32_t)ft_sat_i64(v, INT32_MIN, INT32_MAX); break;
    case FT_I64: ((int64_t *)y)[i] = ft_sat_i64(v, INT64_MIN, INT64_MAX); break;
    case FT_U8: ((uint8_t *)y)[i] = (uint8_t)ft_sat_i64(v, 0, UINT8_MAX); break;
    case FT_U16: ((uint16_t *)y)[i] = (uint16_t)ft_sat_i64(v, 0, UINT16_MAX); break;
    case FT_U32: ((uint32_t *)y)[i] = (uint32_t)ft_sat_i64(v, 0, UINT32_MAX); break;
    case FT_U64: ((uint64_t *)y)[i] = ft_sat_u64(v); break;
    case FT_BOOL: ((uint8_t *)y)[i] = v != 0; break;
    case FT_F16: case FT_BF16: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
}

/* Wrapping store of a 64-bit integer result (two's complement truncation). */
static void store_u(ft_dtype dt, void *y, int64_t i, uint64_t v)
{
    switch (dt) {
    case FT_I8: ((int8_t *)y)[i] = (int8_t)(uint8_t)v; break;
    case FT_I16: ((int16_t *)y)[i] = (int16_t)(uint16_t)v; break;
    case FT_I32: ((int32_t *)y)[i] = (int32_t)(uint32_t)v; break;
    case FT_I64: ((int64_t *)y)[i] = (int64_t)v; break;
    case FT_U8: ((uint8_t *)y)[i] = (uint8_t)v; break;
    case FT_U16: ((uint16_t *)y)[i] = (uint16_t)v; break;
    case FT_U32: ((uint32_t *)y)[i] = (uint32_t)v; break;
    case FT_U64: ((uint64_t *)y)[i] = v; break;
    case FT_BOOL: ((uint8_t *)y)[i] = v != 0; break;
    case FT_F32: case FT_F64: case FT_F16: case FT_BF16: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
}

typedef struct {
    double (*frun)(const void *, int64_t, ft_rkind, double);
    uint64_t (*irun)(const void *, int64_t, ft_rkind);
    void (*fvec)(const void *, int64_t, ft_rkind, double *, const double *);
    void (*ivec)(const void *, int64_t, ft_rkind, uint64_t *);
} rfns;

static const rfns *fns_of(ft_dtype dt)
{
#define F(S) {frun_##S, irun_##S, fvec_##S, ivec_##S}
    static const rfns t[] = {F(f32), F(f64), F(i8), F(i16), F(i32), F(i64), F(u8), F(u16), F(u32), F(u64), F(b8)};
#undef F
    int slot = cpu_dtype_slot(dt);
    return slot < 0 ? NULL : &t[slot];
}

/* ---- planning ------------------------------------------------------------------- */

static int64_t outer_offset(const ft_rplan *p, int64_t o)
{
    int64_t off = 0;
    for (int d = p->nk - 1; d >= 0; d--) {
        off += (o % p->kdim[d]) * p->kstr[d];
        o /= p->kdim[d];
    }
    return off;
}

/* Odometer over the reduced groups (without the run), starting at index q. */
typedef struct {
    int64_t idx[FT_MAX_RANK];
    int64_t off;
} odo;

static void odo_set(const ft_rplan *p, odo *it, int64_t q)
{
    it->off = 0;
    for (int d = p->nr - 1; d >= 0; d--) {
        it->idx[d] = q % p->rdim[d];
        it->off += it->idx[d] * p->rstr[d];
        q /= p->rdim[d];
    }
}

static void odo_next(const ft_rplan *p, odo *it)
{
    for (int d = p->nr - 1; d >= 0; d--) {
        it->off += p->rstr[d];
        if (++it->idx[d] < p->rdim[d])
            return;
        it->off -= p->rstr[d] * p->rdim[d];
        it->idx[d] = 0;
    }
}

static double fcombine(ft_rkind k, double a, double b)
{
    switch (k) {
    case K_MAX: return (a != a || b != b) ? NAN : (a > b ? a : b);
    case K_MIN: return (a != a || b != b) ? NAN : (a < b ? a : b);
    case K_PROD: return a * b;
    case K_SUM: case K_ABS: case K_SQ: case K_EXP: break;
    }
    return a + b;
}

static uint64_t icombine(ft_rkind k, uint64_t a, uint64_t b)
{
    switch (k) {
    case K_MAX: return (int64_t)a > (int64_t)b ? a : b;
    case K_MIN: return (int64_t)a < (int64_t)b ? a : b;
    case K_PROD: return a * b;
    case K_SUM: case K_ABS: case K_SQ: case K_EXP: break;
    }
    return a + b;
}

/* Partial reduction of the reduced positions [t0, t1) of the output at base
 * (runs layout: position t is element t % L of run t / L): fseg in double
 * (f->frun, with m the running maximum of log_sum_exp), iseg in wrapping
 * integers (f->irun). */
#define DEF_SEG(NAME, T, EXTRA, RUN, COMBINE)                                                                      \
    static T NAME(const rfns *f, const char *x, size_t es, const ft_rplan *p, int64_t base, int64_t t0, int64_t t1, \
                  ft_rkind k EXTRA)                                                                                \
    {                                                                                                              \
        if (p->nr == 0)                                                                                            \
            return RUN(x + (size_t)(base + t0) * es, t1 - t0);                                                     \
        odo it;                                                                                                    \
        odo_set(p, &it, t0 / p->L);                                                                                \
        int64_t i = t0 % p->L, t = t0;                                                                             \
        T acc = 0;                                                                                                 \
        int first = 1;                                                                                             \
        while (t < t1) {                                                                                           \
            int64_t len = p->L - i < t1 - t ? p->L - i : t1 - t;                                                   \
            T v = RUN(x + (size_t)(base + it.off + i) * es, len);                                                  \
            acc = first ? v : COMBINE(k, acc, v);                                                                  \
            first = 0;                                                                                             \
            t += len;                                                                                              \
            i = 0;                                                                                                 \
            odo_next(p, &it);                                                                                      \
        }                                                                                                          \
        return acc;                                                                                                \
    }
#define FRUN(P, N) f->frun(P, N, k, m)
#define IRUN(P, N) f->irun(P, N, k)
#define F_EXTRA , double m
#define I_EXTRA
DEF_SEG(fseg, double, F_EXTRA, FRUN, fcombine)
DEF_SEG(iseg, uint64_t, I_EXTRA, IRUN, icombine)
#undef FRUN
#undef IRUN
#undef F_EXTRA
#undef I_EXTRA

/* ---- reduce_* ------------------------------------------------------------------- */

typedef struct {
    const rfns *f;
    ft_dtype dt;
    size_t es;
    ft_rop op;
    int ipath;   /* integer arithmetic (ints and bool except l2 / log_sum_exp / log_sum) */
    const ft_rplan *p;
    const char *x;
    void *y;
} rjob;

/* Finish one output from its accumulated value. */
static void finish_f(const rjob *j, int64_t oi, double v)
{
    if (j->op == R_MEAN)
        v /= (double)j->p->nred;
    else if (j->op == R_L2)
        v = sqrt(v);
    else if (j->op == R_LOGSUM)
        v = log(v);
    store_d(j->dt, j->y, oi, v);
}

static void finish_i(const rjob *j, int64_t oi, uint64_t v)
{
    if (j->op == R_MEAN)
        v = ft_dtype_is_uint(j->dt) ? v / (uint64_t)j->p->nred : (uint64_t)((int64_t)v / j->p->nred);
    else if ((j->op == R_MAX || j->op == R_MIN) && j->dt == FT_U64)
        v ^= U64_BIAS; /* DEF_TYPE */
    store_u(j->dt, j->y, oi, v);
}

/* log(sum(exp(x))) = m + log(sum(exp(x - m))); a NaN or infinite maximum is
 * the result itself (all -inf gives -inf, not NaN). */
static double lse_finish(double m, double s) { return (m != m || isinf(m)) ? m : m + log(s); }

/* Runs layout: one whole output. */
static void runs_output(const rjob *j, int64_t o)
{
    const ft_rplan *p = j->p;
    int64_t base = outer_offset(p, o);
    ft_rkind k = ft_reduce_kind(j->op);
    if (j->ipath) {
        finish_i(j, o, iseg(j->f, j->x, j->es, p, base, 0, p->nred, k));
        return;
    }
    double v = fseg(j->f, j->x, j->es, p, base, 0, p->nred, k, 0);
    if (j->op == R_LSE)
        v = lse_finish(v, (v != v || isinf(v)) ? 0 : fseg(j->f, j->x, j->es, p, base, 0, p->nred, K_EXP, v));
    finish_f(j, o, v);
}

/* One output whose reduced set is large: split it across threads. */
static void runs_output_split(const rjob *j, int64_t o, int threads)
{
    const ft_rplan *p = j->p;
    int64_t base = outer_offset(p, o), nr = p->nred;
    int parts = threads;
    double fpart[parts];
    uint64_t ipart[parts];
    ft_rkind k = ft_reduce_kind(j->op);
#pragma omp parallel for num_threads(threads)
    for (int t = 0; t < parts; t++) {
        int64_t t0 = nr * t / parts, t1 = nr * (t + 1) / parts;
        if (j->ipath)
            ipart[t] = t0 < t1 ? iseg(j->f, j->x, j->es, p, base, t0, t1, k) : (k == K_PROD ? 1 : 0);
        else
            fpart[t] = t0 < t1 ? fseg(j->f, j->x, j->es, p, base, t0, t1, k, 0) : (k == K_PROD ? 1 : 0);
    }
    if (j->ipath) {
        uint64_t v = ipart[0];
        for (int t = 1; t < parts; t++)
            if (nr * (t + 1) / parts > nr * t / parts)
                v = icombine(k, v, ipart[t]);
        finish_i(j, o, v);
        return;
    }
    double v = fpart[0];
    for (int t = 1; t < parts; t++)
        if (nr * (t + 1) / parts > nr * t / parts)
            v = fcombine(k, v, fpart[t]);
    if (j->op == R_LSE && !(v != v || isinf(v))) {
        double m = v;
#pragma omp parallel for num_threads(threads)
        for (int t = 0; t < parts; t++) {
            int64_t t0 = nr * t / parts, t1 = nr * (t + 1) / parts;
            fpart[t] = t0 < t1 ? fseg(j->f, j->x, j->es, p, base, t0, t1, K_EXP, m) : 0;
        }
        double s = 0;
        for (int t = 0; t < parts; t++)
            s += fpart[t];
        v = lse_finish(m, s);
    }
    finish_f(j, o, v);
}

/* Columns layout: outputs o*inner + [c0, c1) together. */
static void cols_chunk(const rjob *j, int64_t o, int64_t c0, int64_t c1)
{
    const ft_rplan *p = j->p;
    int64_t base = outer_offset(p, o) + c0, n = c1 - c0, rows = p->nred;
    ft_rkind k = ft_reduce_kind(j->op);
    odo it;
    if (j->ipath) {
        uint64_t acc[CHUNK];
        for (int64_t c = 0; c < n; c++)
            acc[c] = k == K_PROD ? 1 : k == K_MAX ? (uint64_t)INT64_MIN : k == K_MIN ? (uint64_t)INT64_MAX : 0;
        odo_set(p, &it, 0);
        for (int64_t r = 0; r < rows; r++, odo_next(p, &it))
            j->f->ivec(j->x + (size_t)(base + it.off) * j->es, n, k, acc);
        for (int64_t c = 0; c < n; c++)
            finish_i(j, o * p->inner + c0 + c, acc[c]);
        return;
    }
    double acc[CHUNK], m[CHUNK];
    for (int64_t c = 0; c < n; c++)
        acc[c] = k == K_PROD ? 1 : k == K_MAX ? -INFINITY : k == K_MIN ? INFINITY : 0;
    odo_set(p, &it, 0);
    for (int64_t r = 0; r < rows; r++, odo_next(p, &it))
        j->f->fvec(j->x + (size_t)(base + it.off) * j->es, n, k, acc, NULL);
    if (j->op == R_LSE) {
        /* Non-finite maxima are the result (lse_finish); shifting by 0 there
         * keeps exp() from producing NaN that would be discarded anyway. */
        double mm[CHUNK];
        for (int64_t c = 0; c < n; c++) {
            m[c] = acc[c];
            mm[c] = (m[c] != m[c] || isinf(m[c])) ? 0 : m[c];
            acc[c] = 0;
        }
        odo_set(p, &it, 0);
        for (int64_t r = 0; r < rows; r++, odo_next(p, &it))
            j->f->fvec(j->x + (size_t)(base + it.off) * j->es, n, K_EXP, acc, mm);
        for (int64_t c = 0; c < n; c++)
            acc[c] = lse_finish(m[c], acc[c]);
    }
    for (int64_t c = 0; c < n; c++)
        finish_f(j, o * p->inner + c0 + c, acc[c]);
}

ft_status cpu_reduce(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    ft_dtype dt = in[0].dtype;
    int64_t nout = (int64_t)ft_numel(&out[0].shape);
    if (nout == 0)
        return FT_OK;
    rjob j = {.f = fns_of(dt), .dt = dt, .es = ft_dtype_size(dt), .op = ft_reduce_op(n->op), .x = in[0].data,
              .y = out[0].data};
    if (!j.f)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cpu reduce kernel",
                           ft_dtype_name(dt));
    j.ipath = !ft_dtype_is_float(dt) && j.op != R_L2 && j.op != R_LSE && j.op != R_LOGSUM;
    const int *red = n->params.reduce.red;
    if (ft_numel(s) == 0) {
        /* Outputs exist, so only reduced dims are empty. */
        double v = ft_reduce_identity(j.op, dt);
        for (int64_t i = 0; i < nout; i++)
            store_d(dt, j.y, i, v);
        return FT_OK;
    }
    ft_rplan p;
    ft_reduce_plan(s, red, &p);
    j.p = &p;
    int64_t total = (int64_t)ft_numel(s);
    int par = total >= CPU_PAR_MIN && k->threads > 1;
    if (p.inner == 1) {
        if (par && p.nouter < k->threads && p.nred >= CPU_PAR_MIN) {
            for (int64_t o = 0; o < p.nouter; o++)
                runs_output_split(&j, o, k->threads);
        } else {
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
            for (int64_t o = 0; o < p.nouter; o++)
                runs_output(&j, o);
        }
        return FT_OK;
    }
    int64_t chunk = cpu_col_chunk(p.inner, p.nouter, k->threads, par, CHUNK);
    int64_t nch = (p.inner + chunk - 1) / chunk, items = p.nouter * nch;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t it = 0; it < items; it++) {
        int64_t o = it / nch, c0 = it % nch * chunk, c1 = c0 + chunk < p.inner ? c0 + chunk : p.inner;
        cols_chunk(&j, o, c0, c1);
    }
    return FT_OK;
}

/* ---- argmax / argmin ------------------------------------------------------------ */

/* NaN beats every number (the first NaN, or the last with select_last_index),
 * as numpy.argmax does; ties go to the first (or last) index. */
#define ARG_BETTER(v, b, amax, last, IS_INT)                                                                       \
    ((!(IS_INT) && (b) != (b)) ? ((last) && (v) != (v))                                                            \
     : (!(IS_INT) && (v) != (v)) ? 1                                                                               \
     : (amax) ? ((last) ? (v) >= (b) : (v) > (b))                                                                 \
              : ((last) ? (v) <= (b) : (v) < (b)))

/* Position of the first (or last) element equal to v (or of a NaN): blocks
 * are tested with a vectorised any-match before being searched one by one. */
#define DEF_FIND(S, T, COND)                                                                                      \
    static int64_t S(const T *x, int64_t len, T v, int last)                                                     \
    {                                                                                                             \
        const int64_t B = 64;                                                                                     \
        int64_t nb = (len + B - 1) / B;                                                                           \
        for (int64_t q = 0; q < nb; q++) {                                                                        \
            int64_t b0 = (last ? nb - 1 - q : q) * B, b1 = b0 + B < len ? b0 + B : len;                           \
            int hit = 0;                                                                                          \
            _Pragma("omp simd reduction(| : hit)") for (int64_t i = b0; i < b1; i++) hit |= COND(x[i], v);        \
            if (!hit)                                                                                             \
                continue;                                                                                         \
            for (int64_t s = b0; s < b1; s++) {                                                                   \
                int64_t i = last ? b0 + b1 - 1 - s : s;                                                           \
                if (COND(x[i], v))                                                                                \
                    return i;                                                                                     \
            }                                                                                                     \
        }                                                                                                         \
        return 0;                                                                                                 \
    }
#define EQ(a, b) ((a) == (b))
#define ISNAN(a, b) ((a) != (a))

#define DEF_ARG(S, T, IS_INT, ...)                                                                                \
    DEF_FIND(arg_find_##S, T, EQ)                                                                                 \
    DEF_FIND(arg_find_nan_##S, T, ISNAN)                                                                          \
    static void arg_##S(const void *xv, void *yv, int64_t o, int64_t len, int64_t inner, int64_t c0, int64_t c1,  \
                        int amax, int last)                                                                       \
    {                                                                                                             \
        int64_t *y = (int64_t *)yv;                                                                               \
        const T *x = (const T *)xv + o * len * inner;                                                             \
        if (inner == 1) {                                                                                         \
            /* Two vectorised passes over the row: the extreme value, then     \
             * its first (or last) position. */                                \
            T b = x[0];                                                                                           \
            int nan = 0;                                                                                          \
            if (amax) {                                                                                           \
                _Pragma("omp simd reduction(max : b) reduction(| : nan)") for (int64_t i = 0; i < len; i++)       \
                {                                                                                                 \
                    b = x[i] > b ? x[i] : b;                                                                      \
                    nan |= !(IS_INT) && x[i] != x[i];                                                             \
                }                                                                                                 \
            } else {                                                                                              \
                _Pragma("omp simd reduction(min : b) reduction(| : nan)") for (int64_t i = 0; i < len; i++)       \
                {                                                                                                 \
                    b = x[i] < b ? x[i] : b;                                                                      \
                    nan |= !(IS_INT) && x[i] != x[i];                                                             \
                }                                                                                                 \
            }                                                                                                     \
            y[o] = nan ? arg_find_nan_##S(x, len, b, last) : arg_find_##S(x, len, b, last);                      \
            return;                                                                                               \
        }                                                                                                         \
        T b[CHUNK];                                                                                               \
        int64_t bi[CHUNK], n = c1 - c0;                                                                           \
        for (int64_t c = 0; c < n; c++)                                                                           \
            b[c] = x[c0 + c], bi[c] = 0;                                                                          \
        for (int64_t i = 1; i < len; i++) {                                                                       \
            const T *row = x + i * inner + c0;                                                                    \
            for (int64_t c = 0; c < n; c++)                                                                       \
                if (ARG_BETTER(row[c], b[c], amax, last, IS_INT))                                                 \
                    b[c] = row[c], bi[c] = i;                                                                     \
        }                                                                                                         \
        for (int64_t c = 0; c < n; c++)                                                                           \
            y[o * inner + c0 + c] = bi[c];                                                                        \
    }

CPU_NUM_TYPES(DEF_ARG, 0)

/* One loop of argmax/argmin or cumsum: the outer index o of the axis (of
 * length len, inner elements apart), its columns [c0, c1), and the op's two
 * flags. */
typedef void (*axis_fn)(const void *, void *, int64_t, int64_t, int64_t, int64_t, int64_t, int, int);

/* Runs the loop of in's dtype (fns in cpu_dtype_slot order, numeric dtypes
 * only) over every outer index and chunk of columns, in parallel. */
static ft_status by_axis_chunks(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int axis,
                                const axis_fn *fns, int f1, int f2)
{
    int slot = cpu_dtype_slot(in[0].dtype);
    if (slot < 0 || slot >= CPU_SLOT_BOOL)
        return cpu_bad_dtype(k, n, in[0].dtype);
    axis_fn f = fns[slot];
    const ft_shape *s = &in[0].shape;
    int64_t outer, len, inner;
    ft_reduce_around_axis(s, axis, &outer, &len, &inner);
    if (outer * len * inner == 0)
        return FT_OK; /* argmax/argmin: inference refuses an empty axis (graph/infer_math.c) */
    int par = (int64_t)ft_numel(s) >= CPU_PAR_MIN && k->threads > 1;
    int64_t chunk = cpu_col_chunk(inner, outer, k->threads, par, CHUNK);
    int64_t nch = (inner + chunk - 1) / chunk, items = outer * nch;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t it = 0; it < items; it++) {
        int64_t o = it / nch, c0 = it % nch * chunk, c1 = c0 + chunk < inner ? c0 + chunk : inner;
        f(in[0].data, out[0].data, o, len, inner, c0, c1, f1, f2);
    }
    return FT_OK;
}

ft_status cpu_arg(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    static const axis_fn fns[] = {arg_f32, arg_f64, arg_i8, arg_i16, arg_i32, arg_i64, arg_u8, arg_u16, arg_u32, arg_u64};
    return by_axis_chunks(k, n, in, out, n->params.reduce.axis, fns, n->op == FT_OP_ARGMAX,
                          n->params.reduce.select_last);
}

/* ---- cumsum --------------------------------------------------------------------- */

/* Floats accumulate in double, ints in wrapping 64-bit arithmetic. Each input
 * element is read before its output is written, so in-place use is safe. */
#define DEF_CUMSUM(S, T, ACC)                                                                                     \
    static void cumsum_##S(const void *xv, void *yv, int64_t o, int64_t len, int64_t inner, int64_t c0,         \
                           int64_t c1, int excl, int rev)                                                         \
    {                                                                                                             \
        const T *x = (const T *)xv + o * len * inner + c0;                                                        \
        T *y = (T *)yv + o * len * inner + c0;                                                                    \
        int64_t n = c1 - c0;                                                                                      \
        ACC acc[CHUNK];                                                                                           \
        for (int64_t c = 0; c < n; c++)                                                                           \
            acc[c] = 0;                                                                                           \
        for (int64_t s = 0; s < len; s++) {                                                                       \
            int64_t i = rev ? len - 1 - s : s;                                                                    \
            const T *xr = x + i * inner;                                                                          \
            T *yr = y + i * inner;                                                                                \
            for (int64_t c = 0; c < n; c++) {                                                                     \
                ACC v = (ACC)xr[c];                                                                               \
                if (excl) {                                                                                       \
                    yr[c] = (T)acc[c];                                                                            \
                    acc[c] += v;                                                                                  \
                } else {                                                                                          \
                    acc[c] += v;                                                                                  \
                    yr[c] = (T)acc[c];                                                                            \
                }                                                                                                 \
            }                                                                                                     \
        }                                                                                                         \
    }

DEF_CUMSUM(f32, float, double)
DEF_CUMSUM(f64, double, double)
DEF_CUMSUM(i8, int8_t, uint64_t)
DEF_CUMSUM(i16, int16_t, uint64_t)
DEF_CUMSUM(i32, int32_t, uint64_t)
DEF_CUMSUM(i64, int64_t, uint64_t)
DEF_CUMSUM(u8, uint8_t, uint64_t)
DEF_CUMSUM(u16, uint16_t, uint64_t)
DEF_CUMSUM(u32, uint32_t, uint64_t)
DEF_CUMSUM(u64, uint64_t, uint64_t)

ft_status cpu_cumsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    static const axis_fn fns[] = {cumsum_f32, cumsum_f64, cumsum_i8,  cumsum_i16, cumsum_i32,
                                  cumsum_i64, cumsum_u8,  cumsum_u16, cumsum_u32, cumsum_u64};
    return by_axis_chunks(k, n, in, out, n->params.reduce.axis, fns, n->params.reduce.exclusive,
                          n->params.reduce.reverse);
}
