/* The JSON graph reader's parts (not a public interface): json_reader.c
 * (document, nodes, attributes, helpers) and json_tensors.c (tensor
 * declarations, value sources, named dims). See ftg.h for the entry points.
 *
 *   reader r = {g, opts, err, blobs, NULL, 0, 0};
 *   jr_parse_tensor_decl(&r, decl);   // each "tensors" entry
 *   jr_resolve_dims(&r);              // once "inputs" and "outputs" are known
 *
 * Ownership: the reader owns r.p (the caller frees it); names in it point into
 * the cJSON document, which outlives every call.
 */
#ifndef FT_JSON_READER_H
#define FT_JSON_READER_H

#include <cjson/cJSON.h>

#include "../graph/dims.h"
#include "ftg.h"
#include "../graph/graph.h"

/* A declared tensor whose shape names a dim: its value source is read once
 * the names are bound (resolve_dims). */
typedef struct {
    int t;
    const cJSON *decl;
    int rank, done;
    ft_symdim sym[FT_MAX_RANK]; /* names point into the document */
} pending;

typedef struct {
    ft_graph *g;
    const ft_load_opts *opts;
    ft_error *err;
    ft_blob_set *blobs; /* non-NULL while reading a binary graph's header */
    pending *p;
    int np, capp;
} reader;

ft_status jr_oom(reader *r);
/* "FILE: tensor 'NAME': message" and "FILE: message", code FT_EGRAPH. */
ft_status jr_terr(reader *r, const char *tname, const char *fmt, ...) FT_PRINTF(3, 4);
ft_status jr_gerr(reader *r, const char *fmt, ...) FT_PRINTF(2, 3);
const char *jr_jtype(const cJSON *j); /* "a string", "an array", ... */
ft_status jr_check_keys(reader *r, const cJSON *obj, const char *const *allowed, int n, const char *what);
int jr_add_tensor(reader *r, const char *name); /* index, or < 0 (jr_add_tensor_err) */
ft_status jr_add_tensor_err(reader *r, int code, const char *name);
int jr_json_double(const cJSON *j, double *v); /* 0, or -1 when j is not a number ("nan", "inf" allowed) */
int jr_json_int(const cJSON *j, int64_t *v);   /* 0, or -1 when j is not an integer */

/* One "tensors" entry: dtype, shape and value source (read now, or once the
 * named dims in its shape are bound). */
ft_status jr_parse_tensor_decl(reader *r, const cJSON *decl);
/* Named dims (dims.h): bind them, resolve every input, read the value
 * sources that waited for them. */
ft_status jr_resolve_dims(reader *r);

#endif
