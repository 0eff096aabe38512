/* ONNX geometry ops -> ftrun's geometry ops (infer_geom.c), one node each:
 * EyeLike (when its input is computed; a constant one is folded by
 * onnx_fold.c), ReverseSequence, CenterCropPad, Col2Im, AffineGrid and
 * RoiAlign. The parameters ONNX passes as inputs (CenterCropPad's shape,
 * Col2Im's image_shape and block_shape, AffineGrid's size) fix the output
 * shape and are read at load time into attributes.
 *
 *   ft_status st = ox_map_col2im(c, n);  // inputs 1, 2 -> image_shape, block_shape
 *
 * Ownership: nothing is kept; emitted nodes belong to the graph being built.
 */
#include "onnx_ops.h"

#include <stdio.h>
#include <string.h>

/* EyeLike: k as it is; the ONNX dtype attribute as ftrun's dtype name. */
ft_status ox_map_eye_like(onx_ctx *c, const onx_node *n)
{
    ft_node *f = ox_emit1(c, n, FT_OP_EYE_LIKE, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    if (onx_has_attr(n, "dtype")) {
        ft_dtype dt;
        const char *name;
        if (ox_dtype_from_onnx(onx_attr_i(n, "dtype", 1), &dt, &name))
            return onx_unsupported(c, n, "dtype %s", name);
        OX_TRY(onx_set_s(c, f, "dtype", ft_dtype_name(dt)));
    }
    return onx_set_i(c, f, "k", onx_attr_i(n, "k", 0));
}

ft_status ox_map_reverse_sequence(onx_ctx *c, const onx_node *n)
{
    int in[2] = {onx_in(c, n, 0), onx_in(c, n, 1)}, out = ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_REVERSE_SEQUENCE, in, 2, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "batch_axis", onx_attr_i(n, "batch_axis", 1)));
    return onx_set_i(c, f, "time_axis", onx_attr_i(n, "time_axis", 0));
}

/* Input k, which fixes the output shape, read at load time; required. */
static ft_status shape_input(onx_ctx *c, const onx_node *n, int k, const char *what, const int64_t **v, int *cnt)
{
    char reason[80];
    snprintf(reason, sizeof reason, "the %s fixes the output shape", what);
    OX_TRY(onx_const_ints(c, n, k, reason, v, cnt));
    return *cnt < 0 ? onx_error(c, n, FT_EGRAPH, "input %d (%s) is missing", k, what) : FT_OK;
}

/* CenterCropPad: the target shape (input 1) read at load time. */
ft_status ox_map_center_crop_pad(onx_ctx *c, const onx_node *n)
{
    const int64_t *sh, *ax;
    int ns;
    OX_TRY(shape_input(c, n, 1, "target shape", &sh, &ns));
    ft_node *f = ox_emit1(c, n, FT_OP_CENTER_CROP_PAD, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    int na = onx_attr_ints(n, "axes", &ax);
    if (na >= 0)
        OX_TRY(onx_set_ints(c, f, "axes", ax, na));
    return onx_set_ints(c, f, "shape", sh, ns);
}

/* An optional INTS attribute copied as it is. */
static ft_status copy_ints(onx_ctx *c, const onx_node *n, ft_node *f, const char *name)
{
    const int64_t *v;
    int cnt = onx_attr_ints(n, name, &v);
    return cnt >= 0 ? onx_set_ints(c, f, name, v, cnt) : FT_OK;
}

/* Col2Im: image_shape (input 1) and block_shape (input 2) read at load time. */
ft_status ox_map_col2im(onx_ctx *c, const onx_node *n)
{
    const int64_t *img, *blk;
    int ni, nb;
    OX_TRY(shape_input(c, n, 1, "image_shape", &img, &ni));
    OX_TRY(shape_input(c, n, 2, "block_shape", &blk, &nb));
    ft_node *f = ox_emit1(c, n, FT_OP_COL2IM, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_ints(c, f, "image_shape", img, ni));
    OX_TRY(onx_set_ints(c, f, "block_shape", blk, nb));
    OX_TRY(copy_ints(c, n, f, "dilations"));
    OX_TRY(copy_ints(c, n, f, "pads"));
    return copy_ints(c, n, f, "strides");
}

/* AffineGrid: the output size (input 1) read at load time. */
ft_status ox_map_affine_grid(onx_ctx *c, const onx_node *n)
{
    const int64_t *sz;
    int ns;
    OX_TRY(shape_input(c, n, 1, "size", &sz, &ns));
    ft_node *f = ox_emit1(c, n, FT_OP_AFFINE_GRID, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_ints(c, f, "size", sz, ns));
    return onx_set_i(c, f, "align_corners", onx_attr_i(n, "align_corners", 0));
}

/* RoiAlign: opset 10 has no coordinate_transformation_mode and behaves as
 * output_half_pixel; from opset 16 the default is half_pixel. */
ft_status ox_map_roi_align(onx_ctx *c, const onx_node *n)
{
    int in[3] = {onx_in(c, n, 0), onx_in(c, n, 1), onx_in(c, n, 2)}, out = ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_ROI_ALIGN, in, 3, &out, 1);
    OX_NEED(f);
    const char *ct = n->opset >= 16 ? onx_attr_s(c, n, "coordinate_transformation_mode", "half_pixel")
                                    : "output_half_pixel";
    OX_TRY(onx_set_s(c, f, "coordinate_transformation_mode", ct));
    OX_TRY(onx_set_s(c, f, "mode", onx_attr_s(c, n, "mode", "avg")));
    OX_TRY(onx_set_i(c, f, "output_height", onx_attr_i(n, "output_height", 1)));
    OX_TRY(onx_set_i(c, f, "output_width", onx_attr_i(n, "output_width", 1)));
    OX_TRY(onx_set_i(c, f, "sampling_ratio", onx_attr_i(n, "sampling_ratio", 0)));
    return onx_set_f(c, f, "spatial_scale", onx_attr_f(n, "spatial_scale", 1.0));
}
