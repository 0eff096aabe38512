/* Internal to conv_dnnl.c and conv_layout.c: the layouts a run gives the
 * tensors of a graph around its f32 convolutions (conv_dnnl.c, "Blocked
 * chains"), decided by conv_layouts_build (conv_layout.c). */
#ifndef FT_CPU_CONV_LAYOUT_H
#define FT_CPU_CONV_LAYOUT_H

#include "cpu.h"

#include <oneapi/dnnl/dnnl.h>

/* The layout each tensor holds during a run: blocked (md[idx[t]]) or the
 * graph's own (idx[t] < 0). Decided once per run id (conv_dnnl.c). */
typedef struct layouts {
    int built;
    int oom;                 /* deciding them ran out of memory: an error (see conv_layouts_build) */
    int *idx;                /* per tensor, or NULL: every tensor plain */
    dnnl_memory_desc_t *md;  /* the blocked layouts */
} layouts;

/* The graph's layouts of a conv's tensors. */
typedef struct descs {
    dnnl_memory_desc_t x, y, w, b;
} descs;

/* conv_dnnl.c: oneDNN's descriptor of conv node n on tensors of shapes xs
 * (input), ws (weight), ys (output), with a bias and a residual sum when
 * has_b / has_sum: src and dst in the graph's layouts (d->x, d->y), or, with
 * blocked, in the layouts oneDNN prefers (format `any`); weights always in
 * its preferred layout. Refuses (dnnl_unimplemented) a geometry whose
 * padding oneDNN cannot express. The caller destroys *pd. */
dnnl_status_t conv_make_pd(dnnl_engine_t eng, const ft_node *n, const ft_shape *xs, const ft_shape *ws,
                           const ft_shape *ys, int has_b, int has_sum, int blocked, descs *d,
                           dnnl_primitive_desc_t *pd);

/* The graph's own layout of an activation tensor: ncw, nchw or ncdhw. */
dnnl_status_t conv_plain_md(const ft_shape *sh, dnnl_memory_desc_t *md);

/* The kind when md is one of oneDNN's channel-blocked layouts of a tensor
 * of shape sh: 0 by 8 (nChw8c and the like), 1 by 16, 2 channels-last; else -1. */
int conv_channel_kind(const dnnl_memory_desc_t *md, const ft_shape *sh);

/* Decides which tensors of k->g stay blocked in this run (conv_layout.c);
 * with enabled 0 (no private layouts, FTRUN_CONV_IMPL native or plain) none. */
void conv_layouts_build(layouts *l, dnnl_engine_t eng, const ft_kctx *k, int enabled);
void conv_layouts_free(layouts *l);

/* The blocked layout tensor t holds in this run, or NULL (the graph's own;
 * also for t < 0, an omitted input). */
static inline const dnnl_memory_desc_t *conv_layout_of(const layouts *l, int t)
{
    return t >= 0 && l->idx && l->idx[t] >= 0 ? &l->md[l->idx[t]] : NULL;
}

#endif
