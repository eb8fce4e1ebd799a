/* sim_int — the engine's private state, shared by sim.c and the result collector
 * (sim_result.c). Nothing outside sim/ includes this: policies use sim.h. */
#ifndef SIM_INT_H
#define SIM_INT_H

#include "sim.h"
#include "sim_bits.h"
#include "sim_heap.h"
#include "sim_iheap.h"
#include "sim_metrics.h"
#include "sim_policy.h"
#include <gsl/gsl_randist.h>

/* A request as the engine holds it: the part policies see first, then what stays hidden. */
struct sim_req_int {
    struct sim_request pub;
    int path;                    /* application path, or -1; never shown to policies */
    int src;                     /* the source that made it (closed-loop sources hear its end) */
};

struct sim_path_stats {          /* one application path */
    struct sim_outcomes n, snap;                 /* snap: n at the last sampling tick */
    struct sim_hist latency;                     /* end to end (arrival -> response), ns */
};

struct sim_qent {                 /* a queued request with its arrival (what policies scan a
                                    * queue by), deadline (its order) and the time it reached
                                    * the scheduler (by which FIFO policies pick the oldest
                                    * head), kept beside it so that neither a scan, a
                                    * comparison of heads nor an insertion visits requests */
    struct sim_request *r;
    int64_t t_arrival, deadline, t_sched;
};

struct sim_mqueue {              /* ring buffer of queued requests, ordered by deadline; cap
                                    * is 0 or a power of two (indexes wrap by a mask) */
    struct sim_qent *buf;
    int head, len, cap;
    bool own;                       /* buf is the queue's own allocation; else NULL, or its
                                     * first SIM_MQ_FIRST entries (sim_base.c, queue_first) */
};

#define SIM_MQ_FIRST 1              /* an executor queue's entries before it allocates (then
                                     * 4, and doubling) */

#define SIM_TIMER_NOW UINT32_MAX        /* pos of a timer armed for the instant it was armed at */
#define SIM_TIMER_IDLE (UINT32_MAX - 1) /* pos of a free slot */

struct sim_timer_slot {          /* a policy timer (sim_timer.c) */
    uint32_t gen;                /* bumped when it fires or is cancelled: old handles miss */
    int32_t view;                /* the view current when it was set: it fires in it */
    uint32_t pos;                /* its place in the timer heap while armed, or one of the two
                                    values above */
    uint32_t next_free;
    int64_t at;
    uint64_t seq;                /* from the event heap's counter: one order for both */
    uint64_t tag;
    void *arg;
};

struct sim_pool {                /* chunked free-list pool: objects never move */
    size_t obj_size, per_chunk;
    void **chunks;
    size_t nchunks, cap_chunks;
    void *free;                  /* first free object; its first word links the next */
    size_t live, high_water;
};

struct sim_resid {                /* model m on one executor */
    uint8_t state;               /* enum sim_residency */
    uint32_t version;            /* bumped on every load completion and eviction */
    int64_t changed_at;          /* time of the last bump */
};

/* A batch as the engine holds it. On a fluid executor (below) a batch holding a lane is a
 * work item: `left` ns of work at full speed as of `since`, progressing at `rate` billionths
 * of full speed (0 until it joins the device), with one completion event (serial). */
struct sim_batch_int {
    struct sim_batch pub;
    int64_t left, since;
    int64_t rate;                /* billionths of full speed */
    bool active;                 /* on the device: counted among the co-runners */
    double demand;               /* thread demand (sim_dev_demand) */
    double rough;                /* its configuration's roughness (sim_intf_roughness; CPU) */
};

struct sim_gpu_int {             /* one GPU of the ledger (sim_cluster.c) */
    struct sim_gpu pub;
    struct sim_gpu_claim *claims;
    int cap;
};

struct sim_job_int {             /* a training job (sim_jobs.c) */
    struct sim_job pub;
    double done, rate;           /* iterations done as of `since`; per second from then */
    int64_t since, pause_until;
    uint32_t serial;             /* its pending event's; a re-timed job's old event is stale */
    bool split;                  /* workers and parameter server not all on one node */
};

#define SIM_NB_USES 128             /* token holdings remembered per notebook (its window) */

struct sim_nb_int {              /* a notebook (sim_shares.c) */
    struct sim_notebook pub;
    int64_t work_left, burst_start, burst_work, held_since;
    int64_t use_t0[SIM_NB_USES], use_t1[SIM_NB_USES];   /* token holdings, a ring */
    int nuse, huse;
    uint32_t serial;
};

/* A batch size's service-time variation (sim_world.h's sim_service, prepared): duration =
 * l(b) (shift + X), X ~ lognormal(p1 = mu, p2 = sigma) or gamma(p1 = shape, p2 = scale). */
struct sim_svc_b {
    enum sim_svc_dist dist;      /* SIM_SVC_NONE: exactly l(b) */
    double shift, p1, p2;
};

struct sim_exec_int {
    struct sim_bits qbits;       /* the models whose queue here is not empty (with q) */
    int64_t start_delay;         /* a pending executor's start-up delay once it has a GPU */
    gsl_rng *srng;               /* its service-time stream, made at its first draw */
    struct sim_batch *running;
    int run_class;               /* 1 + its least class in the running index (run_le), 0: none */
    struct sim_batch *pend_head, *pend_tail;
    /* fluid executors (CPU executors, several lanes or a shared device): the batches holding
     * lanes in admission order; those on the device (nact, their demand); union busy time */
    bool fluid, multi;           /* multi: several lanes or a shared device */
    struct sim_batch_int **run;
    int nrun, nact;
    int64_t busy_since;
    int64_t cbusy_acc, cbusy_since;   /* cores busy, integral in milli-core ns */
    int cbusy_milli;                  /* cores busy now, thousandths */
    int64_t busy_snap;           /* busy time at the last sampling tick */
    int64_t cbusy_snap;          /* CPU executors: core-busy time (milli-core ns) then */
    struct sim_mqueue *q;        /* [nmodels] queues at this executor, allocated on first use */
    struct sim_iheap *heads;     /* with q where heads are tracked (sim_track_heads): the
                                    models queued here by their head's t_sched */
    struct sim_resid *res;       /* [nmodels], in a block of sim.res_blocks */
    /* CPU executors: the allocation's integral (milli-core ns) up to core_since */
    int64_t core_acc, core_since;
    int64_t speed;               /* a batch's full speed, billionths of the profile's (GPU: 1;
                                    CPU: one core's times the allocation's scaling) */
};

struct sim_arrival {
    int64_t t;
    int model;
    double size;
    struct sim_tokens tok;       /* an LLM request's (sim_source.tokens) */
    bool counted;                /* a tick has counted it as offered already (folded) */
};

struct sim_src {                 /* an arrival source and its pending arrival */
    struct sim_source src;
    struct sim_arrival cur;      /* the arrival whose event is in the heap, if pending */
    bool pending;
    /* folded: arrivals a tick pulled early (they arrived before it, their events are not
     * due yet), in order; cur is taken from here before the source is asked again */
    struct sim_arrival *ahead;
    int nahead, head, cap;
    bool ended;                  /* the source has nothing more (or went past duration) */
};

struct sim {
    const struct sim_world *cfg;
    double scale;
    int64_t now, duration, warmup, stop_at, tick_ns, next_tick;
    struct sim_heap heap;
    bool stopping;

    int nmodels;
    struct sim_model *models;
    struct sim_mqueue *queues;
    struct sim_bits central_bits; /* the models whose queues[m] is not empty */
    struct sim_qent *qfirst;     /* executors' queues' first entries, handed out in order of
                                  * first use from the chunks qchunks (sim_base.c, queue_first) */
    int qfirst_left, nqchunks, capqchunks;
    struct sim_qent **qchunks;
    /* Heads tracked (sim_track_heads): at each place, the models with queued requests in an
     * indexed heap keyed by their head's t_sched (ties: the lower model), so the oldest head
     * is read, not searched for (sim_xqueue_oldest) */
    bool track_heads;
    struct sim_iheap central_heads;
    int nsrc;
    struct sim_src *src;
    bool clients;                           /* some source is a closed-loop client (active) */
    /* Arrivals folded into their delivery: one event at arrival + control delay does both,
     * when nothing can see the request in between (no route hook, no application, no
     * jitter); ticks count the arrivals still in flight (sim_request.c, sim_source_push). */
    bool fold;
    int src_err;                            /* the run's error (a source's, an overflow, out
                                             * of memory): the run stops, sim_run returns it */
    void *astate;                           /* the autoscaler's state */
    int *rr_frontend;                       /* [model] round-robin position */
    gsl_rng *split_rng;
    int *node_milli;                        /* [nnodes] cores allocated, thousandths */
    int *node_cpu_kind;                     /* [nnodes] kind index of its CPU (-1: none) */
    int nkinds;
    const char *kinds[SIM_MAX_KINDS];
    int (*prof_of_kind)[SIM_MAX_KINDS];     /* [model][kind] -> model cfg profile index */
    int64_t **lat;                          /* [model * nkinds + kind][b], b in 0..max+1:
                                             * the profile's l(b), a batch's mean duration */
    int64_t **plat;                         /* the same as policies plan with: lat, or its
                                             * world.plan_quantile (sim_latency_ns) */
    struct sim_svc_b **svc;                 /* the same, how a batch's duration varies
                                             * (NULL: not at all) */
    double *dyn_mb_per_req;                 /* [model] */
    int *pages;                             /* [model] weights + static, in pages */
    double max_dynamic_mb;                  /* the largest model's dynamic_mb (an executor's
                                             * weights cache leaves room for it) */
    int64_t *load_ns;                       /* [model] nominal load time */
    gsl_rng *xrng;                          /* execution jitter (NULL: none) */
    double x_mu, x_sigma;

    int ngpus;                              /* the GPU ledger (sim_cluster.c) */
    struct sim_gpu_int *gpus;
    int free_hint;                          /* no wholly free GPU below this index */
    int *node_free;                         /* [nodes] wholly free GPUs per node */
    int *pend_execs, npend;                 /* pending executors, in the order added */
    bool ended_early;                       /* duration cut at the last job's end */
    int nnb;                                /* notebooks (sim_shares.c) and each GPU's token */
    struct sim_nb_int *nb;
    int *token;                             /* [ngpus]: the notebook holding it, or -1 */
    uint32_t *token_serial;                 /* [ngpus]: a retry event's */
    gsl_rng *nb_rng;
    int njobs;                              /* training jobs (sim_jobs.c) */
    struct sim_job_int *jobs;
    int nexecs, max_execs;                  /* created so far (any state); capacity */
    int nactive;                            /* executors UP or STARTING */
    struct sim_exec *execs;
    struct sim_exec_int *xi;

    struct sim_pool req_pool, batch_pool;
    struct sim_llm_rep **llm;               /* [nllm]: executor e's LLM replica, or NULL
                                             * (sim_llm.c; NULL until a policy makes one) */
    int nllm;
    struct sim_pool llm_pool;               /* the replicas' requests (struct llm_rq) */
    struct sim_timer_slot *timers;          /* slots; armed ones are in theap or tnow */
    uint32_t *theap;                        /* min-heap of armed slots by (at, seq) */
    uint32_t ntimers, cap_timers, free_timer, ntheap;
    /* timers armed for the current instant: a FIFO of (slot, seq), in seq order, drained
     * before time moves on; an entry whose slot moved or was re-armed since is skipped */
    struct sim_timer_now { uint32_t slot; uint64_t seq; } *tnow;
    uint32_t tnow_head, tnow_len, tnow_cap;
    uint64_t same_instant;                  /* timers fired from that FIFO */

    const struct policy_ops *pol;
    /* views (sim_view_assign): the current one (-1: none), each executor's and model's (-1:
     * none; NULL until one is assigned), and the copy sim_exec answers for another view's */
    int view;
    int16_t *exec_view, *model_view;
    struct sim_exec *shadow;
    bool cold_start;                   /* sim_policy_cold_start: executors start empty */
    void *pstate;
    gsl_rng *prng, *jrng;
    struct { char name[SIM_NAME_MAX]; gsl_rng *rng; } pstreams[SIM_POLICY_STREAMS];
    int npstreams;

    int64_t ctrl_ns, data_ns, resp_ns;
    /* the executors' residency tables (sim_exec_int.res), one block per allocation of
     * executor slots (sim_create, exec_grow): one calloc, not one per executor */
    struct sim_resid **res_blocks;
    int nres_blocks;
    /* the executors with a free lane (sim_exec_next_free) */
    struct sim_bits free_set;
    /* the running index (sim_exec_index_running; NULL until a policy asks): run_le[j], j in
     * 0..run_classes - 1, holds the UP executors whose `running` batch has at most 2^j
     * requests (the last class: any size), nested; xi[e].run_class is 1 + the least class e is
     * in (0: none) */
    struct sim_bits *run_le;
    int run_classes;
    /* with it, run_of[m]: the UP executors whose `running` batch is of model m (nmodels sets,
     * kept with run_brief) */
    struct sim_bits *run_of;
    /* with it, the model and size of each executor's batch there, dense (run_brief_cap
     * entries): a pass over many executors reads 8 bytes each, not their batches */
    struct sim_run_brief *run_brief;
    int run_brief_cap;
    int64_t host_ns;                   /* host_us_per_batch, on GPU executors (the mean
                                        * where it is drawn: what policies plan with) */
    gsl_rng *host_rng;                 /* its draws (NULL: fixed) */
    double host_mu, host_sigma;        /* lognormal, in ns */
    /* the controller (world.ctrl): each thread's busy-until, and the decision in progress
     * (nesting depth of policy callbacks; its thread once it charged time, start, cost) */
    int ctrl_threads;
    int64_t ctrl_req_ns, ctrl_cand_ns, ctrl_batch_ns;
    int64_t *ctrl_free;
    int dec_depth, dec_thread;
    bool dec_assigned;
    int64_t dec_start, dec_cost;
    uint64_t ctrl_decisions;           /* decisions that charged time */
    int64_t ctrl_wait_ns, ctrl_wait_max_ns, ctrl_busy_ns;

    struct sim_model_stats *ms;
    const struct sim_app *app;              /* cfg->app */
    struct sim_path_stats *ps;              /* [app->npaths] */
    gsl_rng *path_rng;                      /* "application.paths" */
    gsl_ran_discrete_t *path_table;
    struct sim_ts ts;
    struct sim_window win;

    uint64_t arrived, ended, next_req_id, events, batches_total, batch_serial;
    struct sim_observer obs;
    /* The two calls that go up the engine's files, set once by sim_create (sim.c) so that
     * every file calls only downward: the GPU ledger (sim_cluster.c) gives a wholly freed GPU
     * to the first pending executor through exec_bind (sim_exec.c's sim_exec_bind); an
     * executor whose speed changed (sim_exec.c) has its running batches re-timed through
     * retime (sim_batch.c's sim_batch_retime). */
    struct {
        void (*exec_bind)(struct sim *s, int e, int g);
        void (*retime)(struct sim *s, int e);
    } up;
};

/* sim_cluster.c: the ledger built from the nodes; the first wholly free GPU in node order
 * (-1: none); a pending executor leaves the queue (removed). sim_exec.c: executor e takes GPU
 * g (it starts now, up after its start-up delay); the ledger calls it through s->up. */
int sim_ledger_init(struct sim *s);
void sim_ledger_free(struct sim *s);
int sim_ledger_first_free(struct sim *s);
void sim_ledger_unpend(struct sim *s, int e);
void sim_exec_bind(struct sim *s, int e, int g);

/* sim_jobs.c: the jobs of the world (their arrival events pushed); a job event (gen: serial
 * and what: arrival, pause over, done); free. sim.c: push a job's or a notebook's event, or
 * nothing when it falls after the run's end (duration). */
int sim_jobs_init(struct sim *s);
void sim_jobs_event(struct sim *s, int j, uint64_t gen);
void sim_jobs_free(struct sim *s);
void sim_push_event(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen);
enum { SIM_EV_JOB = 7, SIM_EV_NB = 8 };    /* after sim.c's own event types */
int sim_shares_init(struct sim *s);
void sim_shares_event(struct sim *s, int idx, uint64_t gen);
void sim_shares_free(struct sim *s);

/* sim_timer.c: the earliest armed timer (NULL: none); fire that timer (the policy's on_timer
 * unless the run is stopping); free the slots. */
const struct sim_timer_slot *sim_timer_next_due_now(struct sim *s);
static inline const struct sim_timer_slot *sim_timer_next(struct sim *s)
{
    if (s->tnow_len)                    /* some timer may be due now (sim_timer.c) */
        return sim_timer_next_due_now(s);
    return s->ntheap ? &s->timers[s->theap[0]] : NULL;
}
void sim_timer_fire(struct sim *s, const struct sim_timer_slot *ts);
void sim_timer_free(struct sim *s);

/* Between the engine's own files: each calls only those listed before it (sim.c, the top,
 * calls them all; the two calls upward go through struct sim's `up`). */
enum { EV_ARRIVAL, EV_DELIVER, EV_BATCH_DONE, EV_TICK, EV_LOAD_DONE, EV_EXEC_UP, EV_BATCH_START };
/* sim_llm.c: an LLM replica's iteration is over (idx: executor, gen: serial); at the run's
 * stop every request the replicas hold is dropped; free. */
enum { SIM_EV_LLM = 9, SIM_EV_LLM_KV = 10 };   /* an iteration over; a KV transfer in */
void sim_llm_event(struct sim *s, int e, uint64_t serial);
void sim_llm_kv_in(struct sim *s, int e, uint64_t rq);
/* At each sampling tick, per LLM model: KV use (the replicas' mean, now), requests waiting
 * (now), tokens per iteration and preemptions (over the window): the `llm.*` series. */
void sim_llm_sample(struct sim *s);
/* The part of an LLM iteration in flight on executor e (a replica's rank) done by now, ns
 * (its busy time is charged when it ends). */
int64_t sim_llm_busy_now(const struct sim *s, int e);
#define SIM_LLM_RQ_SIZE 80               /* sizeof(struct llm_rq), checked in sim_llm.c */
void sim_llm_stop(struct sim *s);
/* Executor e is a rank of an LLM replica that still holds requests (an iteration, running,
 * waiting or incoming ones): removed, it drains them before it goes down. */
bool sim_llm_holds(const struct sim *s, int e);
void sim_llm_free(struct sim *s);
_Static_assert(SIM_EV_JOB == EV_BATCH_START + 1 && SIM_EV_NB == SIM_EV_JOB + 1,
               "the jobs' and notebooks' event types follow the engine's own");

/* Speeds are integers in billionths of full speed (SIM_SPEED_ONE): ns for `work` (ns at full
 * speed) at `speed`, rounded up, so never early; and the work done in `ns` at `speed`,
 * rounded down. */
#define SIM_SPEED_ONE 1000000000LL

/* sim_base.c: pools, the request queues, pushing events (no check against the run's end:
 * sim_push_event has it), service-time draws */
static inline const struct sim_qent *sim_mq_at(const struct sim_mqueue *q, int i)
{
    return &q->buf[(q->head + i) & (q->cap - 1)];
}
static inline struct sim_request *sim_mq_pop(struct sim_mqueue *q)
{
    struct sim_request *r = q->buf[q->head].r;
    q->head = (q->head + 1) & (q->cap - 1);
    q->len--;
    return r;
}
/* Model m's queue at `where` for reading (an executor's not yet allocated reads as empty). */
static inline const struct sim_mqueue *sim_queue_peek(const struct sim *s, int where, int m)
{
    static const struct sim_mqueue empty;
    if (where == SIM_CENTRAL)
        return &s->queues[m];
    if (where < 0 || where >= s->nexecs)
        SIM_BUG("queue of executor %d out of range (%d executors)", where, s->nexecs);
    return s->xi[where].q ? &s->xi[where].q[m] : &empty;
}
void sim_pool_init(struct sim_pool *p, size_t obj_size, size_t per_chunk);
void *sim_pool_get(struct sim_pool *p);   /* NULL: out of memory */
void sim_pool_put(struct sim_pool *p, void *o);
void sim_pool_free(struct sim_pool *p);
int sim_mq_push(struct sim_mqueue *q, struct sim_request *r);   /* SIM_ENOMEM */
struct sim_mqueue *sim_queue_of(struct sim *s, int where, int m);
/* r into its model's queue at `where` (SIM_CENTRAL or an executor), and the head of model
 * m's queue there out of it: the place's set of models with queued requests follows (sim_xqueue_next).
 * Every request enters and leaves a queue through these two. */
int sim_q_push(struct sim *s, int where, struct sim_request *r);
struct sim_request *sim_q_pop(struct sim *s, int where, int m);
void sim_push(struct sim *s, int64_t t, uint32_t type, uint32_t idx, uint64_t gen);
int64_t sim_jitter_draw(struct sim *s);
int64_t sim_exec_time(struct sim *s, int64_t nominal);
/* Keeps executor e's entries in the free-lane and running indexes current: call after its
 * state, running, nrunning, pending or lanes change. free_reserve sizes the indexes for n
 * executors (SIM_ENOMEM). */
void sim_exec_mark(struct sim *s, int e);
int sim_exec_free_reserve(struct sim *s, int n);
/* The residency tables of executor slots from..to-1, in one new block (SIM_ENOMEM). */
int sim_exec_res_block(struct sim *s, int from, int to);
/* The host's time around one GPU batch: host_ns, or a draw where it has a p99. */
int64_t sim_host_time(struct sim *s);
/* The controller (sim_ctrl.c): a policy callback is one decision, between begin and end
 * (nested callbacks are part of the outer one); charge adds controller time to it (the first
 * charge takes the first free thread); ctrl_ready is when its work so far is done (now when
 * no controller is configured or nothing was charged). */
void sim_ctrl_begin(struct sim *s);
void sim_ctrl_end(struct sim *s);
/* Calls the policy's hook `fn` (which it has) as one decision of the controller. */
#define SIM_POLICY_CALL(s, fn, ...)                                                      \
    do {                                                                                  \
        sim_ctrl_begin(s);                                                                \
        (s)->pol->fn((s), (s)->pstate, __VA_ARGS__);                                      \
        sim_ctrl_end(s);                                                                  \
    } while (0)
void sim_ctrl_charge(struct sim *s, int64_t ns);
int64_t sim_ctrl_ready(const struct sim *s);
double sim_service_factor(struct sim *s, int e, int m, int kind, int n);

/* sim_request.c: a request's outcome by its deadline, its end, delivery to a queue, the
 * sources, in-flight counts, arrivals, the next stage of its path */
enum sim_outcome sim_req_by_deadline(const struct sim_request *r, int64_t t);
void sim_req_end(struct sim *s, struct sim_request *r, enum sim_outcome o, int64_t t_done);
void sim_req_deliver(struct sim *s, struct sim_request *r);
void sim_source_push(struct sim *s, int i);
void sim_count_in_flight(struct sim *s);
void sim_req_arrival(struct sim *s, int src);
bool sim_req_next_stage(struct sim *s, struct sim_request *r, int64_t t_done);

/* sim_exec.c: a load's end, an executor's initial state, up, and down when drained */
void sim_load_on_done(struct sim *s, int e, int m, bool ok);
void sim_exec_init(struct sim *s, int e, enum sim_exec_state st);
void sim_exec_up(struct sim *s, int e);
void sim_exec_maybe_down(struct sim *s, int e);

/* sim_batch.c: busy core time of fluid executors, re-timing (through s->up.retime), a batch's
 * start and end events */
int64_t sim_cbusy_upto(const struct sim *s, int e);
void sim_batch_retime(struct sim *s, int e);
void sim_batch_on_start(struct sim *s, int e, uint64_t serial);
void sim_batch_on_done(struct sim *s, int e, uint64_t serial);

/* sim_sample.c: the periodic sample */
void sim_on_tick(struct sim *s);

#endif
