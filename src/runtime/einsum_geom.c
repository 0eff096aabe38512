#include "einsum_geom.h"

#include <string.h>

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

void ft_ein_operands(int nops, const ft_view *in, int8_t (*lab)[FT_MAX_RANK], int64_t *size, ft_ein_op *ops)
{
    for (int l = 0; l < FT_EIN_NL; l++)
        size[l] = 1;
    /* A "..." dim may be 1 in one operand and larger in another: the larger wins. */
    uint64_t used = 0;
    for (int i = 0; i < nops; i++)
        for (int d = 0; d < in[i].shape.rank; d++) {
            int l = lab[i][d];
            if (!(used >> l & 1) || size[l] == 1)
                size[l] = in[i].shape.dims[d];
            used |= (uint64_t)1 << l;
        }
    for (int i = 0; i < nops; i++) {
        int64_t s = 1;
        memset(&ops[i], 0, sizeof ops[i]);
        ops[i].data = in[i].data;
        for (int d = in[i].shape.rank - 1; d >= 0; d--) {
            int l = lab[i][d];
            int64_t dim = in[i].shape.dims[d];
            if (dim == size[l]) { /* else a broadcast "..." dim of size 1: stride 0 */
                ops[i].st[l] += s;
                ops[i].has |= (uint64_t)1 << l;
            }
            s *= dim;
        }
    }
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

int ft_ein_pairwise(const int64_t *size, int nops, const ft_view *in, const ft_ein_op *ops,
                    const uint64_t *need_later, uint64_t total)
{
    uint64_t biggest = total;
    for (int i = 0; i < nops; i++)
        if (ft_numel(&in[i].shape) > biggest)
            biggest = ft_numel(&in[i].shape);
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
