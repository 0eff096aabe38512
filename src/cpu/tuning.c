/* The tuning cache's table, its file format and its keys (tuning.h). */
#include "tuning.h"

#include <cjson/cJSON.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char *openblas_get_config(void);

struct ft_tuning {
    cJSON *conv; /* the "conv" array: {"key", "pick", "ms"} objects */
    int added;
};

static const char *const forms[] = {"plain", "blocked", "blocked-add", "native"};
enum { N_FORMS = 4 };
static const char *const machine_fields[] = {"cpu", "isa", "onednn", "openblas", "ftrun"};
enum { N_MACHINE = 5 };

static int is_form(const char *s)
{
    for (int i = 0; i < N_FORMS; i++)
        if (!strcmp(s, forms[i]))
            return 1;
    return 0;
}

/* This machine's header: the CPU's model name and the instruction sets the
 * kernels choose by, oneDNN's version and the ISA it uses, OpenBLAS's build,
 * ftrun's version. NULL when out of memory. */
static cJSON *machine(void)
{
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            const char *v = strchr(line, ':') + 1;
            v += *v == ' ';
            snprintf(model, sizeof model, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    if (f)
        fclose(f);
    char isa[256] = "";
    int len = 0;
#define ISA(name)                                                                                                 \
    if (__builtin_cpu_supports(name))                                                                             \
        len += snprintf(isa + len, sizeof isa - (size_t)len, "%s%s", len ? " " : "", name);
    ISA("avx") ISA("avx2") ISA("fma") ISA("avx512f") ISA("avx512bw") ISA("avx512dq") ISA("avx512vl") ISA("avx512vnni")
    ISA("avx512bf16")
#undef ISA
    const dnnl_version_t *dv = dnnl_version();
    char dnnl[160];
    snprintf(dnnl, sizeof dnnl, "%d.%d.%d (%s), isa %d", dv->major, dv->minor, dv->patch, dv->hash ? dv->hash : "?",
             (int)dnnl_get_effective_cpu_isa());
    const char *blas = openblas_get_config();
    cJSON *m = cJSON_CreateObject();
    const char *v[N_MACHINE] = {model, isa, dnnl, blas ? blas : "unknown", FT_VERSION};
    for (int i = 0; m && i < N_MACHINE; i++)
        if (!cJSON_AddStringToObject(m, machine_fields[i], v[i])) {
            cJSON_Delete(m);
            return NULL;
        }
    return m;
}

/* FT_EGRAPH naming the file and what is wrong, the parsed document freed. */
static ft_status bad(ft_error *err, cJSON *doc, const char *name, const char *what, const char *field)
{
    ft_status st = ft_err(err, FT_EGRAPH, "--tuning-cache %s: %s%s (see ftrun(1), FILES)", name, what, field ? field : "");
    cJSON_Delete(doc); /* after the message: field may be one of its names */
    return st;
}

/* The fields of an entry: "key" and "pick" strings, optional "ms" {form: number}. */
static const char *check_entry(const cJSON *e, char *field, size_t cap)
{
    if (!cJSON_IsObject(e))
        return "is not an object";
    const cJSON *k = NULL, *p = NULL;
    for (const cJSON *f = e->child; f; f = f->next) {
        snprintf(field, cap, "%s", f->string);
        if (!strcmp(f->string, "key"))
            k = f;
        else if (!strcmp(f->string, "pick"))
            p = f;
        else if (!strcmp(f->string, "ms")) {
            if (!cJSON_IsObject(f))
                return "field is not an object: ms";
            for (const cJSON *t = f->child; t; t = t->next) {
                snprintf(field, cap, "ms.%s", t->string);
                if (!is_form(t->string))
                    return "unknown form (plain, blocked, blocked-add, native): ";
                if (!cJSON_IsNumber(t))
                    return "field is not a number: ";
            }
        } else
            return "unknown field: ";
    }
    if (!cJSON_IsString(k) || !*k->valuestring)
        return k ? "field is not a non-empty string: key" : "missing field: key";
    if (!cJSON_IsString(p))
        return p ? "field is not a string: pick" : "missing field: pick";
    if (!is_form(p->valuestring)) {
        snprintf(field, cap, "'%s'", p->valuestring);
        return "pick is not plain, blocked, blocked-add or native: ";
    }
    return NULL;
}

ft_status ft_tuning_parse(const char *name, const char *text, size_t n, ft_tuning **out, char *why, size_t why_cap,
                          ft_error *err)
{
    *out = NULL;
    if (why_cap)
        why[0] = 0;
    ft_tuning *t = calloc(1, sizeof *t);
    if (!t)
        return ft_err(err, FT_ERUNTIME, "out of memory reading --tuning-cache %s", name);
    if (!text) {
        if (!(t->conv = cJSON_CreateArray())) {
            free(t);
            return ft_err(err, FT_ERUNTIME, "out of memory reading --tuning-cache %s", name);
        }
        *out = t;
        return FT_OK;
    }
    free(t);
    cJSON *doc = cJSON_ParseWithLength(text, n);
    if (!doc) {
        const char *at = cJSON_GetErrorPtr();
        char msg[64];
        snprintf(msg, sizeof msg, "not valid JSON (at byte %ld)", at && at >= text && at <= text + n ? (long)(at - text) : 0L);
        return bad(err, NULL, name, msg, NULL);
    }
    if (!cJSON_IsObject(doc))
        return bad(err, doc, name, "not a JSON object", NULL);
    const cJSON *format = NULL, *mach = NULL;
    cJSON *conv = NULL;
    for (cJSON *f = doc->child; f; f = f->next) {
        if (!strcmp(f->string, "format"))
            format = f;
        else if (!strcmp(f->string, "machine"))
            mach = f;
        else if (!strcmp(f->string, "conv"))
            conv = f;
        else
            return bad(err, doc, name, "unknown field: ", f->string);
    }
    if (!cJSON_IsString(format))
        return bad(err, doc, name, format ? "field is not a string: " : "missing field: ", "format");
    if (strcmp(format->valuestring, FT_TUNING_FORMAT)) {
        char msg[300];
        snprintf(msg, sizeof msg, "format is '%.200s', not ", format->valuestring);
        return bad(err, doc, name, msg, FT_TUNING_FORMAT);
    }
    if (!cJSON_IsObject(mach))
        return bad(err, doc, name, mach ? "field is not an object: " : "missing field: ", "machine");
    for (const cJSON *f = mach->child; f; f = f->next) {
        int known = 0;
        for (int i = 0; i < N_MACHINE; i++)
            known |= !strcmp(f->string, machine_fields[i]);
        if (!known)
            return bad(err, doc, name, "unknown field: machine.", f->string);
    }
    for (int i = 0; i < N_MACHINE; i++)
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(mach, machine_fields[i])))
            return bad(err, doc, name,
                       cJSON_GetObjectItemCaseSensitive(mach, machine_fields[i]) ? "field is not a string: machine."
                                                                                  : "missing field: machine.",
                       machine_fields[i]);
    if (!cJSON_IsArray(conv))
        return bad(err, doc, name, conv ? "field is not an array: " : "missing field: ", "conv");
    int idx = 0;
    for (const cJSON *e = conv->child; e; e = e->next, idx++) {
        char field[200] = "", msg[300];
        const char *w = check_entry(e, field, sizeof field);
        if (w) {
            snprintf(msg, sizeof msg, "conv[%d]: %s", idx, w);
            return bad(err, doc, name, msg, strstr(w, ": ") && w[strlen(w) - 1] == ' ' ? field : NULL);
        }
    }
    cJSON *here = machine();
    if (!here) {
        cJSON_Delete(doc);
        return ft_err(err, FT_ERUNTIME, "out of memory reading --tuning-cache %s", name);
    }
    for (int i = 0; i < N_MACHINE; i++) {
        const char *a = cJSON_GetObjectItemCaseSensitive(mach, machine_fields[i])->valuestring;
        const char *b = cJSON_GetObjectItemCaseSensitive(here, machine_fields[i])->valuestring;
        if (strcmp(a, b)) {
            snprintf(why, why_cap, "machine.%s is '%.120s' there, '%.120s' here", machine_fields[i], a, b);
            cJSON_Delete(cJSON_DetachItemViaPointer(doc, conv));
            conv = cJSON_CreateArray();
            break;
        }
    }
    cJSON_Delete(here);
    if (conv && !why[0])
        conv = cJSON_DetachItemViaPointer(doc, conv);
    cJSON_Delete(doc);
    if (!conv || !(t = calloc(1, sizeof *t))) {
        cJSON_Delete(conv);
        return ft_err(err, FT_ERUNTIME, "out of memory reading --tuning-cache %s", name);
    }
    t->conv = conv;
    *out = t;
    return FT_OK;
}

static cJSON *find(const ft_tuning *t, const char *key)
{
    for (cJSON *e = t ? t->conv->child : NULL; e; e = e->next)
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(e, "key")->valuestring, key))
            return e;
    return NULL;
}

const char *ft_tuning_get(const ft_tuning *t, const char *key)
{
    const cJSON *e = find(t, key);
    return e ? cJSON_GetObjectItemCaseSensitive(e, "pick")->valuestring : NULL;
}

int ft_tuning_put(ft_tuning *t, const char *key, const char *pick, const double *ms)
{
    cJSON *e = cJSON_CreateObject(), *m = ms ? cJSON_CreateObject() : NULL;
    int ok = e && (!ms || m) && cJSON_AddStringToObject(e, "key", key) && cJSON_AddStringToObject(e, "pick", pick);
    for (int i = 0; ok && ms && i < N_FORMS; i++)
        if (ms[i] >= 0)
            ok = cJSON_AddNumberToObject(m, forms[i], (double)(long long)(ms[i] * 1e4 + 0.5) / 1e4) != NULL;
    if (ok && m) {
        cJSON_AddItemToObject(e, "ms", m);
        m = NULL;
    }
    cJSON *old = find(t, key);
    if (ok)
        ok = old ? cJSON_ReplaceItemViaPointer(t->conv, old, e) : cJSON_AddItemToArray(t->conv, e);
    if (!ok) {
        cJSON_Delete(e);
        cJSON_Delete(m);
        return -1;
    }
    t->added++;
    return 0;
}

int ft_tuning_added(const ft_tuning *t) { return t->added; }

char *ft_tuning_json(const ft_tuning *t)
{
    cJSON *doc = cJSON_CreateObject(), *m = machine();
    char *text = NULL;
    if (doc && m && cJSON_AddStringToObject(doc, "format", FT_TUNING_FORMAT)) {
        cJSON_AddItemToObject(doc, "machine", m);
        m = NULL;
        /* the table's entries lent to the document while it is printed */
        cJSON *ref = cJSON_CreateArrayReference(t->conv->child);
        if (ref) {
            cJSON_AddItemToObject(doc, "conv", ref);
            text = cJSON_Print(doc);
        }
    }
    cJSON_Delete(m);
    cJSON_Delete(doc);
    return text;
}

void ft_tuning_free(ft_tuning *t)
{
    if (!t)
        return;
    cJSON_Delete(t->conv);
    free(t);
}

/* "[1,16,56,56]" at buf + *len */
static void shape_str(char *buf, size_t cap, int *len, const ft_shape *s)
{
    *len += snprintf(buf + *len, cap > (size_t)*len ? cap - (size_t)*len : 0, "[");
    for (int i = 0; i < s->rank; i++)
        *len += snprintf(buf + *len, cap > (size_t)*len ? cap - (size_t)*len : 0, "%s%lld", i ? "," : "",
                         (long long)s->dims[i]);
    *len += snprintf(buf + *len, cap > (size_t)*len ? cap - (size_t)*len : 0, "]");
}

static const char *act_name(ft_conv_act a)
{
    switch (a) {
    case FT_CONV_ACT_NONE: return "none";
    case FT_CONV_ACT_RELU: return "relu";
    case FT_CONV_ACT_CLIP: return "clip";
    case FT_CONV_ACT_SILU: return "silu";
    case FT_CONV_ACT_HARD_SWISH: return "hard_swish";
    }
    return "?";
}

int cpu_tuning_conv_key(const ft_node *n, const ft_view *in, const ft_view *out, int threads, const char *const lay[3],
                        char *buf, size_t cap)
{
    const ft_conv_params *p = &n->params.conv;
    int len = snprintf(buf, cap, "%s %s x", ft_op_name(n->op), ft_dtype_name(in[0].dtype));
#define ROOM (cap > (size_t)len ? cap - (size_t)len : 0)
    shape_str(buf, cap, &len, &in[0].shape);
    len += snprintf(buf + len, ROOM, " w");
    shape_str(buf, cap, &len, &in[1].shape);
    len += snprintf(buf + len, ROOM, " y");
    shape_str(buf, cap, &len, &out[0].shape);
    len += snprintf(buf + len, ROOM, " bias %d group %lld", n->n_in > 2 && in[2].data != NULL, (long long)p->group);
    const char *lists[] = {" strides ", " dilations ", " pads ", ","};
    const int64_t *v[] = {p->s, p->d, p->pb, p->pe};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < p->r; i++)
            len += snprintf(buf + len, ROOM, "%s%lld", i ? "," : lists[k], (long long)v[k][i]);
    len += snprintf(buf + len, ROOM, " auto_pad %d act %s sum %s in %s out %s threads %d", p->auto_pad,
                    act_name(p->act), lay[1] && *lay[1] ? lay[1] : "none", lay[0], lay[2], threads);
#undef ROOM
    return (size_t)len < cap ? 0 : -1;
}
