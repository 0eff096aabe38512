#include "backend.h"

#include <string.h>

const ft_backend *ft_backend_find(const char *name)
{
    if (strcmp(name, "cpu") == 0)
        return &ft_cpu_backend;
    return NULL; /* the CUDA backend is not part of this build */
}

int ft_backend_supports(const ft_backend *be, ft_op op, ft_dtype dt)
{
    const ft_kernel *k = &be->kernels[op];
    return k->fn != NULL && ft_dtype_in(dt, k->dtypes);
}
