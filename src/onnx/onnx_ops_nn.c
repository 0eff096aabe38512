/* ONNX convolution, pooling and resampling ops -> ftrun: Conv,
 * ConvTranspose, DeformConv, MaxPool, AveragePool, the global pools, Resize
 * (opset 10, 11-13, 18-19 forms) and the deprecated Upsample (as resize), LRN
 * (lrn), GridSample (grid_sample), LpPool (lp_pool) and GlobalLpPool through
 * reduce_sum, and the window functions
 * (HannWindow, HammingWindow, BlackmanWindow) as hann_window, hamming_window
 * and blackman_window (size known at load; a non-float output is a constant).
 *
 *   ft_status st = ox_map_conv(c, n);  // attributes carried over one to one
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copy an INTS attribute of the ONNX node to the ftrun node when given. */
static ft_status copy_ints(onx_ctx *c, const onx_node *n, ft_node *f, const char *onnx_name, const char *ft_name)
{
    const int64_t *v;
    int cnt = onx_attr_ints(n, onnx_name, &v);
    return cnt >= 0 ? onx_set_ints(c, f, ft_name, v, cnt) : FT_OK;
}

static ft_status auto_pad(onx_ctx *c, const onx_node *n, ft_node *f)
{
    const char *ap = onx_attr_s(c, n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "SAME_UPPER") != 0 && strcmp(ap, "SAME_LOWER") != 0 &&
        strcmp(ap, "VALID") != 0)
        return onx_unsupported(c, n, "attribute auto_pad='%s' (ftrun has NOTSET, SAME_UPPER, SAME_LOWER, VALID)", ap);
    return onx_set_s(c, f, "auto_pad", ap);
}

ft_status ox_map_conv(onx_ctx *c, const onx_node *n)
{
    int tr = strcmp(n->op_type, "ConvTranspose") == 0;
    ft_op op = tr ? FT_OP_CONV_TRANSPOSE : FT_OP_CONV;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, op, in, in[2] >= 0 ? 3 : 2, &out, 1);
    OX_NEED(f);
    return ox_conv_attrs(c, n, f, tr);
}

ft_status ox_conv_attrs(onx_ctx *c, const onx_node *n, ft_node *f, int tr)
{
    OX_TRY(copy_ints(c, n, f, "strides", "strides"));
    OX_TRY(copy_ints(c, n, f, "pads", "pads"));
    OX_TRY(copy_ints(c, n, f, "dilations", "dilations"));
    OX_TRY(onx_set_i(c, f, "group", onx_attr_i(n, "group", 1)));
    if (tr) {
        OX_TRY(copy_ints(c, n, f, "output_padding", "output_padding"));
        OX_TRY(copy_ints(c, n, f, "output_shape", "output_shape"));
    }
    return auto_pad(c, n, f);
}

/* DeformConv (opset 19) -> deform_conv: the inputs as in ONNX (X, W, offset,
 * B?, mask?), conv's attributes and offset_group. kernel_shape is taken from W,
 * as for Conv. */
ft_status ox_map_deform_conv(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_DEFORM_CONV, 0));
    int in[5], nin = 5, out = ox_out(c, n, 0);
    for (int i = 0; i < 5; i++)
        in[i] = onx_in(c, n, i);
    while (nin > 3 && in[nin - 1] < 0)
        nin--;
    ft_node *f = onx_emit(c, n, FT_OP_DEFORM_CONV, in, nin, &out, 1);
    OX_NEED(f);
    OX_TRY(copy_ints(c, n, f, "strides", "strides"));
    OX_TRY(copy_ints(c, n, f, "pads", "pads"));
    OX_TRY(copy_ints(c, n, f, "dilations", "dilations"));
    OX_TRY(onx_set_i(c, f, "group", onx_attr_i(n, "group", 1)));
    return onx_set_i(c, f, "offset_group", onx_attr_i(n, "offset_group", 1));
}

/* The window attributes shared by the pools. */
static ft_status pool_attrs(onx_ctx *c, const onx_node *n, ft_node *f)
{
    OX_TRY(copy_ints(c, n, f, "kernel_shape", "kernel_shape"));
    OX_TRY(copy_ints(c, n, f, "strides", "strides"));
    OX_TRY(copy_ints(c, n, f, "pads", "pads"));
    OX_TRY(copy_ints(c, n, f, "dilations", "dilations"));
    return onx_set_i(c, f, "ceil_mode", onx_attr_i(n, "ceil_mode", 0));
}

ft_status ox_map_pool(onx_ctx *c, const onx_node *n)
{
    int max = strcmp(n->op_type, "MaxPool") == 0;
    ft_op op = max ? FT_OP_MAX_POOL : FT_OP_AVERAGE_POOL;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    /* MaxPool's Indices (output 1) is max_pool's second output */
    int x = onx_in(c, n, 0), out[2] = {ox_out(c, n, 0), max && n->n_out > 1 ? onx_out(c, n, 1) : -1};
    ft_node *f = onx_emit(c, n, op, &x, 1, out, out[1] >= 0 ? 2 : 1);
    OX_NEED(f);
    OX_TRY(pool_attrs(c, n, f));
    if (max)
        OX_TRY(onx_set_i(c, f, "storage_order", onx_attr_i(n, "storage_order", 0)));
    if (!max)
        OX_TRY(onx_set_i(c, f, "count_include_pad", onx_attr_i(n, "count_include_pad", 0)));
    return auto_pad(c, n, f);
}

ft_status ox_map_global_pool(onx_ctx *c, const onx_node *n)
{
    ft_op op = strcmp(n->op_type, "GlobalMaxPool") == 0 ? FT_OP_GLOBAL_MAX_POOL : FT_OP_GLOBAL_AVERAGE_POOL;
    OX_TRY(ox_check_dtype(c, n, op, 0));
    OX_NEED(ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0)));
    return FT_OK;
}

static int one_of(const char *s, const char *const *list, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (strcmp(s, list[i]) == 0)
            return 1;
    return 0;
}

/* Resize (and Upsample): scales or sizes read at load time, widened to every
 * axis when opset 18's `axes` names some; keep_aspect_ratio_policy turns
 * sizes into one scale for those axes. Opset 10 and Upsample resample with
 * asymmetric coordinates and floor for nearest, as ONNX's Upsample. */
ft_status ox_map_resize(onx_ctx *c, const onx_node *n)
{
    static const char *const CTMS[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    static const char *const NEAREST[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    OX_TRY(ox_check_dtype(c, n, FT_OP_RESIZE, 0));
    const ft_shape *xs = ox_shape(c, n, 0);
    int rank = xs->rank, legacy = strcmp(n->op_type, "Upsample") == 0 || n->opset < 11;
    const char *mode = onx_attr_s(c, n, "mode", "nearest");
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 && strcmp(mode, "cubic") != 0)
        return onx_unsupported(c, n, "attribute mode='%s' (ftrun's resize has nearest, linear and cubic)", mode);
    const char *ctm = legacy ? "asymmetric" : onx_attr_s(c, n, "coordinate_transformation_mode", "half_pixel");
    const char *nm = legacy ? "floor" : onx_attr_s(c, n, "nearest_mode", "round_prefer_floor");
    if (!one_of(ctm, CTMS, FT_ARRAY_LEN(CTMS)))
        return onx_unsupported(c, n, "attribute coordinate_transformation_mode='%s' (ftrun's resize has "
                               "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                               "tf_half_pixel_for_nn, tf_crop_and_resize)", ctm);
    if (strcmp(mode, "nearest") == 0 && !one_of(nm, NEAREST, FT_ARRAY_LEN(NEAREST)))
        return onx_unsupported(c, n, "attribute nearest_mode='%s'", nm);
    if (onx_attr_i(n, "antialias", 0) != 0 && strcmp(mode, "nearest") == 0)
        return onx_error(c, n, FT_EGRAPH, "attribute antialias=1 with mode='nearest' (antialias needs linear or cubic)");

    const double *sc = NULL;
    const int64_t *sz = NULL, *axes = NULL;
    int nsc = -1, nsz = -1, nax = onx_attr_ints(n, "axes", &axes), rt = -1, rts = -1, rroi = -1;
    const float *fsc = NULL;
    double scbuf[FT_MAX_RANK];
    if (strcmp(n->op_type, "Upsample") == 0 && n->opset < 9) {
        nsc = onx_attr_floats(n, "scales", &fsc);
        for (int i = 0; i < nsc && i < FT_MAX_RANK; i++)
            scbuf[i] = fsc[i];
        sc = scbuf;
    } else {
        int k = legacy ? 1 : 2;
        ft_status st;
        rts = onx_runtime_in(c, n, k, &st); /* scales computed at run time: resize's input 2 */
        OX_TRY(st);
        if (rts < 0)
            OX_TRY(onx_const_floats(c, n, k, "ftrun's resize takes the scales as an attribute", &sc, &nsc));
        if (!legacy && nsc <= 0 && onx_in(c, n, 3) >= 0) {
            rt = onx_runtime_in(c, n, 3, &st); /* sizes computed at run time: resize's input 1 */
            OX_TRY(st);
            if (rt < 0)
                OX_TRY(onx_const_ints(c, n, 3, "ftrun's resize takes the sizes as an attribute", &sz, &nsz));
            if (rt >= 0 || nsz > 0) /* the sizes given: the scales are empty */
                rts = -1;
        }
    }
    const char *pol = onx_attr_s(c, n, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(pol, "stretch") != 0 && strcmp(pol, "not_larger") != 0 && strcmp(pol, "not_smaller") != 0)
        return onx_unsupported(c, n, "attribute keep_aspect_ratio_policy='%s'", pol);
    if (strcmp(ctm, "tf_crop_and_resize") == 0) {
        ft_status st;
        rroi = onx_runtime_in(c, n, 1, &st); /* roi computed at run time: resize's input 3 */
        OX_TRY(st);
    }
    /* with a value computed at run time the node keeps the axes and the
     * policy, and its sizes, scales and roi list the axes named */
    int on_node = (rt >= 0 || rts >= 0 || rroi >= 0) && nax >= 0;
    int cnt = rt >= 0 || rts >= 0 ? (nax >= 0 ? nax : rank) : nsz > 0 ? nsz : nsc;
    if (cnt <= 0)
        return onx_error(c, n, FT_EGRAPH, "neither scales nor sizes is given");
    int map[FT_MAX_RANK];
    if (nax < 0) {
        if (cnt != rank)
            return onx_error(c, n, FT_EGRAPH, "%s has %d values for input 0 of rank %d", nsz > 0 ? "sizes" : "scales",
                             cnt, rank);
        for (int i = 0; i < rank; i++)
            map[i] = i;
    } else {
        if (nax != cnt)
            return onx_error(c, n, FT_EGRAPH, "axes has %d values but %s has %d", nax, nsz > 0 ? "sizes" : "scales",
                             cnt);
        for (int i = 0; i < nax; i++)
            OX_TRY(ox_axis(c, n, "axes value", axes[i], rank, &map[i]));
    }
    int in[4] = {onx_in(c, n, 0), rt, rts, rroi}, n_in = 4, out = ox_out(c, n, 0);
    while (n_in > 1 && in[n_in - 1] < 0)
        n_in--;
    ft_node *f = onx_emit(c, n, FT_OP_RESIZE, in, n_in, &out, 1);
    OX_NEED(f);
    if (on_node)
        OX_TRY(onx_set_ints(c, f, "axes", axes, nax));
    if ((rt >= 0 || (on_node && nsz > 0)) && strcmp(pol, "stretch") != 0)
        OX_TRY(onx_set_s(c, f, "keep_aspect_ratio_policy", pol));
    if (rt >= 0 || rts >= 0) {
        /* the sizes or the scales come with every run */
    } else if (on_node && nsz > 0) {
        OX_TRY(onx_set_ints(c, f, "sizes", sz, cnt));
    } else if (on_node) {
        OX_TRY(onx_set_floats(c, f, "scales", sc, cnt));
    } else if (nsz > 0) {
        int64_t full[FT_MAX_RANK];
        for (int i = 0; i < rank; i++)
            full[i] = xs->dims[i];
        if (strcmp(pol, "stretch") == 0) {
            for (int i = 0; i < cnt; i++)
                full[map[i]] = sz[i];
        } else { /* not_larger, not_smaller */
            int larger = pol[4] == 's';
            double s = larger ? 0 : INFINITY;
            for (int i = 0; i < cnt; i++) {
                double r = (double)sz[i] / (double)xs->dims[map[i]];
                s = larger ? fmax(s, r) : fmin(s, r);
            }
            for (int i = 0; i < cnt; i++)
                full[map[i]] = (int64_t)floor(s * (double)xs->dims[map[i]] + 0.5);
        }
        OX_TRY(onx_set_ints(c, f, "sizes", full, rank));
    } else {
        double full[FT_MAX_RANK];
        for (int i = 0; i < rank; i++)
            full[i] = 1.0;
        for (int i = 0; i < cnt; i++)
            full[map[i]] = sc[i];
        OX_TRY(onx_set_floats(c, f, "scales", full, rank));
    }
    OX_TRY(onx_set_s(c, f, "mode", mode));
    OX_TRY(onx_set_s(c, f, "coordinate_transformation_mode", ctm));
    if (strcmp(ctm, "tf_crop_and_resize") == 0 && rroi < 0) {
        const double *roi;
        int nroi;
        OX_TRY(onx_const_floats(c, n, 1, "ftrun's resize takes the roi as an attribute", &roi, &nroi));
        int per = nax < 0 ? rank : nax;
        if (nroi != 2 * per)
            return onx_error(c, n, FT_EGRAPH, "roi has %d values; expected %d (the starts, then the ends)", nroi,
                             2 * per);
        double full[2 * FT_MAX_RANK];
        for (int i = 0; i < rank; i++)
            full[i] = 0, full[rank + i] = 1;
        for (int i = 0; i < per; i++)
            full[map[i]] = roi[i], full[rank + map[i]] = roi[per + i];
        OX_TRY(on_node ? onx_set_floats(c, f, "roi", roi, nroi) : onx_set_floats(c, f, "roi", full, 2 * rank));
    }
    if (strcmp(ctm, "tf_crop_and_resize") == 0)
        OX_TRY(onx_set_f(c, f, "extrapolation_value", onx_attr_f(n, "extrapolation_value", 0.0)));
    OX_TRY(onx_set_f(c, f, "cubic_coeff_a", onx_attr_f(n, "cubic_coeff_a", -0.75)));
    OX_TRY(onx_set_i(c, f, "exclude_outside", onx_attr_i(n, "exclude_outside", 0)));
    OX_TRY(onx_set_i(c, f, "antialias", onx_attr_i(n, "antialias", 0)));
    return onx_set_s(c, f, "nearest_mode", nm);
}

/* LRN: ftrun's lrn (same attributes and defaults). */
ft_status ox_map_lrn(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_LRN, 0));
    ft_node *f = ox_emit1(c, n, FT_OP_LRN, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "size", onx_attr_i(n, "size", 0)));
    OX_TRY(onx_set_f(c, f, "alpha", onx_attr_f(n, "alpha", 1e-4)));
    OX_TRY(onx_set_f(c, f, "beta", onx_attr_f(n, "beta", 0.75)));
    return onx_set_f(c, f, "bias", onx_attr_f(n, "bias", 1.0));
}

/* GridSample (opset 16 mode names bilinear/bicubic, opset 20 linear/cubic):
 * ftrun's grid_sample; a grid of another float dtype than X is cast to X's. */
ft_status ox_map_grid_sample(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GRID_SAMPLE, 0));
    OX_TRY(ox_check_dtype(c, n, FT_OP_GRID_SAMPLE, 1));
    int x = onx_in(c, n, 0), g = onx_in(c, n, 1);
    if (ox_dtype(c, n, 1) != ox_dtype(c, n, 0)) {
        int t = ox_tmp(c, n, "grid");
        OX_NEED(t >= 0 && ox_cast(c, n, g, ox_dtype(c, n, 0), t));
        g = t;
    }
    int in[2] = {x, g}, out = ox_out(c, n, 0);
    ft_node *f = onx_emit(c, n, FT_OP_GRID_SAMPLE, in, 2, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_s(c, f, "mode", onx_attr_s(c, n, "mode", n->opset >= 20 ? "linear" : "bilinear")));
    OX_TRY(onx_set_s(c, f, "padding_mode", onx_attr_s(c, n, "padding_mode", "zeros")));
    return onx_set_i(c, f, "align_corners", onx_attr_i(n, "align_corners", 0));
}

/* Window functions: hann_window, hamming_window or blackman_window of the
 * size input (known at load) for a float output_datatype; another dtype
 * (ftrun's window ops write floats) is folded into a constant here:
 *   Hann: 0.5 - 0.5 cos(2 pi k / N); Hamming: 25/46 - 21/46 cos(2 pi k / N);
 *   Blackman: 0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N);
 * N = size when periodic (the default), size - 1 otherwise. */
ft_status ox_map_window(onx_ctx *c, const onx_node *n)
{
    const int64_t *v;
    int cnt;
    OX_TRY(onx_const_ints(c, n, 0, "the window is computed at load time", &v, &cnt));
    if (cnt != 1 || v[0] < 0 || v[0] > ((int64_t)1 << 24))
        return onx_error(c, n, FT_EGRAPH, "input 0 (size) must hold one value in 0..2^24");
    ft_dtype dt;
    const char *tn;
    int64_t ot = onx_attr_i(n, "output_datatype", 1);
    if (ox_dtype_from_onnx(ot, &dt, &tn))
        return onx_unsupported(c, n, "attribute output_datatype=%lld (%s): ftrun has no such dtype", (long long)ot, tn);
    if (ft_dtype_in(dt, FT_DT_FLOAT) && ft_dtype_in(ox_dtype(c, n, 0), FT_M(I32) | FT_M(I64))) {
        ft_op op = strcmp(n->op_type, "HannWindow") == 0      ? FT_OP_HANN_WINDOW
                   : strcmp(n->op_type, "HammingWindow") == 0 ? FT_OP_HAMMING_WINDOW
                                                              : FT_OP_BLACKMAN_WINDOW;
        ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
        OX_NEED(f);
        OX_TRY(onx_set_i(c, f, "periodic", onx_attr_i(n, "periodic", 1) != 0));
        return onx_set_s(c, f, "output_datatype", ft_dtype_name(dt));
    }
    int64_t size = v[0];
    double N = onx_attr_i(n, "periodic", 1) ? (double)size : (double)size - 1;
    void *buf = malloc(size ? (size_t)size * ft_dtype_size(dt) : 1);
    if (!buf)
        return onx_error(c, n, FT_ERUNTIME, "out of memory for the window");
    for (int64_t k = 0; k < size; k++) {
        double a = 2 * M_PI * (double)k / N, w;
        if (strcmp(n->op_type, "HannWindow") == 0)
            w = 0.5 - 0.5 * cos(a);
        else if (strcmp(n->op_type, "HammingWindow") == 0)
            w = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
        else
            w = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        if (N == 0)
            w = 1.0;
        ft_store_f64(buf, dt, (size_t)k, w);
    }
    ft_shape ws = {.rank = 1, .dims = {size}};
    int t = onx_const_new(c, n, "window", dt, &ws, buf);
    free(buf);
    OX_NEED(t >= 0);
    return onx_alias(c, n, 0, t);
}

/* LpPool: ftrun's lp_pool (the pools' window attributes and p). GlobalLpPool:
 * lp_pool with the whole spatial extent as its window (1 to 3 spatial dims,
 * none empty), else (sum over the spatial axes of |x|^p)^(1/p) through abs,
 * pow and reduce_sum. */
ft_status ox_map_lp_pool(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_LP_POOL, 0));
    int global = strcmp(n->op_type, "GlobalLpPool") == 0;
    const ft_shape *s = ox_shape(c, n, 0);
    double p = (double)onx_attr_i(n, "p", 2);
    if (!global) {
        ft_node *f = ox_emit1(c, n, FT_OP_LP_POOL, onx_in(c, n, 0), ox_out(c, n, 0));
        OX_NEED(f);
        OX_TRY(pool_attrs(c, n, f));
        OX_TRY(onx_set_i(c, f, "p", onx_attr_i(n, "p", 2)));
        return auto_pad(c, n, f);
    }
    int whole = s->rank >= 3 && s->rank <= 5;
    for (int i = 2; i < s->rank; i++)
        whole &= s->dims[i] >= 1;
    if (whole) {
        int64_t ks[3];
        for (int i = 2; i < s->rank; i++)
            ks[i - 2] = s->dims[i];
        ft_node *f = ox_emit1(c, n, FT_OP_LP_POOL, onx_in(c, n, 0), ox_out(c, n, 0));
        OX_NEED(f);
        OX_TRY(onx_set_ints(c, f, "kernel_shape", ks, s->rank - 2));
        return onx_set_i(c, f, "p", onx_attr_i(n, "p", 2));
    }
    ft_dtype dt = ox_dtype(c, n, 0);
    if (p < 1)
        return onx_error(c, n, FT_EGRAPH, "attribute p=%g; expected p >= 1", p);
    if (s->rank < 3)
        return onx_error(c, n, FT_EGRAPH, "input 0 has rank %d; expected [N,C,spatial...]", s->rank);
    int x = onx_in(c, n, 0), ab = ox_tmp(c, n, "abs"), pw = ox_tmp(c, n, "power"), sum = ox_tmp(c, n, "sum"),
        pc = ox_scalar(c, n, "p", dt, p), inv = ox_scalar(c, n, "inv_p", dt, 1.0 / p);
    OX_NEED(ab >= 0 && pw >= 0 && sum >= 0 && pc >= 0 && inv >= 0);
    OX_NEED(ox_emit1(c, n, FT_OP_ABS, x, ab) && ox_emit2(c, n, FT_OP_POW, ab, pc, pw));
    int64_t axes[FT_MAX_RANK];
    for (int i = 2; i < s->rank; i++)
        axes[i - 2] = i;
    ft_node *f = ox_emit1(c, n, FT_OP_REDUCE_SUM, pw, sum);
    OX_NEED(f);
    OX_TRY(onx_set_ints(c, f, "axes", axes, s->rank - 2));
    OX_NEED(ox_emit2(c, n, FT_OP_POW, sum, inv, ox_out(c, n, 0)));
    return FT_OK;
}

/* MaxUnpool(X, I, output_shape?) -> max_unpool: the pool's window attributes;
 * output_shape (input 2) must be known at load (it fixes the output shape). */
ft_status ox_map_max_unpool(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_MAX_UNPOOL, 0));
    const int64_t *os = NULL;
    int nos = 0;
    if (n->n_in > 2 && onx_in(c, n, 2) >= 0)
        OX_TRY(onx_const_ints(c, n, 2, "output_shape fixes the output shape", &os, &nos));
    ft_node *f = ox_emit2(c, n, FT_OP_MAX_UNPOOL, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(copy_ints(c, n, f, "kernel_shape", "kernel_shape"));
    OX_TRY(copy_ints(c, n, f, "strides", "strides"));
    OX_TRY(copy_ints(c, n, f, "pads", "pads"));
    return os ? onx_set_ints(c, f, "output_shape", os, nos) : FT_OK;
}

/* CausalConvWithState (opset 27): a depthwise causal conv1d carrying the
 * last k - 1 positions. padded = concat(past_state or zeros [B, C, k-1],
 * input) on the length axis; output = conv(padded, weight, bias, group=C),
 * then silu when activation is 'silu' or 'swish'; present_state = the last
 * k - 1 positions of padded. */
ft_status ox_map_causal_conv_with_state(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_CONV, 0));
    const ft_shape *xs = ox_shape(c, n, 0), *ws = ox_shape(c, n, 1);
    if (xs->rank != 3 || ws->rank != 3 || ws->dims[0] != xs->dims[1] || ws->dims[1] != 1 || ws->dims[2] < 1)
        return onx_error(c, n, FT_EGRAPH, "input is [B, C, L] and weight [C, 1, k]: got ranks %d and %d", xs->rank,
                         ws->rank);
    const char *act = onx_attr_s(c, n, "activation", "none");
    const int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    if (!silu && strcmp(act, "none"))
        return onx_unsupported(c, n, "attribute activation='%s' (expected none, silu or swish)", act);
    const int64_t B = xs->dims[0], C = xs->dims[1], L = xs->dims[2], k = ws->dims[2];
    const ft_dtype dt = ox_dtype(c, n, 0);
    int past = onx_in(c, n, 3);
    const ft_shape ps = {.rank = 3, .dims = {B, C, k - 1}};
    if (past >= 0 && !ft_shape_eq(ox_shape(c, n, 3), &ps))
        return onx_error(c, n, FT_EGRAPH, "past_state must be [%lld, %lld, %lld]", (long long)B, (long long)C,
                         (long long)(k - 1));
    if (past < 0) { /* zeros */
        void *z = calloc((size_t)(B * C * (k - 1)) + 1, ft_dtype_size(dt));
        OX_NEED(z);
        past = onx_const_new(c, n, "zero_state", dt, &ps, z);
        free(z);
        OX_NEED(past >= 0);
    }
    int padded = ox_tmp(c, n, "padded"), in2[2] = {past, onx_in(c, n, 0)};
    OX_NEED(padded >= 0);
    ft_node *cat = onx_emit(c, n, FT_OP_CONCAT, in2, 2, &padded, 1);
    OX_NEED(cat);
    OX_TRY(onx_set_i(c, cat, "axis", 2));
    int conv_out = silu ? ox_tmp(c, n, "conv") : ox_out(c, n, 0);
    OX_NEED(conv_out >= 0);
    int cin[3] = {padded, onx_in(c, n, 1), onx_in(c, n, 2)};
    ft_node *cv = onx_emit(c, n, FT_OP_CONV, cin, cin[2] >= 0 ? 3 : 2, &conv_out, 1);
    OX_NEED(cv);
    OX_TRY(onx_set_i(c, cv, "group", C));
    if (silu)
        OX_NEED(ox_emit1(c, n, FT_OP_SILU, conv_out, ox_out(c, n, 0)));
    if (n->n_out > 1 && onx_out(c, n, 1) >= 0) {
        const int64_t starts[1] = {L}, ends[1] = {L + k - 1}, axes[1] = {2};
        ft_node *sl = ox_emit1(c, n, FT_OP_SLICE, padded, onx_out(c, n, 1));
        OX_NEED(sl);
        OX_TRY(onx_set_ints(c, sl, "starts", starts, 1));
        OX_TRY(onx_set_ints(c, sl, "ends", ends, 1));
        OX_TRY(onx_set_ints(c, sl, "axes", axes, 1));
    }
    return FT_OK;
}
