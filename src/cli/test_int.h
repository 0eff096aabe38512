/* What the parts of `ftrun test` share: its options; what the parent
 * (test.c: scanning, scheduling, the command) and a worker (test_case.c: one
 * case loaded, run and compared) share, the worker's device and the case
 * runner; and what the parent and its report writers (test_report.c: JUnit
 * XML and --json) share, the case list and a growable string. The parent
 * owns the list and every string in it; the writers read it.
 *
 *   sbuf b = {0};
 *   test_sb_printf(&b, "%d passed", 3);   // b.s grows; b.oom set when out of memory
 *   free(b.s);
 */
#ifndef FT_CLI_TEST_INT_H
#define FT_CLI_TEST_INT_H

#include <stddef.h>

#include "../common.h"
#include "../runtime/backend.h"

/* The options of `ftrun test`, as in ftrun(1). */
typedef struct ft_test_opts {
    const char *device, *junit;
    double rtol, atol, timeout;
    int have_rtol, have_atol;
    long jobs, threads;
    int quiet, verbose;
    int opt_level; /* -O: the optimizer's level (src/opt/optimize.h), FT_OPT_DEFAULT unless given */
    const char *save_outputs; /* --save-outputs DIR, or NULL */
} ft_test_opts;
typedef ft_test_opts topts;

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

/* ---- shared by test.c and its report writers (test_report.c) ---- */

/* A growable string: s is NUL-terminated when not NULL; oom is set, and
 * later additions are dropped, when it cannot grow. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

void test_sb_add(sbuf *b, const char *p, size_t n);
void test_sb_printf(sbuf *b, const char *fmt, ...) FT_PRINTF(2, 3);

typedef struct tcase {
    char *dir, *name; /* the folder; "SUITE/REST" (or the folder's name) */
    int suite;        /* index of the DIR operand it came from */
    char status;      /* 'P' pass, 'F' fail, 'U' unsupported, 'S' skipped (excluded); 0 while pending */
    int missing;      /* a DIR operand that is not a test folder: failed, never run */
    char *msg;        /* one line */
    sbuf log;         /* the child's stderr */
    double secs;
} tcase;

typedef struct caselist {
    tcase *c;
    int n, cap;
} caselist;

/* A case's column in the counts: 0 passed, 1 failed, 2 unsupported, 3
 * skipped (excluded); 4 (JUnit's errors) for a DIR that is not a test folder,
 * which the summary counts as failed. */
int test_kind(const tcase *c);
/* --junit FILE: the report as JUnit XML, written under a temporary name and
 * renamed (never a partial file). 0, or FT_ERUNTIME after saying why on
 * stderr. */
int test_write_junit(const topts *o, const caselist *L, char **dirs, int n_dirs, double total_s);
/* --json: the report as one JSON object on standard output (schema
 * "ftrun-test/1", ftrun(1) JSON OUTPUT); cnt are the counts by test_kind. */
void test_write_json(const topts *o, const caselist *L, char **dirs, const int *cnt, double total, long shard_k,
                     long shard_n);

#endif
