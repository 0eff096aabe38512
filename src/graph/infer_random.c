/* Inference of the random sampling ops: random_uniform_like,
 * random_normal_like (x's shape, the dtype attribute or x's own), bernoulli
 * (p's shape; dtype any number or bool, default p's) and multinomial
 * ([batch, sample_size] of i32 or i64). The values
 * (cpu/random.c, cuda/random.cu) are the Philox-4x32-10 numbers of "init"
 * value sources and of dropout, keyed by the seed attribute
 * (man/ftrun-graph.5, "Random sampling"). */
#include "graph.h"
#include "infer_common.h"

ft_status ft_infer_random(ft_infer_ctx *c)
{
    ft_random_params *p = &c->params->rnd;
    const ft_attr_val *d = ft_attr(c->node, "dtype");
    if (c->node->op == FT_OP_MULTINOMIAL) { /* x [B, C] unnormalised log-probabilities -> [B, sample_size] classes */
        ft_dtype idt;
        int64_t ns = ft_attr(c->node, "sample_size")->i;
        char sb[FT_SHAPE_STR];
        if (ft_dtype_parse(d->s, &idt) != 0 || (idt != FT_I32 && idt != FT_I64))
            return ft_infer_fail(c, "attribute 'dtype' = '%s': expected i32 or i64", d->s);
        if (c->in[0]->shape.rank != 2 || c->in[0]->shape.dims[1] < 1)
            return ft_infer_fail(c, "input '%s' has shape %s; expected [batch, classes] with classes >= 1",
                                 ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, sb));
        if (ns < 0)
            return ft_infer_fail(c, "attribute 'sample_size' = %lld: expected >= 0", (long long)ns);
        p->odt = (int)idt;
        p->seed = (uint64_t)ft_attr(c->node, "seed")->i;
        ft_shape o = {.rank = 2, .dims = {c->in[0]->shape.dims[0], ns}};
        return ft_infer_set_out(c, 0, idt, &o);
    }
    ft_dtype odt = c->in[0]->dtype;
    int bern = c->node->op == FT_OP_BERNOULLI;
    ft_dtype_mask ok = bern ? FT_DT_ANY : FT_DT_FLOAT;
    if (d->present && ft_dtype_parse(d->s, &odt) != 0)
        return ft_infer_fail(c, "attribute 'dtype' = '%s' is not a dtype", d->s);
    if (!ft_dtype_in(odt, ok))
        return ft_infer_fail(c, "output dtype %s (%s): expected %s", ft_dtype_name(odt),
                             d->present ? "attribute 'dtype'" : "the input's, with no 'dtype' attribute",
                             bern ? "a number or bool" : "a float dtype (f16, bf16, f32, f64)");
    p->odt = (int)odt;
    p->seed = (uint64_t)ft_attr(c->node, "seed")->i;
    if (c->node->op == FT_OP_RANDOM_UNIFORM_LIKE) {
        p->a = ft_attr(c->node, "low")->f;
        p->b = ft_attr(c->node, "high")->f;
        if (!(p->a <= p->b) || p->b - p->a > 1.7e308)
            return ft_infer_fail(c, "attributes low = %g and high = %g: expected finite low <= high", p->a, p->b);
    } else if (c->node->op == FT_OP_RANDOM_NORMAL_LIKE) {
        p->a = ft_attr(c->node, "mean")->f;
        p->b = ft_attr(c->node, "scale")->f;
        if (!(p->b >= 0) || p->b > 1.7e308 || !(p->a == p->a) || p->a > 1.7e308 || p->a < -1.7e308)
            return ft_infer_fail(c, "attributes mean = %g and scale = %g: expected a finite mean and scale >= 0", p->a,
                                 p->b);
    }
    return ft_infer_set_out(c, 0, odt, &c->in[0]->shape);
}
