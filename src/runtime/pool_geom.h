/* Host-side parameters of max_pool/average_pool and resize, shared by the CPU
 * kernels (src/cpu/pool.c, src/cpu/resize.c) and the host side of the CUDA
 * kernels (src/cuda/pool.cu) so that both read the attributes in exactly one
 * way; the caller owns every struct passed in. */
#ifndef FT_POOL_GEOM_H
#define FT_POOL_GEOM_H

#include "backend.h"

#include <stdint.h>

/* 1-D and 2-D pools run as 3-D ones whose leading spatial axes have size 1,
 * kernel 1 and no padding. */
typedef struct ft_pool_geom {
    int64_t planes;        /* N * C */
    int64_t in[3], out[3]; /* spatial sizes */
    int64_t k[3], s[3], d[3], pb[3], pe[3];
} ft_pool_geom;

/* x and y are the pool's input and output views; the padding is recomputed
 * from the attributes (auto_pad included) and the inferred output shape. */
void ft_pool_geom_of(const ft_node *n, const ft_view *x, const ft_view *y, ft_pool_geom *g);

enum {
    FT_RESIZE_CT_HALF_PIXEL,
    FT_RESIZE_CT_HALF_PIXEL_SYMMETRIC,
    FT_RESIZE_CT_PYTORCH_HALF_PIXEL,
    FT_RESIZE_CT_ALIGN_CORNERS,
    FT_RESIZE_CT_ASYMMETRIC
};
enum { FT_RESIZE_NM_ROUND_PREFER_FLOOR, FT_RESIZE_NM_ROUND_PREFER_CEIL, FT_RESIZE_NM_FLOOR, FT_RESIZE_NM_CEIL };

typedef struct ft_resize_modes {
    int linear; /* mode "linear"; otherwise nearest */
    int ct;     /* FT_RESIZE_CT_* */
    int nm;     /* FT_RESIZE_NM_* */
} ft_resize_modes;

void ft_resize_modes_of(const ft_node *n, ft_resize_modes *m);

/* Scale of axis d between input shape is and output shape os. */
double ft_resize_scale(const ft_node *n, const ft_shape *is, const ft_shape *os, int d);

#endif
