/* The f32 form of lstm, gru and rnn with their default activations (lstm:
 * sigmoid, tanh, tanh; gru: sigmoid, tanh; rnn: tanh), which is what
 * exported models use; rnn.c runs every other form (f64, other
 * activations) in double, and calls this one first.
 *
 * Per direction: one product projects the whole sequence, X W^T for every
 * (t, b) row at once (the gate loops add the biases to it). The recurrence
 * then runs step by step. A step's product H R^T is small (B rows), so it
 * does not go through a general matrix product, which would pack R again at
 * every step: R^T is packed once (per node while R is a constant) in panels
 * of 16 units, each [H][16] contiguous (pack), and each step streams the
 * panels front to back once per 4 batch rows, accumulating 4 x 16 outputs in
 * vector registers (rec_prod). The gate arithmetic is f32 on vmath.h's
 * vectorised sigmoid and tanh.
 *
 * Threads: with a batch of several rows, the rows are split among the
 * threads for the whole sequence: a row's steps need no other row, so the
 * threads never wait for each other (each streams the whole of R^T, from its
 * own core's cache). Else the hidden units are split among the threads for
 * the whole sequence; each thread computes the gate columns of its units and
 * their new state, and the threads meet at a barrier once per step (twice
 * for gru without linear_before_reset, whose h gate needs all of r . H). The
 * state is double-buffered so that no thread writes what another still
 * reads.
 *
 * sequence_lens as rnn.c: entry b runs its first len_b steps, its state is
 * kept past them, Y is zero there (the caller zeroes the outputs). */
#include "cpu.h"

#include "vmath.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dnnl_cache.h"
#include "rnn_f32.h"

typedef float v8f __attribute__((vector_size(32), aligned(4)));

/* Rp, R^T packed for the steps: for each gate q, the units in panels of 16
 * (the last one zero-padded to 16), each panel [K][16] contiguous, so that a
 * step streams every panel front to back. Hp = H rounded up to 16. */
static int64_t pad16(int64_t h)
{
    return (h + 15) / 16 * 16;
}

/* out[b, 16 P + c] = sum_k h[b, k] Rp[P][k][c] for rows b < NB of h and the
 * NP panels P from p, in NB x NP x 2 vector registers. */
static inline __attribute__((always_inline)) void prod_panels(int NB, int NP, int64_t p, int64_t K, const float *h,
                                                               int64_t ldh, const float *rp, float *out, int64_t ldo)
{
    v8f a[4][4][2];
#pragma GCC unroll 4
    for (int i = 0; i < NB; i++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++)
            a[i][q][0] = a[i][q][1] = (v8f){0};
    const float *r = rp + p * K * 16;
    for (int64_t k = 0; k < K; k++) {
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++) {
            v8f r0 = *(const v8f *)(r + (q * K + k) * 16), r1 = *(const v8f *)(r + (q * K + k) * 16 + 8);
#pragma GCC unroll 4
            for (int i = 0; i < NB; i++) {
                float hv = h[i * ldh + k];
                a[i][q][0] += hv * r0;
                a[i][q][1] += hv * r1;
            }
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < NB; i++)
#pragma GCC unroll 4
        for (int q = 0; q < NP; q++) {
            *(v8f *)(out + i * ldo + (p + q) * 16) = a[i][q][0];
            *(v8f *)(out + i * ldo + (p + q) * 16 + 8) = a[i][q][1];
        }
}

/* out[:, 16 p0 .. 16 p1) = h Rp for all B rows of h (row stride ldh, K
 * columns), panels p0 .. p1 of Rp; rows of out are ldo apart. Four rows
 * take a panel at a time, fewer rows several panels, so that eight sums are
 * in flight. */
FT_VCLONES static void rec_prod(int64_t B, int64_t p0, int64_t p1, int64_t K, const float *h, int64_t ldh,
                                const float *rp, float *out, int64_t ldo)
{
    int64_t b = 0;
    for (; b + 4 <= B; b += 4)
        for (int64_t p = p0; p < p1; p++)
            prod_panels(4, 1, p, K, h + b * ldh, ldh, rp, out + b * ldo, ldo);
    const float *hb = h + b * ldh;
    float *ob = out + b * ldo;
    int64_t p = p0;
    switch ((int)(B - b)) {
    case 3:
        for (; p < p1; p++)
            prod_panels(3, 1, p, K, hb, ldh, rp, ob, ldo);
        break;
    case 2:
        for (; p + 2 <= p1; p += 2)
            prod_panels(2, 2, p, K, hb, ldh, rp, ob, ldo);
        for (; p < p1; p++)
            prod_panels(2, 1, p, K, hb, ldh, rp, ob, ldo);
        break;
    case 1:
        for (; p + 4 <= p1; p += 4)
            prod_panels(1, 4, p, K, hb, ldh, rp, ob, ldo);
        for (; p < p1; p++)
            prod_panels(1, 1, p, K, hb, ldh, rp, ob, ldo);
        break;
    }
}

/* A pre-activation clipped to [-c, c] (c is +inf without clip; NaN stays
 * NaN); branch-free, so that the unit loops vectorise. */
static inline float clipf(float c, float x)
{
    return ft_vsel(x < -c, -c, ft_vsel(x > c, c, x));
}

/* clipf when on: a constant in the unit bodies below, each compiled with and
 * without clip (lstm: and peepholes and input_forget), so that without them
 * (the usual case) the loops carry no compares and selects for them. */
#define UNIT_BODY static inline __attribute__((always_inline)) void
static inline __attribute__((always_inline)) float clipk(int on, float c, float x)
{
    return on ? clipf(c, x) : x;
}

/* The activations of the gate loops: vmath.h's ft_vsigmoidf and ft_vtanhf
 * with e^y for y <= 0 only (ft_vexpf_nonpos, fewer operations than
 * ft_vexpf's clamps and split scaling). sigm(x) is ft_vsigmoidf(x) bit for
 * bit for x >= -87.33; below, where sigmoid is under FLT_MIN, it is 0
 * instead of a subnormal. tanhg takes |x| >= 0.625 as (1 - e) / (1 + e),
 * e = e^-2|x| <= 0.29 (a few ulp, as ft_vtanhf's 1 - 2 / (e^2|x| + 1)). */
static inline __attribute__((always_inline)) float sigm(float x)
{
    float ax = ft_vbits_f(ft_vfbits(x) & 0x7FFFFFFFu);
    float e = ft_vexpf_nonpos(-ax);
    return ft_vsel(x < 0, e, 1.0f) / (1.0f + e);
}

static inline __attribute__((always_inline)) float tanhg(float x)
{
    uint32_t sign = ft_vfbits(x) & 0x80000000u;
    float ax = ft_vbits_f(ft_vfbits(x) & 0x7FFFFFFFu);
    float small = ft_vtanh_small(ax);
    float e = ft_vexpf_nonpos(-2.0f * ax);
    float big = (1.0f - e) / (1.0f + e);
    return ft_vbits_f(ft_vfbits(ft_vsel(ax < 0.625f, small, big)) | sign);
}

/* What every thread reads. */
typedef struct fdir {
    const ft_rnn_f32 *a;
    int op; /* 0 lstm, 1 gru, 2 rnn */
    int64_t T, B, H, Hp, G, D, d, maxlen; /* Hp: H rounded up to 16, the gate stride of gt */
    int rev, lbr;
    const float *xw, *rp, *bx, *pp, *rbh; /* X W^T, packed R^T, bias added to X W^T */
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

/* The gate units below take x, a row of X W^T (gates H apart), to which they
 * add the bias bx first, and g, a row of gt (gates Hp apart). */

/* lstm, gate order i, o, f, c; peepholes pp [3H] (i, o, f), zero when absent.
 * Without on: no clip, no peepholes, no input_forget. */
UNIT_BODY lstm_units_k(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *c, float *y,
                       int64_t j0, int64_t j1, int on)
{
    int64_t H = f->H, P = f->Hp;
    const float *bx = f->bx;
    int cif = f->a->input_forget;
    float cl = f->a->clip;
    const float *pp = f->pp;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float cp = c[j];
        float ix = (x[j] + bx[j]) + g[j], fx = (x[2 * H + j] + bx[2 * H + j]) + g[2 * P + j];
        if (on) {
            ix = clipf(cl, ix + pp[j] * cp);
            fx = clipf(cl, fx + pp[2 * H + j] * cp);
        }
        float i = sigm(ix);
        float fg = on ? ft_vsel(cif, 1 - i, sigm(fx)) : sigm(fx);
        float cc = tanhg(clipk(on, cl, (x[3 * H + j] + bx[3 * H + j]) + g[3 * P + j]));
        float cn = fg * cp + i * cc;
        float ox = (x[H + j] + bx[H + j]) + g[P + j];
        if (on)
            ox = clipf(cl, ox + pp[H + j] * cn);
        float o = sigm(ox);
        float v = o * tanhg(clipk(on, cl, cn));
        c[j] = cn;
        hn[j] = v;
        y[j] = v;
    }
    (void)hp;
}

FT_VCLONES static void lstm_units(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *c,
                                  float *y, int64_t j0, int64_t j1)
{
    if (f->a->clip < INFINITY || f->a->peep || f->a->input_forget)
        lstm_units_k(f, x, g, hp, hn, c, y, j0, j1, 1);
    else
        lstm_units_k(f, x, g, hp, hn, c, y, j0, j1, 0);
}

/* gru, gate order z, r, h; g holds H R^T (linear_before_reset) or, for the h
 * gate, (r . H) Rh^T. */
UNIT_BODY gru_units_k(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *y, int64_t j0,
                      int64_t j1, int on)
{
    int64_t H = f->H, P = f->Hp;
    int lbr = f->lbr;
    float cl = f->a->clip;
    const float *rbh = f->rbh, *bx = f->bx;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float z = sigm(clipk(on, cl, (x[j] + bx[j]) + g[j]));
        /* without linear_before_reset, g's h gate already holds (r . H) Rh^T and rbh is 0 */
        float r = ft_vsel(lbr, sigm(clipk(on, cl, (x[H + j] + bx[H + j]) + g[P + j])), 1.0f);
        float hx = (x[2 * H + j] + bx[2 * H + j]) + r * (g[2 * P + j] + rbh[j]);
        float v = (1 - z) * tanhg(clipk(on, cl, hx)) + z * hp[j];
        hn[j] = v;
        y[j] = v;
    }
}

FT_VCLONES static void gru_units(const fdir *f, const float *x, const float *g, const float *hp, float *hn, float *y,
                                 int64_t j0, int64_t j1)
{
    if (f->a->clip < INFINITY)
        gru_units_k(f, x, g, hp, hn, y, j0, j1, 1);
    else
        gru_units_k(f, x, g, hp, hn, y, j0, j1, 0);
}

/* gru without linear_before_reset: rh[j] = r[j] * H[j]. */
UNIT_BODY gru_reset_k(const fdir *f, const float *x, const float *g, const float *hp, float *rh, int64_t j0, int64_t j1,
                      int on)
{
    int64_t H = f->H, P = f->Hp;
    float cl = f->a->clip;
    const float *bx = f->bx;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++)
        rh[j] = sigm(clipk(on, cl, (x[H + j] + bx[H + j]) + g[P + j])) * hp[j];
}

FT_VCLONES static void gru_reset(const fdir *f, const float *x, const float *g, const float *hp, float *rh, int64_t j0,
                                 int64_t j1)
{
    if (f->a->clip < INFINITY)
        gru_reset_k(f, x, g, hp, rh, j0, j1, 1);
    else
        gru_reset_k(f, x, g, hp, rh, j0, j1, 0);
}

UNIT_BODY rnn_units_k(const fdir *f, const float *x, const float *g, float *hn, float *y, int64_t j0, int64_t j1,
                      int on)
{
    float cl = f->a->clip;
    const float *bx = f->bx;
#pragma omp simd
    for (int64_t j = j0; j < j1; j++) {
        float v = tanhg(clipk(on, cl, (x[j] + bx[j]) + g[j]));
        hn[j] = v;
        y[j] = v;
    }
}

FT_VCLONES static void rnn_units(const fdir *f, const float *x, const float *g, float *hn, float *y, int64_t j0,
                                 int64_t j1)
{
    if (f->a->clip < INFINITY)
        rnn_units_k(f, x, g, hn, y, j0, j1, 1);
    else
        rnn_units_k(f, x, g, hn, y, j0, j1, 0);
}

/* The steps of one direction for the batch rows [b0, b1) and the hidden
 * units [j0, j1) of this thread (j0 a multiple of 16, j1 too or H); nth > 1:
 * the units are split among nth threads, which meet at a barrier. */
static void run_units(const fdir *f, int64_t b0, int64_t b1, int64_t j0, int64_t j1, int nth)
{
    int64_t B = f->B, H = f->H, GP = f->G * f->Hp, np = f->Hp / 16, p0 = j0 / 16, p1 = (j1 + 15) / 16;
    int64_t nb = b1 - b0;
    int cur = 0;
    for (int64_t s = 0; s < f->maxlen; s++) {
        const float *hp = f->h[cur];
        float *hn = f->h[cur ^ 1];
        /* the gates that take H R^T: all but gru's h gate without linear_before_reset */
        int64_t gp = f->op == 1 && !f->lbr ? 2 : f->G;
        for (int64_t q = 0; q < gp; q++)
            rec_prod(nb, q * np + p0, q * np + p1, H, hp + b0 * H, H, f->rp, f->gt + b0 * GP, GP);
        if (f->op == 1 && !f->lbr) {
            for (int64_t b = b0; b < b1; b++)
                if (s < f->a->len[b])
                    gru_reset(f, xw_row(f, step_time(f, s, b), b), f->gt + b * GP, hp + b * H, f->rh + b * H, j0, j1);
                else
                    memset(f->rh + b * H + j0, 0, (size_t)(j1 - j0) * sizeof(float));
            if (nth > 1) {
#pragma omp barrier
            }
            rec_prod(nb, 2 * np + p0, 2 * np + p1, H, f->rh + b0 * H, H, f->rp, f->gt + b0 * GP, GP);
        }
        for (int64_t b = b0; b < b1; b++) {
            if (s >= f->a->len[b]) {
                memcpy(hn + b * H + j0, hp + b * H + j0, (size_t)(j1 - j0) * sizeof(float));
                continue;
            }
            int64_t t = step_time(f, s, b);
            const float *x = xw_row(f, t, b), *g = f->gt + b * GP;
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

/* Rp of one direction (pad16 above) from R [G*H, H]: panel P of gate q,
 * row k, column c is R[q*H + 16 P + c, k], 0 past H. Reads R 16 rows at a
 * time, each row front to back; writes each panel front to back. */
static void pack(const float *r, int64_t G, int64_t H, float *rp)
{
    int64_t np = pad16(H) / 16;
    for (int64_t q = 0; q < G; q++)
        for (int64_t p = 0; p < np; p++) {
            float *o = rp + (q * np + p) * H * 16;
            for (int64_t c = 0; c < 16; c++) {
                int64_t u = p * 16 + c;
                const float *row = r + (q * H + u) * H;
                for (int64_t k = 0; k < H; k++)
                    o[k * 16 + c] = u < H ? row[k] : 0.0f;
            }
        }
}

int64_t cpu_rnn_f32_rp_floats(int64_t G, int64_t H)
{
    return G * pad16(H) * H;
}

/* A node's packed R^T, all directions. */
typedef struct rp_entry {
    cpu_dnnl_key key;
    float *rp;
} rp_entry;

static void rp_drop(void *e)
{
    free(((rp_entry *)e)->rp);
    ((rp_entry *)e)->rp = NULL;
}

static const cpu_dnnl_kind rp_kind = {CPU_DNNL_RNN, sizeof(cpu_dnnl_cache), sizeof(rp_entry), rp_drop, NULL};

const float *cpu_rnn_f32_rp(ft_kctx *k, const ft_node *n, const ft_view *in, int64_t D, int64_t G, int64_t H)
{
    if (!cpu_input_is_const(k, n, 2))
        return NULL;
    cpu_dnnl_cache *c;
    int fresh;
    rp_entry *e = cpu_dnnl_lookup(k, &rp_kind, n, in, 0, &c, &fresh);
    if (!e)
        return NULL;
    if (!e->rp) {
        int64_t per = cpu_rnn_f32_rp_floats(G, H);
        if (!(e->rp = ft_malloc((size_t)(D * per) * sizeof(float))))
            return NULL;
        for (int64_t d = 0; d < D; d++)
            pack((const float *)in[2].data + d * G * H * H, G, H, e->rp + d * per);
    }
    return e->rp;
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
    /* xw, Rp, gt, two states, cell, r . H, peepholes, Rbh: floats */
    return (size_t)(T * B * G * H + cpu_rnn_f32_rp_floats(G, H) + B * G * pad16(H) + 4 * B * H + 4 * H) * sizeof(float);
}

int cpu_rnn_f32_dir(const ft_node *n, const ft_rnn_f32 *a, float *work)
{
    int64_t T = a->T, B = a->B, H = a->H, G = a->G, GH = G * H, NI = a->NI, d = a->d;
    int op = n->op == FT_OP_LSTM ? 0 : n->op == FT_OP_GRU ? 1 : 2;
    fdir f = {.a = a, .op = op, .T = T, .B = B, .H = H, .Hp = pad16(H), .G = G, .D = a->D, .d = d, .rev = a->rev,
              .lbr = op == 1 && a->linear_before_reset, .bx = a->bias, .y = a->y};
    float *xw = work, *rp = xw + T * B * GH, *gt = rp + cpu_rnn_f32_rp_floats(G, H);
    f.h[0] = gt + B * G * f.Hp;
    f.h[1] = f.h[0] + B * H;
    f.c = f.h[1] + B * H;
    f.rh = f.c + B * H;
    float *pp = f.rh + B * H, *rbh = pp + 3 * H;
    for (int64_t b = 0; b < B; b++)
        f.maxlen = a->len[b] > f.maxlen ? a->len[b] : f.maxlen;
    int rc = cpu_sgemm(0, 1, T * B, GH, NI, 1.0f, a->x, NI, a->w + d * GH * NI, NI, 0.0f, xw, GH);
    if (rc)
        return rc;
    if (a->rp)
        rp = (float *)a->rp; /* read only */
    else
        pack(a->r + d * GH * H, G, H, rp);
    memcpy(f.h[0], a->h0, (size_t)(B * H) * sizeof(float));
    memcpy(f.c, a->c0, (size_t)(B * H) * sizeof(float));
    for (int64_t j = 0; j < 3 * H; j++)
        pp[j] = a->peep ? a->peep[j] : 0;
    for (int64_t j = 0; j < H; j++)
        rbh[j] = a->rbh[j];
    f.xw = xw;
    f.rp = rp;
    f.gt = gt;
    f.pp = pp;
    f.rbh = rbh;
    /* Batch rows split among the threads: no barrier, each thread runs its
     * rows' steps on its own; when the direction has work for two (the
     * threads start once) and rows for every thread, or units too few to
     * split. Else the units: a thread per 16 at most, and only when a step
     * has work for two (the threads meet once or twice per step). */
    int th = a->threads < 1 ? 1 : a->threads, nth = th > H / 16 ? (int)(H / 16) : th;
    int units = nth > 1 && (double)B * (double)GH * (double)H >= 65536.0;
    int rows = th > 1 && B > 1 && (double)T * (double)B * (double)GH * (double)H >= 1048576.0 && (B >= th || !units);
    if (rows)
        nth = B < th ? (int)B : th;
    else if (!units)
        nth = 1;
#pragma omp parallel num_threads(nth) if (nth > 1)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        if (rows)
            run_units(&f, B * t / m, B * (t + 1) / m, 0, H, 1);
        else
            run_units(&f, 0, B, H * t / m / 16 * 16, t == m - 1 ? H : H * (t + 1) / m / 16 * 16, m);
    }
    memcpy(a->hn, f.h[f.maxlen & 1], (size_t)(B * H) * sizeof(float));
    memcpy(a->cn, f.c, (size_t)(B * H) * sizeof(float));
    return 0;
}
