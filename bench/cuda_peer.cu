/* The peers that ftrun's CUDA backend is measured against (bench/cuda.py):
 *
 *   cuda_peer copy BYTES ITERS               cudaMemcpyAsync device to device
 *   cuda_peer gemm DTYPE M N K ITERS [tf32]  cublasGemmEx, row-major C[M,N] = A[M,K] B[K,N],
 *                                            DTYPE f32 | bf16 | f16 (C has DTYPE too)
 *   cuda_peer info                           device, driver, runtime and cuBLAS versions
 *
 * Each prints one JSON line on stdout. Build:
 *   nvcc -O3 -std=c++17 -arch=sm_90 -o build/cuda_peer bench/cuda_peer.cu -lcublas
 * Exit status: 0 ok, 1 a CUDA or cuBLAS call failed (named on stderr), 2 usage.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CUDA_CHECK(call)                                                                                    \
    do {                                                                                                    \
        cudaError_t e_ = (call);                                                                            \
        if (e_ != cudaSuccess) {                                                                            \
            fprintf(stderr, "cuda_peer: %s failed: %s (%s) at %s:%d\n", #call, cudaGetErrorName(e_),       \
                    cudaGetErrorString(e_), __FILE__, __LINE__);                                            \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

#define CUBLAS_CHECK(call)                                                                                  \
    do {                                                                                                    \
        cublasStatus_t s_ = (call);                                                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                  \
            fprintf(stderr, "cuda_peer: %s failed: %s (%s) at %s:%d\n", #call, cublasGetStatusName(s_),    \
                    cublasGetStatusString(s_), __FILE__, __LINE__);                                         \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

/* Warm-up runs before the timed ones: the first copies and products pay for
 * lazy module loading, cuBLAS heuristics and clocks ramping up. */
static const int WARMUP = 10;

[[noreturn]] static void usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "cuda_peer: %s\n", msg);
    fprintf(stderr,
            "usage: cuda_peer copy BYTES ITERS\n"
            "       cuda_peer gemm f32|bf16|f16 M N K ITERS [tf32]\n"
            "       cuda_peer info\n");
    exit(2);
}

static long long parse_count(const char *s, const char *what, long long max)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > max) {
        fprintf(stderr, "cuda_peer: %s must be an integer from 1 to %lld, not '%s'\n", what, max, s);
        usage(NULL);
    }
    return v;
}

/* Small pseudo-random values in [-1, 1), so that the products run on data
 * like ftrun's "uniform" inputs (zeros would let the GPU draw less power and
 * clock higher than on real data). */
template <typename T> __device__ T from_float(float v);
template <> __device__ float from_float<float>(float v) { return v; }
template <> __device__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T> __global__ void fill_kernel(T *p, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i ^ (uint32_t)(i >> 32) ^ (seed * 0x9e3779b9u);
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        p[i] = from_float<T>((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

template <typename T> static void fill(void *p, size_t n, uint32_t seed, cudaStream_t s)
{
    fill_kernel<T><<<1024, 256, 0, s>>>(static_cast<T *>(p), n, seed);
    CUDA_CHECK(cudaGetLastError());
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

/* Times op() the way ftrun times one run of a graph (src/runtime/exec.c):
 * an event, the work, an event, then a wait, so every run starts on an idle
 * stream and both sides include the same launch gap. */
template <typename Op> static std::vector<float> time_runs(cudaStream_t s, long long iters, Op op)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < WARMUP; i++)
        op();
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> ms;
    ms.reserve((size_t)iters);
    for (long long i = 0; i < iters; i++) {
        CUDA_CHECK(cudaEventRecord(start, s));
        op();
        CUDA_CHECK(cudaEventRecord(stop, s));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return ms;
}

static int cmd_copy(int argc, char **argv)
{
    if (argc != 4)
        usage("copy takes BYTES and ITERS");
    size_t bytes = (size_t)parse_count(argv[2], "BYTES", 1LL << 40);
    long long iters = parse_count(argv[3], "ITERS", 1000000);
    CUDA_CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *src = NULL, *dst = NULL;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaMemsetAsync(src, 0x3c, bytes, s));
    CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s));
    std::vector<float> ms =
        time_runs(s, iters, [&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); });
    double med = median(ms), lo = *std::min_element(ms.begin(), ms.end());
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaStreamDestroy(s));
    /* a copy reads BYTES and writes BYTES */
    printf("{\"what\": \"copy\", \"bytes\": %zu, \"iters\": %lld, \"warmup\": %d, \"median_ms\": %.6f, "
           "\"min_ms\": %.6f, \"gbytes_per_s\": %.3f}\n",
           bytes, iters, WARMUP, med, lo, med > 0 ? 2.0 * (double)bytes / (med * 1e6) : 0.0);
    return 0;
}

static int cmd_gemm(int argc, char **argv)
{
    if (argc != 7 && argc != 8)
        usage("gemm takes DTYPE M N K ITERS [tf32]");
    const char *dt = argv[2];
    long long m = parse_count(argv[3], "M", 1 << 20), n = parse_count(argv[4], "N", 1 << 20),
              k = parse_count(argv[5], "K", 1 << 20);
    long long iters = parse_count(argv[6], "ITERS", 1000000);
    bool tf32 = false;
    if (argc == 8) {
        if (strcmp(argv[7], "tf32"))
            usage("the optional last argument of gemm is 'tf32'");
        tf32 = true;
    }
    cudaDataType_t type;
    size_t esize;
    void (*filler)(void *, size_t, uint32_t, cudaStream_t);
    if (!strcmp(dt, "f32")) {
        type = CUDA_R_32F, esize = 4, filler = fill<float>;
    } else if (!strcmp(dt, "bf16")) {
        type = CUDA_R_16BF, esize = 2, filler = fill<__nv_bfloat16>;
    } else if (!strcmp(dt, "f16")) {
        type = CUDA_R_16F, esize = 2, filler = fill<__half>;
    } else {
        usage("DTYPE must be f32, bf16 or f16");
    }
    if (tf32 && type != CUDA_R_32F)
        usage("tf32 applies to f32 only");

    CUDA_CHECK(cudaSetDevice(0));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    /* The compute type alone decides TF32 (CUBLAS_COMPUTE_32F never uses it);
     * the default math mode keeps a TF32 handle setting from overriding it. */
    CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    void *a = NULL, *b = NULL, *c = NULL;
    size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    CUDA_CHECK(cudaMalloc(&a, na * esize));
    CUDA_CHECK(cudaMalloc(&b, nb * esize));
    CUDA_CHECK(cudaMalloc(&c, nc * esize));
    filler(a, na, 1, s);
    filler(b, nb, 2, s);
    CUDA_CHECK(cudaMemsetAsync(c, 0, nc * esize, s));
    const float alpha = 1.0f, beta = 0.0f;
    cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    /* cuBLAS is column-major: a row-major X is X^T to it, so row-major
     * C = A B is computed as C^T = B^T A^T, i.e. (N x K)(K x M), swapping A and B. */
    std::vector<float> ms = time_runs(s, iters, [&] {
        CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha, b, type, (int)n, a,
                                  type, (int)k, &beta, c, type, (int)n, compute, CUBLAS_GEMM_DEFAULT));
    });
    double med = median(ms), lo = *std::min_element(ms.begin(), ms.end());
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaStreamDestroy(s));
    double flops = 2.0 * (double)m * (double)n * (double)k;
    printf("{\"what\": \"gemm\", \"dtype\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"tf32\": %s, "
           "\"iters\": %lld, \"warmup\": %d, \"median_ms\": %.6f, \"min_ms\": %.6f, \"tflops\": %.3f}\n",
           dt, m, n, k, tf32 ? "true" : "false", iters, WARMUP, med, lo, med > 0 ? flops / (med * 1e9) : 0.0);
    return 0;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static int cmd_info(int argc, char **argv)
{
    (void)argv;
    if (argc != 2)
        usage("info takes no arguments");
    int driver = 0, runtime = 0, count = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(cudaGetDeviceCount(&count));
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    int bl_major = 0, bl_minor = 0, bl_patch = 0;
    CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &bl_major));
    CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &bl_minor));
    CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &bl_patch));
    printf("{\"what\": \"info\", \"devices\": %d, \"name\": ", count);
    print_json_string(p.name);
    printf(", \"cc\": \"%d.%d\", \"sms\": %d, \"memory_gib\": %.1f, \"driver\": \"%d.%d\", \"runtime\": \"%d.%d\", "
           "\"cublas\": \"%d.%d.%d\"}\n",
           p.major, p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024), driver / 1000,
           driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, bl_major, bl_minor, bl_patch);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage(NULL);
    int rc;
    if (!strcmp(argv[1], "copy"))
        rc = cmd_copy(argc, argv);
    else if (!strcmp(argv[1], "gemm"))
        rc = cmd_gemm(argc, argv);
    else if (!strcmp(argv[1], "info"))
        rc = cmd_info(argc, argv);
    else
        usage("the command is copy, gemm or info");
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cuda_peer: writing the result failed: %s\n", strerror(errno));
        return 1;
    }
    return rc;
}
