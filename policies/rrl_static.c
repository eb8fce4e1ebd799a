/* rrl-static — RRL's serving node (rrl_node.h; Qin et al., "Swift Machine Learning Model
 * Serving Scheduling: A Region Based Reinforcement Learning Approach", SC 2019;
 * specs/rrl.md) at one fixed configuration: the paper's "sequential" and "framework default"
 * baselines, and any grid point (the oracle's table is a sweep over them).
 *
 * `config` is a triple — GPU [B, T_ms, m], CPU [k, p, t] — or "sequential" (CPU 1,1,1; GPU B
 * 1, T 0, m 1) or "tf_default" (CPU k = lanes, p = t = the node's cores; GPU B 1, T 0,
 * m = lanes), the default. The executors' lanes (cluster.lanes) bound m and k; how co-running
 * batches slow each other down is the cluster's interference model (docs/config.md).
 * It runs rrl_ctl's slot loop with an agent that never changes the configuration, so its
 * per-slot cost (rrl.cost) is measured as the learners' is — what the oracle table is built
 * from; max_wait_slots defaults to 0 here (requests are never dropped). */
#include <stdlib.h>
#include <string.h>

#include "rrl_ctl.h"
#include "sim_err.h"
#include "sim_json.h"

static const struct sim_param params[] = {
    RRL_CTL_INCLUDE,
    {"config", SIM_P_HAND, .type_doc = "`[k, p, t]` (CPU) or `[B, T_ms, m]` (GPU), "
     "`\"sequential\"` or `\"tf_default\"`", .def_doc = "`\"tf_default\"`",
     .doc = "the one configuration: `sequential` is GPU B 1, T 0, m 1 (CPU 1, 1, 1); "
            "`tf_default` GPU B 1, T 0, m = `cluster.lanes` (CPU k = `cluster.lanes`, p = t "
            "= the node's cores)"},
    {NULL}};

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

static int stay(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o)
{
    (void)s;
    (void)o;
    return ctl->cfg;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct rrl_ctl *ctl = state;
    int rc, c[3];
    if ((rc = rrl_ctl_init(s, ctl, p, false, 0)) || (rc = parse_config(&ctl->node, p, c)))
        return rc;
    for (int j = 0; j < 3; j++) {     /* a grid of one configuration */
        ctl->grid.nv[j] = 1;
        ctl->grid.val[j][0] = c[j];
    }
    ctl->grid.ncfg = 1;
    return rrl_ctl_start(s, ctl, p, 0, stay);
}

static void destroy(void *state)
{
    rrl_ctl_free(state);
}

const struct policy_ops policy_rrl_static = {
    .name = "rrl-static",
    .summary = "RRL's serving node at a fixed configuration: GPU [B, T_ms, m] or CPU [k, p, t]; "
               "\"sequential\", \"tf_default\"",
    .state_size = sizeof(struct rrl_ctl),
    .params = params,
    .init = init,
    RRL_CTL_HOOKS,
    .destroy = destroy,
};
