/* sim_config_int — the config parser's sections in other files, for sim_config.c, which
 * calls them in this order: cluster and models (sim_config_cluster.c), application
 * (sim_config_app.c), workload (sim_config_workload.c, with its trace: sim_config_trace.c),
 * then the checks of sim_config_cluster.c. */
#ifndef SIM_CONFIG_INT_H
#define SIM_CONFIG_INT_H

#include "sim_config.h"
#include "sim_param.h"

/* The keys of `cluster` and of `workload` (sim/util/sim_param.h tables; sim_config_keys
 * holds them in place). */
extern const struct sim_param sim_config_cluster_keys[];
extern const struct sim_param sim_config_workload_keys[];
extern const struct sim_param sim_config_trace_keys[];
extern const struct sim_param sim_config_app_keys[];

/* `cluster` of root: GPUs or nodes, their kinds, memory, interference, host time. */
int sim_config_parse_cluster(struct sim_config *c, const cJSON *root);
/* `models` of root (zoo entries expanded), against the cluster's kinds. */
int sim_config_parse_models(struct sim_config *c, const cJSON *root);
/* `workload` of root: arrivals, popularity, segments, schedules, sizes, clients, trace. */
int sim_config_parse_workload(struct sim_config *c, const cJSON *root);
/* cluster.gpu_memory_mb holds every model together (a policy that keeps every model on every
 * GPU) or each alone (a cold-start policy); after the policy is known. */
int sim_config_check_memory(const struct sim_config *c);
/* The run's work is bounded before it starts (time-series points, token turns, pages), each
 * error naming the field to change and the least value that fits. */
int sim_config_check_work(const struct sim_config *c);

/* `application` of root (absent: c->app stays NULL), against c->world.models. */
int sim_config_parse_app(struct sim_config *c, const cJSON *root);
/* The trace files `files` (a JSON array of names at `path`) as paths: relative to `dir`
 * under the trace root ($SERVESIM_TRACE_DIR, else the config's folder), or absolute. *out
 * (owned, *n of them; freed by the caller also on error). */
int sim_config_trace_files(const struct sim_config *cfg, const cJSON *files, const char *path,
                           const char *dir, char ***out /* OUT */, int *n /* OUT */);
/* `trace` (at JSON path workload.trace) against cfg's models; *out owned. */
int sim_config_parse_trace(const struct sim_config *cfg, const cJSON *trace,
                           struct wl_trace_cfg **out /* OUT */);

#endif
