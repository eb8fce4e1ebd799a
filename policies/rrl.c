/* rrl — region-based reinforcement learning of a serving node's parallelism (Qin et al.,
 * "Swift Machine Learning Model Serving Scheduling: A Region Based Reinforcement Learning
 * Approach", SC 2019; specs/rrl.md, "MDP" and "Algorithm").
 *
 * Every slot the controller picks one configuration c of a discrete grid for all nodes
 * (rrl_node.h: CPU [k, p, t], GPU [B, T_ms, m]). At the end of slot t it observes the cost r_t
 * (mean latency, p95, or the resource objective) of the requests that ended in the slot and
 * the slot's load, then:
 *   1. (radius > 0) trains the latency estimator g — an MLP 4 -> 256 -> 64 -> 1 on
 *      (load, knob indices) -> ln cost, FTRL-Proximal, on samples drawn from all so far;
 *   2. updates Q(s_t, c) for every c within `radius` of c_t (Euclidean over grid indices), with
 *      r^(c) = r_t exp(g(c) - g(c_t)) and the visit-count step n^-omega, towards
 *      r^(c) + gamma min Q(s_{t+1}, .);
 *   3. draws c_{t+1} by Boltzmann exploration on the relative excess cost in the next state.
 * radius 0 is point-based Q-learning (no estimator). One state by default (one Q table, the
 * authors' scripts); `load_bin` > 0 makes states of load bins of that width x the configured
 * mean rate. The slot loop, the node and the common time series
 * are rrl_ctl's; this file adds rrl.est_loss, the best visited configuration of the slot's
 * state (rrl.greedy_k, ...) and, with `oracle_table`, its regret (rrl.greedy_regret). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rrl_ctl.h"
#include "sim_err.h"
#include "sim_param.h"

struct rrl {
    struct rrl_ctl ctl;               /* (first: the shared hooks take the state as one) */
    struct rrl_q q;                   /* Q tables, regions */
    int *region;                      /* [q.noff] scratch */
    double *rhat;                     /* [q.noff] scratch */
    bool nomem;                       /* the estimator could not keep a sample */
    gsl_rng *explore;
    bool est_on;
    struct rrl_est est;
    /* params (the table below) */
    struct rrl_q_params qp;
    double radius, est_lr;
    int est_steps, est_batch;
};

static const char *const QI[] = {"optimistic", "first", NULL};
#define QP(f) SIM_P_AT(struct rrl, qp.f, double)
static const struct sim_param params[] = {
    RRL_CTL_INCLUDE,
    RRL_GRID_ROW,
    {"radius", SIM_P_NUM, SIM_P_AT(struct rrl, radius, double), .cons = SIM_J_NONNEG,
     .def = 2, .type_doc = ">= 0 and <= 10",
     .doc = "the region (Euclidean, in grid steps) one observation updates through the "
            "estimator; 0: point-based Q-learning, no estimator"},
    {"beta", SIM_P_NUM, QP(beta), .cons = SIM_J_POS, .def = RRL_Q_BETA,
     .doc = "the exploration's inverse temperature"},
    {"gamma", SIM_P_NUM, QP(gamma), .cons = SIM_J_UNIT, .def = RRL_Q_GAMMA,
     .type_doc = "in [0, 1)", .doc = "the discount"},
    {"alpha_omega", SIM_P_NUM, QP(omega), .cons = SIM_J_UNIT, .def = RRL_Q_OMEGA,
     .doc = "the learning rate n^-omega over a configuration's visits n"},
    {"alpha_min", SIM_P_NUM, QP(alpha_min), .cons = SIM_J_UNIT, .def = 0,
     .doc = "the learning rate's floor"},
    {"alpha_const", SIM_P_NUM, QP(alpha_const), .cons = SIM_J_UNIT, .def = 0,
     .doc = "a constant learning rate instead (0: none)"},
    {"q_init", SIM_P_ENUM, SIM_P_AT_ENUM(struct rrl, qp.q_init), .choices = QI,
     .doc = "Q starts at 1 / |C| (the paper: the first slots sweep the grid) or at the first "
            "cost seen in a state (the authors' scripts)"},
    {"est_lr", SIM_P_NUM, SIM_P_AT(struct rrl, est_lr, double), .cons = SIM_J_POS,
     .def = 0.1, .doc = "the estimator's FTRL-Proximal learning rate"},
    {"est_steps", SIM_P_INT, SIM_P_AT(struct rrl, est_steps, int), .lo = 0, .hi = 100000,
     .def = 10, .doc = "the estimator's training steps per slot (the spec's 50; below)"},
    {"est_batch", SIM_P_INT, SIM_P_AT(struct rrl, est_batch, int), .lo = 1, .hi = 100000,
     .def = 32, .doc = "the samples per training step, drawn with replacement"},
    {NULL}};
#undef QP

/* Steps 2-4 of the algorithm: cost r under c_t in s_t at load `lam` (relative to the mean),
 * next state s1. */
static void learn(struct rrl *st, double r, double lam, int s1)
{
    const struct rrl_ctl *ctl = &st->ctl;
    int n = rrl_q_region(&st->q, ctl->cfg, st->region);
    st->rhat[0] = r;                  /* (the region's first member is c_t) */
    if (st->est_on) {
        if (rrl_est_train(&st->est, &ctl->grid, lam, ctl->cfg, log(r)))
            st->nomem = true;           /* said by next(), which has the engine */
        double g0 = rrl_est_predict(&st->est, &ctl->grid, lam, ctl->cfg);
        for (int i = 1; i < n; i++) {
            double d = rrl_est_predict(&st->est, &ctl->grid, lam, st->region[i]) - g0;
            st->rhat[i] = r * exp(d < -50 ? -50 : d > 50 ? 50 : d);
        }
    }
    rrl_q_update(&st->q, ctl->state, r, st->region, st->rhat, n, s1);
}

/* The agent: learn from the slot, record the greedy configuration of the slot's state, draw
 * the next configuration in the next state. */
static int next(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o)
{
    struct rrl *st = (struct rrl *)ctl;
    if (o->observed) {
        learn(st, o->cost, o->load, o->state);
        if (st->nomem)
            sim_fail_nomem(s, "keeping the estimator's samples");
        if (st->est_on)
            sim_ts_add(s, "rrl.est_loss", -1, st->est.loss);
    }
    int g = rrl_q_greedy(&st->q, ctl->state);
    if (g >= 0)
        rrl_ctl_record(s, ctl, 1, g);
    return rrl_q_draw(&st->q, o->state, gsl_rng_uniform(st->explore));
}

/* ---------------------------------------------------------------- hooks */

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct rrl *st = state;
    struct rrl_ctl *ctl = &st->ctl;
    int rc;
    if ((rc = rrl_ctl_init(s, ctl, p, true, 2)) || (rc = rrl_ctl_parse_grid(ctl, p)) ||
        (rc = sim_params_values(params + 1, p, "policy.params", st)))   /* (after the shared
                                                                         * rows: rrl_ctl's) */
        return rc;
    const struct rrl_q_params qp = st->qp;
    double radius = st->radius, est_lr = st->est_lr;
    int steps = st->est_steps, batch = st->est_batch;
    if (qp.gamma >= 1)
        return sim_err_set(SIM_EINVAL, "policy.params.gamma: expected a number in [0, 1) "
                           "(the exploration divides by 1 - gamma), got %.15g", qp.gamma);
    if (radius > 10)
        return sim_err_set(SIM_EINVAL, "policy.params.radius: expected at most 10 grid steps, "
                           "got %.15g", radius);
    if ((rc = rrl_q_init(&st->q, &ctl->grid, ctl->nstates, radius, &qp)))
        return rc;
    st->region = malloc((size_t)st->q.noff * sizeof *st->region);
    st->rhat = malloc((size_t)st->q.noff * sizeof *st->rhat);
    if (!st->region || !st->rhat || !(st->explore = sim_policy_rng_named(s, "explore")))
        return SIM_ENOMEM;
    if (radius > 0) {                 /* (radius 0: point-based Q-learning, no estimator) */
        gsl_rng *r = sim_policy_rng_named(s, "estimator");
        if (!r || rrl_est_init(&st->est, r, est_lr, steps, batch))
            return SIM_ENOMEM;
        st->est_on = true;
    }
    int s0 = rrl_ctl_state_of(ctl, ctl->lam_bar);
    return rrl_ctl_start(s, ctl, p, rrl_q_draw(&st->q, s0, gsl_rng_uniform(st->explore)), next);
}

static void destroy(void *state)
{
    struct rrl *st = state;
    rrl_ctl_free(&st->ctl);
    rrl_q_free(&st->q);
    free(st->region);
    free(st->rhat);
    if (st->est_on)
        rrl_est_free(&st->est);
}

const struct policy_ops policy_rrl = {
    .name = "rrl",
    .summary = "RRL: region-based Q-learning of a node's parallelism (CPU [k, p, t], GPU "
               "[B, T_ms, m]) through a learned latency estimator; radius 0 = Q-learning",
    .state_size = sizeof(struct rrl),
    .params = params,
    .init = init,
    RRL_CTL_HOOKS,
    .destroy = destroy,
};
