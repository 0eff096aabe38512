/* Accuracy of the f32 vector math of src/cpu/vmath.h against glibc's
 * double-precision functions (the oracle), on every path the CPU can run:
 * the same loops compiled for AVX-512 (x86-64-v4), AVX2+FMA (x86-64-v3) and
 * the baseline, as FT_VCLONES compiles the kernels. tests/cli/vmath.bats
 * builds and runs it.
 *
 *   vmath_ulp STEP     sweeps every STEP-th f32 bit pattern (both signs,
 *                      the infinities and NaNs included) through exp,
 *                      sigmoid, silu, tanh and exp_nonpos (at -|x|); prints per function and path
 *                      "FN PATH max_ulp U at X (got G, want W)" and
 *                      "FN PATH special ok" or the first special value wrong.
 *
 * The error of a finite result is |got - want| in units of the f32 spacing at
 * want (the subnormal spacing 2^-149 below the normals); where want rounds to
 * an infinity or is NaN, got must be the same. Exit status 1 when a special
 * value is wrong; the bound on max_ulp is the caller's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/vmath.h"

enum { F_EXP, F_SIGMOID, F_SILU, F_TANH, F_EXPNP, F_COUNT };
static const char *fname[F_COUNT] = {"exp", "sigmoid", "silu", "tanh", "exp_nonpos"};

/* ft_vexpf_nonpos on its domain x <= 0: every pattern swept as -|x| */
static inline float expnp_of_neg(float x) { return ft_vexpf_nonpos(-fabsf(x)); }

static double want_of(int f, double x)
{
    switch (f) {
    case F_EXP: return exp(x);
    case F_SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case F_SILU: return x >= 0 ? x / (1.0 + exp(-x)) : x * exp(x) / (1.0 + exp(x));
    case F_EXPNP: return -fabs(x) < -87.33f ? 0.0 : exp(-fabs(x)); /* 0 under the smallest normal, as documented */
    default: return tanh(x);
    }
}

#define BODY(F)                                                                                                      \
    _Pragma("omp simd") for (int i = 0; i < n; i++) y[i] = F(x[i]);                                                  \
    break;
#define SWEEP(NAME, ATTR)                                                                                            \
    ATTR static void NAME(int f, float *restrict y, const float *restrict x, int n)                                  \
    {                                                                                                                \
        switch (f) {                                                                                                 \
        case F_EXP: BODY(ft_vexpf)                                                                                   \
        case F_SIGMOID: BODY(ft_vsigmoidf)                                                                           \
        case F_SILU: BODY(ft_vsiluf)                                                                                 \
        case F_EXPNP: BODY(expnp_of_neg)                                                                             \
        default: BODY(ft_vtanhf)                                                                                     \
        }                                                                                                            \
    }
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
SWEEP(run_v4, __attribute__((target("arch=x86-64-v4"))))
SWEEP(run_v3, __attribute__((target("arch=x86-64-v3"))))
#endif
SWEEP(run_base, )

typedef void (*run_fn)(int, float *, const float *, int);

static double ulp_err(float got, double want, int *special_bad)
{
    float wf = (float)want;
    if (isnan(want) || isinf(wf)) {
        int same = isnan(want) ? isnan(got) : got == wf;
        if (!same)
            *special_bad = 1;
        return 0;
    }
    if (!isfinite(got)) {
        *special_bad = 1;
        return 0;
    }
    int e;
    frexp(fabs(want), &e); /* |want| in [2^(e-1), 2^e) */
    double spacing = ldexp(1.0, (e - 1 < -126 ? -126 : e - 1) - 23);
    return fabs((double)got - want) / spacing;
}

#define BLOCK 4096

static int sweep(const char *path, run_fn run, uint64_t step)
{
    int bad = 0;
    static float x[BLOCK], y[BLOCK];
    for (int f = 0; f < F_COUNT; f++) {
        double worst = 0;
        float wx = 0, wy = 0;
        double ww = 0;
        int special_bad = 0;
        float sx = 0, sy = 0;
        uint64_t u = 0;
        while (u < (1ull << 32)) {
            int n = 0;
            for (; n < BLOCK && u < (1ull << 32); n++, u += step) {
                uint32_t b = (uint32_t)u;
                memcpy(&x[n], &b, sizeof b);
            }
            run(f, y, x, n);
            for (int i = 0; i < n; i++) {
                double w = want_of(f, (double)x[i]);
                int sb = 0;
                double e = ulp_err(y[i], w, &sb);
                if (sb && !special_bad)
                    special_bad = 1, sx = x[i], sy = y[i];
                if (e > worst)
                    worst = e, wx = x[i], wy = y[i], ww = w;
            }
        }
        /* the edges and special values, whatever the step */
        const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 88.7f, 88.73f, -87.3f, -103.0f, -104.5f,
                            1e-45f, -1e-45f, 1e-38f, 3e38f, -3e38f, 0.625f, -0.625f, 9.0f, -9.0f, 20.0f, -100.0f};
        int ns = (int)(sizeof sp / sizeof sp[0]);
        run(f, y, sp, ns);
        for (int i = 0; i < ns; i++) {
            int sb = 0;
            double w = want_of(f, (double)sp[i]);
            double e = ulp_err(y[i], w, &sb);
            if (sb && !special_bad)
                special_bad = 1, sx = sp[i], sy = y[i];
            if (e > worst)
                worst = e, wx = sp[i], wy = y[i], ww = w;
            /* signed zeros: tanh and silu keep the sign of a zero input, exp and sigmoid give 1 and 0.5 */
            if (sp[i] == 0 && (f == F_TANH || f == F_SILU) && signbit(y[i]) != signbit(sp[i]) && !special_bad)
                special_bad = 1, sx = sp[i], sy = y[i];
        }
        printf("%s %s max_ulp %.3f at %.9g (got %.9g, want %.17g)\n", fname[f], path, worst, (double)wx,
               (double)wy, ww);
        if (special_bad) {
            printf("%s %s special WRONG at %.9g: got %.9g\n", fname[f], path, (double)sx, (double)sy);
            bad = 1;
        } else {
            printf("%s %s special ok\n", fname[f], path);
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t step = argc > 1 ? strtoull(argv[1], NULL, 10) : 16;
    if (step == 0)
        step = 1;
    int bad = 0;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        bad |= sweep("avx512", run_v4, step);
    else
        printf("avx512 skipped: not supported by this CPU\n");
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        bad |= sweep("avx2", run_v3, step);
    else
        printf("avx2 skipped: not supported by this CPU\n");
#endif
    bad |= sweep("scalar", run_base, step);
    return bad;
}
