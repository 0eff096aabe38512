/* Ops of ONNX's ai.onnx.ml domain (version 1) that map onto ftrun ops:
 * Binarizer (x > threshold as 1 or 0 in x's dtype) and ArrayFeatureExtractor
 * (x[..., indices], the indices flattened; a 1-D x gives [1, count], as ONNX's
 * reference and ONNX Runtime do). Named "ai.onnx.ml.OP" in MAPS.
 *
 *   const onx_op_map *m = onx_find_map("ai.onnx.ml.Binarizer", 1);
 *   if (m) st = m->map(c, n);
 */
#include <math.h>
#include <string.h>

#include "onnx_ops.h"

ft_status ox_map_binarizer(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GREATER, 0));
    const ft_dtype dt = ox_dtype(c, n, 0);
    double t = onx_attr_f(n, "threshold", 0.0);
    /* for integers, x > t is x > floor(t) */
    int th = ox_scalar(c, n, "threshold", dt, ft_dtype_is_float(dt) ? t : floor(t)), gt = ox_tmp(c, n, "above");
    OX_NEED(th >= 0 && gt >= 0 && ox_emit2(c, n, FT_OP_GREATER, onx_in(c, n, 0), th, gt));
    OX_NEED(ox_cast(c, n, gt, dt, ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_array_feature_extractor(onx_ctx *c, const onx_node *n)
{
    OX_TRY(ox_check_dtype(c, n, FT_OP_GATHER, 0));
    const ft_shape *xs = ox_shape(c, n, 0), *is = ox_shape(c, n, 1);
    if (xs->rank < 1)
        return onx_error(c, n, FT_EGRAPH, "input X is a scalar: ArrayFeatureExtractor selects along its last axis");
    const int64_t count = (int64_t)ft_numel(is);
    int idx = onx_in(c, n, 1);
    if (is->rank != 1) { /* the indices flattened */
        const ft_shape flat = {.rank = 1, .dims = {count}};
        int t = ox_tmp(c, n, "indices");
        OX_NEED(t >= 0 && ox_reshape(c, n, idx, &flat, t));
        idx = t;
    }
    const int one_d = xs->rank == 1;
    int out = one_d ? ox_tmp(c, n, "selected") : ox_out(c, n, 0);
    OX_NEED(out >= 0);
    ft_node *g = ox_emit2(c, n, FT_OP_GATHER, onx_in(c, n, 0), idx, out);
    OX_NEED(g);
    OX_TRY(onx_set_i(c, g, "axis", xs->rank - 1));
    if (one_d) {
        const ft_shape row = {.rank = 2, .dims = {1, count}};
        OX_NEED(ox_reshape(c, n, out, &row, ox_out(c, n, 0)));
    }
    return FT_OK;
}
