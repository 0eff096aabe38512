/* OpenBLAS picks its kernels for the CPU when the library loads, before main.
 * The 0.3.21 in Debian 12 does not recognise some recent Intel CPUs and falls
 * back to its Prescott (SSE3) kernels, which run matrix products 2-4x slower
 * than the AVX-512 ones the CPU can run. When that happened, and the user has
 * not chosen a core with OPENBLAS_CORETYPE, ftrun sets it and executes itself
 * again, once. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

char *openblas_get_corename(void);
void ft_blas_tune(char **argv);

void ft_blas_tune(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE"))
        return; /* the user's choice, or our own second start */
    const char *core = openblas_get_corename();
    if (!core || (strcasecmp(core, "Prescott") != 0 && strcasecmp(core, "Core2") != 0 && strcasecmp(core, "Nehalem") != 0))
        return;
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
    if (!want || setenv("OPENBLAS_CORETYPE", want, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* exec failed: go on with the kernels OpenBLAS chose */
}
