/* .npz archives on zlib: a zip writer (stored or deflated members) and a
 * reader that checks every offset, size and CRC against the file before use.
 * Zip format: PKWARE APPNOTE.TXT, sections 4.3.7 (local header), 4.3.12
 * (central directory) and 4.3.16 (end of central directory). */
#include "npz.h"
#include "file_err.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "ftg.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64_LOC 0x07064b50u
#define ZIP_MAX32 0xffffffffu

int ft_npz_is_npz(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    return n >= 4 && p[0] == 'P' && p[1] == 'K' && ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6));
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void wr16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void wr32(unsigned char *p, uint32_t v) { wr16(p, v & 0xffff), wr16(p + 2, v >> 16); }

void ft_sanitize_name(const char *name, char *buf, size_t n)
{
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        buf[i] = ok ? c : '_';
    }
    buf[i] = 0;
}

/* ---- writing ---- */

typedef struct {
    uint32_t crc, csize, usize, at;
    uint16_t method;
    char name[520];
} zent;

/* The fields a local header (at +4) and a central one (at +6) share: version
 * needed, flags, method, time, date, CRC, sizes, name length. */
static void wr_common(unsigned char *h, const zent *e, unsigned dtime, unsigned ddate, size_t nl)
{
    wr16(h, 20);
    wr16(h + 2, 0);
    wr16(h + 4, e->method);
    wr16(h + 6, dtime);
    wr16(h + 8, ddate);
    wr32(h + 10, e->crc);
    wr32(h + 14, e->csize);
    wr32(h + 18, e->usize);
    wr16(h + 22, (unsigned)nl);
}

/* One member's .npy bytes, in memory so that its CRC and sizes can precede it. */
static ft_status npy_bytes(const char *path, const ft_npz_item *it, char **buf, size_t *len, ft_error *err)
{
    *buf = NULL;
    FILE *m = open_memstream(buf, len);
    if (!m)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    ft_status st = ft_npy_write(m, path, it->dtype, it->shape, it->data, err);
    /* glibc's fclose of a memory stream reports success and leaves the buffer
     * NULL when its last realloc fails */
    if ((fclose(m) != 0 || !*buf) && !st)
        st = ft_err(err, FT_ERUNTIME, "%s: out of memory for member '%s'", path, it->name);
    if (st) {
        free(*buf);
        *buf = NULL;
    }
    return st;
}

/* Raw deflate (no zlib header: zip's method 8). Returns the compressed size,
 * or 0 when it saves less than 1/16 of the member (or zlib fails): then the
 * member is stored, and readers need not inflate it for a few bytes' gain. */
static size_t deflate_raw(const unsigned char *src, size_t n, unsigned char **out)
{
    *out = NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (n < 64 || n > ZIP_MAX32 || deflateInit2(&z, 1, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    uLong bound = deflateBound(&z, (uLong)n);
    unsigned char *d = ft_malloc(bound);
    size_t got = 0;
    if (d) {
        z.next_in = (unsigned char *)src;
        z.avail_in = (uInt)n;
        z.next_out = d;
        z.avail_out = (uInt)bound;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out < n - n / 16)
            got = z.total_out;
    }
    deflateEnd(&z);
    if (!got)
        free(d);
    else
        *out = d;
    return got;
}

ft_status ft_npz_write(FILE *f, const char *path, const ft_npz_item *items, int n, ft_error *err)
{
    if (n > 0xfffe)
        return ft_err(err, FT_ERUNTIME, "%s: %d members are more than a zip without zip64 holds", path, n);
    time_t now = time(NULL);
    struct tm tmv, *tm = localtime_r(&now, &tmv);
    unsigned dtime = 0, ddate = (1 << 5) | 1; /* 1980-01-01 */
    if (tm && tm->tm_year >= 80) {
        dtime = (unsigned)(tm->tm_hour << 11 | tm->tm_min << 5 | tm->tm_sec / 2);
        ddate = (unsigned)((tm->tm_year - 80) << 9 | (tm->tm_mon + 1) << 5 | tm->tm_mday);
    }
    zent *e = ft_calloc((size_t)(n ? n : 1), sizeof *e);
    if (!e)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    uint64_t pos = 0;
    ft_status st = FT_OK;
    for (int i = 0; i < n && !st; i++) {
        char *npy = NULL;
        size_t len = 0;
        unsigned char *z = NULL;
        size_t zn = 0;
        snprintf(e[i].name, sizeof e[i].name, "%.500s.npy", items[i].name);
        if ((st = npy_bytes(path, &items[i], &npy, &len, err)))
            break;
        if (len >= ZIP_MAX32 || pos >= ZIP_MAX32) {
            st = ft_err(err, FT_ERUNTIME, "%s: member '%s' would lie beyond 4 GiB, which needs zip64 (not written by this ftrun); use --format npy",
                        path, e[i].name);
            free(npy);
            break;
        }
        zn = deflate_raw((unsigned char *)npy, len, &z);
        e[i].crc = ft_crc32(0, npy, len);
        e[i].csize = (uint32_t)(zn ? zn : len);
        e[i].usize = (uint32_t)len;
        e[i].at = (uint32_t)pos;
        e[i].method = (uint16_t)(zn ? 8 : 0);
        size_t nl = strlen(e[i].name);
        unsigned char h[30];
        wr32(h, SIG_LOCAL);
        wr_common(h + 4, &e[i], dtime, ddate, nl);
        wr16(h + 28, 0);
        const void *data = zn ? (const void *)z : (const void *)npy;
        if (fwrite(h, 1, 30, f) != 30 || fwrite(e[i].name, 1, nl, f) != nl || fwrite(data, 1, e[i].csize, f) != e[i].csize)
            st = ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno ? errno : EIO));
        pos += 30 + nl + e[i].csize;
        free(npy);
        free(z);
    }
    uint64_t cd_at = pos;
    for (int i = 0; i < n && !st; i++) {
        size_t nl = strlen(e[i].name);
        unsigned char h[46] = {0};
        wr32(h, SIG_CENTRAL);
        wr16(h + 4, 20); /* version made by */
        wr_common(h + 6, &e[i], dtime, ddate, nl);
        wr32(h + 38, 0644u << 16); /* external attributes: Unix mode */
        wr32(h + 42, e[i].at);
        if (fwrite(h, 1, 46, f) != 46 || fwrite(e[i].name, 1, nl, f) != nl)
            st = ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno ? errno : EIO));
        pos += 46 + nl;
    }
    if (!st && (cd_at >= ZIP_MAX32 || pos >= ZIP_MAX32))
        st = ft_err(err, FT_ERUNTIME, "%s: the archive would exceed 4 GiB, which needs zip64 (not written by this ftrun); use --format npy", path);
    if (!st) {
        unsigned char h[22] = {0};
        wr32(h, SIG_END);
        wr16(h + 8, (unsigned)n);
        wr16(h + 10, (unsigned)n);
        wr32(h + 12, (uint32_t)(pos - cd_at));
        wr32(h + 16, (uint32_t)cd_at);
        if (fwrite(h, 1, 22, f) != 22 || fflush(f) != 0)
            st = ft_err(err, FT_ERUNTIME, "%s: write error: %s", path, strerror(errno ? errno : EIO));
    }
    free(e);
    return st;
}

/* ---- reading ---- */

/* "PATH: message", FT_EGRAPH (file_err.h). */
#define zerr(err, path, ...) ft_file_err((err), FT_EGRAPH, (path), __VA_ARGS__)

void ft_npz_close(ft_npz *z)
{
    for (int i = 0; i < z->n; i++)
        free(z->e[i].name);
    free(z->e);
    free(z->buf);
    free(z->path);
    memset(z, 0, sizeof *z);
}

static ft_status index_archive(ft_npz *z, ft_error *err)
{
    const unsigned char *b = z->buf;
    size_t len = z->len;
    const char *path = z->path;
    if (len < 22)
        return zerr(err, path, "not a valid .npz (zip) file: %zu bytes is too short for a zip directory", len);
    /* the end record sits in the last 22 + 65535 (comment) bytes */
    size_t lo = len - 22 > 65535 ? len - 22 - 65535 : 0, at = (size_t)-1;
    for (size_t i = len - 22 + 1; i-- > lo;)
        if (rd32(b + i) == SIG_END && i + 22 + rd16(b + i + 20) <= len) {
            at = i;
            break;
        }
    if (at == (size_t)-1)
        return zerr(err, path, "not a valid .npz (zip) file: no end-of-central-directory record (truncated?)");
    const unsigned char *end = b + at;
    unsigned disk = rd16(end + 4), cd_disk = rd16(end + 6), n_disk = rd16(end + 8), n = rd16(end + 10);
    uint32_t cd_size = rd32(end + 12), cd_at = rd32(end + 16);
    if ((at >= 20 && rd32(b + at - 20) == SIG_END64_LOC) || n == 0xffff || cd_size == ZIP_MAX32 || cd_at == ZIP_MAX32)
        return zerr(err, path, "zip64 archives (over 4 GiB or 65535 members) are not supported; save the arrays as .npy files");
    if (disk || cd_disk || n_disk != n)
        return zerr(err, path, "multi-part zip archives are not supported");
    if ((uint64_t)cd_at + cd_size > at)
        return zerr(err, path, "corrupt zip: the central directory [%u, %llu) runs past its end record at %zu", cd_at,
                    (unsigned long long)cd_at + cd_size, at);
    z->e = ft_calloc(n ? n : 1, sizeof *z->e);
    if (!z->e)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    size_t p = cd_at, cd_end = (size_t)cd_at + cd_size;
    for (unsigned i = 0; i < n; i++) {
        if (p + 46 > cd_end || rd32(b + p) != SIG_CENTRAL)
            return zerr(err, path, "corrupt zip: central directory entry %u of %u is missing or truncated", i + 1, n);
        const unsigned char *c = b + p;
        unsigned flags = rd16(c + 8), method = rd16(c + 10), nl = rd16(c + 28), el = rd16(c + 30), cl = rd16(c + 32);
        uint32_t crc = rd32(c + 16), csize = rd32(c + 20), usize = rd32(c + 24), lho = rd32(c + 42);
        if (p + 46 + nl + el + cl > cd_end)
            return zerr(err, path, "corrupt zip: central directory entry %u runs past the directory", i + 1);
        char name[520];
        snprintf(name, sizeof name, "%.*s", nl < 500 ? (int)nl : 500, (const char *)c + 46);
        if (strlen(name) != (nl < 500 ? nl : 500))
            return zerr(err, path, "corrupt zip: member %u has a NUL byte in its name", i + 1);
        p += 46 + (size_t)nl + el + cl;
        if (csize == ZIP_MAX32 || usize == ZIP_MAX32 || lho == ZIP_MAX32)
            return zerr(err, path, "member '%s': zip64 sizes are not supported", name);
        if (flags & 1)
            return zerr(err, path, "member '%s' is encrypted", name);
        if (method != 0 && method != 8)
            return zerr(err, path, "member '%s' uses compression method %u (only stored and deflated are supported)", name, method);
        if (method == 0 && csize != usize)
            return zerr(err, path, "member '%s' is stored but its sizes differ (%u and %u bytes)", name, csize, usize);
        if ((uint64_t)lho + 30 > len || rd32(b + lho) != SIG_LOCAL)
            return zerr(err, path, "member '%s': its local header at %u is missing or outside the file", name, lho);
        unsigned lnl = rd16(b + lho + 26), lel = rd16(b + lho + 28);
        uint64_t data_at = (uint64_t)lho + 30 + lnl + lel;
        if (lnl != nl || (uint64_t)lho + 30 + lnl > len || memcmp(b + lho + 30, c + 46, nl) != 0)
            return zerr(err, path, "member '%s': the local header names another file", name);
        if (data_at > len || csize > len - data_at)
            return zerr(err, path, "member '%s': its %u bytes at %llu lie beyond the end of the file (%zu bytes; truncated?)",
                        name, csize, (unsigned long long)data_at, len);
        size_t sl = strlen(name);
        if (sl < 4 || strcmp(name + sl - 4, ".npy") != 0)
            continue; /* as numpy.load, only .npy members are arrays */
        name[sl - 4] = 0;
        ft_npz_entry *en = &z->e[z->n];
        if (!(en->name = ft_strdup(name)))
            return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
        z->n++;
        en->data_at = data_at;
        en->csize = csize;
        en->usize = usize;
        en->crc = crc;
        en->deflated = method == 8;
    }
    return FT_OK;
}

ft_status ft_npz_open_mem(const char *path, unsigned char *buf, size_t len, ft_npz *z, ft_error *err)
{
    memset(z, 0, sizeof *z);
    z->buf = buf;
    z->len = len;
    if (!(z->path = ft_strdup(path))) {
        ft_npz_close(z);
        return ft_err(err, FT_ERUNTIME, "out of memory");
    }
    ft_status st = index_archive(z, err);
    if (st)
        ft_npz_close(z);
    return st;
}

ft_status ft_npz_open(const char *path, ft_npz *z, ft_error *err)
{
    unsigned char *buf;
    size_t len;
    memset(z, 0, sizeof *z);
    ft_status st = ft_read_file(path, &buf, &len, err);
    return st ? st : ft_npz_open_mem(path, buf, len, z, err);
}

int ft_npz_find(const ft_npz *z, const char *name)
{
    for (int i = 0; i < z->n; i++)
        if (!strcmp(z->e[i].name, name))
            return i;
    char s[520];
    ft_sanitize_name(name, s, sizeof s);
    for (int i = 0; i < z->n; i++)
        if (!strcmp(z->e[i].name, s))
            return i;
    return -1;
}

const char *ft_npz_names(const ft_npz *z, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < z->n && len + 8 < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", z->e[i].name);
    if (!z->n)
        snprintf(buf, n, "none");
    return buf;
}

ft_status ft_npz_read(const ft_npz *z, int i, ft_npy *out, ft_error *err)
{
    const ft_npz_entry *e = &z->e[i];
    memset(out, 0, sizeof *out);
    char label[1200];
    snprintf(label, sizeof label, "%s: member %s.npy", z->path, e->name);
    const unsigned char *src = z->buf + e->data_at;
    unsigned char *dec = NULL;
    if (e->deflated) {
        char why[256];
        if (!(dec = ft_malloc((size_t)e->usize)))
            return ft_err(err, FT_ERUNTIME, "%s: out of memory for %llu bytes", label, (unsigned long long)e->usize);
        int rc = ft_inflate_exact(src, e->csize, dec, e->usize, 1, why, sizeof why);
        if (rc) {
            free(dec);
            return ft_err(err, rc == -2 ? FT_ERUNTIME : FT_EGRAPH, "%s: %s", label, why);
        }
        src = dec;
    }
    uint32_t c = ft_crc32(0, src, (size_t)e->usize);
    ft_status st = c != e->crc ? ft_err(err, FT_EGRAPH, "%s: CRC-32 mismatch (0x%08x, the archive says 0x%08x): the file is corrupt",
                                        label, c, e->crc)
                               : ft_npy_parse(label, src, (size_t)e->usize, out, err);
    free(dec);
    return st;
}
