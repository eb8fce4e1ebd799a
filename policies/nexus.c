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
 * Layout: the planner (profile math, placement, the epoch schedule) is nexus_plan.c; here
 * the tables and routes it publishes, the 1-s beacon (EWMA rates, trigger), frontend routing
 * (policy_ops.route), the backend loop on the engine's executor queues, and setup. A session
 * is a model (one SLO per model). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nexus.h"
#include "nexus_int.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"

/* ---------------------------------------------------------------- tables and routes */

static void rebuild_routes(const struct sim *s, struct nexus *st, int m)
{
    for (int f = 0; f < st->nf; f++) {
        struct route *r = &st->rt[f * st->nm + m];
        int n = 0;
        double minw = INFINITY;
        for (int g = 0; g < st->nx; g++) {
            double w = st->ss[m].weights[g];
            if (w > 0 && nexus_usable(s, g) && sim_resident(s, g, m) == SIM_RES_LOADED) {
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
void nexus_publish(struct sim *s, struct nexus *st)
{
    if (st->nomem)
        sim_fail_nomem(s, "in the Nexus planner");
    for (int g = 0; g < st->nx; g++) {
        struct backend *b = &st->bk[g];
        for (int m = 0; m < st->nm; m++) {
            if (!b->in[m].on)
                continue;
            b->batch[m] = st->accumulated ? st->ss[m].bslo : b->in[m].batch;
            if (st->on_assign && sim_resident(s, g, m) == SIM_RES_NONE && nexus_usable(s, g)) {
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
    if (st->nomem)                      /* (rebuild_routes may have set it) */
        sim_fail_nomem(s, "building Nexus routes");
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
            double est = fmax(rps, 0.1), tp = nexus_session_tp(st, m);
            if (est < 0.8 * tp || est > 1.1 * tp)
                trigger = true;
        }
    }
    int64_t since = sim_now(s) - st->last_epoch;
    if (st->epoch_sched && ((trigger && since >= st->min_epoch_ns) || since >= st->epoch_ns))
        nexus_epoch(s, st);
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
                   sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) < now + nexus_lat_ns(s, st, m, 1))
                sim_xqueue_drop_head(s, g, m);
            q = sim_xqueue_len(s, g, m);
            if (expect > q)
                expect = q;
            if (expect == 0)
                continue;
            int64_t room = sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) - now;
            while (expect > 1 && nexus_lat_ns(s, st, m, expect) >= room)
                expect--;
        } else {
            int64_t finish = now + nexus_lat_ns(s, st, m, expect);
            while (expect > 0 && sim_xqueue_at(s, g, m, 0)->deadline - sim_resp_delay_ns(s, m) < finish) {
                sim_xqueue_drop_head(s, g, m);
                if (sim_xqueue_len(s, g, m) < expect) {
                    expect = sim_xqueue_len(s, g, m);
                    if (expect > 0)
                        finish = now + nexus_lat_ns(s, st, m, expect);
                }
            }
            if (expect == 0)
                continue;
        }
        struct sim_dispatch_args a = {.exec = g, .model = m, .n = expect, .from = g,
                                      .start_at = now, .expected_ns = nexus_lat_ns(s, st, m, expect)};
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
            nexus_unload(s, st, e, m);
        }
    for (int m = 0; m < st->nm; m++)
        if (rate[m] > 0)
            nexus_allocate(s, st, m, rate[m]);
    free(rate);
    nexus_publish(s, st);
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
        st->ss[m].bmax = nexus_bmax_of(s, mult, st->kind, m);
        st->ss[m].bmax_tp = st->ss[m].bmax / nexus_lat_s(s, st, m, st->ss[m].bmax);
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
    bool ok = scratch_planner(s, mult, &st) == 0 && nexus_inst_for(s, &st, m, w, &in);
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
            if (nexus_prepare(s, &st, 0, models[placed], rates[placed], &ni, scratch) < 0)
                break;
            nexus_place(s, &st, 0, models[placed], &ni);
        }
        free(scratch);
        for (int i = 0; i < placed; i++)
            batches[i] = st.bk[0].in[models[i]].batch;
        *occ = nexus_occupancy(&st.bk[0]);
    }
    destroy(&st);
    return placed;
}

/* ---------------------------------------------------------------- setup */

/* policy.params as given; init turns them into struct nexus's fields. The defaults are the
 * Nexus the Symphony paper measured (preset "paper", presets.c). */
struct nx_params {
    double profile_multiplier;
    bool epoch_schedule, pace_duty_cycle, elastic;
    int drop_policy, model_load, initial_rate, backend_batch;     /* DROPS ... BBATCH */
    double beacon_s, epoch_s, min_epoch_s, avg_interval_s;
};

/* static_schedule's entries: ranges that depend on the run (the backends, a model's largest
 * batch), so read by parse_static */
static const struct sim_param STATIC_MODEL[] = {
    {"model", SIM_P_HAND, .type_doc = "a model's name", .def_doc = "required",
     .doc = "a model of the config, once per backend"},
    {"batch", SIM_P_HAND, .type_doc = "integer in [1, the model's max_batch]",
     .def_doc = "required", .doc = "its batch there; with the others, the backend's duty cycle"},
    {NULL}};
static const struct sim_param STATIC_BACKEND[] = {
    {"backend", SIM_P_HAND, .type_doc = "integer in [0, executors - 1]", .def_doc = "required",
     .doc = "the backend (executor), listed once"},
    {"models", SIM_P_SECTION, .rows = STATIC_MODEL, .flags = SIM_P_EACH, .def_doc = "required",
     .doc = "the sessions it runs"},
    {NULL}};

static const char *const DROPS[] = {"sliding_window", "earliest_first", NULL};
static const char *const LOADS[] = {"preloaded", "on_assign", NULL};
static const char *const RATES[] = {"zero", "configured", NULL};
static const char *const BBATCH[] = {"planned", "accumulated", NULL};

#define NP(f, type) SIM_P_AT(struct nx_params, f, type)
#define NE(f) SIM_P_AT_ENUM(struct nx_params, f)
static const struct sim_param params[] = {
    {"profile_multiplier", SIM_P_NUM, NP(profile_multiplier, double), .cons = SIM_J_POS,
     .def = 1.15, .doc = "the planner's profiles times this (the original's headroom; the "
                         "nexuslb harness 1.0)"},
    {"backend_batch", SIM_P_ENUM, NE(backend_batch), .choices = BBATCH, .sdef = "accumulated",
     .doc = "what a backend takes at once: every queued request up to the largest batch that "
            "can meet the SLO (the Symphony paper's Nexus) or at most the planned batch (both "
            "code bases; below)"},
    {"epoch_schedule", SIM_P_BOOL, NP(epoch_schedule, bool), .def = 1,
     .doc = "re-plan every epoch from measured rates; false: the initial schedule stands"},
    {"static_schedule", SIM_P_SECTION, .rows = STATIC_BACKEND, .flags = SIM_P_EACH,
     .def_doc = "none",
     .doc = "a fixed schedule: the batches set each backend's duty cycle and routing "
            "weights; what a backend takes at once is `backend_batch`'s rule, so with "
            "`accumulated` a static batch is not a cap"},
    {"drop_policy", SIM_P_ENUM, NE(drop_policy), .choices = DROPS,
     .doc = "the backend's early drop: sliding window (the original's default) or earliest "
            "first"},
    {"pace_duty_cycle", SIM_P_BOOL, NP(pace_duty_cycle, bool), .def = 0,
     .doc = "a backend waits out its duty cycle between rounds"},
    {"elastic", SIM_P_BOOL, NP(elastic, bool), .def = 0,
     .doc = "uncovered load asks the engine for executors, up to `cluster.max_gpus`; idle "
            "ones are released after an epoch"},
    {"model_load", SIM_P_ENUM, NE(model_load), .choices = LOADS, .sdef = "on_assign",
     .doc = "`on_assign`: cold GPUs, a backend is routed to after its LOAD; `preloaded`: "
            "every model on every GPU (the harness)"},
    {"initial_rate", SIM_P_ENUM, NE(initial_rate), .choices = RATES,
     .doc = "the rate the first schedule is planned for: zero (as nexuslb) or the "
            "configured one"},
    {"beacon_s", SIM_P_NUM, NP(beacon_s, double), .cons = SIM_J_POS, .def = 1,
     .doc = "the backends' load reports; the scheduler updates its EWMA rates at each"},
    {"epoch_s", SIM_P_NUM, NP(epoch_s, double), .cons = SIM_J_POS, .def = 30,
     .doc = "re-plan at least this often"},
    {"min_epoch_s", SIM_P_NUM, NP(min_epoch_s, double), .cons = SIM_J_POS, .def = 10,
     .doc = "a trigger re-plans no sooner than this after the last plan"},
    {"avg_interval_s", SIM_P_NUM, NP(avg_interval_s, double), .cons = SIM_J_POS, .def = 10,
     .doc = "the EWMA's time constant: alpha = 1 - exp(-beacon_s / avg_interval_s)"},
    {NULL}};
#undef NP
#undef NE

static int parse_static(struct sim *s, struct nexus *st, const cJSON *arr)
{
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
        if ((rc = sim_params_keys(STATIC_BACKEND, it, p)) ||
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
            if ((rc = sim_params_keys(STATIC_MODEL, e, mp)) ||
                (rc = sim_json_str(e, mp, "model", true, &name)))
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
                                     .lat = nexus_lat_s(s, st, m, (int)batch)};
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
    struct nx_params pp;
    if (sim_params_read(params, p, "policy.params", &pp)) {
        sim_err_clear();                /* init reports bad params */
        return 0;
    }
    return pp.epoch_schedule ? 2 * pp.epoch_s : 0;
}

static int init(struct sim *s, const cJSON *p, void *state)
{
    struct nexus *st = state;
    struct nx_params pp;
    int rc;
    const cJSON *stat = NULL;
    if ((rc = sim_params_read(params, p, "policy.params", &pp)) ||
        (rc = sim_check_period(s, "policy.params.beacon_s", pp.beacon_s, SIM_MAX_FIRINGS)))
        return rc;
    double beacon_s = pp.beacon_s, epoch_s = pp.epoch_s, min_epoch_s = pp.min_epoch_s;
    st->mult = pp.profile_multiplier;
    st->epoch_sched = pp.epoch_schedule;
    st->pace = pp.pace_duty_cycle;
    st->elastic = pp.elastic;
    /* the epoch scheduler re-plans at a beacon once min_epoch_s (at the latest epoch_s) passed */
    if (st->epoch_sched &&
        (rc = sim_check_period(s, epoch_s < min_epoch_s ? "policy.params.epoch_s"
                                                        : "policy.params.min_epoch_s",
                               fmax(fmin(epoch_s, min_epoch_s), beacon_s), SIM_MAX_PLANS)))
        return rc;
    if (p)
        stat = cJSON_GetObjectItemCaseSensitive(p, "static_schedule");
    st->earliest_first = pp.drop_policy == 1;
    st->on_assign = pp.model_load == 1;
    st->configured_rate = pp.initial_rate == 1;
    st->accumulated = pp.backend_batch == 1;
    st->beacon_ns = sim_s_to_ns(beacon_s);
    st->epoch_ns = sim_s_to_ns(epoch_s);
    st->min_epoch_ns = sim_s_to_ns(min_epoch_s);
    st->alpha_ewma = 1 - exp(-beacon_s / pp.avg_interval_s);
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
        se->bmax = nexus_bmax_of(s, st->mult, st->kind, m);
        if (nexus_lat_s(s, st, m, se->bmax) > (nexus_slo_s(s, m) - NET_S) / 2 && se->bmax == 1)
            se->bmax = nexus_lat_s(s, st, m, 1) <= nexus_slo_s(s, m) ? 1 : 0;
        se->bmax_tp = se->bmax ? se->bmax / nexus_lat_s(s, st, m, se->bmax) : 0;
        se->bslo = 1;
        while (se->bslo < sim_model(s, m)->max_batch &&
               nexus_lat_s(s, st, m, se->bslo + 1) <= nexus_slo_s(s, m) - NET_S)
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
        if (st->ss[m].bmax == 0 || nexus_session_tp(st, m) > 0)
            continue;
        if (st->configured_rate) {
            nexus_allocate(s, st, m, sim_model(s, m)->rate_rps * sim_load_scale(s));
        } else {
            struct inst ni;
            int g = nexus_find_best(s, st, m, 0, &ni);
            if (g >= 0)
                nexus_place(s, st, g, m, &ni);
        }
    }
    if (st->on_assign) {
        /* cold GPUs: the statically placed models are there before traffic */
        for (int g = 0; g < st->nx; g++)
            for (int m = 0; m < st->nm; m++)
                if (st->bk[g].in[m].on)
                    sim_preload(s, g, m);
    }
    nexus_publish(s, st);
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

/* GPUs start cold unless model_load is "preloaded" (the table's default is on_assign; bad
 * params, which init reports, count as the default). */
static bool cold_start(const cJSON *p)
{
    struct nx_params pp;
    if (sim_params_read(params, p, "policy.params", &pp)) {
        sim_err_clear();
        sim_params_defaults(params, &pp);
    }
    return pp.model_load == 1;
}

const struct policy_ops policy_nexus = {
    .name = "nexus",
    .summary = "Nexus: epoch bin packing, frontends route on their own (DRR), GPU round-robin, early drop (SOSP'19)",
    .state_size = sizeof(struct nexus),
    .params = params,
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
