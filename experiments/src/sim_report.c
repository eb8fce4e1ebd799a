/* sim_report — a run's results as a table and as JSON (see sim_report.h). */
#include "sim_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "sim_err.h"

bool sim_goodput_problem(const struct sim_goodput *g, char *buf, size_t n)
{
    const struct sim_probe *lo = NULL, *hi = NULL, *least = NULL;
    for (int i = 0; i < g->nprobes; i++) {
        const struct sim_probe *p = &g->probes[i];
        if (p->scale == g->lo_scale && p->pass)
            lo = p;
        if (p->scale == g->hi_scale && !p->pass)
            hi = p;
        if (!least || p->scale < least->scale)
            least = p;
    }
    switch (g->status) {
    case SIM_SEARCH_CONVERGED:
        return false;
    case SIM_SEARCH_NO_PASS:
        snprintf(buf, n, "no probed load met every SLO, down to load x%.5g (%.4g req/s)%s",
                 least ? least->scale : 0, least ? least->offered_rps : 0,
                 least && least->offered_rps == 0
                     ? ", which offered no request (a probe that offers none cannot pass): the "
                       "policy or the cluster misses the SLO at any load that offers requests"
                 : g->nprobes >= g->max_probes ? "; raise search.max_probes or lower "
                                                 "search.start_scale to probe lower"
                                               : ", the least the search probes");
        break;
    case SIM_SEARCH_NO_FAIL:
        snprintf(buf, n, "the search did not bracket the goodput: all %d probes passed, up to "
                 "load x%.5g (%.4g req/s), so it lies above; raise search.max_probes (%d) or "
                 "search.start_scale", g->nprobes, g->lo_scale, lo ? lo->offered_rps : 0,
                 g->max_probes);
        break;
    case SIM_SEARCH_WIDE:
        snprintf(buf, n, "the search did not converge: after %d probes (search.max_probes) the "
                 "goodput lies between load x%.5g (%.4g req/s, passed) and x%.5g (%.4g req/s, "
                 "failed), wider than search.tolerance %g", g->nprobes, g->lo_scale,
                 lo ? lo->offered_rps : 0, g->hi_scale, hi ? hi->offered_rps : 0, g->tol);
        break;
    }
    return true;
}

/* sim_report_table: training jobs, means over the jobs that got there */
static void table_jobs(FILE *f, const struct sim_result *r)
{
    int done = 0, started = 0;
    double wait = 0, train = 0, exec = 0;
    for (int j = 0; j < r->njobs; j++) {
        const struct sim_job_result *x = &r->jobs[j];
        if (!isnan(x->start_s))
            started++, wait += x->wait_s;
        if (x->done)
            done++, train += x->train_s, exec += x->exec_s;
    }
    fprintf(f, "jobs: %d of %d done", done, r->njobs);
    if (done == r->njobs)
        fprintf(f, ", makespan %.1f s", r->makespan_s);
    else
        fprintf(f, " by the end (duration_s): no makespan");
    if (started)
        fprintf(f, "; mean wait %.1f s (%d started)", wait / started, started);
    if (done)
        fprintf(f, ", train %.1f s, execution %.1f s (%d done)", train / done, exec / done, done);
    fputc('\n', f);
}

/* sim_report_table: the executors' loads, evictions, rejected actions and preemptions, and
 * the error of the predicted batch durations */
static void table_execs(FILE *f, const struct sim_result *r)
{
    uint64_t loads = 0, evictions = 0, rejected = 0, preemptions = 0, pred = 0;
    double wasted = 0, abs_err = 0;
    for (int e = 0; e < r->nexecs; e++) {
        loads += r->execs[e].load_events;
        evictions += r->execs[e].evictions;
        rejected += r->execs[e].rejected;
        preemptions += r->execs[e].preemptions;
        wasted += r->execs[e].wasted_ms;
    }
    for (int m = 0; m < r->nmodels; m++) {
        pred += r->models[m].pred_n;
        abs_err += r->models[m].pred_mean_abs_err_ms * (double)r->models[m].pred_n;
    }
    if (loads || evictions || rejected || preemptions)
        fprintf(f, "executors: %llu loads, %llu evictions, %llu rejected actions, %llu "
                   "preemptions (%.1f ms of GPU time wasted)\n", (unsigned long long)loads,
                (unsigned long long)evictions, (unsigned long long)rejected,
                (unsigned long long)preemptions, wasted);
    if (pred)
        fprintf(f, "predicted vs actual batch duration: mean |error| %.3f ms over %llu batches\n",
                abs_err / (double)pred, (unsigned long long)pred);
}

/* sim_report_table: the goodput search and its probes */
static void table_goodput(FILE *f, const struct sim_goodput *g)
{
    fprintf(f, "goodput search: %d probes, rule %s (%s)%s\n", g->nprobes,
            sim_search_rule_names[g->rule],
            g->rule == SIM_RULE_WORST ? "every model's bad fraction within 1 - p"
                                      : "all requests' bad fraction within 1 - p",
            g->monotone ? "" : " (pass/fail was not monotone in load: see goodput_search)");
    fprintf(f, "  %-5s %10s %12s %5s %9s %12s %s\n", "probe", "scale", "offered_rps", "pass",
            "all_bad%", "worst_bad%", "worst model");
    for (int i = 0; i < g->nprobes; i++) {
        const struct sim_probe *p = &g->probes[i];
        fprintf(f, "  %-5d %10.5g %12.1f %5s %9.3f %12.3f %s\n", i, p->scale, p->offered_rps,
                p->pass ? "yes" : "no", 100 * p->all_bad_frac, 100 * p->worst_bad_frac,
                p->worst_model);
    }
    char why[512];
    if (g->status == SIM_SEARCH_CONVERGED)
        fprintf(f, "goodput: %.1f req/s (load x%.5g)\n", g->goodput_rps, g->goodput_scale);
    else if (sim_goodput_problem(g, why, sizeof why))
        fprintf(f, "goodput: none (%s)\n", why);
}

/* sim_report_table: the LLM models' tokens, TTFT and TPOT, and each one's KV arithmetic */
static void report_llm(FILE *f, const struct sim_result *r)
{
    bool any = false;
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_llm_result *l = r->models[m].llm;
        if (!l)
            continue;
        const struct sim_model_result *o = &r->models[m];
        if (!any)
            fprintf(f, "%-20s %8s %8s %6s %7s %8s %8s %8s %8s %8s %9s %7s %6s %4s %6s\n",
                    "LLM model", "offered", "on_time", "late", "dropped", "ttft_p50",
                    "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p99", "tokens/s", "preempt",
                    "kv_use", "reps", "bad%");
        any = true;
        fprintf(f, "%-20.20s %8llu %8llu %6llu %7llu %8.1f %8.1f %8.2f %8.2f %8.1f %9.0f %7llu "
                "%5.1f%% %4d %6.2f\n", o->name, (unsigned long long)o->offered,
                (unsigned long long)o->on_time, (unsigned long long)o->late,
                (unsigned long long)o->dropped, l->ttft_p50_ms, l->ttft_p99_ms, l->tpot_p50_ms,
                l->tpot_p99_ms, o->p99_ms, l->tokens_per_s, (unsigned long long)l->preemptions,
                100 * l->kv_util_mean, l->replicas, 100 * o->bad_frac);
        const char *timed = l->estimate ? "the roofline ESTIMATE (datasheet peaks, no measured "
                            "kernel)" : l->timing_source[0] ? "the measured profile"
                            : "the given linear profile";
        if (l->mem.usable_gib > 0)
            fprintf(f, "  %s: KV %.2f GiB usable - %.2f GiB weights - reserve = %.2f GiB, %ld "
                    "blocks of %.0f KiB; iterations timed by %s\n", r->models[m].name,
                    l->mem.usable_gib, l->mem.weights_gib, l->mem.kv_gib, l->mem.blocks,
                    l->mem.block_bytes / 1024, timed);
        else                                   /* a device without a memory size (cpu) */
            fprintf(f, "  %s: KV pool of %ld blocks of %.0f KiB as given (kv_blocks); iterations "
                    "timed by %s\n", r->models[m].name, l->mem.blocks,
                    l->mem.block_bytes / 1024, timed);
        if (l->timing_source[0])
            fprintf(f, "  %s: measured profile: %s\n", r->models[m].name, l->timing_source);
        if (!isnan(l->prefix_hit_rate))
            fprintf(f, "  %s: prefix cache: %.1f%% of the prompt tokens asked found cached\n",
                    r->models[m].name, 100 * l->prefix_hit_rate);
    }
    if (any && r->llm_spare_gpus > 0)
        fprintf(f, "  %d GPU%s in no replica at the end, idle (a replica takes its model's tp GPUs; "
                "the rest stay spare)\n", r->llm_spare_gpus, r->llm_spare_gpus > 1 ? "s" : "");
    if (any)
        fprintf(f, "  (ms; on time: both the TTFT and the TPOT SLO met (DistServe's goodput); "
                "e2e: arrival to the last token;\n   kv_use: the KV pool's use over time; reps: "
                "replicas made; dropped: refused as too long, or held at the run's end)\n");
}

void sim_report_table(FILE *f, const struct sim_result *r, const struct sim_goodput *g)
{
    fprintf(f, "experiment %s  policy %s  seed %llu  load x%.4g  %g s (warm-up %g s",
            r->name, r->policy, (unsigned long long)r->seed, r->load_scale, r->duration_s,
            r->warmup_s);
    if (r->warmup_extended)
        fprintf(f, ", extended from the config's %g s to the policy's convergence time",
                r->warmup_config_s);
    fprintf(f, ")\n");
    int ndnn = 0;
    for (int m = 0; m < r->nmodels; m++)
        ndnn += r->models[m].llm == NULL;
    if (ndnn)
        fprintf(f, "%-20s %7s %9s %9s %7s %7s %8s %8s %8s %7s %7s %6s\n", "model", "slo_ms",
                "offered", "on_time", "late", "dropped", "p50_ms", "p99_ms", "queue_ms",
                "batch", "ideal", "bad%");
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_model_result *o = &r->models[m];
        if (o->llm)
            continue;                   /* in the LLM table below */
        fprintf(f, "%-20.20s %7.1f %9llu %9llu %7llu %7llu %8.2f %8.2f %8.2f %7.2f %7.0f %6.2f\n",
                o->name, o->slo_ms, (unsigned long long)o->offered,
                (unsigned long long)o->on_time, (unsigned long long)o->late,
                (unsigned long long)o->dropped, o->p50_ms, o->p99_ms, o->mean_queue_ms,
                o->mean_batch, o->ideal_batch_staggered, 100 * o->bad_frac);
    }
    if (ndnn)
        fprintf(f, "  (queue_ms: mean wait from arrival to the batch's start; batch: mean batch "
                "size run;\n   ideal: the largest batch within the SLO when the model's GPUs "
                "stagger their batches,\n   SLO / (1 + 1/GPUs), at most max_batch; bad%%: late "
                "or dropped, %% of offered)\n");
    report_llm(f, r);
    if (r->npaths) {
        fprintf(f, "%-20s %-26s %8s %9s %9s %7s %7s %9s %9s %6s\n", "path", "stages", "sla_ms",
                "offered", "on_time", "late", "dropped", "p50_ms", "p99_ms", "bad%");
        for (int p = 0; p < r->npaths; p++) {
            const struct sim_path_result *o = &r->paths[p];
            fprintf(f, "%-20.20s %-26.26s %8.0f %9llu %9llu %7llu %7llu %9.1f %9.1f %6.2f\n",
                    o->name, o->stages, o->sla_ms, (unsigned long long)o->offered,
                    (unsigned long long)o->on_time, (unsigned long long)o->late,
                    (unsigned long long)o->dropped, o->p50_ms, o->p99_ms, 100 * o->bad_frac);
        }
    }
    double busy = 0;
    int gpus = 0, cpus = 0;
    for (int e = 0; e < r->nexecs; e++) {
        gpus += !r->execs[e].cpu;
        cpus += r->execs[e].cpu;
        busy += r->execs[e].cpu ? 0 : r->execs[e].busy_frac;
    }
    fprintf(f, "total: offered %.1f req/s, on time %.1f req/s, bad %.2f%%, GPU busy %.1f%% "
               "(%d GPUs), %s at p%g\n", r->offered_rps, r->ontime_rps, 100 * r->bad_rate,
            gpus ? 100 * busy / gpus : 0.0, gpus,
            r->pass ? (r->npaths ? "every path within SLA" : "every model within SLO")
                    : "SLO missed", r->percentile);
    fprintf(f, "cost: %.1f GPU-hours (%.0f GPU-s), at most %d GPUs at once\n", r->gpu_s / 3600,
            r->gpu_s, r->gpus_max);
    if (cpus)
        fprintf(f, "CPU: %d executors, %.1f core-seconds allocated\n", cpus, r->core_s);
    if (r->trace_gaps)
        fprintf(f, "trace: %d gaps, %.0f s of trace time (handled as workload.trace.gaps says)\n",
                r->trace_gaps, r->trace_gap_s);
    if (r->nnotebooks)
        fprintf(f, "notebooks: %d, %llu bursts done, mean slowdown %.2f\n", r->nnotebooks,
                (unsigned long long)r->nb_bursts, r->nb_bursts ? r->nb_slowdown : 0.0);
    if (r->njobs)
        table_jobs(f, r);
    table_execs(f, r);
    if (r->ctrl_threads)
        fprintf(f, "controller: %d thread%s, %.1f%% busy, %llu decisions waited %.3f ms on "
                "average for a thread (longest %.3f ms)\n", r->ctrl_threads,
                r->ctrl_threads > 1 ? "s" : "", 100 * r->ctrl_busy_frac,
                (unsigned long long)r->ctrl_decisions, r->ctrl_wait_mean_ms, r->ctrl_wait_max_ms);
    if (g)
        table_goodput(f, g);
}

/* The outcome fields a model and a path share: counts and latency quantiles p50..p999. */
static cJSON *outcomes_json(const char *name, uint64_t offered, uint64_t on_time, uint64_t late,
                            uint64_t dropped, const double q[4])
{
    static const char *const qn[4] = {"p50_ms", "p90_ms", "p99_ms", "p999_ms"};
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddNumberToObject(j, "offered", (double)offered);
    cJSON_AddNumberToObject(j, "on_time", (double)on_time);
    cJSON_AddNumberToObject(j, "late", (double)late);
    cJSON_AddNumberToObject(j, "dropped", (double)dropped);
    for (int i = 0; i < 4; i++)
        cJSON_AddNumberToObject(j, qn[i], q[i]);
    return j;
}

/* sim_report_json: the training jobs and the makespan (NAN as null) */
static void json_jobs(cJSON *o, const struct sim_result *r)
{
    if (r->njobs) {                     /* NAN (never started, not done) as null */
        if (isnan(r->makespan_s))
            cJSON_AddNullToObject(o, "makespan_s");
        else
            cJSON_AddNumberToObject(o, "makespan_s", r->makespan_s);
        cJSON *js = cJSON_AddArrayToObject(o, "jobs");
        for (int j = 0; j < r->njobs; j++) {
            const struct sim_job_result *x = &r->jobs[j];
            cJSON *jo = cJSON_CreateObject();
            const char *keys[] = {"arrival_s", "start_s", "end_s", "wait_s", "train_s", "exec_s",
                                  "cross_node_s"};
            const double vals[] = {x->arrival_s, x->start_s, x->end_s, x->wait_s, x->train_s,
                                   x->exec_s, x->cross_node_s};
            cJSON_AddNumberToObject(jo, "job", j + 1);
            cJSON_AddStringToObject(jo, "kind", x->kind);
            for (int k = 0; k < 7; k++)
                if (isnan(vals[k]))
                    cJSON_AddNullToObject(jo, keys[k]);
                else
                    cJSON_AddNumberToObject(jo, keys[k], vals[k]);
            cJSON_AddNumberToObject(jo, "reconfigs", x->reconfigs);
            cJSON_AddNumberToObject(jo, "evictions", x->evictions);
            cJSON_AddItemToArray(js, jo);
        }
    }
}

/* sim_report_json: the goodput search, its status and probes */
static void json_goodput(cJSON *o, const struct sim_goodput *g)
{
    bool ok = g->status == SIM_SEARCH_CONVERGED;
    char why[512] = "";
    if (ok) {
        cJSON_AddNumberToObject(o, "goodput_rps", g->goodput_rps);
        cJSON_AddNumberToObject(o, "goodput_scale", g->goodput_scale);
    } else {
        cJSON_AddNullToObject(o, "goodput_rps");
        cJSON_AddNullToObject(o, "goodput_scale");
    }
    cJSON_AddStringToObject(o, "search_status", sim_search_status_names[g->status]);
    cJSON_AddStringToObject(o, "search_rule", sim_search_rule_names[g->rule]);
    if (sim_goodput_problem(g, why, sizeof why))
        cJSON_AddStringToObject(o, "search_problem", why);
    cJSON_AddBoolToObject(o, "monotone", g->monotone);
    cJSON *ps = cJSON_AddArrayToObject(o, "probes");
    for (int i = 0; i < g->nprobes; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "scale", g->probes[i].scale);
        cJSON_AddNumberToObject(p, "offered_rps", g->probes[i].offered_rps);
        cJSON_AddBoolToObject(p, "pass", g->probes[i].pass);
        cJSON_AddNumberToObject(p, "worst_bad_frac", g->probes[i].worst_bad_frac);
        cJSON_AddNumberToObject(p, "all_bad_frac", g->probes[i].all_bad_frac);
        cJSON_AddStringToObject(p, "worst_model", g->probes[i].worst_model);
        cJSON_AddItemToArray(ps, p);
    }
}

/* sim_report_json: an application's paths */
static void json_paths(cJSON *o, const struct sim_result *r)
{
    if (r->npaths) {
        cJSON *pa = cJSON_AddArrayToObject(o, "paths");
        for (int p = 0; p < r->npaths; p++) {
            const struct sim_path_result *x = &r->paths[p];
            cJSON *j = outcomes_json(x->name, x->offered, x->on_time, x->late, x->dropped,
                                     (const double[4]){x->p50_ms, x->p90_ms, x->p99_ms,
                                                       x->p999_ms});
            cJSON_AddStringToObject(j, "stages", x->stages);
            cJSON_AddNumberToObject(j, "sla_ms", x->sla_ms);
            cJSON_AddNumberToObject(j, "prob", x->prob);
            cJSON_AddNumberToObject(j, "mean_ms", x->mean_ms);
            cJSON_AddNumberToObject(j, "bad_frac", x->bad_frac);
            cJSON_AddItemToArray(pa, j);
        }
    }
}

/* sim_report_json: an LLM model's token-level results, beside its outcomes (docs/llm.md) */
static void json_llm(cJSON *j, const struct sim_model_result *x)
{
    const struct sim_llm_result *l = x->llm;
    static const char *const keys[] = {"ttft_p50_ms", "ttft_p90_ms", "ttft_p99_ms",
                                       "ttft_mean_ms", "tpot_p50_ms", "tpot_p90_ms",
                                       "tpot_p99_ms", "tpot_mean_ms", "itl_p99_ms",
                                       "e2e_p99_ms", "tokens_per_s", "kv_util_mean"};
    const double v[] = {l->ttft_p50_ms, l->ttft_p90_ms, l->ttft_p99_ms, l->ttft_mean_ms,
                        l->tpot_p50_ms, l->tpot_p90_ms, l->tpot_p99_ms, l->tpot_mean_ms,
                        l->itl_p99_ms, x->p99_ms, l->tokens_per_s, l->kv_util_mean};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(j, keys[i], v[i]);
    cJSON_AddNumberToObject(j, "tokens_out", (double)l->tokens_out);
    cJSON_AddNumberToObject(j, "preemptions", (double)l->preemptions);
    cJSON_AddNumberToObject(j, "iterations", (double)l->iterations);
    cJSON_AddNumberToObject(j, "replicas", l->replicas);
    cJSON_AddNumberToObject(j, "kv_blocks", (double)l->mem.blocks);
    if (isnan(l->prefix_hit_rate))
        cJSON_AddNullToObject(j, "prefix_hit_rate");
    else
        cJSON_AddNumberToObject(j, "prefix_hit_rate", l->prefix_hit_rate);
    cJSON_AddStringToObject(j, "iteration_time", l->timing);
    if (l->timing_source[0])
        cJSON_AddStringToObject(j, "profile_source", l->timing_source);
}

/* sim_report_json: per model */
static void json_models(cJSON *o, const struct sim_result *r)
{
    cJSON *ms = cJSON_AddArrayToObject(o, "models");
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_model_result *x = &r->models[m];
        cJSON *j = outcomes_json(x->name, x->offered, x->on_time, x->late, x->dropped,
                                 (const double[4]){x->p50_ms, x->p90_ms, x->p99_ms, x->p999_ms});
        cJSON_AddNumberToObject(j, "slo_ms", x->slo_ms);
        cJSON_AddNumberToObject(j, "mean_queue_ms", x->mean_queue_ms);
        cJSON_AddNumberToObject(j, "mean_batch", x->mean_batch);
        cJSON_AddNumberToObject(j, "ideal_batch_staggered", x->ideal_batch_staggered);
        cJSON_AddNumberToObject(j, "ideal_batch_uncoord", x->ideal_batch_uncoord);
        cJSON_AddNumberToObject(j, "preempted", (double)x->preempted);
        if (x->llm)
            json_llm(j, x);
        if (x->pred_n) {
            cJSON_AddNumberToObject(j, "pred_mean_abs_err_ms", x->pred_mean_abs_err_ms);
            cJSON_AddNumberToObject(j, "pred_over_frac", x->pred_over_frac);
        }
        cJSON *bh = cJSON_AddArrayToObject(j, "batch_hist");
        for (int b = 0; b <= x->max_batch; b++)
            cJSON_AddItemToArray(bh, cJSON_CreateNumber((double)x->batch_hist[b]));
        cJSON_AddItemToArray(ms, j);
    }
}

/* sim_report_json: per executor */
static void json_execs(cJSON *o, const struct sim_result *r)
{
    cJSON *es = cJSON_AddArrayToObject(o, "executors");
    for (int e = 0; e < r->nexecs; e++) {
        const struct sim_exec_result *x = &r->execs[e];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "node", x->node);
        cJSON_AddStringToObject(j, "class", x->cpu ? "cpu" : "gpu");
        if (x->cpu) {
            cJSON_AddStringToObject(j, "model", r->models[x->model].name);
            cJSON_AddNumberToObject(j, "cores", x->cores);
            cJSON_AddNumberToObject(j, "core_s", x->core_s);
        }
        cJSON_AddNumberToObject(j, "busy_frac", x->busy_frac);
        cJSON_AddNumberToObject(j, "up_s", x->up_s);
        cJSON_AddNumberToObject(j, "batches", (double)x->batches);
        cJSON_AddNumberToObject(j, "load_events", (double)x->load_events);
        cJSON_AddNumberToObject(j, "evictions", (double)x->evictions);
        cJSON_AddNumberToObject(j, "rejected", (double)x->rejected);
        cJSON_AddNumberToObject(j, "preemptions", (double)x->preemptions);
        cJSON_AddNumberToObject(j, "wasted_ms", x->wasted_ms);
        cJSON_AddItemToArray(es, j);
    }
}

char *sim_report_json(const struct sim_result *r, const struct sim_goodput *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "policy", r->policy);
    cJSON_AddNumberToObject(o, "seed", (double)r->seed);
    cJSON_AddNumberToObject(o, "load_scale", r->load_scale);
    cJSON_AddNumberToObject(o, "duration_s", r->duration_s);
    cJSON_AddNumberToObject(o, "warmup_s", r->warmup_s);
    if (r->warmup_extended)             /* the config's, where it was extended */
        cJSON_AddNumberToObject(o, "warmup_config_s", r->warmup_config_s);
    else
        cJSON_AddNullToObject(o, "warmup_config_s");
    cJSON_AddNumberToObject(o, "offered_rps", r->offered_rps);
    cJSON_AddNumberToObject(o, "ontime_rps", r->ontime_rps);
    cJSON_AddNumberToObject(o, "bad_rate", r->bad_rate);
    cJSON_AddNumberToObject(o, "gpu_s", r->gpu_s);
    cJSON_AddNumberToObject(o, "gpus_max", r->gpus_max);
    if (r->llm_spare_gpus >= 0)
        cJSON_AddNumberToObject(o, "llm_spare_gpus", r->llm_spare_gpus);
    cJSON_AddNumberToObject(o, "core_s", r->core_s);
    cJSON_AddNumberToObject(o, "trace_gaps", r->trace_gaps);
    cJSON_AddNumberToObject(o, "trace_gap_s", r->trace_gap_s);
    if (r->nnotebooks) {
        cJSON_AddNumberToObject(o, "notebook_bursts", (double)r->nb_bursts);
        if (r->nb_bursts)
            cJSON_AddNumberToObject(o, "notebook_slowdown", r->nb_slowdown);
        else
            cJSON_AddNullToObject(o, "notebook_slowdown");
    }
    json_jobs(o, r);
    cJSON_AddBoolToObject(o, "slo_met", r->pass);
    if (r->ctrl_threads) {
        cJSON *c = cJSON_AddObjectToObject(o, "controller");
        cJSON_AddNumberToObject(c, "threads", r->ctrl_threads);
        cJSON_AddNumberToObject(c, "busy_frac", r->ctrl_busy_frac);
        cJSON_AddNumberToObject(c, "decisions", (double)r->ctrl_decisions);
        cJSON_AddNumberToObject(c, "wait_mean_ms", r->ctrl_wait_mean_ms);
        cJSON_AddNumberToObject(c, "wait_max_ms", r->ctrl_wait_max_ms);
    }
    cJSON_AddNumberToObject(o, "events", (double)r->events);
    if (g)
        json_goodput(o, g);
    json_paths(o, r);
    json_models(o, r);
    json_execs(o, r);
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}
