/* sim_run — building an engine from a world and its arrival sources, running it, and
 * the observer hooks tests and tracing attach (sim.h has the overview). */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "sim_llm_cost.h"
#include <stdbool.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "sim_types.h"

/* ---- building and running ---- */

/* Where arrivals come from: a stream the engine pulls one arrival at a time, keeping exactly
 * one pending (so memory does not grow with the run). The inputs layer (workloads/) makes
 * them; the engine only calls them. */
struct sim_source {
    /* The next arrival: its time in ns from the run's start (never before the previous nor
     * before now), its model (-1: a request of the world's application, whose path the
     * engine draws) and size (0 if none). Returns 1, 0 when there are no more, 2 when there
     * is none until one of its requests ends (a closed-loop source: see on_end), or a
     * negative code with sim_err_msg set (the run then fails and writes nothing). */
    int (*next)(void *ctx, int64_t *t_ns /* OUT */, int *model /* OUT */, double *size /* OUT */);
    void (*close)(void *ctx);          /* may be NULL */
    void *ctx;
    int frontend;                      /* the frontend of all its arrivals, or -1: each request
                                        * gets one by world->frontend_split */
    /* May be NULL. A request this source made ended (its response at t_end, or dropped at
     * t_end); a source that said 2 is asked for its next arrival again right after. */
    void (*on_end)(void *ctx, int64_t t_end);
    /* May be NULL. A closed-loop source's client: 1 when it is active at t (its step counts
     * it), else 0. The engine samples the sum as the `clients` time series. */
    int (*active)(void *ctx, int64_t t);
    /* May be NULL. The prompt and output tokens of the arrival `next` just gave (an LLM
     * model's request), and its prompt's block ids if the source knows them; asked once per
     * arrival, right after next. */
    void (*tokens)(void *ctx, struct sim_tokens *out /* OUT */);
};

/* An engine for world `w`, with every arrival rate multiplied by `load_scale` (the sources
 * already generate at that scale; the engine reports it to policies), run by policy `pol`
 * (NULL: w->policy). It takes over the `nsrc` sources, closing them in sim_destroy (also
 * when it fails). */
int sim_create(const struct sim_world *w, double load_scale, const struct policy_ops *pol,
               struct sim_source *src, int nsrc, struct sim **out /* OUT */);
void sim_destroy(struct sim *s);
/* Runs to the end (duration, then drain). Returns 0 or a negative code. */
int sim_run(struct sim *s);

/* Observer hooks, called by the engine (tests, tracing). Any may be NULL. */
struct sim_observer {
    void *ctx;
    void (*batch_start)(void *ctx, const struct sim *, const struct sim_batch *);
    /* batch_done also sees rejected batches (status != OK) but not preempted ones, which
     * batch_preempted sees at the instant they are cut */
    void (*batch_preempted)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*batch_done)(void *ctx, const struct sim *, const struct sim_batch *);
    void (*request_arrive)(void *ctx, const struct sim *, const struct sim_request *);
    /* a request of an application entering its next stage (r->stage > 0, r->model) */
    void (*request_stage)(void *ctx, const struct sim *, const struct sim_request *);
    void (*request_end)(void *ctx, const struct sim *, const struct sim_request *);
    void (*event)(void *ctx, const struct sim *, int64_t time);
    /* an LLM replica (executor e) starts an iteration of n sequences (sim_llm.h) */
    void (*llm_iteration)(void *ctx, const struct sim *, int e, const struct sim_llm_seq *seqs,
                          int n);
};
void sim_set_observer(struct sim *s, const struct sim_observer *obs);

#endif
