/* fa2_plan — FA2's optimizer and its baselines, as pure functions (spec: specs/fa2.md).
 *
 * A problem is an application (DNNs, execution paths with SLAs and request rates) and one
 * quadratic profile per DNN, d_s(b) = a*b^2 + b1*b + c (ms). A plan gives each DNN a batch
 * size b_s and an instance count n_s. Time at a DNN is l_s(b) = d_s(b) + (b - 1)/lambda_s (the
 * worst-case time to collect a batch); n_s = ceil(lambda_s / h_s(b)), h_s(b) = b / d_s(b).
 * Objective: sum n_s + delta * sum b_s, subject to sum_{s in p} l_s(b_s) <= SLA_p.
 *
 *   fa2_transform   graph transformation: cut incoming edges of ingress aggregators by
 *                   lowest sharing degree, splitting path SLAs in proportion to intensity
 *   fa2_plan_dp     FA2's dynamic program over the transformed graph in 1 ms slots
 *   fa2_plan_milp   the exact optimum of the integer program (GLPK, one binary per (s, b))
 *   fa2_plan_exhaustive  the exact optimum by enumeration (small problems; tests)
 *   fa2_plan_grandslam / _inferline / _ds2   the spec's baselines
 * Every planner returns a plan; `feasible` says whether it meets every path SLA (with the
 * exact latencies, not the DP's slots). */
#ifndef FA2_PLAN_H
#define FA2_PLAN_H

#include <stdbool.h>

#define FA2_MAX_DNN 32
#define FA2_MAX_PATHS 64
#define FA2_MAX_STAGES 16
#define FA2_MAX_BATCH 64
/* The longest path SLA the planners take: FA2's DP keeps a table of 1-ms slots up to the
 * largest SLA per DNN (1e6 slots x 32 DNNs x 9 bytes, about 300 MB at most). */
#define FA2_MAX_SLA_MS 1e6

struct fa2_path {
    int nstages;
    int stages[FA2_MAX_STAGES];        /* DNN indices, in order */
    double sla_ms;
    double rate_rps;                   /* requests/s following this path */
};

struct fa2_problem {
    int ndnn, npaths;
    struct fa2_path paths[FA2_MAX_PATHS];
    double a[FA2_MAX_DNN], b1[FA2_MAX_DNN], c[FA2_MAX_DNN];  /* d(b) in ms */
    double extra_rps[FA2_MAX_DNN];     /* rate added at a DNN on top of its paths' (the
                                        * runtime's headroom; 0 in the paper's problem) */
    int bmax;                          /* batch sizes 1..bmax (16 in the paper) */
    double delta;                      /* weight of sum b_s in the objective (small) */
};

struct fa2_plan {
    int b[FA2_MAX_DNN], n[FA2_MAX_DNN];
    double cost;                       /* sum n + delta * sum b */
    int instances;                     /* sum n */
    bool feasible;                     /* every path's SLA holds */
};

/* One segment of a path after the transformation. */
struct fa2_segment {
    int path;                          /* original path */
    int first, last;                   /* stage indices on that path, inclusive */
    double sla_ms;
};

struct fa2_graph {
    int parent[FA2_MAX_DNN];           /* -1: a root (child of the artificial root) */
    int nseg;
    struct fa2_segment seg[FA2_MAX_PATHS * FA2_MAX_STAGES];
    double intensity[FA2_MAX_DNN];     /* mean of d_s(b) over b in 1..16 */
    int cuts;                          /* edges removed */
};

double fa2_d(const struct fa2_problem *p, int s, int b);
/* Request rate at each DNN from the paths (the original graph), plus extra_rps. */
void fa2_rates(const struct fa2_problem *p, double lambda[FA2_MAX_DNN]);
/* l_s(b) in ms at rate lambda; b > 1 with lambda = 0 never fills: +inf. */
double fa2_latency(const struct fa2_problem *p, int s, int b, double lambda);
/* ceil(lambda / h_s(b)), at least 1. */
int fa2_instances(const struct fa2_problem *p, int s, int b, double lambda);
/* Fills n, cost, instances and feasible for the batch sizes in plan->b. */
void fa2_plan_eval(const struct fa2_problem *p, struct fa2_plan *plan);

/* Returns 0, or -1 when the paths do not form a DAG. */
int fa2_transform(const struct fa2_problem *p, struct fa2_graph *g /* OUT */);

/* FA2: transformation + DP. Returns 0 with a plan (feasible = false and batch 1 everywhere
 * when the DP finds none), -1 on a bad problem or no memory. */
int fa2_plan_dp(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);
/* Exact optimum; returns 0 (out->feasible false when infeasible), -1 on a solver failure. */
int fa2_plan_milp(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);
int fa2_plan_exhaustive(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);
int fa2_plan_grandslam(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);
int fa2_plan_inferline(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);
int fa2_plan_ds2(const struct fa2_problem *p, struct fa2_plan *out /* OUT */);

/* The problem of a world with an application (policies/fa2.c): its models as
 * DNNs with their closed-form profile on cluster.gpu_kind, its paths with their SLAs, rates 0
 * (set them per path). Returns 0, or SIM_EINVAL with a message for a table profile or too
 * many models or paths. */
struct sim_world;
int fa2_problem_of(const struct sim_world *cfg, int bmax, double delta,
                   struct fa2_problem *out /* OUT */);

#endif
