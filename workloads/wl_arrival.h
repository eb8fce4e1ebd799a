/* wl_arrival — arrival processes and model popularity.
 *
 * Each model's arrivals are one stream with its own GSL generator. A stream draws gaps in
 * *operational time* at unit rate (mean 1: Exp(1) for Poisson, Gamma(k, 1/k) for burstiness k,
 * exactly 1 for uniform) and maps the cumulative sum U to real time through the inverse of
 * the cumulative rate Lambda(t) = rate * M(t), where M integrates the piecewise-constant
 * segment multipliers. So the same draws serve every load scale (common random numbers across
 * goodput probes: scaling the load only compresses time) and every segment profile.
 * A uniform stream starts at a random phase in its first gap, so models do not align. */
#ifndef WL_ARRIVAL_H
#define WL_ARRIVAL_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "sim_config.h"

struct wl_stream {
    gsl_rng *rng;
    enum sim_arrival kind;
    double shape;
    double rate_per_ns;          /* at multiplier 1 */
    double u;                    /* cumulative operational time */
    const struct sim_segment *seg;
    int nseg, cur;               /* segment cursor */
    double seg_t0, seg_m0;       /* real time (ns) and M (ns) at the cursor's start */
    bool started;
};

/* rate_rps: this stream's mean rate at multiplier 1 (already including the load scale). */
int wl_stream_init(struct wl_stream *st, const struct sim_config *cfg, const char *name,
                   double rate_rps);
void wl_stream_free(struct wl_stream *st);
/* The next arrival time in ns, or INT64_MAX when the rate stays zero forever. */
int64_t wl_stream_next(struct wl_stream *st);

/* Normalised popularity shares (sum 1) of cfg's models into shares[nmodels]. */
void wl_popularity_shares(const struct sim_config *cfg, double *shares /* OUT */);

#endif
