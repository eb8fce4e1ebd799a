/* sim_plan — the GPU-count search and the autoscaled comparison (see sim_plan.h). */
#include "sim_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_store.h"

#define MAX_SETS 160

/* Loads the input's config with extra overrides appended. */
static int load(const struct sim_plan_input *in, const char *const *extra, int nextra,
                struct sim_config **out)
{
    const char *sets[MAX_SETS];
    int n = 0;
    if (in->nsets + in->nvsets + nextra > MAX_SETS)
        return sim_err_set(SIM_EUSAGE, "plan: too many --set overrides");
    for (int i = 0; i < in->nsets; i++)
        sets[n++] = in->sets[i];
    for (int i = 0; i < in->nvsets; i++)
        sets[n++] = in->vsets[i];
    for (int i = 0; i < nextra; i++)
        sets[n++] = extra[i];
    return sim_config_load_n(in->file, sets, n, in->nsets, in->seed_given, in->seed, out);
}

static int store(const struct sim_plan_input *in, const struct sim_config *cfg,
                 const char *kind, const struct sim_result *r, int64_t *id)
{
    *id = 0;
    if (!in->db)
        return 0;
    struct sim_store *st = NULL;
    int rc = sim_store_open(in->db, &st);
    if (!rc)
        rc = sim_config_store(st, cfg, kind, r, NULL, NULL, id);
    sim_store_close(st);
    return rc;
}

/* GPUs kept busy by the mean rate: each request costing its model's GPU time per request
 * at the largest batch, or (any_batch) the least of any batch size. */
static double busy_gpus(const struct sim_config *cfg, bool any_batch)
{
    double busy = 0;
    for (int m = 0; m < cfg->world.nmodels; m++) {
        const struct sim_model_cfg *mc = &cfg->world.models[m];
        const struct sim_profile *pr = &mc->prof[sim_model_cfg_kind(mc, cfg->world.gpu_kind)];
        double least = INFINITY;
        for (int b = any_batch ? 1 : mc->max_batch; b <= mc->max_batch; b++)
            least = fmin(least, sim_profile_ms(pr, b) / 1e3 / b);
        busy += cfg->world.model_rps[m] * least;
    }
    return busy;
}

/* The throughput lower bound: GPUs kept busy by the mean rate at perfect batching. */
static void lower_bound(const struct sim_config *cfg, struct sim_plan *p)
{
    p->lower_bound = (int)ceil(busy_gpus(cfg, false) - 1e-9);
    if (p->lower_bound < 1)
        p->lower_bound = 1;
    p->trace_mean_rps = cfg->world.rate_rps;
    p->trace_peak_rps = cfg->workload.trace ? cfg->trace_peak_rps : cfg->world.rate_rps;
    p->trace_gaps = cfg->trace_gaps;
    p->time_scale = cfg->workload.trace ? cfg->workload.trace->time_scale : 1;
    snprintf(p->warning, sizeof p->warning, "%s", cfg->trace_warning);
}

/* The fewest GPUs that can serve the share of requests the percentile requires at all: each
 * costs at least the least GPU time per request of any batch size, and G GPUs have G x the
 * window's seconds. Below it no probe can pass, whatever the policy (no simulation needed). */
static int gpus_needed(const struct sim_config *cfg)
{
    return (int)ceil(busy_gpus(cfg, true) * cfg->world.percentile / 100 - 1e-9);
}

/* One static probe at g GPUs: run, store, record. *pass out. */
static int probe(const struct sim_plan_input *in, struct sim_plan *p, int g, bool *pass)
{
    for (int i = 0; i < p->nprobes; i++)
        if (p->probes[i].gpus == g) {
            *pass = p->probes[i].pass;
            return 0;
        }
    if (p->nprobes == SIM_PLAN_MAX_PROBES)
        return sim_err_set(SIM_EINTERNAL, "plan: more than %d probes", SIM_PLAN_MAX_PROBES);
    char s1[48], s2[48];
    snprintf(s1, sizeof s1, "cluster.gpus=%d", g);
    snprintf(s2, sizeof s2, "cluster.max_gpus=%d", g);
    const char *extra[] = {s1, s2, "autoscale={\"kind\": \"none\"}"};
    struct sim_config *cfg = NULL;
    struct sim_result *r = NULL;
    int rc = load(in, extra, 3, &cfg);
    if (!rc) {
        char what[64];
        snprintf(what, sizeof what, "plan probe: %d GPUs", g);
        rc = sim_run_shown(cfg, 1.0, in->progress, what, &r);
    }
    struct sim_plan_probe *pr = &p->probes[p->nprobes];
    if (!rc)
        rc = store(in, cfg, "plan", r, &pr->run_id);
    if (rc) {
        sim_result_destroy(r);
        sim_config_destroy(cfg);
        return rc;
    }
    p->nprobes++;
    pr->gpus = g;
    pr->gpus_used = 0;
    for (int e = 0; e < r->nexecs; e++)
        pr->gpus_used += !r->execs[e].cpu && r->execs[e].batches > 0;
    pr->pass = sim_rule_pass(p->rule, r);
    pr->worst_bad_frac = r->worst_bad_frac;
    pr->all_bad_frac = r->bad_rate;
    snprintf(pr->worst_model, sizeof pr->worst_model, "%s",
             r->worst_model >= 0 && r->worst_model < r->nmodels ? r->models[r->worst_model].name : "");
    if (in->progress)
        fprintf(stderr, "plan: %4d GPUs  %s  (%d used; all %.3f%% bad; worst %s, %.3f%%; "
                "%.1f s)\n", g, pr->pass ? "pass" : "FAIL", pr->gpus_used, 100 * pr->all_bad_frac,
                pr->worst_model, 100 * r->worst_bad_frac, r->wall_s);
    *pass = pr->pass;
    /* keep the result of the best passing probe so far */
    if (pr->pass && (p->static_gpus == 0 || g < p->static_gpus)) {
        sim_result_destroy(p->static_result);
        p->static_result = r;
        p->static_gpus = g;
        p->static_run_id = pr->run_id;
    } else {
        sim_result_destroy(r);
    }
    sim_config_destroy(cfg);
    return 0;
}

static int search(const struct sim_plan_input *in, struct sim_plan *p)
{
    int lo, hi, rc;                     /* lo fails (0: nothing below), hi passes */
    bool ok;
    int g = p->min_gpus > p->lower_bound ? p->min_gpus : p->lower_bound;
    if (g > p->max_gpus)
        g = p->max_gpus;
    if ((rc = probe(in, p, g, &ok)))
        return rc;
    if (ok) {
        lo = 0;
        hi = g;
    } else {
        int step = 1;
        lo = g;
        for (;;) {
            if (lo == p->max_gpus)
                return 0;               /* nothing passes up to the maximum */
            int next = lo + step > p->max_gpus ? p->max_gpus : lo + step;
            if ((rc = probe(in, p, next, &ok)))
                return rc;
            if (ok) {
                hi = next;
                break;
            }
            lo = next;
            step *= 2;
        }
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if ((rc = probe(in, p, mid, &ok)))
            return rc;
        if (ok)
            hi = mid;
        else
            lo = mid;
    }
    return 0;
}

static void check_monotone(struct sim_plan *p)
{
    p->monotone = true;
    for (int i = 0; i < p->nprobes; i++)
        for (int j = 0; j < p->nprobes; j++)
            if (p->probes[i].pass && !p->probes[j].pass && p->probes[i].gpus < p->probes[j].gpus)
                p->monotone = false;
}

static int autoscaled(const struct sim_plan_input *in, struct sim_plan *p,
                      const struct sim_config *base)
{
    struct sim_result *r = NULL;
    int rc = sim_run_shown(base, 1.0, in->progress, "plan: autoscaled", &r);
    if (!rc)
        rc = store(in, base, "plan-autoscale", r, &p->autoscale_run_id);
    if (rc) {
        sim_result_destroy(r);
        return rc;
    }
    if (in->progress)
        fprintf(stderr, "plan: autoscaled from %d GPUs: %.1f GPU-hours, %s (%.1f s)\n",
                base->world.gpus, r->gpu_s / 3600, sim_rule_pass(p->rule, r) ? "pass" : "FAIL",
                r->wall_s);
    p->autoscale_result = r;
    return 0;
}

static int write_plan(const struct sim_plan_input *in, const struct sim_plan *p,
                      const struct sim_config *base)
{
    if (!in->db)
        return 0;
    struct sim_store *st = NULL;
    char hash[17];
    sim_config_hash(base, hash);
    int rc = sim_store_open(in->db, &st);
    if (!rc)
        rc = sim_store_plan_write(st, p, hash, base->world.percentile);
    sim_store_close(st);
    return rc;
}

static int plan_one(const struct sim_plan_input *in, struct sim_plan *p,
                    struct sim_config **basep)
{
    struct sim_config *base = NULL;
    int rc = load(in, NULL, 0, &base);
    *basep = NULL;
    if (rc)
        return rc;
    char hash[17], note[512];
    if (sim_config_transient(base, note, sizeof note) &&
        (in->progress || !base->world.warmup_extended))
        fprintf(stderr, "%s\n", note);     /* the note of an extended warm-up: not --quiet */
    sim_config_hash(base, hash);
    if (in->nvsets)                     /* a variant's plan is named after it too */
        snprintf(p->name, sizeof p->name, "%.60s [%s]", base->world.name, p->label);
    else
        snprintf(p->name, sizeof p->name, "%s", base->world.name);
    p->duration_s = base->world.duration_s;
    snprintf(p->id, sizeof p->id, "%s@%s", base->world.name, hash);
    lower_bound(base, p);
    p->min_gpus = in->min_gpus > 0 ? in->min_gpus : 1;
    p->max_gpus = in->max_gpus > 0 ? in->max_gpus : base->world.max_gpus > base->world.gpus ? base->world.max_gpus
                                                                                 : 4096;
    if (p->max_gpus < p->min_gpus) {
        rc = sim_err_set(SIM_EUSAGE, "plan: --max %d is below --min %d", p->max_gpus,
                         p->min_gpus);
        goto out;
    }
    int need = gpus_needed(base);
    if (need > p->max_gpus) {
        rc = sim_err_set(SIM_EINFEASIBLE, "plan: the search range [%d, %d] cannot hold an "
                         "answer: serving p%g of the mean %.1f req/s at the least GPU time per "
                         "request of any batch size takes at least %d GPUs (the lower bound is %d "
                         "at the largest batch); raise --max (or cluster.max_gpus) to at least "
                         "%d, or lower the load (%s)", p->min_gpus, p->max_gpus,
                         base->world.percentile, base->world.rate_rps, need, p->lower_bound,
                         need, base->workload.trace ? "workload.trace.rate_scale"
                                                    : "workload.rate_rps");
        goto out;
    }
    if (in->db) {                       /* fail early on an unusable database */
        struct sim_store *st = NULL;
        rc = sim_store_open(in->db, &st);
        sim_store_close(st);
        if (rc)
            goto out;
    }
    p->rule = base->search_rule;
    /* no GPU count helps a batch too slow (under the worst-model rule) */
    if (p->rule == SIM_RULE_WORST && (rc = sim_config_feasible(base)))
        goto out;
    if (in->progress)
        fprintf(stderr, "plan %s: lower bound %d GPUs (mean-rate throughput), searching "
                "[%d, %d]\n", p->id, p->lower_bound, p->min_gpus, p->max_gpus);
    if ((rc = search(in, p)))
        goto out;
    check_monotone(p);
    if (base->world.autoscaler) {
        p->autoscaled = true;
        snprintf(p->autoscaler, sizeof p->autoscaler, "%s", base->world.autoscaler->name);
        if ((rc = autoscaled(in, p, base)))
            goto out;
    }
    rc = write_plan(in, p, base);
out:
    if (rc)
        sim_config_destroy(base);
    else
        *basep = base;
    return rc;
}

int sim_plan_run(const struct sim_plan_input *in, struct sim_plan *p)
{
    struct sim_config *base = NULL;
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "as configured");
    int rc = plan_one(in, p, &base);
    const cJSON *vs = rc ? NULL : base->search_variants;
    int nv = cJSON_GetArraySize(vs);
    if (nv > 0 && !(p->variants = calloc((size_t)nv, sizeof *p->variants)))
        rc = SIM_ENOMEM;
    int i = 0;
    for (const cJSON *v = vs ? vs->child : NULL; !rc && v; v = v->next, i++) {
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(v, "set");
        const char *vsets[MAX_SETS];
        int n = 0;
        for (const cJSON *e = set->child; e && n < MAX_SETS; e = e->next)
            vsets[n++] = e->valuestring;
        struct sim_plan_input vin = *in;
        vin.vsets = vsets;
        vin.nvsets = n;
        struct sim_plan *vp = &p->variants[i];
        memset(vp, 0, sizeof *vp);
        snprintf(vp->label, sizeof vp->label, "%s",
                 cJSON_GetObjectItemCaseSensitive(v, "name")->valuestring);
        p->nvariants = i + 1;
        if (in->progress)
            fprintf(stderr, "plan: variant %s\n", vp->label);
        struct sim_config *vc = NULL;
        if ((rc = plan_one(&vin, vp, &vc))) {
            char what[160];
            snprintf(what, sizeof what, "search.variants[%d] (%s)", i, vp->label);
            sim_err_prefix(rc, what);
        }
        sim_config_destroy(vc);
    }
    sim_config_destroy(base);
    return rc;
}

void sim_plan_free(struct sim_plan *p)
{
    sim_result_destroy(p->static_result);
    sim_result_destroy(p->autoscale_result);
    p->static_result = p->autoscale_result = NULL;
    for (int i = 0; i < p->nvariants; i++)
        sim_plan_free(&p->variants[i]);
    free(p->variants);
    p->variants = NULL;
    p->nvariants = 0;
}

static const char *const RULE =
    "smallest G that passes with G-1 simulated and failing; from the mean-rate lower bound, "
    "steps of 1, 2, 4, ... then bisection; assumes pass/fail monotone in G";

/* " (X GPU-hours in trace time)" where the trace's time is compressed (time_scale): the
 * simulated window's GPU-seconds stand for time_scale times as many of the trace's. */
static const char *trace_hours(const struct sim_plan *p, double gpu_s, char *buf, size_t size)
{
    buf[0] = '\0';
    if (p->time_scale != 1)
        snprintf(buf, size, " (%.1f GPU-hours in the trace's time)", gpu_s * p->time_scale / 3600);
    return buf;
}

static void plan_print_one(FILE *f, const struct sim_plan *p);

/* The config's plan and its variants' side by side: one row each. */
static void print_side_by_side(FILE *f, const struct sim_plan *p)
{
    fprintf(f, "\nside by side (static: the fewest GPUs meeting the SLOs; autoscaled: the "
               "autoscaler's run from cluster.gpus)\n");
    fprintf(f, "%-24s %6s %10s %7s %12s %7s\n", "variant", "GPUs", "GPU-hours", "bad%",
            "autoscaled", "bad%");
    for (int i = -1; i < p->nvariants; i++) {
        const struct sim_plan *v = i < 0 ? p : &p->variants[i];
        char g[16] = "none", h[16] = "-", b[16] = "-", a[16] = "-", ab[16] = "-";
        if (v->static_gpus) {
            snprintf(g, sizeof g, "%d", v->static_gpus);
            snprintf(h, sizeof h, "%.2f", v->static_result->gpu_s / 3600);
            snprintf(b, sizeof b, "%.2f", 100 * v->static_result->bad_rate);
        } else {
            snprintf(g, sizeof g, ">%d", v->max_gpus);
        }
        if (v->autoscaled) {
            snprintf(a, sizeof a, "%.2f", v->autoscale_result->gpu_s / 3600);
            snprintf(ab, sizeof ab, "%.2f%s", 100 * v->autoscale_result->bad_rate,
                     sim_rule_pass(v->rule, v->autoscale_result) ? "" : "!");
        }
        fprintf(f, "%-24.24s %6s %10s %7s %12s %7s\n", v->label, g, h, b, a, ab);
    }
    fprintf(f, "(GPU-hours over the %.0f s simulated; >N: no count up to N meets them; "
               "!: the autoscaled run misses the SLOs)\n", p->duration_s);
}

void sim_plan_print(FILE *f, const struct sim_plan *p)
{
    plan_print_one(f, p);
    for (int i = 0; i < p->nvariants; i++) {
        fprintf(f, "\n-- variant %s --\n", p->variants[i].label);
        plan_print_one(f, &p->variants[i]);
    }
    if (p->nvariants > 0)
        print_side_by_side(f, p);
}

static void plan_print_one(FILE *f, const struct sim_plan *p)
{
    fprintf(f, "plan %s\n", p->id);
    if (p->warning[0])
        fprintf(f, "%s\n", p->warning);
    char scaled[160] = "";
    if (p->time_scale != 1)
        snprintf(scaled, sizeof scaled, " (%.0f s of trace time: time_scale %g)",
                 p->duration_s * p->time_scale, p->time_scale);
    fprintf(f, "workload: mean %.1f req/s, peak %.1f req/s, %.0f s simulated%s%s\n",
            p->trace_mean_rps, p->trace_peak_rps, p->duration_s, scaled,
            p->trace_gaps ? " (trace has gaps: see workload.trace.gaps)" : "");
    fprintf(f, "lower bound: %d GPUs (mean-rate throughput at the largest batch)\n",
            p->lower_bound);
    fprintf(f, "search rule: %s (%s)\n", sim_search_rule_names[p->rule],
            p->rule == SIM_RULE_WORST ? "every model's bad fraction within 1 - p"
                                      : "all requests' bad fraction within 1 - p");
    fprintf(f, "%5s %6s %6s %6s %8s  %-20s %7s\n", "probe", "gpus", "used", "result", "all bad%",
            "worst model", "bad%");
    for (int i = 0; i < p->nprobes; i++)
        fprintf(f, "%5d %6d %6d %6s %8.3f  %-20.20s %7.3f\n", i + 1, p->probes[i].gpus,
                p->probes[i].gpus_used, p->probes[i].pass ? "pass" : "FAIL",
                100 * p->probes[i].all_bad_frac, p->probes[i].worst_model,
                100 * p->probes[i].worst_bad_frac);
    if (!p->static_gpus) {
        fprintf(f, "static: no GPU count up to %d meets the SLO\n", p->max_gpus);
        /* failing probes that leave GPUs idle: the policy does not use more, so no count can
         * change the answer; the cause is the policy's plan, not the cluster's size */
        const struct sim_plan_probe *top = NULL;
        int most = 0;
        for (int i = 0; i < p->nprobes; i++) {
            const struct sim_plan_probe *x = &p->probes[i];
            most = x->gpus_used > most ? x->gpus_used : most;
            if (!top || x->gpus > top->gpus)
                top = x;
        }
        if (top && top->gpus_used < top->gpus && top->gpus_used == most)
            fprintf(f, "  at %d GPUs, the most probed, the policy used %d (and no probe more): "
                    "the others stayed idle, so its own plan or queues limit it, not the "
                    "cluster's size (more GPUs are not likely to change the answer)\n",
                    top->gpus, top->gpus_used);
    } else {
        const struct sim_result *r = p->static_result;
        fprintf(f, "static: %d GPUs meet %s at p%g (%d GPUs fail): %.2f "
                "GPU-hours over the %.0f s simulated%s, bad %.2f%%%s\n", p->static_gpus,
                p->rule == SIM_RULE_WORST ? "every model's SLO" : "the SLOs over all requests",
                r->percentile, p->static_gpus - 1, r->gpu_s / 3600, p->duration_s,
                trace_hours(p, r->gpu_s, scaled, sizeof scaled), 100 * r->bad_rate,
                p->monotone ? "" : "  [not monotone: see the probes]");
    }
    fprintf(f, "rule: %s\n", RULE);
    if (p->autoscaled) {
        const struct sim_result *a = p->autoscale_result;
        fprintf(f, "autoscale (%s): %.2f GPU-hours%s, at most %d GPUs, bad %.2f%%, %s",
                p->autoscaler, a->gpu_s / 3600, trace_hours(p, a->gpu_s, scaled, sizeof scaled),
                a->gpus_max, 100 * a->bad_rate,
                sim_rule_pass(p->rule, a) ? "SLO met" : "SLO missed");
        if (p->static_gpus)
            fprintf(f, "; %.1f%% of the static plan's GPU-hours",
                    100 * a->gpu_s / p->static_result->gpu_s);
        fputc('\n', f);
    }
}

static cJSON *plan_json(const struct sim_plan *p)
{
    cJSON *j = cJSON_CreateObject();
    if (!j)
        return NULL;
    cJSON_AddStringToObject(j, "plan", p->id);
    cJSON_AddStringToObject(j, "label", p->label);
    cJSON_AddNumberToObject(j, "mean_rps", p->trace_mean_rps);
    cJSON_AddNumberToObject(j, "peak_rps", p->trace_peak_rps);
    cJSON_AddNumberToObject(j, "duration_s", p->duration_s);
    cJSON_AddNumberToObject(j, "time_scale", p->time_scale);
    cJSON_AddNumberToObject(j, "trace_gaps", p->trace_gaps);
    if (p->warning[0])
        cJSON_AddStringToObject(j, "warning", p->warning);
    cJSON_AddNumberToObject(j, "lower_bound", p->lower_bound);
    cJSON_AddStringToObject(j, "stopping_rule", RULE);
    cJSON_AddStringToObject(j, "search_rule", sim_search_rule_names[p->rule]);
    cJSON_AddBoolToObject(j, "monotone", p->monotone);
    cJSON *pr = cJSON_AddArrayToObject(j, "probes");
    for (int i = 0; i < p->nprobes; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "gpus", p->probes[i].gpus);
        cJSON_AddNumberToObject(o, "gpus_used", p->probes[i].gpus_used);
        cJSON_AddBoolToObject(o, "pass", p->probes[i].pass);
        cJSON_AddStringToObject(o, "worst_model", p->probes[i].worst_model);
        cJSON_AddNumberToObject(o, "worst_bad_frac", p->probes[i].worst_bad_frac);
        cJSON_AddNumberToObject(o, "all_bad_frac", p->probes[i].all_bad_frac);
        cJSON_AddNumberToObject(o, "run_id", (double)p->probes[i].run_id);
        cJSON_AddItemToArray(pr, o);
    }
    if (p->static_gpus) {
        cJSON *s = cJSON_AddObjectToObject(j, "static");
        cJSON_AddNumberToObject(s, "gpus", p->static_gpus);
        cJSON_AddNumberToObject(s, "gpu_hours", p->static_result->gpu_s / 3600);
        cJSON_AddNumberToObject(s, "gpu_hours_trace_time",
                                p->static_result->gpu_s * p->time_scale / 3600);
        cJSON_AddNumberToObject(s, "bad_rate", p->static_result->bad_rate);
        cJSON_AddNumberToObject(s, "run_id", (double)p->static_run_id);
    } else {
        cJSON_AddNullToObject(j, "static");
    }
    if (p->autoscaled) {
        const struct sim_result *a = p->autoscale_result;
        cJSON *s = cJSON_AddObjectToObject(j, "autoscale");
        cJSON_AddStringToObject(s, "autoscaler", p->autoscaler);
        cJSON_AddNumberToObject(s, "gpu_hours", a->gpu_s / 3600);
        cJSON_AddNumberToObject(s, "gpu_hours_trace_time", a->gpu_s * p->time_scale / 3600);
        cJSON_AddNumberToObject(s, "gpus_max", a->gpus_max);
        cJSON_AddNumberToObject(s, "bad_rate", a->bad_rate);
        cJSON_AddBoolToObject(s, "slo_met", sim_rule_pass(p->rule, a));
        cJSON_AddNumberToObject(s, "run_id", (double)p->autoscale_run_id);
        if (p->static_gpus)
            cJSON_AddNumberToObject(s, "gpu_hours_vs_static", a->gpu_s / p->static_result->gpu_s);
    }
    return j;
}

char *sim_plan_json(const struct sim_plan *p)
{
    cJSON *j = plan_json(p);
    if (!j)
        return NULL;
    if (p->nvariants > 0) {
        cJSON *vs = cJSON_AddArrayToObject(j, "variants");
        for (int i = 0; i < p->nvariants; i++)
            cJSON_AddItemToArray(vs, plan_json(&p->variants[i]));
    }
    char *out = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return out;
}
