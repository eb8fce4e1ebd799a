/* nexus — the Nexus planner's arithmetic, exposed for tests (specs/nexus.md, worked example).
 * The policy itself is policy_nexus in the registry. */
#ifndef NEXUS_H
#define NEXUS_H

#include <stdbool.h>

#include "sim.h"

struct nexus_inst_view {
    int batch, max_batch;              /* max_batch = B_max */
    double duty_max, tp, occupancy_alone;   /* seconds, requests/s, l(batch)/duty_max */
};

/* Session of model m at rate w (w == 0 or >= T_max: saturated) on an empty GPU of the
 * engine's kind, with profile_multiplier `mult`. False if no batch fits the SLO. */
bool nexus_instance(const struct sim *s, int m, double mult, double w, struct nexus_inst_view *out);
/* Places sessions (models[i] at rates[i]) one by one on executor 0 with PrepareLoadModel;
 * returns how many fit before the first rejection; batches[] and *occupancy describe the
 * GPU after the last one that fit. */
int nexus_pack_one_gpu(const struct sim *s, double mult, int n, const int *models,
                       const double *rates, int *batches, double *occupancy);

#endif
