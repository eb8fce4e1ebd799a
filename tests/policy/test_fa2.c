/* test_fa2 — FA2's optimizer against the exact optimum, its graph transformation, the
 * baselines, and the FA2 runtime in the simulator (specs/fa2.md):
 *   - on random small DAGs, rates and quadratic profiles: the MILP equals enumeration (two
 *     independent exact solvers), FA2's DP finds a plan whenever the optimum meets the SLAs
 *     the graph transformation gives its segments (the split can exclude the optimum: 1 case
 *     in 400 here), never goes below it, and equals it in most cases (the match rate is
 *     printed: 95.8% here; the paper reports 96.8%);
 *   - the transformation leaves no ingress aggregator, splits each path's SLA into segments
 *     that sum to it, and keeps rates from the original graph;
 *   - a single DNN has a closed-form optimum (smallest ceil(lambda d(b) / b) over feasible b);
 *   - on the paper's application (workloads/zoo/fa2_cpu.json): FA2 plans no more instances
 *     than GrandSLAm, InferLine and DS2 at every steady rate 6..60 req/s, and no fewer than
 *     the optimum; a steady run keeps SLA violations near 1% (the spec; printed); after a
 *     step 8 -> 27 req/s the instances in service follow within interval + cold start + a
 *     few seconds and violations settle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "fa2_plan.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_report.h"
#include "test.h"
#include "test_ts.h"

/* A random DAG: ndnn DNNs in index order (edges go up in index), npaths paths of 1..4
 * stages, profiles with a in [0, 0.3], b1 in [2, 40], c in [2, 40] ms, rates 2..40 req/s,
 * SLAs 1.2..4 x the path's batch-1 time. */
static void random_problem(gsl_rng *r, struct fa2_problem *p)
{
    memset(p, 0, sizeof *p);
    p->ndnn = 3 + (int)gsl_rng_uniform_int(r, 4);
    p->npaths = 2 + (int)gsl_rng_uniform_int(r, 3);
    p->bmax = 16;
    p->delta = 1e-3;
    for (int s = 0; s < p->ndnn; s++) {
        p->a[s] = 0.3 * gsl_rng_uniform(r);
        p->b1[s] = 2 + 38 * gsl_rng_uniform(r);
        p->c[s] = 2 + 38 * gsl_rng_uniform(r);
    }
    for (int q = 0; q < p->npaths; q++) {
        struct fa2_path *fp = &p->paths[q];
        int want = 1 + (int)gsl_rng_uniform_int(r, 4), s = (int)gsl_rng_uniform_int(r, (unsigned long)p->ndnn);
        fp->nstages = 0;
        while (fp->nstages < want && s < p->ndnn) {
            fp->stages[fp->nstages++] = s;
            s += 1 + (int)gsl_rng_uniform_int(r, 2);
        }
        double d1 = 0;
        for (int i = 0; i < fp->nstages; i++)
            d1 += fa2_d(p, fp->stages[i], 1);
        fp->sla_ms = d1 * (1.2 + 2.8 * gsl_rng_uniform(r));
        fp->rate_rps = 2 + 38 * gsl_rng_uniform(r);
    }
}

/* Whether a plan meets the SLA of every segment of the transformed graph. */
static bool meets_segments(const struct fa2_problem *p, const struct fa2_plan *plan)
{
    struct fa2_graph g;
    double lambda[FA2_MAX_DNN];
    if (fa2_transform(p, &g))
        return false;
    fa2_rates(p, lambda);
    for (int k = 0; k < g.nseg; k++) {
        double l = 0;
        for (int i = g.seg[k].first; i <= g.seg[k].last; i++) {
            int s = p->paths[g.seg[k].path].stages[i];
            l += fa2_latency(p, s, plan->b[s], lambda[s]);
        }
        if (l > g.seg[k].sla_ms + 1e-6)
            return false;
    }
    return true;
}

static void dp_matches_optimum(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int n = 400, feasible = 0, match = 0, dp_infeasible = 0, milp_ne_enum = 0;
    double worst_gap = 0;
    for (int i = 0; i < n; i++) {
        struct fa2_problem p;
        struct fa2_plan e, m, d;
        random_problem(r, &p);
        REQUIRE_OK(fa2_plan_exhaustive(&p, &e));
        REQUIRE_OK(fa2_plan_milp(&p, &m));
        REQUIRE_OK(fa2_plan_dp(&p, &d));
        if (m.feasible != e.feasible || (e.feasible && fabs(m.cost - e.cost) > 1e-6))
            milp_ne_enum++;
        if (!e.feasible)
            continue;
        feasible++;
        if (!d.feasible) {
            /* the transformation's SLA split can exclude the optimum; nothing else may */
            CHECK(!meets_segments(&p, &e), "problem %d: no DP plan, yet the optimum meets "
                  "every segment's SLA", i);
            dp_infeasible++;
            continue;
        }
        CHECK(d.cost >= e.cost - 1e-9, "problem %d: DP %g below the optimum %g", i, d.cost, e.cost);
        if (d.instances == e.instances)
            match++;
        worst_gap = fmax(worst_gap, (d.instances - e.instances) / (double)e.instances);
    }
    printf("dp vs optimum: %d feasible of %d random problems; DP infeasible in %d; same "
           "instance count in %d (%.1f%%); worst excess %.1f%%; MILP != enumeration in %d\n",
           feasible, n, dp_infeasible, match, 100.0 * match / feasible, 100 * worst_gap,
           milp_ne_enum);
    CHECK(milp_ne_enum == 0, "the MILP and enumeration disagree in %d problems", milp_ne_enum);
    CHECK(feasible > n / 2, "only %d feasible problems: the generator is off", feasible);
    /* measured: no DP plan in 1 of 400 (the split), the optimum matched in 95.8% */
    CHECK(dp_infeasible <= feasible / 100, "DP infeasible in %d of %d feasible problems",
          dp_infeasible, feasible);
    CHECK(match >= 0.93 * feasible, "DP matched the optimum in %d of %d", match, feasible);
    gsl_rng_free(r);
}

/* The paper's application graph (Table III) with stand-in profiles. */
static void paper_problem(struct fa2_problem *p, double rate)
{
    /* DNNs 0..9: OBJD OBJR NSFW ALPR FACR IMGS QUAN SUMR TCLS AUTT */
    static const int paths[6][3] = {{0, 3, 6}, {0, 2, 4}, {0, 1, 5}, {7, 6, -1}, {9, 6, -1},
                                    {9, 7, 8}};
    static const double sla[6] = {3020, 3505, 3095, 13580, 12245, 25710};
    static const double d1[10] = {120, 80, 25, 560, 80, 25, 110, 1300, 110, 240};
    memset(p, 0, sizeof *p);
    p->ndnn = 10;
    p->npaths = 6;
    p->bmax = 16;
    p->delta = 1e-3;
    for (int s = 0; s < 10; s++)
        p->a[s] = 0.01 * d1[s] / 10, p->b1[s] = 0.85 * d1[s], p->c[s] = 0.15 * d1[s];
    for (int q = 0; q < 6; q++) {
        for (int i = 0; i < 3 && paths[q][i] >= 0; i++)
            p->paths[q].stages[p->paths[q].nstages++] = paths[q][i];
        p->paths[q].sla_ms = sla[q];
        p->paths[q].rate_rps = rate / 6;
    }
}

static void transform_invariants(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    for (int i = 0; i < 300; i++) {
        struct fa2_problem p;
        struct fa2_graph g;
        if (i == 0)
            paper_problem(&p, 15);
        else
            random_problem(r, &p);
        REQUIRE_OK(fa2_transform(&p, &g));
        /* no ingress aggregator: every DNN keeps at most one predecessor on the segments */
        for (int v = 0; v < p.ndnn; v++) {
            int preds = 0;
            for (int u = 0; u < p.ndnn; u++) {
                bool used = false;
                for (int k = 0; k < g.nseg; k++)
                    for (int j = g.seg[k].first; j < g.seg[k].last; j++)
                        used |= p.paths[g.seg[k].path].stages[j] == u &&
                                p.paths[g.seg[k].path].stages[j + 1] == v;
                preds += used;
                CHECK(!used || g.parent[v] == u, "problem %d: edge %d->%d kept, parent %d", i, u,
                      v, g.parent[v]);
            }
            CHECK(preds <= 1, "problem %d: DNN %d still has %d predecessors", i, v, preds);
        }
        /* each path's segments tile it and their SLAs sum to the path's SLA */
        for (int q = 0; q < p.npaths; q++) {
            double sum = 0;
            int covered = 0;
            for (int k = 0; k < g.nseg; k++)
                if (g.seg[k].path == q) {
                    sum += g.seg[k].sla_ms;
                    covered += g.seg[k].last - g.seg[k].first + 1;
                    CHECK(g.seg[k].sla_ms > 0, "problem %d: a segment with SLA %g", i, g.seg[k].sla_ms);
                }
            CHECK(fabs(sum - p.paths[q].sla_ms) < 1e-6, "problem %d path %d: segments sum to %g, "
                  "SLA %g", i, q, sum, p.paths[q].sla_ms);
            CHECK(covered == p.paths[q].nstages, "problem %d path %d: %d of %d stages covered",
                  i, q, covered, p.paths[q].nstages);
        }
        /* rates from the original graph: every path through s counts, plus the headroom */
        double lambda[FA2_MAX_DNN];
        for (int s = 0; s < p.ndnn; s++)
            p.extra_rps[s] = i % 2 ? 0.25 * s : 0;
        fa2_rates(&p, lambda);
        for (int s = 0; s < p.ndnn; s++) {
            double want = p.extra_rps[s];
            for (int q = 0; q < p.npaths; q++)
                for (int j = 0; j < p.paths[q].nstages; j++)
                    want += p.paths[q].stages[j] == s ? p.paths[q].rate_rps : 0;
            CHECK_NEAR(lambda[s], want, 1e-12);
        }
        if (i == 0) {
            /* the paper's graph: QUAN (6) is the only ingress aggregator, fed by ALPR, SUMR
             * and AUTT through one path each: two of its three edges are cut */
            CHECK(g.cuts == 2, "paper graph: %d cuts, want 2", g.cuts);
            CHECK(g.parent[6] >= 0 && g.parent[7] == 9 && g.parent[0] < 0 && g.parent[9] < 0,
                  "paper graph: parents QUAN %d SUMR %d", g.parent[6], g.parent[7]);
        }
    }
    gsl_rng_free(r);
}

/* One DNN, one path: the optimum is the smallest ceil(lambda / h(b)) over b with
 * d(b) + (b-1)/lambda <= SLA, computed here in closed form. */
static void single_dnn_closed_form(void)
{
    for (int k = 0; k < 60; k++) {
        struct fa2_problem p = {.ndnn = 1, .npaths = 1, .bmax = 16, .delta = 1e-3};
        p.a[0] = 0.02 * (k % 5), p.b1[0] = 10 + k, p.c[0] = 20;
        p.paths[0].nstages = 1;
        p.paths[0].sla_ms = 60 + 15 * k;
        p.paths[0].rate_rps = 5 + 3 * k;
        int best = 1 << 30, best_b = 0;
        for (int b = 1; b <= 16; b++) {
            double d = p.a[0] * b * b + p.b1[0] * b + p.c[0];
            double l = d + 1000.0 * (b - 1) / p.paths[0].rate_rps;
            int n = (int)ceil(p.paths[0].rate_rps * d / (1000.0 * b) - 1e-9);
            if (l <= p.paths[0].sla_ms && n < best)
                best = n, best_b = b;
        }
        struct fa2_plan d;
        REQUIRE_OK(fa2_plan_dp(&p, &d));
        CHECK(d.feasible && d.n[0] == (best < 1 ? 1 : best), "case %d: DP n=%d b=%d, closed form "
              "n=%d (b=%d)", k, d.n[0], d.b[0], best, best_b);
        struct fa2_plan g;
        REQUIRE_OK(fa2_plan_ds2(&p, &g));
        CHECK(g.b[0] == 1 && g.n[0] == (int)fmax(1, ceil(p.paths[0].rate_rps *
                                                          fa2_d(&p, 0, 1) / 1000 - 1e-9)),
              "case %d: DS2 n=%d", k, g.n[0]);
    }
}

/* GrandSLAm's shares: on each path the DNNs' budgets are proportional to d(1) and the
 * chosen batch is the largest whose l(b) fits the tightest budget. */
static void grandslam_shares(void)
{
    struct fa2_problem p;
    paper_problem(&p, 30);
    struct fa2_plan g;
    double lambda[FA2_MAX_DNN];
    REQUIRE_OK(fa2_plan_grandslam(&p, &g));
    fa2_rates(&p, lambda);
    for (int s = 0; s < p.ndnn; s++) {
        double budget = INFINITY;
        for (int q = 0; q < p.npaths; q++) {
            double sum = 0;
            bool on = false;
            for (int i = 0; i < p.paths[q].nstages; i++) {
                sum += fa2_d(&p, p.paths[q].stages[i], 1);
                on |= p.paths[q].stages[i] == s;
            }
            if (on)
                budget = fmin(budget, p.paths[q].sla_ms * fa2_d(&p, s, 1) / sum);
        }
        CHECK(g.b[s] == 1 || fa2_latency(&p, s, g.b[s], lambda[s]) <= budget + 1e-6,
              "DNN %d: b=%d exceeds its share %g", s, g.b[s], budget);
        CHECK(g.b[s] == p.bmax || fa2_latency(&p, s, g.b[s] + 1, lambda[s]) > budget,
              "DNN %d: b=%d, but b+1 fits its share %g", s, g.b[s], budget);
    }
    CHECK(g.feasible, "GrandSLAm's plan breaks a path SLA");
}

/* ------------------------------------------------------------ the application in the simulator */

static struct sim_config *paper_config(const char *overrides)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/experiments/fa2/base.json", SERVESIM_SOURCE_DIR);
    const char *sets[8];
    char buf[8][160];
    int n = 0;
    for (const char *o = overrides; o && *o && n < 8;) {
        const char *e = strchr(o, ';');
        size_t len = e ? (size_t)(e - o) : strlen(o);
        snprintf(buf[n], sizeof buf[n], "%.*s", (int)len, o);
        sets[n] = buf[n];
        n++;
        o = e ? e + 1 : o + len;
    }
    struct sim_config *cfg = NULL;
    int rc = sim_config_load(path, sets, n, false, 0, &cfg);
    if (rc)
        fprintf(stderr, "%s\n", sim_err_msg());
    return cfg;
}

/* The problem FA2 plans for the shipped application at a steady rate (as its runtime does). */
static void shipped_problem(const struct sim_config *cfg, double rate, struct fa2_problem *p)
{
    REQUIRE_OK(fa2_problem_of(&cfg->world, 16, 1e-3, p));
    for (int q = 0; q < p->npaths; q++)
        p->paths[q].rate_rps = rate * cfg->app->paths[q].prob;
}

static void fewest_instances_on_steady_rates(void)
{
    struct sim_config *cfg = paper_config(NULL);
    REQUIRE_OK(cfg ? 0 : SIM_EINVAL);
    printf("%6s %6s %8s %10s %10s %6s\n", "rate", "fa2", "optimum", "grandslam", "inferline", "ds2");
    for (int rate = 6; rate <= 60; rate += 6) {
        struct fa2_problem p;
        struct fa2_plan f, o, g, i, d;
        shipped_problem(cfg, rate, &p);
        REQUIRE_OK(fa2_plan_dp(&p, &f));
        REQUIRE_OK(fa2_plan_milp(&p, &o));
        REQUIRE_OK(fa2_plan_grandslam(&p, &g));
        REQUIRE_OK(fa2_plan_inferline(&p, &i));
        REQUIRE_OK(fa2_plan_ds2(&p, &d));
        printf("%6d %6d %8d %10d%s %9d%s %6d%s\n", rate, f.instances, o.instances, g.instances,
               g.feasible ? " " : "!", i.instances, i.feasible ? " " : "!", d.instances,
               d.feasible ? " " : "!");
        CHECK(f.feasible && o.feasible, "rate %d: FA2 or the optimum infeasible", rate);
        CHECK(f.instances >= o.instances, "rate %d: FA2 %d below the optimum %d", rate,
              f.instances, o.instances);
        CHECK(f.instances <= g.instances && f.instances <= i.instances &&
                  f.instances <= d.instances,
              "rate %d: FA2 %d, GrandSLAm %d, InferLine %d, DS2 %d", rate, f.instances,
              g.instances, i.instances, d.instances);
    }
    sim_config_destroy(cfg);
}

static struct sim_result *run(const char *overrides)
{
    struct sim_config *cfg = paper_config(overrides);
    struct sim *s = NULL;
    struct sim_result *r = NULL;
    if (!cfg || sim_config_engine(cfg, 1.0, NULL, &s, NULL) || sim_run(s) || sim_result_collect(s, &r)) {
        fprintf(stderr, "run failed: %s\n", sim_err_msg());
        exit(1);
    }
    sim_destroy(s);
    sim_config_destroy(cfg);
    return r;
}

/* The spec expects about 1% on steady load (measured, 400 s, seed 1: 0.15% at 8 req/s, 0.85%
 * at 27 req/s with the runtime's default headroom; the bare rates give 6.9% at 8 req/s). */
static void steady_violations_bounded(void)
{
    static const char *const loads[] = {"workload.rate_rps=8", "workload.rate_rps=27",
                                        "workload.rate_rps=8;policy.params.rate_z=0;"
                                        "policy.params.backlog=0"};
    double bad[3], cost[3];
    for (int k = 0; k < 3; k++) {
        char o[256];
        snprintf(o, sizeof o, "%s;duration_s=400;warmup_s=60", loads[k]);
        struct sim_result *r = run(o);
        printf("%s: bad rate %.4f (%llu late, %llu dropped of %llu), %.0f instance-seconds\n",
               loads[k], r->bad_rate, (unsigned long long)r->late,
               (unsigned long long)r->dropped, (unsigned long long)r->offered, r->gpu_s);
        CHECK(r->npaths == 6 && r->offered > 1000, "%s: %d paths, %llu requests", loads[k],
              r->npaths, (unsigned long long)r->offered);
        CHECK(k == 2 || r->bad_rate < 0.03, "%s: SLA violations %.4f, want below 3%%",
              loads[k], r->bad_rate);
        bad[k] = r->bad_rate, cost[k] = r->gpu_s;
        sim_result_destroy(r);
    }
    /* the headroom buys its violations with instances: without it, fewer and more late */
    CHECK(cost[2] < cost[0] && bad[2] > 2 * bad[0], "8 req/s without headroom: %.0f "
          "instance-seconds, bad rate %.4f; with: %.0f, %.4f", cost[2], bad[2], cost[0], bad[0]);
}

/* Step 8 -> 27 req/s at t = 200 s and back to 8 at 400 s: the instances in service reach the
 * new plan within one interval (10 s) + the cold start (6 s) + a few seconds, violations
 * settle, and after the step down the surplus goes within scale_down_s (30 s) + an interval
 * + a few seconds. */
static void reconverges_after_step(void)
{
    struct sim_result *r = run("duration_s=600;warmup_s=30;"
                               "workload.segments=[{\"duration_s\":200,\"scale\":1},"
                               "{\"duration_s\":200,\"scale\":3.375},{\"scale\":1}]");
    double before = test_ts_mean(r, "executors", -1, 150, 200);
    double after = test_ts_mean(r, "executors", -1, 300, 400);
    double back = test_ts_mean(r, "executors", -1, 500, 600);
    double up = test_ts_reaches(r, "executors", -1, 200, 0.95 * after, true);
    double down = test_ts_reaches(r, "executors", -1, 400, 1.05 * back, false);
    double bad_late = test_ts_mean(r, "bad_rate", -1, 240, 400);
    printf("step 8 -> 27 -> 8 req/s: %.1f instances before, %.1f after, %.1f back; in service "
           "%.0f s after the step up, surplus gone %.0f s after the step down; mean per-second "
           "violation rate from 40 s after the step up: %.4f\n", before, after, back, up, down,
           bad_late);
    CHECK(after > 1.5 * before, "instances %.1f -> %.1f: no scale-up", before, after);
    CHECK(up >= 0 && up <= 10 + 6 + 5, "instances in service %.0f s after the step", up);
    CHECK(bad_late < 0.03, "violations %.4f after re-convergence", bad_late);
    CHECK(back < 1.2 * before && down >= 0 && down <= 30 + 10 + 5,
          "after the step down: %.1f instances (before the step up %.1f), %.0f s", back, before,
          down);
    sim_result_destroy(r);
}

TEST_MAIN({"dp_matches_optimum", dp_matches_optimum},
          {"transform_invariants", transform_invariants},
          {"single_dnn_closed_form", single_dnn_closed_form},
          {"grandslam_shares", grandslam_shares},
          {"fewest_instances_on_steady_rates", fewest_instances_on_steady_rates},
          {"steady_violations_bounded", steady_violations_bounded},
          {"reconverges_after_step", reconverges_after_step})
