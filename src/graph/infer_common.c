#include "infer_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ft_status ft_infer_fail(ft_infer_ctx *c, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_node_err(c->err, FT_EGRAPH, c->g, c->node, "%s", msg);
}

ft_status ft_infer_unavailable(ft_infer_ctx *c)
{
    return ft_infer_fail(c, "op '%s' is not available in this version of ftrun (%s)", ft_op_name(c->node->op),
                         FT_VERSION);
}

const char *ft_infer_in_name(const ft_infer_ctx *c, int i) { return c->g->tensors[c->node->in[i]].name; }

int ft_infer_has_in(const ft_infer_ctx *c, int slot) { return slot < c->n_in && c->node->in[slot] >= 0; }

int ft_infer_standin(const ft_infer_ctx *c)
{
    if (c->g->run_shapes)
        return 0;
    for (int i = 0; i < c->n_in; i++)
        if (c->node->in[i] >= 0 && (c->g->tensors[c->node->in[i]].flags & FT_TF_DYNAMIC))
            return 1;
    return 0;
}

/* ft_infer_ints (ints) and ft_infer_floats: the input at slot checked and,
 * when its values are known now, read into the node's value list (floats
 * that must be finite checked when finite), which *a then points at. */
static ft_status value_input(ft_infer_ctx *c, const char *name, int slot, int ints, int finite, const ft_attr_val **a,
                             int *known)
{
    *a = name ? ft_attr(c->node, name) : NULL;
    *known = 1;
    if (!ft_infer_has_in(c, slot))
        return FT_OK;
    const ft_tensor *x = &c->g->tensors[c->node->in[slot]];
    char sb[FT_SHAPE_STR];
    if (slot >= FT_MAX_VALUE_INPUTS || !(ft_op_value_inputs(c->node->op) & (1u << slot)))
        return ft_infer_fail(c, "internal error: input %d does not give values", slot);
    if ((ints ? x->dtype != FT_I64 && x->dtype != FT_I32 : !ft_dtype_in(x->dtype, FT_DT_ALL)) || x->shape.rank > 1)
        return ft_infer_fail(c, "input %d ('%s') must be a 1-D or scalar %s tensor, got %s %s", slot, x->name,
                             ints ? "i64 or i32" : "numeric", ft_dtype_name(x->dtype), ft_shape_str(&x->shape, sb));
    if (name && (*a)->given)
        return ft_infer_fail(c, "attribute '%s' and input %d ('%s') both give %s; give one", name, slot, x->name, name);
    uint64_t n = ft_numel(&x->shape);
    if (n > FT_MAX_VALUES)
        return ft_infer_fail(c, "input %d ('%s') of shape %s has %llu values; at most %d are supported", slot, x->name,
                             ft_shape_str(&x->shape, sb), (unsigned long long)n, FT_MAX_VALUES);
    if (!(x->flags & FT_TF_VALUE) || !x->value) {
        *known = 0;
        return FT_OK;
    }
    ft_attr_val *v = &c->vals[slot];
    memset(v, 0, sizeof *v);
    v->given = v->present = 1;
    v->n = (int)n;
    *a = v;
    if (ints) {
        v->ints = c->val_ints[slot];
        for (int k = 0; k < v->n; k++)
            v->ints[k] = ft_load_i64(x->value, x->dtype, (size_t)k);
        v->i = v->n ? v->ints[0] : 0;
        return FT_OK;
    }
    v->floats = c->val_floats[slot];
    for (int k = 0; k < v->n; k++) {
        v->floats[k] = ft_load_f64(x->value, x->dtype, (size_t)k);
        if (finite && !isfinite(v->floats[k]))
            return ft_infer_fail(c, "input %d ('%s') gives %s: value %g at position %d is not finite", slot, x->name,
                                 name, v->floats[k], k);
    }
    v->f = v->n ? v->floats[0] : 0;
    return FT_OK;
}

ft_status ft_infer_ints(ft_infer_ctx *c, const char *name, int slot, const ft_attr_val **a, int *known)
{
    return value_input(c, name, slot, 1, 0, a, known);
}

ft_status ft_infer_floats(ft_infer_ctx *c, const char *name, int slot, int finite, const ft_attr_val **a, int *known)
{
    return value_input(c, name, slot, 0, finite, a, known);
}

ft_status ft_infer_same_dtype(ft_infer_ctx *c, int i, int ref, const char *what)
{
    if (c->in[i]->dtype == c->in[ref]->dtype)
        return FT_OK;
    if (what)
        return ft_infer_fail(c, "%s '%s' has dtype %s but input %d ('%s') has %s", what, ft_infer_in_name(c, i),
                             ft_dtype_name(c->in[i]->dtype), ref, ft_infer_in_name(c, ref),
                             ft_dtype_name(c->in[ref]->dtype));
    return ft_infer_fail(c, "input %d ('%s') has dtype %s but input %d ('%s') has %s", i, ft_infer_in_name(c, i),
                         ft_dtype_name(c->in[i]->dtype), ref, ft_infer_in_name(c, ref),
                         ft_dtype_name(c->in[ref]->dtype));
}

ft_status ft_infer_flag(ft_infer_ctx *c, const char *name, int *out)
{
    int64_t v = ft_attr(c->node, name)->i;
    if (v != 0 && v != 1)
        return ft_infer_fail(c, "attribute '%s' must be 0 or 1 (got %lld)", name, (long long)v);
    *out = (int)v;
    return FT_OK;
}

ft_status ft_infer_check_size(ft_infer_ctx *c, const ft_shape *o)
{
    uint64_t n, bytes;
    if (ft_shape_numel(o, &n) || ft_mul_overflow(n, ft_dtype_size(c->in[0]->dtype), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES) {
        char s[FT_SHAPE_STR];
        return ft_infer_fail(c, "result shape %s is too large (limit %llu bytes)", ft_shape_str(o, s),
                             (unsigned long long)FT_MAX_TENSOR_BYTES);
    }
    return FT_OK;
}

ft_status ft_infer_set_out(ft_infer_ctx *c, int i, ft_dtype dt, const ft_shape *s)
{
    char sb[FT_SHAPE_STR];
    uint64_t n, bytes;
    if (ft_shape_numel(s, &n))
        return ft_infer_fail(c, "output shape %s has too many elements to count", ft_shape_str(s, sb));
    if (ft_mul_overflow(n, ft_dtype_size(dt), &bytes) || bytes > FT_MAX_TENSOR_BYTES)
        return ft_infer_fail(c, "output shape %s of %s is too large (%llu elements; the limit is %llu bytes)",
                             ft_shape_str(s, sb), ft_dtype_name(dt), (unsigned long long)n,
                             (unsigned long long)FT_MAX_TENSOR_BYTES);
    c->out[i].dtype = dt;
    c->out[i].shape = *s;
    return FT_OK;
}

int ft_list_given(const ft_attr_val *a) { return a->present && a->n > 0; }

/* "[v0,v1,...]" of an ints (floats = 0) or floats list, cut with ",..." before
 * FT_LIST_STR is full. */
static const char *list_str(const ft_attr_val *a, char *buf, int floats)
{
    size_t len = 0;
    buf[len++] = '[';
    for (int i = 0; i < a->n; i++) {
        if (len > FT_LIST_STR - (floats ? 40 : 32)) {
            len += (size_t)snprintf(buf + len, FT_LIST_STR - len, ",...");
            break;
        }
        char num[40];
        if (!floats) {
            snprintf(num, sizeof num, "%lld", (long long)a->ints[i]);
        } else {
            /* shortest of %.15g / %.17g that reads back as the same double */
            snprintf(num, sizeof num, "%.15g", a->floats[i]);
            if (strtod(num, NULL) != a->floats[i])
                snprintf(num, sizeof num, "%.17g", a->floats[i]);
        }
        len += (size_t)snprintf(buf + len, FT_LIST_STR - len, "%s%s", i ? "," : "", num);
    }
    buf[len++] = ']';
    buf[len] = 0;
    return buf;
}

const char *ft_ints_str(const ft_attr_val *a, char *buf) { return list_str(a, buf, 0); }

const char *ft_floats_str(const ft_attr_val *a, char *buf) { return list_str(a, buf, 1); }
