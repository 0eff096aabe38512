/* CPU kernels of the broadcasting elementwise ops: cpu_binary (arithmetic,
 * comparisons, logic, bitwise ops, prelu), cpu_variadic (max/min over any
 * number of inputs) and
 * cpu_where. One iterator walks the output with per-input strides after
 * merging dimensions that are contiguous for every input; the innermost run
 * goes to a row function specialised for the op, dtype and stride pattern. */
#include "cpu.h"
#include "vmath.h"
#include "../runtime/numeric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EW_MAX_IN 3

/* A row: n elements of y from inputs x[j]; bit j of units is set when input j
 * advances along the row (stride 1), clear when it repeats one element. */
typedef void (*ew_row)(void *y, const void *const *x, unsigned units, int64_t n);

typedef struct ew_plan {
    int nin, rank;
    int64_t dims[FT_MAX_RANK];
    int64_t st[EW_MAX_IN][FT_MAX_RANK]; /* element strides of each input */
    size_t isz[EW_MAX_IN], osz;
    unsigned units;
    ew_row fn;
    const char *x[EW_MAX_IN];
    char *y;
} ew_plan;

static void ew_setup(ew_plan *pl, ew_row fn, void *y, const ft_shape *oshape, size_t osz, int nin,
                     const void *const *x, const ft_shape *const *ishape, const size_t *isz)
{
    pl->nin = nin, pl->fn = fn, pl->y = y, pl->osz = osz;
    for (int j = 0; j < nin; j++)
        pl->x[j] = x[j], pl->isz[j] = isz[j];
    /* The innermost stride of an input is its own row-major stride over output
     * dims of size 1 only, so it is 1 or 0 (broadcast). */
    pl->rank = ft_broadcast_merge(oshape, nin, ishape, pl->dims, pl->st, &pl->units);
}

/* Output elements [s, e) in row-major order. */
static void ew_range(const ew_plan *pl, int64_t s, int64_t e)
{
    const int r = pl->rank, nin = pl->nin;
    if (r == 1) { /* one run (every input contiguous or a scalar): no index arithmetic */
        const void *xp[EW_MAX_IN];
        for (int j = 0; j < nin; j++)
            xp[j] = pl->x[j] + (size_t)(s * pl->st[j][0]) * pl->isz[j];
        pl->fn(pl->y + (size_t)s * pl->osz, xp, pl->units, e - s);
        return;
    }
    int64_t idx[FT_MAX_RANK], off[EW_MAX_IN] = {0};
    int64_t rem = s;
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = rem % pl->dims[d];
        rem /= pl->dims[d];
        for (int j = 0; j < nin; j++)
            off[j] += idx[d] * pl->st[j][d];
    }
    const int64_t inner = pl->dims[r - 1];
    for (int64_t pos = s; pos < e;) {
        int64_t len = inner - idx[r - 1];
        if (len > e - pos)
            len = e - pos;
        const void *xp[EW_MAX_IN];
        for (int j = 0; j < nin; j++)
            xp[j] = pl->x[j] + (size_t)off[j] * pl->isz[j];
        pl->fn(pl->y + (size_t)pos * pl->osz, xp, pl->units, len);
        pos += len;
        if (pos >= e)
            break;
        idx[r - 1] += len;
        for (int j = 0; j < nin; j++)
            off[j] += len * pl->st[j][r - 1];
        for (int d = r - 1; d > 0 && idx[d] == pl->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
            for (int j = 0; j < nin; j++)
                off[j] += pl->st[j][d - 1] - pl->dims[d] * pl->st[j][d];
        }
    }
}

static void ew_range_fn(void *pl, int64_t s, int64_t e) { ew_range(pl, s, e); }

static void ew_run(const ew_plan *pl, int64_t total, int threads)
{
    cpu_run_ranges(threads, total, ew_range_fn, (void *)pl);
}

/* ------------------------------ row functions ------------------------------ */

#define BIN_ROW(NAME, TA, TB, TO, FN)                                                            \
    static void NAME(void *yv, const void *const *xv, unsigned u, int64_t n)                     \
    {                                                                                            \
        const TA *A = xv[0];                                                                     \
        const TB *B = xv[1];                                                                     \
        TO *Y = yv;                                                                              \
        if (u == 3) {                                                                            \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = FN(A[i], B[i]);           \
        } else if (u == 1) {                                                                     \
            const TB b = B[0];                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = FN(A[i], b);              \
        } else if (u == 2) {                                                                     \
            const TA a = A[0];                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = FN(a, B[i]);              \
        } else {                                                                                 \
            const TO v = FN(A[0], B[0]);                                                         \
            for (int64_t i = 0; i < n; i++)                                                      \
                Y[i] = v;                                                                        \
        }                                                                                        \
    }

/* Scalar ops. Floats follow IEEE; integer add/sub/mul wrap, computed in an
 * unsigned type at least as wide as int (no signed overflow, no promotion to
 * signed int for the small types). */
#define FLOAT_OPS(S, T)                                                                          \
    static inline T add_##S(T a, T b) { return a + b; }                                          \
    static inline T sub_##S(T a, T b) { return a - b; }                                          \
    static inline T mul_##S(T a, T b) { return a * b; }                                          \
    static inline T div_##S(T a, T b) { return a / b; }                                          \
    static inline T fmod_##S(T a, T b) { return S##_fmod(a, b); }                               \
    /* NumPy's remainder (npy_divmod): the sign of the divisor, +-0 signed like it */            \
    static inline T mod_##S(T a, T b)                                                            \
    {                                                                                            \
        T m = S##_fmod(a, b);                                                                    \
        if (b == 0)                                                                              \
            return m;                                                                            \
        if (m != 0)                                                                              \
            return (b < 0) != (m < 0) ? m + b : m;                                               \
        return S##_copysign(0, b);                                                               \
    }                                                                                            \
    static inline T pow_##S(T a, T b) { return S##_pow(a, b); }                                  \
    /* NaN in either input propagates, like numpy.maximum */                                     \
    static inline T max_##S(T a, T b) { return a > b || a != a ? a : b; }                        \
    static inline T min_##S(T a, T b) { return a < b || a != a ? a : b; }

#define f32_fmod fmodf
#define f32_copysign copysignf
#define f32_pow powf
#define f64_fmod fmod
#define f64_copysign copysign
#define f64_pow pow
FLOAT_OPS(f32, float)
FLOAT_OPS(f64, double)

/* A function, not an inline comparison, so u8 does not warn "always false". */
static inline int is_neg(int64_t v) { return v < 0; }

/* Integer division and modulo: the divisor is never 0 here (checked first);
 * -1 is replaced by 1 in the division itself so INT_MIN / -1 cannot trap,
 * and the quotient is negated with wrap-around instead. Unsigned types
 * (SIGNED 0) divide and take remainders as unsigned values, never through
 * int64 (a u64 above INT64_MAX is not negative). */
#define INT_OPS(S, T, UT, SIGNED, TMIN, TMAX)                                                    \
    static inline T add_##S(T a, T b) { return (T)((UT)a + (UT)b); }                             \
    static inline T sub_##S(T a, T b) { return (T)((UT)a - (UT)b); }                             \
    static inline T mul_##S(T a, T b) { return (T)((UT)a * (UT)b); }                             \
    static inline T div_##S(T a, T b)                                                            \
    {                                                                                            \
        const int m1 = SIGNED && b == (T)-1;                                                     \
        T q = (T)(a / (m1 ? (T)1 : b));                                                          \
        return m1 ? (T)((UT)0 - (UT)q) : q;                                                      \
    }                                                                                            \
    static inline T fmod_##S(T a, T b) { return (T)(a % ((SIGNED && b == (T)-1) ? (T)1 : b)); }  \
    static inline T mod_##S(T a, T b)                                                            \
    {                                                                                            \
        T r = fmod_##S(a, b);                                                                    \
        return (SIGNED && r != 0 && is_neg(r) != is_neg(b)) ? (T)(r + b) : r;                      \
    }                                                                                            \
    static inline T pow_##S(T a, int64_t e) { return (T)ft_ipow_u64((int64_t)a, e); }               \
    static inline T powf_##S(T a, double e) { return (T)ft_ipow_f64((int64_t)a, e, TMIN, TMAX); }   \
    static inline T max_##S(T a, T b) { return a > b ? a : b; }                                  \
    static inline T min_##S(T a, T b) { return a < b ? a : b; }

/* Bitwise ops of the integer dtypes. Shifts are NumPy's (left_shift,
 * right_shift): a left shift wraps in the dtype; a right shift of a signed
 * value is arithmetic (fills with the sign bit); an amount that is negative
 * or at least the width shifts every bit out (0, or -1 for a negative value
 * shifted right; for an unsigned type (SIGNED 0) an amount above INT64_MAX
 * counts as large, and the fill is 0). */
#define BIT_OPS(S, T, UT, BITS, SIGNED)                                                          \
    static inline T band_##S(T a, T b) { return (T)(a & b); }                                    \
    static inline T bor_##S(T a, T b) { return (T)(a | b); }                                     \
    static inline T bxor_##S(T a, T b) { return (T)(a ^ b); }                                    \
    static inline T shl_##S(T a, T b) { return (uint64_t)(int64_t)b < BITS ? (T)((UT)a << b) : 0; } \
    static inline T shr_##S(T a, T b)                                                            \
    {                                                                                            \
        return (uint64_t)(int64_t)b < BITS ? (T)(a >> b) : (T)(SIGNED && is_neg(a) ? -1 : 0);    \
    }

INT_OPS(i8, int8_t, uint32_t, 1, INT8_MIN, INT8_MAX)
INT_OPS(i16, int16_t, uint32_t, 1, INT16_MIN, INT16_MAX)
INT_OPS(i32, int32_t, uint32_t, 1, INT32_MIN, INT32_MAX)
INT_OPS(i64, int64_t, uint64_t, 1, INT64_MIN, INT64_MAX)
INT_OPS(u8, uint8_t, uint32_t, 0, 0, UINT8_MAX)
INT_OPS(u16, uint16_t, uint32_t, 0, 0, UINT16_MAX)
INT_OPS(u32, uint32_t, uint32_t, 0, 0, UINT32_MAX)
/* u64: pow and powf of their own, below (the int64 bounds of INT_OPS cannot hold UINT64_MAX) */
#define pow_u64 pow_u64_int64
#define powf_u64 powf_u64_int64
INT_OPS(u64, uint64_t, uint64_t, 0, 0, INT64_MAX)
#undef pow_u64
#undef powf_u64
static inline uint64_t pow_u64(uint64_t a, int64_t e) { return ft_ipow_u64((int64_t)a, e); }
static inline uint64_t powf_u64(uint64_t a, double e)
{
    if (e == trunc(e) && fabs(e) < 9.2e18)
        return ft_ipow_u64((int64_t)a, (int64_t)e);
    return ft_sat_u64(pow((double)a, e));
}
BIT_OPS(i8, int8_t, uint32_t, 8, 1)
BIT_OPS(i16, int16_t, uint32_t, 16, 1)
BIT_OPS(i32, int32_t, uint32_t, 32, 1)
BIT_OPS(i64, int64_t, uint64_t, 64, 1)
BIT_OPS(u8, uint8_t, uint32_t, 8, 0)
BIT_OPS(u16, uint16_t, uint32_t, 16, 0)
BIT_OPS(u32, uint32_t, uint32_t, 32, 0)
BIT_OPS(u64, uint64_t, uint64_t, 64, 0)

/* prelu: the slope where x < 0 (NaN passes through, as x) */
static inline float prelu_f32(float a, float b) { return a < 0 ? a * b : a; }
static inline double prelu_f64(double a, double b) { return a < 0 ? a * b : a; }

#define CMP_OPS(S, T)                                                                            \
    static inline uint8_t eq_##S(T a, T b) { return a == b; }                                    \
    static inline uint8_t lt_##S(T a, T b) { return a < b; }                                     \
    static inline uint8_t le_##S(T a, T b) { return a <= b; }                                    \
    static inline uint8_t gt_##S(T a, T b) { return a > b; }                                     \
    static inline uint8_t ge_##S(T a, T b) { return a >= b; }

#define CMP_OPS_X(S, T, I, unused) CMP_OPS(S, T)
CPU_NUM_TYPES(CMP_OPS_X, 0)

static inline uint8_t eq_bool(uint8_t a, uint8_t b) { return (a != 0) == (b != 0); }
static inline uint8_t and_bool(uint8_t a, uint8_t b) { return (a != 0) & (b != 0); }
static inline uint8_t or_bool(uint8_t a, uint8_t b) { return (a != 0) | (b != 0); }
static inline uint8_t xor_bool(uint8_t a, uint8_t b) { return (a != 0) ^ (b != 0); }

/* Rows: OP_S for each op and dtype. */
#define ROW_SAME(S, T, I, OP) BIN_ROW(OP##_##S##_row, T, T, T, OP##_##S)
#define ROW_CMP(S, T, I, OP) BIN_ROW(OP##_##S##_row, T, T, uint8_t, OP##_##S)
CPU_NUM_TYPES(ROW_SAME, add)
CPU_NUM_TYPES(ROW_SAME, sub)
CPU_NUM_TYPES(ROW_SAME, mul)
CPU_NUM_TYPES(ROW_SAME, div)
CPU_NUM_TYPES(ROW_SAME, mod)
CPU_NUM_TYPES(ROW_SAME, fmod)
CPU_NUM_TYPES(ROW_SAME, max)
CPU_NUM_TYPES(ROW_SAME, min)
CPU_NUM_TYPES(ROW_CMP, eq)
CPU_NUM_TYPES(ROW_CMP, lt)
CPU_NUM_TYPES(ROW_CMP, le)
CPU_NUM_TYPES(ROW_CMP, gt)
CPU_NUM_TYPES(ROW_CMP, ge)
CPU_INT_TYPES(ROW_SAME, band)
CPU_INT_TYPES(ROW_SAME, bor)
CPU_INT_TYPES(ROW_SAME, bxor)
CPU_INT_TYPES(ROW_SAME, shl)
CPU_INT_TYPES(ROW_SAME, shr)
BIN_ROW(prelu_f32_row, float, float, float, prelu_f32)
BIN_ROW(prelu_f64_row, double, double, double, prelu_f64)
BIN_ROW(eq_bool_row, uint8_t, uint8_t, uint8_t, eq_bool)
BIN_ROW(and_bool_row, uint8_t, uint8_t, uint8_t, and_bool)
BIN_ROW(or_bool_row, uint8_t, uint8_t, uint8_t, or_bool)
BIN_ROW(xor_bool_row, uint8_t, uint8_t, uint8_t, xor_bool)
/* pow: a float base takes its exponent converted to the base's type; an
 * integer base takes an i64 or an f64 exponent. */
BIN_ROW(pow_f32_row, float, float, float, pow_f32)
BIN_ROW(pow_f64_row, double, double, double, pow_f64)
#define ROW_IPOW(S, T, I, unused)                                                                   \
    BIN_ROW(pow_##S##_row, T, int64_t, T, pow_##S)                                               \
    BIN_ROW(powf_##S##_row, T, double, T, powf_##S)
CPU_INT_TYPES(ROW_IPOW, 0)

#define ROWS(OP)                                                                                 \
    {                                                                                            \
        [FT_F32] = OP##_f32_row, [FT_F64] = OP##_f64_row, [FT_I8] = OP##_i8_row,                 \
        [FT_I16] = OP##_i16_row, [FT_I32] = OP##_i32_row, [FT_I64] = OP##_i64_row,               \
        [FT_U8] = OP##_u8_row, [FT_U16] = OP##_u16_row, [FT_U32] = OP##_u32_row,                 \
        [FT_U64] = OP##_u64_row,                                                                 \
    }

#define INT_ROWS(OP)                                                                             \
    {                                                                                            \
        [FT_I8] = OP##_i8_row, [FT_I16] = OP##_i16_row, [FT_I32] = OP##_i32_row,                 \
        [FT_I64] = OP##_i64_row, [FT_U8] = OP##_u8_row, [FT_U16] = OP##_u16_row,                 \
        [FT_U32] = OP##_u32_row, [FT_U64] = OP##_u64_row,                                        \
    }

static const ew_row bin_rows[FT_OP_COUNT][FT_DTYPE_COUNT] = {
    [FT_OP_ADD] = ROWS(add),
    [FT_OP_SUB] = ROWS(sub),
    [FT_OP_MUL] = ROWS(mul),
    [FT_OP_DIV] = ROWS(div),
    [FT_OP_MAX] = ROWS(max),
    [FT_OP_MIN] = ROWS(min),
    [FT_OP_EQUAL] = {[FT_F32] = eq_f32_row, [FT_F64] = eq_f64_row, [FT_I8] = eq_i8_row, [FT_I16] = eq_i16_row,
                     [FT_I32] = eq_i32_row, [FT_I64] = eq_i64_row, [FT_U8] = eq_u8_row, [FT_U16] = eq_u16_row,
                     [FT_U32] = eq_u32_row, [FT_U64] = eq_u64_row, [FT_BOOL] = eq_bool_row,
                     /* interned (graph/str.h): equal strings are equal pointers */
                     [FT_STRING] = eq_i64_row},
    [FT_OP_LESS] = ROWS(lt),
    [FT_OP_LESS_EQUAL] = ROWS(le),
    [FT_OP_GREATER] = ROWS(gt),
    [FT_OP_GREATER_EQUAL] = ROWS(ge),
    [FT_OP_AND] = {[FT_BOOL] = and_bool_row},
    [FT_OP_OR] = {[FT_BOOL] = or_bool_row},
    [FT_OP_XOR] = {[FT_BOOL] = xor_bool_row},
    [FT_OP_BITWISE_AND] = INT_ROWS(band),
    [FT_OP_BITWISE_OR] = INT_ROWS(bor),
    [FT_OP_BITWISE_XOR] = INT_ROWS(bxor),
    [FT_OP_PRELU] = {[FT_F32] = prelu_f32_row, [FT_F64] = prelu_f64_row},
};
static const ew_row shift_rows[2][FT_DTYPE_COUNT] = {INT_ROWS(shl), INT_ROWS(shr)};
static const ew_row mod_rows[2][FT_DTYPE_COUNT] = {ROWS(mod), ROWS(fmod)};
static const ew_row pow_rows[FT_DTYPE_COUNT] = ROWS(pow);
static const ew_row powf_rows[FT_DTYPE_COUNT] = INT_ROWS(powf);

/* where: a byte copy per element size; cond bytes other than 0 count as true.
 * The select is done on the bits, both sides loaded, so the loops vectorise
 * (a ?: that loads only the side it takes does not). */
#define WSEL(c, a, b) ((wt_)(((a) & (wt_)(0 - (wt_)((c) != 0))) | ((b) & (wt_) ~(wt_)(0 - (wt_)((c) != 0)))))
#define WHERE_ROW(NAME, T)                                                                       \
    FT_VCLONES static void NAME(void *yv, const void *const *xv, unsigned u, int64_t n)                     \
    {                                                                                            \
        const uint8_t *C = xv[0];                                                                \
        const T *A = xv[1], *B = xv[2];                                                          \
        T *Y = yv;                                                                               \
        typedef T wt_;                                                                           \
        if (u == 7) {                                                                            \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = WSEL(C[i], A[i], B[i]);   \
        } else if (u == 6) {                                                                     \
            const T *S = C[0] ? A : B;                                                           \
            memcpy(Y, S, (size_t)n * sizeof(T));                                                 \
        } else if (u == 3) { /* a mask over a tensor, the other side one value */               \
            const T b = B[0];                                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = WSEL(C[i], A[i], b);      \
        } else if (u == 5) {                                                                     \
            const T a = A[0];                                                                    \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) Y[i] = WSEL(C[i], a, B[i]);      \
        } else {                                                                                 \
            const int64_t sc = u & 1, sa = (u >> 1) & 1, sb = (u >> 2) & 1;                      \
            for (int64_t i = 0; i < n; i++)                                                      \
                Y[i] = C[i * sc] ? A[i * sa] : B[i * sb];                                        \
        }                                                                                        \
    }
WHERE_ROW(where1_row, uint8_t)
WHERE_ROW(where2_row, uint16_t)
WHERE_ROW(where4_row, uint32_t)
WHERE_ROW(where8_row, uint64_t)

/* ------------------------------- entry points ------------------------------ */

static const char *tname(const ft_kctx *k, const ft_node *n, int i) { return k->g->tensors[n->in[i]].name; }

static const char *index_str(int rank, const int64_t *idx, char *buf)
{
    ft_shape s = {.rank = rank};
    for (int d = 0; d < rank; d++)
        s.dims[d] = idx[d];
    return ft_shape_str(&s, buf);
}

/* Integer division or modulo: find the first zero divisor before computing,
 * and name the first output element it would produce. Every divisor element
 * is used when the output is not empty, and the output position of the first
 * zero in the divisor's order is the first bad output position. */
static ft_status check_divisor(ft_kctx *k, const ft_node *n, const ft_view *b, const ft_shape *oshape)
{
    const uint64_t cnt = ft_numel(&b->shape);
    const size_t sz = ft_dtype_size(b->dtype);
    const unsigned char *p = b->data;
    uint64_t at = cnt;
    for (uint64_t i = 0; i < cnt && at == cnt; i++) {
        int zero = 1;
        for (size_t c = 0; c < sz; c++)
            zero &= p[i * sz + c] == 0;
        if (zero)
            at = i;
    }
    if (at == cnt)
        return FT_OK;
    int64_t bidx[FT_MAX_RANK], oidx[FT_MAX_RANK], ost[FT_MAX_RANK];
    uint64_t rem = at, flat = 0;
    for (int d = b->shape.rank - 1; d >= 0; d--) {
        bidx[d] = (int64_t)(rem % (uint64_t)b->shape.dims[d]);
        rem /= (uint64_t)b->shape.dims[d];
    }
    ft_strides(oshape, ost);
    const int lead = oshape->rank - b->shape.rank;
    for (int d = 0; d < oshape->rank; d++) {
        oidx[d] = d < lead ? 0 : bidx[d - lead];
        flat += (uint64_t)(oidx[d] * ost[d]);
    }
    char bs[FT_SHAPE_STR], os[FT_SHAPE_STR];
    return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                       "integer division by zero at output element %llu %s: divisor input '%s' is 0 at "
                       "index %s",
                       (unsigned long long)flat, index_str(oshape->rank, oidx, os), tname(k, n, 1),
                       index_str(b->shape.rank, bidx, bs));
}

/* The exponent of pow in the type its row reads: the base's float type, or
 * i64 / f64 for an integer base. Returns the buffer to read (maybe the
 * input's own) and sets *owned when it had to be converted. */
static const void *pow_exponent(const ft_view *base, const ft_view *e, ft_dtype *edt, void **owned)
{
    ft_dtype want;
    if (ft_dtype_is_float(base->dtype))
        want = base->dtype;
    else
        want = ft_dtype_is_float(e->dtype) ? FT_F64 : FT_I64;
    *edt = want;
    *owned = NULL;
    if (e->dtype == want)
        return e->data;
    const uint64_t cnt = ft_numel(&e->shape);
    void *t = ft_malloc((size_t)(cnt ? cnt : 1) * ft_dtype_size(want));
    if (!t)
        return NULL;
    for (uint64_t i = 0; i < cnt; i++) {
        if (want == FT_I64)
            ((int64_t *)t)[i] = ft_load_i64(e->data, e->dtype, i);
        else
            ft_store_f64(t, want, i, ft_load_f64(e->data, e->dtype, i));
    }
    *owned = t;
    return t;
}

static void run_two(ft_kctx *k, ew_row fn, const ft_view *a, const void *bdata, const ft_shape *bshape,
                    ft_dtype bdt, ft_view *y, int64_t total)
{
    ew_plan pl;
    const void *x[2] = {a->data, bdata};
    const ft_shape *s[2] = {&a->shape, bshape};
    const size_t sz[2] = {ft_dtype_size(a->dtype), ft_dtype_size(bdt)};
    ew_setup(&pl, fn, y->data, &y->shape, ft_dtype_size(y->dtype), 2, x, s, sz);
    ew_run(&pl, total, k->threads);
}

ft_status cpu_binary(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_op op = n->op;
    const ft_dtype dt = in[0].dtype;
    ft_status bst;
    if (op == FT_OP_MUL && cpu_mul_blocked(k, n, in, out, &bst))
        return bst;
    ew_row fn;
    if (op == FT_OP_MOD)
        fn = mod_rows[n->params.binary.fmod][dt];
    else if (op == FT_OP_BIT_SHIFT)
        fn = shift_rows[n->params.binary.shift_right][dt];
    else if (op == FT_OP_POW)
        fn = ft_dtype_is_float(dt) || !ft_dtype_is_float(in[1].dtype) ? pow_rows[dt] : powf_rows[dt];
    else
        fn = bin_rows[op][dt];
    if (!fn)
        return cpu_no_kernel(k, n, dt);
    const int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    if ((op == FT_OP_DIV || op == FT_OP_MOD) && ft_dtype_is_int(dt)) {
        ft_status s = check_divisor(k, n, &in[1], &out[0].shape);
        if (s)
            return s;
    }
    if (op != FT_OP_POW) {
        run_two(k, fn, &in[0], in[1].data, &in[1].shape, in[1].dtype, &out[0], total);
        return FT_OK;
    }
    ft_dtype edt;
    void *owned;
    const void *e = pow_exponent(&in[0], &in[1], &edt, &owned);
    if (!e)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory converting the exponent '%s'",
                           tname(k, n, 1));
    run_two(k, fn, &in[0], e, &in[1].shape, edt, &out[0], total);
    free(owned);
    return FT_OK;
}

ft_status cpu_variadic(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_dtype dt = in[0].dtype;
    const ew_row fn = bin_rows[n->op][dt];
    if (!fn)
        return cpu_no_kernel(k, n, dt);
    const int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    if (n->n_in == 1) {
        if (out[0].data != in[0].data)
            memcpy(out[0].data, in[0].data, (size_t)total * ft_dtype_size(dt));
        return FT_OK;
    }
    /* Fold left into the output: max(max(x0, x1), x2) ... The output is
     * contiguous in its own shape, so after the first step it is read with
     * unit strides in place. */
    run_two(k, fn, &in[0], in[1].data, &in[1].shape, dt, &out[0], total);
    for (int i = 2; i < n->n_in; i++)
        run_two(k, fn, &out[0], in[i].data, &in[i].shape, dt, &out[0], total);
    return FT_OK;
}

ft_status cpu_where(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const size_t es = ft_dtype_size(out[0].dtype);
    ew_row fn = es == 1 ? where1_row : es == 2 ? where2_row : es == 4 ? where4_row : es == 8 ? where8_row : NULL;
    if (!fn)
        return cpu_no_kernel(k, n, out[0].dtype);
    const int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    ew_plan pl;
    const void *x[3] = {in[0].data, in[1].data, in[2].data};
    const ft_shape *s[3] = {&in[0].shape, &in[1].shape, &in[2].shape};
    const size_t sz[3] = {1, es, es};
    ew_setup(&pl, fn, out[0].data, &out[0].shape, es, 3, x, s, sz);
    ew_run(&pl, total, k->threads);
    return FT_OK;
}
