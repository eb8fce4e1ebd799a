/* sim_readback — results databases and their text export read back as samples (see
 * sim_readback.h); the reading side of `servesim compare` and `servesim export`. */
#include "sim_readback.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_err.h"
#include "sim_json.h"
#include "sim_store.h"
#include "sim_rng.h"

const char *const sim_metric_names[SIM_MET_N] = {"goodput_rps", "p99_ms", "bad_rate", "gpu_s",
                                                 "makespan_s", "job_exec_s"};
const int sim_metric_higher_is_better[SIM_MET_N] = {1, 0, 0, 0, 0, 0};

/* The text form; version 1 lacks the last two metrics (read as "-"). */
#define TEXT_MAGIC "# servesim-results/2"
#define TEXT_MAGIC_V1 "# servesim-results/1"
#define TEXT_COLUMNS_V1 "name\tkind\tpolicy\tconfig_key\tseed\tlabel\tmodel\tgoodput_rps\tp99_ms\tbad_rate\tgpu_s"
#define TEXT_COLUMNS TEXT_COLUMNS_V1 "\tmakespan_s\tjob_exec_s"
#define TEXT_NCOLS 13
#define TEXT_NCOLS_V1 11

static void sample_free(struct sim_sample *x)
{
    free(x->name);
    free(x->kind);
    free(x->policy);
    free(x->key);
    free(x->label);
    free(x->model);
}

void sim_results_free(struct sim_samples *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        sample_free(&ss->s[i]);
    free(ss->s);
    memset(ss, 0, sizeof *ss);
}

/* Appends a sample; takes copies of the strings. */
static int push(struct sim_samples *ss, const char *name, const char *kind, const char *policy,
                const char *key, const char *label, const char *model, uint64_t seed,
                int64_t run, const double v[SIM_MET_N])
{
    if (ss->n == ss->cap) {
        size_t cap = ss->cap ? 2 * ss->cap : 64;
        struct sim_sample *s = realloc(ss->s, cap * sizeof *s);
        if (!s)
            return SIM_ENOMEM;
        ss->s = s;
        ss->cap = cap;
    }
    struct sim_sample *x = &ss->s[ss->n];
    memset(x, 0, sizeof *x);
    x->name = strdup(name);
    x->kind = strdup(kind);
    x->policy = strdup(policy);
    x->key = strdup(key);
    x->label = strdup(label);
    x->model = strdup(model);
    x->seed = seed;
    x->run = run;
    memcpy(x->v, v, sizeof x->v);
    if (!x->name || !x->kind || !x->policy || !x->key || !x->label || !x->model) {
        sample_free(x);
        return SIM_ENOMEM;
    }
    ss->n++;
    return 0;
}

/* Appends " key=val" (or " val" without a key) to the label *out of *cap bytes; false on
 * running out of memory. */
static bool label_add(char **out, size_t *cap, const char *key, const char *val)
{
    size_t len = strlen(*out), need = len + (key ? strlen(key) + 1 : 0) + strlen(val) + 2;
    if (need > *cap) {
        char *o = realloc(*out, *cap = 2 * need);
        if (!o)
            return false;
        *out = o;
    }
    snprintf(*out + len, *cap - len, "%s%s%s%s", len ? " " : "", key ? key : "", key ? "=" : "",
             val);
    return true;
}

/* An object value reads as its leaves: a "name" by its value alone ("clockwork"), others as
 * leaf=value ("schedule_ahead_ms=5"); scalars as key=value. */
static bool label_item(char **out, size_t *cap, const cJSON *it, bool nested)
{
    if (cJSON_IsObject(it)) {
        const cJSON *c;
        cJSON_ArrayForEach(c, it) {
            if (!label_item(out, cap, c, true))
                return false;
        }
        return true;
    }
    char *v = cJSON_IsString(it) ? strdup(it->valuestring) : cJSON_PrintUnformatted(it);
    bool ok = v && label_add(out, cap, nested && strcmp(it->string, "name") == 0 ? NULL
                                                                               : it->string, v);
    free(v);
    return ok;
}

char *sim_results_label(const char *settings_json, const char *const *drop, int ndrop)
{
    cJSON *j = settings_json ? cJSON_Parse(settings_json) : NULL;
    size_t cap = 256;
    char *out = malloc(cap);
    if (!out)
        goto done;
    out[0] = '\0';
    const cJSON *it;
    cJSON_ArrayForEach(it, j) {
        bool skip = strcmp(it->string, "seed") == 0;
        for (int d = 0; d < ndrop && !skip; d++)
            skip = strcmp(it->string, drop[d]) == 0;
        if (!skip && !label_item(&out, &cap, it, false)) {
            free(out);
            out = NULL;
            goto done;
        }
    }
done:
    cJSON_Delete(j);
    return out;
}

int sim_results_config_key(const char *config_json, char out[17])
{
    cJSON *j = cJSON_Parse(config_json);
    if (!j)
        return sim_err_set(SIM_EINVAL, "config_json is not valid JSON");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "seed");
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s)
        return SIM_ENOMEM;
    snprintf(out, 17, "%016llx",
             (unsigned long long)sim_fnv1a(SIM_FNV_OFFSET, s, strlen(s)));
    free(s);
    return 0;
}

/* ---- databases ---- */

static int db_fail(const char *path, sqlite3 *db, const char *what)
{
    return sim_err_set(SIM_EINVAL, "%s: %s: %s", path, what, sqlite3_errmsg(db));
}

int sim_results_check_file(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode))
        return 0;
    return sim_err_set(SIM_EINVAL, "%s: expected a results database file, found %s", path,
                       S_ISDIR(sb.st_mode) ? "a folder" : "a device, FIFO or socket (SQLite "
                                                          "keeps a database in a regular file)");
}

int sim_results_check_tables(const char *path, sqlite3 *db, int version)
{
    sqlite3_stmt *q;
    int n = 0;
    if (version <= 0)
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                           "name IN ('meta', 'runs')", -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
    }
    if (n == 2)
        return 0;
    return sim_err_set(SIM_EINVAL, "%s: not a servesim results database (an SQLite database "
                       "with schema version %d but without servesim's tables meta and runs: "
                       "another program's file)", path, version);
}

/* Rolls back the hot journal a writer killed inside a commit left beside `path` (what any
 * connection that may write does on its first read), restoring the last complete commit. */
static int recover_journal(const char *path)
{
    sqlite3 *rw = NULL;
    int rc = sqlite3_open_v2(path, &rw, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_handler(rw, sim_store_busy, sim_store_busy_ctx(path));
        rc = sqlite3_exec(rw, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", rw ? sqlite3_errmsg(rw) : "out of memory");
        sqlite3_close(rw);
        return sim_err_set(SIM_EINVAL, "%s: a write was left unfinished (%s-journal, from a "
                           "process killed inside a commit) and must be rolled back before the "
                           "database can be read; that needs write access to the database and "
                           "its folder, which this process lacks (SQLite: %s): run the same "
                           "command as a user who can write them (the rollback keeps every "
                           "complete run)", path, path, msg);
    }
    sqlite3_close(rw);
    fprintf(stderr, "servesim: %s: rolled back a write left unfinished by a process killed "
            "inside a commit (every complete run is kept)\n", path);
    return 0;
}

int sim_results_open(const char *path, sqlite3 **out, int *version)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    int rc = 0, v = 0;
    *out = NULL;
    int src = SQLITE_OK;
    if ((rc = sim_results_check_file(path)))
        return rc;
    int opened = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (opened == SQLITE_OK) {          /* wait out a writer's commit rather than fail */
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_handler(db, sim_store_busy, sim_store_busy_ctx(path));
        src = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
        if (src == SQLITE_READONLY_ROLLBACK) {
            /* a hot journal: a writer was killed inside a commit, and a read-only connection
             * cannot roll it back; one that may write does, then the read goes on */
            sqlite3_close(db);
            db = NULL;
            if ((rc = recover_journal(path)))
                return rc;
            opened = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
            if (opened == SQLITE_OK) {
                sqlite3_busy_handler(db, sim_store_busy, sim_store_busy_ctx(path));
                src = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
            }
        }
    }
    if (opened != SQLITE_OK) {
        rc = db_fail(path, db, "cannot open");
    } else if ((src & 0xff) == SQLITE_BUSY || (src & 0xff) == SQLITE_LOCKED) {
        rc = sim_err_set(SIM_EINTERNAL, "%s: locked by another process for more than %d s "
                         "(SQLite: %s)", path, SIM_STORE_BUSY_MS / 1000, sqlite3_errmsg(db));
    } else if (src != SQLITE_OK) {
        rc = sim_err_set(SIM_EINVAL, "%s: not a servesim results database (SQLite: %s)", path,
                         sqlite3_errmsg(db));
    } else if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(path, db, "not a servesim results database");
    } else {
        v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : 0;
        if (v == 0)
            rc = sim_err_set(SIM_EINVAL, "%s: not a servesim results database (no schema "
                             "version: an empty or foreign SQLite file)", path);
        else if (v < 1 || v > SIM_STORE_SCHEMA)
            rc = sim_err_set(SIM_EINVAL, "%s: expected a servesim results database (schema "
                             "1..%d), found schema version %d", path, SIM_STORE_SCHEMA, v);
        else
            rc = sim_results_check_tables(path, db, v);
    }
    sqlite3_finalize(q);
    if (rc) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    *version = v;
    return 0;
}

static double column_or_nan(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL ? NAN : sqlite3_column_double(q, col);
}

static int load_db(const char *path, struct sim_samples *ss)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL, *qm = NULL;
    int v = 0, rc = sim_results_open(path, &db, &v);
    if (rc)
        return rc;
    /* columns and tables that later schema versions added */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT r.id, r.name, r.kind, r.policy, r.seed, r.config_json, r.duration_s, "
             "r.warmup_s, r.goodput_rps, r.ontime_rps, r.bad_rate, %s, %s, %s, %s "
             "FROM runs r %s WHERE r.status = 'ok' ORDER BY r.id",
             v >= 3 ? "r.gpu_s" : "NULL", v >= 2 ? "sp.settings_json" : "NULL",
             v >= 8 ? "r.makespan_s" : "NULL",
             v >= 8 ? "(SELECT avg(exec_s) FROM job_stats js WHERE js.run_id = r.id)" : "NULL",
             v >= 2 ? "LEFT JOIN sweep_points sp ON sp.run_id = r.id" : "");
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT model, offered, on_time, late, dropped, p99_ms "
                               "FROM model_stats WHERE run_id = ? ORDER BY model", -1, &qm,
                           NULL) != SQLITE_OK) {
        rc = db_fail(path, db, "reading runs");
        goto out;
    }
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(q, 0);
        const char *name = (const char *)sqlite3_column_text(q, 1);
        const char *kind = (const char *)sqlite3_column_text(q, 2);
        const char *policy = (const char *)sqlite3_column_text(q, 3);
        const char *seed_text = (const char *)sqlite3_column_text(q, 4);
        const char *config = (const char *)sqlite3_column_text(q, 5);
        double measured = sqlite3_column_double(q, 6) - sqlite3_column_double(q, 7);
        char key[17];
        if ((rc = sim_results_config_key(config ? config : "", key))) {
            sim_err_set(SIM_EINVAL, "%s: run %lld: config_json is not valid JSON", path,
                        (long long)id);
            goto out;
        }
        char *label = sim_results_label((const char *)sqlite3_column_text(q, 12), NULL, 0);
        if (!label) {
            rc = SIM_ENOMEM;
            goto out;
        }
        uint64_t seed = seed_text ? strtoull(seed_text, NULL, 10) : 0;
        double run_v[SIM_MET_N] = {
            sqlite3_column_type(q, 8) != SQLITE_NULL && strcmp(kind, "goodput") == 0
                ? sqlite3_column_double(q, 8) : sqlite3_column_double(q, 9),
            NAN, sqlite3_column_double(q, 10), column_or_nan(q, 11), column_or_nan(q, 13),
            column_or_nan(q, 14)};
        size_t first = ss->n;
        /* the run's own row first, its worst p99 filled in from the models */
        rc = push(ss, name, kind, policy, key, label, "*", seed, id, run_v);
        sqlite3_reset(qm);
        sqlite3_bind_int64(qm, 1, id);
        while (!rc && sqlite3_step(qm) == SQLITE_ROW) {
            double offered = sqlite3_column_double(qm, 1), on_time = sqlite3_column_double(qm, 2);
            double bad = sqlite3_column_double(qm, 3) + sqlite3_column_double(qm, 4);
            /* p99 of completed requests: none completed (all dropped) leaves it undefined */
            double completed = on_time + sqlite3_column_double(qm, 3);
            double p99 = sqlite3_column_type(qm, 5) == SQLITE_NULL || completed == 0
                             ? NAN : sqlite3_column_double(qm, 5);
            double mv[SIM_MET_N] = {measured > 0 ? on_time / measured : 0,
                                    offered > 0 ? p99 : NAN, offered > 0 ? bad / offered : NAN,
                                    NAN, NAN, NAN};
            if (!isnan(mv[SIM_MET_P99]) &&
                (isnan(ss->s[first].v[SIM_MET_P99]) || mv[SIM_MET_P99] > ss->s[first].v[SIM_MET_P99]))
                ss->s[first].v[SIM_MET_P99] = mv[SIM_MET_P99];
            rc = push(ss, name, kind, policy, key, label,
                      (const char *)sqlite3_column_text(qm, 0), seed, id, mv);
        }
        free(label);
        if (rc)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_fail(path, db, "reading runs");
out:
    sqlite3_finalize(q);
    sqlite3_finalize(qm);
    sqlite3_close(db);
    return rc;
}

/* ---- the text form ---- */

static int parse_double(const char *t, double *out)
{
    if (strcmp(t, "-") == 0) {
        *out = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *out = strtod(t, &end);
    return *t && !*end && !errno ? 0 : -1;
}

/* What a metric can be: every one a finite non-negative rate, time or count; the bad rate a
 * fraction. */
static bool metric_valid(int m, double v)
{
    return isfinite(v) && v >= 0 && (m != SIM_MET_BAD || v <= 1);
}

static int load_text(const char *path, FILE *f, struct sim_samples *ss)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0, ncols = TEXT_NCOLS;
    long lineno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, TEXT_MAGIC_V1) == 0)
                ncols = TEXT_NCOLS_V1;
            else if (strcmp(line, TEXT_MAGIC) != 0) {
                rc = sim_err_set(SIM_EINVAL, "%s:1: expected a results database or a first line "
                                 "\"%s\", found another first line (a file of another "
                                 "kind?)", path, TEXT_MAGIC);
                break;
            }
            continue;
        }
        if (lineno == 2) {
            const char *want = ncols == TEXT_NCOLS ? TEXT_COLUMNS : TEXT_COLUMNS_V1;
            if (strcmp(line, want) != 0) {
                rc = sim_err_set(SIM_EINVAL, "%s:2: expected the header \"%s\"", path, want);
                break;
            }
            continue;
        }
        if (!line[0] || line[0] == '#')
            continue;
        char *field[TEXT_NCOLS + 1];
        int n = 0;
        for (char *p = line; p && n <= ncols; n++) {
            field[n] = p;
            char *tab = strchr(p, '\t');
            if (tab)
                *tab++ = '\0';
            p = tab;
        }
        if (n != ncols) {
            rc = sim_err_set(SIM_EINVAL, "%s:%ld: expected %d tab-separated fields, found %s",
                             path, lineno, ncols, n > ncols ? "more" : "fewer");
            break;
        }
        double v[SIM_MET_N];
        char *end;
        errno = 0;
        uint64_t seed = strtoull(field[4], &end, 10);
        if (!field[4][0] || *end || errno || field[4][0] == '-') {
            rc = sim_err_set(SIM_EINVAL, "%s:%ld: seed: expected an unsigned integer, found \"%s\"",
                             path, lineno, field[4]);
            break;
        }
        for (int m = 0; m < SIM_MET_N && !rc; m++)
            if (7 + m >= ncols)
                v[m] = NAN;             /* a metric the file's version lacks */
            else if (parse_double(field[7 + m], &v[m]))
                rc = sim_err_set(SIM_EINVAL, "%s:%ld: %s: expected a number or \"-\", found \"%s\"",
                                 path, lineno, sim_metric_names[m], field[7 + m]);
            else if (strcmp(field[7 + m], "-") != 0 && !metric_valid(m, v[m]))
                rc = sim_err_set(SIM_EINVAL, "%s:%ld: %s: expected %s, found \"%s\" (a corrupt "
                                 "export?)", path, lineno, sim_metric_names[m],
                                 m == SIM_MET_BAD ? "a fraction in [0, 1]"
                                                       : "a finite number >= 0", field[7 + m]);
        if (rc || (rc = push(ss, field[0], field[1], field[2], field[3], field[5], field[6], seed, 0, v)))
            break;
    }
    if (!rc && lineno < 2)
        rc = sim_err_set(SIM_EINVAL, "%s: empty file: expected a results database or \"%s\"",
                         path, TEXT_MAGIC);
    free(line);
    return rc;
}

/* ---- both ---- */

static int cmp_sample(const void *pa, const void *pb)
{
    const struct sim_sample *a = pa, *b = pb;
    int c;
    if ((c = strcmp(a->name, b->name)) || (c = strcmp(a->kind, b->kind)) ||
        (c = strcmp(a->key, b->key)))
        return c;
    if (a->seed != b->seed)
        return a->seed < b->seed ? -1 : 1;
    /* "*" sorts before model names: the run's row first */
    if ((c = strcmp(a->model, b->model)))
        return strcmp(a->model, "*") == 0 ? -1 : strcmp(b->model, "*") == 0 ? 1 : c;
    return a->run < b->run ? 1 : a->run > b->run ? -1 : 0;   /* latest run first */
}

/* Sorts and keeps one sample per (name, kind, key, seed, model): the latest run's. */
static void sort_dedup(struct sim_samples *ss)
{
    if (!ss->n)
        return;
    qsort(ss->s, ss->n, sizeof *ss->s, cmp_sample);
    size_t w = 0;
    for (size_t i = 0; i < ss->n; i++) {
        struct sim_sample *x = &ss->s[i];
        if (w && strcmp(ss->s[w - 1].name, x->name) == 0 && strcmp(ss->s[w - 1].kind, x->kind) == 0 &&
            strcmp(ss->s[w - 1].key, x->key) == 0 && ss->s[w - 1].seed == x->seed &&
            strcmp(ss->s[w - 1].model, x->model) == 0) {
            sample_free(x);
            continue;
        }
        ss->s[w++] = *x;
    }
    ss->n = w;
}

int sim_results_load(const char *path, struct sim_samples *out)
{
    memset(out, 0, sizeof *out);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return sim_err_set(SIM_EINVAL, "%s: is a directory: expected a results database or its "
                           "text export", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(SIM_EINVAL, "%s: cannot open: %s", path, strerror(errno));
    char head[16] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    int rc;
    if (got == sizeof head && memcmp(head, "SQLite format 3", 16) == 0) {
        fclose(f);
        rc = load_db(path, out);
    } else {
        rewind(f);
        rc = load_text(path, f, out);
        fclose(f);
    }
    if (!rc && out->n == 0)
        rc = sim_err_set(SIM_EINVAL, "%s: no finished runs in it", path);
    if (rc) {
        sim_results_free(out);
        return rc;
    }
    sort_dedup(out);
    return 0;
}

/* Text fields are written with tabs and line breaks as spaces (they separate fields). */
static void put_text(FILE *f, const char *t, bool first)
{
    if (!first)
        fputc('\t', f);
    for (; *t; t++)
        fputc(*t == '\t' || *t == '\n' || *t == '\r' ? ' ' : *t, f);
}

static void put_num(FILE *f, double x)
{
    if (isnan(x))
        fputs("\t-", f);
    else
        fprintf(f, "\t%.6g", x);
}

int sim_results_export(const struct sim_samples *ss, FILE *f)
{
    fprintf(f, "%s\n%s\n", TEXT_MAGIC, TEXT_COLUMNS);
    for (size_t i = 0; i < ss->n; i++) {
        const struct sim_sample *x = &ss->s[i];
        put_text(f, x->name, true);
        put_text(f, x->kind, false);
        put_text(f, x->policy, false);
        put_text(f, x->key, false);
        fprintf(f, "\t%llu", (unsigned long long)x->seed);
        put_text(f, x->label, false);
        put_text(f, x->model, false);
        for (int m = 0; m < SIM_MET_N; m++)
            put_num(f, x->v[m]);
        fputc('\n', f);
    }
    return ferror(f) ? sim_err_set(SIM_EIO, "writing the results text failed") : 0;
}
