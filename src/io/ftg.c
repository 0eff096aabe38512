/* Binary graphs (.ftg): reading (mapped, checked before any byte of a blob is
 * used), writing (pack) and the rewriting of value sources in a graph's JSON
 * document (pack and unpack). */
#include "ftg.h"
#include "file_err.h"
#include "npy.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FT_HAVE_CLMUL 1
#endif

int ft_ftg_is_ftg(const void *buf, size_t n) { return n >= 1 && ((const unsigned char *)buf)[0] == 0x89; }

/* ---- CRC-32 ---- */

/* zlib takes lengths as 32-bit uInt. */
static uint32_t crc_zlib(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
}

#ifdef FT_HAVE_CLMUL
/* Folding with carry-less multiplication: Gopal et al., "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), with the
 * bit-reflected constants for the CRC-32 polynomial 0x04C11DB7 given there.
 * len >= 64 and a multiple of 16; crc is the pre-inverted register. About five
 * times zlib's table-driven speed, which is what makes mapping a large graph
 * and checking it cost about as much as reading it. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_fold(const unsigned char *buf, size_t len, uint32_t crc)
{
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8;
    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = k1k2;
    buf += 64;
    len -= 64;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(buf + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(buf + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(buf + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(buf + 0x30)));
        buf += 64;
        len -= 64;
    }
    x0 = k3k4;
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16;
        len -= 16;
    }
    /* 128 -> 64 bits, then Barrett reduction to 32 */
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = k5k0;
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    x0 = poly;
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

static uint32_t crc_serial(uint32_t crc, const unsigned char *p, size_t n)
{
#ifdef FT_HAVE_CLMUL
    /* a test of bits the runtime filled in at start-up: cheap, and no shared
     * state for the threads that call this */
    if (n >= 64 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
        size_t c = n & ~(size_t)15;
        crc = ~crc_fold(p, c, ~crc);
        p += c;
        n -= c;
    }
#endif
    return crc_zlib(crc, p, n);
}

#define CRC_CHUNK ((size_t)4 << 20)

/* Pieces of at most CRC_CHUNK bytes, checked by all threads, then joined with
 * crc32_combine: one thread alone does not reach the memory bandwidth. */
typedef struct {
    const unsigned char *p;
    size_t n;
    uint32_t crc;
} crc_piece;

static void crc_pieces(crc_piece *pc, size_t n)
{
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
    for (size_t i = 0; i < n; i++)
        pc[i].crc = crc_serial(0, pc[i].p, pc[i].n);
}

uint32_t ft_crc32(uint32_t crc, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    size_t np = (n + CRC_CHUNK - 1) / CRC_CHUNK;
    crc_piece *pc = np > 1 && omp_get_max_threads() > 1 ? ft_malloc(np * sizeof *pc) : NULL;
    if (!pc)
        return crc_serial(crc, p, n);
    for (size_t i = 0; i < np; i++)
        pc[i] = (crc_piece){p + i * CRC_CHUNK, i + 1 < np ? CRC_CHUNK : n - i * CRC_CHUNK, 0};
    crc_pieces(pc, np);
    for (size_t i = 0; i < np; i++)
        crc = (uint32_t)crc32_combine(crc, pc[i].crc, (z_off_t)pc[i].n);
    free(pc);
    return crc;
}

/* ---- reading ---- */

/* "PATH: message", FT_EGRAPH (file_err.h). */
#define ferr(err, path, ...) ft_file_err((err), FT_EGRAPH, (path), __VA_ARGS__)

static uint32_t rd32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static uint64_t align_up(uint64_t v) { return (v + FT_FTG_ALIGN - 1) & ~(uint64_t)(FT_FTG_ALIGN - 1); }

/* The 24-byte fixed header of a file of `size` bytes (p holds min(size, 24)
 * bytes). Sets the header length and the data section's start. */
static ft_status check_fixed(const char *path, const unsigned char *p, uint64_t size, uint64_t *hlen, uint64_t *data_at,
                             ft_error *err)
{
    static const char *const field[] = {"magic number", "version", "flags", "header length"};
    static const uint64_t ends[] = {8, 12, 16, 24};
    size_t have = size < 8 ? (size_t)size : 8;
    if (memcmp(p, FT_FTG_MAGIC, have) != 0) {
        char got[40] = "";
        for (size_t i = 0; i < have; i++)
            snprintf(got + 3 * i, sizeof got - 3 * i, "%02x ", p[i]);
        got[strlen(got) ? strlen(got) - 1 : 0] = 0;
        return ferr(err, path, "not an ftrun binary graph: bad magic number %s (expected 89 46 54 47 0d 0a 1a 0a)", got);
    }
    for (int i = 0; i < 4; i++)
        if (size < ends[i])
            return ferr(err, path, "truncated binary graph: the file ends inside the %s field (it has %llu bytes; the fixed header has 24)",
                        field[i], (unsigned long long)size);
    uint32_t ver = rd32(p + 8), flags = rd32(p + 12);
    if (ver != FT_FTG_VERSION)
        return ferr(err, path, "binary graph version %u %s (this ftrun reads version %d)", ver,
                    ver > FT_FTG_VERSION ? "is newer than this ftrun supports" : "is not supported", FT_FTG_VERSION);
    if (flags != 0)
        return ferr(err, path, "binary graph flags 0x%08x are not zero (reserved in version %d)", flags, FT_FTG_VERSION);
    uint64_t h = rd64(p + 16);
    if (h > size - FT_FTG_FIXED)
        return ferr(err, path, "header length %llu goes beyond the end of the file (the header would end at byte %llu; the file has %llu bytes)",
                    (unsigned long long)h, (unsigned long long)h + FT_FTG_FIXED, (unsigned long long)size);
    uint64_t d = align_up(FT_FTG_FIXED + h);
    if (d > size)
        return ferr(err, path, "truncated binary graph: the file ends inside the padding after the header (the data section starts at byte %llu; the file has %llu bytes)",
                    (unsigned long long)d, (unsigned long long)size);
    *hlen = h;
    *data_at = d;
    return FT_OK;
}

static int by_offset(const void *a, const void *b)
{
    const ft_blob *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The next piece (at most 1 GiB, what a zlib uInt holds) of *left bytes. */
static uInt z_take(uint64_t *left)
{
    uInt k = *left > (1u << 30) ? (1u << 30) : (uInt)*left;
    *left -= k;
    return k;
}

int ft_inflate_exact(const void *srcv, uint64_t slen, void *dstv, uint64_t dlen, int raw, char *why, size_t wn)
{
    const unsigned char *src = srcv;
    unsigned char *dst = dstv;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, raw ? -MAX_WBITS : MAX_WBITS) != Z_OK) {
        snprintf(why, wn, "zlib could not start (out of memory)");
        return -2;
    }
    const unsigned char *ip = src;
    unsigned char *op = dst, probe;
    uint64_t in_left = slen, out_left = dlen;
    int probing = 0, rc = -1, ret;
    for (;;) {
        if (z.avail_in == 0 && in_left) {
            z.next_in = (unsigned char *)ip;
            z.avail_in = z_take(&in_left);
            ip += z.avail_in;
        }
        if (z.avail_out == 0) {
            if (out_left) {
                z.next_out = op;
                z.avail_out = z_take(&out_left);
                op += z.avail_out;
            } else {
                /* every declared byte is there: one more would be too many */
                z.next_out = &probe;
                z.avail_out = 1;
                probing = 1;
            }
        }
        ret = inflate(&z, Z_NO_FLUSH);
        if (probing && z.avail_out == 0) {
            snprintf(why, wn, "the %s stream inflates beyond the declared size of %llu bytes", raw ? "deflate" : "zlib",
                     (unsigned long long)dlen);
            goto out;
        }
        if (ret == Z_STREAM_END)
            break;
        if (ret == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) {
            snprintf(why, wn, "the %s stream is truncated: the %llu stored bytes end before it does", raw ? "deflate" : "zlib",
                     (unsigned long long)slen);
            goto out;
        }
        if (ret == Z_MEM_ERROR) {
            snprintf(why, wn, "out of memory inflating the %s stream", raw ? "deflate" : "zlib");
            rc = -2;
            goto out;
        }
        if (ret != Z_OK && ret != Z_BUF_ERROR) {
            snprintf(why, wn, "the %s stream is corrupt (%s)", raw ? "deflate" : "zlib", z.msg ? z.msg : "inflate failed");
            goto out;
        }
    }
    uint64_t produced = dlen - out_left - (probing ? 0 : z.avail_out);
    uint64_t consumed = slen - in_left - z.avail_in;
    if (produced != dlen)
        snprintf(why, wn, "the %s stream inflates to %llu bytes, not the declared %llu", raw ? "deflate" : "zlib",
                 (unsigned long long)produced, (unsigned long long)dlen);
    else if (consumed != slen)
        snprintf(why, wn, "%llu of the %llu stored bytes follow the end of the %s stream",
                 (unsigned long long)(slen - consumed), (unsigned long long)slen, raw ? "deflate" : "zlib");
    else
        rc = 0;
out:
    inflateEnd(&z);
    return rc;
}

/* Checks every blob, then gives each tensor its value. */
static ft_status attach_blobs(ft_graph *g, ft_blob_set *bs, const unsigned char *data, ft_error *err)
{
    ft_blob *b = bs->v;
    int n = bs->n;
    if (n > 1) /* b is NULL when the graph has no blob */
        qsort(b, (size_t)n, sizeof *b, by_offset);
    int prev = -1;
    for (int i = 0; i < n; i++) {
        if (b[i].stored == 0)
            continue;
        if (prev >= 0 && b[prev].offset + b[prev].stored > b[i].offset)
            return ft_err(err, FT_EGRAPH, "%s: tensor '%s': blob bytes [%llu, %llu) overlap those of tensor '%s' [%llu, %llu)",
                          g->file, g->tensors[b[i].tensor].name, (unsigned long long)b[i].offset,
                          (unsigned long long)(b[i].offset + b[i].stored), g->tensors[b[prev].tensor].name,
                          (unsigned long long)b[prev].offset, (unsigned long long)(b[prev].offset + b[prev].stored));
        prev = i;
    }
    /* CRC-32 of every blob, all pieces of all blobs shared among the threads */
    size_t np = 0;
    for (int i = 0; i < n; i++)
        np += (size_t)((b[i].stored + CRC_CHUNK - 1) / CRC_CHUNK);
    crc_piece *pc = ft_malloc((np ? np : 1) * sizeof *pc);
    if (!pc)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory checking blobs", g->file);
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (uint64_t o = 0; o < b[i].stored; o += CRC_CHUNK)
            pc[k++] = (crc_piece){data + b[i].offset + o, (size_t)(b[i].stored - o < CRC_CHUNK ? b[i].stored - o : CRC_CHUNK), 0};
    crc_pieces(pc, np);
    k = 0;
    for (int i = 0; i < n; i++) {
        uint32_t c = 0;
        for (uint64_t o = 0; o < b[i].stored; o += CRC_CHUNK, k++)
            c = (uint32_t)crc32_combine(c, pc[k].crc, (z_off_t)pc[k].n);
        if (c != b[i].crc) {
            free(pc);
            return ft_err(err, FT_EGRAPH, "%s: tensor '%s': CRC-32 mismatch: the stored bytes give 0x%08x, the header says 0x%08x (the file is corrupt)",
                          g->file, g->tensors[b[i].tensor].name, c, b[i].crc);
        }
    }
    free(pc);
    /* raw blobs are used in place; zlib blobs inflate in parallel */
    int failed = -1, failed_oom = 0;
    char why[256] = "";
    for (int i = 0; i < n; i++) {
        ft_tensor *t = &g->tensors[b[i].tensor];
        if (b[i].zlib || b[i].nbytes == 0) {
            if (!(t->value = ft_malloc((size_t)b[i].nbytes)))
                return ft_err(err, FT_ERUNTIME, "%s: tensor '%s': out of memory for %llu bytes", g->file, t->name,
                              (unsigned long long)b[i].nbytes);
        } else {
            t->value = (void *)(data + b[i].offset);
            t->borrowed = 1;
        }
        t->value_bytes = (size_t)b[i].nbytes;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        if (!b[i].zlib)
            continue;
        char w[256];
        int rc = ft_inflate_exact(data + b[i].offset, b[i].stored, g->tensors[b[i].tensor].value, b[i].nbytes, 0, w, sizeof w);
        if (rc) {
#pragma omp critical(ftg_inflate_err)
            if (failed < 0 || b[i].offset < b[failed].offset) {
                failed = i;
                failed_oom = rc == -2;
                memcpy(why, w, sizeof why);
            }
        }
    }
    if (failed >= 0)
        return ft_err(err, failed_oom ? FT_ERUNTIME : FT_EGRAPH, "%s: tensor '%s': %s", g->file, g->tensors[b[failed].tensor].name, why);
    return FT_OK;
}

ft_status ft_ftg_load(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ft_err(err, FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ft_err(err, FT_EGRAPH, "%s: cannot read: not a regular file", path);
    }
    uint64_t size = (uint64_t)sb.st_size;
    unsigned char fixed[FT_FTG_FIXED] = {0};
    size_t nf = size < FT_FTG_FIXED ? (size_t)size : FT_FTG_FIXED;
    if (pread(fd, fixed, nf, 0) != (ssize_t)nf) {
        int e = errno;
        close(fd);
        return ft_err(err, FT_EGRAPH, "%s: read error: %s", path, strerror(e ? e : EIO));
    }
    uint64_t hlen, dat;
    ft_status st = check_fixed(path, fixed, size, &hlen, &dat, err);
    if (st) {
        close(fd);
        return st;
    }
    /* Every blob is read for its CRC anyway: populate the mapping up front
     * rather than taking one page fault after another. (A file truncated by
     * someone else while mapped would raise SIGBUS; that is not guarded.) */
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return ft_err(err, e == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot map the file: %s", path, strerror(e));
    const unsigned char *m = map;
    for (uint64_t i = FT_FTG_FIXED + hlen; i < dat; i++)
        if (m[i]) {
            munmap(map, (size_t)size);
            return ferr(err, path, "the padding after the header (bytes %llu to %llu) is not zero", (unsigned long long)(FT_FTG_FIXED + hlen),
                        (unsigned long long)dat);
        }
    char *text = ft_malloc((size_t)hlen + 1);
    if (!text) {
        munmap(map, (size_t)size);
        return ft_err(err, FT_ERUNTIME, "%s: out of memory for a %llu-byte header", path, (unsigned long long)hlen);
    }
    memcpy(text, m + FT_FTG_FIXED, (size_t)hlen);
    text[hlen] = 0;
    ft_blob_set bs = {.data_bytes = size - dat};
    ft_graph *g = NULL;
    st = ft_graph_parse_doc(path, text, (size_t)hlen, opts, &bs, &g, err);
    free(text);
    if (st) {
        free(bs.v);
        munmap(map, (size_t)size);
        return st;
    }
    g->map = map;
    g->map_bytes = (size_t)size;
    st = attach_blobs(g, &bs, m + dat, err);
    free(bs.v);
    if (st) {
        ft_graph_free(g);
        return st;
    }
    *out = g;
    return FT_OK;
}

ft_status ft_graph_doc_text(const char *path, char **text, size_t *len, ft_error *err)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ft_err(err, errno == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    unsigned char fixed[FT_FTG_FIXED] = {0};
    size_t nf = fread(fixed, 1, sizeof fixed, f);
    if (ferror(f) && errno != EISDIR) {
        int e = errno;
        fclose(f);
        return ft_err(err, e == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: read error: %s", path, strerror(e));
    }
    if (!ft_ftg_is_ftg(fixed, nf)) {
        fclose(f);
        return ft_read_file(path, (unsigned char **)text, len, err);
    }
    struct stat sb;
    uint64_t hlen, dat;
    ft_status st = fstat(fileno(f), &sb) != 0 ? ft_err(err, FT_EGRAPH, "%s: cannot read: %s", path, strerror(errno))
                                              : check_fixed(path, fixed, (uint64_t)sb.st_size, &hlen, &dat, err);
    if (!st && !(*text = ft_malloc((size_t)hlen + 1)))
        st = ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    if (!st && fread(*text, 1, (size_t)hlen, f) != (size_t)hlen)
        st = ft_err(err, FT_EGRAPH, "%s: read error in the header: %s", path, ferror(f) ? strerror(errno) : "the file is shorter than its header says");
    fclose(f);
    if (st) {
        free(*text);
        *text = NULL;
        return st;
    }
    (*text)[hlen] = 0;
    *len = (size_t)hlen;
    return FT_OK;
}

/* ---- rewriting value sources ---- */

char *ft_graph_doc_rewrite(const ft_graph *g, const char *doc, size_t len, ft_source_fill fill, void *ctx, int pretty,
                           ft_error *err)
{
    unsigned long oom0 = ft_json_oom();
    cJSON *root = cJSON_ParseWithLength(doc, len);
    cJSON *jt = root ? cJSON_GetObjectItemCaseSensitive(root, "tensors") : NULL;
    if (!root) {
        /* the document was read a moment ago by the same reader */
        if (ft_json_oom() != oom0)
            ft_err(err, FT_ERUNTIME, "%s: out of memory parsing the graph document (%zu bytes)", g->file, len);
        else
            ft_err(err, FT_EGRAPH, "%s: the graph document changed while it was being converted", g->file);
        return NULL;
    }
    static const char *const sources[] = {"data", "file", "offset", "init", "blob"};
    for (int i = 0; i < g->n_tensors; i++) {
        const ft_tensor *t = &g->tensors[i];
        cJSON *decl = jt && (t->flags & FT_TF_DECLARED) ? cJSON_GetObjectItemCaseSensitive(jt, t->name) : NULL;
        if (cJSON_IsObject(decl) && !g->keep_named_dims && ft_doc_set_shape(decl, &t->shape)) {
            cJSON_Delete(root);
            ft_err(err, FT_ERUNTIME, "%s: out of memory writing the graph document", g->file);
            return NULL;
        }
        if (!(t->flags & FT_TF_VALUE) || !(t->flags & FT_TF_DECLARED))
            continue;
        if (!cJSON_IsObject(decl)) {
            cJSON_Delete(root);
            ft_err(err, FT_EGRAPH, "%s: tensor '%s': the graph document changed while it was being converted", g->file, t->name);
            return NULL;
        }
        for (size_t k = 0; k < FT_ARRAY_LEN(sources); k++)
            cJSON_DeleteItemFromObjectCaseSensitive(decl, sources[k]);
        if (fill(ctx, g, i, decl, err)) {
            cJSON_Delete(root);
            return NULL;
        }
    }
    char *p = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!p) {
        ft_err(err, FT_ERUNTIME, "%s: out of memory writing the graph document", g->file);
        return NULL;
    }
    /* cJSON indents with tabs and puts one after each colon; raw tabs occur
     * nowhere else (inside strings they are escaped), so two spaces per
     * level and one after a colon read better in an editor */
    size_t tabs = 0;
    for (const char *q = p; *q; q++)
        tabs += *q == '\t';
    char *copy = ft_malloc(strlen(p) + tabs + 1);
    if (copy) {
        char *o = copy;
        for (const char *q = p; *q; q++) {
            if (*q != '\t')
                *o++ = *q;
            else if (q > p && q[-1] == ':')
                *o++ = ' ';
            else
                *o++ = ' ', *o++ = ' ';
        }
        *o = 0;
    } else {
        ft_err(err, FT_ERUNTIME, "%s: out of memory writing the graph document", g->file);
    }
    cJSON_free(p);
    return copy;
}

/* ---- writing ---- */

typedef struct {
    int tensor;
    const unsigned char *src; /* the value */
    uint64_t n;               /* its bytes */
    unsigned char *z;         /* compressed copy, when smaller */
    uint64_t stored, offset;
    uint32_t crc;
} wblob;

typedef struct {
    wblob *b;
    int *of_tensor; /* tensor index -> wblob index */
} wctx;

static int add_num(cJSON *o, const char *key, uint64_t v)
{
    /* exact integers, whatever cJSON's double formatting would do */
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    cJSON *raw = cJSON_CreateRaw(buf);
    if (raw && cJSON_AddItemToObject(o, key, raw))
        return 0;
    cJSON_Delete(raw); /* an item the object did not take is still ours */
    return -1;
}

static int fill_blob(void *ctx, const ft_graph *g, int tensor, cJSON *decl, ft_error *err)
{
    const wctx *w = ctx;
    const wblob *b = &w->b[w->of_tensor[tensor]];
    cJSON *o = cJSON_CreateObject();
    if (o && !cJSON_AddItemToObject(decl, "blob", o)) {
        cJSON_Delete(o);
        o = NULL;
    }
    if (!o || add_num(o, "offset", b->offset) || add_num(o, "nbytes", b->n) ||
        !cJSON_AddStringToObject(o, "encoding", b->z ? "zlib" : "raw") || add_num(o, "stored", b->stored) ||
        add_num(o, "crc32", b->crc)) {
        ft_err(err, FT_ERUNTIME, "%s: out of memory writing the header", g->file);
        return -1;
    }
    return 0;
}

/* One zlib stream of src into dst (cap bytes); returns its size, or 0 when
 * it does not fit or zlib fails. */
static uint64_t zcompress(const unsigned char *src, uint64_t n, int level, int strategy, unsigned char *dst, uint64_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, MAX_WBITS, 8, strategy) != Z_OK)
        return 0;
    uint64_t in_left = n, out_left = cap;
    int ret = Z_BUF_ERROR; /* no room at all: nothing compressed */
    do {
        if (z.avail_in == 0 && in_left) {
            z.next_in = (unsigned char *)src;
            z.avail_in = z_take(&in_left);
            src += z.avail_in;
        }
        if (z.avail_out == 0) {
            if (!out_left)
                break;
            z.next_out = dst;
            z.avail_out = z_take(&out_left);
            dst += z.avail_out;
        }
        ret = deflate(&z, in_left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
    } while (ret == Z_OK || ret == Z_BUF_ERROR);
    uint64_t got = ret == Z_STREAM_END ? cap - out_left - z.avail_out : 0;
    deflateEnd(&z);
    return got;
}

/* Float weights have near-random low mantissa bytes: what compresses is the
 * byte-level redundancy of signs and exponents, which zlib's run-length
 * strategy finds about as well as full LZ77 search at two to three times the
 * speed. Repeated multi-byte patterns (a tensor of ones, an arange) need the
 * LZ77 search. A sample of each blob decides. */
#define ZSAMPLE ((uint64_t)256 << 10)

static int pick_strategy(const unsigned char *src, uint64_t n, unsigned char *scratch, uint64_t cap)
{
    uint64_t k = n < ZSAMPLE ? n : ZSAMPLE;
    uint64_t rle = zcompress(src, k, 1, Z_RLE, scratch, cap);
    uint64_t lz = zcompress(src, k, 1, Z_DEFAULT_STRATEGY, scratch, cap);
    return lz && (!rle || lz * 10 < rle * 9) ? Z_DEFAULT_STRATEGY : Z_RLE;
}

static ft_status compress_blobs(const ft_graph *g, wblob *b, int n, ft_error *err)
{
    int oom = -1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        if (b[i].n < 64)
            continue; /* the zlib header and checksum alone take 6 bytes */
        uint64_t bound = b[i].n + b[i].n / 1000 + 64;
        unsigned char *z = ft_malloc((size_t)bound);
        if (!z) {
#pragma omp critical(ftg_compress_oom)
            oom = i;
            continue;
        }
        int strategy = pick_strategy(b[i].src, b[i].n, z, bound);
        uint64_t zn = zcompress(b[i].src, b[i].n, 1, strategy, z, bound);
        if (zn && zn < b[i].n) {
            unsigned char *shrunk = ft_realloc(z, (size_t)zn);
            b[i].z = shrunk ? shrunk : z;
            b[i].stored = zn;
        } else {
            free(z);
        }
    }
    if (oom >= 0)
        return ft_err(err, FT_ERUNTIME, "%s: tensor '%s': out of memory compressing %llu bytes", g->file,
                      g->tensors[b[oom].tensor].name, (unsigned long long)b[oom].n);
    return FT_OK;
}

static int write_zeros(FILE *f, uint64_t n)
{
    static const unsigned char zero[FT_FTG_ALIGN];
    while (n) {
        size_t k = n > sizeof zero ? sizeof zero : (size_t)n;
        if (fwrite(zero, 1, k, f) != k)
            return -1;
        n -= k;
    }
    return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

ft_status ft_ftg_write(const ft_graph *g, const char *doc, size_t doc_len, FILE *f, const char *path, int compress,
                       ft_pack_stats *stats, ft_error *err)
{
    memset(stats, 0, sizeof *stats);
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        n += (g->tensors[i].flags & FT_TF_VALUE) && (g->tensors[i].flags & FT_TF_DECLARED);
        if ((g->tensors[i].flags & FT_TF_VALUE) && g->tensors[i].dtype == FT_STRING) /* pointers, not bytes (graph/str.h) */
            return ft_err(err, FT_EGRAPH, "%s: tensor '%s' is a string constant: a .ftg file holds no strings; convert to "
                          "JSON (its strings go to a .npy file)", g->file, g->tensors[i].name);
    }
    wctx w = {ft_calloc((size_t)(n ? n : 1), sizeof(wblob)), ft_malloc((size_t)(g->n_tensors ? g->n_tensors : 1) * sizeof(int))};
    char *header = NULL;
    ft_status st = FT_OK;
    if (!w.b || !w.of_tensor) {
        st = ft_err(err, FT_ERUNTIME, "out of memory packing %s", g->file);
        goto out;
    }
    n = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        const ft_tensor *t = &g->tensors[i];
        if (!(t->flags & FT_TF_VALUE) || !(t->flags & FT_TF_DECLARED))
            continue;
        w.of_tensor[i] = n;
        w.b[n++] = (wblob){.tensor = i, .src = t->value, .n = ft_tensor_bytes(t), .stored = ft_tensor_bytes(t)};
    }
    if (compress && (st = compress_blobs(g, w.b, n, err)))
        goto out;
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        wblob *b = &w.b[i];
        b->crc = ft_crc32(0, b->z ? b->z : b->src, (size_t)b->stored);
        b->offset = off;
        off = align_up(off + b->stored);
        stats->blobs++;
        stats->zlib_blobs += b->z != NULL;
        stats->value_bytes += b->n;
        stats->stored_bytes += b->stored;
    }
    if (!(header = ft_graph_doc_rewrite(g, doc, doc_len, fill_blob, &w, 0, err))) {
        st = err->code ? err->code : FT_ERUNTIME;
        goto out;
    }
    uint64_t hlen = strlen(header), dat = align_up(FT_FTG_FIXED + hlen);
    unsigned char fixed[FT_FTG_FIXED];
    memcpy(fixed, FT_FTG_MAGIC, 8);
    put32(fixed + 8, FT_FTG_VERSION);
    put32(fixed + 12, 0);
    put32(fixed + 16, (uint32_t)hlen);
    put32(fixed + 20, (uint32_t)(hlen >> 32));
    int bad = fwrite(fixed, 1, sizeof fixed, f) != sizeof fixed || fwrite(header, 1, (size_t)hlen, f) != hlen ||
              write_zeros(f, dat - FT_FTG_FIXED - hlen);
    uint64_t pos = 0;
    for (int i = 0; i < n && !bad; i++) {
        const wblob *b = &w.b[i];
        bad = write_zeros(f, b->offset - pos) || fwrite(b->z ? b->z : b->src, 1, (size_t)b->stored, f) != b->stored;
        pos = b->offset + b->stored;
    }
    if (bad) {
        st = ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        goto out;
    }
    stats->file_bytes = dat + pos;
out:
    for (int i = 0; w.b && i < n; i++)
        free(w.b[i].z);
    free(w.b);
    free(w.of_tensor);
    free(header);
    return st;
}
