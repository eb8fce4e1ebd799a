/* sim_llm_cost — an LLM iteration's time and a replica's KV-cache arithmetic (see the header;
 * the formulas are written out in docs/llm.md). */
#include "sim_llm_cost.h"

#include <math.h>
#include <stdlib.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

double sim_llm_params(const struct sim_llm_arch *a)
{
    double h = a->hidden, d = a->head_dim, nq = a->heads, nkv = a->kv_heads;
    double layer = h * (nq + 2 * nkv) * d     /* QKV */
                   + nq * d * h               /* output */
                   + 3 * h * a->intermediate  /* gate, up, down */
                   + 2 * h;                   /* two RMSNorms */
    double embed = (double)a->vocab * h;
    return embed + a->layers * layer + h + (a->tied_embeddings ? 0 : embed);
}

double sim_llm_kv_heads(const struct sim_llm_cfg *c)
{
    int h = c->arch.kv_heads / c->tp;   /* vLLM: max(1, total_num_kv_heads // tp) */
    return h < 1 ? 1 : h;
}

double sim_llm_kv_bytes_per_token(const struct sim_llm_cfg *c)
{
    const struct sim_llm_arch *a = &c->arch;
    return 2.0 * a->layers * a->kv_heads * a->head_dim * a->kv_dtype_bytes;
}

long sim_llm_memory(const struct sim_llm_cfg *c, struct sim_llm_mem *m)
{
    const struct sim_llm_arch *a = &c->arch;
    m->weights_gib = sim_llm_params(a) * a->dtype_bytes / c->tp / GIB;
    m->usable_gib = c->gpu.mem_gib * c->mem_util;
    m->kv_gib = m->usable_gib - m->weights_gib - c->reserve_gib;
    m->bytes_per_token = 2.0 * a->layers * sim_llm_kv_heads(c) * a->head_dim *
                         a->kv_dtype_bytes;
    m->block_bytes = m->bytes_per_token * c->block_size;
    if (c->kv_blocks > 0)
        m->blocks = c->kv_blocks;
    else
        m->blocks = m->kv_gib > 0 ? (long)floor(m->kv_gib * GIB / m->block_bytes) : 0;
    return m->blocks;
}

/* One operator on the roofline, ns: bound by compute or by memory, whichever is slower. */
static double op_ns(const struct sim_llm_gpu *g, double flops, double bytes)
{
    double tc = flops / (g->peak_tflops * 1e3);          /* TFLOP/s = 1e3 FLOP per ns */
    double tm = bytes / g->mem_bw_gbs;                   /* GB/s = 1 byte per ns */
    return tc > tm ? tc : tm;
}

/* A GEMM of T rows against a [k, n] weight: 2 T k n FLOPs; reads the weight and the input,
 * writes the output. */
static double gemm_ns(const struct sim_llm_gpu *g, double T, double k, double n, double b)
{
    return op_ns(g, 2 * T * k * n, (k * n + T * k + T * n) * b);
}

static double roofline_ns(const struct sim_llm_cfg *c, const struct sim_llm_seq *seqs, int n)
{
    const struct sim_llm_arch *a = &c->arch;
    const struct sim_llm_gpu *g = &c->gpu;
    double tp = c->tp, b = a->dtype_bytes, kvb = a->kv_dtype_bytes;
    double h = a->hidden, d = a->head_dim, nq = a->heads / tp, nkv = sim_llm_kv_heads(c);
    double I = a->intermediate / tp;
    double T = 0, aflops = 0, abytes = 0;
    for (int i = 0; i < n; i++) {
        double q = seqs[i].new_tokens, ctx = seqs[i].context;
        T += q;
        /* QK^T and PV: 2 x 2 FLOPs per head dim per pair, pairs causal within the chunk */
        aflops += 4 * nq * d * q * (ctx + (q + 1) / 2);
        /* K and V of the whole context read once; Q read and the output written */
        abytes += 2 * nkv * d * (ctx + q) * kvb + 2 * q * nq * d * b;
    }
    double layer = gemm_ns(g, T, h, (nq + 2 * nkv) * d, b)      /* QKV */
                   + gemm_ns(g, T, nq * d, h, b)                /* output */
                   + gemm_ns(g, T, h, 2 * I, b)                 /* gate and up */
                   + gemm_ns(g, T, I, h, b)                     /* down */
                   + op_ns(g, aflops, abytes)                   /* attention */
                   /* memory-bound elementwise: two RMSNorms, RoPE on Q and K, SiLU x up,
                    * the residual adds, the KV write */
                   + (T * h * 2 * 2 + T * (nq + nkv) * d * 2 + T * 3 * I + T * h * 2 * 2) * b /
                         g->mem_bw_gbs
                   + T * 2 * nkv * d * kvb / g->mem_bw_gbs;
    if (c->tp > 1) /* two ring all-reduces of [T, h] per layer over the link */
        layer += 2 * (2 * (tp - 1) / tp * T * h * b / g->link_gbs);
    /* embedding lookup and the LM head on each sequence's last position */
    double head = T * h * b / g->mem_bw_gbs + gemm_ns(g, n, h, a->vocab / tp, b);
    return a->layers * layer + head;
}

void sim_llm_table_free(struct sim_llm_table *t)
{
    if (!t)
        return;
    struct sim_llm_curve *cs[] = {&t->dense, &t->decode_one, &t->allreduce, &t->lm_head,
                                  &t->host};
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
        free(cs[i]->x);
        free(cs[i]->y);
    }
    struct sim_llm_grid *gs[] = {&t->prefill, &t->decode};
    for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) {
        free(gs[i]->x);
        free(gs[i]->y);
        free(gs[i]->z);
    }
    free(t);
}

/* The segment of xs (n >= 2, increasing) used for x: the one holding it, or the first or
 * last (extension past the ends). */
static int segment(const double *xs, int n, double x)
{
    int lo = 0, hi = n - 1;                     /* xs[lo] <= x < xs[hi], bisected */
    if (x <= xs[0])
        return 0;
    if (x >= xs[n - 1])
        return n - 2;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (xs[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static double curve_at(const struct sim_llm_curve *cv, double x)
{
    if (cv->n == 1)
        return cv->y[0];
    int i = segment(cv->x, cv->n, x);
    double f = (x - cv->x[i]) / (cv->x[i + 1] - cv->x[i]);
    double y = cv->y[i] + f * (cv->y[i + 1] - cv->y[i]);
    return y > 0 ? y : 0;
}

static double grid_at(const struct sim_llm_grid *g, double x, double y)
{
    int i = g->nx > 1 ? segment(g->x, g->nx, x) : 0;
    int j = g->ny > 1 ? segment(g->y, g->ny, y) : 0;
    double fx = g->nx > 1 ? (x - g->x[i]) / (g->x[i + 1] - g->x[i]) : 0;
    double fy = g->ny > 1 ? (y - g->y[j]) / (g->y[j + 1] - g->y[j]) : 0;
    int i1 = g->nx > 1 ? i + 1 : i, j1 = g->ny > 1 ? j + 1 : j;
    const double *z = g->z;
    double a = z[i * g->ny + j] + fy * (z[i * g->ny + j1] - z[i * g->ny + j]);
    double b = z[i1 * g->ny + j] + fy * (z[i1 * g->ny + j1] - z[i1 * g->ny + j]);
    double v = a + fx * (b - a);
    return v > 0 ? v : 0;
}

static double table_ns(const struct sim_llm_cfg *c, const struct sim_llm_seq *seqs, int n)
{
    const struct sim_llm_table *t = c->table;
    double T = 0, pre = 0, kv = 0, longest = 0;
    int dec = 0;
    for (int i = 0; i < n; i++) {
        double q = seqs[i].new_tokens, ctx = seqs[i].context;
        T += q;
        if (q == 1 && ctx > 0) {                /* a decode */
            dec++;
            kv += ctx;
            longest = ctx > longest ? ctx : longest;
        } else {
            pre += grid_at(&t->prefill, q, ctx);
        }
    }
    double att = 0;
    if (dec > 0) {
        att = grid_at(&t->decode, dec, kv);
        if (t->decode_one.n > 0 && curve_at(&t->decode_one, longest) > att)
            att = curve_at(&t->decode_one, longest);
    }
    double layer = curve_at(&t->dense, T) + pre + att +
                   (t->allreduce.n > 0 ? curve_at(&t->allreduce, T) : 0);
    return c->arch.layers * layer + curve_at(&t->lm_head, n);
}

double sim_llm_gpu_ns(const struct sim_llm_cfg *c, const struct sim_llm_seq *seqs, int n)
{
    if (n <= 0)
        return 0;
    if (c->prof == SIM_LLM_ROOFLINE)
        return roofline_ns(c, seqs, n);
    if (c->prof == SIM_LLM_TABLE)
        return table_ns(c, seqs, n);
    double T = 0, pairs = 0;
    for (int i = 0; i < n; i++) {
        double q = seqs[i].new_tokens;
        T += q;
        pairs += q * (seqs[i].context + (q + 1) / 2);
    }
    const struct sim_llm_linear *l = &c->lin;
    return (l->base_us + l->token_us * T + l->seq_us * n) * 1e3 + l->pair_ns * pairs;
}

double sim_llm_host_ns(const struct sim_llm_cfg *c, int n)
{
    if (c->prof == SIM_LLM_TABLE && c->table->host.n > 0)
        return curve_at(&c->table->host, n);
    return (c->host_us + c->host_us_per_seq * n) * 1e3;
}
