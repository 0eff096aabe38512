/* What cpu/conv_dnnl.c and cpu/matmul_dnnl.c share in driving oneDNN's
 * primitives: buffers the size of a memory descriptor, one engine and
 * stream per cache, and the status check that jumps to a `fail:` label.
 *
 * Ownership: header-only, no state; cpu_md_alloc's buffer is the caller's
 * (free()), and so are the engine and stream of cpu_dnnl_open (destroyed
 * with dnnl_stream_destroy / dnnl_engine_destroy).
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

/* s = x; on anything but dnnl_success, goto fail (s declared by the caller). */
#define CPU_DNNL_TRY(x)                                                                                          \
    do {                                                                                                         \
        if ((s = (x)) != dnnl_success)                                                                           \
            goto fail;                                                                                           \
    } while (0)

#endif
