#include "arrays.h"
#include "../io/npz.h"
#include "../onnx/onnx.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A .npy or an ONNX TensorProto. A TensorProto has no magic: it starts with
 * the tag of dims, data_type, name or raw_data (what every writer puts first). */
static ft_status parse_single(const char *path, const unsigned char *buf, size_t len, ft_npy *out, ft_error *err)
{
    int pb = len > 0 && !ft_npy_is_npy(buf, len) && buf[0] && strchr("\x08\x0a\x10\x42\x4a", buf[0]);
    return pb ? ft_pb_parse(path, buf, len, out, err) : ft_npy_parse(path, buf, len, out, err);
}

ft_status ft_array_read_values(const char *path, int optional, ft_npy **v, int *count, ft_error *err)
{
    unsigned char *buf;
    size_t len;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    st = ft_pb_parse_values(path, buf, len, optional, v, count, err);
    free(buf);
    return st;
}

ft_status ft_array_read(const char *path, const char *name, ft_npy *out, ft_error *err)
{
    unsigned char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    if (!ft_npz_is_npz(buf, len)) {
        st = parse_single(path, buf, len, out, err);
        free(buf);
        return st;
    }
    ft_npz z;
    if ((st = ft_npz_open_mem(path, buf, len, &z, err)))
        return st;
    int i = name ? ft_npz_find(&z, name) : -1;
    if (i < 0 && z.n == 1)
        i = 0;
    if (i < 0) {
        char list[1024];
        st = ft_err(err, FT_EGRAPH, "%s: no member %s%s (members: %s)", path, name ? name : "to choose", name ? ".npy" : "",
                    ft_npz_names(&z, list, sizeof list));
    } else {
        st = ft_npz_read(&z, i, out, err);
    }
    ft_npz_close(&z);
    return st;
}

ft_status ft_array_read_seq(const char *path, ft_npy **out, int *count, int *is_seq, ft_error *err)
{
    unsigned char *buf;
    size_t len;
    *out = NULL;
    *count = 0;
    *is_seq = 0;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    if (!ft_npz_is_npz(buf, len)) {
        free(buf);
        return FT_OK;
    }
    ft_npz z;
    if ((st = ft_npz_open_mem(path, buf, len, &z, err)))
        return st;
    /* members 0 ... n-1, each once, in any order */
    int *at = ft_calloc((size_t)(z.n ? z.n : 1), sizeof *at), ok = at != NULL;
    for (int i = 0; ok && i < z.n; i++)
        at[i] = -1;
    for (int i = 0; ok && i < z.n; i++) {
        const char *nm = z.e[i].name;
        char *end;
        long k = strtol(nm, &end, 10);
        ok = *nm >= '0' && *nm <= '9' && !*end && (k == 0 || *nm != '0') && k < z.n && at[k] < 0;
        if (ok)
            at[k] = i;
    }
    ft_npy *a = ok ? ft_calloc((size_t)(z.n ? z.n : 1), sizeof *a) : NULL;
    if (!at || (ok && !a))
        st = ft_err(err, FT_ERUNTIME, "out of memory");
    for (int k = 0; !st && a && k < z.n; k++)
        st = ft_npz_read(&z, at[k], &a[k], err);
    if (a && st) {
        for (int k = 0; k < z.n; k++)
            ft_npy_clear(&a[k]);
        free(a);
        a = NULL;
    }
    if (a) {
        *out = a;
        *count = z.n;
        *is_seq = 1;
    }
    free(at);
    ft_npz_close(&z);
    return st;
}

/* ---- sets of named arrays ---- */

void ft_arrays_free(ft_arrays *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->name[i]);
        free(a->where[i]);
        ft_npy_clear(&a->a[i]);
    }
    free(a->name);
    free(a->where);
    free(a->a);
    memset(a, 0, sizeof *a);
}

static ft_status arrays_add(ft_arrays *s, const char *name, const char *where, ft_npy *arr, ft_error *err)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name)) {
            ft_npy_clear(arr);
            return ft_err(err, FT_EGRAPH, "'%s' is found twice: in %s and in %s", name, s->where[i], where);
        }
    char **nn = ft_realloc(s->name, (size_t)(s->n + 1) * sizeof *nn);
    if (nn)
        s->name = nn;
    char **nw = ft_realloc(s->where, (size_t)(s->n + 1) * sizeof *nw);
    if (nw)
        s->where = nw;
    ft_npy *na = ft_realloc(s->a, (size_t)(s->n + 1) * sizeof *na);
    if (na)
        s->a = na;
    char *n1 = ft_strdup(name), *w1 = ft_strdup(where);
    if (!nn || !nw || !na || !n1 || !w1) {
        free(n1);
        free(w1);
        ft_npy_clear(arr);
        return ft_err(err, FT_ERUNTIME, "out of memory");
    }
    s->name[s->n] = n1;
    s->where[s->n] = w1;
    s->a[s->n++] = *arr;
    return FT_OK;
}

/* Every member of an .npz (or the one array of a .npy) at path. */
static ft_status arrays_file(ft_arrays *s, const char *path, const char *base, ft_error *err)
{
    unsigned char *buf;
    size_t len;
    ft_npy arr;
    ft_status st = ft_read_file(path, &buf, &len, err);
    if (st)
        return st;
    if (!ft_npz_is_npz(buf, len)) {
        st = parse_single(path, buf, len, &arr, err);
        free(buf);
        if (st)
            return st;
        char name[512];
        snprintf(name, sizeof name, "%s", base);
        size_t nl = strlen(name);
        if (nl > 4 && !strcmp(name + nl - 4, ".npy"))
            name[nl - 4] = 0;
        else if (nl > 3 && !strcmp(name + nl - 3, ".pb"))
            name[nl - 3] = 0;
        return arrays_add(s, name, path, &arr, err);
    }
    ft_npz z;
    if ((st = ft_npz_open_mem(path, buf, len, &z, err)))
        return st;
    for (int i = 0; i < z.n && !st; i++) {
        char where[1200];
        snprintf(where, sizeof where, "%s (member %s.npy)", path, z.e[i].name);
        if (!(st = ft_npz_read(&z, i, &arr, err)))
            st = arrays_add(s, z.e[i].name, where, &arr, err);
    }
    ft_npz_close(&z);
    return st;
}

int ft_is_array_file_name(const char *name)
{
    size_t l = strlen(name);
    if (name[0] == '.')
        return 0;
    return (l > 3 && !strcmp(name + l - 3, ".pb")) ||
           (l > 4 && (!strcmp(name + l - 4, ".npy") || !strcmp(name + l - 4, ".npz")));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static ft_status arrays_dir(ft_arrays *s, const char *dir, ft_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return ft_err(err, errno == ENOMEM ? FT_ERUNTIME : FT_EGRAPH, "%s: cannot open: %s", dir, strerror(errno));
    char **files = NULL;
    int nf = 0;
    ft_status st = FT_OK;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (!ft_is_array_file_name(de->d_name))
            continue;
        char **nfv = ft_realloc(files, (size_t)(nf + 1) * sizeof *nfv);
        if (!nfv || !(nfv[nf] = ft_strdup(de->d_name))) {
            files = nfv ? nfv : files;
            st = ft_err(err, FT_ERUNTIME, "out of memory");
            break;
        }
        files = nfv;
        nf++;
    }
    closedir(d);
    if (files)
        qsort(files, (size_t)nf, sizeof *files, cmp_str);
    for (int i = 0; i < nf && !st; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        st = arrays_file(s, path, files[i], err);
    }
    ft_free_strs(files, nf);
    if (!st && s->n == 0)
        st = ft_err(err, FT_EGRAPH, "%s: the folder holds no .npy, .npz or .pb file", dir);
    return st;
}

ft_status ft_arrays_load(const char *path, ft_arrays *out, ft_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return ft_err(err, FT_EGRAPH, "%s: cannot open: %s", path, strerror(errno));
    const char *slash = strrchr(path, '/');
    ft_status st = S_ISDIR(sb.st_mode) ? arrays_dir(out, path, err) : arrays_file(out, path, slash ? slash + 1 : path, err);
    if (st) {
        ft_arrays_free(out);
        return st;
    }
    /* sorted by name, so reports come in a stable order */
    for (int i = 1; i < out->n; i++)
        for (int j = i; j > 0 && strcmp(out->name[j - 1], out->name[j]) > 0; j--) {
            char *t = out->name[j];
            out->name[j] = out->name[j - 1], out->name[j - 1] = t;
            t = out->where[j];
            out->where[j] = out->where[j - 1], out->where[j - 1] = t;
            ft_npy a = out->a[j];
            out->a[j] = out->a[j - 1], out->a[j - 1] = a;
        }
    return FT_OK;
}
