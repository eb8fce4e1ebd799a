/* sim — the discrete-event engine and the API that policies act through.
 *
 * Time is int64_t nanoseconds; events fire in (time, insertion) order; a run is a pure
 * function of (config, seed, load scale). The engine owns the world: models (with latency
 * tables per executor kind), executors (GPUs), per-model scheduler queues ordered by
 * deadline, requests and batches (from pools: the hot path does not malloc once warm), and
 * the metrics. A policy (policies/) decides *when* and *where* batches run; it reads the
 * queues and the clock and calls sim_dispatch / sim_queue_drop_head / sim_timer_*.
 *
 * The engine is built from a world config (sim_world.h) and a set of arrival sources (below);
 * it parses no file. Life of a request: it arrives at a frontend (lazily generated: one
 * pending arrival per source), its id and deadline reach the scheduler after the control delay and it
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

#include "sim_hist.h"
#include "sim_world.h"

#include "sim_time.h"

enum sim_outcome { SIM_REQ_PENDING = 0, SIM_REQ_ON_TIME, SIM_REQ_LATE, SIM_REQ_DROPPED };

/* Where a request waits: the central scheduler's queue of its model, or the queue of its
 * model at one executor (policies that route at the frontends, e.g. Nexus). */
#define SIM_CENTRAL (-1)
/* policy_ops.route may also answer: drop the request at the frontend (no route). */
#define SIM_ROUTE_DROP (-2)

struct sim_request {
    uint64_t id;
    int model;
    int frontend;
    int exec;                    /* SIM_CENTRAL, or the executor whose queue holds it */
    int stage;                   /* stages of its application path done so far (0: first) */
    int64_t t_arrival;           /* at the frontend (of the application for later stages) */
    int64_t t_stage;             /* entered the current stage: arrival, or the previous
                                  * stage's response */
    int64_t t_sched;             /* reached the scheduler's queue */
    int64_t deadline;            /* t_arrival + SLO (an application: + the path's SLA) */
    int64_t t_start, t_finish;   /* of its batch on the executor */
    double size;                 /* from a trace (tokens), or a size factor (sizes), else 0 */
    uint8_t outcome;             /* enum sim_outcome */
    bool counted;                /* arrived after warm-up: enters the statistics */
    struct sim_request *next;    /* intrusive link: pool free list, batch membership */
};

enum sim_batch_status {
    SIM_BATCH_OK,
    SIM_BATCH_REJECTED_LATE,     /* could not start by its window's `latest` */
    SIM_BATCH_REJECTED_UNLOADED, /* model not resident (or evicted/reloaded since dispatch) */
    SIM_BATCH_PREEMPTED          /* cancelled by sim_preempt */
};

struct sim_batch {
    int model, exec, size;
    int from;                    /* queue the requests came from: SIM_CENTRAL or an executor */
    uint8_t status;              /* enum sim_batch_status, final when on_batch_done runs */
    uint32_t version;            /* residency version of the model at dispatch */
    uint64_t serial, tag;        /* unique per run; the policy's own tag */
    int p, t;                    /* inter-op and intra-op threads (1 unless dispatched with) */
    int k;                       /* the dispatcher's batches in service (0: the lanes) */
    /* t_finish: on a shared device (cluster.interference) the estimate at the last re-timing
     * until the batch is done, then final */
    int64_t t_dispatch, t_ready, start_at, latest, expected_ns, t_start, t_finish;
    struct sim_request *reqs;    /* linked through ->next, queue order */
    struct sim_batch *next;      /* executor's pending FIFO, pool free list */
};

struct sim_model {
    int id;
    const struct sim_model_cfg *cfg;  /* name, slo, memory, profiles (the world's) */
    int64_t slo_ns;
    int64_t stack_ns;            /* the serving stack's latency per request (cfg->stack_ms) */
    int max_batch;
    double rate_rps;             /* configured mean rate at load scale 1 */
};

/* PENDING: added while no GPU was free (sim_exec_add): not serving, not billed, waiting in
 * the order added for a GPU to free; it then starts like any other (STARTING, then UP). */
enum sim_exec_state { SIM_EXEC_STARTING, SIM_EXEC_UP, SIM_EXEC_DRAINING, SIM_EXEC_DOWN,
                      SIM_EXEC_PENDING };

struct sim_exec {
    int id;
    int kind;                    /* index into the engine's kinds */
    int node;                    /* index into world.nodes */
    int gpu;                     /* the ledger's GPU it holds (sim_gpu), -1: none (a CPU
                                    executor, a pending one, or one that is down) */
    bool cpu;                    /* a CPU executor (sim_exec_add_cpu), else a GPU */
    int model;                   /* CPU: the one model it serves; GPU: -1 */
    int milli_cores;             /* CPU: cores allocated, in thousandths */
    enum sim_exec_state state;
    double memory_mb;            /* 0 = unlimited */
    double resident_mb;          /* weights + static of loaded and loading models */
    int pages_total, pages_used; /* weights cache in pages of cluster.page_mb */
    const struct sim_batch *running;  /* a batch running (or about to start) there, or NULL */
    int lanes;                   /* batches it runs at once (cluster.lanes) */
    int nrunning;                /* batches holding a lane (running or about to start) */
    int pending;                 /* batches dispatched and waiting for a lane */
    int64_t last_finish;         /* finish of the last batch (for the overlap check) */
    int64_t load_free_at;        /* the load engine (PCIe) is busy until then */
    int loads_in_flight;
    /* statistics */
    int64_t busy_ns, up_since, down_at, wasted_ns, load_busy_ns;
    int64_t added_at;            /* when it was requested (billing starts) */
    uint64_t batches, requests, load_events, evictions, rejected, preemptions;
    int models_loaded;
};

enum sim_residency { SIM_RES_NONE, SIM_RES_LOADING, SIM_RES_LOADED };

struct sim;
struct policy_ops;

/* ---- building and running ---- */

/* Where arrivals come from: a stream the engine pulls one arrival at a time, keeping exactly
 * one pending (so memory does not grow with the run). The inputs layer (workloads/) makes
 * them; the engine only calls them. */
struct sim_source {
    /* The next arrival: its time in ns from the run's start (never before the previous nor
     * before now), its model (-1: a request of the world's application, whose path the
     * engine draws) and size (0 if none). Returns 1, 0 when there are no more, 2 when there
     * is none until one of its requests ends (a closed-loop source: see on_end), or a
     * negative code with sim_err_msg set (the run then fails and writes nothing). */
    int (*next)(void *ctx, int64_t *t_ns /* OUT */, int *model /* OUT */, double *size /* OUT */);
    void (*close)(void *ctx);          /* may be NULL */
    void *ctx;
    int frontend;                      /* the frontend of all its arrivals, or -1: each request
                                        * gets one by world->frontend_split */
    /* May be NULL. A request this source made ended (its response at t_end, or dropped at
     * t_end); a source that said 2 is asked for its next arrival again right after. */
    void (*on_end)(void *ctx, int64_t t_end);
    /* May be NULL. A closed-loop source's client: 1 when it is active at t (its step counts
     * it), else 0. The engine samples the sum as the `clients` time series. */
    int (*active)(void *ctx, int64_t t);
};

/* An engine for world `w`, with every arrival rate multiplied by `load_scale` (the sources
 * already generate at that scale; the engine reports it to policies), run by policy `pol`
 * (NULL: w->policy). It takes over the `nsrc` sources, closing them in sim_destroy (also
 * when it fails). */
int sim_create(const struct sim_world *w, double load_scale, const struct policy_ops *pol,
               struct sim_source *src, int nsrc, struct sim **out /* OUT */);
void sim_destroy(struct sim *s);
/* Runs to the end (duration, then drain). Returns 0 or a negative code. */
int sim_run(struct sim *s);

/* Observer hooks, called by the engine (tests, tracing). Any may be NULL. */
struct sim_observer {
    void *ctx;
    void (*batch_start)(void *ctx, const struct sim *, const struct sim_batch *);
    /* batch_done also sees rejected batches (status != OK) but not preempted ones, which
     * batch_preempted sees at the instant they are cut */
    void (*batch_preempted)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*batch_done)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*request_arrive)(void *ctx, const struct sim *, const struct sim_request *);
    /* a request of an application entering its next stage (r->stage > 0, r->model) */
    void (*request_stage)(void *ctx, const struct sim *, const struct sim_request *);
    void (*request_end)(void *ctx, const struct sim *, const struct sim_request *);
    void (*event)(void *ctx, const struct sim *, int64_t time);
};
void sim_set_observer(struct sim *s, const struct sim_observer *obs);

/* ---- read access ---- */

int64_t sim_now(const struct sim *s);
const struct sim_world *sim_world(const struct sim *s);
double sim_load_scale(const struct sim *s);
int sim_model_count(const struct sim *s);
const struct sim_model *sim_model(const struct sim *s, int m);
int sim_exec_count(const struct sim *s);
const struct sim_exec *sim_exec(const struct sim *s, int e);
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
/* The queue of model m at executor e (requests routed there by policy_ops.route). */
int sim_xqueue_len(const struct sim *s, int e, int m);
/* The least model >= m with requests queued at executor e (SIM_CENTRAL: the scheduler's
 * queues), or -1: a scan over the models that have some, not over all. */
int sim_xqueue_next(const struct sim *s, int e, int m);
struct sim_request *sim_xqueue_at(const struct sim *s, int e, int m, int i);
/* Frontends and how arrivals are split over them (config `frontends`, `frontend_split`). */
int sim_frontend_count(const struct sim *s);

/* Residency of model m on executor e, its weights in pages, and its nominal load time. */
enum sim_residency sim_resident(const struct sim *s, int e, int m);
int sim_model_pages(const struct sim *s, int m);
int64_t sim_load_ns(const struct sim *s, int m);

/* ---- actions (policies) ---- */

/* Drops the head of model m's queue (outcome: dropped). */
void sim_queue_drop_head(struct sim *s, int m);
/* The same for model m's queue at executor e. */
void sim_xqueue_drop_head(struct sim *s, int e, int m);

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

/* ---- the GPU ledger: every GPU of every node (cluster.nodes[].gpus; with cluster.gpus, one
 * node of max(gpus, max_gpus)) and what holds it. A holder claims thousandths of one GPU;
 * a GPU's claims never add up to more than 1000. GPU executors hold whole GPUs; policies
 * claim for their other work (a training job's workers, a notebook's share). When a GPU
 * becomes wholly free, the policy's on_gpu_free hears of it first and may claim it (for its
 * own work created before the first pending executor, say); if it is still wholly free
 * after, the first pending executor takes it. */
enum sim_holder { SIM_HOLD_EXEC, SIM_HOLD_WORKER, SIM_HOLD_SHARE };

struct sim_gpu_claim {
    enum sim_holder kind;
    int id;                      /* the executor, worker or share, in the holder's numbering */
    int milli;
};

struct sim_gpu {
    int node;
    int milli;                   /* claimed, thousandths (<= 1000) */
    int nclaims;
    const struct sim_gpu_claim *claims;
};

int sim_gpu_count(const struct sim *s);
const struct sim_gpu *sim_gpu(const struct sim *s, int g);
/* GPUs of node n with nothing claimed. */
int sim_node_gpus_free(const struct sim *s, int n);
/* Claims `milli` thousandths of GPU g for (kind, id): 0, or -1 (sim_err set) when it does
 * not fit or (kind, id) holds g already. SIM_HOLD_EXEC is the engine's own (sim_exec_add). */
int sim_gpu_claim(struct sim *s, int g, enum sim_holder kind, int id, int milli);
/* Ends the claim of (kind, id) on g (a no-op when there is none). */
void sim_gpu_release(struct sim *s, int g, enum sim_holder kind, int id);

/* ---- training jobs (world.jobs; sim_world.h has the progress model). A job arrives
 * (FUTURE -> QUEUED, policy on_job_arrive) and waits until the policy places it; it is
 * STARTING for its kind's start_s, RUNNING, RECONFIGURING after workers are added, DONE when
 * its iterations are done (its GPUs freed, then on_job_done). Progress is piecewise constant:
 * re-timed at every change, one completion event. Each worker holds a whole GPU, claimed as
 * (SIM_HOLD_WORKER, job id). */
enum sim_job_state { SIM_JOB_FUTURE, SIM_JOB_QUEUED, SIM_JOB_STARTING, SIM_JOB_RUNNING,
                     SIM_JOB_RECONFIGURING, SIM_JOB_DONE };

struct sim_job {
    int id, kind;
    enum sim_job_state state;
    int init_workers, max_workers;
    int nworkers;
    int gpu[SIM_JOB_MAX_WORKERS];      /* worker w's GPU; worker 0 is the chief (a done job
                                          keeps its last workers' GPUs here, nworkers 0) */
    int ps_node;                       /* the parameter server's node */
    int64_t arrival, started, ended;   /* ns (started: placed; -1 until then) */
    double iterations;
    int reconfigs, evictions;          /* worker additions (passes), workers removed */
    int64_t cross_ns;                  /* time it progressed split over nodes */
    int64_t workers_ns[SIM_JOB_MAX_WORKERS];   /* time placed with 1, 2, ... workers, up to
                                                  its last change (sim_job_workers_ns: now) */
};

int sim_job_count(const struct sim *s);
const struct sim_job *sim_job(const struct sim *s, int j);
/* Iterations done by now (<= iterations). */
double sim_job_done(const struct sim *s, int j);
/* Time job j has been placed with n workers (1 <= n <= SIM_JOB_MAX_WORKERS) up to now. */
int64_t sim_job_workers_ns(const struct sim *s, int j, int n);
/* Places queued job j: workers on gpus[0..n) (whole free GPUs, or GPUs the policy claimed
 * for it as (SIM_HOLD_WORKER, j) while gathering them; gpus[0] the chief), its parameter
 * server on ps_node. 0, or -1 with sim_err set (then nothing changed). A job still running
 * at the run's end (duration_s) stays unfinished: its events past the end are not run. */
int sim_job_start(struct sim *s, int j, const int *gpus, int n, int ps_node);
/* Adds n workers on gpus[0..n) to a started job (one reconfiguration; GPUs free or claimed
 * for the job as above): 0 or -1 (sim_err). */
int sim_job_add_workers(struct sim *s, int j, const int *gpus, int n);
/* Removes the worker on GPU g and frees g; refuses the chief (-1, sim_err set). */
int sim_job_remove_worker(struct sim *s, int j, int g);

/* ---- notebooks (world.nnotebooks; sim_world.h has their model) ---- */
struct sim_notebook {
    int id, gpu;                       /* gpu: -1 until placed */
    int milli;                         /* its claim, (SIM_HOLD_SHARE, id) */
    bool bursting, holding;            /* in a burst; holding its GPU's token */
    uint64_t bursts;                   /* bursts finished */
    double slowdown_sum;               /* sum over finished bursts of (time taken / work) */
};
int sim_notebook_count(const struct sim *s);
const struct sim_notebook *sim_notebook(const struct sim *s, int nb);
/* Places notebook nb on GPU g with a claim of milli thousandths (the policy: its request
 * with sharing, a whole GPU without); it starts idle. 0, or -1 with sim_err set. */
int sim_notebook_place(struct sim *s, int nb, int g, int milli);
/* A timer calling the policy's on_timer(tag, arg) at `at` (a time before now means now).
 * Returns a handle > 0. Timers and events fire in one order: by time, then by when they were
 * set. Cancel removes it (O(log timers)); cancelling a fired or cancelled handle is a no-op.
 * Rearm is cancel + set in one step (the same order, less work): it moves the armed timer
 * `handle` to `at` with tag and arg, or sets a new one if it has fired or was cancelled
 * (handle 0 included), and returns the handle to keep. */
uint64_t sim_timer_set(struct sim *s, int64_t at, uint64_t tag, void *arg);
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
