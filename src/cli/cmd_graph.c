/* The commands that read a graph and describe or rewrite it: info, pack,
 * unpack, convert (cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../graph/ftg.h"
#include "cli.h"
#include "convert.h"
#include "outfile.h"
#include "report.h"

static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
    if (b < 10240)
        snprintf(buf, n, "%llu bytes", (unsigned long long)b);
    else if (b < 10 * 1048576ull)
        snprintf(buf, n, "%.1f KiB", b / 1024.0);
    else if (b < 10 * 1073741824ull)
        snprintf(buf, n, "%.1f MiB", b / 1048576.0);
    else
        snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
    return buf;
}

int ft_cmd_info(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    /* the memory plan only: info describes a graph whichever device runs it */
    if (cli_load(c, c->opt_level, &p, &err) || ft_bind_apply(c->bind, p.g, 0, &err) || ft_pipeline_plan(&p, NULL, NULL, &err)) {
        ft_pipeline_free(&p);
        return cli_fail(&err);
    }
    ft_print_info(stdout, p.g, &p.plan);
    ft_pipeline_free(&p);
    return cli_stdout_status(0);
}

int ft_cmd_pack(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    struct stat sb;
    if (stat(c->outdir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: error: pack -o %s: that is a directory; pack writes one file such as %s/model.ftg\n", ft_prog,
                c->outdir, c->outdir);
        return FT_ERUNTIME;
    }
    if (ft_outfile_check(c->outdir, FT_OUT_DASH, &err) || cli_load(c, c->opt_level, &p, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    char *doc = NULL;
    size_t len = 0;
    ft_pack_stats ps;
    ft_outfile of = {0};
    ft_status st = FT_OK;
    /* the file's own document, unless the graph was rewritten or the file is
     * not one (an ONNX model): then the document is made from the graph */
    if (g->about || p.opt.rewritten) {
        for (int i = 0; i < g->n_tensors; i++)
            if (g->tensors[i].flags & FT_TF_VALUE)
                g->tensors[i].flags |= FT_TF_DECLARED;
        if (!(doc = ft_graph_doc_make(g, &len, &err)))
            st = err.code ? err.code : FT_ERUNTIME;
    } else
        st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_outfile_open(&of, c->outdir, FT_OUT_DASH, &err);
    if (!st && (st = ft_ftg_write(g, doc, len, of.f, c->outdir, c->compress, &ps, &err)))
        ft_outfile_abort(&of);
    else if (!st)
        st = ft_outfile_commit(&of, &err);
    free(doc);
    ft_pipeline_free(&p);
    if (st)
        return cli_fail(&err);
    if (!c->quiet) {
        char a[32], b[32], f[32];
        fprintf(stderr, "%s: pack: wrote %s: %d blob%s (%d zlib), %s of values stored in %s; file %s\n", ft_prog,
                strcmp(c->outdir, "-") ? c->outdir : "standard output", ps.blobs,
                ps.blobs == 1 ? "" : "s", ps.zlib_blobs, human_bytes(ps.value_bytes, a, sizeof a),
                human_bytes(ps.stored_bytes, b, sizeof b), human_bytes(ps.file_bytes, f, sizeof f));
    }
    return 0;
}

int ft_cmd_unpack(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    /* the document as written: nothing to optimize */
    if (ft_outdir_check(c->outdir, NULL, 0, &err) || cli_load(c, 0, &p, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    char *doc = NULL;
    size_t len = 0;
    int files = 0;
    ft_status st = ft_graph_doc_text(c->graph, &doc, &len, &err);
    if (!st)
        st = ft_write_json_graph(g, doc, len, c->outdir, "graph.json", "", &files, &err);
    free(doc);
    ft_pipeline_free(&p);
    if (st)
        return cli_fail(&err);
    if (!c->quiet)
        fprintf(stderr, "%s: unpack: wrote %s/graph.json and %d .npy file%s\n", ft_prog, c->outdir, files, files == 1 ? "" : "s");
    return 0;
}

/* `convert MODEL -o OUT.json|OUT.ftg`: any graph file as an ftrun graph. */
int ft_cmd_convert(const ft_cli *c)
{
    ft_error err = {0};
    ft_pipeline p;
    if (ft_outpath_check(c->outdir, &err) || cli_load(c, c->opt_level, &p, &err))
        return cli_fail(&err);
    ft_graph *g = p.g;
    ft_pack_stats ps = {0};
    int files = 0;
    ft_status st = ft_convert(g, c->outdir, c->compress, &ps, &files, &err);
    int n_nodes = g->n_nodes;
    ft_pipeline_free(&p);
    if (st)
        return cli_fail(&err);
    if (!c->quiet && ft_convert_kind(c->outdir) == 2)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d blob%s\n", ft_prog, c->outdir, n_nodes, n_nodes == 1 ? "" : "s",
                ps.blobs, ps.blobs == 1 ? "" : "s");
    else if (!c->quiet)
        fprintf(stderr, "%s: convert: wrote %s: %d node%s, %d .npy file%s in %.*s.values/\n", ft_prog, c->outdir, n_nodes,
                n_nodes == 1 ? "" : "s", files, files == 1 ? "" : "s", (int)strlen(c->outdir) - 5, c->outdir);
    return 0;
}
