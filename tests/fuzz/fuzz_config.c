/* fuzz_config — a config file's text through the parser (experiments/src/sim_config.c: JSON,
 * zoos, workloads, policies' parameters) and, when it describes a small run, through the
 * engine: a plain rate (no segments or schedules, whose rates the bound below would not see),
 * at most 5 simulated seconds, 20,000 expected requests, 50 models and 1,000 requests alive at
 * once, so that run-time defects of accepted inputs (overflows, aborts) are reached too
 * without a run that outlasts libFuzzer's timeout. */
#include <stdlib.h>

#include "fuzz.h"
#include "sim_config.h"
#include "sim_goodput.h"
#include "sim_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct sim_config *cfg = NULL;
    if (text && sim_config_from_text(text, "fuzz", ".", &cfg) == 0) {
        const struct sim_world *w = &cfg->world;
        if (w->duration_s <= 5 && w->rate_rps * w->duration_s <= 20000 && w->nmodels <= 50 &&
            w->gpus <= 64 && cfg->workload.nsegments == 0 && !cfg->workload.schedules) {
            cfg->world.max_live_requests = 1000;
            struct sim_result *r = NULL;
            if (sim_run_once(cfg, 1.0, NULL, &r) == 0)
                sim_result_destroy(r);
        }
        sim_config_destroy(cfg);
    }
    free(text);
    return 0;
}
