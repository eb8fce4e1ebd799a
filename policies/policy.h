/* policy — the registries of scheduling policies and autoscalers, and what they share.
 *
 * The tables themselves (struct policy_ops, struct sim_autoscaler_ops) are the engine's
 * (sim_policy.h): the engine calls them and nothing else of this folder. A policy is one
 * file here exporting `const struct policy_ops policy_<name>`; registry.c lists policies and
 * autoscalers, and configs select them by name. A policy acts only through the engine API
 * in sim.h. */
#ifndef POLICY_H
#define POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "sim.h"
#include "sim_policy.h"

const struct policy_ops *policy_find(const char *name);
int policy_count(void);
const struct policy_ops *policy_at(int i);
/* "\"a\", \"b\"" into buf, for messages. */
void policy_names(char *buf, size_t size);
/* Checks policy.params against the policy's table of params (unknown keys are errors, the
 * message listing what it takes and which policies take the key). */
int policy_check_params(const struct policy_ops *p, const cJSON *params);

/* A named set of policy.params (presets.c): how a system's authors configured it. */
struct policy_preset {
    const char *policy, *name;
    bool is_default;       /* its params are the policy's built-in defaults */
    const char *summary, *source;
    const char *params;    /* a JSON object */
};
int policy_preset_count(void);
const struct policy_preset *policy_preset_at(int i);
/* Policy `policy`'s preset `name`, or NULL. */
const struct policy_preset *policy_preset_find(const char *policy, const char *name);
/* Policy `policy`'s default preset (is_default: its built-in defaults), or NULL. */
const struct policy_preset *policy_preset_default(const char *policy);
/* "\"a\", \"b\"": the presets of `policy`, for messages. */
void policy_preset_names(const char *policy, char *buf, size_t size);
/* Adds to the object `params` each of the preset's keys that it does not have. */
int policy_preset_apply(const struct policy_preset *ps, cJSON *params);

/* The parameters of config `autoscale` (autoscale.c), shared by the autoscalers. */
struct policy_autoscale {
    int kind;                          /* 0 none, else the autoscaler (the config's names) */
    int min_gpus;                      /* never fewer executors up or starting */
    double bad_rate_threshold;         /* symphony: add N r/(1-r) when r is above it */
    double keep_idle;                  /* symphony: release N (f - keep_idle) */
    double target_util, tolerance;     /* target_util: desired = ceil(N u / target) outside +-tol */
    double cooldown_s;                 /* no release within this long of the last action */
    /* hpa (Kubernetes' HPA on request rate): every sync_s, R = requests/s offered over the
     * last window_s, desired = ceil(R / target_rps), left as it is while
     * |R / (target_rps x ready) - 1| <= tolerance; up at once by at most max(4, 100 %),
     * down to the largest desired of the last stabilization_s */
    double target_rps, sync_s, window_s, stabilization_s;
};

/* The autoscaler named `name` ("symphony", "target_util", "hpa"), or NULL. */
const struct sim_autoscaler_ops *autoscaler_find(const char *name);

#endif
