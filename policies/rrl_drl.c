/* rrl_drl — RRL's deep-RL comparators (specs/rrl.md, "Baselines"): the learning cores
 * (rrl_drl.h) and the two policies on rrl_ctl's slot loop.
 *
 * rrl-capes (a DQN storage tuner, Li et al., CAPES, SC 2017, as the RRL paper ran it): every
 * slot the transition (x_{t-1}, a_{t-1}, -ln r_t, x_t) enters the replay memory, one
 * minibatch step trains the Q network, the target network is synchronised every
 * `target_sync` slots, and the action is epsilon-greedy with epsilon falling linearly from 1 to
 * `epsilon_end` over `epsilon_slots` slots. Network 12 -> 200 -> 200 -> 7, RMSProp lr 0.001,
 * gamma 0.99, replay 10^4, minibatch 32.
 * rrl-deeprm (REINFORCE as in DeepRM, Mao et al., HotNets 2016): actions drawn from the
 * softmax policy 12 -> 20 -> 7; episodes of `episode_slots` (20) steps, undiscounted returns,
 * baseline the mean return at that step over the last `baseline_episodes` (20) episodes, one
 * RMSProp step (lr 0.001) per episode.
 * Both start at a configuration drawn uniformly (stream policy.rrl-*.explore, which also draws
 * the exploration; the networks' weights and minibatches come from stream "network"). Time
 * series besides rrl_ctl's: rrl.epsilon (capes), rrl.td_loss (capes), rrl.pg_loss (deeprm,
 * per episode). A slot in which nothing was observed (no request ended or waited) adds no
 * transition. */
#include "rrl_drl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rrl_ctl.h"
#include "sim_err.h"
#include "sim_param.h"

/* ---------------------------------------------------------------- observation, actions */

int rrl_drl_step(const struct rrl_grid *g, int c, int a)
{
    if (a <= 0 || a >= RRL_DRL_ACTIONS)
        return c;
    int steps[3] = {0, 0, 0};
    steps[(a - 1) / 2] = a % 2 ? -1 : 1;
    int d = rrl_grid_step(g, c, steps);
    return d >= 0 ? d : c;
}

void rrl_drl_obs(const struct rrl_grid *g, const double *hist, int c, double x[RRL_DRL_OBS])
{
    memcpy(x, hist, 9 * sizeof *x);
    int idx[3];
    rrl_grid_index(g, c, idx);
    for (int j = 0; j < 3; j++)
        x[9 + j] = g->nv[j] > 1 ? (double)idx[j] / (g->nv[j] - 1) : 0;
}

static int argmax(const double *v, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}

/* ---------------------------------------------------------------- DQN */

int rrl_dqn_init(struct rrl_dqn *d, gsl_rng *r, int nh, const int *hidden, double lr,
                 double gamma, int cap, int batch)
{
    memset(d, 0, sizeof *d);
    int size[MLP_MAX_LAYERS + 1] = {RRL_DRL_OBS};
    if (nh < 0 || nh >= MLP_MAX_LAYERS || cap < 1 || batch < 1)
        return -1;
    for (int i = 0; i < nh; i++)
        size[i + 1] = hidden[i];
    size[nh + 1] = RRL_DRL_ACTIONS;
    d->r = r;
    d->gamma = gamma;
    d->cap = cap;
    d->batch = batch;
    if (mlp_init(&d->q, nh + 1, size, r) || mlp_init(&d->target, nh + 1, size, r) ||
        rmsprop_init(&d->opt, &d->q, lr, 0.9, 1e-7))
        return rrl_dqn_free(d), -1;
    d->x = malloc((size_t)cap * sizeof *d->x);
    d->x1 = malloc((size_t)cap * sizeof *d->x1);
    d->rew = malloc((size_t)cap * sizeof *d->rew);
    d->a = malloc((size_t)cap * sizeof *d->a);
    if (!d->x || !d->x1 || !d->rew || !d->a)
        return rrl_dqn_free(d), -1;
    rrl_dqn_sync(d);
    return 0;
}

void rrl_dqn_free(struct rrl_dqn *d)
{
    mlp_free(&d->q);
    mlp_free(&d->target);
    rmsprop_free(&d->opt);
    free(d->x);
    free(d->x1);
    free(d->rew);
    free(d->a);
    d->x = d->x1 = NULL;
    d->rew = NULL;
    d->a = NULL;
}

int rrl_dqn_greedy(struct rrl_dqn *d, const double *x)
{
    return argmax(mlp_forward(&d->q, x), RRL_DRL_ACTIONS);
}

void rrl_dqn_store(struct rrl_dqn *d, const double *x, int a, double reward, const double *x1)
{
    int i = d->head;
    memcpy(d->x[i], x, sizeof d->x[i]);
    memcpy(d->x1[i], x1, sizeof d->x1[i]);
    d->a[i] = a;
    d->rew[i] = reward;
    d->head = (i + 1) % d->cap;
    if (d->n < d->cap)
        d->n++;
}

void rrl_dqn_train(struct rrl_dqn *d)
{
    if (d->n < d->batch)
        return;
    mlp_zero_grad(&d->q);
    double loss = 0, dout[RRL_DRL_ACTIONS];
    for (int k = 0; k < d->batch; k++) {
        int j = (int)gsl_rng_uniform_int(d->r, (unsigned long)d->n);
        const double *t = mlp_forward(&d->target, d->x1[j]);
        double y = d->rew[j] + d->gamma * t[argmax(t, RRL_DRL_ACTIONS)];
        double e = mlp_forward(&d->q, d->x[j])[d->a[j]] - y;
        loss += fabs(e) <= 1 ? e * e / 2 : fabs(e) - 0.5;
        memset(dout, 0, sizeof dout);
        dout[d->a[j]] = (e > 1 ? 1 : e < -1 ? -1 : e) / d->batch;
        mlp_backward(&d->q, dout);
    }
    rmsprop_step(&d->opt, &d->q);
    d->loss = loss / d->batch;
}

void rrl_dqn_sync(struct rrl_dqn *d)
{
    memcpy(d->target.theta, d->q.theta, (size_t)d->q.np * sizeof *d->q.theta);
}

/* ---------------------------------------------------------------- REINFORCE */

int rrl_pg_init(struct rrl_pg *p, gsl_rng *r, int hidden, double lr, int T, int W)
{
    memset(p, 0, sizeof *p);
    int size[3] = {RRL_DRL_OBS, hidden, RRL_DRL_ACTIONS};
    if (T < 1 || W < 1 || mlp_init(&p->net, 2, size, r) ||
        rmsprop_init(&p->opt, &p->net, lr, 0.9, 1e-7))
        return rrl_pg_free(p), -1;
    p->T = T;
    p->W = W;
    p->x = malloc((size_t)T * sizeof *p->x);
    p->rew = malloc((size_t)T * sizeof *p->rew);
    p->a = malloc((size_t)T * sizeof *p->a);
    p->ret = calloc((size_t)T * (size_t)W, sizeof *p->ret);
    if (!p->x || !p->rew || !p->a || !p->ret)
        return rrl_pg_free(p), -1;
    return 0;
}

void rrl_pg_free(struct rrl_pg *p)
{
    mlp_free(&p->net);
    rmsprop_free(&p->opt);
    free(p->x);
    free(p->rew);
    free(p->a);
    free(p->ret);
    p->x = NULL;
    p->rew = p->ret = NULL;
    p->a = NULL;
}

void rrl_pg_probs(struct rrl_pg *p, const double *x, double probs[RRL_DRL_ACTIONS])
{
    const double *z = mlp_forward(&p->net, x);
    double top = z[argmax(z, RRL_DRL_ACTIONS)], sum = 0;
    for (int k = 0; k < RRL_DRL_ACTIONS; k++)
        sum += probs[k] = exp(z[k] - top);
    for (int k = 0; k < RRL_DRL_ACTIONS; k++)
        probs[k] /= sum;
}

int rrl_pg_draw(struct rrl_pg *p, const double *x, double u)
{
    double pr[RRL_DRL_ACTIONS], acc = 0;
    rrl_pg_probs(p, x, pr);
    for (int k = 0; k < RRL_DRL_ACTIONS - 1; k++)
        if (u < (acc += pr[k]))
            return k;
    return RRL_DRL_ACTIONS - 1;
}

int rrl_pg_record(struct rrl_pg *p, const double *x, int a, double reward)
{
    memcpy(p->x[p->t], x, sizeof p->x[p->t]);
    p->a[p->t] = a;
    p->rew[p->t] = reward;
    if (++p->t < p->T)
        return 0;
    double *ret = p->ret + (size_t)(p->episodes % p->W) * (size_t)p->T;
    for (int t = p->T - 1; t >= 0; t--)
        ret[t] = p->rew[t] + (t + 1 < p->T ? ret[t + 1] : 0);
    p->episodes++;
    int held = p->episodes < p->W ? p->episodes : p->W;
    mlp_zero_grad(&p->net);
    double loss = 0, pr[RRL_DRL_ACTIONS], dout[RRL_DRL_ACTIONS];
    for (int t = 0; t < p->T; t++) {
        double b = 0;
        for (int e = 0; e < held; e++)
            b += p->ret[(size_t)e * (size_t)p->T + (size_t)t];
        double adv = ret[t] - b / held;
        rrl_pg_probs(p, p->x[t], pr);
        loss -= adv * log(pr[p->a[t]] > 1e-300 ? pr[p->a[t]] : 1e-300) / p->T;
        for (int k = 0; k < RRL_DRL_ACTIONS; k++)
            dout[k] = adv * (pr[k] - (k == p->a[t])) / p->T;
        mlp_backward(&p->net, dout);
    }
    rmsprop_step(&p->opt, &p->net);
    p->loss = loss;
    p->t = 0;
    return 1;
}

/* ---------------------------------------------------------------- the policies */

enum { CAPES, DEEPRM };

struct drl {
    struct rrl_ctl ctl;               /* (first: the shared hooks take the state as one) */
    int kind;
    double hist[9];                   /* the last 3 slots, oldest first (rrl_drl_obs) */
    double x[RRL_DRL_OBS];            /* x_{t-1}, the observation a_prev was chosen at */
    int a_prev;
    bool have_x;
    double lnr;                       /* the last ln cost seen */
    long slots, eps_slots, sync;
    double eps_end;
    double lr, gamma;                 /* params, with the two below (the tables) */
    long replay, batch, episode_slots, baseline_episodes;
    gsl_rng *explore;
    struct rrl_dqn dqn;
    struct rrl_pg pg;
};

#define DL(f) SIM_P_AT(struct drl, f, long)
#define LR_ROW                                                                              \
    {"lr", SIM_P_NUM, SIM_P_AT(struct drl, lr, double), .cons = SIM_J_POS, .def = 0.001,      \
     .doc = "RMSProp's learning rate"}
/* After the shared rows (rrl_ctl's), the agent's own: init reads them from params + 1. */
static const struct sim_param CAPES_PARAMS[] = {
    RRL_CTL_INCLUDE, RRL_GRID_ROW, LR_ROW,
    {"gamma", SIM_P_NUM, SIM_P_AT(struct drl, gamma, double), .cons = SIM_J_UNIT, .def = 0.99,
     .doc = "the discount"},
    {"epsilon_end", SIM_P_NUM, SIM_P_AT(struct drl, eps_end, double), .cons = SIM_J_UNIT,
     .def = 0.05, .doc = "epsilon falls linearly from 1 to this"},
    {"epsilon_slots", SIM_P_LONG, DL(eps_slots), .lo = 1, .hi = 100000000, .def = 1000,
     .doc = "over this many slots"},
    {"replay", SIM_P_LONG, DL(replay), .lo = 1, .hi = 10000000, .def = 10000,
     .doc = "the replay memory's transitions"},
    {"minibatch", SIM_P_LONG, DL(batch), .lo = 1, .hi = 100000, .def = 32,
     .doc = "one minibatch of this many per slot, once that many are held"},
    {"target_sync", SIM_P_LONG, DL(sync), .lo = 1, .hi = 100000000, .def = 100,
     .doc = "the target network is synchronised every this many slots"},
    {NULL}};
static const struct sim_param DEEPRM_PARAMS[] = {
    RRL_CTL_INCLUDE, RRL_GRID_ROW, LR_ROW,
    {"episode_slots", SIM_P_LONG, DL(episode_slots), .lo = 1, .hi = 100000, .def = 20,
     .doc = "an episode's slots (one RMSProp step per episode)"},
    {"baseline_episodes", SIM_P_LONG, DL(baseline_episodes), .lo = 1, .hi = 100000, .def = 20,
     .doc = "the baseline is the mean return at a step over the last this many episodes"},
    {NULL}};
#undef DL
#undef LR_ROW

static int next(struct sim *s, struct rrl_ctl *ctl, const struct rrl_slot *o)
{
    struct drl *st = (struct drl *)ctl;
    if (o->observed)
        st->lnr = log(o->cost);
    memmove(st->hist, st->hist + 3, 6 * sizeof *st->hist);
    st->hist[6] = o->load;
    st->hist[7] = st->lnr;
    st->hist[8] = o->util;
    double x1[RRL_DRL_OBS];
    rrl_drl_obs(&ctl->grid, st->hist, ctl->cfg, x1);
    st->slots++;
    int a;
    if (st->kind == CAPES) {
        if (st->have_x && o->observed) {
            rrl_dqn_store(&st->dqn, st->x, st->a_prev, -st->lnr, x1);
            rrl_dqn_train(&st->dqn);
            if (st->dqn.n >= st->dqn.batch)
                sim_ts_add(s, "rrl.td_loss", -1, st->dqn.loss);
        }
        if (st->slots % st->sync == 0)
            rrl_dqn_sync(&st->dqn);
        double f = st->slots >= st->eps_slots ? 1 : (double)st->slots / (double)st->eps_slots;
        double eps = 1 - (1 - st->eps_end) * f;
        sim_ts_add(s, "rrl.epsilon", -1, eps);
        if (gsl_rng_uniform(st->explore) < eps)
            a = (int)gsl_rng_uniform_int(st->explore, RRL_DRL_ACTIONS);
        else
            a = rrl_dqn_greedy(&st->dqn, x1);
    } else {
        if (st->have_x && o->observed && rrl_pg_record(&st->pg, st->x, st->a_prev, -st->lnr))
            sim_ts_add(s, "rrl.pg_loss", -1, st->pg.loss);
        a = rrl_pg_draw(&st->pg, x1, gsl_rng_uniform(st->explore));
    }
    memcpy(st->x, x1, sizeof st->x);
    st->a_prev = a;
    st->have_x = true;
    return rrl_drl_step(&ctl->grid, ctl->cfg, a);
}

static int init_common(struct sim *s, const cJSON *p, struct drl *st, int kind)
{
    struct rrl_ctl *ctl = &st->ctl;
    int rc;
    st->kind = kind;
    const struct sim_param *own = (kind == CAPES ? CAPES_PARAMS : DEEPRM_PARAMS) + 1;
    if ((rc = rrl_ctl_init(s, ctl, p, true, 2)) || (rc = rrl_ctl_parse_grid(ctl, p)) ||
        (rc = sim_params_values(own, p, "policy.params", st)))
        return rc;
    double lr = st->lr, gamma = st->gamma;
    long replay = st->replay, batch = st->batch, T = st->episode_slots,
         W = st->baseline_episodes;
    gsl_rng *net = sim_policy_rng_named(s, "network");
    if (!net || !(st->explore = sim_policy_rng_named(s, "explore")))
        return SIM_ENOMEM;
    static const int HIDDEN[2] = {200, 200};
    if (kind == CAPES ? rrl_dqn_init(&st->dqn, net, 2, HIDDEN, lr, gamma, (int)replay, (int)batch)
                      : rrl_pg_init(&st->pg, net, 20, lr, (int)T, (int)W))
        return SIM_ENOMEM;
    int c0 = (int)gsl_rng_uniform_int(st->explore, (unsigned long)ctl->grid.ncfg);
    return rrl_ctl_start(s, ctl, p, c0, next);
}

static int init_capes(struct sim *s, const cJSON *p, void *state)
{
    return init_common(s, p, state, CAPES);
}

static int init_deeprm(struct sim *s, const cJSON *p, void *state)
{
    return init_common(s, p, state, DEEPRM);
}

static void destroy(void *state)
{
    struct drl *st = state;
    rrl_ctl_free(&st->ctl);
    if (st->kind == CAPES)
        rrl_dqn_free(&st->dqn);
    else
        rrl_pg_free(&st->pg);
}

#define DRL_HOOKS .state_size = sizeof(struct drl), .destroy = destroy, RRL_CTL_HOOKS

const struct policy_ops policy_rrl_capes = {
    .name = "rrl-capes",
    .summary = "RRL's DQN comparator (CAPES-like): epsilon-greedy steps of one knob, replay, "
               "target network",
    .params = CAPES_PARAMS,
    .init = init_capes,
    DRL_HOOKS,
};

const struct policy_ops policy_rrl_deeprm = {
    .name = "rrl-deeprm",
    .summary = "RRL's policy-gradient comparator (DeepRM-like): REINFORCE over 20-slot "
               "episodes, steps of one knob",
    .params = DEEPRM_PARAMS,
    .init = init_deeprm,
    DRL_HOOKS,
};
