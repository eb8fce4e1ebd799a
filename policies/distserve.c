/* distserve — prefill/decode disaggregation (DistServe, OSDI'24; Splitwise, ISCA'24): each LLM
 * model's replicas (`tp` GPUs each) split into a prefill pool and a decode pool, each running
 * the engine's iteration scheduler (sim_llm.h) in one role. A request goes to a prefill replica by the
 * router; once its prompt is computed and its first token out (TTFT, as DistServe counts it:
 * the prefill instance emits the first token), its KV cache crosses the link (latency +
 * prompt tokens x KV bytes per token / bandwidth) to the decode replica with the most free KV
 * blocks (then the fewest waiting), which admits it when its blocks for the whole context are
 * free and decodes the rest. DistServe places the two phases to meet a TTFT and a TPOT SLO
 * separately; here the split is a parameter (`prefill_share`), so that a goodput search or a
 * plan can compare splits, as its placement search does.
 *
 * Each pool runs vLLM's scheduler with its own limits: the prefill pool's token budget, the
 * decode pool's sequences. The link defaults to 50 GB/s and 10 us, one 400 Gb/s NIC between
 * nodes (DistServe's low-affinity placement; NVLink within a node is ~450 GB/s); a prefill
 * replica's link sends one cache at a time.
 *
 * Not under an autoscaler: scaling a pool down can leave a model without prefill or without
 * decode replicas (the HPA removes the newest GPUs first, all of one role), which DistServe
 * answers by re-placing its instances; that is not modelled (docs/llm.md). */
#include <math.h>
#include <stdlib.h>

#include "llm_pool.h"
#include "policy.h"
#include "sim_err.h"
#include "sim_param.h"

struct distserve {
    double prefill_share, link_gbs, link_us;
    int prefill_tokens, decode_seqs, router;
    bool prefix;
    struct llm_pools pools;
    struct llm_list *pre, *dec;  /* [model]: its prefill and its decode replicas */

    int *rr;
};

static const struct sim_param params[] = {
    {"prefill_share", SIM_P_NUM, SIM_P_AT(struct distserve, prefill_share, double),
     .cons = SIM_J_UNIT, .def = 0.5,
     .doc = "the share of each model's GPUs that prefill (rounded, at least one of each role)"},
    {"prefill_max_num_batched_tokens", SIM_P_INT,
     SIM_P_AT(struct distserve, prefill_tokens, int), .lo = 1, .hi = 10000000,
     .flags = SIM_P_NODEF, .def_doc = "vLLM's default for the GPU",
     .doc = "a prefill replica's token budget per iteration"},
    {"decode_max_num_seqs", SIM_P_INT, SIM_P_AT(struct distserve, decode_seqs, int), .lo = 1,
     .hi = 1000000, .flags = SIM_P_NODEF, .def_doc = "vLLM's default for the GPU",
     .doc = "the requests a decode replica runs at once"},
    {"kv_link_gbs", SIM_P_NUM, SIM_P_AT(struct distserve, link_gbs, double), .cons = SIM_J_POS,
     .def = 50, .doc = "the KV transfer's bandwidth, GB/s"},
    {"kv_link_us", SIM_P_NUM, SIM_P_AT(struct distserve, link_us, double),
     .cons = SIM_J_NONNEG, .def = 10, .doc = "the KV transfer's latency"},
    {"router", SIM_P_ENUM, SIM_P_AT_ENUM(struct distserve, router), .choices = llm_routers,
     .sdef = "least_tokens", .doc = "prefill replicas: " LLM_ROUTERS_DOC},
    {"enable_prefix_caching", SIM_P_BOOL, SIM_P_AT(struct distserve, prefix, bool), .def = 0,
     .doc = "prefix caching on the prefill replicas (as `vllm`'s; DistServe's engine has none)"},
    {NULL}};

static void destroy(void *state)
{
    struct distserve *st = state;
    for (int m = 0; m < st->pools.nmodels; m++) {
        if (st->pre)
            llm_list_free(&st->pre[m]);
        if (st->dec)
            llm_list_free(&st->dec[m]);
    }
    free(st->pre);
    free(st->dec);
    llm_pools_free(&st->pools);
    free(st->rr);
}

/* A replica of model m on execs[0..tp) in its role, into its pool. */
static int make(struct sim *s, struct distserve *st, int m, const int *execs, bool pre)
{
    struct sim_llm_sched sc = llm_sched_defaults(s, m, pre ? st->prefill_tokens : 0,
                                                 pre ? 0 : st->decode_seqs);
    sc.role = pre ? SIM_LLM_PREFILL : SIM_LLM_DECODE;
    sc.kv_link_gbs = st->link_gbs;
    sc.kv_link_us = st->link_us;
    sc.prefix_caching = pre && st->prefix;
    int rc = sim_llm_replica_tp(s, execs, sim_model_llm(s, m)->tp, m, &sc);
    return rc ? rc : llm_list_push(pre ? &st->pre[m] : &st->dec[m], execs[0]);
}

static void submit_queued(struct sim *s, struct distserve *st, int m)
{
    while (st->pre[m].n > 0 && sim_queue_len(s, m) > 0)
        sim_llm_submit(s, llm_route(s, st->pre[m].e, st->pre[m].n, &st->rr[m], st->router,
                                    sim_queue_at(s, m, 0)), m);
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct distserve *st = state;
    int rc = sim_params_read(params, p, "policy.params", st);
    if (rc || (rc = llm_pools_assign(s, "distserve", 2, &st->pools)))
        return rc;
    int nm = st->pools.nmodels;
    st->rr = calloc((size_t)nm, sizeof *st->rr);
    st->pre = calloc((size_t)nm, sizeof *st->pre);
    st->dec = calloc((size_t)nm, sizeof *st->dec);
    if (!st->rr || !st->pre || !st->dec)
        return SIM_ENOMEM;
    for (int m = 0; m < nm; m++) {
        if (!sim_mine_model(s, m))
            continue;                           /* another part's (pools) */
        int n = st->pools.nrep[m], tp = sim_model_llm(s, m)->tp;
        int np = (int)lround(st->prefill_share * n);
        np = np < 1 ? 1 : np > n - 1 ? n - 1 : np;
        for (int r = 0; r < n; r++)
            if ((rc = make(s, st, m, st->pools.gpus + st->pools.first[m] + r * tp, r < np)))
                return rc;
    }
    return 0;
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)r;
    submit_queued(s, state, m);
}

/* The decode replica with the most free KV blocks, counting those the caches on their way to
 * it will take, then the fewest waiting (on their way included), then the lowest; -1 where
 * the model has none (the request is dropped). */
static int decode_target(struct sim *s, void *state, int e, const struct sim_request *r)
{
    (void)e;
    struct distserve *st = state;
    int m = r->model, best = -1;
    long best_free = 0;
    int best_wait = 0;
    for (int k = 0; k < st->dec[m].n; k++) {
        const struct sim_llm_state *d = sim_llm_state(s, st->dec[m].e[k]);
        long free_blocks = d->blocks_total - d->blocks_used - d->incoming_blocks;
        int wait = d->waiting + d->incoming;
        if (best < 0 || free_blocks > best_free ||
            (free_blocks == best_free && wait < best_wait)) {
            best = st->dec[m].e[k];
            best_free = free_blocks;
            best_wait = wait;
        }
    }
    return best;
}

const struct policy_ops policy_distserve = {
    .name = "distserve",
    .summary = "LLM serving with prefill and decode on separate GPU pools (DistServe, Splitwise): KV cache sent over a link, decode admission by free KV",
    .state_size = sizeof(struct distserve),
    .params = params,
    .init = init,
    .destroy = destroy,
    .on_request = on_request,
    .llm_decode_target = decode_target,
    .llm_only = true,
    .in_pools = true,
};
