/* sim_store — schema creation, versioning and transactional writes of results. */
#include "sim_store.h"
#include "sim_results.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "sim_err.h"
#include "sim_out.h"
#include "sim_wall.h"

struct sim_store {
    sqlite3 *db;
    char *path;
};

/* The wait sqlite3_busy_handler calls: the sleeps are 5 ms for the first 20 calls, 50 ms
 * after, so the n-th call has waited at least busy_ms(n); said once the wait passes 2 s. */
static long busy_ms(int n)
{
    return n < 20 ? 5L * n : 100 + 50L * (n - 20);
}

int sim_store_busy(void *path, int n)
{
    if (busy_ms(n) > SIM_STORE_BUSY_MS)
        return 0;
    if (busy_ms(n) >= 2000 && busy_ms(n - 1) < 2000)
        fprintf(stderr, "servesim: %s is locked by another process (a sweep writing, a reader "
                "inside a transaction): waiting for it, at most %d s\n", (const char *)path,
                SIM_STORE_BUSY_MS / 1000);
    sqlite3_sleep(n < 20 ? 5 : 50);
    return 1;
}

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS runs(\n"
    "  id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, policy TEXT NOT NULL,\n"
    "  seed INTEGER NOT NULL, config_json TEXT NOT NULL, config_hash TEXT NOT NULL,\n"
    "  version TEXT NOT NULL, started_at TEXT NOT NULL, wall_s REAL NOT NULL,\n"
    "  status TEXT NOT NULL, duration_s REAL NOT NULL, warmup_s REAL NOT NULL,\n"
    "  load_scale REAL NOT NULL, offered_rps REAL NOT NULL, ontime_rps REAL NOT NULL,\n"
    "  bad_rate REAL NOT NULL, slo_met INTEGER NOT NULL, percentile REAL NOT NULL,\n"
    "  goodput_rps REAL, events INTEGER NOT NULL, gpu_s REAL, gpus_max INTEGER,\n"
    "  trace_gaps INTEGER NOT NULL DEFAULT 0, trace_gap_s REAL NOT NULL DEFAULT 0,\n"
    "  core_s REAL, makespan_s REAL, notebook_slowdown REAL, warmup_config_s REAL);\n"
    "CREATE TABLE IF NOT EXISTS model_stats(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL, slo_ms REAL NOT NULL,\n"
    "  rate_rps REAL NOT NULL, max_batch INTEGER NOT NULL, offered INTEGER NOT NULL,\n"
    "  on_time INTEGER NOT NULL, late INTEGER NOT NULL, dropped INTEGER NOT NULL,\n"
    "  p50_ms REAL, p90_ms REAL, p99_ms REAL, p999_ms REAL, mean_ms REAL,\n"
    "  mean_queue_ms REAL, p99_queue_ms REAL, mean_batch REAL, batches INTEGER NOT NULL,\n"
    "  ideal_batch_staggered REAL, ideal_batch_uncoord REAL,\n"
    "  preempted INTEGER NOT NULL DEFAULT 0, pred_n INTEGER NOT NULL DEFAULT 0,\n"
    "  pred_mean_err_ms REAL, pred_mean_abs_err_ms REAL, pred_max_over_ms REAL,\n"
    "  pred_over_frac REAL,\n"
    "  PRIMARY KEY(run_id, model));\n"
    "CREATE TABLE IF NOT EXISTS executor_stats(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), executor INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL, busy_frac REAL NOT NULL, batches INTEGER NOT NULL,\n"
    "  requests INTEGER NOT NULL, models_loaded INTEGER NOT NULL, load_events INTEGER NOT NULL,\n"
    "  up_s REAL, wasted_ms REAL, load_busy_frac REAL, evictions INTEGER NOT NULL DEFAULT 0,\n"
    "  rejected INTEGER NOT NULL DEFAULT 0, preemptions INTEGER NOT NULL DEFAULT 0,\n"
    "  node INTEGER NOT NULL DEFAULT 0, class TEXT NOT NULL DEFAULT 'gpu', model TEXT,\n"
    "  cores REAL, core_s REAL,\n"
    "  PRIMARY KEY(run_id, executor));\n"
    "CREATE TABLE IF NOT EXISTS timeseries(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), t_s REAL NOT NULL, series TEXT NOT NULL,\n"
    "  key TEXT NOT NULL, value REAL NOT NULL);\n"
    "CREATE INDEX IF NOT EXISTS timeseries_run ON timeseries(run_id, series);\n"
    "CREATE TABLE IF NOT EXISTS batch_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  batch_size INTEGER NOT NULL, count INTEGER NOT NULL,\n"
    "  PRIMARY KEY(run_id, model, batch_size));\n"
    "CREATE TABLE IF NOT EXISTS latency_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS queue_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS path_stats(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), path TEXT NOT NULL, stages TEXT NOT NULL,\n"
    "  sla_ms REAL NOT NULL, prob REAL NOT NULL, rate_rps REAL NOT NULL,\n"
    "  offered INTEGER NOT NULL, on_time INTEGER NOT NULL, late INTEGER NOT NULL,\n"
    "  dropped INTEGER NOT NULL, p50_ms REAL, p90_ms REAL, p99_ms REAL, p999_ms REAL,\n"
    "  mean_ms REAL, PRIMARY KEY(run_id, path));\n"
    "CREATE TABLE IF NOT EXISTS path_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), path TEXT NOT NULL,\n"
    "  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS goodput_search(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), probe INTEGER NOT NULL,\n"
    "  scale REAL NOT NULL, offered_rps REAL NOT NULL, pass INTEGER NOT NULL,\n"
    "  worst_model TEXT NOT NULL, worst_bad_frac REAL NOT NULL, worst_p99_ms REAL,\n"
    "  all_bad_frac REAL, rule TEXT, PRIMARY KEY(run_id, probe));\n"
    "CREATE TABLE IF NOT EXISTS job_stats(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), job INTEGER NOT NULL, kind TEXT NOT NULL,\n"
    "  arrival_s REAL NOT NULL, start_s REAL, end_s REAL, wait_s REAL, train_s REAL,\n"
    "  exec_s REAL, reconfigs INTEGER NOT NULL, evictions INTEGER NOT NULL,\n"
    "  cross_node_s REAL NOT NULL, PRIMARY KEY(run_id, job));\n"
    "CREATE TABLE IF NOT EXISTS job_workers(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), job INTEGER NOT NULL,\n"
    "  workers INTEGER NOT NULL, seconds REAL NOT NULL, PRIMARY KEY(run_id, job, workers));\n"
    "CREATE TABLE IF NOT EXISTS sweep_points(\n"
    "  sweep TEXT NOT NULL, point INTEGER NOT NULL, point_key TEXT NOT NULL,\n"
    "  settings_json TEXT NOT NULL, run_id INTEGER REFERENCES runs(id), status TEXT NOT NULL,\n"
    "  error TEXT, PRIMARY KEY(sweep, point_key));\n"
    "CREATE TABLE IF NOT EXISTS sweep_claims(\n"
    "  sweep TEXT NOT NULL, point_key TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,\n"
    "  claimed_at REAL NOT NULL, PRIMARY KEY(sweep, point_key));\n"
    "CREATE TABLE IF NOT EXISTS profiles(\n"
    "  id INTEGER PRIMARY KEY, executor_kind TEXT NOT NULL, model TEXT NOT NULL,\n"
    "  form TEXT NOT NULL, alpha_ms REAL, beta_ms REAL, a_ms REAL, b_ms REAL, c_ms REAL,\n"
    "  table_json TEXT, source TEXT NOT NULL, measured_at TEXT NOT NULL,\n"
    "  network TEXT, backend TEXT, device TEXT, versions TEXT, host TEXT, precision TEXT,\n"
    "  threads INTEGER, r2 REAL, max_rel_err REAL, fits_json TEXT, recommendation TEXT,\n"
    "  weights_mb REAL, activations_mb REAL, workspace_mb REAL, load_ms REAL, exec TEXT);\n"
    "CREATE TABLE IF NOT EXISTS profile_points(\n"
    "  profile_id INTEGER NOT NULL REFERENCES profiles(id), batch INTEGER NOT NULL,\n"
    "  reps INTEGER NOT NULL, median_ms REAL NOT NULL, p99_ms REAL NOT NULL,\n"
    "  mean_ms REAL NOT NULL, sd_ms REAL NOT NULL, min_ms REAL NOT NULL, max_ms REAL NOT NULL,\n"
    "  activations_mb REAL, PRIMARY KEY(profile_id, batch));\n"
    "CREATE TABLE IF NOT EXISTS plans(\n"
    "  plan TEXT PRIMARY KEY, name TEXT NOT NULL, config_hash TEXT NOT NULL,\n"
    "  created_at TEXT NOT NULL, slo_percentile REAL NOT NULL, lower_bound INTEGER NOT NULL,\n"
    "  static_gpus INTEGER, static_run_id INTEGER REFERENCES runs(id), static_gpu_s REAL,\n"
    "  stopping_rule TEXT NOT NULL, monotone INTEGER NOT NULL, autoscaler TEXT,\n"
    "  autoscale_run_id INTEGER REFERENCES runs(id), autoscale_gpu_s REAL,\n"
    "  autoscale_slo_met INTEGER, autoscale_bad_rate REAL, saving_frac REAL, rule TEXT);\n"
    "CREATE TABLE IF NOT EXISTS plan_probes(\n"
    "  plan TEXT NOT NULL REFERENCES plans(plan), probe INTEGER NOT NULL,\n"
    "  gpus INTEGER NOT NULL, run_id INTEGER NOT NULL REFERENCES runs(id),\n"
    "  pass INTEGER NOT NULL, worst_model TEXT NOT NULL, worst_bad_frac REAL NOT NULL,\n"
    "  all_bad_frac REAL, PRIMARY KEY(plan, probe));\n";

/* Version 1 -> 2: prediction and preemption columns, executor life and actions, sweeps. */
static const char migrate_v1_sql[] =
    "ALTER TABLE model_stats ADD COLUMN preempted INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE model_stats ADD COLUMN pred_n INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE model_stats ADD COLUMN pred_mean_err_ms REAL;\n"
    "ALTER TABLE model_stats ADD COLUMN pred_mean_abs_err_ms REAL;\n"
    "ALTER TABLE model_stats ADD COLUMN pred_max_over_ms REAL;\n"
    "ALTER TABLE model_stats ADD COLUMN pred_over_frac REAL;\n"
    "ALTER TABLE executor_stats ADD COLUMN up_s REAL;\n"
    "ALTER TABLE executor_stats ADD COLUMN wasted_ms REAL;\n"
    "ALTER TABLE executor_stats ADD COLUMN load_busy_frac REAL;\n"
    "ALTER TABLE executor_stats ADD COLUMN evictions INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE executor_stats ADD COLUMN rejected INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE executor_stats ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;\n";

/* Version 2 -> 3: cost and trace gaps per run (plans and plan_probes are new tables). */
static const char migrate_v2_sql[] =
    "ALTER TABLE runs ADD COLUMN gpu_s REAL;\n"
    "ALTER TABLE runs ADD COLUMN gpus_max INTEGER;\n"
    "ALTER TABLE runs ADD COLUMN trace_gaps INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE runs ADD COLUMN trace_gap_s REAL NOT NULL DEFAULT 0;\n";

/* Version 6 -> 7: nodes and CPU executors (issue 19): where an executor is, its class, the
 * model a CPU executor serves, its cores and core-seconds; core-seconds per run. */
static const char migrate_v6_sql[] =
    "ALTER TABLE executor_stats ADD COLUMN node INTEGER NOT NULL DEFAULT 0;\n"
    "ALTER TABLE executor_stats ADD COLUMN class TEXT NOT NULL DEFAULT 'gpu';\n"
    "ALTER TABLE executor_stats ADD COLUMN model TEXT;\n"
    "ALTER TABLE executor_stats ADD COLUMN cores REAL;\n"
    "ALTER TABLE executor_stats ADD COLUMN core_s REAL;\n"
    "ALTER TABLE runs ADD COLUMN core_s REAL;\n";

/* Version 7 -> 8: training jobs and notebooks (issue 21): the makespan and the notebooks'
 * mean burst slowdown per run (job_stats and job_workers are new tables). */
static const char migrate_v7_sql[] = "ALTER TABLE runs ADD COLUMN makespan_s REAL;\n"
                                     "ALTER TABLE runs ADD COLUMN notebook_slowdown REAL;\n";

/* Version 8 -> 9: the config's warm-up where it was extended to the policy's convergence
 * time (runs.warmup_s is the one used; NULL: the config's was used). */
static const char migrate_v8_sql[] = "ALTER TABLE runs ADD COLUMN warmup_config_s REAL;\n";

/* Version 9 -> 10: how a GPU profile's passes were issued and fused (profiles.exec: "graph,
 * fused, nhwc", "eager, unfused, nchw"; NULL for CPU profiles and older rows), and the rule
 * of goodput searches and plans (search.rule: "worst" or "aggregate", with all requests' bad
 * fraction beside the worst model's; NULL in older rows, which used "worst"). */
static const char migrate_v9_sql[] =
    "ALTER TABLE profiles ADD COLUMN exec TEXT;\n"
    "ALTER TABLE goodput_search ADD COLUMN all_bad_frac REAL;\n"
    "ALTER TABLE goodput_search ADD COLUMN rule TEXT;\n"
    /* before version 10 every probe was written with worst_model and worst_bad_frac swapped
     * (the binder's type string named them in the other order): the name sits in the REAL
     * column as text, the fraction in the TEXT column as its decimal text */
    "UPDATE goodput_search SET worst_model = worst_bad_frac, "
    "worst_bad_frac = CAST(worst_model AS REAL) WHERE typeof(worst_bad_frac) = 'text';\n";
/* (plans and plan_probes exist from version 3; older databases get them whole) */
static const char migrate_v9_plans_sql[] = "ALTER TABLE plans ADD COLUMN rule TEXT;\n"
                                           "ALTER TABLE plan_probes ADD COLUMN all_bad_frac REAL;\n";

/* Version 3 -> 4: calibration provenance and fits on profiles (profile_points is new). */
static const char migrate_v3_sql[] =
    "ALTER TABLE profiles ADD COLUMN network TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN backend TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN device TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN versions TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN host TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN precision TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN threads INTEGER;\n"
    "ALTER TABLE profiles ADD COLUMN r2 REAL;\n"
    "ALTER TABLE profiles ADD COLUMN max_rel_err REAL;\n"
    "ALTER TABLE profiles ADD COLUMN fits_json TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN recommendation TEXT;\n"
    "ALTER TABLE profiles ADD COLUMN weights_mb REAL;\n"
    "ALTER TABLE profiles ADD COLUMN activations_mb REAL;\n"
    "ALTER TABLE profiles ADD COLUMN workspace_mb REAL;\n"
    "ALTER TABLE profiles ADD COLUMN load_ms REAL;\n";

const char *sim_store_schema_sql(void)
{
    return schema_sql;
}

/* A lock that outlasted the wait, said as such (not SQLite's bare "database is locked"). */
static int locked(struct sim_store *st)
{
    int e = sqlite3_errcode(st->db);
    if (e != SQLITE_BUSY && e != SQLITE_LOCKED)
        return 0;
    return sim_err_set(SIM_EDB, "%s: locked by another process for more than %d s: nothing "
                       "was written (run it again once that process has finished)", st->path,
                       SIM_STORE_BUSY_MS / 1000);
}

static int db_err(struct sim_store *st, const char *what)
{
    int rc = locked(st);
    return rc ? rc : sim_err_set(SIM_EDB, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

static int exec(struct sim_store *st, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int lrc = locked(st);
        if (lrc) {
            sqlite3_free(msg);
            return lrc;
        }
        int rc = sim_err_set(SIM_EDB, "%s: %s", st->path, msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

/* Undoes the open transaction, keeping the error that made it necessary (a failing ROLLBACK,
 * e.g. when none began, must not replace the message). */
static void rollback(struct sim_store *st)
{
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static int user_version(struct sim_store *st, int *v)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
        return db_err(st, "reading the schema version");
    *v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
    sqlite3_finalize(q);
    return 0;
}

/* Has the database no tables at all (a new file)? */
static bool empty_db(struct sim_store *st)
{
    sqlite3_stmt *q;
    bool empty = true;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master LIMIT 1", -1, &q, NULL) == SQLITE_OK) {
        empty = sqlite3_step(q) != SQLITE_ROW;
        sqlite3_finalize(q);
    }
    return empty;
}

int sim_store_open(const char *path, struct sim_store **out)
{
    int rc, v = 0;
    struct sim_store *st = calloc(1, sizeof *st);
    *out = NULL;
    if (!st || !(st->path = strdup(path))) {
        free(st);
        return SIM_ENOMEM;
    }
    /* what would refuse the write, said before any work: a folder, a folder that cannot
     * take the journal beside the file, a read-only file or filesystem */
    if (strcmp(path, ":memory:") != 0 &&
        ((rc = sim_results_check_file(path)) || (rc = sim_out_check(path)) ||
         (rc = sim_out_space(path, SIM_STORE_SPACE_MIN, "a run's rows and their journal"))))
        goto fail;
    if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = db_err(st, "cannot open");
        goto fail;
    }
    if (sqlite3_db_readonly(st->db, "main") == 1) {
        rc = sim_err_set(SIM_EINVAL, "%s: cannot write: the database is read-only (its file's "
                         "permissions, or a read-only filesystem)", path);
        goto fail;
    }
    sqlite3_busy_handler(st->db, sim_store_busy, st->path);
    /* a file that is not SQLite (or not ours) is the user's input, not a database fault */
    int src = sqlite3_exec(st->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    if (src == SQLITE_NOTADB || src == SQLITE_CORRUPT) {
        rc = sim_err_set(SIM_EINVAL, "%s: not a servesim results database (SQLite: %s)", path,
                         sqlite3_errmsg(st->db));
        goto fail;
    }
    if ((rc = user_version(st, &v)))
        goto fail;
    if (v == 0 && !empty_db(st)) {
        rc = sim_err_set(SIM_EINVAL, "%s: not a servesim results database (an SQLite database "
                         "without servesim's schema version)", path);
        goto fail;
    }
    if ((rc = sim_results_check_tables(path, st->db, v)))
        goto fail;
    if (v > SIM_STORE_SCHEMA) {
        rc = sim_err_set(SIM_EINVAL, "%s: expected a servesim results database of schema 1..%d, "
                         "found schema version %d (written by a newer servesim)", path,
                         SIM_STORE_SCHEMA, v);
        goto fail;
    }
    if (v < SIM_STORE_SCHEMA) {
        char ver[96];
        snprintf(ver, sizeof ver,
                 "PRAGMA user_version = %d; INSERT OR REPLACE INTO meta VALUES('schema_version', '%d');",
                 SIM_STORE_SCHEMA, SIM_STORE_SCHEMA);
        if ((rc = exec(st, "BEGIN IMMEDIATE")) || (v == 1 && (rc = exec(st, migrate_v1_sql))) ||
            (v >= 1 && v <= 2 && (rc = exec(st, migrate_v2_sql))) ||
            (v >= 1 && v <= 3 && (rc = exec(st, migrate_v3_sql))) ||
            (v >= 1 && v <= 6 && (rc = exec(st, migrate_v6_sql))) ||
            (v >= 1 && v <= 7 && (rc = exec(st, migrate_v7_sql))) ||
            (v >= 1 && v <= 8 && (rc = exec(st, migrate_v8_sql))) ||
            (v >= 1 && v <= 9 && (rc = exec(st, migrate_v9_sql))) ||
            (v >= 3 && v <= 9 && (rc = exec(st, migrate_v9_plans_sql))) ||
            (rc = exec(st, schema_sql)) ||
            (rc = exec(st, ver)) || (rc = exec(st, "COMMIT"))) {
            rollback(st);
            goto fail;
        }
    }
    *out = st;
    return 0;
fail:
    sim_store_close(st);
    return rc;
}

void sim_store_close(struct sim_store *st)
{
    if (!st)
        return;
    sqlite3_close(st->db);
    free(st->path);
    free(st);
}

/* A tiny binder: each column is given as a type letter in `types`:
 * i = int64, d = double, t = text, n = NULL (consumes a double argument). */
static int insert(struct sim_store *st, sqlite3_stmt *q, const char *types, ...)
{
    va_list ap;
    va_start(ap, types);
    sqlite3_reset(q);
    for (int i = 0; types[i]; i++) {
        int col = i + 1, r = SQLITE_OK;
        switch (types[i]) {
        case 'i': r = sqlite3_bind_int64(q, col, va_arg(ap, int64_t)); break;
        case 'd': r = sqlite3_bind_double(q, col, va_arg(ap, double)); break;
        case 't': r = sqlite3_bind_text(q, col, va_arg(ap, const char *), -1, SQLITE_TRANSIENT); break;
        case 'n': (void)va_arg(ap, double); r = sqlite3_bind_null(q, col); break;
        }
        if (r != SQLITE_OK) {
            va_end(ap);
            return db_err(st, "binding a value");
        }
    }
    va_end(ap);
    if (sqlite3_step(q) != SQLITE_DONE)
        return db_err(st, "inserting a row");
    return 0;
}

static int prep(struct sim_store *st, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, q, NULL) != SQLITE_OK)
        return db_err(st, "preparing a statement");
    return 0;
}

/* The non-empty buckets of one histogram as (run, model, lo_ms, hi_ms, count) rows. */
static int write_hist(struct sim_store *st, sqlite3_stmt *q, int64_t id, const char *model,
                      const struct sim_hist *h)
{
    for (int k = 0; k < SIM_HIST_BUCKETS; k++) {
        if (!h->counts[k])
            continue;
        int64_t lo, hi;
        sim_hist_bucket_range(k, &lo, &hi);
        int rc = insert(st, q, "itddi", id, model, sim_ns_to_ms(lo), sim_ns_to_ms(hi),
                        (int64_t)h->counts[k]);
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
    int rc = prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ? AND point_key = ? "
                      "AND status = 'ok'", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, pt->sweep, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, pt->key, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(q);
    *done = step == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
    if (step != SQLITE_ROW)
        rc = db_err(st, "reading sweep_points");
    sqlite3_finalize(q);
    return rc;
}

int sim_store_write(struct sim_store *st, const struct sim_store_run *run,
                    const struct sim_result *r, int64_t *run_id)
{
    const char *kind = run->kind, *json = run->config_json, *hash = run->config_hash;
    const struct sim_goodput *g = run->goodput;
    const struct sim_store_point *pt = run->point;
    int rc;
    sqlite3_stmt *q_run = NULL, *q_ms = NULL, *q_es = NULL, *q_ts = NULL, *q_bh = NULL,
                 *q_lh = NULL, *q_qh = NULL, *q_gs = NULL, *q_sp = NULL, *q_ps = NULL,
                 *q_ph = NULL, *q_js = NULL, *q_jw = NULL;
    char started[32], seed_text[24];
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)r->seed);
    sim_utc_now(started);
    if ((rc = exec(st, "BEGIN IMMEDIATE")))
        goto out;
    if (pt) {                           /* a point is stored once, whoever ran it */
        bool before = false;
        if ((rc = point_stored(st, pt, &before)))
            goto rollback;
        if (pt->stored_before)
            *pt->stored_before = before;
        if (before) {
            rollback(st);
            goto out;
        }
    }
    if ((rc = prep(st, "INSERT INTO runs(name, kind, policy, seed, config_json, config_hash, "
                       "version, started_at, wall_s, status, duration_s, warmup_s, load_scale, "
                       "offered_rps, ontime_rps, bad_rate, slo_met, percentile, goodput_rps, events, "
                       "gpu_s, gpus_max, trace_gaps, trace_gap_s, core_s, makespan_s, "
                       "notebook_slowdown, warmup_config_s) "
                       "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &q_run)) ||
        (rc = prep(st, "INSERT INTO job_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", &q_js)) ||
        (rc = prep(st, "INSERT INTO job_workers VALUES(?,?,?,?)", &q_jw)) ||
        (rc = prep(st, "INSERT INTO model_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &q_ms)) ||
        (rc = prep(st, "INSERT INTO executor_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &q_es)) ||
        (rc = prep(st, "INSERT INTO timeseries VALUES(?,?,?,?,?)", &q_ts)) ||
        (rc = prep(st, "INSERT INTO batch_hist VALUES(?,?,?,?)", &q_bh)) ||
        (rc = prep(st, "INSERT INTO latency_hist VALUES(?,?,?,?,?)", &q_lh)) ||
        (rc = prep(st, "INSERT INTO queue_hist VALUES(?,?,?,?,?)", &q_qh)) ||
        (rc = prep(st, "INSERT INTO path_stats VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &q_ps)) ||
        (rc = prep(st, "INSERT INTO path_hist VALUES(?,?,?,?,?)", &q_ph)) ||
        (rc = prep(st, "INSERT INTO goodput_search VALUES(?,?,?,?,?,?,?,?,?,?)", &q_gs)) ||
        (rc = prep(st, "INSERT OR REPLACE INTO sweep_points VALUES(?,?,?,?,?,?,?)", &q_sp)))
        goto rollback;
    if ((rc = insert(st, q_run, g ? "ttttttttdtddddddiddidiiddddd" : "ttttttttdtddddddidnidiiddddd",
                     r->name, kind, r->policy, seed_text, json, hash, SERVESIM_VERSION,
                     started, r->wall_s, g ? sim_search_status_names[g->status] : "ok", r->duration_s, r->warmup_s, r->load_scale,
                     r->offered_rps, r->ontime_rps, r->bad_rate, (int64_t)r->pass,
                     r->percentile, g && g->status == SIM_SEARCH_CONVERGED ? g->goodput_rps : 0.0, (int64_t)r->events,
                     r->gpu_s, (int64_t)r->gpus_max, (int64_t)r->trace_gaps, r->trace_gap_s,
                     r->core_s, r->makespan_s, r->nnotebooks ? r->nb_slowdown : NAN,
                     r->warmup_extended ? r->warmup_config_s : NAN)))
        goto rollback;
    int64_t id = sqlite3_last_insert_rowid(st->db);
    for (int j = 0; j < r->njobs; j++) {  /* NAN (never started or done) is stored as NULL */
        const struct sim_job_result *x = &r->jobs[j];
        if ((rc = insert(st, q_js, "iitddddddiid", id, (int64_t)j + 1, x->kind, x->arrival_s,
                         x->start_s, x->end_s, x->wait_s, x->train_s, x->exec_s,
                         (int64_t)x->reconfigs, (int64_t)x->evictions, x->cross_node_s)))
            goto rollback;
        for (int n = 0; n < SIM_JOB_MAX_WORKERS; n++)
            if (x->workers_s[n] > 0 &&
                (rc = insert(st, q_jw, "iiid", id, (int64_t)j + 1, (int64_t)n + 1, x->workers_s[n])))
                goto rollback;
    }
    for (int m = 0; m < r->nmodels; m++) {
        const struct sim_model_result *x = &r->models[m];
        if ((rc = insert(st, q_ms, x->pred_n ? "itddiiiiiddddddddiddiidddd" : "itddiiiiiddddddddiddiinnnn",
                         id, x->name, x->slo_ms, x->rate_rps,
                         (int64_t)x->max_batch, (int64_t)x->offered, (int64_t)x->on_time,
                         (int64_t)x->late, (int64_t)x->dropped, x->p50_ms, x->p90_ms, x->p99_ms,
                         x->p999_ms, x->mean_ms, x->mean_queue_ms, x->p99_queue_ms,
                         x->mean_batch, (int64_t)x->batches, x->ideal_batch_staggered,
                         x->ideal_batch_uncoord, (int64_t)x->preempted, (int64_t)x->pred_n,
                         x->pred_mean_err_ms, x->pred_mean_abs_err_ms, x->pred_max_over_ms,
                         x->pred_over_frac)))
            goto rollback;
        for (int b = 1; b <= x->max_batch; b++)
            if (x->batch_hist[b] &&
                (rc = insert(st, q_bh, "itii", id, x->name, (int64_t)b, (int64_t)x->batch_hist[b])))
                goto rollback;
        if ((rc = write_hist(st, q_lh, id, x->name, x->latency)) ||
            (rc = write_hist(st, q_qh, id, x->name, x->queueing)))
            goto rollback;
    }
    for (int p = 0; p < r->npaths; p++) {
        const struct sim_path_result *x = &r->paths[p];
        if ((rc = insert(st, q_ps, "ittdddiiiiddddd", id, x->name, x->stages, x->sla_ms, x->prob,
                         x->rate_rps, (int64_t)x->offered, (int64_t)x->on_time,
                         (int64_t)x->late, (int64_t)x->dropped, x->p50_ms, x->p90_ms,
                         x->p99_ms, x->p999_ms, x->mean_ms)) ||
            (rc = write_hist(st, q_ph, id, x->name, x->latency)))
            goto rollback;
    }
    for (int e = 0; e < r->nexecs; e++) {
        const struct sim_exec_result *x = &r->execs[e];
        if ((rc = x->cpu
                      ? insert(st, q_es, "iitdiiiidddiiiittdd", id, (int64_t)x->id, x->kind,
                               x->busy_frac, (int64_t)x->batches, (int64_t)x->requests,
                               (int64_t)x->models_loaded, (int64_t)x->load_events, x->up_s,
                               x->wasted_ms, x->load_busy_frac, (int64_t)x->evictions,
                               (int64_t)x->rejected, (int64_t)x->preemptions, (int64_t)x->node,
                               "cpu", r->models[x->model].name, x->cores, x->core_s)
                      : insert(st, q_es, "iitdiiiidddiiiitnnn", id, (int64_t)x->id, x->kind,
                               x->busy_frac, (int64_t)x->batches, (int64_t)x->requests,
                               (int64_t)x->models_loaded, (int64_t)x->load_events, x->up_s,
                               x->wasted_ms, x->load_busy_frac, (int64_t)x->evictions,
                               (int64_t)x->rejected, (int64_t)x->preemptions, (int64_t)x->node,
                               "gpu", 0.0, 0.0, 0.0)))
            goto rollback;
    }
    for (size_t i = 0; i < r->ts.n; i++) {
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
        if ((rc = insert(st, q_ts, "idttd", id, (double)p->t / 1e9, sn, key,
                         p->value)))
            goto rollback;
    }
    if (g)
        for (int i = 0; i < g->nprobes; i++) {
            const struct sim_probe *p = &g->probes[i];
            if ((rc = insert(st, q_gs, "iidditdddt", id, (int64_t)i, p->scale, p->offered_rps,
                             (int64_t)p->pass, p->worst_model, p->worst_bad_frac, p->worst_p99_ms,
                             p->all_bad_frac, sim_search_rule_names[g->rule])))
                goto rollback;
        }
    if (pt && (rc = insert(st, q_sp, "tittitn", pt->sweep, (int64_t)pt->point, pt->key,
                           pt->settings_json, id, "ok", 0.0)))
        goto rollback;
    if ((rc = exec(st, "COMMIT")))
        goto rollback;
    if (run_id)
        *run_id = id;
    goto out;
rollback:
    rollback(st);
out:
    sqlite3_finalize(q_run);
    sqlite3_finalize(q_js);
    sqlite3_finalize(q_jw);
    sqlite3_finalize(q_ms);
    sqlite3_finalize(q_es);
    sqlite3_finalize(q_ts);
    sqlite3_finalize(q_bh);
    sqlite3_finalize(q_lh);
    sqlite3_finalize(q_qh);
    sqlite3_finalize(q_gs);
    sqlite3_finalize(q_sp);
    sqlite3_finalize(q_ps);
    sqlite3_finalize(q_ph);
    return rc;
}

int sim_store_point_failed(struct sim_store *st, const struct sim_store_point *pt, const char *error)
{
    sqlite3_stmt *q = NULL;
    /* a failure never replaces a point another process has stored */
    int rc = prep(st, "INSERT INTO sweep_points VALUES(?,?,?,?,NULL,?,?) ON CONFLICT(sweep, "
                      "point_key) DO UPDATE SET run_id = NULL, status = excluded.status, "
                      "error = excluded.error WHERE status != 'ok'", &q);
    if (!rc)
        rc = insert(st, q, "titttt", pt->sweep, (int64_t)pt->point, pt->key, pt->settings_json,
                    "failed", error);
    sqlite3_finalize(q);
    return rc;
}

int sim_store_point_done(struct sim_store *st, const char *sweep, const char *key, bool *done)
{
    sqlite3_stmt *q = NULL;
    int rc = prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ? AND point_key = ? "
                      "AND status = 'ok'", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, sweep, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, key, -1, SQLITE_TRANSIENT);
    *done = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) > 0;
    sqlite3_finalize(q);
    return 0;
}

/* When process pid started (Unix seconds), from /proc; NAN where that cannot be read. */
static double process_start(int64_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');  /* the command may hold spaces and parentheses */
    unsigned long long ticks = 0;
    /* after ") ": state is field 3, starttime field 22 */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                            "%*d %*d %*d %llu", &ticks) != 1)
        return NAN;
    f = fopen("/proc/stat", "r");
    double btime = NAN;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %lf", &btime) == 1)
            break;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? btime + (double)ticks / (double)hz : NAN;
}

/* Is the claimer of a point still at it? On this host: its process is alive, and is the one
 * that claimed (it started before the claim: a pid reused since is not). Elsewhere (a
 * database on a shared filesystem) that cannot be seen: a claim younger than
 * SIM_STORE_CLAIM_REMOTE_S is trusted. */
static bool claim_alive(const char *host, const char *me, int64_t pid, double at)
{
    if (strcmp(host, me) != 0)
        return sim_wall_unix() - at < SIM_STORE_CLAIM_REMOTE_S;
    if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
        return false;
    double started = process_start(pid);
    return isnan(started) || started <= at + 2;   /* (btime is in whole seconds) */
}

int sim_store_point_claim(struct sim_store *st, const char *sweep, const char *key,
                          enum sim_claim *out, int64_t *holder)
{
    char me[256] = "";
    gethostname(me, sizeof me - 1);
    *out = SIM_CLAIM_OURS;
    *holder = 0;
    bool done = false;
    int rc = exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = sim_store_point_done(st, sweep, key, &done)) == 0 && done)
        *out = SIM_CLAIM_DONE;
    sqlite3_stmt *q = NULL;
    if (!rc && !done && !(rc = prep(st, "SELECT pid, host, claimed_at FROM sweep_claims WHERE "
                                        "sweep = ? AND point_key = ?", &q))) {
        sqlite3_bind_text(q, 1, sweep, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(q, 2, key, -1, SQLITE_TRANSIENT);
        int step = sqlite3_step(q);
        if (step == SQLITE_ROW) {
            int64_t pid = sqlite3_column_int64(q, 0);
            const char *host = (const char *)sqlite3_column_text(q, 1);
            if (pid != (int64_t)getpid() &&
                claim_alive(host ? host : "", me, pid, sqlite3_column_double(q, 2))) {
                *out = SIM_CLAIM_TAKEN;
                *holder = pid;
            }
        } else if (step != SQLITE_DONE) {
            rc = db_err(st, "reading sweep_claims");
        }
        sqlite3_finalize(q);
    }
    if (!rc && *out == SIM_CLAIM_OURS &&
        !(rc = prep(st, "INSERT OR REPLACE INTO sweep_claims VALUES(?,?,?,?,?)", &q))) {
        sqlite3_bind_text(q, 1, sweep, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(q, 2, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(q, 3, (int64_t)getpid());
        sqlite3_bind_text(q, 4, me, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(q, 5, sim_wall_unix());
        if (sqlite3_step(q) != SQLITE_DONE)
            rc = db_err(st, "claiming a sweep point");
        sqlite3_finalize(q);
    }
    if (!rc)
        rc = exec(st, "COMMIT");
    if (rc)
        rollback(st);
    return rc;
}

int sim_store_point_release(struct sim_store *st, const char *sweep, const char *key)
{
    sqlite3_stmt *q = NULL;
    int rc = prep(st, "DELETE FROM sweep_claims WHERE sweep = ? AND point_key = ? AND pid = ?", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, sweep, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 3, (int64_t)getpid());
    if (sqlite3_step(q) != SQLITE_DONE)
        rc = db_err(st, "releasing a sweep point");
    sqlite3_finalize(q);
    return rc;
}

int sim_store_sweep_done(struct sim_store *st, const char *id, long *n)
{
    sqlite3_stmt *q = NULL;
    int rc = prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ?1 AND status = 'ok'", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, id, -1, SQLITE_TRANSIENT);
    *n = sqlite3_step(q) == SQLITE_ROW ? (long)sqlite3_column_int64(q, 0) : 0;
    sqlite3_finalize(q);
    return 0;
}

int sim_store_sweep_namesake(struct sim_store *st, const char *name, const char *id,
                             char *other, size_t size, long *npoints)
{
    sqlite3_stmt *q = NULL;
    int rc = prep(st, "SELECT sweep, count(*) FROM sweep_points WHERE substr(sweep, 1, "
                      "length(?1) + 1) = ?1 || '@' AND sweep != ?2 GROUP BY sweep "
                      "ORDER BY count(*) DESC, sweep LIMIT 1", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, id, -1, SQLITE_TRANSIENT);
    *npoints = 0;
    other[0] = 0;
    if (sqlite3_step(q) == SQLITE_ROW) {
        snprintf(other, size, "%s", (const char *)sqlite3_column_text(q, 0));
        *npoints = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    return 0;
}

int sim_store_image(struct sim_store *st, unsigned char **img, size_t *n)
{
    sqlite3_int64 sz = 0;
    unsigned char *buf = sqlite3_serialize(st->db, "main", &sz, 0);
    *img = NULL;
    *n = 0;
    if (!buf)
        return db_err(st, "serializing");
    *img = malloc(sz > 0 ? (size_t)sz : 1);
    if (*img)
        memcpy(*img, buf, (size_t)sz);
    sqlite3_free(buf);
    if (!*img)
        return SIM_ENOMEM;
    *n = (size_t)sz;
    return 0;
}

/* The columns that hold a runs.id or a profiles.id: shifted by the offsets when merging. */
static const char *id_shift(const char *table, const char *col)
{
    if (!strcmp(col, "run_id") || !strcmp(col, "static_run_id") ||
        !strcmp(col, "autoscale_run_id") || (!strcmp(table, "runs") && !strcmp(col, "id")))
        return "run";
    if (!strcmp(col, "profile_id") || (!strcmp(table, "profiles") && !strcmp(col, "id")))
        return "prof";
    return NULL;
}

static int merge_table(struct sim_store *st, const char *table, int64_t run_off, int64_t prof_off)
{
    sqlite3_stmt *q = NULL;
    char pragma[160];
    snprintf(pragma, sizeof pragma, "PRAGMA src.table_info(\"%s\")", table);
    if (sqlite3_prepare_v2(st->db, pragma, -1, &q, NULL) != SQLITE_OK)
        return db_err(st, "merging");
    size_t cap = 256 + 2 * strlen(table);
    char *cols = calloc(1, 4096), *exprs = calloc(1, 4096), *sql = NULL;
    size_t cl = 0, el = 0;
    int rc = cols && exprs ? 0 : SIM_ENOMEM;
    while (!rc && sqlite3_step(q) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(q, 1);
        const char *shift = id_shift(table, c);
        if (cl + strlen(c) + 8 > 4096 || el + strlen(c) + 40 > 4096) {
            rc = sim_err_set(SIM_EDB, "%s: merging table %s: too many columns", st->path, table);
            break;
        }
        cl += (size_t)sprintf(cols + cl, "%s\"%s\"", cl ? "," : "", c);
        if (shift)
            el += (size_t)sprintf(exprs + el, "%s\"%s\" + %lld", el ? "," : "", c,
                                  (long long)(shift[0] == 'r' ? run_off : prof_off));
        else
            el += (size_t)sprintf(exprs + el, "%s\"%s\"", el ? "," : "", c);
    }
    sqlite3_finalize(q);
    if (!rc && !(sql = malloc(cap + cl + el)))
        rc = SIM_ENOMEM;
    if (!rc) {
        sprintf(sql, "INSERT OR REPLACE INTO main.\"%s\"(%s) SELECT %s FROM src.\"%s\"", table,
                cols, exprs, table);
        rc = exec(st, sql);
    }
    free(sql);
    free(cols);
    free(exprs);
    return rc;
}

static int64_t max_id(struct sim_store *st, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

int sim_store_merge(struct sim_store *st, const unsigned char *img, size_t n, const char *origin)
{
    int rc, v = -1;
    unsigned char *copy = sqlite3_malloc64(n ? n : 1);
    if (!copy)
        return SIM_ENOMEM;
    memcpy(copy, img, n);
    if ((rc = exec(st, "ATTACH ':memory:' AS src")))
        goto fail;
    if (sqlite3_deserialize(st->db, "src", copy, (sqlite3_int64)n, (sqlite3_int64)n,
                            SQLITE_DESERIALIZE_FREEONCLOSE) != SQLITE_OK) {
        rc = sim_err_set(SIM_EDB, "%s: results from %s are not an SQLite database image: %s",
                         st->path, origin, sqlite3_errmsg(st->db));
        goto detach;
    }
    v = (int)max_id(st, "PRAGMA src.user_version");
    if (v != SIM_STORE_SCHEMA) {
        rc = sim_err_set(SIM_EDB, "%s: results from %s have schema version %d, expected %d "
                         "(another servesim version?)", st->path, origin, v, SIM_STORE_SCHEMA);
        goto detach;
    }
    if ((rc = exec(st, "BEGIN IMMEDIATE")))
        goto detach;
    /* a sweep point another process stored meanwhile is not stored twice (as sim_store_write) */
    if (max_id(st, "SELECT count(*) FROM src.sweep_points s JOIN main.sweep_points m ON "
                   "m.sweep = s.sweep AND m.point_key = s.point_key WHERE m.status = 'ok'") > 0) {
        rollback(st);
        goto detach;
    }
    {
        int64_t run_off = max_id(st, "SELECT coalesce(max(id), 0) FROM main.runs");
        int64_t prof_off = max_id(st, "SELECT coalesce(max(id), 0) FROM main.profiles");
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(st->db, "SELECT name FROM src.sqlite_master WHERE type = 'table' "
                               "AND name != 'meta' ORDER BY rowid", -1, &q, NULL) != SQLITE_OK)
            rc = db_err(st, "merging");
        char table[128];
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            snprintf(table, sizeof table, "%s", (const char *)sqlite3_column_text(q, 0));
            rc = merge_table(st, table, run_off, prof_off);
        }
        sqlite3_finalize(q);
    }
    if (!rc)
        rc = exec(st, "COMMIT");
    if (rc)
        rollback(st);
detach:
    sqlite3_exec(st->db, "DETACH src", NULL, NULL, NULL);
    return rc;
fail:
    sqlite3_free(copy);
    return rc;
}

int sim_store_plan_write(struct sim_store *st, const struct sim_plan *p, const char *hash,
                         double percentile)
{
    sqlite3_stmt *q_plan = NULL, *q_probe = NULL;
    char created[32];
    sim_utc_now(created);
    int rc;
    if ((rc = exec(st, "BEGIN IMMEDIATE")))
        return rc;
    sqlite3_stmt *q_del = NULL;
    if ((rc = prep(st, "DELETE FROM plan_probes WHERE plan = ?", &q_del)) ||
        (rc = insert(st, q_del, "t", p->id)) ||
        (rc = prep(st, "INSERT OR REPLACE INTO plans VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   &q_plan)) ||
        (rc = prep(st, "INSERT INTO plan_probes VALUES(?,?,?,?,?,?,?,?)", &q_probe)))
        goto rollback;
    /* static columns are NULL without a passing probe, autoscale ones without autoscaling */
    const struct sim_result *a = p->autoscale_result, *s = p->static_result;
    sqlite3_bind_text(q_plan, 1, p->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q_plan, 2, p->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q_plan, 3, hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q_plan, 4, created, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(q_plan, 5, percentile);
    sqlite3_bind_int(q_plan, 6, p->lower_bound);
    if (s) {
        sqlite3_bind_int(q_plan, 7, p->static_gpus);
        sqlite3_bind_int64(q_plan, 8, p->static_run_id);
        sqlite3_bind_double(q_plan, 9, s->gpu_s);
    }
    sqlite3_bind_text(q_plan, 10, "doubling+bisection", -1, SQLITE_STATIC);
    sqlite3_bind_int(q_plan, 11, p->monotone);
    if (a) {
        sqlite3_bind_text(q_plan, 12, p->autoscaler, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(q_plan, 13, p->autoscale_run_id);
        sqlite3_bind_double(q_plan, 14, a->gpu_s);
        sqlite3_bind_int(q_plan, 15, sim_rule_pass(p->rule, a));
        sqlite3_bind_double(q_plan, 16, a->bad_rate);
        if (s && s->gpu_s > 0)
            sqlite3_bind_double(q_plan, 17, 1 - a->gpu_s / s->gpu_s);
    }
    sqlite3_bind_text(q_plan, 18, sim_search_rule_names[p->rule], -1, SQLITE_STATIC);
    if (sqlite3_step(q_plan) != SQLITE_DONE) {
        rc = db_err(st, "inserting the plan");
        goto rollback;
    }
    for (int i = 0; i < p->nprobes; i++) {
        const struct sim_plan_probe *pr = &p->probes[i];
        if ((rc = insert(st, q_probe, "tiiiitdd", p->id, (int64_t)i, (int64_t)pr->gpus,
                         pr->run_id, (int64_t)pr->pass, pr->worst_model, pr->worst_bad_frac,
                         pr->all_bad_frac)))
            goto rollback;
    }
    sqlite3_finalize(q_del);
    sqlite3_finalize(q_plan);
    sqlite3_finalize(q_probe);
    return exec(st, "COMMIT");
rollback:
    rollback(st);
    sqlite3_finalize(q_del);
    sqlite3_finalize(q_plan);
    sqlite3_finalize(q_probe);
    return rc;
}

/* Binds text or NULL, and a number or NULL when it is NAN. */
static int bind_tn(sqlite3_stmt *q, int col, const char *t)
{
    return t ? sqlite3_bind_text(q, col, t, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(q, col);
}

static int bind_dn(sqlite3_stmt *q, int col, double d)
{
    return isnan(d) ? sqlite3_bind_null(q, col) : sqlite3_bind_double(q, col, d);
}

int sim_store_profiles_write(struct sim_store *st, const struct sim_store_profile *p, int n,
                             const struct sim_store_profile_point *const *pts, const int *npts)
{
    sqlite3_stmt *qp = NULL, *qt = NULL;
    char when[32];
    sim_utc_now(when);
    int rc = exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = prep(st, "INSERT INTO profiles(executor_kind, model, form, alpha_ms, beta_ms, a_ms,"
                       " b_ms, c_ms, table_json, source, measured_at, network, backend, device,"
                       " versions, host, precision, threads, r2, max_rel_err, fits_json,"
                       " recommendation, weights_mb, activations_mb, workspace_mb, load_ms, exec)"
                       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &qp)) ||
        (rc = prep(st, "INSERT INTO profile_points VALUES(?,?,?,?,?,?,?,?,?,?)", &qt)))
        goto fail;
    for (int i = 0; i < n; i++) {
        const struct sim_store_profile *r = &p[i];
        const char *texts[] = {r->executor_kind, r->model, r->form};
        const double nums[] = {r->alpha_ms, r->beta_ms, r->a_ms, r->b_ms, r->c_ms};
        int col = 1, bad = 0;
        sqlite3_reset(qp);
        for (int k = 0; k < 3; k++)
            bad |= bind_tn(qp, col++, texts[k]);
        for (int k = 0; k < 5; k++)
            bad |= bind_dn(qp, col++, nums[k]);
        bad |= bind_tn(qp, col++, r->table_json);
        bad |= bind_tn(qp, col++, r->source ? r->source : "servesim-calibrate");
        bad |= bind_tn(qp, col++, when);
        const char *prov[] = {r->network, r->backend, r->device, r->versions, r->host, r->precision};
        for (int k = 0; k < 6; k++)
            bad |= bind_tn(qp, col++, prov[k]);
        bad |= sqlite3_bind_int(qp, col++, r->threads);
        bad |= bind_dn(qp, col++, r->r2);
        bad |= bind_dn(qp, col++, r->max_rel_err);
        bad |= bind_tn(qp, col++, r->fits_json);
        bad |= bind_tn(qp, col++, r->recommendation);
        const double mem[] = {r->weights_mb, r->activations_mb, r->workspace_mb, r->load_ms};
        for (int k = 0; k < 4; k++)
            bad |= bind_dn(qp, col++, mem[k]);
        bad |= bind_tn(qp, col++, r->exec);
        if (bad) {
            rc = db_err(st, "binding a profile");
            goto fail;
        }
        if (sqlite3_step(qp) != SQLITE_DONE) {
            rc = db_err(st, "inserting a profile");
            goto fail;
        }
        int64_t id = sqlite3_last_insert_rowid(st->db);
        for (int j = 0; j < (npts ? npts[i] : 0); j++) {
            const struct sim_store_profile_point *t = &pts[i][j];
            if ((rc = insert(st, qt, "iiiddddddd", id, (int64_t)t->batch, (int64_t)t->reps,
                             t->median_ms, t->p99_ms, t->mean_ms, t->sd_ms, t->min_ms, t->max_ms,
                             t->activations_mb)))
                goto fail;
        }
    }
    sqlite3_finalize(qp);
    sqlite3_finalize(qt);
    return exec(st, "COMMIT");
fail:
    sqlite3_finalize(qp);
    sqlite3_finalize(qt);
    rollback(st);
    return rc;
}
