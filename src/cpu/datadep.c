/* The CPU kernel of the data-dependent ops (non_zero, compress, unique,
 * non_max_suppression): runtime/datadep.c's, on the views as they are. */
#include "../runtime/datadep.h"
#include "cpu.h"

ft_status cpu_datadep(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out) { return ft_dd_run(k, n, in, out); }
