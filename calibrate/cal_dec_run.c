/* cal_dec_run — the decoder runtime on the CPU: one serving iteration (prefill chunks and
 * decodes together, vLLM's "mixed batch") over a paged KV cache.
 *
 *  - GEMMs (QKV, output, gate-up, down, LM head) are oneDNN matmul primitives made once per
 *    weight with the row count a run-time dimension (DNNL_RUNTIME_DIM_VAL), so one primitive
 *    serves every iteration's T; the output and down projections add into the residual stream
 *    through a sum post-op.
 *  - The rest is the project's own OpenMP kernels: oneDNN 2.6 (Debian 12) has no RMSNorm,
 *    rotary embedding, paged-cache or attention primitive. Attention reads the keys and values
 *    through each sequence's block table, the query heads that share a KV head together (each
 *    block read once for the group), softmax in two passes over float scores; prefill
 *    chunks (causal within the chunk) and decodes are separate parallel regions, as serving
 *    engines run prefill and decode attention kernels.
 *  - The KV cache is [layer][block][kv head][slot][head dim] for keys and for values.
 *
 * Every operator can be timed (cal_dec_rt_timing): the wall time of its call, summed per kind;
 * on a CPU a call is synchronous, so the sum of the operators is the iteration. */
#include "cal_dec.h"

#include <math.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_wall.h"
#ifdef SERVESIM_HAVE_CUDNN
#include "cal_dec_gpu.h"
#endif

enum { G_QKV, G_OUT, G_GU, G_DOWN, G_HEAD, G_N };

struct gemm {
    dnnl_primitive_t prim;
    int64_t k, n;
    const float *w, *b;
    bool sum;                    /* dst += */
};

struct cal_dec_rt {
    const struct cal_dec *d;
    struct cal_dec_rt_opts o;
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    struct gemm *g;              /* [layers][G_N] (G_HEAD only in layer 0's row) */
    float *kc, *vc;              /* the cache */
    int64_t layer_stride;        /* floats per layer of kc */
    float *cosv, *sinv;          /* [max_pos][head_dim / 2] */
    /* per iteration */
    float *x, *xn, *qkv, *att, *gu, *mid, *last, *logits, *scores;
    int32_t *pos, *seq_of;       /* per token */
    int64_t *row_last, *row0;    /* per sequence: its last token's row, its first */
    double *ns;                  /* timing sums or NULL */
    char desc[200];
    struct cal_dec_gpu *gpu;     /* the GPU runtime runs it (opts.gpu): every call goes there */
};

static int dchk(dnnl_status_t s, const char *what)
{
    return s == dnnl_success ? 0
                             : sim_err_set(SIM_EINTERNAL, "oneDNN: %s failed (status %d)", what,
                                           (int)s);
}

static int gemm_make(struct cal_dec_rt *rt, struct gemm *g, int64_t k, int64_t n, const float *w,
                     const float *b, bool sum)
{
    dnnl_memory_desc_t smd, wmd, bmd, dmd;
    dnnl_dims_t sd = {DNNL_RUNTIME_DIM_VAL, k}, wd = {k, n}, bd = {1, n},
                dd = {DNNL_RUNTIME_DIM_VAL, n};
    dnnl_memory_desc_init_by_tag(&smd, 2, sd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&wmd, 2, wd, dnnl_f32, dnnl_ba);     /* W is [n][k] */
    dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_f32, dnnl_ab);
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    int rc = dchk(dnnl_matmul_desc_init(&md, &smd, &wmd, b ? &bmd : NULL, &dmd), "matmul desc");
    if (!rc)
        rc = dchk(dnnl_primitive_attr_create(&attr), "attr");
    if (!rc && sum) {
        rc = dchk(dnnl_post_ops_create(&po), "post-ops");
        if (!rc)
            rc = dchk(dnnl_post_ops_append_sum(po, 1.0f), "sum post-op");
        if (!rc)
            rc = dchk(dnnl_primitive_attr_set_post_ops(attr, po), "set post-ops");
    }
    if (!rc)
        rc = dchk(dnnl_primitive_desc_create(&pd, &md, attr, rt->eng, NULL), "matmul primitive desc");
    if (!rc)
        rc = dchk(dnnl_primitive_create(&g->prim, pd), "matmul primitive");
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (po)
        dnnl_post_ops_destroy(po);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    g->k = k, g->n = n, g->w = w, g->b = b, g->sum = sum;
    return rc;
}

/* dst[m][n] (+)= src[m][k] W^T + b */
static int gemm_run(struct cal_dec_rt *rt, const struct gemm *g, int64_t m, const float *src,
                    float *dst)
{
    dnnl_memory_desc_t smd, wmd, bmd, dmd;
    dnnl_dims_t sd = {m, g->k}, wd = {g->k, g->n}, bd = {1, g->n}, dd = {m, g->n};
    dnnl_memory_desc_init_by_tag(&smd, 2, sd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&wmd, 2, wd, dnnl_f32, dnnl_ba);
    dnnl_memory_desc_init_by_tag(&bmd, 2, bd, dnnl_f32, dnnl_ab);
    dnnl_memory_desc_init_by_tag(&dmd, 2, dd, dnnl_f32, dnnl_ab);
    dnnl_memory_t ms = NULL, mw = NULL, mb = NULL, mdst = NULL;
    int rc = dchk(dnnl_memory_create(&ms, &smd, rt->eng, (void *)(uintptr_t)src), "memory");
    if (!rc)
        rc = dchk(dnnl_memory_create(&mw, &wmd, rt->eng, (void *)(uintptr_t)g->w), "memory");
    if (!rc && g->b)
        rc = dchk(dnnl_memory_create(&mb, &bmd, rt->eng, (void *)(uintptr_t)g->b), "memory");
    if (!rc)
        rc = dchk(dnnl_memory_create(&mdst, &dmd, rt->eng, dst), "memory");
    if (!rc) {
        dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst},
                                {DNNL_ARG_BIAS, mb}};
        rc = dchk(dnnl_primitive_execute(g->prim, rt->stream, g->b ? 4 : 3, a), "matmul");
        if (!rc)
            rc = dchk(dnnl_stream_wait(rt->stream), "stream wait");
    }
    dnnl_memory_destroy(ms), dnnl_memory_destroy(mw), dnnl_memory_destroy(mdst);
    if (mb)
        dnnl_memory_destroy(mb);
    return rc;
}

void cal_dec_rt_destroy(struct cal_dec_rt *rt)
{
    if (!rt)
        return;
#ifdef SERVESIM_HAVE_CUDNN
    cal_dec_gpu_destroy(rt->gpu);
#endif
    if (rt->g)
        for (int i = 0; i < rt->d->layers * G_N; i++)
            if (rt->g[i].prim)
                dnnl_primitive_destroy(rt->g[i].prim);
    if (rt->stream)
        dnnl_stream_destroy(rt->stream);
    if (rt->eng)
        dnnl_engine_destroy(rt->eng);
    free(rt->g), free(rt->kc), free(rt->vc), free(rt->cosv), free(rt->sinv);
    free(rt->x), free(rt->xn), free(rt->qkv), free(rt->att), free(rt->gu), free(rt->mid);
    free(rt->last), free(rt->logits), free(rt->scores), free(rt->pos), free(rt->seq_of);
    free(rt->row_last), free(rt->row0);
    free(rt);
}

static void *zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

int cal_dec_rt_create(const struct cal_dec *d, const struct cal_dec_rt_opts *o,
                      struct cal_dec_rt **out)
{
    *out = NULL;
    if (!d->embed && !o->gpu)
        return sim_err_set(SIM_EINTERNAL, "cal_dec_rt_create: no weights");
    if (o->block_size < 1 || o->kv_blocks < 1 || o->max_tokens < 1 || o->max_seqs < 1)
        return sim_err_set(SIM_EINVAL, "decoder runtime: block size, KV blocks, max tokens and "
                           "max sequences must be at least 1");
    if (o->gpu) {
#ifdef SERVESIM_HAVE_CUDNN
        struct cal_dec_rt *rt = calloc(1, sizeof *rt);
        if (!rt)
            return SIM_ENOMEM;
        rt->d = d, rt->o = *o;
        int rc = cal_dec_gpu_create(d, o, &rt->gpu);
        if (rc)
            cal_dec_rt_destroy(rt);
        else
            *out = rt;
        return rc;
#else
        return sim_err_set(SIM_EUNAVAIL, "decoder runtime: this build has no GPU runtime (it "
                           "needs the CUDA toolkit, cuBLAS and cuDNN at build time)");
#endif
    }
    struct cal_dec_rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return SIM_ENOMEM;
    rt->d = d, rt->o = *o;
    if (rt->o.threads <= 0)
        rt->o.threads = omp_get_max_threads();
    omp_set_num_threads(rt->o.threads);
    int h = d->hidden, hd = d->head_dim, nq = d->heads, nkv = d->kv_heads, I = d->inter;
    int64_t qr = (int64_t)(nq + 2 * nkv) * hd, T = o->max_tokens, B = o->max_seqs;
    rt->layer_stride = (int64_t)o->kv_blocks * nkv * o->block_size * hd;
    size_t cache = (size_t)(rt->layer_stride * d->layers);
    int half = hd / 2, nthr = rt->o.threads;
    bool ok = (rt->g = zalloc((size_t)d->layers * G_N, sizeof *rt->g)) &&
              (rt->kc = zalloc(cache, sizeof(float))) && (rt->vc = zalloc(cache, sizeof(float))) &&
              (rt->cosv = zalloc((size_t)((int64_t)d->max_pos * half), sizeof(float))) &&
              (rt->sinv = zalloc((size_t)((int64_t)d->max_pos * half), sizeof(float))) &&
              (rt->x = zalloc((size_t)(T * h), sizeof(float))) &&
              (rt->xn = zalloc((size_t)(T * h), sizeof(float))) &&
              (rt->qkv = zalloc((size_t)(T * qr), sizeof(float))) &&
              (rt->att = zalloc((size_t)(T * nq * hd), sizeof(float))) &&
              (rt->gu = zalloc((size_t)(T * 2 * I), sizeof(float))) &&
              (rt->mid = zalloc((size_t)(T * I), sizeof(float))) &&
              (rt->last = zalloc((size_t)(B * h), sizeof(float))) &&
              (rt->logits = zalloc((size_t)(B * d->vocab), sizeof(float))) &&
              (rt->scores = zalloc((size_t)((int64_t)nthr * d->max_pos * (nq / nkv)), sizeof(float))) &&
              (rt->pos = zalloc((size_t)T, sizeof(int32_t))) &&
              (rt->seq_of = zalloc((size_t)T, sizeof(int32_t))) &&
              (rt->row_last = zalloc((size_t)B, sizeof(int64_t))) &&
              (rt->row0 = zalloc((size_t)B, sizeof(int64_t)));
    if (!ok) {
        cal_dec_rt_destroy(rt);
        return sim_err_set(SIM_ENOMEM, "decoder runtime: no memory for a %.1f MB KV cache and "
                           "the buffers of %lld tokens", 2.0 * (double)cache * 4 / 1e6,
                           (long long)T);
    }
    /* every page of the cache written once: a block never written would map the kernel's
     * shared zero page, and attention over it would read from the cache, not from memory as a
     * serving engine's does */
    memset(rt->kc, 0, cache * sizeof(float));
    memset(rt->vc, 0, cache * sizeof(float));
    for (int p = 0; p < d->max_pos; p++)
        for (int i = 0; i < half; i++) {
            double ang = p * pow(d->rope_theta, -2.0 * i / hd);
            rt->cosv[(int64_t)p * half + i] = (float)cos(ang);
            rt->sinv[(int64_t)p * half + i] = (float)sin(ang);
        }
    int rc = dchk(dnnl_engine_create(&rt->eng, dnnl_cpu, 0), "engine");
    if (!rc)
        rc = dchk(dnnl_stream_create(&rt->stream, rt->eng, dnnl_stream_default_flags), "stream");
    for (int l = 0; !rc && l < d->layers; l++) {
        const struct cal_dec_layer *L = &d->L[l];
        struct gemm *g = rt->g + (int64_t)l * G_N;
        if ((rc = gemm_make(rt, &g[G_QKV], h, qr, L->wqkv, L->bqkv, false)) ||
            (rc = gemm_make(rt, &g[G_OUT], (int64_t)nq * hd, h, L->wo, NULL, true)) ||
            (rc = gemm_make(rt, &g[G_GU], h, 2 * (int64_t)I, L->wgu, NULL, false)) ||
            (rc = gemm_make(rt, &g[G_DOWN], I, h, L->wd, NULL, true)))
            break;
    }
    if (!rc)
        rc = gemm_make(rt, &rt->g[G_HEAD], h, d->vocab, d->lm_head, NULL, false);
    if (rc) {
        cal_dec_rt_destroy(rt);
        return rc;
    }
    const dnnl_version_t *v = dnnl_version();
    snprintf(rt->desc, sizeof rt->desc, "oneDNN %d.%d.%d matmul (run-time rows), own OpenMP "
             "kernels for norms, RoPE, the paged KV cache and attention; fp32; %d thread%s",
             v->major, v->minor, v->patch, rt->o.threads, rt->o.threads == 1 ? "" : "s");
    *out = rt;
    return 0;
}

#ifdef SERVESIM_HAVE_CUDNN
#define GPU_OR(gpu_call)                                                                       \
    if (rt->gpu)                                                                               \
    return gpu_call
#else
#define GPU_OR(gpu_call)
#endif

const char *cal_dec_rt_describe(const struct cal_dec_rt *rt)
{
    GPU_OR(cal_dec_gpu_describe(rt->gpu));
    return rt->desc;
}

const char *cal_dec_rt_dtype(const struct cal_dec_rt *rt)
{
    GPU_OR("fp16");
    return "fp32";
}

const char *cal_dec_rt_exec_mode(const struct cal_dec_rt *rt)
{
    GPU_OR(cal_dec_gpu_exec_mode(rt->gpu));
    return "eager: one iteration at a time on the host threads, every operator synchronous";
}

void cal_dec_rt_timing(struct cal_dec_rt *rt, double *ns)
{
    rt->ns = ns;
#ifdef SERVESIM_HAVE_CUDNN
    if (rt->gpu)
        cal_dec_gpu_timing(rt->gpu, ns);
#endif
}

/* ---- kernels ---------------------------------------------------------------------------- */

static void rmsnorm(const struct cal_dec_rt *rt, const float *x, const float *w, int64_t rows,
                    float *y)
{
    int h = rt->d->hidden;
    float eps = (float)rt->d->eps;
#pragma omp parallel for num_threads(rt->o.threads) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * h;
        float ss = 0;
        for (int i = 0; i < h; i++)
            ss += xr[i] * xr[i];
        float inv = 1.0f / sqrtf(ss / (float)h + eps);
        for (int i = 0; i < h; i++)
            y[r * h + i] = xr[i] * inv * w[i];
    }
}

static void rope(const struct cal_dec_rt *rt, int64_t T)
{
    const struct cal_dec *d = rt->d;
    int hd = d->head_dim, half = hd / 2, nh = d->heads + d->kv_heads;
    int64_t qr = (int64_t)(d->heads + 2 * d->kv_heads) * hd;
#pragma omp parallel for num_threads(rt->o.threads) schedule(static)
    for (int64_t t = 0; t < T; t++) {
        const float *c = rt->cosv + (int64_t)rt->pos[t] * half, *s = rt->sinv + (int64_t)rt->pos[t] * half;
        for (int j = 0; j < nh; j++) {
            float *v = rt->qkv + t * qr + (int64_t)j * hd;
            for (int i = 0; i < half; i++) {
                float a = v[i], b = v[i + half];
                v[i] = a * c[i] - b * s[i];
                v[i + half] = b * c[i] + a * s[i];
            }
        }
    }
}

/* Offset of (block slot of position p of sequence s, kv head j) in a layer of the cache. */
static inline int64_t kv_at(const struct cal_dec_rt *rt, const struct cal_dec_seq *s, int p, int j)
{
    int bs = rt->o.block_size, hd = rt->d->head_dim;
    int64_t b = s->blocks[p / bs];
    return ((b * rt->d->kv_heads + j) * bs + p % bs) * hd;
}

static void kv_write(const struct cal_dec_rt *rt, const struct cal_dec_seq *s, int64_t T, int l)
{
    const struct cal_dec *d = rt->d;
    int hd = d->head_dim, nq = d->heads, nkv = d->kv_heads;
    int64_t qr = (int64_t)(nq + 2 * nkv) * hd;
    float *kc = rt->kc + l * rt->layer_stride, *vc = rt->vc + l * rt->layer_stride;
#pragma omp parallel for num_threads(rt->o.threads) schedule(static)
    for (int64_t t = 0; t < T; t++) {
        const struct cal_dec_seq *sq = &s[rt->seq_of[t]];
        for (int j = 0; j < nkv; j++) {
            int64_t at = kv_at(rt, sq, rt->pos[t], j);
            memcpy(kc + at, rt->qkv + t * qr + (int64_t)(nq + j) * hd, (size_t)hd * sizeof(float));
            memcpy(vc + at, rt->qkv + t * qr + (int64_t)(nq + nkv + j) * hd,
                   (size_t)hd * sizeof(float));
        }
    }
}

/* q . k in eight independent partial sums (a fixed order, so the compiler may use vector
 * lanes without reassociating) */
static inline float dot(const float *q, const float *k, int n)
{
    float p[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++)
            p[j] += q[i + j] * k[i + j];
    float a = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    for (; i < n; i++)
        a += q[i] * k[i];
    return a;
}

/* Query row t of sequence s at position p, the g = heads / kv heads query heads that share KV
 * head kvh, against positions 0..p: each key and value block read once for the whole group
 * (as paged-attention kernels do: the group's heads while the block is in the first cache).
 * sc: g x (p + 1) scores. */
static void attend(const struct cal_dec_rt *rt, const struct cal_dec_seq *s, int64_t t, int kvh,
                   int p, int l, float *sc)
{
    const struct cal_dec *d = rt->d;
    int hd = d->head_dim, nq = d->heads, nkv = d->kv_heads, g = nq / nkv;
    int bs = rt->o.block_size, len = p + 1;
    int64_t qr = (int64_t)(nq + 2 * nkv) * hd;
    const float *q0 = rt->qkv + t * qr + (int64_t)kvh * g * hd;
    const float *kc = rt->kc + l * rt->layer_stride, *vc = rt->vc + l * rt->layer_stride;
    float scale = 1.0f / sqrtf((float)hd);
    for (int u0 = 0; u0 < len; u0 += bs) {          /* block by block through the table */
        const float *k = kc + kv_at(rt, s, u0, kvh);
        int n = len - u0 < bs ? len - u0 : bs;
        for (int u = 0; u < n; u++, k += hd)
            for (int h = 0; h < g; h++)
                sc[(int64_t)h * len + u0 + u] = dot(q0 + (int64_t)h * hd, k, hd) * scale;
    }
    float *o0 = rt->att + t * (int64_t)nq * hd + (int64_t)kvh * g * hd;
    for (int h = 0; h < g; h++) {
        float *sh = sc + (int64_t)h * len, mx = -INFINITY, sum = 0;
        for (int u = 0; u < len; u++)
            mx = sh[u] > mx ? sh[u] : mx;
        for (int u = 0; u < len; u++)
            sum += (sh[u] = expf(sh[u] - mx));
        float inv = 1.0f / sum;
        for (int u = 0; u < len; u++)
            sh[u] *= inv;
        memset(o0 + (int64_t)h * hd, 0, (size_t)hd * sizeof *o0);
    }
    for (int u0 = 0; u0 < len; u0 += bs) {
        const float *v = vc + kv_at(rt, s, u0, kvh);
        int n = len - u0 < bs ? len - u0 : bs;
        for (int u = 0; u < n; u++, v += hd)
            for (int h = 0; h < g; h++) {
                float w = sc[(int64_t)h * len + u0 + u], *o = o0 + (int64_t)h * hd;
                for (int i = 0; i < hd; i++)
                    o[i] += w * v[i];
            }
    }
}

/* A thread's scores: g x max_pos floats. */
static float *scores_of(const struct cal_dec_rt *rt)
{
    return rt->scores + (int64_t)omp_get_thread_num() * rt->d->max_pos *
                            (rt->d->heads / rt->d->kv_heads);
}

/* Prefill chunks (q > 1, or a whole one-token prompt): each chunk's rows x KV heads in
 * parallel. */
static void attention_prefill(struct cal_dec_rt *rt, const struct cal_dec_seq *s, int n,
                              const int64_t *row0, int l)
{
    int nkv = rt->d->kv_heads;
    for (int i = 0; i < n; i++) {
        if (s[i].q == 1 && s[i].c > 0)
            continue;
        const struct cal_dec_seq *sq = &s[i];
        int64_t r0 = row0[i], work = (int64_t)sq->q * nkv;
#pragma omp parallel for num_threads(rt->o.threads) schedule(dynamic, 4)
        for (int64_t w = 0; w < work; w++) {
            int r = (int)(w / nkv), j = (int)(w % nkv);
            attend(rt, sq, r0 + r, j, sq->c + r, l, scores_of(rt));
        }
    }
}

/* Decodes (q == 1 after context): sequences x KV heads in parallel. */
static void attention_decode(struct cal_dec_rt *rt, const struct cal_dec_seq *s, int n,
                             const int64_t *row0, int l)
{
    int nkv = rt->d->kv_heads;
    int64_t work = (int64_t)n * nkv;
#pragma omp parallel for num_threads(rt->o.threads) schedule(dynamic, 2)
    for (int64_t w = 0; w < work; w++) {
        int i = (int)(w / nkv), j = (int)(w % nkv);
        if (s[i].q != 1 || s[i].c == 0)
            continue;
        attend(rt, &s[i], row0[i], j, s[i].c, l, scores_of(rt));
    }
}

static void silu_mul(const struct cal_dec_rt *rt, int64_t T)
{
    int64_t I = rt->d->inter;
#pragma omp parallel for num_threads(rt->o.threads) schedule(static)
    for (int64_t t = 0; t < T; t++) {
        const float *g = rt->gu + t * 2 * I, *u = g + I;
        float *m = rt->mid + t * I;
        for (int64_t i = 0; i < I; i++)
            m[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
    }
}

/* ---- one iteration ---------------------------------------------------------------------- */

#define TIMED(op, stmt)                                                                   \
    do {                                                                                  \
        double t0_ = rt->ns ? sim_wall_seconds() : 0;                                     \
        stmt;                                                                             \
        if (rt->ns)                                                                       \
            rt->ns[op] += (sim_wall_seconds() - t0_) * 1e9;                               \
    } while (0)

/* The iteration fits the runtime: 1..max_seqs sequences, each at least one new token within
 * the model's positions, at most max_tokens in all (both runtimes' buffers are sized so). */
static int check_iteration(const struct cal_dec_rt *rt, const struct cal_dec_seq *s, int n)
{
    const struct cal_dec *d = rt->d;
    if (n < 1 || n > rt->o.max_seqs)
        return sim_err_set(SIM_EINVAL, "decoder iteration: %d sequences (1..%d)", n,
                           rt->o.max_seqs);
    int64_t T = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].q < 1 || s[i].c < 0 || s[i].c + s[i].q > d->max_pos ||
            T + s[i].q > rt->o.max_tokens)
            return sim_err_set(SIM_EINVAL, "decoder iteration: sequence %d has %d tokens after "
                               "%d (positions up to %d, at most %d tokens an iteration)", i,
                               s[i].q, s[i].c, d->max_pos, rt->o.max_tokens);
        T += s[i].q;
    }
    return 0;
}

int cal_dec_rt_step(struct cal_dec_rt *rt, const struct cal_dec_seq *s, int n, float *logits,
                    int32_t *next)
{
    int rc0 = check_iteration(rt, s, n);
    if (rc0)
        return rc0;
    GPU_OR(cal_dec_gpu_step(rt->gpu, s, n, logits, next));
    const struct cal_dec *d = rt->d;
    int h = d->hidden, rc = 0;
    int64_t T = 0;
    bool any_pre = false, any_dec = false;
    int64_t *row0 = rt->row0;
    double t_host = rt->ns ? sim_wall_seconds() : 0;
    for (int i = 0; i < n; i++) {
        row0[i] = T;
        for (int r = 0; r < s[i].q; r++) {
            rt->pos[T + r] = s[i].c + r;
            rt->seq_of[T + r] = i;
        }
        T += s[i].q;
        rt->row_last[i] = T - 1;
        /* a decode is one token after some context, as the simulator's cost counts it; a
         * one-token prompt is a prefill */
        any_pre |= s[i].q > 1 || s[i].c == 0;
        any_dec |= s[i].q == 1 && s[i].c > 0;
    }
    if (rt->ns)
        rt->ns[CAL_DEC_HOST] += (sim_wall_seconds() - t_host) * 1e9;
    TIMED(CAL_DEC_EMBED, {
        for (int64_t t = 0, i = 0; i < n; i++)
            for (int r = 0; r < s[i].q; r++, t++)
                memcpy(rt->x + t * h, d->embed + (int64_t)s[i].tok[r] * h, (size_t)h * sizeof(float));
    });
    for (int l = 0; l < d->layers && !rc; l++) {
        const struct cal_dec_layer *L = &d->L[l];
        const struct gemm *g = rt->g + (int64_t)l * G_N;
        TIMED(CAL_DEC_NORM, rmsnorm(rt, rt->x, L->attn_norm, T, rt->xn));
        TIMED(CAL_DEC_QKV, rc = gemm_run(rt, &g[G_QKV], T, rt->xn, rt->qkv));
        if (rc)
            break;
        TIMED(CAL_DEC_ROPE, rope(rt, T));
        TIMED(CAL_DEC_KVW, kv_write(rt, s, T, l));
        if (any_pre)
            TIMED(CAL_DEC_ATT_PRE, attention_prefill(rt, s, n, row0, l));
        if (any_dec)
            TIMED(CAL_DEC_ATT_DEC, attention_decode(rt, s, n, row0, l));
        TIMED(CAL_DEC_OUT, rc = gemm_run(rt, &g[G_OUT], T, rt->att, rt->x));
        if (rc)
            break;
        TIMED(CAL_DEC_NORM, rmsnorm(rt, rt->x, L->mlp_norm, T, rt->xn));
        TIMED(CAL_DEC_GU, rc = gemm_run(rt, &g[G_GU], T, rt->xn, rt->gu));
        if (rc)
            break;
        TIMED(CAL_DEC_SILU, silu_mul(rt, T));
        TIMED(CAL_DEC_DOWN, rc = gemm_run(rt, &g[G_DOWN], T, rt->mid, rt->x));
    }
    if (rc)
        return rc;
    /* each sequence's last position: the final norm and the LM head (vLLM v1 computes logits
     * for those rows only) */
    TIMED(CAL_DEC_HEAD, {
        for (int i = 0; i < n; i++)
            memcpy(rt->xn + (int64_t)i * h, rt->x + rt->row_last[i] * h, (size_t)h * sizeof(float));
        rmsnorm(rt, rt->xn, d->final_norm, n, rt->last);
        rc = gemm_run(rt, &rt->g[G_HEAD], n, rt->last, rt->logits);
    });
    if (rc)
        return rc;
    t_host = rt->ns ? sim_wall_seconds() : 0;
    if (next)                                       /* the greedy sampler */
        for (int i = 0; i < n; i++) {
            const float *lg = rt->logits + (int64_t)i * d->vocab;
            int best = 0;
            for (int v = 1; v < d->vocab; v++)
                best = lg[v] > lg[best] ? v : best;
            next[i] = best;
        }
    if (logits)
        memcpy(logits, rt->logits, (size_t)n * (size_t)d->vocab * sizeof(float));
    if (rt->ns)
        rt->ns[CAL_DEC_HOST] += (sim_wall_seconds() - t_host) * 1e9;
    return 0;
}
