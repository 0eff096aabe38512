/* The image readers of image_decoder (image_codec.h), one per format, each
 * asked for the size alone (rgb NULL) or for the pixels as 8-bit RGB. */
#define _GNU_SOURCE /* strcasestr */
#include "image_codec.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <openjpeg.h>
#include <png.h>
#include <stb/stb_image.h>
#include <tiffio.h>
#include <webp/decode.h>

#include "../common.h"

/* A reader: the size into *h, *w (rgb NULL), or the pixels into rgb
 * (*h x *w x 3, the size checked again). */
typedef int (*reader_fn)(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn);

#define fail(why, wn, ...) ft_fmt_rc(-1, why, wn, __VA_ARGS__)

/* The decoded size against the probed one. */
static int same_size(const char *fmt, int64_t h, int64_t w, int64_t dh, int64_t dw, char *why, size_t wn)
{
    if (h == dh && w == dw)
        return 0;
    return fail(why, wn, "%s: decoded %lldx%lld pixels, the header says %lldx%lld", fmt, (long long)dw, (long long)dh,
                (long long)w, (long long)h);
}

/* ------------------------------------------------------------------ JPEG */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jpeg_err;

static void jpeg_fail(j_common_ptr ci)
{
    jpeg_err *e = (jpeg_err *)ci->err;
    (*ci->err->format_message)(ci, e->msg);
    longjmp(e->jb, 1);
}

/* Warnings (level -1: corrupt or truncated data) are errors: libjpeg would
 * fill what is missing with grey. */
static void jpeg_message(j_common_ptr ci, int level)
{
    if (level < 0)
        jpeg_fail(ci);
}

static int read_jpeg(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    struct jpeg_decompress_struct ci;
    jpeg_err e;
    memset(&ci, 0, sizeof ci);
    ci.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = jpeg_fail;
    e.pub.emit_message = jpeg_message;
    if (setjmp(e.jb)) {
        jpeg_destroy_decompress(&ci);
        return fail(why, wn, "JPEG: %s", e.msg);
    }
    jpeg_create_decompress(&ci);
    jpeg_mem_src(&ci, p, (unsigned long)n);
    jpeg_read_header(&ci, TRUE);
    if (!rgb) {
        *h = ci.image_height;
        *w = ci.image_width;
        jpeg_destroy_decompress(&ci);
        return 0;
    }
    ci.out_color_space = JCS_RGB; /* libjpeg's defaults otherwise: islow IDCT, fancy upsampling (as Pillow) */
    jpeg_start_decompress(&ci);
    if (same_size("JPEG", *h, *w, ci.output_height, ci.output_width, why, wn) || ci.output_components != 3) {
        jpeg_destroy_decompress(&ci);
        return ci.output_components != 3 ? fail(why, wn, "JPEG: %d components after conversion to RGB",
                                                ci.output_components) : -1;
    }
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = rgb + (size_t)ci.output_scanline * (size_t)*w * 3;
        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    return 0;
}

/* ------------------------------------------------------------------- PNG */

typedef struct {
    const uint8_t *p;
    size_t n, at;
    char *why;
    size_t wn;
} mem_in;

static void png_read_mem(png_structp ps, png_bytep out, size_t len)
{
    mem_in *m = png_get_io_ptr(ps);
    if (len > m->n - m->at)
        png_error(ps, "the data ends inside the image");
    memcpy(out, m->p + m->at, len);
    m->at += len;
}

static void png_fail(png_structp ps, png_const_charp msg)
{
    mem_in *m = png_get_error_ptr(ps);
    snprintf(m->why, m->wn, "PNG: %s", msg);
    png_longjmp(ps, 1);
}

static void png_quiet(png_structp ps, png_const_charp msg) { (void)ps, (void)msg; }

/* Palette, grey and tRNS expanded, 16-bit samples cut to their high byte,
 * alpha dropped (no compositing), no gamma correction: Pillow's reading. */
static int read_png(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    mem_in m = {p, n, 0, why, wn};
    png_structp ps = png_create_read_struct(PNG_LIBPNG_VER_STRING, &m, png_fail, png_quiet);
    png_infop pi = ps ? png_create_info_struct(ps) : NULL;
    png_bytep *volatile rows = NULL;
    if (!pi) {
        png_destroy_read_struct(&ps, NULL, NULL);
        return fail(why, wn, "PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(ps))) {
        free(rows);
        png_destroy_read_struct(&ps, &pi, NULL);
        return -1;
    }
    png_set_read_fn(ps, &m, png_read_mem);
    png_read_info(ps, pi);
    int64_t ph = png_get_image_height(ps, pi), pw = png_get_image_width(ps, pi);
    if (!rgb) {
        *h = ph, *w = pw;
        png_destroy_read_struct(&ps, &pi, NULL);
        return 0;
    }
    png_set_expand(ps);
    png_set_strip_16(ps);
    png_set_strip_alpha(ps);
    png_set_gray_to_rgb(ps);
    png_set_interlace_handling(ps);
    png_read_update_info(ps, pi);
    if (same_size("PNG", *h, *w, ph, pw, why, wn) || png_get_rowbytes(ps, pi) != (size_t)pw * 3) {
        if (!why[0])
            snprintf(why, wn, "PNG: %zu bytes a row after conversion to RGB", (size_t)png_get_rowbytes(ps, pi));
        png_destroy_read_struct(&ps, &pi, NULL);
        return -1;
    }
    if (!(rows = malloc((size_t)ph * sizeof *rows)))
        png_error(ps, "out of memory");
    for (int64_t y = 0; y < ph; y++)
        rows[y] = rgb + (size_t)y * (size_t)pw * 3;
    png_read_image(ps, rows);
    png_read_end(ps, NULL);
    free(rows);
    png_destroy_read_struct(&ps, &pi, NULL);
    return 0;
}

/* ------------------------------------------------------------------ WebP */

static int read_webp(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    WebPBitstreamFeatures f;
    VP8StatusCode sc = WebPGetFeatures(p, n, &f);
    if (sc != VP8_STATUS_OK)
        return fail(why, wn, "WebP: %s", sc == VP8_STATUS_NOT_ENOUGH_DATA ? "the data ends inside the header"
                                         : sc == VP8_STATUS_UNSUPPORTED_FEATURE ? "a feature libwebp does not decode"
                                                                                : "a corrupt header");
    if (f.has_animation)
        return fail(why, wn, "WebP: an animation (image_decoder reads still images)");
    if (!rgb) {
        *h = f.height, *w = f.width;
        return 0;
    }
    if (same_size("WebP", *h, *w, f.height, f.width, why, wn))
        return -1;
    if (!WebPDecodeRGBInto(p, n, rgb, (size_t)*h * (size_t)*w * 3, (int)*w * 3))
        return fail(why, wn, "WebP: the image data is truncated or corrupt");
    return 0;
}

/* ------------------------------------------------------------------ TIFF */

static tmsize_t tiff_read(thandle_t th, void *buf, tmsize_t len)
{
    mem_in *m = (mem_in *)th;
    size_t k = m->at >= m->n ? 0 : m->n - m->at;
    if (len < 0)
        return -1;
    if ((size_t)len < k)
        k = (size_t)len;
    memcpy(buf, m->p + m->at, k);
    m->at += k;
    return (tmsize_t)k;
}

static tmsize_t tiff_write(thandle_t th, void *buf, tmsize_t len) { (void)th, (void)buf, (void)len; return -1; }

static toff_t tiff_seek(thandle_t th, toff_t off, int whence)
{
    mem_in *m = (mem_in *)th;
    uint64_t base = whence == SEEK_CUR ? m->at : whence == SEEK_END ? m->n : 0;
    if (off > UINT64_MAX - base || base + off > (uint64_t)SIZE_MAX)
        return (toff_t)-1;
    m->at = (size_t)(base + off);
    return base + off;
}

static int tiff_close(thandle_t th) { (void)th; return 0; }
static toff_t tiff_size(thandle_t th) { return ((mem_in *)th)->n; }
static int tiff_map(thandle_t th, void **base, toff_t *size) { (void)th, (void)base, (void)size; return 0; }
static void tiff_unmap(thandle_t th, void *base, toff_t size) { (void)th, (void)base, (void)size; }

static int tiff_error(TIFF *t, void *ud, const char *module, const char *fmt, va_list ap)
{
    (void)t, (void)module;
    mem_in *m = ud;
    if (!m->why[0]) { /* the first error says most */
        int k = snprintf(m->why, m->wn, "TIFF: ");
        if (k >= 0 && (size_t)k < m->wn)
            vsnprintf(m->why + k, m->wn - (size_t)k, fmt, ap);
    }
    return 1;
}

static int tiff_quiet(TIFF *t, void *ud, const char *module, const char *fmt, va_list ap)
{
    (void)t, (void)ud, (void)module, (void)fmt, (void)ap;
    return 1;
}

/* Any TIFF libtiff's RGBA interface reads (first directory), top row first. */
static int read_tiff(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    mem_in m = {p, n, 0, why, wn};
    why[0] = 0;
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o)
        return fail(why, wn, "TIFF: out of memory");
    TIFFOpenOptionsSetErrorHandlerExtR(o, tiff_error, &m);
    TIFFOpenOptionsSetWarningHandlerExtR(o, tiff_quiet, NULL);
    TIFF *t = TIFFClientOpenExt("image_decoder", "rm", (thandle_t)&m, tiff_read, tiff_write, tiff_seek, tiff_close,
                                tiff_size, tiff_map, tiff_unmap, o);
    TIFFOpenOptionsFree(o);
    if (!t)
        return why[0] ? -1 : fail(why, wn, "TIFF: not a readable TIFF file");
    uint32_t tw = 0, th = 0;
    int st = 0;
    if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &tw) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &th))
        st = why[0] ? -1 : fail(why, wn, "TIFF: no image width or length");
    else if (!rgb)
        *h = th, *w = tw;
    else if (!(st = same_size("TIFF", *h, *w, th, tw, why, wn))) {
        uint32_t *px = malloc((size_t)tw * th * 4);
        if (!px)
            st = fail(why, wn, "TIFF: out of memory");
        else if (!TIFFReadRGBAImageOriented(t, tw, th, px, ORIENTATION_TOPLEFT, 1))
            st = why[0] ? -1 : fail(why, wn, "TIFF: the image data cannot be read");
        for (size_t i = 0; px && !st && i < (size_t)tw * th; i++) {
            rgb[3 * i] = (uint8_t)TIFFGetR(px[i]);
            rgb[3 * i + 1] = (uint8_t)TIFFGetG(px[i]);
            rgb[3 * i + 2] = (uint8_t)TIFFGetB(px[i]);
        }
        free(px);
    }
    TIFFClose(t);
    return st;
}

/* ------------------------------------------------------------ JPEG 2000 */

static OPJ_SIZE_T opj_read_mem(void *buf, OPJ_SIZE_T len, void *ud)
{
    mem_in *m = ud;
    if (m->at >= m->n)
        return (OPJ_SIZE_T)-1;
    size_t k = m->n - m->at < len ? m->n - m->at : len;
    memcpy(buf, m->p + m->at, k);
    m->at += k;
    return k;
}

static OPJ_OFF_T opj_skip_mem(OPJ_OFF_T off, void *ud)
{
    mem_in *m = ud;
    if (off < 0 ? (size_t)-off > m->at : (uint64_t)off > m->n - m->at)
        return -1;
    m->at = (size_t)((OPJ_OFF_T)m->at + off);
    return off;
}

static OPJ_BOOL opj_seek_mem(OPJ_OFF_T off, void *ud)
{
    mem_in *m = ud;
    if (off < 0 || (uint64_t)off > m->n)
        return OPJ_FALSE;
    m->at = (size_t)off;
    return OPJ_TRUE;
}

static void opj_error_msg(const char *msg, void *ud)
{
    mem_in *m = ud;
    if (!m->why[0]) {
        snprintf(m->why, m->wn, "JPEG 2000: %s", msg);
        size_t k = strlen(m->why);
        if (k && m->why[k - 1] == '\n')
            m->why[k - 1] = 0;
    }
}

static void opj_quiet(const char *msg, void *ud) { (void)msg, (void)ud; }

/* Sample v of a component of prec bits as 8 bits. */
static uint8_t opj_sample(int32_t v, const opj_image_comp_t *c)
{
    int64_t x = (int64_t)v + (c->sgnd ? (int64_t)1 << (c->prec - 1) : 0);
    x = c->prec > 8 ? x >> (c->prec - 8) : x << (8 - c->prec);
    return (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
}

static int read_jp2(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    mem_in m = {p, n, 0, why, wn};
    why[0] = 0;
    int jp2 = n >= 4 && !(p[0] == 0xff && p[1] == 0x4f);
    opj_stream_t *s = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_codec_t *c = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    opj_image_t *im = NULL;
    opj_dparameters_t prm;
    int st = 0;
    if (!s || !c) {
        st = fail(why, wn, "JPEG 2000: out of memory");
        goto out;
    }
    opj_stream_set_user_data(s, &m, NULL);
    opj_stream_set_user_data_length(s, n);
    opj_stream_set_read_function(s, opj_read_mem);
    opj_stream_set_skip_function(s, opj_skip_mem);
    opj_stream_set_seek_function(s, opj_seek_mem);
    opj_set_error_handler(c, opj_error_msg, &m);
    opj_set_warning_handler(c, opj_quiet, NULL);
    opj_set_info_handler(c, opj_quiet, NULL);
    opj_set_default_decoder_parameters(&prm);
    if (!opj_setup_decoder(c, &prm) || !opj_read_header(s, c, &im) || !im || im->numcomps < 1) {
        st = why[0] ? -1 : fail(why, wn, "JPEG 2000: the header cannot be read");
        goto out;
    }
    for (OPJ_UINT32 k = 0; k < im->numcomps; k++)
        if (im->comps[k].dx != 1 || im->comps[k].dy != 1 || im->comps[k].prec < 1 || im->comps[k].prec > 31) {
            st = fail(why, wn, "JPEG 2000: component %u is subsampled (%ux%u) or of %u bits; image_decoder reads "
                      "full-resolution components of 1 to 31 bits", k, im->comps[k].dx, im->comps[k].dy,
                      im->comps[k].prec);
            goto out;
        }
    if (im->color_space == OPJ_CLRSPC_SYCC || im->color_space == OPJ_CLRSPC_CMYK || im->color_space == OPJ_CLRSPC_EYCC) {
        st = fail(why, wn, "JPEG 2000: colour space %d (sYCC, e-YCC or CMYK) is not converted to RGB", im->color_space);
        goto out;
    }
    int64_t ph = (int64_t)im->y1 - im->y0, pw = (int64_t)im->x1 - im->x0;
    if (!rgb) {
        *h = ph, *w = pw;
        goto out;
    }
    if ((st = same_size("JPEG 2000", *h, *w, ph, pw, why, wn)))
        goto out;
    if (!opj_decode(c, s, im) || !opj_end_decompress(c, s)) {
        st = why[0] ? -1 : fail(why, wn, "JPEG 2000: the image data cannot be decoded");
        goto out;
    }
    const opj_image_comp_t *cc[3];
    for (int k = 0; k < 3; k++) {
        cc[k] = &im->comps[im->numcomps >= 3 ? k : 0]; /* grey (with or without alpha): repeated */
        if (!cc[k]->data || (int64_t)cc[k]->w != pw || (int64_t)cc[k]->h != ph) {
            st = fail(why, wn, "JPEG 2000: component %d decoded at %ux%u, the image is %lldx%lld", k, cc[k]->w,
                      cc[k]->h, (long long)pw, (long long)ph);
            goto out;
        }
    }
    for (size_t i = 0; i < (size_t)ph * (size_t)pw; i++)
        for (int k = 0; k < 3; k++)
            rgb[3 * i + (size_t)k] = opj_sample(cc[k]->data[i], cc[k]);
out:
    if (im)
        opj_image_destroy(im);
    if (c)
        opj_destroy_codec(c);
    if (s)
        opj_stream_destroy(s);
    return st;
}

/* ------------------------------------------------------------- BMP, PNM */

/* Little-endian field of k bytes at p + at. */
static uint64_t le(const uint8_t *p, size_t at, int k)
{
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--)
        v = v << 8 | p[at + (size_t)i];
    return v;
}

/* PNM header field: the number after whitespace and comments at *at, or -1. */
static int64_t pnm_field(const uint8_t *p, size_t n, size_t *at)
{
    while (*at < n && (p[*at] == ' ' || p[*at] == '\t' || p[*at] == '\r' || p[*at] == '\n' || p[*at] == '#'))
        if (p[*at] == '#')
            while (*at < n && p[*at] != '\n')
                ++*at;
        else
            ++*at;
    int64_t v = -1;
    while (*at < n && p[*at] >= '0' && p[*at] <= '9' && v < ((int64_t)1 << 40))
        v = (v < 0 ? 0 : v * 10) + (p[(*at)++] - '0');
    return v;
}

/* The bytes an uncompressed BMP or a PNM of w x h pixels needs, against n
 * (stb_image reads past the end as zeros): 0 when they are there. */
static int stb_complete(const uint8_t *p, size_t n, int64_t w, int64_t h, char *why, size_t wn)
{
    uint64_t need = 0;
    if (p[0] == 'B') {
        if (n < 30)
            return fail(why, wn, "BMP: the data ends inside the header");
        uint64_t hs = le(p, 14, 4), bpp = hs == 12 ? le(p, 24, 2) : le(p, 28, 2);
        uint64_t comp = hs >= 40 && n >= 34 ? le(p, 30, 4) : 0;
        if (comp == 0 || comp == 3 || comp == 6) /* BI_RGB, BI_BITFIELDS, BI_ALPHABITFIELDS: rows of whole words */
            need = le(p, 10, 4) + ((uint64_t)w * bpp + 31) / 32 * 4 * (uint64_t)h;
    } else {
        size_t at = 2;
        int64_t pw = pnm_field(p, n, &at), ph = pnm_field(p, n, &at), mx = pnm_field(p, n, &at);
        if (pw < 0 || ph < 0 || mx < 1 || at >= n)
            return fail(why, wn, "PNM: the data ends inside the header or the header is malformed");
        need = at + 1 + (uint64_t)w * (uint64_t)h * (p[1] == '6' ? 3 : 1) * (mx > 255 ? 2 : 1);
    }
    return need > n ? fail(why, wn, "%s: %zu bytes where the image needs %llu: the data is truncated",
                           p[0] == 'B' ? "BMP" : "PNM", n, (unsigned long long)need) : 0;
}

static int read_stb(const uint8_t *p, size_t n, uint8_t *rgb, int64_t *h, int64_t *w, char *why, size_t wn)
{
    const char *fmt = p[0] == 'B' ? "BMP" : "PNM";
    int x = 0, y = 0, comp = 0;
    if (n > INT_MAX)
        return fail(why, wn, "%s: %zu bytes, more than stb_image reads", fmt, n);
    if (!rgb) {
        if (!stbi_info_from_memory(p, (int)n, &x, &y, &comp))
            return fail(why, wn, "%s: %s", fmt, stbi_failure_reason());
        *h = y, *w = x;
        return x > 0 && y > 0 ? stb_complete(p, n, x, y, why, wn) : 0;
    }
    unsigned char *d = stbi_load_from_memory(p, (int)n, &x, &y, &comp, 3);
    if (!d)
        return fail(why, wn, "%s: %s", fmt, stbi_failure_reason());
    int st = same_size(fmt, *h, *w, y, x, why, wn);
    if (!st)
        memcpy(rgb, d, (size_t)x * (size_t)y * 3);
    stbi_image_free(d);
    return st;
}

/* ---------------------------------------------------------------------- */

static const struct {
    const char *name;
    size_t len;
    const char *magic; /* '?' matches any byte */
    reader_fn read;
} FORMATS[] = {
    {"JPEG", 3, "\xff\xd8\xff", read_jpeg},
    {"PNG", 8, "\x89PNG\r\n\x1a\n", read_png},
    {"WebP", 12, "RIFF????WEBP", read_webp},
    {"TIFF", 4, "II*\0", read_tiff},
    {"TIFF", 4, "MM\0*", read_tiff},
    {"JPEG 2000", 12, "\0\0\0\x0cjP  \r\n\x87\n", read_jp2},
    {"JPEG 2000", 4, "\xff\x4f\xff\x51", read_jp2},
    {"BMP", 2, "BM", read_stb},
    {"PNM", 2, "P5", read_stb},
    {"PNM", 2, "P6", read_stb},
};

static int format_index(const uint8_t *p, size_t n)
{
    for (size_t f = 0; f < FT_ARRAY_LEN(FORMATS); f++) {
        size_t k = 0;
        while (k < FORMATS[f].len && k < n && (FORMATS[f].magic[k] == '?' || (uint8_t)FORMATS[f].magic[k] == p[k]))
            k++;
        if (k == FORMATS[f].len)
            return (int)f;
    }
    return -1;
}

const char *ft_image_format(const uint8_t *p, size_t n)
{
    int f = format_index(p, n);
    return f < 0 ? NULL : FORMATS[f].name;
}

/* -2 for a failure whose message is an allocation's (ftrun's own say "out
 * of memory"; libjpeg's "Insufficient memory", libpng's and libtiff's "Out
 * of memory"), else rc. */
static int oom_or(int rc, const char *why)
{
    if (rc && (strcasestr(why, "out of memory") || strcasestr(why, "insufficient memory")))
        return -2;
    return rc;
}

static int probe(const uint8_t *p, size_t n, int64_t *h, int64_t *w, char *why, size_t why_n);
static int decode(const uint8_t *p, size_t n, int pix, uint8_t *out, int64_t h, int64_t w, char *why, size_t why_n);

int ft_image_probe(const uint8_t *p, size_t n, int64_t *h, int64_t *w, char *why, size_t why_n)
{
    return oom_or(probe(p, n, h, w, why, why_n), why);
}

int ft_image_decode(const uint8_t *p, size_t n, int pix, uint8_t *out, int64_t h, int64_t w, char *why, size_t why_n)
{
    return oom_or(decode(p, n, pix, out, h, w, why, why_n), why);
}

static int probe(const uint8_t *p, size_t n, int64_t *h, int64_t *w, char *why, size_t why_n)
{
    int f = format_index(p, n);
    why[0] = 0;
    if (f < 0) {
        if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7')
            return fail(why, why_n, "PNM P%c: image_decoder reads the binary greymap and pixmap forms (P5, P6)", p[1]);
        return fail(why, why_n, "%zu bytes that begin as no image format image_decoder reads (JPEG, PNG, WebP, TIFF, "
                    "JPEG 2000, BMP, PNM)", n);
    }
    if (FORMATS[f].read(p, n, NULL, h, w, why, why_n))
        return -1;
    if (*h < 1 || *w < 1 || *h > ((int64_t)1 << 20) || *w > ((int64_t)1 << 20) || *h * *w > FT_IMAGE_MAX_PIXELS)
        return fail(why, why_n, "%s: an image of %lldx%lld pixels (image_decoder reads 1 to 2^28 pixels, at most 2^20 "
                    "a side)", FORMATS[f].name, (long long)*w, (long long)*h);
    return 0;
}

static int decode(const uint8_t *p, size_t n, int pix, uint8_t *out, int64_t h, int64_t w, char *why, size_t why_n)
{
    int f = format_index(p, n);
    why[0] = 0;
    if (f < 0)
        return probe(p, n, &h, &w, why, why_n);
    size_t np = (size_t)h * (size_t)w;
    uint8_t *rgb = pix == FT_PIX_GRAY ? malloc(np * 3) : out;
    if (!rgb)
        return fail(why, why_n, "out of memory for %zu pixels", np);
    int64_t dh = h, dw = w;
    int st = FORMATS[f].read(p, n, rgb, &dh, &dw, why, why_n);
    if (!st && pix == FT_PIX_BGR)
        for (size_t i = 0; i < np; i++) {
            uint8_t r = rgb[3 * i];
            rgb[3 * i] = rgb[3 * i + 2];
            rgb[3 * i + 2] = r;
        }
    if (!st && pix == FT_PIX_GRAY) /* ITU-R 601-2 luma in 16-bit fixed point, rounded (Pillow's RGB to L) */
        for (size_t i = 0; i < np; i++)
            out[i] = (uint8_t)((19595u * rgb[3 * i] + 38470u * rgb[3 * i + 1] + 7471u * rgb[3 * i + 2] + 0x8000u) >> 16);
    if (rgb != out)
        free(rgb);
    return st;
}
