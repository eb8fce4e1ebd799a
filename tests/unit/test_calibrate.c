/* test_calibrate — servesim-calibrate: network definitions against published counts, every
 * oneDNN layer against the reference implementation, bn folding, the arena planner, GSL fits
 * on synthetic points with known coefficients, precise errors for bad networks, a measured
 * profile read back by the simulator and used in a run, the sim-vs-real loop, and (GPU
 * machines only) every cuDNN layer against the reference. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "cal_backend.h"
#include "cal_concur.h"
#include "cal_fit.h"
#include "cal_measure.h"
#include "cal_net.h"
#include "cal_profile.h"
#include "cal_ref.h"
#include "cal_validate.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_report.h"
#include "test.h"
#include "test_cal.h"

static void compare_layers(const struct cal_backend_ops *be, struct cal_opts bo, const char *name,
                           int batch, bool fold, double tol);

static void networks_match_published(void)
{
    static const char *const names[] = {"resnet50", "vgg16", "mobilenetv2", "inceptionv3",
                                        "densenet121", "bert_base", "inception_resnet_v2"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct cal_net *net = load(names[i]);
        CHECK(net->pub_params > 0, "%s has no published parameter count", names[i]);
        CHECK(cal_net_params(net) == net->pub_params, "%s: %lld parameters, published %lld",
              names[i], (long long)cal_net_params(net), (long long)net->pub_params);
        CHECK_NEAR(cal_net_macs(net) / 1e9, net->pub_gmacs, 0.01);
        cal_net_destroy(net);
    }
    /* and the headline figures of the issue, independently of the files' own "published" */
    struct cal_net *r50 = load("resnet50");
    CHECK_NEAR((double)cal_net_params(r50) / 1e6, 25.6, 0.01);
    CHECK_NEAR(cal_net_macs(r50) / 1e9, 4.1, 0.01);
    cal_net_destroy(r50);
}

/* The graph's parallelism by hand: a diamond (a 1x1 conv of 4, then branches of a 3x3 conv
 * of 8 and a 1x1 conv of 2 joined by concat, then fc 10 on 3x8x8 inputs: 768, 18,432, 512 and
 * 6,400 MACs) has pi = 26,112 / (768 + 18,432 + 6,400) and width 2; a chain (VGG-16) pi 1
 * and width 1. */
static void parallelism_by_hand(void)
{
    char file[512];
    snprintf(file, sizeof file, "%s/diamond.json", test_scratch("servesim_cal"));
    FILE *f = fopen(file, "w");
    fputs("{\"format\": \"servesim-net/1\", \"name\": \"diamond\", \"input\": {\"shape\": "
          "[3, 8, 8]}, \"layers\": [{\"name\": \"a\", \"op\": \"conv\", \"out\": 4, \"k\": 1},"
          "{\"name\": \"b1\", \"op\": \"conv\", \"in\": [\"a\"], \"out\": 8, \"k\": 3, \"p\": 1},"
          "{\"name\": \"b2\", \"op\": \"conv\", \"in\": [\"a\"], \"out\": 2, \"k\": 1},"
          "{\"name\": \"c\", \"op\": \"concat\", \"in\": [\"b1\", \"b2\"]},"
          "{\"name\": \"fc\", \"op\": \"fc\", \"out\": 10}]}", f);
    fclose(f);
    struct cal_net *net = NULL;
    REQUIRE_OK(cal_net_load(file, &net));
    double pi;
    int width;
    cal_net_parallelism(net, &pi, &width);
    CHECK(fabs(pi - 26112.0 / 25600.0) < 1e-12 && width == 2, "diamond: pi %.6f, width %d", pi,
          width);
    cal_net_destroy(net);
    net = load("vgg16");
    cal_net_parallelism(net, &pi, &width);
    CHECK(pi == 1 && width == 1, "vgg16: pi %.6f, width %d", pi, width);
    cal_net_destroy(net);
    net = load("inceptionv3");
    cal_net_parallelism(net, &pi, &width);
    printf("inceptionv3: pi %.4f, width %d\n", pi, width);
    CHECK(pi > 1 && width >= 4, "inceptionv3: pi %.4f, width %d", pi, width);
    cal_net_destroy(net);
}

/* The concurrency mode on the tiny network: k = 2 threads of t = 1 each (p 1, then p 2
 * inter-op workers each) complete inferences for 0.3 s; the point names its k, p, t; the
 * median is positive and at most the p99; the cores busy are positive and at most the
 * machine's online CPUs (plus rounding); bad arguments are errors, not crashes. */
static void concurrency_point(void)
{
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    struct cal_concur_point pt;
    struct cal_opts base = {0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int p = 1; p <= 2; p++) {
        REQUIRE_OK(cal_concur_measure(&cal_backend_onednn, &base, net, 1, 2, p, 1, 1, 0.3, &pt));
        CHECK(pt.k == 2 && pt.p == p && pt.t == 1 && pt.n >= 2, "point k %d p %d t %d n %d",
              pt.k, pt.p, pt.t, pt.n);
        CHECK(pt.median_ms > 0 && pt.p99_ms >= pt.median_ms && pt.wall_s >= 0.3,
              "median %g ms, p99 %g ms, wall %g s", pt.median_ms, pt.p99_ms, pt.wall_s);
        CHECK(pt.cores > 0 && pt.cores <= (double)cpus + 0.25, "cores %g of %ld", pt.cores, cpus);
    }
    int rc = cal_concur_measure(&cal_backend_onednn, &base, net, 1, 0, 1, 1, 0, 0.1, &pt);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "1 <= k <= 64"), "k 0: rc %d, %s", rc,
          sim_err_msg());
    rc = cal_concur_measure(&cal_backend_onednn, &base, net, 1, 1, 0, 1, 0, 0.1, &pt);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "1 <= p <= 64"), "p 0: rc %d, %s", rc,
          sim_err_msg());
    cal_net_destroy(net);
}

/* The inter-op executor (p > 1 workers over the layer graph): every layer of the branching
 * test networks matches the reference; on Inception-V3 (four-way joins) the final output is
 * bit-identical to one layer after another over three passes (same primitives, same threads:
 * any race between workers would show), and every buffer has its own bytes (the arena holds
 * at least all activations). */
static void onednn_inter_op_matches_sequential(void)
{
    struct cal_opts bo = {.threads = 1, .inter_op = 3};
    compare_layers(&cal_backend_onednn, bo, "tiny_cnn", 2, false, 1e-4);
    compare_layers(&cal_backend_onednn, bo, "tiny_cnn", 3, true, 1e-4);
    compare_layers(&cal_backend_onednn, bo, "tiny_bert", 2, false, 1e-4);
    struct cal_net *net = load("inceptionv3");
    REQUIRE_OK(cal_net_init_weights(net, 2));
    cal_net_fold_bn(net);
    void *in = cal_ref_input(net, 1, 4), *st[2] = {NULL, NULL};
    int64_t cnt = cal_shape_count(&net->layers[net->n - 1].shape);
    float *out[2] = {malloc((size_t)cnt * sizeof(float)), malloc((size_t)cnt * sizeof(float))};
    struct cal_mem_info mi[2];
    double ms;
    for (int v = 0; v < 2; v++) {
        struct cal_opts o = {.threads = 1, .inter_op = v ? 4 : 1};
        REQUIRE_OK(cal_backend_onednn.create(&o, &st[v]));
        REQUIRE_OK(cal_backend_onednn.prepare(st[v], net, 1, &mi[v]));
        REQUIRE_OK(cal_backend_onednn.set_input(st[v], in));
    }
    REQUIRE_OK(cal_backend_onednn.run(st[0], &ms));
    REQUIRE_OK(cal_backend_onednn.read(st[0], net->n - 1, out[0]));
    for (int r = 0; r < 3; r++) {
        memset(out[1], 0, (size_t)cnt * sizeof(float));
        REQUIRE_OK(cal_backend_onednn.run(st[1], &ms));
        REQUIRE_OK(cal_backend_onednn.read(st[1], net->n - 1, out[1]));
        CHECK(memcmp(out[0], out[1], (size_t)cnt * sizeof(float)) == 0,
              "pass %d: the inter-op output differs from the sequential one", r);
    }
    size_t sum = 0;
    for (int i = 0; i < net->n; i++)
        sum += (size_t)cal_shape_count(&net->layers[i].shape) * sizeof(float);
    CHECK(mi[1].arena_bytes >= sum && mi[0].arena_bytes < sum / 2,
          "arena: inter-op %zu, sequential %zu bytes; all activations %zu", mi[1].arena_bytes,
          mi[0].arena_bytes, sum);
    for (int v = 0; v < 2; v++)
        cal_backend_onednn.destroy(st[v]), free(out[v]);
    free(in);
    cal_net_destroy(net);
}

/* The parametric fit recovers the constants that generated its points (k 1..4, p 1..2, t 1..2
 * on 2 cores, a graph of pi 1.5 and width 4: L1 100 ms, f 0.15, overhead 0.005, mu 0.1,
 * kappa 0.2), and by hand at one point: k 2, p 2, t 1 has a(2) = 2/3 + 1/6 = 5/6, D = 2.4,
 * sigma = 1.1 * 1.2 * 1.04, so 100 * 1 * 5/6 * 1.3728 = 114.4 ms. Too few points and a pi
 * below 1 are refused. */
static void concurrency_fit_recovers_constants(void)
{
    struct cal_concur_fit truth = {1.5, 4, 100, 0.15, 0.005, 0.1, 0.2, 0, 0},
                          fit = {.pi = 1.5, .width = 4};
    CHECK_NEAR(cal_concur_model_ms(&truth, 2, 2, 2, 1), 114.4, 1e-9);
    struct cal_concur_point pts[16];
    for (int i = 0; i < 16; i++) {
        int k = i / 4 + 1, p = i / 2 % 2 + 1, t = i % 2 + 1;
        pts[i] = (struct cal_concur_point){.k = k, .p = p, .t = t, .n = 10,
                                           .median_ms = cal_concur_model_ms(&truth, 2, k, p, t)};
    }
    REQUIRE_OK(cal_concur_fit(pts, 16, 2, &fit));
    CHECK(fabs(fit.l1_ms - 100) < 1e-4 && fabs(fit.f - 0.15) < 1e-5 && fabs(fit.mu - 0.1) < 1e-5 &&
          fabs(fit.kappa - 0.2) < 1e-5 && fit.max_rel < 1e-8 && fit.pi == 1.5 && fit.width == 4,
          "fit: L1 %.6f f %.6f mu %.6f kappa %.6f, max error %g", fit.l1_ms, fit.f, fit.mu,
          fit.kappa, fit.max_rel);
    int rc = cal_concur_fit(pts + 2, 3, 2, &fit);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "at least 4 points"), "3 points: rc %d, %s",
          rc, sim_err_msg());
    fit.pi = 0.5;
    rc = cal_concur_fit(pts, 16, 2, &fit);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "pi >= 1"), "pi 0.5: rc %d, %s", rc,
          sim_err_msg());
}

/* Runs net on a backend with keep_all and compares every layer with the reference. */
static void compare_layers(const struct cal_backend_ops *be, struct cal_opts bo, const char *name,
                           int batch, bool fold, double tol)
{
    struct cal_net *net = load(name);
    REQUIRE_OK(cal_net_init_weights(net, 3));
    if (fold)
        CHECK(cal_net_fold_bn(net) > 0, "%s: nothing folded", name);
    void *in = cal_ref_input(net, batch, 5), *st = NULL;
    float **ref = NULL;
    struct cal_mem_info mi;
    double ms = 0;
    bo.keep_all = true;
    REQUIRE_OK(cal_ref_forward(net, batch, in, &ref));
    REQUIRE_OK(be->create(&bo, &st));
    REQUIRE_OK(be->prepare(st, net, batch, &mi));
    REQUIRE_OK(be->set_input(st, in));
    REQUIRE_OK(be->run(st, &ms));
    int compared = 0;
    for (int i = 0; i < net->n; i++) {
        const struct cal_layer *l = &net->layers[i];
        int64_t cnt = batch * cal_shape_count(&l->shape);
        if (be->fused_into && be->fused_into(st, i) != i) { /* absorbed into a group */
            free(ref[i]);
            continue;
        }
        compared++;
        float *got = malloc((size_t)cnt * sizeof *got);
        REQUIRE_OK(be->read(st, i, got));
        double e = cal_ref_rel_err(got, ref[i], cnt);
        CHECK(e <= tol, "%s %s layer %s (%s): relative error %.2e > %.0e", be->name, name,
              l->name, cal_op_name(l->op), e, tol);
        free(got);
        free(ref[i]);
    }
    CHECK(compared > 0 && compared <= net->n, "%s: %d outputs compared", name, compared);
    CHECK(ms > 0, "no time measured");
    CHECK(mi.weights_bytes > 0 && mi.arena_bytes > 0, "weights %zu arena %zu", mi.weights_bytes,
          mi.arena_bytes);
    free(ref);
    free(in);
    be->destroy(st);
    cal_net_destroy(net);
}

static void onednn_layers_match_reference(void)
{
    struct cal_opts bo = {.threads = 2};
    compare_layers(&cal_backend_onednn, bo, "tiny_cnn", 2, false, 1e-4);
    compare_layers(&cal_backend_onednn, bo, "tiny_cnn", 3, true, 1e-4);
    compare_layers(&cal_backend_onednn, bo, "tiny_bert", 3, false, 1e-4);
    /* every op kind appears in the two test networks */
    struct cal_net *a = load("tiny_cnn"), *b = load("tiny_bert");
    bool seen[CAL_NOPS] = {0};
    for (int i = 0; i < a->n; i++)
        seen[a->layers[i].op] = true;
    for (int i = 0; i < b->n; i++)
        seen[b->layers[i].op] = true;
    for (int op = 0; op < CAL_NOPS; op++)
        CHECK(seen[op], "op %s is not covered by the layer tests", cal_op_name((enum cal_op)op));
    cal_net_destroy(a);
    cal_net_destroy(b);
}

/* The arena (no keep_all) reuses buffers: the final output must still match, twice over. */
static void onednn_arena_output_matches(void)
{
    struct cal_net *net = load("mobilenetv2");
    REQUIRE_OK(cal_net_init_weights(net, 2));
    int folded = cal_net_fold_bn(net);
    CHECK(folded == 52, "folded %d bn layers, want 52", folded);
    void *in = cal_ref_input(net, 1, 9), *st = NULL;
    float **ref = NULL;
    struct cal_mem_info mi;
    struct cal_opts bo = {.threads = 2};
    double ms;
    REQUIRE_OK(cal_ref_forward(net, 1, in, &ref));
    REQUIRE_OK(cal_backend_onednn.create(&bo, &st));
    REQUIRE_OK(cal_backend_onednn.prepare(st, net, 1, &mi));
    REQUIRE_OK(cal_backend_onednn.set_input(st, in));
    int64_t cnt = cal_shape_count(&net->layers[net->n - 1].shape);
    float *got = malloc((size_t)cnt * sizeof *got);
    for (int r = 0; r < 2; r++) {
        REQUIRE_OK(cal_backend_onednn.run(st, &ms));
        REQUIRE_OK(cal_backend_onednn.read(st, net->n - 1, got));
        double e = cal_ref_rel_err(got, ref[net->n - 1], cnt);
        CHECK(e < 1e-4, "pass %d: final output error %.2e", r, e);
    }
    /* liveness keeps the arena far below the sum of all activations */
    size_t sum = 0;
    for (int i = 0; i < net->n; i++)
        sum += (size_t)cal_shape_count(&net->layers[i].shape) * sizeof(float);
    CHECK(mi.arena_bytes < sum / 3, "arena %zu bytes, all activations %zu", mi.arena_bytes, sum);
    for (int i = 0; i < net->n; i++)
        free(ref[i]);
    free(ref), free(got), free(in);
    cal_backend_onednn.destroy(st);
    cal_net_destroy(net);
}

static void fold_bn_preserves_output(void)
{
    struct cal_net *a = load("resnet50"), *b = load("tiny_cnn"), *c = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(a, 1));
    CHECK(cal_net_fold_bn(a) == 53, "resnet50: want its 53 bn layers folded");
    CHECK(a->n == 175 - 53, "resnet50 has %d layers after folding", a->n);
    cal_net_destroy(a);
    REQUIRE_OK(cal_net_init_weights(b, 4));
    REQUIRE_OK(cal_net_init_weights(c, 4));
    CHECK(cal_net_fold_bn(c) == 2, "tiny_cnn: two conv+bn pairs");
    void *in = cal_ref_input(b, 2, 1);
    float **rb, **rc;
    REQUIRE_OK(cal_ref_forward(b, 2, in, &rb));
    REQUIRE_OK(cal_ref_forward(c, 2, in, &rc));
    int64_t cnt = 2 * cal_shape_count(&b->layers[b->n - 1].shape);
    double e = cal_ref_rel_err(rc[c->n - 1], rb[b->n - 1], cnt);
    CHECK(e < 1e-5, "folded output differs by %.2e", e);
    for (int i = 0; i < b->n; i++)
        free(rb[i]);
    for (int i = 0; i < c->n; i++)
        free(rc[i]);
    free(rb), free(rc), free(in);
    cal_net_destroy(b);
    cal_net_destroy(c);
}

static void arena_plan_no_overlap(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    enum { N = 200 };
    size_t size[N], off[N], total;
    int first[N], last[N];
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < N; i++) {
            size[i] = 1 + gsl_rng_uniform_int(r, 100000);
            first[i] = (int)gsl_rng_uniform_int(r, 100);
            last[i] = first[i] + (int)gsl_rng_uniform_int(r, 10);
        }
        REQUIRE_OK(cal_arena_plan(N, size, first, last, 64, off, &total));
        size_t peak = 0;
        for (int t = 0; t < 110; t++) {
            size_t live = 0;
            for (int i = 0; i < N; i++)
                if (first[i] <= t && t <= last[i])
                    live += size[i];
            peak = live > peak ? live : peak;
        }
        CHECK(total >= peak, "arena %zu below the live peak %zu", total, peak);
        for (int i = 0; i < N; i++) {
            CHECK(off[i] % 64 == 0 && off[i] + size[i] <= total, "buffer %d misplaced", i);
            for (int j = i + 1; j < N; j++)
                if (first[i] <= last[j] && first[j] <= last[i])
                    CHECK(off[i] + size[i] <= off[j] || off[j] + size[j] <= off[i],
                          "buffers %d and %d overlap in time and space", i, j);
        }
    }
    gsl_rng_free(r);
}

/* The SLO a zoo gets (issue 51, item 22): 2 x l(4) with batch 4 measured, else 2 x l of the
 * largest measured batch, never an l(4) extrapolated from batches 1 and 2. l(b) = b + 4 ms:
 * measured at 1, 2, 4, 8: 2 x 8 = 16 ms; at 1 and 2 only: 2 x 6 = 12 ms (not 16). */
static void default_slo_by_hand(void)
{
    struct cal_series s = {.n = 4};
    int b[4] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++)
        s.pts[i] = (struct cal_point){.batch = b[i], .reps = 5, .median_ms = b[i] + 4.0,
                                      .p99_ms = b[i] + 4.0};
    REQUIRE_OK(cal_series_fit(&s, 0.05));
    CHECK(fabs(cal_default_slo_ms(&s) - 16) < 1e-9, "batches 1-8: SLO %g, want 16", cal_default_slo_ms(&s));
    s.n = 2;
    REQUIRE_OK(cal_series_fit(&s, 0.05));
    CHECK(fabs(cal_default_slo_ms(&s) - 12) < 1e-9, "batches 1-2: SLO %g, want 12 (2 x l(2))",
          cal_default_slo_ms(&s));
}

static void fit_recovers_known_coefficients(void)
{
    double x[8] = {1, 2, 4, 8, 16, 24, 32, 48}, y[8];
    struct cal_fit f;
    for (int i = 0; i < 8; i++)
        y[i] = 1.25 * x[i] + 4.0;
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &f));
    CHECK(fabs(f.c1 - 1.25) < 1e-9 && fabs(f.c0 - 4.0) < 1e-9, "linear %g b + %g", f.c1, f.c0);
    CHECK(f.r2 > 1 - 1e-12 && f.max_rel_err < 1e-9, "R2 %g worst %g", f.r2, f.max_rel_err);
    /* one outlier (a hiccup of 3x at b=16): the robust fit ignores it, OLS does not */
    y[4] *= 3;
    struct cal_fit ols, rob;
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &ols));
    REQUIRE_OK(cal_fit(CAL_FIT_ROBUST, x, y, 8, &rob));
    CHECK(fabs(rob.c1 - 1.25) < 0.01 && fabs(rob.c0 - 4) < 0.1, "robust %g b + %g", rob.c1, rob.c0);
    CHECK(fabs(ols.c0 - 4) > 1, "OLS should be pulled by the outlier: %g b + %g", ols.c1, ols.c0);
    /* quadratic with noise of 0.5% */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < 8; i++)
        y[i] = (0.02 * x[i] * x[i] + 0.7 * x[i] + 3) * (1 + gsl_ran_gaussian(r, 0.005));
    struct cal_fit q, l;
    REQUIRE_OK(cal_fit(CAL_FIT_QUADRATIC, x, y, 8, &q));
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &l));
    CHECK(fabs(q.c2 - 0.02) < 0.002 && fabs(q.c1 - 0.7) < 0.1 && fabs(q.c0 - 3) < 0.3,
          "quadratic %g b^2 + %g b + %g", q.c2, q.c1, q.c0);
    char why[200];
    CHECK(cal_fit_recommend(&l, &q, 0.05, why, sizeof why) == CAL_FIT_QUADRATIC,
          "curved data: %s (linear worst %.3f)", why, l.max_rel_err);
    for (int i = 0; i < 8; i++)
        y[i] = 1.25 * x[i] + 4.0;
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &l));
    REQUIRE_OK(cal_fit(CAL_FIT_QUADRATIC, x, y, 8, &q));
    CHECK(cal_fit_recommend(&l, &q, 0.05, why, sizeof why) == CAL_FIT_LINEAR, "straight: %s", why);
    /* a tolerance neither form meets gives the measured table (curved data, 0.5% noise) */
    for (int i = 0; i < 8; i++)
        y[i] = (0.02 * x[i] * x[i] + 0.7 * x[i] + 3) * (1 + (i % 2 ? 0.02 : -0.02));
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &l));
    REQUIRE_OK(cal_fit(CAL_FIT_QUADRATIC, x, y, 8, &q));
    CHECK(cal_fit_recommend(&l, &q, 0.001, why, sizeof why) == CAL_FIT_TABLE &&
              strstr(why, "table"), "no form within 0.1%%: %s", why);
    CHECK(cal_fit(CAL_FIT_QUADRATIC, x, y, 2, &q) == SIM_EINVAL, "two points cannot fit a quadratic");
    /* concave data (a CPU's measured batches can bend down): the unconstrained quadratic has
     * a < 0, which no zoo profile may have; the fit is the non-negative least squares, here
     * with a = 0: the least-squares line when that line is non-negative */
    for (int i = 0; i < 8; i++)
        y[i] = -1.0 * x[i] * x[i] + 132.0 * x[i] - 41.0;
    REQUIRE_OK(cal_fit(CAL_FIT_QUADRATIC, x, y, 8, &q));
    CHECK(q.c2 == 0 && q.c1 > 0 && q.c0 >= 0, "non-negative quadratic %g b^2 + %g b + %g", q.c2,
          q.c1, q.c0);
    REQUIRE_OK(cal_fit(CAL_FIT_LINEAR, x, y, 8, &l));
    CHECK(l.c0 < 0 || (fabs(q.c1 - l.c1) < 1e-9 && fabs(q.c0 - l.c0) < 1e-9),
          "with a non-negative OLS line the quadratic must be that line");
    gsl_rng_free(r);
}

/* Writes `text` as a network file and expects loading it to fail with `want` in the message. */
static void expect_net_error(const char *text, const char *want)
{
    char file[512];
    snprintf(file, sizeof file, "%s/bad.json", test_scratch("servesim_cal"));
    FILE *f = fopen(file, "w");
    fputs(text, f);
    fclose(f);
    struct cal_net *net = NULL;
    int rc = cal_net_load(file, &net);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), want) && strstr(sim_err_msg(), "bad.json"),
          "rc %d, message \"%s\", want \"%s\"", rc, sim_err_msg(), want);
    cal_net_destroy(net);
}

#define NET_HEAD "{\"format\": \"servesim-net/1\", \"name\": \"x\", \"input\": {\"shape\": [3, 8, 8]}, "

static void net_errors_are_precise(void)
{
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"convv\"}]}",
                     "layers[0].op: expected one of \"conv\"");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"conv\", \"out\": 4, \"k\": 3, "
                     "\"g\": 2}]}", "layers[0].g: expected a divisor of the input channels (3)");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"conv\", \"out\": 4, \"k\": 9}]}",
                     "layers[0]: expected an output of positive size");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"relu\"}, {\"name\": \"b\", "
                     "\"op\": \"add\", \"in\": [\"a\", \"nope\"]}]}",
                     "layers[1].in[1]: expected \"input\" or an earlier layer's name, got \"nope\"");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"gap\"}, {\"name\": \"b\", "
                     "\"op\": \"add\", \"in\": [\"a\", \"input\"]}]}",
                     "layers[1]: expected in[1] of the same shape as in[0] [3,1,1], got [3,8,8]");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"linear\", \"out\": 4}]}",
                     "layers[0]: expected a [S,D] input for linear, got [3,8,8]");
    expect_net_error(NET_HEAD "\"layers\": [{\"name\": \"a\", \"op\": \"relu\", \"k\": 3}]}",
                     "layers[0].k: unknown key (expected one of: name, op, in)");
    expect_net_error("{\"format\": \"servesim-net/9\", \"name\": \"x\", \"input\": {}, \"layers\": []}",
                     "format: expected \"servesim-net/1\", got \"servesim-net/9\"");
    /* a precision the backend does not have is refused with a message, not run */
    void *st = NULL;
    struct cal_opts bo = {.precision = CAL_FP16};
    int rc = cal_backend_onednn.create(&bo, &st);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "precision fp16 is not supported"),
          "rc %d: %s", rc, sim_err_msg());
    enum cal_precision p;
    CHECK(cal_precision_parse("fp8", &p) == SIM_EINVAL &&
          strstr(sim_err_msg(), "expected one of fp32, tf32, fp16, got \"fp8\""), "%s", sim_err_msg());
}

/* Measures tiny_cnn on the CPU, writes the zoo and DB rows, then runs the simulator on that
 * zoo: the profile the engine uses is the fitted one. */
static void profile_read_back_by_simulator(void)
{
    const char *dir = test_scratch("servesim_cal");
    char zoo[512], db[512], text[2048];
    snprintf(zoo, sizeof zoo, "%s/cal_zoo.json", dir);
    snprintf(db, sizeof db, "%s/cal.db", dir);
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    struct cal_model_prof mp = {.name = "tiny-cnn", .net = net, .nseries = 1};
    struct cal_series s = {.kind = "testcpu@1core", .threads = 1};
    mp.series = &s;
    struct cal_opts bo = {.threads = 1};
    void *st;
    REQUIRE_OK(cal_backend_onednn.create(&bo, &st));
    int batches[] = {1, 2, 4, 8};
    for (int j = 0; j < 4; j++)
        REQUIRE_OK(cal_measure(&cal_backend_onednn, st, net, batches[j], 1, 5, &s.pts[j]));
    s.n = 4;
    struct cal_provenance pv = {.backend = "onednn", .host = "test", .date = "2026-01-01",
                                .precision = CAL_FP32, .warmup = 1, .reps = 5};
    REQUIRE_OK(cal_backend_onednn.info(st, &pv.dev));
    cal_backend_onednn.destroy(st);
    for (int j = 0; j < 4; j++)
        CHECK(s.pts[j].median_ms > 0 && s.pts[j].min_ms <= s.pts[j].median_ms &&
              s.pts[j].median_ms <= s.pts[j].p99_ms && s.pts[j].p99_ms <= s.pts[j].max_ms,
              "batch %d: min %g median %g p99 %g max %g", s.pts[j].batch, s.pts[j].min_ms,
              s.pts[j].median_ms, s.pts[j].p99_ms, s.pts[j].max_ms);
    REQUIRE_OK(cal_series_fit(&s, 0.05));
    REQUIRE_OK(cal_profile_write_zoo(zoo, "test", &pv, &mp, 1));
    REQUIRE_OK(cal_profile_write_db(db, &pv, &mp, 1));
    /* the simulator reads it */
    snprintf(text, sizeof text,
             "{\"name\": \"t\", \"duration_s\": 2, \"cluster\": {\"gpus\": 1, \"gpu_kind\": "
             "\"testcpu@1core\"}, \"models\": [{\"zoo\": \"%s\", \"select\": \"all\"}],"
             " \"workload\": {\"rate_rps\": 20}, \"policy\": {\"name\": \"fifo\"}}", zoo);
    struct sim_config *cfg = NULL;
    REQUIRE_OK(sim_config_from_text(text, "t", dir, &cfg));
    const struct sim_model_cfg *m = &cfg->world.models[0];
    int k = sim_model_cfg_kind(m, "testcpu@1core");
    CHECK(k >= 0 && m->max_batch == 8, "kind %d max_batch %d", k, m->max_batch);
    /* the closed form is the fit; the table form (a negative coefficient) is the medians,
     * kept non-decreasing, at the measured sizes */
    double run_max = 0;
    for (int b = 1, j = 0; b <= 8 && k >= 0; b++) {
        double want = s.chosen == CAL_FIT_QUADRATIC ? cal_fit_eval(&s.quad, b) : cal_fit_eval(&s.lin, b);
        if (m->prof[k].form == SIM_PROF_TABLE) {
            if (b != s.pts[j].batch)
                continue;
            run_max = fmax(run_max, s.pts[j++].median_ms);
            want = run_max;
        }
        CHECK(fabs(sim_profile_ms(&m->prof[k], b) - want) < 1e-4 * want + 1e-6,
              "b=%d (form %d): sim %g, want %g", b, (int)m->prof[k].form,
              sim_profile_ms(&m->prof[k], b), want);
    }
    CHECK(fabs(m->slo_ms - cal_default_slo_ms(&s)) < 1e-9, "slo %g", m->slo_ms);
    struct sim_result *res = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &res));
    CHECK(res->models[0].offered > 10 && res->models[0].batches > 0, "offered %llu batches %llu",
          (unsigned long long)res->models[0].offered, (unsigned long long)res->models[0].batches);
    sim_result_destroy(res);
    sim_config_destroy(cfg);
    /* database rows with provenance and the per-batch table */
    sqlite3 *h;
    sqlite3_stmt *q;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK, "open %s", db);
    sqlite3_prepare_v2(h, "SELECT count(*), p.backend, p.precision, p.device IS NOT NULL, p.threads "
                          "FROM profiles p JOIN profile_points t ON t.profile_id = p.id", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 4 &&
              !strcmp((const char *)sqlite3_column_text(q, 1), "onednn") &&
              !strcmp((const char *)sqlite3_column_text(q, 2), "fp32") &&
              sqlite3_column_int(q, 3) == 1 && sqlite3_column_int(q, 4) == 1,
          "profile rows wrong");
    sqlite3_finalize(q);
    sqlite3_close(h);
    /* a zoo of an unknown (future) format is refused with its name */
    FILE *f = fopen(zoo, "w");
    fputs("{\"format\": \"servesim-zoo/3\", \"name\": \"x\", \"executor_kind\": \"k\", \"models\": []}", f);
    fclose(f);
    int rc = sim_config_from_text(text, "t", dir, &cfg);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "got \"servesim-zoo/3\""), "rc %d: %s", rc,
          sim_err_msg());
    cal_net_destroy(net);
}

/* The service-time fit recovers a known distribution: 4,000 draws of 10 ms x (shift + X), X
 * lognormal (or gamma) with mean 1 - shift and sd cv; the fit reads the cv within 5%, puts
 * the constant share within 0.1 of the truth, passes its own KS test (the distance below the
 * 5% critical value), and prefers the family the draws came from. */
static void serving_fit_recovers_distribution(void)
{
    enum { N = 4000 };
    static double ms[N];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    const double cv = 0.5, f = 0.3, m = 1 - f, c = cv / m;
    for (int d = 0; d < CAL_SVC_NDIST; d++) {
        for (int i = 0; i < N; i++) {
            double x;
            if (d == CAL_SVC_LOGNORMAL) {
                double sg = sqrt(log1p(c * c));
                x = gsl_ran_lognormal(r, log(m) - sg * sg / 2, sg);
            } else {
                double k = 1 / (c * c);
                x = gsl_ran_gamma(r, k, m / k);
            }
            ms[i] = 10 * (f + x);
        }
        gsl_sort(ms, 1, N);
        struct cal_point p = {0};
        cal_svc_fit(ms, N, &p);
        int other = 1 - d;
        CHECK(fabs(p.cv - cv) < 0.05 * cv, "dist %d: cv %g, want %g", d, p.cv, cv);
        CHECK(fabs(p.svc[d].shift - f) < 0.1, "dist %d: shift %g, want %g", d, p.svc[d].shift, f);
        CHECK(p.svc[d].ks < p.ks_crit && p.svc[d].ks < p.svc[other].ks,
              "dist %d: KS %g (crit %g), the other family's %g", d, p.svc[d].ks, p.ks_crit,
              p.svc[other].ks);
        printf("dist %d: cv %.4f shift %.3f KS %.4f (other %.4f, crit %.4f)\n", d, p.cv,
               p.svc[d].shift, p.svc[d].ks, p.svc[other].ks, p.ks_crit);
    }
    gsl_rng_free(r);
}

/* Serving-like measurement end to end on the tiny network: per batch size the passes'
 * statistics and fits, a zoo whose profile is fitted on the means and carries the service
 * distribution per batch size, and the simulator reading it (its latency table is the mean;
 * with plan_quantile 0.99 the planned batch-1 time is above it). Nonsense loads are refused. */
static void serving_measure_writes_distribution(void)
{
    const char *dir = test_scratch("servesim_cal");
    char zoo[512], text[2048];
    snprintf(zoo, sizeof zoo, "%s/serving_zoo.json", dir);
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    struct cal_model_prof mp = {.name = "tiny-cnn", .net = net, .nseries = 1};
    struct cal_series s = {.kind = "servcpu@1core", .threads = 1};
    mp.series = &s;
    struct cal_opts bo = {.threads = 1};
    int batches[] = {1, 2, 4};
    CHECK(cal_measure_serving(&cal_backend_onednn, &bo, net, batches, 3, 1, 30, 1.0, 1, s.pts) ==
              SIM_EINVAL, "a load of 1 was accepted");
    REQUIRE_OK(cal_measure_serving(&cal_backend_onednn, &bo, net, batches, 3, 1, 30, 0.5, 1,
                                   s.pts));
    s.n = 3;
    for (int j = 0; j < 3; j++)
        CHECK(s.pts[j].serving && s.pts[j].reps == 30 && s.pts[j].batch == batches[j] &&
                  s.pts[j].min_ms <= s.pts[j].mean_ms && s.pts[j].mean_ms <= s.pts[j].max_ms &&
                  s.pts[j].cv > 0 && s.pts[j].ks_crit > 0,
              "batch %d: serving %d reps %d min %g mean %g max %g cv %g", batches[j],
              s.pts[j].serving, s.pts[j].reps, s.pts[j].min_ms, s.pts[j].mean_ms, s.pts[j].max_ms,
              s.pts[j].cv);
    REQUIRE_OK(cal_series_fit(&s, 0.05));
    struct cal_provenance pv = {.backend = "onednn", .host = "t", .date = "d", .reps = 30,
                                .serving_load = 0.5};
    REQUIRE_OK(cal_profile_write_zoo(zoo, "serv", &pv, &mp, 1));
    char db[512];
    snprintf(db, sizeof db, "%s/serving.db", dir);
    REQUIRE_OK(cal_profile_write_db(db, &pv, &mp, 1));
    sqlite3 *h;
    sqlite3_stmt *q;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK, "open %s", db);
    sqlite3_prepare_v2(h, "SELECT count(*) FROM profiles WHERE fits_json LIKE "
                          "'%\"form\":\"service\"%' AND fits_json LIKE '%\"cv\":[%'", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1,
          "the profile row lacks its service distribution");
    sqlite3_finalize(q);
    sqlite3_close(h);
    /* the SLO far above any measured spread: whether the engine runs the measured
     * distribution must not depend on how loaded the machine was while measuring it (a
     * loaded machine's cv made the 99% quantile exceed the zoo's SLO: no batch ran) */
    snprintf(text, sizeof text,
             "{\"name\": \"t\", \"duration_s\": 2, \"cluster\": {\"gpus\": 1, \"gpu_kind\": "
             "\"servcpu@1core\"}, \"models\": [{\"zoo\": \"%s\", \"select\": \"all\", "
             "\"slo_ms\": 1e7}], \"workload\": {\"rate_rps\": 20}, \"policy\": "
             "{\"name\": \"fifo\", \"plan_quantile\": 0.99}}", zoo);
    struct sim_config *cfg = NULL;
    REQUIRE_OK(sim_config_from_text(text, "t", dir, &cfg));
    const struct sim_model_cfg *m = &cfg->world.models[0];
    int k = sim_model_cfg_kind(m, "servcpu@1core");
    if (k < 0) {
        CHECK(k >= 0, "no profile of kind servcpu@1core in %s", zoo);
        return;
    }
    const struct sim_service *v = &m->prof[k].svc;
    double cv1, f1, cv4, f4;
    sim_service_at(v, 1, &cv1, &f1);
    sim_service_at(v, 4, &cv4, &f4);
    CHECK(v->dist != SIM_SVC_NONE && v->ncv == 4 && fabs(cv1 - s.pts[0].cv) < 1e-5 &&
              fabs(cv4 - s.pts[2].cv) < 1e-5,
          "service: dist %d, %d cvs, cv(1) %g want %g, cv(4) %g want %g", (int)v->dist, v->ncv,
          cv1, s.pts[0].cv, cv4, s.pts[2].cv);
    if (m->prof[k].form == SIM_PROF_TABLE)
        CHECK(fabs(sim_profile_ms(&m->prof[k], 1) - s.pts[0].mean_ms) < 1e-5,
              "table l(1) %g, the passes' mean %g", sim_profile_ms(&m->prof[k], 1),
              s.pts[0].mean_ms);
    struct sim_result *res = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &res));
    CHECK(res->models[0].batches > 0, "no batches");
    sim_result_destroy(res);
    sim_config_destroy(cfg);
    cal_net_destroy(net);
}

/* The real FIFO server and the simulator on the same arrivals: both serve every request, and
 * utilisation rises with load on both sides. Timing noise on shared machines makes the
 * errors themselves a report (servesim-calibrate validate), not an assertion. */
static void validate_real_against_sim(void)
{
    const char *dir = test_scratch("servesim_cal");
    char zoo[512];
    snprintf(zoo, sizeof zoo, "%s/val_zoo.json", dir);
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    struct cal_model_prof mp = {.name = "tiny-cnn", .net = net, .nseries = 1};
    struct cal_series s = {.kind = "valcpu@1core", .threads = 1};
    mp.series = &s;
    struct cal_opts bo = {.threads = 1};
    void *st;
    REQUIRE_OK(cal_backend_onednn.create(&bo, &st));
    for (int b = 1; b <= 4; b++)
        REQUIRE_OK(cal_measure(&cal_backend_onednn, st, net, b, 2, 15, &s.pts[b - 1]));
    s.n = 4;
    cal_backend_onednn.destroy(st);
    REQUIRE_OK(cal_series_fit(&s, 0.05));
    struct cal_provenance pv = {.backend = "onednn", .host = "t", .date = "d", .reps = 15};
    REQUIRE_OK(cal_profile_write_zoo(zoo, "val", &pv, &mp, 1));
    struct cal_validate_opts vo = {.be = &cal_backend_onednn, .bo = {.threads = 1}, .net = net,
                                   .zoo = zoo, .max_batch = 4, .nloads = 2, .loads = {0.2, 0.6},
                                   .requests = 150, .seed = 3, .scratch = dir};
    struct cal_validate_row rows[2];
    REQUIRE_OK(cal_validate(&vo, rows));
    for (int i = 0; i < 2; i++) {
        CHECK(rows[i].real.tput_rps > 0 && rows[i].sim.tput_rps > 0 && rows[i].obs.tput_rps > 0,
              "load %g: no throughput", rows[i].load);
        /* the noise floor: 10 other sequences of 150 requests do not all give one mean */
        CHECK(rows[i].noise_mean > 0 && rows[i].noise_mean < 1 && rows[i].noise_p99 > 0 &&
                  fabs(rows[i].autocorr) <= 1,
              "load %g: noise %g / %g, autocorrelation %g", rows[i].load, rows[i].noise_mean,
              rows[i].noise_p99, rows[i].autocorr);
        CHECK(rows[i].sim.p99_ms >= rows[i].sim.p50_ms && rows[i].real.p99_ms >= rows[i].real.p50_ms,
              "percentiles out of order");
        /* the simulator's latency is at least the profile's batch-1 time */
        CHECK(rows[i].sim.p50_ms >= 0.99 * rows[i].profile_ms[1], "sim p50 %g < l(1) %g",
              rows[i].sim.p50_ms, rows[i].profile_ms[1]);
        printf("load %.1f: real mean %.3f ms, sim %.3f ms; util real %.3f sim %.3f\n",
               rows[i].load, rows[i].real.mean_ms, rows[i].sim.mean_ms, rows[i].real.util,
               rows[i].sim.util);
    }
    CHECK(rows[1].sim.util > rows[0].sim.util && rows[1].real.util > rows[0].real.util,
          "utilisation should rise with load: sim %g -> %g, real %g -> %g", rows[0].sim.util,
          rows[1].sim.util, rows[0].real.util, rows[1].real.util);
    cal_net_destroy(net);
}

/* Exits 77 (ctest: skipped) when the cuDNN backend was not built or finds no GPU here. */
static void cudnn_or_skip(void)
{
#ifdef SERVESIM_HAVE_CUDNN
    void *st = NULL;
    struct cal_opts bo = {0};
    int rc = cal_backend_cudnn.create(&bo, &st);
    if (rc == SIM_EUNAVAIL) {
        printf("skipped: %s\n", sim_err_msg());
        exit(77);
    }
    REQUIRE_OK(rc);
    cal_backend_cudnn.destroy(st);
#else
    printf("skipped: the cuDNN backend was not built (no CUDA toolkit/cuDNN at build time)\n");
    exit(77);
#endif
}

static void cudnn_layers_match_reference(void)
{
    cudnn_or_skip();
#ifdef SERVESIM_HAVE_CUDNN
    struct cal_opts bo = {0};
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 2, false, 1e-4);
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 3, true, 1e-4);
    compare_layers(&cal_backend_cudnn, bo, "tiny_bert", 3, false, 1e-4);
    bo.precision = CAL_FP16;
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 2, true, 2e-2);
    compare_layers(&cal_backend_cudnn, bo, "tiny_bert", 2, false, 2e-2);
    /* channels-last in float-like precision, and the other ways of issuing a pass */
    bo.precision = CAL_TF32;
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 3, true, 5e-3);
    bo.precision = CAL_FP16, bo.eager = true;
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 2, true, 2e-2);
    bo.unfused = true;
    compare_layers(&cal_backend_cudnn, bo, "tiny_cnn", 2, true, 2e-2);
    compare_layers(&cal_backend_cudnn, bo, "tiny_bert", 2, false, 2e-2);
#endif
}

/* k = 2 cuDNN instances, each on its own CUDA stream, run one tiny network at once (GPU
 * machines only): the point is complete and inter-op workers are refused as a CPU knob. */
static void cudnn_concurrency_streams(void)
{
    cudnn_or_skip();
#ifdef SERVESIM_HAVE_CUDNN
    struct cal_opts bo = {0};
    int rc;
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    struct cal_concur_point pt;
    REQUIRE_OK(cal_concur_measure(&cal_backend_cudnn, &bo, net, 4, 2, 1, 1, 2, 0.3, &pt));
    CHECK(pt.k == 2 && pt.n >= 2 && pt.median_ms > 0 && pt.p99_ms >= pt.median_ms,
          "k %d n %d median %g p99 %g", pt.k, pt.n, pt.median_ms, pt.p99_ms);
    rc = cal_concur_measure(&cal_backend_cudnn, &bo, net, 4, 1, 2, 1, 0, 0.1, &pt);
    CHECK(rc == SIM_EUNAVAIL && strstr(sim_err_msg(), "CPU knob"), "p 2 on cudnn: rc %d, %s", rc,
          sim_err_msg());
    cal_net_destroy(net);
#endif
}

/* The CPU backend has no host/device split: the host's share of a batch is refused there. */
static void gaps_need_a_device(void)
{
    struct cal_gaps g;
    int rc = cal_measure_gaps(&cal_backend_onednn, NULL, 10, false, &g);
    CHECK(rc == SIM_EUNAVAIL && strstr(sim_err_msg(), "no host/device split"), "onednn: rc %d, %s",
          rc, sim_err_msg());
}

/* Back-to-back served passes on the GPU (GPU machines only): every gap is positive and far
 * below a millisecond (a launch and a wait take microseconds), with the copies as well. */
static void cudnn_serve_gaps(void)
{
    cudnn_or_skip();
#ifdef SERVESIM_HAVE_CUDNN
    struct cal_opts bo = {0};
    struct cal_net *net = load("tiny_cnn");
    REQUIRE_OK(cal_net_init_weights(net, 1));
    void *st = NULL;
    REQUIRE_OK(cal_backend_cudnn.create(&bo, &st));
    struct cal_point pt;
    REQUIRE_OK(cal_measure(&cal_backend_cudnn, st, net, 4, 3, 10, &pt));
    struct cal_gaps lw, cp;
    REQUIRE_OK(cal_measure_gaps(&cal_backend_cudnn, st, 50, false, &lw));
    REQUIRE_OK(cal_measure_gaps(&cal_backend_cudnn, st, 50, true, &cp));
    CHECK(lw.passes == 50 && lw.min_us > 0 && lw.median_us < 1000 && lw.gpu_median_ms > 0,
          "launch+wait: %d passes, min %g us, median %g us, pass %g ms", lw.passes, lw.min_us,
          lw.median_us, lw.gpu_median_ms);
    CHECK(cp.min_us > 0 && cp.median_us < 5000, "copies: min %g us, median %g us", cp.min_us,
          cp.median_us);
    cal_backend_cudnn.destroy(st);
    cal_net_destroy(net);
#endif
}

TEST_MAIN_SCRATCH({"networks_match_published", networks_match_published},
                  {"parallelism_by_hand", parallelism_by_hand},
                  {"onednn_inter_op_matches_sequential", onednn_inter_op_matches_sequential},
                  {"concurrency_point", concurrency_point},
                  {"cudnn_concurrency_streams", cudnn_concurrency_streams},
                  {"cudnn_serve_gaps", cudnn_serve_gaps},
                  {"gaps_need_a_device", gaps_need_a_device},
                  {"concurrency_fit_recovers_constants", concurrency_fit_recovers_constants},
                  {"onednn_layers_match_reference", onednn_layers_match_reference},
                  {"onednn_arena_output_matches", onednn_arena_output_matches},
                  {"fold_bn_preserves_output", fold_bn_preserves_output},
                  {"arena_plan_no_overlap", arena_plan_no_overlap},
                  {"fit_recovers_known_coefficients", fit_recovers_known_coefficients},
                  {"default_slo_by_hand", default_slo_by_hand},
                  {"net_errors_are_precise", net_errors_are_precise},
                  {"profile_read_back_by_simulator", profile_read_back_by_simulator},
                  {"validate_real_against_sim", validate_real_against_sim},
                  {"serving_fit_recovers_distribution", serving_fit_recovers_distribution},
                  {"serving_measure_writes_distribution", serving_measure_writes_distribution},
                  {"cudnn_layers_match_reference", cudnn_layers_match_reference})
