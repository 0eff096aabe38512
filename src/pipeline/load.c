/* The one entry for graph files: the kind of file is decided by its first
 * bytes, never by its name. A binary graph (.ftg) starts with its magic
 * (ftg.h); an ONNX model with a ModelProto field tag (onnx.h); a JSON graph
 * with '{' (or '[', which the JSON reader then refuses with line:column).
 * Anything else is not a graph: the message says what it looks like (an
 * empty file, a Git LFS pointer, an HTML page, a zip archive, a NumPy array,
 * text ...), exit status 3. */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/ftg.h"
#include "../graph/graph.h"
#include "../io/npy.h"
#include "../onnx/onnx.h"
#include "pipeline.h"

/* opts with the load-time evaluator (load_eval.c) unless the caller gave one. */
static ft_load_opts with_eval(const ft_load_opts *opts)
{
    ft_load_opts o = opts ? *opts : (ft_load_opts){.seed_override = -1};
    if (!o.eval)
        o.eval = ft_load_eval;
    return o;
}

static int starts(const unsigned char *b, size_t n, const char *magic, size_t m)
{
    return n >= m && !memcmp(b, magic, m);
}

static int starts_nocase(const unsigned char *b, size_t n, const char *word)
{
    size_t m = strlen(word);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++)
        if (tolower(b[i]) != word[i])
            return 0;
    return 1;
}

/* Valid UTF-8 without NUL or control characters other than whitespace. */
static int is_text(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = b[i];
        int k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || (c < 0x20 && !strchr("\t\n\r\f\v", c)) || c == 0x7f)
            return 0;
        for (int j = 1; j < k; j++)
            if (i + (size_t)j < n && (b[i + j] & 0xC0) != 0x80) /* a character cut at the end is fine */
                return 0;
        i += (size_t)k;
    }
    return 1;
}

/* What the first bytes of a file that is not a graph look like, into why;
 * 0 when they may be a graph: ftg's magic, an ONNX tag, or JSON. */
static int not_a_graph(const unsigned char *b, size_t n, char *why, size_t wn)
{
    size_t i = 0;
    if (starts(b, n, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
        i = 3;
    while (i < n && isspace(b[i]))
        i++;
    const unsigned char *t = b + i;
    size_t tn = n - i;
    if (n == 0) {
        snprintf(why, wn, "the file is empty (0 bytes)");
        return 1;
    }
    if (tn == 0) {
        snprintf(why, wn, "the file holds only whitespace (%zu bytes)", n);
        return 1;
    }
    if (t[0] == '{' || t[0] == '[')
        return 0;
    if (starts(b, n, "\x89PNG\r\n\x1a\n", 8))
        snprintf(why, wn, "a PNG image");
    else if (starts(b, n, "\x89HDF\r\n\x1a\n", 8))
        snprintf(why, wn, "an HDF5 file (a Keras .h5 model? ftrun reads ONNX: convert it first, e.g. with tf2onnx)");
    else if (ft_ftg_is_ftg(b, n) || ft_onnx_sniff(b, n))
        return 0;
    else if (starts(t, tn, "version https://git-lfs.github.com/spec/", 40)) {
        const char *sz = memmem(t, tn, "\nsize ", 6);
        long long real = 0;
        for (const char *d = sz ? sz + 6 : NULL; d && d < (const char *)t + tn && *d >= '0' && *d <= '9' && real < (1ll << 50); d++)
            real = real * 10 + (*d - '0');
        char size[64] = "";
        if (real > 0)
            snprintf(size, sizeof size, " of %lld bytes", real);
        snprintf(why, wn, "a Git LFS pointer (%zu bytes), not the file%s it stands for: fetch that with 'git lfs pull' "
                 "(after 'git lfs install' where Git LFS is not set up)", n, size);
    } else if (starts_nocase(t, tn, "<!doctype html") || starts_nocase(t, tn, "<html") ||
               (t[0] == '<' && memmem(t, tn < 4096 ? tn : 4096, "<html", 5)))
        snprintf(why, wn, "an HTML page (a web page saved in place of the file? download the file itself, e.g. the "
                 "'raw' or 'resolve' link, not the page that shows it)");
    else if (starts(t, tn, "<?xml", 5))
        snprintf(why, wn, "an XML document");
    else if (starts(b, n, "PK\x03\x04", 4) || starts(b, n, "PK\x05\x06", 4)) {
        /* the first member's name: a local header's name starts at byte 30 */
        size_t nl = n >= 30 ? (size_t)(b[26] | b[27] << 8) : 0;
        const char *name = nl && n >= 30 + nl ? (const char *)b + 30 : "";
        if (nl >= 4 && nl <= n - 30 && !memcmp(name + nl - 4, ".npy", 4))
            snprintf(why, wn, "a NumPy .npz archive of arrays (values for -i NAME=FILE or --expect, not a graph)");
        else if (nl && nl <= n - 30 && (memmem(name, nl, "data.pkl", 8) || memmem(name, nl, "archive/", 8)))
            snprintf(why, wn, "a PyTorch checkpoint (torch.save; ftrun reads ONNX: export the model with torch.onnx.export)");
        else
            snprintf(why, wn, "a zip archive (unpack it: ftrun reads the model file itself)");
    } else if (starts(b, n, "\x93NUMPY", 6))
        snprintf(why, wn, "a NumPy .npy array (a value for -i NAME=FILE or --expect, not a graph)");
    else if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5)
        snprintf(why, wn, "a Python pickle (a PyTorch .pt or .pth file? ftrun reads ONNX: export the model with "
                 "torch.onnx.export)");
    else if (starts(b, n, "\x1f\x8b", 2))
        snprintf(why, wn, "gzip-compressed data (decompress it first)");
    else if (starts(b, n, "BZh", 3) || starts(b, n, "\xfd" "7zXZ", 6) || starts(b, n, "\x28\xb5\x2f\xfd", 4) ||
             starts(b, n, "7z\xbc\xaf\x27\x1c", 6))
        snprintf(why, wn, "a compressed archive (bzip2, xz, zstd or 7z: decompress it first)");
    else if (n >= 8 && !memcmp(b + 4, "TFL3", 4))
        snprintf(why, wn, "a TensorFlow Lite model (ftrun reads ONNX: convert it first, e.g. with tflite2onnx)");
    else if (starts(b, n, "GGUF", 4))
        snprintf(why, wn, "a GGUF model (llama.cpp's format, which ftrun does not read)");
    else if (n >= 10 && b[8] == '{' && b[9] == '"' && b[5] == 0 && b[6] == 0 && b[7] == 0)
        snprintf(why, wn, "a safetensors file (weights without a graph)");
    else if (starts(b, n, "%PDF", 4))
        snprintf(why, wn, "a PDF document");
    else if (starts(b, n, "\x7f" "ELF", 4))
        snprintf(why, wn, "an executable (ELF)");
    else if (starts(b, n, "\xff\xd8\xff", 3) || starts(b, n, "GIF8", 4))
        snprintf(why, wn, "an image (JPEG or GIF)");
    else if (is_text(t, tn < 4096 ? tn : 4096)) {
        char first[48];
        size_t k = 0;
        for (size_t j = 0; j < tn && t[j] != '\n' && t[j] != '\r' && k < sizeof first - 1; j++)
            first[k++] = t[j] < 0x20 || t[j] >= 0x7f ? '?' : (char)t[j];
        first[k] = 0;
        snprintf(why, wn, "a text file that is not a JSON graph (which starts with '{'); it begins '%s%s'", first,
                 k == sizeof first - 1 ? "..." : "");
    } else {
        char hex[40];
        size_t k = 0;
        for (size_t j = 0; j < n && j < 8; j++)
            k += (size_t)snprintf(hex + k, sizeof hex - k, "%s%02x", j ? " " : "", b[j]);
        snprintf(why, wn, "binary data of an unknown kind (first bytes %s); ftrun reads JSON graphs, binary graphs "
                 "(.ftg) and ONNX models", hex);
    }
    return 1;
}

ft_status ft_graph_load(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ft_err(err, errno == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[8];
    size_t n = fread(head, 1, sizeof head, f);
    int rerr = ferror(f) && errno != EISDIR ? errno : 0; /* a folder is reported below */
    fclose(f);
    if (rerr)
        return ft_err(err, rerr == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: read error: %s", path, strerror(rerr));
    char why[400];
    if (n && not_a_graph(head, n, why, sizeof why) && head[0] == 0x89) /* PNG, HDF5: not ftg */
        return ft_err(err, FT_EGRAPH, "%s: not a graph: %s (not an ftrun binary graph either)", path, why);
    if (ft_ftg_is_ftg(head, n))
        return ft_ftg_load(path, opts, out, err);
    if (n && !not_a_graph(head, n, why, sizeof why) && ft_onnx_sniff(head, n)) {
        ft_load_opts o = with_eval(opts);
        return ft_onnx_load_file(path, &o, out, err); /* mapped, decoded a weight at a time */
    }
    unsigned char *buf;
    size_t len;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    /* ft_read_file ends the bytes with a NUL, as the JSON reader wants them */
    if (not_a_graph(buf, len, why, sizeof why))
        st = ft_err(err, FT_EGRAPH, "%s: not a graph: %s", path, why);
    else if (ft_onnx_sniff(buf, len)) {
        ft_load_opts o = with_eval(opts);
        return ft_onnx_load_owned(path, buf, len, &o, out, err); /* freed once decoded */
    }
    else
        st = ft_graph_load_json(path, (const char *)buf, len, opts, out, err);
    free(buf);
    return st;
}

ft_status ft_graph_load_mem(const char *path, const void *bytes, size_t len, const ft_load_opts *opts, ft_graph **out,
                            ft_error *err)
{
    *out = NULL;
    char why[400];
    if (not_a_graph(bytes, len, why, sizeof why))
        return ft_err(err, FT_EGRAPH, "%s: not a graph: %s", path, why);
    if (ft_ftg_is_ftg(bytes, len))
        return ft_err(err, FT_EGRAPH, "%s: a binary graph (.ftg) is read from a file, not from memory", path);
    if (ft_onnx_sniff(bytes, len)) {
        ft_load_opts o = with_eval(opts);
        return ft_onnx_load(path, bytes, len, &o, out, err);
    }
    /* the JSON reader wants its text NUL-terminated */
    char *text = ft_malloc(len + 1);
    if (!text)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory (%zu bytes)", path, len + 1);
    memcpy(text, bytes, len);
    text[len] = '\0';
    ft_status st = ft_graph_load_json(path, text, len, opts, out, err);
    free(text);
    return st;
}
