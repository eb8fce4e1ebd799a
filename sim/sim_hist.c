/* sim_hist — HDR-style bucket arithmetic and nearest-rank quantiles. */
#include "sim_hist.h"

#include <math.h>
#include <string.h>

#define SUB (1 << SIM_HIST_SUB_BITS)

void sim_hist_reset(struct sim_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = INT64_MAX;
}

int sim_hist_bucket_of(int64_t v)
{
    if (v < 0)
        v = 0;
    if (v >= SIM_HIST_MAX)
        v = SIM_HIST_MAX - 1;
    if (v < 2 * SUB)
        return (int)v;
    int e = 63 - __builtin_clzll((unsigned long long)v);
    int shift = e - SIM_HIST_SUB_BITS;
    int mant = (int)(v >> shift);                    /* in [SUB, 2*SUB) */
    return 2 * SUB + (shift - 1) * SUB + (mant - SUB);
}

void sim_hist_bucket_range(int idx, int64_t *lo, int64_t *hi)
{
    if (idx < 2 * SUB) {
        *lo = *hi = idx;
        return;
    }
    int shift = (idx - 2 * SUB) / SUB + 1;
    int64_t mant = (idx - 2 * SUB) % SUB + SUB;
    *lo = mant << shift;
    *hi = ((mant + 1) << shift) - 1;
}

void sim_hist_add(struct sim_hist *h, int64_t v)
{
    if (v >= SIM_HIST_MAX)
        h->clamped++;
    h->counts[sim_hist_bucket_of(v)]++;
    h->n++;
    h->sum += (double)v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

void sim_hist_merge(struct sim_hist *into, const struct sim_hist *from)
{
    for (int i = 0; i < SIM_HIST_BUCKETS; i++)
        into->counts[i] += from->counts[i];
    into->n += from->n;
    into->clamped += from->clamped;
    into->sum += from->sum;
    if (from->n) {
        if (from->min < into->min)
            into->min = from->min;
        if (from->max > into->max)
            into->max = from->max;
    }
}

int64_t sim_hist_quantile(const struct sim_hist *h, double q)
{
    if (h->n == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < SIM_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            int64_t lo, hi;
            sim_hist_bucket_range(i, &lo, &hi);
            int64_t mid = lo + (hi - lo) / 2;
            if (mid < h->min)
                mid = h->min;
            if (mid > h->max)
                mid = h->max;
            return mid;
        }
    }
    return h->max;
}

double sim_hist_mean(const struct sim_hist *h)
{
    return h->n ? h->sum / (double)h->n : 0.0;
}
