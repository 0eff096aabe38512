/* Binary graphs (.ftg): the reader behind ft_graph_load, the writer behind
 * `ftrun pack`, and the document rewriting shared with `ftrun unpack`.
 * Layout (ftrun-graph(5), BINARY GRAPHS): magic, version, flags, header length H,
 * the JSON document, zero padding to a multiple of 64, then the blobs.
 *
 *   ft_graph *g; ft_graph_load("m.ftg", &opts, &g, &err);   // dispatches here
 *   char *doc; size_t n; ft_graph_doc_text("m.json", &doc, &n, &err);
 *   FILE *f = fopen("m.ftg", "wb");
 *   ft_ftg_write(g, doc, n, f, "m.ftg", 1, &stats, &err); free(doc); fclose(f);
 */
#ifndef FT_FTG_H
#define FT_FTG_H

#include <stdio.h>

#include "../graph/graph.h"

struct cJSON;

#define FT_FTG_MAGIC "\x89" "FTG\r\n\x1a\n"
#define FT_FTG_VERSION 1
#define FT_FTG_FIXED 24 /* magic, version, flags, header length */
#define FT_FTG_ALIGN 64

/* 1 when buf (n bytes) starts like a binary graph (its first byte is 0x89,
 * which no UTF-8 JSON text starts with). */
int ft_ftg_is_ftg(const void *buf, size_t n);

/* CRC-32 as zlib's crc32 (crc 0 to start), with carry-less multiplication
 * where the CPU has it and several threads for large buffers. */
uint32_t ft_crc32(uint32_t crc, const void *buf, size_t n);

/* Inflate exactly dlen bytes from a zlib stream (raw: a bare deflate stream,
 * as in zip files). A stream that would give more or fewer bytes, is corrupt,
 * or is followed by more stored bytes is refused: returns -1 with the reason
 * in why (-2 when zlib ran out of memory). 0 on success. */
int ft_inflate_exact(const void *src, uint64_t slen, void *dst, uint64_t dlen, int raw, char *why, size_t wn);

/* One "blob" value source of a .ftg header, as declared (checked against the
 * tensor and the data section by the JSON reader; overlaps and CRCs here). */
typedef struct ft_blob {
    int tensor;
    uint64_t offset, nbytes, stored;
    int zlib;
    uint32_t crc;
} ft_blob;

typedef struct ft_blob_set {
    uint64_t data_bytes; /* size of the data section: every blob must end inside it */
    ft_blob *v;
    int n, cap;
} ft_blob_set;

/* The JSON reader (json_reader.c): parse a graph document. With blobs
 * non-NULL the "blob" value source is accepted and recorded there (its value
 * is left for the caller to fill); with NULL it is an unknown key. */
ft_status ft_graph_parse_doc(const char *path, const char *text, size_t len, const ft_load_opts *opts,
                             ft_blob_set *blobs, ft_graph **out, ft_error *err);

/* Load a binary graph: map the file, check the fixed header, parse the JSON
 * header, check every blob (bounds, alignment, overlaps, sizes, CRC-32), then
 * point raw blobs into the mapping and inflate zlib blobs. */
ft_status ft_ftg_load(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err);

/* The JSON document of a graph file: the file itself, or the header of a
 * binary graph. NUL-terminated; the caller frees. */
ft_status ft_graph_doc_text(const char *path, char **text, size_t *len, ft_error *err);

/* Rewrite a graph document: every declared tensor of g that has a value loses
 * its value source ("data", "file", "offset", "init", "blob") and gets what
 * fill() adds to its declaration object (fill returns 0, or -1 on failure,
 * having filled err). Returns the new text (caller frees) or NULL. */
typedef int (*ft_source_fill)(void *ctx, const ft_graph *g, int tensor, struct cJSON *decl, ft_error *err);

/* cJSON gives NULL both for bad input and for a failed allocation. This routes
 * its allocations through a counter (json_reader.c) and returns the number
 * that failed so far: a change across a cJSON call means it ran out of memory. */
unsigned long ft_json_oom(void);
/* Rewriting also replaces each declared shape by the tensor's concrete one
 * (named dims as bound at load). */
char *ft_graph_doc_rewrite(const ft_graph *g, const char *doc, size_t len, ft_source_fill fill, void *ctx, int pretty,
                           ft_error *err);

/* A declaration's "shape" set to s (the named dims of a symbolic shape
 * become numbers). Returns 0, or -1 when out of memory. */
int ft_doc_set_shape(struct cJSON *decl, const ft_shape *s);
/* A graph document made from g itself (for graphs read from another format):
 * "tensors" declares every input, output and tensor with a value (without its
 * value source: ft_graph_doc_rewrite's fill adds one), "nodes" lists every node
 * with every attribute that has a value. Caller frees; NULL on failure. */
char *ft_graph_doc_make(const ft_graph *g, size_t *len, ft_error *err);

typedef struct ft_pack_stats {
    int blobs, zlib_blobs;
    uint64_t value_bytes;  /* decoded bytes of every blob */
    uint64_t stored_bytes; /* bytes of blobs in the file */
    uint64_t file_bytes;
} ft_pack_stats;

/* Write g as a binary graph to f (path names it in messages; the caller
 * opens and closes f: the command line writes through a temporary file,
 * src/cli/outfile.h). doc is g's JSON document (ft_graph_doc_text). With
 * compress, a blob is zlib-compressed when that makes it smaller. */
ft_status ft_ftg_write(const ft_graph *g, const char *doc, size_t doc_len, FILE *f, const char *path, int compress,
                       ft_pack_stats *stats, ft_error *err);

#endif
