/* A stand-in for libcuda.so.1 in the command-line tests: the driver calls
 * ftrun's probe makes, answering with FAKE_CUDA_DEVICES devices (default 1)
 * named "Fake CUDA device". FAKE_CUDA_INIT=N makes cuInit fail with N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

int cuInit(unsigned flags)
{
    (void)flags;
    return env_int("FAKE_CUDA_INIT", 0);
}
int cuDriverGetVersion(int *v)
{
    *v = 13000;
    return 0;
}
int cuDeviceGetCount(int *n)
{
    *n = env_int("FAKE_CUDA_DEVICES", 1);
    return 0;
}
int cuDeviceGet(int *dev, int i)
{
    *dev = i;
    return 0;
}
int cuDeviceGetName(char *buf, int len, int dev)
{
    snprintf(buf, (size_t)len, "Fake CUDA device %d", dev);
    return 0;
}
int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    (void)dev;
    *bytes = (size_t)80 << 30;
    return 0;
}
int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 132 : 0;
    return 0;
}
int cuGetErrorName(int r, const char **s)
{
    *s = r == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_FAKE";
    return 0;
}
