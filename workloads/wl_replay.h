/* wl_replay — a real trace (traces/) as the arrivals of a run.
 *
 * Config: `workload.trace` (docs/config.md; parsed by the experiment layer into wl_trace_cfg).
 * The pipeline, all streaming:
 *   reader records -> intervals (records of one time grouped; timestamp traces either pass
 *   requests through or, with cv_scale, become windows with a fitted CV)
 *   -> window [start_s, start_s + window_s) of trace time (partial intervals prorated)
 *   -> gaps: missing time and zero runs of at least zero_run_s are *gaps*, handled as the
 *      config says (error / zero / skip / hold / interpolate), counted and reported
 *   -> counts: per stream, emitted = floor(s * cumulative) differences, s = rate_scale x the
 *      run's load scale, so totals are floor(s * total) exactly
 *   -> arrivals inside each interval by a process conditioned on its count (Poisson: sorted
 *      uniforms; Gamma with a target CV: Dirichlet gaps by stick-breaking; uniform: evenly
 *      spaced, random phase), sim time = trace time / time_scale
 *   -> models: multi-stream traces (Azure Functions) map functions onto models (round robin,
 *      by volume rank, explicit) and draw each arrival's model without replacement from the
 *      interval's per-model counts (exact per interval); single-stream traces split by the
 *      workload's popularity shares.
 * Timestamp traces replay their times exactly (rate_scale < 1 thins by the same floor rule,
 * > 1 spreads the copies evenly up to the next request). */
#ifndef WL_REPLAY_H
#define WL_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include "sim_world.h"
#include "trace.h"
#include "wl_arrival.h"

enum wl_gap { WL_GAP_ERROR, WL_GAP_ZERO, WL_GAP_SKIP, WL_GAP_HOLD, WL_GAP_INTERPOLATE };
enum wl_map { WL_MAP_POPULARITY, WL_MAP_ROUND_ROBIN, WL_MAP_VOLUME, WL_MAP_EXPLICIT };
enum wl_process { WL_PROC_POISSON, WL_PROC_GAMMA, WL_PROC_UNIFORM };

struct wl_trace_cfg {
    struct trace_spec spec;
    char **files, **hashes;            /* owned; spec points into them */
    char project[32];
    double start_s, window_s;          /* trace seconds; window 0 = to the end */
    bool partial_window;               /* a window the rows do not cover: a warning, not an
                                        * error (the config layer's check) */
    double rate_scale, time_scale;     /* time_scale: trace seconds per simulated second */
    enum wl_process process;
    double cv;                         /* gamma: target CV of gaps */
    double cv_scale, cv_window_s;      /* timestamp traces: refit CV per window, times this */
    enum wl_gap gaps;
    double zero_run_s;                 /* zero counts this long (or longer) are a gap */
    enum wl_map map;
    int nexplicit;
    char **ex_hash;                    /* owned */
    int *ex_model;
    bool timestamps;                   /* requests, not intervals */
};

void wl_trace_cfg_free(struct wl_trace_cfg *tc);

/* What a scan of the replay (at load scale 1) found. */
struct wl_trace_info {
    double span_s;                     /* simulated seconds the window covers */
    double total;                      /* arrivals */
    double peak_rps, mean_rps;         /* over the trace's intervals (requests: 1 s bins) */
    int ngaps;
    double gap_s;                      /* trace seconds inside gaps */
    char first_gap[160];
    int nstreams;
    double *model_total;               /* [nmodels] arrivals per model, owned */
    /* the window against the trace's rows (trace seconds from its origin): the rows span
     * [data_lo, data_hi) where have_data; uncovered_s of the window [window_lo, window_hi)
     * lies before the first row or after the last (window_hi: INFINITY without window_s) */
    double data_lo, data_hi, window_lo, window_hi, uncovered_s;
    bool have_data;
};

/* Reads the whole window once: totals, span, gaps; with gaps "error", any gap is an error. */
int wl_trace_scan(const struct wl_workload *w, const struct sim_world *world,
                  struct wl_trace_info *info /* OUT */);
void wl_trace_info_free(struct wl_trace_info *info);

struct wl_replay;
int wl_replay_open(const struct wl_workload *w, const struct sim_world *world, double load_scale,
                   struct wl_replay **out);
/* 1: the next arrival (time in ns from the run's start, model, size); 0: no more; < 0 error. */
int wl_replay_next(struct wl_replay *rp, int64_t *t_ns, int *model, double *size);
/* The tokens of the arrival wl_replay_next gave last: its trace request's, with its prompt's
 * block ids (a copy of a request, at a load scale above 1, has the same), 0 where the trace
 * has none. */
void wl_replay_tokens(const struct wl_replay *rp, struct sim_tokens *out /* OUT */);
/* Gaps met so far (a full replay: all of the window's). */
int wl_replay_gaps(const struct wl_replay *rp, double *gap_s);
void wl_replay_close(struct wl_replay *rp);

#endif
