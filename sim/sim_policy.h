/* sim_policy — the tables through which the engine calls what sits above it: a scheduling
 * policy (struct policy_ops) and an autoscaler (struct sim_autoscaler_ops).
 *
 * Like the Linux scheduler's struct sched_class, each is a table of hooks built with
 * designated initializers; the implementations and their registries live in policies/, and
 * the world config names the ones a run uses. The engine calls them only through these
 * tables, never by name, and passes their parameters (parsed above it) through unread.
 * The engine allocates and zeroes `state_size` bytes of state for each and passes it to
 * every hook. Hooks that may be NULL say so, with their default. */
#ifndef SIM_POLICY_H
#define SIM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"

struct cJSON;
struct sim_param;

/* A policy: its file in policies/ and one line in policies/registry.c. Required: name,
 * summary and on_request; everything else may be left out (0, NULL or false), the default
 * said beside each (a policy with no state and no params needs neither state_size nor init).
 * tests/policy/test_policies.c (registry_is_well_formed) names the policy and the field a
 * registered table lacks. */
struct policy_ops {
    const char *name, *summary;
    /* Bytes of state the engine allocates and zeroes for each run (0: none; the hooks get a
     * pointer that must not be written). */
    size_t state_size;
    /* May be NULL (false). True when, with these params, executors start with no model
     * loaded and the policy loads them (sim_load, sim_preload); otherwise every executor
     * holds every model from the start and whenever it joins. */
    bool (*cold_start)(const struct cJSON *params);
    /* policy.params, declared once (sim/util/sim_param.h, a table ended by a NULL key): the
     * keys accepted (others are config errors), their types, ranges, defaults and docs
     * (docs/policies.md is generated from it). NULL: the policy takes none. init reads them,
     * usually with sim_params_read into its state. */
    const struct sim_param *params;
    /* May be NULL (nothing to set up). Reads params (may be NULL), sets up state. Errors via
     * sim_err_set, with the JSON path (policy.params.x). */
    int (*init)(struct sim *, const struct cJSON *params, void *state);
    /* May be NULL: every request goes to the central scheduler. Called when a request
     * arrives at its frontend (r->frontend); returns the executor to send it to directly
     * (it then waits in that executor's queue of its model), SIM_CENTRAL, or SIM_ROUTE_DROP. */
    int (*route)(struct sim *, void *state, const struct sim_request *);
    /* Required. A request of model m reached its queue: sim_queue(m) when r->exec is
     * SIM_CENTRAL, else executor r->exec's queue of m. */
    void (*on_request)(struct sim *, void *state, int m, struct sim_request *);
    /* May be NULL (nothing to do). A batch finished on its executor. */
    void (*on_batch_done)(struct sim *, void *state, const struct sim_batch *);
    /* May be NULL. Request r ended (r->outcome: on time, late or dropped) at t_end: its
     * response reached the frontend, or now for a drop. Called for every request, before the
     * batch's on_batch_done; only to observe (no dispatch, drop or timer from here). */
    void (*on_request_end)(struct sim *, void *state, const struct sim_request *r,
                           int64_t t_end);
    /* May be NULL if the policy sets no timers. */
    void (*on_timer)(struct sim *, void *state, uint64_t tag, void *arg);
    /* May be NULL. A load started by sim_load finished (ok) or was rejected (!ok). */
    void (*on_load_done)(struct sim *, void *state, int e, int m, bool ok);
    /* May be NULL. An executor added by sim_exec_add is up. */
    void (*on_exec_up)(struct sim *, void *state, int e);
    /* Executor e was removed (now DRAINING or DOWN): route nothing more to it. A DRAINING
     * executor still takes batches of the requests queued at it (sim_dispatch_ex with from
     * = e), so a policy may let it finish its queue; what is queued when it runs out of
     * work is dropped. May be NULL. */
    void (*on_exec_remove)(struct sim *, void *state, int e);
    /* May be NULL. Executor e was added with no GPU free and waits (PENDING); the policy
     * may free a GPU now (sim_gpu_release), which e then takes at once. */
    void (*on_exec_pending)(struct sim *, void *state, int e);
    /* May be NULL. GPU g became wholly free. Called before a pending executor takes it
     * (sim_exec_first_pending): the policy may claim g for its own work; what it leaves free
     * goes to the first pending executor. */
    void (*on_gpu_free)(struct sim *, void *state, int g);
    /* May be NULL. Training job j arrived (QUEUED) / finished (DONE, its GPUs free). */
    void (*on_job_arrive)(struct sim *, void *state, int j);
    void (*on_job_done)(struct sim *, void *state, int j);
    /* Whether the policy serves only applications (DAG pipelines, config `application`). */
    bool applications_only;
    /* Whether the policy serves only LLM models (model entries with `llm`, sim_llm.h). */
    bool llm_only;
    /* May be NULL (then no replica may be a PREFILL one). Request r's prompt is computed on
     * prefill replica e: the decode replica of the same model its KV cache goes to, or -1
     * where there is none (an autoscaler removed them all): the request is dropped. */
    int (*llm_decode_target)(struct sim *, void *state, int e, const struct sim_request *r);
    /* May be NULL (0). Seconds from the start that the policy's control loop needs, with these
     * params, to reach its steady state (Nexus: two epochs). The experiment layer warns when
     * warmup_s is shorter: the measured window would include the start-up transient. */
    double (*converge_s)(const struct cJSON *params);
    /* Whether the policy copes with executors added and removed during a run (autoscaling). */
    bool dynamic_execs;
    /* Whether the policy can run as one part of `pools` (policies/pools.c): it plans only for
     * the models and executors of its view (sim_mine_model, sim_mine_exec; sim_query.h). */
    bool in_pools;
    /* Whether the policy is a composite whose parts serve DNN and LLM models alike (it checks
     * each part's models itself); others serve one kind (llm_only says which). */
    bool mixed_models;
    /* Whether the policy can run with no GPU at all (its work on CPU executors); others need
     * at least one GPU executor. */
    bool needs_no_gpus;
    /* Whether the policy fills several lanes of an executor (sim_exec.lanes, nrunning) and
     * copes with batches slowing each other down (cluster.lanes > 1, cluster.interference);
     * the others plan with one batch at a time at the profile's speed and are refused such a
     * cluster. */
    bool shared_devices;
    /* May be NULL. Called every sampling period after the window's metrics are computed. */
    void (*on_tick)(struct sim *, void *state);
    /* May be NULL. Frees what init allocated (not the state block itself). */
    void (*destroy)(void *state);
};

/* An autoscaler: adds and removes executors during a run (sim_exec_add / sim_exec_remove),
 * with any policy whose dynamic_execs is true. */
struct sim_autoscaler_ops {
    const char *name, *summary;
    size_t state_size;
    /* Required. Every sampling period, after the policy's on_tick (sim_last_window holds the
     * window just closed). `params` is the world's autoscale_params. */
    void (*step)(struct sim *, const void *params, void *state);
};

/* Whether policy p, with these params, starts executors empty (policy_ops.cold_start). */
static inline bool sim_policy_cold_start(const struct policy_ops *p, const struct cJSON *params)
{
    return p->cold_start && p->cold_start(params);
}

#endif
