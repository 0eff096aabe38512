/* Inference of the string ops (ONNX's text operators, onnx/defs/text/defs.cc
 * in the ONNX sources): string_normalizer, string_concat (ft_infer_binary)
 * and regex_full_match. Their kernels: runtime/text.c. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "infer_common.h"
#include "str.h"

ft_status ft_infer_string_normalizer(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    char b[FT_SHAPE_STR];
    if (s->rank != 1 && !(s->rank == 2 && s->dims[0] == 1))
        return ft_infer_fail(c, "input '%s' has shape %s: string_normalizer takes [C] or [1, C]", ft_infer_in_name(c, 0),
                             ft_shape_str(s, b));
    if (c->n_in > 1 && (c->in[1]->dtype != FT_STRING || c->in[1]->shape.rank != 1))
        return ft_infer_fail(c, "the stopwords '%s' must be a 1-D string tensor, got %s %s", ft_infer_in_name(c, 1),
                             ft_dtype_name(c->in[1]->dtype), ft_shape_str(&c->in[1]->shape, b));
    const char *cs = ft_attr(c->node, "case")->s;
    if (strcmp(cs, "NONE") && strcmp(cs, "LOWER") && strcmp(cs, "UPPER"))
        return ft_infer_fail(c, "attribute 'case' is '%s' (expected NONE, LOWER or UPPER)", cs);
    int flag;
    ft_status st = ft_infer_flag(c, "case_sensitive", &flag);
    if (st)
        return st;
    /* at most C strings stay; with none, one empty string */
    ft_shape o = *s;
    if (o.dims[o.rank - 1] == 0)
        o.dims[o.rank - 1] = 1;
    return ft_infer_set_out(c, 0, FT_STRING, &o);
}

ft_status ft_infer_regex_full_match(ft_infer_ctx *c)
{
    const char *p = ft_attr(c->node, "pattern")->s;
    char *pat = malloc(strlen(p) * 12 + 8);
    if (!pat)
        return ft_infer_fail(c, "out of memory");
    ft_regex_posix(p, pat);
    regex_t re;
    int rc = regcomp(&re, pat, REG_EXTENDED | REG_NOSUB);
    free(pat);
    if (rc) {
        char msg[128];
        regerror(rc, &re, msg, sizeof msg);
        return ft_infer_fail(c, "attribute 'pattern' '%s' is not a POSIX extended regular expression (%s); ftrun's "
                             "regex_full_match does not take RE2-only syntax", p, msg);
    }
    regfree(&re);
    return ft_infer_set_out(c, 0, FT_BOOL, &c->in[0]->shape);
}
