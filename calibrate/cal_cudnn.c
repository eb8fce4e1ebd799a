/* cal_cudnn — the cuDNN (NVIDIA GPU) calibration backend: the same cal_net graph as oneDNN,
 * run the way a GPU serving engine runs it (TensorRT, Triton with CUDA graphs, Clockwork's
 * precompiled models), not the way a framework issues it layer by layer:
 *
 *  - Fusion (cal_fuse.h's plan): batch norm folded into the convolution (cal_net_fold_bn, in
 *    float, before fp16); a convolution with its bias, residual add and activation is one
 *    group, run as cudnnConvolutionBiasActivationForward where cuDNN has it (ReLU or none)
 *    or as the convolution plus one epilogue kernel (cal_kernels.cu); an fc/linear layer with
 *    its bias and residual is one cuBLASLt matmul (bias epilogue, residual as beta*C) or a
 *    GEMM plus the epilogue; an unfolded batch norm (DenseNet's pre-activation) with its
 *    activation is one affine kernel. Where a group has two implementations, both are timed
 *    once at prepare (each as a small CUDA graph) and the faster is kept, as TensorRT picks
 *    tactics. BERT's attention matmuls are one batched GEMM over samples and heads.
 *  - Layout: channels-last (NHWC) for fp16 and tf32, so tensor cores run without transposes;
 *    weights are permuted on the host (cal_fuse.c), inputs and read-backs converted there.
 *  - Issue: algorithm search, workspaces (cuDNN's, and one fixed cuBLAS/cuBLASLt workspace),
 *    descriptors and an eager warm-up happen in prepare; then the whole pass is captured as
 *    one CUDA graph and a timed pass is event, graph launch, event. --exec eager issues the
 *    same calls from the host every pass instead.
 *
 * Precisions: fp32 (FMA math, no TF32; NCHW), tf32 (tensor-op math allowed), fp16 (half data,
 * float accumulation, tensor cores). Activations live in one device arena planned by liveness
 * under the plan (a group reads its inputs at its last layer). Model load: the host-to-device
 * copy of the weights (plus, for fp16, their on-device conversion). Memory: weights + arena +
 * workspaces, checked against cudaMemGetInfo. */
#include "cal_cudnn_int.h"

enum what { W_PASS, W_GROUP, W_CONV, W_STEP }; /* what a graph captures */

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
    BLAS(cublasLtCreate(&c->lt), NOL, "cublasLtCreate");
    /* a fixed workspace: nothing is allocated while a pass is captured into a graph */
    CU(cudaMalloc((void **)&c->bws, BLAS_WS_BYTES), NOL, "cuBLAS workspace");
    BLAS(cublasSetWorkspace(c->blas, c->bws, BLAS_WS_BYTES), NOL, "cublasSetWorkspace");
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
        if (r->fact) cudnnDestroyActivationDescriptor(r->fact);
        if (r->op) cudnnDestroyOpTensorDescriptor(r->op);
        if (r->md) cublasLtMatmulDescDestroy(r->md);
        if (r->la) cublasLtMatrixLayoutDestroy(r->la);
        if (r->lb) cublasLtMatrixLayoutDestroy(r->lb);
        if (r->lc) cublasLtMatrixLayoutDestroy(r->lc);
        cudaFree(r->ptrs);
    }
    free(c->rt);
    c->rt = NULL;
}

static void cu_unprepare(void *st)
{
    struct cu *c = st;
    if (!c->net)
        return;
    if (c->gexec)
        cudaGraphExecDestroy(c->gexec);
    c->gexec = NULL;
    free_rt(c);
    cal_plan_free(&c->plan);
    cudaFree(c->arena), cudaFree(c->wf), cudaFree(c->wh), cudaFree(c->ws);
    free(c->t);
    c->arena = c->wf = c->wh = c->ws = NULL;
    c->ids = NULL;
    c->t = NULL;
    c->net = NULL;
}

static int run_what(struct cu *c, enum what w, int i)
{
    switch (w) {
    case W_GROUP: return cud_run_group(c, &c->plan.groups[i]);
    case W_CONV: return cud_run_conv(c, i);
    case W_STEP: return cud_run_step(c, i);
    default: return cud_run_all(c);
    }
}

/* Captures `reps` runs of the whole pass, a group, a convolution or a step into a graph. */
static int capture(struct cu *c, enum what w, int i, int reps, cudaGraphExec_t *out)
{
    cudaGraph_t gr = NULL;
    int rc = 0;
    *out = NULL;
    CU(cudaStreamBeginCapture(c->s, cudaStreamCaptureModeThreadLocal), NOL, "graph capture");
    for (int k = 0; k < reps && !rc; k++)
        rc = run_what(c, w, i);
    cudaError_t e = cudaStreamEndCapture(c->s, &gr);
    if (!rc && e != cudaSuccess)
        rc = sim_err_set(SIM_EINTERNAL, "cudnn backend: capturing the pass as a CUDA graph: %s",
                         cudaGetErrorString(e));
    if (!rc && (e = cudaGraphInstantiate(out, gr, 0)) != cudaSuccess)
        rc = sim_err_set(SIM_EINTERNAL, "cudnn backend: instantiating the pass's CUDA graph: %s",
                         cudaGetErrorString(e));
    if (gr)
        cudaGraphDestroy(gr);
    if (rc) {
        cudaGetLastError();
        if (*out)
            cudaGraphExecDestroy(*out);
        *out = NULL;
    }
    return rc;
}

/* GPU time of a group, convolution or step as it is now: TUNE_REPS runs replayed as one graph. */
static int time_what(struct cu *c, enum what w, int i, double *ms)
{
    cudaGraphExec_t ge;
    int rc = capture(c, w, i, TUNE_REPS, &ge);
    if (rc)
        return rc;
    float t = 0;
    cudaError_t e = cudaGraphLaunch(ge, c->s);
    if (e == cudaSuccess) e = cudaEventRecord(c->e0, c->s);
    if (e == cudaSuccess) e = cudaGraphLaunch(ge, c->s);
    if (e == cudaSuccess) e = cudaEventRecord(c->e1, c->s);
    if (e == cudaSuccess) e = cudaEventSynchronize(c->e1);
    if (e == cudaSuccess) e = cudaEventElapsedTime(&t, c->e0, c->e1);
    cudaGraphExecDestroy(ge);
    CU(e, NOL, "timing a step");
    *ms = t / TUNE_REPS;
    return 0;
}

/* Each convolution keeps the candidate algorithm that is fastest as the graph runs it. */
static int tune_algos(struct cu *c)
{
    for (int i = 0; i < c->net->n; i++) {
        struct lrt *r = &c->rt[i];
        if (c->net->layers[i].op != CAL_CONV || r->ncand < 2)
            continue;
        double best = INFINITY, t = INFINITY;   /* set by time_what where it succeeds */
        cudnnConvolutionFwdAlgo_t pick = r->cand[0];
        for (int k = 0; k < r->ncand; k++) {
            r->algo = r->cand[k];
            int rc = cud_run_conv(c, i);
            if (!rc && !(rc = time_what(c, W_CONV, i, &t)) && t < best)
                best = t, pick = r->algo;
            if (rc) { /* a candidate that fails here is skipped */
                cudaGetLastError();
                sim_err_clear();
            }
        }
        r->algo = pick;
        if (r->fact && c->plan.groups[c->plan.group[c->plan.into[i]]].kind == CAL_ACT_RELU)
            r->falgo = pick;
    }
    return 0;
}

/* SERVESIM_CUDNN_STEPS set: each step's GPU time, the slowest first, on stderr (where a
 * pass's time goes; a diagnostic for docs/calibrate.md). */
static void print_steps(struct cu *c)
{
    int n = c->net->n, k = 0;
    double *t = calloc((size_t)n, sizeof *t), sum = 0;
    int *ix = calloc((size_t)n, sizeof *ix);
    for (int i = 0; t && ix && i < n; i++)
        if (c->plan.into[i] == i && time_what(c, W_STEP, i, &t[i]) == 0)
            ix[k++] = i, sum += t[i];
    for (int a = 0; ix && a < k; a++) /* by time, descending (selection: n is small) */
        for (int b = a + 1; b < k; b++)
            if (t[ix[b]] > t[ix[a]]) {
                int x = ix[a];
                ix[a] = ix[b], ix[b] = x;
            }
    fprintf(stderr, "%s, batch %d: %d steps, %.3f ms summed (each alone, as a graph); slowest:\n",
            c->net->name, c->batch, k, sum);
    for (int a = 0; ix && a < k && a < 15; a++) {
        const struct cal_layer *l = &c->net->layers[ix[a]];
        int gi = c->plan.group[ix[a]];
        const struct cal_layer *h = gi >= 0 ? &c->net->layers[c->plan.groups[gi].head] : l;
        fprintf(stderr, "  %8.1f us  %-22s %-8s%s\n", 1e3 * t[ix[a]], l->name, cal_op_name(h->op),
                gi >= 0 ? (c->rt[h - c->net->layers].variant == V_FUSED ? " (fused call)" : " (split)") : "");
    }
    free(t), free(ix);
}

/* Picks each group's implementation: the one-call form where it runs and is not slower. */
static int choose_variants(struct cu *c)
{
    for (int k = 0; k < c->plan.ngroups; k++) {
        const struct cal_group *g = &c->plan.groups[k];
        struct lrt *r = &c->rt[g->head];
        r->variant = V_SPLIT;
        if (!r->fused_ok)
            continue;
        int rc = time_what(c, W_GROUP, k, &r->split_ms);
        if (rc)
            return rc;
        r->variant = V_FUSED;
        /* a one-call form cuDNN or cuBLASLt refuses here is dropped, not an error */
        if ((rc = cud_run_group(c, g)) == 0 && (rc = time_what(c, W_GROUP, k, &r->fused_ms)) == 0 &&
            r->fused_ms <= r->split_ms)
            continue;
        if (rc && rc != SIM_EUNAVAIL && rc != SIM_EINTERNAL)
            return rc;
        cudaGetLastError();
        sim_err_clear();
        r->variant = V_SPLIT;
        r->fused_ok = rc == 0;
    }
    return 0;
}

/* The float staging block of every weight array: channels-last permutations applied, batch
 * norm's affine form precomputed (bn and layer-norm parameters stay float on the device). */
static int stage_weights(struct cu *c, float **out, size_t *bytes)
{
    const struct cal_net *net = c->net;
    size_t wbytes = 0;
    for (int i = 0; i < net->n; i++) {
        const struct cal_layer *l = &net->layers[i];
        struct lrt *r = &c->rt[i];
        r->off_w = r->off_b = r->off_mean = r->off_var = r->off_scale = r->off_shift = (size_t)-1;
        if (l->w)
            r->off_w = cud_wput(&wbytes, l->nw);
        if (l->b)
            r->off_b = cud_wput(&wbytes, l->nb);
        if (l->mean) {
            r->off_mean = cud_wput(&wbytes, l->nb), r->off_var = cud_wput(&wbytes, l->nb);
            r->off_scale = cud_wput(&wbytes, l->nb), r->off_shift = cud_wput(&wbytes, l->nb);
        }
    }
    float *stage = malloc(wbytes ? wbytes : 1);
    if (!stage)
        return SIM_ENOMEM;
    for (int i = 0; i < net->n; i++) {
        const struct cal_layer *l = &net->layers[i];
        const struct lrt *r = &c->rt[i];
        const struct cal_shape *xs = cal_net_tensor_shape(net, l->in[0]);
        float *w = (float *)((char *)stage + (r->off_w == (size_t)-1 ? 0 : r->off_w));
        if (l->w && l->op == CAL_CONV && cud_is_nhwc(c, xs))
            cal_nhwc_conv_weights(l->w, w, l->out, (int)xs->d[0] / l->groups, l->kh, l->kw);
        else if (l->w && cud_fc_reorders(c, l))
            cal_nhwc_fc_weights(l->w, w, l->out, (int)xs->d[0], (int)(xs->d[1] * xs->d[2]));
        else if (l->w)
            memcpy(w, l->w, (size_t)l->nw * sizeof(float));
        if (l->b)
            memcpy((char *)stage + r->off_b, l->b, (size_t)l->nb * sizeof(float));
        if (l->mean) {
            memcpy((char *)stage + r->off_mean, l->mean, (size_t)l->nb * sizeof(float));
            memcpy((char *)stage + r->off_var, l->var, (size_t)l->nb * sizeof(float));
            cal_bn_affine(l, (float *)((char *)stage + r->off_scale),
                          (float *)((char *)stage + r->off_shift));
        }
    }
    *out = stage, *bytes = wbytes;
    return 0;
}

static int cu_prepare(void *st, const struct cal_net *net, int batch, struct cal_mem_info *out)
{
    struct cu *c = st;
    int n = net->n, rc = 0;
    cu_unprepare(c);
    c->net = net, c->batch = batch;
    c->nhwc = c->o.precision != CAL_FP32 && !net->tokens;
    memset(out, 0, sizeof *out);
    size_t free0 = 0, free1 = 0, total = 0;
    CU(cudaSetDevice(c->o.device), NOL, "cudaSetDevice");
    CU(cudaMemGetInfo(&free0, &total), NOL, "cudaMemGetInfo");
    if ((rc = cal_plan_build(net, !c->o.unfused, &c->plan))) {
        c->net = NULL;
        return rc;
    }
    c->rt = calloc((size_t)n, sizeof *c->rt);
    c->t = calloc((size_t)n + 1, sizeof *c->t);
    int *last = malloc((size_t)(n + 1) * sizeof *last), *first = malloc((size_t)(n + 1) * sizeof *first);
    size_t *size = malloc((size_t)(n + 1) * sizeof *size), *off = malloc((size_t)(n + 1) * sizeof *off);
    float *stage = NULL;
    size_t wbytes = 0;
    if (!c->rt || !c->t || !last || !first || !size || !off) {
        rc = SIM_ENOMEM;
        goto out;
    }
    if ((rc = stage_weights(c, &stage, &wbytes)))
        goto out;
    c->wf_bytes = wbytes;
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
    /* descriptors and the activation arena (a tensor absorbed by a group has no buffer) */
    for (int i = 0; i < n && !rc; i++)
        rc = cud_build(c, i);
    if (rc)
        goto out;
    cal_plan_last_use(net, &c->plan, last);
    for (int t = 0; t <= n; t++) {
        const struct cal_shape *s = cal_net_tensor_shape(net, t - 1);
        bool absorbed = t > 0 && c->plan.into[t - 1] != t - 1;
        size[t] = absorbed ? 0 : (size_t)(batch * cal_shape_count(s)) * (t == 0 && net->tokens ? 4 : c->esz);
        first[t] = t == 0 ? 0 : t - 1;
        last[t] = t == 0 || c->o.keep_all ? n : last[t];
    }
    if ((rc = cal_arena_plan(n + 1, size, first, last, 256, off, &c->arena_bytes)))
        goto out;
    if (cudaMalloc((void **)&c->arena, c->arena_bytes) != cudaSuccess) {
        rc = sim_err_set(SIM_ENOMEM, "cudnn backend: no device memory for a %zu-byte arena", c->arena_bytes);
        goto out;
    }
    cudaMemset(c->arena, 0, c->arena_bytes);
    for (int t = 0; t <= n; t++)
        c->t[t] = size[t] ? c->arena + off[t] : NULL;
    c->ids = net->tokens ? (int32_t *)c->t[0] : NULL;
    if (c->ids)
        c->t[0] = NULL; /* the ids live in the arena slot of the input; ownership: the arena */
    for (int i = 0; i < n && !rc; i++) {
        const struct cal_layer *l = &net->layers[i];
        int gi = c->plan.group[c->plan.into[i]];
        bool head = gi >= 0 && c->plan.groups[gi].head == i;
        if (l->op == CAL_CONV)
            rc = cud_find_algo(c, i, &c->ws_bytes);
        else if (l->op == CAL_BMM)
            rc = cud_bmm_setup(c, i);
        else if (head && (l->op == CAL_FC || l->op == CAL_LINEAR))
            rc = cud_lt_setup(c, i);
    }
    if (rc)
        goto out;
    if (c->ws_bytes && cudaMalloc((void **)&c->ws, c->ws_bytes) != cudaSuccess) {
        rc = sim_err_set(SIM_ENOMEM, "cudnn backend: no device memory for a %zu-byte workspace", c->ws_bytes);
        goto out;
    }
    /* an eager pass checks every call, then each group keeps its faster implementation and
     * the pass is captured as one graph */
    if ((rc = cud_run_all(c)))
        goto out;
    CU(cudaStreamSynchronize(c->s), NOL, "warm-up pass");
    if ((rc = tune_algos(c)) || (rc = choose_variants(c)) || (rc = cud_run_all(c)))
        goto out;
    CU(cudaStreamSynchronize(c->s), NOL, "warm-up pass");
    if (getenv("SERVESIM_CUDNN_STEPS"))
        print_steps(c);
    if (!c->o.eager && (rc = capture(c, W_PASS, 0, 1, &c->gexec)))
        goto out;
    CU(cudaMemGetInfo(&free1, &total), NOL, "cudaMemGetInfo");
    out->weights_bytes = c->half ? c->wh_bytes : c->wf_bytes;
    out->arena_bytes = c->arena_bytes;
    out->workspace_bytes = c->ws_bytes + BLAS_WS_BYTES;
    out->device_used_bytes = free0 > free1 ? free0 - free1 : 0;
out:
    free(last), free(first), free(size), free(off), free(stage);
    if (rc) {
        c->ids = NULL;
        cu_unprepare(c);
    }
    return rc;
}

/* Host-side layout change of n samples of an image tensor (float, canonical NCHW <-> NHWC). */
static int host_permute(const struct cal_shape *s, int n, const float *x, float *y, bool to_nhwc)
{
    cal_nhwc_permute(x, y, n, (int)s->d[0], (int)(s->d[1] * s->d[2]), to_nhwc);
    return 0;
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
    float *perm = NULL;
    if (cud_is_nhwc(c, &net->input)) {
        if (!(perm = malloc(n * sizeof *perm)))
            return SIM_ENOMEM;
        host_permute(&net->input, c->batch, input, perm, true);
        input = perm;
    }
    void *tmp = NULL;
    cudaError_t e = c->half ? cudaMalloc(&tmp, n * sizeof(float)) : cudaSuccess;
    if (e == cudaSuccess)
        e = cudaMemcpy(c->half ? tmp : c->t[0], input, n * sizeof(float), cudaMemcpyHostToDevice);
    if (e == cudaSuccess && c->half) {
        cal_cu_convert(tmp, c->t[0], (long)n, 1, c->s);
        e = cudaStreamSynchronize(c->s);
    }
    cudaFree(tmp);
    free(perm);
    CU(e, NOL, "input");
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
    if (c->gexec)
        CU(cudaGraphLaunch(c->gexec, c->s), NOL, "graph launch");
    else
        rc = cud_run_all(c);
    CU(cudaEventRecord(c->e1, c->s), NOL, "event");
    CU(cudaEventSynchronize(c->e1), NOL, "forward pass");
    float t = 0;
    cudaEventElapsedTime(&t, c->e0, c->e1);
    *ms = t;
    return rc;
}

/* Back-to-back served passes (cal_backend.h, serve_gaps): events around every pass, so the
 * idle time between passes is measured on the device's own clock, not the host's. */
static int cu_serve_gaps(void *st, int passes, bool copies, double *gpu_ms, double *gap_us)
{
    struct cu *c = st;
    const struct cal_net *net = c->net;
    if (!net || passes < 2)
        return sim_err_set(SIM_EINTERNAL, "cudnn backend: serve_gaps needs a prepared network "
                           "and at least 2 passes");
    CU(cudaSetDevice(c->o.device), NOL, "cudaSetDevice");
    size_t in_bytes = (size_t)c->batch * (size_t)cal_shape_count(&net->input) *
                      (net->tokens ? sizeof(int32_t) : c->esz);
    size_t out_bytes = (size_t)c->batch * (size_t)cal_shape_count(&net->layers[net->n - 1].shape) *
                       c->esz;
    void *din = net->tokens ? (void *)c->ids : c->t[0], *dout = c->t[net->n];
    cudaEvent_t *ev = calloc((size_t)passes * 2, sizeof *ev);
    void *hin = NULL, *hout = NULL;
    int made = 0, rc = 0;
    cudaError_t e = ev ? cudaSuccess : cudaErrorMemoryAllocation;
    for (; e == cudaSuccess && made < passes * 2; made++)
        e = cudaEventCreate(&ev[made]);
    if (e == cudaSuccess && copies && (e = cudaMallocHost(&hin, in_bytes)) == cudaSuccess &&
        (e = cudaMemcpy(hin, din, in_bytes, cudaMemcpyDeviceToHost)) == cudaSuccess)
        e = cudaMallocHost(&hout, out_bytes);
    for (int i = 0; i < passes && e == cudaSuccess && !rc; i++) {
        if (copies)
            e = cudaMemcpyAsync(din, hin, in_bytes, cudaMemcpyHostToDevice, c->s);
        if (e == cudaSuccess)
            e = cudaEventRecord(ev[2 * i], c->s);
        if (e == cudaSuccess) {
            if (c->gexec)
                e = cudaGraphLaunch(c->gexec, c->s);
            else
                rc = cud_run_all(c);
        }
        if (e == cudaSuccess && !rc)
            e = cudaEventRecord(ev[2 * i + 1], c->s);
        if (e == cudaSuccess && !rc && copies)
            e = cudaMemcpyAsync(hout, dout, out_bytes, cudaMemcpyDeviceToHost, c->s);
        if (e == cudaSuccess && !rc)
            e = cudaStreamSynchronize(c->s);
    }
    for (int i = 0; i < passes && e == cudaSuccess && !rc; i++) {
        float t = 0;
        if ((e = cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1])) == cudaSuccess)
            gpu_ms[i] = t;
        if (e == cudaSuccess && i + 1 < passes &&
            (e = cudaEventElapsedTime(&t, ev[2 * i + 1], ev[2 * i + 2])) == cudaSuccess)
            gap_us[i] = t * 1e3;
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    free(ev);
    cudaFreeHost(hin);
    cudaFreeHost(hout);
    if (rc)
        return rc;
    CU(e, NOL, "served passes");
    return 0;
}

static int cu_fused_into(void *st, int layer)
{
    const struct cu *c = st;
    return c->net && layer >= 0 && layer < c->net->n ? c->plan.into[layer] : layer;
}

static int cu_read(void *st, int layer, float *out)
{
    struct cu *c = st;
    const struct cal_layer *l = &c->net->layers[layer];
    if (!c->o.keep_all && layer != c->net->n - 1)
        return sim_err_set(SIM_EINTERNAL, "cudnn backend: reading a layer other than the last needs keep_all");
    if (c->plan.into[layer] != layer)
        return sim_err_set(SIM_EUNAVAIL, "cudnn backend: layer %s is fused into %s and has no output "
                           "of its own", l->name, c->net->layers[c->plan.into[layer]].name);
    size_t n = (size_t)(c->batch * cal_shape_count(&l->shape));
    bool perm = cud_is_nhwc(c, &l->shape);
    float *buf = perm ? malloc(n * sizeof *buf) : out;
    void *tmp = NULL;
    if (!buf)
        return SIM_ENOMEM;
    cudaError_t e = cudaSuccess;
    if (c->half) {
        if ((e = cudaMalloc(&tmp, n * sizeof(float))) == cudaSuccess) {
            cal_cu_convert(c->t[layer + 1], tmp, (long)n, 0, c->s);
            if ((e = cudaStreamSynchronize(c->s)) == cudaSuccess)
                e = cudaMemcpy(buf, tmp, n * sizeof(float), cudaMemcpyDeviceToHost);
        }
    } else
        e = cudaMemcpy(buf, c->t[layer + 1], n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(tmp);
    if (perm && e == cudaSuccess)
        host_permute(&l->shape, c->batch, buf, out, false);
    if (perm)
        free(buf);
    CU(e, NOL, "read");
    return 0;
}

static void cu_destroy(void *st)
{
    struct cu *c = st;
    if (!c)
        return;
    cu_unprepare(c);
    cudaFree(c->bws);
    if (c->lt)
        cublasLtDestroy(c->lt);
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
    .description = "cuDNN + cuBLAS on an NVIDIA GPU (fp32, tf32, fp16; fused groups, NHWC for "
                   "fp16/tf32, the pass as one CUDA graph; CUDA-event timing)",
    .create = cu_create,
    .info = cu_info,
    .prepare = cu_prepare,
    .set_input = cu_set_input,
    .run = cu_run,
    .read = cu_read,
    .fused_into = cu_fused_into,
    .serve_gaps = cu_serve_gaps,
    .unprepare = cu_unprepare,
    .destroy = cu_destroy,
};
