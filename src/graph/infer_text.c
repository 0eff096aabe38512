/* Inference of the string ops (ONNX's text operators, onnx/defs/text/defs.cc
 * in the ONNX sources): string_normalizer, string_concat (ft_infer_binary),
 * regex_full_match and string_split. Their kernels: runtime/text.c. */
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

/* string_split: [x's shape..., the most pieces any element gives] strings,
 * and the count of each ([x's shape] i64). The last dim comes from the
 * strings' values: those known at load, else read at every run
 * (ft_op_value_inputs); before that it is 1. */
ft_status ft_infer_string_split(ft_infer_ctx *c)
{
    const ft_shape *s = &c->in[0]->shape;
    if (s->rank >= FT_MAX_RANK)
        return ft_infer_fail(c, "input '%s' has rank %d: string_split adds a dim, and ftrun's rank is at most %d",
                             ft_infer_in_name(c, 0), s->rank, FT_MAX_RANK);
    const ft_attr_val *dl = ft_attr(c->node, "delimiter"), *ms = ft_attr(c->node, "maxsplit");
    const ft_str *sep = NULL;
    if (dl->present && dl->s[0] && ft_str_make(dl->s, strlen(dl->s), &sep))
        return ft_infer_fail(c, "out of memory");
    const int64_t maxsplit = ms->present ? ms->i : -1;
    const ft_tensor *x = &c->g->tensors[c->node->in[0]];
    int64_t most = 1;
    if ((x->flags & FT_TF_VALUE) && x->value) {
        const ft_str *const *v = x->value;
        most = 0;
        for (uint64_t i = 0; i < ft_numel(s); i++) {
            int64_t k = ft_str_split(v[i], sep, maxsplit, NULL);
            most = k > most ? k : most;
        }
    }
    ft_shape o = *s;
    o.dims[o.rank++] = most;
    ft_status st = ft_infer_set_out(c, 0, FT_STRING, &o);
    return st ? st : ft_infer_set_out(c, 1, FT_I64, s);
}
