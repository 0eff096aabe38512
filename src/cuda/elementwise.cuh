/* The elementwise engine behind elementwise.cu (cu_unary, cu_cast) and
 * elementwise_binary.cu (cu_binary, cu_variadic, cu_where); included by those
 * two files only, and internal to each (anonymous namespace). The CPU kernels
 * in src/cpu/unary.c and src/cpu/binary.c are the reference for every
 * decision on NaN, rounding, wrap-around and saturation.
 *
 * An op is a small functor over storage values: f16/bf16 widen to f32, f64
 * computes in f64, one rounding on store. Ops of one family and dtype share a
 * functor whose op code is read at run time (a uniform branch), which keeps
 * the instantiations to about one per family and dtype instead of one per op.
 *
 * The output is walked in vectors of 16 bytes of its widest operand. Each
 * input is, along the innermost merged dimension, either contiguous (vector
 * load) or repeated (one load, broadcast); dimensions that are contiguous for
 * every operand are merged first, so same-shape and scalar operands are a flat
 * loop and only real broadcasts decompose the index (rank <= 8, 32-bit
 * magic-number division when the element count fits, 64-bit otherwise).
 *
 * The kernel bodies are __host__ __device__ and the entry points templates
 * over an executor (gpu_exec) so the whole path can also be driven on a CPU
 * by a test harness. */
#ifndef FT_CU_ELEMENTWISE_CUH
#define FT_CU_ELEMENTWISE_CUH

#include "cu.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

namespace {

#define EW_HD __host__ __device__ __forceinline__
/* (the host compiler does not know the pragma) */
#ifdef __CUDA_ARCH__
#define EW_UNROLL _Pragma("unroll")
#else
#define EW_UNROLL
#endif

typedef unsigned long long ull;

/* ------------------------------ element types ------------------------------ */

template <class T> struct is_fp : std::is_floating_point<T> {};
template <> struct is_fp<__half> : std::true_type {};
template <> struct is_fp<__nv_bfloat16> : std::true_type {};

/* cu_f / cu_from_f of cu.cuh, callable on the host as well. */
template <class T> EW_HD typename cu_acc<T>::type widen(T v) { return v; }
template <> EW_HD float widen<__half>(__half v) { return __half2float(v); }
template <> EW_HD float widen<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> EW_HD T narrow(typename cu_acc<T>::type v) { return v; }
template <> EW_HD __half narrow<__half>(float v) { return __float2half_rn(v); }
template <> EW_HD __nv_bfloat16 narrow<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <ft_dtype D> struct st_of;
template <> struct st_of<FT_F16> { typedef __half type; };
template <> struct st_of<FT_BF16> { typedef __nv_bfloat16 type; };
template <> struct st_of<FT_F32> { typedef float type; };
template <> struct st_of<FT_F64> { typedef double type; };
template <> struct st_of<FT_I8> { typedef int8_t type; };
template <> struct st_of<FT_I16> { typedef int16_t type; };
template <> struct st_of<FT_I32> { typedef int32_t type; };
template <> struct st_of<FT_I64> { typedef int64_t type; };
template <> struct st_of<FT_U8> { typedef uint8_t type; };
template <> struct st_of<FT_U16> { typedef uint16_t type; };
template <> struct st_of<FT_U32> { typedef uint32_t type; };
template <> struct st_of<FT_U64> { typedef uint64_t type; };
template <> struct st_of<FT_BOOL> { typedef uint8_t type; };

/* Integer ranges, and the float bounds of the float->int cast: powers of two,
 * exact in every float type, so the final conversion only sees values in range. */
template <class T> struct ilim;
#define EW_ILIM(T, LO, HI, FLO, FHI)                               \
    template <> struct ilim<T> {                                   \
        static EW_HD int64_t lo() { return LO; }                   \
        static EW_HD int64_t hi() { return HI; }                   \
        static EW_HD double flo() { return FLO; }                  \
        static EW_HD double fhi() { return FHI; }                  \
    };
EW_ILIM(int8_t, INT8_MIN, INT8_MAX, -128.0, 128.0)
EW_ILIM(int16_t, INT16_MIN, INT16_MAX, -32768.0, 32768.0)
EW_ILIM(int32_t, INT32_MIN, INT32_MAX, -2147483648.0, 2147483648.0)
EW_ILIM(int64_t, INT64_MIN, INT64_MAX, -9223372036854775808.0, 9223372036854775808.0)
EW_ILIM(uint8_t, 0, UINT8_MAX, 0.0, 256.0)
EW_ILIM(uint16_t, 0, UINT16_MAX, 0.0, 65536.0)
EW_ILIM(uint32_t, 0, UINT32_MAX, 0.0, 4294967296.0)
#undef EW_ILIM
/* (uint64_t has none: its maximum is no int64; the casts and pow to u64
 * saturate with ft_sat_u64 of runtime/numeric.h) */

/* x < 0 without a "pointless comparison" diagnostic for unsigned types. */
template <class T> EW_HD bool lt0(T v)
{
    if constexpr (std::is_signed<T>::value) {
        return v < 0;
    } else {
        (void)v;
        return false;
    }
}

/* The unsigned type integer arithmetic wraps in: at least as wide as int, so
 * the small types do not promote to signed int and overflow. */
template <class T> struct wrap_of { typedef typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type type; };

/* ------------------------------- float math -------------------------------- */

/* The libm function of the argument's type. Not the __ intrinsics: these stay
 * within a few ulp of glibc, which the CPU reference uses. */
#define EW_MATH1(name, f32, f64)                                                                 \
    EW_HD float name(float x) { return f32(x); }                                                 \
    EW_HD double name(double x) { return f64(x); }
#define EW_MATH2(name, f32, f64)                                                                 \
    EW_HD float name(float x, float y) { return f32(x, y); }                                     \
    EW_HD double name(double x, double y) { return f64(x, y); }
EW_MATH1(m_exp, expf, exp)
EW_MATH1(m_expm1, expm1f, expm1)
EW_MATH1(m_log, logf, log)
EW_MATH1(m_log1p, log1pf, log1p)
EW_MATH1(m_sqrt, sqrtf, sqrt)
EW_MATH1(m_sin, sinf, sin)
EW_MATH1(m_cos, cosf, cos)
EW_MATH1(m_tanh, tanhf, tanh)
EW_MATH1(m_tan, tanf, tan)
EW_MATH1(m_asin, asinf, asin)
EW_MATH1(m_acos, acosf, acos)
EW_MATH1(m_atan, atanf, atan)
EW_MATH1(m_sinh, sinhf, sinh)
EW_MATH1(m_cosh, coshf, cosh)
EW_MATH1(m_asinh, asinhf, asinh)
EW_MATH1(m_acosh, acoshf, acosh)
EW_MATH1(m_atanh, atanhf, atanh)
EW_MATH1(m_erf, erff, erf)
EW_MATH1(m_erfc, erfcf, erfc)
EW_MATH1(m_floor, floorf, floor)
EW_MATH1(m_ceil, ceilf, ceil)
EW_MATH1(m_rint, rintf, rint)
EW_MATH1(m_fabs, fabsf, fabs)
EW_MATH2(m_fmod, fmodf, fmod)
EW_MATH2(m_pow, powf, pow)
EW_MATH2(m_copysign, copysignf, copysign)

/* A product and a sum that are never fused into an fma: the CPU reference is
 * built without fma contraction, and a fused a*b+c rounds differently. */
#ifdef __CUDA_ARCH__
#define EW_RN(name, op, f32, f64)                                                                \
    EW_HD float name(float a, float b) { return f32(a, b); }                                     \
    EW_HD double name(double a, double b) { return f64(a, b); }
#else
#define EW_RN(name, op, f32, f64)                                                                \
    EW_HD float name(float a, float b) { return a op b; }                                        \
    EW_HD double name(double a, double b) { return a op b; }
#endif
EW_RN(mul_rn, *, __fmul_rn, __dmul_rn)
EW_RN(add_rn, +, __fadd_rn, __dadd_rn)
#undef EW_RN

/* min(max(x, lo), hi) by comparisons, so NaN passes through. */
template <class A> EW_HD A clampv(A x, A lo, A hi)
{
    const A t = x < lo ? lo : x;
    return t > hi ? hi : t;
}

/* --------------------------------- engine ---------------------------------- */

/* The output's dims after dropping size-1 dims and merging runs that are
 * contiguous for every operand, with each input's element strides (0 where
 * it broadcasts). The innermost stride of an input is 1 or 0 (bit j of unit:
 * input j advances there). mag/shr: magic numbers of dims[d] for the 32-bit
 * path (d >= 1; dim 0 never divides). */
struct ew_geo {
    int rank;
    unsigned unit;
    int64_t dims[FT_MAX_RANK];
    int64_t st[3][FT_MAX_RANK];
    uint32_t mag[FT_MAX_RANK], shr[FT_MAX_RANK];
};

struct ew_args {
    void *out;
    const void *in[3];
    int64_t n;    /* output elements */
    int64_t nvec; /* vectors of V elements done by the vector loop; the rest element by element */
    ew_geo g;
};

/* FLAT: every operand contiguous with the output's shape (unary, cast);
 * B32 / B64: broadcasting index arithmetic in 32 / 64 bits. */
enum { EW_FLAT, EW_B32, EW_B64 };

/* Elements per thread iteration: 16 bytes of the widest operand. */
template <class F> struct ew_width {
    static constexpr size_t sa = sizeof(typename F::TA), so = sizeof(typename F::TO);
    static constexpr size_t sb = F::NIN >= 2 ? sizeof(typename F::TB) : 1;
    static constexpr size_t sc = F::NIN >= 3 ? sizeof(typename F::TC) : 1;
    static constexpr size_t m1 = sa > sb ? sa : sb, m2 = sc > so ? sc : so;
    static constexpr int V = (int)(16 / (m1 > m2 ? m1 : m2));
};

template <size_t B> struct raw_of;
template <> struct raw_of<1> { typedef uint8_t type; };
template <> struct raw_of<2> { typedef uint16_t type; };
template <> struct raw_of<4> { typedef uint32_t type; };
template <> struct raw_of<8> { typedef uint2 type; };
template <> struct raw_of<16> { typedef uint4 type; };

EW_HD uint32_t umulhi32(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* Element offsets of output element i in each input. */
template <int NIN, int MODE> EW_HD void ew_offsets(const ew_geo &g, int64_t i, int64_t (&off)[3])
{
    if constexpr (MODE == EW_FLAT) {
        off[0] = off[1] = off[2] = i;
    } else if constexpr (MODE == EW_B32) {
        /* every index, dim and offset is below 2^31 here, and umulhi(rem, mag)
         * <= rem, so neither the sum nor the offsets wrap */
        uint32_t rem = (uint32_t)i, o[3] = {0, 0, 0};
        EW_UNROLL
        for (int d = FT_MAX_RANK - 1; d >= 1; d--) {
            if (d < g.rank) {
                const uint32_t q = (umulhi32(rem, g.mag[d]) + rem) >> g.shr[d];
                const uint32_t r = rem - q * (uint32_t)g.dims[d];
                EW_UNROLL
                for (int j = 0; j < NIN; j++)
                    o[j] += r * (uint32_t)g.st[j][d];
                rem = q;
            }
        }
        EW_UNROLL
        for (int j = 0; j < 3; j++)
            off[j] = j < NIN ? (int64_t)(o[j] + rem * (uint32_t)g.st[j][0]) : 0;
    } else {
        uint64_t rem = (uint64_t)i, o[3] = {0, 0, 0};
        EW_UNROLL
        for (int d = FT_MAX_RANK - 1; d >= 1; d--) {
            if (d < g.rank) {
                const uint64_t dim = (uint64_t)g.dims[d], q = rem / dim, r = rem - q * dim;
                EW_UNROLL
                for (int j = 0; j < NIN; j++)
                    o[j] += r * (uint64_t)g.st[j][d];
                rem = q;
            }
        }
        EW_UNROLL
        for (int j = 0; j < 3; j++)
            off[j] = j < NIN ? (int64_t)(o[j] + rem * (uint64_t)g.st[j][0]) : 0;
    }
}

/* V elements from p + off: one aligned vector load when the input advances
 * along the row, else one element repeated. */
template <int V, class T> EW_HD void ld_vec(T (&d)[V], const T *p, int64_t off, bool unit)
{
    if (unit) {
        typedef typename raw_of<sizeof(T) * V>::type R;
        const R r = *reinterpret_cast<const R *>(p + off);
        memcpy((void *)&d[0], &r, sizeof r);
    } else {
        const T s = p[off];
        EW_UNROLL
        for (int j = 0; j < V; j++)
            d[j] = s;
    }
}

template <int V, class T> EW_HD void st_vec(T *p, const T (&s)[V])
{
    typedef typename raw_of<sizeof(T) * V>::type R;
    R r;
    memcpy(&r, (const void *)&s[0], sizeof r);
    *reinterpret_cast<R *>(p) = r;
}

/* One thread's share of a grid-stride loop: vectors [0, nvec), then the
 * elements [nvec*V, n) one by one (a tail, or everything when the operands
 * do not allow vectors). */
template <class F, int MODE> EW_HD void ew_thread(const F &f, const ew_args &a, int64_t t0, int64_t nth)
{
    typedef typename F::TA TA;
    typedef typename F::TB TB;
    typedef typename F::TC TC;
    typedef typename F::TO TO;
    constexpr int NIN = F::NIN, V = ew_width<F>::V;
    const TA *A = (const TA *)a.in[0];
    const TB *B = (const TB *)a.in[1];
    const TC *C = (const TC *)a.in[2];
    TO *O = (TO *)a.out;
    for (int64_t v = t0; v < a.nvec; v += nth) {
        const int64_t e = v * V;
        int64_t off[3];
        ew_offsets<NIN, MODE>(a.g, e, off);
        TA xa[V];
        TB xb[V];
        TC xc[V];
        ld_vec<V>(xa, A, off[0], MODE == EW_FLAT || (a.g.unit & 1u));
        if constexpr (NIN >= 2)
            ld_vec<V>(xb, B, off[1], MODE == EW_FLAT || (a.g.unit & 2u));
        else
            for (int j = 0; j < V; j++)
                xb[j] = TB();
        if constexpr (NIN >= 3)
            ld_vec<V>(xc, C, off[2], MODE == EW_FLAT || (a.g.unit & 4u));
        else
            for (int j = 0; j < V; j++)
                xc[j] = TC();
        TO o[V];
        EW_UNROLL
        for (int j = 0; j < V; j++)
            o[j] = f(xa[j], xb[j], xc[j], e + j);
        st_vec<V>(O + e, o);
    }
    for (int64_t i = a.nvec * V + t0; i < a.n; i += nth) {
        int64_t off[3];
        ew_offsets<NIN, MODE>(a.g, i, off);
        TB xb = TB();
        TC xc = TC();
        if constexpr (NIN >= 2)
            xb = B[off[1]];
        if constexpr (NIN >= 3)
            xc = C[off[2]];
        O[i] = f(A[off[0]], xb, xc, i);
    }
}

template <class F, int MODE>
__global__ void __launch_bounds__(CU_BLOCK) ew_kernel(const __grid_constant__ F f, const __grid_constant__ ew_args a)
{
    ew_thread<F, MODE>(f, a, (int64_t)blockIdx.x * CU_BLOCK + threadIdx.x, (int64_t)gridDim.x * CU_BLOCK);
}

/* ------------------------------ host: launch ------------------------------- */

/* What touches the device. The entry points are templates over this so that
 * the same code can run on a CPU under a test harness. */
struct gpu_exec {
    template <class F, int MODE>
    static ft_status launch(ft_kctx *k, const ft_node *n, const F &f, const ew_args &a, unsigned grid)
    {
        ew_kernel<F, MODE><<<grid, CU_BLOCK, 0, k->be->stream>>>(f, a);
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    static ft_status copy(ft_kctx *k, const ft_node *n, void *dst, const void *src, size_t bytes)
    {
        CU_TRY(k, n, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, k->be->stream));
        return FT_OK;
    }
    static ft_status scratch(ft_kctx *k, const ft_node *n, size_t bytes, void **p) { return cu_workspace(k, n, bytes, p); }
    static ft_status set_ones(ft_kctx *k, const ft_node *n, void *p, size_t bytes)
    {
        CU_TRY(k, n, cudaMemsetAsync(p, 0xff, bytes, k->be->stream));
        return FT_OK;
    }
};

inline bool aligned(const void *p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

/* Magic numbers for n / d with n, d < 2^31: q = (umulhi(n, mag) + n) >> shr. */
inline void magic_div(uint32_t d, uint32_t *mag, uint32_t *shr)
{
    uint32_t s = 0;
    while (((uint64_t)1 << s) < d)
        s++;
    const uint64_t one = 1;
    *mag = (uint32_t)(((one << 32) * ((one << s) - d)) / d + 1);
    *shr = s;
}

inline void ew_geometry(ew_geo *g, const ft_shape *os, int nin, const ft_view *const *ins)
{
    const ft_shape *shapes[3];
    for (int j = 0; j < nin; j++)
        shapes[j] = &ins[j]->shape;
    g->rank = ft_broadcast_merge(os, nin, shapes, g->dims, g->st, &g->unit);
}

/* Runs functor f over out (NIN inputs ins[], each broadcasting to out when BC,
 * else each of out's shape). */
template <class X, bool BC, class F>
ft_status ew_run(ft_kctx *k, const ft_node *n, const F &f, const ft_view *out, const ft_view *const *ins)
{
    constexpr int NIN = F::NIN, V = ew_width<F>::V;
    const size_t isz[3] = {sizeof(typename F::TA), sizeof(typename F::TB), sizeof(typename F::TC)};
    ew_args a;
    memset(&a, 0, sizeof a);
    a.out = out->data;
    a.n = (int64_t)ft_numel(&out->shape);
    if (a.n == 0)
        return FT_OK;
    for (int j = 0; j < NIN; j++)
        a.in[j] = ins[j]->data;
    bool vec;
    if constexpr (BC) {
        ew_geometry(&a.g, &out->shape, NIN, ins);
        /* a vector must not cross a row of the innermost dim */
        vec = a.g.rank == 1 || a.g.dims[a.g.rank - 1] % V == 0;
    } else {
        a.g.rank = 1;
        a.g.dims[0] = a.n;
        a.g.unit = (1u << NIN) - 1;
        vec = true;
    }
    vec = vec && aligned(a.out, V * sizeof(typename F::TO));
    for (int j = 0; j < NIN; j++)
        if (a.g.unit >> j & 1u)
            vec = vec && aligned(a.in[j], V * isz[j]);
    a.nvec = vec ? a.n / V : 0;
    const unsigned grid = cu_grid(k->be, (uint64_t)(a.nvec > 0 ? a.nvec : a.n));
    if constexpr (BC) {
        if (a.n <= (int64_t)INT32_MAX) {
            for (int d = 1; d < a.g.rank; d++)
                magic_div((uint32_t)a.g.dims[d], &a.g.mag[d], &a.g.shr[d]);
            return X::template launch<F, EW_B32>(k, n, f, a, grid);
        }
        return X::template launch<F, EW_B64>(k, n, f, a, grid);
    } else {
        return X::template launch<F, EW_FLAT>(k, n, f, a, grid);
    }
}

inline ft_status no_kernel(ft_kctx *k, const ft_node *n, ft_dtype dt)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "no CUDA kernel for %s on %s", ft_op_name(n->op),
                       ft_dtype_name(dt));
}

} // namespace

/* Calls FN<X, storage type>(args) for a numeric dtype; bool falls through. */
#define EW_NUM_DISPATCH(dt, FN, ...)                                                             \
    switch (dt) {                                                                                \
    case FT_F16: return FN<X, __half>(__VA_ARGS__);                                              \
    case FT_BF16: return FN<X, __nv_bfloat16>(__VA_ARGS__);                                      \
    case FT_F32: return FN<X, float>(__VA_ARGS__);                                               \
    case FT_F64: return FN<X, double>(__VA_ARGS__);                                              \
    case FT_I8: return FN<X, int8_t>(__VA_ARGS__);                                               \
    case FT_I16: return FN<X, int16_t>(__VA_ARGS__);                                             \
    case FT_I32: return FN<X, int32_t>(__VA_ARGS__);                                             \
    case FT_I64: return FN<X, int64_t>(__VA_ARGS__);                                             \
    case FT_U8: return FN<X, uint8_t>(__VA_ARGS__);                                              \
    case FT_U16: return FN<X, uint16_t>(__VA_ARGS__);                                            \
    case FT_U32: return FN<X, uint32_t>(__VA_ARGS__);                                            \
    case FT_U64: return FN<X, uint64_t>(__VA_ARGS__);                                            \
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;                                                    \
    }

#endif
