/* sim_plan — capacity planning: the fewest GPUs with which a static cluster replays a
 * workload (usually a trace) within SLO, and what an autoscaler uses instead.
 *
 * Pass/fail of a probe is the run's own predicate: every model meets its SLO at
 * metrics.percentile, dropped requests counting as violations. The search (deterministic):
 *   1. lower bound LB = ceil(sum over models of mean rate x l(B)/B at B = max_batch): the
 *      GPUs that perfect batching at the mean rate would keep busy; no fewer can keep up;
 *   2. probe G = max(LB, --min); while it fails, step up by 1, 2, 4, ... (up to --max);
 *   3. bisect between the last failing and the first passing count until they are adjacent;
 *      if G passes at the start, bisect downward between 0 and G;
 *   4. the answer is the smallest passing G whose G - 1 was simulated and failed.
 * It assumes pass/fail is monotone in G; every probe is kept (plan_probes) and a passing probe
 * below a failing one is reported as monotone = false. With `autoscale` in the config, one
 * more run starts from cluster.gpus and lets the autoscaler act (up to cluster.max_gpus); its
 * GPU-hours and SLO are set against the static plan's (G x the run's duration). With
 * search.variants, the same again for each variant (the config with its overrides), each a
 * plan of its own (p->variants), printed side by side after the config's. */
#ifndef SIM_PLAN_H
#define SIM_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_report.h"
#include "sim_searches.h"

/* How to build a config (the CLI's file, overrides and seed) and where results go. */
struct sim_plan_input {
    const char *file;                   /* NULL: the embedded quickstart */
    const char *const *sets;
    int nsets;
    bool seed_given;
    uint64_t seed;
    const char *db;                     /* NULL: no database */
    int min_gpus, max_gpus;             /* 0: defaults (LB; cluster.max_gpus or 4096) */
    bool progress;                      /* a line per probe on stderr */
    const char *const *vsets;           /* a variant's overrides, after sets (internal) */
    int nvsets;
};

int sim_plan_run(const struct sim_plan_input *in, struct sim_plan *p /* OUT */);
void sim_plan_free(struct sim_plan *p);
void sim_plan_print(FILE *f, const struct sim_plan *p);
char *sim_plan_json(const struct sim_plan *p);

#endif
