/* cal_dec_gpu — the decoder runtime on an NVIDIA GPU (cal_dec_gpu.cu): the second
 * implementation behind cal_dec_rt (cal_dec.h), chosen by cal_dec_rt_opts.gpu, so `check`,
 * `llm-measure` and `llm-validate` run it unchanged.
 *
 *  - fp16 weights, activations and KV cache, fp32 accumulation and softmax;
 *  - GEMMs (QKV with its bias as an epilogue, output, gate-up, down, LM head in fp32 out) on
 *    cuBLASLt, an algorithm chosen by its heuristic once per (GEMM, rows) and kept;
 *  - the project's own kernels for the embedding lookup, RMSNorm, RoPE, the paged KV write,
 *    prefill attention (on the tensor cores: FlashAttention-2's loop in WMMA fragments, 64
 *    query rows a block; where that kernel is unavailable or disagrees with the plain one at
 *    start-up, 32 rows a block on the CUDA cores), decode attention (one block per sequence,
 *    query head and split of the context, four warps over the split, splits merged as
 *    flash-decoding does), SiLU-and-multiply and the greedy sampler's argmax;
 *  - iterations of decodes only run as CUDA graphs captured at vLLM's batch sizes (1, 2, 4,
 *    then multiples of 8 to 512), padded to the next one, as vLLM runs them (unless eager);
 *  - at start-up, as a serving engine warms up: every GEMM at every row count it may run
 *    (cuBLASLt's heuristics, the lazy loading of its kernels), every kernel once, and every
 *    graph captured and replayed, so that no served iteration pays a first time;
 *  - every operator is bracketed by CUDA events (also inside the graphs), so the timed
 *    iteration is the served one: an operator's time is the GPU time between its events, the
 *    host's is the rest of the iteration's wall time (metadata, copies, launch, sync).
 *
 * Weights: the decoder's own (cal_dec_init_weights, converted to fp16) where it has them
 * (`check`); else drawn on the GPU from the seed with the same ranges (a 7-8B decoder's fp32
 * weights would take minutes to draw on the host).
 *
 * Run on an H100 twice (experiments/llm/h100): first without the warm-up, the tensor-core
 * prefill and the decode splits (11befb6), then with them (c04cff3, run2/). */
#ifndef CAL_DEC_GPU_H
#define CAL_DEC_GPU_H

#include "cal_dec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cal_dec_gpu;

int cal_dec_gpu_create(const struct cal_dec *d, const struct cal_dec_rt_opts *o,
                       struct cal_dec_gpu **out /* OUT */);
void cal_dec_gpu_destroy(struct cal_dec_gpu *g);
void cal_dec_gpu_timing(struct cal_dec_gpu *g, double *ns);
int cal_dec_gpu_step(struct cal_dec_gpu *g, const struct cal_dec_seq *s, int n, float *logits,
                     int32_t *next);
const char *cal_dec_gpu_describe(const struct cal_dec_gpu *g);
const char *cal_dec_gpu_exec_mode(const struct cal_dec_gpu *g);

#ifdef __cplusplus
}
#endif

#endif
