#include "cpu.h"

ft_status cpu_max_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_average_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_global_pool(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
ft_status cpu_resize(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not implemented"); }
