/* sim_result — collecting the results of a finished engine (see sim_result.h). */
#include "sim_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_int.h"

/* The largest batch whose latency fits the SLO divided by slo_div: in closed form for a linear
 * profile, else by walking the (non-decreasing) profile up to the model's max batch — a
 * profile that stays within the budget there is reported at max_batch. 0: not even one. */
static double ideal_batch(const struct sim_model_cfg *mc, int k, double slo_div)
{
    if (k < 0)
        return 0;
    const struct sim_profile *p = &mc->prof[k];
    double budget = mc->slo_ms / slo_div;
    if (p->form == SIM_PROF_LINEAR && p->alpha_ms > 0) {   /* never past the model's max */
        double b = floor((budget - p->beta_ms) / p->alpha_ms);
        return b > mc->max_batch ? mc->max_batch : b > 0 ? b : 0;
    }
    int b = 0;
    while (b < mc->max_batch && sim_profile_ms(p, b + 1) <= budget)
        b++;
    return b;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* v in ascending order: executors are added in time order, so their addition times come
 * sorted already, and a check spares 100,000 of them a sort. */
static void sort_i64(int64_t *v, size_t n)
{
    size_t i = 1;
    while (i < n && v[i - 1] <= v[i])
        i++;
    if (i < n)
        qsort(v, n, sizeof *v, cmp_i64);
}

/* p-th percentile latency <= SLO  <=>  at most (1 - q) of requests are bad, dropped requests
 * counting as infinitely late. */
static bool within_slo(uint64_t bad, uint64_t offered, double q)
{
    return offered == 0 || (double)bad <= (1.0 - q) * (double)offered + 1e-9;
}

/* Adds one model's or path's outcomes to the run's totals and verdict; its bad fraction. */
static double add_outcomes(struct sim_result *r, const struct sim_outcomes *n, double q)
{
    uint64_t bad = n->late + n->dropped;
    r->offered += n->offered;
    r->on_time += n->on_time;
    r->late += n->late;
    r->dropped += n->dropped;
    if (!within_slo(bad, n->offered, q))
        r->pass = false;
    return n->offered ? (double)bad / (double)n->offered : 0;
}

static void latency_summary(const struct sim_hist *h, double *p50, double *p90, double *p99,
                            double *p999, double *mean)
{
    *p50 = sim_ns_to_ms(sim_hist_quantile(h, 0.50));
    *p90 = sim_ns_to_ms(sim_hist_quantile(h, 0.90));
    *p99 = sim_ns_to_ms(sim_hist_quantile(h, 0.99));
    *p999 = sim_ns_to_ms(sim_hist_quantile(h, 0.999));
    *mean = sim_hist_mean(h) / 1e6;
}

/* Whether executor e is an LLM policy's: no views, or its view serves an LLM model (a GPU of
 * a DNN part of pools is in no replica by design). */
static bool llm_view(const struct sim *s, int e)
{
    if (!s->exec_view || s->exec_view[e] < 0)
        return true;
    for (int m = 0; m < s->nmodels; m++)
        if (s->model_view[m] == s->exec_view[e] && s->models[m].cfg->llm_on)
            return true;
    return false;
}

/* An LLM model's token-level results, or NULL (*out untouched) for a DNN model. */
static int collect_llm(const struct sim *s, int m, double window_s, struct sim_llm_result **out)
{
    const struct sim_llm_stats *ls = s->ms[m].llm;
    if (!ls)
        return 0;
    struct sim_llm_result *o = calloc(1, sizeof *o);
    if (!o)
        return SIM_ENOMEM;
    double ignore;
    latency_summary(&ls->ttft, &o->ttft_p50_ms, &o->ttft_p90_ms, &o->ttft_p99_ms, &ignore,
                    &o->ttft_mean_ms);
    latency_summary(&ls->tpot, &o->tpot_p50_ms, &o->tpot_p90_ms, &o->tpot_p99_ms, &ignore,
                    &o->tpot_mean_ms);
    o->itl_p99_ms = sim_ns_to_ms(sim_hist_quantile(&ls->itl, 0.99));
    o->tokens_out = ls->tokens_out;
    o->preemptions = ls->preemptions;
    o->iterations = ls->iterations;
    o->tokens_per_s = window_s > 0 ? (double)ls->tokens_out / window_s : 0;
    double util = 0;
    for (int e = 0; e < s->nexecs; e++) {
        const struct sim_llm_state *st = sim_llm_state(s, e);
        if (st && st->model == m) {
            o->replicas++;
            util += sim_llm_kv_util(s, e);
        }
    }
    o->kv_util_mean = o->replicas ? util / o->replicas : 0;
    o->prefix_hit_rate = ls->prefix_on && ls->prefix_query > 0
                             ? (double)ls->prefix_hit / (double)ls->prefix_query : NAN;
    const struct sim_llm_cfg *c = &s->models[m].cfg->llm;
    o->estimate = c->prof == SIM_LLM_ROOFLINE;
    o->timing = c->prof == SIM_LLM_ROOFLINE ? "roofline estimate"
              : c->prof == SIM_LLM_LINEAR   ? "linear profile"
                                            : "measured profile";
    if (c->prof == SIM_LLM_TABLE)
        snprintf(o->timing_source, sizeof o->timing_source, "%s", c->table->source);
    sim_llm_memory(c, &o->mem);
    *out = o;                           /* (owned from here: freed with the result) */
    o->ttft = malloc(sizeof *o->ttft);
    o->tpot = malloc(sizeof *o->tpot);
    if (!o->ttft || !o->tpot)
        return SIM_ENOMEM;
    memcpy(o->ttft, &ls->ttft, sizeof *o->ttft);
    memcpy(o->tpot, &ls->tpot, sizeof *o->tpot);
    return 0;
}

/* The application's paths; their requests replace the models' stages in the totals. */
static int collect_paths(struct sim *s, struct sim_result *r, double q)
{
    const struct sim_app *a = s->app;
    if (!(r->paths = calloc((size_t)a->npaths, sizeof *r->paths)))
        return SIM_ENOMEM;
    r->npaths = a->npaths;
    r->offered = r->on_time = r->late = r->dropped = 0;
    r->pass = true;
    for (int p = 0; p < a->npaths; p++) {
        const struct sim_path_stats *ps = &s->ps[p];
        const struct sim_app_path *ap = &a->paths[p];
        struct sim_path_result *o = &r->paths[p];
        snprintf(o->name, sizeof o->name, "%s", ap->name);
        for (int i = 0; i < ap->nstages; i++) {
            size_t len = strlen(o->stages);
            snprintf(o->stages + len, sizeof o->stages - len, "%s%s", i ? ">" : "",
                     s->models[ap->stages[i]].cfg->name);
        }
        o->sla_ms = ap->sla_ms;
        o->prob = ap->prob;
        o->rate_rps = s->cfg->rate_rps * s->scale * ap->prob;
        o->offered = ps->n.offered;
        o->on_time = ps->n.on_time;
        o->late = ps->n.late;
        o->dropped = ps->n.dropped;
        latency_summary(&ps->latency, &o->p50_ms, &o->p90_ms, &o->p99_ms, &o->p999_ms,
                        &o->mean_ms);
        o->bad_frac = add_outcomes(r, &ps->n, q);
        if (!(o->latency = malloc(sizeof *o->latency)))
            return SIM_ENOMEM;
        memcpy(o->latency, &ps->latency, sizeof *o->latency);
    }
    return 0;
}

/* Per model: outcomes, latency and queueing, predictions, batches, the ideal batches; the
 * worst model by bad fraction into r->worst_model, its fraction returned through *worst. */
static int collect_models(const struct sim *s, struct sim_result *r, double q, double *worst)
{
    const struct sim_world *c = s->cfg;
    *worst = -1;
    for (int m = 0; m < s->nmodels; m++) {
        const struct sim_model_stats *ms = &s->ms[m];
        const struct sim_model *md = &s->models[m];
        struct sim_model_result *o = &r->models[m];
        snprintf(o->name, sizeof o->name, "%s", md->cfg->name);
        o->slo_ms = md->cfg->slo_ms;
        o->rate_rps = md->rate_rps * s->scale;
        o->max_batch = md->max_batch;
        o->offered = ms->n.offered;
        o->on_time = ms->n.on_time;
        o->late = ms->n.late;
        o->dropped = ms->n.dropped;
        latency_summary(&ms->latency, &o->p50_ms, &o->p90_ms, &o->p99_ms, &o->p999_ms,
                        &o->mean_ms);
        o->mean_queue_ms = sim_hist_mean(&ms->queueing) / 1e6;
        o->p99_queue_ms = sim_ns_to_ms(sim_hist_quantile(&ms->queueing, 0.99));
        o->batches = ms->batches;
        o->preempted = ms->preempted;
        o->pred_n = ms->pred_n;
        if (ms->pred_n) {
            double n = (double)ms->pred_n;
            o->pred_mean_err_ms = ms->pred_err_sum_ns / n / 1e6;
            o->pred_mean_abs_err_ms = ms->pred_abs_sum_ns / n / 1e6;
            o->pred_max_over_ms = sim_ns_to_ms(ms->pred_max_over_ns);
            o->pred_over_frac = (double)ms->pred_over / n;
        }
        o->mean_batch = ms->batches ? (double)ms->batched / (double)ms->batches : 0;
        o->bad_frac = add_outcomes(r, &ms->n, q);
        int k = sim_model_cfg_kind(md->cfg, c->gpu_kind);
        double n = c->gpus;
        o->ideal_batch_staggered = ideal_batch(md->cfg, k, 1.0 + 1.0 / n);
        o->ideal_batch_uncoord = ideal_batch(md->cfg, k, 2.0);
        o->batch_hist = malloc(((size_t)md->max_batch + 1) * sizeof *o->batch_hist);
        o->latency = malloc(sizeof *o->latency);
        o->queueing = malloc(sizeof *o->queueing);
        if (!o->batch_hist || !o->latency || !o->queueing)
            return SIM_ENOMEM;
        memcpy(o->batch_hist, ms->batch_hist, ((size_t)md->max_batch + 1) * sizeof *o->batch_hist);
        memcpy(o->latency, &ms->latency, sizeof *o->latency);
        memcpy(o->queueing, &ms->queueing, sizeof *o->queueing);
        int rc = collect_llm(s, m, (double)(s->duration - s->warmup) / 1e9, &o->llm);
        if (rc)
            return rc;
        if (o->bad_frac > *worst) {
            *worst = o->bad_frac;
            r->worst_model = m;
        }
        if (o->llm && r->llm_spare_gpus < 0) {
            r->llm_spare_gpus = 0;
            for (int e = 0; e < s->nexecs; e++)
                r->llm_spare_gpus += !s->execs[e].cpu && s->execs[e].state == SIM_EXEC_UP &&
                                     sim_llm_replica_of(s, e) < 0 && llm_view(s, e);
        }
    }
    return 0;
}

/* Per executor: kind, node, cores and core-seconds, time up and busy, batches, loads. */
static void collect_execs(const struct sim *s, struct sim_result *r)
{
    for (int e = 0; e < s->nexecs; e++) {
        const struct sim_exec *x = &s->execs[e];
        struct sim_exec_result *o = &r->execs[e];
        o->id = e;
        if (e > 0 && x->kind == s->execs[e - 1].kind)   /* (a formatted copy per executor
                                                           was a tenth of a short large run) */
            memcpy(o->kind, r->execs[e - 1].kind, sizeof o->kind);
        else
            snprintf(o->kind, sizeof o->kind, "%s", s->kinds[x->kind]);
        o->node = x->node;
        o->cpu = x->cpu;
        o->model = x->model;
        if (x->cpu) {
            const struct sim_exec_int *xi = &s->xi[e];
            int64_t t = s->duration, acc = xi->core_acc;   /* held to the end */
            if (x->state != SIM_EXEC_DOWN && t > xi->core_since)
                acc += (t - xi->core_since) * (int64_t)x->milli_cores;
            o->cores = x->milli_cores / 1000.0;
            o->core_s = (double)acc / 1e12;
            r->core_s += o->core_s;
        }
        int64_t end = x->state == SIM_EXEC_DOWN ? x->down_at : s->now;
        int64_t span = x->state == SIM_EXEC_STARTING || x->state == SIM_EXEC_PENDING
                           ? 0 : end - x->up_since;
        o->up_s = (double)span / 1e9;
        o->busy_frac = span > 0 ? (double)x->busy_ns / (double)span : 0;
        o->load_busy_frac = span > 0 ? (double)x->load_busy_ns / (double)span : 0;
        o->wasted_ms = sim_ns_to_ms(x->wasted_ns);
        o->batches = x->batches;
        o->requests = x->requests;
        o->load_events = x->load_events;
        o->evictions = x->evictions;
        o->rejected = x->rejected;
        o->preemptions = x->preemptions;
        o->models_loaded = x->models_loaded;
    }
}

static int collect_billing(const struct sim *s, struct sim_result *r)
{
    /* billing: from the request to DOWN (or the end of the arrivals window); the most GPU
     * executors at once, counted at each one's addition: those added by then less those down
     * by then (sorted times, two pointers: linear in the cluster after the sort) */
    int64_t *adds = malloc(((size_t)s->nexecs + 1) * sizeof *adds);
    int64_t *downs = malloc(((size_t)s->nexecs + 1) * sizeof *downs);
    if (!adds || !downs) {
        free(adds), free(downs);
        return SIM_ENOMEM;
    }
    size_t na = 0, nd = 0;
    for (int e = 0; e < s->nexecs; e++) {
        const struct sim_exec *x = &s->execs[e];
        if (x->cpu || x->state == SIM_EXEC_PENDING)
            continue;                   /* billed in core-seconds; or never had a GPU */
        int64_t end = x->state == SIM_EXEC_DOWN && x->down_at < s->duration ? x->down_at
                                                                             : s->duration;
        if (end > x->added_at)
            r->gpu_s += (double)(end - x->added_at) / 1e9;
        adds[na++] = x->added_at;
        if (x->state == SIM_EXEC_DOWN)
            downs[nd++] = x->down_at;
    }
    sort_i64(adds, na);
    sort_i64(downs, nd);
    for (size_t i = 0, j = 0; i < na; i++) {
        while (i + 1 < na && adds[i + 1] == adds[i])
            i++;                        /* all added at this time count */
        while (j < nd && downs[j] <= adds[i])
            j++;
        int at = (int)(i + 1 - j);
        if (at > r->gpus_max)
            r->gpus_max = at;
    }
    free(adds), free(downs);
    return 0;
}

/* Per training job: its times, reconfigurations, workers over time; the makespan. */
static int collect_jobs(struct sim *s, struct sim_result *r)
{
    if ((r->njobs = sim_job_count(s)) > 0 &&
        !(r->jobs = calloc((size_t)r->njobs, sizeof *r->jobs)))
        return SIM_ENOMEM;
    r->makespan_s = r->njobs ? 0 : NAN;
    bool all_done = true;
    for (int j = 0; j < r->njobs; j++) {
        const struct sim_job *p = sim_job(s, j);
        struct sim_job_result *o = &r->jobs[j];
        snprintf(o->kind, sizeof o->kind, "%s", s->cfg->job_kinds[p->kind].name);
        o->done = p->state == SIM_JOB_DONE;
        o->arrival_s = (double)p->arrival / 1e9;
        o->start_s = p->started >= 0 ? (double)p->started / 1e9 : NAN;
        o->end_s = o->done ? (double)p->ended / 1e9 : NAN;
        o->wait_s = o->start_s - o->arrival_s;
        o->train_s = o->end_s - o->start_s;
        o->exec_s = o->end_s - o->arrival_s;
        o->reconfigs = p->reconfigs;
        o->evictions = p->evictions;
        o->cross_node_s = (double)p->cross_ns / 1e9;
        for (int n = 1; n <= SIM_JOB_MAX_WORKERS; n++)
            o->workers_s[n - 1] = (double)sim_job_workers_ns(s, j, n) / 1e9;
        if (!o->done)
            all_done = false;
        else if (o->end_s > r->makespan_s)
            r->makespan_s = o->end_s;
    }
    if (!all_done)
        r->makespan_s = NAN;            /* a job still running at the end: no makespan */
    return 0;
}

static void collect_notebooks(const struct sim *s, struct sim_result *r)
{
    r->nnotebooks = s->nnb;
    double slow = 0;
    for (int i = 0; i < s->nnb; i++) {
        r->nb_bursts += s->nb[i].pub.bursts;
        slow += s->nb[i].pub.slowdown_sum;
    }
    r->nb_slowdown = r->nb_bursts ? slow / (double)r->nb_bursts : NAN;
}

int sim_result_collect(struct sim *s, struct sim_result **out)
{
    const struct sim_world *c = s->cfg;
    struct sim_result *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return SIM_ENOMEM;
    snprintf(r->name, sizeof r->name, "%s", c->name);
    snprintf(r->policy, sizeof r->policy, "%s", s->pol->name);
    r->llm_spare_gpus = -1;
    r->seed = c->seed;
    r->load_scale = s->scale;
    r->duration_s = s->ended_early ? (double)s->duration / 1e9 : c->duration_s;
    r->warmup_s = c->warmup_s;
    r->warmup_extended = c->warmup_extended;
    r->warmup_config_s = c->warmup_config_s;
    r->percentile = c->percentile;
    r->events = s->events;
    r->same_instant = s->same_instant;
    r->nmodels = s->nmodels;
    r->nexecs = s->nexecs;
    r->models = calloc((size_t)s->nmodels, sizeof *r->models);
    r->execs = calloc((size_t)s->nexecs, sizeof *r->execs);
    if (!r->models || !r->execs)
        goto fail;
    double measured = r->duration_s - c->warmup_s;
    double q = c->percentile / 100.0;
    double worst;
    r->pass = true;
    if (collect_models(s, r, q, &worst))
        goto fail;
    if (s->app && collect_paths(s, r, q))
        goto fail;
    r->worst_bad_frac = worst;
    r->offered_rps = measured > 0 ? (double)r->offered / measured : 0;
    r->ontime_rps = measured > 0 ? (double)r->on_time / measured : 0;
    r->bad_rate = r->offered ? (double)(r->late + r->dropped) / (double)r->offered : 0;
    r->pass_aggregate = within_slo(r->late + r->dropped, r->offered, q);
    r->ctrl_threads = s->ctrl_threads;
    r->ctrl_decisions = s->ctrl_decisions;
    r->ctrl_wait_mean_ms = s->ctrl_decisions ? sim_ns_to_ms(s->ctrl_wait_ns) / (double)s->ctrl_decisions : 0;
    r->ctrl_wait_max_ms = sim_ns_to_ms(s->ctrl_wait_max_ns);
    r->ctrl_busy_frac = s->ctrl_threads > 0 && s->duration > 0
                            ? (double)s->ctrl_busy_ns / ((double)s->ctrl_threads * (double)s->duration) : 0;
    collect_execs(s, r);
    if (collect_billing(s, r) || collect_jobs(s, r))
        goto fail;
    collect_notebooks(s, r);
    r->ts = s->ts;                      /* move */
    sim_ts_init(&s->ts);
    *out = r;
    return 0;
fail:
    sim_result_destroy(r);
    return SIM_ENOMEM;
}

void sim_result_destroy(struct sim_result *r)
{
    if (!r)
        return;
    for (int m = 0; m < r->nmodels && r->models; m++) {
        free(r->models[m].batch_hist);
        free(r->models[m].latency);
        free(r->models[m].queueing);
        if (r->models[m].llm) {
            free(r->models[m].llm->ttft);
            free(r->models[m].llm->tpot);
        }
        free(r->models[m].llm);
    }
    free(r->models);
    free(r->execs);
    for (int p = 0; p < r->npaths && r->paths; p++)
        free(r->paths[p].latency);
    free(r->paths);
    free(r->jobs);
    sim_ts_free(&r->ts);
    free(r);
}

