/* rrl_ctl — the slot loop shared by RRL's policies, and the oracle table (rrl_ctl.h). */
#include "rrl_ctl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

#define TAG_SLOT RRL_NODE_TAGS

static const char *const OBJECTIVES[] = {"latency", "tail", "resource", NULL};
static const char *const DEVICES[] = {"gpu", "cpu", NULL};

#define CP(f, type) SIM_P_AT(struct rrl_ctl, f, type)
const struct sim_param rrl_ctl_params[] = {
    {"device", SIM_P_ENUM, SIM_P_AT_ENUM(struct rrl_ctl, node.dev), .choices = DEVICES,
     .doc = "`gpu`: TF Serving's batcher, configurations `[B, T_ms, m]`; `cpu` (one model, "
            "one CPU executor per node with all its cores): `[k, p, t]`"},
    {"slot_s", SIM_P_NUM, CP(slot_s, double), .cons = SIM_J_POS, .flags = SIM_P_NODEF,
     .def_doc = "100 / the configured mean rate (1 without one)",
     .doc = "the slot: a configuration runs for one, then the agent chooses the next"},
    {"max_wait_slots", SIM_P_NUM, CP(wait_slots, double), .cons = SIM_J_NONNEG,
     .flags = SIM_P_NODEF, .def_doc = "2 (`rrl-static`: 0, never drop)",
     .doc = "a request waiting longer than this many slots is dropped at a slot's end, its "
            "wait counted"},
    {"restart", SIM_P_BOOL, CP(restart, bool), .def = 0,
     .doc = "every slot a trial on a fresh server, as the authors' scripts ran them (below)"},
    {"objective", SIM_P_ENUM, SIM_P_AT_ENUM(struct rrl_ctl, objective), .choices = OBJECTIVES,
     .doc = "a slot's cost: the mean latency of the requests that ended in it, its "
            "`tail_pct` percentile, or the resource used while the mean is within `slo_ms`"},
    {"slo_ms", SIM_P_NUM, CP(slo_ms, double), .cons = SIM_J_POS, .flags = SIM_P_NODEF,
     .def_doc = "the first model's SLO", .doc = "the SLO of `objective: \"resource\"`"},
    {"tail_pct", SIM_P_NUM, CP(tail_pct, double), .cons = SIM_J_POS, .def = 95,
     .type_doc = "in (0, 100]", .doc = "the percentile of `objective: \"tail\"`"},
    {"load_bin", SIM_P_NUM, CP(load_bin, double), .cons = SIM_J_NONNEG, .def = 0,
     .type_doc = "0 or >= 0.01",
     .doc = "0: one state (the authors' scripts); > 0: the state is the slot's load in bins "
            "of this width x the mean rate (at most 3x)"},
    {"oracle_table", SIM_P_HAND, .type_doc = "an `rrl_table/1` object", .def_doc = "none "
     "(`rrl-oracle`: required)",
     .doc = "measured costs per rate and configuration (below): `rrl-oracle` runs by it; "
            "given to the others, they record their regret against it"},
    {NULL}};
#undef CP

/* Time-series names of the knobs (the applied and the greedy configuration), by device. */
static const char *const SERIES[2][2][3] = {
    {{"rrl.B", "rrl.T_ms", "rrl.m"}, {"rrl.greedy_B", "rrl.greedy_T_ms", "rrl.greedy_m"}},
    {{"rrl.k", "rrl.p", "rrl.t"}, {"rrl.greedy_k", "rrl.greedy_p", "rrl.greedy_t"}}};

int rrl_ctl_init(struct sim *s, struct rrl_ctl *ctl, const cJSON *p, bool need_rate,
                 double wait_default)
{
    int rc;
    ctl->wait_slots = wait_default;     /* the defaults the table leaves to us */
    ctl->slo_ms = sim_ns_to_ms(sim_model(s, 0)->slo_ns);
    for (int m = 0; m < sim_model_count(s); m++)
        ctl->lam_bar += sim_model(s, m)->rate_rps * sim_load_scale(s);
    ctl->slot_s = ctl->lam_bar > 0 ? 100 / ctl->lam_bar : 1;
    if ((rc = sim_params_values(rrl_ctl_params, p, "policy.params", ctl)) ||
        (rc = rrl_node_init(s, &ctl->node)) ||
        (rc = sim_check_period(s, "policy.params.slot_s", ctl->slot_s, SIM_MAX_FIRINGS)))
        return rc;
    if (ctl->tail_pct > 100)
        return sim_err_set(SIM_EINVAL, "policy.params.tail_pct: expected a percentile in "
                           "(0, 100], got %.15g", ctl->tail_pct);
    if (ctl->load_bin > 0 && ctl->load_bin < 0.01)
        return sim_err_set(SIM_EINVAL, "policy.params.load_bin: expected 0 (one state) or at "
                           "least 0.01, got %.15g", ctl->load_bin);
    if (need_rate && !(ctl->lam_bar > 0))
        return sim_err_set(SIM_EINVAL, "policy.params: this policy measures load relative to "
                           "the configured mean rate, and the workload has none (a trace?): "
                           "give workload.rate_rps");
    ctl->nstates = ctl->load_bin > 0 && ctl->lam_bar > 0
                       ? (int)ceil(3 / ctl->load_bin - 1e-9) + 1 : 1;
    return 0;
}

/* Reads an explicit grid at `path`: three ascending arrays of integers within the knobs'
 * bounds on this node (T >= 0 ms, the others >= 1; k or m at most cluster.lanes). */
static int grid_read(const cJSON *g, const char *path, const struct rrl_node *nd,
                     struct rrl_grid *gr)
{
    static const char *const CPU_KNOB[] = {"k", "p", "t"}, *const GPU_KNOB[] = {"B", "T_ms", "m"};
    bool cpu = nd->dev == RRL_CPU;
    if (!cJSON_IsArray(g) || cJSON_GetArraySize(g) != 3)
        return sim_json_expected(path, cpu ? "[[k...], [p...], [t...]]"
                                           : "[[B...], [T_ms...], [m...]]", g);
    long ncfg = 1;
    for (int j = 0; j < 3; j++) {
        const cJSON *a = cJSON_GetArrayItem(g, j);
        char kp[SIM_JPATH_MAX], what[128];
        sim_jpath_idx(kp, sizeof kp, path, j);
        int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
        if (n < 1 || n > RRL_MAX_VALUES) {
            snprintf(what, sizeof what, "an array of 1 to %d values of %s", RRL_MAX_VALUES,
                     (cpu ? CPU_KNOB : GPU_KNOB)[j]);
            return sim_json_expected(kp, what, a);
        }
        int lo = !cpu && j == 1 ? 0 : 1, hi = (cpu ? j == 0 : j == 2) ? nd->lanes : 100000;
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(a, i);
            if (!cJSON_IsNumber(x) || x->valuedouble != (double)(int)x->valuedouble ||
                x->valueint < lo || x->valueint > hi || (i && x->valueint <= gr->val[j][i - 1])) {
                char xp[SIM_JPATH_MAX];
                sim_jpath_idx(xp, sizeof xp, kp, i);
                snprintf(what, sizeof what, "an integer in [%d, %d]%s%s", lo, hi,
                         i ? " above the previous value" : "",
                         hi == nd->lanes ? " (at most cluster.lanes)" : "");
                return sim_json_expected(xp, what, x);
            }
            gr->val[j][i] = x->valueint;
        }
        gr->nv[j] = n;
        ncfg *= n;
    }
    if (ncfg > RRL_MAX_CONFIGS)
        return sim_err_set(SIM_EINVAL, "%s: %ld configurations, at most %d", path, ncfg,
                           RRL_MAX_CONFIGS);
    gr->ncfg = (int)ncfg;
    return 0;
}

int rrl_ctl_parse_grid(struct rrl_ctl *ctl, const cJSON *p)
{
    const struct rrl_node *nd = &ctl->node;
    struct rrl_grid *gr = &ctl->grid;
    const cJSON *g = p ? cJSON_GetObjectItemCaseSensitive(p, "grid") : NULL;
    if (g)
        return grid_read(g, "policy.params.grid", nd, gr);
    bool cpu = nd->dev == RRL_CPU;
    int C = nd->cores;
    int top[3] = {cpu ? (C < nd->lanes ? C : nd->lanes) : 11, cpu ? C : 11,
                  cpu ? C : (10 < nd->lanes ? 10 : nd->lanes)};
    gr->ncfg = 1;
    for (int j = 0; j < 3; j++) {
        gr->nv[j] = top[j] < RRL_MAX_VALUES ? top[j] : RRL_MAX_VALUES;
        gr->ncfg *= gr->nv[j];
        for (int i = 0; i < gr->nv[j]; i++)
            gr->val[j][i] = cpu || j == 2 ? i + 1 : j == 0 ? (i ? 5 * i : 1) : 5 * i;
    }
    return 0;
}

int rrl_ctl_state_of(const struct rrl_ctl *ctl, double load_rps)
{
    if (ctl->nstates == 1)
        return 0;
    long b = lround(load_rps / (ctl->load_bin * ctl->lam_bar));
    return b < ctl->nstates - 1 ? (int)b : ctl->nstates - 1;
}

/* The table's cost of configuration c at the rate nearest rate_rps over the least, minus 1
 * (nothing where the table did not measure c there). */
static void regret(struct sim *s, const struct rrl_ctl *ctl, const char *series, double rate_rps,
                   int c)
{
    const struct rrl_table *t = ctl->table;
    int row = rrl_table_row(t, rate_rps);
    const double *r = t->cost + (size_t)row * (size_t)t->grid.ncfg;
    double x = r[ctl->tmap[c]];
    if (!isnan(x))
        sim_ts_add(s, series, -1, x / r[t->best[row]] - 1);
}

void rrl_ctl_record(struct sim *s, const struct rrl_ctl *ctl, int which, int c)
{
    int v[3];
    rrl_grid_config(&ctl->grid, c, v);
    for (int j = 0; j < 3; j++)
        sim_ts_add(s, SERIES[ctl->node.dev][which][j], -1, v[j]);
    if (which == 1 && ctl->table) {
        /* priced at the centre of the state it is greedy for, s_t */
        double rate = ctl->nstates > 1 ? ctl->state * ctl->load_bin * ctl->lam_bar : ctl->lam_bar;
        regret(s, ctl, "rrl.greedy_regret", rate, c);
    }
}

static void apply(struct sim *s, struct rrl_ctl *ctl, int c)
{
    int v[3];
    ctl->cfg = c;
    rrl_grid_config(&ctl->grid, c, v);
    rrl_node_apply(s, &ctl->node, v);
    rrl_ctl_record(s, ctl, 0, c);
}

static void arm(struct sim *s, struct rrl_ctl *ctl)
{
    sim_timer_set(s, sim_now(s) + sim_s_to_ns(ctl->slot_s), TAG_SLOT, NULL);
}

int rrl_ctl_read_table(struct rrl_ctl *ctl, const cJSON *p, bool required)
{
    if (ctl->table)
        return 0;
    const char *P = "policy.params.oracle_table";
    const cJSON *tj = p ? cJSON_GetObjectItemCaseSensitive(p, "oracle_table") : NULL;
    if (!tj)
        return required ? sim_err_set(SIM_EINVAL, "%s: this policy needs a table of measured "
                                      "costs (rrl_table/1; experiments/rrl/oracle_table.sh "
                                      "writes one)", P) : 0;
    if (!(ctl->table = calloc(1, sizeof *ctl->table)))
        return SIM_ENOMEM;
    int rc;
    if ((rc = rrl_table_parse(ctl->table, tj, P, ctl)))
        return rc;
    const struct rrl_grid *tg = &ctl->table->grid;
    if (ctl->grid.ncfg == 0)
        ctl->grid = *tg;
    if (!(ctl->tmap = malloc((size_t)ctl->grid.ncfg * sizeof *ctl->tmap)))
        return SIM_ENOMEM;
    for (int c = 0; c < ctl->grid.ncfg; c++) {   /* where each configuration is in the table */
        int v[3], idx = 0;
        rrl_grid_config(&ctl->grid, c, v);
        for (int j = 0; j < 3; j++) {
            int i = 0;
            while (i < tg->nv[j] && tg->val[j][i] != v[j])
                i++;
            if (i == tg->nv[j])
                return sim_err_set(SIM_EINVAL, "%s.grid: the policy's configuration [%d, %d, "
                                   "%d] is not in the table's grid", P, v[0], v[1], v[2]);
            idx = idx * tg->nv[j] + i;
        }
        ctl->tmap[c] = idx;
    }
    return 0;
}

int rrl_ctl_start(struct sim *s, struct rrl_ctl *ctl, const cJSON *p, int c0, rrl_next_fn next)
{
    int rc;
    if ((rc = rrl_ctl_read_table(ctl, p, false)))
        return rc;
    ctl->next = next;
    ctl->seen_rps = ctl->lam_bar;
    ctl->state = rrl_ctl_state_of(ctl, ctl->lam_bar);
    apply(s, ctl, c0);
    arm(s, ctl);
    return 0;
}

void rrl_ctl_free(struct rrl_ctl *ctl)
{
    rrl_node_free(&ctl->node);
    if (ctl->table)
        rrl_table_free(ctl->table);
    free(ctl->table);
    free(ctl->tmap);
}

/* The end of a slot: observe, let the agent choose, apply. */
static void slot_end(struct sim *s, struct rrl_ctl *ctl)
{
    struct rrl_obs o;
    /* restart: the server restarts with the next configuration, and whatever still waits
     * is lost (dropped now, its wait counted); otherwise what waited too long is dropped */
    int64_t wait = ctl->restart ? 0
                   : ctl->wait_slots > 0 ? sim_s_to_ns(ctl->wait_slots * ctl->slot_s)
                                         : INT64_MAX;
    rrl_node_slot(s, &ctl->node, wait, ctl->tail_pct, &o);
    double L = o.ended ? (ctl->objective == RRL_OBJ_TAIL ? o.tail_ms : o.mean_ms) : o.oldest_ms;
    struct rrl_slot sl = {.cost = L, .load_rps = o.load_rps, .util = o.util};
    if (ctl->objective == RRL_OBJ_RESOURCE)
        sl.cost = L <= ctl->slo_ms ? o.util : 1 + L / ctl->slo_ms;
    sl.observed = L > 0 && sl.cost > 0;     /* (no request ended or waited: nothing seen) */
    sl.load = ctl->lam_bar > 0 ? o.load_rps / ctl->lam_bar : 0;
    sl.state = rrl_ctl_state_of(ctl, o.load_rps);
    if (sl.observed)
        sim_ts_add(s, "rrl.cost", -1, sl.cost);
    if (ctl->table)                   /* at the load the agent saw when it chose c_t */
        regret(s, ctl, "rrl.regret", ctl->seen_rps, ctl->cfg);
    ctl->seen_rps = o.load_rps;
    sim_ts_add(s, "rrl.load_rps", -1, o.load_rps);
    sim_ts_add(s, "rrl.util", -1, o.util);
    int c = ctl->next(s, ctl, &sl);
    ctl->state = sl.state;
    sim_ts_add(s, "rrl.state", -1, sl.state);
    apply(s, ctl, c);
}

/* ---------------------------------------------------------------- hooks */

int rrl_ctl_route(struct sim *s, void *state, const struct sim_request *r)
{
    return rrl_node_route(s, &((struct rrl_ctl *)state)->node, r);
}

void rrl_ctl_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m;
    rrl_node_on_request(s, &((struct rrl_ctl *)state)->node, r);
}

void rrl_ctl_on_request_end(struct sim *s, void *state, const struct sim_request *r,
                            int64_t t_end)
{
    (void)s;
    rrl_node_on_request_end(&((struct rrl_ctl *)state)->node, r, t_end);
}

void rrl_ctl_on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    rrl_node_on_batch_done(s, &((struct rrl_ctl *)state)->node, b);
}

void rrl_ctl_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)arg;
    struct rrl_ctl *ctl = state;
    if (tag != TAG_SLOT) {
        rrl_node_on_timer(s, &ctl->node, tag);
        return;
    }
    slot_end(s, ctl);
    arm(s, ctl);
}

/* ---------------------------------------------------------------- the table */

int rrl_table_parse(struct rrl_table *t, const cJSON *j, const char *path,
                    const struct rrl_ctl *ctl)
{
    char p[SIM_JPATH_MAX];
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(j))
        return sim_json_expected(path, "an rrl_table/1 object (experiments/rrl/oracle_table.sh "
                                 "writes one)", j);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "format");
    snprintf(p, sizeof p, "%s.format", path);
    if (!cJSON_IsString(f) || strcmp(f->valuestring, "rrl_table/1") != 0)
        return sim_json_expected(p, "\"rrl_table/1\"", f);
    int rc, dev = RRL_GPU;
    if ((rc = sim_json_enum(j, path, "device", true, DEVICES, &dev)) ||
        (rc = sim_json_enum(j, path, "objective", true, OBJECTIVES, &t->objective)))
        return rc;
    if (dev != ctl->node.dev)
        return sim_err_set(SIM_EINVAL, "%s.device: the table is for \"%s\", the policy runs "
                           "\"%s\"", path, DEVICES[dev], DEVICES[ctl->node.dev]);
    if (t->objective != ctl->objective)
        return sim_err_set(SIM_EINVAL, "%s.objective: the table prices \"%s\", the policy's "
                           "objective is \"%s\"", path, OBJECTIVES[t->objective],
                           OBJECTIVES[ctl->objective]);
    /* the costs of `tail` depend on the percentile and those of `resource` on the SLO: the
     * table names the one it priced, and it must be the policy's */
    if (t->objective != RRL_OBJ_LATENCY) {
        const char *key = t->objective == RRL_OBJ_TAIL ? "tail_pct" : "slo_ms";
        double want = t->objective == RRL_OBJ_TAIL ? ctl->tail_pct : ctl->slo_ms, got = 0;
        if ((rc = sim_json_num(j, path, key, true, SIM_J_POS, &got)))
            return rc;
        if (fabs(got - want) > 1e-9 * want)
            return sim_err_set(SIM_EINVAL, "%s.%s: the table was priced with %g, the policy "
                               "runs %g (policy.params.%s)", path, key, got, want, key);
    }
    snprintf(p, sizeof p, "%s.grid", path);
    if ((rc = grid_read(cJSON_GetObjectItemCaseSensitive(j, "grid"), p, &ctl->node, &t->grid)))
        return rc;
    const cJSON *rates = cJSON_GetObjectItemCaseSensitive(j, "rates");
    const cJSON *cost = cJSON_GetObjectItemCaseSensitive(j, "cost");
    snprintf(p, sizeof p, "%s.rates", path);
    int nr = cJSON_IsArray(rates) ? cJSON_GetArraySize(rates) : 0;
    if (nr < 1)
        return sim_json_expected(p, "a non-empty array of rates (req/s)", rates);
    snprintf(p, sizeof p, "%s.cost", path);
    if (!cJSON_IsArray(cost) || cJSON_GetArraySize(cost) != nr) {
        char what[96];
        snprintf(what, sizeof what, "an array of %d rows (one per rate)", nr);
        return sim_json_expected(p, what, cost);
    }
    int ncfg = t->grid.ncfg;
    t->nrates = nr;
    t->rates = malloc((size_t)nr * sizeof *t->rates);
    t->cost = malloc((size_t)nr * (size_t)ncfg * sizeof *t->cost);
    t->best = malloc((size_t)nr * sizeof *t->best);
    if (!t->rates || !t->cost || !t->best)
        return SIM_ENOMEM;
    const cJSON *x = sim_json_first(rates), *row = sim_json_first(cost);
    for (int i = 0; i < nr; i++, x = x->next, row = row->next) {
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) ||
            (i && x->valuedouble <= t->rates[i - 1])) {
            char xp[SIM_JPATH_MAX];
            sim_jpath_idx(xp, sizeof xp, "", i);
            return sim_err_set(SIM_EINVAL, "%s.rates%s: expected a rate >= 0 above the "
                               "previous one", path, xp);
        }
        t->rates[i] = x->valuedouble;
        char rp[SIM_JPATH_MAX];
        sim_jpath_idx(rp, sizeof rp, p, i);
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != ncfg) {
            char what[96];
            snprintf(what, sizeof what, "an array of %d costs (null: not measured)", ncfg);
            return sim_json_expected(rp, what, row);
        }
        double *r = t->cost + (size_t)i * (size_t)ncfg;
        t->best[i] = -1;
        int c = 0;
        for (const cJSON *v = row->child; v; v = v->next, c++) {
            if (cJSON_IsNull(v)) {
                r[c] = NAN;
                continue;
            }
            if (!cJSON_IsNumber(v) || !(v->valuedouble > 0)) {
                char vp[SIM_JPATH_MAX];
                sim_jpath_idx(vp, sizeof vp, rp, c);
                return sim_json_expected(vp, "a cost > 0 or null", v);
            }
            r[c] = v->valuedouble;
            if (t->best[i] < 0 || r[c] < r[t->best[i]])
                t->best[i] = c;
        }
        if (t->best[i] < 0)
            return sim_err_set(SIM_EINVAL, "%s: no configuration was measured at %g req/s",
                               rp, t->rates[i]);
    }
    return 0;
}

void rrl_table_free(struct rrl_table *t)
{
    free(t->rates);
    free(t->cost);
    free(t->best);
    memset(t, 0, sizeof *t);
}

int rrl_table_row(const struct rrl_table *t, double load_rps)
{
    int best = 0;
    for (int i = 1; i < t->nrates; i++)
        if (fabs(t->rates[i] - load_rps) < fabs(t->rates[best] - load_rps))
            best = i;
    return best;
}
