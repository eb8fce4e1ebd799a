/* cal_validate — the sim-vs-real check: a real FIFO batching server runs the real network
 * (any backend) on a Poisson arrival sequence at several loads, and the simulator replays the
 * same arrival timestamps (workload.trace, csv_timestamps) with the calibrated profile and
 * the fifo policy on one executor. Per load: mean, p50 and p99 latency, throughput and
 * utilisation from both, and their relative errors.
 *
 * The real server: one executor; when idle it takes every arrived request up to max_batch
 * (oldest first) and runs one forward pass at that batch size (one prepared backend
 * instance per batch size); latency = completion - arrival, wall clock.
 *
 * A third side separates the two sources of error: the simulator run with the service times
 * the real passes of that load showed ("observed"), so sim - observed is the profile's drift
 * and observed - real the simulator's own error. */
#ifndef CAL_VALIDATE_H
#define CAL_VALIDATE_H

#include <stdint.h>

#include "cal_backend.h"

#define CAL_VALIDATE_MAX_LOADS 16

struct cal_validate_opts {
    const struct cal_backend_ops *be;
    struct cal_opts bo;
    const struct cal_net *net;
    const char *zoo;            /* calibrated zoo file */
    const char *model;          /* model name in the zoo (default: the net's name) */
    const char *kind;           /* executor kind in the zoo (default: its executor_kind) */
    int max_batch;
    int nloads;
    double loads[CAL_VALIDATE_MAX_LOADS]; /* fractions of the profile's capacity B / l(B) */
    int requests;               /* per load */
    uint64_t seed;
    const char *scratch;        /* folder for the arrival file and config */
};

struct cal_side {
    double mean_ms, p50_ms, p99_ms, tput_rps, util, mean_batch;
};

#define CAL_VALIDATE_MAX_BATCH 64
#define CAL_VALIDATE_NOISE_RUNS 10

struct cal_validate_row {
    double load, rate_rps;
    struct cal_side real, sim;
    /* the simulator again, with the service times this load's real passes showed (per batch
     * size: their mean, and a distribution fitted to them; sizes that did not run: the
     * profile's): what remains of the error is the simulator's, not the profile's */
    struct cal_side obs;
    /* lag-1 autocorrelation of the real passes' times over the profile's l(b), in the order
     * they ran: near 0 when passes vary independently (what the simulator draws), above when
     * slow passes come in runs (another tenant on the machine), which no per-pass
     * distribution reproduces */
    double autocorr;
    /* the noise floor: the relative standard deviation of the simulator's mean and p99 over
     * CAL_VALIDATE_NOISE_RUNS other Poisson sequences of the same rate and length; a
     * comparison of one real run with one simulated run cannot be tighter than this */
    double noise_mean, noise_p99;
    /* service time by batch size: the real passes' mean, and the profile's l(b) */
    long real_n[CAL_VALIDATE_MAX_BATCH + 1];
    double real_exec_ms[CAL_VALIDATE_MAX_BATCH + 1], profile_ms[CAL_VALIDATE_MAX_BATCH + 1];
};

int cal_validate(const struct cal_validate_opts *o, struct cal_validate_row *rows /* OUT */);

#endif
