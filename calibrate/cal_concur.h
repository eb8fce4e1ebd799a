/* cal_concur — concurrent inferences on one CPU (RRL's performance model, specs/rrl.md): k
 * inferences in service at once, each in its own thread with its own prepared network and its
 * own OpenMP team of t intra-op threads, run back to back for a fixed time; the median
 * per-inference latency lat(k, t) and the cores they kept busy (the process's CPU time over
 * the wall time, OpenMP's spin-waits included as they are for a real server). Inter-op
 * parallelism (p > 1, a ready-list executor over the layer graph) is not measured yet: the
 * rows are p = 1. */
#ifndef CAL_CONCUR_H
#define CAL_CONCUR_H

#include "cal_backend.h"

struct cal_concur_point {
    int k, p, t;
    int n;                      /* inferences completed in the window, all threads */
    double median_ms, p99_ms;   /* per-inference latency */
    double cores;               /* CPU time / wall time over the window */
    double wall_s;
};

/* Measures one point: k threads (1..64) each creating the backend with t threads, preparing
 * `net` at `batch`, `warmup` untimed passes, then passes until `seconds` have gone by after
 * all started together. */
int cal_concur_measure(const struct cal_backend_ops *be, const struct cal_net *net, int batch,
                       int k, int t, int warmup, double seconds,
                       struct cal_concur_point *out /* OUT */);

#endif
