/* The elements of string tensors (dtype FT_STRING).
 *
 * A string tensor holds one pointer per element (8 bytes, like i64): a
 * const ft_str * to an immutable UTF-8 string with its length, or NULL for
 * the empty string, so that zeroed memory is a tensor of empty strings. The
 * ops that move bytes (identity, reshape, gather, concat, ...) copy the
 * pointers and need no change; ops that compare or build strings use the
 * functions below.
 *
 * Ownership: every string lives in one process-wide store of interned
 * strings: ft_str_make returns the same pointer for the same bytes, so two
 * elements are equal exactly when their pointers are, and a graph run many
 * times over the same inputs stores each result once. Nothing else owns or
 * frees an ft_str: tensors, .npy arrays and graphs only hold pointers, and
 * the pointers stay valid until ft_str_store_free(), which the command line
 * calls once on exit. The store is safe to use from several threads.
 *
 *   const ft_str *s;
 *   if (ft_str_make("abc", 3, &s)) return out_of_memory;
 *   printf("%.*s\n", (int)ft_str_len(s), ft_str_bytes(s));
 */
#ifndef FT_STR_H
#define FT_STR_H

#include <stddef.h>
#include <stdint.h>

typedef struct ft_str {
    struct ft_str *next; /* the store's hash chain */
    uint64_t hash;
    size_t len;
    char s[]; /* len bytes, then a NUL (the bytes may hold none) */
} ft_str;

/* The interned string of n bytes at p (NULL for n == 0). Returns 0, or -1
 * when memory ran out (*out is then NULL). */
int ft_str_make(const char *p, size_t n, const ft_str **out);
static inline size_t ft_str_len(const ft_str *s) { return s ? s->len : 0; }
static inline const char *ft_str_bytes(const ft_str *s) { return s ? s->s : ""; }
/* Byte-wise order of two strings (<0, 0, >0), as memcmp then length. */
int ft_str_cmp(const ft_str *a, const ft_str *b);
/* 1 when n bytes at p are well-formed UTF-8 (no overlong forms, surrogates
 * or code points above U+10FFFF). */
int ft_utf8_valid(const char *p, size_t n);
/* Decode one code point of the well-formed UTF-8 at p (n bytes left) into
 * *cp; returns the bytes it took (1..4). */
int ft_utf8_next(const char *p, size_t n, uint32_t *cp);
/* A pattern of ONNX's RegexFullMatch (RE2 syntax) as a POSIX extended
 * regular expression that matches the whole string: \d \s (\D \S) become
 * POSIX classes, inside brackets \w \d \s too and an escaped character
 * itself; the rest is left to regcomp (glibc takes \w \W \b). out needs
 * room for 12 * strlen(p) + 8 bytes. */
void ft_regex_posix(const char *p, char *out);
/* s split as Python's str.split(sep, maxsplit) splits it: at each
 * occurrence of sep, left to right; with sep empty (NULL) at runs of ASCII
 * blanks (space, \t \n \v \f \r), leading and trailing ones giving no
 * piece; after maxsplit splits (< 0: no limit) the rest is one piece. The
 * pieces go to out (NULL: only counted). Returns their number, or -1 when
 * memory ran out. */
int64_t ft_str_split(const ft_str *s, const ft_str *sep, int64_t maxsplit, const ft_str **out);
/* Free the store; every ft_str pointer becomes invalid. */
void ft_str_store_free(void);

#endif
