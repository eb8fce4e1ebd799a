/* test_partition — Symphony's partitioner (policies/symphony_part.h) against exhaustive
 * enumeration on small random instances: the GLPK MILP finds the optimum of the objective
 * (and agrees on infeasibility); re-partitioning keeps within its move budget (a zero budget
 * keeps the partition) and, with the transition constraint, fits old and new models together;
 * the random-restart baseline is never better than the optimum. */
#include <gsl/gsl_rng.h>

#include "sim_err.h"
#include "sim_rng.h"
#include "symphony_part.h"
#include "test.h"

/* A random instance: n models with rates 10..1000 req/s and memory 100..3000 MB (dynamic up
 * to 2000 MB); limits loose, tight or absent by `mode`. */
static void instance(gsl_rng *g, int n, int k, int mode, struct sym_part_problem *p)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->k = k;
    double rsum = 0, ssum = 0, dmax = 0;
    for (int i = 0; i < n; i++) {
        p->r[i] = 10 + 990 * gsl_rng_uniform(g);
        p->s[i] = 100 + 2900 * gsl_rng_uniform(g);
        p->d[i] = 2000 * gsl_rng_uniform(g);
        rsum += p->r[i];
        ssum += p->s[i];
        dmax = fmax(dmax, p->d[i]);
        p->c[i] = p->s[i];
    }
    if (mode == 1) {                    /* loose: room for a fair share and then some */
        p->r_max = 1.5 * rsum / k;
        p->s_max = 1.5 * ssum / k + dmax;
    } else if (mode == 2) {             /* tight: often infeasible */
        p->r_max = 1.05 * rsum / k;
        p->s_max = 1.05 * ssum / k + 0.5 * dmax;
    }
}

static void milp_matches_enumeration(void)
{
    gsl_rng *g = sim_rng_stream(7, "test.partition");
    int infeasible = 0, solved = 0;
    for (int t = 0; t < 60; t++) {
        struct sym_part_problem p;
        struct sym_part_result m, e;
        instance(g, 5 + t % 4, 2 + t % 3, t % 3, &p);
        REQUIRE_OK(sym_part_enumerate(&p, &e));
        REQUIRE_OK(sym_part_milp(&p, &m));
        CHECK(m.feasible == e.feasible, "instance %d: MILP feasible %d, enumeration %d", t,
              m.feasible, e.feasible);
        if (!e.feasible) {
            infeasible++;
            continue;
        }
        solved++;
        CHECK(m.optimal, "instance %d: MILP not proven optimal", t);
        CHECK(fabs(m.objective - e.objective) <= 1e-6 * fmax(1, e.objective),
              "instance %d (%d models, %d sub-clusters): MILP %.9g, optimum %.9g", t, p.n, p.k,
              m.objective, e.objective);
        struct sym_part_result again;
        CHECK(sym_part_eval(&p, m.assign, &again) && fabs(again.objective - m.objective) < 1e-9,
              "instance %d: the MILP's assignment evaluates to %.9g", t, again.objective);
        struct sym_part_result rr;
        REQUIRE_OK(sym_part_random(&p, 200, g, &rr));
        CHECK(!rr.feasible || rr.objective >= e.objective - 1e-9,
              "instance %d: random restarts %.9g below the optimum %.9g", t, rr.objective,
              e.objective);
    }
    CHECK(solved >= 30 && infeasible >= 3, "%d solved, %d infeasible: the instances do not "
          "exercise both", solved, infeasible);
    gsl_rng_free(g);
}

static void repartition_within_move_budget(void)
{
    gsl_rng *g = sim_rng_stream(11, "test.partition.moves");
    for (int t = 0; t < 20; t++) {
        struct sym_part_problem p;
        struct sym_part_result first, moved, kept, e;
        instance(g, 7, 3, 0, &p);
        REQUIRE_OK(sym_part_milp(&p, &first));
        int prev[SYM_PART_MAX_MODELS];
        for (int i = 0; i < p.n; i++)   /* the load shifts: model 0 becomes the busiest */
            prev[i] = first.assign[i];
        p.r[0] *= 8;
        p.prev = prev;
        p.c_max = 0;
        REQUIRE_OK(sym_part_milp(&p, &kept));
        CHECK(kept.feasible && kept.move_cost == 0, "instance %d: budget 0 moved %g", t,
              kept.move_cost);
        for (int i = 0; i < p.n; i++)
            CHECK(kept.assign[i] == prev[i], "instance %d: model %d moved with budget 0", t, i);
        p.c_max = 3000;                 /* at most one model's memory (c_i = s_i <= 3000) */
        REQUIRE_OK(sym_part_milp(&p, &moved));
        REQUIRE_OK(sym_part_enumerate(&p, &e));
        CHECK(moved.feasible && moved.move_cost <= 3000 + 1e-9, "instance %d: moves cost %g", t,
              moved.move_cost);
        CHECK(fabs(moved.objective - e.objective) <= 1e-6 * fmax(1, e.objective),
              "instance %d: re-partition %.9g, optimum under the budget %.9g", t,
              moved.objective, e.objective);
        CHECK(moved.objective <= kept.objective + 1e-9, "instance %d: moving made it worse", t);
    }
    gsl_rng_free(g);
}

/* With `transition` every sub-cluster must hold its old and new models at once (so a moving
 * model is loaded where it goes before it leaves): the MILP agrees with enumeration, and its
 * answer meets the union's memory, recomputed here. Memory is set so that the union binds. */
static void repartition_transition_memory(void)
{
    gsl_rng *g = sim_rng_stream(13, "test.partition.transition");
    int binds = 0;
    for (int t = 0; t < 30; t++) {
        struct sym_part_problem p;
        struct sym_part_result first, free_, trans, e;
        instance(g, 6 + t % 2, 3, 0, &p);
        double ssum = 0, dmax = 0;
        for (int i = 0; i < p.n; i++)
            ssum += p.s[i], dmax = fmax(dmax, p.d[i]);
        p.s_max = 1.3 * ssum / p.k + dmax;  /* a fair share and a little: the union is tight */
        REQUIRE_OK(sym_part_milp(&p, &first));
        if (!first.feasible)
            continue;
        int prev[SYM_PART_MAX_MODELS];
        for (int i = 0; i < p.n; i++)
            prev[i] = first.assign[i];
        p.r[t % p.n] *= 6;              /* the load shifts */
        p.prev = prev;
        p.c_max = 6000;
        REQUIRE_OK(sym_part_milp(&p, &free_));
        p.transition = true;
        REQUIRE_OK(sym_part_milp(&p, &trans));
        REQUIRE_OK(sym_part_enumerate(&p, &e));
        CHECK(trans.feasible == e.feasible, "instance %d: MILP feasible %d, enumeration %d", t,
              trans.feasible, e.feasible);
        if (!e.feasible)
            continue;
        CHECK(fabs(trans.objective - e.objective) <= 1e-6 * fmax(1, e.objective),
              "instance %d: MILP %.9g, optimum %.9g", t, trans.objective, e.objective);
        CHECK(trans.objective >= free_.objective - 1e-9, "instance %d: the union constraint "
              "made it better", t);
        binds += trans.objective > free_.objective + 1e-9;
        for (int j = 0; j < p.k; j++) {
            double sm = 0, dm = 0;
            for (int i = 0; i < p.n; i++)
                if (trans.assign[i] == j || prev[i] == j)
                    sm += p.s[i], dm = fmax(dm, p.d[i]);
            CHECK(sm + dm <= p.s_max + 1e-6, "instance %d: sub-cluster %d holds %.1f MB in "
                  "transition, limit %.1f", t, j, sm + dm, p.s_max);
        }
    }
    CHECK(binds >= 3, "the union constraint bound on only %d instances", binds);
    gsl_rng_free(g);
}

/* A node budget binds alike every time (the time limit would not): twelve models of Zipf(5)
 * rates into 4 sub-clusters, which the MILP cannot prove optimal in its budget, stop at the
 * budget with a feasible partition, the same one on every call. */
static void node_limit_is_deterministic(void)
{
    struct sym_part_problem p;
    memset(&p, 0, sizeof p);
    p.n = 12;
    p.k = 4;
    for (int i = 0; i < p.n; i++) {
        p.r[i] = 2000 * pow(i + 1, -5.0);
        p.s[i] = 500 + 10 * i;
        p.c[i] = p.s[i];
    }
    p.node_limit = 200;
    struct sym_part_result a, b;
    REQUIRE_OK(sym_part_milp(&p, &a));
    REQUIRE_OK(sym_part_milp(&p, &b));
    CHECK(a.feasible && !a.optimal && a.nodes == 201,
          "feasible %d, optimal %d, nodes %d (want a stop at the budget)", a.feasible, a.optimal,
          a.nodes);
    bool same = a.nodes == b.nodes && a.objective == b.objective;
    for (int i = 0; i < p.n; i++)
        same = same && a.assign[i] == b.assign[i];
    CHECK(same, "two solves under one node budget differ: objective %.9g vs %.9g", a.objective,
          b.objective);
}

TEST_MAIN({"node_limit_is_deterministic", node_limit_is_deterministic},
          {"milp_matches_enumeration", milp_matches_enumeration},
          {"repartition_within_move_budget", repartition_within_move_budget},
          {"repartition_transition_memory", repartition_transition_memory})
