/* Typed parameters of the op families: what a node's attributes mean, read
 * from node->attrs once, by the family's parser in src/graph/infer_*.c, when
 * the graph is checked (ft_graph_validate runs every node's inference, which
 * fills node->params). node->attrs stays the graph's representation (readers
 * and importers set attributes by name); kernels of both backends read
 * node->params and never look an attribute up by name.
 *
 *   ...                          // ft_graph_validate(g, &err) filled g->nodes[i].params
 *   const ft_conv_params *p = &n->params.conv;       // in a conv kernel
 *   int64_t stride_h = p->s[0], pad_top = p->pb[0];  // or ft_conv_geom_of (infer_conv.h)
 *
 * Adding an op (det, the latest, touched these): its line in ops.def (name,
 * arity, dtypes, attributes, inference and FLOP functions; ops.h declares
 * both from it); the family's infer_*.c (inference, whose parser fills the
 * family's struct here, and the FLOP count); this file only when the family
 * needs a new field; src/runtime/kernels.def (one K line, compiled into both
 * backends); the CPU kernel (src/cpu/cpu.h and the family's .c) and the
 * CUDA one (src/cuda/cu.cuh and the family's .cu). Importing it from ONNX
 * adds rows to onnx_ops.c (the mapper table and the catalogue) and the
 * mapper's file (onnx_ops_*.c). Then its cases in tests/numeric/cases_*.py
 * and tests/cuda/parity_*.py, and its entry in man/ftrun-graph.5 (FLOP count
 * in man/ftrun.1). The geometry functions of each family (declared in the
 * family headers infer_conv.h, infer_pool.h, infer_movement.h, infer_math.h,
 * infer_misc.h) take shapes and these structs, never runtime views, so
 * src/graph depends on nothing above it. Plain data: no ownership. */
#ifndef FT_PARAMS_H
#define FT_PARAMS_H

#include <stdint.h>

#include "shape.h"

#define FT_SP_MAX 3 /* spatial dims of conv and pools: 1-D, 2-D, 3-D */

/* Elementwise ops of one input (infer_elementwise.c). */
typedef struct ft_unary_params {
    double alpha, beta, gamma; /* the op's attributes of these names (0 where it has none) */
    double lo, hi;             /* clip's min and max (-inf, inf when absent) */
    int64_t ilo, ihi;          /* clip on an integer dtype: ceil(min) and floor(max) saturated to
                                  the dtype; min > max gives max everywhere, as NumPy's clip */
    double lambd, bias;        /* shrink */
    int gelu_tanh;             /* gelu: approximate = "tanh" */
} ft_unary_params;

/* Broadcasting binary ops (infer_elementwise.c). */
typedef struct ft_binary_params {
    int fmod;        /* mod: fmod = 1 (C fmod) rather than Python's sign rule */
    int shift_right; /* bit_shift: direction = "right" */
} ft_binary_params;

/* einsum's equation parsed once against its operands' ranks (infer_misc.c,
 * ft_einsum_parse). Label ids: 'A'..'Z' 0..25, 'a'..'z' 26..51, then one per
 * dim under "..." from 52 (right-aligned across operands). */
#define FT_EIN_MAXOPS 64
typedef struct ft_einsum_params {
    int nops;                                 /* operands (the node's inputs) */
    int n_ell;                                /* dims under "..." */
    int out_rank;
    int8_t rank[FT_EIN_MAXOPS];               /* each operand's rank when parsed */
    int8_t lab[FT_EIN_MAXOPS][FT_MAX_RANK];   /* label id of dim d of operand i */
    int8_t out_lab[FT_MAX_RANK];              /* the output's labels */
} ft_einsum_params;

/* matmul's and gemm's "activation" attribute: the elementwise op the
 * optimizer fused into the product's output pass (src/opt/optimize.c,
 * matmul_epilogue), each as its own op computes it (relu; gelu, exact or
 * approximate="tanh"). matmul's optional input 2 is a bias [N] added first. */
typedef enum ft_mm_act { FT_MM_ACT_NONE, FT_MM_ACT_RELU, FT_MM_ACT_GELU, FT_MM_ACT_GELU_TANH } ft_mm_act;
/* matmul, gemm (infer_math.c); einsum (infer_misc.c). */
typedef struct ft_matmul_params {
    int trans_a, trans_b;
    double alpha, beta;
    ft_mm_act act;        /* matmul, gemm: fused activation */
    const char *equation; /* einsum, for messages; owned by node->attrs */
    ft_einsum_params ein; /* einsum: the parsed equation */
} ft_matmul_params;

/* Reductions, arg reductions, cumsum, lp_normalization and
 * mean_variance_normalization (infer_math.c) and topk (infer_misc.c); axes
 * are resolved against the input's rank. */
typedef struct ft_reduce_params {
    int red[FT_MAX_RANK]; /* reduce_*: 1 for each reduced axis */
    int axis;             /* argmax/argmin, cumsum, topk */
    int keepdims, select_last, exclusive, reverse, largest, sorted;
    int64_t k; /* topk */
    int lp;         /* lp_normalization: p (1 or 2) */
    double epsilon; /* mean_variance_normalization */
} ft_reduce_params;

/* softmax, layer_norm, rms_norm (infer_math.c) and the per-channel norms
 * (infer_attention.c). */
typedef struct ft_norm_params {
    int axis; /* resolved against the input's rank */
    double epsilon;
    int64_t num_groups;
    int training;    /* batch_norm training_mode: the batch's own mean and variance */
    double momentum; /* batch_norm training_mode: running = running * momentum + batch * (1 - momentum) */
} ft_norm_params;

/* Shape and data movement (infer_movement.c); axes resolved. */
enum { FT_PAD_CONSTANT, FT_PAD_REFLECT, FT_PAD_EDGE, FT_PAD_WRAP };
typedef struct ft_move_params {
    int axis;                                 /* concat, split, gather, gather_elements */
    int perm[FT_MAX_RANK];                    /* transpose: output axis i reads input axis perm[i] */
    int64_t first[FT_MAX_RANK], step[FT_MAX_RANK]; /* slice: first index and step of every axis */
    int64_t pb[FT_MAX_RANK], pe[FT_MAX_RANK]; /* pad: amounts at the begin / end of every axis (< 0 crops) */
    int pad_mode;                             /* FT_PAD_* */
    double pad_value;
    int64_t block;                            /* depth_to_space, space_to_depth: blocksize */
    int crd;                                  /* depth_to_space: mode "CRD" (else "DCR") */
} ft_move_params;

/* Indexing ops (infer_index.c): gather_nd, scatter_nd, scatter_elements,
 * one_hot, trilu. cumprod uses ft_reduce_params (as cumsum), hardmax
 * ft_norm_params (as softmax). */
enum { FT_SCATTER_NONE, FT_SCATTER_ADD, FT_SCATTER_MUL, FT_SCATTER_MAX, FT_SCATTER_MIN };
typedef struct ft_index_params {
    int axis;       /* scatter_elements, one_hot: resolved (one_hot: against the output's rank) */
    int batch_dims; /* gather_nd */
    int reduction;  /* scatter_*: FT_SCATTER_* */
    int upper;      /* trilu */
    int64_t k;      /* trilu: the diagonal offset */
    int64_t depth;  /* one_hot */
    int circular;   /* tensor_scatter: mode "circular" (positions wrap around the axis) */
} ft_index_params;

/* Geometry ops (infer_geom.c): eye_like, reverse_sequence, col2im,
 * affine_grid, roi_align. center_crop_pad fills ft_move_params as pad does
 * (centred pads, negative where it crops) and runs pad's kernel. */
enum { FT_ROI_AVG, FT_ROI_MAX };
/* roi_align: the most sample points per bin along a dim (sampling_ratio, and
 * the adaptive ceil(bin size) of sampling_ratio 0, are held to it). */
#define FT_ROI_GRID_MAX 1024
typedef struct ft_geom_params {
    int64_t k;                  /* eye_like: the diagonal */
    int batch_axis, time_axis;  /* reverse_sequence: resolved */
    int r;                      /* col2im, affine_grid: spatial rank */
    int64_t img[FT_MAX_RANK], blk[FT_MAX_RANK]; /* col2im: image and block shapes */
    int64_t d[FT_MAX_RANK], s[FT_MAX_RANK];     /* col2im: dilations, strides */
    int64_t pb[FT_MAX_RANK];    /* col2im: pads at the begin of each spatial dim */
    int64_t nb[FT_MAX_RANK];    /* col2im: blocks along each spatial dim */
    int align_corners;          /* affine_grid */
    int roi_mode;               /* roi_align: FT_ROI_* */
    int half_pixel;             /* roi_align: coordinate_transformation_mode half_pixel */
    int64_t oh, ow, sampling;   /* roi_align */
    double scale;               /* roi_align: spatial_scale */
} ft_geom_params;

/* conv, conv_transpose, deform_conv (infer_conv.c). Lists are per spatial dim. */
enum { FT_AUTO_PAD_NOTSET, FT_AUTO_PAD_SAME_UPPER, FT_AUTO_PAD_SAME_LOWER, FT_AUTO_PAD_VALID };
/* conv's "activation" attribute: the elementwise op the optimizer fused into
 * the conv's output pass (src/opt/optimize.c), each as its own op computes
 * it (relu, clip with activation_min / activation_max, silu, hard_swish). */
typedef enum ft_conv_act {
    FT_CONV_ACT_NONE,
    FT_CONV_ACT_RELU,
    FT_CONV_ACT_CLIP,
    FT_CONV_ACT_SILU,
    FT_CONV_ACT_HARD_SWISH
} ft_conv_act;
typedef struct ft_conv_params {
    int r;                        /* spatial rank */
    int64_t group;
    int64_t offset_group;         /* deform_conv: channel groups sharing one offset (and mask) field */
    int64_t s[FT_SP_MAX], d[FT_SP_MAX];   /* strides, dilations */
    int64_t pb[FT_SP_MAX], pe[FT_SP_MAX]; /* explicit pads (0 under auto_pad) */
    int64_t op[FT_SP_MAX], os[FT_SP_MAX]; /* conv_transpose: output_padding, output_shape */
    int has_pads, has_os;
    int auto_pad;                 /* FT_AUTO_PAD_* */
    ft_conv_act act;              /* conv: the activation applied to the output (bias included) */
    double act_lo, act_hi;        /* FT_CONV_ACT_CLIP: the bounds (lo <= hi: lo > hi was lowered to hi) */
} ft_conv_params;

/* max_pool, average_pool, lp_pool (infer_pool.c). */
typedef struct ft_pool_params {
    int sp; /* spatial rank */
    int64_t k[FT_SP_MAX], s[FT_SP_MAX], d[FT_SP_MAX], pads[2 * FT_SP_MAX];
    int ceil_mode, count_include_pad;
    int auto_pad; /* FT_AUTO_PAD_* */
    int p;        /* lp_pool: the exponent, >= 1 */
    int storage_order; /* max_pool's Indices: 0 row-major, 1 column-major spatial positions */
    int64_t unpooled[FT_SP_MAX]; /* max_unpool: the spatial sizes the indices count in (before output_shape) */
} ft_pool_params;

/* resize (infer_pool.c). */
enum {
    FT_RESIZE_CT_HALF_PIXEL,
    FT_RESIZE_CT_HALF_PIXEL_SYMMETRIC,
    FT_RESIZE_CT_PYTORCH_HALF_PIXEL,
    FT_RESIZE_CT_ALIGN_CORNERS,
    FT_RESIZE_CT_ASYMMETRIC,
    FT_RESIZE_CT_TF_HALF_PIXEL_FOR_NN,
    FT_RESIZE_CT_TF_CROP_AND_RESIZE
};
enum { FT_RESIZE_NM_ROUND_PREFER_FLOOR, FT_RESIZE_NM_ROUND_PREFER_CEIL, FT_RESIZE_NM_FLOOR, FT_RESIZE_NM_CEIL };
typedef struct ft_resize_params {
    int linear; /* mode "linear" */
    int cubic;  /* mode "cubic" (neither: nearest) */
    double cubic_a;      /* cubic_coeff_a */
    int exclude_outside; /* cubic: taps outside the input get weight 0, the rest renormalized */
    int antialias;       /* linear, cubic: the filter widened by 1/scale when downsampling */
    int ct;     /* FT_RESIZE_CT_* */
    int nm;     /* FT_RESIZE_NM_* */
    int has_scales;
    double scales[FT_MAX_RANK]; /* the attribute, when given */
    double roi_start[FT_MAX_RANK], roi_end[FT_MAX_RANK]; /* tf_crop_and_resize: fractions of in - 1 */
    double extrapolation;        /* tf_crop_and_resize: the value of outputs whose source is outside */
} ft_resize_params;

/* lrn and grid_sample (infer_pool.c). */
enum { FT_GS_NEAREST, FT_GS_LINEAR, FT_GS_CUBIC };
enum { FT_GS_ZEROS, FT_GS_BORDER, FT_GS_REFLECTION };
typedef struct ft_image_params {
    int64_t size;                /* lrn: the channel window */
    double alpha, beta, bias;    /* lrn */
    int mode, padding;           /* grid_sample: FT_GS_NEAREST.., FT_GS_ZEROS.. */
    int align_corners;           /* grid_sample */
} ft_image_params;

/* fft, ifft, rfft, irfft (infer_fft.c). */
enum { FT_FFT_NORM_BACKWARD, FT_FFT_NORM_FORWARD, FT_FFT_NORM_ORTHO };
typedef struct ft_fft_params {
    int axis; /* in the logical shape, resolved */
    int norm; /* FT_FFT_NORM_* */
} ft_fft_params;

/* attention (infer_attention.c), dropout (infer_misc.c). */
typedef struct ft_attn_params {
    int has_scale, causal;
    double scale;
    double softcap; /* 0: none; else scores -> softcap tanh(scores / softcap) before the mask */
    int past;       /* inputs 4, 5 (past_key, past_value) are given: keys are past then k */
    int present;    /* outputs 1, 2 (present_key, present_value) are written */
    int kv_len;     /* input 6 (i64 [B]) is given: keys t >= kv_len[b] are padding, causal offset kv_len[b] - S */
    int scores;     /* output 3 is written: the [B,H,S,T] scores of stage scores_mode (0 q.k scaled, 1 soft
                     * capped, 2 masked, 3 softmax weights) */
    int scores_mode;
    int64_t win_left, win_right; /* -1: unbounded; else keys p - left <= t <= p + right, p = i + offset */
    int training;
    double ratio;
    uint64_t seed;
} ft_attn_params;

/* rotary_embedding (infer_attention.c). x is [B,H,S,D] (heads_last 0) or
 * [B,S,H*D] (heads_last 1, viewed as [B,S,H,D]); the first rdim dims of a
 * head rotate, as halves or (interleaved) as adjacent pairs. */
typedef struct ft_rope_params {
    int interleaved, heads_last, has_pos;
    int64_t heads, head_size, rdim;
    int64_t cache_b; /* without positions: batch dim of cos/sin (1 broadcasts) */
} ft_rope_params;

/* lstm, gru, rnn (infer_rnn.c). Gate order along the G*H rows of W, R and
 * B as ONNX: lstm i, o, f, c; gru z, r, h; rnn one gate. act[d][j] is the
 * j-th activation of direction d (lstm f, g, h; gru f, g; rnn f), each with
 * its alpha and beta (the ONNX defaults of that function when not given). */
enum {
    FT_RNN_SIGMOID, FT_RNN_TANH, FT_RNN_RELU, FT_RNN_AFFINE, FT_RNN_LEAKY_RELU, FT_RNN_THRESHOLDED_RELU,
    FT_RNN_SCALED_TANH, FT_RNN_HARD_SIGMOID, FT_RNN_ELU, FT_RNN_SOFTSIGN, FT_RNN_SOFTPLUS
};
typedef struct ft_rnn_params {
    int gates;      /* 4 lstm, 3 gru, 1 rnn */
    int ndir;       /* 2 for bidirectional, else 1 */
    int reverse;    /* direction "reverse" (with ndir 1) */
    int layout;     /* 0: X [T,B,I], states [D,B,H]; 1: X [B,T,I], states [B,D,H] */
    int64_t hidden; /* H */
    int has_clip;
    double clip;    /* gate pre-activations are clipped to [-clip, clip] */
    int input_forget;        /* lstm: f = 1 - i */
    int linear_before_reset; /* gru */
    int act[2][3];
    double alpha[2][3], beta[2][3];
} ft_rnn_params;
/* quantize_linear, dequantize_linear, dynamic_quantize_linear,
 * matmul_integer, qlinear_matmul (infer_quant.c). */
typedef struct ft_quant_params {
    int axis;    /* quantize/dequantize: the axis of a 1-D scale (resolved); -1 for a per-tensor scale */
    int qdt;     /* quantize_linear: the output dtype (an ft_dtype: u8, i8 or i16) */
    int row_a;   /* matmul_integer, qlinear_matmul: a's zero point (and scale) is per row ([M]) */
    int col_b;   /* ... b's is per column ([N]) */
} ft_quant_params;

/* softmax_cross_entropy_loss, negative_log_likelihood_loss, the window
 * functions and stft (infer_loss.c). */
enum { FT_LOSS_NONE, FT_LOSS_SUM, FT_LOSS_MEAN };
typedef struct ft_loss_params {
    int reduction;        /* FT_LOSS_* */
    int has_ignore;       /* ignore_index given */
    int64_t ignore_index; /* a target equal to it adds nothing (and no weight) */
    int periodic;         /* windows: 1 periodic (N = size), 0 symmetric (N = size - 1) */
    int odt;              /* windows: the output dtype (an ft_dtype) */
    int64_t frame_step, frame_length; /* stft */
    int onesided;         /* stft: keep bins 0..frame_length/2 */
    int complex_in;       /* stft: the signal's last dim is 2 */
} ft_loss_params;

/* random_uniform_like (a, b = low, high), random_normal_like (mean, scale),
 * bernoulli (infer_random.c): the output dtype and the generator's key. */
typedef struct ft_random_params {
    int odt; /* an ft_dtype */
    double a, b;
    uint64_t seed;
} ft_random_params;

/* One node's parameters; which member is meaningful follows its op's family. */
/* The data-dependent ops (infer_dynamic.c): non_zero, compress, unique,
 * non_max_suppression. */
typedef struct ft_datadep_params {
    int axis;   /* compress, unique: resolved against the input's rank; -1: over the flattened input */
    int sorted; /* unique */
    int center; /* non_max_suppression: center_point_box (boxes as centre, width, height) */
    int pixel;  /* image_decoder: FT_PIX_* (graph/image_codec.h) */
} ft_datadep_params;

/* Shape arithmetic (infer_shapes.c): shape gives dims start .. end-1 of its
 * input's shape, both resolved against the rank. */
typedef struct ft_shape_params {
    int start, end;
} ft_shape_params;

typedef union ft_params {
    ft_unary_params unary;
    ft_binary_params binary;
    ft_matmul_params matmul;
    ft_reduce_params reduce;
    ft_norm_params norm;
    ft_move_params move;
    ft_index_params index;
    ft_geom_params geom;
    ft_conv_params conv;
    ft_pool_params pool;
    ft_resize_params resize;
    ft_image_params image;
    ft_fft_params fft;
    ft_attn_params attn;
    ft_rope_params rope;
    ft_rnn_params rnn;
    ft_quant_params quant;
    ft_loss_params loss;
    ft_datadep_params dd;
    ft_shape_params shp;
    ft_random_params rnd;
} ft_params;

#endif
