/* CUDA recurrent layers lstm, gru and rnn: the CPU's algorithm (cpu/rnn.c)
 * with cuBLAS products and one fused gate kernel per step.
 *
 * Per direction: one product projects the whole sequence (X W^T for every
 * (t, b) row); then, per step, a kernel gathers each batch entry's projected
 * row for its time (sequence_lens and the direction decide which), one
 * product adds H R^T (gru without linear_before_reset: z and r first, then a
 * kernel forms r . H and a second product adds (r . H) Rh^T), and the gate
 * kernel does the rest for all (b, j) at once, writing Y and the state. The
 * loop runs all T steps (the lengths stay on the device; entries past their
 * length are skipped), so nothing synchronises and graph capture works.
 *
 * f32 and f64 run in their own type; f16 and bf16 are widened to f32 in the
 * workspace, run as f32 and rounded once on the way out, as the CPU does. A
 * length outside [0, T] is reported as a data error (index out of range). */
#include "cu.cuh"

#include "../runtime/numeric.h"

#include <string.h>

namespace {

struct rnn_args {
    int64_t T, B, I, H, G, D;
    int layout, rev, d, op; /* op: 0 lstm, 1 gru, 2 rnn */
    int has_clip, input_forget, lbr;
    double clip;
    int act[3];
    double alpha[3], beta[3];
};

__device__ __forceinline__ float act_of(int kind, float x, double a, double b) { return ft_rnn_act_f(kind, x, (float)a, (float)b); }
__device__ __forceinline__ double act_of(int kind, double x, double a, double b) { return ft_rnn_act_d(kind, x, a, b); }

template <class A> __device__ __forceinline__ A gate(const rnn_args &p, int j, A x)
{
    if (p.has_clip)
        x = x < (A)-p.clip ? (A)-p.clip : x > (A)p.clip ? (A)p.clip : x;
    return act_of(p.act[j], x, p.alpha[j], p.beta[j]);
}

__device__ __forceinline__ int64_t time_of(const rnn_args &p, int64_t len, int64_t s) { return p.rev ? len - 1 - s : s; }

template <class S, class A> __global__ void widen(const S *x, A *y, int64_t cnt)
{
    for (int64_t i = cu_grid_start(); i < cnt; i += cu_grid_step())
        y[i] = (A)cu_f(x[i]);
}

template <class S> __global__ void narrow(const float *x, S *y, int64_t cnt)
{
    for (int64_t i = cu_grid_start(); i < cnt; i += cu_grid_step())
        y[i] = cu_from_f<S>(x[i]);
}

/* len[b] from sequence_lens (i32, i64 or none), checked against [0, T]. */
__global__ void lengths(const void *sl, int is64, int64_t B, int64_t T, int64_t *len, cu_derr *e, int node)
{
    for (int64_t b = cu_grid_start(); b < B; b += cu_grid_step()) {
        int64_t v = !sl ? T : is64 ? ((const int64_t *)sl)[b] : (int64_t)((const int32_t *)sl)[b];
        if (v < 0 || v > T) {
            cu_report(e, CU_DERR_INDEX, node, b, v, 0, T);
            v = 0;
        }
        len[b] = v;
    }
}

/* The initial state of direction d, [B, H]. */
template <class A> __global__ void init_state(rnn_args p, const A *h0, const A *c0, A *h, A *c)
{
    int64_t n = p.B * p.H;
    for (int64_t i = cu_grid_start(); i < n; i += cu_grid_step()) {
        int64_t b = i / p.H, j = i % p.H;
        int64_t si = p.layout ? (b * p.D + p.d) * p.H + j : (p.d * p.B + b) * p.H + j;
        h[i] = h0 ? h0[si] : (A)0;
        c[i] = c0 ? c0[si] : (A)0;
    }
}

/* gt[b, :] = xw[row of (time of step s, b), :], zero past the entry's length. */
template <class A> __global__ void gather_rows(rnn_args p, int64_t s, const int64_t *len, const A *xw, A *gt)
{
    int64_t GH = p.G * p.H, n = p.B * GH;
    for (int64_t i = cu_grid_start(); i < n; i += cu_grid_step()) {
        int64_t b = i / GH, k = i % GH;
        if (s >= len[b]) {
            gt[i] = 0;
            continue;
        }
        int64_t t = time_of(p, len[b], s);
        int64_t row = p.layout ? b * p.T + t : t * p.B + b;
        gt[i] = xw[row * GH + k];
    }
}

/* gru without linear_before_reset: rh = r . H, r from the z/r product in gt. */
template <class A> __global__ void gru_reset(rnn_args p, const A *gt, const A *bias, const A *h, A *rh)
{
    int64_t n = p.B * p.H, GH = 3 * p.H;
    for (int64_t i = cu_grid_start(); i < n; i += cu_grid_step()) {
        int64_t b = i / p.H, j = i % p.H;
        A bx = bias ? bias[p.H + j] + bias[GH + p.H + j] : (A)0;
        rh[i] = gate(p, 0, gt[b * GH + p.H + j] + bx) * h[i];
    }
}

/* One step for every (b, j): gates, state, Y. bias: this direction's [2*G*H]
 * or NULL; pp: peepholes [3*H] or NULL; rg: gru linear_before_reset H R^T. */
template <class A>
__global__ void step(rnn_args p, int64_t s, const int64_t *len, const A *gt, const A *rg, const A *bias, const A *pp, A *h,
                     A *c, A *y)
{
    int64_t n = p.B * p.H, H = p.H, GH = p.G * H;
    for (int64_t i = cu_grid_start(); i < n; i += cu_grid_step()) {
        int64_t b = i / H, j = i % H;
        if (s >= len[b])
            continue;
        int64_t t = time_of(p, len[b], s);
        const A *g = gt + b * GH;
#define BX(k) (bias ? bias[(k) * H + j] + bias[GH + (k) * H + j] : (A)0)
        A hp = h[i], hn;
        if (p.op == 0) {
            A cp = c[i];
            A pi = pp ? pp[j] : (A)0, po = pp ? pp[H + j] : (A)0, pf = pp ? pp[2 * H + j] : (A)0;
            A ig = gate(p, 0, g[j] + BX(0) + pi * cp);
            A fg = p.input_forget ? (A)1 - ig : gate(p, 0, g[2 * H + j] + BX(2) + pf * cp);
            A cc = gate(p, 1, g[3 * H + j] + BX(3));
            A cn = fg * cp + ig * cc;
            A og = gate(p, 0, g[H + j] + BX(1) + po * cn);
            hn = og * gate(p, 2, cn);
            c[i] = cn;
        } else if (p.op == 1) {
            const A *r = rg + b * 3 * H;
            A z = gate(p, 0, g[j] + BX(0) + (p.lbr ? r[j] : (A)0));
            A rr = gate(p, 0, g[H + j] + BX(1) + (p.lbr ? r[H + j] : (A)0));
            A hx;
            if (p.lbr)
                hx = g[2 * H + j] + (bias ? bias[2 * H + j] : (A)0) +
                     rr * (r[2 * H + j] + (bias ? bias[GH + 2 * H + j] : (A)0));
            else
                hx = g[2 * H + j] + BX(2);
            hn = ((A)1 - z) * gate(p, 1, hx) + z * hp;
        } else {
            hn = gate(p, 0, g[j] + BX(0));
        }
#undef BX
        h[i] = hn;
        int64_t yo = p.layout ? ((b * p.T + t) * p.D + p.d) * H : ((t * p.D + p.d) * p.B + b) * H;
        y[yo + j] = hn;
    }
}

/* Y_h, Y_c of direction d from the state. */
template <class A> __global__ void final_state(rnn_args p, const A *h, const A *c, A *yh, A *yc)
{
    int64_t n = p.B * p.H;
    for (int64_t i = cu_grid_start(); i < n; i += cu_grid_step()) {
        int64_t b = i / p.H, j = i % p.H;
        int64_t si = p.layout ? (b * p.D + p.d) * p.H + j : (p.d * p.B + b) * p.H + j;
        if (yh)
            yh[si] = h[i];
        if (yc)
            yc[si] = c[i];
    }
}

/* Everything the direction loop needs, in the arithmetic type A. */
template <class A> struct rnn_bufs {
    const A *x, *w, *r, *bias, *h0, *c0, *pp;
    A *y, *yh, *yc;
    A *xw, *gt, *rg, *h, *c;
    int64_t *len;
};

static size_t up(size_t b) { return (b + 255) / 256 * 256; }

/* v: X, W, R, B, sequence_lens, initial_h, initial_c, P, Y, Y_h, Y_c (NULL
 * where absent); work: xw, gt, rg, h, c one after the other. */
template <class A> static rnn_bufs<A> bufs(void *const *v, char *work, const rnn_args *p, int64_t *len)
{
    rnn_bufs<A> q;
    size_t as = sizeof(A);
    q.x = (const A *)v[0], q.w = (const A *)v[1], q.r = (const A *)v[2], q.bias = (const A *)v[3];
    q.h0 = (const A *)v[5], q.c0 = (const A *)v[6], q.pp = (const A *)v[7];
    q.y = (A *)v[8], q.yh = (A *)v[9], q.yc = (A *)v[10];
    q.xw = (A *)work;
    q.gt = (A *)(work + up((size_t)(p->T * p->B * p->G * p->H) * as));
    q.rg = (A *)((char *)q.gt + up((size_t)(p->B * p->G * p->H) * as));
    q.h = (A *)((char *)q.rg + up((size_t)(p->B * 3 * p->H) * as));
    q.c = (A *)((char *)q.h + up((size_t)(p->B * p->H) * as));
    q.len = len;
    return q;
}

template <class A>
static ft_status run(ft_kctx *k, const ft_node *n, const ft_rnn_params *pr, rnn_args p, const rnn_bufs<A> &q)
{
    cudaStream_t st = k->be->stream;
    ft_dtype at = sizeof(A) == 8 ? FT_F64 : FT_F32;
    int64_t H = p.H, GH = p.G * H, B = p.B;
    unsigned gs = cu_grid(k->be, (uint64_t)(B * GH)), gh = cu_grid(k->be, (uint64_t)(B * H));
    for (int d = 0; d < p.D; d++) {
        p.d = d;
        p.rev = d == 1 || pr->reverse;
        for (int j = 0; j < 3; j++)
            p.act[j] = pr->act[d][j], p.alpha[j] = pr->alpha[d][j], p.beta[j] = pr->beta[d][j];
        const A *w = q.w + d * GH * p.I, *r = q.r + d * GH * H;
        const A *bias = q.bias ? q.bias + d * 2 * GH : NULL, *pp = q.pp ? q.pp + d * 3 * H : NULL;
        init_state<A><<<gh, CU_BLOCK, 0, st>>>(p, q.h0, q.c0, q.h, q.c);
        CU_LAUNCHED(k, n);
        /* xw (T*B x GH) = X (T*B x I) W_d^T */
        const int64_t xs[3] = {p.I, 1, 0}, wt[3] = {1, p.I, 0}, xws[3] = {GH, 1, 0};
        ft_status e = FT_OK;
        if (p.I > 0 && GH > 0 && p.T * B > 0)
            e = cu_gemm_strided(k, n, at, at, 1, p.T * B, GH, p.I, 1.0, q.x, xs, w, wt, 0.0, q.xw, xws);
        else
            CU_TRY(k, n, cudaMemsetAsync(q.xw, 0, (size_t)(p.T * B * GH) * sizeof(A), st));
        if (e)
            return e;
        const int64_t hs[3] = {H, 1, 0}, rt[3] = {1, H, 0}, gts[3] = {GH, 1, 0};
        for (int64_t s = 0; s < p.T; s++) {
            gather_rows<A><<<gs, CU_BLOCK, 0, st>>>(p, s, q.len, q.xw, q.gt);
            CU_LAUNCHED(k, n);
            if (H > 0 && p.op != 1)
                e = cu_gemm_strided(k, n, at, at, 1, B, GH, H, 1.0, q.h, hs, r, rt, 1.0, q.gt, gts);
            else if (H > 0 && p.lbr)
                e = cu_gemm_strided(k, n, at, at, 1, B, GH, H, 1.0, q.h, hs, r, rt, 0.0, q.rg, gts);
            else if (H > 0) {
                if ((e = cu_gemm_strided(k, n, at, at, 1, B, 2 * H, H, 1.0, q.h, hs, r, rt, 1.0, q.gt, gts)))
                    return e;
                gru_reset<A><<<gh, CU_BLOCK, 0, st>>>(p, q.gt, bias, q.h, q.rg);
                CU_LAUNCHED(k, n);
                e = cu_gemm_strided(k, n, at, at, 1, B, H, H, 1.0, q.rg, hs, r + 2 * H * H, rt, 1.0, q.gt + 2 * H, gts);
            }
            if (e)
                return e;
            step<A><<<gh, CU_BLOCK, 0, st>>>(p, s, q.len, q.gt, q.rg, bias, pp, q.h, q.c, q.y);
            CU_LAUNCHED(k, n);
        }
        final_state<A><<<gh, CU_BLOCK, 0, st>>>(p, q.h, q.c, q.yh, q.yc);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}


} // namespace

CU_KFN(cu_rnn)
{
    const ft_rnn_params *pr = &n->params.rnn;
    ft_dtype dt = in[0].dtype;
    cudaStream_t st = k->be->stream;
    const int64_t *xd = in[0].shape.dims;
    rnn_args p;
    memset(&p, 0, sizeof p);
    p.T = xd[pr->layout ? 1 : 0], p.B = xd[pr->layout ? 0 : 1], p.I = xd[2], p.H = pr->hidden, p.G = pr->gates;
    p.D = pr->ndir, p.layout = pr->layout, p.rev = pr->reverse;
    p.op = n->op == FT_OP_LSTM ? 0 : n->op == FT_OP_GRU ? 1 : 2;
    p.has_clip = pr->has_clip, p.clip = pr->clip, p.input_forget = pr->input_forget, p.lbr = pr->linear_before_reset;
    for (int o = 0; o < n->n_out; o++)
        CU_TRY(k, n, cudaMemsetAsync(out[o].data, 0, (size_t)ft_numel(&out[o].shape) * ft_dtype_size(dt), st));
    if (p.B == 0)
        return FT_OK;
    int h16 = dt == FT_F16 || dt == FT_BF16;
    size_t as = dt == FT_F64 ? 8 : 4;
    int64_t GH = p.G * p.H;
    /* workspace: len, work buffers, then (16-bit floats) f32 copies of every float input and output */
    size_t need = up((size_t)p.B * 8) + up((size_t)(p.T * p.B * GH) * as) + up((size_t)(p.B * GH) * as) +
                  up((size_t)(p.B * 3 * p.H) * as) + 2 * up((size_t)(p.B * p.H) * as);
    int fl[11] = {0}; /* which views are float tensors to widen / narrow */
    for (int i = 0; i < n->n_in; i++)
        fl[i] = in[i].data && i != 4;
    for (int o = 0; o < n->n_out; o++)
        fl[8 + o] = 1;
    if (h16)
        for (int i = 0; i < 11; i++)
            if (fl[i])
                need += up((size_t)ft_numel(i < 8 ? &in[i].shape : &out[i - 8].shape) * 4);
    char *ws;
    ft_status e = cu_workspace(k, n, need, (void **)&ws);
    if (e)
        return e;
    int64_t *len = (int64_t *)ws;
    ws += up((size_t)p.B * 8);
    void *v[11] = {0};
    for (int i = 0; i < 8; i++)
        v[i] = i < n->n_in ? in[i].data : NULL;
    for (int o = 0; o < 3; o++)
        v[8 + o] = o < n->n_out ? out[o].data : NULL;
    char *work = ws;
    ws += up((size_t)(p.T * p.B * GH) * as) + up((size_t)(p.B * GH) * as) + up((size_t)(p.B * 3 * p.H) * as) +
          2 * up((size_t)(p.B * p.H) * as);
    if (h16)
        for (int i = 0; i < 11; i++) {
            if (!fl[i])
                continue;
            int64_t cnt = (int64_t)ft_numel(i < 8 ? &in[i].shape : &out[i - 8].shape);
            if (i < 8) {
                unsigned gr = cu_grid(k->be, (uint64_t)cnt);
                if (dt == FT_F16)
                    widen<__half, float><<<gr, CU_BLOCK, 0, st>>>((const __half *)v[i], (float *)ws, cnt);
                else
                    widen<__nv_bfloat16, float><<<gr, CU_BLOCK, 0, st>>>((const __nv_bfloat16 *)v[i], (float *)ws, cnt);
                CU_LAUNCHED(k, n);
            } else
                CU_TRY(k, n, cudaMemsetAsync(ws, 0, (size_t)cnt * 4, st));
            v[i] = ws;
            ws += up((size_t)cnt * 4);
        }
    lengths<<<cu_grid(k->be, (uint64_t)p.B), CU_BLOCK, 0, st>>>(n->n_in > 4 ? in[4].data : NULL,
                                                                n->n_in > 4 && in[4].dtype == FT_I64, p.B, p.T, len,
                                                                k->be->derr_dev, cu_node_index(k, n));
    CU_LAUNCHED(k, n);
    if (dt == FT_F64)
        e = run<double>(k, n, pr, p, bufs<double>(v, work, &p, len));
    else
        e = run<float>(k, n, pr, p, bufs<float>(v, work, &p, len));
    if (e || !h16)
        return e;
    for (int o = 0; o < n->n_out; o++) {
        int64_t cnt = (int64_t)ft_numel(&out[o].shape);
        unsigned gr = cu_grid(k->be, (uint64_t)cnt);
        if (dt == FT_F16)
            narrow<__half><<<gr, CU_BLOCK, 0, st>>>((const float *)v[8 + o], (__half *)out[o].data, cnt);
        else
            narrow<__nv_bfloat16><<<gr, CU_BLOCK, 0, st>>>((const float *)v[8 + o], (__nv_bfloat16 *)out[o].data, cnt);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}
