/* Shape and dtype inference of the recurrent layers lstm, gru and rnn, and the
 * parsing of their attributes into ft_rnn_params (params.h), once, for the
 * kernels of both backends (cpu/rnn.c, cuda/rnn.cu). The semantics are
 * ONNX's LSTM, GRU and RNN (opset 14, with layout); man/ftrun-graph.5 lists
 * the inputs, outputs and attributes. */
#include "infer_common.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* Activation names: ftrun's ("leaky_relu") and ONNX's ("LeakyRelu") both
 * match once case and '_' are ignored. uses: 1 alpha, 2 alpha and beta. */
static const struct {
    const char *key; /* lower case, no '_' */
    int kind, uses;
    double alpha, beta; /* ONNX defaults */
} acts[] = {
    {"sigmoid", FT_RNN_SIGMOID, 0, 0, 0},
    {"tanh", FT_RNN_TANH, 0, 0, 0},
    {"relu", FT_RNN_RELU, 0, 0, 0},
    {"affine", FT_RNN_AFFINE, 2, 1.0, 0.0},
    {"leakyrelu", FT_RNN_LEAKY_RELU, 1, 0.01, 0},
    {"thresholdedrelu", FT_RNN_THRESHOLDED_RELU, 1, 1.0, 0},
    {"scaledtanh", FT_RNN_SCALED_TANH, 2, 1.0, 1.0},
    {"hardsigmoid", FT_RNN_HARD_SIGMOID, 2, 0.2, 0.5},
    {"elu", FT_RNN_ELU, 1, 1.0, 0},
    {"softsign", FT_RNN_SOFTSIGN, 0, 0, 0},
    {"softplus", FT_RNN_SOFTPLUS, 0, 0, 0},
};

/* Index into acts of the name in [s, s+len), or -1. */
static int act_find(const char *s, size_t len)
{
    char key[40];
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '_')
            continue;
        if (k + 1 >= sizeof key)
            return -1;
        key[k++] = (char)tolower((unsigned char)s[i]);
    }
    key[k] = 0;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (!strcmp(acts[i].key, key))
            return (int)i;
    return -1;
}

/* activations (comma-separated), activation_alpha, activation_beta -> p->act,
 * alpha, beta. nf functions per direction; the list holds nf (used for every
 * direction) or nf * ndir names. alpha and beta values are taken in order by
 * the functions that use them, as ONNX Runtime does; a function left without
 * one gets its ONNX default. */
static ft_status parse_acts(ft_infer_ctx *c, ft_rnn_params *p, int nf)
{
    /* ONNX's defaults, as indices into acts: rnn tanh; gru sigmoid, tanh; lstm sigmoid, tanh, tanh */
    static const int defaults[3][3] = {{1}, {0, 1}, {0, 1, 1}};
    int idx[6], n = 0;
    const ft_attr_val *av = ft_attr(c->node, "activations");
    if (av->present && av->s[0]) {
        const char *s = av->s;
        for (;;) {
            while (*s == ' ')
                s++;
            size_t len = strcspn(s, ",");
            size_t tl = len;
            while (tl > 0 && s[tl - 1] == ' ')
                tl--;
            int a = act_find(s, tl);
            if (a < 0)
                return ft_infer_fail(c, "attribute 'activations' \"%s\": unknown function \"%.*s\" (known: sigmoid, "
                                     "tanh, relu, affine, leaky_relu, thresholded_relu, scaled_tanh, hard_sigmoid, elu, "
                                     "softsign, softplus)", av->s, (int)tl, s);
            if (n == 6)
                return ft_infer_fail(c, "attribute 'activations' \"%s\" names more than %d functions", av->s, nf * p->ndir);
            idx[n++] = a;
            if (!s[len])
                break;
            s += len + 1;
        }
        if (n != nf && n != nf * p->ndir)
            return ft_infer_fail(c, "attribute 'activations' \"%s\" names %d functions; %s takes %d per direction "
                                 "(%d for %d direction%s)", av->s, n, ft_op_name(c->node->op), nf, nf * p->ndir,
                                 p->ndir, p->ndir > 1 ? "s" : "");
    } else {
        for (int j = 0; j < nf; j++)
            idx[j] = defaults[nf - 1][j];
        n = nf;
    }
    const ft_attr_val *al = ft_attr(c->node, "activation_alpha"), *be = ft_attr(c->node, "activation_beta");
    int na = al->present ? al->n : 0, nb = be->present ? be->n : 0, ia = 0, ib = 0;
    for (int d = 0; d < p->ndir; d++)
        for (int j = 0; j < nf; j++) {
            int k = n == nf ? j : d * nf + j, a = idx[k];
            p->act[d][j] = acts[a].kind;
            p->alpha[d][j] = acts[a].alpha;
            p->beta[d][j] = acts[a].beta;
            if (n == nf && d > 0) { /* one list for both directions: the same values */
                p->alpha[d][j] = p->alpha[0][j], p->beta[d][j] = p->beta[0][j];
                continue;
            }
            if (acts[a].uses >= 1 && ia < na)
                p->alpha[d][j] = al->floats[ia++];
            if (acts[a].uses >= 2 && ib < nb)
                p->beta[d][j] = be->floats[ib++];
        }
    if (ia < na || ib < nb)
        return ft_infer_fail(c, "attributes 'activation_alpha' (%d values) and 'activation_beta' (%d values) give more "
                             "values than the functions of 'activations' take (%d alpha, %d beta)", na, nb, ia, ib);
    return FT_OK;
}

/* Input i, when given: dtype of X and exactly the shape want. */
static ft_status exact_input(ft_infer_ctx *c, int i, const char *what, const ft_shape *want, const char *meaning)
{
    if (i >= c->n_in || !c->in[i])
        return FT_OK;
    ft_status st = ft_infer_same_dtype(c, i, 0, what);
    if (st)
        return st;
    const ft_shape *s = &c->in[i]->shape;
    int ok = s->rank == want->rank;
    for (int d = 0; ok && d < s->rank; d++)
        ok = s->dims[d] == want->dims[d];
    if (!ok) {
        char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
        return ft_infer_fail(c, "%s '%s' has shape %s; expected %s %s", what, ft_infer_in_name(c, i), ft_shape_str(s, a),
                             ft_shape_str(want, b), meaning);
    }
    return FT_OK;
}

ft_status ft_infer_rnn(ft_infer_ctx *c)
{
    ft_rnn_params *p = &c->params->rnn;
    ft_op op = c->node->op;
    p->gates = op == FT_OP_LSTM ? 4 : op == FT_OP_GRU ? 3 : 1;
    const int nf = op == FT_OP_LSTM ? 3 : op == FT_OP_GRU ? 2 : 1;
    const char *dir = ft_attr(c->node, "direction")->s;
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
        p->ndir = 1, p->reverse = dir[0] == 'r';
    else if (!strcmp(dir, "bidirectional"))
        p->ndir = 2;
    else
        return ft_infer_fail(c, "attribute 'direction' is \"%s\"; expected forward, reverse or bidirectional", dir);
    int64_t layout = ft_attr(c->node, "layout")->i;
    if (layout != 0 && layout != 1)
        return ft_infer_fail(c, "attribute 'layout' is %lld; expected 0 (X [T,B,I]) or 1 (X [B,T,I])", (long long)layout);
    p->layout = (int)layout;
    const ft_attr_val *cl = ft_attr(c->node, "clip");
    if (cl->present && !(cl->f >= 0))
        return ft_infer_fail(c, "attribute 'clip' must be >= 0 (got %g)", cl->f);
    p->has_clip = cl->present && !isinf(cl->f);
    p->clip = cl->f;
    ft_status st;
    if (op == FT_OP_LSTM && (st = ft_infer_flag(c, "input_forget", &p->input_forget)))
        return st;
    if (op == FT_OP_GRU && (st = ft_infer_flag(c, "linear_before_reset", &p->linear_before_reset)))
        return st;
    if ((st = parse_acts(c, p, nf)))
        return st;

    /* X, W, R give T, B, I, H. */
    const ft_shape *x = &c->in[0]->shape, *r = &c->in[2]->shape;
    char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
    if (x->rank != 3)
        return ft_infer_fail(c, "X '%s' has shape %s (rank %d); expected rank 3 %s", ft_infer_in_name(c, 0),
                             ft_shape_str(x, a), x->rank, p->layout ? "[B,T,I] (layout 1)" : "[T,B,I]");
    int64_t T = x->dims[p->layout ? 1 : 0], B = x->dims[p->layout ? 0 : 1], I = x->dims[2], D = p->ndir, G = p->gates;
    if (r->rank != 3)
        return ft_infer_fail(c, "R '%s' has shape %s (rank %d); expected rank 3 [D,%lld*H,H]", ft_infer_in_name(c, 2),
                             ft_shape_str(r, a), r->rank, (long long)G);
    int64_t H = r->dims[2];
    const ft_attr_val *hs = ft_attr(c->node, "hidden_size");
    if (hs->present && hs->i != H)
        return ft_infer_fail(c, "attribute 'hidden_size' is %lld but R '%s' %s has hidden size %lld (dim 2)",
                             (long long)hs->i, ft_infer_in_name(c, 2), ft_shape_str(r, a), (long long)H);
    p->hidden = H;
    ft_shape ws = {.rank = 3, .dims = {D, G * H, I}}, rs = {.rank = 3, .dims = {D, G * H, H}};
    ft_shape bs = {.rank = 2, .dims = {D, 2 * G * H}}, ls = {.rank = 1, .dims = {B}};
    ft_shape st0 = {.rank = 3, .dims = {D, B, H}}, st1 = {.rank = 3, .dims = {B, D, H}};
    ft_shape ps = {.rank = 2, .dims = {D, 3 * H}};
    const ft_shape *ss = p->layout ? &st1 : &st0;
    const char *sm = p->layout ? "[B,D,H] (layout 1)" : "[D,B,H]";
    if ((st = exact_input(c, 1, "W", &ws, "[D,G*H,I] (D directions, G gates, the I of X, the H of R)")) ||
        (st = exact_input(c, 2, "R", &rs, "[D,G*H,H] (D directions, G gates)")) ||
        (st = exact_input(c, 3, "B", &bs, "[D,2*G*H] (input and recurrent biases)")) ||
        (st = exact_input(c, 5, "initial_h", ss, sm)) ||
        (op == FT_OP_LSTM && ((st = exact_input(c, 6, "initial_c", ss, sm)) ||
                              (st = exact_input(c, 7, "P", &ps, "[D,3*H] (peepholes i, o, f)")))))
        return st;
    if (c->n_in > 4 && c->in[4]) {
        const ft_tinfo *sl = c->in[4];
        if (sl->dtype != FT_I32 && sl->dtype != FT_I64)
            return ft_infer_fail(c, "sequence_lens '%s' has dtype %s; expected i32 or i64", ft_infer_in_name(c, 4),
                                 ft_dtype_name(sl->dtype));
        if (sl->shape.rank != 1 || sl->shape.dims[0] != B)
            return ft_infer_fail(c, "sequence_lens '%s' has shape %s; expected %s, one length per batch entry of X "
                                 "'%s' %s", ft_infer_in_name(c, 4), ft_shape_str(&sl->shape, a), ft_shape_str(&ls, b),
                                 ft_infer_in_name(c, 0), ft_shape_str(x, b));
    }
    ft_shape ys = p->layout ? (ft_shape){.rank = 4, .dims = {B, T, D, H}} : (ft_shape){.rank = 4, .dims = {T, D, B, H}};
    ft_dtype dt = c->in[0]->dtype;
    if ((st = ft_infer_set_out(c, 0, dt, &ys)))
        return st;
    for (int o = 1; o < c->n_out; o++)
        if ((st = ft_infer_set_out(c, o, dt, ss)))
            return st;
    return FT_OK;
}

uint64_t ft_flops_rnn(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)out;
    const ft_shape *x = &in[0]->shape, *r = &in[2]->shape;
    if (x->rank != 3 || r->rank != 3)
        return 0;
    uint64_t tb = (uint64_t)x->dims[0] * (uint64_t)x->dims[1], dgh = (uint64_t)r->dims[0] * (uint64_t)r->dims[1];
    (void)n;
    /* the two products per step, plus a few operations per gate value */
    return 2 * tb * dgh * (uint64_t)(x->dims[2] + r->dims[2]) + 8 * tb * dgh;
}
