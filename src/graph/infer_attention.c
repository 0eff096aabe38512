/* Shape and dtype inference (not yet implemented). */
#include "graph.h"

ft_status ft_infer_attention(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_batch_norm(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_instance_norm(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_group_norm(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
