/* cal_dec — a decoder-only transformer (Llama family: RMSNorm, rotary positions, grouped-query
 * attention, SiLU-gated MLP) as data, and the two ways servesim-calibrate runs it:
 *
 *  - the reference (cal_dec_ref_logits): plain loops in double accumulation over a whole
 *    sequence, recomputed from its tokens with no cache; the oracle of `check`;
 *  - the runtime (cal_dec_rt, cal_dec_run.c): what a serving engine runs — one iteration of
 *    mixed prefill chunks and decodes over a paged KV cache, the GEMMs on oneDNN's matmul, the
 *    rest (norms, RoPE, the KV write, attention, SiLU) in the project's own OpenMP kernels,
 *    each operator timed on request (the tables of `llm-measure`); or, with opts.gpu, the same
 *    iteration on an NVIDIA GPU in fp16 (cal_dec_gpu.h: cuBLASLt, own CUDA kernels, CUDA
 *    graphs), behind the same calls.
 *
 * A decoder file (format "servesim-decoder/1", calibrate/networks/ *.json, written by
 * networks/generate.py) carries the fields of the model's published config.json under their
 * Hugging Face names; its `arch` names the simulator's architecture entry (workloads/wl_llm.c)
 * a measured profile of it is for. Weights are random and seeded: nothing is downloaded. */
#ifndef CAL_DEC_H
#define CAL_DEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {   /* the GPU runtime (cal_dec_gpu.cu) is C++ */
#endif

#define CAL_DEC_FORMAT "servesim-decoder/1"

struct cal_dec_layer {
    float *attn_norm;            /* [h] */
    float *wqkv;                 /* [(nq + 2 nkv) d][h]: the rows of q, then k, then v */
    float *bqkv;                 /* [(nq + 2 nkv) d] or NULL (Qwen2 has attention biases) */
    float *wo;                   /* [h][nq d] */
    float *mlp_norm;             /* [h] */
    float *wgu;                  /* [2 I][h]: the gate's rows, then the up projection's */
    float *wd;                   /* [h][I] */
};

struct cal_dec {
    char name[64], arch[64], file[512], source[512], pub_ref[512];
    int layers, hidden, heads, kv_heads, head_dim, inter, vocab, max_pos;
    double rope_theta, eps;
    bool tied, qkv_bias;
    int64_t pub_params;          /* the model card's parameter count (0: none published) */
    /* weights after cal_dec_init_weights (NULL before) */
    float *embed;                /* [vocab][h] */
    float *lm_head;              /* [vocab][h]; the embedding itself when tied */
    float *final_norm;           /* [h] */
    struct cal_dec_layer *L;
};

/* Is `file` a decoder file (its format says so)? false on any error (the loader then says). */
bool cal_dec_is_file(const char *file);
/* Loads and checks a decoder file; errors name the file and JSON path. */
int cal_dec_load(const char *file, struct cal_dec **out /* OUT */);
void cal_dec_destroy(struct cal_dec *d);
/* Learned parameters, counted from the shapes (embedding, LM head unless tied, per layer the
 * projections with their biases and two norms, the final norm). */
int64_t cal_dec_params(const struct cal_dec *d);
/* Bytes of fp32 weights cal_dec_init_weights allocates. */
double cal_dec_weight_bytes(const struct cal_dec *d);
/* Deterministic random weights (GSL, seeded), scaled so activations stay O(1). */
int cal_dec_init_weights(struct cal_dec *d, uint64_t seed);

/* The reference: logits [vocab] of the last of n tokens (positions 0..n-1), from scratch. */
int cal_dec_ref_logits(const struct cal_dec *d, const int32_t *tok, int n, float *logits);

/* Deterministic token ids in [0, vocab) (free()). */
int32_t *cal_dec_tokens(const struct cal_dec *d, int n, uint64_t seed);

/* The runtime's operators, timed one by one when asked (cal_dec_rt_timing). */
#define CAL_DEC_OPS(X)                                                                         \
    X(CAL_DEC_EMBED, "embed") X(CAL_DEC_NORM, "rmsnorm") X(CAL_DEC_QKV, "qkv_gemm")            \
    X(CAL_DEC_ROPE, "rope") X(CAL_DEC_KVW, "kv_write") X(CAL_DEC_ATT_PRE, "prefill_attention") \
    X(CAL_DEC_ATT_DEC, "decode_attention") X(CAL_DEC_OUT, "out_gemm")                          \
    X(CAL_DEC_GU, "gate_up_gemm") X(CAL_DEC_SILU, "silu_mul") X(CAL_DEC_DOWN, "down_gemm")     \
    X(CAL_DEC_HEAD, "lm_head") X(CAL_DEC_HOST, "host")

enum cal_dec_op {
#define CAL_DEC_OP_ENUM(e, s) e,
    CAL_DEC_OPS(CAL_DEC_OP_ENUM)
#undef CAL_DEC_OP_ENUM
    CAL_DEC_NOPS
};
const char *cal_dec_op_name(enum cal_dec_op op);

/* One sequence of an iteration: q new tokens after c tokens of context whose keys and values
 * are in the cache; blocks[] covers its c + q positions (block b holds positions
 * [b bs, (b + 1) bs)). */
struct cal_dec_seq {
    int q, c;
    const int32_t *tok;          /* its q new tokens */
    const int32_t *blocks;
};

struct cal_dec_rt;

struct cal_dec_rt_opts {
    int threads;                 /* CPU: OpenMP threads of every operator (0: all) */
    int block_size;              /* tokens per KV block (16, vLLM's) */
    long kv_blocks;              /* blocks in the pool */
    int max_tokens, max_seqs;    /* the largest iteration it runs */
    /* the GPU runtime (cal_dec_gpu.h) instead of the CPU's: fp16 on CUDA device `device`;
     * eager: no CUDA graphs; seed: its weights where the decoder has none on the host */
    bool gpu, eager;
    int device;
    uint64_t seed;
};

int cal_dec_rt_create(const struct cal_dec *d, const struct cal_dec_rt_opts *o,
                      struct cal_dec_rt **out /* OUT */);
void cal_dec_rt_destroy(struct cal_dec_rt *rt);
/* Times every operator into `ns` (CAL_DEC_NOPS sums, added to) while set; NULL: none. */
void cal_dec_rt_timing(struct cal_dec_rt *rt, double *ns);
/* One iteration: writes the new tokens' keys and values into their blocks and, per sequence,
 * the logits of its last new position (logits: n x vocab, or NULL: computed, not copied
 * out). next (optional): the argmax of each sequence's logits, the greedy sampler's token. */
int cal_dec_rt_step(struct cal_dec_rt *rt, const struct cal_dec_seq *s, int n,
                    float *logits /* OUT or NULL */, int32_t *next /* OUT or NULL */);
/* What ran it: "oneDNN 2.6.3 matmul (run-time rows), own OpenMP kernels ...; N threads". */
const char *cal_dec_rt_describe(const struct cal_dec_rt *rt);
/* Its data type ("fp32" on the CPU, "fp16" on a GPU) and how it issues an iteration. */
const char *cal_dec_rt_dtype(const struct cal_dec_rt *rt);
const char *cal_dec_rt_exec_mode(const struct cal_dec_rt *rt);

#ifdef __cplusplus
}
#endif

#endif
