/* The optimizer's expanded-form passes (optimize.h, ftrun(1) OPTIMIZER):
 * subgraphs that exporters write for an op ftrun has, replaced by that op:
 * silu, hard_swish, gelu (erf and tanh forms), layer_norm, rms_norm, softmax and
 * log_softmax (ONNX's own function bodies) and scaled dot-product attention.
 * Each rewrites a pattern only when its intermediates have no reader outside
 * it and are no graph output; the pattern's last node becomes the op (its
 * name and output stay) and the others go. The helpers are optimize.c's
 * (optimize_int.h). */
#include "optimize_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- silu and hard_swish: mul(x, gate(x)), either operand order ---------- */
/* Whether node p is the gate of `fused`: sigmoid for silu; for hard_swish a
 * hard_sigmoid with HardSwish's alpha 1/6 (to f32's precision, as exporters
 * write it) and beta 1/2. */
static int is_gate(const opt *o, int p, ft_op fused)
{
    const ft_unary_params *u = &o->g->nodes[p].params.unary;
    return fused == FT_OP_SILU || (fabs(u->alpha - 1.0 / 6) <= 1e-7 && u->beta == 0.5);
}

static ft_status gated(opt *o, int *count, ft_op gate, ft_op fused)
{
    ft_graph *g = o->g;
    for (int k = 0; (k = opt_next_live(o, k, FT_OP_MUL)) < g->n_nodes; k++) {
        for (int side = 0; side < 2; side++) {
            int s = g->nodes[k].in[side], x = g->nodes[k].in[1 - side];
            int p = opt_prod(o, s, gate);
            if (p < 0 || g->nodes[p].in[0] != x || !is_gate(o, p, fused) || !opt_private(o, s) ||
                !opt_same_as_input(o, x, g->nodes[k].out[0], fused))
                continue;
            opt_kill(o, p);
            ft_status st = opt_rewrite(o, k, fused, &x, 1);
            if (st)
                return st;
            ++*count;
            break;
        }
    }
    return FT_OK;
}

ft_status opt_silu(opt *o, int *count) { return gated(o, count, FT_OP_SIGMOID, FT_OP_SILU); }
ft_status opt_hard_swish(opt *o, int *count) { return gated(o, count, FT_OP_HARD_SIGMOID, FT_OP_HARD_SWISH); }

/* Binary node k has a one-element constant operand near c: 1, *rest the other. */
static int scalar_side(const opt *o, int k, double c, int *rest)
{
    const ft_node *n = &o->g->nodes[k];
    for (int side = 0; side < 2; side++)
        if (opt_scalar_near(o, n->in[side], c) && n->in[1 - side] != n->in[side]) {
            *rest = n->in[1 - side];
            return 1;
        }
    return 0;
}

/* The erf form's argument d = x / sqrt(2) or x * (1/sqrt(2)): x, or -1. */
static int erf_head(opt *o, int d, int *kill, int *nk)
{
    int pd, x = -1;
    if (!opt_private(o, d))
        return -1;
    if ((pd = opt_prod(o, d, FT_OP_DIV)) >= 0 && opt_scalar_near(o, o->g->nodes[pd].in[1], M_SQRT2))
        x = o->g->nodes[pd].in[0];
    else if ((pd = opt_prod(o, d, FT_OP_MUL)) < 0 || !scalar_side(o, pd, M_SQRT1_2, &x))
        return -1;
    kill[(*nk)++] = pd;
    return x;
}

/* The tanh form's argument u = sqrt(2/pi) * (x + 0.044715 * x^3), x^3 as
 * pow(x, 3), x * (x * x) or (x * x) * x: x, or -1. */
static int tanh_head(opt *o, int u, int *kill, int *nk)
{
    ft_graph *g = o->g;
    int m = opt_prod(o, u, FT_OP_MUL), v, ad, x = -1;
    if (!opt_private(o, u) || m < 0 || !scalar_side(o, m, 0.7978845608028654, &v) || !opt_private(o, v) ||
        (ad = opt_prod(o, v, FT_OP_ADD)) < 0)
        return -1;
    for (int side = 0; side < 2 && x < 0; side++) {
        int cx = g->nodes[ad].in[side], w = g->nodes[ad].in[1 - side], mw, cube, pc, sq, psq;
        if (!opt_private(o, w) || (mw = opt_prod(o, w, FT_OP_MUL)) < 0 || !scalar_side(o, mw, 0.044715, &cube) ||
            !opt_private(o, cube))
            continue;
        if ((pc = opt_prod(o, cube, FT_OP_POW)) >= 0 && g->nodes[pc].in[0] == cx && opt_scalar_near(o, g->nodes[pc].in[1], 3.0)) {
            kill[(*nk)++] = pc;
        } else if ((pc = opt_prod(o, cube, FT_OP_MUL)) >= 0 && (sq = opt_other(o, pc, cx)) >= 0 && opt_private(o, sq) &&
                   (psq = opt_prod(o, sq, FT_OP_MUL)) >= 0 && g->nodes[psq].in[0] == cx && g->nodes[psq].in[1] == cx) {
            kill[(*nk)++] = pc;
            kill[(*nk)++] = psq;
        } else {
            continue;
        }
        kill[(*nk)++] = mw;
        x = cx;
    }
    if (x < 0)
        return -1;
    kill[(*nk)++] = ad;
    kill[(*nk)++] = m;
    return x;
}

/* --- gelu: x * 0.5 * (1 + f) with f = erf(x / sqrt(2)) (approximate none) or
 * tanh(sqrt(2/pi) * (x + 0.044715 x^3)) (approximate tanh), in the
 * associations exporters write: (x*a)*0.5, (x*0.5)*a, x*(a*0.5) and
 * 0.5*(x*a), a = 1 + f. ----------------------------------------------------- */
ft_status opt_gelu(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int e = 0; e < g->n_nodes; e++) {
        if (o->dead[e] || (g->nodes[e].op != FT_OP_ERF && g->nodes[e].op != FT_OP_TANH))
            continue;
        int kill[12], nk = 0, is_tanh = g->nodes[e].op == FT_OP_TANH;
        int x = is_tanh ? tanh_head(o, g->nodes[e].in[0], kill, &nk) : erf_head(o, g->nodes[e].in[0], kill, &nk);
        if (x < 0 || opt_is_const(o, x))
            continue;
        int eo = g->nodes[e].out[0], ao;
        int a = opt_reader(o, eo, FT_OP_ADD);
        if (a < 0 || !scalar_side(o, a, 1.0, &ao) || ao != eo)
            continue;
        ao = g->nodes[a].out[0];
        int m1 = opt_reader(o, ao, FT_OP_MUL);
        if (m1 < 0)
            continue;
        int op1 = opt_other(o, m1, ao), m1o = g->nodes[m1].out[0], last = -1, half = -1, rest;
        if (op1 == x) { /* (x * a) * 0.5 */
            int m2 = opt_reader(o, m1o, FT_OP_MUL);
            if (m2 >= 0 && scalar_side(o, m2, 0.5, &rest) && rest == m1o)
                last = m2;
        } else if (opt_scalar_near(o, op1, 0.5)) { /* x * (a * 0.5) */
            int m2 = opt_reader(o, m1o, FT_OP_MUL);
            if (m2 >= 0 && opt_other(o, m2, m1o) == x)
                last = m2;
        } else if ((half = opt_prod(o, op1, FT_OP_MUL)) >= 0 && opt_private(o, op1) && scalar_side(o, half, 0.5, &rest) &&
                   rest == x) { /* (x * 0.5) * a */
            last = m1;
        }
        if (last < 0 || !opt_same_as_input(o, x, g->nodes[last].out[0], FT_OP_GELU))
            continue;
        kill[nk++] = e;
        kill[nk++] = a;
        kill[nk++] = last == m1 ? half : m1;
        for (int i = 0; i < nk; i++)
            opt_kill(o, kill[i]);
        ft_status st = opt_rewrite(o, last, FT_OP_GELU, &x, 1);
        if (st)
            return st;
        ft_attr_val *ap = opt_attr(&g->nodes[last], "approximate");
        free(ap->s);
        if (!(ap->s = ft_strdup(is_tanh ? "tanh" : "none")))
            return opt_oom(o);
        ++*count;
    }
    return FT_OK;
}

/* --- layer_norm: d = x - mean(x); d / sqrt(mean(d^2) + eps) [* g [+ b]] over
 * the trailing axes; d^2 as pow(d, 2) or d * d. ---------------------------- */

/* First normalised axis of a reduce_mean over trailing axes with keepdims, or -1. */
static int trailing_axis(const ft_node *n, int rank)
{
    const ft_attr_val *ax = ft_attr(n, "axes");
    if (!ft_attr(n, "keepdims")->i || ax->n < 1 || ax->n > rank)
        return -1;
    int seen[FT_MAX_RANK] = {0};
    for (int i = 0; i < ax->n; i++) {
        int64_t a = ax->ints[i] < 0 ? ax->ints[i] + rank : ax->ints[i];
        if (a < 0 || a >= rank || seen[a])
            return -1;
        seen[a] = 1;
    }
    for (int a = rank - ax->n; a < rank; a++)
        if (!seen[a])
            return -1;
    return rank - ax->n;
}

/* p is a constant of x's dtype and exactly x's dims axis..rank-1. */
static int norm_param(const opt *o, int p, int x, int axis)
{
    if (!opt_is_const(o, p))
        return 0;
    const ft_tensor *t = &o->g->tensors[p], *xt = &o->g->tensors[x];
    if (t->dtype != xt->dtype || t->shape.rank != xt->shape.rank - axis)
        return 0;
    for (int i = 0; i < t->shape.rank; i++)
        if (t->shape.dims[i] != xt->shape.dims[axis + i])
            return 0;
    return 1;
}

/* The end of a normalisation pattern: every node of chain (-1: none) but
 * keep goes, and keep becomes op over ins with the (negative) axis and the
 * epsilon given. */
static ft_status fuse_norm(opt *o, const int *chain, size_t n_chain, int keep, ft_op op, const int *ins, int n_in,
                           int64_t axis, double eps)
{
    for (size_t i = 0; i < n_chain; i++)
        if (chain[i] >= 0 && chain[i] != keep)
            opt_kill(o, chain[i]);
    ft_status st = opt_rewrite(o, keep, op, ins, n_in);
    if (st)
        return st;
    opt_attr(&o->g->nodes[keep], "axis")->i = axis;
    opt_attr(&o->g->nodes[keep], "epsilon")->f = eps;
    return FT_OK;
}

ft_status opt_layer_norm(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int r1 = 0; (r1 = opt_next_live(o, r1, FT_OP_REDUCE_MEAN)) < g->n_nodes; r1++) {
        int x = g->nodes[r1].in[0], rank = g->tensors[x].shape.rank;
        int axis = trailing_axis(&g->nodes[r1], rank), mu = g->nodes[r1].out[0];
        int s = opt_reader(o, mu, FT_OP_SUB);
        if (axis < 0 || s < 0 || g->nodes[s].in[0] != x || g->nodes[s].in[1] != mu)
            continue;
        /* d is read by the square and by the division, nothing else */
        int d = g->nodes[s].out[0], sq = -1, dv = -1, bad = 0, rd[4];
        int slots = opt_readers(o, d, rd, 4); /* in node order: a node reading d twice is listed twice, together */
        if ((g->tensors[d].flags & FT_TF_OUTPUT) || slots > 3)
            continue;
        for (int i = 0, reads; i < slots; i += reads) {
            const int k = rd[i];
            const ft_node *n = &g->nodes[k];
            reads = i + 1 < slots && rd[i + 1] == k ? 2 : 1;
            if (n->op == FT_OP_DIV && n->in[0] == d && reads == 1 && dv < 0)
                dv = k;
            else if (((n->op == FT_OP_POW && n->in[0] == d && reads == 1 && opt_scalar_near(o, n->in[1], 2.0)) ||
                      (n->op == FT_OP_MUL && reads == 2)) && sq < 0)
                sq = k;
            else
                bad = 1; /* a reader outside the pattern */
        }
        if (bad || sq < 0 || dv < 0 || slots != g->tensors[d].n_readers)
            continue;
        int r2 = opt_reader(o, g->nodes[sq].out[0], FT_OP_REDUCE_MEAN);
        if (r2 < 0 || trailing_axis(&g->nodes[r2], rank) != axis)
            continue;
        int v = g->nodes[r2].out[0], ad = opt_reader(o, v, FT_OP_ADD);
        double eps;
        if (ad < 0 || !opt_scalar_val(o, opt_other(o, ad, v), &eps) || !(eps >= 0))
            continue;
        int sr = opt_reader(o, g->nodes[ad].out[0], FT_OP_SQRT);
        if (sr < 0 || g->nodes[dv].in[1] != g->nodes[sr].out[0] || !opt_private(o, g->nodes[sr].out[0]))
            continue;
        /* optional scale, then optional bias */
        int last = dv, ins[3] = {x, -1, -1}, n_in = 1, ms = opt_reader(o, g->nodes[dv].out[0], FT_OP_MUL), ab = -1;
        if (ms >= 0 && norm_param(o, opt_other(o, ms, g->nodes[dv].out[0]), x, axis)) {
            ins[n_in++] = opt_other(o, ms, g->nodes[dv].out[0]);
            last = ms;
            ab = opt_reader(o, g->nodes[ms].out[0], FT_OP_ADD);
            if (ab >= 0 && norm_param(o, opt_other(o, ab, g->nodes[ms].out[0]), x, axis)) {
                ins[n_in++] = opt_other(o, ab, g->nodes[ms].out[0]);
                last = ab;
            }
        }
        if (!opt_same_as_input(o, x, g->nodes[last].out[0], FT_OP_LAYER_NORM))
            continue;
        int chain[] = {r1, s, sq, r2, ad, sr, dv, last != dv ? ms : -1};
        ft_status st = fuse_norm(o, chain, FT_ARRAY_LEN(chain), last, FT_OP_LAYER_NORM, ins, n_in, axis - rank, eps);
        if (st)
            return st;
        ++*count;
    }
    return FT_OK;
}

/* --- rms_norm: x / sqrt(mean(x^2) + eps) [* w] over the trailing axes, x^2
 * as pow(x, 2) or x * x, the division as x / r, x * reciprocal(r) or
 * x * (1 / r) (torch.rsqrt's export); w a constant of the normalised dims on
 * either side of the product. --------------------------------------------- */

/* The node dividing x by r in one of the three forms above: that node (the
 * pattern's end), with the reciprocal's node in *inv (-1 for x / r); or -1. */
static int rms_divide(const opt *o, int x, int r, int *inv)
{
    const ft_graph *g = o->g;
    int dv = opt_reader(o, r, FT_OP_DIV), i = -1, m;
    *inv = -1;
    if (dv >= 0 && g->nodes[dv].in[0] == x && g->nodes[dv].in[1] == r)
        return dv;
    if (dv >= 0 && g->nodes[dv].in[1] == r && opt_scalar_near(o, g->nodes[dv].in[0], 1.0))
        i = dv;
    else if ((i = opt_reader(o, r, FT_OP_RECIPROCAL)) < 0)
        return -1;
    if ((m = opt_reader(o, g->nodes[i].out[0], FT_OP_MUL)) < 0 || opt_other(o, m, g->nodes[i].out[0]) != x)
        return -1;
    *inv = i;
    return m;
}

ft_status opt_rms_norm(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int r1 = 0; (r1 = opt_next_live(o, r1, FT_OP_REDUCE_MEAN)) < g->n_nodes; r1++) {
        int sq = g->nodes[r1].in[0], ps, x = -1;
        if (!opt_private(o, sq))
            continue;
        if ((ps = opt_prod(o, sq, FT_OP_POW)) >= 0 && opt_scalar_near(o, g->nodes[ps].in[1], 2.0))
            x = g->nodes[ps].in[0];
        else if ((ps = opt_prod(o, sq, FT_OP_MUL)) >= 0 && g->nodes[ps].in[0] == g->nodes[ps].in[1])
            x = g->nodes[ps].in[0];
        if (x < 0)
            continue;
        int rank = g->tensors[x].shape.rank, axis = trailing_axis(&g->nodes[r1], rank), ms = g->nodes[r1].out[0];
        int ad = opt_reader(o, ms, FT_OP_ADD), sr, inv, last;
        double eps;
        if (axis < 0 || ad < 0 || !opt_scalar_val(o, opt_other(o, ad, ms), &eps) || !(eps >= 0) ||
            (sr = opt_reader(o, g->nodes[ad].out[0], FT_OP_SQRT)) < 0 ||
            (last = rms_divide(o, x, g->nodes[sr].out[0], &inv)) < 0)
            continue;
        int end = last, ins[2] = {x, -1}, n_in = 1, mw = opt_reader(o, g->nodes[last].out[0], FT_OP_MUL);
        if (mw >= 0 && norm_param(o, opt_other(o, mw, g->nodes[last].out[0]), x, axis)) {
            ins[n_in++] = opt_other(o, mw, g->nodes[last].out[0]);
            end = mw;
        }
        if (!opt_same_as_input(o, x, g->nodes[end].out[0], FT_OP_RMS_NORM))
            continue;
        int chain[] = {ps, r1, ad, sr, inv, last};
        ft_status st = fuse_norm(o, chain, FT_ARRAY_LEN(chain), end, FT_OP_RMS_NORM, ins, n_in, axis - rank, eps);
        if (st)
            return st;
        ++*count;
    }
    return FT_OK;
}

/* --- softmax and log_softmax, as ONNX's function bodies (opset 13) write
 * them: d = x - reduce_max(x); exp(d) / reduce_sum(exp(d)), or
 * d - log(reduce_sum(exp(d))); one axis, keepdims. The form without the
 * maximum (which overflows where softmax does not) is left alone. ------- */

/* The single axis of reduce node n over a rank-`rank` input, with keepdims; or -1. */
static int one_axis(const ft_node *n, int rank)
{
    const ft_attr_val *ax = ft_attr(n, "axes");
    if (!ft_attr(n, "keepdims")->i || ax->n != 1)
        return -1;
    int64_t a = ax->ints[0] < 0 ? ax->ints[0] + rank : ax->ints[0];
    return a >= 0 && a < rank ? (int)a : -1;
}

ft_status opt_softmax(opt *o, int *count, int *log_count)
{
    ft_graph *g = o->g;
    for (int r1 = 0; (r1 = opt_next_live(o, r1, FT_OP_REDUCE_MAX)) < g->n_nodes; r1++) {
        int x = g->nodes[r1].in[0], rank = g->tensors[x].shape.rank, axis = one_axis(&g->nodes[r1], rank);
        int mx = g->nodes[r1].out[0], s = opt_reader(o, mx, FT_OP_SUB);
        if (axis < 0 || s < 0 || g->nodes[s].in[0] != x || g->nodes[s].in[1] != mx)
            continue;
        /* d is read by the exp (softmax), or by the exp and the last sub (log_softmax) */
        int d = g->nodes[s].out[0], rd[2], nrd = opt_readers(o, d, rd, 2), e = -1, ls = -1;
        for (int i = 0; i < nrd && i < 2; i++) {
            const ft_node *n = &g->nodes[rd[i]];
            if (n->op == FT_OP_EXP && e < 0)
                e = rd[i];
            else if (n->op == FT_OP_SUB && n->in[0] == d && n->in[1] != d && nrd == 2 && ls < 0)
                ls = rd[i];
        }
        if ((g->tensors[d].flags & FT_TF_OUTPUT) || e < 0 || nrd != (ls < 0 ? 1 : 2))
            continue;
        int eo = g->nodes[e].out[0], rs = -1, end = -1, lg = -1;
        if (ls < 0) { /* exp(d) is read by the sum and the division */
            int re[2], nre = opt_readers(o, eo, re, 2);
            for (int i = 0; nre == 2 && i < 2; i++) {
                const ft_node *n = &g->nodes[re[i]];
                if (n->op == FT_OP_REDUCE_SUM && rs < 0)
                    rs = re[i];
                else if (n->op == FT_OP_DIV && n->in[0] == eo && n->in[1] != eo && end < 0)
                    end = re[i];
            }
            if ((g->tensors[eo].flags & FT_TF_OUTPUT) || rs < 0 || end < 0 ||
                g->nodes[end].in[1] != g->nodes[rs].out[0] || !opt_private(o, g->nodes[rs].out[0]))
                continue;
        } else if ((rs = opt_reader(o, eo, FT_OP_REDUCE_SUM)) < 0 ||
                   (lg = opt_reader(o, g->nodes[rs].out[0], FT_OP_LOG)) < 0 || g->nodes[ls].in[1] != g->nodes[lg].out[0]) {
            continue;
        } else {
            end = ls;
        }
        ft_op op = ls < 0 ? FT_OP_SOFTMAX : FT_OP_LOG_SOFTMAX;
        if (one_axis(&g->nodes[rs], rank) != axis || !opt_same_as_input(o, x, g->nodes[end].out[0], op))
            continue;
        int chain[] = {r1, s, e, rs, lg};
        for (size_t i = 0; i < FT_ARRAY_LEN(chain); i++)
            if (chain[i] >= 0)
                opt_kill(o, chain[i]);
        ft_status st = opt_rewrite(o, end, op, &x, 1);
        if (st)
            return st;
        opt_attr(&g->nodes[end], "axis")->i = axis - rank;
        ++*(ls < 0 ? count : log_count);
    }
    return FT_OK;
}

/* --- attention: softmax(q @ k^T [* c or / c] [+ m or masked]) @ v with
 * q [B,H,S,D], v [B,H,T,Dv] and k^T = transpose(k0) [B,H,D,T] (the
 * transpose's permutation then swaps its last two entries, so that it makes
 * k [B,H,T,D]; a transpose that would then copy k0 as it is, perm [0,1,3,2]
 * before, goes, and k is k0): attention(q, k, v, mask) with scale c (or 1/c,
 * or 1). The mask: an additive float constant m, or where(cond, s, fill) /
 * where(cond, fill, s) with a bool constant cond and fill <= -1e9 (-inf
 * included), which keeps where cond is true (false in the second form: cond
 * is then negated in place, when only that where reads it). attention gives
 * a query whose keys are all masked zeros where the expanded form gives NaN
 * or a uniform average, so a mask with such a row is left alone: every row
 * of a constant mask must keep a key. A mask that is exactly the causal one
 * (key j kept for query i when j <= i, S == T) becomes causal = 1. -------- */

/* Whether entry i of constant mask t keeps its key: a true (bool; false
 * when negate) or an entry above -inf (additive). */
static int mask_keeps(const ft_tensor *t, int negate, size_t i)
{
    return t->dtype == FT_BOOL ? (((const uint8_t *)t->value)[i] != 0) != negate
                               : ft_load_f64(t->value, t->dtype, i) > -INFINITY;
}

/* Every row (last axis) of constant mask t keeps a key (mask_keeps). */
static int mask_rows_keep(const ft_tensor *t, int negate)
{
    int64_t T = t->shape.rank ? t->shape.dims[t->shape.rank - 1] : 1;
    uint64_t rows = T ? ft_numel(&t->shape) / (uint64_t)T : 0;
    for (uint64_t r = 0; r < rows; r++) {
        int keep = 0;
        for (int64_t j = 0; j < T && !keep; j++)
            keep = mask_keeps(t, negate, (size_t)(r * (uint64_t)T + (uint64_t)j));
        if (!keep)
            return 0;
    }
    return 1;
}

/* Constant mask t (read as mask_keeps does) is the causal one of scores
 * [.., S, T] with S == T: [1,..,1,S,T], keeping key j for query i exactly
 * when j <= i (an additive mask: 0 there and -inf elsewhere). */
static int mask_causal(const ft_tensor *t, int negate, const ft_shape *sc)
{
    int r = t->shape.rank;
    int64_t S = sc->dims[sc->rank - 2], T = sc->dims[sc->rank - 1];
    if (r < 2 || S != T || t->shape.dims[r - 2] != S || t->shape.dims[r - 1] != T)
        return 0;
    for (int d = 0; d < r - 2; d++)
        if (t->shape.dims[d] != 1)
            return 0;
    for (int64_t i = 0; i < S; i++)
        for (int64_t j = 0; j < T; j++) {
            size_t at = (size_t)(i * T + j);
            double v = t->dtype == FT_BOOL ? 0 : ft_load_f64(t->value, t->dtype, at);
            if ((v != 0 && v != -INFINITY) || mask_keeps(t, negate, at) != (j <= i))
                return 0; /* additive: 0 or -inf only */
        }
    return 1;
}

/* A mask node producing private scores-tensor s: its mask tensor (*mask,
 * with *negate for the inverted where form) and the tensor it masks (the
 * return value), or -1. */
static int attn_mask(const opt *o, int s, ft_dtype dt, int *node, int *mask, int *negate)
{
    const ft_graph *g = o->g;
    int w, a;
    double fill;
    *node = *mask = -1;
    *negate = 0;
    if (!opt_private(o, s))
        return -1;
    if ((w = opt_prod(o, s, FT_OP_WHERE)) >= 0) {
        const ft_node *n = &g->nodes[w];
        int side = opt_scalar_val(o, n->in[2], &fill) && fill <= -1e9 ? 1
                 : opt_scalar_val(o, n->in[1], &fill) && fill <= -1e9 ? 2 : 0;
        const ft_tensor *c = &g->tensors[n->in[0]];
        if (!side || !opt_is_const(o, n->in[0]) || c->dtype != FT_BOOL || c->value_bytes != ft_tensor_bytes(c) ||
            (side == 2 && c->n_readers != 1) || !mask_rows_keep(c, side == 2))
            return -1;
        if (!ft_shape_eq(&g->tensors[n->in[side]].shape, &g->tensors[s].shape))
            return -1;
        *node = w, *mask = n->in[0], *negate = side == 2;
        return n->in[side];
    }
    if ((a = opt_prod(o, s, FT_OP_ADD)) >= 0) {
        for (int side = 0; side < 2; side++) {
            int m = g->nodes[a].in[side];
            const ft_tensor *mt = &g->tensors[m];
            if (opt_is_const(o, m) && mt->dtype == dt && mt->shape.rank <= 4 && mt->value_bytes == ft_tensor_bytes(mt) &&
                g->nodes[a].in[1 - side] != m && ft_shape_eq(&g->tensors[g->nodes[a].in[1 - side]].shape, &g->tensors[s].shape) &&
                mask_rows_keep(mt, 0)) {
                *node = a, *mask = m;
                return g->nodes[a].in[1 - side];
            }
        }
        return -1;
    }
    return s; /* no mask */
}

/* A plain product: matmul with two inputs and no activation. */
static int plain_matmul(const opt *o, int k)
{
    const ft_node *n = &o->g->nodes[k];
    return k >= 0 && n->n_in == 2 && strcmp(ft_attr(n, "activation")->s, "none") == 0;
}

ft_status opt_attention(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int sm = 0; (sm = opt_next_live(o, sm, FT_OP_SOFTMAX)) < g->n_nodes; sm++) {
        int sc = g->nodes[sm].in[0], p = g->nodes[sm].out[0];
        const ft_tensor *st = &g->tensors[sc];
        int64_t ax = ft_attr(&g->nodes[sm], "axis")->i;
        int m2 = opt_reader(o, p, FT_OP_MATMUL);
        if (st->shape.rank != 4 || (ax != -1 && ax != 3) || !plain_matmul(o, m2) || g->nodes[m2].in[0] != p)
            continue;
        int mnode, mask, negate, t = attn_mask(o, sc, st->dtype, &mnode, &mask, &negate), sn = -1, m1;
        double scale = 1, c;
        if (t < 0 || !opt_private(o, t))
            continue;
        if ((sn = opt_prod(o, t, FT_OP_MUL)) >= 0) {
            int rest = -1;
            for (int side = 0; side < 2 && rest < 0; side++)
                if (opt_scalar_val(o, g->nodes[sn].in[side], &c) && g->nodes[sn].in[1 - side] != g->nodes[sn].in[side])
                    rest = g->nodes[sn].in[1 - side], scale = c;
            t = rest;
        } else if ((sn = opt_prod(o, t, FT_OP_DIV)) >= 0) {
            int ok = opt_scalar_val(o, g->nodes[sn].in[1], &c) && c != 0 && isfinite(c);
            t = ok ? g->nodes[sn].in[0] : -1;
            scale = ok ? 1 / c : 1;
        }
        if (t < 0 || (sn >= 0 && !opt_private(o, t)) || (m1 = opt_prod(o, t, FT_OP_MATMUL)) < 0 || !plain_matmul(o, m1))
            continue;
        int q = g->nodes[m1].in[0], kt = g->nodes[m1].in[1], v = g->nodes[m2].in[1], tr = opt_prod(o, kt, FT_OP_TRANSPOSE);
        const ft_tensor *qt = &g->tensors[q], *ktt = &g->tensors[kt], *vt = &g->tensors[v], *yt = &g->tensors[g->nodes[m2].out[0]];
        if (tr < 0 || !opt_private(o, kt) || qt->shape.rank != 4 || ktt->shape.rank != 4 || vt->shape.rank != 4 ||
            ktt->dtype != qt->dtype || vt->dtype != qt->dtype || yt->dtype != qt->dtype ||
            !ft_dtype_in(qt->dtype, ft_op_get(FT_OP_ATTENTION)->dtypes) || !isfinite(scale))
            continue;
        const int64_t *qd = qt->shape.dims, *kd = ktt->shape.dims, *vd = vt->shape.dims;
        if (qd[0] != kd[0] || qd[0] != vd[0] || qd[1] != kd[1] || qd[1] != vd[1] || qd[3] != kd[2] || kd[3] != vd[2])
            continue;
        /* k^T's transpose now makes k: its permutation's last two entries
         * swap; when that leaves them in order (k^T was k's [0,1,3,2]), the
         * transpose goes and attention reads k itself */
        ft_attr_val *perm = opt_attr(&g->nodes[tr], "perm");
        int full[4];
        for (int i = 0; i < 4; i++)
            full[i] = perm->n == 4 ? (int)(perm->ints[i] < 0 ? perm->ints[i] + 4 : perm->ints[i]) : 3 - i;
        if (full[0] == 0 && full[1] == 1 && full[2] == 3 && full[3] == 2) {
            int k0 = g->nodes[tr].in[0];
            opt_kill(o, tr);
            kt = k0;
        } else {
            if (perm->n != 4) { /* the default (reversed) order: a list of its own */
                int64_t *ints = ft_malloc(4 * sizeof(int64_t));
                if (!ints)
                    return opt_oom(o);
                free(perm->ints);
                perm->ints = ints, perm->n = 4;
            }
            perm->ints[0] = full[0], perm->ints[1] = full[1], perm->ints[2] = full[3], perm->ints[3] = full[2];
            ft_tensor *kw = &g->tensors[kt];
            int64_t tmp = kw->shape.dims[2];
            kw->shape.dims[2] = kw->shape.dims[3], kw->shape.dims[3] = tmp;
        }
        int causal = mask >= 0 && mask_causal(&g->tensors[mask], negate, &st->shape);
        if (causal) /* attention's causal flag instead: no mask to read, and later keys not visited */
            mask = -1, negate = 0;
        if (negate) { /* where(cond, fill, s): the mask keeps where cond is false */
            ft_tensor *ct = &g->tensors[mask];
            size_t nb = ft_tensor_bytes(ct);
            uint8_t *neg = ft_malloc(nb ? nb : 1);
            if (!neg)
                return opt_oom(o);
            for (size_t i = 0; i < nb; i++)
                neg[i] = !((const uint8_t *)ct->value)[i];
            ft_tensor_set_value(ct, neg, nb);
        }
        int chain[] = {m1, sn, mnode, sm}, ins[4] = {q, kt, v, mask};
        for (size_t i = 0; i < FT_ARRAY_LEN(chain); i++)
            if (chain[i] >= 0)
                opt_kill(o, chain[i]);
        ft_status s2 = opt_rewrite(o, m2, FT_OP_ATTENTION, ins, mask >= 0 ? 4 : 3);
        if (s2)
            return s2;
        opt_attr(&g->nodes[m2], "scale")->f = scale;
        if (causal)
            opt_attr(&g->nodes[m2], "causal")->i = 1;
        ++*count;
    }
    return FT_OK;
}
