/* What the commands of src/cli share (cliutil.c).
 *
 *   const ft_backend *be; int idx; char name[32];
 *   int rc = pick_device("cuda:0", 1, 0, &be, &idx, name, sizeof name);  // exit status, 0 ok
 *   if (bad) return usage_error("option --foo: '%s' is not a number", arg);
 */
#ifndef FT_CLI_CLIUTIL_H
#define FT_CLI_CLIUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "../runtime/backend.h"

/* "ftrun: error: MESSAGE" and "Try 'ftrun --help'." on stderr; returns FT_EUSAGE. */
int usage_error(const char *fmt, ...) FT_PRINTF(1, 2);
/* DEV (NULL or "auto", cpu, cuda, cuda:N) to a backend and device index.
 * need_device: the device must be usable (run); otherwise (ops) the backend's
 * table is enough. auto is cuda:0 when a CUDA device and the CUDA backend are
 * both usable, else the CPU; an explicitly requested device is never replaced.
 * Returns an exit status (0 ok) after printing why. */
int pick_device(const char *dev, int need_device, int quiet, const ft_backend **be, int *index, char *name, size_t nsz);

/* Table cells: the display width of UTF-8 text (code points), and s in a
 * column of `width` (left-aligned, or right), cut in the middle with "..."
 * when wider ("/model/layers.0/...attn/MatMul_1"). */
int ft_text_width(const char *s);
void ft_cell(FILE *f, const char *s, int width, int right);

#endif
