#include "dtype.h"
#include "dtype_load.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {
#define X(e, n, s, d) n,
    FT_DTYPES(X)
#undef X
};
static const size_t sizes[] = {
#define X(e, n, s, d) s,
    FT_DTYPES(X)
#undef X
};
static const char *const descrs[] = {
#define X(e, n, s, d) d,
    FT_DTYPES(X)
#undef X
};

const char *ft_dtype_name(ft_dtype dt) { return (unsigned)dt < FT_DTYPE_COUNT ? names[dt] : "?"; }
size_t ft_dtype_size(ft_dtype dt) { return (unsigned)dt < FT_DTYPE_COUNT ? sizes[dt] : 0; }
const char *ft_dtype_npy_descr(ft_dtype dt) { return (unsigned)dt < FT_DTYPE_COUNT ? descrs[dt] : "?"; }

int ft_dtype_parse(const char *s, ft_dtype *out)
{
    static const struct { const char *alias; ft_dtype dt; } aliases[] = {
        {"float16", FT_F16}, {"half", FT_F16}, {"bfloat16", FT_BF16},
        {"float32", FT_F32}, {"float", FT_F32}, {"single", FT_F32},
        {"float64", FT_F64}, {"double", FT_F64}, {"int8", FT_I8},
        {"int16", FT_I16}, {"int32", FT_I32}, {"int64", FT_I64},
        {"uint8", FT_U8}, {"uint16", FT_U16}, {"uint32", FT_U32},
        {"uint64", FT_U64}, {"bool_", FT_BOOL},
        /* ml_dtypes' names of the low-precision types */
        {"float8_e4m3fn", FT_F8E4M3FN}, {"float8_e4m3fnuz", FT_F8E4M3FNUZ},
        {"float8_e5m2", FT_F8E5M2}, {"float8_e5m2fnuz", FT_F8E5M2FNUZ},
        {"float8_e8m0fnu", FT_F8E8M0}, {"float4_e2m1fn", FT_F4E2M1},
        {"int4", FT_I4}, {"uint4", FT_U4}, {"int2", FT_I2}, {"uint2", FT_U2},
    };
    for (int i = 0; i < FT_DTYPE_COUNT; i++)
        if (strcmp(s, names[i]) == 0) { *out = (ft_dtype)i; return 0; }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].alias) == 0) { *out = aliases[i].dt; return 0; }
    return -1;
}

const char *ft_dtype_mask_str(ft_dtype_mask m, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < FT_DTYPE_COUNT; i++) {
        if (!ft_dtype_in((ft_dtype)i, m))
            continue;
        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    return buf;
}

static float f32_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static uint32_t bits_of_f32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

float ft_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    return f32_of_bits(bits);
}

uint16_t ft_f32_to_f16(float f)
{
    uint32_t x = bits_of_f32(f);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 | ((ax >> 13) & 0x3ff) : 0));
    if (ax >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* subnormal or zero in f16 */
        float af = f32_of_bits(ax);
        /* scale so the f16 subnormal unit is 1, round to nearest even via the FPU */
        float r = af * 16777216.0f; /* 2^24 */
        uint32_t m = (uint32_t)nearbyintf(r);
        return (uint16_t)(sign | m);
    }
    uint32_t mant = ax + 0xfffu + ((ax >> 13) & 1u); /* round to nearest even */
    return (uint16_t)(sign | ((mant - 0x38000000u) >> 13));
}

float ft_bf16_to_f32(uint16_t h)
{
    return f32_of_bits((uint32_t)h << 16);
}

uint16_t ft_f32_to_bf16(float f)
{
    uint32_t x = bits_of_f32(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

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
    case FT_DTYPE_COUNT: break;
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
    case FT_DTYPE_COUNT: break;
    }
}

void ft_store_i64(void *p, ft_dtype dt, size_t i, int64_t v)
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
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64:
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1:
        ft_store_f64(p, dt, i, (double)v);
        break;
    case FT_DTYPE_COUNT: break;
    }
}
