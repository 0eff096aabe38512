/* mel_weight_matrix's filter bank, shared by the CPU kernel (src/cpu/loss.c)
 * and the CUDA kernel (src/cuda/loss.cu): static inline functions that
 * compile as C for the CPU and as host-and-device functions under nvcc, so
 * that both backends place the same triangles. The rule is ONNX's
 * MelWeightMatrix (onnx/reference/ops/op_mel_weight_matrix.py):
 *
 *   mel(f) = 2595 log10(1 + f / 700), in the precision of the edge inputs
 *   step   = (mel(upper) - mel(lower)) / (bins + 2)
 *   edge k = floor((dft_length + 1) * 700 (10^((k step + mel(lower)) / 2595) - 1) / sample_rate)
 *            (in double), k = 0 .. bins + 1
 *   column i: with l, c, h = edges i, i + 1, i + 2, row j holds
 *     (h - j) / (h - c)  where c <= j < h,
 *     else 1 at j = c when l = c, else (j - l) / (c - l) where l <= j <= c,
 *     else 0.
 *
 *   double lo, st;
 *   ft_mel_range(lower, upper, bins, is_f64, &lo, &st);
 *   int64_t l = ft_mel_edge(i, lo, st, dft_length, rate), c = ft_mel_edge(i + 1, lo, st, dft_length, rate),
 *           h = ft_mel_edge(i + 2, lo, st, dft_length, rate);
 *   y[j * bins + i] = ft_mel_weight(j, l, c, h);
 */
#ifndef FT_MEL_H
#define FT_MEL_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FT_MEL_FN static __host__ __device__ inline
#else
#define FT_MEL_FN static inline
#endif

/* mel(lower) and the step between edges; f32 (and 16-bit) edges in float,
 * as ONNX's reference computes them in the inputs' dtype. */
FT_MEL_FN void ft_mel_range(double lower, double upper, int64_t bins, int f64, double *lo, double *step)
{
    if (f64) {
        *lo = 2595.0 * log10(1.0 + lower / 700.0);
        *step = (2595.0 * log10(1.0 + upper / 700.0) - *lo) / (double)(bins + 2);
    } else {
        float l = 2595.0f * log10f(1.0f + (float)lower / 700.0f), h = 2595.0f * log10f(1.0f + (float)upper / 700.0f);
        *lo = l;
        *step = (float)((h - l) / (float)(bins + 2));
    }
}

/* Edge k as a row index; a value that is not finite or beyond +-2^62 (a
 * sample rate of 0, say) gives -1, a row no column reaches. */
FT_MEL_FN int64_t ft_mel_edge(int64_t k, double lo, double step, int64_t dft_length, int64_t sample_rate)
{
    double f = 700.0 * (pow(10.0, ((double)k * step + lo) / 2595.0) - 1.0);
    double e = floor((double)(dft_length + 1) * f / (double)sample_rate);
    return e == e && fabs(e) < 4611686018427387904.0 ? (int64_t)e : -1;
}

/* Row j of the column whose edges are l, c, h. */
FT_MEL_FN double ft_mel_weight(int64_t j, int64_t l, int64_t c, int64_t h)
{
    if (h > c && j >= c && j < h)
        return (double)(h - j) / (double)(h - c);
    if (l == c)
        return j == c ? 1.0 : 0.0;
    if (j >= l && j <= c)
        return (double)(j - l) / (double)(c - l);
    return 0.0;
}

#endif
