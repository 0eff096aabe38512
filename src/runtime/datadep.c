/* The data-dependent ops on host memory (datadep.h). */
#include "datadep.h"

#include <stdlib.h>
#include <string.h>

#include "../common.h"
#include "../graph/dtype_load.h"
#include "../graph/graph.h"
#include "../graph/image_codec.h"

int64_t ft_dd_non_zero(const void *x, ft_dtype dt, const ft_shape *s, int64_t *out)
{
    int64_t numel = (int64_t)ft_numel(s), n = 0;
    size_t es = ft_dtype_size(dt);
    const unsigned char *p = (const unsigned char *)x;
    static const unsigned char zero[16];
    /* nonzero: any bit set, but for floats -0.0, which is zero */
    for (int64_t i = 0; i < numel; i++)
        n += ft_dtype_is_float(dt) ? ft_ld_f64(x, dt, i) != 0 : memcmp(p + (size_t)i * es, zero, es) != 0;
    int rank = s->rank;
    int64_t k = 0;
    for (int64_t i = 0; i < numel; i++) {
        if (ft_dtype_is_float(dt) ? ft_ld_f64(x, dt, i) == 0 : memcmp(p + (size_t)i * es, zero, es) == 0)
            continue;
        if (rank == 0) /* a scalar: one row, index 0 */
            out[k] = 0;
        int64_t r = i; /* element i's row-major index, last dim first */
        for (int d = rank - 1; d >= 0; d--) {
            out[(int64_t)d * n + k] = s->dims[d] ? r % s->dims[d] : 0;
            r = s->dims[d] ? r / s->dims[d] : 0;
        }
        k++;
    }
    return n;
}

int64_t ft_dd_compress(const void *x, size_t esize, const ft_shape *s, int axis, const uint8_t *cond, int64_t clen,
                       void *y, int64_t *bad)
{
    int64_t outer = 1, dim = (int64_t)ft_numel(s), inner = 1;
    if (axis >= 0) {
        dim = s->dims[axis];
        for (int d = 0; d < axis; d++)
            outer *= s->dims[d];
        for (int d = axis + 1; d < s->rank; d++)
            inner *= s->dims[d];
    }
    int64_t n = 0;
    for (int64_t k = 0; k < clen; k++) {
        if (!cond[k])
            continue;
        if (k >= dim) {
            *bad = k;
            return -1;
        }
        n++;
    }
    size_t row = (size_t)inner * esize;
    const char *src = (const char *)x;
    char *dst = (char *)y;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < clen && k < dim; k++)
            if (cond[k]) {
                memcpy(dst, src + ((size_t)o * (size_t)dim + (size_t)k) * row, row);
                dst += row;
            }
    return n;
}

/* Slice k of x as [outer, dim, inner] holds elements (o, k, i). */
typedef struct {
    const void *x;
    ft_dtype dt;
    int64_t outer, dim, inner;
} slices;

static int cmp_elem(const slices *v, int64_t a, int64_t b)
{
    if (ft_dtype_is_float(v->dt)) {
        /* NaN after every number and equal to NaN (NumPy's unique, equal_nan) */
        double p = ft_ld_f64(v->x, v->dt, a), q = ft_ld_f64(v->x, v->dt, b);
        if (p != p || q != q)
            return (p != p) - (q != q);
        return p < q ? -1 : p > q;
    }
    if (v->dt == FT_U64) {
        uint64_t p = ((const uint64_t *)v->x)[a], q = ((const uint64_t *)v->x)[b];
        return p < q ? -1 : p > q;
    }
    int64_t p = ft_ld_int(v->x, v->dt, a), q = ft_ld_int(v->x, v->dt, b);
    return p < q ? -1 : p > q;
}

static int cmp_slice(const slices *v, int64_t ka, int64_t kb)
{
    for (int64_t o = 0; o < v->outer; o++)
        for (int64_t i = 0; i < v->inner; i++) {
            int64_t base = o * v->dim * v->inner + i;
            int c = cmp_elem(v, base + ka * v->inner, base + kb * v->inner);
            if (c)
                return c;
        }
    return 0;
}

/* Stable merge sort of the slice numbers a[0..n-1] (tmp: n scratch). */
static void sort_slices(const slices *v, int64_t *a, int64_t *tmp, int64_t n)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    sort_slices(v, a, tmp, h);
    sort_slices(v, a + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_slice(v, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, (size_t)n * sizeof *a);
}

int64_t ft_dd_unique(const void *x, ft_dtype dt, const ft_shape *s, int axis, int sorted, void *y, int64_t *first,
                     int64_t *inverse, int64_t *count)
{
    slices v = {x, dt, 1, (int64_t)ft_numel(s), 1};
    if (axis >= 0) {
        v.dim = s->dims[axis];
        for (int d = 0; d < axis; d++)
            v.outer *= s->dims[d];
        for (int d = axis + 1; d < s->rank; d++)
            v.inner *= s->dims[d];
    }
    int64_t n = v.dim, m = n ? n : 1;
    int64_t *ord = (int64_t *)ft_malloc((size_t)m * sizeof(int64_t)), *tmp = (int64_t *)ft_malloc((size_t)m * sizeof(int64_t));
    int64_t *grp = (int64_t *)ft_malloc((size_t)m * sizeof(int64_t)), *head = (int64_t *)ft_malloc((size_t)m * sizeof(int64_t));
    int64_t *rank = (int64_t *)ft_malloc((size_t)m * sizeof(int64_t));
    int64_t u = -1;
    if (!ord || !tmp || !grp || !head || !rank)
        goto out;
    for (int64_t k = 0; k < n; k++)
        ord[k] = k;
    sort_slices(&v, ord, tmp, n);
    /* groups in sorted order; the stable sort puts each group's first
     * occurrence first */
    u = 0;
    for (int64_t j = 0; j < n; j++) {
        if (j == 0 || cmp_slice(&v, ord[j - 1], ord[j]) != 0)
            head[u++] = ord[j];
        grp[ord[j]] = u - 1;
    }
    /* rank[g]: where sorted group g goes in the output */
    if (sorted) {
        for (int64_t g = 0; g < u; g++)
            rank[g] = g;
    } else {
        /* groups by their first occurrence: walk x in order */
        int64_t next = 0;
        for (int64_t g = 0; g < u; g++)
            rank[g] = -1;
        for (int64_t k = 0; k < n; k++)
            if (rank[grp[k]] < 0)
                rank[grp[k]] = next++;
    }
    size_t es = ft_dtype_size(dt), row = (size_t)v.inner * es;
    const char *src = (const char *)x;
    char *dst = (char *)y;
    for (int64_t g = 0; g < u; g++) {
        int64_t r = rank[g], k = head[g];
        for (int64_t o = 0; o < v.outer; o++)
            memcpy(dst + ((size_t)o * (size_t)u + (size_t)r) * row, src + ((size_t)o * (size_t)v.dim + (size_t)k) * row, row);
        if (first)
            first[r] = k;
        if (count)
            count[r] = 0;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t r = rank[grp[k]];
        if (inverse)
            inverse[k] = r;
        if (count)
            count[r]++;
    }
out:
    free(ord);
    free(tmp);
    free(grp);
    free(head);
    free(rank);
    return u;
}

typedef struct {
    float score;
    int64_t box;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *p = (const cand *)a, *q = (const cand *)b;
    if (p->score != q->score)
        return p->score > q->score ? -1 : 1;
    return p->box < q->box ? -1 : p->box > q->box;
}

/* The box's extent as (xmin, ymin, xmax, ymax). */
static void extent(const float *b, int center, float e[4])
{
    if (center) {
        e[0] = b[0] - b[2] / 2, e[2] = b[0] + b[2] / 2;
        e[1] = b[1] - b[3] / 2, e[3] = b[1] + b[3] / 2;
    } else {
        e[0] = b[1] < b[3] ? b[1] : b[3], e[2] = b[1] < b[3] ? b[3] : b[1];
        e[1] = b[0] < b[2] ? b[0] : b[2], e[3] = b[0] < b[2] ? b[2] : b[0];
    }
}

/* ONNX's rule: no overlap, or a box of no area, never suppresses. p and q
 * are extents (extent()), pa and qa their areas. */
static int suppresses(const float *p, float pa, const float *q, float qa, float iou_th)
{
    float ix0 = p[0] > q[0] ? p[0] : q[0], ix1 = p[2] < q[2] ? p[2] : q[2];
    if (ix1 <= ix0)
        return 0;
    float iy0 = p[1] > q[1] ? p[1] : q[1], iy1 = p[3] < q[3] ? p[3] : q[3];
    if (iy1 <= iy0)
        return 0;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float uni = pa + qa - inter;
    if (inter <= 0 || pa <= 0 || qa <= 0 || uni <= 0)
        return 0;
    return inter / uni > iou_th;
}

int64_t ft_dd_nms(const float *boxes, const float *scores, int64_t batches, int64_t classes, int64_t nbox,
                  int64_t max_per, float iou_th, int has_score, float score_th, int center, int64_t *out)
{
    int64_t m = nbox ? nbox : 1, total = 0;
    cand *c = (cand *)ft_malloc((size_t)m * sizeof *c);
    int64_t *taken = (int64_t *)ft_malloc((size_t)m * sizeof *taken);
    /* every box's extent and area, once per batch; the kept ones' in order */
    float *ext = (float *)ft_malloc((size_t)m * 5 * sizeof *ext), *kept = (float *)ft_malloc((size_t)m * 5 * sizeof *kept);
    if (!c || !taken || !ext || !kept) {
        free(c);
        free(taken);
        free(ext);
        free(kept);
        return -1;
    }
    for (int64_t b = 0; b < batches && max_per > 0; b++) {
        const float *bx = boxes + b * nbox * 4;
        for (int64_t i = 0; i < nbox; i++) {
            float *e = ext + i * 5;
            extent(bx + i * 4, center, e);
            e[4] = (e[2] - e[0]) * (e[3] - e[1]);
        }
        for (int64_t cl = 0; cl < classes; cl++) {
            const float *sc = scores + (b * classes + cl) * nbox;
            int64_t nc = 0, nt = 0;
            for (int64_t i = 0; i < nbox; i++)
                if (!has_score || sc[i] > score_th)
                    c[nc++] = (cand){sc[i], i};
            qsort(c, (size_t)nc, sizeof *c, cand_cmp);
            for (int64_t i = 0; i < nc && nt < max_per; i++) {
                const float *q = ext + c[i].box * 5;
                int keep = 1;
                for (int64_t j = 0; j < nt && keep; j++)
                    keep = !suppresses(kept + j * 5, kept[j * 5 + 4], q, q[4], iou_th);
                if (!keep)
                    continue;
                memcpy(kept + nt * 5, q, 5 * sizeof *q);
                taken[nt++] = c[i].box;
                out[total * 3] = b, out[total * 3 + 1] = cl, out[total * 3 + 2] = c[i].box;
                total++;
            }
        }
    }
    free(c);
    free(taken);
    free(ext);
    free(kept);
    return total;
}

/* The kernels on host views (datadep.h: ft_dd_run). */
static ft_status dd_non_zero(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    out[0].shape.dims[1] = ft_dd_non_zero(in[0].data, in[0].dtype, &in[0].shape, (int64_t *)out[0].data);
    return FT_OK;
}

static ft_status dd_compress(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int axis = n->params.dd.axis;
    int64_t bad = 0, got = ft_dd_compress(in[0].data, ft_dtype_size(in[0].dtype), &in[0].shape, axis,
                                          (const uint8_t *)in[1].data, in[1].shape.dims[0], out[0].data, &bad);
    if (got < 0)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "the condition is true at position %lld, past the end of %s (%lld)",
                           (long long)bad, axis < 0 ? "the flattened input" : "the axis",
                           (long long)(axis < 0 ? (int64_t)ft_numel(&in[0].shape) : in[0].shape.dims[axis]));
    out[0].shape.dims[axis < 0 ? 0 : axis] = got;
    return FT_OK;
}

static ft_status dd_unique(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    int axis = n->params.dd.axis;
    int64_t u = ft_dd_unique(in[0].data, in[0].dtype, &in[0].shape, axis, n->params.dd.sorted, out[0].data,
                             n->n_out > 1 ? (int64_t *)out[1].data : NULL, n->n_out > 2 ? (int64_t *)out[2].data : NULL,
                             n->n_out > 3 ? (int64_t *)out[3].data : NULL);
    if (u < 0)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory sorting %lld slices",
                           (long long)(axis < 0 ? (int64_t)ft_numel(&in[0].shape) : in[0].shape.dims[axis]));
    out[0].shape.dims[axis < 0 ? 0 : axis] = u;
    if (n->n_out > 1)
        out[1].shape.dims[0] = u;
    if (n->n_out > 3)
        out[3].shape.dims[0] = u;
    return FT_OK;
}

static ft_status dd_nms(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_shape *bx = &in[0].shape;
    int64_t max_per = n->n_in > 2 && in[2].data ? *(const int64_t *)in[2].data : 0;
    float iou = n->n_in > 3 && in[3].data ? *(const float *)in[3].data : 0.f;
    int has_score = n->n_in > 4 && in[4].data;
    float score = has_score ? *(const float *)in[4].data : 0.f;
    /* never past the bound inference gave (max_per known at load: its value) */
    int64_t pairs = bx->dims[0] * in[1].shape.dims[1];
    int64_t per = pairs > 0 ? out[0].shape.dims[0] / pairs : 0;
    if (max_per > per)
        max_per = per;
    int64_t m = ft_dd_nms((const float *)in[0].data, (const float *)in[1].data, bx->dims[0], in[1].shape.dims[1],
                          bx->dims[1], max_per, iou, has_score, score, n->params.dd.center, (int64_t *)out[0].data);
    if (m < 0)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for %lld candidate boxes", (long long)bx->dims[1]);
    out[0].shape.dims[0] = m;
    return FT_OK;
}

/* if_select: the branch the condition chose; the other did not run (its
 * view may have no memory), so it is never read. */
static ft_status dd_if_select(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_view *v = &in[*(const uint8_t *)in[0].data ? 1 : 2];
    size_t nb = (size_t)ft_numel(&v->shape) * ft_dtype_size(v->dtype);
    if (ft_numel(&v->shape) > ft_numel(&out[0].shape)) /* the ranks may differ (infer_dynamic.c) */
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "internal error: the branch's value is larger than the output");
    if (nb && v->data != out[0].data)
        memcpy(out[0].data, v->data, nb);
    out[0].shape = v->shape;
    return FT_OK;
}

/* image_decoder: the pixels of the image whose size inference read. */
static ft_status dd_image_decoder(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    char why[256];
    if (out[0].shape.rank != 3)
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "the encoded image cannot be decoded: internal error: no "
                           "[H, W, C] output");
    int rc = ft_image_decode((const uint8_t *)in[0].data, (size_t)ft_numel(&in[0].shape), n->params.dd.pixel,
                             (uint8_t *)out[0].data, out[0].shape.dims[0], out[0].shape.dims[1], why, sizeof why);
    if (rc)
        return ft_node_err(k->err, rc == -2 ? FT_ERUNTIME : FT_EGRAPH, k->g, n, "the encoded image cannot be decoded: %s",
                           why);
    return FT_OK;
}

ft_status ft_dd_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    static const struct {
        ft_op op;
        ft_status (*fn)(ft_kctx *, const ft_node *, const ft_view *, ft_view *);
    } run[] = {
        {FT_OP_IF_SELECT, dd_if_select},
        {FT_OP_NON_ZERO, dd_non_zero},
        {FT_OP_COMPRESS, dd_compress},
        {FT_OP_UNIQUE, dd_unique},
        {FT_OP_NON_MAX_SUPPRESSION, dd_nms},
        {FT_OP_IMAGE_DECODER, dd_image_decoder},
        {FT_OP_STRING_SPLIT, ft_text_split},
        {FT_OP_STRING_NORMALIZER, ft_text_normalizer},
        {FT_OP_STRING_CONCAT, ft_text_concat},
        {FT_OP_REGEX_FULL_MATCH, ft_text_full_match},
        {FT_OP_TFIDF_VECTORIZER, ft_ml_tfidf},
        {FT_OP_LABEL_ENCODER, ft_ml_label_encoder},
        {FT_OP_TREE_ENSEMBLE, ft_ml_tree_ensemble},
    };
    for (size_t i = 0; i < sizeof run / sizeof *run; i++)
        if (run[i].op == n->op)
            return run[i].fn(k, n, in, out);
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "internal error: '%s' is not a data-dependent op", ft_op_name(n->op));
}
