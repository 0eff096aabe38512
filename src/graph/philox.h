/* Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC11): the counter-based generator of ftrun's "init" values, dropout's
 * training mask and the random ops, one definition for the CPU and the CUDA
 * kernels (src/graph/graph.c, src/cpu/random.c, src/cpu/misc.c,
 * src/cuda/random.cu, src/cuda/attention.cu): a static inline function that
 * compiles as C for the CPU and as a host-and-device function under nvcc, so
 * that both backends draw the same words. Pure, no state.
 *
 *   uint32_t w[4];
 *   ft_philox4x32(i, seed, w); // the four words of element i
 */
#ifndef FT_PHILOX_H
#define FT_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define FT_PHILOX_FN static __host__ __device__ __forceinline__
#else
#define FT_PHILOX_FN static inline
#endif

FT_PHILOX_FN void ft_philox4x32(uint64_t counter, uint64_t key, uint32_t out[4])
{
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

#endif
