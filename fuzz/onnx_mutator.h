/* Structure-aware mutation of ONNX models for the onnx and run harnesses
 * (fuzz/README.md): the model is unpacked with protobuf-c, one to three things
 * are changed (an op type, a node input, an attribute value, an initializer's
 * dims, dtype or data, a declared dim, the opset or IR version, external data;
 * or nodes dropped, repeated or swapped) and it is packed again. Byte-level
 * mutation of protobuf mostly breaks the framing and stops in the decoder. */
#ifndef FT_FUZZ_ONNX_MUTATOR_H
#define FT_FUZZ_ONNX_MUTATOR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Everything the mutator allocates comes from one arena freed at the end, so
 * strings and sub-messages may be shared or replaced without ownership. */
typedef struct fz_arena {
    char *blocks[16384];
    int n;
} fz_arena;

static void *fz_alloc(void *d, size_t n)
{
    fz_arena *a = d;
    if (a->n == (int)(sizeof a->blocks / sizeof *a->blocks))
        return NULL;
    char *p = malloc(n ? n : 1);
    if (p)
        a->blocks[a->n++] = p;
    return p;
}
static void fz_free(void *d, void *p) {}

typedef struct fz_rng {
    uint64_t s;
} fz_rng;
static uint32_t fz_next(fz_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static uint32_t fz_below(fz_rng *r, size_t n) { return n ? fz_next(r) % (uint32_t)n : 0; }

static const int64_t fz_ints[] = {0,  1,   -1,  2,    3,     4,      7,           8,           16,      64,
                                  -2, 255, 256, 1023, 65535, 65536,  2147483647, -2147483648, 1ll << 32, 1ll << 40,
                                  1ll << 62, INT64_MAX, INT64_MIN, -3, 13, 17, 23};
static int64_t fz_int(fz_rng *r) { return fz_ints[fz_below(r, sizeof fz_ints / sizeof *fz_ints)]; }
static float fz_float(fz_rng *r)
{
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-30f, 1e30f, 3.4e38f, 1e-45f, 2.0f, 1e-5f};
    uint32_t k = fz_below(r, sizeof v / sizeof *v + 2);
    if (k == sizeof v / sizeof *v)
        return __builtin_inff();
    if (k == sizeof v / sizeof *v + 1)
        return __builtin_nanf("");
    return v[k];
}

static const char *const fz_ops[] = {
    "Abs", "Add", "And", "ArgMax", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat",
    "Constant", "ConstantOfShape", "Conv", "ConvTranspose", "CumSum", "DepthToSpace", "Div", "Dropout", "Einsum",
    "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gemm",
    "GlobalAveragePool", "GlobalMaxPool", "Greater", "Identity", "If", "InstanceNormalization",
    "LayerNormalization", "LeakyRelu", "Less", "Log", "LogSoftmax", "LRN", "MatMul", "Max", "MaxPool", "Mean",
    "Min", "Mod", "Mul", "Neg", "Not", "OneHot", "Or", "Pad", "Pow", "Range", "Reciprocal", "ReduceL2",
    "ReduceMax", "ReduceMean", "ReduceSum", "Relu", "Reshape", "Resize", "ScatterElements", "ScatterND",
    "Shape", "Sigmoid", "Sign", "Size", "Slice", "Softmax", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub",
    "Sum", "Tanh", "Tile", "TopK", "Transpose", "Trilu", "Unsqueeze", "Where", "Xor", "NoSuchOp"};

/* A tensor name of the graph: an input, initializer or node output. */
static char *fz_name(fz_rng *r, Onnx__GraphProto *g)
{
    size_t total = g->n_input + g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++)
        total += g->node[i]->n_output;
    size_t k = fz_below(r, total + 1);
    /* an unset name is NULL in a message made here: packing needs a string */
    if (k < g->n_input)
        return g->input[k]->name ? g->input[k]->name : (char *)"";
    k -= g->n_input;
    if (k < g->n_initializer)
        return g->initializer[k]->name ? g->initializer[k]->name : (char *)"";
    k -= g->n_initializer;
    for (size_t i = 0; i < g->n_node; i++) {
        if (k < g->node[i]->n_output)
            return g->node[i]->output[k] ? g->node[i]->output[k] : (char *)"";
        k -= g->node[i]->n_output;
    }
    return (char *)"";
}

static void fz_mutate_attr(fz_rng *r, Onnx__AttributeProto *a)
{
    switch (fz_below(r, 5)) {
    case 0:
        a->i = fz_int(r), a->has_i = 1;
        break;
    case 1:
        if (a->n_ints)
            a->ints[fz_below(r, a->n_ints)] = fz_int(r);
        break;
    case 2:
        a->f = fz_float(r), a->has_f = 1;
        if (a->n_floats)
            a->floats[fz_below(r, a->n_floats)] = fz_float(r);
        break;
    case 3:
        if (a->n_ints)
            a->n_ints = fz_below(r, a->n_ints);
        else if (a->n_floats)
            a->n_floats = fz_below(r, a->n_floats);
        break;
    default:
        a->type = (Onnx__AttributeProto__AttributeType)fz_below(r, 14), a->has_type = 1;
        break;
    }
}

static void fz_mutate_tensor(fz_rng *r, fz_arena *ar, Onnx__TensorProto *t)
{
    switch (fz_below(r, 5)) {
    case 0:
        if (t->n_dims)
            t->dims[fz_below(r, t->n_dims)] = fz_int(r);
        break;
    case 1:
        t->n_dims = t->n_dims ? fz_below(r, t->n_dims) : 0;
        break;
    case 2:
        t->data_type = (int32_t)fz_below(r, 24), t->has_data_type = 1;
        break;
    case 3:
        if (t->has_raw_data)
            t->raw_data.len = fz_below(r, t->raw_data.len + 1);
        else if (t->n_float_data)
            t->n_float_data = fz_below(r, t->n_float_data);
        else if (t->n_int64_data)
            t->n_int64_data = fz_below(r, t->n_int64_data);
        break;
    default: { /* external data naming a scratch file (or one outside the folder) */
        static const char *const locs[] = {"w.bin", "w.npy", "model.onnx", "../w.bin", "/etc/passwd", "", "nope.bin"};
        static const char *const keys[] = {"location", "offset", "length", "checksum", "bogus"};
        size_t n = 1 + fz_below(r, 3);
        Onnx__StringStringEntryProto **e = fz_alloc(ar, n * sizeof *e);
        if (!e)
            return;
        for (size_t i = 0; i < n; i++) {
            e[i] = fz_alloc(ar, sizeof **e);
            char *v = fz_alloc(ar, 24);
            if (!e[i] || !v)
                return;
            onnx__string_string_entry_proto__init(e[i]);
            e[i]->key = (char *)(i == 0 ? keys[0] : keys[fz_below(r, 5)]);
            snprintf(v, 24, "%lld", (long long)fz_int(r));
            e[i]->value = i == 0 ? (char *)locs[fz_below(r, 7)] : v;
        }
        t->external_data = e, t->n_external_data = n;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL, t->has_data_location = 1;
        t->has_raw_data = 0;
        break;
    }
    }
}

static void fz_mutate_dim(fz_rng *r, Onnx__ValueInfoProto *v)
{
    if (!v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !v->type->tensor_type)
        return;
    Onnx__TypeProto__Tensor *tt = v->type->tensor_type;
    if (fz_below(r, 3) == 0) {
        tt->elem_type = (int32_t)fz_below(r, 24), tt->has_elem_type = 1;
        return;
    }
    if (!tt->shape || !tt->shape->n_dim)
        return;
    Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[fz_below(r, tt->shape->n_dim)];
    if (fz_below(r, 3) == 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = (char *)(fz_below(r, 2) ? "batch" : "");
    } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = fz_int(r);
    }
}

static void fz_mutate_model(fz_rng *r, fz_arena *ar, Onnx__ModelProto *m)
{
    Onnx__GraphProto *g = m->graph;
    uint32_t what = fz_below(r, 12);
    if (!g || what >= 10) {
        if (what == 10 && m->n_opset_import)
            m->opset_import[fz_below(r, m->n_opset_import)]->version = fz_below(r, 26);
        else
            m->ir_version = fz_below(r, 13), m->has_ir_version = 1;
        return;
    }
    Onnx__NodeProto *n = g->n_node ? g->node[fz_below(r, g->n_node)] : NULL;
    switch (what) {
    case 0:
        if (n)
            n->op_type = (char *)fz_ops[fz_below(r, sizeof fz_ops / sizeof *fz_ops)];
        break;
    case 1:
        if (n && n->n_input)
            n->input[fz_below(r, n->n_input)] = fz_name(r, g);
        else if (n && n->n_output)
            n->output[fz_below(r, n->n_output)] = fz_name(r, g);
        break;
    case 2:
        if (n && n->n_input && fz_below(r, 2))
            n->n_input = fz_below(r, n->n_input);
        else if (n) { /* one input more */
            char **in = fz_alloc(ar, (n->n_input + 1) * sizeof *in);
            if (!in)
                break;
            if (n->n_input)
                memcpy(in, n->input, n->n_input * sizeof *in);
            in[n->n_input] = fz_name(r, g);
            n->input = in, n->n_input++;
        }
        break;
    case 3:
    case 4:
        if (n && n->n_attribute)
            fz_mutate_attr(r, n->attribute[fz_below(r, n->n_attribute)]);
        break;
    case 5:
    case 6:
        if (g->n_initializer)
            fz_mutate_tensor(r, ar, g->initializer[fz_below(r, g->n_initializer)]);
        else if (n && n->n_attribute && n->attribute[0]->t)
            fz_mutate_tensor(r, ar, n->attribute[0]->t);
        break;
    case 7:
        if (g->n_input && fz_below(r, 2))
            fz_mutate_dim(r, g->input[fz_below(r, g->n_input)]);
        else if (g->n_output)
            fz_mutate_dim(r, g->output[fz_below(r, g->n_output)]);
        break;
    case 8: /* drop a node, or repeat one at another place */
        if (g->n_node && fz_below(r, 2)) {
            size_t k = fz_below(r, g->n_node);
            memmove(g->node + k, g->node + k + 1, (g->n_node - k - 1) * sizeof *g->node);
            g->n_node--;
        } else if (n) {
            Onnx__NodeProto **nn = fz_alloc(ar, (g->n_node + 1) * sizeof *nn);
            if (!nn)
                break;
            size_t k = fz_below(r, g->n_node + 1);
            if (k)
                memcpy(nn, g->node, k * sizeof *nn);
            nn[k] = n;
            if (g->n_node > k)
                memcpy(nn + k + 1, g->node + k, (g->n_node - k) * sizeof *nn);
            g->node = nn, g->n_node++;
        }
        break;
    default: /* swap two nodes */
        if (g->n_node > 1) {
            size_t a = fz_below(r, g->n_node), b = fz_below(r, g->n_node);
            Onnx__NodeProto *t = g->node[a];
            g->node[a] = g->node[b], g->node[b] = t;
        }
        break;
    }
}

/* The whole mutation: one in four is libFuzzer's byte-level one; otherwise the
 * model is unpacked, changed one to three times and packed again (byte-level
 * when it does not unpack or no longer fits). */
static size_t om_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    fz_rng r = {seed};
    if (fz_below(&r, 4) == 3)
        return LLVMFuzzerMutate(data, size, max_size);
    fz_arena *ar = calloc(1, sizeof *ar);
    if (!ar)
        return LLVMFuzzerMutate(data, size, max_size);
    ProtobufCAllocator alloc = {fz_alloc, fz_free, ar};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc, size, data);
    size_t out = 0;
    if (m) {
        for (uint32_t k = 1 + fz_below(&r, 3); k > 0; k--)
            fz_mutate_model(&r, ar, m);
        size_t need = onnx__model_proto__get_packed_size(m);
        if (need <= max_size)
            out = onnx__model_proto__pack(m, data);
    }
    for (int i = 0; i < ar->n; i++)
        free(ar->blocks[i]);
    free(ar);
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

#endif
