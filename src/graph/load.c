/* The one entry for graph files: the kind of file is decided by its first
 * bytes, never by its name. A binary graph (.ftg) starts with its magic
 * (ftg.h); an ONNX model with a ModelProto field tag (onnx.h); anything else
 * is read as a JSON graph, so a text file gets a JSON error with line:column. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftg.h"
#include "graph.h"
#include "npy.h"
#include "onnx.h"

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
    if (ft_ftg_is_ftg(head, n))
        return ft_ftg_load(path, opts, out, err);
    unsigned char *buf;
    size_t len;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    /* ft_read_file ends the bytes with a NUL, as the JSON reader wants them */
    if (ft_onnx_sniff(buf, len))
        st = ft_onnx_load(path, buf, len, opts, out, err);
    else
        st = ft_graph_load_json(path, (const char *)buf, len, opts, out, err);
    free(buf);
    return st;
}

ft_status ft_graph_load_mem(const char *path, const void *bytes, size_t len, const ft_load_opts *opts, ft_graph **out,
                            ft_error *err)
{
    *out = NULL;
    if (ft_ftg_is_ftg(bytes, len))
        return ft_err(err, FT_EGRAPH, "%s: a binary graph (.ftg) is read from a file, not from memory", path);
    if (ft_onnx_sniff(bytes, len))
        return ft_onnx_load(path, bytes, len, opts, out, err);
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
