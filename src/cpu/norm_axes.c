/* CPU normalisations over a set of axes (cpu_axes_norm), in f32 and f64:
 *   lp_normalization             y = x / (sum |x|)  or  x / sqrt(sum x^2)  (0 where that is 0)
 *   mean_variance_normalization  y = (x - mean) / (sqrt(mean((x - mean)^2)) + epsilon)
 * over the axes marked in n->params.reduce.red (graph/infer_math.c). The kept
 * axes index the groups; each group is normalised on its own, its statistics
 * accumulated in double (the variance in two passes, so it is never negative).
 * Groups are split across threads. Every element of a group is read before
 * any of it is written, so the kernel also works in place. */
#include "cpu.h"

#include <math.h>

/* The kept and the normalised dims of a shape (size-1 dims dropped), with
 * their element strides, both in row-major order. */
typedef struct {
    int nk, nr;
    int64_t kdim[FT_MAX_RANK], kstr[FT_MAX_RANK], rdim[FT_MAX_RANK], rstr[FT_MAX_RANK];
    int64_t groups, per; /* number of groups, elements in each */
} an_plan;

static void an_plan_of(const ft_shape *s, const int *red, an_plan *p)
{
    int64_t st[FT_MAX_RANK];
    ft_strides(s, st);
    p->nk = p->nr = 0;
    p->groups = p->per = 1;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] == 1)
            continue;
        if (red[d]) {
            p->rdim[p->nr] = s->dims[d], p->rstr[p->nr++] = st[d];
            p->per *= s->dims[d];
        } else {
            p->kdim[p->nk] = s->dims[d], p->kstr[p->nk++] = st[d];
            p->groups *= s->dims[d];
        }
    }
}

/* Offset of group g: g decomposed over the kept dims. */
static int64_t group_offset(const an_plan *p, int64_t g)
{
    int64_t off = 0;
    for (int d = p->nk - 1; d >= 0; d--) {
        off += g % p->kdim[d] * p->kstr[d];
        g /= p->kdim[d];
    }
    return off;
}

/* Walks the elements of one group: OFF is the offset of the current one. */
#define FOR_GROUP(p, base, OFF, BODY)                                                            \
    do {                                                                                         \
        int64_t idx_[FT_MAX_RANK] = {0}, OFF = (base);                                           \
        for (int64_t r_ = 0; r_ < (p)->per; r_++) {                                              \
            BODY;                                                                                \
            for (int d_ = (p)->nr - 1; d_ >= 0; d_--) {                                          \
                OFF += (p)->rstr[d_];                                                            \
                if (++idx_[d_] < (p)->rdim[d_])                                                  \
                    break;                                                                       \
                OFF -= idx_[d_] * (p)->rstr[d_];                                                 \
                idx_[d_] = 0;                                                                    \
            }                                                                                    \
        }                                                                                        \
    } while (0)

#define DEF_AXES_NORM(S, T)                                                                      \
    static void group_##S(const an_plan *p, const T *x, T *y, int64_t base, int mvn, int lp, double eps) \
    {                                                                                            \
        double a = 0;                                                                            \
        if (!mvn) {                                                                              \
            FOR_GROUP(p, base, o, a += lp == 1 ? fabs((double)x[o]) : (double)x[o] * (double)x[o]); \
            const double norm = lp == 1 ? a : sqrt(a);                                           \
            /* a group of zeros gives zeros (ONNX's LpNormalization), not 0 / 0 */                 \
            FOR_GROUP(p, base, o, y[o] = norm == 0 ? (T)0 : (T)((double)x[o] / norm));          \
            return;                                                                              \
        }                                                                                        \
        FOR_GROUP(p, base, o, a += (double)x[o]);                                                \
        const double mean = a / (double)p->per;                                                  \
        double v = 0;                                                                            \
        FOR_GROUP(p, base, o, v += ((double)x[o] - mean) * ((double)x[o] - mean));               \
        const double den = sqrt(v / (double)p->per) + eps;                                       \
        FOR_GROUP(p, base, o, y[o] = (T)(((double)x[o] - mean) / den));                          \
    }
DEF_AXES_NORM(f32, float)
DEF_AXES_NORM(f64, double)

ft_status cpu_axes_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return cpu_no_kernel(k, n, dt);
    const int64_t total = (int64_t)ft_numel(&in[0].shape);
    if (total == 0)
        return FT_OK;
    const ft_reduce_params *rp = &n->params.reduce;
    const int mvn = n->op == FT_OP_MEAN_VARIANCE_NORMALIZATION;
    an_plan p;
    an_plan_of(&in[0].shape, rp->red, &p);
    const int par = total >= CPU_PAR_MIN && k->threads > 1 && p.groups > 1;
#pragma omp parallel for num_threads(k->threads) schedule(static) if (par)
    for (int64_t g = 0; g < p.groups; g++) {
        const int64_t base = group_offset(&p, g);
        if (dt == FT_F32)
            group_f32(&p, in[0].data, out[0].data, base, mvn, rp->lp, rp->epsilon);
        else
            group_f64(&p, in[0].data, out[0].data, base, mvn, rp->lp, rp->epsilon);
    }
    return FT_OK;
}
