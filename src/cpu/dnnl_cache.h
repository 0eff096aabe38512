/* The per-node oneDNN state of conv_dnnl.c and matmul_dnnl.c: one cache of
 * each kind per backend context, its engine and stream, and its entries, one
 * per node and thread count, found again on the node's next run and rebuilt
 * when the node's input 0 changes shape or its input 1 (the weights) address.
 * A kind's cache may carry fields of its own after the cpu_dnnl_cache it
 * starts with (cpu_dnnl_kind.size), and so may its entries after their
 * cpu_dnnl_key (cpu_dnnl_kind.esz). Where a kind picks one of a node's forms
 * by timing them (conv_dnnl.c), the key records the pick and each form's
 * time (cpu_dnnl_pick, cpu_dnnl_time).
 *
 * Ownership: the backend context owns each kind's cache (cpu_dnnl_cache_slot
 * in cpu_backend.c; made by cpu_dnnl_cache_get on first use) and frees it on
 * close() with cpu_dnnl_cache_free. The cache owns its engine, its stream,
 * its work buffers and its entries; an entry owns what its kind's drop()
 * frees, and the kind's own fields what its forget() frees. An entry's
 * address holds until the next cpu_dnnl_cache_entry or cpu_dnnl_cache_begin
 * on its cache (the array may move).
 *
 *   static const cpu_dnnl_kind kind = {CPU_DNNL_MATMUL, sizeof(cpu_dnnl_cache), sizeof(cpu_dnnl_key), NULL, NULL};
 *   cpu_dnnl_cache *c = cpu_dnnl_cache_get(k->be, &kind);
 *   if (!c || c->broken) return 0;                       // no oneDNN here: the op's own path
 *   cpu_dnnl_cache_begin(c, k);                          // a new graph or run id empties it
 *   int fresh;
 *   cpu_dnnl_key *e = cpu_dnnl_cache_entry(c, k, n, in, &fresh);   // NULL: out of memory
 *   if (e && fresh) e->pick.choice = 0;                  // a new entry: build its primitives
 */
#ifndef CPU_DNNL_CACHE_H
#define CPU_DNNL_CACHE_H

#include "cpu.h"

#include <oneapi/dnnl/dnnl.h>

/* At most this many forms of a node are timed (conv_dnnl.c: plain, blocked,
 * blocked-add and conv.c's loops). */
#define CPU_DNNL_FORMS 4
/* Work buffers per cache (cpu_dnnl_work). */
#define CPU_DNNL_WORK 3

/* The timed pick of a node's form: choice is -1 until the pick. */
typedef struct cpu_dnnl_pick {
    int choice;
    int calls;               /* runs of the node before the pick */
    int lead;                /* while timing: the form ahead so far */
    double best;             /* its time in seconds (-1: none timed yet) */
    double t[CPU_DNNL_FORMS]; /* each form's time in seconds (-1: not timed) */
} cpu_dnnl_pick;

/* What every entry starts with: the node and thread count it is for, what it
 * was built on (input 1's address, input 0's shape), and its pick. */
typedef struct cpu_dnnl_key {
    const ft_node *node;
    const void *w;
    ft_shape xs;
    int threads;
    int w_const; /* input 1 is a constant of the graph (cpu_input_is_const) */
    /* the entry's copy replaced input 1's value (ft_kctx.release): the entry
     * is the node's while input 1's data is NULL */
    int w_released;
    cpu_dnnl_pick pick;
} cpu_dnnl_key;

typedef struct cpu_dnnl_cache cpu_dnnl_cache;

/* A kind of cache: its slot in the backend context, the sizes of its cache
 * and of its entries, what frees an entry's own state (NULL: nothing; it may
 * be called again on a freed entry) and what frees the cache's own fields
 * (NULL: none; on a new graph or run id and when the cache is freed). */
typedef struct cpu_dnnl_kind {
    int slot; /* CPU_DNNL_CONV, CPU_DNNL_MATMUL, CPU_DNNL_RNN, CPU_DNNL_QCONV, CPU_DNNL_SPARSE */
    size_t size, esz;
    void (*drop)(void *entry);
    void (*forget)(cpu_dnnl_cache *c);
} cpu_dnnl_kind;

struct cpu_dnnl_cache {
    const cpu_dnnl_kind *kind;
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    int broken;        /* oneDNN could not make an engine: the ops' own paths only */
    const ft_graph *g; /* the entries are those of this graph and run id */
    uint64_t run_id;
    char *e;           /* n entries of kind->esz bytes */
    int n, cap;
    /* Work buffers for what a node needs only while it runs (a reordered
     * src or dst, a scratchpad): shared by the kind's nodes, which run one
     * at a time, and grown to the largest (cpu_dnnl_work). Owned. */
    void *work[CPU_DNNL_WORK];
    size_t work_cap[CPU_DNNL_WORK];
};

/* Work buffer j (below CPU_DNNL_WORK) of c with room for nb bytes, 64-byte
 * aligned, its contents not kept; NULL when out of memory. Valid until the
 * next call for j or until the cache forgets its entries. */
void *cpu_dnnl_work(cpu_dnnl_cache *c, int j, size_t nb);

/* The cache of `kind` in be, made (engine and stream opened) on first use;
 * NULL when out of memory. */
cpu_dnnl_cache *cpu_dnnl_cache_get(ft_backend_ctx *be, const cpu_dnnl_kind *kind);
/* Whether the cache holds k's graph and run id. */
static inline int cpu_dnnl_cache_current(const cpu_dnnl_cache *c, const ft_kctx *k)
{
    return c->g == k->g && c->run_id == k->run_id;
}
/* Empties c unless it holds k's graph and run id (a graph loaded after
 * another may reuse its node and weight addresses): 1 when it did. */
int cpu_dnnl_cache_begin(cpu_dnnl_cache *c, const ft_kctx *k);
/* The entry of node n at k->threads threads; *fresh 1 when it is new (or was
 * rebuilt: everything after the key zero, pick.choice -1), NULL when out of
 * memory. */
void *cpu_dnnl_cache_entry(cpu_dnnl_cache *c, const ft_kctx *k, const ft_node *n, const ft_view *in, int *fresh);

/* The three calls above in one: k's cache of `kind` (made on first use,
 * emptied for a new graph or run id) into *c and the entry of node n from it
 * (*fresh as cpu_dnnl_cache_entry); NULL when out of memory, or when
 * need_engine and oneDNN could not make an engine here (c->broken). */
void *cpu_dnnl_lookup(const ft_kctx *k, const cpu_dnnl_kind *kind, const ft_node *n, const ft_view *in,
                      int need_engine, cpu_dnnl_cache **c, int *fresh);

/* Runs form `form` of a node (run(arg, form)) 3 times and more, until 2 ms
 * went by (16 at most; once when its first run takes over ten times the
 * best so far), timing each on process CPU time on one thread and wall time
 * on more; records the best run after the first in p->t[form], and makes the
 * form p->lead when it is the first timed or faster than margin times
 * p->best. Returns the status of a failed run (FT_OK). */
ft_status cpu_dnnl_time(cpu_dnnl_pick *p, int form, double margin, int threads, ft_status (*run)(void *arg, int form),
                        void *arg);

#endif
