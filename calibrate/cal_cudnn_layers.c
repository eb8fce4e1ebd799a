/* cal_cudnn_layers — the cuDNN backend's layers (cal_cudnn.c has the whole pass): tensor
 * and filter descriptors in the backend's layout, the convolution algorithm search, the
 * cuBLASLt matmuls of fc/linear groups and the batched GEMMs of attention, and one layer or
 * fused group run on the stream. */
#include "cal_cudnn_int.h"

/* Is tensor shape s an image activation held channels-last? */
bool cud_is_nhwc(const struct cu *c, const struct cal_shape *s)
{
    return c->nhwc && s->nd == 3;
}

/* Channels of a tensor for the epilogue: an image's (NCHW: hw per channel; NHWC: innermost),
 * a token matrix's features or a vector's entries (innermost). */
static void chan_layout(const struct cu *c, const struct cal_shape *s, int *ch, long *hw, int *nhwc)
{
    if (s->nd == 3)
        *ch = (int)s->d[0], *hw = (long)(s->d[1] * s->d[2]), *nhwc = cud_is_nhwc(c, s);
    else
        *ch = (int)s->d[s->nd - 1], *hw = 1, *nhwc = 1;
}

/* 4-D descriptor of tensor shape s (tokens {N*S, D, 1, 1}; vectors {N, K, 1, 1}; scores
 * {N, H, S, S}); images channels-last where the backend runs NHWC. */
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
    DNN(cudnnSetTensor4dDescriptor(*d, cud_is_nhwc(c, s) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, c->dt,
                                   dims[0], dims[1], dims[2], dims[3]), l, "tensor descriptor");
    return 0;
}

/* Offset of the next weight array of `count` floats in the staging block (256-byte aligned;
 * the fp16 copy of the block uses half of each offset). */
size_t cud_wput(size_t *bytes, int64_t count)
{
    size_t off = *bytes;
    *bytes += ((size_t)count * sizeof(float) + 255) / 256 * 256;
    return off;
}

/* Device pointer of a layer's weight array at float-block offset `off` in the compute type. */
static const void *wptr(const struct cu *c, size_t off)
{
    return c->half ? (const void *)(c->wh + off / 2) : (const void *)(c->wf + off);
}

static const float *fptr(const struct cu *c, size_t off)
{
    return off == (size_t)-1 ? NULL : (const float *)(c->wf + off);
}

/* Does an fc layer read an image activation whose flattening order NHWC changes? */
bool cud_fc_reorders(const struct cu *c, const struct cal_layer *l)
{
    const struct cal_shape *xs = cal_net_tensor_shape(c->net, l->in[0]);
    return l->op == CAL_FC && cud_is_nhwc(c, xs) && xs->d[1] * xs->d[2] > 1;
}

int cud_build(struct cu *c, int i)
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
        cudnnTensorFormat_t f = cud_is_nhwc(c, xs) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        DNN(cudnnCreateFilterDescriptor(&r->w), l, "filter");
        DNN(cudnnSetFilter4dDescriptor(r->w, c->dt, f, l->out, cg, l->kh, l->kw), l, "filter");
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
            DNN(cudnnSetTensor4dDescriptor(r->b, f, c->dt, 1, l->out, 1, 1), l, "bias");
        }
        return 0; /* the algorithm is found once the arena exists (it runs candidates) */
    }
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

/* cuDNN's candidates for a convolution (its own timing of each, eager and so often bound by
 * the launch at small sizes, only ranks them: tune_algos times the first MAX_CAND as the
 * graph runs them) and the workspace the candidates and the fused call need. */
int cud_find_algo(struct cu *c, int i, size_t *ws_need)
{
    const struct cal_layer *l = &c->net->layers[i];
    struct lrt *r = &c->rt[i];
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    DNN(cudnnFindConvolutionForwardAlgorithm(c->dnn, r->x, r->w, r->conv, r->y,
                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf), l,
        "cudnnFindConvolutionForwardAlgorithm");
    r->ncand = 0;
    for (int k = 0; k < got && r->ncand < MAX_CAND; k++)
        if (perf[k].status == CUDNN_STATUS_SUCCESS && perf[k].memory <= ((size_t)1 << 30)) {
            r->cand[r->ncand++] = perf[k].algo;
            if (perf[k].memory > *ws_need)
                *ws_need = perf[k].memory;
        }
    if (!r->ncand)
        return sim_err_set(SIM_EUNAVAIL, "cudnn backend: layer %s: no convolution algorithm", l->name);
    r->algo = r->cand[0];
    /* the one-call group: cuDNN fuses bias + residual + ReLU with any algorithm, bias alone
     * (identity) only with IMPLICIT_PRECOMP_GEMM */
    int gi = c->plan.group[c->plan.into[i]];
    const struct cal_group *g = gi >= 0 ? &c->plan.groups[gi] : NULL;
    r->fused_ok = false;
    if (g && g->head == i && l->b && (g->kind == CAL_ACT_RELU || g->kind == CAL_ACT_NONE)) {
        bool relu = g->kind == CAL_ACT_RELU;
        r->fused_ok = true;
        for (int k = 0; k < (relu ? r->ncand : 1) && r->fused_ok; k++) {
            size_t need = 0;
            cudnnConvolutionFwdAlgo_t a = relu ? r->cand[k] : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
            if (cudnnGetConvolutionForwardWorkspaceSize(c->dnn, r->x, r->w, r->conv, r->y, a,
                                                        &need) != CUDNN_STATUS_SUCCESS)
                r->fused_ok = false;
            else if (need > *ws_need)
                *ws_need = need;
        }
        r->falgo = relu ? r->algo : CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
        if (r->fused_ok) {
            DNN(cudnnCreateActivationDescriptor(&r->fact), l, "activation");
            DNN(cudnnSetActivationDescriptor(r->fact, relu ? CUDNN_ACTIVATION_RELU
                                             : CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0),
                l, "activation");
        }
    }
    return 0;
}

/* The cuBLASLt matmul of an fc/linear group: D{out x rows} = W^T X + bias (+ beta Z). */
int cud_lt_setup(struct cu *c, int i)
{
    const struct cal_layer *l = &c->net->layers[i];
    struct lrt *r = &c->rt[i];
    const struct cal_shape *xs = cal_net_tensor_shape(c->net, l->in[0]);
    int k = l->op == CAL_FC ? (int)cal_shape_count(xs) : (int)xs->d[1];
    int rows = l->op == CAL_FC ? c->batch : c->batch * (int)xs->d[0];
    cudaDataType_t t = c->half ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = c->o.precision == CAL_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                             : c->o.precision == CAL_FP32 ? CUBLAS_COMPUTE_32F_PEDANTIC
                                                          : CUBLAS_COMPUTE_32F;
    cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
    cublasLtEpilogue_t epi = l->b ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    const void *bias = l->b ? wptr(c, r->off_b) : NULL;
    BLAS(cublasLtMatmulDescCreate(&r->md, ct, CUDA_R_32F), l, "cuBLASLt matmul");
    BLAS(cublasLtMatmulDescSetAttribute(r->md, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA), l, "transa");
    BLAS(cublasLtMatmulDescSetAttribute(r->md, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB), l, "transb");
    BLAS(cublasLtMatmulDescSetAttribute(r->md, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), l, "epilogue");
    if (bias)
        BLAS(cublasLtMatmulDescSetAttribute(r->md, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                            sizeof bias), l, "bias");
    BLAS(cublasLtMatrixLayoutCreate(&r->la, t, (uint64_t)k, (uint64_t)l->out, k), l, "layout");
    BLAS(cublasLtMatrixLayoutCreate(&r->lb, t, (uint64_t)k, (uint64_t)rows, k), l, "layout");
    BLAS(cublasLtMatrixLayoutCreate(&r->lc, t, (uint64_t)l->out, (uint64_t)rows, l->out), l, "layout");
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    uint64_t wsb = BLAS_WS_BYTES;
    BLAS(cublasLtMatmulPreferenceCreate(&pref), l, "preference");
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    cublasStatus_t e = cublasLtMatmulAlgoGetHeuristic(c->lt, r->md, r->la, r->lb, r->lc, r->lc,
                                                      pref, 1, &res, &got);
    cublasLtMatmulPreferenceDestroy(pref);
    if (e == CUBLAS_STATUS_SUCCESS && got > 0)
        r->lalgo = res.algo, r->fused_ok = true;
    return 0;
}

/* BERT's attention: one batched GEMM over every sample and head (pointer arrays fixed in the
 * arena). */
int cud_bmm_setup(struct cu *c, int i)
{
    const struct cal_net *net = c->net;
    const struct cal_layer *l = &net->layers[i];
    struct lrt *r = &c->rt[i];
    const struct cal_shape *bs = cal_net_tensor_shape(net, l->in[1]);
    size_t S = (size_t)bs->d[0], D = (size_t)bs->d[1], H = (size_t)l->heads, dh = D / H;
    size_t cnt = (size_t)c->batch * H, e = c->esz;
    const char *a = c->t[l->in[0] + 1], *b = c->t[l->in[1] + 1];
    char *o = c->t[i + 1];
    const void **p = malloc(3 * cnt * sizeof *p);
    if (!p)
        return SIM_ENOMEM;
    for (size_t q = 0; q < (size_t)c->batch; q++)
        for (size_t h = 0; h < H; h++) {
            size_t j = q * H + h;
            if (l->transpose_b) { /* scores^T (col-major) = K_h Q_h^T */
                p[j] = b + (q * S * D + h * dh) * e;
                p[cnt + j] = a + (q * S * D + h * dh) * e;
                p[2 * cnt + j] = o + (q * H * S * S + h * S * S) * e;
            } else {              /* ctx_h^T = V_h^T P_h^T */
                p[j] = b + (q * S * D + h * dh) * e;
                p[cnt + j] = a + (q * H * S * S + h * S * S) * e;
                p[2 * cnt + j] = o + (q * S * D + h * dh) * e;
            }
        }
    cudaError_t ce = cudaMalloc((void **)&r->ptrs, 3 * cnt * sizeof *p);
    if (ce == cudaSuccess)
        ce = cudaMemcpy(r->ptrs, p, 3 * cnt * sizeof *p, cudaMemcpyHostToDevice);
    free(p);
    CU(ce, l, "attention pointer arrays");
    return 0;
}

static int gemm(struct cu *c, const struct cal_layer *l, cublasOperation_t ta, cublasOperation_t tb,
                int m, int nn, int k, float alpha, const void *a, int lda, const void *b, int ldb,
                void *y, int ldc)
{
    float beta = 0;
    cudaDataType_t t = c->half ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = c->o.precision == CAL_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F;
    BLAS(cublasGemmEx(c->blas, ta, tb, m, nn, k, &alpha, a, t, lda, b, t, ldb, &beta, y, t, ldc,
                      ct, CUBLAS_GEMM_DEFAULT), l, "GEMM");
    return 0;
}

static int epilogue(struct cu *c, const struct cal_layer *l, const struct cal_shape *s,
                    const void *x, void *y, const float *scale, const float *bias, const void *z,
                    int act)
{
    int ch, nhwc;
    long hw, n = (long)(c->batch * cal_shape_count(s));
    chan_layout(c, s, &ch, &hw, &nhwc);
    CU(cal_cu_epilogue(x, y, n, ch, hw, nhwc, scale, bias, z, act, c->half, c->s), l, "epilogue");
    return 0;
}

/* An fc/linear's GEMM into y: {rows x out} = X{rows x k} W^T. */
static int fc_gemm(struct cu *c, const struct cal_layer *l, const void *x, void *y)
{
    const struct cal_shape *xs = cal_net_tensor_shape(c->net, l->in[0]);
    int k = l->op == CAL_FC ? (int)cal_shape_count(xs) : (int)xs->d[1];
    int rows = l->op == CAL_FC ? c->batch : c->batch * (int)xs->d[0];
    return gemm(c, l, CUBLAS_OP_T, CUBLAS_OP_N, l->out, rows, k, 1.0f, wptr(c, c->rt[l - c->net->layers].off_w),
                k, x, k, y, l->out);
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
        return epilogue(c, l, &l->shape, x, y, fptr(c, r->off_scale), fptr(c, r->off_shift), NULL,
                        CAL_ACT_NONE);
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
        size_t co = 0, ctot = (size_t)l->shape.d[0];
        for (int j = 0; j < l->nin; j++) {
            size_t cj = (size_t)cal_net_tensor_shape(net, l->in[j])->d[0];
            if (c->nhwc)
                CU(cal_cu_concat_nhwc(c->t[l->in[j] + 1], y, (long)c->batch * xs->d[1] * xs->d[2],
                                      (int)cj, (int)ctot, (int)co, c->esz, c->s), l, "concat");
            else {
                size_t hw = (size_t)(xs->d[1] * xs->d[2]) * c->esz;
                CU(cudaMemcpy2DAsync((char *)y + co * hw, ctot * hw, c->t[l->in[j] + 1], cj * hw,
                                     cj * hw, (size_t)c->batch, cudaMemcpyDeviceToDevice, c->s),
                   l, "concat copy");
            }
            co += cj;
        }
        return 0;
    }
    case CAL_FC: case CAL_LINEAR: {
        int rc = fc_gemm(c, l, x, y);
        if (!rc && l->b)
            rc = epilogue(c, l, &l->shape, y, y, NULL, fptr(c, r->off_b), NULL, CAL_ACT_NONE);
        return rc;
    }
    case CAL_BMM: {
        const struct cal_shape *bs = cal_net_tensor_shape(net, l->in[1]);
        int S = (int)bs->d[0], D = (int)bs->d[1], H = l->heads, dh = D / H, cnt = c->batch * H;
        float alpha = (float)l->scale, beta = 0;
        cudaDataType_t t = c->half ? CUDA_R_16F : CUDA_R_32F;
        cublasComputeType_t ct = c->o.precision == CAL_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                            : CUBLAS_COMPUTE_32F;
        const void *const *A = (const void *const *)r->ptrs, *const *B = A + cnt;
        void *const *C = (void *const *)(r->ptrs + 2 * cnt);
        if (l->transpose_b)
            BLAS(cublasGemmBatchedEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, S, S, dh, &alpha, A, t, D,
                                     B, t, D, &beta, C, t, S, cnt, ct, CUBLAS_GEMM_DEFAULT), l, "GEMM");
        else
            BLAS(cublasGemmBatchedEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, dh, S, S, &alpha, A, t, D,
                                     B, t, S, &beta, C, t, D, cnt, ct, CUBLAS_GEMM_DEFAULT), l, "GEMM");
        return 0;
    }
    case CAL_SOFTMAX:
        DNN(cudnnSoftmaxForward(c->dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                r->x, x, &zero, r->x, y), l, "softmax");
        return 0;
    case CAL_LAYERNORM: {
        int d = (int)xs->d[xs->nd - 1];
        CU(cal_cu_layernorm(x, y, fptr(c, r->off_w), fptr(c, r->off_b), n / d, d, (float)l->eps,
                            c->half, c->s), l, "layer norm");
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

/* A fused group, run at its last layer into that layer's buffer. */
int cud_run_group(struct cu *c, const struct cal_group *g)
{
    const struct cal_net *net = c->net;
    const struct cal_layer *h = &net->layers[g->head];
    struct lrt *r = &c->rt[g->head];
    const void *x = c->t[h->in[0] + 1], *z = g->add >= 0 ? c->t[g->z + 1] : NULL;
    void *y = c->t[g->last + 1];
    float one = 1, zero = 0, beta = z ? 1.0f : 0.0f;
    int rc = 0;
    switch (h->op) {
    case CAL_CONV:
        if (r->variant == V_FUSED) {
            DNN(cudnnConvolutionBiasActivationForward(c->dnn, &one, r->x, x, r->w, wptr(c, r->off_w),
                                                      r->conv, r->falgo, c->ws, c->ws_bytes, &beta,
                                                      r->y, z ? z : y, r->b, wptr(c, r->off_b),
                                                      r->fact, r->y, y), h, "fused convolution");
            return 0;
        }
        DNN(cudnnConvolutionForward(c->dnn, &one, r->x, x, r->w, wptr(c, r->off_w), r->conv, r->algo,
                                    c->ws, c->ws_bytes, &zero, r->y, y), h, "convolution");
        return epilogue(c, h, &h->shape, y, y, NULL, fptr(c, r->off_b), z, g->kind);
    case CAL_FC: case CAL_LINEAR:
        if (r->variant == V_FUSED) {
            BLAS(cublasLtMatmul(c->lt, r->md, &one, wptr(c, r->off_w), r->la, x, r->lb, &beta,
                                z ? z : y, r->lc, y, r->lc, &r->lalgo, c->bws, BLAS_WS_BYTES, c->s),
                 h, "cuBLASLt matmul");
            if (g->kind != CAL_ACT_NONE)
                rc = epilogue(c, h, &h->shape, y, y, NULL, NULL, NULL, g->kind);
            return rc;
        }
        if ((rc = fc_gemm(c, h, x, y)))
            return rc;
        return epilogue(c, h, &h->shape, y, y, NULL, fptr(c, r->off_b), z, g->kind);
    case CAL_BN:
        return epilogue(c, h, &h->shape, x, y, fptr(c, r->off_scale), fptr(c, r->off_shift), NULL,
                        g->kind);
    case CAL_ADD:
        return epilogue(c, h, &h->shape, x, y, NULL, NULL, c->t[h->in[1] + 1], g->kind);
    default:
        return sim_err_set(SIM_EINTERNAL, "cudnn backend: %s cannot head a group", cal_op_name(h->op));
    }
}

int cud_run_step(struct cu *c, int i)
{
    int gi = c->plan.group[i];
    return gi >= 0 ? cud_run_group(c, &c->plan.groups[gi]) : run_layer(c, i);
}

int cud_run_all(struct cu *c)
{
    int rc = 0;
    for (int i = 0; i < c->net->n && !rc; i++)
        if (c->plan.into[i] == i)
            rc = cud_run_step(c, i);
    return rc;
}

/* A convolution alone (algorithm timing), into the buffer its step writes. */
int cud_run_conv(struct cu *c, int i)
{
    struct lrt *r = &c->rt[i];
    float one = 1, zero = 0;
    DNN(cudnnConvolutionForward(c->dnn, &one, r->x, c->t[c->net->layers[i].in[0] + 1], r->w,
                                wptr(c, r->off_w), r->conv, r->algo, c->ws, c->ws_bytes, &zero,
                                r->y, c->t[c->plan.into[i] + 1]), &c->net->layers[i], "convolution");
    return 0;
}
