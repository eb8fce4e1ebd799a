/* test_policies — every registered policy against the engine's invariants (checked here by
 * an independent observer, not by the engine's own bookkeeping; with training jobs and
 * notebooks also the GPU ledger's: no GPU over-claimed, 1..max workers, the chief kept,
 * progress within the iterations), and Symphony's expected
 * behaviour from specs/symphony.md: batch sizes near the staggered ideal, goodput bounded by
 * the ideal throughput, non-work-conserving vs work-conserving, and the flat top. */
#include "policy.h"
#include "sim.h"
#include "sim_err.h"
#include "sim_goodput.h"
#include "sim_param.h"
#include "sim_report.h"
#include "test.h"
#include "test_run.h"
#include "test_ts.h"

/* ------------------------------------------------------------ conformance */

struct audit {
    uint64_t arrived, ended_count, violations, stages;
    unsigned char *state;         /* per request id: 1 arrived, 2 ended */
    int64_t *deadline;            /* per request id: its deadline at arrival */
    uint64_t entries[64];         /* per model: requests that entered its queue (any stage) */
    size_t cap;
    int64_t last_event;
    int64_t *exec_busy_until;
    int nexec;
    int chief[64];                /* per training job: its chief's GPU once placed (+1), 0 */
};

/* The GPU ledger, training jobs and notebooks (policies that place them): no GPU claimed
 * beyond one whole, claims that add up to the GPU's total; a placed job has 1..max workers,
 * each on a whole GPU claimed for it, and keeps its chief's GPU; progress never exceeds the
 * iterations and a done job did them all; a placed notebook holds its share. */
static void audit_ledger(struct audit *a, const struct sim *s)
{
    for (int g = 0; g < sim_gpu_count(s); g++) {
        const struct sim_gpu *G = sim_gpu(s, g);
        int sum = 0;
        for (int c = 0; c < G->nclaims; c++)
            sum += G->claims[c].milli > 0 ? G->claims[c].milli : -100000;
        if (G->milli > 1000 || sum != G->milli) {
            fprintf(stderr, "GPU %d: %d thousandths claimed, claims add up to %d\n", g,
                    G->milli, sum);
            a->violations++;
        }
    }
    for (int j = 0; j < sim_job_count(s); j++) {
        const struct sim_job *J = sim_job(s, j);
        double done = sim_job_done(s, j);
        if (done < 0 || done > J->iterations * (1 + 1e-9) ||
            (J->state == SIM_JOB_DONE && done < J->iterations * (1 - 1e-9))) {
            fprintf(stderr, "job %d: %g of %g iterations done (state %d)\n", j, done,
                    J->iterations, (int)J->state);
            a->violations++;
        }
        if (J->state != SIM_JOB_STARTING && J->state != SIM_JOB_RUNNING &&
            J->state != SIM_JOB_RECONFIGURING)
            continue;
        if (J->nworkers < 1 || J->nworkers > J->max_workers) {
            fprintf(stderr, "job %d: %d workers (at most %d)\n", j, J->nworkers, J->max_workers);
            a->violations++;
            continue;
        }
        if (j < 64 && !a->chief[j])
            a->chief[j] = J->gpu[0] + 1;
        if (j < 64 && a->chief[j] != J->gpu[0] + 1) {
            fprintf(stderr, "job %d: its chief moved from GPU %d to %d\n", j, a->chief[j] - 1,
                    J->gpu[0]);
            a->violations++;
        }
        for (int w = 0; w < J->nworkers; w++) {
            const struct sim_gpu *G = sim_gpu(s, J->gpu[w]);
            bool held = false;
            for (int c = 0; c < G->nclaims; c++)
                held |= G->claims[c].kind == SIM_HOLD_WORKER && G->claims[c].id == j &&
                        G->claims[c].milli == 1000;
            if (!held) {
                fprintf(stderr, "job %d: worker %d's GPU %d is not claimed whole for it\n", j,
                        w, J->gpu[w]);
                a->violations++;
            }
        }
    }
    for (int n = 0; n < sim_notebook_count(s); n++) {
        const struct sim_notebook *nb = sim_notebook(s, n);
        if (nb->gpu < 0)
            continue;
        const struct sim_gpu *G = sim_gpu(s, nb->gpu);
        bool held = false;
        for (int c = 0; c < G->nclaims; c++)
            held |= G->claims[c].kind == SIM_HOLD_SHARE && G->claims[c].id == n &&
                    G->claims[c].milli == nb->milli;
        if (!held) {
            fprintf(stderr, "notebook %d: no share of %d on GPU %d\n", n, nb->milli, nb->gpu);
            a->violations++;
        }
    }
}

static void obs_event(void *ctx, const struct sim *s, int64_t t)
{
    struct audit *a = ctx;
    const struct sim_world *w = sim_world(s);
    for (int n = 0; n < w->nnodes; n++)  /* the node's ledger: never more than its cores */
        if (sim_node_milli_used(s, n) > w->nodes[n].cores * 1000 || sim_node_milli_used(s, n) < 0) {
            fprintf(stderr, "node %d: %d milli-cores allocated of %d cores\n", n,
                    sim_node_milli_used(s, n), w->nodes[n].cores);
            a->violations++;
        }
    audit_ledger(a, s);
    if (t < a->last_event) {
        fprintf(stderr, "time went backwards: %lld after %lld\n", (long long)t, (long long)a->last_event);
        a->violations++;
    }
    a->last_event = t;
}

/* Executors join during a run (autoscaling, pipeline policies): the audit follows. */
static void audit_execs(struct audit *a, const struct sim *s)
{
    int n = sim_exec_count(s);
    if (n <= a->nexec)
        return;
    int64_t *u = realloc(a->exec_busy_until, (size_t)n * sizeof *u);
    if (!u)
        exit(1);
    memset(u + a->nexec, 0, (size_t)(n - a->nexec) * sizeof *u);
    a->exec_busy_until = u;
    a->nexec = n;
}

static void obs_batch_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct audit *a = ctx;
    audit_execs(a, s);
    const struct sim_model *m = sim_model(s, b->model);
    const struct sim_exec *x = sim_exec(s, b->exec);
    if (b->size < 1 || b->size > m->max_batch) {
        fprintf(stderr, "batch of %d for max batch %d\n", b->size, m->max_batch);
        a->violations++;
    }
    /* (a CPU executor's batch is re-timed when its cores change, and batches on lanes run
     * side by side: the engine checks those; here, no more than the lanes at once) */
    if (x->nrunning > x->lanes || x->nrunning < 1) {
        fprintf(stderr, "executor %d: %d batches running on %d lanes\n", b->exec, x->nrunning,
                x->lanes);
        a->violations++;
    }
    if (!x->cpu && x->lanes == 1 && b->t_start < a->exec_busy_until[b->exec]) {
        fprintf(stderr, "executor %d: batch starts %lld before the previous ends %lld\n",
                b->exec, (long long)b->t_start, (long long)a->exec_busy_until[b->exec]);
        a->violations++;
    }
    a->exec_busy_until[b->exec] = b->t_finish;
    double need = x->resident_mb + m->cfg->dynamic_mb * b->size / m->max_batch;
    if (x->memory_mb > 0 && need > x->memory_mb) {
        fprintf(stderr, "batch needs %g MB of %g\n", need, x->memory_mb);
        a->violations++;
    }
    int n = 0;
    for (const struct sim_request *r = b->reqs; r; r = r->next, n++)
        if (r->model != b->model) {
            fprintf(stderr, "request of model %d in a batch of model %d\n", r->model, b->model);
            a->violations++;
        }
    if (n != b->size) {
        fprintf(stderr, "batch says %d requests, holds %d\n", b->size, n);
        a->violations++;
    }
}

static void obs_batch_preempted(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct audit *a = ctx;
    if (sim_exec(s, b->exec)->lanes == 1 && a->exec_busy_until[b->exec] != b->t_finish) {
        fprintf(stderr, "executor %d: preempted batch is not the one running\n", b->exec);
        a->violations++;
    }
    a->exec_busy_until[b->exec] = sim_now(s);     /* the rest of it never runs */
}

static void obs_request_arrive(void *ctx, const struct sim *s, const struct sim_request *r)
{
    struct audit *a = ctx;
    (void)s;
    if (r->id >= a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1 << 16;
        while (cap <= r->id)
            cap *= 2;
        a->state = realloc(a->state, cap);
        a->deadline = realloc(a->deadline, cap * sizeof *a->deadline);
        if (!a->state || !a->deadline)
            exit(1);
        memset(a->state + a->cap, 0, cap - a->cap);
        a->cap = cap;
    }
    if (a->state[r->id]) {
        fprintf(stderr, "request id %llu arrived twice\n", (unsigned long long)r->id);
        a->violations++;
    }
    a->state[r->id] = 1;
    a->deadline[r->id] = r->deadline;
    a->entries[r->model & 63]++;
    a->arrived++;
}

/* A stage of an application's request completed and the next one begins: the request is in
 * flight, its previous batch has finished, and its deadline is the one it arrived with. */
static void obs_request_stage(void *ctx, const struct sim *s, const struct sim_request *r)
{
    struct audit *a = ctx;
    if (r->id >= a->cap || a->state[r->id] != 1 || r->t_finish > sim_now(s) ||
        r->t_stage < r->t_finish || r->deadline != a->deadline[r->id] ||
        r->deadline <= r->t_arrival) {
        fprintf(stderr, "request %llu entered stage %d out of order (finish %lld, now %lld)\n",
                (unsigned long long)r->id, r->stage, (long long)r->t_finish,
                (long long)sim_now(s));
        a->violations++;
    }
    a->entries[r->model & 63]++;
    a->stages++;
}

static void obs_request_end(void *ctx, const struct sim *s, const struct sim_request *r)
{
    struct audit *a = ctx;
    (void)s;
    if (r->id >= a->cap || a->state[r->id] != 1) {
        fprintf(stderr, "request %llu ended %s\n", (unsigned long long)r->id,
                r->id < a->cap && a->state[r->id] == 2 ? "twice" : "without arriving");
        a->violations++;
        return;
    }
    a->state[r->id] = 2;
    a->ended_count++;
    if (r->outcome == SIM_REQ_ON_TIME && r->t_finish > r->deadline) {
        fprintf(stderr, "request %llu on time but finished after its deadline\n", (unsigned long long)r->id);
        a->violations++;
    }
}

static const char *const conformance_workloads[] = {
    /* light load, Poisson */
    "\"workload\":{\"rate_rps\":300,\"arrival\":{\"kind\":\"poisson\"}}",
    /* overload, bursty, Zipf popularity, network jitter, 2 frontends */
    "\"workload\":{\"rate_rps\":6000,\"arrival\":{\"kind\":\"gamma\",\"shape\":0.2},"
    "\"popularity\":{\"kind\":\"zipf\",\"s\":1.1}},\"frontends\":2,"
    "\"network\":{\"ctrl_us\":50,\"data_us_per_request\":20,\"resp_us\":50,"
    "\"jitter\":{\"kind\":\"exponential\",\"mean_us\":30}}",
    /* uniform arrivals, segments with a burst and a silence */
    "\"workload\":{\"rate_rps\":1500,\"arrival\":{\"kind\":\"uniform\"},\"segments\":["
    "{\"duration_s\":1,\"scale\":0.5},{\"duration_s\":1,\"scale\":4},{\"duration_s\":0.5,\"scale\":0},"
    "{\"scale\":1}]}",
};

/* An application of four DNNs (a shared entry, an ingress aggregator D) for every policy: the
 * pipeline policies run only these, the others run them besides the model workloads. */
static const char *const conformance_app =
    "\"cluster\":{\"gpus\":4,\"max_gpus\":64},\"models\":["
    "{\"name\":\"A\",\"slo_ms\":300,\"max_batch\":16,\"profile\":{\"form\":\"quadratic\","
    "\"a_ms\":0.05,\"b_ms\":2,\"c_ms\":4}},"
    "{\"name\":\"B\",\"slo_ms\":300,\"max_batch\":16,\"profile\":{\"form\":\"quadratic\","
    "\"a_ms\":0.02,\"b_ms\":4,\"c_ms\":3}},"
    "{\"name\":\"C\",\"slo_ms\":300,\"max_batch\":16,\"profile\":{\"form\":\"quadratic\","
    "\"a_ms\":0.1,\"b_ms\":6,\"c_ms\":5}},"
    "{\"name\":\"D\",\"slo_ms\":300,\"max_batch\":16,\"profile\":{\"form\":\"linear\","
    "\"alpha_ms\":1,\"beta_ms\":2}}],"
    "\"application\":{\"name\":\"conf\",\"paths\":["
    "{\"stages\":[\"A\",\"B\",\"D\"],\"sla_ms\":120},{\"stages\":[\"A\",\"C\",\"D\"],\"sla_ms\":200},"
    "{\"stages\":[\"B\",\"D\"],\"sla_ms\":90,\"weight\":2}]}";

static const char *const conformance_app_workloads[] = {
    "\"workload\":{\"rate_rps\":150}",
    "\"workload\":{\"rate_rps\":300,\"arrival\":{\"kind\":\"gamma\",\"shape\":0.3},\"segments\":["
    "{\"duration_s\":1.5,\"scale\":0.3},{\"duration_s\":1.5,\"scale\":3},{\"duration_s\":0.5,\"scale\":0},"
    "{\"scale\":1}]},\"network\":{\"ctrl_us\":50,\"resp_us\":50,"
    "\"jitter\":{\"kind\":\"exponential\",\"mean_us\":30}}",
};

/* Conservation across stages (no warm-up: every request counts): each model's offered count
 * is the requests the observer saw enter its queue; the paths' requests are the arrivals; and
 * a request that finished (on time or late) went through every stage of its path, one that
 * was dropped through at most all of them. */
static void check_stage_conservation(const char *policy, size_t w, struct sim *s,
                                     const struct audit *a)
{
    struct sim_result *r;
    REQUIRE_OK(sim_result_collect(s, &r));
    uint64_t entries = 0, offered = 0, least = 0, most = 0;
    for (int m = 0; m < r->nmodels; m++) {
        CHECK(r->models[m].offered == a->entries[m], "policy %s, workload %zu: model %s "
              "offered %llu, entered %llu", policy, w, r->models[m].name,
              (unsigned long long)r->models[m].offered, (unsigned long long)a->entries[m]);
        entries += a->entries[m];
    }
    for (int p = 0; p < r->npaths; p++) {
        const struct sim_path_result *pr = &r->paths[p];
        uint64_t len = 1;
        for (const char *c = pr->stages; *c; c++)
            len += *c == '>';
        offered += pr->offered;
        least += (pr->on_time + pr->late) * len + pr->dropped;
        most += pr->offered * len;
        CHECK(pr->on_time + pr->late + pr->dropped == pr->offered, "policy %s, path %s: "
              "outcomes do not add up", policy, pr->name);
    }
    CHECK(offered == a->arrived, "policy %s, workload %zu: paths offered %llu, %llu arrived",
          policy, w, (unsigned long long)offered, (unsigned long long)a->arrived);
    CHECK(least <= entries && entries <= most, "policy %s, workload %zu: %llu stage entries, "
          "paths allow %llu..%llu", policy, w, (unsigned long long)entries,
          (unsigned long long)least, (unsigned long long)most);
    sim_result_destroy(r);
}

/* Every policy at its defaults, then every preset that is not a policy's default (those
 * equal the defaults: presets_are_well_formed), on the model workloads. */
/* A model with a GPU (1080ti) and a CPU (cpu: 10x slower on one core) linear profile. */
#define CPU_MODEL(name, a, b)                                                                  \
    "{\"name\":\"" name "\",\"slo_ms\":200,\"profiles\":{\"1080ti\":{\"form\":\"linear\","    \
    "\"alpha_ms\":" #a ",\"beta_ms\":" #b "},\"cpu\":{\"form\":\"linear\",\"alpha_ms\":" #a "0,"  \
    "\"beta_ms\":" #b "0}}}"

static bool takes_param(const struct policy_ops *ops, const char *key)
{
    return sim_params_find(ops->params, key) != NULL;
}

/* One conformance run of `text` (policy ops, workload w; app: an application's), audited. */
static void conform_one(const struct policy_ops *ops, size_t w, bool app, const char *text)
{
    struct sim_config *cfg;
    struct sim *s;
    REQUIRE_OK(sim_config_from_text(text, "conformance", ".", &cfg));
    REQUIRE_OK(sim_config_engine(cfg, 1.0, NULL, &s, NULL));
    struct audit a = {.last_event = 0};
    audit_execs(&a, s);
    struct sim_observer obs = {.ctx = &a, .batch_start = obs_batch_start,
                               .batch_preempted = obs_batch_preempted,
                               .request_arrive = obs_request_arrive,
                               .request_stage = obs_request_stage,
                               .request_end = obs_request_end, .event = obs_event};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    CHECK(a.violations == 0, "policy %s, workload %zu: %llu violations", ops->name, w,
          (unsigned long long)a.violations);
    /* every request that arrived ended exactly once (arrived = ended + in flight,
     * and nothing is in flight after the drain) */
    CHECK(a.ended_count == a.arrived && a.arrived > 100,
          "policy %s, workload %zu: %llu ended of %llu arrived", ops->name, w,
          (unsigned long long)a.ended_count, (unsigned long long)a.arrived);
    CHECK(!app || a.stages > a.arrived / 2, "policy %s, workload %zu: %llu stage "
          "transitions for %llu requests", ops->name, w, (unsigned long long)a.stages,
          (unsigned long long)a.arrived);
    for (size_t i = 0; i < a.cap; i++)
        if (a.state[i] == 1) {
            CHECK(0, "policy %s: request %zu never ended", ops->name, i);
            break;
        }
    if (app)
        check_stage_conservation(ops->name, w, s, &a);
    for (int j = 0; j < sim_job_count(s); j++)  /* (jobs end the run: every one is done) */
        CHECK(sim_job(s, j)->state == SIM_JOB_DONE, "policy %s, workload %zu: job %d not done",
              ops->name, w, j);
    free(a.state);
    free(a.deadline);
    free(a.exec_busy_until);
    sim_destroy(s);
    sim_config_destroy(cfg);
}

/* The parameters a policy cannot run without in the conformance workloads: a short period
 * where it has one, rrl-oracle's table (two rates, four GPU configurations). */
static const char *needed_params(const struct policy_ops *ops)
{
    if (takes_param(ops, "period_s"))
        return ",\"params\":{\"period_s\":0.25}";
    if (strcmp(ops->name, "rrl-oracle") == 0)
        return ",\"params\":{\"oracle_table\":{\"format\":\"rrl_table/1\",\"device\":\"gpu\","
               "\"objective\":\"latency\",\"grid\":[[1,8],[0,5],[1]],\"rates\":[10,1000],"
               "\"cost\":[[4,3,2,1],[1,2,null,4]]}}";
    return "";
}

/* LLM policies' worlds: two LLM models on 4 H100s, one timed by a linear profile and one by
 * the roofline, small KV pools; the token lengths and the arrivals of
 * three workloads (light; overloaded, bursty, with jitter and two frontends; uniform with a
 * burst and a silence). The engine checks its block accounting at every iteration. */
#define LLM_MODELS                                                                         \
    "\"models\":[{\"name\":\"chat\",\"llm\":{\"model\":\"tiny\",\"profile\":{\"base_us\":"         \
    "2000,\"token_us\":20,\"pair_ns\":1},\"kv_blocks\":300,\"ttft_slo_ms\":200,"            \
    "\"tpot_slo_ms\":10}},{\"name\":\"code\",\"llm\":{\"model\":\"llama-3-8b\","              \
    "\"kv_blocks\":600,\"ttft_slo_ms\":500,\"tpot_slo_ms\":50}}]"
#define LLM_TOKENS                                                                         \
    "\"tokens\":{\"chat\":{\"prompt\":{\"mean\":300,\"cv\":1,\"max\":2000},\"output\":"      \
    "{\"mean\":100,\"cv\":1,\"max\":1000}},\"code\":{\"prompt\":{\"mean\":1500,\"cv\":0.5,"  \
    "\"max\":4000},\"output\":{\"mean\":200,\"cv\":0.5,\"max\":1000}}}"
static const char *const conformance_llm_workloads[] = {
    "\"workload\":{\"rate_rps\":40,\"arrival\":{\"kind\":\"poisson\"}," LLM_TOKENS "}",
    "\"workload\":{\"rate_rps\":400,\"arrival\":{\"kind\":\"gamma\",\"shape\":0.2},"
    LLM_TOKENS "},\"frontends\":2,\"network\":{\"ctrl_us\":50,\"data_us_per_request\":20,"
    "\"resp_us\":50,\"jitter\":{\"kind\":\"exponential\",\"mean_us\":30}}",
    "\"workload\":{\"rate_rps\":100,\"arrival\":{\"kind\":\"uniform\"},\"segments\":["
    "{\"duration_s\":1,\"scale\":0.5},{\"duration_s\":1,\"scale\":4},{\"duration_s\":0.5,"
    "\"scale\":0},{\"scale\":1}]," LLM_TOKENS "}",
};

static void conformance_llm(const struct policy_ops *ops, const char *pol)
{
    size_t n = sizeof conformance_llm_workloads / sizeof *conformance_llm_workloads;
    for (size_t w = 0; w < n; w++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":4,\"keep_warmup\":true,"
                 "\"warmup_s\":0.5,\"cluster\":{\"gpus\":4,\"gpu_kind\":\"h100\"}," LLM_MODELS
                 ",%s,\"policy\":{\"name\":%s},\"metrics\":{\"sample_period_s\":0.5}}",
                 w + 1, conformance_llm_workloads[w], pol);
        conform_one(ops, w, false, text);
    }
    if (ops->dynamic_execs) {   /* replicas that come and go: the HPA through a burst */
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"name\":\"conf\",\"seed\":9,\"duration_s\":4,\"keep_warmup\":true,"
                 "\"warmup_s\":0.5,\"cluster\":{\"gpus\":4,\"max_gpus\":10,\"provision_s\":0.3,"
                 "\"gpu_kind\":\"h100\"}," LLM_MODELS ",%s,\"policy\":{\"name\":%s},"
                 "\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":30,\"sync_s\":0.5,"
                 "\"window_s\":0.5,\"stabilization_s\":0.5},\"metrics\":{\"sample_period_s\":0.5}}",
                 conformance_llm_workloads[2], pol);
        conform_one(ops, n, false, text);
    }
}

/* The composite policy's worlds: two DNN models and two LLM models on one cluster, each
 * kind served by its own part (symphony and vllm on 3 + 3 GPUs; fifo and distserve on 2 + 4),
 * under the LLM workloads' three arrival patterns with the DNN models' share on top (20 each
 * to the LLM models' 1). Besides the conformance invariants: every batch of a DNN model ran on
 * the DNN part's GPUs and every LLM iteration on the LLM part's. */
#define POOLS_MODELS                                                                       \
    "\"models\":[{\"name\":\"a\",\"slo_ms\":60,\"alpha_ms\":0.5,\"beta_ms\":2,"            \
    "\"max_batch\":16,\"share\":20},{\"name\":\"b\",\"slo_ms\":40,\"alpha_ms\":0.3,"        \
    "\"beta_ms\":1,\"max_batch\":16,\"share\":20},{\"name\":\"chat\",\"share\":1,\"llm\":"  \
    "{\"model\":\"tiny\",\"profile\":{\"base_us\":2000,\"token_us\":20,\"pair_ns\":1},"        \
    "\"kv_blocks\":300,\"ttft_slo_ms\":200,\"tpot_slo_ms\":10}},{\"name\":\"code\","          \
    "\"share\":1,\"llm\":{\"model\":\"llama-3-8b\",\"kv_blocks\":600,\"ttft_slo_ms\":500,"   \
    "\"tpot_slo_ms\":50}}]"
struct pools_seen {
    int dnn_gpus;
    unsigned long wrong;
};
static void pools_batch(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct pools_seen *v = ctx;
    v->wrong += sim_model_llm(s, b->model) != NULL || b->exec >= v->dnn_gpus;
}
static void pools_iteration(void *ctx, const struct sim *s, int e, const struct sim_llm_seq *q,
                            int n)
{
    (void)s, (void)q, (void)n;
    struct pools_seen *v = ctx;
    v->wrong += e < v->dnn_gpus;
}

static void conformance_pools(const struct policy_ops *ops)
{
    static const struct {
        const char *dnn, *llm;
        int dnn_gpus, llm_gpus;
    } pairs[] = {{"symphony", "vllm", 3, 3}, {"fifo", "distserve", 2, 4}};
    size_t nw = sizeof conformance_llm_workloads / sizeof *conformance_llm_workloads;
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++)
        for (size_t w = 0; w < nw; w++) {
            char text[4096], wl[1024];
            /* the LLM workload with the DNN models' rate added: 21 shares of 22 more */
            snprintf(wl, sizeof wl, "%s", conformance_llm_workloads[w]);
            char *rate = strstr(wl, "\"rate_rps\":");
            int r = rate ? atoi(rate + 11) : 0;
            char head[1024];
            snprintf(head, sizeof head, "%.*s\"rate_rps\":%d,\"popularity\":{\"kind\":"
                     "\"explicit\"}%s", rate ? (int)(rate - wl) : 0, wl, r * 21,
                     rate ? strchr(rate, ',') : "");
            snprintf(text, sizeof text,
                     "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":4,\"keep_warmup\":true,"
                     "\"warmup_s\":0.5,\"cluster\":{\"gpus\":%d,\"gpu_kind\":\"h100\"},"
                     POOLS_MODELS ",%s,\"policy\":{\"name\":\"pools\",\"params\":{\"pools\":["
                     "{\"policy\":\"%s\",\"models\":[\"a\",\"b\"],\"gpus\":%d},"
                     "{\"policy\":\"%s\",\"models\":[\"chat\",\"code\"],\"gpus\":%d}]}},"
                     "\"metrics\":{\"sample_period_s\":0.5}}",
                     w + 1, pairs[k].dnn_gpus + pairs[k].llm_gpus, head, pairs[k].dnn,
                     pairs[k].dnn_gpus, pairs[k].llm, pairs[k].llm_gpus);
            conform_one(ops, w, false, text);
            struct sim_config *cfg;
            struct sim *s;
            REQUIRE_OK(sim_config_from_text(text, "pools", ".", &cfg));
            REQUIRE_OK(sim_config_engine(cfg, 1.0, NULL, &s, NULL));
            struct pools_seen v = {.dnn_gpus = pairs[k].dnn_gpus};
            struct sim_observer obs = {.ctx = &v, .batch_start = pools_batch,
                                       .llm_iteration = pools_iteration};
            sim_set_observer(s, &obs);
            REQUIRE_OK(sim_run(s));
            struct sim_result *res;
            REQUIRE_OK(sim_result_collect(s, &res));
            CHECK(v.wrong == 0 && res->models[0].on_time + res->models[0].late > 100 &&
                  res->models[2].llm && res->models[2].llm->tokens_out > 100,
                  "pools %s + %s, workload %zu: %lu batches or iterations on the other part's "
                  "GPUs; %llu of model a served, %llu tokens of chat", pairs[k].dnn,
                  pairs[k].llm, w, v.wrong,
                  (unsigned long long)(res->models[0].on_time + res->models[0].late),
                  res->models[2].llm ? (unsigned long long)res->models[2].llm->tokens_out : 0ULL);
            sim_result_destroy(res);
            sim_destroy(s);
            sim_config_destroy(cfg);
        }
}

static void conformance_every_policy(void)
{
    size_t nw = sizeof conformance_workloads / sizeof *conformance_workloads;
    size_t na = sizeof conformance_app_workloads / sizeof *conformance_app_workloads;
    for (int p = 0; p < policy_count() + policy_preset_count(); p++) {
        const struct policy_preset *ps = p < policy_count() ? NULL : policy_preset_at(p - policy_count());
        if (ps && ps->is_default)
            continue;
        const struct policy_ops *ops = ps ? policy_find(ps->policy) : policy_at(p);
        char pol[160];
        snprintf(pol, sizeof pol, "\"%s\"%s%s%s", ops->name, ps ? ",\"preset\":\"" : "",
                 ps ? ps->name : "", ps ? "\"" : "");
        if (ops->llm_only) {
            conformance_llm(ops, pol);
            continue;
        }
        if (ops->mixed_models) {
            conformance_pools(ops);
            continue;
        }
        for (size_t w = ops->applications_only ? nw : 0;
             w < (ps || ops->needs_no_gpus ? nw : nw + na); w++) {
            char text[4096];
            bool app = w >= nw;
            if (app)
                snprintf(text, sizeof text,
                         "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":6,\"keep_warmup\":true,\"warmup_s\":0,"
                         "%s,%s,\"policy\":{\"name\":\"%s\"%s},"
                         "\"metrics\":{\"sample_period_s\":0.5}}",
                         w + 1, conformance_app, conformance_app_workloads[w - nw], ops->name,
                         ops->applications_only
                             ? ",\"params\":{\"interval_s\":1,\"cold_start_s\":0.5}" : "");
            else if (ops->needs_no_gpus)   /* CPU-executor policies: nodes with cores */
                snprintf(text, sizeof text,
                     "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":4,\"keep_warmup\":true,\"warmup_s\":0.5,"
                     "\"cluster\":{\"nodes\":[{\"cores\":4,\"gpus\":1},{\"cores\":3,\"gpus\":1}]},"
                     "\"models\":[" CPU_MODEL("a", 2, 5) "," CPU_MODEL("b", 4, 8) ","
                     CPU_MODEL("c", 1, 3) "],%s,\"policy\":{\"name\":%s%s},"
                     "\"metrics\":{\"sample_period_s\":0.5}}",
                     w + 1, conformance_workloads[w], pol, needed_params(ops));
            else {   /* presets that need the HPA (dynamoml's) get it: pods come and go */
                bool hpa = ps && strstr(ps->params, "\"autoscaling\": true");
                snprintf(text, sizeof text,
                     "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":4,\"keep_warmup\":true,\"warmup_s\":0.5,"
                     "\"cluster\":{\"gpus\":4,\"gpu_memory_mb\":11264%s},"
                     "\"models\":[{\"zoo\":\"symphony_table1_1080ti\",\"select\":\"all\"}],"
                     "%s,\"policy\":{\"name\":%s},\"metrics\":{\"sample_period_s\":0.5}%s}",
                     w + 1, hpa ? ",\"max_gpus\":8,\"provision_s\":0.5" : "",
                     conformance_workloads[w], pol,
                     hpa ? ",\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":150,"
                           "\"sync_s\":1,\"stabilization_s\":1}" : "");
            }
            conform_one(ops, w, app, text);
        }
    }
    /* policies that place training jobs and notebooks (each preset): a shared cluster of two
     * nodes, notebooks on shares, two waves of jobs and closed-loop clients whose peak wants
     * more pods than the GPUs left (so HPA presets preempt workers); the run ends with the
     * last job, and the ledger audit runs at every event */
    for (int p = 0; p < policy_count() + policy_preset_count(); p++) {
        const struct policy_preset *ps = p < policy_count() ? NULL : policy_preset_at(p - policy_count());
        const struct policy_ops *ops = ps ? policy_find(ps->policy) : policy_at(p);
        if (!ops->on_job_arrive || (ps && ps->is_default))
            continue;
        bool hpa = ps && strstr(ps->params, "\"autoscaling\": true");
        for (size_t w = 0; w < 2; w++) {
            char text[4096];
            snprintf(text, sizeof text,
                     "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":600,\"keep_warmup\":true,\"warmup_s\":0,"
                     "\"cluster\":{\"nodes\":[{\"cores\":8,\"gpus\":4},{\"cores\":8,\"gpus\":4}],"
                     "\"executors\":1,\"max_gpus\":6,\"provision_s\":2},"
                     "\"models\":[{\"name\":\"r\",\"alpha_ms\":0,\"beta_ms\":15,\"slo_ms\":128,"
                     "\"max_batch\":1}],\"network\":{\"ctrl_us\":0,\"data_us_per_request\":0,"
                     "\"resp_us\":0},\"workload\":{\"clients\":{\"step_s\":10,"
                     "\"counts\":[5,40,80,20,5],\"think_s\":0.5,\"after\":\"hold\"}},"
                     "\"policy\":{\"name\":\"%s\"%s%s%s},\"metrics\":{\"sample_period_s\":1},"
                     "\"notebooks\":{\"count\":2,\"request\":0.25,\"limit\":1,\"idle_s\":3,"
                     "\"burst_s\":1},\"jobs\":{\"end_when_done\":true,\"kinds\":[{\"name\":\"a\","
                     "\"iterations\":400,\"iter_ms\":50,\"speedup\":[1,1.8,2.5,3],"
                     "\"cross_node\":2,\"start_s\":2,\"reconfig_s\":1}],\"arrivals\":["
                     "{\"kind\":\"a\",\"at_s\":0,\"count\":3,\"init_workers\":2,\"max_workers\":4},"
                     "{\"kind\":\"a\",\"at_s\":%d,\"count\":3,\"init_workers\":%d,"
                     "\"max_workers\":4}]}%s}",
                     w + 1, ops->name, ps ? ",\"preset\":\"" : "", ps ? ps->name : "",
                     ps ? "\"" : "", w ? 5 : 10, w ? 1 : 2,
                     hpa ? ",\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":20,\"sync_s\":2,"
                           "\"window_s\":4,\"stabilization_s\":4}" : "");
            conform_one(ops, w, false, text);
        }
    }
    /* policies that fill lanes: the GPU workloads again on GPUs with three lanes under the
     * parametric interference model */
    for (int p = 0; p < policy_count(); p++) {
        const struct policy_ops *ops = policy_at(p);
        for (size_t w = 0; ops->shared_devices && w < nw; w++) {
            char text[4096];
            snprintf(text, sizeof text,
                     "{\"name\":\"conf\",\"seed\":%zu,\"duration_s\":4,\"keep_warmup\":true,\"warmup_s\":0.5,"
                     "\"cluster\":{\"gpus\":4,\"gpu_memory_mb\":11264,\"lanes\":3,"
                     "\"interference\":\"parametric\"},"
                     "\"models\":[{\"zoo\":\"symphony_table1_1080ti\",\"select\":\"all\"}],"
                     "%s,\"policy\":{\"name\":\"%s\"%s},\"metrics\":{\"sample_period_s\":0.5}}",
                     w + 1, conformance_workloads[w], ops->name, needed_params(ops));
            conform_one(ops, w, false, text);
        }
    }
}

/* Every model with a configured rate is served by every policy that plans for GPUs (each
 * preset; Nexus from either initial rate; DynamoML's HPA presets with the HPA): the Symphony
 * paper's mixed 1080Ti zoo, 35 models on 64 GPUs at 400 req/s in all (about 11 req/s each;
 * NASNetMobile's batch of one takes more than half its SLO with Nexus's profile margin, which
 * once left it no backend), 8 s from the start; the pipeline planners (FA2 and its
 * baselines) every stage of the conformance application. A model of which no request ended
 * on time or late had no backend. */
static void every_model_gets_a_backend(void)
{
    int runs = 0;
    for (int p = 0; p < policy_count() + policy_preset_count(); p++) {
        const struct policy_preset *ps = p < policy_count() ? NULL : policy_preset_at(p - policy_count());
        const struct policy_ops *ops = ps ? policy_find(ps->policy) : policy_at(p);
        if ((ps && ps->is_default) || ops->needs_no_gpus || ops->llm_only || ops->mixed_models ||
            takes_param(ops, "oracle_table"))
            continue;                   /* (an LLM policy: conformance_every_policy) */
        bool nexus = strcmp(ops->name, "nexus") == 0;
        bool hpa = ps && strstr(ps->params, "\"autoscaling\": true");
        for (int v = 0; v < (nexus ? 2 : 1); v++) {
            char text[4096];
            if (ops->applications_only)   /* pipelines: every stage of the conformance app */
                snprintf(text, sizeof text,
                         "{\"name\":\"backends\",\"seed\":3,\"duration_s\":8,\"keep_warmup\":true,"
                         "\"warmup_s\":0,%s,\"workload\":{\"rate_rps\":40},\"policy\":{\"name\":"
                         "\"%s\",\"params\":{\"interval_s\":1,\"cold_start_s\":0.5}}}",
                         conformance_app, ops->name);
            else
                snprintf(text, sizeof text,
                     "{\"name\":\"backends\",\"seed\":3,\"duration_s\":8,\"keep_warmup\":true,"
                     "\"warmup_s\":0,\"cluster\":{\"gpus\":64,\"gpu_memory_mb\":11264%s},"
                     "\"models\":[{\"zoo\":\"symphony_1080ti\",\"select\":\"all\"}],"
                     "\"workload\":{\"rate_rps\":400},\"policy\":{\"name\":\"%s\"%s%s%s%s%s}%s}",
                     hpa ? ",\"max_gpus\":80,\"provision_s\":0.5" : "",
                     ops->name, ps ? ",\"preset\":\"" : "", ps ? ps->name : "", ps ? "\"" : "",
                     v ? ",\"params\":{\"initial_rate\":\"configured\"}" : "",
                     !v && !ps ? needed_params(ops) : "",
                     hpa ? ",\"autoscale\":{\"kind\":\"hpa\",\"target_rps\":150,"
                           "\"sync_s\":1,\"stabilization_s\":1}" : "");
            struct sim_config *cfg;
            struct sim_result *r = NULL;
            REQUIRE_OK(sim_config_from_text(text, "backends", ".", &cfg));
            REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
            for (int m = 0; m < r->nmodels; m++) {
                const struct sim_model_result *o = &r->models[m];
                CHECK(o->offered == 0 || o->on_time + o->late > 0,
                      "policy %s%s%s: model %s got no backend (%llu offered, all dropped)",
                      ops->name, ps ? " preset " : "", ps ? ps->name : v ? " initial_rate configured" : "",
                      o->name, (unsigned long long)o->offered);
            }
            sim_result_destroy(r);
            sim_config_destroy(cfg);
            runs++;
            printf("  %s%s%s%s\n", ops->name, ps ? " preset " : "", ps ? ps->name : "",
                   v ? " (initial_rate configured)" : "");
        }
    }
    CHECK(runs >= 15, "only %d policies and presets checked", runs);
}

/* The smallest policy sim/sim_policy.h allows: no state, no init, no params; each request
 * goes at once, alone, to the first executor with a free lane, and a finished batch takes the
 * oldest waiting one of any model. */
static void bare_serve(struct sim *s)
{
    for (int e = sim_exec_next_free(s, 0); e >= 0; e = sim_exec_next_free(s, e + 1)) {
        int best = -1;
        for (int m = 0; m < sim_model_count(s); m++)
            if (sim_queue_len(s, m) &&
                (best < 0 || sim_queue_at(s, m, 0)->t_arrival < sim_queue_at(s, best, 0)->t_arrival))
                best = m;
        if (best < 0)
            return;
        sim_dispatch(s, e, best, 1, sim_now(s));
    }
}
static void bare_on_request(struct sim *s, void *state, int m, struct sim_request *r)
{
    (void)state, (void)m, (void)r;
    bare_serve(s);
}
static void bare_on_batch_done(struct sim *s, void *state, const struct sim_batch *b)
{
    (void)state, (void)b;
    bare_serve(s);
}
static const struct policy_ops bare_policy = {
    .name = "bare", .summary = "test: first free executor, batch 1",
    .on_request = bare_on_request, .on_batch_done = bare_on_batch_done};

/* A policy is its table: one with state_size 0 and no init runs (issue 53), and serves the
 * load it is given (an M/D/2 queue at 40% utilisation: every request served, none late). */
static void bare_policy_runs(void)
{
    struct sim_config *cfg;
    struct sim_result *r = NULL;
    REQUIRE_OK(sim_config_from_text(
        "{\"name\":\"bare\",\"duration_s\":20,\"warmup_s\":1,\"cluster\":{\"gpus\":2},"
        "\"models\":[{\"name\":\"m\",\"alpha_ms\":0,\"beta_ms\":4,\"slo_ms\":100,\"max_batch\":1}],"
        "\"workload\":{\"rate_rps\":200},\"policy\":{\"name\":\"fifo\"}}", "bare", ".", &cfg));
    cfg->world.policy = &bare_policy;
    cfg->world.policy_params = NULL;
    REQUIRE_OK(sim_run_once(cfg, 1.0, NULL, &r));
    const struct sim_model_result *x = &r->models[0];
    CHECK(!strcmp(r->policy, "bare") && x->offered > 3000 && x->on_time == x->offered &&
              x->mean_batch == 1.0,
          "policy %s: %llu offered, %llu on time, mean batch %g", r->policy,
          (unsigned long long)x->offered, (unsigned long long)x->on_time, x->mean_batch);
    sim_result_destroy(r);
    sim_config_destroy(cfg);
}

static void registry_is_well_formed(void)
{
    CHECK(policy_count() >= 2, "only %d policies", policy_count());
    for (int i = 0; i < policy_count(); i++) {
        const struct policy_ops *p = policy_at(i);
        CHECK(p->name && p->name[0], "policy %d: no name (sim/sim_policy.h: required)", i);
        CHECK(p->summary && p->summary[0], "policy %s: no summary (sim/sim_policy.h: required)",
              p->name ? p->name : "?");
        CHECK(p->on_request, "policy %s: no on_request (sim/sim_policy.h: required)",
              p->name ? p->name : "?");
        CHECK(p->init || sim_params_count(p->params) == 0,
              "policy %s: params but no init to read them", p->name ? p->name : "?");
        char why[256];                  /* its params' table: docs, defaults, no key twice */
        CHECK(sim_params_check(p->params, why, sizeof why) == 0, "policy %s: params: %s",
              p->name, why);
        CHECK(policy_find(p->name) == p, "policy_find(%s) does not return it", p->name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(policy_at(j)->name, p->name) != 0, "duplicate name %s", p->name);
    }
    CHECK(policy_find("no-such-policy") == NULL, "found a policy that does not exist");
}

/* Each preset names a policy and parses as its params; a policy has at most one default
 * preset and it gives the same run as no preset at all (so the table documents the real
 * defaults); params given beside a preset override its keys; an unknown preset is an error
 * that lists the known ones. */
static struct sim_result *run_text(const char *text)
{
    return test_run_text(text, "presets");
}

#define PRESET_RUN(policy) \
    "{\"name\":\"p\",\"seed\":3,\"duration_s\":3,\"keep_warmup\":true,\"warmup_s\":0.5,\"cluster\":{\"gpus\":4," \
    "\"gpu_memory_mb\":11264},\"models\":[{\"zoo\":\"symphony_table1_1080ti\",\"select\":\"all\"}]," \
    "\"workload\":{\"rate_rps\":2500,\"arrival\":{\"kind\":\"gamma\",\"shape\":0.3}}," \
    "\"metrics\":{\"sample_period_s\":0},\"policy\":" policy "}"

#define PRESET_RUN_LLM(policy) \
    "{\"name\":\"p\",\"seed\":3,\"duration_s\":3,\"keep_warmup\":true,\"warmup_s\":0.5," \
    "\"cluster\":{\"gpus\":4,\"gpu_kind\":\"h100\"}," LLM_MODELS "," \
    "\"workload\":{\"rate_rps\":600,\"arrival\":{\"kind\":\"gamma\",\"shape\":0.3}," \
    LLM_TOKENS "},\"metrics\":{\"sample_period_s\":0},\"policy\":" policy "}"

static void presets_are_well_formed(void)
{
    CHECK(policy_preset_count() >= 6, "only %d presets", policy_preset_count());
    for (int i = 0; i < policy_preset_count(); i++) {
        const struct policy_preset *ps = policy_preset_at(i);
        const struct policy_ops *ops = policy_find(ps->policy);
        CHECK(ops != NULL, "preset %s: no policy %s", ps->name, ps->policy);
        CHECK(ps->summary && ps->source && strlen(ps->source) > 10, "preset %s/%s: no source",
              ps->policy, ps->name);
        cJSON *j = cJSON_Parse(ps->params);
        CHECK(cJSON_IsObject(j) && ops && policy_check_params(ops, j) == 0,
              "preset %s/%s: params do not parse as the policy's: %s", ps->policy, ps->name,
              sim_err_msg());
        cJSON_Delete(j);
        for (int k = 0; k < i; k++) {
            const struct policy_preset *o = policy_preset_at(k);
            CHECK(strcmp(o->policy, ps->policy) || strcmp(o->name, ps->name),
                  "preset %s/%s twice", ps->policy, ps->name);
            CHECK(strcmp(o->policy, ps->policy) || !o->is_default || !ps->is_default,
                  "policy %s has two default presets", ps->policy);
        }
        if (!ps->is_default || !ops)
            continue;
        /* its values are the table's defaults, where the table states one (the docs show the
         * table's: docs/policies.md is generated from it) */
        j = cJSON_Parse(ps->params);
        const cJSON *kv;
        cJSON_ArrayForEach(kv, j) {
            const struct sim_param *r = sim_params_find(ops->params, kv->string);
            if (!r || (r->flags & (SIM_P_NODEF | SIM_P_REQUIRED)) || r->type == SIM_P_HAND)
                continue;
            bool same = (r->type == SIM_P_NUM || r->type == SIM_P_INT || r->type == SIM_P_LONG)
                            ? cJSON_IsNumber(kv) && kv->valuedouble == r->def
                        : r->type == SIM_P_BOOL ? cJSON_IsBool(kv) && cJSON_IsTrue(kv) == (r->def != 0)
                        : r->type == SIM_P_ENUM
                            ? cJSON_IsString(kv) &&
                                  strcmp(kv->valuestring, r->sdef ? r->sdef : r->choices[0]) == 0
                            : true;
            CHECK(same, "default preset %s/%s: %s differs from the policy's table's default",
                  ps->policy, ps->name, kv->string);
        }
        cJSON_Delete(j);
        char with[512], without[512];
        snprintf(with, sizeof with, "{\"name\":\"%s\",\"preset\":\"%s\"}", ps->policy, ps->name);
        snprintf(without, sizeof without, "{\"name\":\"%s\"}", ps->policy);
        char a[4096], b[4096];
        if (ops->llm_only) {            /* an LLM policy: the LLM conformance world */
            snprintf(a, sizeof a, PRESET_RUN_LLM("%s"), with);
            snprintf(b, sizeof b, PRESET_RUN_LLM("%s"), without);
        } else {
            snprintf(a, sizeof a, PRESET_RUN("%s"), with);
            snprintf(b, sizeof b, PRESET_RUN("%s"), without);
        }
        struct sim_result *ra = run_text(a), *rb = run_text(b);
        CHECK(ra->offered == rb->offered && ra->on_time == rb->on_time && ra->late == rb->late &&
              ra->dropped == rb->dropped && ra->events == rb->events && ra->offered > 1000,
              "default preset %s/%s: %llu/%llu on time, %llu/%llu events against the defaults "
              "(%llu/%llu)", ps->policy, ps->name, (unsigned long long)ra->on_time,
              (unsigned long long)ra->offered, (unsigned long long)ra->events,
              (unsigned long long)rb->events, (unsigned long long)rb->on_time,
              (unsigned long long)rb->offered);
        sim_result_destroy(ra);
        sim_result_destroy(rb);
    }
    /* params beside a preset win; the preset fills in the rest */
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(PRESET_RUN("{\"name\":\"nexus\",\"preset\":\"original\","
                                               "\"params\":{\"profile_multiplier\":1.3}}"),
                                    "presets", ".", &cfg));
    const cJSON *pm = cJSON_GetObjectItemCaseSensitive(cfg->world.policy_params, "profile_multiplier");
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(cfg->world.policy_params, "model_load");
    CHECK(cJSON_IsNumber(pm) && pm->valuedouble == 1.3, "params did not override the preset");
    CHECK(cJSON_IsString(ml) && strcmp(ml->valuestring, "on_assign") == 0,
          "the preset's model_load was not applied");
    sim_config_destroy(cfg);
    CHECK(sim_config_from_text(PRESET_RUN("{\"name\":\"nexus\",\"preset\":\"sosp\"}"), "presets",
                               ".", &cfg) != 0 &&
              strstr(sim_err_msg(), "policy.preset") && strstr(sim_err_msg(), "\"original\"") &&
              strstr(sim_err_msg(), "\"paper\""),
          "unknown preset: %s", sim_err_msg());
}

/* ------------------------------------------------------------ Symphony */

static struct sim_config *one_model(double alpha, double beta, double slo, int gpus,
                                    const char *arrival, bool wc, double duration)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\":\"one\",\"seed\":5,\"duration_s\":%g,\"warmup_s\":1,"
             "\"cluster\":{\"gpus\":%d},\"models\":[{\"name\":\"m\",\"alpha_ms\":%g,"
             "\"beta_ms\":%g,\"slo_ms\":%g}],\"workload\":{\"rate_rps\":1000,"
             "\"arrival\":{\"kind\":\"%s\"}},\"network\":{\"ctrl_us\":0,"
             "\"data_us_per_request\":0,\"resp_us\":0},\"policy\":{\"name\":\"symphony\","
             "\"params\":{\"work_conserving\":%s}},\"metrics\":{\"sample_period_s\":0},"
             "\"search\":{\"tolerance\":0.01}}",
             duration, gpus, alpha, beta, slo, arrival, wc ? "true" : "false");
    struct sim_config *cfg;
    REQUIRE_OK(sim_config_from_text(text, "one", ".", &cfg));
    return cfg;
}

static double goodput(const struct sim_config *cfg, double *mean_batch)
{
    struct sim_goodput g;
    REQUIRE_OK(sim_goodput_search(cfg, false, &g));
    CHECK(g.status == SIM_SEARCH_CONVERGED, "the search for %s: %s", cfg->world.name,
          sim_search_status_names[g.status]);
    double gp = g.goodput_rps;
    if (mean_batch)
        *mean_batch = g.best->models[0].mean_batch;
    sim_goodput_free(&g);
    return gp;
}

static void symphony_uniform_near_staggered_ideal(void)
{
    /* NASNetMobile on the 1080Ti (zoo): alpha 0.57, beta 14.348, SLO 33 ms, 4 GPUs */
    const double alpha = 0.57, beta = 14.348, slo = 33;
    const int n = 4;
    struct sim_config *cfg = one_model(alpha, beta, slo, n, "uniform", false, 8);
    double b_ideal = floor((slo / (1 + 1.0 / n) - beta) / alpha);
    double thr_ideal = n * b_ideal / (alpha * b_ideal + beta) * 1000;
    double mb;
    double gp = goodput(cfg, &mb);
    printf("uniform: goodput %.1f req/s, ideal %.1f; mean batch %.2f, ideal %.0f\n", gp,
           thr_ideal, mb, b_ideal);
    CHECK(fabs(mb - b_ideal) <= 0.2 * b_ideal, "mean batch %.2f vs staggered ideal %.0f", mb, b_ideal);
    CHECK(gp <= thr_ideal * 1.005, "goodput %.1f above the staggered ideal %.1f", gp, thr_ideal);
    CHECK(gp >= 0.8 * thr_ideal, "goodput %.1f far below the staggered ideal %.1f", gp, thr_ideal);
    sim_config_destroy(cfg);
}

static void symphony_large_beta_alpha_tight_slo(void)
{
    /* NASNetMobile (beta/alpha = 25) at its zoo SLO and tighter, MobileNetV3Small (16) under a
     * tight SLO; the staggered ideal batches are 21, 13 and 12. Poisson arrivals, 4 GPUs. */
    static const double models[][3] = {{0.57, 14.348, 33}, {0.57, 14.348, 27}, {0.335, 5.35, 12}};
    for (int i = 0; i < 3; i++) {
        struct sim_config *nwc = one_model(models[i][0], models[i][1], models[i][2], 4, "poisson", false, 8);
        struct sim_config *wc = one_model(models[i][0], models[i][1], models[i][2], 4, "poisson", true, 8);
        double a = goodput(nwc, NULL), b = goodput(wc, NULL);
        printf("beta/alpha %.0f, SLO %g ms: non-work-conserving %.1f, work-conserving %.1f (%.2fx)\n",
               models[i][1] / models[i][0], models[i][2], a, b, a / b);
        CHECK(a >= 1.2 * b, "non-work-conserving %.1f not >= 1.2 x work-conserving %.1f", a, b);
        sim_config_destroy(nwc);
        sim_config_destroy(wc);
    }
}

/* A small grid of the paper's microbenchmark space (Table 3): equal-rate copies of one model
 * type, GPUs:models 2.0 and 3.0, burstiness 0.3 and 1.0 (Poisson), SLO from the zoo. */
static void symphony_nwc_not_worse_on_grid(void)
{
    static const char *const types[] = {"ResNet50V2", "InceptionV3", "DenseNet121"};
    static const double ratios[] = {2.0, 3.0};
    static const double shapes[] = {0.3, 1.0};
    const int nmodels = 4;
    int cells = 0;
    double worst = 1e9;
    for (size_t t = 0; t < 3; t++)
        for (size_t r = 0; r < 2; r++)
            for (size_t k = 0; k < 2; k++) {
                double gp[2];
                for (int wc = 0; wc < 2; wc++) {
                    char text[2048];
                    /* copies of one type: a zoo entry per copy would repeat the name, so
                     * inline models with the zoo's figures */
                    static const double prof[][3] = {{1.409, 5.947, 23}, {1.964, 8.771, 33},
                                                     {1.061, 10.312, 29}};
                    char inl[1024] = "";
                    for (int i = 0; i < nmodels; i++) {
                        size_t l = strlen(inl);
                        snprintf(inl + l, sizeof inl - l,
                                 "%s{\"name\":\"%s_%d\",\"alpha_ms\":%g,\"beta_ms\":%g,\"slo_ms\":%g}",
                                 i ? "," : "", types[t], i, prof[t][0], prof[t][1], prof[t][2]);
                    }
                    snprintf(text, sizeof text,
                             "{\"name\":\"grid\",\"seed\":9,\"duration_s\":6,\"warmup_s\":1,"
                             "\"cluster\":{\"gpus\":%d},\"models\":[%s],"
                             "\"workload\":{\"rate_rps\":2000,\"arrival\":{\"kind\":\"gamma\",\"shape\":%g}},"
                             "\"policy\":{\"name\":\"symphony\",\"params\":{\"work_conserving\":%s}},"
                             "\"metrics\":{\"sample_period_s\":0},\"search\":{\"tolerance\":0.02}}",
                             (int)(ratios[r] * nmodels), inl, shapes[k], wc ? "true" : "false");
                    struct sim_config *cfg;
                    REQUIRE_OK(sim_config_from_text(text, "grid", ".", &cfg));
                    gp[wc] = goodput(cfg, NULL);
                    sim_config_destroy(cfg);
                }
                double ratio = gp[0] / gp[1];
                printf("%-12s gpus:models %.1f shape %.1f: nwc %.1f wc %.1f ratio %.3f\n",
                       types[t], ratios[r], shapes[k], gp[0], gp[1], ratio);
                CHECK(ratio >= 0.95, "%s ratio %.1f shape %.1f: nwc/wc = %.3f", types[t],
                      ratios[r], shapes[k], ratio);
                if (ratio < worst)
                    worst = ratio;
                cells++;
            }
    printf("%d cells, worst nwc/wc %.3f\n", cells, worst);
}

/* Flat top: past the goodput the on-time throughput stays flat instead of collapsing, so the
 * bad rate grows like (o - p)/o. p here is the goodput (the p99 point); the throughput at
 * saturation is somewhat higher, so the bad rate may be below (o - p)/o, never well above. */
static void symphony_flat_top_under_overload(void)
{
    struct sim_config *cfg = one_model(0.57, 14.348, 33, 4, "poisson", false, 8);
    double p = goodput(cfg, NULL), prev_ontime = 0;
    for (double f = 1.5; f <= 4.51; f += 1.5) {
        struct sim_result *r;
        REQUIRE_OK(sim_run_once(cfg, f * p / 1000.0, NULL, &r));
        double o = r->offered_rps, want = (o - p) / o;
        printf("offered %.0f (%.1fx goodput %.0f): bad rate %.3f, (o-p)/o %.3f, on time %.0f\n",
               o, f, p, r->bad_rate, want, r->ontime_rps);
        CHECK(r->bad_rate <= want + 0.02, "bad rate %.3f above the flat top's (o-p)/o %.3f",
              r->bad_rate, want);
        CHECK(r->ontime_rps >= p, "on-time rate %.0f fell below the goodput %.0f", r->ontime_rps, p);
        CHECK(r->ontime_rps >= 0.95 * prev_ontime, "on-time rate fell from %.0f to %.0f",
              prev_ontime, r->ontime_rps);
        prev_ontime = r->ontime_rps;
        sim_result_destroy(r);
    }
    sim_config_destroy(cfg);
}

/* Sub-clusters: twelve VGG16-like models that no 11,264-MB GPU holds together (22,400 MB):
 * Symphony takes the fewest sub-clusters that fit (4 of 3 models), so every GPU runs the
 * models of one sub-cluster only; the engine's invariants hold (conformance audit), and the
 * cluster serves 1,500 req/s within SLO. */
struct ran {
    struct audit a;
    uint32_t models[64];                /* per GPU: bit m set once it ran model m */
};

static void ran_batch_start(void *ctx, const struct sim *s, const struct sim_batch *b)
{
    struct ran *r = ctx;
    if (b->exec < 64)
        r->models[b->exec] |= 1u << b->model;
    obs_batch_start(&r->a, s, b);
}

static void symphony_sub_clusters_keep_models_apart(void)
{
    char models[2048] = "";
    for (int i = 0; i < 12; i++) {
        size_t l = strlen(models);
        snprintf(models + l, sizeof models - l, "%s{\"name\":\"vgg%d\",\"slo_ms\":33,"
                 "\"alpha_ms\":2.734,\"beta_ms\":5.786,\"weights_mb\":528,\"static_mb\":822,"
                 "\"dynamic_mb\":6200}", i ? "," : "", i);
    }
    char text[4096];
    snprintf(text, sizeof text,
             "{\"seed\":1,\"duration_s\":20,\"warmup_s\":5,\"cluster\":{\"gpus\":16,"
             "\"gpu_memory_mb\":11264},\"models\":[%s],\"workload\":{\"rate_rps\":1500,"
             "\"popularity\":{\"kind\":\"zipf\",\"s\":0.9}},\"policy\":{\"name\":\"symphony\","
             "\"params\":{\"sub_clusters\":0}},\"metrics\":{\"sample_period_s\":0}}", models);
    struct sim_config *cfg;
    struct sim *s;
    struct sim_result *res;
    REQUIRE_OK(sim_config_from_text(text, "sub", ".", &cfg));
    REQUIRE_OK(sim_config_engine(cfg, 1.0, NULL, &s, NULL));
    struct ran r = {.a = {.last_event = 0}};
    audit_execs(&r.a, s);
    struct sim_observer obs = {.ctx = &r, .batch_start = ran_batch_start,
                               .request_arrive = obs_request_arrive,
                               .request_end = obs_request_end, .event = obs_event};
    sim_set_observer(s, &obs);
    REQUIRE_OK(sim_run(s));
    REQUIRE_OK(sim_result_collect(s, &res));
    CHECK(r.a.violations == 0 && r.a.ended_count == r.a.arrived, "%llu violations, %llu of "
          "%llu ended", (unsigned long long)r.a.violations,
          (unsigned long long)r.a.ended_count, (unsigned long long)r.a.arrived);
    /* the GPUs' model sets are disjoint or equal: sub-clusters */
    uint32_t groups[16];
    int ngroups = 0;
    for (int g = 0; g < 16; g++) {
        uint32_t m = r.models[g];
        CHECK(m != 0, "GPU %d ran nothing", g);
        int j = 0;
        while (j < ngroups && groups[j] != m) {
            CHECK((groups[j] & m) == 0, "GPU %d ran models %#x, overlapping another GPU's %#x",
                  g, m, groups[j]);
            j++;
        }
        if (j == ngroups && ngroups < 16)
            groups[ngroups++] = m;
    }
    CHECK(ngroups == 4, "%d sub-clusters, expected the fewest that fit: 4", ngroups);
    for (int j = 0; j < ngroups; j++)
        CHECK(__builtin_popcount(groups[j]) == 3, "sub-cluster %#x: not 3 models", groups[j]);
    CHECK(res->pass && res->bad_rate < 0.01, "bad rate %.4f at 1,500 req/s", res->bad_rate);
    sim_result_destroy(res);
    sim_destroy(s);
    free(r.a.state);
    free(r.a.deadline);
    free(r.a.exec_busy_until);
    sim_config_destroy(cfg);
}

/* ------------------------------------------------------------ re-partitioning */

#define VGG(n) "{\"name\":\"v" #n "\",\"slo_ms\":33,\"alpha_ms\":2.734,\"beta_ms\":5.786," \
               "\"weights_mb\":528,\"static_mb\":822,\"dynamic_mb\":6200}"

static struct sim_result *shift_run(double rep_s)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\":\"shift\",\"seed\":2,\"duration_s\":60,\"warmup_s\":5,"
             "\"cluster\":{\"gpus\":12,\"gpu_memory_mb\":11264},\"models\":[" VGG(0) "," VGG(1) ","
             VGG(2) "," VGG(3) "," VGG(4) "," VGG(5) "],\"workload\":{\"rate_rps\":1800,"
             "\"popularity\":{\"kind\":\"zipf\",\"s\":0.9},\"segments\":[{\"duration_s\":20,"
             "\"scale\":1},{\"scale\":0.4638,\"models\":{\"v4\":8,\"v5\":8}}]},"
             "\"policy\":{\"name\":\"symphony\",\"params\":{\"sub_clusters\":3,"
             "\"repartition_s\":%g}},\"metrics\":{\"sample_period_s\":1}}", rep_s);
    return test_run_text(text, "shift");
}

/* Six VGG16-like models in three sub-clusters of two (three fit a GPU, so a model can move:
 * old and new fit together); after 20 s two cold models become 8x as popular at the same
 * total rate. Re-partitioning every 5 s moves models and GPUs to where the work went, every
 * request still ends once and no batch meets an evicted model (no rejections), and the bad
 * rate falls well below that of the partition made at the start. */
static void symphony_repartition_follows_shift(void)
{
    struct sim_result *fixed = shift_run(0), *moving = shift_run(5);
    const struct sim_result *rs[2] = {fixed, moving};
    for (int i = 0; i < 2; i++) {
        uint64_t ended = 0, rejected = 0;
        for (int m = 0; m < rs[i]->nmodels; m++)
            ended += rs[i]->models[m].on_time + rs[i]->models[m].late + rs[i]->models[m].dropped;
        for (int e = 0; e < rs[i]->nexecs; e++)
            rejected += rs[i]->execs[e].rejected;
        CHECK(rejected == 0, "run %d: %llu batches rejected", i, (unsigned long long)rejected);
        CHECK(ended == rs[i]->offered,
              "run %d: %llu ended of %llu", i, (unsigned long long)ended,
              (unsigned long long)rs[i]->offered);
    }
    double mm = test_ts_last(moving, "symphony.models_moved", -1);
    double gm = test_ts_last(moving, "symphony.gpus_moved", -1);
    CHECK(mm >= 1 && gm >= 1, "moved %g models and %g GPUs", mm, gm);
    CHECK(test_ts_last(fixed, "symphony.models_moved", -1) < 0, "series recorded without re-partitioning");
    CHECK(fixed->bad_rate > 0.008 && moving->bad_rate < fixed->bad_rate / 3,
          "bad rate %.4f re-partitioning, %.4f partitioned once", moving->bad_rate,
          fixed->bad_rate);
    sim_result_destroy(fixed);
    sim_result_destroy(moving);
}

TEST_MAIN({"conformance_every_policy", conformance_every_policy},
          {"every_model_gets_a_backend", every_model_gets_a_backend},
          {"registry_is_well_formed", registry_is_well_formed},
          {"bare_policy_runs", bare_policy_runs},
          {"presets_are_well_formed", presets_are_well_formed},
          {"symphony_uniform_near_staggered_ideal", symphony_uniform_near_staggered_ideal},
          {"symphony_large_beta_alpha_tight_slo", symphony_large_beta_alpha_tight_slo},
          {"symphony_nwc_not_worse_on_grid", symphony_nwc_not_worse_on_grid},
          {"symphony_flat_top_under_overload", symphony_flat_top_under_overload},
          {"symphony_sub_clusters_keep_models_apart", symphony_sub_clusters_keep_models_apart},
          {"symphony_repartition_follows_shift", symphony_repartition_follows_shift})
