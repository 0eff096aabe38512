/* NumPy-style printing of arrays (show.h). */
#include "show.h"
#include "../io/npz.h"
#include "../pipeline/arrays.h"
#include "../graph/elem.h"
#include "../graph/str.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define LINE_WIDTH 75

typedef struct {
    FILE *f;
    ft_dtype dt;
    const ft_shape *s;
    const void *data;
    int summarise, width, prec;
    int sci;        /* floats in scientific notation (NumPy's choice for the whole array) */
    int digits;     /* sci: mantissa digits after the point, the same for every value (-1 while measuring) */
    int expw;       /* sci: digits of every exponent (at least 2) */
    int intw, fracw; /* fixed: widths before and after the point, to align the points */
    int col;     /* column of the cursor on the current line */
    int pending; /* spaces that pad the last value: written unless the line wraps */
} printer;

static int is_float(ft_dtype dt)
{
    return dt == FT_F16 || dt == FT_BF16 || dt == FT_F32 || dt == FT_F64 || ft_dtype_in(dt, FT_DT_LOWF);
}

static double value(ft_dtype dt, const void *data, int64_t i)
{
    return ft_load_f64(data, dt, (size_t)i);
}

static int same_in_dtype(ft_dtype dt, double x, double v)
{
    switch (dt) {
    case FT_F16: return ft_f16_to_f32(ft_f32_to_f16((float)x)) == (float)v;
    case FT_BF16: return ft_bf16_to_f32(ft_f32_to_bf16((float)x)) == (float)v;
    case FT_F32: return (float)x == (float)v;
    case FT_F64: case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: case FT_STRING: case FT_DTYPE_COUNT: break;
    FT_CASE_LOWP: break; /* every value is exact in f32: printed as one */
    }
    return x == v;
}

/* The shortest significant digits that give v (finite) back in its dtype, as
 * NumPy's unique repr finds them: into dig (no sign, no point) with e, the
 * decimal exponent of the first digit. Returns the number of digits. */
static int shortest(ft_dtype dt, double v, char *dig, int *e)
{
    char t[64];
    double a = fabs(v);
    for (int k = 0; k <= 17; k++) {
        snprintf(t, sizeof t, "%.*e", k, a);
        if (same_in_dtype(dt, v < 0 ? -strtod(t, NULL) : strtod(t, NULL), v))
            break;
        /* at a power of two the gap below is half the gap above: the k-digit
         * string one up from the rounded one may be the shortest that gives
         * v back (a float16 0.015625 is "1.563e-02"), as NumPy finds it */
        char u[64], m[24];
        int x, len = 0;
        for (const char *q = t; *q && *q != 'e'; q++)
            if (*q >= '0' && *q <= '9')
                m[len++] = *q;
        m[len] = 0;
        x = atoi(strchr(t, 'e') + 1);
        int i = len - 1;
        while (i >= 0 && m[i] == '9')
            m[i--] = '0';
        if (i < 0)
            continue; /* 9.99 up is 10.0: a shorter string, tried before */
        m[i]++;
        snprintf(u, sizeof u, "%c.%se%d", m[0], m + 1, x);
        if (same_in_dtype(dt, v < 0 ? -strtod(u, NULL) : strtod(u, NULL), v)) {
            snprintf(t, sizeof t, "%s", u);
            break;
        }
    }
    int n = 0;
    const char *q = t;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            dig[n++] = *q;
    dig[n] = 0;
    *e = *q == 'e' ? atoi(q + 1) : 0;
    while (n > 1 && dig[n - 1] == '0') /* "1.000e+02": one digit */
        dig[--n] = 0;
    return n;
}

/* v in positional notation, as NumPy's dragon4_positional(unique=True,
 * precision=prec, trim='.'): the shortest digits, or, when they need more
 * than prec digits after the point, the value rounded to prec digits with
 * the trailing zeros dropped ("0.3", "2.", "65500."). prec < 0: no limit,
 * and at least one digit after the point (a scalar: "2.0"). */
static int positional(ft_dtype dt, double v, int prec, char *buf, size_t n)
{
    char dig[40];
    int e, nd = shortest(dt, v, dig, &e);
    int frac = nd - 1 - e > 0 ? nd - 1 - e : 0;
    if (prec >= 0 && v == floor(v) && fabs(v) < 1e17) /* in an array a whole value's digits are exact: "60192." */
        return snprintf(buf, n, "%.0f.", v);
    if (prec >= 0 && frac > prec) {
        int len = snprintf(buf, n, "%.*f", prec, v);
        while (len > 0 && buf[len - 1] == '0')
            buf[--len] = 0;
        return len;
    }
    size_t len = (size_t)snprintf(buf, n, "%s", signbit(v) ? "-" : "");
    if (e >= 0) {
        for (int i = 0; i <= e && len < n - 1; i++)
            buf[len++] = i < nd ? dig[i] : '0';
        buf[len++] = '.';
        for (int i = e + 1; i < nd && len < n - 1; i++)
            buf[len++] = dig[i];
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int i = 0; i < -e - 1 && len < n - 1; i++)
            buf[len++] = '0';
        for (int i = 0; i < nd && len < n - 1; i++)
            buf[len++] = dig[i];
    }
    if (prec < 0 && buf[len - 1] == '.')
        buf[len++] = '0';
    buf[len] = 0;
    return (int)len;
}

/* v in scientific notation, as NumPy's dragon4_scientific: the shortest
 * mantissa digits (at most prec after the point, rounded and trimmed
 * otherwise), or, with min_digits (the digits the array's longest mantissa
 * needs), that many digits of the exact value ("8.3388013e+02" for a float32
 * whose shortest form is 8.338801e+02), the point kept ("1.e-05") unless
 * bare (a scalar: "1e-05"), the exponent with at least expw digits. */
static int scientific(ft_dtype dt, double v, int prec, int min_digits, int expw, int bare, char *buf, size_t n)
{
    char dig[40];
    int e, nd = shortest(dt, v, dig, &e);
    if ((prec >= 0 && nd - 1 > prec) || nd - 1 < min_digits) {
        char t[64];
        snprintf(t, sizeof t, "%.*e", nd - 1 < min_digits ? min_digits : prec, fabs(v));
        nd = 0;
        const char *q = t;
        for (; *q && *q != 'e'; q++)
            if (*q >= '0' && *q <= '9')
                dig[nd++] = *q;
        e = atoi(q + 1);
        while (min_digits <= 0 && nd > 1 && dig[nd - 1] == '0')
            nd--;
        dig[nd] = 0;
    }
    size_t len = (size_t)snprintf(buf, n, "%s%c", signbit(v) ? "-" : "", dig[0]);
    if (!bare || nd > 1 || min_digits > 0)
        buf[len++] = '.';
    for (int i = 1; i < nd || i <= min_digits; i++)
        buf[len++] = i < nd ? dig[i] : '0';
    snprintf(buf + len, n - len, "e%c%0*d", e < 0 ? '-' : '+', expw, e < 0 ? -e : e);
    return (int)strlen(buf);
}

/* One value as NumPy's str() writes it: "1.5", "2." (a whole float), "nan",
 * "-inf", "True", "7". */
static int fmt_value(const printer *p, int64_t i, char *buf, size_t n)
{
    if (p->dt == FT_BOOL)
        return snprintf(buf, n, "%s", value(p->dt, p->data, i) != 0 ? "True" : "False");
    if (p->dt == FT_I64)
        return snprintf(buf, n, "%lld", (long long)((const int64_t *)p->data)[i]);
    if (p->dt == FT_U64)
        return snprintf(buf, n, "%llu", (unsigned long long)((const uint64_t *)p->data)[i]);
    if (p->dt == FT_STRING) { /* quoted, as NumPy's str() of a unicode array; long ones cut */
        const ft_str *e = ((const ft_str *const *)p->data)[i];
        int w = snprintf(buf, n, "'%.*s'", (int)(ft_str_len(e) < 40 ? ft_str_len(e) : 40), ft_str_bytes(e));
        if (ft_str_len(e) > 40 && w > 0 && (size_t)w + 4 < n)
            w += snprintf(buf + w - 1, n - (size_t)w + 1, "...'") - 1;
        return w;
    }
    double v = value(p->dt, p->data, i);
    if (!is_float(p->dt))
        return snprintf(buf, n, "%.0f", v);
    if (isnan(v))
        return snprintf(buf, n, "nan");
    if (isinf(v))
        return snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
    if (p->s->rank == 0) { /* a scalar, as NumPy's scalar str: positional from 1e-4 to below 1e16 */
        double a = fabs(v);
        if (a == 0 || (a >= 1e-4 && a < 1e16))
            return positional(p->dt, v, -1, buf, n);
        return scientific(p->dt, v, -1, 0, 2, 1, buf, n);
    }
    if (p->sci)
        return scientific(p->dt, v, p->prec, p->digits > 0 ? p->digits : 0, p->expw, 0, buf, n);
    return positional(p->dt, v, p->prec, buf, n);
}

/* Digits after the point of a formatted finite value ("2." 0, "0.25" 2, "1.5e+00" 1). */
static int frac_digits(const char *b)
{
    const char *dot = strchr(b, '.');
    if (!dot)
        return 0;
    int k = 0;
    while (dot[1 + k] >= '0' && dot[1 + k] <= '9')
        k++;
    return k;
}

static void put_value(printer *p, int64_t i)
{
    char buf[64];
    fmt_value(p, i, buf, sizeof buf);
    const char *dot = strchr(buf, '.');
    if (is_float(p->dt) && !p->sci && dot) { /* points aligned, fractions padded with spaces */
        int left = (int)(dot - buf), fr = (int)strlen(dot + 1);
        fprintf(p->f, "%*s%s", p->width - 1 - p->fracw - left, "", buf);
        p->pending = p->fracw - fr;
    } else {
        fprintf(p->f, "%*s", p->width, buf);
    }
    p->col += p->width;
}

/* Separator between two items of the last dimension, wrapping the line. */
static void sep(printer *p, int indent)
{
    if (p->col + 1 + p->width + 1 > LINE_WIDTH) { /* NumPy leaves no spaces at the end of a line */
        fprintf(p->f, "\n%*s", indent, "");
        p->col = indent;
    } else {
        fprintf(p->f, "%*s ", p->pending, "");
        p->col++;
    }
    p->pending = 0;
}

static void rec(printer *p, int d, int64_t off, const int64_t *stride)
{
    int rank = p->s->rank;
    int64_t n = p->s->dims[d];
    int cut = p->summarise && n > 2 * FT_SHOW_EDGE;
    fputc('[', p->f);
    p->col++;
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == FT_SHOW_EDGE) {
            if (d == rank - 1) {
                sep(p, d + 1);
                fputs("...", p->f);
                p->col += 3;
            } else {
                fputc('\n', p->f);
                for (int k = 0; k < rank - d - 2; k++)
                    fputc('\n', p->f);
                fprintf(p->f, "%*s...", d + 1, "");
                p->col = d + 4;
            }
            i = n - FT_SHOW_EDGE;
        }
        if (d == rank - 1) {
            if (i > 0)
                sep(p, d + 1);
            put_value(p, off + i * stride[d]);
        } else {
            if (i > 0) {
                fputc('\n', p->f);
                for (int k = 0; k < rank - d - 2; k++)
                    fputc('\n', p->f);
                fprintf(p->f, "%*s", d + 1, "");
                p->col = d + 1;
            }
            rec(p, d + 1, off + i * stride[d], stride);
        }
    }
    fprintf(p->f, "%*s]", p->pending, "");
    p->pending = 0;
    p->col++;
}

/* Is element i printed? (the summary keeps the ends of every dimension) */
static int shown(const printer *p, int64_t i)
{
    if (!p->summarise)
        return 1;
    for (int d = p->s->rank - 1; d >= 0; d--) {
        int64_t n = p->s->dims[d], k = i % n;
        i /= n;
        if (n > 2 * FT_SHOW_EDGE && k >= FT_SHOW_EDGE && k < n - FT_SHOW_EDGE)
            return 0;
    }
    return 1;
}

void ft_show_array(FILE *f, const char *label, ft_dtype dt, const ft_shape *s, const void *data)
{
    char sh[FT_SHAPE_STR];
    uint64_t n = ft_numel(s);
    fprintf(f, "%s: %s %s", label, ft_dtype_name(dt), ft_shape_str(s, sh));
    /* statistics over every value (NaN and infinities counted apart) */
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    uint64_t finite = 0, nans = 0, infs = 0;
    for (uint64_t i = 0; i < n && dt != FT_STRING; i++) {
        double v = value(dt, data, (int64_t)i);
        if (isnan(v)) {
            nans++;
        } else if (isinf(v)) {
            infs++;
        } else {
            finite++;
            sum += v;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    if (finite && dt == FT_I64) { /* exact beyond 2^53 */
        int64_t a = INT64_MAX, b = INT64_MIN;
        for (uint64_t i = 0; i < n; i++) {
            int64_t v = ((const int64_t *)data)[i];
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
        fprintf(f, ", min %lld, max %lld, mean %.6g", (long long)a, (long long)b, sum / (double)finite);
    } else if (finite && dt == FT_U64) {
        uint64_t a = UINT64_MAX, b = 0;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = ((const uint64_t *)data)[i];
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
        fprintf(f, ", min %llu, max %llu, mean %.6g", (unsigned long long)a, (unsigned long long)b,
                sum / (double)finite);
    } else if (finite) {
        fprintf(f, ", min %.6g, max %.6g, mean %.6g", lo, hi, sum / (double)finite);
    }
    if (nans)
        fprintf(f, ", %llu NaN", (unsigned long long)nans);
    if (infs)
        fprintf(f, ", %llu infinite", (unsigned long long)infs);
    fputc('\n', f);
    printer p = {.f = f, .dt = dt, .s = s, .data = data, .summarise = n > FT_SHOW_THRESHOLD, .width = 1, .prec = 8};
    /* NumPy writes a float array in scientific notation when its finite
     * nonzero magnitudes reach 1e8, go below 1e-4, or span more than 1e3 */
    double amin = INFINITY, amax = 0; /* over the values shown, as NumPy decides */
    for (uint64_t i = 0; i < n && is_float(dt); i++) {
        if (!shown(&p, (int64_t)i))
            continue;
        double v = fabs(value(dt, data, (int64_t)i));
        if (isfinite(v) && v != 0) {
            amin = v < amin ? v : amin;
            amax = v > amax ? v : amax;
        }
    }
    p.sci = amax > 0 && (amax >= 1e8 || amin < 1e-4 || amax / amin > 1e3);
    if (n == 0) {
        for (int d = 0; d < s->rank; d++)
            fputc('[', f);
        for (int d = 0; d < s->rank; d++)
            fputc(']', f);
        fputc('\n', f);
        return;
    }
    p.digits = -1;
    p.expw = 2;
    int other = 0, expw = 2; /* widest non-finite value or whole; widest exponent */
    for (uint64_t i = 0; i < n; i++) { /* a common width, as NumPy aligns */
        char buf[64];
        if (!shown(&p, (int64_t)i))
            continue;
        int w = fmt_value(&p, (int64_t)i, buf, sizeof buf);
        double v = value(dt, data, (int64_t)i);
        if (is_float(dt) && isfinite(v)) {
            const char *ex = strchr(buf, 'e');
            if (ex && (int)strlen(ex + 2) > expw)
                expw = (int)strlen(ex + 2);
            int fr = frac_digits(buf);
            p.fracw = fr > p.fracw ? fr : p.fracw;
            int left = (int)(strchr(buf, '.') ? strchr(buf, '.') - buf : w);
            p.intw = left > p.intw ? left : p.intw;
        } else {
            other = w > other ? w : other;
        }
    }
    if (is_float(dt) && p.sci) { /* every mantissa with the digits the longest needs, every exponent as wide */
        p.digits = p.fracw;
        p.expw = expw;
        p.intw = p.fracw = 0;
        for (uint64_t i = 0; i < n; i++) {
            char buf[64];
            if (shown(&p, (int64_t)i)) {
                int w = fmt_value(&p, (int64_t)i, buf, sizeof buf);
                other = w > other ? w : other;
            }
        }
    }
    p.width = other;
    if (is_float(dt) && !p.sci && p.intw + 1 + p.fracw > p.width)
        p.width = p.intw + 1 + p.fracw;
    if (s->rank == 0) {
        char buf[64];
        fmt_value(&p, 0, buf, sizeof buf);
        fprintf(f, "%s\n", buf);
        return;
    }
    int64_t stride[FT_MAX_RANK];
    stride[s->rank - 1] = 1;
    for (int d = s->rank - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * s->dims[d + 1];
    rec(&p, 0, 0, stride);
    fputc('\n', f);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static ft_status show_file(FILE *f, const char *path, ft_error *err);

/* Every .npy, .npz and .pb file of a folder, by name. */
static ft_status show_dir(FILE *f, const char *dir, ft_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ft_err(err, FT_EGRAPH, "%s: cannot open: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0;
    ft_status st = FT_OK;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (!ft_is_array_file_name(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) {
                st = ft_err(err, FT_ERUNTIME, "out of memory");
                break;
            }
            names = nn;
        }
        size_t pl = strlen(dir) + l + 2;
        if (!(names[n] = malloc(pl))) {
            st = ft_err(err, FT_ERUNTIME, "out of memory");
            break;
        }
        snprintf(names[n++], pl, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (!st && n == 0)
        st = ft_err(err, FT_EGRAPH, "%s: no .npy, .npz or .pb file in this folder", dir);
    if (!st)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n && !st; i++)
        st = show_file(f, names[i], err);
    ft_free_strs(names, n);
    return st;
}

static ft_status show_file(FILE *f, const char *path, ft_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return ft_err(err, FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return show_dir(f, path, err);
    /* an archive: each member by name; anything else: the one array */
    unsigned char head[4] = {0};
    FILE *in = fopen(path, "rb");
    size_t got = in ? fread(head, 1, sizeof head, in) : 0;
    if (in)
        fclose(in);
    ft_npz z = {0};
    int members = ft_npz_is_npz(head, got);
    if (members && ft_npz_open(path, &z, err))
        return err->code;
    ft_status st = FT_OK;
    for (int i = 0; i < (members ? z.n : 1) && !st; i++) {
        ft_npy a;
        char label[1200];
        if (members)
            snprintf(label, sizeof label, "%s (member %s.npy)", path, z.e[i].name);
        else
            snprintf(label, sizeof label, "%s", path);
        if (!(st = ft_array_read(path, members ? z.e[i].name : NULL, &a, err))) {
            ft_show_array(f, label, a.dtype, &a.shape, a.data);
            ft_npy_clear(&a);
        }
    }
    if (members)
        ft_npz_close(&z);
    return st;
}

ft_status ft_show_files(FILE *f, const char *const *paths, int n, ft_error *err)
{
    for (int i = 0; i < n; i++) {
        ft_status st = show_file(f, paths[i], err);
        if (st)
            return st;
    }
    return FT_OK;
}
