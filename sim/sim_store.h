/* sim_store — the SQLite results database (schema: docs/results.md, version SIM_STORE_SCHEMA).
 *
 * One database collects many runs. A run, with every row that belongs to it, is written in
 * one transaction: an error or interruption leaves nothing of it behind. The schema version
 * is PRAGMA user_version; a database from a newer servesim is refused, an older one is
 * migrated in place (1 -> 2 adds columns and the sweep_points table). */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stdint.h>

#include "sim_config.h"
#include "sim_report.h"

#define SIM_STORE_SCHEMA 2

struct sim_store;

int sim_store_open(const char *path, struct sim_store **out /* OUT */);
void sim_store_close(struct sim_store *st);
/* kind: "run" or "goodput"; g is NULL for a run. */
int sim_store_write(struct sim_store *st, const struct sim_config *cfg, const char *kind,
                    const struct sim_result *r, const struct sim_goodput *g,
                    int64_t *run_id /* OUT */);
/* The schema as SQL text (for docs and tests). */
const char *sim_store_schema_sql(void);

#endif
