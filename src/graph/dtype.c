#include "dtype.h"

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
