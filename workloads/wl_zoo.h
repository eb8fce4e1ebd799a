/* wl_zoo — model entries and model zoo files (format "servesim-zoo/1", docs/zoo.md).
 *
 * One parser reads a model entry wherever it appears: inline in a config's models[] or in a
 * zoo file. A zoo file carries profiles measured on one executor kind (its executor_kind) and
 * the source of its figures. A config selects from a zoo with
 *   {"zoo": "symphony_1080ti" | "path/to/zoo.json", "select": "all" | [names],
 *    "slo_ms": override, "max_batch": override, "latency_scale": {kind: factor},
 *    "stack_scale": factor of every model's stack_ms}
 * A bare name is looked up in the shipped zoo folder (workloads/zoo, or $SERVESIM_ZOO_DIR);
 * a path resolves against the config file's folder. */
#ifndef WL_ZOO_H
#define WL_ZOO_H

#include <cjson/cJSON.h>

#include "sim_param.h"
#include "sim_world.h"

/* The largest serving-stack latency a model may carry (stack_ms, an hour). */
#define WL_STACK_MS_MAX 3.6e6

/* The keys of a model entry (sim/util/sim_param.h; its profile is read by hand). */
extern const struct sim_param wl_model_keys[];
/* The keys of a zoo reference ({"zoo": ...} in models[]) and of a zoo file. */
extern const struct sim_param wl_zoo_ref_keys[];
extern const struct sim_param wl_zoo_keys[];

/* Parses one model entry at `path`. Linear shorthand (alpha_ms/beta_ms) and "profile" apply
 * to `default_kind`; "profiles" names kinds explicitly. `base_dir` resolves files the entry
 * names (an LLM model's profile file). */
int wl_model_parse(const cJSON *o, const char *path, const char *default_kind,
                   const char *base_dir, struct sim_model_cfg *out /* OUT */);

/* Expands the zoo reference object `ref` (at JSON `path`) into models appended to
 * (*models, *n). `base_dir` resolves relative zoo paths. */
/* Makes room in a models array of n entries for `more`: its capacity is kept at the next power
 * of two of its length, so appending one at a time costs amortised O(1) copies. */
/* The shipped zoo folder: $SERVESIM_ZOO_DIR, else the data folder (sim_data.h). */
const char *wl_zoo_dir(char *out, size_t size);

int wl_models_reserve(struct sim_model_cfg **models, int n, int more);

int wl_zoo_expand(const cJSON *ref, const char *path, const char *base_dir,
                  struct sim_model_cfg **models /* IN/OUT */, int *n /* IN/OUT */);

/* The path a zoo reference resolves to (for messages and tests). */
void wl_zoo_resolve(const char *ref, const char *base_dir, char *out, size_t size);

#endif
