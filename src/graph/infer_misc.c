/* Shape and dtype inference of dropout, topk and einsum, and the einsum
 * equation parser that the CPU kernel (src/cpu/einsum.c) shares. The validator
 * has already checked arity and the dtype of input 0. */
#include "infer_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ dropout */

ft_status ft_infer_dropout(ft_infer_ctx *c)
{
    int training = 0;
    ft_status st = ft_infer_flag(c, "training", &training);
    if (st)
        return st;
    double ratio = ft_attr(c->node, "ratio")->f;
    if (!(ratio >= 0.0 && ratio <= 1.0))
        return ft_infer_fail(c, "attribute 'ratio' = %g is out of range; expected 0 <= ratio < 1", ratio);
    if (ratio == 1.0 && training)
        return ft_infer_fail(c, "attribute 'ratio' = 1 with training=1 would drop every element and scale by "
                             "1/(1-ratio) = inf; expected 0 <= ratio < 1");
    c->out[0] = *c->in[0];
    if (c->n_out > 1) {
        c->out[1].shape = c->in[0]->shape;
        c->out[1].dtype = FT_BOOL;
    }
    return FT_OK;
}

/* --------------------------------------------------------------------- topk */

ft_status ft_infer_topk(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    char b[FT_SHAPE_STR];
    int64_t a = ft_attr(c->node, "axis")->i;
    int axis, largest = 1, sorted = 1;
    if (ft_axis(a, s->rank, &axis) != 0) {
        if (s->rank == 0)
            return ft_infer_fail(c, "attribute 'axis' = %lld is out of range: input '%s' is a scalar (rank 0) and "
                                 "has no axis", (long long)a, ft_infer_in_name(c, 0));
        return ft_infer_fail(c, "attribute 'axis' = %lld is out of range for input '%s' of shape %s (rank %d: "
                             "valid axes are %d..%d)", (long long)a, ft_infer_in_name(c, 0), ft_shape_str(s, b), s->rank,
                             -s->rank, s->rank - 1);
    }
    ft_status st = ft_infer_flag(c, "largest", &largest);
    if (!st)
        st = ft_infer_flag(c, "sorted", &sorted);
    if (st)
        return st;
    int64_t k = ft_attr(c->node, "k")->i;
    if (k < 0 || k > s->dims[axis])
        return ft_infer_fail(c, "attribute 'k' = %lld is out of range for axis %d of input '%s' (shape %s): "
                             "expected 0 <= k <= %lld", (long long)k, axis, ft_infer_in_name(c, 0), ft_shape_str(s, b),
                             (long long)s->dims[axis]);
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = *s;
    c->out[0].shape.dims[axis] = k;
    c->out[1].dtype = FT_I64;
    c->out[1].shape = c->out[0].shape;
    return FT_OK;
}

/* ------------------------------------------------------------------- einsum */

/* Label ids: 'A'..'Z' are 0..25 and 'a'..'z' 26..51, so that ascending ids are
 * the ASCII order NumPy uses for implicit outputs; the dims covered by "..."
 * are 52..59, aligned to the right like NumPy broadcasting. */
#define EIN_ELL 52

static int ein_letter(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    return -1;
}

static char ein_char(int id) { return (char)(id < 26 ? 'A' + id : 'a' + id - 26); }

/* One term of the equation: letters in order, and where "..." sits. */
typedef struct {
    int n;          /* letters */
    int8_t id[64];  /* letter label ids */
    int ell;        /* position of "..." among the letters, or -1 */
} ein_term;

/* Parses the term between eq[a] and eq[b) (spaces ignored). */
static int ein_term_parse(const char *eq, int a, int b, ein_term *t, const char *what, char *msg, size_t msgsz)
{
    t->n = 0;
    t->ell = -1;
    for (int p = a; p < b; p++) {
        char ch = eq[p];
        if (ch == ' ')
            continue;
        if (ch == '.') {
            if (p + 2 >= b || eq[p + 1] != '.' || eq[p + 2] != '.') {
                snprintf(msg, msgsz, "equation '%s': %s has a '.' at position %d that is not part of '...'", eq,
                         what, p);
                return -1;
            }
            if (t->ell >= 0) {
                snprintf(msg, msgsz, "equation '%s': %s has more than one '...'", eq, what);
                return -1;
            }
            t->ell = t->n;
            p += 2;
            continue;
        }
        int id = ein_letter(ch);
        if (id < 0) {
            snprintf(msg, msgsz, "equation '%s': %s has the character '%c' at position %d; labels are the letters "
                     "a-z and A-Z", eq, what, ch, p);
            return -1;
        }
        if (t->n >= 64) {
            snprintf(msg, msgsz, "equation '%s': %s has more than 64 labels", eq, what);
            return -1;
        }
        t->id[t->n++] = (int8_t)id;
    }
    return 0;
}

/* Parses an einsum equation for n_ops operands of the given ranks.
 * lab[i][d] receives the label id of dim d of operand i (a letter id, or
 * EIN_ELL + j for the j-th of the *n_ell broadcast dims of "..."); out_lab and
 * *out_rank the output's labels. names[i] (optional) name the operands in
 * messages. Returns 0, or -1 with a message naming the equation in msg. The
 * CPU kernel calls this too, so the two can never disagree on a label. */
int ft_einsum_parse(const char *eq, int n_ops, const int *ranks, const char *const *names,
                    int8_t (*lab)[FT_MAX_RANK], int *n_ell, int8_t *out_lab, int *out_rank, char *msg, size_t msgsz)
{
    int len = (int)strlen(eq), arrow = -1;
    for (int p = 0; p < len; p++) {
        char ch = eq[p];
        if (ch == '-' || ch == '>') {
            if (ch == '>' || p + 1 >= len || eq[p + 1] != '>') {
                snprintf(msg, msgsz, "equation '%s': '%c' at position %d is not part of '->'", eq, ch, p);
                return -1;
            }
            if (arrow >= 0) {
                snprintf(msg, msgsz, "equation '%s' has more than one '->'", eq);
                return -1;
            }
            arrow = p++;
        } else if (ch == ',' && arrow >= 0) {
            snprintf(msg, msgsz, "equation '%s': the output (after '->') has a ','; it names a single result", eq);
            return -1;
        } else if (ch != ',' && ch != ' ' && ch != '.' && ein_letter(ch) < 0) {
            snprintf(msg, msgsz, "equation '%s': character '%c' at position %d is not a label (a-z, A-Z), ',', "
                     "'...' or '->'", eq, ch, p);
            return -1;
        }
    }
    int lhs_end = arrow >= 0 ? arrow : len, nterms = 1;
    for (int p = 0; p < lhs_end; p++)
        nterms += eq[p] == ',';
    if (nterms != n_ops) {
        snprintf(msg, msgsz, "equation '%s' has %d operand term%s but the node has %d input%s", eq, nterms,
                 nterms == 1 ? "" : "s", n_ops, n_ops == 1 ? "" : "s");
        return -1;
    }
    int count[EIN_ELL] = {0}, ell_rank = 0;
    int start = 0;
    for (int i = 0; i < n_ops; i++) {
        int end = start;
        while (end < lhs_end && eq[end] != ',')
            end++;
        char what[160];
        if (names && names[i])
            snprintf(what, sizeof what, "operand %d ('%s')", i, names[i]);
        else
            snprintf(what, sizeof what, "operand %d", i);
        ein_term t;
        if (ein_term_parse(eq, start, end, &t, what, msg, msgsz))
            return -1;
        if (t.ell < 0 && t.n != ranks[i]) {
            snprintf(msg, msgsz, "equation '%s': %s has rank %d but its term '%.*s' has %d label%s", eq, what,
                     ranks[i], end - start, eq + start, t.n, t.n == 1 ? "" : "s");
            return -1;
        }
        if (t.ell >= 0 && t.n > ranks[i]) {
            snprintf(msg, msgsz, "equation '%s': %s has rank %d but its term '%.*s' has %d labels besides '...'",
                     eq, what, ranks[i], end - start, eq + start, t.n);
            return -1;
        }
        int e = ranks[i] - t.n; /* dims covered by "..." (0 without one) */
        if (e > ell_rank)
            ell_rank = e;
        for (int d = 0, l = 0; d < ranks[i]; d++) {
            if (t.ell >= 0 && d >= t.ell && d < t.ell + e) {
                lab[i][d] = -1 - (d - t.ell); /* fixed below, once the broadcast rank is known */
                continue;
            }
            lab[i][d] = t.id[l];
            count[t.id[l++]]++;
        }
        start = end + 1;
    }
    /* "..." dims align to the right across operands: the last dim of every
     * operand's "..." is broadcast dim ell_rank-1. */
    for (int i = 0; i < n_ops; i++) {
        int e = 0;
        for (int d = 0; d < ranks[i]; d++)
            e += lab[i][d] < 0;
        for (int d = 0; d < ranks[i]; d++)
            if (lab[i][d] < 0)
                lab[i][d] = (int8_t)(EIN_ELL + ell_rank - e + (-1 - lab[i][d]));
    }
    *n_ell = ell_rank;
    int r = 0;
    if (arrow < 0) {
        /* Implicit output: the broadcast dims first, then the letters used
         * exactly once, in ASCII order (as NumPy). */
        for (int j = 0; j < ell_rank; j++)
            out_lab[r++] = (int8_t)(EIN_ELL + j);
        for (int id = 0; id < EIN_ELL; id++)
            if (count[id] == 1) {
                if (r >= FT_MAX_RANK) {
                    snprintf(msg, msgsz, "equation '%s': the implicit output would have more than %d dims", eq,
                             FT_MAX_RANK);
                    return -1;
                }
                out_lab[r++] = (int8_t)id;
            }
    } else {
        ein_term t;
        if (ein_term_parse(eq, arrow + 2, len, &t, "the output", msg, msgsz))
            return -1;
        if (t.ell < 0 && ell_rank > 0) {
            snprintf(msg, msgsz, "equation '%s': the inputs have %d dim%s under '...' but the output has no '...' "
                     "to keep them", eq, ell_rank, ell_rank == 1 ? "" : "s");
            return -1;
        }
        int seen[EIN_ELL] = {0};
        for (int l = 0; l < t.n; l++) {
            int id = t.id[l];
            if (!count[id]) {
                snprintf(msg, msgsz, "equation '%s': output label '%c' does not appear in any input term", eq,
                         ein_char(id));
                return -1;
            }
            if (seen[id]++) {
                snprintf(msg, msgsz, "equation '%s': output label '%c' appears more than once", eq, ein_char(id));
                return -1;
            }
        }
        int total = t.n + (t.ell >= 0 ? ell_rank : 0);
        if (total > FT_MAX_RANK) {
            snprintf(msg, msgsz, "equation '%s': the output has %d dims; at most %d are supported", eq, total,
                     FT_MAX_RANK);
            return -1;
        }
        for (int l = 0; l <= t.n; l++) {
            if (l == t.ell)
                for (int j = 0; j < ell_rank; j++)
                    out_lab[r++] = (int8_t)(EIN_ELL + j);
            if (l < t.n)
                out_lab[r++] = t.id[l];
        }
    }
    *out_rank = r;
    return 0;
}

ft_status ft_infer_einsum(ft_infer_ctx *c)
{
    const char *eq = ft_attr(c->node, "equation")->s;
    int n = c->n_in;
    if (n > 64)
        return ft_infer_fail(c, "einsum takes at most 64 inputs (got %d)", n);
    int ranks[64] = {0};
    const char *names[64] = {0};
    for (int i = 0; i < n; i++) {
        if (!c->in[i])
            return ft_infer_fail(c, "equation '%s': input %d is omitted; every operand must be given", eq, i);
        if (c->in[i]->dtype != c->in[0]->dtype)
            return ft_infer_fail(c, "equation '%s': operand %d ('%s') has dtype %s but operand 0 ('%s') has %s", eq,
                                 i, ft_infer_in_name(c, i), ft_dtype_name(c->in[i]->dtype), ft_infer_in_name(c, 0),
                                 ft_dtype_name(c->in[0]->dtype));
        ranks[i] = c->in[i]->shape.rank;
        names[i] = ft_infer_in_name(c, i);
    }
    int8_t lab[64][FT_MAX_RANK], out_lab[FT_MAX_RANK];
    int n_ell, out_rank;
    char msg[1024];
    if (ft_einsum_parse(eq, n, ranks, names, lab, &n_ell, out_lab, &out_rank, msg, sizeof msg))
        return ft_infer_fail(c, "%s", msg);
    /* Sizes: a letter must have one size everywhere it appears (einsum
     * broadcasts only the "..." dims); "..." dims broadcast like NumPy. */
    int64_t size[EIN_ELL + FT_MAX_RANK];
    int from[EIN_ELL + FT_MAX_RANK], from_dim[EIN_ELL + FT_MAX_RANK];
    for (int l = 0; l < EIN_ELL + FT_MAX_RANK; l++)
        size[l] = -1, from[l] = -1, from_dim[l] = -1;
    for (int i = 0; i < n; i++) {
        const ft_shape *s = &c->in[i]->shape;
        for (int d = 0; d < s->rank; d++) {
            int l = lab[i][d];
            int64_t v = s->dims[d];
            char a[FT_SHAPE_STR], b[FT_SHAPE_STR];
            if (size[l] < 0 || (l >= EIN_ELL && size[l] == 1 && v != 1)) {
                size[l] = v, from[l] = i, from_dim[l] = d;
            } else if (v != size[l] && !(l >= EIN_ELL && v == 1)) {
                if (l < EIN_ELL)
                    return ft_infer_fail(c, "equation '%s': label '%c' has size %lld in dim %d of operand %d ('%s', "
                                         "shape %s) but %lld in dim %d of operand %d ('%s', shape %s)", eq,
                                         ein_char(l), (long long)size[l], from_dim[l], from[l], ft_infer_in_name(c, from[l]),
                                         ft_shape_str(&c->in[from[l]]->shape, a), (long long)v, d, i, ft_infer_in_name(c, i),
                                         ft_shape_str(s, b));
                return ft_infer_fail(c, "equation '%s': the '...' dims of operand %d ('%s', shape %s) do not "
                                     "broadcast with those of operand %d ('%s', shape %s): %lld vs %lld", eq, i,
                                     ft_infer_in_name(c, i), ft_shape_str(s, a), from[l], ft_infer_in_name(c, from[l]),
                                     ft_shape_str(&c->in[from[l]]->shape, b), (long long)v, (long long)size[l]);
            }
        }
    }
    ft_shape o = {.rank = out_rank};
    for (int d = 0; d < out_rank; d++)
        o.dims[d] = size[out_lab[d]];
    uint64_t cnt, bytes;
    if (ft_shape_numel(&o, &cnt) || ft_mul_overflow(cnt, ft_dtype_size(c->in[0]->dtype), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES) {
        char s[FT_SHAPE_STR];
        return ft_infer_fail(c, "equation '%s': result shape %s is too large (limit %llu bytes)", eq,
                             ft_shape_str(&o, s), (unsigned long long)FT_MAX_TENSOR_BYTES);
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}
