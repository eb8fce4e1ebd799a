/* pools — several policies on one cluster, each serving its own models on its own GPUs: e.g.
 * Symphony batching CNNs on 8 GPUs beside vLLM serving an LLM on 4, one run, one GPU ledger,
 * one set of results with both kinds of metrics.
 *
 * params: {"pools": [{"policy": NAME, "params": {...}, "models": [NAME, ...], "gpus": N},
 * ...]}. The GPU executors are dealt out in order: the first pool takes the first N, the next
 * the next ones; every model is in exactly one pool. Each pool is an engine view
 * (sim_view_assign): its policy runs as if the cluster held only its GPUs (another pool's
 * read as down) and plans only for its models (sim_mine_model). This policy calls each part's
 * hooks with its view current: a request and its batches by their model's pool, a timer in the
 * view it was set in, every part's tick in turn. A part's policy must be able to run so
 * (policy_ops.in_pools: symphony, fifo, vllm, distserve), an LLM model must be in a pool of an
 * LLM policy and a DNN model in one of a DNN policy. Not with autoscaling, training jobs or
 * notebooks (the parts do not share added GPUs). */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

#define POOLS_MAX 16

struct part {
    const struct policy_ops *ops;
    void *state;
    bool live;                           /* its init ran: destroy it */
};

struct pools {
    int n;
    struct part part[POOLS_MAX];
    int *pool_of_model;                  /* [models] */
};

static const struct sim_param params[] = {
    {"pools", SIM_P_HAND, .flags = SIM_P_REQUIRED,
     .type_doc = "array of `{\"policy\": NAME, \"params\": {...}, \"models\": [NAME, ...], "
                 "\"gpus\": N}`",
     .doc = "the parts, each a policy with its parameters, the models it serves (every model "
            "in one part) and its GPUs (dealt out in order); the parts' policies: symphony, "
            "fifo, vllm, distserve"},
    {NULL}};

static void destroy(void *state)
{
    struct pools *st = state;
    for (int i = 0; i < st->n; i++) {
        if (st->part[i].live && st->part[i].ops->destroy)
            st->part[i].ops->destroy(st->part[i].state);
        free(st->part[i].state);
    }
    free(st->pool_of_model);
}

static int model_named(struct sim *s, const char *name)
{
    for (int m = 0; m < sim_model_count(s); m++)
        if (strcmp(sim_model(s, m)->cfg->name, name) == 0)
            return m;
    return -1;
}

/* Part i (JSON o at path p): its policy, models and GPUs (from *next_gpu on); its view made. */
static int part_of(struct sim *s, struct pools *st, int i, const cJSON *o, const char *p,
                   const int *gpus, int ngpus, int *next_gpu, const cJSON **pp)
{
    static const char *const keys[] = {"policy", "params", "models", "gpus", NULL};
    const char *name;
    const cJSON *models, *pparams;
    long n;
    int rc;
    char q[SIM_JPATH_MAX];
    if (!cJSON_IsObject(o))
        return sim_json_expected(p, "an object {policy, params, models, gpus}", o);
    if ((rc = sim_json_keys(o, p, keys)) || (rc = sim_json_str(o, p, "policy", true, &name)) ||
        (rc = sim_json_obj(o, p, "params", false, &pparams)) ||
        (rc = sim_json_arr(o, p, "models", true, &models)) ||
        (rc = sim_json_int(o, p, "gpus", true, 1, 1 << 20, &n)))
        return rc;
    const struct policy_ops *ops = policy_find(name);
    sim_jpath(q, sizeof q, p, "policy");
    if (!ops || !ops->in_pools)
        return sim_err_set(SIM_EINVAL, "%s: expected a policy that runs as a part (symphony, "
                           "fifo, vllm, distserve), got \"%s\"", q, name);
    if (*next_gpu + n > ngpus)
        return sim_err_set(SIM_EINVAL, "%s.gpus: %ld GPUs asked, %d left of the cluster's %d",
                           p, n, ngpus - *next_gpu, ngpus);
    int *ms = calloc((size_t)sim_model_count(s) + 1, sizeof *ms), nm = 0, k = 0;
    if (!ms)
        return SIM_ENOMEM;
    for (const cJSON *e = models->child; e; e = e->next, k++) {
        sim_jpath(q, sizeof q, p, "models");
        char qi[SIM_JPATH_MAX];
        sim_jpath_idx(qi, sizeof qi, q, k);
        int m = cJSON_IsString(e) ? model_named(s, e->valuestring) : -1;
        if (m < 0 || st->pool_of_model[m] >= 0) {
            free(ms);
            return cJSON_IsString(e) && m >= 0
                       ? sim_err_set(SIM_EINVAL, "%s: model \"%s\" is in pool %d already", qi,
                                     e->valuestring, st->pool_of_model[m])
                       : sim_json_expected(qi, "the name of a model of the config", e);
        }
        bool llm = sim_model_llm(s, m) != NULL;
        if (llm != ops->llm_only) {
            free(ms);
            return sim_err_set(SIM_EINVAL, "%s: %s model \"%s\" in a pool of %s, which serves %s "
                               "models", qi, llm ? "LLM" : "DNN", e->valuestring, name,
                               ops->llm_only ? "LLM" : "DNN");
        }
        st->pool_of_model[m] = i;
        ms[nm++] = m;
    }
    rc = sim_view_assign(s, i, ms, nm, gpus + *next_gpu, (int)n);
    free(ms);
    if (rc)
        return rc;
    *next_gpu += (int)n;
    if (nm == 0)
        return sim_err_set(SIM_EINVAL, "%s.models: expected at least one model", p);
    st->part[i].ops = ops;
    *pp = pparams;
    return 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct pools *st = state;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p, "pools");
    int rc = sim_params_keys(params, p, "policy.params");
    if (rc)
        return rc;
    if (!arr)
        return sim_err_set(SIM_EINVAL, "policy pools needs its parts in policy.params.pools: "
                           "[{\"policy\": NAME, \"params\": {...}, \"models\": [NAME, ...], "
                           "\"gpus\": N}, ...] (docs/policies.md)");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
        cJSON_GetArraySize(arr) > POOLS_MAX)
        return sim_json_expected("policy.params.pools", "an array of 1 to 16 parts", arr);
    if (sim_world(s)->autoscaler)
        return sim_err_set(SIM_EINVAL, "policy pools: not with an autoscaler (its parts do not "
                           "share the GPUs it adds)");
    int nm = sim_model_count(s), ng = 0, next = 0;
    if (!(st->pool_of_model = malloc((size_t)nm * sizeof *st->pool_of_model)))
        return SIM_ENOMEM;
    memset(st->pool_of_model, 0xff, (size_t)nm * sizeof *st->pool_of_model);
    int *gpus = malloc((size_t)sim_exec_count(s) * sizeof *gpus);
    if (!gpus)
        return SIM_ENOMEM;
    for (int e = 0; e < sim_exec_count(s); e++)
        if (!sim_exec(s, e)->cpu)
            gpus[ng++] = e;
    const cJSON *pp[POOLS_MAX];
    int i = 0;
    for (const cJSON *o = arr->child; o && !rc; o = o->next, i++) {
        char path[SIM_JPATH_MAX];
        sim_jpath_idx(path, sizeof path, "policy.params.pools", i);
        rc = part_of(s, st, i, o, path, gpus, ng, &next, &pp[i]);
        st->n = rc ? i : i + 1;
    }
    free(gpus);
    for (int m = 0; !rc && m < nm; m++)
        if (st->pool_of_model[m] < 0)
            rc = sim_err_set(SIM_EINVAL, "policy.params.pools: model \"%s\" is in no pool",
                             sim_model(s, m)->cfg->name);
    for (i = 0; !rc && i < st->n; i++) {
        struct part *pt = &st->part[i];
        if (!(pt->state = calloc(1, pt->ops->state_size ? pt->ops->state_size : 1)))
            return SIM_ENOMEM;
        char what[64];
        snprintf(what, sizeof what, "policy.params.pools[%d].params", i);
        if ((rc = policy_check_params(pt->ops, pp[i])))
            return sim_err_prefix(rc, what);
        sim_view_set(s, i);
        rc = pt->ops->init ? pt->ops->init(s, pp[i], pt->state) : 0;
        sim_view_set(s, -1);
        pt->live = true;
        if (rc)
            sim_err_prefix(rc, what);
    }
    return rc;
}

/* Calls part k's hook `fn` (where it has one) with its view current. */
#define IN_PART(s, st, k, fn, ...)                                                       \
    do {                                                                                  \
        struct part *pt_ = &(st)->part[k];                                                \
        if (pt_->ops->fn) {                                                               \
            sim_view_set((s), (k));                                                       \
            pt_->ops->fn((s), pt_->state, __VA_ARGS__);                                   \
            sim_view_set((s), -1);                                                        \
        }                                                                                 \
    } while (0)

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    struct pools *st = state;
    IN_PART(s, st, st->pool_of_model[m], on_request, m, r);
}

static int route(struct sim *s, void *state, const struct sim_request *r)
{
    struct pools *st = state;
    struct part *pt = &st->part[st->pool_of_model[r->model]];
    if (!pt->ops->route)
        return SIM_CENTRAL;
    sim_view_set(s, st->pool_of_model[r->model]);
    int to = pt->ops->route(s, pt->state, r);
    sim_view_set(s, -1);
    return to;
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct pools *st = state;
    IN_PART(s, st, st->pool_of_model[b->model], on_batch_done, b);
}

static void on_request_end(struct sim *s, void *state, const struct sim_request *r, int64_t t)
{
    struct pools *st = state;
    IN_PART(s, st, st->pool_of_model[r->model], on_request_end, r, t);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct pools *st = state;
    int k = sim_view_current(s);              /* the engine fires a timer in its view */
    if (k >= 0 && k < st->n)
        IN_PART(s, st, k, on_timer, tag, arg);
}

static void on_load_done(struct sim *s, void *state, int e, int m, bool ok)
{
    struct pools *st = state;
    IN_PART(s, st, st->pool_of_model[m], on_load_done, e, m, ok);
}

static int decode_target(struct sim *s, void *state, int e, const struct sim_request *r)
{
    struct pools *st = state;
    struct part *pt = &st->part[st->pool_of_model[r->model]];
    sim_view_set(s, st->pool_of_model[r->model]);
    int d = pt->ops->llm_decode_target ? pt->ops->llm_decode_target(s, pt->state, e, r) : -1;
    sim_view_set(s, -1);
    return d;
}

static void on_tick(struct sim *s, void *state)
{
    struct pools *st = state;
    for (int k = 0; k < st->n; k++) {
        struct part *pt = &st->part[k];
        if (pt->ops->on_tick) {
            sim_view_set(s, k);
            pt->ops->on_tick(s, pt->state);
            sim_view_set(s, -1);
        }
    }
}

/* The longest of the parts' (the warm-up must cover every one's start-up). */
static double converge_s(const cJSON *p)
{
    double most = 0;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(p, "pools"), *o;
    cJSON_ArrayForEach(o, arr) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "policy");
        const struct policy_ops *ops = cJSON_IsString(n) ? policy_find(n->valuestring) : NULL;
        double c = ops && ops->converge_s
                       ? ops->converge_s(cJSON_GetObjectItemCaseSensitive(o, "params")) : 0;
        most = c > most ? c : most;
    }
    return most;
}

const struct policy_ops policy_pools = {
    .name = "pools",
    .summary = "several policies on one cluster, each serving its own models on its own GPUs (e.g. symphony for CNNs beside vllm for an LLM)",
    .state_size = sizeof(struct pools),
    .params = params,
    .init = init,
    .destroy = destroy,
    .on_request = on_request,
    .route = route,
    .on_batch_done = on_batch_done,
    .on_request_end = on_request_end,
    .on_timer = on_timer,
    .on_load_done = on_load_done,
    .llm_decode_target = decode_target,
    .on_tick = on_tick,
    .converge_s = converge_s,
    .mixed_models = true,
};
