/* fuzz_results — a results file through the reader compare, export and plot use
 * (results/sim_readback.c): a damaged or foreign SQLite file, or a text export. */
#include "fuzz.h"
#include "sim_readback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".db");
    struct sim_samples ss;
    if (path && sim_results_load(path, &ss) == 0)
        sim_results_free(&ss);
    return 0;
}
