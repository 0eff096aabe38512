/* Shape and dtype inference (not yet implemented). */
#include "graph.h"

ft_status ft_infer_dropout(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_topk(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_einsum(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
