/* Geometry of ONNX Conv and ConvTranspose nodes, shared by the CPU kernels
 * and the host side of the CUDA kernels so that both derive pads and sizes
 * from the attributes and the inferred output shape in exactly one way. */
#ifndef FT_CONV_GEOM_H
#define FT_CONV_GEOM_H

#include "backend.h"

#define FT_CONV_MAX_SP 3

/* Spatial dims are left-aligned: slots r.. are 0. */
typedef struct {
    int r;                      /* spatial rank */
    size_t es;                  /* element size of the input */
    int64_t N, C, M, G, Cg, Mg; /* batch, channels in/out, groups, per group */
    int64_t in[FT_CONV_MAX_SP], out[FT_CONV_MAX_SP], k[FT_CONV_MAX_SP], s[FT_CONV_MAX_SP], d[FT_CONV_MAX_SP],
        pb[FT_CONV_MAX_SP];
    int64_t NI, P, KK; /* input positions, output positions, kernel positions */
} ft_conv_geom;

/* in/out are the node's input and output views (x, w[, b]) and (y); the pads
 * follow the rules of graph/infer_conv.c. */
void ft_conv_geom_of(const ft_node *n, const ft_view *in, const ft_view *out, int transpose, ft_conv_geom *g);

#endif
