/* registry — the tables of policies and autoscalers. Add one by declaring its ops here and
 * listing it. */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

extern const struct policy_ops policy_symphony;
extern const struct policy_ops policy_fifo;
extern const struct policy_ops policy_shepherd;
extern const struct policy_ops policy_nexus;
extern const struct policy_ops policy_clockwork;
extern const struct policy_ops policy_fa2;
extern const struct policy_ops policy_fa2_optimal;
extern const struct policy_ops policy_grandslam;
extern const struct policy_ops policy_inferline;
extern const struct policy_ops policy_ds2;
extern const struct policy_ops policy_roma;
extern const struct policy_ops policy_dynamoml;
extern const struct policy_ops policy_rrl_static;
extern const struct policy_ops policy_rrl;
extern const struct policy_ops policy_rrl_oracle;
extern const struct policy_ops policy_rrl_capes;
extern const struct policy_ops policy_rrl_deeprm;
extern const struct policy_ops policy_rr_ct;
extern const struct policy_ops policy_rr_rules;
extern const struct policy_ops policy_rr_max;
extern const struct policy_ops policy_rr_min;
extern const struct sim_autoscaler_ops autoscaler_symphony;
extern const struct sim_autoscaler_ops autoscaler_target_util;
extern const struct sim_autoscaler_ops autoscaler_hpa;

static const struct policy_ops *const registry[] = {
    &policy_symphony,
    &policy_nexus,
    &policy_clockwork,
    &policy_shepherd,
    &policy_fifo,
    &policy_fa2,
    &policy_fa2_optimal,
    &policy_grandslam,
    &policy_inferline,
    &policy_ds2,
    &policy_roma,
    &policy_rr_ct,
    &policy_rr_rules,
    &policy_rr_max,
    &policy_rr_min,
    &policy_rrl_static,
    &policy_rrl,
    &policy_rrl_oracle,
    &policy_rrl_deeprm,
    &policy_rrl_capes,
    &policy_dynamoml,
};

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
    for (const char *const *k = p->param_keys; k && *k; k++)
        if (strcmp(*k, key) == 0)
            return true;
    return false;
}

/* A key the policy does not take: what it takes, and whose key it is, so that a user who
 * switched policies (--set policy.name=P on a config written for another) knows what to do. */
int policy_check_params(const struct policy_ops *p, const cJSON *params)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, params) {
        if (!it->string || knows(p, it->string))
            continue;
        char takes[512] = "", owners[256] = "";
        for (const char *const *k = p->param_keys; k && *k; k++) {
            size_t l = strlen(takes);
            snprintf(takes + l, sizeof takes - l, "%s%s", l ? ", " : "", *k);
        }
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
