/* `ftrun --version`: the version, then the build (cli.h). Every line is
 * found without loading a device: the compiler from its macros, the
 * libraries from their own version calls, the CUDA backend from its file. */
#include <cjson/cJSON.h>
#include <oneapi/dnnl/dnnl.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"

/* OpenBLAS and FFTW declare these in headers whose names vary with the
 * build (openblas-pthread, openblas-openmp); the symbols do not. */
extern char *openblas_get_config(void);
extern char *openblas_get_corename(void);
extern const char fftw_version[];

static const char *dnnl_isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_all: return "all";
    default: return "other";
    }
}

void ft_print_version(FILE *f)
{
    fprintf(f, "ftrun %s\n", FT_VERSION);
#if defined(__clang__)
    fprintf(f, "compiler: clang %s", __clang_version__);
#elif defined(__GNUC__)
    fprintf(f, "compiler: gcc %s", __VERSION__);
#else
    fprintf(f, "compiler: unknown");
#endif
#ifdef _OPENMP
    fprintf(f, ", OpenMP %d", _OPENMP);
#endif
#ifdef __SANITIZE_ADDRESS__
    fprintf(f, ", AddressSanitizer");
#endif
#ifdef __OPTIMIZE__
    fprintf(f, ", optimized");
#else
    fprintf(f, ", not optimized");
#endif
    fprintf(f, "\n");
    const char *cuda = ft_cuda_backend_path();
    if (access(cuda, F_OK) == 0)
        fprintf(f, "backends: cpu; cuda (%s, loaded when a CUDA device is used; ftrun devices says whether it loads)\n", cuda);
    else
        fprintf(f, "backends: cpu; cuda not built (no %s)\n", cuda);
    const dnnl_version_t *dv = dnnl_version();
    /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64":
     * the version, then the build's options in parentheses */
    char blas[200];
    const char *cfg = openblas_get_config();
    cfg = !strncmp(cfg, "OpenBLAS ", 9) ? cfg + 9 : cfg;
    size_t vl = strcspn(cfg, " ");
    if (cfg[vl])
        snprintf(blas, sizeof blas, "%.*s (%s)", (int)vl, cfg, cfg + vl + 1);
    else
        snprintf(blas, sizeof blas, "%s", cfg);
    /* "fftw-3.3.10-sse2-avx": 3.3.10 (sse2, avx) */
    char fftw[64];
    const char *fv = !strncmp(fftw_version, "fftw-", 5) ? fftw_version + 5 : fftw_version;
    size_t fl = strcspn(fv, "-");
    snprintf(fftw, sizeof fftw, "%.*s%s%s%s", (int)fl, fv, fv[fl] ? " (" : "", fv[fl] ? fv + fl + 1 : "", fv[fl] ? ")" : "");
    for (char *p = strchr(fftw, '('); p && *p; p++)
        if (*p == '-')
            *p = ' ';
    fprintf(f, "libraries: oneDNN %d.%d.%d, OpenBLAS %s, FFTW %s, protobuf-c %s, cJSON %s, zlib %s\n", dv->major, dv->minor,
            dv->patch, blas, fftw, protobuf_c_version(), cJSON_Version(), zlibVersion());
    __builtin_cpu_init();
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    fprintf(f, "cpu: %s; oneDNN uses %s, OpenBLAS %s kernels\n",
            avx512 ? "AVX-512 (F, BW, DQ, VL)" : avx2 ? "AVX2 and FMA" : "no AVX2", dnnl_isa_name(dnnl_get_effective_cpu_isa()),
            openblas_get_corename());
}
