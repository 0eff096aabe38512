/* Shape and dtype inference (not yet implemented). */
#include "graph.h"

ft_status ft_infer_fft(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_rfft(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
ft_status ft_infer_irfft(ft_infer_ctx *c) { return ft_infer_unavailable(c); }
