// cal_dec_gpu — the decoder runtime on an NVIDIA GPU: fp16 cuBLASLt GEMMs, the project's own
// kernels for the rest (norms, RoPE, the paged KV cache, prefill and decode attention, SiLU, the
// sampler's argmax), decode iterations as CUDA graphs, every operator bracketed by events.
// cal_dec_gpu.h says what runs and why.
#include "cal_dec_gpu.h"

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#define _Noreturn __attribute__((noreturn))   /* C11's keyword, for the C header in C++ */
#include "sim_err.h"
#include "sim_wall.h"
#undef _Noreturn
}

#define FULL 0xffffffffu
#define WS_BYTES (32u << 20)   /* cuBLASLt workspace: fixed, so graphs capture no allocation */
#define TILE 32                /* attention: keys a tile, query rows a prefill block */

enum { G_QKV, G_OUT, G_GU, G_DOWN, G_HEAD, G_N };

/* vLLM's CUDA-graph batch sizes: 1, 2, 4, then multiples of 8 up to 512 */
#define NCAP 67
static int cap_size(int i) { return i < 3 ? 1 << i : 8 * (i - 2); }
static int cap_index(int n)
{
    if (n <= 4)
        return n <= 1 ? 0 : n <= 2 ? 1 : 2;
    return (n + 7) / 8 + 2;
}

struct glayer {
    __half *an, *wqkv, *bqkv, *wo, *mn, *wgu, *wd;
};

struct plan {                  /* one GEMM at one row count */
    cublasLtMatrixLayout_t lb, lc;
    cublasLtMatmulAlgo_t algo;
    int state;                 /* 0: not made; 1: algorithm found; 2: cuBLASLt's default */
};

struct graph {
    cudaGraphExec_t exec;
    int nmark;
    signed char *ops;
};

struct cal_dec_gpu {
    const struct cal_dec *d;
    struct cal_dec_rt_opts o;
    cudaStream_t s;
    cublasLtHandle_t lt;
    void *ws;
    cublasLtMatmulDesc_t md[G_N];
    cublasLtMatrixLayout_t la[G_N];
    long gk[G_N], gn[G_N];
    struct plan *plan;         /* [G_N][cap_t + 1] */
    int cap_t, cap_s, ntiles_cap;
    long bt_cap;
    __half *embed, *lm_head, *fnorm;
    struct glayer *L;
    __half *kc, *vc;
    long layer_stride;
    float *cosv, *sinv;
    __half *x, *xn, *qkv, *att, *gu, *mid, *last;
    float *logits;
    float *part;               /* decode attention's splits (attn_dec_k) */
    long part_cap;             /* their (decode, head, split) entries */
    int sms;                   /* the GPU's multiprocessors */
    bool tc;                   /* prefill attention on the tensor cores (attn_pre_tc_k) */
    int pre_rows;              /* query rows a prefill attention block: 64 (tc) or 32 */
    double tc_err;             /* the tensor-core kernel against the other at start-up */
    int32_t *next_d;
    /* the iteration's metadata: fixed regions of one device buffer (graphs read them there) */
    int32_t *meta_d, *meta_h;
    long o_tok, o_pos, o_slot, o_rowlast, o_drow, o_dlen, o_dbt, o_trow, o_tn, o_tpos, o_tbt,
        o_bt, meta_n;
    int32_t *next_h;
    float *logits_h;
    /* events: one a mark, an operator from each mark to the next */
    cudaEvent_t *ev;
    signed char *mark_op;
    int nmark, cap_mark;
    bool capturing, graphs_on, graph_timing_ok;
    struct graph graphs[NCAP];
    double *ns;
    unsigned long long tensors;   /* weight tensors drawn so far (each its own stream) */
    char desc[1024], mode[200];
};

/* ---- errors ----------------------------------------------------------------------------- */

static int cuerr(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    cudaGetLastError();
    return sim_err_set(SIM_EINTERNAL, "decoder GPU runtime: %s: %s", what, cudaGetErrorString(e));
}

static int blaserr(cublasStatus_t e, const char *what)
{
    return e == CUBLAS_STATUS_SUCCESS
               ? 0
               : sim_err_set(SIM_EINTERNAL, "decoder GPU runtime: cuBLASLt %s failed (status %d)",
                             what, (int)e);
}

#define CK(call, what)                                                                         \
    do {                                                                                       \
        int rc_ = cuerr((call), (what));                                                       \
        if (rc_)                                                                               \
            return rc_;                                                                        \
    } while (0)
#define BK(call, what)                                                                         \
    do {                                                                                       \
        int rc_ = blaserr((call), (what));                                                     \
        if (rc_)                                                                               \
            return rc_;                                                                        \
    } while (0)
#define LAUNCHED(what) CK(cudaGetLastError(), what)

/* ---- kernels ---------------------------------------------------------------------------- */

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(FULL, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

/* Uniform in [lo, hi) from a counter (splitmix64): the same seed gives the same weights. */
__global__ void fill_k(__half *w, long n, unsigned long long seed, float lo, float hi)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned long long z = seed + (unsigned long long)i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        float u = (float)(z >> 40) * (1.0f / 16777216.0f);
        w[i] = __float2half(lo + (hi - lo) * u);
    }
}

__global__ void tohalf_k(const float *x, __half *y, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        y[i] = __float2half(x[i]);
}

__global__ void embed_k(const int32_t *tok, const __half *E, __half *x, int h)
{
    const uint4 *src = (const uint4 *)(E + (long)tok[blockIdx.x] * h);
    uint4 *dst = (uint4 *)(x + (long)blockIdx.x * h);
    for (int i = threadIdx.x; i < h / 8; i += blockDim.x)
        dst[i] = src[i];
}

/* One block a row (rows: the source row of each, or NULL for row r). */
__global__ void rmsnorm_k(const __half *x, const int32_t *rows, const __half *w, __half *y, int h,
                          float eps)
{
    __shared__ float part[32];
    long src = rows ? rows[blockIdx.x] : blockIdx.x;
    const __half *xr = x + src * h;
    float ss = 0;
    for (int i = threadIdx.x; i < h; i += blockDim.x) {
        float v = __half2float(xr[i]);
        ss += v * v;
    }
    ss = warp_sum(ss);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
        v = warp_sum(v);
        if (threadIdx.x == 0)
            part[0] = v;
    }
    __syncthreads();
    float inv = rsqrtf(part[0] / (float)h + eps);
    __half *yr = y + (long)blockIdx.x * h;
    for (int i = threadIdx.x; i < h; i += blockDim.x)
        yr[i] = __float2half(__half2float(xr[i]) * inv * __half2float(w[i]));
}

/* Rotary positions on the q and k heads of each token's QKV row (rotate-half form). */
__global__ void rope_k(__half *qkv, long qr, const int32_t *pos, const float *cosv,
                       const float *sinv, int nh, int hd)
{
    int half = hd / 2, t = blockIdx.x;
    const float *c = cosv + (long)pos[t] * half, *s = sinv + (long)pos[t] * half;
    __half *row = qkv + (long)t * qr;
    for (int k = threadIdx.x; k < nh * half; k += blockDim.x) {
        int j = k / half, i = k % half;
        __half *v = row + (long)j * hd;
        float a = __half2float(v[i]), b = __half2float(v[i + half]);
        v[i] = __float2half(a * c[i] - b * s[i]);
        v[i + half] = __float2half(b * c[i] + a * s[i]);
    }
}

/* Each token's keys and values into its cache slot (slot = block * bs + offset; < 0: a
 * padding row, skipped). Cache: [block][kv head][slot][head dim]. */
__global__ void kvw_k(const __half *qkv, long qr, const int32_t *slot, __half *kc, __half *vc,
                      int nq, int nkv, int hd, int bs)
{
    int t = blockIdx.x, sl = slot[t];
    if (sl < 0)
        return;
    long b = sl / bs, off = sl % bs;
    int c8 = hd / 8;
    for (int k = threadIdx.x; k < nkv * c8; k += blockDim.x) {
        int j = k / c8, i = (k % c8) * 8;
        long at = ((b * nkv + j) * bs + off) * hd + i;
        *(uint4 *)(kc + at) = *(const uint4 *)(qkv + (long)t * qr + (long)(nq + j) * hd + i);
        *(uint4 *)(vc + at) = *(const uint4 *)(qkv + (long)t * qr + (long)(nq + nkv + j) * hd + i);
    }
}

/* q (float, shared, already scaled) . k (half, HD) */
template <int HD> __device__ __forceinline__ float dotqk(const float *q, const __half *k)
{
    float a = 0;
#pragma unroll
    for (int i = 0; i < HD; i += 8) {
        uint4 r = *(const uint4 *)(k + i);
        const __half2 *h2 = (const __half2 *)&r;
#pragma unroll
        for (int z = 0; z < 4; z++) {
            float2 f = __half22float2(h2[z]);
            a += q[i + 2 * z] * f.x + q[i + 2 * z + 1] * f.y;
        }
    }
    return a;
}

/* Decode attention: one block per (decode, query head, split of its context), four warps over
 * the split's keys in tiles of 32 (a lane a key for the scores, a lane PER dimensions for the
 * values), online softmax, the warps merged at the end. len = context + 1 (the new token's key
 * is in the cache); len <= 0: a padding row of a graph. With one split the block writes the
 * output; with more (a few sequences: flash-decoding's split of the context, so that the GPU's
 * SMs all have work) each writes its unnormalised sum, maximum and denominator to `part`
 * ([item][head][split][HD + 2]) and attn_merge_k combines them. */
template <int PER>
__global__ void __launch_bounds__(128)
    attn_dec_k(const __half *qkv, long qr, const __half *kc, const __half *vc,
               const int32_t *drow, const int32_t *dlen, const int32_t *dbt, const int32_t *bt,
               __half *att, int nq, int nkv, int bs, float scale, float *part)
{
    constexpr int HD = 32 * PER;
    __shared__ float q[HD], sm[4], sl[4], sacc[4][HD];
    int item = blockIdx.x, hq = blockIdx.y, j = hq / (nq / nkv), ns = gridDim.z;
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    int row = drow[item], len = dlen[item];
    int chunk = ((len + ns - 1) / ns + TILE - 1) / TILE * TILE;
    int s0 = blockIdx.z * chunk, s1 = min(len, s0 + chunk);
    __half *out = att + (long)row * nq * HD + (long)hq * HD;
    float *pp = part + (((long)item * nq + hq) * ns + blockIdx.z) * (HD + 2);
    if (s0 >= s1) {                                   /* nothing here (or a padding row) */
        if (ns == 1)
            for (int i = threadIdx.x; i < HD; i += blockDim.x)
                out[i] = __float2half(0.0f);
        else if (threadIdx.x == 0)
            pp[HD] = -INFINITY, pp[HD + 1] = 0;
        return;
    }
    for (int i = threadIdx.x; i < HD; i += blockDim.x)
        q[i] = __half2float(qkv[(long)row * qr + (long)hq * HD + i]) * scale;
    __syncthreads();
    const int32_t *tab = bt + dbt[item];
    float m = -INFINITY, ls = 0, acc[PER];
#pragma unroll
    for (int k = 0; k < PER; k++)
        acc[k] = 0;
    for (int u0 = s0 + w * TILE; u0 < s1; u0 += 4 * TILE) {
        int u = u0 + l;
        long off = 0;
        float sc = -INFINITY;
        if (u < s1) {
            off = (((long)tab[u / bs] * nkv + j) * bs + u % bs) * HD;
            sc = dotqk<HD>(q, kc + off);
        }
        float mn = fmaxf(m, warp_max(sc));          /* finite: lane 0's key is in range */
        float p = u < s1 ? __expf(sc - mn) : 0.0f, corr = __expf(m - mn);
        ls = ls * corr + p;
#pragma unroll
        for (int k = 0; k < PER; k++)
            acc[k] *= corr;
        int nk = min(TILE, s1 - u0);
#pragma unroll 8
        for (int kk = 0; kk < nk; kk++) {
            float pk = __shfl_sync(FULL, p, kk);
            long ok = __shfl_sync(FULL, off, kk);
            const __half *v = vc + ok + l * PER;
#pragma unroll
            for (int k = 0; k < PER; k++)
                acc[k] += pk * __half2float(v[k]);
        }
        m = mn;
    }
    ls = warp_sum(ls);
    if (l == 0)
        sm[w] = m, sl[w] = ls;
#pragma unroll
    for (int k = 0; k < PER; k++)
        sacc[w][l * PER + k] = acc[k];
    __syncthreads();
    if (threadIdx.x < HD) {
        float M = fmaxf(fmaxf(sm[0], sm[1]), fmaxf(sm[2], sm[3])), Ls = 0, o = 0;
        for (int v = 0; v < 4; v++)
            if (sm[v] > -INFINITY) {
                float c = __expf(sm[v] - M);
                Ls += sl[v] * c;
                o += sacc[v][threadIdx.x] * c;
            }
        if (ns == 1) {
            out[threadIdx.x] = __float2half(o / Ls);
        } else {
            pp[threadIdx.x] = o;
            if (threadIdx.x == 0)
                pp[HD] = M, pp[HD + 1] = Ls;
        }
    }
}

/* The splits of each (decode, head) merged: one block, a thread a dimension. */
__global__ void attn_merge_k(const float *part, const int32_t *drow, __half *att, int nq, int hd,
                             int ns)
{
    int item = blockIdx.x, hq = blockIdx.y, i = threadIdx.x;
    const float *pp = part + ((long)item * nq + hq) * ns * (hd + 2);
    float M = -INFINITY, L = 0, o = 0;
    for (int s = 0; s < ns; s++)
        M = fmaxf(M, pp[(long)s * (hd + 2) + hd]);
    if (M > -INFINITY)
        for (int s = 0; s < ns; s++) {
            const float *q = pp + (long)s * (hd + 2);
            if (q[hd] > -INFINITY) {
                float c = __expf(q[hd] - M);
                L += q[hd + 1] * c;
                o += q[i] * c;
            }
        }
    att[(long)drow[item] * nq * hd + (long)hq * hd + i] = __float2half(L > 0 ? o / L : 0.0f);
}

/* A tile of `nkeys` keys and values from position u0 (zeros past `last`), read through the
 * block table into shared memory rows of HD + 8 halves (the padding spreads a lane-per-key
 * read over the banks), the whole block taking part. */
template <int HD>
__device__ __forceinline__ void kv_tile(const __half *kc, const __half *vc, const int32_t *tab,
                                        int nkv, int j, int bs, int u0, int last, int nkeys,
                                        __half *K, __half *V)
{
    constexpr int C8 = HD / 8, LD = HD + 8;
    for (int i = threadIdx.x; i < nkeys * C8; i += blockDim.x) {
        int key = i / C8, c = (i % C8) * 8, u = u0 + key;
        uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
        if (u <= last) {
            long off = (((long)tab[u / bs] * nkv + j) * bs + u % bs) * HD + c;
            kv = *(const uint4 *)(kc + off);
            vv = *(const uint4 *)(vc + off);
        }
        *(uint4 *)(K + key * LD + c) = kv;
        *(uint4 *)(V + key * LD + c) = vv;
    }
}

/* Prefill attention: one block per (tile of up to 32 query rows of a chunk, query head); the
 * keys and values, context and chunk alike, read from the paged cache a tile of 32 at a time
 * into shared memory; each warp 8 rows, causal (row r at position p0 + r sees keys 0..p0 + r),
 * online softmax. */
template <int PER>
__global__ void __launch_bounds__(128)
    attn_pre_k(const __half *qkv, long qr, const __half *kc, const __half *vc,
               const int32_t *trow, const int32_t *tn, const int32_t *tpos, const int32_t *tbt,
               const int32_t *bt, __half *att, int nq, int nkv, int bs, float scale)
{
    constexpr int HD = 32 * PER, KS = HD + 8;
    __shared__ float q[TILE][HD];
    __shared__ __align__(16) __half K[TILE][KS];
    __shared__ __align__(16) __half V[TILE][KS];
    int tile = blockIdx.x, hq = blockIdx.y, j = hq / (nq / nkv);
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    int r0 = trow[tile], nr = tn[tile], p0 = tpos[tile], last = p0 + nr - 1;
    const int32_t *tab = bt + tbt[tile];
    for (int i = threadIdx.x; i < TILE * HD; i += blockDim.x) {
        int r = i / HD, c = i % HD;
        q[r][c] = r < nr ? __half2float(qkv[(long)(r0 + r) * qr + (long)hq * HD + c]) * scale : 0.0f;
    }
    float m[8], ls[8], acc[8][PER];
#pragma unroll
    for (int rr = 0; rr < 8; rr++) {
        m[rr] = -INFINITY, ls[rr] = 0;
#pragma unroll
        for (int k = 0; k < PER; k++)
            acc[rr][k] = 0;
    }
    for (int u0 = 0; u0 <= last; u0 += TILE) {
        __syncthreads();
        kv_tile<HD>(kc, vc, tab, nkv, j, bs, u0, last, TILE, &K[0][0], &V[0][0]);
        __syncthreads();
        int u = u0 + l;
#pragma unroll
        for (int rr = 0; rr < 8; rr++) {
            int r = w * 8 + rr, lim = p0 + r;
            if (r >= nr || u0 > lim)                  /* warp-uniform */
                continue;
            float sc = u <= lim ? dotqk<HD>(q[r], K[l]) : -INFINITY;
            float mn = fmaxf(m[rr], warp_max(sc));
            float p = u <= lim ? __expf(sc - mn) : 0.0f, corr = __expf(m[rr] - mn);
            ls[rr] = ls[rr] * corr + p;
#pragma unroll
            for (int k = 0; k < PER; k++)
                acc[rr][k] *= corr;
#pragma unroll 8
            for (int kk = 0; kk < TILE; kk++) {
                float pk = __shfl_sync(FULL, p, kk);
#pragma unroll
                for (int k = 0; k < PER; k++)
                    acc[rr][k] += pk * __half2float(V[kk][l * PER + k]);
            }
            m[rr] = mn;
        }
    }
#pragma unroll
    for (int rr = 0; rr < 8; rr++) {
        int r = w * 8 + rr;
        if (r >= nr)
            continue;
        float L = warp_sum(ls[rr]);
        __half *o = att + (long)(r0 + r) * nq * HD + (long)hq * HD + l * PER;
#pragma unroll
        for (int k = 0; k < PER; k++)
            o[k] = __float2half(acc[rr][k] / L);
    }
}

/* Prefill attention on the tensor cores (FlashAttention-2's loop with WMMA 16x16x16 fp16
 * fragments, fp32 accumulation): one block per (tile of up to 64 query rows of a chunk, query
 * head), each warp 16 rows; per tile of 64 keys, read through the block table into shared
 * memory, S = Q K^T on the tensor cores, the online softmax in fp32 (scale, causal mask,
 * running maximum and denominator, the output's rows rescaled), then O += P V on the tensor
 * cores. The output is accumulated in shared memory in fp32 (a fragment's element-to-row map is
 * not specified by WMMA, so the rescaling is done there). Dynamic shared memory:
 * tc_smem(HD). */
constexpr int TC_Q = 64, TC_K = 64;
__host__ __device__ constexpr int tc_ld(int hd) { return hd + 8; }   /* halves, Q/K/V rows */
constexpr int TC_SL = TC_K + 4, TC_PL = TC_K + 8;                    /* floats S, halves P */
__host__ __device__ constexpr int tc_ol(int hd) { return hd + 4; }   /* floats, O rows */
static size_t tc_smem(int hd)
{
    return (size_t)(3 * TC_Q * tc_ld(hd) * 2 + TC_Q * TC_SL * 4 + TC_Q * TC_PL * 2 +
                    TC_Q * tc_ol(hd) * 4 + 2 * TC_Q * 4);
}

template <int HD>
__global__ void __launch_bounds__(128)
    attn_pre_tc_k(const __half *qkv, long qr, const __half *kc, const __half *vc,
                  const int32_t *trow, const int32_t *tn, const int32_t *tpos, const int32_t *tbt,
                  const int32_t *bt, __half *att, int nq, int nkv, int bs, float scale)
{
    using namespace nvcuda;
    constexpr int LD = tc_ld(HD), OL = tc_ol(HD), C8 = HD / 8;
    extern __shared__ __align__(32) unsigned char smem[];
    __half *Qs = (__half *)smem, *Ks = Qs + TC_Q * LD, *Vs = Ks + TC_K * LD;
    float *Ss = (float *)(Vs + TC_K * LD);
    __half *Ps = (__half *)(Ss + TC_Q * TC_SL);
    float *Os = (float *)(Ps + TC_Q * TC_PL), *Ms = Os + TC_Q * OL, *Ls = Ms + TC_Q;
    int tile = blockIdx.x, hq = blockIdx.y, j = hq / (nq / nkv);
    int w = threadIdx.x >> 5, l = threadIdx.x & 31, r0w = 16 * w;
    int row0 = trow[tile], nr = tn[tile], p0 = tpos[tile], last = p0 + nr - 1;
    const int32_t *tab = bt + tbt[tile];
    for (int i = threadIdx.x; i < TC_Q * C8; i += blockDim.x) {
        int r = i / C8, c = (i % C8) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < nr)
            v = *(const uint4 *)(qkv + (long)(row0 + r) * qr + (long)hq * HD + c);
        *(uint4 *)(Qs + r * LD + c) = v;
    }
    for (int i = threadIdx.x; i < TC_Q * OL; i += blockDim.x)
        Os[i] = 0;
    for (int i = threadIdx.x; i < TC_Q; i += blockDim.x)
        Ms[i] = -INFINITY, Ls[i] = 0;
    bool active = r0w < nr;                        /* warp-uniform */
    for (int k0 = 0; k0 <= last; k0 += TC_K) {
        __syncthreads();
        kv_tile<HD>(kc, vc, tab, nkv, j, bs, k0, last, TC_K, Ks, Vs);
        __syncthreads();
        if (!active || k0 > p0 + r0w + 15)         /* every key of the tile after these rows */
            continue;
        for (int n = 0; n < TC_K / 16; n++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
#pragma unroll
            for (int k = 0; k < HD / 16; k++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                wmma::load_matrix_sync(a, Qs + r0w * LD + 16 * k, LD);
                wmma::load_matrix_sync(b, Ks + 16 * n * LD + 16 * k, LD);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Ss + r0w * TC_SL + 16 * n, acc, TC_SL, wmma::mem_row_major);
        }
        __syncwarp();
        {   /* the online softmax: two lanes a row, 32 keys each */
            int rr = l >> 1, hh = l & 1, r = r0w + rr, lim = p0 + r;
            float *sr = Ss + r * TC_SL + 32 * hh;
            float mx = -INFINITY;
            for (int c = 0; c < 32; c++) {
                int u = k0 + 32 * hh + c;
                float v = u <= lim && u <= last ? sr[c] * scale : -INFINITY;
                sr[c] = v;
                mx = fmaxf(mx, v);
            }
            mx = fmaxf(mx, __shfl_xor_sync(FULL, mx, 1));
            float mold = Ms[r], mn = fmaxf(mold, mx), sum = 0;
            __half *pr = Ps + r * TC_PL + 32 * hh;
            for (int c = 0; c < 32; c++) {
                float pv = sr[c] == -INFINITY ? 0.0f : __expf(sr[c] - mn);
                sum += pv;
                pr[c] = __float2half(pv);
            }
            sum += __shfl_xor_sync(FULL, sum, 1);
            float corr = mold == -INFINITY ? 0.0f : __expf(mold - mn);
            float *orow = Os + r * OL + (HD / 2) * hh;
            for (int c = 0; c < HD / 2; c++)
                orow[c] *= corr;
            __syncwarp();
            if (hh == 0)
                Ms[r] = mn, Ls[r] = Ls[r] * corr + sum;
        }
        __syncwarp();
        for (int n = 0; n < HD / 16; n++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::load_matrix_sync(acc, Os + r0w * OL + 16 * n, OL, wmma::mem_row_major);
#pragma unroll
            for (int k = 0; k < TC_K / 16; k++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
                wmma::load_matrix_sync(a, Ps + r0w * TC_PL + 16 * k, TC_PL);
                wmma::load_matrix_sync(b, Vs + 16 * k * LD + 16 * n, LD);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Os + r0w * OL + 16 * n, acc, OL, wmma::mem_row_major);
        }
        __syncwarp();
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nr * HD; i += blockDim.x) {
        int r = i / HD, c = i % HD;
        att[(long)(row0 + r) * nq * HD + (long)hq * HD + c] = __float2half(Os[r * OL + c] / Ls[r]);
    }
}

__global__ void silu_k(const __half *gu, __half *mid, long T, long I)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < T * I; i += (long)gridDim.x * blockDim.x) {
        long t = i / I, c = i % I;
        float g = __half2float(gu[t * 2 * I + c]), u = __half2float(gu[t * 2 * I + I + c]);
        mid[i] = __float2half(g / (1.0f + __expf(-g)) * u);
    }
}

/* The greedy sampler: each row's argmax (the first of equal maxima). */
__global__ void argmax_k(const float *logits, int vocab, int32_t *next)
{
    __shared__ float bv[512];
    __shared__ int bi[512];
    const float *r = logits + (long)blockIdx.x * vocab;
    float best = -INFINITY;
    int at = 0x7fffffff;
    for (int v = threadIdx.x; v < vocab; v += blockDim.x)
        if (r[v] > best)
            best = r[v], at = v;
    bv[threadIdx.x] = best, bi[threadIdx.x] = at;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            float o = bv[threadIdx.x + s];
            int oi = bi[threadIdx.x + s];
            if (o > bv[threadIdx.x] || (o == bv[threadIdx.x] && oi < bi[threadIdx.x]))
                bv[threadIdx.x] = o, bi[threadIdx.x] = oi;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        next[blockIdx.x] = bi[0] == 0x7fffffff ? 0 : bi[0];
}

/* ---- set-up ----------------------------------------------------------------------------- */

static int dalloc(void **p, size_t bytes, const char *what)
{
    return cuerr(cudaMalloc(p, bytes ? bytes : 16), what);
}

/* A weight tensor in fp16: the host's fp32 values where given, else drawn in [lo, hi). */
static int weight(struct cal_dec_gpu *g, __half **dst, const float *host, long n, float lo,
                  float hi, unsigned long long seed)
{
    int rc = dalloc((void **)dst, (size_t)n * sizeof(__half), "weights");
    if (rc)
        return rc;
    int blocks = (int)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    if (host) {
        float *tmp = NULL;
        if ((rc = dalloc((void **)&tmp, (size_t)n * sizeof(float), "weight staging")))
            return rc;
        rc = cuerr(cudaMemcpyAsync(tmp, host, (size_t)n * sizeof(float), cudaMemcpyHostToDevice,
                                   g->s), "weight upload");
        if (!rc) {
            tohalf_k<<<blocks, 256, 0, g->s>>>(tmp, *dst, n);
            rc = cuerr(cudaStreamSynchronize(g->s), "weight conversion");
        }
        cudaFree(tmp);
        return rc;
    }
    fill_k<<<blocks, 256, 0, g->s>>>(*dst, n, seed * 1000003ull + ++g->tensors * 0x632BE59BD9B4E019ull,
                                     lo, hi);
    LAUNCHED("weight fill");
    return 0;
}

static int weights(struct cal_dec_gpu *g)
{
    const struct cal_dec *d = g->d;
    long h = d->hidden, qd = (long)d->heads * d->head_dim, I = d->inter;
    long qrows = (long)(d->heads + 2 * d->kv_heads) * d->head_dim;
    float ah = sqrtf(3.0f / (float)h), aq = sqrtf(3.0f / (float)qd), ai = sqrtf(3.0f / (float)I);
    bool host = d->embed != NULL;
    unsigned long long sd = g->o.seed;
    g->tensors = 0;
    int rc = weight(g, &g->embed, host ? d->embed : NULL, (long)d->vocab * h, -1, 1, sd);
    if (!rc && d->tied)
        g->lm_head = g->embed;
    else if (!rc)
        rc = weight(g, &g->lm_head, host ? d->lm_head : NULL, (long)d->vocab * h, -ah, ah, sd);
    if (!rc)
        rc = weight(g, &g->fnorm, host ? d->final_norm : NULL, h, 0.9f, 1.1f, sd);
    for (int l = 0; !rc && l < d->layers; l++) {
        struct glayer *G = &g->L[l];
        const struct cal_dec_layer *H = host ? &d->L[l] : NULL;
        if ((rc = weight(g, &G->an, H ? H->attn_norm : NULL, h, 0.9f, 1.1f, sd)) ||
            (rc = weight(g, &G->wqkv, H ? H->wqkv : NULL, qrows * h, -ah, ah, sd)) ||
            (d->qkv_bias && (rc = weight(g, &G->bqkv, H ? H->bqkv : NULL, qrows, -0.1f, 0.1f, sd))) ||
            (rc = weight(g, &G->wo, H ? H->wo : NULL, h * qd, -aq, aq, sd)) ||
            (rc = weight(g, &G->mn, H ? H->mlp_norm : NULL, h, 0.9f, 1.1f, sd)) ||
            (rc = weight(g, &G->wgu, H ? H->wgu : NULL, 2 * I * h, -ah, ah, sd)) ||
            (rc = weight(g, &G->wd, H ? H->wd : NULL, h * I, -ai, ai, sd)))
            break;
    }
    if (!rc)
        rc = cuerr(cudaStreamSynchronize(g->s), "weights");
    return rc;
}

/* The matmul descriptor and weight layout of GEMM kind k: dst[m][n] = src[m][k] W^T, W [n][k]
 * row-major, i.e. in cuBLASLt's column-major terms D (n x m) = op_T(W: k x n) . X (k x m). */
static int gemm_desc(struct cal_dec_gpu *g, int k, long K, long N, bool bias, bool f32out)
{
    g->gk[k] = K, g->gn[k] = N;
    BK(cublasLtMatmulDescCreate(&g->md[k], CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
    cublasOperation_t t = CUBLAS_OP_T;
    BK(cublasLtMatmulDescSetAttribute(g->md[k], CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t), "transa");
    if (bias) {
        cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
        BK(cublasLtMatmulDescSetAttribute(g->md[k], CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e),
           "bias epilogue");
        cudaDataType_t bt = CUDA_R_16F;
        BK(cublasLtMatmulDescSetAttribute(g->md[k], CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
                                          sizeof bt), "bias type");
    }
    (void)f32out;
    BK(cublasLtMatrixLayoutCreate(&g->la[k], CUDA_R_16F, (uint64_t)K, (uint64_t)N, (int64_t)K),
       "weight layout");
    return 0;
}

static int get_plan(struct cal_dec_gpu *g, int k, long m, struct plan **out)
{
    struct plan *p = &g->plan[(long)k * (g->cap_t + 1) + m];
    *out = p;
    if (p->state)
        return 0;
    cudaDataType_t ct = k == G_HEAD ? CUDA_R_32F : CUDA_R_16F;
    BK(cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_16F, (uint64_t)g->gk[k], (uint64_t)m, g->gk[k]),
       "input layout");
    BK(cublasLtMatrixLayoutCreate(&p->lc, ct, (uint64_t)g->gn[k], (uint64_t)m, g->gn[k]),
       "output layout");
    cublasLtMatmulPreference_t pref;
    BK(cublasLtMatmulPreferenceCreate(&pref), "preference");
    uint64_t wsb = WS_BYTES;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                         sizeof wsb);
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    cublasStatus_t e = cublasLtMatmulAlgoGetHeuristic(g->lt, g->md[k], g->la[k], p->lb, p->lc,
                                                      p->lc, pref, 1, &res, &got);
    cublasLtMatmulPreferenceDestroy(pref);
    if (e == CUBLAS_STATUS_SUCCESS && got > 0)
        p->algo = res.algo, p->state = 1;
    else
        p->state = 2;
    return 0;
}

/* dst[m][n] (beta: 0 =, 1 +=) src[m][k] W^T (+ bias) */
static int gemm(struct cal_dec_gpu *g, int k, const __half *W, const __half *bias, long m,
                const __half *X, void *Y, float beta)
{
    struct plan *p;
    int rc = get_plan(g, k, m, &p);
    if (rc)
        return rc;
    if (bias)
        BK(cublasLtMatmulDescSetAttribute(g->md[k], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                          sizeof bias), "bias pointer");
    float alpha = 1;
    BK(cublasLtMatmul(g->lt, g->md[k], &alpha, W, g->la[k], X, p->lb, &beta, Y, p->lc, Y, p->lc,
                      p->state == 1 ? &p->algo : NULL, g->ws, WS_BYTES, g->s), "matmul");
    return 0;
}

extern "C" void cal_dec_gpu_destroy(struct cal_dec_gpu *g)
{
    if (!g)
        return;
    cudaStreamSynchronize(g->s);
    for (int i = 0; i < NCAP; i++) {
        if (g->graphs[i].exec)
            cudaGraphExecDestroy(g->graphs[i].exec);
        free(g->graphs[i].ops);
    }
    if (g->plan)
        for (long i = 0; i < (long)G_N * (g->cap_t + 1); i++) {
            if (g->plan[i].lb)
                cublasLtMatrixLayoutDestroy(g->plan[i].lb);
            if (g->plan[i].lc)
                cublasLtMatrixLayoutDestroy(g->plan[i].lc);
        }
    for (int k = 0; k < G_N; k++) {
        if (g->md[k])
            cublasLtMatmulDescDestroy(g->md[k]);
        if (g->la[k])
            cublasLtMatrixLayoutDestroy(g->la[k]);
    }
    if (g->L)
        for (int l = 0; l < g->d->layers; l++) {
            struct glayer *G = &g->L[l];
            cudaFree(G->an), cudaFree(G->wqkv), cudaFree(G->bqkv), cudaFree(G->wo);
            cudaFree(G->mn), cudaFree(G->wgu), cudaFree(G->wd);
        }
    if (g->lm_head != g->embed)
        cudaFree(g->lm_head);
    cudaFree(g->embed), cudaFree(g->fnorm), cudaFree(g->kc), cudaFree(g->vc);
    cudaFree(g->cosv), cudaFree(g->sinv), cudaFree(g->x), cudaFree(g->xn), cudaFree(g->qkv);
    cudaFree(g->att), cudaFree(g->gu), cudaFree(g->mid), cudaFree(g->last), cudaFree(g->logits);
    cudaFree(g->next_d), cudaFree(g->meta_d), cudaFree(g->ws), cudaFree(g->part);
    cudaFreeHost(g->meta_h), cudaFreeHost(g->next_h), cudaFreeHost(g->logits_h);
    for (int i = 0; g->ev && i < g->cap_mark; i++)
        if (g->ev[i])
            cudaEventDestroy(g->ev[i]);
    if (g->lt)
        cublasLtDestroy(g->lt);
    if (g->s)
        cudaStreamDestroy(g->s);
    free(g->ev), free(g->mark_op), free(g->plan), free(g->L);
    free(g);
}

static int create(struct cal_dec_gpu *g)
{
    const struct cal_dec *d = g->d;
    const struct cal_dec_rt_opts *o = &g->o;
    int hd = d->head_dim, nq = d->heads, nkv = d->kv_heads, h = d->hidden, I = d->inter;
    if (!(hd == 32 || hd == 64 || hd == 128) || h % 8 || nq % nkv)
        return sim_err_set(SIM_EUNAVAIL, "%s: the GPU runtime's attention kernels take head "
                           "sizes of 32, 64 or 128 and a hidden size a multiple of 8 (got %d, %d)",
                           d->name, hd, h);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        return sim_err_set(SIM_EUNAVAIL, "decoder GPU runtime: no CUDA device here (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
    if (o->device < 0 || o->device >= n)
        return sim_err_set(SIM_EINVAL, "--device: expected 0 to %d, got %d", n - 1, o->device);
    CK(cudaSetDevice(o->device), "cudaSetDevice");
    CK(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, o->device), "SM count");
    /* rows: the largest iteration, or the largest graph's padded batch */
    int pad = o->max_seqs <= 512 ? cap_size(cap_index(o->max_seqs)) : o->max_seqs;
    g->cap_s = pad > o->max_seqs ? pad : o->max_seqs;
    g->cap_s = g->cap_s < 2 ? 2 : g->cap_s;      /* warm()'s iteration has two rows */
    g->cap_t = o->max_tokens > g->cap_s ? o->max_tokens : g->cap_s;
    g->ntiles_cap = g->cap_t / TILE + g->cap_s + 1;
    g->bt_cap = o->kv_blocks + g->cap_s;
    long qr = (long)(nq + 2 * nkv) * hd, T = g->cap_t, S = g->cap_s;
    g->layer_stride = o->kv_blocks * nkv * o->block_size * (long)hd;
    double wbytes = 2.0 * (double)(cal_dec_params(d));
    double cache = 2.0 * 2.0 * (double)g->layer_stride * d->layers;
    double act = 2.0 * (double)T * (2.0 * h + (double)qr + (double)nq * hd + 3.0 * I) +
                 4.0 * (double)S * d->vocab + 8.0 * (double)d->max_pos * hd / 2 + WS_BYTES;
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    if (wbytes + cache + act > 0.95 * (double)fr)
        return sim_err_set(SIM_EUNAVAIL, "%s: %.1f GB of fp16 weights, a %.1f GB KV cache (%ld "
                           "blocks) and %.1f GB of buffers do not fit the GPU's %.1f GB free",
                           d->name, wbytes / 1e9, cache / 1e9, o->kv_blocks, act / 1e9,
                           (double)fr / 1e9);
    CK(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking), "stream");
    BK(cublasLtCreate(&g->lt), "create");
    int rc = dalloc(&g->ws, WS_BYTES, "workspace");
    if (rc)
        return rc;
    if (!(g->L = (struct glayer *)calloc((size_t)d->layers, sizeof *g->L)) ||
        !(g->plan = (struct plan *)calloc((size_t)G_N * (size_t)(g->cap_t + 1), sizeof *g->plan)))
        return SIM_ENOMEM;
    if ((rc = weights(g)))
        return rc;
    size_t cb = (size_t)g->layer_stride * (size_t)d->layers * sizeof(__half);
    if ((rc = dalloc((void **)&g->kc, cb, "KV cache")) || (rc = dalloc((void **)&g->vc, cb, "KV cache")))
        return rc;
    /* every block written once (as the CPU runtime does; a serving engine's cache is
     * allocated whole) */
    CK(cudaMemsetAsync(g->kc, 0, cb, g->s), "cache clear");
    CK(cudaMemsetAsync(g->vc, 0, cb, g->s), "cache clear");
    int half = hd / 2;
    size_t rb = (size_t)d->max_pos * (size_t)half;
    float *cs = (float *)malloc(rb * sizeof(float)), *sn = (float *)malloc(rb * sizeof(float));
    if (!cs || !sn) {
        free(cs), free(sn);
        return SIM_ENOMEM;
    }
    for (int p = 0; p < d->max_pos; p++)
        for (int i = 0; i < half; i++) {
            double ang = p * pow(d->rope_theta, -2.0 * i / hd);
            cs[(size_t)p * (size_t)half + (size_t)i] = (float)cos(ang);
            sn[(size_t)p * (size_t)half + (size_t)i] = (float)sin(ang);
        }
    rc = dalloc((void **)&g->cosv, rb * sizeof(float), "RoPE table");
    if (!rc)
        rc = dalloc((void **)&g->sinv, rb * sizeof(float), "RoPE table");
    if (!rc)
        rc = cuerr(cudaMemcpyAsync(g->cosv, cs, rb * sizeof(float), cudaMemcpyHostToDevice, g->s),
                   "RoPE");
    if (!rc)
        rc = cuerr(cudaMemcpyAsync(g->sinv, sn, rb * sizeof(float), cudaMemcpyHostToDevice, g->s),
                   "RoPE");
    if (!rc)
        rc = cuerr(cudaStreamSynchronize(g->s), "RoPE");
    free(cs), free(sn);
    if (rc || (rc = dalloc((void **)&g->x, (size_t)(T * h) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->xn, (size_t)(T * h) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->qkv, (size_t)(T * qr) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->att, (size_t)(T * nq * hd) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->gu, (size_t)(T * 2 * I) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->mid, (size_t)(T * I) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->last, (size_t)(S * h) * 2, "buffers")) ||
        (rc = dalloc((void **)&g->logits, (size_t)(S * d->vocab) * 4, "buffers")) ||
        (rc = dalloc((void **)&g->next_d, (size_t)S * 4, "buffers")))
        return rc;
    /* decodes x heads x splits never exceed S x heads + 4 SMs + the heads (splits()) */
    g->part_cap = S * nq + 4L * g->sms + nq;
    if ((rc = dalloc((void **)&g->part, (size_t)g->part_cap * (size_t)(hd + 2) * 4, "buffers")))
        return rc;
    /* metadata regions */
    long at = 0;
    g->o_tok = at, at += T;
    g->o_pos = at, at += T;
    g->o_slot = at, at += T;
    g->o_rowlast = at, at += S;
    g->o_drow = at, at += S;
    g->o_dlen = at, at += S;
    g->o_dbt = at, at += S;
    g->o_trow = at, at += g->ntiles_cap;
    g->o_tn = at, at += g->ntiles_cap;
    g->o_tpos = at, at += g->ntiles_cap;
    g->o_tbt = at, at += g->ntiles_cap;
    g->o_bt = at, at += g->bt_cap;
    g->meta_n = at;
    if ((rc = dalloc((void **)&g->meta_d, (size_t)at * 4, "metadata")))
        return rc;
    CK(cudaMallocHost((void **)&g->meta_h, (size_t)at * 4), "pinned metadata");
    CK(cudaMallocHost((void **)&g->next_h, (size_t)S * 4), "pinned tokens");
    CK(cudaMallocHost((void **)&g->logits_h, (size_t)S * (size_t)d->vocab * 4), "pinned logits");
    g->cap_mark = d->layers * 12 + 8;
    g->ev = (cudaEvent_t *)calloc((size_t)g->cap_mark, sizeof *g->ev);
    g->mark_op = (signed char *)calloc((size_t)g->cap_mark, 1);
    if (!g->ev || !g->mark_op)
        return SIM_ENOMEM;
    for (int i = 0; i < g->cap_mark; i++)
        CK(cudaEventCreate(&g->ev[i]), "event");
    if ((rc = gemm_desc(g, G_QKV, h, qr, d->qkv_bias, false)) ||
        (rc = gemm_desc(g, G_OUT, (long)nq * hd, h, false, false)) ||
        (rc = gemm_desc(g, G_GU, h, 2L * I, false, false)) ||
        (rc = gemm_desc(g, G_DOWN, I, h, false, false)) ||
        (rc = gemm_desc(g, G_HEAD, h, d->vocab, false, true)))
        return rc;
    CK(cudaStreamSynchronize(g->s), "set-up");
    g->graphs_on = !o->eager;
    g->graph_timing_ok = true;
    /* the tensor-core prefill kernel where WMMA's fp16 runs (sm_70 on) and its shared memory
     * can be had; warm() checks it against the plain kernel before it serves */
    g->pre_rows = TILE;
    {
        int major = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, o->device);
        cudaError_t fe = hd == 32 ? cudaFuncSetAttribute(attn_pre_tc_k<32>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tc_smem(32))
                         : hd == 64 ? cudaFuncSetAttribute(attn_pre_tc_k<64>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tc_smem(64))
                                    : cudaFuncSetAttribute(attn_pre_tc_k<128>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tc_smem(128));
        g->tc = major >= 7 && fe == cudaSuccess;
        if (fe != cudaSuccess)
            cudaGetLastError();
    }
    struct cudaDeviceProp p;
    int drv = 0, crt = 0;
    CK(cudaGetDeviceProperties(&p, o->device), "device properties");
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&crt);
    snprintf(g->desc, sizeof g->desc, "%s: cuBLASLt %zu GEMMs (fp16, fp32 accumulation), own CUDA "
             "kernels for norms, RoPE, the paged KV cache and attention; fp16; driver %d.%d, CUDA "
             "runtime %d.%d; %s weights", p.name, cublasLtGetVersion(), drv / 1000,
             drv % 1000 / 10, crt / 1000, crt % 1000 / 10,
             d->embed ? "the decoder's" : "seeded on-device");
    snprintf(g->mode, sizeof g->mode, "%s", g->graphs_on
             ? "decode-only iterations as CUDA graphs at vLLM's batch sizes (padded); others eager"
             : "eager: every iteration's kernels launched one by one");
    return 0;
}

static int warm(struct cal_dec_gpu *g);

extern "C" int cal_dec_gpu_create(const struct cal_dec *d, const struct cal_dec_rt_opts *o,
                                  struct cal_dec_gpu **out)
{
    *out = NULL;
    struct cal_dec_gpu *g = (struct cal_dec_gpu *)calloc(1, sizeof *g);
    if (!g)
        return SIM_ENOMEM;
    g->d = d, g->o = *o;
    int rc = create(g);
    if (!rc)
        rc = warm(g);
    if (!rc) {
        size_t k = strlen(g->desc);
        if (g->tc)
            snprintf(g->desc + k, sizeof g->desc - k, "; prefill attention on the tensor cores "
                     "(WMMA; %.1e from the plain kernel at start-up)", g->tc_err);
        else
            snprintf(g->desc + k, sizeof g->desc - k, "; prefill attention on the CUDA cores%s",
                     g->tc_err > 0 ? " (the tensor-core kernel disagreed at start-up)" : "");
    }
    if (rc) {
        cal_dec_gpu_destroy(g);
        return rc;
    }
    *out = g;
    return 0;
}

extern "C" const char *cal_dec_gpu_describe(const struct cal_dec_gpu *g)
{
    return g->desc;
}

extern "C" const char *cal_dec_gpu_exec_mode(const struct cal_dec_gpu *g)
{
    return g->mode;
}

extern "C" void cal_dec_gpu_timing(struct cal_dec_gpu *g, double *ns)
{
    g->ns = ns;
}

/* ---- one iteration ---------------------------------------------------------------------- */

static int mark(struct cal_dec_gpu *g, int op)
{
    if (g->nmark >= g->cap_mark)
        return sim_err_set(SIM_EINTERNAL, "decoder GPU runtime: more than %d marks", g->cap_mark);
    g->mark_op[g->nmark] = (signed char)op;
    cudaEvent_t e = g->ev[g->nmark++];
    return cuerr(g->capturing ? cudaEventRecordWithFlags(e, g->s, cudaEventRecordExternal)
                              : cudaEventRecord(e, g->s), "event record");
}

#define MARK(op)                                                                               \
    do {                                                                                       \
        int rc_ = mark(g, op);                                                                 \
        if (rc_)                                                                               \
            return rc_;                                                                        \
    } while (0)
#define RC(x)                                                                                  \
    do {                                                                                       \
        int rc_ = (x);                                                                         \
        if (rc_)                                                                               \
            return rc_;                                                                        \
    } while (0)

/* Splits of each decode's context: enough blocks for four on each multiprocessor, at most
 * 16 (a function of the decodes alone, so a graph captured for P decodes keeps its grid). */
static int splits(const struct cal_dec_gpu *g, int nd)
{
    long blocks = (long)nd * g->d->heads, want = 4L * g->sms;
    long ns = (want + blocks - 1) / blocks;
    return (int)(ns < 1 ? 1 : ns > 16 ? 16 : ns);
}

template <int PER> static void attn_launch(struct cal_dec_gpu *g, int nd, int ntl, int l)
{
    const struct cal_dec *d = g->d;
    long qr = (long)(d->heads + 2 * d->kv_heads) * d->head_dim;
    const __half *kc = g->kc + (long)l * g->layer_stride, *vc = g->vc + (long)l * g->layer_stride;
    float scale = 1.0f / sqrtf((float)d->head_dim);
    const int32_t *m = g->meta_d;
    if (ntl > 0 && g->tc) {
        dim3 grid((unsigned)ntl, (unsigned)d->heads);
        attn_pre_tc_k<32 * PER><<<grid, 128, tc_smem(32 * PER), g->s>>>(
            g->qkv, qr, kc, vc, m + g->o_trow, m + g->o_tn, m + g->o_tpos, m + g->o_tbt,
            m + g->o_bt, g->att, d->heads, d->kv_heads, g->o.block_size, scale);
    } else if (ntl > 0) {
        dim3 grid((unsigned)ntl, (unsigned)d->heads);
        attn_pre_k<PER><<<grid, 128, 0, g->s>>>(g->qkv, qr, kc, vc, m + g->o_trow, m + g->o_tn,
                                                m + g->o_tpos, m + g->o_tbt, m + g->o_bt, g->att,
                                                d->heads, d->kv_heads, g->o.block_size, scale);
    }
    if (nd > 0) {
        int ns = splits(g, nd);
        dim3 grid((unsigned)nd, (unsigned)d->heads, (unsigned)ns);
        attn_dec_k<PER><<<grid, 128, 0, g->s>>>(g->qkv, qr, kc, vc, m + g->o_drow, m + g->o_dlen,
                                                m + g->o_dbt, m + g->o_bt, g->att, d->heads,
                                                d->kv_heads, g->o.block_size, scale, g->part);
        if (ns > 1)
            attn_merge_k<<<dim3((unsigned)nd, (unsigned)d->heads), 32 * PER, 0, g->s>>>(
                g->part, m + g->o_drow, g->att, d->heads, 32 * PER, ns);
    }
}

/* The model's forward over T rows (nd decodes, ntl prefill tiles, nh sequences' last rows),
 * the metadata already on the device; every operator between marks. */
static int forward(struct cal_dec_gpu *g, long T, int nd, int ntl, int nh)
{
    const struct cal_dec *d = g->d;
    int h = d->hidden, hd = d->head_dim, nq = d->heads, nkv = d->kv_heads;
    long qr = (long)(nq + 2 * nkv) * hd, I = d->inter;
    float eps = (float)d->eps;
    const int32_t *m = g->meta_d;
    g->nmark = 0;
    MARK(CAL_DEC_EMBED);
    embed_k<<<(unsigned)T, 128, 0, g->s>>>(m + g->o_tok, g->embed, g->x, h);
    LAUNCHED("embedding");
    for (int l = 0; l < d->layers; l++) {
        const struct glayer *G = &g->L[l];
        MARK(CAL_DEC_NORM);
        rmsnorm_k<<<(unsigned)T, 256, 0, g->s>>>(g->x, NULL, G->an, g->xn, h, eps);
        LAUNCHED("rmsnorm");
        MARK(CAL_DEC_QKV);
        RC(gemm(g, G_QKV, G->wqkv, G->bqkv, T, g->xn, g->qkv, 0));
        MARK(CAL_DEC_ROPE);
        rope_k<<<(unsigned)T, 256, 0, g->s>>>(g->qkv, qr, m + g->o_pos, g->cosv, g->sinv,
                                              nq + nkv, hd);
        LAUNCHED("rope");
        MARK(CAL_DEC_KVW);
        kvw_k<<<(unsigned)T, 128, 0, g->s>>>(g->qkv, qr, m + g->o_slot,
                                             g->kc + (long)l * g->layer_stride,
                                             g->vc + (long)l * g->layer_stride, nq, nkv, hd,
                                             g->o.block_size);
        LAUNCHED("kv write");
        if (ntl > 0) {
            MARK(CAL_DEC_ATT_PRE);
            if (hd == 32)
                attn_launch<1>(g, 0, ntl, l);
            else if (hd == 64)
                attn_launch<2>(g, 0, ntl, l);
            else
                attn_launch<4>(g, 0, ntl, l);
            LAUNCHED("prefill attention");
        }
        if (nd > 0) {
            MARK(CAL_DEC_ATT_DEC);
            if (hd == 32)
                attn_launch<1>(g, nd, 0, l);
            else if (hd == 64)
                attn_launch<2>(g, nd, 0, l);
            else
                attn_launch<4>(g, nd, 0, l);
            LAUNCHED("decode attention");
        }
        MARK(CAL_DEC_OUT);
        RC(gemm(g, G_OUT, G->wo, NULL, T, g->att, g->x, 1));
        MARK(CAL_DEC_NORM);
        rmsnorm_k<<<(unsigned)T, 256, 0, g->s>>>(g->x, NULL, G->mn, g->xn, h, eps);
        LAUNCHED("rmsnorm");
        MARK(CAL_DEC_GU);
        RC(gemm(g, G_GU, G->wgu, NULL, T, g->xn, g->gu, 0));
        MARK(CAL_DEC_SILU);
        long n = T * I;
        int blocks = (int)((n + 255) / 256 < 8192 ? (n + 255) / 256 : 8192);
        silu_k<<<blocks, 256, 0, g->s>>>(g->gu, g->mid, T, I);
        LAUNCHED("silu");
        MARK(CAL_DEC_DOWN);
        RC(gemm(g, G_DOWN, G->wd, NULL, T, g->mid, g->x, 1));
    }
    MARK(CAL_DEC_HEAD);
    rmsnorm_k<<<(unsigned)nh, 256, 0, g->s>>>(g->x, m + g->o_rowlast, g->fnorm, g->last, h, eps);
    LAUNCHED("final norm");
    RC(gemm(g, G_HEAD, g->lm_head, NULL, nh, g->last, g->logits, 0));
    MARK(CAL_DEC_NOPS);                          /* the end */
    return 0;
}

static int h2d(struct cal_dec_gpu *g, long off, long n)
{
    if (n <= 0)
        return 0;
    return cuerr(cudaMemcpyAsync(g->meta_d + off, g->meta_h + off, (size_t)n * 4,
                                 cudaMemcpyHostToDevice, g->s), "metadata copy");
}

/* A graph of P decodes: captured on first use. */
static int graph_of(struct cal_dec_gpu *g, int ci, int P)
{
    struct graph *gr = &g->graphs[ci];
    if (gr->exec)
        return 0;
    cudaGraph_t graph = NULL;
    struct plan *pl;
    for (int k = 0; k < G_N; k++)         /* cuBLASLt's heuristics before, not during, capture */
        RC(get_plan(g, k, P, &pl));
    CK(cudaStreamBeginCapture(g->s, cudaStreamCaptureModeThreadLocal), "graph capture");
    g->capturing = true;
    int rc = forward(g, P, P, 0, P);
    g->capturing = false;
    cudaError_t e = cudaStreamEndCapture(g->s, &graph);
    if (rc) {
        if (graph)
            cudaGraphDestroy(graph);
        return rc;
    }
    CK(e, "graph capture end");
    if (!(gr->ops = (signed char *)malloc((size_t)g->nmark))) {
        cudaGraphDestroy(graph);
        return SIM_ENOMEM;
    }
    memcpy(gr->ops, g->mark_op, (size_t)g->nmark);
    gr->nmark = g->nmark;
    e = cudaGraphInstantiate(&gr->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess)
        gr->exec = NULL;
    CK(e, "graph instantiate");
    return 0;
}

/* Prefill attention of one chunk (q rows after c of context, random queries, keys and values in
 * layer 0's first blocks) by the given kernel, into host halves. */
static int pre_once(struct cal_dec_gpu *g, bool tc, int q, int c, __half *out)
{
    const struct cal_dec *d = g->d;
    int32_t *M = g->meta_h;
    int rows = tc ? TC_Q : TILE, ntl = 0, nb = (c + q + g->o.block_size - 1) / g->o.block_size;
    for (int b = 0; b < nb; b++)
        M[g->o_bt + b] = b;
    for (int r0 = 0; r0 < q; r0 += rows, ntl++) {
        M[g->o_trow + ntl] = r0;
        M[g->o_tn + ntl] = q - r0 < rows ? q - r0 : rows;
        M[g->o_tpos + ntl] = c + r0;
        M[g->o_tbt + ntl] = 0;
    }
    CK(cudaMemcpyAsync(g->meta_d, g->meta_h, (size_t)g->meta_n * 4, cudaMemcpyHostToDevice, g->s),
       "self-test metadata");
    bool was = g->tc;
    g->tc = tc;
    if (d->head_dim == 32)
        attn_launch<1>(g, 0, ntl, 0);
    else if (d->head_dim == 64)
        attn_launch<2>(g, 0, ntl, 0);
    else
        attn_launch<4>(g, 0, ntl, 0);
    g->tc = was;
    cudaError_t le = cudaGetLastError();
    if (le != cudaSuccess && tc)
        return 1;                                 /* the kernel could not be launched */
    CK(le, "self-test attention");
    size_t n = (size_t)q * (size_t)d->heads * (size_t)d->head_dim;
    CK(cudaMemcpyAsync(out, g->att, n * 2, cudaMemcpyDeviceToHost, g->s), "self-test copy");
    CK(cudaStreamSynchronize(g->s), "self-test");
    return 0;
}

/* The tensor-core prefill kernel against the plain one on a random chunk with context, at the
 * model's head size; it serves only where they agree (g->tc, g->tc_err). The cache's blocks it
 * used are cleared again. */
static int tc_selftest(struct cal_dec_gpu *g)
{
    const struct cal_dec *d = g->d;
    int bs = g->o.block_size, hd = d->head_dim;
    long cap = g->o.kv_blocks * bs;
    int q = g->cap_t < 100 ? g->cap_t : 100;
    q = cap < q ? (int)cap : q;
    int c = cap - q < 70 ? (int)(cap - q) : 70;
    c = c + q > d->max_pos ? d->max_pos - q : c;
    if (q < 1 || c < 0) {                         /* no room to compare: not used */
        g->tc = false;
        return 0;
    }
    long qr = (long)(d->heads + 2 * d->kv_heads) * hd;
    long nb = (c + q + bs - 1) / bs, kvn = nb * d->kv_heads * bs * hd;
    fill_k<<<256, 256, 0, g->s>>>(g->qkv, q * qr, 7, -1, 1);
    fill_k<<<256, 256, 0, g->s>>>(g->kc, kvn, 8, -1, 1);
    fill_k<<<256, 256, 0, g->s>>>(g->vc, kvn, 9, -1, 1);
    LAUNCHED("self-test fill");
    size_t n = (size_t)q * (size_t)d->heads * (size_t)hd;
    __half *a = (__half *)malloc(n * 2), *b = (__half *)malloc(n * 2);
    int rc = a && b ? 0 : SIM_ENOMEM;
    if (!rc)
        rc = pre_once(g, false, q, c, a);
    if (!rc)
        rc = pre_once(g, true, q, c, b);
    double num = 0, den = 1e-6;
    for (size_t i = 0; !rc && i < n; i++) {
        double x = __half2float(a[i]), y = __half2float(b[i]), e = fabs(x - y);
        num = !(e <= num) ? (isnan(e) ? INFINITY : e) : num;     /* a NaN disagrees */
        den = fabs(x) > den ? fabs(x) : den;
    }
    free(a), free(b);
    if (rc < 0)
        return rc;
    g->tc_err = rc == 1 ? INFINITY : num / den;
    g->tc = g->tc_err <= 1e-2;
    g->pre_rows = g->tc ? TC_Q : TILE;
    CK(cudaMemsetAsync(g->kc, 0, (size_t)kvn * 2, g->s), "cache clear");
    CK(cudaMemsetAsync(g->vc, 0, (size_t)kvn * 2, g->s), "cache clear");
    CK(cudaStreamSynchronize(g->s), "self-test");
    return 0;
}

/* What a serving engine does at start-up, so that no served iteration pays a first time: every
 * GEMM at every row count it may run (cuBLASLt's heuristic, and the loading of the kernels it
 * picks: CUDA loads modules lazily), every kernel once (a one-token prefill and a decode on
 * padding rows, which write nothing to the cache), and, unless eager, a CUDA graph captured and
 * replayed at every batch size up to the largest (as vLLM captures them). */
static long warm_next(long m, long cap)
{
    if (m < 1024)
        return m + 1;
    return m == cap ? cap + 1 : m + 16 < cap ? m + 16 : cap;
}

static int warm(struct cal_dec_gpu *g)
{
    const struct glayer *G = &g->L[0];
    if (g->tc)
        RC(tc_selftest(g));
    /* every row count up to 1,024, past it every 16th and the largest (the warm-up's work grows
     * with the square of the rows: an 8B model at 8,192 rows would take tens of seconds) */
    for (long m = 1; m <= g->cap_t; m = warm_next(m, g->cap_t)) {
        RC(gemm(g, G_QKV, G->wqkv, G->bqkv, m, g->xn, g->qkv, 0));
        RC(gemm(g, G_OUT, G->wo, NULL, m, g->att, g->xn, 0));
        RC(gemm(g, G_GU, G->wgu, NULL, m, g->xn, g->gu, 0));
        RC(gemm(g, G_DOWN, G->wd, NULL, m, g->mid, g->xn, 0));
        if (m <= g->cap_s)
            RC(gemm(g, G_HEAD, g->lm_head, NULL, m, g->last, g->logits, 0));
        if (m % 64 == 0)                            /* keeps the queue short */
            CK(cudaStreamSynchronize(g->s), "warm-up");
    }
    int32_t *M = g->meta_h;
    M[g->o_tok] = M[g->o_tok + 1] = 0;
    M[g->o_pos] = M[g->o_pos + 1] = 0;
    M[g->o_slot] = M[g->o_slot + 1] = -1;
    M[g->o_rowlast] = 0, M[g->o_rowlast + 1] = 1;
    M[g->o_drow] = 1, M[g->o_dlen] = 1, M[g->o_dbt] = 0;
    M[g->o_trow] = 0, M[g->o_tn] = 1, M[g->o_tpos] = 0, M[g->o_tbt] = 0;
    M[g->o_bt] = 0;
    CK(cudaMemcpyAsync(g->meta_d, g->meta_h, (size_t)g->meta_n * 4, cudaMemcpyHostToDevice, g->s),
       "warm-up metadata");
    RC(forward(g, 2, 1, 1, 2));
    argmax_k<<<2, 512, 0, g->s>>>(g->logits, g->d->vocab, g->next_d);
    LAUNCHED("argmax");
    CK(cudaStreamSynchronize(g->s), "warm-up");
    for (int ci = 0; g->graphs_on && ci < NCAP && cap_size(ci) <= g->cap_s; ci++) {
        int P = cap_size(ci);
        for (int i = 0; i < P; i++) {
            M[g->o_tok + i] = 0, M[g->o_pos + i] = 0, M[g->o_slot + i] = -1;
            M[g->o_rowlast + i] = i;
            M[g->o_drow + i] = i, M[g->o_dlen + i] = 0, M[g->o_dbt + i] = 0;
        }
        CK(cudaMemcpyAsync(g->meta_d, g->meta_h, (size_t)g->meta_n * 4, cudaMemcpyHostToDevice,
                           g->s), "warm-up metadata");
        RC(graph_of(g, ci, P));
        CK(cudaGraphLaunch(g->graphs[ci].exec, g->s), "graph launch");
        CK(cudaStreamSynchronize(g->s), "warm-up graph");
    }
    return 0;
}

/* The operators' GPU times into ns, the rest of the wall time to the host; false where the
 * events cannot be read (a driver without timing of events recorded in graphs). */
static bool read_times(struct cal_dec_gpu *g, double wall_ns)
{
    double span = 0;
    float ms = 0;
    for (int k = 0; k + 1 < g->nmark; k++)
        if (cudaEventElapsedTime(&ms, g->ev[k], g->ev[k + 1]) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
    for (int k = 0; k + 1 < g->nmark; k++) {
        cudaEventElapsedTime(&ms, g->ev[k], g->ev[k + 1]);
        g->ns[g->mark_op[k]] += ms * 1e6;
        span += ms * 1e6;
    }
    g->ns[CAL_DEC_HOST] += wall_ns - span > 0 ? wall_ns - span : 0;
    return true;
}

static int step(struct cal_dec_gpu *g, const struct cal_dec_seq *s, int n, float *logits,
                int32_t *next, bool allow_graph)
{
    const struct cal_dec *d = g->d;
    double t0 = sim_wall_seconds();
    int bs = g->o.block_size;
    bool dec_only = true;                         /* (cal_dec_rt_step checked the shapes) */
    long T = 0;
    for (int i = 0; i < n; i++) {
        T += s[i].q;
        dec_only &= s[i].q == 1 && s[i].c > 0;
    }
    int P = dec_only && allow_graph && g->graphs_on && n <= 512 ? cap_size(cap_index(n)) : 0;
    int32_t *M = g->meta_h;
    long t = 0, nbt = 0;
    int nd = 0, ntl = 0;
    for (int i = 0; i < n; i++) {
        const struct cal_dec_seq *q = &s[i];
        long nb = (q->c + q->q + bs - 1) / bs;
        if (nbt + nb > g->bt_cap)
            return sim_err_set(SIM_EINVAL, "decoder iteration: block tables of %ld blocks (at "
                               "most %ld)", nbt + nb, g->bt_cap);
        for (long b = 0; b < nb; b++)
            M[g->o_bt + nbt + b] = q->blocks[b];
        for (int r = 0; r < q->q; r++) {
            int p = q->c + r;
            M[g->o_tok + t + r] = q->tok[r];
            M[g->o_pos + t + r] = p;
            M[g->o_slot + t + r] = q->blocks[p / bs] * bs + p % bs;
        }
        M[g->o_rowlast + i] = (int32_t)(t + q->q - 1);
        if (q->q == 1 && q->c > 0) {
            M[g->o_drow + nd] = (int32_t)t;
            M[g->o_dlen + nd] = q->c + 1;
            M[g->o_dbt + nd] = (int32_t)nbt;
            nd++;
        } else {
            for (int r0 = 0; r0 < q->q; r0 += g->pre_rows) {
                M[g->o_trow + ntl] = (int32_t)(t + r0);
                M[g->o_tn + ntl] = q->q - r0 < g->pre_rows ? q->q - r0 : g->pre_rows;
                M[g->o_tpos + ntl] = q->c + r0;
                M[g->o_tbt + ntl] = (int32_t)nbt;
                ntl++;
            }
        }
        t += q->q;
        nbt += nb;
    }
    for (int i = n; i < P; i++) {                  /* a graph's padding rows */
        M[g->o_tok + i] = 0, M[g->o_pos + i] = 0, M[g->o_slot + i] = -1;
        M[g->o_rowlast + i] = i;
        M[g->o_drow + i] = i, M[g->o_dlen + i] = 0, M[g->o_dbt + i] = 0;
    }
    long rows = P ? P : T;
    int nrows = P ? P : n, ndp = P ? P : nd;
    RC(h2d(g, g->o_tok, rows));
    RC(h2d(g, g->o_pos, rows));
    RC(h2d(g, g->o_slot, rows));
    RC(h2d(g, g->o_rowlast, nrows));
    RC(h2d(g, g->o_drow, ndp));
    RC(h2d(g, g->o_dlen, ndp));
    RC(h2d(g, g->o_dbt, ndp));
    RC(h2d(g, g->o_trow, ntl));
    RC(h2d(g, g->o_tn, ntl));
    RC(h2d(g, g->o_tpos, ntl));
    RC(h2d(g, g->o_tbt, ntl));
    RC(h2d(g, g->o_bt, nbt));
    if (P) {
        int ci = cap_index(n);
        RC(graph_of(g, ci, P));
        CK(cudaGraphLaunch(g->graphs[ci].exec, g->s), "graph launch");
        g->nmark = g->graphs[ci].nmark;
        memcpy(g->mark_op, g->graphs[ci].ops, (size_t)g->nmark);
    } else {
        RC(forward(g, T, nd, ntl, n));
    }
    argmax_k<<<(unsigned)n, 512, 0, g->s>>>(g->logits, d->vocab, g->next_d);
    LAUNCHED("argmax");
    CK(cudaMemcpyAsync(g->next_h, g->next_d, (size_t)n * 4, cudaMemcpyDeviceToHost, g->s),
       "token copy");
    if (logits)
        CK(cudaMemcpyAsync(g->logits_h, g->logits, (size_t)n * (size_t)d->vocab * 4,
                           cudaMemcpyDeviceToHost, g->s), "logits copy");
    CK(cudaStreamSynchronize(g->s), "iteration");
    if (next)
        memcpy(next, g->next_h, (size_t)n * 4);
    if (logits)
        memcpy(logits, g->logits_h, (size_t)n * (size_t)d->vocab * 4);
    if (g->ns) {
        double wall = (sim_wall_seconds() - t0) * 1e9;
        if (!read_times(g, wall)) {
            if (!P)
                return sim_err_set(SIM_EINTERNAL, "decoder GPU runtime: the operators' events "
                                   "could not be read");
            /* events recorded inside graphs are not timed by this driver: time the graph-size
             * iterations eagerly from now on, and say so */
            g->graph_timing_ok = false;
            snprintf(g->mode, sizeof g->mode, "decode-only iterations as CUDA graphs (served); "
                     "timed eagerly (this driver does not time events inside graphs)");
        }
    }
    return 0;
}

extern "C" int cal_dec_gpu_step(struct cal_dec_gpu *g, const struct cal_dec_seq *s, int n,
                                float *logits, int32_t *next)
{
    bool graph = !g->ns || g->graph_timing_ok;
    int rc = step(g, s, n, logits, next, graph);
    if (!rc && g->ns && graph && !g->graph_timing_ok)   /* fell back just now: time it again */
        rc = step(g, s, n, logits, next, false);
    return rc;
}
