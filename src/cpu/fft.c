/* CPU fft, ifft, rfft, irfft and stft with FFTW3 (fftw_* for f64, fftwf_* for f32;
 * f16/bf16 arrive here widened to f32 by cpu_backend.c).
 *
 * A transform along axis k of a row-major tensor is a batch of 1-D transforms:
 * with outer = product of the (logical) dims before k, N the length along k and
 * inner = product of the dims after k, element (o, j, i) lies at
 * (o * len_k + j) * inner + i. One guru64 plan describes exactly that: one
 * transform dim {N, stride inner} and two loop dims {outer, len_k * inner} and
 * {inner, 1}, so any axis runs in place in the tensor, without transposes.
 * FFTW transforms are unnormalised; the numpy.fft norms are applied after.
 *
 * Plans are made with FFTW_ESTIMATE (fast to make, deterministic, and it never
 * touches the arrays, so the caller's tensors can be handed to the planner) and
 * kept in a small cache keyed by everything the plan depends on: op, precision,
 * geometry, thread count, in-place-ness and the SIMD alignment of both arrays
 * (a plan may only be re-executed on arrays of the alignment it was made for).
 * FFTW's planner and plan destruction are not thread-safe, executing is: the
 * cache and every planner call are serialised by one mutex, and an entry in use
 * is pinned by a reference count so that it is never destroyed under a running
 * transform. */
#include "cpu.h"
#include "../graph/infer_fft.h"

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_C2C_FWD, T_C2C_BWD, T_R2C, T_C2R } fft_kind;

typedef struct {
    int kind;       /* fft_kind */
    int f64;
    int threads;
    int inplace;
    int in_align, out_align;
    int64_t outer, n, inner;
    int64_t in_len, out_len; /* length along the axis in the input / output layout */
} plan_key;

typedef struct {
    plan_key key;
    void *plan;     /* fftw_plan or fftwf_plan */
    int refs;
    uint64_t last_use;
} plan_entry;

#define CACHE_SIZE 32

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static plan_entry cache[CACHE_SIZE];
static uint64_t cache_clock;
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;
static int threads_ok;

static void threads_init(void)
{
    threads_ok = fftw_init_threads() && fftwf_init_threads();
}

/* With the lock held. */
static void destroy_plan(int f64, void *p)
{
    if (!p)
        return;
    if (f64)
        fftw_destroy_plan(p);
    else
        fftwf_destroy_plan(p);
}

/* The plan of key through FFTW's double (P = fftw) or float (P = fftwf)
 * interface, which differ only in that prefix. */
#define MAKE_PLAN(P)                                                                                              \
    static void *make_plan_##P(const plan_key *key, const P##_iodim64 *d, int nl, const P##_iodim64 *h, void *in, \
                               void *out, unsigned flags)                                                         \
    {                                                                                                             \
        switch ((fft_kind)key->kind) {                                                                            \
        case T_C2C_FWD:                                                                                           \
        case T_C2C_BWD:                                                                                           \
            return P##_plan_guru64_dft(1, d, nl, h, in, out, key->kind == T_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD, \
                                       flags);                                                                    \
        case T_R2C:                                                                                               \
            return P##_plan_guru64_dft_r2c(1, d, nl, h, in, out, flags);                                           \
        case T_C2R:                                                                                               \
            return P##_plan_guru64_dft_c2r(1, d, nl, h, in, out, flags);                                           \
        }                                                                                                         \
        return NULL;                                                                                              \
    }
MAKE_PLAN(fftw)
MAKE_PLAN(fftwf)
#undef MAKE_PLAN

/* With the lock held. The loop dims of length 1 are left out. */
static void *make_plan(const plan_key *key, void *in, void *out)
{
    ptrdiff_t n = (ptrdiff_t)key->n, inner = (ptrdiff_t)key->inner;
    /* strides count complex numbers on the complex side, reals on the real side */
    ptrdiff_t is = inner, os = inner;
    ptrdiff_t idist = (ptrdiff_t)key->in_len * inner, odist = (ptrdiff_t)key->out_len * inner;
    ptrdiff_t loops[2][3] = {{(ptrdiff_t)key->outer, idist, odist}, {inner, 1, 1}};
    int nl = 0;
    if (threads_ok) {
        fftw_plan_with_nthreads(key->threads);
        fftwf_plan_with_nthreads(key->threads);
    }
    /* fftw_iodim64 and fftwf_iodim64 name one struct (fftw3.h) */
    fftw_iodim64 d = {n, is, os}, h[2];
    for (int i = 0; i < 2; i++)
        if (loops[i][0] != 1)
            h[nl++] = (fftw_iodim64){loops[i][0], loops[i][1], loops[i][2]};
    if (key->f64)
        return make_plan_fftw(key, &d, nl, h, in, out, FFTW_ESTIMATE);
    return make_plan_fftwf(key, &d, nl, h, in, out, FFTW_ESTIMATE);
}

/* A plan for key, pinned (release with plan_release). *slot is the cache
 * index, or -1 for a plan made outside the cache because every entry is in use:
 * the caller then owns it. NULL when FFTW cannot plan the problem. */
static void *plan_acquire(const plan_key *key, void *in, void *out, int *slot)
{
    pthread_mutex_lock(&cache_lock);
    int victim = -1;
    for (int i = 0; i < CACHE_SIZE; i++) {
        plan_entry *e = &cache[i];
        if (e->plan && memcmp(&e->key, key, sizeof *key) == 0) {
            e->refs++;
            e->last_use = ++cache_clock;
            *slot = i;
            pthread_mutex_unlock(&cache_lock);
            return e->plan;
        }
        if (!e->refs && (victim < 0 || !e->plan || (cache[victim].plan && e->last_use < cache[victim].last_use)))
            victim = i;
    }
    void *p = make_plan(key, in, out);
    if (p && victim >= 0) {
        plan_entry *e = &cache[victim];
        destroy_plan(e->key.f64, e->plan);
        e->key = *key;
        e->plan = p;
        e->refs = 1;
        e->last_use = ++cache_clock;
        *slot = victim;
    } else {
        *slot = -1;
    }
    pthread_mutex_unlock(&cache_lock);
    return p;
}

static void plan_release(const plan_key *key, void *p, int slot)
{
    pthread_mutex_lock(&cache_lock);
    if (slot >= 0)
        cache[slot].refs--;
    else
        destroy_plan(key->f64, p);
    pthread_mutex_unlock(&cache_lock);
}

static void execute(const plan_key *key, void *p, void *in, void *out)
{
    if (key->f64) {
        switch ((fft_kind)key->kind) {
        case T_C2C_FWD:
        case T_C2C_BWD: fftw_execute_dft(p, in, out); break;
        case T_R2C: fftw_execute_dft_r2c(p, in, out); break;
        case T_C2R: fftw_execute_dft_c2r(p, in, out); break;
        }
    } else {
        switch ((fft_kind)key->kind) {
        case T_C2C_FWD:
        case T_C2C_BWD: fftwf_execute_dft(p, in, out); break;
        case T_R2C: fftwf_execute_dft_r2c(p, in, out); break;
        case T_C2R: fftwf_execute_dft_c2r(p, in, out); break;
        }
    }
}

static int alignment_of(int f64, void *p) { return f64 ? fftw_alignment_of(p) : fftwf_alignment_of(p); }

static void scale_out(ft_kctx *k, ft_view *out, double s)
{
    int64_t cnt = (int64_t)ft_numel(&out->shape);
    if (out->dtype == FT_F64) {
        double *y = out->data;
#pragma omp parallel for num_threads(k->threads) if (cnt >= CPU_PAR_MIN)
        for (int64_t i = 0; i < cnt; i++)
            y[i] *= s;
    } else {
        float *y = out->data;
#pragma omp parallel for num_threads(k->threads) if (cnt >= CPU_PAR_MIN)
        for (int64_t i = 0; i < cnt; i++)
            y[i] = (float)((double)y[i] * s);
    }
}

/* irfft's input, truncated or zero-padded to the n/2+1 bins c2r reads, in a
 * scratch buffer that c2r may overwrite (it destroys its input). */
static void fill_c2r_scratch(ft_kctx *k, const ft_view *in, void *scratch, const plan_key *key, int64_t m)
{
    size_t esz = ft_dtype_size(in->dtype) * 2, row = (size_t)key->inner * esz;
    int64_t bins = key->in_len, keep = m < bins ? m : bins, outer = key->outer;
    const char *src = in->data;
    char *dst = scratch;
#pragma omp parallel for num_threads(k->threads) if (outer * bins * key->inner >= CPU_PAR_MIN)
    for (int64_t o = 0; o < outer; o++) {
        if (keep)
            memcpy(dst + (size_t)o * bins * row, src + (size_t)o * m * row, (size_t)keep * row);
        if (bins > keep)
            memset(dst + ((size_t)o * bins + keep) * row, 0, (size_t)(bins - keep) * row);
    }
}

ft_status cpu_fft(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_view *x = &in[0];
    ft_view *y = &out[0];
    int cplx_in = n->op != FT_OP_RFFT;
    int lrank = x->shape.rank - cplx_in, ax = n->params.fft.axis;
    if (ft_numel(&y->shape) == 0)
        return FT_OK;

    plan_key key;
    memset(&key, 0, sizeof key); /* padding too: keys are compared with memcmp */
    key.f64 = x->dtype == FT_F64;
    int64_t m;
    ft_fft_around_axis(&x->shape, lrank, ax, &key.outer, &m, &key.inner);
    if (n->op == FT_OP_FFT || n->op == FT_OP_IFFT) {
        key.kind = n->op == FT_OP_FFT ? T_C2C_FWD : T_C2C_BWD;
        key.n = key.in_len = key.out_len = m;
    } else if (n->op == FT_OP_RFFT) {
        key.kind = T_R2C;
        key.n = key.in_len = m;
        key.out_len = m / 2 + 1;
    } else if (n->op == FT_OP_IRFFT) {
        key.kind = T_C2R;
        key.n = key.out_len = y->shape.dims[ax];
        key.in_len = key.n / 2 + 1;
    } else {
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not a Fourier transform");
    }
    uint64_t work = ft_numel(&x->shape) > ft_numel(&y->shape) ? ft_numel(&x->shape) : ft_numel(&y->shape);
    key.threads = work >= CPU_PAR_MIN ? k->threads : 1;

    void *src = x->data, *scratch = NULL;
    if (key.kind == T_C2R) {
        size_t bytes = (size_t)(key.outer * key.in_len * key.inner) * 2 * ft_dtype_size(x->dtype);
        scratch = ft_malloc(bytes);
        if (!scratch)
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory: %zu bytes of scratch for irfft", bytes);
        fill_c2r_scratch(k, x, scratch, &key, m);
        src = scratch;
    }
    key.inplace = src == y->data;
    key.in_align = alignment_of(key.f64, src);
    key.out_align = alignment_of(key.f64, y->data);

    pthread_once(&threads_once, threads_init);
    int slot;
    void *p = plan_acquire(&key, src, y->data, &slot);
    if (!p) {
        free(scratch);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "FFTW could not plan a %s transform of length %lld "
                           "(%lld x %lld batch)", ft_dtype_name(x->dtype), (long long)key.n,
                           (long long)key.outer, (long long)key.inner);
    }
    execute(&key, p, src, y->data);
    plan_release(&key, p, slot);
    free(scratch);

    int inverse = n->op == FT_OP_IFFT || n->op == FT_OP_IRFFT;
    double s = ft_fft_scale(&n->params.fft, inverse, key.n);
    if (s != 1.0)
        scale_out(k, y, s);
    return FT_OK;
}

/* stft: signal [B, L, 1|2] cut into frames of n = frame_length every
 * frame_step samples, each multiplied by the window (input 1, when given),
 * transformed by one batched in-place complex FFT in a scratch buffer of
 * [B * frames, n] complex values, of which the first bins (n/2+1 when
 * onesided, else n) go to the output [B, frames, bins, 2]. */
#define STFT_FRAMES(T)                                                                                           \
    do {                                                                                                         \
        const T *x = in[0].data, *w = has_w ? (const T *)in[1].data : NULL;                                      \
        T *buf = scratch;                                                                                        \
        _Pragma("omp parallel for num_threads(k->threads) if (total >= CPU_PAR_MIN)")                            \
        for (int64_t r = 0; r < B * F; r++) {                                                                    \
            int64_t b = r / F, f = r % F;                                                                        \
            const T *src = x + (b * L + f * p->frame_step) * cw;                                                 \
            for (int64_t j = 0; j < len; j++) {                                                                  \
                T wj = w ? w[j] : (T)1;                                                                          \
                buf[2 * (r * len + j)] = src[j * cw] * wj;                                                       \
                buf[2 * (r * len + j) + 1] = cw == 2 ? src[j * cw + 1] * wj : (T)0;                              \
            }                                                                                                    \
        }                                                                                                        \
    } while (0)

ft_status cpu_stft(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out)
{
    const ft_loss_params *p = &n->params.loss;
    const ft_shape *xs = &in[0].shape, *ys = &out[0].shape;
    int64_t B = xs->dims[0], L = xs->dims[1], cw = xs->dims[2], F = ys->dims[1], bins = ys->dims[2];
    int64_t len = p->frame_length, total = B * F * len;
    int has_w = n->n_in > 1 && n->in[1] >= 0;
    if (B * F == 0)
        return FT_OK;
    size_t esz = ft_dtype_size(in[0].dtype), bytes = (size_t)total * 2 * esz;
    void *scratch = ft_malloc(bytes);
    if (!scratch)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory: %zu bytes of scratch for stft", bytes);
    if (in[0].dtype == FT_F64)
        STFT_FRAMES(double);
    else
        STFT_FRAMES(float);

    plan_key key;
    memset(&key, 0, sizeof key);
    key.kind = T_C2C_FWD;
    key.f64 = in[0].dtype == FT_F64;
    key.outer = B * F;
    key.inner = 1;
    key.n = key.in_len = key.out_len = len;
    key.threads = total >= CPU_PAR_MIN ? k->threads : 1;
    key.inplace = 1;
    key.in_align = key.out_align = alignment_of(key.f64, scratch);
    pthread_once(&threads_once, threads_init);
    int slot;
    void *plan = plan_acquire(&key, scratch, scratch, &slot);
    if (!plan) {
        free(scratch);
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "FFTW could not plan a %s transform of length %lld "
                           "(%lld frames)", ft_dtype_name(in[0].dtype), (long long)len, (long long)(B * F));
    }
    execute(&key, plan, scratch, scratch);
    plan_release(&key, plan, slot);
    size_t row = (size_t)bins * 2 * esz;
    for (int64_t r = 0; r < B * F; r++)
        memcpy((char *)out[0].data + (size_t)r * row, (char *)scratch + (size_t)(r * len) * 2 * esz, row);
    free(scratch);
    return FT_OK;
}
