/* sim_query — what a policy reads (sim.h has the overview): the clock, models and
 * executors, the queues, delays and residency, the application and arrivals, and the
 * metrics of the last sampling window. */
#ifndef SIM_QUERY_H
#define SIM_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_types.h"

/* ---- read access ---- */

int64_t sim_now(const struct sim *s);
const struct sim_world *sim_world(const struct sim *s);
double sim_load_scale(const struct sim *s);
int sim_model_count(const struct sim *s);
const struct sim_model *sim_model(const struct sim *s, int m);
int sim_exec_count(const struct sim *s);
/* Executor e; while a view is current (sim_view_assign), one of another view reads as down
 * (a copy that the next such call overwrites). */
const struct sim_exec *sim_exec(const struct sim *s, int e);
/* Views: the parts of a composite policy (policies/pools.c), each a policy serving its own
 * models on its own executors over one cluster. While view v is current, sim_exec answers
 * for an executor of another view as a copy of it in state DOWN (a policy that skips down
 * executors never touches it), and sim_mine_model / sim_mine_exec say whether a model or an
 * executor is v's: a policy that runs as a part (policy_ops.in_pools) plans only for those.
 * A timer fires in the view that was current when it was set. No view current (-1, the
 * default): everything is every policy's. */
bool sim_mine_model(const struct sim *s, int m);
bool sim_mine_exec(const struct sim *s, int e);
int sim_view_current(const struct sim *s);
/* The first executor at index >= from that is UP with a free lane (nrunning + pending <
 * lanes), or -1: what a policy that fills free executors in index order visits, without a
 * pass over the busy ones (a two-level bitmap the engine keeps as executors change). */
int sim_exec_next_free(const struct sim *s, int from);
/* The running index, kept only once a policy asks (its init calls sim_exec_index_running;
 * SIM_ENOMEM): the first executor at index >= from that is UP and whose `running` batch
 * (sim_exec) holds at most b requests, b rounded up to a power of two (the index keeps the
 * nested classes "at most 1, 2, 4, ... requests", the last any size, so one search answers;
 * the caller tests the exact size), or -1. A policy that looks for the batches a new one
 * could preempt (those small enough) visits those alone instead of every executor. */
int sim_exec_index_running(struct sim *s);
int sim_exec_next_running_le(const struct sim *s, int b, int from);
/* The same among the executors running model m: a pass that needs the small batches of a
 * few models visits those alone. */
int sim_exec_next_running_of(const struct sim *s, int m, int b, int from);
/* With the running index: the model and size of executor e's batch as the index holds it
 * (model -1: none there, or not UP), read from a dense table, so a pass that tests many
 * executors' batches reads neither their records nor their batches. */
struct sim_run_brief {
    int model, size;
};
struct sim_run_brief sim_exec_running_brief(const struct sim *s, int e);
/* Profile latency of model m at batch size b on an executor of `kind` (b may exceed
 * max_batch by one, for look-ahead; larger b is computed from the profile). */
int64_t sim_latency_ns(const struct sim *s, int m, int kind, int b);
/* The coefficient of variation of a batch of b's duration (its profile's `service`), 0 where
 * durations do not vary: for policies whose profiles hold a spread (Nexus: mean + sd). */
double sim_service_cv(const struct sim *s, int m, int kind, int b);
/* The same as a table for hot loops: t[b] = sim_latency_ns(s, m, kind, b) for b in
 * 1..max_batch + 1, valid for the whole run. */
const int64_t *sim_latency_table(const struct sim *s, int m, int kind);
/* Nominal network delays (policies plan with these; jitter, if configured, comes on top). */
int64_t sim_dispatch_delay_ns(const struct sim *s, int batch_size);
/* The policy examined n candidates (strategies, GPUs, queues) in the decision it is making:
 * with a controller configured (world.ctrl) each costs us_per_candidate of its time; free
 * otherwise. */
void sim_ctrl_examine(struct sim *s, int n);
/* Whether a controller is configured (world.ctrl): false where sim_ctrl_examine and the
 * controller's other charges do nothing, so a policy may skip examinations that decide
 * nothing without changing the run. */
bool sim_ctrl_on(const struct sim *s);
/* An allocation for `what` failed: the run stops after the current event and sim_run returns
 * SIM_ENOMEM ("out of memory <what>"; the first failure's message is kept). Returns
 * SIM_ENOMEM, for the caller to return; it must leave its state consistent enough to be
 * destroyed (the engine frees what it holds, the policy's destroy what it holds). */
int sim_fail_nomem(struct sim *s, const char *what);
/* Whether memory ran out during this run (sim_fail_nomem): an engine call that failed since is
 * that, not the policy's mistake, and the policy returns rather than aborting. */
bool sim_out_of_memory(const struct sim *s);
/* From a request of model m leaving its executor to its response: the network's response
 * delay and the model's serving stack (models[].stack_ms). Nominal; jitter comes on top. */
int64_t sim_resp_delay_ns(const struct sim *s, int m);
int64_t sim_duration_ns(const struct sim *s);
/* The most times periodic work may fire over a run (duration + drain): light work (a beacon, a
 * controller's step, a token turn: microseconds each) at most SIM_MAX_FIRINGS times, a re-plan
 * (a DP, an MILP, a scheduling pass: about a millisecond each) at most SIM_MAX_PLANS times;
 * more, and the run would practically never end. */
#define SIM_MAX_FIRINGS 1e8
#define SIM_MAX_PLANS 1e5
/* For a policy's periodic work, checked in its init: 0 when a timer every period_s fires at
 * most max_firings times over the run, else SIM_EINVAL with a message naming `path` (the
 * parameter's JSON path, "policy.params.beacon_s"), the period and the shortest allowed. */
int sim_check_period(const struct sim *s, const char *path, double period_s, double max_firings);

/* The scheduler's queue of model m: requests ordered by deadline (ties by arrival). */
int sim_queue_len(const struct sim *s, int m);
struct sim_request *sim_queue_at(const struct sim *s, int m, int i);
/* sim_queue_at(s, m, i)->t_arrival, read from the queue itself: a scan of a long queue by
 * it does not visit each request. */
int64_t sim_queue_arrival_at(const struct sim *s, int m, int i);
/* The queue of model m at executor e (requests routed there by policy_ops.route). */
int sim_xqueue_len(const struct sim *s, int e, int m);
/* The least model >= m with requests queued at executor e (SIM_CENTRAL: the scheduler's
 * queues), or -1: a scan over the models that have some, not over all. */
int sim_xqueue_next(const struct sim *s, int e, int m);
struct sim_request *sim_xqueue_at(const struct sim *s, int e, int m, int i);
/* sim_xqueue_at(s, e, m, i)->t_sched (e may be SIM_CENTRAL), read from the queue itself:
 * comparing the heads of many queues does not visit their requests. */
int64_t sim_xqueue_sched_at(const struct sim *s, int e, int m, int i);
/* The model whose head at e (SIM_CENTRAL or an executor) reached the scheduler first: the
 * least sim_xqueue_sched_at(s, e, m, 0), the lower model on a tie; -1 if nothing is queued
 * there. Read, not searched for: the engine keeps the heads in order once the policy has
 * called sim_track_heads (at init). */
int sim_xqueue_oldest(const struct sim *s, int e);
/* Frontends and how arrivals are split over them (config `frontends`, `frontend_split`). */
int sim_frontend_count(const struct sim *s);

/* Residency of model m on executor e, its weights in pages, and its nominal load time. */
enum sim_residency sim_resident(const struct sim *s, int e, int m);
int sim_model_pages(const struct sim *s, int m);
int64_t sim_load_ns(const struct sim *s, int m);

/* ---- applications (DAG pipelines; docs/config.md `application`) ---- */

/* The application's structure (models, paths, SLAs, path weights), or NULL without one. The
 * path of a request in flight is never shown: a policy sees a request reach a model's queue
 * (on_request, r->stage > 0 after the first) only once the previous stage has completed. */
const struct sim_app *sim_app(const struct sim *s);
/* Requests of path p that have left the system so far (on time, late or dropped): what a
 * monitor at the application's exit observes. */
uint64_t sim_app_exits(const struct sim *s, int p);
/* Requests that have arrived so far (at the application, or at any model without one). */
uint64_t sim_arrived(const struct sim *s);

/* ---- metrics for control decisions and time series ---- */

struct sim_window {
    int64_t t0, t1;
    uint64_t offered, completed, bad;   /* in the window, all models */
    double bad_rate;                    /* bad / (completed + dropped) in the window */
    double idle_frac;                   /* 1 - busy time / (executors up * window) */
    int execs_up;
};
/* The metrics of the last completed sampling window (valid inside on_tick). */
const struct sim_window *sim_last_window(const struct sim *s);
/* Appends a point to the time series (t = now). `series` must be a string literal or
 * otherwise outlive the run; key is a model index or -1. */
void sim_ts_add(struct sim *s, const char *series, int key, double value);

#endif
