/* CUDA per-channel normalisations: batch_norm (inference and training
 * forms), instance_norm and group_norm. Semantics as cpu/norm_channels.c.
 *
 * Statistics come from the chunked passes of norm.cuh in double, as the CPU
 * keeps them (instance_norm and group_norm: a row per (sample, group) of
 * contiguous channels; batch_norm in training mode: a block per channel),
 * become per-channel coefficients (mean, scale / sqrt(var + eps), bias) and
 * are applied by one elementwise affine pass. Every output element is read
 * before it is written by the same thread, after all statistics, so in-place
 * use is safe. */
#include "norm.cuh"

namespace {

/* Per-channel affine y = (x - M) * A + B over N*C rows of sp elements, with
 * (M, A, B) = coef[3 * p ..] for p = row % P. */
template <class T>
__global__ void __launch_bounds__(NB) affine(const T *x, T *y, int64_t nrow, int64_t sp, int64_t P, const double *coef)
{
    if (sp >= 1024) {
        const int64_t nchs = (sp + 4095) / 4096, items = nrow * nchs;
        for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {
            const int64_t r = udiv(it, nchs), j0 = (it - r * nchs) * 4096, j1 = min64(sp, j0 + 4096);
            const int64_t p = r - udiv(r, P) * P;
            const double M = coef[3 * p], A = coef[3 * p + 1], B = coef[3 * p + 2];
            for (int64_t j = j0 + threadIdx.x; j < j1; j += NB) {
                const int64_t e = r * sp + j;
                cu_st_d(y, e, (cu_to_d(x[e]) - M) * A + B);
            }
        }
        return;
    }
    const int64_t total = nrow * sp;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = udiv(e, sp), p = r - udiv(r, P) * P;
        cu_st_d(y, e, (cu_to_d(x[e]) - coef[3 * p]) * coef[3 * p + 1] + coef[3 * p + 2]);
    }
}

/* batch_norm: (mean, scale / sqrt(var + eps), bias) per channel, as the CPU. */
template <class T>
__global__ void bn_coef(const T *sc, const T *bi, const T *mean, const T *var, int64_t C, double eps, double *coef)
{
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < C; c += (int64_t)gridDim.x * blockDim.x) {
        coef[3 * c] = cu_to_d(mean[c]);
        coef[3 * c + 1] = cu_to_d(sc[c]) / sqrt(cu_to_d(var[c]) + eps);
        coef[3 * c + 2] = cu_to_d(bi[c]);
    }
}

/* batch_norm training_mode: block c reduces channel c over N and the spatial
 * dims in double (mean, then the squared deviations: the biased variance),
 * fills coef as bn_coef with the batch's statistics, and writes the running
 * statistics rm, rv (NULL: not wanted) = input * momentum + batch * (1 - momentum).
 * An empty batch gives NaN statistics, as on the CPU. */
template <class T>
__global__ void __launch_bounds__(256) bn_train_coef(const T *x, const T *sc, const T *bi, const T *mean, const T *var,
                                                     int64_t N, int64_t C, int64_t sp, double eps, double mom,
                                                     double *coef, T *rm, T *rv)
{
    __shared__ double part[256];
    const int64_t c = blockIdx.x, cnt = N * sp;
    double m = 0;
    for (int pass = 0; pass < 2; pass++) {
        double acc = 0;
        for (int64_t i = threadIdx.x; i < cnt; i += blockDim.x) {
            const int64_t b = i / sp, j = i - b * sp;
            const double v = cu_to_d(x[(b * C + c) * sp + j]);
            acc += pass ? (v - m) * (v - m) : v;
        }
        part[threadIdx.x] = acc;
        __syncthreads();
        for (int w = blockDim.x / 2; w > 0; w >>= 1) {
            if ((int)threadIdx.x < w)
                part[threadIdx.x] += part[threadIdx.x + w];
            __syncthreads();
        }
        const double r = part[0] / (double)cnt;
        __syncthreads();
        if (pass == 0) {
            m = r;
            continue;
        }
        if (threadIdx.x == 0) {
            coef[3 * c] = m;
            coef[3 * c + 1] = cu_to_d(sc[c]) / sqrt(r + eps);
            coef[3 * c + 2] = cu_to_d(bi[c]);
            if (rm)
                cu_st_d(rm, c, cu_to_d(mean[c]) * mom + m * (1 - mom));
            if (rv)
                cu_st_d(rv, c, cu_to_d(var[c]) * mom + r * (1 - mom));
        }
    }
}

/* group_norm / instance_norm: channel c of sample n belongs to statistics row
 * (n * C + c) / cpg (the channels of a group are contiguous). */
template <class T>
__global__ void gn_coef(const T *sc, const T *bi, const double *mean, const double *inv, int64_t NC, int64_t C,
                        int64_t cpg, double *coef)
{
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < NC; p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = p - udiv(p, C) * C, r = udiv(p, cpg);
        coef[3 * p] = mean[r];
        coef[3 * p + 1] = inv[r] * cu_to_d(sc[c]);
        coef[3 * p + 2] = cu_to_d(bi[c]);
    }
}

/* ---- host side ---------------------------------------------------------------- */

/* instance_norm / group_norm: statistics per (sample, group) row of cpg * sp
 * contiguous elements, then the per-channel affine step. */
template <class T> static ft_status group_t(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, int64_t groups)
{
    cudaStream_t st = k->be->stream;
    const ft_shape *s = &in[0].shape;
    int64_t C = s->dims[1], sp = 1;
    for (int i = 2; i < s->rank; i++)
        sp *= s->dims[i];
    const int64_t N = s->dims[0], rows = N * groups;
    if (rows == 0 || sp == 0 || C == 0)
        return FT_OK;
    const int64_t cpg = C / groups, len = cpg * sp;
    const double eps = n->params.norm.epsilon;
    int64_t ch, nch;
    int G;
    chunking(len, &ch, &nch, &G);
    const size_t pb = al256((size_t)(rows * nch) * sizeof(double)), sb = al256((size_t)rows * sizeof(double));
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, pb + 2 * sb + (size_t)(N * C) * 3 * sizeof(double), &ws);
    if (rc != FT_OK)
        return rc;
    double *part = (double *)ws, *mean = (double *)((char *)ws + pb), *inv = (double *)((char *)ws + pb + sb);
    double *coef = (double *)((char *)ws + pb + 2 * sb);
    const T *x = (const T *)in[0].data;
    const unsigned pg = grid_items(k, rows * nch, NB / G), fg = cu_grid(k->be, (uint64_t)rows);
    st_part<T><<<pg, NB, 0, st>>>(x, rows, len, nch, ch, S_SUM, (const double *)NULL, part, G);
    CU_LAUNCHED(k, n);
    st_fin<T><<<fg, CU_BLOCK, 0, st>>>(F_MEAN, part, rows, nch, len, eps, mean, inv, (T *)NULL);
    CU_LAUNCHED(k, n);
    st_part<T><<<pg, NB, 0, st>>>(x, rows, len, nch, ch, S_SQDEV, mean, part, G);
    CU_LAUNCHED(k, n);
    st_fin<T><<<fg, CU_BLOCK, 0, st>>>(F_INV, part, rows, nch, len, eps, mean, inv, (T *)NULL);
    CU_LAUNCHED(k, n);
    gn_coef<T><<<cu_grid(k->be, (uint64_t)(N * C)), CU_BLOCK, 0, st>>>((const T *)in[1].data, (const T *)in[2].data,
                                                                      mean, inv, N * C, C, cpg, coef);
    CU_LAUNCHED(k, n);
    const int64_t items = sp >= 1024 ? N * C * ((sp + 4095) / 4096) : (N * C * sp + NB - 1) / NB;
    affine<T><<<grid_items(k, items, 1), NB, 0, st>>>(x, (T *)out[0].data, N * C, sp, N * C, coef);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class T> static ft_status batch_t(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    cudaStream_t st = k->be->stream;
    const ft_shape *s = &in[0].shape;
    int64_t C = s->dims[1], sp = 1;
    for (int i = 2; i < s->rank; i++)
        sp *= s->dims[i];
    const int64_t nrow = s->dims[0] * C;
    const int train = n->params.norm.training;
    if ((nrow == 0 || sp == 0) && !(train && C > 0 && n->n_out > 1))
        return FT_OK;
    void *ws = NULL;
    ft_status rc = cu_workspace(k, n, (size_t)C * 3 * sizeof(double), &ws);
    if (rc != FT_OK)
        return rc;
    double *coef = (double *)ws;
    if (train)
        bn_train_coef<T><<<(unsigned)C, 256, 0, st>>>((const T *)in[0].data, (const T *)in[1].data,
                                                        (const T *)in[2].data, (const T *)in[3].data,
                                                        (const T *)in[4].data, s->dims[0], C, sp,
                                                        n->params.norm.epsilon, n->params.norm.momentum, coef,
                                                        n->n_out > 1 ? (T *)out[1].data : NULL,
                                                        n->n_out > 2 ? (T *)out[2].data : NULL);
    else
        bn_coef<T><<<cu_grid(k->be, (uint64_t)C), CU_BLOCK, 0, st>>>((const T *)in[1].data, (const T *)in[2].data,
                                                                    (const T *)in[3].data, (const T *)in[4].data, C,
                                                                    n->params.norm.epsilon, coef);
    CU_LAUNCHED(k, n);
    if (nrow == 0 || sp == 0)
        return FT_OK;
    const int64_t items = sp >= 1024 ? nrow * ((sp + 4095) / 4096) : (nrow * sp + NB - 1) / NB;
    affine<T><<<grid_items(k, items, 1), NB, 0, st>>>((const T *)in[0].data, (T *)out[0].data, nrow, sp, C, coef);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

} // namespace

/* ---- entry points ------------------------------------------------------------ */

ft_status cu_batch_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    CU_DISPATCH_FLOAT(in[0].dtype, T, return batch_t<T>(k, n, in, out));
    return bad_dtype(k, n, in[0].dtype);
}

ft_status cu_instance_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    CU_DISPATCH_FLOAT(in[0].dtype, T, return group_t<T>(k, n, in, out, in[0].shape.dims[1]));
    return bad_dtype(k, n, in[0].dtype);
}

ft_status cu_group_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const int64_t g = n->params.norm.num_groups;
    if (g < 1 || in[0].shape.dims[1] % g != 0)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "num_groups %lld does not divide the %lld channels",
                           (long long)g, (long long)in[0].shape.dims[1]);
    CU_DISPATCH_FLOAT(in[0].dtype, T, return group_t<T>(k, n, in, out, g));
    return bad_dtype(k, n, in[0].dtype);
}
