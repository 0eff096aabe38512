/* The low-precision dtypes (dtype.h, FT_DT_LOWP): their values and ONNX's
 * conversion rules (Cast-25, QuantizeLinear-25; man/ftrun-graph.5, NUMERICS),
 * written once as static inline functions that compile as C and, under nvcc,
 * as host-and-device functions. Pure functions, no state.
 *
 * In memory every one of these dtypes takes one byte per element:
 *   f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0  the 8-bit pattern
 *   f4e2m1                                            the 4-bit pattern in the low bits
 *   i4, i2 (u4, u2)                                   the value, as an int8 (uint8)
 * so data movement copies bytes; ONNX files pack the 4-bit types two to a
 * byte and the 2-bit ones four to a byte, low bits first (onnx_tensor.c).
 *
 *   float x = ft_lowf_to_f32(FT_F8E4M3FN, 0x7e);                  // 448
 *   uint8_t b = ft_lowp_from_f64(FT_F8E5M2, 1e6, 1, FT_RM_UP);    // 0x7b (57344, saturated)
 */
#ifndef FT_LOWP_H
#define FT_LOWP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"

#ifdef __CUDACC__
#define FT_LP_HD static __host__ __device__ inline
#else
#define FT_LP_HD static inline
#endif

/* Cast's round_mode, for f8e8m0 only: up (away from zero, ONNX's default),
 * down (toward zero), nearest (ties away from zero). */
enum { FT_RM_UP = 0, FT_RM_DOWN = 1, FT_RM_NEAREST = 2 };

/* Bits per element in ONNX's packed form: 8, 4 or 2. */
FT_LP_HD int ft_lowp_bits(int dt)
{
    return dt == FT_F4E2M1 || dt == FT_I4 || dt == FT_U4 ? 4 : dt == FT_I2 || dt == FT_U2 ? 2 : 8;
}

/* The small float formats: mantissa bits, exponent bias, largest finite
 * value, its code, and how NaN and infinity are spelt. */
enum { FT_LP_FN, FT_LP_FNUZ, FT_LP_IEEE, FT_LP_NONAN };
typedef struct {
    int m, bias, kind, nbits;
    double max;
    uint8_t maxcode;
} ft_lowf_fmt;

FT_LP_HD ft_lowf_fmt ft_lowf_format(int dt)
{
    ft_lowf_fmt f;
    switch (dt) {
    case FT_F8E4M3FN: f.m = 3, f.bias = 7, f.kind = FT_LP_FN, f.nbits = 8, f.max = 448, f.maxcode = 0x7e; break;
    case FT_F8E4M3FNUZ: f.m = 3, f.bias = 8, f.kind = FT_LP_FNUZ, f.nbits = 8, f.max = 240, f.maxcode = 0x7f; break;
    case FT_F8E5M2: f.m = 2, f.bias = 15, f.kind = FT_LP_IEEE, f.nbits = 8, f.max = 57344, f.maxcode = 0x7b; break;
    case FT_F8E5M2FNUZ: f.m = 2, f.bias = 16, f.kind = FT_LP_FNUZ, f.nbits = 8, f.max = 57344, f.maxcode = 0x7f; break;
    default: /* FT_F4E2M1 */ f.m = 1, f.bias = 1, f.kind = FT_LP_NONAN, f.nbits = 4, f.max = 6, f.maxcode = 0x7; break;
    }
    return f;
}

FT_LP_HD float ft_lp_f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The value of code b of a small float dtype (exact in f32). */
FT_LP_HD float ft_lowf_to_f32(int dt, uint8_t b)
{
    if (dt == FT_F8E8M0) /* 2^(b - 127); 0xff is NaN */
        return b == 0xff ? ft_lp_f32_bits(0x7fc00000u) : ldexpf(1.0f, (int)b - 127);
    const ft_lowf_fmt f = ft_lowf_format(dt);
    const int sbit = 1 << (f.nbits - 1);
    b &= (uint8_t)((1 << f.nbits) - 1);
    const uint32_t neg = (b & sbit) ? 0x80000000u : 0;
    const int mag = b & (sbit - 1), e = mag >> f.m, man = mag & ((1 << f.m) - 1);
    if ((f.kind == FT_LP_FN && mag == 0x7f) || (f.kind == FT_LP_FNUZ && b == 0x80) ||
        (f.kind == FT_LP_IEEE && e == 31 && man))
        return ft_lp_f32_bits(neg | 0x7fc00000u);
    if (f.kind == FT_LP_IEEE && e == 31)
        return ft_lp_f32_bits(neg | 0x7f800000u);
    const float v = e == 0 ? ldexpf((float)man, 1 - f.bias - f.m) : ldexpf((float)((1 << f.m) | man), e - f.bias - f.m);
    return neg ? -v : v;
}

/* v rounded to a small float dtype (not f8e8m0): to nearest, ties to even;
 * saturate (ONNX's attribute) sends infinities and values beyond the largest
 * finite one to +-max, else to infinity (f8e5m2) or NaN (the others).
 * f4e2m1 has neither: it always saturates, and NaN gives 0x8 (ONNX's test
 * data and reference; its float4 note says 6). The FNUZ types have no -0. */
FT_LP_HD uint8_t ft_lowf_from_f64(int dt, double v, int sat)
{
    const ft_lowf_fmt f = ft_lowf_format(dt);
    const uint8_t s = signbit(v) ? (uint8_t)(1 << (f.nbits - 1)) : 0;
    uint8_t nan = f.kind == FT_LP_FN ? (uint8_t)(s | 0x7f) : f.kind == FT_LP_FNUZ ? 0x80 : f.kind == FT_LP_IEEE ? (uint8_t)(s | 0x7e) : 0x8;
    if (v != v)
        return nan;
    const uint8_t over = sat || f.kind == FT_LP_NONAN ? (uint8_t)(s | f.maxcode) : f.kind == FT_LP_IEEE ? (uint8_t)(s | 0x7c) : nan;
    double a = fabs(v);
    if (isinf(a))
        return over;
    const int emin = 1 - f.bias; /* exponent of the smallest normal */
    int e;
    frexp(a, &e); /* a = g * 2^e, g in [0.5, 1) */
    const int qe = (e - 1 < emin ? emin : e - 1) - f.m; /* exponent of one unit in the last place */
    const double r = ldexp(rint(ldexp(a, -qe)), qe);
    if (r > f.max)
        return over;
    if (r == 0)
        return f.kind == FT_LP_FNUZ ? 0 : s;
    frexp(r, &e);
    if (e - 1 < emin)
        return (uint8_t)(s | (int)ldexp(r, f.m - emin));
    return (uint8_t)(s | (e - 1 + f.bias) << f.m | ((int)ldexp(r, f.m - (e - 1)) - (1 << f.m)));
}

/* v to f8e8m0 (2^k, k in [-127, 127]), rounded by mode: up to the smallest
 * power of two >= |v| (zero and anything below 2^-127 give 2^-127), down to
 * the largest <= |v| (anything above 2^127 gives 2^127), nearest (the linear
 * midpoint 1.5 * 2^k goes up). The sign is dropped (ONNX leaves negative
 * values unspecified). A rounded value out of range (up: above 2^127; down:
 * below 2^-127; nearest: from 1.5 * 2^127, below 0.75 * 2^-127) and infinity
 * give 2^127 / 2^-127 with saturate, else NaN (0xff), as Cast-25's table
 * says; NaN gives NaN. */
FT_LP_HD uint8_t ft_e8m0_from_f64(double v, int sat, int mode)
{
    if (v != v)
        return 0xff;
    const double a = fabs(v);
    if (isinf(a))
        return sat ? 0xfe : 0xff;
    if (a == 0)
        return sat || mode == FT_RM_UP ? 0x00 : 0xff;
    int e;
    const double g = 2 * frexp(a, &e); /* a = g * 2^(e - 1), g in [1, 2) */
    e -= 1;
    if ((mode == FT_RM_UP && g > 1) || (mode == FT_RM_NEAREST && g >= 1.5))
        e++;
    if (e > 127)
        return sat || mode == FT_RM_DOWN ? 0xfe : 0xff;
    if (e < -127)
        return sat || mode == FT_RM_UP ? 0x00 : 0xff;
    return (uint8_t)(e + 127);
}

/* An integer wrapped to a 4- or 2-bit integer dtype (two's complement),
 * as it is held in memory: i4 in [-8, 7], u4 in [0, 15], i2 in [-2, 1], u2 in [0, 3]. */
FT_LP_HD int ft_lowi_wrap(int dt, int64_t v)
{
    switch (dt) {
    case FT_I4: return (int)((v & 0xf) ^ 0x8) - 0x8;
    case FT_U4: return (int)(v & 0xf);
    case FT_I2: return (int)((v & 0x3) ^ 0x2) - 0x2;
    default: return (int)(v & 0x3); /* FT_U2 */
    }
}

/* The range of a 4- or 2-bit integer dtype (quantize_linear saturates to it). */
FT_LP_HD void ft_lowi_range(int dt, int64_t *lo, int64_t *hi)
{
    *lo = dt == FT_I4 ? -8 : dt == FT_I2 ? -2 : 0;
    *hi = dt == FT_I4 ? 7 : dt == FT_U4 ? 15 : dt == FT_I2 ? 1 : 3;
}

/* Element code b of any low-precision dtype as a double (the integers' bytes
 * hold their value). */
FT_LP_HD double ft_lowp_to_f64(int dt, uint8_t b)
{
    switch (dt) {
    case FT_I4: case FT_I2: return (double)(int8_t)b;
    case FT_U4: case FT_U2: return (double)b;
    default: return (double)ft_lowf_to_f32(dt, b);
    }
}

/* v (a float, or an integer's value) stored to a low-precision dtype as Cast
 * does: the small floats round (ft_lowf_from_f64, ft_e8m0_from_f64); the
 * integers truncate toward zero (NaN -> 0, beyond int64 saturating) and wrap. */
FT_LP_HD uint8_t ft_lowp_from_f64(int dt, double v, int sat, int mode)
{
    switch (dt) {
    case FT_I4: case FT_U4: case FT_I2: case FT_U2: {
        const int64_t x = v != v ? 0 : v <= -9223372036854775808.0 ? INT64_MIN
                                   : v >= 9223372036854775808.0 ? INT64_MAX : (int64_t)v;
        return (uint8_t)ft_lowi_wrap(dt, x);
    }
    case FT_F8E8M0: return ft_e8m0_from_f64(v, sat, mode);
    default: return ft_lowf_from_f64(dt, v, sat);
    }
}

#endif
