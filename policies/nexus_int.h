/* nexus_int — what the Nexus policy's two files share: its state, and the planner's
 * functions (nexus_plan.c: profile math, placement, the epoch schedule) that the data path
 * and setup (nexus.c) call, and nexus_publish (nexus.c) that the epoch calls. */
#ifndef NEXUS_INT_H
#define NEXUS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

#define NET_S 0.002                 /* network allowance in the batch budget */
#define POLL_NS 50000               /* backend idle poll: 50 us */
#define CEIL_EPS 1e-3
#define HIST 30                     /* rps history: 3 * avg_interval / beacon */

enum { TAG_BEACON = 1, TAG_ROUND = 2 };

struct inst {                       /* a session's instance on one backend */
    bool on;
    int batch, max_batch;
    double lat, duty_max, workload, tp;
};

struct backend {
    struct inst *in;                /* [nmodels] */
    int n;                          /* instances */
    double duty, exec;
    bool overload, is_static;
    int64_t idle_since;             /* hosted nothing since (elastic release) */
    /* the backend loop */
    int *batch;                     /* [nmodels] batch from the last model table */
    int pos;                        /* next model in the round */
    int64_t round_start, round_exec;
    bool ran, idle, busy, in_round;
    uint64_t timer;
};

struct route {                      /* one frontend's routing state for one model */
    int n;
    int *be;                        /* backends, ascending */
    double *quantum, *deficit;
    int index;
};

struct session {
    double *weights;                /* [max execs] allocated throughput per backend */
    double *rate;                   /* [frontends] EWMA */
    double hist[HIST];
    int nhist;                      /* values so far (capped at HIST) */
    int hpos;
    double unassigned;
    double bmax_tp;                 /* T_max */
    int bmax;                       /* B_max; 0: cannot be placed */
    int bslo;                       /* largest b with l(b) <= SLO - NET (the most an
                                     * "accumulated" backend takes at once) */
};

struct nexus {
    double mult, alpha_ewma;
    int64_t beacon_ns, epoch_ns, min_epoch_ns, last_epoch;
    bool epoch_sched, pace, earliest_first, elastic, on_assign, configured_rate;
    bool accumulated;               /* backend_batch "accumulated" (the Symphony paper) */
    bool nomem;                     /* an allocation of the planner (const engine) failed:
                                     * the next hook says so (sim_fail_nomem) */
    int nm, nf, nx, maxx, kind;
    struct session *ss;
    struct backend *bk;             /* [max execs] */
    struct route *rt;               /* [nf * nm] */
    uint64_t *count;                /* [nf * nm] requests in the current second */
    int *idx;                       /* scratch [max execs] */
    int pending_adds;
};

/* ---- the planner (nexus_plan.c) */
/* l(b) of model m on the engine's kind with the profile multiplier, in ns and in s. */
int64_t nexus_lat_ns(const struct sim *s, const struct nexus *st, int m, int b);
double nexus_lat_s(const struct sim *s, const struct nexus *st, int m, int b);
/* Model m's SLO in seconds. */
double nexus_slo_s(const struct sim *s, int m);
/* B_max = largest b with l(b) <= (SLO - NET) / 2 (at least 1), capped at the model's max. */
int nexus_bmax_of(const struct sim *s, double mult, int kind, int m);
/* The instance of session m for rate w (saturated when w == 0 or w >= T_max); false if no
 * batch fits the SLO. */
bool nexus_inst_for(const struct sim *s, const struct nexus *st, int m, double w, struct inst *o);
/* The fraction of its duty cycle backend b's instances keep it busy. */
double nexus_occupancy(const struct backend *b);
/* Executor g is up and may take sessions. */
bool nexus_usable(const struct sim *s, int g);
/* PrepareLoadModel: the occupancy of g with session m at rate w added (and the instance it
 * would get), or a negative value when it does not fit. */
double nexus_prepare(const struct sim *s, struct nexus *st, int g, int m, double w,
                     struct inst *out, struct inst *scratch);
/* Session m's instance ni goes on backend g (loads the model where sessions are loaded on
 * assignment); nexus_unload takes it off. */
void nexus_place(const struct sim *s, struct nexus *st, int g, int m, const struct inst *ni);
void nexus_unload(const struct sim *s, struct nexus *st, int g, int m);
/* FindBestBackend: highest tp, or (for a residual that some GPU can absorb) best fit. */
int nexus_find_best(const struct sim *s, struct nexus *st, int m, double w, struct inst *out);
/* Allocates rate `rem` of session m on new backends until covered or none fits. */
double nexus_allocate(const struct sim *s, struct nexus *st, int m, double rem);
/* The throughput allocated to session m over all backends, requests/s. */
double nexus_session_tp(const struct nexus *st, int m);
/* One epoch of the scheduler: resize sessions from their rate history, spill overloaded
 * backends, place the unassigned rate, grow or release elastic executors, publish. */
void nexus_epoch(struct sim *s, struct nexus *st);

/* Pushes model tables to backends and routes to frontends (nexus.c). */
void nexus_publish(struct sim *s, struct nexus *st);

#endif
