#include "copy_geom.h"

#include <math.h>
#include <string.h>

int64_t ft_xfer_simplify(ft_xfer *x)
{
    int r = 0;
    int64_t total = 1;
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] == 0) {
            x->rank = 0;
            return 0;
        }
        total *= x->dims[i];
        if (x->dims[i] == 1)
            continue;
        if (r > 0 && x->ss[r - 1] == x->ss[i] * x->dims[i] && x->ds[r - 1] == x->ds[i] * x->dims[i]) {
            x->dims[r - 1] *= x->dims[i];
            x->ss[r - 1] = x->ss[i];
            x->ds[r - 1] = x->ds[i];
        } else {
            x->dims[r] = x->dims[i];
            x->ss[r] = x->ss[i];
            x->ds[r] = x->ds[i];
            r++;
        }
    }
    x->rank = r;
    return total;
}

void ft_xfer_init(ft_xfer *x, const ft_shape *s)
{
    memset(x, 0, sizeof *x);
    x->rank = s->rank;
    ft_strides(s, x->ds);
    ft_strides(s, x->ss);
    for (int i = 0; i < s->rank; i++)
        x->dims[i] = s->dims[i];
}

void ft_xfer_transpose(ft_xfer *x, const struct ft_node *n, const ft_shape *in, const ft_shape *out)
{
    const ft_attr_val *pa = ft_attr(n, "perm");
    int r = in->rank;
    int64_t is[FT_MAX_RANK];
    ft_strides(in, is);
    ft_xfer_init(x, out);
    for (int i = 0; i < r; i++) {
        int p = r - 1 - i;
        if (pa->present)
            ft_axis(pa->ints[i], r, &p);
        x->ss[i] = is[p];
    }
}

void ft_xfer_expand(ft_xfer *x, const ft_shape *in, const ft_shape *out)
{
    ft_xfer_init(x, out);
    ft_broadcast_strides(in, out, x->ss);
}

void ft_xfer_tile(ft_xfer *x, const ft_shape *in, const ft_shape *out)
{
    /* out[r*d + j] along each axis is in[j]: view the output as (repeat, dim)
     * pairs and broadcast the input over the repeat dims. */
    int64_t is[FT_MAX_RANK], os[FT_MAX_RANK];
    ft_strides(in, is);
    ft_strides(out, os);
    memset(x, 0, sizeof *x);
    x->rank = 2 * in->rank;
    for (int i = 0; i < in->rank; i++) {
        x->dims[2 * i] = in->dims[i] ? out->dims[i] / in->dims[i] : 0;
        x->dims[2 * i + 1] = in->dims[i];
        x->ss[2 * i] = 0;
        x->ss[2 * i + 1] = is[i];
        x->ds[2 * i] = in->dims[i] * os[i];
        x->ds[2 * i + 1] = os[i];
    }
}

int64_t ft_xfer_part(ft_xfer *x, const ft_shape *part, const ft_shape *whole, int axis, int64_t off, int whole_is_dst)
{
    int64_t ws[FT_MAX_RANK];
    ft_strides(whole, ws);
    ft_xfer_init(x, part);
    memcpy(whole_is_dst ? x->ds : x->ss, ws, sizeof ws);
    return off * ws[axis];
}

/* First index of an ONNX Slice on one axis of size dim (see slice_len() in
 * src/graph/infer_movement.c, which gives the length). */
static int64_t slice_first(int64_t dim, int64_t start, int64_t step)
{
    if (start < 0)
        start += dim;
    if (step > 0)
        return start < 0 ? 0 : start > dim ? dim : start;
    return start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
}

int ft_xfer_slice(ft_xfer *x, const struct ft_node *n, const ft_shape *in, const ft_shape *out, int64_t *base)
{
    const ft_attr_val *sa = ft_attr(n, "starts"), *aa = ft_attr(n, "axes"), *pa = ft_attr(n, "steps");
    int64_t is[FT_MAX_RANK], first[FT_MAX_RANK] = {0}, step[FT_MAX_RANK];
    ft_strides(in, is);
    for (int d = 0; d < in->rank; d++)
        step[d] = 1;
    for (int i = 0; i < sa->n; i++) {
        int ax = i;
        if (aa->present)
            ft_axis(aa->ints[i], in->rank, &ax);
        step[ax] = pa->present ? pa->ints[i] : 1;
        first[ax] = slice_first(in->dims[ax], sa->ints[i], step[ax]);
    }
    ft_xfer_init(x, out);
    *base = 0;
    for (int d = 0; d < in->rank; d++) {
        if (out->dims[d] == 0)
            return 0;
        *base += first[d] * is[d];
        /* one element: the stride is never used, and a huge step would overflow */
        x->ss[d] = out->dims[d] > 1 ? is[d] * step[d] : 0;
    }
    return 1;
}

void ft_pad_amounts(const struct ft_node *n, int r, int64_t *pb, int64_t *pe)
{
    const ft_attr_val *pa = ft_attr(n, "pads"), *aa = ft_attr(n, "axes");
    int na = aa->present && aa->n > 0 ? aa->n : r;
    for (int d = 0; d < FT_MAX_RANK; d++)
        pb[d] = pe[d] = 0;
    for (int i = 0; i < na; i++) {
        int ax = i;
        if (aa->present && aa->n > 0)
            ft_axis(aa->ints[i], r, &ax);
        pb[ax] = pa->ints[i];
        pe[ax] = pa->ints[i + na];
    }
}

void ft_pad_value(double v, ft_dtype dt, unsigned char *buf)
{
    double lo = 0, hi = 0;
    switch (dt) {
    case FT_F16: case FT_BF16: case FT_F32: case FT_F64: case FT_BOOL:
        ft_store_f64(buf, dt, 0, v);
        return;
    case FT_I64: {
        int64_t x = isnan(v) ? 0 : v >= 9223372036854775808.0 ? INT64_MAX : v < -9223372036854775808.0 ? INT64_MIN
                                                                                                     : (int64_t)v;
        ft_store_i64(buf, dt, 0, x);
        return;
    }
    case FT_I8: lo = -128.0, hi = 127.0; break;
    case FT_I16: lo = -32768.0, hi = 32767.0; break;
    case FT_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case FT_U8: lo = 0.0, hi = 255.0; break;
    case FT_DTYPE_COUNT: return;
    }
    double x = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
    ft_store_i64(buf, dt, 0, (int64_t)x);
}
