/* `ftrun test DIR...`: see test.h and man/ftrun.1 (TEST FOLDERS).
 *
 * The parent scans the folders for cases, then keeps -j worker processes
 * busy. A worker (forked before any device is opened) takes case indexes on
 * a socket, one at a time; for each (test_case.c) it loads the model once per
 * data set, feeds its inputs, runs it on the device it opened once for all
 * its cases and compares every output with the expected values
 * (ft_tol_choose, the rule of --expect). It sends back a verdict frame on a
 * pipe; its stdout and stderr go to a second pipe, kept as the log of the
 * case it runs. A worker that dies, exits without a verdict or outlives
 * --timeout is the failure of the case it ran; a new worker takes the
 * remaining cases. Results are printed in case order whatever order the
 * workers finish in, so -j changes nothing but the time. */
#define _GNU_SOURCE
#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../graph/graph.h"
#include "../io/npz.h"
#include "compare.h"
#include "../runtime/exec.h"
#include "report.h"
#include "test.h"
#include "test_int.h"
#include "cliutil.h"
#include "../opt/optimize.h"

static const char *const prog = "ftrun";


/* ------------------------------------------------------------------ cases */

/* The model file names a case folder may hold, in the order they are looked
 * for; the content, not the name, tells the loader the format. */
static const char *const model_names[] = {"model.onnx", "graph.json", "graph.ftg"};

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int ft_test_find_model(const char *dir, char *path, size_t n)
{
    for (size_t i = 0; i < FT_ARRAY_LEN(model_names); i++) {
        snprintf(path, n, "%s/%s", dir, model_names[i]);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            return 1;
    }
    return 0;
}

static int only_dirs(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* The entry after the last of the list (L->n, not yet counted) for folder
 * dir, named name, from DIR operand suite; NULL when out of memory. */
static tcase *new_case(caselist *L, const char *dir, const char *name, int suite)
{
    if (ft_grow(&L->c, &L->cap, L->n, sizeof *L->c, 64))
        return NULL;
    tcase *t = &L->c[L->n];
    memset(t, 0, sizeof *t);
    t->dir = ft_strdup(dir);
    t->name = ft_strdup(name);
    t->suite = suite;
    return t->dir && t->name ? t : NULL;
}

/* Cases at or below dir (a case folder, or up to 4 levels of folders holding
 * them), sorted by name. Returns -1 when out of memory. */
static int collect(caselist *L, const char *dir, const char *name, int suite, int depth)
{
    char model[4200];
    if (ft_test_find_model(dir, model, sizeof model)) {
        if (!new_case(L, dir, name, suite))
            return -1;
        L->n++;
        return 0;
    }
    if (depth >= 4)
        return 0;
    struct dirent **ents;
    int n = scandir(dir, &ents, only_dirs, versionsort);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char sub[4200], subname[4200];
        snprintf(sub, sizeof sub, "%s/%s", dir, ents[i]->d_name);
        snprintf(subname, sizeof subname, "%s/%s", name, ents[i]->d_name);
        if (!rc && is_dir(sub))
            rc = collect(L, sub, subname, suite, depth + 1);
        free(ents[i]);
    }
    if (n >= 0)
        free(ents);
    return rc;
}

/* ------------------------------------------------------ scheduling (parent) */

/* A worker process and the case it runs. */
typedef struct slot {
    pid_t pid;    /* 0: no worker */
    int cfd;      /* command socket: case indexes go to the worker (-1 once closed) */
    int rfd, lfd; /* verdict pipe, log pipe (-1 once at EOF) */
    int idx;      /* the case it runs, or -1 */
    double start, deadline, end;
    int timed_out;
    int closing;  /* the worker ends after this case: its verdict stands once it has exited */
    char verdict; /* 'P', 'F', 'U' once received, else 0 */
    sbuf res;     /* verdict frames: status byte, 'c' (continues) or 'x' (ends), message, NUL */
} slot;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Under AddressSanitizer, a worker checks for leaks after each case, so that
 * a leak is the failure of the case that made it, as when every case had a
 * process of its own: the worker then ends, and the report at its exit (a
 * nonzero status) fails the case. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
static int leaked(void) { return __lsan_do_recoverable_leak_check() != 0; }
#else
static int leaked(void) { return 0; }
#endif

/* A worker: reads case indexes from cfd until EOF, runs each and writes its
 * verdict frame on rfd; its stdout and stderr are the log pipe. A case's log
 * is all written before its verdict, and the next case starts only when the
 * parent sends it, so the parent can tell whose log is whose. */
static void worker(const topts *o, const caselist *L, int cfd, int rfd)
{
    omp_set_num_threads((int)o->threads);
    ft_test_dev dev = {0};
    int idx;
    for (;;) {
        ssize_t n = read(cfd, &idx, sizeof idx);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof idx || idx < 0 || idx >= L->n)
            break;
        char msg[2400] = "", save[8400];
        snprintf(save, sizeof save, "%s/%s", o->save_outputs ? o->save_outputs : "", L->c[idx].name);
        char v = ft_test_run_case(o, &dev, L->c[idx].dir, o->save_outputs ? save : NULL, msg, sizeof msg);
        int last = dev.retire || leaked();
        fflush(stdout);
        fflush(stderr);
        char out[2600];
        int len = snprintf(out, sizeof out, "%c%c%s", v, last ? 'x' : 'c', msg);
        len = len < (int)sizeof out ? len : (int)sizeof out - 1;
        write_all(rfd, out, (size_t)len + 1); /* with its NUL */
        if (last)
            break;
    }
    ft_test_dev_close(&dev);
    fflush(stdout);
    fflush(stderr);
    /* exit, not _exit: under a sanitizer the leak check runs here, and a
     * report (a nonzero status) fails the worker's last case */
    exit(0);
}

static int start_worker(const topts *o, const caselist *L, slot *sl, long j)
{
    int rp[2], lp[2], cp[2];
    if (pipe2(rp, O_CLOEXEC))
        return -1;
    if (pipe2(lp, O_CLOEXEC)) {
        close(rp[0]), close(rp[1]);
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cp)) {
        close(rp[0]), close(rp[1]), close(lp[0]), close(lp[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(rp[0]), close(rp[1]), close(lp[0]), close(lp[1]), close(cp[0]), close(cp[1]);
        return -1;
    }
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        /* the other workers' ends: a copy held here would keep their command
         * sockets from reaching EOF */
        for (long i = 0; i < o->jobs; i++) {
            if (i == j)
                continue;
            if (sl[i].cfd >= 0)
                close(sl[i].cfd);
            if (sl[i].rfd >= 0)
                close(sl[i].rfd);
            if (sl[i].lfd >= 0)
                close(sl[i].lfd);
        }
        dup2(lp[1], 1);
        dup2(lp[1], 2);
        close(rp[0]), close(lp[0]), close(cp[0]);
        worker(o, L, cp[1], rp[1]);
    }
    close(rp[1]), close(lp[1]), close(cp[1]);
    fcntl(lp[0], F_SETFL, fcntl(lp[0], F_GETFL) | O_NONBLOCK);
    fcntl(rp[0], F_SETFL, fcntl(rp[0], F_GETFL) | O_NONBLOCK);
    sl[j] = (slot){.pid = pid, .cfd = cp[0], .rfd = rp[0], .lfd = lp[0], .idx = -1};
    return 0;
}

/* Hand case idx to the worker of s. -1 when it cannot be sent (the worker
 * is gone: its EOF ends it). */
static int send_case(const topts *o, slot *s, int idx)
{
    ssize_t w;
    do
        w = send(s->cfd, &idx, sizeof idx, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof idx)
        return -1;
    s->idx = idx;
    s->start = ft_now();
    s->deadline = o->timeout > 0 ? s->start + o->timeout : INFINITY;
    s->timed_out = s->closing = 0;
    s->verdict = 0;
    s->res.len = 0;
    return 0;
}

enum { LOG_CAP = 16384 };

/* Read what a pipe has; at EOF close it. 1 when it read something, 0 at
 * EOF or when there is nothing yet (the parent's ends do not block). */
static int drain(int *fd, sbuf *b, size_t cap)
{
    char buf[4096];
    ssize_t n;
    while ((n = read(*fd, buf, sizeof buf)) < 0 && errno == EINTR)
        ;
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return 0;
    }
    if (b->len < cap)
        test_sb_add(b, buf, (size_t)n < cap - b->len ? (size_t)n : cap - b->len);
    return 1;
}

/* Messages and logs quote files that may hold any bytes: what is not valid
 * UTF-8, and control characters but tab and newline, become '?', so that
 * the report and the XML stay valid text. */
static void clean_text(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (p && *p) {
        int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 && *p >= 0xC2 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : (*p & 0xF8) == 0xF0 && *p <= 0xF4 ? 4 : 0;
        for (int k = 1; k < n; k++)
            if ((p[k] & 0xC0) != 0x80)
                n = 0;
        if (n == 1 && *p < 0x20 && *p != '\n' && *p != '\t')
            n = 0;
        if (!n) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

/* The line of a log that says most: the first naming an ERROR (a
 * sanitizer's report), else the first. */
static char *first_line(const char *s)
{
    const char *e = s ? strstr(s, "ERROR: ") : NULL;
    if (e)
        while (e > s && e[-1] != '\n')
            e--;
    s = e ? e : s;
    while (s && (*s == '\n' || *s == ' '))
        s++;
    if (!s || !*s)
        return NULL;
    size_t n = strcspn(s, "\n");
    return strndup(s, n);
}

/* The verdict of a case: its worker's (wstatus 0 while the worker goes on,
 * else its status once it has exited), unless it timed out or its worker
 * died before it or exited with a failure after it. */
static void finish_case(const topts *o, tcase *c, slot *s, int wstatus)
{
    c->secs = (s->verdict ? s->end : ft_now()) - s->start;
    char buf[3000];
    int verdict = s->verdict != 0;
    if (s->timed_out) {
        snprintf(buf, sizeof buf, "timed out after %g s (--timeout); the case was killed", o->timeout);
        c->status = 'F';
    } else if (verdict && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
        c->status = s->verdict;
        snprintf(buf, sizeof buf, "%s", s->res.s + 2);
    } else {
        char *l = first_line(c->log.s), how[160];
        if (WIFSIGNALED(wstatus))
            snprintf(how, sizeof how, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
        else
            snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(wstatus));
        snprintf(buf, sizeof buf, "crashed: %s %s%s%s", how, verdict ? "after its verdict" : "before a verdict",
                 l ? "; its last words: " : "", l ? l : "");
        free(l);
        c->status = 'F';
    }
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    clean_text(buf);
    clean_text(c->log.s);
    c->msg = ft_strdup(buf);
    s->idx = -1;
}

static void print_case(const topts *o, const tcase *c)
{
    if (o->quiet > 1 || (o->quiet && c->status != 'F'))
        return;
    const char *word = c->status == 'P' ? "PASS" : c->status == 'U' ? "UNSUPPORTED" : c->status == 'S' ? "SKIP" : "FAIL";
    if (c->status == 'S' || c->missing)
        printf("%-11s %s: %s\n", word, c->name, c->msg ? c->msg : "");
    else if (c->status == 'P')
        printf("%-11s %s (%.1f ms)\n", word, c->name, c->secs * 1e3);
    else
        printf("%-11s %s (%.1f ms): %s\n", word, c->name, c->secs * 1e3, c->msg ? c->msg : "");
    if (o->verbose && c->log.len) {
        const char *p = c->log.s;
        while (*p) {
            size_t n = strcspn(p, "\n");
            printf("    %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}

/* A worker that has exited (both pipes at EOF): reaped, its case (if any)
 * given its verdict, the slot freed. */
static void end_worker(const topts *o, caselist *L, slot *s)
{
    int ws = 0;
    while (waitpid(s->pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (s->idx >= 0)
        finish_case(o, &L->c[s->idx], s, ws);
    if (s->cfd >= 0)
        close(s->cfd);
    free(s->res.s);
    *s = (slot){.cfd = -1, .rfd = -1, .lfd = -1, .idx = -1};
}

/* The first case at or after i still to run (excluded cases and missing
 * folders have their verdict before anything runs). */
static int next_todo(const caselist *L, int i)
{
    while (i < L->n && L->c[i].status)
        i++;
    return i;
}

static int run_all(const topts *o, caselist *L)
{
    slot *sl = ft_calloc((size_t)o->jobs, sizeof *sl);
    struct pollfd *pf = ft_calloc((size_t)o->jobs * 2, sizeof *pf);
    if (!sl || !pf) {
        free(sl);
        free(pf);
        fprintf(stderr, "%s: error: test: out of memory\n", prog);
        return FT_ERUNTIME;
    }
    for (long j = 0; j < o->jobs; j++)
        sl[j] = (slot){.cfd = -1, .rfd = -1, .lfd = -1, .idx = -1};
    int next = next_todo(L, 0), done = 0, printed = 0, workers = 0;
    for (int i = 0; i < L->n; i++)
        done += L->c[i].status != 0;
    while (done < L->n) {
        /* every free worker (a new one where there is none) takes the next case */
        for (long j = 0; j < o->jobs && next < L->n; j++) {
            slot *s = &sl[j];
            if (s->idx >= 0 || s->closing)
                continue;
            if (!s->pid) {
                if (start_worker(o, L, sl, j)) {
                    if (!workers) {
                        fprintf(stderr, "%s: error: test: cannot start a process for %s: %s\n", prog, L->c[next].name,
                                strerror(errno));
                        free(sl);
                        free(pf);
                        return FT_ERUNTIME;
                    }
                    break; /* try again once a worker is done */
                }
                workers++;
            }
            if (send_case(o, s, next)) {
                /* gone between cases: its EOF ends it and a new one takes the case */
                s->closing = 1;
                if (s->cfd >= 0)
                    close(s->cfd), s->cfd = -1;
                continue;
            }
            next = next_todo(L, next + 1);
        }
        /* a worker with nothing left to take ends now (its device freed) */
        for (long j = 0; j < o->jobs && next >= L->n; j++)
            if (sl[j].pid && sl[j].idx < 0 && !sl[j].closing) {
                sl[j].closing = 1;
                close(sl[j].cfd);
                sl[j].cfd = -1;
            }
        int np = 0;
        double now = ft_now(), wait_s = 1.0;
        for (long j = 0; j < o->jobs; j++) {
            slot *s = &sl[j];
            if (!s->pid)
                continue;
            if (s->rfd >= 0)
                pf[np++] = (struct pollfd){.fd = s->rfd, .events = POLLIN};
            if (s->lfd >= 0)
                pf[np++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
            if (s->idx >= 0 && !s->timed_out && s->deadline - now < wait_s)
                wait_s = s->deadline - now;
        }
        if (np)
            poll(pf, (nfds_t)np, wait_s > 0 ? (int)(wait_s * 1000) + 1 : 0);
        now = ft_now();
        for (long j = 0; j < o->jobs; j++) {
            slot *s = &sl[j];
            if (!s->pid)
                continue;
            sbuf dummy = {0}, *log = s->idx >= 0 ? &L->c[s->idx].log : &dummy;
            for (int k = 0; k < np; k++) {
                if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                if (pf[k].fd == s->rfd && s->rfd >= 0)
                    drain(&s->rfd, &s->res, 4096);
                else if (pf[k].fd == s->lfd && s->lfd >= 0)
                    drain(&s->lfd, log, LOG_CAP);
            }
            if (s->idx >= 0 && !s->verdict && !s->res.oom && s->res.len >= 2 && memchr(s->res.s, 0, s->res.len) &&
                strchr("PFU", s->res.s[0]) && s->res.s[0]) {
                /* a verdict: the case's log is all in the log pipe by now */
                s->end = now;
                s->verdict = s->res.s[0];
                while (s->lfd >= 0 && drain(&s->lfd, log, LOG_CAP))
                    ;
                if (s->res.s[1] == 'c' && next < L->n) {
                    finish_case(o, &L->c[s->idx], s, 0);
                    done++;
                } else {
                    /* its last case: the verdict stands once the worker has
                     * exited with status 0 */
                    s->closing = 1;
                    if (s->cfd >= 0)
                        close(s->cfd), s->cfd = -1;
                }
            }
            if (s->idx >= 0 && !s->timed_out && now > s->deadline) {
                kill(s->pid, SIGKILL);
                s->timed_out = 1;
                s->closing = 1;
            }
            free(dummy.s);
            if (s->rfd < 0 && s->lfd < 0) {
                done += s->idx >= 0;
                end_worker(o, L, s);
                workers--;
            }
        }
        while (printed < L->n && L->c[printed].status) {
            print_case(o, &L->c[printed++]);
            fflush(stdout);
        }
    }
    while (printed < L->n && L->c[printed].status)
        print_case(o, &L->c[printed++]);
    /* workers left have no case: closing their sockets ends them */
    for (long j = 0; j < o->jobs; j++)
        if (sl[j].pid) {
            close(sl[j].cfd);
            sl[j].cfd = -1;
            if (sl[j].rfd >= 0)
                close(sl[j].rfd);
            if (sl[j].lfd >= 0)
                close(sl[j].lfd);
            sl[j].rfd = sl[j].lfd = -1;
            end_worker(o, L, &sl[j]);
        }
    free(sl);
    free(pf);
    return 0;
}

/* ------------------------------------------------------------- command */

/* A number >= lo (an integer when whole is set). */
static int number(const char *opt, const char *s, double lo, int whole, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || (whole && (v != floor(v) || v > 1e6)))
        return usage_error("option %s: '%s' is not %s >= %g", opt, s, whole ? "an integer" : "a finite number", lo);
    *out = v;
    return 0;
}

enum { OPT_RTOL = 256, OPT_ATOL, OPT_JUNIT, OPT_TIMEOUT, OPT_THREADS, OPT_SAVE, OPT_EXCLUDE, OPT_EXCLUDE_FROM, OPT_SHARD,
       OPT_JSON };

/* --exclude and --exclude-from: glob patterns on case names, each with where
 * it came from ("--exclude 'PAT'", "FILE:LINE: REASON") for the report. */
typedef struct pattern {
    char *pat, *why;
} pattern;

typedef struct patterns {
    pattern *p;
    int n, cap;
} patterns;

static int add_pattern(patterns *P, const char *pat, size_t plen, const char *why)
{
    if (ft_grow(&P->p, &P->cap, P->n, sizeof *P->p, 16))
        return -1;
    pattern *e = &P->p[P->n];
    e->pat = strndup(pat, plen);
    e->why = ft_strdup(why);
    if (!e->pat || !e->why) {
        free(e->pat);
        free(e->why);
        return -1;
    }
    P->n++;
    return 0;
}

/* FILE: a pattern a line, the first word of the line; what follows it is the
 * reason (a leading '#' dropped); blank lines and lines starting with '#'
 * are comments. tests/onnx/reference_differs.txt ("CASE  REASON") reads as is. */
static int read_patterns(patterns *P, const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return usage_error("option --exclude-from: cannot read %s: %s", file, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        ln++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#' || *p == '\n' || *p == '\r')
            continue;
        size_t plen = strcspn(p, " \t\r\n");
        char *r = p + plen;
        while (*r == ' ' || *r == '\t' || *r == '#')
            r++;
        size_t rl = strcspn(r, "\r\n");
        while (rl && (r[rl - 1] == ' ' || r[rl - 1] == '\t'))
            rl--;
        char why[1200];
        snprintf(why, sizeof why, "%s:%d%s%.*s", file, ln, rl ? ": " : "", (int)(rl < 900 ? rl : 900), r);
        if (add_pattern(P, p, plen, why))
            rc = FT_ERUNTIME;
    }
    if (!rc && ferror(f))
        rc = usage_error("option --exclude-from: cannot read %s: %s", file, strerror(errno));
    free(line);
    fclose(f);
    if (rc == FT_ERUNTIME)
        fprintf(stderr, "%s: error: test: out of memory\n", prog);
    return rc;
}

/* The pattern that matches a case: its whole name ("node/test_abs") or
 * folder, or any end of either that starts after a '/' ("test_abs", and
 * "node/test_abs" for the folder .../data/node/test_abs given alone); '*'
 * matches '/' too. */
static const pattern *excluded(const patterns *P, const tcase *c)
{
    const char *both[2] = {c->name, c->dir};
    for (int i = 0; i < P->n; i++)
        for (int k = 0; k < 2; k++)
            for (const char *s = both[k]; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
                if (!fnmatch(P->p[i].pat, s, 0))
                    return &P->p[i];
    return NULL;
}

static void free_patterns(patterns *P)
{
    for (int i = 0; i < P->n; i++) {
        free(P->p[i].pat);
        free(P->p[i].why);
    }
    free(P->p);
}

/* A DIR operand that is not a test folder: a failed entry of the report. */
static int add_missing(caselist *L, const char *dir, int suite, const char *why)
{
    tcase *t = new_case(L, dir, dir, suite);
    if (!t)
        return -1;
    t->status = 'F';
    t->missing = 1;
    if (!(t->msg = ft_strdup(why)))
        return -1;
    L->n++;
    return 0;
}

/* Runs the device check in a child, so the parent never opens a CUDA context
 * it would hand to forked children. */
static int probe_device(const char *dev)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return 0; /* each case will say it */
    if (pid == 0) {
        const ft_backend *be;
        int idx;
        char name[32];
        _exit(pick_device(dev, 1, 0, &be, &idx, name, sizeof name));
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : FT_ERUNTIME;
}

int ft_cmd_test(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"device", required_argument, 0, 'd'}, {"jobs", required_argument, 0, 'j'},
        {"rtol", required_argument, 0, OPT_RTOL}, {"atol", required_argument, 0, OPT_ATOL},
        {"junit", required_argument, 0, OPT_JUNIT}, {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"threads", required_argument, 0, OPT_THREADS}, {"save-outputs", required_argument, 0, OPT_SAVE},
        {"exclude", required_argument, 0, OPT_EXCLUDE}, {"exclude-from", required_argument, 0, OPT_EXCLUDE_FROM},
        {"shard", required_argument, 0, OPT_SHARD}, {"json", no_argument, 0, OPT_JSON},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    topts o = {.timeout = 300, .jobs = cores, .opt_level = FT_OPT_DEFAULT};
    int have_threads = 0, ch, json = 0, rc = 0;
    long shard_k = 0, shard_n = 0;
    patterns P = {0};
    double v;
    opterr = 0;
    optind = 1;
    while (!rc && (ch = getopt_long(argc, argv, ":d:j:O:qvh", lopts, NULL)) != -1) {
        switch (ch) {
        case 'd': o.device = optarg; break;
        case 'j': if (number("--jobs", optarg, 1, 1, &v)) rc = FT_EUSAGE; else o.jobs = (long)v; break;
        case 'O':
            if (strcmp(optarg, "0") && strcmp(optarg, "1") && strcmp(optarg, "2"))
                rc = usage_error("option -O: '%s' is not an optimizer level (0, 1 or 2)", optarg);
            else
                o.opt_level = optarg[0] - '0';
            break;
        case OPT_THREADS: if (number("--threads", optarg, 1, 1, &v)) rc = FT_EUSAGE; else o.threads = (long)v, have_threads = 1; break;
        case OPT_RTOL: if (number("--rtol", optarg, 0, 0, &o.rtol)) rc = FT_EUSAGE; else o.have_rtol = 1; break;
        case OPT_ATOL: if (number("--atol", optarg, 0, 0, &o.atol)) rc = FT_EUSAGE; else o.have_atol = 1; break;
        case OPT_TIMEOUT: if (number("--timeout", optarg, 0, 0, &o.timeout)) rc = FT_EUSAGE; break;
        case OPT_JUNIT:
            if (!*optarg)
                rc = usage_error("option --junit needs a file name");
            o.junit = optarg;
            break;
        case OPT_SAVE:
            if (!*optarg)
                rc = usage_error("option --save-outputs needs a folder");
            o.save_outputs = optarg;
            break;
        case OPT_EXCLUDE: {
            char why[1100];
            snprintf(why, sizeof why, "--exclude '%.1000s'", optarg);
            if (!*optarg)
                rc = usage_error("option --exclude needs a pattern");
            else if (add_pattern(&P, optarg, strlen(optarg), why))
                rc = FT_ERUNTIME, fprintf(stderr, "%s: error: test: out of memory\n", prog);
            break;
        }
        case OPT_EXCLUDE_FROM: rc = read_patterns(&P, optarg); break;
        case OPT_SHARD: {
            char *end;
            errno = 0;
            shard_k = strtol(optarg, &end, 10);
            shard_n = *end == '/' ? strtol(end + 1, &end, 10) : 0;
            if (errno || *end || !isdigit((unsigned char)optarg[0]) || shard_n < 1 || shard_n > 1000000 || shard_k < 1 ||
                shard_k > shard_n)
                rc = usage_error("option --shard: '%s' is not K/N with 1 <= K <= N (this run's share of N)", optarg);
            break;
        }
        case OPT_JSON: json = 1; break;
        case 'q': o.quiet = 1; break;
        case 'v': o.verbose = 1; break;
        case 'h':
            printf("Usage: ftrun test DIR... [OPTIONS]\n"
                   "Runs every test case in each DIR (ONNX backend-test layout or ftrun's own; see TEST FOLDERS\n"
                   "in ftrun(1)), in worker processes that each open the device once and run many cases;\n"
                   "a case that crashes or hangs fails alone and a new worker takes the rest.\n"
                   "  -d, --device DEV        cpu, cuda, cuda:N or auto (default)\n"
                   "  -j, --jobs N            cases at once, one per worker (default: the number of cores)\n"
                   "      --threads N         CPU threads per case (default: cores / N, at least 1)\n"
                   "      --timeout SEC       kill and fail a case still running after SEC s (default 300; 0: none)\n"
                   "  -O LEVEL                graph optimizer level, as for run (default 2)\n"
                   "      --rtol R, --atol A  tolerances (defaults per dtype, as for --expect, or a case's\n"
                   "                          tolerance.json)\n"
                   "      --exclude PATTERN   skip the cases whose name or folder (or its end after a '/') matches\n"
                   "                          the glob PATTERN, reported as SKIP (repeatable)\n"
                   "      --exclude-from FILE the patterns of FILE, one a line (its first word; the rest is the\n"
                   "                          reason shown; '#' starts a comment line)\n"
                   "      --shard K/N         run only share K of N (case i of the sorted list when i mod N = K-1)\n"
                   "      --junit FILE        also write a JUnit XML report\n"
                   "      --json              the report as one JSON object on stdout (schema ftrun-test/1)\n"
                   "      --save-outputs DIR  write each case's outputs to DIR/CASE/[SET/]NAME.npy; an output\n"
                   "                          without an expected value is then saved, not a failure\n"
                   "  -q, --quiet             print only the failed cases and the summary\n"
                   "  -v, --verbose           print each case's comparisons and standard error too\n"
                   "A DIR that is missing or holds no case is a failed entry of the report; the others still run.\n"
                   "Exit status: 0 no case failed, 1 a case failed, 2 usage error, 4 the device is not usable or\n"
                   "the report cannot be written.\n");
            free_patterns(&P);
            return 0;
        case ':': rc = usage_error("option '%s' needs an argument", argv[optind - 1]); break;
        default: rc = usage_error("option '%s' does not apply to 'test'", argv[optind - 1]); break;
        }
    }
    if (!rc && optind >= argc)
        rc = usage_error("'test' needs at least one DIR");
    if (rc) {
        free_patterns(&P);
        return rc;
    }
    if (!have_threads)
        o.threads = cores / o.jobs > 1 ? cores / o.jobs : 1;
    if (o.device && strcmp(o.device, "auto")) {
        rc = probe_device(o.device);
        if (rc) {
            free_patterns(&P);
            return rc;
        }
    }
    caselist L = {0};
    int n_dirs = argc - optind, n_real = 0;
    char **dirs = argv + optind;
    char **suite = ft_calloc((size_t)n_dirs, sizeof *suite);
    for (int d = 0; suite && d < n_dirs && !rc; d++) {
        size_t len = strlen(dirs[d]);
        while (len > 1 && dirs[d][len - 1] == '/')
            dirs[d][--len] = 0;
        const char *base = strrchr(dirs[d], '/');
        suite[d] = (char *)(base && base[1] ? base + 1 : dirs[d]);
        int before = L.n, r = 0;
        char why[600];
        if (!is_dir(dirs[d])) {
            snprintf(why, sizeof why, "not a test folder: %s", access(dirs[d], F_OK) ? strerror(errno) : "not a directory");
            r = add_missing(&L, dirs[d], d, why);
        } else if (!(r = collect(&L, dirs[d], suite[d], d, 0)) && L.n == before) {
            r = add_missing(&L, dirs[d], d,
                            "not a test folder: no model.onnx, graph.json or graph.ftg in it or in its subfolders (see TEST "
                            "FOLDERS in ftrun(1))");
        }
        if (r) {
            fprintf(stderr, "%s: error: test: out of memory\n", prog);
            rc = FT_ERUNTIME;
        }
    }
    if (!suite)
        rc = FT_ERUNTIME;
    /* the shard's share: case i of the whole sorted list when i mod N = K-1
     * (the same list and assignment in every shard); a missing DIR is
     * reported by every shard */
    int kept = 0;
    for (int i = 0; i < L.n && !rc; i++) {
        tcase *c = &L.c[i];
        int mine = c->missing || !shard_n || (n_real++ % shard_n) == shard_k - 1;
        if (!mine) {
            free(c->dir);
            free(c->name);
            free(c->msg);
            continue;
        }
        L.c[kept++] = *c;
    }
    if (!rc)
        L.n = kept;
    for (int i = 0; i < L.n && !rc; i++) {
        tcase *c = &L.c[i];
        const pattern *e = c->missing ? NULL : excluded(&P, c);
        if (!e)
            continue;
        char msg[1300];
        snprintf(msg, sizeof msg, "excluded by %s", e->why);
        c->status = 'S';
        if (!(c->msg = ft_strdup(msg)))
            rc = FT_ERUNTIME;
    }
    for (int i = 0; i < L.n && !rc; i++)
        if (L.c[i].missing)
            clean_text(L.c[i].msg);
    double t0 = ft_now();
    topts ro = o;
    if (json)
        ro.quiet = 2; /* --json: no per-case lines */
    if (!rc)
        rc = run_all(&ro, &L);
    double total = ft_now() - t0;
    int cnt[5] = {0};
    for (int i = 0; i < L.n; i++)
        cnt[test_kind(&L.c[i])]++;
    cnt[1] += cnt[4]; /* a missing DIR is a failure of the run */
    if (!rc) {
        if (json) {
            test_write_json(&o, &L, dirs, cnt, total, shard_k, shard_n);
        } else {
            char extra[96] = "";
            if (P.n || shard_n)
                snprintf(extra, sizeof extra, ", %d skipped", cnt[3]);
            char sh[48] = "";
            if (shard_n)
                snprintf(sh, sizeof sh, ", shard %ld/%ld", shard_k, shard_n);
            printf("%d passed, %d failed, %d unsupported%s (%d case%s in %.1f s, -j %ld%s)\n", cnt[0], cnt[1], cnt[2], extra,
                   L.n, L.n == 1 ? "" : "s", total, o.jobs, sh);
        }
        if (fflush(stdout) || ferror(stdout)) {
            fprintf(stderr, "%s: error: test: cannot write to standard output\n", prog);
            rc = FT_ERUNTIME;
        }
    }
    if (!rc && o.junit)
        rc = test_write_junit(&o, &L, suite, n_dirs, total);
    if (!rc && cnt[1])
        rc = FT_EMISMATCH;
    for (int i = 0; i < L.n; i++) {
        free(L.c[i].dir);
        free(L.c[i].name);
        free(L.c[i].msg);
        free(L.c[i].log.s);
    }
    free(L.c);
    free(suite);
    free_patterns(&P);
    return rc;
}
