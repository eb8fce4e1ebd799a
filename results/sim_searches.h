/* sim_searches — what a search keeps besides its runs, as the results store writes it: a
 * goodput search's probes and how it ended (filled by sim_goodput.c in the experiment layer),
 * and a capacity plan's probes and answer (filled by sim_plan.c). The structs live here, below
 * the experiment layer, so that the store (sim_store.h) can write them without depending on
 * the code that runs the searches. */
#ifndef SIM_SEARCHES_H
#define SIM_SEARCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_result.h"

/* What a probe must meet (search.rule): every model's p-quantile within its SLO, dropped
 * requests counted (worst: the Symphony paper's written definition, the default), or the bad
 * fraction of all models' requests together within 1 - p (aggregate: what the authors'
 * harness prints as "avg" beside "worst", abcdabcd987/nexuslb tools/nexus_scheduler/
 * run_nexus_main.cpp and tools/bench_dispatcher/run_rankmt_main.cpp). */
enum sim_search_rule { SIM_RULE_WORST, SIM_RULE_AGGREGATE };
extern const char *const sim_search_rule_names[];   /* "worst", "aggregate" */

/* Does a run meet the rule? */
static inline bool sim_rule_pass(enum sim_search_rule rule, const struct sim_result *r)
{
    return rule == SIM_RULE_AGGREGATE ? r->pass_aggregate : r->pass;
}

struct sim_probe {
    double scale, offered_rps, worst_bad_frac, worst_p99_ms;
    double all_bad_frac;                /* late + dropped over all requests */
    bool pass;                          /* under the search's rule */
    char worst_model[SIM_NAME_MAX];
};

/* How a goodput search ended. Only CONVERGED gives a goodput (the others exit 4, and their
 * row in the results database has this word as runs.status, so readers skip it). */
enum sim_search_status {
    SIM_SEARCH_CONVERGED,               /* a passing lo and a failing hi within search.tolerance */
    SIM_SEARCH_NO_PASS,                 /* no probed load met every SLO */
    SIM_SEARCH_NO_FAIL,                 /* every probe passed: the goodput lies above them */
    SIM_SEARCH_WIDE,                    /* bracketed, but wider than the tolerance at max_probes */
};
extern const char *const sim_search_status_names[];

struct sim_goodput {
    int nprobes;
    struct sim_probe probes[256];
    double goodput_rps, goodput_scale;
    bool monotone;                      /* no passing probe above a failing one */
    bool found;                         /* some probe passed */
    enum sim_search_status status;
    double lo_scale, hi_scale;          /* the bracket (-1: no such probe) */
    int max_probes;                     /* the search's search.max_probes and .tolerance */
    double tol;
    enum sim_search_rule rule;          /* and search.rule */
    struct sim_result *best;            /* the highest passing probe's result (or the lowest) */
};

#define SIM_PLAN_MAX_PROBES 64

struct sim_plan_probe {
    int gpus;
    int gpus_used;                      /* of them, those that ran a batch (the policy may
                                         * leave GPUs idle: more cannot change its answer) */
    bool pass;                          /* under the plan's rule */
    int64_t run_id;
    char worst_model[SIM_NAME_MAX];
    double worst_bad_frac, all_bad_frac;
};

struct sim_plan {
    char id[160], name[128];
    int lower_bound, min_gpus, max_gpus;
    int static_gpus;                    /* 0: none passed up to max_gpus */
    bool monotone;
    enum sim_search_rule rule;          /* search.rule */
    int nprobes;
    struct sim_plan_probe probes[SIM_PLAN_MAX_PROBES];
    struct sim_result *static_result;   /* the run at static_gpus */
    int64_t static_run_id;
    double trace_mean_rps, trace_peak_rps, duration_s;
    double time_scale;                  /* a trace's workload.trace.time_scale (1 otherwise):
                                         * a simulated second is that many of trace time */
    int trace_gaps;
    char warning[400];                  /* said with the answer ("": none): a window the
                                         * trace covers in part (partial_window) */
    bool autoscaled;
    char autoscaler[32];
    struct sim_result *autoscale_result;
    int64_t autoscale_run_id;
    /* search.variants: the config's own plan is labelled "as configured"; each variant's is a
     * whole plan of its own (no variants of its own), in the config's order */
    char label[64];
    struct sim_plan *variants;
    int nvariants;
};

#endif
