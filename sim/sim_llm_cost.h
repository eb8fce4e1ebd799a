/* sim_llm_cost — what an LLM replica is made of and what one of its iterations costs: the
 * decoder's architecture, the GPU's datasheet numbers, the iteration-time profile (a roofline
 * estimate from the two, or a linear profile fitted or given), the host's time per iteration,
 * and the KV-cache arithmetic (bytes per token, the block pool a GPU holds). Plain data and
 * pure functions of it: the engine's LLM replicas (sim_llm.c) time their iterations with
 * sim_llm_gpu_ns and sim_llm_host_ns, the layers above fill the structures from configs and
 * print the arithmetic (docs/llm.md). */
#ifndef SIM_LLM_COST_H
#define SIM_LLM_COST_H

#include <stdbool.h>
#include <stdint.h>

/* A decoder-only transformer (a model's published config.json, numbers only). */
struct sim_llm_arch {
    int layers, hidden, heads, kv_heads, head_dim, intermediate, vocab;
    bool tied_embeddings;              /* the LM head shares the embedding's weights */
    double dtype_bytes;                /* weights and activations (2: fp16/bf16) */
    double kv_dtype_bytes;             /* the KV cache's (2, or 1 for an fp8 cache) */
};

/* One GPU's datasheet: dense tensor peak for dtype_bytes, memory bandwidth and size, and the
 * link between the GPUs of a tensor-parallel group (per direction). */
struct sim_llm_gpu {
    double peak_tflops, mem_bw_gbs, mem_gib, link_gbs;
    const char *name;                  /* "h100", ... (a static string), or NULL */
};

enum sim_llm_prof { SIM_LLM_ROOFLINE, SIM_LLM_LINEAR, SIM_LLM_TABLE };

/* A measured iteration-time profile (format servesim-llm-profile/1, docs/llm.md), as
 * servesim-calibrate's decoder calibration writes it: operator times per tensor-parallel rank
 * against the shapes that set them, interpolated piecewise linearly (bilinearly on a grid)
 * and extended past the last points along the nearest segment, never below 0. Times in ns. */
struct sim_llm_curve {               /* y(x), x strictly increasing; n 0: absent */
    int n;
    double *x, *y;
};
struct sim_llm_grid {                /* z(x, y) = z[i ny + j] at (x[i], y[j]) */
    int nx, ny;
    double *x, *y, *z;
};
struct sim_llm_table {
    /* per layer */
    struct sim_llm_curve dense;        /* every operator but attention (QKV, output, gate-up and
                                        * down GEMMs, norms, RoPE, SiLU, the KV write, residual
                                        * adds) against the iteration's tokens */
    struct sim_llm_grid prefill;       /* one prefill chunk's attention against (its tokens,
                                        * the context before it); summed over the chunks */
    struct sim_llm_grid decode;        /* the iteration's decodes' attention against (their
                                        * count, their context lengths summed) */
    struct sim_llm_curve decode_one;   /* one decode's against its context (n 0: absent): the
                                        * decodes take at least their longest one's */
    struct sim_llm_curve allreduce;    /* the layer's all-reduces against tokens (tp > 1) */
    /* per iteration */
    struct sim_llm_curve lm_head;      /* against the sequences (each one's last position) */
    struct sim_llm_curve host;         /* the host's time against the sequences (n 0: the
                                        * config's host_us) */
    char source[512];                  /* file and provenance, for reports */
};
void sim_llm_table_free(struct sim_llm_table *t);

/* A linear iteration-time profile: base + per token of the iteration + per sequence + per
 * attention pair, a pair being one new token against one token of its context (a chunk of q
 * new tokens after c tokens makes q (c + (q + 1) / 2) pairs: causal attention). */
struct sim_llm_linear {
    double base_us, token_us, seq_us, pair_ns;
};

struct sim_llm_cfg {
    struct sim_llm_arch arch;
    int tp;                            /* tensor-parallel degree: GPUs per replica */
    struct sim_llm_gpu gpu;
    enum sim_llm_prof prof;
    struct sim_llm_linear lin;         /* prof == SIM_LLM_LINEAR */
    struct sim_llm_table *table;       /* prof == SIM_LLM_TABLE; owned by the model's config
                                        * (sim_model_cfg_free) */
    double host_us, host_us_per_seq;   /* CPU time per iteration: fixed, per sequence */
    int block_size;                    /* KV block, tokens (16) */
    double mem_util;                   /* gpu_memory_utilization (0.9) */
    double reserve_gib;                /* activations and workspace kept out of the pool */
    long kv_blocks;                    /* > 0: the pool's size as given (a real engine's
                                        * count), else from the arithmetic */
    double ttft_slo_ms, tpot_slo_ms;   /* a request is on time if it meets both (0: none) */
};

/* One sequence of an iteration: `new_tokens` computed after `context` tokens already in its
 * KV cache (a prefill chunk: the chunk after its prefix; a decode: 1 after the context). */
struct sim_llm_seq {
    int32_t new_tokens, context;
};

/* The bytes of one token's K and V in all layers and heads of a replica (all its ranks): what
 * a disaggregated prefill sends per prompt token. */
double sim_llm_kv_bytes_per_token(const struct sim_llm_cfg *c);
/* KV heads per tensor-parallel rank: max(1, kv_heads / tp), as vLLM shards them. */
double sim_llm_kv_heads(const struct sim_llm_cfg *c);
/* The parameter count of the architecture (embedding, layers, norms, LM head unless tied). */
double sim_llm_params(const struct sim_llm_arch *a);

/* The KV-cache arithmetic of one replica's GPU (each rank holds 1/tp of the heads). */
struct sim_llm_mem {
    double weights_gib;                /* per GPU: params x dtype / tp */
    double usable_gib;                 /* mem_gib x mem_util */
    double kv_gib;                     /* usable - weights - reserve */
    double bytes_per_token;            /* per GPU: 2 x layers x max(1, kv_heads / tp) x head_dim
                                        * x kv dtype (a rank keeps at least one KV head) */
    double block_bytes;                /* bytes_per_token x block_size */
    long blocks;                       /* floor(kv / block), or cfg->kv_blocks where given */
};
/* Fills *m; returns the blocks (<= 0: the weights and reserve leave no room for one). */
long sim_llm_memory(const struct sim_llm_cfg *c, struct sim_llm_mem *m /* OUT */);

/* The GPU time of one iteration over n sequences, in ns (the host's time not included):
 * roofline, per operator max(FLOPs / peak, bytes / bandwidth), summed; the linear profile;
 * or the measured table: layers x (dense(T) + the chunks' prefill attention + the decodes'
 * attention + all-reduce(T)) + LM head(n). n == 0 costs nothing. */
double sim_llm_gpu_ns(const struct sim_llm_cfg *c, const struct sim_llm_seq *seqs, int n);
/* The host's time of an iteration of n sequences, ns: the table's where it has one, else
 * host_us + host_us_per_seq x n. */
double sim_llm_host_ns(const struct sim_llm_cfg *c, int n);

#endif
