/* A ModelProto decoded with its graph's initializers taken one at a time.
 *
 * protobuf-c decodes a whole message from one buffer and copies every bytes
 * field out of it, so decoding a model the usual way holds its weights twice
 * at the peak: the file's bytes and the decoded copy. Here the top-level
 * message is scanned on the wire (ModelProto field 7, the graph; GraphProto
 * field 5, its initializers: onnx.proto), the model is decoded from a copy of
 * its bytes without the initializers (small: nodes, names, attributes), and
 * each initializer is then decoded from its own range of the file's bytes.
 * When those bytes are a read-only file mapping, each range is handed back
 * to the kernel (MADV_DONTNEED) once decoded, so the file's pages and the
 * decoded weights are not resident together. The decoded message is the one
 * the single decode gives (same fields, same order); a scan that meets
 * anything it does not expect (a group, a truncated field, two graph fields,
 * an initializer that is not length-delimited) answers NULL with *fallback
 * set, and the caller decodes the usual way, which also words the error.
 *
 * Ownership: the message returned is freed with
 * onnx__model_proto__free_unpacked(m, &ft_pb_allocator), like any other. */
#include "onnx.h"
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A varint at *p (< end): its value, *p moved past it; -1 when malformed. */
static int varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The field at *p: number, wire type, and the range of its payload (for
 * wire type 2, past the length); *p moved past the whole field. -1 when the
 * field is malformed or a group (wire types 3, 4). */
static int field(const unsigned char **p, const unsigned char *end, uint64_t *num, int *wt, const unsigned char **v0,
                 const unsigned char **v1)
{
    uint64_t key, n;
    if (varint(p, end, &key))
        return -1;
    *num = key >> 3, *wt = (int)(key & 7);
    switch (*wt) {
    case 0:
        *v0 = *p;
        if (varint(p, end, &n))
            return -1;
        break;
    case 1:
    case 5:
        n = *wt == 1 ? 8 : 4;
        if ((uint64_t)(end - *p) < n)
            return -1;
        *v0 = *p;
        *p += n;
        break;
    case 2:
        if (varint(p, end, &n) || (uint64_t)(end - *p) < n)
            return -1;
        *v0 = *p;
        *p += n;
        break;
    default:
        return -1;
    }
    *v1 = *p;
    return 0;
}

static size_t put_varint(unsigned char *o, uint64_t v)
{
    size_t k = 0;
    do {
        o[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return k;
}

/* Page-aligned inside of [a, a + n) handed back to the kernel. */
static void drop_pages(const unsigned char *a, size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0)
        return;
    uintptr_t s = ((uintptr_t)a + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1), e = ((uintptr_t)a + n) & ~((uintptr_t)pg - 1);
    if (e > s)
        (void)madvise((void *)s, e - s, MADV_DONTNEED);
}

Onnx__ModelProto *ft_onnx_unpack_split(const unsigned char *buf, size_t len, int mapped, int *fallback)
{
    *fallback = 1;
    const unsigned char *p = buf, *end = buf + len, *g0 = NULL, *g1 = NULL, *gkey = NULL;
    uint64_t num;
    int wt;
    const unsigned char *v0, *v1;
    while (p < end) { /* the top level: find the one graph field */
        const unsigned char *f0 = p;
        if (field(&p, end, &num, &wt, &v0, &v1))
            return NULL;
        if (num == 7) {
            if (wt != 2 || g0)
                return NULL;
            gkey = f0, g0 = v0, g1 = v1;
        }
    }
    if (!g0)
        return NULL;
    size_t n_init = 0;
    for (p = g0; p < g1;) { /* the graph: count its initializers */
        if (field(&p, g1, &num, &wt, &v0, &v1))
            return NULL;
        if (num == 5 && wt != 2)
            return NULL;
        n_init += num == 5;
    }
    if (n_init == 0)
        return NULL;
    /* the model's bytes without the initializers: what precedes the graph
     * field, the graph field with a new length, what follows it */
    size_t kept = 0;
    for (p = g0; p < g1;) {
        const unsigned char *f0 = p;
        (void)field(&p, g1, &num, &wt, &v0, &v1);
        if (num != 5)
            kept += (size_t)(p - f0);
    }
    unsigned char *small = ft_malloc((size_t)(gkey - buf) + 1 + 10 + kept + (size_t)(end - g1));
    const unsigned char **r0 = ft_malloc(n_init * sizeof *r0), **r1 = ft_malloc(n_init * sizeof *r1);
    Onnx__TensorProto **inits = ft_pb_allocator.alloc(NULL, n_init * sizeof *inits);
    Onnx__ModelProto *m = NULL;
    *fallback = 0;
    if (!small || !r0 || !r1 || !inits)
        goto done;
    size_t o = (size_t)(gkey - buf), k = 0;
    memcpy(small, buf, o);
    small[o++] = 0x3a; /* field 7, wire type 2 */
    o += put_varint(small + o, kept);
    for (p = g0; p < g1;) {
        const unsigned char *f0 = p;
        (void)field(&p, g1, &num, &wt, &v0, &v1);
        if (num == 5) {
            r0[k] = v0, r1[k] = v1, k++;
        } else {
            memcpy(small + o, f0, (size_t)(p - f0));
            o += (size_t)(p - f0);
        }
    }
    memcpy(small + o, g1, (size_t)(end - g1));
    o += (size_t)(end - g1);
    m = onnx__model_proto__unpack(&ft_pb_allocator, o, small);
    if (!m || !m->graph || m->graph->n_initializer) { /* the small model is what the whole one would be */
        *fallback = m != NULL || !ft_pb_alloc_failed(0);
        goto done;
    }
    for (k = 0; k < n_init; k++) {
        inits[k] = onnx__tensor_proto__unpack(&ft_pb_allocator, (size_t)(r1[k] - r0[k]), r0[k]);
        if (!inits[k]) {
            *fallback = !ft_pb_alloc_failed(0);
            break;
        }
        if (mapped)
            drop_pages(r0[k], (size_t)(r1[k] - r0[k]));
    }
    if (k < n_init) {
        while (k > 0)
            onnx__tensor_proto__free_unpacked(inits[--k], &ft_pb_allocator);
        goto done;
    }
    m->graph->initializer = inits;
    m->graph->n_initializer = n_init;
    inits = NULL;
done:
    if (inits) {
        ft_pb_allocator.free(NULL, inits);
        if (m) {
            onnx__model_proto__free_unpacked(m, &ft_pb_allocator);
            m = NULL;
        }
    }
    free(small);
    free(r0);
    free(r1);
    return m;
}
