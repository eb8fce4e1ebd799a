/* cal_kernels — the few CUDA kernels the cuDNN backend needs for layers that cuDNN's
 * descriptor API and cuBLAS do not cover: GELU (erf form), layer normalisation over the last
 * axis, the BERT embedding sum, and fp32 <-> fp16 conversion. `half` selects __half data;
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

#ifdef __cplusplus
}
#endif

#endif
