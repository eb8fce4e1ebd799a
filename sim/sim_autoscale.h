/* sim_autoscale — autoscalers: components that add and remove executors during a run, with
 * any policy that supports dynamic executors (policy_ops.dynamic_execs).
 *
 * Config `autoscale` (docs/config.md). Every sampling period (metrics.sample_period_s), after
 * the policy's on_tick, the autoscaler reads the last window (bad rate r, idle fraction f,
 * executors up N) and acts through sim_exec_add / sim_exec_remove; added executors serve
 * after cluster.provision_s. Two kinds:
 *   - "symphony" (specs/symphony.md, "Autoscaling signals"): if r > bad_rate_threshold, ask
 *     for N r / (1 - r) more (less those still starting); else release N (f - keep_idle)
 *     (the spec's N f, less a margin so the cluster does not sit exactly at saturation);
 *   - "target_util" (the Kubernetes HPA rule, a common baseline): u = 1 - f, desired =
 *     ceil(N u / target_util), acted on when |u / target_util - 1| > tolerance.
 * Releases wait for cooldown_s after the last action and for no executor to be starting;
 * the newest executors go first. Counts stay within [min_gpus, cluster.max_gpus]. Time series:
 * autoscale.add, autoscale.remove, gpus_billed (up + starting + draining). */
#ifndef SIM_AUTOSCALE_H
#define SIM_AUTOSCALE_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "sim_config.h"

struct sim;

/* Parses `autoscale` of root into c->autoscale (kind none when absent). */
int sim_autoscale_parse(struct sim_config *c, const cJSON *root);
/* One control step; *last_action is the time of the last add or release (ns). */
void sim_autoscale_step(struct sim *s, int64_t *last_action);

#endif
