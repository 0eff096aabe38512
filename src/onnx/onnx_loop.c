/* Loop and Scan unrolled at load: a loop whose number of iterations is known
 * then (Loop: its trip count and every condition, from constants and -i
 * values; Scan: the length of its scan axis) becomes its body imported once
 * per iteration, the loop-carried values passed from one copy to the next,
 * the scan inputs sliced (gather of one position) and the scan outputs
 * stacked (unsqueeze, concat). A Loop that needs its data to know when it
 * ends runs at run time: its body imported once between a loop_begin and a
 * loop_end (run_time_loop; the executor runs it again, runtime/exec.c). More
 * than ONX_UNROLL_MAX iterations known at load is refused as unsupported. A
 * Scan whose length is known only at run time, or longer than that, runs as
 * such a loop too: its trip count the length, its scan inputs gathered at the
 * iteration's position inside the body (run_time_scan).
 * A sequence (or optional) a Loop carries is its list of tensors at each step
 * (onnx_seq.c). SequenceMap is its body imported once per element of its
 * input sequence (whose length is known at load), each output a sequence.
 *
 *   {"Loop", 1, ox_map_loop}, {"Scan", 8, ox_map_scan},  // rows of onnx_ops.c's table
 *   {"SequenceMap", 17, ox_map_seq_map}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"
#include "onnx_ops.h"

/* The most iterations a loop is unrolled to. */
#define ONX_UNROLL_MAX 4096

/* The body's node outputs (and those of graphs nested in it) forgotten, so
 * that the next copy of the body makes its own tensors under those names. */
ft_status onx_unbind_outputs(onx_ctx *c, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        for (size_t k = 0; k < np->n_output; k++)
            if (np->output[k] && *np->output[k] &&
                (onx_unbind(c, np->output[k]) || (c->seqnames && onx_seq_bind(c, np->output[k], -1))))
                return onx_oom(c);
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            ft_status st = at->g ? onx_unbind_outputs(c, at->g) : FT_OK;
            for (size_t k = 0; k < at->n_graphs && !st; k++)
                st = onx_unbind_outputs(c, at->graphs[k]);
            if (st)
                return st;
        }
    }
    return FT_OK;
}

ft_status onx_scope_enter(onx_ctx *c, onx_scope *s, const Onnx__GraphProto *gp)
{
    size_t n = gp->n_initializer;
    if (!s->gp) {
        s->gp = gp;
        if (n && !(s->outer = ft_malloc(3 * n * sizeof *s->outer)))
            return onx_oom(c);
        if (n) /* none: no arrays (no arithmetic on NULL) */
            s->outer_seq = s->outer + n, s->own = s->outer + 2 * n;
        for (size_t i = 0; i < n; i++)
            s->own[i] = -1;
    }
    for (size_t i = 0; i < n; i++) { /* all saved first: leave restores them even when this fails */
        const char *name = nz(gp->initializer[i]->name);
        s->outer[i] = ft_strmap_get(c->names, name);
        s->outer_seq[i] = onx_seq_index(c, name);
    }
    s->inside = 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = nz(gp->initializer[i]->name);
        if ((s->outer_seq[i] >= 0 && onx_seq_bind(c, name, -1)) ||
            (s->own[i] >= 0 ? onx_bind(c, name, s->own[i]) < 0 : onx_unbind(c, name)))
            return onx_oom(c);
    }
    return FT_OK;
}

ft_status onx_scope_leave(onx_ctx *c, onx_scope *s)
{
    if (!s->inside)
        return FT_OK;
    s->inside = 0;
    for (size_t i = 0; i < s->gp->n_initializer; i++) {
        const char *name = nz(s->gp->initializer[i]->name);
        if (s->own[i] < 0)
            s->own[i] = ft_strmap_get(c->names, name);
        if (ft_strmap_put(c->names, name, s->outer[i]) || (s->outer_seq[i] >= 0 && onx_seq_bind(c, name, s->outer_seq[i])))
            return onx_oom(c);
    }
    return FT_OK;
}

void onx_scope_free(onx_scope *s)
{
    free(s->outer);
    *s = (onx_scope){0};
}

/* Body output k's tensor after a copy of the body was imported. */
static int body_out(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, int k)
{
    const char *name = body->output[k]->name ? body->output[k]->name : "";
    int t = onx_resolve(c, name);
    if (t == -1)
        onx_error(c, n, FT_EGRAPH, "body output '%s' is not produced in the body", name);
    return t;
}

/* One copy of the body: its initializers in scope sc (the caller leaves it
 * once the copy's outputs are read), its inputs bound to in[0..n_in) (input
 * i to the list c->seqs[seq[i]] where seq is given and seq[i] >= 0), its
 * nodes imported. */
static ft_status import_copy(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, onx_scope *sc,
                             const int *in, const int *seq, int n_in)
{
    if ((int)body->n_input != n_in)
        return onx_error(c, n, FT_EGRAPH, "the body has %zu inputs; the node gives it %d", body->n_input, n_in);
    ft_status st = onx_unbind_outputs(c, body);
    if (!st) /* before the inputs: an input and an initializer of one name give the input */
        st = onx_scope_enter(c, sc, body);
    for (int i = 0; i < n_in && !st; i++) {
        const char *name = body->input[i]->name ? body->input[i]->name : "";
        int s = seq ? seq[i] : -1;
        if ((c->seqnames && onx_seq_bind(c, name, s)) || (s < 0 && onx_bind(c, name, in[i]) < 0))
            st = onx_oom(c);
    }
    int here = c->emitted_here; /* the body's nodes name their own */
    if (!st)
        st = onx_import_body(c, n, body);
    c->emitted_here = here;
    return st;
}

/* The values of list[0..count) stacked along axis (a new dim) into tensor
 * out (output k of n, or a tensor of tag's). */
static ft_status stack(onx_ctx *c, const onx_node *n, const char *tag, int k, const int *list, int count, int64_t axis,
                       int reverse, int out)
{
    if (count == 0)
        return onx_unsupported(c, n, "scan output %d of a loop that runs no iteration: its shape is not known", k);
    int *parts = ft_malloc((size_t)count * sizeof *parts);
    if (!parts)
        return onx_oom(c);
    ft_status st = FT_OK;
    for (int i = 0; i < count && !st; i++) {
        char sfx[96];
        snprintf(sfx, sizeof sfx, "%sscan_output_%d_%d", tag, k, i);
        int t = onx_tmp(c, n, sfx);
        ft_node *f = t < 0 ? NULL : ox_emit1(c, n, FT_OP_UNSQUEEZE, list[reverse ? count - 1 - i : i], t);
        if (!f)
            st = onx_status(c);
        else
            st = onx_set_ints(c, f, "axes", &axis, 1);
        parts[i] = t;
    }
    ft_node *f = st ? NULL : onx_emit(c, n, FT_OP_CONCAT, parts, count, &out, 1);
    if (!st && !f)
        st = onx_status(c);
    if (!st)
        st = onx_set_i(c, f, "axis", axis);
    free(parts);
    return st;
}

/* A scalar known at load: tensor t's first element as an integer, 1 when
 * known; 0 when it is computed at run time; -1 with *st on failure. */
static int known_int(onx_ctx *c, int t, int64_t *v, ft_status *st)
{
    const ft_tensor *x = onx_value_of(c, t, st);
    if (*st)
        return -1;
    if (!x || ft_numel(&x->shape) < 1)
        return 0;
    *v = ft_load_i64(x->value, x->dtype, 0);
    return 1;
}

/* After a body's last import: the outer meanings of its names back
 * (onx_scope_leave), the scope freed, and FT_EGRAPH with unsup_flag set when
 * the body held something unsupported (the import reports what, and the
 * node's outputs with it). */
static ft_status body_end(onx_ctx *c, onx_scope *sc, ft_status st, int unsup0)
{
    if (!st)
        st = onx_scope_leave(c, sc);
    onx_scope_free(sc);
    if (!st && c->n_unsup > unsup0) {
        c->unsup_flag = 1;
        st = FT_EGRAPH;
    }
    return st;
}

/* The node's "body" graph, or NULL with the error recorded (onx_status). */
static const Onnx__GraphProto *body_of(onx_ctx *c, const onx_node *n)
{
    const Onnx__AttributeProto *ba = onx_attr(n, "body");
    if (!ba || !ba->g) {
        onx_error(c, n, FT_EGRAPH, "no body graph");
        return NULL;
    }
    return ba->g;
}

/* Loop's input k (trip count, condition) into *v when given and known at
 * load; *rt set when it is computed at run time. */
static ft_status loop_input(onx_ctx *c, const onx_node *n, int k, int64_t *v, int *rt)
{
    ft_status st = FT_OK;
    int known = onx_in(c, n, k) >= 0 ? known_int(c, onx_in(c, n, k), v, &st) : 1;
    if (known == 0)
        *rt = 1;
    return known < 0 ? st : FT_OK;
}

/* Tensor t checked as a run-time loop's scalar of dtype dt (what names it). */
static ft_status loop_scalar(onx_ctx *c, const onx_node *n, int t, ft_dtype dt, const char *what)
{
    const ft_tensor *x = &c->g->tensors[t];
    char sb[FT_SHAPE_STR];
    if (x->dtype != dt || ft_numel(&x->shape) != 1)
        return onx_error(c, n, FT_EGRAPH, "%s ('%s') is %s %s; a Loop takes one %s value", what, x->name,
                         ft_dtype_name(x->dtype), ft_shape_str(&x->shape, sb), ft_dtype_name(dt));
    return FT_OK;
}

/* Carried value j of a run-time loop that is a list: taken when it starts
 * empty and the body only appends to it (its output a SequenceInsert at the
 * end of its input, which nothing else reads): what is appended becomes a
 * scan value, *app its name. */
static ft_status appended(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, int j, int seq, const char **app)
{
    const onx_seq *s0 = &c->seqs[seq];
    const char *bi = nz(body->input[2 + j]->name), *bo = nz(body->output[1 + j]->name);
    int readers = 0;
    *app = NULL;
    for (size_t i = 0; i < body->n_node; i++) {
        const Onnx__NodeProto *np = body->node[i];
        for (size_t k = 0; k < np->n_input; k++)
            readers += np->input[k] && !strcmp(np->input[k], bi);
        if (!strcmp(nz(np->op_type), "SequenceInsert") && np->n_output == 1 && !strcmp(nz(np->output[0]), bo) &&
            np->n_input >= 2 && !strcmp(nz(np->input[0]), bi) && (np->n_input == 2 || !*nz(np->input[2])))
            *app = nz(np->input[1]);
    }
    if (s0->optional || s0->stacked || s0->n || !*app || readers != 1)
        return onx_unsupported(c, n, "carried value %d is a sequence; through a loop whose iterations are known only at "
                               "run time ftrun carries tensors, and lists that start empty and that the body only "
                               "appends to", j);
    return FT_OK;
}

/* Attribute `name` (a list), entry k, or def. */
static int64_t list_at(const onx_node *n, const char *name, int k, int64_t def)
{
    const int64_t *v;
    int cnt = onx_attr_ints(n, name, &v);
    return k < cnt ? v[k] : def;
}

/* A Scan run as a run-time loop: m scan inputs in[j], each sliced at
 * axis[j] at the iteration's position, or at last - position where attribute
 * dirs says so (last: a tensor holding the length minus one). */
typedef struct {
    int m, last;
    const int *in, *axis;
    const char *dirs;
} rt_scan;

/* Scan input j's slice of this iteration (it: the iteration number). */
static int scan_slice(onx_ctx *c, const onx_node *n, const rt_scan *sc, int j, int it)
{
    char sfx[64];
    int pos = it;
    if (list_at(n, sc->dirs, j, 0)) {
        snprintf(sfx, sizeof sfx, "position_%d", j);
        if ((pos = onx_tmp(c, n, sfx)) < 0 || !ox_emit2(c, n, FT_OP_SUB, sc->last, it, pos))
            return -1;
    }
    snprintf(sfx, sizeof sfx, "scan_input_%d", j);
    int t = onx_tmp(c, n, sfx);
    ft_node *f = t < 0 ? NULL : ox_emit2(c, n, FT_OP_GATHER, sc->in[j], pos, t);
    return f && !onx_set_i(c, f, "axis", sc->axis[j]) ? t : -1;
}

/* A run-time loop's key in c->vary: its node's name, else its first named output. */
static const char *loop_key(const onx_node *n)
{
    if (n->pb->name && *n->pb->name)
        return n->pb->name;
    for (size_t k = 0; k < n->pb->n_output; k++)
        if (n->pb->output[k] && *n->pb->output[k])
            return n->pb->output[k];
    return "";
}

/* The carried values of loop n found changing shape by an earlier import. */
static uint64_t vary_mask(onx_ctx *c, const onx_node *n)
{
    const char *key = loop_key(n);
    for (int i = 0; c->vary && i < c->vary->n; i++)
        if (!strcmp(c->vary->key[i], key))
            return c->vary->mask[i];
    return 0;
}

/* Whether the body makes carried state s into x of another shape (or of one
 * known only at run time) where s has a shape fixed at load. */
static int changes(onx_ctx *c, int s, int x)
{
    const ft_tensor *ts = &c->g->tensors[s], *tx = &c->g->tensors[x];
    return !(ts->flags & FT_TF_DYNAMIC) && ts->dtype == tx->dtype &&
           ((tx->flags & FT_TF_DYNAMIC) || !ft_shape_eq(&ts->shape, &tx->shape));
}

/* Carried value j of loop n changes shape: noted in c->vary, and the import
 * stops here, to be made again with that state of run-time shape
 * (onnx_reader.c). x: what the body makes of it. */
static ft_status vary_add(onx_ctx *c, const onx_node *n, int j, int x)
{
    onx_vary *v = c->vary;
    const char *key = loop_key(n);
    int i = 0;
    while (v && i < v->n && strcmp(v->key[i], key))
        i++;
    if (!v || j >= 64 || (i < v->n && ((v->mask[i] >> j) & 1)))
        return onx_unsupported(c, n, "carried value %d ('%s') changes shape in the body", j, c->g->tensors[x].name);
    if (i == v->n) {
        if (v->n == v->cap) {
            int cap = v->cap ? 2 * v->cap : 4;
            char **k2 = ft_realloc(v->key, (size_t)cap * sizeof *k2);
            if (k2)
                v->key = k2;
            uint64_t *m2 = k2 ? ft_realloc(v->mask, (size_t)cap * sizeof *m2) : NULL;
            if (!m2)
                return onx_oom(c);
            v->mask = m2;
            v->cap = cap;
        }
        if (!(v->key[i] = ft_strdup(key)))
            return onx_oom(c);
        v->mask[i] = 0;
        v->n++;
    }
    v->mask[i] |= (uint64_t)1 << j;
    c->retry = 1;
    return onx_error(c, n, FT_EGRAPH, "carried value %d ('%s') changes shape in the body; imported again with its "
                     "state of run-time shape", j, c->g->tensors[x].name);
}

void onx_vary_free(onx_vary *v)
{
    for (int i = 0; i < v->n; i++)
        free(v->key[i]);
    free(v->key);
    free(v->mask);
    memset(v, 0, sizeof *v);
}

/* The loop from iteration `start` on, run at run time: its body imported
 * once between a loop_begin and a loop_end (ops.def), which the executor
 * runs again while the condition holds and the trip count is not reached
 * (runtime/exec.c). trips and cond: the trip count and condition tensors
 * (-1: none); cur[2..2+nv): the carried values (seq[2 + j] >= 0: a list,
 * taken when the body only appends to it: appended); scan[q][0..start): the
 * scan values of the iterations unrolled before, stacked ahead of the
 * run-time ones. scn: a Scan's inputs (NULL for a Loop), whose body takes
 * the carried values then the slices and gives no condition; its scan
 * outputs are left stacked along axis 0 in scan_out[0..nk) (NULL: each is
 * the node's output). */
static ft_status run_time_loop(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, int64_t start, int trips,
                               int cond, const int *cur, const int *seq, int **scan, int nv, int nk,
                               const rt_scan *scn, int *scan_out)
{
    int bo = scn ? 0 : 1; /* body output 1 + j of a Loop is output j of a Scan's */
    if (2 + 2 * nv + nk > 64 || (scn && nv + scn->m > 64))
        return onx_unsupported(c, n, "%d carried values and %d scan outputs (ftrun takes up to 64 values in all)", nv, nk);
    const char *app[64];
    int nt = 0, na = 0;
    ft_status st = FT_OK;
    for (int j = 0; j < nv && !st; j++) {
        app[j] = NULL;
        if (seq[2 + j] >= 0)
            st = appended(c, n, body, j, seq[2 + j], &app[j]);
        nt += seq[2 + j] < 0;
    }
    na = nv - nt;
    int64_t big = INT64_MAX;
    uint8_t one = 1;
    if (!st && trips < 0)
        trips = onx_const_new(c, n, "trip_count", FT_I64, &(ft_shape){0}, &big);
    if (!st && cond < 0)
        cond = onx_const_new(c, n, "condition", FT_BOOL, &(ft_shape){0}, &one);
    if (!st)
        st = trips < 0 || cond < 0 ? onx_status(c) : onx_infer_pending(c);
    if (!st)
        st = loop_scalar(c, n, trips, FT_I64, "the trip count");
    if (!st)
        st = loop_scalar(c, n, cond, FT_BOOL, "the condition");
    /* the carried tensors (numbered as loop_begin's state) whose shape may change: an initial
     * value of run-time shape, or one an earlier import found changing (vary_add) */
    int64_t vary[64];
    int nvary = 0;
    uint64_t known = vary_mask(c, n);
    for (int j = 0; j < nv && !st; j++)
        if (seq[2 + j] < 0 && cur[2 + j] < 0)
            st = onx_error(c, n, FT_EGRAPH, "carried value %d (input %d) is missing", j, 2 + j);
    for (int j = 0, t = 0; j < nv && !st; j++)
        if (seq[2 + j] < 0) {
            if ((c->g->tensors[cur[2 + j]].flags & FT_TF_DYNAMIC) || ((known >> j) & 1))
                vary[nvary++] = t;
            t++;
        }
    if (st)
        return st;
    int nb = 2 + nt, ns = nk + na, ne = 2 + 2 * nt + ns;
    int nm = scn ? scn->m : 0;
    int *ids = ft_malloc((size_t)(2 * nb + ne + nt + ns + 2 * (2 + nv + nm)) * sizeof *ids);
    if (!ids)
        return onx_oom(c);
    int *bin = ids, *bout = ids + nb, *ein = bout + nb, *eout = ein + ne, *body_in = eout + nt + ns,
        *body_seq = body_in + 2 + nv + nm;
    bin[0] = trips, bin[1] = cond;
    for (int j = 0, t = 0; j < nb && !st; j++) {
        char sfx[64];
        snprintf(sfx, sizeof sfx, j == 0 ? "iteration" : j == 1 ? "condition_in" : "carried_%d", j - 2);
        while (j >= 2 && seq[2 + t] >= 0)
            t++;
        if (j >= 2)
            bin[j] = cur[2 + t++];
        if ((bout[j] = onx_tmp(c, n, sfx)) < 0)
            st = onx_status(c);
    }
    body_in[0] = bout[0], body_in[1] = bout[1], body_seq[0] = body_seq[1] = -1;
    for (int j = 0, t = 0; j < nv; j++) {
        body_seq[2 + j] = seq[2 + j];
        body_in[2 + j] = seq[2 + j] < 0 ? bout[2 + t++] : -1;
    }
    ft_node *f = st ? NULL : onx_emit(c, n, FT_OP_LOOP_BEGIN, bin, nb, bout, nb);
    if (!st)
        st = f ? onx_set_i(c, f, "start", start) : onx_status(c);
    if (!st && nvary)
        st = onx_set_ints(c, f, "vary", vary, nvary);
    if (!st)
        st = onx_infer_pending(c);
    int unsup0 = c->n_unsup;
    onx_scope sc = {0};
    if (scn) { /* the body's inputs: the carried values, then this iteration's slices */
        for (int j = 0; j < nv; j++)
            body_in[j] = body_in[2 + j], body_seq[j] = -1;
        for (int j = 0; j < nm && !st; j++)
            if ((body_in[nv + j] = scan_slice(c, n, scn, j, bout[0])) < 0)
                st = onx_status(c);
        for (int j = 0; j < nm; j++)
            body_seq[nv + j] = -1;
    }
    if (!st)
        st = import_copy(c, n, body, &sc, body_in, body_seq, scn ? nv + nm : 2 + nv);
    if (!st && c->n_unsup == unsup0) {
        ein[0] = bout[0];
        if ((ein[1] = scn ? bout[1] : body_out(c, n, body, 0)) < 0)
            st = onx_status(c);
        for (int j = 0, t = 0, a2 = 0; j < nv && !st; j++) {
            int x = app[j] ? onx_resolve(c, app[j]) : body_out(c, n, body, bo + j);
            if (x < 0 || (!app[j] && onx_seq_get(c, body->output[bo + j]->name)) || (app[j] && onx_seq_get(c, app[j])))
                st = x == -2 || (x == -1 && !app[j]) ? onx_status(c)
                     : onx_unsupported(c, n, "body output %d is not a tensor where ftrun needs one", bo + j);
            else if (app[j])
                ein[2 + 2 * nt + nk + a2++] = x;
            else if (changes(c, bout[2 + t], x))
                st = vary_add(c, n, j, x);
            else {
                ein[2 + t] = bout[2 + t];
                ein[2 + nt + t++] = x;
            }
        }
        for (int q = 0; q < nk && !st; q++) {
            if (onx_seq_get(c, body->output[bo + nv + q]->name))
                st = onx_unsupported(c, n, "scan output %d is a sequence; ftrun stacks tensors only", q);
            else if ((ein[2 + 2 * nt + q] = body_out(c, n, body, bo + nv + q)) < 0)
                st = onx_status(c);
        }
        for (int j = 0; j < nt + ns && !st; j++) {
            char sfx[64];
            snprintf(sfx, sizeof sfx, j < nt ? "final_%d" : "scan_%d", j < nt ? j : j - nt);
            if ((eout[j] = onx_tmp(c, n, sfx)) < 0)
                st = onx_status(c);
        }
        if (!st && !onx_emit(c, n, FT_OP_LOOP_END, ein, ne, eout, nt + ns))
            st = onx_status(c);
    }
    st = body_end(c, &sc, st, unsup0);
    if (!st)
        st = onx_infer_pending(c);
    for (int j = 0, t = 0, a2 = 0; j < nv && !st; j++) {
        if (!app[j]) {
            st = onx_alias(c, n, j, eout[t++]);
            continue;
        }
        int x = eout[nt + nk + a2++];
        const char *name = n->pb->output[j];
        if (name && *name && onx_seq_put(c, name, NULL, 0, c->g->tensors[x].dtype, 0))
            st = onx_oom(c);
        else if (name && *name)
            c->seqs[c->n_seqs - 1].stacked = x + 1;
    }
    for (int q = 0; q < nk && !st; q++) {
        if (scan_out) {
            scan_out[q] = eout[nt + q];
            continue;
        }
        if (!start) {
            st = onx_alias(c, n, nv + q, eout[nt + q]);
            continue;
        }
        char sfx[64];
        snprintf(sfx, sizeof sfx, "unrolled_scan_%d", q);
        int pre = onx_tmp(c, n, sfx), t = pre < 0 ? -1 : ox_out(c, n, nv + q), parts[2] = {pre, eout[nt + q]};
        st = t < 0 ? onx_status(c) : stack(c, n, "unrolled_", nv + q, scan[q], (int)start, 0, 0, pre);
        ft_node *cf = st ? NULL : onx_emit(c, n, FT_OP_CONCAT, parts, 2, &t, 1);
        if (!st)
            st = cf ? onx_set_i(c, cf, "axis", 0) : onx_status(c);
    }
    free(ids);
    return st;
}

ft_status ox_map_loop(onx_ctx *c, const onx_node *n)
{
    const Onnx__GraphProto *body = body_of(c, n);
    if (!body)
        return onx_status(c);
    int nv = n->n_in - 2, nk = n->n_out - nv;
    if (nv < 0 || nk < 0 || (int)body->n_output != 1 + nv + nk)
        return onx_error(c, n, FT_EGRAPH, "%d inputs and %d outputs, with a body of %zu outputs: expected %d", n->n_in,
                         n->n_out, body->n_output, 1 + (nv < 0 ? 0 : nv) + (nk < 0 ? 0 : nk));
    int64_t trips = -1, cond = 1;
    int rt = 0, tc = -1;
    ft_status st = loop_input(c, n, 0, &trips, &rt);
    if (!st)
        st = loop_input(c, n, 1, &cond, &rt);
    if (st)
        return st;
    int *cur = ft_malloc((size_t)(nv + 2) * 2 * sizeof *cur), **scan = ft_calloc((size_t)nk + 1, sizeof *scan);
    if (!cur || !scan) {
        free(cur);
        free(scan);
        return onx_oom(c);
    }
    int *seq = cur + nv + 2; /* seq[i] >= 0: value i is the list c->seqs[seq[i]] */
    seq[0] = seq[1] = -1;
    for (int j = 0; j < nv; j++) {
        seq[2 + j] = onx_seq_index(c, n->pb->input[2 + j]);
        cur[2 + j] = seq[2 + j] >= 0 ? -1 : onx_in(c, n, 2 + j);
    }
    int it = 0, unsup0 = c->n_unsup;
    onx_scope sc = {0};
    for (; !rt && cond && (trips < 0 || it < trips) && !st; it++) {
        if (it == ONX_UNROLL_MAX) {
            st = onx_unsupported(c, n, "it runs more than %d iterations, the most ftrun unrolls", ONX_UNROLL_MAX);
            break;
        }
        char sfx[64];
        int64_t iv = it;
        uint8_t one = 1;
        snprintf(sfx, sizeof sfx, "iteration_%d", it);
        cur[0] = onx_const_new(c, n, sfx, FT_I64, &(ft_shape){0}, &iv);
        snprintf(sfx, sizeof sfx, "condition_%d", it);
        cur[1] = onx_const_new(c, n, sfx, FT_BOOL, &(ft_shape){0}, &one);
        if (cur[0] < 0 || cur[1] < 0 || (st = import_copy(c, n, body, &sc, cur, seq, 2 + nv)))
            break;
        if (c->n_unsup > unsup0) /* the body holds something unsupported: so does the node */
            break;
        tc = body_out(c, n, body, 0);
        for (int j = 0; j < nv && tc >= 0; j++) {
            seq[2 + j] = onx_seq_index(c, body->output[1 + j]->name);
            if (seq[2 + j] < 0 && (cur[2 + j] = body_out(c, n, body, 1 + j)) < 0)
                tc = -1;
        }
        if (tc < 0) {
            st = onx_status(c);
            break;
        }
        for (int k = 0; k < nk && !st; k++) {
            if (onx_seq_get(c, body->output[1 + nv + k]->name)) {
                st = onx_unsupported(c, n, "scan output %d is a sequence; ftrun stacks tensors only", k);
                break;
            }
            int t = body_out(c, n, body, 1 + nv + k);
            int *grown = t < 0 ? NULL : ft_realloc(scan[k], (size_t)(it + 1) * sizeof **scan);
            if (!grown)
                st = t < 0 ? onx_status(c) : onx_oom(c);
            else
                (scan[k] = grown)[it] = t;
        }
        int kn = st ? -1 : known_int(c, tc, &cond, &st);
        if (!st)
            st = onx_scope_leave(c, &sc);
        if (kn == 0) /* the body's condition is computed at run time: the iterations after this one run then */
            rt = 2;
    }
    st = body_end(c, &sc, st, unsup0);
    if (rt && !st) {
        int trips_t = onx_in(c, n, 0), cond_t = rt == 2 ? tc : onx_in(c, n, 1);
        if (trips_t >= 0 && rt == 2 && trips >= 0) /* known at load */
            trips_t = -1;
        if (trips_t < 0 && trips >= 0 && (trips_t = onx_const_new(c, n, "trip_count", FT_I64, &(ft_shape){0}, &trips)) < 0)
            st = onx_status(c);
        if (!st)
            st = run_time_loop(c, n, body, it, trips_t, cond_t, cur, seq, scan, nv, nk, NULL, NULL);
        free(cur);
        for (int k = 0; k < nk; k++)
            free(scan[k]);
        free(scan);
        return st;
    }
    for (int j = 0; j < nv && !st; j++) {
        if (seq[2 + j] < 0)
            st = onx_alias(c, n, j, cur[2 + j]);
        else if (n->pb->output[j] && *n->pb->output[j] && onx_seq_bind(c, n->pb->output[j], seq[2 + j]))
            st = onx_oom(c);
    }
    for (int k = 0; k < nk && !st; k++) {
        int t = it ? ox_out(c, n, nv + k) : 0;
        st = t < 0 ? onx_status(c) : stack(c, n, "", nv + k, scan[k], it, 0, 0, t);
    }
    free(cur);
    for (int k = 0; k < nk; k++)
        free(scan[k]);
    free(scan);
    return st;
}

/* The body run over the len positions of the scan inputs in[0..m) (input j
 * sliced at axis[j], from the end where attribute dirs says so), the states
 * st0[0..ns) updated to the final ones; scan output k's values in out[k][i].
 * tag starts the names of the tensors it makes. */
static ft_status scan_positions(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, const char *tag, int ns,
                                int m, int nk, int *state, const int *in, const int *axis, const char *dirs, int64_t len,
                                int **out)
{
    int *cur = ft_malloc((size_t)(ns + m + 1) * sizeof *cur), unsup0 = c->n_unsup;
    if (!cur)
        return onx_oom(c);
    ft_status st = FT_OK;
    onx_scope sc = {0};
    for (int j = 0; j < ns; j++)
        cur[j] = state[j];
    for (int64_t i = 0; i < len && !st; i++) {
        for (int j = 0; j < m && !st; j++) {
            int64_t pos = list_at(n, dirs, j, 0) ? len - 1 - i : i;
            char sfx[96];
            snprintf(sfx, sizeof sfx, "%sposition_%lld_%d", tag, (long long)i, j);
            int ix = onx_const_new(c, n, sfx, FT_I64, &(ft_shape){0}, &pos);
            snprintf(sfx, sizeof sfx, "%sscan_input_%d_%lld", tag, j, (long long)i);
            int t = ix < 0 ? -1 : onx_tmp(c, n, sfx);
            ft_node *f = t < 0 ? NULL : ox_emit2(c, n, FT_OP_GATHER, in[j], ix, t);
            if (!f)
                st = onx_status(c);
            else
                st = onx_set_i(c, f, "axis", axis[j]);
            cur[ns + j] = t;
        }
        if (!st)
            st = import_copy(c, n, body, &sc, cur, NULL, ns + m);
        if (st || c->n_unsup > unsup0)
            break;
        for (int j = 0; j < ns && !st; j++)
            if ((cur[j] = body_out(c, n, body, j)) < 0)
                st = onx_status(c);
        for (int k = 0; k < nk && !st; k++)
            if ((out[k][i] = body_out(c, n, body, ns + k)) < 0)
                st = onx_status(c);
        if (!st)
            st = onx_scope_leave(c, &sc);
    }
    st = body_end(c, &sc, st, unsup0);
    for (int j = 0; j < ns; j++)
        state[j] = cur[j];
    free(cur);
    return st;
}

/* The scan inputs' length along their axes (all equal), or -1 with the
 * error recorded; -2 (rt set) where it is known only at run time or is
 * more than ftrun unrolls: the scan then runs at run time. */
static int64_t scan_length(onx_ctx *c, const onx_node *n, int first, int m, const char *axes, int *axis, int rt)
{
    int later = 0;
    int64_t len = -1;
    if (m > 64) {
        onx_unsupported(c, n, "more than 64 scan inputs");
        return -1;
    }
    for (int j = 0; j < m; j++) {
        const ft_tensor *x = onx_in_tensor(c, n, first + j);
        if (!x) {
            onx_error(c, n, FT_EGRAPH, "scan input %d is missing", j);
            return -1;
        }
        int64_t a = axes ? list_at(n, axes, j, 0) : 1; /* opset 8: [batch, sequence, ...] */
        if (ft_axis(a, x->shape.rank, &axis[j])) {
            onx_error(c, n, FT_EGRAPH, "scan axis %lld of scan input %d is out of range for rank %d", (long long)a, j,
                      x->shape.rank);
            return -1;
        }
        if ((x->flags & FT_TF_DYNAMIC) && rt) {
            later = 1;
            continue;
        }
        if (x->flags & FT_TF_DYNAMIC) {
            onx_unsupported(c, n, "scan input %d has a shape known only at run time; ftrun unrolls a scan whose "
                            "length is known at load", j);
            return -1;
        }
        int64_t l = x->shape.dims[axis[j]];
        if (len >= 0 && l != len) {
            onx_error(c, n, FT_EGRAPH, "scan inputs of lengths %lld and %lld", (long long)len, (long long)l);
            return -1;
        }
        len = l;
    }
    if (later || (len > ONX_UNROLL_MAX && rt))
        return -2;
    if (len > ONX_UNROLL_MAX) {
        onx_unsupported(c, n, "it scans %lld positions, more than the %d ftrun unrolls", (long long)len, ONX_UNROLL_MAX);
        return -1;
    }
    return len;
}

/* Lists of nk x len tensor ids, out[k][i]. */
static int **id_lists(int nk, int64_t len)
{
    int **out = ft_calloc((size_t)nk + 1, sizeof *out);
    for (int k = 0; out && k < nk; k++)
        if (!(out[k] = ft_malloc((size_t)(len + 1) * sizeof **out))) {
            for (int i = 0; i < k; i++)
                free(out[i]);
            free(out);
            return NULL;
        }
    return out;
}

static void free_lists(int **out, int nk)
{
    for (int k = 0; out && k < nk; k++)
        free(out[k]);
    free(out);
}

/* Scan at opset 8: every input and output with a leading batch axis, scan
 * inputs [batch, sequence, ...], and input 0 the optional sequence_lens
 * (taken when it is absent or every length is the full one, known at load).
 * Each batch entry is a scan of its own (gather at the batch position), the
 * results stacked along axis 0. */
static ft_status map_scan8(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body)
{
    int m = (int)onx_attr_i(n, "num_scan_inputs", 0), ns = n->n_in - 1 - m, nk = n->n_out - ns;
    if (m < 1 || ns < 0 || nk < 0 || (int)body->n_input != ns + m || (int)body->n_output != ns + nk)
        return onx_error(c, n, FT_EGRAPH, "%d inputs, %d outputs and num_scan_inputs %d do not fit a body of %zu inputs "
                         "and %zu outputs", n->n_in, n->n_out, m, body->n_input, body->n_output);
    int axis[64];
    int64_t len = scan_length(c, n, 1 + ns, m, NULL, axis, 0), batch = -1;
    if (len < 0)
        return onx_status(c);
    for (int j = 1; j < n->n_in; j++) {
        const ft_tensor *x = onx_in_tensor(c, n, j);
        if (!x || x->shape.rank < 1 || (batch >= 0 && x->shape.dims[0] != batch))
            return onx_error(c, n, FT_EGRAPH, "input %d has no batch axis of size %lld", j, (long long)batch);
        batch = x->shape.dims[0];
    }
    if (batch < 1 || len < 1)
        return onx_unsupported(c, n, "a batch of %lld sequences of %lld positions: its outputs' shapes are not known",
                               (long long)batch, (long long)len);
    if (batch * len > ONX_UNROLL_MAX)
        return onx_unsupported(c, n, "%lld sequences of %lld positions, more than the %d steps ftrun unrolls",
                               (long long)batch, (long long)len, ONX_UNROLL_MAX);
    if (onx_in(c, n, 0) >= 0) {
        ft_status st = FT_OK;
        const ft_tensor *sl = onx_in_value(c, n, 0, &st);
        if (st)
            return st;
        if (!sl)
            return onx_unsupported(c, n, "sequence_lens (input 0) is computed at run time");
        if ((int64_t)ft_numel(&sl->shape) != batch)
            return onx_error(c, n, FT_EGRAPH, "sequence_lens has %lld entries for a batch of %lld",
                             (long long)ft_numel(&sl->shape), (long long)batch);
        for (int64_t b = 0; b < batch; b++)
            if (ft_load_i64(sl->value, sl->dtype, b) != len)
                return onx_unsupported(c, n, "sequence_lens[%lld] = %lld is shorter than the %lld positions given; "
                                       "ftrun scans whole sequences", (long long)b,
                                       (long long)ft_load_i64(sl->value, sl->dtype, b), (long long)len);
    }
    int *ids = ft_malloc((size_t)(2 * ns + m + 1) * (size_t)(batch + 1) * sizeof *ids), **out = id_lists(nk, len),
        **per = id_lists(ns + nk, batch), unsup0 = c->n_unsup;
    ft_status st = ids && out && per ? FT_OK : onx_oom(c);
    int *state = ids, *in = ids + ns, *zero = ids + ns + m; /* zero[j] = 0: every sliced input's axis */
    for (int j = 0; j < ns + m; j++)
        zero[j] = 0;
    for (int64_t b = 0; b < batch && !st; b++) {
        char tag[48], sfx[96];
        snprintf(tag, sizeof tag, "batch_%lld/", (long long)b);
        snprintf(sfx, sizeof sfx, "%sindex", tag);
        int ix = onx_const_new(c, n, sfx, FT_I64, &(ft_shape){0}, &b);
        for (int j = 0; j < ns + m && !st; j++) {
            snprintf(sfx, sizeof sfx, "%sinput_%d", tag, 1 + j);
            int t = ix < 0 ? -1 : onx_tmp(c, n, sfx);
            ft_node *f = t < 0 ? NULL : ox_emit2(c, n, FT_OP_GATHER, onx_in(c, n, 1 + j), ix, t);
            st = f ? onx_set_i(c, f, "axis", 0) : onx_status(c);
            (j < ns ? state : in - ns)[j] = t;
        }
        if (!st)
            st = scan_positions(c, n, body, tag, ns, m, nk, state, in, zero, "directions", len, out);
        if (st || c->n_unsup > unsup0)
            break;
        for (int j = 0; j < ns; j++)
            per[j][b] = state[j];
        for (int k = 0; k < nk && !st; k++) {
            snprintf(sfx, sizeof sfx, "%sscan_output_%d", tag, k);
            int t = onx_tmp(c, n, sfx);
            st = t < 0 ? onx_status(c) : stack(c, n, tag, k, out[k], (int)len, 0, 0, t);
            per[ns + k][b] = t;
        }
    }
    if (!st && c->n_unsup > unsup0) {
        c->unsup_flag = 1; /* the import reports what the body holds, and the node's outputs with it */
        st = FT_EGRAPH;
    }
    for (int k = 0; k < ns + nk && !st; k++)
        if (n->pb->output[k] && *n->pb->output[k]) {
            int t = ox_out(c, n, k);
            st = t < 0 ? onx_status(c) : stack(c, n, "", k, per[k], (int)batch, 0, 0, t);
        }
    free(ids);
    free_lists(out, nk);
    free_lists(per, ns + nk);
    return st;
}

/* A Scan whose length is known only at run time (or is more than ftrun
 * unrolls): a run-time loop (run_time_loop) of as many iterations as scan
 * input 0 has positions on its axis (Shape and Gather, read at run time);
 * each scan output stacked along axis 0 by loop_end, then reversed (a Slice
 * of step -1) and its new axis moved to scan_output_axes (a Transpose). */
static ft_status run_time_scan(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *body, int ns, int m, int nk,
                               const int *axis)
{
    int in[64], cur[66], seq[66], scan_out[64], one_t, shp, trips, last;
    int64_t one = 1, ax0 = axis[0];
    if (ns + 2 > 66 || nk > 64)
        return onx_unsupported(c, n, "%d carried values and %d scan outputs (ftrun takes up to 64 values in all)", ns, nk);
    for (int j = 0; j < m; j++)
        in[j] = onx_in(c, n, ns + j);
    cur[0] = cur[1] = seq[0] = seq[1] = -1;
    for (int j = 0; j < ns; j++) {
        if (onx_seq_index(c, n->pb->input[j]) >= 0)
            return onx_unsupported(c, n, "carried value %d is a sequence; ftrun carries tensors through a scan", j);
        cur[2 + j] = onx_in(c, n, j), seq[2 + j] = -1;
    }
    ft_status st = FT_OK;
    ft_node *f;
    int ax = (shp = onx_tmp(c, n, "length_of")) < 0 ? -1 : onx_const_new(c, n, "length_axis", FT_I64, &(ft_shape){0}, &ax0);
    if (ax < 0 || (trips = onx_tmp(c, n, "length")) < 0 || (one_t = onx_const_new(c, n, "one", FT_I64, &(ft_shape){0}, &one)) < 0 ||
        (last = onx_tmp(c, n, "last_position")) < 0 || !ox_emit1(c, n, FT_OP_SHAPE, in[0], shp) ||
        !(f = ox_emit2(c, n, FT_OP_GATHER, shp, ax, trips)) || (st = onx_set_i(c, f, "axis", 0)) ||
        !ox_emit2(c, n, FT_OP_SUB, trips, one_t, last))
        return st ? st : onx_status(c);
    rt_scan scn = {m, last, in, axis, "scan_input_directions"};
    st = run_time_loop(c, n, body, 0, trips, -1, cur, seq, NULL, ns, nk, &scn, scan_out);
    for (int k = 0; k < nk && !st; k++) {
        int t = scan_out[k], rank = c->g->tensors[t].shape.rank, a;
        int64_t sa = list_at(n, "scan_output_axes", k, 0);
        if (ft_axis(sa, rank, &a))
            return onx_error(c, n, FT_EGRAPH, "scan_output_axes[%d] = %lld is out of range for rank %d", k, (long long)sa,
                             rank);
        if (list_at(n, "scan_output_directions", k, 0)) {
            int64_t b = -1, e = INT64_MIN, z = 0;
            int r = onx_tmp(c, n, "reversed");
            if (r < 0 || !(f = ox_emit1(c, n, FT_OP_SLICE, t, r)) || (st = onx_set_ints(c, f, "starts", &b, 1)) ||
                (st = onx_set_ints(c, f, "ends", &e, 1)) || (st = onx_set_ints(c, f, "axes", &z, 1)) ||
                (st = onx_set_ints(c, f, "steps", &b, 1)))
                return st ? st : onx_status(c);
            t = r;
        }
        if (a) { /* [len, e0, e1, ...] -> [e0, .., len at a, ...] */
            int64_t perm[FT_MAX_RANK];
            for (int d = 0; d < rank; d++)
                perm[d] = d < a ? d + 1 : d == a ? 0 : d;
            int r = onx_tmp(c, n, "moved");
            if (r < 0 || !(f = ox_emit1(c, n, FT_OP_TRANSPOSE, t, r)) || (st = onx_set_ints(c, f, "perm", perm, rank)))
                return st ? st : onx_status(c);
            t = r;
        }
        st = onx_alias(c, n, ns + k, t);
    }
    return st;
}

ft_status ox_map_scan(onx_ctx *c, const onx_node *n)
{
    const Onnx__GraphProto *body = body_of(c, n);
    if (!body)
        return onx_status(c);
    if (n->opset < 9)
        return map_scan8(c, n, body);
    int m = (int)onx_attr_i(n, "num_scan_inputs", 0), ns = n->n_in - m, nk = n->n_out - ns;
    if (m < 1 || ns < 0 || nk < 0 || (int)body->n_input != ns + m || (int)body->n_output != ns + nk)
        return onx_error(c, n, FT_EGRAPH, "%d inputs, %d outputs and num_scan_inputs %d do not fit a body of %zu inputs "
                         "and %zu outputs", n->n_in, n->n_out, m, body->n_input, body->n_output);
    int axis[64];
    int64_t len = scan_length(c, n, ns, m, "scan_input_axes", axis, 1);
    if (len == -2)
        return run_time_scan(c, n, body, ns, m, nk, axis);
    if (len < 0)
        return onx_status(c);
    int *ids = ft_malloc((size_t)(ns + m + 1) * sizeof *ids), **out = id_lists(nk, len), unsup0 = c->n_unsup;
    ft_status st = ids && out ? FT_OK : onx_oom(c);
    for (int j = 0; j < ns + m && !st; j++)
        ids[j] = onx_in(c, n, j);
    if (!st)
        st = scan_positions(c, n, body, "", ns, m, nk, ids, ids + ns, axis, "scan_input_directions", len, out);
    if (!st && c->n_unsup > unsup0) {
        c->unsup_flag = 1; /* the import reports what the body holds, and the node's outputs with it */
        st = FT_EGRAPH;
    }
    for (int j = 0; j < ns && !st; j++)
        st = onx_alias(c, n, j, ids[j]);
    for (int k = 0; k < nk && !st; k++) {
        int64_t a = list_at(n, "scan_output_axes", k, 0);
        int rank = len > 0 ? c->g->tensors[out[k][0]].shape.rank + 1 : 0, ax = 0, t;
        if (len > 0 && ft_axis(a, rank, &ax))
            st = onx_error(c, n, FT_EGRAPH, "scan_output_axes[%d] = %lld is out of range for rank %d", k, (long long)a, rank);
        else if ((t = len > 0 ? ox_out(c, n, ns + k) : 0) < 0)
            st = onx_status(c);
        else
            st = stack(c, n, "", ns + k, out[k], (int)len, ax, list_at(n, "scan_output_directions", k, 0) != 0, t);
    }
    free(ids);
    free_lists(out, nk);
    return st;
}

/* The dtype body output k declares (an empty sequence's), or def. */
static ft_dtype declared_elem(const Onnx__GraphProto *body, int k, ft_dtype def)
{
    const Onnx__TypeProto *tp = body->output[k]->type;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type)
        tp = tp->sequence_type->elem_type;
    ft_dtype dt;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        !ft_onnx_dtype(tp->tensor_type->elem_type, &dt))
        return dt;
    return def;
}

ft_status ox_map_seq_map(onx_ctx *c, const onx_node *n)
{
    const Onnx__GraphProto *body = body_of(c, n);
    if (!body)
        return onx_status(c);
    if (n->n_in < 1 || n->n_out < 1 || (int)body->n_input != n->n_in || (int)body->n_output != n->n_out)
        return onx_error(c, n, FT_EGRAPH, "%d inputs and %d outputs do not fit a body of %zu inputs and %zu outputs",
                         n->n_in, n->n_out, body->n_input, body->n_output);
    const onx_seq *s0 = onx_seq_get(c, n->pb->input[0]);
    if (!s0 || s0->optional)
        return onx_error(c, n, FT_EGRAPH, "input 0 ('%s') is not a sequence", n->pb->input[0]);
    int len = s0->n, m = n->n_in, no = n->n_out;
    for (int j = 1; j < m; j++) {
        const onx_seq *sj = onx_seq_get(c, n->pb->input[j]);
        if (sj && sj->optional)
            return onx_error(c, n, FT_EGRAPH, "input %d ('%s') is an optional value; SequenceMap takes sequences and "
                             "tensors", j, n->pb->input[j]);
        if (sj && sj->n != len)
            return onx_error(c, n, FT_EGRAPH, "input %d is a sequence of %d tensors, input 0 one of %d", j, sj->n, len);
        if (!sj && onx_in(c, n, j) < 0)
            return onx_error(c, n, FT_EGRAPH, "input %d is missing", j);
    }
    int *in = ft_malloc((size_t)(m + (size_t)no * (len + 1)) * sizeof *in), unsup0 = c->n_unsup;
    if (!in)
        return onx_oom(c);
    int *out = in + m; /* out[k * len + i]: output k's element i */
    ft_status st = FT_OK;
    onx_scope sc = {0};
    for (int i = 0; i < len && !st; i++) {
        for (int j = 0; j < m; j++) {
            const onx_seq *sj = onx_seq_get(c, n->pb->input[j]);
            in[j] = sj ? sj->t[i] : onx_in(c, n, j);
        }
        if ((st = import_copy(c, n, body, &sc, in, NULL, m)) || c->n_unsup > unsup0)
            break;
        for (int k = 0; k < no && !st; k++) {
            if (onx_seq_get(c, body->output[k]->name))
                st = onx_unsupported(c, n, "body output %d is a sequence; sequences of sequences are not supported", k);
            else if ((out[k * len + i] = body_out(c, n, body, k)) < 0)
                st = onx_status(c);
        }
        if (!st)
            st = onx_scope_leave(c, &sc);
    }
    st = body_end(c, &sc, st, unsup0);
    for (int k = 0; k < no && !st; k++) {
        ft_dtype dt = len ? c->g->tensors[out[k * len]].dtype : declared_elem(body, k, FT_F32);
        for (int i = 1; i < len && !st; i++)
            if (c->g->tensors[out[k * len + i]].dtype != dt)
                st = onx_error(c, n, FT_EGRAPH, "body output %d has dtype %s at element %d and %s at element 0", k,
                               ft_dtype_name(c->g->tensors[out[k * len + i]].dtype), i, ft_dtype_name(dt));
        if (!st && n->pb->output[k] && *n->pb->output[k] && onx_seq_put(c, n->pb->output[k], out + k * len, len, dt, 0))
            st = onx_oom(c);
    }
    free(in);
    return st;
}
