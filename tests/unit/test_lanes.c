/* test_lanes — executors with several lanes and shared devices (cluster.lanes,
 * cluster.interference): batches re-timed when others start or finish beside them, checked
 * against finish times computed by hand, work conservation on a random workload, threads on a
 * CPU under the parametric model, busy and core-busy accounting, rrl-static's batcher (TF
 * Serving's rule on lanes), and the config's errors. */
#include <math.h>
#include <string.h>

#include "policy.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_result.h"
#include "test.h"
#include "test_src.h"

/* One GPU with the cluster section `cluster` running fifo on model m (l(b) = 5 b + 5 ms, so
 * l(1) = 10 ms; max_batch 1: every request is its own batch); arrivals at t[0..n). Returns the
 * engine after the run; v gets the finish times. */
static struct sim *gpu_run_pol(const char *cluster, const char *policy, int max_batch,
                               const int64_t *t, int n, struct end_seen *v,
                               struct sim_config **cfgp)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"duration_s\":1,\"cluster\":%s,\"models\":[{\"name\":\"m\",\"alpha_ms\":5,"
             "\"beta_ms\":5,\"slo_ms\":1000,\"max_batch\":%d}],\"workload\":{\"rate_rps\":1},"
             "\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,\"resp_us\":0},"
             "\"policy\":%s,\"metrics\":{\"sample_period_s\":0}}", cluster, max_batch, policy);
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "lanes", ".", &cfg));
    static struct fixed_src f;
    f = (struct fixed_src){t, n, 0, NULL, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &src, 1, &s));
    *v = (struct end_seen){{0}, 0};
    struct sim_observer obs = {.ctx = v, .request_end = end_seen_fn};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    *cfgp = cfg;
    return s;
}

static struct sim *gpu_run(const char *cluster, const int64_t *t, int n, struct end_seen *v,
                           struct sim_config **cfgp)
{
    return gpu_run_pol(cluster, "{\"name\":\"fifo\"}", 1, t, n, v, cfgp);
}

/* Re-timing rounds work done down and time left up (integer ns): a finish is never before
 * the exact one and at most a few ns after it. */
#define CHECK_FINISH(got, want_ns, what)                                                   \
    CHECK((got) >= (int64_t)(want_ns) && (got) <= (int64_t)(want_ns) + 8,                 \
          "%s: finish %lld ns, want %lld (+ rounding)", what, (long long)(got),            \
          (long long)(want_ns))

static const char GPU_PARAM[] =
    "{\"gpus\":1,\"lanes\":2,\"interference\":\"parametric\",\"interference_params\":"
    "{\"kappa_gpu\":0.05,\"host_ms\":%g,\"host_ms_per_request\":%g}}";

/* Two lanes, parametric interference, no host phase: A alone from 0 does 2 ms of its 10 by
 * 2 ms, when B starts; both then run at 1 / (2 (1 + 0.05)) = 1/2.1, so A's last 8 ms take
 * 16.8 ms (done at 18.8 ms), by which B has done 8 ms; B's last 2 ms alone end at 20.8 ms.
 * The GPU was busy 20.8 ms (the union, not 10 + 18.8). With interference none the lanes are
 * independent: 10 and 12 ms, busy 12 ms. */
static void gpu_parametric_two_lanes(void)
{
    static const int64_t t[] = {0, 2000000};
    char cl[512];
    snprintf(cl, sizeof cl, GPU_PARAM, 0.0, 0.0);
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s = gpu_run(cl, t, 2, &v, &cfg);
    CHECK(v.n == 2, "%d requests ended", v.n);
    CHECK_FINISH(v.finish[0], 18800000, "A beside B");
    CHECK_FINISH(v.finish[1], 20800000, "B, alone after A");
    CHECK(sim_exec_busy_ns(s, 0) == v.finish[1], "busy %lld ns, want %lld (union)",
          (long long)sim_exec_busy_ns(s, 0), (long long)v.finish[1]);
    CHECK(sim_exec(s, 0)->lanes == 2 && sim_exec(s, 0)->nrunning == 0, "lanes %d, running %d",
          sim_exec(s, 0)->lanes, sim_exec(s, 0)->nrunning);
    sim_destroy(s);
    sim_config_destroy(cfg);

    s = gpu_run("{\"gpus\":1,\"lanes\":2}", t, 2, &v, &cfg);
    CHECK(v.n == 2 && v.finish[0] == 10000000 && v.finish[1] == 12000000,
          "independent lanes: %lld, %lld; want 10 and 12 ms", (long long)v.finish[0],
          (long long)v.finish[1]);
    CHECK(sim_exec_busy_ns(s, 0) == 12000000, "busy %lld, want 12 ms",
          (long long)sim_exec_busy_ns(s, 0));
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* The host phase (1 ms + 1 ms per request: 2 ms) overlaps across lanes and keeps the GPU
 * idle: one request alone ends at 2 + 10 = 12 ms, busy 10 ms; two at once both reach the GPU
 * at 2 ms and share it (10 ms each at 1/2.1): 2 + 21 = 23 ms, busy 21 ms. */
static void gpu_host_phase(void)
{
    static const int64_t one[] = {0}, two[] = {0, 0};
    char cl[512];
    snprintf(cl, sizeof cl, GPU_PARAM, 1.0, 1.0);
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s = gpu_run(cl, one, 1, &v, &cfg);
    CHECK(v.n == 1 && v.finish[0] == 12000000, "alone: %lld, want 12 ms", (long long)v.finish[0]);
    CHECK(sim_exec_busy_ns(s, 0) == 10000000, "busy %lld, want 10 ms",
          (long long)sim_exec_busy_ns(s, 0));
    sim_destroy(s);
    sim_config_destroy(cfg);

    s = gpu_run(cl, two, 2, &v, &cfg);
    CHECK(v.n == 2, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], 23000000, "first of two");
    CHECK_FINISH(v.finish[1], 23000000, "second of two");
    CHECK(llabs(sim_exec_busy_ns(s, 0) - 21000000) <= 8, "busy %lld, want 21 ms",
          (long long)sim_exec_busy_ns(s, 0));
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* A measured table: factor 1 alone and 2.0 at three batches; two at once interpolate to
 * 1.5 (15 ms each), four at once extrapolate to 2.0 * 4 / 3 (26.67 ms each). */
static void table_interference(void)
{
    static const int64_t two[] = {0, 0}, four[] = {0, 0, 0, 0};
    const char *cl = "{\"gpus\":1,\"lanes\":4,\"interference\":\"table\",\"interference_table\":"
                     "[{\"n\":3,\"factor\":2.0},{\"n\":1,\"factor\":1.0}]}";
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s = gpu_run(cl, two, 2, &v, &cfg);
    CHECK(v.n == 2, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], 15000000, "two at once");
    CHECK_FINISH(v.finish[1], 15000000, "two at once");
    sim_destroy(s);
    sim_config_destroy(cfg);

    s = gpu_run(cl, four, 4, &v, &cfg);
    CHECK(v.n == 4, "%d ended", v.n);
    for (int i = 0; i < 4; i++)
        CHECK_FINISH(v.finish[i], 26666667, "four at once");
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* ------------------------------------------------------------ threads on a CPU */

/* A test policy: one CPU executor of model 0 with `milli` cores of node 0, filling its lanes
 * with single requests of p inter-op and t intra-op threads. */
struct thr_pol { int e, milli, p, t; };
enum { CPU = 1 };              /* the CPU executor's id (after the node's GPU) */
static struct thr_pol thr_cfg;
static void thr_fill(struct sim *s, struct thr_pol *c)
{
    const struct sim_exec *x = sim_exec(s, c->e);
    while (x->nrunning + x->pending < x->lanes && sim_queue_len(s, 0) > 0) {
        struct sim_dispatch_args a = {.exec = c->e, .model = 0, .n = 1, .from = SIM_CENTRAL,
                                      .p = c->p, .t = c->t};
        sim_dispatch_ex(s, &a);
    }
}
static int thr_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p;
    struct thr_pol *c = state;
    *c = thr_cfg;
    return (c->e = sim_exec_add_cpu(s, 0, 0, c->milli)) < 0 ? SIM_EINVAL : 0;
}
static void thr_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)m, (void)r;
    thr_fill(s, state);
}
static void thr_on_done(struct sim *s, void *state, const struct sim_batch *b)
{
    (void)b;
    thr_fill(s, state);
}
static const struct policy_ops thr_policy = {
    .name = "thr-test", .summary = "test", .state_size = sizeof(struct thr_pol),
    .init = thr_init, .on_request = thr_on_request, .on_batch_done = thr_on_done,
    .shared_devices = true,
};

/* A node of 4 cores and an idle GPU (executor 0; the CPU executor is 1), the model 100 ms on
 * one thread; `intf` the cluster's interference keys. Returns sim_run's code (the engine is
 * left in *sp). */
static int cpu_run(const char *intf, int lanes, const struct thr_pol *pol, const int64_t *t,
                   int n, struct end_seen *v, struct sim **sp, struct sim_config **cfgp)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"duration_s\":2,\"cluster\":{\"nodes\":[{\"name\":\"w0\",\"cores\":4,\"gpus\":1,"
             "\"cpu_kind\":\"xeon\"}],\"lanes\":%d,%s},\"models\":[{\"name\":\"m\","
             "\"slo_ms\":5000,\"profiles\":{\"1080ti\":{\"form\":\"linear\",\"alpha_ms\":1,\"beta_ms\":1},\"xeon\":{\"form\":\"linear\",\"alpha_ms\":40,"
             "\"beta_ms\":60}}}],\"workload\":{\"rate_rps\":1},\"network\":{\"ctrl_us\":0,"
             "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"fifo\"},"
             "\"metrics\":{\"sample_period_s\":0.1}}",
             lanes, intf);
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "threads", ".", &cfg));
    static struct fixed_src f;
    f = (struct fixed_src){t, n, 0, NULL, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    thr_cfg = *pol;
    REQUIRE_OK(sim_create(&cfg->world, 1.0, &thr_policy, &src, 1, sp));
    *v = (struct end_seen){{0}, 0};
    struct sim_observer obs = {.ctx = v, .request_end = end_seen_fn};
    sim_set_observer(*sp, &obs);
    *cfgp = cfg;
    return sim_run(*sp);
}

/* The parametric CPU model with the specification's constants (f 0.1, overhead 0.005, mu
 * 0.2, kappa 0.1), by hand:
 *  - alone, p 1, t 2 on 4 cores: (0.1 + 0.9/2 + 0.005) (1 + 0.2 * 2/4) = 0.555 * 1.1
 *    = 0.6105 -> 61.05 ms; cores busy 2 for that time;
 *  - two at once, t 2 each, on 2 cores (D = 4, twice oversubscribed): sigma = (1 + 0.2)
 *    * 2 * (1 + 0.1) = 2.64 -> 0.555 * 2.64 = 1.4652 -> both 146.52 ms; cores busy 2 (the
 *    sampled cores_busy: 2 over [0, 0.1 s], 0.9304 over the next 0.1 s);
 *  - pi 2, width 2, p 2, t 1 on 4 cores: a(2) = 1/2 + 1/4 = 0.75, D = 1/0.75, sigma =
 *    1 + 0.2 D/4 = 1.0667 -> 1.0 * 0.75 * 1.0667 = 0.8 -> 80 ms. */
static void cpu_threads_parametric(void)
{
    static const int64_t one[] = {0}, two[] = {0, 0};
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(cpu_run("\"interference\":\"parametric\"", 1,
                       &(struct thr_pol){.milli = 4000, .p = 1, .t = 2}, one, 1, &v, &s, &cfg));
    CHECK(v.n == 1, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], 61050000, "alone, t 2");
    CHECK_NEAR(sim_exec_busy_core_s(s, CPU), 2 * 0.06105, 1e-6);
    sim_destroy(s);
    sim_config_destroy(cfg);

    REQUIRE_OK(cpu_run("\"interference\":\"parametric\"", 2,
                       &(struct thr_pol){.milli = 2000, .p = 1, .t = 2}, two, 2, &v, &s, &cfg));
    CHECK(v.n == 2, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], 146520000, "two, oversubscribed");
    CHECK_FINISH(v.finish[1], 146520000, "two, oversubscribed");
    CHECK_NEAR(sim_exec_busy_core_s(s, CPU), 2 * 0.14652, 1e-6);
    CHECK_NEAR(sim_exec_busy_ns(s, CPU), 146520000, 1e-7);
    /* the sampled series, 0.1-s windows: 2 cores busy, then 2 x 0.04652 / 0.1, then none */
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    double cb[20];
    int k = 0;
    for (size_t i = 0; i < r->ts.n; i++)
        if (!strcmp(r->ts.series[r->ts.pts[i].series], "cores_busy") && k < 20)
            cb[k++] = r->ts.pts[i].value;
    CHECK(k == 20 && fabs(cb[0] - 2) < 1e-6 && fabs(cb[1] - 0.9304) < 1e-6 && cb[2] == 0 &&
          cb[19] == 0, "cores_busy: %d samples, %g %g %g", k, k ? cb[0] : -1, k > 1 ? cb[1] : -1,
          k > 2 ? cb[2] : -1);
    sim_result_destroy(r);
    sim_destroy(s);
    sim_config_destroy(cfg);

    REQUIRE_OK(cpu_run("\"interference\":\"parametric\",\"interference_params\":{\"pi\":2,"
                       "\"width\":2}", 1, &(struct thr_pol){.milli = 4000, .p = 2, .t = 1},
                       one, 1, &v, &s, &cfg));
    CHECK(v.n == 1, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], 80000000, "inter-op 2");
    sim_destroy(s);
    sim_config_destroy(cfg);

    /* a table without a row for the threads a batch asks for fails the run, saying which */
    int rc = cpu_run("\"interference\":\"table\",\"interference_table\":[{\"n\":1,\"factor\":1}]",
                     1, &(struct thr_pol){.milli = 4000, .p = 1, .t = 2}, one, 1, &v, &s, &cfg);
    CHECK(rc != 0 && strstr(sim_err_msg(), "no row for p 1, t 2"), "rc %d: %s", rc,
          sim_err_msg());
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* The seeded roughness of the CPU landscape (eps(c), specs/rrl.md): a batch alone takes its
 * smooth time (61.05 ms, as above) times eps(k, p, t) of its configuration, k its dispatcher's
 * batches in service (the lanes when it gives none); the field is the seed's, not the run's
 * (same seed, same terms; another seed, others); over a 10 x 4 x 10 grid its log has a
 * spread of the order of eta / sqrt(2) and is smooth at short range: neighbours differ less
 * than configurations half a length apart. Roughness 0 is exactly the smooth model. */
static void cpu_roughness(void)
{
    static const int64_t one[] = {0};
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(cpu_run("\"interference\":\"parametric\",\"interference_params\":{"
                       "\"roughness\":0.1,\"roughness_length\":6,\"roughness_seed\":7}", 1,
                       &(struct thr_pol){.milli = 4000, .p = 1, .t = 2}, one, 1, &v, &s, &cfg));
    const struct sim_intf_cfg *ic = &cfg->world.intf;
    double eps = sim_intf_roughness(ic, 1, 1, 2), bound = 0;
    for (int j = 0; j < SIM_ROUGH_TERMS; j++)
        bound += fabs(ic->rough_a[j]);
    bound = 0.1 * bound / sqrt((double)SIM_ROUGH_TERMS);
    CHECK(eps != 1 && fabs(log(eps)) <= bound, "eps(1,1,2) %.6f, |log| bound %.4f", eps, bound);
    CHECK(v.n == 1, "%d ended", v.n);
    CHECK_FINISH(v.finish[0], (int64_t)floor(61050000 * eps), "alone, rough");
    /* the terms are the seed's */
    struct sim_intf_cfg a = *ic, b = *ic;
    sim_intf_rough_draw(&a);
    b.rough_seed = 8;
    sim_intf_rough_draw(&b);
    CHECK(sim_intf_roughness(&a, 3, 2, 5) == sim_intf_roughness(ic, 3, 2, 5) &&
          sim_intf_roughness(&b, 3, 2, 5) != sim_intf_roughness(ic, 3, 2, 5),
          "seed 7 redrawn %.6f, seed 8 %.6f, seed 7 %.6f", sim_intf_roughness(&a, 3, 2, 5),
          sim_intf_roughness(&b, 3, 2, 5), sim_intf_roughness(ic, 3, 2, 5));
    /* spread and short-range smoothness over the grid */
    double sum = 0, sum2 = 0, d1 = 0, d3 = 0;
    int n = 0, n1 = 0, n3 = 0;
    for (int k = 1; k <= 10; k++)
        for (int p = 1; p <= 4; p++)
            for (int t = 1; t <= 10; t++) {
                double l = log(sim_intf_roughness(ic, k, p, t));
                sum += l, sum2 += l * l, n++;
                if (t + 1 <= 10)
                    d1 += fabs(l - log(sim_intf_roughness(ic, k, p, t + 1))), n1++;
                if (t + 3 <= 10)
                    d3 += fabs(l - log(sim_intf_roughness(ic, k, p, t + 3))), n3++;
            }
    double sd = sqrt(sum2 / n - (sum / n) * (sum / n));
    CHECK(sd > 0.02 && sd < 0.2 && d1 / n1 < d3 / n3, "sd of log eps %.4f; mean |step| at 1: "
          "%.4f, at 3: %.4f", sd, d1 / n1, d3 / n3);
    sim_destroy(s);
    sim_config_destroy(cfg);
    REQUIRE_OK(cpu_run("\"interference\":\"parametric\",\"interference_params\":{"
                       "\"roughness\":0}", 1,
                       &(struct thr_pol){.milli = 4000, .p = 1, .t = 2}, one, 1, &v, &s, &cfg));
    CHECK_FINISH(v.finish[0], 61050000, "roughness 0");
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* ------------------------------------------------------------ a random workload */

struct conserve { int64_t work[4]; int maxrun; };
static void cons_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct conserve *c = ctx;
    int n = sim_exec(s, b->exec)->nrunning;
    if (n > c->maxrun)
        c->maxrun = n;
}
static void cons_done(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct conserve *c = ctx;
    if (b->status == SIM_BATCH_OK && b->exec < 4)
        c->work[b->exec] += sim_latency_ns(s, b->model, sim_exec(s, b->exec)->kind, b->size);
}

/* fifo on 2 GPUs with 3 lanes under parametric interference (kappa 0.05, no host phase), a
 * Poisson load near saturation: with n batches on a GPU it does 1 / (1 + kappa (n - 1)) of a
 * batch's work per unit of time, so over the run each GPU's standalone work lies between
 * busy / (1 + 2 kappa) and busy; no GPU ever holds more than 3 batches. */
static void work_is_conserved(void)
{
    const char *text =
        "{\"duration_s\":20,\"seed\":7,\"cluster\":{\"gpus\":2,\"lanes\":3,\"interference\":"
        "\"parametric\",\"interference_params\":{\"kappa_gpu\":0.05,\"host_ms\":0,"
        "\"host_ms_per_request\":0}},\"models\":[{\"name\":\"a\",\"alpha_ms\":2,\"beta_ms\":6,"
        "\"slo_ms\":200,\"max_batch\":8},{\"name\":\"b\",\"alpha_ms\":4,\"beta_ms\":3,"
        "\"slo_ms\":150,\"max_batch\":4}],\"workload\":{\"rate_rps\":600},"
        "\"policy\":{\"name\":\"fifo\"},\"metrics\":{\"sample_period_s\":1}}";
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "conserve", ".", &cfg));
    REQUIRE_OK(sim_config_engine(cfg, 1.0, NULL, &s, NULL));
    struct conserve c = {{0}, 0};
    struct sim_observer obs = {.ctx = &c, .batch_start = cons_start, .batch_done = cons_done};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    CHECK(c.maxrun == 3, "at most %d batches ran at once on a GPU, want 3", c.maxrun);
    for (int e = 0; e < 2; e++) {
        double busy = (double)sim_exec_busy_ns(s, e), work = (double)c.work[e];
        CHECK(work <= busy + 1000 && work >= busy / 1.1 - 1000 && work > 1e9,
              "GPU %d: work %.0f ns in busy %.0f ns", e, work, busy);
    }
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* ------------------------------------------------------------ rrl-static's batcher */

/* TF Serving's rule at B 3, T 10 ms, m 1 (l(b) = 5 b + 5 ms): arrivals at 0, 1 and 2 ms fill
 * a batch at 2 ms (done at 2 + 20 = 22 ms); one at 25 ms waits for the timeout, 35 ms, and
 * ends at 45 ms; with B 3, T 1 ms, m 2 and two lanes, arrivals at 0, 0, 0 and 0.5, 0.5, 0.5 ms
 * run as two batches side by side (20 ms each: done at 20 and 20.5 ms). "sequential" on that burst runs them one
 * by one: 10, 20, ..., 60 ms. */
static void rrl_static_batcher(void)
{
    static const int64_t t[] = {0, 1000000, 2000000, 25000000};
    static const int64_t six[] = {0, 0, 0, 500000, 500000, 500000};
    struct end_seen v;
    struct sim_config *cfg;
    struct sim *s = gpu_run_pol("{\"gpus\":1}", "{\"name\":\"rrl-static\",\"params\":"
                                "{\"config\":[3,10,1]}}", 8, t, 4, &v, &cfg);
    CHECK(v.n == 4 && v.finish[0] == 22000000 && v.finish[2] == 22000000 &&
              v.finish[3] == 45000000, "B 3, T 10: %d ended, %lld .. %lld, then %lld", v.n,
          (long long)v.finish[0], (long long)v.finish[2], (long long)v.finish[3]);
    sim_destroy(s);
    sim_config_destroy(cfg);

    s = gpu_run_pol("{\"gpus\":1,\"lanes\":2}", "{\"name\":\"rrl-static\",\"params\":"
                    "{\"config\":[3,1,2]}}", 8, six, 6, &v, &cfg);
    CHECK(v.n == 6 && v.finish[0] == 20000000 && v.finish[3] == 20500000,
          "m 2: %d ended, %lld and %lld", v.n, (long long)v.finish[0], (long long)v.finish[3]);
    sim_destroy(s);
    sim_config_destroy(cfg);

    s = gpu_run_pol("{\"gpus\":1,\"lanes\":2}", "{\"name\":\"rrl-static\",\"params\":"
                    "{\"config\":\"sequential\"}}", 8, six, 6, &v, &cfg);
    CHECK(v.n == 6 && v.finish[0] == 10000000 && v.finish[5] == 60000000,
          "sequential: %d ended, %lld .. %lld", v.n, (long long)v.finish[0],
          (long long)v.finish[5]);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* ------------------------------------------------------------ config */

static void expect_error(const char *cluster, const char *policy, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"duration_s\":1,\"cluster\":%s,\"models\":[{\"name\":\"m\",\"alpha_ms\":5,"
             "\"beta_ms\":5,\"slo_ms\":100}],\"workload\":{\"rate_rps\":1},"
             "\"policy\":%s}", cluster, policy);
    struct sim_config *cfg = NULL;
    int rc = sim_config_from_text(text, "bad", ".", &cfg);
    CHECK(rc != 0 && strstr(sim_err_msg(), needle), "%s / %s: rc %d, message \"%s\", want \"%s\"",
          cluster, policy, rc, rc ? sim_err_msg() : "", needle);
    if (!rc)
        sim_config_destroy(cfg);
}

static void config_errors(void)
{
    expect_error("{\"gpus\":1,\"interference\":\"parametric\",\"interference_params\":{"
                 "\"roughness\":-1}}", "{\"name\":\"fifo\"}",
                 "cluster.interference_params.roughness: expected");
    expect_error("{\"gpus\":1,\"interference\":\"parametric\",\"interference_params\":{"
                 "\"roughness_length\":0}}", "{\"name\":\"fifo\"}",
                 "cluster.interference_params.roughness_length: expected");
    expect_error("{\"gpus\":1,\"lanes\":2}", "{\"name\":\"symphony\"}",
                 "cluster.lanes: policy \"symphony\" plans with one batch at a time");
    expect_error("{\"gpus\":1,\"interference\":\"parametric\"}", "{\"name\":\"clockwork\"}",
                 "cluster.interference: policy \"clockwork\"");
    expect_error("{\"gpus\":1,\"lanes\":2}",
                 "{\"name\":\"rrl-static\",\"params\":{\"config\":[4,5,3]}}",
                 "policy.params.config: m = 3 batches at once needs cluster.lanes >= 3, got 2");
    expect_error("{\"gpus\":1}", "{\"name\":\"rrl-static\",\"params\":{\"config\":[4,5]}}",
                 "policy.params.config: expected [B, T_ms, m]");
    expect_error("{\"gpus\":1}", "{\"name\":\"rrl-static\",\"params\":{\"device\":\"cpu\"}}",
                 "\"cpu\" needs nodes with cores");
    expect_error("{\"gpus\":1,\"lanes\":0}", "{\"name\":\"fifo\"}",
                 "cluster.lanes: expected an integer in [1, 1024]");
    expect_error("{\"gpus\":1,\"interference\":\"shared\"}", "{\"name\":\"fifo\"}",
                 "cluster.interference");
    expect_error("{\"gpus\":1,\"interference_params\":{\"mu\":1}}", "{\"name\":\"fifo\"}",
                 "cluster.interference_params: only with interference \"parametric\"");
    expect_error("{\"gpus\":1,\"interference\":\"table\"}", "{\"name\":\"fifo\"}",
                 "cluster.interference_table: expected at least one row");
    expect_error("{\"gpus\":1,\"interference\":\"table\",\"interference_table\":[{\"n\":1,"
                 "\"factor\":1},{\"n\":1,\"p\":1,\"factor\":2}]}", "{\"name\":\"fifo\"}",
                 "two rows for n 1, p 1, t 1");
    expect_error("{\"gpus\":1,\"interference\":\"table\",\"interference_table\":[{\"n\":1,"
                 "\"factor\":0}]}", "{\"name\":\"fifo\"}", "cluster.interference_table[0].factor: expected a "
                 "positive number, got 0");
    expect_error("{\"gpus\":1,\"interference\":\"parametric\",\"interference_params\":{\"pi\":"
                 "0.5}}", "{\"name\":\"fifo\"}", "cluster.interference_params.pi: expected a number >= 1");
    expect_error("{\"gpus\":1,\"interference\":\"parametric\",\"interference_params\":{\"nu\":"
                 "1}}", "{\"name\":\"fifo\"}", "cluster.interference_params");
}

TEST_MAIN({"gpu_parametric_two_lanes", gpu_parametric_two_lanes},
          {"gpu_host_phase", gpu_host_phase}, {"table_interference", table_interference},
          {"cpu_threads_parametric", cpu_threads_parametric},
        {"cpu_roughness", cpu_roughness},
          {"work_is_conserved", work_is_conserved}, {"rrl_static_batcher", rrl_static_batcher},
          {"config_errors", config_errors})
