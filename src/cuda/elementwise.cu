/* CUDA kernels of the one-input elementwise ops (cu_unary) and of cast
 * (cu_cast), on the engine of elementwise.cuh. Reference: src/cpu/unary.c.
 * Every op reads and writes contiguous tensors of one shape, so only the flat
 * kernel is instantiated here. */
#include "elementwise.cuh"
#include "../runtime/numeric.h"

namespace {

/* ----------------------------- one-input ops ------------------------------ */

/* An op code beyond the op enum: gelu with approximate="tanh". */
enum { UN_GELU_TANH = FT_OP_COUNT };

/* Op families of cu_unary. The cheap ones are kept apart from the libm ones
 * so that relu & co. keep the register count (and occupancy) of a copy. */
enum { G_NONE, G_CHEAP, G_MATH, G_SIGNED, G_CLIP, G_NOT, G_CLASS, G_BITS };

/* Attributes in the arithmetic type, converted on the host as the CPU does
 * ((TI)p->alpha, (TI)(gamma * alpha), ...). */
template <class A> struct un_par {
    A al, be, ga, gal, lo, hi, la, bi; /* la, bi: shrink's lambd and bias */
};

template <class A> EW_HD A un_cheap(int op, A x, const un_par<A> &p)
{
    const A zero = 0, one = 1;
    switch (op) {
    case FT_OP_NEG: return -x;
    case FT_OP_ABS: return m_fabs(x);
    /* sign(-0) is +0 and sign(NaN) is NaN, as the CPU's select chain */
    case FT_OP_SIGN: return x > zero ? one : x < zero ? -one : x == zero ? zero : x;
    case FT_OP_RELU: return x < zero ? zero : x;
    case FT_OP_SQRT: return m_sqrt(x);
    case FT_OP_RSQRT: return one / m_sqrt(x);
    case FT_OP_RECIPROCAL: return one / x;
    case FT_OP_FLOOR: return m_floor(x);
    case FT_OP_CEIL: return m_ceil(x);
    case FT_OP_ROUND: return m_rint(x); /* default rounding mode: half to even */
    case FT_OP_SOFTSIGN: return x / (one + m_fabs(x));
    case FT_OP_HARD_SWISH: return x * clampv(x + A(3), zero, A(6)) / A(6);
    case FT_OP_LEAKY_RELU: return x * (x < zero ? p.al : one);
    case FT_OP_HARD_SIGMOID: return clampv(add_rn(mul_rn(p.al, x), p.be), zero, one);
    case FT_OP_THRESHOLDED_RELU: return x > p.al ? x : zero;
    /* NaN compares false both ways and gives 0, as the CPU */
    case FT_OP_SHRINK: return x < -p.la ? x + p.bi : x > p.la ? x - p.bi : zero;
    case FT_OP_CLIP: return clampv(x, p.lo, p.hi);
    default: return x;
    }
}

template <class A> EW_HD A un_math(int op, A x, const un_par<A> &p)
{
    const A zero = 0, one = 1;
    switch (op) {
    /* 1/(1+exp(-x)): exp(-x) overflows only where the result is below the
     * smallest normal, giving 0 */
    case FT_OP_SIGMOID: return one / (one + m_exp(-x));
    case FT_OP_TANH: return m_tanh(x);
    case FT_OP_EXP: return m_exp(x);
    case FT_OP_LOG: return m_log(x);
    case FT_OP_SIN: return m_sin(x);
    case FT_OP_COS: return m_cos(x);
    case FT_OP_ERF: return m_erf(x);
    case FT_OP_SOFTPLUS: return m_log1p(m_exp(-m_fabs(x))) + (x > zero ? x : zero);
    case FT_OP_SILU: return x / (one + m_exp(-x));
    case FT_OP_SWISH: return x / (one + m_exp(-p.al * x));
    case FT_OP_TAN: return m_tan(x);
    case FT_OP_ASIN: return m_asin(x);
    case FT_OP_ACOS: return m_acos(x);
    case FT_OP_ATAN: return m_atan(x);
    case FT_OP_SINH: return m_sinh(x);
    case FT_OP_COSH: return m_cosh(x);
    case FT_OP_ASINH: return m_asinh(x);
    case FT_OP_ACOSH: return m_acosh(x);
    case FT_OP_ATANH: return m_atanh(x);
    case FT_OP_MISH: {
        /* tanh(log1p(E)) = (E^2+2E)/(E^2+2E+2), E = exp(x); for x >= 0 divided
         * through by E^2, in t = exp(-|x|): no overflow, no cancellation */
        const A t = m_exp(-m_fabs(x));
        const A u = x >= zero ? one : t, v = x >= zero ? t : one;
        const A num = add_rn(A(2) * t, mul_rn(u, u));
        return x * (num / add_rn(num, mul_rn(A(2) * v, v)));
    }
    case FT_OP_ELU: {
        const A t = m_expm1(x);
        return x < zero ? p.al * t : x;
    }
    case FT_OP_CELU: {
        const A t = m_expm1(x / p.al);
        return x > zero ? x : p.al * t;
    }
    case FT_OP_SELU: {
        const A t = m_expm1(x);
        return x > zero ? p.ga * x : p.gal * t;
    }
    /* erfc keeps the tail accurate for negative x, where 1 + erf(.) cancels */
    case FT_OP_GELU: return A(0.5) * x * m_erfc(-x * A(0.70710678118654752440));
    /* 0.5*(1+tanh(u)) == 1/(1+exp(-2u)), which does not cancel */
    case UN_GELU_TANH: {
        const A cube = mul_rn(A(0.044715) * x * x, x);
        return x / (one + m_exp(A(-1.5957691216057307117) * add_rn(x, cube)));
    }
    default: return x;
    }
}

/* Functor contract: TA/TB/TC are the storage types of inputs 0..2 (NIN of
 * them are real; the others are placeholders), TO the output's; the call
 * gets raw storage values and the flat output position. */
template <class T, bool MATH> struct UnFloat {
    typedef T TA, TO;
    typedef uint8_t TB, TC;
    enum { NIN = 1 };
    typedef typename cu_acc<T>::type A;
    int op;
    un_par<A> p;
    EW_HD T operator()(T x, TB, TC, int64_t) const
    {
        if constexpr (MATH)
            return narrow<T>(un_math<A>(op, widen(x), p));
        else
            return narrow<T>(un_cheap<A>(op, widen(x), p));
    }
};

/* is_nan / is_inf */
template <class T> struct UnClass {
    typedef T TA;
    typedef uint8_t TB, TC, TO;
    enum { NIN = 1 };
    typedef typename cu_acc<T>::type A;
    int inf;
    EW_HD uint8_t operator()(T x, TB, TC, int64_t) const
    {
        const A v = widen(x);
        return inf ? (uint8_t)(m_fabs(v) == (A)INFINITY) : (uint8_t)(v != v);
    }
};

/* neg/abs/sign wrap like NumPy (done in unsigned); clip bounds arrive in range
 * with lo <= hi; bitwise_not of every integer dtype. */
template <class T> struct UnInt {
    typedef T TA, TO;
    typedef uint8_t TB, TC;
    enum { NIN = 1 };
    typedef typename wrap_of<T>::type UT;
    int op;
    T lo, hi;
    EW_HD T operator()(T x, TB, TC, int64_t) const
    {
        switch (op) {
        case FT_OP_NEG: return (T)((UT)0 - (UT)x);
        case FT_OP_ABS: return lt0(x) ? (T)((UT)0 - (UT)x) : x;
        case FT_OP_SIGN: return (T)((int)(x > 0) - (int)lt0(x));
        case FT_OP_CLIP: return x < lo ? lo : (x > hi ? hi : x);
        case FT_OP_BITWISE_NOT: return (T)~x;
        default: return x;
        }
    }
};

struct UnNot {
    typedef uint8_t TA, TB, TC, TO;
    enum { NIN = 1 };
    EW_HD uint8_t operator()(uint8_t x, TB, TC, int64_t) const { return x == 0; }
};

/* ---------------------------------- cast ----------------------------------- */

/* f32 -> f16/bf16 with the CPU's bits, NaN payloads included (the hardware
 * conversions return one canonical NaN). */
EW_HD __half f16_of(float f)
{
    if (f == f)
        return __float2half_rn(f);
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint16_t h = (uint16_t)(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x3ffu));
    __half r;
    memcpy((void *)&r, &h, 2);
    return r;
}

EW_HD __nv_bfloat16 bf16_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t h;
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        h = (uint16_t)((x >> 16) | 0x40u);
    } else {
        x += 0x7fffu + ((x >> 16) & 1u);
        h = (uint16_t)(x >> 16);
    }
    __nv_bfloat16 r;
    memcpy((void *)&r, &h, 2);
    return r;
}

/* f16 -> f32 keeping a NaN's payload, as the CPU's widening does. */
EW_HD float f32_of(__half x)
{
    uint16_t h;
    memcpy(&h, (const void *)&x, 2);
    if ((h & 0x7c00u) != 0x7c00u || !(h & 0x3ffu))
        return __half2float(x);
    const uint32_t u = ((uint32_t)(h & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ffu) << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* float -> int: truncate toward zero, NaN -> 0, saturate. */
template <class TD, class TS> EW_HD TD f_to_int(TS v)
{
    if constexpr (std::is_same<TD, uint64_t>::value) {
        return (TD)ft_sat_u64((double)v);
    } else {
        if (v != v)
            return (TD)0;
        if (v < (TS)ilim<TD>::flo())
            return (TD)ilim<TD>::lo();
        if (v >= (TS)ilim<TD>::fhi())
            return (TD)ilim<TD>::hi();
        return (TD)v;
    }
}

/* Every source reaches its destination from one of three exact forms: an
 * int64 (integer and bool sources; int -> int wraps), a float (f16, bf16,
 * f32), a double (f64). These are the CPU's rules per source type. */
EW_HD float to_f32_once(int64_t v) { return ft_i64_to_f32_odd(v); }
EW_HD float to_f32_once(uint64_t v) { return ft_u64_to_f32_odd(v); }
EW_HD float to_f32_once(float v) { return v; }
EW_HD float to_f32_once(double v) { return ft_f64_to_f32_odd(v); }

/* V is int64_t, uint64_t (a u64 source), float or double; f16 and bf16 round through f32 once more
 * (to_f32_once rounds to odd, so the two roundings make one). */
template <ft_dtype D, class V> EW_HD typename st_of<D>::type cast_from(V v)
{
    typedef typename st_of<D>::type TD;
    if constexpr (D == FT_F16)
        return f16_of(to_f32_once(v));
    else if constexpr (D == FT_BF16)
        return bf16_of(to_f32_once(v));
    else if constexpr (D == FT_F32 || D == FT_F64)
        return (TD)v;
    else if constexpr (D == FT_BOOL)
        return (uint8_t)(v != 0);
    else if constexpr (is_fp<V>::value)
        return f_to_int<TD>(v);
    else
        return (TD)v;
}

template <ft_dtype S, ft_dtype D> struct Cast {
    typedef typename st_of<S>::type TA;
    typedef typename st_of<D>::type TO;
    typedef uint8_t TB, TC;
    enum { NIN = 1 };
    EW_HD TO operator()(TA x, TB, TC, int64_t) const
    {
        if constexpr (S == FT_BOOL)
            return cast_from<D>((int64_t)(x != 0));
        else if constexpr (S == FT_F64 || S == FT_U64)
            return cast_from<D>(x);
        else if constexpr (S == FT_F16)
            return cast_from<D>(f32_of(x));
        else if constexpr (is_fp<TA>::value)
            return cast_from<D>(widen(x));
        else
            return cast_from<D>((int64_t)x);
    }
};

/* ---------------------------------- unary ---------------------------------- */

static int un_group(int op)
{
    switch (op) {
    case FT_OP_RELU: case FT_OP_SQRT: case FT_OP_RSQRT: case FT_OP_RECIPROCAL: case FT_OP_FLOOR:
    case FT_OP_CEIL: case FT_OP_ROUND: case FT_OP_SOFTSIGN: case FT_OP_HARD_SWISH: case FT_OP_LEAKY_RELU:
    case FT_OP_HARD_SIGMOID: case FT_OP_THRESHOLDED_RELU: case FT_OP_SHRINK:
        return G_CHEAP;
    case FT_OP_SIGMOID: case FT_OP_TANH: case FT_OP_EXP: case FT_OP_LOG: case FT_OP_SIN: case FT_OP_COS:
    case FT_OP_ERF: case FT_OP_SOFTPLUS: case FT_OP_SILU: case FT_OP_MISH: case FT_OP_ELU: case FT_OP_CELU:
    case FT_OP_SELU: case FT_OP_GELU: case UN_GELU_TANH: case FT_OP_SWISH: case FT_OP_TAN: case FT_OP_ASIN:
    case FT_OP_ACOS: case FT_OP_ATAN: case FT_OP_SINH: case FT_OP_COSH: case FT_OP_ASINH: case FT_OP_ACOSH:
    case FT_OP_ATANH:
        return G_MATH;
    case FT_OP_NEG: case FT_OP_ABS: case FT_OP_SIGN: return G_SIGNED;
    case FT_OP_CLIP: return G_CLIP;
    case FT_OP_NOT: return G_NOT;
    case FT_OP_IS_NAN: case FT_OP_IS_INF: return G_CLASS;
    case FT_OP_BITWISE_NOT: return G_BITS;
    default: return G_NONE;
    }
}

/* alpha, beta, gamma, min, max, lambd, bias of the node (0 / -inf / +inf when the op has none). */
struct un_attrs {
    double v[7];
};

template <class X, class T>
static ft_status un_float(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int code, int grp,
                          const un_attrs &at)
{
    typedef typename cu_acc<T>::type A;
    const ft_view *ins[3] = {&in[0], NULL, NULL};
    if (grp == G_CLASS) {
        UnClass<T> f{};
        f.inf = code == FT_OP_IS_INF;
        return ew_run<X, false>(k, n, f, out, ins);
    }
    un_par<A> p;
    p.al = (A)at.v[0];
    p.be = (A)at.v[1];
    p.ga = (A)at.v[2];
    p.gal = (A)(at.v[2] * at.v[0]);
    p.lo = (A)at.v[3];
    p.hi = (A)at.v[4];
    p.la = (A)at.v[5];
    p.bi = (A)at.v[6];
    if (grp == G_MATH) {
        UnFloat<T, true> f{};
        f.op = code;
        f.p = p;
        return ew_run<X, false>(k, n, f, out, ins);
    }
    UnFloat<T, false> f{};
    f.op = code;
    f.p = p;
    return ew_run<X, false>(k, n, f, out, ins);
}

template <class X, class T>
static ft_status un_int(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int code, int grp,
                        const un_attrs &at)
{
    const ft_view *ins[3] = {&in[0], NULL, NULL};
    UnInt<T> f{};
    f.op = code;
    if (grp == G_CLIP) {
        /* the dtype's bounds, from graph/infer_elementwise.c */
        f.lo = (T)n->params.unary.ilo;
        f.hi = (T)n->params.unary.ihi;
    }
    return ew_run<X, false>(k, n, f, out, ins);
}

template <class X, class T>
static ft_status un_typed(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int code, int grp,
                          const un_attrs &at)
{
    if constexpr (is_fp<T>::value)
        return un_float<X, T>(k, n, in, out, code, grp, at);
    else
        return un_int<X, T>(k, n, in, out, code, grp, at);
}

template <class X> static ft_status unary_impl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_op op = n->op;
    const ft_dtype dt = in[0].dtype;
    const ft_unary_params *up = &n->params.unary;
    un_attrs at = {{up->alpha, up->beta, up->gamma, up->lo, up->hi, up->lambd, up->bias}};
    const int code = op == FT_OP_GELU && up->gelu_tanh ? (int)UN_GELU_TANH : (int)op;
    const int grp = un_group(code);
    bool ok;
    switch (grp) {
    case G_CHEAP: case G_MATH: case G_CLASS: ok = ft_dtype_is_float(dt); break;
    case G_SIGNED: ok = ft_dtype_in(dt, FT_DT_SIGNED); break;
    case G_CLIP: ok = ft_dtype_in(dt, FT_DT_NUM); break;
    case G_BITS: ok = ft_dtype_is_int(dt); break;
    case G_NOT: ok = dt == FT_BOOL; break;
    default: ok = false; break;
    }
    if (!ok)
        return no_kernel(k, n, dt);
    if (dt == FT_BOOL) {
        const ft_view *ins[3] = {&in[0], NULL, NULL};
        return ew_run<X, false>(k, n, UnNot(), out, ins);
    }
    EW_NUM_DISPATCH(dt, un_typed, k, n, in, out, code, grp, at)
    return no_kernel(k, n, dt);
}

/* ---------------------------------- cast ----------------------------------- */

template <class X, ft_dtype S, ft_dtype D>
static ft_status cast_to(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if constexpr (S == D && S != FT_BOOL) {
        /* a plain copy; bool -> bool takes the kernel, which makes every byte 0 or 1 */
        if (out->data == in->data)
            return FT_OK;
        return X::copy(k, n, out->data, in->data, (size_t)ft_numel(&in->shape) * ft_dtype_size(S));
    } else {
        const ft_view *ins[3] = {in, NULL, NULL};
        return ew_run<X, false>(k, n, Cast<S, D>(), out, ins);
    }
}

/* The case labels of a switch over the dtypes the cast runs between, each
 * returning F(FT_...) (the low-precision dtypes are cast on the CPU only:
 * they break out of the switch). */
#define CAST_CASES(F)                    \
    case FT_F16: return F(FT_F16);       \
    case FT_BF16: return F(FT_BF16);     \
    case FT_F32: return F(FT_F32);       \
    case FT_F64: return F(FT_F64);       \
    case FT_I8: return F(FT_I8);         \
    case FT_I16: return F(FT_I16);       \
    case FT_I32: return F(FT_I32);       \
    case FT_I64: return F(FT_I64);       \
    case FT_U8: return F(FT_U8);         \
    case FT_U16: return F(FT_U16);       \
    case FT_U32: return F(FT_U32);       \
    case FT_U64: return F(FT_U64);       \
    case FT_BOOL: return F(FT_BOOL);     \
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break

template <class X, ft_dtype S> static ft_status cast_from(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
#define CAST_TO(D) cast_to<X, S, D>(k, n, in, out)
    switch (out->dtype) {
        CAST_CASES(CAST_TO);
    }
#undef CAST_TO
    return no_kernel(k, n, in->dtype);
}

template <class X> static ft_status cast_impl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (ft_numel(&in[0].shape) == 0)
        return FT_OK;
    if (ft_dtype_in(out[0].dtype, FT_DT_LOWP)) /* the low-precision dtypes are cast on the CPU only */
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "no CUDA cast from %s to %s (the low-precision dtypes are "
                           "cast on the CPU: --device cpu)", ft_dtype_name(in[0].dtype), ft_dtype_name(out[0].dtype));
#define CAST_FROM(D) cast_from<X, D>(k, n, &in[0], &out[0])
    switch (in[0].dtype) {
        CAST_CASES(CAST_FROM);
    }
#undef CAST_FROM
    return no_kernel(k, n, in[0].dtype);
}

} // namespace

CU_KFN(cu_unary) { return unary_impl<gpu_exec>(k, n, in, out); }
CU_KFN(cu_cast) { return cast_impl<gpu_exec>(k, n, in, out); }
