/* vllm — LLM serving as vLLM v1 does it: replicas of an LLM model (`tp` GPUs each) running
 * vLLM's iteration scheduler (the engine's, sim_llm.h: continuous batching under a token
 * budget and max_num_seqs, chunked prefill, paged KV blocks, preemption by recompute), and a
 * router in front that sends each request to one replica as it arrives (llm_pool.h).
 *
 * Defaults: vLLM 0.10's for an OpenAI API server (llm_sched_defaults: 8192 batched tokens and
 * 1024 sequences on a GPU of 70 GiB or more that is not an A100, else 2048 and 256), chunked
 * prefill on (vLLM v1 always enables it), prefix caching on (vLLM v1's default). `enable_chunked_prefill: false` is vLLM's v1
 * scheduler without it; with it and a small budget it is Sarathi-Serve's stall-free batching.
 * The GPUs are shared among the LLM models in proportion to their configured rates.
 *
 * With an autoscaler (dynamic executors): a GPU that comes up joins the spare GPUs, and as
 * soon as `tp` of them are spare they become a replica of the model with the fewest replicas
 * for its rate; a removed GPU's replica leaves the router at once and drains (it finishes what
 * it holds, sim_llm.h), its other GPUs removed with it. A model left without a replica keeps
 * its requests in the central queue until one comes up. */
#include <stdlib.h>

#include "llm_pool.h"
#include "policy.h"
#include "sim_err.h"
#include "sim_param.h"

struct vllm {
    int max_tokens, max_seqs, long_prefill;
    bool chunked;
    int router;
    bool prefix;
    struct llm_pools pools;
    int *rr;                     /* [model] round-robin position */
    struct llm_list *reps;       /* [model]: the replicas the router uses (their first GPUs) */
    struct llm_list spare;       /* GPUs up in no replica */
    double *weight;              /* [model] its rate (1 where none) */
    int *count;                  /* [model] replicas, for llm_pick_model */
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
    {"enable_prefix_caching", SIM_P_BOOL, SIM_P_AT(struct vllm, prefix, bool), .def = 1,
     .doc = "KV blocks stay cached after their request, found again by a request whose prompt "
            "starts with the same tokens (a trace's block ids, `mooncake`) or by a preempted "
            "request recomputing its own (vLLM v1's default: on)"},
    {"router", SIM_P_ENUM, SIM_P_AT_ENUM(struct vllm, router), .choices = llm_routers,
     .doc = LLM_ROUTERS_DOC},
    {NULL}};

static void destroy(void *state)
{
    struct vllm *st = state;
    for (int m = 0; st->reps && m < st->pools.nmodels; m++)
        llm_list_free(&st->reps[m]);
    free(st->reps);
    llm_list_free(&st->spare);
    free(st->weight);
    free(st->count);
    llm_pools_free(&st->pools);
    free(st->rr);
}

static struct sim_llm_sched sched_of(struct sim *s, const struct vllm *st, int m)
{
    struct sim_llm_sched sc = llm_sched_defaults(s, m, st->max_tokens, st->max_seqs);
    sc.chunked = st->chunked;
    sc.long_prefill = st->long_prefill;
    sc.prefix_caching = st->prefix;
    return sc;
}

static void submit_queued(struct sim *s, struct vllm *st, int m)
{
    while (st->reps[m].n > 0 && sim_queue_len(s, m) > 0)
        sim_llm_submit(s, llm_route(s, st->reps[m].e, st->reps[m].n, &st->rr[m], st->router,
                                    sim_queue_at(s, m, 0)), m);
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct vllm *st = state;
    int rc = sim_params_read(params, p, "policy.params", st);
    if (rc || (rc = llm_pools_assign(s, "vllm", 1, &st->pools)))
        return rc;
    int nm = st->pools.nmodels;
    st->rr = calloc((size_t)nm, sizeof *st->rr);
    st->reps = calloc((size_t)nm, sizeof *st->reps);
    st->weight = calloc((size_t)nm, sizeof *st->weight);
    st->count = calloc((size_t)nm, sizeof *st->count);
    if (!st->rr || !st->reps || !st->weight || !st->count)
        return SIM_ENOMEM;
    for (int m = 0; m < nm; m++) {
        if (!sim_mine_model(s, m))
            continue;                           /* another part's (pools) */
        struct sim_llm_sched sc = sched_of(s, st, m);
        st->weight[m] = llm_model_weight(s, m);
        for (int r = 0; r < st->pools.nrep[m]; r++)
            if ((rc = llm_pools_replica(s, &st->pools, m, r, &sc)) ||
                (rc = llm_list_push(&st->reps[m], st->pools.reps[st->pools.first_rep[m] + r])))
                return rc;
    }
    return llm_spare_init(s, &st->spare);
}

/* A GPU came up (an autoscaler's): spare until tp of them make a replica of the model with
 * the fewest replicas for its rate. */
static void on_exec_up(struct sim *s, void *state, int e)
{
    struct vllm *st = state;
    if (sim_exec(s, e)->cpu)
        return;
    if (llm_list_push(&st->spare, e)) {
        sim_fail_nomem(s, "for vllm's spare GPUs");
        return;
    }
    for (;;) {
        for (int m = 0; m < st->pools.nmodels; m++)
            st->count[m] = st->reps[m].n;
        int best = llm_pick_model(s, st->pools.nmodels, st->count, st->weight, st->spare.n);
        if (best < 0)
            return;
        int tp = sim_model_llm(s, best)->tp;
        struct sim_llm_sched sc = sched_of(s, st, best);
        if (sim_llm_replica_tp(s, st->spare.e, tp, best, &sc) ||
            llm_list_push(&st->reps[best], st->spare.e[0])) {
            sim_fail_nomem(s, "for a vllm replica");
            return;
        }
        llm_spare_take(&st->spare, tp);
        submit_queued(s, st, best);
    }
}

/* A GPU removed: out of the spares, or its replica out of the router (it drains) with its
 * other GPUs removed too. */
static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct vllm *st = state;
    int m, r = llm_removed(s, &st->spare, e, &m);
    if (r >= 0 && llm_list_remove(&st->reps[m], r))     /* (out already: another GPU's) */
        st->rr[m] = st->reps[m].n ? st->rr[m] % st->reps[m].n : 0;
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)r;
    submit_queued(s, state, m);
}

const struct policy_ops policy_vllm = {
    .name = "vllm",
    .summary = "LLM serving as vLLM v1: replicas with continuous batching, chunked prefill, paged KV and preemption; a router in front",
    .state_size = sizeof(struct vllm),
    .params = params,
    .init = init,
    .destroy = destroy,
    .on_request = on_request,
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,       /* replicas made and drained as GPUs come and go */
    .in_pools = true,
    .llm_only = true,
};
