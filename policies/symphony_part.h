/* symphony_part — Symphony's partitioner (specs: "Partitioning (epoch scale)"): models split
 * into k sub-clusters, each with its own GPUs, every GPU of a sub-cluster holding all of its
 * models, when the models do not fit one GPU's memory or one dispatcher's rate.
 *
 * MILP over x_ij = model i in sub-cluster j: minimise dR + w dS subject to
 *   sum_i r_i x_ij <= R_max                    (one dispatcher's rate)
 *   sum_i s_i x_ij + max_i d_i x_ij <= S_max   (static memory plus the largest dynamic)
 *   |sum_i r_i x_ij - R_avg| <= dR,  |sum_i s_i x_ij - S_avg| <= dS,  sum_j x_ij = 1,
 * and, re-partitioning from x', sum (c_i / 2) |x_ij - x'_ij| <= C_max: a model that moves
 * costs c_i (the spec's c_ij |x_ij - x'_ij| counts it twice, leaving and joining). With
 * `transition`, the memory row holds for the union of old and new models of each sub-cluster
 * (sum_i s_i max(x_ij, x'_ij) + max_i d_i max(x_ij, x'_ij) <= S_max, linear as x' is given), so
 * a model can be loaded where it goes before it leaves where it was. The max is
 * linearised with D_j >= d_i x_ij. Solved with GLPK under a time limit; a random-restart
 * baseline and exhaustive enumeration (small instances, tests) use the same objective,
 * evaluated on an assignment as max_j |R_j - R_avg| + w max_j |S_j - S_avg|. */
#ifndef SYMPHONY_PART_H
#define SYMPHONY_PART_H

#include <stdbool.h>
#include <gsl/gsl_rng.h>

#define SYM_PART_MAX_MODELS 256
#define SYM_PART_MAX_GROUPS 64

struct sym_part_problem {
    int n, k;                           /* models, sub-clusters */
    double r[SYM_PART_MAX_MODELS];      /* rate (req/s) */
    double s[SYM_PART_MAX_MODELS];      /* static memory: weights + static (MB) */
    double d[SYM_PART_MAX_MODELS];      /* dynamic memory at max batch (MB) */
    double r_max, s_max;                /* <= 0: no limit */
    double w;                           /* weight of the memory deviation; <= 0: R_avg / S_avg */
    const int *prev;                    /* [n] the current partition, or NULL */
    double c[SYM_PART_MAX_MODELS];      /* cost of moving model i (with prev) */
    double c_max;                       /* budget of moves (with prev) */
    bool transition;                    /* (with prev) old and new models fit together */
    double time_limit_s;                /* the MILP's; <= 0: none */
    int node_limit;                     /* the MILP's branch-and-bound nodes; <= 0: none. A
                                         * limit in nodes binds alike on every machine (the
                                         * run stays a function of config and seed); the time
                                         * limit is a backstop whose binding is not */
};

struct sym_part_result {
    int assign[SYM_PART_MAX_MODELS];    /* sub-cluster of each model */
    bool feasible;
    bool optimal;                       /* proven optimal (MILP, enumeration) */
    double objective;                   /* max dev of rate + w x max dev of static memory */
    double load_imbalance, mem_imbalance;   /* (max - min) / avg over sub-clusters */
    double move_cost;                   /* sum of c_i over models that moved (with prev) */
    int nodes;                          /* MILP: branch-and-bound nodes selected */
};

/* The objective and imbalances of `assign` into res (res->assign is set to it); returns
 * whether it meets every constraint. */
bool sym_part_eval(const struct sym_part_problem *p, const int *assign,
                   struct sym_part_result *res /* OUT */);
/* GLPK MILP. Returns 0 with res filled (feasible false when GLPK proves none or finds none
 * in the time limit), or SIM_EINVAL / SIM_ENOMEM. */
int sym_part_milp(const struct sym_part_problem *p, struct sym_part_result *res /* OUT */);
/* The best of `restarts` uniformly random assignments (infeasible ones rejected). */
int sym_part_random(const struct sym_part_problem *p, int restarts, gsl_rng *rng,
                    struct sym_part_result *res /* OUT */);
/* Every assignment (k^n <= 2e6); for tests. */
int sym_part_enumerate(const struct sym_part_problem *p, struct sym_part_result *res /* OUT */);

#endif
