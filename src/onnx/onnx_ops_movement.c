/* ONNX shape and data-movement ops -> ftrun: Identity and inference Dropout
 * (aliases), Reshape, Transpose, Flatten, Squeeze/Unsqueeze, Expand, Tile,
 * Concat, Split, Slice, Gather/GatherElements, GatherND, ScatterND,
 * ScatterElements/Scatter, Trilu, OneHot, Pad, DepthToSpace/SpaceToDepth,
 * with the parameters ONNX moved from attributes to inputs over the opsets
 * read at load time.
 *
 *   ft_status st = ox_map_slice(c, n);  // opset 13: starts/ends/axes/steps inputs -> slice attributes
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <stdlib.h>
#include <string.h>

ft_status ox_map_identity(onx_ctx *c, const onx_node *n) { return onx_alias(c, n, 0, onx_in(c, n, 0)); }

/* Dropout: the identity unless training_mode (opset 12 input 2) is true. The
 * mask output, when used, comes from ftrun's dropout (bool; cast to the data
 * type before opset 10, where ONNX's mask has the input's type). */
ft_status ox_map_dropout(onx_ctx *c, const onx_node *n)
{
    double ratio = onx_attr_f(n, "ratio", 0.5);
    int training = 0;
    if (n->opset >= 12) {
        double t = 0;
        OX_TRY(onx_const_float_or(c, n, 1, "ftrun's dropout takes the ratio as an attribute", &ratio));
        OX_TRY(onx_const_float_or(c, n, 2, "ftrun's dropout takes training as an attribute", &t));
        training = t != 0;
    }
    int x = onx_in(c, n, 0), mask = n->n_out > 1 ? onx_out(c, n, 1) : -1;
    if (!training && mask < 0)
        return onx_alias(c, n, 0, x);
    OX_TRY(ox_check_dtype(c, n, FT_OP_DROPOUT, 0));
    int legacy_mask = mask >= 0 && n->opset < 10;
    int out[2] = {ox_out(c, n, 0), legacy_mask ? ox_tmp(c, n, "mask") : mask};
    OX_NEED(out[0] >= 0 && (mask < 0 || out[1] >= 0));
    ft_node *f = onx_emit(c, n, FT_OP_DROPOUT, &x, 1, out, mask >= 0 ? 2 : 1);
    OX_NEED(f);
    OX_TRY(onx_set_f(c, f, "ratio", ratio));
    OX_TRY(onx_set_i(c, f, "training", training));
    if (onx_has_attr(n, "seed"))
        OX_TRY(onx_set_i(c, f, "seed", onx_attr_i(n, "seed", 0)));
    if (legacy_mask) {
        OX_NEED(f = ox_emit1(c, n, FT_OP_CAST, out[1], mask));
        OX_TRY(onx_set_s(c, f, "to", ft_dtype_name(ox_dtype(c, n, 0))));
    }
    return FT_OK;
}

/* Emit op on input 0 with an INTS attribute from a load-time input or attribute. */
static ft_status one_ints(onx_ctx *c, const onx_node *n, ft_op op, const char *ft_name, const char *attr, int k,
                          int input_since, const char *reason, int required, ft_node **made)
{
    const int64_t *v = NULL;
    int cnt;
    OX_TRY(ox_ints_param(c, n, attr, k, input_since, reason, &v, &cnt));
    if (cnt < 0 && required)
        return onx_error(c, n, FT_EGRAPH, "%s is missing (%s %d)", attr, n->opset < input_since ? "attribute" : "input",
                         k);
    ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    if (cnt >= 0)
        OX_TRY(onx_set_ints(c, f, ft_name, v, cnt));
    if (made)
        *made = f;
    return FT_OK;
}

/* op on input 0 with the shape-giving input k as a second input when its
 * values are computed at run time (the node is then dynamic); *made NULL
 * when they are known at load (the caller takes them as an attribute). */
static ft_status runtime_ints(onx_ctx *c, const onx_node *n, ft_op op, int k, ft_node **made)
{
    ft_status st;
    int t = onx_runtime_in(c, n, k, &st);
    *made = NULL;
    if (st || t < 0)
        return st;
    OX_NEED(*made = ox_emit2(c, n, op, onx_in(c, n, 0), t, ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_reshape(onx_ctx *c, const onx_node *n)
{
    ft_node *f = NULL;
    if (n->opset >= 5)
        OX_TRY(runtime_ints(c, n, FT_OP_RESHAPE, 1, &f));
    if (f)
        return onx_set_i(c, f, "allowzero", onx_attr_i(n, "allowzero", 0));
    OX_TRY(one_ints(c, n, FT_OP_RESHAPE, "shape", "shape", 1, 5, "ftrun's reshape takes the shape as an attribute", 1,
                    &f));
    return onx_set_i(c, f, "allowzero", onx_attr_i(n, "allowzero", 0));
}

ft_status ox_map_transpose(onx_ctx *c, const onx_node *n)
{
    return one_ints(c, n, FT_OP_TRANSPOSE, "perm", "perm", 0, 1000, "", 0, NULL);
}

ft_status ox_map_flatten(onx_ctx *c, const onx_node *n)
{
    ft_node *f = ox_emit1(c, n, FT_OP_FLATTEN, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 1));
}

ft_status ox_map_squeeze(onx_ctx *c, const onx_node *n)
{
    int un = strcmp(n->op_type, "Unsqueeze") == 0;
    return one_ints(c, n, un ? FT_OP_UNSQUEEZE : FT_OP_SQUEEZE, "axes", "axes", 1, 13,
                    un ? "ftrun's unsqueeze takes the axes as an attribute" : "ftrun's squeeze takes the axes as an "
                                                                               "attribute", un, NULL);
}

ft_status ox_map_expand(onx_ctx *c, const onx_node *n)
{
    ft_node *f;
    OX_TRY(runtime_ints(c, n, FT_OP_EXPAND, 1, &f));
    if (f)
        return FT_OK;
    return one_ints(c, n, FT_OP_EXPAND, "shape", "shape", 1, 0, "ftrun's expand takes the shape as an attribute", 1,
                    NULL);
}

ft_status ox_map_tile(onx_ctx *c, const onx_node *n)
{
    ft_node *f;
    OX_TRY(runtime_ints(c, n, FT_OP_TILE, 1, &f));
    if (f)
        return FT_OK;
    return one_ints(c, n, FT_OP_TILE, "repeats", "repeats", 1, 0, "ftrun's tile takes the repeats as an attribute",
                    1, NULL);
}

/* op (concat, given attribute axis; or a variadic elementwise op, axis
 * unused) of every input of n; more than 64 (an ftrun node's most) become op
 * of ops of 64 at most. */
ft_status ox_emit_chunked(onx_ctx *c, const onx_node *n, ft_op op, int64_t axis)
{
    int parts[64], n_parts = (n->n_in + 63) / 64;
    if (n->n_in <= 64) {
        ft_node *f = onx_emit(c, n, op, NULL, -1, NULL, -1);
        OX_NEED(f);
        return op == FT_OP_CONCAT ? onx_set_i(c, f, "axis", axis) : FT_OK;
    }
    if (n_parts > 64)
        return onx_unsupported(c, n, "%d inputs (at most 64 x 64)", n->n_in);
    for (int p = 0; p < n_parts; p++) {
        int in[64], m = 0;
        for (int k = p * 64; k < n->n_in && k < (p + 1) * 64; k++)
            in[m++] = onx_in(c, n, k);
        OX_NEED((parts[p] = ox_tmp(c, n, "part")) >= 0);
        ft_node *f = onx_emit(c, n, op, in, m, &parts[p], 1);
        OX_NEED(f);
        if (op == FT_OP_CONCAT)
            OX_TRY(onx_set_i(c, f, "axis", axis));
    }
    int out = ox_out(c, n, 0);
    ft_node *f = out >= 0 ? onx_emit(c, n, op, parts, n_parts, &out, 1) : NULL;
    OX_NEED(f);
    return op == FT_OP_CONCAT ? onx_set_i(c, f, "axis", axis) : FT_OK;
}

ft_status ox_map_concat(onx_ctx *c, const onx_node *n)
{
    return ox_emit_chunked(c, n, FT_OP_CONCAT, onx_attr_i(n, "axis", 0));
}

ft_status ox_map_split(onx_ctx *c, const onx_node *n)
{
    const int64_t *sp = NULL;
    int cnt = -1;
    ft_status st;
    int rt = n->opset >= 13 ? onx_runtime_in(c, n, 1, &st) : (st = FT_OK, -1); /* sizes computed at run time */
    OX_TRY(st);
    if (rt < 0)
        OX_TRY(ox_ints_param(c, n, "split", 1, 13, "ftrun's split takes the sizes as an attribute", &sp, &cnt));
    int in[2] = {onx_in(c, n, 0), rt}, out[256];
    if (n->n_out > (int)FT_ARRAY_LEN(out))
        return onx_unsupported(c, n, "%d outputs (at most %d)", n->n_out, (int)FT_ARRAY_LEN(out));
    for (int k = 0; k < n->n_out; k++)
        OX_NEED((out[k] = ox_out(c, n, k)) >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_SPLIT, in, rt >= 0 ? 2 : 1, out, n->n_out);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0)));
    if (cnt > 0)
        OX_TRY(onx_set_ints(c, f, "split", sp, cnt));
    else if (onx_has_attr(n, "num_outputs"))
        OX_TRY(onx_set_i(c, f, "num_outputs", onx_attr_i(n, "num_outputs", n->n_out)));
    return FT_OK;
}

ft_status ox_map_slice(onx_ctx *c, const onx_node *n)
{
    static const char *const names[] = {"starts", "ends", "axes", "steps"};
    const int64_t *v[4] = {NULL};
    int cnt[4];
    int rt = 0;
    for (int i = 1; i < 5 && i < n->n_in && n->opset >= 10; i++) {
        ft_status st;
        rt |= onx_runtime_in(c, n, i, &st) >= 0;
        OX_TRY(st);
    }
    if (rt) { /* some computed at run time: all as inputs, read at every run */
        int in[5];
        for (int i = 0; i < 5; i++)
            in[i] = onx_in(c, n, i);
        int out = ox_out(c, n, 0);
        OX_NEED(out >= 0 && onx_emit(c, n, FT_OP_SLICE, in, n->n_in < 5 ? n->n_in : 5, &out, 1));
        return FT_OK;
    }
    for (int i = 0; i < 4; i++)
        OX_TRY(ox_ints_param(c, n, names[i], i + 1, 10, "ftrun's slice takes starts/ends/axes/steps as attributes",
                             &v[i], &cnt[i]));
    if (cnt[0] < 0 || cnt[1] < 0)
        return onx_error(c, n, FT_EGRAPH, "starts and ends are required");
    ft_node *f = ox_emit1(c, n, FT_OP_SLICE, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    for (int i = 0; i < 4; i++)
        if (cnt[i] >= 0)
            OX_TRY(onx_set_ints(c, f, names[i], v[i], cnt[i]));
    return FT_OK;
}

ft_status ox_map_gather(onx_ctx *c, const onx_node *n)
{
    ft_op op = strcmp(n->op_type, "Gather") == 0 ? FT_OP_GATHER : FT_OP_GATHER_ELEMENTS;
    ft_node *f = ox_emit2(c, n, op, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0));
}

ft_status ox_map_pad(onx_ctx *c, const onx_node *n)
{
    const char *mode = onx_attr_s(c, n, "mode", "constant");
    if (strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0 &&
        strcmp(mode, "wrap") != 0)
        return onx_unsupported(c, n, "attribute mode='%s' (ftrun's pad has constant, reflect, edge and wrap)", mode);
    const int64_t *pads = NULL, *axes = NULL;
    int np = -1, na = -1;
    double value = onx_attr_f(n, "value", 0.0);
    /* inputs 1 (pads), 2 (value) and 3 (axes) computed at run time stay inputs: the node is dynamic */
    int in[4] = {onx_in(c, n, 0), -1, -1, -1}, n_in = 1;
    ft_node *f = NULL;
    if (n->opset >= 11) {
        ft_status st;
        for (int k = 1; k <= (n->opset >= 18 ? 3 : 2); k++) {
            if ((in[k] = onx_runtime_in(c, n, k, &st)) >= 0)
                n_in = k + 1;
            OX_TRY(st);
        }
        if (in[2] < 0)
            OX_TRY(onx_const_float_or(c, n, 2, "ftrun's pad takes the value as an attribute", &value));
        if (in[3] < 0 && n->opset >= 18)
            OX_TRY(onx_const_ints(c, n, 3, "ftrun's pad takes the axes as an attribute", &axes, &na));
    }
    if (in[1] < 0) {
        OX_TRY(ox_ints_param(c, n, "pads", 1, 11, "ftrun's pad takes the pads as an attribute", &pads, &np));
        if (np < 0)
            return onx_error(c, n, FT_EGRAPH, "pads are missing");
    }
    int out = ox_out(c, n, 0);
    OX_NEED(f = onx_emit(c, n, FT_OP_PAD, in, n_in, &out, 1));
    if (in[1] < 0)
        OX_TRY(onx_set_ints(c, f, "pads", pads, np));
    OX_TRY(onx_set_s(c, f, "mode", mode));
    if (in[2] < 0)
        OX_TRY(onx_set_f(c, f, "value", value));
    if (na >= 0)
        OX_TRY(onx_set_ints(c, f, "axes", axes, na));
    return FT_OK;
}

/* DepthToSpace (DCR or CRD) and SpaceToDepth: ftrun's depth_to_space and
 * space_to_depth (the inference checks rank, blocksize and mode). */
ft_status ox_map_depth_space(onx_ctx *c, const onx_node *n)
{
    int to_space = strcmp(n->op_type, "DepthToSpace") == 0;
    ft_node *f = ox_emit1(c, n, to_space ? FT_OP_DEPTH_TO_SPACE : FT_OP_SPACE_TO_DEPTH, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "blocksize", onx_attr_i(n, "blocksize", 0)));
    return to_space ? onx_set_s(c, f, "mode", onx_attr_s(c, n, "mode", "DCR")) : FT_OK;
}

/* Trilu: trilu, its k (input 1) read at load time. */
ft_status ox_map_trilu(onx_ctx *c, const onx_node *n)
{
    int64_t k = 0;
    const int64_t *kv;
    int nk;
    OX_TRY(onx_const_ints(c, n, 1, "ftrun's trilu takes k as an attribute", &kv, &nk));
    if (nk > 1)
        return onx_error(c, n, FT_EGRAPH, "input 1 (k) holds %d values; expected one", nk);
    if (nk == 1)
        k = kv[0];
    ft_node *f = ox_emit1(c, n, FT_OP_TRILU, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "upper", onx_attr_i(n, "upper", 1) != 0));
    return onx_set_i(c, f, "k", k);
}

/* OneHot: one_hot(indices, values), the depth (input 1, any numeric dtype,
 * truncated as ONNX casts it to int64) read at load time, or, computed at run
 * time, one_hot's input 2 (cast to i64 first unless i64 or i32). */
ft_status ox_map_one_hot(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_ONE_HOT, 0));
    ft_status st;
    int dt = onx_runtime_in(c, n, 1, &st);
    OX_TRY(st);
    if (dt >= 0) {
        ft_dtype ddt = onx_in_tensor(c, n, 1)->dtype;
        if (ddt != FT_I64 && ddt != FT_I32) {
            int d64 = ox_tmp(c, n, "depth");
            OX_NEED(d64 >= 0 && ox_cast(c, n, dt, FT_I64, d64));
            dt = d64;
        }
        int in[3] = {onx_in(c, n, 0), onx_in(c, n, 2), dt}, out = ox_out(c, n, 0);
        ft_node *f = out >= 0 ? onx_emit(c, n, FT_OP_ONE_HOT, in, 3, &out, 1) : NULL;
        OX_NEED(f);
        return onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -1));
    }
    const double *dv;
    int nd;
    OX_TRY(onx_const_floats(c, n, 1, "the depth fixes the output shape", &dv, &nd));
    /* the bound before the conversion: a larger double has no int64 */
    if (nd != 1 || !(dv[0] >= 1 && dv[0] < 9.0e18))
        return onx_error(c, n, FT_EGRAPH, "input 1 (depth) must hold one value >= 1");
    ft_node *f = ox_emit2(c, n, FT_OP_ONE_HOT, onx_in(c, n, 0), onx_in(c, n, 2), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "depth", (int64_t)dv[0]));
    return onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -1));
}

ft_status ox_map_gather_nd(onx_ctx *c, const onx_node *n)
{
    ft_node *f = ox_emit2(c, n, FT_OP_GATHER_ND, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_i(c, f, "batch_dims", onx_attr_i(n, "batch_dims", 0));
}

/* ScatterND -> scatter_nd; ScatterElements and the older Scatter ->
 * scatter_elements; reduction (opset 16, max/min 18) as it is. */
ft_status ox_map_scatter(onx_ctx *c, const onx_node *n)
{
    int nd = strcmp(n->op_type, "ScatterND") == 0;
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out = ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *f = onx_emit(c, n, nd ? FT_OP_SCATTER_ND : FT_OP_SCATTER_ELEMENTS, in, 3, &out, 1);
    OX_NEED(f);
    if (!nd)
        OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0)));
    return onx_set_s(c, f, "reduction", onx_attr_s(c, n, "reduction", "none"));
}

/* TensorScatter(past_cache, update, write_indices?; axis, mode) -> tensor_scatter. */
ft_status ox_map_tensor_scatter(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_TENSOR_SCATTER, 0));
    ft_node *f = onx_emit(c, n, FT_OP_TENSOR_SCATTER, NULL, -1, NULL, -1);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "axis", onx_attr_i(n, "axis", -2)));
    return onx_set_s(c, f, "mode", onx_attr_s(c, n, "mode", "linear"));
}
