/* sim_store — schema creation, versioning and transactional writes of results. */
#include "sim_store.h"
#include "sim_results.h"

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

/* The steps from an older schema, in order: a database at version v runs each step with
 * since <= v < to (since: the first version with the tables the step alters). The versions
 * with no step (4 -> 5, 5 -> 6, 10 -> 11) only added tables, which schema_sql creates. */
static const struct migration {
    int since, to;
    const char *sql;
} migrations[] = {
    {1, 2, migrate_v1_sql}, {1, 3, migrate_v2_sql},  {1, 4, migrate_v3_sql},
    {1, 7, migrate_v6_sql}, {1, 8, migrate_v7_sql},  {1, 9, migrate_v8_sql},
    {1, 10, migrate_v9_sql}, {3, 10, migrate_v9_plans_sql},
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
        rc = exec(st, "BEGIN IMMEDIATE");
        for (size_t i = 0; !rc && i < sizeof migrations / sizeof *migrations; i++)
            if (migrations[i].since <= v && v < migrations[i].to)
                rc = exec(st, migrations[i].sql);
        if (rc || (rc = exec(st, schema_sql)) ||
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

static int prep(struct sim_store *st, const char *sql, sqlite3_stmt **q)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, q, NULL) != SQLITE_OK)
        return db_err(st, "preparing a statement");
    return 0;
}

/* ---------------------------------------------------------------- writers
 * A writer puts rows into one table by column name. Its INSERT names every column the table
 * has, each as the parameter :column, except an INTEGER PRIMARY KEY (the row id SQLite
 * gives). A row gives each column once (w_int, w_real, w_text, w_null), and w_row writes
 * it. A name the table lacks, or a column given twice or left out, is an error naming the
 * table and the column: never a row whose values sit one column over. */
#define W_MAXCOLS 64

struct writer {
    struct sim_store *st;
    sqlite3_stmt *q;
    const char *table;
    int ncols;
    uint64_t given;                     /* bit i - 1: parameter i has its value for this row */
    int rc;                             /* the first error of this row */
};

/* Opens w on `table`: `verb` "INSERT" or "INSERT OR REPLACE", `tail` SQL after VALUES(...)
 * (an ON CONFLICT clause) or "". */
static int w_open(struct sim_store *st, struct writer *w, const char *verb, const char *table,
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
        return db_err(st, "reading a table's columns");
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
    int rc = prep(st, ins, &w->q);
    sqlite3_free(ins);
    return rc;
}

static void w_close(struct writer *w)
{
    sqlite3_finalize(w->q);
    w->q = NULL;
}

/* The parameter of column `col`, 0 (and the row's error) if the table lacks it or it was
 * given already. */
static int w_col(struct writer *w, const char *col)
{
    char p[72];
    snprintf(p, sizeof p, ":%s", col);
    int i = w->q ? sqlite3_bind_parameter_index(w->q, p) : 0;
    if (w->rc)
        return 0;
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

static void w_bound(struct writer *w, int r)
{
    if (r != SQLITE_OK && !w->rc)
        w->rc = db_err(w->st, "binding a value");
}

static void w_int(struct writer *w, const char *col, int64_t v)
{
    int i = w_col(w, col);
    if (i)
        w_bound(w, sqlite3_bind_int64(w->q, i, v));
}

/* NAN is written as NULL. */
static void w_real(struct writer *w, const char *col, double v)
{
    int i = w_col(w, col);
    if (i)
        w_bound(w, isnan(v) ? sqlite3_bind_null(w->q, i) : sqlite3_bind_double(w->q, i, v));
}

/* NULL is written as NULL. */
static void w_text(struct writer *w, const char *col, const char *v)
{
    int i = w_col(w, col);
    if (i)
        w_bound(w, v ? sqlite3_bind_text(w->q, i, v, -1, SQLITE_TRANSIENT)
                     : sqlite3_bind_null(w->q, i));
}

static void w_null(struct writer *w, const char *col)
{
    int i = w_col(w, col);
    if (i)
        w_bound(w, sqlite3_bind_null(w->q, i));
}

/* Writes the row given since the last one. */
static int w_row(struct writer *w)
{
    int rc = w->rc;
    for (int i = 0; !rc && i < w->ncols; i++)
        if (!(w->given & (UINT64_C(1) << i)))
            rc = sim_err_set(SIM_EDB, "%s: results table %s: column %s not given",
                             w->st->path, w->table, sqlite3_bind_parameter_name(w->q, i + 1) + 1);
    if (!rc && sqlite3_step(w->q) != SQLITE_DONE)
        rc = db_err(w->st, "inserting a row");
    sqlite3_reset(w->q);
    sqlite3_clear_bindings(w->q);
    w->given = 0;
    w->rc = 0;
    return rc;
}

/* The non-empty buckets of one histogram as rows (run_id, `key` = name, lo_ms, hi_ms, count). */
static int write_hist(struct writer *w, int64_t id, const char *key, const char *name,
                      const struct sim_hist *h)
{
    for (int k = 0; k < SIM_HIST_BUCKETS; k++) {
        if (!h->counts[k])
            continue;
        int64_t lo, hi;
        sim_hist_bucket_range(k, &lo, &hi);
        w_int(w, "run_id", id);
        w_text(w, key, name);
        w_real(w, "lo_ms", sim_ns_to_ms(lo));
        w_real(w, "hi_ms", sim_ns_to_ms(hi));
        w_int(w, "count", (int64_t)h->counts[k]);
        int rc = w_row(w);
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

/* The writers of one run's tables, in the order sim_store_write fills them. */
enum { T_RUN, T_JOB, T_JOBW, T_MODEL, T_EXEC, T_TS, T_BATCH, T_LAT, T_QUEUE, T_PATH, T_PATHH,
       T_SEARCH, T_POINT, T_NWRITERS };

static int write_run_row(struct writer *w, const struct sim_store_run *run,
                         const struct sim_result *r, const char *started)
{
    const struct sim_goodput *g = run->goodput;
    char seed_text[24];
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)r->seed);
    w_text(w, "name", r->name);
    w_text(w, "kind", run->kind);
    w_text(w, "policy", r->policy);
    w_text(w, "seed", seed_text);
    w_text(w, "config_json", run->config_json);
    w_text(w, "config_hash", run->config_hash);
    w_text(w, "version", SERVESIM_VERSION);
    w_text(w, "started_at", started);
    w_real(w, "wall_s", r->wall_s);
    w_text(w, "status", g ? sim_search_status_names[g->status] : "ok");
    w_real(w, "duration_s", r->duration_s);
    w_real(w, "warmup_s", r->warmup_s);
    w_real(w, "load_scale", r->load_scale);
    w_real(w, "offered_rps", r->offered_rps);
    w_real(w, "ontime_rps", r->ontime_rps);
    w_real(w, "bad_rate", r->bad_rate);
    w_int(w, "slo_met", r->pass);
    w_real(w, "percentile", r->percentile);
    /* a goodput search's result (0 where it found none); NULL for a plain run */
    w_real(w, "goodput_rps", !g ? NAN : g->status == SIM_SEARCH_CONVERGED ? g->goodput_rps : 0.0);
    w_int(w, "events", (int64_t)r->events);
    w_real(w, "gpu_s", r->gpu_s);
    w_int(w, "gpus_max", r->gpus_max);
    w_int(w, "trace_gaps", r->trace_gaps);
    w_real(w, "trace_gap_s", r->trace_gap_s);
    w_real(w, "core_s", r->core_s);
    w_real(w, "makespan_s", r->makespan_s);
    w_real(w, "notebook_slowdown", r->nnotebooks ? r->nb_slowdown : NAN);
    w_real(w, "warmup_config_s", r->warmup_extended ? r->warmup_config_s : NAN);
    return w_row(w);
}

static int write_job_rows(struct writer *wj, struct writer *ww, int64_t id,
                          const struct sim_result *r)
{
    int rc = 0;
    for (int j = 0; j < r->njobs && !rc; j++) {  /* NAN (never started or done): NULL */
        const struct sim_job_result *x = &r->jobs[j];
        w_int(wj, "run_id", id);
        w_int(wj, "job", j + 1);
        w_text(wj, "kind", x->kind);
        w_real(wj, "arrival_s", x->arrival_s);
        w_real(wj, "start_s", x->start_s);
        w_real(wj, "end_s", x->end_s);
        w_real(wj, "wait_s", x->wait_s);
        w_real(wj, "train_s", x->train_s);
        w_real(wj, "exec_s", x->exec_s);
        w_int(wj, "reconfigs", x->reconfigs);
        w_int(wj, "evictions", x->evictions);
        w_real(wj, "cross_node_s", x->cross_node_s);
        rc = w_row(wj);
        for (int n = 0; n < SIM_JOB_MAX_WORKERS && !rc; n++) {
            if (x->workers_s[n] <= 0)
                continue;
            w_int(ww, "run_id", id);
            w_int(ww, "job", j + 1);
            w_int(ww, "workers", n + 1);
            w_real(ww, "seconds", x->workers_s[n]);
            rc = w_row(ww);
        }
    }
    return rc;
}

static int write_model_rows(struct writer *w, int64_t id, const struct sim_result *r)
{
    int rc = 0;
    for (int m = 0; m < r->nmodels && !rc; m++) {
        const struct sim_model_result *x = &r->models[m];
        bool pred = x->pred_n > 0;      /* the prediction columns: NULL without predictions */
        w_int(&w[T_MODEL], "run_id", id);
        w_text(&w[T_MODEL], "model", x->name);
        w_real(&w[T_MODEL], "slo_ms", x->slo_ms);
        w_real(&w[T_MODEL], "rate_rps", x->rate_rps);
        w_int(&w[T_MODEL], "max_batch", x->max_batch);
        w_int(&w[T_MODEL], "offered", (int64_t)x->offered);
        w_int(&w[T_MODEL], "on_time", (int64_t)x->on_time);
        w_int(&w[T_MODEL], "late", (int64_t)x->late);
        w_int(&w[T_MODEL], "dropped", (int64_t)x->dropped);
        w_real(&w[T_MODEL], "p50_ms", x->p50_ms);
        w_real(&w[T_MODEL], "p90_ms", x->p90_ms);
        w_real(&w[T_MODEL], "p99_ms", x->p99_ms);
        w_real(&w[T_MODEL], "p999_ms", x->p999_ms);
        w_real(&w[T_MODEL], "mean_ms", x->mean_ms);
        w_real(&w[T_MODEL], "mean_queue_ms", x->mean_queue_ms);
        w_real(&w[T_MODEL], "p99_queue_ms", x->p99_queue_ms);
        w_real(&w[T_MODEL], "mean_batch", x->mean_batch);
        w_int(&w[T_MODEL], "batches", (int64_t)x->batches);
        w_real(&w[T_MODEL], "ideal_batch_staggered", x->ideal_batch_staggered);
        w_real(&w[T_MODEL], "ideal_batch_uncoord", x->ideal_batch_uncoord);
        w_int(&w[T_MODEL], "preempted", (int64_t)x->preempted);
        w_int(&w[T_MODEL], "pred_n", (int64_t)x->pred_n);
        w_real(&w[T_MODEL], "pred_mean_err_ms", pred ? x->pred_mean_err_ms : NAN);
        w_real(&w[T_MODEL], "pred_mean_abs_err_ms", pred ? x->pred_mean_abs_err_ms : NAN);
        w_real(&w[T_MODEL], "pred_max_over_ms", pred ? x->pred_max_over_ms : NAN);
        w_real(&w[T_MODEL], "pred_over_frac", pred ? x->pred_over_frac : NAN);
        rc = w_row(&w[T_MODEL]);
        for (int b = 1; b <= x->max_batch && !rc; b++) {
            if (!x->batch_hist[b])
                continue;
            w_int(&w[T_BATCH], "run_id", id);
            w_text(&w[T_BATCH], "model", x->name);
            w_int(&w[T_BATCH], "batch_size", b);
            w_int(&w[T_BATCH], "count", (int64_t)x->batch_hist[b]);
            rc = w_row(&w[T_BATCH]);
        }
        if (!rc && !(rc = write_hist(&w[T_LAT], id, "model", x->name, x->latency)))
            rc = write_hist(&w[T_QUEUE], id, "model", x->name, x->queueing);
    }
    for (int p = 0; p < r->npaths && !rc; p++) {
        const struct sim_path_result *x = &r->paths[p];
        struct writer *wp = &w[T_PATH];
        w_int(wp, "run_id", id);
        w_text(wp, "path", x->name);
        w_text(wp, "stages", x->stages);
        w_real(wp, "sla_ms", x->sla_ms);
        w_real(wp, "prob", x->prob);
        w_real(wp, "rate_rps", x->rate_rps);
        w_int(wp, "offered", (int64_t)x->offered);
        w_int(wp, "on_time", (int64_t)x->on_time);
        w_int(wp, "late", (int64_t)x->late);
        w_int(wp, "dropped", (int64_t)x->dropped);
        w_real(wp, "p50_ms", x->p50_ms);
        w_real(wp, "p90_ms", x->p90_ms);
        w_real(wp, "p99_ms", x->p99_ms);
        w_real(wp, "p999_ms", x->p999_ms);
        w_real(wp, "mean_ms", x->mean_ms);
        if (!(rc = w_row(wp)))
            rc = write_hist(&w[T_PATHH], id, "path", x->name, x->latency);
    }
    return rc;
}

static int write_exec_rows(struct writer *w, int64_t id, const struct sim_result *r)
{
    int rc = 0;
    for (int e = 0; e < r->nexecs && !rc; e++) {
        const struct sim_exec_result *x = &r->execs[e];
        w_int(w, "run_id", id);
        w_int(w, "executor", x->id);
        w_text(w, "kind", x->kind);
        w_real(w, "busy_frac", x->busy_frac);
        w_int(w, "batches", (int64_t)x->batches);
        w_int(w, "requests", (int64_t)x->requests);
        w_int(w, "models_loaded", x->models_loaded);
        w_int(w, "load_events", (int64_t)x->load_events);
        w_real(w, "up_s", x->up_s);
        w_real(w, "wasted_ms", x->wasted_ms);
        w_real(w, "load_busy_frac", x->load_busy_frac);
        w_int(w, "evictions", (int64_t)x->evictions);
        w_int(w, "rejected", (int64_t)x->rejected);
        w_int(w, "preemptions", (int64_t)x->preemptions);
        w_int(w, "node", x->node);
        w_text(w, "class", x->cpu ? "cpu" : "gpu");
        /* a CPU executor's model, cores and core-seconds; NULL for a GPU */
        w_text(w, "model", x->cpu ? r->models[x->model].name : NULL);
        w_real(w, "cores", x->cpu ? x->cores : NAN);
        w_real(w, "core_s", x->cpu ? x->core_s : NAN);
        rc = w_row(w);
    }
    return rc;
}

static int write_series_rows(struct writer *w, int64_t id, const struct sim_store_run *run,
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
        w_int(w, "run_id", id);
        w_real(w, "t_s", (double)p->t / 1e9);
        w_text(w, "series", sn);
        w_text(w, "key", key);
        w_real(w, "value", p->value);
        rc = w_row(w);
    }
    return rc;
}

static int write_search_rows(struct writer *w, int64_t id, const struct sim_goodput *g)
{
    int rc = 0;
    for (int i = 0; g && i < g->nprobes && !rc; i++) {
        const struct sim_probe *p = &g->probes[i];
        w_int(w, "run_id", id);
        w_int(w, "probe", i);
        w_real(w, "scale", p->scale);
        w_real(w, "offered_rps", p->offered_rps);
        w_int(w, "pass", p->pass);
        w_text(w, "worst_model", p->worst_model);
        w_real(w, "worst_bad_frac", p->worst_bad_frac);
        w_real(w, "worst_p99_ms", p->worst_p99_ms);
        w_real(w, "all_bad_frac", p->all_bad_frac);
        w_text(w, "rule", sim_search_rule_names[g->rule]);
        rc = w_row(w);
    }
    return rc;
}

/* A sweep point's row: the run's id and "ok", or (failed) run_id NULL, "failed" and its
 * error. */
static int write_point_row(struct writer *w, const struct sim_store_point *pt, int64_t run_id,
                           bool failed, const char *error)
{
    w_text(w, "sweep", pt->sweep);
    w_int(w, "point", pt->point);
    w_text(w, "point_key", pt->key);
    w_text(w, "settings_json", pt->settings_json);
    if (failed)
        w_null(w, "run_id");
    else
        w_int(w, "run_id", run_id);
    w_text(w, "status", failed ? "failed" : "ok");
    w_text(w, "error", failed ? error : NULL);
    return w_row(w);
}

int sim_store_write(struct sim_store *st, const struct sim_store_run *run,
                    const struct sim_result *r, int64_t *run_id)
{
    static const char *const tables[T_NWRITERS] = {
        [T_RUN] = "runs", [T_JOB] = "job_stats", [T_JOBW] = "job_workers",
        [T_MODEL] = "model_stats", [T_EXEC] = "executor_stats", [T_TS] = "timeseries",
        [T_BATCH] = "batch_hist", [T_LAT] = "latency_hist", [T_QUEUE] = "queue_hist",
        [T_PATH] = "path_stats", [T_PATHH] = "path_hist", [T_SEARCH] = "goodput_search",
        [T_POINT] = "sweep_points"};
    const struct sim_store_point *pt = run->point;
    struct writer w[T_NWRITERS] = {0};
    char started[32];
    sim_utc_now(started);
    int rc = exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
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
    for (int t = 0; t < T_NWRITERS && !rc; t++)
        rc = w_open(st, &w[t], t == T_POINT ? "INSERT OR REPLACE" : "INSERT", tables[t], "");
    if (rc || (rc = write_run_row(&w[T_RUN], run, r, started)))
        goto rollback;
    int64_t id = sqlite3_last_insert_rowid(st->db);
    if ((rc = write_job_rows(&w[T_JOB], &w[T_JOBW], id, r)) || (rc = write_model_rows(w, id, r)) ||
        (rc = write_exec_rows(&w[T_EXEC], id, r)) ||
        (rc = write_series_rows(&w[T_TS], id, run, r)) ||
        (rc = write_search_rows(&w[T_SEARCH], id, run->goodput)) ||
        (pt && (rc = write_point_row(&w[T_POINT], pt, id, false, NULL))) || (rc = exec(st, "COMMIT")))
        goto rollback;
    if (run_id)
        *run_id = id;
    goto out;
rollback:
    rollback(st);
out:
    for (int t = 0; t < T_NWRITERS; t++)
        w_close(&w[t]);
    return rc;
}

int sim_store_point_failed(struct sim_store *st, const struct sim_store_point *pt, const char *error)
{
    struct writer w;
    /* a failure never replaces a point another process has stored */
    int rc = w_open(st, &w, "INSERT", "sweep_points",
                    "ON CONFLICT(sweep, point_key) DO UPDATE SET run_id = NULL, "
                    "status = excluded.status, error = excluded.error WHERE status != 'ok'");
    if (!rc)
        rc = write_point_row(&w, pt, 0, true, error);
    w_close(&w);
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
    struct writer w;
    if (!rc && *out == SIM_CLAIM_OURS &&
        !(rc = w_open(st, &w, "INSERT OR REPLACE", "sweep_claims", ""))) {
        w_text(&w, "sweep", sweep);
        w_text(&w, "point_key", key);
        w_int(&w, "pid", (int64_t)getpid());
        w_text(&w, "host", me);
        w_real(&w, "claimed_at", sim_wall_unix());
        rc = w_row(&w);
        w_close(&w);
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
    struct writer wp = {0}, wr = {0};
    sqlite3_stmt *q_del = NULL;
    char created[32];
    sim_utc_now(created);
    int rc = exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = prep(st, "DELETE FROM plan_probes WHERE plan = ?", &q_del)))
        goto rollback;
    sqlite3_bind_text(q_del, 1, p->id, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q_del) != SQLITE_DONE) {
        rc = db_err(st, "replacing the plan's probes");
        goto rollback;
    }
    if ((rc = w_open(st, &wp, "INSERT OR REPLACE", "plans", "")) ||
        (rc = w_open(st, &wr, "INSERT", "plan_probes", "")))
        goto rollback;
    /* static columns are NULL without a passing probe, autoscale ones without autoscaling */
    const struct sim_result *a = p->autoscale_result, *s = p->static_result;
    w_text(&wp, "plan", p->id);
    w_text(&wp, "name", p->name);
    w_text(&wp, "config_hash", hash);
    w_text(&wp, "created_at", created);
    w_real(&wp, "slo_percentile", percentile);
    w_int(&wp, "lower_bound", p->lower_bound);
    if (s) {
        w_int(&wp, "static_gpus", p->static_gpus);
        w_int(&wp, "static_run_id", p->static_run_id);
        w_real(&wp, "static_gpu_s", s->gpu_s);
    } else {
        w_null(&wp, "static_gpus");
        w_null(&wp, "static_run_id");
        w_null(&wp, "static_gpu_s");
    }
    w_text(&wp, "stopping_rule", "doubling+bisection");
    w_int(&wp, "monotone", p->monotone);
    w_text(&wp, "autoscaler", a ? p->autoscaler : NULL);
    if (a) {
        w_int(&wp, "autoscale_run_id", p->autoscale_run_id);
        w_int(&wp, "autoscale_slo_met", sim_rule_pass(p->rule, a));
    } else {
        w_null(&wp, "autoscale_run_id");
        w_null(&wp, "autoscale_slo_met");
    }
    w_real(&wp, "autoscale_gpu_s", a ? a->gpu_s : NAN);
    w_real(&wp, "autoscale_bad_rate", a ? a->bad_rate : NAN);
    w_real(&wp, "saving_frac", a && s && s->gpu_s > 0 ? 1 - a->gpu_s / s->gpu_s : NAN);
    w_text(&wp, "rule", sim_search_rule_names[p->rule]);
    if ((rc = w_row(&wp)))
        goto rollback;
    for (int i = 0; i < p->nprobes && !rc; i++) {
        const struct sim_plan_probe *pr = &p->probes[i];
        w_text(&wr, "plan", p->id);
        w_int(&wr, "probe", i);
        w_int(&wr, "gpus", pr->gpus);
        w_int(&wr, "run_id", pr->run_id);
        w_int(&wr, "pass", pr->pass);
        w_text(&wr, "worst_model", pr->worst_model);
        w_real(&wr, "worst_bad_frac", pr->worst_bad_frac);
        w_real(&wr, "all_bad_frac", pr->all_bad_frac);
        rc = w_row(&wr);
    }
    if (rc || (rc = exec(st, "COMMIT")))
        goto rollback;
    goto out;
rollback:
    rollback(st);
out:
    sqlite3_finalize(q_del);
    w_close(&wp);
    w_close(&wr);
    return rc;
}

int sim_store_profiles_write(struct sim_store *st, const struct sim_store_profile *p, int n,
                             const struct sim_store_profile_point *const *pts, const int *npts)
{
    struct writer wp = {0}, wt = {0};
    char when[32];
    sim_utc_now(when);
    int rc = exec(st, "BEGIN IMMEDIATE");
    if (rc)
        return rc;
    if ((rc = w_open(st, &wp, "INSERT", "profiles", "")) ||
        (rc = w_open(st, &wt, "INSERT", "profile_points", "")))
        goto fail;
    for (int i = 0; i < n && !rc; i++) {
        const struct sim_store_profile *r = &p[i];
        w_text(&wp, "executor_kind", r->executor_kind);
        w_text(&wp, "model", r->model);
        w_text(&wp, "form", r->form);
        w_real(&wp, "alpha_ms", r->alpha_ms);
        w_real(&wp, "beta_ms", r->beta_ms);
        w_real(&wp, "a_ms", r->a_ms);
        w_real(&wp, "b_ms", r->b_ms);
        w_real(&wp, "c_ms", r->c_ms);
        w_text(&wp, "table_json", r->table_json);
        w_text(&wp, "source", r->source ? r->source : "servesim-calibrate");
        w_text(&wp, "measured_at", when);
        w_text(&wp, "network", r->network);
        w_text(&wp, "backend", r->backend);
        w_text(&wp, "device", r->device);
        w_text(&wp, "versions", r->versions);
        w_text(&wp, "host", r->host);
        w_text(&wp, "precision", r->precision);
        w_int(&wp, "threads", r->threads);
        w_real(&wp, "r2", r->r2);
        w_real(&wp, "max_rel_err", r->max_rel_err);
        w_text(&wp, "fits_json", r->fits_json);
        w_text(&wp, "recommendation", r->recommendation);
        w_real(&wp, "weights_mb", r->weights_mb);
        w_real(&wp, "activations_mb", r->activations_mb);
        w_real(&wp, "workspace_mb", r->workspace_mb);
        w_real(&wp, "load_ms", r->load_ms);
        w_text(&wp, "exec", r->exec);
        if ((rc = w_row(&wp)))
            break;
        int64_t id = sqlite3_last_insert_rowid(st->db);
        for (int j = 0; j < (npts ? npts[i] : 0) && !rc; j++) {
            const struct sim_store_profile_point *t = &pts[i][j];
            w_int(&wt, "profile_id", id);
            w_int(&wt, "batch", t->batch);
            w_int(&wt, "reps", t->reps);
            w_real(&wt, "median_ms", t->median_ms);
            w_real(&wt, "p99_ms", t->p99_ms);
            w_real(&wt, "mean_ms", t->mean_ms);
            w_real(&wt, "sd_ms", t->sd_ms);
            w_real(&wt, "min_ms", t->min_ms);
            w_real(&wt, "max_ms", t->max_ms);
            w_real(&wt, "activations_mb", t->activations_mb);
            rc = w_row(&wt);
        }
    }
    if (!rc)
        rc = exec(st, "COMMIT");
fail:
    if (rc)
        rollback(st);
    w_close(&wp);
    w_close(&wt);
    return rc;
}
