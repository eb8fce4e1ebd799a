/* wl_llm — the `llm` section of a model entry, and the architecture and GPU tables it names
 * (see wl_llm.h; docs/llm.md cites every number's source). */
#include "wl_llm.h"

#include <stdio.h>
#include <string.h>

#include "sim_err.h"
#include "sim_json.h"

/* Architectures from the models' config.json on Hugging Face (numbers only). bf16 weights
 * and KV cache. */
const struct wl_llm_arch_entry wl_llm_archs[] = {
    {"llama-3-8b", "meta-llama/Meta-Llama-3-8B config.json",
     {32, 4096, 32, 8, 128, 14336, 128256, false, 2, 2}, 8.03e9},
    {"llama-3-70b", "meta-llama/Meta-Llama-3-70B config.json",
     {80, 8192, 64, 8, 128, 28672, 128256, false, 2, 2}, 70.6e9},
    {"mistral-7b", "mistralai/Mistral-7B-v0.1 config.json",
     {32, 4096, 32, 8, 128, 14336, 32000, false, 2, 2}, 7.24e9},
    {"qwen2.5-7b", "Qwen/Qwen2.5-7B config.json (attention biases, 0.01% of the weights, left out)",
     {28, 3584, 28, 4, 128, 18944, 152064, false, 2, 2}, 7.61e9},
    {"tiny", "servesim's own: two layers of hidden size 256, for tests",
     {2, 256, 4, 2, 64, 512, 1000, true, 2, 2}, 0},
    {"tiny-qwen", "servesim's own: Qwen2-shaped (one KV head, an untied head), two layers of "
                  "hidden size 256, for tests (its q, k, v biases left out, as qwen2.5-7b's)",
     {2, 256, 4, 1, 64, 704, 1536, false, 2, 2}, 0},
    {NULL, NULL, {0, 0, 0, 0, 0, 0, 0, false, 0, 0}, 0}};

/* Datasheets: dense bf16 tensor peak (no sparsity), memory bandwidth, the memory the device
 * reports (nvidia-smi's total, GiB), and the GPU-to-GPU link per direction. */
const struct wl_llm_gpu_entry wl_llm_gpus[] = {
    {"h100", "NVIDIA H100 SXM5 80GB datasheet: 989.4 TFLOP/s bf16 dense, 3.35 TB/s HBM3, "
             "NVLink 900 GB/s (450 each way); 81559 MiB reported",
     {989.4, 3350, 79.65, 450, "h100"}},
    {"h200", "NVIDIA H200 SXM 141GB datasheet: 989.4 TFLOP/s bf16 dense, 4.8 TB/s HBM3e, "
             "NVLink 900 GB/s (450 each way); 143771 MiB reported",
     {989.4, 4800, 140.4, 450, "h200"}},
    {"a100", "NVIDIA A100 SXM4 80GB datasheet: 312 TFLOP/s bf16 dense, 2039 GB/s HBM2e, NVLink "
             "600 GB/s (300 each way); 81920 MiB reported",
     {312, 2039, 80, 300, "a100"}},
    {"l40s", "NVIDIA L40S datasheet: 362.05 TFLOP/s bf16 dense, 864 GB/s GDDR6, PCIe Gen4 x16 "
             "(32 GB/s each way); 46068 MiB reported",
     {362.05, 864, 44.99, 32, "l40s"}},
    {"cpu", "a host CPU running servesim-calibrate's decoder runtime (llm-measure, "
            "llm-validate): no datasheet, so a measured or linear profile only, and the KV pool "
            "set by kv_blocks",
     {0, 0, 0, 0, "cpu"}},
    {NULL, NULL, {0, 0, 0, 0, NULL}}};

const struct wl_llm_arch_entry *wl_llm_arch_find(const char *name)
{
    for (const struct wl_llm_arch_entry *a = wl_llm_archs; a->name; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

const struct wl_llm_gpu_entry *wl_llm_gpu_find(const char *name)
{
    for (const struct wl_llm_gpu_entry *g = wl_llm_gpus; g->name; g++)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}

struct llm_in {
    const char *model, *gpu;
    const cJSON *profile;
    struct sim_llm_cfg c;
};

#define LI(f, type) SIM_P_AT(struct llm_in, f, type)
static const struct sim_param LINEAR[] = {
    {"base_us", SIM_P_NUM, LI(c.lin.base_us, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "per iteration"},
    {"token_us", SIM_P_NUM, LI(c.lin.token_us, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "per token of the iteration (prefill chunks and decodes)"},
    {"seq_us", SIM_P_NUM, LI(c.lin.seq_us, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "per sequence"},
    {"pair_ns", SIM_P_NUM, LI(c.lin.pair_ns, double), .cons = SIM_J_NONNEG, .def = 0,
     .doc = "per attention pair: a new token against one token before it"},
    {NULL}};

const struct sim_param wl_llm_keys[] = {
    {"model", SIM_P_STR, LI(model, const char *), .flags = SIM_P_REQUIRED,
     .type_doc = "`llama-3-8b`, `llama-3-70b`, `mistral-7b`, `qwen2.5-7b`, `tiny`, "
                 "`tiny-qwen`",
     .doc = "the decoder's architecture (docs/llm.md, \"Models and GPUs\")"},
    {"gpu", SIM_P_STR, LI(gpu, const char *), .type_doc = "`h100`, `h200`, `a100`, `l40s`, `cpu`",
     .def_doc = "`cluster.gpu_kind`", .doc = "the GPU's datasheet (`cpu`: a host CPU timed by "
     "`servesim-calibrate llm-measure`, which has none: a measured or linear profile and "
     "`kv_blocks` only)"},
    {"tp", SIM_P_INT, LI(c.tp, int), .lo = 1, .hi = 8, .def = 1,
     .doc = "tensor-parallel degree: the GPUs of one replica (dividing the heads; the KV heads "
            "divide it or it divides them, as vLLM requires), each holding 1/tp of the weights "
            "and heads, with two all-reduces a layer over the GPU's link"},
    {"profile", SIM_P_HAND, .type_doc = "`\"roofline\"`, `{base_us, token_us, seq_us, "
     "pair_ns}`, a measured profile `{\"format\": \"servesim-llm-profile/1\", ...}` or "
     "`{\"file\": NAME}`", .def_doc = "`\"roofline\"`",
     .doc = "the iteration's GPU time: the roofline estimate from the architecture and the "
            "datasheet, a linear profile, or a measured profile of operator times (inline, or "
            "a file relative to the config's folder) that must be of this model, GPU and `tp` "
            "(docs/llm.md, \"Iteration time\")"},
    {"host_us", SIM_P_NUM, LI(c.host_us, double), .cons = SIM_J_NONNEG, .def = 178,
     .doc = "the host's time per iteration (scheduling, inputs, sampling); 178 us is "
            "inference-sim's per-step overhead fitted to 16 vLLM 0.15.1 runs (its #488)"},
    {"host_us_per_seq", SIM_P_NUM, LI(c.host_us_per_seq, double), .cons = SIM_J_NONNEG,
     .def = 0, .doc = "the host's time per sequence of the iteration"},
    {"block_size", SIM_P_INT, LI(c.block_size, int), .lo = 1, .hi = 4096, .def = 16,
     .doc = "tokens per KV block"},
    {"gpu_memory_utilization", SIM_P_NUM, LI(c.mem_util, double), .cons = SIM_J_UNIT,
     .def = 0.9, .doc = "the share of the GPU's memory the engine takes"},
    {"reserve_gib", SIM_P_NUM, LI(c.reserve_gib, double), .cons = SIM_J_NONNEG, .def = 2,
     .doc = "activations, CUDA graphs and workspace, kept out of the KV pool"},
    {"kv_blocks", SIM_P_LONG, LI(c.kv_blocks, long), .lo = 0, .hi = 1000000000, .def = 0,
     .def_doc = "0: from the arithmetic",
     .doc = "the KV pool's blocks as a real engine reported them (vLLM logs `# GPU blocks`)"},
    {"kv_dtype_bytes", SIM_P_NUM, LI(c.arch.kv_dtype_bytes, double), .cons = SIM_J_POS,
     .def = 2, .doc = "bytes per KV element (1 for an fp8 cache)"},
    {"ttft_slo_ms", SIM_P_NUM, LI(c.ttft_slo_ms, double), .cons = SIM_J_NONNEG, .def = 0,
     .def_doc = "0: none", .doc = "time to first token a request must meet to be on time"},
    {"tpot_slo_ms", SIM_P_NUM, LI(c.tpot_slo_ms, double), .cons = SIM_J_NONNEG, .def = 0,
     .def_doc = "0: none", .doc = "time per output token (after the first) it must meet"},
    {NULL}};
#undef LI

int wl_llm_parse(const cJSON *o, const char *path, const char *gpu_kind, const char *base_dir,
                 struct sim_llm_cfg *out)
{
    struct llm_in in;
    memset(&in, 0, sizeof in);
    char p[SIM_JPATH_MAX];
    int rc;
    if (!cJSON_IsObject(o))
        return sim_json_expected(path, "an object (the model's `llm` section)", o);
    if ((rc = sim_params_read(wl_llm_keys, o, path, &in)))
        return rc;
    const struct wl_llm_arch_entry *a = wl_llm_arch_find(in.model);
    if (!a) {
        sim_jpath(p, sizeof p, path, "model");
        return sim_err_set(SIM_EINVAL, "%s: expected one of llama-3-8b, llama-3-70b, "
                           "mistral-7b, qwen2.5-7b, tiny, tiny-qwen, got \"%s\"", p, in.model);
    }
    const char *gname = in.gpu ? in.gpu : gpu_kind;
    const struct wl_llm_gpu_entry *g = wl_llm_gpu_find(gname);
    if (!g) {
        sim_jpath(p, sizeof p, path, "gpu");
        return sim_err_set(SIM_EINVAL, "%s: expected one of h100, h200, a100, l40s, cpu%s, got "
                           "\"%s\"", p, in.gpu ? "" : " (it defaults to cluster.gpu_kind)",
                           gname);
    }
    int tp = in.c.tp, kvh = a->arch.kv_heads;
    if (a->arch.heads % tp || (kvh % tp && tp % kvh)) {
        sim_jpath(p, sizeof p, path, "tp");
        return sim_err_set(SIM_EINVAL, "%s: expected a degree that divides %s's %d heads and "
                           "divides or is a multiple of its %d KV heads, got %d", p, a->name,
                           a->arch.heads, kvh, tp);
    }
    double kv_bytes = in.c.arch.kv_dtype_bytes;
    in.c.arch = a->arch;
    in.c.arch.kv_dtype_bytes = kv_bytes;
    in.c.gpu = g->gpu;
    in.c.prof = SIM_LLM_ROOFLINE;
    if ((in.profile = cJSON_GetObjectItemCaseSensitive(o, "profile"))) {
        sim_jpath(p, sizeof p, path, "profile");
        if (cJSON_IsString(in.profile)) {
            if (strcmp(in.profile->valuestring, "roofline") != 0)
                return sim_err_set(SIM_EINVAL, "%s: expected \"roofline\" or a linear profile "
                                   "object, got \"%s\"", p, in.profile->valuestring);
        } else if (cJSON_IsObject(in.profile) &&
                   (cJSON_GetObjectItemCaseSensitive(in.profile, "format") ||
                    cJSON_GetObjectItemCaseSensitive(in.profile, "file"))) {
            if ((rc = wl_llm_profile_read(in.profile, p, base_dir, a->name, g->name, tp,
                                          &in.c.table)))
                return rc;
            in.c.prof = SIM_LLM_TABLE;
        } else if (cJSON_IsObject(in.profile)) {
            if ((rc = sim_params_read(LINEAR, in.profile, p, &in)))
                return rc;
            if (in.c.lin.base_us + in.c.lin.token_us + in.c.lin.seq_us + in.c.lin.pair_ns <= 0)
                return sim_err_set(SIM_EINVAL, "%s: expected a linear profile with some "
                                   "positive term, got all 0", p);
            in.c.prof = SIM_LLM_LINEAR;
        } else {
            return sim_json_expected(p, "\"roofline\" or {base_us, token_us, seq_us, pair_ns}",
                                     in.profile);
        }
    }
    if (g->gpu.peak_tflops <= 0 && in.c.prof == SIM_LLM_ROOFLINE) {
        sim_jpath(p, sizeof p, path, "profile");
        return sim_err_set(SIM_EINVAL, "%s: %s has no datasheet for a roofline estimate: "
                           "expected a measured profile (servesim-calibrate llm-measure) or a "
                           "linear one", p, g->name);
    }
    if (g->gpu.mem_gib <= 0 && in.c.kv_blocks <= 0) {
        sim_llm_table_free(in.c.table);
        sim_jpath(p, sizeof p, path, "kv_blocks");
        return sim_err_set(SIM_EINVAL, "%s: %s has no memory size to derive the KV pool from: "
                           "expected the pool's blocks, got none", p, g->name);
    }
    *out = in.c;
    struct sim_llm_mem m;
    if (sim_llm_memory(out, &m) < 1 || (m.kv_gib <= 0 && g->gpu.mem_gib > 0)) {
        sim_llm_table_free(out->table);
        out->table = NULL;
        out->prof = SIM_LLM_ROOFLINE;
        return sim_err_set(SIM_EINVAL, "%s: %s does not leave room for one KV block on %s: "
                           "%.2f GiB usable (%.2f GiB x %.2f) - %.2f GiB of weights - %.2f GiB "
                           "reserved = %.2f GiB", path, a->name, g->name, m.usable_gib,
                           out->gpu.mem_gib, out->mem_util, m.weights_gib, out->reserve_gib,
                           m.kv_gib);
    }
    return 0;
}
