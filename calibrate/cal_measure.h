/* cal_measure — timing a prepared network: warm-up passes, then repetitions, summarised by
 * median, p99, mean, standard deviation, min and max (GSL statistics). */
#ifndef CAL_MEASURE_H
#define CAL_MEASURE_H

#include "cal_backend.h"

struct cal_point {
    int batch, reps;
    double median_ms, p99_ms, mean_ms, sd_ms, min_ms, max_ms;
    struct cal_mem_info mem;
};

/* Prepares `net` at `batch` on the backend instance, runs `warmup` untimed and `reps` timed
 * forward passes on a deterministic input, and leaves the instance prepared. */
int cal_measure(const struct cal_backend_ops *be, void *st, const struct cal_net *net, int batch,
                int warmup, int reps, struct cal_point *out /* OUT */);

/* Summarises n samples (sorted in place). */
void cal_point_stats(double *ms, int n, struct cal_point *out /* OUT */);

#endif
