/* Writing a loaded graph as an ftrun graph: a JSON document with one .npy
 * file per value (`ftrun unpack`, `ftrun convert -o OUT.json`), or a binary
 * graph (`ftrun pack`, `ftrun convert -o OUT.ftg`, through ft_ftg_write).
 *
 *   char *doc; size_t n;
 *   ft_graph_doc_text("m.ftg", &doc, &n, &err);             // or ft_graph_doc_make(g, &n, &err)
 *   ft_write_json_graph(g, doc, n, "out", "graph.json", "", &files, &err);
 *   ft_convert(g, "m.ftg", 1, NULL, 0, &stats, &files, &err); // .json or .ftg by its name
 *
 * Ownership: nothing is kept; g and doc stay the caller's. Files appear by
 * rename when complete (report.h's ft_outset): a failure leaves none.
 */
#ifndef FT_CLI_CONVERT_H
#define FT_CLI_CONVERT_H

#include "../io/ftg.h"

/* DIR/JSON_NAME, and one .npy per declared value under DIR/SUBDIR (SUBDIR ""
 * or ending in '/'), named after its tensor ("file" in the document is
 * SUBDIR + that name). *files: the .npy files written. */
ft_status ft_write_json_graph(const ft_graph *g, const char *doc, size_t len, const char *dir, const char *json_name,
                              const char *subdir, int *files, ft_error *err);

/* 1 when path ends in .json, 2 in .ftg, else 0. */
int ft_convert_kind(const char *path);
/* Write g (every tensor with a value gets declared) to out: OUT.ftg as
 * `pack` writes it (compress: zlib blobs), or OUT.json with its values in the
 * folder OUT_BASE.values/ beside it (OUT_BASE: OUT without .json). The document
 * is doc (len bytes), or, when doc is NULL, made from g (ft_graph_doc_make),
 * so any loaded graph converts. */
ft_status ft_convert(ft_graph *g, const char *out, int compress, const char *doc, size_t len, ft_pack_stats *ps, int *files,
                     ft_error *err);

#endif
