/* Finding CUDA without needing it: the driver is probed with dlopen (so the
 * ftrun binary starts on machines with no GPU, driver or toolkit), and the
 * CUDA backend is a shared object loaded on demand. What is missing is said
 * in the error, in the order a user would fix it. */
#include "backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The driver API, declared here with the ABI types (CUresult and CUdevice are
 * ints, attributes are stable enum values from cuda.h). */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_mem_fn)(size_t *, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_errname_fn)(int, const char **);
typedef int (*cu_version_fn)(int *);
enum { CU_ATTR_SM_COUNT = 16, CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

static char backend_path[PATH_MAX + 64];

/* Folder of the running executable, "" if unknown. */
static void exe_dir(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) {
        buf[0] = 0;
        return;
    }
    buf[len] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
}

const char *ft_cuda_backend_path(void)
{
    const char *env = getenv("FTRUN_CUDA_BACKEND");
    if (env && *env) {
        snprintf(backend_path, sizeof backend_path, "%s", env);
        return backend_path;
    }
    char dir[PATH_MAX];
    exe_dir(dir, sizeof dir);
    /* beside the binary (the build folder), then the installed layout */
    snprintf(backend_path, sizeof backend_path, "%s/libftrun-cuda.so", dir);
    if (access(backend_path, F_OK) != 0) {
        char alt[PATH_MAX + 64];
        snprintf(alt, sizeof alt, "%s/../lib/ftrun/libftrun-cuda.so", dir);
        if (access(alt, F_OK) == 0)
            snprintf(backend_path, sizeof backend_path, "%s", alt);
    }
    return backend_path;
}

static const char *driver_error_name(cu_errname_fn f, int r)
{
    const char *s = NULL;
    if (f && f(r, &s) == 0 && s)
        return s;
    /* the ones a machine without a working GPU gives, when the driver cannot name them */
    switch (r) {
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY (a stub driver library, not a real NVIDIA driver)";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older than the CUDA runtime)";
    case 46: return "CUDA_ERROR_DEVICES_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return "unknown CUDA driver error";
    }
}

int ft_cuda_devices(ft_device_info *out, int max, ft_error *err)
{
    const char *lib = getenv("FTRUN_CUDA_DRIVER");
    if (!lib || !*lib)
        lib = "libcuda.so.1";
    /* Kept open: the CUDA runtime in the backend uses the same driver. */
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        ft_err(err, FT_ERUNTIME, "no CUDA driver: %s", dlerror());
        return -1;
    }
    cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
    cu_count_fn count = (cu_count_fn)dlsym(h, "cuDeviceGetCount");
    cu_get_fn get = (cu_get_fn)dlsym(h, "cuDeviceGet");
    cu_name_fn name = (cu_name_fn)dlsym(h, "cuDeviceGetName");
    cu_mem_fn mem = (cu_mem_fn)dlsym(h, "cuDeviceTotalMem_v2");
    cu_attr_fn attr = (cu_attr_fn)dlsym(h, "cuDeviceGetAttribute");
    cu_errname_fn ename = (cu_errname_fn)dlsym(h, "cuGetErrorName");
    cu_version_fn ver = (cu_version_fn)dlsym(h, "cuDriverGetVersion");
    if (!init || !count || !get || !name || !mem || !attr) {
        ft_err(err, FT_ERUNTIME, "the CUDA driver %s lacks the functions ftrun needs (cuInit, cuDeviceGetCount, ...)", lib);
        return -1;
    }
    int r = init(0);
    if (r != 0) {
        int v = 0;
        if (ver && ver(&v) == 0 && v > 0)
            ft_err(err, FT_ERUNTIME, "the CUDA driver (version %d.%d) did not start: cuInit: %s (%d)", v / 1000, v % 1000 / 10,
                   driver_error_name(ename, r), r);
        else
            ft_err(err, FT_ERUNTIME, "the CUDA driver did not start: cuInit: %s (%d)", driver_error_name(ename, r), r);
        return -1;
    }
    int n = 0;
    if ((r = count(&n)) != 0) {
        ft_err(err, FT_ERUNTIME, "cuDeviceGetCount: %s (%d)", driver_error_name(ename, r), r);
        return -1;
    }
    if (n == 0) {
        ft_err(err, FT_ERUNTIME, "the CUDA driver sees no device");
        return -1;
    }
    for (int i = 0; i < n && i < max; i++) {
        ft_device_info *d = &out[i];
        memset(d, 0, sizeof *d);
        d->index = i;
        int dev = 0;
        size_t total = 0;
        if (get(&dev, i) != 0 || name(d->name, (int)sizeof d->name, dev) != 0)
            snprintf(d->name, sizeof d->name, "CUDA device %d", i);
        if (mem(&total, dev) == 0)
            d->total_bytes = total;
        attr(&d->cc_major, CU_ATTR_CC_MAJOR, dev);
        attr(&d->cc_minor, CU_ATTR_CC_MINOR, dev);
        attr(&d->sm_count, CU_ATTR_SM_COUNT, dev);
    }
    return n;
}

const ft_backend *ft_cuda_backend_load(ft_error *err)
{
    static const ft_backend *cuda;
    static char why[1024];
    if (cuda)
        return cuda;
    if (!why[0]) {
        const char *path = ft_cuda_backend_path();
        /* RTLD_NOW: a missing CUDA library or symbol shows here, not mid-run. */
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            if (access(path, F_OK) != 0)
                snprintf(why, sizeof why, "the CUDA backend is not installed (no %s; build it with 'make cuda')", path);
            else
                snprintf(why, sizeof why, "the CUDA backend %s cannot be loaded: %s", path, e ? e : "unknown error");
        } else {
            static const char op_names[] =
#define X FT_BACKEND_OP_NAMES_X
#include "../graph/ops.def"
#undef X
                ;
            const ft_backend *(*entry)(int, const char *) =
                (const ft_backend *(*)(int, const char *))dlsym(h, "ftrun_cuda_backend");
            const ft_backend *be = entry ? entry(FT_BACKEND_ABI, op_names) : NULL;
            if (!be) {
                snprintf(why, sizeof why, "the CUDA backend %s does not match this ftrun (interface version %d, %d ops); "
                         "rebuild it", path, FT_BACKEND_ABI, (int)FT_OP_COUNT);
                dlclose(h);
            } else {
                cuda = be; /* stays loaded for the life of the process */
            }
        }
    }
    if (!cuda)
        ft_err(err, FT_ERUNTIME, "%s", why);
    return cuda;
}
