/* rrl — the serving node of RRL (Qin et al., "Swift Machine Learning Model Serving
 * Scheduling: A Region Based Reinforcement Learning Approach", SC 2019; specs/rrl.md) and its
 * fixed-configuration baseline `rrl-static`.
 *
 * A node is a TF-Serving-like server: requests are routed to the node with the shortest queue
 * (ties: lowest id) and wait there in FIFO order; a batcher fills up to c lanes:
 *  - GPU (config [B, T_ms, m]): while fewer than m batches hold lanes and the queue holds B
 *    requests or its head has waited T, the lane takes the first min(B, queue); a timer at
 *    head + T otherwise (TF Serving's rule);
 *  - CPU (config [k, p, t]): one CPU executor per node with all of its cores; while fewer than
 *    k requests are in service it starts the head with p inter-op and t intra-op threads.
 * The executors' lanes (cluster.lanes) bound m and k; how co-running batches slow each other
 * down is the cluster's interference model (docs/config.md). `config` is a triple or
 * "sequential" (CPU 1,1,1; GPU B 1, T 0, m 1) or "tf_default" (CPU k = lanes, p = t = the
 * node's cores; GPU B 1, T 0, m = lanes), the default. The learning policy (rrl) drives the
 * same node with a configuration it changes every slot. */
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "sim_json.h"

enum { DEV_GPU, DEV_CPU };

struct rrl {
    int dev;
    int c[3];                         /* CPU: k, p, t; GPU: B, T (ms), m */
    int64_t timeout_ns;               /* GPU: T */
    int n;                            /* serving executors */
    int *exec;                        /* [n] their ids */
    uint64_t *timer;                  /* [n] batch-timeout timers (GPU) */
};

static const char *const params[] = {"device", "config", NULL};

static int lanes_in_use(const struct sim_exec *x)
{
    return x->nrunning + x->pending;
}

static int queued(const struct sim *s, int e)
{
    int q = 0;
    for (int m = 0; m < sim_model_count(s); m++)
        q += sim_xqueue_len(s, e, m);
    return q;
}

/* The batcher of serving executor i (executor e): fill lanes while the rule allows. */
static void fill(struct sim *s, struct rrl *st, int i)
{
    int e = st->exec[i];
    const struct sim_exec *x = sim_exec(s, e);
    int limit = st->dev == DEV_CPU ? st->c[0] : st->c[2];
    while (x->state == SIM_EXEC_UP && lanes_in_use(x) < limit) {
        int best = -1;                /* the model whose head has waited longest */
        for (int m = 0; m < sim_model_count(s); m++)
            if (sim_xqueue_len(s, e, m) > 0 &&
                (best < 0 || sim_xqueue_at(s, e, m, 0)->t_sched <
                                 sim_xqueue_at(s, e, best, 0)->t_sched))
                best = m;
        if (best < 0)
            return;
        int len = sim_xqueue_len(s, e, best);
        struct sim_dispatch_args a = {.exec = e, .model = best, .from = e,
                                      .start_at = sim_now(s)};
        if (st->dev == DEV_CPU) {
            a.n = 1;
            a.p = st->c[1];
            a.t = st->c[2];
        } else {
            int B = st->c[0] < sim_model(s, best)->max_batch ? st->c[0]
                                                             : sim_model(s, best)->max_batch;
            int64_t due = sim_xqueue_at(s, e, best, 0)->t_sched + st->timeout_ns;
            if (len < B && sim_now(s) < due) {
                st->timer[i] = sim_timer_rearm(s, st->timer[i], due, (uint64_t)i, NULL);
                return;
            }
            a.n = len < B ? len : B;
        }
        sim_dispatch_ex(s, &a);
    }
}

static int parse_config(struct sim *s, struct rrl *st, const cJSON *p, int cores)
{
    const cJSON *c = p ? cJSON_GetObjectItemCaseSensitive(p, "config") : NULL;
    int lanes = sim_world(s)->lanes > 1 ? sim_world(s)->lanes : 1;
    bool cpu = st->dev == DEV_CPU;
    if (!c || (cJSON_IsString(c) && strcmp(c->valuestring, "tf_default") == 0)) {
        st->c[0] = cpu ? lanes : 1;
        st->c[1] = cpu ? cores : 0;
        st->c[2] = cpu ? cores : lanes;
    } else if (cJSON_IsString(c) && strcmp(c->valuestring, "sequential") == 0) {
        st->c[0] = 1;
        st->c[1] = cpu ? 1 : 0;
        st->c[2] = 1;
    } else if (cJSON_IsArray(c) && cJSON_GetArraySize(c) == 3) {
        for (int i = 0; i < 3; i++) {
            const cJSON *v = cJSON_GetArrayItem(c, i);
            char path[SIM_JPATH_MAX];
            sim_jpath_idx(path, sizeof path, "policy.params.config", i);
            int lo = !cpu && i == 1 ? 0 : 1;
            if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble ||
                v->valueint < lo || v->valueint > 100000)
                return sim_json_expected(path, lo ? "an integer >= 1" : "an integer >= 0 (ms)", v);
            st->c[i] = v->valueint;
        }
    } else {
        return sim_json_expected("policy.params.config", cpu ? "[k, p, t], \"sequential\" or "
                                 "\"tf_default\"" : "[B, T_ms, m], \"sequential\" or "
                                 "\"tf_default\"", c);
    }
    int want = cpu ? st->c[0] : st->c[2];
    if (want > lanes)
        return sim_err_set(SIM_EINVAL, "policy.params.config: %s %d batches at once needs "
                           "cluster.lanes >= %d, got %d", cpu ? "k =" : "m =", want, want,
                           lanes);
    st->timeout_ns = cpu ? 0 : (int64_t)st->c[1] * 1000000;
    return 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    static const char *const DEVICES[] = {"gpu", "cpu", NULL};
    struct rrl *st = state;
    int rc, dev = DEV_GPU;
    if ((rc = sim_json_enum(p, "policy.params", "device", false, DEVICES, &dev)))
        return rc;
    st->dev = dev;
    const struct sim_world *w = sim_world(s);
    int cores = 0;
    if (dev == DEV_CPU) {
        if (sim_model_count(s) != 1)
            return sim_err_set(SIM_EINVAL, "policy.params.device: \"cpu\" serves one model "
                               "(a CPU executor is bound to it), got %d models",
                               sim_model_count(s));
        for (int nd = 0; nd < w->nnodes; nd++)
            if (w->nodes[nd].cores > 0 && (cores == 0 || w->nodes[nd].cores < cores))
                cores = w->nodes[nd].cores;
        if (cores == 0)
            return sim_err_set(SIM_EINVAL, "policy.params.device: \"cpu\" needs nodes with "
                               "cores (cluster.nodes[].cores)");
    } else if (sim_exec_count(s) == 0) {
        return sim_err_set(SIM_EINVAL, "policy.params.device: \"gpu\" needs GPUs (cluster.gpus "
                           "or cluster.nodes[].gpus)");
    }
    if ((rc = parse_config(s, st, p, cores)))
        return rc;
    int n = dev == DEV_CPU ? w->nnodes : sim_exec_count(s);
    st->exec = calloc((size_t)n, sizeof *st->exec);
    st->timer = calloc((size_t)n, sizeof *st->timer);
    if (!st->exec || !st->timer)
        return SIM_ENOMEM;
    if (dev == DEV_GPU) {
        for (int e = 0; e < n; e++)
            st->exec[st->n++] = e;
        return 0;
    }
    for (int nd = 0; nd < w->nnodes; nd++) {
        if (w->nodes[nd].cores == 0)
            continue;
        int e = sim_exec_add_cpu(s, nd, 0, w->nodes[nd].cores * 1000);
        if (e < 0)
            return SIM_EINVAL;
        st->exec[st->n++] = e;
    }
    return 0;
}

static void destroy(void *state)
{
    struct rrl *st = state;
    free(st->exec);
    free(st->timer);
}

/* The node with the shortest queue (requests waiting there), ties lowest id. */
static int route(struct sim *s, void *state, const struct sim_request *r)
{
    (void)r;
    struct rrl *st = state;
    int best = st->exec[0], bq = queued(s, best);
    for (int i = 1; i < st->n; i++) {
        int q = queued(s, st->exec[i]);
        if (q < bq) {
            best = st->exec[i];
            bq = q;
        }
    }
    return best;
}

/* The serving executors' ids are consecutive (the GPUs, or the CPU executors added in
 * order): e's index, or -1 for an executor the node does not use. */
static int index_of(const struct rrl *st, int e)
{
    int i = e - st->exec[0];
    return i >= 0 && i < st->n ? i : -1;
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    struct rrl *st = state;
    int i = index_of(st, r->exec);
    if (i >= 0)
        fill(s, st, i);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct rrl *st = state;
    int i = index_of(st, b->exec);
    if (i >= 0)
        fill(s, st, i);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)arg;
    struct rrl *st = state;
    st->timer[tag] = 0;
    fill(s, st, (int)tag);
}

const struct policy_ops policy_rrl_static = {
    .name = "rrl-static",
    .summary = "RRL's serving node at a fixed configuration: GPU [B, T_ms, m] or CPU [k, p, t]; "
               "\"sequential\", \"tf_default\"",
    .state_size = sizeof(struct rrl),
    .param_keys = params,
    .init = init,
    .route = route,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .on_timer = on_timer,
    .needs_no_gpus = true,
    .shared_devices = true,
    .destroy = destroy,
};
