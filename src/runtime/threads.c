#define _GNU_SOURCE
#include "threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../common.h"

/* A small /proc file into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return n;
}

/* The running count of /proc/loadavg ("0.50 0.40 0.30 3/412 1234"), or -1. */
static int running_tasks(void)
{
    char b[128];
    if (read_small("/proc/loadavg", b, sizeof b) < 0)
        return -1;
    double l1, l5, l15;
    int run = -1, total;
    if (sscanf(b, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &run, &total) != 5)
        return -1;
    return run;
}

/* This process's threads in state R (the caller among them), at least 1. */
static int own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[64], b[512];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        if (read_small(path, b, sizeof b) < 0)
            continue;
        /* "tid (comm) S ...": the state follows the last ')' (comm may hold one) */
        const char *p = strrchr(b, ')');
        if (p && p[1] == ' ' && p[2] == 'R')
            n++;
    }
    closedir(d);
    return n > 0 ? n : 1;
}

int ft_idle_cores(int max)
{
    if (max <= 1)
        return 1;
    int run = running_tasks();
    if (run <= 1) /* only the caller (or no /proc) */
        return max;
    int others = run - own_running();
    if (others <= 0)
        return max;
    return others >= max ? 1 : max - others;
}

int ft_usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int ft_threads_now(ft_threads_follow *tf)
{
    if (tf->max <= 1)
        return 1;
    double now = ft_now();
    if (tf->current > 0 && now < tf->next)
        return tf->current;
    int was = tf->current;
    tf->current = ft_idle_cores(tf->max);
    tf->next = now + FT_THREADS_PERIOD_S;
#ifdef _OPENMP
    /* The kernels pass the count on (ft_kctx.threads), but oneDNN's products
     * and convs (cpu/blas.c, cpu/conv_dnnl.c) take OpenMP's default. */
    if (tf->current != was)
        omp_set_num_threads(tf->current);
#endif
    return tf->current;
}
