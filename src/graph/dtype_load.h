/* One element of any dtype read as a double or as an integer, and an
 * integer stored: the loads and stores that the graph (elem.c: ft_load_f64,
 * ft_load_i64, ft_store_i64), the CPU kernels
 * (cpu/quant.c) and the CUDA kernels (cuda/elementwise_binary.cu: pow's
 * exponent) share, as static inline functions that compile as C and, under
 * nvcc, as host-and-device functions (f16/bf16 through cuda_fp16.h /
 * cuda_bf16.h, which the including .cu file has included first, as
 * cuda/cu.cuh does). Pure functions; the caller owns the data.
 *
 *   double x = ft_ld_f64(view.data, view.dtype, i);   // any dtype
 *   int64_t z = ft_ld_int(zp.data, zp.dtype, 0);       // integer dtypes and bool, else 0
 *   ft_st_int(y.data, y.dtype, i, q);                  // integer dtypes and bool, else nothing
 */
#ifndef FT_DTYPE_LOAD_H
#define FT_DTYPE_LOAD_H

#include <stdint.h>

#include "dtype.h"
#include "lowp.h"

#ifdef __CUDACC__
#define FT_LD_FN static __host__ __device__ inline
#define FT_LD_F16(p, i) ((double)__half2float(((const __half *)(p))[i]))
#define FT_LD_BF16(p, i) ((double)__bfloat162float(((const __nv_bfloat16 *)(p))[i]))
#else
#define FT_LD_FN static inline
#define FT_LD_F16(p, i) ((double)ft_f16_to_f32(((const uint16_t *)(p))[i]))
#define FT_LD_BF16(p, i) ((double)ft_bf16_to_f32(((const uint16_t *)(p))[i]))
#endif

/* Element i of p as an integer, for the integer dtypes and bool; 0 for the
 * float dtypes, the small floats included (ft_load_i64 in elem.c converts
 * those). A u64 above
 * INT64_MAX comes back wrapped (its bits): callers that compare, divide or
 * convert it to floating point must test ft_dtype_is_uint first. */
FT_LD_FN int64_t ft_ld_int(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case FT_I8: return ((const int8_t *)p)[i];
    case FT_I16: return ((const int16_t *)p)[i];
    case FT_I32: return ((const int32_t *)p)[i];
    case FT_I64: return ((const int64_t *)p)[i];
    case FT_U8: return ((const uint8_t *)p)[i];
    case FT_U16: return ((const uint16_t *)p)[i];
    case FT_U32: return ((const uint32_t *)p)[i];
    case FT_U64: return (int64_t)((const uint64_t *)p)[i];
    case FT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case FT_I4: case FT_I2: return ((const int8_t *)p)[i];
    case FT_U4: case FT_U2: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

/* Element i of p (dtype dt) as a double; bool as 0 or 1. */
FT_LD_FN double ft_ld_f64(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case FT_F16: return FT_LD_F16(p, i);
    case FT_BF16: return FT_LD_BF16(p, i);
    case FT_F32: return ((const float *)p)[i];
    case FT_F64: return ((const double *)p)[i];
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_BOOL:
        return (double)ft_ld_int(p, dt, i);
    case FT_U64: return (double)((const uint64_t *)p)[i]; /* not through ft_ld_int, which wraps it */
    FT_CASE_LOWP: return ft_lowp_to_f64(dt, ((const uint8_t *)p)[i]);
    default: return 0;
    }
}

/* v stored as element i of p, for the integer dtypes and bool (bool as
 * v != 0, the 4- and 2-bit integers wrapped to their width, the others
 * converted as C converts); the float dtypes are left as they are
 * (ft_store_i64 in elem.c converts to those). */
FT_LD_FN void ft_st_int(void *p, int dt, int64_t i, int64_t v)
{
    switch (dt) {
    case FT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case FT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case FT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case FT_I64: ((int64_t *)p)[i] = v; break;
    case FT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case FT_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case FT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case FT_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case FT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case FT_I4: case FT_U4: case FT_I2: case FT_U2: ((uint8_t *)p)[i] = (uint8_t)ft_lowi_wrap(dt, v); break;
    default: break;
    }
}

#endif
