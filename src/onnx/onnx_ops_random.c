/* ONNX's random sampling ops on ftrun's Philox-4x32-10 numbers (the
 * generator of "init" value sources and dropout, man/ftrun-graph.5):
 * RandomUniformLike -> random_uniform_like, RandomNormalLike ->
 * random_normal_like, Bernoulli -> bernoulli, Multinomial -> multinomial; RandomUniform and RandomNormal,
 * whose shape is an attribute, are constants made at load by the same rule
 * (graph.c ft_init_values), so every run and backend gives the same values.
 * ONNX's float seed is truncated to an integer (absent: 0). NumPy's
 * generator, which ONNX's reference uses, gives other values.
 *
 *   ft_status st = ox_map_random_like(c, n);  // one random_*_like or bernoulli node
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"
#include "onnx_ops.h"

/* The seed attribute as the generator's key; 1 with an error when it is
 * not a finite number within int64. */
static int seed_of(onx_ctx *c, const onx_node *n, int64_t *seed)
{
    double s = onx_attr_f(n, "seed", 0.0);
    if (!(s > -9.2e18 && s < 9.2e18)) {
        onx_error(c, n, FT_EGRAPH, "attribute seed = %g is not a finite number in the int64 range", s);
        return 1;
    }
    *seed = (int64_t)s;
    return 0;
}

/* Attribute dtype (an ONNX TensorProto type) into *dt; def when absent. */
static ft_status dtype_attr(onx_ctx *c, const onx_node *n, ft_dtype def, ft_dtype *dt)
{
    const char *tn;
    *dt = def;
    if (!onx_has_attr(n, "dtype"))
        return FT_OK;
    int64_t v = onx_attr_i(n, "dtype", 1);
    if (ox_dtype_from_onnx(v, dt, &tn))
        return onx_unsupported(c, n, "attribute dtype=%lld (%s): ftrun has no such dtype", (long long)v, tn);
    return FT_OK;
}

ft_status ox_map_random_like(onx_ctx *c, const onx_node *n)
{
    ft_op op = !strcmp(n->op_type, "Bernoulli")           ? FT_OP_BERNOULLI
               : !strcmp(n->op_type, "Multinomial")       ? FT_OP_MULTINOMIAL
               : !strcmp(n->op_type, "RandomUniformLike") ? FT_OP_RANDOM_UNIFORM_LIKE
                                                          : FT_OP_RANDOM_NORMAL_LIKE;
    int64_t seed;
    ft_dtype dt;
    if (seed_of(c, n, &seed))
        return onx_status(c);
    OX_TRY(ox_check_dtype(c, n, op, 0));
    OX_TRY(dtype_attr(c, n, op == FT_OP_MULTINOMIAL ? FT_I32 : ox_dtype(c, n, 0), &dt));
    ft_node *f = ox_emit1(c, n, op, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    OX_TRY(onx_set_i(c, f, "seed", seed));
    OX_TRY(onx_set_s(c, f, "dtype", ft_dtype_name(dt)));
    if (op == FT_OP_RANDOM_UNIFORM_LIKE) {
        OX_TRY(onx_set_f(c, f, "low", onx_attr_f(n, "low", 0.0)));
        return onx_set_f(c, f, "high", onx_attr_f(n, "high", 1.0));
    }
    if (op == FT_OP_MULTINOMIAL)
        return onx_set_i(c, f, "sample_size", onx_attr_i(n, "sample_size", 1));
    if (op == FT_OP_RANDOM_NORMAL_LIKE) {
        OX_TRY(onx_set_f(c, f, "mean", onx_attr_f(n, "mean", 0.0)));
        return onx_set_f(c, f, "scale", onx_attr_f(n, "scale", 1.0));
    }
    return FT_OK;
}

/* RandomUniform, RandomNormal: the values of random_uniform_like and
 * random_normal_like over the shape attribute, as a constant. */
ft_status ox_map_random(onx_ctx *c, const onx_node *n)
{
    int normal = !strcmp(n->op_type, "RandomNormal");
    const int64_t *dims;
    int rank = onx_attr_ints(n, "shape", &dims);
    int64_t seed;
    ft_dtype dt;
    if (!onx_has_attr(n, "shape") || rank > FT_MAX_RANK)
        return onx_error(c, n, FT_EGRAPH, "attribute shape is missing or has more than %d dims", FT_MAX_RANK);
    if (seed_of(c, n, &seed))
        return onx_status(c);
    OX_TRY(dtype_attr(c, n, FT_F32, &dt));
    if (!ft_dtype_in(dt, FT_DT_FLOAT))
        return onx_unsupported(c, n, "dtype %s: ftrun's random values are floats", ft_dtype_name(dt));
    double a = onx_attr_f(n, normal ? "mean" : "low", 0.0), b = onx_attr_f(n, normal ? "scale" : "high", 1.0);
    if (normal ? !(b >= 0) : !(a <= b))
        return onx_error(c, n, FT_EGRAPH, normal ? "scale = %g: expected scale >= 0 (mean %g)" : "low = %g > high = %g",
                         normal ? b : a, normal ? a : b);
    ft_npy v = {.dtype = dt, .shape = {.rank = rank}};
    uint64_t numel = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0 || dims[d] > ((int64_t)1 << 32))
            return onx_error(c, n, FT_EGRAPH, "attribute shape has dim %d = %lld", d, (long long)dims[d]);
        v.shape.dims[d] = dims[d];
        numel *= (uint64_t)dims[d];
    }
    if (numel > ((uint64_t)1 << 28))
        return onx_unsupported(c, n, "%llu values, more than the 2^28 made at load", (unsigned long long)numel);
    v.nbytes = (size_t)numel * ft_dtype_size(dt);
    if (!(v.data = malloc(v.nbytes ? v.nbytes : 1)))
        return onx_oom(c);
    ft_init_values(v.data, dt, numel, normal ? 3 : 2, a, b, (uint64_t)seed);
    return onx_const_out(c, n, 0, &v);
}
