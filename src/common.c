#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ft_status ft_err(ft_error *err, ft_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void ft_err_prefix(ft_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char pre[1024], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t lp = strlen(pre), lo = strlen(old);
    if (lp + 2 >= sizeof err->msg)
        lp = sizeof err->msg - 3;
    memcpy(err->msg, pre, lp);
    memcpy(err->msg + lp, ": ", 2);
    if (lp + 2 + lo >= sizeof err->msg)
        lo = sizeof err->msg - lp - 3;
    memcpy(err->msg + lp + 2, old, lo);
    err->msg[lp + 2 + lo] = 0;
}

void *ft_malloc(size_t n) { return malloc(n ? n : 1); }
void *ft_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }
void *ft_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }

int ft_grow(void *arrp, int *cap, int n, size_t size, int first)
{
    if (n < *cap)
        return 0;
    int nc = *cap ? *cap * 2 : first;
    void *old, *p;
    memcpy(&old, arrp, sizeof old);
    if (!(p = ft_realloc(old, (size_t)nc * size)))
        return -1;
    memcpy(arrp, &p, sizeof p);
    *cap = nc;
    return 0;
}

void ft_free_strs(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

char *ft_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

uint64_t ft_peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

int ft_fmt_rc(int rc, char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return rc;
}
