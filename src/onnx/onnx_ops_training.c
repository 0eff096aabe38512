/* The optimizers of ONNX's ai.onnx.preview.training domain (opset 1):
 * Adagrad, Adam and Momentum, each one update step of its pseudo code in the
 * operator's text, expanded into ftrun's elementwise ops (so they run on
 * every backend). Inputs are R (learning rate), T (update count, i64), then
 * the groups' tensors: all X, then all G, then the state tensors (Adagrad
 * H; Adam V then H; Momentum V). Outputs are all X_new, then the new states
 * in the same order. R and T are scalars computed at run time or given; a
 * "T > 0 ?" of the text is a where over T > 0.
 *
 *   const onx_op_map *m = onx_find_domain_map("ai.onnx.preview.training", "Adam", 1);
 *   if (m) st = m->map(c, n);
 */
#include <stdio.h>
#include <string.h>

#include "onnx_ops.h"

/* A temporary named after the node, the step and the group. */
static int tmp(onx_ctx *c, const onx_node *n, const char *what, int g)
{
    char s[64];
    snprintf(s, sizeof s, "%s_%d", what, g);
    return ox_tmp(c, n, s);
}

/* op(a, b) into out (a new temporary when out < 0); -1 when out of memory. */
static int bin(onx_ctx *c, const onx_node *n, ft_op op, int a, int b, int out, const char *what, int g)
{
    if (a < 0 || b < 0)
        return -1;
    if (out < 0)
        out = tmp(c, n, what, g);
    return out >= 0 && ox_emit2(c, n, op, a, b, out) ? out : -1;
}

static int un(onx_ctx *c, const onx_node *n, ft_op op, int a, const char *what, int g)
{
    int out = a >= 0 ? tmp(c, n, what, g) : -1;
    return out >= 0 && ox_emit1(c, n, op, a, out) ? out : -1;
}

static int k_(onx_ctx *c, const onx_node *n, ft_dtype dt, double v, const char *what)
{
    return ox_scalar(c, n, what, dt, v);
}

/* Input k cast to dt (the input itself when it has that dtype already). */
static int as(onx_ctx *c, const onx_node *n, int k, ft_dtype dt, const char *what)
{
    int x = onx_in(c, n, k);
    if (x < 0 || ox_dtype(c, n, k) == dt)
        return x;
    int out = ox_tmp(c, n, what);
    ft_node *f = out >= 0 ? ox_emit1(c, n, FT_OP_CAST, x, out) : NULL;
    return f && !onx_set_s(c, f, "to", ft_dtype_name(dt)) ? out : -1;
}

/* where(T > 0, a, b) */
static int if_t_positive(onx_ctx *c, const onx_node *n, int t, int a, int b, const char *what)
{
    int zero = k_(c, n, FT_I64, 0, "zero_count"), pos = -1, out = ox_tmp(c, n, what);
    if (a < 0 || b < 0 || zero < 0 || out < 0 || (pos = bin(c, n, FT_OP_GREATER, t, zero, -1, "count_positive", 0)) < 0)
        return -1;
    int in[3] = {pos, a, b};
    return onx_emit(c, n, FT_OP_WHERE, in, 3, &out, 1) ? out : -1;
}

typedef enum { ADAGRAD, ADAM, MOMENTUM } optimizer;

ft_status ox_map_optimizer(onx_ctx *c, const onx_node *n)
{
    const optimizer kind = !strcmp(n->op_type, "Adagrad") ? ADAGRAD : !strcmp(n->op_type, "Adam") ? ADAM : MOMENTUM;
    const int per = kind == ADAM ? 4 : 3; /* tensors per group: X, G and the states */
    if (n->n_in < 2 + per || (n->n_in - 2) % per)
        return onx_error(c, n, FT_EGRAPH, "%d inputs: expected R, T and %d tensors per optimized tensor", n->n_in, per);
    const int groups = (n->n_in - 2) / per;
    if (n->n_out != groups * (per - 1))
        return onx_error(c, n, FT_EGRAPH, "%d outputs for %d optimized tensors: expected %d", n->n_out, groups,
                         groups * (per - 1));
    if (ox_dtype(c, n, 1) != FT_I64)
        return onx_error(c, n, FT_EGRAPH, "input T (the update count) is %s: expected i64",
                         ft_dtype_name(ox_dtype(c, n, 1)));
    const ft_dtype dt = ox_dtype(c, n, 2);
    if (dt != FT_F32 && dt != FT_F64)
        return onx_unsupported(c, n, "tensors of %s (the optimizers take f32 or f64)", ft_dtype_name(dt));
    if (kind == MOMENTUM) {
        const char *mode = onx_attr_s(c, n, "mode", "");
        if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
            return onx_error(c, n, FT_EGRAPH, "attribute mode is '%s': expected 'standard' or 'nesterov'", mode);
    }
    const double nc = onx_attr_f(n, "norm_coefficient", 0.0);
    const double alpha = onx_attr_f(n, "alpha", kind == ADAM ? 0.9 : 0.0), beta = onx_attr_f(n, "beta", kind == ADAM ? 0.999 : 0.0);
    const double eps = onx_attr_f(n, "epsilon", 0.0);
    const int nesterov = kind == MOMENTUM && !strcmp(onx_attr_s(c, n, "mode", ""), "nesterov");
    int r = as(c, n, 0, dt, "r"), t = onx_in(c, n, 1), tf = as(c, n, 1, dt, "count");
    OX_NEED(r >= 0 && tf >= 0);
    /* the step's learning rate, shared by every group */
    int rate = r;
    if (kind == ADAGRAD) { /* r = R / (1 + T * decay_factor) */
        int d = k_(c, n, dt, onx_attr_f(n, "decay_factor", 0.0), "decay_factor"), one = k_(c, n, dt, 1.0, "one");
        int td = bin(c, n, FT_OP_MUL, tf, d, -1, "count_decay", 0), den = bin(c, n, FT_OP_ADD, one, td, -1, "rate_den", 0);
        rate = bin(c, n, FT_OP_DIV, r, den, -1, "rate", 0);
    } else if (kind == ADAM) { /* T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R */
        int one = k_(c, n, dt, 1.0, "one"), ka = k_(c, n, dt, alpha, "alpha"), kb = k_(c, n, dt, beta, "beta");
        int at = bin(c, n, FT_OP_POW, ka, tf, -1, "alpha_t", 0), bt = bin(c, n, FT_OP_POW, kb, tf, -1, "beta_t", 0);
        int ca = bin(c, n, FT_OP_SUB, one, at, -1, "one_alpha_t", 0), cb = bin(c, n, FT_OP_SUB, one, bt, -1, "one_beta_t", 0);
        int sb = un(c, n, FT_OP_SQRT, cb, "sqrt_one_beta_t", 0), rs = bin(c, n, FT_OP_MUL, r, sb, -1, "rate_num", 0);
        int adj = bin(c, n, FT_OP_DIV, rs, ca, -1, "rate_adjusted", 0);
        rate = adj >= 0 ? if_t_positive(c, n, t, adj, r, "rate") : -1;
    }
    OX_NEED(rate >= 0);
    int beta_adj = -1; /* Momentum: T > 0 ? beta : 1 */
    if (kind == MOMENTUM) {
        int kb = k_(c, n, dt, beta, "beta"), one = k_(c, n, dt, 1.0, "one");
        OX_NEED(kb >= 0 && one >= 0 && (beta_adj = if_t_positive(c, n, t, kb, one, "beta_adjusted")) >= 0);
    }
    /* the constants every group reads */
    const int knc = k_(c, n, dt, nc, "norm_coefficient"), ke = k_(c, n, dt, eps, "epsilon");
    const int ka = k_(c, n, dt, alpha, "alpha_k"), ka1 = k_(c, n, dt, 1.0 - alpha, "one_alpha");
    const int kb = k_(c, n, dt, beta, "beta_k"), kb1 = k_(c, n, dt, 1.0 - beta, "one_beta");
    const int kp = k_(c, n, dt, 1.0 - onx_attr_f(n, "norm_coefficient_post", 0.0), "one_norm_post");
    OX_NEED(knc >= 0 && ke >= 0 && ka >= 0 && ka1 >= 0 && kb >= 0 && kb1 >= 0 && kp >= 0);
    for (int k = 2; k < n->n_in; k++)
        if (ox_dtype(c, n, k) != dt)
            return onx_error(c, n, FT_EGRAPH, "input %d is %s where input 2 is %s: the optimized tensors, gradients and "
                             "states have one dtype", k, ft_dtype_name(ox_dtype(c, n, k)), ft_dtype_name(dt));
    for (int g = 0; g < groups; g++) {
        const int x = onx_in(c, n, 2 + g), grad = onx_in(c, n, 2 + groups + g);
        const int s1 = onx_in(c, n, 2 + 2 * groups + g), s2 = kind == ADAM ? onx_in(c, n, 2 + 3 * groups + g) : -1;
        OX_NEED(x >= 0 && grad >= 0 && s1 >= 0 && (kind != ADAM || s2 >= 0));
        const int out_x = ox_out(c, n, g), out_s1 = ox_out(c, n, groups + g);
        const int out_s2 = kind == ADAM ? ox_out(c, n, 2 * groups + g) : -1;
        OX_NEED(out_x >= 0 && out_s1 >= 0 && (kind != ADAM || out_s2 >= 0));
        /* G_regularized = norm_coefficient * X + G */
        int nx = bin(c, n, FT_OP_MUL, knc, x, -1, "norm_x", g);
        int gr = nx >= 0 ? bin(c, n, FT_OP_ADD, nx, grad, -1, "g_regularized", g) : -1;
        OX_NEED(gr >= 0);
        if (kind == ADAGRAD) {
            /* H_new = H + g * g; X_new = X - r * g / (sqrt(H_new) + epsilon) */
            int gg = bin(c, n, FT_OP_MUL, gr, gr, -1, "g_squared", g);
            int hn = gg >= 0 ? bin(c, n, FT_OP_ADD, s1, gg, out_s1, "h_new", g) : -1;
            int hs = hn >= 0 ? un(c, n, FT_OP_SQRT, hn, "h_sqrt", g) : -1;
            int ha = hs >= 0 ? bin(c, n, FT_OP_ADD, hs, ke, -1, "h_adaptive", g) : -1;
            int rg = ha >= 0 ? bin(c, n, FT_OP_MUL, rate, gr, -1, "step_num", g) : -1;
            int st = rg >= 0 ? bin(c, n, FT_OP_DIV, rg, ha, -1, "step", g) : -1;
            OX_NEED(st >= 0 && bin(c, n, FT_OP_SUB, x, st, out_x, "x_new", g) >= 0);
        } else if (kind == ADAM) {
            /* V_new = alpha V + (1 - alpha) g; H_new = beta H + (1 - beta) g g;
             * X_new = X - R_adjusted V_new / (sqrt(H_new) + epsilon); X_final = (1 - ncp) X_new */
            int av = bin(c, n, FT_OP_MUL, ka, s1, -1, "alpha_v", g), ag = bin(c, n, FT_OP_MUL, ka1, gr, -1, "alpha_g", g);
            int vn = av >= 0 && ag >= 0 ? bin(c, n, FT_OP_ADD, av, ag, out_s1, "v_new", g) : -1;
            int gg = bin(c, n, FT_OP_MUL, gr, gr, -1, "g_squared", g), bh = bin(c, n, FT_OP_MUL, kb, s2, -1, "beta_h", g);
            int bg = gg >= 0 ? bin(c, n, FT_OP_MUL, kb1, gg, -1, "beta_g", g) : -1;
            int hn = bh >= 0 && bg >= 0 ? bin(c, n, FT_OP_ADD, bh, bg, out_s2, "h_new", g) : -1;
            int hs = hn >= 0 ? un(c, n, FT_OP_SQRT, hn, "h_sqrt", g) : -1;
            int ha = hs >= 0 ? bin(c, n, FT_OP_ADD, hs, ke, -1, "h_adaptive", g) : -1;
            int rv = vn >= 0 ? bin(c, n, FT_OP_MUL, rate, vn, -1, "step_num", g) : -1;
            int st = rv >= 0 && ha >= 0 ? bin(c, n, FT_OP_DIV, rv, ha, -1, "step", g) : -1;
            int xn = st >= 0 ? bin(c, n, FT_OP_SUB, x, st, -1, "x_new", g) : -1;
            OX_NEED(xn >= 0 && bin(c, n, FT_OP_MUL, kp, xn, out_x, "x_final", g) >= 0);
        } else {
            /* V_new = alpha V + beta_adjusted g; standard: X_new = X - R V_new;
             * nesterov: X_new = X - R (g + alpha V_new) */
            int av = bin(c, n, FT_OP_MUL, ka, s1, -1, "alpha_v", g), bg = bin(c, n, FT_OP_MUL, beta_adj, gr, -1, "beta_g", g);
            int vn = av >= 0 && bg >= 0 ? bin(c, n, FT_OP_ADD, av, bg, out_s1, "v_new", g) : -1;
            int dir = vn;
            if (nesterov && vn >= 0) {
                int avn = bin(c, n, FT_OP_MUL, ka, vn, -1, "alpha_v_new", g);
                dir = avn >= 0 ? bin(c, n, FT_OP_ADD, gr, avn, -1, "direction", g) : -1;
            }
            int st = dir >= 0 ? bin(c, n, FT_OP_MUL, r, dir, -1, "step", g) : -1;
            OX_NEED(st >= 0 && bin(c, n, FT_OP_SUB, x, st, out_x, "x_new", g) >= 0);
        }
    }
    return FT_OK;
}

/* Gradient: refused with its reason, so that the report and the ONNX test
 * lists say why rather than only that the domain's op is not mapped. */
ft_status ox_map_gradient(onx_ctx *c, const onx_node *n)
{
    return onx_unsupported(c, n, "automatic differentiation of the graph (ftrun runs graphs forward; of this domain "
                           "it runs the optimizers' update steps: Adagrad, Adam, Momentum)");
}
