/* qlinear_conv's integer sums on oneDNN's u8 x s8 convolution (cpu.h:
 * cpu_qconv_dnnl), where it gives exactly what quant.c's loops give: the
 * int32 sums of x times w over the taps inside the input, which quant.c then
 * requantizes as for its own loops.
 *
 * Where it applies: x u8 with zero point 0 (oneDNN pads with the value 0,
 * which is then the zero point, as ONNX's padding is), w a constant i8 with
 * zero points 0, 1 to 3 spatial dims, and sums that cannot saturate. Without
 * the VNNI instructions oneDNN adds pairs of u8 x s8 products in 16 bits
 * with saturation (AVX2's vpmaddubsw): exact only when |w| <= 64 (2 * 255 *
 * 64 < 2^15), the weights ONNX Runtime's quantizer writes with reduce_range
 * (7 bits); a weight out of that range on such a CPU keeps quant.c's loops.
 * An implementation oneDNN only has in its reference form (ref:any) is not
 * used either: quant.c's loops are as fast.
 *
 * The input is reordered to channels-last (oneDNN's int8 layout), the sums
 * come back channels-last too ([N, spatial, M]: *acc), and the weights are
 * reordered once per entry.
 *
 * State: the CPU_DNNL_QCONV cache (dnnl_cache.h), owned by the backend
 * context. An entry is kept per node and thread count and rebuilt when x's
 * shape changes; it owns its primitives, memory objects and buffers. */
#include "cpu.h"
#include "dnnl_cache.h"
#include "dnnl_util.h"
#include "../graph/dtype_load.h"
#include "../graph/infer_conv.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdlib.h>
#include <string.h>

typedef struct qc_entry {
    cpu_dnnl_key key;
    int ok, refused;  /* built; oneDNN refused it, or only its reference form: quant.c's loops */
    int w_ready;      /* the weights reordered */
    dnnl_primitive_t conv, r_src, r_w;
    dnnl_memory_t u_src, m_src, u_w, m_w, m_dst, m_pad;
    void *src_buf, *w_buf, *dst_buf, *pad_buf; /* owned */
} qc_entry;

static void entry_free(void *p)
{
    qc_entry *e = p;
    dnnl_primitive_t prims[] = {e->conv, e->r_src, e->r_w};
    dnnl_memory_t mems[] = {e->u_src, e->m_src, e->u_w, e->m_w, e->m_dst, e->m_pad};
    cpu_dnnl_destroy(prims, FT_ARRAY_LEN(prims), mems, FT_ARRAY_LEN(mems));
    free(e->src_buf), free(e->w_buf), free(e->dst_buf), free(e->pad_buf);
    e->conv = e->r_src = e->r_w = NULL;
    e->u_src = e->m_src = e->u_w = e->m_w = e->m_dst = e->m_pad = NULL;
    e->src_buf = e->w_buf = e->dst_buf = e->pad_buf = NULL;
    e->ok = e->w_ready = 0;
}

static const cpu_dnnl_kind qc_kind = {CPU_DNNL_QCONV, sizeof(cpu_dnnl_cache), sizeof(qc_entry), entry_free, NULL};

/* A buffer for md, and a memory object of md on it. */
static dnnl_status_t md_buffer(dnnl_engine_t eng, const dnnl_memory_desc_t *md, void **buf, dnnl_memory_t *m)
{
    if (!(*buf = cpu_md_alloc(md)))
        return dnnl_out_of_memory;
    return dnnl_memory_create(m, md, eng, *buf);
}

/* Builds e's primitives for the node; e->ok 0 when oneDNN refuses. */
static void build(cpu_dnnl_cache *c, qc_entry *e, const ft_node *n, const ft_view *in, const ft_shape *ys)
{
    ft_conv_geom g;
    ft_conv_geom_of(&n->params.conv, &in[0].shape, &in[3].shape, ys, FT_U8, 0, &g);
    const int r = g.r, nd = r + 2, wnd = g.G > 1 ? nd + 1 : nd;
    static const dnnl_format_tag_t plain[] = {dnnl_ncw, dnnl_nchw, dnnl_ncdhw}, last[] = {dnnl_nwc, dnnl_nhwc, dnnl_ndhwc};
    static const dnnl_format_tag_t w_tag[] = {dnnl_oiw, dnnl_oihw, dnnl_oidhw}, gw_tag[] = {dnnl_goiw, dnnl_goihw, dnnl_goidhw};
    dnnl_dims_t xd = {g.N, g.C}, yd = {g.N, g.M}, wd, st, di, pl, pr;
    dnnl_status_t s = dnnl_unimplemented;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (r < 1 || r > 3)
        goto fail;
    if (g.G > 1)
        wd[0] = g.G, wd[1] = g.Mg, wd[2] = g.Cg;
    else
        wd[0] = g.M, wd[1] = g.C;
    for (int j = 0; j < r; j++) {
        xd[2 + j] = g.in[j], yd[2 + j] = g.out[j], wd[wnd - r + j] = g.k[j];
        st[j] = g.s[j], di[j] = g.d[j] - 1, pl[j] = g.pb[j];
        int64_t ek = (g.k[j] - 1) * g.d[j] + 1, need = (g.out[j] - 1) * g.s[j] + ek - g.in[j] - g.pb[j];
        pr[j] = need > 0 ? need : 0;
        if ((g.in[j] + pl[j] + pr[j] - ek) / g.s[j] + 1 != g.out[j])
            goto fail;
    }
    dnnl_memory_desc_t ux, cx, uw, aw, cy;
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&ux, nd, xd, dnnl_u8, plain[r - 1]));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&cx, nd, xd, dnnl_u8, last[r - 1]));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&uw, wnd, wd, dnnl_s8, g.G > 1 ? gw_tag[r - 1] : w_tag[r - 1]));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&aw, wnd, wd, dnnl_s8, dnnl_format_tag_any));
    CPU_DNNL_TRY(dnnl_memory_desc_init_by_tag(&cy, nd, yd, dnnl_s32, last[r - 1]));
    dnnl_convolution_desc_t cd;
    CPU_DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &cx,
                                                            &aw, NULL, &cy, st, di, pl, pr));
    CPU_DNNL_TRY(dnnl_primitive_attr_create(&attr));
    CPU_DNNL_TRY(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    CPU_DNNL_TRY(dnnl_primitive_desc_create(&pd, &cd, attr, c->eng, NULL));
    const char *impl = NULL;
    CPU_DNNL_TRY(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    s = dnnl_unimplemented;
    if (!impl || strncmp(impl, "ref", 3) == 0)
        goto fail;
    const dnnl_memory_desc_t *cw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *cpad = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (!cw)
        goto fail;
    CPU_DNNL_TRY(dnnl_primitive_create(&e->conv, pd));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->eng, &ux, &cx, &e->r_src));
    CPU_DNNL_TRY(cpu_dnnl_reorder(c->eng, &uw, cw, &e->r_w));
    CPU_DNNL_TRY(dnnl_memory_create(&e->u_src, &ux, c->eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(dnnl_memory_create(&e->u_w, &uw, c->eng, DNNL_MEMORY_NONE));
    if (e->r_src)
        CPU_DNNL_TRY(md_buffer(c->eng, &cx, &e->src_buf, &e->m_src));
    else
        CPU_DNNL_TRY(dnnl_memory_create(&e->m_src, &cx, c->eng, DNNL_MEMORY_NONE));
    if (e->r_w)
        CPU_DNNL_TRY(md_buffer(c->eng, cw, &e->w_buf, &e->m_w));
    else
        CPU_DNNL_TRY(dnnl_memory_create(&e->m_w, cw, c->eng, DNNL_MEMORY_NONE));
    CPU_DNNL_TRY(md_buffer(c->eng, &cy, &e->dst_buf, &e->m_dst));
    if (cpad && dnnl_memory_desc_get_size(cpad))
        CPU_DNNL_TRY(md_buffer(c->eng, cpad, &e->pad_buf, &e->m_pad));
    e->ok = 1;
fail:
    cpu_dnnl_build_free(pd, NULL, attr);
    if (!e->ok)
        entry_free(e);
}

/* Whether oneDNN's sums of w are exact on this CPU: VNNI, or |w| <= 64. */
static int weights_exact(const ft_view *w)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core_vnni) == dnnl_cpu_isa_avx512_core_vnni)
        return 1;
    const int8_t *p = (const int8_t *)w->data;
    uint64_t n = ft_numel(&w->shape);
    for (uint64_t i = 0; i < n; i++)
        if (p[i] < -64 || p[i] > 64)
            return 0;
    return 1;
}

/* The zero point at input i is absent or all zeros. */
static int zero_points_zero(const ft_view *z)
{
    if (!z->data)
        return 1;
    uint64_t n = ft_numel(&z->shape);
    for (uint64_t i = 0; i < n; i++)
        if (ft_ld_int(z->data, z->dtype, (int64_t)i) != 0)
            return 0;
    return 1;
}

int cpu_qconv_dnnl(ft_kctx *k, const ft_node *n, const ft_view *in, const ft_shape *ys, const int32_t **acc,
                   ft_status *st)
{
    const char *v = getenv("FTRUN_QCONV_IMPL");
    cpu_dnnl_cache *c;
    int fresh;
    qc_entry *e = NULL;
    if (in[0].dtype == FT_U8 && in[3].dtype == FT_I8 && k->g && k->be && ft_numel(ys) && ft_numel(&in[0].shape) &&
        cpu_input_is_const(k, n, 3) && zero_points_zero(&in[2]) && zero_points_zero(&in[5]) &&
        !(v && strcmp(v, "loops") == 0))
        e = cpu_dnnl_lookup(k, &qc_kind, n, in, 1, &c, &fresh);
    if (!e)
        return 0;
    if (fresh)
        e->refused = !weights_exact(&in[3]);
    if (!e->ok && !e->refused) {
        build(c, e, n, in, ys);
        e->refused = !e->ok;
    }
    if (!e->ok)
        return 0;
    dnnl_status_t s;
    const char *what = "setting a buffer";
    if ((s = dnnl_memory_set_data_handle(e->u_src, in[0].data)) || (s = dnnl_memory_set_data_handle(e->u_w, in[3].data)) ||
        (!e->r_src && (s = dnnl_memory_set_data_handle(e->m_src, in[0].data))) ||
        (!e->r_w && (s = dnnl_memory_set_data_handle(e->m_w, in[3].data))))
        goto fail;
    what = "a reorder";
    if (e->r_w && !e->w_ready) {
        if ((s = cpu_dnnl_reorder_run(c->strm, e->r_w, e->u_w, e->m_w)))
            goto fail;
        e->w_ready = 1;
    }
    if (e->r_src && (s = cpu_dnnl_reorder_run(c->strm, e->r_src, e->u_src, e->m_src)))
        goto fail;
    what = "the convolution";
    dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, e->m_src}, {DNNL_ARG_WEIGHTS, e->m_w}, {DNNL_ARG_DST, e->m_dst}};
    if ((s = cpu_dnnl_exec_wait(e->conv, c->strm, a, 3, e->m_pad, &what)))
        goto fail;
    *acc = (const int32_t *)e->dst_buf;
    *st = FT_OK;
    return 1;
fail:
    *st = ft_node_err(k->err, FT_ERUNTIME, k->g, n, "oneDNN int8 convolution: %s failed: %s", what,
                      s == dnnl_out_of_memory ? "out of memory" : dnnl_status2str(s));
    return 1;
}
