/* cal_epi — the element rules of a fused group's epilogue, shared by the CUDA kernels
 * (cal_kernels.cu) and the CPU tests that check them against the reference: which channel an
 * element belongs to in either layout, the activations, and the epilogue itself,
 * y = act(x * scale[c] + bias[c] + z). Header-only; CAL_HD marks host+device functions. */
#ifndef CAL_EPI_H
#define CAL_EPI_H

#include <math.h>

#ifdef __CUDACC__
#define CAL_HD __host__ __device__ static inline
#else
#define CAL_HD static inline
#endif

enum cal_act { CAL_ACT_NONE, CAL_ACT_RELU, CAL_ACT_RELU6, CAL_ACT_SIGMOID, CAL_ACT_TANH,
               CAL_ACT_GELU };

/* The channel of element i of a tensor of c channels: channels-last (and rows x features)
 * tensors cycle through the channels, NCHW ones hold hw elements of a channel in a row. */
CAL_HD long cal_epi_channel(long i, int c, long hw, int nhwc)
{
    return nhwc ? i % c : (i / hw) % c;
}

CAL_HD float cal_epi_act(int act, float v)
{
    switch (act) {
    case CAL_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case CAL_ACT_RELU6: return v < 0.0f ? 0.0f : v > 6.0f ? 6.0f : v;
    case CAL_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case CAL_ACT_TANH: return tanhf(v);
    case CAL_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678f));
    default: return v;
    }
}

/* One element of the epilogue: scale, bias may be NULL (1 and 0); zv is the residual's value
 * (0 when there is none). */
CAL_HD float cal_epi_apply(float xv, long ch, const float *scale, const float *bias, float zv,
                           int act)
{
    float v = xv;
    if (scale)
        v *= scale[ch];
    if (bias)
        v += bias[ch];
    return cal_epi_act(act, v + zv);
}

/* The source of element i of a channel concatenation in channels-last layout: output pixel
 * p = i / ct, channel k = i % ct falls in the input whose channel range [co, co + cj) holds k. */
CAL_HD long cal_epi_concat_src(long p, int k, int co, int cj)
{
    return p * cj + (k - co);
}

#endif
