/* The ONNX op table: which mapper handles each default-domain op type
 * (onx_find_map), every ONNX operator with how ftrun treats it
 * (onx_op_catalogue, shown by `ftrun ops --onnx`), and the helpers the mapper
 * files share (declared in onnx_ops.h).
 *
 *   const onx_op_map *m = onx_find_map("Gemm", 13);
 *   if (m) st = m->map(c, n);
 *
 * Ownership: the tables are static; the helpers' results belong to the context
 * or the graph being built, as in onnx_import.h.
 */
#include "onnx_ops.h"

#include "onnx.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

int ox_dtype_from_onnx(int64_t t, ft_dtype *dt, const char **name)
{
    int32_t t32 = t >= INT32_MIN && t <= INT32_MAX ? (int32_t)t : 0;
    *name = ft_onnx_type_name(t32);
    return ft_onnx_dtype(t32, dt);
}

ft_node *ox_emit1(onx_ctx *c, const onx_node *n, ft_op op, int in, int out)
{
    return onx_emit(c, n, op, &in, 1, &out, 1);
}

ft_node *ox_emit2(onx_ctx *c, const onx_node *n, ft_op op, int a, int b, int out)
{
    int in[2] = {a, b};
    return onx_emit(c, n, op, in, 2, &out, 1);
}

int ox_out(onx_ctx *c, const onx_node *n, int k)
{
    int t = onx_out(c, n, k);
    if (t >= 0)
        return t;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "unused_output_%d", k);
    return onx_tmp(c, n, suffix);
}

int ox_const_ints(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, const ft_shape *s,
                  const int64_t *v)
{
    uint64_t numel = ft_numel(s);
    void *buf = ft_malloc(numel ? numel * ft_dtype_size(dt) : 1);
    if (!buf)
        return onx_const_new(c, n, suffix, dt, s, NULL); /* reports the lack of memory */
    for (uint64_t i = 0; i < numel; i++)
        ft_store_i64(buf, dt, i, v[i]);
    int t = onx_const_new(c, n, suffix, dt, s, buf);
    free(buf);
    return t;
}

int ox_scalar(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, double v)
{
    ft_shape s = {.rank = 0};
    unsigned char buf[8] = {0};
    ft_store_f64(buf, dt, 0, v);
    return onx_const_new(c, n, suffix, dt, &s, buf);
}

/* An absent input reads as an f32 scalar; the node that uses it fails in
 * inference with a message naming the missing input. */
ft_dtype ox_dtype(onx_ctx *c, const onx_node *n, int k)
{
    const ft_tensor *t = onx_in_tensor(c, n, k);
    return t ? t->dtype : FT_F32;
}

const ft_shape *ox_shape(onx_ctx *c, const onx_node *n, int k)
{
    static const ft_shape none = {.rank = 0};
    const ft_tensor *t = onx_in_tensor(c, n, k);
    return t ? &t->shape : &none;
}

ft_status ox_check_dtype(onx_ctx *c, const onx_node *n, ft_op op, int k)
{
    const ft_tensor *t = onx_in_tensor(c, n, k);
    const ft_op_info *oi = ft_op_get(op);
    if (!t || ft_dtype_in(t->dtype, oi->dtypes))
        return FT_OK;
    char b[160];
    return onx_unsupported(c, n, "input %d ('%s') has dtype %s; ftrun's %s takes %s", k, t->name,
                           ft_dtype_name(t->dtype), oi->name, ft_dtype_mask_str(oi->dtypes, b, sizeof b));
}

ft_status ox_ints_param(onx_ctx *c, const onx_node *n, const char *attr, int k, int input_since, const char *reason,
                        const int64_t **v, int *count)
{
    if (n->opset < input_since) {
        *count = onx_attr_ints(n, attr, v);
        return FT_OK;
    }
    return onx_const_ints(c, n, k, reason, v, count);
}

ft_status ox_axis(onx_ctx *c, const onx_node *n, const char *what, int64_t axis, int rank, int *out)
{
    if (ft_axis(axis, rank, out) == 0)
        return FT_OK;
    return onx_error(c, n, FT_EGRAPH, "%s %lld is out of range for input 0 of rank %d (expected %d..%d)", what,
                     (long long)axis, rank, -rank, rank - 1);
}

ft_node *ox_reshape(onx_ctx *c, const onx_node *n, int t, const ft_shape *s, int out)
{
    ft_node *r = ox_emit1(c, n, FT_OP_RESHAPE, t, out);
    if (r && onx_set_ints(c, r, "shape", s->dims, s->rank))
        return NULL;
    return r;
}

ft_node *ox_transpose(onx_ctx *c, const onx_node *n, int t, const int64_t *perm, int rank, int out)
{
    ft_node *r = ox_emit1(c, n, FT_OP_TRANSPOSE, t, out);
    if (r && onx_set_ints(c, r, "perm", perm, rank))
        return NULL;
    return r;
}

ft_node *ox_where(onx_ctx *c, const onx_node *n, int cond, int a, int b, int out)
{
    int in[3] = {cond, a, b};
    return onx_emit(c, n, FT_OP_WHERE, in, 3, &out, 1);
}

ft_node *ox_cast(onx_ctx *c, const onx_node *n, int t, ft_dtype to, int out)
{
    ft_node *f = ox_emit1(c, n, FT_OP_CAST, t, out);
    if (f && onx_set_s(c, f, "to", ft_dtype_name(to)))
        return NULL;
    return f;
}

ft_node *ox_axis_op(onx_ctx *c, const onx_node *n, ft_op op, int t, int64_t axis, int out)
{
    ft_node *f = ox_emit1(c, n, op, t, out);
    if (f && onx_set_ints(c, f, "axes", &axis, 1))
        return NULL;
    return f;
}

/* -------------------------------------------------------------- the mappers */

/* since: the first opset the mapper handles; the mapper reads n->opset for
 * the later changes. The *_v1 mappers (onnx_ops_legacy.c) take the legacy
 * attributes of opsets 1-6 (broadcast and axis, Gemm's broadcast,
 * BatchNormalization's is_test). The opset-1 forms whose only difference is
 * consumed_inputs (a legacy optimization hint that does not change the
 * result) start at 1; ops whose older forms ftrun does not read start at the
 * first opset it does (Selu-1's defaults differ from Selu-6's, for one). */
static const onx_op_map MAPS[] = {
    /* elementwise, one input */
    {"Abs", 1, ox_map_unary}, {"Neg", 1, ox_map_unary}, {"Sign", 9, ox_map_unary},
    {"Relu", 1, ox_map_unary}, {"Sigmoid", 1, ox_map_unary}, {"Tanh", 1, ox_map_unary},
    {"Exp", 1, ox_map_unary}, {"Log", 1, ox_map_unary}, {"Sqrt", 1, ox_map_unary},
    {"Reciprocal", 1, ox_map_unary}, {"Sin", 7, ox_map_unary}, {"Cos", 7, ox_map_unary},
    {"Erf", 9, ox_map_unary}, {"Floor", 1, ox_map_unary}, {"Ceil", 1, ox_map_unary},
    {"Round", 11, ox_map_unary}, {"Softplus", 1, ox_map_unary}, {"Softsign", 1, ox_map_unary},
    {"HardSwish", 14, ox_map_unary}, {"Mish", 18, ox_map_unary}, {"Not", 1, ox_map_unary},
    {"IsNaN", 9, ox_map_unary}, {"IsInf", 10, ox_map_is_inf},
    {"Tan", 7, ox_map_unary}, {"Sinh", 9, ox_map_unary}, {"Cosh", 9, ox_map_unary},
    {"Asinh", 9, ox_map_unary}, {"Acosh", 9, ox_map_unary}, {"Atanh", 9, ox_map_unary},
    {"Asin", 7, ox_map_unary}, {"Acos", 7, ox_map_unary}, {"Atan", 7, ox_map_unary},
    {"BitwiseNot", 18, ox_map_unary}, {"Det", 11, ox_map_unary},
    {"LeakyRelu", 1, ox_map_alpha_act}, {"Elu", 1, ox_map_alpha_act}, {"Celu", 12, ox_map_alpha_act},
    {"Swish", 24, ox_map_alpha_act}, {"SwiGLU", 28, ox_map_swiglu},
    {"Selu", 6, ox_map_alpha_act}, {"HardSigmoid", 1, ox_map_alpha_act}, {"Gelu", 20, ox_map_gelu},
    {"ThresholdedRelu", 10, ox_map_alpha_act}, {"Shrink", 9, ox_map_shrink},
    {"PRelu", 6, ox_map_prelu}, {"Clip", 6, ox_map_clip}, {"Cast", 6, ox_map_cast}, {"CastLike", 15, ox_map_cast},
    {"BitCast", 26, ox_map_cast},
    /* elementwise, broadcasting */
    {"Add", 1, ox_map_binary_v1}, {"Sub", 1, ox_map_binary_v1}, {"Mul", 1, ox_map_binary_v1},
    {"Div", 1, ox_map_binary_v1}, {"Pow", 1, ox_map_binary_v1}, {"Mod", 10, ox_map_binary},
    {"Equal", 1, ox_map_binary_v1}, {"Less", 1, ox_map_binary_v1}, {"LessOrEqual", 12, ox_map_binary},
    {"Greater", 1, ox_map_binary_v1}, {"GreaterOrEqual", 12, ox_map_binary}, {"And", 1, ox_map_binary_v1},
    {"Or", 1, ox_map_binary_v1}, {"Xor", 1, ox_map_binary_v1}, {"Max", 1, ox_map_variadic},
    {"Min", 1, ox_map_variadic},
    {"BitwiseAnd", 18, ox_map_binary}, {"BitwiseOr", 18, ox_map_binary}, {"BitwiseXor", 18, ox_map_binary},
    {"BitShift", 11, ox_map_binary},
    {"Sum", 1, ox_map_sum_mean}, {"Mean", 1, ox_map_sum_mean}, {"Where", 9, ox_map_where},
    /* matrix products, reductions, scans */
    {"MatMul", 1, ox_map_matmul}, {"Gemm", 1, ox_map_gemm_v1}, {"Einsum", 12, ox_map_einsum},
    {"ReduceSum", 1, ox_map_reduce}, {"ReduceMean", 1, ox_map_reduce}, {"ReduceMax", 1, ox_map_reduce},
    {"ReduceMin", 1, ox_map_reduce}, {"ReduceProd", 1, ox_map_reduce}, {"ReduceL1", 1, ox_map_reduce},
    {"ReduceL2", 1, ox_map_reduce}, {"ReduceSumSquare", 1, ox_map_reduce}, {"ReduceLogSumExp", 1, ox_map_reduce},
    {"ReduceLogSum", 1, ox_map_reduce}, {"ArgMax", 1, ox_map_arg}, {"ArgMin", 1, ox_map_arg},
    {"CumSum", 11, ox_map_cumsum}, {"CumProd", 26, ox_map_cumsum}, {"TopK", 1, ox_map_topk}, {"DFT", 17, ox_map_dft},
    /* normalization, attention */
    {"Softmax", 1, ox_map_softmax}, {"LogSoftmax", 1, ox_map_softmax}, {"Hardmax", 1, ox_map_hardmax},
    {"LayerNormalization", 17, ox_map_layer_norm}, {"RMSNormalization", 23, ox_map_rms_norm},
    {"BatchNormalization", 1, ox_map_batch_norm_v1}, {"InstanceNormalization", 1, ox_map_instance_norm},
    {"GroupNormalization", 18, ox_map_group_norm}, {"LpNormalization", 1, ox_map_lp_norm},
    {"MeanVarianceNormalization", 9, ox_map_mvn}, {"Attention", 23, ox_map_attention},
    {"RotaryEmbedding", 23, ox_map_rotary},
    {"LinearAttention", 27, ox_map_linear_attention},
    /* recurrent layers */
    {"LSTM", 7, ox_map_rnn}, {"GRU", 7, ox_map_rnn}, {"RNN", 7, ox_map_rnn},
    /* linear quantization */
    {"DequantizeLinear", 10, ox_map_dequantize}, {"QuantizeLinear", 10, ox_map_quantize},
    {"DynamicQuantizeLinear", 11, ox_map_dyn_quantize}, {"MatMulInteger", 10, ox_map_matmul_integer},
    {"ConvInteger", 10, ox_map_int_conv}, {"QLinearMatMul", 10, ox_map_qlinear_matmul},
    {"QLinearConv", 10, ox_map_int_conv},
    /* losses */
    {"NegativeLogLikelihoodLoss", 12, ox_map_nll_loss}, {"SoftmaxCrossEntropyLoss", 12, ox_map_softmax_ce_loss},
    {"STFT", 17, ox_map_stft}, {"MelWeightMatrix", 17, ox_map_mel_weight_matrix},
    /* shape and data movement */
    /* random sampling (onnx_ops_random.c) */
    {"RandomUniformLike", 1, ox_map_random_like}, {"RandomNormalLike", 1, ox_map_random_like},
    {"Bernoulli", 15, ox_map_random_like}, {"Multinomial", 7, ox_map_random_like}, {"RandomUniform", 1, ox_map_random}, {"RandomNormal", 1, ox_map_random},
    {"Identity", 1, ox_map_identity}, {"Dropout", 7, ox_map_dropout}, {"Reshape", 5, ox_map_reshape},
    {"Transpose", 1, ox_map_transpose}, {"Flatten", 1, ox_map_flatten}, {"Squeeze", 1, ox_map_squeeze},
    {"Unsqueeze", 1, ox_map_squeeze}, {"Expand", 8, ox_map_expand}, {"Tile", 6, ox_map_tile},
    {"Concat", 4, ox_map_concat}, {"Split", 2, ox_map_split}, {"Slice", 1, ox_map_slice},
    {"Gather", 1, ox_map_gather}, {"GatherElements", 11, ox_map_gather}, {"Pad", 2, ox_map_pad},
    {"DepthToSpace", 1, ox_map_depth_space}, {"SpaceToDepth", 1, ox_map_depth_space},
    {"GridSample", 16, ox_map_grid_sample},
    {"Trilu", 14, ox_map_trilu}, {"OneHot", 9, ox_map_one_hot},
    {"GatherND", 11, ox_map_gather_nd},
    {"EyeLike", 9, ox_map_eye_like}, {"ReverseSequence", 10, ox_map_reverse_sequence},
    {"CenterCropPad", 18, ox_map_center_crop_pad}, {"Col2Im", 18, ox_map_col2im},
    {"AffineGrid", 20, ox_map_affine_grid}, {"RoiAlign", 10, ox_map_roi_align},
    {"ScatterND", 11, ox_map_scatter}, {"ScatterElements", 11, ox_map_scatter}, {"Scatter", 9, ox_map_scatter},
    {"TensorScatter", 24, ox_map_tensor_scatter},
    /* convolution, pooling, resampling */
    {"Conv", 1, ox_map_conv}, {"ConvTranspose", 1, ox_map_conv}, {"DeformConv", 19, ox_map_deform_conv},
    {"MaxPool", 1, ox_map_pool}, {"MaxUnpool", 9, ox_map_max_unpool},
    {"AveragePool", 1, ox_map_pool_v1}, {"GlobalAveragePool", 1, ox_map_global_pool},
    {"GlobalMaxPool", 1, ox_map_global_pool}, {"Resize", 10, ox_map_resize}, {"Upsample", 7, ox_map_resize},
    {"LRN", 1, ox_map_lrn}, {"LpPool", 2, ox_map_lp_pool}, {"GlobalLpPool", 2, ox_map_lp_pool}, {"HannWindow", 17, ox_map_window}, {"HammingWindow", 17, ox_map_window},
    {"BlackmanWindow", 17, ox_map_window},
    {"CausalConvWithState", 27, ox_map_causal_conv_with_state},
    /* sequences and optionals known at load (no run-time sequence) */
    {"SequenceEmpty", 11, ox_map_seq_empty}, {"SequenceConstruct", 11, ox_map_seq_construct},
    {"SequenceInsert", 11, ox_map_seq_insert}, {"SequenceErase", 11, ox_map_seq_erase},
    {"SequenceAt", 11, ox_map_seq_at}, {"SequenceLength", 11, ox_map_seq_length},
    {"SplitToSequence", 11, ox_map_split_to_seq}, {"ConcatFromSequence", 11, ox_map_concat_from_seq},
    {"Optional", 15, ox_map_optional}, {"OptionalHasElement", 15, ox_map_optional_has},
    {"OptionalGetElement", 15, ox_map_optional_get},
    /* loops unrolled at load (onnx_loop.c) */
    {"Loop", 1, ox_map_loop}, {"Scan", 8, ox_map_scan}, {"SequenceMap", 17, ox_map_seq_map},
    /* data-dependent output shapes */
    {"NonZero", 9, ox_map_non_zero}, {"Compress", 9, ox_map_compress}, {"Unique", 11, ox_map_unique},
    {"NonMaxSuppression", 10, ox_map_nms}, {"ImageDecoder", 20, ox_map_image_decoder},
    /* strings (onnx_ops_text.c) */
    {"StringNormalizer", 10, ox_map_string_normalizer}, {"StringConcat", 20, ox_map_string_concat},
    {"RegexFullMatch", 20, ox_map_regex_full_match}, {"StringSplit", 20, ox_map_string_split},
    {"TfIdfVectorizer", 9, ox_map_tfidf_vectorizer},
    /* other domains, named DOMAIN.OP */
    {"ai.onnx.preview.training.Adagrad", 1, ox_map_optimizer}, {"ai.onnx.preview.training.Adam", 1, ox_map_optimizer},
    {"ai.onnx.preview.training.Momentum", 1, ox_map_optimizer},
    {"ai.onnx.preview.training.Gradient", 1, ox_map_gradient},
    {"ai.onnx.preview.FlexAttention", 1, ox_map_flex_attention},
    {"ai.onnx.ml.Binarizer", 1, ox_map_binarizer}, {"ai.onnx.ml.ArrayFeatureExtractor", 1, ox_map_array_feature_extractor},
    {"ai.onnx.ml.LabelEncoder", 2, ox_map_label_encoder}, {"ai.onnx.ml.TreeEnsemble", 5, ox_map_tree_ensemble},
    {"ai.onnx.ml.TreeEnsembleRegressor", 1, ox_map_tree_ensemble_regressor},
};

const onx_op_map *onx_find_map(const char *op_type, int opset)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(MAPS); i++)
        if (strcmp(MAPS[i].op_type, op_type) == 0)
            return opset >= MAPS[i].since ? &MAPS[i] : NULL;
    return NULL;
}

/* ---------------------------------------------------------------- catalogue */

#define FOLD "folded at load time; needs its inputs known at load"
#define SEQ "(sequences known at load)"
#define OPT "(optionals known at load)"

/* Every default-domain operator up to opset 28, in alphabetical order. 'm'
 * entries are exactly the op types of MAPS. */
static const onx_op_status CATALOGUE[] = {
    {"Abs", 'm', "abs"},
    {"Acos", 'm', "acos"},
    {"Acosh", 'm', "acosh"},
    {"Add", 'm', "add (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"AffineGrid", 'm', "affine_grid (size known at load)"},
    {"And", 'm', "and (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"ArgMax", 'm', "argmax"},
    {"ArgMin", 'm', "argmin"},
    {"Asin", 'm', "asin"},
    {"Asinh", 'm', "asinh"},
    {"Atan", 'm', "atan"},
    {"Atanh", 'm', "atanh"},
    {"Attention", 'm', "attention (4-D, or 3-D with q_num_heads/kv_num_heads: reshape + transpose around it; softcap, "
                       "past/present key and value, nonpad_kv_seqlen, the QK output, sliding windows)"},
    {"AveragePool", 'm', "average_pool"},
    {"BatchNormalization", 'm', "batch_norm (opsets 1-6: is_test=1; training_mode=1 with its running mean and var)"},
    {"Bernoulli", 'm', "bernoulli (ftrun's Philox numbers, not NumPy's)"},
    {"BitCast", 'm', "bitcast"},
    {"BitShift", 'm', "bit_shift"},
    {"BitwiseAnd", 'm', "bitwise_and"},
    {"BitwiseNot", 'm', "bitwise_not"},
    {"BitwiseOr", 'm', "bitwise_or"},
    {"BitwiseXor", 'm', "bitwise_xor"},
    {"BlackmanWindow", 'm', "blackman_window"},
    {"Cast", 'm', "cast"},
    {"CastLike", 'm', "cast"},
    {"CausalConvWithState", 'm', "concat + depthwise conv (+ silu) + slice (opset 27)"},
    {"Ceil", 'm', "ceil"},
    {"Celu", 'm', "celu"},
    {"CenterCropPad", 'm', "center_crop_pad (target shape known at load)"},
    {"Clip", 'm', "clip (min/max known at load)"},
    {"Col2Im", 'm', "col2im (image_shape and block_shape known at load)"},
    {"Compress", 'm', "compress (run-time output shape)"},
    {"Concat", 'm', "concat"},
    {"ConcatFromSequence", 'm', "concat (new_axis: unsqueeze + concat) " SEQ},
    {"Constant", 'f', FOLD},
    {"ConstantOfShape", 'f', FOLD},
    {"Conv", 'm', "conv"},
    {"ConvInteger", 'm', "conv_integer"},
    {"ConvTranspose", 'm', "conv_transpose"},
    {"Cos", 'm', "cos"},
    {"Cosh", 'm', "cosh"},
    {"CumProd", 'm', "cumprod (axis known at load)"},
    {"CumSum", 'm', "cumsum (axis known at load)"},
    {"DFT", 'm', "fft, ifft, rfft, irfft (+ pad, slice, squeeze, unsqueeze)"},
    {"DeformConv", 'm', "deform_conv"},
    {"DepthToSpace", 'm', "depth_to_space"},
    {"DequantizeLinear", 'm', "dequantize_linear (block_size: expanded into cast, sub and mul)"},
    {"Det", 'm', "det"},
    {"Div", 'm', "div (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"Dropout", 'm', "identity in inference; dropout when training_mode is true"},
    {"DynamicQuantizeLinear", 'm', "dynamic_quantize_linear"},
    {"Einsum", 'm', "einsum"},
    {"Elu", 'm', "elu"},
    {"Equal", 'm', "equal (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"Erf", 'm', "erf"},
    {"Exp", 'm', "exp"},
    {"Expand", 'm', "expand (shape known at load)"},
    {"EyeLike", 'm', "eye_like (folded at load when its input is a constant)"},
    {"Flatten", 'm', "flatten"},
    {"Floor", 'm', "floor"},
    {"GRU", 'm', "gru"},
    {"Gather", 'm', "gather"},
    {"GatherElements", 'm', "gather_elements"},
    {"GatherND", 'm', "gather_nd"},
    {"Gelu", 'm', "gelu"},
    {"Gemm", 'm', "gemm (opsets 1-6: C of shape [M, N] unless broadcast=1)"},
    {"GlobalAveragePool", 'm', "global_average_pool"},
    {"GlobalLpPool", 'm', "lp_pool over the whole spatial extent (else abs + pow + reduce_sum + pow)"},
    {"GlobalMaxPool", 'm', "global_max_pool"},
    {"Greater", 'm', "greater (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"GreaterOrEqual", 'm', "greater_equal"},
    {"GridSample", 'm', "grid_sample (+ cast of the grid to X's dtype)"},
    {"GroupNormalization", 'm', "group_norm (opset 18's per-group scale and bias repeated per channel)"},
    {"HammingWindow", 'm', "hamming_window"},
    {"HannWindow", 'm', "hann_window"},
    {"HardSigmoid", 'm', "hard_sigmoid"},
    {"HardSwish", 'm', "hard_swish"},
    {"Hardmax", 'm', "hardmax (before opset 13: flatten + hardmax + reshape)"},
    {"Identity", 'm', "alias of its input"},
    {"If", 'm', "folded at load when its condition is known then; else both branches, guarded by it, and if_select"},
    {"ImageDecoder", 'm', "image_decoder (run-time output shape unless the image is known at load; CPU)"},
    {"InstanceNormalization", 'm', "instance_norm"},
    {"IsInf", 'm', "is_inf (and a sign test for detect_negative/detect_positive)"},
    {"IsNaN", 'm', "is_nan"},
    {"LRN", 'm', "lrn"},
    {"LSTM", 'm', "lstm"},
    {"LayerNormalization", 'm', "layer_norm"},
    {"LinearAttention", 'm', "split, reshape, exp, mul, sub, add, matmul and concat: the recurrence unrolled over T "
                             "at load, in f32 (linear, gated, delta, gated_delta; GQA)"},
    {"LeakyRelu", 'm', "leaky_relu"},
    {"Less", 'm', "less (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"LessOrEqual", 'm', "less_equal"},
    {"Log", 'm', "log"},
    {"LogSoftmax", 'm', "log_softmax (before opset 13: flatten + log_softmax + reshape)"},
    {"Loop", 'm', "unrolled at load (trip count and conditions known at load, at most 4096 iterations; carried "
                      "sequences are lists at load); else loop_begin, its body once, loop_end, run at run time"},
    {"LpNormalization", 'm', "lp_normalization"},
    {"LpPool", 'm', "lp_pool"},
    {"MatMul", 'm', "matmul"},
    {"MatMulInteger", 'm', "matmul_integer"},
    {"Max", 'm', "max"},
    {"MaxPool", 'm', "max_pool"},
    {"MaxRoiPool", '-', "no ftrun op (roi pooling)"},
    {"MaxUnpool", 'm', "max_unpool (output_shape known at load)"},
    {"Mean", 'm', "add chain + div"},
    {"MeanVarianceNormalization", 'm', "mean_variance_normalization"},
    {"MelWeightMatrix", 'm', "mel_weight_matrix (num_mel_bins and dft_length known at load)"},
    {"Min", 'm', "min"},
    {"Mish", 'm', "mish"},
    {"Mod", 'm', "mod"},
    {"Mul", 'm', "mul (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"Multinomial", 'm', "multinomial (ftrun's Philox numbers, not NumPy's)"},
    {"Neg", 'm', "neg"},
    {"NegativeLogLikelihoodLoss", 'm', "negative_log_likelihood_loss"},
    {"NonMaxSuppression", 'm', "non_max_suppression (run-time output shape)"},
    {"NonZero", 'm', "non_zero (run-time output shape)"},
    {"Not", 'm', "not"},
    {"OneHot", 'm', "one_hot (depth known at load or computed at run time)"},
    {"Optional", 'm', "a list of 0 or 1 tensors " OPT},
    {"OptionalGetElement", 'm', "alias of the element " OPT},
    {"OptionalHasElement", 'm', "a bool constant " OPT},
    {"Or", 'm', "or (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"PRelu", 'm', "prelu (integers: where(x < 0, x * slope, x))"},
    {"Pad", 'm', "pad (pads, value and axes known at load or computed at run time)"},
    {"Pow", 'm', "pow (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"QLinearConv", 'm', "qlinear_conv"},
    {"QLinearMatMul", 'm', "qlinear_matmul"},
    {"QuantizeLinear", 'm', "quantize_linear (block_size: expanded into div, round, add and quantize_linear)"},
    {"RMSNormalization", 'm', "rms_norm"},
    {"RNN", 'm', "rnn"},
    {"RandomNormal", 'm', "a constant made at load (ftrun's Philox numbers, as random_normal_like)"},
    {"RandomNormalLike", 'm', "random_normal_like (ftrun's Philox numbers, not NumPy's)"},
    {"RandomUniform", 'm', "a constant made at load (ftrun's Philox numbers, as random_uniform_like)"},
    {"RandomUniformLike", 'm', "random_uniform_like (ftrun's Philox numbers, not NumPy's)"},
    {"Range", 'f', FOLD},
    {"Reciprocal", 'm', "reciprocal"},
    {"ReduceL1", 'm', "reduce_l1"},
    {"ReduceL2", 'm', "reduce_l2"},
    {"ReduceLogSum", 'm', "reduce_log_sum"},
    {"ReduceLogSumExp", 'm', "reduce_log_sum_exp"},
    {"ReduceMax", 'm', "reduce_max"},
    {"ReduceMean", 'm', "reduce_mean"},
    {"ReduceMin", 'm', "reduce_min"},
    {"ReduceProd", 'm', "reduce_prod"},
    {"ReduceSum", 'm', "reduce_sum"},
    {"ReduceSumSquare", 'm', "reduce_sum_square"},
    {"RegexFullMatch", 'm', "regex_full_match (POSIX extended syntax)"},
    {"Relu", 'm', "relu"},
    {"Reshape", 'm', "reshape (shape known at load)"},
    {"Resize", 'm', "resize (modes nearest, linear and cubic; sizes, scales and roi may be computed at run time)"},
    {"ReverseSequence", 'm', "reverse_sequence"},
    {"RoiAlign", 'm', "roi_align"},
    {"RotaryEmbedding", 'm', "rotary_embedding"},
    {"Round", 'm', "round"},
    {"STFT", 'm', "stft (frame_step and frame_length known at load)"},
    {"Scan", 'm', "unrolled at load (its length known at load, at most 4096; opset 8: a scan per batch entry, sequence_lens "
                      "absent or full); else loop_begin, slices, its body once, loop_end, run at run time"},
    {"Scatter", 'm', "scatter_elements (deprecated op)"},
    {"ScatterElements", 'm', "scatter_elements"},
    {"ScatterND", 'm', "scatter_nd"},
    {"Selu", 'm', "selu"},
    {"SequenceAt", 'm', "alias of the element, position known at load " SEQ},
    {"SequenceConstruct", 'm', "a list of tensors " SEQ},
    {"SequenceEmpty", 'm', "an empty list " SEQ},
    {"SequenceErase", 'm', "a shorter list, position known at load " SEQ},
    {"SequenceInsert", 'm', "a longer list, position known at load " SEQ},
    {"SequenceLength", 'm', "an int64 constant " SEQ},
    {"SequenceMap", 'm', "unrolled at load: its body once per element " SEQ},
    {"Shape", 'f', FOLD},
    {"Shrink", 'm', "shrink (integers: where + add/sub)"},
    {"Sigmoid", 'm', "sigmoid"},
    {"Sign", 'm', "sign"},
    {"Sin", 'm', "sin"},
    {"Sinh", 'm', "sinh"},
    {"Size", 'f', FOLD},
    {"Slice", 'm', "slice (starts/ends/axes/steps known at load)"},
    {"Softmax", 'm', "softmax (before opset 13: flatten + softmax + reshape)"},
    {"SoftmaxCrossEntropyLoss", 'm', "softmax_cross_entropy_loss"},
    {"Softplus", 'm', "softplus"},
    {"Softsign", 'm', "softsign"},
    {"SpaceToDepth", 'm', "space_to_depth"},
    {"Split", 'm', "split (sizes known at load or computed at run time)"},
    {"SplitToSequence", 'm', "split (+ squeeze for keepdims=0), split known at load " SEQ},
    {"Sqrt", 'm', "sqrt"},
    {"Squeeze", 'm', "squeeze (axes known at load)"},
    {"StringConcat", 'm', "string_concat"},
    {"StringNormalizer", 'm', "string_normalizer (ASCII case rules; run-time output shape)"},
    {"StringSplit", 'm', "string_split (ASCII blanks; run-time output shape)"},
    {"Sub", 'm', "sub (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    {"Sum", 'm', "add chain"},
    {"SwiGLU", 'm', "swish + mul (opset 28)"},
    {"Swish", 'm', "swish (opset 24)"},
    {"Tan", 'm', "tan"},
    {"Tanh", 'm', "tanh"},
    {"TensorScatter", 'm', "tensor_scatter"},
    {"TfIdfVectorizer", 'm', "tfidf_vectorizer (its pool a constant input)"},
    {"ThresholdedRelu", 'm', "thresholded_relu"},
    {"Tile", 'm', "tile (repeats known at load)"},
    {"TopK", 'm', "topk (k known at load)"},
    {"Transpose", 'm', "transpose"},
    {"Trilu", 'm', "trilu (k known at load)"},
    {"Unique", 'm', "unique (run-time output shape)"},
    {"Unsqueeze", 'm', "unsqueeze (axes known at load)"},
    {"Upsample", 'm', "resize (deprecated op; modes nearest and linear; scales may be computed at run time)"},
    {"Where", 'm', "where"},
    {"Xor", 'm', "xor (opsets 1-6: B reshaped for the broadcast and axis attributes)"},
    /* other domains */
    {"ai.onnx.ml.ArrayFeatureExtractor", 'm', "gather on the last axis (indices flattened)"},
    {"ai.onnx.ml.Binarizer", 'm', "greater + cast"},
    {"ai.onnx.ml.LabelEncoder", 'm', "label_encoder (versions 2-4; keys, values and default as constants)"},
    {"ai.onnx.ml.TreeEnsemble", 'm', "tree_ensemble (version 5; post_transform NONE)"},
    {"ai.onnx.ml.TreeEnsembleRegressor", 'm', "tree_ensemble + cast, add, sigmoid/softmax (one weight per leaf)"},
    {"ai.onnx.preview.FlexAttention", 'm', "mul, transpose, matmul, cast, softmax (GQA: gather of the K/V heads), the "
                                            "score_mod and prob_mod graphs imported between them; attention without "
                                            "them (f32, f64)"},
    {"ai.onnx.preview.training.Adagrad", 'm', "elementwise ops (one update step)"},
    {"ai.onnx.preview.training.Adam", 'm', "elementwise ops (one update step)"},
    {"ai.onnx.preview.training.Gradient", '-', "automatic differentiation of a subgraph (no ftrun op)"},
    {"ai.onnx.preview.training.Momentum", 'm', "elementwise ops (one update step; standard and nesterov)"},
};

int onx_op_catalogue(const onx_op_status **list)
{
    *list = CATALOGUE;
    return (int)FT_ARRAY_LEN(CATALOGUE);
}
