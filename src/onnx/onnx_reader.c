/* ONNX models in: ModelProto -> ft_graph.
 *
 * The model is unpacked with protobuf-c, checked (ir_version and default
 * domain opset within ONX_IR_* and ONX_OPSET_MAX, onnx_internal.h), its inputs' shapes fixed through the dims resolver
 * (dims.h), and its nodes imported in file order: load-time folding first
 * (onnx_fold.c), else the node's mapper (onnx_ops*.c, contract in
 * onnx_import.h), then inference of what was emitted so later nodes see
 * static shapes. What ftrun cannot run (an op, an attribute value, a dtype) is
 * collected and reported in one message before anything runs. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../graph/dims.h"
#include "onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

enum { MAX_UNSUP_LINES = 64 };

/* ---- the node loop ---- */

static int poisoned(onx_ctx *c, const char *name) { return ft_strmap_get(c->poisoned, name) >= 0; }

ft_status onx_poison_outputs(onx_ctx *c, const Onnx__NodeProto *np)
{
    for (size_t k = 0; k < np->n_output; k++)
        if (np->output[k] && *np->output[k] && ft_strmap_put(c->poisoned, np->output[k], 1))
            return onx_oom(c);
    return FT_OK;
}

/* The version of domain the model imports, or 0. */
static int domain_version(const Onnx__ModelProto *m, const char *domain)
{
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (m->opset_import[i]->domain && !strcmp(m->opset_import[i]->domain, domain))
            return m->opset_import[i]->has_version ? (int)m->opset_import[i]->version : 0;
    return 0;
}

static ft_status import_node(onx_ctx *c, const Onnx__NodeProto *np, int index)
{
    char defname[128];
    snprintf(defname, sizeof defname, "%.80s_%d", nz(np->op_type), index);
    onx_node n = {np->name && *np->name ? np->name : defname, nz(np->op_type), index, c->opset, (int)np->n_input,
                  (int)np->n_output, np};
    c->emitted_here = 0;
    c->unsup_flag = 0;
    c->last = FT_OK;
    /* another domain's op: mapped when MAPS names it DOMAIN.OP for the
     * version the model imports, else unsupported */
    const onx_op_map *dm = NULL;
    if (!is_default_domain(np->domain)) {
        char qual[FT_MAX_NAME + 64];
        snprintf(qual, sizeof qual, "%s.%s", np->domain, n.op_type);
        n.opset = domain_version(c->model, np->domain);
        dm = n.opset > 0 ? onx_find_map(qual, n.opset) : NULL;
    }
    if (!is_default_domain(np->domain) && !dm) {
        char key[300], nm[FT_MAX_NAME + 8];
        snprintf(key, sizeof key, "op %s of domain '%s' (ftrun maps the default ONNX domain and the ops of other domains "
                 "`ftrun ops --onnx` lists):", n.op_type, np->domain);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        ft_status st = onx_record(c, key, nm);
        return st == FT_EGRAPH ? onx_poison_outputs(c, np) : st;
    }
    int seq_k = -1; /* a sequence input of an op that does not take one */
    for (int k = 0; k < n.n_in; k++) {
        const char *in = np->input[k];
        if (!in || !*in)
            continue;
        if (poisoned(c, in))
            return onx_poison_outputs(c, np);
        if (onx_seq_get(c, in)) {
            if (!onx_seq_op(n.op_type) && seq_k < 0)
                seq_k = k;
            continue;
        }
        int t = onx_resolve(c, in);
        if (t == -2)
            return c->last;
        if (t < 0)
            return onx_error(c, &n, FT_EGRAPH, "input %d '%s' is not a graph input, an initializer or the output of an "
                             "earlier node", k, in);
    }
    if (c->opset == 0 && !dm)
        return onx_error(c, &n, FT_EGRAPH, "the model imports no version of the default ONNX domain");
    const char *why;
    if (dm)
        ; /* no load-time folding of other domains' ops */
    else if (ft_onnx_refused(n.op_type, &why)) {
        char key[300], nm[FT_MAX_NAME + 8];
        snprintf(key, sizeof key, "op %s (%s):", n.op_type, why);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        ft_status st = onx_record(c, key, nm);
        return st == FT_EGRAPH ? onx_poison_outputs(c, np) : st;
    }
    if (seq_k == 0 && n.n_in == 1 && !strcmp(n.op_type, "Identity"))
        return onx_seq_identity(c, &n);
    if (seq_k >= 0) {
        const onx_seq *sq = onx_seq_get(c, np->input[seq_k]);
        ft_status st = onx_unsupported(c, &n, "input %d ('%s') is %s, which ftrun resolves at load time and passes "
                                       "only to the sequence and optional ops", seq_k, np->input[seq_k],
                                       sq->optional ? "an optional value" : "a sequence");
        return st == FT_EGRAPH ? onx_poison_outputs(c, np) : st;
    }
    ft_status st = FT_OK;
    int folded = dm ? 0 : ft_onnx_fold(c, &n, &st);
    if (folded < 0)
        return c->unsup_flag && st == FT_EGRAPH ? onx_poison_outputs(c, np) : st;
    if (folded)
        return FT_OK;
    const onx_op_map *m = dm ? dm : onx_find_map(n.op_type, n.opset);
    if (!m) {
        char key[300], nm[FT_MAX_NAME + 8];
        const onx_op_map *later = onx_find_map(n.op_type, ONX_OPSET_MAX);
        if (later && later->since > n.opset) /* an older form of the op (legacy attributes) */
            snprintf(key, sizeof key, "op %s at opset %d is not supported (ftrun reads it from opset %d):", n.op_type, n.opset,
                     later->since);
        else
            snprintf(key, sizeof key, "op %s (opset %d) is not supported:", n.op_type, n.opset);
        snprintf(nm, sizeof nm, "'%s'", n.name);
        st = onx_record(c, key, nm);
        return st == FT_EGRAPH ? onx_poison_outputs(c, np) : st;
    }
    c->err->msg[0] = 0;
    st = m->map(c, &n);
    if (c->last == FT_ERUNTIME) /* out of memory, even where a mapper took it for an absent output */
        return c->last;
    if (st && !c->unsup_flag && !c->err->msg[0]) /* a mapper that failed without saying why */
        st = onx_error(c, &n, FT_EGRAPH, "cannot be imported with %d inputs and %d outputs", n.n_in, n.n_out);
    if (st && c->unsup_flag && st == FT_EGRAPH) {
        c->pending = c->n_nodes; /* what it emitted is never inferred: the import fails at the end */
        return onx_poison_outputs(c, np);
    }
    if (st)
        return st;
    if ((st = onx_infer_pending(c)))
        return st;
    for (int k = 0; k < n.n_out; k++)
        if (np->output[k] && *np->output[k] && ft_strmap_get(c->names, np->output[k]) < 0 &&
            ft_strmap_get(c->g->tmap, np->output[k]) < 0 && !onx_seq_get(c, np->output[k]))
            return onx_error(c, &n, FT_EGRAPH, "output %d '%s' is not produced by the import of this op", k, np->output[k]);
    return FT_OK;
}

static ft_status import_nodes(onx_ctx *c, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_node; i++) {
        ft_status st = import_node(c, gp->node[i], (int)i);
        if (st)
            return st;
    }
    return FT_OK;
}

ft_status onx_import_body(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *branch)
{
    for (size_t i = 0; i < branch->n_initializer; i++) {
        if (ft_strmap_get(c->names, nz(branch->initializer[i]->name)) >= 0)
            continue;
        char what[FT_MAX_NAME + 64];
        snprintf(what, sizeof what, "initializer '%.1000s' of a branch of node '%.200s'", nz(branch->initializer[i]->name), n->name);
        ft_npy a;
        ft_status st = ft_onnx_tensor_decode(branch->initializer[i], c->file, what, c->g->dir, c->opts->allow_external, &a, c->err);
        if (st)
            return c->last = st;
        int t = onx_add_const(c, nz(branch->initializer[i]->name), &a, "initializer");
        free(a.data);
        if (t < 0 || onx_bind(c, nz(branch->initializer[i]->name), t) < 0)
            return onx_oom(c);
    }
    return import_nodes(c, branch);
}

/* The branch's outputs become n's (its initializers still in scope). */
static ft_status branch_outputs(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *branch)
{
    if ((int)branch->n_output != n->n_out)
        return onx_error(c, n, FT_EGRAPH, "the branch taken has %zu outputs; the node has %d", branch->n_output, n->n_out);
    ft_status st = FT_OK;
    for (int k = 0; k < n->n_out && !st; k++) {
        const onx_seq *sq = onx_seq_get(c, nz(branch->output[k]->name));
        if (sq) { /* a sequence the branch made: the node's output is the same list */
            if (n->pb->output[k] && *n->pb->output[k] &&
                onx_seq_put(c, n->pb->output[k], sq->t, sq->n, sq->dt, sq->optional))
                return onx_oom(c);
            continue;
        }
        int t = onx_resolve(c, nz(branch->output[k]->name));
        if (t == -2)
            return c->last;
        if (t < 0)
            return onx_error(c, n, FT_EGRAPH, "branch output '%s' is not produced in the branch", nz(branch->output[k]->name));
        st = onx_alias(c, n, k, t);
    }
    return st;
}

ft_status onx_import_branch(onx_ctx *c, const onx_node *n, const Onnx__GraphProto *branch)
{
    onx_scope sc = {0}; /* the branch's initializers are its own, the outer values seen again after it */
    ft_status st = onx_scope_enter(c, &sc, branch);
    if (!st)
        st = onx_import_body(c, n, branch);
    if (!st && c->n_unsup) /* the branch holds something unsupported: so do the node's outputs */
        st = onx_poison_outputs(c, n->pb);
    else if (!st)
        st = branch_outputs(c, n, branch);
    ft_status ls = onx_scope_leave(c, &sc);
    onx_scope_free(&sc);
    return st ? st : ls;
}

/* ---- graph inputs and outputs ---- */

/* The declared dims of an input's shape (at most FT_MAX_RANK): numbers,
 * dim_param names, or unnamed. */
static void input_symdims(const Onnx__TensorShapeProto *sp, ft_symdim *d)
{
    for (size_t i = 0; i < sp->n_dim && i < FT_MAX_RANK; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sp->dim[i];
        d[i].value = -1;
        d[i].name = NULL;
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0)
            d[i].value = dm->dim_value;
        else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param && *dm->dim_param)
            d[i].name = dm->dim_param;
    }
}

/* Every input declared to the resolver first, so that a file given for a
 * later input binds the names of an earlier one (dims.h). */
static ft_status declare_inputs(onx_ctx *c, ft_dimenv *env, const Onnx__GraphProto *gp)
{
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const Onnx__TypeProto *tp = vi->type;
        if (tp && ft_strmap_get(c->inits, nz(vi->name)) < 0 && (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
                                                             tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)) {
            ft_status st = ft_dimenv_declare_value(env, nz(vi->name), c->err);
            if (st)
                return st;
            continue;
        }
        if (ft_strmap_get(c->inits, nz(vi->name)) >= 0 || !tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !tp->tensor_type || !tp->tensor_type->shape || tp->tensor_type->shape->n_dim > FT_MAX_RANK)
            continue; /* import_input reports what is wrong with them */
        ft_symdim d[FT_MAX_RANK];
        input_symdims(tp->tensor_type->shape, d);
        ft_status st = ft_dimenv_declare(env, nz(vi->name), (int)tp->tensor_type->shape->n_dim, d, c->err);
        if (st)
            return st;
    }
    return FT_OK;
}

/* Append tensor t to the graph's list v (inputs or outputs, *n long). */
static ft_status push_tensor(onx_ctx *c, int **v, int *n, int t)
{
    int *nv = ft_realloc(*v, (size_t)(*n + 1) * sizeof *nv);
    if (!nv)
        return onx_oom(c);
    *v = nv;
    nv[(*n)++] = t;
    return FT_OK;
}

int onx_input_value(onx_ctx *c, ft_tensor *ft, const ft_shape_bind *b)
{
    if (!(ft->value = ft_malloc(b->nbytes ? b->nbytes : 1)))
        return -1;
    memcpy(ft->value, b->data, b->nbytes);
    ft->value_bytes = b->nbytes;
    ft->flags |= FT_TF_VALUE;
    ft->source = "--input";
    return 0;
}

static ft_status import_input(onx_ctx *c, ft_dimenv *env, const Onnx__ValueInfoProto *vi)
{
    const char *name = nz(vi->name);
    const Onnx__TypeProto *tp = vi->type;
    if (tp && (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE || tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE))
        return onx_seq_input(c, tp, name);
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' is not a tensor, a sequence or an optional value (map graph "
                      "inputs are not supported)",
                      c->file, name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ft_dtype dt;
    if (ft_onnx_dtype(tt->elem_type, &dt)) {
        char line[FT_MAX_NAME + 200];
        snprintf(line, sizeof line, "input '%s' has element type %s, which ftrun does not support", name,
                 ft_onnx_type_name(tt->elem_type));
        ft_status st = onx_record(c, NULL, line);
        if (st == FT_EGRAPH && ft_strmap_put(c->poisoned, name, 1))
            return onx_oom(c);
        return st == FT_EGRAPH ? FT_OK : st;
    }
    ft_shape s = {0};
    if (!tt->shape) {
        int found = 0;
        for (int i = 0; i < c->opts->n_shapes; i++)
            if (!strcmp(c->opts->shapes[i].input, name)) {
                s = c->opts->shapes[i].shape;
                found = 1;
            }
        if (!found)
            return ft_err(c->err, FT_EGRAPH, "%s: input '%s' has no shape in the model: pass --shape %s=D0,D1,... or a "
                          "file with -i %s=FILE", c->file, name, name, name);
        ft_symdim any[FT_MAX_RANK]; /* every dim unnamed: the bindings give them (and agree) */
        for (int i = 0; i < s.rank; i++)
            any[i] = (ft_symdim){-1, NULL};
        ft_status st = ft_dimenv_resolve(env, c->file, name, s.rank, any, &s, c->err);
        if (st)
            return st;
    } else {
        const Onnx__TensorShapeProto *sp = tt->shape;
        if (sp->n_dim > FT_MAX_RANK)
            return ft_err(c->err, FT_EGRAPH, "%s: input '%s' has rank %zu (the limit is %d)", c->file, name, sp->n_dim,
                          FT_MAX_RANK);
        ft_symdim d[FT_MAX_RANK];
        input_symdims(sp, d);
        ft_status st = ft_dimenv_resolve(env, c->file, name, (int)sp->n_dim, d, &s, c->err);
        if (st)
            return st;
    }
    int t = onx_add_tensor(c, name);
    if (t < 0 || onx_bind(c, name, t) < 0)
        return onx_oom(c);
    ft_tensor *ft = &c->g->tensors[t];
    ft->dtype = dt;
    ft->shape = s;
    ft->flags = FT_TF_DECLARED | FT_TF_INPUT | FT_TF_INFERRED;
    for (int i = 0; i < c->opts->n_shapes; i++) {
        const ft_shape_bind *b = &c->opts->shapes[i];
        if (strcmp(b->input, name) || !b->data || b->dtype != dt || !ft_shape_eq(&b->shape, &s))
            continue;
        /* the value given with -i: nodes that need this input as a parameter may read it at load time */
        if (onx_input_value(c, ft, b))
            return onx_oom(c);
    }
    uint64_t numel, bytes;
    if (ft_shape_numel(&s, &numel) || ft_mul_overflow(numel, ft_dtype_size(dt), &bytes) || bytes > FT_MAX_TENSOR_BYTES)
        return ft_err(c->err, FT_EGRAPH, "%s: input '%s' of shape %s is too large (limit %llu bytes)", c->file, name,
                      ft_shape_str(&s, (char[FT_SHAPE_STR]){0}), (unsigned long long)FT_MAX_TENSOR_BYTES);
    return onx_graph_input(c, t);
}

ft_status onx_graph_output(onx_ctx *c, int t, const char *name, int index)
{
    ft_tensor *tt = &c->g->tensors[t];
    int direct = tt->producer >= 0 && !strcmp(tt->name, name) && !(tt->flags & FT_TF_OUTPUT);
    if (!direct) {
        Onnx__NodeProto np = ONNX__NODE_PROTO__INIT;
        char *ins[1] = {(char *)name}, nm[FT_MAX_NAME + 16];
        snprintf(nm, sizeof nm, "output_%d", index);
        np.n_input = 1;
        np.input = ins;
        onx_node n = {nm, "Identity", -1, c->opset, 1, 0, &np};
        c->emitted_here = 0;
        char oname[FT_MAX_NAME + 16];
        snprintf(oname, sizeof oname, "%s", name);
        /* the output's own name, or output_<index> when a tensor has it;
         * a failure here is a failed allocation, not a second try */
        int o = onx_add_tensor(c, ft_strmap_get(c->g->tmap, oname) >= 0 ? nm : oname);
        if (o < 0)
            return onx_oom(c);
        int in[1] = {t}, out[1] = {o};
        if (!onx_emit(c, &n, FT_OP_IDENTITY, in, 1, out, 1))
            return c->last;
        ft_status st = onx_infer_pending(c);
        if (st)
            return st;
        t = o;
        tt = &c->g->tensors[t];
    }
    tt->flags |= FT_TF_OUTPUT;
    return push_tensor(c, &c->g->outputs, &c->g->n_outputs, t);
}

ft_status onx_graph_input(onx_ctx *c, int t) { return push_tensor(c, &c->g->inputs, &c->g->n_inputs, t); }

/* A graph output must be a tensor a node produces under the output's name;
 * anything else (an input, a constant, an alias, a value output twice) is
 * copied by an identity node into a tensor of that name. A sequence or
 * optional output is its tensors (onnx_seq_io.c). */
static ft_status import_output(onx_ctx *c, const Onnx__ValueInfoProto *vi, int index)
{
    const char *name = nz(vi->name);
    if (poisoned(c, name))
        return FT_OK;
    if (onx_seq_get(c, name))
        return onx_seq_output(c, vi, index);
    if (vi->type && vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
        vi->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
        char line[FT_MAX_NAME + 128];
        snprintf(line, sizeof line, "output '%.1024s' is a %s value the graph makes as a tensor", name,
                 vi->type->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE ? "map" : "sequence or optional");
        ft_status st = onx_record(c, NULL, line);
        return st == FT_EGRAPH ? FT_OK : st;
    }
    int t = onx_resolve(c, name);
    if (t == -2)
        return c->last;
    if (t < 0)
        return ft_err(c->err, FT_EGRAPH, "%s: output '%s' is not produced by any node, initializer or input", c->file, name);
    if (c->g->groups && onx_group(c, name, FT_GROUP_TENSOR, c->g->n_outputs, 1))
        return onx_oom(c);
    return onx_graph_output(c, t, name, index);
}

/* ---- the model ---- */

/* Where a protobuf stops making sense, for the message about a file that
 * protobuf-c refused: walks the top-level fields of a ModelProto. */
static void diagnose(const unsigned char *b, size_t n, char *why, size_t wsz)
{
    size_t p = 0;
    while (p < n) {
        size_t start = p;
        uint64_t tag = 0, v = 0;
        int sh = 0;
        while (p < n && sh < 64) {
            tag |= (uint64_t)(b[p] & 0x7f) << sh;
            sh += 7;
            if (!(b[p++] & 0x80))
                break;
        }
        if (p >= n && (b[p - 1] & 0x80)) {
            snprintf(why, wsz, "truncated: a field tag at byte %zu runs past the end of the file (%zu bytes)", start, n);
            return;
        }
        unsigned wt = (unsigned)(tag & 7), field = (unsigned)(tag >> 3);
        if (field == 0 || wt == 3 || wt == 4 || wt > 5) {
            snprintf(why, wsz, "corrupt: invalid field tag 0x%llx at byte %zu", (unsigned long long)tag, start);
            return;
        }
        if (wt == 0) {
            while (p < n && (b[p] & 0x80))
                p++;
            if (p >= n) {
                snprintf(why, wsz, "truncated: field %u at byte %zu runs past the end of the file (%zu bytes)", field, start, n);
                return;
            }
            p++;
        } else if (wt == 1 || wt == 5) {
            size_t need = wt == 1 ? 8 : 4;
            if (n - p < need) {
                snprintf(why, wsz, "truncated: field %u at byte %zu runs past the end of the file (%zu bytes)", field, start, n);
                return;
            }
            p += need;
        } else {
            sh = 0;
            while (p < n && sh < 64) {
                v |= (uint64_t)(b[p] & 0x7f) << sh;
                sh += 7;
                if (!(b[p++] & 0x80))
                    break;
            }
            if (v > n - p) {
                snprintf(why, wsz, "truncated: field %u%s at byte %zu declares %llu bytes but %zu remain in the file", field,
                         field == 7 ? " (the graph)" : "", start, (unsigned long long)v, n - p);
                return;
            }
            p += v;
        }
    }
    snprintf(why, wsz, "malformed (a nested message is corrupt)");
}

static ft_status check_model(onx_ctx *c)
{
    const Onnx__ModelProto *m = c->model;
    if (!m->has_ir_version)
        return ft_err(c->err, FT_EGRAPH, "%s: the model has no ir_version", c->file);
    if (m->ir_version < ONX_IR_MIN || m->ir_version > ONX_IR_MAX)
        return ft_err(c->err, FT_EGRAPH, "%s: ir_version %lld is not supported (ftrun reads ir_version %d to %d)", c->file,
                      (long long)m->ir_version, ONX_IR_MIN, ONX_IR_MAX);
    c->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++)
        if (is_default_domain(m->opset_import[i]->domain))
            c->opset = m->opset_import[i]->has_version ? (int)m->opset_import[i]->version : -1;
    if (c->opset < 0 && m->n_opset_import == 0)
        return ft_err(c->err, FT_EGRAPH, "%s: the model imports no version of the default ONNX domain", c->file);
    /* only other domains: their nodes are listed as unsupported, a default-domain node is an error */
    if (c->opset < 0)
        c->opset = 0;
    else if (c->opset < 1 || c->opset > ONX_OPSET_MAX)
        return ft_err(c->err, FT_EGRAPH, "%s: opset %d of the default domain is not supported (ftrun reads opsets 1 to %d)",
                      c->file, c->opset, ONX_OPSET_MAX);
    if (!m->graph)
        return ft_err(c->err, FT_EGRAPH, "%s: the model has no graph", c->file);
    if (m->graph->n_sparse_initializer)
        return ft_err(c->err, FT_EGRAPH, "%s: sparse initializers are not supported", c->file);
    return FT_OK;
}

static ft_status unsupported_message(onx_ctx *c)
{
    size_t cap = 512, len = 0;
    for (int i = 0; i < c->n_unsup; i++)
        cap += strlen(c->unsup[i].text) + (c->unsup[i].key ? strlen(c->unsup[i].key) : 0) + 8;
    char *msg = ft_malloc(cap);
    if (!msg)
        return onx_oom(c);
    len += (size_t)snprintf(msg, cap, "%s: the model uses %d thing%s ftrun does not support (nothing was run):", c->file,
                            c->n_unsup, c->n_unsup == 1 ? "" : "s");
    for (int i = 0; i < c->n_unsup && i < MAX_UNSUP_LINES; i++)
        len += (size_t)snprintf(msg + len, cap - len, "\n  %s%s%s", c->unsup[i].key ? c->unsup[i].key : "",
                                c->unsup[i].key ? " nodes " : "", c->unsup[i].text);
    if (c->n_unsup > MAX_UNSUP_LINES)
        snprintf(msg + len, cap - len, "\n  ... and %d more", c->n_unsup - MAX_UNSUP_LINES);
    ft_status st = ft_err(c->err, FT_EGRAPH, "%s", msg); /* ft_error holds 2 KiB: the head of a long list */
    free(msg);
    return st;
}

/* Drop tensors nothing reads, produces or lists (initializers and folded
 * values used only at load time), keeping indices dense. */
static ft_status compact(onx_ctx *c)
{
    ft_graph *g = c->g;
    int *used = ft_calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *used);
    if (!used)
        return onx_oom(c);
    for (int k = 0; k < g->n_nodes; k++) {
        for (int i = 0; i < g->nodes[k].n_in; i++)
            if (g->nodes[k].in[i] >= 0)
                used[g->nodes[k].in[i]] = 1;
        for (int i = 0; i < g->nodes[k].n_out; i++)
            used[g->nodes[k].out[i]] = 1;
        if (g->nodes[k].guard)
            used[g->nodes[k].guard - 1] = 1;
    }
    for (int i = 0; i < g->n_inputs; i++)
        used[g->inputs[i]] = 1;
    for (int i = 0; i < g->n_outputs; i++)
        used[g->outputs[i]] = 1;
    struct ft_strmap *tm = ft_strmap_new();
    if (!tm) {
        free(used);
        return onx_oom(c);
    }
    int n = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        if (!used[i]) {
            free(g->tensors[i].name);
            free(g->tensors[i].value);
            used[i] = -1;
            continue;
        }
        g->tensors[n] = g->tensors[i];
        used[i] = n;
        if (ft_strmap_put(tm, g->tensors[n].name, n)) {
            /* keep the graph freeable: the rest stays as it was */
            for (int j = i + 1; j < g->n_tensors; j++)
                g->tensors[++n] = g->tensors[j];
            g->n_tensors = n + 1;
            ft_strmap_free(tm);
            free(used);
            return onx_oom(c);
        }
        n++;
    }
    g->n_tensors = n;
    for (int k = 0; k < g->n_nodes; k++) {
        for (int i = 0; i < g->nodes[k].n_in; i++)
            if (g->nodes[k].in[i] >= 0)
                g->nodes[k].in[i] = used[g->nodes[k].in[i]];
        for (int i = 0; i < g->nodes[k].n_out; i++)
            g->nodes[k].out[i] = used[g->nodes[k].out[i]];
        if (g->nodes[k].guard)
            g->nodes[k].guard = used[g->nodes[k].guard - 1] + 1;
    }
    for (int i = 0; i < g->n_inputs; i++)
        g->inputs[i] = used[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++)
        g->outputs[i] = used[g->outputs[i]];
    ft_strmap_free(g->tmap);
    g->tmap = tm;
    free(used);
    return FT_OK;
}

static ft_status describe(onx_ctx *c)
{
    const Onnx__ModelProto *m = c->model;
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "ONNX model, ir_version %lld, opset %d", (long long)m->ir_version, c->opset);
    for (size_t i = 0; i < m->n_opset_import && len < sizeof buf; i++)
        if (!is_default_domain(m->opset_import[i]->domain))
            len += (size_t)snprintf(buf + len, sizeof buf - len, ", %s opset %lld", m->opset_import[i]->domain,
                                    (long long)m->opset_import[i]->version);
    if (m->producer_name && *m->producer_name && len < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "; producer %s%s%s", m->producer_name,
                                m->producer_version && *m->producer_version ? " " : "", nz(m->producer_version));
    if (len < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "; %d ONNX nodes, %d folded at load time", (int)m->graph->n_node,
                                c->n_folded);
    for (int i = 0; i < c->n_fold_kinds && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %d", i ? ", " : " (", c->fold_names[i], c->fold_counts[i]);
    if (c->n_fold_kinds && len < sizeof buf)
        snprintf(buf + len, sizeof buf - len, ")");
    return (c->g->about = ft_strdup(buf)) ? FT_OK : onx_oom(c);
}

static ft_status import_model(onx_ctx *c)
{
    ft_status st = check_model(c);
    if (st)
        return st;
    const Onnx__GraphProto *gp = c->model->graph;
    c->init = gp->initializer;
    if (!(c->init_t = ft_malloc(gp->n_initializer * sizeof *c->init_t)))
        return onx_oom(c);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        c->init_t[i] = -1;
        if (ft_strmap_put(c->inits, nz(gp->initializer[i]->name), (int)i))
            return onx_oom(c);
    }
    for (size_t i = 0; i < gp->n_output; i++)
        if (ft_strmap_put(c->outnames, nz(gp->output[i]->name), (int)i))
            return onx_oom(c);
    ft_dimenv *env = ft_dimenv_new(c->opts);
    if (!env)
        return onx_oom(c);
    st = declare_inputs(c, env, gp);
    for (size_t i = 0; i < gp->n_input && !st; i++)
        if (ft_strmap_get(c->inits, nz(gp->input[i]->name)) < 0) /* an input with an initializer is a weight */
            st = import_input(c, env, gp->input[i]);
    if (!st)
        st = ft_dimenv_finish(env, c->file, c->err);
    ft_dimenv_free(env);
    if (!st)
        st = import_nodes(c, gp);
    int grouped = 0; /* a sequence or optional output: every output gets its group (graph.h) */
    for (size_t i = 0; i < gp->n_output && !st; i++)
        grouped |= onx_seq_get(c, nz(gp->output[i]->name)) != NULL;
    if (grouped && !st && !(c->g->groups = ft_calloc(gp->n_output, sizeof *c->g->groups)))
        st = onx_oom(c);
    for (size_t i = 0; i < gp->n_output && !st; i++)
        st = import_output(c, gp->output[i], (int)i);
    if (!st && c->n_unsup)
        st = unsupported_message(c);
    if (!st && c->g->n_outputs == 0)
        st = ft_err(c->err, FT_EGRAPH, "%s: the model has no outputs", c->file);
    return st;
}

static ft_status new_graph(const char *path, ft_graph **out, ft_error *err)
{
    ft_graph *g = ft_calloc(1, sizeof *g);
    if (!g)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    *out = g;
    g->file = ft_strdup(path);
    const char *slash = strrchr(path, '/');
    g->dir = ft_strdup(slash ? path : ".");
    if (g->dir && slash)
        g->dir[slash - path == 0 ? 1 : slash - path] = 0;
    g->name = ft_strdup(slash ? slash + 1 : path);
    if (g->name) {
        char *dot = strrchr(g->name, '.');
        if (dot && dot != g->name)
            *dot = 0;
    }
    g->tmap = ft_strmap_new();
    if (!g->file || !g->dir || !g->name || !g->tmap)
        return ft_err(err, FT_ERUNTIME, "out of memory");
    return FT_OK;
}

int ft_onnx_sniff(const unsigned char *buf, size_t n)
{
    /* ir_version (field 1, varint) is what every writer puts first; a
     * producer_name or graph first is accepted too */
    return n >= 2 && (buf[0] == 0x08 || buf[0] == 0x12 || buf[0] == 0x3a);
}

static ft_status load(const char *path, const unsigned char *buf, unsigned char *owned, size_t len, int mapped,
                      const ft_load_opts *opts, ft_graph **out, ft_error *err);

ft_status ft_onnx_load(const char *path, const unsigned char *buf, size_t len, const ft_load_opts *opts,
                       ft_graph **out, ft_error *err)
{
    return load(path, buf, NULL, len, 0, opts, out, err);
}

ft_status ft_onnx_load_owned(const char *path, unsigned char *buf, size_t len, const ft_load_opts *opts,
                             ft_graph **out, ft_error *err)
{
    return load(path, buf, buf, len, 0, opts, out, err);
}

ft_status ft_onnx_load_file(const char *path, const ft_load_opts *opts, ft_graph **out, ft_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    void *map = MAP_FAILED;
    if (fd >= 0 && !fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 && (uint64_t)sb.st_size <= SIZE_MAX)
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (fd >= 0)
        close(fd);
    if (map != MAP_FAILED)
        return load(path, map, map, (size_t)sb.st_size, 1, opts, out, err);
    unsigned char *buf; /* not a regular file, or no mapping: read */
    size_t len;
    ft_status st = ft_read_file(path, &buf, &len, err);
    return st ? st : load(path, buf, buf, len, 0, opts, out, err);
}

/* owned: buf when it is ours to release once decoded (protobuf-c copies
 * every field out of it), else NULL: freed, or unmapped when mapped (a
 * read-only mapping of the file, whose decoded ranges onnx_split.c drops
 * as it goes). */
/* One import of the model in buf (decoded here; *retry set when a run-time
 * loop's carried value turned out to change shape: vary then says which,
 * and the model is to be imported again). */
static ft_status load_once(const char *path, const unsigned char *buf, size_t len, int mapped, const ft_load_opts *opts,
                           onx_vary *vary, int *retry, ft_graph **out, ft_error *err)
{
    *out = NULL;
    onx_ctx cx = {.file = path, .opts = opts, .err = err, .vary = vary}, *c = &cx;
    ft_status st = new_graph(path, &c->g, err);
    if (!st) {
        /* protobuf-c answers NULL for a malformed file and for a failed
         * allocation alike: its allocations are counted to tell them apart */
        ft_pb_alloc_failed(1);
        int fallback = 1;
        c->model = ft_onnx_unpack_split(buf, len, mapped, &fallback);
        if (!c->model && fallback)
            c->model = onnx__model_proto__unpack(&ft_pb_allocator, len, buf);
        if (!c->model && (!fallback || ft_pb_alloc_failed(0)))
            st = ft_err(err, FT_ERUNTIME, "%s: out of memory reading the model", path);
        else if (!c->model) {
            char why[256];
            diagnose(buf, len, why, sizeof why);
            st = ft_err(err, FT_EGRAPH, "%s: not a valid ONNX model: the protobuf is %s", path, why);
        }
    }
    c->names = ft_strmap_new();
    c->inits = ft_strmap_new();
    c->poisoned = ft_strmap_new();
    c->outnames = ft_strmap_new();
    c->suffix = ft_strmap_new();
    if (!st && (!c->names || !c->inits || !c->poisoned || !c->outnames || !c->suffix))
        st = onx_oom(c);
    if (!st)
        st = import_model(c);
    /* the emitted nodes become the graph's, on success and failure alike, so
     * that ft_graph_free releases them */
    ft_graph *g = c->g;
    if (g) {
        g->nodes = ft_calloc((size_t)(c->n_nodes ? c->n_nodes : 1), sizeof *g->nodes);
        if (!g->nodes) {
            for (int i = 0; i < c->n_nodes; i++) {
                ft_node_clear(c->nodes[i]);
                free(c->nodes[i]);
            }
            st = st ? st : onx_oom(c);
        } else {
            for (int i = 0; i < c->n_nodes; i++) {
                g->nodes[i] = *c->nodes[i];
                free(c->nodes[i]);
            }
            g->n_nodes = c->n_nodes;
        }
    }
    if (!st)
        st = compact(c);
    if (!st)
        st = describe(c);
    free(c->nodes);
    for (int i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    for (int i = 0; i < c->cap_vcache; i++)
        free(c->vcache[i]);
    free(c->vcache);
    free(c->vcopy);
    for (int i = 0; i < c->n_unsup; i++) {
        free(c->unsup[i].key);
        free(c->unsup[i].text);
    }
    free(c->unsup);
    ft_strmap_free(c->names);
    ft_strmap_free(c->inits);
    free(c->init_t);
    ft_strmap_free(c->poisoned);
    ft_strmap_free(c->outnames);
    ft_strmap_free(c->suffix);
    onx_seq_free(c);
    if (c->model)
        onnx__model_proto__free_unpacked(c->model, &ft_pb_allocator);
    *retry = c->retry;
    if (st) {
        ft_graph_free(g);
        return st;
    }
    *out = g;
    return FT_OK;
}

/* The model imported (load_once), again where a run-time loop's carried
 * value changes shape: the second import makes that state of run-time shape
 * from the start, so that nothing in the body is folded from its first
 * shape. The bytes stay until then (a mapping's decoded ranges are dropped,
 * not unmapped: onnx_split.c). */
static ft_status load(const char *path, const unsigned char *buf, unsigned char *owned, size_t len, int mapped,
                      const ft_load_opts *opts, ft_graph **out, ft_error *err)
{
    onx_vary vary = {0};
    int retry = 1;
    ft_status st = FT_OK;
    for (int round = 0; retry && round < ONX_IMPORTS_MAX; round++)
        st = load_once(path, buf, len, mapped, opts, &vary, &retry, out, err);
    if (mapped)
        munmap(owned, len);
    else
        free(owned);
    onx_vary_free(&vary);
    return st;
}
