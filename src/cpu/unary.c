/* CPU kernels of the one-input elementwise ops (cpu_unary) and of cast
 * (cpu_cast). Each op and dtype is a row function over a contiguous range;
 * the ranges are split across OpenMP threads for large tensors. */
#include "cpu.h"
#include "vmath.h"
#include "../runtime/datadep.h"
#include "../runtime/numeric.h"
#include "../graph/dtype_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

/* Attribute values, read once per node and converted per dtype in the rows. */
typedef struct un_params {
    double alpha, beta, gamma, lo, hi, lambd, bias;
    int64_t ilo, ihi; /* clip bounds of integer dtypes, already in range */
} un_params;

typedef void (*un_row)(const un_params *p, void *y, const void *x, int64_t n);

/* ---------------------------- float expressions ---------------------------- */

/* glibc's libmvec has vector versions of these (x86-64, glibc 2.35+). math.h
 * declares them as such only under -ffast-math; declaring them here lets the
 * `omp simd` loops below call the vector versions (within 4 ulp, special
 * values handled) without fast-math's other effects. The attribute is GCC's. */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GLIBC_PREREQ) && !defined(__clang__)
#if __GLIBC_PREREQ(2, 35)
/* (double names in parentheses: tgmath.h defines them as macros) */
#define FT_VEC __attribute__((simd("notinbranch")))
#define FT_VEC_PAIR(name) FT_VEC float name##f(float); FT_VEC double(name)(double);
FT_VEC_PAIR(exp)
FT_VEC_PAIR(expm1)
FT_VEC_PAIR(log)
FT_VEC_PAIR(log1p)
FT_VEC_PAIR(sin)
FT_VEC_PAIR(cos)
FT_VEC_PAIR(tanh)
FT_VEC_PAIR(erf)
FT_VEC_PAIR(erfc)
#endif
#endif

/* The expressions are written once for float and double (tgmath picks the
 * libm function by type); K() makes a constant of x's type so f32 arithmetic
 * stays in float. GCC vectorises a loop with a libm call only when the loop
 * has no conditional, so an op that needs both is split in two loops (calls,
 * then selects) over blocks: the X2 entries below. */
#define K(v) ((__typeof__(x))(v))

/* SEL(c, a, b) is c ? a : b. For float it is done on the bits: with a plain
 * ?: GCC moves the arithmetic of a and b into the branches, and under
 * -ftrapping-math it will not if-convert branches holding arithmetic, so the
 * loop would stay scalar. For double the bit form does not vectorise with
 * SSE2 (64-bit masks from a compare), so it stays a ?: there. */
static inline float sel_f32(int c, float a, float b)
{
    uint32_t ua, ub, m = (uint32_t)0 - (uint32_t)(c != 0);
    memcpy(&ua, &a, sizeof a);
    memcpy(&ub, &b, sizeof b);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, sizeof a);
    return a;
}
static inline double sel_f64(int c, double a, double b) { return c ? a : b; }

#define FLOAT_HELPERS(S, T)                                                                      \
    /* min(max(x, lo), hi) by comparisons, so NaN passes through */                              \
    static inline T clamp_##S(T x, T lo, T hi)                                                   \
    {                                                                                            \
        T t = sel_##S(x < lo, lo, x);                                                            \
        return sel_##S(t > hi, hi, t);                                                           \
    }                                                                                            \
    /* mish: n / d with n = 2t + u^2, d = n + 2 v^2 (see MISH below) */                          \
    static inline T mish_ratio_##S(T u, T v, T t)                                                \
    {                                                                                            \
        T n = 2 * t + u * u;                                                                     \
        return n / (n + 2 * v * v);                                                              \
    }
FLOAT_HELPERS(f32, float)
FLOAT_HELPERS(f64, double)
/* exp, sigmoid, silu, tanh: f32 by src/cpu/vmath.h (inline, vectorised in
 * the row's loop), f64 by libm. */
static inline double exp_f64(double x) { return exp(x); }
static inline double tanh_f64(double x) { return tanh(x); }
static inline double sigmoid_f64(double x) { return 1 / (1 + exp(-x)); }
static inline double silu_f64(double x) { return x / (1 + exp(-x)); }
#define SEL(c, a, b) _Generic((x), float: sel_f32, double: sel_f64)(c, a, b)
#define VEXP(v) _Generic((x), float: ft_vexpf, double: exp_f64)(v)
#define VTANH(v) _Generic((x), float: ft_vtanhf, double: tanh_f64)(v)
#define VSIGMOID(v) _Generic((x), float: ft_vsigmoidf, double: sigmoid_f64)(v)
#define VSILU(v) _Generic((x), float: ft_vsiluf, double: silu_f64)(v)
#define CLAMP(v, l, h) _Generic((x), float: clamp_f32, double: clamp_f64)(v, l, h)
#define MISH_RATIO(u, v, t) _Generic((x), float: mish_ratio_f32, double: mish_ratio_f64)(u, v, t)

/* X1(OP, expression of x); X2(OP, t = expression of x with calls, expression
 * of x and t without calls). Parameters: al, be, ga, gal (= ga*al), lo, hi,
 * la, bi (shrink's lambd and bias), all of x's type. sigmoid as
 * 1/(1+exp(-x)) is accurate in IEEE arithmetic: exp(-x) overflows to inf
 * only where the result is below the smallest normal, giving 0. */
#define FLOAT_UNARY(X1, X2)                                                                      \
    X1(NEG, -x)                                                                                  \
    X1(ABS, fabs(x))                                                                             \
    X1(SIGN, SEL(x > 0, K(1), SEL(x < 0, K(-1), SEL(x == 0, K(0), x))))                          \
    X1(RELU, SEL(x < 0, K(0), x))                                                                \
    X1(SIGMOID, VSIGMOID(x))                                                         \
    X1(TANH, VTANH(x))                                                                            \
    X1(EXP, VEXP(x))                                                                              \
    X1(LOG, log(x))                                                                              \
    X1(SQRT, sqrt(x))                                                                            \
    X1(RSQRT, K(1) / sqrt(x))                                                                    \
    X1(RECIPROCAL, K(1) / x)                                                                     \
    X1(SIN, sin(x))                                                                              \
    X1(COS, cos(x))                                                                              \
    X1(ERF, erf(x))                                                                              \
    X1(FLOOR, floor(x))                                                                          \
    X1(CEIL, ceil(x))                                                                            \
    X1(ROUND, rint(x)) /* default rounding mode: half to even */                                 \
    X2(SOFTPLUS, log1p(exp(-fabs(x))), t + SEL(x > 0, x, K(0)))                                  \
    X1(SOFTSIGN, x / (K(1) + fabs(x)))                                                           \
    X1(SILU, VSILU(x))                                                               \
    /* tanh(log(1+E)) = (E^2+2E) / (E^2+2E+2) with E = exp(x); for x >= 0 the same  \
     * divided through by E^2, in t = exp(-|x|): no overflow, no cancellation */ \
    X2(MISH, VEXP(-fabs(x)), x * MISH_RATIO(SEL(x >= 0, K(1), t), SEL(x >= 0, t, K(1)), t))       \
    X1(HARD_SWISH, x * CLAMP(x + K(3), K(0), K(6)) / K(6))                                      \
    X1(LEAKY_RELU, x * SEL(x < 0, al, K(1)))                                                     \
    X2(ELU, expm1(x), SEL(x < 0, al * t, x))                                                     \
    X2(CELU, expm1(x / al), SEL(x > 0, x, al * t))                                               \
    X2(SELU, expm1(x), SEL(x > 0, ga * x, gal * t))                                              \
    X1(HARD_SIGMOID, CLAMP(al * x + be, K(0), K(1)))                                             \
    X1(THRESHOLDED_RELU, SEL(x > al, x, K(0)))                                                   \
    /* NaN compares false both ways and gives 0, as ONNX's reference */                          \
    X1(SHRINK, SEL(x < -la, x + bi, SEL(x > la, x - bi, K(0))))                                  \
    X1(SWISH, x * VSIGMOID(al * x))                                                         \
    X1(TAN, tan(x))                                                                              \
    X1(ASIN, asin(x))                                                                            \
    X1(ACOS, acos(x))                                                                            \
    X1(ATAN, atan(x))                                                                            \
    X1(SINH, sinh(x))                                                                            \
    X1(COSH, cosh(x))                                                                            \
    X1(ASINH, asinh(x))                                                                          \
    X1(ACOSH, acosh(x))                                                                          \
    X1(ATANH, atanh(x))                                                                          \
    /* erfc keeps the tail accurate for negative x, where 1 + erf(.) cancels */                  \
    X1(GELU, K(0.5) * x * erfc(-x * K(0.70710678118654752440)))                                  \
    X1(CLIP, CLAMP(x, lo, hi))

/* gelu approximate="tanh": 0.5*(1+tanh(u)) == sigmoid(2u), which does not cancel. */
#define GELU_TANH_EXPR x * VSIGMOID(K(1.5957691216057307117) * (x + K(0.044715) * x * x * x))

#define UN_PARAMS(TI)                                                                            \
    const TI al = (TI)p->alpha, be = (TI)p->beta, ga = (TI)p->gamma, gal = (TI)(p->gamma * p->alpha); \
    const TI lo = (TI)p->lo, hi = (TI)p->hi, la = (TI)p->lambd, bi = (TI)p->bias;                \
    (void)al, (void)be, (void)ga, (void)gal, (void)lo, (void)hi, (void)la, (void)bi;

/* The float rows are compiled for AVX-512, AVX2+FMA and the baseline
 * (FT_VCLONES): vmath.h's functions and libmvec's vector versions then run
 * on the widest vectors the CPU has. */
#define UN_ROW_F(NAME, TI, TO, EXPR)                                                             \
    FT_VCLONES static void NAME(const un_params *p, void *yv, const void *xv, int64_t n)                    \
    {                                                                                            \
        const TI *X = xv;                                                                        \
        TO *Y = yv;                                                                              \
        UN_PARAMS(TI)                                                                            \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                      \
        {                                                                                        \
            const TI x = X[i];                                                                   \
            Y[i] = (TO)(EXPR);                                                                   \
        }                                                                                        \
    }

#define UN_BLOCK 256
#define UN_ROW_F2(NAME, T, PRE, POST)                                                            \
    FT_VCLONES static void NAME(const un_params *p, void *yv, const void *xv, int64_t n)                    \
    {                                                                                            \
        const T *X = xv;                                                                         \
        T *Y = yv;                                                                               \
        T tb[UN_BLOCK];                                                                          \
        UN_PARAMS(T)                                                                             \
        for (int64_t s = 0; s < n; s += UN_BLOCK) {                                              \
            const int64_t m = n - s < UN_BLOCK ? n - s : UN_BLOCK;                               \
            const T *Xs = X + s;                                                                 \
            T *Ys = Y + s;                                                                       \
            _Pragma("omp simd") for (int64_t i = 0; i < m; i++)                                  \
            {                                                                                    \
                const T x = Xs[i];                                                               \
                tb[i] = (PRE);                                                                   \
            }                                                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < m; i++)                                  \
            {                                                                                    \
                const T x = Xs[i], t = tb[i];                                                    \
                Ys[i] = (POST);                                                                  \
            }                                                                                    \
        }                                                                                        \
    }

#define GEN_F1(OP, EXPR) UN_ROW_F(OP##_f32, float, float, EXPR) UN_ROW_F(OP##_f64, double, double, EXPR)
#define GEN_F2(OP, PRE, POST) UN_ROW_F2(OP##_f32, float, PRE, POST) UN_ROW_F2(OP##_f64, double, PRE, POST)
FLOAT_UNARY(GEN_F1, GEN_F2)
GEN_F1(GELU_TANH, GELU_TANH_EXPR)
UN_ROW_F(IS_NAN_f32, float, uint8_t, isnan(x) != 0)
UN_ROW_F(IS_NAN_f64, double, uint8_t, isnan(x) != 0)
UN_ROW_F(IS_INF_f32, float, uint8_t, isinf(x) != 0)
UN_ROW_F(IS_INF_f64, double, uint8_t, isinf(x) != 0)

/* Integer rows: negation wraps (like NumPy), so it is done in unsigned. */
#define UN_ROW_I(NAME, T, UT, EXPR)                                                              \
    static void NAME(const un_params *p, void *yv, const void *xv, int64_t n)                    \
    {                                                                                            \
        const T *X = xv;                                                                         \
        T *Y = yv;                                                                               \
        typedef UT ut; /* the unsigned type the expressions wrap in */                           \
        const T lo = (T)p->ilo, hi = (T)p->ihi;                                                  \
        (void)lo, (void)hi, (void)sizeof(ut);                                                    \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                      \
        {                                                                                        \
            const T x = X[i];                                                                    \
            Y[i] = (T)(EXPR);                                                                    \
        }                                                                                        \
    }

/* clip bounds arrive with lo <= hi (cpu_unary lowers lo to hi otherwise,
 * so lo > hi gives hi everywhere like NumPy's clip). */
#define INT_UNARY(X)                                                                             \
    X(NEG, (ut)0 - (ut)x)                                                                        \
    X(ABS, x < 0 ? (ut)0 - (ut)x : (ut)x)                                                        \
    X(SIGN, (x > 0) - (x < 0))                                                                   \
    X(CLIP, x < lo ? lo : (x > hi ? hi : x))                                                     \
    X(BITWISE_NOT, ~x)

#define GEN_I(OP, EXPR)                                                                          \
    UN_ROW_I(OP##_i8, int8_t, uint32_t, EXPR)                                                    \
    UN_ROW_I(OP##_i16, int16_t, uint32_t, EXPR)                                                  \
    UN_ROW_I(OP##_i32, int32_t, uint32_t, EXPR)                                                  \
    UN_ROW_I(OP##_i64, int64_t, uint64_t, EXPR)
INT_UNARY(GEN_I)
/* the unsigned types: clip and bitwise_not only (the clip bounds of u64
 * arrive as the bits of their uint64 values, graph/infer_elementwise.c) */
#define GEN_U(S, T, UT)                                                                          \
    UN_ROW_I(CLIP_##S, T, UT, x < lo ? lo : (x > hi ? hi : x))                                   \
    UN_ROW_I(BITWISE_NOT_##S, T, UT, ~x)
GEN_U(u8, uint8_t, uint32_t)
GEN_U(u16, uint16_t, uint32_t)
GEN_U(u32, uint32_t, uint32_t)
GEN_U(u64, uint64_t, uint64_t)
UN_ROW_I(NOT_bool, uint8_t, uint32_t, x == 0)

#define TAB_F(OP, ...) [FT_OP_##OP] = {[FT_F32] = OP##_f32, [FT_F64] = OP##_f64},
#define TAB_I(OP, EXPR) [FT_OP_##OP] = {[FT_I8] = OP##_i8, [FT_I16] = OP##_i16, [FT_I32] = OP##_i32, [FT_I64] = OP##_i64},

static const un_row float_rows[FT_OP_COUNT][FT_DTYPE_COUNT] = {
    FLOAT_UNARY(TAB_F, TAB_F) TAB_F(IS_NAN, 0) TAB_F(IS_INF, 0)};
static const un_row int_rows[FT_OP_COUNT][FT_DTYPE_COUNT] = {INT_UNARY(TAB_I)};
static const un_row gelu_tanh_rows[FT_DTYPE_COUNT] = {[FT_F32] = GELU_TANH_f32, [FT_F64] = GELU_TANH_f64};

static un_row unary_row(ft_op op, ft_dtype dt)
{
    static const un_row clip_u[FT_DTYPE_COUNT] = {[FT_U8] = CLIP_u8, [FT_U16] = CLIP_u16, [FT_U32] = CLIP_u32,
                                                   [FT_U64] = CLIP_u64};
    static const un_row not_u[FT_DTYPE_COUNT] = {[FT_U8] = BITWISE_NOT_u8, [FT_U16] = BITWISE_NOT_u16,
                                                  [FT_U32] = BITWISE_NOT_u32, [FT_U64] = BITWISE_NOT_u64};
    if (op == FT_OP_CLIP && clip_u[dt])
        return clip_u[dt];
    if (op == FT_OP_NOT && dt == FT_BOOL)
        return NOT_bool;
    if (op == FT_OP_BITWISE_NOT && not_u[dt])
        return not_u[dt];
    return float_rows[op][dt] ? float_rows[op][dt] : int_rows[op][dt];
}

typedef struct un_job {
    un_row fn;
    const un_params *p;
    const char *x;
    char *y;
    size_t isz, osz;
} un_job;

static void un_range(void *ctx, int64_t s, int64_t e)
{
    const un_job *j = ctx;
    j->fn(j->p, j->y + (size_t)s * j->osz, j->x + (size_t)s * j->isz, e - s);
}

ft_status cpu_unary(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_op op = n->op;
    const ft_dtype dt = in[0].dtype;
    const ft_unary_params *up = &n->params.unary;
    un_params p = {.alpha = up->alpha, .beta = up->beta, .gamma = up->gamma, .lo = up->lo, .hi = up->hi,
                   .lambd = up->lambd, .bias = up->bias, .ilo = up->ilo, .ihi = up->ihi};
    un_row fn = op == FT_OP_GELU && up->gelu_tanh ? gelu_tanh_rows[dt] : unary_row(op, dt);
    if (!fn)
        return cpu_no_kernel(k, n, dt);
    const int64_t cnt = (int64_t)ft_numel(&in[0].shape);
    if (cnt == 0)
        return FT_OK;
    un_job j = {fn, &p, in[0].data, out[0].data, ft_dtype_size(dt), ft_dtype_size(out[0].dtype)};
    cpu_run_ranges(k->threads, cnt, un_range, &j);
    return FT_OK;
}

/* ---------------------------------- cast ---------------------------------- */

/* How each source becomes the float that is rounded once more to f16/bf16. */
#define HALF_EXACT(v) ((float)(v))
#define HALF_F64(v) ft_f64_to_f32_odd(v)
#define HALF_I32(v) ft_f64_to_f32_odd((double)(v))
#define HALF_I64(v) ft_i64_to_f32_odd(v)
#define HALF_U64(v) ft_u64_to_f32_odd(v)

/* float -> int: truncate toward zero, NaN -> 0, saturate (NUMERICS in man/ftrun-graph.5). The
 * bounds are powers of two, exact in every float type, and the final cast only
 * sees values in range, so no undefined conversion happens. */
#define TOINT_FLOAT(TS, TD, MIN, MAX, LO, HIEX, v)                                               \
    ((v) != (v) ? (TD)0 : (v) < (TS)(LO) ? (TD)(MIN) : (v) >= (TS)(HIEX) ? (TD)(MAX) : (TD)(v))
/* int -> int wraps (two's complement, as NumPy's astype). */
#define TOINT_WRAP(TS, TD, MIN, MAX, LO, HIEX, v) ((TD)(v))

#define LOAD_PLAIN(x) (x)
#define LOAD_BOOL(x) ((x) != 0)

/* One destination's loop: v, each source value as LOAD reads it (of the
 * source's type), stored as EXPR. */
#define CAST_LOOP(LOAD, TD, EXPR)                                                                \
    {                                                                                            \
        TD *Y = yv;                                                                              \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                      \
        {                                                                                        \
            const __typeof__(*X) v = LOAD(X[i]);                                                 \
            Y[i] = (EXPR);                                                                       \
        }                                                                                        \
    }                                                                                            \
    break;

/* NAME: the cast from source type TS to every dtype; HALF, TOINT and LOAD
 * as above. */
#define CAST_FN(NAME, TS, HALF, TOINT, LOAD)                                                                  \
    static void NAME(void *yv, ft_dtype dst, const void *xv, int64_t n)                                       \
    {                                                                                                         \
        const TS *X = xv;                                                                                     \
        switch (dst) {                                                                                        \
        case FT_F16: CAST_LOOP(LOAD, uint16_t, ft_f32_to_f16(HALF(v)))                                        \
        case FT_BF16: CAST_LOOP(LOAD, uint16_t, ft_f32_to_bf16(HALF(v)))                                      \
        case FT_F32: CAST_LOOP(LOAD, float, (float)v)                                                         \
        case FT_F64: CAST_LOOP(LOAD, double, (double)v)                                                       \
        case FT_I8: CAST_LOOP(LOAD, int8_t, TOINT(TS, int8_t, INT8_MIN, INT8_MAX, -128.0, 128.0, v))          \
        case FT_I16: CAST_LOOP(LOAD, int16_t, TOINT(TS, int16_t, INT16_MIN, INT16_MAX, -32768.0, 32768.0, v)) \
        case FT_I32:                                                                                          \
            CAST_LOOP(LOAD, int32_t, TOINT(TS, int32_t, INT32_MIN, INT32_MAX, -2147483648.0, 2147483648.0, v)) \
        case FT_I64:                                                                                          \
            CAST_LOOP(LOAD, int64_t,                                                                          \
                      TOINT(TS, int64_t, INT64_MIN, INT64_MAX, -9223372036854775808.0, 9223372036854775808.0, v)) \
        case FT_U8: CAST_LOOP(LOAD, uint8_t, TOINT(TS, uint8_t, 0, UINT8_MAX, 0.0, 256.0, v))                 \
        case FT_U16: CAST_LOOP(LOAD, uint16_t, TOINT(TS, uint16_t, 0, UINT16_MAX, 0.0, 65536.0, v))           \
        case FT_U32: CAST_LOOP(LOAD, uint32_t, TOINT(TS, uint32_t, 0, UINT32_MAX, 0.0, 4294967296.0, v))      \
        case FT_U64: CAST_LOOP(LOAD, uint64_t, TOINT(TS, uint64_t, 0, UINT64_MAX, 0.0, 18446744073709551616.0, v)) \
        case FT_BOOL: CAST_LOOP(LOAD, uint8_t, v != 0)                                                        \
        FT_CASE_LOWP: /* cast_lowp */                                                                         \
        case FT_STRING: case FT_DTYPE_COUNT: break;                                                                           \
        }                                                                                                     \
    }

typedef void (*cast_fn)(void *yv, ft_dtype dst, const void *xv, int64_t n);

CAST_FN(cast_f32, float, HALF_EXACT, TOINT_FLOAT, LOAD_PLAIN)
CAST_FN(cast_f64, double, HALF_F64, TOINT_FLOAT, LOAD_PLAIN)
CAST_FN(cast_i8, int8_t, HALF_EXACT, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_i16, int16_t, HALF_EXACT, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_u8, uint8_t, HALF_EXACT, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_u16, uint16_t, HALF_EXACT, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_bool, uint8_t, HALF_EXACT, TOINT_WRAP, LOAD_BOOL)
CAST_FN(cast_i32, int32_t, HALF_I32, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_u32, uint32_t, HALF_I32, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_i64, int64_t, HALF_I64, TOINT_WRAP, LOAD_PLAIN)
CAST_FN(cast_u64, uint64_t, HALF_U64, TOINT_WRAP, LOAD_PLAIN)

/* f16 and bf16 sources widen exactly to float in blocks, then take the f32 path. */
#define HALF_BLOCK 512
static void cast_half(void *yv, ft_dtype dst, const void *xv, int64_t n, int bf)
{
    const uint16_t *X = xv;
    const size_t osz = ft_dtype_size(dst);
    float buf[HALF_BLOCK];
    for (int64_t s = 0; s < n; s += HALF_BLOCK) {
        int64_t m = n - s < HALF_BLOCK ? n - s : HALF_BLOCK;
        for (int64_t i = 0; i < m; i++)
            buf[i] = bf ? ft_bf16_to_f32(X[s + i]) : ft_f16_to_f32(X[s + i]);
        cast_f32((char *)yv + (size_t)s * osz, dst, buf, m);
    }
}
static void cast_f16(void *yv, ft_dtype dst, const void *xv, int64_t n) { cast_half(yv, dst, xv, n, 0); }
static void cast_bf16(void *yv, ft_dtype dst, const void *xv, int64_t n) { cast_half(yv, dst, xv, n, 1); }

static const cast_fn cast_from[FT_DTYPE_COUNT] = {
    [FT_F16] = cast_f16, [FT_BF16] = cast_bf16, [FT_F32] = cast_f32, [FT_F64] = cast_f64, [FT_I8] = cast_i8,
    [FT_I16] = cast_i16, [FT_I32] = cast_i32, [FT_I64] = cast_i64, [FT_U8] = cast_u8, [FT_U16] = cast_u16,
    [FT_U32] = cast_u32, [FT_U64] = cast_u64, [FT_BOOL] = cast_bool,
};

/* The low-precision dtypes (graph/lowp.h). A source widens exactly, in
 * blocks, to f32 (the small floats) or i8/u8 (the 4- and 2-bit integers) and
 * takes that dtype's path; a destination is stored from the source's value as
 * a double (an integer source's own value for the 4- and 2-bit integers, which
 * wrap) by ft_lowp_from_f64, with the node's saturate and round_mode. */
typedef struct lowp_job {
    ft_dtype src, dst;
    int sat, mode;
    const char *x;
    char *y;
    size_t isz, osz;
} lowp_job;

static void cast_lowp_range(void *ctx, int64_t s, int64_t e)
{
    const lowp_job *j = ctx;
    const char *x = j->x + (size_t)s * j->isz;
    char *y = j->y + (size_t)s * j->osz;
    const int64_t n = e - s;
    if (!ft_dtype_is_lowp(j->dst)) { /* a low-precision source */
        const int flt = ft_dtype_in(j->src, FT_DT_LOWF);
        const uint8_t *X = (const uint8_t *)x;
        float fb[HALF_BLOCK];
        uint8_t ib[HALF_BLOCK];
        for (int64_t b = 0; b < n; b += HALF_BLOCK) {
            int64_t m = n - b < HALF_BLOCK ? n - b : HALF_BLOCK;
            for (int64_t i = 0; i < m; i++) {
                if (flt)
                    fb[i] = ft_lowf_to_f32(j->src, X[b + i]);
                else
                    ib[i] = X[b + i];
            }
            void *yb = y + (size_t)b * j->osz;
            if (flt)
                cast_f32(yb, j->dst, fb, m);
            else if (j->src == FT_I4 || j->src == FT_I2)
                cast_i8(yb, j->dst, ib, m);
            else
                cast_u8(yb, j->dst, ib, m);
        }
        return;
    }
    uint8_t *Y = (uint8_t *)y;
    const int int_src = ft_dtype_is_int(j->src) && ft_dtype_in(j->dst, FT_DT_LOWI);
    for (int64_t i = 0; i < n; i++) {
        if (int_src) /* int -> int wraps: the low bits of the integer (a u64's bits too) */
            Y[i] = (uint8_t)ft_lowi_wrap(j->dst, ft_ld_int(x, j->src, i));
        else
            Y[i] = ft_lowp_from_f64(j->dst, ft_ld_f64(x, j->src, i), j->sat, j->mode);
    }
}

static void cast_lowp(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int64_t cnt)
{
    const char *rm = ft_attr(n, "round_mode")->s;
    lowp_job j = {in[0].dtype, out[0].dtype, ft_attr(n, "saturate")->i != 0,
                  !strcmp(rm, "down") ? FT_RM_DOWN : !strcmp(rm, "nearest") ? FT_RM_NEAREST : FT_RM_UP,
                  in[0].data, out[0].data, ft_dtype_size(in[0].dtype), ft_dtype_size(out[0].dtype)};
    cpu_run_ranges(k->threads, cnt, cast_lowp_range, &j);
}

typedef struct cast_job {
    cast_fn fn;
    ft_dtype dst;
    const char *x;
    char *y;
    size_t isz, osz;
} cast_job;

static void cast_range(void *ctx, int64_t s, int64_t e)
{
    const cast_job *j = ctx;
    j->fn(j->y + (size_t)s * j->osz, j->dst, j->x + (size_t)s * j->isz, e - s);
}

ft_status cpu_cast(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_dtype src = in[0].dtype, dst = out[0].dtype;
    const int64_t cnt = (int64_t)ft_numel(&in[0].shape);
    if ((unsigned)src >= FT_DTYPE_COUNT || (unsigned)dst >= FT_DTYPE_COUNT)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "no CPU cast from dtype %d to %d", (int)src, (int)dst);
    if (cnt == 0)
        return FT_OK;
    if (src == FT_STRING || dst == FT_STRING) /* formatting and parsing: runtime/text_cast.c */
        return ft_text_cast(k, n, in, out);
    if (src == dst && src != FT_BOOL) {
        memcpy(out[0].data, in[0].data, (size_t)cnt * ft_dtype_size(src));
        return FT_OK;
    }
    if (ft_dtype_is_lowp(src) || ft_dtype_is_lowp(dst)) {
        cast_lowp(k, n, in, out, cnt);
        return FT_OK;
    }
    cast_job j = {cast_from[src], dst, in[0].data, out[0].data, ft_dtype_size(src), ft_dtype_size(dst)};
    cpu_run_ranges(k->threads, cnt, cast_range, &j);
    return FT_OK;
}
