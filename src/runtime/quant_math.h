/* The scalar rules of the int8 inference ops (src/graph/infer_quant.c),
 * shared by the CPU kernels (cpu/quant.c) and the CUDA ones (cuda/quant.cu)
 * so that both saturate and round identically: round half to even (rint in
 * the default rounding mode), then add the zero point and saturate to the
 * quantized dtype; NaN gives the zero point. Pure functions, no state.
 *
 *   int64_t lo, hi; ft_qrange(FT_U8, &lo, &hi);
 *   int64_t q = ft_qsat(rint(x / s), zp, lo, hi);
 */
#ifndef FT_QUANT_MATH_H
#define FT_QUANT_MATH_H

#include <math.h>
#include <stdint.h>

#include "../graph/dtype.h"

#ifdef __CUDACC__
#define FT_QM_HD __host__ __device__
#else
#define FT_QM_HD
#endif

/* The range of a quantized dtype (u8, i8, i16; i32 for accumulators). */
static inline FT_QM_HD void ft_qrange(int dt, int64_t *lo, int64_t *hi)
{
    *lo = dt == FT_U8 || dt == FT_U16 ? 0 : dt == FT_I8 ? -128 : dt == FT_I16 ? -32768 : -2147483648LL;
    *hi = dt == FT_U8 ? 255 : dt == FT_I8 ? 127 : dt == FT_I16 ? 32767 : dt == FT_U16 ? 65535 : 2147483647LL;
}

/* r (already rounded to an integer value) plus zp, saturated to [lo, hi]. */
static inline FT_QM_HD int64_t ft_qsat(double r, int64_t zp, int64_t lo, int64_t hi)
{
    if (r != r)
        r = 0;
    double v = r + (double)zp;
    return v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
}

#endif
