/* cal_kernels — the few CUDA kernels the cuDNN backend needs for layers that cuDNN's
 * descriptor API and cuBLAS do not cover: GELU (erf form), layer normalisation over the last
 * axis, the BERT embedding sum, fp32 <-> fp16 conversion, the fused groups' epilogue (bias,
 * residual, activation, batch-norm scale) and the channels-last concatenation. `half` selects __half data;
 * statistics are always accumulated in float. */
#ifndef CAL_KERNELS_H
#define CAL_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t cal_cu_gelu(const void *x, void *y, long n, int half, cudaStream_t s);
cudaError_t cal_cu_layernorm(const void *x, void *y, const float *gamma, const float *beta,
                             long rows, int d, float eps, int half, cudaStream_t s);
cudaError_t cal_cu_embed(const int32_t *ids, const void *word, const void *pos,
                         const void *type, void *y, long rows, int seq, int d, int half,
                         cudaStream_t s);
cudaError_t cal_cu_convert(const void *x, void *y, long n, int to_half, cudaStream_t s);
/* A fused group's epilogue, y = act(x * scale[c] + bias[c] + z) over n elements of c channels
 * (hw elements per channel and sample in NCHW; nhwc: channels innermost). scale, bias (float,
 * c entries) and z (same type and shape as y) may be NULL; x may be y. act: enum cal_act. */
cudaError_t cal_cu_epilogue(const void *x, void *y, long n, int c, long hw, int nhwc,
                            const float *scale, const float *bias, const void *z, int act,
                            int half, cudaStream_t s);
/* Copies one input of cj channels into channels [co, co + cj) of a channels-last output of ct
 * channels, over `pixels` pixels (batch x H x W); esz bytes per element. */
cudaError_t cal_cu_concat_nhwc(const void *x, void *y, long pixels, int cj, int ct, int co,
                               size_t esz, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
