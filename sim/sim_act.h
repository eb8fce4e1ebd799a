/* sim_act — what a policy does (sim.h has the overview): drops, dispatches, loads and
 * evictions, executors added and removed, its timers and random streams, time-series
 * points. */
#ifndef SIM_ACT_H
#define SIM_ACT_H

#include <stdbool.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "sim_types.h"

/* ---- actions (policies) ---- */

/* Drops the head of model m's queue (outcome: dropped). */
void sim_queue_drop_head(struct sim *s, int m);
/* The same for model m's queue at executor e. */
void sim_xqueue_drop_head(struct sim *s, int e, int m);
/* From now on the engine keeps every place's queue heads in order of t_sched, for
 * sim_xqueue_oldest: a policy that takes the oldest head calls it from its init, before any
 * request is queued (SIM_ENOMEM). Each change of a queue's head then costs O(log models)
 * instead of a search over the models at each decision. */
int sim_track_heads(struct sim *s);

/* A batch: the first n requests of model m's queue at `from` (SIM_CENTRAL, or the executor's
 * own queue) for executor `exec`. From the central queue the executor receives it after the
 * control delay plus n data delays; from its own queue at once. It starts no earlier than
 * start_at, once a lane is free (cluster.lanes; one lane: after the executor's earlier
 * batches, which wait in dispatch order), and runs for the profile latency (times the
 * cluster's execution jitter), stretched while other batches share the device
 * (cluster.interference: re-timed whenever one starts or finishes there). With latest > 0 it is an action with a window: the executor
 * rejects it (requests dropped, status REJECTED_LATE) if it cannot start by `latest`. A batch
 * of a model that is not resident at its start, or was evicted or reloaded since dispatch,
 * is rejected (REJECTED_UNLOADED). expected_ns > 0 is the policy's predicted duration; the
 * gap to the actual duration is a per-model metric. The policy's on_batch_done sees every
 * batch once, rejected ones included (at the time of rejection). */
/* Requests alive at once (arrived, not ended) beyond which a run stops with an error: only a
 * load far above capacity gets there, and memory would grow without bound. */
#define SIM_MAX_LIVE_REQUESTS 10000000

struct sim_dispatch_args {
    int exec, model, n, from;
    int p, t;                    /* threads (inter-op, intra-op) for the speed model; 0 = 1 */
    int k;                       /* batches in service the dispatcher allows on the executor,
                                  * the configuration's third coordinate for the speed model's
                                  * roughness (cluster.interference_params); 0 = its lanes */
    int64_t start_at, latest, expected_ns;
    uint64_t tag;
    bool no_input;               /* from the central queue: the executor makes the inputs
                                  * itself (emulated serving without input transfer), so the
                                  * batch waits the control delay only, not ctrl + n * data */
};
/* The batch made, or NULL when memory ran out: its requests are then dropped (so the queue
 * shrinks as the policy expects) and the run stops (sim_fail_nomem). */
const struct sim_batch *sim_dispatch_ex(struct sim *s, const struct sim_dispatch_args *a);
/* The common case: from the central queue, no window, no prediction. */
const struct sim_batch *sim_dispatch(struct sim *s, int e, int m, int n, int64_t start_at);
/* Cancels the batch running (or about to start) on executor e: its requests go back to the
 * queue they came from, in deadline order, the time it ran is counted busy and wasted, and
 * the executor is free now. on_batch_done is not called for it. Returns the requests
 * returned (0 if nothing was running). */
int sim_preempt(struct sim *s, int e);

/* Loads model m on executor e through its load engine (one transfer at a time, concurrent
 * with execution): the transfer starts at max(load engine free, now + control delay) and
 * takes sim_load_ns(m) (times the execution jitter). Pages are reserved now. With latest > 0
 * the executor rejects a load that cannot start by then. Completion (or rejection) calls the
 * policy's on_load_done. Returns 0, or -1 when e lacks free pages or m is not NONE on e. */
int sim_load(struct sim *s, int e, int m, int64_t latest);
/* Evicts loaded model m from e at once (frees its pages, bumps its version). */
void sim_evict(struct sim *s, int e, int m);
/* Makes m resident on e at once; only before the first event (policy init, preloading). */
int sim_preload(struct sim *s, int e, int m);

/* CPU executors (ROMA): one on `node` serving only `model`, up at once, with `milli_cores`
 * thousandths of the node's cores. A batch of b requests there needs the work of the model's
 * profile for the node's cpu_kind at b (the latency on one core) and progresses at
 * milli_cores / 1000 of it per ns (linear scaling). Returns the executor, or -1 (with
 * sim_err set) when the node lacks the cores or the model a profile for its CPU kind. CPU
 * executors are not counted or billed as GPUs: their cost is core-seconds. */
int sim_exec_add_cpu(struct sim *s, int node, int model, int milli_cores);
/* Sets a CPU executor's allocation; a batch running there keeps the work it has done and
 * finishes at the new speed (re-timed in integer ns, never earlier than its work allows).
 * Returns 0, or -1 (sim_err set) above the node's free cores or below one thousandth. */
int sim_exec_set_cores(struct sim *s, int e, int milli_cores);
/* Executor e's busy time so far: time with at least one batch on the device (a host phase
 * does not count); and the core-seconds its running batches' threads kept busy (CPU
 * executors on a shared model: min(cores, D) integrated, D their thread demand; else 0). */
int64_t sim_exec_busy_ns(const struct sim *s, int e);
double sim_exec_busy_core_s(const struct sim *s, int e);
/* Thousandths of node n's cores allocated to its CPU executors. */
int sim_node_milli_used(const struct sim *s, int n);

/* Executors join after cluster.provision_s (policy on_exec_up), while fewer than
 * cluster.max_gpus are up, starting or pending; returns the new id or -1 at the limit. Each
 * holds a whole GPU of the ledger (below): the first free one in node order; with none free
 * it is PENDING (policy on_exec_pending, which may free one at once) until a GPU frees, and
 * starts then. Ids are never reused. Removing one drains it: it takes no new batches
 * from the central queues (requests routed to it after are dropped), but still batches of
 * the requests queued at it (from = e) if the policy dispatches them; once it runs nothing
 * and has nothing waiting to start, it drops what is still queued at it, goes DOWN and frees
 * its GPU. Removing a pending or starting one cancels it. */
int sim_exec_add(struct sim *s);
/* The same with the policy's own start-up delay (a cold start), >= 0. */
int sim_exec_add_after(struct sim *s, int64_t delay_ns);
/* The same on GPU g (whole and free, else -1 with sim_err set), or with g -1 as above. */
int sim_exec_add_on(struct sim *s, int g, int64_t delay_ns);
/* The first pending executor (the next to take a freed GPU; its added_at is when it was
 * requested), or -1 when none waits. */
int sim_exec_first_pending(const struct sim *s);
/* Executors up, starting or pending (not draining or down). */
int sim_exec_active(const struct sim *s);
void sim_exec_remove(struct sim *s, int e);

/* A timer calling the policy's on_timer(tag, arg) at `at` (a time before now means now).
 * Returns a handle > 0. Timers and events fire in one order: by time, then by when they were
 * set. Cancel removes it (O(log timers)); cancelling a fired or cancelled handle is a no-op.
 * Rearm is cancel + set in one step (the same order, less work): it moves the armed timer
 * `handle` to `at` with tag and arg, or sets a new one if it has fired or was cancelled
 * (handle 0 included), and returns the handle to keep. */
uint64_t sim_timer_set(struct sim *s, int64_t at, uint64_t tag, void *arg);
/* Views (sim_query.h): models[0..nm) and executors execs[0..ne) become view v's (v >= 0;
 * a model or executor is in at most one view). 0, SIM_EINVAL (with the message) for an index
 * out of range or already in another view, SIM_ENOMEM. */
int sim_view_assign(struct sim *s, int v, const int *models, int nm, const int *execs, int ne);
/* View v current (-1: none) from now on, until the next call: a composite policy sets its
 * part's before calling into it, and -1 after. */
void sim_view_set(struct sim *s, int v);
uint64_t sim_timer_rearm(struct sim *s, uint64_t handle, int64_t at, uint64_t tag, void *arg);
void sim_timer_cancel(struct sim *s, uint64_t handle);
/* The policy's own random stream ("policy.<name>"). */
gsl_rng *sim_policy_rng(struct sim *s);
/* A further named stream of the policy ("policy.<name>.<sub>"), seeded from the run's seed
 * and the name only: a policy keeps independent draws apart (exploration, a model's
 * initialisation), and adding a stream or drawing more from one never shifts another. The
 * same sub-name returns the same stream; the engine frees them. At most SIM_POLICY_STREAMS
 * names; NULL (with sim_err) past that or out of memory. */
#define SIM_POLICY_STREAMS 16
gsl_rng *sim_policy_rng_named(struct sim *s, const char *sub);

#endif
