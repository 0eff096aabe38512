/* An ONNX If whose condition is known only at run time (one known at load
 * is folded, onnx_fold.c): both branches are imported as nodes of the main
 * graph, outer-scope names resolving as in a loop body (onnx_loop.c), each
 * node guarded (graph.h: ft_node.guard) by the condition its branch runs on:
 * the then branch by the condition, the else branch by its `not`, and inside
 * another guarded branch by the `and` of that branch's guard and its own.
 * The executor skips a node whose guard is false (runtime/exec.c); each of
 * the If's outputs is an if_select of the two branches' values, which reads
 * only the one taken.
 *
 *   If(cond) then {y = Relu(x)} else {y = Neg(x)}
 *     ->  n = not(cond); r = relu(x) [guard cond]; m = neg(x) [guard n]; y = if_select(cond, r, m)
 */
#include <stdio.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "onnx_internal.h"
#include "onnx_ops.h"

/* A guard tensor made now (the node emitting it always runs): op of a, b. */
static int guard_of(onx_ctx *c, const onx_node *n, const char *sfx, ft_op op, int a, int b)
{
    int t = onx_tmp(c, n, sfx);
    int in[2] = {a, b};
    if (t < 0 || !onx_emit(c, n, op, in, op == FT_OP_NOT ? 1 : 2, &t, 1))
        return -1;
    return t;
}

/* Output k of branch b (imported) into *out. */
static ft_status side_out(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *b, int k, int *out)
{
    const char *name = nz(b->output[k]->name);
    if (onx_seq_get(c, name))
        return onx_unsupported(c, n, "branch output %d ('%s') is a sequence; ftrun chooses between tensors at run time",
                               k, name);
    *out = onx_resolve(c, name);
    if (*out == -2)
        return c->last;
    if (*out < 0)
        return onx_error(c, n, FT_EGRAPH, "branch output '%s' is not produced in the branch", name);
    return FT_OK;
}

/* One branch imported under guard (a tensor index); its outputs into out.
 * The other branch may use the same names, initializers included (with
 * other values): this one's node outputs are made anew and its initializers
 * are its own while it is imported (onx_scope_enter). */
static ft_status import_side(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *b, int guard, int *out)
{
    int outer = c->guard, here = c->emitted_here;
    onx_scope sc = {0};
    c->guard = guard + 1;
    ft_status st = onx_unbind_outputs(c, b);
    if (!st)
        st = onx_scope_enter(c, &sc, b);
    if (!st)
        st = onx_import_body(c, n, b);
    c->guard = outer;
    c->emitted_here = here; /* the branch's nodes named their own */
    for (int k = 0; k < n->n_out && !st; k++)
        st = side_out(c, n, b, k, &out[k]);
    ft_status ls = onx_scope_leave(c, &sc);
    onx_scope_free(&sc);
    return st ? st : ls;
}

ft_status onx_import_if(onx_ctx *c, const onx_node *n)
{
    const Onnx__AttributeProto *tb = onx_attr(n, "then_branch"), *eb = onx_attr(n, "else_branch");
    if (!tb || !tb->g || !eb || !eb->g)
        return onx_error(c, n, FT_EGRAPH, "needs both a then_branch and an else_branch graph");
    if ((int)tb->g->n_output != n->n_out || (int)eb->g->n_output != n->n_out)
        return onx_error(c, n, FT_EGRAPH, "the branches have %zu and %zu outputs; the node has %d", tb->g->n_output,
                         eb->g->n_output, n->n_out);
    if (n->n_out > 64)
        return onx_unsupported(c, n, "%d outputs (ftrun takes up to 64)", n->n_out);
    int cond = onx_in(c, n, 0), outer = c->guard;
    int then_out[64], else_out[64];
    /* the guards always run: a guarded guard left stale would be read */
    c->guard = 0;
    int g_else = guard_of(c, n, "else_guard", FT_OP_NOT, cond, -1), g_then = cond;
    if (g_else >= 0 && outer) {
        g_then = guard_of(c, n, "then_guard", FT_OP_AND, outer - 1, cond);
        g_else = g_then < 0 ? -1 : guard_of(c, n, "else_guard_all", FT_OP_AND, outer - 1, g_else);
    }
    c->guard = outer;
    if (g_else < 0 || g_then < 0)
        return onx_status(c);
    ft_status st = onx_infer_pending(c);
    int unsup = c->n_unsup;
    if (!st)
        st = import_side(c, n, tb->g, g_then, then_out);
    if (!st)
        st = import_side(c, n, eb->g, g_else, else_out);
    if (!st && c->n_unsup > unsup) /* a branch holds something unsupported: so do the node's outputs */
        return onx_poison_outputs(c, n->pb);
    for (int k = 0; k < n->n_out && !st; k++) {
        int in[3] = {cond, then_out[k], else_out[k]}, out = onx_out(c, n, k);
        if (out < 0 && c->last)
            return c->last;
        if (out >= 0 && !onx_emit(c, n, FT_OP_IF_SELECT, in, 3, &out, 1))
            st = onx_status(c);
    }
    return st ? st : onx_infer_pending(c);
}
