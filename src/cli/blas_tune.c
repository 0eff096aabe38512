/* OpenBLAS picks its kernels for the CPU when the library loads, before main.
 * The 0.3.21 in Debian 12 does not recognise some recent Intel CPUs and falls
 * back to its Prescott (SSE3) kernels, which run matrix products 2-4x slower
 * than the AVX-512 ones the CPU can run. When that happened, and the user has
 * not chosen a core with OPENBLAS_CORETYPE, ftrun sets it.
 *
 * libgomp also reads its settings when it loads: by default an idle OpenMP
 * thread spins for a long while after each parallel loop, fighting any other
 * process for the cores (the transformer example
 * ran 2x slower on 2 busy cores). Unless the user set OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT, ftrun sets a shorter spin (GOMP_SPINCOUNT=100000). Not
 * shorter still: at 10000 the threads slept between the short parallel loops
 * of a run, and waking them made whole runs of a transformer encoder layer
 * at 2 threads 3.5 times slower (ftrun(1), ENVIRONMENT).
 *
 * The spin matters only where OpenMP threads run graphs: a command line that
 * runs nothing (info, ops, convert, --help, ...) or runs on one thread
 * (--threads 1) keeps libgomp's default and skips that new start, which
 * costs about as much as loading ftrun once.
 *
 * If either was set, ftrun executes itself again, once, to apply them. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

char *openblas_get_corename(void);
void ft_blas_tune(char **argv);

static int blas_core_fix(void)
{
    if (getenv("OPENBLAS_CORETYPE"))
        return 0; /* the user's choice, or our own second start */
    const char *core = openblas_get_corename();
    if (!core || (strcasecmp(core, "Prescott") != 0 && strcasecmp(core, "Core2") != 0 && strcasecmp(core, "Nehalem") != 0))
        return 0;
    __builtin_cpu_init();
    const char *want = NULL;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        want = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
    return want && setenv("OPENBLAS_CORETYPE", want, 1) == 0;
}

/* Whether the command line may run a graph on more than one OpenMP thread:
 * the default command or run, test, and not --threads 1, --help or
 * --version. A guess from the words alone, before they are parsed: a wrong
 * guess costs a new start or the default spin, never a result. */
static int runs_threads(char **argv)
{
    static const char *const idle[] = {"info", "ops", "devices", "pack", "unpack", "convert", "compare", "show"};
    if (!argv[0] || !argv[1])
        return 0;
    for (size_t i = 0; i < sizeof idle / sizeof idle[0]; i++)
        if (!strcmp(argv[1], idle[i]))
            return 0;
    for (int i = 1; argv[i]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--version") || !strcmp(a, "-V") ||
            !strcmp(a, "--threads=1") || (!strcmp(a, "--threads") && argv[i + 1] && !strcmp(argv[i + 1], "1")))
            return 0;
        if (!strcmp(a, "--"))
            break;
    }
    return 1;
}

void ft_blas_tune(char **argv)
{
    int changed = blas_core_fix();
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT") && runs_threads(argv))
        changed |= setenv("GOMP_SPINCOUNT", "100000", 1) == 0;
    /* argv[0] rather than /proc/self/exe, which under valgrind is valgrind itself */
    if (changed && argv[0])
        execvp(argv[0], argv);
    /* nothing to change, or exec failed: go on as loaded */
}
