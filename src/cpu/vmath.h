/* f32 elementary functions for the CPU kernels' vector loops: exp, sigmoid,
 * silu (x * sigmoid(x)), tanh. Each is branch-free scalar code in a form GCC
 * vectorises inside an `omp simd` loop (no call, no float-to-int conversion,
 * selects on bits), so one source gives the scalar path and, in a function
 * carrying FT_VCLONES, AVX2+FMA and AVX-512 paths chosen at load time by the
 * CPU's features (GCC function multiversioning, as the depthwise kernels of
 * src/cpu/conv.c). f64 stays on libm.
 *
 * Accuracy, measured against glibc's double-precision functions over every
 * 16th f32 bit pattern on each path (tests/unit/vmath_ulp.c; bounds checked
 * by tests/cli/vmath.bats): exp 1.02 ulp, tanh 1.3, sigmoid 2.4, silu 3.3.
 * Special values as libm: exp overflows to +inf above 88.72 and underflows
 * through the subnormals to +0 below -103.9 (silu to -0 below -108), NaN
 * stays NaN, tanh saturates to +-1 and keeps -0, sigmoid is 0 at -inf and 1
 * at +inf.
 *
 * Ownership: header-only, no state.
 *
 *   FT_VCLONES static void sig_row(float *y, const float *x, int64_t n)
 *   {
 *   #pragma omp simd
 *       for (int64_t i = 0; i < n; i++) y[i] = ft_vsigmoidf(x[i]);
 *   }
 */
#ifndef FT_VMATH_H
#define FT_VMATH_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FT_VCLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FT_VCLONES
#endif

/* Always inlined: a call left in a loop (GCC declines to inline tanh when a
 * loop body calls it twice) keeps the loop from vectorising. */
#if defined(__GNUC__)
#define FT_VINLINE static inline __attribute__((always_inline))
#else
#define FT_VINLINE static inline
#endif

FT_VINLINE float ft_vbits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
FT_VINLINE uint32_t ft_vfbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
/* c ? a : b on the bits (a ?: on floats keeps GCC from vectorising under -ftrapping-math) */
FT_VINLINE float ft_vsel(int c, float a, float b)
{
    uint32_t m = (uint32_t)0 - (uint32_t)(c != 0);
    return ft_vbits_f((ft_vfbits(a) & m) | (ft_vfbits(b) & ~m));
}

/* e^r for x = n ln2 + r: n rounded by the 1.5 * 2^23 shift (*t: x / ln2 plus
 * the shift, whose low bits hold n) and |r| <= ln2/2 (Cody-Waite split of
 * ln2); e^r by Cephes' expf polynomial. The callers apply 2^n. */
FT_VINLINE float ft_vexpf_reduced(float x, float *t)
{
    *t = x * 1.44269504088896341f + 12582912.0f;
    float n = *t - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float q = 1.9875691500e-4f;
    q = q * r + 1.3981999507e-3f;
    q = q * r + 8.3334519073e-3f;
    q = q * r + 4.1665795894e-2f;
    q = q * r + 1.6666665459e-1f;
    q = q * r + 5.0000001201e-1f;
    return q * r * r + r + 1.0f;
}

/* m * e^x with one final rounding, so that a result in the subnormals (or a
 * product with a small m, as in silu) is rounded once. x = n ln2 + r with n
 * rounded by the 1.5 * 2^23 shift and |r| <= ln2/2 (Cody-Waite split of ln2);
 * e^r by Cephes' expf polynomial; 2^n applied as 2^(n/2) * 2^(n - n/2), both
 * normal for every n of the clamped range [-120, 89]; below -120 the result
 * is m * 0. NaN passes through the clamps (comparisons are false) and stays
 * NaN. */
FT_VINLINE float ft_vexpf_mul(float x, float m)
{
    const int under = x < -120.0f; /* m * 0: -0 for silu's x, NaN for an infinite m */
    x = ft_vsel(under, -120.0f, x);
    x = ft_vsel(x > 89.0f, 89.0f, x);
    float t, q = ft_vexpf_reduced(x, &t);
    int32_t ni = (int32_t)(ft_vfbits(t) - 0x4B400000u);
    int32_t n1 = ni >> 1, n2 = ni - n1;
    float s1 = ft_vbits_f((uint32_t)(n1 + 127) << 23), s2 = ft_vbits_f((uint32_t)(n2 + 127) << 23);
    return ft_vsel(under, m * 0.0f, (m * q) * s1 * s2);
}

FT_VINLINE float ft_vexpf(float x) { return ft_vexpf_mul(x, 1.0f); }

/* e^x for x <= 0 or NaN (softmax's x - max), in fewer operations than
 * ft_vexpf: the same reduction and polynomial, 2^n as one product (n >= -126
 * after clamping x at -87.33, so 2^n is normal; the product rounds once into
 * the subnormals), and 0 below -87.33 where e^x is under the smallest normal
 * (FLT_MIN = e^-87.34). NaN stays NaN (q is NaN, and the product keeps it). */
FT_VINLINE float ft_vexpf_nonpos(float x)
{
    const int under = x < -87.33f;
    x = ft_vsel(under, -87.33f, x);
    float t, q = ft_vexpf_reduced(x, &t);
    float s = ft_vbits_f((ft_vfbits(t) - 0x4B400000u + 127u) << 23);
    return ft_vsel(under, 0.0f, q * s);
}

/* 1 / (1 + e^-x): for x >= 0 as is, for x < 0 as e^x / (1 + e^x), accurate
 * down through the subnormals (exp(-x) would overflow there and give 0). */
FT_VINLINE float ft_vsigmoidf(float x)
{
    float ax = ft_vbits_f(ft_vfbits(x) & 0x7FFFFFFFu);
    float e = ft_vexpf(-ax);
    return ft_vsel(x < 0, e, 1.0f) / (1.0f + e);
}

/* x * sigmoid(x); for x < 0 the numerator x * e^x is formed with one rounding
 * (ft_vexpf_mul), so tiny results keep their precision. */
FT_VINLINE float ft_vsiluf(float x)
{
    float ax = ft_vbits_f(ft_vfbits(x) & 0x7FFFFFFFu);
    float e = ft_vexpf(-ax);
    float num = ft_vsel(x < 0, ft_vexpf_mul(-ax, x), x);
    return num / (1.0f + e);
}

/* tanh of ax = |x| < 0.625 by Cephes' tanhf polynomial (x + x^3 P(x^2)). */
FT_VINLINE float ft_vtanh_small(float ax)
{
    float z = ax * ax;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    return p * z * ax + ax;
}

/* tanh: |x| < 0.625 by ft_vtanh_small; above, as 1 - 2 / (e^{2|x|} + 1),
 * e^{2|x|} = inf giving 1; both on |x|, the sign of x put back on the bits
 * (so -0 stays -0). */
FT_VINLINE float ft_vtanhf(float x)
{
    uint32_t sign = ft_vfbits(x) & 0x80000000u;
    float ax = ft_vbits_f(ft_vfbits(x) & 0x7FFFFFFFu);
    float small = ft_vtanh_small(ax);
    float big = 1.0f - 2.0f / (ft_vexpf(2.0f * ax) + 1.0f);
    return ft_vbits_f(ft_vfbits(ft_vsel(ax < 0.625f, small, big)) | sign);
}

/* Row reductions for short rows (softmax's and attention's, often 128 wide):
 * an `omp simd reduction` folds its lanes one after the other at the end,
 * which costs as much as such a row; these keep 16 partial results and fold
 * them as a tree. */

/* The largest of x[0..n-1], n >= 1 (a NaN is never taken: the comparisons are false). */
FT_VINLINE float ft_vrow_maxf(const float *x, int64_t n)
{
    float ml[16];
    const int64_t nb = n / 16 * 16;
    for (int j = 0; j < 16; j++)
        ml[j] = x[0];
    for (int64_t i = 0; i < nb; i += 16)
#pragma omp simd
        for (int j = 0; j < 16; j++)
            ml[j] = x[i + j] > ml[j] ? x[i + j] : ml[j];
    for (int64_t i = nb; i < n; i++)
        ml[0] = x[i] > ml[0] ? x[i] : ml[0];
    for (int w = 8; w > 0; w /= 2)
        for (int j = 0; j < w; j++)
            ml[j] = ml[j + w] > ml[j] ? ml[j + w] : ml[j];
    return ml[0];
}

/* The f64 rows' max and sum (n >= 1), as `omp simd` reductions: the f64
 * paths are not the tuned ones. */
static inline double ft_vrow_maxd(const double *x, int64_t n)
{
    double m = x[0];
#pragma omp simd reduction(max : m)
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}
static inline double ft_vrow_sumd(const double *x, int64_t n)
{
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

/* The sum of y[0..n-1] in f32, two vectors of 8 lanes folded as a tree: for
 * blocks of a few hundred elements (the callers add blocks in double). */
typedef float ft_v8f __attribute__((vector_size(32)));
FT_VINLINE float ft_vrow_sumf(const float *y, int64_t n)
{
    ft_v8f a0 = {0}, a1 = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        ft_v8f v0, v1;
        memcpy(&v0, y + i, sizeof v0);
        memcpy(&v1, y + i + 8, sizeof v1);
        a0 += v0, a1 += v1;
    }
    a0 += a1;
    float s = ((a0[0] + a0[4]) + (a0[1] + a0[5])) + ((a0[2] + a0[6]) + (a0[3] + a0[7]));
    for (; i < n; i++)
        s += y[i];
    return s;
}

#endif
