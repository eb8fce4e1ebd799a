/* fuzz_numbers — the shipped configs (experiments/ *.json and experiments/ * / *.json, not sweeps),
 * shortened to 3 simulated seconds, with their numbers pushed toward the extremes: the input's
 * first byte picks a config, every further 3 bytes pick one of its numbers (in document order)
 * and a value for it from EXTREMES (0, denormals, 1e±300, huge integers, ...) or a scaling of
 * what it was. The result goes through validation and, when it describes a small run
 * (fuzz_run_small), through the engine: every number the config accepts must give a run that
 * ends, or an error naming the field (issue 38). Symphony's partition MILP gets a budget of
 * 1,000 nodes and FA2's re-plan interval a floor of 10 ms, so that a unit stays within
 * libFuzzer's timeout. FUZZ_NUMBERS_LIST=1 in the environment lists
 * the configs by index with their count of numbers. The index is the position among the
 * configs sorted by path, so a config added under experiments/ shifts the later ones: the
 * seeds in tests/fuzz/regress/numbers/ are named after their config, and their first byte is
 * re-pointed when that happens. */
#include <dirent.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sim_config.h"
#include "sim_json.h"

#define MAX_BASES 256
#define MAX_MUTATIONS 8

static const double EXTREMES[] = {
    0, -0.0, 4.9406564584124654e-324, 2.2250738585072014e-308, 1e-300, 1e-155, 1e-15, 1e-12,
    1e-10, 1e-9, 1e-7, 1e-6, 1e-3, 0.5, 0.999999999, 1, 1.000000001, 2, -1, -1e-9, 1e3, 4096,
    1e6, 1e7, 1.0000001e7, 1e8, 1e9, 2147483647, 2147483648.0, 4294967296.0, 1e12, 1e15,
    9007199254740992.0, 9.2233720368547758e18, 1e19, 1e100, 1e200, 1e300,
    1.7976931348623157e308, -1e300};
#define NEXT (sizeof EXTREMES / sizeof EXTREMES[0])
/* beyond the table: the number times 2^k, k in [-40, 40) */
#define NCHOICES (NEXT + 80)

struct base {
    cJSON *json;
    char dir[512], file[256];
};
static struct base bases[MAX_BASES];
static int nbases = -1;

static void add_base(const char *dir, const char *file)
{
    size_t n = strlen(file);
    if (nbases >= MAX_BASES || n < 6 || strcmp(file + n - 5, ".json") != 0 ||
        (n > 11 && strcmp(file + n - 11, ".sweep.json") == 0))
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cJSON *j = NULL;
    if (sim_json_load_file(path, &j) || !cJSON_IsObject(j) ||
        !cJSON_GetObjectItemCaseSensitive(j, "models")) {
        cJSON_Delete(j);
        return;
    }
    /* short runs that keep their warm-up, so that the engine is reached within the timeout */
    cJSON_DeleteItemFromObjectCaseSensitive(j, "duration_s");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "warmup_s");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "drain_s");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "keep_warmup");
    cJSON_AddNumberToObject(j, "duration_s", 3);
    cJSON_AddNumberToObject(j, "warmup_s", 1);
    cJSON_AddNumberToObject(j, "drain_s", 1);
    cJSON_AddBoolToObject(j, "keep_warmup", 1);
    char *text = cJSON_PrintUnformatted(j);
    struct sim_config *cfg = NULL;
    bool ok = text && sim_config_from_text(text, file, dir, &cfg) == 0;
    free(text);
    sim_config_destroy(cfg);
    if (!ok) {                          /* needs what is not here (a trace directory) */
        cJSON_Delete(j);
        return;
    }
    bases[nbases].json = j;
    snprintf(bases[nbases].dir, sizeof bases[nbases].dir, "%s", dir);
    snprintf(bases[nbases].file, sizeof bases[nbases].file, "%s", file);
    nbases++;
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

static void scan(const char *dir, bool down)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char names[512][256];
    int n = 0;
    while ((e = readdir(d)) && n < 512)
        if (e->d_name[0] != '.')
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        add_base(dir, names[i]);
        if (down && strcmp(names[i], "regression") != 0) {
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
            scan(sub, false);
        }
    }
}

/* Number nodes of j in document order, up to max. */
static int numbers(cJSON *j, cJSON **out, int n, int max)
{
    for (cJSON *c = j->child; c && n < max; c = c->next) {
        if (cJSON_IsNumber(c))
            out[n++] = c;
        else if (c->child)
            n = numbers(c, out, n, max);
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (nbases < 0) {
        nbases = 0;
        scan(SERVESIM_SOURCE_DIR "/experiments", true);
        if (nbases == 0) {
            fprintf(stderr, "fuzz_numbers: no config under %s/experiments\n", SERVESIM_SOURCE_DIR);
            abort();
        }
        if (getenv("FUZZ_NUMBERS_LIST"))    /* the bases by index, and their numbers */
            for (int i = 0; i < nbases; i++) {
                static cJSON *tmp[4096];
                fprintf(stderr, "%d %s/%s %d\n", i, bases[i].dir, bases[i].file,
                        numbers(bases[i].json, tmp, 0, 4096));
            }
    }
    if (size < 1)
        return 0;
    const struct base *b = &bases[data[0] % nbases];
    cJSON *j = cJSON_Duplicate(b->json, 1);
    static cJSON *num[4096];
    int nn = j ? numbers(j, num, 0, 4096) : 0;
    for (size_t i = 1; i + 3 <= size && i < 1 + 3 * MAX_MUTATIONS && nn > 0; i += 3) {
        cJSON *x = num[((size_t)data[i] << 8 | data[i + 1]) % (size_t)nn];
        size_t c = data[i + 2] % NCHOICES;
        double v = c < NEXT ? EXTREMES[c] : ldexp(x->valuedouble, (int)(c - NEXT) - 40);
        cJSON_SetNumberValue(x, v);
    }
    /* Symphony's partition MILP within the timeout: a budget of nodes, set after the
     * mutations (which would push it to the extremes too) */
    cJSON *pol = j ? cJSON_GetObjectItemCaseSensitive(j, "policy") : NULL;
    const cJSON *pn = pol ? cJSON_GetObjectItemCaseSensitive(pol, "name") : NULL;
    if (cJSON_IsString(pn) && strcmp(pn->valuestring, "symphony") == 0) {
        cJSON *pp = cJSON_GetObjectItemCaseSensitive(pol, "params");
        if (!pp)
            pp = cJSON_AddObjectToObject(pol, "params");
        if (cJSON_IsObject(pp)) {
            cJSON_DeleteItemFromObjectCaseSensitive(pp, "partition_node_limit");
            cJSON_AddNumberToObject(pp, "partition_node_limit", 1000);
        }
    }
    /* FA2's re-plans within the timeout too: each is a DP over the SLA in 1-ms slots (about
     * 1 ms under the sanitizers), so the engine's bound of 1e5 plans a run is minutes here;
     * the interval is kept at 10 ms or more (500 plans over the 5-s run) */
    cJSON *fp = pol ? cJSON_GetObjectItemCaseSensitive(pol, "params") : NULL;
    cJSON *iv = cJSON_IsObject(fp) ? cJSON_GetObjectItemCaseSensitive(fp, "interval_s") : NULL;
    if (cJSON_IsNumber(iv) && iv->valuedouble > 0 && iv->valuedouble < 0.01)
        cJSON_SetNumberValue(iv, 0.01);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    struct sim_config *cfg = NULL;
    if (text && sim_config_from_text(text, "fuzz", b->dir, &cfg) == 0) {
        fuzz_run_small(cfg);
        sim_config_destroy(cfg);
    }
    free(text);
    return 0;
}
