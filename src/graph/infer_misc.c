/* Shape and dtype inference of dropout, topk and einsum, and einsum's
 * equation parser: the equation is parsed once, when the graph is checked,
 * into n->params.matmul.ein, from which the kernels (src/cpu/einsum.c,
 * src/cuda/matmul.cu) take their operand views (ft_ein_views). The validator
 * has already checked arity and the dtype of input 0. */
#include "infer_common.h"
#include "infer_misc.h"

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
    ft_attn_params *p = &c->params->attn;
    p->training = training;
    p->ratio = ratio;
    p->seed = (uint64_t)ft_attr(c->node, "seed")->i;
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
    const ft_attr_val *ka;
    int known;
    if ((st = ft_infer_ints(c, "k", 1, &ka, &known)))
        return st;
    if (known && !ka->present)
        return ft_infer_fail(c, "attribute 'k' is required (or input 1 giving it)");
    if (known && ft_infer_has_in(c, 1) && ka->n != 1)
        return ft_infer_fail(c, "input 1 ('%s') must give one value k, got %d", ft_infer_in_name(c, 1), ka->n);
    int64_t k = known ? ka->i : s->dims[axis]; /* computed at run time: at most the whole axis */
    if (k < 0 || k > s->dims[axis])
        return ft_infer_fail(c, "attribute 'k' = %lld is out of range for axis %d of input '%s' (shape %s): "
                             "expected 0 <= k <= %lld", (long long)k, axis, ft_infer_in_name(c, 0), ft_shape_str(s, b),
                             (long long)s->dims[axis]);
    ft_reduce_params *p = &c->params->reduce;
    p->axis = axis, p->largest = largest, p->sorted = sorted, p->k = k;
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
 * messages. Returns 0, or -1 with a message naming the equation in msg. */
static int ft_einsum_parse(const char *eq, int n_ops, const int *ranks, const char *const *names,
                           int8_t (*lab)[FT_MAX_RANK], int *n_ell, int8_t *out_lab, int *out_rank, char *msg,
                           size_t msgsz)
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
    c->params->matmul.equation = eq;
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
    ft_einsum_params *ep = &c->params->matmul.ein;
    ep->nops = n, ep->n_ell = n_ell, ep->out_rank = out_rank;
    for (int i = 0; i < n; i++) {
        ep->rank[i] = (int8_t)ranks[i];
        memcpy(ep->lab[i], lab[i], sizeof ep->lab[i]);
    }
    memcpy(ep->out_lab, out_lab, sizeof ep->out_lab);
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

/* ---- kernel-side planning of einsum and matmul (infer_misc.h) ----------------------- */

uint64_t ft_ein_numel(const int64_t *size, const int8_t *lab, int nl)
{
    uint64_t r = 1;
    for (int i = 0; i < nl; i++)
        r *= (uint64_t)size[lab[i]];
    return r;
}

int ft_ein_mask_labels(uint64_t m, int8_t *lab)
{
    int n = 0;
    for (int l = 0; l < FT_EIN_NL; l++)
        if (m >> l & 1)
            lab[n++] = (int8_t)l;
    return n;
}

int ft_ein_order_by(uint64_t m, const int8_t *ord, int nord, int8_t *lab)
{
    int n = 0;
    for (int i = 0; i < nord; i++)
        if (m >> ord[i] & 1) {
            lab[n++] = ord[i];
            m &= ~((uint64_t)1 << ord[i]);
        }
    return n + ft_ein_mask_labels(m, lab + n);
}

int ft_ein_op_order(const ft_ein_op *op, int8_t *lab)
{
    int n = ft_ein_mask_labels(op->has, lab);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && op->st[lab[j]] > op->st[lab[j - 1]]; j--) {
            int8_t t = lab[j];
            lab[j] = lab[j - 1];
            lab[j - 1] = t;
        }
    return n;
}

void ft_ein_set_layout(const int64_t *size, ft_ein_op *op, const void *data, const int8_t *lab, int nl)
{
    memset(op->st, 0, sizeof op->st);
    op->data = data;
    op->has = 0;
    int64_t s = 1;
    for (int i = nl - 1; i >= 0; i--) {
        op->st[lab[i]] = s;
        op->has |= (uint64_t)1 << lab[i];
        s *= size[lab[i]];
    }
}

int ft_ein_views(const ft_einsum_params *p, int nops, const ft_shape *const *shapes, const void *const *data,
                 int8_t *olab, int *no, int64_t *size, ft_ein_op *ops, char *msg, size_t msgsz)
{
    if (nops != p->nops) {
        snprintf(msg, msgsz, "einsum: %d operands, but the equation was parsed for %d", nops, p->nops);
        return -1;
    }
    for (int i = 0; i < nops; i++)
        if (shapes[i]->rank != p->rank[i]) {
            snprintf(msg, msgsz, "einsum: operand %d has rank %d, but the equation was parsed for rank %d", i,
                     shapes[i]->rank, p->rank[i]);
            return -1;
        }
    memcpy(olab, p->out_lab, (size_t)p->out_rank);
    *no = p->out_rank;
    for (int l = 0; l < FT_EIN_NL; l++)
        size[l] = 1;
    /* A "..." dim may be 1 in one operand and larger in another: the larger wins. */
    uint64_t used = 0;
    for (int i = 0; i < nops; i++)
        for (int d = 0; d < shapes[i]->rank; d++) {
            int l = p->lab[i][d];
            if (!(used >> l & 1) || size[l] == 1)
                size[l] = shapes[i]->dims[d];
            used |= (uint64_t)1 << l;
        }
    for (int i = 0; i < nops; i++) {
        int64_t s = 1;
        memset(&ops[i], 0, sizeof ops[i]);
        ops[i].data = data[i];
        for (int d = shapes[i]->rank - 1; d >= 0; d--) {
            int l = p->lab[i][d];
            int64_t dim = shapes[i]->dims[d];
            if (dim == size[l]) { /* else a broadcast "..." dim of size 1: stride 0 */
                ops[i].st[l] += s;
                ops[i].has |= (uint64_t)1 << l;
            }
            s *= dim;
        }
    }
    return 0;
}

uint64_t ft_ein_need_later(int nops, const ft_ein_op *ops, const int8_t *olab, int no, uint64_t *need_later)
{
    uint64_t outm = 0;
    for (int d = 0; d < no; d++)
        outm |= (uint64_t)1 << olab[d];
    need_later[nops] = outm;
    for (int i = nops - 1; i >= 0; i--)
        need_later[i] = need_later[i + 1] | ops[i].has;
    return outm;
}

int ft_ein_pairwise(const int64_t *size, int nops, const ft_shape *const *shapes, const ft_ein_op *ops,
                    const uint64_t *need_later, uint64_t total)
{
    uint64_t biggest = total;
    for (int i = 0; i < nops; i++)
        if (ft_numel(shapes[i]) > biggest)
            biggest = ft_numel(shapes[i]);
    int pairwise = nops >= 2;
    uint64_t cur = ops[0].has;
    for (int i = 1; i + 1 < nops && pairwise; i++) {
        cur = (cur | ops[i].has) & need_later[i + 1];
        int8_t tl[FT_EIN_NL];
        if (ft_ein_numel(size, tl, ft_ein_mask_labels(cur, tl)) > 4 * biggest + 65536)
            pairwise = 0;
    }
    return pairwise;
}

void ft_ein_pair_labels(const int64_t *size, const ft_ein_op *a, const ft_ein_op *b, uint64_t keep,
                        const int8_t *res, int nres, ft_ein_pair_plan *p)
{
    uint64_t la = a->has, lb = b->has;
    uint64_t mb = la & lb & keep, mm = la & ~lb & keep, mn = lb & ~la & keep;
    p->mk = la & lb & ~keep;
    p->sa = la & ~lb & ~keep, p->sb = lb & ~la & ~keep;
    int8_t ord_a[FT_EIN_NL], ord_b[FT_EIN_NL];
    int noa = ft_ein_op_order(a, ord_a), nob = ft_ein_op_order(b, ord_b);
    if (res) {
        p->nb = ft_ein_order_by(mb, res, nres, p->bl);
        p->nm = ft_ein_order_by(mm, res, nres, p->ml);
        p->nn = ft_ein_order_by(mn, res, nres, p->nl);
    } else {
        p->nb = ft_ein_order_by(mb, ord_a, noa, p->bl);
        p->nm = ft_ein_order_by(mm, ord_a, noa, p->ml);
        p->nn = ft_ein_order_by(mn, ord_b, nob, p->nl);
    }
    p->nk = ft_ein_order_by(p->mk, ord_a, noa, p->kl);
    memcpy(p->cl, p->bl, (size_t)p->nb);
    memcpy(p->cl + p->nb, p->ml, (size_t)p->nm);
    memcpy(p->cl + p->nb + p->nm, p->nl, (size_t)p->nn);
    p->nc = p->nb + p->nm + p->nn;
    p->BT = ft_ein_numel(size, p->bl, p->nb), p->M = ft_ein_numel(size, p->ml, p->nm);
    p->N = ft_ein_numel(size, p->nl, p->nn), p->K = ft_ein_numel(size, p->kl, p->nk);
}

int ft_ein_gemm_worth(uint64_t BT, uint64_t M, uint64_t N, uint64_t K)
{
    return K >= 8 && M * N >= 16 && (double)BT * (double)(M * N) * (double)K >= 16384;
}

void ft_matmul_mkn(const ft_shape *as, const ft_shape *bs, int64_t *M, int64_t *K, int64_t *N)
{
    *M = as->rank >= 2 ? as->dims[as->rank - 2] : 1;
    *K = as->dims[as->rank - 1];
    *N = bs->rank >= 2 ? bs->dims[bs->rank - 1] : 1;
}

void ft_matmul_geom_of(const ft_shape *as, const ft_shape *bs, ft_matmul_geom *g)
{
    ft_matmul_mkn(as, bs, &g->M, &g->K, &g->N);
    g->r = ft_matmul_batch(as, bs, g->bdims, g->sa, g->sb, &g->nbatch, &g->na, &g->nb);
    g->tall = g->nb == 1 && (uint64_t)g->na == g->nbatch;
}

uint64_t ft_gemm_mkn(const ft_matmul_params *mp, const ft_shape *as, const ft_shape *bs, int64_t *M, int64_t *K,
                     int64_t *N)
{
    *M = mp->trans_a ? as->dims[1] : as->dims[0];
    *K = mp->trans_a ? as->dims[0] : as->dims[1];
    *N = mp->trans_b ? bs->dims[0] : bs->dims[1];
    return (uint64_t)*M * (uint64_t)*N;
}

void ft_gemm_c_strides(const ft_shape *cs, int64_t M, int64_t N, int64_t *st)
{
    ft_shape os = {.rank = 2, .dims = {M, N}};
    ft_broadcast_strides(cs, &os, st);
}

int ft_matmul_batch(const ft_shape *as, const ft_shape *bs, int64_t *bdims, int64_t *sa, int64_t *sb,
                    uint64_t *nbatch, int64_t *na, int64_t *nb)
{
    int ra = as->rank > 2 ? as->rank - 2 : 0, rb = bs->rank > 2 ? bs->rank - 2 : 0;
    int r = ra > rb ? ra : rb;
    *nbatch = 1, *na = 1, *nb = 1;
    for (int i = r - 1; i >= 0; i--) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? as->dims[ia] : 1, db = ib >= 0 ? bs->dims[ib] : 1;
        bdims[i] = da > db ? da : db;
        sa[i] = da == 1 ? 0 : *na;
        sb[i] = db == 1 ? 0 : *nb;
        *na *= da;
        *nb *= db;
        *nbatch *= (uint64_t)bdims[i];
    }
    return r;
}
