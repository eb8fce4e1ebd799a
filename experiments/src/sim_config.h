/* sim_config — an experiment config (JSON) turned into what the layers below are built from.
 *
 * sim_config_load() reads a file (or the embedded quickstart), applies --set overrides,
 * checks every key (unknown keys are errors; every error names the JSON path, what was
 * expected and what was found, prefixed by the file name) and fills:
 *   - `world`: the engine's world config (sim_world.h): cluster, models with their profiles,
 *     application, network, the policy's and the autoscaler's tables and parameters, metrics;
 *   - `workload`: the inputs' description of the arrivals (wl_arrival.h): synthetic process
 *     and popularity, or a trace (wl_replay.h);
 *   - what only this layer uses: the goodput search's settings, what the trace scan found.
 * A config value walks one way: parse -> world/workload -> engine -> results. The result is
 * immutable during runs: the goodput search builds many engines from one config at different
 * load scales. The effective JSON (after overrides) is kept, printed canonically, for the
 * results database and its hash. Keys: see docs/config.md. */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "policy.h"
#include "sim.h"
#include "sim_store.h"

/* The longest run a config may ask for (duration_s, s): about 115 days. */
#define SIM_CONFIG_MAX_DURATION_S 1e7
#include "wl_arrival.h"
#include "wl_replay.h"

struct sim_config {
    cJSON *json;                       /* effective config, owned */
    char *file;                        /* for messages; "(embedded quickstart)" */
    char *dir;                         /* relative paths resolve here */

    struct sim_world world;            /* the engine's part; its arrays are owned here */
    struct wl_workload workload;       /* the arrivals */
    struct sim_app *app;               /* world.app, owned */
    struct policy_autoscale autoscale; /* world.autoscale_params points here */

    double trace_total, trace_peak_rps;/* from the scan at load (load scale 1) */
    int trace_gaps;
    double trace_gap_s;
    char trace_warning[400];           /* a window the trace covers in part (partial_window),
                                        * said with every answer; "" otherwise */

    double search_start_scale, search_tol;
    int search_max_probes;
    enum sim_search_rule search_rule;   /* search.rule (sim_searches.h) */
    const struct cJSON *search_variants;/* search.variants (into json; checked at load), or
                                         * NULL: `plan`'s alternatives to the config */
    struct {                            /* top-level keys as given (world.name, .seed hold them) */
        const char *name;               /* into json */
        long seed;
        bool keep_warmup;
    } top;

    /* The engine built at load to check the policy's params (load scale 1, the world's
     * policy), not yet run: sim_config_engine hands it to its first call with those
     * arguments instead of building the same engine again, or frees it at a first call with
     * others (creation is most of a short run on a large cluster). NULL once taken. */
    struct sim_config_spare *spare;
};

/* Every key of a config, declared once (sim/util/sim_param.h): the top level's rows, its
 * sections' rows in place; docs/config.md's reference table is this table, walked
 * (`servesim keys --markdown`). */
const struct sim_param *sim_config_keys(void);

/* Loads `file` (NULL: the embedded quickstart), applying `nsets` overrides "path=value" and
 * `seed` if seed_given. Returns 0, or SIM_EINVAL/SIM_ENOENT/... with sim_err_msg() set. */
int sim_config_load(const char *file, const char *const *sets, int nsets, bool seed_given,
                    uint64_t seed, struct sim_config **out /* OUT */);
/* The same, where among the first `nkeep` overrides (the user's: --set, a sweep's "set") an
 * object may not drop a key an earlier one set (sim_json_set_keeping); the rest (a sweep's grid
 * values and cases, a plan's own) replace what they name. sim_config_load keeps all. */
int sim_config_load_n(const char *file, const char *const *sets, int nsets, int nkeep,
                      bool seed_given, uint64_t seed, struct sim_config **out /* OUT */);
/* Builds from an in-memory JSON text (tests); `dir` resolves relative paths. */
int sim_config_from_text(const char *text, const char *name, const char *dir,
                         struct sim_config **out /* OUT */);
void sim_config_destroy(struct sim_config *cfg);

/* Canonical JSON text (caller frees) and its FNV-1a 64 hash as 16 hex digits. */
char *sim_config_canonical(const struct sim_config *cfg);
void sim_config_hash(const struct sim_config *cfg, char out[17]);

/* Writes run r of cfg into the results database (sim_store_write, one transaction) with the
 * config's canonical JSON, its hash and its world. kind: "run" or "goodput"; g is NULL for a
 * run; pt is NULL outside sweeps. */
int sim_config_store(struct sim_store *st, const struct sim_config *cfg, const char *kind,
                     const struct sim_result *r, const struct sim_goodput *g,
                     const struct sim_store_point *pt, int64_t *run_id /* OUT */);

/* An engine for cfg at load scale `scale`, its arrival sources opened from cfg's workload;
 * `pol` NULL runs the config's policy. *replay (may be NULL) receives the trace replay among
 * the sources, or NULL: borrowed, valid until sim_destroy. */
int sim_config_engine(const struct sim_config *cfg, double scale, const struct policy_ops *pol,
                      struct sim **out /* OUT */, struct wl_replay **replay /* OUT */);

/* Whether the warm-up differs from the config's or is shorter than the time cfg's policy
 * needs to converge (policy_ops.converge_s): a one-line note (extended to it, the default)
 * or warning (kept, keep_warmup) into msg. */
bool sim_config_transient(const struct sim_config *cfg, char *msg, size_t size);

extern const char *const sim_quickstart_json;

#endif
