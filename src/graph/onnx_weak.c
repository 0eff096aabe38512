/* Minimal stand-ins, replaced at link time by the real definitions
 * (onnx_ops.c: the op mappers; dims.c: the dims resolver) where those are
 * built. Numbers only: a named dim needs --dim or a shape binding. */
#include <string.h>

#include "dims.h"
#include "onnx_import.h"

#define WEAK __attribute__((weak))

WEAK const onx_op_map *onx_find_map(const char *op_type, int opset)
{
    (void)op_type;
    (void)opset;
    return NULL;
}

WEAK int onx_op_catalogue(const onx_op_status **list)
{
    *list = NULL;
    return 0;
}

struct ft_dimenv {
    const ft_load_opts *o;
};
static struct ft_dimenv weak_env;

WEAK ft_dimenv *ft_dimenv_new(const ft_load_opts *opts)
{
    weak_env.o = opts;
    return &weak_env;
}

WEAK void ft_dimenv_free(ft_dimenv *e) { (void)e; }

WEAK ft_status ft_dimenv_resolve(ft_dimenv *e, const char *file, const char *input, int rank, const ft_symdim *dims,
                                 ft_shape *out, ft_error *err)
{
    for (int i = 0; i < e->o->n_shapes; i++)
        if (!strcmp(e->o->shapes[i].input, input)) {
            *out = e->o->shapes[i].shape;
            return FT_OK;
        }
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        out->dims[d] = dims[d].value;
        for (int i = 0; dims[d].name && i < e->o->n_dims; i++)
            if (!strcmp(e->o->dims[i].name, dims[d].name))
                out->dims[d] = e->o->dims[i].value;
        if (out->dims[d] < 0)
            return ft_err(err, FT_EGRAPH, "%s: input '%s' dim %d%s%s%s is not known: pass --dim NAME=N or --shape %s=D0,...",
                          file, input, d, dims[d].name ? " ('" : "", dims[d].name ? dims[d].name : "",
                          dims[d].name ? "')" : "", input);
    }
    return FT_OK;
}

WEAK ft_status ft_dimenv_finish(ft_dimenv *e, const char *file, ft_error *err)
{
    (void)e;
    (void)file;
    (void)err;
    return FT_OK;
}
