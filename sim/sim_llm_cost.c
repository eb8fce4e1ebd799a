/* sim_llm_cost — an LLM iteration's time and a replica's KV-cache arithmetic (see the header;
 * the formulas are written out in docs/llm.md). */
#include "sim_llm_cost.h"

#include <math.h>

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

double sim_llm_gpu_ns(const struct sim_llm_cfg *c, const struct sim_llm_seq *seqs, int n)
{
    if (n <= 0)
        return 0;
    if (c->prof == SIM_LLM_ROOFLINE)
        return roofline_ns(c, seqs, n);
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
    return (c->host_us + c->host_us_per_seq * n) * 1e3;
}
