/* Kernel-side geometry of conv and conv_transpose (infer_conv.c), used by the
 * CPU kernels (src/cpu/conv.c) and the host side of the CUDA kernels
 * (src/cuda/conv.cu): pads and sizes derived from the node's typed parameters
 * (params.h) and the inferred shapes by the same rules as inference. The
 * caller owns the struct.
 *
 *   ft_conv_geom g;
 *   ft_conv_geom_of(&n->params.conv, &x->shape, &w->shape, &y->shape, x->dtype, 0, &g);
 */
#ifndef FT_INFER_CONV_H
#define FT_INFER_CONV_H

#include <stddef.h>

#include "dtype.h"
#include "params.h"

#define FT_CONV_MAX_SP FT_SP_MAX

/* Spatial dims are left-aligned: slots r.. are 0. */
typedef struct {
    int r;                      /* spatial rank */
    size_t es;                  /* element size of the input */
    int64_t N, C, M, G, Cg, Mg; /* batch, channels in/out, groups, per group */
    int64_t in[FT_CONV_MAX_SP], out[FT_CONV_MAX_SP], k[FT_CONV_MAX_SP], s[FT_CONV_MAX_SP], d[FT_CONV_MAX_SP],
        pb[FT_CONV_MAX_SP];
    int64_t NI, P, KK; /* input positions, output positions, kernel positions */
} ft_conv_geom;

/* x, w, y: the shapes of the input, the weight and the output; dt the input's
 * dtype; transpose 1 for conv_transpose. */
void ft_conv_geom_of(const ft_conv_params *p, const ft_shape *x, const ft_shape *w, const ft_shape *y, ft_dtype dt,
                     int transpose, ft_conv_geom *g);

#endif
