/* policy — the interface between the engine and a scheduling/autoscaling policy.
 *
 * A policy is a table of hooks (like the Linux scheduler's struct sched_class) built with
 * designated initializers and listed in registry.c; configs select it by name. The engine
 * allocates and zeroes `state_size` bytes of state and passes it to every hook. A policy acts
 * only through the engine API in sim.h. Hooks that may be NULL say so, with their default. */
#ifndef POLICY_H
#define POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "sim.h"

struct policy_ops {
    const char *name, *summary;
    size_t state_size;
    /* May be NULL (false). True when, with these params, executors start with no model
     * loaded and the policy loads them (sim_load, sim_preload); otherwise every executor
     * holds every model from the start and whenever it joins. */
    bool (*cold_start)(const cJSON *params);
    /* Keys accepted in policy.params (NULL-terminated); others are config errors. */
    const char *const *param_keys;
    /* Required. Reads params (may be NULL), sets up state. Errors via sim_err_set, with the
     * JSON path (policy.params.x). */
    int (*init)(struct sim *, const cJSON *params, void *state);
    /* May be NULL: every request goes to the central scheduler. Called when a request
     * arrives at its frontend (r->frontend); returns the executor to send it to directly
     * (it then waits in that executor's queue of its model), SIM_CENTRAL, or SIM_ROUTE_DROP. */
    int (*route)(struct sim *, void *state, const struct sim_request *);
    /* Required. A request of model m reached its queue: sim_queue(m) when r->exec is
     * SIM_CENTRAL, else executor r->exec's queue of m. */
    void (*on_request)(struct sim *, void *state, int m, struct sim_request *);
    /* May be NULL (nothing to do). A batch finished on its executor. */
    void (*on_batch_done)(struct sim *, void *state, const struct sim_batch *);
    /* May be NULL if the policy sets no timers. */
    void (*on_timer)(struct sim *, void *state, uint64_t tag, void *arg);
    /* May be NULL. A load started by sim_load finished (ok) or was rejected (!ok). */
    void (*on_load_done)(struct sim *, void *state, int e, int m, bool ok);
    /* May be NULL. An executor added by sim_exec_add is up. */
    void (*on_exec_up)(struct sim *, void *state, int e);
    /* Executor e was removed (now DRAINING or DOWN): send it nothing more. May be NULL. */
    void (*on_exec_remove)(struct sim *, void *state, int e);
    /* Whether the policy serves only applications (DAG pipelines, config `application`). */
    bool applications_only;
    /* Whether the policy copes with executors added and removed during a run (autoscaling). */
    bool dynamic_execs;
    /* May be NULL. Called every sampling period after the window's metrics are computed. */
    void (*on_tick)(struct sim *, void *state);
    /* May be NULL. Frees what init allocated (not the state block itself). */
    void (*destroy)(void *state);
};

const struct policy_ops *policy_find(const char *name);
int policy_count(void);
const struct policy_ops *policy_at(int i);
/* "\"a\", \"b\"" into buf, for messages. */
void policy_names(char *buf, size_t size);
/* Checks policy.params against the policy's param_keys (unknown keys are errors). */
int policy_check_params(const struct policy_ops *p, const cJSON *params);
bool policy_cold_start(const struct policy_ops *p, const cJSON *params);

#endif
