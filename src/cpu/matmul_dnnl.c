/* f32 matmul and gemm through oneDNN's matmul primitive, or through its 1x1
 * convolution (matmul.c calls cpu_matmul_dnnl first; declarations in cpu.h).
 *
 * The 1x1 convolution (FORM_CONV, form_of): A [M,K] row-major read as the
 * nhwc pixels [1,K,1,M] of a convolution whose weights are B, C [M,N] its
 * nhwc output; oneDNN's jit_1x1 kernel on AVX2 packs B once into its
 * blocked layout and runs faster than either BLAS (numbers at form_of),
 * where its matmul primitive calls the same sgemm as cpu_sgemm. Only for a
 * constant B and A not transposed. Its activation, relu included, is
 * matmul.c's epilogue, so that NaN passes relu without a check of the
 * inputs, and after the packing the node never reads B's value again: it
 * offers it to the graph's owner (ft_kctx.release), who frees it where no
 * other node reads it, and the entry (key.w_released) then runs with B's
 * data NULL.
 *
 * Which products: one 2-D product per node, C[M,N] = op(A) op(B) (+ bias)
 * (relu): a matmul whose B is one matrix shared by every row of A (A's batch
 * dims fold into M: the Linear layers of the transformer and MLP exports),
 * or a gemm with alpha 1 and no c or a bias row c ([N] or [1,N], beta 1).
 * Small products (under 2^18 multiply-adds, or a side under 8) and the
 * batched ones (attention heads) keep matmul.c's path (cpu_sgemm).
 *
 * Why: cpu_sgemm (blas.c: dnnl_sgemm, or OpenBLAS) packs B on every call. The primitive
 * is built with weights in the layout oneDNN prefers (format `any`); when B
 * is a constant of the graph it is reordered into that layout once, on the
 * node's first run, and reused from then on. The bias and a relu activation
 * are post-ops of the product; gelu (exact or tanh) stays matmul.c's
 * epilogue (cpu_matmul_epilogue), so it is computed as the gelu op computes
 * it (ftrun-graph(5): "as that op computes it"). A B that is not a constant
 * is read in its own layout (no reorder).
 *
 * When: measured on the Sapphire Rapids Xeon this project benchmarks on
 * (f32, GFLOP/s, dnnl_sgemm vs this primitive with B packed once, the
 * same B and A every call):
 *   1 thread:  256x4096x1024 (B^T) 157 vs 150, 128x2048x512 148 vs 167,
 *              128x512x2048 164 vs 166;
 *   2 threads: 256x4096x1024 (B^T) 257 vs 317, 128x2048x512 306 vs 335,
 *              128x512x2048 315 vs 331.
 * Inside whole graphs, in process CPU time per run (robust to the other
 * processes of a shared machine), cpu_sgemm vs the primitive on one thread:
 * the ONNX mlp (two gemms, B stored transposed, [N,K]) 32.5 vs 29.0 and
 * 29.8 vs 25.0 ms, the mlp bench graph (three such gemms) 94.3 vs 87.8 ms;
 * gpt_block (matmuls, B [K,N]) 14.5 vs 17.0 ms, transformer_encoder 6.5 vs
 * 6.5 ms, the transformer bench graph 106 vs 109 ms. The likely reason
 * (not measured apart): a transposed B costs cpu_sgemm more to pack on every
 * call, and the primitive nothing after the first run. On two threads the
 * primitive is ahead or level (wall, alternating runs on a shared machine:
 * ONNX mlp 28.5 vs 32.9 ms, the transformer bench graph 145 vs 210 ms with
 * matmul.c's batch threading, gpt_block 6.9 vs 6.8 ms). The one
 * gemm of transformer_encoder, 128 rows of A against a transposed
 * [512,512] B, was slower on the primitive (the run: 6.5 vs 7.25 ms): the
 * packing saved is spread over fewer rows. So by default the primitive runs
 * the products of a run with two threads or more, and on one thread those
 * of a constant B stored transposed with at least 256 rows of A; the other
 * one-thread products stay on cpu_sgemm. A first-run timing of the
 * two, as conv_dnnl.c does for convs, was tried and left out: run back to
 * back on one node, with its weights hot in cache, it picked the primitive
 * where whole runs were slower with it. The environment variable FTRUN_MATMUL_IMPL =
 * blas or dnnl forces one (ftrun(1), ENVIRONMENT; tests run both); unset or
 * "auto", the rule above picks.
 *
 * NaN: oneDNN's relu post-op (a max instruction) turns NaN into 0 where
 * ftrun's relu passes it (NUMERICS in ftrun-graph(5)). A relu product whose
 * A, B or bias holds a NaN or an infinity therefore runs matmul.c's path for
 * that run; B and the bias are read once when they are constants.
 *
 * State: the CPU_DNNL_MATMUL cache of dnnl_cache.h, owned by the CPU backend
 * context (cpu_backend.c, released by close() through cpu_dnnl_cache_free).
 * It holds the entries of one graph and run id (ft_kctx.run_id): a new one
 * empties it. An entry is kept per node and thread count, and rebuilt when
 * A's shape or B's address changes; it owns its primitive, memory objects,
 * packed weights and scratchpad. */
#include "cpu.h"
#include "dnnl_cache.h"
#include "dnnl_util.h"
#include "../graph/infer_misc.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdlib.h>
#include <string.h>

typedef struct mm_entry {
    cpu_dnnl_key key; /* the node, B's address, A's shape, the thread count; B a constant */
    int ok;      /* the primitive was built */
    int refused; /* oneDNN refused to build it: matmul.c's path */
    int w_nonfinite, w_ready; /* B: holds NaN / inf (-1: unknown); packed */
    int b_const, b_nonfinite;          /* the bias: the same two */
    int relu; /* relu is a post-op */
    int conv; /* built as a 1x1 convolution (FORM_CONV), else a matmul primitive */
    dnnl_primitive_t mm, r_w;
    dnnl_memory_t m_a, m_b, m_c, m_bias, m_pad, u_w;
    void *w_buf, *pad_buf; /* owned */
} mm_entry;

/* The cache's drop (dnnl_cache.h); build's clean-up on a refusal too. */
static void entry_free(void *p)
{
    mm_entry *e = p;
    dnnl_primitive_t prims[] = {e->mm, e->r_w};
    dnnl_memory_t mems[] = {e->m_a, e->m_b, e->m_c, e->m_bias, e->m_pad, e->u_w};
    cpu_dnnl_destroy(prims, FT_ARRAY_LEN(prims), mems, FT_ARRAY_LEN(mems));
    free(e->w_buf);
    free(e->pad_buf);
    e->mm = e->r_w = NULL;
    e->m_a = e->m_b = e->m_c = e->m_bias = e->m_pad = e->u_w = NULL;
    e->w_buf = e->pad_buf = NULL;
    e->ok = 0;
}

static const cpu_dnnl_kind mm_kind = {CPU_DNNL_MATMUL, sizeof(cpu_dnnl_cache), sizeof(mm_entry), entry_free, NULL};

/* The node's product as one 2-D C[M,N] = op(A) op(B): 1 with the sizes,
 * transpositions and bias (NULL or N floats), 0 where it is not one the
 * primitive takes (see the top). */
typedef struct mm_shape {
    int64_t M, N, K;
    int ta, tb;
    const void *bias;
    ft_mm_act act;
} mm_shape;

static int product_of(const ft_node *n, const ft_view *in, mm_shape *p)
{
    const ft_shape *as = &in[0].shape, *bs = &in[1].shape;
    memset(p, 0, sizeof *p);
    p->act = n->params.matmul.act;
    if (n->op == FT_OP_MATMUL) {
        if (as->rank < 2 || bs->rank < 2)
            return 0;
        ft_matmul_geom g;
        ft_matmul_geom_of(as, bs, &g);
        if (!g.tall)
            return 0;
        p->M = (int64_t)g.nbatch * g.M, p->N = g.N, p->K = g.K;
        p->bias = n->n_in > 2 ? in[2].data : NULL;
    } else {
        const ft_matmul_params *mp = &n->params.matmul;
        if (mp->alpha != 1.0 || as->rank != 2 || bs->rank != 2)
            return 0;
        p->ta = mp->trans_a, p->tb = mp->trans_b;
        ft_gemm_mkn(mp, as, bs, &p->M, &p->K, &p->N);
        if (n->n_in > 2 && in[2].data) { /* only a bias row: matmul.c's row_c */
            const ft_shape *cs = &in[2].shape;
            if (mp->beta != 1.0 || cs->rank < 1 || cs->dims[cs->rank - 1] != p->N || (cs->rank == 2 && cs->dims[0] != 1) ||
                cs->rank > 2)
                return 0;
            p->bias = in[2].data;
        }
    }
    return p->M >= 8 && p->N >= 8 && p->K > 0 && (double)p->M * (double)p->N * (double)p->K >= 262144.0;
}

/* The descriptors of e's product as a 1x1 convolution (FORM_CONV): A
 * [M,K] row-major is the nhwc source [1,K,1,M], C [M,N] the nhwc
 * destination [1,N,1,M], B the weights [N,K,1,1] (ihwo for [K,N], oihw for
 * [N,K] stored transposed) in the layout oneDNN prefers; the bias 1-D. */
static dnnl_status_t conv_descs(const mm_shape *p, dnnl_memory_desc_t *ma, dnnl_memory_desc_t *mb_user,
                                dnnl_memory_desc_t *mb, dnnl_memory_desc_t *mc, dnnl_memory_desc_t *mbias,
                                dnnl_convolution_desc_t *cd)
{
    dnnl_dims_t sd = {1, p->K, 1, p->M}, wd = {p->N, p->K, 1, 1}, dd = {1, p->N, 1, p->M}, biasd = {p->N};
    dnnl_dims_t strides = {1, 1}, pad = {0, 0};
    dnnl_status_t s;
    if ((s = dnnl_memory_desc_init_by_tag(ma, 4, sd, dnnl_f32, dnnl_nhwc)) ||
        (s = dnnl_memory_desc_init_by_tag(mb_user, 4, wd, dnnl_f32, p->tb ? dnnl_oihw : dnnl_ihwo)) ||
        (s = dnnl_memory_desc_init_by_tag(mb, 4, wd, dnnl_f32, dnnl_format_tag_any)) ||
        (s = dnnl_memory_desc_init_by_tag(mc, 4, dd, dnnl_f32, dnnl_nhwc)) ||
        (s = dnnl_memory_desc_init_by_tag(mbias, 1, biasd, dnnl_f32, dnnl_a)))
        return s;
    return dnnl_convolution_forward_desc_init(cd, dnnl_forward_inference, dnnl_convolution_direct, ma, mb,
                                              p->bias ? mbias : NULL, mc, strides, pad, pad);
}

/* Builds e's primitive for product p (a 1x1 convolution where e->conv);
 * leaves e->ok 0 when oneDNN refuses. */
static void build(cpu_dnnl_cache *c, mm_entry *e, const mm_shape *p)
{
    dnnl_memory_desc_t ma, mb_user, mb, mc, mbias;
    dnnl_dims_t ad = {p->M, p->K}, bd = {p->K, p->N}, cd = {p->M, p->N}, biasd = {1, p->N};
    dnnl_status_t s;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t md;
    dnnl_convolution_desc_t convd;
    if (e->conv) {
        CPU_DNNL_TRY(conv_descs(p, &ma, &mb_user, &mb, &mc, &mbias, &convd));
    } else {
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&ma, 2, ad, dnnl_f32, p->ta ? dnnl_ba : dnnl_ab));
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&mb_user, 2, bd, dnnl_f32, p->tb ? dnnl_ba : dnnl_ab));
        if (e->key.w_const)
            CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&mb, 2, bd, dnnl_f32, dnnl_format_tag_any));
        else
            mb = mb_user;
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&mc, 2, cd, dnnl_f32, dnnl_ab));
        CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&mbias, 2, biasd, dnnl_f32, dnnl_ab));
        CPU_DNNL_TRY(dnnl_matmul_desc_init(&md, &ma, &mb, p->bias ? &mbias : NULL, &mc));
    }
    CPU_DNNL_TRY(dnnl_primitive_attr_create(&attr));
    CPU_DNNL_TRY(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    CPU_DNNL_TRY(dnnl_post_ops_create(&po));
    /* the 1x1 convolution leaves relu to the epilogue, as it does gelu: no
     * run then needs B's value after the weights are packed (ft_kctx.release) */
    e->relu = p->act == FT_MM_ACT_RELU && !e->conv;
    if (e->relu)
        CPU_DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    CPU_DNNL_TRY(dnnl_primitive_attr_set_post_ops(attr, po));
    CPU_DNNL_TRY(dnnl_primitive_desc_create(&pd, e->conv ? (const_dnnl_op_desc_t)&convd : (const_dnnl_op_desc_t)&md,
                                            attr, c->eng, NULL));
    const dnnl_memory_desc_t *cw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *cpad = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    s = dnnl_invalid_arguments;
    if (!cw)
        goto fail;
    CPU_DNNL_TRY(dnnl_primitive_create(&e->mm, pd));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->eng, &mb_user, cw, &e->r_w));
    if (e->r_w) {
        s = dnnl_out_of_memory;
        if (!(e->w_buf = cpu_md_alloc(cw)))
            goto fail;
        CPU_DNNL_TRY(dnnl_memory_create(&e->u_w, &mb_user, c->eng, DNNL_MEMORY_NONE));
    }
    size_t padsz = cpad ? dnnl_memory_desc_get_size(cpad) : 0;
    s = dnnl_out_of_memory;
    if (padsz && !(e->pad_buf = cpu_md_alloc(cpad)))
        goto fail;
    CPU_DNNL_TRY(dnnl_memory_create(&e->m_a, &ma, c->eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&e->m_b, cw, c->eng, e->r_w ? e->w_buf : DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&e->m_c, &mc, c->eng, DNNL_MEMORY_NONE));
    if (p->bias)
        CPU_DNNL_TRY(dnnl_memory_create(&e->m_bias, &mbias, c->eng, DNNL_MEMORY_NONE));
    if (padsz)
        CPU_DNNL_TRY(dnnl_memory_create(&e->m_pad, cpad, c->eng, e->pad_buf));
    e->ok = 1;
fail:
    cpu_dnnl_build_free(pd, po, attr);
    if (!e->ok)
        entry_free(e);
}

/* One run of e's primitive on the node's tensors, then the epilogue
 * activations that are not post-ops (gelu). */
static ft_status run(ft_kctx *k, cpu_dnnl_cache *c, mm_entry *e, const ft_node *n, const mm_shape *p,
                     const ft_view *in, ft_view *out)
{
    dnnl_status_t s;
    const char *what = "setting a buffer";
    if ((s = dnnl_memory_set_data_handle(e->m_a, in[0].data)) || (s = dnnl_memory_set_data_handle(e->m_c, out[0].data)) ||
        (p->bias && (s = dnnl_memory_set_data_handle(e->m_bias, (void *)p->bias))) ||
        (e->r_w && (s = dnnl_memory_set_data_handle(e->u_w, in[1].data))) ||
        (!e->r_w && (s = dnnl_memory_set_data_handle(e->m_b, in[1].data))))
        goto fail;
    if (e->r_w && (!e->w_ready || !e->key.w_const)) {
        what = "the weights' reorder";
        if ((s = cpu_dnnl_reorder_run(c->strm, e->r_w, e->u_w, e->m_b)))
            goto fail;
        e->w_ready = 1;
        /* the packed weights are all the convolution form reads from now on */
        if (e->conv && e->key.w_const && k->release && k->release(k->release_owner, n->in[1]))
            e->key.w_released = 1;
    }
    what = "the matrix product";
    dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, e->m_a}, {DNNL_ARG_WEIGHTS, e->m_b}, {DNNL_ARG_DST, e->m_c}};
    int na = 3;
    if (p->bias)
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->m_bias};
    if ((s = cpu_dnnl_exec_wait(e->mm, c->strm, a, na, e->m_pad, &what)))
        goto fail;
    if (!e->relu)
        cpu_matmul_epilogue(k, out[0].data, p->M, p->N, NULL, p->act);
    return FT_OK;
fail:
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "oneDNN %s primitive: %s failed: %s",
                       e->conv ? "1x1 convolution" : "matmul", what, dnnl_status2str(s));
}

/* The path of a product: matmul.c's (cpu_sgemm), the matmul primitive or
 * the 1x1 convolution primitive. */
enum { FORM_BLAS, FORM_MATMUL, FORM_CONV };

/* FTRUN_MATMUL_IMPL = blas, dnnl or conv forces a path (conv where B is a
 * constant and A is not transposed; blas elsewhere); unset or "auto": where
 * oneDNN runs AVX-512 code the matmul primitive from two threads up, and
 * on one thread the products of a constant B stored transposed with at
 * least 256 rows (see the top), elsewhere cpu_sgemm; without AVX-512 the
 * 1x1 convolution wherever it applies, cpu_sgemm elsewhere. On an AMD EPYC
 * whose AVX-512 is hidden (oneDNN's effective ISA AVX2), the matmul
 * primitive was the slower in every case measured (ms per run, primitive vs
 * cpu_sgemm, medians of 10): the ONNX mlp 103.5 vs 56.7 on one thread and
 * 56.7 vs 32.1 on two, gpt_block 39.1 vs 36.3 and 26.9 vs 20.1; and the 1x1
 * convolution (oneDNN's jit_1x1:avx2, weights packed once) the faster in
 * every case (ms, best of 10 calls with the same A and B; dnnl_sgemm,
 * OpenBLAS, the convolution; MxKxN): 1 thread 197x768x3072 14.9, 11.3,
 * 10.4; 197x3072x768 10.9, 11.3, 10.4; 128x768x3072 14.4, 8.5, 6.7;
 * 3136x96x384 3.10, 3.94, 2.64; 8x512x512 0.131, 0.111, 0.069; 2 threads
 * 197x768x3072 7.0, 8.0, 5.8; 128x512x2048 2.10, 2.15, 1.53; 49x1280x1000
 * 0.90, 1.18, 0.82. */
static int form_of(const ft_kctx *k, const ft_node *n, const mm_shape *p)
{
    const char *v = getenv("FTRUN_MATMUL_IMPL");
    int conv_fits = !p->ta && cpu_input_is_const(k, n, 1);
    if (v && strcmp(v, "blas") == 0)
        return FORM_BLAS;
    if (v && strcmp(v, "dnnl") == 0)
        return FORM_MATMUL;
    if (v && strcmp(v, "conv") == 0)
        return conv_fits ? FORM_CONV : FORM_BLAS;
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core) != dnnl_cpu_isa_avx512_core)
        return conv_fits ? FORM_CONV : FORM_BLAS;
    return k->threads >= 2 || (p->tb && p->M >= 256 && cpu_input_is_const(k, n, 1)) ? FORM_MATMUL : FORM_BLAS;
}

/* A relu post-op and a NaN or infinity in A, B or the bias: matmul.c's path
 * keeps NaN as ftrun's relu does (see the top). */
static int nan_unsafe(mm_entry *e, const ft_view *in, const mm_shape *p)
{
    if (!e->relu)
        return 0;
    if (e->w_nonfinite < 0 || !e->key.w_const)
        e->w_nonfinite = cpu_nonfinite_f32(in[1].data, ft_numel(&in[1].shape));
    if (e->b_nonfinite < 0 || !e->b_const)
        e->b_nonfinite = cpu_nonfinite_f32(p->bias, (uint64_t)p->N);
    return e->w_nonfinite || e->b_nonfinite || cpu_nonfinite_f32(in[0].data, ft_numel(&in[0].shape));
}

/* A node whose B was released (ft_kctx.release) and that now runs at
 * another thread count (no --threads: the count follows the load) has a new
 * entry e but no B to pack: e reads the packed weights of the node's entry
 * that released it, when its primitive wants them in the same layout. That
 * entry stays in the cache as long as e (it matches its node whatever B's
 * address, and a graph whose shapes change at run time releases nothing),
 * and it owns the buffer. 0 when e is ready. */
static int borrow_packed(cpu_dnnl_cache *c, mm_entry *e, const ft_node *n)
{
    const dnnl_memory_desc_t *want, *have;
    for (int i = 0; i < c->n; i++) {
        mm_entry *x = (mm_entry *)(c->e + (size_t)i * mm_kind.esz);
        if (x == e || x->key.node != n || !x->key.w_released || !x->ok || !e->ok || !e->r_w)
            continue;
        if (dnnl_memory_get_memory_desc(x->m_b, &have) || dnnl_memory_get_memory_desc(e->m_b, &want) ||
            !dnnl_memory_desc_equal(want, have) || dnnl_memory_set_data_handle(e->m_b, x->w_buf))
            return -1;
        free(e->w_buf);
        e->w_buf = NULL;
        e->w_ready = e->key.w_released = 1;
        return 0;
    }
    return -1;
}

int cpu_matmul_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, ft_status *st)
{
    mm_shape p;
    /* f32 graphs only: f16 / bf16 arrive widened to f32 in fresh buffers
     * (cpu_backend.c) and keep matmul.c's path, as f64 does */
    if (in[0].dtype != FT_F32 || in[1].dtype != FT_F32 || !k->g || !k->be || n->in[0] < 0 ||
        k->g->tensors[n->in[0]].dtype != FT_F32 || ft_numel(&out[0].shape) == 0 || !product_of(n, in, &p))
        return 0;
    int form = form_of(k, n, &p);
    if (form == FORM_BLAS && in[1].data)
        return 0;
    cpu_dnnl_cache *c;
    int fresh;
    mm_entry *e = cpu_dnnl_lookup(k, &mm_kind, n, in, 1, &c, &fresh);
    if (e && fresh) {
        e->b_const = cpu_input_is_const(k, n, 2);
        e->w_nonfinite = e->b_nonfinite = -1;
        e->conv = form == FORM_CONV || !in[1].data;
    }
    if (e && !e->ok && !e->refused) {
        build(c, e, &p);
        e->refused = !e->ok;
    }
    if (!in[1].data && (!e || (!e->key.w_released && borrow_packed(c, e, n)))) {
        /* B's value went to the node's packed copy (ft_kctx.release) */
        *st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory, or oneDNN refused, running '%s' again from "
                          "its packed weights (its value '%s' was freed)", n->name, k->g->tensors[n->in[1]].name);
        return 1;
    }
    if (!e || !e->ok || nan_unsafe(e, in, &p))
        return 0;
    *st = run(k, c, e, n, &p, in, out);
    return 1;
}
