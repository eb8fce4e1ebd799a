/* sim_goodput — one run, and the goodput search over the load scale.
 *
 * Goodput (Symphony's definition): the highest aggregate offered load, with the workload's
 * relative rates held fixed, at which every model meets its SLO at the configured percentile
 * (dropped and late requests count as violations). The search multiplies every arrival rate
 * by a scale; arrivals use common random numbers (wl_arrival.h), so a probe at a higher scale
 * sees the same requests, only closer together, and pass/fail is as monotone in load as the
 * policy allows. Rule, deterministic:
 *   1. probe search.start_scale; double the scale while probes pass (or halve while they fail)
 *      until a pass/fail bracket [lo, hi] exists;
 *   2. bisect (arithmetic midpoint) while (hi - lo) / lo > search.tolerance and fewer than
 *      search.max_probes probes were made;
 *   3. goodput = measured offered rate of the probe at lo.
 * Every probe is recorded. If pass/fail is not monotone in load (a pass above a fail: queueing
 * effects, drops changing batch formation), bisection still returns a boundary between a
 * passing lo and a failing hi, which may not be the highest passing load; the result is then
 * flagged monotone=false and all probes are in the goodput_search table to inspect. */
#ifndef SIM_GOODPUT_H
#define SIM_GOODPUT_H

#include <stdbool.h>

#include "sim_config.h"
#include "sim_report.h"

/* Builds, runs and collects one engine at `scale`; obs may be NULL. */
int sim_run_once(const struct sim_config *cfg, double scale, const struct sim_observer *obs,
                 struct sim_result **out /* OUT */);
/* The same, saying how far it is while it runs where `progress` (sim_progress.h), under the
 * name `what` ("run", "goodput probe 3 (load x0.5)", "plan probe: 16 GPUs"). */
int sim_run_shown(const struct sim_config *cfg, double scale, bool progress, const char *what,
                  struct sim_result **out /* OUT */);

/* Can every model meet its SLO at all? On a cluster of GPUs only (no CPU cores), without an
 * application or request sizes, a model whose smallest batch on its fastest profile for the
 * cluster's kinds, plus the fixed delays on a request's path (network ctrl_us +
 * data_us_per_request + resp_us), exceeds its SLO makes every load fail. Returns 0, or
 * SIM_EINFEASIBLE with the reason per model ("ResNet50V2: the smallest batch needs 7.40 ms +
 * 2.15 ms network = 9.55 ms > SLO 8 ms"). Otherwise (CPU cores, applications, sizes) it
 * answers 0: the search itself decides. */
int sim_config_feasible(const struct sim_config *cfg);

/* Fails with SIM_EINFEASIBLE (sim_config_feasible) before any probe. */
int sim_goodput_search(const struct sim_config *cfg, bool progress, struct sim_goodput *g /* OUT */);
void sim_goodput_free(struct sim_goodput *g);

#endif
