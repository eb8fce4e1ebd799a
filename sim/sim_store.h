/* sim_store — the SQLite results database (schema: docs/results.md, version SIM_STORE_SCHEMA).
 *
 * One database collects many runs. A run, with every row that belongs to it, is written in
 * one transaction: an error or interruption leaves nothing of it behind. The schema version
 * is PRAGMA user_version; a database from a newer servesim is refused, an older one is
 * migrated in place (1 -> 2 adds columns and the sweep_points table; 2 -> 3 adds cost and
 * trace-gap columns to runs and the plans and plan_probes tables). */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_config.h"
#include "sim_report.h"

#define SIM_STORE_SCHEMA 3

struct sim_store;

int sim_store_open(const char *path, struct sim_store **out /* OUT */);
void sim_store_close(struct sim_store *st);
/* A sweep point a run belongs to (written in the run's own transaction). */
struct sim_store_point {
    const char *sweep, *key, *settings_json;
    int point;
};

/* kind: "run" or "goodput"; g is NULL for a run; pt is NULL outside sweeps. */
int sim_store_write(struct sim_store *st, const struct sim_config *cfg, const char *kind,
                    const struct sim_result *r, const struct sim_goodput *g,
                    const struct sim_store_point *pt, int64_t *run_id /* OUT */);
/* Records a failed sweep point (no run). */
int sim_store_point_failed(struct sim_store *st, const struct sim_store_point *pt, const char *error);
/* Whether a sweep point finished (status ok) already. */
int sim_store_point_done(struct sim_store *st, const char *sweep, const char *key, bool *done);
struct sim_plan;
/* A capacity plan's summary and probes (the probes' runs are written already); replaces an
 * earlier plan with the same id. One transaction. */
int sim_store_plan_write(struct sim_store *st, const struct sim_plan *p, const char *config_hash,
                         double percentile);
/* The schema as SQL text (for docs and tests). */
const char *sim_store_schema_sql(void);

#endif
