/* The evaluators of load-time folding for the movement, indexing and
 * reduction ops (Unsqueeze, Squeeze, Reshape, Flatten, Concat, Slice, Expand,
 * Tile, Transpose, Gather, ReduceSum and the like): onnx_fold.c calls them
 * when every input is known (onnx_fold_int.h). */
#include "onnx.h"
#include "onnx_fold_int.h"
#include "../graph/infer_movement.h"

/* Axis list (attribute before `since`, input k from it on), normalised
 * against rank (left as given when rank < 0); *nax -1 when there is none. */
static int axes_of(onx_ctx *c, const onx_node *n, int since, int k, int rank, int64_t *ax, int *nax)
{
    const int64_t *v = NULL;
    int cnt = -1;
    if (n->opset < since)
        cnt = onx_attr_ints(n, "axes", &v);
    else {
        const ft_tensor *t = onx_in_const(c, n, k);
        if (onx_in(c, n, k) >= 0 && !t)
            return -1;
        if (t) {
            cnt = (int)ft_numel(&t->shape);
            if (cnt > FT_MAX_RANK * 2)
                return -1;
            for (int i = 0; i < cnt; i++)
                ax[i] = ft_load_i64(t->value, t->dtype, (size_t)i);
            v = ax;
        }
    }
    if (cnt < 0) {
        *nax = -1;
        return 0;
    }
    if (cnt > FT_MAX_RANK * 2)
        return -1;
    for (int i = 0; i < cnt; i++) {
        int64_t a = v[i] < 0 && rank >= 0 ? v[i] + rank : v[i];
        if (rank >= 0 && (a < 0 || a >= rank))
            return -1;
        ax[i] = a;
    }
    *nax = cnt;
    return 0;
}

/* Movement ops: out[e] = in[src(e)]. */
int onx_eval_move(onx_ctx *c, const onx_node *n, move_kind k, val *in, int nin, val *out)
{
    ft_shape s = in[0].s, os = {0};
    int r = s.rank;
    int64_t ax[FT_MAX_RANK * 2];
    int nax = 0;
    switch (k) {
    case M_CAST: { /* Cast's "to", or CastLike's second input's type */
        ft_dtype dt = nin == 2 ? in[1].dt : FT_F32;
        if (nin != 2 && (!strcmp(n->op_type, "CastLike") || ft_onnx_dtype((int32_t)onx_attr_i(n, "to", 1), &dt)))
            return 1;
        if (ft_dtype_is_lowp(dt) || dt == FT_STRING || in[0].dt == FT_STRING) /* not folded: the cast kernel rounds
                                                                               * (saturate, round_mode), formats, parses */
            return 1;
        if (val_alloc(out, dt, &s))
            return -1;
        for (uint64_t e = 0; e < out->n; e++) {
            double f = getf(&in[0], e);
            int64_t i = in[0].isf ? to_i64(f) : in[0].i[e];
            put(out, e, f, dt == FT_BOOL && in[0].isf ? (f != 0) : i);
        }
        return 0;
    }
    case M_IDENTITY:
        os = s;
        break;
    case M_UNSQUEEZE: {
        int nr = r;
        if (axes_of(c, n, 13, 1, -1, ax, &nax) || nax < 0)
            return 1;
        nr = r + nax;
        if (nr > FT_MAX_RANK)
            return 1;
        int mark[FT_MAX_RANK] = {0};
        for (int i = 0; i < nax; i++) {
            int64_t a = ax[i] < 0 ? ax[i] + nr : ax[i];
            if (a < 0 || a >= nr || mark[a])
                return 1;
            mark[a] = 1;
        }
        os.rank = nr;
        for (int d = 0, j = 0; d < nr; d++)
            os.dims[d] = mark[d] ? 1 : s.dims[j++];
        break;
    }
    case M_SQUEEZE: {
        if (axes_of(c, n, 13, 1, r, ax, &nax))
            return 1;
        int mark[FT_MAX_RANK] = {0};
        for (int i = 0; i < nax; i++)
            mark[ax[i]] = 1;
        for (int d = 0; d < r; d++) {
            if (mark[d] && s.dims[d] != 1)
                return 1; /* not folded: squeeze's inference names the axis */
            if ((nax < 0 && s.dims[d] != 1) || (nax >= 0 && !mark[d]))
                os.dims[os.rank++] = s.dims[d];
        }
        break;
    }
    case M_RESHAPE: {
        if (nin < 2 || in[1].n > FT_MAX_RANK)
            return 1;
        int neg = -1;
        uint64_t prod = 1;
        os.rank = (int)in[1].n;
        for (int d = 0; d < os.rank; d++) {
            int64_t v = geti(&in[1], (uint64_t)d);
            if (v == 0 && !onx_attr_i(n, "allowzero", 0))
                v = d < r ? s.dims[d] : -2;
            if (v == -1) {
                if (neg >= 0)
                    return 1;
                neg = d;
                v = 1;
            } else if (v < 0)
                return 1;
            os.dims[d] = v;
            prod *= (uint64_t)v;
        }
        if (neg >= 0) {
            if (prod == 0 || in[0].n % prod)
                return 1;
            os.dims[neg] = (int64_t)(in[0].n / prod);
        }
        break; /* the count is checked below (a product of huge dims wraps around) */
    }
    case M_FLATTEN: {
        int64_t a = onx_attr_i(n, "axis", 1);
        if (a < 0)
            a += r;
        if (a < 0 || a > r)
            return 1;
        os.rank = 2;
        os.dims[0] = os.dims[1] = 1;
        for (int d = 0; d < r; d++)
            os.dims[d < a ? 0 : 1] *= s.dims[d];
        break;
    }
    }
    /* a reshape-like op: same elements, new shape (a squeeze of an axis that
     * is not 1, say, changes the count: not folded, the node's inference says why) */
    uint64_t cnt;
    if (ft_shape_numel(&os, &cnt) || cnt != in[0].n)
        return 1;
    if (val_alloc(out, in[0].dt, &os))
        return -1;
    for (uint64_t e = 0; e < out->n; e++)
        copy_el(out, e, &in[0], e);
    return 0;
}

int onx_eval_index(onx_ctx *c, const onx_node *n, index_kind k, val *in, int nin, val *out)
{
    ft_shape s = in[0].s, os = s;
    int r = s.rank;
    int64_t co[FT_MAX_RANK], ic[FT_MAX_RANK], st[FT_MAX_RANK];
    ft_strides(&s, st);
    if (k == X_GATHER) {
        if (nin != 2)
            return 1;
        int64_t a = onx_attr_i(n, "axis", 0);
        if (a < 0)
            a += r;
        if (a < 0 || a >= r || r - 1 + in[1].s.rank > FT_MAX_RANK)
            return 1;
        os.rank = 0;
        for (int d = 0; d < a; d++)
            os.dims[os.rank++] = s.dims[d];
        for (int d = 0; d < in[1].s.rank; d++)
            os.dims[os.rank++] = in[1].s.dims[d];
        for (int d = (int)a + 1; d < r; d++)
            os.dims[os.rank++] = s.dims[d];
        if (!shape_ok(&os, FOLD_MAX_ELEMS) || val_alloc(out, in[0].dt, &os))
            return 1;
        int qr = in[1].s.rank;
        for (uint64_t e = 0; e < out->n; e++) {
            unravel(e, &os, co);
            uint64_t qi = 0;
            for (int d = 0; d < qr; d++)
                qi = qi * (uint64_t)in[1].s.dims[d] + (uint64_t)co[a + d];
            int64_t idx = geti(&in[1], qi);
            if (idx < 0)
                idx += s.dims[a];
            if (idx < 0 || idx >= s.dims[a])
                return -4;
            for (int d = 0; d < a; d++)
                ic[d] = co[d];
            ic[a] = idx;
            for (int d = (int)a + 1; d < r; d++)
                ic[d] = co[d - 1 + qr];
            copy_el(out, e, &in[0], ravel(ic, st, r));
        }
        return 0;
    }
    if (k == X_CONCAT) {
        int64_t a = onx_attr_i(n, "axis", 0);
        if (a < 0)
            a += r;
        if (a < 0 || a >= r)
            return 1;
        os.dims[a] = 0;
        for (int i = 0; i < nin; i++) {
            if (in[i].s.rank != r || in[i].dt != in[0].dt)
                return 1;
            for (int d = 0; d < r; d++)
                if (d != a && in[i].s.dims[d] != s.dims[d])
                    return 1;
            os.dims[a] += in[i].s.dims[a];
        }
        if (!shape_ok(&os, FOLD_MAX_ELEMS) || val_alloc(out, in[0].dt, &os))
            return 1;
        for (uint64_t e = 0; e < out->n; e++) {
            unravel(e, &os, co);
            int i = 0;
            while (co[a] >= in[i].s.dims[a])
                co[a] -= in[i++].s.dims[a];
            int64_t ist[FT_MAX_RANK];
            ft_strides(&in[i].s, ist);
            copy_el(out, e, &in[i], ravel(co, ist, r));
        }
        return 0;
    }
    if (k == X_SLICE) {
        int64_t start[FT_MAX_RANK], step[FT_MAX_RANK];
        for (int d = 0; d < r; d++)
            start[d] = 0, step[d] = 1;
        const int64_t *sv, *ev, *av = NULL, *pv = NULL;
        int ns, ne, na = -1, np = -1;
        int64_t buf[4][FT_MAX_RANK];
        if (n->opset < 10) {
            ns = onx_attr_ints(n, "starts", &sv);
            ne = onx_attr_ints(n, "ends", &ev);
            na = onx_attr_ints(n, "axes", &av);
        } else {
            int cnt[4] = {-1, -1, -1, -1};
            for (int i = 1; i < nin && i < 5; i++) {
                if (in[i].n > FT_MAX_RANK)
                    return 1;
                cnt[i - 1] = (int)in[i].n;
                for (uint64_t j = 0; j < in[i].n; j++)
                    buf[i - 1][j] = geti(&in[i], j);
            }
            sv = buf[0], ev = buf[1], ns = cnt[0], ne = cnt[1];
            if (cnt[2] >= 0)
                av = buf[2], na = cnt[2];
            if (cnt[3] >= 0)
                pv = buf[3], np = cnt[3];
        }
        if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (np >= 0 && np != ns) || ns > r)
            return 1;
        for (int i = 0; i < ns; i++) {
            int64_t a = av ? av[i] : i;
            if (a < 0)
                a += r;
            if (a < 0 || a >= r)
                return 1;
            int64_t p = pv ? pv[i] : 1;
            if (p == 0)
                return 1;
            os.dims[a] = ft_slice_len(s.dims[a], sv[i], ev[i], p);
            int64_t b = ft_slice_first(s.dims[a], sv[i], p);
            start[a] = b;
            step[a] = p;
        }
        if (!shape_ok(&os, FOLD_MAX_ELEMS) || val_alloc(out, in[0].dt, &os))
            return 1;
        for (uint64_t e = 0; e < out->n; e++) {
            unravel(e, &os, co);
            for (int d = 0; d < r; d++)
                ic[d] = start[d] + co[d] * step[d];
            copy_el(out, e, &in[0], ravel(ic, st, r));
        }
        return 0;
    }
    if (k == X_EXPAND || k == X_TILE) {
        if (nin < 2 || in[1].n > FT_MAX_RANK)
            return 1;
        ft_shape t = {.rank = (int)in[1].n};
        for (int d = 0; d < t.rank; d++)
            t.dims[d] = geti(&in[1], (uint64_t)d);
        if (k == X_EXPAND) {
            if (ft_broadcast(&s, &t, &os))
                return 1;
        } else {
            if (t.rank != r)
                return 1;
            for (int d = 0; d < r; d++) {
                if (t.dims[d] < 0 || __builtin_mul_overflow(s.dims[d], t.dims[d], &os.dims[d]))
                    return 1; /* not folded: the node's own inference says what is wrong */
            }
        }
        if (!shape_ok(&os, FOLD_MAX_ELEMS) || val_alloc(out, in[0].dt, &os))
            return 1;
        int64_t bst[FT_MAX_RANK];
        if (k == X_EXPAND)
            ft_broadcast_strides(&s, &os, bst);
        for (uint64_t e = 0; e < out->n; e++) {
            unravel(e, &os, co);
            if (k == X_EXPAND)
                copy_el(out, e, &in[0], ravel(co, bst, os.rank));
            else {
                for (int d = 0; d < r; d++)
                    ic[d] = co[d] % s.dims[d];
                copy_el(out, e, &in[0], ravel(ic, st, r));
            }
        }
        return 0;
    }
    if (k == X_TRANSPOSE) {
        int64_t perm[FT_MAX_RANK];
        const int64_t *pv;
        int np = onx_attr_ints(n, "perm", &pv);
        if (np >= 0 && np != r)
            return 1;
        int seen[FT_MAX_RANK] = {0};
        for (int d = 0; d < r; d++) {
            perm[d] = np >= 0 ? pv[d] : r - 1 - d;
            if (perm[d] < 0)
                perm[d] += r;
            if (perm[d] < 0 || perm[d] >= r || seen[perm[d]]++)
                return 1;
            os.dims[d] = s.dims[perm[d]];
        }
        if (val_alloc(out, in[0].dt, &os))
            return -1;
        for (uint64_t e = 0; e < out->n; e++) {
            unravel(e, &os, co);
            for (int d = 0; d < r; d++)
                ic[perm[d]] = co[d];
            copy_el(out, e, &in[0], ravel(ic, st, r));
        }
        return 0;
    }
    return 1;
}

int onx_eval_reduce(onx_ctx *c, const onx_node *n, val *in, val *out)
{
    const char *op = n->op_type;
    int r = in[0].s.rank;
    int64_t ax[FT_MAX_RANK * 2];
    int nax;
    if (axes_of(c, n, !strcmp(op, "ReduceSum") ? 13 : 18, 1, r, ax, &nax))
        return 1;
    if (nax <= 0 && onx_attr_i(n, "noop_with_empty_axes", 0)) {
        if (val_alloc(out, in[0].dt, &in[0].s))
            return -1;
        for (uint64_t e = 0; e < out->n; e++)
            copy_el(out, e, &in[0], e);
        return 0;
    }
    int red[FT_MAX_RANK] = {0};
    for (int d = 0; d < r; d++)
        red[d] = nax <= 0;
    for (int i = 0; i < nax; i++)
        red[ax[i]] = 1;
    int keep = (int)onx_attr_i(n, "keepdims", 1);
    ft_shape os = {0}, ks = in[0].s;
    for (int d = 0; d < r; d++) {
        if (red[d])
            ks.dims[d] = 1;
        if (!red[d] || keep)
            os.dims[os.rank++] = red[d] ? 1 : in[0].s.dims[d];
    }
    if ((!strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin")) && in[0].n == 0)
        return 1;
    if (val_alloc(out, in[0].dt, &os))
        return -1;
    int64_t kst[FT_MAX_RANK], co[FT_MAX_RANK];
    ft_strides(&ks, kst);
    int prod = !strcmp(op, "ReduceProd"), mx = !strcmp(op, "ReduceMax"), mn = !strcmp(op, "ReduceMin");
    uint8_t *seen = ft_calloc((size_t)(out->n ? out->n : 1), 1);
    if (!seen)
        return -1;
    for (uint64_t e = 0; e < out->n; e++)
        put(out, e, prod, prod);
    for (uint64_t e = 0; e < in[0].n; e++) {
        unravel(e, &in[0].s, co);
        for (int d = 0; d < r; d++)
            if (red[d])
                co[d] = 0;
        uint64_t o = ravel(co, kst, r);
        double f = getf(&in[0], e), of = getf(out, o);
        int64_t i = geti(&in[0], e), oi = geti(out, o);
        if (mx || mn) {
            if (!seen[o] || (mx ? (in[0].isf ? f > of : i > oi) : (in[0].isf ? f < of : i < oi)))
                put(out, o, f, i);
        } else if (prod)
            put(out, o, of * f, (int64_t)((uint64_t)oi * (uint64_t)i));
        else
            put(out, o, of + f, (int64_t)((uint64_t)oi + (uint64_t)i));
        seen[o] = 1;
    }
    free(seen);
    return 0;
}
