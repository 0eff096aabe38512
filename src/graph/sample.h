/* Sampling taps of grid_sample and of resize, shared by the CPU kernels
 * (src/cpu/image.c, src/cpu/resize.c) and the CUDA kernels
 * (src/cuda/image.cu, src/cuda/pool.cu): static inline functions that compile as C for the
 * CPU and as host-and-device functions under nvcc, so that both backends
 * pick the same cells with the same weights. The semantics are those of the
 * ONNX reference implementation (onnx/reference/ops/op_grid_sample.py and
 * op_resize.py). Plain data: the caller owns every ft_taps.
 *
 *   ft_taps t;
 *   if (!ft_gs_taps(gx, width, &n->params.image, &t)) ... // NaN coordinate
 *   for (int k = 0; k < t.n; k++) acc += t.w[k] * (t.i[k] < 0 ? 0 : row[t.i[k]]);
 */
#ifndef FT_SAMPLE_H
#define FT_SAMPLE_H

#include <math.h>
#include <stdint.h>

#include "params.h"

#ifdef __CUDACC__
#define FT_SAMPLE_FN static __host__ __device__ inline
#else
#define FT_SAMPLE_FN static inline
#endif

/* Up to four source cells of one axis and their weights; a cell index -1
 * reads 0 (grid_sample's zeros padding). */
typedef struct ft_taps { /* n = 0: no cell (resize's extrapolation) */
    int n;
    int64_t i[4];
    double w[4];
} ft_taps;

/* Keys' cubic convolution weights of the cells floor(x)-1 .. floor(x)+2,
 * t = x - floor(x) in [0, 1), a the coefficient (-0.75 in grid_sample,
 * cubic_coeff_a in resize). At t = 0 they are 0, 1, 0, 0. */
FT_SAMPLE_FN void ft_cubic_weights(double t, double a, double *w)
{
    double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
    w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
    w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

/* ONNX GridSample's reflection of x into [lo, hi] (repeated from the near
 * border); a range of width 0 gives lo. x is finite. */
FT_SAMPLE_FN double ft_gs_reflect(double x, double lo, double hi)
{
    double rng = hi - lo;
    if (!(rng > 0))
        return lo;
    if (x < lo) {
        double dx = lo - x, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi, k = floor(dx / rng), r = dx - k * rng;
        return fmod(k, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* The cells of one axis of `size` (>= 1) cells read at normalized grid
 * coordinate g (-1 and 1 are the edges: the centers of the edge cells with
 * align_corners, their outer borders without), for the mode and padding of
 * p. Returns 0 when the coordinate gives no value: NaN, or infinite under
 * reflection (the kernels then store NaN). */
FT_SAMPLE_FN int ft_gs_taps(double g, int64_t size, const ft_image_params *p, ft_taps *t)
{
    double fs = (double)size;
    double v = p->align_corners ? (g + 1) / 2 * (fs - 1) : ((g + 1) * fs - 1) / 2;
    double lo = p->align_corners ? 0 : -0.5, hi = p->align_corners ? fs - 1 : fs - 0.5;
    if (v != v)
        return 0;
    if (p->mode == FT_GS_NEAREST)
        v = rint(v); /* ties to even */
    if (v < lo || v > hi) {
        if (p->padding == FT_GS_BORDER) {
            v = v < 0 ? 0 : v > fs - 1 ? fs - 1 : v;
        } else if (p->padding == FT_GS_REFLECTION) {
            if (isinf(v))
                return 0;
            v = ft_gs_reflect(v, lo, hi);
        } else {
            /* zeros: every cell beyond these bounds reads 0 anyway; the clamp
             * keeps the conversions below defined */
            v = v < -4 ? -4 : v > fs + 3 ? fs + 3 : v;
        }
    }
    double fl = floor(v);
    if (p->mode == FT_GS_NEAREST) {
        t->n = 1;
        t->i[0] = (int64_t)v;
        t->w[0] = 1;
    } else if (p->mode == FT_GS_LINEAR) {
        t->n = 2;
        t->i[0] = (int64_t)fl, t->i[1] = (int64_t)fl + 1;
        t->w[1] = v - fl, t->w[0] = 1 - (v - fl);
    } else {
        t->n = 4;
        for (int k = 0; k < 4; k++)
            t->i[k] = (int64_t)fl - 1 + k;
        ft_cubic_weights(v - fl, -0.75, t->w);
    }
    for (int k = 0; k < t->n; k++) {
        int64_t i = t->i[k];
        if (i >= 0 && i < size)
            continue;
        if (p->padding == FT_GS_ZEROS)
            t->i[k] = -1;
        else if (p->padding == FT_GS_BORDER)
            t->i[k] = i < 0 ? 0 : size - 1;
        else
            t->i[k] = (int64_t)ft_gs_reflect((double)i, lo, hi);
    }
    return 1;
}

/* Cubic resize taps of one output coordinate at source coordinate x (finite,
 * within a cell or two of [0, in - 1]): the cells floor(x)-1 .. floor(x)+2,
 * clamped to the edge (the reference pads by repeating the edge), or, with
 * exclude_outside, the cells outside the input weighted 0 and the others
 * renormalized. A coordinate on a cell collapses to that one cell. */
FT_SAMPLE_FN void ft_resize_cubic_taps(double x, int64_t in, double a, int exclude, ft_taps *t)
{
    double fl = floor(x);
    if (fl == x) {
        t->n = 1;
        t->i[0] = (int64_t)x < 0 ? 0 : (int64_t)x >= in ? in - 1 : (int64_t)x;
        t->w[0] = 1;
        return;
    }
    t->n = 4;
    ft_cubic_weights(x - fl, a, t->w);
    double sum = 0;
    for (int k = 0; k < 4; k++) {
        int64_t i = (int64_t)fl - 1 + k;
        if (exclude && (i < 0 || i >= in))
            t->w[k] = 0;
        sum += t->w[k];
        t->i[k] = i < 0 ? 0 : i >= in ? in - 1 : i;
    }
    if (exclude)
        for (int k = 0; k < 4; k++)
            t->w[k] /= sum;
}

/* Nearest and linear resize: the lower and upper source cells of one output
 * coordinate at source coordinate x (inside the input or its edge padding),
 * clamped to [0, in), and the weight of the upper one (0 for nearest, and
 * whenever only the lower cell is read). nm is nearest's rounding
 * (FT_RESIZE_NM_*). */
FT_SAMPLE_FN void ft_resize_cells(double x, int64_t in, int linear, int nm, int64_t *lo, int64_t *hi, double *w)
{
    /* Beyond one cell outside the input every choice reads the edge cell;
     * the clamp keeps the conversion to an integer defined. */
    if (x < -1)
        x = -1;
    if (x > (double)in)
        x = (double)in;
    double fl = floor(x), ratio = x - fl;
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
        i0 += up;
        *lo = *hi = i0 < 0 ? 0 : i0 >= in ? in - 1 : i0;
        *w = 0;
        return;
    }
    *lo = i0 < 0 ? 0 : i0 >= in ? in - 1 : i0;
    *hi = i0 + 1 < 0 ? 0 : i0 + 1 >= in ? in - 1 : i0 + 1;
    *w = *lo == *hi ? 0 : ratio;
}

#endif
