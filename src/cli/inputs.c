/* Graph inputs from the command line (inputs.h): --dim, --shape, -i files
 * read before the graph is loaded, --random-inputs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"

#define MAX_DIM ((int64_t)1 << 40) /* no dim can be larger: FT_MAX_TENSOR_BYTES */

#define usage(msg, n, ...) ft_fmt_rc(FT_EUSAGE, msg, n, __VA_ARGS__)

static int oom_msg(char *msg, size_t n)
{
    snprintf(msg, n, "out of memory reading the command line");
    return FT_ERUNTIME;
}

/* The argument of option opt as "NAME=REST": *name a copy of NAME (the
 * caller frees it) and *rest. 0, or the exit status with msg set: a usage
 * error naming form (what the option takes) when there is no '=' or no name,
 * or no REST when need_rest. */
static int split(const char *arg, const char *opt, const char *form, int need_rest, char **name, const char **rest,
                 char *msg, size_t n)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || (need_rest && !eq[1]))
        return usage(msg, n, "option %s: expected %s, got '%s'", opt, form, arg);
    *rest = eq + 1;
    *name = strndup(arg, (size_t)(eq - arg));
    return *name ? 0 : oom_msg(msg, n);
}

static int parse_dim(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!isdigit((unsigned char)*s) || *end || errno || x < 0 || x > MAX_DIM)
        return -1;
    *v = x;
    return 0;
}

/* Each option parser below has one way out: rc 0, or the status with msg
 * set, and name (NULL when split refused) freed unless kept. */

int ft_bind_dim_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *val = NULL;
    char *name = NULL;
    int64_t v = 0;
    int rc = split(arg, "--dim", "NAME=N", 0, &name, &val, msg, n), i = 0;
    if (!rc && parse_dim(val, &v))
        rc = usage(msg, n, "option --dim %s: '%s' is not an integer in [0, %lld]", arg, val, (long long)MAX_DIM);
    while (!rc && i < b->n_dims && strcmp(b->dims[i].name, name))
        i++;
    if (!rc && i < b->n_dims)
        rc = usage(msg, n, "option --dim: '%s' is given twice (--dim %s=%lld and --dim %s)", name, name,
                   (long long)b->dims[i].value, arg);
    ft_dim_bind *nd = rc ? NULL : ft_realloc(b->dims, (size_t)(b->n_dims + 1) * sizeof *nd);
    if (!rc && !nd)
        rc = oom_msg(msg, n);
    if (rc) {
        free(name);
        return rc;
    }
    b->dims = nd;
    b->dims[b->n_dims++] = (ft_dim_bind){name, v};
    return 0;
}

/* The dims D0,D1,... of --shape arg into s: 0, or the usage status with msg set. */
static int parse_shape(const char *arg, const char *val, ft_shape *s, char *msg, size_t n)
{
    char buf[64];
    for (const char *p = val; *val;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        int64_t v;
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), p);
        if (s->rank == FT_MAX_RANK)
            return usage(msg, n, "option --shape %s: more than %d dims", arg, FT_MAX_RANK);
        if (len >= 63 || parse_dim(buf, &v))
            return usage(msg, n, "option --shape %s: '%.*s' is not a dim (an integer in [0, %lld])", arg,
                         (int)(len < 63 ? len : 63), p, (long long)MAX_DIM);
        s->dims[s->rank++] = v;
        if (!c)
            break;
        p = c + 1;
    }
    return 0;
}

int ft_bind_shape_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *val = NULL;
    char *name = NULL;
    ft_shape s = {0};
    int rc = split(arg, "--shape", "INPUT=D0,D1,... (INPUT= for a scalar)", 0, &name, &val, msg, n), i = 0;
    if (!rc)
        rc = parse_shape(arg, val, &s, msg, n);
    while (!rc && i < b->vals.n && strcmp(b->vals.b[i].input, name))
        i++;
    if (!rc && i < b->vals.n)
        rc = usage(msg, n, "option --shape: input '%s' is given twice", name);
    ft_error err = {0};
    if (!rc && ft_values_add_shape(&b->vals, name, &s, "--shape", &err))
        rc = oom_msg(msg, n);
    free(name); /* the list keeps a copy */
    return rc;
}

int ft_bind_input_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *file = NULL;
    char *name = NULL, *fcopy = NULL;
    int rc = split(arg, "--input", "NAME=FILE", 1, &name, &file, msg, n), i = 0;
    while (!rc && i < b->n_in && strcmp(b->in_name[i], name))
        i++;
    if (!rc && i < b->n_in)
        rc = usage(msg, n, "option --input: input '%s' is given twice (-i %s=%s and -i %s)", name, name, b->in_file[i], arg);
    char **nn = rc ? NULL : ft_realloc(b->in_name, (size_t)(b->n_in + 1) * sizeof *nn);
    if (nn)
        b->in_name = nn;
    char **nf = nn ? ft_realloc(b->in_file, (size_t)(b->n_in + 1) * sizeof *nf) : NULL;
    if (nf)
        b->in_file = nf;
    if (!rc && !(fcopy = nf ? ft_strdup(file) : NULL))
        rc = oom_msg(msg, n);
    if (rc) {
        free(name);
        return rc;
    }
    b->in_name[b->n_in] = name;
    b->in_file[b->n_in++] = fcopy;
    return 0;
}

int ft_bind_random_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    b->random = 1;
    b->seed = 0;
    if (!arg)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || *arg == '-' || *arg == '+' || *arg == ' ')
        return usage(msg, n, "option --random-inputs: '%s' is not a seed (an integer in [0, 2^64-1])", arg);
    b->seed = v;
    return 0;
}

int ft_bind_range_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    char *end, *end2;
    errno = 0;
    double lo = strtod(arg, &end);
    double hi = *end == ',' ? strtod(end + 1, &end2) : 0;
    if (end == arg || *end != ',' || end2 == end + 1 || *end2 || errno || !isfinite(lo) || !isfinite(hi))
        return usage(msg, n, "option --random-range: expected LO,HI (two finite numbers), got '%s'", arg);
    if (!(lo < hi))
        return usage(msg, n, "option --random-range %s: LO must be less than HI", arg);
    b->have_range = 1;
    b->lo = lo;
    b->hi = hi;
    return 0;
}

ft_status ft_bind_read_files(ft_bindings *b, ft_error *err)
{
    if (b->read)
        return FT_OK;
    b->read = 1;
    for (int i = 0; i < b->n_in; i++) {
        ft_status st = ft_values_read(&b->vals, b->in_name[i], b->in_file[i], err);
        if (st) {
            ft_err_prefix(err, "--input %s", b->in_name[i]);
            return st;
        }
    }
    return FT_OK;
}

void ft_bind_load_opts(const ft_bindings *b, ft_load_opts *o)
{
    o->dims = b->dims;
    o->n_dims = b->n_dims;
}

void ft_random_range(ft_dtype dt, double *lo, double *hi)
{
    *lo = dt == FT_BOOL || ft_dtype_is_int(dt) ? 0 : -1;
    *hi = dt == FT_BOOL ? 2 : ft_dtype_is_int(dt) ? 10 : 1;
}

ft_status ft_bind_apply(ft_bindings *b, ft_graph *g, int require, ft_error *err)
{
    ft_status st = ft_values_apply(&b->vals, g, err);
    if (st)
        return st;
    /* input k (its place in the graph's "inputs") draws from seed + k */
    for (int i = 0; i < g->n_inputs && b->random; i++) {
        ft_tensor *t = &g->tensors[g->inputs[i]];
        if (t->value)
            continue;
        if (t->dtype == FT_STRING)
            return ft_err(err, FT_EGRAPH, "input '%s' is a string tensor: --random-inputs draws numbers only; pass --input "
                          "%s=FILE.npy (a NumPy array of dtype U or S)", t->name, t->name);
        size_t bytes = ft_tensor_bytes(t);
        void *v = ft_malloc(bytes ? bytes : 1);
        if (!v)
            return ft_err(err, FT_ERUNTIME, "input '%s': out of memory allocating %zu bytes for --random-inputs", t->name, bytes);
        double lo, hi;
        ft_random_range(t->dtype, &lo, &hi);
        if (b->have_range && t->dtype != FT_BOOL) {
            lo = b->lo;
            hi = b->hi;
        }
        int integral = t->dtype == FT_BOOL || ft_dtype_is_int(t->dtype);
        ft_init_values(v, t->dtype, ft_numel(&t->shape), integral ? 4 : 2, lo, hi, b->seed + (uint64_t)i);
        ft_tensor_set_value(t, v, bytes);
        t->source = "--random-inputs";
    }
    for (int i = 0; i < g->n_inputs && require; i++) {
        const ft_tensor *t = &g->tensors[g->inputs[i]];
        if (!t->value)
            return ft_err(err, FT_EGRAPH,
                          "%s: input '%s' (%s %s) has no value: pass --input %s=FILE.npy (or .npz), give it \"data\", "
                          "\"file\" or \"init\" in the graph, or use --random-inputs",
                          g->file, t->name, ft_dtype_name(t->dtype), ft_shape_str(&t->shape, (char[FT_SHAPE_STR]){0}), t->name);
    }
    return FT_OK;
}

void ft_bindings_free(ft_bindings *b)
{
    for (int i = 0; i < b->n_dims; i++)
        free((char *)b->dims[i].name);
    for (int i = 0; i < b->n_in; i++) {
        free(b->in_name[i]);
        free(b->in_file[i]);
    }
    free(b->dims);
    ft_values_free(&b->vals);
    free(b->in_name);
    free(b->in_file);
    memset(b, 0, sizeof *b);
}
