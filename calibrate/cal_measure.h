/* cal_measure — timing a prepared network: warm-up passes, then repetitions, summarised by
 * median, p99, mean, standard deviation, min and max (GSL statistics); or serving-like, with
 * batch sizes interleaved and idle gaps between passes, and the service-time distribution
 * fitted per batch size; the device's idle time between back-to-back served passes. */
#ifndef CAL_MEASURE_H
#define CAL_MEASURE_H

#include "cal_backend.h"

/* A service-time distribution fitted to a point's passes: duration / mean = shift + X, X
 * lognormal or gamma with mean 1 - shift and the passes' coefficient of variation (moments),
 * the constant share `shift` chosen on a grid by the Kolmogorov-Smirnov distance `ks` (the
 * goodness of fit; `ks_crit` is its 5% critical value for this many passes, 1.36 / sqrt(n)). */
enum { CAL_SVC_LOGNORMAL, CAL_SVC_GAMMA, CAL_SVC_NDIST };

struct cal_svc_fit {
    double shift, ks;
};

struct cal_point {
    int batch, reps;
    double median_ms, p99_ms, mean_ms, sd_ms, min_ms, max_ms;
    struct cal_mem_info mem;
    bool serving;                       /* timed serving-like (cal_measure_serving) */
    double p90_ms, cv, ks_crit;
    struct cal_svc_fit svc[CAL_SVC_NDIST];
};

/* Prepares `net` at `batch` on the backend instance, runs `warmup` untimed and `reps` timed
 * forward passes on a deterministic input, and leaves the instance prepared. */
int cal_measure(const struct cal_backend_ops *be, void *st, const struct cal_net *net, int batch,
                int warmup, int reps, struct cal_point *out /* OUT */);

/* Summarises n samples (sorted in place). */
void cal_point_stats(double *ms, int n, struct cal_point *out /* OUT */);

/* Fits both distributions of cal_svc_fit to n sorted samples; fills out's cv, ks_crit, svc. */
void cal_svc_fit(const double *sorted_ms, int n, struct cal_point *out);

/* Serving-like timing (the way a serving loop runs passes, not back to back): one prepared
 * instance per batch size; `reps` passes of each size in one random interleaved order (a GSL
 * shuffle seeded by `seed`), each after an idle gap drawn exponential with mean (the last
 * pass's time) x (1 - load) / load, so the device is busy about `load` of the time and caches
 * are not kept warm on purpose. Per batch size: the statistics and both fitted
 * distributions (pts[j].serving). `warmup` untimed passes per size first. */
int cal_measure_serving(const struct cal_backend_ops *be, const struct cal_opts *bo,
                        const struct cal_net *net, const int *batches, int nb, int warmup,
                        int reps, double load, unsigned long seed, struct cal_point *pts /* OUT */);

/* The host's share of a served batch on a device with a host/device split (the backend's
 * serve_gaps): `passes` passes back to back on an instance cal_measure left prepared, with or
 * without the input and output copies. Gaps: the device idle between consecutive passes. */
struct cal_gaps {
    int passes;
    double gpu_median_ms;
    double median_us, mean_us, p90_us, p99_us, min_us, max_us;
};

/* SIM_EUNAVAIL when the backend has no serve_gaps (the CPU's: its passes are host work). */
int cal_measure_gaps(const struct cal_backend_ops *be, void *st, int passes, bool copies,
                     struct cal_gaps *out /* OUT */);

#endif
