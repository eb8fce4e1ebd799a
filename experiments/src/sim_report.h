/* sim_report — presenting a run's results (sim_result.h, collected by the engine): the
 * table and the JSON the CLI prints. A goodput search keeps its probes and the sim_result of
 * the highest passing probe (struct sim_goodput in the results layer's sim_searches.h,
 * filled by sim_goodput.c). */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_result.h"
#include "sim_searches.h"

/* Why the search gives no goodput, one sentence into buf (naming the search.* key to change);
 * false when it converged. */
bool sim_goodput_problem(const struct sim_goodput *g, char *buf, size_t n);

void sim_report_table(FILE *f, const struct sim_result *r, const struct sim_goodput *g);
/* One JSON object (see docs/results.md); `g` may be NULL for a plain run. */
char *sim_report_json(const struct sim_result *r, const struct sim_goodput *g);

#endif
