/* --tuning-cache FILE: reading and writing the file (tuning_file.h). */
#include "tuning_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/npy.h"
#include "cli.h"
#include "outfile.h"

ft_status cli_tuning_load(const char *path, int quiet, ft_tuning **out, int *fresh, ft_error *err)
{
    *out = NULL;
    *fresh = 0;
    struct stat sb;
    unsigned char *text = NULL;
    size_t n = 0;
    if (stat(path, &sb) != 0 && errno == ENOENT)
        *fresh = 1;
    else {
        ft_status rs = ft_read_file(path, &text, &n, err);
        if (rs) {
            ft_err_prefix(err, "--tuning-cache");
            return rs;
        }
    }
    ft_status st = ft_outfile_check(path, 0, err);
    if (st)
        ft_err_prefix(err, "--tuning-cache");
    char why[300];
    if (!st)
        st = ft_tuning_parse(path, *fresh ? NULL : text ? (const char *)text : "", n, out, why, sizeof why, err);
    free(text);
    if (st)
        return st;
    if (why[0]) {
        *fresh = 1;
        if (!quiet)
            fprintf(stderr, "%s: warning: --tuning-cache %s was recorded on another machine or build (%s): its picks are not used, and the file will be rewritten\n",
                    ft_prog, path, why);
    }
    return FT_OK;
}

ft_status cli_tuning_save(const char *path, const ft_tuning *t, int fresh, ft_error *err)
{
    if (!fresh && !ft_tuning_added(t))
        return FT_OK;
    char *text = ft_tuning_json(t);
    if (!text)
        return ft_err(err, FT_ERUNTIME, "out of memory writing --tuning-cache %s", path);
    ft_outfile o = {0};
    ft_status st = ft_outfile_open(&o, path, 0, err);
    if (!st && (fputs(text, o.f) < 0 || fputc('\n', o.f) < 0))
        st = ft_err(err, FT_ERUNTIME, "%s: cannot write: %s", path, strerror(errno));
    if (!st)
        st = ft_outfile_commit(&o, err);
    else
        ft_outfile_abort(&o);
    free(text);
    if (st)
        ft_err_prefix(err, "--tuning-cache");
    return st;
}
