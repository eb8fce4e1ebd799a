/* sim_store — the results database: schema, opening and migrating, sweep points and claims,
 * images and merges (the writers of runs, plans and profiles: sim_store_write.c). */
#include "sim_store.h"
#include "sim_store_int.h"
#include "sim_readback.h"

#include <math.h>
#include <sqlite3.h>
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
    "CREATE TABLE IF NOT EXISTS llm_stats(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  ttft_p50_ms REAL, ttft_p90_ms REAL, ttft_p99_ms REAL, ttft_mean_ms REAL,\n"
    "  tpot_p50_ms REAL, tpot_p90_ms REAL, tpot_p99_ms REAL, tpot_mean_ms REAL,\n"
    "  itl_p99_ms REAL, e2e_p99_ms REAL, tokens_out INTEGER NOT NULL, tokens_per_s REAL,\n"
    "  preemptions INTEGER NOT NULL, iterations INTEGER NOT NULL, replicas INTEGER NOT NULL,\n"
    "  kv_util_mean REAL, kv_blocks INTEGER NOT NULL, kv_gib REAL, weights_gib REAL,\n"
    "  iteration_time TEXT NOT NULL, prefix_hit_rate REAL,\n"
    "  PRIMARY KEY(run_id, model));\n"
    "CREATE TABLE IF NOT EXISTS ttft_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS tpot_hist(\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,\n"
    "  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);\n"
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
    "  error TEXT, labels_json TEXT, PRIMARY KEY(sweep, point_key));\n"
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

/* Version 11 -> 12: a sweep point's settings in words, from its sweep file's labels (for the
 * figures; NULL where the file gave none). */
static const char migrate_v11_sql[] = "ALTER TABLE sweep_points ADD COLUMN labels_json TEXT;\n";
static const char migrate_v13_sql[] = "ALTER TABLE llm_stats ADD COLUMN prefix_hit_rate REAL;\n";

/* The steps from an older schema, in order: a database at version v runs each step with
 * since <= v < to (since: the first version with the tables the step alters). The versions
 * with no step (4 -> 5, 5 -> 6, 10 -> 11, 12 -> 13) only added tables, which schema_sql
 * creates. */
static const struct migration {
    int since, to;
    const char *sql;
} migrations[] = {
    {1, 2, migrate_v1_sql}, {1, 3, migrate_v2_sql},  {1, 4, migrate_v3_sql},
    {1, 7, migrate_v6_sql}, {1, 8, migrate_v7_sql},  {1, 9, migrate_v8_sql},
    {1, 10, migrate_v9_sql}, {3, 10, migrate_v9_plans_sql}, {2, 12, migrate_v11_sql},
    {13, 14, migrate_v13_sql},
};


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

int store_err(struct sim_store *st, const char *what)
{
    int rc = locked(st);
    return rc ? rc : sim_err_set(SIM_EDB, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

int store_exec(struct sim_store *st, const char *sql)
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
void store_rollback(struct sim_store *st)
{
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static int user_version(struct sim_store *st, int *v)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
        return store_err(st, "reading the schema version");
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
        rc = store_err(st, "cannot open");
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
        rc = store_exec(st, "BEGIN IMMEDIATE");
        for (size_t i = 0; !rc && i < sizeof migrations / sizeof *migrations; i++)
            if (migrations[i].since <= v && v < migrations[i].to)
                rc = store_exec(st, migrations[i].sql);
        if (rc || (rc = store_exec(st, schema_sql)) ||
            (rc = store_exec(st, ver)) || (rc = store_exec(st, "COMMIT"))) {
            store_rollback(st);
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

int store_prep(struct sim_store *st, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, q, NULL) != SQLITE_OK)
        return store_err(st, "preparing a statement");
    return 0;
}

/* ---------------------------------------------------------------- writers (sim_store_int.h) */

/* Opens w on `table`: `verb` "INSERT" or "INSERT OR REPLACE", `tail` SQL after VALUES(...)
 * (an ON CONFLICT clause) or "". */
int sw_open(struct sim_store *st, struct sim_store_writer *w, const char *verb, const char *table,
                  const char *tail)
{
    memset(w, 0, sizeof *w);
    w->st = st;
    w->table = table;
    char sql[256], names[W_MAXCOLS][64], cols[W_MAXCOLS * 66] = "", vals[W_MAXCOLS * 67] = "";
    bool rowid[W_MAXCOLS] = {false};
    int n = 0, npk = 0;
    sqlite3_stmt *ti = NULL;
    snprintf(sql, sizeof sql, "PRAGMA table_info(\"%s\")", table);
    if (sqlite3_prepare_v2(st->db, sql, -1, &ti, NULL) != SQLITE_OK)
        return store_err(st, "reading a table's columns");
    while (sqlite3_step(ti) == SQLITE_ROW && n < W_MAXCOLS) {
        const char *name = (const char *)sqlite3_column_text(ti, 1);
        const char *type = (const char *)sqlite3_column_text(ti, 2);
        snprintf(names[n], sizeof names[n], "%s", name ? name : "");
        rowid[n] = sqlite3_column_int(ti, 5) > 0 && type && !strcmp(type, "INTEGER");
        npk += sqlite3_column_int(ti, 5) > 0;
        n++;
    }
    sqlite3_finalize(ti);
    if (n == 0 || n == W_MAXCOLS)
        return sim_err_set(SIM_EDB, "%s: results table %s: %d columns (expected 1..%d)", st->path,
                           table, n, W_MAXCOLS - 1);
    for (int i = 0; i < n; i++) {
        if (rowid[i] && npk == 1)       /* the row id: SQLite's */
            continue;
        size_t lc = strlen(cols), lv = strlen(vals);
        snprintf(cols + lc, sizeof cols - lc, "%s\"%s\"", lc ? ", " : "", names[i]);
        snprintf(vals + lv, sizeof vals - lv, "%s:%s", lv ? ", " : "", names[i]);
        w->ncols++;
    }
    char *ins = sqlite3_mprintf("%s INTO \"%s\"(%s) VALUES(%s) %s", verb, table, cols, vals, tail);
    if (!ins)
        return SIM_ENOMEM;
    int rc = store_prep(st, ins, &w->q);
    sqlite3_free(ins);
    return rc;
}

void sw_close(struct sim_store_writer *w)
{
    sqlite3_finalize(w->q);
    w->q = NULL;
}

/* The parameter of column `col`, 0 (and the row's error) if the table lacks it or it was
 * given already. */
static int sw_col(struct sim_store_writer *w, const char *col)
{
    if (w->rc || !w->q)
        return 0;
    int i = 0;
    const char *guess = sqlite3_bind_parameter_name(w->q, w->next + 1);
    if (guess && strcmp(guess + 1, col) == 0) {
        i = w->next + 1;                /* (a row writes thousands of times: no formatting) */
    } else {
        char p[72];
        snprintf(p, sizeof p, ":%s", col);
        i = sqlite3_bind_parameter_index(w->q, p);
    }
    if (i)
        w->next = i % w->ncols;
    if (i == 0)
        w->rc = sim_err_set(SIM_EDB, "%s: results table %s has no column %s (a database "
                            "older than its schema version says?)", w->st->path, w->table, col);
    else if (w->given & (UINT64_C(1) << (i - 1)))
        w->rc = sim_err_set(SIM_EDB, "%s: results table %s: column %s given twice in a row",
                            w->st->path, w->table, col);
    else
        w->given |= UINT64_C(1) << (i - 1);
    return w->rc ? 0 : i;
}

static void sw_bound(struct sim_store_writer *w, int r)
{
    if (r != SQLITE_OK && !w->rc)
        w->rc = store_err(w->st, "binding a value");
}

void sw_int(struct sim_store_writer *w, const char *col, int64_t v)
{
    int i = sw_col(w, col);
    if (i)
        sw_bound(w, sqlite3_bind_int64(w->q, i, v));
}

/* NAN is written as NULL. */
void sw_real(struct sim_store_writer *w, const char *col, double v)
{
    int i = sw_col(w, col);
    if (i)
        sw_bound(w, isnan(v) ? sqlite3_bind_null(w->q, i) : sqlite3_bind_double(w->q, i, v));
}

/* NULL is written as NULL. */
void sw_text(struct sim_store_writer *w, const char *col, const char *v)
{
    int i = sw_col(w, col);
    if (i)
        sw_bound(w, v ? sqlite3_bind_text(w->q, i, v, -1, SQLITE_TRANSIENT)
                     : sqlite3_bind_null(w->q, i));
}

void sw_null(struct sim_store_writer *w, const char *col)
{
    int i = sw_col(w, col);
    if (i)
        sw_bound(w, sqlite3_bind_null(w->q, i));
}

/* Writes the row given since the last one. */
int sw_row(struct sim_store_writer *w)
{
    int rc = w->rc;
    for (int i = 0; !rc && i < w->ncols; i++)
        if (!(w->given & (UINT64_C(1) << i)))
            rc = sim_err_set(SIM_EDB, "%s: results table %s: column %s not given",
                             w->st->path, w->table, sqlite3_bind_parameter_name(w->q, i + 1) + 1);
    if (!rc && sqlite3_step(w->q) != SQLITE_DONE)
        rc = store_err(w->st, "inserting a row");
    sqlite3_reset(w->q);
    sqlite3_clear_bindings(w->q);
    w->given = 0;
    w->rc = 0;
    return rc;
}

int sim_store_point_done(struct sim_store *st, const char *sweep, const char *key, bool *done)
{
    sqlite3_stmt *q = NULL;
    int rc = store_prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ? AND point_key = ? "
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
    int rc = store_exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = sim_store_point_done(st, sweep, key, &done)) == 0 && done)
        *out = SIM_CLAIM_DONE;
    sqlite3_stmt *q = NULL;
    if (!rc && !done && !(rc = store_prep(st, "SELECT pid, host, claimed_at FROM sweep_claims WHERE "
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
            rc = store_err(st, "reading sweep_claims");
        }
        sqlite3_finalize(q);
    }
    struct sim_store_writer w;
    if (!rc && *out == SIM_CLAIM_OURS &&
        !(rc = sw_open(st, &w, "INSERT OR REPLACE", "sweep_claims", ""))) {
        sw_text(&w, "sweep", sweep);
        sw_text(&w, "point_key", key);
        sw_int(&w, "pid", (int64_t)getpid());
        sw_text(&w, "host", me);
        sw_real(&w, "claimed_at", sim_wall_unix());
        rc = sw_row(&w);
        sw_close(&w);
    }
    if (!rc)
        rc = store_exec(st, "COMMIT");
    if (rc)
        store_rollback(st);
    return rc;
}

int sim_store_point_release(struct sim_store *st, const char *sweep, const char *key)
{
    sqlite3_stmt *q = NULL;
    int rc = store_prep(st, "DELETE FROM sweep_claims WHERE sweep = ? AND point_key = ? AND pid = ?", &q);
    if (rc)
        return rc;
    sqlite3_bind_text(q, 1, sweep, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q, 2, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 3, (int64_t)getpid());
    if (sqlite3_step(q) != SQLITE_DONE)
        rc = store_err(st, "releasing a sweep point");
    sqlite3_finalize(q);
    return rc;
}

int sim_store_sweep_done(struct sim_store *st, const char *id, long *n)
{
    sqlite3_stmt *q = NULL;
    int rc = store_prep(st, "SELECT count(*) FROM sweep_points WHERE sweep = ?1 AND status = 'ok'", &q);
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
    int rc = store_prep(st, "SELECT sweep, count(*) FROM sweep_points WHERE substr(sweep, 1, "
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
        return store_err(st, "serializing");
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
        return store_err(st, "merging");
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
        rc = store_exec(st, sql);
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
    if ((rc = store_exec(st, "ATTACH ':memory:' AS src")))
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
    if ((rc = store_exec(st, "BEGIN IMMEDIATE")))
        goto detach;
    /* a sweep point another process stored meanwhile is not stored twice (as sim_store_write) */
    if (max_id(st, "SELECT count(*) FROM src.sweep_points s JOIN main.sweep_points m ON "
                   "m.sweep = s.sweep AND m.point_key = s.point_key WHERE m.status = 'ok'") > 0) {
        store_rollback(st);
        goto detach;
    }
    {
        int64_t run_off = max_id(st, "SELECT coalesce(max(id), 0) FROM main.runs");
        int64_t prof_off = max_id(st, "SELECT coalesce(max(id), 0) FROM main.profiles");
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(st->db, "SELECT name FROM src.sqlite_master WHERE type = 'table' "
                               "AND name != 'meta' ORDER BY rowid", -1, &q, NULL) != SQLITE_OK)
            rc = store_err(st, "merging");
        char table[128];
        while (!rc && sqlite3_step(q) == SQLITE_ROW) {
            snprintf(table, sizeof table, "%s", (const char *)sqlite3_column_text(q, 0));
            rc = merge_table(st, table, run_off, prof_off);
        }
        sqlite3_finalize(q);
    }
    if (!rc)
        rc = store_exec(st, "COMMIT");
    if (rc)
        store_rollback(st);
detach:
    sqlite3_exec(st->db, "DETACH src", NULL, NULL, NULL);
    return rc;
fail:
    sqlite3_free(copy);
    return rc;
}
