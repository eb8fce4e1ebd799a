/* cal_cudnn_int — what the cuDNN backend's files share (cal_cudnn.c: the backend's hooks,
 * preparation, tactic timing and CUDA-graph capture; cal_cudnn_layers.c: a layer's
 * descriptors, algorithms and calls). Not for other files. */
#ifndef CAL_CUDNN_INT_H
#define CAL_CUDNN_INT_H

#include "cal_backend.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal_fuse.h"
#include "cal_kernels.h"
#include "sim_err.h"

enum { V_SPLIT, V_FUSED };          /* a group's implementations (see the header) */
#define BLAS_WS_BYTES (32u << 20)   /* cuBLAS/cuBLASLt workspace (Hopper's recommended 32 MiB) */
#define TUNE_REPS 10                /* repetitions of a group in a tactic-timing graph */
#define MAX_CAND 8                  /* convolution algorithms timed per layer (all of them) */

struct lrt {                       /* per-layer runtime state */
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo, falgo; /* the convolution's; the fused call's */
    cudnnConvolutionFwdAlgo_t cand[MAX_CAND]; /* cuDNN's fastest candidates, timed in graphs */
    int ncand;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act, fact;
    cudnnOpTensorDescriptor_t op;
    cublasLtMatmulDesc_t md;       /* fc/linear groups: the cuBLASLt matmul */
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t lalgo;
    void **ptrs;                   /* bmm: device arrays A | B | C of batch x heads pointers */
    bool fused_ok;                 /* the group's one-call implementation exists here */
    int variant;                   /* V_SPLIT or V_FUSED */
    double split_ms, fused_ms;     /* tactic timing (0: not timed) */
    size_t off_w, off_b, off_mean, off_var, off_scale, off_shift; /* (size_t)-1 = none */
};

struct cu {
    struct cal_opts o;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    const struct cal_net *net;
    struct cal_plan plan;
    int batch;
    bool half, nhwc;
    size_t esz;
    cudnnDataType_t dt;
    struct lrt *rt;
    void **t;                      /* per tensor t+1: device pointer (NULL: absorbed) */
    char *arena, *wf, *wh, *ws, *bws; /* activations, float and half weights, workspaces */
    size_t arena_bytes, wf_bytes, wh_bytes, ws_bytes;
    int32_t *ids;
    cudaGraphExec_t gexec;         /* the captured pass (graph mode) */
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
            return sim_err_set(e_ == CUBLAS_STATUS_NOT_SUPPORTED ? SIM_EUNAVAIL : SIM_EINTERNAL, \
                               "cudnn backend: layer %s: %s: cuBLAS status %d",                \
                               (l) ? (l)->name : "-", what, (int)e_);                        \
    } while (0)

/* "no layer", for the error macros */
static const struct cal_layer *const NOL = NULL;

/* cal_cudnn_layers.c */
bool cud_is_nhwc(const struct cu *c, const struct cal_shape *s);
size_t cud_wput(size_t *bytes, int64_t count);
bool cud_fc_reorders(const struct cu *c, const struct cal_layer *l);
int cud_build(struct cu *c, int i);
int cud_find_algo(struct cu *c, int i, size_t *ws_need);
int cud_lt_setup(struct cu *c, int i);
int cud_bmm_setup(struct cu *c, int i);
int cud_run_group(struct cu *c, const struct cal_group *g);
int cud_run_step(struct cu *c, int i);
int cud_run_all(struct cu *c);
int cud_run_conv(struct cu *c, int i);

#endif
