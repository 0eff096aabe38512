/* Kernels of the string ops on host memory (ONNX's StringNormalizer,
 * StringConcat, RegexFullMatch and StringSplit, as onnx/defs/text/defs.cc in the ONNX
 * sources defines them), reached through ft_dd_run (datadep.h). Results are
 * interned strings (graph/str.h); nothing is kept between calls. Case
 * changes and case-insensitive comparison use ASCII (C locale) rules;
 * patterns are POSIX extended regular expressions (<regex.h>), with RE2's
 * \d \s \w classes and escaped punctuation inside brackets rewritten. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "datadep.h"
#include "../graph/graph.h"
#include "../graph/str.h"

static ft_status oom(ft_kctx *k, const ft_node *n)
{
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory building strings");
}

static char ascii_case(char ch, int upper)
{
    if (upper && ch >= 'a' && ch <= 'z')
        return (char)(ch - 'a' + 'A');
    if (!upper && ch >= 'A' && ch <= 'Z')
        return (char)(ch - 'A' + 'a');
    return ch;
}

static int same_nocase(const ft_str *a, const ft_str *b)
{
    size_t n = ft_str_len(a);
    if (n != ft_str_len(b))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_case(ft_str_bytes(a)[i], 0) != ascii_case(ft_str_bytes(b)[i], 0))
            return 0;
    return 1;
}

/* The elements that are no stopword, case changed; one empty string when
 * none stays (the last dim of the output set to the count). */
ft_status ft_text_normalizer(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const char *cs = ft_attr(n, "case")->s;
    const int change = strcmp(cs, "NONE") != 0, upper = !strcmp(cs, "UPPER");
    const int sensitive = ft_attr(n, "case_sensitive")->i != 0;
    const ft_str *const *x = in[0].data, *const *stop = n->n_in > 1 ? in[1].data : NULL;
    const int64_t cnt = (int64_t)ft_numel(&in[0].shape), nstop = n->n_in > 1 ? (int64_t)ft_numel(&in[1].shape) : 0;
    const ft_str **y = out[0].data;
    int64_t m = 0;
    char *buf = NULL;
    size_t cap = 0;
    for (int64_t i = 0; i < cnt; i++) {
        int drop = 0;
        for (int64_t j = 0; j < nstop && !drop; j++)
            drop = sensitive ? x[i] == stop[j] : same_nocase(x[i], stop[j]);
        if (drop)
            continue;
        const size_t len = ft_str_len(x[i]);
        if (!change) {
            y[m++] = x[i];
            continue;
        }
        if (len > cap) {
            char *nb = realloc(buf, len);
            if (!nb) {
                free(buf);
                return oom(k, n);
            }
            buf = nb, cap = len;
        }
        for (size_t b = 0; b < len; b++)
            buf[b] = ascii_case(ft_str_bytes(x[i])[b], upper);
        if (ft_str_make(buf, len, &y[m])) {
            free(buf);
            return oom(k, n);
        }
        m++;
    }
    free(buf);
    if (m == 0)
        y[m++] = NULL;
    out[0].shape.dims[out[0].shape.rank - 1] = m;
    return FT_OK;
}

/* The offset in a (shape s) of output element i (shape o), NumPy broadcasting. */
static uint64_t bcast_at(const ft_shape *o, const ft_shape *s, uint64_t i)
{
    uint64_t off = 0, stride = 1;
    for (int d = o->rank - 1, e = s->rank - 1; d >= 0; d--, e--) {
        const uint64_t id = i % (uint64_t)o->dims[d];
        i /= (uint64_t)o->dims[d];
        if (e < 0)
            continue;
        if (s->dims[e] != 1)
            off += id * stride;
        stride *= (uint64_t)s->dims[e];
    }
    return off;
}

ft_status ft_text_concat(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_str *const *a = in[0].data, *const *b = in[1].data;
    const ft_str **y = out[0].data;
    const uint64_t cnt = ft_numel(&out[0].shape);
    char *buf = NULL;
    size_t cap = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        const ft_str *p = a[bcast_at(&out[0].shape, &in[0].shape, i)], *q = b[bcast_at(&out[0].shape, &in[1].shape, i)];
        const size_t lp = ft_str_len(p), lq = ft_str_len(q);
        if (lp + lq > cap) {
            char *nb = realloc(buf, lp + lq);
            if (!nb) {
                free(buf);
                return oom(k, n);
            }
            buf = nb, cap = lp + lq;
        }
        memcpy(buf, ft_str_bytes(p), lp);
        memcpy(buf + lp, ft_str_bytes(q), lq);
        if (ft_str_make(buf, lp + lq, &y[i])) {
            free(buf);
            return oom(k, n);
        }
    }
    free(buf);
    return FT_OK;
}

ft_status ft_text_full_match(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const char *p = ft_attr(n, "pattern")->s;
    char *pat = malloc(strlen(p) * 12 + 8);
    if (!pat)
        return oom(k, n);
    ft_regex_posix(p, pat);
    regex_t re;
    int rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char msg[128];
        regerror(rc, &re, msg, sizeof msg);
        free(pat);
        return ft_node_err(k->err, FT_EGRAPH, k->g, n, "pattern '%s' is not a POSIX extended regular expression (%s)",
                           p, msg);
    }
    free(pat);
    const ft_str *const *x = in[0].data;
    uint8_t *y = out[0].data;
    const uint64_t cnt = ft_numel(&out[0].shape);
    for (uint64_t i = 0; i < cnt; i++) {
        /* a string holding a NUL byte never matches: the pattern sees C strings */
        y[i] = strlen(ft_str_bytes(x[i])) == ft_str_len(x[i]) && regexec(&re, ft_str_bytes(x[i]), 0, NULL, 0) == 0;
    }
    regfree(&re);
    return FT_OK;
}

/* Each element split (ft_str_split) into a row of the most pieces any gives,
 * padded with empty strings; the counts into out[1]. */
ft_status ft_text_split(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_attr_val *dl = ft_attr(n, "delimiter"), *ms = ft_attr(n, "maxsplit");
    const ft_str *sep = NULL;
    if (dl->present && dl->s[0] && ft_str_make(dl->s, strlen(dl->s), &sep))
        return oom(k, n);
    const int64_t maxsplit = ms->present ? ms->i : -1, cnt = (int64_t)ft_numel(&in[0].shape);
    const ft_str *const *x = in[0].data;
    int64_t *len = out[1].data, most = 0;
    const int r = out[0].shape.rank - 1;
    for (int64_t i = 0; i < cnt; i++) {
        len[i] = ft_str_split(x[i], sep, maxsplit, NULL);
        most = len[i] > most ? len[i] : most;
    }
    if (most > out[0].shape.dims[r])
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "internal error: %lld pieces, past the bound %lld",
                           (long long)most, (long long)out[0].shape.dims[r]);
    const ft_str **y = out[0].data;
    memset(y, 0, (size_t)(cnt * most) * sizeof *y);
    for (int64_t i = 0; i < cnt; i++)
        if (ft_str_split(x[i], sep, maxsplit, y + i * most) < 0)
            return oom(k, n);
    out[0].shape.dims[r] = most;
    return FT_OK;
}
