/* wl_app — applications: DAGs of models with execution paths (FA2's pipelines).
 *
 * Config key `application` (docs/config.md):
 *   {"name": "fa2", "paths": [{"name": "car-qa", "stages": ["OBJD", "ALPR", "QUAN"],
 *                              "sla_ms": 3020, "weight": 1}, ...]}
 * Every stage names a model of the config; a model appears at most once on a path, every
 * model is on some path, and the union of the paths' edges is acyclic (a DAG). With an
 * application every arrival is a request of the application: its path is drawn at arrival
 * with probability weight / sum of weights (stream "application.paths"), its deadline is
 * arrival + the path's SLA, and it visits the path's models in order. The path stays inside
 * the engine: a policy learns the next model only when a stage completes (the request then
 * reaches that model's queue, carrying its original arrival time and deadline). */
#ifndef WL_APP_H
#define WL_APP_H

#include <cjson/cJSON.h>

#include "sim_config.h"

#define WL_APP_MAX_STAGES 16
#define WL_APP_MAX_PATHS 256

struct wl_app_path {
    char name[SIM_NAME_MAX];
    int nstages;
    int stages[WL_APP_MAX_STAGES];     /* model indices, in order */
    double sla_ms;
    double weight, prob;               /* prob = weight / sum of weights */
};

struct wl_app {
    char name[SIM_NAME_MAX];
    int npaths;
    struct wl_app_path *paths;
};

/* Parses `application` (absent: c->app stays NULL) against c->models. */
int wl_app_parse(struct sim_config *c, const cJSON *root);
void wl_app_free(struct wl_app *a);

/* Mean request rate at model m when the application receives `rate` requests/s: the sum of
 * rate * prob over the paths through m. */
double wl_app_model_rate(const struct wl_app *a, int m, double rate);

#endif
