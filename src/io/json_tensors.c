/* JSON graph reader, tensor declarations (json_reader.h): dtype, shape
 * (numbers and named dims), the value sources "data", "file", "init" and
 * "blob", and the binding of named dims at load time (dims.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_reader.h"
#include "npy.h"
#include "../graph/elem.h"
#include "../graph/lowp.h"
#include "../graph/str.h"

/* A dim is a non-negative integer or a name (a symbolic dim: sym[i] gets
 * it, s->dims[i] is -1 until it is bound). *named counts the names. */
static ft_status parse_shape(reader *r, const char *tname, const cJSON *j, ft_shape *s, ft_symdim *sym, int *named)
{
    if (!cJSON_IsArray(j))
        return jr_terr(r, tname, "\"shape\" must be an array of non-negative integers and dim names, got %s", jr_jtype(j));
    int n = cJSON_GetArraySize(j);
    if (n > FT_MAX_RANK)
        return jr_terr(r, tname, "rank %d exceeds the maximum rank %d", n, FT_MAX_RANK);
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
                return jr_terr(r, tname, "\"shape\"[%d]: a dim name must be 1 to 256 bytes long", i);
            sym[i] = (ft_symdim){-1, it->valuestring};
            s->dims[i++] = -1;
            (*named)++;
            continue;
        }
        if (jr_json_int(it, &v) || v < 0 || cJSON_IsBool(it))
            return jr_terr(r, tname, "\"shape\"[%d] must be a non-negative integer or a dim name", i);
        sym[i] = (ft_symdim){v, NULL};
        s->dims[i++] = v;
    }
    return FT_OK;
}

static ft_status parse_dtype(reader *r, const char *tname, const cJSON *j, ft_dtype *dt)
{
    if (!cJSON_IsString(j))
        return jr_terr(r, tname, "\"dtype\" must be a string, got %s", jr_jtype(j));
    if (ft_dtype_parse(j->valuestring, dt) == 0)
        return FT_OK;
    static const char *const names[] = {"f16",     "bf16",     "f32",     "f64",     "i8",      "i16",
                                        "i32",     "i64",      "u8",      "u16",     "u32",     "u64",
                                        "bool",    "float16",  "bfloat16", "float32", "float64", "int8",
                                        "int16",   "int32",    "int64",   "uint8",   "uint16",  "uint32",
                                        "uint64",  "bool_",    "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz",
                                        "f8e8m0",  "f4e2m1",   "i4",      "u4",      "i2",      "u2"};
    char sug[256], list[256];
    ft_suggest(j->valuestring, names, (int)FT_ARRAY_LEN(names), sug, sizeof sug);
    return jr_terr(r, tname, "unknown dtype '%s'%s%s (expected %s)", j->valuestring, *sug ? "; " : "", sug,
                   ft_dtype_mask_str(FT_DT_ALL, list, sizeof list));
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
    if (t->dtype == FT_STRING) { /* JSON strings, UTF-8 by JSON's rule; interned (graph/str.h) */
        if (!cJSON_IsString(j))
            return jr_terr(f->r, t->name, "\"data\"[%llu]: expected a string for dtype string, got %s",
                           (unsigned long long)f->pos, jr_jtype(j));
        size_t len = strlen(j->valuestring);
        if (!ft_utf8_valid(j->valuestring, len))
            return jr_terr(f->r, t->name, "\"data\"[%llu]: not valid UTF-8", (unsigned long long)f->pos);
        if (ft_str_make(j->valuestring, len, &((const ft_str **)t->value)[f->pos]))
            return jr_terr(f->r, t->name, "out of memory");
        f->pos++;
        return FT_OK;
    }
    if (t->dtype == FT_BOOL) {
        int64_t v;
        if (jr_json_int(j, &v) || (v != 0 && v != 1))
            return jr_terr(f->r, t->name, "\"data\"[%llu]: expected true, false, 0 or 1 for bool, got %s",
                        (unsigned long long)f->pos, jr_jtype(j));
        ((uint8_t *)t->value)[f->pos++] = (uint8_t)v;
        return FT_OK;
    }
    if (t->dtype == FT_U64) { /* [0, 2^64): beyond int64, so read as a double (exact to 2^53, as every JSON integer here) */
        double d;
        if (jr_json_double(j, &d) || cJSON_IsString(j) || d != floor(d))
            return jr_terr(f->r, t->name, "\"data\"[%llu]: expected an integer, got %s", (unsigned long long)f->pos,
                           jr_jtype(j));
        if (d < 0 || d > 18446744073709551616.0)
            return jr_terr(f->r, t->name, "\"data\"[%llu]: %.17g is out of range for u64", (unsigned long long)f->pos, d);
        /* 18446744073709551615 (UINT64_MAX) parses to the double 2^64 */
        ((uint64_t *)t->value)[f->pos++] = d == 18446744073709551616.0 ? UINT64_MAX : (uint64_t)d;
        return FT_OK;
    }
    if (ft_dtype_is_int(t->dtype) || ft_dtype_in(t->dtype, FT_DT_LOWI)) {
        int64_t v;
        if (jr_json_int(j, &v)) {
            double d = 0;
            if (jr_json_double(j, &d) == 0)
                return jr_terr(f->r, t->name, "\"data\"[%llu]: %g is not an integer (dtype %s)",
                            (unsigned long long)f->pos, d, ft_dtype_name(t->dtype));
            return jr_terr(f->r, t->name, "\"data\"[%llu]: expected an integer, got %s", (unsigned long long)f->pos, jr_jtype(j));
        }
        static const int64_t lo[FT_DTYPE_COUNT] = {[FT_I8] = INT8_MIN, [FT_I16] = INT16_MIN, [FT_I32] = INT32_MIN,
                                                   [FT_I64] = INT64_MIN, [FT_I4] = -8, [FT_I2] = -2};
        static const int64_t hi[FT_DTYPE_COUNT] = {[FT_I8] = INT8_MAX,    [FT_I16] = INT16_MAX,   [FT_I32] = INT32_MAX,
                                                   [FT_I64] = INT64_MAX,  [FT_U8] = UINT8_MAX,    [FT_U16] = UINT16_MAX,
                                                   [FT_U32] = UINT32_MAX, [FT_I4] = 7, [FT_U4] = 15,
                                                   [FT_I2] = 1,           [FT_U2] = 3};
        if (v < lo[t->dtype] || v > hi[t->dtype])
            return jr_terr(f->r, t->name, "\"data\"[%llu]: %lld is out of range for %s", (unsigned long long)f->pos,
                        (long long)v, ft_dtype_name(t->dtype));
        ft_store_i64(t->value, t->dtype, (size_t)f->pos++, v);
        return FT_OK;
    }
    double d;
    if (jr_json_double(j, &d))
        return jr_terr(f->r, t->name, "\"data\"[%llu]: expected a number or \"nan\", \"inf\", \"-inf\", got %s%s%s%s",
                    (unsigned long long)f->pos, jr_jtype(j), cJSON_IsString(j) ? " '" : "",
                    cJSON_IsString(j) ? j->valuestring : "", cJSON_IsString(j) ? "'" : "");
    if (ft_dtype_in(t->dtype, FT_DT_LOWF)) /* the small floats: to nearest even, not saturating (as .npy values) */
        ((uint8_t *)t->value)[f->pos++] = ft_lowp_from_f64(t->dtype, d, 0, FT_RM_NEAREST);
    else
        ft_store_f64(t->value, t->dtype, (size_t)f->pos++, d);
    return FT_OK;
}

/* Nested arrays must match the shape exactly, dimension by dimension. */
static ft_status fill_nested(data_fill *f, const cJSON *j, int dim)
{
    const ft_tensor *t = f->t;
    if (dim == t->shape.rank) {
        if (cJSON_IsArray(j))
            return jr_terr(f->r, t->name, "\"data\" is nested deeper than the shape %s", ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}));
        return store_value(f, j);
    }
    if (!cJSON_IsArray(j))
        return jr_terr(f->r, t->name, "\"data\": nested arrays do not match the shape %s (found %s at depth %d)",
                    ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), jr_jtype(j), dim);
    int n = cJSON_GetArraySize(j);
    if (n != t->shape.dims[dim])
        return jr_terr(f->r, t->name, "\"data\": %d values at depth %d but the shape %s has %lld there", n, dim,
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
            return jr_terr(r, t->name, "\"data\" is a single value but the shape %s has %llu elements",
                        ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), (unsigned long long)f.numel);
        return store_value(&f, j);
    }
    if (nested && t->shape.rank > 1)
        return fill_nested(&f, j, 0);
    uint64_t n = (uint64_t)cJSON_GetArraySize(j);
    if (nested || n != f.numel)
        return jr_terr(r, t->name, "\"data\" has %llu values but the shape %s has %llu elements", (unsigned long long)n,
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
        return jr_terr(r, t->name, "\"file\" is an absolute path (%s); graph files may only read files inside their "
                    "own folder (pass --allow-external-files to allow it)", rel);
    char *base = realpath(r->g->dir, NULL), *real = realpath(path, NULL);
    ft_status st = FT_OK;
    if (base && real) {
        size_t bl = strlen(base);
        int inside = strncmp(real, base, bl) == 0 && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
        if (!inside)
            st = jr_terr(r, t->name, "\"file\" %s resolves to %s, outside the graph's folder %s; graph files may only "
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
        return jr_terr(r, t->name, "\"file\" must be a non-empty string (a path relative to the graph's folder)");
    int64_t offset = 0;
    if (joff && (jr_json_int(joff, &offset) || offset < 0))
        return jr_terr(r, t->name, "\"offset\" must be a non-negative integer");
    char *path = join_path(r->g->dir, jf->valuestring);
    if (!path)
        return jr_oom(r);
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
            st = jr_terr(r, t->name, "\"offset\" applies to raw files only, but %s is a .npy file", path);
        else if ((st = ft_npy_parse(path, buf, len, &a, r->err)) != FT_OK)
            ft_err_prefix(r->err, "%s: tensor '%s'", r->g->file, t->name);
        else {
            char origin[4200];
            snprintf(origin, sizeof origin, "file %s", path);
            if (ft_npy_to_dtype(&a, t->dtype) != 0)
                st = jr_terr(r, t->name, "%s has dtype %s but the tensor is declared %s", path, ft_dtype_name(a.dtype),
                          ft_dtype_name(t->dtype));
            else if (env) {
                if (!(st = ft_dimenv_fix(env, r->g->file, t->name, origin, t->shape.rank, sym, &a.shape, r->err))) {
                    t->shape = a.shape;
                    t->value_bytes = a.nbytes;
                }
            } else if (!ft_shape_eq(&a.shape, &t->shape))
                st = jr_terr(r, t->name, "%s has shape %s but the tensor is declared %s", path, ft_shape_str(&a.shape, s1),
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
        st = jr_terr(r, t->name, "%s is too short: %s %s needs %zu bytes from offset %lld, the file has %zu bytes", path,
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
    if (jr_json_double(j, out))
        return jr_terr(r, t->name, "\"init\": %s.%s must be a number, got %s", kind, key, jr_jtype(j));
    return FT_OK;
}

static ft_status load_init(reader *r, ft_tensor *t, const cJSON *j)
{
    static const char *const keys[] = {"fill", "arange", "uniform", "normal", "seed"};
    if (!cJSON_IsObject(j))
        return jr_terr(r, t->name, "\"init\" must be an object such as {\"fill\": 0}, got %s", jr_jtype(j));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s': \"init\"", t->name);
    ft_status st = jr_check_keys(r, j, keys, 5, what);
    if (st)
        return st;
    int kind = -1, count = 0;
    for (int k = 0; k < 4; k++)
        if (cJSON_GetObjectItemCaseSensitive(j, keys[k])) {
            kind = k;
            count++;
        }
    if (count != 1)
        return jr_terr(r, t->name, "\"init\" needs exactly one of fill, arange, uniform, normal (found %d)", count);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(j, keys[kind]);
    int64_t seed = 0;
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "seed");
    if (js && (jr_json_int(js, &seed) || seed < 0))
        return jr_terr(r, t->name, "\"init\": \"seed\" must be a non-negative integer");
    if (r->opts && r->opts->seed_override >= 0)
        seed = r->opts->seed_override;
    double a = 0, b = 0;
    if (kind == 0) {
        if (jr_json_double(spec, &a))
            return jr_terr(r, t->name, "\"init\": \"fill\" must be a number, got %s", jr_jtype(spec));
    } else {
        static const char *const pk[4][2] = {{"", ""}, {"start", "step"}, {"low", "high"}, {"mean", "std"}};
        static const double pd[4][2] = {{0, 0}, {0, 1}, {0, 1}, {0, 1}};
        if (!cJSON_IsObject(spec))
            return jr_terr(r, t->name, "\"init\": \"%s\" must be an object with %s and %s", keys[kind], pk[kind][0], pk[kind][1]);
        const char *const allowed[2] = {pk[kind][0], pk[kind][1]};
        snprintf(what, sizeof what, "tensor '%.120s': \"init\".%s", t->name, keys[kind]);
        if ((st = jr_check_keys(r, spec, allowed, 2, what)) || (st = init_param(r, t, spec, keys[kind], pk[kind][0], pd[kind][0], &a)) ||
            (st = init_param(r, t, spec, keys[kind], pk[kind][1], pd[kind][1], &b)))
            return st;
        if (kind == 2 && !(a <= b))
            return jr_terr(r, t->name, "\"init\": uniform needs low <= high (got %g, %g)", a, b);
        if (kind == 3 && !(b >= 0))
            return jr_terr(r, t->name, "\"init\": normal needs std >= 0 (got %g)", b);
    }
    ft_init_values(t->value, t->dtype, ft_numel(&t->shape), kind, a, b, (uint64_t)seed);
    return FT_OK;
}

/* Integers of a blob descriptor: exact in a JSON double up to 2^53. */
static int json_u64(const cJSON *j, uint64_t *v)
{
    int64_t x;
    if (cJSON_IsBool(j) || jr_json_int(j, &x) || x < 0 || x > ((int64_t)1 << 53))
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
        return jr_terr(r, t->name, "\"blob\" must be an object with offset, nbytes, encoding, stored and crc32, got %s",
                    jr_jtype(j));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s': \"blob\"", t->name);
    ft_status st = jr_check_keys(r, j, keys, 5, what);
    if (st)
        return st;
    for (int k = 0; k < 5; k++)
        if (!cJSON_GetObjectItemCaseSensitive(j, keys[k]))
            return jr_terr(r, t->name, "\"blob\" lacks \"%s\"", keys[k]);
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
        return jr_terr(r, t->name, "\"blob\": \"%s\" must be a non-negative integer%s", bad,
                    !strcmp(bad, "crc32") ? " below 2^32" : "");
    b.crc = (uint32_t)crc;
    const cJSON *je = cJSON_GetObjectItemCaseSensitive(j, "encoding");
    if (!cJSON_IsString(je) || (strcmp(je->valuestring, "raw") && strcmp(je->valuestring, "zlib")))
        return jr_terr(r, t->name, "\"blob\": \"encoding\" must be \"raw\" or \"zlib\", got %s%s%s%s", jr_jtype(je),
                    cJSON_IsString(je) ? " '" : "", cJSON_IsString(je) ? je->valuestring : "", cJSON_IsString(je) ? "'" : "");
    b.zlib = je->valuestring[0] == 'z';
    char s1[FT_SHAPE_STR];
    if (b.offset % FT_FTG_ALIGN)
        return jr_terr(r, t->name, "blob offset %llu is not a multiple of %d", (unsigned long long)b.offset, FT_FTG_ALIGN);
    if (b.nbytes != need)
        return jr_terr(r, t->name, "blob nbytes %llu does not match the declaration: %s %s is %llu bytes",
                    (unsigned long long)b.nbytes, ft_dtype_name(t->dtype), ft_shape_str(&t->shape, s1),
                    (unsigned long long)need);
    if (!b.zlib && b.stored != b.nbytes)
        return jr_terr(r, t->name, "raw blob stores %llu bytes but nbytes is %llu (a raw blob stores exactly nbytes)",
                    (unsigned long long)b.stored, (unsigned long long)b.nbytes);
    uint64_t d = r->blobs->data_bytes;
    if (b.offset > d || b.stored > d - b.offset)
        return jr_terr(r, t->name, "blob bytes [%llu, %llu) of the data section lie beyond the end of the file (the data section has %llu bytes)",
                    (unsigned long long)b.offset, (unsigned long long)(b.offset + b.stored), (unsigned long long)d);
    ft_blob_set *bs = r->blobs;
    if (ft_grow(&bs->v, &bs->cap, bs->n, sizeof *bs->v, 64))
        return jr_oom(r);
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
        return jr_terr(r, name, "shape %s of %s is too large (limit %llu bytes)", ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}),
                    ft_dtype_name(t->dtype), (unsigned long long)FT_MAX_TENSOR_BYTES);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(decl, "data"), *file = cJSON_GetObjectItemCaseSensitive(decl, "file"),
                *init = cJSON_GetObjectItemCaseSensitive(decl, "init"), *off = cJSON_GetObjectItemCaseSensitive(decl, "offset");
    const cJSON *blob = r->blobs ? cJSON_GetObjectItemCaseSensitive(decl, "blob") : NULL;
    if (!data && !file && !init && !blob)
        return FT_OK;
    if (t->dtype == FT_STRING && (init || blob || off))
        return jr_terr(r, name, "a string tensor's value is \"data\" (JSON strings) or \"file\" (a .npy of dtype U or "
                       "S), not %s", init ? "\"init\"" : blob ? "a blob" : "\"file\" with \"offset\"");
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

ft_status jr_parse_tensor_decl(reader *r, const cJSON *decl)
{
    static const char *const keys[] = {"dtype", "shape", "data", "file", "offset", "init", "blob"};
    const char *name = decl->string;
    if (!*name)
        return jr_gerr(r, "\"tensors\": a tensor name must not be empty");
    if (!cJSON_IsObject(decl))
        return jr_terr(r, name, "the declaration must be an object with \"dtype\" and \"shape\", got %s", jr_jtype(decl));
    char what[160];
    snprintf(what, sizeof what, "tensor '%.120s'", name);
    ft_status st = jr_check_keys(r, decl, keys, r->blobs ? 7 : 6, what);
    if (st)
        return st;
    if (ft_graph_find(r->g, name) >= 0)
        return jr_terr(r, name, "declared twice under \"tensors\"");
    int idx = jr_add_tensor(r, name);
    if (idx < 0)
        return jr_add_tensor_err(r, idx, name);
    ft_tensor *t = &r->g->tensors[idx];
    t->flags |= FT_TF_DECLARED | FT_TF_INFERRED;
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(decl, "dtype"), *js = cJSON_GetObjectItemCaseSensitive(decl, "shape");
    if (!jd)
        return jr_terr(r, name, "missing \"dtype\"");
    if (!js)
        return jr_terr(r, name, "missing \"shape\"");
    ft_symdim sym[FT_MAX_RANK];
    int named = 0;
    if ((st = parse_dtype(r, name, jd, &t->dtype)) || (st = parse_shape(r, name, js, &t->shape, sym, &named)))
        return st;
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(decl, "data"), *file = cJSON_GetObjectItemCaseSensitive(decl, "file"),
                *init = cJSON_GetObjectItemCaseSensitive(decl, "init"), *off = cJSON_GetObjectItemCaseSensitive(decl, "offset");
    const cJSON *blob = r->blobs ? cJSON_GetObjectItemCaseSensitive(decl, "blob") : NULL;
    int sources = !!data + !!file + !!init + !!blob;
    if (sources > 1)
        return jr_terr(r, name, "has %d value sources; give at most one of \"data\", \"file\", \"init\"%s", sources,
                    r->blobs ? ", \"blob\"" : "");
    if (off && !file)
        return jr_terr(r, name, "\"offset\" is only meaningful with \"file\"");
    if (!named)
        return load_value(r, t, decl);
    if (ft_grow(&r->p, &r->capp, r->np, sizeof *r->p, 8))
        return jr_oom(r);
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
ft_status jr_resolve_dims(reader *r)
{
    ft_graph *g = r->g;
    ft_dimenv *e = ft_dimenv_new(r->opts);
    if (!e)
        return jr_oom(r);
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
                st = jr_terr(r, t->name,
                          "dim %d ('%s') is not known, and its value (\"%s\") needs a concrete shape: pass --dim %s=N, or "
                          "bind '%s' through an input",
                          k, p->sym[k].name, has, p->sym[k].name, p->sym[k].name);
    }
    if (!st)
        st = ft_dimenv_finish(e, g->file, r->err);
    for (int i = 0; i < r->np && !st; i++) {
        const ft_tensor *t = &g->tensors[r->p[i].t];
        int fixed = 1;
        for (int k = 0; k < t->shape.rank; k++)
            fixed &= t->shape.dims[k] >= 0; /* else it has no value source (checked above) */
        if (!r->p[i].done && fixed)
            st = load_value(r, &g->tensors[r->p[i].t], r->p[i].decl);
    }
    ft_dimenv_free(e);
    return st;
}

