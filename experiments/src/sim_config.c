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
    wl_clients_cfg_free(cfg->workload.clients);
    wl_trace_cfg_free(cfg->workload.trace);
    sim_app_free(cfg->app);
    free(cfg->world.model_rps);
    free(cfg->file);
    free(cfg->dir);
    cJSON_Delete(cfg->json);
    free(cfg);
}

static int parse_network(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"ctrl_us", "data_us_per_request", "resp_us", "jitter", NULL};
    static const char *const jkeys[] = {"kind", "mean_us", "sigma", NULL};
    const cJSON *n, *j;
    int rc, kind = 0;
    c->world.ctrl_us = 20;
    c->world.data_us_per_request = 10;
    c->world.resp_us = 20;
    if ((rc = sim_json_obj(root, "", "network", false, &n)))
        return rc;
    if (!n)
        return 0;
    if ((rc = sim_json_keys(n, "network", keys)) ||
        (rc = sim_json_num(n, "network", "ctrl_us", false, SIM_J_NONNEG, &c->world.ctrl_us)) ||
        (rc = sim_json_num(n, "network", "data_us_per_request", false, SIM_J_NONNEG, &c->world.data_us_per_request)) ||
        (rc = sim_json_num(n, "network", "resp_us", false, SIM_J_NONNEG, &c->world.resp_us)) ||
        (rc = sim_json_obj(n, "network", "jitter", false, &j)))
        return rc;
    if (j) {
        if ((rc = sim_json_keys(j, "network.jitter", jkeys)) ||
            (rc = sim_json_enum(j, "network.jitter", "kind", true, JITTERS, &kind)))
            return rc;
        c->world.jitter = (enum sim_jitter)kind;
        if (c->world.jitter != SIM_JIT_NONE &&
            (rc = sim_json_num(j, "network.jitter", "mean_us", true, SIM_J_POS, &c->world.jitter_mean_us)))
            return rc;
        c->world.jitter_sigma = 1.0;
        if (c->world.jitter == SIM_JIT_LOGNORMAL &&
            (rc = sim_json_num(j, "network.jitter", "sigma", false, SIM_J_POS, &c->world.jitter_sigma)))
            return rc;
    }
    return 0;
}

/* policy: {name, preset, params}. A preset's params are merged into the config's own tree
 * (keys given in params win), so the stored config_json holds what the run used; without a
 * preset the policy's default one (its built-in defaults) is named and merged the same way. */
static int parse_policy(struct sim_config *c, cJSON *root)
{
    static const char *const keys[] = {"name", "preset", "params", "plan_quantile", NULL};
    const cJSON *p;
    const char *name = "symphony", *preset = NULL;
    int rc;
    if ((rc = sim_json_obj(root, "", "policy", false, &p)))
        return rc;
    if (p && ((rc = sim_json_keys(p, "policy", keys)) ||
              (rc = sim_json_str(p, "policy", "name", false, &name)) ||
              (rc = sim_json_str(p, "policy", "preset", false, &preset)) ||
              (rc = sim_json_obj(p, "policy", "params", false, &c->world.policy_params)) ||
              (rc = sim_json_num(p, "policy", "plan_quantile", false, SIM_J_UNIT,
                                 &c->world.plan_quantile))))
        return rc;
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

static int parse_rest(struct sim_config *c, const cJSON *root)
{
    static const char *const mkeys[] = {"percentile", "sample_period_s", NULL};
    static const char *const skeys[] = {"start_scale", "tolerance", "max_probes", "rule", NULL};
    static const char *const rules[] = {"worst", "aggregate", NULL};
    const cJSON *m, *s;
    long fe = 1, probes = 24;
    int rc, split = 0, rule = 0;
    c->world.percentile = 99;
    c->world.sample_period_s = 1;
    c->search_start_scale = 1;
    c->search_tol = 0.02;
    if ((rc = sim_json_int(root, "", "frontends", false, 1, 4096, &fe)) ||
        (rc = sim_json_enum(root, "", "frontend_split", false, SPLITS, &split)) ||
        (rc = sim_json_obj(root, "", "metrics", false, &m)) ||
        (rc = sim_json_obj(root, "", "search", false, &s)))
        return rc;
    c->world.frontends = (int)fe;
    c->world.frontend_split = (enum sim_split)split;
    if (m && ((rc = sim_json_keys(m, "metrics", mkeys)) ||
              (rc = sim_json_num(m, "metrics", "percentile", false, SIM_J_POS, &c->world.percentile)) ||
              (rc = sim_json_num(m, "metrics", "sample_period_s", false, SIM_J_NONNEG, &c->world.sample_period_s))))
        return rc;
    if (c->world.percentile >= 100)
        return sim_err_set(SIM_EINVAL, "metrics.percentile: expected a number in (0, 100), got %.15g",
                           c->world.percentile);
    if (s && ((rc = sim_json_keys(s, "search", skeys)) ||
              (rc = sim_json_num(s, "search", "start_scale", false, SIM_J_POS, &c->search_start_scale)) ||
              (rc = sim_json_num(s, "search", "tolerance", false, SIM_J_POS, &c->search_tol)) ||
              (rc = sim_json_int(s, "search", "max_probes", false, 2, 200, &probes)) ||
              (rc = sim_json_enum(s, "search", "rule", false, rules, &rule))))
        return rc;
    c->search_max_probes = (int)probes;
    c->search_rule = (enum sim_search_rule)rule;
    return 0;
}

/* `controller` (sim_world.h, struct sim_ctrl_cfg): the central controller's own time. */
static int parse_controller(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"threads", "us_per_request", "us_per_candidate",
                                       "us_per_batch", NULL};
    static const char *const costs[] = {"us_per_request", "us_per_candidate", "us_per_batch"};
    const cJSON *o;
    long threads = 1;
    int rc;
    if ((rc = sim_json_obj(root, "", "controller", false, &o)) || !o)
        return rc;
    double *v[] = {&c->world.ctrl.us_per_request, &c->world.ctrl.us_per_candidate,
                   &c->world.ctrl.us_per_batch};
    if ((rc = sim_json_keys(o, "controller", keys)) ||
        (rc = sim_json_int(o, "controller", "threads", false, 1, 1024, &threads)))
        return rc;
    for (int i = 0; i < 3; i++) {
        if ((rc = sim_json_num(o, "controller", costs[i], false, SIM_J_NONNEG, v[i])))
            return rc;
        if (*v[i] > 1e6)
            return sim_err_set(SIM_EINVAL, "controller.%s: expected at most 1e6 us (1 s), got %.15g",
                               costs[i], *v[i]);
    }
    c->world.ctrl.threads = (int)threads;
    return 0;
}

/* `autoscale` (policies/autoscale.c): which autoscaler, and its parameters. */
static int parse_autoscale(struct sim_config *c, const cJSON *root)
{
    static const char *const keys[] = {"kind", "min_gpus", "bad_rate_threshold", "keep_idle",
                                       "target_util", "tolerance", "cooldown_s", "target_rps",
                                       "sync_s", "window_s", "stabilization_s", NULL};
    static const char *const KINDS[] = {"none", "symphony", "target_util", "hpa", NULL};
    const char *P = "autoscale";
    struct policy_autoscale *a = &c->autoscale;
    const cJSON *o;
    int kind = 0, rc;
    long min_gpus = 1;
    memset(a, 0, sizeof *a);
    a->bad_rate_threshold = 0.01;
    a->keep_idle = 0.1;
    a->target_util = 0.7;
    a->tolerance = 0.1;
    a->cooldown_s = 30;
    a->target_rps = 20;                 /* hpa: DynamoML's (ours), then Kubernetes' defaults */
    a->sync_s = 15;
    a->window_s = 30;
    a->stabilization_s = 300;
    c->world.autoscaler = NULL;
    c->world.autoscale_params = a;
    if ((rc = sim_json_obj(root, "", "autoscale", false, &o)) || !o)
        return rc;
    if ((rc = sim_json_keys(o, P, keys)) ||
        (rc = sim_json_enum(o, P, "kind", true, KINDS, &kind)) ||
        (rc = sim_json_int(o, P, "min_gpus", false, 1, 1 << 20, &min_gpus)) ||
        (rc = sim_json_num(o, P, "bad_rate_threshold", false, SIM_J_UNIT, &a->bad_rate_threshold)) ||
        (rc = sim_json_num(o, P, "keep_idle", false, SIM_J_UNIT, &a->keep_idle)) ||
        (rc = sim_json_num(o, P, "target_util", false, SIM_J_UNIT, &a->target_util)) ||
        (rc = sim_json_num(o, P, "tolerance", false, SIM_J_UNIT, &a->tolerance)) ||
        (rc = sim_json_num(o, P, "cooldown_s", false, SIM_J_NONNEG, &a->cooldown_s)) ||
        (rc = sim_json_num(o, P, "target_rps", false, SIM_J_POS, &a->target_rps)) ||
        (rc = sim_json_num(o, P, "sync_s", false, SIM_J_POS, &a->sync_s)) ||
        (rc = sim_json_num(o, P, "window_s", false, SIM_J_POS, &a->window_s)) ||
        (rc = sim_json_num(o, P, "stabilization_s", false, SIM_J_NONNEG, &a->stabilization_s)))
        return rc;
    a->min_gpus = (int)min_gpus;
    if (kind == 0)
        return 0;
    c->world.autoscaler = autoscaler_find(KINDS[kind]);
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

static int build(struct sim_config *c)
{
    static const char *const keys[] = {"name", "description", "seed", "duration_s", "warmup_s",
                                       "drain_s", "keep_warmup", "cluster", "models", "workload", "frontends",
                                       "frontend_split",
                                       "network", "policy", "metrics", "search", "controller",
                                       "autoscale", "application", "jobs", "notebooks",
                                       NULL};
    const cJSON *root = c->json;
    const char *name = "unnamed";
    long seed = 1;
    bool keep_warmup = false;
    int rc;
    if (!cJSON_IsObject(root))
        return sim_err_set(SIM_EINVAL, "expected a JSON object at the top level");
    c->world.duration_s = 60;
    c->world.warmup_s = 0;
    c->world.drain_s = 10;
    /* a run's own limit, stricter than every duration's (sim_json.c): said as itself */
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
    if (cJSON_IsNumber(dj) && dj->valuedouble > SIM_CONFIG_MAX_DURATION_S)
        return sim_err_set(SIM_EINVAL, "duration_s: expected at most %g s (about 115 days), got %.15g",
                           SIM_CONFIG_MAX_DURATION_S, dj->valuedouble);
    if ((rc = sim_json_keys(root, "", keys)) || (rc = sim_json_str(root, "", "name", false, &name)) ||
        (rc = sim_json_int(root, "", "seed", false, 0, (1L << 53), &seed)) ||
        (rc = sim_json_num(root, "", "duration_s", false, SIM_J_POS, &c->world.duration_s)) ||
        (rc = sim_json_num(root, "", "warmup_s", false, SIM_J_NONNEG, &c->world.warmup_s)) ||
        (rc = sim_json_num(root, "", "drain_s", false, SIM_J_NONNEG, &c->world.drain_s)) ||
        (rc = sim_json_bool(root, "", "keep_warmup", false, &keep_warmup)))
        return rc;
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
