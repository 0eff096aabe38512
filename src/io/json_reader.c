/* JSON graph reader: cJSON document -> ft_graph (tensor declarations and
 * value sources in json_tensors.c, see json_reader.h). Every message names
 * the file and the tensor or node; syntax errors carry line:column. The
 * header of a binary graph goes through the same reader (ft_graph_parse_doc
 * with a blob set), which is where "blob" is allowed. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "npy.h"

#define MAX_NODES 1000000
#define MAX_TENSORS 4000000

ft_status jr_oom(reader *r) { return ft_err(r->err, FT_ERUNTIME, "%s: out of memory while loading the graph", r->g->file); }

/* cJSON gives NULL both for bad input and for a failed allocation: its
 * allocations are counted here so that the two can be told apart. */
static unsigned long json_oom;
static void *json_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        __atomic_add_fetch(&json_oom, 1, __ATOMIC_RELAXED);
    return p;
}

unsigned long ft_json_oom(void)
{
    cJSON_InitHooks(&(cJSON_Hooks){json_malloc, free});
    return __atomic_load_n(&json_oom, __ATOMIC_RELAXED);
}

ft_status jr_terr(reader *r, const char *tname, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_err(r->err, FT_EGRAPH, "%s: tensor '%s': %s", r->g->file, tname, msg);
}

ft_status jr_gerr(reader *r, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_err(r->err, FT_EGRAPH, "%s: %s", r->g->file, msg);
}

const char *jr_jtype(const cJSON *j)
{
    if (!j) return "nothing";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "an invalid value";
}

/* Reject keys outside `allowed` with a close-match suggestion. */
ft_status jr_check_keys(reader *r, const cJSON *obj, const char *const *allowed, int n, const char *what)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(it->string, allowed[i]) == 0;
        if (!ok) {
            char sug[256];
            ft_suggest(it->string, allowed, n, sug, sizeof sug);
            char list[512] = "";
            size_t len = 0;
            for (int i = 0; i < n; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", allowed[i]);
            return jr_gerr(r, "%s: unknown key '%s'%s%s (allowed: %s)", what, it->string, *sug ? "; " : "", sug, list);
        }
    }
    return FT_OK;
}

int jr_add_tensor(reader *r, const char *name)
{
    ft_graph *g = r->g;
    if (g->n_tensors >= MAX_TENSORS)
        return -2;
    if (strlen(name) > FT_MAX_NAME)
        return -3;
    if (ft_grow(&g->tensors, &g->cap_tensors, g->n_tensors, sizeof *g->tensors, 64))
        return -1;
    ft_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = ft_strdup(name);
    t->producer = -1;
    if (!t->name || ft_strmap_put(g->tmap, name, g->n_tensors)) {
        free(t->name); /* not counted in n_tensors: ft_graph_free would miss it */
        t->name = NULL;
        return -1;
    }
    return g->n_tensors++;
}

ft_status jr_add_tensor_err(reader *r, int code, const char *name)
{
    if (code == -2)
        return jr_gerr(r, "more than %d tensors (the limit)", MAX_TENSORS);
    if (code == -3)
        return jr_gerr(r, "a tensor name of %zu bytes ('%.40s...') exceeds the limit of %d bytes", strlen(name), name, FT_MAX_NAME);
    return jr_oom(r);
}

/* A JSON number or one of "nan", "inf", "+inf", "-inf". */
int jr_json_double(const cJSON *j, double *v)
{
    if (cJSON_IsNumber(j)) {
        *v = j->valuedouble;
        return 0;
    }
    if (cJSON_IsString(j)) {
        const char *s = j->valuestring;
        if (!strcmp(s, "nan") || !strcmp(s, "NaN")) { *v = NAN; return 0; }
        if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "Infinity")) { *v = INFINITY; return 0; }
        if (!strcmp(s, "-inf") || !strcmp(s, "-Infinity")) { *v = -INFINITY; return 0; }
    }
    return -1;
}

int jr_json_int(const cJSON *j, int64_t *v)
{
    if (cJSON_IsBool(j)) {
        *v = cJSON_IsTrue(j);
        return 0;
    }
    if (!cJSON_IsNumber(j))
        return -1;
    double d = j->valuedouble;
    if (d != floor(d) || d < -9223372036854775808.0 || d > 9223372036854775808.0)
        return -1;
    /* 9223372036854775807 (INT64_MAX, ONNX's "to the end") parses to the double 2^63 */
    *v = d == 9223372036854775808.0 ? INT64_MAX : (int64_t)d;
    return 0;
}

/* ---- shapes and dtypes ---- */

/* ---- nodes ---- */

static ft_status parse_attr(reader *r, ft_node *n, const ft_attr_def *d, ft_attr_val *v, const cJSON *j)
{
    const char *ty = "";
    v->given = v->present = 1;
    switch (d->type) {
    case FT_ATTR_INT:
        if (jr_json_int(j, &v->i) == 0)
            return FT_OK;
        ty = "an integer";
        break;
    case FT_ATTR_FLOAT:
        if (jr_json_double(j, &v->f) == 0)
            return FT_OK;
        ty = "a number";
        break;
    case FT_ATTR_STRING:
        if (cJSON_IsString(j)) {
            free(v->s);
            v->s = ft_strdup(j->valuestring);
            return v->s ? FT_OK : jr_oom(r);
        }
        ty = "a string";
        break;
    case FT_ATTR_INTS:
    case FT_ATTR_FLOATS: {
        int isf = d->type == FT_ATTR_FLOATS;
        ty = isf ? "an array of numbers" : "an array of integers";
        if (!cJSON_IsArray(j))
            break;
        int cnt = cJSON_GetArraySize(j), i = 0;
        if (cnt > 4096)
            return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s' has %d values (limit 4096)", d->name, cnt);
        v->n = cnt;
        if (isf)
            v->floats = ft_calloc((size_t)cnt, sizeof(double));
        else
            v->ints = ft_calloc((size_t)cnt, sizeof(int64_t));
        if (isf ? !v->floats : !v->ints)
            return jr_oom(r);
        const cJSON *it;
        cJSON_ArrayForEach(it, j)
        {
            if (isf ? jr_json_double(it, &v->floats[i]) : (cJSON_IsBool(it) || jr_json_int(it, &v->ints[i])))
                return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s'[%d] must be %s, got %s", d->name, i,
                                   isf ? "a number" : "an integer", jr_jtype(it));
            i++;
        }
        return FT_OK;
    }
    }
    return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s' must be %s, got %s", d->name, ty, jr_jtype(j));
}

static ft_status parse_attrs(reader *r, ft_node *n, const cJSON *ja)
{
    const ft_op_info *oi = ft_op_get(n->op);
    if (ft_node_default_attrs(n))
        return jr_oom(r);
    if (ja && !cJSON_IsObject(ja))
        return ft_node_err(r->err, FT_EGRAPH, r->g, n, "\"attrs\" must be an object, got %s", jr_jtype(ja));
    const cJSON *it;
    if (ja)
        cJSON_ArrayForEach(it, ja)
        {
            int k = ft_op_attr_index(n->op, it->string);
            if (k < 0) {
                const char *names[16];
                char sug[256], list[512] = "";
                size_t len = 0;
                for (int i = 0; i < oi->n_attrs && i < 16; i++) {
                    names[i] = oi->attrs[i].name;
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
                }
                ft_suggest(it->string, names, oi->n_attrs < 16 ? oi->n_attrs : 16, sug, sizeof sug);
                return ft_node_err(r->err, FT_EGRAPH, r->g, n, "unknown attribute '%s'%s%s (%s takes %s)", it->string,
                                   *sug ? "; " : "", sug, oi->name, oi->n_attrs ? list : "no attributes");
            }
            if (n->attrs[k].given)
                return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s' is given twice", it->string);
            ft_status st = parse_attr(r, n, &oi->attrs[k], &n->attrs[k], it);
            if (st)
                return st;
        }
    for (int i = 0; i < oi->n_attrs; i++)
        if (oi->attrs[i].required && !n->attrs[i].given)
            return ft_node_err(r->err, FT_EGRAPH, r->g, n, "missing required attribute '%s'", oi->attrs[i].name);
    return FT_OK;
}

/* got inputs (or outputs) against the op's range lo..hi (hi < 0: no upper
 * bound); verb and noun word the message ("takes", "input"). */
static ft_status count_err(reader *r, const ft_graph *g, const ft_node *n, int got, int lo, int hi, const char *verb,
                           const char *noun)
{
    if (got >= lo && (hi < 0 || got <= hi))
        return FT_OK;
    if (hi < 0)
        return ft_node_err(r->err, FT_EGRAPH, g, n, "%s at least %d %s%s, got %d", verb, lo, noun, lo == 1 ? "" : "s", got);
    if (lo == hi)
        return ft_node_err(r->err, FT_EGRAPH, g, n, "%s %d %s%s, got %d", verb, lo, noun, lo == 1 ? "" : "s", got);
    return ft_node_err(r->err, FT_EGRAPH, g, n, "%s %d to %d %ss, got %d", verb, lo, hi, noun, got);
}

static ft_status parse_node(reader *r, int index, const cJSON *jn)
{
    static const char *const keys[] = {"name", "op", "inputs", "outputs", "attrs", "guard"};
    ft_graph *g = r->g;
    ft_node *n = &g->nodes[index];
    n->index = index;
    if (!cJSON_IsObject(jn))
        return jr_gerr(r, "nodes[%d] must be an object, got %s", index, jr_jtype(jn));
    const cJSON *jop = cJSON_GetObjectItemCaseSensitive(jn, "op"), *jname = cJSON_GetObjectItemCaseSensitive(jn, "name");
    if (jname && (!cJSON_IsString(jname) || !*jname->valuestring))
        return jr_gerr(r, "nodes[%d]: \"name\" must be a non-empty string", index);
    if (!cJSON_IsString(jop))
        return jr_gerr(r, "nodes[%d]%s%s%s: \"op\" must be a string naming an op, got %s", index, jname ? " ('" : "",
                    jname ? jname->valuestring : "", jname ? "')" : "", jr_jtype(jop));
    if (ft_op_lookup(jop->valuestring, &n->op) != 0) {
        char sug[256];
        ft_suggest_op(jop->valuestring, sug, sizeof sug);
        return jr_gerr(r, "nodes[%d]%s%s%s: unknown op '%s'%s%s (see 'ftrun ops')", index, jname ? " ('" : "",
                    jname ? jname->valuestring : "", jname ? "')" : "", jop->valuestring, *sug ? "; " : "", sug);
    }
    const ft_op_info *oi = ft_op_get(n->op);
    char defname[64];
    snprintf(defname, sizeof defname, "%s_%d", oi->name, index);
    if (jname && strlen(jname->valuestring) > FT_MAX_NAME)
        return jr_gerr(r, "nodes[%d]: a node name of %zu bytes exceeds the limit of %d bytes", index, strlen(jname->valuestring),
                    FT_MAX_NAME);
    n->name = ft_strdup(jname ? jname->valuestring : defname);
    if (!n->name)
        return jr_oom(r);
    char what[160];
    snprintf(what, sizeof what, "node '%s' (%s)", n->name, oi->name);
    ft_status st = jr_check_keys(r, jn, keys, 6, what);
    if (st)
        return st;
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(jn, "inputs"), *jo = cJSON_GetObjectItemCaseSensitive(jn, "outputs");
    if (!cJSON_IsArray(ji))
        return ft_node_err(r->err, FT_EGRAPH, g, n, "\"inputs\" must be an array of tensor names, got %s", jr_jtype(ji));
    if (!cJSON_IsArray(jo))
        return ft_node_err(r->err, FT_EGRAPH, g, n, "\"outputs\" must be an array of tensor names, got %s", jr_jtype(jo));
    n->n_in = cJSON_GetArraySize(ji);
    n->n_out = cJSON_GetArraySize(jo);
    if ((st = count_err(r, g, n, n->n_in, oi->min_in, oi->max_in, "takes", "input")) ||
        (st = count_err(r, g, n, n->n_out, oi->min_out, oi->max_out, "produces", "output")))
        return st;
    n->in = ft_malloc((size_t)(n->n_in ? n->n_in : 1) * sizeof(int));
    n->out = ft_malloc((size_t)n->n_out * sizeof(int));
    if (!n->in || !n->out)
        return jr_oom(r);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, ji)
    {
        if (cJSON_IsNull(it) || (cJSON_IsString(it) && !*it->valuestring)) {
            if (i < oi->min_in)
                return ft_node_err(r->err, FT_EGRAPH, g, n, "input %d is required and cannot be omitted", i);
            n->in[i++] = -1;
            continue;
        }
        if (!cJSON_IsString(it))
            return ft_node_err(r->err, FT_EGRAPH, g, n, "inputs[%d] must be a tensor name (or \"\"/null), got %s", i, jr_jtype(it));
        int t = ft_graph_find(g, it->valuestring);
        if (t < 0 && (t = jr_add_tensor(r, it->valuestring)) < 0)
            return jr_add_tensor_err(r, t, it->valuestring);
        n->in[i++] = t;
    }
    i = 0;
    cJSON_ArrayForEach(it, jo)
    {
        if (!cJSON_IsString(it) || !*it->valuestring)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "outputs[%d] must be a non-empty tensor name, got %s", i, jr_jtype(it));
        int t = ft_graph_find(g, it->valuestring);
        if (t < 0 && (t = jr_add_tensor(r, it->valuestring)) < 0)
            return jr_add_tensor_err(r, t, it->valuestring);
        ft_tensor *tt = &g->tensors[t];
        if (tt->producer >= 0)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "output '%s' is already produced by node '%s'; each tensor has exactly one producer",
                               tt->name, g->nodes[tt->producer].name);
        for (int k = 0; k < i; k++)
            if (n->out[k] == t)
                return ft_node_err(r->err, FT_EGRAPH, g, n, "output '%s' is listed twice", tt->name);
        tt->producer = index;
        n->out[i++] = t;
    }
    const cJSON *jg = cJSON_GetObjectItemCaseSensitive(jn, "guard"); /* runs only when this bool is true */
    if (jg && (!cJSON_IsString(jg) || !*jg->valuestring))
        return ft_node_err(r->err, FT_EGRAPH, g, n, "\"guard\" must be the name of a bool tensor, got %s", jr_jtype(jg));
    if (jg) {
        int t = ft_graph_find(g, jg->valuestring);
        if (t < 0 && (t = jr_add_tensor(r, jg->valuestring)) < 0)
            return jr_add_tensor_err(r, t, jg->valuestring);
        n->guard = t + 1;
    }
    return parse_attrs(r, n, cJSON_GetObjectItemCaseSensitive(jn, "attrs"));
}

static ft_status parse_name_list(reader *r, const cJSON *j, const char *key, int **out, int *n_out, unsigned flag)
{
    if (!j) {
        *n_out = 0;
        return FT_OK;
    }
    if (!cJSON_IsArray(j))
        return jr_gerr(r, "\"%s\" must be an array of tensor names, got %s", key, jr_jtype(j));
    int n = cJSON_GetArraySize(j), i = 0;
    *out = ft_malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!*out)
        return jr_oom(r);
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        if (!cJSON_IsString(it))
            return jr_gerr(r, "\"%s\"[%d] must be a tensor name, got %s", key, i, jr_jtype(it));
        int t = ft_graph_find(r->g, it->valuestring);
        if (t < 0)
            return jr_gerr(r, "\"%s\" names '%s', which is neither declared under \"tensors\" nor produced by a node", key,
                        it->valuestring);
        if (r->g->tensors[t].flags & flag)
            return jr_gerr(r, "\"%s\" lists '%s' twice", key, it->valuestring);
        r->g->tensors[t].flags |= flag;
        (*out)[i++] = t;
    }
    *n_out = n;
    return FT_OK;
}

/* Depth of [ and { open at `at`, outside strings: tells a nesting-limit
 * failure from a plain syntax error. */
static int depth_at(const char *text, const char *at)
{
    int depth = 0, in_str = 0;
    for (const char *p = text; p < at && *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            depth--;
        }
    }
    return depth;
}

static void line_col(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static ft_status parse_doc(reader *r, const char *text, size_t len)
{
    ft_graph *g = r->g;
    if (strlen(text) != len)
        return jr_gerr(r, "the file contains a NUL byte at offset %zu; a JSON graph is UTF-8 text", strlen(text));
    const char *end = NULL;
    unsigned long oom0 = ft_json_oom();
    cJSON *doc = cJSON_ParseWithOpts(text, &end, 1);
    if (!doc && ft_json_oom() != oom0)
        return ft_err(r->err, FT_ERUNTIME, "%s: out of memory parsing %zu bytes of JSON", g->file, len);
    if (!doc) {
        int line, col;
        if (!end)
            end = text + len;
        line_col(text, end, &line, &col);
        char near[24] = {0};
        size_t k = 0;
        for (const char *p = end; *p && *p != '\n' && k < 16; p++)
            near[k++] = *p;
        if (depth_at(text, end) >= CJSON_NESTING_LIMIT)
            return ft_err(r->err, FT_EGRAPH, "%s:%d:%d: JSON nesting deeper than %d levels (the limit)", g->file, line,
                          col, CJSON_NESTING_LIMIT);
        if (*end == 0)
            return ft_err(r->err, FT_EGRAPH, "%s:%d:%d: JSON syntax error: unexpected end of file", g->file, line, col);
        /* cJSON stops at the start of a string or word that the end of the
         * file cuts: a truncated file, not a bad character there */
        const char *str = NULL, *p = text; /* the string open at the end of the file, if any */
        for (; *p; p++)
            if (str && *p == '\\' && p[1])
                p++;
            else if (*p == '"')
                str = str ? NULL : p;
        const char *w = end;
        while (*w && strchr("0123456789+-.eEtrufalsn", *w))
            w++;
        if ((str && str <= end) || !*w) {
            int eline, ecol, sline, scol;
            line_col(text, p, &eline, &ecol);
            line_col(text, str && str <= end ? str : end, &sline, &scol);
            return ft_err(r->err, FT_EGRAPH, "%s:%d:%d: JSON syntax error: unexpected end of file (in the %s that starts at %d:%d)",
                          g->file, eline, ecol, str && str <= end ? "string" : "value", sline, scol);
        }
        return ft_err(r->err, FT_EGRAPH, "%s:%d:%d: JSON syntax error near '%s'", g->file, line, col, near);
    }
    ft_status st = FT_OK;
    const cJSON *it;
    if (!cJSON_IsObject(doc)) {
        st = jr_gerr(r, "the top level must be a JSON object with \"ftrun\": 1, got %s", jr_jtype(doc));
        goto out;
    }
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(doc, "ftrun");
    int64_t ver;
    if (!jv) {
        st = jr_gerr(r, "missing \"ftrun\": 1 (the format version); is this an ftrun graph?");
        goto out;
    }
    if (jr_json_int(jv, &ver) || cJSON_IsBool(jv) || ver < 1) {
        st = jr_gerr(r, "\"ftrun\" must be the format version 1, got %s", jr_jtype(jv));
        goto out;
    }
    if (ver > 1) {
        st = jr_gerr(r, "format version %lld is newer than this ftrun supports (1); upgrade ftrun", (long long)ver);
        goto out;
    }
    static const char *const top[] = {"ftrun", "name", "tensors", "inputs", "outputs", "nodes"};
    cJSON_ArrayForEach(it, doc)
    {
        int known = 0;
        for (size_t i = 0; i < FT_ARRAY_LEN(top); i++)
            known |= strcmp(it->string, top[i]) == 0;
        if (!known)
            fprintf(stderr, "ftrun: warning: %s: unknown top-level key '%s' ignored\n", g->file, it->string);
    }
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(doc, "name");
    if (jname) {
        if (!cJSON_IsString(jname)) {
            st = jr_gerr(r, "\"name\" must be a string, got %s", jr_jtype(jname));
            goto out;
        }
        free(g->name);
        if (!(g->name = ft_strdup(jname->valuestring))) {
            st = jr_oom(r);
            goto out;
        }
    }
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(doc, "tensors");
    if (jt && !cJSON_IsObject(jt)) {
        st = jr_gerr(r, "\"tensors\" must be an object (tensor name -> declaration), got %s", jr_jtype(jt));
        goto out;
    }
    if (jt)
        cJSON_ArrayForEach(it, jt) if ((st = jr_parse_tensor_decl(r, it))) goto out;
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    if (!cJSON_IsArray(jn)) {
        st = jr_gerr(r, "\"nodes\" must be an array of nodes, got %s", jr_jtype(jn));
        goto out;
    }
    int nn = cJSON_GetArraySize(jn);
    if (nn > MAX_NODES) {
        st = jr_gerr(r, "%d nodes exceed the limit of %d", nn, MAX_NODES);
        goto out;
    }
    g->nodes = ft_calloc((size_t)(nn ? nn : 1), sizeof *g->nodes);
    if (!g->nodes) {
        st = jr_oom(r);
        goto out;
    }
    int idx = 0;
    cJSON_ArrayForEach(it, jn)
    {
        g->n_nodes = idx + 1; /* so ft_graph_free releases a partly parsed node */
        if ((st = parse_node(r, idx++, it)))
            goto out;
    }
    if ((st = parse_name_list(r, cJSON_GetObjectItemCaseSensitive(doc, "inputs"), "inputs", &g->inputs, &g->n_inputs, FT_TF_INPUT)))
        goto out;
    const cJSON *jout = cJSON_GetObjectItemCaseSensitive(doc, "outputs");
    if (!jout) {
        st = jr_gerr(r, "missing \"outputs\": a graph needs at least one output");
        goto out;
    }
    if ((st = parse_name_list(r, jout, "outputs", &g->outputs, &g->n_outputs, FT_TF_OUTPUT)))
        goto out;
    if (g->n_outputs == 0)
        st = jr_gerr(r, "\"outputs\" is empty: a graph needs at least one output");
    if (!st)
        st = jr_resolve_dims(r);
out:
    cJSON_Delete(doc);
    return st;
}

ft_status ft_graph_parse_doc(const char *path, const char *text, size_t len, const ft_load_opts *opts,
                             ft_blob_set *blobs, ft_graph **out, ft_error *err)
{
    *out = NULL;
    ft_graph *g = ft_calloc(1, sizeof *g);
    if (!g)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    reader r = {g, opts, err, blobs, NULL, 0, 0};
    g->file = ft_strdup(path);
    const char *slash = strrchr(path, '/');
    g->dir = slash ? ft_strdup(path) : ft_strdup(".");
    if (g->dir && slash)
        g->dir[slash - path == 0 ? 1 : slash - path] = 0;
    const char *base = slash ? slash + 1 : path;
    g->name = ft_strdup(base);
    if (g->name) {
        char *dot = strrchr(g->name, '.');
        if (dot && dot != g->name)
            *dot = 0;
    }
    g->tmap = ft_strmap_new();
    if (!g->file || !g->dir || !g->name || !g->tmap) {
        ft_graph_free(g);
        return ft_err(err, FT_ERUNTIME, "out of memory");
    }
    ft_status st = parse_doc(&r, text, len);
    free(r.p);
    if (st) {
        ft_graph_free(g);
        return st;
    }
    *out = g;
    return FT_OK;
}

ft_status ft_graph_load_json(const char *path, const char *text, size_t len, const ft_load_opts *opts, ft_graph **out,
                             ft_error *err)
{
    return ft_graph_parse_doc(path, text, len, opts, NULL, out, err);
}
