/* test_roma — ROMA (specs/roma.md): the PI update and clamp, the supervisor's three cases,
 * the pole-placement gains (a double closed-loop pole where asked), the GPU heuristic on
 * hand-made queues, a CPU-only closed loop at constant rate holding the mean response time at
 * the set point (integral action), fewer cores once a GPU takes part of the work, and the
 * controller's measure (its executor's requests, the authors'; or the model's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "roma.h"
#include "sim.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "test.h"
#include "test_run.h"
#include "test_ts.h"

static void pi_update_and_clamp(void)
{
    /* u = 2 + 0.15 * 0.5 - 0.15 * 0.11 * 0.2 = 2.0717 */
    CHECK_NEAR(roma_pi(2, 0.5, 0.2, 0.15, 0.11, 0.1, 6), 2.0717, 1e-12);
    CHECK(roma_pi(0.2, -10, 0, 0.15, 0.11, 0.1, 6) == 0.1, "not clamped at u_min");
    CHECK(roma_pi(5.9, 10, 0, 0.15, 0.11, 0.1, 6) == 6, "not clamped at u_max");
    /* a constant error keeps integrating: the controller has integral action */
    double u = 1;
    for (int k = 0; k < 10; k++)
        u = roma_pi(u, 0.4, k ? 0.4 : 0, 0.15, 0.11, 0.1, 100);
    CHECK_NEAR(u, 1 + 10 * 0.15 * 0.4 - 9 * 0.15 * 0.11 * 0.4, 1e-12);
}

static void supervisor_cases(void)
{
    double u[3] = {1, 2, 3}, g[3];
    CHECK_NEAR(roma_supervise(u, 3, 3, 0.5, g), 0.5, 1e-12);   /* eta < 1: scaled */
    CHECK(fabs(g[0] - 0.5) < 1e-12 && fabs(g[1] - 1) < 1e-12 && fabs(g[2] - 1.5) < 1e-12,
          "eta 0.5: %g %g %g", g[0], g[1], g[2]);
    CHECK_NEAR(roma_supervise(u, 3, 6, 1, g), 1, 1e-12);       /* eta = 1: kept */
    CHECK(g[0] == 1 && g[1] == 2 && g[2] == 3, "eta 1: %g %g %g", g[0], g[1], g[2]);
    const double gammas[] = {0, 0.5, 1};
    for (int i = 0; i < 3; i++) {                               /* eta = 2 */
        CHECK_NEAR(roma_supervise(u, 3, 12, gammas[i], g), 2, 1e-12);
        double sum = g[0] + g[1] + g[2];
        CHECK_NEAR(sum, 6 + gammas[i] * 6, 1e-12);              /* 1 hands out all 12 */
        CHECK_NEAR(g[1], 2 + gammas[i] * 2, 1e-12);
    }
}

/* With G(z) = k (z - b)/(z - 1) and C(z) = K (z - a)/(z - 1), the closed loop's
 * characteristic polynomial (z - 1)^2 + K k (z - a)(z - b) has a double root at q. */
static void pole_gains_place_the_poles(void)
{
    const double ks[] = {0.5, 2, 8}, bs[] = {-1, 0.2, 0.6}, qs[] = {0, 0.3, 0.7};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double K, a, k = ks[i], b = bs[j], q = qs[(i + j) % 3];
            REQUIRE_OK(roma_pole_gains(k, b, q, &K, &a));
            double p = (q - 1) * (q - 1) + K * k * (q - a) * (q - b);
            double dp = 2 * (q - 1) + K * k * ((q - a) + (q - b));
            CHECK(fabs(p) < 1e-9 && fabs(dp) < 1e-9, "k %g b %g q %g: p(q) %g, p'(q) %g", k, b,
                  q, p, dp);
        }
}

static void gpu_heuristic_on_queues(void)
{
    /* set points 0.4 s; model 1's W = 0.5*0.9 + 0.5*0.3 = 0.6 (eps 0.5), model 2's E = 0.5
     * with no completions (eps 0.25), model 0 under its set point, model 3 empty */
    int q[4] = {3, 1, 2, 0}, has[4] = {1, 1, 0, 1};
    double E[4] = {0.2, 0.9, 0.5, 9}, R[4] = {0.1, 0.3, 0, 9}, set[4] = {0.4, 0.4, 0.4, 0.4};
    double head[4] = {5, 7, 6, 1};
    CHECK(roma_pick(4, q, E, R, has, set, head, 0.5) == 1, "the neediest is model 1");
    E[1] = 0.1;                             /* now only model 2 is above: 0.25 */
    CHECK(roma_pick(4, q, E, R, has, set, head, 0.5) == 2, "model 2 next");
    E[2] = 0.1;                             /* all at zero: the longest queue */
    CHECK(roma_pick(4, q, E, R, has, set, head, 0.5) == 0, "ties: the longest queue");
    q[2] = 3;                               /* equal queues: the earlier head */
    CHECK(roma_pick(4, q, E, R, has, set, head, 0.5) == 0, "ties: the earlier head (5 < 6)");
    head[2] = 4;
    CHECK(roma_pick(4, q, E, R, has, set, head, 0.5) == 2, "ties: the earlier head (4 < 5)");
    int none[4] = {0, 0, 0, 0};
    CHECK(roma_pick(4, none, E, R, has, set, head, 0.5) == -1, "empty queues");
}

/* One model, 100 ms on one core (SLA 500 ms, set point 400 ms), 12 req/s Poisson on a node of
 * 6 cores, 300 s; with `gpus` GPUs of 50 ms. Returns the result. */
static struct sim_result *closed_loop(int gpus)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"loop\",\"seed\":4,\"duration_s\":300,\"warmup_s\":100,\"drain_s\":30,"
             "\"cluster\":{\"nodes\":[{\"cores\":6,\"gpus\":%d}]},\"models\":[{\"name\":\"m\","
             "\"slo_ms\":500,\"profiles\":{\"1080ti\":{\"form\":\"linear\",\"alpha_ms\":10,"
             "\"beta_ms\":40},\"cpu\":{\"form\":\"linear\",\"alpha_ms\":20,\"beta_ms\":80}}}],"
             "\"workload\":{\"rate_rps\":12},\"network\":{\"ctrl_us\":0,"
             "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"roma\"},"
             "\"metrics\":{\"sample_period_s\":0}}", gpus);
    return test_run_text(text, "loop");
}

static void cpu_loop_holds_the_set_point(void)
{
    struct sim_result *cpu = closed_loop(0);
    double resp = test_ts_mean(cpu, "roma.response_s", 0, 100, 300);
    double cores = test_ts_mean(cpu, "roma.cores", 0, 100, 300);
    /* 12 req/s of 100 ms on one core need 1.2 cores just to keep up */
    CHECK(fabs(resp - 0.4) < 0.06, "mean response %.3f s over 100-300 s, set point 0.4", resp);
    CHECK(cores > 1.2 && cores < 6, "mean cores %.2f", cores);
    CHECK(cpu->core_s > 1.2 * 300 && cpu->core_s < 6 * 300, "core-seconds %.1f", cpu->core_s);
    struct sim_result *gpu = closed_loop(1);
    double gcores = test_ts_mean(gpu, "roma.cores", 0, 100, 300);
    double gcpu = test_ts_mean(gpu, "roma.cpu_rps", 0, 100, 300);
    CHECK(gcores < cores / 2 && gcpu < 6, "with a GPU: %.2f cores (%.2f without), CPU serves "
          "%.1f req/s", gcores, cores, gcpu);
    sim_result_destroy(cpu);
    sim_result_destroy(gpu);
}

/* One model at 30 req/s on a node of 6 cores and one GPU of 25 ms (it carries most), 100 ms
 * on one core; `measure` the controller's. Returns the result. */
static struct sim_result *overflow(const char *measure)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"overflow\",\"seed\":2,\"duration_s\":300,\"warmup_s\":100,"
             "\"drain_s\":30,\"cluster\":{\"nodes\":[{\"cores\":6,\"gpus\":1}]},\"models\":"
             "[{\"name\":\"m\",\"slo_ms\":500,\"profiles\":{\"1080ti\":{\"form\":\"linear\","
             "\"alpha_ms\":0,\"beta_ms\":25},\"cpu\":{\"form\":\"linear\",\"alpha_ms\":0,"
             "\"beta_ms\":100}}}],\"workload\":{\"rate_rps\":30},\"network\":{\"ctrl_us\":0,"
             "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"roma\","
             "\"params\":{\"measure\":\"%s\"}},\"metrics\":{\"sample_period_s\":0}}", measure);
    return test_run_text(text, "overflow");
}

/* The authors' controller (measure "executor") sizes a CPU executor by the response times
 * of the requests it served: where the GPU keeps the model's mean low, the model's mean
 * ("model") sheds the executor to u_min while it still receives requests, which then take
 * 10x their one-core time; the executor's own measure keeps cores for them. */
static void controller_measures_its_executor(void)
{
    struct sim_result *ex = overflow("executor"), *md = overflow("model");
    double ce = test_ts_mean(ex, "roma.cores", 0, 100, 300);
    double cm = test_ts_mean(md, "roma.cores", 0, 100, 300);
    double re = test_ts_mean(ex, "roma.cpu_rps", 0, 100, 300);
    double rm = test_ts_mean(md, "roma.cpu_rps", 0, 100, 300);
    CHECK(cm < 0.15 && rm > 0.5, "model's mean: %.3f cores, yet the CPU serves %.2f req/s", cm, rm);
    CHECK(ce > 2 * cm && re > 0.5, "executor's own: %.3f cores for %.2f req/s (model's: %.3f)",
          ce, re, cm);
    sim_result_destroy(ex);
    sim_result_destroy(md);
}

TEST_MAIN({"pi_update_and_clamp", pi_update_and_clamp},
          {"controller_measures_its_executor", controller_measures_its_executor},
          {"supervisor_cases", supervisor_cases},
          {"pole_gains_place_the_poles", pole_gains_place_the_poles},
          {"gpu_heuristic_on_queues", gpu_heuristic_on_queues},
          {"cpu_loop_holds_the_set_point", cpu_loop_holds_the_set_point})
