/* See onnx_inputs.h. */
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_inputs.h"

ft_status ft_onnx_input_names(const char *path, char ***names, int **kinds, int *n, ft_error *err)
{
    *names = NULL;
    *kinds = NULL;
    *n = -1;
    unsigned char *buf;
    size_t len;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    if (!ft_onnx_sniff(buf, len)) {
        free(buf);
        return FT_OK;
    }
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    if (!m || !m->graph) {
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return ft_err(err, FT_EGRAPH, "%s: not a readable ONNX model", path);
    }
    const Onnx__GraphProto *g = m->graph;
    char **list = ft_calloc(g->n_input ? g->n_input : 1, sizeof *list);
    int k = 0, *kind = ft_calloc(g->n_input ? g->n_input : 1, sizeof *kind);
    for (size_t i = 0; list && kind && i < g->n_input && !st; i++) {
        const Onnx__TypeProto *tp = g->input[i]->type;
        kind[k] = !tp ? 0 : tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? 1
                  : tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE         ? 2
                                                                                    : 0;
        const char *name = g->input[i]->name ? g->input[i]->name : "";
        int init = 0;
        for (size_t j = 0; j < g->n_initializer && !init; j++)
            init = g->initializer[j]->name && !strcmp(g->initializer[j]->name, name);
        if (!init && !(list[k++] = ft_strdup(name)))
            st = ft_err(err, FT_ERUNTIME, "out of memory");
    }
    onnx__model_proto__free_unpacked(m, NULL);
    if ((!list || !kind) && !st)
        st = ft_err(err, FT_ERUNTIME, "out of memory");
    if (st) {
        if (list)
            ft_free_strs(list, k);
        free(kind);
        return st;
    }
    *names = list;
    *kinds = kind;
    *n = k;
    return FT_OK;
}
