/* Kernel-side preparation of the strided copies of the movement ops, defined
 * in infer_movement.c beside their inference and shared by src/cpu/movement.c
 * and src/cuda/movement.cu; axes, slices and pads come from the node's typed
 * parameters (params.h). The caller owns every ft_xfer and buffer, these
 * functions only fill them (no allocation, no device code).
 *
 * A copy is a box of dims read through source strides and written through
 * destination strides, both in elements; source strides may be 0 (broadcast)
 * or negative (reversed slices).
 *
 *   ft_xfer x;
 *   ft_xfer_transpose(&x, n->params.move.perm, &in->shape, &out->shape);
 *   int64_t count = ft_xfer_simplify(&x);
 */
#ifndef FT_INFER_MOVEMENT_H
#define FT_INFER_MOVEMENT_H

#include "dtype.h"
#include "params.h"

/* tile views its output with twice the rank (repeat, dim) per axis */
#define FT_XFER_MAX_RANK (2 * FT_MAX_RANK)

typedef struct ft_xfer {
    int rank;
    int64_t dims[FT_XFER_MAX_RANK];
    int64_t ds[FT_XFER_MAX_RANK]; /* destination strides */
    int64_t ss[FT_XFER_MAX_RANK]; /* source strides */
} ft_xfer;

/* Drop size-1 dims and merge neighbours that are contiguous in both source and
 * destination; returns the element count (0: nothing to do). */
int64_t ft_xfer_simplify(ft_xfer *x);
/* A box covering shape s of a contiguous destination read from a contiguous
 * source of the same shape; callers then adjust strides. */
void ft_xfer_init(ft_xfer *x, const ft_shape *s);
/* Transpose of in into out: output axis i reads input axis perm[i]. */
void ft_xfer_transpose(ft_xfer *x, const int *perm, const ft_shape *in, const ft_shape *out);
/* depth_to_space (to_space 1) or space_to_depth of in into out, blocksize and
 * mode from p. */
void ft_xfer_depth_space(ft_xfer *x, const ft_move_params *p, int to_space, const ft_shape *in, const ft_shape *out);
/* Broadcast of in over out. */
void ft_xfer_expand(ft_xfer *x, const ft_shape *in, const ft_shape *out);
/* Tile of in into out. */
void ft_xfer_tile(ft_xfer *x, const ft_shape *in, const ft_shape *out);
/* One part of a concat (whole_is_dst 1) or split (0) along axis, starting at
 * index *off of that axis (0 for the first part; advanced past this one);
 * returns the element offset of the part in whole. */
int64_t ft_xfer_part(ft_xfer *x, const ft_shape *part, const ft_shape *whole, int axis, int64_t *off, int whole_is_dst);
/* Slice of in (first and step of p) into out; 0 if out is empty (nothing to
 * copy), else 1 with *base the element offset of the first source element. */
/* ONNX Slice on one axis of size dim, step != 0: the number of elements and
 * the first index (bounds counted from the end when negative, then clamped;
 * no overflow for any int64 bounds or step). Shared by inference and the
 * ONNX load-time folding (onnx_fold.c). */
int64_t ft_slice_len(int64_t dim, int64_t start, int64_t end, int64_t step);
int64_t ft_slice_first(int64_t dim, int64_t start, int64_t step);
int ft_xfer_slice(ft_xfer *x, const ft_move_params *p, const ft_shape *in, const ft_shape *out, int64_t *base);
/* The pad value in dtype dt: floats round to nearest, ints truncate toward zero
 * and saturate (NaN -> 0), bool is nonzero; as cast does. */
void ft_pad_value(double v, ft_dtype dt, unsigned char *buf);

#endif
