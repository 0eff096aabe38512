/* Integer saturation, integer powers and rounding to odd, shared by the CPU
 * kernels (C) and the CUDA kernels (host and device code): the NUMERICS rules
 * of man/ftrun-graph.5 written once. Header only, no state.
 *
 *   int8_t y = (int8_t)ft_sat_i64(v, INT8_MIN, INT8_MAX);   // truncate, NaN -> 0, saturate
 */
#ifndef FT_NUMERIC_H
#define FT_NUMERIC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../graph/params.h" /* FT_RNN_* */

#ifdef __CUDACC__
#define FT_HD static __host__ __device__ __forceinline__
#else
#define FT_HD static inline
#endif

/* Leading zero bits of u (u != 0). */
FT_HD int ft_clz64(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)u);
#else
    return __builtin_clzll(u);
#endif
}

/* uint64 -> float rounded to odd, as ft_f64_to_f32_odd (exact below 2^24). */
FT_HD float ft_u64_to_f32_odd(uint64_t u)
{
    if (u < ((uint64_t)1 << 24))
        return (float)u;
    const int sh = 64 - ft_clz64(u) - 24;
    uint64_t m = u >> sh;
    if (u & (((uint64_t)1 << sh) - 1))
        m |= 1;
    return ldexpf((float)m, sh);
}

/* int64 -> float rounded to odd: the magnitude as ft_u64_to_f32_odd (the
 * rounding is symmetric), then the sign. */
FT_HD float ft_i64_to_f32_odd(int64_t v)
{
    const float f = ft_u64_to_f32_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -f : f;
}

/* A value computed in double stored to an integer type of range [lo, hi]:
 * truncation toward zero, NaN -> 0, saturation (the float -> int cast). */
FT_HD int64_t ft_sat_i64(double v, int64_t lo, int64_t hi)
{
    if (v != v)
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi) /* (double)INT64_MAX is 2^63: the cast below stays in range */
        return hi;
    return (int64_t)v;
}

/* The same to [0, 2^64 - 1] (the float -> u64 cast). */
FT_HD uint64_t ft_sat_u64(double v)
{
    if (v != v || v <= 0)
        return 0;
    if (v >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* a^e with wrap-around, by repeated squaring; a negative exponent gives 0
 * unless the base is 1 (1) or -1 (+-1). */
FT_HD uint64_t ft_ipow_u64(int64_t a, int64_t e)
{
    if (e < 0)
        return a == 1 ? 1 : a == -1 ? ((e & 1) ? (uint64_t)-1 : 1) : 0;
    uint64_t r = 1, b = (uint64_t)a;
    while (e) {
        if (e & 1)
            r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}

/* Integer base, float exponent: an integral exponent takes the integer power,
 * otherwise pow in double, then the float -> int rule saturated to [lo, hi]. */
FT_HD int64_t ft_ipow_f64(int64_t a, double e, int64_t lo, int64_t hi)
{
    if (e == trunc(e) && fabs(e) < 9.2e18)
        return (int64_t)ft_ipow_u64(a, (int64_t)e);
    return ft_sat_i64(pow((double)a, e), lo, hi);
}

/* double -> float rounded to odd (the last bit set when the conversion is
 * inexact): a second rounding to f16/bf16 is then correctly rounded, which two
 * roundings to nearest would not be in rare halfway cases. */
FT_HD float ft_f64_to_f32_odd(double d)
{
    float f = (float)d;
    if ((double)f == d || d != d)
        return f;
    if (fabs((double)f) > fabs(d))
        f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, 4);
    u |= 1;
    memcpy(&f, &u, 4);
    return f;
}

/* The activation functions of lstm, gru and rnn (FT_RNN_* of graph/params.h,
 * ONNX's definitions), in the arithmetic type of the kernel. */
#define FT_RNN_ACT_DEF(NAME, TY, EXP, TANH, LOG1P)                                                                    \
    FT_HD TY NAME(int kind, TY x, TY a, TY b)                                                                         \
    {                                                                                                                 \
        const TY one = 1, zero = 0;                                                                                   \
        switch (kind) {                                                                                               \
        case FT_RNN_SIGMOID: return one / (one + EXP(-x));                                                            \
        case FT_RNN_TANH: return TANH(x);                                                                             \
        case FT_RNN_RELU: return x > zero ? x : zero;                                                                 \
        case FT_RNN_AFFINE: return a * x + b;                                                                         \
        case FT_RNN_LEAKY_RELU: return x >= zero ? x : a * x;                                                         \
        case FT_RNN_THRESHOLDED_RELU: return x > a ? x : zero;                                                        \
        case FT_RNN_SCALED_TANH: return a * TANH(b * x);                                                              \
        case FT_RNN_HARD_SIGMOID: { TY y = a * x + b; return y < zero ? zero : y > one ? one : y; }                   \
        case FT_RNN_ELU: return x >= zero ? x : a * (EXP(x) - one);                                                   \
        case FT_RNN_SOFTSIGN: return x / (one + (x < zero ? -x : x));                                                 \
        case FT_RNN_SOFTPLUS: return LOG1P(EXP(x < zero ? x : -x)) + (x > zero ? x : zero);                           \
        default: return x;                                                                                            \
        }                                                                                                             \
    }
FT_RNN_ACT_DEF(ft_rnn_act_f, float, expf, tanhf, log1pf)
FT_RNN_ACT_DEF(ft_rnn_act_d, double, exp, tanh, log1p)

#endif
