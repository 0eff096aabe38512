/* What cpu/conv_dnnl.c, cpu/conv_layout.c and cpu/matmul_dnnl.c share in
 * driving oneDNN's primitives: buffers the size of a memory descriptor, one
 * engine and stream per cache (dnnl_cache.c), reorders between two layouts,
 * and the status check that jumps to a `fail:` label.
 *
 * Ownership: header-only, no state; cpu_md_alloc's buffer is the caller's
 * (free()), and so are the engine and stream of cpu_dnnl_open (destroyed
 * with dnnl_stream_destroy / dnnl_engine_destroy), and so is the reorder
 * primitive of cpu_dnnl_reorder (dnnl_primitive_destroy).
 *
 *   dnnl_engine_t eng; dnnl_stream_t strm;
 *   int broken = cpu_dnnl_open(&eng, &strm);  // 1: no engine, run without oneDNN
 *   void *buf = cpu_md_alloc(md);
 */
#ifndef CPU_DNNL_UTIL_H
#define CPU_DNNL_UTIL_H

#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>

/* 64-byte aligned buffer of the size of md (at least 64 bytes), or NULL. */
static inline void *cpu_md_alloc(const dnnl_memory_desc_t *md)
{
    size_t sz = dnnl_memory_desc_get_size(md);
    void *p = NULL;
    if (posix_memalign(&p, 64, sz ? sz : 64) != 0)
        return NULL;
    return p;
}

/* A CPU engine and an in-order stream on it; 1 (and nothing to destroy but
 * what was made, NULL otherwise) when oneDNN cannot make them. */
static inline int cpu_dnnl_open(dnnl_engine_t *eng, dnnl_stream_t *strm)
{
    *eng = NULL, *strm = NULL;
    return dnnl_engine_create(eng, dnnl_cpu, 0) != dnnl_success ||
           dnnl_stream_create(strm, *eng, dnnl_stream_default_flags) != dnnl_success;
}

/* *out = a reorder from layout a to layout b, or NULL when they are equal
 * (then dnnl_success) or on a failure (its status). */
static inline dnnl_status_t cpu_dnnl_reorder(dnnl_engine_t eng, const dnnl_memory_desc_t *a,
                                             const dnnl_memory_desc_t *b, dnnl_primitive_t *out)
{
    *out = NULL;
    if (dnnl_memory_desc_equal(a, b))
        return dnnl_success;
    dnnl_primitive_desc_t pd;
    dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, a, eng, b, eng, NULL);
    if (s != dnnl_success)
        return s;
    if ((s = dnnl_primitive_create(out, pd)) != dnnl_success)
        *out = NULL;
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Destroys the np primitives at p and the nm memory objects at m that are
 * not NULL (the caller clears the fields they came from). */
static inline void cpu_dnnl_destroy(const dnnl_primitive_t *p, size_t np, const dnnl_memory_t *m, size_t nm)
{
    for (size_t i = 0; i < np; i++)
        if (p[i])
            dnnl_primitive_destroy(p[i]);
    for (size_t i = 0; i < nm; i++)
        if (m[i])
            dnnl_memory_destroy(m[i]);
}

/* What building a primitive leaves to free: its descriptor, post-ops and
 * attributes, those that are not NULL. */
static inline void cpu_dnnl_build_free(dnnl_primitive_desc_t pd, dnnl_post_ops_t po, dnnl_primitive_attr_t attr)
{
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (po)
        dnnl_post_ops_destroy(po);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
}

/* Runs primitive p on strm with the na arguments at a (which has room for
 * one more: the scratchpad pad, when not NULL) and waits for it; a failed
 * wait sets *what to say so. */
static inline dnnl_status_t cpu_dnnl_exec_wait(dnnl_primitive_t p, dnnl_stream_t strm, dnnl_exec_arg_t *a, int na,
                                               dnnl_memory_t pad, const char **what)
{
    if (pad)
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    dnnl_status_t s = dnnl_primitive_execute(p, strm, na, a);
    if (s != dnnl_success)
        return s;
    *what = "waiting for the stream";
    return dnnl_stream_wait(strm);
}

/* Runs reorder r from memory `from` to memory `to` on strm (no wait). */
static inline dnnl_status_t cpu_dnnl_reorder_run(dnnl_stream_t strm, dnnl_primitive_t r, dnnl_memory_t from,
                                                 dnnl_memory_t to)
{
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    return dnnl_primitive_execute(r, strm, 2, a);
}

/* s = x; on anything but dnnl_success, goto fail (s declared by the caller). */
#define CPU_DNNL_TRY(x)                                                                                          \
    do {                                                                                                         \
        if ((s = (x)) != dnnl_success)                                                                           \
            goto fail;                                                                                           \
    } while (0)

#endif
