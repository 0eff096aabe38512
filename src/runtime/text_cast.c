/* Cast to and from strings on host memory (ONNX's Cast with to=STRING or a
 * string input, onnx/defs/tensor/defs.cc in the ONNX sources), run by the
 * CPU's cast kernel (cpu/unary.c). Numbers become the text NumPy's str()
 * gives them, as ONNX's reference (onnx/reference/ops/op_cast.py) casts with
 * astype(str): a float as the fewest digits that read back to the same value
 * in its own dtype, positional for 1e-4 <= |x| < 1e16 ("0.5", "100.0"),
 * scientific otherwise ("1e-05", "1.5e+16"), and "nan", "inf", "-inf";
 * integers in decimal; bools as "True" and "False". Strings become numbers
 * by C-locale strtod/strtof (plain and scientific forms, "NaN", "INF",
 * "+INF", "-inf", "Infinity" in any case; surrounding blanks ignored; hex
 * forms refused), integers truncated toward zero ("100.5" gives 100), bools
 * nonzero or "True"/"False" in any case; a string that is no number is an error naming the element. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "datadep.h"
#include "../graph/dtype_load.h"
#include "../graph/elem.h"
#include "../graph/graph.h"
#include "../graph/str.h"

/* Whether the text t reads back as v in dtype dt (a float dtype). */
static int reads_back(const char *t, ft_dtype dt, double v)
{
    if (dt == FT_F64)
        return strtod(t, NULL) == v;
    if (dt == FT_F16)
        return ft_f32_to_f16(strtof(t, NULL)) == ft_f32_to_f16((float)v);
    if (dt == FT_BF16)
        return ft_f32_to_bf16(strtof(t, NULL)) == ft_f32_to_bf16((float)v);
    return strtof(t, NULL) == (float)v;
}

/* v (finite, nonzero or zero) of float dtype dt as NumPy's str() writes it,
 * into out (at least 48 bytes). */
static void format_float(double v, ft_dtype dt, char *out)
{
    if (isnan(v)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(v)) {
        strcpy(out, v < 0 ? "-inf" : "inf");
        return;
    }
    char e[40];
    const int maxp = dt == FT_F64 ? 17 : 9;
    int p = 1;
    for (; p < maxp; p++) { /* the fewest significant digits that read back */
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (reads_back(e, dt, v))
            break;
    }
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    /* e: [-]d[.ddd]e(+|-)XX: the digits and the decimal exponent */
    const int neg = e[0] == '-';
    char dig[24];
    int nd = 0;
    const char *q = e + neg;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            dig[nd++] = *q;
    const int x = atoi(q + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    char *o = out;
    if (neg)
        *o++ = '-';
    const double a = fabs(v);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        if (x >= 0) {
            for (int i = 0; i <= x; i++)
                *o++ = i < nd ? dig[i] : '0';
            *o++ = '.';
            if (nd > x + 1)
                for (int i = x + 1; i < nd; i++)
                    *o++ = dig[i];
            else
                *o++ = '0';
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -x - 1; i++)
                *o++ = '0';
            for (int i = 0; i < nd; i++)
                *o++ = dig[i];
        }
        *o = 0;
        return;
    }
    *o++ = dig[0];
    if (nd > 1) {
        *o++ = '.';
        for (int i = 1; i < nd; i++)
            *o++ = dig[i];
    }
    sprintf(o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
}

/* The text of element i of x (dtype dt, a number or bool) into out. */
static void format_elem(const void *x, ft_dtype dt, int64_t i, char *out)
{
    if (dt == FT_BOOL)
        strcpy(out, ((const uint8_t *)x)[i] ? "True" : "False");
    else if (ft_dtype_is_float(dt))
        format_float(ft_ld_f64(x, dt, i), dt, out);
    else if (dt == FT_U64)
        snprintf(out, 48, "%llu", (unsigned long long)((const uint64_t *)x)[i]);
    else
        snprintf(out, 48, "%lld", (long long)ft_ld_int(x, dt, i));
}

/* s (bytes b, length len) as element i of y (dtype dt); 0, or -1 when it is
 * no number of that kind. */
static int parse_elem(const char *b, size_t len, void *y, ft_dtype dt, int64_t i)
{
    char t[128];
    while (len && isspace((unsigned char)*b))
        b++, len--;
    while (len && isspace((unsigned char)b[len - 1]))
        len--;
    if (len == 0 || len >= sizeof t || memchr(b, 0, len))
        return -1;
    memcpy(t, b, len);
    t[len] = 0;
    const char *d = t + (t[0] == '+' || t[0] == '-');
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) /* strtod's hex floats: not ONNX's forms */
        return -1;
    char *end;
    errno = 0;
    if (dt == FT_BOOL && (!strcasecmp(t, "true") || !strcasecmp(t, "false"))) { /* what bools become */
        ((uint8_t *)y)[i] = !strcasecmp(t, "true");
        return 0;
    }
    if (!ft_dtype_is_float(dt)) { /* an integer, or a decimal number truncated toward zero */
        if (dt == FT_U64 && t[0] != '-') {
            unsigned long long u = strtoull(t, &end, 10);
            if (!*end && errno == 0) {
                ((uint64_t *)y)[i] = u;
                return 0;
            }
        } else {
            long long v = strtoll(t, &end, 10);
            if (!*end && errno == 0) {
                ft_store_i64(y, dt, (size_t)i, v);
                return 0;
            }
        }
        errno = 0;
        double f = strtod(t, &end);
        if (*end || !isfinite(f))
            return -1;
        ft_store_f64(y, dt, (size_t)i, trunc(f));
        return 0;
    }
    if (dt == FT_F32) {
        float f = strtof(t, &end);
        if (*end)
            return -1;
        ((float *)y)[i] = f;
        return 0;
    }
    double f = strtod(t, &end);
    if (*end)
        return -1;
    if (dt == FT_F16 || dt == FT_BF16) /* through f32, as ft_store_f64 rounds */
        f = strtof(t, NULL);
    ft_store_f64(y, dt, (size_t)i, f);
    return 0;
}

ft_status ft_text_cast(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_dtype src = in[0].dtype, dst = out[0].dtype;
    const int64_t cnt = (int64_t)ft_numel(&in[0].shape);
    if (src == FT_STRING && dst == FT_STRING) {
        memcpy(out[0].data, in[0].data, (size_t)cnt * sizeof(const ft_str *));
        return FT_OK;
    }
    if (dst == FT_STRING) {
        const ft_str **y = out[0].data;
        char buf[48];
        for (int64_t i = 0; i < cnt; i++) {
            format_elem(in[0].data, src, i, buf);
            if (ft_str_make(buf, strlen(buf), &y[i]))
                return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory building strings");
        }
        return FT_OK;
    }
    const ft_str *const *x = in[0].data;
    for (int64_t i = 0; i < cnt; i++)
        if (parse_elem(ft_str_bytes(x[i]), ft_str_len(x[i]), out[0].data, dst, i))
            return ft_node_err(k->err, FT_EGRAPH, k->g, n, "element %lld of input '%s' is \"%.*s\": not a number a "
                               "cast to %s reads (plain or scientific notation, NaN, INF, +INF, -INF)", (long long)i,
                               k->g->tensors[n->in[0]].name, (int)(ft_str_len(x[i]) > 40 ? 40 : ft_str_len(x[i])),
                               ft_str_bytes(x[i]), ft_dtype_name(dst));
    return FT_OK;
}
