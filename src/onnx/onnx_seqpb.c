/* SequenceProto and OptionalProto files (the messages of ONNX's data schema, the files
 * of a sequence or optional input or output in ONNX's test folders). Debian's
 * schema (/usr/include/onnx/onnx.proto) lacks them, so their few fields are
 * read here from the protobuf wire format:
 *
 *   SequenceProto: 1 name, 2 elem_type (1 tensor), 3 tensor_values (repeated
 *                  TensorProto), 4 sparse, 5 sequences, 6 maps, 7 optionals
 *   OptionalProto: 1 name, 2 elem_type (0 none, 1 tensor, 3 sequence),
 *                  3 tensor_value, 4 sparse, 5 sequence_value, 6 map, 7 optional
 *
 * Each tensor is a TensorProto read by ft_pb_parse (onnx_tensor.c). */
#include <stdlib.h>
#include <string.h>

#include "onnx.h"

enum { SEQ_FILE_MAX = 4096 }; /* the most tensors a file may hold */

typedef struct field {
    unsigned num, wt;
    uint64_t v;               /* a varint's value */
    const unsigned char *p;   /* a length-delimited field's bytes */
    size_t len;
} field;

/* The field at *pos of buf[0..n): 1 read, 0 at the end, -1 malformed. */
static int next_field(const unsigned char *b, size_t n, size_t *pos, field *f)
{
    if (*pos >= n)
        return 0;
    uint64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && (v[0] & 7) != 0 && (v[0] & 7) != 2)
            break;
        int sh = 0;
        for (;;) {
            if (*pos >= n || sh > 63)
                return -1;
            unsigned char c = b[(*pos)++];
            v[k] |= (uint64_t)(c & 0x7f) << sh;
            sh += 7;
            if (!(c & 0x80))
                break;
        }
    }
    f->num = (unsigned)(v[0] >> 3);
    f->wt = (unsigned)(v[0] & 7);
    f->v = v[1];
    f->p = NULL;
    f->len = 0;
    if (f->num == 0)
        return -1;
    if (f->wt == 0)
        return 1;
    size_t skip = f->wt == 1 ? 8 : f->wt == 5 ? 4 : 0;
    if (f->wt == 2) {
        if (f->v > n - *pos)
            return -1;
        f->p = b + *pos;
        f->len = (size_t)f->v;
        skip = f->len;
    } else if (!skip)
        return -1;
    if (skip > n - *pos)
        return -1;
    *pos += skip;
    return 1;
}

typedef struct vals {
    ft_npy *a;
    int n, cap;
} vals;

static ft_status malformed(const char *path, const char *what, ft_error *err)
{
    return ft_err(err, FT_EGRAPH, "%s: not an ONNX %s file (the protobuf is malformed or truncated)", path, what);
}

static ft_status add_tensor(const char *path, const field *f, vals *v, ft_error *err)
{
    if (f->wt != 2)
        return malformed(path, "SequenceProto/OptionalProto", err);
    if (v->n >= SEQ_FILE_MAX)
        return ft_err(err, FT_EGRAPH, "%s: holds more than %d tensors", path, SEQ_FILE_MAX);
    if (ft_grow(&v->a, &v->cap, v->n, sizeof *v->a, 8))
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    ft_status st = ft_pb_parse(path, f->p, f->len, &v->a[v->n], err);
    if (st) {
        ft_err_prefix(err, "tensor %d", v->n);
        return st;
    }
    v->n++;
    return FT_OK;
}

static const char *unsupported_field(unsigned num)
{
    switch (num) {
    case 4: return "sparse tensors";
    case 5: return "sequences";
    case 6: return "maps";
    case 7: return "optional values";
    default: return NULL;
    }
}

static ft_status parse_seq(const char *path, const unsigned char *b, size_t n, vals *v, ft_error *err)
{
    size_t pos = 0;
    field f;
    int r;
    while ((r = next_field(b, n, &pos, &f)) > 0) {
        ft_status st = FT_OK;
        if (f.num == 2 && f.wt == 0 && f.v != 0 && f.v != 1)
            st = ft_err(err, FT_EGRAPH, "%s: a sequence of elem_type %llu (ftrun reads sequences of tensors)", path,
                        (unsigned long long)f.v);
        else if (f.num == 3)
            st = add_tensor(path, &f, v, err);
        else if (unsupported_field(f.num))
            st = ft_err(err, FT_EGRAPH, "%s: a sequence of %s (ftrun reads sequences of tensors)", path,
                        unsupported_field(f.num));
        if (st)
            return st;
    }
    return r < 0 ? malformed(path, "SequenceProto", err) : FT_OK;
}

ft_status ft_pb_parse_values(const char *path, const unsigned char *buf, size_t n, int optional, ft_npy **out, int *count,
                             ft_error *err)
{
    *out = NULL;
    *count = 0;
    vals v = {0};
    ft_status st = FT_OK;
    int present = !optional;
    if (!optional)
        st = parse_seq(path, buf, n, &v, err);
    size_t pos = 0;
    field f;
    int r = 0;
    while (optional && !st && (r = next_field(buf, n, &pos, &f)) > 0) {
        if (f.num == 2 && f.wt == 0 && f.v != 0 && f.v != 1 && f.v != 3)
            st = ft_err(err, FT_EGRAPH, "%s: an optional of elem_type %llu (ftrun reads optional tensors and sequences)",
                        path, (unsigned long long)f.v);
        else if ((f.num == 3 || f.num == 5) && present)
            st = ft_err(err, FT_EGRAPH, "%s: an optional holding two values", path);
        else if (f.num == 3) {
            present = 1;
            st = add_tensor(path, &f, &v, err);
        } else if (f.num == 5) {
            present = 1;
            st = f.wt == 2 ? parse_seq(path, f.p, f.len, &v, err) : malformed(path, "OptionalProto", err);
        } else if (unsupported_field(f.num))
            st = ft_err(err, FT_EGRAPH, "%s: an optional holding %s (ftrun reads optional tensors and sequences)", path,
                        unsupported_field(f.num));
    }
    if (!st && r < 0)
        st = malformed(path, "OptionalProto", err);
    if (st) {
        for (int i = 0; i < v.n; i++)
            ft_npy_clear(&v.a[i]);
        free(v.a);
        return st;
    }
    *out = v.a;
    *count = present ? v.n : -1;
    return FT_OK;
}
