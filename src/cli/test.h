/* `ftrun test DIR...`: runs test folders (the ONNX backend-test layout and
 * ftrun's own, both described in man/ftrun.1, TEST FOLDERS) and reports
 * pass, fail or unsupported per case, a summary and optionally JUnit XML.
 *
 *   int main(int argc, char **argv)      // argv[1] is "test"
 *   { return ft_cmd_test(argc - 1, argv + 1); }   // exit status 0, 1, 2, 3 or 4
 *
 * Cases run in -j worker processes (fork), each of which opens the device
 * once and runs many cases in turn, so a crash or a hang of one case is that
 * case's failure (its worker is killed and a new one takes the remaining
 * cases) and the run goes on. The parent (test.c) only scans folders and
 * schedules workers, and never opens a device; its reports are written by
 * test_report.c (test_int.h); a worker (test_case.c) loads, runs and compares.
 */
#ifndef FT_CLI_TEST_H
#define FT_CLI_TEST_H

#include <stddef.h>

#include "../runtime/backend.h"
#include "cliutil.h"

/* argv[0] is the command word ("test"); options as in ftrun(1). */
typedef struct ft_test_opts {
    const char *device, *junit;
    double rtol, atol, timeout;
    int have_rtol, have_atol;
    long jobs, threads;
    int quiet, verbose;
    int opt_level; /* -O: the optimizer's level (src/opt/optimize.h), FT_OPT_DEFAULT unless given */
    const char *save_outputs; /* --save-outputs DIR, or NULL */
} ft_test_opts;

int ft_cmd_test(int argc, char **argv);

/* ---- shared by test.c (the parent) and test_case.c (a case's child) ---- */
/* The model file of a case folder (model.onnx, graph.json or graph.ftg, in
 * that order) into path; 0 when there is none. */
int ft_test_find_model(const char *dir, char *path, size_t n);
/* A worker's device: the backend picked on its first case, the backend
 * context opened on first use and kept for its later cases (one CUDA
 * context, one cuBLAS handle per worker). retire is set when the context
 * failed (open or run: a device may be left unusable), and the worker then
 * ends after that case. Zero-initialised; ft_test_dev_close releases it.
 *
 *   ft_test_dev dev = {0};
 *   char msg[2400];
 *   char v = ft_test_run_case(&opts, &dev, "suite/scale", NULL, msg, sizeof msg);
 *   ft_test_dev_close(&dev);
 */
typedef struct ft_test_dev {
    const ft_backend *be;
    int index, picked; /* picked: 0 not yet, 1 usable, -1 not usable */
    ft_backend_ctx *ctx;
    int retire;
} ft_test_dev;
/* Run the case in folder dir: 'P' pass, 'F' fail, 'U' unsupported, with a
 * one-line message. Writes details (comparisons with verbose) on stderr.
 * save: NULL, or the folder its outputs go to (--save-outputs; then an
 * output without an expected value is saved, not a failure). */
char ft_test_run_case(const ft_test_opts *o, ft_test_dev *dev, const char *dir, const char *save, char *msg, size_t msz);
void ft_test_dev_close(ft_test_dev *dev);

#endif
