/* sim_result — the results of one run, detached from the engine.
 *
 * sim_result_collect() copies what a finished engine measured (per model, per application
 * path, per executor, the time series) so the engine can be destroyed; the layers above
 * store, print and compare a sim_result. Nothing here depends on wall-clock time except
 * `wall_s`, which the caller fills. */
#ifndef SIM_RESULT_H
#define SIM_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"
#include "sim_hist.h"
#include "sim_metrics.h"

/* An LLM model's token-level results (docs/llm.md): requests after warm-up. */
struct sim_llm_result {
    double ttft_p50_ms, ttft_p90_ms, ttft_p99_ms, ttft_mean_ms;
    double tpot_p50_ms, tpot_p90_ms, tpot_p99_ms, tpot_mean_ms;
    double itl_p99_ms;
    double tokens_per_s;                /* output tokens after warm-up over the measured window */
    double kv_util_mean;                /* the replicas' KV use, averaged over time and replicas */
    double prefix_hit_rate;             /* of the prompt tokens asked of the prefix cache (at
                                         * admissions holding no KV), the share found: NAN
                                         * without prefix caching */
    uint64_t tokens_out, preemptions, iterations;
    int replicas;
    const char *timing;                 /* how its iterations were timed: "roofline estimate",
                                         * "linear profile" or "measured profile" (static) */
    char timing_source[512];            /* a measured profile's model, GPU and provenance */
    bool estimate;                      /* timed by the roofline estimate, not a measured or
                                         * given profile */
    struct sim_llm_mem mem;             /* one replica's KV arithmetic */
    struct sim_hist *ttft, *tpot;       /* owned copies */
};

struct sim_model_result {
    char name[SIM_NAME_MAX];
    double slo_ms, rate_rps;
    int max_batch;
    uint64_t offered, on_time, late, dropped;
    double p50_ms, p90_ms, p99_ms, p999_ms, mean_ms;
    double mean_queue_ms, p99_queue_ms, mean_batch;
    double bad_frac;                    /* (late + dropped) / offered */
    double ideal_batch_staggered, ideal_batch_uncoord;  /* spec reference values (sim_result.c); 0 if none fits */
    uint64_t batches, preempted;
    uint64_t pred_n;                    /* batches with a predicted duration */
    double pred_mean_err_ms, pred_mean_abs_err_ms, pred_max_over_ms, pred_over_frac;
    uint64_t *batch_hist;               /* [max_batch + 1], owned */
    struct sim_hist *latency;           /* owned copy */
    struct sim_hist *queueing;          /* arrival -> batch start, owned copy */
    struct sim_llm_result *llm;         /* an LLM model's, owned; NULL for a DNN model */
};

/* One execution path of an application: end-to-end outcomes against the path's SLA. */
struct sim_path_result {
    char name[SIM_NAME_MAX];
    char stages[256];                   /* "OBJD>ALPR>QUAN" */
    double sla_ms, prob, rate_rps;
    uint64_t offered, on_time, late, dropped;
    double p50_ms, p90_ms, p99_ms, p999_ms, mean_ms, bad_frac;
    struct sim_hist *latency;           /* end to end, owned copy */
};

struct sim_exec_result {
    int id;
    char kind[SIM_NAME_MAX];
    int node;                           /* index into world.nodes */
    bool cpu;                           /* a CPU executor bound to `model` */
    int model;
    double cores;                       /* CPU: allocation at the end (or when it went down) */
    double core_s;                      /* CPU: the allocation's integral over [0, duration) */
    double busy_frac, up_s, wasted_ms, load_busy_frac;
    uint64_t batches, requests, load_events, evictions, rejected, preemptions;
    int models_loaded;
};

/* A training job (world.jobs): times in seconds, NAN where it never got there (not started,
 * not done by the end of the run). wait = arrival -> start (all initial workers placed),
 * train = start -> end, exec = wait + train. */
struct sim_job_result {
    char kind[SIM_NAME_MAX];
    double arrival_s, start_s, end_s, wait_s, train_s, exec_s;
    int reconfigs, evictions;
    double cross_node_s;                /* time it progressed split over nodes */
    double workers_s[SIM_JOB_MAX_WORKERS];  /* time placed with 1, 2, ... workers */
    bool done;
};

struct sim_result {
    char name[128], policy[SIM_NAME_MAX];
    uint64_t seed;
    double load_scale, duration_s, warmup_s, percentile;
    bool warmup_extended;               /* the config's warm-up (warmup_config_s) was */
    double warmup_config_s;             /* extended to warmup_s (sim_world) */
    double offered_rps, ontime_rps, bad_rate;
    int llm_spare_gpus;                 /* with LLM models: GPUs up at the end in no replica (a
                                         * replica takes tp of them; what is left idles), else
                                         * -1 */
    uint64_t offered, on_time, late, dropped, events;
    uint64_t same_instant;              /* of the events: policy timers armed for the instant
                                         * they fired at (a FIFO, no heap; sim_timer.c) */
    bool pass;                          /* every model meets its SLO at the percentile */
    bool pass_aggregate;                /* all requests together: at most 1 - percentile of
                                         * them late or dropped (the harness's "avg" rule) */
    int ctrl_threads;                   /* the controller (world.ctrl; 0: none): decisions
                                         * that took its time, their mean and longest wait
                                         * for a thread, its threads' busy fraction */
    uint64_t ctrl_decisions;
    double ctrl_wait_mean_ms, ctrl_wait_max_ms, ctrl_busy_frac;
    int worst_model;
    double worst_bad_frac;
    int nmodels, nexecs;
    double gpu_s;                       /* GPU-seconds billed in [0, duration) */
    double core_s;                      /* CPU core-seconds allocated in [0, duration) */
    int gpus_max;                       /* most executors billed at once */
    int trace_gaps;                     /* gaps the trace replay met (workload.trace; filled
                                         * by the caller, who owns the sources) */
    double trace_gap_s;
    struct sim_model_result *models;
    struct sim_exec_result *execs;
    /* with an application: its paths; the totals and `pass` are then the paths' (requests
     * end to end), and the per-model rows count stages */
    int npaths;
    struct sim_path_result *paths;
    int njobs;
    struct sim_job_result *jobs;
    double makespan_s;                  /* the last job's end; NAN: no jobs, or not all done */
    int nnotebooks;
    uint64_t nb_bursts;                 /* notebooks' bursts finished */
    double nb_slowdown;                 /* their mean slowdown (time taken / work); NAN: none */
    struct sim_ts ts;                   /* moved out of the engine */
    double wall_s;
};

/* Copies a finished engine's measurements (the time series is moved out of it). */
int sim_result_collect(struct sim *s, struct sim_result **out /* OUT */);
void sim_result_destroy(struct sim_result *r);

#endif
