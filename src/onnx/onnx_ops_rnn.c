/* ONNX recurrent layers -> ftrun: LSTM, GRU and RNN (opset 7 on; layout from
 * opset 14) as one lstm, gru or rnn node each, inputs in ONNX's order and
 * attributes carried over (activations joined into ftrun's comma-separated
 * list; graph/infer_rnn.c reads ONNX's names as they are).
 *
 *   ft_status st = ox_map_rnn(c, n);
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_internal.h"
#include "onnx_ops.h"

#include <stdio.h>
#include <string.h>

/* activation_alpha / activation_beta, when given. */
static ft_status copy_floats(onx_ctx *c, const onx_node *n, ft_node *f, const char *name)
{
    const float *v;
    int cnt = onx_attr_floats(n, name, &v);
    if (cnt <= 0)
        return FT_OK;
    double d[16];
    if (cnt > 16)
        return onx_unsupported(c, n, "attribute %s has %d values (at most 6 functions take them)", name, cnt);
    for (int i = 0; i < cnt; i++)
        d[i] = v[i];
    return onx_set_floats(c, f, name, d, cnt);
}

ft_status ox_map_rnn(onx_ctx *c, const onx_node *n)
{
    ft_op op = !strcmp(n->op_type, "LSTM") ? FT_OP_LSTM : !strcmp(n->op_type, "GRU") ? FT_OP_GRU : FT_OP_RNN;
    const ft_op_info *oi = ft_op_get(op);
    OX_TRY(ox_check_dtype(c, n, op, 0));
    if (n->n_in > oi->max_in || n->n_out > oi->max_out)
        return onx_error(c, n, FT_EGRAPH, "%d inputs and %d outputs; %s takes at most %d and %d", n->n_in, n->n_out,
                         n->op_type, oi->max_in, oi->max_out);
    int in[8], nin = n->n_in, out[3], nout = 1;
    for (int k = 0; k < nin; k++)
        in[k] = onx_in(c, n, k);
    while (nin > 3 && in[nin - 1] < 0)
        nin--;
    /* the outputs up to the last named one; an unnamed one before it (Y when
     * only Y_h is wanted) becomes an intermediate */
    for (int k = 0; k < n->n_out; k++)
        if (onx_out(c, n, k) >= 0)
            nout = k + 1;
    for (int k = 0; k < nout; k++)
        OX_NEED((out[k] = ox_out(c, n, k)) >= 0);
    ft_node *f = onx_emit(c, n, op, in, nin, out, nout);
    OX_NEED(f);
    if (onx_has_attr(n, "hidden_size"))
        OX_TRY(onx_set_i(c, f, "hidden_size", onx_attr_i(n, "hidden_size", 0)));
    OX_TRY(onx_set_s(c, f, "direction", onx_attr_s(c, n, "direction", "forward")));
    OX_TRY(onx_set_i(c, f, "layout", onx_attr_i(n, "layout", 0)));
    if (onx_has_attr(n, "clip"))
        OX_TRY(onx_set_f(c, f, "clip", onx_attr_f(n, "clip", 0)));
    const Onnx__AttributeProto *a = onx_attr(n, "activations");
    if (a && a->n_strings) {
        char list[256];
        size_t len = 0;
        for (size_t i = 0; i < a->n_strings; i++) {
            int w = snprintf(list + len, sizeof list - len, "%s%.*s", i ? "," : "", (int)a->strings[i].len,
                             (const char *)a->strings[i].data);
            if (w < 0 || (size_t)w >= sizeof list - len)
                return onx_unsupported(c, n, "attribute activations lists %zu functions (at most 6)", a->n_strings);
            len += (size_t)w;
        }
        OX_TRY(onx_set_s(c, f, "activations", list));
    }
    OX_TRY(copy_floats(c, n, f, "activation_alpha"));
    OX_TRY(copy_floats(c, n, f, "activation_beta"));
    if (op == FT_OP_LSTM)
        OX_TRY(onx_set_i(c, f, "input_forget", onx_attr_i(n, "input_forget", 0)));
    if (op == FT_OP_GRU)
        OX_TRY(onx_set_i(c, f, "linear_before_reset", onx_attr_i(n, "linear_before_reset", 0)));
    return FT_OK;
}
