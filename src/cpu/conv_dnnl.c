/* f32 convolution through oneDNN's convolution primitives (conv.c calls
 * cpu_conv_dnnl first; declarations in cpu.h).
 *
 * Per conv node, up to three oneDNN forms are built: "plain"
 * (src and dst in the graph's own channels-first layout, ncw / nchw / ncdhw;
 * weights in oneDNN's preferred layout), "blocked" (src, dst and weights
 * all in oneDNN's preferred layouts, with reorders from and to the graph's
 * layout around the conv) and, for a node with a residual sum that is in
 * the blocked form's dst layout, "blocked-add" (V_ADD: the same layouts,
 * the sum a binary add post-op reading the sum where it is, not a sum
 * post-op adding what dst holds: no copy of the sum into dst; oneDNN 2.6
 * runs it with its jit kernel, not brgconv, faster on cnn_block's second
 * conv at 1 thread and slower on ResNet18's, hence timed). The bias and the
 * node's fused residual sum and activation are post-ops: sum (the node's
 * input 3, copied into dst first) or binary add, then eltwise relu, clip,
 * swish (alpha 1) or hardswish. A node's first
 * run uses the blocked form; on its second, each form and
 * conv.c's own loops run on the node's real tensors, three times and
 * more until 2 ms went by (at most 16; once, when that first run takes over
 * ten times the best so far), the best run after the first timed (process
 * CPU time on one thread, wall time on more; cpu_dnnl_time in
 * dnnl_cache.c, which records each form's time in the entry), and the fastest is
 * kept for the node from then on (blocked first, and a later form must be 5%
 * faster to win, except blocked-add, timed next, which has the same layouts
 * and wins unless 3% slower): the choice is per case (within a blocked chain, below, oneDNN's blocked form
 * mostly wins; elsewhere depthwise convs often keep conv.c's loops). The
 * environment variable FTRUN_CONV_IMPL = native, plain, blocked or
 * blocked-add (blocked where the node has no such sum) forces one
 * form where it can be built (tests run every form that way; see ftrun(1),
 * ENVIRONMENT); unset or "auto", the timing picks. With a tuning cache
 * lent to the backend (--tuning-cache; tuning.h, ft_backend_opts.tuning), a
 * node whose key (its shapes, params, layouts in this run and thread count:
 * cpu_tuning_conv_key) has a recorded pick takes it at its first run,
 * untimed (unless oneDNN does not build that form here: then it is timed),
 * and each pick timed is recorded there; FTRUN_CONV_IMPL wins over it.
 *
 * Where oneDNN refuses a geometry (status other than dnnl_success when a
 * descriptor or primitive is created), that form is left out; with neither
 * form, conv.c's loops run. A failure while running becomes an FT_ERUNTIME
 * error naming the node and oneDNN's status.
 *
 * Blocked chains: a tensor between two convs need not go back to the
 * graph's layout. Before a run's first node (a new ft_kctx.run_id), the
 * backend's prepare (cpu_conv_prepare, called by the executor) has
 * conv_layouts_build (conv_layout.c) decide, for the whole graph, which
 * intermediate tensors hold oneDNN's blocked layout (nChw16c and the like)
 * instead: those whose producer and every reader are f32 convs wanting that
 * same layout (input 0, or the residual sum, input 3), or blocked.c's pools
 * and per-channel mul, that are neither inputs nor outputs of the graph, and
 * whose blocked form takes exactly the tensor's own bytes (the plan's buffer
 * holds it). A max pool may read a blocked tensor and write a plain output
 * (one that must stay plain: a graph output), so the conv before it still
 * writes blocked. A tensor that stays plain (a graph input, an output, one
 * another op reads) and that two or more convs read in one blocked layout
 * gets a blocked copy in this cache, outside the memory plan (conv_copy in
 * conv_layout.h): on every execution of the graph the first blocked form to
 * read it makes it (fresh_copy; its first reader in g->order when that one
 * runs blocked, or, when the NaN rule below needs the tensor's bound, when
 * that reader's blocked form runs or may still be picked), the others read
 * it; the plain form and conv.c's loops read the tensor itself. With
 * AVX-512 and a block of 16 channels or a multiple of 16 (channels-last
 * included), blocked.c's transpose makes it and reads max |x| on the way
 * (conv_copy_make); elsewhere oneDNN's reorder. Only when ft_kctx.private_layouts says nothing else
 * reads intermediates (not under --check-nodes, not as a fallback), and not
 * under FTRUN_CONV_IMPL native or plain: otherwise every tensor is plain and
 * there is no copy. Each form of a node then reads and writes its tensors in
 * the layouts of the run: reorders only where the form wants another, and
 * conv.c's loops on plain copies (run_native). The timed pick counts those
 * reorders (not the making of a copy). Running out of memory while deciding
 * the layouts or making a copy is an FT_ERUNTIME error naming the node, never
 * another layout. FTRUN_CONV_LOG prints each node's pick, its candidates'
 * times and its tensors' layouts on stderr ("blocked (copy)"), and, when the
 * layouts are decided, a line per copy and per pool or mul reading a blocked
 * tensor.
 *
 * Executions: one run id covers many executions of the graph (warm-up and
 * timed runs); the first conv node to reach the cache in a run id starts
 * each one (c->epoch). A copy or a bound read from a tensor holds for the
 * execution it was made in only.
 *
 * NaN: oneDNN's relu and clip post-ops (max / min instructions) turn NaN into
 * 0 or a bound, where ftrun's relu and clip pass NaN (NUMERICS in
 * ftrun-graph(5)). A conv with a relu or clip activation whose input, weight,
 * bias or sum holds a NaN or an infinity (the products can make NaN of an
 * infinity) therefore runs conv.c's loops for that run. The check reads
 * each such tensor once (a constant weight and bias once per run id), unless
 * a bound proves it finite: a conv whose input is bounded by |x| <= X writes
 * an output bounded by W X + B + S (W the largest sum of |weights| of an
 * output channel, B the largest |bias|, S the bound of the sum; clip caps
 * it), so every partial sum is finite when that is below FLT_MAX. Each conv
 * records its output's bound for the convs that read it (c->bound); a
 * tensor scanned for NaN gets its bound (max |x|) from the same read, kept
 * for the other convs that read it in the same execution (a graph input
 * read as one conv's input and another's residual sum is scanned once).
 * A tensor with a blocked copy gets its bound from the making of the copy
 * where blocked.c's transpose makes it (input_bound makes the copy first):
 * one read of the tensor for both.
 *
 * State: the cache (conv_cache: the CPU_DNNL_CONV cache of dnnl_cache.h and
 * the layouts, executions and bounds of a run) is owned by the CPU backend
 * context (cpu_backend.c, released by close() through cpu_dnnl_cache_free).
 * It holds the layouts and entries of one run id: a new run id or graph
 * empties it. An entry is kept per node and thread count, and rebuilt
 * when the input shape or weight address changes; it records the node's
 * pick, and it owns its primitives, its memory objects, the reordered weights (kept
 * across runs when the weight is a constant of the graph, reordered every
 * run otherwise), the scratchpad and the blocked src / dst buffers. */
#include "conv_layout.h"
#include "dnnl_cache.h"
#include "dnnl_util.h"
#include "tuning.h"
#include "vmath.h"
#include "../graph/infer_conv.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* V_ADD: the blocked form with the residual sum as a binary add post-op
 * (see the top); only for a node whose sum is in the conv's dst layout */
enum { V_PLAIN, V_BLOCKED, V_ADD, N_VARIANTS };
enum { CHOICE_UNSET = -1, CHOICE_NATIVE = N_VARIANTS };

typedef struct variant {
    int ok;
    dnnl_primitive_t conv, r_src, r_dst, r_sum; /* reorders NULL where the layouts agree */
    dnnl_primitive_t r_w;                       /* user weights -> the conv's */
    dnnl_memory_t u_src, u_dst, u_sum, u_w;     /* the graph's tensors (handles set per run) */
    dnnl_memory_t m_src, m_dst, m_w, m_b, m_pad;
    void *w_buf;                               /* owned */
    size_t src_sz, dst_sz, pad_sz; /* reordered src and dst, scratchpad: in work buffers 0-2 (cpu_dnnl_work) */
    int w_ready;
    int cp_src, cp_sum; /* 1 + the blocked copy (conv_layout.h) it reads as input 0 / as the sum; 0: none */
    int bin;            /* the sum is a binary add post-op reading u_sum (no copy into dst) */
} variant;

/* conv.c's loops on a node whose input 0, input 3 or output is blocked: the
 * reorders to and from plain copies. Slot 0: input 0, 1: input 3 (blocked
 * -> plain), 2: the output (plain -> blocked). */
typedef struct native_io {
    int ready;
    dnnl_primitive_t r[3];
    dnnl_memory_t from[3], to[3];
    void *buf[3]; /* owned */
} native_io;

typedef struct entry {
    cpu_dnnl_key key; /* the node, its pick (a variant or CHOICE_NATIVE) and each form's time */
    int w_known;      /* w_l1 and b_max hold for the constant weight and bias */
    double w_l1, b_max; /* largest sum of |w| over an output channel, largest |bias| (inf: not finite) */
    variant v[N_VARIANTS];
    native_io nio;
} entry;

typedef struct conv_cache {
    cpu_dnnl_cache base; /* the entries, engine and stream (broken: conv.c's loops only) */
    layouts lay;
    /* Executions of the graph in this run id: the first conv node to get
     * here (first_conv, an index into g->nodes; -1 until one did) starts
     * each one. */
    unsigned epoch;
    int first_conv;
    /* Per tensor, for the NaN rule (see the top): the bound on |x| its
     * producing conv proved, or a read found, in execution `at` (v < 0: none). */
    struct bound { double v; unsigned at; } *bound;
} conv_cache;

static void variant_free(variant *v)
{
    dnnl_primitive_t prims[] = {v->conv, v->r_src, v->r_dst, v->r_sum, v->r_w};
    dnnl_memory_t mems[] = {v->u_src, v->u_dst, v->u_sum, v->u_w, v->m_src, v->m_dst, v->m_w, v->m_b, v->m_pad};
    cpu_dnnl_destroy(prims, FT_ARRAY_LEN(prims), mems, FT_ARRAY_LEN(mems));
    free(v->w_buf);
    memset(v, 0, sizeof *v);
}

static void native_io_free(native_io *io)
{
    cpu_dnnl_destroy(io->r, 3, io->from, 3);
    cpu_dnnl_destroy(NULL, 0, io->to, 3);
    for (int j = 0; j < 3; j++)
        free(io->buf[j]);
    memset(io, 0, sizeof *io);
}

/* The cache's drop (dnnl_cache.h): what an entry owns. */
static void entry_free(void *p)
{
    entry *e = p;
    for (int i = 0; i < N_VARIANTS; i++)
        variant_free(&e->v[i]);
    native_io_free(&e->nio);
}

/* The cache's forget (dnnl_cache.h): the layouts, the bounds and the
 * executions of a run id. */
static void forget(cpu_dnnl_cache *base)
{
    conv_cache *c = (conv_cache *)base;
    conv_layouts_free(&c->lay);
    free(c->bound);
    c->bound = NULL;
    c->epoch = 0, c->first_conv = -1;
}

static const cpu_dnnl_kind conv_kind = {CPU_DNNL_CONV, sizeof(conv_cache), sizeof(entry), entry_free, forget};

/* conv_make_pd; with fix, src and dst in the layouts fix[0] and fix[1], and
 * the residual sum a binary add post-op of a tensor in fix[1]'s layout
 * (read where it is: no copy into dst) in place of the sum post-op. */
static dnnl_status_t make_pd(dnnl_engine_t eng, const ft_node *n, const ft_shape *xs, const ft_shape *ws,
                             const ft_shape *ys, int has_b, int has_sum, int blocked, const dnnl_memory_desc_t *fix,
                             descs *d, dnnl_primitive_desc_t *pd)
{
    const ft_conv_params *p = &n->params.conv;
    ft_conv_geom g;
    ft_conv_geom_of(p, xs, ws, ys, FT_F32, 0, &g);
    *pd = NULL;
    const int r = g.r, nd = r + 2;
    static const dnnl_format_tag_t w_tag[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw};
    static const dnnl_format_tag_t gw_tag[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
    dnnl_dims_t xd = {g.N, g.C}, yd = {g.N, g.M}, wd, bd = {g.M}, st, di, pl, pr;
    int wnd = g.G > 1 ? nd + 1 : nd;
    if (r < 1 || r > 3)
        return dnnl_unimplemented;
    if (g.G > 1) {
        wd[0] = g.G, wd[1] = g.Mg, wd[2] = g.Cg;
    } else {
        wd[0] = g.M, wd[1] = g.C;
    }
    for (int j = 0; j < r; j++) {
        xd[2 + j] = g.in[j];
        yd[2 + j] = g.out[j];
        wd[wnd - r + j] = g.k[j];
        st[j] = g.s[j];
        di[j] = g.d[j] - 1;
        pl[j] = g.pb[j];
        int64_t ek = (g.k[j] - 1) * g.d[j] + 1, need = (g.out[j] - 1) * g.s[j] + ek - g.in[j] - g.pb[j];
        pr[j] = need > 0 ? need : 0;
        if ((g.in[j] + pl[j] + pr[j] - ek) / g.s[j] + 1 != g.out[j])
            return dnnl_unimplemented;
    }
    dnnl_memory_desc_t ax, ay, aw;
    dnnl_status_t s;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    CPU_DNNL_TRY(conv_plain_md(xs, &d->x));
    CPU_DNNL_TRY(conv_plain_md(ys, &d->y));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->w, wnd, wd, dnnl_f32, g.G > 1 ? gw_tag[r - 1] : w_tag[r - 1]));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&d->b, 1, bd, dnnl_f32, dnnl_x));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&aw, wnd, wd, dnnl_f32, dnnl_format_tag_any));
    if (fix) {
        ax = fix[0], ay = fix[1];
    } else if (blocked) {
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&ax, nd, xd, dnnl_f32, dnnl_format_tag_any));
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&ay, nd, yd, dnnl_f32, dnnl_format_tag_any));
    } else {
        ax = d->x, ay = d->y;
    }
    dnnl_convolution_desc_t cd;
    CPU_DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &ax, &aw,
                                                   has_b ? &d->b : NULL, &ay, st, di, pl, pr));
    CPU_DNNL_TRY(dnnl_primitive_attr_create(&attr));
    CPU_DNNL_TRY(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    CPU_DNNL_TRY(dnnl_post_ops_create(&po));
    if (has_sum && fix)
        CPU_DNNL_TRY(dnnl_post_ops_append_binary(po, dnnl_binary_add, &fix[1]));
    else if (has_sum)
        CPU_DNNL_TRY(dnnl_post_ops_append_sum(po, 1.0f));
    switch (p->act) {
    case FT_CONV_ACT_NONE:
        break;
    case FT_CONV_ACT_RELU:
        CPU_DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
        break;
    case FT_CONV_ACT_CLIP:
        CPU_DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, (float)p->act_lo, (float)p->act_hi));
        break;
    case FT_CONV_ACT_SILU:
        CPU_DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_swish, 1.0f, 0.0f));
        break;
    case FT_CONV_ACT_HARD_SWISH:
        CPU_DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_hardswish, 0.0f, 0.0f));
        break;
    }
    CPU_DNNL_TRY(dnnl_primitive_attr_set_post_ops(attr, po));
    CPU_DNNL_TRY(dnnl_primitive_desc_create(pd, &cd, attr, eng, NULL));
fail:
    cpu_dnnl_build_free(NULL, po, attr);
    return s;
}

/* conv_layout.h */
dnnl_status_t conv_make_pd(dnnl_engine_t eng, const ft_node *n, const ft_shape *xs, const ft_shape *ws,
                           const ft_shape *ys, int has_b, int has_sum, int blocked, descs *d,
                           dnnl_primitive_desc_t *pd)
{
    return make_pd(eng, n, xs, ws, ys, has_b, has_sum, blocked, NULL, d, pd);
}

/* Builds variant `which` of node n, its tensors in the layouts of this run
 * (reorders where the conv wants another); leaves v->ok 0 when oneDNN
 * refuses. Returns 1 when one of its own buffers could not be allocated:
 * an error for the caller, not a reason to run another form, whose
 * results would differ in rounding. */
static int build(conv_cache *c, const ft_node *n, const ft_view *in, const ft_view *out, int which,
                 variant *v)
{
    memset(v, 0, sizeof *v);
    int has_b = n->n_in > 2 && in[2].data, has_sum = n->n_in > 3 && in[3].data;
    descs d;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s;
    const int blocked = which != V_PLAIN;
    if (which == V_ADD && !has_sum)
        return 0;
    CPU_DNNL_TRY(
        conv_make_pd(c->base.eng, n, &in[0].shape, &in[1].shape, &out[0].shape, has_b, has_sum, blocked, &d, &pd));
    const dnnl_memory_desc_t *lx = conv_layout_of(&c->lay, n->in[0]), *ly = conv_layout_of(&c->lay, n->out[0]);
    const dnnl_memory_desc_t *lsum = has_sum ? conv_layout_of(&c->lay, n->in[3]) : NULL;
    /* the blocked form reads the blocked copy of a plain input where there
     * is one; the plain form reads the plain tensor */
    int cps = blocked ? conv_copy_read(&c->lay, c->base.g, n, 0) : -1;
    int cpm = blocked && has_sum ? conv_copy_read(&c->lay, c->base.g, n, 3) : -1;
    if (cps >= 0)
        lx = &c->lay.copy[cps].md;
    if (cpm >= 0)
        lsum = &c->lay.copy[cpm].md;
    const dnnl_memory_desc_t *ux = lx ? lx : &d.x, *uy = ly ? ly : &d.y, *usum = lsum ? lsum : &d.y;
    const dnnl_memory_desc_t *cx = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *cy = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *cw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *cpad = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    s = dnnl_invalid_arguments;
    if (!cx || !cy || !cw)
        goto fail;
    /* the blocked form is only worth its reorders where it differs from plain */
    if (blocked && dnnl_memory_desc_equal(cx, &d.x) && dnnl_memory_desc_equal(cy, &d.y))
        goto fail;
    if (which == V_ADD) {
        /* the same src and dst layouts, the sum read where it is: only where
         * it is in the dst layout (else the sum form reorders it into dst) */
        dnnl_memory_desc_t fix[2] = {*cx, *cy};
        dnnl_primitive_desc_t pd2;
        descs d2;
        if (!dnnl_memory_desc_equal(usum, cy))
            goto fail;
        CPU_DNNL_TRY(
            make_pd(c->base.eng, n, &in[0].shape, &in[1].shape, &out[0].shape, has_b, has_sum, 1, fix, &d2, &pd2));
        dnnl_primitive_desc_destroy(pd);
        pd = pd2;
        cx = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
        cy = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        cw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        cpad = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        s = dnnl_invalid_arguments;
        if (!cx || !cy || !cw)
            goto fail;
        v->bin = 1;
    }
    CPU_DNNL_TRY(dnnl_primitive_create(&v->conv, pd));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->base.eng, ux, cx, &v->r_src));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->base.eng, cy, uy, &v->r_dst));
    if (has_sum)
        CPU_DNNL_TRY(cpu_dnnl_reorder(c->base.eng, usum, cy, &v->r_sum));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->base.eng, &d.w, cw, &v->r_w));
    s = dnnl_out_of_memory;
    if (v->r_w && !(v->w_buf = cpu_md_alloc(cw)))
        goto fail;
    size_t padsz = cpad ? dnnl_memory_desc_get_size(cpad) : 0;
    v->src_sz = v->r_src ? dnnl_memory_desc_get_size(cx) : 0;
    v->dst_sz = v->r_dst ? dnnl_memory_desc_get_size(cy) : 0;
    v->pad_sz = padsz;
    CPU_DNNL_TRY(dnnl_memory_create(&v->u_src, ux, c->base.eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&v->u_dst, uy, c->base.eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&v->u_w, &d.w, c->base.eng, DNNL_MEMORY_NONE));
    if (has_sum)
        CPU_DNNL_TRY(dnnl_memory_create(&v->u_sum, usum, c->base.eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&v->m_src, cx, c->base.eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&v->m_dst, cy, c->base.eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&v->m_w, cw, c->base.eng, v->r_w ? v->w_buf : DNNL_MEMORY_NONE));
    if (has_b)
        CPU_DNNL_TRY(dnnl_memory_create(&v->m_b, &d.b, c->base.eng, DNNL_MEMORY_NONE));
    if (padsz)
        CPU_DNNL_TRY(dnnl_memory_create(&v->m_pad, cpad, c->base.eng, DNNL_MEMORY_NONE));
    dnnl_primitive_desc_destroy(pd);
    v->cp_src = cps + 1, v->cp_sum = cpm + 1;
    v->ok = 1;
    return 0;
fail:
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    variant_free(v);
    return s == dnnl_out_of_memory;
}

int64_t cpu_channel_block(ft_kctx *k, int t)
{
    conv_cache *c = k->be ? (conv_cache *)*cpu_dnnl_cache_slot(k->be, CPU_DNNL_CONV) : NULL;
    if (!c || c->base.g != k->g || c->base.run_id != k->run_id || t < 0)
        return 0;
    const dnnl_memory_desc_t *md = conv_layout_of(&c->lay, t);
    const ft_shape *sh = &k->g->tensors[t].shape;
    int kind = md ? conv_channel_kind(md, sh) : -1;
    return kind < 0 ? 0 : kind == 2 ? sh->dims[1] : kind == 1 ? 16 : 8;
}

static ft_status dnnl_fail(ft_kctx *k, const ft_node *n, dnnl_status_t s, const char *what)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "oneDNN convolution: %s failed: %s", what,
                       s == dnnl_out_of_memory ? "out of memory" : dnnl_status2str(s));
}

/* The node a form runs on, with what runs it. */
typedef struct conv_run {
    ft_kctx *k;
    conv_cache *c;
    entry *e;
    const ft_node *n;
    const ft_view *in;
    ft_view *out;
    ft_kernel_fn native;
} conv_run;

/* Variant `which` of r's entry, built unless it is; 1 with *st set when its
 * buffers could not be allocated (see build), else 0 (v->ok 0: refused). */
static int need_variant(const conv_run *r, int which, ft_status *st)
{
    if (r->e->v[which].ok || !build(r->c, r->n, r->in, r->out, which, &r->e->v[which]))
        return 0;
    *st = dnnl_fail(r->k, r->n, dnnl_out_of_memory, "building the convolution");
    return 1;
}

static void set_bound(conv_cache *c, int t, double v);

/* *p = copy i of the layouts, made from the plain tensor `plain` unless it
 * was in this execution of the graph (conv_layout.h, conv_copy); max |x|
 * read on the way is the tensor's bound in this execution. */
static dnnl_status_t fresh_copy(conv_cache *c, int threads, int i, const ft_view *plain, void **p)
{
    conv_copy *cp = &c->lay.copy[i];
    dnnl_status_t s = dnnl_success;
    double amax;
    if (cp->made != c->epoch &&
        !(s = conv_copy_make(cp, c->base.eng, c->base.strm, &plain->shape, plain->data, threads, &amax))) {
        cp->made = c->epoch;
        if (amax >= 0)
            set_bound(c, cp->t, amax);
    }
    *p = cp->buf;
    return s;
}

/* dst = the n floats at src, on `threads` threads from 2^18 floats on (the
 * residual sum copied into a conv's dst for its sum post-op: 6.4 MB in
 * bench/graphs/cnn_block.json, 0.3 ms on one thread) */
static void copy_floats(void *dst, const void *src, uint64_t n, int threads)
{
#pragma omp parallel num_threads(threads) if (threads > 1 && n >= (1u << 18))
    {
        uint64_t nt = (uint64_t)omp_get_num_threads(), id = (uint64_t)omp_get_thread_num();
        uint64_t a = n * id / nt, b = n * (id + 1) / nt;
        memcpy((float *)dst + a, (const float *)src + a, (size_t)(b - a) * sizeof(float));
    }
}

/* One run of variant v on the node's tensors. */
static ft_status run_variant(ft_kctx *k, conv_cache *c, entry *e, variant *v, const ft_node *n,
                             const ft_view *in, ft_view *out)
{
    dnnl_status_t s;
    const char *what = "making a blocked copy";
    int has_b = n->n_in > 2 && in[2].data, has_sum = n->n_in > 3 && in[3].data;
    void *x = in[0].data, *sum = has_sum ? in[3].data : NULL;
    if (v->cp_src && (s = fresh_copy(c, k->threads, v->cp_src - 1, &in[0], &x)))
        goto fail;
    if (has_sum && v->cp_sum && (s = fresh_copy(c, k->threads, v->cp_sum - 1, &in[3], &sum)))
        goto fail;
    what = "a work buffer";
    void *wsrc = v->src_sz ? cpu_dnnl_work(&c->base, 0, v->src_sz) : NULL,
         *wdst = v->dst_sz ? cpu_dnnl_work(&c->base, 1, v->dst_sz) : NULL,
         *wpad = v->pad_sz ? cpu_dnnl_work(&c->base, 2, v->pad_sz) : NULL;
    if ((v->src_sz && !wsrc) || (v->dst_sz && !wdst) || (v->pad_sz && !wpad)) {
        s = dnnl_out_of_memory;
        goto fail;
    }
    what = "setting a buffer";
    if ((v->r_src && (s = dnnl_memory_set_data_handle(v->m_src, wsrc))) ||
        (v->r_dst && (s = dnnl_memory_set_data_handle(v->m_dst, wdst))) ||
        (v->m_pad && (s = dnnl_memory_set_data_handle(v->m_pad, wpad))))
        goto fail;
    if ((s = dnnl_memory_set_data_handle(v->u_src, x)) || (s = dnnl_memory_set_data_handle(v->u_dst, out[0].data)) ||
        (s = dnnl_memory_set_data_handle(v->u_w, in[1].data)) ||
        (has_sum && (s = dnnl_memory_set_data_handle(v->u_sum, sum))) ||
        (has_b && (s = dnnl_memory_set_data_handle(v->m_b, in[2].data))) ||
        (!v->r_src && (s = dnnl_memory_set_data_handle(v->m_src, x))) ||
        (!v->r_dst && (s = dnnl_memory_set_data_handle(v->m_dst, out[0].data))) ||
        (!v->r_w && (s = dnnl_memory_set_data_handle(v->m_w, in[1].data))))
        goto fail;
    what = "a reorder";
    if (v->r_w && (!v->w_ready || !e->key.w_const)) {
        if ((s = cpu_dnnl_reorder_run(c->base.strm, v->r_w, v->u_w, v->m_w)))
            goto fail;
        v->w_ready = 1;
    }
    if (v->r_src && (s = cpu_dnnl_reorder_run(c->base.strm, v->r_src, v->u_src, v->m_src)))
        goto fail;
    if (has_sum && !v->bin) {
        if (v->r_sum) {
            if ((s = cpu_dnnl_reorder_run(c->base.strm, v->r_sum, v->u_sum, v->m_dst)))
                goto fail;
        } else { /* the sum already in the conv's dst layout */
            copy_floats(v->r_dst ? wdst : out[0].data, sum, ft_numel(&out[0].shape), k->threads);
        }
    }
    what = "the convolution";
    dnnl_exec_arg_t a[6] = {{DNNL_ARG_SRC, v->m_src}, {DNNL_ARG_WEIGHTS, v->m_w}, {DNNL_ARG_DST, v->m_dst}};
    int na = 3;
    if (v->bin)
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, v->u_sum};
    if (has_b)
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, v->m_b};
    if (v->m_pad)
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, v->m_pad};
    if ((s = dnnl_primitive_execute(v->conv, c->base.strm, na, a)))
        goto fail;
    what = "a reorder";
    if (v->r_dst && (s = cpu_dnnl_reorder_run(c->base.strm, v->r_dst, v->m_dst, v->u_dst)))
        goto fail;
    what = "waiting for the stream";
    if ((s = dnnl_stream_wait(c->base.strm)))
        goto fail;
    return FT_OK;
fail:
    return dnnl_fail(k, n, s, what);
}

/* conv.c's loops (native) on the node: where input 0, input 3 or the output
 * is blocked in this run, on plain copies reordered from and to it. */
static ft_status run_native(ft_kctx *k, conv_cache *c, entry *e, const ft_node *n, const ft_view *in,
                            ft_view *out, ft_kernel_fn native)
{
    const int sum_slot = n->n_in > 3 && in[3].data ? 3 : -1;
    const int tens[3] = {n->in[0], sum_slot > 0 ? n->in[3] : -1, n->out[0]};
    const dnnl_memory_desc_t *lay[3];
    int any = 0;
    for (int j = 0; j < 3; j++)
        any |= (lay[j] = conv_layout_of(&c->lay, tens[j])) != NULL;
    if (!any)
        return native(k, n, in, out);
    native_io *io = &e->nio;
    dnnl_status_t s = dnnl_success;
    const char *what = "preparing plain copies";
    if (!io->ready) {
        for (int j = 0; j < 3 && !s; j++) {
            if (!lay[j])
                continue;
            dnnl_memory_desc_t plain;
            if ((s = conv_plain_md(j == 0 ? &in[0].shape : &out[0].shape, &plain)))
                break;
            if (!(io->buf[j] = cpu_md_alloc(&plain))) {
                s = dnnl_out_of_memory;
                break;
            }
            const dnnl_memory_desc_t *a = j < 2 ? lay[j] : &plain, *b = j < 2 ? &plain : lay[j];
            if ((s = cpu_dnnl_reorder(c->base.eng, a, b, &io->r[j])) ||
                (s = dnnl_memory_create(&io->from[j], a, c->base.eng, j < 2 ? DNNL_MEMORY_NONE : io->buf[j])) ||
                (s = dnnl_memory_create(&io->to[j], b, c->base.eng, j < 2 ? io->buf[j] : DNNL_MEMORY_NONE)))
                break;
        }
        if (s) {
            native_io_free(io);
            return dnnl_fail(k, n, s, what);
        }
        io->ready = 1;
    }
    ft_view vin[4], vout = out[0];
    memcpy(vin, in, sizeof *in * (size_t)(n->n_in < 4 ? n->n_in : 4));
    what = "a reorder";
    for (int j = 0; j < 2; j++) {
        if (!lay[j])
            continue;
        int slot = j == 0 ? 0 : 3;
        if ((s = dnnl_memory_set_data_handle(io->from[j], in[slot].data)) ||
            (s = cpu_dnnl_reorder_run(c->base.strm, io->r[j], io->from[j], io->to[j])))
            return dnnl_fail(k, n, s, what);
        vin[slot].data = io->buf[j];
    }
    if ((lay[0] || lay[1]) && (s = dnnl_stream_wait(c->base.strm)))
        return dnnl_fail(k, n, s, what);
    if (lay[2])
        vout.data = io->buf[2];
    ft_status st = native(k, n, vin, &vout);
    if (st || !lay[2])
        return st;
    if ((s = dnnl_memory_set_data_handle(io->to[2], out[0].data)) ||
        (s = cpu_dnnl_reorder_run(c->base.strm, io->r[2], io->from[2], io->to[2])) ||
        (s = dnnl_stream_wait(c->base.strm)))
        return dnnl_fail(k, n, s, what);
    return FT_OK;
}

/* One run of form `form` (a built variant, or CHOICE_NATIVE) on r's node. */
static ft_status run_form(void *arg, int form)
{
    const conv_run *r = arg;
    return form == CHOICE_NATIVE ? run_native(r->k, r->c, r->e, r->n, r->in, r->out, r->native)
                                 : run_variant(r->k, r->c, r->e, &r->e->v[form], r->n, r->in, r->out);
}

/* FTRUN_CONV_IMPL: the forced candidate, or CHOICE_UNSET for the timed pick. */
static int forced_choice(void)
{
    const char *v = getenv("FTRUN_CONV_IMPL");
    if (!v)
        return CHOICE_UNSET;
    if (strcmp(v, "native") == 0)
        return CHOICE_NATIVE;
    if (strcmp(v, "plain") == 0)
        return V_PLAIN;
    if (strcmp(v, "blocked") == 0)
        return V_BLOCKED;
    if (strcmp(v, "blocked-add") == 0)
        return V_ADD;
    return CHOICE_UNSET;
}

/* the largest |x| bit pattern of the n floats at u */
FT_VCLONES static uint32_t abs_max_bits(const uint32_t *u, uint64_t n)
{
    uint32_t m = 0;
#pragma omp simd reduction(max : m)
    for (uint64_t i = 0; i < n; i++)
        m = (u[i] & 0x7fffffffu) > m ? u[i] & 0x7fffffffu : m;
    return m;
}

/* max |x| over the n floats at p, or INFINITY when one is a NaN or an
 * infinity (0 for p NULL); on `threads` threads above 2^18 floats. */
static double abs_max(const void *p, uint64_t n, int threads)
{
    if (!p)
        return 0;
    uint32_t m = 0;
#pragma omp parallel num_threads(threads) if (threads > 1 && n >= (1u << 18)) reduction(max : m)
    {
        uint64_t nt = (uint64_t)omp_get_num_threads(), id = (uint64_t)omp_get_thread_num();
        uint64_t a = n * id / nt, b = n * (id + 1) / nt;
        m = abs_max_bits((const uint32_t *)p + a, b - a);
    }
    if (m >= 0x7f800000u)
        return INFINITY;
    float f;
    memcpy(&f, &m, sizeof f);
    return f;
}

/* w_l1 and b_max of the node's weight and bias (see entry). */
static void weight_bounds(entry *e, const ft_node *n, const ft_view *in, int threads)
{
    const float *w = in[1].data;
    int64_t M = in[1].shape.dims[0], per = M ? (int64_t)(ft_numel(&in[1].shape) / (uint64_t)M) : 0;
    double l1 = 0;
    for (int64_t m = 0; m < M && isfinite(l1); m++) {
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < per; i++)
            s += fabs((double)w[m * per + i]);
        l1 = s > l1 || s != s ? s : l1;
    }
    e->w_l1 = isfinite(l1) ? l1 : INFINITY;
    e->b_max = n->n_in > 2 && in[2].data ? abs_max(in[2].data, ft_numel(&in[2].shape), threads) : 0;
}

/* The bound on |x| of tensor t known in this execution of the graph, or -1. */
static double known_bound(const conv_cache *c, int t)
{
    return c->bound && c->bound[t].at == c->epoch ? c->bound[t].v : -1;
}

static void set_bound(conv_cache *c, int t, double v)
{
    if (c->bound)
        c->bound[t] = (struct bound){v, c->epoch};
}

/* The bound on |x| of input slot i (0 or 3): its producer's, else one read
 * (kept for the other convs that read it in this execution). Where the
 * node's blocked form reads a blocked copy of the input (the form it runs
 * or may pick) that this execution has not made yet, the copy is made now
 * and the bound read with it (conv_copy_make): the tensor is read once.
 * -1 with *s set when making the copy failed. */
static double input_bound(conv_cache *c, const ft_kctx *k, const entry *e, const ft_node *n,
                          const ft_view *in, int i, dnnl_status_t *s)
{
    if (n->n_in <= i || !in[i].data)
        return 0;
    double b = known_bound(c, n->in[i]);
    if (b >= 0)
        return b;
    int cp = conv_copy_read(&c->lay, c->base.g, n, i);
    int pick = e->key.pick.choice;
    if (cp >= 0 && (pick == CHOICE_UNSET || pick == V_BLOCKED || pick == V_ADD)) {
        void *p;
        if ((*s = fresh_copy(c, k->threads, cp, &in[i], &p)))
            return -1;
        if ((b = known_bound(c, n->in[i])) >= 0)
            return b;
    }
    b = abs_max(in[i].data, ft_numel(&in[i].shape), k->threads);
    set_bound(c, n->in[i], b);
    return b;
}

/* The NaN rule (see the top): 1 when the node has a relu or clip activation
 * and one of its tensors may hold a NaN or an infinity, -1 with *st set on an
 * error (making a blocked copy). Records the bound of the node's output (for
 * the convs reading it) as it goes. */
static int nan_unsafe(conv_cache *c, ft_kctx *k, entry *e, const ft_node *n, const ft_view *in,
                      ft_status *st)
{
    const ft_conv_params *p = &n->params.conv;
    int checks = p->act == FT_CONV_ACT_RELU || p->act == FT_CONV_ACT_CLIP;
    int t = n->out[0], has_sum = n->n_in > 3 && in[3].data;
    int known = known_bound(c, n->in[0]) >= 0 && (!has_sum || known_bound(c, n->in[3]) >= 0);
    set_bound(c, t, -1);
    if (!checks && !known) /* nothing to check, nothing to pass on without a read */
        return 0;
    if (!e->w_known || !e->key.w_const) {
        weight_bounds(e, n, in, k->threads);
        e->w_known = 1;
    }
    dnnl_status_t s = dnnl_success;
    double x = input_bound(c, k, e, n, in, 0, &s), sum = has_sum && !s ? input_bound(c, k, e, n, in, 3, &s) : 0;
    if (s) {
        *st = dnnl_fail(k, n, s, "making a blocked copy");
        return -1;
    }
    double y = e->w_l1 * x + e->b_max + sum;
    if (p->act == FT_CONV_ACT_CLIP && y > fmax(fabs(p->act_lo), fabs(p->act_hi)))
        y = fmax(fabs(p->act_lo), fabs(p->act_hi));
    int finite = isfinite(e->w_l1) && isfinite(e->b_max) && isfinite(x) && isfinite(sum);
    if (finite && y * 1.01 < FLT_MAX)
        set_bound(c, t, y);
    return checks && !finite;
}

static const char *const form_name[] = {"plain", "blocked", "blocked-add", "native"};

/* The layouts of node n's input 0, residual sum ("" when none) and output
 * in this run: "plain", "blocked" or "blocked (copy)" (its blocked form
 * reads the tensor's blocked copy). */
static void layout_words(const conv_cache *c, const ft_node *n, const char *w[3])
{
    const layouts *l = &c->lay;
    int sum = n->n_in > 3 && n->in[3] >= 0;
    w[0] = conv_layout_of(l, n->in[0])                ? "blocked"
           : conv_copy_read(l, c->base.g, n, 0) >= 0 ? "blocked (copy)"
                                                     : "plain";
    w[1] = !sum                                       ? ""
           : conv_layout_of(l, n->in[3])              ? "blocked"
           : conv_copy_read(l, c->base.g, n, 3) >= 0 ? "blocked (copy)"
                                                     : "plain";
    w[2] = conv_layout_of(l, n->out[0]) ? "blocked" : "plain";
}

/* FTRUN_CONV_LOG set: one line on stderr per conv node when its form is
 * chosen: the form, each candidate's time (times NULL: `why` says where the
 * form came from: FTRUN_CONV_IMPL or the tuning cache) and which of its
 * tensors are blocked in this run. */
static void log_pick(const conv_cache *c, const ft_node *n, int pick, const double *times, const char *why)
{
    if (!getenv("FTRUN_CONV_LOG"))
        return;
    char t[160];
    snprintf(t, sizeof t, "%s", why ? why : "");
    if (times) {
        int len = 0;
        t[0] = 0;
        for (int i = 0; i <= CHOICE_NATIVE; i++)
            if (times[i] >= 0)
                len += snprintf(t + len, sizeof t - (size_t)len, "%s%s %.3f ms", len ? ", " : "", form_name[i], times[i] * 1e3);
    }
    const char *w[3];
    layout_words(c, n, w);
    fprintf(stderr, "ftrun: conv '%s': %s (%s); input %s%s%s, output %s\n", n->name, form_name[pick], t, w[0],
            *w[1] ? ", sum " : "", w[1], w[2]);
}

/* The tuning cache's key of node n in this run (tuning.h): 0, or -1 when it
 * does not fit in cap. */
static int tuning_key(const conv_cache *c, const ft_kctx *k, const ft_node *n, const ft_view *in, const ft_view *out,
                      char *key, size_t cap)
{
    const char *w[3];
    layout_words(c, n, w);
    return cpu_tuning_conv_key(n, in, out, k->threads, w, key, cap);
}

/* The pick the tuning cache records for key (CHOICE_UNSET: none, or a form
 * oneDNN does not build for this node here), the other forms freed; -2 with
 * *st set when building the form failed. */
static int cached_choice(const conv_run *r, const ft_tuning *t, const char *key, ft_status *st)
{
    const char *rec = ft_tuning_get(t, key);
    int ch = CHOICE_UNSET;
    for (int i = 0; rec && i <= CHOICE_NATIVE; i++)
        if (!strcmp(rec, form_name[i]))
            ch = i;
    if (ch >= 0 && ch < N_VARIANTS && need_variant(r, ch, st))
        return -2;
    if (ch >= 0 && ch < N_VARIANTS && !r->e->v[ch].ok)
        return CHOICE_UNSET;
    for (int i = 0; ch != CHOICE_UNSET && i < N_VARIANTS; i++)
        if (i != ch)
            variant_free(&r->e->v[i]);
    return ch;
}

/* Whether a graph has an f32 conv: only then is there anything to decide. */
static int has_f32_conv(const ft_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == FT_OP_CONV && g->nodes[i].in[0] >= 0 && g->tensors[g->nodes[i].in[0]].dtype == FT_F32)
            return 1;
    return 0;
}

ft_status cpu_conv_prepare(ft_kctx *k)
{
    if (!k->g || !k->be || !has_f32_conv(k->g))
        return FT_OK;
    conv_cache *c = (conv_cache *)cpu_dnnl_cache_get(k->be, &conv_kind);
    if (!c)
        return ft_err(k->err, FT_ERUNTIME, "%s: out of memory for the convolution cache", k->g->file);
    if (c->base.broken)
        return FT_OK;
    cpu_dnnl_cache_begin(&c->base, k);
    int forced = forced_choice();
    if (!c->lay.built)
        conv_layouts_build(&c->lay, c->base.eng, k, k->private_layouts && forced != CHOICE_NATIVE && forced != V_PLAIN);
    if (c->lay.oom)
        return ft_err(k->err, FT_ERUNTIME, "%s: out of memory deciding the tensor layouts around the convolutions",
                      k->g->file);
    return FT_OK;
}

int cpu_conv_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_kernel_fn native, ft_status *st)
{
    /* f32 graphs only: f16 / bf16 arrive here widened to f32 in fresh buffers
     * (cpu_backend.c) and keep conv.c's loops, as f64 does; none of these
     * takes part in a blocked chain (chain_node). */
    if (in[0].dtype != FT_F32 || !k->g || n->in[0] < 0 || k->g->tensors[n->in[0]].dtype != FT_F32 ||
        ft_numel(&out[0].shape) == 0 || ft_numel(&in[0].shape) == 0 || ft_numel(&in[1].shape) == 0 || !k->be)
        return 0;
    conv_cache *c = (conv_cache *)*cpu_dnnl_cache_slot(k->be, CPU_DNNL_CONV);
    /* The layouts of the run were decided before it (cpu_conv_prepare, the
     * backend's prepare); a run the executor did not prepare has none. */
    if (c && c->base.broken)
        return 0;
    if (!c || !cpu_dnnl_cache_current(&c->base, k) || !c->lay.built) {
        *st = ft_node_err(k->err, FT_ERUNTIME, k->g, n,
                          "internal error: the convolutions' layouts were not decided before the run (the cpu backend's prepare)");
        return 1;
    }
    int forced = forced_choice(), fresh;
    /* a new execution of the graph: the copies and the bounds read in the
     * previous one are stale */
    if (c->first_conv < 0)
        c->first_conv = (int)(n - k->g->nodes);
    if (c->first_conv == n - k->g->nodes)
        c->epoch++;
    if (!c->bound && (c->bound = malloc(sizeof *c->bound * (size_t)k->g->n_tensors)))
        for (int i = 0; i < k->g->n_tensors; i++)
            c->bound[i] = (struct bound){-1, 0};
    entry *e = cpu_dnnl_cache_entry(&c->base, k, n, in, &fresh);
    if (!e) { /* an error, as above: conv.c's loops would round otherwise */
        *st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the convolution's state");
        return 1;
    }
    conv_run r = {k, c, e, n, in, out, native};
    cpu_dnnl_pick *pick = &e->key.pick;
    int unsafe = nan_unsafe(c, k, e, n, in, st);
    if (unsafe < 0)
        return 1;
    if (unsafe) {
        *st = run_form(&r, CHOICE_NATIVE);
        return 1;
    }
    if (pick->choice == CHOICE_UNSET && forced != CHOICE_UNSET) {
        pick->choice = CHOICE_NATIVE;
        /* blocked-add where the node has no sum in its dst layout: blocked */
        if (forced == V_ADD) {
            if (need_variant(&r, V_ADD, st))
                return 1;
            if (!e->v[V_ADD].ok)
                forced = V_BLOCKED;
        }
        if (forced < N_VARIANTS) {
            if (need_variant(&r, forced, st))
                return 1;
            if (e->v[forced].ok)
                pick->choice = forced;
        }
        log_pick(c, n, pick->choice, NULL, "forced by FTRUN_CONV_IMPL");
    }
    /* The tuning cache (--tuning-cache; tuning.h): a pick recorded for the
     * node's key is taken at its first run, untimed; one timed here is
     * recorded. FTRUN_CONV_IMPL, above, wins over it. */
    ft_tuning *tune = pick->choice == CHOICE_UNSET ? cpu_tuning_of(k->be) : NULL;
    char key[768];
    int keyed = tune && tuning_key(c, k, n, in, out, key, sizeof key) == 0;
    if (keyed && pick->calls == 0) {
        int ch = cached_choice(&r, tune, key, st);
        if (ch == -2)
            return 1;
        if (ch != CHOICE_UNSET) {
            pick->choice = ch;
            log_pick(c, n, ch, NULL, "from the tuning cache");
        }
    }
    if (pick->choice == CHOICE_UNSET && pick->calls++ == 0) {
        /* The first run of a node is not timed: early in a process, with
         * more than one thread, a new OpenMP thread may share a core with
         * another for tens of ms, and every form then times alike. It runs
         * the blocked form (conv.c's loops where oneDNN refuses it); the
         * second run picks. */
        if (need_variant(&r, V_BLOCKED, st))
            return 1;
        *st = run_form(&r, e->v[V_BLOCKED].ok ? V_BLOCKED : CHOICE_NATIVE);
        return 1;
    }
    if (pick->choice == CHOICE_UNSET) {
        /* each candidate timed on the node's tensors (see the top); the
         * fastest stays. The likely fastest first, so that a slow plain
         * form stops early. */
        static const int order[] = {V_BLOCKED, V_ADD, CHOICE_NATIVE, V_PLAIN};
        pick->lead = CHOICE_NATIVE;
        for (int oi = 0; oi < 4; oi++) {
            int cand = order[oi];
            if (cand < N_VARIANTS) {
                if (need_variant(&r, cand, st))
                    return 1;
                if (!e->v[cand].ok)
                    continue;
            }
            /* a later candidate must be 5% faster: the blocked form, timed
             * first, keeps a chain's layouts on a near tie. blocked-add,
             * timed next, has the same layouts and wins unless 3% slower:
             * the sum form's copy of the sum into dst costs the run more
             * than the node's time shows (it passes the sum's bytes
             * through the caches once more; cnn_block: the node times tie,
             * the whole run is 0.4 ms faster at 1 thread with blocked-add),
             * and where oneDNN's jit kernel is slower than brgconv it is
             * slower by more (ResNet18's residual convs: 5% to 40%) */
            if ((*st = cpu_dnnl_time(pick, cand, cand == V_ADD ? 1.03 : 0.95, k->threads, run_form, &r)))
                return 1;
        }
        pick->choice = pick->lead;
        log_pick(c, n, pick->choice, pick->t, NULL);
        if (tune && keyed) {
            double ms[CPU_DNNL_FORMS];
            for (int i = 0; i < CPU_DNNL_FORMS; i++)
                ms[i] = pick->t[i] >= 0 ? pick->t[i] * 1e3 : -1;
            if (ft_tuning_put(tune, key, form_name[pick->choice], ms)) {
                *st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory recording the convolution's pick (--tuning-cache)");
                return 1;
            }
        }
        for (int i = 0; i < N_VARIANTS; i++)
            if (i != pick->choice)
                variant_free(&e->v[i]);
        /* the output holds the last candidate's result; rerun the pick so
         * that it is the pick's */
    }
    *st = run_form(&r, pick->choice);
    return 1;
}
