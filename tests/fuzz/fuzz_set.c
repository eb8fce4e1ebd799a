/* fuzz_set — a --set option (PATH=VALUE, the whole input) applied to the embedded quickstart
 * and validated, as `servesim run --set ...` does (sim_json_set, then the config parser). */
#include <stdlib.h>

#include "fuzz.h"
#include "sim_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *set = fuzz_text(data, size);
    struct sim_config *cfg = NULL;
    if (set) {
        const char *sets[] = {set};
        if (sim_config_load(NULL, sets, 1, false, 0, &cfg) == 0)
            sim_config_destroy(cfg);
    }
    free(set);
    return 0;
}
