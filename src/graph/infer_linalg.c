/* Shape and dtype inference of the linear-algebra ops:
 *   det(x [..., M, M]) -> [...]   the determinant of every square matrix of
 *                                 the batch (ONNX Det); M = 0 gives 1
 * The kernels (src/cpu/linalg.c, src/cuda/linalg.cu) factor each matrix as
 * P L U with partial pivoting (LAPACK getrf, cuBLAS getrfBatched); det has no
 * attributes, so it fills no typed parameters.
 *
 *   ft_graph_validate(g, &err);   // runs ft_infer_det on every det node
 *
 * Nothing is allocated. */
#include "infer_common.h"

#include <limits.h>

ft_status ft_infer_det(ft_infer_ctx *c)
{
    const ft_shape *x = &c->in[0]->shape;
    char sx[FT_SHAPE_STR];
    if (x->rank < 2)
        return ft_infer_fail(c, "det needs an input of rank >= 2 ([..., M, M]), got '%s' %s (rank %d)",
                             ft_infer_in_name(c, 0), ft_shape_str(x, sx), x->rank);
    int64_t m = x->dims[x->rank - 1];
    if (x->dims[x->rank - 2] != m)
        return ft_infer_fail(c, "det needs square matrices in the last two dims, got '%s' %s (%lld x %lld)",
                             ft_infer_in_name(c, 0), ft_shape_str(x, sx), (long long)x->dims[x->rank - 2],
                             (long long)m);
    if (m > INT_MAX / 2)
        return ft_infer_fail(c, "det: matrices of '%s' %s are %lld x %lld, larger than the factorization "
                             "libraries take (M < 2^30)", ft_infer_in_name(c, 0), ft_shape_str(x, sx),
                             (long long)m, (long long)m);
    ft_shape o = {.rank = x->rank - 2};
    for (int i = 0; i < o.rank; i++)
        o.dims[i] = x->dims[i];
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = o;
    return FT_OK;
}

/* LU factorization: about 2/3 M^3 operations per matrix, plus the diagonal product. */
uint64_t ft_flops_det(const struct ft_node *n, const ft_tinfo *const *in, const ft_tinfo *out)
{
    (void)n;
    const ft_shape *x = &in[0]->shape;
    uint64_t m = (uint64_t)x->dims[x->rank - 1];
    return ft_numel(&out[0].shape) * (2 * m * m * m / 3 + m);
}
