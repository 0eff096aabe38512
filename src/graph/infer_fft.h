/* Kernel side of fft, ifft, rfft and irfft (infer_fft.c): the output scale
 * that the norm attribute asks for, from the node's typed parameters
 * (params.h), for the CPU (src/cpu/fft.c) and CUDA (src/cuda/fft.cu) kernels.
 *
 *   double s = ft_fft_scale(&n->params.fft, inverse, len);   // multiply the result by s
 */
#ifndef FT_INFER_FFT_H
#define FT_INFER_FFT_H

#include "params.h"

/* The transform's axis ax of the logical shape (the first lrank dims of s):
 * the batch before it (outer), its length m and the batch after it (inner). */
void ft_fft_around_axis(const ft_shape *s, int lrank, int ax, int64_t *outer, int64_t *m, int64_t *inner);

/* The factor of a transform of length n (inverse: ifft, irfft). */
double ft_fft_scale(const ft_fft_params *p, int inverse, int64_t n);

#endif
