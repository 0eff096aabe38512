/* The data-dependent ops on host memory: non_zero, compress, unique and
 * non_max_suppression, whose output sizes depend on their inputs' values.
 * One definition of each op's semantics (ONNX's NonZero, Compress, Unique
 * and NonMaxSuppression) that both backends run: the CPU kernels
 * (cpu/datadep.c) on their views, the CUDA ones (cuda/datadep.cu) on host
 * copies, since the size must reach the host anyway. Each writes at most the
 * bound its inference gave (graph/infer_dynamic.c) and returns the count it
 * wrote. Nothing is kept; the caller owns every buffer.
 *
 *   int64_t x[] = {0, 3, 0, 5}, idx[2 * 4];
 *   ft_shape s = {.rank = 2, .dims = {2, 2}};
 *   int64_t n = ft_dd_non_zero(x, FT_I64, &s, idx);   // 2: idx holds [[0, 1], [1, 1]] as a [2, 2] row-major array
 */
#ifndef FT_DATADEP_H
#define FT_DATADEP_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Positions of the nonzero elements of x (dtype dt, shape s): out is the
 * [max(rank, 1), N] row-major array of their indices, N returned. */
int64_t ft_dd_non_zero(const void *x, ft_dtype dt, const ft_shape *s, int64_t *out);

/* The slices of x (shape s, elements of esize bytes) along axis (-1: the
 * flattened x) whose entry in cond (clen bools) is true, in order, into y;
 * returns how many. A true entry past the axis's end returns -1 with its
 * position in *bad. */
int64_t ft_dd_compress(const void *x, size_t esize, const ft_shape *s, int axis, const uint8_t *cond, int64_t clen,
                       void *y, int64_t *bad);

/* The distinct slices of x along axis (-1: the elements of the flattened x),
 * sorted ascending (slices compare element by element) or in the order they
 * first occur: y gets them, first[u] the position where each first occurs,
 * inverse[k] the number of slice k's value, count[u] how often each occurs.
 * Any of first, inverse and count may be NULL. Returns their number, or -1
 * when out of memory. */
int64_t ft_dd_unique(const void *x, ft_dtype dt, const ft_shape *s, int axis, int sorted, void *y, int64_t *first,
                     int64_t *inverse, int64_t *count);

/* Greedy non-maximum suppression of ONNX's NonMaxSuppression: boxes
 * [batches, nbox, 4] (corners y1, x1, y2, x2 in any order, or centre x, y,
 * width, height with center), scores [batches, classes, nbox]. Per batch and
 * class, candidates (score above score_th when has_score) in falling score
 * (ties: the lower box first) are taken unless their IoU with one taken
 * exceeds iou_th, up to max_per. out gets [batch, class, box] rows; returns
 * their number, or -1 when out of memory. */
int64_t ft_dd_nms(const float *boxes, const float *scores, int64_t batches, int64_t classes, int64_t nbox,
                  int64_t max_per, float iou_th, int has_score, float score_th, int center, int64_t *out);

/* The kernel of the four ops, and of if_select (the value of the branch its
 * condition chose, sized as that branch gave it), on host views (n->op tells
 * which), for a
 * backend whose memory the host reads: each output arrives sized at its
 * bound (the shape inference gave), and its shape is set to what was
 * written. FT_EGRAPH for bad data (compress: a true condition past the
 * axis), FT_ERUNTIME when out of memory. */
ft_status ft_dd_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* The string ops (runtime/text.c) and the text-feature and ai.onnx.ml ops
 * (runtime/ml.c), which ft_dd_run hands on; host memory only (the CUDA
 * backend's kernel table gives them no dtype). */
ft_status ft_text_split(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_text_normalizer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_text_concat(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_text_full_match(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_ml_tfidf(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_ml_label_encoder(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
ft_status ft_ml_tree_ensemble(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);
/* cast with a string source or destination (runtime/text_cast.c), for the
 * CPU's cast kernel: FT_EGRAPH naming the element for a string that is no
 * number. */
ft_status ft_text_cast(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out);

#ifdef __cplusplus
}
#endif

#endif
