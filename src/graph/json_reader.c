/* JSON graph reader: cJSON document -> ft_graph, including every value source.
 * Every message names the file and the tensor or node; syntax errors carry
 * line:column. The header of a binary graph goes through the same reader
 * (ft_graph_parse_doc with a blob set), which is where "blob" is allowed. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dims.h"
#include "ftg.h"
#include "graph.h"
#include "npy.h"

#define MAX_NODES 1000000
#define MAX_TENSORS 4000000


/* A declared tensor whose shape names a dim: its value source is read once
 * the names are bound (resolve_dims). */
typedef struct {
    int t;
    const cJSON *decl;
    int rank, done;
    ft_symdim sym[FT_MAX_RANK]; /* names point into the document */
} pending;

typedef struct {
    ft_graph *g;
    const ft_load_opts *opts;
    ft_error *err;
    ft_blob_set *blobs; /* non-NULL while reading a binary graph's header */
    pending *p;
    int np, capp;
} reader;

static ft_status oom(reader *r) { return ft_err(r->err, FT_ERUNTIME, "%s: out of memory while loading the graph", r->g->file); }

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

static ft_status terr(reader *r, const char *tname, const char *fmt, ...) FT_PRINTF(3, 4);
static ft_status terr(reader *r, const char *tname, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ft_err(r->err, FT_EGRAPH, "%s: tensor '%s': %s", r->g->file, tname, msg);
}

static ft_status gerr(reader *r, const char *fmt, ...) FT_PRINTF(2, 3);
static ft_status gerr(reader *r, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ft_err(r->err, FT_EGRAPH, "%s: %s", r->g->file, msg);
}

static const char *jtype(const cJSON *j)
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
static ft_status check_keys(reader *r, const cJSON *obj, const char *const *allowed, int n, const char *what)
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
            return gerr(r, "%s: unknown key '%s'%s%s (allowed: %s)", what, it->string, *sug ? "; " : "", sug, list);
        }
    }
    return FT_OK;
}

static int add_tensor(reader *r, const char *name)
{
    ft_graph *g = r->g;
    if (g->n_tensors >= MAX_TENSORS)
        return -2;
    if (strlen(name) > FT_MAX_NAME)
        return -3;
    if (g->n_tensors == g->cap_tensors) {
        int nc = g->cap_tensors ? g->cap_tensors * 2 : 64;
        ft_tensor *nt = ft_realloc(g->tensors, (size_t)nc * sizeof *nt);
        if (!nt)
            return -1;
        g->tensors = nt;
        g->cap_tensors = nc;
    }
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

static ft_status add_tensor_err(reader *r, int code, const char *name)
{
    if (code == -2)
        return gerr(r, "more than %d tensors (the limit)", MAX_TENSORS);
    if (code == -3)
        return gerr(r, "a tensor name of %zu bytes ('%.40s...') exceeds the limit of %d bytes", strlen(name), name, FT_MAX_NAME);
    return oom(r);
}

/* A JSON number or one of "nan", "inf", "+inf", "-inf". */
static int json_double(const cJSON *j, double *v)
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

static int json_int(const cJSON *j, int64_t *v)
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

/* A dim is a non-negative integer or a name (a symbolic dim: sym[i] gets
 * it, s->dims[i] is -1 until it is bound). *named counts the names. */
static ft_status parse_shape(reader *r, const char *tname, const cJSON *j, ft_shape *s, ft_symdim *sym, int *named)
{
    if (!cJSON_IsArray(j))
        return terr(r, tname, "\"shape\" must be an array of non-negative integers and dim names, got %s", jtype(j));
    int n = cJSON_GetArraySize(j);
    if (n > FT_MAX_RANK)
        return terr(r, tname, "rank %d exceeds the maximum rank %d", n, FT_MAX_RANK);
    s->rank = n;
    *named = 0;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        int64_t v;
        if (cJSON_IsString(it)) {
            size_t len = strlen(it->valuestring);
            if (len == 0 || len > 256)
                return terr(r, tname, "\"shape\"[%d]: a dim name must be 1 to 256 bytes long", i);
            sym[i] = (ft_symdim){-1, it->valuestring};
            s->dims[i++] = -1;
            (*named)++;
            continue;
        }
        if (json_int(it, &v) || v < 0 || cJSON_IsBool(it))
            return terr(r, tname, "\"shape\"[%d] must be a non-negative integer or a dim name", i);
        sym[i] = (ft_symdim){v, NULL};
        s->dims[i++] = v;
    }
    return FT_OK;
}

static ft_status parse_dtype(reader *r, const char *tname, const cJSON *j, ft_dtype *dt)
{
    if (!cJSON_IsString(j))
        return terr(r, tname, "\"dtype\" must be a string, got %s", jtype(j));
    if (ft_dtype_parse(j->valuestring, dt) == 0)
        return FT_OK;
    static const char *const names[] = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool",
                                        "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                                        "int64", "uint8", "bool_"};
    char sug[256];
    ft_suggest(j->valuestring, names, (int)FT_ARRAY_LEN(names), sug, sizeof sug);
    return terr(r, tname, "unknown dtype '%s'%s%s (expected f16, bf16, f32, f64, i8, i16, i32, i64, u8 or bool)",
                j->valuestring, *sug ? "; " : "", sug);
}

/* ---- value sources ---- */

typedef struct {
    reader *r;
    const ft_tensor *t;
    uint64_t numel, pos;
} data_fill;

static ft_status store_value(data_fill *f, const cJSON *j)
{
    const ft_tensor *t = f->t;
    if (f->pos >= f->numel)
        return FT_OK; /* count checked by the caller */
    if (t->dtype == FT_BOOL) {
        int64_t v;
        if (json_int(j, &v) || (v != 0 && v != 1))
            return terr(f->r, t->name, "\"data\"[%llu]: expected true, false, 0 or 1 for bool, got %s",
                        (unsigned long long)f->pos, jtype(j));
        ((uint8_t *)t->value)[f->pos++] = (uint8_t)v;
        return FT_OK;
    }
    if (ft_dtype_is_int(t->dtype)) {
        int64_t v;
        if (json_int(j, &v)) {
            double d = 0;
            if (json_double(j, &d) == 0)
                return terr(f->r, t->name, "\"data\"[%llu]: %g is not an integer (dtype %s)",
                            (unsigned long long)f->pos, d, ft_dtype_name(t->dtype));
            return terr(f->r, t->name, "\"data\"[%llu]: expected an integer, got %s", (unsigned long long)f->pos, jtype(j));
        }
        static const int64_t lo[] = {[FT_I8] = INT8_MIN, [FT_I16] = INT16_MIN, [FT_I32] = INT32_MIN, [FT_I64] = INT64_MIN, [FT_U8] = 0};
        static const int64_t hi[] = {[FT_I8] = INT8_MAX, [FT_I16] = INT16_MAX, [FT_I32] = INT32_MAX, [FT_I64] = INT64_MAX, [FT_U8] = UINT8_MAX};
        if (v < lo[t->dtype] || v > hi[t->dtype])
            return terr(f->r, t->name, "\"data\"[%llu]: %lld is out of range for %s", (unsigned long long)f->pos,
                        (long long)v, ft_dtype_name(t->dtype));
        ft_store_i64(t->value, t->dtype, (size_t)f->pos++, v);
        return FT_OK;
    }
    double d;
    if (json_double(j, &d))
        return terr(f->r, t->name, "\"data\"[%llu]: expected a number or \"nan\", \"inf\", \"-inf\", got %s%s%s%s",
                    (unsigned long long)f->pos, jtype(j), cJSON_IsString(j) ? " '" : "",
                    cJSON_IsString(j) ? j->valuestring : "", cJSON_IsString(j) ? "'" : "");
    ft_store_f64(t->value, t->dtype, (size_t)f->pos++, d);
    return FT_OK;
}

/* Nested arrays must match the shape exactly, dimension by dimension. */
static ft_status fill_nested(data_fill *f, const cJSON *j, int dim)
{
    const ft_tensor *t = f->t;
    if (dim == t->shape.rank) {
        if (cJSON_IsArray(j))
            return terr(f->r, t->name, "\"data\" is nested deeper than the shape %s", ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}));
        return store_value(f, j);
    }
    if (!cJSON_IsArray(j))
        return terr(f->r, t->name, "\"data\": nested arrays do not match the shape %s (found %s at depth %d)",
                    ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), jtype(j), dim);
    int n = cJSON_GetArraySize(j);
    if (n != t->shape.dims[dim])
        return terr(f->r, t->name, "\"data\": %d values at depth %d but the shape %s has %lld there", n, dim,
                    ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), (long long)t->shape.dims[dim]);
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        ft_status st = fill_nested(f, it, dim + 1);
        if (st)
            return st;
    }
    return FT_OK;
}

static ft_status load_data(reader *r, ft_tensor *t, const cJSON *j)
{
    data_fill f = {r, t, ft_numel(&t->shape), 0};
    int nested = 0;
    if (cJSON_IsArray(j)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, j) nested |= cJSON_IsArray(it);
    }
    ft_status st;
    if (!cJSON_IsArray(j)) { /* a bare scalar */
        if (f.numel != 1)
            return terr(r, t->name, "\"data\" is a single value but the shape %s has %llu elements",
                        ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), (unsigned long long)f.numel);
        return store_value(&f, j);
    }
    if (nested && t->shape.rank > 1)
        return fill_nested(&f, j, 0);
    uint64_t n = (uint64_t)cJSON_GetArraySize(j);
    if (nested || n != f.numel)
        return terr(r, t->name, "\"data\" has %llu values but the shape %s has %llu elements", (unsigned long long)n,
                    ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), (unsigned long long)f.numel);
    const cJSON *it;
    cJSON_ArrayForEach(it, j) if ((st = store_value(&f, it))) return st;
    return FT_OK;
}

static char *join_path(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !*dir)
        return ft_strdup(rel);
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = ft_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

/* A graph from somewhere else must not read files it was not shipped with:
 * "file" is relative to the graph's folder and must stay inside it, after
 * symbolic links are resolved. --allow-external-files lifts this. */
static ft_status check_inside(reader *r, const ft_tensor *t, const char *rel, const char *path)
{
    if (rel[0] == '/')
        return terr(r, t->name, "\"file\" is an absolute path (%s); graph files may only read files inside their "
                    "own folder (pass --allow-external-files to allow it)", rel);
    char *base = realpath(r->g->dir, NULL), *real = realpath(path, NULL);
    ft_status st = FT_OK;
    if (base && real) {
        size_t bl = strlen(base);
        int inside = strncmp(real, base, bl) == 0 && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
        if (!inside)
            st = terr(r, t->name, "\"file\" %s resolves to %s, outside the graph's folder %s; graph files may only "
                      "read files inside their own folder (pass --allow-external-files to allow it)", rel, real, base);
    }
    /* a path that does not resolve is reported when it is opened */
    free(base);
    free(real);
    return st;
}

/* With env non-NULL (a tensor whose shape names a dim): a .npy file fixes
 * the shape, binding the names (sym); a raw file is left for later (*raw). */
static ft_status load_file(reader *r, ft_tensor *t, const cJSON *jf, const cJSON *joff, ft_dimenv *env,
                           const ft_symdim *sym, int *raw)
{
    if (!cJSON_IsString(jf) || !*jf->valuestring)
        return terr(r, t->name, "\"file\" must be a non-empty string (a path relative to the graph's folder)");
    int64_t offset = 0;
    if (joff && (json_int(joff, &offset) || offset < 0))
        return terr(r, t->name, "\"offset\" must be a non-negative integer");
    char *path = join_path(r->g->dir, jf->valuestring);
    if (!path)
        return oom(r);
    if (!(r->opts && r->opts->allow_external)) {
        ft_status pst = check_inside(r, t, jf->valuestring, path);
        if (pst) {
            free(path);
            return pst;
        }
    }
    /* mapped, not read: the values are copied once, straight from the page cache */
    const unsigned char *buf = NULL;
    size_t len = 0;
    ft_status st = ft_map_file(path, 1, &buf, &len, r->err);
    if (st) {
        ft_err_prefix(r->err, "%s: tensor '%s': \"file\"", r->g->file, t->name);
        free(path);
        return st;
    }
    size_t need = env ? 0 : ft_tensor_bytes(t);
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
    if (ft_npy_is_npy(buf, len)) {
        ft_npy a;
        if (joff && offset != 0)
            st = terr(r, t->name, "\"offset\" applies to raw files only, but %s is a .npy file", path);
        else if ((st = ft_npy_parse(path, buf, len, &a, r->err)) != FT_OK)
            ft_err_prefix(r->err, "%s: tensor '%s'", r->g->file, t->name);
        else {
            char origin[4200];
            snprintf(origin, sizeof origin, "file %s", path);
            if (ft_npy_to_dtype(&a, t->dtype) != 0)
                st = terr(r, t->name, "%s has dtype %s but the tensor is declared %s", path, ft_dtype_name(a.dtype),
                          ft_dtype_name(t->dtype));
            else if (env) {
                if (!(st = ft_dimenv_fix(env, r->g->file, t->name, origin, t->shape.rank, sym, &a.shape, r->err))) {
                    t->shape = a.shape;
                    t->value_bytes = a.nbytes;
                }
            } else if (!ft_shape_eq(&a.shape, &t->shape))
                st = terr(r, t->name, "%s has shape %s but the tensor is declared %s", path, ft_shape_str(&a.shape, s1),
                          ft_shape_str(&t->shape, s2));
            if (!st) {
                free(t->value);
                t->value = a.data;
                a.data = NULL;
            }
            ft_npy_clear(&a);
        }
    } else if (env) {
        *raw = 1;
    } else if ((uint64_t)offset > len || len - (size_t)offset < need) {
        st = terr(r, t->name, "%s is too short: %s %s needs %zu bytes from offset %lld, the file has %zu bytes", path,
                  ft_dtype_name(t->dtype), ft_shape_str(&t->shape, s1), need, (long long)offset, len);
    } else {
        memcpy(t->value, buf + offset, need);
    }
    ft_unmap_file(buf, len);
    free(path);
    return st;
}

static ft_status init_param(reader *r, const ft_tensor *t, const cJSON *obj, const char *kind, const char *key,
                            double def, double *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        *out = def;
        return FT_OK;
    }
    if (json_double(j, out))
        return terr(r, t->name, "\"init\": %s.%s must be a number, got %s", kind, key, jtype(j));
    return FT_OK;
}

static ft_status load_init(reader *r, ft_tensor *t, const cJSON *j)
{
    static const char *const keys[] = {"fill", "arange", "uniform", "normal", "seed"};
    if (!cJSON_IsObject(j))
        return terr(r, t->name, "\"init\" must be an object such as {\"fill\": 0}, got %s", jtype(j));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s': \"init\"", t->name);
    ft_status st = check_keys(r, j, keys, 5, what);
    if (st)
        return st;
    int kind = -1, count = 0;
    for (int k = 0; k < 4; k++)
        if (cJSON_GetObjectItemCaseSensitive(j, keys[k])) {
            kind = k;
            count++;
        }
    if (count != 1)
        return terr(r, t->name, "\"init\" needs exactly one of fill, arange, uniform, normal (found %d)", count);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(j, keys[kind]);
    int64_t seed = 0;
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "seed");
    if (js && (json_int(js, &seed) || seed < 0))
        return terr(r, t->name, "\"init\": \"seed\" must be a non-negative integer");
    if (r->opts && r->opts->seed_override >= 0)
        seed = r->opts->seed_override;
    double a = 0, b = 0;
    if (kind == 0) {
        if (json_double(spec, &a))
            return terr(r, t->name, "\"init\": \"fill\" must be a number, got %s", jtype(spec));
    } else {
        static const char *const pk[4][2] = {{"", ""}, {"start", "step"}, {"low", "high"}, {"mean", "std"}};
        static const double pd[4][2] = {{0, 0}, {0, 1}, {0, 1}, {0, 1}};
        if (!cJSON_IsObject(spec))
            return terr(r, t->name, "\"init\": \"%s\" must be an object with %s and %s", keys[kind], pk[kind][0], pk[kind][1]);
        const char *const allowed[2] = {pk[kind][0], pk[kind][1]};
        snprintf(what, sizeof what, "tensor '%.120s': \"init\".%s", t->name, keys[kind]);
        if ((st = check_keys(r, spec, allowed, 2, what)) || (st = init_param(r, t, spec, keys[kind], pk[kind][0], pd[kind][0], &a)) ||
            (st = init_param(r, t, spec, keys[kind], pk[kind][1], pd[kind][1], &b)))
            return st;
        if (kind == 2 && !(a <= b))
            return terr(r, t->name, "\"init\": uniform needs low <= high (got %g, %g)", a, b);
        if (kind == 3 && !(b >= 0))
            return terr(r, t->name, "\"init\": normal needs std >= 0 (got %g)", b);
    }
    ft_init_values(t->value, t->dtype, ft_numel(&t->shape), kind, a, b, (uint64_t)seed);
    return FT_OK;
}

/* Integers of a blob descriptor: exact in a JSON double up to 2^53. */
static int json_u64(const cJSON *j, uint64_t *v)
{
    int64_t x;
    if (cJSON_IsBool(j) || json_int(j, &x) || x < 0 || x > ((int64_t)1 << 53))
        return -1;
    *v = (uint64_t)x;
    return 0;
}

/* Records the blob; its bytes are checked and decoded by ftg.c once every
 * blob is known (overlaps need them all). */
static ft_status load_blob(reader *r, ft_tensor *t, const cJSON *j, uint64_t need)
{
    static const char *const keys[] = {"offset", "nbytes", "encoding", "stored", "crc32"};
    if (!cJSON_IsObject(j))
        return terr(r, t->name, "\"blob\" must be an object with offset, nbytes, encoding, stored and crc32, got %s",
                    jtype(j));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s': \"blob\"", t->name);
    ft_status st = check_keys(r, j, keys, 5, what);
    if (st)
        return st;
    for (int k = 0; k < 5; k++)
        if (!cJSON_GetObjectItemCaseSensitive(j, keys[k]))
            return terr(r, t->name, "\"blob\" lacks \"%s\"", keys[k]);
    ft_blob b = {.tensor = (int)(t - r->g->tensors)};
    uint64_t crc;
    const char *bad = NULL;
    if (json_u64(cJSON_GetObjectItemCaseSensitive(j, "offset"), &b.offset))
        bad = "offset";
    else if (json_u64(cJSON_GetObjectItemCaseSensitive(j, "nbytes"), &b.nbytes))
        bad = "nbytes";
    else if (json_u64(cJSON_GetObjectItemCaseSensitive(j, "stored"), &b.stored))
        bad = "stored";
    else if (json_u64(cJSON_GetObjectItemCaseSensitive(j, "crc32"), &crc) || crc > 0xffffffffu)
        bad = "crc32";
    if (bad)
        return terr(r, t->name, "\"blob\": \"%s\" must be a non-negative integer%s", bad,
                    !strcmp(bad, "crc32") ? " below 2^32" : "");
    b.crc = (uint32_t)crc;
    const cJSON *je = cJSON_GetObjectItemCaseSensitive(j, "encoding");
    if (!cJSON_IsString(je) || (strcmp(je->valuestring, "raw") && strcmp(je->valuestring, "zlib")))
        return terr(r, t->name, "\"blob\": \"encoding\" must be \"raw\" or \"zlib\", got %s%s%s%s", jtype(je),
                    cJSON_IsString(je) ? " '" : "", cJSON_IsString(je) ? je->valuestring : "", cJSON_IsString(je) ? "'" : "");
    b.zlib = je->valuestring[0] == 'z';
    char s1[FT_SHAPE_STR];
    if (b.offset % FT_FTG_ALIGN)
        return terr(r, t->name, "blob offset %llu is not a multiple of %d", (unsigned long long)b.offset, FT_FTG_ALIGN);
    if (b.nbytes != need)
        return terr(r, t->name, "blob nbytes %llu does not match the declaration: %s %s is %llu bytes",
                    (unsigned long long)b.nbytes, ft_dtype_name(t->dtype), ft_shape_str(&t->shape, s1),
                    (unsigned long long)need);
    if (!b.zlib && b.stored != b.nbytes)
        return terr(r, t->name, "raw blob stores %llu bytes but nbytes is %llu (a raw blob stores exactly nbytes)",
                    (unsigned long long)b.stored, (unsigned long long)b.nbytes);
    uint64_t d = r->blobs->data_bytes;
    if (b.offset > d || b.stored > d - b.offset)
        return terr(r, t->name, "blob bytes [%llu, %llu) of the data section lie beyond the end of the file (the data section has %llu bytes)",
                    (unsigned long long)b.offset, (unsigned long long)(b.offset + b.stored), (unsigned long long)d);
    ft_blob_set *bs = r->blobs;
    if (bs->n == bs->cap) {
        int nc = bs->cap ? bs->cap * 2 : 64;
        ft_blob *nv = ft_realloc(bs->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return oom(r);
        bs->v = nv;
        bs->cap = nc;
    }
    bs->v[bs->n++] = b;
    return FT_OK;
}

/* The value source of a declared tensor whose shape is concrete. */
static ft_status load_value(reader *r, ft_tensor *t, const cJSON *decl)
{
    const char *name = t->name;
    uint64_t numel, bytes;
    if (ft_shape_numel(&t->shape, &numel) || ft_mul_overflow(numel, ft_dtype_size(t->dtype), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES)
        return terr(r, name, "shape %s of %s is too large (limit %llu bytes)", ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}),
                    ft_dtype_name(t->dtype), (unsigned long long)FT_MAX_TENSOR_BYTES);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(decl, "data"), *file = cJSON_GetObjectItemCaseSensitive(decl, "file"),
                *init = cJSON_GetObjectItemCaseSensitive(decl, "init"), *off = cJSON_GetObjectItemCaseSensitive(decl, "offset");
    const cJSON *blob = r->blobs ? cJSON_GetObjectItemCaseSensitive(decl, "blob") : NULL;
    if (!data && !file && !init && !blob)
        return FT_OK;
    t->value_bytes = (size_t)bytes;
    if (blob) {
        t->flags |= FT_TF_VALUE;
        t->source = "blob";
        return load_blob(r, t, blob, bytes);
    }
    t->value = ft_calloc(1, (size_t)bytes);
    if (!t->value)
        return ft_err(r->err, FT_ERUNTIME, "%s: tensor '%s': out of memory allocating %llu bytes", r->g->file, name,
                      (unsigned long long)bytes);
    t->flags |= FT_TF_VALUE;
    if (data) {
        t->source = "data";
        return load_data(r, t, data);
    }
    if (file) {
        t->source = "file";
        return load_file(r, t, file, off, NULL, NULL, NULL);
    }
    t->source = "init";
    return load_init(r, t, init);
}

static ft_status parse_tensor_decl(reader *r, const cJSON *decl)
{
    static const char *const keys[] = {"dtype", "shape", "data", "file", "offset", "init", "blob"};
    const char *name = decl->string;
    if (!*name)
        return gerr(r, "\"tensors\": a tensor name must not be empty");
    if (!cJSON_IsObject(decl))
        return terr(r, name, "the declaration must be an object with \"dtype\" and \"shape\", got %s", jtype(decl));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s'", name);
    ft_status st = check_keys(r, decl, keys, r->blobs ? 7 : 6, what);
    if (st)
        return st;
    if (ft_graph_find(r->g, name) >= 0)
        return terr(r, name, "declared twice under \"tensors\"");
    int idx = add_tensor(r, name);
    if (idx < 0)
        return add_tensor_err(r, idx, name);
    ft_tensor *t = &r->g->tensors[idx];
    t->flags |= FT_TF_DECLARED | FT_TF_INFERRED;
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(decl, "dtype"), *js = cJSON_GetObjectItemCaseSensitive(decl, "shape");
    if (!jd)
        return terr(r, name, "missing \"dtype\"");
    if (!js)
        return terr(r, name, "missing \"shape\"");
    ft_symdim sym[FT_MAX_RANK];
    int named = 0;
    if ((st = parse_dtype(r, name, jd, &t->dtype)) || (st = parse_shape(r, name, js, &t->shape, sym, &named)))
        return st;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(decl, "data"), *file = cJSON_GetObjectItemCaseSensitive(decl, "file"),
                *init = cJSON_GetObjectItemCaseSensitive(decl, "init"), *off = cJSON_GetObjectItemCaseSensitive(decl, "offset");
    const cJSON *blob = r->blobs ? cJSON_GetObjectItemCaseSensitive(decl, "blob") : NULL;
    int sources = !!data + !!file + !!init + !!blob;
    if (sources > 1)
        return terr(r, name, "has %d value sources; give at most one of \"data\", \"file\", \"init\"%s", sources,
                    r->blobs ? ", \"blob\"" : "");
    if (off && !file)
        return terr(r, name, "\"offset\" is only meaningful with \"file\"");
    if (!named)
        return load_value(r, t, decl);
    if (r->np == r->capp) {
        int nc = r->capp ? r->capp * 2 : 8;
        pending *np = ft_realloc(r->p, (size_t)nc * sizeof *np);
        if (!np)
            return oom(r);
        r->p = np;
        r->capp = nc;
    }
    pending *p = &r->p[r->np++];
    *p = (pending){.t = idx, .decl = decl, .rank = t->shape.rank};
    memcpy(p->sym, sym, sizeof sym);
    return FT_OK;
}

static pending *find_pending(reader *r, int t)
{
    for (int i = 0; i < r->np; i++)
        if (r->p[i].t == t)
            return &r->p[i];
    return NULL;
}

/* Symbolic dims (dims.h), once "inputs" is known: .npy files of tensors that
 * name dims fix them; then every declared input resolves (its shape binding
 * from -i or --shape, --dim, or the names bound so far); then the value
 * sources of the other tensors that name dims are read at the bound shape.
 * A tensor without a value source (produced by a node) keeps -1 where a name
 * is bound by nothing: validation takes the inferred size there. */
static ft_status resolve_dims(reader *r)
{
    ft_graph *g = r->g;
    ft_dimenv *e = ft_dimenv_new(r->opts);
    if (!e)
        return oom(r);
    ft_status st = FT_OK;
    ft_symdim concrete[FT_MAX_RANK];
    for (int i = 0; i < g->n_inputs && !st; i++) {
        ft_tensor *t = &g->tensors[g->inputs[i]];
        pending *p = find_pending(r, g->inputs[i]);
        for (int k = 0; k < t->shape.rank; k++)
            concrete[k] = (ft_symdim){t->shape.dims[k], NULL};
        if (t->flags & FT_TF_DECLARED)
            st = ft_dimenv_declare(e, t->name, t->shape.rank, p ? p->sym : concrete, r->err);
    }
    for (int i = 0; i < r->np && !st; i++) {
        pending *p = &r->p[i];
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(p->decl, "file");
        int raw = 0;
        if (!file)
            continue;
        ft_tensor *t = &g->tensors[p->t];
        st = load_file(r, t, file, cJSON_GetObjectItemCaseSensitive(p->decl, "offset"), e, p->sym, &raw);
        if (!st && !raw) {
            p->done = 1;
            t->flags |= FT_TF_VALUE;
            t->source = "file";
        }
    }
    for (int i = 0; i < g->n_inputs && !st; i++) {
        ft_tensor *t = &g->tensors[g->inputs[i]];
        if (!(t->flags & FT_TF_DECLARED))
            continue;
        pending *p = find_pending(r, g->inputs[i]);
        for (int k = 0; k < t->shape.rank; k++)
            concrete[k] = (ft_symdim){t->shape.dims[k], NULL};
        ft_shape s;
        st = ft_dimenv_resolve(e, g->file, t->name, t->shape.rank, p ? p->sym : concrete, &s, r->err);
        if (!st && p && !p->done)
            t->shape = s;
    }
    for (int i = 0; i < r->np && !st; i++) {
        pending *p = &r->p[i];
        ft_tensor *t = &g->tensors[p->t];
        if (p->done || (t->flags & FT_TF_INPUT))
            continue;
        ft_shape s;
        int unknown = ft_dimenv_known(e, g->file, p->rank, p->sym, &s, r->err);
        if (unknown < 0) {
            st = r->err->code;
            break;
        }
        t->shape = s;
        static const char *const src[] = {"data", "file", "init", "blob"};
        const char *has = NULL;
        for (int k = 0; k < 4 && !has; k++)
            if (cJSON_GetObjectItemCaseSensitive(p->decl, src[k]))
                has = src[k];
        for (int k = 0; k < p->rank && unknown && has && !st; k++)
            if (s.dims[k] < 0)
                st = terr(r, t->name,
                          "dim %d ('%s') is not known, and its value (\"%s\") needs a concrete shape: pass --dim %s=N, or "
                          "bind '%s' through an input",
                          k, p->sym[k].name, has, p->sym[k].name, p->sym[k].name);
    }
    if (!st)
        st = ft_dimenv_finish(e, g->file, r->err);
    for (int i = 0; i < r->np && !st; i++)
        if (!r->p[i].done)
            st = load_value(r, &g->tensors[r->p[i].t], r->p[i].decl);
    ft_dimenv_free(e);
    return st;
}

/* ---- nodes ---- */

static ft_status parse_attr(reader *r, ft_node *n, const ft_attr_def *d, ft_attr_val *v, const cJSON *j)
{
    const char *ty = "";
    v->given = v->present = 1;
    switch (d->type) {
    case FT_ATTR_INT:
        if (json_int(j, &v->i) == 0)
            return FT_OK;
        ty = "an integer";
        break;
    case FT_ATTR_FLOAT:
        if (json_double(j, &v->f) == 0)
            return FT_OK;
        ty = "a number";
        break;
    case FT_ATTR_STRING:
        if (cJSON_IsString(j)) {
            free(v->s);
            v->s = ft_strdup(j->valuestring);
            return v->s ? FT_OK : oom(r);
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
            return oom(r);
        const cJSON *it;
        cJSON_ArrayForEach(it, j)
        {
            if (isf ? json_double(it, &v->floats[i]) : (cJSON_IsBool(it) || json_int(it, &v->ints[i])))
                return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s'[%d] must be %s, got %s", d->name, i,
                                   isf ? "a number" : "an integer", jtype(it));
            i++;
        }
        return FT_OK;
    }
    }
    return ft_node_err(r->err, FT_EGRAPH, r->g, n, "attribute '%s' must be %s, got %s", d->name, ty, jtype(j));
}

static ft_status parse_attrs(reader *r, ft_node *n, const cJSON *ja)
{
    const ft_op_info *oi = ft_op_get(n->op);
    n->attrs = ft_calloc((size_t)(oi->n_attrs ? oi->n_attrs : 1), sizeof *n->attrs);
    if (!n->attrs)
        return oom(r);
    for (int i = 0; i < oi->n_attrs; i++) {
        const ft_attr_def *d = &oi->attrs[i];
        ft_attr_val *v = &n->attrs[i];
        if (d->has_default) {
            v->present = 1;
            v->i = d->i;
            v->f = d->f;
            if (d->type == FT_ATTR_STRING && !(v->s = ft_strdup(d->s)))
                return oom(r);
        }
    }
    if (ja && !cJSON_IsObject(ja))
        return ft_node_err(r->err, FT_EGRAPH, r->g, n, "\"attrs\" must be an object, got %s", jtype(ja));
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

static ft_status parse_node(reader *r, int index, const cJSON *jn)
{
    static const char *const keys[] = {"name", "op", "inputs", "outputs", "attrs"};
    ft_graph *g = r->g;
    ft_node *n = &g->nodes[index];
    n->index = index;
    if (!cJSON_IsObject(jn))
        return gerr(r, "nodes[%d] must be an object, got %s", index, jtype(jn));
    const cJSON *jop = cJSON_GetObjectItemCaseSensitive(jn, "op"), *jname = cJSON_GetObjectItemCaseSensitive(jn, "name");
    if (jname && (!cJSON_IsString(jname) || !*jname->valuestring))
        return gerr(r, "nodes[%d]: \"name\" must be a non-empty string", index);
    if (!cJSON_IsString(jop))
        return gerr(r, "nodes[%d]%s%s%s: \"op\" must be a string naming an op, got %s", index, jname ? " ('" : "",
                    jname ? jname->valuestring : "", jname ? "')" : "", jtype(jop));
    if (ft_op_lookup(jop->valuestring, &n->op) != 0) {
        char sug[256];
        ft_suggest_op(jop->valuestring, sug, sizeof sug);
        return gerr(r, "nodes[%d]%s%s%s: unknown op '%s'%s%s (see 'ftrun ops')", index, jname ? " ('" : "",
                    jname ? jname->valuestring : "", jname ? "')" : "", jop->valuestring, *sug ? "; " : "", sug);
    }
    const ft_op_info *oi = ft_op_get(n->op);
    char defname[64];
    snprintf(defname, sizeof defname, "%s_%d", oi->name, index);
    if (jname && strlen(jname->valuestring) > FT_MAX_NAME)
        return gerr(r, "nodes[%d]: a node name of %zu bytes exceeds the limit of %d bytes", index, strlen(jname->valuestring),
                    FT_MAX_NAME);
    n->name = ft_strdup(jname ? jname->valuestring : defname);
    if (!n->name)
        return oom(r);
    char what[160];
    snprintf(what, sizeof what, "node '%s' (%s)", n->name, oi->name);
    ft_status st = check_keys(r, jn, keys, 5, what);
    if (st)
        return st;
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(jn, "inputs"), *jo = cJSON_GetObjectItemCaseSensitive(jn, "outputs");
    if (!cJSON_IsArray(ji))
        return ft_node_err(r->err, FT_EGRAPH, g, n, "\"inputs\" must be an array of tensor names, got %s", jtype(ji));
    if (!cJSON_IsArray(jo))
        return ft_node_err(r->err, FT_EGRAPH, g, n, "\"outputs\" must be an array of tensor names, got %s", jtype(jo));
    n->n_in = cJSON_GetArraySize(ji);
    n->n_out = cJSON_GetArraySize(jo);
    if (n->n_in < oi->min_in || (oi->max_in >= 0 && n->n_in > oi->max_in)) {
        if (oi->max_in < 0)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "takes at least %d input%s, got %d", oi->min_in, oi->min_in == 1 ? "" : "s", n->n_in);
        if (oi->min_in == oi->max_in)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "takes %d input%s, got %d", oi->min_in, oi->min_in == 1 ? "" : "s", n->n_in);
        return ft_node_err(r->err, FT_EGRAPH, g, n, "takes %d to %d inputs, got %d", oi->min_in, oi->max_in, n->n_in);
    }
    if (n->n_out < oi->min_out || (oi->max_out >= 0 && n->n_out > oi->max_out)) {
        if (oi->max_out < 0)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "produces at least %d output%s, got %d", oi->min_out, oi->min_out == 1 ? "" : "s", n->n_out);
        if (oi->min_out == oi->max_out)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "produces %d output%s, got %d", oi->min_out, oi->min_out == 1 ? "" : "s", n->n_out);
        return ft_node_err(r->err, FT_EGRAPH, g, n, "produces %d to %d outputs, got %d", oi->min_out, oi->max_out, n->n_out);
    }
    n->in = ft_malloc((size_t)(n->n_in ? n->n_in : 1) * sizeof(int));
    n->out = ft_malloc((size_t)n->n_out * sizeof(int));
    if (!n->in || !n->out)
        return oom(r);
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
            return ft_node_err(r->err, FT_EGRAPH, g, n, "inputs[%d] must be a tensor name (or \"\"/null), got %s", i, jtype(it));
        int t = ft_graph_find(g, it->valuestring);
        if (t < 0 && (t = add_tensor(r, it->valuestring)) < 0)
            return add_tensor_err(r, t, it->valuestring);
        n->in[i++] = t;
    }
    i = 0;
    cJSON_ArrayForEach(it, jo)
    {
        if (!cJSON_IsString(it) || !*it->valuestring)
            return ft_node_err(r->err, FT_EGRAPH, g, n, "outputs[%d] must be a non-empty tensor name, got %s", i, jtype(it));
        int t = ft_graph_find(g, it->valuestring);
        if (t < 0 && (t = add_tensor(r, it->valuestring)) < 0)
            return add_tensor_err(r, t, it->valuestring);
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
    return parse_attrs(r, n, cJSON_GetObjectItemCaseSensitive(jn, "attrs"));
}

static ft_status parse_name_list(reader *r, const cJSON *j, const char *key, int **out, int *n_out, unsigned flag)
{
    if (!j) {
        *n_out = 0;
        return FT_OK;
    }
    if (!cJSON_IsArray(j))
        return gerr(r, "\"%s\" must be an array of tensor names, got %s", key, jtype(j));
    int n = cJSON_GetArraySize(j), i = 0;
    *out = ft_malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!*out)
        return oom(r);
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        if (!cJSON_IsString(it))
            return gerr(r, "\"%s\"[%d] must be a tensor name, got %s", key, i, jtype(it));
        int t = ft_graph_find(r->g, it->valuestring);
        if (t < 0)
            return gerr(r, "\"%s\" names '%s', which is neither declared under \"tensors\" nor produced by a node", key,
                        it->valuestring);
        if (r->g->tensors[t].flags & flag)
            return gerr(r, "\"%s\" lists '%s' twice", key, it->valuestring);
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
        return gerr(r, "the file contains a NUL byte at offset %zu; a JSON graph is UTF-8 text", strlen(text));
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
        return ft_err(r->err, FT_EGRAPH, "%s:%d:%d: JSON syntax error near '%s'", g->file, line, col, near);
    }
    ft_status st = FT_OK;
    const cJSON *it;
    if (!cJSON_IsObject(doc)) {
        st = gerr(r, "the top level must be a JSON object with \"ftrun\": 1, got %s", jtype(doc));
        goto out;
    }
    const cJSON *jv = cJSON_GetObjectItemCaseSensitive(doc, "ftrun");
    int64_t ver;
    if (!jv) {
        st = gerr(r, "missing \"ftrun\": 1 (the format version); is this an ftrun graph?");
        goto out;
    }
    if (json_int(jv, &ver) || cJSON_IsBool(jv) || ver < 1) {
        st = gerr(r, "\"ftrun\" must be the format version 1, got %s", jtype(jv));
        goto out;
    }
    if (ver > 1) {
        st = gerr(r, "format version %lld is newer than this ftrun supports (1); upgrade ftrun", (long long)ver);
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
            st = gerr(r, "\"name\" must be a string, got %s", jtype(jname));
            goto out;
        }
        free(g->name);
        if (!(g->name = ft_strdup(jname->valuestring))) {
            st = oom(r);
            goto out;
        }
    }
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(doc, "tensors");
    if (jt && !cJSON_IsObject(jt)) {
        st = gerr(r, "\"tensors\" must be an object (tensor name -> declaration), got %s", jtype(jt));
        goto out;
    }
    if (jt)
        cJSON_ArrayForEach(it, jt) if ((st = parse_tensor_decl(r, it))) goto out;
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    if (!cJSON_IsArray(jn)) {
        st = gerr(r, "\"nodes\" must be an array of nodes, got %s", jtype(jn));
        goto out;
    }
    int nn = cJSON_GetArraySize(jn);
    if (nn > MAX_NODES) {
        st = gerr(r, "%d nodes exceed the limit of %d", nn, MAX_NODES);
        goto out;
    }
    g->nodes = ft_calloc((size_t)(nn ? nn : 1), sizeof *g->nodes);
    if (!g->nodes) {
        st = oom(r);
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
        st = gerr(r, "missing \"outputs\": a graph needs at least one output");
        goto out;
    }
    if ((st = parse_name_list(r, jout, "outputs", &g->outputs, &g->n_outputs, FT_TF_OUTPUT)))
        goto out;
    if (g->n_outputs == 0)
        st = gerr(r, "\"outputs\" is empty: a graph needs at least one output");
    if (!st)
        st = resolve_dims(r);
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
