/* Graph inputs from the command line (inputs.h): --dim, --shape, -i files
 * read before the graph is loaded, --random-inputs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/npz.h"
#include "inputs.h"
#include "../pipeline/arrays.h"

#define MAX_DIM ((int64_t)1 << 40) /* no dim can be larger: FT_MAX_TENSOR_BYTES */
static const char shape_origin[] = "--shape"; /* the origin of --shape bindings (dims.c prints it) */

static int usage(char *msg, size_t n, const char *fmt, ...) FT_PRINTF(3, 4);
static int usage(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return FT_EUSAGE;
}

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

int ft_bind_dim_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *val;
    char *name;
    int rc = split(arg, "--dim", "NAME=N", 0, &name, &val, msg, n);
    if (rc)
        return rc;
    int64_t v;
    if (parse_dim(val, &v)) {
        free(name);
        return usage(msg, n, "option --dim %s: '%s' is not an integer in [0, %lld]", arg, val, (long long)MAX_DIM);
    }
    for (int i = 0; i < b->n_dims; i++)
        if (!strcmp(b->dims[i].name, name)) {
            rc = usage(msg, n, "option --dim: '%s' is given twice (--dim %s=%lld and --dim %s)", name, name,
                           (long long)b->dims[i].value, arg);
            free(name);
            return rc;
        }
    ft_dim_bind *nd = ft_realloc(b->dims, (size_t)(b->n_dims + 1) * sizeof *nd);
    if (!nd) {
        free(name);
        return oom_msg(msg, n);
    }
    b->dims = nd;
    b->dims[b->n_dims++] = (ft_dim_bind){name, v};
    return 0;
}

static int add_shape(ft_bindings *b, char *input, const ft_shape *s, const char *origin)
{
    ft_shape_bind *ns = ft_realloc(b->shapes, (size_t)(b->n_shapes + 1) * sizeof *ns);
    if (!ns)
        return -1;
    b->shapes = ns;
    b->shapes[b->n_shapes++] = (ft_shape_bind){.input = input, .shape = *s, .origin = origin};
    return 0;
}

int ft_bind_shape_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *val;
    char *name;
    int rc = split(arg, "--shape", "INPUT=D0,D1,... (INPUT= for a scalar)", 0, &name, &val, msg, n);
    if (rc)
        return rc;
    ft_shape s = {0};
    char buf[64];
    for (const char *p = val; *val;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        int64_t v;
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 63 ? len : 63), p);
        if (s.rank == FT_MAX_RANK || len >= 63 || parse_dim(buf, &v)) {
            free(name);
            if (s.rank == FT_MAX_RANK)
                return usage(msg, n, "option --shape %s: more than %d dims", arg, FT_MAX_RANK);
            return usage(msg, n, "option --shape %s: '%.*s' is not a dim (an integer in [0, %lld])", arg,
                         (int)(len < 63 ? len : 63), p, (long long)MAX_DIM);
        }
        s.dims[s.rank++] = v;
        if (!c)
            break;
        p = c + 1;
    }
    for (int i = 0; i < b->n_shapes; i++)
        if (!strcmp(b->shapes[i].input, name)) {
            free(name);
            return usage(msg, n, "option --shape: input '%s' is given twice", b->shapes[i].input);
        }
    if (add_shape(b, name, &s, shape_origin)) {
        free(name);
        return oom_msg(msg, n);
    }
    return 0;
}

int ft_bind_input_arg(ft_bindings *b, const char *arg, char *msg, size_t n)
{
    const char *file;
    char *name;
    int rc = split(arg, "--input", "NAME=FILE", 1, &name, &file, msg, n);
    if (rc)
        return rc;
    for (int i = 0; i < b->n_in; i++)
        if (!strcmp(b->in_name[i], name)) {
            rc = usage(msg, n, "option --input: input '%s' is given twice (-i %s=%s and -i %s)", name, name, b->in_file[i], arg);
            free(name);
            return rc;
        }
    char **nn = ft_realloc(b->in_name, (size_t)(b->n_in + 1) * sizeof *nn);
    if (nn)
        b->in_name = nn;
    char **nf = nn ? ft_realloc(b->in_file, (size_t)(b->n_in + 1) * sizeof *nf) : NULL;
    if (nf)
        b->in_file = nf;
    char *fcopy = nf ? ft_strdup(file) : NULL;
    if (!fcopy) {
        free(name);
        return oom_msg(msg, n);
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

/* -i file i as a sequence when it is an .npz of 0.npy ... N-1.npy: its
 * bindings FT_BIND_SEQ, then FT_BIND_ELEM per tensor. */
static ft_status read_seq(ft_bindings *b, int i, ft_error *err)
{
    ft_npy *a;
    int count, is_seq;
    ft_status st = ft_array_read_seq(b->in_file[i], &a, &count, &is_seq, err);
    if (st) {
        ft_err_prefix(err, "--input %s", b->in_name[i]);
        return st;
    }
    if (!is_seq)
        return FT_OK;
    b->in_seq[i] = 1;
    ft_npy *na = ft_realloc(b->seq_arr, (size_t)(b->n_seq_arr + count + 1) * sizeof *na);
    ft_shape_bind *ns = na ? ft_realloc(b->shapes, (size_t)(b->n_shapes + count + 1) * sizeof *ns) : NULL;
    if (na)
        b->seq_arr = na;
    if (ns)
        b->shapes = ns;
    if (!ns) {
        for (int k = 0; k < count; k++)
            ft_npy_clear(&a[k]);
        free(a);
        return ft_err(err, FT_ERUNTIME, "out of memory");
    }
    b->shapes[b->n_shapes++] = (ft_shape_bind){.input = b->in_name[i], .origin = b->in_file[i], .kind = FT_BIND_SEQ,
                                               .count = count};
    for (int k = 0; k < count; k++) {
        ft_npy *e = &b->seq_arr[b->n_seq_arr++];
        *e = a[k];
        b->shapes[b->n_shapes++] = (ft_shape_bind){.input = b->in_name[i], .shape = e->shape, .origin = b->in_file[i],
                                                   .dtype = e->dtype, .data = e->data, .nbytes = e->nbytes,
                                                   .kind = FT_BIND_ELEM, .index = k};
    }
    free(a);
    return FT_OK;
}

ft_status ft_bind_read_files(ft_bindings *b, ft_error *err)
{
    if (b->read)
        return FT_OK;
    b->in_arr = ft_calloc((size_t)(b->n_in ? b->n_in : 1), sizeof *b->in_arr);
    if (!b->in_arr)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    b->read = 1;
    if (!(b->in_seq = ft_calloc((size_t)(b->n_in ? b->n_in : 1), 1)))
        return ft_err(err, FT_ERUNTIME, "out of memory");
    for (int i = 0; i < b->n_in; i++) {
        ft_status st = read_seq(b, i, err);
        if (st)
            return st;
        if (b->in_seq[i] && b->shapes[b->n_shapes - 1].kind == FT_BIND_SEQ && b->shapes[b->n_shapes - 1].count == 0) {
            b->in_seq[i] = 2; /* an empty sequence: no tensor to read */
            continue;
        }
        st = ft_array_read(b->in_file[i], b->in_name[i], &b->in_arr[i], err);
        if (st && b->in_seq[i]) { /* several members: only a sequence */
            b->in_seq[i] = 2;
            err->code = FT_OK;
            err->msg[0] = 0;
            continue;
        }
        if (st && strstr(err->msg, ": no member ")) {
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l, "; a sequence input takes members 0.npy ... N-1.npy");
        }
        if (st) {
            ft_err_prefix(err, "--input %s", b->in_name[i]);
            return st;
        }
        if (add_shape(b, b->in_name[i], &b->in_arr[i].shape, b->in_file[i]))
            return ft_err(err, FT_ERUNTIME, "out of memory");
        /* the values too: a loader may need them at load time (ONNX parameters given as inputs) */
        ft_shape_bind *sb = &b->shapes[b->n_shapes - 1];
        sb->dtype = b->in_arr[i].dtype;
        sb->data = b->in_arr[i].data;
        sb->nbytes = b->in_arr[i].nbytes;
    }
    return FT_OK;
}

void ft_bind_load_opts(const ft_bindings *b, ft_load_opts *o)
{
    o->dims = b->dims;
    o->n_dims = b->n_dims;
    o->shapes = b->shapes;
    o->n_shapes = b->n_shapes;
}

void ft_random_range(ft_dtype dt, double *lo, double *hi)
{
    *lo = dt == FT_BOOL || ft_dtype_is_int(dt) ? 0 : -1;
    *hi = dt == FT_BOOL ? 2 : ft_dtype_is_int(dt) ? 10 : 1;
}

ft_status ft_bind_apply(ft_bindings *b, ft_graph *g, int require, ft_error *err)
{
    for (int i = 0; i < b->n_in && b->read; i++) {
        int t = ft_graph_find(g, b->in_name[i]);
        if ((t < 0 || !(g->tensors[t].flags & FT_TF_INPUT)) && b->in_seq[i])
            continue; /* a sequence or optional input: the loader gave its tensors their values */
        if (t >= 0 && b->in_seq[i] == 2)
            return ft_err(err, FT_EGRAPH, "--input %s: %s holds a sequence (members 0.npy ...), but '%s' is a tensor input",
                          b->in_name[i], b->in_file[i], b->in_name[i]);
        /* the loader has checked that each -i names an input and has its shape */
        if (t < 0 || !(g->tensors[t].flags & FT_TF_INPUT))
            return ft_err(err, FT_EGRAPH, "--input %s=%s: '%s' is not an input of %s", b->in_name[i], b->in_file[i],
                          b->in_name[i], g->file);
        ft_tensor *tt = &g->tensors[t];
        ft_npy *arr = &b->in_arr[i];
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_npy_to_dtype(arr, tt->dtype) != 0)
            return ft_err(err, FT_EGRAPH, "--input %s: %s has dtype %s but input '%s' is declared %s", b->in_name[i],
                          b->in_file[i], ft_dtype_name(arr->dtype), b->in_name[i], ft_dtype_name(tt->dtype));
        if (!ft_shape_eq(&arr->shape, &tt->shape))
            return ft_err(err, FT_EGRAPH, "--input %s: %s has shape %s but input '%s' is declared %s", b->in_name[i],
                          b->in_file[i], ft_shape_str(&arr->shape, s1), b->in_name[i], ft_shape_str(&tt->shape, s2));
        ft_tensor_set_value(tt, arr->data, arr->nbytes);
        arr->data = NULL;
        tt->source = "--input";
    }
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
    /* the -i shape bindings share in_name; the --shape ones own their input */
    for (int i = 0; i < b->n_shapes; i++)
        if (b->shapes[i].origin == shape_origin)
            free((char *)b->shapes[i].input);
    for (int i = 0; i < b->n_in; i++) {
        free(b->in_name[i]);
        free(b->in_file[i]);
        if (b->in_arr)
            ft_npy_clear(&b->in_arr[i]);
    }
    free(b->dims);
    free(b->shapes);
    free(b->in_name);
    free(b->in_file);
    free(b->in_arr);
    free(b->in_seq);
    for (int i = 0; i < b->n_seq_arr; i++)
        ft_npy_clear(&b->seq_arr[i]);
    free(b->seq_arr);
    memset(b, 0, sizeof *b);
}
