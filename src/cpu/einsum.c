/* CPU kernel of einsum (ONNX Einsum / numpy.einsum), f32 and f64.
 *
 * Every operand is seen as a strided view with one stride per label: a label
 * repeated within an operand (a diagonal) gets the sum of its dims' strides, and
 * a "..." dim of size 1 broadcast against a larger one gets stride 0. Two ways
 * to evaluate:
 *   - contraction: operands are contracted pairwise, left to right; each pair
 *     is a batched matrix product C[b,m,n] = sum_k A[b,m,k] B[b,k,n] after
 *     grouping labels (b: in both and still needed, m/n: in one and needed,
 *     k: in both and not needed; labels only in one operand and not needed are
 *     summed away while packing). Large products go to OpenBLAS, with no copy
 *     when an operand is already laid out as [b,m,k] or [b,k,m]; small ones to
 *     the loop below.
 *   - the loop: for each output element, the sum over every summed label of
 *     the product of the operands, accumulated in double. Used for one
 *     operand (diagonal, trace, sums) and when a pairwise intermediate would
 *     be much larger than the inputs and the output. A pure relabelling of
 *     one operand (a transpose) is copied in tiles instead.
 * Letters never broadcast (inference requires one size per letter); "..."
 * dims do, NumPy style.
 */
#include "cpu.h"
#include "../graph/infer_misc.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Declared by OpenBLAS's cblas.h; repeated because other cblas headers lack it. */
void openblas_set_num_threads(int);

typedef struct {
    ft_kctx *k;
    const ft_node *n;
    ft_dtype dt;
    size_t es;
    int64_t size[FT_EIN_NL];
} ein_ctx;

/* ------------------------------------------------------------------ the loop */

/* One step of the odometer idx over the labels lab[0..nd) (the last the
 * fastest), moving each operand's offset off[i] with it. */
static inline void ein_step(const ein_ctx *e, int nops, const ft_ein_op *ops, const int8_t *lab, int nd, int64_t *idx,
                            int64_t *off)
{
    for (int d = nd - 1; d >= 0; d--) {
        int l = lab[d];
        if (++idx[d] < e->size[l]) {
            for (int i = 0; i < nops; i++)
                off[i] += ops[i].st[l];
            return;
        }
        idx[d] = 0;
        for (int i = 0; i < nops; i++)
            off[i] -= (e->size[l] - 1) * ops[i].st[l];
    }
}

/* dst (contiguous, labels olab[0..no) in that order) = sum over the labels
 * slab[0..ns) of the product of the operands, accumulated in double. */
#define EIN_LOOP_DEF(NAME, T)                                                                                      \
    static void NAME(const ein_ctx *e, int nops, const ft_ein_op *ops, const int8_t *olab, int no,                 \
                     const int8_t *slab, int ns, T *dst)                                                           \
    {                                                                                                              \
        uint64_t total = ft_ein_numel(e->size, olab, no);                                                          \
        uint64_t sum = ft_ein_numel(e->size, slab, ns);                                                            \
        if (total == 0)                                                                                            \
            return;                                                                                                \
        /* The innermost summed label runs as a tight loop; the others by odometer. */                             \
        int64_t inner = ns ? e->size[slab[ns - 1]] : 1;                                                            \
        uint64_t outer_sum = ns && inner ? sum / (uint64_t)inner : (ns ? 0 : 1);                                   \
        int64_t ist[FT_EIN_MAXOPS];                                                                                \
        for (int i = 0; i < nops; i++)                                                                             \
            ist[i] = ns ? ops[i].st[slab[ns - 1]] : 0;                                                             \
        uint64_t work = total * (sum ? sum : 1) * (uint64_t)nops;                                                  \
        int par = e->k->threads > 1 && work >= CPU_PAR_MIN && total > 1;                                           \
        _Pragma("omp parallel num_threads(e->k->threads) if (par)")                                                \
        {                                                                                                          \
            int nth = 1, tid = 0;                                                                                  \
            EIN_THREAD_ID(nth, tid);                                                                               \
            uint64_t lo = total * (uint64_t)tid / (uint64_t)nth, hi = total * (uint64_t)(tid + 1) / (uint64_t)nth; \
            int64_t oi[FT_MAX_RANK + FT_EIN_NL], si[FT_EIN_NL];                                                    \
            int64_t off[FT_EIN_MAXOPS], so[FT_EIN_MAXOPS];                                                         \
            uint64_t rem = lo;                                                                                     \
            for (int d = no - 1; d >= 0; d--) {                                                                    \
                oi[d] = (int64_t)(rem % (uint64_t)e->size[olab[d]]);                                               \
                rem /= (uint64_t)e->size[olab[d]];                                                                 \
            }                                                                                                      \
            for (int i = 0; i < nops; i++) {                                                                       \
                off[i] = 0;                                                                                        \
                for (int d = 0; d < no; d++)                                                                       \
                    off[i] += oi[d] * ops[i].st[olab[d]];                                                          \
            }                                                                                                      \
            for (uint64_t t = lo; t < hi; t++) {                                                                   \
                double acc = 0;                                                                                    \
                if (!ns) {                                                                                         \
                    acc = 1;                                                                                       \
                    for (int i = 0; i < nops; i++)                                                                 \
                        acc *= (double)((const T *)ops[i].data)[off[i]];                                           \
                } else if (outer_sum) {                                                                            \
                    for (int d = 0; d < ns - 1; d++)                                                               \
                        si[d] = 0;                                                                                 \
                    for (int i = 0; i < nops; i++)                                                                 \
                        so[i] = off[i];                                                                            \
                    for (uint64_t s = 0; s < outer_sum; s++) {                                                     \
                        if (nops == 2) {                                                                           \
                            const T *a = (const T *)ops[0].data + so[0], *b = (const T *)ops[1].data + so[1];      \
                            int64_t sa = ist[0], sb = ist[1];                                                      \
                            for (int64_t j = 0; j < inner; j++)                                                    \
                                acc += (double)a[j * sa] * (double)b[j * sb];                                      \
                        } else if (nops == 1) {                                                                    \
                            const T *a = (const T *)ops[0].data + so[0];                                           \
                            int64_t sa = ist[0];                                                                   \
                            for (int64_t j = 0; j < inner; j++)                                                    \
                                acc += (double)a[j * sa];                                                          \
                        } else {                                                                                   \
                            for (int64_t j = 0; j < inner; j++) {                                                  \
                                double p = 1;                                                                      \
                                for (int i = 0; i < nops; i++)                                                     \
                                    p *= (double)((const T *)ops[i].data)[so[i] + j * ist[i]];                     \
                                acc += p;                                                                          \
                            }                                                                                      \
                        }                                                                                          \
                        ein_step(e, nops, ops, slab, ns - 1, si, so);                                              \
                    }                                                                                              \
                }                                                                                                  \
                dst[t] = (T)acc;                                                                                   \
                ein_step(e, nops, ops, olab, no, oi, off);                                                         \
            }                                                                                                      \
        }                                                                                                          \
    }

#ifdef _OPENMP
#define EIN_THREAD_ID(nth, tid) (nth = omp_get_num_threads(), tid = omp_get_thread_num())
#else
#define EIN_THREAD_ID(nth, tid) ((void)0)
#endif

EIN_LOOP_DEF(ein_loop_f32, float)
EIN_LOOP_DEF(ein_loop_f64, double)

static void ein_loop(const ein_ctx *e, int nops, const ft_ein_op *ops, const int8_t *olab, int no, const int8_t *slab,
                     int ns, void *dst)
{
    if (e->dt == FT_F32)
        ein_loop_f32(e, nops, ops, olab, no, slab, ns, dst);
    else
        ein_loop_f64(e, nops, ops, olab, no, slab, ns, dst);
}

/* A pure relabelling of one operand (transpose, diagonal, broadcast) into dst,
 * in tiles: the output's last label and the label the input is densest along
 * are walked 32 x 32 at a time, so that neither side strides through memory a
 * whole row at a time. Returns 0 (and does nothing) when the plain loop already
 * reads along the output's rows. */
static int ein_permute(const ein_ctx *e, const ft_ein_op *op, const int8_t *olab, int no, void *dst)
{
    if (no < 2)
        return 0;
    int p = olab[no - 1], qi = -1;
    for (int d = 0; d < no - 1; d++) {
        int l = olab[d];
        if (e->size[l] > 1 && op->st[l] != 0 && (qi < 0 || op->st[l] < op->st[olab[qi]]))
            qi = d;
    }
    if (qi < 0 || e->size[p] <= 1 || op->st[p] <= op->st[olab[qi]])
        return 0;
    int q = olab[qi];
    int64_t os[FT_MAX_RANK + FT_EIN_NL], s = 1;
    for (int d = no - 1; d >= 0; d--)
        os[d] = s, s *= e->size[olab[d]];
    int8_t rest[FT_MAX_RANK + FT_EIN_NL];
    int64_t rdst[FT_MAX_RANK + FT_EIN_NL];
    int nr = 0;
    uint64_t R = 1;
    for (int d = 0; d < no - 1; d++)
        if (d != qi) {
            rdst[nr] = os[d];
            rest[nr++] = olab[d];
            R *= (uint64_t)e->size[olab[d]];
        }
    const int TB = 32;
    int64_t P = e->size[p], Q = e->size[q], sp = op->st[p], sq = op->st[q], oq = os[qi];
    int64_t nqt = (Q + TB - 1) / TB;
    int64_t tasks = (int64_t)R * nqt;
    size_t es = e->es;
    int par = e->k->threads > 1 && R * (uint64_t)(P * Q) >= CPU_PAR_MIN;
#pragma omp parallel for num_threads(e->k->threads) schedule(static) if (par)
    for (int64_t t = 0; t < tasks; t++) {
        uint64_t r = (uint64_t)(t / nqt);
        int64_t q0 = (t % nqt) * TB, q1 = q0 + TB < Q ? q0 + TB : Q;
        int64_t so = 0, doff = 0;
        for (int d = nr - 1; d >= 0; d--) {
            int64_t i = (int64_t)(r % (uint64_t)e->size[rest[d]]);
            r /= (uint64_t)e->size[rest[d]];
            so += i * op->st[rest[d]];
            doff += i * rdst[d];
        }
        for (int64_t p0 = 0; p0 < P; p0 += TB) {
            int64_t p1 = p0 + TB < P ? p0 + TB : P;
            for (int64_t iq = q0; iq < q1; iq++) {
                int64_t sb = so + iq * sq, db = doff + iq * oq;
                if (es == 4)
                    for (int64_t ip = p0; ip < p1; ip++)
                        ((uint32_t *)dst)[db + ip] = ((const uint32_t *)op->data)[sb + ip * sp];
                else
                    for (int64_t ip = p0; ip < p1; ip++)
                        ((uint64_t *)dst)[db + ip] = ((const uint64_t *)op->data)[sb + ip * sp];
            }
        }
    }
    return 1;
}

/* dst in the label order olab = op relabelled (no summation). */
static void ein_copy(const ein_ctx *e, const ft_ein_op *op, const int8_t *olab, int no, void *dst)
{
    if (!ein_permute(e, op, olab, no, dst))
        ein_loop(e, 1, op, olab, no, NULL, 0, dst);
}

/* ------------------------------------------------------------ contraction */

/* One row-major product C[m,n] = op(A) op(B) (beta 0). Sizes fit in int.
 * f32 through cpu_sgemm (blas.c); 0 or its error code. */
static int gemm_one(ft_dtype dt, int ta, int tb, int m, int n, int k, const void *a, int lda, const void *b, int ldb,
                    void *c)
{
    if (dt == FT_F32)
        return cpu_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
    enum CBLAS_TRANSPOSE tA = ta ? CblasTrans : CblasNoTrans;
    /* Vector shapes go to gemv, which OpenBLAS runs much faster than a
     * degenerate gemm; gemv's beta=0 may keep NaN garbage in y, hence the clear. */
    if (m == 1 || n == 1)
        memset(c, 0, (size_t)m * (size_t)n * 8);
    if (m == 1)
        cblas_dgemv(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? n : k, tb ? k : n, 1.0, b, ldb, a,
                    ta ? lda : 1, 0.0, c, 1);
    else if (n == 1)
        cblas_dgemv(CblasRowMajor, tA, ta ? k : m, ta ? m : k, 1.0, a, lda, b, tb ? 1 : ldb, 0.0, c, 1);
    else
        cblas_dgemm(CblasRowMajor, tA, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
    return 0;
}

/* 1 when op's values are laid out contiguously in the label order lab. */
static int contiguous(const ein_ctx *e, const ft_ein_op *op, const int8_t *lab, int nl)
{
    int64_t want = 1;
    for (int i = nl - 1; i >= 0; i--) {
        int l = lab[i];
        if (e->size[l] == 1)
            continue;
        if (op->st[l] != want)
            return 0;
        want *= e->size[l];
    }
    return 1;
}

/* op's data where it is laid out as [b,x,y] (*t 0) or [b,y,x] (*t 1) over
 * the labels bl, xl and yl; NULL where it is neither (then it is packed). */
static const char *laid_out(const ein_ctx *e, const ft_ein_op *op, const int8_t *bl, int nb, const int8_t *xl, int nx,
                            const int8_t *yl, int ny, int *t)
{
    int8_t seq[FT_EIN_NL];
    memcpy(seq, bl, (size_t)nb), memcpy(seq + nb, xl, (size_t)nx), memcpy(seq + nb + nx, yl, (size_t)ny);
    if (contiguous(e, op, seq, nb + nx + ny))
        return op->data;
    memcpy(seq + nb, yl, (size_t)ny), memcpy(seq + nb + ny, xl, (size_t)nx);
    if (!contiguous(e, op, seq, nb + nx + ny))
        return NULL;
    *t = 1;
    return op->data;
}

static int fits_int(uint64_t v) { return v <= (uint64_t)INT_MAX; }

/* Contracts a and b, keeping the labels of `keep`. The result goes to dst in
 * the label order res (nres labels, exactly the kept labels of a and b) when
 * res is given; otherwise into a new buffer (*owned) in an order chosen here,
 * described by *r. */
static ft_status ein_pair(ein_ctx *e, const ft_ein_op *a, const ft_ein_op *b, uint64_t keep, const int8_t *res,
                          int nres, void *dst, ft_ein_op *r, void **owned)
{
    ft_status st = FT_OK;
    ft_ein_pair_plan g;
    ft_ein_pair_labels(e->size, a, b, keep, res, nres, &g);
    int8_t *bl = g.bl, *ml = g.ml, *nl = g.nl, *kl = g.kl, *cl = g.cl;
    int nb = g.nb, nm = g.nm, nn = g.nn, nk = g.nk, nc = g.nc;
    uint64_t mk = g.mk, sa = g.sa, sb = g.sb, BT = g.BT, M = g.M, N = g.N, K = g.K;
    uint64_t cnt = BT * M * N;
    if (!res) {
        *owned = ft_malloc(cnt ? (size_t)cnt * e->es : 1);
        if (!*owned)
            return ft_node_err(e->k->err, FT_ERUNTIME, e->k->g, e->n, "out of memory: einsum intermediate of %llu "
                               "elements", (unsigned long long)cnt);
        dst = *owned;
        res = cl, nres = nc;
        ft_ein_set_layout(e->size, r, dst, cl, nc);
    }
    if (cnt == 0)
        return FT_OK;
    if (K == 0) {
        memset(dst, 0, (size_t)cnt * e->es);
        return FT_OK;
    }
    int use_gemm = ft_ein_gemm_worth(BT, M, N, K) && fits_int(M) && fits_int(N) && fits_int(K) && fits_int(M * K) &&
                   fits_int(K * N);
    if (!use_gemm) {
        ft_ein_op two[2] = {*a, *b};
        int8_t sum[FT_EIN_NL];
        int ns = ft_ein_mask_labels(mk | sa | sb, sum);
        ein_loop(e, 2, two, res, nres, sum, ns, dst);
        return FT_OK;
    }
    /* C^T = B^T A^T: swapping the operands turns an output ordered [b,n,m] into a direct write. */
    if (nc == nres && memcmp(cl, res, (size_t)nc) != 0) {
        int8_t alt[FT_EIN_NL];
        memcpy(alt, bl, (size_t)nb);
        memcpy(alt + nb, nl, (size_t)nn);
        memcpy(alt + nb + nn, ml, (size_t)nm);
        if (memcmp(alt, res, (size_t)nc) == 0) {
            const ft_ein_op *t = a;
            a = b, b = t;
            uint64_t tm = sa;
            sa = sb, sb = tm;
            int8_t tl[FT_EIN_NL];
            memcpy(tl, ml, (size_t)nm), memcpy(ml, nl, (size_t)nn), memcpy(nl, tl, (size_t)nm);
            int ti = nm;
            nm = nn, nn = ti;
            uint64_t tu = M;
            M = N, N = tu;
            memcpy(cl, alt, (size_t)nc);
        }
    }
    int direct_c = nc == nres && memcmp(cl, res, (size_t)nc) == 0;
    /* A as [b,m,k] or [b,k,m]; B as [b,k,n] or [b,n,k]; else packed. */
    int8_t seq[FT_EIN_NL];
    const char *A = NULL, *B = NULL;
    int ta = 0, tb = 0;
    void *pa = NULL, *pb = NULL, *pc = NULL;
    if (!sa)
        A = laid_out(e, a, bl, nb, ml, nm, kl, nk, &ta);
    if (!sb)
        B = laid_out(e, b, bl, nb, kl, nk, nl, nn, &tb);
    if (!A || !B || !direct_c) {
        pa = !A ? ft_malloc((size_t)(BT * M * K) * e->es) : NULL;
        pb = !B ? ft_malloc((size_t)(BT * K * N) * e->es) : NULL;
        pc = !direct_c ? ft_malloc((size_t)cnt * e->es) : NULL;
        if ((!A && !pa) || (!B && !pb) || (!direct_c && !pc)) {
            st = ft_node_err(e->k->err, FT_ERUNTIME, e->k->g, e->n, "out of memory packing einsum operands "
                             "(%llu x %llu x %llu x %llu)", (unsigned long long)BT, (unsigned long long)M,
                             (unsigned long long)K, (unsigned long long)N);
            goto done;
        }
    }
    int8_t sum[FT_EIN_NL];
    if (!A) {
        memcpy(seq, bl, (size_t)nb), memcpy(seq + nb, ml, (size_t)nm), memcpy(seq + nb + nm, kl, (size_t)nk);
        ein_loop(e, 1, a, seq, nb + nm + nk, sum, ft_ein_mask_labels(sa, sum), pa);
        A = pa, ta = 0;
    }
    if (!B) {
        memcpy(seq, bl, (size_t)nb), memcpy(seq + nb, kl, (size_t)nk), memcpy(seq + nb + nk, nl, (size_t)nn);
        ein_loop(e, 1, b, seq, nb + nk + nn, sum, ft_ein_mask_labels(sb, sum), pb);
        B = pb, tb = 0;
    }
    char *C = direct_c ? dst : pc;
    {
        int m = (int)M, nn_ = (int)N, kk = (int)K;
        int lda = ta ? m : kk, ldb = tb ? kk : nn_;
        size_t amat = (size_t)(M * K) * e->es, bmat = (size_t)(K * N) * e->es, cmat = (size_t)(M * N) * e->es;
        uint64_t work = M * N * K;
        int par = e->k->threads > 1 && BT >= 2 && work < (1u << 21) && work * BT >= (1u << 18), brc = 0;
        openblas_set_num_threads(par ? 1 : e->k->threads);
#pragma omp parallel for num_threads(e->k->threads) schedule(static) if (par)
        for (int64_t t = 0; t < (int64_t)BT; t++) {
            int rc = gemm_one(e->dt, ta, tb, m, nn_, kk, A + (size_t)t * amat, lda, B + (size_t)t * bmat, ldb,
                              C + (size_t)t * cmat);
            if (rc) {
#pragma omp atomic write
                brc = rc;
            }
        }
        openblas_set_num_threads(e->k->threads);
        if (brc) {
            st = cpu_blas_error(e->k, e->n, brc);
            goto done;
        }
    }
    if (!direct_c) {
        ft_ein_op c;
        ft_ein_set_layout(e->size, &c, pc, cl, nc);
        ein_copy(e, &c, res, nres, dst);
    }
done:
    free(pa);
    free(pb);
    free(pc);
    return st;
}

ft_status cpu_einsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int nops = n->n_in;
    ein_ctx e = {.k = k, .n = n, .dt = in[0].dtype, .es = ft_dtype_size(in[0].dtype)};
    const ft_shape *shapes[FT_EIN_MAXOPS];
    const void *data[FT_EIN_MAXOPS];
    ft_views_split(in, nops < FT_EIN_MAXOPS ? nops : FT_EIN_MAXOPS, shapes, data);
    int8_t olab[FT_MAX_RANK];
    int no;
    char msg[1024];
    ft_ein_op *ops = ft_calloc((size_t)nops, sizeof *ops);
    if (!ops)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory");
    if (ft_ein_views(&n->params.matmul.ein, nops, shapes, data, olab, &no, e.size, ops, msg, sizeof msg)) {
        free(ops);
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "%s", msg);
    }
    uint64_t need_later[FT_EIN_MAXOPS + 1];
    uint64_t outm = ft_ein_need_later(nops, ops, olab, no, need_later);
    ft_status st = FT_OK;
    uint64_t total = ft_numel(&out[0].shape);
    if (total == 0)
        goto done;
    if (!ft_ein_pairwise(e.size, nops, shapes, ops, need_later, total)) {
        int8_t sl[FT_EIN_NL];
        int ns = ft_ein_mask_labels(need_later[0] & ~outm, sl);
        if (nops == 1 && ns == 0)
            ein_copy(&e, &ops[0], olab, no, out[0].data);
        else
            ein_loop(&e, nops, ops, olab, no, sl, ns, out[0].data);
        goto done;
    }
    ft_ein_op acc = ops[0];
    void *held = NULL;
    for (int i = 1; i < nops && !st; i++) {
        void *owned = NULL;
        ft_ein_op r;
        if (i == nops - 1)
            st = ein_pair(&e, &acc, &ops[i], outm, olab, no, out[0].data, NULL, NULL);
        else
            st = ein_pair(&e, &acc, &ops[i], need_later[i + 1], NULL, 0, NULL, &r, &owned);
        free(held);
        held = owned;
        if (!st && i < nops - 1)
            acc = r;
    }
    free(held);
done:
    free(ops);
    return st;
}
