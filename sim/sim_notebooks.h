/* sim_notebooks — notebooks on GPU shares (sim_shares.c): their state and placement
 * (sim.h has the overview; sim_world.h their model). */
#ifndef SIM_NOTEBOOKS_H
#define SIM_NOTEBOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_types.h"

/* ---- notebooks (world.nnotebooks; sim_world.h has their model) ---- */
struct sim_notebook {
    int id, gpu;                       /* gpu: -1 until placed */
    int milli;                         /* its claim, (SIM_HOLD_SHARE, id) */
    bool bursting, holding;            /* in a burst; holding its GPU's token */
    uint64_t bursts;                   /* bursts finished */
    double slowdown_sum;               /* sum over finished bursts of (time taken / work) */
};
int sim_notebook_count(const struct sim *s);
const struct sim_notebook *sim_notebook(const struct sim *s, int nb);
/* Places notebook nb on GPU g with a claim of milli thousandths (the policy: its request
 * with sharing, a whole GPU without); it starts idle. 0, or -1 with sim_err set. */
int sim_notebook_place(struct sim *s, int nb, int g, int milli);

#endif
