/* sim_store — the SQLite results database (schema: docs/results.md, version SIM_STORE_SCHEMA).
 *
 * One database collects many runs. A run, with every row that belongs to it, is written in
 * one transaction: an error or interruption leaves nothing of it behind. The schema version
 * is PRAGMA user_version; a database from a newer servesim is refused, an older one is
 * migrated in place (1 -> 2 adds columns and the sweep_points table; 2 -> 3 adds cost and
 * trace-gap columns to runs and the plans and plan_probes tables; 3 -> 4 adds calibration
 * provenance columns to profiles and the profile_points table; 4 -> 5 adds the queue_hist
 * table; 7 -> 8 adds runs.makespan_s and the job_stats and job_workers tables; 10 -> 11 adds
 * the sweep_claims table). */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_searches.h"
#include "sim_world.h"

#define SIM_STORE_SCHEMA 14

/* How long any connection to a results database waits for another's lock before giving up
 * (ms): a writer for a reader's statement to finish, a reader for a writer's commit. Long, so
 * that reading a database while a sweep writes to it never fails a point or the read. */
#define SIM_STORE_BUSY_MS 600000

/* The busy handler of every connection, reader or writer (sqlite3_busy_handler, its context
 * the database's path as the user named it): waits SIM_STORE_BUSY_MS at most, and says on
 * stderr once the wait passes 2 s what it waits for, so no command waits in silence. */
int sim_store_busy(void *path, int n);
/* The path as the handler's context (SQLite's is not const; the handler only reads it). */
static inline void *sim_store_busy_ctx(const char *path)
{
    union { const char *c; void *v; } u = {.c = path};
    return u.v;
}

/* The free space a writer wants on the database's disk before it starts (bytes): a run of
 * the quickstart stores about 80 KiB, a plan's runs with time series a few hundred. */
#define SIM_STORE_SPACE_MIN (4.0 * 1024 * 1024)

struct sim_store;

int sim_store_open(const char *path, struct sim_store **out /* OUT */);
void sim_store_close(struct sim_store *st);
/* A sweep point a run belongs to (written in the run's own transaction). */
struct sim_store_point {
    const char *sweep, *key, *settings_json;
    const char *labels_json;            /* the sweep file's words for the settings, or NULL */
    int point;
    bool *stored_before;               /* OUT (may be NULL): another process had stored this
                                        * point already, so this run was not written (two
                                        * sweeps of one database store each point once) */
};

/* What the database keeps of a run besides its result (the experiment layer fills it from
 * the run's config: sim_config_store). */
struct sim_store_run {
    const char *kind;                   /* "run" or "goodput" */
    const char *config_json;            /* the canonical config (runs.config_json) */
    const char *config_hash;            /* its hash without the seed (runs.config_hash) */
    const struct sim_world *world;      /* its world: node names key the node.* series */
    const struct sim_goodput *goodput;  /* NULL for a plain run */
    const struct sim_store_point *point;    /* NULL outside sweeps */
};

int sim_store_write(struct sim_store *st, const struct sim_store_run *run,
                    const struct sim_result *r, int64_t *run_id /* OUT */);
/* Records a failed sweep point (no run). */
int sim_store_point_failed(struct sim_store *st, const struct sim_store_point *pt, const char *error);
/* Whether a sweep point finished (status ok) already. */
int sim_store_point_done(struct sim_store *st, const char *sweep, const char *key, bool *done);
/* Claiming a point before running it, so that two processes running one sweep on one
 * database simulate each point once (sweep_claims): in one transaction, DONE where it is
 * stored, TAKEN where another live process claimed it (*holder: its pid), else OURS (claimed
 * by this process). A claim whose process is gone (killed) is taken over; one from another
 * host is trusted for SIM_STORE_CLAIM_REMOTE_S. Release it once the point is written or
 * failed. */
enum sim_claim { SIM_CLAIM_OURS, SIM_CLAIM_DONE, SIM_CLAIM_TAKEN };
#define SIM_STORE_CLAIM_REMOTE_S (24 * 3600.0)
int sim_store_point_claim(struct sim_store *st, const char *sweep, const char *key,
                          enum sim_claim *out /* OUT */, int64_t *holder /* OUT */);
int sim_store_point_release(struct sim_store *st, const char *sweep, const char *key);
/* How many points of sweep `id` finished (status ok). */
int sim_store_sweep_done(struct sim_store *st, const char *id, long *n);
/* Another sweep of the same name (sweep ids "NAME@hash" other than `id`) in the database: its
 * id into other (size bytes) and its points into *npoints; *npoints 0 when there is none. */
int sim_store_sweep_namesake(struct sim_store *st, const char *name, const char *id,
                             char *other, size_t size, long *npoints);
/* The whole database as bytes (sqlite3_serialize; malloc'd, the caller frees): a sweep
 * point written into a ":memory:" store travels to the sweep's writer this way. */
int sim_store_image(struct sim_store *st, unsigned char **img /* OUT */, size_t *n /* OUT */);
/* Adds every row of an image (sim_store_image, same schema version) to st in one
 * transaction: runs and profiles get new ids after st's largest, the rows that refer to them
 * follow, sweep points and plans replace their namesakes. origin names the image's source in
 * errors. */
int sim_store_merge(struct sim_store *st, const unsigned char *img, size_t n, const char *origin);
struct sim_plan;
/* A capacity plan's summary and probes (the probes' runs are written already); replaces an
 * earlier plan with the same id. One transaction. */
int sim_store_plan_write(struct sim_store *st, const struct sim_plan *p, const char *config_hash,
                         double percentile);
/* One calibrated profile (servesim-calibrate) with its per-batch measurements. Text fields
 * may be NULL; numbers that do not apply are NAN (stored as NULL). */
struct sim_store_profile {
    const char *executor_kind, *model, *form, *source, *network, *backend, *device, *versions,
        *host, *precision, *fits_json, *recommendation, *table_json;
    const char *exec;        /* GPU: "graph, fused, nhwc" etc. (NULL: CPU) */
    int threads;
    double alpha_ms, beta_ms, a_ms, b_ms, c_ms, r2, max_rel_err;
    double weights_mb, activations_mb, workspace_mb, load_ms;
};
struct sim_store_profile_point {
    int batch, reps;
    double median_ms, p99_ms, mean_ms, sd_ms, min_ms, max_ms, activations_mb;
};
/* Writes profiles[0..n) and their points in one transaction (all or nothing). */
int sim_store_profiles_write(struct sim_store *st, const struct sim_store_profile *p, int n,
                             const struct sim_store_profile_point *const *pts, const int *npts);

/* The schema as SQL text (for docs and tests). */
const char *sim_store_schema_sql(void);

#endif
