/* test_oom — out of memory is an error (issue 53, item 5): a test allocator fails the n-th
 * allocation of servesim's own code (malloc, calloc, realloc and strdup are wrapped at link
 * time, -Wl,--wrap; cJSON's through its hooks), and for every n a config is loaded, run and
 * written to a results database. Each n runs in a child process, so that an abort shows as
 * one: the child must exit with success or SIM_ENOMEM, free everything (LeakSanitizer, under
 * the dev preset), and leave the database with the whole run or none of it. */
#include <errno.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>


#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_result.h"
#include "sim_store.h"
#include "sim_sweep.h"
#include "test.h"

static long fail_at, calls;             /* fail the fail_at-th call (0: never); calls so far */
static bool fail_on;                    /* and every call after it (memory stays exhausted) */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static bool fail_now(void)
{
    ++calls;
    return fail_at && (calls == fail_at || (fail_on && calls > fail_at));
}
void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return fail_now() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }

/* Two models, two GPUs, Symphony, time series on: the parser, the engine, the policy and the
 * store each allocate. */
#define OOM_CFG                                                                               \
    "{\"name\":\"oom\",\"seed\":2,\"duration_s\":4,\"warmup_s\":1,\"cluster\":{\"gpus\":2},"   \
    "\"models\":[{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":4,\"slo_ms\":40,\"max_batch\":4},"  \
    "{\"name\":\"b\",\"alpha_ms\":2,\"beta_ms\":6,\"slo_ms\":60,\"max_batch\":8}],"            \
    "\"workload\":{\"rate_rps\":200},\"policy\":{\"name\":\"symphony\"},"                      \
    "\"metrics\":{\"sample_period_s\":1}}"

/* ROMA on a node of CPU cores and GPUs: its CPU executors are added at init and grow its
 * tables during the run. */
#define ROMA_CFG                                                                              \
    "{\"name\":\"oomroma\",\"seed\":4,\"duration_s\":20,\"warmup_s\":5,"                    \
    "\"cluster\":{\"nodes\":[{\"cores\":6,\"gpus\":1}]},\"models\":[{\"name\":\"m\","          \
    "\"slo_ms\":500,\"profiles\":{\"1080ti\":{\"form\":\"linear\",\"alpha_ms\":10,"             \
    "\"beta_ms\":40},\"cpu\":{\"form\":\"linear\",\"alpha_ms\":20,\"beta_ms\":80}}}],"          \
    "\"workload\":{\"rate_rps\":12},\"policy\":{\"name\":\"roma\"},"                          \
    "\"metrics\":{\"sample_period_s\":1}}"

/* The same models under the policies that ask the engine for its optional indexes: dynamoml
 * (queue heads in order, at the frontend and every pod), shepherd (the running index and its
 * brief) and Clockwork (its per-GPU tables, from calloc). */
#define POLICY_CFG(p)                                                                         \
    "{\"name\":\"oom" p "\",\"seed\":3,\"duration_s\":4,\"warmup_s\":1,\"cluster\":{\"gpus\":2},"  \
    "\"models\":[{\"name\":\"a\",\"alpha_ms\":1,\"beta_ms\":4,\"slo_ms\":40,\"max_batch\":4},"  \
    "{\"name\":\"b\",\"alpha_ms\":2,\"beta_ms\":6,\"slo_ms\":60,\"max_batch\":8}],"            \
    "\"workload\":{\"rate_rps\":300},\"policy\":{\"name\":\"" p "\"},"                           \
    "\"metrics\":{\"sample_period_s\":1}}"

static const char *cfg_text = OOM_CFG;  /* the config the pipeline loads */
static const char *sweep_file;          /* set: the pipeline is a sweep of this file */

/* Load, run and store once (or run the sweep); the status. */
static int pipeline(const char *db)
{
    if (sweep_file)
        return sim_sweep_run(sweep_file, db, 1, NULL, 0, true, false);
    struct sim_config *cfg = NULL;
    struct sim_result *r = NULL;
    struct sim_store *st = NULL;
    int rc = sim_config_from_text(cfg_text, "oom", ".", &cfg);
    if (!rc)
        rc = sim_run_once(cfg, 1.0, NULL, &r);
    if (!rc)
        rc = sim_store_open(db, &st);
    if (!rc)
        rc = sim_config_store(st, cfg, "run", r, NULL, NULL, NULL);
    sim_store_close(st);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
    return rc;
}

/* The child's exit: 0 done, 10 out of memory (said as such), 12 a sweep whose failed points
 * say why in sweep_points.error, 11 another error. */
static int child(long at, const char *db, const char *count_file)
{
    alarm(60);                          /* a loop that never ends is a failure (a signal) */
    fail_at = at;
    calls = 0;
    int rc = pipeline(db);
    if (count_file) {
        FILE *f = fopen(count_file, "w");
        if (f) {
            fprintf(f, "%ld\n", calls);
            fclose(f);
        }
    }
    const char *msg = sim_err_msg_for(rc);   /* what the commands print */
    if (rc && (rc != SIM_ENOMEM || !strstr(msg, "memory")) &&
        !(sweep_file && rc == SIM_EIO && strstr(msg, "points failed")))
        fprintf(stderr, "allocation %ld failed: %s (%s)\n", at, sim_err_name(rc), msg);
    if (sweep_file && rc == SIM_EIO && strstr(msg, "points failed"))
        return 12;
    return rc == 0 ? 0 : rc == SIM_ENOMEM && strstr(msg, "memory") ? 10 : 11;
}

/* runs * 1e6 + model rows; with a sweep, -1 unless every run is a stored point's and
 * every point stored ok has its run (a failed point is kept as failed, with no run). */
static int64_t runs_in(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *q = NULL;
    int64_t n = -1;
    if (access(db, F_OK) != 0)
        return 0;
    if (sqlite3_open(db, &h) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sweep_file ?
                              "SELECT CASE WHEN (SELECT count(*) FROM runs) = (SELECT count(*) "
                              "FROM sweep_points WHERE status = 'ok' AND run_id IN (SELECT id "
                              "FROM runs)) THEN (SELECT count(*) FROM runs) * 1000000 + (SELECT "
                              "count(*) FROM model_stats) ELSE -1 END" :
                              "SELECT (SELECT count(*) FROM runs) * 1000000 + "
                              "(SELECT count(*) FROM model_stats)", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(h);
    return n;
}

static bool failed_points_say_memory(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *q = NULL;
    bool yes = false;
    if (sqlite3_open(db, &h) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT count(*) FROM sweep_points WHERE status = 'failed' AND "
                              "error LIKE '%memory%'", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        yes = sqlite3_column_int(q, 0) > 0;
    sqlite3_finalize(q);
    sqlite3_close(h);
    return yes;
}

/* Every allocation of the pipeline failed in turn (`whole`: the rows a finished pipeline
 * leaves; a failed one leaves none, or with a sweep its finished points whole); with
 * fail_on, that allocation and every one after it. */
static void fail_each(int64_t whole)
{
    char dir[] = "/tmp/servesim_oom_XXXXXX", db[64], count[64];
    REQUIRE_OK(mkdtemp(dir) ? 0 : -1);
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(count, sizeof count, "%s/n", dir);
    fflush(NULL);
    pid_t p = fork();
    if (p == 0)
        exit(child(0, db, count));
    int status = 0;
    waitpid(p, &status, 0);
    long total = 0;
    FILE *f = fopen(count, "r");
    CHECK(f && fscanf(f, "%ld", &total) == 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the pipeline without failures: status %d, %ld allocations", status, total);
    if (f)
        fclose(f);
    CHECK(total > 100 && runs_in(db) == whole, "%ld allocations, rows %lld", total,
          (long long)runs_in(db));
    int bad = 0, nomem = 0;
    for (long at = 1; at <= total && bad < 5; at++) {
        unlink(db);
        fflush(NULL);
        if ((p = fork()) == 0)
            exit(child(at, db, NULL));
        waitpid(p, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        int64_t rows = runs_in(db);
        bool ok = code == 0 ? rows == whole : sweep_file ? rows >= 0 : rows <= 0;
        if (code == 12)                 /* a failed point says it ran out of memory */
            ok = ok && failed_points_say_memory(db);
        nomem += code == 10;
        if ((code != 0 && code != 10 && code != 12) || !ok) {
            bad++;
            CHECK(false, "allocation %ld of %ld failed: exit %d (0 done, 10 out of memory; 23 "
                  "a leak; 128+ a signal), rows %lld", at, total, code, (long long)rows);
        }
    }
    CHECK(nomem > total / 2, "only %d of %ld failures said out of memory", nomem, total);
    printf("  %ld allocations, each failed %s: %d said out of memory, the rest were not "
           "needed\n", total, fail_on ? "with all after it" : "once", nomem);
    unlink(db);
    unlink(count);
    rmdir(dir);
}

/* A config loaded, run and written. */
static void every_allocation_fails_cleanly(void)
{
    fail_each(1000002);
}

/* A sweep of two points (-j 1: a worker process a point), written point by point. */
static void sweep_allocations_fail_cleanly(void)
{
    char dir[] = "/tmp/servesim_oomsw_XXXXXX", base[80], sweep[80];
    REQUIRE_OK(mkdtemp(dir) ? 0 : -1);
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(sweep, sizeof sweep, "%s/sweep.json", dir);
    FILE *f = fopen(base, "w");
    REQUIRE_OK(f ? 0 : -1);
    fputs(OOM_CFG, f);
    fclose(f);
    f = fopen(sweep, "w");
    REQUIRE_OK(f ? 0 : -1);
    fputs("{\"name\": \"oomsweep\", \"base\": \"base.json\", \"mode\": \"run\", "
          "\"grid\": {\"seed\": [1, 2]}}", f);
    fclose(f);
    sweep_file = sweep;
    fail_each(2000004);
    sweep_file = NULL;
    unlink(base);
    unlink(sweep);
    rmdir(dir);
}

/* Memory that stays exhausted: from the n-th allocation on, every one fails; no retry saves
 * the run, so a loop that waits on an allocation would never end (the child's alarm). */
static void exhausted_memory_fails_cleanly(void)
{
    fail_on = true;
    fail_each(1000002);
    fail_on = false;
}

/* ROMA, whose CPU executors and tables grow as the run goes, once and exhausted. */
static void roma_allocations_fail_cleanly(void)
{
    cfg_text = ROMA_CFG;
    fail_each(1000001);
    fail_on = true;
    fail_each(1000001);
    fail_on = false;
    cfg_text = OOM_CFG;
}

/* dynamoml, shepherd and Clockwork, once and exhausted. */
static void indexed_policies_fail_cleanly(void)
{
    static const char *const cfgs[] = {POLICY_CFG("dynamoml"), POLICY_CFG("shepherd"),
                                       POLICY_CFG("clockwork")};
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        cfg_text = cfgs[i];
        fail_each(1000002);
        fail_on = true;
        fail_each(1000002);
        fail_on = false;
    }
    cfg_text = OOM_CFG;
}

TEST_MAIN({"every_allocation_fails_cleanly", every_allocation_fails_cleanly},
          {"indexed_policies_fail_cleanly", indexed_policies_fail_cleanly},
          {"roma_allocations_fail_cleanly", roma_allocations_fail_cleanly},
          {"exhausted_memory_fails_cleanly", exhausted_memory_fails_cleanly},
          {"sweep_allocations_fail_cleanly", sweep_allocations_fail_cleanly})
