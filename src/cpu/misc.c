#include "cpu.h"

ft_status cpu_dropout(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_topk(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_einsum(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
