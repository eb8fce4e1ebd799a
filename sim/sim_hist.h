/* sim_hist — log-linear histogram of non-negative int64 values (latencies in ns).
 *
 * Values below 256 are counted exactly; above, each power-of-two range is split into 128
 * linear sub-buckets, so a bucket's width is at most 1/128 of its lower bound and the
 * reported midpoint is within 0.4% of any value in it (the issue asks <= 1%). Memory is fixed
 * (SIM_HIST_BUCKETS counters), independent of the number of samples. Values above
 * SIM_HIST_MAX are clamped into the last bucket and counted in `clamped`. */
#ifndef SIM_HIST_H
#define SIM_HIST_H

#include <stdint.h>

#define SIM_HIST_SUB_BITS 7
#define SIM_HIST_MAX_EXP 40                          /* 2^40 ns ~ 18 minutes */
#define SIM_HIST_MAX ((int64_t)1 << SIM_HIST_MAX_EXP)
#define SIM_HIST_BUCKETS \
    ((1 << (SIM_HIST_SUB_BITS + 1)) + (SIM_HIST_MAX_EXP - SIM_HIST_SUB_BITS) * (1 << SIM_HIST_SUB_BITS))

struct sim_hist {
    uint64_t n, clamped;
    int64_t min, max;
    double sum;
    uint64_t counts[SIM_HIST_BUCKETS];
};

void sim_hist_reset(struct sim_hist *h);
void sim_hist_add(struct sim_hist *h, int64_t v);
void sim_hist_merge(struct sim_hist *into, const struct sim_hist *from);
/* q in [0,1]; the value of rank ceil(q*n) (nearest-rank definition); 0 when empty. */
int64_t sim_hist_quantile(const struct sim_hist *h, double q);
double sim_hist_mean(const struct sim_hist *h);

/* Bucket geometry, for storing non-empty buckets: [lo, hi] inclusive. */
int sim_hist_bucket_of(int64_t v);
void sim_hist_bucket_range(int idx, int64_t *lo /* OUT */, int64_t *hi /* OUT */);

#endif
