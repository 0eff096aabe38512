/* CPU recurrent layers lstm, gru and rnn in f32 and f64 (f16/bf16 through
 * the f32 kernel, cpu_backend.c); ONNX semantics, attributes parsed into
 * ft_rnn_params by graph/infer_rnn.c.
 *
 * Per direction: one BLAS product projects the whole sequence, X W^T for
 * every (t, b) row at once; then the recurrence runs step by step, each step
 * one product H R^T for the whole batch (gru without linear_before_reset: one
 * for the z and r gates and one for (r . H) Rh^T), followed by the gate
 * arithmetic in double (activations: ft_rnn_act_d, runtime/numeric.h).
 *
 * sequence_lens: batch entry b runs its first len_b steps (reverse: from
 * t = len_b - 1 down to 0); Y is zero past them and Y_h, Y_c hold the state
 * after the last step run (the initial state when len_b is 0). */
#include "cpu.h"

#include "../runtime/numeric.h"
#include "rnn_f32.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rnn_geo {
    int64_t T, B, NI, H, G, D; /* NI: input size (complex.h, which cblas.h pulls in, takes I) */
    ft_dtype dt;
    size_t es;
} rnn_geo;

static double ld(ft_dtype dt, const void *p, int64_t i)
{
    return dt == FT_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

static void st(ft_dtype dt, void *p, int64_t i, double v)
{
    if (dt == FT_F32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* C (M x N, row stride ldc) = A (M x K) B^T (B: N x K) + beta C, row-major:
 * f32 through cpu_sgemm (blas.c), f64 through OpenBLAS; 0 or cpu_sgemm's
 * error code. */
static int gemm_nt(ft_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb,
                   double beta, void *C, int64_t ldc)
{
    if (M == 0 || N == 0)
        return 0;
    if (dt == FT_F32)
        return cpu_sgemm(0, 1, M, N, K, 1.0f, A, lda, B, ldb, (float)beta, C, ldc);
    if (K == 0) {
        if (beta == 0)
            for (int64_t i = 0; i < M; i++)
                memset((char *)C + (size_t)(i * ldc) * ft_dtype_size(dt), 0, (size_t)N * ft_dtype_size(dt));
        return 0;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, 1.0, A, (int)lda, B, (int)ldb, beta, C,
                (int)ldc);
    return 0;
}

static double clipv(const ft_rnn_params *p, double x)
{
    return !p->has_clip ? x : x < -p->clip ? -p->clip : x > p->clip ? p->clip : x;
}

/* Activation j of direction d on a clipped pre-activation. */
static double act(const ft_rnn_params *p, int d, int j, double x)
{
    return ft_rnn_act_d(p->act[d][j], clipv(p, x), p->alpha[d][j], p->beta[d][j]);
}

/* Everything one direction works with. */
typedef struct rnn_dir {
    const ft_rnn_params *p;
    rnn_geo g;
    int d, rev;
    const int64_t *len;
    void *xw;         /* [rows, G*H]: X W^T of every row of X */
    void *gt;         /* [B, G*H]: this step's gate pre-activations */
    void *rg;         /* gru: [B, 3*H] H R^T (linear_before_reset) or (r . H) (otherwise) */
    void *h;          /* [B, H] state */
    double *c;        /* lstm [B, H] cell */
    double *bx, *rbh; /* [G*H] bias added to every gate; gru linear_before_reset: [H] Rbh */
    const void *pp;   /* lstm peepholes of this direction [3*H] or NULL */
} rnn_dir;

/* Row of X (and of xw) at time t, batch b. */
static int64_t xrow(const rnn_dir *r, int64_t t, int64_t b)
{
    return r->p->layout ? b * r->g.T + t : t * r->g.B + b;
}

/* Gate arithmetic of step s for batch entry b, at time t; writes Y. */
static void step_entry(const rnn_dir *r, ft_op op, int64_t b, int64_t t, void *y)
{
    const ft_rnn_params *p = r->p;
    const rnn_geo *g = &r->g;
    int64_t H = g->H, GH = g->G * H, d = r->d;
    ft_dtype dt = g->dt;
    const double *bx = r->bx;
    int64_t yo = p->layout ? ((b * g->T + t) * g->D + d) * H : ((t * g->D + d) * g->B + b) * H;
    for (int64_t j = 0; j < H; j++) {
        int64_t gi = b * GH + j;
        double hp = ld(dt, r->h, b * H + j), hn;
        if (op == FT_OP_LSTM) {
            double cp = r->c[b * H + j];
            double pi = r->pp ? ld(dt, r->pp, j) : 0, po = r->pp ? ld(dt, r->pp, H + j) : 0,
                   pf = r->pp ? ld(dt, r->pp, 2 * H + j) : 0;
            double i = act(p, d, 0, ld(dt, r->gt, gi) + bx[j] + pi * cp);
            double f = p->input_forget ? 1 - i : act(p, d, 0, ld(dt, r->gt, gi + 2 * H) + bx[2 * H + j] + pf * cp);
            double cc = act(p, d, 1, ld(dt, r->gt, gi + 3 * H) + bx[3 * H + j]);
            double cn = f * cp + i * cc;
            double o = act(p, d, 0, ld(dt, r->gt, gi + H) + bx[H + j] + po * cn);
            hn = o * act(p, d, 2, cn);
            r->c[b * H + j] = cn;
        } else if (op == FT_OP_GRU) {
            int lbr = p->linear_before_reset;
            int64_t ri = b * 3 * H + j;
            double z = act(p, d, 0, ld(dt, r->gt, gi) + bx[j] + (lbr ? ld(dt, r->rg, ri) : 0));
            double rr = act(p, d, 0, ld(dt, r->gt, gi + H) + bx[H + j] + (lbr ? ld(dt, r->rg, ri + H) : 0));
            double hx = ld(dt, r->gt, gi + 2 * H) + bx[2 * H + j];
            if (lbr)
                hx += rr * (ld(dt, r->rg, ri + 2 * H) + r->rbh[j]);
            hn = (1 - z) * act(p, d, 1, hx) + z * hp;
        } else {
            hn = act(p, d, 0, ld(dt, r->gt, gi) + bx[j]);
        }
        st(dt, r->h, b * H + j, hn);
        st(dt, y, yo + j, hn);
    }
}

static int64_t time_of(const rnn_dir *r, int64_t s, int64_t b)
{
    return r->rev ? r->len[b] - 1 - s : s;
}

/* The recurrence of one direction; Y (zeroed) gets its values. */
static int run_dir(ft_kctx *k, const ft_node *n, rnn_dir *r, const ft_view *in, void *y)
{
    const ft_rnn_params *p = r->p;
    const rnn_geo *g = &r->g;
    int64_t H = g->H, G = g->G, GH = G * H, B = g->B, d = r->d, maxlen = 0;
    ft_dtype dt = g->dt;
    size_t es = g->es;
    for (int64_t b = 0; b < B; b++)
        maxlen = r->len[b] > maxlen ? r->len[b] : maxlen;
    const char *w = (const char *)in[1].data + (size_t)(d * GH * g->NI) * es;
    const char *rw = (const char *)in[2].data + (size_t)(d * GH * H) * es;
    int rc = gemm_nt(dt, g->T * B, GH, g->NI, in[0].data, g->NI, w, g->NI, 0, r->xw, GH);
    if (rc)
        return rc;
    int lbr = n->op == FT_OP_GRU && p->linear_before_reset;
    int par = k->threads > 1 && B > 1 && B * GH >= CPU_PAR_MIN / 8;
    for (int64_t s = 0; s < maxlen; s++) {
        for (int64_t b = 0; b < B; b++) {
            char *gb = (char *)r->gt + (size_t)(b * GH) * es;
            if (s < r->len[b])
                memcpy(gb, (const char *)r->xw + (size_t)(xrow(r, time_of(r, s, b), b) * GH) * es, (size_t)GH * es);
            else
                memset(gb, 0, (size_t)GH * es);
        }
        if (n->op != FT_OP_GRU)
            rc = gemm_nt(dt, B, GH, H, r->h, H, rw, H, 1, r->gt, GH);
        else if (lbr)
            rc = gemm_nt(dt, B, GH, H, r->h, H, rw, H, 0, r->rg, GH);
        else {
            /* z and r from H; then (r . H) Rh^T into the h gate */
            if ((rc = gemm_nt(dt, B, 2 * H, H, r->h, H, rw, H, 1, r->gt, GH)))
                return rc;
            for (int64_t b = 0; b < B; b++)
                for (int64_t j = 0; j < H; j++) {
                    double rr = act(p, (int)d, 0, ld(dt, r->gt, b * GH + H + j) + r->bx[H + j]);
                    st(dt, r->rg, b * H + j, rr * ld(dt, r->h, b * H + j));
                }
            rc = gemm_nt(dt, B, H, H, r->rg, H, rw + (size_t)(2 * H * H) * es, H, 1, (char *)r->gt + (size_t)(2 * H) * es,
                         GH);
        }
        if (rc)
            return rc;
#pragma omp parallel for num_threads(k->threads) if (par)
        for (int64_t b = 0; b < B; b++)
            if (s < r->len[b])
                step_entry(r, n->op, b, time_of(r, s, b), y);
    }
    return 0;
}

/* State index of (direction d, batch b, unit j) in initial_h/c and Y_h/c. */
static int64_t state_at(const ft_rnn_params *p, const rnn_geo *g, int64_t d, int64_t b, int64_t j)
{
    return p->layout ? (b * g->D + d) * g->H + j : (d * g->B + b) * g->H + j;
}

/* f32 with the default activations (rnn_f32.c): direction d, with its own
 * work buffer (cpu_rnn_f32_work, then 4 B H + G H + H floats); 0 or
 * cpu_sgemm's error code. */
static int dir_f32(const ft_node *n, const ft_view *in, ft_view *out, const rnn_geo *g, const int64_t *len,
                   const float *rp, int64_t d, int threads, float *work)
{
    const ft_rnn_params *p = &n->params.rnn;
    int64_t H = g->H, B = g->B, GH = g->G * H;
    float *h0 = (float *)((char *)work + cpu_rnn_f32_work(g->T, B, H, g->G)), *c0 = h0 + B * H, *hn = c0 + B * H,
          *cn = hn + B * H, *bx = cn + B * H, *rbh = bx + GH;
    const float *bias = n->n_in > 3 && in[3].data ? in[3].data : NULL;
    const float *ih = n->n_in > 5 && in[5].data ? in[5].data : NULL, *ic = n->n_in > 6 && in[6].data ? in[6].data : NULL;
    int lbr = n->op == FT_OP_GRU && p->linear_before_reset;
    for (int64_t j = 0; j < GH; j++) {
        float wbj = bias ? bias[d * 2 * GH + j] : 0, rbj = bias ? bias[d * 2 * GH + GH + j] : 0;
        bx[j] = lbr && j >= 2 * H ? wbj : wbj + rbj;
        if (lbr && j >= 2 * H)
            rbh[j - 2 * H] = rbj;
    }
    if (!lbr)
        memset(rbh, 0, (size_t)H * sizeof(float));
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            h0[b * H + j] = ih ? ih[state_at(p, g, d, b, j)] : 0;
            c0[b * H + j] = ic ? ic[state_at(p, g, d, b, j)] : 0;
        }
    ft_rnn_f32 a = {.T = g->T, .B = B, .H = H, .G = g->G, .NI = g->NI, .D = g->D, .d = d, .threads = threads,
                    .rev = p->reverse || d == 1, .layout = p->layout, .input_forget = p->input_forget,
                    .linear_before_reset = p->linear_before_reset, .clip = p->has_clip ? (float)p->clip : INFINITY,
                    .len = len, .x = in[0].data, .w = in[1].data, .r = in[2].data,
                    .rp = rp ? rp + d * cpu_rnn_f32_rp_floats(g->G, H) : NULL, .bias = bx, .rbh = rbh, .h0 = h0, .c0 = c0,
                    .peep = n->n_in > 7 && in[7].data ? (const float *)in[7].data + d * 3 * H : NULL,
                    .y = out[0].data, .hn = hn, .cn = cn};
    int rc = cpu_rnn_f32_dir(n, &a, work);
    for (int64_t b = 0; b < B && !rc; b++)
        for (int64_t j = 0; j < H; j++) {
            if (n->n_out > 1)
                ((float *)out[1].data)[state_at(p, g, d, b, j)] = hn[b * H + j];
            if (n->n_out > 2)
                ((float *)out[2].data)[state_at(p, g, d, b, j)] = cn[b * H + j];
        }
    return rc;
}

/* The directions of a bidirectional layer run side by side when there are
 * threads for both (each then on one thread: no barrier per step). */
static ft_status run_f32(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const rnn_geo *g,
                         const int64_t *len)
{
    int64_t H = g->H, B = g->B, GH = g->G * H;
    size_t wb = cpu_rnn_f32_work(g->T, B, H, g->G) + (size_t)(4 * B * H + GH + H) * sizeof(float);
    wb = (wb + 63) / 64 * 64;
    char *work = ft_malloc(wb * (size_t)g->D);
    if (!work)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the %s work buffers (%zu bytes)",
                           ft_op_name(n->op), wb * (size_t)g->D);
    const float *rp = cpu_rnn_f32_rp(k, n, in, g->D, g->G, H);
    int side = g->D == 2 && k->threads >= 2, rc[2] = {0, 0};
    /* Not one loop under "omp parallel for if (side)": with side false that
     * is an inactive region, and the threaded steps and products inside it
     * start nested teams; measured on a busy 2-core machine (load 4-5), the
     * lstm model of bench/onnx_models.py at --threads 2 ran in 10-29 ms that
     * way, in 0.5-0.7 ms with the regions at the top level (when two other
     * processes keep both cores busy, both take 20-44 ms: each region waits
     * for a thread another process holds off its core). */
    if (side) {
#pragma omp parallel for num_threads(2)
        for (int64_t d = 0; d < 2; d++)
            rc[d] = dir_f32(n, in, out, g, len, rp, d, 1, (float *)(work + wb * (size_t)d));
    } else
        for (int64_t d = 0; d < g->D; d++)
            rc[d] = dir_f32(n, in, out, g, len, rp, d, k->threads, (float *)(work + wb * (size_t)d));
    free(work);
    return rc[0] || rc[1] ? cpu_blas_error(k, n, rc[0] ? rc[0] : rc[1]) : FT_OK;
}

ft_status cpu_rnn(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_rnn_params *p = &n->params.rnn;
    ft_dtype dt = in[0].dtype;
    if (dt != FT_F32 && dt != FT_F64)
        return cpu_bad_dtype(k, n, dt);
    const int64_t *xd = in[0].shape.dims;
    rnn_geo g = {.T = xd[p->layout ? 1 : 0], .B = xd[p->layout ? 0 : 1], .NI = xd[2], .H = p->hidden, .G = p->gates,
                 .D = p->ndir, .dt = dt, .es = ft_dtype_size(dt)};
    int64_t GH = g.G * g.H;
    if (g.T * g.B > INT_MAX || GH > INT_MAX || g.NI > INT_MAX)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "sizes T*B = %lld, G*H = %lld, I = %lld are beyond what the BLAS "
                           "library takes", (long long)(g.T * g.B), (long long)GH, (long long)g.NI);
    for (int o = 0; o < n->n_out; o++)
        memset(out[o].data, 0, (size_t)ft_numel(&out[o].shape) * g.es);
    if (g.B == 0)
        return FT_OK;
    int64_t *len = ft_malloc((size_t)g.B * sizeof *len);
    if (!len)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory");
    for (int64_t b = 0; b < g.B; b++) {
        len[b] = g.T;
        if (n->n_in > 4 && in[4].data)
            len[b] = in[4].dtype == FT_I32 ? ((const int32_t *)in[4].data)[b] : ((const int64_t *)in[4].data)[b];
        if (len[b] < 0 || len[b] > g.T) {
            ft_status e = ft_node_err(k->err, FT_EGRAPH, k->g, n, "sequence_lens[%lld] is %lld; expected 0 to %lld "
                                      "(the sequence length T of X)", (long long)b, (long long)len[b], (long long)g.T);
            free(len);
            return e;
        }
    }
    if (dt == FT_F32 && cpu_rnn_f32_ok(n)) {
        ft_status e = run_f32(k, n, in, out, &g, len);
        free(len);
        return e;
    }
    size_t xw_b = (size_t)(g.T * g.B * GH) * g.es, gt_b = (size_t)(g.B * GH) * g.es, rg_b = (size_t)(g.B * 3 * g.H) * g.es;
    size_t h_b = (size_t)(g.B * g.H) * g.es, c_b = (size_t)(g.B * g.H) * sizeof(double);
    char *buf = ft_malloc(xw_b + gt_b + rg_b + h_b + c_b + (size_t)(GH + g.H) * sizeof(double) + 64);
    if (!buf) {
        free(len);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the %s work buffers (%zu bytes)",
                           ft_op_name(n->op), xw_b + gt_b + rg_b + h_b + c_b);
    }
    rnn_dir r = {.p = p, .g = g, .len = len};
    r.c = (double *)buf; /* doubles first: aligned */
    r.bx = r.c + g.B * g.H;
    r.rbh = r.bx + GH;
    r.xw = r.rbh + g.H;
    r.gt = (char *)r.xw + xw_b;
    r.rg = (char *)r.gt + gt_b;
    r.h = (char *)r.rg + rg_b;
    int lbr = n->op == FT_OP_GRU && p->linear_before_reset;
    int64_t H = g.H, B = g.B;
    for (int d = 0; d < p->ndir; d++) {
        r.d = d;
        r.rev = p->reverse || d == 1;
        const ft_view *bias = n->n_in > 3 && in[3].data ? &in[3] : NULL;
        for (int64_t j = 0; j < GH; j++) {
            double wb = bias ? ld(dt, bias->data, d * 2 * GH + j) : 0, rb = bias ? ld(dt, bias->data, d * 2 * GH + GH + j) : 0;
            r.bx[j] = lbr && j >= 2 * H ? wb : wb + rb;
            if (lbr && j >= 2 * H)
                r.rbh[j - 2 * H] = rb;
        }
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t si = state_at(p, &g, d, b, j);
                st(dt, r.h, b * H + j, n->n_in > 5 && in[5].data ? ld(dt, in[5].data, si) : 0);
                r.c[b * H + j] = n->n_in > 6 && in[6].data ? ld(dt, in[6].data, si) : 0;
            }
        r.pp = n->n_in > 7 && in[7].data ? (const char *)in[7].data + (size_t)(d * 3 * H) * g.es : NULL;
        int rc = run_dir(k, n, &r, in, out[0].data);
        if (rc) {
            free(buf);
            free(len);
            return cpu_blas_error(k, n, rc);
        }
        for (int64_t b = 0; b < B; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t si = state_at(p, &g, d, b, j);
                if (n->n_out > 1)
                    st(dt, out[1].data, si, ld(dt, r.h, b * H + j));
                if (n->n_out > 2)
                    st(dt, out[2].data, si, r.c[b * H + j]);
            }
    }
    free(buf);
    free(len);
    return FT_OK;
}
