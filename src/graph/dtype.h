/* Element types. The order of FT_DTYPES is the enum order and the bit order of
 * ft_dtype_mask; names are the graph-format names (NumPy aliases also parse).
 *
 *   ft_dtype dt;
 *   size_t sz = ft_dtype_parse("float32", &dt) == 0 ? ft_dtype_size(dt) : 0;
 */
#ifndef FT_DTYPE_H
#define FT_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* X(ENUM, name, size, numpy descr) */
#define FT_DTYPES(X)              \
    X(F16, "f16", 2, "<f2")       \
    X(BF16, "bf16", 2, "<f4")     \
    X(F32, "f32", 4, "<f4")       \
    X(F64, "f64", 8, "<f8")       \
    X(I8, "i8", 1, "|i1")         \
    X(I16, "i16", 2, "<i2")       \
    X(I32, "i32", 4, "<i4")       \
    X(I64, "i64", 8, "<i8")       \
    X(U8, "u8", 1, "|u1")         \
    X(U16, "u16", 2, "<u2")       \
    X(U32, "u32", 4, "<u4")       \
    X(U64, "u64", 8, "<u8")       \
    X(BOOL, "bool", 1, "|b1")         \
    X(F8E4M3FN, "f8e4m3fn", 1, "<f4") \
    X(F8E4M3FNUZ, "f8e4m3fnuz", 1, "<f4") \
    X(F8E5M2, "f8e5m2", 1, "<f4")     \
    X(F8E5M2FNUZ, "f8e5m2fnuz", 1, "<f4") \
    X(F8E8M0, "f8e8m0", 1, "<f4")     \
    X(F4E2M1, "f4e2m1", 1, "<f4")     \
    X(I4, "i4", 1, "|i1")             \
    X(U4, "u4", 1, "|u1")             \
    X(I2, "i2", 1, "|i1")             \
    X(U2, "u2", 1, "|u1")             \
    X(STRING, "string", 8, "<U")

typedef enum {
#define X(e, n, s, d) FT_##e,
    FT_DTYPES(X)
#undef X
    FT_DTYPE_COUNT
} ft_dtype;

typedef uint32_t ft_dtype_mask;
#define FT_M(e) ((ft_dtype_mask)1u << FT_##e)
#define FT_DT_FLOAT (FT_M(F16) | FT_M(BF16) | FT_M(F32) | FT_M(F64))
#define FT_DT_SINT (FT_M(I8) | FT_M(I16) | FT_M(I32) | FT_M(I64))
#define FT_DT_UINT (FT_M(U8) | FT_M(U16) | FT_M(U32) | FT_M(U64))
#define FT_DT_INT (FT_DT_SINT | FT_DT_UINT)
#define FT_DT_NUM (FT_DT_FLOAT | FT_DT_INT)
#define FT_DT_SIGNED (FT_DT_FLOAT | FT_DT_SINT)
#define FT_DT_BOOL FT_M(BOOL)
#define FT_DT_ANY (FT_DT_NUM | FT_DT_BOOL)
#define FT_DT_INDEX (FT_M(I32) | FT_M(I64))
/* The low-precision storage types (ONNX FLOAT8*, FLOAT4E2M1, INT4, UINT4,
 * INT2, UINT2): one byte per element in memory (the 4- and 2-bit integers
 * hold their value, sign-extended for i4/i2; the small floats their bit
 * pattern in the low bits). They are in none of the masks above: ops that
 * compute refuse them; cast, quantize/dequantize and the ops that move
 * bytes (FT_DT_ALL) take them. src/graph/lowp.h converts them. */
#define FT_DT_LOWF (FT_M(F8E4M3FN) | FT_M(F8E4M3FNUZ) | FT_M(F8E5M2) | FT_M(F8E5M2FNUZ) | FT_M(F8E8M0) | FT_M(F4E2M1))
#define FT_DT_LOWI (FT_M(I4) | FT_M(U4) | FT_M(I2) | FT_M(U2))
#define FT_DT_LOWP (FT_DT_LOWF | FT_DT_LOWI)
#define FT_DT_ALL (FT_DT_ANY | FT_DT_LOWP)
/* Strings (graph/str.h): one pointer per element. In no mask above: the ops
 * that move elements take them (FT_DT_MOVE), as do equal, cast and the
 * string ops; the CPU backend alone runs them. */
#define FT_DT_STR FT_M(STRING)
#define FT_DT_MOVE (FT_DT_ALL | FT_DT_STR)
/* The case labels of the low-precision dtypes, for switches over ft_dtype. */
#define FT_CASE_LOWP                                                                                            \
    case FT_F8E4M3FN: case FT_F8E4M3FNUZ: case FT_F8E5M2: case FT_F8E5M2FNUZ: case FT_F8E8M0: case FT_F4E2M1: \
    case FT_I4: case FT_U4: case FT_I2: case FT_U2

const char *ft_dtype_name(ft_dtype dt);
size_t ft_dtype_size(ft_dtype dt);
/* NumPy .npy descr for this dtype (bf16 and the 8- and 4-bit floats are
 * stored as f32, i4/i2 as i1, u4/u2 as u1; strings as "<U" and the width,
 * which io/npy.c adds). */
const char *ft_dtype_npy_descr(ft_dtype dt);
/* Parse a graph-format name or NumPy alias. Returns 0 on success. */
int ft_dtype_parse(const char *s, ft_dtype *out);
static inline int ft_dtype_in(ft_dtype dt, ft_dtype_mask m) { return (m >> dt) & 1u; }
static inline int ft_dtype_is_float(ft_dtype dt) { return ft_dtype_in(dt, FT_DT_FLOAT); }
static inline int ft_dtype_is_int(ft_dtype dt) { return ft_dtype_in(dt, FT_DT_INT); }
static inline int ft_dtype_is_uint(ft_dtype dt) { return ft_dtype_in(dt, FT_DT_UINT); }
static inline int ft_dtype_is_lowp(ft_dtype dt) { return ft_dtype_in(dt, FT_DT_LOWP); }
/* "f32, f64 or i64" style list of the dtypes in a mask, into buf. */
const char *ft_dtype_mask_str(ft_dtype_mask m, char *buf, size_t n);

/* Scalar conversion helpers used by value loading and the CPU backend. */
float ft_f16_to_f32(uint16_t h);
uint16_t ft_f32_to_f16(float f);   /* round to nearest even, overflow to inf */
float ft_bf16_to_f32(uint16_t h);
uint16_t ft_f32_to_bf16(float f);  /* round to nearest even */

/* Element i of a buffer of any dtype read or written as a double or an
 * int64: elem.h (ft_load_f64, ft_store_f64, ...). */

#endif
