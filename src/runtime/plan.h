/* The memory plan: every tensor gets a byte offset in one arena.
 *
 * Inputs, outputs and constants (tensors with a value) live in a persistent
 * region and never share bytes. The constants come first (const_bytes): a
 * backend whose memory is the host's (ft_backend.host_memory, the CPU) reads
 * them where the graph holds them, allocates the arena from const_bytes on
 * and copies no weight (runtime/exec.c). Intermediates are placed like ggml-alloc: in
 * execution order each node's outputs take the best-fitting free block, and a
 * tensor's block returns to the free list when its last reader has run (or
 * passes to the output of a reshape-like node that is that reader: plan.c). A
 * node's outputs are placed before its inputs are released, so no kernel ever
 * writes over its own input (a reshape-like node given its input's block
 * writes nothing). In a graph with run-time loops (loop_begin .. loop_end,
 * runtime/exec.c) a tensor the body reads that was made before the loop
 * keeps its block to the loop's end, since the next iteration reads it
 * again. A dynamic tensor (graph.h: FT_TF_DYNAMIC) is not placed:
 * its offset is FT_PLAN_DYNAMIC.
 *
 * Ownership: ft_plan_build fills a caller-owned ft_plan; ft_plan_free releases
 * its arrays.
 *
 *   ft_plan p; if (ft_plan_build(g, &p, &err)) ...; p.offset[t], p.arena_bytes; ft_plan_free(&p);
 */
#ifndef FT_PLAN_H
#define FT_PLAN_H

#include "../graph/graph.h"

#define FT_ALIGN 64
/* The offset of a dynamic tensor (FT_TF_DYNAMIC: its size is known only at
 * run time): it has no place in the arena; the executor gives it a buffer of
 * its own, grown as runs need and kept across the runs of one ft_exec_run. */
#define FT_PLAN_DYNAMIC UINT64_MAX

typedef struct ft_plan {
    int n_tensors;
    uint64_t *offset;          /* per tensor, into the arena */
    uint64_t arena_bytes;      /* planned peak: persistent + shared region */
    uint64_t persistent_bytes; /* inputs, outputs, constants */
    uint64_t const_bytes;      /* the constants (ft_plan_is_constant), at offsets [0, const_bytes) */
    uint64_t unplanned_bytes;  /* every tensor in its own buffer */
    uint64_t weights_bytes;    /* constants (value in the file, not an input) */
    int n_dynamic;             /* tensors at FT_PLAN_DYNAMIC */
} ft_plan;

ft_status ft_plan_build(const ft_graph *g, ft_plan *p, ft_error *err);
/* A plan where no two tensors share bytes (every intermediate kept to the end
 * of the run): what --check-nodes needs to read every tensor afterwards.
 * arena_bytes is then unplanned_bytes. */
ft_status ft_plan_build_unshared(const ft_graph *g, ft_plan *p, ft_error *err);
void ft_plan_free(ft_plan *p);
/* 1 if tensor t lives in the persistent region. */
int ft_plan_is_persistent(const ft_tensor *t);
/* 1 if tensor t is a constant of the plan's first region: a value that is
 * not an input (and not dynamic). */
int ft_plan_is_constant(const ft_tensor *t);
/* 1 if node n of g is a view under plan p: a reshape-like node (reshape,
 * flatten, squeeze, unsqueeze, identity) whose output was given its input's
 * bytes, so that its kernel copies nothing. */
int ft_plan_is_view(const ft_graph *g, const ft_plan *p, const ft_node *n);

#endif
