/* fuzz_config — a config file's text through the parser (experiments/src/sim_config.c: JSON,
 * zoos, workloads, policies' parameters) and, when it describes a small run (fuzz_run_small),
 * through the engine, so that run-time defects of accepted inputs (overflows, aborts) are
 * reached too. */
#include <stdlib.h>

#include "fuzz.h"
#include "sim_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    struct sim_config *cfg = NULL;
    if (text && sim_config_from_text(text, "fuzz", ".", &cfg) == 0) {
        fuzz_run_small(cfg);
        sim_config_destroy(cfg);
    }
    free(text);
    return 0;
}
