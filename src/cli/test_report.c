/* The reports of `ftrun test` (test_int.h): JUnit XML (--junit) and the
 * JSON report (--json), written from the parent's case list after every case
 * has run, and the growable string both are built in. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "outfile.h"
#include "test_int.h"

void test_sb_add(sbuf *b, const char *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}

void test_sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n >= 0)
        test_sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}


static void xml_textn(sbuf *b, const char *s, size_t n)
{
    for (const char *e = s ? s + n : s; s && s < e && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&')
            test_sb_add(b, "&amp;", 5);
        else if (ch == '<')
            test_sb_add(b, "&lt;", 4);
        else if (ch == '>')
            test_sb_add(b, "&gt;", 4);
        else if (ch == '"')
            test_sb_add(b, "&quot;", 6);
        else if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r')
            test_sb_add(b, "?", 1); /* not allowed in XML 1.0 */
        else
            test_sb_add(b, s, 1);
    }
}

static void xml_text(sbuf *b, const char *s) { xml_textn(b, s, s ? strlen(s) : 0); }

/* A case's column in the counts: 0 passed, 1 failed, 2 unsupported, 3
 * skipped (excluded); 4 (JUnit's errors) for a DIR that is not a test folder,
 * which the summary counts as failed. */
int test_kind(const tcase *c)
{
    return c->missing ? 4 : c->status == 'F' ? 1 : c->status == 'U' ? 2 : c->status == 'S' ? 3 : 0;
}

/* JUnit XML: one <testsuite> per DIR operand, one <testcase> per case; a
 * failure has <failure>, an unsupported or excluded case <skipped>, a DIR
 * that is not a test folder <error>, each with the message (and the case's
 * log in <system-err>). */
int test_write_junit(const topts *o, const caselist *L, char **dirs, int n_dirs, double total_s)
{
    sbuf b = {0};
    int all[5] = {0};
    for (int i = 0; i < L->n; i++)
        all[test_kind(&L->c[i])]++;
    char ts[64];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&now));
    test_sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ftrun test\" tests=\"%d\" failures=\"%d\" "
              "errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n", L->n, all[1], all[4], all[2] + all[3], total_s);
    for (int d = 0; d < n_dirs; d++) {
        int cnt[5] = {0}, n = 0;
        double secs = 0;
        for (int i = 0; i < L->n; i++)
            if (L->c[i].suite == d) {
                cnt[test_kind(&L->c[i])]++;
                secs += L->c[i].secs;
                n++;
            }
        test_sb_add(&b, "  <testsuite name=\"", 19);
        xml_text(&b, dirs[d]);
        test_sb_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\">\n", n,
                  cnt[1], cnt[4], cnt[2] + cnt[3], secs, ts);
        for (int i = 0; i < L->n; i++) {
            const tcase *c = &L->c[i];
            if (c->suite != d)
                continue;
            const char *slash = strchr(c->name, '/');
            test_sb_add(&b, "    <testcase classname=\"", 25);
            xml_textn(&b, c->name, slash ? (size_t)(slash - c->name) : strlen(c->name));
            test_sb_add(&b, "\" name=\"", 8);
            xml_text(&b, slash ? slash + 1 : c->name);
            test_sb_printf(&b, "\" time=\"%.3f\"", c->secs);
            if (c->status == 'P') {
                test_sb_add(&b, "/>\n", 3);
                continue;
            }
            test_sb_add(&b, ">\n      <", 9);
            test_sb_add(&b, c->missing ? "error" : c->status == 'F' ? "failure" : "skipped", c->missing ? 5 : 7);
            test_sb_add(&b, " message=\"", 10);
            if (c->status == 'U')
                test_sb_add(&b, "unsupported: ", 13);
            xml_text(&b, c->msg);
            test_sb_add(&b, "\"", 1);
            if (c->missing) {
                test_sb_add(&b, " type=\"missing\"/>\n", 18);
            } else if (c->status == 'F') {
                test_sb_printf(&b, " type=\"%s\">", !strncmp(c->msg, "crashed", 7) ? "crash"
                                                : !strncmp(c->msg, "timed out", 9) ? "timeout" : "failure");
                xml_text(&b, c->msg);
                test_sb_add(&b, "</failure>\n", 11);
            } else {
                test_sb_add(&b, "/>\n", 3);
            }
            if (c->log.len) {
                test_sb_add(&b, "      <system-err>", 18);
                xml_text(&b, c->log.s);
                test_sb_add(&b, "</system-err>\n", 14);
            }
            test_sb_add(&b, "    </testcase>\n", 16);
        }
        test_sb_add(&b, "  </testsuite>\n", 15);
    }
    test_sb_add(&b, "</testsuites>\n", 14);
    ft_error err = {0};
    ft_status st = b.oom ? ft_err(&err, FT_ERUNTIME, "out of memory") : FT_OK;
    /* written under a temporary name and renamed: never a partial file */
    char *path = ft_strdup(o->junit), *slash = path ? strrchr(path, '/') : NULL;
    ft_outset outs = {0};
    if (!path)
        st = ft_err(&err, FT_ERUNTIME, "out of memory");
    if (!st) {
        const char *dir = slash ? (slash == path ? "/" : (*slash = 0, path)) : ".";
        const char *fname = slash ? slash + 1 : path;
        st = !*fname ? ft_err(&err, FT_EUSAGE, "no file name") : ft_mkdirs(dir, &err);
        if (!st)
            st = ft_outset_text(&outs, dir, fname, b.s, &err);
        if (!st)
            st = ft_outset_commit(&outs, &err);
        else
            ft_outset_abort(&outs);
    }
    free(path);
    free(b.s);
    if (st) {
        fprintf(stderr, "%s: error: test: --junit %s: %s\n", ft_prog, o->junit, err.msg);
        return FT_ERUNTIME;
    }
    return 0;
}

static void json_str(sbuf *b, const char *s)
{
    test_sb_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            test_sb_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            test_sb_printf(b, "\\u%04x", *p);
        else
            test_sb_add(b, (const char *)p, 1);
    }
    test_sb_add(b, "\"", 1);
}

/* --json: the report as one JSON object on standard output (schema
 * "ftrun-test/1", ftrun(1) JSON OUTPUT). */
void test_write_json(const topts *o, const caselist *L, char **dirs, const int *cnt, double total, long shard_k,
                       long shard_n)
{
    static const char *const names[] = {"pass", "fail", "unsupported", "skipped", "missing"};
    sbuf b = {0};
    test_sb_printf(&b, "{\"schema\": \"ftrun-test/1\", \"ftrun_version\": \"%s\", \"device\": ", FT_VERSION);
    json_str(&b, o->device ? o->device : "auto");
    test_sb_printf(&b, ", \"jobs\": %ld, \"seconds\": %.3f, ", o->jobs, total);
    if (shard_n)
        test_sb_printf(&b, "\"shard\": [%ld, %ld], ", shard_k, shard_n);
    else
        test_sb_printf(&b, "\"shard\": null, ");
    test_sb_printf(&b, "\"counts\": {\"cases\": %d, \"passed\": %d, \"failed\": %d, \"unsupported\": %d, \"skipped\": %d},\n \"cases\": [",
              L->n, cnt[0], cnt[1], cnt[2], cnt[3]);
    for (int i = 0; i < L->n; i++) {
        const tcase *c = &L->c[i];
        test_sb_add(&b, i ? ",\n  {\"name\": " : "\n  {\"name\": ", i ? 13 : 12);
        json_str(&b, c->name);
        test_sb_add(&b, ", \"suite\": ", 11);
        json_str(&b, dirs[c->suite]);
        test_sb_printf(&b, ", \"status\": \"%s\", \"ms\": %.3f, \"message\": ", names[test_kind(c)], c->secs * 1e3);
        json_str(&b, c->status == 'P' ? "" : c->msg);
        if (o->verbose && c->log.len) {
            test_sb_add(&b, ", \"log\": ", 9);
            json_str(&b, c->log.s);
        }
        test_sb_add(&b, "}", 1);
    }
    test_sb_add(&b, "]}\n", 3);
    if (b.oom)
        fprintf(stderr, "%s: error: test: out of memory writing the JSON report\n", ft_prog);
    else
        fputs(b.s, stdout);
    free(b.s);
}
