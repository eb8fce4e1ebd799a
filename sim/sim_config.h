/* sim_config — the validated, typed form of an experiment config (JSON).
 *
 * sim_config_load() reads a file (or the embedded quickstart), applies --set overrides,
 * checks every key (unknown keys are errors; every error names the JSON path, what was
 * expected and what was found, prefixed by the file name) and expands zoo references into
 * models. The result is immutable during runs: the goodput search builds many engines from
 * one config at different load scales. The effective JSON (after overrides) is kept, printed
 * canonically, for the results database and its hash. Keys: see docs/config.md. */
#ifndef SIM_CONFIG_H
#define SIM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#define SIM_NAME_MAX 64
#define SIM_MAX_KINDS 8

enum sim_prof_form { SIM_PROF_LINEAR, SIM_PROF_QUADRATIC, SIM_PROF_TABLE };

/* A latency profile over batch size b >= 1, in milliseconds:
 * linear l(b) = alpha*b + beta (Symphony); quadratic d(b) = a*b^2 + b*b + c (FA2);
 * table: latency_ms[b-1] measured per batch size, extended linearly past its end. */
struct sim_profile {
    enum sim_prof_form form;
    double alpha_ms, beta_ms;          /* linear */
    double a_ms, b_ms, c_ms;           /* quadratic */
    int table_n;
    double *table_ms;                  /* table, owned */
};

double sim_profile_ms(const struct sim_profile *p, int b);

struct sim_model_cfg {
    char name[SIM_NAME_MAX];
    double slo_ms;
    int max_batch;                     /* 0 in the file: derived (largest b with l(b) <= SLO) */
    double share;                      /* explicit popularity; < 0 when not given */
    double weights_mb, static_mb, dynamic_mb;  /* dynamic: activations at max_batch */
    double load_ms;                    /* time to load onto an executor */
    int nprof;
    char prof_kind[SIM_MAX_KINDS][SIM_NAME_MAX];
    struct sim_profile prof[SIM_MAX_KINDS];
};

enum sim_arrival { SIM_ARR_POISSON, SIM_ARR_GAMMA, SIM_ARR_UNIFORM };
enum sim_popularity { SIM_POP_UNIFORM, SIM_POP_ZIPF, SIM_POP_EXPLICIT };
enum sim_jitter { SIM_JIT_NONE, SIM_JIT_EXPONENTIAL, SIM_JIT_LOGNORMAL };
enum sim_split { SIM_SPLIT_INDEPENDENT, SIM_SPLIT_ROUND_ROBIN, SIM_SPLIT_RANDOM };

struct sim_segment {
    double duration_s;                 /* <= 0 for the last: until the end */
    double scale;                      /* multiplies the rate */
};

struct wl_trace_cfg;
struct wl_app;

enum sim_autoscaler { SIM_AS_NONE, SIM_AS_SYMPHONY, SIM_AS_TARGET_UTIL };

/* `autoscale` (sim/sim_autoscale.c): acts every metrics.sample_period_s. */
struct sim_autoscale_cfg {
    enum sim_autoscaler kind;
    int min_gpus;                      /* never fewer executors up or starting */
    double bad_rate_threshold;         /* symphony: add N r/(1-r) when r is above it */
    double keep_idle;                  /* symphony: release N (f - keep_idle) */
    double target_util, tolerance;     /* target_util: desired = ceil(N u / target) outside +-tol */
    double cooldown_s;                 /* no release within this long of the last action */
};

struct sim_config {
    cJSON *json;                       /* effective config, owned */
    char *file;                        /* for messages; "(embedded quickstart)" */
    char *dir;                         /* relative paths resolve here */
    char name[128];
    uint64_t seed;
    double duration_s, warmup_s, drain_s;

    int gpus, max_gpus;                /* at start; upper bound for sim_exec_add */
    char gpu_kind[SIM_NAME_MAX];
    double gpu_memory_mb;              /* 0 = unlimited */
    double page_mb;                    /* weights cache page */
    double load_gb_s;                  /* weights transfer when a model has no load_ms */
    double provision_s;                /* delay before an added executor is up */
    double exec_cv;                    /* execution-time jitter: lognormal, mean 1, this cv */

    int nmodels;
    struct sim_model_cfg *models;

    double rate_rps;
    enum sim_arrival arrival;
    double gamma_shape;
    enum sim_popularity popularity;
    double zipf_s;
    int nsegments;
    struct sim_segment *segments;
    struct wl_trace_cfg *trace;        /* workload.trace: a real trace instead of rate_rps */
    struct wl_app *app;                /* application (DAG of the models), or NULL */
    double *model_rps;                 /* [nmodels] mean offered rate at load scale 1: rate x
                                        * popularity share, or the trace's per-model mean */
    double trace_total, trace_peak_rps;/* from the scan at load (load scale 1) */
    int trace_gaps;
    double trace_gap_s;

    struct sim_autoscale_cfg autoscale;

    int frontends;
    enum sim_split frontend_split;
    double ctrl_us, data_us_per_request, resp_us;
    enum sim_jitter jitter;
    double jitter_mean_us, jitter_sigma;

    char policy[SIM_NAME_MAX];
    const cJSON *policy_params;        /* points into json; may be NULL */

    double percentile;                 /* e.g. 99 */
    double sample_period_s;            /* 0 = no time series */

    double search_start_scale, search_tol;
    int search_max_probes;
};

/* Loads `file` (NULL: the embedded quickstart), applying `nsets` overrides "path=value" and
 * `seed` if seed_given. Returns 0, or SIM_EINVAL/SIM_ENOENT/... with sim_err_msg() set. */
int sim_config_load(const char *file, const char *const *sets, int nsets, bool seed_given,
                    uint64_t seed, struct sim_config **out /* OUT */);
/* Builds from an in-memory JSON text (tests); `dir` resolves relative paths. */
int sim_config_from_text(const char *text, const char *name, const char *dir,
                         struct sim_config **out /* OUT */);
void sim_config_destroy(struct sim_config *cfg);

/* Canonical JSON text (caller frees) and its FNV-1a 64 hash as 16 hex digits. */
char *sim_config_canonical(const struct sim_config *cfg);
void sim_config_hash(const struct sim_config *cfg, char out[17]);

/* Index of `kind` in model m's profiles, or -1. */
int sim_model_cfg_kind(const struct sim_model_cfg *m, const char *kind);

extern const char *const sim_quickstart_json;

#endif
