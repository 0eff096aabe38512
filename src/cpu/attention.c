/* CPU scaled dot-product attention in f32 and f64, with soft capping, a
 * KV cache (past keys/values first, the concatenation written to the present
 * outputs), kv_len (per-batch valid keys), sliding windows and the scores
 * output at the stage scores_mode asks (the per-channel
 * normalisations declared next to it in cpu.h live in norm_channels.c).
 *
 * Blocked online softmax: for a block of SB queries of one (batch, head), the
 * keys are visited in blocks of TB; each block's scores come from one BLAS
 * product, the running row maximum and sum are rescaled when the maximum
 * grows, and P V is accumulated straight into the output rows. Memory stays
 * at SB x TB scores per thread whatever T is, and no exp ever sees a positive
 * argument, so long sequences with large logits cannot overflow. */
#include "cpu.h"
#include "vmath.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* glibc's libmvec vector exp (see unary.c) for the f64 rows: math.h declares
 * it only under -ffast-math; declaring it here lets the `omp simd` loops use
 * it. The f32 rows use vmath.h's ft_vexpf_nonpos (every argument is a score
 * minus the running maximum, <= 0), compiled for AVX-512, AVX2+FMA and the
 * baseline (FT_VCLONES), as softmax's rows (norm.c). */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__GLIBC_PREREQ) && !defined(__clang__)
#if __GLIBC_PREREQ(2, 35)
__attribute__((simd("notinbranch"))) double(exp)(double);
#endif
#endif

#define SB_MAX 128 /* queries per block (half that with causal) */
#define TB 256    /* keys per block */

typedef struct attn_p {
    int64_t B, H, S, T, D, Dv, Hk, grp; /* grp = H / Hk query heads per kv head */
    double scale, softcap;              /* softcap 0: none */
    int causal;
    int64_t coff; /* offset: the past length P; query i sits at key position i + coff */
    const int64_t *kvl; /* kv_len [B] or NULL: keys t >= kvl[b] are padding, the offset is kvl[b] - S */
    int64_t wl, wr;     /* window: keys pos - wl <= t <= pos + wr (-1: unbounded) */
    const void *mask; /* NULL, bool bytes, or values of the element type */
    int mask_bool;
    int64_t mask_t; /* keys t >= mask_t lie past a shorter mask's last dim: masked */
    int64_t ms[4]; /* mask strides over [B,H,S,mask_t], 0 along broadcast dims */
    void *sc_out;  /* output 3 [B,H,S,T] or NULL */
    int smode;     /* its stage: 0 scaled q.k, 1 soft capped, 2 masked, 3 softmax weights */
} attn_p;

/* The keys [*lo, *hi) that query qi of batch b may see before the mask:
 * the causal frontier, the window, kv_len and a shorter mask; every other
 * key adds -inf. lo only grows and hi never shrinks with qi. */
static void key_range(const attn_p *p, int64_t b, int64_t qi, int64_t *lo, int64_t *hi)
{
    int64_t lim = p->mask_t < p->T ? p->mask_t : p->T;
    if (p->kvl && p->kvl[b] < lim)
        lim = p->kvl[b] < 0 ? 0 : p->kvl[b];
    int64_t pos = qi + (p->kvl ? p->kvl[b] - p->S : p->coff), l = 0, h = lim;
    if (p->wl >= 0 && pos - p->wl > l)
        l = pos - p->wl;
    if (p->causal && pos + 1 < h)
        h = pos + 1;
    if (p->wr >= 0 && pos + p->wr + 1 < h)
        h = pos + p->wr + 1;
    *lo = l;
    *hi = h > l ? h : l;
}

/* Scores of one query row, keys [t0, t0+nt) of which [lo, hi) are in its
 * range: mask, running max m, sum l, rescale of the output row o, and the
 * row's exponentials left in `row`. srow (output 3's row) gets the scores of
 * the stage asked for (mode 3: the masked ones, turned into weights at the
 * end). *any records a key whose bias is not -inf (ONNX's fully-masked-row
 * guard: a row without one is zeros whatever its scores). A row with every
 * key masked so far keeps m = -inf and l = 0; NaN scores there poison l so
 * that NaN inputs never turn into a zero output. */
#define DEF_ROW(SFX, TY, EXP, TANH, SEL, MAX, SUM, CLONES)                                                                      \
    CLONES static void attn_row_##SFX(const attn_p *p, TY *row, int64_t nt, int64_t t0, int64_t lo, int64_t hi,      \
                                      const void *mrow, TY *srow, TY *m, double *l, uint8_t *any, TY *o)             \
    {                                                                                                                 \
        if (srow && p->smode == 0)                                                                                    \
            memcpy(srow + t0, row, (size_t)nt * sizeof(TY));                                                          \
        if (p->softcap != 0) { /* soft capping, before the mask (ONNX Attention) */                                   \
            TY cap = (TY)p->softcap, inv = (TY)(1.0 / p->softcap);                                                    \
            for (int64_t j = 0; j < nt; j++)                                                                          \
                row[j] = cap * TANH(row[j] * inv);                                                                    \
        }                                                                                                             \
        if (srow && p->smode == 1)                                                                                    \
            memcpy(srow + t0, row, (size_t)nt * sizeof(TY));                                                          \
        int64_t ja = lo - t0 < 0 ? 0 : lo - t0 > nt ? nt : lo - t0;                                                   \
        int64_t jz = hi - t0 < ja ? ja : hi - t0 > nt ? nt : hi - t0;                                                 \
        for (int64_t j = 0; j < ja; j++)                                                                              \
            row[j] = -(TY)INFINITY;                                                                                   \
        for (int64_t j = jz; j < nt; j++)                                                                             \
            row[j] = -(TY)INFINITY;                                                                                   \
        if (mrow && ja < jz) {                                                                                        \
            int64_t st = p->ms[3];                                                                                    \
            if (p->mask_bool) {                                                                                       \
                const uint8_t *mk = (const uint8_t *)mrow + t0 * st;                                                  \
                if (st == 1)                                                                                          \
                    _Pragma("omp simd") for (int64_t j = ja; j < jz; j++) row[j] = SEL(mk[j], row[j], -(TY)INFINITY); \
                else                                                                                                  \
                    for (int64_t j = ja; j < jz; j++)                                                                 \
                        if (!mk[j * st])                                                                              \
                            row[j] = -(TY)INFINITY;                                                                   \
                for (int64_t j = ja; j < jz && !*any; j++)                                                            \
                    *any = mk[j * st] != 0;                                                                           \
            } else {                                                                                                  \
                const TY *mk = (const TY *)mrow + t0 * st;                                                            \
                _Pragma("omp simd") for (int64_t j = ja; j < jz; j++) row[j] += mk[j * st];                           \
                for (int64_t j = ja; j < jz && !*any; j++)                                                            \
                    *any = mk[j * st] != -(TY)INFINITY;                                                               \
            }                                                                                                         \
        } else if (ja < jz) {                                                                                         \
            *any = 1;                                                                                                 \
        }                                                                                                             \
        if (srow && p->smode >= 2)                                                                                    \
            memcpy(srow + t0, row, (size_t)nt * sizeof(TY));                                                          \
        TY mx = MAX(row, nt);                                                                                         \
        TY mnew = *m > mx ? *m : mx;                                                                                  \
        if (mnew == -(TY)INFINITY) {                                                                                  \
            for (int64_t j = 0; j < nt; j++) {                                                                        \
                if (row[j] != row[j])                                                                                 \
                    *l = NAN;                                                                                         \
                row[j] = 0;                                                                                           \
            }                                                                                                         \
            return;                                                                                                   \
        }                                                                                                             \
        _Pragma("omp simd") for (int64_t j = 0; j < nt; j++) row[j] = EXP(row[j] - mnew);                             \
        double s = (double)SUM(row, nt);                                                                              \
        if (mnew != *m) {                                                                                             \
            TY corr = EXP(*m - mnew); /* 0 when *m is -inf */                                                         \
            *l *= (double)corr;                                                                                       \
            _Pragma("omp simd") for (int64_t d = 0; d < p->Dv; d++) o[d] *= corr;                                     \
            *m = mnew;                                                                                                \
        }                                                                                                             \
        *l += s;                                                                                                      \
    }

/* The f64 rows' select (their max and sum are vmath.h's, as the f32 rows'). */
#define SEL_F64(c, a, b) ((c) ? (a) : (b))
DEF_ROW(f32, float, ft_vexpf_nonpos, tanhf, ft_vsel, ft_vrow_maxf, ft_vrow_sumf, FT_VCLONES)
DEF_ROW(f64, double, exp, tanh, SEL_F64, ft_vrow_maxd, ft_vrow_sumd, )

/* Queries [s0, s1) of head h of batch b. sc: SB x TB scores, m/l/any: SB.
 * Without output 3 only the keys some query of the block may see are
 * visited; with it, all T (its modes 0 and 1 show the masked keys too). */
#define DEF_BLOCK(SFX, TY, GEMM, EXPS)                                                                                \
    static int attn_block_##SFX(const attn_p *p, const TY *q, const TY *k, const TY *v, TY *out, int64_t b,          \
                               int64_t h, int64_t s0, int64_t s1, TY *sc, TY *m, double *l, uint8_t *any)             \
    {                                                                                                                 \
        int64_t hk = h / p->grp, ns = s1 - s0, D = p->D, Dv = p->Dv;                                                  \
        const TY *qb = q + ((b * p->H + h) * p->S + s0) * D;                                                          \
        const TY *kb = k + (b * p->Hk + hk) * p->T * D;                                                               \
        const TY *vb = v + (b * p->Hk + hk) * p->T * Dv;                                                              \
        TY *ob = out + ((b * p->H + h) * p->S + s0) * Dv;                                                             \
        TY *sb = p->sc_out ? (TY *)p->sc_out + ((b * p->H + h) * p->S + s0) * p->T : NULL;                            \
        memset(ob, 0, (size_t)(ns * Dv) * sizeof(TY));                                                                \
        for (int64_t i = 0; i < ns; i++)                                                                              \
            m[i] = -(TY)INFINITY, l[i] = 0, any[i] = 0;                                                               \
        const char *mb = NULL;                                                                                        \
        size_t mes = p->mask_bool ? 1 : sizeof(TY);                                                                   \
        if (p->mask)                                                                                                  \
            mb = (const char *)p->mask + (size_t)(b * p->ms[0] + h * p->ms[1]) * mes;                                 \
        int64_t tbeg, tend, unused;                                                                                   \
        key_range(p, b, s0, &tbeg, &unused);                                                                          \
        key_range(p, b, s1 - 1, &unused, &tend);                                                                      \
        if (sb || tbeg > tend)                                                                                        \
            tbeg = 0, tend = sb ? p->T : 0;                                                                           \
        for (int64_t t0 = tbeg; t0 < tend; t0 += TB) {                                                                \
            int64_t nt = tend - t0 < TB ? tend - t0 : TB;                                                             \
            int rc = 0;                                                                                               \
            if (D > 0)                                                                                                \
                rc = GEMM(0, 1, ns, nt, D, (TY)p->scale, qb, D, kb + t0 * D, D, (TY)0, sc, nt);                       \
            else                                                                                                      \
                memset(sc, 0, (size_t)(ns * nt) * sizeof(TY));                                                        \
            if (rc)                                                                                                   \
                return rc;                                                                                            \
            for (int64_t i = 0; i < ns; i++) {                                                                        \
                int64_t lo, hi;                                                                                       \
                key_range(p, b, s0 + i, &lo, &hi);                                                                    \
                attn_row_##SFX(p, sc + i * nt, nt, t0, lo, hi, mb ? mb + (size_t)((s0 + i) * p->ms[2]) * mes : NULL,  \
                               sb ? sb + i * p->T : NULL, m + i, l + i, any + i, ob + i * Dv);                        \
            }                                                                                                         \
            if (Dv > 0 && (rc = GEMM(0, 0, ns, Dv, nt, (TY)1, sc, nt, vb + t0 * Dv, Dv, (TY)1, ob, Dv)))              \
                return rc;                                                                                            \
        }                                                                                                             \
        for (int64_t i = 0; i < ns; i++) {                                                                            \
            TY *o = ob + i * Dv;                                                                                      \
            /* every key masked: zeros, even where v holds inf or NaN */                                              \
            int zero = !any[i] || l[i] == 0;                                                                          \
            if (zero)                                                                                                 \
                memset(o, 0, (size_t)Dv * sizeof(TY));                                                                \
            else {                                                                                                    \
                TY inv = (TY)(1.0 / l[i]);                                                                            \
                _Pragma("omp simd") for (int64_t d = 0; d < Dv; d++) o[d] *= inv;                                     \
            }                                                                                                         \
            if (sb && p->smode == 3) { /* the masked scores -> weights, zeros where Y is */                           \
                TY *sr = sb + i * p->T, mi = m[i], inv = (TY)(1.0 / l[i]);                                            \
                for (int64_t t = 0; t < p->T; t++)                                                                    \
                    sr[t] = zero ? (TY)0 : EXPS(sr[t] - mi) * inv;                                                    \
            }                                                                                                         \
        }                                                                                                             \
        return 0;                                                                                                     \
    }

/* f64 products through OpenBLAS (sizes fit in int: attention_run checks the
 * head sizes, the blocks are at most SB_MAX x TB); f32 through cpu_sgemm. */
static int dgemm_rm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                    const double *b, int64_t ldb, double beta, double *c, int64_t ldc)
{
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return 0;
}

DEF_BLOCK(f32, float, cpu_sgemm, expf)
DEF_BLOCK(f64, double, dgemm_rm, exp)

/* The keys (or values) past then cur along the sequence axis into dst:
 * [BH, P, W] and [BH, T, W] -> [BH, P + T, W], rows of rb bytes. */
static void cat_seq(char *dst, const char *past, const char *cur, int64_t bh, int64_t P, int64_t T, size_t rb)
{
    for (int64_t i = 0; i < bh; i++) {
        if (P)
            memcpy(dst + (size_t)(i * (P + T)) * rb, past + (size_t)(i * P) * rb, (size_t)P * rb);
        if (T)
            memcpy(dst + (size_t)(i * (P + T) + P) * rb, cur + (size_t)(i * T) * rb, (size_t)T * rb);
    }
}

static ft_status attention_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const void *kp,
                               const void *vp, int64_t T);

/* The KV cache: keys and values are past then new (into present_key /
 * present_value when the node has them, else into scratch), then the same
 * attention over P + T keys. */
ft_status cpu_attention(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cpu attention kernel",
                           ft_dtype_name(dt));
    const ft_attn_params *ap = &n->params.attn;
    if (!ap->past && !ap->present)
        return attention_run(k, n, in, out, in[1].data, in[2].data, in[1].shape.dims[2]);
    const int64_t *kd = in[1].shape.dims, *vd = in[2].shape.dims;
    int64_t P = ap->past ? in[4].shape.dims[2] : 0, T = kd[2] + P, bh = kd[0] * kd[1];
    size_t es = ft_dtype_size(dt), kb = (size_t)(bh * T * kd[3]) * es, vb = (size_t)(bh * T * vd[3]) * es;
    char *buf = NULL, *kc, *vc;
    if (ap->present) {
        kc = out[1].data, vc = out[2].data;
    } else {
        if (!(buf = ft_malloc(kb + vb + 1)))
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the keys and values with the past ones");
        kc = buf, vc = buf + kb;
    }
    cat_seq(kc, ap->past ? in[4].data : NULL, in[1].data, bh, P, kd[2], (size_t)kd[3] * es);
    cat_seq(vc, ap->past ? in[5].data : NULL, in[2].data, bh, P, vd[2], (size_t)vd[3] * es);
    ft_status st = attention_run(k, n, in, out, kc, vc, T);
    free(buf);
    return st;
}

/* Attention of q over T keys kp and values vp ([B,Hk,T,D], [B,Hk,T,Dv]). */
static ft_status attention_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const void *kp,
                               const void *vp, int64_t T)
{
    ft_dtype dt = in[0].dtype;
    const int64_t *qd = in[0].shape.dims, *kd = in[1].shape.dims, *vd = in[2].shape.dims;
    attn_p p = {.B = qd[0], .H = qd[1], .S = qd[2], .D = qd[3], .T = T, .Hk = kd[1], .Dv = vd[3]};
    const ft_attn_params *ap = &n->params.attn;
    if (ft_numel(&out[0].shape) == 0 && !(ap->scores && ft_numel(&out[3].shape) > 0))
        return FT_OK; /* with Dv = 0 the scores may still have elements */
    if (p.D > INT_MAX || p.Dv > INT_MAX)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "head size %lld is beyond what the BLAS library takes",
                           (long long)(p.D > p.Dv ? p.D : p.Dv));
    p.grp = p.H / p.Hk;
    p.scale = n->params.attn.scale; /* given, or 1/sqrt(D) (graph/infer_attention.c) */
    p.causal = n->params.attn.causal;
    p.coff = T - kd[2]; /* P: with a KV cache the diagonal moves past the cached keys */
    p.softcap = n->params.attn.softcap;
    p.kvl = ap->kv_len ? in[6].data : NULL;
    p.wl = ap->win_left;
    p.wr = ap->win_right;
    p.sc_out = ap->scores ? out[3].data : NULL;
    p.smode = ap->scores_mode;
    p.mask_t = T;
    if (n->n_in > 3 && in[3].data) {
        const ft_shape *ms = &in[3].shape;
        /* a last dim shorter than T (not 1, which broadcasts) masks the keys past it */
        int64_t mt = ms->rank > 0 ? ms->dims[ms->rank - 1] : 1;
        p.mask_t = mt != 1 && mt < T ? mt : T;
        ft_shape full = {.rank = 4, .dims = {p.B, p.H, p.S, p.mask_t}};
        p.mask = in[3].data;
        p.mask_bool = in[3].dtype == FT_BOOL;
        ft_broadcast_strides(ms, &full, p.ms);
    }
    /* Enough query blocks to feed every thread, without shrinking the
     * products below the size where BLAS stays efficient. */
    int windowed = p.causal || p.wl >= 0 || p.wr >= 0; /* smaller blocks skip more keys */
    int64_t bh = p.B * p.H, sb = windowed ? SB_MAX / 2 : SB_MAX;
    if (k->threads > 1 && bh * ((p.S + sb - 1) / sb) < 2 * k->threads) {
        int64_t per = (2 * k->threads + bh - 1) / bh;
        sb = (p.S + per - 1) / per;
        sb = sb < 8 ? 8 : sb > SB_MAX ? SB_MAX : sb;
    }
    int64_t nsb = (p.S + sb - 1) / sb, items = bh * nsb;
    double work = (double)bh * (double)p.S * (double)(p.T + 1) * (double)(p.D + p.Dv + 1);
    int par = k->threads > 1 && items > 1 && work >= (double)(1 << 20);
    size_t es = ft_dtype_size(dt);
    int failed = 0, brc = 0;
#pragma omp parallel num_threads(k->threads) if (par)
    {
        char *buf = cpu_thread_scratch((size_t)(sb * TB + sb) * es + (size_t)sb * (sizeof(double) + 1), &failed);
        /* dynamic: with causal, later query blocks see more keys */
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++) {
            if (!buf)
                continue;
            int64_t b = it / (p.H * nsb), h = it / nsb % p.H, s0 = it % nsb * sb;
            int64_t s1 = s0 + sb < p.S ? s0 + sb : p.S;
            double *l = (double *)buf;
            char *scb = buf + sb * sizeof(double);
            uint8_t *any = (uint8_t *)(scb + (size_t)(sb * TB + sb) * es);
            int rc;
            if (dt == FT_F32)
                rc = attn_block_f32(&p, in[0].data, kp, vp, out[0].data, b, h, s0, s1, (float *)scb,
                                    (float *)scb + sb * TB, l, any);
            else
                rc = attn_block_f64(&p, in[0].data, kp, vp, out[0].data, b, h, s0, s1, (double *)scb,
                                    (double *)scb + sb * TB, l, any);
            if (rc) {
#pragma omp atomic write
                brc = rc;
            }
        }
        free(buf);
    }
    if (brc)
        return cpu_blas_error(k, n, brc);
    if (failed)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the attention score blocks");
    return FT_OK;
}
