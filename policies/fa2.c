/* fa2 — FA2's runtime (monitor, optimizer, controller) for applications (DAG pipelines), and
 * the same runtime driven by the baselines' planners (spec: specs/fa2.md).
 *
 * Every executor is an instance of one DNN (an executor kind such as "xeon@1core": one CPU
 * core, or a share of a GPU). Each DNN has one central queue (the engine's queue of the
 * model); batches of b_s go to its idle instances in round-robin order. A batch smaller than
 * b_s leaves once its first request has waited the planned collection time (b_s - 1)/lambda_s,
 * so a plan's latency bound holds at low load too. A request is dropped once it has spent
 * drop_factor x its SLA (3x) in the system.
 *
 * Every interval_s the monitor measures the application's arrival rate and the path mix of
 * the requests that left the system in the interval (a request's path is known only when it
 * leaves) and each DNN's queue, the optimizer recomputes (n_s, b_s) for the rates plus a
 * headroom (rate_z Poisson deviations, the queue drained within an interval), and the
 * controller sets batch sizes at once, adds instances (serving after cold_start_s) and removes
 * those no plan of the last scale_down_s wanted (they finish their batch); rate_z = backlog =
 * scale_down_s = 0 is the paper's bare controller (docs/policies.md has the measured
 * difference). Registered as five policies that differ only in the planner:
 *   fa2          graph transformation + dynamic program (fa2_plan_dp)
 *   fa2-optimal  the exact optimum of the integer program (GLPK MILP)
 *   grandslam    proportional SLA split, local sizing
 *   inferline    greedy batch growth, no path coordination
 *   ds2          batch 1, instances = rate x processing time */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa2_plan.h"
#include "policy.h"
#include "sim_err.h"
#include "sim_grow.h"
#include "sim_json.h"
#include "sim_param.h"

enum planner { PL_FA2, PL_OPTIMAL, PL_GRANDSLAM, PL_INFERLINE, PL_DS2 };

enum { TAG_ADAPT = 1, TAG_PARTIAL = 2 };
enum { FA2_HIST = 64 };                /* plans remembered for scale_down_s */

struct fa2 {
    enum planner planner;
    double interval_s, cold_start_s, drop_factor, initial_rate;
    double rate_z, backlog;            /* headroom: Poisson deviations; share of the queue */
    double scale_down_s;               /* instances kept until no plan of this long wants them */
    int max_batch;                     /* the largest b_s a plan may choose */
    int planned[FA2_HIST][FA2_MAX_DNN];/* the last plans' instance counts, a ring */
    int nplans;
    struct fa2_problem prob;           /* structure and profiles; rates set per interval */
    int b[FA2_MAX_DNN];
    int64_t wait_ns[FA2_MAX_DNN];      /* planned collection time of a partial batch */
    uint64_t partial_timer[FA2_MAX_DNN];
    struct pool {                      /* a DNN's instances up or starting, in round-robin order */
        int *ids;
        int n, cap, rr;
    } inst[FA2_MAX_DNN], spare;        /* spare: the cluster's executors before the first plan */
    int *dnn_of;                       /* [executor] DNN it serves, -1: none */
    int *inflight;                     /* [executor] batches dispatched, not done */
    int cap;
    uint64_t last_arrived, last_exits[FA2_MAX_PATHS];
    double mix_w[FA2_MAX_PATHS];       /* exits per path, exponentially weighted over intervals */
};

#define FP(f, type) SIM_P_AT(struct fa2, f, type)
static const struct sim_param params[] = {
    {"interval_s", SIM_P_NUM, FP(interval_s, double), .cons = SIM_J_POS, .def = 10,
     .doc = "the monitor's interval: a new plan from its arrival rate and path mix"},
    {"cold_start_s", SIM_P_NUM, FP(cold_start_s, double), .cons = SIM_J_NONNEG, .def = 6,
     .doc = "an added instance serves after this long"},
    {"drop_factor", SIM_P_NUM, FP(drop_factor, double), .cons = SIM_J_POS, .def = 3,
     .doc = "a request that has spent this many times its SLA in the system is dropped"},
    {"delta", SIM_P_NUM, FP(prob.delta, double), .cons = SIM_J_NONNEG, .def = 1e-3,
     .doc = "the weight of the batch sizes in the planner's objective"},
    {"max_batch", SIM_P_INT, FP(max_batch, int), .lo = 1, .hi = FA2_MAX_BATCH, .def = 16,
     .doc = "the largest batch a plan chooses; every model needs at least this `max_batch`"},
    {"initial_rate_rps", SIM_P_NUM, FP(initial_rate, double), .cons = SIM_J_NONNEG,
     .flags = SIM_P_NODEF, .def_doc = "`workload.rate_rps`",
     .doc = "the rate the initial deployment (warm at time 0) is planned for"},
    {"rate_z", SIM_P_NUM, FP(rate_z, double), .cons = SIM_J_NONNEG, .def = 1,
     .doc = "headroom: plan for the rate plus this many standard deviations of the "
            "interval's Poisson count (below)"},
    {"backlog", SIM_P_NUM, FP(backlog, double), .cons = SIM_J_NONNEG, .def = 1,
     .doc = "headroom: plan to drain this share of the queue within one interval"},
    {"scale_down_s", SIM_P_NUM, FP(scale_down_s, double), .cons = SIM_J_NONNEG, .def = 30,
     .doc = "an instance is removed only when no plan of this long wanted it"},
    {NULL}};
#undef FP

static int grow(struct fa2 *st, int e)
{
    if (e < st->cap)
        return 0;
    int cap = st->cap ? st->cap : 64;
    while (cap <= e)
        cap *= 2;
    int *d = realloc(st->dnn_of, (size_t)cap * sizeof *d);
    if (d)
        st->dnn_of = d;
    int *f = d ? realloc(st->inflight, (size_t)cap * sizeof *f) : NULL;
    if (!f)
        return SIM_ENOMEM;
    st->inflight = f;
    for (int i = st->cap; i < cap; i++)
        st->dnn_of[i] = -1, st->inflight[i] = 0;
    st->cap = cap;
    return 0;
}

/* SIM_ENOMEM with the pool as it was. */
static int pool_push(struct pool *p, int e)
{
    if (sim_grow(&p->ids, &p->cap, p->n + 1, sizeof *p->ids, 16))
        return SIM_ENOMEM;
    p->ids[p->n++] = e;
    return 0;
}

static void pool_del(struct pool *p, int i)
{
    p->ids[i] = p->ids[--p->n];
    if (p->rr >= p->n)
        p->rr = 0;
}

/* Executor e becomes an instance of DNN m; SIM_ENOMEM (recorded: the run stops). */
static int assign(struct sim *s, struct fa2 *st, int e, int m)
{
    if (grow(st, e) || pool_push(&st->inst[m], e))
        return sim_fail_nomem(s, "growing FA2's instances");
    st->dnn_of[e] = m;
    st->inflight[e] = 0;
    return 0;
}

static int plan(const struct fa2 *st, struct fa2_plan *out)
{
    switch (st->planner) {
    case PL_FA2: return fa2_plan_dp(&st->prob, out);
    case PL_OPTIMAL: return fa2_plan_milp(&st->prob, out);
    case PL_GRANDSLAM: return fa2_plan_grandslam(&st->prob, out);
    case PL_INFERLINE: return fa2_plan_inferline(&st->prob, out);
    case PL_DS2: return fa2_plan_ds2(&st->prob, out);
    }
    return -1;
}

static void drop_expired(struct sim *s, const struct fa2 *st, int m)
{
    int64_t now = sim_now(s);
    while (sim_queue_len(s, m) > 0) {
        const struct sim_request *r = sim_queue_at(s, m, 0);
        int64_t sla = r->deadline - r->t_arrival;
        if (now - r->t_arrival <= (int64_t)(st->drop_factor * (double)sla))
            break;
        sim_queue_drop_head(s, m);
    }
}

/* Sends batches of DNN m to its idle instances, round robin. */
static void dispatch(struct sim *s, struct fa2 *st, int m)
{
    drop_expired(s, st, m);
    struct pool *p = &st->inst[m];
    while (sim_queue_len(s, m) > 0) {
        int e = -1, k = 0;
        for (; k < p->n && e < 0; k++) {
            int c = p->ids[(p->rr + k) % p->n];
            if (sim_exec(s, c)->state == SIM_EXEC_UP && !st->inflight[c])
                e = c;
        }
        if (e < 0)
            return;
        int n = sim_queue_len(s, m);
        if (n < st->b[m]) {
            int64_t due = sim_queue_at(s, m, 0)->t_sched + st->wait_ns[m];
            if (sim_now(s) < due) {    /* wait for the batch to fill, at most the plan's time */
                st->partial_timer[m] = sim_timer_rearm(s, st->partial_timer[m], due, TAG_PARTIAL,
                                                       (void *)(intptr_t)m);
                return;
            }
        } else {
            n = st->b[m];
        }
        if (!sim_dispatch(s, e, m, n, sim_now(s)))
            return;
        st->inflight[e]++;
        p->rr = (p->rr + k) % p->n;
    }
}

/* The controller: batch sizes now; instances added (after `delay`, the cold start) at once,
 * removed (they drain) only when no plan of the last scale_down_s wanted them; spare
 * executors are taken first and removed when no DNN needs them. */
static void apply(struct sim *s, struct fa2 *st, const struct fa2_plan *p, int64_t delay)
{
    double lambda[FA2_MAX_DNN];
    fa2_rates(&st->prob, lambda);
    int total = 0, keep = 1 + (int)floor(st->scale_down_s / st->interval_s + 1e-9);
    if (keep > FA2_HIST)
        keep = FA2_HIST;
    memcpy(st->planned[st->nplans++ % FA2_HIST], p->n, sizeof p->n);
    for (int m = 0; m < st->prob.ndnn; m++) {
        struct pool *in = &st->inst[m];
        int want = 0;
        for (int k = 1; k <= keep && k <= st->nplans; k++) {
            int n = st->planned[(st->nplans - k) % FA2_HIST][m];
            want = n > want ? n : want;
        }
        st->b[m] = p->b[m];
        st->wait_ns[m] = st->b[m] > 1 && lambda[m] > 0
                             ? sim_ns(1e9 * (st->b[m] - 1) / lambda[m]) : 0;
        while (in->n < want) {
            int e = st->spare.n ? st->spare.ids[--st->spare.n] : sim_exec_add_after(s, delay);
            if (e < 0 || assign(s, st, e, m))
                break;
        }
        /* surplus: starting ones first, then idle, then busy (they finish their batch) */
        for (int pass = 0; pass < 3 && in->n > want; pass++)
            for (int i = in->n - 1; i >= 0 && in->n > want; i--) {
                int e = in->ids[i];
                const struct sim_exec *x = sim_exec(s, e);
                bool pick = pass == 0 ? x->state == SIM_EXEC_STARTING
                          : pass == 1 ? x->state == SIM_EXEC_UP && !st->inflight[e]
                                      : x->state == SIM_EXEC_UP;
                if (pick) {
                    pool_del(in, i);
                    sim_exec_remove(s, e);
                }
            }
        total += in->n;
        sim_ts_add(s, "fa2.instances", m, in->n);
        sim_ts_add(s, "fa2.batch", m, st->b[m]);
    }
    while (st->spare.n)
        sim_exec_remove(s, st->spare.ids[--st->spare.n]);
    sim_ts_add(s, "fa2.instances", -1, total);
    for (int m = 0; m < st->prob.ndnn; m++)
        dispatch(s, st, m);
}

static int replan(struct sim *s, struct fa2 *st, double app_rate, const double *mix,
                  int64_t delay)
{
    for (int q = 0; q < st->prob.npaths; q++)
        st->prob.paths[q].rate_rps = app_rate * mix[q];
    struct fa2_plan p;
    if (plan(st, &p))
        return sim_err_set(SIM_EINTERNAL, "fa2: the planner failed (GLPK or memory)");
    sim_ts_add(s, "fa2.rate_rps", -1, app_rate);
    sim_ts_add(s, "fa2.feasible", -1, p.feasible);
    apply(s, st, &p, delay);
    return 0;
}

/* The monitor: arrivals in the interval, and the path mix of the requests that left. */
static void adapt(struct sim *s, struct fa2 *st)
{
    const struct sim_app *app = sim_app(s);
    uint64_t arrived = sim_arrived(s), d[FA2_MAX_PATHS];
    for (int q = 0; q < app->npaths; q++) {
        uint64_t x = sim_app_exits(s, q);
        d[q] = x - st->last_exits[q];
        st->last_exits[q] = x;
    }
    /* the mix: exits per path weighted over the last intervals (a few dozen requests per path
     * and interval are too few on their own); nothing left yet: the declared weights */
    double mix[FA2_MAX_PATHS], wsum = 0;
    for (int q = 0; q < app->npaths; q++)
        wsum += st->mix_w[q] = 0.5 * st->mix_w[q] + (double)d[q];
    for (int q = 0; q < app->npaths; q++)
        mix[q] = wsum > 0 ? st->mix_w[q] / wsum : app->paths[q].prob;
    double rate = (double)(arrived - st->last_arrived) / st->interval_s;
    st->last_arrived = arrived;
    /* headroom at each DNN: a Poisson count n over the interval has standard deviation
     * sqrt(n), so rate_z of them on top keeps a plan from falling short about half the time;
     * and the requests waiting in its queue, to be served within the next interval */
    for (int m = 0; m < st->prob.ndnn; m++) {
        double n = 0;
        for (int q = 0; q < app->npaths; q++)
            for (int i = 0; i < app->paths[q].nstages; i++)
                n += app->paths[q].stages[i] == m ? rate * mix[q] * st->interval_s : 0;
        st->prob.extra_rps[m] = (st->rate_z * sqrt(n) + st->backlog * sim_queue_len(s, m)) /
                                st->interval_s;
    }
    if (replan(s, st, rate, mix, sim_s_to_ns(st->cold_start_s)))
        SIM_BUG("%s", sim_err_msg());
    sim_timer_set(s, sim_now(s) + sim_s_to_ns(st->interval_s), TAG_ADAPT, NULL);
}

int fa2_problem_of(const struct sim_world *cfg, int bmax, double delta, struct fa2_problem *p)
{
    const struct sim_app *app = cfg->app;
    if (cfg->nmodels > FA2_MAX_DNN || app->npaths > FA2_MAX_PATHS)
        return sim_err_set(SIM_EINVAL, "application: expected at most %d models and %d paths",
                           FA2_MAX_DNN, FA2_MAX_PATHS);
    memset(p, 0, sizeof *p);
    p->ndnn = cfg->nmodels;
    p->npaths = app->npaths;
    p->bmax = bmax;
    p->delta = delta;
    for (int q = 0; q < app->npaths; q++) {
        struct fa2_path *fp = &p->paths[q];
        fp->nstages = app->paths[q].nstages;
        memcpy(fp->stages, app->paths[q].stages, (size_t)fp->nstages * sizeof *fp->stages);
        fp->sla_ms = app->paths[q].sla_ms;
        if (fp->sla_ms > FA2_MAX_SLA_MS)
            return sim_err_set(SIM_EINVAL, "application.paths[%d].sla_ms: expected at most %g ms "
                               "(%s plans in 1-ms slots up to the largest SLA), got %.15g", q,
                               FA2_MAX_SLA_MS, cfg->policy->name, fp->sla_ms);
    }
    for (int m = 0; m < p->ndnn; m++) {
        const struct sim_model_cfg *mc = &cfg->models[m];
        int k = sim_model_cfg_kind(mc, cfg->gpu_kind);
        const struct sim_profile *pr = &mc->prof[k];
        if (pr->form == SIM_PROF_QUADRATIC)
            p->a[m] = pr->a_ms, p->b1[m] = pr->b_ms, p->c[m] = pr->c_ms;
        else if (pr->form == SIM_PROF_LINEAR)
            p->a[m] = 0, p->b1[m] = pr->alpha_ms, p->c[m] = pr->beta_ms;
        else
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": %s plans with closed-form "
                               "profiles (quadratic or linear), got a table on %s", mc->name,
                               cfg->policy->name, cfg->gpu_kind);
    }
    return 0;
}

static int init_common(struct sim *s, const cJSON *pj, struct fa2 *st, enum planner pl)
{
    const char *p = "policy.params";
    const struct sim_app *app = sim_app(s);
    const struct sim_world *cfg = sim_world(s);
    int rc;
    st->planner = pl;
    st->initial_rate = cfg->rate_rps;
    if ((rc = sim_params_read(params, pj, p, st)) ||
        (rc = sim_check_period(s, "policy.params.interval_s", st->interval_s, SIM_MAX_PLANS)))
        return rc;
    int bmax = st->max_batch;
    if (!app)
        return sim_err_set(SIM_EINVAL, "policy: %s serves applications (DAG pipelines): the "
                           "config needs an \"application\" section", cfg->policy->name);
    if ((rc = fa2_problem_of(cfg, bmax, st->prob.delta, &st->prob)))
        return rc;
    for (int m = 0; m < st->prob.ndnn; m++)
        if (sim_model(s, m)->max_batch < bmax)
            return sim_err_set(SIM_EINVAL, "models: model \"%s\": max_batch %d is below "
                               "policy.params.max_batch %d", sim_model(s, m)->cfg->name,
                               sim_model(s, m)->max_batch, bmax);
    /* the initial deployment, warm at time 0: the cluster's executors become instances,
     * missing ones are added without a cold start, surplus ones removed */
    double mix[FA2_MAX_PATHS];
    for (int q = 0; q < app->npaths; q++)
        mix[q] = app->paths[q].prob;
    for (int e = sim_exec_count(s) - 1; e >= 0; e--)
        if (pool_push(&st->spare, e))
            return SIM_ENOMEM;
    if ((rc = replan(s, st, st->initial_rate, mix, 0)))
        return rc;
    sim_timer_set(s, sim_s_to_ns(st->interval_s), TAG_ADAPT, NULL);
    return 0;
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)r;
    dispatch(s, state, m);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    struct fa2 *st = state;
    if (b->exec < st->cap && st->inflight[b->exec] > 0)
        st->inflight[b->exec]--;
    dispatch(s, st, b->model);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct fa2 *st = state;
    if (tag == TAG_ADAPT) {
        adapt(s, st);
    } else {
        int m = (int)(intptr_t)arg;
        st->partial_timer[m] = 0;
        dispatch(s, st, m);
    }
}

static void on_exec_up(struct sim *s, void *state, int e)
{
    struct fa2 *st = state;
    if (e < st->cap && st->dnn_of[e] >= 0)
        dispatch(s, st, st->dnn_of[e]);
}

static void destroy(void *state)
{
    struct fa2 *st = state;
    free(st->dnn_of);
    free(st->inflight);
    free(st->spare.ids);
    for (int m = 0; m < FA2_MAX_DNN; m++)
        free(st->inst[m].ids);
}

#define FA2_INIT(fn, pl) \
    static int fn(struct sim *s, const cJSON *p, void *state) { return init_common(s, p, state, pl); }
FA2_INIT(init_fa2, PL_FA2)
FA2_INIT(init_optimal, PL_OPTIMAL)
FA2_INIT(init_grandslam, PL_GRANDSLAM)
FA2_INIT(init_inferline, PL_INFERLINE)
FA2_INIT(init_ds2, PL_DS2)

#define FA2_OPS(var, nm, sum, in)                                                             \
    const struct policy_ops var = {.name = nm, .summary = sum, .state_size = sizeof(struct fa2), \
                                   .params = params, .init = in, .on_request = on_request, \
                                   .on_batch_done = on_batch_done, .on_timer = on_timer,       \
                                   .on_exec_up = on_exec_up, .dynamic_execs = true,            \
                                   .applications_only = true,                                  \
                                   .destroy = destroy};
FA2_OPS(policy_fa2, "fa2", "FA2: pipeline autoscaling by graph transformation + DP, per-path SLAs",
        init_fa2)
FA2_OPS(policy_fa2_optimal, "fa2-optimal",
        "Pipelines: the exact optimum of FA2's integer program (GLPK MILP) each interval",
        init_optimal)
FA2_OPS(policy_grandslam, "grandslam",
        "Pipelines: GrandSLAm-like SLA split by processing time, local batch sizing", init_grandslam)
FA2_OPS(policy_inferline, "inferline",
        "Pipelines: InferLine-like greedy batch growth within path SLAs", init_inferline)
FA2_OPS(policy_ds2, "ds2", "Pipelines: DS2-like batch 1, instances = rate x processing time",
        init_ds2)
