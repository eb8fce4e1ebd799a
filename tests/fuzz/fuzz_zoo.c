/* fuzz_zoo — a zoo file (workloads/wl_zoo.c: servesim-zoo/1 and /2, model entries, latency
 * profiles of every form, tables) through a config that selects all of its models: parsed,
 * expanded and validated as `{"zoo": FILE, "select": "all"}` would be. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "sim_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".zoo.json");
    if (!path)
        return 0;
    char text[512];
    snprintf(text, sizeof text,
             "{\"name\":\"z\",\"duration_s\":1,\"cluster\":{\"gpus\":2},\"workload\":"
             "{\"rate_rps\":10},\"models\":[{\"zoo\":\"%s\",\"select\":\"all\"}]}", path);
    struct sim_config *cfg = NULL;
    if (sim_config_from_text(text, "fuzz", ".", &cfg) == 0)
        sim_config_destroy(cfg);
    return 0;
}
