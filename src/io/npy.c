#include "npy.h"
#include "npy_str.h"
#include "../graph/elem.h"
#include "../graph/lowp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

int ft_npy_is_npy(const void *buf, size_t n) { return n >= 6 && memcmp(buf, MAGIC, 6) == 0; }

ft_status ft_read_file(const char *path, unsigned char **buf, size_t *len, ft_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ft_err(err, errno == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = errno;
        fclose(f);
        return ft_err(err, FT_EGRAPH, "%s: cannot read: %s", path,
                      S_ISDIR(sb.st_mode) ? "Is a directory" : e ? strerror(e) : "not a regular file");
    }
    if (fseeko(f, 0, SEEK_END) != 0) {
        fclose(f);
        return ft_err(err, FT_EGRAPH, "%s: cannot read: %s", path, strerror(errno));
    }
    off_t size = ftello(f);
    if (size < 0 || fseeko(f, 0, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        return ft_err(err, FT_EGRAPH, "%s: cannot read: %s", path, e ? strerror(e) : "not a regular file");
    }
    unsigned char *b = ft_malloc((size_t)size + 1);
    if (!b) {
        fclose(f);
        return ft_err(err, FT_ERUNTIME, "%s: out of memory reading %lld bytes", path, (long long)size);
    }
    size_t got = fread(b, 1, (size_t)size, f);
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (rerr || got != (size_t)size) {
        free(b);
        return ft_err(err, FT_EGRAPH, "%s: read error (got %zu of %lld bytes): %s", path, got, (long long)size,
                      rerr ? strerror(rerr) : "the file shrank while it was read");
    }
    b[size] = 0;
    *buf = b;
    *len = (size_t)size;
    return FT_OK;
}

static const unsigned char empty_file[1];

ft_status ft_map_file(const char *path, int populate, const unsigned char **buf, size_t *len, ft_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ft_err(err, FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = errno;
        close(fd);
        return ft_err(err, FT_EGRAPH, "%s: cannot read: %s", path,
                      S_ISDIR(sb.st_mode) ? "Is a directory" : e ? strerror(e) : "not a regular file");
    }
    *len = (size_t)sb.st_size;
    if (*len == 0) {
        close(fd);
        *buf = empty_file;
        return FT_OK;
    }
    void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED)
        return ft_err(err, e == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot read: %s", path, strerror(e));
    *buf = m;
    return FT_OK;
}

void ft_unmap_file(const unsigned char *buf, size_t len)
{
    if (buf && buf != empty_file)
        munmap((void *)buf, len);
}

void ft_npy_clear(ft_npy *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* Find 'key': in the header dict and return a pointer just past the colon. */
static const char *dict_value(const char *h, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(h, pat);
    }
    if (!p)
        return NULL;
    p = strchr(p + strlen(pat), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

static int descr_dtype(const char *d, ft_dtype *dt)
{
    static const struct { const char *s; ft_dtype dt; } m[] = {
        {"f2", FT_F16}, {"f4", FT_F32}, {"f8", FT_F64}, {"i1", FT_I8}, {"i2", FT_I16},
        {"i4", FT_I32}, {"i8", FT_I64}, {"u1", FT_U8}, {"u2", FT_U16}, {"u4", FT_U32},
        {"u8", FT_U64}, {"b1", FT_BOOL},
    };
    char endian = d[0];
    if (endian == '>' && strcmp(d + 1, "i1") && strcmp(d + 1, "u1") && strcmp(d + 1, "b1"))
        return -2;
    if (endian != '<' && endian != '|' && endian != '=' && endian != '>')
        return -1;
    for (size_t i = 0; i < FT_ARRAY_LEN(m); i++)
        if (strcmp(d + 1, m[i].s) == 0) {
            *dt = m[i].dt;
            return 0;
        }
    return -1;
}

ft_status ft_npy_parse(const char *path, const unsigned char *buf, size_t n, ft_npy *out, ft_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ft_npy_is_npy(buf, n))
        return ft_err(err, FT_EGRAPH, "%s: not a .npy file (no \\x93NUMPY magic)", path);
    if (n < 10)
        return ft_err(err, FT_EGRAPH, "%s: truncated .npy header", path);
    unsigned major = buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12)
            return ft_err(err, FT_EGRAPH, "%s: truncated .npy header", path);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hstart = 12;
    } else {
        return ft_err(err, FT_EGRAPH, "%s: unsupported .npy format version %u", path, major);
    }
    if (hlen > n - hstart || hlen > 65536)
        return ft_err(err, FT_EGRAPH, "%s: .npy header length %zu exceeds the file (%zu bytes)", path, hlen, n);
    char *h = ft_malloc(hlen + 1);
    if (!h)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    memcpy(h, buf + hstart, hlen);
    h[hlen] = 0;
    ft_status st = FT_OK;
    const char *d = dict_value(h, "descr"), *fo = dict_value(h, "fortran_order"), *sh = dict_value(h, "shape");
    char descr[16] = {0};
    if (!d || !fo || !sh || (*d != '\'' && *d != '"')) {
        st = ft_err(err, FT_EGRAPH, "%s: malformed .npy header: %s", path, h);
        goto done;
    }
    size_t dl = strcspn(d + 1, "'\"");
    if (dl >= sizeof descr) {
        st = ft_err(err, FT_EGRAPH, "%s: unsupported .npy dtype in header: %s", path, h);
        goto done;
    }
    memcpy(descr, d + 1, dl);
    char skind = 0;
    uint64_t swidth = 0;
    int r = ft_npy_str_descr(descr, &skind, &swidth);
    if (r == 0)
        out->dtype = FT_STRING;
    else if (r == -1)
        r = descr_dtype(descr, &out->dtype);
    if (r == -2) {
        st = ft_err(err, FT_EGRAPH, "%s: big-endian .npy dtype '%s' is not supported; save little-endian", path, descr);
        goto done;
    }
    if (r) {
        st = ft_err(err, FT_EGRAPH, "%s: unsupported .npy dtype '%s' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, "
                    "U<n> and S<n>)", path, descr);
        goto done;
    }
    int fortran = strncmp(fo, "True", 4) == 0;
    if (!fortran && strncmp(fo, "False", 5) != 0) {
        st = ft_err(err, FT_EGRAPH, "%s: malformed .npy header (fortran_order): %s", path, h);
        goto done;
    }
    if (*sh != '(') {
        st = ft_err(err, FT_EGRAPH, "%s: malformed .npy header (shape): %s", path, h);
        goto done;
    }
    const char *p = sh + 1;
    out->shape.rank = 0;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || errno) {
            st = ft_err(err, FT_EGRAPH, "%s: malformed .npy header (shape): %s", path, h);
            goto done;
        }
        if (out->shape.rank >= FT_MAX_RANK) {
            st = ft_err(err, FT_EGRAPH, "%s: .npy array has more than %d dimensions", path, FT_MAX_RANK);
            goto done;
        }
        out->shape.dims[out->shape.rank++] = v;
        p = end;
        while (*p == 'L')
            p++;
    }
    uint64_t numel, nbytes;
    if (ft_shape_numel(&out->shape, &numel) || ft_mul_overflow(numel, ft_dtype_size(out->dtype), &nbytes) ||
        nbytes > FT_MAX_TENSOR_BYTES) {
        char s[FT_SHAPE_STR];
        st = ft_err(err, FT_EGRAPH, "%s: .npy shape %s is too large", path, ft_shape_str(&out->shape, s));
        goto done;
    }
    size_t off = hstart + hlen;
    if (out->dtype == FT_STRING) { /* the file's size: width units per element */
        uint64_t fb;
        if (ft_mul_overflow(numel, swidth * (skind == 'U' ? 4 : 1), &fb) || n - off < fb) {
            st = ft_err(err, FT_EGRAPH, "%s: .npy data is truncated: %llu strings of %llu %s expected, %zu bytes present",
                        path, (unsigned long long)numel, (unsigned long long)swidth,
                        skind == 'U' ? "code points" : "bytes", n - off);
            goto done;
        }
        if (fortran && out->shape.rank > 1) {
            st = ft_err(err, FT_EGRAPH, "%s: a Fortran-order string array is not supported; save it in C order", path);
            goto done;
        }
        if (!(out->data = ft_malloc(nbytes ? (size_t)nbytes : 1))) {
            st = ft_err(err, FT_ERUNTIME, "%s: out of memory (%llu bytes)", path, (unsigned long long)nbytes);
            goto done;
        }
        out->nbytes = (size_t)nbytes;
        st = ft_npy_str_decode(path, buf + off, numel, skind, swidth, (const void **)out->data, err);
        goto done;
    }
    if (n - off < nbytes) {
        st = ft_err(err, FT_EGRAPH, "%s: .npy data is truncated: %llu bytes expected, %zu present", path,
                    (unsigned long long)nbytes, n - off);
        goto done;
    }
    out->data = ft_malloc((size_t)nbytes);
    if (!out->data) {
        st = ft_err(err, FT_ERUNTIME, "%s: out of memory (%llu bytes)", path, (unsigned long long)nbytes);
        goto done;
    }
    out->nbytes = (size_t)nbytes;
    size_t es = ft_dtype_size(out->dtype);
    if (!fortran || out->shape.rank < 2 || numel == 0) { /* empty: its other dims may overflow the strides */
        memcpy(out->data, buf + off, (size_t)nbytes);
    } else {
        /* Fortran order: element with C index (i0..ik) sits at sum(i_j * fstride_j). */
        int64_t cst[FT_MAX_RANK], fst[FT_MAX_RANK];
        ft_strides(&out->shape, cst);
        int64_t s = 1;
        for (int j = 0; j < out->shape.rank; j++) {
            fst[j] = s;
            s *= out->shape.dims[j];
        }
        for (uint64_t i = 0; i < numel; i++) {
            uint64_t rem = i, src = 0;
            for (int j = 0; j < out->shape.rank; j++) {
                uint64_t idx = rem / (uint64_t)cst[j];
                rem %= (uint64_t)cst[j];
                src += idx * (uint64_t)fst[j];
            }
            memcpy((char *)out->data + i * es, buf + off + src * es, es);
        }
    }
done:
    free(h);
    if (st)
        ft_npy_clear(out);
    return st;
}

int ft_npy_to_dtype(ft_npy *a, ft_dtype want)
{
    if (a->dtype == want)
        return 0;
    if (want == FT_BF16 && a->dtype == FT_F32) {
        uint64_t n = ft_numel(&a->shape);
        uint16_t *d = (uint16_t *)a->data; /* narrowing in place, front to back, is safe */
        const float *s = (const float *)a->data;
        for (uint64_t i = 0; i < n; i++) {
            float v = s[i];
            d[i] = ft_f32_to_bf16(v);
        }
        a->dtype = FT_BF16;
        a->nbytes = (size_t)n * 2;
        return 0;
    }
    /* the low-precision dtypes, written as f32 (the small floats) or i1/u1
     * (the 4- and 2-bit integers): a small float rounds to nearest even,
     * non-saturating (as cast with saturate=0; f8e8m0 to the nearest power
     * of two); an integer out of the dtype's range is refused */
    if (ft_dtype_in(want, FT_DT_LOWF) && a->dtype == FT_F32) {
        uint64_t n = ft_numel(&a->shape);
        uint8_t *d = (uint8_t *)a->data;
        const float *s = (const float *)a->data;
        for (uint64_t i = 0; i < n; i++) {
            float v = s[i];
            d[i] = ft_lowp_from_f64(want, v, 0, FT_RM_NEAREST);
        }
        a->dtype = want;
        a->nbytes = (size_t)n;
        return 0;
    }
    if (ft_dtype_in(want, FT_DT_LOWI) && a->dtype == (want == FT_I4 || want == FT_I2 ? FT_I8 : FT_U8)) {
        int64_t lo, hi;
        ft_lowi_range(want, &lo, &hi);
        uint64_t n = ft_numel(&a->shape);
        for (uint64_t i = 0; i < n; i++) {
            int64_t v = ft_load_i64(a->data, a->dtype, (size_t)i);
            if (v < lo || v > hi)
                return -1;
        }
        a->dtype = want;
        return 0;
    }
    return -1;
}

ft_status ft_npy_write(FILE *f, const char *path, ft_dtype dt, const ft_shape *s, const void *data, ft_error *err)
{
    char shape[FT_MAX_RANK * 24 + 8];
    size_t len = 0;
    shape[len++] = '(';
    for (int i = 0; i < s->rank; i++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%lld,%s", (long long)s->dims[i],
                                i + 1 < s->rank ? " " : "");
    if (s->rank > 1)
        len--; /* "(2, 3)" not "(2, 3,)"; a 1-tuple keeps its comma */
    shape[len++] = ')';
    shape[len] = 0;
    char hdr[512], descr[32];
    const uint64_t swidth = dt == FT_STRING ? ft_npy_str_width(data, ft_numel(s)) : 0;
    if (dt == FT_STRING)
        snprintf(descr, sizeof descr, "<U%llu", (unsigned long long)swidth);
    else
        snprintf(descr, sizeof descr, "%s", ft_dtype_npy_descr(dt));
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t total = 10 + (size_t)hl + 1;
    size_t pad = (64 - total % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t hfield = (size_t)hl + pad + 1;
    pre[8] = (unsigned char)(hfield & 0xff);
    pre[9] = (unsigned char)(hfield >> 8);
    int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(hdr, 1, (size_t)hl, f) != (size_t)hl;
    for (size_t i = 0; i < pad && !bad; i++)
        bad = fputc(' ', f) == EOF;
    if (!bad)
        bad = fputc('\n', f) == EOF;
    uint64_t n = ft_numel(s);
    if (!bad && dt == FT_STRING)
        bad = ft_npy_str_write(f, data, n, swidth) != 0;
    else if (!bad && (dt == FT_BF16 || ft_dtype_in(dt, FT_DT_LOWF))) { /* as f32: every value is exact there */
        float buf[1024];
        for (uint64_t i = 0; i < n && !bad; i += 1024) {
            size_t k = n - i < 1024 ? (size_t)(n - i) : 1024;
            for (size_t j = 0; j < k; j++)
                buf[j] = dt == FT_BF16 ? ft_bf16_to_f32(((const uint16_t *)data)[i + j])
                                       : ft_lowf_to_f32(dt, ((const uint8_t *)data)[i + j]);
            bad = fwrite(buf, 4, k, f) != k;
        }
    } else if (!bad && n) {
        size_t nb = (size_t)n * ft_dtype_size(dt);
        bad = fwrite(data, 1, nb, f) != nb;
    }
    if (bad || fflush(f) != 0)
        return ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno ? errno : EIO));
    return FT_OK;
}

ft_status ft_npy_write_file(const char *path, ft_dtype dt, const ft_shape *s, const void *data, ft_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return ft_err(err, FT_ERUNTIME, "%s: cannot create: %s", path, strerror(errno));
    ft_status st = ft_npy_write(f, path, dt, s, data, err);
    if (fclose(f) != 0 && !st)
        st = ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno));
    return st;
}
