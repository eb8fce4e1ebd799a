// cal_kernels — CUDA kernels for GELU, layer norm, embeddings, precision conversion, the fused
// groups' epilogue and channels-last concatenation (see cal_kernels.h). Templates give the
// float and __half versions of each; the epilogue's element rule is cal_epi.h's, shared with
// the CPU tests.
#include "cal_kernels.h"

#include <cuda_fp16.h>

#include "cal_epi.h"

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

// y = act(x * scale[c] + bias[c] + z), element by element (x may be y).
template <typename T>
__global__ void epi_k(const T *x, T *y, long n, int c, long hw, int nhwc, const float *scale,
                      const float *bias, const T *z, int act)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        st(y, i, cal_epi_apply(ld(x, i), cal_epi_channel(i, c, hw, nhwc), scale, bias,
                               z ? ld(z, i) : 0.0f, act));
}

// The same on eight halves at a time (16-byte loads): the eight are consecutive channels
// (channels-last, c a multiple of 8) or one channel (NCHW, hw a multiple of 8).
__global__ void epi8_k(const uint4 *x, uint4 *y, long n8, int c, long hw, int nhwc,
                       const float *scale, const float *bias, const uint4 *z, int act)
{
    for (long j = blockIdx.x * (long)blockDim.x + threadIdx.x; j < n8; j += (long)gridDim.x * blockDim.x) {
        uint4 xv = x[j], zv = z ? z[j] : make_uint4(0, 0, 0, 0), yv;
        const __half *xh = (const __half *)&xv, *zh = (const __half *)&zv;
        __half *yh = (__half *)&yv;
        long ch0 = cal_epi_channel(j * 8, c, hw, nhwc);
        for (int k = 0; k < 8; k++)
            yh[k] = __float2half(cal_epi_apply(__half2float(xh[k]), nhwc ? ch0 + k : ch0, scale,
                                               bias, z ? __half2float(zh[k]) : 0.0f, act));
        y[j] = yv;
    }
}

extern "C" cudaError_t cal_cu_epilogue(const void *x, void *y, long n, int c, long hw, int nhwc,
                                       const float *scale, const float *bias, const void *z,
                                       int act, int half, cudaStream_t s)
{
    if (half && n % 8 == 0 && (nhwc ? c % 8 == 0 : hw % 8 == 0)) {
        long n8 = n / 8;
        epi8_k<<<blocks(n8), 256, 0, s>>>((const uint4 *)x, (uint4 *)y, n8, c, hw, nhwc, scale,
                                          bias, (const uint4 *)z, act);
    } else if (half)
        epi_k<<<blocks(n), 256, 0, s>>>((const __half *)x, (__half *)y, n, c, hw, nhwc, scale,
                                        bias, (const __half *)z, act);
    else
        epi_k<<<blocks(n), 256, 0, s>>>((const float *)x, (float *)y, n, c, hw, nhwc, scale, bias,
                                        (const float *)z, act);
    return cudaGetLastError();
}

// Channels-last concatenation of one input, in units of U: pixel p's cj units go to
// [p * ct + co, p * ct + co + cj) of the output.
template <typename U>
__global__ void cat_k(const U *x, U *y, long pixels, int cj, int ct, int co)
{
    long n = pixels * cj;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long p = i / cj;
        int k = (int)(i % cj);
        y[p * ct + co + k] = x[cal_epi_concat_src(p, k + co, co, cj)];
    }
}

extern "C" cudaError_t cal_cu_concat_nhwc(const void *x, void *y, long pixels, int cj, int ct,
                                          int co, size_t esz, cudaStream_t s)
{
    size_t bj = (size_t)cj * esz, bt = (size_t)ct * esz, bo = (size_t)co * esz;
    if (bj % 16 == 0 && bt % 16 == 0 && bo % 16 == 0)
        cat_k<<<blocks(pixels * (long)(bj / 16)), 256, 0, s>>>((const uint4 *)x, (uint4 *)y, pixels,
                                                              (int)(bj / 16), (int)(bt / 16), (int)(bo / 16));
    else if (bj % 4 == 0 && bt % 4 == 0 && bo % 4 == 0)
        cat_k<<<blocks(pixels * (long)(bj / 4)), 256, 0, s>>>((const unsigned *)x, (unsigned *)y, pixels,
                                                             (int)(bj / 4), (int)(bt / 4), (int)(bo / 4));
    else
        cat_k<<<blocks(pixels * (long)(bj / 2)), 256, 0, s>>>((const unsigned short *)x,
                                                             (unsigned short *)y, pixels, (int)(bj / 2),
                                                             (int)(bt / 2), (int)(bo / 2));
    return cudaGetLastError();
}
