/* registry — the tables of policies and autoscalers. A policy is added by one line in
 * POLICIES below (docs/policies.md, "Adding a policy"). */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

/* The policies, one line each (its ops' symbol), in the order `servesim policies` lists
 * them; a new policy's file defines `const struct policy_ops policy_NAME` and adds its line. */
#define POLICIES(X)                                                                         \
    X(policy_symphony)                                                                      \
    X(policy_nexus)                                                                         \
    X(policy_clockwork)                                                                     \
    X(policy_shepherd)                                                                      \
    X(policy_fifo)                                                                          \
    X(policy_fa2)                                                                           \
    X(policy_fa2_optimal)                                                                   \
    X(policy_grandslam)                                                                     \
    X(policy_inferline)                                                                     \
    X(policy_ds2)                                                                           \
    X(policy_roma)                                                                          \
    X(policy_rr_ct)                                                                         \
    X(policy_rr_rules)                                                                      \
    X(policy_rr_max)                                                                        \
    X(policy_rr_min)                                                                        \
    X(policy_rrl_static)                                                                    \
    X(policy_rrl)                                                                           \
    X(policy_rrl_oracle)                                                                    \
    X(policy_rrl_deeprm)                                                                    \
    X(policy_rrl_capes)                                                                     \
    X(policy_dynamoml)                                                                      \
    X(policy_vllm)                                                                          \
    X(policy_distserve)                                                                     \
    X(policy_pools)

#define POLICY_DECLARE(ops) extern const struct policy_ops ops;
#define POLICY_ENTRY(ops) &ops,
POLICIES(POLICY_DECLARE)
extern const struct sim_autoscaler_ops autoscaler_symphony;
extern const struct sim_autoscaler_ops autoscaler_target_util;
extern const struct sim_autoscaler_ops autoscaler_hpa;

static const struct policy_ops *const registry[] = {POLICIES(POLICY_ENTRY)};

int policy_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const struct policy_ops *policy_at(int i)
{
    return (i >= 0 && i < policy_count()) ? registry[i] : NULL;
}

const struct policy_ops *policy_find(const char *name)
{
    for (int i = 0; i < policy_count(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

void policy_names(char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < policy_count(); i++) {
        size_t l = strlen(buf);
        snprintf(buf + l, size - l, "%s\"%s\"", i ? ", " : "", registry[i]->name);
    }
}

static bool knows(const struct policy_ops *p, const char *key)
{
    return sim_params_find(p->params, key) != NULL;
}

/* A key the policy does not take: what it takes, and whose key it is, so that a user who
 * switched policies (--set policy.name=P on a config written for another) knows what to do. */
int policy_check_params(const struct policy_ops *p, const cJSON *params)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, params) {
        if (!it->string || knows(p, it->string))
            continue;
        char takes[512], owners[256] = "";
        sim_params_key_list(p->params, takes, sizeof takes);
        for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
            if (registry[i] != p && knows(registry[i], it->string)) {
                size_t l = strlen(owners);
                snprintf(owners + l, sizeof owners - l, "%s%s", l ? ", " : "", registry[i]->name);
            }
        char hint[400] = "";
        if (owners[0])
            snprintf(hint, sizeof hint, "; it is a parameter of %s: when switching to %s, drop "
                     "the other policy's params with --set 'policy.params={}'", owners, p->name);
        return sim_err_set(SIM_EINVAL, "policy.params.%s: not a parameter of policy %s (%s%s)%s",
                           it->string, p->name, takes[0] ? "its parameters: " : "it takes none",
                           takes, hint);
    }
    return 0;
}

static const struct sim_autoscaler_ops *const autoscalers[] = {
    &autoscaler_symphony,
    &autoscaler_target_util,
    &autoscaler_hpa,
};

const struct sim_autoscaler_ops *autoscaler_find(const char *name)
{
    for (size_t i = 0; i < sizeof autoscalers / sizeof autoscalers[0]; i++)
        if (strcmp(autoscalers[i]->name, name) == 0)
            return autoscalers[i];
    return NULL;
}
