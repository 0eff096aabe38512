/* Shapes: rank 0..8, row-major, with overflow-checked arithmetic.
 *
 *   ft_shape s = {.rank = 2, .dims = {4, 8}};
 *   uint64_t n; if (ft_shape_numel(&s, &n)) ...     // overflow
 *   char buf[FT_SHAPE_STR]; ft_shape_str(&s, buf);  // "[4,8]"
 */
#ifndef FT_SHAPE_H
#define FT_SHAPE_H

#include <stdint.h>

#define FT_MAX_RANK 8
#define FT_SHAPE_STR 200
/* Largest tensor the format accepts, in bytes (also guards size arithmetic). */
#define FT_MAX_TENSOR_BYTES ((uint64_t)1 << 40)

typedef struct ft_shape {
    int rank;
    int64_t dims[FT_MAX_RANK];
} ft_shape;

/* Product of dims into *n; returns 1 on overflow (n unchanged). */
int ft_shape_numel(const ft_shape *s, uint64_t *n);
/* Number of elements without overflow check (use only on validated shapes). */
uint64_t ft_numel(const ft_shape *s);
int ft_shape_eq(const ft_shape *a, const ft_shape *b);
/* ONNX Shape's dims [*start, *end) of a shape of rank r: a negative bound
 * counts from r, both are clamped to [0, r], and *end is at least *start. */
void ft_shape_span(int r, int64_t *start, int64_t *end);
/* "[4,8]" ("[]" for a scalar). buf must hold FT_SHAPE_STR bytes. Returns buf. */
const char *ft_shape_str(const ft_shape *s, char *buf);
/* "[1,2]" for a flat index into shape s. buf must hold FT_SHAPE_STR bytes. */
const char *ft_index_str(uint64_t flat, const ft_shape *s, char *buf);
/* NumPy broadcast of a and b into out. Returns 0, or -1 if incompatible. */
int ft_broadcast(const ft_shape *a, const ft_shape *b, ft_shape *out);
/* Normalise a possibly negative axis against rank; returns 0 and sets *out,
 * or -1 when out of [-rank, rank-1]. */
int ft_axis(int64_t axis, int rank, int *out);
/* Row-major element strides (in elements) of s into strides[rank]. */
void ft_strides(const ft_shape *s, int64_t *strides);
/* Strides of `in` (rank <= out's rank) read through broadcast to shape `out`:
 * aligned right, 0 where in's dim is 1 (or absent) and out's is not. */
void ft_broadcast_strides(const ft_shape *in, const ft_shape *out, int64_t *strides);
/* The loop of a broadcast of nin <= 8 inputs (shapes in[j]) to out: dims of
 * size 1 dropped and neighbours merged where every input's strides chain,
 * giving dims[0..r) and each input's element strides st[j][0..r) (0 where
 * broadcast); bit j of *inner is set when input j's innermost stride is not
 * 0 (it is then 1). Returns r >= 1 (a scalar: one dim of 1, strides 0). */
int ft_broadcast_merge(const ft_shape *out, int nin, const ft_shape *const *in, int64_t *dims, int64_t (*st)[FT_MAX_RANK],
                       unsigned *inner);

#endif
