/* libFuzzer harness: a graph in any of ftrun's formats (JSON, .ftg or ONNX,
 * told apart by their first bytes as ft_graph_load does) through what
 * `ftrun run -O2 --random-inputs -n 1 -w W --threads T --device cpu` does: load,
 * validate, optimize, values for the inputs that have none, then plan, bind
 * and one run on the CPU backend through the pipeline (src/pipeline: the
 * kernels, oneDNN, OpenBLAS, FFTW) and the outputs read back. The other
 * graph harnesses stop at the plan; this one runs the kernels.
 *
 * The input is written to the scratch folder (graph.json, graph.ftg or
 * model.onnx by its kind) and loaded from there, so "file" sources and
 * external data find w.bin and w.npy beside it. Graphs too big to run fast
 * are skipped after planning (limits below). The forms of the CPU convs and
 * matmuls (FTRUN_CONV_IMPL, FTRUN_MATMUL_IMPL) and the thread count T (1 to
 * 3) are chosen from a hash of the input, so every form is reached and a
 * finding reproduces from its file; W is 1 where FTRUN_CONV_IMPL is unset.
 *
 * Mutation by kind: json_mutator.h for JSON, ftg_mutator.h for .ftg,
 * onnx_mutator.h for ONNX.
 *
 * In half of the runs the tensors get their own bytes in the arena with
 * poisoned red zones around them (fz_spread).
 *
 * FTRUN_FUZZ_VERBOSE=1 prints why each input stopped where it did. */
#include <omp.h>
#include <sanitizer/asan_interface.h>

/* No graph small enough to run needs more (tensors of 4 MiB, an arena of
 * 8 MiB, below), and a random "init" of more, generated before the reader
 * checks the nodes, takes seconds under the sanitizers (a 52 MB one over 10 s:
 * a timeout). */
#define FZ_MAX_ALLOC_MB "32"

#include "cli/inputs.h"
#include "fuzz_common.h"
#include "fuzz_graph_common.h"
#include "ftg_mutator.h"
#include "onnx/onnx.h"
#include "json_mutator.h"
#include "onnx_mutator.h"
#include "pipeline/pipeline.h"

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Limits that keep one execution short under the sanitizers. */
#define FZ_MAX_TENSOR (4u << 20)  /* bytes of any tensor */
#define FZ_MAX_ARENA (8u << 20)   /* bytes of the planned arena */
#define FZ_MAX_FLOPS 20000000ull  /* sum of ft_node_cost's FLOPs */
#define FZ_MAX_TRAFFIC (64u << 20) /* sum of ft_node_cost's bytes */
#define FZ_MAX_NODES 512

static int fz_verbose;

static void fz_say(const char *stage, const char *msg)
{
    if (fz_verbose)
        fprintf(stderr, "fuzz_run: %s: %s\n", stage, msg);
}


/* 1 when g is small enough to run: every tensor, the total FLOPs and bytes
 * moved, the node count. */
static int fz_small(const ft_graph *g)
{
    if (g->n_nodes > FZ_MAX_NODES)
        return 0;
    for (int t = 0; t < g->n_tensors; t++)
        if (ft_tensor_bytes(&g->tensors[t]) > FZ_MAX_TENSOR)
            return 0;
    uint64_t flops = 0, traffic = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        uint64_t f, b;
        ft_node_cost(g, &g->nodes[g->order[k]], &f, &b);
        if (f > FZ_MAX_FLOPS || b > FZ_MAX_TRAFFIC)
            return 0;
        flops += f, traffic += b;
        if (flops > FZ_MAX_FLOPS || traffic > FZ_MAX_TRAFFIC)
            return 0;
    }
    return 1;
}

static uint32_t fz_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    return h;
}

/* The conv and matmul forms for this input (unset: the CPU backend's
 * default), and its thread count: 1, 2 or 3 (kernels cut their work by
 * threads; a 1-D conv's im2col overflowed only when cut by 2). */
static int fz_pick_forms(uint32_t h)
{
    static const char *const conv[] = {NULL, "native", "plain", "blocked", "blocked-add"};
    static const char *const mm[] = {NULL, "blas", "dnnl"};
    const char *c = conv[h % 5], *m = mm[h / 5 % 3];
    if (c)
        setenv("FTRUN_CONV_IMPL", c, 1);
    else
        unsetenv("FTRUN_CONV_IMPL");
    if (m)
        setenv("FTRUN_MATMUL_IMPL", m, 1);
    else
        unsetenv("FTRUN_MATMUL_IMPL");
    return 1 + (int)(h / 15 % 3);
}

/* Red zones in the arena. Tensors share one arena, so a kernel that writes
 * past its output lands in another tensor, where AddressSanitizer sees
 * nothing. In half of the runs (chosen by the hash) the plan gives every
 * tensor its own bytes (ft_plan_build_unshared, as --check-nodes does) and is
 * then spread out with FZ_REDZONE bytes before and after each tensor, which
 * the arena allocation poisons: a kernel touching them is reported as a
 * use-after-poison. (Without AddressSanitizer, as in the coverage build,
 * the poisoning is a no-op.) */
#define FZ_REDZONE 64

static struct {
    const ft_graph *g;
    const ft_plan *plan; /* the spread plan of the run in progress, or NULL */
    void *arena;
    size_t bytes;
} fz_rz;

static ft_backend fz_cpu; /* ft_cpu_backend, its arena allocation watched */

static ft_status fz_arena_alloc(ft_backend_ctx *c, size_t bytes, void **out, ft_error *err)
{
    ft_status st = ft_cpu_backend.alloc(c, bytes, out, err);
    if (st || !fz_rz.plan || fz_rz.arena || bytes != fz_rz.plan->arena_bytes)
        return st;
    fz_rz.arena = *out, fz_rz.bytes = bytes;
    ASAN_POISON_MEMORY_REGION(*out, bytes);
    for (int t = 0; t < fz_rz.plan->n_tensors; t++)
        ASAN_UNPOISON_MEMORY_REGION((char *)*out + fz_rz.plan->offset[t], ft_tensor_bytes(&fz_rz.g->tensors[t]));
    return st;
}

static void fz_arena_release(ft_backend_ctx *c, void *p)
{
    if (p && p == fz_rz.arena) {
        ASAN_UNPOISON_MEMORY_REGION(p, fz_rz.bytes);
        fz_rz.arena = NULL;
    }
    ft_cpu_backend.release(c, p);
}

/* Lays out an unshared plan again: FZ_REDZONE bytes, then each tensor
 * (64-byte aligned) followed by FZ_REDZONE bytes. */
static void fz_spread(const ft_graph *g, ft_plan *p)
{
    uint64_t off = FZ_REDZONE;
    for (int t = 0; t < p->n_tensors; t++) {
        p->offset[t] = off;
        off += (ft_tensor_bytes(&g->tensors[t]) + FT_ALIGN - 1) / FT_ALIGN * FT_ALIGN + FZ_REDZONE;
    }
    p->arena_bytes = off;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_setup();
    const char *v = getenv("FTRUN_FUZZ_VERBOSE");
    fz_verbose = v && *v && strcmp(v, "0") != 0;
    /* Runs have 1 to 3 threads on a machine that may have one core for the
     * fuzzer: OpenMP threads wait without spinning (read when the runtime
     * starts, so before the first OpenMP call). */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    setenv("KMP_BLOCKTIME", "0", 0);
    omp_set_num_threads(1);
    fz_cpu = ft_cpu_backend;
    fz_cpu.alloc = fz_arena_alloc;
    fz_cpu.release = fz_arena_release;
    return 0;
}

/* Plan on the CPU backend, bind a context and run once, through the
 * pipeline as `ftrun run` does (p stays the caller's); the outputs are read
 * back. */
static void fz_execute(ft_pipeline *p, int threads, int redzones, int warmup)
{
    const ft_graph *g = p->g;
    ft_error err = {0};
    p->unshared = redzones; /* read by ft_pipeline_plan (and ft_pipeline_run: every tensor copied back) */
    if (ft_pipeline_plan(p, &fz_cpu, NULL, &err) != FT_OK) {
        /* an op or dtype the CPU lacks is a run-time failure that names it */
        if (!err.msg[0] || (!p->planned && err.code != FT_ERUNTIME && err.code != FT_EGRAPH))
            abort();
        fz_say("plan", err.msg);
        return;
    }
    fz_check_plan(g, &p->plan);
    if (p->plan.arena_bytes > FZ_MAX_ARENA) {
        fz_say("limits", "arena too big");
        return;
    }
    if (redzones) {
        fz_spread(g, &p->plan);
        fz_rz.g = g, fz_rz.plan = &p->plan;
    }
    ft_backend_opts bo = {.threads = threads};
    ft_exec_opts eo = {.warmup = warmup, .iterations = 1, .threads = threads};
    ft_run_result r = {0};
    if (ft_pipeline_open(p, &bo, &err) != FT_OK) {
        if (!err.msg[0])
            abort();
        fz_say("open", err.msg);
    } else if (ft_pipeline_run(p, &eo, &r, &err) != FT_OK) {
        /* bad data (an index out of range) or a run-time failure, with a message */
        if ((err.code != FT_EGRAPH && err.code != FT_ERUNTIME) || !err.msg[0])
            abort();
        fz_say("run", err.msg);
    } else {
        if (r.n_outputs != g->n_outputs || r.n_runs != 1 || r.n_warmup != warmup)
            abort();
        volatile uint8_t sum = 0;
        for (int i = 0; i < r.n_outputs; i++) {
            const uint8_t *b = r.outputs[i];
            /* the shape the run gave (a run-time shape may be smaller than the load's stand-in) */
            size_t n = (size_t)ft_numel(&r.output_shapes[i]) * ft_dtype_size(g->tensors[g->outputs[i]].dtype);
            for (size_t j = 0; j < n; j++)
                sum += b[j];
        }
        (void)sum;
        fz_say("run", "ok");
    }
    ft_run_result_free(&r);
    if (fz_rz.arena)
        abort(); /* the executor released its arena */
    fz_rz.plan = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = ft_ftg_is_ftg(data, size)     ? "graph.ftg"
                       : ft_onnx_sniff(data, size) ? "model.onnx"
                                                   : "graph.json";
    if (fz_write(name, data, size))
        abort();
    char path[128];
    snprintf(path, sizeof path, "%s/%s", fz_dir, name);
    uint32_t h = fz_hash(data, size);
    int threads = fz_pick_forms(h), redzones = (int)(h / 45 % 2);
    /* FTRUN_CONV_IMPL unset: a conv's first run takes the blocked form and
     * its second times every form on the node's tensors and keeps the
     * fastest (conv_dnnl.c), so these graphs run twice (one untimed run) */
    int warmup = getenv("FTRUN_CONV_IMPL") == NULL;
    if (fz_verbose) {
        const char *c = getenv("FTRUN_CONV_IMPL"), *m = getenv("FTRUN_MATMUL_IMPL");
        fprintf(stderr, "fuzz_run: FTRUN_CONV_IMPL=%s FTRUN_MATMUL_IMPL=%s --threads %d -w %d%s\n", c ? c : "(unset)",
                m ? m : "(unset)", threads, warmup, redzones ? ", unshared plan with red zones" : "");
    }
    /* read here, then validated and optimized by the pipeline (fz_prepare),
     * which says which step refused: an optimizer turning a valid graph
     * invalid is told from an invalid graph */
    ft_load_opts o = {.seed_override = -1};
    ft_graph *g = NULL;
    ft_error err = {0};
    if (ft_graph_load(path, &o, &g, &err) != FT_OK) {
        if (g || !err.msg[0])
            abort(); /* a failure returns no graph and says why */
        fz_say("load", err.msg);
        return 0;
    }
    ft_pipeline p;
    if (!fz_prepare(&p, g)) { /* g is the pipeline's from here */
        fz_say("validate", "refused");
        return 0;
    }
    g = p.g;
    if (!fz_small(g)) {
        fz_say("limits", "too big to run");
    } else {
        ft_bindings b = {.random = 1};
        if (ft_bind_apply(&b, g, 1, &err) != FT_OK) {
            if (!err.msg[0])
                abort();
            fz_say("inputs", err.msg);
        } else {
            fz_execute(&p, threads, redzones, warmup);
        }
        ft_bindings_free(&b);
    }
    ft_pipeline_free(&p);
    return 0;
}

/* By the input's kind: .ftg and ONNX through their structured mutators,
 * JSON three times in four through json_mutator.h, else libFuzzer's own. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (ft_ftg_is_ftg(data, size))
        return ftg_mutate(data, size, max_size, seed);
    if (ft_onnx_sniff(data, size))
        return om_mutate(data, size, max_size, seed);
    if (seed % 4 != 0 && size > 0) {
        size_t n = jm_mutate_text((const char *)data, size, (char *)data, max_size, seed);
        if (n)
            return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}
