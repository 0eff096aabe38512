/* CUDA fft, ifft, rfft, irfft and stft with cuFFT (C2C/R2C/C2R in f32, Z2Z/D2Z/Z2D
 * in f64; f16 and bf16 are widened to f32 and narrowed after, as the CPU
 * reference does).
 *
 * A transform along axis k of a row-major tensor is a batch of 1-D transforms
 * over [outer, len, inner] (complex numbers count as one element: the trailing
 * dim of 2 is the interleaved (re, im) layout cuFFT uses). cuFFT's advanced
 * layout has a single batch level, so:
 *   inner == 1          one plan, batch outer, stride 1, dist len;
 *   outer == 1          one plan, batch inner, stride inner, dist 1;
 *   both > 1            the batch-inner plan executed once per outer slice when
 *                       the slices are few or big enough to hide the launch
 *                       cost; otherwise the axis is moved last by the staging
 *                       copy into the workspace (and back by the finishing one)
 *                       and one plan covers everything.
 *
 * Plans are made on first use (the warmup run, before any CUDA graph capture)
 * with auto-allocation off, and kept in the context's cache for its lifetime:
 * the work area is part of the node's workspace, so executing never allocates.
 * Plans are never evicted: destroying one frees device memory, which a
 * capture in progress would not allow, and a graph has few distinct shapes.
 *
 * Staging (a copy into the workspace before the transform) happens for
 * 16-bit inputs (widening), for irfft (cuFFT's C2R overwrites its input, and
 * the n attribute truncates or zero-pads the half spectrum) and for the moved
 * axis. The imaginary parts of the DC bin and, for even n, of the Nyquist bin
 * are zeroed in irfft's staged spectrum: FFTW and NumPy ignore them, while
 * cuFFT's result would depend on them. cuFFT is unnormalised; the numpy.fft
 * norm is applied by the finishing kernel (fused with narrowing), or by an
 * in-place scaling kernel, with the product taken in double and rounded once
 * to the compute precision, as the CPU does. */
#include "cu.cuh"
extern "C" {
#include "../graph/infer_fft.h"
}

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_C2C_FWD, K_C2C_BWD, K_R2C, K_C2R } fft_kind;

/* One cached plan: everything cufftMakePlanMany64 was given. */
typedef struct cu_fft_plan {
    int type; /* cufftType */
    long long n, inembed, istride, idist, onembed, ostride, odist, batch;
    cufftHandle h;
    size_t work;
} cu_fft_plan;

struct cu_fft_cache {
    cu_fft_plan *v;
    int n, cap;
};

void cu_fft_cache_free(struct cu_fft_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++)
        cufftDestroy(c->v[i].h);
    free(c->v);
    free(c);
}

static int same_geometry(const cu_fft_plan *a, const cu_fft_plan *b)
{
    return a->type == b->type && a->n == b->n && a->inembed == b->inembed && a->istride == b->istride &&
           a->idist == b->idist && a->onembed == b->onembed && a->ostride == b->ostride && a->odist == b->odist &&
           a->batch == b->batch;
}

/* The cached plan of want's geometry, made on first use. */
static ft_status get_plan(ft_kctx *k, const ft_node *n, const cu_fft_plan *want, const cu_fft_plan **out)
{
    ft_backend_ctx *be = k->be;
    if (!be->fft) {
        be->fft = (struct cu_fft_cache *)calloc(1, sizeof *be->fft);
        if (!be->fft)
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the cuFFT plan cache");
    }
    struct cu_fft_cache *c = be->fft;
    for (int i = 0; i < c->n; i++)
        if (same_geometry(&c->v[i], want)) {
            *out = &c->v[i];
            return FT_OK;
        }
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        cu_fft_plan *v = (cu_fft_plan *)realloc(c->v, (size_t)cap * sizeof *v);
        if (!v)
            return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "out of memory for the cuFFT plan cache");
        c->v = v;
        c->cap = cap;
    }
    cu_fft_plan p = *want;
    CUFFT_TRY(k, n, cufftCreate(&p.h));
    long long nn = p.n, ie = p.inembed, oe = p.onembed;
    size_t work = 0;
    cufftResult r = cufftSetAutoAllocation(p.h, 0);
    if (r == CUFFT_SUCCESS)
        r = cufftMakePlanMany64(p.h, 1, &nn, &ie, p.istride, p.idist, &oe, p.ostride, p.odist, (cufftType)p.type,
                                p.batch, &work);
    if (r != CUFFT_SUCCESS) {
        cufftDestroy(p.h);
        return cu_fail(k, n, "cufftMakePlanMany64(length n, batch, strides of the transform)", cu_cufft_str(r),
                       "cuFFT", __FILE__, __LINE__);
    }
    p.work = work;
    c->v[c->n] = p;
    *out = &c->v[c->n++];
    return FT_OK;
}

/* ---------------------------------------------------------------- kernels */

/* 16-bit (or any) input widened to the compute type, same layout. */
template <class T, class C> __global__ void fft_widen(const T *__restrict__ x, C *__restrict__ buf, int64_t cnt)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < cnt; e += stride)
        buf[e] = (C)cu_load(x, e);
}

/* The transform's input in the workspace: x is [outer, m, inner] elements of W
 * values; buf gets [outer, L, inner] (or [outer, inner, L] when transposed),
 * bins j >= m zero, and the imaginary part of bins 0 and nyq zeroed when
 * nyq >= 0 (irfft). */
template <class T, class C, int W>
__global__ void fft_stage(const T *__restrict__ x, C *__restrict__ buf, int64_t outer, int64_t m, int64_t L,
                          int64_t inner, int transposed, int64_t nyq)
{
    int64_t total = outer * L * inner, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t o, j, i;
        if (transposed) {
            j = e % L;
            int64_t r = e / L;
            i = r % inner;
            o = r / inner;
        } else {
            i = e % inner;
            int64_t r = e / inner;
            j = r % L;
            o = r / L;
        }
        C v[W];
        if (j < m) {
            int64_t src = ((o * m + j) * inner + i) * W;
#pragma unroll
            for (int c = 0; c < W; c++)
                v[c] = (C)cu_load(x, src + c);
        } else {
#pragma unroll
            for (int c = 0; c < W; c++)
                v[c] = (C)0;
        }
        if (W == 2 && nyq >= 0 && (j == 0 || j == nyq))
            v[W - 1] = (C)0;
#pragma unroll
        for (int c = 0; c < W; c++)
            buf[e * W + c] = v[c];
    }
}

/* The transform's result into y [outer, L, inner] elements of W values, read
 * from buf in the same layout or transposed ([outer, inner, L]); scaled by s
 * (in double, rounded once to C) when do_scale, then stored as T. */
template <class C, class T, int W>
__global__ void fft_finish(const C *__restrict__ buf, T *__restrict__ y, int64_t outer, int64_t L, int64_t inner,
                           int transposed, double s, int do_scale)
{
    int64_t total = outer * L * inner, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        int64_t src = e;
        if (transposed) {
            int64_t i = e % inner, r = e / inner;
            int64_t j = r % L, o = r / L;
            src = (o * inner + i) * L + j;
        }
#pragma unroll
        for (int c = 0; c < W; c++) {
            C v = buf[src * W + c];
            if (do_scale)
                v = (C)((double)v * s);
            cu_store(y, e * W + c, v);
        }
    }
}

/* The norm applied in place to an f32/f64 result cuFFT wrote into y. */
template <class C> __global__ void fft_scale(C *y, int64_t cnt, double s)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < cnt; e += stride)
        y[e] = (C)((double)y[e] * s);
}

/* ---------------------------------------------------------------- launchers */

/* Everything one transform needs, in compute elements (a complex number is one
 * element of W = 2 values). */
typedef struct fft_job {
    fft_kind kind;
    int f64;
    int64_t outer, inner, n;
    int64_t m;                 /* input length along the axis (irfft: bins given) */
    int64_t in_len, out_len;   /* lengths along the axis as cuFFT reads / writes them */
    int in_w, out_w;           /* values per element: 1 real, 2 complex */
    int transposed, loop;      /* layout choice (see the top of the file) */
    int stage_in, stage_out;
    double scale;
} fft_job;

static size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

/* Stage x into buf (compute type C) as the job says. */
template <class T, class C>
static ft_status launch_stage(ft_kctx *k, const ft_node *n, const fft_job *j, const void *x, C *buf)
{
    cudaStream_t s = k->be->stream;
    int64_t nyq = j->kind == K_C2R ? (j->n % 2 == 0 ? j->n / 2 : 0) : -1;
    int64_t elems = j->outer * j->in_len * j->inner;
    if (!j->transposed && j->m == j->in_len && nyq < 0) {
        int64_t cnt = elems * j->in_w;
        fft_widen<T, C><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, s>>>((const T *)x, buf, cnt);
    } else if (j->in_w == 2) {
        fft_stage<T, C, 2><<<cu_grid(k->be, (uint64_t)elems), CU_BLOCK, 0, s>>>(
            (const T *)x, buf, j->outer, j->m, j->in_len, j->inner, j->transposed, nyq);
    } else {
        fft_stage<T, C, 1><<<cu_grid(k->be, (uint64_t)elems), CU_BLOCK, 0, s>>>(
            (const T *)x, buf, j->outer, j->m, j->in_len, j->inner, j->transposed, nyq);
    }
    CU_LAUNCHED(k, n);
    return FT_OK;
}

template <class C, class T>
static ft_status launch_finish(ft_kctx *k, const ft_node *n, const fft_job *j, const C *buf, void *y)
{
    cudaStream_t s = k->be->stream;
    int64_t elems = j->outer * j->out_len * j->inner;
    int do_scale = j->scale != 1.0;
    if (j->out_w == 2)
        fft_finish<C, T, 2><<<cu_grid(k->be, (uint64_t)elems), CU_BLOCK, 0, s>>>(
            buf, (T *)y, j->outer, j->out_len, j->inner, j->transposed, j->scale, do_scale);
    else
        fft_finish<C, T, 1><<<cu_grid(k->be, (uint64_t)elems), CU_BLOCK, 0, s>>>(
            buf, (T *)y, j->outer, j->out_len, j->inner, j->transposed, j->scale, do_scale);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* One cufftExec call of the plan's type on (in, out), offsets already applied. */
static cufftResult exec_one(const fft_job *j, cufftHandle h, void *in, void *out)
{
    if (j->f64) {
        switch (j->kind) {
        case K_C2C_FWD: return cufftExecZ2Z(h, (cufftDoubleComplex *)in, (cufftDoubleComplex *)out, CUFFT_FORWARD);
        case K_C2C_BWD: return cufftExecZ2Z(h, (cufftDoubleComplex *)in, (cufftDoubleComplex *)out, CUFFT_INVERSE);
        case K_R2C: return cufftExecD2Z(h, (cufftDoubleReal *)in, (cufftDoubleComplex *)out);
        case K_C2R: return cufftExecZ2D(h, (cufftDoubleComplex *)in, (cufftDoubleReal *)out);
        }
    } else {
        switch (j->kind) {
        case K_C2C_FWD: return cufftExecC2C(h, (cufftComplex *)in, (cufftComplex *)out, CUFFT_FORWARD);
        case K_C2C_BWD: return cufftExecC2C(h, (cufftComplex *)in, (cufftComplex *)out, CUFFT_INVERSE);
        case K_R2C: return cufftExecR2C(h, (cufftReal *)in, (cufftComplex *)out);
        case K_C2R: return cufftExecC2R(h, (cufftComplex *)in, (cufftReal *)out);
        }
    }
    return CUFFT_INVALID_VALUE;
}

static cufftType plan_type(const fft_job *j)
{
    switch (j->kind) {
    case K_C2C_FWD:
    case K_C2C_BWD: return j->f64 ? CUFFT_Z2Z : CUFFT_C2C;
    case K_R2C: return j->f64 ? CUFFT_D2Z : CUFFT_R2C;
    case K_C2R: return j->f64 ? CUFFT_Z2D : CUFFT_C2R;
    }
    return CUFFT_C2C;
}

/* Executions of the batch-inner plan once per outer slice stay cheap against
 * the data when the slices are few or hold at least this many elements. */
#define LOOP_MAX_SLICES 8
#define LOOP_MIN_SLICE ((int64_t)1 << 18)

CU_KFN(cu_fft)
{
    const ft_view *x = &in[0];
    ft_view *y = &out[0];
    ft_dtype dt = x->dtype;
    int cplx_in = n->op != FT_OP_RFFT;
    int lrank = x->shape.rank - cplx_in, ax = n->params.fft.axis;
    if (dt != FT_F16 && dt != FT_BF16 && dt != FT_F32 && dt != FT_F64)
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda %s kernel",
                           ft_dtype_name(dt), ft_op_name(n->op));
    if (ft_numel(&y->shape) == 0)
        return FT_OK;

    fft_job j;
    memset(&j, 0, sizeof j);
    j.f64 = dt == FT_F64;
    ft_fft_around_axis(&x->shape, lrank, ax, &j.outer, &j.m, &j.inner);
    if (n->op == FT_OP_FFT || n->op == FT_OP_IFFT) {
        j.kind = n->op == FT_OP_FFT ? K_C2C_FWD : K_C2C_BWD;
        j.n = j.in_len = j.out_len = j.m;
        j.in_w = j.out_w = 2;
    } else if (n->op == FT_OP_RFFT) {
        j.kind = K_R2C;
        j.n = j.in_len = j.m;
        j.out_len = j.m / 2 + 1;
        j.in_w = 1;
        j.out_w = 2;
    } else if (n->op == FT_OP_IRFFT) {
        j.kind = K_C2R;
        j.n = j.out_len = y->shape.dims[ax];
        j.in_len = j.n / 2 + 1;
        j.in_w = 2;
        j.out_w = 1;
    } else {
        return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "not a Fourier transform");
    }
    int inverse = n->op == FT_OP_IFFT || n->op == FT_OP_IRFFT;
    j.scale = ft_fft_scale(&n->params.fft, inverse, j.n);

    /* Layout. Per-slice executions offset the real side of R2C/C2R by
     * n * inner values: an odd count would misalign it for cuFFT's
     * complex-width accesses, so that case moves the axis instead. */
    if (j.outer > 1 && j.inner > 1) {
        int real_side_ok = j.kind == K_C2C_FWD || j.kind == K_C2C_BWD || (j.n * j.inner) % 2 == 0;
        if (real_side_ok && (j.outer <= LOOP_MAX_SLICES || j.n * j.inner >= LOOP_MIN_SLICE))
            j.loop = 1;
        else
            j.transposed = 1;
    }
    int narrow = dt == FT_F16 || dt == FT_BF16;
    j.stage_in = narrow || j.kind == K_C2R || j.transposed;
    j.stage_out = narrow || j.transposed;

    cu_fft_plan want;
    memset(&want, 0, sizeof want);
    want.type = (int)plan_type(&j);
    want.n = j.n;
    /* rank 1: the embed sizes take no part in addressing; n is valid for both sides */
    want.inembed = want.onembed = j.n;
    if (j.inner == 1 || j.transposed) {
        want.istride = want.ostride = 1;
        want.idist = j.in_len;
        want.odist = j.out_len;
        want.batch = j.outer * j.inner;
    } else {
        want.istride = want.ostride = j.inner;
        want.idist = want.odist = 1;
        want.batch = j.inner;
    }
    const cu_fft_plan *plan = NULL;
    ft_status st = get_plan(k, n, &want, &plan);
    if (st)
        return st;

    size_t csz = j.f64 ? sizeof(double) : sizeof(float);
    size_t in_bytes = j.stage_in ? (size_t)(j.outer * j.in_len * j.inner * j.in_w) * csz : 0;
    size_t out_bytes = j.stage_out ? (size_t)(j.outer * j.out_len * j.inner * j.out_w) * csz : 0;
    size_t total = align256(in_bytes) + align256(out_bytes) + align256(plan->work);
    void *ws = NULL;
    if ((st = cu_workspace(k, n, total ? total : 256, &ws)))
        return st;
    char *wsc = (char *)ws;
    void *buf_in = wsc, *buf_out = wsc + align256(in_bytes);
    void *work = wsc + align256(in_bytes) + align256(out_bytes);

    if (j.stage_in) {
        switch (dt) {
        case FT_F16: st = launch_stage<__half, float>(k, n, &j, x->data, (float *)buf_in); break;
        case FT_BF16: st = launch_stage<__nv_bfloat16, float>(k, n, &j, x->data, (float *)buf_in); break;
        case FT_F32: st = launch_stage<float, float>(k, n, &j, x->data, (float *)buf_in); break;
        case FT_F64: st = launch_stage<double, double>(k, n, &j, x->data, (double *)buf_in); break;
        case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
        case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
        }
        if (st)
            return st;
    }

    char *src = (char *)(j.stage_in ? buf_in : x->data);
    char *dst = (char *)(j.stage_out ? buf_out : y->data);
    CUFFT_TRY(k, n, cufftSetStream(plan->h, k->be->stream));
    CUFFT_TRY(k, n, cufftSetWorkArea(plan->h, work));
    int64_t execs = j.loop ? j.outer : 1;
    size_t in_step = (size_t)(j.in_len * j.inner * j.in_w) * csz;
    size_t out_step = (size_t)(j.out_len * j.inner * j.out_w) * csz;
    for (int64_t o = 0; o < execs; o++)
        CUFFT_TRY(k, n, exec_one(&j, plan->h, src + (size_t)o * in_step, dst + (size_t)o * out_step));

    if (j.stage_out) {
        switch (dt) {
        case FT_F16: st = launch_finish<float, __half>(k, n, &j, (const float *)buf_out, y->data); break;
        case FT_BF16: st = launch_finish<float, __nv_bfloat16>(k, n, &j, (const float *)buf_out, y->data); break;
        case FT_F32: st = launch_finish<float, float>(k, n, &j, (const float *)buf_out, y->data); break;
        case FT_F64: st = launch_finish<double, double>(k, n, &j, (const double *)buf_out, y->data); break;
        case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
        case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
        }
        return st;
    }
    if (j.scale != 1.0) {
        int64_t cnt = (int64_t)ft_numel(&y->shape);
        if (j.f64)
            fft_scale<double><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, k->be->stream>>>((double *)y->data, cnt,
                                                                                             j.scale);
        else
            fft_scale<float><<<cu_grid(k->be, (uint64_t)cnt), CU_BLOCK, 0, k->be->stream>>>((float *)y->data, cnt,
                                                                                           j.scale);
        CU_LAUNCHED(k, n);
    }
    return FT_OK;
}

/* ---------------------------------------------------------------- stft */

/* Frames of the signal [B, L, cw] times the window into buf [B * F, len]
 * complex values of the compute type C. */
template <class T, class C>
__global__ void stft_frames(const T *__restrict__ x, const T *__restrict__ w, C *__restrict__ buf, int64_t F,
                            int64_t L, int64_t cw, int64_t len, int64_t step, int64_t total)
{
    for (int64_t e = cu_grid_start(); e < total; e += cu_grid_step()) {
        int64_t j = e % len, r = e / len, b = r / F, f = r % F;
        const T *src = x + (b * L + f * step + j) * cw;
        C wj = w ? (C)cu_load(w, j) : (C)1;
        buf[2 * e] = (C)cu_load(src, 0) * wj;
        buf[2 * e + 1] = cw == 2 ? (C)cu_load(src, 1) * wj : (C)0;
    }
}

/* The first bins of each frame's spectrum into y [B * F, bins, 2]. */
template <class C, class T>
__global__ void stft_bins(const C *__restrict__ buf, T *__restrict__ y, int64_t len, int64_t bins, int64_t total)
{
    for (int64_t e = cu_grid_start(); e < total; e += cu_grid_step()) {
        int64_t kb = e % bins, r = e / bins;
        cu_store(y, 2 * e, buf[2 * (r * len + kb)]);
        cu_store(y, 2 * e + 1, buf[2 * (r * len + kb) + 1]);
    }
}

/* Frames, transform, bins for storage type T (compute type cu_acc<T>). */
template <class T>
static ft_status stft_run(ft_kctx *k, const ft_node *n, const ft_view *in, ft_view *out, const fft_job *j,
                          const cu_fft_plan *plan, char *buf, int has_w)
{
    typedef typename cu_acc<T>::type C;
    const ft_loss_params *p = &n->params.loss;
    const ft_shape *xs = &in[0].shape, *ys = &out[0].shape;
    int64_t F = ys->dims[1], bins = ys->dims[2], len = p->frame_length, rows = xs->dims[0] * F;
    int64_t total = rows * len, outs = rows * bins;
    cudaStream_t s = k->be->stream;
    stft_frames<T, C><<<cu_grid(k->be, (uint64_t)total), CU_BLOCK, 0, s>>>(
        (const T *)in[0].data, has_w ? (const T *)in[1].data : NULL, (C *)buf, F, xs->dims[1], xs->dims[2], len,
        p->frame_step, total);
    CU_LAUNCHED(k, n);
    CUFFT_TRY(k, n, exec_one(j, plan->h, buf, buf));
    stft_bins<C, T><<<cu_grid(k->be, (uint64_t)outs), CU_BLOCK, 0, s>>>((const C *)buf, (T *)out[0].data, len, bins,
                                                                      outs);
    CU_LAUNCHED(k, n);
    return FT_OK;
}

/* stft as the CPU's (src/cpu/fft.c cpu_stft): frames staged and windowed in
 * the workspace, one batched in-place C2C (Z2Z) transform, bins copied out. */
CU_KFN(cu_stft)
{
    const ft_loss_params *p = &n->params.loss;
    const ft_shape *xs = &in[0].shape, *ys = &out[0].shape;
    ft_dtype dt = in[0].dtype;
    int64_t len = p->frame_length, rows = xs->dims[0] * ys->dims[1];
    int has_w = n->n_in > 1 && n->in[1] >= 0;
    if (rows == 0)
        return FT_OK;
    fft_job j;
    memset(&j, 0, sizeof j);
    j.kind = K_C2C_FWD;
    j.f64 = dt == FT_F64;
    cu_fft_plan want;
    memset(&want, 0, sizeof want);
    want.type = (int)plan_type(&j);
    want.n = want.inembed = want.onembed = len;
    want.istride = want.ostride = 1;
    want.idist = want.odist = len;
    want.batch = rows;
    const cu_fft_plan *plan = NULL;
    ft_status st = get_plan(k, n, &want, &plan);
    if (st)
        return st;
    size_t csz = j.f64 ? sizeof(double) : sizeof(float), buf_bytes = (size_t)(rows * len) * 2 * csz;
    void *ws = NULL;
    if ((st = cu_workspace(k, n, align256(buf_bytes) + align256(plan->work), &ws)))
        return st;
    char *buf = (char *)ws, *work = buf + align256(buf_bytes);
    CUFFT_TRY(k, n, cufftSetStream(plan->h, k->be->stream));
    CUFFT_TRY(k, n, cufftSetWorkArea(plan->h, work));
    switch (dt) {
    case FT_F16: return stft_run<__half>(k, n, in, out, &j, plan, buf, has_w);
    case FT_BF16: return stft_run<__nv_bfloat16>(k, n, in, out, &j, plan, buf, has_w);
    case FT_F32: return stft_run<float>(k, n, in, out, &j, plan, buf, has_w);
    case FT_F64: return stft_run<double>(k, n, in, out, &j, plan, buf, has_w);
    case FT_I8: case FT_I16: case FT_I32: case FT_I64: case FT_U8: case FT_U16: case FT_U32: case FT_U64:
    case FT_BOOL: FT_CASE_LOWP: case FT_STRING: case FT_DTYPE_COUNT: break;
    }
    return ft_node_err(k->err, FT_ERUNTIME, k->g, n, "dtype %s is not supported by the cuda stft kernel",
                       ft_dtype_name(dt));
}
