/* Kernels for tensors a run keeps in oneDNN's channel-blocked layout
 * (cpu/conv_dnnl.c, "Blocked chains"): nCw8c, nChw16c, nCdhw16c and the
 * like, that is [N][C/B][spatial][B] with B = 8 or 16 and C a multiple of B,
 * or channels-last nhwc and the like (B = C).
 * conv_layout.c's conv_layouts_build lets a tensor stay blocked when one of these
 * reads it: the global average and max pools (a plain [N, C, 1, ...]
 * output), a mul by a per-channel factor ([N or 1, C, 1, ...], plain),
 * whose product then stays blocked too (the squeeze-excitation blocks of
 * EfficientNet and MobileNetV3), and max_pool, whose output stays blocked
 * (the pool after ResNet's first conv) or is written plain (a pool whose
 * result is a graph output, or read by another op). pool.c and binary.c call these first; they
 * return 0 for a plain input, and the caller's own loops run. The results
 * are those of the plain loops: the same sums in double for the average, the
 * same NaN rule for the max (a NaN in the window wins; an empty window
 * gives -inf), the same products.
 *
 * With AVX-512 (chosen at run time, __builtin_cpu_supports) and B a
 * multiple of 16, two loops work on 16 x 16 tiles transposed in registers:
 * max_pool into a plain output (maxpool_plain16: 16 channel rows written
 * along at a time, instead of a staged transpose and scalar stores; 0.67 ->
 * 0.38 ms for the 8x64x56x56 pool of bench/graphs/cnn_block.json, 1 thread),
 * and cpu_to_blocked, the blocked copy of a plain tensor (conv_layout.h,
 * conv_copy) that reads max |x| in the same pass for conv_dnnl.c's NaN rule
 * (that graph's input: about 0.65 ms, against 0.5 for oneDNN's reorder plus
 * 0.4 for a separate scan). Elsewhere the portable loops and oneDNN's
 * reorder run. */
#include "cpu.h"
#include "vmath.h"
#include "../graph/infer_pool.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

/* Lanes of one pass: the channels of a block are taken 16 at a time. */
#define LANES 16

/* One lane group: w channels (w <= LANES) at stride B over len positions,
 * summed in double (or maxed) into y[0..w-1]. Inlined with w = LANES as a
 * constant for the full groups. */
static inline __attribute__((always_inline)) void gpool_group(const float *xp, float *yp, int64_t len, int64_t B,
                                                               int w, int max)
{
    if (max) {
        float m[LANES];
        int nan[LANES] = {0};
        for (int j = 0; j < LANES; j++)
            m[j] = -INFINITY;
        for (int64_t s = 0; s < len; s++)
#pragma omp simd
            for (int j = 0; j < w; j++) {
                float v = xp[s * B + j];
                m[j] = v > m[j] ? v : m[j];
                nan[j] |= v != v;
            }
        for (int j = 0; j < w; j++)
            yp[j] = nan[j] ? NAN : m[j];
    } else {
        double acc[LANES] = {0};
        for (int64_t s = 0; s < len; s++)
#pragma omp simd
            for (int j = 0; j < w; j++)
                acc[j] += (double)xp[s * B + j];
        for (int j = 0; j < w; j++)
            yp[j] = (float)(acc[j] / (double)len);
    }
}

/* items i0..i1 of [N * C/B blocks] x [ceil(B / LANES) lane groups] */
FT_VCLONES static void gpool_items(const float *x, float *y, int64_t i0, int64_t i1, int64_t len, int64_t B, int max)
{
    const int64_t groups = (B + LANES - 1) / LANES;
    for (int64_t i = i0; i < i1; i++) {
        int64_t t = i / groups, j0 = i % groups * LANES;
        const float *xp = x + t * len * B + j0;
        float *yp = y + t * B + j0; /* channel n*C + cb*B + j of the plain output */
        if (B - j0 >= LANES)
            gpool_group(xp, yp, len, B, LANES, max);
        else
            gpool_group(xp, yp, len, B, (int)(B - j0), max);
    }
}

int cpu_global_pool_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    int64_t B = cpu_channel_block(k, n->in[0]);
    if (!B)
        return 0;
    const ft_shape *s = &in[0].shape;
    int64_t items = s->dims[0] * (s->dims[1] / B) * ((B + LANES - 1) / LANES), len = 1;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int max = n->op == FT_OP_GLOBAL_MAX_POOL;
    int par = k->threads > 1 && items > 1 && (uint64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        gpool_items(in[0].data, out[0].data, items * id / nt, items * (id + 1) / nt, len, B, max);
    }
    *st = FT_OK;
    return 1;
}

/* rows r0..r1 of B channels: y = x * the row's per-channel factors */
FT_VCLONES static void mul_rows(const float *x, const float *f, float *y, int64_t r0, int64_t r1, int64_t len,
                                int64_t CB, int64_t B, int64_t fstep)
{
    for (int64_t r = r0; r < r1; r++) {
        int64_t t = r / len, nb = t / CB, cb = t % CB;
        const float *fp = f + nb * fstep + cb * B;
        const float *xp = x + r * B;
        float *yp = y + r * B;
#pragma omp simd
        for (int64_t j = 0; j < B; j++)
            yp[j] = xp[j] * fp[j];
    }
}

int cpu_mul_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    int64_t B = cpu_channel_block(k, n->out[0]);
    if (!B)
        return 0;
    /* the blocked operand has the product's shape; the other is per channel */
    int big = cpu_channel_block(k, n->in[0]) ? 0 : 1;
    const ft_shape *s = &out[0].shape;
    int64_t N = s->dims[0], C = s->dims[1], len = 1, fstep = in[1 - big].shape.dims[0] == 1 ? 0 : C;
    for (int i = 2; i < s->rank; i++)
        len *= s->dims[i];
    int64_t CB = C / B, rows = N * CB * len; /* rows of B channels */
    int par = k->threads > 1 && rows > 1 && (uint64_t)ft_numel(s) >= CPU_PAR_MIN;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        mul_rows(in[big].data, in[1 - big].data, out[0].data, rows * id / nt, rows * (id + 1) / nt, len, CB, B, fstep);
    }
    *st = FT_OK;
    return 1;
}

/* The max of w lanes (w <= LANES) over the cd x ch x cw window cells from
 * x0 (cell strides sd, sh, sw floats) into yp[0..w-1]. Inlined with w =
 * LANES as a constant for the full lane groups. */
static inline __attribute__((always_inline)) void window_max(const float *x0, float *yp, int64_t cd, int64_t ch,
                                                              int64_t cw, int64_t sd, int64_t sh, int64_t sw, int w)
{
    float m[LANES];
    int nan[LANES] = {0};
    for (int j = 0; j < LANES; j++)
        m[j] = -INFINITY;
    for (int64_t a = 0; a < cd; a++)
        for (int64_t b = 0; b < ch; b++)
            for (int64_t c = 0; c < cw; c++) {
                const float *xp = x0 + a * sd + b * sh + c * sw;
#pragma omp simd
                for (int j = 0; j < w; j++) {
                    float v = xp[j];
                    m[j] = v > m[j] ? v : m[j];
                    nan[j] |= v != v;
                }
            }
    for (int j = 0; j < w; j++)
        yp[j] = nan[j] ? NAN : m[j];
}

/* Floats of the staging buffer of a plain output: OW positions of B lanes. */
#define STAGE 2048

/* output rows r0..r1 (block, output depth, output row) of a max pool, into
 * the blocked y, or with plain into the plain y ([N][C][spatial]): then the
 * B lanes of up to STAGE / B positions are staged and go out a channel row
 * at a time (one lane at a time where B > STAGE) */
FT_VCLONES static void maxpool_rows(const ft_pool_geom *g, const float *x, float *y, int64_t r0, int64_t r1, int64_t B,
                                    int plain)
{
    const int64_t ip = g->in[0] * g->in[1] * g->in[2]; /* cells of an input block */
    const int64_t ocells = g->out[0] * g->out[1] * g->out[2];
    const int64_t chunk = plain ? (B <= STAGE ? STAGE / B : 1) : g->out[2];
    float stage[STAGE];
    for (int64_t r = r0; r < r1; r++) {
        int64_t p = r / (g->out[0] * g->out[1]), od = r / g->out[1] % g->out[0], oh = r % g->out[1];
        int64_t fd, cd, fh, ch;
        ft_pool_window(g, 0, od, &fd, &cd);
        ft_pool_window(g, 1, oh, &fh, &ch);
        for (int64_t ow0 = 0; ow0 < g->out[2]; ow0 += chunk) {
            int64_t nw = g->out[2] - ow0 < chunk ? g->out[2] - ow0 : chunk;
            for (int64_t q = 0; q < nw; q++) {
                int64_t fw, cw;
                ft_pool_window(g, 2, ow0 + q, &fw, &cw);
                int64_t cell = (fd * g->in[1] + fh) * g->in[2] + fw;
                const float *xc = x + (p * ip + cell) * B;
                const int64_t sd = g->d[0] * g->in[1] * g->in[2] * B, sh = g->d[1] * g->in[2] * B, sw = g->d[2] * B;
                for (int64_t j0 = 0; j0 < B; j0 += LANES) {
                    float one[LANES], *yp = !plain ? y + (r * g->out[2] + ow0 + q) * B + j0
                                          : B <= STAGE ? stage + q * B + j0 : one;
                    if (B - j0 >= LANES)
                        window_max(xc + j0, yp, cd, ch, cw, sd, sh, sw, LANES);
                    else if (B - j0 == 8) /* AVX2's nChw8c: one vector, its width a constant */
                        window_max(xc + j0, yp, cd, ch, cw, sd, sh, sw, 8);
                    else
                        window_max(xc + j0, yp, cd, ch, cw, sd, sh, sw, (int)(B - j0));
                    for (int64_t j = 0; yp == one && j < LANES && j0 + j < B; j++)
                        y[(p * B + j0 + j) * ocells + (od * g->out[1] + oh) * g->out[2] + ow0 + q] = one[j];
                }
            }
            if (!plain || B > STAGE)
                continue;
            for (int64_t j = 0; j < B; j++) {
                float *yr = y + (p * B + j) * ocells + (od * g->out[1] + oh) * g->out[2] + ow0;
                for (int64_t q = 0; q < nw; q++)
                    yr[q] = stage[q * B + j];
            }
        }
    }
}

#ifdef HAVE_X86
#define AVX512 __attribute__((target("avx512f")))

static int have_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}

/* r[i][j] = r[j][i]: a 16 x 16 transpose in registers */
AVX512 static inline __attribute__((always_inline)) void tr16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        __m512 a = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88), b = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xDD);
        __m512 c = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88), d = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xDD);
        t[k] = _mm512_shuffle_f32x4(a, c, 0x88);
        t[4 + k] = _mm512_shuffle_f32x4(b, d, 0x88);
        t[8 + k] = _mm512_shuffle_f32x4(a, c, 0xDD);
        t[12 + k] = _mm512_shuffle_f32x4(b, d, 0xDD);
    }
    for (int i = 0; i < 16; i++)
        r[i] = t[i];
}

/* The max pool of maxpool_rows with a plain output and B a multiple of 16,
 * items i0..i1 of [N * C/B blocks] x [B / 16 lane groups]: each a plane of
 * 16 channels, so that the output goes out 16 channel rows at a time, in
 * order (scattered over all B rows, the writes cost more than the pool).
 * Tiles of 16 output positions x 16 channels are maxed in registers (the
 * comparisons of window_max: v > m ? v : m, a NaN in the window wins),
 * transposed and stored. The cells of the next output row are prefetched
 * (each read is 64 bytes of a position's B lanes: a stride the hardware
 * prefetcher follows late). */
AVX512 static void maxpool_plain16(const ft_pool_geom *g, const float *x, float *y, int64_t i0, int64_t i1, int64_t B)
{
    const int64_t ip = g->in[0] * g->in[1] * g->in[2], ocells = g->out[0] * g->out[1] * g->out[2];
    const int64_t sd = g->d[0] * g->in[1] * g->in[2] * B, sh = g->d[1] * g->in[2] * B, sw = g->d[2] * B;
    const int64_t pf = g->s[1] * g->in[2] * B; /* from a cell to the one the next output row reads */
    const __m512 ninf = _mm512_set1_ps(-INFINITY), qnan = _mm512_set1_ps(NAN);
    for (int64_t it = i0; it < i1; it++) {
        const int64_t p = it / (B / 16), j0 = it % (B / 16) * 16;
        for (int64_t r = 0; r < g->out[0] * g->out[1]; r++) {
            int64_t fd, cd, fh, ch;
            ft_pool_window(g, 0, r / g->out[1], &fd, &cd);
            ft_pool_window(g, 1, r % g->out[1], &fh, &ch);
            for (int64_t ow0 = 0; ow0 < g->out[2]; ow0 += 16) {
                int nw = g->out[2] - ow0 < 16 ? (int)(g->out[2] - ow0) : 16;
                __m512 t[16];
                for (int q = 0; q < 16; q++) {
                    int64_t fw = 0, cw = 0;
                    if (q < nw)
                        ft_pool_window(g, 2, ow0 + q, &fw, &cw);
                    const float *xc = x + (p * ip + (fd * g->in[1] + fh) * g->in[2] + fw) * B + j0;
                    __m512 m = ninf;
                    __mmask16 nan = 0;
                    for (int64_t a = 0; a < cd; a++)
                        for (int64_t b = 0; b < ch; b++)
                            for (int64_t c = 0; c < cw; c++) {
                                const float *xp = xc + a * sd + b * sh + c * sw;
                                _mm_prefetch((const char *)(xp + pf), _MM_HINT_T0);
                                __m512 v = _mm512_loadu_ps(xp);
                                nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                                m = _mm512_max_ps(v, m);
                            }
                    t[q] = _mm512_mask_blend_ps(nan, m, qnan);
                }
                tr16(t);
                float *yt = y + (p * B + j0) * ocells + r * g->out[2] + ow0;
                for (int j = 0; j < 16; j++)
                    _mm512_mask_storeu_ps(yt + j * ocells, (__mmask16)((1u << nw) - 1), t[j]);
            }
        }
    }
}

/* Items i0..i1 of cpu_to_blocked, each 16 channels of one block of B
 * (B a multiple of 16): their 16 rows are read along, 16 positions at a
 * time (prefetched two lines ahead: 16 streams are more than the hardware
 * prefetcher follows), transposed in registers and stored as 64-byte pieces
 * of the positions' B lanes. Returns the largest |x| bit pattern read. */
AVX512 static uint32_t to_blocked16(const float *x, float *y, int64_t S, int64_t B, int64_t i0, int64_t i1)
{
    const __m512i mag = _mm512_set1_epi32(0x7fffffff);
    __m512i m = _mm512_setzero_si512();
    for (int64_t i = i0; i < i1; i++) {
        const int64_t blk = i / (B / 16), j0 = i % (B / 16) * 16; /* blk: n * C/B + the channel block */
        const float *xs = x + (blk * B + j0) * S;
        float *ys = y + blk * S * B + j0;
        for (int64_t s0 = 0; s0 < S; s0 += 16) {
            int ns = S - s0 < 16 ? (int)(S - s0) : 16;
            __mmask16 keep = (__mmask16)((1u << ns) - 1);
            __m512 t[16];
            for (int j = 0; j < 16; j++) {
                _mm_prefetch((const char *)(xs + j * S + s0 + 32), _MM_HINT_T0);
                t[j] = _mm512_maskz_loadu_ps(keep, xs + j * S + s0);
                m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_castps_si512(t[j]), mag));
            }
            tr16(t);
            for (int q = 0; q < ns; q++)
                _mm512_storeu_ps(ys + (s0 + q) * B, t[q]);
        }
    }
    return (uint32_t)_mm512_reduce_max_epu32(m);
}
#endif

int cpu_to_blocked(const float *x, float *y, const ft_shape *sh, int64_t B, int threads, double *amax)
{
#ifdef HAVE_X86
    if (B <= 0 || B % 16 || sh->rank < 3 || sh->dims[1] % B || !have_avx512())
        return 0;
    int64_t S = 1;
    for (int i = 2; i < sh->rank; i++)
        S *= sh->dims[i];
    const int64_t items = sh->dims[0] * (sh->dims[1] / 16);
    uint32_t m = 0;
    int par = threads > 1 && items > 1 && (uint64_t)ft_numel(sh) >= CPU_PAR_MIN;
#pragma omp parallel num_threads(threads) if (par) reduction(max : m)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        m = to_blocked16(x, y, S, B, items * id / nt, items * (id + 1) / nt);
    }
    if (m >= 0x7f800000u) {
        *amax = INFINITY;
    } else {
        float f;
        memcpy(&f, &m, sizeof f);
        *amax = f;
    }
    return 1;
#else
    (void)x, (void)y, (void)sh, (void)B, (void)threads, (void)amax;
    return 0;
#endif
}

int cpu_max_pool_blocked(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    /* the output is blocked as the input, or plain (conv_layout.c) */
    int64_t B = cpu_channel_block(k, n->in[0]);
    if (!B)
        return 0;
    int plain = cpu_channel_block(k, n->out[0]) != B;
    ft_pool_geom g;
    ft_pool_geom_of(&n->params.pool, &in[0].shape, &out[0].shape, &g);
    const int64_t rows = g.planes / B * g.out[0] * g.out[1];
    int par = k->threads > 1 && rows > 1 && (uint64_t)ft_numel(&out[0].shape) >= CPU_PAR_MIN / 4;
#ifdef HAVE_X86
    int fast = plain && B % 16 == 0 && have_avx512();
#endif
#pragma omp parallel num_threads(k->threads) if (par)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
#ifdef HAVE_X86
        if (fast)
            maxpool_plain16(&g, in[0].data, out[0].data, g.planes / 16 * id / nt, g.planes / 16 * (id + 1) / nt, B);
        else
#endif
            maxpool_rows(&g, in[0].data, out[0].data, rows * id / nt, rows * (id + 1) / nt, B, plain);
    }
    *st = FT_OK;
    return 1;
}
