/* ONNX's text ops onto ftrun's string ops (graph/infer_text.c): StringNormalizer
 * (its stopwords become a 1-D string constant, input 1; the locale attribute
 * is not read: case rules are ASCII), StringConcat, RegexFullMatch and StringSplit.
 *
 *   const onx_op_map *m = onx_find_map("StringConcat", 20);
 *   if (m) st = m->map(c, n);
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_ops.h"
#include "onnx_internal.h"
#include "onnx.pb-c.h"
#include "../graph/str.h"

int ox_const_strings(onx_ctx *c, const onx_node *n, const char *suffix, const Onnx__AttributeProto *a)
{
    const ft_shape s = {.rank = 1, .dims = {(int64_t)a->n_strings}};
    const ft_str **v = ft_calloc(a->n_strings ? a->n_strings : 1, sizeof *v);
    if (!v)
        return onx_const_new(c, n, suffix, FT_STRING, &s, NULL); /* reports the lack of memory */
    for (size_t i = 0; i < a->n_strings; i++)
        if (!ft_utf8_valid((const char *)a->strings[i].data, a->strings[i].len) ||
            ft_str_make((const char *)a->strings[i].data, a->strings[i].len, &v[i])) {
            free(v);
            return -2;
        }
    int t = onx_const_new(c, n, suffix, FT_STRING, &s, v);
    free(v);
    return t;
}

ft_status ox_map_string_normalizer(onx_ctx *c, const onx_node *n)
{
    const char *cs = onx_attr_s(c, n, "case_change_action", "NONE");
    if (strcmp(cs, "NONE") && strcmp(cs, "LOWER") && strcmp(cs, "UPPER"))
        return onx_error(c, n, FT_EGRAPH, "case_change_action is '%s' (expected NONE, LOWER or UPPER)", cs);
    int in[2] = {onx_in(c, n, 0), -1}, n_in = 1, out = ox_out(c, n, 0);
    const Onnx__AttributeProto *sw = onx_attr(n, "stopwords");
    if (sw && sw->n_strings) {
        in[1] = ox_const_strings(c, n, "stopwords", sw);
        if (in[1] == -2)
            return onx_error(c, n, FT_EGRAPH, "a stopword is not valid UTF-8");
        n_in = 2;
    }
    OX_NEED(out >= 0 && (n_in == 1 || in[1] >= 0));
    ft_node *f = onx_emit(c, n, FT_OP_STRING_NORMALIZER, in, n_in, &out, 1);
    OX_NEED(f);
    OX_TRY(onx_set_s(c, f, "case", cs));
    return onx_set_i(c, f, "case_sensitive", onx_attr_i(n, "is_case_sensitive", 0) != 0);
}

ft_status ox_map_string_concat(onx_ctx *c, const onx_node *n)
{
    OX_NEED(ox_emit2(c, n, FT_OP_STRING_CONCAT, onx_in(c, n, 0), onx_in(c, n, 1), ox_out(c, n, 0)));
    return FT_OK;
}

ft_status ox_map_regex_full_match(onx_ctx *c, const onx_node *n)
{
    ft_node *f = ox_emit1(c, n, FT_OP_REGEX_FULL_MATCH, onx_in(c, n, 0), ox_out(c, n, 0));
    OX_NEED(f);
    return onx_set_s(c, f, "pattern", onx_attr_s(c, n, "pattern", ""));
}

/* StringSplit (opset 20): string_split; an empty delimiter splits at blanks,
 * as an absent one does. */
ft_status ox_map_string_split(onx_ctx *c, const onx_node *n)
{
    int in = onx_in(c, n, 0), out[2] = {ox_out(c, n, 0), ox_out(c, n, 1)};
    OX_NEED(out[0] >= 0 && out[1] >= 0);
    ft_node *f = onx_emit(c, n, FT_OP_STRING_SPLIT, &in, 1, out, 2);
    OX_NEED(f);
    const char *d = onx_attr_s(c, n, "delimiter", "");
    if (d[0])
        OX_TRY(onx_set_s(c, f, "delimiter", d));
    if (onx_has_attr(n, "maxsplit"))
        OX_TRY(onx_set_i(c, f, "maxsplit", onx_attr_i(n, "maxsplit", -1)));
    return FT_OK;
}
