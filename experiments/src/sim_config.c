/* sim_config — the experiment config: loading (file, --set overrides, blame), the network,
 * policy, controller, autoscale and remaining top-level sections, building and checking the
 * world, the engine built at load; the cluster and models (sim_config_cluster.c), workload
 * (sim_config_workload.c), trace and application sections live beside it. See sim_config.h
 * and docs/config.md. */
#include "sim_config.h"

#include <ctype.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_config_int.h"
#include "sim_err.h"
#include "sim_json.h"
#include "sim_param.h"
#include "sim_rng.h"
#include "wl_clients.h"
#include "wl_jobs.h"
#include "wl_source.h"
#include "wl_zoo.h"

/* sim_config.spare: the engine built at load, for the first sim_config_engine call */
struct sim_config_spare {
    struct sim *s;                      /* NULL once taken */
    struct wl_replay *replay;           /* its trace replay (borrowed from s), or NULL */
    struct sim_world world;             /* the world it was built from: a caller that has
                                         * since changed a field of cfg->world (its policy, its
                                         * duration, ...) gets an engine built anew. Only the
                                         * top level is compared: a caller that edits what a
                                         * field points to (models[], nodes) or cfg->workload
                                         * must build its own engine (sim_config_engine with a
                                         * scale other than 1, or a config loaded anew) */
};
static int build_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                        struct sim **out, struct wl_replay **replay);

static const char *const JITTERS[] = {"none", "exponential", "lognormal", NULL};
static const char *const SPLITS[] = {"independent", "round_robin", "random", NULL};

void sim_config_destroy(struct sim_config *cfg)
{
    if (!cfg)
        return;
    if (cfg->spare)
        sim_destroy(cfg->spare->s);
    free(cfg->spare);
    for (int i = 0; i < cfg->world.nmodels; i++)
        sim_model_cfg_free(&cfg->world.models[i]);
    free(cfg->world.models);
    free(cfg->world.nodes);
    wl_jobs_free(&cfg->world);
    free(cfg->world.intf.rows);
    for (int i = 0; i < cfg->workload.nsegments; i++)
        free(cfg->workload.segments[i].model_scale);
    free(cfg->workload.segments);
    for (int m = 0; cfg->workload.schedules && m < cfg->world.nmodels; m++)
        free(cfg->workload.schedules[m].seg);
    free(cfg->workload.schedules);
    free(cfg->workload.sizes);
    for (int m = 0; cfg->workload.tokens && m < cfg->world.nmodels; m++)
        free(cfg->workload.tokens[m].emp);
    free(cfg->workload.tokens);
    wl_clients_cfg_free(cfg->workload.clients);
    wl_trace_cfg_free(cfg->workload.trace);
    sim_app_free(cfg->app);
    free(cfg->world.model_rps);
    free(cfg->file);
    free(cfg->dir);
    cJSON_Delete(cfg->json);
    free(cfg);
}

#define WD(f) SIM_P_AT(struct sim_world, f, double)
static const struct sim_param NETWORK_JITTER[] = {
    {"kind", SIM_P_ENUM, SIM_P_AT_ENUM(struct sim_world, jitter), .choices = JITTERS,
     .flags = SIM_P_REQUIRED, .doc = "the delay's distribution"},
    {"mean_us", SIM_P_NUM, WD(jitter_mean_us), .cons = SIM_J_POS,
     .def_doc = "required unless `kind` is `none`", .doc = "its mean"},
    {"sigma", SIM_P_NUM, WD(jitter_sigma), .cons = SIM_J_POS, .def = 1,
     .doc = "`lognormal`: the sigma of its logarithm"},
    {NULL}};
static const struct sim_param NETWORK[] = {
    {"ctrl_us", SIM_P_NUM, WD(ctrl_us), .cons = SIM_J_NONNEG, .def = 20,
     .doc = "control message delay (frontend -> scheduler, scheduler -> GPU)"},
    {"data_us_per_request", SIM_P_NUM, WD(data_us_per_request), .cons = SIM_J_NONNEG, .def = 10,
     .doc = "per-request input fetch by the GPU (a batch of b waits ctrl + b * data)"},
    {"resp_us", SIM_P_NUM, WD(resp_us), .cons = SIM_J_NONNEG, .def = 20,
     .doc = "response delay; a request is on time if its response arrives by arrival + SLO"},
    {"jitter", SIM_P_SECTION, .rows = NETWORK_JITTER, .def_doc = "none",
     .doc = "extra random delay on each message"},
    {NULL}};

static int parse_network(struct sim_config *c, const cJSON *root)
{
    const cJSON *n, *j;
    int rc;
    if ((rc = sim_json_obj(root, "", "network", false, &n)) ||
        (rc = sim_params_read(NETWORK, n, "network", &c->world)) ||
        (rc = sim_json_obj(n, "network", "jitter", false, &j)) || !j)
        return rc;
    double mean = 0;                    /* the jitter's mean is required unless it is none */
    if ((rc = sim_params_read(NETWORK_JITTER, j, "network.jitter", &c->world)) ||
        (c->world.jitter != SIM_JIT_NONE &&
         (rc = sim_json_num(j, "network.jitter", "mean_us", true, SIM_J_POS, &mean))))
        return rc;
    return 0;
}

/* policy: {name, preset, params}. A preset's params are merged into the config's own tree
 * (keys given in params win), so the stored config_json holds what the run used; without a
 * preset the policy's default one (its built-in defaults) is named and merged the same way. */
struct policy_in {
    const char *name, *preset;
    const cJSON *params;
    double plan_quantile;
};
#define PI(f, type) SIM_P_AT(struct policy_in, f, type)
static const struct sim_param POLICY[] = {
    {"name", SIM_P_STR, PI(name, const char *), .sdef = "symphony",
     .doc = "the policy: one of `servesim policies` (docs/policies.md: a section for each, "
            "with its params). With `cluster.nodes` (CPU executors) the ROMA family; for lanes "
            "and shared devices (`cluster.lanes`, `cluster.interference`) `fifo` and the RRL "
            "family; for applications also the FA2 family; with training jobs and notebooks "
            "`dynamoml`"},
    {"preset", SIM_P_STR, PI(preset, const char *),
     .doc = "a named set of params: how the system's authors (or the paper that compared against "
            "it) configured it. Each policy's presets, its default one and their sources: "
            "`servesim policies` (docs/policies.md, \"Every policy\"); the run's stored "
            "`config_json` holds the merged params"},
    {"params", SIM_P_OBJ, PI(params, const cJSON *),
     .doc = "policy parameters (docs/policies.md); keys given here override the preset's. A key "
            "the policy does not take is an error that lists the keys it takes and names the "
            "policies that do take it: after `--set policy.name=P` on a config written for "
            "another policy, drop the other's params with `--set 'policy.params={}'`"},
    {"plan_quantile", SIM_P_NUM, PI(plan_quantile, double), .cons = SIM_J_UNIT,
     .type_doc = "(0, 1)", .def_doc = "absent",
     .doc = "every policy plans with this quantile of a batch's duration (profiles with "
            "`service`), e.g. 0.99; absent: with the mean `l(b)`. The engine's latency table "
            "(`sim_latency_ns`, `sim_latency_table`), which all policies read, holds it; batches "
            "still run for their drawn durations"},
    {NULL}};
#undef PI

static int parse_policy(struct sim_config *c, cJSON *root)
{
    const cJSON *p;
    struct policy_in in;
    int rc;
    if ((rc = sim_json_obj(root, "", "policy", false, &p)) ||
        (rc = sim_params_read(POLICY, p, "policy", &in)))
        return rc;
    const char *name = in.name, *preset = in.preset;
    c->world.policy_params = in.params;
    c->world.plan_quantile = in.plan_quantile;
    double q = c->world.plan_quantile;
    if (q >= 1)
        return sim_err_set(SIM_EINVAL, "policy.plan_quantile: expected a quantile in (0, 1) "
                           "(0 or absent: plan with the mean), got %.15g", q);
    if (!(c->world.policy = policy_find(name))) {
        char list[512];
        policy_names(list, sizeof list);
        return sim_err_set(SIM_EINVAL, "policy.name: expected one of %s, got \"%s\"", list, name);
    }
    cJSON *pol = cJSON_GetObjectItemCaseSensitive(root, "policy");
    const struct policy_preset *dflt = preset ? NULL : policy_preset_default(name);
    if (dflt) {                         /* recorded as if given: what ran is in config_json */
        if (!pol && !(pol = cJSON_AddObjectToObject(root, "policy")))
            return SIM_ENOMEM;
        if (!cJSON_GetObjectItemCaseSensitive(pol, "name") &&
            !cJSON_AddStringToObject(pol, "name", name))
            return SIM_ENOMEM;
        if (!cJSON_AddStringToObject(pol, "preset", dflt->name))
            return SIM_ENOMEM;
        preset = dflt->name;
    }
    if (preset) {
        const struct policy_preset *ps = policy_preset_find(name, preset);
        if (!ps) {
            char list[512];
            policy_preset_names(name, list, sizeof list);
            return sim_err_set(SIM_EINVAL, "policy.preset: expected one of the presets of "
                               "policy \"%s\" (%s), got \"%s\"", name,
                               list[0] ? list : "it has none", preset);
        }
        cJSON *params = cJSON_GetObjectItemCaseSensitive(pol, "params");
        if (!params && !(params = cJSON_AddObjectToObject(pol, "params")))
            return SIM_ENOMEM;
        if ((rc = policy_preset_apply(ps, params)))
            return rc;
        c->world.policy_params = params;
    }
    return policy_check_params(c->world.policy, c->world.policy_params);
}

static const char *const RULES[] = {"worst", "aggregate", NULL};
static const struct sim_param METRICS[] = {
    {"percentile", SIM_P_NUM, WD(percentile), .cons = SIM_J_POS, .def = 99,
     .type_doc = "in (0, 100)", .doc = "SLO percentile for the pass/fail predicate and goodput"},
    {"sample_period_s", SIM_P_NUM, WD(sample_period_s), .cons = SIM_J_NONNEG, .def = 1,
     .doc = "time-series sampling and control period (0 = none)"},
    {NULL}};
#define CS(f, type) SIM_P_AT(struct sim_config, f, type)
static const struct sim_param SEARCH[] = {
    {"start_scale", SIM_P_NUM, CS(search_start_scale, double), .cons = SIM_J_POS, .def = 1,
     .doc = "first load scale probed by `goodput`"},
    {"tolerance", SIM_P_NUM, CS(search_tol, double), .cons = SIM_J_POS, .def = 0.02,
     .doc = "bisection stops at (hi - lo) / lo <= tolerance"},
    {"max_probes", SIM_P_INT, CS(search_max_probes, int), .lo = 2, .hi = 200, .def = 24,
     .doc = "bound on probes"},
    {"rule", SIM_P_ENUM, SIM_P_AT_ENUM(struct sim_config, search_rule), .choices = RULES,
     .doc = "what a probe of `goodput` or `plan` must meet. `worst`: every model's p-quantile "
            "latency within its SLO, dropped requests counted as infinitely late — at most 1 − p "
            "of each model's requests late or dropped (the Symphony paper's written definition). "
            "`aggregate`: at most 1 − p of all models' requests together late or dropped, "
            "whatever one model's share (what the Symphony authors' harness prints as \"avg\" "
            "beside \"worst\": `100 - sum_success * 100 / total_queries` over every model, "
            "abcdabcd987/nexuslb `tools/nexus_scheduler/run_nexus_main.cpp`, "
            "`tools/bench_dispatcher/run_rankmt_main.cpp`). Both bad fractions are printed and "
            "stored with every probe (`goodput_search`, `plan_probes`) and the rule with the "
            "search (`goodput_search.rule`, `plans.rule`); with one model the two agree. Under "
            "`aggregate` a model no batch can serve does not end the search before it starts "
            "(its requests are only part of the bad fraction)"},
    {"variants", SIM_P_ARR, CS(search_variants, const cJSON *),
     .type_doc = "array of `{\"name\": NAME, \"set\": [\"PATH=VALUE\", ...]}`", .def_doc = "none",
     .doc = "`plan` answers for the config and then for each variant, the config with the "
            "variant's overrides applied after any `--set` (e.g. an LLM model colocated under "
            "`vllm` and disaggregated under `distserve`), and prints them side by side: GPUs, "
            "GPU-hours and bad share each, and the autoscaler's GPU-hours where there is one"},
    {NULL}};
#undef CS

/* search.variants: each {name: 1-63 characters, set: a non-empty array of "PATH=VALUE"},
 * names distinct. */
static int check_variants(const cJSON *v)
{
    if (!v)
        return 0;
    int i = 0;
    for (const cJSON *x = v->child; x; x = x->next, i++) {
        char p[SIM_JPATH_MAX];
        sim_jpath_idx(p, sizeof p, "search.variants", i);
        static const char *const keys[] = {"name", "set", NULL};
        const char *name;
        const cJSON *set;
        int rc;
        if (!cJSON_IsObject(x))
            return sim_json_expected(p, "an object {name, set}", x);
        if ((rc = sim_json_keys(x, p, keys)) || (rc = sim_json_str(x, p, "name", true, &name)) ||
            (rc = sim_json_arr(x, p, "set", true, &set)))
            return rc;
        if (!name[0] || strlen(name) > 63)
            return sim_err_set(SIM_EINVAL, "%s.name: expected 1 to 63 characters, got %zu", p,
                               strlen(name));
        for (const cJSON *y = v->child; y != x; y = y->next)
            if (strcmp(cJSON_GetObjectItemCaseSensitive(y, "name")->valuestring, name) == 0)
                return sim_err_set(SIM_EINVAL, "%s.name: \"%s\" names another variant too", p,
                                   name);
        int k = 0;
        for (const cJSON *e = set->child; e; e = e->next, k++) {
            char sp[SIM_JPATH_MAX + 16];
            snprintf(sp, sizeof sp, "%s.set[%d]", p, k);
            if (!cJSON_IsString(e) || !strchr(e->valuestring, '=') || e->valuestring[0] == '=')
                return sim_json_expected(sp, "an override \"PATH=VALUE\"", e);
        }
        if (k == 0)
            return sim_err_set(SIM_EINVAL, "%s.set: expected at least one override", p);
    }
    return 0;
}

static int parse_rest(struct sim_config *c, const cJSON *root)
{
    const cJSON *m, *s;
    int rc;
    if ((rc = sim_json_obj(root, "", "metrics", false, &m)) ||
        (rc = sim_json_obj(root, "", "search", false, &s)) ||
        (rc = sim_params_read(METRICS, m, "metrics", &c->world)))
        return rc;
    if (c->world.percentile >= 100)
        return sim_err_set(SIM_EINVAL, "metrics.percentile: expected a number in (0, 100), got %.15g",
                           c->world.percentile);
    if ((rc = sim_params_read(SEARCH, s, "search", c)))
        return rc;
    return check_variants(c->search_variants);
}

/* `controller` (sim_world.h, struct sim_ctrl_cfg): the central controller's own time. */
#define CC(f, type) SIM_P_AT(struct sim_ctrl_cfg, f, type)
static const struct sim_param CONTROLLER[] = {
    {"threads", SIM_P_INT, CC(threads, int), .lo = 1, .hi = 1024, .def = 1,
     .doc = "the controller's scheduler threads"},
    {"us_per_request", SIM_P_NUM, CC(us_per_request, double), .cons = SIM_J_NONNEG,
     .type_doc = ">= 0 and <= 1e6", .doc = "each request admitted to a central queue"},
    {"us_per_candidate", SIM_P_NUM, CC(us_per_candidate, double), .cons = SIM_J_NONNEG,
     .type_doc = ">= 0 and <= 1e6", .doc = "each candidate the policy says it examined"},
    {"us_per_batch", SIM_P_NUM, CC(us_per_batch, double), .cons = SIM_J_NONNEG,
     .type_doc = ">= 0 and <= 1e6", .doc = "each batch dispatched centrally"},
    {NULL}};
#undef CC

static int parse_controller(struct sim_config *c, const cJSON *root)
{
    static const char *const costs[] = {"us_per_request", "us_per_candidate", "us_per_batch"};
    const cJSON *o;
    int rc;
    if ((rc = sim_json_obj(root, "", "controller", false, &o)) || !o)
        return rc;
    if ((rc = sim_params_read(CONTROLLER, o, "controller", &c->world.ctrl)))
        return rc;
    double *v[] = {&c->world.ctrl.us_per_request, &c->world.ctrl.us_per_candidate,
                   &c->world.ctrl.us_per_batch};
    for (int i = 0; i < 3; i++)
        if (*v[i] > 1e6)
            return sim_err_set(SIM_EINVAL, "controller.%s: expected at most 1e6 us (1 s), got %.15g",
                               costs[i], *v[i]);
    return 0;
}

/* `autoscale` (policies/autoscale.c): which autoscaler, and its parameters. */
static const char *const AUTOSCALERS[] = {"none", "symphony", "target_util", "hpa", NULL};
#define AD(f) SIM_P_AT(struct policy_autoscale, f, double)
static const struct sim_param AUTOSCALE[] = {
    {"kind", SIM_P_ENUM, SIM_P_AT_ENUM(struct policy_autoscale, kind), .choices = AUTOSCALERS,
     .flags = SIM_P_REQUIRED, .doc = "the autoscaler (below)"},
    {"min_gpus", SIM_P_INT, SIM_P_AT(struct policy_autoscale, min_gpus, int), .lo = 1,
     .hi = 1 << 20, .def = 1, .doc = "never fewer executors up or starting"},
    {"bad_rate_threshold", SIM_P_NUM, AD(bad_rate_threshold), .cons = SIM_J_UNIT, .def = 0.01,
     .doc = "`symphony`: add executors above this bad rate"},
    {"keep_idle", SIM_P_NUM, AD(keep_idle), .cons = SIM_J_UNIT, .def = 0.1,
     .doc = "`symphony`: the idle fraction kept when releasing"},
    {"target_util", SIM_P_NUM, AD(target_util), .cons = SIM_J_UNIT, .def = 0.7,
     .type_doc = "in (0, 1]", .doc = "`target_util`: the utilisation aimed at"},
    {"tolerance", SIM_P_NUM, AD(tolerance), .cons = SIM_J_UNIT, .def = 0.1,
     .doc = "`target_util`, `hpa`: no change within this relative band"},
    {"cooldown_s", SIM_P_NUM, AD(cooldown_s), .cons = SIM_J_NONNEG, .def = 30,
     .doc = "`symphony`, `target_util`: no release within this long of the last action"},
    {"target_rps", SIM_P_NUM, AD(target_rps), .cons = SIM_J_POS, .def = 20,
     .doc = "`hpa`: the request rate per executor aimed at (DynamoML's)"},
    {"sync_s", SIM_P_NUM, AD(sync_s), .cons = SIM_J_POS, .def = 15,
     .doc = "`hpa`: its period (Kubernetes' default)"},
    {"window_s", SIM_P_NUM, AD(window_s), .cons = SIM_J_POS, .def = 30,
     .doc = "`hpa`: the rate is measured over this window"},
    {"stabilization_s", SIM_P_NUM, AD(stabilization_s), .cons = SIM_J_NONNEG, .def = 300,
     .doc = "`hpa`: scale down to the largest recommendation of this long"},
    {NULL}};
#undef AD

static int parse_autoscale(struct sim_config *c, const cJSON *root)
{
    const char *P = "autoscale";
    struct policy_autoscale *a = &c->autoscale;
    const cJSON *o;
    int rc;
    c->world.autoscaler = NULL;
    c->world.autoscale_params = a;
    sim_params_defaults(AUTOSCALE, a);  /* absent: these, and kind none */
    if ((rc = sim_json_obj(root, "", "autoscale", false, &o)) || !o ||
        (rc = sim_params_read(AUTOSCALE, o, P, a)))
        return rc;
    int kind = a->kind;
    if (kind == 0)
        return 0;
    c->world.autoscaler = autoscaler_find(AUTOSCALERS[kind]);
    if (a->target_util <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale.target_util: expected a number in (0, 1], "
                           "got 0");
    if (!c->world.policy->dynamic_execs)
        return sim_err_set(SIM_EINVAL, "autoscale: policy \"%s\" does not support executors "
                           "added or removed during a run (policies that do: see servesim "
                           "policies)", c->world.policy->name);
    if (c->world.sample_period_s <= 0)
        return sim_err_set(SIM_EINVAL, "autoscale: needs metrics.sample_period_s > 0 (its "
                           "control period)");
    if (c->world.max_gpus <= c->world.gpus)
        return sim_err_set(SIM_EINVAL, "cluster.max_gpus: expected more than cluster.gpus (%d) "
                           "for the autoscaler to add executors, got %d", c->world.gpus,
                           c->world.max_gpus);
    if (a->min_gpus > c->world.max_gpus)
        return sim_err_set(SIM_EINVAL, "autoscale.min_gpus: expected at most cluster.max_gpus "
                           "(%d), got %d", c->world.max_gpus, a->min_gpus);
    return 0;
}

/* Whether the workload changes over time (a trace, rate segments or schedules, closed-loop
 * clients): its timeline is absolute, so a longer warm-up would move the measured window
 * over other phases of it; the warm-up is then kept, with the warning. */
static bool time_varying(const struct sim_config *c)
{
    const struct wl_workload *wl = &c->workload;
    return wl->trace || wl->nsegments > 0 || wl->schedules || wl->clients;
}

/* Steady state by default: a warm-up shorter than the time the policy declares it needs to
 * converge (policy_ops.converge_s) is extended to it, and the duration by as much, so the
 * measured window keeps its length; the config's value is kept for the report
 * (keep_warmup: true, or --keep-warmup, measures the transient instead). A workload that
 * changes over time keeps its warm-up (time_varying). */
/* The time the world's policy declares it needs to converge (0: none). */
static double converge_need_s(const struct sim_world *w)
{
    return w->policy->converge_s ? w->policy->converge_s(w->policy_params) : 0;
}

static int extend_warmup(struct sim_config *c)
{
    struct sim_world *w = &c->world;
    double need = converge_need_s(w);
    if (!(w->warmup_s < need) || time_varying(c))
        return 0;
    double dur = w->duration_s + (need - w->warmup_s);
    if (dur > 1e7)
        return sim_err_set(SIM_EINVAL, "duration_s: extended by the warm-up policy %s needs "
                           "(%g s) it would be %g s, above the 1e7 s limit (keep_warmup: true "
                           "keeps the config's warm-up)", w->policy->name, need, dur);
    w->warmup_extended = true;
    w->warmup_config_s = w->warmup_s;
    w->warmup_s = need;
    w->duration_s = dur;
    return 0;
}

/* The top level: its own keys, and the sections, each read by its parser (their tables
 * document them here in place: docs/config.md is this table, walked). */
#define TI(f, type) SIM_P_AT(struct sim_config, top.f, type)
#define TW(f, type) SIM_P_AT(struct sim_config, world.f, type)
static const struct sim_param TOP[] = {
    {"name", SIM_P_STR, TI(name, const char *), .sdef = "unnamed", .doc = "experiment name (results `runs.name`)"},
    {"description", SIM_P_HAND, .type_doc = "string", .def_doc = "", .doc = "free text"},
    {"seed", SIM_P_LONG, TI(seed, long), .lo = 0, .hi = 1L << 53, .def = 1,
     .type_doc = "integer in [0, 2^53]", .doc = "master seed; every random stream derives from it and its name"},
    {"duration_s", SIM_P_NUM, TW(duration_s, double), .cons = SIM_J_POS, .def = 60,
     .type_doc = "> 0 and at most 1e7 (about 115 days)",
     .doc = "arrivals are generated in [0, duration)"},
    {"warmup_s", SIM_P_NUM, TW(warmup_s, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "requests arriving earlier are simulated but not counted. Steady state by default: "
            "where it is shorter than the time the policy declares it needs to converge "
            "(`servesim policies`; Nexus: two epochs, 60 s), `run`, `goodput`, `plan` and "
            "`sweep` extend it to that time and `duration_s` by as much (the measured window "
            "keeps its length), say so on stderr (not under `--quiet`) and in the table's "
            "header, and keep the config's value in the JSON (`warmup_config_s`) and the "
            "database (`runs.warmup_config_s`; `runs.warmup_s` is the one used). A workload that "
            "changes over time (`trace`, `segments`, `random_segments`, `rate_schedules`, "
            "`clients`) keeps its warm-up, with a warning: its timeline is absolute, so a longer "
            "warm-up would move the measured window onto other phases"},
    {"keep_warmup", SIM_P_BOOL, TI(keep_warmup, bool), .def = 0, .doc = "true (or the option `--keep-warmup`): use `warmup_s` as it is, to study a policy's "
            "start-up transient; a warning then says the results include it"},
    {"drain_s", SIM_P_NUM, TW(drain_s, double), .cons = SIM_J_NONNEG, .def = 10,
     .doc = "after `duration_s`, time allowed for in-flight work; then queued requests are "
            "dropped"},
    {"cluster", SIM_P_SECTION, .rows = sim_config_cluster_keys},
    {"controller", SIM_P_SECTION, .rows = CONTROLLER, .type_doc = "object", .def_doc = "none",
     .doc = "the central controller's own time (`sim/sim_ctrl.c`): every policy callback is one "
            "decision; one that costs time runs on the first free of `threads` scheduler "
            "threads, so decisions queue while all are busy, and a batch it "
            "dispatches centrally is ready only once its work up to that batch is done (then the "
            "network's delays). Costs (us, the rows below): each request admitted to a "
            "central queue, each candidate the policy says it examined (`sim_ctrl_examine`; "
            "Clockwork: one strategy per supported batch size and GPU holding the model per "
            "request, as its released controller pushes them, and one per strategy its loop "
            "takes up), each batch dispatched centrally. A decision that costs nothing takes no "
            "thread (executor-local decisions, a Nexus backend's, never wait). The report prints "
            "the threads' busy fraction and the decisions' waits. Tested by hand: 1 ms per "
            "admission saturates one thread at 2,000 req/s, the 500th request waits 251 ms "
            "(`test_core ctrl_decisions_queue`); Measured costs, from the two controllers' "
            "released data structures (`experiments/paper/controller_cost/`): Clockwork INFER4 "
            "0.07-0.34 us per candidate (heap depth and CPU) on its 5 infer threads; Symphony's "
            "rank thread 0.04-0.12 us per request and per batch. "
            "`experiments/paper/resnet10_controller.sweep.json` is Figure 10 under these costs"},
    {"models", SIM_P_SECTION, .rows = wl_model_keys, .flags = SIM_P_EACH,
     .type_doc = "array", .def_doc = "required",
     .doc = "model entries, or zoo references (below); names are unique, non-empty and without "
            "control characters (a tab or newline would break `export` and `compare`)"},
    {"models", SIM_P_SECTION, .rows = wl_zoo_ref_keys, .flags = SIM_P_EACH | SIM_P_DOC,
     .type_doc = "or a zoo reference", .def_doc = "",
     .doc = "an entry with `zoo` expands into the zoo's selected models (docs/config.md, \"Zoo "
            "references\")"},
    {"workload", SIM_P_SECTION, .rows = sim_config_workload_keys},
    {"application", SIM_P_SECTION, .rows = sim_config_app_keys, .def_doc = "none",
     .doc = "a DAG of the models with execution paths (below); requests are then the "
            "application's"},
    {"jobs", SIM_P_SECTION, .rows = wl_jobs_keys},
    {"notebooks", SIM_P_SECTION, .rows = wl_notebooks_keys, .def_doc = "none",
     .doc = "DynamoML's notebooks (modeling work), up the whole run: each alternates idle "
            "periods and bursts of GPU work on the GPU share its policy places it on "
            "(`dynamoml`: with `sharing`, `request` of a GPU, else a whole GPU); a GPU's "
            "notebooks take turns holding its token for `quota_ms` each: first those whose use "
            "over the last `window_s` is below request x window (the furthest below first), "
            "then the least used, never above `limit` x window. Results: "
            "`runs.notebook_slowdown` (mean time a burst took / its work). A policy that does "
            "not place notebooks is refused"},
    {"frontends", SIM_P_INT, TW(frontends, int), .lo = 1, .hi = 4096,
     .def = 1, .type_doc = "integer in [1, 4096]", .doc = "frontends where requests enter"},
    {"frontend_split", SIM_P_ENUM, SIM_P_AT_ENUM(struct sim_config, world.frontend_split),
     .choices = SPLITS, .type_doc = "`independent` (default: one arrival process per model and "
     "frontend at rate/F), `round_robin`, `random`", .doc = "how a model's arrivals are split over frontends"},
    {"network", SIM_P_SECTION, .rows = NETWORK},
    {"policy", SIM_P_SECTION, .rows = POLICY},
    {"autoscale", SIM_P_SECTION, .rows = AUTOSCALE, .type_doc = "object", .def_doc = "none",
     .doc = "an autoscaler acting every `metrics.sample_period_s` (below)"},
    {"metrics", SIM_P_SECTION, .rows = METRICS},
    {"search", SIM_P_SECTION, .rows = SEARCH},
    {NULL}};
#undef TI
#undef TW

const struct sim_param *sim_config_keys(void)
{
    return TOP;
}

static int build(struct sim_config *c)
{
    const cJSON *root = c->json;
    int rc;
    if (!cJSON_IsObject(root))
        return sim_err_set(SIM_EINVAL, "expected a JSON object at the top level");
    /* a run's own limit, stricter than every duration's (sim_json.c): said as itself */
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
    if (cJSON_IsNumber(dj) && dj->valuedouble > SIM_CONFIG_MAX_DURATION_S)
        return sim_err_set(SIM_EINVAL, "duration_s: expected at most %g s (about 115 days), got %.15g",
                           SIM_CONFIG_MAX_DURATION_S, dj->valuedouble);
    if ((rc = sim_params_read(TOP, root, "", c)))
        return rc;
    const char *name = c->top.name;
    bool keep_warmup = c->top.keep_warmup;
    long seed = c->top.seed;
    if (name && strlen(name) >= sizeof c->world.name)  /* a name is a key of results: never cut */
        return sim_err_set(SIM_EINVAL, "name: expected at most %zu characters, got %zu",
                           sizeof c->world.name - 1, strlen(name));
    for (const char *ch = name; ch && *ch; ch++)
        if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
            return sim_err_set(SIM_EINVAL, "name: has byte 0x%02x at position %d: expected no "
                               "control characters (a tab or newline breaks export and compare)",
                               (unsigned)(unsigned char)*ch, (int)(ch - name));
    snprintf(c->world.name, sizeof c->world.name, "%s", name);
    c->world.seed = (uint64_t)seed;
    if ((rc = sim_config_parse_cluster(c, root)) || (rc = sim_config_parse_models(c, root)) ||
        (rc = sim_config_parse_app(c, root)) || (rc = sim_config_parse_workload(c, root)) ||
        (rc = wl_jobs_parse(root, &c->world)) || (rc = wl_notebooks_parse(root, &c->world)))
        return rc;
    if (c->world.end_when_done && c->workload.clients)    /* not before the schedule is over */
        c->world.end_not_before_s = c->workload.clients->step_s * c->workload.clients->nsteps;
    if (c->world.warmup_s >= c->world.duration_s)
        return sim_err_set(SIM_EINVAL, "warmup_s: expected less than duration_s (%g), got %.15g",
                           c->world.duration_s, c->world.warmup_s);
    if ((rc = parse_network(c, root)) || (rc = parse_policy(c, c->json)))
        return rc;
    if (!keep_warmup && (rc = extend_warmup(c)))
        return rc;
    if (c->world.gpus < 1 && !c->world.policy->needs_no_gpus)
        return sim_err_set(SIM_EINVAL, "cluster.nodes: policy \"%s\" needs at least one GPU over "
                           "all nodes, got 0", c->world.policy->name);
    if ((c->world.lanes > 1 || c->world.intf.model != SIM_INTF_NONE) &&
        !c->world.policy->shared_devices)
        return sim_err_set(SIM_EINVAL, "cluster.%s: policy \"%s\" plans with one batch at a "
                           "time at the profile's speed; lanes > 1 and interference need a "
                           "policy that fills lanes (fifo)",
                           c->world.lanes > 1 ? "lanes" : "interference", c->world.policy->name);
    if ((rc = sim_config_check_memory(c)) || (rc = parse_rest(c, root)) ||
        (rc = parse_autoscale(c, root)) || (rc = parse_controller(c, root)) ||
        (rc = sim_config_check_work(c)))
        return rc;
    return 0;
}

static int finish(struct sim_config *c, const char *label)
{
    int rc = build(c);
    if (!rc) {
        /* policy params are checked by the policy's own init, on an engine built here, so
         * their errors surface here (with the file name), before any database is touched;
         * the engine is kept for the first run (sim_config_engine) */
        struct sim *s = NULL;
        struct wl_replay *rp = NULL;
        rc = build_engine(c, 1.0, NULL, &s, &rp);
        if (!rc && !(c->spare = malloc(sizeof *c->spare)))
            rc = SIM_ENOMEM;
        if (rc)
            sim_destroy(s);
        else
            *c->spare = (struct sim_config_spare){.s = s, .replay = rp, .world = c->world};
    }
    if (rc)
        sim_err_prefix(rc, label);
    return rc;
}

static struct sim_config *alloc_cfg(const char *file, const char *dir)
{
    struct sim_config *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->file = strdup(file);
    c->dir = strdup(dir);
    if (!c->file || !c->dir) {
        sim_config_destroy(c);
        return NULL;
    }
    return c;
}

/* Does the --set path pattern (its first pl characters; "[*]" stands for any index) begin
 * text? *tl: the length of text it covers. */
static bool path_matches(const char *pat, size_t pl, const char *text, size_t *tl)
{
    size_t i = 0, j = 0;
    while (i < pl) {
        if (pat[i] == '[' && i + 2 < pl && pat[i + 1] == '*' && pat[i + 2] == ']') {
            if (text[j] != '[' || !isdigit((unsigned char)text[j + 1]))
                return false;
            j++;
            while (isdigit((unsigned char)text[j]))
                j++;
            if (text[j++] != ']')
                return false;
            i += 3;
        } else if (pat[i++] != text[j++]) {
            return false;
        }
    }
    *tl = j;
    return true;
}

/* An error of the finished configuration ("FILE: PATH: ...") whose PATH a --set gave (the
 * last one wins, as in applying them) is the option's, not the file's: "--set PATH: ...". */
static void blame_set(int rc, const char *file, const char *const *sets, int nsets)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", sim_err_msg());
    size_t fl = strlen(file);
    if (strncmp(msg, file, fl) != 0 || strncmp(msg + fl, ": ", 2) != 0)
        return;
    const char *rest = msg + fl + 2;
    for (int i = nsets - 1; i >= 0; i--) {
        const char *eq = strchr(sets[i], '=');
        size_t pl = eq ? (size_t)(eq - sets[i]) : 0, tl = 0;
        if (pl && memchr(sets[i], '*', pl)) {  /* models[*].slo_ms: the element is named too */
            if (path_matches(sets[i], pl, rest, &tl) && strchr(":.[", rest[tl])) {
                sim_err_set(rc, "--set %.*s: %s (an option over %s)", (int)pl, sets[i], rest,
                            file);
                return;
            }
            continue;
        }
        if (pl == 0 || strncmp(rest, sets[i], pl) != 0 || !strchr(":.[", rest[pl]))
            continue;
        if (rest[pl] == ':')
            sim_err_set(rc, "--set %.*s%s (an option over %s)", (int)pl, sets[i], rest + pl,
                        file);
        else
            sim_err_set(rc, "--set %.*s: %s (an option over %s)", (int)pl, sets[i], rest, file);
        return;
    }
}

int sim_config_load(const char *file, const char *const *sets, int nsets, bool seed_given,
                    uint64_t seed, struct sim_config **out)
{
    return sim_config_load_n(file, sets, nsets, nsets, seed_given, seed, out);
}

int sim_config_load_n(const char *file, const char *const *sets, int nsets, int nkeep,
                      bool seed_given, uint64_t seed, struct sim_config **out)
{
    struct sim_config *c;
    int rc;
    *out = NULL;
    if (file) {
        char *tmp = strdup(file);
        if (!tmp)
            return SIM_ENOMEM;
        c = alloc_cfg(file, dirname(tmp));
        free(tmp);
    } else {
        c = alloc_cfg("(embedded quickstart)", ".");
    }
    if (!c)
        return SIM_ENOMEM;
    rc = file ? sim_json_load_file(file, &c->json)
              : sim_json_parse(sim_quickstart_json, c->file, &c->json);
    if (rc)
        goto fail;
    for (int i = 0; i < nsets; i++)
        if ((rc = i < nkeep ? sim_json_set_keeping(c->json, sets[i], sets, i)
                            : sim_json_set(c->json, sets[i]))) {
            char msg[1024];             /* the message names the option; the file is context */
            snprintf(msg, sizeof msg, "%s", sim_err_msg());
            rc = sim_err_set(rc == SIM_ENOMEM ? rc : SIM_EINVAL, "%s (an option over %s)", msg,
                             c->file);
            goto fail;
        }
    if (seed_given) {
        char v[32];
        snprintf(v, sizeof v, "seed=%llu", (unsigned long long)seed);
        if ((rc = sim_json_set(c->json, v)))   /* (the one path that replaces a member) */
            goto fail;
    }
    if ((rc = finish(c, c->file))) {
        blame_set(rc, c->file, sets, nsets);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    sim_config_destroy(c);
    return rc;
}

int sim_config_from_text(const char *text, const char *name, const char *dir,
                         struct sim_config **out)
{
    int rc;
    struct sim_config *c = alloc_cfg(name, dir);
    *out = NULL;
    if (!c)
        return SIM_ENOMEM;
    if ((rc = sim_json_parse(text, name, &c->json)) || (rc = finish(c, name))) {
        sim_config_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

char *sim_config_canonical(const struct sim_config *cfg)
{
    return cJSON_PrintUnformatted(cfg->json);
}

/* The hash of a canonical config text (sim_config_hash). */
static void hash_text(const char *canonical, char out[17])
{
    uint64_t h = canonical ? sim_fnv1a(SIM_FNV_OFFSET, canonical, strlen(canonical)) : 0;
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void sim_config_hash(const struct sim_config *cfg, char out[17])
{
    char *s = sim_config_canonical(cfg);
    hash_text(s, out);
    free(s);
}

int sim_config_store(struct sim_store *st, const struct sim_config *cfg, const char *kind,
                     const struct sim_result *r, const struct sim_goodput *g,
                     const struct sim_store_point *pt, int64_t *run_id)
{
    char hash[17];
    char *json = sim_config_canonical(cfg);
    if (!json)
        return SIM_ENOMEM;
    hash_text(json, hash);              /* (sim_config_hash would print the text again) */
    struct sim_store_run run = {.kind = kind, .config_json = json, .config_hash = hash,
                                .world = &cfg->world, .goodput = g, .point = pt};
    int rc = sim_store_write(st, &run, r, run_id);
    free(json);
    return rc;
}

static int build_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                        struct sim **out, struct wl_replay **replay)
{
    struct sim_source *src;
    int n, rc;
    *out = NULL;
    if ((rc = wl_sources_open(&cfg->workload, &cfg->world, scale, &src, &n, replay)))
        return rc;
    rc = sim_create(&cfg->world, scale, pol, src, n, out);
    free(src);
    return rc;
}

int sim_config_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                      struct sim **out, struct wl_replay **replay)
{
    struct sim_config_spare *sp = cfg->spare;
    if (sp && sp->s) {
        struct sim *s = sp->s;
        sp->s = NULL;                   /* taken or freed: the first call only */
        if (scale == 1.0 && (!pol || pol == cfg->world.policy) &&
            memcmp(&sp->world, &cfg->world, sizeof cfg->world) == 0) {
            *out = s;
            if (replay)
                *replay = sp->replay;
            return 0;
        }
        sim_destroy(s);
    }
    return build_engine(cfg, scale, pol, out, replay);
}

bool sim_config_transient(const struct sim_config *cfg, char *msg, size_t size)
{
    const struct sim_world *w = &cfg->world;
    if (w->warmup_extended) {
        snprintf(msg, size, "note: %s: warm-up extended from %g s to %g s, the time policy %s "
                 "needs to reach its steady state (docs/policies.md), and the run to %g s to "
                 "keep the measured %g s; --keep-warmup (keep_warmup: true) keeps the config's",
                 cfg->file, w->warmup_config_s, w->warmup_s, w->policy->name, w->duration_s,
                 w->duration_s - w->warmup_s);
        return true;
    }
    double need = converge_need_s(w);
    if (!(w->warmup_s < need))
        return false;
    snprintf(msg, size, "warning: %s: warmup_s %g is shorter than the %g s policy %s needs to "
             "reach its steady state (docs/policies.md), kept %s: the results include its "
             "start-up transient", cfg->file, w->warmup_s, need, w->policy->name,
             time_varying(cfg) ? "since the workload changes over time (a longer warm-up "
             "would move the measured window); set warmup_s" : "as keep_warmup asks");
    return true;
}
