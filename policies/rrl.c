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
 * radius 0 is point-based Q-learning (no estimator). States are load bins of width
 * `load_bin` x the configured mean rate. Time series, per slot: rrl.cost, rrl.load_rps,
 * rrl.util, rrl.state, rrl.est_loss, the configuration chosen (rrl.k, rrl.p, rrl.t or rrl.B,
 * rrl.T_ms, rrl.m) and the best visited so far in the slot's state (rrl.greedy_k, ...). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rrl_learn.h"
#include "rrl_node.h"
#include "sim_err.h"
#include "sim_json.h"

enum { OBJ_LATENCY, OBJ_TAIL, OBJ_RESOURCE };

#define TAG_SLOT RRL_NODE_TAGS

struct rrl {
    struct rrl_node node;
    struct rrl_q q;                   /* grid, Q tables, regions */
    double load_bin, slot_s, wait_slots, slo_ms, tail_pct;
    int objective;
    double lam_bar;                   /* configured mean rate (req/s) */
    int state, cfg;                   /* s_t, c_t */
    int *region;                      /* [q.noff] scratch */
    double *rhat;                     /* [q.noff] scratch */
    gsl_rng *explore;
    bool est_on;
    struct rrl_est est;
};

/* Time-series names of the knobs (the applied and the greedy configuration), by device. */
static const char *const KNOB_SERIES[2][3] = {{"rrl.B", "rrl.T_ms", "rrl.m"},
                                              {"rrl.k", "rrl.p", "rrl.t"}};
static const char *const GREEDY_SERIES[2][3] = {
    {"rrl.greedy_B", "rrl.greedy_T_ms", "rrl.greedy_m"},
    {"rrl.greedy_k", "rrl.greedy_p", "rrl.greedy_t"}};

static const char *const params[] = {
    "device", "grid", "radius", "beta", "gamma", "alpha_omega", "alpha_min", "alpha_const",
    "q_init", "load_bin", "slot_s", "max_wait_slots", "objective", "slo_ms", "tail_pct",
    "est_lr", "est_steps", "est_batch", NULL};

/* The grid: params.grid, or the paper's (CPU k, p, t in 1..C; GPU B in 1, 5, ..., 50, T in 0,
 * 5, ..., 50 ms, m in 1..10), k and m at most cluster.lanes. */
static int parse_grid(const cJSON *p, const struct rrl_node *nd, struct rrl_grid *gr)
{
    bool cpu = nd->dev == RRL_CPU;
    const cJSON *g = p ? cJSON_GetObjectItemCaseSensitive(p, "grid") : NULL;
    if (!g) {
        int C = nd->cores;
        int top[3] = {cpu ? (C < nd->lanes ? C : nd->lanes) : 11, cpu ? C : 11,
                      cpu ? C : (10 < nd->lanes ? 10 : nd->lanes)};
        for (int j = 0; j < 3; j++) {
            gr->nv[j] = top[j] < RRL_MAX_VALUES ? top[j] : RRL_MAX_VALUES;
            for (int i = 0; i < gr->nv[j]; i++)
                gr->val[j][i] = cpu || j == 2 ? i + 1 : j == 0 ? (i ? 5 * i : 1) : 5 * i;
        }
        return 0;
    }
    static const char *const CPU_KNOB[] = {"k", "p", "t"}, *const GPU_KNOB[] = {"B", "T_ms", "m"};
    if (!cJSON_IsArray(g) || cJSON_GetArraySize(g) != 3)
        return sim_json_expected("policy.params.grid", cpu ? "[[k...], [p...], [t...]]"
                                                           : "[[B...], [T_ms...], [m...]]", g);
    for (int j = 0; j < 3; j++) {
        const cJSON *a = cJSON_GetArrayItem(g, j);
        char path[SIM_JPATH_MAX], what[128];
        sim_jpath_idx(path, sizeof path, "policy.params.grid", j);
        int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
        if (n < 1 || n > RRL_MAX_VALUES) {
            snprintf(what, sizeof what, "an array of 1 to %d values of %s", RRL_MAX_VALUES,
                     (cpu ? CPU_KNOB : GPU_KNOB)[j]);
            return sim_json_expected(path, what, a);
        }
        int lo = !cpu && j == 1 ? 0 : 1, hi = (cpu ? j == 0 : j == 2) ? nd->lanes : 100000;
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(a, i);
            char xp[SIM_JPATH_MAX];
            sim_jpath_idx(xp, sizeof xp, path, i);
            if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int)x->valuedouble ||
                x->valueint < lo || x->valueint > hi || (i && x->valueint <= gr->val[j][i - 1])) {
                snprintf(what, sizeof what, "an integer in [%d, %d]%s%s", lo, hi,
                         i ? " above the previous value" : "",
                         hi == nd->lanes ? " (at most cluster.lanes)" : "");
                return sim_json_expected(xp, what, x);
            }
            gr->val[j][i] = x->valueint;
        }
        gr->nv[j] = n;
    }
    return 0;
}

static int state_of(const struct rrl *st, double load_rps)
{
    if (st->load_bin <= 0)
        return 0;
    long b = lround(load_rps / (st->load_bin * st->lam_bar));
    return b < st->q.nstates - 1 ? (int)b : st->q.nstates - 1;
}

static void apply(struct sim *s, struct rrl *st, int c)
{
    int v[3];
    st->cfg = c;
    rrl_grid_config(&st->q.grid, c, v);
    rrl_node_apply(s, &st->node, v);
    for (int j = 0; j < 3; j++)
        sim_ts_add(s, KNOB_SERIES[st->node.dev][j], -1, v[j]);
}

/* Steps 2-4 of the algorithm: cost r under c_t in s_t at load `lam` (relative to the mean),
 * next state s1. */
static void learn(struct rrl *st, double r, double lam, int s1)
{
    int n = rrl_q_region(&st->q, st->cfg, st->region);
    st->rhat[0] = r;                  /* (the region's first member is c_t) */
    if (st->est_on) {
        if (rrl_est_train(&st->est, &st->q.grid, lam, st->cfg, log(r)))
            SIM_BUG("out of memory keeping the estimator's samples");
        double g0 = rrl_est_predict(&st->est, &st->q.grid, lam, st->cfg);
        for (int i = 1; i < n; i++) {
            double d = rrl_est_predict(&st->est, &st->q.grid, lam, st->region[i]) - g0;
            st->rhat[i] = r * exp(d < -50 ? -50 : d > 50 ? 50 : d);
        }
    }
    rrl_q_update(&st->q, st->state, r, st->region, st->rhat, n, s1);
}

/* The end of a slot: observe, learn, choose the next configuration. */
static void slot_end(struct sim *s, struct rrl *st)
{
    struct rrl_obs o;
    rrl_node_slot(s, &st->node, (int64_t)llround(st->wait_slots * st->slot_s * 1e9),
                  st->tail_pct, &o);
    double L = o.ended ? (st->objective == OBJ_TAIL ? o.tail_ms : o.mean_ms) : o.oldest_ms;
    double r = L;
    if (st->objective == OBJ_RESOURCE)
        r = L <= st->slo_ms ? o.util : 1 + L / st->slo_ms;
    int s1 = state_of(st, o.load_rps);
    if (L > 0 && r > 0) {             /* (no request ended or waited: nothing observed) */
        learn(st, r, o.load_rps / st->lam_bar, s1);
        sim_ts_add(s, "rrl.cost", -1, r);
        if (st->est_on)
            sim_ts_add(s, "rrl.est_loss", -1, st->est.loss);
    }
    sim_ts_add(s, "rrl.load_rps", -1, o.load_rps);
    sim_ts_add(s, "rrl.util", -1, o.util);
    int g = rrl_q_greedy(&st->q, st->state);
    if (g >= 0) {
        int v[3];
        rrl_grid_config(&st->q.grid, g, v);
        for (int j = 0; j < 3; j++)
            sim_ts_add(s, GREEDY_SERIES[st->node.dev][j], -1, v[j]);
    }
    st->state = s1;
    sim_ts_add(s, "rrl.state", -1, s1);
    apply(s, st, rrl_q_draw(&st->q, s1, gsl_rng_uniform(st->explore)));
}

/* ---------------------------------------------------------------- hooks */

static int init(struct sim *s, const cJSON *p, void *state)
{
    static const char *const OBJ[] = {"latency", "tail", "resource", NULL};
    static const char *const QI[] = {"optimistic", "first", NULL};
    const char *P = "policy.params";
    struct rrl *st = state;
    struct rrl_grid grid;
    struct rrl_q_params qp = RRL_Q_DEFAULTS;
    int rc;
    if ((rc = rrl_node_init(s, &st->node, p)) || (rc = parse_grid(p, &st->node, &grid)))
        return rc;
    long ncfg = (long)grid.nv[0] * grid.nv[1] * grid.nv[2];
    if (ncfg > RRL_MAX_CONFIGS)
        return sim_err_set(SIM_EINVAL, "policy.params.grid: %ld configurations, at most %d",
                           ncfg, RRL_MAX_CONFIGS);
    double radius = 2, est_lr = 0.1;
    long steps = 10, batch = 32;
    st->load_bin = 0.2;
    st->wait_slots = 2;
    st->tail_pct = 95;
    st->slo_ms = sim_ns_to_ms(sim_model(s, 0)->slo_ns);
    for (int m = 0; m < sim_model_count(s); m++)
        st->lam_bar += sim_model(s, m)->rate_rps * sim_load_scale(s);
    st->slot_s = st->lam_bar > 0 ? 100 / st->lam_bar : 1;
    if ((rc = sim_json_num(p, P, "radius", false, SIM_J_NONNEG, &radius)) ||
        (rc = sim_json_num(p, P, "beta", false, SIM_J_POS, &qp.beta)) ||
        (rc = sim_json_num(p, P, "gamma", false, SIM_J_UNIT, &qp.gamma)) ||
        (rc = sim_json_num(p, P, "alpha_omega", false, SIM_J_UNIT, &qp.omega)) ||
        (rc = sim_json_num(p, P, "alpha_min", false, SIM_J_UNIT, &qp.alpha_min)) ||
        (rc = sim_json_num(p, P, "alpha_const", false, SIM_J_UNIT, &qp.alpha_const)) ||
        (rc = sim_json_enum(p, P, "q_init", false, QI, &qp.q_init)) ||
        (rc = sim_json_num(p, P, "load_bin", false, SIM_J_NONNEG, &st->load_bin)) ||
        (rc = sim_json_num(p, P, "slot_s", false, SIM_J_POS, &st->slot_s)) ||
        (rc = sim_json_num(p, P, "max_wait_slots", false, SIM_J_POS, &st->wait_slots)) ||
        (rc = sim_json_enum(p, P, "objective", false, OBJ, &st->objective)) ||
        (rc = sim_json_num(p, P, "slo_ms", false, SIM_J_POS, &st->slo_ms)) ||
        (rc = sim_json_num(p, P, "tail_pct", false, SIM_J_POS, &st->tail_pct)) ||
        (rc = sim_json_num(p, P, "est_lr", false, SIM_J_POS, &est_lr)) ||
        (rc = sim_json_int(p, P, "est_steps", false, 0, 100000, &steps)) ||
        (rc = sim_json_int(p, P, "est_batch", false, 1, 100000, &batch)))
        return rc;
    if (qp.gamma >= 1)
        return sim_err_set(SIM_EINVAL, "policy.params.gamma: expected a number in [0, 1) "
                           "(the exploration divides by 1 - gamma), got %g", qp.gamma);
    if (st->tail_pct > 100)
        return sim_err_set(SIM_EINVAL, "policy.params.tail_pct: expected a percentile in "
                           "(0, 100], got %g", st->tail_pct);
    if (radius > 10)
        return sim_err_set(SIM_EINVAL, "policy.params.radius: expected at most 10 grid steps, "
                           "got %g", radius);
    if (st->load_bin > 0 && st->load_bin < 0.01)
        return sim_err_set(SIM_EINVAL, "policy.params.load_bin: expected 0 (one state) or at "
                           "least 0.01, got %g", st->load_bin);
    if (!(st->lam_bar > 0))
        return sim_err_set(SIM_EINVAL, "policy.params: rrl measures load relative to the "
                           "configured mean rate, and the workload has none (a trace?): "
                           "give workload.rate_rps");
    int nstates = st->load_bin > 0 ? (int)ceil(3 / st->load_bin - 1e-9) + 1 : 1;
    if ((rc = rrl_q_init(&st->q, &grid, nstates, radius, &qp)))
        return rc;
    st->region = malloc((size_t)st->q.noff * sizeof *st->region);
    st->rhat = malloc((size_t)st->q.noff * sizeof *st->rhat);
    if (!st->region || !st->rhat || !(st->explore = sim_policy_rng_named(s, "explore")))
        return SIM_ENOMEM;
    if (radius > 0) {                 /* (radius 0: point-based Q-learning, no estimator) */
        gsl_rng *r = sim_policy_rng_named(s, "estimator");
        if (!r || rrl_est_init(&st->est, r, est_lr, (int)steps, (int)batch))
            return SIM_ENOMEM;
        st->est_on = true;
    }
    st->state = state_of(st, st->lam_bar);
    apply(s, st, rrl_q_draw(&st->q, st->state, gsl_rng_uniform(st->explore)));
    sim_timer_set(s, sim_now(s) + (int64_t)llround(st->slot_s * 1e9), TAG_SLOT, NULL);
    return 0;
}

static void destroy(void *state)
{
    struct rrl *st = state;
    rrl_node_free(&st->node);
    rrl_q_free(&st->q);
    free(st->region);
    free(st->rhat);
    if (st->est_on)
        rrl_est_free(&st->est);
}

static int route(struct sim *s, void *state, const struct sim_request *r)
{
    return rrl_node_route(s, &((struct rrl *)state)->node, r);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    rrl_node_on_request(s, &((struct rrl *)state)->node, r);
}

static void on_request_end(struct sim *s, void *state, const struct sim_request *r,
                           int64_t t_end)
{
    (void)s;
    rrl_node_on_request_end(&((struct rrl *)state)->node, r, t_end);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    rrl_node_on_batch_done(s, &((struct rrl *)state)->node, b);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)arg;
    struct rrl *st = state;
    if (tag != TAG_SLOT) {
        rrl_node_on_timer(s, &st->node, tag);
        return;
    }
    slot_end(s, st);
    sim_timer_set(s, sim_now(s) + (int64_t)llround(st->slot_s * 1e9), TAG_SLOT, NULL);
}

const struct policy_ops policy_rrl = {
    .name = "rrl",
    .summary = "RRL: region-based Q-learning of a node's parallelism (CPU [k, p, t], GPU "
               "[B, T_ms, m]) through a learned latency estimator; radius 0 = Q-learning",
    .state_size = sizeof(struct rrl),
    .param_keys = params,
    .init = init,
    .route = route,
    .on_request = on_request,
    .on_request_end = on_request_end,
    .on_batch_done = on_batch_done,
    .on_timer = on_timer,
    .needs_no_gpus = true,
    .shared_devices = true,
    .destroy = destroy,
};
