/* test_dynamoml — the dynamoml policy's training scheduler against its spec
 * (../shared/specs/dynamoml.md, operator 2) on hand-made clusters: gang placement and packing,
 * reclaim for the oldest queued job and the scale-in victim order, scale-out onto the nodes a
 * job uses (another node only when faster); and the native scheduler's pods binding one at a
 * time, in one pending queue with inference pods; inference routed round robin to pods that
 * finish their queues when removed. Each case is worked out by hand in its comment; jobs are
 * long enough to be still running when the run ends, so their placement can be read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "sim.h"
#include "sim_config.h"
#include "sim_goodput.h"
#include "sim_result.h"
#include "sim_err.h"
#include "test.h"
#include "test_src.h"
#include "wl_source.h"

/* Runs the config on an engine kept for inspection: with no arrivals, or with its workload's. */
static struct sim *run_with(const char *text, struct sim_config **cfg, bool arrivals)
{
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "dyn", ".", cfg));
    static struct fixed_src f;
    f = (struct fixed_src){NULL, 0, 0, NULL, NULL};
    struct sim_source none = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL}, *src = &none;
    int n = 1;
    if (arrivals)
        REQUIRE_OK(wl_sources_open(&(*cfg)->workload, &(*cfg)->world, 1.0, &src, &n, NULL));
    REQUIRE_OK(sim_create(&(*cfg)->world, 1.0, (*cfg)->world.policy, src, n, &s));
    if (arrivals)
        free(src);
    REQUIRE_OK(sim_run(s));
    return s;
}

static struct sim *run_cfg(const char *text, struct sim_config **cfg)
{
    return run_with(text, cfg, false);
}

static void gpus_are(const struct sim *s, int j, const int *want, int n, int ps)
{
    const struct sim_job *p = sim_job(s, j);
    bool ok = p->nworkers == n && (ps < 0 || p->ps_node == ps);
    for (int w = 0; ok && w < n; w++)
        ok = p->gpu[w] == want[w];
    char got[128] = "";
    for (int w = 0; w < p->nworkers; w++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", p->gpu[w]);
    CHECK(ok, "job %d: GPUs%s (%d workers), PS node %d; want %d workers from GPU %d, PS %d", j,
          got, p->nworkers, p->ps_node, n, n ? want[0] : -1, ps);
}

#define MODEL "\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}]," \
              "\"workload\":{\"rate_rps\":1},\"metrics\":{\"sample_period_s\":0}"

/* Node a: 5 GPUs (GPU 0 holds the inference executor, 1-4 free), node b: 2 (5, 6).
 * Job 0 (2 workers) at 0 s: the node with the fewest free GPUs that holds both is b: 5, 6, PS
 * on b. Job 1 (3) at 1 s: a: 1, 2, 3, PS on a. Job 2 (2) at 2 s: one GPU free (4) -> reclaim:
 * the victim job has most workers (job 1), its worker on the node with most free GPUs, the
 * later of ties: GPU 3 -> a has 3, 4 free: job 2 on 3, 4, PS a. No scale-out: every job at its
 * max. */
static void gang_packing_and_reclaim(void)
{
    struct sim_config *cfg;
    struct sim *s = run_cfg(
        "{\"seed\":1,\"duration_s\":10,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
        "\"gpus\":5},{\"name\":\"b\",\"cores\":1,\"gpus\":2}],\"executors\":1}," MODEL ","
        "\"policy\":{\"name\":\"dynamoml\"},\"jobs\":{\"kinds\":[{\"name\":\"k\",\"iterations\":"
        "1e9,\"iter_ms\":10,\"speedup\":[1,2,3],\"cross_node\":3}],\"arrivals\":[{\"kind\":\"k\","
        "\"at_s\":0,\"init_workers\":2,\"max_workers\":2},{\"kind\":\"k\",\"at_s\":1,"
        "\"init_workers\":3,\"max_workers\":3},{\"kind\":\"k\",\"at_s\":2,\"init_workers\":2,"
        "\"max_workers\":2}]}}", &cfg);
    gpus_are(s, 0, (int[]){5, 6}, 2, 1);
    gpus_are(s, 1, (int[]){1, 2}, 2, 0);
    gpus_are(s, 2, (int[]){3, 4}, 2, 0);
    CHECK(sim_job(s, 1)->evictions == 1 && sim_job(s, 0)->evictions == 0, "evictions %d %d",
          sim_job(s, 0)->evictions, sim_job(s, 1)->evictions);
    CHECK(sim_job(s, 2)->started == 2000000000LL, "job 2 started at %lld",
          (long long)sim_job(s, 2)->started);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* Node a: 4 GPUs (0: executor; 1-3 free), b: 4 (4-7). Speed-ups 1, 1.9, 2.8, 3.6, cross-node
 * 1.5. Job 0 (2, max 4) at 0 s: a (3 free, fewer than b's 4): 1, 2; scale-out: GPU 3 on a; a
 * 4th worker on b would be split: 3.6 / 1.5 = 2.4 < 2.8, not taken. Job 1 (2, max 4) at 1 s:
 * b: 4, 5; scale-out to 6, then (job 0 cannot grow) 7: one reconfiguration. Job 2 (2, max 2)
 * at 2 s: nothing free -> reclaim: job 1 (4 workers) loses GPU 7, then job 0 and job 1 tie at 3
 * and the later arrival (job 1) loses GPU 6; job 2 takes 6, 7 on b. */
static void scale_out_and_scale_in_order(void)
{
    struct sim_config *cfg;
    struct sim *s = run_cfg(
        "{\"seed\":1,\"duration_s\":10,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
        "\"gpus\":4},{\"name\":\"b\",\"cores\":1,\"gpus\":4}],\"executors\":1}," MODEL ","
        "\"policy\":{\"name\":\"dynamoml\"},\"jobs\":{\"kinds\":[{\"name\":\"r\",\"iterations\":"
        "1e9,\"iter_ms\":100,\"speedup\":[1,1.9,2.8,3.6],\"cross_node\":1.5}],\"arrivals\":[{"
        "\"kind\":\"r\",\"at_s\":0,\"init_workers\":2,\"max_workers\":4},{\"kind\":\"r\","
        "\"at_s\":1,\"init_workers\":2,\"max_workers\":4},{\"kind\":\"r\",\"at_s\":2,"
        "\"init_workers\":2,\"max_workers\":2}]}}", &cfg);
    gpus_are(s, 0, (int[]){1, 2, 3}, 3, 0);
    gpus_are(s, 1, (int[]){4, 5}, 2, 1);
    gpus_are(s, 2, (int[]){6, 7}, 2, 1);
    CHECK(sim_job(s, 1)->evictions == 2 && sim_job(s, 1)->reconfigs == 1 &&
          sim_job(s, 0)->reconfigs == 1 && sim_job(s, 0)->evictions == 0,
          "job 0: %d reconfigurations, %d evictions; job 1: %d, %d", sim_job(s, 0)->reconfigs,
          sim_job(s, 0)->evictions, sim_job(s, 1)->reconfigs, sim_job(s, 1)->evictions);
    for (int j = 0; j < 3; j++)         /* never a chief removed: each still has its first GPU */
        CHECK(sim_job(s, j)->nworkers >= 1, "job %d lost every worker", j);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* Native placement: 3 free GPUs, two jobs of 2 workers at 0 s. Job 0's pods bind first (two
 * GPUs), job 1's first pod takes the last GPU and waits for its second: no gang, it holds a GPU
 * while not progressing; when job 0 ends (200 iterations of 10 ms: 1 s with 2 workers at S(2)
 * 2, after no start-up) its GPUs free and job 1 starts at once. The run is a function of the
 * seed: the same placement twice. */
static void native_pods_bind_one_at_a_time(void)
{
    const char *text =
        "{\"seed\":3,\"duration_s\":10,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
        "\"gpus\":2},{\"name\":\"b\",\"cores\":1,\"gpus\":2}],\"executors\":1}," MODEL ","
        "\"policy\":{\"name\":\"dynamoml\",\"params\":{\"scheduling\":false}},\"jobs\":{\"kinds\":"
        "[{\"name\":\"k\",\"iterations\":200,\"iter_ms\":10,\"speedup\":[1,2],\"cross_node\":1}],"
        "\"arrivals\":[{\"kind\":\"k\",\"count\":2,\"init_workers\":2,\"max_workers\":2}]}}";
    int first[4] = {0};
    for (int run = 0; run < 2; run++) {
        struct sim_config *cfg;
        struct sim *s = run_cfg(text, &cfg);
        const struct sim_job *a = sim_job(s, 0), *b = sim_job(s, 1);
        CHECK(a->state == SIM_JOB_DONE && a->started == 0 && a->ended == 1000000000LL,
              "job 0: state %d, %lld to %lld", a->state, (long long)a->started, (long long)a->ended);
        CHECK(b->state == SIM_JOB_DONE && b->started == a->ended && b->ended == 2000000000LL,
              "job 1: state %d, started %lld (job 0 ended %lld), ended %lld", b->state,
              (long long)b->started, (long long)a->ended, (long long)b->ended);
        for (int g = 1; g < sim_gpu_count(s); g++)
            CHECK(sim_gpu(s, g)->milli == 0, "GPU %d held after both jobs", g);
        int got[4] = {a->gpu[0], a->gpu[1], b->gpu[0], b->gpu[1]};  /* (kept after the end) */
        if (run == 0)
            memcpy(first, got, sizeof got);
        else
            CHECK(!memcmp(first, got, sizeof got), "placement differs between runs of one seed");
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* native_placement "least_allocated" (kube-scheduler's default scoring, ties random): three
 * nodes of 2 GPUs, the inference pod on node a's first. A 2-worker job's first pod goes to b
 * or c (all free, against a's half), its second to the other (half free on a and on the first
 * one's node, all on the other): never node a, never one node; for every seed. The uniformly
 * random placement puts them on one node or on a in most seeds. */
static void native_least_allocated_spreads(void)
{
    int spread = 0, random_spread = 0;
    for (int seed = 1; seed <= 8; seed++)
        for (int la = 0; la < 2; la++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "{\"seed\":%d,\"duration_s\":5,\"cluster\":{\"nodes\":[{\"name\":\"a\","
                     "\"cores\":1,\"gpus\":2},{\"name\":\"b\",\"cores\":1,\"gpus\":2},"
                     "{\"name\":\"c\",\"cores\":1,\"gpus\":2}],\"executors\":1}," MODEL ","
                     "\"policy\":{\"name\":\"dynamoml\",\"params\":{\"scheduling\":false,"
                     "\"native_placement\":\"%s\"}},\"jobs\":{\"kinds\":[{\"name\":\"k\","
                     "\"iterations\":100,\"iter_ms\":10,\"speedup\":[1,2]}],\"arrivals\":"
                     "[{\"kind\":\"k\",\"init_workers\":2,\"max_workers\":2}]}}",
                     seed, la ? "least_allocated" : "random");
            struct sim_config *cfg;
            struct sim *s = run_cfg(text, &cfg);
            const struct sim_job *j = sim_job(s, 0);
            int n0 = sim_gpu(s, j->gpu[0])->node, n1 = sim_gpu(s, j->gpu[1])->node;
            bool apart = n0 != n1 && n0 != 0 && n1 != 0;
            if (la)
                spread += apart;
            else
                random_spread += apart;
            sim_destroy(s);
            sim_config_destroy(cfg);
        }
    CHECK(spread == 8, "least_allocated: %d of 8 seeds on b and c apart", spread);
    CHECK(random_spread < 8, "random: %d of 8 seeds on b and c apart (the test tells nothing)",
          random_spread);
}

/* autoscaling names the HPA, which is configured in autoscale: without it, refused with the
 * parameter named. */
static void autoscaling_needs_the_hpa(void)
{
    struct sim_config *cfg = NULL;
    int rc = sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"gpus\":1}," MODEL ","
                              "\"policy\":{\"name\":\"dynamoml\",\"params\":{\"autoscaling\":"
                              "true}}}", "d", ".", &cfg);
    if (!rc) {
        struct sim_result *r = NULL;
        rc = sim_run_once(cfg, 1.0, NULL, &r);
        sim_result_destroy(r);
    }
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "give autoscale.kind \"hpa\""), "rc %d: %s",
          rc, sim_err_msg());
    sim_config_destroy(cfg);
}

/* The value of `series` at time t (s) in r's time series, or -1. */
static double ts_at(const struct sim_result *r, const char *series, double t)
{
    for (size_t i = 0; i < r->ts.n; i++)
        if (!strcmp(r->ts.series[r->ts.pts[i].series], series) &&
            r->ts.pts[i].t == (int64_t)(t * 1e9))
            return r->ts.pts[i].value;
    return -1;
}

/* The HPA on request rate: uniform arrivals at 90 req/s for 100 s, then 30; target 20 req/s
 * per pod, tolerance 0.1, sync 15 s (the first at the first 5-s tick), window 30 s,
 * stabilization 60 s, pods up at once. By hand: t=5: R 90 -> 4.5 -> 5, capped at max(4, 2 x
 * 1) = 4; t=20: |90 / 80 - 1| = 0.125 > 0.1 -> 5; t=35..95: |90 / 100 - 1| = 0.1 -> unchanged;
 * t=110: R (20 s at 90, 10 at 30) = 70 -> 4, but the largest of the last 60 s is 5: kept;
 * t=125: R 40 -> 2 (kept: 5 at 65..95); t=140, 155: kept; t=170: the largest since 110 is 4
 * -> 4 pods (its own recommendation is 2); t=185: since 125, 2 -> 2 pods. */
static void hpa_tolerance_and_stabilization(void)
{
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(
        "{\"seed\":1,\"duration_s\":200,\"cluster\":{\"gpus\":1,\"max_gpus\":12,\"provision_s\":0},"
        "\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":5,\"slo_ms\":100,\"max_batch\":1}],"
        "\"workload\":{\"rate_rps\":90,\"arrival\":{\"kind\":\"uniform\"},\"segments\":[{\"duration_s\":"
        "100,\"scale\":1},{\"scale\":0.333333333333}]},\"policy\":{\"name\":\"dynamoml\"},"
        "\"metrics\":{\"sample_period_s\":5},\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":20,"
        "\"tolerance\":0.1,\"sync_s\":15,\"window_s\":30,\"stabilization_s\":60}}", "hpa", ".", &cfg));
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    static const double t[] = {5, 20, 35, 95, 110, 125, 140, 155, 170, 185};
    static const double want[] = {4, 5, 5, 5, 4, 2, 2, 2, 2, 2};   /* raw, not stabilized */
    for (int i = 0; i < 10; i++)
        CHECK(ts_at(r, "hpa.desired", t[i]) == want[i], "hpa.desired at %g s: %g, want %g", t[i],
              ts_at(r, "hpa.desired", t[i]), want[i]);
    /* pods billed after each sync (the engine samples before the autoscaler acts) */
    static const double pt[] = {10, 25, 100, 160, 175, 190};
    static const double pods[] = {4, 5, 5, 5, 4, 2};
    for (int i = 0; i < 6; i++)
        CHECK(ts_at(r, "gpus_billed", pt[i]) == pods[i], "pods at %g s: %g, want %g", pt[i],
              ts_at(r, "gpus_billed", pt[i]), pods[i]);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

/* Preemption: 4 GPUs, one pod and a 3-worker job on the rest; the HPA wants 3 pods (200 req/s
 * at 20 per pod, capped by max_gpus 3): each added pod is pending, and the policy evicts the
 * job's non-chief workers (the later first) so that both bind; the chief stays. Without
 * `autoscaling` in the policy's params, the same config evicts nothing: the pods stay pending. */
static void preemption_for_pending_pods(void)
{
    for (int preempt = 1; preempt >= 0; preempt--) {
        char text[1400];
        snprintf(text, sizeof text,
                 "{\"seed\":1,\"duration_s\":60,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":"
                 "1,\"gpus\":4}],\"executors\":1,\"max_gpus\":3,\"provision_s\":0}," "\"models\":"
                 "[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":5,\"slo_ms\":100,\"max_batch\":1}],"
                 "\"workload\":{\"rate_rps\":200},\"policy\":{\"name\":\"dynamoml\",\"params\":"
                 "{\"autoscaling\":%s}},\"metrics\":{\"sample_period_s\":5},\"autoscale\":{\"kind\":"
                 "\"hpa\",\"target_rps\":20},\"jobs\":{\"kinds\":[{\"name\":\"k\",\"iterations\":1e9,"
                 "\"iter_ms\":10,\"speedup\":[1,2,3]}],\"arrivals\":[{\"kind\":\"k\",\"init_workers\":"
                 "3,\"max_workers\":3}]}}", preempt ? "true" : "false");
        struct sim_config *cfg;
        struct sim *s = run_with(text, &cfg, true);
        const struct sim_job *j = sim_job(s, 0);
        int up = 0, pending = 0;
        for (int e = 0; e < sim_exec_count(s); e++) {
            up += sim_exec(s, e)->state == SIM_EXEC_UP;
            pending += sim_exec(s, e)->state == SIM_EXEC_PENDING;
        }
        if (preempt)
            CHECK(j->nworkers == 1 && j->evictions == 2 && j->gpu[0] == 1 && up == 3 && !pending,
                  "preemption: job %d workers (chief on GPU %d), %d evicted; %d pods up, %d "
                  "pending", j->nworkers, j->gpu[0], j->evictions, up, pending);
        else
            CHECK(j->nworkers == 3 && j->evictions == 0 && up == 1 && pending == 2,
                  "no preemption: job %d workers, %d evicted; %d up, %d pending", j->nworkers,
                  j->evictions, up, pending);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* Natively, job pods and inference pods wait in one queue in creation order. One node of 4
 * GPUs: the first pod on GPU 0, job A (3 workers, 15,000 iterations at 3 x 100 it/s: 50 s)
 * on the rest; at 5 s the HPA wants 4 pods for 200 req/s (target 20; max_gpus 3): 2 pods
 * pending. Job B (2 workers) arrives at 20 s, after them: when A ends at 50 s the 2 pods take
 * two of its GPUs and B's first pod the third (B waits for its second, holding that one).
 * Arriving at 1 s, before the pods were requested: B's two pods bind first and B starts at
 * 50 s, one inference pod binds and the other stays pending. */
static void native_one_pending_queue(void)
{
    for (int early = 0; early < 2; early++) {
        char text[1400];
        snprintf(text, sizeof text,
                 "{\"seed\":1,\"duration_s\":80,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":"
                 "1,\"gpus\":4}],\"executors\":1,\"max_gpus\":3,\"provision_s\":0},\"models\":"
                 "[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":1,\"slo_ms\":100,\"max_batch\":1}],"
                 "\"workload\":{\"rate_rps\":200},\"policy\":{\"name\":\"dynamoml\",\"preset\":"
                 "\"k8s-scaling\"},\"metrics\":{\"sample_period_s\":5},\"autoscale\":{\"kind\":"
                 "\"hpa\",\"target_rps\":20},\"jobs\":{\"kinds\":[{\"name\":\"k\",\"iterations\":"
                 "15000,\"iter_ms\":10,\"speedup\":[1,2,3]}],\"arrivals\":[{\"kind\":\"k\","
                 "\"init_workers\":3,\"max_workers\":3},{\"kind\":\"k\",\"at_s\":%d,"
                 "\"init_workers\":2,\"max_workers\":2}]}}", early ? 1 : 20);
        struct sim_config *cfg;
        struct sim *s = run_with(text, &cfg, true);
        const struct sim_job *a = sim_job(s, 0), *b = sim_job(s, 1);
        int up = 0, pending = 0, b_held = 0;
        for (int e = 0; e < sim_exec_count(s); e++) {
            up += sim_exec(s, e)->state == SIM_EXEC_UP;
            pending += sim_exec(s, e)->state == SIM_EXEC_PENDING;
        }
        for (int g = 0; g < sim_gpu_count(s); g++)
            for (int c = 0; c < sim_gpu(s, g)->nclaims; c++)
                b_held += sim_gpu(s, g)->claims[c].kind == SIM_HOLD_WORKER &&
                          sim_gpu(s, g)->claims[c].id == 1;
        CHECK(a->state == SIM_JOB_DONE && a->ended == 50000000000LL, "job A: state %d, ended %lld",
              a->state, (long long)a->ended);
        if (early)
            CHECK(b->state == SIM_JOB_RUNNING && b->started == a->ended && b_held == 2 &&
                      up == 2 && pending == 1,
                  "job B first: state %d, started %lld, %d GPUs; pods %d up, %d pending",
                  b->state, (long long)b->started, b_held, up, pending);
        else
            CHECK(b->state == SIM_JOB_QUEUED && b_held == 1 && up == 3 && pending == 0,
                  "pods first: job B state %d holding %d GPUs; pods %d up, %d pending", b->state,
                  b_held, up, pending);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
}

/* Inference is routed round robin over ready pods, each with its own FIFO, and a pod the HPA
 * removes finishes its queue. Three pods serving 1 request/s each, 6 req/s (uniform) for
 * 10 s: each pod is sent every third request; at the first sync (5 s) the HPA wants 1 pod
 * (6 / 20, stabilization 0) and removes the two newest, which still hold the queues that
 * built up (2 req/s sent, 1 served): they serve them all and go down after 5 s. Nothing is
 * dropped. */
static void round_robin_and_draining_pods(void)
{
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(
        "{\"seed\":1,\"duration_s\":100,\"cluster\":{\"gpus\":3,\"max_gpus\":4,\"provision_s\":0},"
        "\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":1000,\"slo_ms\":100000,"
        "\"max_batch\":1}],\"workload\":{\"rate_rps\":6,\"arrival\":{\"kind\":\"uniform\"},"
        "\"segments\":[{\"duration_s\":10,\"scale\":1},{\"scale\":1e-9}]},\"policy\":{\"name\":"
        "\"dynamoml\"},\"metrics\":{\"sample_period_s\":5},\"autoscale\":{\"kind\":\"hpa\","
        "\"target_rps\":20,\"sync_s\":5,\"window_s\":5,\"stabilization_s\":0}}", "rr", ".",
        &cfg));
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    CHECK(r->nexecs == 3, "%d executors", r->nexecs);
    CHECK(r->dropped == 0 && r->offered == 60 && r->on_time == 60,
          "offered %llu, on time %llu, dropped %llu", (unsigned long long)r->offered,
          (unsigned long long)r->on_time, (unsigned long long)r->dropped);
    /* 30 requests in the first 5 s, 10 to each pod; the other 30 to pod 0. Pods 1 and 2 are
     * sent their first request 1/6 s apart and serve their 10 back to back: each is up 10 s
     * and a bit (its first request's arrival), pod 2 1/6 s longer. */
    if (r->nexecs == 3) {
        CHECK(r->execs[0].requests == 40 && r->execs[1].requests == 10 &&
                  r->execs[2].requests == 10,
              "requests per pod %llu %llu %llu, want 40 10 10",
              (unsigned long long)r->execs[0].requests, (unsigned long long)r->execs[1].requests,
              (unsigned long long)r->execs[2].requests);
        CHECK(r->execs[1].up_s > 10 && r->execs[1].up_s < 10 + 1.0 / 6 &&
                  fabs(r->execs[2].up_s - r->execs[1].up_s - 1.0 / 6) < 1e-6,
              "removed pods up %.6f and %.6f s", r->execs[1].up_s, r->execs[2].up_s);
    }
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

TEST_MAIN({"gang_packing_and_reclaim", gang_packing_and_reclaim},
          {"scale_out_and_scale_in_order", scale_out_and_scale_in_order},
          {"native_pods_bind_one_at_a_time", native_pods_bind_one_at_a_time},
          {"autoscaling_needs_the_hpa", autoscaling_needs_the_hpa},
          {"hpa_tolerance_and_stabilization", hpa_tolerance_and_stabilization},
          {"preemption_for_pending_pods", preemption_for_pending_pods},
          {"native_one_pending_queue", native_one_pending_queue},
          {"native_least_allocated_spreads", native_least_allocated_spreads},
          {"round_robin_and_draining_pods", round_robin_and_draining_pods})
