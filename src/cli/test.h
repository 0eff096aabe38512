/* `ftrun test DIR...`: runs test folders (the ONNX backend-test layout and
 * ftrun's own, both described in man/ftrun.1, TEST FOLDERS) and reports
 * pass, fail or unsupported per case, a summary and optionally JUnit XML.
 *
 *   int main(int argc, char **argv)      // argv[1] is "test"
 *   { return ft_cmd_test(argc - 1, argv + 1); }   // exit status 0, 1, 2, 3 or 4
 *
 * Every case runs in a child process (fork), so a crash or a hang of one case
 * is that case's failure and the run goes on. No state is shared: the parent
 * only scans folders, schedules children and writes reports.
 */
#ifndef FT_CLI_TEST_H
#define FT_CLI_TEST_H

#include <stddef.h>

#include "../runtime/backend.h"

/* argv[0] is the command word ("test"); options as in ftrun(1). */
int ft_cmd_test(int argc, char **argv);

/* The device parser of the command line (src/cli/main.c): DEV (NULL or
 * "auto", cpu, cuda, cuda:N) to a backend and device index; need_device: the
 * device must be usable. Returns an exit status (0 ok) after printing why. */
int pick_device(const char *dev, int need_device, int quiet, const ft_backend **be, int *index, char *name, size_t nsz);

/* "ftrun: error: MESSAGE" and "Try 'ftrun --help'." on stderr; returns
 * FT_EUSAGE (src/cli/main.c). */
int usage_error(const char *fmt, ...) FT_PRINTF(1, 2);

#endif
