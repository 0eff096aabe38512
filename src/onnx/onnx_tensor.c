/* TensorProto <-> arrays: initializers, Constant values and .pb tensor files.
 * Values come from raw_data (little-endian, as the ONNX spec says), from the
 * typed fields (float_data, int32_data, int64_data, double_data, uint64_data)
 * or from an external file beside the model; strings from string_data
 * (interned, graph/str.h; each must be valid UTF-8). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "../graph/lowp.h"
#include "../graph/str.h"

static const struct {
    int32_t onnx;
    const char *name;
    int ft; /* ft_dtype, or -1 */
} types[] = {
    {0, "UNDEFINED", -1},  {1, "FLOAT", FT_F32},   {2, "UINT8", FT_U8},       {3, "INT8", FT_I8},
    {4, "UINT16", FT_U16}, {5, "INT16", FT_I16},   {6, "INT32", FT_I32},      {7, "INT64", FT_I64},
    {8, "STRING", FT_STRING},     {9, "BOOL", FT_BOOL},   {10, "FLOAT16", FT_F16},   {11, "DOUBLE", FT_F64},
    {12, "UINT32", FT_U32}, {13, "UINT64", FT_U64},     {14, "COMPLEX64", -1},     {15, "COMPLEX128", -1},
    {16, "BFLOAT16", FT_BF16}, {17, "FLOAT8E4M3FN", FT_F8E4M3FN}, {18, "FLOAT8E4M3FNUZ", FT_F8E4M3FNUZ},
    {19, "FLOAT8E5M2", FT_F8E5M2}, {20, "FLOAT8E5M2FNUZ", FT_F8E5M2FNUZ}, {21, "UINT4", FT_U4}, {22, "INT4", FT_I4},
    {23, "FLOAT4E2M1", FT_F4E2M1}, {24, "FLOAT8E8M0", FT_F8E8M0}, {25, "UINT2", FT_U2}, {26, "INT2", FT_I2},
};

static int alloc_failed;
static void *pb_alloc(void *data, size_t size)
{
    (void)data;
    void *p = malloc(size);
    if (!p)
        alloc_failed = 1;
    return p;
}
static void pb_free(void *data, void *p)
{
    (void)data;
    free(p);
}
ProtobufCAllocator ft_pb_allocator = {pb_alloc, pb_free, NULL};

int ft_pb_alloc_failed(int reset)
{
    int f = alloc_failed;
    if (reset)
        alloc_failed = 0;
    return f;
}

int ft_onnx_dtype(int32_t onnx_type, ft_dtype *dt)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(types); i++)
        if (types[i].onnx == onnx_type) {
            if (types[i].ft < 0)
                return -1;
            *dt = (ft_dtype)types[i].ft;
            return 0;
        }
    return -1;
}

const char *ft_onnx_type_name(int32_t onnx_type)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(types); i++)
        if (types[i].onnx == onnx_type)
            return types[i].name;
    return "an unknown type";
}

int32_t ft_onnx_type_of(ft_dtype dt)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(types); i++)
        if (types[i].ft == (int)dt)
            return types[i].onnx;
    return 0;
}

/* Check that path (rel resolved against dir) stays inside dir. */
static ft_status check_inside(const char *file, const char *what, const char *dir, const char *rel, const char *path,
                              ft_error *err)
{
    if (rel[0] == '/')
        return ft_err(err, FT_EGRAPH, "%s: %s: external data location is an absolute path (%s); a model may only read "
                      "files inside its own folder (pass --allow-external-files to allow it)", file, what, rel);
    char *base = realpath(dir, NULL), *real = realpath(path, NULL);
    ft_status st = FT_OK;
    if (base && real) {
        size_t bl = strlen(base);
        int inside = strncmp(real, base, bl) == 0 && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
        if (!inside)
            st = ft_err(err, FT_EGRAPH, "%s: %s: external data %s resolves to %s, outside the model's folder %s; a model "
                        "may only read files inside its own folder (pass --allow-external-files to allow it)",
                        file, what, rel, real, base);
    }
    free(base);
    free(real);
    return st;
}

static ft_status read_external(const Onnx__TensorProto *tp, const char *file, const char *what, const char *dir,
                               int allow_external, unsigned char *dst, size_t need, ft_error *err)
{
    if (!dir)
        return ft_err(err, FT_EGRAPH, "%s: %s: external data is not allowed in a tensor file", file, what);
    const char *loc = NULL;
    uint64_t offset = 0, length = UINT64_MAX;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key || !e->value)
            continue;
        char *end;
        if (!strcmp(e->key, "location"))
            loc = e->value;
        else if (!strcmp(e->key, "offset") || !strcmp(e->key, "length")) {
            errno = 0;
            unsigned long long v = strtoull(e->value, &end, 10);
            if (errno || end == e->value || *end || e->value[0] == '-')
                return ft_err(err, FT_EGRAPH, "%s: %s: external data %s '%s' is not a number", file, what, e->key, e->value);
            *(!strcmp(e->key, "offset") ? &offset : &length) = v;
        }
    }
    if (!loc || !*loc)
        return ft_err(err, FT_EGRAPH, "%s: %s: external data without a location", file, what);
    size_t dl = strlen(dir), ll = strlen(loc);
    char *path = ft_malloc(dl + ll + 2);
    if (!path)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    snprintf(path, dl + ll + 2, "%s/%s", dir, loc);
    ft_status st = allow_external ? FT_OK : check_inside(file, what, dir, loc, path, err);
    const unsigned char *buf = NULL;
    size_t len = 0;
    if (!st && (st = ft_map_file(path, 0, &buf, &len, err)))
        ft_err_prefix(err, "%s: %s: external data", file, what);
    if (!st) {
        if (length != UINT64_MAX && length != need)
            st = ft_err(err, FT_EGRAPH, "%s: %s: external data length %llu but the tensor needs %zu bytes", file, what,
                        (unsigned long long)length, need);
        else if (offset > len || len - offset < need)
            st = ft_err(err, FT_EGRAPH, "%s: %s: external data %s holds %zu bytes; the tensor needs %zu bytes at offset %llu",
                        file, what, path, len, need, (unsigned long long)offset);
        else if (need && dst) /* dst NULL: the checks alone, before the tensor is allocated */
            memcpy(dst, buf + offset, need);
        ft_unmap_file(buf, len);
    }
    free(path);
    return st;
}

/* The low-precision dtypes in ONNX's files: the 4-bit ones two to a byte,
 * the 2-bit ones four to a byte, the first element in the low bits (raw_data,
 * and int32_data with one byte per entry); in memory one byte per element
 * (graph/lowp.h), the integers sign-extended. */
static uint64_t packed_bytes(ft_dtype dt, uint64_t numel)
{
    int bits = ft_dtype_is_lowp(dt) ? ft_lowp_bits(dt) : 8;
    return bits == 8 ? numel * ft_dtype_size(dt) : (numel * (uint64_t)bits + 7) / 8;
}

/* Element i of packed data p (bits per element), as held in memory. */
static uint8_t unpack_el(ft_dtype dt, int bits, const uint8_t *p, uint64_t i)
{
    const int per = 8 / bits, sh = (int)(i % (uint64_t)per) * bits;
    const uint8_t v = (uint8_t)((p[i / (uint64_t)per] >> sh) & ((1 << bits) - 1));
    if (dt == FT_I4 || dt == FT_I2)
        return (uint8_t)ft_lowi_wrap(dt, v);
    return v;
}

/* Unpack numel elements of src (packed) into dst (one byte each); in place
 * when dst == src works, from the last element back. */
static void unpack_lowp(ft_dtype dt, uint8_t *dst, const uint8_t *src, uint64_t numel)
{
    const int bits = ft_lowp_bits(dt);
    if (bits == 8) {
        if (dst != src)
            memmove(dst, src, (size_t)numel);
        return;
    }
    for (uint64_t i = numel; i-- > 0;)
        dst[i] = unpack_el(dt, bits, src, i);
}

/* A string tensor's string_data: numel entries, each valid UTF-8. */
static ft_status read_strings(const Onnx__TensorProto *tp, const ft_shape *shape, uint64_t numel, unsigned char *dst,
                              const char *file, const char *what, ft_error *err)
{
    if (tp->n_string_data != numel)
        return ft_err(err, FT_EGRAPH, "%s: %s: its dims %s need %llu strings but its string_data holds %zu: the model is "
                      "malformed or truncated", file, what, ft_shape_str(shape, (char[FT_SHAPE_STR]){0}),
                      (unsigned long long)numel, tp->n_string_data);
    for (uint64_t i = 0; i < numel; i++) {
        const ProtobufCBinaryData *b = &tp->string_data[i];
        if (!ft_utf8_valid((const char *)b->data, b->len))
            return ft_err(err, FT_EGRAPH, "%s: %s: string %llu is not valid UTF-8 (ftrun's strings are UTF-8 text)", file,
                          what, (unsigned long long)i);
        if (dst && ft_str_make((const char *)b->data, b->len, &((const ft_str **)dst)[i]))
            return ft_err(err, FT_ERUNTIME, "%s: out of memory reading %s", file, what);
    }
    return FT_OK;
}

/* Values of a typed field, converted to the tensor's dtype. */
static ft_status read_typed(const Onnx__TensorProto *tp, ft_dtype dt, const ft_shape *shape, uint64_t numel, unsigned char *dst,
                            const char *file, const char *what, ft_error *err)
{
    size_t have = 0;
    const char *field = "?";
    if (dt == FT_STRING)
        return read_strings(tp, shape, numel, dst, file, what, err);
    switch (dt) {
    case FT_F32:
        have = tp->n_float_data, field = "float_data";
        break;
    case FT_F64:
        have = tp->n_double_data, field = "double_data";
        break;
    case FT_I64:
        have = tp->n_int64_data, field = "int64_data";
        break;
    case FT_U32:
    case FT_U64:
        have = tp->n_uint64_data, field = "uint64_data";
        break;
    case FT_I8:
    case FT_I16:
    case FT_I32:
    case FT_U8:
    case FT_U16:
    case FT_BOOL:
    case FT_F16:
    case FT_BF16:
        have = tp->n_int32_data, field = "int32_data";
        break;
    case FT_STRING: case FT_DTYPE_COUNT:
        have = 0, field = "?";
        break;
    FT_CASE_LOWP: /* one packed byte per entry (one element for the 8-bit types) */
        have = tp->n_int32_data, field = "int32_data";
        if (have != packed_bytes(dt, numel))
            return ft_err(err, FT_EGRAPH, "%s: %s: its dims %s (%s, %d bits each) need %llu entries but its int32_data "
                          "holds %zu: the model is malformed or truncated", file, what,
                          ft_shape_str(shape, (char[FT_SHAPE_STR]){0}), ft_dtype_name(dt), ft_lowp_bits(dt),
                          (unsigned long long)packed_bytes(dt, numel), have);
        for (uint64_t i = 0; dst && i < have; i++)
            dst[i] = (uint8_t)tp->int32_data[i];
        if (dst)
            unpack_lowp(dt, dst, dst, numel);
        return FT_OK;
    }
    if (have != numel)
        return ft_err(err, FT_EGRAPH, "%s: %s: its dims %s need %llu values but its %s holds %zu: the model is malformed or "
                      "truncated", file, what, ft_shape_str(shape, (char[FT_SHAPE_STR]){0}), (unsigned long long)numel, field, have);
    for (uint64_t i = 0; dst && i < numel; i++) { /* dst NULL: the check alone */
        switch (dt) {
        case FT_F32:
            ((float *)dst)[i] = tp->float_data[i];
            break;
        case FT_F64:
            ((double *)dst)[i] = tp->double_data[i];
            break;
        case FT_I64:
            ((int64_t *)dst)[i] = tp->int64_data[i];
            break;
        case FT_I32:
            ((int32_t *)dst)[i] = tp->int32_data[i];
            break;
        case FT_I16:
            ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
            break;
        case FT_I8:
            ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
            break;
        case FT_U8:
            dst[i] = (uint8_t)tp->int32_data[i];
            break;
        case FT_U16:
            ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
            break;
        case FT_U32:
            ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
            break;
        case FT_U64:
            ((uint64_t *)dst)[i] = tp->uint64_data[i];
            break;
        case FT_BOOL:
            dst[i] = tp->int32_data[i] != 0;
            break;
        case FT_F16:
        case FT_BF16:
            ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i]; /* the bits, as the spec stores them */
            break;
        case FT_STRING: case FT_DTYPE_COUNT:
        FT_CASE_LOWP: /* above */
            break;
        }
    }
    return FT_OK;
}

static ft_status decode(const Onnx__TensorProto *tp, Onnx__TensorProto *take, const char *file, const char *what,
                        const char *dir, int allow_external, ft_npy *out, ft_error *err);

ft_status ft_onnx_tensor_decode(const Onnx__TensorProto *tp, const char *file, const char *what, const char *dir,
                                int allow_external, ft_npy *out, ft_error *err)
{
    return decode(tp, NULL, file, what, dir, allow_external, out, err);
}

ft_status ft_onnx_tensor_take(Onnx__TensorProto *tp, const char *file, const char *what, const char *dir,
                              int allow_external, ft_npy *out, int *taken, ft_error *err)
{
    const void *raw = tp->raw_data.data;
    ft_status st = decode(tp, tp, file, what, dir, allow_external, out, err);
    *taken = !st && raw && out->data == raw;
    return st;
}

/* take: tp itself, when its raw_data buffer may become out's value. */
static ft_status decode(const Onnx__TensorProto *tp, Onnx__TensorProto *take, const char *file, const char *what,
                        const char *dir, int allow_external, ft_npy *out, ft_error *err)
{
    memset(out, 0, sizeof *out);
    ft_dtype dt;
    if (ft_onnx_dtype(tp->data_type, &dt))
        return ft_err(err, FT_EGRAPH, "%s: %s has element type %s (%d), which ftrun does not support", file, what,
                      ft_onnx_type_name(tp->data_type), (int)tp->data_type);
    if (tp->segment)
        return ft_err(err, FT_EGRAPH, "%s: %s is a segment of a tensor, which ftrun does not support", file, what);
    if (tp->n_dims > FT_MAX_RANK)
        return ft_err(err, FT_EGRAPH, "%s: %s has rank %zu (the limit is %d)", file, what, tp->n_dims, FT_MAX_RANK);
    out->dtype = dt;
    out->shape.rank = (int)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return ft_err(err, FT_EGRAPH, "%s: %s has a negative dim (%lld)", file, what, (long long)tp->dims[i]);
        out->shape.dims[i] = tp->dims[i];
    }
    uint64_t numel, bytes;
    if (ft_shape_numel(&out->shape, &numel) || ft_mul_overflow(numel, ft_dtype_size(dt), &bytes) ||
        bytes > FT_MAX_TENSOR_BYTES) {
        char s[FT_SHAPE_STR];
        return ft_err(err, FT_EGRAPH, "%s: %s of shape %s is too large (limit %llu bytes)", file, what,
                      ft_shape_str(&out->shape, s), (unsigned long long)FT_MAX_TENSOR_BYTES);
    }
    /* the data must hold what the dims promise, checked before the bytes are
     * allocated: dims of 40 GB over a raw_data of 16 bytes is a malformed
     * model (exit status 3), not an out-of-memory failure */
    int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const uint64_t packed = packed_bytes(dt, numel); /* bytes in the file: fewer for the 4- and 2-bit dtypes */
    ft_status st = FT_OK;
    if (dt == FT_STRING && (external || tp->has_raw_data))
        st = ft_err(err, FT_EGRAPH, "%s: %s: a string tensor's values are in string_data, not in %s", file, what,
                    external ? "external data" : "raw_data");
    else if (external)
        st = read_external(tp, file, what, dir, allow_external, NULL, (size_t)packed, err);
    else if (tp->has_raw_data && tp->raw_data.len != packed)
        st = ft_err(err, FT_EGRAPH, "%s: %s: its dims %s (%s) need %llu bytes but its raw_data holds %zu: the model is "
                    "malformed or truncated", file, what, ft_shape_str(&out->shape, (char[FT_SHAPE_STR]){0}),
                    ft_dtype_name(dt), (unsigned long long)packed, tp->raw_data.len);
    else if (!tp->has_raw_data)
        st = read_typed(tp, dt, &out->shape, numel, NULL, file, what, err);
    if (st)
        return st;
    if (take && !external && tp->has_raw_data && packed == bytes && bytes > 0 && dt != FT_BOOL &&
        !ft_dtype_is_lowp(dt)) {
        out->data = take->raw_data.data; /* protobuf-c frees no buffer it no longer points to */
        out->nbytes = (size_t)bytes;
        take->raw_data.data = NULL;
        take->raw_data.len = 0;
        take->has_raw_data = 0;
        return FT_OK;
    }
    unsigned char *data = ft_malloc(bytes ? (size_t)bytes : 1);
    if (!data)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory reading %s (%llu bytes)", file, what, (unsigned long long)bytes);
    if (external)
        st = read_external(tp, file, what, dir, allow_external, data, (size_t)packed, err);
    else if (tp->has_raw_data) {
        if (packed)
            memcpy(data, tp->raw_data.data, (size_t)packed);
        if (dt == FT_BOOL)
            for (uint64_t i = 0; i < numel; i++)
                data[i] = data[i] != 0;
    } else
        st = read_typed(tp, dt, &out->shape, numel, data, file, what, err);
    if (!st && ft_dtype_is_lowp(dt) && (external || tp->has_raw_data))
        unpack_lowp(dt, data, data, numel);
    if (st) {
        free(data);
        return st;
    }
    out->data = data;
    out->nbytes = (size_t)bytes;
    return FT_OK;
}

ft_status ft_pb_parse(const char *path, const unsigned char *buf, size_t n, ft_npy *out, ft_error *err)
{
    memset(out, 0, sizeof *out);
    ft_pb_alloc_failed(1);
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&ft_pb_allocator, n, buf);
    if (!tp && ft_pb_alloc_failed(0))
        return ft_err(err, FT_ERUNTIME, "%s: out of memory reading the tensor", path);
    if (!tp)
        return ft_err(err, FT_EGRAPH, "%s: not a .npy, .npz or ONNX TensorProto file (the protobuf is malformed or "
                      "truncated)", path);
    ft_status st;
    if (!tp->has_data_type)
        st = ft_err(err, FT_EGRAPH, "%s: not an ONNX TensorProto (no data_type)", path);
    else
        st = ft_onnx_tensor_decode(tp, path, "the tensor", NULL, 0, out, err);
    onnx__tensor_proto__free_unpacked(tp, &ft_pb_allocator);
    return st;
}

ft_status ft_pb_write(FILE *f, const char *path, const char *name, ft_dtype dt, const ft_shape *s, const void *data,
                      ft_error *err)
{
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[FT_MAX_RANK];
    for (int i = 0; i < s->rank; i++)
        dims[i] = s->dims[i];
    tp.n_dims = (size_t)s->rank;
    tp.dims = dims;
    tp.has_data_type = 1;
    tp.data_type = ft_onnx_type_of(dt);
    tp.name = (char *)(name ? name : "");
    tp.has_raw_data = 1;
    tp.raw_data.len = (size_t)ft_numel(s) * ft_dtype_size(dt);
    tp.raw_data.data = (uint8_t *)data;
    uint8_t *packed = NULL;
    ProtobufCBinaryData *strs = NULL;
    if (dt == FT_STRING) { /* string_data: the pointers' bytes, not copied */
        const uint64_t n = ft_numel(s);
        strs = ft_calloc(n ? (size_t)n : 1, sizeof *strs);
        if (!strs)
            return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
        for (uint64_t i = 0; i < n; i++) {
            const ft_str *e = ((const ft_str *const *)data)[i];
            strs[i].len = ft_str_len(e);
            strs[i].data = (uint8_t *)ft_str_bytes(e);
        }
        tp.has_raw_data = 0;
        tp.n_string_data = (size_t)n;
        tp.string_data = strs;
    } else if (ft_dtype_is_lowp(dt) && ft_lowp_bits(dt) < 8) { /* two or four to a byte, low bits first */
        const uint64_t n = ft_numel(s);
        const int bits = ft_lowp_bits(dt), per = 8 / bits;
        tp.raw_data.len = (size_t)packed_bytes(dt, n);
        packed = ft_calloc(tp.raw_data.len ? tp.raw_data.len : 1, 1);
        if (!packed)
            return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
        for (uint64_t i = 0; i < n; i++)
            packed[i / (uint64_t)per] |= (uint8_t)((((const uint8_t *)data)[i] & ((1 << bits) - 1)) << (i % (uint64_t)per * (uint64_t)bits));
        tp.raw_data.data = packed;
    }
    size_t len = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = ft_malloc(len ? len : 1);
    if (!buf) {
        free(packed);
        free(strs);
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    }
    onnx__tensor_proto__pack(&tp, buf);
    free(packed);
    free(strs);
    size_t w = fwrite(buf, 1, len, f);
    free(buf);
    if (w != len)
        return ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno ? errno : EIO));
    return FT_OK;
}
