/* sim_metrics — what the engine counts while it runs: per-model request outcomes, latency
 * and queueing (log-linear histograms, never arrays of samples), batch sizes; and the time
 * series sampled every metrics.sample_period_s. Statistics count requests that arrived after
 * warm-up; the time series and the control window count every request. */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim_hist.h"

/* Request outcomes at a model (stages) or on an application path (requests). */
struct sim_outcomes {
    uint64_t offered, on_time, late, dropped;            /* after warm-up */
    uint64_t c_offered, c_completed, c_ontime, c_bad;    /* cumulative over the whole run */
};

struct sim_model_stats {
    struct sim_outcomes n, snap;                  /* snap: n at the last sampling tick */
    struct sim_hist latency;                      /* completed requests, ns */
    struct sim_hist queueing;                     /* arrival -> batch start, ns */
    uint64_t batches, batched;                    /* batches started after warm-up */
    uint64_t *batch_hist;                         /* [max_batch + 1] */
    int max_batch;
    /* predicted (sim_dispatch_args.expected_ns) vs actual duration, batches after warm-up */
    uint64_t pred_n, pred_over;                   /* predictions; actual > predicted */
    double pred_err_sum_ns, pred_abs_sum_ns;      /* sum of actual - predicted, |.| */
    int64_t pred_max_over_ns;
    uint64_t preempted;                           /* requests returned by preemption */
    struct sim_llm_stats *llm;                    /* an LLM model's, else NULL */
};

/* An LLM model's token-level statistics (sim_llm.c), requests after warm-up. */
struct sim_llm_stats {
    struct sim_hist ttft;                         /* arrival -> first token, ns */
    struct sim_hist tpot;                         /* (last - first token) / (output - 1) */
    struct sim_hist itl;                          /* every gap between two tokens */
    uint64_t tokens_out;                          /* emitted */
    uint64_t preemptions, iterations;             /* all, also before warm-up */
    uint64_t tokens_computed;                     /* all iterations' tokens (prefill + decode) */
    bool prefix_on;                               /* a replica of it caches prefixes */
    uint64_t prefix_query, prefix_hit;            /* prefix caching: the tokens of requests
                                                   * admitted with none computed, and those
                                                   * of them found in the cache */
    uint64_t snap_tokens, snap_iters, snap_preempt;   /* at the last sampling tick */
};

struct sim_ts_point {
    int64_t t;          /* ns */
    int32_t series;     /* index into the interned series names */
    int32_t key;        /* model index or -1 */
    double value;
};

#define SIM_TS_MAX_SERIES 64

struct sim_ts {
    struct sim_ts_point *pts;
    size_t n, cap;
    int nseries;
    const char *series[SIM_TS_MAX_SERIES];
};

int sim_model_stats_init(struct sim_model_stats *ms, int max_batch);
void sim_model_stats_free(struct sim_model_stats *ms);

void sim_ts_init(struct sim_ts *ts);
void sim_ts_free(struct sim_ts *ts);
int sim_ts_push(struct sim_ts *ts, int64_t t, const char *series, int key, double value);

#endif
