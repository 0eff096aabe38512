/* ONNX sequence and optional values, resolved at load time.
 *
 * A sequence that is made and used inside the graph, with its length and the
 * positions it is read at known at load, is a list of ordinary ftrun tensors
 * kept in the import context (onx_seq, onnx_internal.h) under its ONNX name:
 *
 *   SequenceEmpty, SequenceConstruct   a new list (no node)
 *   SequenceInsert, SequenceErase      a new list, position known at load (no node)
 *   SequenceAt                         alias of the element (no node)
 *   SequenceLength                     an int64 scalar constant
 *   SplitToSequence                    split (+ squeeze for keepdims=0)
 *   ConcatFromSequence                 concat (new_axis=1: unsqueeze each, then concat)
 *   Optional, OptionalGetElement       a list of 0 or 1 tensors, an alias
 *   OptionalHasElement                 a bool scalar constant
 *
 *   Identity                           the same list
 *   Loop, SequenceMap                  unrolled at load (onnx_loop.c): a sequence
 *                                      carried by a loop is its list at each step
 *
 * An optional sequence that is there is the sequence itself; an empty one is
 * an optional of no tensor. No sequence reaches the planned graph: a sequence
 * or optional graph input or output is its tensors (onnx_seq_io.c); one passed
 * to another op (Scan, ...) is refused (onnx_reader.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"
#include "onnx_ops.h"

/* The most elements a sequence may have (each is a tensor of the graph). */
enum { SEQ_MAX = 4096 };

#define AT_LOAD "ftrun resolves sequences at load time"

/* ---- the side table ---- */

const onx_seq *onx_seq_get(onx_ctx *c, const char *name)
{
    if (!c->seqnames || !name || !*name)
        return NULL;
    int k = ft_strmap_get(c->seqnames, name);
    return k < 0 ? NULL : &c->seqs[k];
}

int onx_seq_index(onx_ctx *c, const char *name)
{
    const onx_seq *s = onx_seq_get(c, name);
    return s ? (int)(s - c->seqs) : -1;
}

int onx_seq_bind(onx_ctx *c, const char *name, int index)
{
    if (!c->seqnames && !(c->seqnames = ft_strmap_new()))
        return -1;
    return ft_strmap_put(c->seqnames, name, index);
}

int onx_seq_put(onx_ctx *c, const char *name, const int *t, int n, ft_dtype dt, int optional)
{
    if (!c->seqnames && !(c->seqnames = ft_strmap_new()))
        return -1;
    if (ft_grow(&c->seqs, &c->cap_seqs, c->n_seqs, sizeof *c->seqs, 16))
        return -1;
    onx_seq *s = &c->seqs[c->n_seqs];
    if (!(s->t = ft_malloc((size_t)(n ? n : 1) * sizeof *s->t)))
        return -1;
    if (n)
        memcpy(s->t, t, (size_t)n * sizeof *t);
    s->n = n;
    s->dt = dt;
    s->optional = optional;
    s->stacked = 0;
    if (ft_strmap_put(c->seqnames, name, c->n_seqs)) {
        free(s->t);
        return -1;
    }
    c->n_seqs++;
    return 0;
}

void onx_seq_free(onx_ctx *c)
{
    for (int i = 0; i < c->n_seqs; i++)
        free(c->seqs[i].t);
    free(c->seqs);
    c->seqs = NULL;
    c->n_seqs = c->cap_seqs = 0;
    ft_strmap_free(c->seqnames);
    c->seqnames = NULL;
}

int onx_seq_op(const char *op)
{
    static const char *const ops[] = {"SequenceInsert",     "SequenceErase", "SequenceAt",         "SequenceLength",
                                      "ConcatFromSequence", "Optional",      "OptionalHasElement", "OptionalGetElement",
                                      "Loop",               "SequenceMap"};
    for (size_t i = 0; i < FT_ARRAY_LEN(ops); i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return 0;
}

/* ---- helpers ---- */

/* Output k of n becomes the list t[0..cnt) (nothing when the output is unnamed). */
static ft_status put_out(onx_ctx *c, const onx_node *n, int k, const int *t, int cnt, ft_dtype dt, int optional)
{
    if (k >= n->n_out || !n->pb->output[k] || !*n->pb->output[k])
        return FT_OK;
    return onx_seq_put(c, n->pb->output[k], t, cnt, dt, optional) ? onx_oom(c) : FT_OK;
}

/* Input k as a sequence (a tensor or a missing input is an error); with
 * verb, an empty one is an error too: "<verb> an empty sequence". */
static ft_status seq_in(onx_ctx *c, const onx_node *n, int k, const char *verb, const onx_seq **out)
{
    const char *name = k < n->n_in ? n->pb->input[k] : NULL;
    const onx_seq *s = onx_seq_get(c, name);
    if (!name || !*name)
        return onx_error(c, n, FT_EGRAPH, "input %d (the sequence) is missing", k);
    if (!s || s->optional)
        return onx_error(c, n, FT_EGRAPH, "input %d ('%s') is not a sequence", k, name);
    if (s->stacked)
        return onx_unsupported(c, n, "input %d ('%s') is a sequence whose length is known only at run time (a run-time "
                               "loop appends to it); ftrun takes it in ConcatFromSequence (axis 0, new_axis 1) and "
                               "SequenceLength only", k, name);
    if (verb && s->n == 0)
        return onx_error(c, n, FT_EGRAPH, "%s an empty sequence", verb);
    *out = s;
    return FT_OK;
}

/* Input k as a tensor: a sequence there (a sequence of sequences) is
 * unsupported, a missing input an error naming `what`. */
static ft_status elem_in(onx_ctx *c, const onx_node *n, int k, const char *what, int *t)
{
    if (k < n->n_in && onx_seq_get(c, n->pb->input[k]))
        return onx_unsupported(c, n, "input %d ('%s') is a sequence or optional value; sequences of sequences are not "
                               "supported", k, n->pb->input[k]);
    if ((*t = onx_in(c, n, k)) < 0)
        return onx_error(c, n, FT_EGRAPH, "input %d (%s) is missing", k, what);
    return FT_OK;
}

/* A scalar constant as output 0: an int64 or a bool. */
static ft_status scalar_out(onx_ctx *c, const onx_node *n, ft_dtype dt, int64_t v)
{
    ft_npy a = {.dtype = dt};
    a.nbytes = ft_dtype_size(dt);
    if (!(a.data = ft_malloc(8)))
        return onx_oom(c);
    ft_store_i64(a.data, dt, 0, v);
    onx_note_fold(c, n->op_type);
    return onx_const_out(c, n, 0, &a);
}

/* Input k (a position) known at load, in [-len, len + extra) and made
 * non-negative; *pos keeps its default when the input is absent. */
static ft_status position(onx_ctx *c, const onx_node *n, int k, int len, int extra, int64_t *pos)
{
    if (k < n->n_in && n->pb->input[k] && *n->pb->input[k]) {
        OX_TRY(onx_const_int1(c, n, k, "position", AT_LOAD, pos));
        if (*pos < -(int64_t)len || *pos >= (int64_t)len + extra)
            return onx_error(c, n, FT_EGRAPH, "position %lld is out of range for a sequence of %d tensor%s",
                             (long long)*pos, len, len == 1 ? "" : "s");
    }
    if (*pos < 0)
        *pos += len;
    return FT_OK;
}

/* ---- sequences ---- */

ft_status ox_map_seq_empty(onx_ctx *c, const onx_node *n)
{
    ft_dtype dt = FT_F32;
    const char *tn;
    if (onx_has_attr(n, "dtype") && ox_dtype_from_onnx(onx_attr_i(n, "dtype", 1), &dt, &tn))
        return onx_unsupported(c, n, "dtype %s is not an ftrun dtype", tn);
    onx_note_fold(c, n->op_type);
    return put_out(c, n, 0, NULL, 0, dt, 0);
}

ft_status ox_map_seq_construct(onx_ctx *c, const onx_node *n)
{
    if (n->n_in < 1 || n->n_in > SEQ_MAX)
        return onx_error(c, n, FT_EGRAPH, "takes 1 to %d tensors, got %d", SEQ_MAX, n->n_in);
    int *t = ft_malloc((size_t)n->n_in * sizeof *t);
    if (!t)
        return onx_oom(c);
    ft_dtype dt = FT_F32;
    for (int k = 0; k < n->n_in; k++) {
        ft_status st = elem_in(c, n, k, "a tensor of the sequence", &t[k]);
        if (st) {
            free(t);
            return st;
        }
        ft_dtype d = c->g->tensors[t[k]].dtype;
        if (k && d != dt) {
            free(t);
            return onx_error(c, n, FT_EGRAPH, "input %d has dtype %s, input 0 %s: a sequence holds one dtype", k,
                             ft_dtype_name(d), ft_dtype_name(dt));
        }
        dt = d;
    }
    onx_note_fold(c, n->op_type);
    ft_status st = put_out(c, n, 0, t, n->n_in, dt, 0);
    free(t);
    return st;
}

ft_status ox_map_seq_insert(onx_ctx *c, const onx_node *n)
{
    const onx_seq *s;
    OX_TRY(seq_in(c, n, 0, NULL, &s));
    int x;
    OX_TRY(elem_in(c, n, 1, "the tensor to insert", &x));
    ft_dtype d = c->g->tensors[x].dtype;
    if (d != s->dt)
        return onx_error(c, n, FT_EGRAPH, "inserts a tensor of dtype %s into a sequence of %s", ft_dtype_name(d),
                         ft_dtype_name(s->dt));
    if (s->n >= SEQ_MAX)
        return onx_unsupported(c, n, "a sequence of more than %d tensors", SEQ_MAX);
    int64_t pos = s->n;
    OX_TRY(position(c, n, 2, s->n, 1, &pos));
    int *t = ft_malloc((size_t)(s->n + 1) * sizeof *t), len = s->n;
    if (!t)
        return onx_oom(c);
    memcpy(t, s->t, (size_t)pos * sizeof *t);
    t[pos] = x;
    memcpy(t + pos + 1, s->t + pos, (size_t)(len - pos) * sizeof *t);
    onx_note_fold(c, n->op_type);
    ft_status st = put_out(c, n, 0, t, len + 1, d, 0); /* s may move */
    free(t);
    return st;
}

ft_status ox_map_seq_erase(onx_ctx *c, const onx_node *n)
{
    const onx_seq *s;
    OX_TRY(seq_in(c, n, 0, "erases from", &s));
    int64_t pos = -1;
    OX_TRY(position(c, n, 1, s->n, 0, &pos));
    int *t = ft_malloc((size_t)s->n * sizeof *t), len = s->n;
    if (!t)
        return onx_oom(c);
    memcpy(t, s->t, (size_t)pos * sizeof *t);
    memcpy(t + pos, s->t + pos + 1, (size_t)(len - pos - 1) * sizeof *t);
    onx_note_fold(c, n->op_type);
    ft_status st = put_out(c, n, 0, t, len - 1, s->dt, 0);
    free(t);
    return st;
}

ft_status ox_map_seq_at(onx_ctx *c, const onx_node *n)
{
    const onx_seq *s;
    OX_TRY(seq_in(c, n, 0, NULL, &s));
    if (n->n_in < 2 || !n->pb->input[1] || !*n->pb->input[1])
        return onx_error(c, n, FT_EGRAPH, "input 1 (the position) is missing");
    if (s->n == 0)
        return onx_error(c, n, FT_EGRAPH, "reads from an empty sequence");
    int64_t pos = 0;
    OX_TRY(position(c, n, 1, s->n, 0, &pos));
    onx_note_fold(c, n->op_type);
    return onx_alias(c, n, 0, s->t[pos]);
}

ft_status ox_map_seq_length(onx_ctx *c, const onx_node *n)
{
    const onx_seq *s = onx_seq_get(c, n->n_in ? n->pb->input[0] : NULL);
    if (s && s->stacked) { /* its stacked tensor's dim 0, at run time */
        int sh = onx_tmp(c, n, "shape"), z = sh < 0 ? -1 : onx_tmp(c, n, "dims"), o = z < 0 ? -1 : ox_out(c, n, 0);
        int64_t zero = 0, one = 1;
        ft_node *f = o < 0 ? NULL : ox_emit1(c, n, FT_OP_SHAPE, s->stacked - 1, z);
        ft_status st = f ? onx_set_i(c, f, "end", one) : onx_status(c);
        if (!st && !(f = ox_emit1(c, n, FT_OP_SQUEEZE, z, o)))
            st = onx_status(c);
        return st ? st : onx_set_ints(c, f, "axes", &zero, 1);
    }
    OX_TRY(seq_in(c, n, 0, NULL, &s));
    return scalar_out(c, n, FT_I64, s->n);
}

ft_status ox_map_split_to_seq(onx_ctx *c, const onx_node *n)
{
    int x = onx_in(c, n, 0);
    if (x < 0)
        return onx_error(c, n, FT_EGRAPH, "input 0 is missing");
    const ft_tensor *xt = &c->g->tensors[x];
    if (xt->flags & FT_TF_DYNAMIC)
        return onx_unsupported(c, n, "input 0 has a shape known only at run time; %s", AT_LOAD);
    int r = xt->shape.rank;
    int64_t axis = onx_attr_i(n, "axis", 0), keep = onx_attr_i(n, "keepdims", 1);
    if (axis < -r || axis >= r)
        return onx_error(c, n, FT_EGRAPH, "axis %lld is out of range for rank %d", (long long)axis, r);
    if (axis < 0)
        axis += r;
    int64_t dim = xt->shape.dims[axis];
    ft_dtype dt = xt->dtype;
    const int64_t *sv;
    int ns;
    OX_TRY(onx_const_ints(c, n, 1, "the split sizes set the sequence's length, which " AT_LOAD, &sv, &ns));
    const ft_tensor *spt = onx_in_tensor(c, n, 1);
    int squeeze = ns < 0 && !keep;
    int64_t cnt;
    if (ns < 0) /* pieces of 1 */
        cnt = dim;
    else if (spt->shape.rank == 0) { /* pieces of sv[0], the last one shorter */
        if (sv[0] <= 0)
            return onx_error(c, n, FT_EGRAPH, "split %lld is not positive", (long long)sv[0]);
        cnt = (dim + sv[0] - 1) / sv[0];
    } else {
        int64_t sum = 0;
        for (int i = 0; i < ns; i++) {
            if (sv[i] < 0)
                return onx_error(c, n, FT_EGRAPH, "split holds a negative size (%lld)", (long long)sv[i]);
            sum += sv[i];
        }
        if (sum != dim)
            return onx_error(c, n, FT_EGRAPH, "the split sizes add up to %lld; axis %lld has %lld", (long long)sum,
                             (long long)axis, (long long)dim);
        cnt = ns;
    }
    if (cnt > SEQ_MAX)
        return onx_unsupported(c, n, "a sequence of %lld tensors (at most %d)", (long long)cnt, SEQ_MAX);
    if (cnt == 0) {
        onx_note_fold(c, n->op_type);
        return put_out(c, n, 0, NULL, 0, dt, 0);
    }
    int64_t *sizes = ft_malloc((size_t)cnt * sizeof *sizes);
    int *parts = ft_malloc((size_t)cnt * sizeof *parts), *elems = ft_malloc((size_t)cnt * sizeof *elems);
    ft_status st = FT_OK;
    if (!sizes || !parts || !elems) {
        st = onx_oom(c);
        goto out;
    }
    for (int64_t i = 0; i < cnt; i++) {
        sizes[i] = ns < 0 ? 1 : spt->shape.rank == 0 ? (i < cnt - 1 ? sv[0] : dim - sv[0] * (cnt - 1)) : sv[i];
        char suffix[48];
        snprintf(suffix, sizeof suffix, "%s_%lld", squeeze ? "part" : "item", (long long)i);
        if ((parts[i] = onx_tmp(c, n, suffix)) < 0) {
            st = onx_status(c);
            goto out;
        }
        elems[i] = parts[i];
    }
    ft_node *f = onx_emit(c, n, FT_OP_SPLIT, &x, 1, parts, (int)cnt);
    if (!f || (st = onx_set_i(c, f, "axis", axis)) || (st = onx_set_ints(c, f, "split", sizes, (int)cnt))) {
        st = st ? st : onx_status(c);
        goto out;
    }
    for (int64_t i = 0; squeeze && i < cnt; i++) {
        char suffix[48];
        snprintf(suffix, sizeof suffix, "item_%lld", (long long)i);
        if ((elems[i] = onx_tmp(c, n, suffix)) < 0 || !(f = ox_emit1(c, n, FT_OP_SQUEEZE, parts[i], elems[i])) ||
            (st = onx_set_ints(c, f, "axes", &axis, 1))) {
            st = st ? st : onx_status(c);
            goto out;
        }
    }
    st = put_out(c, n, 0, elems, (int)cnt, dt, 0);
out:
    free(sizes);
    free(parts);
    free(elems);
    return st;
}

ft_status ox_map_concat_from_seq(onx_ctx *c, const onx_node *n)
{
    const onx_seq *s = onx_seq_get(c, n->n_in ? n->pb->input[0] : NULL);
    if (s && s->stacked) {
        if (onx_attr_i(n, "axis", -1) == 0 && onx_attr_i(n, "new_axis", 0) == 1)
            return onx_alias(c, n, 0, s->stacked - 1); /* stacked already */
        return onx_unsupported(c, n, "concatenates a sequence whose length is known only at run time with axis %lld "
                               "and new_axis %lld; ftrun stacks it along a new axis 0 only",
                               (long long)onx_attr_i(n, "axis", -1), (long long)onx_attr_i(n, "new_axis", 0));
    }
    OX_TRY(seq_in(c, n, 0, "concatenates", &s));
    int len = s->n, *in = ft_malloc((size_t)len * sizeof *in);
    if (!in)
        return onx_oom(c);
    memcpy(in, s->t, (size_t)len * sizeof *in);
    int r = c->g->tensors[in[0]].shape.rank;
    int64_t axis = onx_attr_i(n, "axis", 0), new_axis = onx_attr_i(n, "new_axis", 0);
    int rr = new_axis ? r + 1 : r;
    ft_status st = FT_OK;
    ft_node *f;
    if (!onx_has_attr(n, "axis")) {
        st = onx_error(c, n, FT_EGRAPH, "the axis attribute is required");
        goto out;
    }
    if (axis < -rr || axis >= rr) {
        st = onx_error(c, n, FT_EGRAPH, "axis %lld is out of range for rank %d", (long long)axis, rr);
        goto out;
    }
    if (axis < 0)
        axis += rr;
    for (int i = 0; new_axis && i < len; i++) {
        char suffix[48];
        snprintf(suffix, sizeof suffix, "unsqueeze_%d", i);
        int u = onx_tmp(c, n, suffix);
        if (u < 0 || !(f = ox_emit1(c, n, FT_OP_UNSQUEEZE, in[i], u)) || (st = onx_set_ints(c, f, "axes", &axis, 1))) {
            st = st ? st : onx_status(c);
            goto out;
        }
        in[i] = u;
    }
    int o = ox_out(c, n, 0);
    if (o < 0 || !(f = onx_emit(c, n, FT_OP_CONCAT, in, len, &o, 1)) || (st = onx_set_i(c, f, "axis", axis)))
        st = st ? st : onx_status(c);
out:
    free(in);
    return st;
}

/* ---- optionals ---- */

/* Output 0 of n is the list s (a sequence or optional value) again. */
static ft_status same_list(onx_ctx *c, const onx_node *n, const onx_seq *s)
{
    if (n->n_out < 1 || !n->pb->output[0] || !*n->pb->output[0])
        return FT_OK;
    ft_dtype dt = s->dt;
    int len = s->n, optional = s->optional, *t = ft_malloc((size_t)(len ? len : 1) * sizeof *t);
    if (!t)
        return onx_oom(c);
    memcpy(t, s->t, (size_t)len * sizeof *t); /* s moves when the list grows */
    ft_status st = put_out(c, n, 0, t, len, dt, optional);
    free(t);
    return st;
}

ft_status ox_map_optional(onx_ctx *c, const onx_node *n)
{
    const char *name = n->n_in > 0 ? n->pb->input[0] : NULL;
    const onx_seq *s = onx_seq_get(c, name);
    if (s && s->optional)
        return onx_error(c, n, FT_EGRAPH, "input 0 ('%s') is an optional value; Optional takes a tensor or a sequence",
                         name);
    if (s) { /* an optional sequence that is there: the sequence */
        onx_note_fold(c, n->op_type);
        return same_list(c, n, s);
    }
    int x = onx_in(c, n, 0);
    ft_dtype dt = x >= 0 ? c->g->tensors[x].dtype : FT_F32;
    onx_note_fold(c, n->op_type);
    return put_out(c, n, 0, &x, x >= 0, dt, 1);
}

ft_status ox_map_optional_has(onx_ctx *c, const onx_node *n)
{
    const char *name = n->n_in > 0 ? n->pb->input[0] : NULL;
    const onx_seq *s = onx_seq_get(c, name);
    /* no input: empty; a tensor or a sequence: there */
    return scalar_out(c, n, FT_BOOL, s && s->optional ? s->n > 0 : name && *name);
}

ft_status ox_map_optional_get(onx_ctx *c, const onx_node *n)
{
    const char *name = n->n_in > 0 ? n->pb->input[0] : NULL;
    const onx_seq *s = onx_seq_get(c, name);
    if (!name || !*name)
        return onx_error(c, n, FT_EGRAPH, "input 0 is missing");
    onx_note_fold(c, n->op_type);
    if (s && s->optional) {
        if (s->n == 0)
            return onx_error(c, n, FT_EGRAPH, "reads the element of an empty optional ('%s')", name);
        return onx_alias(c, n, 0, s->t[0]);
    }
    if (s) /* a sequence: the same list */
        return same_list(c, n, s);
    return onx_alias(c, n, 0, onx_in(c, n, 0));
}

ft_status onx_seq_identity(onx_ctx *c, const onx_node *n)
{
    onx_note_fold(c, n->op_type);
    return same_list(c, n, onx_seq_get(c, n->pb->input[0]));
}
