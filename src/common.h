/* Shared basics: status codes, the error value every fallible function fills.
 *
 * Errors are values. A function that can fail returns an ft_status and, on
 * failure, writes a complete human-readable message into the caller-owned
 * ft_error. The message names the file, node, op and values involved; the
 * command line prints it as "ftrun: error: <msg>" and exits with the code.
 *
 *   ft_error err = {0};
 *   if (n > max) return ft_err(&err, FT_EGRAPH, "%s: %zu bytes, more than %zu", path, n, max);
 *   if (err.code) fprintf(stderr, "ftrun: error: %s\n", err.msg);   // exit err.code
 */
#ifndef FT_COMMON_H
#define FT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define FT_VERSION "0.1.0"

/* Exit codes of the command line, and the status values of the library. */
typedef enum {
    FT_OK = 0,
    FT_EMISMATCH = 1, /* a comparison found values out of tolerance */
    FT_EUSAGE = 2,    /* bad command line */
    FT_EGRAPH = 3,    /* invalid graph or input data */
    FT_ERUNTIME = 4,  /* device, memory, kernel or output failure */
} ft_status;

typedef struct ft_error {
    ft_status code;
    char msg[2048];
} ft_error;

#if defined(__GNUC__)
#define FT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FT_PRINTF(a, b)
#endif

/* In a printf-like function whose last named parameter is fmt: declare
 * char msg[1536] holding the formatted message (the file includes stdarg.h
 * and stdio.h).
 *   ft_status my_err(ft_error *err, const char *fmt, ...)
 *   { FT_VFORMAT(msg, fmt); return ft_err(err, FT_EGRAPH, "where: %s", msg); }
 */
#define FT_VFORMAT(msg, fmt)                                                                                            \
    char msg[1536];                                                                                                      \
    do {                                                                                                                 \
        va_list ap_;                                                                                                     \
        va_start(ap_, fmt);                                                                                              \
        vsnprintf(msg, sizeof msg, fmt, ap_);                                                                            \
        va_end(ap_);                                                                                                     \
    } while (0)

/* Fill err (if not NULL) and return code. Never returns FT_OK unless given it. */
ft_status ft_err(ft_error *err, ft_status code, const char *fmt, ...) FT_PRINTF(3, 4);
/* Prepend "prefix: " to an existing message (used to add file or node context). */
void ft_err_prefix(ft_error *err, const char *fmt, ...) FT_PRINTF(2, 3);

/* Allocation helpers: return NULL on failure (callers report FT_ERUNTIME). */
void *ft_malloc(size_t n);
void *ft_calloc(size_t n, size_t size);
void *ft_realloc(void *p, size_t n);
char *ft_strdup(const char *s);
/* Free the n strings of v and v itself (v may be NULL when n is 0). */
void ft_free_strs(char **v, int n);
/* Make room for element n of the array *arrp (a T **, capacity *cap elements
 * of size bytes): when n >= *cap, double the capacity (first when it is 0).
 * Returns 0, or -1 when out of memory (the array is then unchanged).
 *   if (ft_grow(&v, &cap, n, sizeof *v, 16)) return oom(); v[n++] = x;
 */
int ft_grow(void *arrp, int *cap, int n, size_t size, int first);

/* The message into buf (n bytes), then rc: the body of a module's small
 * "say why into the caller's buffer and fail" helper, e.g.
 *   #define fail(why, wn, ...) ft_fmt_rc(-1, why, wn, __VA_ARGS__)
 */
int ft_fmt_rc(int rc, char *buf, size_t n, const char *fmt, ...) FT_PRINTF(4, 5);

/* Seconds on a monotonic clock. */
double ft_now(void);

/* The peak resident memory of this process image so far, in bytes (Linux's
 * VmHWM of /proc/self/status: since the program was exec'd, unlike
 * getrusage's ru_maxrss, which also counts the image that forked it), or 0
 * where it cannot be read. */
uint64_t ft_peak_rss_bytes(void);

/* Checked arithmetic: return 0 on success, 1 on overflow. */
static inline int ft_mul_overflow(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}
static inline int ft_add_overflow(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

#define FT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
