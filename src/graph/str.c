/* The interned string store of str.h: a hash table of chains, grown when
 * the load passes 1, under one mutex (kernels may run in threads). */
#include "str.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ft_str **table;
static size_t nbuckets, count;

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static int grow(void)
{
    size_t nb = nbuckets ? nbuckets * 2 : 1024;
    ft_str **t = calloc(nb, sizeof *t);
    if (!t)
        return -1;
    for (size_t b = 0; b < nbuckets; b++)
        for (ft_str *s = table[b], *nx; s; s = nx) {
            nx = s->next;
            s->next = t[s->hash & (nb - 1)];
            t[s->hash & (nb - 1)] = s;
        }
    free(table);
    table = t;
    nbuckets = nb;
    return 0;
}

int ft_str_make(const char *p, size_t n, const ft_str **out)
{
    *out = NULL;
    if (n == 0)
        return 0;
    const uint64_t h = hash_bytes(p, n);
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (count >= nbuckets && grow() && !nbuckets)
        rc = -1;
    for (ft_str *s = rc ? NULL : table[h & (nbuckets - 1)]; s; s = s->next)
        if (s->hash == h && s->len == n && !memcmp(s->s, p, n)) {
            *out = s;
            break;
        }
    if (!rc && !*out) {
        ft_str *s = n < SIZE_MAX - sizeof *s - 1 ? malloc(sizeof *s + n + 1) : NULL;
        if (!s)
            rc = -1;
        else {
            memcpy(s->s, p, n);
            s->s[n] = 0;
            s->len = n;
            s->hash = h;
            s->next = table[h & (nbuckets - 1)];
            table[h & (nbuckets - 1)] = s;
            count++;
            *out = s;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int ft_str_cmp(const ft_str *a, const ft_str *b)
{
    size_t la = ft_str_len(a), lb = ft_str_len(b);
    int c = memcmp(ft_str_bytes(a), ft_str_bytes(b), la < lb ? la : lb);
    return c ? c : la < lb ? -1 : la > lb;
}

int ft_utf8_next(const char *p, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)p;
    if (u[0] < 0x80 || n < 2) {
        *cp = u[0];
        return 1;
    }
    if (u[0] < 0xE0) {
        *cp = (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
        return 2;
    }
    if (u[0] < 0xF0 || n < 4) {
        *cp = n < 3 ? u[0] : (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
        return n < 3 ? 1 : 3;
    }
    *cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 | (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
    return 4;
}

int ft_utf8_valid(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k || n - i < k)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((u[i + j] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && u[i + 1] < 0xA0) || (c == 0xED && u[i + 1] >= 0xA0) || (c == 0xF0 && u[i + 1] < 0x90) ||
            (c == 0xF4 && u[i + 1] >= 0x90))
            return 0; /* overlong, surrogate, above U+10FFFF */
        i += k;
    }
    return 1;
}

void ft_str_store_free(void)
{
    pthread_mutex_lock(&lock);
    for (size_t b = 0; b < nbuckets; b++)
        for (ft_str *s = table[b], *nx; s; s = nx) {
            nx = s->next;
            free(s);
        }
    free(table);
    table = NULL;
    nbuckets = count = 0;
    pthread_mutex_unlock(&lock);
}

/* RE2's class escapes as POSIX classes; inside brackets, an escaped
 * character stands for itself (a '-' moved to the end, where it is one).
 * The whole wrapped in ^( )$: a full match. */
void ft_regex_posix(const char *p, char *out)
{
    char *o = out;
    o += sprintf(o, "^(");
    for (size_t i = 0; p[i]; i++) {
        if (p[i] == '\\' && p[i + 1] && strchr("dsDS", p[i + 1])) {
            o += sprintf(o, "%s", p[i + 1] == 'd' ? "[[:digit:]]" : p[i + 1] == 's' ? "[[:space:]]"
                                  : p[i + 1] == 'D' ? "[^[:digit:]]" : "[^[:space:]]");
            i++;
            continue;
        }
        if (p[i] == '\\' && p[i + 1]) {
            *o++ = p[i++];
            *o++ = p[i];
            continue;
        }
        if (p[i] != '[') {
            *o++ = p[i];
            continue;
        }
        /* a bracket expression */
        int dash = 0;
        *o++ = p[i++];
        if (p[i] == '^')
            *o++ = p[i++];
        if (p[i] == ']')
            *o++ = p[i++];
        for (; p[i] && p[i] != ']'; i++) {
            if (p[i] == '[' && (p[i + 1] == ':' || p[i + 1] == '.' || p[i + 1] == '=')) { /* [:alpha:] as it is */
                const char *e = strstr(p + i + 2, (char[]){p[i + 1], ']', 0});
                size_t l = e ? (size_t)(e - (p + i)) + 2 : 1;
                memcpy(o, p + i, l);
                o += l, i += l - 1;
            } else if (p[i] == '\\' && p[i + 1]) {
                const char c = p[++i];
                if (c == 'w')
                    o += sprintf(o, "[:alnum:]_");
                else if (c == 'd')
                    o += sprintf(o, "[:digit:]");
                else if (c == 's')
                    o += sprintf(o, "[:space:]");
                else if (c == '-')
                    dash = 1;
                else
                    *o++ = c;
            } else
                *o++ = p[i];
        }
        if (dash)
            *o++ = '-';
        if (p[i])
            *o++ = p[i];
        else
            break;
    }
    sprintf(o, ")$");
}


static int ascii_space(char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

int64_t ft_str_split(const ft_str *s, const ft_str *sep, int64_t maxsplit, const ft_str **out)
{
    const char *p = ft_str_bytes(s), *d = ft_str_bytes(sep);
    const size_t n = ft_str_len(s), dl = ft_str_len(sep);
    size_t i = 0;
    int64_t pieces = 0;
#define PIECE(a, b)                                                                                                    \
    do {                                                                                                               \
        if (out && ft_str_make(p + (a), (b) - (a), &out[pieces]))                                                     \
            return -1;                                                                                                 \
        pieces++;                                                                                                       \
    } while (0)
    if (!dl) { /* runs of blanks separate; none at either end gives a piece */
        for (;;) {
            while (i < n && ascii_space(p[i]))
                i++;
            if (i == n)
                break;
            if (maxsplit >= 0 && pieces == maxsplit) {
                PIECE(i, n);
                break;
            }
            size_t j = i;
            while (j < n && !ascii_space(p[j]))
                j++;
            PIECE(i, j);
            i = j;
        }
        return pieces;
    }
    for (;;) {
        const char *f = NULL;
        if (maxsplit < 0 || pieces < maxsplit)
            for (size_t k = i; k + dl <= n && !f; k++)
                if (!memcmp(p + k, d, dl))
                    f = p + k;
        if (!f) {
            PIECE(i, n);
            break;
        }
        PIECE(i, (size_t)(f - p));
        i = (size_t)(f - p) + dl;
    }
#undef PIECE
    return pieces;
}
