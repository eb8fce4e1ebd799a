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

struct sim_goodput {
    int nprobes;
    struct sim_probe probes[256];
    double goodput_rps, goodput_scale;
    bool monotone;                      /* no passing probe above a failing one */
    bool found;                         /* some probe passed */
    struct sim_result *best;            /* the highest passing probe's result (or the lowest) */
};

void sim_result_print_table(FILE *f, const struct sim_result *r, const struct sim_goodput *g);
/* One JSON object (see docs/results.md); `g` may be NULL for a plain run. */
char *sim_result_json(const struct sim_result *r, const struct sim_goodput *g);

#endif
