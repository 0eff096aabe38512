/* Kernel-side geometry of max_pool/average_pool/lp_pool and resize
 * (infer_pool.c), used by the CPU kernels (src/cpu/pool.c, src/cpu/resize.c)
 * and the host side of the CUDA kernels (src/cuda/pool.cu, src/cuda/image.cu),
 * from the node's typed
 * parameters (params.h) and the inferred shapes; the caller owns every
 * struct passed in.
 *
 *   ft_pool_geom g;
 *   ft_pool_geom_of(&n->params.pool, &x->shape, &y->shape, &g);
 */
#ifndef FT_INFER_POOL_H
#define FT_INFER_POOL_H

#include "params.h"

/* 1-D and 2-D pools run as 3-D ones whose leading spatial axes have size 1,
 * kernel 1 and no padding. */
typedef struct ft_pool_geom {
    int64_t planes;        /* N * C */
    int64_t in[3], out[3]; /* spatial sizes */
    int64_t k[3], s[3], d[3], pb[3], pe[3];
} ft_pool_geom;

/* x and y are the pool's input and output shapes; the padding comes from the
 * parameters (auto_pad included) and the inferred output shape. */
void ft_pool_geom_of(const ft_pool_params *p, const ft_shape *x, const ft_shape *y, ft_pool_geom *g);

/* The window of output position o along spatial axis i of g: its cells are
 * start + j*d for j in [0, k), start = o*s - pb; *first is the first of them
 * inside the input, *cnt how many are inside (0: *first is 0, never a cell
 * outside the input). */
static inline void ft_pool_window(const ft_pool_geom *g, int i, int64_t o, int64_t *first, int64_t *cnt)
{
    int64_t in = g->in[i], k = g->k[i], d = g->d[i], start = o * g->s[i] - g->pb[i];
    int64_t jlo = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t jhi = start > in - 1 ? 0 : (in - 1 - start) / d + 1;
    if (jhi > k)
        jhi = k;
    *cnt = jhi > jlo ? jhi - jlo : 0;
    *first = *cnt ? start + jlo * d : 0;
}

/* Source coordinate of output coordinate x of axis d of `in` cells resized to
 * `out` (p's coordinate_transformation_mode and roi; scale from
 * ft_resize_scale), in the expression order of the ONNX reference. */
double ft_resize_src_coord(const ft_resize_params *p, int d, double x, double scale, int64_t in, int64_t out);
/* Whether source coordinate x of axis of `in` cells gives the extrapolation
 * value (tf_crop_and_resize: outside [0, in - 1]). */
int ft_resize_outside(const ft_resize_params *p, double x, int64_t in);
/* Scale of axis d between input shape is and output shape os. */
double ft_resize_scale(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, int d);

/* The taps of resize's cubic and antialiased (linear or cubic) modes: for
 * every output coordinate of every axis, the source cells (clamped to the
 * edge) and their weights, computed once per run on the host and read by
 * both backends' one kernel (src/cpu/resize.c, src/cuda/image.cu).
 * Coordinate o of axis d has span[off[d] + o]: n taps (0 where
 * tf_crop_and_resize extrapolates) at idx[at ...] and w[at ...]. Cubic
 * without antialias: the cells floor(x)-1 .. floor(x)+2 (ft_resize_cubic_taps,
 * sample.h; one cell when x falls on it); antialias: the filter widened by
 * 1/scale when scale < 1, as in the ONNX reference's *_coeffs_antialias,
 * with normalized weights. One block of `bytes` holds the spans, then idx,
 * then w (ft_resize_taps_at):
 *
 *   ft_resize_taps t;
 *   ft_resize_taps_size(p, is, os, &t);
 *   void *block = malloc(t.bytes);
 *   ft_resize_taps_fill(p, is, os, &t, block);
 */
typedef struct ft_tap_span {
    int64_t at, n;
} ft_tap_span;
typedef struct ft_resize_taps {
    int64_t off[FT_MAX_RANK]; /* axis d's first span */
    int64_t n_span, n_tap;
    size_t bytes;
} ft_resize_taps;
void ft_resize_taps_size(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, ft_resize_taps *t);
void ft_resize_taps_fill(const ft_resize_params *p, const ft_shape *is, const ft_shape *os, const ft_resize_taps *t,
                         void *block);
/* The spans, cells and weights of the block of t->bytes at base (a host or a device address). */
static inline void ft_resize_taps_at(const ft_resize_taps *t, const void *base, const ft_tap_span **span,
                                     const int64_t **idx, const double **w)
{
    *span = (const ft_tap_span *)base;
    *idx = (const int64_t *)(*span + t->n_span);
    *w = (const double *)(*idx + t->n_tap);
}

#endif
