/* cal_cudnn — the cuDNN (NVIDIA GPU) calibration backend: the same cal_net graph as oneDNN,
 * executed with cuDNN's descriptor API (convolution with cudnnFindConvolutionForwardAlgorithm,
 * batch norm, pooling, activations, softmax, tensor add), cuBLAS GEMMs (fc, linear, the
 * per-head attention matmuls, strided batched) and three small kernels (cal_kernels.cu: GELU,
 * layer norm, embedding). Activations are NCHW (tokens {N*S, D}, scores {N,H,S,S}) in one
 * device arena planned by liveness; the workspace is the largest any chosen algorithm needs.
 * Precisions: fp32 (FMA math, no TF32), tf32 (tensor-op math allowed), fp16 (half data,
 * float accumulation, tensor cores). Timing: CUDA events around the whole forward pass.
 * Model load: the host-to-device copy of the weights (plus, for fp16, their on-device
 * conversion). Memory: weights + arena + workspace, checked against cudaMemGetInfo. */
#include "cal_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_kernels.h"
#include "sim_err.h"

struct lrt {                       /* per-layer runtime state */
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    cudnnOpTensorDescriptor_t op;
    size_t off_w, off_b, off_mean, off_var; /* into the weight blocks; (size_t)-1 = none */
};

struct cu {
    struct cal_opts o;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    const struct cal_net *net;
    int batch;
    bool half;
    size_t esz;
    cudnnDataType_t dt;
    struct lrt *rt;
    void **t;                      /* per tensor t+1: device pointer */
    char *arena, *wf, *wh, *ws;    /* activations, float weights, half weights, workspace */
    size_t arena_bytes, wf_bytes, wh_bytes, ws_bytes;
    int32_t *ids;
};

#define CU(call, l, what)                                                                     \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return sim_err_set(SIM_EINTERNAL, "cudnn backend: layer %s: %s: %s",              \
                               (l) ? (l)->name : "-", what, cudaGetErrorString(e_));          \
    } while (0)
#define DNN(call, l, what)                                                                    \
    do {                                                                                      \
        cudnnStatus_t e_ = (call);                                                            \
        if (e_ != CUDNN_STATUS_SUCCESS)                                                       \
            return sim_err_set(e_ == CUDNN_STATUS_NOT_SUPPORTED ? SIM_EUNAVAIL : SIM_EINTERNAL, \
                               "cudnn backend: layer %s: %s: %s", (l) ? (l)->name : "-", what, \
                               cudnnGetErrorString(e_));                                      \
    } while (0)
#define BLAS(call, l, what)                                                                   \
    do {                                                                                      \
        cublasStatus_t e_ = (call);                                                           \
        if (e_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return sim_err_set(SIM_EINTERNAL, "cudnn backend: layer %s: %s: cuBLAS status %d", \
                               (l) ? (l)->name : "-", what, (int)e_);                        \
    } while (0)

static const struct cal_layer *const NOL = NULL;

static int cu_create(const struct cal_opts *o, void **out)
{
    if (o->inter_op > 1)
        return sim_err_set(SIM_EUNAVAIL, "cudnn backend: inter-op workers (%d) are a CPU knob; "
                           "one forward pass is one stream here", o->inter_op);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        return sim_err_set(SIM_EUNAVAIL, "cudnn backend: no CUDA device here (%s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    if (o->device >= n)
        return sim_err_set(SIM_EINVAL, "--device: expected 0 to %d, got %d", n - 1, o->device);
    struct cu *c = calloc(1, sizeof *c);
    if (!c)
        return SIM_ENOMEM;
    c->o = *o;
    *out = c;
    CU(cudaSetDevice(o->device), NOL, "cudaSetDevice");
    CU(cudaStreamCreate(&c->s), NOL, "stream");
    CU(cudaEventCreate(&c->e0), NOL, "event");
    CU(cudaEventCreate(&c->e1), NOL, "event");
    DNN(cudnnCreate(&c->dnn), NOL, "cudnnCreate");
    DNN(cudnnSetStream(c->dnn, c->s), NOL, "cudnnSetStream");
    BLAS(cublasCreate(&c->blas), NOL, "cublasCreate");
    BLAS(cublasSetStream(c->blas, c->s), NOL, "cublasSetStream");
    c->half = o->precision == CAL_FP16;
    c->esz = c->half ? 2 : 4;
    c->dt = c->half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    BLAS(cublasSetMathMode(c->blas, o->precision == CAL_FP32 ? CUBLAS_PEDANTIC_MATH
                                    : o->precision == CAL_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                               : CUBLAS_DEFAULT_MATH),
         NOL, "cublasSetMathMode");
    return 0;
}

static int cu_info(void *st, struct cal_device_info *out)
{
    struct cu *c = st;
    struct cudaDeviceProp p;
    int drv = 0, rt = 0, bl = 0;
    memset(out, 0, sizeof *out);
    CU(cudaGetDeviceProperties(&p, c->o.device), NOL, "device properties");
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetVersion(c->blas, &bl);
    snprintf(out->device, sizeof out->device, "%s", p.name);
    /* kind: the model token after "NVIDIA", lowercased ("NVIDIA H100 80GB HBM3" -> h100) */
    const char *m = strncmp(p.name, "NVIDIA ", 7) == 0 ? p.name + 7 : p.name;
    size_t k = 0;
    for (; m[k] && m[k] != ' ' && k + 1 < sizeof out->kind; k++)
        out->kind[k] = (char)(m[k] >= 'A' && m[k] <= 'Z' ? m[k] - 'A' + 'a' : m[k]);
    out->kind[k] = 0;
    snprintf(out->versions, sizeof out->versions, "driver %d.%d, CUDA runtime %d.%d, cuDNN %zu, "
             "cuBLAS %d, compute capability %d.%d, %zu MiB", drv / 1000, drv % 1000 / 10,
             rt / 1000, rt % 1000 / 10, cudnnGetVersion(), bl, p.major, p.minor,
             p.totalGlobalMem >> 20);
    return 0;
}

static void free_rt(struct cu *c)
{
    for (int i = 0; c->rt && i < c->net->n; i++) {
        struct lrt *r = &c->rt[i];
        if (r->x) cudnnDestroyTensorDescriptor(r->x);
        if (r->y) cudnnDestroyTensorDescriptor(r->y);
        if (r->b) cudnnDestroyTensorDescriptor(r->b);
        if (r->w) cudnnDestroyFilterDescriptor(r->w);
        if (r->conv) cudnnDestroyConvolutionDescriptor(r->conv);
        if (r->pool) cudnnDestroyPoolingDescriptor(r->pool);
        if (r->act) cudnnDestroyActivationDescriptor(r->act);
        if (r->op) cudnnDestroyOpTensorDescriptor(r->op);
    }
    free(c->rt);
    c->rt = NULL;
}

static void cu_unprepare(void *st)
{
    struct cu *c = st;
    if (!c->net)
        return;
    free_rt(c);
    cudaFree(c->arena), cudaFree(c->wf), cudaFree(c->wh), cudaFree(c->ws), cudaFree(c->ids);
    free(c->t);
    c->arena = c->wf = c->wh = c->ws = NULL;
    c->ids = NULL;
    c->t = NULL;
    c->net = NULL;
}

/* 4-D NCHW descriptor of tensor shape s (tokens {N*S, D, 1, 1}; vectors {N, K, 1, 1};
 * scores {N, H, S, S}). */
static int tensor_desc(struct cu *c, const struct cal_shape *s, cudnnTensorDescriptor_t *d,
                       const struct cal_layer *l)
{
    int n = c->batch, dims[4];
    if (s->nd == 3)
        dims[0] = n, dims[1] = (int)s->d[0], dims[2] = (int)s->d[1], dims[3] = (int)s->d[2];
    else if (s->nd == 2)
        dims[0] = n * (int)s->d[0], dims[1] = (int)s->d[1], dims[2] = dims[3] = 1;
    else
        dims[0] = n, dims[1] = (int)s->d[0], dims[2] = dims[3] = 1;
    DNN(cudnnCreateTensorDescriptor(d), l, "tensor descriptor");
    DNN(cudnnSetTensor4dDescriptor(*d, CUDNN_TENSOR_NCHW, c->dt, dims[0], dims[1], dims[2], dims[3]),
        l, "tensor descriptor");
    return 0;
}

/* Offset of the next weight array of `count` floats in the staging block (256-byte aligned;
 * the fp16 copy of the block uses half of each offset). */
static size_t wput(size_t *bytes, int64_t count)
{
    size_t off = *bytes;
    *bytes += ((size_t)count * sizeof(float) + 255) / 256 * 256;
    return off;
}

static int build(struct cu *c, int i)
{
    const struct cal_net *net = c->net;
    const struct cal_layer *l = &net->layers[i];
    struct lrt *r = &c->rt[i];
    const struct cal_shape *xs = cal_net_tensor_shape(net, l->in[0]);
    int rc;
    if (l->op != CAL_EMBED && (rc = tensor_desc(c, xs, &r->x, l)))
        return rc;
    if ((rc = tensor_desc(c, &l->shape, &r->y, l)))
        return rc;
    switch (l->op) {
    case CAL_CONV: {
        int cg = (int)xs->d[0] / l->groups;
        DNN(cudnnCreateFilterDescriptor(&r->w), l, "filter");
        DNN(cudnnSetFilter4dDescriptor(r->w, c->dt, CUDNN_TENSOR_NCHW, l->out, cg, l->kh, l->kw), l, "filter");
        DNN(cudnnCreateConvolutionDescriptor(&r->conv), l, "convolution");
        DNN(cudnnSetConvolution2dDescriptor(r->conv, l->ph, l->pw, l->sh, l->sw, l->dh, l->dw,
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), l, "convolution");
        DNN(cudnnSetConvolutionGroupCount(r->conv, l->groups), l, "groups");
        DNN(cudnnSetConvolutionMathType(r->conv, c->o.precision == CAL_FP32 ? CUDNN_FMA_MATH
                                        : CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION), l, "math type");
        int on, oc, oh, ow;
        DNN(cudnnGetConvolution2dForwardOutputDim(r->conv, r->x, r->w, &on, &oc, &oh, &ow), l, "output");
        if (oh != l->shape.d[1] || ow != l->shape.d[2] || oc != l->out)
            return sim_err_set(SIM_EINTERNAL, "cudnn backend: %s: cuDNN output %dx%dx%d, network %lldx%lldx%lld",
                               l->name, oc, oh, ow, (long long)l->shape.d[0], (long long)l->shape.d[1],
                               (long long)l->shape.d[2]);
        if (l->b) {
            DNN(cudnnCreateTensorDescriptor(&r->b), l, "bias");
            DNN(cudnnSetTensor4dDescriptor(r->b, CUDNN_TENSOR_NCHW, c->dt, 1, l->out, 1, 1), l, "bias");
        }
        return 0; /* the algorithm is found once the arena exists (it runs candidates) */
    }
    case CAL_BN:
        DNN(cudnnCreateTensorDescriptor(&r->b), l, "bn parameters");
        DNN(cudnnDeriveBNTensorDescriptor(r->b, r->x, CUDNN_BATCHNORM_SPATIAL), l, "bn parameters");
        return 0;
    case CAL_RELU: case CAL_RELU6: case CAL_SIGMOID: case CAL_TANH:
        DNN(cudnnCreateActivationDescriptor(&r->act), l, "activation");
        DNN(cudnnSetActivationDescriptor(r->act, l->op == CAL_RELU ? CUDNN_ACTIVATION_RELU
                                         : l->op == CAL_RELU6 ? CUDNN_ACTIVATION_CLIPPED_RELU
                                         : l->op == CAL_SIGMOID ? CUDNN_ACTIVATION_SIGMOID
                                                                : CUDNN_ACTIVATION_TANH,
                                         CUDNN_NOT_PROPAGATE_NAN, 6.0), l, "activation");
        return 0;
    case CAL_MAXPOOL: case CAL_AVGPOOL: case CAL_GAP: {
        bool gap = l->op == CAL_GAP;
        DNN(cudnnCreatePoolingDescriptor(&r->pool), l, "pooling");
        DNN(cudnnSetPooling2dDescriptor(r->pool, l->op == CAL_MAXPOOL ? CUDNN_POOLING_MAX
                                        : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                        CUDNN_NOT_PROPAGATE_NAN, gap ? (int)xs->d[1] : l->kh,
                                        gap ? (int)xs->d[2] : l->kw, gap ? 0 : l->ph, gap ? 0 : l->pw,
                                        gap ? 1 : l->sh, gap ? 1 : l->sw), l, "pooling");
        return 0;
    }
    case CAL_ADD:
        DNN(cudnnCreateOpTensorDescriptor(&r->op), l, "op tensor");
        DNN(cudnnSetOpTensorDescriptor(r->op, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                       CUDNN_NOT_PROPAGATE_NAN), l, "op tensor");
        return 0;
    case CAL_FC: case CAL_LINEAR:
        if (l->b) {
            int rows = l->op == CAL_FC ? c->batch : c->batch * (int)xs->d[0];
            DNN(cudnnCreateTensorDescriptor(&r->b), l, "bias");
            DNN(cudnnSetTensor4dDescriptor(r->b, CUDNN_TENSOR_NCHW, c->dt, 1, l->out, 1, 1), l, "bias");
            /* y as {rows, out, 1, 1} so the bias broadcasts over rows */
            cudnnDestroyTensorDescriptor(r->y);
            DNN(cudnnCreateTensorDescriptor(&r->y), l, "tensor");
            DNN(cudnnSetTensor4dDescriptor(r->y, CUDNN_TENSOR_NCHW, c->dt, rows, l->out, 1, 1), l, "tensor");
        }
        return 0;
    case CAL_SOFTMAX: {
        /* rows x last axis (or channels of a [C,1,1] vector) */
        int64_t d = xs->nd == 3 && net->layers[l->in[0]].op != CAL_BMM ? xs->d[0] : xs->d[xs->nd - 1];
        int rows = (int)(c->batch * cal_shape_count(xs) / d);
        cudnnDestroyTensorDescriptor(r->x);
        DNN(cudnnCreateTensorDescriptor(&r->x), l, "tensor");
        DNN(cudnnSetTensor4dDescriptor(r->x, CUDNN_TENSOR_NCHW, c->dt, rows, (int)d, 1, 1), l, "tensor");
        return 0;
    }
    default:
        return 0;
    }
}

static int find_algo(struct cu *c, int i, size_t *ws_need)
{
    const struct cal_layer *l = &c->net->layers[i];
    struct lrt *r = &c->rt[i];
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    DNN(cudnnFindConvolutionForwardAlgorithm(c->dnn, r->x, r->w, r->conv, r->y,
                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf), l,
        "cudnnFindConvolutionForwardAlgorithm");
    for (int k = 0; k < got; k++)
        if (perf[k].status == CUDNN_STATUS_SUCCESS) {
            r->algo = perf[k].algo;
            if (perf[k].memory > *ws_need)
                *ws_need = perf[k].memory;
            return 0;
        }
    return sim_err_set(SIM_EUNAVAIL, "cudnn backend: layer %s: no convolution algorithm", l->name);
}

static int cu_prepare(void *st, const struct cal_net *net, int batch, struct cal_mem_info *out)
{
    struct cu *c = st;
    int n = net->n, rc = 0;
    cu_unprepare(c);
    c->net = net, c->batch = batch;
    memset(out, 0, sizeof *out);
    size_t free0 = 0, free1 = 0, total = 0;
    CU(cudaMemGetInfo(&free0, &total), NOL, "cudaMemGetInfo");
    c->rt = calloc((size_t)n, sizeof *c->rt);
    c->t = calloc((size_t)n + 1, sizeof *c->t);
    int *last = malloc((size_t)(n + 1) * sizeof *last), *first = malloc((size_t)(n + 1) * sizeof *first);
    size_t *size = malloc((size_t)(n + 1) * sizeof *size), *off = malloc((size_t)(n + 1) * sizeof *off);
    float *stage = NULL;
    if (!c->rt || !c->t || !last || !first || !size || !off) {
        rc = SIM_ENOMEM;
        goto out;
    }
    /* weights: one float staging block (bn/layernorm parameters stay float) */
    size_t wbytes = 0;
    for (int i = 0; i < n; i++) {
        const struct cal_layer *l = &net->layers[i];
        struct lrt *r = &c->rt[i];
        r->off_w = r->off_b = r->off_mean = r->off_var = (size_t)-1;
        if (l->w)
            r->off_w = wput(&wbytes, l->nw);
        if (l->b)
            r->off_b = wput(&wbytes, l->nb);
        if (l->mean)
            r->off_mean = wput(&wbytes, l->nb), r->off_var = wput(&wbytes, l->nb);
    }
    c->wf_bytes = wbytes;
    if (!(stage = malloc(wbytes ? wbytes : 1))) {
        rc = SIM_ENOMEM;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const struct cal_layer *l = &net->layers[i];
        const struct lrt *r = &c->rt[i];
        if (l->w)
            memcpy((char *)stage + r->off_w, l->w, (size_t)l->nw * sizeof(float));
        if (l->b)
            memcpy((char *)stage + r->off_b, l->b, (size_t)l->nb * sizeof(float));
        if (l->mean) {
            memcpy((char *)stage + r->off_mean, l->mean, (size_t)l->nb * sizeof(float));
            memcpy((char *)stage + r->off_var, l->var, (size_t)l->nb * sizeof(float));
        }
    }
    if (cudaMalloc((void **)&c->wf, wbytes ? wbytes : 1) != cudaSuccess ||
        (c->half && cudaMalloc((void **)&c->wh, wbytes / 2 + 256) != cudaSuccess)) {
        rc = sim_err_set(SIM_ENOMEM, "cudnn backend: no device memory for %zu bytes of weights", wbytes);
        goto out;
    }
    /* the model load */
    cudaEventRecord(c->e0, c->s);
    cudaMemcpyAsync(c->wf, stage, wbytes, cudaMemcpyHostToDevice, c->s);
    if (c->half) /* half copies of every array at half the float offsets */
        cal_cu_convert(c->wf, c->wh, (long)(wbytes / sizeof(float)), 1, c->s);
    cudaEventRecord(c->e1, c->s);
    cudaEventSynchronize(c->e1);
    float lms = 0;
    cudaEventElapsedTime(&lms, c->e0, c->e1);
    out->load_ms = lms;
    c->wh_bytes = c->half ? wbytes / 2 : 0;
    /* descriptors and the activation arena */
    for (int i = 0; i < n && !rc; i++)
        rc = build(c, i);
    if (rc)
        goto out;
    cal_net_last_use(net, last);
    for (int t = 0; t <= n; t++) {
        const struct cal_shape *s = cal_net_tensor_shape(net, t - 1);
        size[t] = (size_t)(batch * cal_shape_count(s)) * (t == 0 && net->tokens ? 4 : c->esz);
        first[t] = t == 0 ? 0 : t - 1;
        last[t] = t == 0 || c->o.keep_all ? n : last[t];
    }
    if ((rc = cal_arena_plan(n + 1, size, first, last, 256, off, &c->arena_bytes)))
        goto out;
    if (cudaMalloc((void **)&c->arena, c->arena_bytes) != cudaSuccess) {
        rc = sim_err_set(SIM_ENOMEM, "cudnn backend: no device memory for a %zu-byte arena", c->arena_bytes);
        goto out;
    }
    for (int t = 0; t <= n; t++)
        c->t[t] = c->arena + off[t];
    c->ids = net->tokens ? (int32_t *)c->t[0] : NULL;
    if (c->ids)
        c->t[0] = NULL; /* the ids live in the arena slot of the input; ownership: the arena */
    for (int i = 0; i < n && !rc; i++)
        if (net->layers[i].op == CAL_CONV)
            rc = find_algo(c, i, &c->ws_bytes);
    if (rc)
        goto out;
    if (c->ws_bytes && cudaMalloc((void **)&c->ws, c->ws_bytes) != cudaSuccess) {
        rc = sim_err_set(SIM_ENOMEM, "cudnn backend: no device memory for a %zu-byte workspace", c->ws_bytes);
        goto out;
    }
    CU(cudaMemGetInfo(&free1, &total), NOL, "cudaMemGetInfo");
    out->weights_bytes = c->half ? c->wh_bytes : c->wf_bytes;
    out->arena_bytes = c->arena_bytes;
    out->workspace_bytes = c->ws_bytes;
    out->device_used_bytes = free0 > free1 ? free0 - free1 : 0;
out:
    free(last), free(first), free(size), free(off), free(stage);
    if (rc) {
        c->ids = NULL;
        cu_unprepare(c);
    }
    return rc;
}

/* Device pointer of a layer's weight array at float-block offset `off` in the compute type. */
static const void *wptr(const struct cu *c, size_t off)
{
    return c->half ? (const void *)(c->wh + off / 2) : (const void *)(c->wf + off);
}

static int gemm(struct cu *c, const struct cal_layer *l, cublasOperation_t ta, cublasOperation_t tb,
                int m, int nn, int k, float alpha, const void *a, int lda, long long sa,
                const void *b, int ldb, long long sb, void *y, int ldc, long long sc, int count)
{
    float beta = 0;
    cudaDataType_t t = c->half ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = c->o.precision == CAL_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F;
    BLAS(cublasGemmStridedBatchedEx(c->blas, ta, tb, m, nn, k, &alpha, a, t, lda, sa, b, t, ldb,
                                    sb, &beta, y, t, ldc, sc, count, ct, CUBLAS_GEMM_DEFAULT),
         l, "GEMM");
    return 0;
}

static int run_layer(struct cu *c, int i)
{
    const struct cal_net *net = c->net;
    const struct cal_layer *l = &net->layers[i];
    struct lrt *r = &c->rt[i];
    const struct cal_shape *xs = cal_net_tensor_shape(net, l->in[0]);
    void *x = c->t[l->in[0] + 1], *y = c->t[i + 1];
    float one = 1, zero = 0;
    long n = (long)(c->batch * cal_shape_count(&l->shape));
    switch (l->op) {
    case CAL_CONV:
        DNN(cudnnConvolutionForward(c->dnn, &one, r->x, x, r->w, wptr(c, r->off_w), r->conv, r->algo,
                                    c->ws, c->ws_bytes, &zero, r->y, y), l, "convolution");
        if (l->b)
            DNN(cudnnAddTensor(c->dnn, &one, r->b, wptr(c, r->off_b), &one, r->y, y), l, "bias");
        return 0;
    case CAL_BN:
        DNN(cudnnBatchNormalizationForwardInference(c->dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                    r->x, x, r->y, y, r->b, c->wf + r->off_w,
                                                    c->wf + r->off_b, c->wf + r->off_mean,
                                                    c->wf + r->off_var, l->eps), l, "batch norm");
        return 0;
    case CAL_RELU: case CAL_RELU6: case CAL_SIGMOID: case CAL_TANH:
        DNN(cudnnActivationForward(c->dnn, r->act, &one, r->x, x, &zero, r->y, y), l, "activation");
        return 0;
    case CAL_GELU:
        CU(cal_cu_gelu(x, y, n, c->half, c->s), l, "gelu");
        return 0;
    case CAL_MAXPOOL: case CAL_AVGPOOL: case CAL_GAP:
        DNN(cudnnPoolingForward(c->dnn, r->pool, &one, r->x, x, &zero, r->y, y), l, "pooling");
        return 0;
    case CAL_ADD:
        DNN(cudnnOpTensor(c->dnn, r->op, &one, r->x, x, &one, r->x, c->t[l->in[1] + 1], &zero, r->y, y),
            l, "add");
        return 0;
    case CAL_CONCAT: {
        size_t hw = (size_t)(xs->d[1] * xs->d[2]) * c->esz, co = 0, ctot = (size_t)l->shape.d[0];
        for (int j = 0; j < l->nin; j++) {
            size_t cj = (size_t)cal_net_tensor_shape(net, l->in[j])->d[0];
            CU(cudaMemcpy2DAsync((char *)y + co * hw, ctot * hw, c->t[l->in[j] + 1], cj * hw, cj * hw,
                                 (size_t)c->batch, cudaMemcpyDeviceToDevice, c->s), l, "concat copy");
            co += cj;
        }
        return 0;
    }
    case CAL_FC: case CAL_LINEAR: {
        int k = l->op == CAL_FC ? (int)cal_shape_count(xs) : (int)xs->d[1];
        int rows = l->op == CAL_FC ? c->batch : c->batch * (int)xs->d[0];
        int rc = gemm(c, l, CUBLAS_OP_T, CUBLAS_OP_N, l->out, rows, k, 1.0f, wptr(c, r->off_w), k, 0,
                      x, k, 0, y, l->out, 0, 1);
        if (!rc && l->b)
            DNN(cudnnAddTensor(c->dnn, &one, r->b, wptr(c, r->off_b), &one, r->y, y), l, "bias");
        return rc;
    }
    case CAL_BMM: {
        const struct cal_shape *bs = cal_net_tensor_shape(net, l->in[1]);
        int S = (int)bs->d[0], D = (int)bs->d[1], H = l->heads, dh = D / H;
        size_t s_ = (size_t)S, d_ = (size_t)D, h_ = (size_t)H;
        const char *a = x, *b = c->t[l->in[1] + 1];
        char *o = y;
        for (size_t q = 0; q < (size_t)c->batch; q++) {
            int rc;
            if (l->transpose_b) /* scores^T (col-major) = K_h Q_h^T per head */
                rc = gemm(c, l, CUBLAS_OP_T, CUBLAS_OP_N, S, S, dh, (float)l->scale,
                          b + q * s_ * d_ * c->esz, D, dh, a + q * s_ * d_ * c->esz, D, dh,
                          o + q * h_ * s_ * s_ * c->esz, S, (long long)S * S, H);
            else /* ctx_h^T = V_h^T P_h^T */
                rc = gemm(c, l, CUBLAS_OP_N, CUBLAS_OP_N, dh, S, S, (float)l->scale,
                          b + q * s_ * d_ * c->esz, D, dh, a + q * h_ * s_ * s_ * c->esz, S,
                          (long long)S * S, o + q * s_ * d_ * c->esz, D, dh, H);
            if (rc)
                return rc;
        }
        return 0;
    }
    case CAL_SOFTMAX:
        DNN(cudnnSoftmaxForward(c->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                r->x, x, &zero, r->x, y), l, "softmax");
        return 0;
    case CAL_LAYERNORM: {
        int d = (int)xs->d[xs->nd - 1];
        CU(cal_cu_layernorm(x, y, (const float *)(c->wf + r->off_w), (const float *)(c->wf + r->off_b),
                            n / d, d, (float)l->eps, c->half, c->s), l, "layer norm");
        return 0;
    }
    case CAL_EMBED: {
        int S = (int)net->input.d[0], D = l->dim;
        const char *w = wptr(c, r->off_w);
        const char *pos = w + (size_t)l->vocab * (size_t)D * c->esz;
        const char *typ = pos + (size_t)l->positions * (size_t)D * c->esz;
        CU(cal_cu_embed(c->ids, w, pos, l->types ? typ : NULL, y, (long)c->batch * S, S, D, c->half,
                        c->s), l, "embedding");
        return 0;
    }
    case CAL_TOKEN: {
        size_t D = (size_t)xs->d[1], S = (size_t)xs->d[0];
        CU(cudaMemcpy2DAsync(y, D * c->esz, (char *)x + (size_t)l->index * D * c->esz, S * D * c->esz,
                             D * c->esz, (size_t)c->batch, cudaMemcpyDeviceToDevice, c->s), l, "token copy");
        return 0;
    }
    default:
        return sim_err_set(SIM_EINTERNAL, "cudnn backend: op %s has no mapping", cal_op_name(l->op));
    }
}

static int cu_set_input(void *st, const void *input)
{
    struct cu *c = st;
    const struct cal_net *net = c->net;
    size_t n = (size_t)(c->batch * cal_shape_count(&net->input));
    if (net->tokens) {
        CU(cudaMemcpy(c->ids, input, n * sizeof(int32_t), cudaMemcpyHostToDevice), NOL, "input");
        return 0;
    }
    if (!c->half) {
        CU(cudaMemcpy(c->t[0], input, n * sizeof(float), cudaMemcpyHostToDevice), NOL, "input");
        return 0;
    }
    void *tmp = NULL;
    CU(cudaMalloc(&tmp, n * sizeof(float)), NOL, "input staging");
    cudaMemcpy(tmp, input, n * sizeof(float), cudaMemcpyHostToDevice);
    cal_cu_convert(tmp, c->t[0], (long)n, 1, c->s);
    cudaStreamSynchronize(c->s);
    cudaFree(tmp);
    return 0;
}

static int cu_run(void *st, double *ms)
{
    struct cu *c = st;
    int rc = 0;
    /* the calling thread may not be the one that created this instance (concurrency runs k
     * instances from k threads): make this instance's device current for it */
    CU(cudaSetDevice(c->o.device), NOL, "cudaSetDevice");
    CU(cudaEventRecord(c->e0, c->s), NOL, "event");
    for (int i = 0; i < c->net->n && !rc; i++)
        rc = run_layer(c, i);
    CU(cudaEventRecord(c->e1, c->s), NOL, "event");
    CU(cudaEventSynchronize(c->e1), NOL, "forward pass");
    float t = 0;
    cudaEventElapsedTime(&t, c->e0, c->e1);
    *ms = t;
    return rc;
}

static int cu_read(void *st, int layer, float *out)
{
    struct cu *c = st;
    if (!c->o.keep_all && layer != c->net->n - 1)
        return sim_err_set(SIM_EINTERNAL, "cudnn backend: reading a layer other than the last needs keep_all");
    size_t n = (size_t)(c->batch * cal_shape_count(&c->net->layers[layer].shape));
    if (!c->half) {
        CU(cudaMemcpy(out, c->t[layer + 1], n * sizeof(float), cudaMemcpyDeviceToHost), NOL, "read");
        return 0;
    }
    void *tmp = NULL;
    CU(cudaMalloc(&tmp, n * sizeof(float)), NOL, "read staging");
    cal_cu_convert(c->t[layer + 1], tmp, (long)n, 0, c->s);
    cudaStreamSynchronize(c->s);
    cudaError_t e = cudaMemcpy(out, tmp, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(tmp);
    CU(e, NOL, "read");
    return 0;
}

static void cu_destroy(void *st)
{
    struct cu *c = st;
    if (!c)
        return;
    cu_unprepare(c);
    if (c->blas)
        cublasDestroy(c->blas);
    if (c->dnn)
        cudnnDestroy(c->dnn);
    if (c->e0)
        cudaEventDestroy(c->e0);
    if (c->e1)
        cudaEventDestroy(c->e1);
    if (c->s)
        cudaStreamDestroy(c->s);
    free(c);
}

const struct cal_backend_ops cal_backend_cudnn = {
    .name = "cudnn",
    .description = "cuDNN + cuBLAS on an NVIDIA GPU (fp32, tf32, fp16; CUDA-event timing)",
    .create = cu_create,
    .info = cu_info,
    .prepare = cu_prepare,
    .set_input = cu_set_input,
    .run = cu_run,
    .read = cu_read,
    .unprepare = cu_unprepare,
    .destroy = cu_destroy,
};
