/* wl_jobs — the config's `jobs` section (kinds of training jobs and their arrivals) and its
 * `notebooks` section (the modeling work beside them), parsed
 * into the world's job_kinds and jobs (sim_world.h has the progress model; docs/config.md the
 * keys):
 *   "jobs": {"kinds": [{"name": "mnist", "iterations": 20000, "iter_ms": 24,
 *                       "speedup": [1, 1.7, 2.2, 2.3], "cross_node": 3,
 *                       "start_s": 20, "reconfig_s": 15, "shrink_s": 0}],
 *            "arrivals": [{"kind": "mnist", "at_s": 0, "count": 4,
 *                          "init_workers": 2, "max_workers": 4}]}
 * Jobs are numbered in arrival order (ties: the order written). */
#ifndef WL_JOBS_H
#define WL_JOBS_H

#include <cjson/cJSON.h>

#include "sim_param.h"
#include "sim_world.h"

/* The most kinds of job a config may declare (names are checked pairwise for repeats). */
#define WL_MAX_JOB_KINDS 1000

/* The keys of `jobs` (sim/util/sim_param.h: kinds and arrivals read by hand). */
extern const struct sim_param wl_jobs_keys[];
/* The keys of `notebooks`. */
extern const struct sim_param wl_notebooks_keys[];

/* Parses root's `jobs` (absent: no jobs) into w (w->nodes must be set: initial workers are
 * checked against the GPUs). Errors name the JSON path. */
int wl_jobs_parse(const cJSON *root, struct sim_world *w);
/* Parses root's `notebooks` (absent: none):
 *   {"count": 4, "request": 0.25, "limit": 1, "idle_s": 60, "burst_s": 15, "window_s": 10,
 *    "quota_ms": 250, "fixed": false} */
int wl_notebooks_parse(const cJSON *root, struct sim_world *w);
void wl_jobs_free(struct sim_world *w);

#endif
