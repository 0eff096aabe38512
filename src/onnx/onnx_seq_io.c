/* ONNX sequence and optional values as graph inputs and outputs.
 *
 * Their length is fixed at load, so that the sequence ops resolve them like
 * the sequences a graph makes (onnx_seq.c):
 *
 *   input  S (a sequence of n tensors, given by the ft_shape_bind bindings
 *          FT_BIND_SEQ and FT_BIND_ELEM: `ftrun test`'s SequenceProto file,
 *          `ftrun run -i S=FILE.npz` with members 0.npy ... n-1.npy)
 *          -> graph inputs S.0 ... S.{n-1}, holding the bound values
 *   input  O (an optional tensor: an FT_BIND_SEQ of 1 or -1 (empty)
 *          tensors, or a plain tensor binding) -> O.0, or nothing
 *   output S (a sequence or optional of n tensors at load)
 *          -> graph outputs S.0 ... S.{n-1}, then S.len (int64 scalar n)
 *
 * An output's elements and length are recorded in g->groups (graph.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

int onx_group(onx_ctx *c, const char *name, ft_group_kind kind, int first, int n)
{
    ft_out_group *gr = &c->g->groups[c->g->n_groups];
    if (!(gr->name = ft_strdup(name)))
        return -1;
    gr->kind = kind;
    gr->first = first;
    gr->n = n;
    c->g->n_groups++;
    return 0;
}

/* The binding of `name` of the given kind (index: an element's), or NULL. */
static const ft_shape_bind *find_bind(onx_ctx *c, const char *name, int kind, int index)
{
    for (int i = 0; i < c->opts->n_shapes; i++) {
        const ft_shape_bind *b = &c->opts->shapes[i];
        if ((int)b->kind == kind && !strcmp(b->input, name) && (kind != FT_BIND_ELEM || b->index == index))
            return b;
    }
    return NULL;
}

/* Element k of input `name`, from binding b: a graph input NAME.k. */
static ft_status elem_input(onx_ctx *c, const char *name, int k, ft_dtype dt, const ft_shape_bind *b, int *t)
{
    if (b->dtype != dt)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s': tensor %d (%s) has dtype %s; the model declares %s", c->file,
                      name, k, b->origin, ft_dtype_name(b->dtype), ft_dtype_name(dt));
    char nm[FT_MAX_NAME + 24];
    snprintf(nm, sizeof nm, "%.*s.%d", FT_MAX_NAME, name, k);
    if ((*t = onx_add_tensor(c, nm)) < 0)
        return onx_oom(c);
    ft_tensor *ft = &c->g->tensors[*t];
    ft->dtype = dt;
    ft->shape = b->shape;
    ft->flags = FT_TF_DECLARED | FT_TF_INPUT | FT_TF_INFERRED;
    if (b->data && onx_input_value(c, ft, b))
        return onx_oom(c);
    uint64_t numel, bytes;
    if (ft_shape_numel(&b->shape, &numel) || ft_mul_overflow(numel, ft_dtype_size(dt), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES || (b->data && bytes != b->nbytes))
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s': tensor %d (%s) of shape %s is too large or does not match its data",
                      c->file, name, k, b->origin, ft_shape_str(&b->shape, (char[FT_SHAPE_STR]){0}));
    return onx_graph_input(c, *t);
}

ft_status onx_seq_input(onx_ctx *c, const Onnx__TypeProto *tp, const char *name)
{
    int optional = tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE, opt_seq = 0;
    const Onnx__TypeProto *et = optional ? (tp->optional_type ? tp->optional_type->elem_type : NULL)
                                         : (tp->sequence_type ? tp->sequence_type->elem_type : NULL);
    if (optional && et && et->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
        opt_seq = 1;
        et = et->sequence_type ? et->sequence_type->elem_type : NULL;
    }
    const char *what = opt_seq ? "an optional sequence" : optional ? "an optional tensor" : "a sequence";
    if (!et || et->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !et->tensor_type)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is a sequence or optional value of something other than tensors "
                      "(ftrun reads sequences and optionals of tensors; map graph inputs are not supported)", c->file, name);
    ft_dtype dt;
    if (ft_onnx_dtype(et->tensor_type->elem_type, &dt)) {
        char line[FT_MAX_NAME + 200];
        snprintf(line, sizeof line, "input '%s' holds tensors of element type %s, which ftrun does not support", name,
                 ft_onnx_type_name(et->tensor_type->elem_type));
        ft_status st = onx_record(c, NULL, line);
        if (st == FT_EGRAPH && ft_strmap_put(c->poisoned, name, 1))
            return onx_oom(c);
        return st == FT_EGRAPH ? FT_OK : st;
    }
    const ft_shape_bind *head = find_bind(c, name, FT_BIND_SEQ, 0), *plain = NULL;
    int count;
    if (head)
        count = head->count;
    else if (optional && !opt_seq && (plain = find_bind(c, name, FT_BIND_TENSOR, 0)) && plain->data)
        count = 1;
    else
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is %s; ftrun fixes its length at load: give it with -i %s=FILE.npz "
                      "holding %s", c->file, name, what, name,
                      optional && !opt_seq ? "0.npy, or no member for an empty optional (or -i with a .npy file)"
                                           : "0.npy ... N-1.npy, the tensors in order (no member: an empty sequence)");
    if (count < 0 && !optional)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is a sequence, but %s holds an empty optional", c->file, name,
                      head->origin);
    if (count > 1 && optional && !opt_seq)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is an optional tensor, but %s holds %d tensors", c->file, name,
                      head->origin, count);
    int n = count < 0 ? 0 : count, *t = ft_malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t)
        return onx_oom(c);
    ft_status st = FT_OK;
    for (int k = 0; k < n && !st; k++) {
        const ft_shape_bind *b = plain ? plain : find_bind(c, name, FT_BIND_ELEM, k);
        st = b ? elem_input(c, name, k, dt, b, &t[k])
               : ft_err(c->err, FT_EGRAPH, "%s: input '%s': tensor %d of %d is not given", c->file, name, k, n);
    }
    /* an optional sequence that is there is the sequence */
    if (!st && onx_seq_put(c, name, t, n, dt, optional && !(opt_seq && count >= 0)))
        st = onx_oom(c);
    free(t);
    return st;
}

ft_status onx_seq_output(onx_ctx *c, const Onnx__ValueInfoProto *vi, int index)
{
    const char *name = nz(vi->name);
    const onx_seq *s = onx_seq_get(c, name);
    if (s->stacked)
        return ft_err(c->err, FT_EGRAPH, "%s: output '%s' is a sequence whose length is known only at run time (a "
                      "run-time loop appends to it); ftrun gives it stacked by a ConcatFromSequence only", c->file, name);
    int n = s->n, first = c->g->n_outputs, *t = ft_malloc((size_t)(n ? n : 1) * sizeof *t);
    if (!t)
        return onx_oom(c);
    memcpy(t, s->t, (size_t)n * sizeof *t);
    ft_group_kind kind = s->optional ? FT_GROUP_OPTIONAL : FT_GROUP_SEQUENCE;
    /* an optional sequence output: the sequence when there is one */
    if (vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
        kind = FT_GROUP_OPTIONAL;
    ft_status st = onx_group(c, name, kind, first, n) ? onx_oom(c) : FT_OK;
    char nm[FT_MAX_NAME + 24];
    for (int k = 0; k < n && !st; k++) {
        snprintf(nm, sizeof nm, "%.*s.%d", FT_MAX_NAME, name, k);
        st = onx_graph_output(c, t[k], nm, index);
    }
    free(t);
    if (st)
        return st;
    ft_npy a = {.dtype = FT_I64, .nbytes = sizeof(int64_t)};
    if (!(a.data = ft_malloc(sizeof(int64_t))))
        return onx_oom(c);
    *(int64_t *)a.data = n;
    snprintf(nm, sizeof nm, "%.*s.len/value", FT_MAX_NAME, name);
    int lt = onx_add_const(c, nm, &a, "sequence length");
    free(a.data);
    if (lt < 0)
        return onx_oom(c);
    snprintf(nm, sizeof nm, "%.*s.len", FT_MAX_NAME, name);
    return onx_graph_output(c, lt, nm, index);
}
