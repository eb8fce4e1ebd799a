// cal_kernels — CUDA kernels for GELU, layer norm, embeddings and precision conversion (see
// cal_kernels.h). Templates give the float and __half versions of each.
#include "cal_kernels.h"

#include <cuda_fp16.h>

template <typename T> __device__ float ld(const T *p, long i);
template <> __device__ float ld<float>(const float *p, long i) { return p[i]; }
template <> __device__ float ld<__half>(const __half *p, long i) { return __half2float(p[i]); }
template <typename T> __device__ void st(T *p, long i, float v);
template <> __device__ void st<float>(float *p, long i, float v) { p[i] = v; }
template <> __device__ void st<__half>(__half *p, long i, float v) { p[i] = __float2half(v); }

template <typename T> __global__ void gelu_k(const T *x, T *y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float v = ld(x, i);
        st(y, i, 0.5f * v * (1.0f + erff(v * 0.70710678f)));
    }
}

// One block per row: mean and variance by a shared-memory reduction, then normalise.
template <typename T>
__global__ void layernorm_k(const T *x, T *y, const float *g, const float *b, int d, float eps)
{
    __shared__ float s1[256], s2[256];
    const T *xr = x + (long)blockIdx.x * d;
    T *yr = y + (long)blockIdx.x * d;
    float a = 0, q = 0;
    for (int k = threadIdx.x; k < d; k += blockDim.x) {
        float v = ld(xr, k);
        a += v;
        q += v * v;
    }
    s1[threadIdx.x] = a;
    s2[threadIdx.x] = q;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) {
            s1[threadIdx.x] += s1[threadIdx.x + w];
            s2[threadIdx.x] += s2[threadIdx.x + w];
        }
        __syncthreads();
    }
    float mean = s1[0] / d, var = fmaxf(s2[0] / d - mean * mean, 0.0f), inv = rsqrtf(var + eps);
    for (int k = threadIdx.x; k < d; k += blockDim.x)
        st(yr, k, (ld(xr, k) - mean) * inv * g[k] + b[k]);
}

template <typename T>
__global__ void embed_k(const int32_t *ids, const T *word, const T *pos, const T *type, T *y,
                        long rows, int seq, int d)
{
    long n = rows * d;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long r = i / d;
        int k = (int)(i % d);
        float v = ld(word, (long)ids[r] * d + k) + ld(pos, (r % seq) * d + k);
        if (type)
            v += ld(type, k);
        st(y, i, v);
    }
}

__global__ void to_half_k(const float *x, __half *y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        y[i] = __float2half(x[i]);
}

__global__ void to_float_k(const __half *x, float *y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        y[i] = __half2float(x[i]);
}

static int blocks(long n)
{
    long b = (n + 255) / 256;
    return (int)(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

extern "C" cudaError_t cal_cu_gelu(const void *x, void *y, long n, int half, cudaStream_t s)
{
    if (half)
        gelu_k<<<blocks(n), 256, 0, s>>>((const __half *)x, (__half *)y, n);
    else
        gelu_k<<<blocks(n), 256, 0, s>>>((const float *)x, (float *)y, n);
    return cudaGetLastError();
}

extern "C" cudaError_t cal_cu_layernorm(const void *x, void *y, const float *g, const float *b,
                                        long rows, int d, float eps, int half, cudaStream_t s)
{
    if (half)
        layernorm_k<<<(unsigned)rows, 256, 0, s>>>((const __half *)x, (__half *)y, g, b, d, eps);
    else
        layernorm_k<<<(unsigned)rows, 256, 0, s>>>((const float *)x, (float *)y, g, b, d, eps);
    return cudaGetLastError();
}

extern "C" cudaError_t cal_cu_embed(const int32_t *ids, const void *word, const void *pos,
                                    const void *type, void *y, long rows, int seq, int d,
                                    int half, cudaStream_t s)
{
    long n = rows * d;
    if (half)
        embed_k<<<blocks(n), 256, 0, s>>>(ids, (const __half *)word, (const __half *)pos,
                                          (const __half *)type, (__half *)y, rows, seq, d);
    else
        embed_k<<<blocks(n), 256, 0, s>>>(ids, (const float *)word, (const float *)pos,
                                          (const float *)type, (float *)y, rows, seq, d);
    return cudaGetLastError();
}

extern "C" cudaError_t cal_cu_convert(const void *x, void *y, long n, int to_half, cudaStream_t s)
{
    if (to_half)
        to_half_k<<<blocks(n), 256, 0, s>>>((const float *)x, (__half *)y, n);
    else
        to_float_k<<<blocks(n), 256, 0, s>>>((const __half *)x, (float *)y, n);
    return cudaGetLastError();
}
