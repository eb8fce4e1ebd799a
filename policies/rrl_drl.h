/* rrl_drl — the learning cores of RRL's deep-RL comparators (specs/rrl.md, "Baselines"), apart
 * from the simulator so that they can be tested alone:
 *  - the observation: the last 3 slots of (load / mean load, ln cost, utilisation), oldest
 *    first, then the knob indices scaled to [0, 1] (12 inputs);
 *  - 7 actions: 0 stays, 1 + 2j moves knob j one grid index down, 2 + 2j one up (clamped);
 *  - a DQN (CAPES-like: Q network, target network synchronised by the caller, replay memory,
 *    Huber loss on the TD error, RMSProp) and REINFORCE (DeepRM-like: softmax policy, episodes
 *    of T steps with undiscounted returns, baseline the mean return at that step over the last
 *    W episodes, one RMSProp step per episode). Networks are mlp.h's; draws come from the
 *    caller's uniforms and the cores' own streams, so runs are deterministic. */
#ifndef RRL_DRL_H
#define RRL_DRL_H

#include <gsl/gsl_rng.h>

#include "mlp.h"
#include "rrl_learn.h"

#define RRL_DRL_OBS 12
#define RRL_DRL_ACTIONS 7

/* c after action a (a knob at the end of its values stays). */
int rrl_drl_step(const struct rrl_grid *g, int c, int a);
/* hist[3i..3i+2] = (load ratio, ln cost, utilisation) of the last 3 slots, oldest first. */
void rrl_drl_obs(const struct rrl_grid *g, const double *hist, int c, double x[RRL_DRL_OBS]);

struct rrl_dqn {
    struct mlp q, target;
    struct rmsprop opt;
    gsl_rng *r;                       /* initial weights, minibatch draws */
    double gamma;
    int batch, cap, n, head;          /* replay memory: cap transitions, n held, next slot */
    double (*x)[RRL_DRL_OBS], (*x1)[RRL_DRL_OBS], *rew;
    int *a;
    double loss;                      /* mean Huber loss of the last minibatch */
};
/* Q network 12 -> hidden[0] -> ... -> 7 (nh hidden layers), the target a copy of it. */
int rrl_dqn_init(struct rrl_dqn *d, gsl_rng *r, int nh, const int *hidden, double lr,
                 double gamma, int cap, int batch);
void rrl_dqn_free(struct rrl_dqn *d);
int rrl_dqn_greedy(struct rrl_dqn *d, const double *x);
/* Stores a transition, overwriting the oldest when full. */
void rrl_dqn_store(struct rrl_dqn *d, const double *x, int a, double reward, const double *x1);
/* One RMSProp step on `batch` transitions drawn with replacement (none until `batch` are
 * held): TD error e = Q(x, a) - (reward + gamma max Q_target(x1, .)), Huber loss (delta 1). */
void rrl_dqn_train(struct rrl_dqn *d);
void rrl_dqn_sync(struct rrl_dqn *d);

struct rrl_pg {
    struct mlp net;
    struct rmsprop opt;
    int T, W;                         /* episode length, baseline window (episodes) */
    double (*x)[RRL_DRL_OBS], *rew;   /* the current episode: [T] */
    int *a, t;
    double *ret;                      /* [W][T] returns of the last W episodes */
    int episodes;
    double loss;                      /* the last update's -mean(advantage log pi) */
};
int rrl_pg_init(struct rrl_pg *p, gsl_rng *r, int hidden, double lr, int T, int W);
void rrl_pg_free(struct rrl_pg *p);
/* The policy's probabilities at x, and the action where the uniform u falls. */
void rrl_pg_probs(struct rrl_pg *p, const double *x, double probs[RRL_DRL_ACTIONS]);
int rrl_pg_draw(struct rrl_pg *p, const double *x, double u);
/* Appends a step of the episode; after the T-th, updates the policy and starts the next
 * episode (returns 1 then, else 0). */
int rrl_pg_record(struct rrl_pg *p, const double *x, int a, double reward);

#endif
