/* CPU softmax_cross_entropy_loss, negative_log_likelihood_loss, the window
 * functions (hann_window, hamming_window, blackman_window) and mel_weight_matrix, with ONNX's
 * semantics (man/ftrun-graph.5; parameters from src/graph/infer_loss.c).
 *
 * Losses: x is [N, C, D] (D the product of the dims after C), target [N, D].
 * Element (i, d) with class t = target[i, d] contributes
 *   l = -w[t] * logp[i, t, d]     (w = 1 without a weight input),
 * where logp is x itself (negative_log_likelihood_loss) or log_softmax of x
 * over C (softmax_cross_entropy_loss, in double from the row's max). A target
 * equal to ignore_index contributes 0 and no weight; any other target outside
 * [0, C-1] is a data error (exit 3), found before anything is written.
 * Reductions: none (l per element), sum, mean (sum / sum of the weights used;
 * 0/0 = NaN when every element is ignored or the batch is empty, as ONNX
 * Runtime and PyTorch). Sums are taken in double.
 * f16/bf16 arrive widened to f32 (cpu_backend.c). */
#include "cpu.h"
#include "../graph/mel.h"

#include <math.h>

static int64_t target_at(const ft_view *t, int64_t i)
{
    return cpu_load_index(t->data, t->dtype == FT_I64, i);
}

/* The first target outside [0, C-1] that is not ignore_index, as an error. */
static ft_status check_targets(ft_kctx *k, const ft_node *n, const ft_view *t, int64_t C)
{
    const ft_loss_params *p = &n->params.loss;
    int64_t cnt = (int64_t)ft_numel(&t->shape);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t v = target_at(t, i);
        if ((p->has_ignore && v == p->ignore_index) || (v >= 0 && v < C))
            continue;
        char pb[FT_SHAPE_STR];
        return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                           "target %lld at position %s of '%s' is out of range: class indices are 0..%lld (C = "
                           "%lld, dim 1 of '%s')%s", (long long)v, ft_index_str((uint64_t)i, &t->shape, pb),
                           k->g->tensors[n->in[1]].name, (long long)(C - 1), (long long)C,
                           k->g->tensors[n->in[0]].name, p->has_ignore ? "" : "; no ignore_index is set");
    }
    return FT_OK;
}

#define LOSS_BODY(T)                                                                                             \
    do {                                                                                                         \
        const T *x = in[0].data, *w = has_w ? (const T *)in[2].data : NULL;                                      \
        T *y = out[0].data, *lp = n->n_out > 1 ? (T *)out[1].data : NULL;                                        \
        _Pragma("omp parallel for num_threads(k->threads) reduction(+ : sum, wsum) if (work >= CPU_PAR_MIN)")    \
        for (int64_t e = 0; e < N * D; e++) {                                                                    \
            int64_t i = e / D, d = e % D, t = target_at(&in[1], e);                                              \
            const T *row = x + i * C * D + d;                                                                    \
            double lse = 0;                                                                                      \
            if (sce) {                                                                                           \
                double m = -INFINITY, s = 0;                                                                     \
                for (int64_t c = 0; c < C; c++)                                                                  \
                    m = fmax(m, (double)row[c * D]);                                                             \
                for (int64_t c = 0; c < C; c++)                                                                  \
                    s += exp((double)row[c * D] - m);                                                            \
                lse = m + log(s);                                                                                \
                if (lp)                                                                                          \
                    for (int64_t c = 0; c < C; c++)                                                              \
                        lp[i * C * D + c * D + d] = (T)((double)row[c * D] - lse);                               \
            }                                                                                                    \
            double l = 0, wt = 0;                                                                                \
            if (!(p->has_ignore && t == p->ignore_index)) {                                                      \
                wt = w ? (double)w[t] : 1.0;                                                                     \
                l = -wt * ((double)row[t * D] - lse);                                                            \
            }                                                                                                    \
            if (p->reduction == FT_LOSS_NONE)                                                                    \
                y[e] = (T)l;                                                                                     \
            sum += l;                                                                                            \
            wsum += wt;                                                                                          \
        }                                                                                                        \
        if (p->reduction == FT_LOSS_SUM)                                                                         \
            y[0] = (T)sum;                                                                                       \
        else if (p->reduction == FT_LOSS_MEAN)                                                                   \
            y[0] = (T)(sum / wsum);                                                                              \
    } while (0)

ft_status cpu_loss(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_loss_params *p = &n->params.loss;
    const ft_shape *xs = &in[0].shape;
    int64_t N = xs->dims[0], C = xs->dims[1], D = 1;
    for (int d = 2; d < xs->rank; d++)
        D *= xs->dims[d];
    ft_status st = check_targets(k, n, &in[1], C);
    if (st)
        return st;
    int sce = n->op == FT_OP_SOFTMAX_CROSS_ENTROPY_LOSS, has_w = n->n_in > 2 && n->in[2] >= 0;
    int64_t work = N * C * D;
    double sum = 0, wsum = 0;
    if (in[0].dtype == FT_F64)
        LOSS_BODY(double);
    else
        LOSS_BODY(float);
    return FT_OK;
}

/* Element j of a window of periodic length N (size, or size - 1 when
 * symmetric); a symmetric window of one sample is [1]. */
static double window_at(ft_op op, int64_t j, double N)
{
    if (N == 0)
        return 1.0;
    double a = 2 * M_PI * (double)j / N;
    if (op == FT_OP_HANN_WINDOW)
        return 0.5 - 0.5 * cos(a);
    if (op == FT_OP_HAMMING_WINDOW)
        return 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
    return 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
}

ft_status cpu_window(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k, (void)in;
    int64_t size = out[0].shape.dims[0];
    double N = n->params.loss.periodic ? (double)size : (double)size - 1;
    for (int64_t j = 0; j < size; j++) {
        double v = window_at(n->op, j, N);
        /* 16-bit floats through f32, as every other CPU result */
        if (out[0].dtype == FT_F16 || out[0].dtype == FT_BF16)
            v = (double)(float)v;
        ft_store_f64(out[0].data, out[0].dtype, (size_t)j, v);
    }
    return FT_OK;
}

/* mel_weight_matrix: graph/mel.h's triangles, computed in double and stored
 * in the output dtype (16-bit floats through f32). */
ft_status cpu_mel_weight_matrix(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    (void)k;
    int64_t rows = out[0].shape.dims[0], bins = out[0].shape.dims[1];
    int64_t dft = ft_load_i64(in[1].data, in[1].dtype, 0), sr = ft_load_i64(in[2].data, in[2].dtype, 0);
    double lo, step;
    ft_mel_range(ft_load_f64(in[3].data, in[3].dtype, 0), ft_load_f64(in[4].data, in[4].dtype, 0), bins,
                 in[3].dtype == FT_F64, &lo, &step);
    for (int64_t i = 0; i < bins; i++) {
        int64_t l = ft_mel_edge(i, lo, step, dft, sr), c = ft_mel_edge(i + 1, lo, step, dft, sr),
                h = ft_mel_edge(i + 2, lo, step, dft, sr);
        for (int64_t j = 0; j < rows; j++) {
            double v = ft_mel_weight(j, l, c, h);
            if (out[0].dtype == FT_F16 || out[0].dtype == FT_BF16)
                v = (double)(float)v;
            ft_store_f64(out[0].data, out[0].dtype, (size_t)(j * bins + i), v);
        }
    }
    return FT_OK;
}
