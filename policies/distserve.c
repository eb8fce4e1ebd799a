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
 * With an autoscaler: `tp` spare GPUs become a replica of the model with the fewest replicas
 * for its rate, prefilling if that keeps its prefill replicas nearest `prefill_share` of them,
 * else decoding; a removed GPU's replica leaves its pool and drains (the caches already on
 * their way to it arrive), its other GPUs removed with it. A model left with one pool only
 * (the HPA removes the newest GPUs first, often all of one role) falls back to colocation:
 * its replicas serve both phases (sim_llm_set_role) until a new replica restores the split,
 * as a decode replica, the others prefilling again. */
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
    struct llm_list *both;       /* [model]: serving both phases, one pool having gone */
    struct llm_list spare;       /* GPUs up in no replica */
    double *weight;              /* [model] its rate (1 where none) */
    int *count;                  /* [model] replicas, for llm_pick_model */

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
        if (st->both)
            llm_list_free(&st->both[m]);
    }
    free(st->pre);
    free(st->dec);
    free(st->both);
    free(st->weight);
    free(st->count);
    llm_list_free(&st->spare);
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

/* Requests to the prefill replicas, or where the model has none those serving both phases. */
static void submit_queued(struct sim *s, struct distserve *st, int m)
{
    const struct llm_list *to = st->pre[m].n > 0 ? &st->pre[m] : &st->both[m];
    while (to->n > 0 && sim_queue_len(s, m) > 0)
        sim_llm_submit(s, llm_route(s, to->e, to->n, &st->rr[m], st->router,
                                    sim_queue_at(s, m, 0)), m);
}

/* Every replica of list `from` to role `role`, into list `to`. */
static void move_all(struct sim *s, struct llm_list *from, struct llm_list *to,
                     enum sim_llm_role role)
{
    for (int k = 0; k < from->n; k++)
        if (sim_llm_set_role(s, from->e[k], role) || llm_list_push(to, from->e[k])) {
            sim_fail_nomem(s, "for a distserve replica's role");
            return;
        }
    from->n = 0;
}

/* A model with one pool only falls back to colocation. */
static void rebalance(struct sim *s, struct distserve *st, int m)
{
    if (st->dec[m].n == 0 && st->pre[m].n > 0)
        move_all(s, &st->pre[m], &st->both[m], SIM_LLM_BOTH);
    else if (st->pre[m].n == 0 && st->dec[m].n > 0)
        move_all(s, &st->dec[m], &st->both[m], SIM_LLM_BOTH);
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
    st->both = calloc((size_t)nm, sizeof *st->both);
    st->weight = calloc((size_t)nm, sizeof *st->weight);
    st->count = calloc((size_t)nm, sizeof *st->count);
    if (!st->rr || !st->pre || !st->dec || !st->both || !st->weight || !st->count)
        return SIM_ENOMEM;
    for (int m = 0; m < nm; m++) {
        if (!sim_mine_model(s, m))
            continue;                           /* another part's (pools) */
        st->weight[m] = llm_model_weight(s, m);
        int n = st->pools.nrep[m], tp = sim_model_llm(s, m)->tp;
        int np = (int)lround(st->prefill_share * n);
        np = np < 1 ? 1 : np > n - 1 ? n - 1 : np;
        for (int r = 0; r < n; r++)
            if ((rc = make(s, st, m, st->pools.gpus + st->pools.first[m] + r * tp, r < np)))
                return rc;
    }
    return llm_spare_init(s, &st->spare);
}

/* A GPU came up (an autoscaler's): spare until tp of them make a replica of the model with
 * the fewest replicas for its rate. Where the model fell back to colocation it decodes, the
 * others prefilling again; else it takes the role that keeps the prefill share nearest. */
static void on_exec_up(struct sim *s, void *state, int e)
{
    struct distserve *st = state;
    if (sim_exec(s, e)->cpu)
        return;
    if (llm_list_push(&st->spare, e)) {
        sim_fail_nomem(s, "for distserve's spare GPUs");
        return;
    }
    for (;;) {
        for (int m = 0; m < st->pools.nmodels; m++)
            st->count[m] = st->pre[m].n + st->dec[m].n + st->both[m].n;
        int m = llm_pick_model(s, st->pools.nmodels, st->count, st->weight, st->spare.n);
        if (m < 0)
            return;
        int tp = sim_model_llm(s, m)->tp, n = st->count[m] + 1;
        bool pre;
        if (st->both[m].n > 0) {
            move_all(s, &st->both[m], &st->pre[m], SIM_LLM_PREFILL);
            pre = false;
        } else {
            double with = (st->pre[m].n + 1.0) / n, without = (double)st->pre[m].n / n;
            pre = st->dec[m].n > 0 && (st->pre[m].n == 0 || fabs(with - st->prefill_share) <
                                                            fabs(without - st->prefill_share));
        }
        if (make(s, st, m, st->spare.e, pre)) {
            sim_fail_nomem(s, "for a distserve replica");
            return;
        }
        llm_spare_take(&st->spare, tp);
        rebalance(s, st, m);                        /* (a first replica serves both) */
        submit_queued(s, st, m);
    }
}

/* A GPU removed: out of the spares, or its replica out of its pool (it drains) with its other
 * GPUs removed too; a model left with one pool falls back to colocation. */
static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct distserve *st = state;
    int m, r = llm_removed(s, &st->spare, e, &m);
    if (r < 0 || !(llm_list_remove(&st->pre[m], r) || llm_list_remove(&st->dec[m], r) ||
                   llm_list_remove(&st->both[m], r)))
        return;                                 /* none, or out already (another GPU's) */
    rebalance(s, st, m);
    int n = st->pre[m].n ? st->pre[m].n : st->both[m].n;
    st->rr[m] = n ? st->rr[m] % n : 0;
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
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,       /* replicas made and drained as GPUs come and go */
    .llm_only = true,
    .in_pools = true,
};
