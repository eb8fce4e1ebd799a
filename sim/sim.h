/* sim — the discrete-event engine and the API that policies act through.
 *
 * Time is int64_t nanoseconds; events fire in (time, insertion) order; a run is a pure
 * function of (config, seed, load scale). The engine owns the world: models (with latency
 * tables per executor kind), executors (GPUs), per-model scheduler queues ordered by
 * deadline, requests and batches (from pools: the hot path does not malloc once warm), and
 * the metrics. A policy (policies/) decides *when* and *where* batches run; it reads the
 * queues and the clock and calls sim_dispatch / sim_queue_drop_head / sim_timer_*.
 *
 * Life of a request: it arrives at a frontend (lazily generated: one pending arrival per
 * model stream), its id and deadline reach the scheduler after the control delay and it
 * joins its model's queue (policy on_request). The policy dispatches a batch to an
 * executor: the executor receives it after the control delay plus the per-request data delay,
 * starts it no earlier than the policy's start time and never while another batch runs, and
 * finishes after the profile latency; responses take the response delay. A request ends
 * exactly once: on time (response by its deadline), late, or dropped.
 *
 * Invariants the engine checks on every run (violations abort with values, see SIM_BUG):
 * time never goes backwards; no executor runs two batches at once; no batch is empty, exceeds
 * its model's max batch, or exceeds the executor's memory; every request ends exactly once
 * (arrived = ended + in flight). */
#ifndef SIM_H
#define SIM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "sim_config.h"
#include "sim_hist.h"

#define SIM_NS_PER_MS 1000000LL
#define SIM_NS_PER_S 1000000000LL

static inline int64_t sim_ms_to_ns(double ms) { return (int64_t)llround(ms * 1e6); }
static inline double sim_ns_to_ms(int64_t ns) { return (double)ns / 1e6; }

enum sim_outcome { SIM_REQ_PENDING = 0, SIM_REQ_ON_TIME, SIM_REQ_LATE, SIM_REQ_DROPPED };

struct sim_request {
    uint64_t id;
    int model;
    int frontend;
    int64_t t_arrival;           /* at the frontend */
    int64_t t_sched;             /* reached the scheduler's queue */
    int64_t deadline;            /* t_arrival + SLO */
    int64_t t_start, t_finish;   /* of its batch on the executor */
    uint8_t outcome;             /* enum sim_outcome */
    bool counted;                /* arrived after warm-up: enters the statistics */
    struct sim_request *next;    /* intrusive link: pool free list, batch membership */
};

struct sim_batch {
    int model, exec, size;
    int64_t t_dispatch, t_ready, start_at, t_start, t_finish;
    struct sim_request *reqs;    /* linked through ->next, queue order */
    struct sim_batch *next;      /* executor's pending FIFO, pool free list */
};

struct sim_model {
    int id;
    const struct sim_model_cfg *cfg;  /* name, slo, memory, profiles */
    int64_t slo_ns;
    int max_batch;
    double rate_rps;             /* configured mean rate at load scale 1 */
};

enum sim_exec_state { SIM_EXEC_STARTING, SIM_EXEC_UP, SIM_EXEC_DRAINING, SIM_EXEC_DOWN };

struct sim_exec {
    int id;
    int kind;                    /* index into the engine's kinds */
    enum sim_exec_state state;
    double memory_mb;            /* 0 = unlimited */
    double resident_mb;          /* weights + static of loaded models */
    const struct sim_batch *running;
    int pending;                 /* batches dispatched and waiting on this executor */
    int64_t last_finish;         /* finish of the last batch (for the overlap check) */
    /* statistics */
    int64_t busy_ns, up_since;
    uint64_t batches, requests, load_events;
    int models_loaded;
};

struct sim;
struct policy_ops;

/* ---- building and running ---- */

/* An engine for `cfg` with every arrival rate multiplied by `load_scale`. */
int sim_create(const struct sim_config *cfg, double load_scale, struct sim **out /* OUT */);
/* The same with an explicit policy table (tests, out-of-tree policies). */
int sim_create_with_policy(const struct sim_config *cfg, double load_scale,
                           const struct policy_ops *pol, struct sim **out /* OUT */);
void sim_destroy(struct sim *s);
/* Runs to the end (duration, then drain). Returns 0 or a negative code. */
int sim_run(struct sim *s);

/* Observer hooks, called by the engine (tests, tracing). Any may be NULL. */
struct sim_observer {
    void *ctx;
    void (*batch_start)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*batch_done)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*request_arrive)(void *ctx, const struct sim *, const struct sim_request *);
    void (*request_end)(void *ctx, const struct sim *, const struct sim_request *);
    void (*event)(void *ctx, const struct sim *, int64_t time);
};
void sim_set_observer(struct sim *s, const struct sim_observer *obs);

/* ---- read access ---- */

int64_t sim_now(const struct sim *s);
const struct sim_config *sim_cfg(const struct sim *s);
double sim_load_scale(const struct sim *s);
int sim_model_count(const struct sim *s);
const struct sim_model *sim_model(const struct sim *s, int m);
int sim_exec_count(const struct sim *s);
const struct sim_exec *sim_exec(const struct sim *s, int e);
/* Profile latency of model m at batch size b on an executor of `kind` (b may exceed
 * max_batch by one, for look-ahead; larger b is computed from the profile). */
int64_t sim_latency_ns(const struct sim *s, int m, int kind, int b);
/* Nominal network delays (policies plan with these; jitter, if configured, comes on top). */
int64_t sim_dispatch_delay_ns(const struct sim *s, int batch_size);
int64_t sim_resp_delay_ns(const struct sim *s);
int64_t sim_duration_ns(const struct sim *s);

/* The scheduler's queue of model m: requests ordered by deadline (ties by arrival). */
int sim_queue_len(const struct sim *s, int m);
struct sim_request *sim_queue_at(const struct sim *s, int m, int i);

/* ---- actions (policies) ---- */

/* Drops the head of model m's queue (outcome: dropped). */
void sim_queue_drop_head(struct sim *s, int m);
/* Pops the first n requests of model m's queue into a batch for executor e, to start no
 * earlier than start_at. Returns the batch. Aborts on an invariant violation. */
const struct sim_batch *sim_dispatch(struct sim *s, int e, int m, int n, int64_t start_at);
/* A timer calling the policy's on_timer(tag, arg) at `at` (>= now). Returns a handle > 0.
 * Cancel is O(1) and lazy; cancelling a fired or cancelled handle is a no-op. */
uint64_t sim_timer_set(struct sim *s, int64_t at, uint64_t tag, void *arg);
void sim_timer_cancel(struct sim *s, uint64_t handle);
/* The policy's own random stream ("policy.<name>"). */
gsl_rng *sim_policy_rng(struct sim *s);

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
