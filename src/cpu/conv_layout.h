/* Internal to conv_dnnl.c and conv_layout.c: the layouts a run gives the
 * tensors of a graph around its f32 convolutions (conv_dnnl.c, "Blocked
 * chains"), decided by conv_layouts_build (conv_layout.c).
 *
 * Ownership: a layouts owns its arrays and copies (conv_layouts_free).
 *
 *   layouts l = {0};
 *   conv_layouts_build(&l, eng, k, 1);                 // eng: the cache's engine, k: the kernel context
 *   const dnnl_memory_desc_t *md = conv_layout_of(&l, t);   // NULL: tensor t stays plain
 *   conv_layouts_free(&l);
 */
#ifndef FT_CPU_CONV_LAYOUT_H
#define FT_CPU_CONV_LAYOUT_H

#include "cpu.h"

#include <oneapi/dnnl/dnnl.h>

/* A blocked copy of a tensor that stays plain in the run (a graph input, a
 * constant, a graph output, a tensor another op reads) for the convs that
 * read it in one blocked layout, as input 0 or as the residual sum: the
 * blocked form of each such conv reads the copy instead of reordering the
 * tensor itself. The copy lives here, not in the memory plan. On every
 * execution of the graph (the tensor's values may have changed since the
 * last) the first blocked form to read it, in execution order (g->order),
 * makes it from the plain tensor (conv_copy_make; that is its first reader
 * where that reader runs its blocked form), and the others read it: once per
 * execution, never one made in an earlier execution. blocked.c's transpose
 * makes it where it can (AVX-512, blocks of a multiple of 16 channels), and
 * gives the tensor's max |x| for the NaN rule from the same read; else
 * oneDNN's reorder r, made on first use. */
typedef struct conv_copy {
    int t;                  /* the tensor */
    int first;              /* its first conv reader in g->order (an index into g->nodes) */
    int readers;            /* the conv nodes that read it */
    unsigned made;          /* the execution it was made in (conv_dnnl.c's epoch; 0: never) */
    dnnl_memory_desc_t md;  /* its layout */
    void *buf;              /* owned; allocated when first made */
    dnnl_primitive_t r;     /* plain -> md, where blocked.c's transpose does not make it (NULL until needed) */
    dnnl_memory_t from, to;
} conv_copy;

/* The layout each tensor holds during a run: blocked (md[idx[t]]) or the
 * graph's own (idx[t] < 0), and the blocked copies of plain tensors.
 * Decided once per run id, before the run (cpu_conv_prepare in conv_dnnl.c). */
typedef struct layouts {
    int built;
    int oom;                 /* deciding them ran out of memory: an error (see conv_layouts_build) */
    int *idx;                /* per tensor, or NULL: every tensor plain */
    dnnl_memory_desc_t *md;  /* the blocked layouts */
    conv_copy *copy;         /* n_copy copies */
    int n_copy;
    int *cin;                /* per node, 2 slots (input 0, input 3): the copy it reads there, or -1; NULL: none */
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

/* Makes copy cp from the plain tensor at `plain` of shape sh (allocating it
 * the first time): with blocked.c's transpose (cpu_to_blocked, on `threads`
 * threads), which sets *amax to max |x| (INFINITY with a NaN or an
 * infinity) from the same read, or else with oneDNN's reorder on stream
 * strm (made the first time; *amax -1: not known). */
dnnl_status_t conv_copy_make(conv_copy *cp, dnnl_engine_t eng, dnnl_stream_t strm, const ft_shape *sh, const void *plain,
                             int threads, double *amax);

/* The blocked layout tensor t holds in this run, or NULL (the graph's own;
 * also for t < 0, an omitted input). */
static inline const dnnl_memory_desc_t *conv_layout_of(const layouts *l, int t)
{
    return t >= 0 && l->idx && l->idx[t] >= 0 ? &l->md[l->idx[t]] : NULL;
}

/* The copy (an index into l->copy) node n of graph g reads as input `slot`
 * (0 or 3), or -1. */
static inline int conv_copy_read(const layouts *l, const ft_graph *g, const ft_node *n, int slot)
{
    return l->cin && (slot == 0 || slot == 3) ? l->cin[2 * (n - g->nodes) + (slot == 3)] : -1;
}

#endif
