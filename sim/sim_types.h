/* sim_types — the engine's public types (sim.h has the overview): a request, a batch,
 * an executor and a model as policies see them, the arrival sources an engine is built
 * from, and the constants that go with them. */
#ifndef SIM_TYPES_H
#define SIM_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_hist.h"
#include "sim_time.h"
#include "sim_world.h"

enum sim_outcome { SIM_REQ_PENDING = 0, SIM_REQ_ON_TIME, SIM_REQ_LATE, SIM_REQ_DROPPED };

/* An LLM request's prompt as a trace names its blocks (Mooncake's hash_ids): ids[i] stands for
 * the prompt's tokens [0, (i + 1) x unit), so two requests whose ids agree up to i share those
 * tokens. Its source owns it for the whole run. Prefix caching (sim_llm.h) keys KV blocks on
 * it. */
struct sim_prefix {
    uint32_t unit;               /* tokens per id (Mooncake: 512) */
    uint32_t n;
    const uint32_t *ids;
};

/* What a source says of an LLM request (sim_source.tokens). */
struct sim_tokens {
    int32_t prompt, output;
    const struct sim_prefix *prefix;   /* NULL: its prompt shares nothing known */
};

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
    int32_t prompt_tokens;       /* an LLM model's request: its prompt and the tokens it */
    int32_t output_tokens;       /* generates (from its source; 0 for a DNN model's) */
    const struct sim_prefix *prefix;   /* its prompt's block ids, or NULL (sim_tokens) */
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

#endif
