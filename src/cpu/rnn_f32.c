/* The f32 form of lstm, gru and rnn with their default activations (lstm:
 * sigmoid, tanh, tanh; gru: sigmoid, tanh; rnn: tanh), which is what
 * exported models use; rnn.c runs every other form (f64, other
 * activations) in double, and calls this one first.
 *
 * Per direction: one product projects the whole sequence, X W^T for every
 * (t, b) row at once, and the biases are added to it once. The recurrence
 * then runs step by step. A step's product H R^T is small (B rows), so it
 * does not go through a general matrix product, which would pack R again at
 * every step: R is transposed once per call into Rt [H, G*H], and each step
 * streams Rt once per 4 batch rows, accumulating 4 x 16 outputs in vector
 * registers (rec_prod). The gate arithmetic is f32 on vmath.h's vectorised
 * sigmoid and tanh.
 *
 * Threads: the hidden units are split among the threads for the whole
 * sequence; each thread computes the gate columns of its units and their new
 * state, and the threads meet at a barrier once per step (twice for gru
 * without linear_before_reset, whose h gate needs all of r . H). The state is
 * double-buffered so that no thread writes what another still reads.
 *
 * sequence_lens as rnn.c: entry b runs its first len_b steps, its state is
 * kept past them, Y is zero there (the caller zeroes the outputs). */
#include "cpu.h"

#include "vmath.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dnnl_cache.h"
#include "rnn_f32.h"

typedef float v8f __attribute__((vector_size(32), aligned(4)));

/* out[b, n] = sum_k h[b, k] Rt[k, n] for rows b < NB of h and out, columns
 * [n0, n1): 16 columns at a time in registers, then 8, then one. */
static inline __attribute__((always_inline)) void prod_rows(int NB, int64_t n0, int64_t n1, int64_t K, const float *h,
                                                             int64_t ldh, const float *rt, int64_t ldr, float *out,
                                                             int64_t ldo)
{
    int64_t n = n0;
    for (; n + 16 <= n1; n += 16) {
        v8f a[4][2];
#pragma GCC unroll 4
        for (int i = 0; i < NB; i++)
            a[i][0] = a[i][1] = (v8f){0};
        for (int64_t k = 0; k < K; k++) {
            v8f r0 = *(const v8f *)(rt + k * ldr + n), r1 = *(const v8f *)(rt + k * ldr + n + 8);
    #pragma GCC unroll 4
        for (int i = 0; i < NB; i++) {
                float hv = h[i * ldh + k];
                a[i][0] += hv * r0;
                a[i][1] += hv * r1;
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < NB; i++) {
            *(v8f *)(out + i * ldo + n) = a[i][0];
            *(v8f *)(out + i * ldo + n + 8) = a[i][1];
        }
    }
    for (; n + 8 <= n1; n += 8) {
        v8f a[4];
#pragma GCC unroll 4
        for (int i = 0; i < NB; i++)
            a[i] = (v8f){0};
        for (int64_t k = 0; k < K; k++) {
            v8f r0 = *(const v8f *)(rt + k * ldr + n);
    #pragma GCC unroll 4
        for (int i = 0; i < NB; i++)
                a[i] += h[i * ldh + k] * r0;
        }
#pragma GCC unroll 4
        for (int i = 0; i < NB; i++)
            *(v8f *)(out + i * ldo + n) = a[i];
    }
    for (; n < n1; n++)
#pragma GCC unroll 4
        for (int i = 0; i < NB; i++) {
            float s = 0;
            for (int64_t k = 0; k < K; k++)
                s += h[i * ldh + k] * rt[k * ldr + n];
            out[i * ldo + n] = s;
        }
}

/* out[:, n0..n1) = h Rt[:, n0..n1) for all B rows of h (row stride ldh). */
FT_VCLONES static void rec_prod(int64_t B, int64_t n0, int64_t n1, int64_t K, const float *h, int64_t ldh,
                                const float *rt, int64_t ldr, float *out, int64_t ldo)
{
    for (int64_t b = 0; b < B; b += 4) {
        const float *hb = h + b * ldh;
        float *ob = out + b * ldo;
        switch (B - b >= 4 ? 4 : (int)(B - b)) {
        case 4: prod_rows(4, n0, n1, K, hb, ldh, rt, ldr, ob, ldo); break;
        case 3: prod_rows(3, n0, n1, K, hb, ldh, rt, ldr, ob, ldo); break;
        case 2: prod_rows(2, n0, n1, K, hb, ldh, rt, ldr, ob, ldo); break;
        case 1: prod_rows(1, n0, n1, K, hb, ldh, rt, ldr, ob, ldo); break;
        }
    }
}

/* A pre-activation clipped to [-c, c] (c is +inf without clip; NaN stays
 * NaN); branch-free, so that the unit loops vectorise. */
static inline float clipf(float c, float x)
{
    return ft_vsel(x < -c, -c, ft_vsel(x > c, c, x));
}

/* What every thread reads. */
typedef struct fdir {
    const ft_rnn_f32 *a;
    int op; /* 0 lstm, 1 gru, 2 rnn */
    int64_t T, B, H, G, D, d, maxlen;
    int rev, lbr;
    const float *xw, *rt, *pp, *rbh;
    float *gt, *h[2], *c, *rh;
    float *y;
} fdir;

static int64_t step_time(const fdir *f, int64_t s, int64_t b)
{
    return f->rev ? f->a->len[b] - 1 - s : s;
}

static const float *xw_row(const fdir *f, int64_t t, int64_t b)
{
    return f->xw + (f->a->layout ? b * f->T + t : t * f->B + b) * f->G * f->H;
}

/* lstm, gate order i, o, f, c; peepholes pp [3H] (i, o, f), zero when absent. */
FT_VCLONES static void lstm_units(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *c,
                                  float *y, int64_t j0, int64_t j1)
{
    int64_t H = f->H;
    int cif = f->a->input_forget;
    float cl = f->a->clip;
    const float *pp = f->pp;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float cp = c[j];
        float i = ft_vsigmoidf(clipf(cl, x[j] + g[j] + pp[j] * cp));
        float fg = ft_vsel(cif, 1 - i, ft_vsigmoidf(clipf(cl, x[2 * H + j] + g[2 * H + j] + pp[2 * H + j] * cp)));
        float cc = ft_vtanhf(clipf(cl, x[3 * H + j] + g[3 * H + j]));
        float cn = fg * cp + i * cc;
        float o = ft_vsigmoidf(clipf(cl, x[H + j] + g[H + j] + pp[H + j] * cn));
        float v = o * ft_vtanhf(clipf(cl, cn));
        c[j] = cn;
        hn[j] = v;
        y[j] = v;
    }
    (void)hp;
}

/* gru, gate order z, r, h; g holds H R^T (linear_before_reset) or, for the h
 * gate, (r . H) Rh^T. */
FT_VCLONES static void gru_units(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *y,
                                 int64_t j0, int64_t j1)
{
    int64_t H = f->H;
    int lbr = f->lbr;
    float cl = f->a->clip;
    const float *rbh = f->rbh;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float z = ft_vsigmoidf(clipf(cl, x[j] + g[j]));
        /* without linear_before_reset, g's h gate already holds (r . H) Rh^T and rbh is 0 */
        float r = ft_vsel(lbr, ft_vsigmoidf(clipf(cl, x[H + j] + g[H + j])), 1.0f);
        float hx = x[2 * H + j] + r * (g[2 * H + j] + rbh[j]);
        float v = (1 - z) * ft_vtanhf(clipf(cl, hx)) + z * hp[j];
        hn[j] = v;
        y[j] = v;
    }
}

/* gru without linear_before_reset: rh[j] = r[j] * H[j]. */
FT_VCLONES static void gru_reset(const fdir *f, const float *x, const float *g, const float *hp, float *rh, int64_t j0,
                                 int64_t j1)
{
    int64_t H = f->H;
    float cl = f->a->clip;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++)
        rh[j] = ft_vsigmoidf(clipf(cl, x[H + j] + g[H + j])) * hp[j];
}

FT_VCLONES static void rnn_units(const fdir *f, const float *x, const float *g, float *hn, float *y, int64_t j0,
                                 int64_t j1)
{
    float cl = f->a->clip;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float v = ft_vtanhf(clipf(cl, x[j] + g[j]));
        hn[j] = v;
        y[j] = v;
    }
}

/* The steps of one direction, for the hidden units [j0, j1) of this thread. */
static void run_units(const fdir *f, int64_t j0, int64_t j1, int nth)
{
    int64_t B = f->B, H = f->H, G = f->G, GH = G * H;
    int cur = 0;
    for (int64_t s = 0; s < f->maxlen; s++) {
        const float *hp = f->h[cur];
        float *hn = f->h[cur ^ 1];
        /* the gates that take H R^T: all but gru's h gate without linear_before_reset */
        int64_t gp = f->op == 1 && !f->lbr ? 2 : G;
        for (int64_t q = 0; q < gp; q++)
            rec_prod(B, q * H + j0, q * H + j1, H, hp, H, f->rt, GH, f->gt, GH);
        if (f->op == 1 && !f->lbr) {
            for (int64_t b = 0; b < B; b++)
                if (s < f->a->len[b])
                    gru_reset(f, xw_row(f, step_time(f, s, b), b), f->gt + b * GH, hp + b * H, f->rh + b * H, j0, j1);
                else
                    memset(f->rh + b * H + j0, 0, (size_t)(j1 - j0) * sizeof(float));
            if (nth > 1) {
#pragma omp barrier
            }
            rec_prod(B, 2 * H + j0, 2 * H + j1, H, f->rh, H, f->rt, GH, f->gt, GH);
        }
        for (int64_t b = 0; b < B; b++) {
            if (s >= f->a->len[b]) {
                memcpy(hn + b * H + j0, hp + b * H + j0, (size_t)(j1 - j0) * sizeof(float));
                continue;
            }
            int64_t t = step_time(f, s, b);
            const float *x = xw_row(f, t, b), *g = f->gt + b * GH;
            float *y = f->y + (f->a->layout ? (b * f->T + t) * f->D + f->d : (t * f->D + f->d) * B + b) * H;
            if (f->op == 0)
                lstm_units(f, x, g, hp + b * H, hn + b * H, f->c + b * H, y, j0, j1);
            else if (f->op == 1)
                gru_units(f, x, g, hp + b * H, hn + b * H, y, j0, j1);
            else
                rnn_units(f, x, g, hn + b * H, y, j0, j1);
        }
        if (nth > 1) {
#pragma omp barrier
        }
        cur ^= 1;
    }
}

/* Rt [K, N] = R^T for R [N, K]: 8 rows of Rt at a time, so that the writes
 * go to 8 streams front to back and each read is 8 adjacent floats. */
static void transpose(const float *r, int64_t n, int64_t k, float *rt)
{
    for (int64_t p0 = 0; p0 < k; p0 += 8) {
        int64_t pn = k - p0 < 8 ? k - p0 : 8;
        for (int64_t i = 0; i < n; i++)
            for (int64_t p = 0; p < pn; p++)
                rt[(p0 + p) * n + i] = r[i * k + p0 + p];
    }
}

/* A node's R^T, all directions. */
typedef struct rt_entry {
    cpu_dnnl_key key;
    float *rt;
} rt_entry;

static void rt_drop(void *e)
{
    free(((rt_entry *)e)->rt);
    ((rt_entry *)e)->rt = NULL;
}

static const cpu_dnnl_kind rt_kind = {CPU_DNNL_RNN, sizeof(cpu_dnnl_cache), sizeof(rt_entry), rt_drop, NULL};

const float *cpu_rnn_f32_rt(ft_kctx *k, const ft_node *n, const ft_view *in, int64_t D, int64_t GH, int64_t H)
{
    if (!cpu_input_is_const(k, n, 2))
        return NULL;
    cpu_dnnl_cache *c;
    int fresh;
    rt_entry *e = cpu_dnnl_lookup(k, &rt_kind, n, in, 0, &c, &fresh);
    if (!e)
        return NULL;
    if (!e->rt) {
        if (!(e->rt = ft_malloc((size_t)(D * GH * H) * sizeof(float))))
            return NULL;
        for (int64_t d = 0; d < D; d++)
            transpose((const float *)in[2].data + d * GH * H, GH, H, e->rt + d * H * GH);
    }
    return e->rt;
}

int cpu_rnn_f32_ok(const ft_node *n)
{
    const ft_rnn_params *p = &n->params.rnn;
    for (int d = 0; d < p->ndir; d++) {
        const int *a = p->act[d];
        int ok = n->op == FT_OP_LSTM  ? a[0] == FT_RNN_SIGMOID && a[1] == FT_RNN_TANH && a[2] == FT_RNN_TANH
                 : n->op == FT_OP_GRU ? a[0] == FT_RNN_SIGMOID && a[1] == FT_RNN_TANH
                                      : a[0] == FT_RNN_TANH;
        if (!ok)
            return 0;
    }
    return 1;
}

size_t cpu_rnn_f32_work(int64_t T, int64_t B, int64_t H, int64_t G)
{
    /* xw, Rt, gt, two states, cell, r . H, peepholes, Rbh: floats */
    return (size_t)(T * B * G * H + H * G * H + B * G * H + 4 * B * H + 4 * H) * sizeof(float);
}

int cpu_rnn_f32_dir(const ft_node *n, const ft_rnn_f32 *a, float *work)
{
    int64_t T = a->T, B = a->B, H = a->H, G = a->G, GH = G * H, NI = a->NI, d = a->d;
    int op = n->op == FT_OP_LSTM ? 0 : n->op == FT_OP_GRU ? 1 : 2;
    fdir f = {.a = a, .op = op, .T = T, .B = B, .H = H, .G = G, .D = a->D, .d = d, .rev = a->rev,
              .lbr = op == 1 && a->linear_before_reset, .y = a->y};
    float *xw = work, *rt = xw + T * B * GH, *gt = rt + H * GH;
    f.h[0] = gt + B * GH;
    f.h[1] = f.h[0] + B * H;
    f.c = f.h[1] + B * H;
    f.rh = f.c + B * H;
    float *pp = f.rh + B * H, *rbh = pp + 3 * H;
    for (int64_t b = 0; b < B; b++)
        f.maxlen = a->len[b] > f.maxlen ? a->len[b] : f.maxlen;
    int rc = cpu_sgemm(0, 1, T * B, GH, NI, 1.0f, a->x, NI, a->w + d * GH * NI, NI, 0.0f, xw, GH);
    if (rc)
        return rc;
    for (int64_t r = 0; r < T * B; r++)
        for (int64_t j = 0; j < GH; j++)
            xw[r * GH + j] += a->bias[j];
    if (a->rt)
        rt = (float *)a->rt; /* read only */
    else
        transpose(a->r + d * GH * H, GH, H, rt);
    memcpy(f.h[0], a->h0, (size_t)(B * H) * sizeof(float));
    memcpy(f.c, a->c0, (size_t)(B * H) * sizeof(float));
    for (int64_t j = 0; j < 3 * H; j++)
        pp[j] = a->peep ? a->peep[j] : 0;
    for (int64_t j = 0; j < H; j++)
        rbh[j] = a->rbh[j];
    f.xw = xw;
    f.rt = rt;
    f.gt = gt;
    f.pp = pp;
    f.rbh = rbh;
    /* a thread per 16 hidden units at most, and only when a step has work for two */
    int nth = a->threads;
    if (nth > H / 16)
        nth = (int)(H / 16);
    if (nth < 1 || (double)B * (double)GH * (double)H < 65536.0)
        nth = 1;
#pragma omp parallel num_threads(nth) if (nth > 1)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        int64_t j0 = H * t / m / 8 * 8, j1 = t == m - 1 ? H : H * (t + 1) / m / 8 * 8;
        run_units(&f, j0, j1, m);
    }
    memcpy(a->hn, f.h[f.maxlen & 1], (size_t)(B * H) * sizeof(float));
    memcpy(a->cn, f.c, (size_t)(B * H) * sizeof(float));
    return 0;
}
