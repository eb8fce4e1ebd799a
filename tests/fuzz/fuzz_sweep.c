/* fuzz_sweep — a sweep file (experiments/src/sim_sweep.c: name, base, mode, set, cases, grid)
 * through the sweep parser and, for its first 8 points, the point builder and the config
 * loader, as `servesim sweep` validates before running anything. The sweep file is written
 * beside a fixed small base config, servesim-fuzz-base.json, which the seeds name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim_config.h"
#include "sim_sweep_int.h"

static void write_base(void)
{
    static int done;
    if (done++)
        return;
    const char *tmp = getenv("TMPDIR");
    char path[256];
    snprintf(path, sizeof path, "%s/servesim-fuzz-base.json", tmp && tmp[0] ? tmp : "/tmp");
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("{\"name\":\"b\",\"duration_s\":2,\"cluster\":{\"gpus\":2},\"workload\":"
              "{\"rate_rps\":100},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":2,"
              "\"slo_ms\":20}]}", f);
        fclose(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    write_base();
    const char *path = fuzz_file(data, size, ".sweep.json");
    if (!path)
        return 0;
    struct sweep w;
    memset(&w, 0, sizeof w);
    if (sweep_parse(&w, path, NULL, 0) == 0)
        for (long i = 0; i < w.npoints && i < 8; i++) {
            struct point p;
            if (sweep_make_point(&w, i, &p))
                break;
            struct sim_config *cfg = NULL;
            if (sim_config_load(w.base, (const char *const *)p.sets, p.nsets, false, 0, &cfg) == 0)
                sim_config_destroy(cfg);
            sweep_point_free(&p);
        }
    sweep_free(&w);
    return 0;
}
