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

#include "sim.h"

enum wl_arrival { WL_ARR_POISSON, WL_ARR_GAMMA, WL_ARR_UNIFORM };
enum wl_popularity { WL_POP_UNIFORM, WL_POP_ZIPF, WL_POP_EXPLICIT };

struct wl_segment {
    double duration_s;                 /* <= 0 for the last: until the end */
    double scale;                      /* multiplies the rate */
    double *model_scale;               /* [nmodels] a further factor per model, or NULL (1);
                                        * owned by the workload */
};

struct wl_trace_cfg;

/* A model's own rate over time (workload.rate_schedules): steps of step_s each, the last held
 * to the end, as segments whose scales are the steps' rates over the model's mean rate
 * (world.model_rps, at load scale 1). */
struct wl_schedule {
    int n;                             /* 0: the model follows the workload's rate */
    struct wl_segment *seg;            /* [n], owned */
};

/* A model's request sizes (workload.sizes): lognormal with this mean and coefficient of
 * variation (cv 0: every request exactly `mean`), drawn from the stream "sizes.<model>", so
 * arrival times do not change when sizes are added. mean 0: the model's requests have none. */
struct wl_size {
    double mean, cv;
};

/* An LLM model's token lengths (workload.tokens): prompt and output each lognormal with this
 * mean and coefficient of variation (cv 0: exactly the mean), rounded to whole tokens and
 * kept within [1, max], drawn from the stream "tokens.<model>". mean 0: none given. */
struct wl_tok_len {
    double mean, cv;
    int max;
};
struct wl_tokens {
    struct wl_tok_len prompt, output;
    /* shared prompt prefixes (system prompts): each prompt starts with one of `groups`
     * prefixes of `tokens` tokens, drawn uniformly from the stream "prefix.<model>", before
     * its own drawn length; its KV blocks are shared by the group's requests (sim_prefix).
     * groups 0: none. */
    int prefix_groups, prefix_tokens;
    /* empirical lengths instead of prompt and output: the (prompt, output) pairs of a token
     * trace's rows, pair i at emp[2i], emp[2i + 1]; each request takes one at random (stream
     * "tokens.<model>"), keeping a row's prompt and output together. NULL: none; owned. */
    int32_t *emp;
    long nemp;
};


/* The workload of an experiment, typed (the experiment layer fills it from `workload`): the
 * synthetic arrival process and popularity, or a real trace. The mean rates it gives each
 * model at load scale 1 are the world's rate_rps and model_rps. */
struct wl_workload {
    enum wl_arrival arrival;
    double gamma_shape;
    enum wl_popularity popularity;
    double zipf_s;
    int nsegments;
    struct wl_segment *segments;
    struct wl_trace_cfg *trace;        /* a real trace instead of rate_rps, or NULL; owned */
    struct wl_schedule *schedules;     /* [nmodels] or NULL; owned */
    struct wl_size *sizes;             /* [nmodels] or NULL; owned */
    struct wl_tokens *tokens;          /* [nmodels] or NULL; owned */
    struct wl_clients_cfg *clients;    /* closed-loop clients instead of rates, or NULL; owned
                                        * (wl_clients.h) */
};

/* Draws one model's request sizes (workload.sizes) from its stream "sizes.<model name>";
 * used by synthetic arrivals and by traces that give counts but no sizes. */
struct wl_sizer {
    gsl_rng *rng;                      /* NULL: the model's requests have no size (0) */
    double mean, mu, sigma;            /* lognormal: ln size ~ N(mu, sigma^2) */
};
/* Sets up model m's drawer (a no-op drawer where w has no sizes for it); SIM_ENOMEM. */
int wl_sizer_init(struct wl_sizer *z, const struct wl_workload *w, uint64_t seed, int model,
                  const char *model_name);
double wl_sizer_draw(struct wl_sizer *z);
void wl_sizer_free(struct wl_sizer *z);

struct wl_stream {
    gsl_rng *rng;
    enum wl_arrival kind;
    double shape;
    double rate_per_ns;          /* at multiplier 1 */
    double u;                    /* cumulative operational time */
    const struct wl_segment *seg;
    int nseg, cur;               /* segment cursor */
    double seg_t0, seg_m0;       /* real time (ns) and M (ns) at the cursor's start */
    bool started;
    int model;                   /* the segments' model_scale index; -1: none */
};

/* Stream `name` of the run with master seed `seed`; rate_rps: its mean rate at multiplier 1
 * (already including the load scale). Its segments' per-model factors are those of model
 * st->model, which it sets to -1 (none); wl_stream_source sets it. */
int wl_stream_init(struct wl_stream *st, const struct wl_workload *w, uint64_t seed,
                   const char *name, double rate_rps);
void wl_stream_free(struct wl_stream *st);
/* The next arrival time in ns, or INT64_MAX when the rate stays zero forever. */
int64_t wl_stream_next(struct wl_stream *st);

/* Stream `name` as an engine arrival source (sim.h) whose arrivals are of `model` (-1: the
 * application's); its frontend is left -1. */
int wl_stream_source(const struct wl_workload *w, uint64_t seed, const char *name,
                     double rate_rps, int model, struct sim_source *out /* OUT */);

/* Normalised popularity shares (sum 1) of the world's models into shares[nmodels]. */
void wl_popularity_shares(const struct wl_workload *w, const struct sim_world *world,
                          double *shares /* OUT */);

#endif
