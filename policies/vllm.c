/* vllm — LLM serving as vLLM v1 does it: every GPU a replica of an LLM model, each running
 * vLLM's iteration scheduler (the engine's, sim_llm.h: continuous batching under a token
 * budget and max_num_seqs, chunked prefill, paged KV blocks, preemption by recompute), and a
 * router in front that sends each request to one replica as it arrives.
 *
 * Defaults: vLLM 0.10's for an OpenAI API server on a GPU of 70 GiB or more that is not an
 * A100 (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults: 8192 batched tokens, 1024
 * sequences; other GPUs: 2048 and 256), chunked prefill on (vLLM v1 always enables it).
 * `enable_chunked_prefill: false` is vLLM's v1 scheduler without it; with it and a small
 * budget it is Sarathi-Serve's stall-free batching. Routers, as llm-d's scorers weigh
 * replicas: `round_robin`; `least_tokens` (the fewest tokens held: each request's prompt and
 * output less what it emitted); `kv_util` (the lowest KV-cache use, then the fewest waiting).
 * Ties go to the lowest replica. The GPUs are shared among the LLM models in proportion to
 * their configured rates (at least one each; the GPUs the rounding leaves go one each to the
 * models in order).
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_param.h"

enum { ROUTE_RR, ROUTE_TOKENS, ROUTE_KV };
static const char *const ROUTERS[] = {"round_robin", "least_tokens", "kv_util", NULL};

struct vllm {
    int max_tokens, max_seqs, long_prefill;
    bool chunked;
    int router;
    int *reps;                   /* replicas of model m: reps[first[m] .. first[m + 1]) */
    int *first;
    int *rr;                     /* [model] round-robin position */
};

static const struct sim_param params[] = {
    {"max_num_batched_tokens", SIM_P_INT, SIM_P_AT(struct vllm, max_tokens, int), .lo = 1,
     .hi = 10000000, .flags = SIM_P_NODEF,
     .def_doc = "8192 on a GPU of 70 GiB or more but the A100, else 2048 (vLLM's)",
     .doc = "tokens one iteration computes (vLLM's token budget)"},
    {"max_num_seqs", SIM_P_INT, SIM_P_AT(struct vllm, max_seqs, int), .lo = 1, .hi = 1000000,
     .flags = SIM_P_NODEF, .def_doc = "1024 on those GPUs, else 256",
     .doc = "requests a replica runs at once"},
    {"enable_chunked_prefill", SIM_P_BOOL, SIM_P_AT(struct vllm, chunked, bool), .def = 1,
     .doc = "split a prompt over iterations to fit the budget (else a prompt longer than "
            "what is left waits)"},
    {"long_prefill_token_threshold", SIM_P_INT, SIM_P_AT(struct vllm, long_prefill, int),
     .lo = 0, .hi = 10000000, .def = 0,
     .doc = "the most prompt tokens one request computes in an iteration (0: no limit)"},
    {"router", SIM_P_ENUM, SIM_P_AT_ENUM(struct vllm, router), .choices = ROUTERS,
     .doc = "how a request picks its replica"},
    {NULL}};

static void destroy(void *state)
{
    struct vllm *st = state;
    free(st->reps);
    free(st->first);
    free(st->rr);
}

/* The GPU executors shared among the LLM models by their rates (rounded down, at least one
 * each), the rest one each to the models in order. */
static int assign(struct sim *s, struct vllm *st, int nexec)
{
    int nm = sim_model_count(s);
    if (nm < 1 || nm > nexec)
        return sim_err_set(SIM_EINVAL, "policy vllm: %d GPUs for %d LLM models: every model "
                           "needs a replica of its own", nexec, nm);
    double total = 0;
    for (int m = 0; m < nm; m++)
        total += sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
    int *n = calloc((size_t)nm, sizeof *n);
    if (!n)
        return SIM_ENOMEM;
    int given = 0;
    for (int m = 0; m < nm; m++) {
        double w = sim_model(s, m)->rate_rps > 0 ? sim_model(s, m)->rate_rps : 1;
        n[m] = 1 + (int)((double)(nexec - nm) * w / total);
        given += n[m];
    }
    for (int m = 0; given < nexec; m = (m + 1) % nm, given++)
        n[m]++;
    st->first[0] = 0;
    for (int m = 0; m < nm; m++)
        st->first[m + 1] = st->first[m] + n[m];
    free(n);
    return 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct vllm *st = state;
    int rc = sim_params_read(params, p, "policy.params", st);
    if (rc)
        return rc;
    int nm = sim_model_count(s), nexec = 0;
    for (int m = 0; m < nm; m++)
        if (!sim_model_llm(s, m))
            return sim_err_set(SIM_EINVAL, "policy vllm serves LLM models only: model %s is a "
                               "DNN model (an LLM model's entry has an `llm` section: "
                               "docs/llm.md)", sim_model(s, m)->cfg->name);
    for (int e = 0; e < sim_exec_count(s); e++)
        nexec += !sim_exec(s, e)->cpu;
    st->reps = malloc((size_t)(nexec > 0 ? nexec : 1) * sizeof *st->reps);
    st->first = malloc((size_t)(nm + 1) * sizeof *st->first);
    st->rr = calloc((size_t)nm, sizeof *st->rr);
    if (!st->reps || !st->first || !st->rr)
        return SIM_ENOMEM;
    if ((rc = assign(s, st, nexec)))
        return rc;
    for (int e = 0, k = 0, m = 0; e < sim_exec_count(s); e++) {
        if (sim_exec(s, e)->cpu)
            continue;
        while (k == st->first[m + 1])
            m++;
        st->reps[k++] = e;
        /* vLLM's defaults by the GPU (EngineArgs.get_batch_defaults, API server) */
        const struct sim_llm_gpu *g = &sim_model_llm(s, m)->gpu;
        bool big = g->mem_gib >= 70 && !(g->name && strcmp(g->name, "a100") == 0);
        struct sim_llm_sched sc = {st->max_tokens > 0 ? st->max_tokens : big ? 8192 : 2048,
                                   st->max_seqs > 0 ? st->max_seqs : big ? 1024 : 256,
                                   st->chunked, st->long_prefill};
        if ((rc = sim_llm_replica(s, e, m, &sc)))
            return rc;
    }
    return 0;
}

static bool better(const struct sim_llm_state *a, const struct sim_llm_state *b, int router)
{
    if (router == ROUTE_TOKENS)
        return a->tokens_left < b->tokens_left;
    double ua = (double)a->blocks_used / (double)a->blocks_total;
    double ub = (double)b->blocks_used / (double)b->blocks_total;
    return ua < ub || (ua == ub && a->waiting < b->waiting);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)r;
    struct vllm *st = state;
    int lo = st->first[m], n = st->first[m + 1] - lo;
    while (sim_queue_len(s, m) > 0) {
        int e;
        if (st->router == ROUTE_RR) {
            e = st->reps[lo + st->rr[m]];
            st->rr[m] = (st->rr[m] + 1) % n;
        } else {
            e = st->reps[lo];
            for (int k = 1; k < n; k++)
                if (better(sim_llm_state(s, st->reps[lo + k]), sim_llm_state(s, e), st->router))
                    e = st->reps[lo + k];
        }
        sim_llm_submit(s, e, m);
    }
}

const struct policy_ops policy_vllm = {
    .name = "vllm",
    .summary = "LLM serving as vLLM v1: replicas with continuous batching, chunked prefill, paged KV and preemption; a router in front",
    .state_size = sizeof(struct vllm),
    .params = params,
    .init = init,
    .destroy = destroy,
    .on_request = on_request,
    .llm_only = true,
};
