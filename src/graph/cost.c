/* FLOPs and bytes of a node, from the op table's counters and the tensor
 * sizes; and those counters (the flops column of ops.def). */
#include "graph.h"

void ft_node_cost(const ft_graph *g, const ft_node *n, uint64_t *flops, uint64_t *bytes)
{
    const ft_tinfo *in[64];
    ft_tinfo insto[64], out[64];
    *bytes = 0;
    *flops = 0;
    if (n->n_in > 64 || n->n_out > 64)
        return;
    for (int i = 0; i < n->n_in; i++) {
        if (n->in[i] < 0) {
            in[i] = NULL;
            continue;
        }
        const ft_tensor *t = &g->tensors[n->in[i]];
        insto[i] = (ft_tinfo){t->dtype, t->shape};
        in[i] = &insto[i];
        *bytes += ft_tensor_bytes(t);
    }
    for (int o = 0; o < n->n_out; o++) {
        const ft_tensor *t = &g->tensors[n->out[o]];
        out[o] = (ft_tinfo){t->dtype, t->shape};
        *bytes += ft_tensor_bytes(t);
    }
    *flops = ft_op_get(n->op)->flops(n, in, out);
}

uint64_t ft_flops_none(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)in, (void)out;
    return 0;
}

uint64_t ft_flops_out(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)in;
    uint64_t s = 0;
    for (int i = 0; i < n->n_out; i++)
        s += ft_numel(&out[i].shape);
    return s;
}

uint64_t ft_flops_in(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)out;
    return ft_numel(&in[0]->shape);
}

uint64_t ft_flops_norm(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n, (void)out;
    return 5 * ft_numel(&in[0]->shape);
}

uint64_t ft_flops_matmul(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n;
    const ft_shape *a = &in[0]->shape;
    uint64_t k = a->rank ? (uint64_t)a->dims[a->rank - 1] : 1;
    return 2 * ft_numel(&out[0].shape) * k;
}

uint64_t ft_flops_gemm(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *a = &in[0]->shape;
    uint64_t k = (uint64_t)(ft_attr(n, "trans_a")->i ? a->dims[0] : a->dims[1]);
    return 2 * ft_numel(&out[0].shape) * k + 2 * ft_numel(&out[0].shape);
}

/* Product of the spatial dims of a weight [M, C/g, k...]. */
static uint64_t kernel_volume(const ft_shape *w)
{
    uint64_t v = 1;
    for (int i = 2; i < w->rank; i++)
        v *= (uint64_t)w->dims[i];
    return v;
}

/* A multiply-add per weight element per output position, plus the bias. */
uint64_t ft_flops_conv(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape;
    uint64_t cpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1;
    return 2 * ft_numel(&out[0].shape) * cpg * kernel_volume(w) + (n->n_in > 2 && in[2] ? ft_numel(&out[0].shape) : 0) +
           (n->n_in > 3 && in[3] ? ft_numel(&out[0].shape) : 0);
}

/* conv's products, plus the bilinear sample (four products, three sums and
 * the mask) of every input channel at every kernel and output position. */
uint64_t ft_flops_deform_conv(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape, *y = &out[0].shape;
    uint64_t cpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1, c = (uint64_t)in[0]->shape.dims[1];
    uint64_t pos = y->dims[1] ? ft_numel(y) / (uint64_t)y->dims[1] : 0; /* N x output positions */
    return 2 * ft_numel(y) * cpg * kernel_volume(w) + 8 * pos * c * kernel_volume(w) +
           (n->n_in > 3 && in[3] ? ft_numel(y) : 0);
}

/* Every input element is scattered through M/group x kernel weights. */
uint64_t ft_flops_conv_transpose(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    const ft_shape *w = &in[1]->shape;
    uint64_t mpg = w->rank > 1 ? (uint64_t)w->dims[1] : 1;
    return 2 * ft_numel(&in[0]->shape) * mpg * kernel_volume(w) + (n->n_in > 2 && in[2] ? ft_numel(&out[0].shape) : 0);
}

/* One comparison or addition per window element per output. */
uint64_t ft_flops_pool(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)in;
    const ft_attr_val *k = ft_attr(n, "kernel_shape");
    uint64_t v = 1;
    for (int i = 0; i < k->n; i++)
        v *= k->ints[i] > 0 ? (uint64_t)k->ints[i] : 1;
    return ft_numel(&out[0].shape) * v;
}

/* The usual 5 n log2(n) per complex transform of length n (half for real ones). */
uint64_t ft_flops_fft(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    int complex_in = n->op != FT_OP_RFFT;
    const ft_shape *s = &in[0]->shape;
    int lrank = complex_in ? s->rank - 1 : s->rank;
    if (lrank < 1)
        return 0;
    int ax;
    if (ft_axis(ft_attr(n, "axis")->i, lrank, &ax))
        return 0;
    const ft_shape *ls = n->op == FT_OP_IRFFT ? &out[0].shape : s; /* the transform length */
    uint64_t len = (uint64_t)ls->dims[ax];
    uint64_t total = n->op == FT_OP_IRFFT ? ft_numel(&out[0].shape) : ft_numel(s) / (complex_in ? 2 : 1);
    if (len < 2)
        return total;
    double lg = 0;
    for (uint64_t v = len; v > 1; v >>= 1)
        lg += 1;
    uint64_t f = (uint64_t)(5.0 * (double)total * lg);
    return complex_in && n->op != FT_OP_IRFFT ? f : f / 2;
}

/* Q K^T and P V: 2 B H S T (D + Dv), plus the softmax; T counts the past keys. */
uint64_t ft_flops_attention(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)out;
    const ft_shape *q = &in[0]->shape, *k = &in[1]->shape, *v = &in[2]->shape;
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return 0;
    int64_t t = k->dims[2];
    if (n->n_in > 4 && in[4] && in[4]->shape.rank == 4)
        t += in[4]->shape.dims[2];
    uint64_t bhst = (uint64_t)q->dims[0] * (uint64_t)q->dims[1] * (uint64_t)q->dims[2] * (uint64_t)t;
    return 2 * bhst * (uint64_t)(q->dims[3] + v->dims[3]) + 5 * bhst;
}
