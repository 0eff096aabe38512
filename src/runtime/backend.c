/* The backends by name (backend.h): the CPU backend is built in, the CUDA
 * backend is loaded on first use by cuda_loader.c. */
#include "backend.h"

#include <string.h>

const ft_backend *ft_backend_get(const char *name, ft_error *err)
{
    if (strcmp(name, "cpu") == 0)
        return &ft_cpu_backend;
    if (strcmp(name, "cuda") == 0)
        return ft_cuda_backend_load(err);
    ft_err(err, FT_EUSAGE, "no backend named '%s'", name);
    return NULL;
}
