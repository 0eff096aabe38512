/* What the parent of `ftrun test` (test.c: scanning, scheduling, the command)
 * and its report writers (test_report.c: JUnit XML and --json) share: the
 * case list and a growable string. The parent owns the list and every string
 * in it; the writers read it.
 *
 *   sbuf b = {0};
 *   test_sb_printf(&b, "%d passed", 3);   // b.s grows; b.oom set when out of memory
 *   free(b.s);
 */
#ifndef FT_CLI_TEST_INT_H
#define FT_CLI_TEST_INT_H

#include <stddef.h>

#include "../common.h"
#include "test.h"

typedef ft_test_opts topts;

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
