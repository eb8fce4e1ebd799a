/* fuzz_util — helpers shared by the fuzz targets (fuzz.h). */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_config.h"
#include "sim_goodput.h"
#include "sim_report.h"

void fuzz_run_small(struct sim_config *cfg)
{
    const struct sim_world *w = &cfg->world;
    if (w->duration_s <= 5 && w->drain_s <= 5 && w->rate_rps * w->duration_s <= 20000 &&
        w->nmodels <= 50 && w->gpus <= 64 && cfg->workload.nsegments == 0 &&
        !cfg->workload.schedules) {
        cfg->world.max_live_requests = 1000;
        cfg->world.max_events = 300000;     /* periodic work of tiny periods: within -timeout */
        struct sim_result *r = NULL;
        if (sim_run_once(cfg, 1.0, NULL, &r) == 0)
            sim_result_destroy(r);
    }
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

static char fuzz_path[256];

static void fuzz_file_remove(void)
{
    remove(fuzz_path);
}

const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    char *path = fuzz_path;
    const char *tmp = getenv("TMPDIR");
    if (!path[0])                       /* one file per process, gone when it exits */
        atexit(fuzz_file_remove);
    snprintf(path, sizeof fuzz_path, "%s/servesim-fuzz-%ld%s", tmp && tmp[0] ? tmp : "/tmp",
             (long)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}
