/* CUDA kernels of the broadcasting elementwise ops: cu_binary (arithmetic,
 * comparisons, logic), cu_variadic (max/min over any number of inputs) and
 * cu_where, on the engine of elementwise.cuh. The bitwise ops and prelu are
 * cu_binary's too. Reference: src/cpu/binary.c. */
#include "elementwise.cuh"
#include "../runtime/numeric.h"
extern "C" {
#include "../graph/dtype_load.h"
}

namespace {

/* ------------------------------- binary ops -------------------------------- */

/* The operand types of a binary functor (ew_run's F): a of TA, b of TB, the
 * result TO; TC, a third operand's, is unused. */
template <class A_, class B_, class O_> struct binop {
    typedef A_ TA;
    typedef B_ TB;
    typedef O_ TO;
    typedef uint8_t TC;
    enum { NIN = 2 };
};

/* B_PRELU: floats only; B_AND and after: integers only. */
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_MOD, B_FMOD, B_PRELU, B_AND, B_OR, B_XOR, B_SHL, B_SHR };

template <class T> struct ArithF : binop<T, T, T> {
    typedef typename cu_acc<T>::type A;
    int op;
    EW_HD T operator()(T xa, T xb, uint8_t, int64_t) const
    {
        const A a = widen(xa), b = widen(xb);
        A r;
        switch (op) {
        case B_ADD: r = a + b; break;
        case B_SUB: r = a - b; break;
        case B_MUL: r = a * b; break;
        /* NaN in either input propagates, like numpy.maximum */
        case B_MAX: r = a > b || a != a ? a : b; break;
        case B_MIN: r = a < b || a != a ? a : b; break;
        /* prelu: the slope where x < 0 (NaN passes through, as x) */
        case B_PRELU: r = a < A(0) ? a * b : a; break;
        default: r = a / b; break;
        }
        return narrow<T>(r);
    }
};

/* NumPy's remainder (sign of the divisor, a zero signed like it), or C fmod. */
template <class T> struct ModF : binop<T, T, T> {
    typedef typename cu_acc<T>::type A;
    int fmod_;
    EW_HD T operator()(T xa, T xb, uint8_t, int64_t) const
    {
        const A a = widen(xa), b = widen(xb);
        const A m = m_fmod(a, b);
        A r;
        if (fmod_ || b == 0)
            r = m;
        else if (m != 0)
            r = (b < 0) != (m < 0) ? m + b : m;
        else
            r = m_copysign(A(0), b);
        return narrow<T>(r);
    }
};

/* Integer add/sub/mul wrap around. The bitwise ops and NumPy's shifts, as
 * the CPU's BIT_OPS: a left shift wraps; a signed right shift is arithmetic;
 * an amount that is negative or at least the width shifts every bit out. */
template <class T> struct ArithI : binop<T, T, T> {
    typedef typename wrap_of<T>::type UT;
    int op;
    EW_HD T operator()(T a, T b, uint8_t, int64_t) const
    {
        const bool in_range = (unsigned long long)(long long)b < (unsigned long long)(sizeof(T) * 8);
        switch (op) {
        case B_AND: return (T)(a & b);
        case B_OR: return (T)(a | b);
        case B_XOR: return (T)(a ^ b);
        case B_SHL: return in_range ? (T)((UT)a << b) : (T)0;
        case B_SHR: return in_range ? (T)(a >> b) : (T)(lt0(a) ? -1 : 0);
        case B_ADD: return (T)((UT)a + (UT)b);
        case B_SUB: return (T)((UT)a - (UT)b);
        case B_MUL: return (T)((UT)a * (UT)b);
        case B_MAX: return a > b ? a : b;
        case B_MIN: return a < b ? a : b;
        default: return a;
        }
    }
};

/* The smallest output position with a zero divisor, which is where the CPU
 * reports (the first zero of the divisor in its own order). The plain read
 * first keeps an all-zero divisor from queueing an atomic per element. */
EW_HD void note_zero(ull *first, int64_t pos)
{
#ifdef __CUDA_ARCH__
    if ((ull)pos < *(volatile ull *)first)
        atomicMin(first, (ull)pos);
#else
    if ((ull)pos < *first)
        *first = (ull)pos;
#endif
}

/* Integer div, mod and fmod. Division truncates toward zero; a divisor of -1
 * is replaced by 1 and the quotient negated with wrap-around, so INT_MIN / -1
 * neither traps nor overflows. A zero divisor gives 0 and is reported. */
template <class T> struct DivI : binop<T, T, T> {
    typedef typename wrap_of<T>::type UT;
    int op;
    ull *first;
    EW_HD T operator()(T a, T b, uint8_t, int64_t pos) const
    {
        if (b == 0) {
            note_zero(first, pos);
            return 0;
        }
        const bool m1 = std::is_signed<T>::value && b == (T)-1;
        if (op == B_DIV) {
            const T q = (T)(a / (m1 ? (T)1 : b));
            return m1 ? (T)((UT)0 - (UT)q) : q;
        }
        const T r = (T)(a % (m1 ? (T)1 : b));
        if (op == B_FMOD)
            return r;
        return (r != 0 && lt0(r) != lt0(b)) ? (T)(r + b) : r;
    }
};

/* Comparisons as a mask over (a < b, a == b, a > b); NaN sets none of them. */
enum { CMP_LT = 1, CMP_EQ = 2, CMP_GT = 4 };

template <class T> struct Cmp : binop<T, T, uint8_t> {
    unsigned mask;
    EW_HD uint8_t operator()(T xa, T xb, uint8_t, int64_t) const
    {
        const typename cu_acc<T>::type a = widen(xa), b = widen(xb);
        const unsigned r = (unsigned)(a < b) | (unsigned)(a == b) << 1 | (unsigned)(a > b) << 2;
        return (r & mask) != 0;
    }
};

/* Bool ops as a truth table indexed by (a != 0) * 2 + (b != 0). */
enum { LOGIC_AND = 0x8, LOGIC_OR = 0xe, LOGIC_XOR = 0x6, LOGIC_EQ = 0x9 };

struct Logic : binop<uint8_t, uint8_t, uint8_t> {
    unsigned table;
    EW_HD uint8_t operator()(uint8_t a, uint8_t b, uint8_t, int64_t) const
    {
        return (table >> ((unsigned)(a != 0) * 2u + (unsigned)(b != 0))) & 1u;
    }
};

/* Float pow; the exponent E is the base's storage type or its arithmetic
 * type (the CPU converts every other exponent dtype to that first). */
template <class T, class E> struct PowF : binop<T, E, T> {
    typedef typename cu_acc<T>::type A;
    EW_HD T operator()(T xa, E xe, uint8_t, int64_t) const { return narrow<T>(m_pow(widen(xa), (A)widen(xe))); }
};

/* Integer pow; E is double (a float exponent), or an integer type read as int64. */
template <class T, class E> struct PowI : binop<T, E, T> {
    EW_HD T operator()(T a, E e, uint8_t, int64_t) const
    {
        if constexpr (std::is_floating_point<E>::value && std::is_same<T, uint64_t>::value) {
            const double d = (double)e; /* as the CPU's powf_u64 */
            if (d == trunc(d) && fabs(d) < 9.2e18)
                return (T)ft_ipow_u64((int64_t)a, (int64_t)d);
            return (T)ft_sat_u64(pow((double)a, d));
        } else if constexpr (std::is_floating_point<E>::value)
            return (T)ft_ipow_f64((int64_t)a, (double)e, ilim<T>::lo(), ilim<T>::hi());
        else
            return (T)ft_ipow_u64((int64_t)a, (int64_t)e);
    }
};

/* where: values moved as bits of their size; a nonzero condition byte is true. */
template <class T> struct Where {
    typedef uint8_t TA;
    typedef T TB, TC, TO;
    enum { NIN = 3 };
    EW_HD T operator()(uint8_t c, T a, T b, int64_t) const { return c ? a : b; }
};

/* pow's exponent converted to the type its functor reads, as the CPU's
 * pow_exponent does (the loads of graph/dtype_load.h, then a plain
 * conversion). */

template <class W> EW_HD void conv_thread(W *dst, const void *src, int sdt, int64_t cnt, int64_t t0, int64_t nth)
{
    for (int64_t i = t0; i < cnt; i += nth) {
        if constexpr (std::is_same<W, int64_t>::value)
            dst[i] = ft_ld_int(src, sdt, i);
        else
            dst[i] = (W)ft_ld_f64(src, sdt, i);
    }
}

template <class W> __global__ void __launch_bounds__(CU_BLOCK) conv_kernel(W *dst, const void *src, int sdt, int64_t cnt)
{
    conv_thread<W>(dst, src, sdt, cnt, (int64_t)blockIdx.x * CU_BLOCK + threadIdx.x, (int64_t)gridDim.x * CU_BLOCK);
}

/* Integer division by zero: the output position found by the kernel, turned
 * into a report. value is the divisor (0); lo = hi = the flat index of that
 * divisor element in its own tensor, so the host can name it as the CPU does. */
struct dz_info {
    int node;
    int rank;                  /* the output's */
    int64_t dims[FT_MAX_RANK]; /* the output's */
    int64_t bst[FT_MAX_RANK];  /* the divisor's strides read through broadcasting */
};

EW_HD void dz_thread(const ull *first, cu_derr *derr, const dz_info &d)
{
    const ull p = *first;
    if (p == ~0ull)
        return;
    ull rem = p;
    long long bidx = 0;
    for (int i = d.rank - 1; i >= 0; i--) {
        const ull dim = (ull)d.dims[i];
        bidx += (long long)(rem % dim) * d.bst[i];
        rem /= dim;
    }
#ifdef __CUDA_ARCH__
    cu_report(derr, CU_DERR_DIVZERO, d.node, (long long)p, 0, bidx, bidx);
#else
    if (derr->code == CU_DERR_NONE) {
        derr->code = CU_DERR_DIVZERO;
        derr->node = d.node;
        derr->pos = (long long)p;
        derr->value = 0;
        derr->lo = derr->hi = bidx;
    }
#endif
}

__global__ void dz_kernel(const ull *first, cu_derr *derr, const __grid_constant__ dz_info d) { dz_thread(first, derr, d); }

/* gpu_exec plus the two launches only the binary ops need. */
struct gpu_exec_bin : gpu_exec {
    static ft_status divzero(ft_kctx *k, const ft_node *n, const ull *first, const dz_info &d)
    {
        dz_kernel<<<1, 1, 0, k->be->stream>>>(first, k->be->derr_dev, d);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    template <class W>
    static ft_status convert(ft_kctx *k, const ft_node *n, W *dst, const void *src, ft_dtype sdt, int64_t cnt)
    {
        conv_kernel<W><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, k->be->stream>>>(dst, src, (int)sdt, cnt);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
};

/* --------------------------------- binary ---------------------------------- */

/* Integer div / mod / fmod: the first bad position goes through an 8-byte
 * slot of the workspace (all ones = none found) to one report. */
template <class X, class T>
static ft_status int_div(ft_kctx *k, const ft_node *n, const ft_view *out, const ft_view *const *ins, int code)
{
    void *slot;
    ft_status s = X::scratch(k, n, sizeof(ull), &slot);
    if (s)
        return s;
    if ((s = X::set_ones(k, n, slot, sizeof(ull))))
        return s;
    DivI<T> f{};
    f.op = code;
    f.first = (ull *)slot;
    if ((s = ew_run<X, true>(k, n, f, out, ins)))
        return s;
    dz_info d;
    memset(&d, 0, sizeof d);
    d.node = cu_node_index(k, n);
    d.rank = out->shape.rank;
    const cu_shape bs = cu_shape_bcast(&ins[1]->shape, &out->shape);
    for (int i = 0; i < d.rank; i++) {
        d.dims[i] = out->shape.dims[i];
        d.bst[i] = bs.strides[i];
    }
    return X::divzero(k, n, (const ull *)slot, d);
}

/* add, sub, mul, div, mod/fmod, the bitwise ops, prelu (code B_*), and
 * max/min for cu_variadic. */
template <class X, class T>
static ft_status arith_typed(ft_kctx *k, const ft_node *n, const ft_view *out, const ft_view *const *ins, int code)
{
    if constexpr (is_fp<T>::value) {
        if (code >= B_AND)
            return no_kernel(k, n, out->dtype);
        if (code == B_MOD || code == B_FMOD) {
            ModF<T> f{};
            f.fmod_ = code == B_FMOD;
            return ew_run<X, true>(k, n, f, out, ins);
        }
        ArithF<T> f{};
        f.op = code;
        return ew_run<X, true>(k, n, f, out, ins);
    } else {
        if (code == B_DIV || code == B_MOD || code == B_FMOD)
            return int_div<X, T>(k, n, out, ins, code);
        if (code == B_PRELU)
            return no_kernel(k, n, out->dtype);
        ArithI<T> f{};
        f.op = code;
        return ew_run<X, true>(k, n, f, out, ins);
    }
}

/* arith_typed over the storage type of dt; no kernel for bool and the
 * small dtypes. */
template <class X>
static ft_status arith_num(ft_kctx *k, const ft_node *n, const ft_view *out, const ft_view *const *ins, int code,
                           ft_dtype dt)
{
    EW_NUM_DISPATCH(dt, arith_typed, k, n, out, ins, code)
    return no_kernel(k, n, dt);
}

template <class X, class T>
static ft_status cmp_typed(ft_kctx *k, const ft_node *n, const ft_view *out, const ft_view *const *ins, unsigned mask)
{
    Cmp<T> f{};
    f.mask = mask;
    return ew_run<X, true>(k, n, f, out, ins);
}

/* The exponent as dtype want: in place when it has that dtype already, else
 * converted into the workspace. */
template <class X, class W>
static ft_status pow_exponent(ft_kctx *k, const ft_node *n, const ft_view *e, ft_dtype want, ft_view *res)
{
    *res = *e;
    if (e->dtype == want)
        return FT_OK;
    const int64_t cnt = (int64_t)ft_numel(&e->shape);
    void *p;
    ft_status s = X::scratch(k, n, (size_t)(cnt ? cnt : 1) * sizeof(W), &p);
    if (s)
        return s;
    res->data = p;
    res->dtype = want;
    if (cnt == 0)
        return FT_OK;
    return X::template convert<W>(k, n, (W *)p, e->data, e->dtype, cnt);
}

/* A float base reads its exponent in its own dtype or in its arithmetic type
 * (f32, or f64 for an f64 base); an integer base in its own dtype, i64, or f64
 * for a float exponent. */
template <class X, class T> static ft_status pow_typed(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_view *ins[3] = {&in[0], &in[1], NULL};
    ft_view e;
    ft_status s;
    if constexpr (is_fp<T>::value) {
        typedef typename cu_acc<T>::type A;
        if (in[1].dtype == in[0].dtype)
            return ew_run<X, true>(k, n, PowF<T, T>(), out, ins);
        if ((s = pow_exponent<X, A>(k, n, &in[1], sizeof(A) == 8 ? FT_F64 : FT_F32, &e)))
            return s;
        ins[1] = &e;
        return ew_run<X, true>(k, n, PowF<T, A>(), out, ins);
    } else {
        if (ft_dtype_is_float(in[1].dtype)) {
            if ((s = pow_exponent<X, double>(k, n, &in[1], FT_F64, &e)))
                return s;
            ins[1] = &e;
            return ew_run<X, true>(k, n, PowI<T, double>(), out, ins);
        }
        if (in[1].dtype == in[0].dtype)
            return ew_run<X, true>(k, n, PowI<T, T>(), out, ins);
        if ((s = pow_exponent<X, int64_t>(k, n, &in[1], FT_I64, &e)))
            return s;
        ins[1] = &e;
        return ew_run<X, true>(k, n, PowI<T, int64_t>(), out, ins);
    }
}

template <class X> static ft_status binary_impl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const int op = (int)n->op;
    const ft_dtype dt = in[0].dtype;
    int code = -1;
    unsigned mask = 0, table = 0;
    switch (op) {
    case FT_OP_ADD: code = B_ADD; break;
    case FT_OP_SUB: code = B_SUB; break;
    case FT_OP_MUL: code = B_MUL; break;
    case FT_OP_DIV: code = B_DIV; break;
    case FT_OP_MOD: code = n->params.binary.fmod ? B_FMOD : B_MOD; break;
    case FT_OP_POW: break;
    case FT_OP_BITWISE_AND: code = B_AND; break;
    case FT_OP_BITWISE_OR: code = B_OR; break;
    case FT_OP_BITWISE_XOR: code = B_XOR; break;
    case FT_OP_BIT_SHIFT: code = n->params.binary.shift_right ? B_SHR : B_SHL; break;
    case FT_OP_PRELU: code = B_PRELU; break;
    case FT_OP_EQUAL: mask = CMP_EQ, table = LOGIC_EQ; break;
    case FT_OP_LESS: mask = CMP_LT; break;
    case FT_OP_LESS_EQUAL: mask = CMP_LT | CMP_EQ; break;
    case FT_OP_GREATER: mask = CMP_GT; break;
    case FT_OP_GREATER_EQUAL: mask = CMP_GT | CMP_EQ; break;
    case FT_OP_AND: table = LOGIC_AND; break;
    case FT_OP_OR: table = LOGIC_OR; break;
    case FT_OP_XOR: table = LOGIC_XOR; break;
    default: return no_kernel(k, n, dt);
    }
    /* and/or/xor take bool only; bool takes only those and equal */
    const bool num = ft_dtype_in(dt, FT_DT_NUM), logic_only = table != 0 && mask == 0;
    if (num ? logic_only : table == 0)
        return no_kernel(k, n, dt);
    if (ft_numel(&out[0].shape) == 0)
        return FT_OK;
    const ft_view *ins[3] = {&in[0], &in[1], NULL};
    if (!num) {
        Logic f{};
        f.table = table;
        return ew_run<X, true>(k, n, f, &out[0], ins);
    }
    if (mask) {
        EW_NUM_DISPATCH(dt, cmp_typed, k, n, &out[0], ins, mask)
    } else if (op == FT_OP_POW) {
        EW_NUM_DISPATCH(dt, pow_typed, k, n, in, out)
    } else {
        return arith_num<X>(k, n, &out[0], ins, code, dt);
    }
    return no_kernel(k, n, dt);
}

/* max/min folded left into the output: max(max(x0, x1), x2) ... After the
 * first step the output is read in place (contiguous in its own shape). */
template <class X> static ft_status variadic_impl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_dtype dt = in[0].dtype;
    if ((n->op != FT_OP_MAX && n->op != FT_OP_MIN) || !ft_dtype_in(dt, FT_DT_NUM))
        return no_kernel(k, n, dt);
    const int code = n->op == FT_OP_MAX ? B_MAX : B_MIN;
    const int64_t total = (int64_t)ft_numel(&out[0].shape);
    if (total == 0)
        return FT_OK;
    if (n->n_in == 1) {
        if (out[0].data == in[0].data)
            return FT_OK;
        return X::copy(k, n, out[0].data, in[0].data, (size_t)total * ft_dtype_size(dt));
    }
    const ft_view acc = out[0];
    for (int i = 1; i < n->n_in; i++) {
        const ft_view *ins[3] = {i == 1 ? &in[0] : &acc, &in[i], NULL};
        ft_status s = arith_num<X>(k, n, &out[0], ins, code, dt);
        if (s)
            return s;
    }
    return FT_OK;
}

/* ---------------------------------- where ---------------------------------- */

template <class X> static ft_status where_impl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (in[0].dtype != FT_BOOL)
        return no_kernel(k, n, in[0].dtype);
    const ft_view *ins[3] = {&in[0], &in[1], &in[2]};
    switch (ft_dtype_size(out[0].dtype)) {
    case 1: return ew_run<X, true>(k, n, Where<uint8_t>(), &out[0], ins);
    case 2: return ew_run<X, true>(k, n, Where<uint16_t>(), &out[0], ins);
    case 4: return ew_run<X, true>(k, n, Where<uint32_t>(), &out[0], ins);
    case 8: return ew_run<X, true>(k, n, Where<uint64_t>(), &out[0], ins);
    default: break;
    }
    return no_kernel(k, n, out[0].dtype);
}

} // namespace

CU_KFN(cu_binary) { return binary_impl<gpu_exec_bin>(k, n, in, out); }
CU_KFN(cu_variadic) { return variadic_impl<gpu_exec_bin>(k, n, in, out); }
CU_KFN(cu_where) { return where_impl<gpu_exec_bin>(k, n, in, out); }
