/* Safe output paths (outfile.h): exclusive temporary files renamed into
 * place for regular files, writes in place for FIFOs and character devices,
 * "-" for standard output, and the checks made before anything runs. */
#include "outfile.h"
#include "../onnx/onnx.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef enum { K_REPLACE, K_IN_PLACE, K_STDOUT } out_kind;

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* The folder part of path ("." for a bare name, "/" for "/name"). */
static char *dir_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl)
        return dup_str(".");
    if (sl == path)
        return dup_str("/");
    char *d = malloc((size_t)(sl - path) + 1);
    if (d) {
        memcpy(d, path, (size_t)(sl - path));
        d[sl - path] = 0;
    }
    return d;
}

/* What kind of target path is; for K_REPLACE, *dest is the file to replace
 * (caller frees). */
static ft_status classify(const char *path, unsigned flags, out_kind *kind, char **dest, ft_error *err)
{
    *dest = NULL;
    if ((flags & FT_OUT_DASH) && !strcmp(path, "-")) {
        *kind = K_STDOUT;
        return FT_OK;
    }
    size_t len = strlen(path);
    if (!len)
        return ft_err(err, FT_ERUNTIME, "cannot write '': empty file name");
    if (path[len - 1] == '/')
        return ft_err(err, FT_ERUNTIME, "cannot write %s: that names a directory, not a file", path);
    struct stat ls, st;
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT)
            return ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
        char *dir = dir_of(path);
        if (!dir)
            return ft_err(err, FT_ERUNTIME, "out of memory");
        int ok = stat(dir, &st) == 0, e = errno;
        ft_status r = FT_OK;
        if (!ok)
            r = ft_err(err, FT_ERUNTIME, "cannot write %s: folder %s: %s", path, dir, strerror(e));
        else if (!S_ISDIR(st.st_mode))
            r = ft_err(err, FT_ERUNTIME, "cannot write %s: %s is not a directory", path, dir);
        free(dir);
        if (r)
            return r;
        *kind = K_REPLACE;
        return (*dest = dup_str(path)) ? FT_OK : ft_err(err, FT_ERUNTIME, "out of memory");
    }
    st = ls;
    int is_link = S_ISLNK(ls.st_mode);
    if (is_link && stat(path, &st) != 0) {
        if (errno != ENOENT)
            return ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
        st = ls; /* a dangling link is replaced, never followed */
    }
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        *kind = K_IN_PLACE;
        return FT_OK;
    }
    if (S_ISDIR(st.st_mode))
        return ft_err(err, FT_ERUNTIME, "cannot write %s: it is a directory", path);
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return ft_err(err, FT_ERUNTIME, "cannot write %s: it is not a regular file, FIFO or character device", path);
    *kind = K_REPLACE;
    if (is_link && S_ISREG(st.st_mode)) { /* keep the link: replace what it points to */
        char *real = realpath(path, NULL);
        if (!real)
            return ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
        *dest = real;
        return FT_OK;
    }
    return (*dest = dup_str(path)) ? FT_OK : ft_err(err, FT_ERUNTIME, "out of memory");
}

/* The temporary files being written, for a second SIGINT or SIGTERM, which
 * ends ftrun at once from its handler (ft_outfile_remove_live). A slot is
 * filled once its name is complete and emptied before the name is freed. */
#define LIVE_MAX 256
static char *volatile live[LIVE_MAX];

static void live_add(char *name)
{
    for (int i = 0; i < LIVE_MAX; i++) {
        char *expected = NULL;
        if (__atomic_compare_exchange_n(&live[i], &expected, name, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return;
    }
}

static void live_drop(const char *name)
{
    for (int i = 0; name && i < LIVE_MAX; i++)
        if (live[i] == name)
            __atomic_store_n(&live[i], NULL, __ATOMIC_SEQ_CST);
}

void ft_outfile_remove_live(void)
{
    for (int i = 0; i < LIVE_MAX; i++) {
        char *name = __atomic_load_n(&live[i], __ATOMIC_SEQ_CST);
        if (name)
            unlink(name);
    }
}

/* Create DIR/.BASE.tmpXXXXXXXXXXXX exclusively (never through a link) for
 * dest; *tmp is the name (caller frees); returns the descriptor or -1. */
static int make_tmp(const char *dest, const char *what, char **tmp, ft_error *err)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *dir = dir_of(dest);
    const char *base = strrchr(dest, '/') ? strrchr(dest, '/') + 1 : dest;
    size_t n = (dir ? strlen(dir) : 0) + 200;
    char *name = dir ? malloc(n) : NULL;
    if (!name) {
        free(dir);
        ft_err(err, FT_ERUNTIME, "out of memory");
        return -1;
    }
    int fd = -1, e = EEXIST;
    for (int attempt = 0; attempt < 100 && fd < 0 && e == EEXIST; attempt++) {
        unsigned char rnd[12];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) { /* no entropy source: still unique enough */
            uint64_t x = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 20 ^ (uint64_t)attempt;
            for (size_t i = 0; i < sizeof rnd; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
                rnd[i] = (unsigned char)(x >> 56);
        }
        char suffix[sizeof rnd + 1];
        for (size_t i = 0; i < sizeof rnd; i++)
            suffix[i] = chars[rnd[i] % (sizeof chars - 1)];
        suffix[sizeof rnd] = 0;
        snprintf(name, n, "%s/.%.120s.tmp%s", dir, base, suffix);
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        e = fd < 0 ? errno : 0;
    }
    free(dir);
    if (fd < 0) {
        ft_err(err, FT_ERUNTIME, "cannot write %s: %s", what, strerror(e));
        free(name);
        return -1;
    }
    *tmp = name;
    live_add(name);
    return fd;
}

ft_status ft_outfile_check(const char *path, unsigned flags, ft_error *err)
{
    out_kind k;
    char *dest;
    ft_status st = classify(path, flags, &k, &dest, err);
    if (st)
        return st;
    if (k == K_IN_PLACE && access(path, W_OK) != 0)
        st = ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
    if (k == K_REPLACE) { /* the folder must take a new file: make one and remove it */
        char *tmp;
        int fd = make_tmp(dest, path, &tmp, err);
        if (fd < 0) {
            st = err->code;
        } else {
            close(fd);
            unlink(tmp);
            free(tmp);
        }
    }
    free(dest);
    return st;
}

ft_status ft_outfile_open(ft_outfile *o, const char *path, unsigned flags, ft_error *err)
{
    memset(o, 0, sizeof *o);
    out_kind k;
    char *dest;
    ft_status st = classify(path, flags, &k, &dest, err);
    if (st)
        return st;
    if (k == K_STDOUT) {
        o->f = stdout;
        o->to_stdout = 1;
        return FT_OK;
    }
    if (!(o->path = dup_str(path))) {
        free(dest);
        return ft_err(err, FT_ERUNTIME, "out of memory");
    }
    int fd;
    if (k == K_IN_PLACE) {
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            st = ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
    } else {
        o->dest = dest;
        dest = NULL;
        fd = make_tmp(o->dest, path, &o->tmp, err);
        if (fd < 0)
            st = err->code;
    }
    free(dest);
    if (!st && !(o->f = fdopen(fd, "wb"))) {
        st = ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(errno));
        close(fd);
    }
    if (st)
        ft_outfile_abort(o);
    return st;
}

ft_status ft_outfile_close(ft_outfile *o, ft_error *err)
{
    if (!o->f)
        return FT_OK;
    FILE *f = o->f;
    o->f = NULL;
    errno = 0;
    if (o->to_stdout) {
        if (fflush(f) != 0 || ferror(f))
            return ft_err(err, FT_ERUNTIME, "cannot write to standard output: %s", strerror(errno ? errno : EIO));
        return FT_OK;
    }
    int bad = ferror(f) || fflush(f) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return ft_err(err, FT_ERUNTIME, "cannot write %s: %s", o->path, strerror(e ? e : EIO));
    return FT_OK;
}

static void outfile_free(ft_outfile *o)
{
    free(o->path);
    free(o->dest);
    live_drop(o->tmp);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

void ft_outfile_abort(ft_outfile *o)
{
    if (o->f && !o->to_stdout)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp)
        unlink(o->tmp);
    outfile_free(o);
}

/* Rename a closed temporary file into place (nothing to do in place). */
static ft_status outfile_rename(ft_outfile *o, ft_error *err)
{
    if (o->tmp && rename(o->tmp, o->dest) != 0)
        return ft_err(err, FT_ERUNTIME, "cannot write %s: renaming %s: %s", o->path, o->tmp, strerror(errno));
    live_drop(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return FT_OK;
}

ft_status ft_outfile_commit(ft_outfile *o, ft_error *err)
{
    ft_status st = ft_outfile_close(o, err);
    if (!st)
        st = outfile_rename(o, err);
    if (st)
        ft_outfile_abort(o);
    else
        outfile_free(o);
    return st;
}

ft_status ft_outfile_write_text(const char *path, unsigned flags, const char *text, ft_error *err)
{
    ft_outfile o;
    ft_status st = ft_outfile_open(&o, path, flags, err);
    if (st)
        return st;
    if (fputs(text, o.f) == EOF) {
        int e = errno;
        ft_outfile_abort(&o);
        return ft_err(err, FT_ERUNTIME, "cannot write %s: %s", path, strerror(e ? e : EIO));
    }
    return ft_outfile_commit(&o, err);
}

ft_status ft_mkdirs(const char *dir, ft_error *err)
{
    char path[4096];
    if (strlen(dir) >= sizeof path)
        return ft_err(err, FT_ERUNTIME, "output directory name too long");
    strcpy(path, dir);
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            struct stat st;
            if (stat(path, &st) != 0) {
                if (mkdir(path, 0777) != 0 && errno != EEXIST)
                    return ft_err(err, FT_ERUNTIME, "cannot create output directory '%s': %s", path, strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                return ft_err(err, FT_ERUNTIME, "cannot create output directory '%s': '%s' exists and is not a directory",
                              dir, path);
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return FT_OK;
}

ft_status ft_outdir_check(const char *dir, const char *const *names, int n, ft_error *err)
{
    char path[4096];
    if (strlen(dir) >= sizeof path - 600)
        return ft_err(err, FT_ERUNTIME, "output directory name too long");
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return ft_err(err, FT_ERUNTIME, "cannot use output directory '%s': it exists and is not a directory", dir);
        char *tmp;
        snprintf(path, sizeof path, "%s/x", dir);
        int fd = make_tmp(path, dir, &tmp, err);
        if (fd < 0) {
            ft_err_prefix(err, "output directory '%s'", dir);
            return err->code;
        }
        close(fd);
        unlink(tmp);
        free(tmp);
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            ft_status s = ft_outfile_check(path, 0, err);
            if (s)
                return s;
        }
        return FT_OK;
    }
    if (errno != ENOENT)
        return ft_err(err, FT_ERUNTIME, "cannot use output directory '%s': %s", dir, strerror(errno));
    /* created after the run: the nearest existing folder above must take it */
    strcpy(path, dir);
    for (;;) {
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/')
            path[--len] = 0;
        char *sl = strrchr(path, '/');
        if (!sl)
            strcpy(path, ".");
        else if (sl == path)
            path[1] = 0;
        else
            *sl = 0;
        if (stat(path, &st) == 0)
            break;
        if (errno != ENOENT || !strcmp(path, ".") || !strcmp(path, "/"))
            return ft_err(err, FT_ERUNTIME, "cannot create output directory '%s': %s: %s", dir, path, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return ft_err(err, FT_ERUNTIME, "cannot create output directory '%s': '%s' exists and is not a directory", dir, path);
    if (access(path, W_OK | X_OK) != 0)
        return ft_err(err, FT_ERUNTIME, "cannot create output directory '%s': %s: %s", dir, path, strerror(errno));
    return FT_OK;
}

ft_status ft_outpath_check(const char *path, ft_error *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (slash && slash - path >= (long)sizeof dir)
        return ft_err(err, FT_ERUNTIME, "cannot write %s: name too long", path);
    snprintf(dir, sizeof dir, "%.*s", !slash ? 1 : slash == path ? 1 : (int)(slash - path), !slash ? "." : path);
    if (!*name)
        return ft_err(err, FT_ERUNTIME, "cannot write %s: that names a directory, not a file", path);
    return ft_outdir_check(dir, &name, 1, err);
}

/* ---- sets of files in one folder ---- */

static ft_status outset_add(ft_outset *s, const char *dir, const char *fname, ft_error *err, ft_outfile **out)
{
    if (ft_grow(&s->f, &s->cap, s->n, sizeof *s->f, 8))
        return ft_err(err, FT_ERUNTIME, "out of memory");
    size_t len = strlen(dir) + strlen(fname) + 2;
    char *path = malloc(len);
    if (!path)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    snprintf(path, len, "%s/%s", dir, fname);
    ft_status st = ft_outfile_open(&s->f[s->n], path, 0, err);
    free(path);
    if (st)
        return st;
    *out = &s->f[s->n++];
    return FT_OK;
}

/* Close a member once written; a write error names the file. */
static ft_status outset_done(ft_outfile *o, ft_status st, ft_error *err)
{
    if (st) {
        if (o->f && !o->to_stdout)
            fclose(o->f);
        o->f = NULL;
        return st;
    }
    return ft_outfile_close(o, err);
}

ft_status ft_outset_npy(ft_outset *s, const char *dir, const char *fname, ft_dtype dt, const ft_shape *shape,
                        const void *data, ft_error *err)
{
    ft_outfile *o;
    ft_status st = outset_add(s, dir, fname, err, &o);
    if (st)
        return st;
    return outset_done(o, ft_npy_write(o->f, o->path, dt, shape, data, err), err);
}

ft_status ft_outset_pb(ft_outset *s, const char *dir, const char *fname, const char *name, ft_dtype dt,
                       const ft_shape *shape, const void *data, ft_error *err)
{
    ft_outfile *o;
    ft_status st = outset_add(s, dir, fname, err, &o);
    if (st)
        return st;
    return outset_done(o, ft_pb_write(o->f, o->path, name, dt, shape, data, err), err);
}

ft_status ft_outset_text(ft_outset *s, const char *dir, const char *fname, const char *text, ft_error *err)
{
    ft_outfile *o;
    ft_status st = outset_add(s, dir, fname, err, &o);
    if (st)
        return st;
    size_t n = strlen(text);
    if (fwrite(text, 1, n, o->f) != n)
        st = ft_err(err, FT_ERUNTIME, "cannot write %s: %s", o->path, strerror(errno ? errno : EIO));
    return outset_done(o, st, err);
}

ft_status ft_outset_npz(ft_outset *s, const char *dir, const char *fname, const ft_npz_item *items, int n, ft_error *err)
{
    ft_outfile *o;
    ft_status st = outset_add(s, dir, fname, err, &o);
    if (st)
        return st;
    return outset_done(o, ft_npz_write(o->f, o->path, items, n, err), err);
}

static void outset_free(ft_outset *s)
{
    free(s->f);
    memset(s, 0, sizeof *s);
}

void ft_outset_abort(ft_outset *s)
{
    for (int i = 0; i < s->n; i++)
        ft_outfile_abort(&s->f[i]);
    outset_free(s);
}

ft_status ft_outset_commit(ft_outset *s, ft_error *err)
{
    if (ft_stop_signal) { /* interrupted while writing: keep nothing */
        ft_outset_abort(s);
        return ft_err(err, FT_ERUNTIME, "interrupted while writing results");
    }
    for (int i = 0; i < s->n; i++)
        if (outfile_rename(&s->f[i], err)) {
            for (int j = 0; j < i; j++)
                if (s->f[j].dest)
                    unlink(s->f[j].dest);
            ft_outset_abort(s);
            return FT_ERUNTIME;
        }
    for (int i = 0; i < s->n; i++)
        ft_outfile_abort(&s->f[i]); /* nothing left to remove: releases the names */
    outset_free(s);
    return FT_OK;
}
