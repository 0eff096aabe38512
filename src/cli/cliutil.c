/* What the commands of src/cli share: the usage-error message, the device
 * option's parser (run, ops, test), and the helpers cli.h declares. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliutil.h"

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", "ftrun");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ftrun --help'.\n");
    return FT_EUSAGE;
}

/* Parse DEV into a backend and device index; returns an exit code (0 ok).
 * need_device: the device must be usable (run); otherwise (ops) the backend's
 * table is enough. auto is cuda:0 when a CUDA device and the CUDA backend are
 * both usable, else the CPU; an explicitly requested device is never replaced. */
int pick_device(const char *dev, int need_device, int quiet, const ft_backend **be, int *index, char *name, size_t nsz)
{
    ft_error e = {0};
    *index = 0;
    if (!dev || !strcmp(dev, "auto")) {
        ft_device_info d[1];
        if (ft_cuda_devices(d, 1, &e) > 0) {
            const ft_backend *cb = ft_backend_get("cuda", &e);
            if (cb) {
                *be = cb;
                snprintf(name, nsz, "cuda:0");
                return 0;
            }
            if (!quiet)
                fprintf(stderr, "%s: warning: a CUDA device is present but %s; running on cpu\n", "ftrun", e.msg);
        }
        *be = &ft_cpu_backend;
        snprintf(name, nsz, "cpu");
        return 0;
    }
    if (!strcmp(dev, "cpu")) {
        *be = &ft_cpu_backend;
        snprintf(name, nsz, "cpu");
        return 0;
    }
    int idx = 0;
    if (!strcmp(dev, "cuda") || (!strncmp(dev, "cuda:", 5) && dev[5] && strspn(dev + 5, "0123456789") == strlen(dev + 5) &&
                                 strlen(dev + 5) < 6 && (idx = atoi(dev + 5), 1))) {
        *index = idx;
        snprintf(name, nsz, "cuda:%d", idx);
        if (need_device) {
            ft_device_info d[64];
            int n = ft_cuda_devices(d, 64, &e);
            if (n < 0) {
                fprintf(stderr, "%s: error: device 'cuda:%d' is not available: %s\n", "ftrun", idx, e.msg);
                return FT_ERUNTIME;
            }
            if (idx >= n) {
                fprintf(stderr, "%s: error: device 'cuda:%d' is not available: this machine has %d CUDA device%s (cuda:0%s%.0d)\n",
                        "ftrun", idx, n, n == 1 ? "" : "s", n > 1 ? " to cuda:" : "", n > 1 ? n - 1 : 0);
                return FT_ERUNTIME;
            }
        }
        if (!(*be = ft_backend_get("cuda", &e))) {
            fprintf(stderr, "%s: error: device 'cuda:%d' is not available: %s\n", "ftrun", idx, e.msg);
            return FT_ERUNTIME;
        }
        return 0;
    }
    return usage_error("option --device: '%s' is not one of cpu, cuda, cuda:N, auto", dev);
}

const char *const ft_prog = "ftrun";
int ft_stop_reported;

int cli_fail(const ft_error *err)
{
    /* interrupted: the failure is the interruption's, which main reports
     * in one line */
    if (!ft_stop_signal)
        fprintf(stderr, "%s: error: %s\n", ft_prog, err->msg);
    return err->code ? err->code : FT_ERUNTIME;
}

/* info and compare report on standard output: a failed write fails the command. */
int cli_stdout_status(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    fprintf(stderr, "%s: error: cannot write to standard output: %s\n", ft_prog, strerror(errno ? errno : EIO));
    return FT_ERUNTIME;
}

ft_tol cli_tol(const ft_cli *c, ft_dtype dt)
{
    return ft_tol_choose(dt, c->have_rtol, c->rtol, c->have_atol, c->atol);
}

ft_status cli_load_unbound(const ft_cli *c, int level, ft_unbound *u, ft_pipeline *p, ft_error *err)
{
    ft_pipeline_opts po = {.load = {.seed_override = c->seed, .allow_external = c->allow_external, .unbound = u},
                           .inputs = &c->bind->vals, .opt_level = level};
    memset(p, 0, sizeof *p);
    ft_status st = ft_bind_read_files(c->bind, err); /* their shapes bind dims */
    ft_bind_load_opts(c->bind, &po.load);
    return st ? st : ft_pipeline_load(p, c->graph, &po, err);
}

ft_status cli_load(const ft_cli *c, int level, ft_pipeline *p, ft_error *err)
{
    return cli_load_unbound(c, level, NULL, p, err);
}

int ft_text_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;
    return w;
}

/* The byte offset of code point k of s (or its end). */
static size_t cp_offset(const char *s, int k)
{
    size_t i = 0;
    for (int n = 0; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == k)
            return i;
    return i;
}

void ft_cell(FILE *f, const char *s, int width, int right)
{
    int w = ft_text_width(s);
    if (w > width && width >= 5) { /* the start and the end, which tell most */
        int head = (width - 3) / 2, tail = width - 3 - head;
        size_t h = cp_offset(s, head), t = cp_offset(s, w - tail);
        fprintf(f, "%.*s...%s", (int)h, s, s + t);
        return;
    }
    if (right)
        fprintf(f, "%*s%s", width > w ? width - w : 0, "", s);
    else
        fprintf(f, "%s%*s", s, width > w ? width - w : 0, "");
}
