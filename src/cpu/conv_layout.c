/* The layouts of a run's tensors around the f32 convolutions: which
 * tensors stay in oneDNN's blocked layout between convs ("Blocked chains"
 * at the top of conv_dnnl.c, which runs the convs in them; blocked.c runs
 * the pools and the per-channel mul on them). conv_layouts_build decides
 * once per run id, from the graph and the layouts oneDNN's conv primitives
 * prefer (conv_make_pd); declarations in conv_layout.h. */
#include "conv_layout.h"
#include "dnnl_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* md = f32 layout tags[rank - 3] of an activation tensor of shape sh (rank 3
 * to 5: one tag each for 1-D, 2-D and 3-D). */
static dnnl_status_t activation_md(const ft_shape *sh, const dnnl_format_tag_t tags[3], dnnl_memory_desc_t *md)
{
    if (sh->rank < 3 || sh->rank > 5)
        return dnnl_unimplemented;
    dnnl_dims_t d;
    for (int i = 0; i < sh->rank; i++)
        d[i] = sh->dims[i];
    return dnnl_memory_desc_init_by_tag(md, sh->rank, d, dnnl_f32, tags[sh->rank - 3]);
}

dnnl_status_t conv_plain_md(const ft_shape *sh, dnnl_memory_desc_t *md)
{
    static const dnnl_format_tag_t tag[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw};
    return activation_md(sh, tag, md);
}

static void copy_free(conv_copy *cp)
{
    dnnl_memory_t mems[] = {cp->from, cp->to};
    cpu_dnnl_destroy(&cp->r, 1, mems, FT_ARRAY_LEN(mems));
    free(cp->buf);
    cp->r = NULL, cp->from = cp->to = NULL, cp->buf = NULL, cp->made = 0;
}

void conv_layouts_free(layouts *l)
{
    for (int i = 0; i < l->n_copy; i++)
        copy_free(&l->copy[i]);
    free(l->copy);
    free(l->cin);
    free(l->idx);
    free(l->md);
    memset(l, 0, sizeof *l);
}

/* A conv node whose tensors may take part in a blocked chain: f32 input,
 * weight and output, none empty, 1-D to 3-D. */
static int chain_node(const ft_graph *g, const ft_node *n)
{
    if (n->op != FT_OP_CONV || n->in[0] < 0 || n->in[1] < 0)
        return 0;
    const ft_tensor *x = &g->tensors[n->in[0]], *w = &g->tensors[n->in[1]], *y = &g->tensors[n->out[0]];
    return x->dtype == FT_F32 && w->dtype == FT_F32 && y->dtype == FT_F32 && x->shape.rank >= 3 &&
           x->shape.rank <= 5 && ft_numel(&x->shape) && ft_numel(&w->shape) && ft_numel(&y->shape);
}

static const dnnl_format_tag_t channel_tags[3][3] = {{dnnl_nCw8c, dnnl_nChw8c, dnnl_nCdhw8c},
                                                     {dnnl_nCw16c, dnnl_nChw16c, dnnl_nCdhw16c},
                                                     {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc}};

/* md = channel-blocked layout `kind` (0: by 8, 1: by 16, 2: channels-last)
 * of a tensor of shape sh. */
static dnnl_status_t channel_md(const ft_shape *sh, int kind, dnnl_memory_desc_t *md)
{
    return activation_md(sh, channel_tags[kind], md);
}

/* The kind (see channel_md) when md is one of oneDNN's channel-blocked
 * layouts of a tensor of shape sh, [N][C/B][spatial][B]: nCw8c, nChw16c,
 * nCdhw16c and the like (B = 8 or 16), or channels-last nwc, nhwc, ndhwc
 * (B = C); else -1. */
int conv_channel_kind(const dnnl_memory_desc_t *md, const ft_shape *sh)
{
    for (int kind = 0; kind < 3; kind++) {
        dnnl_memory_desc_t t;
        if (channel_md(sh, kind, &t) == dnnl_success && dnnl_memory_desc_equal(&t, md))
            return kind;
    }
    return -1;
}

/* The input slot whose layout node n's output takes when that input is
 * channel-blocked (blocked.c runs n in that layout), or -1: an f32 mul of a
 * tensor by a per-channel factor ([N or 1, C, 1, ...], the same rank) of the
 * tensor's shape (the tensor's slot); an f32 max_pool without indices
 * (slot 0). */
static int layout_operand(const ft_graph *g, const ft_node *n)
{
    if (n->op == FT_OP_MAX_POOL) {
        const ft_tensor *x = &g->tensors[n->in[0]];
        return x->dtype == FT_F32 && x->shape.rank >= 3 && x->shape.rank <= 5 && (n->n_out < 2 || n->out[1] < 0) ? 0 : -1;
    }
    if (n->op != FT_OP_MUL || n->in[0] < 0 || n->in[1] < 0 || n->in[0] == n->in[1])
        return -1;
    const ft_shape *y = &g->tensors[n->out[0]].shape;
    for (int big = 0; big < 2; big++) {
        const ft_tensor *a = &g->tensors[n->in[big]], *f = &g->tensors[n->in[1 - big]];
        if (a->dtype != FT_F32 || f->dtype != FT_F32 || !ft_shape_eq(&a->shape, y) || f->shape.rank != y->rank ||
            y->rank < 3 || f->shape.dims[1] != y->dims[1] || (f->shape.dims[0] != 1 && f->shape.dims[0] != y->dims[0]))
            continue;
        int ok = 1;
        for (int i = 2; i < y->rank; i++)
            ok &= f->shape.dims[i] == 1;
        if (ok)
            return big;
    }
    return -1;
}

/* Whether node rn may read tensor t, blocked in layout want, through its
 * input slot i (see conv_layouts_build); cand and lay are its state. */
static int blocked_reader(const ft_graph *g, const ft_node *rn, int i, int t, const dnnl_memory_desc_t *want,
                          const int *slot, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst,
                          const unsigned char *cand, const int *lay)
{
    if (slot[rn - g->nodes] >= 0) {
        int sl = slot[rn - g->nodes];
        return (i == 0 && dnnl_memory_desc_equal(&src[sl], want)) || (i == 3 && dnnl_memory_desc_equal(&dst[sl], want));
    }
    const ft_shape *sh = &g->tensors[t].shape;
    if (rn->op == FT_OP_GLOBAL_AVERAGE_POOL || rn->op == FT_OP_GLOBAL_MAX_POOL)
        return i == 0 && g->tensors[rn->out[0]].dtype == FT_F32 && conv_channel_kind(want, sh) >= 0;
    /* a mul or a max pool writes its result in its operand's kind of layout;
     * a max pool also writes a plain result (one that stays plain) */
    int o = rn->out[0];
    if (layout_operand(g, rn) != i || conv_channel_kind(want, sh) < 0)
        return 0;
    if (!cand[o] || lay[o] < 0)
        return rn->op == FT_OP_MAX_POOL;
    return conv_channel_kind(&dst[lay[o]], &g->tensors[o].shape) == conv_channel_kind(want, sh);
}

/* The layout conv node ni (slot[ni] >= 0) wants for its input 0 (j 0) or,
 * as its dst, for its sum (j 1). */
static const dnnl_memory_desc_t *wanted(const int *slot, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *dst,
                                        int ni, int j)
{
    return j ? &dst[slot[ni]] : &src[slot[ni]];
}

/* Whether tensor t, plain in this run, may have a blocked copy in layout md:
 * f32, a layout other than the plain one, exactly the tensor's bytes. */
static int copy_fits(const ft_graph *g, int t, const dnnl_memory_desc_t *md)
{
    const ft_tensor *tt = &g->tensors[t];
    dnnl_memory_desc_t plain;
    return tt->dtype == FT_F32 && !conv_plain_md(&tt->shape, &plain) && !dnnl_memory_desc_equal(md, &plain) &&
           dnnl_memory_desc_get_size(md) == ft_tensor_bytes(tt);
}

/* The blocked copies (conv_layout.h, conv_copy): each tensor that stays
 * plain (l->idx -1) and that two or more conv nodes read as input 0 or as
 * the sum in the layout its first conv reader in g->order wants for it;
 * those convs read the copy there (l->cin). 1 when out of memory. */
static int find_copies(layouts *l, const ft_graph *g, const int *slot, const dnnl_memory_desc_t *src,
                       const dnnl_memory_desc_t *dst)
{
    /* first[t]: 2 * node + j of t's first conv reader (j 1: the sum), or -1; cnt[t]: its readers in that layout */
    size_t nt = g->n_tensors > 0 ? (size_t)g->n_tensors : 1;
    int *first = malloc(sizeof *first * nt), *cnt = calloc(nt, sizeof *cnt);
    int rc = 1, nc = 0;
    if (!first || !cnt)
        goto out;
    for (int t = 0; t < g->n_tensors; t++)
        first[t] = -1;
    for (int k2 = 0; k2 < g->n_nodes; k2++) {
        int ni = g->order[k2];
        const ft_node *n = &g->nodes[ni];
        int last = -1; /* a node that reads t twice counts once */
        for (int j = 0; j < 2 && slot[ni] >= 0; j++) {
            int i = j ? 3 : 0, t = i < n->n_in ? n->in[i] : -1;
            if (t < 0 || l->idx[t] >= 0 || t == last || !copy_fits(g, t, wanted(slot, src, dst, ni, j)))
                continue;
            last = t;
            if (first[t] < 0)
                first[t] = 2 * ni + j, cnt[t] = 1;
            else if (dnnl_memory_desc_equal(wanted(slot, src, dst, ni, j), wanted(slot, src, dst, first[t] / 2, first[t] % 2)))
                cnt[t]++;
        }
    }
    for (int t = 0; t < g->n_tensors; t++)
        nc += cnt[t] >= 2;
    rc = 0;
    if (!nc)
        goto out;
    rc = 1;
    if (!(l->copy = calloc((size_t)nc, sizeof *l->copy)) || !(l->cin = malloc(sizeof *l->cin * 2 * (size_t)g->n_nodes)))
        goto out;
    for (int t = 0; t < g->n_tensors; t++) {
        if (cnt[t] < 2) {
            cnt[t] = -1;
            continue;
        }
        conv_copy *cp = &l->copy[l->n_copy];
        cp->t = t, cp->first = first[t] / 2, cp->readers = cnt[t];
        cp->md = *wanted(slot, src, dst, first[t] / 2, first[t] % 2);
        cnt[t] = l->n_copy++;
    }
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const ft_node *n = &g->nodes[ni];
        for (int j = 0; j < 2; j++) {
            int i = j ? 3 : 0, t = slot[ni] >= 0 && i < n->n_in ? n->in[i] : -1;
            l->cin[2 * ni + j] = t >= 0 && cnt[t] >= 0 &&
                                 dnnl_memory_desc_equal(wanted(slot, src, dst, ni, j), &l->copy[cnt[t]].md) ? cnt[t] : -1;
        }
    }
    rc = 0;
out:
    free(first);
    free(cnt);
    return rc;
}

/* FTRUN_CONV_LOG: the copies, and the nodes other than convs that read a
 * blocked tensor (blocked.c), on stderr. */
static void log_layouts(const layouts *l, const ft_graph *g)
{
    for (int i = 0; i < l->n_copy; i++)
        fprintf(stderr, "ftrun: tensor '%s': blocked (copy) for %d convs, made once a run of the graph\n",
                g->tensors[l->copy[i].t].name, l->copy[i].readers);
    for (int k2 = 0; k2 < g->n_nodes; k2++) {
        const ft_node *n = &g->nodes[g->order[k2]];
        if (n->op == FT_OP_CONV)
            continue;
        for (int i = 0; i < n->n_in; i++)
            if (conv_layout_of(l, n->in[i])) {
                fprintf(stderr, "ftrun: %s '%s': input blocked, output %s\n", ft_op_name(n->op), n->name,
                        conv_layout_of(l, n->out[0]) ? "blocked" : "plain");
                break;
            }
    }
}

dnnl_status_t conv_copy_make(conv_copy *cp, dnnl_engine_t eng, dnnl_stream_t strm, const ft_shape *sh, const void *plain,
                             int threads, double *amax)
{
    dnnl_status_t s = dnnl_success;
    int kind = conv_channel_kind(&cp->md, sh);
    int64_t B = kind < 0 ? 0 : kind == 2 ? sh->dims[1] : kind == 1 ? 16 : 8;
    *amax = -1;
    if (!cp->buf && !(cp->buf = cpu_md_alloc(&cp->md)))
        return dnnl_out_of_memory;
    /* blocked.c's transpose, which reads max |x| on the way; else oneDNN's reorder */
    if (B && cpu_to_blocked(plain, cp->buf, sh, B, threads, amax))
        return dnnl_success;
    if (!cp->r) {
        dnnl_memory_desc_t pmd;
        CPU_DNNL_TRY(conv_plain_md(sh, &pmd));
        CPU_DNNL_TRY(cpu_dnnl_reorder(eng, &pmd, &cp->md, &cp->r)); /* never equal: a copy's layout is not plain */
        CPU_DNNL_TRY(dnnl_memory_create(&cp->from, &pmd, eng, DNNL_MEMORY_NONE));
        CPU_DNNL_TRY(dnnl_memory_create(&cp->to, &cp->md, eng, cp->buf));
    }
    CPU_DNNL_TRY(dnnl_memory_set_data_handle(cp->from, (void *)plain));
    CPU_DNNL_TRY(cpu_dnnl_reorder_run(strm, cp->r, cp->from, cp->to));
    CPU_DNNL_TRY(dnnl_stream_wait(strm));
    return dnnl_success;
fail:
    copy_free(cp);
    return s;
}

/* Decides which tensors of k->g stay blocked in this run ("Blocked chains" in conv_dnnl.c). A
 * conv's output may, in the layout that conv prefers for it, and so may the
 * output of a node that works in its operand's channel-blocked layout
 * (layout_operand: a per-channel mul, a max pool; blocked.c). It does when
 * it is neither an input nor an output of the graph, its blocked form takes
 * exactly its own bytes (channels a multiple of the block), and every reader
 * takes that layout: a conv that prefers it for its input 0 or (as the dst)
 * for its residual sum, input 3; a global pool (channel-blocked layouts;
 * blocked.c); a mul or max pool whose output stays blocked too, or a max
 * pool whose output stays plain (blocked.c writes it plain). Then a tensor
 * that stays plain and that two convs or more read in the same blocked
 * layout (and of exactly its bytes) gets a blocked copy (find_copies). Without
 * private layouts, or with FTRUN_CONV_IMPL native or plain: no tensor and no
 * copy; short of memory: l->oom. FTRUN_CONV_LOG: a line per copy and per
 * pool or mul that reads a blocked tensor (log_layouts). */
void conv_layouts_build(layouts *l, dnnl_engine_t eng, const ft_kctx *k, int enabled)
{
    const ft_graph *g = k->g;
    l->built = 1;
    if (!enabled)
        return;
    int nc = 0, np = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        nc += chain_node(g, &g->nodes[i]);
        np += layout_operand(g, &g->nodes[i]) >= 0;
    }
    if (nc < 2)
        return;
    int *slot = malloc(sizeof *slot * (size_t)g->n_nodes);
    /* dst: the convs' preferred outputs, then one layout per node of layout_operand */
    dnnl_memory_desc_t *src = malloc(sizeof *src * (size_t)nc), *dst = malloc(sizeof *dst * (size_t)(nc + np));
    unsigned char *cand = calloc((size_t)g->n_tensors, 1);
    l->idx = malloc(sizeof *l->idx * (size_t)g->n_tensors);
    if (!slot || !src || !dst || !cand || !l->idx) {
        /* an error, not plain layouts: the pools and the mul would then run
         * their plain loops, whose sums round otherwise */
        conv_layouts_free(l);
        l->built = l->oom = 1;
        goto out;
    }
    nc = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const ft_node *n = &g->nodes[i];
        slot[i] = -1;
        if (!chain_node(g, n))
            continue;
        descs d;
        dnnl_primitive_desc_t pd;
        const ft_shape *ws = &g->tensors[n->in[1]].shape;
        int has_b = n->n_in > 2 && n->in[2] >= 0, has_sum = n->n_in > 3 && n->in[3] >= 0;
        if (conv_make_pd(eng, n, &g->tensors[n->in[0]].shape, ws, &g->tensors[n->out[0]].shape, has_b, has_sum, 1, &d, &pd))
            continue;
        const dnnl_memory_desc_t *cx = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
        const dnnl_memory_desc_t *cy = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        if (cx && cy) {
            src[nc] = *cx, dst[nc] = *cy;
            slot[i] = nc++;
        }
        dnnl_primitive_desc_destroy(pd);
    }
    /* the layout each tensor would take (an index into dst), in node order so
     * that a mul or a pool sees its operand's */
    int nd = nc;
    for (int t = 0; t < g->n_tensors; t++)
        l->idx[t] = -1;
    for (int k2 = 0; k2 < g->n_nodes; k2++) {
        const ft_node *n = &g->nodes[g->order[k2]];
        const ft_tensor *tt = &g->tensors[n->out[0]];
        int sl = slot[n - g->nodes], op = sl < 0 ? layout_operand(g, n) : -1, lay = sl;
        if (op >= 0 && l->idx[n->in[op]] >= 0) {
            int kind = conv_channel_kind(&dst[l->idx[n->in[op]]], &g->tensors[n->in[op]].shape);
            if (kind < 0 || channel_md(&tt->shape, kind, &dst[nd]))
                continue;
            lay = nd++;
        }
        if (lay < 0)
            continue;
        dnnl_memory_desc_t plain;
        l->idx[n->out[0]] = lay;
        cand[n->out[0]] = tt->n_readers > 0 && !(tt->flags & (FT_TF_INPUT | FT_TF_OUTPUT | FT_TF_VALUE)) &&
                          !conv_plain_md(&tt->shape, &plain) && !dnnl_memory_desc_equal(&dst[lay], &plain) &&
                          dnnl_memory_desc_get_size(&dst[lay]) == ft_tensor_bytes(tt);
    }
    /* drop candidates with a reader that cannot take them, until none is
     * dropped (the operand and the output of a mul or pool stand or fall
     * together) */
    for (int changed = 1; changed;) { /* one pass over every node's inputs, then the producers */
        changed = 0;
        for (int r = 0; r < g->n_nodes; r++) {
            const ft_node *rn = &g->nodes[r];
            for (int i = 0; i < rn->n_in; i++) {
                int t = rn->in[i];
                if (t >= 0 && cand[t] && !blocked_reader(g, rn, i, t, &dst[l->idx[t]], slot, src, dst, cand, l->idx))
                    cand[t] = 0, changed = 1;
            }
        }
        for (int t = 0; t < g->n_tensors; t++) {
            const ft_node *p = cand[t] ? &g->nodes[g->tensors[t].producer] : NULL;
            if (p && slot[p - g->nodes] < 0 && !cand[p->in[layout_operand(g, p)]])
                cand[t] = 0, changed = 1;
        }
    }
    for (int t = 0; t < g->n_tensors; t++)
        if (!cand[t])
            l->idx[t] = -1;
    if (find_copies(l, g, slot, src, dst)) {
        conv_layouts_free(l);
        l->built = l->oom = 1;
        goto out;
    }
    l->md = dst, dst = NULL;
    if (getenv("FTRUN_CONV_LOG"))
        log_layouts(l, g);
out:
    free(slot);
    free(src);
    free(dst);
    free(cand);
}

