/* CPU random_uniform_like, random_normal_like, bernoulli and multinomial: element i (its
 * flat row-major index) from Philox-4x32-10 with counter i and the node's
 * seed as key, as "init" value sources and dropout (graph.c ft_init_values,
 * man/ftrun-graph.5 "Random sampling"). The CUDA backend computes the same
 * (cuda/random.cu).
 *
 *   uniform:   low + (high - low) u1            (ft_init_values, kind 2)
 *   normal:    mean + scale sqrt(-2 ln(1 - u1)) cos(2 pi u2)   (kind 3)
 *   bernoulli: 1 where u1 < p[i], else 0 (a NaN p gives 0) */
#include "cpu.h"

#include <math.h>
#include <string.h>

/* multinomial: sample j of row b (output element i = b * sample_size + j)
 * is the first class k with u1(i) * total < e[0] + ... + e[k], where
 * e[c] = exp(x[b, c] - max over the row) in double and total their sum
 * (softmax sampling without dividing); the last class when there is none
 * (a row of NaN or -inf, or u1 * total rounding past the sum). */
static void multinomial(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int64_t rows = in[0].shape.dims[0], cls = in[0].shape.dims[1], ns = out[0].shape.dims[1];
    uint64_t seed = n->params.rnd.seed;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (rows * ns * cls >= CPU_PAR_MIN)
    for (int64_t b = 0; b < rows; b++) {
        double mx = -INFINITY, total = 0;
        for (int64_t c = 0; c < cls; c++) {
            double v = ft_load_f64(in[0].data, in[0].dtype, (size_t)(b * cls + c));
            mx = v > mx ? v : mx;
        }
        for (int64_t c = 0; c < cls; c++)
            total += exp(ft_load_f64(in[0].data, in[0].dtype, (size_t)(b * cls + c)) - mx);
        for (int64_t j = 0; j < ns; j++) {
            uint64_t i = (uint64_t)(b * ns + j);
            uint32_t w[4];
            ft_philox4x32(i, seed, w);
            double t = ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) * (1.0 / 9007199254740992.0) * total;
            double acc = 0;
            int64_t c = 0;
            for (; c < cls - 1; c++) {
                acc += exp(ft_load_f64(in[0].data, in[0].dtype, (size_t)(b * cls + c)) - mx);
                if (t < acc)
                    break;
            }
            ft_store_i64(out[0].data, out[0].dtype, (size_t)i, c);
        }
    }
}

ft_status cpu_random(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    if (n->op == FT_OP_MULTINOMIAL) {
        multinomial(k, n, in, out);
        return FT_OK;
    }
    const ft_random_params *p = &n->params.rnd;
    uint64_t cnt = ft_numel(&out[0].shape);
    if (n->op != FT_OP_BERNOULLI) {
        ft_init_values(out[0].data, out[0].dtype, cnt, n->op == FT_OP_RANDOM_UNIFORM_LIKE ? 2 : 3, p->a, p->b, p->seed);
        return FT_OK;
    }
#pragma omp parallel for num_threads(k->threads) schedule(static) if (cnt >= CPU_PAR_MIN / 8)
    for (uint64_t i = 0; i < cnt; i++) {
        uint32_t w[4];
        ft_philox4x32(i, p->seed, w);
        double u1 = ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) * (1.0 / 9007199254740992.0);
        ft_store_f64(out[0].data, out[0].dtype, (size_t)i, u1 < ft_load_f64(in[0].data, in[0].dtype, i) ? 1.0 : 0.0);
    }
    return FT_OK;
}
