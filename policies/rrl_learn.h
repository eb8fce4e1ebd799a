/* rrl_learn — the learning core of RRL (specs/rrl.md, "Algorithm", "Estimator g"), apart from
 * the simulator so that it can be tested by hand: a grid of configurations over three knobs,
 * regions of radius delta (Euclidean over grid indices), per-state Q tables with visit counts,
 * the region update, Boltzmann exploration on relative excess cost, and the latency estimator
 * (an MLP 4 -> 256 -> 64 -> 1 trained by FTRL-Proximal on (load, knob indices) -> ln cost).
 * Deterministic: the draws come from the caller's uniforms and the estimator's own stream. */
#ifndef RRL_LEARN_H
#define RRL_LEARN_H

#include <stdbool.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "mlp.h"

#define RRL_MAX_VALUES 64             /* per knob */
#define RRL_MAX_CONFIGS 100000

/* Configurations: every combination of the knobs' values, numbered in grid-index order (the
 * last knob fastest). */
struct rrl_grid {
    int nv[3];                        /* values per knob */
    int val[3][RRL_MAX_VALUES];
    int ncfg;
};
void rrl_grid_index(const struct rrl_grid *g, int c, int idx[3]);
void rrl_grid_config(const struct rrl_grid *g, int c, int v[3]);
/* c moved by `steps` grid indices, or -1 outside the grid. */
int rrl_grid_step(const struct rrl_grid *g, int c, const int steps[3]);

enum { RRL_Q_OPTIMISTIC, RRL_Q_FIRST };

/* The learning parameters (policy.params of the same names; docs/policies.md). */
struct rrl_q_params {
    double beta, gamma, omega, alpha_min, alpha_const;   /* alpha_const 0: n^-omega */
    int q_init;                                          /* RRL_Q_OPTIMISTIC or RRL_Q_FIRST */
};
/* The spec's: beta 50, gamma 0.5, omega 0.8, alpha_min 0, no alpha_const, optimistic (the
 * rrl policy's param table takes its defaults from these). */
#define RRL_Q_BETA 50
#define RRL_Q_GAMMA 0.5
#define RRL_Q_OMEGA 0.8
extern const struct rrl_q_params RRL_Q_DEFAULTS;

struct rrl_q {
    struct rrl_grid grid;
    int nstates;
    struct rrl_q_params p;
    int (*off)[3];                    /* region offsets, the origin first */
    int noff;
    double *q;                        /* [nstates][ncfg] */
    uint32_t *visits;                 /* [nstates][ncfg] */
    bool *seen;                       /* [nstates]: a cost was seen there */
    double *weight;                   /* [ncfg] scratch */
};
/* Tables for `nstates` states over grid g, Q = 1 / |C|, regions of `radius`, parameters p.
 * 0, SIM_ENOMEM. */
int rrl_q_init(struct rrl_q *q, const struct rrl_grid *g, int nstates, double radius,
               const struct rrl_q_params *p);
void rrl_q_free(struct rrl_q *q);
/* The configurations of c's region, c first, into out (room for q->noff); returns how many. */
int rrl_q_region(const struct rrl_q *q, int c, int *out);
double rrl_q_min(const struct rrl_q *q, int s);
/* The best visited configuration in state s, or -1. */
int rrl_q_greedy(const struct rrl_q *q, int s);
/* The region update after cost r in state s0 under configuration c0, next state s1:
 * y = gamma min Q(s1, .) (before any change); for the n configurations region[i] (from
 * rrl_q_region, c0 first) with estimates rhat[i]: visits += 1, alpha = max(alpha_min,
 * visits^-omega) (or alpha_const), Q <- (1 - alpha) Q + alpha (rhat + y). With q_init "first"
 * the first cost seen in s0 fills Q(s0, .) beforehand. */
void rrl_q_update(struct rrl_q *q, int s0, double r, const int *region, const double *rhat,
                  int n, int s1);
/* pi(s, c) ~ exp(-beta (Q(s,c) - Q*) / ((1 - gamma) Q*)), Q* = min Q(s, .); the
 * configuration where the uniform u in [0, 1) falls, cumulating in grid-index order. */
int rrl_q_draw(struct rrl_q *q, int s, double u);

/* The latency estimator g: x = (load / mean load, knob indices / (values - 1)). */
struct rrl_est {
    struct mlp net;
    struct ftrl opt;
    gsl_rng *r;                       /* initial weights and minibatch draws */
    int steps, batch;
    double (*x)[4], *y;               /* every sample so far */
    int n, cap;
    double loss;                      /* mean loss of the last step's minibatch */
};
int rrl_est_init(struct rrl_est *e, gsl_rng *r, double lr, int steps, int batch);
void rrl_est_free(struct rrl_est *e);
void rrl_est_features(const struct rrl_grid *g, double load, int c, double x[4]);
double rrl_est_predict(struct rrl_est *e, const struct rrl_grid *g, double load, int c);
/* Adds sample (x(load, c), y) and trains: `steps` FTRL steps, each on `batch` samples drawn
 * with replacement from all so far, loss (g - y)^2 / 2 averaged over the minibatch. */
int rrl_est_train(struct rrl_est *e, const struct rrl_grid *g, double load, int c, double y);

#endif
