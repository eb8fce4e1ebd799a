/* rrl-static — RRL's serving node (rrl_node.h; Qin et al., "Swift Machine Learning Model
 * Serving Scheduling: A Region Based Reinforcement Learning Approach", SC 2019;
 * specs/rrl.md) at one fixed configuration: the paper's "sequential" and "framework default"
 * baselines, and any grid point (the oracle's table is a sweep over them).
 *
 * `config` is a triple — GPU [B, T_ms, m], CPU [k, p, t] — or "sequential" (CPU 1,1,1; GPU B
 * 1, T 0, m 1) or "tf_default" (CPU k = lanes, p = t = the node's cores; GPU B 1, T 0,
 * m = lanes), the default. The executors' lanes (cluster.lanes) bound m and k; how co-running
 * batches slow each other down is the cluster's interference model (docs/config.md). */
#include <stdlib.h>
#include <string.h>

#include "rrl_node.h"
#include "sim_err.h"
#include "sim_json.h"

static const char *const params[] = {"device", "config", NULL};

static int parse_config(struct rrl_node *nd, const cJSON *p, int c[3])
{
    const cJSON *v = p ? cJSON_GetObjectItemCaseSensitive(p, "config") : NULL;
    bool cpu = nd->dev == RRL_CPU;
    if (!v || (cJSON_IsString(v) && strcmp(v->valuestring, "tf_default") == 0)) {
        c[0] = cpu ? nd->lanes : 1;
        c[1] = cpu ? nd->cores : 0;
        c[2] = cpu ? nd->cores : nd->lanes;
    } else if (cJSON_IsString(v) && strcmp(v->valuestring, "sequential") == 0) {
        c[0] = 1;
        c[1] = cpu ? 1 : 0;
        c[2] = 1;
    } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3) {
        for (int i = 0; i < 3; i++) {
            const cJSON *x = cJSON_GetArrayItem(v, i);
            char path[SIM_JPATH_MAX];
            sim_jpath_idx(path, sizeof path, "policy.params.config", i);
            int lo = !cpu && i == 1 ? 0 : 1;
            if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int)x->valuedouble ||
                x->valueint < lo || x->valueint > 100000)
                return sim_json_expected(path, lo ? "an integer >= 1" : "an integer >= 0 (ms)", x);
            c[i] = x->valueint;
        }
    } else {
        return sim_json_expected("policy.params.config", cpu ? "[k, p, t], \"sequential\" or "
                                 "\"tf_default\"" : "[B, T_ms, m], \"sequential\" or "
                                 "\"tf_default\"", v);
    }
    int want = cpu ? c[0] : c[2];
    if (want > nd->lanes)
        return sim_err_set(SIM_EINVAL, "policy.params.config: %s %d batches at once needs "
                           "cluster.lanes >= %d, got %d", cpu ? "k =" : "m =", want, want,
                           nd->lanes);
    return 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct rrl_node *nd = state;
    int rc, c[3];
    if ((rc = rrl_node_init(s, nd, p)) || (rc = parse_config(nd, p, c)))
        return rc;
    rrl_node_apply(s, nd, c);
    return 0;
}

static void destroy(void *state)
{
    rrl_node_free(state);
}

static int route(struct sim *s, void *state, const struct sim_request *r)
{
    return rrl_node_route(s, state, r);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    rrl_node_on_request(s, state, r);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    rrl_node_on_batch_done(s, state, b);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)arg;
    rrl_node_on_timer(s, state, tag);
}

const struct policy_ops policy_rrl_static = {
    .name = "rrl-static",
    .summary = "RRL's serving node at a fixed configuration: GPU [B, T_ms, m] or CPU [k, p, t]; "
               "\"sequential\", \"tf_default\"",
    .state_size = sizeof(struct rrl_node),
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
