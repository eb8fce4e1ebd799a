/* test_cluster — DynamoML's engine and workload pieces. The engine's GPU ledger
 * (sim/sim_cluster.c): GPUs per node from the config,
 * claims that never exceed a GPU, executors pending while no GPU is free and taking GPUs in
 * the order they were added, cancelled while pending, billed only while they hold a GPU; and
 * training jobs (sim/sim_jobs.c): a job's completion time under a hand-computed sequence of
 * worker changes, the chief never removed, the jobs section's errors; closed-loop clients
 * (workloads/wl_clients.c): a client's cycle of response and think time, the schedule's steps,
 * bad input. Scripted test policies act at fixed times (their timers) and record what they
 * see. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sim_config.h"
#include "sim_err.h"
#include "sim_policy.h"
#include "sim_goodput.h"
#include "sim_result.h"
#include "wl_source.h"
#include "test.h"
#include "test_src.h"

#define S(x) ((int64_t)((x) * 1e9))

/* What the scripted policy does at t = 1, 2, 3, ... s (tag = step), and what it saw. */
enum act { A_NONE, A_CLAIM_WORKERS, A_ADD, A_RELEASE_ONE, A_RELEASE_ALL, A_REMOVE_PENDING,
           A_SHARES, A_GRAB_NEXT, A_REMOVE_UP };
static struct {
    enum act script[8];
    int nsteps;
    /* seen */
    int pending_calls, gpu_free_calls, last_free_gpu;
    bool grab;                          /* on_gpu_free claims the next freed GPU (once) */
    int added[4], nadded;
    int state_after[8][4];              /* executors' states after each step */
    int gpu_of[8][4];
    int claim_rc[8];
    int up_calls;
    int64_t up_at[4];
} sc;

static int sc_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p, (void)state;
    for (int i = 0; i < sc.nsteps; i++)
        sim_timer_set(s, S(i + 1), (uint64_t)i, NULL);
    return 0;
}
static void sc_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)s, (void)state, (void)m, (void)r;
}
static void sc_on_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)state, (void)arg;
    int k = (int)tag;
    switch (sc.script[k]) {
    case A_CLAIM_WORKERS:               /* a worker on every GPU still free */
        sc.claim_rc[k] = 0;
        for (int g = 0; g < sim_gpu_count(s); g++)
            if (sim_gpu(s, g)->milli == 0)
                sc.claim_rc[k] |= sim_gpu_claim(s, g, SIM_HOLD_WORKER, g, 1000);
        break;
    case A_ADD:
        sc.added[sc.nadded++] = sim_exec_add(s);
        break;
    case A_RELEASE_ONE:                 /* the worker on the last GPU */
        for (int g = sim_gpu_count(s) - 1; g >= 0; g--)
            if (sim_gpu(s, g)->nclaims && sim_gpu(s, g)->claims[0].kind == SIM_HOLD_WORKER) {
                sim_gpu_release(s, g, SIM_HOLD_WORKER, g);
                break;
            }
        break;
    case A_RELEASE_ALL:
        for (int g = 0; g < sim_gpu_count(s); g++)
            sim_gpu_release(s, g, SIM_HOLD_WORKER, g);
        break;
    case A_REMOVE_PENDING:
        for (int e = 0; e < sim_exec_count(s); e++)
            if (sim_exec(s, e)->state == SIM_EXEC_PENDING) {
                sim_exec_remove(s, e);
                break;
            }
        break;
    case A_REMOVE_UP:                   /* the first executor up */
        for (int e = 0; e < sim_exec_count(s); e++)
            if (sim_exec(s, e)->state == SIM_EXEC_UP) {
                sim_exec_remove(s, e);
                break;
            }
        break;
    case A_SHARES: {                    /* four quarters fit on GPU 1, a fifth does not */
        int rc = 0;
        for (int i = 0; i < 4; i++)
            rc |= sim_gpu_claim(s, 1, SIM_HOLD_SHARE, i, 250);
        sc.claim_rc[k] = rc == 0 && sim_gpu_claim(s, 1, SIM_HOLD_SHARE, 4, 1) == -1 &&
                         sim_gpu_claim(s, 1, SIM_HOLD_SHARE, 0, 1) == -1;  /* 1: as expected */
        sim_gpu_release(s, 1, SIM_HOLD_SHARE, 2);       /* 750 left: not wholly free */
        sc.claim_rc[k] &= sim_gpu(s, 1)->milli == 750 && sim_gpu(s, 1)->nclaims == 3;
        for (int i = 0; i < 4; i++)
            sim_gpu_release(s, 1, SIM_HOLD_SHARE, i);
        sc.claim_rc[k] &= sim_gpu(s, 1)->milli == 0;
        break;
    }
    case A_GRAB_NEXT:
        sc.grab = true;
        break;
    case A_NONE:
        break;
    }
    for (int e = 0; e < sim_exec_count(s) && e < 4; e++) {
        sc.state_after[k][e] = sim_exec(s, e)->state;
        sc.gpu_of[k][e] = sim_exec(s, e)->gpu;
    }
}
static void sc_on_pending(struct sim *s, void *state, int e)
{
    (void)s, (void)state, (void)e;
    sc.pending_calls++;
}
static void sc_on_gpu_free(struct sim *s, void *state, int g)
{
    (void)state;
    sc.gpu_free_calls++;
    sc.last_free_gpu = g;
    if (sc.grab) {                      /* a worker of the policy's, before the pending one */
        sc.grab = false;
        if (sim_gpu_claim(s, g, SIM_HOLD_WORKER, g, 1000))
            sc.gpu_free_calls = -1000;
    }
}
static void sc_on_up(struct sim *s, void *state, int e)
{
    (void)state;
    if (sc.up_calls < 4)
        sc.up_at[sc.up_calls++] = sim_now(s);
    (void)e;
}
static const struct policy_ops scripted = {
    .name = "ledger-test", .summary = "test", .state_size = 1, .init = sc_init,
    .on_request = sc_on_request, .on_timer = sc_on_timer, .on_exec_pending = sc_on_pending,
    .on_gpu_free = sc_on_gpu_free, .on_exec_up = sc_on_up, .dynamic_execs = true,
};

/* Two nodes of 2 GPUs, one executor at start, at most 3, 0.5 s to start; no arrivals. */
static struct sim_result *run_script(const enum act *script, int n, struct sim **keep)
{
    memset(&sc, 0, sizeof sc);
    sc.last_free_gpu = -1;
    memcpy(sc.script, script, (size_t)n * sizeof *script);
    sc.nsteps = n;
    const char *text =
        "{\"seed\":1,\"duration_s\":20,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
        "\"gpus\":2},{\"name\":\"b\",\"cores\":1,\"gpus\":2}],\"executors\":1,\"max_gpus\":3,"
        "\"provision_s\":0.5},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,"
        "\"slo_ms\":10}],\"workload\":{\"rate_rps\":1},\"metrics\":{\"sample_period_s\":1}}";
    struct sim_config *cfg;
    struct sim *s;
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_config_from_text(text, "ledger", ".", &cfg));
    static struct fixed_src f;
    f = (struct fixed_src){NULL, 0, 0, NULL, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    REQUIRE_OK(sim_create(&cfg->world, 1.0, &scripted, &src, 1, &s));
    CHECK(sim_gpu_count(s) == 4 && sim_gpu(s, 0)->node == 0 && sim_gpu(s, 2)->node == 1 &&
          sim_gpu(s, 0)->milli == 1000 && sim_exec(s, 0)->gpu == 0,
          "ledger at start: %d GPUs, GPU 2 on node %d, GPU 0 %d claimed, executor 0 on %d",
          sim_gpu_count(s), sim_gpu(s, 2)->node, sim_gpu(s, 0)->milli, sim_exec(s, 0)->gpu);
    CHECK(sim_node_gpus_free(s, 0) == 1 && sim_node_gpus_free(s, 1) == 2, "free per node");
    REQUIRE_OK(sim_run(s));
    REQUIRE_OK(sim_result_collect(s, &r));
    *keep = s;
    sim_config_destroy(cfg);
    return r;
}

/* The most GPU executors at once (runs.gpus_max), counted at each addition, against the
 * count by hand and a brute force over the executors' lifetimes (the quadratic loop the
 * result collection had, issue 52): 1 at start, +1 at 1 s and 2 s (3), one removed at 3 s
 * and one added at 4 s: 3 at most, and 4 executors billed over their lifetimes. */
static void most_executors_at_once(void)
{
    static const enum act script[] = {A_ADD, A_ADD, A_REMOVE_UP, A_ADD};
    struct sim *s;
    struct sim_result *r = run_script(script, 4, &s);
    int brute = 0;
    for (int e = 0; e < sim_exec_count(s); e++) {
        const struct sim_exec *x = sim_exec(s, e);
        if (x->cpu || x->state == SIM_EXEC_PENDING)
            continue;
        int at = 0;
        for (int f = 0; f < sim_exec_count(s); f++) {
            const struct sim_exec *y = sim_exec(s, f);
            at += !y->cpu && y->state != SIM_EXEC_PENDING && y->added_at <= x->added_at &&
                  !(y->state == SIM_EXEC_DOWN && y->down_at <= x->added_at);
        }
        brute = at > brute ? at : brute;
    }
    CHECK(sim_exec_count(s) == 4 && r->gpus_max == 3 && brute == 3,
          "%d executors; at most %d at once (brute force %d), want 3", sim_exec_count(s),
          r->gpus_max, brute);
    sim_result_destroy(r);
    sim_destroy(s);
}

/* Workers take the 3 free GPUs; an executor added then waits (PENDING, on_exec_pending, not
 * billed); a second waits behind it; one worker leaves: the policy hears of it first
 * (on_gpu_free), leaves it, and the first pending executor takes that GPU (node b), up 0.5 s
 * later; all leave: the second takes the next, the third stays free: 3 freed, 3 calls. */
static void pending_executors_take_freed_gpus(void)
{
    static const enum act script[] = {A_CLAIM_WORKERS, A_ADD, A_ADD, A_RELEASE_ONE,
                                      A_RELEASE_ALL};
    struct sim *s;
    struct sim_result *r = run_script(script, 5, &s);
    CHECK(sc.claim_rc[0] == 0, "workers did not get the free GPUs");
    CHECK(sc.added[0] == 1 && sc.added[1] == 2, "added %d %d", sc.added[0], sc.added[1]);
    CHECK(sc.state_after[1][1] == SIM_EXEC_PENDING && sc.gpu_of[1][1] == -1 &&
          sc.state_after[2][2] == SIM_EXEC_PENDING && sc.pending_calls == 2,
          "after adding with no GPU free: states %d %d, pending calls %d", sc.state_after[1][1],
          sc.state_after[2][2], sc.pending_calls);
    CHECK(sc.state_after[3][1] == SIM_EXEC_STARTING && sc.gpu_of[3][1] == 3 &&
          sc.state_after[3][2] == SIM_EXEC_PENDING,
          "one GPU freed: executor 1 %d on GPU %d, executor 2 %d", sc.state_after[3][1],
          sc.gpu_of[3][1], sc.state_after[3][2]);
    CHECK(sc.state_after[4][2] == SIM_EXEC_STARTING && sc.gpu_of[4][2] == 1 &&
          sc.gpu_free_calls == 3 && sc.last_free_gpu == 2,
          "all freed: executor 2 %d on GPU %d; free calls %d (GPU %d)", sc.state_after[4][2],
          sc.gpu_of[4][2], sc.gpu_free_calls, sc.last_free_gpu);
    CHECK(sc.up_calls == 2 && sc.up_at[0] == S(4.5) && sc.up_at[1] == S(5.5),
          "up at %lld %lld (%d)", (long long)sc.up_at[0], (long long)sc.up_at[1], sc.up_calls);
    CHECK(sim_exec(s, 1)->node == 1 && sim_exec(s, 2)->node == 0, "nodes %d %d",
          sim_exec(s, 1)->node, sim_exec(s, 2)->node);
    /* billed: executor 0 for 20 s, executor 1 from 4 s, executor 2 from 5 s: 20 + 16 + 15 */
    CHECK_NEAR(r->gpu_s, 51.0, 1e-9);
    sim_result_destroy(r);
    sim_destroy(s);
}

/* The policy may keep a freed GPU from the pending executors: workers on the 3 free GPUs, an
 * executor pending; the policy claims the next freed GPU (3) for a worker of its own, so the
 * executor stays pending; then all workers leave: GPU 1 goes to the executor (node a), up
 * 0.5 s later, billed from 4 s; GPUs 2 and 3 stay free. */
static void policy_hears_of_freed_gpus_first(void)
{
    static const enum act script[] = {A_CLAIM_WORKERS, A_ADD, A_GRAB_NEXT, A_RELEASE_ONE,
                                      A_NONE, A_RELEASE_ALL};
    struct sim *s;
    struct sim_result *r = run_script(script, 6, &s);
    CHECK(sc.state_after[3][1] == SIM_EXEC_PENDING && sim_gpu(s, 3)->milli == 0 &&
              sc.gpu_free_calls == 4 && sc.last_free_gpu == 3,
          "the grabbed GPU kept executor 1 pending (state %d); %d free calls in all (last "
          "GPU %d)",
          sc.state_after[3][1], sc.gpu_free_calls, sc.last_free_gpu);
    CHECK(sc.state_after[4][1] == SIM_EXEC_PENDING, "executor 1 bound before the release: %d",
          sc.state_after[4][1]);
    CHECK(sc.state_after[5][1] == SIM_EXEC_STARTING && sc.gpu_of[5][1] == 1 &&
              sc.up_calls == 1 && sc.up_at[0] == S(6.5),
          "after all left: executor 1 %d on GPU %d, up %d times (at %lld)", sc.state_after[5][1],
          sc.gpu_of[5][1], sc.up_calls, (long long)sc.up_at[0]);
    CHECK(sim_gpu(s, 2)->milli == 0 && sim_gpu(s, 3)->milli == 0, "GPUs 2, 3: %d %d",
          sim_gpu(s, 2)->milli, sim_gpu(s, 3)->milli);
    CHECK_NEAR(r->gpu_s, 20.0 + 14.0, 1e-9);
    sim_result_destroy(r);
    sim_destroy(s);
}

/* A pending executor removed before a GPU frees is cancelled: never billed, and the GPU that
 * frees later goes to the policy, not to it. */
static void removed_pending_executor_is_cancelled(void)
{
    static const enum act script[] = {A_CLAIM_WORKERS, A_ADD, A_REMOVE_PENDING, A_RELEASE_ONE};
    struct sim *s;
    struct sim_result *r = run_script(script, 4, &s);
    CHECK(sc.state_after[2][1] == SIM_EXEC_DOWN && sim_exec_active(s) == 1,
          "removed while pending: state %d, active %d", sc.state_after[2][1], sim_exec_active(s));
    CHECK(sc.gpu_free_calls == 1 && sc.last_free_gpu == 3 && sc.up_calls == 0,
          "the freed GPU: %d calls (GPU %d), %d executors up", sc.gpu_free_calls,
          sc.last_free_gpu, sc.up_calls);
    CHECK_NEAR(r->gpu_s, 20.0, 1e-9);
    sim_result_destroy(r);
    sim_destroy(s);
}

/* Fractional claims: four quarters fit, a fifth thousandth does not, a holder claims once; a
 * GPU partly released is not free. */
static void fractional_claims_never_exceed_a_gpu(void)
{
    static const enum act script[] = {A_SHARES};
    struct sim *s;
    struct sim_result *r = run_script(script, 1, &s);
    CHECK(sc.claim_rc[0] == 1, "shares on one GPU did not behave");
    CHECK(sc.gpu_free_calls == 1 && sc.last_free_gpu == 1, "GPU 1 freed: %d calls, GPU %d",
          sc.gpu_free_calls, sc.last_free_gpu);
    sim_result_destroy(r);
    sim_destroy(s);
}

/* Config: the nodes' GPUs are the ledger; executors at start default to all of them; max_gpus
 * above the GPUs, executors above the GPUs, executors without nodes: errors with the path. */
static void ledger_config(void)
{
    struct {
        const char *cluster, *want;
    } bad[] = {
        {"\"nodes\":[{\"cores\":1,\"gpus\":2}],\"max_gpus\":3",
         "cluster.max_gpus: expected at most the nodes' GPUs (2)"},
        {"\"nodes\":[{\"cores\":1,\"gpus\":2}],\"executors\":3",
         "cluster.executors: expected an integer in [0, 2], got 3"},
        {"\"gpus\":2,\"executors\":1", "cluster.executors: only with cluster.nodes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"duration_s\":1,\"cluster\":{%s},\"models\":[{\"name\":"
                 "\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],\"workload\":{\"rate_rps\":1}}",
                 bad[i].cluster);
        struct sim_config *cfg = NULL;
        int rc = sim_config_from_text(text, "c", ".", &cfg);
        CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), bad[i].want), "case %zu: rc %d, %s", i,
              rc, sim_err_msg());
        sim_config_destroy(cfg);
    }
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"nodes\":[{\"cores\":1,"
                                    "\"gpus\":2},{\"cores\":1,\"gpus\":3}]},\"models\":[{\"name\":"
                                    "\"m\",\"alpha_ms\":1,\"beta_ms\":1,\"slo_ms\":10}],"
                                    "\"workload\":{\"rate_rps\":1}}", "c", ".", &cfg));
    CHECK(cfg->world.gpus == 5 && cfg->world.max_gpus == 5, "executors %d, max %d",
          cfg->world.gpus, cfg->world.max_gpus);
    sim_config_destroy(cfg);
    /* one node: room for every executor the cluster may grow to */
    REQUIRE_OK(sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"gpus\":2,\"max_gpus\":6},"
                                    "\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,"
                                    "\"slo_ms\":10}],\"workload\":{\"rate_rps\":1}}", "c", ".", &cfg));
    CHECK(cfg->world.nnodes == 1 && cfg->world.nodes[0].gpus == 6 && cfg->world.gpus == 2,
          "one node: %d GPUs, %d executors", cfg->world.nodes[0].gpus, cfg->world.gpus);
    sim_config_destroy(cfg);
}

/* One job: 1000 iterations of 10 ms on one worker, speed-ups 1, 2, 3, cross-node factor 2,
 * 1 s to start, 2 s to reconfigure, arriving at 0.5 s; GPU 0 holds the one executor (node a),
 * GPU 1 is on node a, GPUs 2-3 on node b. By hand: placed at 0.5 on GPU 1 (PS on a), starting
 * until 1.5, then 100 it/s; at 3.5 (200 done) a worker on GPU 2 (node b): reconfiguring until
 * 5.5, then S(2) / 10 ms / 2 (split) = 100 it/s; at 7.5 (400 done) that worker leaves: 100 it/s
 * on one node again, 600 left: done at 13.5 s; 2 s split; the chief is never removed. */
static struct {
    int start_rc, add_rc, remove_rc, chief_rc;
    double done_at_7_5;
    int free_gpus[4], nfree;
    int done_calls;
    enum sim_job_state state_at_4, state_at_6;
} jb;

static int jb_init(struct sim *s, const cJSON *p, void *state)
{
    (void)p, (void)state;
    sim_timer_set(s, S(3.5), 1, NULL);
    sim_timer_set(s, S(4), 2, NULL);
    sim_timer_set(s, S(6), 3, NULL);
    sim_timer_set(s, S(7.5), 4, NULL);
    sim_timer_set(s, S(8), 5, NULL);
    return 0;
}
static void jb_arrive(struct sim *s, void *state, int j)
{
    (void)state;
    int g = 1;
    jb.start_rc = sim_job_start(s, j, &g, 1, 0);
}
static void jb_timer(struct sim *s, void *state, uint64_t tag, void *arg)
{
    (void)state, (void)arg;
    int g = 2;
    switch (tag) {
    case 1: jb.add_rc = sim_job_add_workers(s, 0, &g, 1); break;
    case 2: jb.state_at_4 = sim_job(s, 0)->state; break;
    case 3: jb.state_at_6 = sim_job(s, 0)->state; break;
    case 4:
        jb.done_at_7_5 = sim_job_done(s, 0);
        jb.remove_rc = sim_job_remove_worker(s, 0, 2);
        break;
    case 5: jb.chief_rc = sim_job_remove_worker(s, 0, 1); break;
    }
}
static void jb_free(struct sim *s, void *state, int g)
{
    (void)s, (void)state;
    if (jb.nfree < 4)
        jb.free_gpus[jb.nfree++] = g;
}
static void jb_done(struct sim *s, void *state, int j)
{
    (void)s, (void)state, (void)j;
    jb.done_calls++;
}
static const struct policy_ops job_script = {
    .name = "jobs-test", .summary = "test", .state_size = 1, .init = jb_init,
    .on_request = sc_on_request, .on_timer = jb_timer, .on_gpu_free = jb_free,
    .on_job_arrive = jb_arrive, .on_job_done = jb_done,
};

#define JOB_CLUSTER                                                                           \
    "\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,\"gpus\":2},{\"name\":\"b\",\"cores\":1," \
    "\"gpus\":2}],\"executors\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,\"beta_ms\":1,"   \
    "\"slo_ms\":10}],\"workload\":{\"rate_rps\":1}," \
    "\"policy\":{\"name\":\"dynamoml\"}"

static void job_completes_as_computed_by_hand(void)
{
    memset(&jb, 0, sizeof jb);
    const char *text =
        "{\"seed\":1,\"duration_s\":20," JOB_CLUSTER ",\"metrics\":{\"sample_period_s\":0},"
        "\"jobs\":{\"kinds\":[{\"name\":\"k\",\"iterations\":1000,\"iter_ms\":10,\"speedup\":"
        "[1,2,3],\"cross_node\":2,\"start_s\":1,\"reconfig_s\":2}],\"arrivals\":[{\"kind\":"
        "\"k\",\"at_s\":0.5,\"init_workers\":1,\"max_workers\":3}]}}";
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "jobs", ".", &cfg));
    static struct fixed_src f;
    f = (struct fixed_src){NULL, 0, 0, NULL, NULL};
    struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
    REQUIRE_OK(sim_create(&cfg->world, 1.0, &job_script, &src, 1, &s));
    CHECK(sim_job_count(s) == 1 && sim_job(s, 0)->state == SIM_JOB_FUTURE, "before the run");
    REQUIRE_OK(sim_run(s));
    const struct sim_job *j = sim_job(s, 0);
    CHECK(jb.start_rc == 0 && jb.add_rc == 0 && jb.remove_rc == 0, "start %d, add %d, remove %d",
          jb.start_rc, jb.add_rc, jb.remove_rc);
    CHECK(jb.chief_rc == -1 && strstr(sim_err_msg(), "chief"), "the chief: %d, %s", jb.chief_rc,
          sim_err_msg());
    CHECK(jb.state_at_4 == SIM_JOB_RECONFIGURING && jb.state_at_6 == SIM_JOB_RUNNING,
          "states at 4 s and 6 s: %d %d", jb.state_at_4, jb.state_at_6);
    CHECK_NEAR(jb.done_at_7_5, 400.0, 1e-9);
    CHECK(j->state == SIM_JOB_DONE && j->started == S(0.5) && j->ended == S(13.5),
          "state %d, started %lld, ended %lld (13.5 s by hand)", j->state, (long long)j->started,
          (long long)j->ended);
    CHECK(j->reconfigs == 1 && j->evictions == 1 && j->cross_ns == S(2) && j->nworkers == 0,
          "reconfigs %d, evictions %d, cross %lld ns, workers %d", j->reconfigs, j->evictions,
          (long long)j->cross_ns, j->nworkers);
    CHECK(jb.done_calls == 1 && jb.nfree == 2 && jb.free_gpus[0] == 2 && jb.free_gpus[1] == 1,
          "done calls %d; GPUs freed %d: %d %d", jb.done_calls, jb.nfree, jb.free_gpus[0],
          jb.free_gpus[1]);
    for (int g = 1; g < sim_gpu_count(s); g++)
        CHECK(sim_gpu(s, g)->milli == 0, "GPU %d still claimed after the job", g);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* The jobs section's bad input: exit 2 with the JSON path. */
static void jobs_config_errors(void)
{
    struct {
        const char *jobs, *want;
    } bad[] = {
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":0,\"iter_ms\":1,\"speedup\":[1]}],\"arrivals\":[]}",
         "jobs.kinds[0].iterations: expected a positive number, got 0"},
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":1,\"iter_ms\":1,\"speedup\":[1,2,3,4,5,6]}],"
         "\"arrivals\":[{\"kind\":\"k\",\"init_workers\":5,\"max_workers\":6}]}",
         "jobs.arrivals[0].init_workers: the cluster has 4 GPUs, got 5"},
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":1,\"iter_ms\":1,\"speedup\":[1,2]}],"
         "\"arrivals\":[{\"kind\":\"k\",\"max_workers\":3}]}",
         "jobs.arrivals[0].max_workers: kind \"k\" gives speed-ups for up to 2 workers, got 3"},
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":1,\"iter_ms\":1,\"speedup\":[1]}],"
         "\"arrivals\":[{\"kind\":\"x\"}]}", "jobs.arrivals[0].kind: no job kind \"x\""},
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":1,\"iter_ms\":1,\"speedup\":[1,-2]}],"
         "\"arrivals\":[]}", "jobs.kinds[0].speedup[1]: expected a positive number, got -2"},
        {"{\"kinds\":[{\"name\":\"k\",\"iterations\":1,\"iter_ms\":1,\"speedup\":[1],"
         "\"cross_node\":0.5}],\"arrivals\":[]}", "jobs.kinds[0].cross_node: expected a slowdown >= 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"duration_s\":1," JOB_CLUSTER ",\"jobs\":%s}", bad[i].jobs);
        struct sim_config *cfg = NULL;
        int rc = sim_config_from_text(text, "j", ".", &cfg);
        CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), bad[i].want), "case %zu: rc %d, %s", i,
              rc, sim_err_msg());
        sim_config_destroy(cfg);
    }
    /* a policy that does not place jobs is refused, not left with jobs queued forever */
    {
        struct sim_config *c2 = NULL;
        struct sim_result *r = NULL;
        int rc = sim_config_from_text(
            "{\"duration_s\":1,\"cluster\":{\"gpus\":2},\"models\":[{\"name\":\"m\",\"alpha_ms\":1,"
            "\"beta_ms\":1,\"slo_ms\":10}],\"workload\":{\"rate_rps\":1},\"policy\":{\"name\":"
            "\"fifo\"},\"jobs\":{\"kinds\":[{\"name\":\"a\",\"iterations\":1,\"iter_ms\":1,"
            "\"speedup\":[1]}],\"arrivals\":[{\"kind\":\"a\"}]}}", "j", ".", &c2);
        if (!rc)                        /* (the config's check builds an engine, so refused there) */
            rc = sim_run_once(c2, 1.0, NULL, &r);
        CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "policy \"fifo\" does not place training "
              "jobs"), "rc %d: %s", rc, sim_err_msg());
        sim_result_destroy(r);
        sim_config_destroy(c2);
    }
    /* arrivals in time order, ties in the order written */
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(
        "{\"duration_s\":1," JOB_CLUSTER ",\"jobs\":{\"kinds\":[{\"name\":\"a\",\"iterations\":1,"
        "\"iter_ms\":1,\"speedup\":[1]},{\"name\":\"b\",\"iterations\":1,\"iter_ms\":1,\"speedup\":"
        "[1]}],\"arrivals\":[{\"kind\":\"a\",\"at_s\":5,\"count\":2},{\"kind\":\"b\",\"at_s\":1},"
        "{\"kind\":\"a\",\"at_s\":1}]}}", "j", ".", &cfg));
    CHECK(cfg->world.njobs == 4 && cfg->world.jobs[0].kind == 1 && cfg->world.jobs[1].kind == 0 &&
          cfg->world.jobs[2].arrival_s == 5 && cfg->world.jobs[3].arrival_s == 5,
          "order: %d jobs, kinds %d %d", cfg->world.njobs, cfg->world.jobs[0].kind,
          cfg->world.jobs[1].kind);
    sim_config_destroy(cfg);
}

/* Closed-loop clients on one executor (15 ms per request, batch 1, no network delays), think
 * time exponential with mean 1 s. Steps of 500 s with 2, 0 and 6 clients, "end" after. A
 * client's cycle is think + 15 ms (+ a wait when another is in service: under 15 ms x
 * clients), so the requests sent in a step are about clients x 500 / 1.015: 985 with 2 (one
 * client: 492.6 expected, sd ~22 each), none while 0 are active (only a request in flight at
 * 500 s may end there), 2956 with 6; none after the schedule. No request is ever waiting
 * without its client blocked: each client has at most one in the system. */
static struct {
    int64_t per_step[4];
    int in_system, most_in_system;
} cl_seen;
static void cl_arrive(void *ctx, const struct sim *s, const struct sim_request *r)
{
    (void)ctx, (void)s;
    int st = (int)(r->t_arrival / (500 * 1000000000LL));
    cl_seen.per_step[st < 3 ? st : 3]++;
    if (++cl_seen.in_system > cl_seen.most_in_system)
        cl_seen.most_in_system = cl_seen.in_system;
}
static void cl_end(void *ctx, const struct sim *s, const struct sim_request *r)
{
    (void)ctx, (void)s, (void)r;
    cl_seen.in_system--;
}

static void closed_loop_clients(void)
{
    const char *text =
        "{\"seed\":5,\"duration_s\":2000,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":\"r\","
        "\"alpha_ms\":0,\"beta_ms\":15,\"slo_ms\":128,\"max_batch\":1}],\"network\":{\"ctrl_us\":0,"
        "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"dynamoml\"},"
        "\"metrics\":{\"sample_period_s\":100},\"workload\":{\"clients\":{\"step_s\":500,"
        "\"counts\":[2,0,6],\"think_s\":1,\"after\":\"end\"}}}";
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "clients", ".", &cfg));
    CHECK_NEAR(cfg->world.rate_rps, (2 + 0 + 6) / 3.0, 1e-12);
    struct sim_source *src;
    int n;
    struct sim *s;
    REQUIRE_OK(wl_sources_open(&cfg->workload, &cfg->world, 1.0, &src, &n, NULL));
    CHECK(n == 6, "%d client sources, expected the most any step has (6)", n);
    memset(&cl_seen, 0, sizeof cl_seen);
    REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, src, n, &s));
    free(src);
    struct sim_observer obs = {.request_arrive = cl_arrive, .request_end = cl_end};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    CHECK(cl_seen.per_step[0] > 985 * 0.9 && cl_seen.per_step[0] < 985 * 1.1 &&
          cl_seen.per_step[1] == 0 && cl_seen.per_step[2] > 2956 * 0.95 &&
          cl_seen.per_step[2] < 2956 * 1.05 && cl_seen.per_step[3] == 0,
          "requests per step %lld %lld %lld, after %lld (about 985, 0, 2956, 0)",
          (long long)cl_seen.per_step[0], (long long)cl_seen.per_step[1],
          (long long)cl_seen.per_step[2], (long long)cl_seen.per_step[3]);
    CHECK(cl_seen.most_in_system <= 6, "%d requests in the system at once (6 clients)",
          cl_seen.most_in_system);
    /* the `clients` series: the clients active at each sample (a step begins at its time) */
    struct sim_result *res;
    REQUIRE_OK(sim_result_collect(s, &res));
    static const double want_clients[] = {2, 2, 2, 2, 0, 0, 0, 0, 0, 6,
                                          6, 6, 6, 6, 0, 0, 0, 0, 0, 0};
    int k = 0;
    for (size_t i = 0; i < res->ts.n; i++) {
        const struct sim_ts_point *p = &res->ts.pts[i];
        if (strcmp(res->ts.series[p->series], "clients") != 0)
            continue;
        double t_s = (double)p->t / 1e9;
        CHECK(k < 20 && fabs(t_s - 100.0 * (k + 1)) < 1e-9 && p->value == want_clients[k],
              "clients sample %d at %g s: %g (expected %g at %d s)", k, t_s, p->value,
              k < 20 ? want_clients[k] : -1.0, 100 * (k + 1));
        k++;
    }
    CHECK(k == 20, "%d samples of clients, expected 20 (every 100 s to the end)", k);
    sim_result_destroy(res);
    sim_destroy(s);
    /* bad input: exit 2 with the JSON path */
    struct {
        const char *clients, *want;
    } bad[] = {
        {"{\"counts\":[1,-2]}", "workload.clients.counts[1]: expected a whole number of clients"},
        {"{\"counts\":[0,0]}", "workload.clients.counts: every step has 0 clients"},
        {"{\"counts\":[1],\"model\":\"x\"}", "workload.clients.model: no model \"x\""},
        {"{\"counts\":[1]},\"rate_rps\":5", "workload.rate_rps: with workload.clients"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char t2[512];
        snprintf(t2, sizeof t2, "{\"duration_s\":1,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":"
                 "\"r\",\"alpha_ms\":0,\"beta_ms\":15,\"slo_ms\":128}],\"workload\":{\"clients\":"
                 "%s}}", bad[i].clients);
        struct sim_config *c2 = NULL;
        int rc = sim_config_from_text(t2, "c", ".", &c2);
        CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), bad[i].want), "case %zu: rc %d, %s", i, rc,
              sim_err_msg());
        sim_config_destroy(c2);
    }
    sim_config_destroy(cfg);
}

/* jobs.end_when_done: one job of 1000 iterations on 2 workers (S(2) = 2, 10 ms each: 5 s),
 * placed at once by the native scheduler, in a run capped at 100 s with 10 req/s (uniform):
 * the run ends at 5 s — its duration, its requests (about 50) and its GPU-seconds (one
 * executor, 5 s) are those of 5 s; with closed-loop clients whose schedule lasts 12 s, it ends
 * at 12 s instead. */
static void run_ends_when_jobs_are_done(void)
{
    static const char *const workloads[] = {
        "{\"rate_rps\":10,\"arrival\":{\"kind\":\"uniform\"}}",
        "{\"clients\":{\"step_s\":4,\"counts\":[2,2,2],\"think_s\":0.5}}"};
    static const double want[] = {5, 12};
    for (int k = 0; k < 2; k++) {
        char text[1200];
        snprintf(text, sizeof text,
                 "{\"seed\":2,\"duration_s\":100,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
                 "\"gpus\":4}],\"executors\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":0,"
                 "\"beta_ms\":5,\"slo_ms\":100,\"max_batch\":1}],\"workload\":%s,\"policy\":{\"name\":"
                 "\"dynamoml\",\"params\":{\"scheduling\":false}},\"metrics\":{\"sample_period_s\":1},"
                 "\"jobs\":{\"end_when_done\":true,\"kinds\":[{\"name\":\"k\",\"iterations\":1000,"
                 "\"iter_ms\":10,\"speedup\":[1,2]}],\"arrivals\":[{\"kind\":\"k\",\"init_workers\":2,"
                 "\"max_workers\":2}]}}", workloads[k]);
        struct sim_config *cfg;
        struct sim_result *r = NULL;
        REQUIRE_OK(sim_config_from_text(text, "end", ".", &cfg));
        REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
        CHECK(r->duration_s == want[k] && r->makespan_s == 5.0, "case %d: duration %g s (want %g), "
              "makespan %g", k, r->duration_s, want[k], r->makespan_s);
        CHECK_NEAR(r->gpu_s, want[k], 1e-9);
        if (k == 0)
            CHECK(r->offered >= 49 && r->offered <= 51, "offered %llu in 5 s at 10 req/s",
                  (unsigned long long)r->offered);
        sim_result_destroy(r);
        sim_config_destroy(cfg);
    }
}

/* The token scheduler on one shared GPU: notebooks A and B (request 0.5, limit 1), idle and
 * bursts exactly 1 s (fixed), quota 250 ms, window 10 s. By hand: both burst at 1 s; A takes
 * the token (both at u = 0: ties to the lower id); at 1.25 B (u 0 < A's 0.25); then they
 * alternate: A's four quotas end its burst at 2.75 s (slowdown 1.75), B's at 3.0 (2.0). A
 * bursts again at 3.75 and holds the token alone; B joins at 4.0: at A's quota end (4.0) A has
 * used 1.25 s and B 1.0 in the window, (5 - 1) / 5 > (5 - 1.25) / 5: B first. Without sharing
 * each notebook has its own GPU: slowdown exactly 1. The run ends at 4.1 s: B holds the token. */
static void token_order_by_hand(void)
{
    for (int sharing = 1; sharing >= 0; sharing--) {
        char text[1200];
        snprintf(text, sizeof text,
                 "{\"seed\":1,\"duration_s\":4.1,\"cluster\":{\"nodes\":[{\"name\":\"a\",\"cores\":1,"
                 "\"gpus\":3}],\"executors\":1},\"models\":[{\"name\":\"m\",\"alpha_ms\":0,"
                 "\"beta_ms\":5,\"slo_ms\":100,\"max_batch\":1}],\"workload\":{\"rate_rps\":1},"
                 "\"policy\":{\"name\":\"dynamoml\",\"params\":{\"sharing\":%s}},\"metrics\":"
                 "{\"sample_period_s\":0},\"notebooks\":{\"count\":2,\"request\":0.5,\"limit\":1,"
                 "\"idle_s\":1,\"burst_s\":1,\"window_s\":10,\"quota_ms\":250,\"fixed\":true}}",
                 sharing ? "true" : "false");
        struct sim_config *cfg;
        struct sim *s;
        REQUIRE_OK(sim_config_from_text(text, "nb", ".", &cfg));
        static struct fixed_src f;
        f = (struct fixed_src){NULL, 0, 0, NULL, NULL};
        struct sim_source src = {fixed_next, fixed_close, &f, 0, NULL, NULL, NULL};
        REQUIRE_OK(sim_create(&cfg->world, 1.0, cfg->world.policy, &src, 1, &s));
        const struct sim_notebook *a = sim_notebook(s, 0), *b = sim_notebook(s, 1);
        CHECK(sharing ? a->gpu == 1 && b->gpu == 1 && a->milli == 500 : a->gpu != b->gpu &&
              a->milli == 1000, "placement: GPUs %d %d, claims %d %d", a->gpu, b->gpu, a->milli,
              b->milli);
        REQUIRE_OK(sim_run(s));
        uint64_t nb = sharing ? 1 : 2;  /* alone: bursts 1-2 and 3-4 s */
        CHECK(a->bursts == nb && b->bursts == nb, "bursts %llu %llu",
              (unsigned long long)a->bursts, (unsigned long long)b->bursts);
        if (sharing)
            CHECK(fabs(a->slowdown_sum - 1.75) < 1e-9 && fabs(b->slowdown_sum - 2.0) < 1e-9 &&
                  a->holding == false && b->holding == true,
                  "slowdowns %g %g (1.75, 2 by hand); at the end A holds %d, B %d", a->slowdown_sum,
                  b->slowdown_sum, a->holding, b->holding);
        else
            CHECK(a->slowdown_sum == 2.0 && b->slowdown_sum == 2.0, "own GPUs: slowdowns %g %g",
                  a->slowdown_sum, b->slowdown_sum);
        sim_destroy(s);
        sim_config_destroy(cfg);
    }
    /* a request above the limit: the JSON path */
    struct sim_config *cfg = NULL;
    int rc = sim_config_from_text("{\"duration_s\":1,\"cluster\":{\"gpus\":1},\"models\":[{\"name\":"
                                  "\"m\",\"alpha_ms\":0,\"beta_ms\":5,\"slo_ms\":100}],\"workload\":"
                                  "{\"rate_rps\":1},\"notebooks\":{\"count\":1,\"request\":0.5,"
                                  "\"limit\":0.25}}", "nb", ".", &cfg);
    CHECK(rc == SIM_EINVAL && strstr(sim_err_msg(), "notebooks.request: expected at most the "
          "limit (0.25), got 0.5"), "rc %d: %s", rc, sim_err_msg());
    sim_config_destroy(cfg);
}

TEST_MAIN({"pending_executors_take_freed_gpus", pending_executors_take_freed_gpus},
          {"most_executors_at_once", most_executors_at_once},
          {"policy_hears_of_freed_gpus_first", policy_hears_of_freed_gpus_first},
          {"removed_pending_executor_is_cancelled", removed_pending_executor_is_cancelled},
          {"fractional_claims_never_exceed_a_gpu", fractional_claims_never_exceed_a_gpu},
          {"ledger_config", ledger_config},
          {"job_completes_as_computed_by_hand", job_completes_as_computed_by_hand},
          {"jobs_config_errors", jobs_config_errors},
          {"closed_loop_clients", closed_loop_clients},
          {"run_ends_when_jobs_are_done", run_ends_when_jobs_are_done},
          {"token_order_by_hand", token_order_by_hand})
