/* The graph optimizer (optimize.h): batch_norm folded into the conv before
 * it (bn_fold), fusions of residual adds (conv_add) and activations
 * (conv_act) into the conv before them, of bias adds and activations into
 * the matmul or gemm before them (matmul_epi), transposes folded into
 * constants and gemm flags, removal of dead nodes, and the compaction that
 * drops the nodes and tensors a pass left unused; the passes that recognise
 * expanded forms (silu, gelu, layer_norm, rms_norm, softmax, log_softmax,
 * attention) are in optimize_forms.c. The helpers both files use are
 * declared in optimize_int.h.
 *
 * The passes keep t->n_readers and t->producer up to date as they rewrite, so
 * a later pass sees the graph as it is; node order (g->order) is the one of
 * the last validation, which stays topological for what survives (a fused
 * node reads only tensors its pattern already read). */
#include "optimize.h"
#include "optimize_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ft_status opt_oom(opt *o) { return ft_err(o->err, FT_ERUNTIME, "%s: out of memory optimizing the graph", o->g->file); }

int opt_private(const opt *o, int t)
{
    /* a tensor whose shape is known only at run time is never fused through:
     * the shape the patterns would check is a stand-in */
    if (!(t >= 0 && o->g->tensors[t].n_readers == 1 && !(o->g->tensors[t].flags & (FT_TF_OUTPUT | FT_TF_DYNAMIC))))
        return 0;
    /* nor across a guard: what runs on one condition is not merged with
     * what runs on another (or always) */
    int p = o->g->tensors[t].producer, k;
    if (!o->guarded)
        return 1;
    return opt_readers(o, t, &k, 1) == 1 && (p < 0 || o->g->nodes[p].guard == o->g->nodes[k].guard);
}

int opt_prod(const opt *o, int t, ft_op op)
{
    if (t < 0)
        return -1;
    int p = o->g->tensors[t].producer;
    return p >= 0 && !o->dead[p] && o->g->nodes[p].op == op ? p : -1;
}

int opt_reader(const opt *o, int t, ft_op op)
{
    int k;
    return opt_private(o, t) && opt_readers(o, t, &k, 1) == 1 && o->g->nodes[k].op == op ? k : -1;
}

int opt_readers(const opt *o, int t, int *ks, int max)
{
    int n_slots = 0;
    for (int k = 0; t >= 0 && k < o->g->n_nodes; k++) {
        const ft_node *n = &o->g->nodes[k];
        for (int i = 0; !o->dead[k] && i < n->n_in; i++)
            if (n->in[i] == t && n_slots++ < max)
                ks[n_slots - 1] = k;
    }
    return n_slots;
}

int opt_is_const(const opt *o, int t)
{
    const ft_tensor *x = t >= 0 ? &o->g->tensors[t] : NULL;
    return x && x->producer < 0 && (x->flags & FT_TF_VALUE) && !(x->flags & FT_TF_INPUT) && x->value;
}

int opt_scalar_near(const opt *o, int t, double want)
{
    if (!opt_is_const(o, t))
        return 0;
    const ft_tensor *x = &o->g->tensors[t];
    if (ft_numel(&x->shape) != 1 || !ft_dtype_is_float(x->dtype))
        return 0;
    double v = ft_load_f64(x->value, x->dtype, 0);
    return fabs(v - want) <= 1e-4 * fabs(want);
}

int opt_scalar_val(const opt *o, int t, double *v)
{
    if (!opt_is_const(o, t) || ft_numel(&o->g->tensors[t].shape) != 1 || !ft_dtype_is_float(o->g->tensors[t].dtype))
        return 0;
    *v = ft_load_f64(o->g->tensors[t].value, o->g->tensors[t].dtype, 0);
    return 1;
}

int opt_other(const opt *o, int k, int t)
{
    const ft_node *n = &o->g->nodes[k];
    if (n->in[0] == t && n->in[1] != t)
        return n->in[1];
    if (n->in[1] == t && n->in[0] != t)
        return n->in[0];
    return -1;
}

int opt_same_as_input(const opt *o, int x, int out, ft_op op)
{
    const ft_tensor *a = &o->g->tensors[x], *b = &o->g->tensors[out];
    return a->dtype == b->dtype && ft_shape_eq(&a->shape, &b->shape) && ft_dtype_in(a->dtype, ft_op_get(op)->dtypes) &&
           !((a->flags | b->flags) & FT_TF_DYNAMIC);
}

void opt_kill(opt *o, int k)
{
    ft_node *n = &o->g->nodes[k];
    o->dead[k] = 1;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0)
            o->g->tensors[n->in[i]].n_readers--;
    if (ft_node_guard(n) >= 0)
        o->g->tensors[ft_node_guard(n)].n_readers--;
    for (int i = 0; i < n->n_out; i++)
        o->g->tensors[n->out[i]].producer = -1;
}

static void free_attrs(ft_node *n)
{
    const ft_op_info *oi = ft_op_get(n->op);
    for (int i = 0; n->attrs && i < oi->n_attrs; i++) {
        free(n->attrs[i].s);
        free(n->attrs[i].ints);
        free(n->attrs[i].floats);
    }
    free(n->attrs);
    n->attrs = NULL;
}

ft_status opt_rewrite(opt *o, int k, ft_op op, const int *ins, int n_in)
{
    ft_node *n = &o->g->nodes[k];
    const ft_op_info *oi = ft_op_get(op);
    int *in = ft_malloc(sizeof(int) * (size_t)n_in);
    ft_attr_val *av = ft_calloc((size_t)(oi->n_attrs ? oi->n_attrs : 1), sizeof *av);
    if (!in || !av) {
        free(in);
        free(av);
        return opt_oom(o);
    }
    for (int i = 0; i < oi->n_attrs; i++) {
        const ft_attr_def *d = &oi->attrs[i];
        if (!d->has_default)
            continue;
        av[i].present = 1;
        av[i].i = d->i;
        av[i].f = d->f;
        if (d->type == FT_ATTR_STRING && !(av[i].s = ft_strdup(d->s))) {
            for (int j = 0; j < i; j++)
                free(av[j].s);
            free(in);
            free(av);
            return opt_oom(o);
        }
    }
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0)
            o->g->tensors[n->in[i]].n_readers--;
    for (int i = 0; i < n_in; i++)
        o->g->tensors[(in[i] = ins[i])].n_readers++;
    free(n->in);
    free_attrs(n);
    n->in = in;
    n->n_in = n_in;
    n->op = op;
    n->attrs = av;
    return FT_OK;
}

int opt_next_live(const opt *o, int k, ft_op op)
{
    while (k < o->g->n_nodes && (o->dead[k] || o->g->nodes[k].op != op))
        k++;
    return k;
}

ft_attr_val *opt_attr(ft_node *n, const char *name)
{
    ft_attr_val *v = &n->attrs[ft_op_attr_index(n->op, name)];
    v->given = v->present = 1;
    return v;
}

/* --- transpose: of a constant -> that constant transposed (a new value; the
 * original stays while something else reads it); of a 2-D operand of gemm ->
 * the gemm's trans_a / trans_b flipped. ------------------------------------ */

/* The permutation of transpose node n over `rank` dims (default: reversed). */
static void transpose_perm(const ft_node *n, int rank, int *perm)
{
    const ft_attr_val *a = ft_attr(n, "perm");
    for (int i = 0; i < rank; i++)
        perm[i] = a->present && a->n == rank ? (int)(a->ints[i] < 0 ? a->ints[i] + rank : a->ints[i]) : rank - 1 - i;
}

static ft_status fold_const_transpose(opt *o, int k)
{
    ft_graph *g = o->g;
    const ft_tensor *src = &g->tensors[g->nodes[k].in[0]];
    ft_tensor *dst = &g->tensors[g->nodes[k].out[0]];
    int rank = src->shape.rank, perm[FT_MAX_RANK];
    transpose_perm(&g->nodes[k], rank, perm);
    size_t es = ft_dtype_size(src->dtype), bytes = ft_tensor_bytes(dst);
    uint64_t n = ft_numel(&dst->shape), stride[FT_MAX_RANK], idx[FT_MAX_RANK] = {0}, off = 0;
    for (int d = rank - 1; d >= 0; d--)
        stride[d] = d == rank - 1 ? 1 : stride[d + 1] * (uint64_t)src->shape.dims[d + 1];
    unsigned char *buf = ft_malloc(bytes ? bytes : 1);
    if (!buf)
        return opt_oom(o);
    const unsigned char *in = src->value;
    /* walk the output in order; off is the matching input element */
    for (uint64_t i = 0; i < n; i++) {
        memcpy(buf + i * es, in + off * es, es);
        for (int d = rank - 1; d >= 0; d--) {
            off += stride[perm[d]];
            if (++idx[d] < (uint64_t)dst->shape.dims[d])
                break;
            off -= stride[perm[d]] * idx[d];
            idx[d] = 0;
        }
    }
    opt_kill(o, k);
    ft_tensor_set_value(dst, buf, bytes);
    dst->flags |= FT_TF_VALUE | FT_TF_DECLARED;
    dst->source = "data";
    return FT_OK;
}

static ft_status pass_transpose(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int k = 0; (k = opt_next_live(o, k, FT_OP_TRANSPOSE)) < g->n_nodes; k++) {
        int x = g->nodes[k].in[0], y = g->nodes[k].out[0], perm[FT_MAX_RANK], gm;
        const ft_tensor *xt = &g->tensors[x];
        if (opt_is_const(o, x) && !(g->tensors[y].flags & FT_TF_OUTPUT) && xt->value_bytes == ft_tensor_bytes(xt)) {
            ft_status st = fold_const_transpose(o, k);
            if (st)
                return st;
            ++*count;
            continue;
        }
        if (xt->shape.rank != 2 || (gm = opt_reader(o, y, FT_OP_GEMM)) < 0)
            continue;
        transpose_perm(&g->nodes[k], 2, perm);
        ft_node *n = &g->nodes[gm];
        int slot = n->in[0] == y ? 0 : n->in[1] == y ? 1 : -1;
        if (perm[0] != 1 || slot < 0)
            continue;
        ft_attr_val *t = opt_attr(n, slot == 0 ? "trans_a" : "trans_b");
        t->i = !t->i;
        n->in[slot] = x;
        g->tensors[x].n_readers++;
        g->tensors[y].n_readers--;
        opt_kill(o, k);
        ++*count;
    }
    return FT_OK;
}

/* --- conv activation: relu, clip, silu or hard_swish reading a conv's
 * private output -> the conv with that "activation" (the conv's kernels apply
 * it in their output pass). The activation node becomes the conv (its output
 * stays; its name is the conv's + "+relu", see absorb); the conv node goes. -- */
static const char *conv_act_name(ft_op op)
{
    return op == FT_OP_RELU ? "relu" : op == FT_OP_CLIP ? "clip" : op == FT_OP_SILU ? "silu"
         : op == FT_OP_HARD_SWISH ? "hard_swish" : NULL;
}

/* The fusions below: the later node k takes producer node p's op, attributes
 * and inputs (plus `extra`, -1 for none, for which p's input array has room),
 * keeping its own output; k's own input slots go and p's node goes. The node
 * is named after p, the anchor, with k's op after a '+' ("/conv1/Conv+relu",
 * "fc1+add+relu"), so that profiles and messages name the node whose work it
 * does and say what was fused into it. -1 when out of memory. */
static int absorb(opt *o, int k, int p, int extra)
{
    ft_graph *g = o->g;
    ft_node *a = &g->nodes[k], *mm = &g->nodes[p];
    const char *op = ft_op_name(a->op);
    size_t len = strlen(mm->name) + strlen(op) + 2;
    char *name = ft_malloc(len);
    if (!name)
        return -1;
    snprintf(name, len, "%s+%s", mm->name, op);
    free(a->name);
    a->name = name;
    opt_kill(o, p);
    for (int i = 0; i < a->n_in; i++)
        if (a->in[i] >= 0)
            g->tensors[a->in[i]].n_readers--;
    for (int i = 0; i < mm->n_in; i++)
        if (mm->in[i] >= 0)
            g->tensors[mm->in[i]].n_readers++;
    if (extra >= 0)
        g->tensors[extra].n_readers++;
    free(a->in);
    free_attrs(a);
    a->in = mm->in, a->n_in = mm->n_in, a->attrs = mm->attrs, a->op = mm->op;
    mm->in = NULL, mm->n_in = 0, mm->attrs = NULL;
    if (extra >= 0)
        a->in[a->n_in++] = extra;
    return 0;
}

/* --- conv_taps: the taps of a conv's kernel that read only padding, at every
 * output position, are dropped: along each spatial dim the taps t whose input
 * o*s - pb + t*d lies outside [0, in) for every output o (the outer taps of
 * DeepLab's atrous convs with a dilation as large as the feature map). The
 * weight, a constant only this conv reads, keeps taps [t0, t1]; the pads
 * become pb - t0*d and what gives the same output size. Exact: a dropped tap
 * added only zeros. Only with explicit pads (auto_pad NOTSET) and a shape
 * known at load. Runs first, while every conv still has its own parameters
 * (a fusion leaves the fused node's to the validation after the passes). --- */

/* Whether tap t of dim j reads the input at some output position. */
static int tap_live(const ft_conv_params *p, int j, int64_t in, int64_t out, int64_t t)
{
    for (int64_t o = 0; o < out; o++) {
        int64_t i = o * p->s[j] - p->pb[j] + t * p->d[j];
        if (i >= 0 && i < in)
            return 1;
    }
    return 0;
}

/* Dim j's taps that read the input somewhere: [*t0, *t1]; 0 when they are
 * not one run of taps (a dead tap between live ones) or the new begin pad
 * would be negative. */
static int live_taps(const ft_conv_params *p, int j, int64_t in, int64_t out, int64_t k, int64_t *t0, int64_t *t1)
{
    int64_t live = 0;
    *t0 = *t1 = -1;
    for (int64_t t = 0; t < k; t++)
        if (tap_live(p, j, in, out, t)) {
            *t0 = *t0 < 0 ? t : *t0;
            *t1 = t;
            live++;
        }
    return live > 0 && live == *t1 - *t0 + 1 && p->pb[j] - *t0 * p->d[j] >= 0;
}

static ft_status pass_conv_taps(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int c = 0; c < g->n_nodes; c++) {
        ft_node *n = &g->nodes[c];
        if (o->dead[c] || n->op != FT_OP_CONV || n->params.conv.auto_pad != FT_AUTO_PAD_NOTSET || n->n_in < 2)
            continue;
        int x = n->in[0], w = n->in[1], y = n->out[0];
        if (x < 0 || w < 0 || !opt_is_const(o, w) || g->tensors[w].n_readers != 1 ||
            ((g->tensors[x].flags | g->tensors[y].flags) & FT_TF_DYNAMIC))
            continue;
        const ft_conv_params *p = &n->params.conv;
        ft_tensor *wt = &g->tensors[w];
        const int r = p->r;
        int64_t t0[FT_SP_MAX], t1[FT_SP_MAX], pads[2 * FT_SP_MAX];
        int ok = r >= 1 && wt->shape.rank == r + 2, smaller = 0;
        for (int j = 0; j < r && ok; j++) {
            int64_t in = g->tensors[x].shape.dims[2 + j], out = g->tensors[y].shape.dims[2 + j],
                    k = wt->shape.dims[2 + j];
            ok = live_taps(p, j, in, out, k, &t0[j], &t1[j]);
            if (!ok)
                break;
            int64_t kn = t1[j] - t0[j] + 1, ek = (kn - 1) * p->d[j] + 1;
            pads[j] = p->pb[j] - t0[j] * p->d[j];
            pads[r + j] = (out - 1) * p->s[j] + ek - in - pads[j];
            ok = pads[r + j] >= 0 && (in + pads[j] + pads[r + j] - ek) / p->s[j] + 1 == out;
            smaller |= kn < k;
        }
        if (!ok || !smaller)
            continue;
        /* the kept taps of each [M, C/group] kernel, row-major */
        ft_shape ns = wt->shape;
        for (int j = 0; j < r; j++)
            ns.dims[2 + j] = t1[j] - t0[j] + 1;
        const size_t es = ft_dtype_size(wt->dtype);
        uint64_t nk = ft_numel(&ns), per_new = 1, per_old = 1;
        for (int j = 0; j < r; j++)
            per_new *= (uint64_t)ns.dims[2 + j], per_old *= (uint64_t)wt->shape.dims[2 + j];
        char *nw = ft_malloc((size_t)nk * es + 1);
        int64_t *pv = ft_malloc(sizeof(int64_t) * 2 * (size_t)r);
        if (!nw || !pv) {
            free(nw);
            free(pv);
            return opt_oom(o);
        }
        for (uint64_t e = 0; e < nk; e++) {
            /* element e: kernel e / per_new, tap rem; its taps shifted by t0 in the old kernel */
            uint64_t kern = e / per_new, rem = e % per_new, src = 0, mul = 1;
            for (int j = r - 1; j >= 0; j--) {
                int64_t dn = ns.dims[2 + j];
                src += (uint64_t)((int64_t)(rem % (uint64_t)dn) + t0[j]) * mul;
                rem /= (uint64_t)dn;
                mul *= (uint64_t)wt->shape.dims[2 + j];
            }
            memcpy(nw + e * es, (const char *)wt->value + (kern * per_old + src) * es, es);
        }
        ft_tensor_set_value(wt, nw, (size_t)nk * es);
        wt->shape = ns;
        memcpy(pv, pads, sizeof(int64_t) * 2 * (size_t)r);
        ft_attr_val *pa = opt_attr(n, "pads");
        free(pa->ints);
        pa->ints = pv;
        pa->n = 2 * r;
        ++*count;
    }
    return FT_OK;
}

static ft_status pass_conv_act(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int k = 0; k < g->n_nodes; k++) {
        const char *name = o->dead[k] ? NULL : conv_act_name(g->nodes[k].op);
        int x = name ? g->nodes[k].in[0] : -1, c = opt_prod(o, x, FT_OP_CONV);
        const char *has = c >= 0 ? ft_attr(&g->nodes[c], "activation")->s : NULL;
        if (c < 0 || !opt_private(o, x) || (has && strcmp(has, "none") != 0) ||
            !opt_same_as_input(o, x, g->nodes[k].out[0], FT_OP_CONV))
            continue;
        ft_node *a = &g->nodes[k];
        /* clip's bounds (an infinite one is left absent: the default) */
        double lo = -INFINITY, hi = INFINITY;
        if (a->op == FT_OP_CLIP) {
            lo = ft_attr(a, "min")->f;
            hi = ft_attr(a, "max")->f;
        }
        if (absorb(o, k, c, -1))
            return opt_oom(o);
        ft_attr_val *av = opt_attr(a, "activation");
        free(av->s);
        if (!(av->s = ft_strdup(name)))
            return opt_oom(o);
        if (lo != -INFINITY)
            opt_attr(a, "activation_min")->f = lo;
        if (hi != INFINITY)
            opt_attr(a, "activation_max")->f = hi;
        ++*count;
    }
    return FT_OK;
}

/* --- bn_fold: batch_norm(conv(x, w, b), scale, beta, mean, var) with constant
 * parameters -> conv(x, w', b'), w'[m,...] = w[m,...] * s[m] and
 * b'[m] = (b[m] - mean[m]) * s[m] + beta[m] with s = scale / sqrt(var + eps),
 * computed in double and rounded once to the dtype (f32, f64). The conv's
 * output must be private, its activation none and it have no sum; w and b
 * (when given) constants that only this conv reads, as they are rewritten in
 * place; without b, beta's tensor becomes the bias when only the batch_norm
 * reads it. The batch_norm node becomes the conv (its output stays, its name
 * is the conv's + "+batch_norm").
 * Runs first, so that conv_add and conv_act then find the conv. ------------- */
static int bn_param(const opt *o, int t, ft_dtype dt, int64_t m)
{
    return opt_is_const(o, t) && o->g->tensors[t].dtype == dt && ft_numel(&o->g->tensors[t].shape) == (uint64_t)m;
}

static ft_status pass_bn_fold(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int k = 0; (k = opt_next_live(o, k, FT_OP_BATCH_NORM)) < g->n_nodes; k++) {
        ft_node *bn = &g->nodes[k];
        int x = bn->in[0], c = opt_prod(o, x, FT_OP_CONV);
        if (c < 0 || ft_attr(bn, "training_mode")->i != 0 || !opt_private(o, x) ||
            strcmp(ft_attr(&g->nodes[c], "activation")->s, "none") != 0 ||
            (g->nodes[c].n_in > 3 && g->nodes[c].in[3] >= 0) || !opt_same_as_input(o, x, bn->out[0], FT_OP_CONV))
            continue;
        ft_node *cv = &g->nodes[c];
        const ft_dtype dt = g->tensors[x].dtype;
        int w = cv->in[1], b = cv->n_in > 2 ? cv->in[2] : -1, beta = bn->in[2];
        const ft_tensor *wt = &g->tensors[w];
        int64_t M = wt->shape.dims[0];
        if ((dt != FT_F32 && dt != FT_F64) || !opt_is_const(o, w) || wt->dtype != dt || wt->n_readers != 1 ||
            (b >= 0 ? !bn_param(o, b, dt, M) || g->tensors[b].n_readers != 1 : g->tensors[beta].n_readers != 1))
            continue;
        int ok = 1;
        for (int i = 1; i < 5; i++)
            ok &= bn_param(o, bn->in[i], dt, M);
        if (!ok)
            continue;
        const double eps = ft_attr(bn, "epsilon")->f;
        const ft_tensor *sc = &g->tensors[bn->in[1]], *be = &g->tensors[beta], *mu = &g->tensors[bn->in[3]],
                        *va = &g->tensors[bn->in[4]];
        const size_t es = ft_dtype_size(dt), per = (size_t)(ft_numel(&wt->shape) / (uint64_t)(M ? M : 1));
        void *nw = ft_malloc(ft_tensor_bytes(wt) ? ft_tensor_bytes(wt) : 1), *nb = ft_malloc((size_t)M * es + 1);
        if (!nw || !nb) {
            free(nw);
            free(nb);
            return opt_oom(o);
        }
        for (int64_t m = 0; m < M; m++) {
            double f = ft_load_f64(sc->value, dt, (size_t)m) / sqrt(ft_load_f64(va->value, dt, (size_t)m) + eps);
            for (size_t i = 0; i < per; i++)
                ft_store_f64(nw, dt, (size_t)m * per + i, ft_load_f64(wt->value, dt, (size_t)m * per + i) * f);
            double b0 = b >= 0 ? ft_load_f64(g->tensors[b].value, dt, (size_t)m) : 0;
            ft_store_f64(nb, dt, (size_t)m, (b0 - ft_load_f64(mu->value, dt, (size_t)m)) * f + ft_load_f64(be->value, dt, (size_t)m));
        }
        ft_tensor_set_value(&g->tensors[w], nw, ft_tensor_bytes(wt));
        if (b < 0) { /* beta's tensor becomes the bias */
            int *in = realloc(cv->in, sizeof(int) * 3);
            if (!in) {
                free(nb);
                return opt_oom(o);
            }
            for (int i = cv->n_in; i < 3; i++)
                in[i] = -1;
            cv->in = in, cv->n_in = 3;
            cv->in[2] = b = beta;
            g->tensors[beta].n_readers++;
        }
        ft_tensor_set_value(&g->tensors[b], nb, (size_t)M * es);
        if (absorb(o, k, c, -1))
            return opt_oom(o);
        ++*count;
    }
    return FT_OK;
}

/* --- conv_add: add(conv(x, w, b), r) -> conv(x, w, b, r) ------------------------
 * The residual add of ResNet-style blocks goes into the conv as its input 3
 * (summed before the activation, so a relu after the add is then fused by
 * conv_act). The conv's output must have no other reader, its activation be
 * none and it have no sum yet; r must have the add's dtype and shape (no
 * broadcasting) and be another tensor. The add node becomes the conv, so r
 * and the conv's inputs are all computed before it runs. */
static ft_status pass_conv_add(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int k = 0; k < g->n_nodes; k++) {
        ft_node *a = &g->nodes[k];
        if (o->dead[k] || a->op != FT_OP_ADD || a->n_in != 2)
            continue;
        int c = -1, x = -1, r = -1;
        for (int side = 0; side < 2 && c < 0; side++) {
            x = a->in[side], r = a->in[1 - side];
            c = opt_prod(o, x, FT_OP_CONV);
            const ft_node *cv = c >= 0 ? &g->nodes[c] : NULL;
            const char *act = cv ? ft_attr(cv, "activation")->s : NULL;
            if (cv && (!opt_private(o, x) || x == r || r < 0 || (act && strcmp(act, "none") != 0) ||
                       (cv->n_in > 3 && cv->in[3] >= 0) || !opt_same_as_input(o, x, a->out[0], FT_OP_CONV) ||
                       !opt_same_as_input(o, r, a->out[0], FT_OP_CONV)))
                c = -1;
        }
        if (c < 0)
            continue;
        /* the conv's inputs padded to 3 (an absent bias is -1), then r as input 3 */
        ft_node *cv = &g->nodes[c];
        int *in = realloc(cv->in, sizeof(int) * 4);
        if (!in)
            return opt_oom(o);
        for (int i = cv->n_in; i < 3; i++)
            in[i] = -1;
        cv->in = in, cv->n_in = 3;
        if (absorb(o, k, c, r))
            return opt_oom(o);
        ++*count;
    }
    return FT_OK;
}

/* --- matmul epilogue: add of a constant bias [N] to a matmul's private
 * output -> the matmul with that bias (input 2); then relu or gelu reading a
 * matmul's or gemm's private output -> the product with that "activation"
 * (params.h ft_mm_act; the kernels apply both to the product's output as it
 * is made). As conv_act, the later node becomes the product (its output
 * stays, its name is the product's + "+add" or "+relu") and the product's
 * node goes. ------------------------------------------------------------------ */

static ft_status pass_matmul_epi(opt *o, int *count)
{
    ft_graph *g = o->g;
    /* bias first, so that the activation after it finds the matmul */
    for (int k = 0; (k = opt_next_live(o, k, FT_OP_ADD)) < g->n_nodes; k++)
        for (int side = 0; side < 2; side++) {
            int x = g->nodes[k].in[side], b = g->nodes[k].in[1 - side], m = opt_prod(o, x, FT_OP_MATMUL);
            if (m < 0 || g->nodes[m].n_in != 2 || !opt_private(o, x) || !opt_is_const(o, b) ||
                strcmp(ft_attr(&g->nodes[m], "activation")->s, "none") != 0 ||
                !opt_same_as_input(o, x, g->nodes[k].out[0], FT_OP_MATMUL))
                continue;
            const ft_tensor *xt = &g->tensors[x], *bt = &g->tensors[b], *wt = &g->tensors[g->nodes[m].in[1]];
            if (bt->dtype != xt->dtype || bt->shape.rank != 1 || wt->shape.rank < 2 ||
                bt->shape.dims[0] != xt->shape.dims[xt->shape.rank - 1])
                continue;
            int *in = realloc(g->nodes[m].in, sizeof(int) * 3);
            if (!in)
                return opt_oom(o);
            g->nodes[m].in = in;
            if (absorb(o, k, m, b))
                return opt_oom(o);
            ++*count;
            break;
        }
    for (int k = 0; k < g->n_nodes; k++) {
        ft_op op = g->nodes[k].op;
        if (o->dead[k] || (op != FT_OP_RELU && op != FT_OP_GELU))
            continue;
        int x = g->nodes[k].in[0], m = opt_prod(o, x, FT_OP_MATMUL);
        if (m < 0)
            m = opt_prod(o, x, FT_OP_GEMM);
        if (m < 0 || !opt_private(o, x) || strcmp(ft_attr(&g->nodes[m], "activation")->s, "none") != 0 ||
            !opt_same_as_input(o, x, g->nodes[k].out[0], g->nodes[m].op))
            continue;
        const char *approx = op == FT_OP_GELU ? ft_attr(&g->nodes[k], "approximate")->s : NULL;
        const char *name = op == FT_OP_RELU ? "relu" : approx && strcmp(approx, "tanh") == 0 ? "gelu_tanh" : "gelu";
        if (absorb(o, k, m, -1))
            return opt_oom(o);
        ft_attr_val *av = opt_attr(&g->nodes[k], "activation");
        free(av->s);
        if (!(av->s = ft_strdup(name)))
            return opt_oom(o);
        ++*count;
    }
    return FT_OK;
}

/* --- dead nodes, latest first so chains go in one sweep -------------------- */
static void pass_dead(opt *o, int *count)
{
    ft_graph *g = o->g;
    for (int j = g->n_nodes - 1; j >= 0; j--) {
        int k = g->order[j], used = 0;
        const ft_node *n = &g->nodes[k];
        if (o->dead[k])
            continue;
        for (int i = 0; i < n->n_out && !used; i++)
            used = g->tensors[n->out[i]].n_readers > 0 || (g->tensors[n->out[i]].flags & FT_TF_OUTPUT);
        if (!used) {
            opt_kill(o, k);
            ++*count;
        }
    }
}

/* Drop dead nodes and the tensors nothing reads, produces or lists. */
static ft_status compact(opt *o)
{
    ft_graph *g = o->g;
    int *tmap = ft_malloc(sizeof(int) * (size_t)(g->n_tensors ? g->n_tensors : 1));
    struct ft_strmap *names = ft_strmap_new();
    if (!tmap || !names) {
        free(tmap);
        ft_strmap_free(names);
        return opt_oom(o);
    }
    int nt = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        ft_tensor *t = &g->tensors[i];
        if (t->producer < 0 && t->n_readers == 0 && !(t->flags & (FT_TF_INPUT | FT_TF_OUTPUT))) {
            tmap[i] = -1;
            free(t->name);
            if (!t->borrowed)
                free(t->value);
            continue;
        }
        tmap[i] = nt;
        g->tensors[nt++] = *t;
    }
    g->n_tensors = nt;
    for (int i = 0; i < nt; i++)
        if (ft_strmap_put(names, g->tensors[i].name, i)) {
            free(tmap);
            ft_strmap_free(names);
            return opt_oom(o);
        }
    ft_strmap_free(g->tmap);
    g->tmap = names;
    int nn = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        ft_node *n = &g->nodes[k];
        if (o->dead[k]) {
            free(n->name);
            free(n->in);
            free(n->out);
            free_attrs(n);
            continue;
        }
        for (int i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                n->in[i] = tmap[n->in[i]];
        if (n->guard)
            n->guard = tmap[n->guard - 1] + 1;
        for (int i = 0; i < n->n_out; i++) {
            n->out[i] = tmap[n->out[i]];
            g->tensors[n->out[i]].producer = nn;
        }
        g->nodes[nn++] = *n;
    }
    g->n_nodes = nn;
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = tmap[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = tmap[g->outputs[i]];
    free(tmap);
    free(g->order);
    g->order = NULL;
    return FT_OK;
}

/* softmax's pass counts log_softmax's rewrites too (one pattern, two ends) */
static ft_status pass_softmax(opt *o, int *count) { return opt_softmax(o, &count[0], &count[1]); }

static ft_status pass_dead_st(opt *o, int *count)
{
    pass_dead(o, count);
    return FT_OK;
}

/* Each row of FT_OPT_PASSES (optimize.h), in its order: the function that
 * runs it, given its counter (NULL: counted by the pass before it). */
static const struct {
    const char *name;
    int level;
    ft_status (*fn)(opt *o, int *count);
} passes[FT_OPT_N_PASSES] = {
    [FT_OPT_conv_taps] = {"conv_taps", 2, pass_conv_taps},
    [FT_OPT_bn_fold] = {"bn_fold", 2, pass_bn_fold},
    [FT_OPT_silu] = {"silu", 2, opt_silu},
    [FT_OPT_hard_swish] = {"hard_swish", 2, opt_hard_swish},
    [FT_OPT_gelu] = {"gelu", 2, opt_gelu},
    [FT_OPT_layer_norm] = {"layer_norm", 2, opt_layer_norm},
    [FT_OPT_rms_norm] = {"rms_norm", 2, opt_rms_norm},
    [FT_OPT_softmax] = {"softmax", 2, pass_softmax},
    [FT_OPT_log_softmax] = {"log_softmax", 2, NULL},
    [FT_OPT_attention] = {"attention", 2, opt_attention},
    [FT_OPT_transpose] = {"transpose", 2, pass_transpose},
    [FT_OPT_conv_add] = {"conv_add", 2, pass_conv_add},
    [FT_OPT_conv_act] = {"conv_act", 2, pass_conv_act},
    [FT_OPT_qdq_conv] = {"qdq_conv", 2, opt_qdq_conv},
    [FT_OPT_matmul_epi] = {"matmul_epi", 2, pass_matmul_epi},
    [FT_OPT_dead] = {"dead", 1, pass_dead_st},
};

const char *ft_opt_pass_name(ft_opt_pass p) { return passes[p].name; }
int ft_opt_pass_level(ft_opt_pass p) { return passes[p].level; }

ft_status ft_graph_optimize(ft_graph *g, int level, ft_opt_stats *stats, ft_error *err)
{
    ft_opt_stats s = {.level = level};
    opt o = {g, ft_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), 1), err, ft_graph_guarded(g)};
    ft_status st = o.dead ? FT_OK : opt_oom(&o);
    for (int i = 0; i < FT_OPT_N_PASSES && !st; i++)
        if (passes[i].fn && level >= passes[i].level)
            st = passes[i].fn(&o, &s.count[i]);
    for (int i = 0; i < FT_OPT_N_PASSES; i++)
        s.rewritten += s.count[i];
    if (!st && s.rewritten)
        st = compact(&o);
    free(o.dead);
    if (!st && s.rewritten && (st = ft_graph_validate(g, err)))
        ft_err_prefix(err, "after the optimizer (-O%d)", level);
    /* "optimizer (-O2): bn_fold 0, silu 1, ..., dead 0": every pass the level runs */
    char line[512];
    int len = snprintf(line, sizeof line, "optimizer (-O%d):%s", level, level == 0 ? " off" : "");
    for (int i = 0, first = 1; i < FT_OPT_N_PASSES && len < (int)sizeof line; i++)
        if (level > 0 && level >= passes[i].level) {
            len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %d", first ? "" : ",", passes[i].name, s.count[i]);
            first = 0;
        }
    free(g->opt_note);
    if (!st && !(g->opt_note = ft_strdup(line)))
        st = ft_err(err, FT_ERUNTIME, "out of memory");
    if (stats)
        *stats = s;
    return st;
}
