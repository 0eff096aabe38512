/* The ONNX ops whose output shapes depend on their inputs' values: NonZero,
 * Compress, Unique, NonMaxSuppression and ImageDecoder, each one ftrun op of
 * the same meaning, whose outputs get their shapes at run time (graph.h:
 * FT_TF_DYNAMIC) unless, for ImageDecoder, its image is known at load. What reads those outputs is inferred again at every run;
 * a Shape or Size of one is the shape or size op, read at run time, unless
 * it reads only dims fixed at load (graph.h: ft_tensor.fixed_dims), when
 * it is folded (onnx_fold.c). */
#include "onnx_ops.h"
#include "onnx.pb-c.h"

ft_status ox_map_non_zero(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_NON_ZERO, 0));
    OX_NEED(ox_emit1(c, n, FT_OP_NON_ZERO, onx_in(c, n, 0), ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_compress(onx_ctx *c, const onx_node *n)
{
    ft_node *f = ox_emit2(c, n, FT_OP_COMPRESS, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_has_attr(n, "axis") ? onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0)) : FT_OK;
}

/* Unique: Y, then the optional indices, inverse_indices and counts (an
 * output left unnamed between named ones still has a tensor). */
ft_status ox_map_unique(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_UNIQUE, 0));
    int in = onx_in(c, n, 0), out[4], n_out = n->n_out < 4 ? n->n_out : 4;
    while (n_out > 1 && !*n->pb->output[n_out - 1])
        n_out--;
    for (int k = 0; k < n_out; k++)
        if ((out[k] = ox_out(c, n, k)) < 0)
            return onx_status(c);
    ft_node *f = onx_emit(c, n, FT_OP_UNIQUE, &in, 1, out, n_out);
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "sorted", onx_attr_i(n, "sorted", 1)));
    return onx_has_attr(n, "axis") ? onx_set_i(c, f, "axis", onx_attr_i(n, "axis", 0)) : FT_OK;
}

/* NonMaxSuppression: boxes, scores, and the optional
 * max_output_boxes_per_class, iou_threshold and score_threshold, read by
 * the kernel at run time (a constant max bounds the output at load). */
ft_status ox_map_nms(onx_ctx *c, const onx_node *n)
{
    ft_node *f = onx_emit(c, n, FT_OP_NON_MAX_SUPPRESSION, NULL, 0, NULL, 0);
    OX_NEED(f);
    return onx_set_i(c, f, "center_point_box", onx_attr_i(n, "center_point_box", 0));
}

ft_status ox_map_image_decoder(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_IMAGE_DECODER, 0));
    ft_node *f = ox_emit1(c, n, FT_OP_IMAGE_DECODER, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_s(c, f, "pixel_format", onx_attr_s(c, n, "pixel_format", "RGB"));
}
