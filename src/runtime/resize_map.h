/* Resize's mapping of an output coordinate to its source cells, written once
 * for the CPU kernel (cpu/resize.c) and the CUDA one (cuda/pool.cu), so that
 * both pick the same cells and weights. Header only, no state; follows the
 * ONNX reference implementation (onnx/reference/ops/op_resize.py).
 *
 *   int64_t lo, hi; double w;
 *   ft_resize_cell(1, FT_RESIZE_NM_FLOOR, ft_resize_src(FT_RESIZE_CT_HALF_PIXEL, 3.0, 2.0, 4, 8), 4, &lo, &hi, &w);
 */
#ifndef FT_RESIZE_MAP_H
#define FT_RESIZE_MAP_H

#include "numeric.h" /* FT_HD, FT_RESIZE_* */

/* a * b rounded on its own: no fused multiply-add on the device either. */
#ifdef __CUDA_ARCH__
#define FT_MUL_RN(a, b) __dmul_rn(a, b)
#else
#define FT_MUL_RN(a, b) ((a) * (b))
#endif

/* Source coordinate of output coordinate x on an axis of `in` cells (ct is
 * an FT_RESIZE_CT_*). scale is the attribute's scale, or out/in when sizes
 * were given; the reference computes output_width = scale * in in floating
 * point and uses it (not the integer size) where a mode needs the output
 * length. Same expression order as the reference, so that ties of the
 * nearest modes fall the same way. */
FT_HD double ft_resize_src(int ct, double x, double scale, int64_t in, int64_t out)
{
    double ow = FT_MUL_RN(scale, (double)in);
    switch (ct) {
    case FT_RESIZE_CT_HALF_PIXEL: return (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)out / ow;
        double center = (double)in / 2;
        double offset = FT_MUL_RN(center, 1 - adjustment);
        return offset + (x + 0.5) / scale - 0.5;
    }
    case FT_RESIZE_CT_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case FT_RESIZE_CT_ALIGN_CORNERS: return ow == 1 ? 0.0 : FT_MUL_RN(x, (double)(in - 1)) / (ow - 1);
    default: return x / scale; /* asymmetric */
    }
}

FT_HD int64_t ft_resize_clamp(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* The lower and upper source cells of source coordinate xo (clamped to the
 * edge, like the reference's edge padding) and the weight of the upper one:
 * 0 for nearest (nm an FT_RESIZE_NM_*), and whenever only the lower cell is
 * read. */
FT_HD void ft_resize_cell(int linear, int nm, double xo, int64_t in, int64_t *lo, int64_t *hi, double *w)
{
    /* Beyond one cell outside the input every choice reads the edge cell;
     * the clamp keeps the conversion to an integer defined. */
    if (xo < -1)
        xo = -1;
    if (xo > (double)in)
        xo = (double)in;
    double fl = floor(xo), ratio = xo - fl;
    int64_t i0 = (int64_t)fl;
    if (!linear) {
        int up = 0;
        if (ratio != 0) {
            switch (nm) {
            case FT_RESIZE_NM_ROUND_PREFER_FLOOR: up = ratio > 0.5; break;
            case FT_RESIZE_NM_ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
            case FT_RESIZE_NM_FLOOR: up = 0; break;
            default: up = 1; break;
            }
        }
        *lo = *hi = ft_resize_clamp(i0 + up, in);
        *w = 0;
    } else {
        *lo = ft_resize_clamp(i0, in);
        *hi = ft_resize_clamp(i0 + 1, in);
        *w = *lo == *hi ? 0 : ratio;
    }
}

#endif
