/* CPU kernels of dropout and topk (einsum lives in einsum.c). */
#include "cpu.h"
#include "../graph/infer_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------ dropout
 *
 * The mask rule is a contract: the CUDA backend reproduces it bit for bit.
 *
 *   training=0: y = x and mask is all true (ratio and seed are ignored).
 *   training=1: element i (its flat row-major index) is kept iff u1(i) >= ratio, with
 *     (w0, w1, w2, w3) = Philox-4x32-10(counter = (lo32(i), hi32(i), 0, 0),
 *                                       key = (lo32(seed), hi32(seed)))
 *     u1(i) = ((w0 >> 5) * 2^26 + (w1 >> 6)) / 2^53      (exact in double, in [0, 1))
 *   the same uniform as the "init" value sources (ftrun-graph(5)), computed with
 *   ft_philox4x32. seed is the node's "seed" attribute read as a uint64 (two's
 *   complement for negative values). The --seed command-line option replaces only the
 *   seeds of "init" value sources, never this attribute: a graph's dropout mask does
 *   not change with --seed.
 *   Kept elements: y = x * (1 / (1 - ratio)), scale and product in double, rounded to
 *   the dtype (f16/bf16 run through the f32 kernel). Dropped elements: y = +0, also
 *   for an x that is NaN or infinite. ratio = 0 keeps everything with scale 1;
 *   ratio = 1 with training=1 is refused by inference.
 */
/* All ones when element i is kept, else 0. Masks rather than branches: the
 * keep decision is a coin flip, and mispredictions cost more than the rest. */
static inline uint64_t dropout_keep(uint64_t i, uint64_t seed, double ratio)
{
    uint32_t w[4];
    ft_philox4x32(i, seed, w);
    double u1 = ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) * (1.0 / 9007199254740992.0);
    return (uint64_t)0 - (uint64_t)(u1 >= ratio);
}

ft_status cpu_dropout(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    uint64_t cnt = ft_numel(&in[0].shape);
    int training = n->params.attn.training;
    double ratio = n->params.attn.ratio;
    uint64_t seed = n->params.attn.seed;
    uint8_t *mask = n->n_out > 1 ? out[1].data : NULL;
    if (cnt == 0)
        return FT_OK;
    if (!training) {
        memcpy(out[0].data, in[0].data, (size_t)cnt * ft_dtype_size(in[0].dtype));
        if (mask)
            memset(mask, 1, (size_t)cnt);
        return FT_OK;
    }
    double scale = 1.0 / (1.0 - ratio);
    int64_t total = (int64_t)cnt;
    int f32 = in[0].dtype == FT_F32;
    const char *x = in[0].data;
    char *y = out[0].data;
    /* The generator dominates (about 15 ns an element): threads pay off early. */
#pragma omp parallel for num_threads(k->threads) schedule(static) if (total >= CPU_PAR_MIN / 8)
    for (int64_t i = 0; i < total; i++) {
        uint64_t keep = dropout_keep((uint64_t)i, seed, ratio);
        if (f32) {
            float v = (float)((double)((const float *)x)[i] * scale);
            uint32_t u;
            memcpy(&u, &v, 4);
            u &= (uint32_t)keep;
            memcpy(y + 4 * i, &u, 4);
        } else {
            double v = ((const double *)x)[i] * scale;
            uint64_t u;
            memcpy(&u, &v, 8);
            u &= keep;
            memcpy(y + 8 * i, &u, 8);
        }
        if (mask)
            mask[i] = (uint8_t)(keep & 1);
    }
    return FT_OK;
}

/* --------------------------------------------------------------------- topk
 *
 * Order (ONNX TopK): largest=1 gives descending values, largest=0 ascending; equal
 * values keep the lower index first. NaN counts as larger than every number (NumPy's
 * sort order): NaNs come first with largest=1 and last with largest=0, lower index
 * first among them. -0 and +0 are equal. sorted=0 returns the same order as sorted=1
 * (any order is allowed; this one is deterministic).
 *
 * Each value becomes an unsigned key whose ascending order is the output order
 * (NaN -> the largest key, -0 -> +0, bits flipped for largest=1), so that ties are
 * plain key equality and the index breaks them. Per row: a bounded heap of the k
 * best (n log k) when k is small against the row; otherwise a stable LSD radix sort
 * of the whole row (one pass per key byte, passes whose byte is constant skipped),
 * whose stability keeps equal keys in index order. Rows that are strided (axis not
 * last) are gathered a block of neighbouring rows at a time, so that every cache
 * line read serves several rows. Blocks run in parallel.
 */

typedef struct {
    uint64_t key;
    int64_t idx;
} tk_item;

static inline uint64_t tk_key_f32(float v)
{
    uint32_t u;
    if (v != v)
        return 0xFFFFFFFFu;
    if (v == 0)
        v = 0.0f;
    memcpy(&u, &v, 4);
    return (u & 0x80000000u) ? (uint32_t)~u : (u | 0x80000000u);
}

static inline uint64_t tk_key_f64(double v)
{
    uint64_t u;
    if (v != v)
        return UINT64_MAX;
    if (v == 0)
        v = 0.0;
    memcpy(&u, &v, 8);
    return (u & 0x8000000000000000u) ? ~u : (u | 0x8000000000000000u);
}

/* Keys of g neighbouring rows (row t starts at x + base + t, its elements inner
 * apart) into kb[t * n + j]. flip turns ascending keys into descending order. */
static void tk_keys(ft_dtype dt, const void *x, int64_t base, int64_t n, int64_t inner, int g, uint64_t flip,
                    uint64_t *kb)
{
#define TK_GATHER(T, KEY)                                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                                              \
        const T *p = (const T *)x + base + j * inner;                                                              \
        for (int t = 0; t < g; t++)                                                                                \
            kb[t * n + j] = (KEY) ^ flip;                                                                          \
    }
    switch (dt) {
    case FT_F32: TK_GATHER(float, tk_key_f32(p[t])) break;
    case FT_F64: TK_GATHER(double, tk_key_f64(p[t])) break;
    case FT_I8: TK_GATHER(int8_t, (uint64_t)(uint8_t)p[t] ^ 0x80u) break;
    case FT_I16: TK_GATHER(int16_t, (uint64_t)(uint16_t)p[t] ^ 0x8000u) break;
    case FT_I32: TK_GATHER(int32_t, (uint64_t)(uint32_t)p[t] ^ 0x80000000u) break;
    case FT_I64: TK_GATHER(int64_t, (uint64_t)p[t] ^ 0x8000000000000000u) break;
    case FT_U8: TK_GATHER(uint8_t, (uint64_t)p[t]) break;
    case FT_U16: TK_GATHER(uint16_t, (uint64_t)p[t]) break;
    case FT_U32: TK_GATHER(uint32_t, (uint64_t)p[t]) break;
    case FT_U64: TK_GATHER(uint64_t, p[t]) break;
    case FT_F16:
    case FT_BF16:
    case FT_BOOL:
    FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT:
        break;
    }
#undef TK_GATHER
}

/* Max-heap on (key, idx): the root is the worst of the items kept. */
static void tk_sift(tk_item *h, int64_t len, int64_t p)
{
    for (;;) {
        int64_t c = 2 * p + 1;
        if (c >= len)
            return;
        if (c + 1 < len && (h[c + 1].key > h[c].key || (h[c + 1].key == h[c].key && h[c + 1].idx > h[c].idx)))
            c++;
        if (h[p].key > h[c].key || (h[p].key == h[c].key && h[p].idx > h[c].idx))
            return;
        tk_item t = h[p];
        h[p] = h[c];
        h[c] = t;
        p = c;
    }
}

/* Feeds len keys (indices j0...) into a heap of at most k items, *hn filled. */
static void tk_feed(tk_item *h, int64_t *hn, int64_t k, const uint64_t *kr, int64_t len, int64_t j0)
{
    int64_t j = 0;
    for (; j < len && *hn < k; j++) {
        h[*hn].key = kr[j], h[*hn].idx = j0 + j;
        if (++*hn == k)
            for (int64_t p = k / 2 - 1; p >= 0; p--)
                tk_sift(h, k, p);
    }
    /* Every index in the heap is below j0 + j: an equal key never displaces. */
    for (; j < len; j++)
        if (kr[j] < h[0].key) {
            h[0].key = kr[j], h[0].idx = j0 + j;
            tk_sift(h, k, 0);
        }
}

/* Popping the worst to the back leaves the (full) heap sorted best-first. */
static void tk_heap_sort(tk_item *h, int64_t k)
{
    for (int64_t len = k; len > 1; len--) {
        tk_item t = h[0];
        h[0] = h[len - 1];
        h[len - 1] = t;
        tk_sift(h, len - 1, 0);
    }
}

/* The whole row in output order (a stable sort of the keys); returns buf or buf + n. */
static const tk_item *tk_sort(const uint64_t *kr, int64_t n, int width, tk_item *buf)
{
    tk_item *a = buf, *b = buf + n;
    for (int64_t j = 0; j < n; j++)
        a[j].key = kr[j], a[j].idx = j;
    if (n < 64) { /* insertion sort: stable, and cheaper than radix passes here */
        for (int64_t i = 1; i < n; i++) {
            tk_item t = a[i];
            int64_t j = i;
            for (; j > 0 && a[j - 1].key > t.key; j--)
                a[j] = a[j - 1];
            a[j] = t;
        }
        return a;
    }
    int64_t cnt[8][256];
    memset(cnt, 0, sizeof cnt[0] * (size_t)width);
    for (int64_t j = 0; j < n; j++)
        for (int d = 0; d < width; d++)
            cnt[d][(kr[j] >> (8 * d)) & 0xFF]++;
    for (int d = 0; d < width; d++) {
        if (cnt[d][(kr[0] >> (8 * d)) & 0xFF] == n)
            continue; /* every key has this byte: the pass would not move anything */
        int64_t pos[256], s = 0;
        for (int v = 0; v < 256; v++)
            pos[v] = s, s += cnt[d][v];
        for (int64_t j = 0; j < n; j++)
            b[pos[(a[j].key >> (8 * d)) & 0xFF]++] = a[j];
        tk_item *t = a;
        a = b;
        b = t;
    }
    return a;
}

#define TK_CHUNK 2048
/* Strided rows are read TK_G at a time: several cache lines of each row of the
 * slab per visit, which is what makes the hardware prefetch worthwhile. */
#define TK_G 64

ft_status cpu_topk(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *s = &in[0].shape;
    ft_dtype dt = in[0].dtype;
    const int axis = n->params.reduce.axis, largest = n->params.reduce.largest;
    int64_t kk = n->params.reduce.k, dim, outer, inner;
    ft_reduce_around_axis(s, axis, &outer, &dim, &inner);
    if (kk == 0 || outer == 0 || inner == 0)
        return FT_OK;
    if (dt == FT_F16 || dt == FT_BF16 || dt == FT_BOOL)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "topk: dtype %s reached the kernel unconverted",
                           ft_dtype_name(dt));
    size_t es = ft_dtype_size(dt);
    int width = (int)es; /* key bytes */
    uint64_t flip = largest ? (es == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * es)) - 1) : 0;
    /* Rows gathered per block: up to TK_G, with at most ~4 MiB of keys or heaps per
     * thread. The heap path streams the row in chunks; the sort needs it whole. */
    int heap = kk <= dim / 8;
    int64_t per_row = heap ? kk * (int64_t)sizeof(tk_item) : dim * 8;
    int64_t g = inner == 1 ? 1 : ((int64_t)1 << 22) / (per_row > 0 ? per_row : 1);
    g = g < 1 ? 1 : g > TK_G ? TK_G : g > inner ? inner : g;
    int64_t nblk_in = (inner + g - 1) / g, blocks = outer * nblk_in;
    size_t need = heap ? (size_t)g * (TK_CHUNK * 8 + (size_t)kk * sizeof(tk_item))
                       : (size_t)(g * dim) * 8 + (size_t)(2 * dim) * sizeof(tk_item);
    const char *x = in[0].data;
    char *vals = out[0].data;
    int64_t *idx = out[1].data;
    int failed = 0;
    int par = blocks > 1 && (uint64_t)outer * (uint64_t)inner * (uint64_t)dim >= CPU_PAR_MIN;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        char *buf = cpu_thread_scratch(need, &failed);
#pragma omp for schedule(dynamic, 1)
        for (int64_t blk = 0; blk < blocks; blk++) {
            if (!buf)
                continue;
            int64_t o = blk / nblk_in, i0 = (blk % nblk_in) * g;
            int gi = (int)(inner - i0 < g ? inner - i0 : g);
            int64_t base = o * dim * inner + i0;
            uint64_t *kb = (uint64_t *)buf;
            const tk_item *res[TK_G];
            if (heap) {
                tk_item *heaps = (tk_item *)(buf + (size_t)g * TK_CHUNK * 8);
                int64_t hn[TK_G] = {0};
                for (int64_t j0 = 0; j0 < dim; j0 += TK_CHUNK) {
                    int64_t len = dim - j0 < TK_CHUNK ? dim - j0 : TK_CHUNK;
                    tk_keys(dt, x, base + j0 * inner, len, inner, gi, flip, kb);
                    for (int t = 0; t < gi; t++)
                        tk_feed(heaps + t * kk, &hn[t], kk, kb + t * len, len, j0);
                }
                for (int t = 0; t < gi; t++) {
                    tk_heap_sort(heaps + t * kk, kk);
                    res[t] = heaps + t * kk;
                }
            } else {
                tk_keys(dt, x, base, dim, inner, gi, flip, kb);
            }
            for (int t = 0; t < gi; t++) {
                const tk_item *r = heap ? res[t] : tk_sort(kb + t * dim, dim, width, (tk_item *)(kb + g * dim));
                int64_t ob = o * kk * inner + i0 + t;
                const char *src = x + (size_t)(base + t) * es;
                for (int64_t j = 0; j < kk; j++) {
                    memcpy(vals + (size_t)(ob + j * inner) * es, src + (size_t)(r[j].idx * inner) * es, es);
                    idx[ob + j * inner] = r[j].idx;
                }
            }
        }
        free(buf);
    }
    if (failed)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory: topk needs a work buffer of %zu bytes per "
                           "thread", need);
    return FT_OK;
}
