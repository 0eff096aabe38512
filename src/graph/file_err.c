#include "file_err.h"

#include <stdarg.h>
#include <stdio.h>

ft_status ft_file_err(ft_error *err, ft_status code, const char *path, const char *fmt, ...)
{
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ft_err(err, code, "%s: %s", path, msg);
}
