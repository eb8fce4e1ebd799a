/* sim_readback — results read back for analysis (`servesim compare`, `servesim export`).
 *
 * A results source is either a results database (opened read-only, never migrated; schema
 * versions 1..SIM_STORE_SCHEMA) or its text export, format `servesim-results/1`: a tab-separated
 * file with one line per run and model that diffs well and is what experiments/regression keeps
 * as its committed baseline (format servesim-results/1, without the training-job metrics,
 * is still read: those read as "-"). Either way it becomes a list of samples: one per (run, model),
 * plus one per run with model "*" for the run as a whole.
 *
 * An experiment is identified by its name, kind and config key (the FNV-1a 64 hash of the
 * run's canonical config JSON with `seed` removed), so the runs of one experiment under
 * several seeds group together. Its label is what a person reads: the sweep point's settings
 * without the seed ("policy.name=nexus workload.rate_rps=3000"), or the policy's name. */
#ifndef SIM_READBACK_H
#define SIM_READBACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The metrics compared, per run ("*") and per model. NAN where a metric does not apply:
 * gpu_s, makespan_s and job_exec_s per model, the last two in runs without training jobs;
 * p99 of a model that completed nothing, bad rate of one offered nothing. */
enum sim_metric {
    SIM_MET_GOODPUT,    /* req/s: the goodput search's result, else on-time throughput */
    SIM_MET_P99,        /* ms: the model's p99 latency; per run the worst model's */
    SIM_MET_BAD,        /* (late + dropped) / offered */
    SIM_MET_GPU_S,      /* executor-seconds billed (per run only) */
    SIM_MET_MAKESPAN,   /* s: until the last training job ended (per run, runs with jobs) */
    SIM_MET_JOB_EXEC,   /* s: the jobs' mean execution time, arrival to end (likewise) */
    SIM_MET_N
};

extern const char *const sim_metric_names[SIM_MET_N];   /* "goodput_rps", "p99_ms", ... */
extern const int sim_metric_higher_is_better[SIM_MET_N];

struct sim_sample {
    char *name, *kind, *policy, *key, *label, *model;
    uint64_t seed;
    int64_t run;                        /* the run's id in its database; 0 from text */
    double v[SIM_MET_N];
};

struct sim_samples {
    struct sim_sample *s;
    size_t n, cap;
};

struct sqlite3;
/* Opens a results database read-only (never migrated) and reads its schema version; a file
 * that is not one, or one from a newer servesim, is SIM_EINVAL naming the file. On error *db
 * is closed and NULL. Used by compare, export and plot. */
int sim_results_open(const char *path, struct sqlite3 **db /* OUT */, int *version /* OUT */);
/* Checks what a results database must be before SQLite opens it (`path` as the user named
 * it): a regular file or none (never a device such as /dev/null, a FIFO or a folder), and,
 * once open with a schema version, servesim's tables (another program's SQLite file with a
 * user_version of its own is not one). SIM_EINVAL naming the file. */
int sim_results_check_file(const char *path);
int sim_results_check_tables(const char *path, struct sqlite3 *db, int version);

/* Loads every finished run of `path` (a database or a servesim-results/1 file, told apart by
 * the SQLite header). A run repeated with the same seed keeps its latest copy. Errors name the
 * file (and line); a file that is neither, a database without runs or from a newer servesim
 * are SIM_EINVAL. */
int sim_results_load(const char *path, struct sim_samples *out /* OUT */);
void sim_results_free(struct sim_samples *ss);
/* Writes `ss` as servesim-results/1, sorted by name, kind, key, seed, model. */
int sim_results_export(const struct sim_samples *ss, FILE *f);

/* A label from a sweep point's settings JSON ({"policy.name":"nexus","seed":2}): "k=v" pairs
 * joined by spaces, without `seed` and without the keys in drop[0..ndrop). Returns a malloc'd
 * string ("" for NULL or no settings), NULL when out of memory. */
char *sim_results_label(const char *settings_json, const char *const *drop, int ndrop);

/* The config key of a canonical config JSON text: hash of it without `seed` (16 hex digits). */
int sim_results_config_key(const char *config_json, char out[17]);

#endif
