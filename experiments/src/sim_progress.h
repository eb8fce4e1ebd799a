/* sim_progress — what a long simulation says while it runs, the same for `run`, each probe of
 * `goodput` and each probe of `plan` (sim_run_shown, sim_goodput.h, is how they use it): on a
 * terminal, one line rewritten at least every second (simulated time against the run's end,
 * requests so far, simulated requests per wall second, wall time); elsewhere one closing line
 * for a run that took over 10 s. The seconds between lines are $SERVESIM_PROGRESS_S (default
 * 1; 0: at every check, for tests). */
#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

struct sim_progress {
    char what[96];                      /* "run", "goodput probe 3 (load x0.5)", ... */
    double t0, last, end_s, every_s;
    uint64_t n, requests;
    bool tty, shown, on;
    struct sim_observer obs;            /* what the engine calls (its event callback) */
};

/* Starts the progress of one simulation of end_s simulated seconds; `on` false: says nothing.
 * Returns the observer to give the engine, NULL when off. */
const struct sim_observer *sim_progress_start(struct sim_progress *p, bool on, double end_s,
                                              const char *what);
/* Ends the line (or, off a terminal, prints the closing line of a long run). */
void sim_progress_end(struct sim_progress *p);

#endif
