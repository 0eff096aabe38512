#include "cpu.h"

ft_status cpu_attention(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_batch_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_instance_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_group_norm(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
