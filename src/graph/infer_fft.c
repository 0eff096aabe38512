/* Shape and dtype inference of fft, ifft, rfft and irfft (man/ftrun-graph.5, "Fourier
 * transforms"). A complex tensor is a real tensor whose last dim is 2 (re, im);
 * `axis` counts in the logical shape, i.e. without that trailing 2.
 *
 * Lengths follow numpy.fft: a transform of length 0 is refused (NumPy raises
 * "Invalid number of FFT data points (0)") rather than silently producing an
 * empty result, for fft, ifft and rfft alike, and for irfft's output length n.
 * irfft may however read an axis with 0 bins when n is given: every bin is then
 * zero padding and the result is zeros, as numpy.fft.irfft(a, n) does. Other
 * (batch) dims may be 0: that is an empty batch, not an empty transform. */
#include "infer_common.h"
#include "infer_fft.h"

#include <math.h>
#include <string.h>

/* The norm attribute, shared by all four ops, into params.fft.norm. */
static ft_status check_norm(ft_infer_ctx *c)
{
    const char *s = ft_attr(c->node, "norm")->s;
    if (strcmp(s, "backward") && strcmp(s, "ortho") && strcmp(s, "forward"))
        return ft_infer_fail(c, "attribute 'norm': unknown value '%s' (expected \"backward\", \"ortho\" or "
                             "\"forward\")", s);
    c->params->fft.norm = !strcmp(s, "ortho") ? FT_FFT_NORM_ORTHO : !strcmp(s, "forward") ? FT_FFT_NORM_FORWARD
                                                                                          : FT_FFT_NORM_BACKWARD;
    return FT_OK;
}

void ft_fft_around_axis(const ft_shape *s, int lrank, int ax, int64_t *outer, int64_t *m, int64_t *inner)
{
    *outer = *inner = 1;
    for (int d = 0; d < ax; d++)
        *outer *= s->dims[d];
    for (int d = ax + 1; d < lrank; d++)
        *inner *= s->dims[d];
    *m = s->dims[ax];
}

double ft_fft_scale(const ft_fft_params *p, int inverse, int64_t n)
{
    if (p->norm == FT_FFT_NORM_ORTHO)
        return 1.0 / sqrt((double)n);
    if (p->norm == (inverse ? FT_FFT_NORM_BACKWARD : FT_FFT_NORM_FORWARD))
        return 1.0 / (double)n;
    return 1.0;
}

/* The logical shape of a complex input (its shape without the trailing 2). */
static ft_status complex_shape(ft_infer_ctx *c, ft_shape *logical)
{
    const ft_shape *s = &c->in[0]->shape;
    char b[FT_SHAPE_STR];
    if (s->rank == 0 || s->dims[s->rank - 1] != 2)
        return ft_infer_fail(c, "input '%s' %s is not complex: %s takes a complex tensor, a real tensor whose "
                             "last dim is 2 (re, im)", ft_infer_in_name(c, 0), ft_shape_str(s, b), ft_op_name(c->node->op));
    *logical = *s;
    logical->rank--;
    return FT_OK;
}

/* Normalises attribute 'axis' against the logical rank. */
static ft_status logical_axis(ft_infer_ctx *c, const ft_shape *logical, int is_complex, int *ax)
{
    int64_t a = ft_attr(c->node, "axis")->i;
    char b[FT_SHAPE_STR], l[FT_SHAPE_STR];
    if (ft_axis(a, logical->rank, ax) == 0) {
        c->params->fft.axis = *ax;
        return FT_OK;
    }
    if (logical->rank == 0)
        return ft_infer_fail(c, "attribute 'axis' = %lld is out of range: input '%s' %s is a %s scalar with no "
                             "axis to transform", (long long)a, ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, b),
                             is_complex ? "complex" : "real");
    if (is_complex)
        return ft_infer_fail(c, "attribute 'axis' = %lld is out of range for complex input '%s' %s (logical "
                             "shape %s, rank %d: axis must be in [%d, %d])", (long long)a, ft_infer_in_name(c, 0),
                             ft_shape_str(&c->in[0]->shape, b), ft_shape_str(logical, l), logical->rank,
                             -logical->rank, logical->rank - 1);
    return ft_infer_fail(c, "attribute 'axis' = %lld is out of range for input '%s' %s (rank %d: axis must be "
                         "in [%d, %d])", (long long)a, ft_infer_in_name(c, 0), ft_shape_str(&c->in[0]->shape, b),
                         logical->rank, -logical->rank, logical->rank - 1);
}

static ft_status nonempty_axis(ft_infer_ctx *c, const ft_shape *logical, int ax)
{
    char b[FT_SHAPE_STR];
    if (logical->dims[ax] < 1)
        return ft_infer_fail(c, "%s over an empty axis: axis %d of input '%s' %s has length 0 (the transform "
                             "length must be >= 1)", ft_op_name(c->node->op), ax, ft_infer_in_name(c, 0),
                             ft_shape_str(&c->in[0]->shape, b));
    return FT_OK;
}

/* fft and ifft: complex -> complex of the same shape. */
ft_status ft_infer_fft(ft_infer_ctx *c)
{
    ft_shape lg;
    int ax;
    ft_status st;
    if ((st = check_norm(c)) || (st = complex_shape(c, &lg)) || (st = logical_axis(c, &lg, 1, &ax)) ||
        (st = nonempty_axis(c, &lg, ax)))
        return st;
    c->out[0] = *c->in[0];
    return FT_OK;
}

/* rfft: real [.., n, ..] -> complex [.., n/2+1, .., 2]. */
ft_status ft_infer_rfft(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    char b[FT_SHAPE_STR];
    int ax;
    ft_status st;
    if ((st = check_norm(c)) || (st = logical_axis(c, s, 0, &ax)) || (st = nonempty_axis(c, s, ax)))
        return st;
    if (s->rank >= FT_MAX_RANK)
        return ft_infer_fail(c, "input '%s' %s has rank %d: the complex result needs one more dim and ranks are "
                             "limited to %d", ft_infer_in_name(c, 0), ft_shape_str(s, b), s->rank, FT_MAX_RANK);
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = *s;
    c->out[0].shape.dims[ax] = s->dims[ax] / 2 + 1;
    c->out[0].shape.dims[s->rank] = 2;
    c->out[0].shape.rank = s->rank + 1;
    return FT_OK;
}

/* irfft: complex [.., m, .., 2] -> real [.., n, ..], n defaulting to 2*(m-1). */
ft_status ft_infer_irfft(ft_infer_ctx *c)
{
    ft_shape lg;
    int ax;
    ft_status st;
    char b[FT_SHAPE_STR];
    if ((st = check_norm(c)) || (st = complex_shape(c, &lg)) || (st = logical_axis(c, &lg, 1, &ax)))
        return st;
    const ft_attr_val *na = ft_attr(c->node, "n");
    int64_t m = lg.dims[ax], n;
    if (na->present) {
        n = na->i;
        if (n < 1)
            return ft_infer_fail(c, "attribute 'n' = %lld: the output length must be >= 1", (long long)n);
    } else {
        if (m < 2)
            return ft_infer_fail(c, "input '%s' %s has %lld bin%s along axis %d, so the default output length "
                                 "n = 2*(m-1) = %lld is not >= 1; give attribute 'n'", ft_infer_in_name(c, 0),
                                 ft_shape_str(&c->in[0]->shape, b), (long long)m, m == 1 ? "" : "s", ax,
                                 (long long)(2 * (m - 1)));
        n = 2 * (m - 1);
    }
    c->out[0].dtype = c->in[0]->dtype;
    c->out[0].shape = lg;
    c->out[0].shape.dims[ax] = n;
    return FT_OK;
}
