/* nexus — Nexus (specs/nexus.md): an epoch-scale scheduler off the data path (squishy bin
 * packing of sessions onto GPUs), frontends that route each request on their own with
 * deficit round-robin weighted by allocated throughput, and GPUs that serve their sessions
 * round-robin, one batch at a time, with early drop. The algorithms follow nexuslb (the
 * Symphony paper's harness), which are the original's line for line. The defaults are the
 * Nexus the Symphony paper measured (preset "paper"): the original system's planner
 * (profile multiplier 1.15, models loaded when a schedule assigns them) with backends that
 * dispatch the requests accumulated so far (backend_batch "accumulated") rather than at most
 * the planned batch as both code bases do (presets "original", "nexuslb"; presets.c;
 * docs/policies.md says why).
 *
 * Layout: profile math (B_max, residual batches, calc_cycle), the backend placement state
 * and the epoch schedule; frontend routing (policy_ops.route); the backend loop on the
 * engine's executor queues; the 1-s beacon (EWMA rates, trigger). A session is a model (one
 * SLO per model). Times in the planner are seconds (double), like the code's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim_err.h"
#include "nexus.h"
#include "sim_json.h"

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

static const char *const params[] = {"profile_multiplier", "epoch_schedule", "static_schedule",
                                     "drop_policy", "pace_duty_cycle", "elastic", "model_load",
                                     "initial_rate", "beacon_s", "epoch_s", "min_epoch_s",
                                     "avg_interval_s", "backend_batch", NULL};
static const char *const DROPS[] = {"sliding_window", "earliest_first", NULL};
static const char *const LOADS[] = {"preloaded", "on_assign", NULL};
static const char *const RATES[] = {"zero", "configured", NULL};
static const char *const BBATCH[] = {"planned", "accumulated", NULL};

/* ---------------------------------------------------------------- profile math */

/* The profiler's l(b) in seconds: mean + one standard deviation of a batch's duration (the
 * table's value times 1 + its cv, which is 0 without a service distribution), times
 * profile_multiplier (pre/post are 0 for our profiles); lat_ns the same in ns. */
static double prof_s(const struct sim *s, int kind, double mult, int m, int b)
{
    double ns = (double)sim_latency_ns(s, m, kind, b) * (1 + sim_service_cv(s, m, kind, b));
    return ns * 1e-9 * mult;            /* (this order: the same doubles as before the sd) */
}

static double lat_s(const struct sim *s, const struct nexus *st, int m, int b)
{
    return prof_s(s, st->kind, st->mult, m, b);
}

static int64_t lat_ns(const struct sim *s, const struct nexus *st, int m, int b)
{
    double ns = (double)sim_latency_ns(s, m, st->kind, b) * (1 + sim_service_cv(s, m, st->kind, b));
    return sim_ns(ns * st->mult);
}

static double slo_s(const struct sim *s, int m)
{
    return (double)sim_model(s, m)->slo_ns * 1e-9;
}

/* B_max = largest b with l(b) <= (SLO - NET) / 2 (at least 1), capped at the model's max. */
static int bmax_of(const struct sim *s, double mult, int kind, int m)
{
    double budget = (slo_s(s, m) - NET_S) / 2;
    int b = 1, cap = sim_model(s, m)->max_batch;
    while (b < cap && prof_s(s, kind, mult, m, b + 1) <= budget)
        b++;
    return b;
}

static int ceil_eps(double x)
{
    double f = floor(x);
    if (x - f < CEIL_EPS && f > 0)
        return (int)f;
    return (int)ceil(x);
}

/* The instance of session m for rate w (saturated when w == 0 or w >= T_max); false if no
 * batch fits the SLO. */
static bool inst_for(const struct sim *s, const struct nexus *st, int m, double w, struct inst *o)
{
    const struct session *se = &st->ss[m];
    memset(o, 0, sizeof *o);
    o->on = true;
    o->max_batch = se->bmax;
    if (w <= 0 || w >= se->bmax_tp) {
        o->batch = se->bmax;
        o->lat = lat_s(s, st, m, se->bmax);
        o->duty_max = o->lat;
        o->tp = se->bmax_tp;
        o->workload = se->bmax_tp;
        return true;
    }
    int b = 0;
    for (int c = 1; c <= se->bmax; c++)
        if ((c - 1) / w + lat_s(s, st, m, c) <= slo_s(s, m))
            b = c;
    if (b == 0)
        return false;
    o->batch = b;
    o->lat = lat_s(s, st, m, b);
    double d = slo_s(s, m) - o->lat;
    o->duty_max = d < b / w ? d : b / w;
    if (o->duty_max < o->lat) {
        /* the batch takes longer than the cycle the SLO leaves (lat(b) > SLO - lat(b): a
         * session whose smallest batch exceeds half its SLO, bmax_of's floor of 1): no cycle
         * holds it at this rate, so it gets the saturated instance, as at start-up, rather
         * than no backend at all */
        return inst_for(s, st, m, 0, o);
    }
    o->tp = b / o->duty_max;
    o->workload = w;
    return true;
}

/* calc_cycle over a set of instances: shrinks batches to ceil_eps(duty * w); returns the
 * occupancy and sets duty/exec/overload. */
static double calc_cycle(const struct sim *s, const struct nexus *st, struct inst *in, double *duty,
                         double *exec, bool *overload)
{
    double d = INFINITY;
    for (int m = 0; m < st->nm; m++)
        if (in[m].on && in[m].duty_max < d)
            d = in[m].duty_max;
    double ex = 0;
    bool ov = false;
    for (int m = 0; m < st->nm; m++) {
        if (!in[m].on)
            continue;
        int b = ceil_eps(d * in[m].workload);
        if (b < 1)
            b = 1;
        if (b > in[m].max_batch) {
            ov = true;
            b = in[m].max_batch;
        }
        in[m].batch = b;
        in[m].lat = lat_s(s, st, m, b);
        ex += in[m].lat;
    }
    if (ex > d)
        ov = true;
    *duty = d;
    *exec = ex;
    *overload = ov;
    return d > 0 && isfinite(d) ? ex / d : 0;
}

static void recycle(const struct sim *s, const struct nexus *st, struct backend *b)
{
    if (b->is_static)
        return;
    if (b->n == 0) {
        b->duty = b->exec = 0;
        b->overload = false;
        return;
    }
    calc_cycle(s, st, b->in, &b->duty, &b->exec, &b->overload);
}

static double occupancy(const struct backend *b)
{
    return b->n && b->duty > 0 ? b->exec / b->duty : 0;
}

static bool usable(const struct sim *s, int g)
{
    return sim_exec(s, g)->state == SIM_EXEC_UP;
}

/* PrepareLoadModel: the occupancy of g with session m at rate w added (and the instance it
 * would get), or a negative value when it does not fit. */
static double prepare(const struct sim *s, struct nexus *st, int g, int m, double w, struct inst *out,
                      struct inst *scratch)
{
    struct backend *b = &st->bk[g];
    if (b->is_static || !usable(s, g) || occupancy(b) >= 1 || b->in[m].on)
        return -1;
    struct inst ni;
    if (!inst_for(s, st, m, w, &ni))
        return -1;
    memcpy(scratch, b->in, (size_t)st->nm * sizeof *scratch);
    if (b->n > 0 && ni.duty_max >= b->duty) {
        ni.batch = ceil_eps(b->duty * w);
        if (ni.batch < 1 || ni.batch > ni.max_batch)
            return -1;
        ni.lat = lat_s(s, st, m, ni.batch);
        ni.tp = ni.batch / b->duty;
    }
    scratch[m] = ni;
    double duty, exec;
    bool ov;
    double occ = calc_cycle(s, st, scratch, &duty, &exec, &ov);
    if (exec > duty)
        return -1;
    /* the new instance keeps the throughput computed above; its batch follows the cycle */
    ni.batch = scratch[m].batch;
    ni.lat = scratch[m].lat;
    *out = ni;
    return occ;
}

static void place(const struct sim *s, struct nexus *st, int g, int m, const struct inst *ni)
{
    struct backend *b = &st->bk[g];
    b->in[m] = *ni;
    b->n++;
    recycle(s, st, b);
    st->ss[m].weights[g] = ni->tp;
}

static void unload(const struct sim *s, struct nexus *st, int g, int m)
{
    struct backend *b = &st->bk[g];
    if (!b->in[m].on)
        return;
    b->in[m].on = false;
    b->n--;
    st->ss[m].weights[g] = 0;
    if (b->n == 0)
        b->idle_since = sim_now(s);
    recycle(s, st, b);
}

/* FindBestBackend: highest tp, or (for a residual that some GPU can absorb) best fit. */
static int find_best(const struct sim *s, struct nexus *st, int m, double w, struct inst *out)
{
    int best_tp = -1, best_occ = -1;
    double btp = -1, bocc = -1;
    struct inst tp_i = {0}, occ_i = {0}, ni;
    struct inst *scratch = calloc((size_t)st->nm, sizeof *scratch);
    if (!scratch) {
        st->nomem = true;
        return -1;
    }
    for (int g = 0; g < st->nx; g++) {
        if (w == 0 && st->bk[g].n > 0)
            continue;
        double occ = prepare(s, st, g, m, w, &ni, scratch);
        if (occ < 0)
            continue;
        if (ni.tp > btp) {
            btp = ni.tp;
            best_tp = g;
            tp_i = ni;
        }
        if (occ > bocc) {
            bocc = occ;
            best_occ = g;
            occ_i = ni;
        }
    }
    free(scratch);
    if (best_tp < 0)
        return -1;
    if (w == 0 || btp < w) {
        *out = tp_i;
        return best_tp;
    }
    *out = occ_i;
    return best_occ;
}

/* Allocates rate `rem` of session m on new backends until covered or none fits. */
static double allocate(const struct sim *s, struct nexus *st, int m, double rem)
{
    struct inst ni;
    while (rem > 1e-3) {
        int g = find_best(s, st, m, rem, &ni);
        if (g < 0)
            break;
        place(s, st, g, m, &ni);
        rem -= ni.tp;
    }
    return rem > 1e-3 ? rem : 0;
}

/* ---------------------------------------------------------------- tables and routes */

static void rebuild_routes(const struct sim *s, struct nexus *st, int m)
{
    for (int f = 0; f < st->nf; f++) {
        struct route *r = &st->rt[f * st->nm + m];
        int n = 0;
        double minw = INFINITY;
        for (int g = 0; g < st->nx; g++) {
            double w = st->ss[m].weights[g];
            if (w > 0 && usable(s, g) && sim_resident(s, g, m) == SIM_RES_LOADED) {
                st->idx[n++] = g;
                if (w < minw)
                    minw = w;
            }
        }
        /* keep deficits of backends that stay; new ones start with their quantum */
        int *be = malloc((size_t)(n ? n : 1) * sizeof *be);
        double *q = malloc((size_t)(n ? n : 1) * sizeof *q);
        double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
        if (!be || !q || !d) {
            free(be);
            free(q);
            free(d);
            st->nomem = true;
            return;
        }
        for (int i = 0; i < n; i++) {
            int g = st->idx[i];
            be[i] = g;
            q[i] = st->ss[m].weights[g] / minw;
            d[i] = q[i];
            for (int j = 0; j < r->n; j++)
                if (r->be[j] == g)
                    d[i] = r->deficit[j];
        }
        free(r->be);
        free(r->quantum);
        free(r->deficit);
        r->be = be;
        r->quantum = q;
        r->deficit = d;
        r->n = n;
        r->index = n ? r->index % n : 0;
    }
}

static void kick(struct sim *s, struct nexus *st, int g);

/* Pushes model tables to backends (batch per session, kept after a session leaves) and
 * routes to frontends; with model_load "on_assign" a backend loads a model first and is
 * routed to once the load completes. */
static void publish(struct sim *s, struct nexus *st)
{
    if (st->nomem)
        sim_fail_nomem(s, "in the Nexus planner");
    for (int g = 0; g < st->nx; g++) {
        struct backend *b = &st->bk[g];
        for (int m = 0; m < st->nm; m++) {
            if (!b->in[m].on)
                continue;
            b->batch[m] = st->accumulated ? st->ss[m].bslo : b->in[m].batch;
            if (st->on_assign && sim_resident(s, g, m) == SIM_RES_NONE && usable(s, g)) {
                /* make room: evict resident models this backend no longer serves */
                for (int v = 0; v < st->nm && sim_load(s, g, m, 0) != 0; v++)
                    if (!b->in[v].on && sim_resident(s, g, v) == SIM_RES_LOADED &&
                        sim_xqueue_len(s, g, v) == 0)
                        sim_evict(s, g, v);
            }
        }
    }
    for (int m = 0; m < st->nm; m++)
        rebuild_routes(s, st, m);
}

/* ---------------------------------------------------------------- epoch schedule */

static double session_tp(const struct nexus *st, int m)
{
    double tp = 0;
    for (int g = 0; g < st->nx; g++)
        tp += st->ss[m].weights[g];
    return tp;
}

static double last_rps(const struct session *se)
{
    return se->hist[(se->hpos + HIST - 1) % HIST];
}

static void epoch(struct sim *s, struct nexus *st)
{
    st->last_epoch = sim_now(s);
    int *spill = calloc((size_t)st->nx, sizeof *spill);
    struct inst *scratch = calloc((size_t)st->nm, sizeof *scratch);
    if (!spill || !scratch) {
        free(spill);
        free(scratch);
        sim_fail_nomem(s, "in the Nexus epoch");
        return;
    }
    /* 1. shrink or grow each session with a full history */
    for (int m = 0; m < st->nm; m++) {
        struct session *se = &st->ss[m];
        if (se->nhist < HIST || se->bmax == 0)
            continue;
        double est = fmax(last_rps(se), 0.1), tp = session_tp(st, m);
        se->unassigned = fmax(0, est - tp);
        int n = 0;
        for (int g = 0; g < st->nx; g++) {
            if (se->weights[g] <= 0)
                continue;
            if (st->bk[g].is_static)
                est -= se->weights[g];
            else
                st->idx[n++] = g;
        }
        for (int i = 1; i < n; i++)      /* by weight, descending (stable: ascending id) */
            for (int j = i; j > 0 && se->weights[st->idx[j]] > se->weights[st->idx[j - 1]]; j--) {
                int t = st->idx[j];
                st->idx[j] = st->idx[j - 1];
                st->idx[j - 1] = t;
            }
        bool shrink = est < 0.97 * tp, grow = est > tp;
        if (!shrink && !grow)
            continue;
        for (int i = 0; i < n; i++) {
            int g = st->idx[i];
            double w = se->weights[g];
            if (est < 1e-3) {
                unload(s, st, g, m);
                continue;
            }
            if (shrink && w <= est) {
                est -= w;
                continue;
            }
            struct inst ni;
            if (!inst_for(s, st, m, est, &ni)) {
                unload(s, st, g, m);
                continue;
            }
            st->bk[g].in[m] = ni;
            recycle(s, st, &st->bk[g]);
            se->weights[g] = ni.tp;
            est -= ni.tp;
            if (grow && st->bk[g].overload && occupancy(&st->bk[g]) > 1.05)
                spill[g] = 1;
        }
        if (grow)
            se->unassigned = est > 1e-3 ? est : 0;
    }
    /* 2. spill overloaded backends: re-place their instances, longest batch first */
    for (int g = 0; g < st->nx; g++) {
        if (!spill[g])
            continue;
        struct backend *b = &st->bk[g];
        int n = 0;
        struct inst *old = malloc((size_t)st->nm * sizeof *old);
        if (!old) {
            sim_fail_nomem(s, "in the Nexus epoch");
            break;
        }
        memcpy(old, b->in, (size_t)st->nm * sizeof *old);
        for (int m = 0; m < st->nm; m++)
            if (old[m].on)
                st->idx[n++] = m;
        for (int i = 1; i < n; i++)      /* insertion sort by l(batch) descending */
            for (int j = i; j > 0 && old[st->idx[j]].lat > old[st->idx[j - 1]].lat; j--) {
                int t = st->idx[j];
                st->idx[j] = st->idx[j - 1];
                st->idx[j - 1] = t;
            }
        for (int i = 0; i < n; i++) {
            b->in[st->idx[i]].on = false;
            st->ss[st->idx[i]].weights[g] = 0;
        }
        b->n = 0;
        recycle(s, st, b);
        for (int i = 0; i < n; i++) {
            int m = st->idx[i];
            struct inst ni;
            if (prepare(s, st, g, m, old[m].workload, &ni, scratch) >= 0)
                place(s, st, g, m, &ni);
            else
                st->ss[m].unassigned += old[m].workload;
        }
        if (b->n == 0)
            b->idle_since = sim_now(s);
        free(old);
    }
    /* 4. allocate unassigned work, largest first */
    for (;;) {
        int best = -1;
        for (int m = 0; m < st->nm; m++)
            if (st->ss[m].unassigned > 1e-3 &&
                (best < 0 || st->ss[m].unassigned > st->ss[best].unassigned))
                best = m;
        if (best < 0)
            break;
        double rest = allocate(s, st, best, st->ss[best].unassigned);
        st->ss[best].unassigned = 0;    /* what is left is not covered this epoch */
        if (rest > 0 && st->elastic && st->ss[best].bmax_tp > 0)
            st->pending_adds += (int)ceil(rest / st->ss[best].bmax_tp);
    }
    /* elastic: grow by what is uncovered; release executors idle for a whole epoch */
    if (st->elastic) {
        for (; st->pending_adds > 0; st->pending_adds--)
            if (sim_exec_add(s) < 0)
                break;
        st->pending_adds = 0;
        for (int g = 0; g < st->nx; g++) {
            const struct backend *b = &st->bk[g];
            if (usable(s, g) && b->n == 0 && !b->is_static &&
                sim_now(s) - b->idle_since >= st->epoch_ns && !b->busy)
                sim_exec_remove(s, g);
        }
    }
    free(spill);
    free(scratch);
    publish(s, st);
}

/* ---------------------------------------------------------------- beacon */

static void beacon(struct sim *s, struct nexus *st)
{
    bool trigger = false;
    for (int m = 0; m < st->nm; m++) {
        struct session *se = &st->ss[m];
        double rps = 0;
        for (int f = 0; f < st->nf; f++) {
            double c = (double)st->count[f * st->nm + m] * 1e9 / (double)st->beacon_ns;
            st->count[f * st->nm + m] = 0;
            se->rate[f] += st->alpha_ewma * (c - se->rate[f]);
            rps += fmax(0, se->rate[f]);
        }
        if (se->nhist == 0 && rps == 0)
            continue;                   /* skip leading zeros */
        se->hist[se->hpos] = rps;
        se->hpos = (se->hpos + 1) % HIST;
        if (se->nhist < HIST)
            se->nhist++;
        sim_ts_add(s, "nexus_rps_estimate", m, rps);
        if (se->nhist == HIST && se->bmax > 0) {
            double est = fmax(rps, 0.1), tp = session_tp(st, m);
            if (est < 0.8 * tp || est > 1.1 * tp)
                trigger = true;
        }
    }
    int64_t since = sim_now(s) - st->last_epoch;
    if (st->epoch_sched && ((trigger && since >= st->min_epoch_ns) || since >= st->epoch_ns))
        epoch(s, st);
    sim_timer_set(s, sim_now(s) + st->beacon_ns, TAG_BEACON, NULL);
}

/* ---------------------------------------------------------------- frontends */

static int route(struct sim *s, void *state, const struct sim_request *r)
{
    (void)s;
    struct nexus *st = state;
    st->count[r->frontend * st->nm + r->model]++;
    struct route *rt = &st->rt[r->frontend * st->nm + r->model];
    int n = rt->n;
    if (n == 0)
        return SIM_ROUTE_DROP;
    for (int step = 0; step < 2 * n; step++) {
        int i = (rt->index + step) % n;
        if (rt->deficit[i] >= 1 - 1e-6) {
            rt->deficit[i] -= 1;
            return rt->be[i];
        }
        rt->deficit[i] += rt->quantum[i];
        rt->index = (rt->index + 1) % n;
    }
    return rt->be[rt->index];           /* not reached with quanta >= 1 */
}

/* ---------------------------------------------------------------- backend loop */

/* Forms and dispatches the next batch of the round at backend g; returns false at the end of
 * the round. Early drop: requests that cannot finish by their deadline even if run now. */
static bool next_batch(struct sim *s, struct nexus *st, int g)
{
    struct backend *b = &st->bk[g];
    int64_t now = sim_now(s);
    while (b->pos < st->nm) {
        int m = b->pos++;
        int q = sim_xqueue_len(s, g, m);
        int expect = b->batch[m] < q ? b->batch[m] : q;
        if (expect <= 0)
            continue;
        if (st->earliest_first) {
            while (sim_xqueue_len(s, g, m) &&
                   sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) < now + lat_ns(s, st, m, 1))
                sim_xqueue_drop_head(s, g, m);
            q = sim_xqueue_len(s, g, m);
            if (expect > q)
                expect = q;
            if (expect == 0)
                continue;
            int64_t room = sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) - now;
            while (expect > 1 && lat_ns(s, st, m, expect) >= room)
                expect--;
        } else {
            int64_t finish = now + lat_ns(s, st, m, expect);
            while (expect > 0 && sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) < finish) {
                sim_xqueue_drop_head(s, g, m);
                if (sim_xqueue_len(s, g, m) < expect) {
                    expect = sim_xqueue_len(s, g, m);
                    if (expect > 0)
                        finish = now + lat_ns(s, st, m, expect);
                }
            }
            if (expect == 0)
                continue;
        }
        struct sim_dispatch_args a = {.exec = g, .model = m, .n = expect, .from = g,
                                      .start_at = now, .expected_ns = lat_ns(s, st, m, expect)};
        sim_dispatch_ex(s, &a);
        b->busy = true;
        b->ran = true;
        return true;
    }
    return false;
}

static void start_round(struct sim *s, struct nexus *st, int g)
{
    struct backend *b = &st->bk[g];
    b->pos = 0;
    b->round_start = sim_now(s);
    b->round_exec = 0;
    b->ran = false;
    b->in_round = true;
}

/* Runs backend g until it has a batch in flight, waits for a poll instant, or idles. */
static void run_backend(struct sim *s, struct nexus *st, int g)
{
    struct backend *b = &st->bk[g];
    if (b->busy || b->timer || sim_exec(s, g)->state != SIM_EXEC_UP)
        return;
    if (!b->in_round)
        start_round(s, st, g);
    if (next_batch(s, st, g))
        return;
    /* end of the round */
    b->in_round = false;
    if (!b->ran) {
        b->idle = true;                 /* woken by the next arrival, on the poll grid */
        return;
    }
    int64_t next = b->round_start + (b->round_exec < POLL_NS ? POLL_NS : 0);
    if (st->pace && b->duty > 0) {
        int64_t d = sim_s_to_ns(b->duty);
        if (b->round_start + d > next)
            next = b->round_start + d;
    }
    if (next > sim_now(s)) {
        b->timer = sim_timer_set(s, next, TAG_ROUND, (void *)(intptr_t)g);
        return;
    }
    start_round(s, st, g);
    if (!next_batch(s, st, g)) {
        b->in_round = false;
        b->idle = true;
    }
}

static void kick(struct sim *s, struct nexus *st, int g)
{
    struct backend *b = &st->bk[g];
    if (!b->idle || b->timer)
        return;
    int64_t now = sim_now(s);
    int64_t k = (now - b->round_start + POLL_NS - 1) / POLL_NS;
    int64_t at = b->round_start + k * POLL_NS;
    b->idle = false;
    if (at <= now) {
        run_backend(s, st, g);
        return;
    }
    b->timer = sim_timer_set(s, at, TAG_ROUND, (void *)(intptr_t)g);
}

static void on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    struct nexus *st = state;
    int g = r->exec;
    if (g < 0)
        SIM_BUG("Nexus request %llu reached the central queue", (unsigned long long)r->id);
    struct backend *b = &st->bk[g];
    if (b->idle)
        kick(s, st, g);
    else if (!b->busy && !b->timer)
        run_backend(s, st, g);
}

static void on_batch_done(struct sim *s, void *state, const struct sim_batch *bt)
{
    struct nexus *st = state;
    struct backend *b = &st->bk[bt->exec];
    b->busy = false;
    b->round_exec += bt->t_finish - bt->t_start;
    run_backend(s, st, bt->exec);
}

static void on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    struct nexus *st = state;
    if (tag == TAG_BEACON) {
        beacon(s, st);
        if (st->nomem)
            sim_fail_nomem(s, "in the Nexus planner");
        return;
    }
    int g = (int)(intptr_t)arg;
    st->bk[g].timer = 0;
    st->bk[g].in_round = false;
    run_backend(s, st, g);
}

static void on_load_done(struct sim *s, void *state, int e, int m, bool ok)
{
    (void)e;
    struct nexus *st = state;
    if (ok)
        rebuild_routes(s, st, m);
    if (st->nomem)
        sim_fail_nomem(s, "building Nexus routes");
}

/* Room for backends 0..n-1 (ids are never reused: an autoscaled run can outgrow
 * cluster.max_gpus). New backends are idle and host nothing. */
static int grow(struct nexus *st, int n)
{
    if (n <= st->maxx)
        return 0;
    int cap = 2 * n;
    struct backend *bk = realloc(st->bk, (size_t)cap * sizeof *bk);
    if (!bk)
        return SIM_ENOMEM;
    st->bk = bk;
    memset(bk + st->maxx, 0, (size_t)(cap - st->maxx) * sizeof *bk);
    int old = st->maxx;
    st->maxx = cap;                     /* destroy frees what the new slots get */
    for (int g = old; g < cap; g++) {
        bk[g].in = calloc((size_t)st->nm, sizeof *bk[g].in);
        bk[g].batch = calloc((size_t)st->nm, sizeof *bk[g].batch);
        if (!bk[g].in || !bk[g].batch)
            return SIM_ENOMEM;
        bk[g].idle = true;
    }
    for (int m = 0; m < st->nm; m++) {
        double *w = realloc(st->ss[m].weights, (size_t)cap * sizeof *w);
        if (!w)
            return SIM_ENOMEM;
        memset(w + old, 0, (size_t)(cap - old) * sizeof *w);
        st->ss[m].weights = w;
    }
    int *idx = realloc(st->idx, (size_t)(cap > st->nm ? cap : st->nm) * sizeof *idx);
    if (!idx)
        return SIM_ENOMEM;
    st->idx = idx;
    return 0;
}

/* A backend removed during the run (autoscaling) drains: its instances are unloaded and
 * their rates placed again on the others at once, as the scheduler does when a backend
 * leaves, so the frontends stop routing to it. */
static void on_exec_remove(struct sim *s, void *state, int e)
{
    struct nexus *st = state;
    if (st->bk[e].n == 0)
        return;                         /* hosted nothing (e.g. an elastic release) */
    double *rate = calloc((size_t)st->nm, sizeof *rate);
    if (!rate) {
        sim_fail_nomem(s, "in the Nexus planner");
        return;
    }
    for (int m = 0; m < st->nm; m++)
        if (st->bk[e].in[m].on) {
            rate[m] = st->ss[m].weights[e];
            unload(s, st, e, m);
        }
    for (int m = 0; m < st->nm; m++)
        if (rate[m] > 0)
            allocate(s, st, m, rate[m]);
    free(rate);
    publish(s, st);
}

static void on_exec_up(struct sim *s, void *state, int e)
{
    struct nexus *st = state;
    if (grow(st, e + 1)) {
        sim_fail_nomem(s, "growing Nexus's backends");
        return;
    }
    if (e >= st->nx)
        st->nx = e + 1;
    st->bk[e].idle_since = sim_now(s);
    st->bk[e].round_start = sim_now(s);
    st->bk[e].idle = true;
}

/* ---------------------------------------------------------------- planner, for tests */

/* A planner over the engine's models and executors with nothing placed. */
static int scratch_planner(const struct sim *s, double mult, struct nexus *st)
{
    memset(st, 0, sizeof *st);
    st->mult = mult;
    st->nm = sim_model_count(s);
    st->nx = st->maxx = sim_exec_count(s);
    st->kind = sim_exec(s, 0)->kind;
    st->ss = calloc((size_t)st->nm, sizeof *st->ss);
    st->bk = calloc((size_t)st->nx, sizeof *st->bk);
    if (!st->ss || !st->bk)
        return SIM_ENOMEM;
    for (int m = 0; m < st->nm; m++) {
        if (!(st->ss[m].weights = calloc((size_t)st->nx, sizeof(double))))
            return SIM_ENOMEM;
        st->ss[m].bmax = bmax_of(s, mult, st->kind, m);
        st->ss[m].bmax_tp = st->ss[m].bmax / lat_s(s, st, m, st->ss[m].bmax);
    }
    for (int g = 0; g < st->nx; g++)
        if (!(st->bk[g].in = calloc((size_t)st->nm, sizeof(struct inst))))
            return SIM_ENOMEM;
    return 0;
}

static void destroy(void *state);

bool nexus_instance(const struct sim *s, int m, double mult, double w, struct nexus_inst_view *out)
{
    struct nexus st;
    struct inst in;
    bool ok = scratch_planner(s, mult, &st) == 0 && inst_for(s, &st, m, w, &in);
    if (ok)
        *out = (struct nexus_inst_view){.batch = in.batch, .max_batch = in.max_batch,
                                        .duty_max = in.duty_max, .tp = in.tp,
                                        .occupancy_alone = in.lat / in.duty_max};
    destroy(&st);
    return ok;
}

int nexus_pack_one_gpu(const struct sim *s, double mult, int n, const int *models,
                       const double *rates, int *batches, double *occ)
{
    struct nexus st;
    int placed = 0;
    struct inst ni;
    if (scratch_planner(s, mult, &st) == 0) {
        struct inst *scratch = calloc((size_t)st.nm, sizeof *scratch);
        for (; scratch && placed < n; placed++) {
            if (prepare(s, &st, 0, models[placed], rates[placed], &ni, scratch) < 0)
                break;
            place(s, &st, 0, models[placed], &ni);
        }
        free(scratch);
        for (int i = 0; i < placed; i++)
            batches[i] = st.bk[0].in[models[i]].batch;
        *occ = occupancy(&st.bk[0]);
    }
    destroy(&st);
    return placed;
}

/* ---------------------------------------------------------------- setup */

static int parse_static(struct sim *s, struct nexus *st, const cJSON *arr)
{
    static const char *const bkeys[] = {"backend", "models", NULL};
    static const char *const mkeys[] = {"model", "batch", NULL};
    if (!cJSON_IsArray(arr))
        return sim_json_expected("policy.params.static_schedule", "an array of {backend, models}", arr);
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        char p[SIM_JPATH_MAX], mp[SIM_JPATH_MAX];
        const cJSON *ms;
        long g = 0;
        int rc;
        sim_jpath_idx(p, sizeof p, "policy.params.static_schedule", i++);
        if (!cJSON_IsObject(it))
            return sim_json_expected(p, "{backend, models}", it);
        if ((rc = sim_json_keys(it, p, bkeys)) ||
            (rc = sim_json_int(it, p, "backend", true, 0, st->nx - 1, &g)) ||
            (rc = sim_json_arr(it, p, "models", true, &ms)))
            return rc;
        struct backend *b = &st->bk[g];
        if (b->is_static)
            return sim_err_set(SIM_EINVAL, "%s.backend: backend %ld is listed twice", p, g);
        b->is_static = true;
        int j = 0;
        const cJSON *e;
        double duty = 0;
        cJSON_ArrayForEach(e, ms) {
            const char *name;
            long batch;
            snprintf(mp, sizeof mp, "%s.models[%d]", p, j++);
            if (!cJSON_IsObject(e))
                return sim_json_expected(mp, "{model, batch}", e);
            if ((rc = sim_json_keys(e, mp, mkeys)) || (rc = sim_json_str(e, mp, "model", true, &name)))
                return rc;
            int m = -1;
            for (int k = 0; k < st->nm; k++)
                if (strcmp(sim_model(s, k)->cfg->name, name) == 0)
                    m = k;
            if (m < 0)
                return sim_err_set(SIM_EINVAL, "%s.model: expected a model of the config, got \"%s\"",
                                   mp, name);
            if ((rc = sim_json_int(e, mp, "batch", true, 1, sim_model(s, m)->max_batch, &batch)))
                return rc;
            if (b->in[m].on)
                return sim_err_set(SIM_EINVAL, "%s.model: \"%s\" twice on backend %ld", mp, name, g);
            b->in[m] = (struct inst){.on = true, .batch = (int)batch, .max_batch = (int)batch,
                                     .lat = lat_s(s, st, m, (int)batch)};
            b->n++;
            duty += b->in[m].lat;
        }
        b->duty = b->exec = duty;
        for (int m = 0; m < st->nm; m++)
            if (b->in[m].on) {
                b->in[m].duty_max = duty;
                b->in[m].tp = b->in[m].workload = b->in[m].batch / duty;
                st->ss[m].weights[g] = b->in[m].tp;
            }
    }
    return 0;
}

/* The epoch scheduler re-plans every epoch_s from rates it has measured since the last one:
 * the first plan from measured rates comes after one epoch, and it is in force over the
 * whole of the second. Without epoch scheduling the initial schedule stands. */
static double converge_s(const cJSON *p)
{
    bool epochs = true;
    double epoch_s = 30;
    if (sim_json_bool(p, "policy.params", "epoch_schedule", false, &epochs) ||
        sim_json_num(p, "policy.params", "epoch_s", false, SIM_J_POS, &epoch_s))
        sim_err_clear();                /* init reports bad params */
    return epochs ? 2 * epoch_s : 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct nexus *st = state;
    int rc, drop = 0, load = 1, rate = 0, bbatch = 1;  /* defaults: preset "paper" (presets.c) */
    double beacon_s = 1, epoch_s = 30, min_epoch_s = 10, avg_s = 10;
    const cJSON *stat = NULL;
    st->mult = 1.15;
    st->epoch_sched = true;
    if ((rc = sim_json_num(p, "policy.params", "profile_multiplier", false, SIM_J_POS, &st->mult)) ||
        (rc = sim_json_bool(p, "policy.params", "epoch_schedule", false, &st->epoch_sched)) ||
        (rc = sim_json_enum(p, "policy.params", "drop_policy", false, DROPS, &drop)) ||
        (rc = sim_json_bool(p, "policy.params", "pace_duty_cycle", false, &st->pace)) ||
        (rc = sim_json_bool(p, "policy.params", "elastic", false, &st->elastic)) ||
        (rc = sim_json_enum(p, "policy.params", "model_load", false, LOADS, &load)) ||
        (rc = sim_json_enum(p, "policy.params", "initial_rate", false, RATES, &rate)) ||
        (rc = sim_json_enum(p, "policy.params", "backend_batch", false, BBATCH, &bbatch)) ||
        (rc = sim_json_num(p, "policy.params", "beacon_s", false, SIM_J_POS, &beacon_s)) ||
        (rc = sim_json_num(p, "policy.params", "epoch_s", false, SIM_J_POS, &epoch_s)) ||
        (rc = sim_json_num(p, "policy.params", "min_epoch_s", false, SIM_J_POS, &min_epoch_s)) ||
        (rc = sim_json_num(p, "policy.params", "avg_interval_s", false, SIM_J_POS, &avg_s)) ||
        (rc = sim_check_period(s, "policy.params.beacon_s", beacon_s, SIM_MAX_FIRINGS)))
        return rc;
    /* the epoch scheduler re-plans at a beacon once min_epoch_s (at the latest epoch_s) passed */
    if (st->epoch_sched &&
        (rc = sim_check_period(s, epoch_s < min_epoch_s ? "policy.params.epoch_s"
                                                        : "policy.params.min_epoch_s",
                               fmax(fmin(epoch_s, min_epoch_s), beacon_s), SIM_MAX_PLANS)))
        return rc;
    if (p)
        stat = cJSON_GetObjectItemCaseSensitive(p, "static_schedule");
    st->earliest_first = drop == 1;
    st->on_assign = load == 1;
    st->configured_rate = rate == 1;
    st->accumulated = bbatch == 1;
    st->beacon_ns = sim_s_to_ns(beacon_s);
    st->epoch_ns = sim_s_to_ns(epoch_s);
    st->min_epoch_ns = sim_s_to_ns(min_epoch_s);
    st->alpha_ewma = 1 - exp(-beacon_s / avg_s);
    st->nm = sim_model_count(s);
    st->nf = sim_frontend_count(s);
    st->nx = sim_exec_count(s);
    st->kind = sim_exec(s, 0)->kind;
    int maxx = st->maxx = sim_world(s)->max_gpus > st->nx ? sim_world(s)->max_gpus : st->nx;
    st->ss = calloc((size_t)st->nm, sizeof *st->ss);
    st->bk = calloc((size_t)maxx, sizeof *st->bk);
    st->rt = calloc((size_t)(st->nf * st->nm), sizeof *st->rt);
    st->count = calloc((size_t)(st->nf * st->nm), sizeof *st->count);
    st->idx = calloc((size_t)(maxx > st->nm ? maxx : st->nm), sizeof *st->idx);
    if (!st->ss || !st->bk || !st->rt || !st->count || !st->idx)
        return SIM_ENOMEM;
    for (int m = 0; m < st->nm; m++) {
        struct session *se = &st->ss[m];
        se->weights = calloc((size_t)maxx, sizeof *se->weights);
        se->rate = calloc((size_t)st->nf, sizeof *se->rate);
        if (!se->weights || !se->rate)
            return SIM_ENOMEM;
        se->bmax = bmax_of(s, st->mult, st->kind, m);
        if (lat_s(s, st, m, se->bmax) > (slo_s(s, m) - NET_S) / 2 && se->bmax == 1)
            se->bmax = lat_s(s, st, m, 1) <= slo_s(s, m) ? 1 : 0;
        se->bmax_tp = se->bmax ? se->bmax / lat_s(s, st, m, se->bmax) : 0;
        se->bslo = 1;
        while (se->bslo < sim_model(s, m)->max_batch &&
               lat_s(s, st, m, se->bslo + 1) <= slo_s(s, m) - NET_S)
            se->bslo++;
    }
    for (int g = 0; g < maxx; g++) {
        struct backend *b = &st->bk[g];
        b->in = calloc((size_t)st->nm, sizeof *b->in);
        b->batch = calloc((size_t)st->nm, sizeof *b->batch);
        if (!b->in || !b->batch)
            return SIM_ENOMEM;
        b->idle = true;
    }
    if (stat && (rc = parse_static(s, st, stat)))
        return rc;
    /* start-up placement: each session on one idle GPU, saturated (nexuslb), or covering
     * its configured rate */
    for (int m = 0; m < st->nm; m++) {
        if (st->ss[m].bmax == 0 || session_tp(st, m) > 0)
            continue;
        if (st->configured_rate) {
            allocate(s, st, m, sim_model(s, m)->rate_rps * sim_load_scale(s));
        } else {
            struct inst ni;
            int g = find_best(s, st, m, 0, &ni);
            if (g >= 0)
                place(s, st, g, m, &ni);
        }
    }
    if (st->on_assign) {
        /* cold GPUs: the statically placed models are there before traffic */
        for (int g = 0; g < st->nx; g++)
            for (int m = 0; m < st->nm; m++)
                if (st->bk[g].in[m].on)
                    sim_preload(s, g, m);
    }
    publish(s, st);
    sim_timer_set(s, st->beacon_ns, TAG_BEACON, NULL);
    return st->nomem ? SIM_ENOMEM : 0;
}

static void destroy(void *state)
{
    struct nexus *st = state;
    for (int m = 0; st->ss && m < st->nm; m++) {
        free(st->ss[m].weights);
        free(st->ss[m].rate);
    }
    for (int g = 0; st->bk && g < st->maxx; g++) {
        free(st->bk[g].in);
        free(st->bk[g].batch);
    }
    free(st->bk);
    if (st->rt)
        for (int i = 0; i < st->nf * st->nm; i++) {
            free(st->rt[i].be);
            free(st->rt[i].quantum);
            free(st->rt[i].deficit);
        }
    free(st->ss);
    free(st->rt);
    free(st->count);
    free(st->idx);
}

static bool cold_start(const cJSON *p)
{
    const cJSON *v = p ? cJSON_GetObjectItemCaseSensitive(p, "model_load") : NULL;
    return !cJSON_IsString(v) || strcmp(v->valuestring, "on_assign") == 0;  /* the default */
}

const struct policy_ops policy_nexus = {
    .name = "nexus",
    .summary = "Nexus: epoch bin packing, frontends route on their own (DRR), GPU round-robin, early drop (SOSP'19)",
    .state_size = sizeof(struct nexus),
    .param_keys = params,
    .cold_start = cold_start,
    .converge_s = converge_s,
    .init = init,
    .route = route,
    .on_request = on_request,
    .on_batch_done = on_batch_done,
    .on_timer = on_timer,
    .on_load_done = on_load_done,
    .on_exec_up = on_exec_up,
    .on_exec_remove = on_exec_remove,
    .dynamic_execs = true,
    .destroy = destroy,
};
