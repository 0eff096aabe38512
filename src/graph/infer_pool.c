/* Shape and dtype inference (not yet implemented). */
#include "graph.h"

ft_status ft_infer_pool(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_global_pool(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_resize(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
