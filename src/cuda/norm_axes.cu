/* CUDA normalisations over a set of axes (cu_axes_norm): lp_normalization and
 * mean_variance_normalization. Reference: src/cpu/norm_axes.c, whose
 * decisions this follows: the kept axes index the groups, each group's
 * statistics accumulate in double, the variance in two passes.
 *
 * One block per group (a grid-stride loop over the groups): its threads
 * stride over the group's elements, whose offsets come from the element's
 * index within the group decomposed over the normalised dims. A block
 * reduction in double gives each statistic; the block then writes the
 * group. Deterministic: the same input gives the same bits. */
#include "cu.cuh"

namespace {

#define AN_BLOCK 256

/* Kept and normalised dims (size-1 dims dropped) with their element strides. */
struct an_plan {
    int nk, nr;
    int64_t kdim[FT_MAX_RANK], kstr[FT_MAX_RANK], rdim[FT_MAX_RANK], rstr[FT_MAX_RANK];
    int64_t groups, per;
    int mvn, lp;
    double eps;
};

__device__ __forceinline__ int64_t decompose(int64_t i, int nd, const int64_t *dim, const int64_t *str)
{
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        off += i % dim[d] * str[d];
        i /= dim[d];
    }
    return off;
}

/* Sum over the block in double; every thread gets the result. */
__device__ double block_sum(double v, double *sh)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    __syncthreads(); /* sh may still be read from the previous call */
    if (lane == 0)
        sh[w] = v;
    __syncthreads();
    double t = 0;
    for (int i = 0; i < AN_BLOCK / 32; i++)
        t += sh[i];
    return t;
}

template <class T> __global__ void __launch_bounds__(AN_BLOCK) axes_norm_kernel(const T *x, T *y, const an_plan p)
{
    __shared__ double sh[AN_BLOCK / 32];
    for (int64_t g = blockIdx.x; g < p.groups; g += gridDim.x) {
        const int64_t base = decompose(g, p.nk, p.kdim, p.kstr);
        double a = 0;
        for (int64_t r = threadIdx.x; r < p.per; r += AN_BLOCK) {
            const double v = (double)cu_load(x, base + decompose(r, p.nr, p.rdim, p.rstr));
            a += p.mvn ? v : p.lp == 1 ? fabs(v) : v * v;
        }
        a = block_sum(a, sh);
        double mean = 0, den;
        if (p.mvn) {
            mean = a / (double)p.per;
            double s = 0;
            for (int64_t r = threadIdx.x; r < p.per; r += AN_BLOCK) {
                const double v = (double)cu_load(x, base + decompose(r, p.nr, p.rdim, p.rstr)) - mean;
                s += v * v;
            }
            s = block_sum(s, sh);
            den = sqrt(s / (double)p.per) + p.eps;
        } else {
            den = p.lp == 1 ? a : sqrt(a);
        }
        /* every read of this group is done before the writes (in place is safe) */
        __syncthreads();
        for (int64_t r = threadIdx.x; r < p.per; r += AN_BLOCK) {
            const int64_t o = base + decompose(r, p.nr, p.rdim, p.rstr);
            /* lp: a group of zeros gives zeros (ONNX's LpNormalization), not 0 / 0 */
            cu_st_d(y + o, 0, !p.mvn && den == 0 ? 0.0 : ((double)cu_load(x, o) - mean) / den);
        }
    }
}

template <class T> ft_status launch(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const an_plan &p)
{
    const int64_t cap = (int64_t)k->be->sm_count * 32;
    const unsigned grid = (unsigned)(p.groups < cap ? p.groups : cap);
    axes_norm_kernel<T><<<grid, AN_BLOCK, 0, k->be->stream>>>((const T *)in[0].data, (T *)out[0].data, p);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

} // namespace

ft_status cu_axes_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    if (ft_numel(s) == 0)
        return FT_OK;
    const ft_reduce_params *rp = &n->params.reduce;
    an_plan p;
    memset(&p, 0, sizeof p);
    int64_t st[FT_MAX_RANK];
    ft_strides(s, st);
    p.groups = p.per = 1;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] == 1)
            continue;
        if (rp->red[d]) {
            p.rdim[p.nr] = s->dims[d], p.rstr[p.nr++] = st[d];
            p.per *= s->dims[d];
        } else {
            p.kdim[p.nk] = s->dims[d], p.kstr[p.nk++] = st[d];
            p.groups *= s->dims[d];
        }
    }
    p.mvn = n->op == FT_OP_MEAN_VARIANCE_NORMALIZATION;
    p.lp = rp->lp;
    p.eps = rp->epsilon;
    CU_DISPATCH_FLOAT(in[0].dtype, T, return launch<T>(k, n, in, out, p));
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                       ft_dtype_name(in[0].dtype), ft_op_name(n->op));
}
