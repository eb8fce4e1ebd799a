/* wl_llm — an LLM model entry's `llm` section: the decoder architectures servesim knows
 * (numbers from their published config.json files), the GPU datasheets (peak dense tensor
 * FLOP/s, memory bandwidth and size, link), and the section's reader, which fills the engine's
 * struct sim_llm_cfg (sim/sim_llm_cost.h). docs/llm.md lists the tables with their sources. */
#ifndef WL_LLM_H
#define WL_LLM_H

#include <cjson/cJSON.h>

#include "sim_llm_cost.h"
#include "sim_param.h"

struct wl_llm_arch_entry {
    const char *name, *source;
    struct sim_llm_arch arch;
    double published_params;           /* the parameter count its model card states */
};
struct wl_llm_gpu_entry {
    const char *name, *source;
    struct sim_llm_gpu gpu;
};

extern const struct wl_llm_arch_entry wl_llm_archs[];   /* NULL-name terminated */
extern const struct wl_llm_gpu_entry wl_llm_gpus[];
const struct wl_llm_arch_entry *wl_llm_arch_find(const char *name);
const struct wl_llm_gpu_entry *wl_llm_gpu_find(const char *name);

/* The `llm` section's keys (docs/config.md is generated from them). */
extern const struct sim_param wl_llm_keys[];

/* Reads the `llm` section `o` at JSON path `path`; `gpu_kind` (cluster.gpu_kind) names the
 * datasheet where the section names none; `base_dir` resolves a profile file's relative name.
 * 0 or SIM_EINVAL with the message; out->table (a measured profile) is owned by the caller
 * (sim_model_cfg_free). */
int wl_llm_parse(const cJSON *o, const char *path, const char *gpu_kind, const char *base_dir,
                 struct sim_llm_cfg *out /* OUT */);
/* A measured profile (servesim-llm-profile/1) at `path`: the object itself, or {"file": NAME}
 * naming a file of one (relative to base_dir); it must be of `arch` on `gpu` at tensor
 * parallelism tp (wl_llm_profile.c). *out owned. */
int wl_llm_profile_read(const cJSON *o, const char *path, const char *base_dir,
                        const char *arch, const char *gpu, int tp,
                        struct sim_llm_table **out /* OUT */);

#endif
