/* sim_store_write — the writers of the results store: a run with everything it measured
 * (sim_store_write, one transaction), a failed sweep point, a plan, calibrated profiles; each
 * table through a by-name writer (sim_store_int.h). */
#include "sim_store.h"
#include "sim_store_int.h"
#include "sim_readback.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_wall.h"

/* The non-empty buckets of one histogram as rows (run_id, `key` = name, lo_ms, hi_ms, count). */
static int write_hist(struct sim_store_writer *w, int64_t id, const char *key, const char *name,
                      const struct sim_hist *h)
{
    for (int k = 0; k < SIM_HIST_BUCKETS; k++) {
        if (!h->counts[k])
            continue;
        int64_t lo, hi;
        sim_hist_bucket_range(k, &lo, &hi);
        sw_int(w, "run_id", id);
        sw_text(w, key, name);
        sw_real(w, "lo_ms", sim_ns_to_ms(lo));
        sw_real(w, "hi_ms", sim_ns_to_ms(hi));
        sw_int(w, "count", (int64_t)h->counts[k]);
        int rc = sw_row(w);
        if (rc)
            return rc;
    }
    return 0;
}

const char *const sim_search_status_names[] = {"ok", "no load passed", "not bracketed",
                                               "not converged"};
const char *const sim_search_rule_names[] = {"worst", "aggregate"};

/* Is the point stored as done (inside the caller's transaction)? */
static int point_stored(struct sim_store *st, const struct sim_store_point *pt, bool *done)
{
    sqlite3_stmt *q = NULL;
    int rc = store_prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ? AND point_key = ? "
                      "AND status = 'ok'", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, pt->sweep, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, pt->key, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(q);
    *done = step == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
    if (step != SQLITE_ROW)
        rc = store_err(st, "reading sweep_points");
    sqlite3_finalize(q);
    return rc;
}

/* The writers of one run's tables, in the order sim_store_write fills them. */
enum { T_RUN, T_JOB, T_JOBW, T_MODEL, T_EXEC, T_TS, T_BATCH, T_LAT, T_QUEUE, T_PATH, T_PATHH,
       T_SEARCH, T_POINT, T_LLM, T_TTFT, T_TPOT, T_NWRITERS };

static int write_run_row(struct sim_store_writer *w, const struct sim_store_run *run,
                         const struct sim_result *r, const char *started)
{
    const struct sim_goodput *g = run->goodput;
    char seed_text[24];
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)r->seed);
    sw_text(w, "name", r->name);
    sw_text(w, "kind", run->kind);
    sw_text(w, "policy", r->policy);
    sw_text(w, "seed", seed_text);
    sw_text(w, "config_json", run->config_json);
    sw_text(w, "config_hash", run->config_hash);
    sw_text(w, "version", SERVESIM_VERSION);
    sw_text(w, "started_at", started);
    sw_real(w, "wall_s", r->wall_s);
    sw_text(w, "status", g ? sim_search_status_names[g->status] : "ok");
    sw_real(w, "duration_s", r->duration_s);
    sw_real(w, "warmup_s", r->warmup_s);
    sw_real(w, "load_scale", r->load_scale);
    sw_real(w, "offered_rps", r->offered_rps);
    sw_real(w, "ontime_rps", r->ontime_rps);
    sw_real(w, "bad_rate", r->bad_rate);
    sw_int(w, "slo_met", r->pass);
    sw_real(w, "percentile", r->percentile);
    /* a goodput search's result (0 where it found none); NULL for a plain run */
    sw_real(w, "goodput_rps", !g ? NAN : g->status == SIM_SEARCH_CONVERGED ? g->goodput_rps : 0.0);
    sw_int(w, "events", (int64_t)r->events);
    sw_real(w, "gpu_s", r->gpu_s);
    sw_int(w, "gpus_max", r->gpus_max);
    sw_int(w, "trace_gaps", r->trace_gaps);
    sw_real(w, "trace_gap_s", r->trace_gap_s);
    sw_real(w, "core_s", r->core_s);
    sw_real(w, "makespan_s", r->makespan_s);
    sw_real(w, "notebook_slowdown", r->nnotebooks ? r->nb_slowdown : NAN);
    sw_real(w, "warmup_config_s", r->warmup_extended ? r->warmup_config_s : NAN);
    return sw_row(w);
}

static int write_job_rows(struct sim_store_writer *wj, struct sim_store_writer *ww, int64_t id,
                          const struct sim_result *r)
{
    int rc = 0;
    for (int j = 0; j < r->njobs && !rc; j++) {  /* NAN (never started or done): NULL */
        const struct sim_job_result *x = &r->jobs[j];
        sw_int(wj, "run_id", id);
        sw_int(wj, "job", j + 1);
        sw_text(wj, "kind", x->kind);
        sw_real(wj, "arrival_s", x->arrival_s);
        sw_real(wj, "start_s", x->start_s);
        sw_real(wj, "end_s", x->end_s);
        sw_real(wj, "wait_s", x->wait_s);
        sw_real(wj, "train_s", x->train_s);
        sw_real(wj, "exec_s", x->exec_s);
        sw_int(wj, "reconfigs", x->reconfigs);
        sw_int(wj, "evictions", x->evictions);
        sw_real(wj, "cross_node_s", x->cross_node_s);
        rc = sw_row(wj);
        for (int n = 0; n < SIM_JOB_MAX_WORKERS && !rc; n++) {
            if (x->workers_s[n] <= 0)
                continue;
            sw_int(ww, "run_id", id);
            sw_int(ww, "job", j + 1);
            sw_int(ww, "workers", n + 1);
            sw_real(ww, "seconds", x->workers_s[n]);
            rc = sw_row(ww);
        }
    }
    return rc;
}

/* An LLM model's token-level results (docs/results.md, `llm_stats`). */
static int write_llm_row(struct sim_store_writer *w, int64_t id, const struct sim_model_result *x)
{
    const struct sim_llm_result *l = x->llm;
    sw_int(w, "run_id", id);
    sw_text(w, "model", x->name);
    sw_real(w, "ttft_p50_ms", l->ttft_p50_ms);
    sw_real(w, "ttft_p90_ms", l->ttft_p90_ms);
    sw_real(w, "ttft_p99_ms", l->ttft_p99_ms);
    sw_real(w, "ttft_mean_ms", l->ttft_mean_ms);
    sw_real(w, "tpot_p50_ms", l->tpot_p50_ms);
    sw_real(w, "tpot_p90_ms", l->tpot_p90_ms);
    sw_real(w, "tpot_p99_ms", l->tpot_p99_ms);
    sw_real(w, "tpot_mean_ms", l->tpot_mean_ms);
    sw_real(w, "itl_p99_ms", l->itl_p99_ms);
    sw_real(w, "e2e_p99_ms", x->p99_ms);
    sw_int(w, "tokens_out", (int64_t)l->tokens_out);
    sw_real(w, "tokens_per_s", l->tokens_per_s);
    sw_int(w, "preemptions", (int64_t)l->preemptions);
    sw_int(w, "iterations", (int64_t)l->iterations);
    sw_int(w, "replicas", l->replicas);
    sw_real(w, "kv_util_mean", l->kv_util_mean);
    sw_real(w, "prefix_hit_rate", l->prefix_hit_rate);
    sw_int(w, "kv_blocks", l->mem.blocks);
    sw_real(w, "kv_gib", l->mem.kv_gib);
    sw_real(w, "weights_gib", l->mem.weights_gib);
    sw_text(w, "iteration_time", l->timing);
    return sw_row(w);
}

static int write_model_rows(struct sim_store_writer *w, int64_t id, const struct sim_result *r)
{
    int rc = 0;
    for (int m = 0; m < r->nmodels && !rc; m++) {
        const struct sim_model_result *x = &r->models[m];
        bool pred = x->pred_n > 0;      /* the prediction columns: NULL without predictions */
        sw_int(&w[T_MODEL], "run_id", id);
        sw_text(&w[T_MODEL], "model", x->name);
        sw_real(&w[T_MODEL], "slo_ms", x->slo_ms);
        sw_real(&w[T_MODEL], "rate_rps", x->rate_rps);
        sw_int(&w[T_MODEL], "max_batch", x->max_batch);
        sw_int(&w[T_MODEL], "offered", (int64_t)x->offered);
        sw_int(&w[T_MODEL], "on_time", (int64_t)x->on_time);
        sw_int(&w[T_MODEL], "late", (int64_t)x->late);
        sw_int(&w[T_MODEL], "dropped", (int64_t)x->dropped);
        sw_real(&w[T_MODEL], "p50_ms", x->p50_ms);
        sw_real(&w[T_MODEL], "p90_ms", x->p90_ms);
        sw_real(&w[T_MODEL], "p99_ms", x->p99_ms);
        sw_real(&w[T_MODEL], "p999_ms", x->p999_ms);
        sw_real(&w[T_MODEL], "mean_ms", x->mean_ms);
        sw_real(&w[T_MODEL], "mean_queue_ms", x->mean_queue_ms);
        sw_real(&w[T_MODEL], "p99_queue_ms", x->p99_queue_ms);
        sw_real(&w[T_MODEL], "mean_batch", x->mean_batch);
        sw_int(&w[T_MODEL], "batches", (int64_t)x->batches);
        sw_real(&w[T_MODEL], "ideal_batch_staggered", x->ideal_batch_staggered);
        sw_real(&w[T_MODEL], "ideal_batch_uncoord", x->ideal_batch_uncoord);
        sw_int(&w[T_MODEL], "preempted", (int64_t)x->preempted);
        sw_int(&w[T_MODEL], "pred_n", (int64_t)x->pred_n);
        sw_real(&w[T_MODEL], "pred_mean_err_ms", pred ? x->pred_mean_err_ms : NAN);
        sw_real(&w[T_MODEL], "pred_mean_abs_err_ms", pred ? x->pred_mean_abs_err_ms : NAN);
        sw_real(&w[T_MODEL], "pred_max_over_ms", pred ? x->pred_max_over_ms : NAN);
        sw_real(&w[T_MODEL], "pred_over_frac", pred ? x->pred_over_frac : NAN);
        rc = sw_row(&w[T_MODEL]);
        if (!rc && x->llm && !(rc = write_llm_row(&w[T_LLM], id, x)) &&
            !(rc = write_hist(&w[T_TTFT], id, "model", x->name, x->llm->ttft)))
            rc = write_hist(&w[T_TPOT], id, "model", x->name, x->llm->tpot);
        for (int b = 1; b <= x->max_batch && !rc; b++) {
            if (!x->batch_hist[b])
                continue;
            sw_int(&w[T_BATCH], "run_id", id);
            sw_text(&w[T_BATCH], "model", x->name);
            sw_int(&w[T_BATCH], "batch_size", b);
            sw_int(&w[T_BATCH], "count", (int64_t)x->batch_hist[b]);
            rc = sw_row(&w[T_BATCH]);
        }
        if (!rc && !(rc = write_hist(&w[T_LAT], id, "model", x->name, x->latency)))
            rc = write_hist(&w[T_QUEUE], id, "model", x->name, x->queueing);
    }
    for (int p = 0; p < r->npaths && !rc; p++) {
        const struct sim_path_result *x = &r->paths[p];
        struct sim_store_writer *wp = &w[T_PATH];
        sw_int(wp, "run_id", id);
        sw_text(wp, "path", x->name);
        sw_text(wp, "stages", x->stages);
        sw_real(wp, "sla_ms", x->sla_ms);
        sw_real(wp, "prob", x->prob);
        sw_real(wp, "rate_rps", x->rate_rps);
        sw_int(wp, "offered", (int64_t)x->offered);
        sw_int(wp, "on_time", (int64_t)x->on_time);
        sw_int(wp, "late", (int64_t)x->late);
        sw_int(wp, "dropped", (int64_t)x->dropped);
        sw_real(wp, "p50_ms", x->p50_ms);
        sw_real(wp, "p90_ms", x->p90_ms);
        sw_real(wp, "p99_ms", x->p99_ms);
        sw_real(wp, "p999_ms", x->p999_ms);
        sw_real(wp, "mean_ms", x->mean_ms);
        if (!(rc = sw_row(wp)))
            rc = write_hist(&w[T_PATHH], id, "path", x->name, x->latency);
    }
    return rc;
}

static int write_exec_rows(struct sim_store_writer *w, int64_t id, const struct sim_result *r)
{
    int rc = 0;
    for (int e = 0; e < r->nexecs && !rc; e++) {
        const struct sim_exec_result *x = &r->execs[e];
        sw_int(w, "run_id", id);
        sw_int(w, "executor", x->id);
        sw_text(w, "kind", x->kind);
        sw_real(w, "busy_frac", x->busy_frac);
        sw_int(w, "batches", (int64_t)x->batches);
        sw_int(w, "requests", (int64_t)x->requests);
        sw_int(w, "models_loaded", x->models_loaded);
        sw_int(w, "load_events", (int64_t)x->load_events);
        sw_real(w, "up_s", x->up_s);
        sw_real(w, "wasted_ms", x->wasted_ms);
        sw_real(w, "load_busy_frac", x->load_busy_frac);
        sw_int(w, "evictions", (int64_t)x->evictions);
        sw_int(w, "rejected", (int64_t)x->rejected);
        sw_int(w, "preemptions", (int64_t)x->preemptions);
        sw_int(w, "node", x->node);
        sw_text(w, "class", x->cpu ? "cpu" : "gpu");
        /* a CPU executor's model, cores and core-seconds; NULL for a GPU */
        sw_text(w, "model", x->cpu ? r->models[x->model].name : NULL);
        sw_real(w, "cores", x->cpu ? x->cores : NAN);
        sw_real(w, "core_s", x->cpu ? x->core_s : NAN);
        rc = sw_row(w);
    }
    return rc;
}

static int write_series_rows(struct sim_store_writer *w, int64_t id, const struct sim_store_run *run,
                             const struct sim_result *r)
{
    int rc = 0;
    for (size_t i = 0; i < r->ts.n && !rc; i++) {
        const struct sim_ts_point *p = &r->ts.pts[i];
        const char *sn = r->ts.series[p->series], *key = "";
        char jkey[16];
        if (!strncmp(sn, "path_", 5))   /* path series are keyed by path, node. by node, */
            key = p->key >= 0 && p->key < r->npaths ? r->paths[p->key].name : "";
        else if (!strncmp(sn, "job.", 4) && p->key >= 0)   /* job. by job number (from 1), */
            snprintf(jkey, sizeof jkey, "%d", p->key + 1), key = jkey;
        else if (!strncmp(sn, "node.", 5)) /* the rest by model */
            key = p->key >= 0 && p->key < run->world->nnodes ? run->world->nodes[p->key].name : "";
        else if (p->key >= 0 && p->key < r->nmodels)
            key = r->models[p->key].name;
        sw_int(w, "run_id", id);
        sw_real(w, "t_s", (double)p->t / 1e9);
        sw_text(w, "series", sn);
        sw_text(w, "key", key);
        sw_real(w, "value", p->value);
        rc = sw_row(w);
    }
    return rc;
}

static int write_search_rows(struct sim_store_writer *w, int64_t id, const struct sim_goodput *g)
{
    int rc = 0;
    for (int i = 0; g && i < g->nprobes && !rc; i++) {
        const struct sim_probe *p = &g->probes[i];
        sw_int(w, "run_id", id);
        sw_int(w, "probe", i);
        sw_real(w, "scale", p->scale);
        sw_real(w, "offered_rps", p->offered_rps);
        sw_int(w, "pass", p->pass);
        sw_text(w, "worst_model", p->worst_model);
        sw_real(w, "worst_bad_frac", p->worst_bad_frac);
        sw_real(w, "worst_p99_ms", p->worst_p99_ms);
        sw_real(w, "all_bad_frac", p->all_bad_frac);
        sw_text(w, "rule", sim_search_rule_names[g->rule]);
        rc = sw_row(w);
    }
    return rc;
}

/* A sweep point's row: the run's id and "ok", or (failed) run_id NULL, "failed" and its
 * error. */
static int write_point_row(struct sim_store_writer *w, const struct sim_store_point *pt, int64_t run_id,
                           bool failed, const char *error)
{
    sw_text(w, "sweep", pt->sweep);
    sw_int(w, "point", pt->point);
    sw_text(w, "point_key", pt->key);
    sw_text(w, "settings_json", pt->settings_json);
    if (failed)
        sw_null(w, "run_id");
    else
        sw_int(w, "run_id", run_id);
    sw_text(w, "status", failed ? "failed" : "ok");
    sw_text(w, "error", failed ? error : NULL);
    sw_text(w, "labels_json", pt->labels_json);
    return sw_row(w);
}

int sim_store_write(struct sim_store *st, const struct sim_store_run *run,
                    const struct sim_result *r, int64_t *run_id)
{
    static const char *const tables[T_NWRITERS] = {
        [T_RUN] = "runs", [T_JOB] = "job_stats", [T_JOBW] = "job_workers",
        [T_MODEL] = "model_stats", [T_EXEC] = "executor_stats", [T_TS] = "timeseries",
        [T_BATCH] = "batch_hist", [T_LAT] = "latency_hist", [T_QUEUE] = "queue_hist",
        [T_PATH] = "path_stats", [T_PATHH] = "path_hist", [T_SEARCH] = "goodput_search",
        [T_POINT] = "sweep_points", [T_LLM] = "llm_stats", [T_TTFT] = "ttft_hist",
        [T_TPOT] = "tpot_hist"};
    const struct sim_store_point *pt = run->point;
    struct sim_store_writer w[T_NWRITERS] = {0};
    char started[32];
    sim_utc_now(started);
    int rc = store_exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if (pt) {                           /* a point is stored once, whoever ran it */
        bool before = false;
        if ((rc = point_stored(st, pt, &before)))
            goto rollback;
        if (pt->stored_before)
            *pt->stored_before = before;
        if (before) {
            store_rollback(st);
            goto out;
        }
    }
    for (int t = 0; t < T_NWRITERS && !rc; t++)
        rc = sw_open(st, &w[t], t == T_POINT ? "INSERT OR REPLACE" : "INSERT", tables[t], "");
    if (rc || (rc = write_run_row(&w[T_RUN], run, r, started)))
        goto rollback;
    int64_t id = sqlite3_last_insert_rowid(st->db);
    if ((rc = write_job_rows(&w[T_JOB], &w[T_JOBW], id, r)) || (rc = write_model_rows(w, id, r)) ||
        (rc = write_exec_rows(&w[T_EXEC], id, r)) ||
        (rc = write_series_rows(&w[T_TS], id, run, r)) ||
        (rc = write_search_rows(&w[T_SEARCH], id, run->goodput)) ||
        (pt && (rc = write_point_row(&w[T_POINT], pt, id, false, NULL))) || (rc = store_exec(st, "COMMIT")))
        goto rollback;
    if (run_id)
        *run_id = id;
    goto out;
rollback:
    store_rollback(st);
out:
    for (int t = 0; t < T_NWRITERS; t++)
        sw_close(&w[t]);
    return rc;
}

int sim_store_point_failed(struct sim_store *st, const struct sim_store_point *pt, const char *error)
{
    struct sim_store_writer w;
    /* a failure never replaces a point another process has stored */
    int rc = sw_open(st, &w, "INSERT", "sweep_points",
                    "ON CONFLICT(sweep, point_key) DO UPDATE SET run_id = NULL, "
                    "status = excluded.status, error = excluded.error WHERE status != 'ok'");
    if (!rc)
        rc = write_point_row(&w, pt, 0, true, error);
    sw_close(&w);
    return rc;
}

int sim_store_plan_write(struct sim_store *st, const struct sim_plan *p, const char *hash,
                         double percentile)
{
    struct sim_store_writer wp = {0}, wr = {0};
    sqlite3_stmt *q_del = NULL;
    char created[32];
    sim_utc_now(created);
    int rc = store_exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = store_prep(st, "DELETE FROM plan_probes WHERE plan = ?", &q_del)))
        goto rollback;
    sqlite3_bind_text(q_del, 1, p->id, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q_del) != SQLITE_DONE) {
        rc = store_err(st, "replacing the plan's probes");
        goto rollback;
    }
    if ((rc = sw_open(st, &wp, "INSERT OR REPLACE", "plans", "")) ||
        (rc = sw_open(st, &wr, "INSERT", "plan_probes", "")))
        goto rollback;
    /* static columns are NULL without a passing probe, autoscale ones without autoscaling */
    const struct sim_result *a = p->autoscale_result, *s = p->static_result;
    sw_text(&wp, "plan", p->id);
    sw_text(&wp, "name", p->name);
    sw_text(&wp, "config_hash", hash);
    sw_text(&wp, "created_at", created);
    sw_real(&wp, "slo_percentile", percentile);
    sw_int(&wp, "lower_bound", p->lower_bound);
    if (s) {
        sw_int(&wp, "static_gpus", p->static_gpus);
        sw_int(&wp, "static_run_id", p->static_run_id);
        sw_real(&wp, "static_gpu_s", s->gpu_s);
    } else {
        sw_null(&wp, "static_gpus");
        sw_null(&wp, "static_run_id");
        sw_null(&wp, "static_gpu_s");
    }
    sw_text(&wp, "stopping_rule", "doubling+bisection");
    sw_int(&wp, "monotone", p->monotone);
    sw_text(&wp, "autoscaler", a ? p->autoscaler : NULL);
    if (a) {
        sw_int(&wp, "autoscale_run_id", p->autoscale_run_id);
        sw_int(&wp, "autoscale_slo_met", sim_rule_pass(p->rule, a));
    } else {
        sw_null(&wp, "autoscale_run_id");
        sw_null(&wp, "autoscale_slo_met");
    }
    sw_real(&wp, "autoscale_gpu_s", a ? a->gpu_s : NAN);
    sw_real(&wp, "autoscale_bad_rate", a ? a->bad_rate : NAN);
    sw_real(&wp, "saving_frac", a && s && s->gpu_s > 0 ? 1 - a->gpu_s / s->gpu_s : NAN);
    sw_text(&wp, "rule", sim_search_rule_names[p->rule]);
    if ((rc = sw_row(&wp)))
        goto rollback;
    for (int i = 0; i < p->nprobes && !rc; i++) {
        const struct sim_plan_probe *pr = &p->probes[i];
        sw_text(&wr, "plan", p->id);
        sw_int(&wr, "probe", i);
        sw_int(&wr, "gpus", pr->gpus);
        sw_int(&wr, "run_id", pr->run_id);
        sw_int(&wr, "pass", pr->pass);
        sw_text(&wr, "worst_model", pr->worst_model);
        sw_real(&wr, "worst_bad_frac", pr->worst_bad_frac);
        sw_real(&wr, "all_bad_frac", pr->all_bad_frac);
        rc = sw_row(&wr);
    }
    if (rc || (rc = store_exec(st, "COMMIT")))
        goto rollback;
    goto out;
rollback:
    store_rollback(st);
out:
    sqlite3_finalize(q_del);
    sw_close(&wp);
    sw_close(&wr);
    return rc;
}

int sim_store_profiles_write(struct sim_store *st, const struct sim_store_profile *p, int n,
                             const struct sim_store_profile_point *const *pts, const int *npts)
{
    struct sim_store_writer wp = {0}, wt = {0};
    char when[32];
    sim_utc_now(when);
    int rc = store_exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = sw_open(st, &wp, "INSERT", "profiles", "")) ||
        (rc = sw_open(st, &wt, "INSERT", "profile_points", "")))
        goto fail;
    for (int i = 0; i < n && !rc; i++) {
        const struct sim_store_profile *r = &p[i];
        sw_text(&wp, "executor_kind", r->executor_kind);
        sw_text(&wp, "model", r->model);
        sw_text(&wp, "form", r->form);
        sw_real(&wp, "alpha_ms", r->alpha_ms);
        sw_real(&wp, "beta_ms", r->beta_ms);
        sw_real(&wp, "a_ms", r->a_ms);
        sw_real(&wp, "b_ms", r->b_ms);
        sw_real(&wp, "c_ms", r->c_ms);
        sw_text(&wp, "table_json", r->table_json);
        sw_text(&wp, "source", r->source ? r->source : "servesim-calibrate");
        sw_text(&wp, "measured_at", when);
        sw_text(&wp, "network", r->network);
        sw_text(&wp, "backend", r->backend);
        sw_text(&wp, "device", r->device);
        sw_text(&wp, "versions", r->versions);
        sw_text(&wp, "host", r->host);
        sw_text(&wp, "precision", r->precision);
        sw_int(&wp, "threads", r->threads);
        sw_real(&wp, "r2", r->r2);
        sw_real(&wp, "max_rel_err", r->max_rel_err);
        sw_text(&wp, "fits_json", r->fits_json);
        sw_text(&wp, "recommendation", r->recommendation);
        sw_real(&wp, "weights_mb", r->weights_mb);
        sw_real(&wp, "activations_mb", r->activations_mb);
        sw_real(&wp, "workspace_mb", r->workspace_mb);
        sw_real(&wp, "load_ms", r->load_ms);
        sw_text(&wp, "exec", r->exec);
        if ((rc = sw_row(&wp)))
            break;
        int64_t id = sqlite3_last_insert_rowid(st->db);
        for (int j = 0; j < (npts ? npts[i] : 0) && !rc; j++) {
            const struct sim_store_profile_point *t = &pts[i][j];
            sw_int(&wt, "profile_id", id);
            sw_int(&wt, "batch", t->batch);
            sw_int(&wt, "reps", t->reps);
            sw_real(&wt, "median_ms", t->median_ms);
            sw_real(&wt, "p99_ms", t->p99_ms);
            sw_real(&wt, "mean_ms", t->mean_ms);
            sw_real(&wt, "sd_ms", t->sd_ms);
            sw_real(&wt, "min_ms", t->min_ms);
            sw_real(&wt, "max_ms", t->max_ms);
            sw_real(&wt, "activations_mb", t->activations_mb);
            rc = sw_row(&wt);
        }
    }
    if (!rc)
        rc = store_exec(st, "COMMIT");
fail:
    if (rc)
        store_rollback(st);
    sw_close(&wp);
    sw_close(&wt);
    return rc;
}
