#include "npy_str.h"
#include "../graph/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ft_npy_str_descr(const char *d, char *kind, uint64_t *width)
{
    if (!d[0] || !d[1] || (d[1] != 'U' && d[1] != 'S' && d[1] != 'a'))
        return -1;
    if (d[0] == '>' && d[1] == 'U')
        return -2;
    if (d[0] != '<' && d[0] != '|' && d[0] != '=' && d[0] != '>')
        return -1;
    char *end;
    errno = 0;
    unsigned long long w = strtoull(d + 2, &end, 10);
    if (end == d + 2 || *end || errno || d[2] == '-' || w > (1ull << 30))
        return -1;
    *kind = d[1] == 'U' ? 'U' : 'S';
    *width = w;
    return 0;
}

/* Code point c as UTF-8 into b (4 bytes room); returns the length. */
static size_t put_utf8(uint32_t c, char *b)
{
    if (c < 0x80)
        return b[0] = (char)c, 1;
    if (c < 0x800)
        return b[0] = (char)(0xC0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000)
        return b[0] = (char)(0xE0 | c >> 12), b[1] = (char)(0x80 | (c >> 6 & 0x3F)), b[2] = (char)(0x80 | (c & 0x3F)), 3;
    b[0] = (char)(0xF0 | c >> 18), b[1] = (char)(0x80 | (c >> 12 & 0x3F));
    b[2] = (char)(0x80 | (c >> 6 & 0x3F)), b[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

ft_status ft_npy_str_decode(const char *path, const unsigned char *src, uint64_t numel, char kind, uint64_t width,
                            const void **dst, ft_error *err)
{
    const size_t unit = kind == 'U' ? 4 : 1;
    char *tmp = ft_malloc(width * 4 + 1);
    if (!tmp)
        return ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    ft_status st = FT_OK;
    for (uint64_t i = 0; i < numel && !st; i++) {
        const unsigned char *e = src + i * width * unit;
        uint64_t len = width; /* in units, trailing NULs dropped */
        while (len && (unit == 1 ? e[len - 1] == 0 : !(e[4 * len - 4] | e[4 * len - 3] | e[4 * len - 2] | e[4 * len - 1])))
            len--;
        size_t nb = 0;
        if (unit == 1) {
            memcpy(tmp, e, (size_t)len);
            nb = (size_t)len;
            if (!ft_utf8_valid(tmp, nb))
                st = ft_err(err, FT_EGRAPH, "%s: string %llu is not valid UTF-8 (ftrun's strings are UTF-8 text)", path,
                            (unsigned long long)i);
        } else
            for (uint64_t j = 0; j < len && !st; j++) {
                const uint32_t c = (uint32_t)e[4 * j] | (uint32_t)e[4 * j + 1] << 8 | (uint32_t)e[4 * j + 2] << 16 |
                                   (uint32_t)e[4 * j + 3] << 24;
                if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
                    st = ft_err(err, FT_EGRAPH, "%s: string %llu holds U+%X, which is not a Unicode scalar value", path,
                                (unsigned long long)i, (unsigned)c);
                else
                    nb += put_utf8(c, tmp + nb);
            }
        if (!st && ft_str_make(tmp, nb, (const ft_str **)&dst[i]))
            st = ft_err(err, FT_ERUNTIME, "%s: out of memory", path);
    }
    free(tmp);
    return st;
}

/* Code points in the well-formed UTF-8 of s. */
static uint64_t code_points(const ft_str *s)
{
    uint64_t n = 0;
    for (size_t i = 0, len = ft_str_len(s); i < len; i++)
        n += ((unsigned char)ft_str_bytes(s)[i] & 0xC0) != 0x80;
    return n;
}

uint64_t ft_npy_str_width(const void *data, uint64_t n)
{
    uint64_t w = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = code_points(((const ft_str *const *)data)[i]);
        w = c > w ? c : w;
    }
    return w;
}

int ft_npy_str_write(FILE *f, const void *data, uint64_t n, uint64_t width)
{
    for (uint64_t i = 0; i < n; i++) {
        const ft_str *s = ((const ft_str *const *)data)[i];
        const char *p = ft_str_bytes(s);
        size_t len = ft_str_len(s), at = 0;
        for (uint64_t j = 0; j < width; j++) {
            uint32_t c = 0;
            if (at < len)
                at += (size_t)ft_utf8_next(p + at, len - at, &c);
            const unsigned char u[4] = {(unsigned char)c, (unsigned char)(c >> 8), (unsigned char)(c >> 16),
                                        (unsigned char)(c >> 24)};
            if (fwrite(u, 1, 4, f) != 4)
                return -1;
        }
    }
    return 0;
}
