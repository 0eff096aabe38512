/* The inputs' values and shapes known before the load (values.h). */
#include <stdlib.h>
#include <string.h>

#include "arrays.h"
#include "values.h"

/* Appends entry b (its input and origin copied) with array *a taken over
 * (a NULL: none); 0, or -1 when out of memory (*a then still the caller's). */
static int push(ft_values *v, ft_shape_bind b, ft_npy *a, int given)
{
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 8;
        ft_shape_bind *nb = ft_realloc(v->b, (size_t)nc * sizeof *nb);
        if (nb)
            v->b = nb;
        ft_npy *na = nb ? ft_realloc(v->a, (size_t)nc * sizeof *na) : NULL;
        if (na)
            v->a = na;
        unsigned char *ng = na ? ft_realloc(v->given, (size_t)nc) : NULL;
        if (!ng)
            return -1;
        v->given = ng;
        v->cap = nc;
    }
    char *input = ft_strdup(b.input), *origin = input ? ft_strdup(b.origin) : NULL;
    if (!origin) {
        free(input);
        return -1;
    }
    b.input = input;
    b.origin = origin;
    ft_npy *e = &v->a[v->n];
    memset(e, 0, sizeof *e);
    if (a) {
        *e = *a;
        memset(a, 0, sizeof *a);
        b.shape = e->shape;
        b.dtype = e->dtype;
        b.data = e->data;
        b.nbytes = e->nbytes;
    }
    v->b[v->n] = b;
    v->given[v->n++] = (unsigned char)given;
    return 0;
}

static ft_status oom(ft_error *err)
{
    return ft_err(err, FT_ERUNTIME, "out of memory");
}

ft_status ft_values_add_shape(ft_values *v, const char *input, const ft_shape *s, const char *origin, ft_error *err)
{
    return push(v, (ft_shape_bind){.input = input, .shape = *s, .origin = origin}, NULL, 0) ? oom(err) : FT_OK;
}

ft_status ft_values_add_array(ft_values *v, const char *input, const char *origin, ft_npy *a, ft_error *err)
{
    return push(v, (ft_shape_bind){.input = input, .origin = origin}, a, 0) ? oom(err) : FT_OK;
}

/* A sequence of count tensors a[0..count-1] (count -1: an empty optional),
 * taken over: the FT_BIND_SEQ entry, then one FT_BIND_ELEM per tensor. */
static ft_status push_seq(ft_values *v, const char *input, const char *path, ft_npy *a, int count, int given,
                          ft_error *err)
{
    ft_status st = FT_OK;
    if (push(v, (ft_shape_bind){.input = input, .origin = path, .kind = FT_BIND_SEQ, .count = count}, NULL, given))
        st = oom(err);
    for (int k = 0; k < count; k++) {
        if (!st && push(v, (ft_shape_bind){.input = input, .origin = path, .kind = FT_BIND_ELEM, .index = k}, &a[k], 0))
            st = oom(err);
        ft_npy_clear(&a[k]); /* empty once taken */
    }
    free(a);
    return st;
}

ft_status ft_values_read_pb(ft_values *v, const char *input, const char *path, int optional, ft_error *err)
{
    ft_npy *a = NULL;
    int count = 0;
    ft_status st = ft_array_read_values(path, optional, &a, &count, err);
    return st ? st : push_seq(v, input, path, a, count, 0, err);
}

ft_status ft_values_read(ft_values *v, const char *input, const char *path, ft_error *err)
{
    ft_npy *a;
    int count, is_seq;
    ft_status st = ft_array_read_seq(path, &a, &count, &is_seq, err);
    if (st)
        return st;
    if (is_seq && ((st = push_seq(v, input, path, a, count, 1, err)) || count == 0))
        return st; /* an empty sequence: no tensor to read */
    ft_npy arr;
    st = ft_array_read(path, input, &arr, err);
    if (st && is_seq) { /* several members: only a sequence */
        err->code = FT_OK;
        err->msg[0] = 0;
        return FT_OK;
    }
    if (st && strstr(err->msg, ": no member ")) {
        size_t l = strlen(err->msg);
        snprintf(err->msg + l, sizeof err->msg - l, "; a sequence input takes members 0.npy ... N-1.npy");
    }
    if (st)
        return st;
    if (push(v, (ft_shape_bind){.input = input, .origin = path}, &arr, 1)) {
        ft_npy_clear(&arr);
        return oom(err);
    }
    return FT_OK;
}

int ft_values_take(ft_values *v, const char *origin, ft_npy *out)
{
    for (int i = 0; i < v->n; i++)
        if (v->b[i].kind == FT_BIND_TENSOR && v->b[i].data && !strcmp(v->b[i].origin, origin)) {
            *out = v->a[i];
            memset(&v->a[i], 0, sizeof v->a[i]);
            v->b[i].data = NULL;
            v->b[i].nbytes = 0;
            return 0;
        }
    return -1;
}

void ft_values_load_opts(const ft_values *v, ft_load_opts *o)
{
    o->shapes = v->b;
    o->n_shapes = v->n;
}

/* The -i entry of input (given, of kind kind), or -1. */
static int given_entry(const ft_values *v, const char *input, int kind)
{
    for (int i = 0; i < v->n; i++)
        if (v->given[i] && (int)v->b[i].kind == kind && !strcmp(v->b[i].input, input))
            return i;
    return -1;
}

ft_status ft_values_apply(ft_values *v, ft_graph *g, ft_error *err)
{
    for (int i = 0; i < v->n; i++) {
        const ft_shape_bind *b = &v->b[i];
        if (!v->given[i] || (b->kind == FT_BIND_SEQ && given_entry(v, b->input, FT_BIND_TENSOR) >= 0))
            continue; /* not from -i, or a file that is both a sequence and an array: seen at its array */
        /* seq 1: the file is also a sequence; 2: only a sequence */
        int seq = b->kind == FT_BIND_SEQ ? 2 : given_entry(v, b->input, FT_BIND_SEQ) >= 0;
        int t = ft_graph_find(g, b->input);
        if ((t < 0 || !(g->tensors[t].flags & FT_TF_INPUT)) && seq)
            continue; /* a sequence or optional input: the loader gave its tensors their values */
        if (t >= 0 && seq == 2)
            return ft_err(err, FT_EGRAPH, "--input %s: %s holds a sequence (members 0.npy ...), but '%s' is a tensor input",
                          b->input, b->origin, b->input);
        /* the loader has checked that each -i names an input and has its shape */
        if (t < 0 || !(g->tensors[t].flags & FT_TF_INPUT))
            return ft_err(err, FT_EGRAPH, "--input %s=%s: '%s' is not an input of %s", b->input, b->origin, b->input,
                          g->file);
        ft_tensor *tt = &g->tensors[t];
        ft_npy *arr = &v->a[i];
        char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
        if (ft_npy_to_dtype(arr, tt->dtype) != 0)
            return ft_err(err, FT_EGRAPH, "--input %s: %s has dtype %s but input '%s' is declared %s", b->input, b->origin,
                          ft_dtype_name(arr->dtype), b->input, ft_dtype_name(tt->dtype));
        if (!ft_shape_eq(&arr->shape, &tt->shape))
            return ft_err(err, FT_EGRAPH, "--input %s: %s has shape %s but input '%s' is declared %s", b->input, b->origin,
                          ft_shape_str(&arr->shape, s1), b->input, ft_shape_str(&tt->shape, s2));
        ft_tensor_set_value(tt, arr->data, arr->nbytes);
        memset(arr, 0, sizeof *arr);
        v->b[i].data = NULL; /* the tensor's now */
        v->b[i].nbytes = 0;
        tt->source = "--input";
    }
    return FT_OK;
}

void ft_values_free(ft_values *v)
{
    for (int i = 0; i < v->n; i++) {
        free((char *)v->b[i].input);
        free((char *)v->b[i].origin);
        ft_npy_clear(&v->a[i]);
    }
    free(v->b);
    free(v->a);
    free(v->given);
    memset(v, 0, sizeof *v);
}
