/* Symbolic dims: the resolver behind dims.h. A name takes one value across
 * the whole graph; every binding (--dim, a shape binding of an input, a value
 * whose file fixes a tensor's shape) has the same authority, and two that
 * disagree are an error naming both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dims.h"

typedef struct known {
    char *name;
    int64_t value;
    char *why; /* "--dim batch=4", "-i x=a.npy has shape [2,3] (dim 0 'batch')" */
} known;

typedef struct decl {
    char *input;
    int rank;
    ft_symdim dims[FT_MAX_RANK]; /* names point into the caller's strings */
} decl;

struct ft_dimenv {
    const ft_load_opts *o;
    known *k;
    int nk, capk;
    char **names; /* every dim name the graph has shown, for messages */
    int nn, capn;
    char **inputs; /* every input resolved, for messages */
    int ni, capi;
    decl *d; /* ft_dimenv_declare */
    int nd, capd, nd_done, applied;
    unsigned char *shape_used; /* per opts->shapes */
    char **values; /* ft_dimenv_declare_value */
    int nv, capv;
};

static ft_status oom(ft_error *err) { return ft_err(err, FT_ERUNTIME, "out of memory resolving symbolic dims"); }

/* Stand-ins: primes, the two runs of an attempt taking alternate ones, so that
 * every name differs from every other and from itself in the other run.
 * Attempt 0 starts at 23 (past the small sizes models fix, below the
 * context limits of sequence models); 1 at 3 (for models with a small
 * upper limit); 2 at 101 (for a lower limit, such as many strided convs). */
int64_t ft_unbound_value(int k, int attempt, int run)
{
    static const int primes[] = {3,   5,   7,   11,  13,  17,  19,  23,  29,  31,  37,  41,  43,  47,  53,  59,
                                 61,  67,  71,  73,  79,  83,  89,  97,  101, 103, 107, 109, 113, 127, 131, 137,
                                 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227,
                                 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311, 313,
                                 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383, 389, 397, 401, 409, 419};
    static const int start[] = {7, 0, 24};
    int i = start[attempt < 0 || attempt > 2 ? 0 : attempt] + 2 * k + (run != 0);
    return i < (int)(sizeof primes / sizeof primes[0]) ? primes[i] : 1000 + 2 * i + (run != 0);
}

static int push_str(char ***v, int *n, int *cap, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s))
            return 0;
    char *c = ft_strdup(s);
    if (!c || ft_grow(v, cap, *n, sizeof **v, 8)) {
        free(c);
        return -1;
    }
    (*v)[(*n)++] = c;
    return 0;
}

ft_dimenv *ft_dimenv_new(const ft_load_opts *opts)
{
    ft_dimenv *e = ft_calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->o = opts;
    int ns = opts ? opts->n_shapes : 0;
    e->shape_used = ft_calloc((size_t)(ns ? ns : 1), 1);
    if (!e->shape_used) {
        free(e);
        return NULL;
    }
    return e;
}

void ft_dimenv_free(ft_dimenv *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->nk; i++) {
        free(e->k[i].name);
        free(e->k[i].why);
    }
    ft_free_strs(e->names, e->nn);
    ft_free_strs(e->inputs, e->ni);
    ft_free_strs(e->values, e->nv);
    for (int i = 0; i < e->nd; i++)
        free(e->d[i].input);
    free(e->k);
    free(e->d);
    free(e->shape_used);
    free(e);
}

/* "[batch,3,?]": a declared shape as written (? for an unnamed dim). */
static const char *sym_str(int rank, const ft_symdim *d, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && len < n - 1; i++) {
        if (d[i].value >= 0)
            len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "", (long long)d[i].value);
        else
            len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", d[i].name ? d[i].name : "?");
    }
    if (len < n - 1)
        snprintf(buf + len, n - len, "]");
    return buf;
}

static int find_known(const ft_dimenv *e, const char *name)
{
    for (int i = 0; i < e->nk; i++)
        if (!strcmp(e->k[i].name, name))
            return i;
    return -1;
}

/* Bind name = value (why says where from); a different earlier value is an
 * error "FILE: <earlier> but <this>". */
static ft_status bind(ft_dimenv *e, const char *file, const char *name, int64_t value, const char *why, ft_error *err)
{
    int i = find_known(e, name);
    if (i >= 0) {
        if (e->k[i].value != value)
            return ft_err(err, FT_EGRAPH, "%s: %s but %s", file, e->k[i].why, why);
        return FT_OK;
    }
    if (ft_grow(&e->k, &e->capk, e->nk, sizeof *e->k, 8))
        return oom(err);
    known *k = &e->k[e->nk];
    k->name = ft_strdup(name);
    k->why = ft_strdup(why);
    k->value = value;
    if (!k->name || !k->why) {
        free(k->name);
        free(k->why);
        return oom(err);
    }
    e->nk++;
    return FT_OK;
}

/* The --dim bindings, entered once before anything else. */
static ft_status bind_dims(ft_dimenv *e, const char *file, ft_error *err)
{
    if (e->applied)
        return FT_OK;
    e->applied = 1;
    for (int i = 0; e->o && i < e->o->n_dims; i++) {
        char why[1200];
        snprintf(why, sizeof why, "--dim %s=%lld", e->o->dims[i].name, (long long)e->o->dims[i].value);
        ft_status st = bind(e, file, e->o->dims[i].name, e->o->dims[i].value, why, err);
        if (st)
            return st;
    }
    return FT_OK;
}

static ft_status note_names(ft_dimenv *e, int rank, const ft_symdim *dims, ft_error *err)
{
    for (int i = 0; i < rank; i++)
        if (dims[i].value < 0 && dims[i].name && push_str(&e->names, &e->nn, &e->capn, dims[i].name))
            return oom(err);
    return FT_OK;
}

/* "-i x=a.npy" or "--shape x=2,3": how a shape binding was given. */
static const char *bind_desc(const ft_shape_bind *b, char *buf, size_t n)
{
    if (b->origin && !strncmp(b->origin, "--", 2)) {
        size_t len = (size_t)snprintf(buf, n, "%s %s=", b->origin, b->input);
        for (int i = 0; i < b->shape.rank && len < n - 24; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "," : "", (long long)b->shape.dims[i]);
    } else {
        snprintf(buf, n, "-i %s=%s", b->input, b->origin ? b->origin : "FILE");
    }
    return buf;
}

/* A concrete shape `s` (described by desc, e.g. "-i x=a.npy") for a tensor
 * declared dims[0..rank-1]: check the numbers, bind the names. */
static ft_status fix_shape(ft_dimenv *e, const char *file, const char *what, const char *desc, int rank,
                           const ft_symdim *dims, const ft_shape *s, ft_error *err)
{
    char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR * 2], has[FT_SHAPE_STR + 16] = "";
    if (strncmp(desc, "--", 2)) /* a file: its shape; --shape X=D0,D1 says it already */
        snprintf(has, sizeof has, " has shape %s", ft_shape_str(s, s1));
    int ok = s->rank == rank;
    for (int i = 0; i < rank && ok; i++)
        ok = dims[i].value < 0 || dims[i].value == s->dims[i];
    if (!ok)
        return ft_err(err, FT_EGRAPH, "%s: %s%s but %s is declared %s", file, desc, has, what,
                      sym_str(rank, dims, s2, sizeof s2));
    for (int i = 0; i < rank; i++) {
        if (dims[i].value >= 0 || !dims[i].name)
            continue;
        char why[1600];
        snprintf(why, sizeof why, "%s%s (dim %d '%s')", desc, has, i, dims[i].name);
        ft_status st = bind(e, file, dims[i].name, s->dims[i], why, err);
        if (st)
            return st;
    }
    return FT_OK;
}

/* Every shape binding of `input` (several must agree); *found says whether
 * there was one, *out is its shape. */
static ft_status apply_bindings(ft_dimenv *e, const char *file, const char *input, int rank, const ft_symdim *dims,
                                int *found, ft_shape *out, ft_error *err)
{
    char what[1100], desc[1200], first[1200];
    snprintf(what, sizeof what, "input '%s'", input);
    *found = 0;
    for (int i = 0; e->o && i < e->o->n_shapes; i++) {
        const ft_shape_bind *b = &e->o->shapes[i];
        if (strcmp(b->input, input) || b->kind != FT_BIND_TENSOR)
            continue;
        e->shape_used[i] = 1;
        bind_desc(b, desc, sizeof desc);
        if (*found && !ft_shape_eq(out, &b->shape)) {
            char s1[FT_SHAPE_STR], s2[FT_SHAPE_STR];
            int f1 = strncmp(first, "--", 2) != 0, f2 = strncmp(desc, "--", 2) != 0;
            return ft_err(err, FT_EGRAPH, "%s: %s%s%s but %s%s%s", file, first, f1 ? " has shape " : "",
                          f1 ? ft_shape_str(out, s1) : "", desc, f2 ? " has shape " : "", f2 ? ft_shape_str(&b->shape, s2) : "");
        }
        ft_status st = fix_shape(e, file, what, desc, rank, dims, &b->shape, err);
        if (st)
            return st;
        if (!*found)
            snprintf(first, sizeof first, "%s", desc);
        *found = 1;
        *out = b->shape;
    }
    return FT_OK;
}

ft_status ft_dimenv_declare(ft_dimenv *e, const char *input, int rank, const ft_symdim *dims, ft_error *err)
{
    if (rank < 0 || rank > FT_MAX_RANK)
        return ft_err(err, FT_EGRAPH, "input '%s': rank %d exceeds the maximum rank %d", input, rank, FT_MAX_RANK);
    if (ft_grow(&e->d, &e->capd, e->nd, sizeof *e->d, 8))
        return oom(err);
    decl *d = &e->d[e->nd];
    if (!(d->input = ft_strdup(input)))
        return oom(err);
    d->rank = rank;
    memcpy(d->dims, dims, (size_t)rank * sizeof *dims);
    e->nd++;
    return note_names(e, rank, dims, err);
}

/* The shape bindings of every declared input, so that a name fixed by a
 * later input's file is known to an earlier one. */
static ft_status unmatched_shape(ft_dimenv *e, const char *file, int i, ft_error *err);

ft_status ft_dimenv_declare_value(ft_dimenv *e, const char *input, ft_error *err)
{
    if (ft_grow(&e->values, &e->capv, e->nv, sizeof *e->values, 8) || !(e->values[e->nv] = ft_strdup(input)))
        return oom(err);
    e->nv++;
    return FT_OK;
}

/* A binding of a sequence or optional value (its elements, or a -i file read
 * both as a tensor and as a sequence, or any binding of an input declared
 * with ft_dimenv_declare_value): its reader's, not a shape here. */
static int passed_over(const ft_dimenv *e, int i)
{
    const ft_load_opts *o = e->o;
    for (int k = 0; k < e->nv; k++)
        if (!strcmp(e->values[k], o->shapes[i].input))
            return 1;
    if (o->shapes[i].kind != FT_BIND_TENSOR) { /* a sequence given for a tensor input: ft_bind_apply says so */
        for (int k = 0; k < e->nd; k++)
            if (!strcmp(e->d[k].input, o->shapes[i].input))
                return 1;
        return 0;
    }
    for (int k = 0; k < o->n_shapes; k++)
        if (o->shapes[k].kind == FT_BIND_SEQ && !strcmp(o->shapes[k].input, o->shapes[i].input))
            return 1;
    return 0;
}

static ft_status apply_declared(ft_dimenv *e, const char *file, ft_error *err)
{
    /* with every input declared, a binding of something else is reported first */
    for (int i = 0; e->nd && !e->nd_done && e->o && i < e->o->n_shapes; i++) {
        int found = passed_over(e, i);
        for (int k = 0; k < e->nd && !found; k++)
            found = !strcmp(e->d[k].input, e->o->shapes[i].input);
        for (int k = 0; k < e->nd && !found; k++)
            if (push_str(&e->inputs, &e->ni, &e->capi, e->d[k].input))
                return oom(err);
        if (!found)
            return unmatched_shape(e, file, i, err);
    }
    for (int i = e->nd_done; i < e->nd; i++) {
        int found;
        ft_shape s;
        ft_status st = apply_bindings(e, file, e->d[i].input, e->d[i].rank, e->d[i].dims, &found, &s, err);
        if (st)
            return st;
    }
    e->nd_done = e->nd;
    return FT_OK;
}

ft_status ft_dimenv_resolve(ft_dimenv *e, const char *file, const char *input, int rank, const ft_symdim *dims,
                            ft_shape *out, ft_error *err)
{
    ft_status st;
    if (rank < 0 || rank > FT_MAX_RANK)
        return ft_err(err, FT_EGRAPH, "%s: input '%s': rank %d exceeds the maximum rank %d", file, input, rank, FT_MAX_RANK);
    if ((st = bind_dims(e, file, err)) || (st = apply_declared(e, file, err)) || (st = note_names(e, rank, dims, err)))
        return st;
    if (push_str(&e->inputs, &e->ni, &e->capi, input))
        return oom(err);
    int found;
    if ((st = apply_bindings(e, file, input, rank, dims, &found, out, err)) || found)
        return st;
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i].value >= 0) {
            out->dims[i] = dims[i].value;
            continue;
        }
        int k = dims[i].name ? find_known(e, dims[i].name) : -1;
        if (k >= 0) {
            out->dims[i] = e->k[k].value;
            continue;
        }
        if (e->o && e->o->unbound) { /* info, convert: a stand-in size (graph.h) */
            ft_unbound *u = e->o->unbound;
            char synth[300];
            snprintf(synth, sizeof synth, "%s:dim%d", input, i);
            const char *name = dims[i].name ? dims[i].name : synth;
            if (u->n >= FT_MAX_UNBOUND)
                return ft_err(err, FT_EGRAPH, "%s: more than %d dims of inputs are not bound ('%s' and others): bind some "
                              "with --dim or --shape", file, FT_MAX_UNBOUND, name);
            snprintf(u->name[u->n], sizeof u->name[u->n], "%s", name);
            u->value[u->n] = ft_unbound_value(u->n, u->attempt, u->run);
            st = bind(e, file, name, u->value[u->n], "a stand-in size", err);
            if (st)
                return st;
            out->dims[i] = u->value[u->n++];
            continue;
        }
        if (dims[i].name)
            return ft_err(err, FT_EGRAPH,
                          "%s: input '%s' dim %d ('%s') is not known: pass --dim %s=N, --shape %s=D0,D1,... or a file with "
                          "-i %s=FILE",
                          file, input, i, dims[i].name, dims[i].name, input, input);
        return ft_err(err, FT_EGRAPH,
                      "%s: input '%s' dim %d (unnamed) is not known: pass --shape %s=D0,D1,... or a file with -i %s=FILE", file,
                      input, i, input, input);
    }
    return FT_OK;
}

ft_status ft_dimenv_fix(ft_dimenv *e, const char *file, const char *tensor, const char *origin, int rank,
                        const ft_symdim *dims, const ft_shape *shape, ft_error *err)
{
    ft_status st;
    if ((st = bind_dims(e, file, err)) || (st = note_names(e, rank, dims, err)))
        return st;
    char what[1100], desc[2200];
    snprintf(what, sizeof what, "tensor '%s'", tensor);
    snprintf(desc, sizeof desc, "tensor '%s' (%s)", tensor, origin);
    return fix_shape(e, file, what, desc, rank, dims, shape, err);
}

int ft_dimenv_known(ft_dimenv *e, const char *file, int rank, const ft_symdim *dims, ft_shape *out, ft_error *err)
{
    if (bind_dims(e, file, err) || apply_declared(e, file, err) || note_names(e, rank, dims, err))
        return -1;
    int unknown = 0;
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        int k = dims[i].value < 0 && dims[i].name ? find_known(e, dims[i].name) : -1;
        out->dims[i] = dims[i].value >= 0 ? dims[i].value : k >= 0 ? e->k[k].value : -1;
        unknown += out->dims[i] < 0;
    }
    return unknown;
}

static void quoted_list(char **v, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len < size - 64; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s'%s'", i ? ", " : "", v[i]);
}

static ft_status unmatched_shape(ft_dimenv *e, const char *file, int i, ft_error *err)
{
    char list[1024], desc[1200];
    quoted_list(e->inputs, e->ni, list, sizeof list);
    return ft_err(err, FT_EGRAPH, "%s: '%s' is not an input of %s (its inputs: %s)", bind_desc(&e->o->shapes[i], desc, sizeof desc),
                  e->o->shapes[i].input, file, e->ni ? list : "none");
}

ft_status ft_dimenv_finish(ft_dimenv *e, const char *file, ft_error *err)
{
    ft_status st = bind_dims(e, file, err);
    if (st)
        return st;
    char list[1024];
    for (int i = 0; e->o && i < e->o->n_shapes; i++)
        if (!e->shape_used[i] && !passed_over(e, i))
            return unmatched_shape(e, file, i, err);
    for (int i = 0; e->o && i < e->o->n_dims; i++) {
        int seen = 0;
        for (int k = 0; k < e->nn && !seen; k++)
            seen = !strcmp(e->names[k], e->o->dims[i].name);
        if (seen)
            continue;
        quoted_list(e->names, e->nn, list, sizeof list);
        if (e->nn)
            return ft_err(err, FT_EGRAPH, "--dim %s=%lld: %s has no dim named '%s' (its named dims: %s)", e->o->dims[i].name,
                          (long long)e->o->dims[i].value, file, e->o->dims[i].name, list);
        return ft_err(err, FT_EGRAPH, "--dim %s=%lld: %s has no named dims", e->o->dims[i].name,
                      (long long)e->o->dims[i].value, file);
    }
    return FT_OK;
}
