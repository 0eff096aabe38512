#include "file_err.h"

#include <stdarg.h>
#include <stdio.h>

ft_status ft_file_err(ft_error *err, ft_status code, const char *path, const char *fmt, ...)
{
    FT_VFORMAT(msg, fmt);
    return ft_err(err, code, "%s: %s", path, msg);
}
