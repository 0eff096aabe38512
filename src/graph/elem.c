#include "elem.h"
#include "dtype_load.h"
#include "lowp.h"

#include <math.h>

double ft_load_f64(const void *p, ft_dtype dt, size_t i) { return ft_ld_f64(p, dt, (int64_t)i); }

int64_t ft_load_i64(const void *p, ft_dtype dt, size_t i)
{
    switch (dt) {
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: case FT_I4: case FT_U4: case FT_I2: case FT_U2:
        return ft_ld_int(p, dt, (int64_t)i);
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64:
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1: {
        double v = ft_ld_f64(p, dt, (int64_t)i);
        if (isnan(v)) return INT64_MIN;
        if (v >= 9223372036854775808.0) return INT64_MAX;
        if (v < -9223372036854775808.0) return INT64_MIN;
        return (int64_t)v;
    }
    case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return 0;
}

void ft_store_f64(void *p, ft_dtype dt, size_t i, double v)
{
    switch (dt) {
    case FT_F16: ((uint16_t *)p)[i] = ft_f32_to_f16((float)v); break;
    case FT_BF16: ((uint16_t *)p)[i] = ft_f32_to_bf16((float)v); break;
    case FT_F32: ((float *)p)[i] = (float)v; break;
    case FT_F64: ((double *)p)[i] = v; break;
    case FT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    FT_CASE_LOWP: ((uint8_t *)p)[i] = ft_lowp_from_f64(dt, v, 1, FT_RM_UP); break; /* as Cast's defaults */
    case FT_U64:
        /* [2^63, 2^64) does not fit the int64 path below; other values do
         * (negative ones wrap, as the narrower unsigned types do) */
        if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) {
            ((uint64_t *)p)[i] = (uint64_t)v;
            break;
        }
        /* fall through */
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: {
        int64_t x;
        if (isnan(v)) x = INT64_MIN;
        else if (v >= 9223372036854775808.0) x = INT64_MAX;
        else if (v < -9223372036854775808.0) x = INT64_MIN;
        else x = (int64_t)v;
        ft_store_i64(p, dt, i, x);
        break;
    }
    case FT_STRING: case FT_DTYPE_COUNT: break;
    }
}

void ft_store_i64(void *p, ft_dtype dt, size_t i, int64_t v)
{
    switch (dt) {
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: case FT_I4: case FT_U4: case FT_I2: case FT_U2:
        ft_st_int(p, dt, (int64_t)i, v);
        break;
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64:
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1:
        ft_store_f64(p, dt, i, (double)v);
        break;
    case FT_STRING: case FT_DTYPE_COUNT: break;
    }
}
