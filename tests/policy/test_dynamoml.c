/* test_dynamoml — the dynamoml policy's training scheduler against its spec
 * (../shared/specs/dynamoml.md, operator 2) on hand-made clusters: gang placement and packing,
 * reclaim for the oldest queued job and the scale-in victim order, scale-out onto the nodes a
 * job uses (another node only when faster); and the native scheduler's pods binding one at a
 * time. Each case is worked out by hand in its comment; jobs are long enough to be still
 * running when the run ends, so their placement can be read. */
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

static struct sim *run_cfg(const char *text, struct sim_config **cfg)
{
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "dyn", ".", cfg));
    static struct fixed_src f;
    f = (struct fixed_src){NULL, 0, 0, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL};
    REQUIRE_OK(sim_create(&(*cfg)->world, 1.0, (*cfg)->world.policy, &src, 1, &s));
    REQUIRE_OK(sim_run(s));
    return s;
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

/* What is not built yet is refused with the parameter named. */
static void unbuilt_operators_refused(void)
{
    struct sim_config *cfg = NULL;
    int rc = sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"gpus\":1}," MODEL ","
                                  "\"policy\":{\"name\":\"dynamoml\",\"params\":{\"sharing\":"
                                  "true}}}", "d", ".", &cfg);
    if (!rc) {                          /* params are read by the policy's init */
        struct sim_result *r = NULL;
        rc = sim_run_once(cfg, 1.0, NULL, &r);
        sim_result_destroy(r);
    }
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "policy.params.sharing") &&
          strstr(sim_err_msg(), "not built yet"), "rc %d: %s", rc, sim_err_msg());
    sim_config_destroy(cfg);
}

TEST_MAIN({"gang_packing_and_reclaim", gang_packing_and_reclaim},
          {"scale_out_and_scale_in_order", scale_out_and_scale_in_order},
          {"native_pods_bind_one_at_a_time", native_pods_bind_one_at_a_time},
          {"unbuilt_operators_refused", unbuilt_operators_refused})
