/* Convolution and transposed convolution on the GPU (ONNX Conv and
 * ConvTranspose, channels first, 1-D to 3-D).
 *
 * conv: im2col of a tile of images (or, for a very large image, of output
 * positions) into the workspace, then per group a strided-batched cuBLAS
 * product W[g] @ col over the tile's images (or per image one over the
 * groups, whichever needs fewer calls). The bias is written into the output
 * first and the product added with beta = 1, so f16/bf16 round once. A 1x1
 * kernel at stride 1 without padding multiplies the input in place;
 * depthwise convolutions (one input channel per group) run a direct kernel.
 * A fused activation (params.h ft_conv_act) runs as a pass over the output
 * afterwards (in the accumulation type, after f16/bf16 outputs were rounded).
 *
 * conv_transpose: per tile of images (or of output channels), the product
 * W[g]^T @ x[g] into a column buffer (f32 for f16/bf16 inputs), then a
 * gather-style col2im that computes every output element once from the
 * column entries that reach it (no atomics) and adds the bias. One input
 * channel per group, or an empty input, runs a direct kernel.
 *
 * Spatial parameters are padded to 3 dims with leading dims of size 1, so
 * every kernel is written once. Pads and sizes come from graph/infer_conv.c,
 * which the CPU kernels share.
 */
#include "cu.cuh"
extern "C" {
#include "../graph/infer_conv.h"
}

/* Defined in matmul.cu: C[b] = alpha A[b] B[b] + beta C[b] with row-major
 * meaning, operands given by {row, column, batch} element strides; A and B
 * of dtype ab, C of dtype cd. */
ft_status cu_gemm_strided(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, int64_t batch, int64_t M, int64_t N,
                          int64_t K, double alpha, const void *A, const int64_t *as, const void *B, const int64_t *bs,
                          double beta, void *C, const int64_t *cs);

namespace {

/* Column buffers are tiled to stay under this many bytes (a single image or
 * channel whose buffer is larger still gets it). */
#define CV_WS_CAP ((uint64_t)1 << 30)

typedef struct {
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3]; /* spatial, padded to 3 dims */
    int64_t N, C, M, G, Cg, Mg;                     /* batch, channels in/out, groups, per group */
    int64_t NI, P, KK;                              /* input positions, output positions, kernel taps */
    ft_dtype dt;                                    /* the input's dtype, */
    size_t es;                                      /* and its element size */
} cv_geom;

/* The shared geometry with its spatial dims right-aligned into the 3 slots
 * of cv_geom, the leading ones of size 1 without padding. */
static uint64_t geom_of(const ft_node *n, const ft_view *in, const ft_view *out, int transpose, cv_geom *g)
{
    ft_conv_geom c;
    ft_conv_geom_of(&n->params.conv, &in[0].shape, &in[1].shape, &out[0].shape, in[0].dtype, transpose, &c);
    for (int j = 0, lead = 3 - c.r; j < 3; j++) {
        int src = j - lead;
        g->in[j] = src < 0 ? 1 : c.in[src];
        g->out[j] = src < 0 ? 1 : c.out[src];
        g->k[j] = src < 0 ? 1 : c.k[src];
        g->s[j] = src < 0 ? 1 : c.s[src];
        g->d[j] = src < 0 ? 1 : c.d[src];
        g->pb[j] = src < 0 ? 0 : c.pb[src];
    }
    g->N = c.N, g->C = c.C, g->M = c.M, g->G = c.G, g->Cg = c.Cg, g->Mg = c.Mg;
    g->NI = c.NI, g->P = c.P, g->KK = c.KK;
    g->dt = in[0].dtype, g->es = ft_dtype_size(in[0].dtype);
    return ft_numel(&out[0].shape);
}

/* Grid-stride loop over [0, total), 64-bit. */
#define CV_FOR(t, total)                                                                                     \
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < (total);                            \
         t += (uint64_t)gridDim.x * blockDim.x)

/* a / b for b > 0, in 32 bits when both fit (much cheaper on the GPU). */
__device__ __forceinline__ uint64_t cv_div(uint64_t a, uint64_t b)
{
    return ((a | b) >> 32) ? a / b : (uint64_t)((uint32_t)a / (uint32_t)b);
}

/* Splits a flat output position into its 3 spatial coordinates. */
__device__ __forceinline__ void cv_split(const cv_geom &g, uint64_t p, int64_t *o)
{
    uint64_t q = cv_div(p, (uint64_t)g.out[2]);
    o[2] = (int64_t)(p - q * (uint64_t)g.out[2]);
    uint64_t q2 = cv_div(q, (uint64_t)g.out[1]);
    o[1] = (int64_t)(q - q2 * (uint64_t)g.out[1]);
    o[0] = (int64_t)q2;
}

/* Output element t (flat, row-major [N, M, spatial]): its image nb, its
 * channel m and its spatial coordinates o. */
__device__ __forceinline__ void cv_out_at(const cv_geom &g, uint64_t t, uint64_t *nb, int64_t *m, int64_t *o)
{
    uint64_t row = cv_div(t, (uint64_t)g.P);
    *nb = cv_div(row, (uint64_t)g.M);
    *m = (int64_t)(row - *nb * (uint64_t)g.M);
    cv_split(g, t - row * (uint64_t)g.P, o);
}

/* Taps [lo, hi) of dim j whose input o*s + k*d - pb lies in [0, in). */
__device__ __forceinline__ void cv_taps(const cv_geom &g, int j, int64_t o, int64_t *lo, int64_t *hi)
{
    int64_t base = o * g.s[j] - g.pb[j], d = g.d[j], last = g.in[j] - 1 - base;
    int64_t a = base >= 0 ? 0 : (-base + d - 1) / d;
    int64_t b = last < 0 ? 0 : last / d + 1;
    if (b > g.k[j])
        b = g.k[j];
    *lo = a;
    *hi = b > a ? b : a;
}

/* Input position reached from output o through tap kj in a transposed
 * convolution (o = i*s + kj*d - pb), or -1 when none. */
__device__ __forceinline__ int64_t cv_tin(const cv_geom &g, int j, int64_t o, int64_t kj)
{
    int64_t v = o + g.pb[j] - kj * g.d[j];
    if (v < 0)
        return -1;
    int64_t i = v / g.s[j];
    return i * g.s[j] == v && i < g.in[j] ? i : -1;
}

/* f(kk, i) for every tap kk (flat over the kernel) of a transposed
 * convolution through which input position i (flat over g.in) reaches the
 * output at coordinates o, in tap order. */
template <class F> __device__ __forceinline__ void cvt_taps(const cv_geom &g, const int64_t *o, F f)
{
    for (int64_t k0 = 0; k0 < g.k[0]; k0++) {
        int64_t i0 = cv_tin(g, 0, o[0], k0);
        if (i0 < 0)
            continue;
        for (int64_t k1 = 0; k1 < g.k[1]; k1++) {
            int64_t i1 = cv_tin(g, 1, o[1], k1);
            if (i1 < 0)
                continue;
            for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
                int64_t i2 = cv_tin(g, 2, o[2], k2);
                if (i2 >= 0)
                    f((k0 * g.k[1] + k1) * g.k[2] + k2, (i0 * g.in[1] + i1) * g.in[2] + i2);
            }
        }
    }
}

/* ------------------------------------------------------------------ kernels */

/* y[n, m, p] = bias[m] (or 0), y contiguous [N, M, P]. */
template <class T> __global__ void cv_bias_fill(const T *bias, T *y, int64_t M, int64_t P, uint64_t total)
{
    CV_FOR (t, total) {
        uint64_t row = cv_div(t, (uint64_t)P);
        y[t] = bias[row - cv_div(row, (uint64_t)M) * (uint64_t)M];
    }
}

/* Depthwise convolution (one input channel per group): one thread per
 * output element, the bias first and then the taps in order, in the
 * accumulation type. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    cv_depthwise(const T *x, const T *w, const T *bias, T *y, cv_geom g, uint64_t total)
{
    typedef typename cu_acc<T>::type A;
    CV_FOR (t, total) {
        uint64_t nb;
        int64_t m, o[3], lo[3], hi[3];
        cv_out_at(g, t, &nb, &m, o);
        const int64_t c = m / g.Mg;
        for (int j = 0; j < 3; j++)
            cv_taps(g, j, o[j], &lo[j], &hi[j]);
        const T *xp = x + ((int64_t)nb * g.C + c) * g.NI, *wp = w + m * g.KK;
        A acc = bias ? (A)cu_load(bias, m) : (A)0;
        for (int64_t k0 = lo[0]; k0 < hi[0]; k0++) {
            int64_t i0 = o[0] * g.s[0] + k0 * g.d[0] - g.pb[0];
            for (int64_t k1 = lo[1]; k1 < hi[1]; k1++) {
                int64_t i1 = o[1] * g.s[1] + k1 * g.d[1] - g.pb[1], xr = (i0 * g.in[1] + i1) * g.in[2];
                int64_t wr = (k0 * g.k[1] + k1) * g.k[2];
                for (int64_t k2 = lo[2]; k2 < hi[2]; k2++) {
                    int64_t i2 = o[2] * g.s[2] + k2 * g.d[2] - g.pb[2];
                    acc += (A)cu_load(xp, xr + i2) * (A)cu_load(wp, wr + k2);
                }
            }
        }
        cu_store(y, (int64_t)t, acc);
    }
}

/* col[(nl*C + c)*KK + kk][pl] = x[n0 + nl, c] at output position p0 + pl
 * shifted by tap kk (0 in the padding): one thread per (image, channel,
 * position), looping over the taps. Pure data movement, typed by size. */
template <class E>
__global__ void __launch_bounds__(CU_BLOCK)
    cv_im2col(const E *x, E *col, cv_geom g, int64_t n0, uint64_t p0, uint64_t pt, uint64_t total)
{
    CV_FOR (t, total) {
        uint64_t r = cv_div(t, pt), pl = t - r * pt, nl = cv_div(r, (uint64_t)g.C);
        int64_t c = (int64_t)(r - nl * (uint64_t)g.C), o[3];
        cv_split(g, p0 + pl, o);
        const E *xp = x + (((int64_t)nl + n0) * g.C + c) * g.NI;
        E *cp = col + (int64_t)r * g.KK * (int64_t)pt + (int64_t)pl;
        for (int64_t k0 = 0; k0 < g.k[0]; k0++) {
            int64_t i0 = o[0] * g.s[0] + k0 * g.d[0] - g.pb[0];
            bool v0 = i0 >= 0 && i0 < g.in[0];
            for (int64_t k1 = 0; k1 < g.k[1]; k1++) {
                int64_t i1 = o[1] * g.s[1] + k1 * g.d[1] - g.pb[1], xr = (i0 * g.in[1] + i1) * g.in[2];
                bool v1 = v0 && i1 >= 0 && i1 < g.in[1];
                for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
                    int64_t i2 = o[2] * g.s[2] + k2 * g.d[2] - g.pb[2];
                    *cp = v1 && i2 >= 0 && i2 < g.in[2] ? xp[xr + i2] : (E)0;
                    cp += pt;
                }
            }
        }
    }
}

/* Transposed convolution, direct: y[n, m, o] = bias[m] + sum over the
 * group's input channels c and the taps reaching o of x[n, c, i] w[c, m % Mg, kk]. */
template <class T>
__global__ void __launch_bounds__(CU_BLOCK)
    cvt_direct(const T *x, const T *w, const T *bias, T *y, cv_geom g, uint64_t total)
{
    typedef typename cu_acc<T>::type A;
    CV_FOR (t, total) {
        uint64_t nb;
        int64_t m, o[3];
        cv_out_at(g, t, &nb, &m, o);
        const int64_t gi = m / g.Mg, mg = m - gi * g.Mg;
        A acc = bias ? (A)cu_load(bias, m) : (A)0;
        for (int64_t c = gi * g.Cg; c < (gi + 1) * g.Cg; c++) {
            const T *xp = x + ((int64_t)nb * g.C + c) * g.NI, *wp = w + (c * g.Mg + mg) * g.KK;
            cvt_taps(g, o, [&](int64_t kk, int64_t i) { acc += (A)cu_load(xp, i) * (A)cu_load(wp, kk); });
        }
        cu_store(y, (int64_t)t, acc);
    }
}

/* Gather-style col2im of a tile: images n0.. (nt of them), and in every
 * group the output channels m0 .. m0+mbt. col holds, per (image, group,
 * channel, tap), one row over the input positions: row ((nl*G + g)*mbt +
 * ml)*KK + kk. One thread per output element sums the entries reaching it,
 * adds the bias and stores once. */
template <class T, class CT>
__global__ void __launch_bounds__(CU_BLOCK)
    cvt_col2im(const CT *col, const T *bias, T *y, cv_geom g, int64_t n0, int64_t m0, int64_t mbt, uint64_t total)
{
    typedef typename cu_acc<T>::type A;
    CV_FOR (t, total) {
        uint64_t r = cv_div(t, (uint64_t)g.P), r2 = cv_div(r, (uint64_t)mbt), nl = cv_div(r2, (uint64_t)g.G);
        int64_t ml = (int64_t)(r - r2 * (uint64_t)mbt), gi = (int64_t)(r2 - nl * (uint64_t)g.G), o[3];
        uint64_t p = t - r * (uint64_t)g.P;
        cv_split(g, p, o);
        int64_t m = gi * g.Mg + m0 + ml;
        A acc = bias ? (A)cu_load(bias, m) : (A)0;
        const CT *cp = col + (int64_t)r * g.KK * g.NI;
        cvt_taps(g, o, [&](int64_t kk, int64_t i) { acc += (A)cp[kk * g.NI + i]; });
        cu_store(y, (((int64_t)nl + n0) * g.M + m) * g.P + (int64_t)p, acc);
    }
}

/* conv's fused residual sum (input 3, or NULL), then its fused activation
 * (params.h ft_conv_act), on y in place, in the accumulation type, as each
 * activation's own kernel computes it. */
template <class T> __global__ void cv_activation(T *y, const T *sum, int act, double lo, double hi, uint64_t total)
{
    typedef typename cu_acc<T>::type A;
    const A l = (A)lo, h = (A)hi, zero = (A)0, three = (A)3, six = (A)6;
    CV_FOR (t, total) {
        A v = cu_load(y, (int64_t)t), c;
        if (sum)
            v += (A)cu_load(sum, (int64_t)t);
        if (act == FT_CONV_ACT_RELU) {
            v = v < zero ? zero : v;
        } else if (act == FT_CONV_ACT_CLIP) {
            v = v < l ? l : v;
            v = v > h ? h : v;
        } else if (act == FT_CONV_ACT_SILU) {
            v = v / ((A)1 + exp(-v));
        } else if (act == FT_CONV_ACT_HARD_SWISH) {
            c = v + three;
            c = c < zero ? zero : c;
            c = c > six ? six : c;
            v = v * c / six;
        }
        cu_store(y, (int64_t)t, v);
    }
}

/* ------------------------------------------------------------------ launchers */

template <class T>
static void activation_launch(const ft_backend_ctx *be, void *y, const void *sum, const ft_conv_params *p,
                              uint64_t total)
{
    cv_activation<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((T *)y, (const T *)sum, (int)p->act, p->act_lo,
                                                                        p->act_hi, total);
}

template <class T>
static void bias_fill_launch(const ft_backend_ctx *be, const void *bias, void *y, const cv_geom *g, uint64_t total)
{
    cv_bias_fill<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((const T *)bias, (T *)y, g->M, g->P, total);
}

template <class T>
static void depthwise_launch(const ft_backend_ctx *be, const ft_view *in, const void *bias, void *y, const cv_geom *g,
                             uint64_t total)
{
    cv_depthwise<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((const T *)in[0].data, (const T *)in[1].data,
                                                                       (const T *)bias, (T *)y, *g, total);
}

template <class T>
static void cvt_direct_launch(const ft_backend_ctx *be, const ft_view *in, const void *bias, void *y, const cv_geom *g,
                              uint64_t total)
{
    cvt_direct<T><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((const T *)in[0].data, (const T *)in[1].data,
                                                                     (const T *)bias, (T *)y, *g, total);
}

/* The column buffer of f16/bf16 products is f32, so that col2im adds
 * unrounded products as the CPU does. */
template <class T> struct cv_col { typedef T type; };
template <> struct cv_col<__half> { typedef float type; };
template <> struct cv_col<__nv_bfloat16> { typedef float type; };

template <class T>
static void col2im_launch(const ft_backend_ctx *be, const void *col, const void *bias, void *y, const cv_geom *g,
                          int64_t n0, int64_t m0, int64_t mbt, uint64_t total)
{
    typedef typename cv_col<T>::type CT;
    cvt_col2im<T, CT><<<cu_grid(be, total), CU_BLOCK, 0, be->stream>>>((const CT *)col, (const T *)bias, (T *)y, *g,
                                                                         n0, m0, mbt, total);
}

/* Tiles of the column buffer under CV_WS_CAP: *nt of the N images when one
 * image (parts parts of per_part bytes) fits, else one image cut into *pt
 * parts (at least one, however large). Gets the workspace for a tile. */
static ft_status tile_workspace(ft_kctx *k, const ft_node *n, uint64_t per_part, int64_t parts, int64_t N,
                                int64_t *nt, int64_t *pt, void **ws)
{
    uint64_t per_img = per_part * (uint64_t)parts;
    if (per_img <= CV_WS_CAP) {
        *nt = (int64_t)(CV_WS_CAP / per_img);
        *nt = *nt < N ? *nt : N;
        *pt = parts;
    } else {
        *nt = 1;
        *pt = (int64_t)(CV_WS_CAP / per_part);
        *pt = *pt < 1 ? 1 : *pt < parts ? *pt : parts;
    }
    return cu_workspace(k, n, (size_t)((uint64_t)*nt * (uint64_t)*pt * per_part), ws);
}

/* C[nl, gi] = A[gi] @ B[nl, gi] + beta C[nl, gi] (M x N, inner K) for the nt
 * images nl and the G groups gi: one strided-batched call per group over the
 * images, or per image over the groups, whichever needs fewer calls. Each
 * operand has its {row, column} element strides and the offsets to the next
 * group and image (A is the same for every image); A and B of dtype ab, C of
 * dtype cd. */
static ft_status grouped_products(ft_kctx *k, const ft_node *n, ft_dtype ab, ft_dtype cd, int64_t G, int64_t nt,
                                  int64_t M, int64_t N, int64_t K, const char *A, int64_t a_row, int64_t a_col,
                                  int64_t a_grp, const char *B, int64_t b_row, int64_t b_img, int64_t b_grp,
                                  double beta, char *C, int64_t c_row, int64_t c_img, int64_t c_grp)
{
    size_t es = ft_dtype_size(ab), ces = ft_dtype_size(cd);
    int64_t ast[3] = {a_row, a_col, 0}, bst[3] = {b_row, 1, 0}, cst[3] = {c_row, 1, 0};
    ft_status st = FT_OK;
    if (G <= nt) {
        bst[2] = b_img, cst[2] = c_img;
        for (int64_t gi = 0; gi < G && !st; gi++)
            st = cu_gemm_strided(k, n, ab, cd, nt, M, N, K, 1.0, A + (size_t)(gi * a_grp) * es, ast,
                                 B + (size_t)(gi * b_grp) * es, bst, beta, C + (size_t)(gi * c_grp) * ces, cst);
    } else {
        ast[2] = a_grp, bst[2] = b_grp, cst[2] = c_grp;
        for (int64_t nl = 0; nl < nt && !st; nl++)
            st = cu_gemm_strided(k, n, ab, cd, G, M, N, K, 1.0, A, ast, B + (size_t)(nl * b_img) * es, bst, beta,
                                 C + (size_t)(nl * c_img) * ces, cst);
    }
    return st;
}

/* y[n0+nl, g] (Mg x pc, row stride P) = W[g] (Mg x Kc) @ Bm, for the nt
 * images of a tile and every group; Bm of image nl and group g starts at
 * B + nl*b_img + g*b_grp with row stride b_row. */
static ft_status conv_products(ft_kctx *k, const ft_node *n, ft_dtype dt, const cv_geom *g, const void *w,
                               const char *B, int64_t b_row, int64_t b_img, int64_t b_grp, char *y, int64_t nt,
                               int64_t pc, double beta)
{
    int64_t Kc = g->Cg * g->KK;
    return grouped_products(k, n, dt, dt, g->G, nt, g->Mg, pc, Kc, (const char *)w, Kc, 1, g->Mg * Kc, B, b_row, b_img,
                            b_grp, beta, y, g->P, g->M * g->P, g->Mg * g->P);
}

} // namespace

/* ------------------------------------------------------------------ conv */

static ft_status conv_sum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);

/* The sums, then the fused residual sum and activation (a second pass over
 * the output). */
CU_KFN(cu_conv)
{
    ft_status st = conv_sum(k, n, in, out);
    uint64_t total = ft_numel(&out[0].shape);
    const void *sum = n->n_in > 3 ? in[3].data : NULL;
    if (st || (n->params.conv.act == FT_CONV_ACT_NONE && !sum) || total == 0)
        return st;
    CU_DISPATCH_FLOAT(in[0].dtype, T, activation_launch<T>(k->be, out[0].data, sum, &n->params.conv, total));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

static ft_status conv_sum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    cv_geom g;
    uint64_t total = geom_of(n, in, out, 0, &g);
    if (total == 0)
        return FT_OK;
    const ft_dtype dt = g.dt;
    const void *bias = n->n_in > 2 ? in[2].data : NULL;
    cudaStream_t s = k->be->stream;
    const int64_t Kc = g.Cg * g.KK, P = g.P;

    if (g.Cg == 1 && g.G > 1) {
        CU_DISPATCH_FLOAT(dt, T, depthwise_launch<T>(k->be, in, bias, out[0].data, &g, total));
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    /* The output starts as the bias (cuBLAS adds the products with beta=1);
     * with C == 0 there is nothing to add. */
    if (bias) {
        CU_DISPATCH_FLOAT(dt, T, bias_fill_launch<T>(k->be, bias, out[0].data, &g, total));
        CU_LAUNCHED(k, n);
    } else if (Kc == 0) {
        CU_TRY(k, n, cudaMemsetAsync(out[0].data, 0, (size_t)total * g.es, s));
    }
    if (Kc == 0)
        return FT_OK;
    double beta = bias ? 1.0 : 0.0;
    const char *x = (const char *)in[0].data;
    char *y = (char *)out[0].data;

    /* A 1x1 kernel at stride 1 without padding reads x as the column matrix. */
    int pointwise = 1;
    for (int j = 0; j < 3; j++)
        pointwise &= g.k[j] == 1 && g.s[j] == 1 && g.pb[j] == 0 && g.in[j] == g.out[j];
    if (pointwise)
        return conv_products(k, n, dt, &g, in[1].data, x, g.NI, g.C * g.NI, g.Cg * g.NI, y, g.N, P, beta);

    /* Tiles of images, or of output positions when one image's column
     * buffer is over the cap. */
    int64_t nt, pt;
    void *ws;
    ft_status st = tile_workspace(k, n, (uint64_t)g.C * (uint64_t)g.KK * g.es, P, g.N, &nt, &pt, &ws);
    if (st)
        return st;
    for (int64_t n0 = 0; n0 < g.N; n0 += nt) {
        int64_t ntc = g.N - n0 < nt ? g.N - n0 : nt;
        for (int64_t p0 = 0; p0 < P; p0 += pt) {
            int64_t pc = P - p0 < pt ? P - p0 : pt;
            uint64_t cnt = (uint64_t)ntc * (uint64_t)g.C * (uint64_t)pc;
            CU_ELEM_DISPATCH(g.es, E,
                       cv_im2col<E><<<cu_grid(k->be, cnt), CU_BLOCK, 0, s>>>((const E *)x, (E *)ws, g, n0,
                                                                               (uint64_t)p0, (uint64_t)pc, cnt));
            CU_LAUNCHED(k, n);
            /* col of image nl, group gi: rows (nl*C + gi*Cg)*KK.., row stride pc. */
            st = conv_products(k, n, dt, &g, in[1].data, (const char *)ws, pc, g.C * g.KK * pc, Kc * pc,
                               y + (size_t)(n0 * g.M * P + p0) * g.es, ntc, pc, beta);
            if (st)
                return st;
        }
    }
    return FT_OK;
}

/* ------------------------------------------------------------------ conv_transpose */

CU_KFN(cu_conv_transpose)
{
    cv_geom g;
    uint64_t total = geom_of(n, in, out, 1, &g);
    if (total == 0)
        return FT_OK;
    const ft_dtype dt = g.dt;
    const void *bias = n->n_in > 2 ? in[2].data : NULL;
    const int64_t NI = g.NI, KK = g.KK, Mg = g.Mg;

    if (g.Cg <= 1 || NI == 0) {
        CU_DISPATCH_FLOAT(dt, T, cvt_direct_launch<T>(k->be, in, bias, out[0].data, &g, total));
        CU_LAUNCHED(k, n);
        return FT_OK;
    }
    ft_dtype cdt = dt == FT_F16 || dt == FT_BF16 ? FT_F32 : dt;
    const size_t ces = ft_dtype_size(cdt);
    /* Tiles of images, or of output channels (in every group) when one
     * image's column buffer is over the cap. */
    int64_t nt, mb;
    void *ws;
    ft_status st = tile_workspace(k, n, (uint64_t)g.G * (uint64_t)KK * (uint64_t)NI * ces, Mg, g.N, &nt, &mb, &ws);
    if (st)
        return st;
    const char *x = (const char *)in[0].data, *w = (const char *)in[1].data;
    char *col = (char *)ws;
    for (int64_t n0 = 0; n0 < g.N; n0 += nt) {
        int64_t ntc = g.N - n0 < nt ? g.N - n0 : nt;
        for (int64_t m0 = 0; m0 < Mg; m0 += mb) {
            int64_t mbt = Mg - m0 < mb ? Mg - m0 : mb, rows = mbt * KK;
            /* col[nl, gi] (rows x NI) = W[gi]^T (rows x Cg) @ x[n0+nl, gi] (Cg x NI),
             * W[gi] being [Cg, Mg*KK] of which the columns m0*KK.. are taken. */
            st = grouped_products(k, n, dt, cdt, g.G, ntc, rows, NI, g.Cg, w + (size_t)(m0 * KK) * g.es, 1, Mg * KK,
                                  g.Cg * Mg * KK, x + (size_t)(n0 * g.C * NI) * g.es, NI, g.C * NI, g.Cg * NI, 0.0, col,
                                  NI, g.G * rows * NI, rows * NI);
            if (st)
                return st;
            uint64_t cnt = (uint64_t)ntc * (uint64_t)g.G * (uint64_t)mbt * (uint64_t)g.P;
            CU_DISPATCH_FLOAT(dt, T, col2im_launch<T>(k->be, col, bias, out[0].data, &g, n0, m0, mbt, cnt));
            CU_LAUNCHED(k, n);
        }
    }
    return FT_OK;
}
