/* Shape and dtype inference (not yet implemented). */
#include "graph.h"

ft_status ft_infer_conv(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_conv_transpose(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
