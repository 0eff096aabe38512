/* CPU rotary_embedding (cpu.h, rotary.c section) in f32 and f64; f16/bf16
 * go through the f32 kernel (cpu_backend.c). Shapes and attributes were
 * checked by src/graph/infer_attention.c; position ids are data and are
 * checked here, all of them, before anything is written.
 *
 * Each head row of D values has its first R rotated in pairs (x1, x2) by the
 * angle of its position: (x1 cos - x2 sin, x1 sin + x2 cos), the pairs being
 * (i, i + R/2) or, interleaved, (2i, 2i + 1); the other D - R values are
 * copied. The CUDA kernel (src/cuda/attention_ext.cu) does the same arithmetic. */
#include "cpu.h"

#include <string.h>

#define DEF_ROPE(SFX, TY)                                                                                             \
    static void rope_##SFX(const ft_rope_params *p, const TY *x, const TY *cs, const TY *sn, const int64_t *pos,      \
                           TY *y, int64_t B, int64_t S, int64_t P, int64_t cw, int nth)                                      \
    {                                                                                                                 \
        int64_t H = p->heads, D = p->head_size, half = p->rdim / 2;                                                   \
        int big = nth > 1 && B * S * H * D >= (1 << 16);                                                              \
        _Pragma("omp parallel for collapse(2) num_threads(nth) if (big)") for (int64_t b = 0; b < B; b++)                      \
        for (int64_t s = 0; s < S; s++) {                                                                             \
            int64_t r = pos ? pos[b * S + s] : (p->cache_b == 1 ? 0 : b) * S + s;                                    \
            if (pos && r < 0)                                                                                         \
                r += P;                                                                                               \
            const TY *c = cs + r * cw, *si = sn + r * cw;                                                             \
            for (int64_t h = 0; h < H; h++) {                                                                         \
                int64_t o = p->heads_last ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;                    \
                const TY *xr = x + o;                                                                                 \
                TY *yr = y + o;                                                                                       \
                for (int64_t i = 0; i < half; i++) {                                                                  \
                    int64_t i1 = p->interleaved ? 2 * i : i, i2 = p->interleaved ? 2 * i + 1 : i + half;              \
                    TY x1 = xr[i1], x2 = xr[i2];                                                                      \
                    yr[i1] = x1 * c[i] - x2 * si[i];                                                                  \
                    yr[i2] = x1 * si[i] + x2 * c[i];                                                                  \
                }                                                                                                     \
                if (D > p->rdim)                                                                                      \
                    memcpy(yr + p->rdim, xr + p->rdim, (size_t)(D - p->rdim) * sizeof(TY));                           \
            }                                                                                                         \
        }                                                                                                             \
    }

DEF_ROPE(f32, float)
DEF_ROPE(f64, double)

ft_status cpu_rotary_embedding(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_rope_params *p = &n->params.rope;
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cpu rotary_embedding kernel",
                           ft_dtype_name(dt));
    const int64_t *xd = in[0].shape.dims;
    int64_t B = xd[0], S = p->heads_last ? xd[1] : xd[2];
    const ft_shape *cs = &in[1].shape;
    int64_t P = cs->dims[0], cw = cs->dims[cs->rank - 1];
    const int64_t *pos = p->has_pos ? in[3].data : NULL;
    if (pos)
        for (int64_t i = 0; i < B * S; i++)
            if (pos[i] < -P || pos[i] >= P)
                return ft_node_err(k->err, FT_EGRAPH, k->g, n,
                                   "position id %lld at [%lld,%lld] of position_ids '%s' is out of range for cos_cache "
                                   "'%s' with %lld positions (valid ids are %lld..%lld)", (long long)pos[i],
                                   (long long)(i / S), (long long)(i % S), k->g->tensors[n->in[3]].name,
                                   k->g->tensors[n->in[1]].name, (long long)P, (long long)-P, (long long)(P - 1));
    if (ft_numel(&out[0].shape) == 0)
        return FT_OK;
    if (dt == FT_F32)
        rope_f32(p, in[0].data, in[1].data, in[2].data, pos, out[0].data, B, S, P, cw, k->threads);
    else
        rope_f64(p, in[0].data, in[1].data, in[2].data, pos, out[0].data, B, S, P, cw, k->threads);
    return FT_OK;
}
