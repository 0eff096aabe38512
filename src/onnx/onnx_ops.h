/* The ONNX op mappers, shared between the mapper files (onnx_ops_*.c) and the
 * table in onnx_ops.c. Each mapper follows the contract of onnx_import.h: it
 * emits ftrun nodes for one ONNX node (one to one or a short fixed expansion)
 * and reports what ftrun cannot express with onx_unsupported.
 *
 * The helpers below wrap the common shapes of an expansion:
 *
 *   int x = onx_in(c, n, 0), t = ox_tmp(c, n, "exp");     // softplus-like: log(exp(x) + 1)
 *   int one = ox_scalar(c, n, "one", ox_dtype(c, n, 0), 1.0), u = ox_tmp(c, n, "sum");
 *   OX_NEED(t >= 0 && one >= 0 && u >= 0);
 *   OX_NEED(ox_emit1(c, n, FT_OP_EXP, x, t) && ox_emit2(c, n, FT_OP_ADD, t, one, u));
 *   OX_NEED(ox_emit1(c, n, FT_OP_LOG, u, ox_out(c, n, 0)));
 *
 * Ownership: as onnx_import.h (the context owns every list it hands out).
 */
#ifndef FT_ONNX_OPS_H
#define FT_ONNX_OPS_H

#include "onnx_import.h"

/* Return the status of an expression when it is not FT_OK. */
#define OX_TRY(expr)                  \
    do {                              \
        ft_status ox_st_ = (expr);    \
        if (ox_st_ != FT_OK)          \
            return ox_st_;            \
    } while (0)
/* Return the context's status when an emitted node or new tensor is missing. */
#define OX_NEED(expr)                 \
    do {                              \
        if (!(expr))                  \
            return onx_status(c);     \
    } while (0)

/* ONNX TensorProto data type -> ftrun dtype. Returns 0, or -1 (and *name the
 * ONNX name of the type) when ftrun has no such dtype. */
int ox_dtype_from_onnx(int64_t onnx_type, ft_dtype *dt, const char **name);

/* Emit one node of one or two inputs and one output (tensor indices). */
ft_node *ox_emit1(onx_ctx *c, const onx_node *n, ft_op op, int in, int out);
ft_node *ox_emit2(onx_ctx *c, const onx_node *n, ft_op op, int a, int b, int out);
/* op of all of n's inputs into its output 0 (concat: with attribute axis);
 * more than 64 inputs become op of ops of at most 64 (onnx_ops_movement.c). */
ft_status ox_emit_chunked(onx_ctx *c, const onx_node *n, ft_op op, int64_t axis);
/* A fresh intermediate, or -1 (onx_status has the failure). */
static inline int ox_tmp(onx_ctx *c, const onx_node *n, const char *suffix) { return onx_tmp(c, n, suffix); }
/* Output k of the ONNX node, or a fresh intermediate when the model leaves it
 * unnamed (so an expansion always has somewhere to write). */
int ox_out(onx_ctx *c, const onx_node *n, int k);
/* A scalar constant of dtype dt holding v (converted), or -1. */
int ox_scalar(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, double v);
/* A constant of dtype dt and shape s holding the int64 values v (converted). */
int ox_const_ints(onx_ctx *c, const onx_node *n, const char *suffix, ft_dtype dt, const ft_shape *s,
                  const int64_t *v);
/* Dtype and shape of input k (f32 and a scalar when the input is absent). */
ft_dtype ox_dtype(onx_ctx *c, const onx_node *n, int k);
const ft_shape *ox_shape(onx_ctx *c, const onx_node *n, int k);
/* onx_unsupported with "input K ('name') has dtype D; ftrun's OP takes ..."
 * when input k's dtype is not one op accepts for its first input. */
ft_status ox_check_dtype(onx_ctx *c, const onx_node *n, ft_op op, int k);
/* An INTS parameter that is an attribute `attr` before opset `input_since`
 * and input k from then on. *count is -1 when neither is given. */
ft_status ox_ints_param(onx_ctx *c, const onx_node *n, const char *attr, int k, int input_since, const char *reason,
                        const int64_t **v, int *count);
/* Normalise axis against rank, or report it as an error naming the node. */
ft_status ox_axis(onx_ctx *c, const onx_node *n, const char *what, int64_t axis, int rank, int *out);
/* Reshape tensor t to shape s into out (emits a reshape node). */
ft_node *ox_reshape(onx_ctx *c, const onx_node *n, int t, const ft_shape *s, int out);
/* Transpose tensor t by perm into out. */
ft_node *ox_transpose(onx_ctx *c, const onx_node *n, int t, const int64_t *perm, int rank, int out);

/* where(cond, a, b) into out. */
ft_node *ox_where(onx_ctx *c, const onx_node *n, int cond, int a, int b, int out);
/* cast of t to dtype `to` into out. */
ft_node *ox_cast(onx_ctx *c, const onx_node *n, int t, ft_dtype to, int out);
/* op (squeeze, unsqueeze, a reduction) of t over the one axis `axis` into out. */
ft_node *ox_axis_op(onx_ctx *c, const onx_node *n, ft_op op, int t, int64_t axis, int out);
/* Conv's attributes (strides, pads, dilations, group, auto_pad; with tr,
 * ConvTranspose's output_padding and output_shape) onto ftrun node f. */
ft_status ox_conv_attrs(onx_ctx *c, const onx_node *n, ft_node *f, int tr);

/* ---- mappers, by file ---- */
/* onnx_ops_elementwise.c */
ft_status ox_map_unary(onx_ctx *c, const onx_node *n);
ft_status ox_map_binary(onx_ctx *c, const onx_node *n);
ft_status ox_map_variadic(onx_ctx *c, const onx_node *n);
ft_status ox_map_sum_mean(onx_ctx *c, const onx_node *n);
ft_status ox_map_where(onx_ctx *c, const onx_node *n);
ft_status ox_map_alpha_act(onx_ctx *c, const onx_node *n);
ft_status ox_map_gelu(onx_ctx *c, const onx_node *n);
ft_status ox_map_swiglu(onx_ctx *c, const onx_node *n);
/* Loop and Scan unrolled at load (onnx_loop.c) */
ft_status ox_map_loop(onx_ctx *c, const onx_node *n);
ft_status ox_map_scan(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_map(onx_ctx *c, const onx_node *n);
/* NonZero, Compress, Unique, NonMaxSuppression: output shapes known at run
 * time (onnx_ops_dynamic.c) */
ft_status ox_map_non_zero(onx_ctx *c, const onx_node *n);
ft_status ox_map_compress(onx_ctx *c, const onx_node *n);
ft_status ox_map_unique(onx_ctx *c, const onx_node *n);
ft_status ox_map_nms(onx_ctx *c, const onx_node *n);
/* ai.onnx.preview.training: Adagrad, Adam, Momentum (onnx_ops_training.c) */
ft_status ox_map_optimizer(onx_ctx *c, const onx_node *n);
ft_status ox_map_gradient(onx_ctx *c, const onx_node *n);
/* ai.onnx.preview: FlexAttention, its score_mod and prob_mod graphs imported
 * (onnx_ops_flexattn.c) */
ft_status ox_map_flex_attention(onx_ctx *c, const onx_node *n);
/* ai.onnx.ml (onnx_ops_ml.c) */
ft_status ox_map_binarizer(onx_ctx *c, const onx_node *n);
ft_status ox_map_string_split(onx_ctx *c, const onx_node *n);
ft_status ox_map_tfidf_vectorizer(onx_ctx *c, const onx_node *n);
ft_status ox_map_label_encoder(onx_ctx *c, const onx_node *n);
ft_status ox_map_tree_ensemble(onx_ctx *c, const onx_node *n);
ft_status ox_map_tree_ensemble_regressor(onx_ctx *c, const onx_node *n);
/* A 1-D string constant of the attribute a's strings (onnx_ops_text.c); -1
 * on failure (the reason in onx_last_error), -2 for a string that is not
 * UTF-8. */
struct Onnx__AttributeProto;
int ox_const_strings(onx_ctx *c, const onx_node *n, const char *suffix, const struct Onnx__AttributeProto *a);
ft_status ox_map_string_normalizer(onx_ctx *c, const onx_node *n);
ft_status ox_map_string_concat(onx_ctx *c, const onx_node *n);
ft_status ox_map_regex_full_match(onx_ctx *c, const onx_node *n);
ft_status ox_map_array_feature_extractor(onx_ctx *c, const onx_node *n);
/* onnx_ops_nn.c: CausalConvWithState (opset 27) */
ft_status ox_map_causal_conv_with_state(onx_ctx *c, const onx_node *n);
ft_status ox_map_clip(onx_ctx *c, const onx_node *n);
ft_status ox_map_cast(onx_ctx *c, const onx_node *n);
ft_status ox_map_is_inf(onx_ctx *c, const onx_node *n);
ft_status ox_map_prelu(onx_ctx *c, const onx_node *n);
ft_status ox_map_shrink(onx_ctx *c, const onx_node *n);
/* onnx_ops_math.c */
ft_status ox_map_matmul(onx_ctx *c, const onx_node *n);
ft_status ox_map_gemm(onx_ctx *c, const onx_node *n);
ft_status ox_map_einsum(onx_ctx *c, const onx_node *n);
ft_status ox_map_reduce(onx_ctx *c, const onx_node *n);
ft_status ox_map_arg(onx_ctx *c, const onx_node *n);
ft_status ox_map_cumsum(onx_ctx *c, const onx_node *n);
ft_status ox_map_topk(onx_ctx *c, const onx_node *n);
ft_status ox_map_dft(onx_ctx *c, const onx_node *n);
/* onnx_ops_norm.c */
ft_status ox_map_softmax(onx_ctx *c, const onx_node *n);
ft_status ox_map_hardmax(onx_ctx *c, const onx_node *n);
ft_status ox_map_layer_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_rms_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_batch_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_instance_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_group_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_lp_norm(onx_ctx *c, const onx_node *n);
ft_status ox_map_mvn(onx_ctx *c, const onx_node *n);
ft_status ox_map_attention(onx_ctx *c, const onx_node *n);
/* onnx_ops_linattn.c */
ft_status ox_map_linear_attention(onx_ctx *c, const onx_node *n);
/* onnx_ops_rnn.c */
ft_status ox_map_rnn(onx_ctx *c, const onx_node *n);
ft_status ox_map_rotary(onx_ctx *c, const onx_node *n);
/* onnx_ops_loss.c */
ft_status ox_map_nll_loss(onx_ctx *c, const onx_node *n);
ft_status ox_map_softmax_ce_loss(onx_ctx *c, const onx_node *n);
ft_status ox_map_stft(onx_ctx *c, const onx_node *n);
/* onnx_ops_quant.c */
ft_status ox_map_dequantize(onx_ctx *c, const onx_node *n);
ft_status ox_map_quantize(onx_ctx *c, const onx_node *n);
ft_status ox_map_dyn_quantize(onx_ctx *c, const onx_node *n);
ft_status ox_map_matmul_integer(onx_ctx *c, const onx_node *n);
ft_status ox_map_qlinear_matmul(onx_ctx *c, const onx_node *n);
ft_status ox_map_int_conv(onx_ctx *c, const onx_node *n);
/* onnx_ops_movement.c */
ft_status ox_map_identity(onx_ctx *c, const onx_node *n);
ft_status ox_map_dropout(onx_ctx *c, const onx_node *n);
ft_status ox_map_reshape(onx_ctx *c, const onx_node *n);
ft_status ox_map_transpose(onx_ctx *c, const onx_node *n);
ft_status ox_map_flatten(onx_ctx *c, const onx_node *n);
ft_status ox_map_squeeze(onx_ctx *c, const onx_node *n);
ft_status ox_map_expand(onx_ctx *c, const onx_node *n);
ft_status ox_map_tile(onx_ctx *c, const onx_node *n);
ft_status ox_map_concat(onx_ctx *c, const onx_node *n);
ft_status ox_map_split(onx_ctx *c, const onx_node *n);
ft_status ox_map_slice(onx_ctx *c, const onx_node *n);
ft_status ox_map_gather(onx_ctx *c, const onx_node *n);
ft_status ox_map_pad(onx_ctx *c, const onx_node *n);
ft_status ox_map_depth_space(onx_ctx *c, const onx_node *n);
ft_status ox_map_trilu(onx_ctx *c, const onx_node *n);
ft_status ox_map_one_hot(onx_ctx *c, const onx_node *n);
ft_status ox_map_gather_nd(onx_ctx *c, const onx_node *n);
ft_status ox_map_scatter(onx_ctx *c, const onx_node *n);
ft_status ox_map_tensor_scatter(onx_ctx *c, const onx_node *n);
/* onnx_ops_geom.c */
ft_status ox_map_eye_like(onx_ctx *c, const onx_node *n);
ft_status ox_map_reverse_sequence(onx_ctx *c, const onx_node *n);
/* sequences and optionals resolved at load time (onnx_seq.c) */
ft_status ox_map_seq_empty(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_construct(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_insert(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_erase(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_at(onx_ctx *c, const onx_node *n);
ft_status ox_map_seq_length(onx_ctx *c, const onx_node *n);
ft_status ox_map_split_to_seq(onx_ctx *c, const onx_node *n);
ft_status ox_map_concat_from_seq(onx_ctx *c, const onx_node *n);
ft_status ox_map_optional(onx_ctx *c, const onx_node *n);
ft_status ox_map_optional_has(onx_ctx *c, const onx_node *n);
ft_status ox_map_optional_get(onx_ctx *c, const onx_node *n);
ft_status ox_map_center_crop_pad(onx_ctx *c, const onx_node *n);
ft_status ox_map_col2im(onx_ctx *c, const onx_node *n);
ft_status ox_map_affine_grid(onx_ctx *c, const onx_node *n);
ft_status ox_map_roi_align(onx_ctx *c, const onx_node *n);
/* onnx_ops_nn.c */
ft_status ox_map_conv(onx_ctx *c, const onx_node *n);
ft_status ox_map_deform_conv(onx_ctx *c, const onx_node *n);
ft_status ox_map_pool(onx_ctx *c, const onx_node *n);
ft_status ox_map_max_unpool(onx_ctx *c, const onx_node *n);
ft_status ox_map_global_pool(onx_ctx *c, const onx_node *n);
ft_status ox_map_resize(onx_ctx *c, const onx_node *n);
ft_status ox_map_lrn(onx_ctx *c, const onx_node *n);
ft_status ox_map_lp_pool(onx_ctx *c, const onx_node *n);
ft_status ox_map_grid_sample(onx_ctx *c, const onx_node *n);
ft_status ox_map_window(onx_ctx *c, const onx_node *n);
ft_status ox_map_random_like(onx_ctx *c, const onx_node *n);
ft_status ox_map_random(onx_ctx *c, const onx_node *n);
ft_status ox_map_image_decoder(onx_ctx *c, const onx_node *n);
ft_status ox_map_mel_weight_matrix(onx_ctx *c, const onx_node *n);
/* onnx_ops_legacy.c: from opset 1, the legacy attributes of opsets 1-6 read
 * there and the node handed on to the mapper above */
ft_status ox_map_binary_v1(onx_ctx *c, const onx_node *n);
ft_status ox_map_gemm_v1(onx_ctx *c, const onx_node *n);
ft_status ox_map_batch_norm_v1(onx_ctx *c, const onx_node *n);
ft_status ox_map_pool_v1(onx_ctx *c, const onx_node *n);

#endif
