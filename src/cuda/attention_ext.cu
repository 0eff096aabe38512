/* CUDA rotary_embedding and attention's KV cache (the attention kernels
 * themselves are in attention.cu).
 *
 * rotary_embedding follows the CPU reference (src/cpu/rotary.c): one thread
 * per rotated pair (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos), in f32 for
 * the 16-bit types (one rounding at the store, as the CPU's f32 kernel
 * followed by narrowing) and in the type itself for f32 and f64; the values
 * past rotary_embedding_dim are copied. Position ids are checked on the
 * device first (index.cu, cu_check_indices), negative ones counting from the end
 * of the cache as gather's do.
 *
 * The KV cache: present = concat(past, new) along the sequence axis, as two
 * strided copies per tensor (cudaMemcpy2DAsync, rows of one (batch, head)),
 * into the present outputs when the node has them, else into the workspace. */
#include "cu.cuh"

#include <string.h>

typedef struct rope_args {
    int64_t B, S, H, D, half, cw, P; /* cw: row length of the caches; P: their rows (with positions) */
    int interleaved, heads_last, cache_b1;
} rope_args;

template <class T>
__global__ void __launch_bounds__(CU_BLOCK) rope_kernel(const T *__restrict__ x, const T *__restrict__ cs,
                                                        const T *__restrict__ sn, const int64_t *__restrict__ pos,
                                                        T *__restrict__ y, rope_args a, int64_t count)
{
    typedef typename cu_acc<T>::type A;
    /* element t of [B, S, H, D'] with D' = half + (D - 2 half): the pairs, then the copied tail */
    const int64_t w = a.D - a.half;
    for (int64_t t = cu_grid_start(); t < count; t += cu_grid_step()) {
        int64_t i = t % w, r = t / w, h = r % a.H, s = r / a.H % a.S, b = r / (a.H * a.S);
        int64_t o = a.heads_last ? ((b * a.S + s) * a.H + h) * a.D : ((b * a.H + h) * a.S + s) * a.D;
        if (i >= a.half) {
            int64_t j = i + a.half; /* past the rotated dims */
            y[o + j] = x[o + j];
            continue;
        }
        int64_t row = pos ? pos[b * a.S + s] : (a.cache_b1 ? 0 : b) * a.S + s;
        if (pos && row < 0)
            row += a.P;
        int64_t i1 = a.interleaved ? 2 * i : i, i2 = a.interleaved ? 2 * i + 1 : i + a.half;
        A c = cu_load(cs, row * a.cw + i), sv = cu_load(sn, row * a.cw + i);
        A x1 = cu_load(x, o + i1), x2 = cu_load(x, o + i2);
        cu_store(y, o + i1, x1 * c - x2 * sv);
        cu_store(y, o + i2, x1 * sv + x2 * c);
    }
}

template <class T>
static void rope_launch(ft_kctx *k, const ft_view *in, const int64_t *pos, ft_view *out, rope_args a, int64_t count)
{
    rope_kernel<T><<<cu_grid(k->be, (uint64_t)count), CU_BLOCK, 0, k->be->stream>>>(
        (const T *)in[0].data, (const T *)in[1].data, (const T *)in[2].data, pos, (T *)out[0].data, a, count);
}

CU_KFN(cu_rotary_embedding)
{
    const ft_rope_params *p = &n->params.rope;
    const int64_t *xd = in[0].shape.dims;
    const ft_shape *cs = &in[1].shape;
    rope_args a;
    memset(&a, 0, sizeof a);
    a.B = xd[0];
    a.S = p->heads_last ? xd[1] : xd[2];
    a.H = p->heads;
    a.D = p->head_size;
    a.half = p->rdim / 2;
    a.cw = cs->dims[cs->rank - 1];
    a.P = cs->dims[0];
    a.interleaved = p->interleaved;
    a.heads_last = p->heads_last;
    a.cache_b1 = !p->has_pos && p->cache_b == 1;
    const int64_t *pos = NULL;
    if (p->has_pos) {
        ft_status st = cu_check_indices(k, n, &in[3], 1, &a.P);
        if (st)
            return st;
        pos = (const int64_t *)in[3].data;
    }
    int64_t count = a.B * a.S * a.H * (a.D - a.half);
    if (count == 0)
        return FT_OK;
    CU_DISPATCH_FLOAT(in[0].dtype, T, rope_launch<T>(k, in, pos, out, a, count));
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* [BH, P, W] then [BH, T, W] into [BH, P + T, W]: rows of rb bytes. */
static ft_status cat_seq(ft_kctx *k, const ft_node *n, char *dst, const void *past, const void *cur, int64_t bh,
                         int64_t P, int64_t T, size_t rb)
{
    size_t pitch = (size_t)(P + T) * rb;
    if (bh == 0 || rb == 0)
        return FT_OK;
    if (P)
        CU_TRY(k, n, cudaMemcpy2DAsync(dst, pitch, past, (size_t)P * rb, (size_t)P * rb, (size_t)bh,
                                       cudaMemcpyDeviceToDevice, k->be->stream));
    if (T)
        CU_TRY(k, n, cudaMemcpy2DAsync(dst + (size_t)P * rb, pitch, cur, (size_t)T * rb, (size_t)T * rb, (size_t)bh,
                                       cudaMemcpyDeviceToDevice, k->be->stream));
    return FT_OK;
}

ft_status cu_attn_kv_cache(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const void **kp,
                           const void **vp, int64_t *T)
{
    const ft_attn_params *ap = &n->params.attn;
    const int64_t *kd = in[1].shape.dims, *vd = in[2].shape.dims;
    int64_t P = ap->past ? in[4].shape.dims[2] : 0, tt = kd[2] + P, bh = kd[0] * kd[1];
    size_t es = ft_dtype_size(in[0].dtype), kb = (size_t)(bh * tt * kd[3]) * es, vb = (size_t)(bh * tt * vd[3]) * es;
    char *kc, *vc;
    if (ap->present) {
        kc = (char *)out[1].data, vc = (char *)out[2].data;
    } else {
        void *ws;
        ft_status st = cu_workspace(k, n, ((kb + 255) & ~(size_t)255) + vb + 256, &ws);
        if (st)
            return st;
        kc = (char *)ws, vc = kc + ((kb + 255) & ~(size_t)255);
    }
    ft_status st = cat_seq(k, n, kc, ap->past ? in[4].data : NULL, in[1].data, bh, P, kd[2], (size_t)kd[3] * es);
    if (!st)
        st = cat_seq(k, n, vc, ap->past ? in[5].data : NULL, in[2].data, bh, P, vd[2], (size_t)vd[3] * es);
    *kp = kc;
    *vp = vc;
    *T = tt;
    return st;
}
