/* sim_report — presenting a run's results (sim_result.h, collected by the engine): the
 * table and the JSON the CLI prints. A goodput search keeps its probes and the sim_result of
 * the highest passing probe (struct sim_goodput, filled by sim_goodput.c). */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_result.h"

struct sim_probe {
    double scale, offered_rps, worst_bad_frac, worst_p99_ms;
    bool pass;
    char worst_model[SIM_NAME_MAX];
};

/* How a goodput search ended. Only CONVERGED gives a goodput (the others exit 4, and their
 * row in the results database has this word as runs.status, so readers skip it). */
enum sim_search_status {
    SIM_SEARCH_CONVERGED,               /* a passing lo and a failing hi within search.tolerance */
    SIM_SEARCH_NO_PASS,                 /* no probed load met every SLO */
    SIM_SEARCH_NO_FAIL,                 /* every probe passed: the goodput lies above them */
    SIM_SEARCH_WIDE,                    /* bracketed, but wider than the tolerance at max_probes */
};
extern const char *const sim_search_status_names[];

struct sim_goodput {
    int nprobes;
    struct sim_probe probes[256];
    double goodput_rps, goodput_scale;
    bool monotone;                      /* no passing probe above a failing one */
    bool found;                         /* some probe passed */
    enum sim_search_status status;
    double lo_scale, hi_scale;          /* the bracket (-1: no such probe) */
    int max_probes;                     /* the search's search.max_probes and .tolerance */
    double tol;
    struct sim_result *best;            /* the highest passing probe's result (or the lowest) */
};

/* Why the search gives no goodput, one sentence into buf (naming the search.* key to change);
 * false when it converged. */
bool sim_goodput_problem(const struct sim_goodput *g, char *buf, size_t n);

void sim_result_print_table(FILE *f, const struct sim_result *r, const struct sim_goodput *g);
/* One JSON object (see docs/results.md); `g` may be NULL for a plain run. */
char *sim_result_json(const struct sim_result *r, const struct sim_goodput *g);

#endif
