/* test_paper — the Symphony paper's qualitative claims that must not regress, on settings
 * small enough for CI (experiments/paper/ runs them at full size and README.md there has the
 * claim table): each system at its default preset, which is how the paper ran it; an
 * RDMA-range network (20 us per message, 10 us per input), 60 s of warm-up (Nexus's two
 * epochs) and 20 s measured.
 *
 * - one model on 8 GPUs (Table 4): Nexus within 25% of the uncoordinated analytic
 *   throughput on the ResNet50-like and the InceptionResNetV2-like setup, Clockwork the
 *   lowest of Symphony, Nexus and Clockwork, and its batches above one at its goodput;
 * - a mixed zoo (8 models of the 1080Ti zoo on 16 GPUs): Symphony at least 2x Nexus and
 *   2x Clockwork under the worst-model rule, and Symphony/Nexus within 25% of the paper's
 *   2.0-2.4x under the harness's aggregate rule (search.rule);
 * - Nexus with 8 frontends below Nexus with 1 (4 models, SLO 25 ms, 8 GPUs);
 * - past overload Symphony and Nexus keep a flat top (4 models, SLO 100 ms, 8 GPUs, 2x). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_err.h"
#include "test.h"
#include "test_run.h"

#define NET "\"network\":{\"ctrl_us\":20,\"data_us_per_request\":10,\"resp_us\":20}"
#define COMMON_RULE(rule)                                                                  \
    "\"seed\":1,\"duration_s\":80,\"warmup_s\":60,\"metrics\":{\"sample_period_s\":0},"           \
    "\"search\":{\"tolerance\":0.03,\"rule\":\"" rule "\"}," NET
#define COMMON COMMON_RULE("worst")

static double goodput(const char *text, double *batch)
{
    return test_goodput_text(text, "test_paper", batch);
}

static struct sim_result *run(const char *text)
{
    return test_run_text(text, "test_paper");
}

/* N * b / l(b) with b = floor((SLO/2 - beta) / alpha): the spec's uncoordinated reference. */
static double uncoordinated(double alpha, double beta, double slo, int n)
{
    double b = floor((slo / 2 - beta) / alpha);
    return n * b / (alpha * b + beta) * 1000;
}

static void single_model_baselines(void)
{
    static const struct { const char *name; double alpha, beta, slo; } models[] = {
        {"resnet50", 1.053, 5.072, 25},
        {"inceptionresnetv2", 5.09, 18.368, 70},
    };
    for (int i = 0; i < 2; i++) {
        char text[1024];
        double g[3], batch[3];
        static const char *const pol[] = {"symphony", "nexus", "clockwork"};
        for (int p = 0; p < 3; p++) {
            snprintf(text, sizeof text,
                     "{\"name\":\"t4\"," COMMON ",\"cluster\":{\"gpus\":8},\"models\":[{\"name\":"
                     "\"%s\",\"alpha_ms\":%g,\"beta_ms\":%g,\"slo_ms\":%g}],\"workload\":{"
                     "\"rate_rps\":1000},\"policy\":{\"name\":\"%s\"}}",
                     models[i].name, models[i].alpha, models[i].beta, models[i].slo, pol[p]);
            g[p] = goodput(text, &batch[p]);
            fprintf(stderr, "  %-18s %-9s goodput %5.0f r/s, mean batch %.2f\n", models[i].name,
                    pol[p], g[p], batch[p]);
        }
        double ref = uncoordinated(models[i].alpha, models[i].beta, models[i].slo, 8);
        CHECK(g[1] >= 0.75 * ref && g[1] <= 1.25 * ref, "%s: Nexus %.0f r/s, uncoordinated "
              "reference %.0f", models[i].name, g[1], ref);
        CHECK(g[2] < g[0] && g[2] < g[1], "%s: Clockwork %.0f not the lowest (Symphony %.0f, "
              "Nexus %.0f)", models[i].name, g[2], g[0], g[1]);
        CHECK(batch[2] > 1.01, "%s: Clockwork's mean batch %.3f at its goodput", models[i].name,
              batch[2]);
    }
}

/* The goodput of 8 models of the 1080Ti zoo on 16 GPUs under a policy and goodput rule. */
static double zoo_goodput(const char *policy, bool aggregate)
{
    char text[1200];
    snprintf(text, sizeof text,
             "{\"name\":\"zoo\",%s,\"cluster\":{\"gpus\":16,\"gpu_kind\":\"1080ti\"},"
             "\"models\":[{\"zoo\":\"symphony_1080ti\",\"select\":[\"ResNet50\",\"InceptionV3\","
             "\"DenseNet121\",\"MobileNetV2\",\"VGG16\",\"EfficientNetB0\",\"Xception\","
             "\"ResNet101\"]}],\"workload\":{\"rate_rps\":5000},\"policy\":{\"name\":\"%s\"}}",
             aggregate ? COMMON_RULE("aggregate") : COMMON, policy);
    double v = goodput(text, NULL);
    fprintf(stderr, "  mixed zoo %-9s goodput %5.0f r/s (%s rule)\n", policy, v,
            aggregate ? "aggregate" : "worst");
    return v;
}

static void mixed_zoo_symphony_leads(void)
{
    static const char *const pol[] = {"symphony", "nexus", "clockwork"};
    double g[3], a[2];
    for (int p = 0; p < 3; p++)
        g[p] = zoo_goodput(pol[p], false);
    CHECK(g[0] >= 2 * g[1] && g[0] >= 2 * g[2], "Symphony %.0f r/s, not 2x Nexus %.0f and "
          "Clockwork %.0f", g[0], g[1], g[2]);
    /* under the harness's aggregate rule (all requests together) Nexus is no longer held to
     * its worst model: its goodput at least 1.5x the worst-rule one, and Symphony/Nexus within
     * 25% of the paper's 2.0-2.4x (measured 2.2x; under the worst rule 4.4x) */
    for (int p = 0; p < 2; p++)
        a[p] = zoo_goodput(pol[p], true);
    CHECK(a[1] >= 1.5 * g[1] && a[0] >= g[0], "aggregate rule: Nexus %.0f r/s (worst rule %.0f), "
          "Symphony %.0f (%.0f)", a[1], g[1], a[0], g[0]);
    CHECK(a[0] >= 1.5 * a[1] && a[0] <= 3.0 * a[1], "aggregate rule: Symphony/Nexus %.2fx, "
          "not within 25%% of 2.0-2.4x", a[0] / a[1]);
}

#define FOUR_R50(slo)                                                                           \
    "\"models\":[{\"name\":\"r0\",\"alpha_ms\":1.053,\"beta_ms\":5.072,\"slo_ms\":" #slo "},"        \
    "{\"name\":\"r1\",\"alpha_ms\":1.053,\"beta_ms\":5.072,\"slo_ms\":" #slo "},"                   \
    "{\"name\":\"r2\",\"alpha_ms\":1.053,\"beta_ms\":5.072,\"slo_ms\":" #slo "},"                   \
    "{\"name\":\"r3\",\"alpha_ms\":1.053,\"beta_ms\":5.072,\"slo_ms\":" #slo "}]"

static void nexus_more_frontends_lower_goodput(void)
{
    double g[2];
    for (int i = 0; i < 2; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"name\":\"fe\"," COMMON ",\"cluster\":{\"gpus\":8}," FOUR_R50(25) ","
                 "\"workload\":{\"rate_rps\":2000},\"frontends\":%d,\"frontend_split\":"
                 "\"round_robin\",\"policy\":{\"name\":\"nexus\"}}", i ? 8 : 1);
        g[i] = goodput(text, NULL);
        fprintf(stderr, "  nexus, %d frontend(s): goodput %5.0f r/s\n", i ? 8 : 1, g[i]);
    }
    CHECK(g[1] < 0.95 * g[0], "8 frontends %.0f r/s, 1 frontend %.0f", g[1], g[0]);
}

/* The on-time throughput at 0.75x, 1x and 2x of Symphony's peak (about 6,500 r/s: 8 GPUs x
 * 4 models at SLO 100 ms); a flat top keeps 90% of the best at 2x. */
static void flat_top_past_overload(void)
{
    static const char *const pol[] = {"symphony", "nexus"};
    static const double load[] = {5000, 6500, 13000};
    for (int p = 0; p < 2; p++) {
        double best = 0, last = 0;
        for (int l = 0; l < 3; l++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "{\"name\":\"flat\"," COMMON ",\"cluster\":{\"gpus\":8}," FOUR_R50(100) ","
                     "\"workload\":{\"rate_rps\":%g},\"policy\":{\"name\":\"%s\"}}", load[l],
                     pol[p]);
            struct sim_result *r = run(text);
            last = r->ontime_rps;
            if (last > best)
                best = last;
            fprintf(stderr, "  %-9s offered %6.0f on time %6.0f r/s\n", pol[p], r->offered_rps,
                    r->ontime_rps);
            sim_result_destroy(r);
        }
        CHECK(last >= 0.9 * best, "%s: %.0f r/s on time at 2x, %.0f at best", pol[p], last, best);
    }
}

TEST_MAIN({"single_model_baselines", single_model_baselines},
          {"mixed_zoo_symphony_leads", mixed_zoo_symphony_leads},
          {"nexus_more_frontends_lower_goodput", nexus_more_frontends_lower_goodput},
          {"flat_top_past_overload", flat_top_past_overload})
