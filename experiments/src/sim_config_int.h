/* sim_config_int — the config parser's sections in other files (sim_config_app.c,
 * sim_config_trace.c), for sim_config.c. */
#ifndef SIM_CONFIG_INT_H
#define SIM_CONFIG_INT_H

#include "sim_config.h"

/* `application` of root (absent: c->app stays NULL), against c->world.models. */
int sim_config_parse_app(struct sim_config *c, const cJSON *root);
/* `trace` (at JSON path workload.trace) against cfg's models; *out owned. */
int sim_config_parse_trace(const struct sim_config *cfg, const cJSON *trace,
                           struct wl_trace_cfg **out /* OUT */);

#endif
